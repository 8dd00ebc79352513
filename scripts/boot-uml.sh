#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# boot-uml.sh <mode> <console log>
# Boot the UML kernel $RSIM_KBUILD with the host's / as a read-only hostfs
# root and scripts/guest/init-uml.sh as init; the console goes to the log.
# <mode> is guest/init-uml.sh's RSIM_MODE: a comma-separated list of parts
# (kunit, conformance, selftest, mutant, demo, bench, script, or check for
# the first three); see guest/init-uml.sh. The RSIM-DONE line it waits for is
# the console protocol of Documentation/testing.rst.
# Needs RSIM_KBUILD, RSIM_MODROOT, RSIM_KVER (scripts/lib-kernel.sh) and
# RSIM_MODDIR (where the rdmasim modules were built); RSIM_RDMA_CORE_ENV
# (rdma-core's rsim-env.sh, for the provider's selftest) is passed on when
# set. RSIM_UML_ARGS adds
# kernel parameters, e.g. kunit.filter_glob=rdmasim_datapath to run one
# suite while developing; unknown ones reach guest/init-uml.sh's environment:
# RSIM_CONF_ARGS (conformance's module parameters), RSIM_PEERS=0 (no rxe0
# and siw0), RSIM_MUTANT_MODDIR (the mutant's build), RSIM_SCRIPT (a shell
# script that script mode sources after the devices are up).
# RSIM_UML_MEM is the guest's memory (default 2G; make peers' boots take
# 4G), RSIM_UML_TIMEOUT its time limit in seconds. Terminated, it stops
# the kernel.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mode=$1 log=$2
: "${RSIM_KBUILD:?}" "${RSIM_MODROOT:?}" "${RSIM_KVER:?}" "${RSIM_MODDIR:?}"

# UML keeps its per-instance files in $TMPDIR and maps its memory from
# there (or /dev/shm).
export TMPDIR=${TMPDIR:-/tmp}
# shellcheck disable=SC2086 # RSIM_UML_ARGS: words on purpose
timeout --foreground -k 10 "${RSIM_UML_TIMEOUT:-1500}" \
	"$RSIM_KBUILD/linux" mem="${RSIM_UML_MEM:-2G}" ncpus="${RSIM_UML_NCPUS:-1}" seccomp=on \
	rootfstype=hostfs rootflags=/ ro \
	init="$RSIM_TOP/scripts/guest/init-uml.sh" \
	RSIM_TOP="$RSIM_TOP" RSIM_MODDIR="$RSIM_MODDIR" \
	RSIM_MODROOT="$RSIM_MODROOT" RSIM_KVER="$RSIM_KVER" RSIM_MODE="$mode" \
	${RSIM_RDMA_CORE_ENV:+RSIM_RDMA_CORE_ENV="$RSIM_RDMA_CORE_ENV"} \
	con0=null,fd:1 con=null ${RSIM_UML_ARGS:-} >"$log" 2>&1 </dev/null &
uml=$!
trap 'kill "$uml" 2>/dev/null; exit 1' TERM INT

# kill_tree pid: the process and every descendant, with SIGKILL
kill_tree() {
	local c
	for c in $(pgrep -P "$1"); do
		kill_tree "$c"
	done
	kill -KILL "$1" 2>/dev/null || true
}

# UML 7.3 in seccomp mode can stay after it has powered off, its kernel
# thread and a process's stub each waiting on a futex for the other (seen
# at the end of the selftest on the one-CPU debug kernel): once the guest
# has said "reboot: Power down", the process has 30 s to exit, then it
# and its stubs are killed (the run is judged by its log, complete then).
while kill -0 "$uml" 2>/dev/null; do
	if grep -q "reboot: Power down" "$log"; then
		for _ in $(seq 30); do
			kill -0 "$uml" 2>/dev/null || break
			sleep 1
		done
		if kill -0 "$uml" 2>/dev/null; then
			echo "rdmasim: UML still there 30 s after it powered off: killed" >&2
			kill_tree "$uml"
		fi
		break
	fi
	sleep 2
done
wait "$uml" || true
grep -q "RSIM-DONE" "$log" || die "UML run did not finish (log: $log)"
