# shellcheck shell=sh
# shellcheck disable=SC2154 # val: set by guest/lib.sh's kv() and the helpers
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: the simulated InfiniBand fabric (fabric.c, switch.c) with
# Debian's opensm as its subnet manager, in a boot of its own (make
# fabric; make check's fabric boot). Four CAs (rdmasim0 to rdmasim3) and
# three switches in a ring (guest/fabric-ring.net), built by
# scripts/fabric-load.py:
#   - the control files' errnos: links with the built-in SM on, unknown
#     nodes and ports, a port to itself, a busy port, a port with no link,
#     the built-in SM back on while CAs are in the fabric;
#   - opensm on rdmasim0 (umad, issm) sweeps it: every port Active with a
#     LID it gave, the switches' LFTs; ibnetdiscover's view compared with
#     the file, iblinkinfo, ibtracert across two switches, saquery,
#     smpquery by LID and by directed route through two switches,
#     perfquery of a switch port; ibsim's own tests, unmodified:
#     subnet_discover (its map compared too), query_many's burst of 2000,
#     mcast_storm's joins and leaves;
#   - IPoIB across the switches, each interface in a namespace of its
#     own: ping, 4 MiB over TCP compared, rping -V (rdma_cm, the IB CM);
#   - partitions from opensm's partitions.conf: ib<N>.8001 children ping
#     inside partition 0x0001 and not to a port outside it;
#   - a cable pulled under a TCP transfer: the switches' traps (128) make
#     opensm sweep again, the transfer ends whole over the ring's other
#     way, whose switch counted it; the cable back, every port Active;
#   - a hostile umad client's 3000 malformed SMPs (bad hop counts,
#     pointers, paths, methods, attributes): drops counted, no kernel
#     report, and after a cable pulled and back the fabric sweeps whole;
#   - SM handover to a second opensm of higher priority on rdmasim3:
#     every port's SM LID follows, IPoIB still pings (client
#     reregistration, its groups joined again);
#   - NVMe over RDMA across two switches, the pattern read back;
#   - the fabric reset: every CA back on the flat subnet, the built-in SM
#     and SA serving again.
# Uses check(), capture(), has_line(), lines(), wait_for(), sysfs_is(),
# ll_of(), ll_addr_ready(), bcast_members() and write_errno() from
# guest/lib.sh, and cm-pair.sh.

F=/sys/kernel/debug/rdmasim/fabric
DBG=/sys/kernel/debug/rdmasim
IB=/sys/class/infiniband
PLAT=/sys/bus/platform/drivers/rdmasim
NETF=$RSIM_TOP/scripts/guest/fabric-ring.net
LOAD=$RSIM_TOP/scripts/fabric-load.py
MP="modprobe -d $RSIM_MODROOT -S $RSIM_KVER"
FAB_TCP=18710
FAB_CM=18711

ctl() {
	echo "$2" >"$PLAT/$1"
}
fab() {
	echo "$2" >"$F/$1"
}
refused() {
	! "$@"
}
# fab_errno file text message: the write to fabric/<file> fails with it
fab_errno() {
	write_errno "$F/$1" "$2" "$3"
}
# lid_of dev: the port's LID in $val (decimal)
lid_of() {
	local l
	read -r l <"$IB/$1/ports/1/lid" || return 1
	val=$((l))
}
sm_lid_of() {
	local l
	read -r l <"$IB/$1/ports/1/sm_lid" || return 1
	val=$((l))
}
# sw_lid name: a switch's LID from the fabric's stats, in $val
sw_lid() {
	local l
	val=
	while IFS= read -r l; do
		# shellcheck disable=SC2086 # words on purpose
		set -- $l
		if [ "$1" = switch ] && [ "$2" = "$SWNAME" ]; then
			val=$4
			return 0
		fi
	done <"$F/stats"
	return 1
}
swlid() {
	SWNAME=$1 sw_lid
}
# every CA port Active, every switch with a LID, every linked switch port
# Active
fab_active() {
	local d l
	for d in 0 1 2 3; do
		sysfs_is "$IB/rdmasim$d/ports/1/state" "4: ACTIVE" || return 1
	done
	while IFS= read -r l; do
		case $l in
		"switch "*" lid 0 "*) echo "$l"; return 1 ;;
		" port "*" state "[123]" phys 5 "*) echo "$l"; return 1 ;;
		esac
	done <"$F/stats"
}
# osm_start name guid priority: opensm on the port with <guid>, its files
# in /run/osm-<name> (cache, log: nothing of the host's is written)
osm_start() {
	local d="/run/osm-$1"
	mkdir -p "$d"
	cat >"$d/partitions.conf" <<-EOF
	Default=0x7fff, ipoib : ALL=full;
	part1=0x0001, ipoib : 0x02ca510000000001=full, 0x02ca510000000201=full;
	EOF
	OSM_CACHE_DIR=$d OSM_TMP_DIR=$d opensm -g "$2" -p "$3" -f "$d/log" \
		-P "$d/partitions.conf" >"$d/out" 2>&1 &
	eval "OSM_PID_$1=\$!"
}
osm_stop() {
	local pid
	eval "pid=\${OSM_PID_$1:-}"
	[ -n "$pid" ] || return 0
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	eval "OSM_PID_$1="
}

# ---- the control files ----
check "fabric_new_devices" sh -c "for i in 1 2 3; do echo \$i >$PLAT/new_device || exit 1; done"
check "fabric_sm_on_by_default" has_line "$F/sm" "1"
check "fabric_switch_add" fab switch_add "swx 4"
check "fabric_link_refused_with_sm_on" fab_errno link_add "rdmasim0 1 swx 1" \
	"busy"
check "fabric_sm_off" fab sm 0
check "fabric_sm_off_reads_0" has_line "$F/sm" "0"
check "fabric_switch_dup_refused" fab_errno switch_add "swx 4" "exists"
check "fabric_switch_no_ports_refused" fab_errno switch_add "swy 0" "Invalid"
check "fabric_switch_37_ports_refused" fab_errno switch_add "swy 37" "Invalid"
check "fabric_link_unknown_node" fab_errno link_add "nosuch 1 swx 1" \
	"No such device"
check "fabric_link_port_0_refused" fab_errno link_add "rdmasim0 1 swx 0" \
	"Invalid"
check "fabric_link_port_5_refused" fab_errno link_add "rdmasim0 1 swx 5" \
	"Invalid"
check "fabric_link_ca_port_2_refused" fab_errno link_add "rdmasim0 2 swx 1" \
	"Invalid"
check "fabric_link_to_itself_refused" fab_errno link_add "swx 1 swx 1" \
	"Invalid"
check "fabric_link_swx" fab link_add "swx 1 swx 2"
check "fabric_link_busy_port" fab_errno link_add "swx 1 swx 3" "busy"
check "fabric_link_del" fab link_del "swx 2"
check "fabric_link_del_no_link" fab_errno link_del "swx 1" \
	"not connected"
check "fabric_switch_del" fab switch_del "swx"
check "fabric_switch_del_unknown" fab_errno switch_del "swx" "No such device"

# ---- the ring, and opensm's sweep ----
check "fabric_load" python3 "$LOAD" "$NETF"
check "fabric_topology_as_loaded" python3 "$LOAD" --compare "$NETF" "$F/topology"
check "fabric_ca_init" sysfs_is "$IB/rdmasim0/ports/1/state" "2: INIT"
check "fabric_sm_on_refused_with_members" fab_errno sm 1 "busy"
# the built-in SM is off: no port has IsSM until opensm opens issm
check "fabric_no_is_sm_before_opensm" sysfs_is \
	"$IB/rdmasim1/ports/1/cap_mask" "0x02014800"
osm_start a 0x02ca510000000001 1
check "fabric_opensm_sweeps" wait_for "every port Active" 120 fab_active
fab_lids() {
	local d l0 seen=" " s
	lid_of rdmasim0 && l0=$val
	for d in rdmasim0 rdmasim1 rdmasim2 rdmasim3; do
		lid_of $d || return 1
		[ "$val" -gt 0 ] || { echo "$d has no LID"; return 1; }
		case $seen in *" $val "*) echo "LID $val twice"; return 1 ;; esac
		seen="$seen$val "
		sm_lid_of $d || return 1
		[ "$val" = "$l0" ] || { echo "$d: SM LID $val, not $l0"; return 1; }
	done
	for s in sw1 sw2 sw3; do
		swlid $s || return 1
		case $seen in *" $val "*) echo "LID $val twice"; return 1 ;; esac
		seen="$seen$val "
	done
	echo "LIDs:$seen"
}
check "fabric_lids_from_opensm" fab_lids
# opensm's own record of the LIDs it gave (its guid2lid cache): every
# port of the fabric, with the LID the port has
fab_guid2lid() {
	local g
	lid_of rdmasim3 || return 1
	g=$(printf '0x02ca510000000301 0x%04x' "$val")
	has_line /run/osm-a/guid2lid "$g *" || return 1
	swlid sw2 || return 1
	g=$(printf '0x02ca530000000200 0x%04x' "$val")
	has_line /run/osm-a/guid2lid "$g *"
}
check "fabric_guid2lid" wait_for "opensm's guid2lid" 30 fab_guid2lid
lid_of rdmasim1 && L1=$val
lid_of rdmasim3 && L3=$val
swlid sw1 && S1=$val
swlid sw2 && S2=$val
capture /run/fab-ibnd ibnetdiscover -C rdmasim1 -P 1
check "fabric_ibnetdiscover_matches" python3 "$LOAD" --compare "$NETF" /run/fab-ibnd
capture /run/fab-ibl iblinkinfo -C rdmasim2 -P 1
check "fabric_iblinkinfo" lines /run/fab-ibl "Switch: 0x02ca53*sw1:" \
	"Switch: 0x02ca53*sw2:" "Switch: 0x02ca53*sw3:" \
	"*8\[  \] ==( 4X *Active/  LinkUp)==>*8\[  \] \"sw3\"*"
capture /run/fab-trace ibtracert -C rdmasim1 -P 1 "${L1:-0}" "${L3:-0}"
check "fabric_ibtracert" lines /run/fab-trace "From ca *\"rdmasim1\"" \
	"*switch *\"sw1\"" "*switch *\"sw3\"" "To ca *\"rdmasim3\""
capture /run/fab-sa saquery -C rdmasim3 -P 1
fab_node_records() {
	local l k=0
	while IFS= read -r l; do
		case $l in "NodeRecord dump:") k=$((k + 1)) ;; esac
	done </run/fab-sa
	[ $k = 7 ] || { echo "$k NodeRecords, 7 expected"; return 1; }
}
check "fabric_saquery_node_records" fab_node_records
capture /run/fab-smp smpquery -C rdmasim3 -P 1 nodeinfo "${S2:-0}"
check "fabric_smpquery_switch_by_lid" lines /run/fab-smp \
	"NodeType:*Switch" "NumPorts:*8" "DevId:*0x5357"
capture /run/fab-smpd smpquery -C rdmasim0 -P 1 -D nodedesc 0,1,7,1
check "fabric_smpquery_dr_two_switches" has_line /run/fab-smpd \
	"Node Description:*rdmasim2"
capture /run/fab-swpi smpquery -C rdmasim1 -P 1 portinfo "${S1:-0}" 7
check "fabric_smpquery_switch_port" lines /run/fab-swpi "LinkState:*Active" \
	"LocalPort:*"
capture /run/fab-pq perfquery -C rdmasim1 -P 1 "${S1:-0}" 7
check "fabric_perfquery_switch_port" lines /run/fab-pq "# Port counters:*" \
	"PortXmitPkts:*"
capture /run/fab-pqx perfquery -x -C rdmasim1 -P 1 "${S1:-0}" 255
check "fabric_perfquery_switch_all_ports" has_line /run/fab-pqx "PortXmitData:*"

# ibsim's own tests (unmodified, tools/ibsim): subnet_discover's
# directed-route sweep, 8 SMPs in flight, every answer with status 0, its
# map compared with the file; query_many's burst of 2000 NodeInfo Gets
# through three switches, sent before any answer is read;
IBSIMT=$RSIM_MODDIR/tools/ibsim
check "fabric_ibsim_subnet_discover" sh -c \
	"$IBSIMT/subnet_discover -C rdmasim1 -P 1 >/run/fab-sd 2>&1"
check "fabric_ibsim_subnet_discover_map" python3 "$LOAD" --compare "$NETF" /run/fab-sd
check "fabric_ibsim_query_many" sh -c \
	"$IBSIMT/query_many -C rdmasim1 -P 1 -n 2000 -d 0,1,7,8 >/run/fab-qm 2>&1"
# and mcast_storm's joins and leaves at the SA, from the first port (as
# ibsim's CI runs it: it takes no port option)
check "fabric_ibsim_mcast_storm" sh -c \
	"$IBSIMT/mcast_storm joins leave >/run/fab-ms 2>&1"

# ---- IPoIB across the switches ----
in_ns() {
	local ns="$1"
	shift
	ip netns exec "$ns" "$@"
}
# fab_tcp from-ns to-ns dest: 4 MiB over TCP, the data compared
fab_tcp() {
	local srv rc=0
	rm -f /run/fab-recv /run/fab-ready
	in_ns "$2" "$RSIM_TOP/scripts/guest/tcp-copy.py" recv $FAB_TCP \
		/run/fab-recv /run/fab-ready &
	srv=$!
	wait_for "the TCP receiver" 30 test -e /run/fab-ready || rc=1
	[ $rc = 0 ] && { in_ns "$1" timeout 180 "$RSIM_TOP/scripts/guest/tcp-copy.py" \
		send "$3" $FAB_TCP /run/fab-data || rc=1; }
	[ $rc = 0 ] || kill $srv 2>/dev/null
	wait $srv || rc=1
	[ $rc = 0 ] || return 1
	cmp /run/fab-data /run/fab-recv
}
if $MP -n ib_ipoib 2>/dev/null && command -v ping >/dev/null; then
	# shellcheck disable=SC2086 # $MP: words
	check "fabric_ipoib_modprobe" $MP ib_ipoib
	FIB0='' FIB2='' FIB3=''
	for d in 0 2 3; do
		ipoib_if rdmasim$d && eval "FIB$d=\$val"
		check "fabric_ipoib_netns_$d" ip netns add fab$d
		eval "ifn=\$FIB$d"
		# the partition's child, made where its parent is (init_net)
		# and moved with it
		check "fabric_pkey_child_$d" sh -c "echo 0x8001 >/sys/class/net/$ifn/create_child"
		check "fabric_ipoib_move_$d" ip link set "$ifn" netns fab$d
		check "fabric_pkey_child_move_$d" ip link set "$ifn.8001" netns fab$d
		in_ns fab$d sh -c "echo 0 >/proc/sys/net/ipv6/conf/$ifn/accept_dad"
		check "fabric_ipoib_up_$d" in_ns fab$d ip link set "$ifn" up
		check "fabric_ipoib_carrier_$d" wait_for "$ifn's carrier" 60 \
			ipoib_carrier fab$d "$ifn"
		check "fabric_ipoib_ll_$d" wait_for "$ifn's address" 60 \
			in_ns fab$d sh -c "ip -6 addr show dev $ifn scope link | grep -q inet6"
	done
	ll_of "$FIB2" fab2 && FLL2=$val
	check "fabric_ipoib_ping6" in_ns fab0 ping -6 -c 3 -W 5 "${FLL2:-}%$FIB0"
	head -c 4194304 /dev/urandom >/run/fab-data
	check "fabric_ipoib_tcp_4m" fab_tcp fab0 fab2 "${FLL2:-}%$FIB0"
	if [ -f "$RSIM_TOP/scripts/guest/cm-pair.sh" ] && [ -n "${RSIM_RDMA_CORE_ENV:-}" ]; then
		# shellcheck source=cm-pair.sh
		. "$RSIM_TOP/scripts/guest/cm-pair.sh"
		fab_rping() {
			(
				rdma_core_env || exit 1
				cm_pair fab-rping $FAB_CM \
					"ip netns exec fab2 $CMB/rping -s -a ${FLL2}%$FIB2 -p $FAB_CM -C 5 -V -v" \
					"ip netns exec fab0 $CMB/rping -c -a ${FLL2}%$FIB0 -p $FAB_CM -C 5 -V"
			) || return 1
			has_line /run/fab-rping-srv "*server ping data: rdma-ping-4:*"
		}
		check "fabric_rping_across" fab_rping
	fi

	# partitions: 0x0001 has rdmasim0 and rdmasim2, not rdmasim3
	check "fabric_pkey_table" sysfs_is "$IB/rdmasim0/ports/1/pkeys/1" "0x8001"
	check "fabric_pkey_not_member" sysfs_is "$IB/rdmasim3/ports/1/pkeys/1" "0x0000"
	for d in 0 2 3; do
		eval "ifn=\$FIB$d"
		in_ns fab$d sh -c "echo 0 >/proc/sys/net/ipv6/conf/$ifn.8001/accept_dad"
		check "fabric_pkey_child_up_$d" in_ns fab$d ip link set "$ifn.8001" up
	done
	check "fabric_pkey_child_carrier" wait_for "$FIB0.8001's carrier" 60 \
		ipoib_carrier fab0 "$FIB0.8001"
	check "fabric_pkey_child_carrier_peer" wait_for "$FIB2.8001's carrier" 60 \
		ipoib_carrier fab2 "$FIB2.8001"
	check "fabric_pkey_child_ll" wait_for "$FIB2.8001's address" 60 \
		in_ns fab2 sh -c "ip -6 addr show dev $FIB2.8001 scope link | grep -q inet6"
	ll_of "$FIB2.8001" fab2 && FPL2=$val
	check "fabric_pkey_ping_inside" in_ns fab0 ping -6 -c 3 -W 5 "${FPL2:-}%$FIB0.8001"
	# rdmasim3 is outside: its child never joins the partition's group
	check "fabric_pkey_outsider_no_carrier" refused ipoib_carrier fab3 "$FIB3.8001"
	ll_of "$FIB3" fab3 && FLL3=$val
	check "fabric_pkey_ping_outside_fails" refused \
		in_ns fab0 ping -6 -c 2 -W 2 "${FLL3:-}%$FIB0.8001"
	check "fabric_default_partition_reaches_it" \
		in_ns fab0 ping -6 -c 2 -W 5 "${FLL3:-}%$FIB0"

	# a cable pulled under traffic: sw1-sw2 (rdmasim0's way to rdmasim2)
	fab_port_xmit() {
		local l sw=
		val=
		while IFS= read -r l; do
			# shellcheck disable=SC2086
			set -- $l
			case $1 in
			switch) sw=$2 ;;
			port) [ "$sw" = "$FSW" ] && [ "$2" = "$FPORT" ] && val=$8 ;;
			esac
		done <"$F/stats"
		[ -n "$val" ]
	}
	FSW=sw3 FPORT=7 fab_port_xmit && sw3_x0=$val
	# the switches' traps that reached the SM, and the TrapRepresses
	# that ended them (stats fields 20 and 22)
	fab_traps() {
		local l t=0 r=0
		while IFS= read -r l; do
			# shellcheck disable=SC2086
			set -- $l
			[ "$1" = switch ] || continue
			t=$((t + ${20}))
			r=$((r + ${22}))
		done <"$F/stats"
		val=$t
		represses=$r
	}
	fab_traps && traps0=$val && represses0=$represses
	# 16 MiB, the cable pulled once 1 MiB has arrived
	head -c 16777216 /dev/urandom >/run/fab-data
	fab_recv_1m() {
		local n
		n=$(stat -c %s /run/fab-recv 2>/dev/null) || return 1
		[ "$n" -ge 1048576 ]
	}
	fab_pull() {
		wait_for "1 MiB across" 60 fab_recv_1m
		fab link_del "sw1 7"
	}
	fab_pull &
	pull=$!
	check "fabric_cable_pull_tcp_whole" fab_tcp fab0 fab2 "${FLL2:-}%$FIB0"
	wait $pull
	check "fabric_cable_pull_ca_stays_active" sysfs_is "$IB/rdmasim0/ports/1/state" "4: ACTIVE"
	# sw1's trap reaches the SM at once; sw2's way to it was the cable,
	# so its trap arrives when repeated, once opensm routed around it;
	# opensm represses both
	fab_traps_sent() {
		fab_traps && [ "$val" -ge $((traps0 + 2)) ] &&
			[ "$represses" -ge $((represses0 + 2)) ] && return 0
		echo "traps: $traps0 before, $val after; represses $represses0, $represses"
		cat "$F/stats"
		return 1
	}
	check "fabric_cable_pull_traps" wait_for "both switches' traps" 30 \
		fab_traps_sent
	check "fabric_cable_pull_ping" in_ns fab0 ping -6 -c 2 -W 5 "${FLL2:-}%$FIB0"
	fab_rerouted() {
		FSW=sw3 FPORT=7 fab_port_xmit && [ "$val" -gt "$sw3_x0" ]
	}
	check "fabric_cable_pull_other_way" fab_rerouted
	check "fabric_cable_back" fab link_add "sw1 7 sw2 7"
	check "fabric_cable_back_active" wait_for "every port Active" 60 fab_active

	# a hostile umad client on rdmasim1: malformed SMPs, directed-route
	# ones with bad hop counts, pointers and paths and LID-routed ones to
	# sw2; the drops counted, no kernel report; then a cable pulled and
	# back (a heavy sweep): every port Active, IPoIB through
	UMAD=$RSIM_MODDIR/tools/umad/rsim_umad
	fab_drops() {
		local l t=0
		while IFS= read -r l; do
			# shellcheck disable=SC2086
			set -- $l
			[ "$1" = switch ] && t=$((t + ${16}))
		done <"$F/stats"
		val=$t
	}
	fab_drops && drops0=$val
	fab_flood() {
		local l
		"$UMAD" -C rdmasim1 -P 1 smpflood 7 3000 "$S2" >/run/fab-flood 2>&1 ||
			{ cat /run/fab-flood; return 1; }
		while IFS= read -r l; do say "RSIM-FABRIC-FLOOD $l"; done </run/fab-flood
		has_line /run/fab-flood "Sent *"
	}
	check "fabric_smp_flood" fab_flood
	fab_flood_dropped() {
		fab_drops && [ "$val" -gt "$drops0" ]
	}
	check "fabric_smp_flood_drops_counted" fab_flood_dropped
	check "fabric_flood_pull" fab link_del "sw2 8"
	check "fabric_flood_back" fab link_add "sw2 8 sw3 7"
	check "fabric_flood_sweeps" wait_for "every port Active" 60 fab_active

	# infiniband-diags' ibportstate on a switch port, by LID: disabled,
	# the far end (sw3) goes Down and traps; enabled, the link trains and
	# opensm brings it back to Active
	capture /run/fab-ps ibportstate -C rdmasim1 -P 1 "${S2:-0}" 8 disable
	fab_sw3_p7_down() {
		has_line "$F/stats" " port 7 state 1 phys 2 *" || return 1
		smpquery -C rdmasim1 -P 1 portinfo "${S2:-0}" 8 >/run/fab-ps2 2>&1 &&
			has_line /run/fab-ps2 "PhysLinkState:*Disabled"
	}
	check "fabric_ibportstate_disable" fab_sw3_p7_down
	capture /run/fab-ps3 ibportstate -C rdmasim1 -P 1 "${S2:-0}" 8 enable
	check "fabric_ibportstate_enable_sweeps" wait_for "every port Active" 60 fab_active
	check "fabric_flood_ipoib_ping" wait_for "IPoIB after the flood" 60 \
		in_ns fab0 ping -6 -c 1 -W 2 "${FLL2:-}%$FIB0"

	# SM handover: a second opensm on rdmasim3, priority 15
	osm_start b 0x02ca510000000301 15
	fab_sm_is_l3() {
		local d
		for d in rdmasim0 rdmasim1 rdmasim2 rdmasim3; do
			sm_lid_of $d || return 1
			[ "$val" = "$L3" ] || { echo "$d SM LID $val"; return 1; }
		done
	}
	check "fabric_handover" wait_for "the SM LID to be rdmasim3's" 120 fab_sm_is_l3
	check "fabric_handover_ipoib_ping" wait_for "IPoIB after the handover" 60 \
		in_ns fab0 ping -6 -c 1 -W 2 "${FLL2:-}%$FIB0"
	capture /run/fab-sa2 saquery -C rdmasim1 -P 1 -s
	check "fabric_handover_sa_answers" has_line /run/fab-sa2 "*PortInfoRecord dump:*"
	# the new master's first sweep set ClientReregister on every port:
	# IPoIB (rdmasim0, 2 and 3) joined the broadcast group again at its
	# SA, which knew none of the old master's groups
	# (opensm shows a port its own memberships only)
	fab_rejoined() {
		local d
		for d in 0 2 3; do
			bcast_members rdmasim$d /run/fab-mcmr || return 1
			[ "$val" -ge 1 ] || { echo "rdmasim$d: not a member"; return 1; }
		done
	}
	check "fabric_handover_ipoib_rejoined" wait_for "IPoIB's joins at the new SA" \
		60 fab_rejoined

	for d in 0 2 3; do
		check "fabric_ipoib_netns_del_$d" ip netns del fab$d
	done
	check "fabric_ipoib_rmmod" rmmod ib_ipoib
fi

# ---- NVMe over RDMA across two switches ----
if [ -d "$RSIM_MODROOT/lib/modules/$RSIM_KVER/kernel/drivers/nvme" ] &&
	$MP -n ib_ipoib 2>/dev/null; then
	# shellcheck source=ulp-nvme.sh
	. "$RSIM_TOP/scripts/guest/ulp-nvme.sh"
	# shellcheck disable=SC2086 # $MP: words
	check "fabric_nvme_ipoib" $MP ib_ipoib
	ipoib_if rdmasim0 && NIB0=$val
	ipoib_if rdmasim2 && NIB2=$val
	for ifn in "$NIB0" "$NIB2"; do
		echo 0 >"/proc/sys/net/ipv6/conf/$ifn/accept_dad"
		check "fabric_nvme_up_$ifn" ip link set "$ifn" up
		check "fabric_nvme_ll_$ifn" wait_for "$ifn's link-local address" \
			60 ll_addr_ready "$ifn"
	done
	ll_of "$NIB2" && nll2=$val
	nvme_over_rdma fabric "$nll2%$NIB2" "$nll2%$NIB0" rdmasim2 rdmasim0 \
		rdmasim2
	check "fabric_nvme_rmmod_ipoib" rmmod ib_ipoib
fi

osm_stop b
osm_stop a
# ---- back to the flat subnet ----
check "fabric_reset" fab reset "1"
check "fabric_sm_on_again" fab sm 1
check "fabric_flat_again" sysfs_is "$IB/rdmasim0/ports/1/state" "4: ACTIVE"
check "fabric_flat_lid" sysfs_is "$IB/rdmasim0/ports/1/lid" "0x1"
check "fabric_topology_empty" refused has_line "$F/topology" "*"
