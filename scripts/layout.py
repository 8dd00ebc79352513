#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The tree's layout, Documentation/layout.rst, made from the tree itself.

  layout.py --write   writes Documentation/layout.rst: every file that git
                      tracks, or its directory, with the first sentence of
                      the file's own header comment (a C file's, a
                      script's, a Makefile's; a Python docstring's; an
                      RST title)
  layout.py --check   fails (and says what differs) if the file is not
                      what --write would write: a file added, removed or
                      renamed, or a header changed, without the layout
                      following; lint runs it

Directories listed in WHOLE are one entry each (their README, Makefile
or main file speaks for them); every other file is an entry of its own.
"""

import argparse
import os
import re
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = "Documentation/layout.rst"

# directories described as one entry, by the file that speaks for them
WHOLE = {
    "kunit/conformance/": "kunit/conformance/conformance.h",
    "kunit/configs/": None,
    "kunit/patches/": None,
    "scripts/peers/": None,
    "tools/bench/": None,
    "tools/demo/": None,
    "tools/dmah/": None,
    "tools/ibsim/": "tools/ibsim/Makefile",
    "tools/provider/": None,
    "tools/rds/": None,
    "tools/syzkaller/": None,
    "tools/umad/": "tools/umad/Makefile",
    "scripts/__pycache__/": None,
}
# files with no header of their own
FIXED = {
    ".ci/run": "what CI runs: the README's test command (make check)",
    ".gitignore": "build products and output that git does not track",
    "drivers/infiniband/sw/rdmasim/Kbuild": "the driver's objects, and "
        "the out-of-tree build's module parameters",
    "Kbuild": "the build graph: the driver, the KUnit and tool modules, "
              "and the kernel feature probes that feed compat.h",
    "Makefile": "a thin wrapper: make, make check and the one-part "
                "targets, the tools' builds",
    "README": "what rdmasim is, the two commands, where to read on",
    "dkms.conf": "DKMS (make dkms-install fills in the version)",
    "kunit/configs/": "the UML kernel config fragments of the test "
                      "kernels (debug, bench, 6.12)",
    "kunit/patches/": "patches the test kernels carry (6.12's UML on hosts "
                      "with a large XSAVE area, 7.3's stack traces)",
    "scripts/peers/": "the outside suites' patches and known flakes "
                      "(make peers)",
    "scripts/.shellcheckrc": "shellcheck's settings for scripts/",
    "scripts/bench-chart.gp": "gnuplot: make bench's chart",
    "scripts/guest/fstab-uml": "the UML guest's mounts (proc, sysfs, "
                               "debugfs, a tmpfs on /run)",
    "scripts/guest/finding-rds.findings": "the RDS boot's known reports",
    "scripts/guest/fabric-ring.net": "make fabric's topology: three "
                                     "switches in a ring, four CAs",
    "tools/provider/": "the libibverbs provider (librdmasim) and its "
                       "test programs, built against rdma-core 65",
    "tools/bench/": "rdmasim_bench.ko, make bench's kernel module",
    "tools/demo/": "rdmasim_demo.ko, rdmasim_puda_demo.ko and "
                   "rdmasim_loopback.ko: the data path and the pool "
                   "through public verbs",
    "tools/dmah/": "rsim_dmah, a host program on the uverbs ioctl ABI "
                   "alone: DMA handles and MRs bound to them",
    "tools/rds/": "the conformance boot's RDS exchange (a host program)",
    "tools/syzkaller/": "a patch for syzkaller's descriptions: rdmasim's "
                        "link type, so that syzkaller users can fuzz it",
}


def tracked():
    out = subprocess.run(["git", "ls-files"], cwd=TOP, check=True,
                         capture_output=True, text=True).stdout
    return [f for f in out.splitlines()
            if not f.startswith("scripts/__pycache__/")]


def first_sentence(text):
    text = " ".join(text.split())
    # a leading "name: " (rdmasim:, rdmasim_mw:, Suite rdmasim_mr:)
    text = re.sub(r"^(Suite )?[\w.-]+: ", "", text)
    m = re.match(r"(.+?[.;])(\s|$)", text)
    s = m.group(1) if m else text
    s = s.rstrip(".;")
    return s[:1].lower() + s[1:] if s[:2] != s[:2].upper() else s


def usage_line(line, base):
    """A line naming the program: its text after "usage: ", or None"""
    if not line.startswith(base):
        return line
    return line.split(": ", 1)[1] if ": " in line else None


def c_header(lines):
    body = []
    inside = False
    for line in lines:
        if not inside:
            if line.startswith("/*"):
                inside = True
                line = line[2:]
            else:
                continue
        end = "*/" in line
        line = line.split("*/")[0].strip().lstrip("*").strip()
        if "SPDX-License-Identifier" in line:
            line = ""
        if not line and body:
            break
        if line:
            body.append(line)
        if end:
            if body:
                break
            inside = False
    return " ".join(body)


def hash_header(lines, name):
    body = []
    for line in lines:
        if line.startswith("#!") or "SPDX-License-Identifier" in line or \
           line.startswith("# shellcheck"):
            continue
        if not line.startswith("#"):
            if body:
                break
            continue
        line = line[1:].strip()
        if not line:
            if body:
                break
            continue
        if not body:
            line = usage_line(line, os.path.basename(name))
            if line is None:
                continue
        body.append(line)
    return " ".join(body)


def py_doc(lines, name):
    code = [line for line in lines if line.strip() and
            not line.startswith("#")]
    if not code or not code[0].startswith('"""'):
        return hash_header(lines, name)
    text = "\n".join(lines)
    m = re.search(r'"""(.*?)"""', text, re.S)
    for para in m.group(1).split("\n\n"):
        first = usage_line(para.strip(), os.path.basename(name))
        if first:
            return first if first == para.strip() else \
                first + para.strip().split(": ", 1)[1][len(first):]
    return ""


def describe(path):
    if path in FIXED:
        return FIXED[path]
    full = os.path.join(TOP, path)
    if os.path.isdir(full):
        return ""
    with open(full, errors="replace") as f:
        lines = f.read().splitlines()[:60]
    if path.endswith(".rst"):
        for i, line in enumerate(lines):
            if line and not set(line) <= set("=-") and i + 1 < len(lines) \
               and lines[i + 1] and set(lines[i + 1]) <= set("=-"):
                return line.strip()
        return ""
    if path.endswith(".py"):
        text = py_doc(lines, path)
    elif path.endswith((".c", ".h")):
        text = c_header(lines)
    else:
        text = hash_header(lines, path)
    text = re.sub(r"^(rdmasim|Suite \S+|rsim_\w+):\s*", "", text)
    return first_sentence(text)


def entries():
    files = tracked()
    seen = set()
    out = []
    for f in sorted(files):
        whole = next((d for d in WHOLE if f.startswith(d)), None)
        if whole:
            if whole in seen:
                continue
            seen.add(whole)
            speaker = WHOLE[whole]
            desc = FIXED.get(whole) or (describe(speaker) if speaker else "")
            out.append((whole, desc))
            continue
        out.append((f, describe(f)))
    return out


def render():
    rows = entries()
    lines = [
        ".. This file is generated by scripts/layout.py --write; lint checks",
        "   it with --check. Edit the files' own headers, not this.",
        "",
        "======",
        "Layout",
        "======",
        "",
        "Every file of the tree, or its directory, with the first sentence "
        "of its",
        "own header: the description cannot go stale, since lint fails when "
        "a file",
        "comes, goes or changes its header without this file following.",
        "",
    ]
    for path, desc in rows:
        lines.append(f"``{path}``")
        lines.append(f"   {desc or '(no header)'}")
        lines.append("")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--write", action="store_true")
    g.add_argument("--check", action="store_true")
    args = ap.parse_args()
    text = render()
    path = os.path.join(TOP, OUT)
    if args.write:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return 0
    try:
        with open(path, encoding="utf-8") as f:
            old = f.read()
    except FileNotFoundError:
        old = ""
    if old == text:
        return 0
    import difflib
    sys.stdout.writelines(difflib.unified_diff(
        old.splitlines(True), text.splitlines(True), OUT, "the tree"))
    print(f"\n{OUT} is stale: run scripts/layout.py --write")
    return 1


if __name__ == "__main__":
    sys.exit(main())
