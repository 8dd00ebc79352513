#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: init (PID 1) of the UML test kernel. The host's / is the
# read-only root; scripts/boot-uml.sh passes, through the kernel command
# line, RSIM_TOP, RSIM_MODDIR (where the rdmasim modules were built),
# RSIM_MODROOT, RSIM_KVER, RSIM_MODE and the optional RSIM_PEERS,
# RSIM_RDMASIM, RSIM_CONF_ARGS, RSIM_MUTANT_MODDIR, RSIM_RDMA_CORE_DEVS and
# RSIM_SCRIPT in the environment.
#
# RSIM_MODE is a comma-separated list of parts, run in this order:
#   kunit        rdmasim_kunit.ko's suites (kunit.filter_glob= picks some)
#   conformance  rdma_conformance.ko on every device (RSIM_CONF_ARGS):
#                rdmasim0, rsim_veth2_rdmasim (RoCE mode), rxe0, siw0
#   selftest     the shell selftest, scripts/guest/selftest.sh
#   mutant       rdma_conformance.ko on rdmasim built with a rule broken
#                (from RSIM_MUTANT_MODDIR), alone
#   dmah         tools/dmah's uverbs client, for the two-CPU boot
#                (scripts/guest/smp-dmah.sh)
#   rdmacore     rdma-core's own tests on rdmasim0 and rxe0
#                (scripts/guest/rdma-core-tests.sh)
#   netns        RoCE mode's routing across network namespaces
#                (scripts/guest/selftest-netns.sh; rdma-core's programs)
#   fabric       the simulated InfiniBand fabric with opensm
#                (scripts/guest/selftest-fabric.sh)
#   peers        the outside suites on RSIM_PEER_DEV (scripts/guest/peers.sh)
#   demo, bench, script	make demo, make bench, RSIM_SCRIPT (development)
#   check        kunit,conformance,selftest: everything in one boot
# rdmasim is loaded first, unless RSIM_RDMASIM=0 (rdma-core's tests on
# rxe0 alone, whose results must not depend on this tree); the peers (rxe0
# and siw0 over a veth pair) are set up for conformance, demo, bench,
# script and rdmacore, unless RSIM_PEERS=0, and torn down at the end.
#
# Everything goes to the console, which scripts/judge-log.py judges: the
# RSIM-* lines this script and guest/selftest.sh print are the protocol
# described in Documentation/testing.rst ("The console protocol").

export PATH=/usr/sbin:/usr/bin:/sbin:/bin
RDRV=$RSIM_MODDIR/drivers/infiniband/sw/rdmasim
# shellcheck disable=SC2034 # PLAT: guest/selftest.sh's
PLAT=/sys/bus/platform/drivers/rdmasim
KMEMLEAK=/sys/kernel/debug/kmemleak

# proc, sysfs, debugfs, and a tmpfs on /run for scratch files (/tmp stays
# the host's: the repository may live there); one mount for all four
mount -a -T "$RSIM_TOP/scripts/guest/fstab-uml"

# DMA-API debug prints its first error only (show_num_errors = 1) and
# counts the rest: every one must reach the log judge
[ -w /sys/kernel/debug/dma-api/all_errors ] &&
	echo 1 >/sys/kernel/debug/dma-api/all_errors

# say, check, capture, has_line, part, finish, sysfs_is and field
# shellcheck source=lib.sh
. "$RSIM_TOP/scripts/guest/lib.sh"

# wants part: RSIM_MODE names the part
wants() {
	case ",$RSIM_MODE," in
	*",$1,"*) return 0 ;;
	*,check,*) case $1 in kunit | conformance | selftest) return 0 ;; esac ;;
	esac
	return 1
}

read -r kver </proc/sys/kernel/osrelease
say "RSIM-INIT mode=$RSIM_MODE kernel=$kver"

# the RDMA core, where the kernel builds it as modules (the debug 7.3
# kernel, as distributions do; elsewhere built in, and this loads nothing)
modprobe -d "$RSIM_MODROOT" -S "$RSIM_KVER" -a ib_core ib_cm iw_cm rdma_cm \
	ib_uverbs ib_umad rdma_ucm 2>/dev/null

# kmemleak: forget whatever the kernel leaked while booting
if [ -w $KMEMLEAK ]; then
	echo scan >$KMEMLEAK
	echo clear >$KMEMLEAK
fi

# stack_has <pid> <function>: <function> is in /proc/<pid>/stack, the
# task's trace as save_stack_trace_tsk() saves it, through the code that
# saves KASAN's, kmemleak's and lockdep's traces (on UML changed by
# kunit/patches/7.3/0002: whole traces, or none, are what a broken walk
# would give)
stack_has() {
	grep "$2" "/proc/$1/stack" || {
		cat "/proc/$1/stack"
		return 1
	}
}
if [ -r /proc/self/stack ]; then
	check "stack_trace_of_the_reader" stack_has self proc_single_show
	sleep 60 &
	check "stack_trace_of_a_sleeper" \
		wait_for "a sleeping task's trace" 30 stack_has $! nanosleep
	kill $! 2>/dev/null
	wait $! 2>/dev/null
fi

peers=0
if [ "${RSIM_PEERS:-1}" = 1 ] && { wants conformance || wants demo ||
	wants bench || wants script || wants rdmacore; }; then
	peers=1
fi

# Peers: rxe over one end of a veth pair and siw over the other, with
# IPv6 link-local addresses only (DAD off, so they are usable at once):
# rdma_cm reaches siw0 through rsim_veth1's link-local address (on lo it
# would bind to whichever device came first).
peers_up() {
	part peers
	ip link set lo up
	ip link add rsim_veth0 type veth peer name rsim_veth1
	for i in rsim_veth0 rsim_veth1; do
		echo 0 >/proc/sys/net/ipv6/conf/$i/accept_dad
		ip link set $i up
	done
	check "modprobe_rdma_rxe" modprobe -d "$RSIM_MODROOT" -S "$RSIM_KVER" rdma_rxe
	check "modprobe_siw" modprobe -d "$RSIM_MODROOT" -S "$RSIM_KVER" siw
	check "rxe0_on_veth" rdma link add rxe0 type rxe netdev rsim_veth0
	check "siw0_on_veth" rdma link add siw0 type siw netdev rsim_veth1
	# what the suites and rdma_cm use comes up behind "ip link" and "rdma
	# link": the addresses after the link watcher sees the carrier, rxe0's
	# RoCE v2 GID of its address from the core's GID work
	for i in rsim_veth0 rsim_veth1; do
		check "${i}_link_local_ready" \
			wait_for "$i's IPv6 link-local address" 60 ll_addr_ready $i
	done
	for i in rxe0 siw0; do
		check "${i}_port_active" wait_for "$i's port to be ACTIVE" 60 port_active $i
	done
	check "rxe0_roce_v2_gid" wait_for "rxe0's RoCE v2 GID" 60 roce_v2_gid rxe0
}

peers_down() {
	part teardown
	check "rxe0_del" rdma link del rxe0
	check "siw0_del" rdma link del siw0
	check "rmmod_rdma_rxe" rmmod rdma_rxe
	check "rmmod_siw" rmmod siw
}

rdmasim_up() {
	part rdmasim
	check "insmod_rdmasim" insmod "$RDRV/rdmasim.ko"
	capture /run/rdma-dev rdma dev
	check "rdma_dev_shows_rdmasim0" has_line /run/rdma-dev "*rdmasim0: node_type ca *"
	capture /run/rdma-link rdma link show rdmasim0/1
	check "rdma_link_shows_port_active" has_line /run/rdma-link \
		"*state ACTIVE physical_state LINK_UP*"
}

# The conformance boot's RoCE-mode rdmasim device, made the way blktests
# makes rxe and siw devices: rsim_veth2_rdmasim on one end of a second veth
# pair (IPv6 link-local only), its port up and its RoCE v2 GID in place
roce_up() {
	ip link add rsim_veth2 type veth peer name rsim_veth3
	for i in rsim_veth2 rsim_veth3; do
		echo 0 >/proc/sys/net/ipv6/conf/$i/accept_dad
		ip link set $i up
	done
	check "rsim_veth2_link_local_ready" \
		wait_for "rsim_veth2's IPv6 link-local address" 60 ll_addr_ready rsim_veth2
	check "rsim_veth2_rdmasim_on_veth" \
		rdma link add rsim_veth2_rdmasim type rdmasim netdev rsim_veth2
	check "rsim_veth2_rdmasim_roce_v2_gid" \
		wait_for "rsim_veth2_rdmasim's RoCE v2 GID" 60 roce_v2_gid rsim_veth2_rdmasim
}

# The conformance boot's second InfiniBand device, rdmasim1: a port of
# rdmasim0's subnet (LID 2), which the suites check with the requester of
# every connection on rdmasim0 (peer=rdmasim0), so that each remote access
# crosses the subnet. Its port counters then show it: data received, none
# sent (on a loopback connection it would have sent all it received).
subnet_up() {
	check "rdmasim1_new_device" \
		sh -c "echo 1 >/sys/bus/platform/drivers/rdmasim/new_device"
	check "rdmasim1_port_active" wait_for "rdmasim1's port to be ACTIVE" 60 \
		port_active rdmasim1
}

subnet_down() {
	local c=/sys/class/infiniband/rdmasim1/ports/1/counters w
	check "rdmasim1_sent_no_data" sysfs_is $c/port_xmit_data 0
	read -r w <$c/port_rcv_data
	check "rdmasim1_received_from_rdmasim0" test "${w:-0}" -gt 0
	check "rdmasim1_del_device" \
		sh -c "echo 1 >/sys/bus/platform/drivers/rdmasim/del_device"
}

# After the conformance suites, where the kernel has the ULPs (7.3's
# debug kernel): NFS over RDMA, then NVMe over RDMA, between
# rsim_veth2_rdmasim (the client, the host) and rsim_veth3_rdmasim on the
# pair's other end (the server, the target), both in init_net
# (guest/ulp-nfs.sh, guest/ulp-nvme.sh). make check boots this part with
# ib_core.force_mr=1: the target then registers MRs for its RDMA READs and
# WRITEs (rdma_rw), and its device's REG_MR count must move too.
ulp_nvme_pair() {
	local a3 r0
	[ -d "$RSIM_MODROOT/lib/modules/$RSIM_KVER/kernel/drivers/nvme" ] || return 0
	part ulp
	DBG=/sys/kernel/debug/rdmasim
	# shellcheck source=ulp-nvme.sh
	. "$RSIM_TOP/scripts/guest/ulp-nvme.sh"
	check "rsim_veth3_rdmasim_on_veth" \
		rdma link add rsim_veth3_rdmasim type rdmasim netdev rsim_veth3
	check "rsim_veth3_rdmasim_roce_v2_gid" \
		wait_for "rsim_veth3_rdmasim's RoCE v2 GID" 60 roce_v2_gid rsim_veth3_rdmasim
	ip -6 -o addr show dev rsim_veth3 scope link >/run/ll3
	read -r _ _ _ a3 _ </run/ll3
	a3=${a3%%/*}
	ulp_nfs_pair "$a3"
	kv "$DBG/rsim_veth3_rdmasim/datapath" op_reg_mr && r0=$val
	nvme_over_rdma pair "$a3%rsim_veth3" "$a3%rsim_veth2" rsim_veth3_rdmasim \
		rsim_veth2_rdmasim rsim_veth3_rdmasim
	case " $(cat /proc/cmdline) " in
	*" ib_core.force_mr=1 "*)
		# the target's device: gone with rdma link del, its counters
		# were read by nvme_over_rdma's last look (RSIM-ULP line); the
		# target's own registrations show in its reg_mr before that
		check "nvme_pair_target_registered_mrs" \
			test "${nvme_target_reg_mr:-0}" -gt "${r0:-0}"
		;;
	esac
	ulp_nvme_sweep "$a3"
}

# NFS over RDMA on the same pair (guest/ulp-nfs.sh): nfsd on
# rsim_veth3_rdmasim, the client mounting through rsim_veth2_rdmasim
ulp_nfs_pair() {
	local a2
	[ -d "$RSIM_MODROOT/lib/modules/$RSIM_KVER/kernel/fs/nfsd" ] || return 0
	# shellcheck source=ulp-nfs.sh
	. "$RSIM_TOP/scripts/guest/ulp-nfs.sh"
	ip -6 -o addr show dev rsim_veth2 scope link >/run/ll2
	read -r _ _ _ a2 _ </run/ll2
	nfs_over_rdma pair "$1%rsim_veth2" "${a2%%/*}" rsim_veth3_rdmasim \
		rsim_veth2_rdmasim
}

# The fault sweep through NVMe over RDMA (guest/ulp-fault-sweep.sh) on the
# same pair: the target on rsim_veth3_rdmasim again, every injection point
# of both devices at n = 1.. while the host connects, writes, reads and
# disconnects; then the target's device deleted under its port and the
# target taken down (guest/ulp-nvme.sh's order).
ulp_nvme_sweep() {
	local a3="$1"
	# shellcheck source=ulp-fault-sweep.sh
	. "$RSIM_TOP/scripts/guest/ulp-fault-sweep.sh"
	check "sweep_rsim_veth3_rdmasim_again" \
		rdma link add rsim_veth3_rdmasim type rdmasim netdev rsim_veth3
	check "sweep_roce_v2_gid" \
		wait_for "rsim_veth3_rdmasim's RoCE v2 GID" 60 roce_v2_gid rsim_veth3_rdmasim
	check "sweep_target_up" nvme_target_up "$a3%rsim_veth3"
	check "sweep_every_point" fault_sweep_nvme "$a3%rsim_veth2" \
		rsim_veth2_rdmasim rsim_veth3_rdmasim
	check "sweep_target_device_del" rdma link del rsim_veth3_rdmasim
	check "sweep_target_down" nvme_target_down
}

# The KUnit suites: KTAP between two markers.
kunit() {
	part kunit
	say "RSIM-KTAP-BEGIN"
	insmod "$RSIM_MODDIR/kunit/rdmasim_kunit.ko"
	say "RSIM-KTAP-END"
	check "rmmod_rdmasim_kunit" rmmod rdmasim_kunit
}

# The conformance suites on every RDMA device (rdmasim0, rdmasim1 reached
# from rdmasim0 when it is there, rsim_veth2_rdmasim, rxe0, siw0): KTAP
# between two markers, judged and tabulated by conformance-table.py.
# page_size 0 hangs siw (see Documentation/conformance.rst): hazards only
# on the others. RSIM_CONF_ARGS replaces the module parameters
# (commas for spaces), e.g. RSIM_CONF_ARGS=target=rdmasim0,limit_budget=0.
# conformance [MARK ARGS]: between RSIM-<MARK>-BEGIN and -END instead.
conformance() {
	local mark="${1:-CONF}" def=hazards=rdmasim0,rdmasim1,rsim_veth2_rdmasim,rxe0
	[ -d /sys/class/infiniband/rdmasim1 ] && def=$def,peer=rdmasim0
	local args="${2:-${RSIM_CONF_ARGS:-$def}}"
	local ko="${RSIM_CONF_KO:-$RSIM_MODDIR/kunit/conformance/rdma_conformance.ko}"

	say "RSIM-$mark-BEGIN"
	# shellcheck disable=SC2046 # one word per parameter
	check "insmod_rdma_conformance" insmod "$ko" \
		$(echo "$args" | sed 's/,\([a-z_]*=\)/ \1/g')
	say "RSIM-$mark-END"
	check "rmmod_rdma_conformance" rmmod rdma_conformance
}

# The mutant: rdmasim built with one rule broken (scripts/lib-boots.sh), from
# $RSIM_MUTANT_MODDIR, in place of rdmasim, checked alone by the
# conformance suites; its row must turn red (conformance-table.py
# --section MUTANT), and the log must stay clean.
mutant() {
	if [ -d /sys/module/rdmasim ]; then
		check "rmmod_rdmasim" rmmod rdmasim
	fi
	check "insmod_mutant_rdmasim" \
		insmod "$RSIM_MUTANT_MODDIR/drivers/infiniband/sw/rdmasim/rdmasim.ko"
	conformance MUTANT target=rdmasim0,limit_budget=0
	check "rmmod_mutant_rdmasim" rmmod rdmasim
}

[ $peers = 1 ] && peers_up
[ "${RSIM_RDMASIM:-1}" = 1 ] && rdmasim_up

# Figures, not tests (make bench): the PUDA pool, then the data path's
# fast-registration cycle and the MR verbs on every device in the same
# boot (three rounds: the report takes medians), then ibv_rc_pingpong's
# latency with completion events and perftest's latencies and bandwidths
# on rdmasim0 (with and without mapped queues) and rxe0.
if wants bench; then
	insmod "$RSIM_MODDIR/tools/bench/rdmasim_bench.ko"
	for round in 1 2 3; do
		say "RSIM-BENCH round $round"
		conformance CONF "${RSIM_CONF_ARGS:-suites=bench}"
	done
	if [ -n "${RSIM_RDMA_CORE_ENV:-}" ]; then
		# shellcheck source=bench-pingpong.sh
		. "$RSIM_TOP/scripts/guest/bench-pingpong.sh"
		# shellcheck source=bench-perftest.sh
		. "$RSIM_TOP/scripts/guest/bench-perftest.sh"
	fi
	finish
fi

if wants demo; then
	# shellcheck source=demo.sh
	. "$RSIM_TOP/scripts/guest/demo.sh"
	finish
fi

# development: a script of the caller's (RSIM_UML_ARGS=RSIM_SCRIPT=<path>)
if wants script; then
	# shellcheck disable=SC1090 # the caller's
	. "$RSIM_SCRIPT"
	finish
fi

wants kunit && kunit
if wants conformance; then
	part conformance
	# rdmasim in RoCE mode too, when the peers (rdma_cm's world) are up
	[ $peers = 1 ] && [ "${RSIM_RDMASIM:-1}" = 1 ] && roce_up
	[ "${RSIM_RDMASIM:-1}" = 1 ] && subnet_up
	conformance
	[ "${RSIM_RDMASIM:-1}" = 1 ] && subnet_down
	[ $peers = 1 ] && [ "${RSIM_RDMASIM:-1}" = 1 ] && ulp_nvme_pair
fi
if wants selftest; then
	part selftest
	# shellcheck source=selftest.sh
	. "$RSIM_TOP/scripts/guest/selftest.sh"
fi
if wants mutant; then
	part mutant
	mutant
fi
# the two-CPU boot: tools/dmah's client with a CPU outside its affinity
if wants dmah; then
	part dmah
	# shellcheck source=smp-dmah.sh
	. "$RSIM_TOP/scripts/guest/smp-dmah.sh"
fi
if wants rdmacore; then
	# shellcheck source=rdma-core-tests.sh
	. "$RSIM_TOP/scripts/guest/rdma-core-tests.sh"
fi
# RoCE mode's routing across network namespaces (rdma-core's programs);
# in rdma-core's boot, which has the time the selftest's has not
if wants fabric; then
	part fabric
	# shellcheck source=selftest-fabric.sh
	. "$RSIM_TOP/scripts/guest/selftest-fabric.sh"
fi
if wants netns; then
	part netns
	IB=/sys/class/infiniband
	DBG=/sys/kernel/debug/rdmasim
	# shellcheck source=cm-pair.sh
	. "$RSIM_TOP/scripts/guest/cm-pair.sh"
	# shellcheck source=selftest-netns.sh
	. "$RSIM_TOP/scripts/guest/selftest-netns.sh"
fi
# the outside suites (blktests, the kernel's rdma selftests) on one kind
# of device, RSIM_PEER_DEV (scripts/peers.sh: make peers, and make check's
# subset); booted with RSIM_PEERS=0 RSIM_RDMASIM=0: the suites load and
# unload their device's module themselves
if wants peers; then
	part peers
	# shellcheck source=peers.sh
	. "$RSIM_TOP/scripts/guest/peers.sh"
fi
# the selftest ends with rdmasim unloaded; every other run unloads it here
if [ -d /sys/module/rdmasim ]; then
	check "rmmod_rdmasim" rmmod rdmasim
fi
[ $peers = 1 ] && peers_down
finish
