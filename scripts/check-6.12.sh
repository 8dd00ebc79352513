#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make check-6.12: rdmasim's KUnit suites and the conformance suites
# booted on Debian 13's kernel (linux-source-6.12), from a fresh Debian 12
# machine:
#   1. host packages; linux-source-6.12; a debug UML 6.12 kernel from
#      kunit/configs/uml-base.config, uml-debug.config and
#      uml-6.12.config (what 6.12 needs instead: scripts/kernel.sh),
#      cached in /var/cache/rdmasim after the first run
#   2. the modules built W=1 against it (a warning fails); the host
#      programs are not needed (RSIM_UML_TOOLS=0)
#   3. two boots side by side: kunit (rdmasim_kunit.ko) and conformance
#      (rdma_conformance.ko on rdmasim0, rxe0 and siw0, with hazards on
#      rdmasim0 alone: 6.12's KUnit cannot count the WARN rxe raises in
#      alloc_mr_huge_sg, which would print)
#   4. make check's judges: every suite the built module declares passed,
#      the conformance table (out/6.12/conformance.txt) against 6.12's
#      known divergences (kunit/conformance/known-divergences-6.12), and
#      no KASAN, kmemleak, lockdep, DMA-API, WARN or BUG report in either
#      log
# make check runs it last. Uses lib.sh's RSIM_OUT, kernel.sh's
# RSIM_MODDIR and boots.sh's RSIM_JUDGE_KUNIT.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kernel.sh"
. "$(dirname "$0")/boots.sh"

# Debian's 6.12 source, always: KSRC= names the 7.3 tree the other
# targets build
unset KSRC
export RSIM_SERIES=6.12 RSIM_UML_TOOLS=0
out=$RSIM_OUT/6.12
mkdir -p "$out"
stage "rdmasim make check-6.12"
rsim_uml_ready debug uml-6.12-debug

kunit_log=$RSIM_OUT/uml-6.12-kunit.log
conf_log=$RSIM_OUT/uml-6.12-conformance.log
rm -f "$kunit_log" "$kunit_log.out" "$conf_log" "$conf_log.out"
rsim_boot conformance "$conf_log" RSIM_UML_ARGS="RSIM_CONF_ARGS=hazards=rdmasim0"
rsim_boot kunit "$kunit_log" RSIM_UML_ARGS="${RSIM_UML_ARGS:-}"
rsim_boots_wait
# shellcheck disable=SC2086 # words on purpose
rsim_judge "$kunit_log" "$conf_log" -- \
	$RSIM_JUDGE_KUNIT "$RSIM_MODDIR/kunit/rdmasim_kunit.ko" \
	--conformance rdmasim0,rxe0,siw0 \
	--conformance-module "$RSIM_MODDIR/kunit/conformance/rdma_conformance.ko" \
	--known "$RSIM_TOP/kunit/conformance/known-divergences-6.12" \
	--json "$out/kunit.json" --out "$out" ||
	die "make check-6.12 failed (logs: $kunit_log, $conf_log)"
stage "make check-6.12 passed"
