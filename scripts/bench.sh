#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make bench: figures, not tests. Boots a non-debug UML kernel with two
# CPUs, loads rdmasim and tools/bench/rdmasim_bench.ko, and prints ns per
# buffer get+return for the PUDA pool, irdma's pool and no pool, on 1 and
# 2 CPUs, with ratios against no pool. Never fails on speed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kernel.sh"

rsim_uml_ready bench uml-7.3-bench
export RSIM_UML_NCPUS=2
stage "booting the benchmark kernel (2 CPUs)"
"$RSIM_TOP/scripts/run-uml.sh" bench "$RSIM_OUT/uml-bench.log"
grep -E "rdmasim_bench:" "$RSIM_OUT/uml-bench.log" | sed -E 's/^\[ *[0-9.]+\] //'
stage "bench done (console: $RSIM_OUT/uml-bench.log)"
