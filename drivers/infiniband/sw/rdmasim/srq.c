// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: shared receive queues, basic and XRC, and XRC domains.
 *
 * An SRQ is a ring of receive WRs that any number of RC, UC and UD QPs
 * take from, in order, when a message arrives for one of them (dp.c,
 * rsim_dp_take_recv()); the completion goes to that QP's receive CQ. A
 * QP attached to an SRQ has no receive queue of its own: post_recv on it
 * is EINVAL. Arming the limit (modify_srq with IB_SRQ_LIMIT) asks for one
 * IB_EVENT_SRQ_LIMIT_REACHED when fewer WRs than the limit remain; a QP of
 * an SRQ that enters the error state gets IB_EVENT_QP_LAST_WQE_REACHED
 * (IBA 10.3.1: no more WQEs of the SRQ will be consumed on its behalf).
 * An XRC SRQ (IB_SRQT_XRC) belongs to an XRC domain and has a number
 * (its ext.xrc.srq_num): the WRs of an XRC INI QP name it, and a message
 * that arrives at an XRC TGT QP of the same domain takes its receive WR
 * from it; the completion goes to the SRQ's own CQ (dp.c). Its number is
 * looked up under a lock and the SRQ held while a WR uses it, so that
 * destroy_srq (which no QP holds back) waits for that WR.
 *
 * Resizing (modify_srq with IB_SRQ_MAX_WR, IB_DEVICE_SRQ_RESIZE) makes a
 * new ring and keeps the old one: the WRs in it when the resize took
 * effect are taken first, in order, then the new ring's, so nothing is
 * copied under the lock (interrupts off) however deep the queue. They
 * count against the new depth until taken (&rsim_wq.held). A resize while
 * some remain is EBUSY; one below the WRs posted, or below the armed
 * limit, EINVAL. A mapped SRQ's new ring is the process's to map: the
 * provider passes, in the command's driver data, where the kernel writes
 * it (struct rsim_modify_srq_resp), and posts there from the resize on.
 *
 * A process whose context asked for mapped receive queues posts into a
 * ring (urq.c) instead of the post_srq_recv command, which is then its
 * doorbell: the requesters waiting on the SRQ's QPs go on. A producer
 * index out of range puts the QP a message arrived for in the error
 * state, as a malformed WR does (dp.c).
 */

#include <linux/slab.h>
#include <rdma/uverbs_ioctl.h>
#include <rdmasim/rdmasim-abi.h>

#include "rdmasim.h"

static int rsim_create_srq(struct ib_srq *ibsrq,
			   struct ib_srq_init_attr *init,
			   struct ib_udata *udata)
{
	struct rsim_dev *rsim = to_rsim_dev(ibsrq->device);
	const struct rsim_limits *lim = &rsim->cfg.limits;
	struct ib_ucontext *uctx = rsim_umap_uctx(udata, RSIM_UCTX_MAP_RQ);
	struct rsim_srq *srq = to_rsim_srq(ibsrq);
	struct ib_srq_attr *attr = &init->attr;
	struct rsim_create_srq_resp resp = {};
	int err;

	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	/* a provider that asked for rings has room for their offset */
	if (uctx && udata->outlen < sizeof(resp))
		return -EINVAL;
	if (init->srq_type != IB_SRQT_BASIC && init->srq_type != IB_SRQT_XRC)
		return -EOPNOTSUPP;
	/* the core sets ext.cq and ext.xrc.xrcd before it calls here */
	if (init->srq_type == IB_SRQT_XRC &&
	    (!ibsrq->ext.cq || !ibsrq->ext.xrc.xrcd))
		return -EINVAL;
	if (!attr->max_wr || attr->max_wr > lim->max_qp_wr ||
	    attr->max_sge > lim->max_recv_sge ||
	    attr->srq_limit > attr->max_wr)
		return -EINVAL;
	if (!rsim_res_get(rsim, RSIM_RES_SRQ))
		return -ENOMEM;
	if (uctx)
		err = rsim_urq_new(rsim, uctx, &srq->rq, attr->max_wr,
				   attr->max_sge, &resp.rq);
	else
		err = rsim_wq_alloc(rsim, &srq->rq, attr->max_wr,
				    attr->max_sge, sizeof(struct rsim_recv_wqe),
				    0);
	if (err)
		goto err_res;
	if (uctx) {
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_free_rq;
	}
	spin_lock_init(&srq->lock);
	mutex_init(&srq->resize_mutex);
	srq->limit = attr->srq_limit;
	INIT_LIST_HEAD(&srq->waiters);
	rsim_ev_obj_init(&srq->ev, RSIM_EV_SRQ);
	refcount_set(&srq->ref, 1);
	if (init->srq_type == IB_SRQT_XRC) {
		/* last: the number makes it reachable from the data path */
		err = rsim_should_fail(rsim, RSIM_FAULT_ALLOC) ? -ENOMEM :
		      xa_alloc_cyclic_bh(&rsim->xsrq_xa, &srq->srqn, srq,
					 XA_LIMIT(1, RSIM_QPN_MAX),
					 &rsim->xsrq_next, GFP_KERNEL);
		if (err < 0) {
			err = err == -EBUSY ? -ENOMEM : err;
			goto err_mutex;
		}
		ibsrq->ext.xrc.srq_num = srq->srqn;
	}
	return 0;

err_mutex:
	mutex_destroy(&srq->resize_mutex);
err_free_rq:
	rsim_wq_free(&srq->rq);
err_res:
	rsim_res_put(rsim, RSIM_RES_SRQ);
	return err;
}

static int rsim_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct rsim_srq *srq = to_rsim_srq(ibsrq);

	/*
	 * the core refuses while a QP uses it; an XRC SRQ, which WRs name by
	 * number, is unpublished first, then the data path's references
	 * drop (each held across one WR's take and copy)
	 */
	if (srq->srqn) {
		xa_erase_bh(&to_rsim_dev(ibsrq->device)->xsrq_xa, srq->srqn);
		if (!refcount_dec_and_test(&srq->ref))
			wait_var_event(&srq->ref, !refcount_read(&srq->ref));
	}
	rsim_ev_forget(to_rsim_dev(ibsrq->device), &srq->ev);
	rsim_wq_free(&srq->old);
	rsim_wq_free(&srq->rq);
	mutex_destroy(&srq->resize_mutex);
	rsim_res_put(to_rsim_dev(ibsrq->device), RSIM_RES_SRQ);
	return 0;
}

/* WRs posted to the SRQ: its ring's, and those held from before a resize */
static u32 rsim_srq_count(struct rsim_srq *srq)
{
	lockdep_assert_held(&srq->lock);
	return (srq->rq.umap ? rsim_urq_count(&srq->rq) : srq->rq.count) +
	       srq->rq.held;
}

/*
 * A new ring of @max_wr for the SRQ (see the top). Context: process;
 * @resize_mutex held.
 */
static int rsim_srq_resize(struct rsim_srq *srq, u32 max_wr,
			   struct ib_udata *udata)
{
	struct rsim_dev *rsim = to_rsim_dev(srq->ibsrq.device);
	struct ib_ucontext *uctx = rsim_umap_uctx(udata, RSIM_UCTX_MAP_RQ);
	struct rsim_modify_srq_resp resp = {};
	struct rsim_modify_srq_cmd cmd = {};
	struct rsim_wq nrq = {}, gone;
	unsigned long flags;
	u32 posted;
	int err;

	if (!max_wr || max_wr > rsim->cfg.limits.max_qp_wr)
		return -EINVAL;
	if (srq->rq.umap) {
		/* where the new ring goes: the provider's driver data */
		if (!uctx || udata->inlen < sizeof(cmd))
			return -EINVAL;
		err = ib_copy_from_udata(&cmd, udata, sizeof(cmd));
		if (err)
			return err;
		if (!cmd.resp_addr)
			return -EINVAL;
	}
	spin_lock_irqsave(&srq->lock, flags);
	err = srq->rq.held ? -EBUSY : 0;
	spin_unlock_irqrestore(&srq->lock, flags);
	if (err)
		return err;

	if (srq->rq.umap)
		err = rsim_urq_new(rsim, uctx, &nrq, max_wr, srq->rq.max_sge,
				   &resp.rq);
	else
		err = rsim_wq_alloc(rsim, &nrq, max_wr, srq->rq.max_sge,
				    sizeof(struct rsim_recv_wqe), 0);
	if (err)
		return err;
	/* the process learns of the ring before it is the SRQ's */
	if (srq->rq.umap &&
	    copy_to_user(u64_to_user_ptr(cmd.resp_addr), &resp, sizeof(resp))) {
		err = -EFAULT;
		goto err_free;
	}

	spin_lock_irqsave(&srq->lock, flags);
	posted = rsim_srq_count(srq);
	if (posted > max_wr || srq->limit > max_wr) {
		spin_unlock_irqrestore(&srq->lock, flags);
		err = -EINVAL;
		goto err_free;
	}
	/* a mapped ring's: up to the process's index as read here */
	gone = srq->old;
	srq->old = srq->rq;
	srq->rq = nrq;
	srq->rq.held = posted;
	if (srq->rq.umap)
		rsim_urq_consumed(&srq->rq);
	spin_unlock_irqrestore(&srq->lock, flags);
	/* drained before this resize (it had no WRs held) */
	rsim_wq_free(&gone);
	return 0;

err_free:
	rsim_wq_free(&nrq);
	return err;
}

static int rsim_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			   enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct rsim_srq *srq = to_rsim_srq(ibsrq);
	unsigned long flags;
	int err = 0;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	/* driver data: rsim_modify_srq_cmd, and zeros past it */
	if (udata && udata->inlen > sizeof(struct rsim_modify_srq_cmd) &&
	    !ib_is_udata_cleared(udata, sizeof(struct rsim_modify_srq_cmd),
				 udata->inlen -
				 sizeof(struct rsim_modify_srq_cmd)))
		return -EINVAL;
	mutex_lock(&srq->resize_mutex);
	if (mask & IB_SRQ_MAX_WR)
		err = rsim_srq_resize(srq, attr->max_wr, udata);
	if (!err && (mask & IB_SRQ_LIMIT)) {
		spin_lock_irqsave(&srq->lock, flags);
		if (attr->srq_limit > srq->rq.max_wr)
			err = -EINVAL;
		else
			srq->limit = attr->srq_limit;
		spin_unlock_irqrestore(&srq->lock, flags);
	}
	mutex_unlock(&srq->resize_mutex);
	return err;
}

static int rsim_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct rsim_srq *srq = to_rsim_srq(ibsrq);
	unsigned long flags;

	spin_lock_irqsave(&srq->lock, flags);
	attr->max_wr = srq->rq.max_wr;
	attr->max_sge = srq->rq.max_sge;
	attr->srq_limit = srq->limit;
	spin_unlock_irqrestore(&srq->lock, flags);
	return 0;
}

/*
 * Context: any; does not sleep. The requesters that wait (RNR) on a QP
 * of the SRQ are not run here: each one's wake-up goes to the device's
 * worker (the QP's @wake_work), one queue_work() per waiting QP.
 */
static int rsim_post_srq_recv(struct ib_srq *ibsrq,
			      const struct ib_recv_wr *wr,
			      const struct ib_recv_wr **bad_wr)
{
	struct rsim_srq *srq = to_rsim_srq(ibsrq);
	struct rsim_dev *rsim = to_rsim_dev(ibsrq->device);
	struct rsim_qp *qp, *tmp;
	unsigned long flags;
	bool wake;
	u32 count;
	int err;

	if (ibsrq->uobject && wr)
		atomic64_inc(&rsim->user_recv_posts);
	spin_lock_irqsave(&srq->lock, flags);
	if (srq->rq.umap) {
		/* the doorbell of a mapped SRQ: the process posts to the ring */
		err = wr ? -EOPNOTSUPP : 0;
		wake = !wr;
		if (wake) {
			atomic64_inc(&rsim->recv_doorbells);
			rsim_urq_doorbell(&srq->rq);
		}
	} else {
		count = srq->rq.count;
		err = rsim_wq_post_recv(&srq->rq, &wr);
		wake = srq->rq.count != count;
	}
	if (wake) {
		list_for_each_entry_safe(qp, tmp, &srq->waiters, srq_wait) {
			list_del_init(&qp->srq_wait);
			queue_work(rsim->dp_wq, &qp->wake_work);
		}
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	if (err)
		*bad_wr = wr;
	return err;
}

/**
 * rsim_srq_unwait() - take a QP off its SRQ's waiters
 * @qp: a QP of an SRQ, being destroyed: once this returns, no post to
 *	the SRQ queues its @wake_work
 *
 * Context: any; does not sleep.
 */
void rsim_srq_unwait(struct rsim_qp *qp)
{
	struct rsim_srq *srq = to_rsim_srq(qp->ibqp.srq);
	unsigned long flags;

	spin_lock_irqsave(&srq->lock, flags);
	list_del_init(&qp->srq_wait);
	spin_unlock_irqrestore(&srq->lock, flags);
}

/**
 * rsim_srq_take() - take the receive WR at the head of an SRQ
 * @srq: the SRQ of the QP a message arrived for
 * @rwqe: where to copy it (room for RSIM_RECV_SGE_CEIL SGEs)
 * @waiter: the RC QP the message arrived for, or NULL (UC, UD): if the
 *	SRQ is empty, it goes on @srq's waiters, for the next post to wake
 *	its requester
 *
 * Called under the QP's lock (lock order: QP, then SRQ). An armed limit
 * that the take crosses is disarmed; the caller raises the event with
 * rsim_srq_event() once it holds no lock. A mapped SRQ's WR is copied
 * from its ring (rsim_urq_take()).
 *
 * Context: any; does not sleep.
 * Return: -ENOENT if the SRQ is empty; 1 if the limit event is due; 0;
 *	for a mapped SRQ, -EBADMSG (a malformed WR taken) or -EIO (its
 *	producer index out of range).
 */
int rsim_srq_take(struct rsim_srq *srq, struct rsim_recv_wqe *rwqe,
		  struct rsim_qp *waiter)
{
	struct rsim_recv_wqe *wqe;
	int ret = 0;

	spin_lock(&srq->lock);
	if (srq->rq.held) {
		/* a WR from before a resize: the oldest first */
		if (srq->old.umap) {
			ret = rsim_urq_take_slot(&srq->old, rwqe);
		} else {
			wqe = rsim_wqe(&srq->old, 0);
			memcpy(rwqe, wqe, struct_size(wqe, sge, wqe->num_sge));
			rsim_wq_pop(&srq->old);
		}
		srq->rq.held--;
		if (srq->rq.umap)
			rsim_urq_consumed(&srq->rq);
		goto limit;
	}
	if (srq->rq.umap)
		ret = rsim_urq_take(&srq->rq, rwqe, waiter);
	else if (!srq->rq.count)
		ret = -ENOENT;
	if (ret == -ENOENT && waiter && list_empty(&waiter->srq_wait))
		list_add_tail(&waiter->srq_wait, &srq->waiters);
	if (ret) {
		spin_unlock(&srq->lock);
		return ret;
	}
	if (!srq->rq.umap) {
		wqe = rsim_wqe(&srq->rq, 0);
		memcpy(rwqe, wqe, struct_size(wqe, sge, wqe->num_sge));
		rsim_wq_pop(&srq->rq);
	}
limit:
	if (ret >= 0 && srq->limit && rsim_srq_count(srq) < srq->limit) {
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
 * Context: the device's dispatcher (event.c); no rdmasim lock held.
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

/**
 * rsim_xsrq_get() - the XRC SRQ a WR names, held
 * @rsim: the responder's device
 * @srqn: its number
 * @xrcd: the XRC domain of the TGT QP the WR arrived at: the SRQ must be
 *	of it
 *
 * Context: process or softirq.
 * Return: the SRQ, to release with rsim_xsrq_put(), or NULL.
 */
struct rsim_srq *rsim_xsrq_get(struct rsim_dev *rsim, u32 srqn,
			       const struct ib_xrcd *xrcd)
{
	struct rsim_srq *srq;

	xa_lock_bh(&rsim->xsrq_xa);
	srq = xa_load(&rsim->xsrq_xa, srqn);
	if (srq && (srq->ibsrq.ext.xrc.xrcd != xrcd ||
		    !refcount_inc_not_zero(&srq->ref)))
		srq = NULL;
	xa_unlock_bh(&rsim->xsrq_xa);
	return srq;
}

/**
 * rsim_xsrq_put() - drop a reference from rsim_xsrq_get()
 * @srq: the SRQ
 *
 * Context: any but hard IRQ.
 */
void rsim_xsrq_put(struct rsim_srq *srq)
{
	if (refcount_dec_and_test(&srq->ref))
		wake_up_var(&srq->ref);
}

/*
 * XRC domains: nothing of the device's own; the core shares them between
 * processes (by the file they are opened with) and keeps their TGT QPs.
 */
static int rsim_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	return 0;
}

static int rsim_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	return 0;
}

const struct ib_device_ops rsim_xrc_ops = {
	.alloc_xrcd = rsim_alloc_xrcd,
	.dealloc_xrcd = rsim_dealloc_xrcd,

	INIT_RDMA_OBJ_SIZE(ib_xrcd, rsim_xrcd, ibxrcd),
};

const struct ib_device_ops rsim_srq_ops = {
	.create_srq = rsim_create_srq,
	.destroy_srq = rsim_destroy_srq,
	.modify_srq = rsim_modify_srq,
	.post_srq_recv = rsim_post_srq_recv,
	.query_srq = rsim_query_srq,

	INIT_RDMA_OBJ_SIZE(ib_srq, rsim_srq, ibsrq),
};
