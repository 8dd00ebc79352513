/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rdmasim: what the kernel driver and its libibverbs provider
 * (tools/provider) agree on beyond the core's uverbs ABI. Included by
 * both; only types every compiler has.
 */
#ifndef RDMASIM_ABI_H
#define RDMASIM_ABI_H

/* the uverbs ABI version the driver reports and the provider accepts */
#define RSIM_UVERBS_ABI_VERSION 1

/*
 * The driver's attribute of UVERBS_METHOD_DM_ALLOC (the driver namespace,
 * UVERBS_ID_NS_SHIFT = 12): the mmap offset of the device memory, a u64
 * the provider maps it with on its command fd.
 */
enum rsim_uverbs_dm_alloc_attrs {
	RSIM_UVERBS_ATTR_ALLOC_DM_MMAP_OFFSET = 1U << 12,
};

#endif /* RDMASIM_ABI_H */
