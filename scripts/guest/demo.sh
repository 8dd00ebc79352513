# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# rdmasim: the main job's demo, sourced by guest/init-uml.sh inside the UML
# kernel with rdmasim, rdma_rxe and siw loaded; it uses say and
# RSIM_MODDIR from there. Its RSIM-DEMO lines are the console protocol of
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
say "RSIM-DEMO-END"
