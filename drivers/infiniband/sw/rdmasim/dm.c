// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: device memory (ibv_alloc_dm).
 *
 * A device's on-chip memory, simulated: physically contiguous kernel
 * pages, the device's own (the data path reaches them through their
 * struct page, as it reaches memory a process pinned: no DMA mapping,
 * hence no bounce slot and no sync between the process's stores through
 * its mapping and the device's copies), which a process maps
 * into its address space (mmap on its uverbs file, at the offset the
 * driver's attribute of UVERBS_METHOD_DM_ALLOC returns, see
 * include/rdmasim/rdmasim-abi.h) so that its provider copies to and from
 * it (ibv_memcpy_to_dm), and which an MR can cover (reg_dm_mr, in mr.c;
 * zero-based, as the core requires) for the data path to read and write
 * like any registered memory. At most max_dm_size (256 KiB) each.
 *
 * The memory lives in an rdma_user_mmap_entry (umap.c): freeing the DM
 * removes the entry, and the pages go when the last mapping of them does.
 */

#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <rdma/uverbs_ioctl.h>

#define UVERBS_MODULE_NAME rdmasim_ib
#include <rdma/uverbs_named_ioctl.h>
#include <rdma/uverbs_std_types.h>
#include <rdmasim/rdmasim-abi.h>

#include "rdmasim.h"

/**
 * struct rsim_dm - a DM object
 * @ibdm: core object; must be first
 * @mem: its memory, which may outlive it in a process's mapping
 */
struct rsim_dm {
	struct ib_dm ibdm;
	struct rsim_umap *mem;
};

static struct rsim_dm *to_rsim_dm(struct ib_dm *ibdm)
{
	return container_of(ibdm, struct rsim_dm, ibdm);
}

/**
 * rsim_dm_page() - the page of a DM that holds a byte
 * @ibdm: the DM (the core keeps it while an MR covers it)
 * @offset: the byte's offset, inside the DM (the core checked it)
 *
 * The DM's pages are physically contiguous: the ones after it follow.
 *
 * Context: any.
 * Return: the page.
 */
struct page *rsim_dm_page(struct ib_dm *ibdm, u64 offset)
{
	return virt_to_page(to_rsim_dm(ibdm)->mem->vaddr + offset);
}

static struct ib_dm *rsim_alloc_dm(struct ib_device *ibdev,
				   struct ib_ucontext *uctx,
				   struct ib_dm_alloc_attr *attr,
				   struct uverbs_attr_bundle *attrs)
{
	struct rsim_dev *rsim = to_rsim_dev(ibdev);
	struct rsim_umap *mem;
	struct rsim_dm *dm;
	u64 offset;
	int err;

	if (!uctx)
		return ERR_PTR(-EOPNOTSUPP);
	if (!attr->length || attr->length > RSIM_DM_MAX || attr->flags ||
	    attr->alignment > PAGE_SHIFT)
		return ERR_PTR(-EINVAL);
	if (!rsim_res_get(rsim, RSIM_RES_DM))
		return ERR_PTR(-ENOMEM);
	err = -ENOMEM;
	dm = rsim_kzalloc_obj(*dm, GFP_KERNEL);
	mem = rsim_kzalloc_obj(*mem, GFP_KERNEL);
	if (!dm || !mem || rsim_should_fail(rsim, RSIM_FAULT_ALLOC))
		goto err_free;
	mem->kind = RSIM_UMAP_DM;
	mem->len = PAGE_ALIGN(attr->length);
	mem->vaddr = alloc_pages_exact(mem->len, GFP_KERNEL_ACCOUNT |
				       __GFP_ZERO | __GFP_NOWARN);
	if (!mem->vaddr)
		goto err_free;
	err = rdma_user_mmap_entry_insert(uctx, &mem->entry, mem->len);
	if (err)
		goto err_free_pages;
	/* from here on the entry owns the memory (umap.c) */
	dm->mem = mem;
	offset = rdma_user_mmap_get_offset(&mem->entry);
	err = uverbs_copy_to(attrs, RSIM_UVERBS_ATTR_ALLOC_DM_MMAP_OFFSET,
			     &offset, sizeof(offset));
	if (err) {
		rdma_user_mmap_entry_remove(&mem->entry);
		kfree(dm);
		rsim_res_put(rsim, RSIM_RES_DM);
		return ERR_PTR(err);
	}
	return &dm->ibdm;

err_free_pages:
	free_pages_exact(mem->vaddr, mem->len);
err_free:
	kfree(mem);
	kfree(dm);
	rsim_res_put(rsim, RSIM_RES_DM);
	return ERR_PTR(err);
}

/* the core refuses while an MR covers it (its use count) */
static int rsim_dealloc_dm(struct ib_dm *ibdm,
			   struct uverbs_attr_bundle *attrs)
{
	struct rsim_dm *dm = to_rsim_dm(ibdm);

	rdma_user_mmap_entry_remove(&dm->mem->entry);
	rsim_res_put(to_rsim_dev(ibdm->device), RSIM_RES_DM);
	kfree(dm);
	return 0;
}

ADD_UVERBS_ATTRIBUTES_SIMPLE(rsim_dm_alloc, UVERBS_OBJECT_DM,
			     UVERBS_METHOD_DM_ALLOC,
			     UVERBS_ATTR_PTR_OUT(RSIM_UVERBS_ATTR_ALLOC_DM_MMAP_OFFSET,
						 UVERBS_ATTR_TYPE(u64),
						 UA_MANDATORY));

static const struct uapi_definition rsim_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DM, &rsim_dm_alloc),
	{},
};

static const struct ib_device_ops rsim_dm_ops = {
	.alloc_dm = rsim_alloc_dm,
	.dealloc_dm = rsim_dealloc_dm,
};

/**
 * rsim_dm_set_ops() - give the device its DM verbs and their attribute
 * @ibdev: the device, before registration
 *
 * Context: process.
 */
void rsim_dm_set_ops(struct ib_device *ibdev)
{
	ib_set_device_ops(ibdev, &rsim_dm_ops);
	ibdev->driver_def = rsim_uapi_defs;
}
