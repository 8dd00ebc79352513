// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: queue pairs: creation, the state machine, receive queues.
 *
 * Executing send work requests arrives with the loopback data path; until
 * then post_send refuses every WR with -EOPNOTSUPP. Receive WRs are queued
 * (the MAD layer posts 512 of them on QP0 and QP1 when the device
 * registers) and flushed when the QP enters the error state.
 */

#include <linux/slab.h>

#include "rdmasim.h"

/**
 * struct rsim_recv_wqe - a posted receive WR
 * @wr_id: consumer's cookie
 * @num_sge: entries in @sge
 * @sge: scatter list
 */
struct rsim_recv_wqe {
	u64 wr_id;
	u32 num_sge;
	struct ib_sge sge[];
};

/**
 * struct rsim_send_wqe - a posted send WR (slot layout; executed later)
 * @wr_id: consumer's cookie
 * @opcode: IB_WR_*
 * @send_flags: IB_SEND_*
 * @num_sge: entries in @sge
 * @sge: gather list
 */
struct rsim_send_wqe {
	u64 wr_id;
	enum ib_wr_opcode opcode;
	int send_flags;
	u32 num_sge;
	struct ib_sge sge[];
};

void rsim_qp_init(struct rsim_dev *rsim)
{
	xa_init_flags(&rsim->qp_xa, XA_FLAGS_ALLOC);
	rsim->qp_next = RSIM_QPN_MIN;
}

void rsim_qp_cleanup(struct rsim_dev *rsim)
{
	WARN_ON(!xa_empty(&rsim->qp_xa));
	xa_destroy(&rsim->qp_xa);
}

static void *rsim_wqe(struct rsim_wq *wq, u32 n)
{
	return wq->ring + (size_t)((wq->head + n) % wq->max_wr) * wq->wqe_size;
}

static int rsim_wq_alloc(struct rsim_dev *rsim, struct rsim_wq *wq,
			 u32 max_wr, u32 max_sge, size_t hdr)
{
	wq->max_wr = max_wr;
	wq->max_sge = max_sge;
	wq->wqe_size = hdr + (size_t)max_sge * sizeof(struct ib_sge);
	if (!max_wr)
		return 0;
	if (rsim_should_fail(rsim, RSIM_FAULT_ALLOC))
		return -ENOMEM;
	wq->ring = kvcalloc(max_wr, wq->wqe_size, GFP_KERNEL);
	return wq->ring ? 0 : -ENOMEM;
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
	case IB_QPT_SMI:
	case IB_QPT_GSI:
		if (init->port_num != RSIM_PORT)
			return -EINVAL;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (init->srq || init->create_flags || init->rwq_ind_tbl)
		return -EOPNOTSUPP;
	if (!init->send_cq || !init->recv_cq)
		return -EINVAL;
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
		err = xa_insert(&rsim->qp_xa, qpn, qp, GFP_KERNEL);
	} else {
		err = xa_alloc_cyclic(&rsim->qp_xa, &qpn, qp,
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
	struct rsim_qp *qp = to_rsim_qp(ibqp);
	int err;

	/* no userspace provider: user QPs cannot be mapped */
	if (udata)
		return -EOPNOTSUPP;
	err = rsim_qp_check_init(rsim, init);
	if (err)
		return err;
	if (!rsim_res_get(rsim, RSIM_RES_QP))
		return -ENOMEM;

	spin_lock_init(&qp->lock);
	qp->state = IB_QPS_RESET;
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->max_inline = init->cap.max_inline_data;

	err = rsim_wq_alloc(rsim, &qp->sq, init->cap.max_send_wr,
			    init->cap.max_send_sge,
			    sizeof(struct rsim_send_wqe));
	if (err)
		goto err_res_put;
	err = rsim_wq_alloc(rsim, &qp->rq, init->cap.max_recv_wr,
			    init->cap.max_recv_sge,
			    sizeof(struct rsim_recv_wqe));
	if (err)
		goto err_free_sq;
	/* last: the number makes the QP visible */
	err = rsim_qpn_alloc(rsim, qp, init->qp_type);
	if (err)
		goto err_free_rq;
	return 0;

err_free_rq:
	kvfree(qp->rq.ring);
err_free_sq:
	kvfree(qp->sq.ring);
err_res_put:
	rsim_res_put(rsim, RSIM_RES_QP);
	return err;
}

static int rsim_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct rsim_dev *rsim = to_rsim_dev(ibqp->device);
	struct rsim_qp *qp = to_rsim_qp(ibqp);

	xa_erase(&rsim->qp_xa, ibqp->qp_num);
	kvfree(qp->rq.ring);
	kvfree(qp->sq.ring);
	rsim_res_put(rsim, RSIM_RES_QP);
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
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~(IB_ACCESS_REMOTE_WRITE |
				       IB_ACCESS_REMOTE_READ |
				       IB_ACCESS_LOCAL_WRITE)))
		return -EINVAL;		/* atomics: atomic_cap is NONE */
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
	if ((mask & IB_QP_AV) && rsim_ah_attr_check(&attr->ah_attr))
		return -EINVAL;
	return 0;
}

/*
 * Posted receives complete with IB_WC_WR_FLUSH_ERR in the error state.
 * Returns what rsim_cq_kick() must do once the QP lock is dropped: 1 to
 * run the handler, negative after an overflow, else 0.
 */
static int rsim_qp_flush_rq_locked(struct rsim_qp *qp)
{
	struct rsim_cq *cq = to_rsim_cq(qp->ibqp.recv_cq);
	int kick = 0;

	lockdep_assert_held(&qp->lock);
	while (qp->rq.count) {
		struct rsim_recv_wqe *wqe = rsim_wqe(&qp->rq, 0);
		struct ib_wc wc = {
			.wr_id = wqe->wr_id,
			.status = IB_WC_WR_FLUSH_ERR,
			.opcode = IB_WC_RECV,
			.qp = &qp->ibqp,
		};

		int ret = rsim_cq_push(cq, &wc, false);

		if (ret < 0 || (ret > 0 && kick == 0))
			kick = ret;
		qp->rq.head = (qp->rq.head + 1) % qp->rq.max_wr;
		qp->rq.count--;
	}
	return kick;
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

static int rsim_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			  int mask, struct ib_udata *udata)
{
	struct rsim_dev *rsim = to_rsim_dev(ibqp->device);
	struct rsim_qp *qp = to_rsim_qp(ibqp);
	enum ib_qp_state cur, new;
	int kick = 0;
	int err;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;
	err = rsim_qp_check_attr(rsim, attr, mask);
	if (err)
		return err;

	spin_lock_irq(&qp->lock);
	cur = qp->state;
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
		memset(&qp->attr, 0, sizeof(qp->attr));
		qp->sq.head = 0;
		qp->sq.count = 0;
		qp->rq.head = 0;
		qp->rq.count = 0;
	} else {
		rsim_qp_apply_locked(qp, attr, mask);
	}
	qp->state = new;
	if (new == IB_QPS_ERR)
		kick = rsim_qp_flush_rq_locked(qp);
out_unlock:
	spin_unlock_irq(&qp->lock);
	rsim_cq_kick(to_rsim_cq(ibqp->recv_cq), kick);
	return err;
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

/* Context: any; does not sleep. */
static int rsim_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
			  const struct ib_send_wr **bad_wr)
{
	*bad_wr = wr;
	return -EOPNOTSUPP;
}

/* Context: any; does not sleep. */
static int rsim_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad_wr)
{
	struct rsim_qp *qp = to_rsim_qp(ibqp);
	unsigned long flags;
	int kick = 0;
	int err = 0;

	spin_lock_irqsave(&qp->lock, flags);
	if (qp->state == IB_QPS_RESET) {
		err = -EINVAL;
		goto out;
	}
	for (; wr; wr = wr->next) {
		struct rsim_recv_wqe *wqe;

		if (wr->num_sge < 0 || wr->num_sge > qp->rq.max_sge) {
			err = -EINVAL;
			break;
		}
		if (qp->rq.count == qp->rq.max_wr) {
			err = -ENOMEM;
			break;
		}
		wqe = rsim_wqe(&qp->rq, qp->rq.count);
		wqe->wr_id = wr->wr_id;
		wqe->num_sge = wr->num_sge;
		memcpy(wqe->sge, wr->sg_list, wr->num_sge * sizeof(*wr->sg_list));
		qp->rq.count++;
	}
	if (qp->state == IB_QPS_ERR)
		kick = rsim_qp_flush_rq_locked(qp);
out:
	spin_unlock_irqrestore(&qp->lock, flags);
	rsim_cq_kick(to_rsim_cq(ibqp->recv_cq), kick);
	if (err)
		*bad_wr = wr;
	return err;
}

const struct ib_device_ops rsim_qp_ops = {
	.create_qp = rsim_create_qp,
	.destroy_qp = rsim_destroy_qp,
	.modify_qp = rsim_modify_qp,
	.post_recv = rsim_post_recv,
	.post_send = rsim_post_send,
	.query_qp = rsim_query_qp,

	INIT_RDMA_OBJ_SIZE(ib_qp, rsim_qp, ibqp),
};
