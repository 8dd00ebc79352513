# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# rdmasim: the main job's demo, sourced by guest/init-uml.sh inside the UML
# kernel with rdmasim, rdma_rxe and siw loaded; it uses say, check,
# wait_for, ll_addr_ready, roce_v2_gid, RSIM_MODDIR, RSIM_MODROOT and
# RSIM_KVER from there. Its RSIM-DEMO lines are the console protocol of
# Documentation/testing.rst ("The console protocol").

IB=/sys/class/infiniband
show() {
	echo "RSIM-DEMO \$ $*" >/dev/console
	"$@" >/dev/console 2>&1
}

say "RSIM-DEMO-BEGIN"
show rdma dev
show rdma dev show rdmasim0 -d
show rdma link
show ls $IB/rdmasim0 $IB/rdmasim0/ports/1
for a in state phys_state rate lid sm_lid link_layer pkeys/0 gids/0 cap_mask; do
	echo "RSIM-DEMO   ports/1/$a: $(cat $IB/rdmasim0/ports/1/$a)" >/dev/console
done
show ibstat rdmasim0
show cat /sys/kernel/debug/rdmasim/rdmasim0/resources
show cat /sys/kernel/debug/rdmasim/rdmasim0/limits
echo "RSIM-DEMO \$ echo 1 > /sys/bus/platform/drivers/rdmasim/new_device" >/dev/console
echo 1 >/sys/bus/platform/drivers/rdmasim/new_device
show rdma dev show rdmasim1
echo "RSIM-DEMO \$ insmod rdmasim_demo.ko  (allocate and map an MR on every device)" >/dev/console
insmod "$RSIM_MODDIR/tools/demo/rdmasim_demo.ko"
rmmod rdmasim_demo
echo "RSIM-DEMO \$ insmod rdmasim_puda_demo.ko; rmmod rdmasim_puda_demo  (a PUDA pool client)" >/dev/console
insmod "$RSIM_MODDIR/tools/demo/rdmasim_puda_demo.ko"
show cat /sys/kernel/debug/rdmasim/rdmasim0/mad_pool/stats
rmmod rdmasim_puda_demo
echo 1 >/sys/bus/platform/drivers/rdmasim/del_device

# RoCE mode beside rxe0 and siw0: a device bound to one end of a second
# veth pair, and an NVMe over RDMA namespace on it (an nvmet-rdma target
# on a memory-backed null_blk, the nvme-rdma host connected to it; the
# kernel's ULP modules are in 7.3's debug kernel), written and read back;
# the teardown deletes the device under the target (guest/ulp-nvme.sh)
ip link add rsim_veth2 type veth peer name rsim_veth3
for i in rsim_veth2 rsim_veth3; do
	echo 0 >/proc/sys/net/ipv6/conf/$i/accept_dad
	ip link set $i up
done
wait_for "rsim_veth2's link-local address" 60 ll_addr_ready rsim_veth2 >/dev/null
show rdma link add rsim_veth2_rdmasim type rdmasim netdev rsim_veth2
wait_for "its RoCE v2 GID" 60 roce_v2_gid rsim_veth2_rdmasim >/dev/null
show rdma link
for a in link_layer state gids/0 gid_attrs/types/0; do
	echo "RSIM-DEMO   rsim_veth2_rdmasim ports/1/$a:" \
		"$(cat $IB/rsim_veth2_rdmasim/ports/1/$a)" >/dev/console
done
if [ -d "$RSIM_MODROOT/lib/modules/$RSIM_KVER/kernel/drivers/nvme" ]; then
	DBG=/sys/kernel/debug/rdmasim
	# shellcheck source=ulp-nvme.sh
	. "$RSIM_TOP/scripts/guest/ulp-nvme.sh"
	ip -6 -o addr show dev rsim_veth2 scope link >/run/ll2
	read -r _ _ _ a2 _ </run/ll2
	a2=${a2%%/*}%rsim_veth2
	echo "RSIM-DEMO \$ nvme over rdma: target and host at $a2" >/dev/console
	nvme_over_rdma demo "$a2" "$a2" rsim_veth2_rdmasim rsim_veth2_rdmasim
	show sh -c "cmp /run/nvme-pat /run/nvme-back &&
		echo '4 MiB written to /dev/${nvme_ctrl}n1 and read back: identical'"
else
	show rdma link del rsim_veth2_rdmasim
fi
ip link del rsim_veth2
say "RSIM-DEMO-END"
