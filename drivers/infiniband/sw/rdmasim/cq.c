// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: completion queues.
 */

#include <linux/slab.h>

#include "rdmasim.h"

static int rsim_create_cq(struct ib_cq *ibcq,
			  const struct ib_cq_init_attr *attr,
			  RSIM_CREATE_CQ_EXTRA *extra)
{
	struct rsim_dev *rsim = to_rsim_dev(ibcq->device);
	struct rsim_cq *cq = to_rsim_cq(ibcq);

	/* no userspace provider: user CQs cannot be mapped */
	if (extra)
		return -EOPNOTSUPP;
	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > rsim->cfg.limits.max_cqe)
		return -EINVAL;
	if (attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;
	if (!rsim_res_get(rsim, RSIM_RES_CQ))
		return -ENOMEM;

	cq->queue = rsim_should_fail(rsim, RSIM_FAULT_ALLOC) ? NULL :
		    kvcalloc(attr->cqe, sizeof(*cq->queue), GFP_KERNEL);
	if (!cq->queue) {
		rsim_res_put(rsim, RSIM_RES_CQ);
		return -ENOMEM;
	}
	spin_lock_init(&cq->lock);
	cq->size = attr->cqe;
	ibcq->cqe = attr->cqe;
	return 0;
}

static int rsim_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct rsim_cq *cq = to_rsim_cq(ibcq);

	kvfree(cq->queue);
	rsim_res_put(to_rsim_dev(ibcq->device), RSIM_RES_CQ);
	return 0;
}

/**
 * rsim_cq_push() - add a completion
 * @cq: completion queue
 * @wc: the completion
 * @solicited: the WR asked for a solicited event
 *
 * Handlers do not run here: callers may hold their QP's lock (lock order:
 * QP lock, then CQ lock), and a completion handler may post to that QP.
 * Pass the result to rsim_cq_kick() once no lock is held.
 *
 * Context: any; does not sleep.
 * Return: 0, 1 if the armed completion handler must run, or -EOVERFLOW if
 * the CQ is full (the completion is lost).
 */
int rsim_cq_push(struct rsim_cq *cq, const struct ib_wc *wc, bool solicited)
{
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->count == cq->size) {
		ret = -EOVERFLOW;
		goto out;
	}
	cq->queue[(cq->head + cq->count) % cq->size] = *wc;
	cq->count++;
	if (cq->notify == IB_CQ_NEXT_COMP ||
	    (cq->notify == IB_CQ_SOLICITED &&
	     (solicited || wc->status != IB_WC_SUCCESS))) {
		cq->notify = 0;
		ret = 1;
	}
out:
	spin_unlock_irqrestore(&cq->lock, flags);
	return ret;
}

/**
 * rsim_cq_kick() - run what rsim_cq_push() asked for
 * @cq: completion queue
 * @pushed: rsim_cq_push()'s result (or the OR of several: 1 runs the
 *	completion handler, a negative value raises IB_EVENT_CQ_ERR)
 *
 * Context: any; no rdmasim lock held.
 */
void rsim_cq_kick(struct rsim_cq *cq, int pushed)
{
	if (pushed < 0 && cq->ibcq.event_handler) {
		struct ib_event ev = {
			.device = cq->ibcq.device,
			.element.cq = &cq->ibcq,
			.event = IB_EVENT_CQ_ERR,
		};

		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
	} else if (pushed > 0 && cq->ibcq.comp_handler) {
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	}
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

const struct ib_device_ops rsim_cq_ops = {
	.create_cq = rsim_create_cq,
	.destroy_cq = rsim_destroy_cq,
	.poll_cq = rsim_poll_cq,
	.req_notify_cq = rsim_req_notify_cq,

	INIT_RDMA_OBJ_SIZE(ib_cq, rsim_cq, ibcq),
};
