#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The main job: boot the UML test kernel with rdmasim, rdma_rxe and siw
# (over the two ends of a veth pair) loaded, and show what rdma, sysfs and
# ibstat see, then allocate and map an MR on every device (tools/demo),
# then a RoCE-mode rdmasim device on a second veth pair with an NVMe over
# RDMA namespace on it written and read back.
# Uses lib.sh's RSIM_TOP and RSIM_OUT, and lib-kernel.sh's rsim_uml_ready; the
# RSIM-DEMO lines are the console protocol of Documentation/testing.rst.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-kernel.sh"

rsim_uml_ready debug uml-7.3
stage "booting UML (rdmasim, rdma_rxe, siw)"
"$RSIM_TOP/scripts/boot-uml.sh" demo "$RSIM_OUT/uml-demo.log"
sed -n '/RSIM-DEMO-BEGIN/,/RSIM-DEMO-END/p' "$RSIM_OUT/uml-demo.log" |
	grep -E "RSIM-DEMO|RSIM-ULP|RSIM-SELFTEST|rdmasim_(puda_)?demo:|^[^[]" |
	grep -v "RSIM-DEMO-\(BEGIN\|END\)" |
	sed -E 's/^\[ *[0-9.]+\] //; s/^RSIM-DEMO ?//'
grep -q "RSIM-SELFTEST not ok" "$RSIM_OUT/uml-demo.log" &&
	die "a step failed: see $RSIM_OUT/uml-demo.log"
stage "demo done (full console: $RSIM_OUT/uml-demo.log)"
