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
#    provider's system calls per message;
#  - on-demand paging (tools/provider/rsim_odp -b, in the same script):
#    RDMA WRITEs of 64 KiB and 1 MiB into an ODP MR at first touch and
#    warm, against a pinned MR, and the page fault's cost per page, on
#    rdmasim0 and rxe0;
#  - behind an IOMMU, which UML lacks: Debian's stock 7.3 kernel under
#    QEMU (TCG, two CPUs, q35 with VT-d, intel_iommu=on) with rdmasim
#    mapping through QEMU's edu function (dma_pci) and rdmasim_bench's
#    PUDA table once with the function's IOMMU domain strict and once
#    lazy (scripts/guest/init-qemu.sh's bench mode).
# Then one table (scripts/bench-report.py: out/bench.txt, printed, and
# out/bench.json) with rdmasim0's ratio against the best peer for every
# figure, and a chart of those ratios (scripts/bench-chart.gp, gnuplot,
# installed here if missing: out/bench.svg).
# Never fails on speed. Uses lib.sh's RSIM_TOP and RSIM_OUT, and
# lib-kernel.sh's rsim_uml_ready.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-kernel.sh"
. "$(dirname "$0")/lib-boots.sh"
# shellcheck source=lib-stock.sh
. "$(dirname "$0")/lib-stock.sh"

rsim_uml_ready bench uml-7.3-bench
export RSIM_UML_NCPUS=2
stage "booting the benchmark kernel (2 CPUs)"
"$RSIM_TOP/scripts/boot-uml.sh" bench "$RSIM_OUT/uml-bench.log"

# the PUDA pool behind an IOMMU: the stock 7.3 kernel under QEMU, alone
# on the machine (after the UML boot: the figures are times)
rsim_stock_ready "$RSIM_STOCK_IOMMU_SERIES"
RSIM_STOCK_APPEND="$RSIM_STOCK_APPEND RSIM_BENCH=iommu"
rsim_stock_boot "$RSIM_OUT/bench-iommu.log" 2
rsim_boots_wait || true
grep -q "RSIM-BENCH iommu done" "$RSIM_OUT/bench-iommu.log" ||
	stage "the IOMMU boot did not finish: no IOMMU figures ($RSIM_OUT/bench-iommu.log)"

# the table (and bench.json, and the chart's data) from the consoles
python3 "$RSIM_TOP/scripts/bench-report.py" "$RSIM_OUT" \
	"$RSIM_OUT/uml-bench.log" "$RSIM_OUT/bench-iommu.log" ||
	die "bench report failed (consoles: $RSIM_OUT/uml-bench.log, bench-iommu.log)"

# the chart: gnuplot, installed here (only make bench needs it)
if ! command -v gnuplot >/dev/null; then
	stage "installing gnuplot-nox (for the chart)"
	rsim_apt_get -y install --no-install-recommends gnuplot-nox >/dev/null ||
		rsim_apt_get update >/dev/null
	command -v gnuplot >/dev/null ||
		rsim_apt_get -y install --no-install-recommends gnuplot-nox \
			>/dev/null || true
fi
if command -v gnuplot >/dev/null; then
	(cd "$RSIM_OUT" && gnuplot "$RSIM_TOP/scripts/bench-chart.gp") ||
		die "gnuplot failed on $RSIM_OUT/bench.dat"
	stage "chart: $RSIM_OUT/bench.svg"
else
	stage "no gnuplot: no chart (the table is $RSIM_OUT/bench.txt)"
fi
stage "bench done: $RSIM_OUT/bench.txt and bench.json (consoles: $RSIM_OUT/uml-bench.log, bench-iommu.log)"
