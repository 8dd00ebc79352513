# shellcheck shell=sh
# shellcheck disable=SC2154 # val: set by guest/lib.sh's kv()
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: fault injection swept through NVMe over RDMA (issue 21;
# Documentation/ulps.rst, "Fault injection through a ULP"), on the
# injection points of the two rdmasim devices under an nvme-rdma host and
# an nvmet-rdma target (each device's allocation point, and its MAD
# pool's buffer allocation and mapping).
#
# A run: the host connects, writes 256 KiB, reads it back and compares,
# and disconnects. First two clean runs with every point traced (debugfs
# fault/<site>/trace): for each point, the call site of each of its
# checks in order. The first run on a device also fills the core's CQ
# pool (ib_cq_pool_get() creates CQs it keeps): its call sites that the
# second run no longer reaches are printed as RSIM-SWEEP-COLD, not swept.
# Then, for each point, one run per call site of the second trace, with
# fail_nth = the first n that reaches it (and, for a site that n missed,
# as the host's and the target's work interleave, a few more n near and
# at its later checks), and one with n one past the last check. Each run must work, or fail with an error the ULP reports
# (the connect's write to /dev/nvme-fabrics), within its time limit, with
# no controller left and both devices' object counts back where they were;
# every call site of the trace must have failed in one of them
# (injected_at). Every run prints
# "RSIM-SWEEP <point> <n> <hit|miss> <call site> <outcome>", every point
# "RSIM-SWEEP <point> checks <n> sites <s> hit <h>"; the log judge fails
# the boot on any kernel report.
#
# RSIM_SWEEP_FULL=1 on the kernel command line tries every n instead.
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
# <n> (0: none); prints its line, with the call site that failed
# (injected_at); returns 1 if the point did not fire (n is past the run's
# last check), 2 if the run left something behind
sweep_run() {
	local p="$1" n="$2" haddr="$3" inj0 inj1 hit site outcome rc=0
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
	hit=miss site=-
	if [ "$inj1" -gt "$inj0" ]; then
		hit=hit
		read -r site <"$p/injected_at"
		echo "$site" >>/run/sw-hit
	fi
	if ! wait_for "the run's objects to go" 60 sweep_settled "$@" >/run/sw-left; then
		outcome="$outcome,LEFT-BEHIND"
		rc=2
	fi
	say "RSIM-SWEEP ${p#"$DBG"/} $n $hit ${site%% *} $outcome"
	[ $rc = 0 ] || { cat /run/sw-left; return 2; }
	[ $hit = hit ]
}

# sweep_points dev...: the injection points of the devices, one a line
sweep_points() {
	local d p
	for d in "$@"; do
		for p in "$DBG/$d/fault/alloc" "$DBG/$d/mad_pool/fault/alloc" \
			"$DBG/$d/mad_pool/fault/map"; do
			[ -w "$p/fail_nth" ] && echo "$p"
		done
	done
}

# sweep_traced haddr dev...: a clean run with every point traced; each
# point's trace in /run/sw-tr.<k> (k: its line in /run/sw-points)
sweep_traced() {
	local haddr="$1" p k=0
	shift
	while read -r p; do echo 16384 >"$p/trace"; done </run/sw-points
	sweep_connect "$haddr" && sweep_io || return 1
	echo 1 >"/sys/class/nvme/$nvme_ctrl/delete_controller" &&
		wait_for "the traced run's objects to go" 60 sweep_settled "$@" ||
		return 1
	while read -r p; do
		k=$((k + 1))
		cat "$p/trace" >/run/sw-tr.$k
		echo 0 >"$p/trace"
	done </run/sw-points
}

# sweep_plan k: the n to try for point <k>: the first check from each call
# site its trace names, then one past its last check; every n with
# RSIM_SWEEP_FULL=1
sweep_plan() {
	local total
	read -r _ total </run/sw-tr."$1"
	if [ "${RSIM_SWEEP_FULL:-0}" = 1 ]; then
		seq 1 $((total + 1))
	else
		awk 'NR > 1 && !seen[$2]++ { print $1 }' /run/sw-tr."$1"
		echo $((total + 1))
	fi
}

# sweep_missed k: for each call site of point <k>'s trace no run has
# failed yet, its next three checks after the first, and the checks on
# either side of its first
sweep_missed() {
	awk '{ print $1 }' /run/sw-hit | sort -u |
		comm -13 - /run/sw-tr.sites."$1" >/run/sw-missed
	awk 'NR == FNR { m[$1] = 1; next }
		FNR > 1 && ($2 in m) {
			c[$2]++
			if (c[$2] == 1) { print $1 - 1; print $1 + 1 }
			else if (c[$2] <= 4) print $1
		}' /run/sw-missed /run/sw-tr."$1" | awk '$1 > 0' | sort -un
}

# fault_sweep_nvme haddr dev...: every call site of every point of every
# <dev>, from a traced clean run; each site must be hit, and n one past
# the last check must not
fault_sweep_nvme() {
	local haddr="$1" p n k=0 rc runs=0 bad=0 sites covered total plan
	shift
	sweep_counts /run/sw-base "$@" || return 1
	sweep_points "$@" >/run/sw-points
	# two clean runs traced: the first on devices that have not served
	# nvme yet, where the core's CQ pool still allocates; the second is
	# what every later run repeats, the plan
	sweep_traced "$haddr" "$@" || { echo "the first traced run failed"; return 1; }
	while read -r p; do
		k=$((k + 1))
		mv /run/sw-tr.$k /run/sw-cold.$k
	done </run/sw-points
	k=0
	sweep_traced "$haddr" "$@" || { echo "the second traced run failed"; return 1; }
	while read -r p; do
		k=$((k + 1))
		awk 'NR > 1 { print $2 }' /run/sw-tr.$k | sort -u >/run/sw-tr.sites.$k
		awk 'NR > 1 { print $2 }' /run/sw-cold.$k | sort -u |
			comm -23 - /run/sw-tr.sites.$k | while read -r site; do
				say "RSIM-SWEEP-COLD ${p#"$DBG"/} $site: the first run only, not swept"
			done
		: >/run/sw-hit
		# then, as the target's and the host's work interleave, for a
		# site whose first n hit another, n at and near its later checks
		for plan in sweep_plan sweep_missed; do
			for n in $($plan $k); do
				rc=0
				sweep_run "$p" "$n" "$haddr" "$@" || rc=$?
				runs=$((runs + 1))
				[ $rc = 2 ] && bad=$((bad + 1))
			done
		done
		awk 'NR > 1 { c[$2]++; if (!f[$2]) f[$2] = $1 }
			END { for (x in c) print x, f[x], c[x] }' /run/sw-tr.$k |
			sort -k2n | while read -r site n c; do
				say "RSIM-SWEEP-SITE ${p#"$DBG"/} $site first $n checks $c"
			done
		read -r _ total </run/sw-tr.$k
		sites=$(wc -l </run/sw-tr.sites.$k)
		covered=$(awk '{ print $1 }' /run/sw-hit | sort -u |
			comm -12 - /run/sw-tr.sites.$k | wc -l)
		say "RSIM-SWEEP ${p#"$DBG"/} checks $total sites $sites hit $covered"
		if [ "$covered" != "$sites" ]; then
			echo "${p#"$DBG"/}: sites never failed:"
			awk '{ print $1 }' /run/sw-hit | sort -u |
				comm -13 - /run/sw-tr.sites.$k
			bad=$((bad + 1))
		fi
	done </run/sw-points
	say "RSIM-SWEEP runs $runs bad $bad"
	[ $bad = 0 ]
}
