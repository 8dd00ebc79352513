# shellcheck shell=sh
# shellcheck disable=SC2154 # val: set by guest/lib.sh's kv()
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: NVMe over RDMA on rdmasim devices, sourced by the guest
# scripts that run it (guest/selftest-roce.sh and the conformance boot
# with ib_core.force_mr=1 on RoCE-mode devices, guest/selftest-ipoib.sh
# over IPoIB's addresses on the subnet): an nvmet-rdma target exporting a memory-backed
# null_blk namespace through configfs, the nvme-rdma host connected to it
# through /dev/nvme-fabrics, a pattern written with O_DIRECT, read back
# and compared, the fast-registration counters of rdmasim's data path
# checked, then disconnect, the target's RDMA device removed under the
# listening port ("rdma link del") and the target taken down. Both ends
# use the initial network namespace: nvmet-rdma and nvme-rdma resolve
# addresses in init_net only (rdma_create_id(&init_net, ...)).
#
# The order of the teardown is on purpose: unlinking the subsystem from a
# port that still listens after a host has connected makes lockdep report
# a circular dependency between nvmet_config_sem and rdma_cm's
# handler_mutex (Documentation/ulps.rst, "Findings"; reproducer:
# scripts/guest/finding-nvmet-port-lockdep.sh), and the first lockdep
# report turns lockdep off for the rest of the boot. With the device gone
# first, nvmet-rdma's device removal has destroyed the listener and the
# unlink destroys nothing.
#
# Uses check(), has_line(), say(), wait_for() and kv() from guest/lib.sh,
# RSIM_MODROOT and RSIM_KVER from guest/init-uml.sh, and $DBG.

NVMET=/sys/kernel/config/nvmet
NVME_NQN=nqn.2026-12.io.rdmasim:ulp
NVME_PORT=4420

# nvme_modules: null_blk (1 GiB, memory-backed: what is written stays),
# the target and the host, configfs mounted
nvme_modules() {
	local m
	for m in null_blk nvmet nvmet-rdma nvme-rdma; do
		[ -d "/sys/module/$(echo $m | tr - _)" ] && continue
		if [ $m = null_blk ]; then
			modprobe -d "$RSIM_MODROOT" -S "$RSIM_KVER" null_blk \
				nr_devices=1 memory_backed=1 gb=1 || return 1
		else
			modprobe -d "$RSIM_MODROOT" -S "$RSIM_KVER" $m || return 1
		fi
	done
	[ -d $NVMET ] || mount -t configfs none /sys/kernel/config
}

# nvme_target_up traddr: the subsystem with /dev/nullb0 as namespace 1,
# any host allowed, on an RDMA port at <traddr> (IPv6, "%ifname" scoped)
nvme_target_up() {
	local s=$NVMET/subsystems/$NVME_NQN p=$NVMET/ports/1
	mkdir $s && echo 1 >$s/attr_allow_any_host &&
		mkdir $s/namespaces/1 &&
		echo /dev/nullb0 >$s/namespaces/1/device_path &&
		echo 1 >$s/namespaces/1/enable &&
		mkdir $p && echo rdma >$p/addr_trtype && echo ipv6 >$p/addr_adrfam &&
		echo "$1" >$p/addr_traddr && echo $NVME_PORT >$p/addr_trsvcid &&
		ln -s $s $p/subsystems/$NVME_NQN
}

nvme_target_down() {
	local s=$NVMET/subsystems/$NVME_NQN p=$NVMET/ports/1
	rm -f $p/subsystems/$NVME_NQN
	rmdir $p
	echo 0 >$s/namespaces/1/enable
	rmdir $s/namespaces/1
	rmdir $s
}

# nvme_connect traddr: the host connected (/dev/nvme-fabrics); the
# controller's name (nvme<N>) in $nvme_ctrl
nvme_connect() {
	local resp
	exec 3<>/dev/nvme-fabrics || return 1
	echo "transport=rdma,traddr=$1,trsvcid=$NVME_PORT,nqn=$NVME_NQN" >&3 || {
		exec 3>&-
		return 1
	}
	read -r resp <&3
	exec 3>&-
	echo "nvme-fabrics: $resp"
	case $resp in
	instance=*) nvme_ctrl=nvme${resp#instance=}; nvme_ctrl=${nvme_ctrl%%,*} ;;
	*) return 1 ;;
	esac
}

# nvme_ns_ready: the controller's namespace 1 is a block device
nvme_ns_ready() {
	[ -b "/dev/${nvme_ctrl}n1" ] || { echo "no /dev/${nvme_ctrl}n1"; return 1; }
}

# nvme_pattern: 4 MiB of random bytes written to the namespace with
# O_DIRECT in 128 KiB requests, read back the same way and compared
nvme_pattern() {
	local dev="/dev/${nvme_ctrl}n1"
	dd if=/dev/urandom of=/run/nvme-pat bs=128k count=32 2>/dev/null &&
		dd if=/run/nvme-pat of="$dev" bs=128k count=32 oflag=direct 2>&1 &&
		dd if="$dev" of=/run/nvme-back bs=128k count=32 iflag=direct 2>&1 &&
		cmp /run/nvme-pat /run/nvme-back
}

# nvme_ops dev...: the sum of the data path's op_<kind> counters of the
# given devices, per kind, in nvme_reg_mr, nvme_local_inv, nvme_send_inv
nvme_ops() {
	local d
	nvme_reg_mr=0 nvme_local_inv=0 nvme_send_inv=0
	for d in "$@"; do
		kv "$DBG/$d/datapath" op_reg_mr && nvme_reg_mr=$((nvme_reg_mr + val))
		kv "$DBG/$d/datapath" op_local_inv &&
			nvme_local_inv=$((nvme_local_inv + val))
		kv "$DBG/$d/datapath" op_send_inv &&
			nvme_send_inv=$((nvme_send_inv + val))
	done
}

# nvme_dev_del dev: the target's RDMA device removed: "rdma link del" for
# a RoCE-mode device, the platform driver's del_device for an InfiniBand
# one (rdmasim<N>)
nvme_dev_del() {
	case $1 in
	rdmasim[0-9]*)
		echo "${1#rdmasim}" >/sys/bus/platform/drivers/rdmasim/del_device ;;
	*) rdma link del "$1" ;;
	esac
}

# nvme_over_rdma tag target_traddr host_traddr target_dev dev...: the
# whole run, one check per step, named nvme_<tag>_<step>; <target_dev> is
# the rdmasim device the target listens on (deleted at the end: the
# caller adds it again if it needs it), the devs are the rdmasim devices
# whose counters must move
nvme_over_rdma() {
	local tag="$1" taddr="$2" haddr="$3" tdev="$4" r0 l0 s0
	shift 4
	check "nvme_${tag}_modules" nvme_modules
	check "nvme_${tag}_target_up" nvme_target_up "$taddr"
	nvme_ops "$@"
	r0=$nvme_reg_mr l0=$nvme_local_inv s0=$nvme_send_inv
	check "nvme_${tag}_connect" nvme_connect "$haddr"
	check "nvme_${tag}_namespace" wait_for "the NVMe namespace" 30 nvme_ns_ready
	check "nvme_${tag}_pattern_read_back" nvme_pattern
	nvme_ops "$@"
	# the target's device's own registrations (ib_core.force_mr=1), which
	# guest/init-uml.sh's ulp_nvme_pair reads
	# shellcheck disable=SC2034
	kv "$DBG/$tdev/datapath" op_reg_mr && nvme_target_reg_mr=$val
	say "RSIM-ULP nvme $tag: reg_mr +$((nvme_reg_mr - r0))" \
		"local_inv +$((nvme_local_inv - l0)) send_inv +$((nvme_send_inv - s0))"
	# shellcheck disable=SC2317 # called by check
	frwr_moved() {
		[ "$nvme_reg_mr" -gt "$r0" ] &&
			[ $((nvme_local_inv + nvme_send_inv)) -gt $((l0 + s0)) ]
	}
	check "nvme_${tag}_frwr_counters_moved" frwr_moved
	check "nvme_${tag}_disconnect" \
		sh -c "echo 1 >/sys/class/nvme/$nvme_ctrl/delete_controller"
	check "nvme_${tag}_controller_gone" wait_for "$nvme_ctrl to go" 30 \
		test ! -e "/sys/class/nvme/$nvme_ctrl"
	check "nvme_${tag}_target_device_del" nvme_dev_del "$tdev"
	check "nvme_${tag}_target_down" nvme_target_down
}
