#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: make bench's report (scripts/bench.sh). Reads the bench boots'
# console logs (the UML boot's, the IOMMU boot's) and writes, into the
# output directory:
#
#   bench.json  every figure: its unit, whether lower or higher is better,
#               each device's value, the median of its rounds where there
#               were several (and the lowest and highest), the best peer
#               and rdmasim0's ratio against it
#   bench.txt   the same as one table, printed by bench.sh too
#   bench.dat   the chart's data (one row a figure), for gnuplot
#
# The ratio is always "times better than the best peer" (> 1: rdmasim0
# is better): the peer's time over rdmasim0's for a time, rdmasim0's rate
# over the peer's for a rate. Peers are the devices measured in the same
# boot (rxe0, siw0); a figure with none has no ratio.
#
#   bench-report.py <output directory> <console log>...

import json
import re
import sys

SUBJECT = "rdmasim0"
PEERS = ("rxe0", "siw0")


def figure(figs, fid, title, unit, better, group):
    """The figure @fid, made if it is new."""
    if fid not in figs:
        figs[fid] = {"id": fid, "title": title, "unit": unit,
                     "better": better, "group": group, "values": {},
                     "range": {}}
    return figs[fid]


def parse(lines):
    """Figures (in the order first met) and the notes (other lines)."""
    figs, notes = {}, []
    cb = re.compile(r"rdma_conformance: bench (\S+) (\S+) (\d+) ns per")
    names = {
        "frwr_cycle": ("REG_MR + 4 KiB WRITE + LOCAL_INV cycle",
                       "FRWR and the MR verbs"),
        "alloc_mr_1": ("ib_alloc_mr(MEM_REG, 1)", "FRWR and the MR verbs"),
        "alloc_mr_16": ("ib_alloc_mr(MEM_REG, 16)", "FRWR and the MR verbs"),
        "alloc_mr_256": ("ib_alloc_mr(MEM_REG, 256)",
                         "FRWR and the MR verbs"),
        "dereg_mr_1": ("ib_dereg_mr (1 entry)", "FRWR and the MR verbs"),
        "dereg_mr_16": ("ib_dereg_mr (16 entries)", "FRWR and the MR verbs"),
        "dereg_mr_256": ("ib_dereg_mr (256 entries)",
                         "FRWR and the MR verbs"),
        "map_mr_sg_16": ("ib_map_mr_sg, 16 pages", "FRWR and the MR verbs"),
        "map_mr_sg_256": ("ib_map_mr_sg, 256 pages",
                          "FRWR and the MR verbs"),
    }
    pt = {
        "ib_write_lat": ("perftest ib_write_lat, 8 B", "us", "lower"),
        "ib_send_lat": ("perftest ib_send_lat, 8 B", "us", "lower"),
        "ib_write_bw": ("perftest ib_write_bw, 64 KiB", "MB/s", "higher"),
        "ib_send_bw": ("perftest ib_send_bw, 8 B (message rate)", "Mpps",
                       "higher"),
    }
    puda = {
        "puda pool, per-CPU cache": SUBJECT,
        "irdma pool (list + lock)": "irdma-style",
        "per use: alloc+map+unmap+free": "per-use map",
    }
    # behind an IOMMU (the QEMU boot): the domain type of the table
    iommu = None
    modes = {"DMA": "strict", "DMA-FQ": "lazy"}
    for raw in lines:
        line = re.sub(r"^\[ *[0-9.]+\] ", "", raw.rstrip("\n"))
        if line.startswith("RSIM-BENCH iommu "):
            iommu = modes.get(line.split()[2])
            continue
        m = cb.search(line)
        if m:
            dev, what, ns = m.group(1), m.group(2), int(m.group(3))
            rd = re.match(r"rdma_(write|read)(_16qp)?_(\d+)$", what)
            if rd:
                # ns per op into GB/s
                size = int(rd.group(3))
                f = figure(figs, what, "RDMA %s %s, %s" % (
                    rd.group(1).upper(),
                    "%d KiB" % (size >> 10) if size < 1 << 20 else
                    "%d MiB" % (size >> 20),
                    "16 QPs, one WR in flight on each" if rd.group(2)
                    else "one QP, one WR at a time"),
                           "GB/s", "higher", "RDMA throughput (kernel)")
                f.setdefault("rounds", {}).setdefault(dev, []).append(
                    size / ns if ns else 0)
                continue
            title, group = names.get(what, (what, "other"))
            f = figure(figs, what, title, "ns", "lower", group)
            f.setdefault("rounds", {}).setdefault(dev, []).append(ns)
            continue
        w = line.split()
        if line.startswith("RSIM-BENCH pingpong ") and len(w) == 7:
            f = figure(figs, "rc_pingpong_e",
                       "ibv_rc_pingpong -e, 64 B round trip", "us", "lower",
                       "userspace (two processes, two CPUs)")
            f["values"][w[2]] = float(w[3])
            f["range"][w[2]] = [float(w[4]), float(w[5])]
        elif line.startswith("RSIM-BENCH perftest ") and len(w) == 8 \
                and w[2] in pt:
            title, unit, better = pt[w[2]]
            f = figure(figs, w[2], title, unit, better,
                       "userspace (two processes, two CPUs)")
            f["values"][w[3]] = float(w[4])
            f["range"][w[3]] = [float(w[5]), float(w[6])]
        elif line.startswith("rdmasim_bench: "):
            body = line[len("rdmasim_bench: "):]
            for label, who in puda.items():
                if body.startswith(label):
                    nums = body[len(label):].split()
                    # ns and ratio on 1 CPU, then on 2
                    for cpus, ns in ((1, nums[0]), (2, nums[2])):
                        cs = "%d CPU%s" % (cpus, "s" if cpus > 1 else "")
                        if iommu:
                            f = figure(figs, "puda_iommu_%s_%dcpu" %
                                       (iommu, cpus),
                                       "PUDA get+return, %s, IOMMU %s" %
                                       (cs, iommu), "ns", "lower",
                                       "PUDA pool behind an IOMMU (QEMU "
                                       "TCG, VT-d)")
                        else:
                            f = figure(figs, "puda_%dcpu" % cpus,
                                       "PUDA get+return, %s (no IOMMU)" %
                                       cs, "ns", "lower",
                                       "PUDA pool (UML, no IOMMU)")
                        f["values"][who] = int(ns)
        elif line.startswith("RSIM-BENCH odp ") and len(w) == 13 \
                and w[3] == "write":
            # tools/provider/rsim_odp -b: one device, one size
            size = int(w[4])
            ks = "%d KiB" % (size >> 10) if size < 1 << 20 else \
                 "%d MiB" % (size >> 20)
            for key, col, title in (
                    ("pinned", 6, "RDMA WRITE %s into a pinned MR"),
                    ("warm", 8, "RDMA WRITE %s into an ODP MR, warm"),
                    ("first", 10, "RDMA WRITE %s into an ODP MR, first "
                     "touch"),
                    ("fault", 12, "ODP page fault per page (%s WRITE)")):
                f = figure(figs, "odp_%s_%d" % (key, size), title % ks,
                           "us", "lower",
                           "on-demand paging (one QP, one WR at a time)")
                f["values"][w[2]] = float(w[col])
        elif line.startswith("RSIM-BENCH syscalls ") or \
                line.startswith("RSIM-BENCH cost "):
            notes.append(line[len("RSIM-BENCH "):])
    # the kernel's figures come in rounds: each device's median, and range
    for f in figs.values():
        for dev, v in f.pop("rounds", {}).items():
            v.sort()
            f["values"][dev] = v[(len(v) - 1) // 2]
            if len(v) > 1:
                f["range"][dev] = [v[0], v[-1]]
    return list(figs.values()), notes


def rate(f):
    """Best peer and rdmasim0's times-better ratio against it."""
    v = f["values"]
    if f["group"].startswith("PUDA pool"):
        peers = [p for p in v if p != SUBJECT]
    else:
        peers = [p for p in PEERS if p in v]
    peers = [p for p in peers if v[p] > 0]
    if SUBJECT not in v or not v[SUBJECT] or not peers:
        return None, None
    if f["better"] == "lower":
        best = min(peers, key=lambda p: v[p])
        return best, v[best] / v[SUBJECT]
    best = max(peers, key=lambda p: v[p])
    return best, v[SUBJECT] / v[best]


def against(f, other):
    """rdmasim0's times-better ratio against @other, or None."""
    v = f["values"]
    if not v.get(SUBJECT) or not v.get(other):
        return None
    if f["better"] == "lower":
        return v[other] / v[SUBJECT]
    return v[SUBJECT] / v[other]


def fmt(x):
    if x is None:
        return "-"
    if x >= 1000:
        return "%.0f" % x
    if x >= 10:
        return "%.1f" % x
    return "%.3g" % x


def main():
    out, logs = sys.argv[1], sys.argv[2:]
    lines = []
    for log in logs:
        try:
            with open(log, errors="replace") as fh:
                lines += fh.readlines()
        except FileNotFoundError:
            if log == logs[0]:
                raise
    figs, notes = parse(lines)
    for f in figs:
        f["best_peer"], f["ratio"] = rate(f)
        f["vs_rxe0"] = against(f, "rxe0")
        # without the fast path: the provider's commands, or no pool
        f["vs_no_map"] = against(f, "rdmasim0-nomap") or \
            against(f, "per-use map")
    with open(out + "/bench.json", "w") as fh:
        json.dump({"subject": SUBJECT, "figures": figs, "notes": notes},
                  fh, indent=1)
        fh.write("\n")

    cols = [SUBJECT, "rdmasim0-nomap", "rxe0", "siw0",
            "irdma-style", "per-use map"]
    used = [c for c in cols if any(c in f["values"] for f in figs)]
    head = ["figure", "unit"] + used + ["vs rxe0", "vs no-map",
                                        "vs best peer"]
    rows, group = [], None
    for f in figs:
        if f["group"] != group:
            group = f["group"]
            rows.append([group])
        r = f["ratio"]
        rows.append(["  " + f["title"], f["unit"] + (
            "" if f["better"] == "lower" else " (more is better)")] +
            [fmt(f["values"].get(c)) for c in used] +
            ["%.2fx" % f[k] if f[k] else "-"
             for k in ("vs_rxe0", "vs_no_map")] +
            ["%.2fx %s" % (r, f["best_peer"]) if r else "-"])
    w = [max(len(r[i]) for r in rows + [head] if len(r) > i)
         for i in range(len(head))]
    text = ["rdmasim0 against its peers measured in the same boot "
            "(non-debug kernels, two CPUs):",
            "UML for all but the last group, Debian's stock 7.3 under QEMU "
            "(TCG, VT-d) for it.",
            "The kernel's figures are medians of three rounds, perftest's "
            "of three runs, pingpong's",
            "of five. Every ratio says how many times better rdmasim0 is "
            "(> 1: better): \"vs rxe0\";",
            "\"vs no-map\", against rdmasim0 without its fast path (the "
            "provider's commands,",
            "RSIM_NO_MAP=1; or per-use DMA mapping for the PUDA pool); "
            "\"vs best peer\", against",
            "the best of the others. Time figures (lower is better) unless "
            "marked.", ""]
    text.append("  ".join(h.ljust(w[i])
                          for i, h in enumerate(head)).rstrip())
    for r in rows:
        if len(r) == 1:
            text.append(r[0])
            continue
        text.append("  ".join(c.ljust(w[i]) if i < 2 else c.rjust(w[i])
                              for i, c in enumerate(r)).rstrip())
    if notes:
        text.append("")
        text += notes
    with open(out + "/bench.txt", "w") as fh:
        fh.write("\n".join(text) + "\n")

    with open(out + "/bench.dat", "w") as fh:
        fh.write("# figure (title) ratio best-peer\n")
        for f in figs:
            if f["ratio"]:
                fh.write('"%s" %.4f "%s"\n' % (f["title"], f["ratio"],
                                               f["best_peer"]))
    print("\n".join(text))


if __name__ == "__main__":
    main()
