# shellcheck shell=sh
# shellcheck disable=SC2154 # val: set by guest/lib.sh's kv() and field()
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: the InfiniBand subnet (drivers/infiniband/sw/rdmasim/subnet.c),
# sourced by guest/selftest.sh inside the UML test kernel with rdmasim0
# loaded. A second InfiniBand-mode device, rdmasim1 (LID 2), joins
# rdmasim0's subnet:
#   - one master SM: rdmasim0 (the lowest GUID), rdmasim1 standby with
#     rdmasim0's LID as its SM LID (sysfs, sminfo, rdma link);
#   - LID-routed SMPs and GMPs from rdmasim0 to rdmasim1's LID, through
#     the data path between the devices: smpquery nodeinfo, sminfo and
#     perfquery answered by rdmasim1's SMA and PMA;
#   - ibstat's CA type and hardware version (hca_type, hw_rev);
#   - rdma-core's ibv_rc_pingpong and ibv_ud_pingpong with the server on
#     rdmasim1 and the client on rdmasim0, data checked, when the
#     rdma-core build is there (guest/selftest-provider.sh's pingpong);
#   - rdmasim0's cable pulled: rdmasim1 becomes the master and its own
#     SM LID, a MAD to rdmasim0 is lost; plugged back, rdmasim0 is the
#     master again;
#   - the subnet administrator (guest/selftest-sa.sh), and rdmasim1's
#     SA once it is the master;
#   - IPoIB between the two, datagram and connected mode, in network
#     namespaces of their own (guest/selftest-ipoib.sh);
#   - SRP: ib_srpt on rdmasim1 (LIO), ib_srp on rdmasim0, a disk written
#     and read back (guest/selftest-srp.sh);
#   - a LID in use refused to an SMP and to a new device; rdmasim1
#     deleted; new_device's attributes (lid=, sa=, dma_pci=) and their
#     refusals, errno by errno.
# Uses check(), capture(), has_line(), sysfs_is(), field(), kv() and
# write_errno() from guest/lib.sh, ctl(), refused(), $IB, $DBG and $PLAT from
# guest/selftest.sh, provider_pingpong() from guest/selftest-provider.sh.

check "subnet_new_device_1" ctl new_device 1
check "subnet_rdmasim1_lid" sysfs_is "$IB"/rdmasim1/ports/1/lid "0x2"
check "subnet_rdmasim1_sm_lid_is_master" sysfs_is "$IB"/rdmasim1/ports/1/sm_lid "0x1"
check "subnet_rdmasim0_still_master" sysfs_is "$IB"/rdmasim0/ports/1/sm_lid "0x1"
capture /run/sn-link rdma link show rdmasim1/1
check "subnet_rdma_link_sm_lid" has_line /run/sn-link "*lid 2 sm_lid 1 *"
capture /run/sn-smi1 sminfo -C rdmasim1 -P 1
# the SM LID's SMInfo: rdmasim0's, the master
check "subnet_sminfo_from_rdmasim1" has_line /run/sn-smi1 \
	"sminfo: sm lid 1 sm guid 0x2ca510000000001, *state 3 SMINFO_MASTER"
# rdmasim1's own SM, LID-routed across the devices: standby
capture /run/sn-smi2 sminfo -C rdmasim0 -P 1 2
check "subnet_rdmasim1_sm_standby" has_line /run/sn-smi2 \
	"sminfo: sm lid 2 sm guid 0x2ca510000000101, *state 2 SMINFO_STANDBY"
capture /run/sn-ni smpquery -C rdmasim0 -P 1 nodeinfo 2
check "subnet_smp_across" has_line /run/sn-ni "*Guid:*0x02ca510000000100*"
# (a LID without a port number asks for PortSelect 0: no CA port)
capture /run/sn-pq perfquery -C rdmasim0 -P 1 2 1
check "subnet_perfquery_across" has_line /run/sn-pq "# Port counters: Lid 2 port 1*"

capture /run/sn-ibstat ibstat rdmasim1
check "subnet_ibstat_ca_type" has_line /run/sn-ibstat "*CA type: rdmasim"
check "subnet_ibstat_hw_version" has_line /run/sn-ibstat "*Hardware version: 1"
check "subnet_board_id" sysfs_is "$IB"/rdmasim1/board_id "RSIM_5153"

if [ -n "${RSIM_RDMA_CORE_ENV:-}" ] && [ -f "$RSIM_RDMA_CORE_ENV" ]; then
	subnet_wqes() {
		kv "$DBG/$1/datapath" wqes
	}
	subnet_wqes rdmasim1 && sn_w1=$val
	# pingpong_across tool: provider_pingpong, the server on rdmasim1
	pingpong_across() {
		local rc=0
		# shellcheck disable=SC2034 # provider_pingpong's
		PP_SRV=rdmasim1
		provider_pingpong "$@" || rc=$?
		# shellcheck disable=SC2034
		PP_SRV=
		return $rc
	}
	check "subnet_ibv_rc_pingpong_across" pingpong_across rc
	check "subnet_ibv_ud_pingpong_across" pingpong_across ud
	subnet_rdmasim1_worked() {
		subnet_wqes rdmasim1 && [ "$val" -ge $((sn_w1 + 200)) ]
	}
	check "subnet_rdmasim1_sent" subnet_rdmasim1_worked
fi

# the subnet administrator, at rdmasim0
# shellcheck source=selftest-sa.sh
. "$RSIM_TOP/scripts/guest/selftest-sa.sh"

# IPoIB between the two devices, where the kernel has it
# shellcheck source=selftest-ipoib.sh
. "$RSIM_TOP/scripts/guest/selftest-ipoib.sh"

# SRP over the IB CM: ib_srpt on rdmasim1, ib_srp on rdmasim0
# shellcheck source=selftest-srp.sh
. "$RSIM_TOP/scripts/guest/selftest-srp.sh"

# the master's cable pulled: rdmasim1 is the master, its own SM; the
# query that reaches rdmasim0 before is lost after
check "subnet_perfquery_to_rdmasim0" capture /run/sn-pq1 \
	perfquery -t 200 -C rdmasim1 -P 1 1 1
check "subnet_master_cable_down" ctl_dbg port down
check "subnet_rdmasim1_took_over" sysfs_is "$IB"/rdmasim1/ports/1/sm_lid "0x2"
capture /run/sn-smi3 sminfo -C rdmasim1 -P 1
check "subnet_rdmasim1_master" has_line /run/sn-smi3 "*sm lid 2 *state 3 SMINFO_MASTER"
check "subnet_mad_to_down_port_lost" refused capture /run/sn-pq2 \
	perfquery -t 200 -C rdmasim1 -P 1 1 1
# rdmasim1's own SA answers now, and does not see rdmasim0
capture /run/sn-sa saquery -C rdmasim1 -P 1
check "subnet_new_master_sa" has_line /run/sn-sa "*NodeDescription*rdmasim1"
check "subnet_new_master_sa_sees_one" refused has_line /run/sn-sa \
	"*NodeDescription*rdmasim0"
check "subnet_master_cable_up" ctl_dbg port up
check "subnet_rdmasim0_master_again" sysfs_is "$IB"/rdmasim1/ports/1/sm_lid "0x1"

# no two ports with one LID: SubnSet(PortInfo) of rdmasim1's LID on
# rdmasim0 refused (MAD status), and rdmasim2, whose LID would be 3, not
# made while rdmasim0 has 3
check "subnet_set_lid_in_use_refused" refused capture /run/sn-ps \
	ibportstate -C rdmasim0 -P 1 -D 0 1 lid 2
check "subnet_lid_unchanged" sysfs_is "$IB"/rdmasim0/ports/1/lid "0x1"
check "subnet_set_lid_3" capture /run/sn-ps ibportstate -C rdmasim0 -P 1 -D 0 1 lid 3
check "subnet_new_device_lid_in_use_refused" refused ctl new_device 2
check "subnet_set_lid_back" capture /run/sn-ps ibportstate -C rdmasim0 -P 1 -D 0 1 lid 1
check "subnet_sysfs_lid_back" sysfs_is "$IB"/rdmasim0/ports/1/lid "0x1"
check "subnet_del_device_1" ctl del_device 1
check "subnet_rdmasim1_gone" refused test -d "$IB"/rdmasim1
# new_device's attributes (no module parameter needed): a LID of its
# own, no SA; an unknown attribute or a bad value makes nothing
check "subnet_new_device_attrs" ctl new_device "4 lid=0x40 sa=0"
check "subnet_attr_lid" sysfs_is "$IB"/rdmasim4/ports/1/lid "0x40"
EINVAL="Invalid argument"
check "subnet_attr_unknown_refused" write_errno "$PLAT/new_device" "5 colour=red" "$EINVAL"
check "subnet_attr_lid_0_refused" write_errno "$PLAT/new_device" "5 lid=0" "$EINVAL"
check "subnet_attr_lid_mcast_refused" write_errno "$PLAT/new_device" "5 lid=0xc000" "$EINVAL"
check "subnet_attr_sa_bad_refused" write_errno "$PLAT/new_device" "5 sa=maybe" "$EINVAL"
# dma_pci: a malformed function, a function number past 7, the attribute
# twice, and a function that is not there (the guest has no PCI function
# at 0000:ff:1f.7; QEMU's stock boots bind a real one: init-qemu.sh)
check "subnet_attr_dma_pci_malformed_refused" \
	write_errno "$PLAT/new_device" "5 dma_pci=edu" "$EINVAL"
check "subnet_attr_dma_pci_function_8_refused" \
	write_errno "$PLAT/new_device" "5 dma_pci=0000:00:1f.8" "$EINVAL"
check "subnet_attr_dma_pci_domain_too_long_refused" write_errno \
	"$PLAT/new_device" "5 dma_pci=100000000:00:1f.7" "$EINVAL"
check "subnet_attr_dma_pci_twice_refused" write_errno "$PLAT/new_device" \
	"5 dma_pci=0000:ff:1f.7 dma_pci=0000:ff:1f.7" "$EINVAL"
check "subnet_attr_dma_pci_absent_refused" \
	write_errno "$PLAT/new_device" "5 dma_pci=0000:ff:1f.7" "No such device"
check "subnet_attr_nothing_made" refused test -d "$IB"/rdmasim5
check "subnet_del_device_4" ctl del_device 4
