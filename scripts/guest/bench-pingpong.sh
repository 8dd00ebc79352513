#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: make bench's latency figure (sourced by guest/init-uml.sh in
# the bench boot, two CPUs): rdma-core's ibv_rc_pingpong between two
# processes, with completion events (-e: each side sleeps in
# ibv_get_cq_event until the kernel's completion handler wakes it; busy
# polling on a UML CPU would measure the scheduler tick), 64-byte
# messages, on rdmasim0 (through the provider) and on rxe0 in the same
# boot, five pairs each, alternating: one run on
# a loaded host varies by a third. One line per device, in usec per
# iteration:
#
#   RSIM-BENCH pingpong <device> <median> <fastest> <slowest> <pairs>
#
# (or "RSIM-BENCH pingpong <device> failed"). Uses RSIM_RDMA_CORE_ENV,
# RSIM_MODDIR, say and wait_for (guest/lib.sh).

# shellcheck disable=SC1090 # the build's
. "$RSIM_RDMA_CORE_ENV"
ip link set lo up

# bench_pingpong device gid-index [env...]: one pair; appends its usec
# per iteration to /run/bpp-<device>, or says why it failed
bench_pingpong() {
	local dev="$1" gid="$2" srv l f us=failed
	shift 2
	rm -f /run/bpp-srv /run/bpp-cli
	timeout 300 env "$@" "$RSIM_RDMA_CORE_BIN/ibv_rc_pingpong" \
		-d "$dev" -g "$gid" -e -s 64 -n 2000 >/run/bpp-srv 2>&1 &
	srv=$!
	if wait_for "the $dev server to listen on port 18515" 120 listening 4853; then
		timeout 300 env "$@" "$RSIM_RDMA_CORE_BIN/ibv_rc_pingpong" \
			-d "$dev" -g "$gid" -e -s 64 -n 2000 localhost \
			>/run/bpp-cli 2>&1
	else
		kill $srv
	fi
	wait $srv
	# "2000 iters in 0.12 seconds = 60.00 usec/iter"
	while IFS= read -r l; do
		case $l in *" iters in "*" usec/iter")
			us=${l##*= }
			us=${us% usec/iter} ;;
		esac
	done </run/bpp-cli
	if [ "$us" != failed ]; then
		echo "$us" >>"/run/bpp-$dev"
		return 0
	fi
	# a pair that did not run says why
	for f in bpp-srv bpp-cli; do
		[ -f /run/$f ] || continue
		while IFS= read -r l; do
			say "RSIM-BENCH pingpong $dev $f: $l"
		done </run/$f
	done
	return 1
}

# bench_report device: median, fastest and slowest of its pairs
bench_report() {
	local dev="$1" n
	if [ ! -s "/run/bpp-$dev" ]; then
		say "RSIM-BENCH pingpong $dev failed"
		return
	fi
	sort -n "/run/bpp-$dev" >/run/bpp-sorted
	n=$(wc -l </run/bpp-sorted)
	say "RSIM-BENCH pingpong $dev" \
		"$(sed -n "$(((n + 1) / 2))p" /run/bpp-sorted)" \
		"$(head -n 1 /run/bpp-sorted)" "$(tail -n 1 /run/bpp-sorted)" "$n"
}

# Pairs of the two devices alternate, so that both see the same host.
rm -f /run/bpp-rdmasim0 /run/bpp-rxe0
i=0
while [ $i -lt 5 ]; do
	bench_pingpong rdmasim0 0 \
		RDMAV_DRIVERS="$RSIM_MODDIR/tools/provider/librdmasim" || break
	if [ -d /sys/class/infiniband/rxe0 ]; then
		bench_pingpong rxe0 0 || break
	fi
	i=$((i + 1))
done
bench_report rdmasim0
[ -d /sys/class/infiniband/rxe0 ] && bench_report rxe0
