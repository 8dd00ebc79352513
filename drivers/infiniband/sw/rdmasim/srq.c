// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: shared receive queues (basic SRQs; no XRC).
 *
 * An SRQ is a ring of receive WRs that any number of RC, UC and UD QPs
 * take from, in order, when a message arrives for one of them (dp.c,
 * rsim_dp_take_recv()); the completion goes to that QP's receive CQ. A
 * QP attached to an SRQ has no receive queue of its own: post_recv on it
 * is EINVAL. Arming the limit (modify_srq with IB_SRQ_LIMIT) asks for one
 * IB_EVENT_SRQ_LIMIT_REACHED when fewer WRs than the limit remain; a QP of
 * an SRQ that enters the error state gets IB_EVENT_QP_LAST_WQE_REACHED
 * (IBA 10.3.1: no more WQEs of the SRQ will be consumed on its behalf).
 * The SRQ cannot be resized (no IB_DEVICE_SRQ_RESIZE).
 */

#include <linux/slab.h>
#include <rdma/uverbs_ioctl.h>

#include "rdmasim.h"

static int rsim_create_srq(struct ib_srq *ibsrq,
			   struct ib_srq_init_attr *init,
			   struct ib_udata *udata)
{
	struct rsim_dev *rsim = to_rsim_dev(ibsrq->device);
	const struct rsim_limits *lim = &rsim->cfg.limits;
	struct rsim_srq *srq = to_rsim_srq(ibsrq);
	struct ib_srq_attr *attr = &init->attr;
	int err;

	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (!attr->max_wr || attr->max_wr > lim->max_qp_wr ||
	    attr->max_sge > lim->max_recv_sge ||
	    attr->srq_limit > attr->max_wr)
		return -EINVAL;
	if (!rsim_res_get(rsim, RSIM_RES_SRQ))
		return -ENOMEM;
	err = rsim_wq_alloc(rsim, &srq->rq, attr->max_wr, attr->max_sge,
			    sizeof(struct rsim_recv_wqe), 0);
	if (err) {
		rsim_res_put(rsim, RSIM_RES_SRQ);
		return err;
	}
	spin_lock_init(&srq->lock);
	srq->limit = attr->srq_limit;
	return 0;
}

static int rsim_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct rsim_srq *srq = to_rsim_srq(ibsrq);

	/* the core refuses while a QP uses it: no data path reaches it */
	kvfree(srq->rq.ring);
	rsim_res_put(to_rsim_dev(ibsrq->device), RSIM_RES_SRQ);
	return 0;
}

static int rsim_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			   enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct rsim_srq *srq = to_rsim_srq(ibsrq);
	unsigned long flags;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	/* no IB_DEVICE_SRQ_RESIZE */
	if (mask & IB_SRQ_MAX_WR)
		return -EINVAL;
	if (!(mask & IB_SRQ_LIMIT))
		return 0;
	if (attr->srq_limit > srq->rq.max_wr)
		return -EINVAL;
	spin_lock_irqsave(&srq->lock, flags);
	srq->limit = attr->srq_limit;
	spin_unlock_irqrestore(&srq->lock, flags);
	return 0;
}

static int rsim_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct rsim_srq *srq = to_rsim_srq(ibsrq);
	unsigned long flags;

	attr->max_wr = srq->rq.max_wr;
	attr->max_sge = srq->rq.max_sge;
	spin_lock_irqsave(&srq->lock, flags);
	attr->srq_limit = srq->limit;
	spin_unlock_irqrestore(&srq->lock, flags);
	return 0;
}

/*
 * Wake every RC requester that waits (RNR) on a QP of @srq: the QP table
 * is walked one QP at a time, each held while its requester is woken.
 *
 * Context: process or softirq, interrupts on (the QP table's lock).
 */
static void rsim_srq_wake(struct rsim_srq *srq)
{
	struct rsim_dev *rsim = to_rsim_dev(srq->ibsrq.device);
	unsigned long i = 0;
	struct rsim_qp *qp;

	for (;;) {
		xa_lock_bh(&rsim->qp_xa);
		qp = xa_find(&rsim->qp_xa, &i, ULONG_MAX, XA_PRESENT);
		/* one being destroyed is passed over */
		if (qp && !refcount_inc_not_zero(&qp->ref))
			qp = ERR_PTR(-ENOENT);
		xa_unlock_bh(&rsim->qp_xa);
		if (!qp)
			return;
		if (!IS_ERR(qp)) {
			if (qp->ibqp.srq == &srq->ibsrq &&
			    qp->ibqp.qp_type == IB_QPT_RC)
				rsim_dp_wake_requester(qp);
			rsim_qp_put(qp);
		}
		i++;
	}
}

/* Context: any; does not sleep (see rsim_srq_wake() for the waking). */
static int rsim_post_srq_recv(struct ib_srq *ibsrq,
			      const struct ib_recv_wr *wr,
			      const struct ib_recv_wr **bad_wr)
{
	struct rsim_srq *srq = to_rsim_srq(ibsrq);
	unsigned long flags;
	bool posted;
	u32 count;
	int err;

	spin_lock_irqsave(&srq->lock, flags);
	count = srq->rq.count;
	err = rsim_wq_post_recv(&srq->rq, &wr);
	posted = srq->rq.count != count;
	spin_unlock_irqrestore(&srq->lock, flags);
	if (err)
		*bad_wr = wr;
	/*
	 * A requester waiting on an RNR NAK retries on its timer in any
	 * case; from a context that may walk the QP table it goes on now.
	 */
	if (posted && !in_hardirq() && !in_nmi() && !irqs_disabled())
		rsim_srq_wake(srq);
	return err;
}

/**
 * rsim_srq_take() - take the receive WR at the head of an SRQ
 * @srq: the SRQ of the QP a message arrived for
 * @rwqe: where to copy it (room for the device's max_recv_sge SGEs)
 *
 * Called under the QP's lock (lock order: QP, then SRQ). An armed limit
 * that the take crosses is disarmed; the caller raises the event with
 * rsim_srq_event() once it holds no lock.
 *
 * Context: any; does not sleep.
 * Return: -ENOENT if the SRQ is empty; 1 if the limit event is due; 0.
 */
int rsim_srq_take(struct rsim_srq *srq, struct rsim_recv_wqe *rwqe)
{
	struct rsim_recv_wqe *wqe;
	int ret = 0;

	spin_lock(&srq->lock);
	if (!srq->rq.count) {
		spin_unlock(&srq->lock);
		return -ENOENT;
	}
	wqe = rsim_wqe(&srq->rq, 0);
	memcpy(rwqe, wqe, struct_size(wqe, sge, wqe->num_sge));
	rsim_wq_pop(&srq->rq);
	if (srq->limit && srq->rq.count < srq->limit) {
		srq->limit = 0;
		ret = 1;
	}
	spin_unlock(&srq->lock);
	return ret;
}

/**
 * rsim_srq_event() - raise an SRQ's asynchronous event
 * @srq: the SRQ
 * @type: IB_EVENT_SRQ_LIMIT_REACHED (or IB_EVENT_SRQ_ERR)
 *
 * Context: process or softirq; no rdmasim lock held.
 */
void rsim_srq_event(struct rsim_srq *srq, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = type,
	};

	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}

const struct ib_device_ops rsim_srq_ops = {
	.create_srq = rsim_create_srq,
	.destroy_srq = rsim_destroy_srq,
	.modify_srq = rsim_modify_srq,
	.post_srq_recv = rsim_post_srq_recv,
	.query_srq = rsim_query_srq,

	INIT_RDMA_OBJ_SIZE(ib_srq, rsim_srq, ibsrq),
};
