#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: /init of the initramfs that scripts/lib-stock.sh builds for a
# distribution's stock kernel booted under QEMU. The host's dash runs it
# (busybox's sh would run its own applets in place of the host's
# programs); the host's kmod, ip, rdma and infiniband-diags are in the
# initramfs with their libraries, busybox gives the rest, and /lib/modules/<release> holds the stock modules the
# checks need with rdmasim's, installed there by make install (depmod ran).
# The kernel command line gives RSIM_VERSION (the version the modules must
# carry). The checks need no KUnit: modprobe pulls in ib_core, modinfo,
# rdma dev, sysfs, ibstat, smpquery -D, rdmasim_demo on rdmasim0 and rxe0,
# rdmasim_loopback's data path with the debugfs counters, on one series
# (swiotlb=force) tools/provider's rsim_stress through libibverbs,
# new_device and del_device, and every module unloaded. Its output is the console
# protocol of Documentation/testing.rst, judged by judge-log.py --nodebug
# --selftest.

export PATH=/sbin:/bin:/usr/sbin:/usr/bin
KMEMLEAK=/sys/kernel/debug/kmemleak
IB=/sys/class/infiniband
PLAT=/sys/bus/platform/drivers/rdmasim
DBG=/sys/kernel/debug/rdmasim

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t debugfs debugfs /sys/kernel/debug
mkdir -p /run
mount -t tmpfs tmpfs /run

# shellcheck source=lib.sh
. /rsim/lib.sh

read -r kver </proc/sys/kernel/osrelease

# pci_function vendor device: the address of the first such PCI function
pci_function() {
	local d v w
	for d in /sys/bus/pci/devices/*; do
		read -r v <"$d/vendor" || continue
		read -r w <"$d/device" || continue
		if [ "$v" = "$1" ] && [ "$w" = "$2" ]; then
			echo "${d##*/}"
			return 0
		fi
	done
	return 1
}
# make bench's IOMMU boot (scripts/bench.sh, RSIM_BENCH=iommu on the
# command line): no checks, figures. rdmasim maps through QEMU's edu
# function behind the emulated VT-d IOMMU; rdmasim_bench (tools/bench)
# then prints its PUDA table against that function, once with the
# function's domain strict (type DMA: every unmap invalidates the IOTLB
# at once) and once lazy (DMA-FQ, the kernel's default: invalidations
# batched through a flush queue).
bench_iommu() {
	local edu g t
	say "RSIM-INIT mode=bench-iommu kernel=$kver"
	edu=$(pci_function 0x1234 0x11e8) || { say "RSIM-BENCH no edu"; return; }
	g=$(readlink "/sys/bus/pci/devices/$edu/iommu_group")
	for t in DMA DMA-FQ; do
		echo "$t" >"/sys/kernel/iommu_groups/${g##*/}/type" || continue
		modprobe rdmasim "dma_pci=$edu" || continue
		say "RSIM-BENCH iommu $t"
		modprobe rdmasim_bench
		rmmod rdmasim_bench rdmasim
	done
	say "RSIM-BENCH iommu done"
}
read -r cmdline </proc/cmdline
case " $cmdline " in
*" RSIM_BENCH=iommu "*)
	bench_iommu
	echo o >/proc/sysrq-trigger
	sleep 10
	;;
esac
say "RSIM-INIT mode=stock kernel=$kver"
part selftest

# modprobe resolves rdmasim's dependencies from modules.dep
check "modprobe_rdmasim" modprobe rdmasim
check "ib_core_pulled_in" test -d /sys/module/ib_core
# make install put it where the kernel installs external modules
from_make_install() {
	local f
	f=$(modinfo -F filename rdmasim) || return 1
	case $f in
	"/lib/modules/$kver/extra/"* | "/lib/modules/$kver/updates/"*) test -f "$f" ;;
	*) echo "modprobe found $f"; return 1 ;;
	esac
}
check "rdmasim_from_make_install" from_make_install
capture /run/modinfo modinfo rdmasim
check "modinfo_version" has_line /run/modinfo "version: *$RSIM_VERSION"
check "modinfo_description" has_line /run/modinfo "description: *Simulated RDMA*"
check "modinfo_author" has_line /run/modinfo "author: *?*"
check "modinfo_license" has_line /run/modinfo "license: *GPL*"
# every parameter has help text: "parm: name:text (type)"
parms_documented() {
	local l p=0
	while IFS= read -r l; do
		case $l in
		parm:*) ;;
		*) continue ;;
		esac
		p=$((p + 1))
		l=${l#parm:}
		l=${l#"${l%%[! ]*}"}
		case $l in
		*:?*" ("*")") ;;
		*) echo "no help text: $l"; return 1 ;;
		esac
	done </run/modinfo
	[ $p -ge 2 ] || { echo "$p parameters"; return 1; }
}
check "modinfo_parameters_have_help" parms_documented

capture /run/rdma-dev rdma dev
check "rdma_dev_shows_rdmasim0" has_line /run/rdma-dev "*rdmasim0: node_type ca *"
check "sysfs_node_type" sysfs_is $IB/rdmasim0/node_type "1: CA"
check "sysfs_port_state" sysfs_is $IB/rdmasim0/ports/1/state "4: ACTIVE"
check "sysfs_lid" sysfs_is $IB/rdmasim0/ports/1/lid "0x1"
check "sysfs_parent_is_platform_device" \
	test $IB/rdmasim0/device -ef /sys/devices/platform/rdmasim.0

check "modprobe_ib_umad" modprobe ib_umad
capture /run/ibstat ibstat rdmasim0
ibstat_port_active() {
	has_line /run/ibstat "*State: Active" && has_line /run/ibstat "*Base lid: 1"
}
check "ibstat_port_active" ibstat_port_active
capture /run/ni smpquery -C rdmasim0 -P 1 -D nodeinfo 0
smpquery_nodeinfo() {
	has_line /run/ni "NodeType:*Channel Adapter*" &&
		has_line /run/ni "*Guid:*0x02ca510000000000*"
}
check "smpquery_directed_nodeinfo" smpquery_nodeinfo
capture /run/pi smpquery -C rdmasim0 -P 1 -D portinfo 0
smpquery_portinfo() {
	field /run/pi Lid && [ "$val" = 1 ] &&
		field /run/pi LinkState && [ "${val#Active}" != "$val" ]
}
check "smpquery_directed_portinfo" smpquery_portinfo

# rxe over one end of a veth pair (IPv6 link-local only), the stock
# kernel's own rdma_rxe
rxe_up() {
	ip link set lo up &&
	ip link add rsim_veth0 type veth peer name rsim_veth1 &&
	ip link set rsim_veth0 up && ip link set rsim_veth1 up &&
	modprobe rdma_rxe && rdma link add rxe0 type rxe netdev rsim_veth0
}
check "rxe0_on_veth" rxe_up
check "rxe0_port_active" wait_for "rxe0's port to be ACTIVE" 60 port_active rxe0

# rdmasim_demo allocates and maps MRs on every device: rdmasim0 and rxe0
check "modprobe_rdmasim_demo" modprobe rdmasim_demo
dmesg >/run/dmesg
demo_ran_on() {
	has_line /run/dmesg "*rdmasim_demo: $1: MR lkey *" &&
		has_line /run/dmesg "*rdmasim_demo: $1:   map 3 pages -> 3 entries mapped*"
}
check "demo_mr_on_rdmasim0" demo_ran_on rdmasim0
check "demo_mr_on_rxe0" demo_ran_on rxe0
check "demo_over_max_num_sg_refused_on_rdmasim0" has_line /run/dmesg \
	"*rdmasim_demo: rdmasim0:   ib_alloc_mr(max_num_sg=*, limit + 1) -> -EINVAL*"

# the loopback data path: rdmasim_loopback's steps pass and the device's
# debugfs counters move by what it posted (6 WRs, 2 x 4096 + 64 bytes)
counter() {
	local l
	while IFS= read -r l; do
		case $l in "$1 "*) echo "${l#"$1 "}"; return 0 ;; esac
	done <$DBG/rdmasim0/datapath
	return 1
}
wqes0=$(counter wqes)
bytes0=$(counter bytes)
check "modprobe_rdmasim_loopback" modprobe rdmasim_loopback
dmesg >/run/dmesg
check "loopback_passed_on_rdmasim0" has_line /run/dmesg \
	"*rdmasim_loopback: rdmasim0: passed: *"
counters_moved() {
	local w b
	w=$(counter wqes) && b=$(counter bytes) || return 1
	echo "wqes $wqes0 -> $w, bytes $bytes0 -> $b"
	[ $((w - wqes0)) -ge 6 ] && [ $((b - bytes0)) -ge 8256 ]
}
check "debugfs_datapath_counters_moved" counters_moved
check "rmmod_rdmasim_loopback" rmmod rdmasim_loopback

# Where the boot runs with swiotlb=force (scripts/lib-stock.sh's
# RSIM_STOCK_SWIOTLB_SERIES, which puts rsim_stress and libibverbs in the
# initramfs): every streaming DMA mapping is bounced, so no DMA address
# is the physical address of the memory it maps. rdmasim_loopback above
# ran through the bounce slots (a kernel consumer's DMA addresses, synced
# by its unmaps); rsim_stress's two threads move bytes through pinned
# user memory and device memory, and check every one, also after the
# deregistration (whose unmap copies the bounce slots back). The slots
# must have been used for its MRs' pages (debugfs' umem_bounced).
if [ -f /rsim/stress.env ]; then
	while IFS= read -r l; do export "${l?}"; done </rsim/stress.env
	swiotlb_forced() {
		has_line /proc/cmdline "* swiotlb=force *"
	}
	check "swiotlb_forced" swiotlb_forced
	rc=0
	capture /run/stress "$RSIM_STRESS" -d rdmasim0 -s "$(date +%s)" \
		-n 100 || rc=$?
	echo "exit $rc" >>/run/stress
	check "stress_two_threads_under_swiotlb" lines /run/stress \
		"result PASS" "exit 0"
	# the pages of its MRs whose DMA address was a bounce slot
	bounced() {
		local n
		n=$(counter umem_bounced) || return 1
		echo "user MR pages bounced: $n"
		[ "$n" -gt 0 ]
	}
	check "user_mr_pages_bounced" bounced

	# what a process makes the kernel allocate for it (a CQ of max_cqe,
	# a send queue of max_qp_wr x max_send_sge, 256 KiB of device
	# memory) is charged to its memory cgroup (GFP_KERNEL_ACCOUNT)
	charged() {
		mount -t cgroup2 none /sys/fs/cgroup &&
		echo +memory >/sys/fs/cgroup/cgroup.subtree_control &&
		mkdir /sys/fs/cgroup/rsim || return 1
		capture /run/charge sh -c "echo \$\$ >/sys/fs/cgroup/rsim/cgroup.procs &&
			exec $RSIM_CHARGE -d rdmasim0 -m /sys/fs/cgroup/rsim/memory.current"
		has_line /run/charge "result PASS"
	}
	check "objects_charged_to_the_process" charged
fi

# devices created and deleted at run time through sysfs
check "new_device_1" sh -c "echo 1 >$PLAT/new_device"
check "new_device_1_is_there" test -d $IB/rdmasim1
check "new_device_1_lid" sysfs_is $IB/rdmasim1/ports/1/lid "0x2"
capture /run/rdma-dev rdma dev
check "rdma_dev_shows_rdmasim1" has_line /run/rdma-dev "*rdmasim1: node_type ca *"
check "loopback_on_rdmasim1" modprobe rdmasim_loopback
dmesg >/run/dmesg
check "loopback_passed_on_rdmasim1" has_line /run/dmesg \
	"*rdmasim_loopback: rdmasim1: passed: *"
check "rmmod_rdmasim_loopback_again" rmmod rdmasim_loopback
check "del_device_1" sh -c "echo 1 >$PLAT/del_device"
check "del_device_1_is_gone" test ! -e $IB/rdmasim1
check "del_device_1_twice_refused" sh -c "! echo 1 >$PLAT/del_device"

# everything unloads
check "rmmod_rdmasim_demo" rmmod rdmasim_demo
check "rxe0_del" rdma link del rxe0
check "rmmod_rdma_rxe" rmmod rdma_rxe
check "rmmod_rdmasim" rmmod rdmasim
check "rdmasim_gone" test ! -e /sys/module/rdmasim

# new_device's attribute dma_pci (the upstream form's way; no module
# parameter): the function is bound when a device first asks for it and
# stays bound, shared, until the module unloads; a device made without it
# maps through its platform device; a device that is then not made lets
# a function it bound go again; a function another driver has is refused
# (EBUSY); a function hot-unplugged takes its devices with it, and only
# them.
dma_attr() {
	local edu="$1" fn="/sys/bus/pci/devices/$1"
	check "attr_modprobe_rdmasim" modprobe rdmasim
	check "attr_edu_not_bound_at_load" test ! -e "$fn/driver"
	check "attr_new_device_dma_pci" sh -c "echo '1 dma_pci=$edu' >$PLAT/new_device"
	check "attr_edu_bound_to_rdmasim_dma" test "$fn/driver" \
		-ef /sys/bus/pci/drivers/rdmasim_dma
	check "attr_rdmasim1_maps_through_edu" has_line $DBG/rdmasim1/datapath \
		"dma_device $edu iommu"
	check "attr_rdmasim0_maps_through_its_platform_device" \
		has_line $DBG/rdmasim0/datapath "dma_device rdmasim.0 *"
	check "attr_shared_function" sh -c "echo '2 dma_pci=$edu' >$PLAT/new_device"
	check "attr_rdmasim2_maps_through_edu" has_line $DBG/rdmasim2/datapath \
		"dma_device $edu iommu"
	check "attr_rdmasim2_port_active" wait_for "rdmasim2's port" 30 \
		port_active rdmasim2
	capture /run/ni2 smpquery -C rdmasim2 -P 1 -D nodeinfo 0
	check "attr_smpquery_through_the_iommu" has_line /run/ni2 \
		"NodeType:*Channel Adapter*"
	# hot unplug: rdmasim1 and rdmasim2 go with the function, rdmasim0 stays
	check "attr_edu_removed" sh -c "echo 1 >$fn/remove"
	check "attr_users_gone" sh -c "! ls /sys/class/infiniband | grep -q 'rdmasim[12]'"
	check "attr_rdmasim0_stays" test -d /sys/class/infiniband/rdmasim0
	check "attr_edu_rescanned" sh -c "echo 1 >/sys/bus/pci/rescan && test -d $fn"
	check "attr_rescanned_edu_not_bound" test ! -e "$fn/driver"
	# a number in use: nothing made, and the function it bound let go
	check "attr_taken_number_refused" write_errno "$PLAT/new_device" \
		"0 dma_pci=$edu" "File exists"
	check "attr_refused_device_left_edu_unbound" test ! -e "$fn/driver"
	# another driver's function
	check "attr_modprobe_pci_stub" modprobe pci-stub
	check "attr_edu_to_pci_stub" sh -c "echo pci-stub >$fn/driver_override &&
		echo $edu >/sys/bus/pci/drivers/pci-stub/bind"
	check "attr_busy_function_refused" write_errno "$PLAT/new_device" \
		"3 dma_pci=$edu" "Device or resource busy"
	check "attr_busy_nothing_made" test ! -e /sys/class/infiniband/rdmasim3
	check "attr_edu_from_pci_stub" sh -c "echo $edu >/sys/bus/pci/drivers/pci-stub/unbind &&
		echo >$fn/driver_override"
	check "attr_rmmod_pci_stub" rmmod pci-stub
	check "attr_new_device_again" sh -c "echo '1 dma_pci=$edu' >$PLAT/new_device"
	check "attr_rdmasim1_maps_through_edu_again" has_line $DBG/rdmasim1/datapath \
		"dma_device $edu iommu"
	check "attr_rmmod_rdmasim" rmmod rdmasim
	check "attr_edu_released" test ! -e "$fn/driver"
}

# Behind the emulated IOMMU (scripts/lib-stock.sh's
# RSIM_STOCK_IOMMU_SERIES: q35, VT-d, intel_iommu=on, QEMU's edu
# function): rdmasim again, with dma_pci naming the function, which the
# driver rdmasim_dma binds. Every DMA address of its devices is then an
# I/O virtual address of the function's IOMMU domain: rdmasim_loopback's
# kernel MRs, the local DMA lkey and the MAD pool's receive buffers are
# reached through the IOMMU's page tables (debugfs' iova_translations).
case " $cmdline " in
*" intel_iommu=on "*)
	edu=$(pci_function 0x1234 0x11e8) || edu=none
	check "edu_function_present" test "$edu" != none
	check "edu_behind_the_iommu" test -e "/sys/bus/pci/devices/$edu/iommu_group"
	check "dma_pci_unknown_function_refused" \
		sh -c "! modprobe rdmasim dma_pci=0000:ff:1f.7"
	check "dma_pci_refused_leaves_no_module" test ! -e /sys/module/rdmasim
	check "modprobe_rdmasim_dma_pci" modprobe rdmasim "dma_pci=$edu"
	check "edu_bound_to_rdmasim_dma" test "/sys/bus/pci/devices/$edu/driver" \
		-ef /sys/bus/pci/drivers/rdmasim_dma
	check "rdmasim0_maps_through_edu" has_line $DBG/rdmasim0/datapath \
		"dma_device $edu iommu"
	check "rdmasim0_port_active_dma_pci" wait_for "rdmasim0's port" 30 \
		port_active rdmasim0
	iova0=$(counter iova_translations)
	# this load's lines only: the first load's "passed" is in the ring
	dmesg -c >/dev/null
	check "loopback_dma_pci" modprobe rdmasim_loopback
	dmesg >/run/dmesg
	check "loopback_passed_through_the_iommu" has_line /run/dmesg \
		"*rdmasim_loopback: rdmasim0: passed: *"
	check "rmmod_rdmasim_loopback_dma_pci" rmmod rdmasim_loopback
	# MADs land in the MAD pool's buffers, mapped through the IOMMU
	capture /run/ni smpquery -C rdmasim0 -P 1 -D nodeinfo 0
	check "smpquery_through_the_iommu" has_line /run/ni \
		"NodeType:*Channel Adapter*"
	translated() {
		local n
		n=$(counter iova_translations) || return 1
		echo "iova_translations $iova0 -> $n"
		[ $((n - iova0)) -gt 0 ]
	}
	check "data_path_translated_iovas" translated
	check "new_device_1_dma_pci" sh -c "echo 1 >$PLAT/new_device"
	check "rdmasim1_maps_through_edu" has_line $DBG/rdmasim1/datapath \
		"dma_device $edu iommu"
	check "del_device_1_dma_pci" sh -c "echo 1 >$PLAT/del_device"
	check "rmmod_rdmasim_dma_pci" rmmod rdmasim
	check "edu_released" test ! -e "/sys/bus/pci/devices/$edu/driver"
	dma_attr "$edu"
	;;
esac
check "rmmod_ib_core_and_users" modprobe -r ib_umad ib_uverbs ib_core
finish
