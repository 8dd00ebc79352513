// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: on-demand paging (ODP) MRs, the kernel's way: the core's
 * ib_umem_odp and its mmu_interval_notifier, pages faulted with
 * hmm_range_fault() when the data path needs them.
 *
 * An ODP MR pins nothing. The device's translation of it is @pages of a
 * &struct rsim_odp_part: one word per page, the struct page and whether
 * it may be written, or 0 where the device has no translation. It is
 * written only with the umem's umem_mutex held (which orders it against
 * the MMU notifier, the core's rule) and under the MR's lock (which orders
 * it against the data path's copies); the data path reads it under the
 * MR's lock, page by page, as it reads every registration (dp.c).
 *
 * - A fault (rsim_odp_fault()): the core's ib_umem_odp_map_dma_and_lock()
 *   faults the range in the owning process's mm and returns with
 *   umem_mutex held, its sequence checked against invalidations; the
 *   pages are mapped for the DMA device where the core leaves that to the
 *   driver (7.x), then published. Only a context that may sleep faults:
 *   the device's worker, or advise_mr's caller or work item. A WR that
 *   may touch an ODP MR therefore runs on the worker (dp.c).
 * - An invalidation (the notifier): under umem_mutex and the MR's lock
 *   the range's words go to 0, so that no copy reaches those pages once
 *   the lock drops; then the core unmaps them (and marks written pages
 *   dirty). A copy that finds a 0 (or a read-only page it must write)
 *   stops with -EAGAIN, lets go of the lock, faults and goes on where it
 *   stopped: the data path never trusts a translation it did not check
 *   under the lock.
 * - Implicit ODP (start 0, length U64_MAX: the whole address space): the
 *   core's parent umem holds only the mm; a child umem with its own
 *   notifier covers each 1 GiB the data path touches (mlx5's model),
 *   made on the first fault there and kept until dereg; @parts finds it;
 *   RSIM_ODP_MAX_CHILDREN of them at most.
 *
 * Lifetime: @live (a rwsem) is held for reading by every fault and for
 * writing by dereg, which then releases the umems; faults that come
 * later find @dead. advise_mr's asynchronous work holds the MR (a
 * reference) and is counted in @pending, which dereg waits for.
 */

#include <linux/hmm.h>
#include <linux/highmem.h>
#include <linux/mmu_notifier.h>
#include <linux/sched/mm.h>
#include <linux/swiotlb.h>
#include <linux/wait_bit.h>
#include <rdma/ib_umem_odp.h>
#include <rdma/uverbs_ioctl.h>

#include "rdmasim.h"

/* an implicit MR's child covers this much of the address space */
#define RSIM_ODP_CHILD_SHIFT	30
#define RSIM_ODP_CHILD_SIZE	BIT_ULL(RSIM_ODP_CHILD_SHIFT)
/*
 * An implicit MR's children at most: the translation of 64 GiB of distinct
 * address space, 128 MiB of page words charged to the process. A fault
 * that needs one more fails (a WR with it completes in error, as on a HCA
 * out of translation resources): a hostile process cannot make the
 * kernel allocate for its whole address space.
 */
#define RSIM_ODP_MAX_CHILDREN	64
/* a word of @pages: the page, and this bit if the device may write it */
#define RSIM_ODP_WRITABLE	1UL
/* the longest a fault delay (debugfs odp_delay_ms) may hold a fault */
#define RSIM_ODP_DELAY_MAX_MS	1000
/* advise_mr: SGEs of one call */
#define RSIM_ODP_ADVISE_MAX_SGE	64

/**
 * struct rsim_odp_part - one ODP umem as the device translates it
 * @umem: the core's ODP umem: its range, notifier and umem_mutex
 * @mr: the MR it belongs to
 * @pages: one word per PAGE_SIZE page from ib_umem_start(@umem); see the
 *	comment at the top
 */
struct rsim_odp_part {
	struct ib_umem_odp *umem;
	struct rsim_mr *mr;
	unsigned long *pages;
};

/**
 * struct rsim_odp - an ODP MR's side of things
 * @implicit: the whole address space (@root, @parts), else @part
 * @part: an explicit MR's umem
 * @root: an implicit MR's parent umem (no range, no notifier)
 * @parts: an implicit MR's children, by address >> RSIM_ODP_CHILD_SHIFT;
 *	stored under @grow and @live (read), erased only by dereg
 * @grow: serializes the making of children
 * @nchildren: children made (under @grow), RSIM_ODP_MAX_CHILDREN at most
 * @live: read by faults, written by dereg (see the top)
 * @dead: dereg has begun: faults fail
 * @pending: advise_mr work items that hold the MR
 * @base: the user address of the MR's iova (implicit: 0)
 */
struct rsim_odp {
	bool implicit;
	struct rsim_odp_part part;
	struct ib_umem_odp *root;
	struct xarray parts;
	struct mutex grow;	/* serializes making children of @root */
	u32 nchildren;
	struct rw_semaphore live;	/* protects @dead against the umems' release */
	bool dead;
	atomic_t pending;
	u64 base;
};

/* the mask ib_umem_odp_map_dma_and_lock() takes for a read or a write */
static u64 rsim_odp_access_mask(bool write)
{
	return write ? RSIM_ODP_WRITE_MASK : RSIM_ODP_READ_MASK;
}

/* -------- the data path's view, under the MR's lock -------- */

static const struct rsim_odp_part *rsim_odp_part_of(struct rsim_odp *odp,
						    u64 va)
{
	if (!odp->implicit)
		return &odp->part;
	return xa_load(&odp->parts, va >> RSIM_ODP_CHILD_SHIFT);
}

/**
 * rsim_odp_map() - map the byte @at of an ODP MR for the device
 * @mr: the MR; its lock held, its registration live
 * @at: offset from the MR's iova; the caller checked it against the MR
 * @len: in: bytes wanted; out: bytes mapped, within one page
 * @write: the device will write them
 *
 * Context: any; the MR's lock held. Undo with kunmap_local().
 * Return: the mapping, or ERR_PTR(-EAGAIN) if the device has no
 * translation of that page (or a read-only one, for @write): fault it in
 * with rsim_odp_fault() and try again (*@len is cut to the page then
 * too).
 */
void *rsim_odp_map(const struct rsim_mr *mr, u64 at, u64 *len, bool write)
{
	struct rsim_odp *odp = mr->odp;
	const struct rsim_odp_part *p;
	u64 va = odp->base + at;
	unsigned long e;
	size_t i;

	lockdep_assert_held(&mr->lock);
	p = rsim_odp_part_of(odp, va);
	if (!p) {
		*len = min_t(u64, *len, PAGE_SIZE - offset_in_page(va));
		return ERR_PTR(-EAGAIN);
	}
	i = (va - ib_umem_start(p->umem)) >> PAGE_SHIFT;
	*len = min_t(u64, *len, PAGE_SIZE - offset_in_page(va));
	e = READ_ONCE(p->pages[i]);
	if (!e || (write && !(e & RSIM_ODP_WRITABLE)))
		return ERR_PTR(-EAGAIN);
	return kmap_local_page((struct page *)(e & ~RSIM_ODP_WRITABLE)) +
	       offset_in_page(va);
}

/* -------- the MMU notifier -------- */

static bool rsim_odp_invalidate(struct mmu_interval_notifier *mni,
				const struct mmu_notifier_range *range,
				unsigned long cur_seq)
{
	struct ib_umem_odp *umem = container_of(mni, struct ib_umem_odp,
						notifier);
	struct rsim_odp_part *p = umem->private;
	struct rsim_mr *mr = p->mr;
	u64 start, end;
	size_t i, n;

	if (!mmu_notifier_range_blockable(range))
		return false;
	mutex_lock(&umem->umem_mutex);
	mmu_interval_set_seq(mni, cur_seq);
	start = max_t(u64, ib_umem_start(umem), range->start);
	end = min_t(u64, ib_umem_end(umem), range->end);
	if (start < end) {
		i = (start - ib_umem_start(umem)) >> PAGE_SHIFT;
		n = (ALIGN(end, PAGE_SIZE) - ALIGN_DOWN(start, PAGE_SIZE)) >>
		    PAGE_SHIFT;
		/* no copy reaches these pages once the lock drops */
		spin_lock_bh(&mr->lock);
		memset(&p->pages[i], 0, n * sizeof(*p->pages));
		spin_unlock_bh(&mr->lock);
		ib_umem_odp_unmap_dma_pages(umem, start, end);
		atomic64_inc(&mr->rsim->odp_invalidations);
	}
	mutex_unlock(&umem->umem_mutex);
	return true;
}

static const struct mmu_interval_notifier_ops rsim_odp_mn_ops = {
	.invalidate = rsim_odp_invalidate,
};

/* -------- faults -------- */

/*
 * Fault [@va, @va + @len) of one umem in (@fault false: take what is
 * present, as PREFETCH_NO_FAULT asks) and publish it. Context: process,
 * may sleep; @live held for reading.
 */
static int rsim_odp_fault_part(struct rsim_odp_part *p, u64 va, u64 len,
			       bool write, bool fault)
{
	struct ib_umem_odp *umem = p->umem;
	struct rsim_mr *mr = p->mr;
	struct rsim_dev *rsim = mr->rsim;
	u64 start = ALIGN_DOWN(va, PAGE_SIZE);
	u64 end = ALIGN(va + len, PAGE_SIZE);
	unsigned long *pfns;
	size_t first, i, n;
	u32 delay;
	int ret, got;

	delay = min_t(u32, READ_ONCE(rsim->odp_delay_ms),
		      RSIM_ODP_DELAY_MAX_MS);
	if (delay)
		msleep(delay);
	n = (end - start) >> PAGE_SHIFT;
	/* an injected failure at the k-th page: the pages before it map */
	for (i = 0; i < n; i++)
		if (rsim_should_fail(rsim, RSIM_FAULT_ODP))
			break;
	if (i < n) {
		if (!i)
			return -EFAULT;
		end = start + (i << PAGE_SHIFT);
		n = i;
		ret = -EFAULT;
	} else {
		ret = 0;
	}
	/*
	 * a writable umem's pages are faulted writable whatever the access
	 * (mlx5's and rxe's rule): no write finds a read-only page later,
	 * and no page is the shared zero page
	 */
	if (write && !umem->umem.writable)
		return -EFAULT;
	write = umem->umem.writable;
	got = ib_umem_odp_map_dma_and_lock(umem, start, end - start,
					   rsim_odp_access_mask(write), fault);
	if (got < 0)
		return got;
	/* umem_mutex held: no invalidation runs until it drops */
	first = (start - ib_umem_start(umem)) >> PAGE_SHIFT;
	pfns = rsim_odp_pfns(umem) + first;
	for (i = 0; i < n; i++) {
		if (!(pfns[i] & HMM_PFN_VALID))
			continue;
		if (!rsim_odp_dma_map(umem, first + i)) {
			mutex_unlock(&umem->umem_mutex);
			return -EFAULT;
		}
	}
	spin_lock_bh(&mr->lock);
	for (i = 0; i < n; i++) {
		unsigned long pfn = pfns[i];

		p->pages[first + i] = !(pfn & HMM_PFN_VALID) ? 0 :
			(unsigned long)hmm_pfn_to_page(pfn) |
			((pfn & HMM_PFN_WRITE) ? RSIM_ODP_WRITABLE : 0);
	}
	spin_unlock_bh(&mr->lock);
	mutex_unlock(&umem->umem_mutex);
	atomic64_inc(&rsim->odp_faults);
	atomic64_add(n, &rsim->odp_fault_pages);
	return ret;
}

/*
 * An implicit MR's child that covers @va, made if there is none yet.
 * Context: process, may sleep; @live held for reading.
 */
static struct rsim_odp_part *rsim_odp_child(struct rsim_mr *mr, u64 va)
{
	struct rsim_odp *odp = mr->odp;
	unsigned long idx = va >> RSIM_ODP_CHILD_SHIFT;
	struct rsim_odp_part *p;
	struct ib_umem_odp *child;
	int err;

	p = xa_load(&odp->parts, idx);
	if (p)
		return p;
	mutex_lock(&odp->grow);
	p = xa_load(&odp->parts, idx);
	if (p)
		goto out_unlock;
	if (odp->nchildren >= RSIM_ODP_MAX_CHILDREN) {
		p = ERR_PTR(-ENOSPC);
		goto out_unlock;
	}
	p = rsim_should_fail(mr->rsim, RSIM_FAULT_ALLOC) ? NULL :
	    kzalloc(sizeof(*p), GFP_KERNEL_ACCOUNT);
	if (!p) {
		p = ERR_PTR(-ENOMEM);
		goto out_unlock;
	}
	p->mr = mr;
	p->pages = kvcalloc(RSIM_ODP_CHILD_SIZE >> PAGE_SHIFT,
			    sizeof(*p->pages), GFP_KERNEL_ACCOUNT);
	if (!p->pages) {
		err = -ENOMEM;
		goto err_free;
	}
	child = ib_umem_odp_alloc_child(odp->root,
					idx << RSIM_ODP_CHILD_SHIFT,
					RSIM_ODP_CHILD_SIZE, &rsim_odp_mn_ops);
	if (IS_ERR(child)) {
		err = PTR_ERR(child);
		goto err_free_pages;
	}
	child->private = p;
	p->umem = child;
	err = xa_err(xa_store(&odp->parts, idx, p, GFP_KERNEL_ACCOUNT));
	if (err)
		goto err_release;
	odp->nchildren++;
	goto out_unlock;

err_release:
	ib_umem_odp_release(child);
err_free_pages:
	kvfree(p->pages);
err_free:
	kfree(p);
	p = ERR_PTR(err);
out_unlock:
	mutex_unlock(&odp->grow);
	return p;
}

static int rsim_odp_fault_range(struct rsim_mr *mr, u64 at, u64 len,
				bool write, bool fault)
{
	struct rsim_odp *odp = mr->odp;
	u64 va = odp->base + at, end;
	int err = 0;

	if (!len)
		return 0;
	if (check_add_overflow(va, len, &end))
		return -EFAULT;
	down_read(&odp->live);
	if (odp->dead) {
		err = -EFAULT;
		goto out_unlock;
	}
	if (!odp->implicit) {
		err = rsim_odp_fault_part(&odp->part, va, len, write, fault);
		goto out_unlock;
	}
	while (va < end && !err) {
		u64 next = ALIGN_DOWN(va, RSIM_ODP_CHILD_SIZE) +
			   RSIM_ODP_CHILD_SIZE;
		u64 n = min(end, next) - va;
		struct rsim_odp_part *p = rsim_odp_child(mr, va);

		if (IS_ERR(p))
			err = PTR_ERR(p);
		else
			err = rsim_odp_fault_part(p, va, n, write, fault);
		va += n;
	}
out_unlock:
	up_read(&odp->live);
	if (err)
		atomic64_inc(&mr->rsim->odp_fault_errors);
	return err;
}

/**
 * rsim_odp_fault() - fault a range of an ODP MR in for the device
 * @mr: the MR (a reference held)
 * @at: offset of the range from the MR's iova
 * @len: bytes
 * @write: the device will write them
 *
 * What the data path calls when rsim_odp_map() said -EAGAIN. The range
 * was checked against the MR; an implicit MR's is within the registering
 * process's address space.
 *
 * Context: process; may sleep; no lock held.
 * Return: 0, or a negative errno: the range (or part of it) is not
 * mapped in the process, not writable for @write, the process is gone,
 * the MR is being deregistered, or an injected failure.
 */
int rsim_odp_fault(struct rsim_mr *mr, u64 at, u64 len, bool write)
{
	return rsim_odp_fault_range(mr, at, len, write, true);
}

/* -------- registration -------- */

/**
 * rsim_odp_init() - make an MR an ODP MR
 * @mr: the new MR, not yet published; its access flags set
 * @start: user address (implicit: 0)
 * @length: bytes (implicit: U64_MAX)
 * @iova: the MR's first address (implicit: 0)
 *
 * Context: process (the registering one); may sleep.
 * Return: 0, or a negative errno: -EOPNOTSUPP where the DMA device
 * bounces (the core's rule on 7.x, ours on every kernel) or for huge
 * pages, -ENOMEM, or the core's error.
 */
int rsim_odp_init(struct rsim_mr *mr, u64 start, u64 length, u64 iova)
{
	struct rsim_dev *rsim = mr->rsim;
	struct ib_device *ibdev = &rsim->ibdev;
	bool implicit = !start && length == U64_MAX;
	struct ib_umem_odp *umem;
	struct rsim_odp *odp;
	int err;

	if ((mr->access & IB_ACCESS_HUGETLB) || !rsim_odp_possible(rsim))
		return -EOPNOTSUPP;
	if (implicit && iova)
		return -EINVAL;
	odp = rsim_should_fail(rsim, RSIM_FAULT_ALLOC) ? NULL :
	      kzalloc(sizeof(*odp), GFP_KERNEL_ACCOUNT);
	if (!odp)
		return -ENOMEM;
	odp->implicit = implicit;
	xa_init(&odp->parts);
	mutex_init(&odp->grow);
	init_rwsem(&odp->live);
	atomic_set(&odp->pending, 0);
	odp->part.mr = mr;

	if (implicit) {
		umem = rsim_should_fail(rsim, RSIM_FAULT_ALLOC) ?
		       ERR_PTR(-ENOMEM) :
		       ib_umem_odp_alloc_implicit(ibdev, mr->access);
		if (IS_ERR(umem)) {
			err = PTR_ERR(umem);
			goto err_free;
		}
		odp->root = umem;
		/* the registering process's whole address space */
		length = TASK_SIZE;
	} else {
		size_t n;

		umem = rsim_should_fail(rsim, RSIM_FAULT_ALLOC) ?
		       ERR_PTR(-ENOMEM) :
		       ib_umem_odp_get(ibdev, start, length, mr->access,
				       &rsim_odp_mn_ops);
		if (IS_ERR(umem)) {
			err = PTR_ERR(umem);
			goto err_free;
		}
		n = (ib_umem_end(umem) - ib_umem_start(umem)) >> PAGE_SHIFT;
		odp->part.pages = rsim_should_fail(rsim, RSIM_FAULT_ALLOC) ?
				  NULL :
				  kvcalloc(n, sizeof(*odp->part.pages),
					   GFP_KERNEL_ACCOUNT);
		if (!odp->part.pages) {
			err = -ENOMEM;
			goto err_release;
		}
		umem->private = &odp->part;
		odp->part.umem = umem;
		odp->base = start;
	}
	mr->umem = &umem->umem;
	mr->odp = odp;
	/* nobody can look the MR up yet: no lock needed */
	mr->reg.mtt = NULL;
	mr->reg.nsegs = 0;
	mr->reg.pages = true;
	mr->reg.page_size = PAGE_SIZE;
	mr->reg.first_off = 0;
	mr->reg.iova = iova;
	mr->reg.length = length;
	mr->reg.access = mr->access;
	mr->reg.gen++;
	mr->state = RSIM_MR_VALID;
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	mr->ibmr.page_size = PAGE_SIZE;
	return 0;

err_release:
	ib_umem_odp_release(umem);
err_free:
	kfree(odp);
	return err;
}

/**
 * rsim_odp_dereg() - release an ODP MR's memory
 * @mr: the MR, unpublished and its registration dead (no copy reaches
 *	it any more)
 *
 * Waits for the faults under way and advise_mr's work that holds the
 * MR, then releases the umems (which waits for running invalidations).
 *
 * Context: process; may sleep.
 */
void rsim_odp_dereg(struct rsim_mr *mr)
{
	struct rsim_odp *odp = mr->odp;
	struct rsim_odp_part *p;
	unsigned long idx;

	down_write(&odp->live);
	odp->dead = true;
	up_write(&odp->live);
	wait_var_event(&odp->pending, !atomic_read(&odp->pending));
	if (!odp->implicit) {
		ib_umem_odp_release(odp->part.umem);
		kvfree(odp->part.pages);
		odp->part.pages = NULL;
	} else {
		xa_for_each(&odp->parts, idx, p) {
			ib_umem_odp_release(p->umem);
			kvfree(p->pages);
			kfree(p);
		}
		xa_destroy(&odp->parts);
		ib_umem_odp_release(odp->root);
	}
	mr->umem = NULL;
}

/**
 * rsim_odp_free() - free what is left of an ODP MR's state
 * @mr: the MR, its last reference gone
 *
 * Context: any but hard IRQ.
 */
void rsim_odp_free(struct rsim_mr *mr)
{
	kfree(mr->odp);
}

/* -------- advise_mr -------- */

/**
 * struct rsim_odp_prefetch - advise_mr's work, done later
 * @work: on the device's data path workqueue
 * @write: PREFETCH_WRITE
 * @fault: not PREFETCH_NO_FAULT
 * @n: entries in @sge
 * @sge: MR (a reference held, counted in its &rsim_odp.pending), offset
 *	from its iova and bytes
 */
struct rsim_odp_prefetch {
	struct work_struct work;
	bool write;
	bool fault;
	u32 n;
	struct {
		struct rsim_mr *mr;
		u64 at;
		u64 len;
	} sge[];
};

static void rsim_odp_prefetch_put(struct rsim_mr *mr)
{
	if (atomic_dec_and_test(&mr->odp->pending))
		wake_up_var(&mr->odp->pending);
	rsim_mr_put(mr);
}

static void rsim_odp_prefetch_work(struct work_struct *work)
{
	struct rsim_odp_prefetch *pf =
		container_of(work, struct rsim_odp_prefetch, work);
	u32 i;

	/* a hint: what fails is faulted again when the data path needs it */
	for (i = 0; i < pf->n; i++) {
		rsim_odp_fault_range(pf->sge[i].mr, pf->sge[i].at,
				     pf->sge[i].len, pf->write, pf->fault);
		rsim_odp_prefetch_put(pf->sge[i].mr);
	}
	kvfree(pf);
}

/*
 * The ODP MR an SGE names in @pd, held and counted as pending, with the
 * SGE's offset from its iova; the range checked against it, overflow
 * included.
 */
static struct rsim_mr *rsim_odp_sge_mr(struct ib_pd *pd,
				       const struct ib_sge *sge, bool write,
				       u64 *at)
{
	struct rsim_dev *rsim = to_rsim_dev(pd->device);
	struct rsim_mr *mr = rsim_mr_get(rsim, sge->lkey);
	bool ok;

	if (!mr)
		return ERR_PTR(-EINVAL);
	spin_lock_bh(&mr->lock);
	ok = mr->odp && mr->state == RSIM_MR_VALID &&
	     mr->reg.key == sge->lkey && mr->ibmr.pd == pd &&
	     rsim_range_in(mr->reg.iova, mr->reg.length, sge->addr,
			   sge->length);
	if (ok)
		/* the core's rule: dereg waits for what is pending */
		atomic_inc(&mr->odp->pending);
	spin_unlock_bh(&mr->lock);
	if (!ok) {
		rsim_mr_put(mr);
		return ERR_PTR(-EINVAL);
	}
	if (write && !mr->umem->writable) {
		rsim_odp_prefetch_put(mr);
		return ERR_PTR(-EPERM);
	}
	*at = sge->addr - mr->reg.iova;
	return mr;
}

static int rsim_advise_mr(struct ib_pd *pd,
			  enum ib_uverbs_advise_mr_advice advice, u32 flags,
			  struct ib_sge *sg_list, u32 num_sge,
			  struct uverbs_attr_bundle *attrs)
{
	struct rsim_dev *rsim = to_rsim_dev(pd->device);
	bool write = advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE;
	bool fault = advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT;
	struct rsim_odp_prefetch *pf;
	int err = 0;
	u32 i;

	if (advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH &&
	    advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	    advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return -EOPNOTSUPP;
	if (flags & ~IB_UVERBS_ADVISE_MR_FLAG_FLUSH)
		return -EOPNOTSUPP;
	if (!num_sge || num_sge > RSIM_ODP_ADVISE_MAX_SGE)
		return -EINVAL;
	atomic64_inc(&rsim->odp_prefetches);

	pf = rsim_should_fail(rsim, RSIM_FAULT_ALLOC) ? NULL :
	     kvzalloc(struct_size(pf, sge, num_sge), GFP_KERNEL_ACCOUNT);
	if (!pf)
		return -ENOMEM;
	pf->write = write;
	pf->fault = fault;
	/* every SGE checked before anything is faulted */
	for (i = 0; i < num_sge; i++) {
		struct rsim_mr *mr = rsim_odp_sge_mr(pd, &sg_list[i], write,
						     &pf->sge[i].at);

		if (IS_ERR(mr)) {
			err = PTR_ERR(mr);
			goto err_put;
		}
		pf->sge[i].mr = mr;
		pf->sge[i].len = sg_list[i].length;
		pf->n = i + 1;
	}
	if (!(flags & IB_UVERBS_ADVISE_MR_FLAG_FLUSH)) {
		INIT_WORK(&pf->work, rsim_odp_prefetch_work);
		queue_work(rsim->dp_wq, &pf->work);
		return 0;
	}
	/* synchronous: the first failure is the call's */
	for (i = 0; i < pf->n && !err; i++)
		err = rsim_odp_fault_range(pf->sge[i].mr, pf->sge[i].at,
					   pf->sge[i].len, write, fault);
	/* NO_FAULT: a page that is not present is no error */
	if (!fault)
		err = 0;
err_put:
	for (i = 0; i < pf->n; i++)
		rsim_odp_prefetch_put(pf->sge[i].mr);
	kvfree(pf);
	return err;
}

const struct ib_device_ops rsim_odp_ops = {
	.advise_mr = rsim_advise_mr,
};

/**
 * rsim_odp_possible() - may this device have ODP MRs?
 * @rsim: the device
 *
 * Not where its DMA device bounces or cannot reach all memory
 * (rsim_odp_dma_ok(), compat.h): the device then claims no ODP at all.
 *
 * Context: any.
 * Return: true if it may.
 */
bool rsim_odp_possible(struct rsim_dev *rsim)
{
	return rsim_odp_dma_ok(rsim->dma_dev);
}

/**
 * rsim_odp_caps() - what query_device reports of ODP
 * @attr: the attributes being filled
 *
 * Every transport's every operation (XRC's as RC's), implicit MRs
 * included: the data path faults wherever it copies.
 *
 * Context: any.
 */
void rsim_odp_caps(struct ib_device_attr *attr)
{
	u32 all = IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
		  IB_ODP_SUPPORT_SRQ_RECV;

	attr->kernel_cap_flags |= IBK_ON_DEMAND_PAGING;
	attr->odp_caps.general_caps = IB_ODP_SUPPORT |
				      IB_ODP_SUPPORT_IMPLICIT;
	attr->odp_caps.per_transport_caps.rc_odp_caps =
		all | IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_READ |
		IB_ODP_SUPPORT_ATOMIC | RSIM_ODP_SUPPORT_PLACEMENT;
	/* XRC: RC's, through its SRQs */
	attr->odp_caps.per_transport_caps.xrc_odp_caps =
		attr->odp_caps.per_transport_caps.rc_odp_caps;
	attr->odp_caps.per_transport_caps.uc_odp_caps =
		all | IB_ODP_SUPPORT_WRITE;
	attr->odp_caps.per_transport_caps.ud_odp_caps = all;
}
