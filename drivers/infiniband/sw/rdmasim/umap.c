// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: memory a process maps from its uverbs file.
 *
 * Two kinds, each an rdma_user_mmap_entry of the process's context whose
 * offset the driver hands the provider:
 *
 * - device memory (dm.c): physically contiguous pages, mapped with
 *   rdma_user_mmap_io(), so that the core zaps the mapping when the device
 *   goes away;
 * - queue rings (cq.c): pages allocated one by one and charged to the
 *   process (GFP_KERNEL_ACCOUNT), which the kernel reaches through a vmap()
 *   of them and the process through vm_insert_pages(), as io_uring maps
 *   its rings. A mapped page holds a reference of its own, so a ring whose
 *   queue is destroyed (or whose device goes) stays valid memory in the
 *   process until it unmaps it; nothing of the device is reached through
 *   it.
 *
 * The memory belongs to the entry: the object that made it removes the
 * entry when it goes, and the memory is freed with the entry's last
 * reference (rsim_mmap_free()), never under an mmap() in progress.
 */

#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "rdmasim.h"

/**
 * rsim_umap_ring_new() - pages for a ring, mappable by @uctx's process
 * @uctx: the process's context
 * @len: bytes (rounded up to whole pages)
 *
 * The pages are zeroed and charged to the caller. The entry owns them:
 * rdma_user_mmap_entry_remove() it when its object goes.
 *
 * Context: process; sleeps.
 * Return: the mapping (its vaddr the kernel's view), or an ERR_PTR.
 */
struct rsim_umap *rsim_umap_ring_new(struct ib_ucontext *uctx, size_t len)
{
	struct rsim_umap *m;
	unsigned int i;
	int err = -ENOMEM;

	m = rsim_kzalloc_obj(*m, GFP_KERNEL_ACCOUNT);
	if (!m)
		return ERR_PTR(-ENOMEM);
	m->kind = RSIM_UMAP_RING;
	m->len = PAGE_ALIGN(len);
	m->npages = m->len >> PAGE_SHIFT;
	m->pages = kvcalloc(m->npages, sizeof(*m->pages), GFP_KERNEL_ACCOUNT);
	if (!m->pages)
		goto err_free;
	for (i = 0; i < m->npages; i++) {
		m->pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!m->pages[i])
			goto err_pages;
	}
	m->vaddr = vmap(m->pages, m->npages, VM_MAP, PAGE_KERNEL);
	if (!m->vaddr)
		goto err_pages;
	err = rdma_user_mmap_entry_insert(uctx, &m->entry, m->len);
	if (err)
		goto err_vunmap;
	return m;

err_vunmap:
	vunmap(m->vaddr);
err_pages:
	while (i--)
		__free_page(m->pages[i]);
	kvfree(m->pages);
err_free:
	kfree(m);
	return ERR_PTR(err);
}

/**
 * rsim_umap_uctx() - the context of a create verb, if it maps such queues
 * @udata: the create verb's udata, or NULL (a kernel caller)
 * @what: RSIM_UCTX_MAP_CQ, _RQ or _SQ
 *
 * Context: process.
 * Return: the process's context if its provider asked for @what and got
 *	it (alloc_ucontext), else NULL.
 */
struct ib_ucontext *rsim_umap_uctx(struct ib_udata *udata, u32 what)
{
	struct rsim_ucontext *uc;

	if (!udata)
		return NULL;
	uc = rdma_udata_to_drv_context(udata, struct rsim_ucontext, ibuc);
	return uc && (uc->map & what) ? &uc->ibuc : NULL;
}

/**
 * rsim_umap_offset() - where the process maps @m
 * @m: the mapping
 *
 * Context: any.
 * Return: the offset for mmap() on the uverbs file.
 */
u64 rsim_umap_offset(struct rsim_umap *m)
{
	return rdma_user_mmap_get_offset(&m->entry);
}

static void rsim_umap_free(struct rsim_umap *m)
{
	unsigned int i;

	if (m->kind == RSIM_UMAP_DM) {
		free_pages_exact(m->vaddr, m->len);
	} else {
		vunmap(m->vaddr);
		/* a page the process still maps lives on with its mapping */
		for (i = 0; i < m->npages; i++)
			__free_page(m->pages[i]);
		kvfree(m->pages);
	}
	kfree(m);
}

/* the process maps a DM or a ring at the offset the driver gave it */
static int rsim_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *entry;
	unsigned long npages;
	struct rsim_umap *m;
	int err;

	/* the entry's whole length, no more and no less (the core checks) */
	entry = rdma_user_mmap_entry_get(uctx, vma);
	if (!entry)
		return -EINVAL;
	m = container_of(entry, struct rsim_umap, entry);
	if (m->kind == RSIM_UMAP_DM) {
		err = rdma_user_mmap_io(uctx, vma,
					PHYS_PFN(virt_to_phys(m->vaddr)),
					vma->vm_end - vma->vm_start,
					vma->vm_page_prot, entry);
	} else if (vma->vm_flags & VM_EXEC) {
		err = -EPERM;
	} else {
		/*
		 * no fork's copy, no mremap() growing it, not in a core dump;
		 * and never executable: no mprotect(PROT_EXEC) later either
		 */
		rsim_vm_flags_set(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
		rsim_vm_flags_clear(vma, VM_MAYEXEC);
		npages = m->npages;
		err = vm_insert_pages(vma, vma->vm_start, m->pages, &npages);
	}
	rdma_user_mmap_entry_put(entry);
	return err;
}

/* the last reference to an entry: its object is gone, so is every mmap() */
static void rsim_mmap_free(struct rdma_user_mmap_entry *entry)
{
	rsim_umap_free(container_of(entry, struct rsim_umap, entry));
}

static const struct ib_device_ops rsim_umap_ops = {
	.mmap = rsim_mmap,
	.mmap_free = rsim_mmap_free,
};

/**
 * rsim_umap_set_ops() - give the device its mmap and mmap_free ops
 * @ibdev: the device, before registration
 *
 * Context: process.
 */
void rsim_umap_set_ops(struct ib_device *ibdev)
{
	ib_set_device_ops(ibdev, &rsim_umap_ops);
}
