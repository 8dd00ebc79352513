# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: shell selftest (netdevsim style), sourced by uml-init.sh inside
# the UML test kernel with rdmasim0 loaded. Uses check() from there.

IB=/sys/class/infiniband
DBG=/sys/kernel/debug/rdmasim

sysfs_is() {
	[ "$(cat "$1")" = "$2" ] || { echo "$1: '$(cat "$1")' != '$2'"; return 1; }
}

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
check "sysfs_parent_is_platform_device" sh -c \
	"readlink $IB/rdmasim0/device | grep -q 'rdmasim.0$'"

# libibumad reads every port attribute (rate, pkeys, gids, ...) and
# refuses the CA if one read fails; ibstat is built on it.
ibstat rdmasim0 >/dev/console 2>&1
check "ibstat_port_active" sh -c \
	'ibstat rdmasim0 1 | grep -q "State: Active" &&
	 ibstat rdmasim0 1 | grep -q "Rate: 100" &&
	 ibstat rdmasim0 1 | grep -q "Base lid: 1"'
check "umad_node_for_rdmasim0" sh -c \
	'for d in /sys/class/infiniband_mad/umad*; do
		[ "$(cat $d/ibdev)" = rdmasim0 ] && [ -c /dev/infiniband/${d##*/} ] && exit 0
	 done; exit 1'

# The SMA answers directed-route SMPs that end at the port (the MAD
# layer hands them to process_mad): infiniband-diags' smpquery, through
# /dev/infiniband/umadN, with no fabric and no SM.
smpquery -C rdmasim0 -P 1 -D nodeinfo 0 >/run/ni.out 2>&1
cat /run/ni.out >/dev/console
check "smpquery_nodeinfo" sh -c \
	'grep -q "NodeType:.*Channel Adapter" /run/ni.out &&
	 grep -q "NumPorts:.*1" /run/ni.out &&
	 grep -q "Guid:.*0x02ca510000000000" /run/ni.out'
check "smpquery_portinfo" sh -c \
	'smpquery -C rdmasim0 -P 1 -D portinfo 0 >/run/pi.out 2>&1;
	 cat /run/pi.out >/dev/console;
	 grep -q "^Lid:\.*1$" /run/pi.out &&
	 grep -q "^SMLid:\.*1$" /run/pi.out &&
	 grep -q "^LinkState:\.*Active" /run/pi.out &&
	 grep -q "^LinkSpeedExtActive:\.*25.78125 Gbps" /run/pi.out'
check "smpquery_nodedesc" sh -c \
	"smpquery -C rdmasim0 -P 1 -D nodedesc 0 | grep -q \"\$(cat $IB/rdmasim0/node_desc)\""
check "smpquery_pkeys" sh -c \
	'smpquery -C rdmasim0 -P 1 -D pkeys 0 | grep -q "0xffff"'
check "smpquery_guidinfo" sh -c \
	'smpquery -C rdmasim0 -P 1 -D guidinfo 0 | grep -q "0x02ca510000000001"'
# the PMA behind sysfs: the extended counters table
check "sysfs_pma_counters" sh -c \
	"test -r $IB/rdmasim0/ports/1/counters/port_xmit_data &&
	 test -r $IB/rdmasim0/ports/1/counters/unicast_rcv_packets &&
	 cat $IB/rdmasim0/ports/1/counters/port_rcv_data >/dev/null"

# restrack: the MAD layer's PD, CQ and QP0/QP1 are visible to rdma
rdma res show >/dev/console
check "restrack_shows_mad_objects" sh -c \
	'rdma res show | grep "rdmasim0:" | grep -q "pd 1 cq 1 qp 2"'

check "debugfs_resources" sh -c "grep -q '^pd ' $DBG/rdmasim0/resources"
check "debugfs_limits" sh -c "grep -qx 'max_fast_reg_page_list_len 512' $DBG/rdmasim0/limits"
check "debugfs_datapath" sh -c "grep -q '^wqes [0-9]*$' $DBG/rdmasim0/datapath"
check "debugfs_fault_knob" test -w $DBG/rdmasim0/fault/alloc/fail_nth
check "mad_pool_in_debugfs" sh -c \
	"grep -qx 'buf_len 296' $DBG/rdmasim0/mad_pool/stats &&
	 grep -qx 'allocated 32' $DBG/rdmasim0/mad_pool/stats"
check "puda_fault_points" sh -c \
	"test -w $DBG/puda/fail_alloc_nth && test -w $DBG/puda/fail_map_nth &&
	 test -d $DBG/puda/fail_alloc && test -d $DBG/puda/fail_map"

# Lifecycle at run time through the platform driver's control files
check "new_device_7" sh -c "echo 7 > $PLAT/new_device && test -d $IB/rdmasim7"
check "new_device_7_lid" sysfs_is $IB/rdmasim7/ports/1/lid "0x8"
check "new_device_duplicate_refused" sh -c "! echo 7 > $PLAT/new_device"
check "new_device_bad_format_refused" sh -c "! echo seven > $PLAT/new_device"
check "del_device_7" sh -c "echo 7 > $PLAT/del_device && ! test -d $IB/rdmasim7"
check "del_device_unknown_refused" sh -c "! echo 7 > $PLAT/del_device"
check "debugfs_dir_follows_device" sh -c "! test -d $DBG/rdmasim7"
