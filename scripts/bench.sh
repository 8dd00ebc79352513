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
#    slowest), with ratios against rdmasim0.
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
stage "bench done (console: $RSIM_OUT/uml-bench.log)"
