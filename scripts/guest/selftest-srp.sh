# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: SRP over the IB CM between the subnet's two devices, sourced by
# guest/selftest-subnet.sh while rdmasim0 and rdmasim1 are the subnet,
# where the test kernel has LIO, ib_srpt and ib_srp (7.3's debug kernel):
#   - ib_srpt on rdmasim1's port (LIO through configfs: a 16 MiB RAM disk,
#     the port's target named by its GUID, an ACL for rdmasim0's port);
#   - ib_srp on rdmasim0 logging in with id_ext, ioc_guid, dgid,
#     pkey=ffff and service_id (the IB CM's REQ across the subnet, the
#     login in its private data): a SCSI disk appears, LIO's RAM disk;
#   - 1 MiB written to it (O_DIRECT) and read back, compared;
#   - the remote port deleted, ib_srp and ib_srpt removed, LIO's objects
#     gone.
# ib_srpt listens on the service ID srpt_service_guid; by default that is
# the first device's node GUID, which for rdmasim (locally administered
# GUIDs, 0x02... like every GUID whose top byte is 0x02) falls in the IB
# CM's range of assigned service IDs (IB_CM_ASSIGN_SERVICE_ID), where
# ib_cm_listen() refuses it (EINVAL): the stanza sets it.
# Uses check(), has_line(), wait_for() and refused() from guest/lib.sh and
# guest/selftest.sh.

SRP_SVC=0002ca5100000100
SRP_CFS=/sys/kernel/config/target
# rdmasim1's port GUID as ib_srpt names it, rdmasim0's as its sessions are
SRP_TPORT=$SRP_CFS/srpt/02ca:5100:0000:0101
SRP_ACL=02ca:5100:0000:0001

# srp_lio: a RAM disk exported by ib_srpt on rdmasim1's port to rdmasim0's
srp_lio() {
	local t=$SRP_TPORT/tpgt_1
	grep -qs " /sys/kernel/config " /proc/mounts ||
		mount -t configfs none /sys/kernel/config || return 1
	mkdir -p $SRP_CFS/core/rd_mcp_0/rd0 &&
		echo rd_pages=4096 >$SRP_CFS/core/rd_mcp_0/rd0/control &&
		echo 1 >$SRP_CFS/core/rd_mcp_0/rd0/enable &&
		mkdir -p $SRP_CFS/srpt && mkdir $SRP_TPORT && mkdir $t &&
		mkdir $t/lun/lun_0 &&
		ln -s $SRP_CFS/core/rd_mcp_0/rd0 $t/lun/lun_0/rd0 &&
		mkdir $t/acls/$SRP_ACL && mkdir $t/acls/$SRP_ACL/lun_0 &&
		ln -s $t/lun/lun_0 $t/acls/$SRP_ACL/lun_0/lun_0 &&
		echo 1 >$t/enable
}
# srp_lio_gone: LIO's objects removed, in reverse order (the fabric's
# directory too: it holds ib_srpt)
srp_lio_gone() {
	local t=$SRP_TPORT/tpgt_1
	echo 0 >$t/enable &&
		rm $t/acls/$SRP_ACL/lun_0/lun_0 && rmdir $t/acls/$SRP_ACL/lun_0 &&
		rmdir $t/acls/$SRP_ACL && rm $t/lun/lun_0/rd0 &&
		rmdir $t/lun/lun_0 && rmdir $t && rmdir $SRP_TPORT &&
		rmdir $SRP_CFS/srpt && rmdir $SRP_CFS/core/rd_mcp_0/rd0 &&
		rmdir $SRP_CFS/core/rd_mcp_0
}
# srp_disk: the SCSI disk of LIO's RAM disk, /dev/<name> in $val
srp_disk() {
	local d v
	val=
	for d in /sys/block/sd*; do
		[ -e "$d/device/model" ] || continue
		read -r v <"$d/device/model"
		case $v in RAMDISK-MCP*) val=/dev/${d##*/}; return 0 ;; esac
	done
	return 1
}
# srp_disk_ready: that disk, and it takes I/O. It shows in /sys/block
# before sd's probe is over ("Attached SCSI disk"), and a write then
# failed once (a clean-clone make check); one block read through it
# says the probe is done.
srp_disk_ready() {
	srp_disk && dd if="$val" of=/dev/null bs=4k count=1 iflag=direct \
		2>/dev/null
}
srp_io() {
	head -c 1048576 /dev/urandom >/run/srp-data &&
		dd if=/run/srp-data of="$1" bs=64k oflag=direct &&
		dd if="$1" of=/run/srp-back bs=64k count=16 iflag=direct &&
		cmp /run/srp-data /run/srp-back
}
# srp_unused: ib_srp has no user left: deleting the port queues its
# removal (srp_remove_work), which lets the SCSI host go after its disk;
# rmmod right after the disk went once found the module still in use
srp_unused() {
	local n
	read -r n </sys/module/ib_srp/refcnt || return 1
	[ "$n" = 0 ] || { echo "ib_srp refcnt $n"; return 1; }
}
srp_ports_gone() {
	local p
	for p in /sys/class/srp_remote_ports/port-*; do
		[ -e "$p/delete" ] && echo 1 >"$p/delete"
	done
	return 0
}

MP="modprobe -d $RSIM_MODROOT -S $RSIM_KVER"
# shellcheck disable=SC2086 # $MP: words
if $MP -n ib_srpt 2>/dev/null && $MP -n ib_srp 2>/dev/null; then
	# shellcheck disable=SC2086
	check "srp_modprobe_srpt" $MP ib_srpt srpt_service_guid=0x$SRP_SVC
	check "srp_lio_target" srp_lio
	# shellcheck disable=SC2086
	check "srp_modprobe_srp" $MP -a sd_mod ib_srp
	check "srp_add_target" sh -c "echo id_ext=$SRP_SVC,ioc_guid=$SRP_SVC,dgid=fe8000000000000002ca510000000101,pkey=ffff,service_id=$SRP_SVC >/sys/class/infiniband_srp/srp-rdmasim0-1/add_target"
	check "srp_disk" wait_for "the SRP disk" 30 srp_disk_ready
	srp_disk && SRP_DEV=$val
	check "srp_write_read_back" srp_io "${SRP_DEV:-/dev/null}"
	check "srp_port_deleted" srp_ports_gone
	check "srp_disk_gone" wait_for "the SRP disk to go" 30 refused srp_disk
	check "srp_unused" wait_for "ib_srp's last user to go" 30 srp_unused
	check "srp_rmmod_srp" rmmod ib_srp
	check "srp_lio_gone" srp_lio_gone
	check "srp_rmmod_srpt" rmmod ib_srpt
fi
