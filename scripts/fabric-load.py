#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""rdmasim's fabric from a topology file, and topologies compared.

  fabric-load.py [--debugfs DIR] FILE
      Builds the fabric FILE describes through rdmasim/fabric/ in debugfs:
      the built-in SM off (sm 0), then each switch (switch_add) and each
      link (link_add). FILE is an ibsim net file or ibnetdiscover's output
      (the format ibsim reads too): records that start with
      "Switch N <id>" or "Ca|Hca N <id>", each followed by its port lines
      "[p] <remote id>[rp]". A node is named by the description in the
      header's comment (ibnetdiscover's '# "sw1"'), else by its id; a CA's
      name must be an rdmasim device's (rdmasim0). Keywords (vendid=,
      switchguid=, ...) and comments are skipped.

  fabric-load.py --compare EXPECTED GOT
      Compares two topologies in any of these forms (rdmasim/fabric/topology,
      a net file, ibnetdiscover's output, ibsim's subnet_discover's): the
      same switches with the same
      port counts, the same CAs, the same links. Prints what differs;
      exits 1 if anything does.
"""

import argparse
import re
import sys

HEADER = re.compile(r'^(Switch|Ca|Hca|Rt)\s+(\d+)\s+"([^"]+)"(.*)$')
PORT = re.compile(r'^\[(\d+)\](?:\([0-9a-fA-Fx]+\))?\s+"([^"]+)"\[(\d+)\]')
DESC = re.compile(r'#\s*"([^"]*)"')
# an id made of a GUID ("S-0002c9...", as ibnetdiscover and ibsim's
# subnet_discover name nodes), whose comment ends with the description
GUID_ID = re.compile(r'^[SHR]-[0-9a-fA-F]{16}$')
LAST_WORD = re.compile(r'#.*?(\S+)\s*$')


def parse(text):
    """Nodes {name: (kind, ports)} and links {((a, pa), (b, pb))}."""
    nodes = {}
    names = {}
    ends = []
    cur = None
    for raw in text.splitlines():
        line = raw.strip()
        m = HEADER.match(line)
        if m:
            kind = "switch" if m.group(1) == "Switch" else "ca"
            ident = m.group(3)
            d = DESC.search(m.group(4))
            w = LAST_WORD.search(m.group(4))
            if d and d.group(1):
                name = d.group(1)
            elif w and GUID_ID.match(ident):
                name = w.group(1)
            else:
                name = ident
            names[ident] = name
            nodes[name] = (kind, int(m.group(2)))
            cur = ident
            continue
        m = PORT.match(line)
        if m and cur is not None:
            ends.append((cur, int(m.group(1)), m.group(2), int(m.group(3))))
            continue
        if not line.startswith("["):
            cur = None
    links = set()
    for a, pa, b, pb in ends:
        x = (names.get(a, a), pa)
        y = (names.get(b, b), pb)
        links.add((min(x, y), max(x, y)))
    return nodes, links


def write(path, text):
    with open(path, "w", encoding="ascii") as f:
        f.write(text + "\n")


def load(args):
    with open(args.file, encoding="utf-8") as f:
        nodes, links = parse(f.read())
    d = args.debugfs
    write(f"{d}/sm", "0")
    for name, (kind, ports) in nodes.items():
        if kind == "switch":
            write(f"{d}/switch_add", f"{name} {ports}")
    for (a, pa), (b, pb) in sorted(links):
        write(f"{d}/link_add", f"{a} {pa} {b} {pb}")
    print(f"{sum(1 for k, _ in nodes.values() if k == 'switch')} switches, "
          f"{sum(1 for k, _ in nodes.values() if k == 'ca')} CAs, "
          f"{len(links)} links")
    return 0


def compare(args):
    with open(args.compare[0], encoding="utf-8") as f:
        en, el = parse(f.read())
    with open(args.compare[1], encoding="utf-8") as f:
        gn, gl = parse(f.read())
    bad = 0
    for name in sorted(set(en) | set(gn)):
        if en.get(name) != gn.get(name):
            print(f"node {name}: expected {en.get(name)}, got {gn.get(name)}")
            bad += 1
    for link in sorted(el - gl):
        print(f"missing link {link[0]} - {link[1]}")
        bad += 1
    for link in sorted(gl - el):
        print(f"unexpected link {link[0]} - {link[1]}")
        bad += 1
    print(f"{len(gn)} nodes, {len(gl)} links: "
          f"{'the same' if not bad else f'{bad} differences'}")
    return 1 if bad else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--debugfs", default="/sys/kernel/debug/rdmasim/fabric")
    p.add_argument("--compare", nargs=2, metavar=("EXPECTED", "GOT"))
    p.add_argument("file", nargs="?")
    args = p.parse_args()
    if args.compare:
        return compare(args)
    if not args.file:
        p.error("a topology file, or --compare")
    return load(args)


if __name__ == "__main__":
    sys.exit(main())
