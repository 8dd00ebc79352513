# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: the reproducer of a finding (Documentation/ulps.rst, "Findings"):
# DMA-API debug reports "device driver maps memory from kernel text or
# rodata" when nvme-rdma maps ZERO_PAGE for a write: 7.3's empty_zero_page
# is const (mm/mm_init.c), so it lies in .rodata, which
# check_for_illegal_area() (kernel/dma/debug.c) refuses. The block layer
# writes ZERO_PAGE when a namespace refuses Write Zeroes
# (blkdev_issue_zeroout()'s fallback): here a file namespace on tmpfs,
# which has no FALLOC_FL_ZERO_RANGE. Only a device that maps through the
# DMA API shows it; rxe and siw map virtually. Run it with
#
#   make script SCRIPT=scripts/guest/finding-zero-page-dma.sh
#
# which fails, on the reports, while the finding stands. Uses
# guest/ulp-nvme.sh and guest/lib.sh's helpers.

DBG=/sys/kernel/debug/rdmasim
# shellcheck source=ulp-nvme.sh
. "$RSIM_TOP/scripts/guest/ulp-nvme.sh"

ip link add rsim_fz0 type veth peer name rsim_fz1
for i in rsim_fz0 rsim_fz1; do
	echo 0 >/proc/sys/net/ipv6/conf/$i/accept_dad
	ip link set $i up
done
for i in rsim_fz0 rsim_fz1; do
	check "finding_${i}_link_local" wait_for "$i's address" 60 ll_addr_ready $i
	check "finding_${i}_link_add" rdma link add ${i}_rdmasim type rdmasim netdev $i
	check "finding_${i}_gid" wait_for "the RoCE v2 GID" 60 roce_v2_gid ${i}_rdmasim
done
ip -6 -o addr show dev rsim_fz1 scope link >/run/fzl
read -r _ _ _ a _ </run/fzl
a=${a%%/*}
check "finding_modules" nvme_modules
# the namespace: a 16 MiB file on tmpfs (nvmet's file backend answers
# Write Zeroes with an error: vfs_fallocate(FALLOC_FL_ZERO_RANGE) is
# EOPNOTSUPP there)
truncate -s 16M /run/fz.img
s=$NVMET/subsystems/$NVME_NQN p=$NVMET/ports/1
check "finding_target_up" sh -c "mkdir $s && echo 1 >$s/attr_allow_any_host &&
	mkdir $s/namespaces/1 && echo /run/fz.img >$s/namespaces/1/device_path &&
	echo 1 >$s/namespaces/1/enable && mkdir $p && echo rdma >$p/addr_trtype &&
	echo ipv6 >$p/addr_adrfam && echo '$a%rsim_fz1' >$p/addr_traddr &&
	echo $NVME_PORT >$p/addr_trsvcid && ln -s $s $p/subsystems/$NVME_NQN"
check "finding_connect" nvme_connect "$a%rsim_fz0"
check "finding_namespace" wait_for "the namespace" 30 nvme_ns_ready
# BLKZEROOUT of 64 KiB: Write Zeroes refused, then ZERO_PAGE written
check "finding_zeroout" blkdiscard -z -l 65536 "/dev/${nvme_ctrl}n1"
dmesg >/run/fzdmesg
check "finding_dma_debug_report" has_line /run/fzdmesg \
	"*maps memory from kernel text or rodat[a]*"
check "finding_disconnect" \
	sh -c "echo 1 >/sys/class/nvme/$nvme_ctrl/delete_controller"
check "finding_controller_gone" wait_for "$nvme_ctrl to go" 30 \
	test ! -e "/sys/class/nvme/$nvme_ctrl"
for i in rsim_fz0 rsim_fz1; do
	rdma link del ${i}_rdmasim
done
check "finding_target_down" nvme_target_down
ip link del rsim_fz0
