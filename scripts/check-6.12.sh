#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make check-6.12: rdmasim's KUnit suites and the conformance suites
# booted on Debian 13's kernel (linux-source-6.12), from a fresh Debian 12
# machine:
#   1. host packages; linux-source-6.12; a debug UML 6.12 kernel from
#      kunit/configs/uml-base.config, uml-debug.config and
#      uml-6.12.config (what 6.12 needs instead: scripts/lib-kernel.sh),
#      cached in /var/cache/rdmasim after the first run
#   2. the modules built W=1 against it (a warning fails); the host
#      programs are not needed (RSIM_UML_TOOLS=0)
#   3. two boots side by side: kunit (rdmasim_kunit.ko) and conformance
#      (rdma_conformance.ko on rdmasim0, rsim_veth2_rdmasim (RoCE mode),
#      rxe0 and siw0, with hazards on the two rdmasim devices alone: 6.12's
#      KUnit cannot count the WARN rxe raises in
#      alloc_mr_huge_sg, which would print)
#   4. make check's judges: every suite the built module declares passed,
#      the conformance table (out/6.12/conformance.txt) against 6.12's
#      known divergences (kunit/conformance/known-divergences-6.12), and
#      no KASAN, kmemleak, lockdep, DMA-API, WARN or BUG report in either
#      log
# The host's CPU decides one thing: UML 6.12 keeps 2696 bytes of FP state
# per thread and hands the host's ptrace no less than that, while the
# host's PTRACE_SETREGSET wants its whole XSAVE area, larger on a host
# with AMX (11008 bytes): there Debian's UML 6.12 kills init at its first
# process. The kernel is built with kunit/patches/6.12/, which moves the
# registers through a buffer of the host's size where the host's area is
# larger. Before booting, the host's size is read (scripts/xsave-size.c)
# and the route said; after, the log must show the route taken (the
# patch's boot line exactly where the host's area is larger).
# make check runs it last. Uses lib.sh's RSIM_OUT and RSIM_SUMMARY,
# lib-kernel.sh's RSIM_MODDIR and lib-boots.sh's RSIM_JUDGE_KUNIT.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-kernel.sh"
. "$(dirname "$0")/lib-boots.sh"

# Debian's 6.12 source, always: KSRC= names the 7.3 tree the other
# targets build
unset KSRC
export RSIM_SERIES=6.12 RSIM_UML_TOOLS=0
out=$RSIM_OUT/6.12
mkdir -p "$out"
stage "rdmasim make check-6.12"
rsim_uml_ready debug uml-6.12-debug

# the route, from the host's XSAVE size against what UML 6.12 keeps
gcc -O2 -Wall -o "$out/xsave-size" "$RSIM_TOP/scripts/xsave-size.c" ||
	die "building scripts/xsave-size.c failed"
xsave=$("$out/xsave-size")
uml_keeps=2696
if [ "$xsave" -gt "$uml_keeps" ]; then
	route="host XSAVE area $xsave bytes > the $uml_keeps UML 6.12 keeps: the registers go through a buffer of the host's size (kunit/patches/6.12/)"
else
	route="host XSAVE area $xsave bytes <= the $uml_keeps UML 6.12 keeps: Debian's own register path"
fi
stage "UML 6.12 route: $route"

kunit_log=$RSIM_OUT/uml-6.12-kunit.log
conf_log=$RSIM_OUT/uml-6.12-conformance.log
rm -f "$kunit_log" "$kunit_log.out" "$conf_log" "$conf_log.out"
rsim_boot conformance "$conf_log" RSIM_UML_ARGS="RSIM_CONF_ARGS=hazards=rdmasim0,rdmasim1,rsim_veth2_rdmasim,peer=rdmasim0"
rsim_boot kunit "$kunit_log" RSIM_UML_ARGS="${RSIM_UML_ARGS:-}"
rsim_boots_wait
# the route the boots took: the patch's line exactly when the host's area
# is larger than what UML keeps
for log in "$kunit_log" "$conf_log"; do
	if grep -q "host XSAVE area $xsave bytes, more than" "$log"; then
		[ "$xsave" -gt "$uml_keeps" ] || die "$log: the patch's buffer ran on a host whose XSAVE area fits"
	else
		[ "$xsave" -le "$uml_keeps" ] || die "$log: no line of the patch's buffer on a host whose XSAVE area is larger"
	fi
done
# shellcheck disable=SC2086 # words on purpose
rsim_judge "$kunit_log" "$conf_log" -- \
	$RSIM_JUDGE_KUNIT "$RSIM_MODDIR/kunit/rdmasim_kunit.ko" \
	--conformance rdmasim0,rdmasim1,rsim_veth2_rdmasim,rxe0,siw0 \
	--conformance-module "$RSIM_MODDIR/kunit/conformance/rdma_conformance.ko" \
	--known "$RSIM_TOP/kunit/conformance/known-divergences-6.12" \
	--json "$out/kunit.json" --out "$out" \
	--summary "$RSIM_SUMMARY" --label "6.12 UML kunit + conformance" ||
	die "make check-6.12 failed (logs: $kunit_log, $conf_log)"
echo "$route" >"$out/route.txt"
stage "make check-6.12 passed ($route)"
