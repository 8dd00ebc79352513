// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: queue pairs: creation, the state machine, posting and flushing
 * work queues. The loopback engine that executes send WRs is in dp.c.
 *
 * Lock order: QP lock (one at a time), then CQ locks. The QP lock is
 * taken with interrupts off: WRs may be posted from any context. Only the
 * owner of a send queue (see &enum rsim_sq_owner) moves its head or
 * flushes it; post_send adds at the tail; modify_qp and the data path
 * enter the error state through rsim_qp_error_locked(), which leaves a
 * send queue that someone executes to its owner.
 *
 * UD, SMI and GSI QPs send datagrams (dp.c); the MAD layer posts 512
 * receive WRs on QP0 and QP1 when the device registers; their
 * receive WRs are queued (the MAD layer posts 512 on QP0 and QP1 when the
 * device registers). Entering the error state flushes both queues.
 */

#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait_bit.h>
#include <rdmasim/rdmasim-abi.h>

#include "rdmasim.h"

/**
 * rsim_qp_init() - set up a device's QP table and data-path worker
 * @rsim: device
 *
 * Context: process.
 * Return: 0 or -ENOMEM; rsim_qp_exit() undoes a partial setup.
 */
int rsim_qp_init(struct rsim_dev *rsim)
{
	int err;

	xa_init_flags(&rsim->qp_xa, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_BH);
	rsim->qp_next = RSIM_QPN_MIN;
	spin_lock_init(&rsim->atomic_lock);
	spin_lock_init(&rsim->stats_lock);
	err = rsim_ev_init(rsim);
	if (err)
		return err;
	/*
	 * Per-CPU workers, so that a QP's work runs where its policy puts it;
	 * CPU-intensive, so that one long copy does not hold back the other
	 * QPs' work queued on that CPU.
	 */
	rsim->dp_wq = alloc_workqueue("rdmasim%u_dp",
				      RSIM_WQ_PERCPU | WQ_CPU_INTENSIVE, 0,
				      rsim->id);
	return rsim->dp_wq ? 0 : -ENOMEM;
}

void rsim_qp_exit(struct rsim_dev *rsim)
{
	if (rsim->dp_wq)
		destroy_workqueue(rsim->dp_wq);
	rsim_ev_exit(rsim);
	WARN_ON(!xa_empty(&rsim->qp_xa));
	xa_destroy(&rsim->qp_xa);
}

/**
 * rsim_qp_get() - find a QP by number and hold it
 * @rsim: device
 * @qpn: QP number
 *
 * Context: process or softirq, interrupts on.
 * Return: the QP, to release with rsim_qp_put(), or NULL.
 */
struct rsim_qp *rsim_qp_get(struct rsim_dev *rsim, u32 qpn)
{
	struct rsim_qp *qp;

	xa_lock_bh(&rsim->qp_xa);
	qp = xa_load(&rsim->qp_xa, qpn);
	if (qp && !refcount_inc_not_zero(&qp->ref))
		qp = NULL;
	xa_unlock_bh(&rsim->qp_xa);
	return qp;
}

/* Context: any. */
void rsim_qp_put(struct rsim_qp *qp)
{
	/* destroy_qp may free @qp once the count is 0: only its address is used */
	if (refcount_dec_and_test(&qp->ref))
		wake_up_var(&qp->ref);
}

/* Slot @n of @wq, counted from the head; under the QP lock. */
void *rsim_wqe(struct rsim_wq *wq, u32 n)
{
	return wq->ring + (size_t)((wq->head + n) % wq->max_wr) * wq->wqe_size;
}

/*
 * Remove the WR at the head; under the QP lock, by the queue's owner. A
 * mapped send queue's slot is the process's again (usq.c).
 */
void rsim_wq_pop(struct rsim_wq *wq)
{
	if (WARN_ON_ONCE(!wq->count))
		return;
	wq->head = (wq->head + 1) % wq->max_wr;
	wq->count--;
	if (wq->uslot)
		rsim_usq_popped(wq);
}

/**
 * rsim_wq_post_recv() - queue a list of receive WRs
 * @rq: a QP's receive queue or an SRQ's, its lock held
 * @wr: the list; left at the WR that was refused (NULL if none was)
 *
 * The post-time rules of post_recv and post_srq_recv: no more SGEs than
 * the queue's, no more WRs than fit; the WRs before a refused one stay
 * queued.
 *
 * Context: any; does not sleep.
 * Return: 0, -EINVAL (too many SGEs) or -ENOMEM (the queue is full).
 */
int rsim_wq_post_recv(struct rsim_wq *rq, const struct ib_recv_wr **wr)
{
	for (; *wr; *wr = (*wr)->next) {
		const struct ib_recv_wr *w = *wr;
		struct rsim_recv_wqe *wqe;

		if (w->num_sge < 0 || w->num_sge > rq->max_sge)
			return -EINVAL;
		if (rq->count + rq->held >= rq->max_wr)
			return -ENOMEM;
		wqe = rsim_wqe(rq, rq->count);
		wqe->wr_id = w->wr_id;
		wqe->num_sge = w->num_sge;
		memcpy(wqe->sge, w->sg_list, w->num_sge * sizeof(*w->sg_list));
		rq->count++;
	}
	return 0;
}

/* a queue's rings: the kernel's, and a mapped one's (urq.c, usq.c) */
void rsim_wq_free(struct rsim_wq *wq)
{
	kvfree(wq->ring);
	wq->ring = NULL;
	kfree(wq->uslot);
	wq->uslot = NULL;
	rsim_urq_free(wq);
}

/*
 * A ring of @max_wr slots of @hdr bytes plus @max_sge SGEs (or @payload
 * bytes of inline data, if more).
 */
int rsim_wq_alloc(struct rsim_dev *rsim, struct rsim_wq *wq, u32 max_wr,
		  u32 max_sge, size_t hdr, size_t payload)
{
	wq->max_wr = max_wr;
	wq->max_sge = max_sge;
	wq->wqe_size = ALIGN(hdr + max_t(size_t, payload,
					 (size_t)max_sge * sizeof(struct ib_sge)),
			     sizeof(u64));
	if (!max_wr)
		return 0;
	if (rsim_should_fail(rsim, RSIM_FAULT_ALLOC))
		return -ENOMEM;
	wq->ring = kvcalloc(max_wr, wq->wqe_size, GFP_KERNEL_ACCOUNT);
	return wq->ring ? 0 : -ENOMEM;
}

/*
 * The engine's scratch space: the requester's and the responder's checked
 * lists, and a copy of the receive WR a SEND takes, as large as any QP's
 * of any device: the responder may be another device's, whose limits are
 * not this one's.
 */
static int rsim_qp_scratch_alloc(struct rsim_dev *rsim, struct rsim_qp *qp)
{
	u32 nr = RSIM_RECV_SGE_CEIL;
	u32 nl = max(qp->sq.max_sge, 1U);

	if (rsim_should_fail(rsim, RSIM_FAULT_ALLOC))
		return -ENOMEM;
	qp->lrefs = kcalloc(nl + nr, sizeof(*qp->lrefs), GFP_KERNEL_ACCOUNT);
	if (!qp->lrefs)
		return -ENOMEM;
	qp->rrefs = qp->lrefs + nl;
	qp->rwqe = kzalloc(struct_size(qp->rwqe, sge, nr), GFP_KERNEL_ACCOUNT);
	if (!qp->rwqe) {
		kfree(qp->lrefs);
		return -ENOMEM;
	}
	return 0;
}

static void rsim_qp_scratch_free(struct rsim_qp *qp)
{
	kfree(qp->rwqe);
	kfree(qp->lrefs);
}

static int rsim_qp_check_init(struct rsim_dev *rsim,
			      const struct ib_qp_init_attr *init)
{
	const struct rsim_limits *lim = &rsim->cfg.limits;
	const struct ib_qp_cap *cap = &init->cap;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		break;
	case IB_QPT_XRC_INI:
	case IB_QPT_XRC_TGT:
		/* checked below: queues and CQs as each type has them */
		break;
	case IB_QPT_SMI:
		/* an Ethernet port has no subnet management */
		if (rsim_is_roce(rsim))
			return -EOPNOTSUPP;
		fallthrough;
	case IB_QPT_GSI:
		if (init->port_num != RSIM_PORT)
			return -EINVAL;
		break;
	default:
		return -EOPNOTSUPP;
	}
	/* a UD QP may keep its multicast datagrams off its own port */
	if ((init->create_flags & ~IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK) ||
	    (init->create_flags && init->qp_type != IB_QPT_UD) ||
	    init->rwq_ind_tbl)
		return -EOPNOTSUPP;
	if (init->srq && (init->srq->srq_type != IB_SRQT_BASIC ||
			  init->qp_type == IB_QPT_SMI ||
			  init->qp_type == IB_QPT_GSI))
		return -EOPNOTSUPP;
	/*
	 * XRC: an INI QP sends only (no receive queue, no SRQ); a TGT QP
	 * has no queue and no CQ at all (its messages take their receive
	 * WRs from the XRC SRQ each names, whose CQ completes them), no PD
	 * but its XRC domain
	 */
	if (init->qp_type == IB_QPT_XRC_TGT)
		return init->xrcd && !init->srq && !init->send_cq &&
		       !init->recv_cq && !cap->max_send_wr &&
		       !cap->max_recv_wr ? 0 : -EINVAL;
	if (init->qp_type == IB_QPT_XRC_INI) {
		if (init->srq || cap->max_recv_wr || !init->send_cq)
			return -EINVAL;
	} else if (!init->send_cq || !init->recv_cq) {
		return -EINVAL;
	}
	if (cap->max_send_wr > lim->max_qp_wr ||
	    cap->max_recv_wr > lim->max_qp_wr ||
	    cap->max_send_sge > lim->max_send_sge ||
	    cap->max_recv_sge > lim->max_recv_sge ||
	    cap->max_inline_data > lim->max_inline_data)
		return -EINVAL;
	return 0;
}

static int rsim_qpn_alloc(struct rsim_dev *rsim, struct rsim_qp *qp,
			  enum ib_qp_type type)
{
	u32 qpn;
	int err;

	if (rsim_should_fail(rsim, RSIM_FAULT_ALLOC))
		return -ENOMEM;

	if (type == IB_QPT_SMI || type == IB_QPT_GSI) {
		/* QP0 and QP1 exist once per port */
		qpn = type == IB_QPT_SMI ? 0 : 1;
		err = xa_insert_bh(&rsim->qp_xa, qpn, qp, GFP_KERNEL);
	} else {
		err = xa_alloc_cyclic_bh(&rsim->qp_xa, &qpn, qp,
					 XA_LIMIT(RSIM_QPN_MIN, RSIM_QPN_MAX),
					 &rsim->qp_next, GFP_KERNEL);
		if (err == -EBUSY)
			err = -ENOMEM;
	}
	if (err < 0)
		return err;
	qp->ibqp.qp_num = qpn;
	return 0;
}

static int rsim_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
			  struct ib_udata *udata)
{
	struct rsim_dev *rsim = to_rsim_dev(ibqp->device);
	struct ib_ucontext *uctx = rsim_umap_uctx(udata, RSIM_UCTX_MAP_RQ);
	struct ib_ucontext *suctx = rsim_umap_uctx(udata, RSIM_UCTX_MAP_SQ);
	struct rsim_qp *qp = to_rsim_qp(ibqp);
	struct rsim_create_qp_resp resp = {};
	size_t resp_len = suctx ? sizeof(resp) :
			  offsetofend(struct rsim_create_qp_resp, rq);
	int err;

	/*
	 * A user QP (uverbs) posts sends through the core's post_send
	 * command, whose SGEs name user MRs by lkey and user virtual
	 * addresses, which the data path translates like any MR; its inline
	 * data is copied in before the QP's lock is taken
	 * (rsim_post_send_user_inline()). Its receives go through the
	 * post_recv command too, or, if its context asked for mapped
	 * receive queues, into a ring it maps (urq.c), whose offset is the
	 * driver response; likewise its sends, with mapped send queues
	 * (usq.c). No driver data in the request.
	 */
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	/* a provider that asked for rings has room for their offsets */
	if ((uctx || suctx) && udata->outlen < resp_len)
		return -EINVAL;
	/*
	 * an XRC INI QP's WRs name an XRC SRQ, which only a mapped send
	 * queue's slot can carry (the post_send command and the kernel's
	 * send WR have no field for it)
	 */
	if (init->qp_type == IB_QPT_XRC_INI && !suctx)
		return -EOPNOTSUPP;
	err = rsim_qp_check_init(rsim, init);
	if (err)
		return err;
	if (!rsim_res_get(rsim, RSIM_RES_QP))
		return -ENOMEM;

	spin_lock_init(&qp->lock);
	mutex_init(&qp->modify_mutex);
	qp->serial = atomic64_inc_return(&rsim->qp_serial);
	refcount_set(&qp->ref, 1);
	qp->state = IB_QPS_RESET;
	qp->owner = RSIM_SQ_IDLE;
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->mc_no_loopback = init->create_flags &
			     IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK;
	qp->max_inline = init->cap.max_inline_data;
	qp->cpu = WORK_CPU_UNBOUND;
	qp->steer_cpu = -1;
	INIT_DELAYED_WORK(&qp->work, rsim_dp_work);
	INIT_WORK(&qp->wake_work, rsim_dp_wake_work);
	rsim_ev_obj_init(&qp->ev, RSIM_EV_QP);
	INIT_LIST_HEAD(&qp->srq_wait);

	err = rsim_wq_alloc(rsim, &qp->sq, init->cap.max_send_wr,
			    init->cap.max_send_sge,
			    sizeof(struct rsim_send_wqe),
			    init->cap.max_inline_data);
	if (!err && suctx && init->qp_type != IB_QPT_XRC_TGT)
		err = rsim_usq_new(rsim, suctx, &qp->sq,
				   init->cap.max_inline_data, &resp.sq);
	if (err)
		goto err_free_sq;
	/* with an SRQ, no receive queue of its own */
	if (init->srq) {
		init->cap.max_recv_wr = 0;
		init->cap.max_recv_sge = 0;
	}
	if (uctx)
		err = rsim_urq_new(rsim, uctx, &qp->rq, init->cap.max_recv_wr,
				   init->cap.max_recv_sge, &resp.rq);
	else
		err = rsim_wq_alloc(rsim, &qp->rq, init->cap.max_recv_wr,
				    init->cap.max_recv_sge,
				    sizeof(struct rsim_recv_wqe), 0);
	if (err)
		goto err_free_sq;
	err = rsim_qp_scratch_alloc(rsim, qp);
	if (err)
		goto err_free_rq;
	if (uctx || suctx) {
		err = ib_copy_to_udata(udata, &resp, resp_len);
		if (err)
			goto err_free_scratch;
	}
	/* last: the number makes the QP visible */
	err = rsim_qpn_alloc(rsim, qp, init->qp_type);
	if (err)
		goto err_free_scratch;
	return 0;

err_free_scratch:
	rsim_qp_scratch_free(qp);
err_free_rq:
	rsim_wq_free(&qp->rq);
err_free_sq:
	rsim_wq_free(&qp->sq);
	mutex_destroy(&qp->modify_mutex);
	rsim_res_put(rsim, RSIM_RES_QP);
	return err;
}

/*
 * An XRC TGT QP's receive completions are in the CQs of its domain's XRC
 * SRQs (each held while its CQ is cleaned, so that destroy_srq waits)
 */
static void rsim_qp_clean_xrc_cqs(struct rsim_qp *qp)
{
	struct rsim_dev *rsim = to_rsim_dev(qp->ibqp.device);
	unsigned long idx = 0;
	struct rsim_srq *srq;

	for (;; idx++) {
		xa_lock_bh(&rsim->xsrq_xa);
		srq = xa_find(&rsim->xsrq_xa, &idx, ULONG_MAX, XA_PRESENT);
		while (srq && (srq->ibsrq.ext.xrc.xrcd != qp->ibqp.xrcd ||
			       !refcount_inc_not_zero(&srq->ref)))
			srq = xa_find_after(&rsim->xsrq_xa, &idx, ULONG_MAX,
					    XA_PRESENT);
		xa_unlock_bh(&rsim->xsrq_xa);
		if (!srq)
			break;
		rsim_cq_clean(to_rsim_cq(srq->ibsrq.ext.cq), &qp->ibqp);
		rsim_xsrq_put(srq);
	}
}

/*
 * The completions of @qp nobody polled: dropped from its CQs (as mlx4 and
 * mlx5 clean them), when it goes back to RESET and when it is destroyed,
 * so that no completion names a QP that is gone or delivers a flush of
 * an earlier life. The caller makes sure nothing adds one meanwhile
 * (destroy_qp: nobody holds the QP; RESET: nobody runs its send queue
 * and it receives nothing), and holds no spinlock: a clean takes the
 * CQs' locks for bounded batches only (rsim_cq_clean()).
 *
 * Context: process; sleeps.
 */
static void rsim_qp_clean_cqs(struct rsim_qp *qp)
{
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT)
		return rsim_qp_clean_xrc_cqs(qp);
	rsim_cq_clean(to_rsim_cq(qp->ibqp.send_cq), &qp->ibqp);
	/* an XRC INI QP has no receive CQ */
	if (qp->ibqp.recv_cq && qp->ibqp.recv_cq != qp->ibqp.send_cq)
		rsim_cq_clean(to_rsim_cq(qp->ibqp.recv_cq), &qp->ibqp);
}

/*
 * Tearing down waits only for what touches this QP: its own worker, and
 * a requester's step that holds it as responder (bounded by one WR).
 * Traffic on other QPs does not delay it. Once nothing holds it, no
 * completion can be added for it, and those its CQs still hold go.
 */
static int rsim_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct rsim_dev *rsim = to_rsim_dev(ibqp->device);
	struct rsim_qp *qp = to_rsim_qp(ibqp);
	union ib_gid pgid;
	u16 plid;
	u32 peer;

	/*
	 * No multicast datagram reaches it, then no lookup finds it: its
	 * attachments go while its number is still its own, so that a QP
	 * given the number next inherits none of them
	 */
	rsim_mcast_qp_gone(qp);
	xa_erase_bh(&rsim->qp_xa, ibqp->qp_num);
#if IS_ENABLED(CONFIG_KUNIT)
	if (rsim->qp_gone_hook)
		rsim->qp_gone_hook(qp);
#endif
	spin_lock_irq(&qp->lock);
	qp->dying = true;
	qp->stopping = true;
	peer = qp->attr.dest_qp_num;
	pgid = qp->attr.ah_attr.grh.dgid;
	plid = rdma_ah_get_dlid(&qp->attr.ah_attr);
	spin_unlock_irq(&qp->lock);
	/* no post to its SRQ queues its wake-up from here on */
	if (ibqp->srq)
		rsim_srq_unwait(qp);
	rsim_dp_stop(qp);
	rsim_qp_put(qp);
	wait_var_event(&qp->ref, !refcount_read(&qp->ref));
	rsim_qp_clean_cqs(qp);
	/* nobody holds it to queue an event: drop those still queued */
	rsim_ev_forget(rsim, &qp->ev);

	mutex_destroy(&qp->modify_mutex);
	rsim_qp_scratch_free(qp);
	rsim_wq_free(&qp->rq);
	rsim_wq_free(&qp->sq);
	rsim_res_put(rsim, RSIM_RES_QP);
	/* a requester waiting on this responder learns that it is gone */
	if (rsim_qp_is_rc(qp))
		rsim_dp_wake_qpn(rsim, plid, &pgid, peer, ibqp->qp_num, false);
	return 0;
}

/*
 * Attribute values the state table (ib_modify_qp_is_ok()) cannot judge:
 * ranges, device limits and the port. PSNs need no check: the core masks
 * them to 24 bits before calling the driver.
 */
static int rsim_qp_check_attr(struct rsim_dev *rsim,
			      const struct ib_qp_attr *attr, int mask)
{
	const struct rsim_limits *lim = &rsim->cfg.limits;

	if (mask & (IB_QP_ALT_PATH | IB_QP_PATH_MIG_STATE))
		return -EOPNOTSUPP;	/* no automatic path migration */
	if ((mask & IB_QP_PORT) && attr->port_num != RSIM_PORT)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index >= lim->pkey_tbl_len)
		return -EINVAL;
	/*
	 * The rights to receive RDMA FLUSH, of either placement type: a
	 * FLUSH needs its type's right here and in the MR (dp.c).
	 * IB_ACCESS_ON_DEMAND means nothing for a QP: accepted and ignored,
	 * as mlx5 does (rdma-core's ODP tests pass their MRs' flags).
	 */
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~(IB_ACCESS_REMOTE_WRITE |
				       IB_ACCESS_REMOTE_READ |
				       IB_ACCESS_REMOTE_ATOMIC |
				       IB_ACCESS_LOCAL_WRITE |
				       IB_ACCESS_ON_DEMAND |
				       RSIM_ACCESS_FLUSH)))
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num > RSIM_QPN_MAX)
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > lim->max_qp_init_rd_atom)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > lim->max_qp_rd_atom)
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_AV) && rsim_ah_attr_check(rsim, &attr->ah_attr))
		return -EINVAL;
	return 0;
}

enum ib_wc_opcode rsim_wc_opcode(enum ib_wr_opcode op)
{
	/* not case labels: before 6.2 the enum has no such values */
	if (op == RSIM_WR_FLUSH)
		return RSIM_WC_FLUSH;
	if (op == RSIM_WR_ATOMIC_WRITE)
		return RSIM_WC_ATOMIC_WRITE;
	switch (op) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_WR_BIND_MW:
		return IB_WC_BIND_MW;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	default:
		return IB_WC_SEND;
	}
}

/**
 * rsim_qp_push() - add a completion of one of @qp's WRs to a CQ
 * @n: where to note handlers, events and a lost completion
 * @qp: the QP; its lock is held
 * @ibcq: its send or receive CQ
 * @wc: the completion
 * @solicited: the WR asked for a solicited event
 *
 * A completion lost to a full CQ takes the QP to the error state at once
 * (nothing more executes); rsim_notify_run() flushes it and raises
 * IB_EVENT_QP_FATAL.
 *
 * Context: any; @qp's lock held.
 */
void rsim_qp_push(struct rsim_notify *n, struct rsim_qp *qp,
		  struct ib_cq *ibcq, const struct ib_wc *wc, bool solicited)
{
	lockdep_assert_held(&qp->lock);
	if (!rsim_cq_push(n, to_rsim_cq(ibcq), wc, solicited) ||
	    qp->state == IB_QPS_ERR)
		return;
	qp->state = IB_QPS_ERR;
	if (!WARN_ON_ONCE(n->nfatal == ARRAY_SIZE(n->fatal)))
		n->fatal[n->nfatal++] = qp;
}

/*
 * Posted receives complete with IB_WC_WR_FLUSH_ERR, in order; those of a
 * mapped queue as far as its process's index says (urq.c), and those it
 * posts later when it rings the doorbell.
 */
static void rsim_qp_flush_rq_locked(struct rsim_qp *qp, struct rsim_notify *n)
{
	lockdep_assert_held(&qp->lock);
	if (qp->rq.umap) {
		u32 k = rsim_urq_flushable(&qp->rq);
		struct ib_wc wc = {
			.status = IB_WC_WR_FLUSH_ERR,
			.opcode = IB_WC_RECV,
			.qp = &qp->ibqp,
		};

		while (k--) {
			wc.wr_id = rsim_urq_pop_id(&qp->rq);
			rsim_qp_push(n, qp, qp->ibqp.recv_cq, &wc, false);
		}
		rsim_urq_consumed(&qp->rq);
		return;
	}
	while (qp->rq.count) {
		struct rsim_recv_wqe *wqe = rsim_wqe(&qp->rq, 0);
		struct ib_wc wc = {
			.wr_id = wqe->wr_id,
			.status = IB_WC_WR_FLUSH_ERR,
			.opcode = IB_WC_RECV,
			.qp = &qp->ibqp,
		};

		rsim_qp_push(n, qp, qp->ibqp.recv_cq, &wc, false);
		rsim_wq_pop(&qp->rq);
	}
}

/**
 * rsim_qp_flush_sq_locked() - complete every send WR with a flush error
 * @qp: the QP, in the error state; its lock held by the send queue's owner
 *	(or with nobody owning it)
 * @n: notifications
 *
 * Signaled or not, every WR not executed completes with
 * IB_WC_WR_FLUSH_ERR, in order.
 */
void rsim_qp_flush_sq_locked(struct rsim_qp *qp, struct rsim_notify *n)
{
	lockdep_assert_held(&qp->lock);
	while (qp->sq.count) {
		struct rsim_send_wqe *wqe = rsim_wqe(&qp->sq, 0);
		struct ib_wc wc = {
			.wr_id = wqe->wr_id,
			.status = IB_WC_WR_FLUSH_ERR,
			.opcode = rsim_wc_opcode(wqe->opcode),
			.qp = &qp->ibqp,
		};

		rsim_qp_push(n, qp, qp->ibqp.send_cq, &wc, false);
		rsim_wq_pop(&qp->sq);
	}
	qp->rnr_tries = 0;
	qp->ack_tries = 0;
}

/**
 * rsim_qp_error_locked() - enter the error state
 * @qp: the QP; its lock held
 * @n: notifications
 *
 * Flushes the receive queue. The send queue is flushed here only if
 * nobody executes it (idle, or parked on an RNR wait); otherwise its owner
 * flushes it when it next looks at the head, so that a WR being executed
 * is completed exactly once.
 */
void rsim_qp_error_locked(struct rsim_qp *qp, struct rsim_notify *n)
{
	lockdep_assert_held(&qp->lock);
	/* an SRQ's QP: no more of its WQEs will be consumed for this one */
	if (qp->state != IB_QPS_ERR && qp->ibqp.srq &&
	    !WARN_ON_ONCE(n->nlast == ARRAY_SIZE(n->last_wqe)))
		n->last_wqe[n->nlast++] = qp;
	qp->state = IB_QPS_ERR;
	rsim_qp_flush_rq_locked(qp, n);
	if (qp->owner == RSIM_SQ_IDLE || qp->owner == RSIM_SQ_RNR) {
		rsim_qp_flush_sq_locked(qp, n);
		/* what a mapped send queue has published: the worker flushes */
		rsim_dp_idle_locked(qp);
	}
}

/**
 * rsim_qp_fatal() - a completion of @qp was lost: flush it and tell
 * @qp: the QP, already in the error state (rsim_qp_push())
 * @own: the QP whose verb the caller runs, or NULL (rsim_notify_run())
 *
 * The flush happens at once; its handlers and IB_EVENT_QP_FATAL run at
 * once if they are @own's, else on the dispatcher.
 *
 * Context: any; no rdmasim lock held; the caller holds @qp.
 */
void rsim_qp_fatal(struct rsim_qp *qp, const struct rsim_qp *own)
{
	struct rsim_notify n = {};
	unsigned long flags;

	spin_lock_irqsave(&qp->lock, flags);
	rsim_qp_error_locked(qp, &n);
	spin_unlock_irqrestore(&qp->lock, flags);
	rsim_notify_run(&n, own);
	rsim_qp_raise(qp, IB_EVENT_QP_FATAL, own);
}

/**
 * rsim_qp_event() - raise an affiliated asynchronous event on a QP
 * @qp: the QP (held by the caller)
 * @type: IB_EVENT_QP_*
 *
 * Context: as rsim_qp_raise() decides (event.c); no rdmasim lock held.
 */
void rsim_qp_event(struct rsim_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = type,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

static void rsim_qp_apply_locked(struct rsim_qp *qp,
				 const struct ib_qp_attr *attr, int mask)
{
	struct ib_qp_attr *cur = &qp->attr;

	lockdep_assert_held(&qp->lock);
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		cur->en_sqd_async_notify = attr->en_sqd_async_notify;
	if (mask & IB_QP_ACCESS_FLAGS)
		cur->qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PKEY_INDEX)
		cur->pkey_index = attr->pkey_index;
	if (mask & IB_QP_PORT)
		cur->port_num = attr->port_num;
	if (mask & IB_QP_QKEY)
		cur->qkey = attr->qkey;
	if (mask & IB_QP_AV) {
		cur->ah_attr = attr->ah_attr;
		/* the core owns the GID attribute reference */
		cur->ah_attr.grh.sgid_attr = NULL;
	}
	if (mask & IB_QP_PATH_MTU)
		cur->path_mtu = attr->path_mtu;
	if (mask & IB_QP_TIMEOUT)
		cur->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		cur->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		cur->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_RQ_PSN)
		cur->rq_psn = attr->rq_psn;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		cur->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		cur->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_SQ_PSN)
		cur->sq_psn = attr->sq_psn;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		cur->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_DEST_QPN)
		cur->dest_qp_num = attr->dest_qp_num;
}

/*
 * Back to RESET, once nobody executes the send queue (rsim_dp_stop()):
 * the queues are empty, no attributes, no completions of the earlier
 * life in the CQs (the caller's rsim_qp_clean_cqs(), before it took the
 * lock), and the queue is nobody's.
 */
static void rsim_qp_reset_locked(struct rsim_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	memset(&qp->attr, 0, sizeof(qp->attr));
	qp->sq.head = 0;
	qp->sq.count = 0;
	if (qp->sq.uslot)
		rsim_usq_reset(&qp->sq);
	if (qp->rq.umap) {
		rsim_urq_reset(&qp->rq);
	} else {
		qp->rq.head = 0;
		qp->rq.count = 0;
	}
	qp->rnr_tries = 0;
	qp->ack_tries = 0;
	qp->rnr_wake = false;
	qp->steer_cpu = -1;
	rsim_dp_idle_locked(qp);
}

/*
 * Context: process; sleeps for @modify_mutex, and for a transition to
 * RESET, which waits until nobody executes the send queue (at most one
 * chunk of a copy).
 */
static int rsim_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			  int mask, struct ib_udata *udata)
{
	struct rsim_dev *rsim = to_rsim_dev(ibqp->device);
	struct rsim_qp *qp = to_rsim_qp(ibqp);
	bool sends = ibqp->qp_type == IB_QPT_RC || ibqp->qp_type == IB_QPT_UC ||
		     ibqp->qp_type == IB_QPT_XRC_INI || rsim_qp_is_ud(qp);
	bool inl = rsim_dp_may_run_inline();
	struct rsim_notify n = {};
	enum ib_qp_state cur, new;
	bool drained = false;
	bool run = false;
	union ib_gid pgid;
	u16 plid;
	u32 peer;
	int err;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;
	err = rsim_qp_check_attr(rsim, attr, mask);
	if (err)
		return err;

	mutex_lock(&qp->modify_mutex);
	spin_lock_irq(&qp->lock);
	cur = qp->state;
	peer = qp->attr.dest_qp_num;
	pgid = qp->attr.ah_attr.grh.dgid;
	plid = rdma_ah_get_dlid(&qp->attr.ah_attr);
	/* IB_QP_CUR_STATE asserts the state the consumer believes in */
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur) {
		err = -EINVAL;
		goto out_unlock;
	}
	new = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	if (!ib_modify_qp_is_ok(cur, new, ibqp->qp_type, mask)) {
		err = -EINVAL;
		goto out_unlock;
	}

	if (new == IB_QPS_RESET) {
		/*
		 * The owner stops at its next look at the head, or chunk;
		 * nobody takes the queue over meanwhile (@stopping), and no
		 * other modify_qp runs (@modify_mutex).
		 */
		qp->state = IB_QPS_RESET;
		qp->stopping = true;
		spin_unlock_irq(&qp->lock);
		rsim_dp_stop(qp);
		rsim_qp_clean_cqs(qp);
		spin_lock_irq(&qp->lock);
		rsim_qp_reset_locked(qp);
		qp->stopping = false;
	} else if (new == IB_QPS_ERR) {
		rsim_qp_apply_locked(qp, attr, mask);
		rsim_qp_error_locked(qp, &n);
	} else {
		rsim_qp_apply_locked(qp, attr, mask);
		qp->state = new;
	}
	/*
	 * RTS -> SQD with en_sqd_async_notify: IB_EVENT_SQ_DRAINED once no
	 * WR is in execution, now if none is, else when its owner gives the
	 * send queue up (rsim_dp_leave_locked()); SQD -> SQD asks again
	 */
	qp->sqd_notify = false;
	if (new == IB_QPS_SQD && (mask & IB_QP_EN_SQD_ASYNC_NOTIFY) &&
	    attr->en_sqd_async_notify) {
		if (qp->owner == RSIM_SQ_RUNNING)
			qp->sqd_notify = true;
		else
			drained = true;
	}
	/* SQD -> RTS resumes the send queue */
	if (new == IB_QPS_RTS && sends)
		run = rsim_dp_claim_locked(qp, inl);
out_unlock:
	spin_unlock_irq(&qp->lock);
	mutex_unlock(&qp->modify_mutex);
	rsim_notify_run(&n, qp);
	if (err)
		return err;
	if (drained)
		rsim_qp_raise(qp, IB_EVENT_SQ_DRAINED, qp);
	if (run)
		rsim_dp_run(qp);
	/* a requester waiting on this responder sees the change */
	if (new != cur && rsim_qp_is_rc(qp))
		rsim_dp_wake_qpn(rsim, plid, &pgid, peer, ibqp->qp_num, false);
	return 0;
}

static int rsim_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			 int mask, struct ib_qp_init_attr *init)
{
	struct rsim_qp *qp = to_rsim_qp(ibqp);

	memset(init, 0, sizeof(*init));
	spin_lock_irq(&qp->lock);
	*attr = qp->attr;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	spin_unlock_irq(&qp->lock);

	attr->path_mig_state = IB_MIG_MIGRATED;
	attr->cap.max_send_wr = qp->sq.max_wr;
	attr->cap.max_send_sge = qp->sq.max_sge;
	attr->cap.max_recv_wr = qp->rq.max_wr;
	attr->cap.max_recv_sge = qp->rq.max_sge;
	attr->cap.max_inline_data = qp->max_inline;
	if (ibqp->qp_type == IB_QPT_SMI || ibqp->qp_type == IB_QPT_GSI)
		attr->port_num = ibqp->port;

	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	init->port_num = ibqp->port;
	return 0;
}

/* The post-time checks of one send WR (rxe's and the IBA's rules). */
static int rsim_post_send_check(struct rsim_qp *qp,
				const struct ib_send_wr *wr, u64 *inline_len)
{
	struct rsim_dev *rsim = to_rsim_dev(qp->ibqp.device);
	/* RDMA READ and atomics: RC and XRC */
	bool rc = rsim_qp_is_rc(qp);
	int i;

	if (rsim_qp_is_ud(qp)) {
		/* UD, SMI, GSI: SENDs to an address handle of this device */
		if ((wr->opcode != IB_WR_SEND &&
		     wr->opcode != IB_WR_SEND_WITH_IMM) || !ud_wr(wr)->ah ||
		    ud_wr(wr)->ah->device != qp->ibqp.device)
			return -EINVAL;
	}
	switch (wr->opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_LOCAL_INV:
		break;
	case IB_WR_REG_MR:
		if (!reg_wr(wr)->mr ||
		    reg_wr(wr)->mr->device != qp->ibqp.device)
			return -EINVAL;
		break;
	case IB_WR_RDMA_READ:
	case IB_WR_SEND_WITH_INV:
		if (!rc)
			return -EINVAL;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		/* RC only; the original value lands in one 8-byte SGE */
		if (!rc || wr->num_sge != 1 || wr->sg_list[0].length != 8 ||
		    (wr->send_flags & IB_SEND_INLINE))
			return -EINVAL;
		break;
	default:
		/*
		 * masked atomics, MW binds, LSO, ...; FLUSH and ATOMIC_WRITE,
		 * whose operands no kernel send WR carries (a send ring's)
		 */
		return -EINVAL;
	}
	if (wr->send_flags & ~(IB_SEND_FENCE | IB_SEND_SIGNALED |
			       IB_SEND_SOLICITED | IB_SEND_INLINE))
		return -EINVAL;
	if (wr->num_sge < 0 || wr->num_sge > qp->sq.max_sge)
		return -EINVAL;
	if (wr->opcode == IB_WR_RDMA_READ &&
	    wr->num_sge > rsim->cfg.limits.max_sge_rd)
		return -EINVAL;

	*inline_len = 0;
	if (!(wr->send_flags & IB_SEND_INLINE))
		return 0;
	if (wr->opcode == IB_WR_RDMA_READ || wr->opcode == IB_WR_REG_MR ||
	    wr->opcode == IB_WR_LOCAL_INV)
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++)
		*inline_len += wr->sg_list[i].length;
	return *inline_len > qp->max_inline ? -EINVAL : 0;
}

/*
 * Queue one checked WR into @wqe; @uinl: a user QP's inline data for it,
 * copied in already (a kernel QP's inline data is at its SGEs' kernel
 * virtual addresses).
 */
static void rsim_post_send_fill(struct rsim_send_wqe *wqe,
				const struct ib_send_wr *wr, u64 inline_len,
				bool ud, const u8 *uinl)
{
	int i;

	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = wr->wr_id;
	wqe->opcode = wr->opcode;
	wqe->send_flags = wr->send_flags;
	switch (wr->opcode) {
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		wqe->imm = wr->ex.imm_data;
		break;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		wqe->inv = wr->ex.invalidate_rkey;
		break;
	case IB_WR_REG_MR:
		wqe->mr = reg_wr(wr)->mr;
		wqe->key = reg_wr(wr)->key;
		wqe->access = reg_wr(wr)->access;
		return;
	default:
		break;
	}
	if (ud) {
		wqe->ah = to_rsim_ah(ud_wr(wr)->ah)->attr;
		wqe->ah.grh.sgid_attr = NULL;	/* the AH's, not ours */
		wqe->remote_qpn = ud_wr(wr)->remote_qpn;
		wqe->remote_qkey = ud_wr(wr)->remote_qkey;
	}
	if (wr->opcode == IB_WR_RDMA_WRITE ||
	    wr->opcode == IB_WR_RDMA_WRITE_WITH_IMM ||
	    wr->opcode == IB_WR_RDMA_READ) {
		wqe->remote_addr = rdma_wr(wr)->remote_addr;
		wqe->rkey = rdma_wr(wr)->rkey;
	}
	if (wr->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	    wr->opcode == IB_WR_ATOMIC_FETCH_AND_ADD) {
		wqe->remote_addr = atomic_wr(wr)->remote_addr;
		wqe->rkey = atomic_wr(wr)->rkey;
		wqe->compare_add = atomic_wr(wr)->compare_add;
		wqe->swap = atomic_wr(wr)->swap;
	}
	if (wr->send_flags & IB_SEND_INLINE) {
		/* inline data is copied now, from kernel virtual addresses */
		u8 *p = (u8 *)wqe->sge;

		if (uinl)
			memcpy(p, uinl, inline_len);
		for (i = 0; !uinl && i < wr->num_sge; i++) {
			memcpy(p, (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			p += wr->sg_list[i].length;
		}
		wqe->inline_len = inline_len;
		wqe->len = inline_len;
		return;
	}
	wqe->num_sge = wr->num_sge;
	memcpy(wqe->sge, wr->sg_list, wr->num_sge * sizeof(*wr->sg_list));
	for (i = 0; i < wr->num_sge; i++)
		wqe->len += wr->sg_list[i].length;
}

/* A WR's inline bytes, or -1 if it cannot be inline on @qp at all. */
static s64 rsim_wr_inline_len(const struct rsim_qp *qp,
			      const struct ib_send_wr *wr)
{
	u64 len = 0;
	int i;

	if (wr->num_sge < 0 || wr->num_sge > qp->sq.max_sge)
		return -1;
	for (i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	return len > qp->max_inline ? -1 : len;
}

/*
 * A user QP's inline data, copied from its user addresses before the QP's
 * lock is taken (the copy may fault and sleep): the bytes of every inline
 * WR of the list, one WR after another. The walk stops where the checks
 * under the lock will (an inline WR that cannot be, or more WRs than the
 * queue holds), so that each WR queued there finds its bytes here.
 * Returns NULL if no WR is inline, the buffer, or an ERR_PTR: -EFAULT
 * (the WR is named in *@bad) or -ENOMEM.
 */
static u8 *rsim_post_send_user_inline(struct rsim_qp *qp,
				      const struct ib_send_wr *wr,
				      const struct ib_send_wr **bad)
{
	const struct ib_send_wr *w;
	size_t total = 0, off = 0;
	u32 n;
	s64 len;
	u8 *buf;
	int i;

	for (w = wr, n = 0; w && n < qp->sq.max_wr; w = w->next, n++) {
		if (!(w->send_flags & IB_SEND_INLINE))
			continue;
		len = rsim_wr_inline_len(qp, w);
		if (len < 0)
			break;
		total += len;
	}
	if (!total)
		return NULL;
	/* the caller's size (up to max_wr * max_inline): charged, no warning */
	buf = kvmalloc(total, GFP_KERNEL_ACCOUNT);
	if (!buf)
		return ERR_PTR(-ENOMEM);
	for (w = wr, n = 0; w && off < total; w = w->next, n++) {
		if (!(w->send_flags & IB_SEND_INLINE))
			continue;
		for (i = 0; i < w->num_sge; i++) {
			const struct ib_sge *sge = &w->sg_list[i];

			if (copy_from_user(buf + off,
					   u64_to_user_ptr(sge->addr),
					   sge->length)) {
				kvfree(buf);
				*bad = w;
				return ERR_PTR(-EFAULT);
			}
			off += sge->length;
		}
	}
	return buf;
}

/*
 * A BIND_MW WR (a send ring's only): RC and UC QPs, no data, no inline;
 * the bind's own rules are the engine's when it executes (mw.c).
 */
static int rsim_post_send_bind(struct rsim_qp *qp,
			       const struct rsim_usq_ib_wr *w,
			       struct rsim_send_wqe *wqe)
{
	enum ib_qp_type t = qp->ibqp.qp_type;

	if ((t != IB_QPT_RC && t != IB_QPT_UC) || w->wr.num_sge ||
	    (w->wr.send_flags & ~(IB_SEND_FENCE | IB_SEND_SIGNALED |
				  IB_SEND_SOLICITED)))
		return -EINVAL;
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = w->wr.wr_id;
	wqe->opcode = IB_WR_BIND_MW;
	wqe->send_flags = w->wr.send_flags;
	wqe->bind = w->bind;
	return 0;
}

/*
 * A FLUSH or ATOMIC_WRITE WR (a send ring's only: no kernel send WR
 * carries their operands): RC QPs, no SGEs, no inline data; a FLUSH
 * names one or both placement types and one selectivity level. The
 * rkey, range, rights and alignment are the responder's to check (dp.c).
 */
static int rsim_post_send_place(struct rsim_qp *qp,
				const struct rsim_usq_ib_wr *w,
				struct rsim_send_wqe *wqe)
{
	const struct rsim_placement_wr *p = &w->place;
	bool flush = w->wr.opcode == RSIM_WR_FLUSH;

	if (qp->ibqp.qp_type != IB_QPT_RC || w->wr.num_sge ||
	    (w->wr.send_flags & ~(IB_SEND_FENCE | IB_SEND_SIGNALED |
				  IB_SEND_SOLICITED)))
		return -EINVAL;
	if (flush && (!p->type ||
		      p->type & ~(RSIM_FLUSH_GLOBAL | RSIM_FLUSH_PERSISTENT) ||
		      (p->level != RSIM_FLUSH_RANGE &&
		       p->level != RSIM_FLUSH_MR)))
		return -EINVAL;
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = w->wr.wr_id;
	wqe->opcode = w->wr.opcode;
	wqe->send_flags = w->wr.send_flags;
	wqe->remote_addr = p->remote_addr;
	wqe->rkey = p->rkey;
	if (flush) {
		wqe->flush_type = p->type;
		wqe->flush_level = p->level;
		wqe->flush_len = p->level == RSIM_FLUSH_RANGE ? p->length : 0;
	} else {
		wqe->swap = p->value;
		wqe->len = sizeof(u64);
	}
	return 0;
}

/*
 * Slot @i of a mapped send queue, copied and checked (usq.c), into the
 * kernel's @wqe: with the post_send command's rules, a UD WR's AH looked
 * up by its number and refused if it is of another PD. A WR that breaks
 * a rule is queued marked bad, to complete in error in its turn.
 */
static bool rsim_post_send_slot(struct rsim_qp *qp, u32 i,
				struct rsim_send_wqe *wqe)
{
	struct rsim_dev *rsim = to_rsim_dev(qp->ibqp.device);
	bool ud = rsim_qp_is_ud(qp);
	struct rsim_usq_ib_wr w;
	struct rsim_ah *ah = NULL;
	const u8 *inl;
	u64 inline_len;
	int err;

	err = rsim_usq_wr(qp, i, &w, &inl);
	if (!err && w.wr.opcode == IB_WR_BIND_MW) {
		err = rsim_post_send_bind(qp, &w, wqe);
	} else if (!err && (w.wr.opcode == RSIM_WR_FLUSH ||
			    w.wr.opcode == RSIM_WR_ATOMIC_WRITE)) {
		err = rsim_post_send_place(qp, &w, wqe);
	} else if (!err) {
		/* the AH under its table's lock, until the WR holds a copy */
		if (ud) {
			xa_lock(&rsim->ah_xa);
			ah = xa_load(&rsim->ah_xa, rsim_usq_ah_num(qp));
			if (ah && ah->ibah.pd == qp->ibqp.pd)
				w.ud.ah = &ah->ibah;
			else
				err = -EINVAL;
		}
		if (!err)
			err = rsim_post_send_check(qp, &w.wr, &inline_len);
		if (!err)
			rsim_post_send_fill(wqe, &w.wr, inline_len, ud, inl);
		if (ud)
			xa_unlock(&rsim->ah_xa);
		/* the XRC SRQ it names; checked where it arrives (dp.c) */
		wqe->xrc_srqn = w.xrc_srqn;
	}
	if (!err)
		return true;
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = w.wr.wr_id;
	wqe->opcode = rsim_usq_opcode_or_send(w.wr.opcode);
	wqe->send_flags = IB_SEND_SIGNALED;
	wqe->bad = true;
	return false;
}

/**
 * rsim_qp_pull_sq() - take what a mapped send queue's process published
 * @qp: the QP; the caller owns its send queue (dp.c) and holds no lock
 * @n: notifications (the error state's flush of the receive queue)
 *
 * Once the kernel's send queue is empty, in RTS or in the error state
 * (whose flush completes them), the slots published since the last take
 * (the process's index, read once) are copied and checked (usq.c) into
 * the kernel's queue, outside the QP's lock: only the owner adds to it.
 * A WR that breaks a rule ends the take; it is queued marked bad and
 * puts the QP in the error state in its turn. A producer index further
 * ahead than the queue has room for puts the QP in the error state now.
 *
 * Context: process (a user QP's send queue runs nowhere else); no lock
 * held.
 * Return: true if the QP entered the error state for its producer index:
 *	the caller raises IB_EVENT_QP_FATAL.
 */
bool rsim_qp_pull_sq(struct rsim_qp *qp, struct rsim_notify *n)
{
	u32 base, room, tail, k, i;
	bool fatal = false;
	unsigned long flags;

	/*
	 * Nothing published since the last take: no lock (the owner alone
	 * moves @ucons and @count; the doorbell is a mapped queue's only
	 * post). A post racing this look is not lost: the owner, going idle,
	 * sets the doorbell flag and looks at the index again.
	 */
	if (READ_ONCE(qp->sq.count) ||
	    rsim_usq_prod(&qp->sq) == READ_ONCE(qp->sq.ucons))
		return false;
	spin_lock_irqsave(&qp->lock, flags);
	if (qp->dying || qp->sq.count ||
	    (qp->state != IB_QPS_RTS && qp->state != IB_QPS_ERR)) {
		spin_unlock_irqrestore(&qp->lock, flags);
		return false;
	}
	base = qp->sq.ucons;
	room = qp->sq.max_wr;
	tail = qp->sq.head;
	spin_unlock_irqrestore(&qp->lock, flags);

	k = rsim_usq_prod(&qp->sq) - base;
	if (k > room) {
		fatal = true;
		k = 0;
	}
	for (i = 0; i < k; i++) {
		struct rsim_send_wqe *wqe = qp->sq.ring +
			(size_t)((tail + i) % qp->sq.max_wr) * qp->sq.wqe_size;

		/* nothing after a bad WR: the QP will be in the error state */
		if (!rsim_post_send_slot(qp, base + i, wqe)) {
			k = i + 1;
			break;
		}
	}
	spin_lock_irqsave(&qp->lock, flags);
	qp->sq.count += k;
	fatal = fatal && qp->state != IB_QPS_ERR;
	if (fatal)
		rsim_qp_error_locked(qp, n);
	spin_unlock_irqrestore(&qp->lock, flags);
	return fatal;
}

/*
 * Where a doorbell that claims an idle queue runs it. At once, in the
 * caller's system call, if the process may be waiting for this WR's
 * completion: a latency test's poster polls its send CQ empty before it
 * posts again. A poster with completions it has not polled is streaming
 * (perftest's bandwidth tests poll only once tx_depth WRs are out): the
 * worker, on another CPU, runs the queue while the process goes on
 * posting, and those posts need no doorbell. One CPU online: always at
 * once, as there is no other CPU to run the worker. Asked only of an idle
 * queue (the CQ's lock nests in the QP's).
 */
static bool rsim_usq_streaming(struct rsim_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	return qp->owner == RSIM_SQ_IDLE && num_online_cpus() > 1 &&
	       rsim_cq_backlog(to_rsim_cq(qp->ibqp.send_cq));
}

/*
 * A mapped send queue's doorbell (usq.c): the post_send command with no
 * WR. It claims the queue if nobody runs it: in RTS to execute what is
 * published, in the error state to flush it (rsim_dp_claim_locked()).
 * The owner takes the WRs from the ring (rsim_qp_pull_sq()); a doorbell
 * that finds an owner has nothing to do, since the owner looks at the
 * ring before it lets the queue go. Before RTS, the doorbell is -EINVAL,
 * as the post_send command is.
 *
 * Context: process (uverbs).
 */
static int rsim_post_send_ring(struct rsim_qp *qp)
{
	struct rsim_dev *rsim = to_rsim_dev(qp->ibqp.device);
	bool inl = rsim_dp_may_run_inline();
	unsigned long flags;
	bool run = false;
	int err = 0;

	atomic64_inc(&rsim->send_doorbells);
	spin_lock_irqsave(&qp->lock, flags);
	if (qp->state == IB_QPS_RESET || qp->state == IB_QPS_INIT ||
	    qp->state == IB_QPS_RTR)
		err = -EINVAL;
	else
		run = rsim_dp_claim_locked(qp, inl && !rsim_usq_streaming(qp));
	spin_unlock_irqrestore(&qp->lock, flags);
	if (run)
		rsim_dp_run(qp);
	return err;
}

/*
 * RC and UC send WRs are queued and handed to the loopback engine
 * (dp.c), which runs small ones at once on this context and defers the
 * rest to the device's worker.
 *
 * Context: a kernel QP's posts, from any context (nothing sleeps); a
 * user QP's, from process context (uverbs), as its inline data is copied
 * in from user memory, which may sleep.
 */
static int rsim_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
			  const struct ib_send_wr **bad_wr)
{
	struct rsim_qp *qp = to_rsim_qp(ibqp);
	bool inl = rsim_dp_may_run_inline();
	struct rsim_notify n = {};
	enum ib_qp_state state;
	unsigned long flags;
	u8 *ubuf = NULL;
	size_t uoff = 0;
	bool run = false;
	int err = 0;

	/* an XRC TGT QP responds only */
	if (ibqp->qp_type == IB_QPT_XRC_TGT) {
		*bad_wr = wr;
		return -EINVAL;
	}
	if (qp->sq.uslot) {
		/* the process posts into the ring; this is the doorbell */
		if (!wr)
			return rsim_post_send_ring(qp);
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	if (ibqp->uobject && wr)
		atomic64_inc(&to_rsim_dev(ibqp->device)->user_send_posts);
	if (ibqp->uobject) {
		ubuf = rsim_post_send_user_inline(qp, wr, bad_wr);
		if (IS_ERR(ubuf))
			return PTR_ERR(ubuf);
	}
	spin_lock_irqsave(&qp->lock, flags);
	state = qp->state;
	if (state == IB_QPS_RESET || state == IB_QPS_INIT ||
	    state == IB_QPS_RTR) {
		err = -EINVAL;
		goto out;
	}
	for (; wr; wr = wr->next) {
		u64 inline_len;

		err = rsim_post_send_check(qp, wr, &inline_len);
		if (err)
			break;
		if (qp->sq.count == qp->sq.max_wr) {
			err = -ENOMEM;
			break;
		}
		rsim_post_send_fill(rsim_wqe(&qp->sq, qp->sq.count), wr,
				    inline_len, rsim_qp_is_ud(qp),
				    ubuf && inline_len ? ubuf + uoff : NULL);
		uoff += inline_len;
		qp->sq.count++;
	}
	/* the error state completes what is posted with a flush */
	if (state == IB_QPS_ERR)
		rsim_qp_error_locked(qp, &n);
	else if (state == IB_QPS_RTS)
		run = rsim_dp_claim_locked(qp, inl);
out:
	spin_unlock_irqrestore(&qp->lock, flags);
	kvfree(ubuf);
	rsim_notify_run(&n, qp);
	if (err)
		*bad_wr = wr;
	if (run)
		rsim_dp_run(qp);
	return err;
}

/*
 * A mapped receive queue's doorbell (urq.c): the post_recv command with
 * no WR, which its provider rings when the ring's flag asks for it. In
 * the error state it flushes what is posted; otherwise the requester
 * that waits for a receive WR goes on. The command with WRs is refused:
 * the process posts into the ring.
 */
static int rsim_post_recv_mapped(struct rsim_qp *qp,
				 const struct ib_recv_wr *wr,
				 struct rsim_notify *n, bool *wake)
{
	lockdep_assert_held(&qp->lock);
	if (wr)
		return -EOPNOTSUPP;
	atomic64_inc(&to_rsim_dev(qp->ibqp.device)->recv_doorbells);
	if (qp->state == IB_QPS_ERR) {
		rsim_qp_flush_rq_locked(qp, n);
	} else if (qp->state != IB_QPS_RESET) {
		rsim_urq_doorbell(&qp->rq);
		*wake = qp->ibqp.qp_type == IB_QPT_RC;
	}
	return 0;
}

/* Context: any; does not sleep. */
static int rsim_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad_wr)
{
	struct rsim_qp *qp = to_rsim_qp(ibqp);
	struct rsim_notify n = {};
	unsigned long flags;
	bool wake = false;
	int err = 0;
	u32 count;

	/* XRC QPs have no receive queue: their SRQ's WRs are posted to it */
	if (ibqp->qp_type == IB_QPT_XRC_INI || ibqp->qp_type == IB_QPT_XRC_TGT) {
		*bad_wr = wr;
		return -EINVAL;
	}
	if (ibqp->uobject && wr)
		atomic64_inc(&to_rsim_dev(ibqp->device)->user_recv_posts);
	spin_lock_irqsave(&qp->lock, flags);
	if (qp->rq.umap) {
		err = rsim_post_recv_mapped(qp, wr, &n, &wake);
		goto out;
	}
	/* a QP of an SRQ receives into the SRQ's WRs only */
	if (qp->state == IB_QPS_RESET || ibqp->srq) {
		err = -EINVAL;
		goto out;
	}
	count = qp->rq.count;
	err = rsim_wq_post_recv(&qp->rq, &wr);
	wake = ibqp->qp_type == IB_QPT_RC && qp->rq.count != count;
	if (qp->state == IB_QPS_ERR) {
		rsim_qp_flush_rq_locked(qp, &n);
		wake = false;
	}
out:
	spin_unlock_irqrestore(&qp->lock, flags);
	rsim_notify_run(&n, qp);
	if (err)
		*bad_wr = wr;
	/* a requester waiting for a receive WR (RNR) goes on */
	if (wake)
		rsim_dp_wake_requester(qp);
	return err;
}

const struct ib_device_ops rsim_qp_ops = {
	.attach_mcast = rsim_attach_mcast,
	.create_qp = rsim_create_qp,
	.destroy_qp = rsim_destroy_qp,
	.detach_mcast = rsim_detach_mcast,
	.modify_qp = rsim_modify_qp,
	.post_recv = rsim_post_recv,
	.post_send = rsim_post_send,
	.query_qp = rsim_query_qp,

	INIT_RDMA_OBJ_SIZE(ib_qp, rsim_qp, ibqp),
};
