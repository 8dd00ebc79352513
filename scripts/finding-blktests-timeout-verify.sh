#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: the reproducer of a finding (Documentation/ulps.rst, "Findings"):
# blktests' TIMEOUT, its documented knob for quick runs, turns the data
# verification tests (nvme/010, 012, 034, 035 and 057, scsi/011, zbd/009,
# 010 and 013: the callers of _run_fio_verify_io) into write-only tests
# that pass.
# _run_fio() gives fio --runtime=$TIMEOUT; _run_fio_verify_io() asks for a
# randwrite job with --verify=crc32c and no --time_based, so fio verifies
# after its write phase, and only if that phase ends by size: when the
# runtime ends it, fio exits 0 with nothing read back.
#
# blktests' own helpers (common/rc, which sources common/fio) run on the
# host, on a sparse file: no kernel of the project's is needed. Run it with
#
#   scripts/finding-blktests-timeout-verify.sh [blktests tree]
#
# (default: ../shared/peers/blktests-a608cb5 or $BLKTESTS). It runs the
# job twice, without TIMEOUT on 32 MiB (the control: everything written is
# read back) and with TIMEOUT=2 on 4 GiB, and fails while the second reads
# back less than it wrote.

set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
bt=$(cd "${1:-${BLKTESTS:-$top/../shared/peers/blktests-a608cb5}}" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/var/tmp}/rsim-timeout-verify.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# verify_job <size> [TIMEOUT]: "<fio status> <KiB written> <KiB read>" of
# blktests' _run_fio_verify_io on a sparse file of <size>
verify_job() {
	truncate -s "$1" "$tmp/img"
	(
		cd "$bt"
		# shellcheck source=/dev/null # blktests' own helpers
		. common/rc
		# shellcheck disable=SC2034 # read by blktests' _run_fio
		FULL=$tmp/full TMPDIR=$tmp TIMEOUT=${2:-}
		[ -n "$TIMEOUT" ] || unset TIMEOUT
		rc=0
		_run_fio_verify_io --size="$1" --filename="$tmp/img" \
			>/dev/null || rc=$?
		# terse version 4: field 6 is the KiB read, field 47 written
		echo "$rc $(cut -d';' -f47 "$tmp/fio_perf") $(cut -d';' -f6 "$tmp/fio_perf")"
	)
	rm -f "$tmp/img"
}

fail=0
read -r rc w r <<<"$(verify_job 32m)"
echo "no TIMEOUT, 32 MiB: fio status $rc, $w KiB written, $r KiB read back"
if [ "$rc" != 0 ] || [ "$w" = 0 ] || [ "$r" != "$w" ]; then
	echo "the control failed: the job without TIMEOUT did not verify what it wrote" >&2
	exit 2
fi
read -r rc w r <<<"$(verify_job 4g 2)"
echo "TIMEOUT=2, 4 GiB: fio status $rc, $w KiB written, $r KiB read back"
if [ "$rc" = 0 ] && [ "$r" -lt "$w" ]; then
	echo "finding stands: a passing verify job that read back $r of $w KiB" >&2
	fail=1
fi
exit $fail
