# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: DMA handles and userspace verbs, sourced by uml-selftest.sh
# inside the UML test kernel with rdmasim0 loaded: tools/dmah's uverbs
# client (built on the host against 7.3's uapi headers, run through
# hostfs) allocates DMA handles with good and bad attributes, registers
# MRs bound to them, sends malformed requests and uses objects across
# contexts; its "<what> <case> <errno>" lines are checked here against
# the errno table of Documentation/rdmasim.rst, and restrack's counts
# must be what they were before it ran (the boot's kmemleak scan checks
# the rest). Uses check(), capture() and has_line() from uml-init.sh, and
# $IB, $DBG and RSIM_MODDIR from uml-selftest.sh.

DMAH=$RSIM_MODDIR/tools/dmah/rsim_dmah

uverbs_node_for_rdmasim0() {
	local d v
	for d in /sys/class/infiniband_verbs/uverbs*; do
		read -r v <"$d/ibdev" 2>/dev/null || continue
		[ "$v" = rdmasim0 ] && [ -c "/dev/infiniband/${d##*/}" ] && return 0
	done
	echo "no /dev/infiniband/uverbsN for rdmasim0"
	return 1
}
check "uverbs_node_for_rdmasim0" uverbs_node_for_rdmasim0

# restrack's line for rdmasim0 ("rdmasim0: pd 1 cq 1 qp 2 ... ctx 0 ...")
# res_line file: that line of "rdma res show" in $val
res_line() {
	local l
	while IFS= read -r l; do
		case $l in *"rdmasim0:"*) val=$l; return 0 ;; esac
	done <"$1"
	val=
	echo "$1: no rdmasim0 line"
	return 1
}

# copy_file from to: with shell builtins
copy_file() {
	local l
	while IFS= read -r l; do echo "$l"; done <"$1" >"$2"
}

capture /run/dmah-res0 rdma res show
copy_file "$DBG/rdmasim0/resources" /run/dmah-dbg0
rc=0
capture /run/dmah "$DMAH" -d rdmasim0 || rc=$?
echo "exit $rc" >>/run/dmah
capture /run/dmah-res1 rdma res show
copy_file "$DBG/rdmasim0/resources" /run/dmah-dbg1

dmah_ran_clean() {
	has_line /run/dmah "exit 0" && has_line /run/dmah "result PASS (0 failures)" &&
		! has_line /run/dmah "FAIL*" >/dev/null
}
check "dmah_program_every_expectation" dmah_ran_clean

# lines file line...: every <line> is a line of <file>
lines() {
	local f="$1"
	shift
	while [ $# -gt 0 ]; do
		has_line "$f" "$1" || return 1
		shift
	done
}

# the errno table, as the issue and mlx5 want it (the program checks the
# same; this is the contract the selftest holds it to)
check "dmah_valid_attributes" lines /run/dmah \
	"dmah cpu_vm_ph0 0" "dmah cpu_vm_ph1 0" "dmah cpu_vm_ph2 0" \
	"dmah cpu_vm_ph3 0" "dmah cpu_pm_ph2 0" "dmah ph_only 0"
check "dmah_driver_rules_einval" lines /run/dmah \
	"dmah no_attrs EINVAL" "dmah cpu_vm_no_ph EINVAL" \
	"dmah cpu_no_mem_type EINVAL" "dmah mem_type_no_cpu EINVAL"
check "dmah_core_rules_einval" lines /run/dmah \
	"dmah cpu_nr_cpu_ids EINVAL" "dmah cpu_0xffff EINVAL" \
	"dmah cpu_0xffffffff EINVAL" "dmah ph4 EINVAL" "dmah ph255 EINVAL"
check "dmah_parser_rules" lines /run/dmah \
	"dmah mem_type_id2 EOPNOTSUPP" "dmah mem_type_id255 EOPNOTSUPP" \
	"dmah mem_type_reserved_set EINVAL" "dmah cpu_id_len2 EINVAL" \
	"dmah cpu_id_len8 EINVAL" "dmah ph_len4 EINVAL" "dmah ph_twice EINVAL" \
	"dmah unknown_attr_mandatory EPROTONOSUPPORT" \
	"dmah unknown_attr_optional 0"
# the process's affinity: with one possible CPU there is no CPU outside it
dmah_cpu_outside_affinity() {
	local possible
	read -r possible </sys/devices/system/cpu/possible
	if [ "$possible" = 0 ]; then
		has_line /run/dmah "dmah cpu_outside_affinity skipped (1 cpu)"
	else
		has_line /run/dmah "dmah cpu_outside_affinity EPERM"
	fi
}
check "dmah_cpu_outside_affinity" dmah_cpu_outside_affinity
check "dmah_mr_binding" lines /run/dmah \
	"mr vm_reg 0" "mr vm_free_dmah_busy EBUSY" "mr vm_dereg 0" \
	"mr vm_free_dmah 0" "mr pm_reg 0" "mr pm_free_dmah_busy EBUSY" \
	"mr pm_dereg 0" "mr pm_free_dmah 0" "mr pm_free_dmah_again ENOENT"
# a dma-buf (udmabuf over a memfd) MR with a persistent-memory handle
check "dmah_dmabuf_mr_binding" lines /run/dmah \
	"mr dmabuf_alloc_dmah 0" "mr dmabuf_reg 0" \
	"mr dmabuf_free_dmah_busy EBUSY" "mr dmabuf_dereg 0" \
	"mr dmabuf_free_dmah 0"
check "dmah_failed_mr_keeps_no_reference" lines /run/dmah \
	"mr reg_lkey_len2 EINVAL" "mr reg_iova_page_offset_differs EINVAL" \
	"mr reg_unmapped_memory EFAULT" "mr reg_lkey_unwritable EFAULT" \
	"mr bad_free_dmah 0"
check "dmah_bad_ioctl_input" lines /run/dmah \
	"ioctl hdr_length_short EINVAL" "ioctl hdr_length_long EINVAL" \
	"ioctl hdr_reserved_set EPROTONOSUPPORT" "ioctl wrong_driver_id EINVAL" \
	"ioctl unknown_method EPROTONOSUPPORT" \
	"ioctl unknown_mandatory_attr EPROTONOSUPPORT" \
	"ioctl unknown_driver_attr EPROTONOSUPPORT" \
	"ioctl idr_with_length EINVAL" "ioctl hdr_bad_pointer EFAULT"
check "dmah_other_context" lines /run/dmah \
	"ctx2 dmah_without_context EINVAL" "ctx2 get_context_bad_pointer EFAULT" \
	"ctx2 get_context 0" "ctx2 get_context_twice EINVAL" \
	"ctx2 free_dmah_of_ctx1 ENOENT" "ctx2 reg_mr_with_dmah_of_ctx1 ENOENT" \
	"ctx2 reg_mr_with_pd_as_dmah EINVAL" "ctx2 reg_mr_left_for_close 0" \
	"ctx2 close 0"
check "user_cq_created" lines /run/dmah \
	"cq create_ioctl 0" "cq create_write 0"

# nothing the program made outlives it: restrack counts as before
dmah_restrack_unchanged() {
	local before
	res_line /run/dmah-res0 || return 1
	before=$val
	res_line /run/dmah-res1 || return 1
	echo "before: $before"
	echo "after:  $val"
	[ "$before" = "$val" ]
}
check "dmah_restrack_unchanged" dmah_restrack_unchanged

# and rdmasim's own counts: no DMA handle, MR or PD left
# res_count file type: the count of <type> in debugfs' resources, in $val
res_count() {
	local what count rest
	while read -r what count rest; do
		[ "$what" = "$2" ] && { val=$count; return 0; }
	done <"$1"
	val=
	echo "$1: no $2"
	return 1
}
dmah_driver_counts_unchanged() {
	local t before
	res_count /run/dmah-dbg1 dmah || return 1
	if [ "$val" != 0 ]; then
		echo "dmah: $val after the run"
		return 1
	fi
	for t in pd mr; do
		res_count /run/dmah-dbg0 $t || return 1
		before=$val
		res_count /run/dmah-dbg1 $t || return 1
		[ "$before" = "$val" ] || {
			echo "$t: $before before, $val after"
			return 1
		}
	done
}
check "dmah_driver_counts_unchanged" dmah_driver_counts_unchanged
