# shellcheck shell=sh
# shellcheck disable=SC2154 # val: set by guest/lib.sh's kv()
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: fault injection swept through NVMe over RDMA (issue 21;
# Documentation/ulps.rst, "Fault injection through a ULP"). For each
# injection point of the two rdmasim devices under an nvme-rdma host and
# an nvmet-rdma target (each device's allocation point, and its MAD
# pool's buffer allocation and mapping), and for n = 1, 2, ... until the
# n-th check is past the last one the run makes: fail_nth = n, then the
# host connects, writes 256 KiB, reads it back and compares, and
# disconnects. Each run must work, or fail with an error the ULP reports
# (the connect's write to /dev/nvme-fabrics), within its time limit, with
# no controller left and both devices' object counts back where they were.
# Every run prints "RSIM-SWEEP <point> <n> <hit|miss> <outcome>"; the log
# judge fails the boot on any kernel report.
#
# RSIM_SWEEP_FULL=1 on the kernel command line tries every n; by default
# n runs 1..12 and then 16, 24, 32, 48, ... (each step half again).
#
# Uses check(), say(), wait_for(), kv() from guest/lib.sh and
# guest/ulp-nvme.sh's nvme_* functions (the target must be up).

# sweep_connect haddr: connect, with a time limit; the controller in
# $nvme_ctrl, the result in $sweep_out
sweep_connect() {
	# shellcheck disable=SC2016 # the inner shell's own $1
	sweep_out=$(timeout 90 sh -c 'exec 3<>/dev/nvme-fabrics &&
		echo "$1" >&3 && read -r r <&3 && echo "$r"' sh \
		"transport=rdma,traddr=$1,trsvcid=$NVME_PORT,nqn=$NVME_NQN" 2>&1)
	case $sweep_out in
	instance=*)
		nvme_ctrl=nvme${sweep_out#instance=}
		nvme_ctrl=${nvme_ctrl%%,*}
		return 0
		;;
	esac
	# "sh: 1: echo: echo: I/O error" -> "I/O error"
	sweep_out=${sweep_out##*: }
	[ -n "$sweep_out" ] || sweep_out="timed out"
	return 1
}

# sweep_io: 256 KiB written, read back and compared
sweep_io() {
	local dev="/dev/${nvme_ctrl}n1"
	wait_for "$dev" 30 test -b "$dev" >/dev/null || return 1
	dd if=/dev/urandom of=/run/sw-pat bs=64k count=4 2>/dev/null &&
		timeout 60 dd if=/run/sw-pat of="$dev" bs=64k count=4 oflag=direct \
			2>/dev/null &&
		timeout 60 dd if="$dev" of=/run/sw-back bs=64k count=4 iflag=direct \
			2>/dev/null &&
		cmp -s /run/sw-pat /run/sw-back
}

# sweep_pooled dev: how many of <dev>'s CQs are the core's CQ pool's
# spares: made by ib_core for ib_cq_pool_get() and not attached to a QP.
# The pool keeps its CQs until the device goes (ib_cq_pool_cleanup()), and
# grows when a queue finds no room, so they are not the run's objects.
# (The MAD layer's CQ, also ib_core's, always has its QP1 attached.)
sweep_pooled() {
	rdma res show cq dev "$1" 2>/dev/null |
		grep ' users 0 ' | grep -c 'comm \[ib_core\]'
}

# sweep_counts file dev...: the devices' object counts, one line each; the
# CQ count leaves out the CQ pool's spares
sweep_counts() {
	local f="$1" d t c
	shift
	: >"$f"
	for d in "$@"; do
		for t in pd mr cq qp ah srq; do
			kv "$DBG/$d/resources" $t >/dev/null || return 1
			c=${val%% *}
			[ $t = cq ] && c=$((c - $(sweep_pooled "$d")))
			echo "$d $t $c" >>"$f"
		done
	done
}

# sweep_settled dev...: no controller left, counts as in /run/sw-base
sweep_settled() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ -e "$c" ] && { echo "$c is still there"; return 1; }
	done
	sweep_counts /run/sw-now "$@" || return 1
	cmp -s /run/sw-base /run/sw-now || {
		diff /run/sw-base /run/sw-now
		for c in "$@"; do
			rdma res show cq dev "$c"
		done
		return 1
	}
}

# sweep_run point n haddr dev...: one run with the <point>'s fail_nth at
# <n>; prints its line; returns 1 if the point did not fire (n is past
# the run's last check) or the run left something behind
sweep_run() {
	local p="$1" n="$2" haddr="$3" inj0 inj1 hit outcome rc=0
	shift 3
	read -r inj0 <"$p/injected"
	echo "$n" >"$p/fail_nth"
	if sweep_connect "$haddr"; then
		if sweep_io; then
			outcome="ok"
		else
			outcome="io-error"
		fi
		echo 1 >"/sys/class/nvme/$nvme_ctrl/delete_controller" 2>/dev/null
	else
		outcome="connect-failed:$(echo "$sweep_out" | tr ' ' '-')"
	fi
	echo 0 >"$p/fail_nth"
	read -r inj1 <"$p/injected"
	hit=miss
	[ "$inj1" -gt "$inj0" ] && hit=hit
	if ! wait_for "the run's objects to go" 60 sweep_settled "$@" >/run/sw-left; then
		outcome="$outcome,LEFT-BEHIND"
		rc=2
	fi
	say "RSIM-SWEEP ${p#"$DBG"/} $n $hit $outcome"
	[ $rc = 0 ] || { cat /run/sw-left; return 2; }
	[ $hit = hit ]
}

# fault_sweep_nvme haddr dev...: every point of every <dev>, each n
fault_sweep_nvme() {
	local haddr="$1" d p n rc runs=0 bad=0
	shift
	sweep_counts /run/sw-base "$@" || return 1
	for d in "$@"; do
		for p in "$DBG/$d/fault/alloc" "$DBG/$d/mad_pool/fault/alloc" \
			"$DBG/$d/mad_pool/fault/map"; do
			[ -w "$p/fail_nth" ] || continue
			n=1
			while :; do
				rc=0
				sweep_run "$p" $n "$haddr" "$@" || rc=$?
				runs=$((runs + 1))
				[ $rc = 2 ] && bad=$((bad + 1))
				[ $rc = 0 ] || break
				if [ "${RSIM_SWEEP_FULL:-0}" = 1 ] || [ $n -lt 12 ]; then
					n=$((n + 1))
				else
					n=$((n + n / 2))
				fi
			done
		done
	done
	say "RSIM-SWEEP runs $runs left-behind $bad"
	[ $bad = 0 ]
}
