#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make check: every test, from a fresh Debian 12 machine
# (Documentation/testing.rst describes each part and where the time goes).
#   1. host packages; then, in the background (it needs nothing built
#      here), Debian's stock 6.1, 6.12 and 7.3 kernels under QEMU with
#      rdmasim make install'ed (scripts/lib-stock.sh; DKMS once it is
#      done); Debian's linux-source-7.3 and the debug UML kernel (cached
#      in /var/cache/rdmasim after the first run), then the
#      modules built W=1 + sparse against it, tools/ and the provider
#      against rdma-core 65 (scripts/build-rdma-core.sh, cached), the mutant
#   2. the debug boots start at once, the longest first, and run while
#      everything else is built and run beside them:
#      - rdma-core's own tests (pyverbs) on rdmasim0;
#      - the conformance suites on rdmasim0, rdmasim1 (reached from
#        rdmasim0 across the subnet), rsim_veth2_rdmasim (RoCE
#        mode), rxe0 and siw0;
#      - rdmasim's KUnit suites, the shell selftest, the mutant (rdmasim
#        built with one rule broken must fail exactly that rule)
#   3. beside them, started at the beginning as fillers at nice 19 (the
#      CPU the debug chain leaves idle) and back at nice 0 once the debug
#      boots run: lint; the non-debug UML kernel (make bench's) for the
#      two-CPU boot and for rdma-core's tests on rxe0 (the comparison;
#      its result is reused while its inputs stay the same); the debug
#      UML 6.12 kernel, the modules built W=1 against it, and its KUnit
#      and conformance boots (scripts/check-6.12.sh)
# As root it runs with transparent huge pages "always" (the compilers'
# heaps: 17 % less CPU time cold), the machine's setting restored at exit.
#   4. every boot judged (scripts/judge-log.py: suites, selftest checks,
#      conformance table, and no KASAN, kmemleak, lockdep, DMA-API, WARN
#      or BUG report in any log), then one summary: each part, PASS or
#      FAIL, what it counted, minutes ($RSIM_OUT/summary.tsv)
# Uses lib.sh's RSIM_TOP, RSIM_OUT and RSIM_SUMMARY; lib-kernel.sh's
# RSIM_KSRC and RSIM_MODDIR; lib-stock.sh's RSIM_STOCK_RELEASE
# and RSIM_STOCK_SERIES; lib-boots.sh's RSIM_MUTANT_ARG and RSIM_JUDGE_KUNIT
# (each file's header lists what it sets).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-kernel.sh"
. "$(dirname "$0")/lib-boots.sh"
# shellcheck source=lib-stock.sh
. "$(dirname "$0")/lib-stock.sh"
. "$(dirname "$0")/lib-peers.sh"

mkdir -p "$RSIM_OUT"
rm -f "$RSIM_SUMMARY"
# the exit status: a stage that died fails the summary
# shellcheck disable=SC2154 # set in the trap itself
trap 'rsim_rc=$?; rsim_boots_stop; rsim_thp_restore; rsim_summary_print $rsim_rc' EXIT
stage "rdmasim make check"
rsim_thp_always
rsim_step "log judge's own test" python3 "$RSIM_TOP/scripts/judge-log-test.py" \
	>"$RSIM_OUT/judge-log-test.log" 2>&1 || {
	cat "$RSIM_OUT/judge-log-test.log" >&2
	die "the log judge's own test failed"
}
rsim_step "peers table's own test" python3 "$RSIM_TOP/scripts/peers-table-test.py" \
	>"$RSIM_OUT/peers-table-test.log" 2>&1 || {
	cat "$RSIM_OUT/peers-table-test.log" >&2
	die "the peers table's own test failed"
}
"$RSIM_TOP/scripts/setup-host.sh"
export RSIM_HOST_READY=1
sparse=$(rsim_sparse)

# The background jobs judge themselves and write their own lines of the
# summary (RSIM_CHECK). Every apt list they read is updated here first
# (RSIM_APT_FRESH), and the 6.1 headers installed (RSIM_STOCK_HEADERS):
# none of them runs apt-get update or takes dpkg's lock for them.
export RSIM_CHECK=1 RSIM_SUMMARY
rsim_apt_update_kernel
rsim_stock_headers
# First, the longest of them: Debian's stock kernels under QEMU (make
# stock: rdmasim built against each kernel's headers, make install'ed
# into an initramfs, the unmodified kernel booted with it). It needs
# nothing built here, and on a fresh machine its Debian 13 root
# (debootstrap: the network and dpkg more than the CPUs) is made while
# the kernels compile.
rm -f "$RSIM_OUT"/stock-*.log
# shellcheck disable=SC2094 # rsim_bg writes <log>.wall, not <log>
rsim_bg "$RSIM_OUT/stock.log" rsim_step "stock kernels: builds, boots" \
	"$RSIM_TOP/scripts/check-part.sh" stock >"$RSIM_OUT/stock.log" 2>&1
stage "stock kernels under QEMU, in the background: $RSIM_OUT/stock.log"
# DKMS against the 6.1 headers (installed above; the stock job takes no
# dpkg lock on the host), beside it
# shellcheck disable=SC2094 # rsim_bg writes <log>.wall, not <log>
rsim_bg "$RSIM_OUT/dkms.log" rsim_step "DKMS (stock 6.1 headers)" \
	"$RSIM_TOP/scripts/dkms.sh" check "${RSIM_STOCK_KDIR##*/linux-headers-}" \
	>"$RSIM_OUT/dkms.log" 2>&1

# The fillers: work that nothing waits for until the end, started now at
# nice 19 (scripts/lib-boots.sh) so that it takes the CPU the debug
# kernel's chain leaves idle (downloads, unpacking and configuring the
# source, the kernel's link, rdma-core's cmake: about one CPU in three of
# a cold run's first twenty minutes), then put back to nice 0 once that
# chain's boots have started: make check-6.12 (its own kernel, source
# and boots), lint, and the non-debug kernel (make bench's: the two-CPU
# boot and rdma-core's tests on rxe0).
# shellcheck disable=SC2094 # rsim_bg writes <log>.wall, not <log>
rsim_filler "$RSIM_OUT/check-6.12.log" "$RSIM_TOP/scripts/check-6.12.sh" \
	>"$RSIM_OUT/check-6.12.log" 2>&1
stage "make check-6.12, in the background: $RSIM_OUT/check-6.12.log"
rsim_fetch_source "${RSIM_SERIES:-7.3}"
# shellcheck disable=SC2094 # likewise
rsim_filler "$RSIM_OUT/lint.log" rsim_step "lint" "$RSIM_TOP/scripts/lint.sh" "$RSIM_KSRC" \
	>"$RSIM_OUT/lint.log" 2>&1
stage "lint, in the background: $RSIM_OUT/lint.log"
# shellcheck disable=SC2094 # likewise
rsim_filler "$RSIM_OUT/bench-tree.log" "$RSIM_TOP/scripts/check-part.sh" tree bench \
	>"$RSIM_OUT/bench-tree.log" 2>&1
stage "the non-debug kernel, in the background: $RSIM_OUT/bench-tree.log"

# the debug kernel next: its boots are the longest part after the stock
# job's, and start as soon as it and the modules are there
t0=$(date +%s)
rsim_uml_ready debug uml-7.3 C=2 CHECK="$sparse"
uml_moddir=$RSIM_MODDIR
rsim_mutant_build
rsim_summary_add "build 7.3: W=1, sparse" PASS \
	"kernel, modules, tools, provider, mutant" $(($(date +%s) - t0))

# make upstream (the debug kernel's configuration is ready): the kernel
# patch series made from this tree, checkpatch --strict on each patch, the
# driver built in-tree with it applied
# shellcheck disable=SC2094 # rsim_bg writes <log>.wall, not <log>
rsim_filler "$RSIM_OUT/upstream.log" rsim_step "upstream series" \
	"$RSIM_TOP/scripts/upstream-check.sh" >"$RSIM_OUT/upstream.log" 2>&1
stage "make upstream, in the background: $RSIM_OUT/upstream.log"

rm -f "$RSIM_OUT"/uml-*.log "$RSIM_OUT"/uml-*.log.*
# the longest boot first: rdma-core's tests on rdmasim0
rsim_rdmacore_boot "$RSIM_OUT/uml-rdmacore.log"
# ib_core.force_mr=1: the NVMe over RDMA target that runs after the
# suites registers MRs for its own RDMA READs and WRITEs (guest/init-uml.sh's
# ulp_nvme_pair; the selftest runs NVMe without it)
rsim_boot conformance "$RSIM_OUT/uml-conformance.log" \
	RSIM_UML_ARGS="${RSIM_UML_ARGS:-} ib_core.force_mr=1"
rsim_boot kunit,selftest,mutant "$RSIM_OUT/uml-kunit.log" \
	RSIM_UML_ARGS="${RSIM_UML_ARGS:-} $RSIM_MUTANT_ARG"
# the simulated fabric with Debian's opensm, in a boot of its own
# (guest/selftest-fabric.sh; make fabric)
rsim_boot fabric "$RSIM_OUT/uml-fabric.log" RSIM_PEERS=0
# RDS over rdmasim, in a boot of its own: its known reports are
# accepted there alone
rsim_boot script "$RSIM_OUT/uml-rds.log" \
	RSIM_UML_ARGS="${RSIM_UML_ARGS:-} RSIM_SCRIPT=$RSIM_TOP/scripts/guest/finding-rds.sh"
# make peers' subset: blktests' nvme/010 (fio verify on a file
# namespace) and nvme/040 (controller reset under I/O) over NVMe/RDMA, and
# srp/001 (LUNs through ib_srpt, ib_srp and dm-multipath), on rdmasim in
# RoCE mode, from the unmodified tree in ../shared/peers/ with the
# project's patch (scripts/peers.sh has the rest)
rsim_peers_prepare "$RSIM_OUT/peers-check" "$RSIM_BLKTESTS"
rsim_peers_boot rdmasim blktests "nvme/010 nvme/040 srp/001" 32m file

# the debug chain's serial work is done: the fillers share the CPUs
# equally with the boots from now on
rsim_fillers_unnice
# the non-debug kernel (the filler's, or cached): rdma-core's tests on
# rxe0 (or their earlier result, same inputs) as soon as it is built,
# since nothing of rdmasim's is loaded there; then rdmasim built against
# it and the two-CPU boot
rsim_build_uml bench
rsim_rdmacore_rxe_boot "$RSIM_OUT/uml-rdmacore-rxe0.log"
rsim_uml_ready bench uml-7.3-bench
rsim_smp_boot "$RSIM_OUT/uml-smp.log"

stage "waiting for the boots"
rsim_boots_wait || true
fails=0
rsim_mutant_judge "$RSIM_OUT/uml-kunit.log" || fails=$((fails + 1))
# shellcheck disable=SC2086 # words on purpose
rsim_judge "$RSIM_OUT/uml-kunit.log" -- \
	$RSIM_JUDGE_KUNIT "$uml_moddir/kunit/rdmasim_kunit.ko" --selftest \
	--json "$RSIM_OUT/kunit.json" \
	--summary "$RSIM_SUMMARY" --label "kunit + selftest + mutant" ||
	fails=$((fails + 1))
rsim_judge "$RSIM_OUT/uml-conformance.log" -- \
	--conformance rdmasim0,rdmasim1,rsim_veth2_rdmasim,rxe0,siw0 \
	--conformance-module "$uml_moddir/kunit/conformance/rdma_conformance.ko" \
	--out "$RSIM_OUT" --summary "$RSIM_SUMMARY" --label "conformance" ||
	fails=$((fails + 1))
rsim_judge "$RSIM_OUT/uml-fabric.log" -- --part fabric \
	--summary "$RSIM_SUMMARY" --label "fabric: opensm, switches, ULPs" ||
	fails=$((fails + 1))
rsim_judge "$RSIM_OUT/uml-rds.log" -- \
	--findings "$RSIM_TOP/scripts/guest/finding-rds.findings" \
	--summary "$RSIM_SUMMARY" --label "RDS (known findings)" ||
	fails=$((fails + 1))
rsim_judge "$RSIM_OUT/peers-check/rdmasim/console.log" -- \
	--summary "$RSIM_SUMMARY" --label "blktests nvme/010,040 srp/001 rdmasim" ||
	fails=$((fails + 1))
python3 "$RSIM_TOP/scripts/peers-table.py" --out "$RSIM_OUT/peers-check" \
	--require-pass --txt "$RSIM_OUT/peers-check.txt" rdmasim || {
	cat "$RSIM_OUT/peers-check.txt" >&2
	fails=$((fails + 1))
}
rsim_judge "$RSIM_OUT/uml-rdmacore.log" -- \
	--summary "$RSIM_SUMMARY" --label "rdma-core rdmasim0 boot" ||
	fails=$((fails + 1))
rsim_rdmacore_judge "$RSIM_OUT/uml-rdmacore.log" "$RSIM_OUT/uml-rdmacore-rxe0.log" ||
	fails=$((fails + 1))
rsim_smp_judge "$RSIM_OUT/uml-smp.log" || fails=$((fails + 1))
# the background jobs judged themselves (their lines are in the summary)
# bg_passed log line: the job's log has its closing line, or its tail is shown
bg_passed() {
	grep -q "$2" "$1" && return 0
	tail -30 "$1" >&2
	return 1
}
bg_passed "$RSIM_OUT/stock.log" "stock passed" || fails=$((fails + 1))
bg_passed "$RSIM_OUT/dkms.log" "== dkms check passed" || fails=$((fails + 1))
bg_passed "$RSIM_OUT/lint.log" "== lint clean" || fails=$((fails + 1))
bg_passed "$RSIM_OUT/upstream.log" "== upstream series: " || fails=$((fails + 1))
bg_passed "$RSIM_OUT/check-6.12.log" "make check-6.12 passed" ||
	fails=$((fails + 1))
[ $fails = 0 ] || die "make check failed: $fails part(s), see the summary"
stage "make check passed"
