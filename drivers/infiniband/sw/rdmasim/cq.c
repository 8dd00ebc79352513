// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: completion queues.
 */

#include <linux/slab.h>
#include <rdma/uverbs_ioctl.h>

#include "rdmasim.h"

static int rsim_create_cq(struct ib_cq *ibcq,
			  const struct ib_cq_init_attr *attr,
			  RSIM_CREATE_CQ_EXTRA *extra)
{
	struct rsim_dev *rsim = to_rsim_dev(ibcq->device);
	struct rsim_cq *cq = to_rsim_cq(ibcq);

	/*
	 * A user CQ (uverbs) is polled through the core's poll_cq command:
	 * nothing is mapped, and the provider sends no driver data.
	 */
	if (extra) {
		struct ib_udata *udata = RSIM_CREATE_CQ_UDATA(extra);

		if (udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
			return -EINVAL;
	}
	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > rsim->cfg.limits.max_cqe)
		return -EINVAL;
	if (attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;
	if (!rsim_res_get(rsim, RSIM_RES_CQ))
		return -ENOMEM;

	cq->queue = rsim_should_fail(rsim, RSIM_FAULT_ALLOC) ? NULL :
		    kvcalloc(attr->cqe, sizeof(*cq->queue), GFP_KERNEL_ACCOUNT);
	if (!cq->queue) {
		rsim_res_put(rsim, RSIM_RES_CQ);
		return -ENOMEM;
	}
	spin_lock_init(&cq->lock);
	rsim_ev_obj_init(&cq->ev, RSIM_EV_CQ);
	cq->size = attr->cqe;
	ibcq->cqe = attr->cqe;
	return 0;
}

static int rsim_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct rsim_dev *rsim = to_rsim_dev(ibcq->device);
	struct rsim_cq *cq = to_rsim_cq(ibcq);

	/* the core refuses while a QP uses it: nobody queues its handlers */
	rsim_ev_forget(rsim, &cq->ev);
	kvfree(cq->queue);
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

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->overflow || cq->count == cq->size) {
		if (!cq->overflow)
			what = RSIM_NOTIFY_ERR;
		cq->overflow = true;
		ret = -EOVERFLOW;
		goto out;
	}
	cq->queue[(cq->head + cq->count) % cq->size] = *wc;
	cq->count++;
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

/**
 * rsim_cq_clean() - drop a QP's completions from a CQ
 * @cq: the QP's send or receive CQ
 * @qp: the QP, going back to the reset state
 *
 * The other QPs' completions keep their order.
 *
 * Context: any; under the QP's lock (lock order: QP, then CQ).
 */
void rsim_cq_clean(struct rsim_cq *cq, struct ib_qp *qp)
{
	unsigned long flags;
	u32 i, n = 0;

	spin_lock_irqsave(&cq->lock, flags);
	/* compacted in place: slot n is never ahead of slot i */
	for (i = 0; i < cq->count; i++) {
		struct ib_wc *wc = &cq->queue[(cq->head + i) % cq->size];

		if (wc->qp == qp)
			continue;
		cq->queue[(cq->head + n) % cq->size] = *wc;
		n++;
	}
	cq->count = n;
	spin_unlock_irqrestore(&cq->lock, flags);
}

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

/* Context: any; does not sleep. */
static int rsim_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct rsim_cq *cq = to_rsim_cq(ibcq);
	unsigned long flags;
	int n = 0;

	spin_lock_irqsave(&cq->lock, flags);
	while (n < num_entries && cq->count) {
		wc[n++] = cq->queue[cq->head];
		cq->head = (cq->head + 1) % cq->size;
		cq->count--;
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
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && cq->count)
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

/*
 * A new ring of @cqe entries, with the completions not yet polled moved
 * into it in order; fewer entries than those is EINVAL (as in rxe), and
 * the CQ is left as it was on any error.
 *
 * Context: process; the ring is allocated before the CQ's lock is taken.
 */
static int rsim_resize_cq(struct ib_cq *ibcq, RSIM_RESIZE_CQE count,
			  struct ib_udata *udata)
{
	struct rsim_dev *rsim = to_rsim_dev(ibcq->device);
	s64 cqe = count;
	struct rsim_cq *cq = to_rsim_cq(ibcq);
	struct ib_wc *queue, *old;
	unsigned long flags;
	u32 i;

	if (cqe < 1 || cqe > rsim->cfg.limits.max_cqe)
		return -EINVAL;
	queue = rsim_should_fail(rsim, RSIM_FAULT_ALLOC) ? NULL :
		kvcalloc(cqe, sizeof(*queue), GFP_KERNEL_ACCOUNT);
	if (!queue)
		return -ENOMEM;
	spin_lock_irqsave(&cq->lock, flags);
	if (cq->count > cqe) {
		spin_unlock_irqrestore(&cq->lock, flags);
		kvfree(queue);
		return -EINVAL;
	}
	for (i = 0; i < cq->count; i++)
		queue[i] = cq->queue[(cq->head + i) % cq->size];
	old = cq->queue;
	cq->queue = queue;
	cq->head = 0;
	cq->size = cqe;
	ibcq->cqe = cqe;
	spin_unlock_irqrestore(&cq->lock, flags);
	kvfree(old);
	return 0;
}

const struct ib_device_ops rsim_cq_ops = {
	.create_cq = rsim_create_cq,
	.destroy_cq = rsim_destroy_cq,
	.poll_cq = rsim_poll_cq,
	.req_notify_cq = rsim_req_notify_cq,
	.RSIM_RESIZE_CQ_OP = rsim_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_cq, rsim_cq, ibcq),
};
