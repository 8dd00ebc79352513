// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: memory regions.
 *
 * Fast-registration MRs (IB_MR_TYPE_MEM_REG and IB_MR_TYPE_SG_GAPS) hold at
 * most max_num_sg translation entries; map_mr_sg enforces that bound as
 * rxe and rdmavt do in their set_page callbacks, so that the walk of
 * ib_sg_to_pages() maps the largest prefix that fits and reports it. The
 * walk is rsim_sg_to_pages(), the core helper's own loop with the
 * translation written in place and the bounds checked on the way (one
 * pass, no call per page). Around it this file closes the core loop's
 * holes: page sizes are validated, sg entries whose end would wrap the
 * 64-bit address space (which the core loop turns into a one-page
 * "success") end the list, and a call that maps nothing leaves the MR
 * exactly as it was.
 */

#include <linux/overflow.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_umem.h>
#include <kunit/visibility.h>

#include "rdmasim.h"

/* ODP MRs of every device: none, and the data path never looks further */
atomic_t rsim_odp_mrs = ATOMIC_INIT(0);

void rsim_mr_init(struct rsim_dev *rsim)
{
	xa_init_flags(&rsim->mr_xa, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_BH);
	rsim->mr_next = 1;
}

void rsim_mr_exit(struct rsim_dev *rsim)
{
	WARN_ON(!xa_empty(&rsim->mr_xa));
	xa_destroy(&rsim->mr_xa);
}

/*
 * Allocate an MR with room for @max_segs translation entries, its key
 * index last, so that the index never names a half-built MR.
 */
static struct rsim_mr *rsim_mr_new(struct rsim_dev *rsim,
				   enum ib_mr_type type, int access,
				   u32 max_segs)
{
	struct rsim_mr *mr;
	u32 index;
	u8 variant;
	int err;

	if (!rsim_res_get(rsim, RSIM_RES_MR))
		return ERR_PTR(-ENOMEM);

	mr = rsim_should_fail(rsim, RSIM_FAULT_ALLOC) ? NULL :
	     rsim_kzalloc_obj(*mr, GFP_KERNEL);
	if (!mr) {
		err = -ENOMEM;
		goto err_res_put;
	}
	mr->rsim = rsim;
	spin_lock_init(&mr->lock);
	refcount_set(&mr->ref, 1);
	mr->type = type;
	mr->access = access;
	mr->state = RSIM_MR_FREE;
	mr->max_segs = max_segs;
	mr->hints = (struct rsim_mr_hints){ .cpu = -1, .ph = -1 };

	if (max_segs) {
		/* the descriptor list, then the registered translation */
		mr->segs = rsim_should_fail(rsim, RSIM_FAULT_ALLOC) ? NULL :
			   rsim_kzalloc_objs(*mr->segs, 2 * (size_t)max_segs,
					     GFP_KERNEL);
		if (!mr->segs) {
			err = -ENOMEM;
			goto err_free_mr;
		}
		mr->reg.mtt = mr->segs + max_segs;
	}

	if (rsim_should_fail(rsim, RSIM_FAULT_ALLOC))
		err = -ENOMEM;
	else
		err = xa_alloc_cyclic_bh(&rsim->mr_xa, &index, mr,
					 XA_LIMIT(1, RSIM_MR_INDEX_MAX),
					 &rsim->mr_next, GFP_KERNEL);
	if (err < 0) {
		/* -EBUSY: every index is taken */
		err = -ENOMEM;
		goto err_free_segs;
	}

	variant = (u8)atomic_inc_return(&rsim->key_variant);
	mr->index = index;
	mr->ibmr.lkey = (index << RSIM_KEY_VARIANT_BITS) | variant;
	mr->ibmr.rkey = mr->ibmr.lkey;
	mr->reg.key = mr->ibmr.lkey;
	return mr;

err_free_segs:
	kfree(mr->segs);
err_free_mr:
	kfree(mr);
err_res_put:
	rsim_res_put(rsim, RSIM_RES_MR);
	return ERR_PTR(err);
}

/**
 * rsim_mr_put() - drop a reference from rsim_mr_get() (or a checked range)
 * @mr: the MR
 *
 * Context: any but hard IRQ.
 */
void rsim_mr_put(struct rsim_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref)) {
		if (mr->odp)
			rsim_odp_free(mr);
		kvfree(mr->umtt);
		kfree(mr->segs);
		kfree(mr);
	}
}

/*
 * Unpin user memory. Where the core's mapping of it bounces (swiotlb),
 * the unmap copies each bounce slot back over the pages, and the slots
 * hold what the pages held at registration: the device wrote the pages
 * themselves (rsim_umem_mtt()). The slots are brought up to date first,
 * so that the copy back changes nothing.
 */
static void rsim_umem_release(struct ib_umem *umem)
{
	if (!umem->is_dmabuf)
		dma_sync_sgtable_for_device(umem->ibdev->dma_device,
					    &umem->sgt_append.sgt,
					    DMA_BIDIRECTIONAL);
	ib_umem_release(umem);
}

/*
 * Dereg: once the MR is unpublished and its registration is dead (under
 * its lock, so that no copy is half way through a page of it), nothing
 * reaches its memory; the data path's last reference frees the struct.
 */
static void rsim_mr_free(struct rsim_mr *mr)
{
	struct rsim_dev *rsim = mr->rsim;

	xa_erase_bh(&rsim->mr_xa, mr->index);
	spin_lock_bh(&mr->lock);
	mr->state = RSIM_MR_FREE;
	mr->reg.gen++;
	spin_unlock_bh(&mr->lock);
	if (mr->odp && mr->umem) {
		rsim_odp_dereg(mr);
		atomic_dec(&to_rsim_pd(mr->ibmr.pd)->odp_mrs);
		atomic_dec(&rsim_odp_mrs);
	} else if (mr->umem) {
		rsim_umem_release(mr->umem);
	}
	rsim_dmah_unbind(mr);
	rsim_res_put(rsim, RSIM_RES_MR);
	rsim_mr_put(mr);
}

static struct ib_mr *rsim_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
				   u32 max_num_sg)
{
	struct rsim_dev *rsim = to_rsim_dev(ibpd->device);
	struct rsim_mr *mr;

	/*
	 * DM, USER and DMA MRs come from their own verbs, INTEGRITY from
	 * ib_alloc_mr_integrity(): through alloc_mr they are invalid.
	 */
	if (type != IB_MR_TYPE_MEM_REG && type != IB_MR_TYPE_SG_GAPS)
		return ERR_PTR(-EINVAL);
	/* The core does not check max_num_sg against the device's limit. */
	if (!max_num_sg ||
	    max_num_sg > rsim->cfg.limits.max_fast_reg_page_list_len)
		return ERR_PTR(-EINVAL);

	mr = rsim_mr_new(rsim, type, 0, max_num_sg);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	return &mr->ibmr;
}

/**
 * rsim_mr_sg_prefix() - count the leading sg entries the MR can describe
 * @sgl: DMA-mapped scatterlist
 * @nents: entries in @sgl
 * @offset: bytes to skip in the first entry
 * @page_size: MR page size, or 0 for SG_GAPS (no page walk)
 *
 * An entry is describable if it has bytes and its end stays inside the
 * 64-bit DMA address space; for page-based MRs, rounding its end up to the
 * page size must not wrap either (ib_sg_to_pages() steps page_addr past
 * the end and would wrap to 0 and stop, or keep going).
 *
 * Return: the number of leading describable entries (0..@nents).
 */
VISIBLE_IF_KUNIT int rsim_mr_sg_prefix(struct scatterlist *sgl, int nents,
				       unsigned int offset, u64 page_size)
{
	struct scatterlist *sg;
	int i;

	for_each_sg(sgl, sg, nents, i) {
		u64 addr = sg_dma_address(sg) + offset;
		u64 len = sg_dma_len(sg) - offset;
		u64 end, last;

		if (!len || check_add_overflow(addr, len, &end))
			return i;
		if (page_size && check_add_overflow(end, page_size - 1, &last))
			return i;
		offset = 0;
	}
	return nents;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_mr_sg_prefix);

/*
 * SG_GAPS: one translation entry per sg entry, any alignment, page size
 * ignored; max_num_sg bounds entries (mlx5's KLM model). The MR's address
 * space runs from iova through the entries back to back.
 */
static int rsim_map_sg_gaps(struct rsim_mr *mr, struct scatterlist *sgl,
			    int nents, unsigned int *offset)
{
	struct scatterlist *sg;
	unsigned int off = *offset;
	u64 length = 0;
	int i;

	mr->nsegs = 0;
	for_each_sg(sgl, sg, nents, i) {
		if (mr->nsegs == mr->max_segs)
			break;
		mr->segs[mr->nsegs].addr = sg_dma_address(sg) + off;
		mr->segs[mr->nsegs].len = sg_dma_len(sg) - off;
		length += mr->segs[mr->nsegs].len;
		mr->nsegs++;
		off = 0;
	}
	mr->ibmr.iova = sg_dma_address(sgl) + *offset;
	mr->ibmr.length = length;
	*offset = 0;
	return i;
}

/**
 * rsim_sg_to_pages() - ib_sg_to_pages() for a MEM_REG MR, in one pass
 * @mr: the MR; its page size set, its translation rewritten
 * @sgl: DMA-mapped scatterlist
 * @sg_nents: entries in @sgl
 * @sg_offset_p: IN the offset into the first entry; OUT the offset into
 *	entry n (the return value) of the first byte not mapped
 *
 * The core helper's loop (drivers/infiniband/core/verbs.c), with what
 * its set_page callback did written in place (at most max_num_sg pages)
 * and rsim_mr_sg_prefix()'s bounds checked on the way: an entry the MR
 * cannot describe ends the list there. Calling the core helper after a
 * pass of rsim_mr_sg_prefix() gave the same results, but the extra pass
 * was about 40% of a 256-page map, and a call per page most of the rest
 * (make bench). The first entry must be one rsim_mr_sg_prefix() accepts.
 *
 * Context: any.
 * Return: the entries mapped, or -ENOMEM if not one byte fits.
 */
VISIBLE_IF_KUNIT int rsim_sg_to_pages(struct rsim_mr *mr,
				      struct scatterlist *sgl, int sg_nents,
				      unsigned int *sg_offset_p)
{
	struct ib_mr *ibmr = &mr->ibmr;
	u64 page_size = ibmr->page_size;
	u64 page_mask = ~(page_size - 1);
	unsigned int sg_offset = *sg_offset_p;
	unsigned int last_page_off = 0;
	u64 last_end_dma_addr = 0;
	struct scatterlist *sg;
	int i;

	ibmr->iova = sg_dma_address(sgl) + sg_offset;
	ibmr->length = 0;
	mr->nsegs = 0;
	for_each_sg(sgl, sg, sg_nents, i) {
		u64 dma_addr = sg_dma_address(sg) + sg_offset;
		u64 prev_addr = dma_addr;
		unsigned int dma_len = sg_dma_len(sg) - sg_offset;
		u64 page_addr = dma_addr & page_mask;
		u64 end_dma_addr, last;

		/* rsim_mr_sg_prefix()'s bounds: the list ends before it */
		if (!dma_len ||
		    check_add_overflow(dma_addr, (u64)dma_len, &end_dma_addr) ||
		    check_add_overflow(end_dma_addr, page_size - 1, &last))
			break;
		/*
		 * After the first entry, an end of entry i - 1 or a start of
		 * entry i off a page boundary: a gap stops the mapping, else
		 * the entry continues the last page
		 */
		if (i && (last_page_off || page_addr != dma_addr)) {
			if (last_end_dma_addr != dma_addr)
				break;
			goto next_page;
		}
		do {
			/* the authoritative bound: max_num_sg pages */
			if (unlikely(mr->nsegs >= mr->max_segs)) {
				sg_offset = prev_addr - sg_dma_address(sg);
				ibmr->length += prev_addr - dma_addr;
				*sg_offset_p = sg_offset;
				return i || sg_offset ? i : -ENOMEM;
			}
			mr->segs[mr->nsegs].addr = page_addr;
			mr->segs[mr->nsegs].len = page_size;
			mr->nsegs++;
			prev_addr = page_addr;
next_page:
			page_addr += page_size;
		} while (page_addr < end_dma_addr);

		ibmr->length += dma_len;
		last_end_dma_addr = end_dma_addr;
		last_page_off = end_dma_addr & ~page_mask;
		sg_offset = 0;
	}
	*sg_offset_p = 0;
	return i;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_sg_to_pages);

static bool rsim_page_size_ok(u64 page_size)
{
	return is_power_of_2(page_size) && (page_size & RSIM_PAGE_SIZE_CAP);
}

/*
 * What map_mr_sg may change, saved so that a call that maps nothing
 * leaves the MR as it was. ib_sg_to_pages() writes at most the first
 * translation entry before it gives up.
 */
struct rsim_mr_saved {
	u64 iova;
	u64 length;
	u32 nsegs;
	struct rsim_mr_seg seg0;
};

static void rsim_mr_save(const struct rsim_mr *mr, struct rsim_mr_saved *s)
{
	s->iova = mr->ibmr.iova;
	s->length = mr->ibmr.length;
	s->nsegs = mr->nsegs;
	s->seg0 = mr->segs[0];
}

static void rsim_mr_restore(struct rsim_mr *mr, const struct rsim_mr_saved *s)
{
	mr->ibmr.iova = s->iova;
	mr->ibmr.length = s->length;
	mr->nsegs = s->nsegs;
	mr->segs[0] = s->seg0;
}

/*
 * Returns the number of sg entries mapped, as ib_map_mr_sg() documents:
 * fewer than @sg_nents when max_num_sg (or a gap, for MEM_REG) stops the
 * mapping, with *@sg_offset set to where the caller resumes in the first
 * unmapped entry; 0 if not even the first entry's first byte could be
 * described within max_num_sg entries. Invalid input gets -EINVAL and
 * changes nothing, not even the page size the core stored.
 */
static int rsim_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sgl,
			  int sg_nents, unsigned int *sg_offset)
{
	struct rsim_mr *mr = to_rsim_mr(ibmr);
	unsigned int in_off = sg_offset ? *sg_offset : 0;
	unsigned int off = in_off;
	bool gaps = mr->type == IB_MR_TYPE_SG_GAPS;
	struct rsim_mr_saved saved;
	int nents, ret;

	if (mr->type != IB_MR_TYPE_MEM_REG && !gaps)
		goto err_inval;
	if (!gaps && !rsim_page_size_ok(ibmr->page_size))
		goto err_inval;
	if (sg_nents <= 0 || in_off > sg_dma_len(sgl))
		goto err_inval;
	/* a page walk checks the rest itself (rsim_sg_to_pages()) */
	nents = rsim_mr_sg_prefix(sgl, gaps ? sg_nents : 1, in_off,
				  gaps ? 0 : ibmr->page_size);
	if (!nents)
		goto err_inval;

	rsim_mr_save(mr, &saved);
	if (gaps)
		ret = rsim_map_sg_gaps(mr, sgl, nents, &off);
	else
		ret = rsim_sg_to_pages(mr, sgl, sg_nents, &off);

	/*
	 * Nothing mapped: ib_sg_to_pages() rolls back the last page it set,
	 * so a first entry that needs two pages in a one-page MR maps
	 * nothing; for an unaligned entry it then reports a negative
	 * length and an offset behind (or, wrapped, far beyond) the input:
	 * its rollback starts from the page-aligned address below the
	 * entry. Report 0 entries mapped and change nothing.
	 */
	if (ret <= 0 && (off <= in_off || off > sg_dma_len(sgl))) {
		rsim_mr_restore(mr, &saved);
		ibmr->page_size = mr->page_size;
		return 0;
	}

	mr->page_size = ibmr->page_size;
	/* where the MR's first byte sits in its first page */
	mr->first_off = gaps ? 0 : ibmr->iova & (ibmr->page_size - 1);
	if (sg_offset)
		*sg_offset = off;
	return ret;

err_inval:
	ibmr->page_size = mr->page_size;
	return -EINVAL;
}

/*
 * A DMA MR always allows local access: ib_alloc_pd() itself asks for
 * remote read and write without local write for IB_PD_UNSAFE_GLOBAL_RKEY
 * on devices with a local DMA lkey, so the local-write rule of
 * ib_check_mr_access() does not apply here.
 */
static struct ib_mr *rsim_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct rsim_dev *rsim = to_rsim_dev(ibpd->device);
	struct rsim_mr *mr;

	if (access & ~IB_ACCESS_SUPPORTED)
		return ERR_PTR(-EINVAL);

	mr = rsim_mr_new(rsim, IB_MR_TYPE_DMA, access, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	/* no translation: the whole DMA address space, unbounded */
	mr->state = RSIM_MR_VALID;
	mr->ibmr.iova = 0;
	mr->ibmr.length = U64_MAX;
	mr->reg.access = access | IB_ACCESS_LOCAL_WRITE;
	mr->reg.length = U64_MAX;
	return &mr->ibmr;
}

/*
 * Count the pages whose DMA address does not lead to their physical
 * address (each entry mapped alone, as dma-direct maps: a bounce slot
 * under swiotlb; an IOMMU's translation leads back to the page);
 * debugfs' umem_bounced shows that the data path's page view mattered.
 */
static void rsim_umem_count_bounced(struct rsim_dev *rsim, struct sg_table *sgt)
{
	struct scatterlist *sg;
	unsigned int n;
	u64 pages = 0;

	if (sgt->nents != sgt->orig_nents)
		return;
	for_each_sgtable_dma_sg(sgt, sg, n)
		if (rsim_dma_to_phys(rsim, sg_dma_address(sg)) != sg_phys(sg))
			pages += PAGE_ALIGN(sg->length) >> PAGE_SHIFT;
	if (!pages)
		return;
	spin_lock_bh(&rsim->stats_lock);
	rsim->dp.umem_bounced += pages;
	spin_unlock_bh(&rsim->stats_lock);
}

/*
 * The translation of pinned user memory, one entry per page, and the MR
 * VALID on it: the data path reaches user memory as it reaches a
 * fast-registered MR.
 *
 * Pages the process pinned are translated to themselves (the CPU's view
 * of the sg table ib_umem_get() built): the data path copies through
 * them, so that what the process reads is what the device wrote whatever
 * DMA address the core's mapping gave them (under swiotlb=force, a bounce
 * slot). A dma-buf's pages belong to its exporter, and an importer may
 * use only the DMA addresses of the attachment: those are translated,
 * reached as a kernel consumer's are.
 */
/*
 * The page translation of @length bytes of pinned memory: one entry per
 * page, the first from the start of the page @umem starts in. Returns the
 * array (*@npages entries) or an ERR_PTR.
 */
static struct rsim_mr_seg *rsim_umem_mtt(struct rsim_dev *rsim,
					 struct ib_umem *umem, u64 length,
					 size_t *npages)
{
	struct sg_table *sgt = &umem->sgt_append.sgt;
	struct rsim_mr_seg *mtt;
	struct scatterlist *sg;
	size_t i = 0;
	unsigned int n;
	u64 off;

	*npages = PAGE_ALIGN(ib_umem_offset(umem) + length) >> PAGE_SHIFT;
	mtt = rsim_should_fail(rsim, RSIM_FAULT_ALLOC) ? NULL :
	      kvcalloc(*npages, sizeof(*mtt), GFP_KERNEL_ACCOUNT);
	if (!mtt)
		return ERR_PTR(-ENOMEM);
	/* both views cover whole pages, the first from its start */
	if (umem->is_dmabuf) {
		for_each_sgtable_dma_sg(sgt, sg, n)
			for (off = 0; off < sg_dma_len(sg) && i < *npages;
			     off += PAGE_SIZE) {
				mtt[i].addr = sg_dma_address(sg) + off;
				mtt[i].len = PAGE_SIZE;
				i++;
			}
	} else {
		rsim_umem_count_bounced(rsim, sgt);
		for_each_sgtable_sg(sgt, sg, n)
			for (off = 0; off < sg->length && i < *npages;
			     off += PAGE_SIZE) {
				mtt[i].page = pfn_to_page(page_to_pfn(sg_page(sg)) +
							  (off >> PAGE_SHIFT));
				mtt[i].len = PAGE_SIZE;
				i++;
			}
	}
	if (i != *npages) {
		kvfree(mtt);
		return ERR_PTR(-EFAULT);
	}
	return mtt;
}

static int rsim_mr_umem_translate(struct rsim_mr *mr, u64 iova, u64 length,
				  int access)
{
	struct ib_umem *umem = mr->umem;
	size_t npages;

	mr->umtt = rsim_umem_mtt(mr->rsim, umem, length, &npages);
	if (IS_ERR(mr->umtt)) {
		int err = PTR_ERR(mr->umtt);

		mr->umtt = NULL;
		return err;
	}
	/* nobody can look the MR up yet: no lock needed */
	mr->reg.mtt = mr->umtt;
	mr->reg.nsegs = npages;
	mr->reg.pages = !umem->is_dmabuf;
	mr->reg.page_size = PAGE_SIZE;
	mr->reg.first_off = ib_umem_offset(umem);
	mr->reg.iova = iova;
	mr->reg.length = length;
	mr->reg.access = access;
	mr->reg.gen++;
	mr->state = RSIM_MR_VALID;
	return 0;
}

/*
 * what the user MR verbs check before they pin anything; @pmem: the MR's
 * memory is persistent (its DMA handle says so), which the right to
 * receive a persistent FLUSH needs (rxe's rule, for memory not pmem)
 */
static int rsim_user_mr_check(struct ib_pd *ibpd, u64 start, u64 length,
			      u64 iova, int access, bool pmem)
{
	struct rsim_dev *rsim = to_rsim_dev(ibpd->device);
	u64 end;

	if (!length || length > rsim->cfg.limits.max_mr_size ||
	    check_add_overflow(iova, length - 1, &end) ||
	    check_add_overflow(start, length - 1, &end))
		return -EINVAL;
	if ((access & RSIM_ACCESS_FLUSH_PERSISTENT) && !pmem)
		return -EINVAL;
	return ib_check_mr_access(ibpd->device, access);
}

/*
 * A user MR around pinned memory (@umem, or an error from pinning it):
 * translated, bound to @dmah, ready for the core. The MR is freed (and
 * the memory released) on failure.
 */
static struct ib_mr *rsim_user_mr_finish(struct rsim_mr *mr,
					 struct ib_umem *umem, u64 iova,
					 u64 length, int access,
					 struct ib_dmah *dmah)
{
	int err;

	if (IS_ERR(umem)) {
		rsim_mr_free(mr);
		return ERR_CAST(umem);
	}
	mr->umem = umem;
	err = rsim_mr_umem_translate(mr, iova, length, access);
	if (err) {
		rsim_mr_free(mr);
		return ERR_PTR(err);
	}
	rsim_dmah_bind(mr, dmah);
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	mr->ibmr.page_size = PAGE_SIZE;
	return &mr->ibmr;
}

/*
 * An on-demand-paging MR (odp.c): nothing pinned; explicit, or implicit
 * (@start 0, @length U64_MAX: the process's whole address space, which
 * no other check would let through). Not with a DMA handle: its hints
 * (a CPU, persistent memory) are not kept for faulted pages.
 */
static struct ib_mr *rsim_reg_odp_mr(struct ib_pd *ibpd, u64 start,
				     u64 length, u64 iova, int access,
				     struct ib_dmah *dmah)
{
	struct rsim_dev *rsim = to_rsim_dev(ibpd->device);
	struct rsim_mr *mr;
	int err;

	if (dmah)
		return ERR_PTR(-EOPNOTSUPP);
	if (start || length != U64_MAX || iova)
		err = rsim_user_mr_check(ibpd, start, length, iova, access,
					 false);
	else
		err = ib_check_mr_access(ibpd->device, access);
	if (err)
		return ERR_PTR(err);
	mr = rsim_mr_new(rsim, IB_MR_TYPE_USER, access, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	err = rsim_odp_init(mr, start, length, iova);
	if (err) {
		rsim_mr_free(mr);
		return ERR_PTR(err);
	}
	/* the core sets ibmr.pd after this returns; the data path needs it */
	atomic_inc(&to_rsim_pd(ibpd)->odp_mrs);
	atomic_inc(&rsim_odp_mrs);
	return &mr->ibmr;
}

/* reg_user_mr with the DMA handle, whether the kernel passes one or not */
static struct ib_mr *rsim_reg_user_mr_dmah(struct ib_pd *ibpd, u64 start,
					   u64 length, u64 iova, int access,
					   struct ib_dmah *dmah,
					   struct ib_udata *udata)
{
	struct rsim_dev *rsim = to_rsim_dev(ibpd->device);
	struct ib_umem *umem;
	struct rsim_mr *mr;
	int err;

	if (access & IB_ACCESS_ON_DEMAND)
		return rsim_reg_odp_mr(ibpd, start, length, iova, access, dmah);
	err = rsim_user_mr_check(ibpd, start, length, iova, access,
				 rsim_dmah_is_pmem(dmah));
	if (err)
		return ERR_PTR(err);
	mr = rsim_mr_new(rsim, IB_MR_TYPE_USER, access, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	/* pins writable iff IB_ACCESS_LOCAL_WRITE (ib_umem_get) */
	umem = rsim_should_fail(rsim, RSIM_FAULT_ALLOC) ? ERR_PTR(-ENOMEM) :
	       rsim_umem_get(ibpd->device, start, length, access);
	return rsim_user_mr_finish(mr, umem, iova, length, access, dmah);
}

/*
 * A dma-buf MR: the exporter's pages, pinned and mapped for the device
 * (ib_umem_dmabuf_get_pinned(); the core trims the mapping to whole pages
 * around [@offset, @offset + @length)), translated like pinned user
 * memory. Takes a DMA handle where the kernel passes one.
 */
static struct ib_mr *rsim_reg_user_mr_dmabuf(struct ib_pd *ibpd, u64 offset,
					     u64 length, u64 iova, int fd,
					     int access,
					     RSIM_DMAH_PARAM
					     RSIM_DMABUF_EXTRA(extra))
{
	struct rsim_dev *rsim = to_rsim_dev(ibpd->device);
	struct ib_umem_dmabuf *ud;
	struct rsim_mr *mr;
	int err;

	/* a dma-buf's pages are the exporter's: nothing to fault */
	if (access & IB_ACCESS_ON_DEMAND)
		return ERR_PTR(-EOPNOTSUPP);
	err = rsim_user_mr_check(ibpd, offset, length, iova, access,
				 rsim_dmah_is_pmem(RSIM_DMAH_ARG));
	if (err)
		return ERR_PTR(err);
	mr = rsim_mr_new(rsim, IB_MR_TYPE_USER, access, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	ud = rsim_should_fail(rsim, RSIM_FAULT_ALLOC) ? ERR_PTR(-ENOMEM) :
	     ib_umem_dmabuf_get_pinned(ibpd->device, offset, length, fd,
				       access);
	return rsim_user_mr_finish(mr, IS_ERR(ud) ? ERR_CAST(ud) : &ud->umem,
				   iova, length, access, RSIM_DMAH_ARG);
}

static struct ib_mr *rsim_reg_user_mr(struct ib_pd *ibpd, u64 start,
				      u64 length, u64 iova, int access,
				      RSIM_DMAH_PARAM
				      struct ib_udata *udata)
{
	return rsim_reg_user_mr_dmah(ibpd, start, length, iova, access,
				     RSIM_DMAH_ARG, udata);
}

/*
 * An MR over device memory (dm.c): zero-based (the core insists), one
 * segment of the DM's contiguous pages from @attr->offset, valid at once.
 * The core checked the range against the DM and keeps the DM while the
 * MR exists.
 */
static struct ib_mr *rsim_reg_dm_mr(struct ib_pd *ibpd, struct ib_dm *dm,
				    struct ib_dm_mr_attr *attr,
				    struct uverbs_attr_bundle *attrs)
{
	struct rsim_dev *rsim = to_rsim_dev(ibpd->device);
	int access = attr->access_flags;
	struct rsim_mr *mr;
	int err;

	/*
	 * a zero-length MR is allowed, as on mlx5: nothing reaches it; device
	 * memory is not persistent memory
	 */
	if (access & RSIM_ACCESS_FLUSH_PERSISTENT)
		return ERR_PTR(-EINVAL);
	/* device memory is always there */
	if (access & IB_ACCESS_ON_DEMAND)
		return ERR_PTR(-EOPNOTSUPP);
	err = ib_check_mr_access(ibpd->device, access);
	if (err)
		return ERR_PTR(err);
	mr = rsim_mr_new(rsim, IB_MR_TYPE_DM, access, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->umtt = rsim_should_fail(rsim, RSIM_FAULT_ALLOC) ? NULL :
		   kvcalloc(1, sizeof(*mr->umtt), GFP_KERNEL_ACCOUNT);
	if (!mr->umtt) {
		rsim_mr_free(mr);
		return ERR_PTR(-ENOMEM);
	}
	/* the DM's pages, from the start of the one @attr->offset is in */
	mr->umtt[0].page = rsim_dm_page(dm, attr->offset);
	mr->umtt[0].len = offset_in_page(attr->offset) + attr->length;
	/* nobody can look the MR up yet: no lock needed */
	mr->reg.mtt = mr->umtt;
	mr->reg.nsegs = 1;
	mr->reg.pages = true;
	mr->reg.page_size = 0;
	mr->reg.first_off = offset_in_page(attr->offset);
	mr->reg.iova = 0;
	mr->reg.length = attr->length;
	mr->reg.access = access;
	mr->reg.gen++;
	mr->state = RSIM_MR_VALID;
	mr->ibmr.iova = 0;
	mr->ibmr.length = attr->length;
	return &mr->ibmr;
}

/*
 * rereg_user_mr, in place, as mlx5 does where it can: the MR keeps its
 * keys (a peer that learned them goes on using them), and what the flags
 * change takes effect under the MR's lock with a new generation, so that
 * a copy in flight through the old registration stops as after an
 * invalidation. A new translation (or new rights that need write access
 * to memory pinned read-only) pins the memory again first; on any failure
 * the MR is as it was. The core updates the MR's PD, iova and length. A
 * dma-buf MR keeps no user address to pin again: only a new translation
 * may replace it.
 */
static struct ib_mr *rsim_rereg_user_mr(struct ib_mr *ibmr, int flags,
					u64 start, u64 length, u64 iova,
					int access, struct ib_pd *pd,
					struct ib_udata *udata)
{
	struct rsim_mr *mr = to_rsim_mr(ibmr);
	struct ib_umem *umem = NULL, *old_umem = NULL;
	struct rsim_mr_seg *mtt = NULL, *old_mtt = NULL;
	bool repin = flags & IB_MR_REREG_TRANS;
	size_t npages = 0;
	int err;

	if (!(flags & IB_MR_REREG_ACCESS))
		access = mr->access;
	/* an ODP MR's notifier and pages belong to its range as it is */
	if (!mr->umem || mr->odp ||
	    ((access ^ mr->access) & IB_ACCESS_ON_DEMAND))
		return ERR_PTR(-EOPNOTSUPP);
	if (!repin && (access & IB_ACCESS_LOCAL_WRITE) &&
	    !mr->umem->writable) {
		if (mr->umem->is_dmabuf)
			return ERR_PTR(-EOPNOTSUPP);
		repin = true;
		start = mr->umem->address;
		length = ibmr->length;
		iova = ibmr->iova;
	} else if (!(flags & IB_MR_REREG_TRANS)) {
		length = ibmr->length;
		iova = ibmr->iova;
	}
	err = rsim_user_mr_check(pd, repin ? start : 0, length, iova, access,
				 mr->hints.pmem);
	if (err)
		return ERR_PTR(err);
	if (repin) {
		umem = rsim_should_fail(mr->rsim, RSIM_FAULT_ALLOC) ?
		       ERR_PTR(-ENOMEM) :
		       rsim_umem_get(ibmr->device, start, length, access);
		if (IS_ERR(umem))
			return ERR_CAST(umem);
		mtt = rsim_umem_mtt(mr->rsim, umem, length, &npages);
		if (IS_ERR(mtt)) {
			rsim_umem_release(umem);
			return ERR_CAST(mtt);
		}
	}

	spin_lock_bh(&mr->lock);
	if (mr->nmw) {
		/* windows are bound to the registration as it is */
		spin_unlock_bh(&mr->lock);
		if (umem)
			rsim_umem_release(umem);
		kvfree(mtt);
		return ERR_PTR(-EBUSY);
	}
	if (repin) {
		old_umem = mr->umem;
		old_mtt = mr->umtt;
		mr->umem = umem;
		mr->umtt = mtt;
		mr->reg.mtt = mtt;
		mr->reg.nsegs = npages;
		mr->reg.pages = true;
		mr->reg.page_size = PAGE_SIZE;
		mr->reg.first_off = ib_umem_offset(umem);
		mr->reg.iova = iova;
		mr->reg.length = length;
	}
	mr->access = access;
	mr->reg.access = access;
	mr->reg.gen++;
	spin_unlock_bh(&mr->lock);

	/* no copy reads the old translation any more */
	if (old_umem)
		rsim_umem_release(old_umem);
	kvfree(old_mtt);
	return NULL;
}

/*
 * The data path's view of MRs. REG_MR, LOCAL_INV, remote invalidation and
 * dereg change a registration under the MR's lock and bump its
 * generation; the data path checks an access under that lock, keeps the
 * generation it saw, and copies each page under the lock again, stopping
 * if the generation moved (dp.c).
 */

static bool rsim_mr_is_fast_reg(const struct rsim_mr *mr)
{
	return mr->type == IB_MR_TYPE_MEM_REG || mr->type == IB_MR_TYPE_SG_GAPS;
}

/**
 * rsim_mr_get() - the MR a key names, whatever its variant, held
 * @rsim: device
 * @key: an lkey or rkey
 *
 * Context: process or softirq; takes the key table's lock with BH off.
 * Return: the MR, or NULL if the key names none (a memory window's key
 * names none: mw.c).
 */
struct rsim_mr *rsim_mr_get(struct rsim_dev *rsim, u32 key)
{
	struct rsim_mr *mr = NULL;
	void *entry;

	if (!RSIM_KEY_INDEX(key))
		return NULL;
	xa_lock_bh(&rsim->mr_xa);
	entry = xa_load(&rsim->mr_xa, RSIM_KEY_INDEX(key));
	if (entry && !xa_pointer_tag(entry)) {
		mr = entry;
		if (!refcount_inc_not_zero(&mr->ref))
			mr = NULL;
	}
	xa_unlock_bh(&rsim->mr_xa);
	return mr;
}

/**
 * rsim_mr_fast_reg() - execute an IB_WR_REG_MR work request
 * @rsim: device
 * @pd: the posting QP's PD
 * @ibmr: reg_wr(wr)->mr
 * @key: reg_wr(wr)->key: the MR's key index with any 8-bit variant
 * @access: reg_wr(wr)->access
 *
 * The MR must belong to this device and @pd, be a fast-registration MR in
 * the FREE state (registering a valid MR needs a LOCAL_INV first, as in
 * rxe and the IBA), have a translation from map_mr_sg that covers its
 * length, and @key must name it. The translation is copied, so a later
 * map_mr_sg does not change the registration.
 *
 * Context: process or softirq; takes the MR's lock with BH off.
 * Return: IB_WC_SUCCESS or IB_WC_LOC_QP_OP_ERR.
 */
enum ib_wc_status rsim_mr_fast_reg(struct rsim_dev *rsim, struct ib_pd *pd,
				   struct ib_mr *ibmr, u32 key, int access)
{
	struct rsim_mr *mr = rsim_mr_get(rsim, key);
	enum ib_wc_status status = IB_WC_LOC_QP_OP_ERR;
	u64 cap = 0;
	u32 i;

	if (!mr)
		return status;
	if (&mr->ibmr != ibmr || ibmr->pd != pd || !rsim_mr_is_fast_reg(mr) ||
	    !mr->nsegs || !ibmr->length ||
	    (access & RSIM_ACCESS_FLUSH_PERSISTENT) ||
	    ib_check_mr_access(ibmr->device, access))
		goto out_put;
	/* a length the consumer raised past the translation is refused */
	if (mr->type == IB_MR_TYPE_MEM_REG)
		cap = (u64)mr->nsegs * mr->page_size - mr->first_off;
	else
		for (i = 0; i < mr->nsegs; i++)
			cap += mr->segs[i].len;
	if (ibmr->length > cap)
		goto out_put;

	spin_lock_bh(&mr->lock);
	if (mr->state == RSIM_MR_FREE) {
		memcpy(mr->reg.mtt, mr->segs, mr->nsegs * sizeof(*mr->segs));
		mr->reg.nsegs = mr->nsegs;
		mr->reg.page_size = mr->type == IB_MR_TYPE_MEM_REG ?
				    mr->page_size : 0;
		mr->reg.first_off = mr->first_off;
		mr->reg.iova = ibmr->iova;
		mr->reg.length = ibmr->length;
		mr->reg.access = access;
		mr->reg.key = key;
		mr->reg.gen++;
		mr->access = access;
		mr->ibmr.lkey = key;
		mr->ibmr.rkey = key;
		mr->state = RSIM_MR_VALID;
		status = IB_WC_SUCCESS;
	}
	spin_unlock_bh(&mr->lock);
out_put:
	rsim_mr_put(mr);
	return status;
}

/**
 * rsim_mr_invalidate() - execute LOCAL_INV, or SEND_WITH_INV at the responder
 * @rsim: device
 * @qp: the executing QP (the responder, for @remote)
 * @key: the key to invalidate, variant included: a valid
 *	fast-registration MR's with no window bound, or a bound type 2
 *	window's (mw.c)
 * @remote: SEND_WITH_INV: a window must be bound to @qp
 *
 * When this returns, no access checked against the registration (or the
 * window) reads or writes its memory any more.
 *
 * Context: process or softirq; takes the MR's lock with BH off.
 * Return: IB_WC_SUCCESS, or IB_WC_LOC_QP_OP_ERR (no such key, another
 * variant, not a fast-registration MR, another PD, not valid, windows
 * bound to it; a window of type 1, not bound, or bound to another QP).
 */
enum ib_wc_status rsim_mr_invalidate(struct rsim_dev *rsim,
				     const struct rsim_qp *qp, u32 key,
				     bool remote)
{
	struct rsim_mr *mr = rsim_mr_get(rsim, key);
	enum ib_wc_status status = IB_WC_LOC_QP_OP_ERR;
	struct rsim_mw *mw;

	if (!mr) {
		mw = rsim_mw_get(rsim, key);
		if (!mw)
			return status;
		if (!rsim_mw_invalidate(mw, qp, key, remote))
			status = IB_WC_SUCCESS;
		rsim_mw_put(mw);
		return status;
	}
	spin_lock_bh(&mr->lock);
	if (rsim_mr_is_fast_reg(mr) && mr->ibmr.pd == qp->ibqp.pd &&
	    mr->state == RSIM_MR_VALID && mr->reg.key == key && !mr->nmw) {
		mr->state = RSIM_MR_FREE;
		mr->reg.gen++;
		status = IB_WC_SUCCESS;
	}
	spin_unlock_bh(&mr->lock);
	rsim_mr_put(mr);
	return status;
}

/**
 * rsim_mr_lookup() - check an access to registered memory
 * @rsim: device
 * @qp: the accessing QP
 * @key: lkey (local) or rkey (@remote): an MR's, or a bound memory
 *	window's (remote only; mw.c)
 * @remote: @key is an rkey; the local DMA lkey is not one
 * @addr: first address
 * @len: bytes; a zero-length access is not checked at all
 * @access: IB_ACCESS_* the access needs (0 for a local read)
 * @ref: the checked range, on success; release with rsim_mr_refs_put()
 *
 * The key must name a valid MR of this device, variant included, in the
 * QP's PD, whose registration grants @access and contains
 * [@addr, @addr + @len); or a window bound so (rsim_mw_lookup()).
 *
 * Context: process or softirq.
 * Return: 0 or -EACCES.
 */
int rsim_mr_lookup(struct rsim_dev *rsim, const struct rsim_qp *qp, u32 key,
		   bool remote, u64 addr, u64 len, int access,
		   struct rsim_mem_ref *ref)
{
	return rsim_mr_lookup_pd(rsim, qp, qp->ibqp.pd, key, remote, addr, len,
				 access, ref);
}

/**
 * rsim_mr_lookup_pd() - rsim_mr_lookup() in a PD other than the QP's
 * @rsim: device
 * @qp: the QP the access is for (a type 2 window's binding)
 * @pd: the PD the key must be of: an XRC TGT QP has none, and its
 *	accesses are checked in the PD of the XRC SRQ the WR names
 * @key: the lkey or rkey
 * @remote: an rkey
 * @addr: first address
 * @len: bytes
 * @access: IB_ACCESS_* needed
 * @ref: the checked range, on success
 *
 * Context: process or softirq.
 * Return: 0 or -EACCES.
 */
int rsim_mr_lookup_pd(struct rsim_dev *rsim, const struct rsim_qp *qp,
		      struct ib_pd *pd, u32 key, bool remote, u64 addr,
		      u64 len, int access, struct rsim_mem_ref *ref)
{
	struct rsim_mw *mw;
	struct rsim_mr *mr;
	u64 off;
	bool ok;
	int err;

	*ref = (struct rsim_mem_ref){ .rsim = rsim, .len = len };
	/* a zero-length access checks nothing (IBA: no R_Key check) */
	if (!len)
		return 0;
	if (key == RSIM_LOCAL_DMA_LKEY && !remote) {
		/* never for userspace: a user QP's PD has a uobject */
		if (pd->uobject)
			return -EACCES;
		/* the whole DMA address space, any PD, local access only */
		ref->off = addr;
		return addr + len - 1 < addr ? -EACCES : 0;
	}
	mr = rsim_mr_get(rsim, key);
	if (!mr) {
		/* a window's rkey; never an lkey (IBA 10.6.7.2) */
		mw = remote ? rsim_mw_get(rsim, key) : NULL;
		if (!mw)
			return -EACCES;
		err = rsim_mw_lookup(mw, qp, key, addr, len, access, ref);
		rsim_mw_put(mw);
		return err;
	}
	spin_lock_bh(&mr->lock);
	off = addr - mr->reg.iova;
	ok = mr->state == RSIM_MR_VALID && mr->reg.key == key &&
	     mr->ibmr.pd == pd && (mr->reg.access & access) == access &&
	     rsim_range_in(mr->reg.iova, mr->reg.length, addr, len);
	ref->gen = mr->reg.gen;
	spin_unlock_bh(&mr->lock);
	if (!ok) {
		rsim_mr_put(mr);
		return -EACCES;
	}
	ref->mr = mr;
	ref->off = off;
	return 0;
}

/**
 * rsim_mr_key_range() - the whole range an rkey names
 * @rsim: device
 * @key: an rkey: an MR's or a bound memory window's
 * @addr: its first address, on success
 * @len: its bytes, on success
 *
 * What a FLUSH of selectivity level IB_FLUSH_MR covers. Nothing else is
 * checked: the caller looks the range up with rsim_mr_lookup() after,
 * which checks the key, PD and rights again, with the range as it then is.
 *
 * Context: process or softirq; takes the MR's or the window's lock with
 * BH off.
 * Return: 0, or -EACCES if the key names no registration or bound window.
 */
int rsim_mr_key_range(struct rsim_dev *rsim, u32 key, u64 *addr, u64 *len)
{
	struct rsim_mw *mw;
	struct rsim_mr *mr;
	int err = -EACCES;

	mr = rsim_mr_get(rsim, key);
	if (mr) {
		spin_lock_bh(&mr->lock);
		if (mr->state == RSIM_MR_VALID && mr->reg.key == key) {
			*addr = mr->reg.iova;
			*len = mr->reg.length;
			err = 0;
		}
		spin_unlock_bh(&mr->lock);
		rsim_mr_put(mr);
		return err;
	}
	mw = rsim_mw_get(rsim, key);
	if (!mw)
		return err;
	spin_lock_bh(&mw->lock);
	if (mw->bound && mw->rkey == key) {
		*addr = mw->addr;
		*len = mw->length;
		err = 0;
	}
	spin_unlock_bh(&mw->lock);
	rsim_mw_put(mw);
	return err;
}

/**
 * rsim_mr_refs_put() - release the MRs of checked ranges
 * @refs: ranges from rsim_mr_lookup()
 * @n: entries
 *
 * Context: any but hard IRQ.
 */
void rsim_mr_refs_put(struct rsim_mem_ref *refs, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		if (refs[i].mr)
			rsim_mr_put(refs[i].mr);
		if (refs[i].mw)
			rsim_mw_put(refs[i].mw);
		refs[i].mr = NULL;
		refs[i].mw = NULL;
	}
}

/*
 * Kernel MRs must never fail dereg: the core has dropped restrack already
 * (no kernel consumer binds windows). A process's MR with windows bound
 * is refused (IBA 10.6.7.2.6), as rxe refuses it; its windows' dealloc
 * comes first when the process's objects are torn down, or the core
 * tries again.
 */
static int rsim_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct rsim_mr *mr = to_rsim_mr(ibmr);
	bool busy;

	spin_lock_bh(&mr->lock);
	busy = udata && mr->nmw;
	if (!busy)
		mr->state = RSIM_MR_FREE;	/* no bind finds it valid now */
	spin_unlock_bh(&mr->lock);
	if (busy)
		return -EBUSY;
	rsim_mr_free(mr);
	return 0;
}

const struct ib_device_ops rsim_mr_ops = {
	.alloc_mr = rsim_alloc_mr,
	.dereg_mr = rsim_dereg_mr,
	.get_dma_mr = rsim_get_dma_mr,
	.map_mr_sg = rsim_map_mr_sg,
	.reg_user_mr = rsim_reg_user_mr,
	.reg_user_mr_dmabuf = rsim_reg_user_mr_dmabuf,
	.rereg_user_mr = rsim_rereg_user_mr,
	.reg_dm_mr = rsim_reg_dm_mr,
};
