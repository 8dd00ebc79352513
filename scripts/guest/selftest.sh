# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
# shellcheck disable=SC2154 # val: set by guest/lib.sh's kv(), field() and res_line()
#
# rdmasim: shell selftest (netdevsim style), sourced by guest/init-uml.sh inside
# the UML test kernel with rdmasim0 loaded; it ends with rdmasim unloaded.
# From guest/init-uml.sh it uses guest/lib.sh's helpers (check, capture,
# has_line, say, sysfs_is, field) and RDRV,
# PLAT and RSIM_MODDIR. Its RSIM-SELFTEST lines are the console protocol
# of Documentation/testing.rst ("The console protocol").
#
# A program started in the UML kernel costs about half a second: each
# tool runs once into a file under /run, and the checks read that file
# with shell builtins.

IB=/sys/class/infiniband
DBG=/sys/kernel/debug/rdmasim

check "sysfs_node_type" sysfs_is $IB/rdmasim0/node_type "1: CA"
check "sysfs_port_state" sysfs_is $IB/rdmasim0/ports/1/state "4: ACTIVE"
check "sysfs_phys_state" sysfs_is $IB/rdmasim0/ports/1/phys_state "5: LinkUp"
check "sysfs_lid" sysfs_is $IB/rdmasim0/ports/1/lid "0x1"
check "sysfs_sm_lid" sysfs_is $IB/rdmasim0/ports/1/sm_lid "0x1"
check "sysfs_rate" sysfs_is $IB/rdmasim0/ports/1/rate "100 Gb/sec (4X EDR)"
check "sysfs_link_layer" sysfs_is $IB/rdmasim0/ports/1/link_layer "InfiniBand"
check "sysfs_pkey0" sysfs_is $IB/rdmasim0/ports/1/pkeys/0 "0xffff"
check "sysfs_gid0" sysfs_is $IB/rdmasim0/ports/1/gids/0 \
	"fe80:0000:0000:0000:02ca:5100:0000:0001"
check "sysfs_fw_ver" sysfs_is $IB/rdmasim0/fw_ver "1.0.0"
check "sysfs_parent_is_platform_device" \
	test $IB/rdmasim0/device -ef /sys/devices/platform/rdmasim.0

# libibumad reads every port attribute (rate, pkeys, gids, ...) and
# refuses the CA if one read fails; ibstat is built on it.
capture /run/ibstat ibstat rdmasim0
ibstat_port_active() {
	has_line /run/ibstat "*State: Active" && has_line /run/ibstat "*Rate: 100" &&
		has_line /run/ibstat "*Base lid: 1"
}
check "ibstat_port_active" ibstat_port_active
umad_node_for_rdmasim0() {
	local d v
	for d in /sys/class/infiniband_mad/umad*; do
		read -r v <"$d/ibdev"
		[ "$v" = rdmasim0 ] && [ -c "/dev/infiniband/${d##*/}" ] && return 0
	done
	return 1
}
check "umad_node_for_rdmasim0" umad_node_for_rdmasim0

# The SMA answers directed-route SMPs that end at the port (the MAD
# layer hands them to process_mad): infiniband-diags' smpquery, through
# /dev/infiniband/umadN, with no fabric and no SM.
capture /run/ni smpquery -C rdmasim0 -P 1 -D nodeinfo 0
smpquery_nodeinfo() {
	has_line /run/ni "NodeType:*Channel Adapter*" && has_line /run/ni "NumPorts:*1*" &&
		has_line /run/ni "*Guid:*0x02ca510000000000*"
}
check "smpquery_nodeinfo" smpquery_nodeinfo
capture /run/pi smpquery -C rdmasim0 -P 1 -D portinfo 0
smpquery_portinfo() {
	field /run/pi Lid && [ "$val" = 1 ] &&
	field /run/pi SMLid && [ "$val" = 1 ] &&
	field /run/pi LinkState && [ "${val#Active}" != "$val" ] &&
	field /run/pi LinkSpeedExtActive && [ "${val#25.78125 Gbps}" != "$val" ]
}
check "smpquery_portinfo" smpquery_portinfo
capture /run/nd smpquery -C rdmasim0 -P 1 -D nodedesc 0
smpquery_nodedesc() {
	local desc
	read -r desc <$IB/rdmasim0/node_desc && has_line /run/nd "*$desc*"
}
check "smpquery_nodedesc" smpquery_nodedesc
capture /run/pk smpquery -C rdmasim0 -P 1 -D pkeys 0
check "smpquery_pkeys" has_line /run/pk "*0xffff*"
capture /run/gi smpquery -C rdmasim0 -P 1 -D guidinfo 0
check "smpquery_guidinfo" has_line /run/gi "*0x02ca510000000001*"
# LID-routed MADs to the port's own LID: sent on QP0 (SMPs) and QP1
# (GMPs) by the MAD layer, delivered by the loopback data path to the same
# QPs, answered by the SMA and the PMA, the reply delivered back
capture /run/lni smpquery -C rdmasim0 -P 1 nodeinfo 1
check "smpquery_lid_routed_nodeinfo" has_line /run/lni "NodeType:*Channel Adapter*"
capture /run/pq perfquery -C rdmasim0 -P 1
perfquery_port_counters() {
	has_line /run/pq "# Port counters: Lid 1 port 1*" &&
		field /run/pq PortXmitPkts && [ "$val" -ge 1 ] &&
		field /run/pq PortRcvData && [ "$val" -ge 64 ]
}
check "perfquery_lid_routed" perfquery_port_counters
capture /run/ia ibaddr -C rdmasim0 -P 1
check "ibaddr" has_line /run/ia "GID fe80::2ca:5100:0:1 LID start 0x1 end 0x1"
# the PMA behind sysfs: the extended counters table
sysfs_pma_counters() {
	local c=$IB/rdmasim0/ports/1/counters v
	test -r $c/port_xmit_data && test -r $c/unicast_rcv_packets &&
		read -r v <$c/port_rcv_data
}
check "sysfs_pma_counters" sysfs_pma_counters

# restrack: the MAD layer's PD, CQ and QP0/QP1 are visible to rdma
capture /run/res rdma res show
check "restrack_shows_mad_objects" has_line /run/res "*rdmasim0:*pd 1 cq 1 qp 2*"

check "debugfs_resources" has_line $DBG/rdmasim0/resources "pd *"
check "debugfs_limits" has_line $DBG/rdmasim0/limits "max_fast_reg_page_list_len 512"
debugfs_datapath() {
	has_line $DBG/rdmasim0/datapath "wqes [0-9]*" &&
		! has_line $DBG/rdmasim0/datapath "wqes *[!0-9]*"
}
check "debugfs_datapath" debugfs_datapath
check "debugfs_fault_knob" test -w $DBG/rdmasim0/fault/alloc/fail_nth
mad_pool_in_debugfs() {
	has_line $DBG/rdmasim0/mad_pool/stats "buf_len 296" &&
		has_line $DBG/rdmasim0/mad_pool/stats "allocated 32"
}
check "mad_pool_in_debugfs" mad_pool_in_debugfs
puda_fault_points() {
	test -w $DBG/puda/fault/alloc/fail_nth &&
		test -w $DBG/puda/fault/map/fail_nth &&
		test -w $DBG/puda/fault/alloc/probability &&
		test -w $DBG/puda/fault/map/probability
}
check "puda_fault_points" puda_fault_points

# Lifecycle at run time through the platform driver's control files:
# ctl <file> <text> writes a control file; refused <cmd...> must fail
ctl() {
	echo "$2" >"$PLAT/$1"
}
refused() {
	! "$@"
}
# ctl_dbg <file> <text> writes rdmasim0's debugfs file
ctl_dbg() {
	echo "$2" >"$DBG/rdmasim0/$1"
}
check "new_device_7" ctl new_device 7
check "new_device_7_is_there" test -d $IB/rdmasim7
check "new_device_7_lid" sysfs_is $IB/rdmasim7/ports/1/lid "0x8"
check "new_device_duplicate_refused" refused ctl new_device 7
check "new_device_bad_format_refused" refused ctl new_device seven
check "del_device_7" ctl del_device 7
check "del_device_7_is_gone" refused test -d $IB/rdmasim7
check "del_device_unknown_refused" refused ctl del_device 7
check "debugfs_dir_follows_device" refused test -d $DBG/rdmasim7

# The SMA as a subnet manager sees it: SMInfo, SubnSet(PortInfo)
# through ibportstate (LID, port states, physical state, M_Key), and the
# MAD receive queue's PUDA pool carrying every MAD for QP0 and QP1.
P1=$IB/rdmasim0/ports/1
# pis <op...>: ibportstate on rdmasim0's port, by directed route
pis() {
	ibportstate -C rdmasim0 -P 1 -D 0 1 "$@"
}
capture /run/smi sminfo -C rdmasim0 -P 1
check "sminfo_master" has_line /run/smi \
	"sminfo: sm lid 1 sm guid 0x2ca510000000001, activity count * priority 0 state 3 SMINFO_MASTER"
mad_pool_carried_mads() {
	kv $DBG/rdmasim0/mad_pool/stats gets && [ "$val" -ge 4 ] &&
		local gets="$val" &&
		kv $DBG/rdmasim0/mad_pool/stats puts && [ "$val" = "$gets" ] &&
		kv $DBG/rdmasim0/mad_pool/stats outstanding && [ "$val" = 0 ]
}
check "mad_pool_carried_mads" mad_pool_carried_mads
check "ibportstate_set_lid" capture /run/ps pis lid 0x20
check "sysfs_lid_follows_set" sysfs_is $P1/lid "0x20"
capture /run/rl rdma link show rdmasim0/1
check "rdma_link_lid_follows_set" has_line /run/rl "*lid 32 sm_lid 1 *"
capture /run/n20 smpquery -C rdmasim0 -P 1 nodeinfo 0x20
check "lid_routed_to_new_lid" has_line /run/n20 "# Node info: Lid 32"
check "ibportstate_lid_back" capture /run/ps pis lid 1
check "sysfs_lid_back" sysfs_is $P1/lid "0x1"
# Down retrains to Init: only SMPs pass, a GMP (perfquery) is lost
check "ibportstate_down" capture /run/ps pis down
check "sysfs_state_init" sysfs_is $P1/state "2: INIT"
capture /run/ibs ibstat rdmasim0
check "ibstat_initializing" has_line /run/ibs "*State: Initializing"
check "perfquery_lost_in_init" refused capture /run/pq0 \
	perfquery -t 200 -C rdmasim0 -P 1
check "smp_passes_in_init" capture /run/n1 smpquery -C rdmasim0 -P 1 nodeinfo 1
check "ibportstate_arm" capture /run/ps pis arm
check "sysfs_state_armed" sysfs_is $P1/state "3: ARMED"
check "ibportstate_active" capture /run/ps pis active
check "sysfs_state_active_again" sysfs_is $P1/state "4: ACTIVE"
check "ibportstate_disable" capture /run/ps pis disable
check "sysfs_phys_disabled" sysfs_is $P1/phys_state "3: Disabled"
check "ibportstate_enable" capture /run/ps pis enable
check "sysfs_enabled_to_init" sysfs_is $P1/state "2: INIT"
capture /run/ps pis arm
check "ibportstate_active_after_enable" capture /run/ps pis active
# M_Key: protection level 2 drops SMPs without the key
check "ibportstate_mkey_prot_2" capture /run/ps pis mkey 0x1234 mkeyprot 2
check "smpquery_without_mkey_dropped" refused capture /run/mk0 \
	smpquery -t 200 -C rdmasim0 -P 1 -D portinfo 0
check "smpquery_with_mkey" capture /run/mk1 \
	smpquery -t 200 -y 0x1234 -C rdmasim0 -P 1 -D portinfo 0
mkey_violation_counted() {
	field /run/mk1 MkeyViolations && [ "$val" -ge 1 ]
}
check "mkey_violation_counted" mkey_violation_counted
check "ibportstate_mkey_off" capture /run/ps \
	ibportstate -y 0x1234 -C rdmasim0 -P 1 -D 0 1 mkey 0 mkeyprot 0
check "smpquery_without_mkey_again" capture /run/mk2 \
	smpquery -t 200 -C rdmasim0 -P 1 -D portinfo 0
# the cable: debugfs pulls it and plugs it back
check "link_down_knob" ctl_dbg port down
check "sysfs_link_down" sysfs_is $P1/state "1: DOWN"
check "sysfs_link_down_polling" sysfs_is $P1/phys_state "2: Polling"
check "link_up_knob" ctl_dbg port up
check "sysfs_link_up_active" sysfs_is $P1/state "4: ACTIVE"
port_events_counted() {
	kv $DBG/rdmasim0/port events && [ "$val" -ge 8 ]
}
check "port_events_counted" port_events_counted
check "perfquery_after_link_up" capture /run/pq1 perfquery -C rdmasim0 -P 1

# userspace MADs: tools/umad's client, infiniband-diags, a umad reader
# while its device is deleted
# shellcheck source=selftest-umad.sh
. "$RSIM_TOP/scripts/guest/selftest-umad.sh"

# userspace verbs: tools/dmah's uverbs client, DMA handles and MRs
# shellcheck source=selftest-dmah.sh
. "$RSIM_TOP/scripts/guest/selftest-dmah.sh"

# the libibverbs provider: rdma-core's ibv_devices and ibv_devinfo
# shellcheck source=selftest-provider.sh
. "$RSIM_TOP/scripts/guest/selftest-provider.sh"

# pairs of rdma_cm programs (RoCE's and IPoIB's stanzas)
# shellcheck source=cm-pair.sh
. "$RSIM_TOP/scripts/guest/cm-pair.sh"

# the InfiniBand subnet: rdmasim1 beside rdmasim0, MADs and the
# pingpongs between them, the master SM handing over
# shellcheck source=selftest-subnet.sh
. "$RSIM_TOP/scripts/guest/selftest-subnet.sh"

# the kselftest the upstream series carries (tools/selftests/rdma/, for
# the kernel's tools/testing/selftests/rdma/), run as kselftest runs it:
# beside ../kselftest/ktap_helpers.sh, the test kernel's own
kst=$RSIM_MODROOT/lib/modules/$RSIM_KVER/build/source/tools/testing/selftests
if [ -f "$kst/kselftest/ktap_helpers.sh" ]; then
	kselftest_rdmasim kselftest_rdmasim_new_device "$kst" \
		"$RSIM_TOP/tools/selftests/rdma/rdmasim_new_device.sh"
fi

# RoCE mode: rdma link add/del on a veth pair across two network
# namespaces, rdma_cm from userspace (rping -V, ucmatose, udaddy), teardown
# while connected
# shellcheck source=selftest-roce.sh
. "$RSIM_TOP/scripts/guest/selftest-roce.sh"

# RoCE mode across network namespaces (guest/selftest-netns.sh) runs in
# rdma-core's boot, its "netns" part (guest/init-uml.sh)

# Unloading rdmasim while a kernel client holds a PD, CQ, QP and MR on
# rdmasim0: the client's remove() releases them, the unload completes.
check "client_holds_objects" insmod "$RSIM_MODDIR/tools/demo/rdmasim_demo.ko" hold=1
rdmasim0_counts_held_mr() {
	local what count rest
	while read -r what count rest; do
		[ "$what" = mr ] && { [ "$count" = 1 ]; return; }
	done <$DBG/rdmasim0/resources
	return 1
}
check "rdmasim0_counts_held_mr" rdmasim0_counts_held_mr
check "rmmod_rdmasim_under_client" rmmod rdmasim
dmesg >/run/dmesg
check "client_released_objects" has_line /run/dmesg "*rdmasim0: released what it held*"
check "rmmod_client" rmmod rdmasim_demo

# A kernel client with a PUDA pool in use: rdmasim cannot go until the
# client does; then unload and reload are clean.
check "reload_rdmasim" insmod "$RDRV/rdmasim.ko"
check "client_holds_puda_pool" insmod "$RSIM_MODDIR/tools/demo/rdmasim_puda_demo.ko"
puda_pool_buffers_out() {
	local f
	for f in "$DBG"/puda/rdmasim_puda_demo-*/stats; do
		has_line "$f" "outstanding 2" && return 0
	done
	return 1
}
check "puda_pool_buffers_out" puda_pool_buffers_out
check "rmmod_rdmasim_refused_while_pool_in_use" refused rmmod rdmasim
check "rdmasim0_still_there" test -d $IB/rdmasim0
check "rmmod_pool_client" rmmod rdmasim_puda_demo
dmesg >/run/dmesg
check "pool_client_returned_everything" has_line /run/dmesg \
	"*rdmasim_puda_demo: pool destroyed, 0 buffer(s) were still out*"
# the unload with a umad reader blocked in read() on rdmasim0: it gets an
# error (guest/selftest-umad.sh's helpers)
check "umad_reader_blocks_on_rdmasim0" umad_reader_start rdmasim0 /run/blk0
# and with a process holding a context on rdmasim0 (guest/
# selftest-provider.sh's rsim_hold): rmmod does not wait for it (without
# disassociation, for ever). 10 s, as del_device's: 0.7 s on an idle
# host's debug kernel, 1.3 under a cold run's load, and a warm run loads
# the two CPUs more (del_device took 2.1 s once)
if [ -n "${holder:-}" ]; then
	check "holder_holds_rdmasim0" holder_start rdmasim0 /run/hold0
	check "rmmod_rdmasim_after_client" removal_quick /run/hold0 10000 \
		rmmod rdmasim
	check "holder_eio_after_rmmod" holder_ended /run/hold0
else
	check "rmmod_rdmasim_after_client" rmmod rdmasim
fi
check "umad_reader_error_on_rmmod" umad_reader_ended /run/blk0
rdmasim_gone() {
	local d
	for d in "$IB"/*; do
		case ${d##*/} in rdmasim*) echo "$d is still there"; return 1 ;; esac
	done
}
check "rdmasim_gone" rdmasim_gone

# module parameters: refused LIDs, asynchronous probe (rdmasim unloaded)
# shellcheck source=selftest-modparams.sh
. "$RSIM_TOP/scripts/guest/selftest-modparams.sh"
