#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# run-uml.sh <kernel build dir> <modroot> <kver> <mode> <log>
# Boot the UML kernel with the host's / as a read-only hostfs root and
# scripts/uml-init.sh as init; the console goes to <log>.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kbuild=$1 modroot=$2 kver=$3 mode=$4 log=$5

# UML keeps its per-instance files in $TMPDIR; the kernel's memory image
# lives in /dev/shm.
export TMPDIR=${TMPDIR:-/tmp}
timeout --foreground -k 10 "${RSIM_UML_TIMEOUT:-1500}" \
	"$kbuild/linux" mem=2G ncpus=1 seccomp=on \
	rootfstype=hostfs rootflags=/ ro \
	init="$RSIM_TOP/scripts/uml-init.sh" \
	RSIM_TOP="$RSIM_TOP" RSIM_MODROOT="$modroot" RSIM_KVER="$kver" \
	RSIM_MODE="$mode" \
	con0=null,fd:1 con=null >"$log" 2>&1 </dev/null || true
grep -q "RSIM-DONE" "$log" || die "UML run did not finish (log: $log)"
