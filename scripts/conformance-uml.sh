#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# conformance-uml.sh [--mutant]: the conformance suites alone, in a boot of
# the debug UML kernel (make check's, built if missing) with rdmasim0,
# rsim_veth2_rdmasim (RoCE mode), rxe0 and siw0; the table goes to out/conformance.txt. Also: make
# conformance.
#
# --mutant: prove that the suites see a broken device. rdmasim is built
# with one rule broken on purpose (rsim_alloc_mr() no longer checks
# max_num_sg against max_fast_reg_page_list_len) and checked alone; the
# run succeeds only if the rdmasim0 row turns red on the rules that check
# that bound, and on no other. make check runs both (the mutant at the end
# of its kunit,selftest boot; scripts/lib-boots.sh has the steps).
# Uses lib.sh's RSIM_OUT and lib-boots.sh's RSIM_MUTANT_ARG.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-kernel.sh"
. "$(dirname "$0")/lib-boots.sh"

rsim_uml_ready debug uml-7.3
if [ "${1:-}" = --mutant ]; then
	rsim_mutant_build
	log=$RSIM_OUT/uml-mutant.log
	rsim_boot mutant "$log" RSIM_UML_ARGS="${RSIM_UML_ARGS:-} $RSIM_MUTANT_ARG"
	rsim_boots_wait
	rsim_judge "$log" -- || die "the mutant's log is not clean"
	rsim_mutant_judge "$log"
	exit 0
fi

log=$RSIM_OUT/uml-conformance.log
# ib_core.force_mr=1, as make check: the NVMe over RDMA run after the
# suites (guest/init-uml.sh's ulp_nvme_pair)
rsim_boot conformance "$log" RSIM_UML_ARGS="${RSIM_UML_ARGS:-} ib_core.force_mr=1"
rsim_boots_wait
rsim_judge "$log" -- --conformance rdmasim0,rdmasim1,rsim_veth2_rdmasim,rxe0,siw0 --out "$RSIM_OUT" \
	--conformance-module "$RSIM_MODDIR/kunit/conformance/rdma_conformance.ko" ||
	die "the conformance suites failed"
