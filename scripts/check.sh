#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make check: every test, from a fresh Debian 12 machine.
#   1. host packages; Debian's linux-source-7.3; the debug UML kernel
#      (cached in /var/cache/rdmasim after the first run)
#   2. W=1 + sparse build against the UML 7.3 tree: the modules the boots
#      load, tools/provider against rdma-core 65 (scripts/rdma-core.sh,
#      cached); then three UML boots side by side on the two CPUs
#      (Documentation/testing.rst has where the time goes):
#      - rdmacore: rdma-core's own tests (pyverbs) on rdmasim0 and rxe0,
#        judged by rdma-core-judge.py (no failure or error on rdmasim0,
#        more passes than rxe0, a reason on every skip; tables in out/);
#      - conformance: the conformance suites on rdmasim0, rxe0 and siw0
#        (a rule x device table in out/conformance.txt);
#      - kunit,selftest,mutant: rdmasim's KUnit suites, the shell
#        selftest, then the mutant: rdmasim built with one rule broken
#        must fail exactly that rule in the conformance suites;
#      every log must be free of KASAN, kmemleak, lockdep, DMA-API, WARN
#      and BUG reports
#   3. while they run: lint (checkpatch --strict, kernel-doc); a W=1 build
#      against Debian 12's stock 6.1 headers, installed (make install)
#      into an initramfs with which Debian's unmodified stock 6.1 kernel
#      boots under QEMU (scripts/stock.sh, stock-init.sh: modprobe,
#      modinfo, rdma, sysfs, ibstat, smpquery, the demo on rdmasim0 and
#      rxe0, the loopback client, new_device/del_device, rmmod); DKMS
#      against the same headers (scripts/dkms.sh check); the same boot
#      of Debian 13's stock 6.12 and backports 7.3, rdmasim built in a
#      Debian 13 root (debootstrap, cached); a W=1 compile
#      against Debian 13's 6.12 (a prepared UML tree); then the non-debug UML
#      kernel (make bench's, cached too) boots with two CPUs for the
#      checks that need a second CPU (boots.sh's rsim_smp_boot)
#   4. once the boots are judged: make check-6.12 (scripts/check-6.12.sh:
#      the KUnit and conformance suites on a debug UML 6.12 kernel, built
#      and cached in step 1)
# Uses lib.sh's RSIM_TOP and RSIM_OUT; kernel.sh's RSIM_KSRC, RSIM_MODDIR
# and RSIM_PREPARED; stock.sh's RSIM_STOCK_RELEASE and
# RSIM_STOCK_SERIES; boots.sh's RSIM_MUTANT_ARG and
# RSIM_JUDGE_KUNIT (each file's header lists what it sets).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kernel.sh"
. "$(dirname "$0")/boots.sh"
# shellcheck source=stock.sh
. "$(dirname "$0")/stock.sh"

mkdir -p "$RSIM_OUT"
stage "rdmasim make check"
python3 "$RSIM_TOP/scripts/check-run-test.py" >"$RSIM_OUT/check-run-test.log" 2>&1 || {
	cat "$RSIM_OUT/check-run-test.log" >&2
	die "the log judge's own test failed"
}
"$RSIM_TOP/scripts/setup-host.sh"
sparse=$(rsim_sparse)
# the non-debug kernel of the two-CPU boot first (cached after one run):
# a kernel build beside the debug boots would slow their timed waits
rsim_fetch_source 7.3
rsim_build_uml bench
# and Debian 13's 6.12 debug kernel, for check-6.12.sh at the end
(unset KSRC; rsim_fetch_source 6.12; rsim_build_uml debug 6.12) ||
	die "building the UML 6.12 kernel failed"
rsim_uml_ready debug uml-7.3 C=2 CHECK="$sparse"
uml_moddir=$RSIM_MODDIR
rsim_mutant_build

# two boots side by side; lint and the other builds beside them (a
# failure there stops the kernels)
rm -f "$RSIM_OUT"/uml-*.log "$RSIM_OUT"/uml-*.log.out
# the longest boot first: rdma-core's tests on rdmasim0 and rxe0
rsim_rdmacore_boot "$RSIM_OUT/uml-rdmacore.log"
rsim_boot conformance "$RSIM_OUT/uml-conformance.log"
rsim_boot kunit,selftest,mutant "$RSIM_OUT/uml-kunit.log" \
	RSIM_UML_ARGS="${RSIM_UML_ARGS:-} $RSIM_MUTANT_ARG"
"$RSIM_TOP/scripts/lint.sh" "$RSIM_KSRC"
# Debian 12's stock 6.1 (stock.sh): rdmasim built W=1 against its headers
# package, make install'ed into an initramfs, the unmodified stock kernel
# booted under QEMU (TCG) with it; then DKMS against the same headers
rsim_stock_ready 6.1
rsim_stock_boot "$RSIM_OUT/stock-6.1.log"
"$RSIM_TOP/scripts/dkms.sh" check "$RSIM_STOCK_RELEASE" >"$RSIM_OUT/dkms.log" 2>&1 || {
	tail -30 "$RSIM_OUT/dkms.log" >&2
	die "the DKMS test failed (log: $RSIM_OUT/dkms.log)"
}
grep "dkms status" "$RSIM_OUT/dkms.log"
# Debian 13's stock 6.12 and backports 7.3 the same way, rdmasim built in
# a Debian 13 root
for s in 6.12 7.3; do
	rsim_stock_ready "$s"
	rsim_stock_boot "$RSIM_OUT/stock-$s.log"
done
# Debian 13's 6.12: compile only (the KUnit module included)
rsim_prepare_uml 6.12
rsim_build_modules "$RSIM_PREPARED" um uml-6.12 KBUILD_MODPOST_WARN=1
# the two-CPU boot, on the non-debug kernel (boots.sh): a second
# RSIM_MODDIR; the judges below use $uml_moddir for the debug boots
rsim_uml_ready bench uml-7.3-bench
rsim_smp_boot "$RSIM_OUT/uml-smp.log"

stage "waiting for the UML boots"
rsim_boots_wait
rsim_mutant_judge "$RSIM_OUT/uml-kunit.log"
# shellcheck disable=SC2086 # words on purpose
rsim_judge "$RSIM_OUT/uml-kunit.log" "$RSIM_OUT/uml-conformance.log" \
	"$RSIM_OUT/uml-rdmacore.log" -- \
	$RSIM_JUDGE_KUNIT "$uml_moddir/kunit/rdmasim_kunit.ko" --selftest \
	--conformance rdmasim0,rxe0,siw0 \
	--conformance-module "$uml_moddir/kunit/conformance/rdma_conformance.ko" \
	--json "$RSIM_OUT/kunit.json" --out "$RSIM_OUT" ||
	die "make check failed"
rsim_smp_judge "$RSIM_OUT/uml-smp.log" || die "make check failed (the two-CPU boot)"
for s in $RSIM_STOCK_SERIES; do
	rsim_stock_judge "$RSIM_OUT/stock-$s.log" ||
		die "make check failed (the stock $s kernel under QEMU)"
done
rsim_rdmacore_judge "$RSIM_OUT/uml-rdmacore.log" ||
	die "make check failed (rdma-core's tests)"
# the KUnit and conformance suites on Debian 13's 6.12 (make check-6.12:
# under two minutes, once the boots above are done)
"$RSIM_TOP/scripts/check-6.12.sh" || die "make check failed (make check-6.12)"
stage "make check passed"
