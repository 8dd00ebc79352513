#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make check: every test, from a fresh Debian 12 machine.
#   1. host packages; Debian's linux-source-7.3; the debug UML kernel
#      (cached in /var/cache/rdmasim after the first run)
#   2. lint: checkpatch --strict, kernel-doc; W=1 + sparse build for UML
#   3. W=1 build against Debian 12's stock 6.1 kernel headers, and a W=1
#      compile against Debian 13's 6.12 (a prepared UML tree)
#   4. boot UML with rdmasim, rdma_rxe and siw; KUnit suites, the
#      conformance suites on all three devices (a rule x device table in
#      out/conformance.txt), shell selftest; the log must be free of
#      KASAN, kmemleak, lockdep, DMA-API, WARN and BUG reports
#   5. at the same time, a second boot: the conformance suites against
#      rdmasim built with one rule broken must fail exactly that rule
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kernel.sh"

mkdir -p "$RSIM_OUT"
stage "rdmasim make check"
python3 "$RSIM_TOP/scripts/check-run-test.py" >"$RSIM_OUT/check-run-test.log" 2>&1 || {
	cat "$RSIM_OUT/check-run-test.log" >&2
	die "the log judge's own test failed"
}
"$RSIM_TOP/scripts/setup-host.sh"
rsim_fetch_source 7.3
rsim_build_uml debug

"$RSIM_TOP/scripts/lint.sh" "$RSIM_KSRC"

rsim_stock_headers
rsim_build_modules "$RSIM_STOCK_KDIR" x86 stock-6.1

# Debian 13's 6.12: compile only (the KUnit module included)
rsim_prepare_uml 6.12
rsim_build_modules "$RSIM_PREPARED" um uml-6.12 KBUILD_MODPOST_WARN=1

rsim_build_modules "$RSIM_KBUILD" um uml-7.3 C=2 CHECK="$(rsim_sparse)"

export RSIM_KBUILD RSIM_MODROOT RSIM_KVER RSIM_MODDIR
# Beside the main run, on the other CPU: rdmasim built with one rule
# broken on purpose must turn its conformance row red.
"$RSIM_TOP/scripts/conformance-uml.sh" --mutant >"$RSIM_OUT/mutant.log" 2>&1 &
mutant=$!
stage "booting UML: KUnit suites, conformance, selftest (about 7 min)"
"$RSIM_TOP/scripts/run-uml.sh" check "$RSIM_OUT/uml-check.log"
stage "UML run finished; judging $RSIM_OUT/uml-check.log"
if ! wait $mutant; then
	tail -20 "$RSIM_OUT/mutant.log" >&2
	die "the conformance suites missed rdmasim's broken rule (log: $RSIM_OUT/mutant.log)"
fi
grep "fails:" "$RSIM_OUT/mutant.log"
stage "mutant: the conformance suites turned the rdmasim0 row red"
python3 "$RSIM_TOP/scripts/check-run.py" "$RSIM_OUT/uml-check.log" \
	--kunit "$RSIM_MODDIR/kunit/rdmasim_kunit.ko" \
	--doc "$RSIM_TOP/Documentation/testing.rst" --selftest --times \
	--json "$RSIM_OUT/kunit.json" --conformance rdmasim0,rxe0,siw0 --out "$RSIM_OUT" ||
	die "make check failed"
stage "make check passed"
