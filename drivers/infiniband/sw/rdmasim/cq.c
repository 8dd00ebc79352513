// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: completion queues.
 *
 * A kernel CQ, and a user CQ whose provider did not ask for a mapped
 * ring, keep their completions in a ring of struct ib_wc that poll_cq
 * (the core's command, for a process) empties. A user CQ of a context
 * that asked for RSIM_UCTX_MAP_CQ has a ring its process maps instead
 * (struct rsim_uring_hdr, then struct rsim_ucqe slots: rdmasim-abi.h):
 * the kernel writes each completion in full into the slot its own
 * producer index names, then publishes the index; the process reads the
 * slots and publishes its consumer index, which the kernel reads once per
 * completion only to decide whether the ring is full. Nonsense there
 * overflows the CQ (its error state, as today), never a write outside the
 * ring. The process polls without a system call; poll_cq on such a CQ is
 * EOPNOTSUPP, and the provider, not the kernel, drops a QP's completions
 * when the QP goes back to RESET or away (as mlx5's provider does).
 */

#include <linux/log2.h>
#include <linux/slab.h>
#include <kunit/visibility.h>
#include <rdma/uverbs_ioctl.h>
#include <rdmasim/rdmasim-abi.h>

#include "rdmasim.h"

static struct rsim_uring_hdr *rsim_ring_hdr(struct rsim_umap *ring)
{
	return ring->vaddr;
}

/* slot @i of a ring of @nslots (a power of two) */
static struct rsim_ucqe *rsim_ring_slot(struct rsim_umap *ring, u32 nslots,
					u32 i)
{
	return ring->vaddr + RSIM_URING_SLOTS +
	       (i & (nslots - 1)) * sizeof(struct rsim_ucqe);
}

/* completions in a mapped ring, as far as the process's index says */
static u32 rsim_cq_ring_used(struct rsim_cq *cq)
{
	return cq->prod - READ_ONCE(rsim_ring_hdr(cq->ring)->cons);
}

/*
 * A kernel ring's slots that are taken: its own (holes of a clean among
 * them), and those a resize has still to move into it. Under the lock.
 */
static u32 rsim_cq_used(const struct rsim_cq *cq)
{
	return cq->old.count + cq->count;
}

/* the completions a poll would find: rsim_cq_used() without the holes */
static u32 rsim_cq_live(const struct rsim_cq *cq)
{
	return cq->ring ? rsim_cq_ring_used((struct rsim_cq *)cq) :
	       rsim_cq_used(cq) - cq->clean_h;
}

/**
 * rsim_cq_backlog() - completions a poll of @cq would find
 * @cq: a CQ
 *
 * A hint for the engine (a mapped ring's count reads the process's own
 * index, which may say anything): whether the consumer has completions
 * it has not polled yet.
 *
 * Context: any; takes @cq's lock (a QP's may be held: QP, then CQ).
 * Return: the number of completions, as far as the consumer's index says.
 */
u32 rsim_cq_backlog(struct rsim_cq *cq)
{
	unsigned long flags;
	u32 k;

	spin_lock_irqsave(&cq->lock, flags);
	k = rsim_cq_live(cq);
	spin_unlock_irqrestore(&cq->lock, flags);
	return k;
}

/*
 * A ring of @nslots for a mapped CQ, its response for the provider in
 * @resp. Context: process; sleeps.
 */
static struct rsim_umap *rsim_cq_ring_new(struct ib_ucontext *uctx,
					  u32 nslots,
					  struct rsim_cq_ring_resp *resp)
{
	size_t len = RSIM_URING_SLOTS + (size_t)nslots *
		     sizeof(struct rsim_ucqe);
	struct rsim_umap *m = rsim_umap_ring_new(uctx, len);

	if (IS_ERR(m))
		return m;
	resp->mmap_offset = rsim_umap_offset(m);
	resp->mmap_len = m->len;
	resp->nslots = nslots;
	return m;
}

static int rsim_create_cq(struct ib_cq *ibcq,
			  const struct ib_cq_init_attr *attr,
			  RSIM_CREATE_CQ_EXTRA *extra)
{
	struct rsim_dev *rsim = to_rsim_dev(ibcq->device);
	struct ib_udata *udata = extra ? RSIM_CREATE_CQ_UDATA(extra) : NULL;
	struct rsim_cq *cq = to_rsim_cq(ibcq);
	struct rsim_cq_ring_resp resp = {};
	struct ib_ucontext *uctx;
	int err = -ENOMEM;

	/* the provider sends no driver data with create_cq */
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > rsim->cfg.limits.max_cqe)
		return -EINVAL;
	if (attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;
	if (!rsim_res_get(rsim, RSIM_RES_CQ))
		return -ENOMEM;

	spin_lock_init(&cq->lock);
	mutex_init(&cq->mutex);
	rsim_ev_obj_init(&cq->ev, RSIM_EV_CQ);
	uctx = rsim_umap_uctx(udata, RSIM_UCTX_MAP_CQ);
	if (rsim_should_fail(rsim, RSIM_FAULT_ALLOC))
		goto err_res;
	if (uctx) {
		/* a provider that asked for rings has room for their offset */
		err = -EINVAL;
		if (udata->outlen < sizeof(resp))
			goto err_res;
		cq->size = roundup_pow_of_two(attr->cqe);
		cq->ring = rsim_cq_ring_new(uctx, cq->size, &resp);
		if (IS_ERR(cq->ring)) {
			err = PTR_ERR(cq->ring);
			cq->ring = NULL;
			goto err_res;
		}
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_ring;
		atomic64_inc(&rsim->cq_rings);
	} else {
		cq->queue = kvcalloc(attr->cqe, sizeof(*cq->queue),
				     GFP_KERNEL_ACCOUNT);
		if (!cq->queue)
			goto err_res;
		cq->size = attr->cqe;
	}
	ibcq->cqe = cq->size;
	return 0;

err_ring:
	rdma_user_mmap_entry_remove(&cq->ring->entry);
	cq->ring = NULL;
err_res:
	mutex_destroy(&cq->mutex);
	rsim_res_put(rsim, RSIM_RES_CQ);
	return err;
}

static int rsim_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct rsim_dev *rsim = to_rsim_dev(ibcq->device);
	struct rsim_cq *cq = to_rsim_cq(ibcq);

	/* the core refuses while a QP uses it: nobody queues its handlers */
	rsim_ev_forget(rsim, &cq->ev);
	/* the pages stay while the process maps them (umap.c) */
	if (cq->ring)
		rdma_user_mmap_entry_remove(&cq->ring->entry);
	kvfree(cq->queue);
	mutex_destroy(&cq->mutex);
	rsim_res_put(rsim, RSIM_RES_CQ);
	return 0;
}

static void rsim_notify_cq(struct rsim_notify *n, struct rsim_cq *cq,
			   u8 flags)
{
	unsigned int i;

	if (!flags)
		return;
	for (i = 0; i < n->ncq; i++)
		if (n->cq[i].cq == cq)
			break;
	if (i == n->ncq) {
		if (WARN_ON_ONCE(n->ncq == ARRAY_SIZE(n->cq)))
			return;
		n->cq[n->ncq].cq = cq;
		n->cq[n->ncq++].flags = 0;
	}
	n->cq[i].flags |= flags;
}

/*
 * A completion into a mapped ring: the slot written in full (the process
 * sees no field of an earlier completion), then the index published.
 * Context: any; under the CQ's lock.
 */
static void rsim_cq_ring_put(struct rsim_cq *cq, const struct ib_wc *wc)
{
	struct rsim_ucqe e = {
		.wr_id = wc->wr_id,
		.status = wc->status,
		.opcode = wc->opcode,
		.vendor_err = wc->vendor_err,
		.byte_len = wc->byte_len,
		.ex = (__force u32)wc->ex.imm_data,
		.qp_num = wc->qp->qp_num,
		.src_qp = wc->src_qp,
		.wc_flags = wc->wc_flags,
		.pkey_index = wc->pkey_index,
		.slid = ib_lid_cpu16(wc->slid),
		.sl = wc->sl,
		.dlid_path_bits = wc->dlid_path_bits,
		.port_num = wc->port_num,
	};

	memcpy(rsim_ring_slot(cq->ring, cq->size, cq->prod), &e, sizeof(e));
	cq->prod++;
	/* a resize publishes the index once its copy is done */
	if (!cq->filling)
		/* the slot before the index: the provider reads with an acquire */
		smp_store_release(&rsim_ring_hdr(cq->ring)->prod, cq->prod);
}

/**
 * rsim_cq_push() - add a completion
 * @n: where to note the handler or event it calls for
 * @cq: completion queue
 * @wc: the completion
 * @solicited: the WR asked for a solicited event
 *
 * Handlers do not run here: callers may hold their QP's lock (lock order:
 * QP lock, then CQ lock), and a completion handler may post to that QP.
 * rsim_notify_run() delivers what @n collected once no lock is held (at
 * once, or through the device's dispatcher: event.c). A
 * completion that finds the ring full puts the CQ in the error state: it
 * is lost, as is every later one, and IB_EVENT_CQ_ERR is raised once; a
 * handler an earlier completion armed still runs.
 *
 * Context: any; does not sleep.
 * Return: 0, or -EOVERFLOW if the completion was lost.
 */
int rsim_cq_push(struct rsim_notify *n, struct rsim_cq *cq,
		 const struct ib_wc *wc, bool solicited)
{
	unsigned long flags;
	u8 what = 0;
	int ret = 0;

#if IS_ENABLED(CONFIG_KUNIT)
	if (to_rsim_dev(cq->ibcq.device)->cq_push_hook)
		to_rsim_dev(cq->ibcq.device)->cq_push_hook(cq, wc);
#endif
	spin_lock_irqsave(&cq->lock, flags);
	if (cq->overflow ||
	    (cq->ring ? rsim_cq_ring_used(cq) : rsim_cq_used(cq)) >= cq->size) {
		if (!cq->overflow)
			what = RSIM_NOTIFY_ERR;
		cq->overflow = true;
		ret = -EOVERFLOW;
		goto out;
	}
	if (cq->ring) {
		rsim_cq_ring_put(cq, wc);
	} else {
		cq->queue[(cq->head + cq->count) % cq->size] = *wc;
		cq->count++;
	}
	if (cq->notify == IB_CQ_NEXT_COMP ||
	    (cq->notify == IB_CQ_SOLICITED &&
	     (solicited || wc->status != IB_WC_SUCCESS))) {
		cq->notify = 0;
		what = RSIM_NOTIFY_COMP;
	}
out:
	spin_unlock_irqrestore(&cq->lock, flags);
	rsim_notify_cq(n, cq, what);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_cq_push);

/* between two batches of a resize or clean: no lock held */
static void rsim_cq_between_batches(struct rsim_cq *cq)
{
#if IS_ENABLED(CONFIG_KUNIT)
	struct rsim_dev *rsim = to_rsim_dev(cq->ibcq.device);

	if (rsim->cq_batch_hook)
		rsim->cq_batch_hook(cq);
#endif
	cond_resched();
}

/* one batch of rsim_cq_clean(), under the lock: false when it is done */
static bool rsim_cq_clean_batch(struct rsim_cq *cq, const struct ib_qp *qp)
{
	u32 k, r, w;

	for (k = 0; k < RSIM_CQ_BATCH && cq->clean_u; k++) {
		/* the last slot not looked at, and the last hole after it */
		r = (cq->head + cq->clean_u - 1) % cq->size;
		w = (cq->head + cq->clean_u + cq->clean_h - 1) % cq->size;
		cq->clean_u--;
		if (cq->queue[r].qp == qp)
			cq->clean_h++;
		else if (r != w)
			cq->queue[w] = cq->queue[r];
	}
	return cq->clean_u;
}

/**
 * rsim_cq_clean() - drop a QP's completions from a CQ
 * @cq: the QP's send or receive CQ
 * @qp: the QP, going back to the reset state or away; nothing adds a
 *	completion of it meanwhile
 *
 * The other QPs' completions keep their order. The CQ's lock is held for
 * RSIM_CQ_BATCH completions at a time, whatever its size: the ring is
 * compacted from its newest completion back, so that what has not been
 * looked at yet stays in front, where polls find it (a poll meanwhile may
 * return one of @qp's completions, as if it had come before this), and
 * the dropped ones leave holes behind it, which a poll steps over at
 * once. Completions added meanwhile go after all of them: the slots in
 * use are never more than before, and no completion is lost for a hole.
 *
 * Context: process; sleeps (the CQ's mutex); no rdmasim spinlock held.
 */
void rsim_cq_clean(struct rsim_cq *cq, struct ib_qp *qp)
{
	unsigned long flags;
	bool more;

	might_sleep();
	/* a mapped ring is the process's: its provider cleans it */
	if (cq->ring)
		return;
	mutex_lock(&cq->mutex);
	spin_lock_irqsave(&cq->lock, flags);
	cq->clean_u = cq->count;
	cq->clean_h = 0;
	do {
		more = rsim_cq_clean_batch(cq, qp);
		if (more) {
			spin_unlock_irqrestore(&cq->lock, flags);
			rsim_cq_between_batches(cq);
			spin_lock_irqsave(&cq->lock, flags);
		}
	} while (more);
	/* the holes are in front now, unless polls stepped over them */
	cq->head = (cq->head + cq->clean_h) % cq->size;
	cq->count -= cq->clean_h;
	cq->clean_h = 0;
	spin_unlock_irqrestore(&cq->lock, flags);
	mutex_unlock(&cq->mutex);
}
EXPORT_SYMBOL_IF_KUNIT(rsim_cq_clean);

static void rsim_cq_event(struct rsim_cq *cq)
{
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = IB_EVENT_CQ_ERR,
	};

	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

/**
 * rsim_cq_deliver() - run what completions asked of a CQ
 * @cq: the CQ
 * @flags: RSIM_NOTIFY_COMP: its completion handler; RSIM_NOTIFY_ERR:
 *	IB_EVENT_CQ_ERR
 *
 * Context: BH off (event.c decides where); no rdmasim lock held.
 */
void rsim_cq_deliver(struct rsim_cq *cq, u32 flags)
{
	if ((flags & RSIM_NOTIFY_COMP) && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	if (flags & RSIM_NOTIFY_ERR)
		rsim_cq_event(cq);
}

/*
 * Context: any; does not sleep. A mapped CQ is the process's to poll
 * (its completions carry no struct ib_qp for the command's answer).
 */
static int rsim_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct rsim_cq *cq = to_rsim_cq(ibcq);
	unsigned long flags;
	int n = 0;

	if (cq->ring)
		return -EOPNOTSUPP;
	if (ibcq->uobject)	/* a process's command */
		atomic64_inc(&to_rsim_dev(ibcq->device)->user_polls);
	spin_lock_irqsave(&cq->lock, flags);
	while (n < num_entries) {
		struct rsim_cq_seg *o = &cq->old;

		/* a resize's earlier ring first */
		if (o->count) {
			wc[n++] = o->queue[o->head];
			o->head = (o->head + 1) % o->size;
			o->count--;
			continue;
		}
		if (!cq->count)
			break;
		/* a clean's holes, once nothing it has to look at is before */
		if (!cq->clean_u && cq->clean_h) {
			cq->head = (cq->head + cq->clean_h) % cq->size;
			cq->count -= cq->clean_h;
			cq->clean_h = 0;
			continue;
		}
		wc[n++] = cq->queue[cq->head];
		cq->head = (cq->head + 1) % cq->size;
		cq->count--;
		if (cq->clean_u)
			cq->clean_u--;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/* Context: any; does not sleep. */
static int rsim_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct rsim_cq *cq = to_rsim_cq(ibcq);
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	/* NEXT_COMP includes solicited completions; never weaken it */
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && rsim_cq_live(cq))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

/*
 * A mapped CQ's new ring: the completions the process has not consumed
 * (by its index, read once) copied to its first slots, the new ring's
 * offset in the response; the process maps it and unmaps the old one,
 * whose pages stay valid until it does. More than fit (or an index
 * further than the ring holds) is EINVAL, the CQ left as it was.
 *
 * The CQ moves to the new ring at once, in one short hold of its lock,
 * with the copied completions' slots kept free: completions that come
 * meanwhile go after them. The copy needs no lock (the kernel writes
 * neither those slots nor the old ring any more) and the new ring's
 * index is published when it is done (@filling). The context is the
 * verb's own (its udata's), which owns the CQ; the caller holds the
 * CQ's mutex, so no other resize frees the old ring meanwhile.
 *
 * Context: process; sleeps.
 */
static int rsim_resize_cq_ring(struct rsim_dev *rsim, struct rsim_cq *cq,
			       u32 cqe, struct ib_udata *udata)
{
	struct ib_ucontext *uctx = rsim_umap_uctx(udata, RSIM_UCTX_MAP_CQ);
	u32 nslots = roundup_pow_of_two(cqe), used, osize, i, cons;
	struct rsim_cq_ring_resp resp = {};
	struct rsim_umap *ring, *old;
	unsigned long flags;
	int err;

	if (!uctx || udata->outlen < sizeof(resp))
		return -EINVAL;
	if (rsim_should_fail(rsim, RSIM_FAULT_ALLOC))
		return -ENOMEM;
	ring = rsim_cq_ring_new(uctx, nslots, &resp);
	if (IS_ERR(ring))
		return PTR_ERR(ring);
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err)
		goto out_remove;
	spin_lock_irqsave(&cq->lock, flags);
	cons = READ_ONCE(rsim_ring_hdr(cq->ring)->cons);
	used = cq->prod - cons;
	if (used > cq->size || used > nslots) {
		spin_unlock_irqrestore(&cq->lock, flags);
		err = -EINVAL;
		goto out_remove;
	}
	old = cq->ring;
	osize = cq->size;
	cq->ring = ring;
	cq->prod = used;
	cq->size = nslots;
	cq->ibcq.cqe = nslots;
	cq->filling = true;
	spin_unlock_irqrestore(&cq->lock, flags);

	for (i = 0; i < used; i++) {
		memcpy(rsim_ring_slot(ring, nslots, i),
		       rsim_ring_slot(old, osize, cons + i),
		       sizeof(struct rsim_ucqe));
		if (i % RSIM_CQ_BATCH == RSIM_CQ_BATCH - 1)
			cond_resched();
	}
	spin_lock_irqsave(&cq->lock, flags);
	cq->filling = false;
	/* the copied slots, and those added since, before the index */
	smp_store_release(&rsim_ring_hdr(ring)->prod, cq->prod);
	spin_unlock_irqrestore(&cq->lock, flags);
	ring = old;
	err = 0;
out_remove:
	/* the one not in use: the old ring, or the new one on an error */
	rdma_user_mmap_entry_remove(&ring->entry);
	return err;
}

/*
 * One batch of a resize, under the lock: completions of the earlier ring
 * (those polls have not taken yet), newest first, go in front of the new
 * ring's. True when none is left.
 */
static bool rsim_cq_move_batch(struct rsim_cq *cq)
{
	struct rsim_cq_seg *o = &cq->old;
	u32 k;

	for (k = 0; k < RSIM_CQ_BATCH && o->count; k++) {
		cq->head = (cq->head + cq->size - 1) % cq->size;
		cq->queue[cq->head] = o->queue[(o->head + o->count - 1) %
					       o->size];
		o->count--;
		cq->count++;
	}
	return !o->count;
}

/*
 * A new ring of @cqe entries, with the completions not yet polled moved
 * into it in order; fewer entries than those is EINVAL (as in rxe), and
 * the CQ is left as it was on any error.
 *
 * The CQ takes the new ring at once; the completions of the old one are
 * polled from there first, while the resize moves them over
 * RSIM_CQ_BATCH at a time (a hold of the CQ's lock is bounded, whatever
 * the CQ's size). Resizes (and cleans) of a CQ follow each other: the
 * CQ's mutex, as mlx5's resize_mutex (the core takes only a shared lock
 * on the CQ for resize_cq).
 *
 * Context: process; sleeps.
 */
static int rsim_resize_cq(struct ib_cq *ibcq, RSIM_RESIZE_CQE count,
			  struct ib_udata *udata)
{
	struct rsim_dev *rsim = to_rsim_dev(ibcq->device);
	s64 cqe = count;
	struct rsim_cq *cq = to_rsim_cq(ibcq);
	struct ib_wc *queue, *old = NULL;
	unsigned long flags;
	bool done;
	int err = 0;

	if (cqe < 1 || cqe > rsim->cfg.limits.max_cqe)
		return -EINVAL;
	mutex_lock(&cq->mutex);
#if IS_ENABLED(CONFIG_KUNIT)
	if (rsim->cq_resize_hook)
		rsim->cq_resize_hook(cq);
#endif
	if (cq->ring) {
		err = rsim_resize_cq_ring(rsim, cq, cqe, udata);
		goto out_unlock;
	}
	queue = rsim_should_fail(rsim, RSIM_FAULT_ALLOC) ? NULL :
		kvcalloc(cqe, sizeof(*queue), GFP_KERNEL_ACCOUNT);
	if (!queue) {
		err = -ENOMEM;
		goto out_unlock;
	}
	spin_lock_irqsave(&cq->lock, flags);
	if (cq->count > cqe) {
		spin_unlock_irqrestore(&cq->lock, flags);
		kvfree(queue);
		err = -EINVAL;
		goto out_unlock;
	}
	cq->old = (struct rsim_cq_seg){
		.queue = cq->queue,
		.size = cq->size,
		.head = cq->head,
		.count = cq->count,
	};
	cq->queue = queue;
	cq->head = 0;
	cq->count = 0;
	cq->size = cqe;
	ibcq->cqe = cqe;
	do {
		done = rsim_cq_move_batch(cq);
		if (done) {
			old = cq->old.queue;
			cq->old.queue = NULL;
		}
		spin_unlock_irqrestore(&cq->lock, flags);
		if (!done) {
			rsim_cq_between_batches(cq);
			spin_lock_irqsave(&cq->lock, flags);
		}
	} while (!done);
	kvfree(old);
out_unlock:
	mutex_unlock(&cq->mutex);
	return err;
}

const struct ib_device_ops rsim_cq_ops = {
	.create_cq = rsim_create_cq,
	.destroy_cq = rsim_destroy_cq,
	.poll_cq = rsim_poll_cq,
	.req_notify_cq = rsim_req_notify_cq,
	.RSIM_RESIZE_CQ_OP = rsim_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_cq, rsim_cq, ibcq),
};
