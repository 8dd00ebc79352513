#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: make bench's userspace figures (sourced by guest/init-uml.sh
# in the bench boot, two CPUs, after bench-pingpong.sh): perftest's
# ib_write_lat and ib_send_lat (8 bytes), ib_write_bw (64 KiB) and
# ib_send_bw (8 bytes: the message rate), server and client as two
# processes over the loopback, on rdmasim0 with its mapped queues, on
# rdmasim0 with RSIM_NO_MAP=1 (a system call per verb, the kernel's
# commands) and on rxe0, three rounds, each running the three in turn so
# that each sees the same host. perftest polls its completions (and
# ib_write_lat the last byte of its buffer): each process busy-waits on
# a CPU of its own, which is why the boot has two. One line per test and
# device:
#
#   RSIM-BENCH perftest <test> <device> <median> <lowest> <highest> <runs>
#
# in usec (t_typical, perftest's median) for the latencies, MB/s for
# ib_write_bw and Mpps for ib_send_bw (or "... <device> failed"); and for
# rdmasim0's mapped runs the system calls the provider made, from the
# device's debugfs counters, per message of the client and the server
# together:
#
#   RSIM-BENCH syscalls <test> doorbells <n> polls <n> posts <n>
#
# First, rsim_cost's profile (tools/provider/rsim_cost.c): what a system
# call, a doorbell and a whole 8-byte WRITE cost on one CPU, mapped and
# not ("RSIM-BENCH cost ..."); then on-demand paging's figures
# (tools/provider/rsim_odp.c -b, "RSIM-BENCH odp ..."). Uses RSIM_RDMA_CORE_PERFTEST, RSIM_MODDIR,
# say and wait_for (guest/lib.sh).

PT_DBG=/sys/kernel/debug/rdmasim/rdmasim0/datapath

# pt_count name: the counter <name> of rdmasim0's datapath file
pt_count() {
	awk -v k="$1" '$1 == k { print $2 }' "$PT_DBG"
}

# pt_run test device size iters [env...]: one server-client pair; appends
# its figure to /run/pt-<test>-<device>, or says why it failed
pt_run() {
	local t="$1" dev="$2" size="$3" n="$4" d="$2" l f v=failed
	shift 4
	[ "$dev" = rdmasim0-nomap ] && d=rdmasim0
	rm -f /run/pt-srv /run/pt-cli
	timeout 300 env "$@" "$RSIM_RDMA_CORE_PERFTEST/$t" -d "$d" -F \
		-s "$size" -n "$n" >/run/pt-srv 2>&1 &
	srv=$!
	if wait_for "the $t server on $dev to listen" 120 listening 4853; then
		timeout 300 env "$@" "$RSIM_RDMA_CORE_PERFTEST/$t" -d "$d" -F \
			-s "$size" -n "$n" localhost >/run/pt-cli 2>&1
	else
		kill $srv
	fi
	wait $srv
	# the figures' line: "<size> <iters> ..." (latency: t_typical is
	# the 5th column; bandwidth: BW average the 4th, MsgRate the 5th)
	while IFS= read -r l; do
		# shellcheck disable=SC2086 # the columns
		set -- $l
		if [ $# -lt 5 ] || [ "$1" != "$size" ] || [ "$2" != "$n" ]; then
			continue
		fi
		case $t in
		*_lat) v=$5 ;;
		ib_write_bw) v=$4 ;;
		*) v=$5 ;;
		esac
	done </run/pt-cli
	if [ "$v" != failed ]; then
		echo "$v" >>"/run/pt-$t-$dev"
		return 0
	fi
	for f in pt-srv pt-cli; do
		[ -f /run/$f ] || continue
		while IFS= read -r l; do
			say "RSIM-BENCH perftest $t $dev $f: $l"
		done </run/$f
	done
	return 1
}

# pt_report test device: median, lowest and highest of its runs
pt_report() {
	local n
	if [ ! -s "/run/pt-$1-$2" ]; then
		say "RSIM-BENCH perftest $1 $2 failed"
		return
	fi
	sort -g "/run/pt-$1-$2" >/run/pt-sorted
	n=$(wc -l </run/pt-sorted)
	say "RSIM-BENCH perftest $1 $2" \
		"$(sed -n "$(((n + 1) / 2))p" /run/pt-sorted)" \
		"$(head -n 1 /run/pt-sorted)" "$(tail -n 1 /run/pt-sorted)" "$n"
}

# pt_test test size iters: three rounds, each a run on every device in
# turn (mapped, not mapped, rxe0), then the lines
pt_test() {
	local t="$1" size="$2" n="$3" i=0 db=0 po=0 ps=0 db0 po0 ps0 msgs
	local drv="RDMAV_DRIVERS=$RSIM_MODDIR/tools/provider/librdmasim"
	rm -f /run/pt-"$t"-*
	while [ $i -lt 3 ]; do
		# the mapped run's system calls, from the device's counters
		db0=$(pt_count send_doorbells)
		po0=$(pt_count user_polls)
		ps0=$(($(pt_count user_send_posts) + $(pt_count user_recv_posts)))
		pt_run "$t" rdmasim0 "$size" "$n" "$drv"
		db=$((db + $(pt_count send_doorbells) - db0))
		po=$((po + $(pt_count user_polls) - po0))
		ps=$((ps + $(pt_count user_send_posts) + \
		      $(pt_count user_recv_posts) - ps0))
		pt_run "$t" rdmasim0-nomap "$size" "$n" "$drv" RSIM_NO_MAP=1
		[ -d /sys/class/infiniband/rxe0 ] &&
			pt_run "$t" rxe0 "$size" "$n"
		i=$((i + 1))
	done
	# both sides' messages (a latency test's are round trips, one
	# message each way)
	msgs=$((3 * n * 2))
	case $t in *_bw) msgs=$((3 * n)) ;; esac
	say "RSIM-BENCH syscalls $t" \
		"doorbells $(awk -v a="$db" -v m=$msgs \
			'BEGIN { printf "%.2f", a / m }')" \
		"polls $po" "posts $ps"
	pt_report "$t" rdmasim0
	pt_report "$t" rdmasim0-nomap
	[ -d /sys/class/infiniband/rxe0 ] && pt_report "$t" rxe0
}

# the profile: a system call, a doorbell and an 8-byte WRITE on one CPU,
# with and without mapped queues (tools/provider/rsim_cost.c)
for pt_env in "" RSIM_NO_MAP=1; do
	# shellcheck disable=SC2086 # no variable, or one
	say "$(env $pt_env \
		RDMAV_DRIVERS="$RSIM_MODDIR/tools/provider/librdmasim" \
		"$RSIM_MODDIR/tools/provider/rsim_cost" -d rdmasim0 2>&1 |
		tail -n 1)"
done

# on-demand paging (tools/provider/rsim_odp -b): WRITEs of 64 KiB and
# 1 MiB into an ODP MR at first touch and warm, against a pinned MR, and
# the page fault's cost, on rdmasim0 and rxe0 (which has explicit ODP)
for pt_dev in rdmasim0 rxe0; do
	[ -d /sys/class/infiniband/$pt_dev ] || continue
	env RDMAV_DRIVERS="$RSIM_MODDIR/tools/provider/librdmasim" \
		"$RSIM_MODDIR/tools/provider/rsim_odp" -d $pt_dev -b 2>&1 |
		while IFS= read -r l; do
			case "$l" in RSIM-BENCH*) say "$l" ;; esac
		done
done

if [ -x "${RSIM_RDMA_CORE_PERFTEST:-}/ib_write_lat" ]; then
	cpuinfo_mhz
	pt_test ib_write_lat 8 5000
	pt_test ib_send_lat 8 5000
	pt_test ib_write_bw 65536 2000
	pt_test ib_send_bw 8 20000
	umount /proc/cpuinfo
else
	say "RSIM-BENCH perftest: no ib_write_lat in the perftest build"
fi
