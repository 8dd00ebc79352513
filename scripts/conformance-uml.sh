#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# conformance-uml.sh [--mutant]: the conformance suites alone, in a boot of
# the debug UML kernel (make check's, built if missing) with rdmasim0,
# rxe0 and siw0; the table goes to out/conformance.txt. Also: make
# conformance.
#
# --mutant: prove that the suites see a broken device. rdmasim is built
# with one rule broken on purpose (rsim_alloc_mr() no longer checks
# max_num_sg against max_fast_reg_page_list_len) and checked alone; the
# run succeeds only if the rdmasim0 row turns red on the rules that check
# that bound, and on no other.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kernel.sh"

mutant=0
[ "${1:-}" = --mutant ] && mutant=1

if [ $mutant = 1 ]; then
	rsim_uml_ready debug uml-7.3-mutant
	# the mutation, in the build copy only
	python3 - "$RSIM_MODDIR/drivers/infiniband/sw/rdmasim/mr.c" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
rule = ("\tif (!max_num_sg ||\n"
        "\t    max_num_sg > rsim->cfg.limits.max_fast_reg_page_list_len)\n")
assert rule in s, "the rule to break is not in mr.c any more"
open(p, "w").write(s.replace(rule, "\tif (!max_num_sg)\n"))
PY
	make -C "$RSIM_MODDIR" KDIR="$RSIM_KBUILD" ARCH=um >>"$RSIM_MODDIR.log" 2>&1 ||
		die "building the mutant failed (log: $RSIM_MODDIR.log)"
	stage "rdmasim built with its max_num_sg check removed"
	export RSIM_UML_ARGS="${RSIM_UML_ARGS:-} RSIM_CONF_ARGS=target=rdmasim0,limit_budget=0"
	log=$RSIM_OUT/uml-conformance-mutant.log
else
	rsim_uml_ready debug uml-7.3
	log=$RSIM_OUT/uml-conformance.log
fi

stage "booting UML: the conformance suites"
"$RSIM_TOP/scripts/run-uml.sh" conformance "$log"
table() {
	python3 "$RSIM_TOP/scripts/conformance-table.py" "$log" \
		--known "$RSIM_TOP/kunit/conformance/known-divergences" \
		--doc "$RSIM_TOP/Documentation/conformance.rst" "$@"
}

if [ $mutant = 0 ]; then
	table --out "$RSIM_OUT" --expect rdmasim0,rxe0,siw0 --judge ||
		die "the conformance suites failed"
	exit 0
fi

mkdir -p "$RSIM_OUT/mutant"
table --out "$RSIM_OUT/mutant" --expect rdmasim0 >/dev/null
python3 - "$RSIM_OUT/mutant/conformance.json" <<'PY' || die "the suites did not see the broken rule"
import json, sys
doc = json.load(open(sys.argv[1]))
red = sorted(r["name"] for r in doc["rules"]
             if r["results"].get("rdmasim0", {}).get("status") == "FAIL")
want = ["alloc_mr_above_max", "alloc_mr_huge_sg"]
print("rdmasim0 (mutant) fails:", ", ".join(red) or "nothing")
sys.exit(0 if red == want else 1)
PY
stage "the rdmasim0 row is red on the broken rule; table in $RSIM_OUT/mutant/conformance.txt"
