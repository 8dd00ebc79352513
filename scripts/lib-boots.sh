# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# rdmasim: the UML boots of make check, make kunit, make selftest and
# make conformance, and their judges. Sourced after lib.sh and lib-kernel.sh;
# uses lib.sh's RSIM_TOP, RSIM_OUT, stage and die, and what lib-kernel.sh's
# rsim_uml_ready exports (RSIM_KBUILD, RSIM_MODROOT, RSIM_KVER,
# RSIM_MODDIR), which scripts/boot-uml.sh reads.
#
#   rsim_boot mode log [VAR=value...]	start a boot in the background
#   rsim_filler log cmd...		background work at nice 19, early
#   rsim_fillers_unnice			the fillers back to nice 0
#   rsim_boots_wait			wait for them all; fail if one failed
#   rsim_mutant_build			-> RSIM_MUTANT_MODDIR, RSIM_MUTANT_ARG
#   rsim_mutant_judge log		the suites must see the broken rule
#   rsim_judge log... -- judge-log.py options

RSIM_BOOTS=''
RSIM_BOOT_LOGS=''

# A boot left running by a failing script is stopped (boot-uml.sh stops
# its kernel when it is terminated).
rsim_boots_stop() {
	local p
	for p in $RSIM_BOOTS; do
		kill "$p" 2>/dev/null || true
	done
}
trap rsim_boots_stop EXIT

# rsim_bg <log> cmd...: cmd in the background, one of the boots
# rsim_boots_wait waits for; its wall time in seconds goes to <log>.wall
# (make check's summary). Terminated, it terminates cmd.
rsim_bg() {
	local log=$1
	shift
	(
		t0=$(date +%s)
		if [ -n "${RSIM_BG_NICE:-}" ]; then
			# job control: cmd leads a process group of its own,
			# at nice 19 from its first instruction on, and reads
			# no terminal
			set -m
			(
				renice -n 19 -p "$BASHPID" >/dev/null
				"$@"
			) </dev/null &
		else
			"$@" &
		fi
		c=$!
		# a filler leads a process group of its own: all of it goes
		trap 'kill -- -$c 2>/dev/null || kill $c 2>/dev/null' TERM INT
		echo $c >"$log.pid"
		rc=0
		wait $c || rc=$?
		# a trap ended the first wait: cmd is still going down
		if kill -0 $c 2>/dev/null; then
			rc=0
			wait $c || rc=$?
		fi
		rm -f "$log.pid"
		echo $(($(date +%s) - t0)) >"$log.wall"
		exit $rc
	) &
	RSIM_BOOTS="$RSIM_BOOTS $!"
	RSIM_BOOT_LOGS="$RSIM_BOOT_LOGS $log"
}

# rsim_filler <log> cmd...: rsim_bg, with cmd (a command or a function)
# at nice 19 in a process group of its own: work nothing waits for yet, started
# early so that it takes only the CPU time the foreground leaves (the
# kernel's unpacking, configuring and linking, rdma-core's cmake: one CPU
# of two) until rsim_fillers_unnice gives it an equal share.
RSIM_FILLERS=''
rsim_filler() {
	local log=$1
	shift
	rm -f "$log.pid"
	RSIM_BG_NICE=1
	rsim_bg "$log" "$@"
	RSIM_BG_NICE=
	RSIM_FILLERS="$RSIM_FILLERS $log"
}

# rsim_fillers_unnice: every filler still running, back to nice 0 (its
# whole process group: make's children inherit it), once the foreground's
# own serial work is done. Unprivileged, the renice fails and the fillers
# keep nice 19: slower to finish, never wrong.
rsim_fillers_unnice() {
	local log n=0 all=0
	for log in $RSIM_FILLERS; do
		all=$((all + 1))
		[ -s "$log.pid" ] || continue
		renice -n 0 -g "$(cat "$log.pid")" >/dev/null 2>&1 && n=$((n + 1))
	done
	stage "fillers at nice 0: $n of $all still running"
}

# rsim_boot <mode> <log> [VAR=value...]: scripts/boot-uml.sh in the
# background, with the variables in its environment (e.g.
# RSIM_MODDIR=... RSIM_UML_ARGS=...); its own output goes to <log>.out.
rsim_boot() {
	local mode=$1 log=$2
	shift 2
	rm -f "$log.wall"
	rsim_bg "$log" env "$@" "$RSIM_TOP/scripts/boot-uml.sh" "$mode" "$log" \
		>"$log.out" 2>&1
	stage "booting UML ($mode): $log"
}

# rsim_boots_wait: wait for every background job; fails (after waiting
# for all) if one failed, naming its log
rsim_boots_wait() {
	local p log fail=
	# shellcheck disable=SC2086 # one word per log
	set -- $RSIM_BOOT_LOGS
	for p in $RSIM_BOOTS; do
		log=$1
		shift
		wait "$p" || fail="$fail $log"
	done
	RSIM_BOOTS=''
	RSIM_BOOT_LOGS=''
	if [ -n "$fail" ]; then
		echo "rdmasim: did not finish:$fail" >&2
		return 1
	fi
	stage "boots finished"
}

# The mutant: rdmasim with one rule broken on purpose (rsim_alloc_mr() no
# longer checks max_num_sg against max_fast_reg_page_list_len), built in a
# copy of $RSIM_MODDIR with the same flags (W=1), so that only mr.c
# recompiles. guest/init-uml.sh's mutant part loads it from RSIM_MUTANT_MODDIR
# (the kernel argument $RSIM_MUTANT_ARG).
rsim_mutant_build() {
	RSIM_MUTANT_MODDIR=$RSIM_OUT/build/uml-7.3-mutant
	# shellcheck disable=SC2034 # for the scripts that source this one
	RSIM_MUTANT_ARG="RSIM_MUTANT_MODDIR=$RSIM_MUTANT_MODDIR"
	rm -rf "$RSIM_MUTANT_MODDIR"
	cp -a "$RSIM_MODDIR" "$RSIM_MUTANT_MODDIR"
	python3 - "$RSIM_MUTANT_MODDIR/drivers/infiniband/sw/rdmasim/mr.c" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
rule = ("\tif (!max_num_sg ||\n"
        "\t    max_num_sg > rsim->cfg.limits.max_fast_reg_page_list_len)\n")
assert rule in s, "the rule to break is not in mr.c any more"
open(p, "w").write(s.replace(rule, "\tif (!max_num_sg)\n"))
PY
	make -C "$RSIM_MUTANT_MODDIR" KDIR="$RSIM_KBUILD" ARCH=um W=1 \
		>"$RSIM_MUTANT_MODDIR.log" 2>&1 ||
		die "building the mutant failed (log: $RSIM_MUTANT_MODDIR.log)"
	stage "mutant: rdmasim built with its max_num_sg check removed"
}

# rsim_mutant_judge <log>: the conformance suites ran on the mutant alone
# (between RSIM-MUTANT markers); its row must be red on exactly the rules
# that check the broken bound.
rsim_mutant_judge() {
	local log=$1
	mkdir -p "$RSIM_OUT/mutant"
	python3 "$RSIM_TOP/scripts/conformance-table.py" "$log" --section MUTANT \
		--known "$RSIM_TOP/kunit/conformance/known-divergences" \
		--doc "$RSIM_TOP/Documentation/conformance.rst" \
		--out "$RSIM_OUT/mutant" --expect rdmasim0 >/dev/null
	python3 - "$RSIM_OUT/mutant/conformance.json" <<'PY' || {
import json, sys
doc = json.load(open(sys.argv[1]))
red = sorted(r["name"] for r in doc["rules"]
             if r["results"].get("rdmasim0", {}).get("status") == "FAIL")
want = ["alloc_mr_above_max", "alloc_mr_huge_sg"]
print("rdmasim0 (mutant) fails:", ", ".join(red) or "nothing")
sys.exit(0 if red == want else 1)
PY
		rsim_summary_add "mutant" FAIL "the suites did not see the broken rule"
		echo "rdmasim: the suites did not see the broken rule (log: $log)" >&2
		return 1
	}
	rsim_summary_add "mutant" PASS "rdmasim0 red on exactly the broken rule"
	stage "mutant: the rdmasim0 row is red on the broken rule; table in $RSIM_OUT/mutant/conformance.txt"
}

# rsim_judge <log>... -- <judge-log.py options>: the clean-log rule and
# the suites, with the time profile of each boot.
rsim_judge() {
	local logs=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		logs+=("$1")
		shift
	done
	shift
	python3 "$RSIM_TOP/scripts/judge-log.py" "${logs[@]}" --times "$@"
}

# the KUnit module's suites, checked against Documentation/testing.rst
# shellcheck disable=SC2034 # for the scripts that source this one
RSIM_JUDGE_KUNIT="--doc $RSIM_TOP/Documentation/testing.rst --kunit"

# The two-CPU boot: what needs a second CPU online (a WR a DMA handle
# steers to the other CPU's worker; a handle that names a CPU outside the
# caller's affinity, in KUnit and from userspace: tools/dmah, the "dmah"
# part of guest/init-uml.sh). UML 7.3's debug kernel reports suspicious RCU usage
# while it brings up a second CPU (and cannot hot-add one), so this boot
# runs the non-debug kernel of make bench, with two CPUs: no KASAN, no
# kmemleak list to read (judge-log.py --nodebug). Call rsim_uml_ready
# bench first; rsim_smp_judge uses its RSIM_MODDIR. The glob: every case
# named *dmah* of rdmasim_dmah and rdmasim_dmah_dp (the data path's use of
# the hints), and only the suites that have one.
RSIM_SMP_GLOB='rdmasim_dmah*.*dmah*'
rsim_smp_boot() {
	rsim_boot kunit,dmah "$1" RSIM_UML_NCPUS=2 \
		RSIM_UML_ARGS="kunit.filter_glob=$RSIM_SMP_GLOB RSIM_PEERS=0"
}

rsim_smp_judge() {
	# shellcheck disable=SC2086 # words on purpose
	rsim_judge "$1" -- $RSIM_JUDGE_KUNIT "$RSIM_MODDIR/kunit/rdmasim_kunit.ko" \
		--glob "$RSIM_SMP_GLOB" --nodebug \
		--summary "$RSIM_SUMMARY" --label "two-CPU boot (non-debug)"
}

# rdma-core's own tests (tests/, pyverbs; guest/init-uml.sh's rdmacore part,
# scripts/guest/rdma-core-tests.sh), judged by judge-rdma-core.py: rdmasim0
# (IB) and rdmasim_rc0 (RoCE, on a veth end) have no failure or error,
# more passes than rxe0 together (a test counted once), and a reason on
# every skip; the per-test table and the counts go to $RSIM_OUT.
#   rsim_rdmacore_boot log	rdmasim0's, in a debug boot (call
#				rsim_uml_ready debug first)
#   rsim_rdmacore_rxe_boot log	rxe0's, the comparison: a boot of the
#				non-debug kernel without rdmasim (call
#				rsim_uml_ready bench first), or the cached
#				result of an earlier one with the same inputs
#   rsim_rdmacore_judge log rxe-log
# RSIM_RDMA_CORE_TESTS (fnmatch patterns on test ids) runs some only.
rsim_rdmacore_boot() {
	rsim_boot rdmacore,netns "$1" RSIM_UML_TIMEOUT="${RSIM_UML_TIMEOUT:-5400}" \
		RSIM_UML_ARGS="${RSIM_UML_ARGS:-} RSIM_RDMA_CORE_DEVS=rdmasim0,rdmasim_rc0${RSIM_RDMA_CORE_TESTS:+ RSIM_RDMA_CORE_TESTS=$RSIM_RDMA_CORE_TESTS}"
}

# rxe0's results depend on the non-debug kernel (its tree's name holds the
# source, the configuration's hash and the compiler), rdma-core's build
# (its stamp), the runner and the init scripts, the test selection and
# the host's python and libraries the tests load through hostfs; nothing
# of rdmasim's is loaded. rsim_rdmacore_rxe_key hashes exactly these.
rsim_rdmacore_rxe_key() {
	local f
	{
		echo "$RSIM_KBUILD"
		cat "$RSIM_RDMA_CORE_BUILD/.rsim-stamp"
		for f in guest/rdma-core-tests.py guest/rdma-core-tests.sh guest/init-uml.sh \
			guest/lib.sh guest/fstab-uml boot-uml.sh; do
			cat "$RSIM_TOP/scripts/$f"
		done
		echo "${RSIM_RDMA_CORE_TESTS:-}|${RSIM_RDMA_CORE_EXCLUDE:-}|${RSIM_RDMA_CORE_TIMEOUT:-}"
		dpkg-query -W python3 libc6 libnl-3-200 libnl-route-3-200 libudev1 2>&1
	} | sha256sum | cut -c1-16
}

RSIM_RXE_CACHED=''
rsim_rdmacore_rxe_boot() {
	local log=$1 key
	key=$(rsim_rdmacore_rxe_key)
	RSIM_RXE_CACHED=$RSIM_CACHE/results/rdma-core-rxe0-$key.log
	rm -f "$log" "$log.out"
	if [ -f "$RSIM_RXE_CACHED" ]; then
		cp "$RSIM_RXE_CACHED" "$log"
		stage "rdma-core's tests on rxe0: the result of an earlier boot with the same inputs ($RSIM_RXE_CACHED)"
		RSIM_RXE_CACHED=''
		return
	fi
	rsim_boot rdmacore "$log" RSIM_UML_TIMEOUT="${RSIM_UML_TIMEOUT:-5400}" \
		RSIM_UML_ARGS="RSIM_RDMASIM=0 RSIM_RDMA_CORE_DEVS=rxe0${RSIM_RDMA_CORE_TESTS:+ RSIM_RDMA_CORE_TESTS=$RSIM_RDMA_CORE_TESTS}"
}

rsim_rdmacore_judge() {
	local log=$1 rxe_log=$2
	# a boot of rxe0's (not a cached result): its log clean, then kept
	if [ -n "$RSIM_RXE_CACHED" ]; then
		rsim_judge "$rxe_log" -- --nodebug --summary "$RSIM_SUMMARY" \
			--label "rdma-core rxe0 boot" || return 1
	fi
	python3 "$RSIM_TOP/scripts/judge-rdma-core.py" "$log" "$rxe_log" --dev rdmasim0 \
		--dev rdmasim_rc0 --peer rxe0 --out "$RSIM_OUT" --summary "$RSIM_SUMMARY" \
		--min-pass 185 ${RSIM_RDMA_CORE_TESTS:+--some} || return 1
	if [ -n "$RSIM_RXE_CACHED" ]; then
		mkdir -p "${RSIM_RXE_CACHED%/*}"
		cp "$rxe_log" "$RSIM_RXE_CACHED.tmp" && mv "$RSIM_RXE_CACHED.tmp" "$RSIM_RXE_CACHED"
	fi
}
