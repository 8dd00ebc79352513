# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# rdmasim: the helpers of a test kernel's init, in POSIX sh (busybox's
# too): scripts/guest/init-uml.sh (UML, the host's bash) and
# scripts/guest/init-qemu.sh (the stock kernel's initramfs, busybox) source it.
# Their output is the console protocol of Documentation/testing.rst ("The
# console protocol"), which scripts/judge-log.py judges. Uses KMEMLEAK (a
# path, writable when the kernel has kmemleak) and counts in n and fails;
# scratch files go to /run.

n=0
fails=0

say() {
	echo "$*" >/dev/kmsg
}

# check "name" cmd...: one line of the shell selftest's own results
check() {
	local name="$1"
	shift
	n=$((n + 1))
	if "$@" >/run/check.out 2>&1; then
		say "RSIM-SELFTEST ok $n $name"
	else
		say "RSIM-SELFTEST not ok $n $name"
		while IFS= read -r l; do
			say "RSIM-SELFTEST #   $l"
		done </run/check.out
		fails=$((fails + 1))
	fi
}

# Every program started in the UML kernel costs about half a second (a
# fork alone a quarter): the checks use shell builtins where they can.
#   capture file cmd...: run cmd once, its output to <file> and the console
#   has_line file pattern: a line of <file> matches the shell <pattern>
capture() {
	local f="$1" rc=0 l
	shift
	"$@" >"$f" 2>&1 || rc=$?
	while IFS= read -r l; do echo "$l"; done <"$f" >/dev/console
	return $rc
}

has_line() {
	local l
	while IFS= read -r l; do
		# shellcheck disable=SC2254 # a pattern on purpose
		case $l in $2) return 0 ;; esac
	done <"$1"
	echo "$1: no line matches '$2'"
	return 1
}

# wait_for "what" seconds cmd...: run cmd until it succeeds, for at most
# <seconds> by the kernel's clock (/proc/uptime, read with a builtin), not
# a count of tries: a loaded host slows every try. On time-out it prints
# "timed out after <n> s waiting for <what>" (and cmd's last output) and
# fails. Every test that needs another process, a device, a link or a
# port to be ready waits through this, never for a fixed time.
wait_for() {
	local what="$1" limit="$2" t0 now l
	shift 2
	uptime_s
	t0=$up
	until "$@" >/run/wait.out 2>&1; do
		uptime_s
		now=$up
		if [ $((now - t0)) -ge "$limit" ]; then
			while IFS= read -r l; do echo "$l"; done </run/wait.out
			echo "timed out after $((now - t0)) s waiting for $what"
			return 1
		fi
		sleep 0.2
	done
}

# uptime_s: whole seconds since boot in $up (no fork)
uptime_s() {
	local rest
	read -r up rest </proc/uptime
	up=${up%.*}
}

# ll_addr_ready ifname: <ifname> has an IPv6 link-local address that is
# not tentative (/proc/net/if_inet6: scope 20, no IFA_F_TENTATIVE 0x40).
# A veth end gets it from addrconf after the link watcher has seen the
# carrier, some time after "ip link set up" returned.
ll_addr_ready() {
	local _a _i _p scope flags dev
	while read -r _a _i _p scope flags dev; do
		[ "$dev" = "$1" ] && [ "$scope" = 20 ] &&
			[ $((0x$flags & 0x40)) = 0 ] && return 0
	done </proc/net/if_inet6
	echo "$1: no usable IPv6 link-local address"
	return 1
}

# ll_of ifname [netns]: <ifname>'s IPv6 link-local address (in network
# namespace <netns>) in $val: the address an rdma_cm pair uses
# shellcheck disable=SC2034 # val: the result, for the caller
ll_of() {
	local l
	val=
	if [ -n "${2:-}" ]; then
		ip netns exec "$2" ip -6 -o addr show dev "$1" scope link \
			>/run/ll 2>&1
	else
		ip -6 -o addr show dev "$1" scope link >/run/ll 2>&1
	fi
	while read -r l; do
		l=${l#*inet6 }
		val=${l%%/*}
		return 0
	done </run/ll
	echo "$1: no link-local address"
	return 1
}

# cm_listening port: an rdma_cm ID listens on <port> (rdma res show cm_id)
cm_listening() {
	rdma res show cm_id >/run/cm-ids 2>&1
	has_line /run/cm-ids "*state LISTEN*:$1 *" ||
		has_line /run/cm-ids "*state LISTEN*:$1"
}

# port_active ibdev: port 1 of <ibdev> is ACTIVE
port_active() {
	sysfs_is "/sys/class/infiniband/$1/ports/1/state" "4: ACTIVE"
}

# roce_v2_gid ibdev: one of the first GIDs of port 1 of <ibdev> is a
# link-local RoCE v2 GID (the one rdma_cm and the suites use; the core
# fills the table from its netdev's addresses in a work item)
roce_v2_gid() {
	local p="/sys/class/infiniband/$1/ports/1" i t g
	for i in 0 1 2 3; do
		{ read -r t <"$p/gid_attrs/types/$i" && read -r g <"$p/gids/$i"; } \
			2>/dev/null || continue
		[ "$t" = "RoCE v2" ] && [ "${g#fe80:}" != "$g" ] && return 0
	done
	echo "$1: no link-local RoCE v2 GID in indexes 0-3"
	return 1
}

# part name: where each part of the run begins (the time profile)
part() {
	say "RSIM-PART $1"
}

finish() {
	part finish
	# objects must be older than kmemleak's minimum age to be reported
	if [ -w "$KMEMLEAK" ]; then
		sleep 6
		echo scan >"$KMEMLEAK"
		echo scan >"$KMEMLEAK"
		say "RSIM-KMEMLEAK-BEGIN"
		while IFS= read -r l; do echo "$l"; done <"$KMEMLEAK" >/dev/console
		say "RSIM-KMEMLEAK-END"
	fi
	say "RSIM-SELFTEST 1..$n"
	say "RSIM-DONE fails=$fails"
	echo o >/proc/sysrq-trigger
	sleep 10
}

# sysfs_is file value: the attribute reads exactly <value>
sysfs_is() {
	local v
	read -r v <"$1" || { echo "$1: unreadable"; return 1; }
	[ "$v" = "$2" ] || { echo "$1: '$v' != '$2'"; return 1; }
}

# write_errno file text message: writing <text> to <file> fails with
# <message>, the errno's (coreutils' echo says which; dash's builtin says
# "I/O error" for all)
write_errno() {
	local out
	out=$(/bin/echo "$2" 2>&1 >"$1") && { echo "$1 '$2' accepted"; return 1; }
	case $out in *"$3"*) return 0 ;; esac
	echo "$1 '$2': $out (expected $3)"
	return 1
}

# kv file key: the rest of <file>'s first "key value" or "key: value"
# line in $val (debugfs' stats and limits, rsim_umad's counters, ...)
kv() {
	local k v
	while read -r k v; do
		case $k in "$2" | "$2:") val=$v; return 0 ;; esac
	done <"$1"
	val=
	echo "$1: no $2"
	return 1
}

# lines file line...: every <line> is a line of <file>
lines() {
	local f="$1"
	shift
	while [ $# -gt 0 ]; do
		has_line "$f" "$1" || return 1
		shift
	done
}

# ipoib_if dev: the IPoIB interface of InfiniBand device <dev> in $val
ipoib_if() {
	local i
	val=
	for i in /sys/class/net/ib*; do
		[ -e "$i/device/infiniband/$1" ] || continue
		val=${i##*/}
		return 0
	done
	echo "no IPoIB interface on $1"
	return 1
}

# ipoib_carrier netns ifname: the interface in <netns> has its carrier
ipoib_carrier() {
	ip netns exec "$1" cat "/sys/class/net/$2/carrier" 2>/dev/null |
		{ read -r c; [ "$c" = 1 ]; }
}

# kselftest_rdmasim name selftests script: rdmasim's kselftest run as
# kselftest runs it, beside ../kselftest/ktap_helpers.sh of <selftests>
# (a kernel's tools/testing/selftests): it must exit 0 with every test
# of its plan passed
kselftest_rdmasim() {
	local d="/run/kst-$1"
	mkdir -p "$d/rdma" "$d/kselftest"
	cp "$2/kselftest/ktap_helpers.sh" "$d/kselftest/"
	cp "$3" "$d/rdma/"
	check "$1" sh -c "bash $d/rdma/${3##*/} >$d.out 2>&1 ||
		{ cat $d.out; exit 1; }"
	check "${1}_all_passed" ktap_all_passed "$d.out"
}

# ktap_all_passed file: a KTAP run's totals pass every test of its plan
# (and its plan has some)
ktap_all_passed() {
	local n
	n=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' "$1")
	[ "${n:-0}" -gt 0 ] && has_line "$1" "# Totals: pass:$n fail:0 *"
}

# bcast_members ca file: how many MCMemberRecords of IPoIB's broadcast
# group (the default partition's) the SA gives <ca>'s saquery, in $val;
# saquery's output in <file>
bcast_members() {
	local l
	val=0
	saquery -C "$1" -P 1 -g >"$2" 2>&1 || return 1
	while IFS= read -r l; do
		case $l in *MGID*ff12:401b:ffff::ffff:ffff) val=$((val + 1)) ;; esac
	done <"$2"
}

# copy_file from to: with shell builtins
copy_file() {
	local l
	while IFS= read -r l; do echo "$l"; done <"$1" >"$2"
}

# A userspace program's objects must all be gone when it ends: the
# selftest snapshots rdmasim0's counts before and after it.
#   res_snapshot prefix n: "rdma res show" to <prefix>-res<n>, rdmasim0's
#	debugfs resources to <prefix>-dbg<n>
#   restrack_unchanged prefix: restrack's rdmasim0 line the same in both
#   counts_unchanged prefix type...: each <type>'s count the same in both
res_snapshot() {
	capture "$1-res$2" rdma res show
	copy_file "$DBG/rdmasim0/resources" "$1-dbg$2"
}

# res_line file: restrack's line for rdmasim0 ("rdmasim0: pd 1 cq 1 qp 2
# ... ctx 0 ...") in <file>, in $val
res_line() {
	local l
	while IFS= read -r l; do
		case $l in *"rdmasim0:"*) val=$l; return 0 ;; esac
	done <"$1"
	val=
	echo "$1: no rdmasim0 line"
	return 1
}

restrack_unchanged() {
	local before
	res_line "$1-res0" || return 1
	before=$val
	res_line "$1-res1" || return 1
	echo "before: $before"
	echo "after:  $val"
	[ "$before" = "$val" ]
}

# res_count file type: the count of <type> in a debugfs resources copy
res_count() {
	kv "$1" "$2" || return 1
	val=${val%% *}
}

counts_unchanged() {
	local p="$1" t before
	shift
	for t in "$@"; do
		res_count "$p-dbg0" "$t" || return 1
		before=$val
		res_count "$p-dbg1" "$t" || return 1
		[ "$before" = "$val" ] || {
			echo "$t: $before before, $val after"
			return 1
		}
	done
}

# cpu_outside_affinity file: a DMA handle naming a CPU outside the
# process's affinity was refused (EPERM), or, with one possible CPU (none
# outside it), the case said it skipped
cpu_outside_affinity() {
	local possible
	read -r possible </sys/devices/system/cpu/possible
	if [ "$possible" = 0 ]; then
		has_line "$1" "dmah cpu_outside_affinity skipped (1 cpu)"
	else
		has_line "$1" "dmah cpu_outside_affinity EPERM"
	fi
}

# field file name: the value of a "Name:....value" line of smpquery in $val
field() {
	local l
	while IFS= read -r l; do
		case $l in
		"$2:"*)
			val=${l#"$2:"}
			while [ "${val#.}" != "$val" ]; do val=${val#.}; done
			return 0
			;;
		esac
	done <"$1"
	val=
	echo "$1: no $2"
	return 1
}

# listening port: whether /proc/net/tcp has :<hex port> in LISTEN (0A)
listening() {
	local _sl local_addr _rem st rest f
	for f in /proc/net/tcp /proc/net/tcp6; do
		[ -r $f ] || continue
		while read -r _sl local_addr _rem st rest; do
			case $local_addr in *":$1") [ "$st" = 0A ] && return 0 ;; esac
		done <$f
	done
	return 1
}

# rdma_core_env: rdma-core 65's build (RSIM_RDMA_CORE_ENV, its
# rsim-env.sh) for the programs started from here: its libraries and
# pyverbs, and rdmasim's provider where rdmasim is loaded (not otherwise:
# rxe0's and siw0's results then depend on the kernel, rdma-core and these
# scripts alone)
rdma_core_env() {
	# shellcheck disable=SC1090 # the build's
	. "$RSIM_RDMA_CORE_ENV" || return 1
	export LD_LIBRARY_PATH="$RSIM_RDMA_CORE_LIB"
	export PYTHONPATH="$RSIM_RDMA_CORE_PYTHONPATH"
	if [ -d /sys/module/rdmasim ]; then
		export RDMAV_DRIVERS="$RSIM_MODDIR/tools/provider/librdmasim"
	fi
}

# cpuinfo_mhz: a "cpu MHz" line in /proc/cpuinfo (a bind mount), which
# UML's lacks: perftest turns cycles into times with the frequency it
# samples (rdtsc against gettimeofday) and refuses to report without the
# line; a value 2% off its sample is replaced (guest/bench-perftest.sh,
# guest/peers.sh)
cpuinfo_mhz() {
	grep -q '^cpu MHz' /proc/cpuinfo && return 0
	{ cat /proc/cpuinfo; echo "cpu MHz		: 1.000"; } >/run/cpuinfo &&
		mount --bind /run/cpuinfo /proc/cpuinfo
}
