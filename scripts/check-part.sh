#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# check-part.sh kunit [GLOB] | selftest: one part of make check's UML stage
# in a boot of its own, judged by the same rule (a failed or missing suite
# or selftest line, or any KASAN, kmemleak, lockdep, DMA-API, WARN or BUG
# report in the log, fails). The same setup as make check: the debug UML
# kernel (built if missing) and the modules built W=1 against it.
#
#   make kunit SUITE=rdmasim_map	the suites matching a glob
#					(kunit.filter_glob; about a minute)
#   make kunit				every suite of rdmasim_kunit.ko
#   make selftest			the shell selftest alone
#   make fabric				the simulated fabric with opensm
#					(guest/selftest-fabric.sh)
#   make smp				the two-CPU boot (non-debug kernel)
#   make rdma-core-tests		rdma-core's tests on rdmasim0 and rxe0
#   make script SCRIPT=<path>		development: a shell script of yours,
#					sourced in the guest (script mode)
#					with rdmasim0, rxe0 and siw0 up and
#					guest/lib.sh's helpers; judged like
#					the others (a clean log)
#   make stock				Debian's stock 6.1, 6.12 and 7.3
#					under QEMU (scripts/lib-stock.sh): no UML
#   check-part.sh tree debug|bench	that UML kernel built and cached,
#					nothing booted (make check's filler)
#
# Uses lib.sh's RSIM_OUT, lib-kernel.sh's RSIM_MODDIR (rsim_uml_ready) and
# lib-boots.sh's RSIM_JUDGE_KUNIT.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-kernel.sh"
. "$(dirname "$0")/lib-boots.sh"
# shellcheck source=lib-stock.sh
. "$(dirname "$0")/lib-stock.sh"

part=${1:?usage: scripts/check-part.sh kunit [GLOB] | selftest | fabric | smp | rdmacore | stock | script PATH | tree debug|bench}
glob=${2:-*}
mkdir -p "$RSIM_OUT"
# alone, a summary of its own; in make check's background (RSIM_CHECK),
# its lines go to make check's
if [ -z "${RSIM_CHECK:-}" ]; then
	rm -f "$RSIM_SUMMARY"
	# the exit status: a stage that died fails the summary
	# shellcheck disable=SC2154 # set in the trap itself
	trap 'rsim_rc=$?; rsim_boots_stop; rsim_summary_print $rsim_rc' EXIT
fi
if [ "$part" = stock ]; then
	# every series, side by side
	mkdir -p "$RSIM_OUT"
	"$RSIM_TOP/scripts/setup-host.sh"
	for s in $RSIM_STOCK_SERIES; do
		rsim_stock_ready "$s"
		rsim_stock_boot "$RSIM_OUT/stock-$s.log"
	done
	rsim_boots_wait
	fail=0
	for s in $RSIM_STOCK_SERIES; do
		rsim_stock_judge "$RSIM_OUT/stock-$s.log" "stock $s under QEMU" ||
			fail=1
	done
	[ $fail = 0 ] || die "make stock failed (logs: $RSIM_OUT/stock-*.log)"
	stage "stock passed (logs: $RSIM_OUT/stock-*.log)"
	exit 0
elif [ "$part" = tree ]; then
	# make check's early filler: one UML kernel (debug or bench) built
	# and cached, nothing booted
	case $glob in debug | bench) ;; *) die "tree $glob: debug or bench" ;; esac
	"$RSIM_TOP/scripts/setup-host.sh"
	rsim_fetch_source "${RSIM_SERIES:-7.3}"
	rsim_build_uml "$glob"
	exit 0
elif [ "$part" = smp ]; then
	rsim_uml_ready bench uml-7.3-bench
else
	rsim_uml_ready debug uml-7.3
fi
log=$RSIM_OUT/uml-$part.log
case $part in
kunit)
	# no spaces: the glob is one word of the kernel command line
	case $glob in *" "*) die "SUITE=$glob: a glob has no spaces" ;; esac
	rsim_boot kunit "$log" RSIM_UML_ARGS="${RSIM_UML_ARGS:-} kunit.filter_glob=$glob"
	rsim_boots_wait
	# shellcheck disable=SC2086 # words on purpose
	rsim_judge "$log" -- $RSIM_JUDGE_KUNIT "$RSIM_MODDIR/kunit/rdmasim_kunit.ko" \
		--glob "$glob" --json "$RSIM_OUT/kunit.json" || die "make kunit failed (log: $log)"
	;;
selftest)
	rsim_boot selftest "$log"
	rsim_boots_wait
	rsim_judge "$log" -- --selftest || die "make selftest failed (log: $log)"
	;;
fabric)
	rsim_boot fabric "$log" RSIM_PEERS=0
	rsim_boots_wait
	rsim_judge "$log" -- --part fabric || die "make fabric failed (log: $log)"
	;;
script)
	[ -f "$glob" ] || die "script $glob: no such file"
	rsim_boot script "$log" RSIM_UML_ARGS="${RSIM_UML_ARGS:-} RSIM_SCRIPT=$(realpath "$glob")"
	rsim_boots_wait
	rsim_judge "$log" -- || die "make script failed (log: $log)"
	;;
smp)
	rsim_smp_boot "$log"
	rsim_boots_wait
	rsim_smp_judge "$log" || die "make smp failed (log: $log)"
	;;
rdmacore)
	# rdmasim0 on the debug kernel; rxe0, the comparison, on the
	# non-debug one (or its earlier result, same inputs)
	rsim_rdmacore_boot "$log"
	rsim_uml_ready bench uml-7.3-bench
	rsim_rdmacore_rxe_boot "$RSIM_OUT/uml-rdmacore-rxe0.log"
	rsim_boots_wait
	rsim_judge "$log" -- || die "make rdma-core-tests failed (log: $log)"
	rsim_rdmacore_judge "$log" "$RSIM_OUT/uml-rdmacore-rxe0.log" ||
		die "make rdma-core-tests failed (logs: $log, $RSIM_OUT/uml-rdmacore-rxe0.log)"
	;;
*)
	die "unknown part $part: kunit, selftest, fabric, script, smp or rdmacore"
	;;
esac
stage "$part passed (log: $log)"
