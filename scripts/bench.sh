#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make bench: figures, not tests. Boots a non-debug UML kernel with two
# CPUs, loads rdmasim, rxe0 and siw0 and
#  - tools/bench/rdmasim_bench.ko: ns per buffer get+return for the PUDA
#    pool, irdma's pool and no pool, on 1 and 2 CPUs, with ratios against
#    no pool;
#  - the conformance module's bench suite (suites=bench): ns per
#    REG_MR + 4 KiB RDMA WRITE + LOCAL_INV cycle on every device, with
#    ratios against rdmasim0;
#  - ibv_rc_pingpong between two processes with completion events (-e),
#    64 bytes, on rdmasim0 and rxe0 (scripts/guest/bench-pingpong.sh):
#    microseconds per round trip (median of five pairs, fastest and
#    slowest), with ratios against rdmasim0;
#  - perftest's ib_write_lat, ib_send_lat, ib_write_bw (64 KiB) and
#    ib_send_bw (8 bytes) on rdmasim0 with and without its mapped queues
#    (RSIM_NO_MAP=1) and rxe0 (scripts/guest/bench-perftest.sh), with the
#    provider's system calls per message.
# Never fails on speed. Uses lib.sh's RSIM_TOP and RSIM_OUT, and
# lib-kernel.sh's rsim_uml_ready.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-kernel.sh"

rsim_uml_ready bench uml-7.3-bench
export RSIM_UML_NCPUS=2
stage "booting the benchmark kernel (2 CPUs)"
"$RSIM_TOP/scripts/boot-uml.sh" bench "$RSIM_OUT/uml-bench.log"
grep -E "rdmasim_bench:" "$RSIM_OUT/uml-bench.log" | sed -E 's/^\[ *[0-9.]+\] //'
echo "REG_MR + 4 KiB RDMA WRITE + LOCAL_INV, each signalled and busy-polled:"
awk '/rdma_conformance: bench / {
	for (i = 1; i <= NF; i++) if ($i == "bench") { dev = $(i + 1); ns = $(i + 3) }
	n++; d[n] = dev; v[n] = ns; if (dev == "rdmasim0") ref = ns
} END {
	for (i = 1; i <= n; i++)
		printf "  %-10s %9d ns per cycle  %7.1fx rdmasim0\n", d[i], v[i],
		       ref ? v[i] / ref : 0
}' "$RSIM_OUT/uml-bench.log"
echo "ibv_rc_pingpong -e -s 64 -n 2000, two processes (completion events),"
echo "median of five pairs per device, alternating (fastest-slowest):"
awk '/RSIM-BENCH pingpong / {
	for (i = 1; i <= NF; i++) if ($i == "pingpong") { dev = $(i + 1); at = i }
	if (NF != at + 2 && NF != at + 5) next	# a failed pair'"'"'s output lines
	n++; d[n] = dev; v[n] = $(at + 2); lo[n] = $(at + 3); hi[n] = $(at + 4)
	if (dev == "rdmasim0") ref = v[n]
} END {
	for (i = 1; i <= n; i++)
		if (v[i] == "failed")
			printf "  %-10s failed\n", d[i]
		else
			printf "  %-10s %9.2f us per round trip  %7.1fx rdmasim0  (%.0f-%.0f)\n",
			       d[i], v[i], ref + 0 ? v[i] / ref : 0, lo[i], hi[i]
}' "$RSIM_OUT/uml-bench.log"
echo "where an 8-byte RDMA WRITE's time goes (rsim_cost, one CPU, ns; the"
echo "median of five rounds): a null system call, a send doorbell, and a"
echo "whole signaled WRITE of a QP to itself with its completion polled:"
awk '/RSIM-BENCH cost / {
	for (i = 1; i <= NF; i++) if ($i == "cost") at = i
	if ($(at + 2) == "failed") { print "  " $(at + 1) " failed"; next }
	printf "  %-10s %-7s syscall %6d  doorbell %6d  write8 %6d\n",
	       $(at + 1), $(at + 2), $(at + 4), $(at + 6), $(at + 8)
}' "$RSIM_OUT/uml-bench.log"
echo "perftest, two processes over the loopback, each busy-polling on its"
echo "own CPU; median of three runs (lowest-highest); \"better\" is how many"
echo "times better than rxe0 and than rdmasim0 with RSIM_NO_MAP=1 (>1: better):"
awk '/RSIM-BENCH perftest / && !/: / {
	for (i = 1; i <= NF; i++) if ($i == "perftest") at = i
	t = $(at + 1); d = $(at + 2)
	if (!(t in seen)) { seen[t] = 1; order[++nt] = t }
	dev[t, d] = 1; devs[t] = devs[t] " " d
	v[t, d] = $(at + 3); lo[t, d] = $(at + 4); hi[t, d] = $(at + 5)
}
/RSIM-BENCH syscalls / {
	for (i = 1; i <= NF; i++) if ($i == "syscalls") at = i
	sc[$(at + 1)] = sprintf("rdmasim0 system calls: %s doorbells per message, %s poll and %s post commands", $(at + 3), $(at + 5), $(at + 7))
}
END {
	for (k = 1; k <= nt; k++) {
		t = order[k]; lat = t ~ /_lat$/
		unit = lat ? "us" : t == "ib_write_bw" ? "MB/s" : "Mpps"
		printf "  %s (%s%s)\n", t, unit, lat ? ", lower is better" : ""
		n = split(devs[t], ds, " ")
		for (j = 1; j <= n; j++) {
			d = ds[j]
			if (v[t, d] == "failed") { printf "    %-15s failed\n", d; continue }
			r = v[t, "rxe0"] + 0; m = v[t, "rdmasim0-nomap"] + 0; x = v[t, d] + 0
			br = (r && x) ? (lat ? r / x : x / r) : 0
			bm = (m && x) ? (lat ? m / x : x / m) : 0
			printf "    %-15s %10.2f  (%.2f-%.2f)  %6.2fx rxe0  %6.2fx no-map\n",
			       d, x, lo[t, d], hi[t, d], br, bm
		}
		if (t in sc) printf "    %s\n", sc[t]
	}
}' "$RSIM_OUT/uml-bench.log"
stage "bench done (console: $RSIM_OUT/uml-bench.log)"
