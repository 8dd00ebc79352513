# shellcheck shell=sh
# shellcheck disable=SC2154 # val: set by guest/lib.sh's kv(), field() and res_line()
# SPDX-License-Identifier: GPL-2.0-only
#
# rdmasim: DMA handles and userspace verbs, sourced by guest/selftest.sh
# inside the UML test kernel with rdmasim0 loaded: tools/dmah's uverbs
# client (built on the host against 7.3's uapi headers, run through
# hostfs) allocates DMA handles with good and bad attributes, registers
# MRs bound to them, sends malformed requests and uses objects across
# contexts; its "<what> <case> <errno>" lines are checked here against
# the errno table of Documentation/rdmasim.rst, and restrack's counts
# must be what they were before it ran (the boot's kmemleak scan checks
# the rest). Uses check(), capture(), lines(), res_snapshot(),
# restrack_unchanged(), counts_unchanged() and cpu_outside_affinity() from
# guest/lib.sh, and $IB, $DBG and RSIM_MODDIR from guest/selftest.sh.

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

res_snapshot /run/dmah 0
rc=0
capture /run/dmah "$DMAH" -d rdmasim0 || rc=$?
echo "exit $rc" >>/run/dmah
res_snapshot /run/dmah 1

dmah_ran_clean() {
	has_line /run/dmah "exit 0" && has_line /run/dmah "result PASS (0 failures)" &&
		! has_line /run/dmah "FAIL*" >/dev/null
}
check "dmah_program_every_expectation" dmah_ran_clean

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
check "dmah_cpu_outside_affinity" cpu_outside_affinity /run/dmah
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
check "dmah_restrack_unchanged" restrack_unchanged /run/dmah

# and rdmasim's own counts: no DMA handle, MR or PD left
dmah_driver_counts_unchanged() {
	res_count /run/dmah-dbg1 dmah || return 1
	if [ "$val" != 0 ]; then
		echo "dmah: $val after the run"
		return 1
	fi
	counts_unchanged /run/dmah pd mr
}
check "dmah_driver_counts_unchanged" dmah_driver_counts_unchanged
