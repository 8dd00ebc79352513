# shellcheck shell=sh
# shellcheck disable=SC2154 # val: set by guest/lib.sh's kv() and res_count()
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: RoCE mode (drivers/infiniband/sw/rdmasim/roce.c), sourced by
# guest/selftest.sh inside the UML test kernel with rdmasim loaded, when
# boot-uml.sh passes RSIM_RDMA_CORE_ENV (rdma-core's build, whose librdmacm
# programs run here as host binaries through hostfs, with the provider).
#
# A veth pair rsim_rv0/rsim_rv1, the far end in the network namespace
# rsim_peer, IPv6 link-local addresses only, and an rdmasim device on each
# end made the way blktests makes rxe and siw devices ("rdma link add
# <if>_rdmasim type rdmasim netdev <if>"):
#   - link add, show (netdev), the refusals (a bound netdev, a netdev that
#     is not Ethernet), link del and add again;
#   - the port: Ethernet, RoCE v2 GIDs from the core, the carrier as its
#     state (the peer's end down and up), the netdev's MTU as its MTU;
#   - rdma_cm from userspace on one device and between the two (across
#     the namespaces): rping -V (data verified), ucmatose, udaddy, with
#     every object gone afterwards; perftest's ib_write_bw -R (sid's,
#     over IPv6) on one device and across, its WRITEs counted;
#   - NVMe over RDMA on one device (guest/ulp-nvme.sh), where the kernel
#     has the ULPs, ending with "rdma link del" under the listening
#     target; the device added again;
#   - teardown under a connected rping pair: "rdma link del" of the
#     client's device, then "ip link del" of the pair (the server's
#     device goes with its netdev); both programs end, nothing is left.
# Uses check(), capture(), has_line(), lines(), say(), sysfs_is(),
# wait_for(), kv(), copy_file(), counts_unchanged(), port_active() and
# roce_v2_gid() from
# guest/lib.sh, $IB and $DBG from guest/selftest.sh, rdma_core_env(),
# ll_of(), cm_pair() and ended() from guest/cm-pair.sh.

# udaddy's port is fixed (7174); the others take this one
CM_PORT=18600
UD_PORT=7174
RV0=rsim_rv0
RV1=rsim_rv1
D0=${RV0}_rdmasim
D1=${RV1}_rdmasim
NS=rsim_peer

# in_peer cmd...: cmd in the peer's network namespace
in_peer() {
	ip netns exec $NS "$@"
}


# objects_as_before dev: <dev>'s debugfs counts as in /run/<dev>-dbg0
# (the MAD layer's own PD, CQ and QP1 stay)
objects_as_before() {
	copy_file "$DBG/$1/resources" "/run/$1-dbg1"
	counts_unchanged "/run/$1" pd mr cq qp ah srq
}

# wqes_of dev: the data path's executed WRs of <dev> in $val
wqes_of() {
	kv "$DBG/$1/datapath" wqes
}

# perftest_cpu_mhz: a "cpu MHz" line bound over /proc/cpuinfo, which
# UML's lacks: perftest turns cycles into bandwidth with the frequency it
# samples (rdtsc against gettimeofday) and refuses to report when
# /proc/cpuinfo has none ("Can't produce a report"); any value 2% off
# the sample is replaced by it
perftest_cpu_mhz() {
	{ cat /proc/cpuinfo; echo "cpu MHz		: 1.000"; } >/run/cpuinfo
	mount --bind /run/cpuinfo /proc/cpuinfo
}

# write_bw name dev server-args client-args [server-prefix]: sid's
# ib_write_bw -R (rdma_cm, --ipv6-addr) as cm_pair <name>, 200 RDMA
# WRITEs of 64 KiB, the server's command line after <server-prefix>;
# <dev>'s op_rdma_write must grow by 200. -F: a failed frequency sample
# (a loaded host) prints no figure rather than failing the run. The
# provider's mapped queues: a doorbell at least, and no more than the
# send WRs <dev> executed (the WRITEs, and the SENDs of perftest's rdma_cm
# handshakes; a post rings only while the kernel does not execute the
# queue), and no poll, post_send or post_recv command (the datapath
# counters of <dev>).
write_bw() {
	local name="$1" dev="$2" w db c x pt="$RSIM_RDMA_CORE_PERFTEST/ib_write_bw -R --ipv6-addr"
	pt="$pt -F -p $CM_PORT -s 65536 -n 200"
	kv "$DBG/$dev/datapath" op_rdma_write && w=$val
	kv "$DBG/$dev/datapath" send_doorbells && db=$val
	wqes_of "$dev" && x=$val
	wbw_commands "$dev" && c=$val
	cm_pair "$name" $CM_PORT "${5:-} $pt $3" "$pt $4" || return 1
	has_line "/run/$name-cli" " 65536 *200 *" || return 1
	kv "$DBG/$dev/datapath" op_rdma_write
	[ "$val" -ge $((w + 200)) ] || {
		echo "$dev: op_rdma_write $w -> $val (200 expected)"
		return 1
	}
	wqes_of "$dev" && x=$((val - x))
	kv "$DBG/$dev/datapath" send_doorbells
	if [ "$val" -le "$db" ] || [ "$val" -gt $((db + x)) ]; then
		echo "$dev: send_doorbells $db -> $val (1 to $x more expected)"
		return 1
	fi
	wbw_commands "$dev"
	[ "$val" = "$c" ] || {
		echo "$dev: poll and post commands $c -> $val (none expected)"
		return 1
	}
}

# wbw_commands dev: <dev>'s poll, post_send and post_recv commands of
# processes, together, in $val
wbw_commands() {
	local n=0 k
	for k in user_polls user_send_posts user_recv_posts; do
		kv "$DBG/$1/datapath" $k || return 1
		n=$((n + val))
	done
	val=$n
}

# no_roce_devices: no RoCE-mode rdmasim device and no platform device of
# one ("rdmasim.<n>.auto") is left
no_roce_devices() {
	local d
	for d in /sys/bus/platform/devices/rdmasim.*.auto "$IB"/*_rdmasim; do
		[ -e "$d" ] && { echo "$d is still there"; return 1; }
	done
	return 0
}

if rdma_core_env; then

	ip link set lo up
	roce_veth_up() {
		ip netns add $NS &&
			ip link add $RV0 type veth peer name $RV1 netns $NS &&
			echo 0 >/proc/sys/net/ipv6/conf/$RV0/accept_dad &&
			in_peer sh -c "echo 0 >/proc/sys/net/ipv6/conf/$RV1/accept_dad" &&
			in_peer ip link set lo up &&
			in_peer ip link set $RV1 up &&
			ip link set $RV0 up
	}
	check "roce_veth_pair_across_netns" roce_veth_up
	check "roce_link_add" rdma link add $D0 type rdmasim netdev $RV0
	check "roce_link_add_peer" in_peer rdma link add $D1 type rdmasim netdev $RV1
	# one rdmasim device per netdev, as rxe; lo is not Ethernet
	capture /run/roce-dup rdma link add ${D0}_2 type rdmasim netdev $RV0
	check "roce_link_add_bound_refused" has_line /run/roce-dup "*File exists*"
	capture /run/roce-lo rdma link add rsim_lo_rdmasim type rdmasim netdev lo
	check "roce_link_add_lo_refused" has_line /run/roce-lo "*Invalid argument*"
	capture /run/roce-link rdma link show $D0/1
	check "roce_link_show_netdev" has_line /run/roce-link "*netdev $RV0*"
	check "roce_link_layer_ethernet" sysfs_is "$IB/$D0/ports/1/link_layer" Ethernet
	check "roce_port_active" wait_for "$D0's port to be ACTIVE" 60 port_active $D0
	check "roce_v2_gid" wait_for "$D0's RoCE v2 GID" 60 roce_v2_gid $D0
	check "roce_v2_gid_peer" wait_for "$D1's RoCE v2 GID" 60 roce_v2_gid $D1
	copy_file "$DBG/$D0/resources" "/run/$D0-dbg0"
	copy_file "$DBG/$D1/resources" "/run/$D1-dbg0"
	# no SM, no LID on an Ethernet port; the netdev's MTU (1500: 1024)
	capture /run/roce-devinfo "$CMB/ibv_devinfo" -d $D0
	check "roce_ibv_devinfo" lines /run/roce-devinfo "*link_layer:*Ethernet*" \
		"*port_lid:*0*" "*active_mtu:*1024 (3)*"
	# the carrier: the far end down, then up again
	check "roce_carrier_down" in_peer ip link set $RV1 down
	check "roce_port_down_with_carrier" \
		wait_for "$D0's port to be DOWN" 30 sysfs_is "$IB/$D0/ports/1/state" "1: DOWN"
	check "roce_carrier_up" in_peer ip link set $RV1 up
	check "roce_port_active_with_carrier" wait_for "$D0's port to be ACTIVE" 30 \
		port_active $D0
	check "roce_mtu_follows_netdev" ip link set $RV0 mtu 9000
	capture /run/roce-devinfo-mtu "$CMB/ibv_devinfo" -d $D0
	check "roce_active_mtu_4096" has_line /run/roce-devinfo-mtu "*active_mtu:*4096 (5)*"
	ip link set $RV0 mtu 1500

	# the two ends' addresses, scoped to the interface a program uses
	ll_of $RV0 && A0="$val%$RV0"
	ll_of $RV1 $NS && A1="$val%$RV1" && A1C="$val%$RV0"
	say "RSIM-ROCE addresses $A0 $A1"
	PEER="ip netns exec $NS"
	# rdma_cm on one device: server and client both on $D0 (the address
	# is $RV0's, so both bind there); the data checked by rping -V
	check "roce_rping_one_device" cm_pair rping $CM_PORT \
		"$CMB/rping -s -a $A0 -p $CM_PORT -C 5 -V -v" \
		"$CMB/rping -c -a $A0 -p $CM_PORT -C 5 -V"
	check "roce_rping_data" has_line /run/rping-srv "*server ping data: rdma-ping-4:*"
	check "roce_ucmatose_one_device" cm_pair ucmatose $CM_PORT \
		"$CMB/ucmatose -b $A0 -p $CM_PORT" "$CMB/ucmatose -s $A0 -p $CM_PORT"
	check "roce_udaddy_one_device" cm_pair udaddy $UD_PORT \
		"$CMB/udaddy -b $A0" "$CMB/udaddy -s $A0"
	# across the pair: the client on $D0, the server on $D1 in the peer
	# namespace; the data path routes by the destination GID
	wqes_of $D1 && w1=$val
	check "roce_rping_across_netns" cm_pair rping-x $CM_PORT \
		"$PEER $CMB/rping -s -a $A1 -p $CM_PORT -C 5 -V -v" \
		"$CMB/rping -c -a $A1C -p $CM_PORT -C 5 -V"
	check "roce_rping_across_data" has_line /run/rping-x-srv \
		"*server ping data: rdma-ping-4:*"
	peer_worked() {
		wqes_of $D1 && [ "$val" -gt "$w1" ]
	}
	check "roce_peer_device_sent" peer_worked
	check "roce_udaddy_across_netns" cm_pair udaddy-x $UD_PORT \
		"$PEER $CMB/udaddy -b $A1" "$CMB/udaddy -s $A1C"
	# perftest's ib_write_bw over rdma_cm (-R), on one device and
	# across the pair: each run's RDMA WRITEs must show in the writer's
	# counter
	if [ -x "${RSIM_RDMA_CORE_PERFTEST:-}/ib_write_bw" ]; then
		perftest_cpu_mhz
		check "roce_ib_write_bw_one_device" write_bw wbw $D0 \
			"-d $D0" "-d $D0 $A0"
		check "roce_ib_write_bw_across_netns" write_bw wbw-x $D0 \
			"-d $D1" "-d $D0 $A1C" "$PEER"
		umount /proc/cpuinfo
	fi
	check "roce_objects_as_before" objects_as_before $D0
	check "roce_objects_as_before_peer" objects_as_before $D1

	# NVMe over RDMA on $D0 (target and host both there: nvmet-rdma and
	# nvme-rdma resolve addresses in init_net only), where the kernel has
	# the ULPs (7.3's debug kernel); its teardown ends with "rdma link
	# del" of $D0 under the listening port (guest/ulp-nvme.sh)
	if [ -d "$RSIM_MODROOT/lib/modules/$RSIM_KVER/kernel/drivers/nvme" ]; then
		# shellcheck source=ulp-nvme.sh
		. "$RSIM_TOP/scripts/guest/ulp-nvme.sh"
		nvme_over_rdma selftest "$A0" "$A0" $D0 $D0
	else
		# "rdma link del" and "rdma link add" again, as blktests does
		check "roce_link_del" rdma link del $D0
	fi
	check "roce_link_gone" test ! -e "$IB/$D0"
	check "roce_link_add_again" rdma link add $D0 type rdmasim netdev $RV0
	check "roce_v2_gid_again" wait_for "$D0's RoCE v2 GID" 60 roce_v2_gid $D0

	# teardown while connected: a long rping pair across the namespaces,
	# then the client's device deleted, then the pair's netdevs
	in_peer timeout 120 "$CMB/rping" -s -a "$A1" -p $CM_PORT -C 100000 \
		>/run/rping-t-srv 2>&1 &
	tsrv=$!
	check "roce_teardown_server_listens" wait_for "rping's server" 60 \
		cm_listening $CM_PORT
	timeout 120 "$CMB/rping" -c -a "$A1C" -p $CM_PORT -C 100000 \
		>/run/rping-t-cli 2>&1 &
	tcli=$!
	# traffic on the connection before the device goes
	wqes_of $D0 && w0=$val
	client_sends() {
		wqes_of $D0 && [ "$val" -gt $((w0 + 20)) ]
	}
	check "roce_teardown_connected" wait_for "the rping pair's traffic" 60 client_sends
	check "roce_link_del_while_connected" rdma link del $D0
	# ended_or_dump pid what [out]: <pid> ends within 30 s. rping's own
	# race is told apart: when its main thread, failing on the removed
	# device, destroys its cm_id (rdma_destroy_id() drops the events not
	# yet read) between its CM thread's poll() seeing the DEVICE_REMOVAL
	# event and its read of it, the read waits in ucma for ever and the
	# main thread's pthread_join() with it (rdma-core's
	# librdmacm/examples/rping.c, cm_thread()). A program whose output
	# <out> says it failed and whose thread waits in ucma's read is that
	# race: said, and ended. Otherwise the stacks and the rdma_cm IDs left
	# go to the report.
	ended_or_dump() {
		local l
		wait_for "$2 to end" 30 ended "$1" && return 0
		stacks_of "$1"
		if [ -n "${3:-}" ] && has_line "$3" "*rping * failed*" &&
			grep -q "ucma_get_event\|ucma_write" /run/stacks; then
			say "RSIM-ROCE $2: rping's CM thread race (its read waits in ucma): ended"
			while IFS= read -r l; do say "RSIM-ROCE $2: $l"; done </run/stacks
			kill "$1"
			return 0
		fi
		cat /run/stacks
		rdma res show cm_id
		return 1
	}
	check "roce_client_ends_on_link_del" ended_or_dump $tcli "rping's client" \
		/run/rping-t-cli
	check "roce_ip_link_del_while_connected" ip link del $RV0
	check "roce_server_ends_on_ip_link_del" ended_or_dump $tsrv "rping's server"
	wait $tcli $tsrv
	for f in rping-t-srv rping-t-cli; do
		while IFS= read -r l; do say "RSIM-ROCE $f: $l"; done </run/$f
	done
	check "roce_devices_gone" wait_for "the RoCE devices to go" 30 no_roce_devices
	check "roce_netns_del" ip netns del $NS
fi
