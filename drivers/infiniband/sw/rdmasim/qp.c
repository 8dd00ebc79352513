// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: queue pairs: creation, the state machine, work queues and the
 * loopback data path.
 *
 * RC and UC QPs connected to a QP of the same device execute their send
 * WRs at once, on the caller's context: the engine (rsim_dp_run()) takes
 * the device's dp_lock, executes each WR at the head of the send queue
 * against registered memory (every access checked: key and variant,
 * state, PD, access rights, bounds) and completes it. Lock order:
 * dp_lock, then one QP lock at a time, then CQ locks; completion handlers
 * run after the engine has dropped every lock. Only the engine and
 * modify_qp (which also takes dp_lock) move a send queue's head; post_send
 * adds at the tail under the QP lock alone.
 *
 * UD, SMI and GSI QPs do not send yet (post_send: -EOPNOTSUPP); their
 * receive WRs are queued (the MAD layer posts 512 on QP0 and QP1 when the
 * device registers). Entering the error state flushes both queues.
 */

#include <linux/slab.h>
#include <linux/wait_bit.h>

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
 * struct rsim_send_wqe - a posted send WR
 * @wr_id: consumer's cookie
 * @opcode: IB_WR_*
 * @send_flags: IB_SEND_*
 * @num_sge: entries in @sge (0 for inline data)
 * @inline_len: bytes of inline data, stored where @sge would be
 * @imm: immediate data (*_WITH_IMM)
 * @inv: rkey to invalidate (SEND_WITH_INV, LOCAL_INV)
 * @remote_addr: RDMA target address
 * @rkey: RDMA target key
 * @mr: REG_MR: the MR
 * @key: REG_MR: the key to register it with
 * @access: REG_MR: IB_ACCESS_* of the registration
 * @sge: gather list, or the inline data
 */
struct rsim_send_wqe {
	u64 wr_id;
	enum ib_wr_opcode opcode;
	int send_flags;
	u32 num_sge;
	u32 inline_len;
	__be32 imm;
	u32 inv;
	u64 remote_addr;
	u32 rkey;
	struct ib_mr *mr;
	u32 key;
	int access;
	struct ib_sge sge[];
};

/* rsim_qp_exec(): the WR waits for a receive WR at the responder */
#define RSIM_EXEC_WAIT		(-1)

/* Bytes a message may carry: the port's max_msg_sz. */
#define RSIM_MAX_MSG		0x80000000ULL

/**
 * struct rsim_kick - what an engine run must do once it holds no lock
 * @cq: CQs with their rsim_cq_push() results (see rsim_cq_kick())
 * @cq.cq: the CQ
 * @cq.val: 1 to run its handler, negative after an overflow
 * @ncq: used entries of @cq
 */
struct rsim_kick {
	struct {
		struct rsim_cq *cq;
		int val;
	} cq[8];
	unsigned int ncq;
};

static void rsim_kick_add(struct rsim_kick *k, struct ib_cq *ibcq, int val)
{
	struct rsim_cq *cq = to_rsim_cq(ibcq);
	unsigned int i;

	if (!val)
		return;
	for (i = 0; i < k->ncq; i++)
		if (k->cq[i].cq == cq)
			break;
	if (i == k->ncq) {
		if (WARN_ON_ONCE(k->ncq == ARRAY_SIZE(k->cq)))
			return;
		k->cq[k->ncq].cq = cq;
		k->cq[k->ncq++].val = 0;
	}
	if (val < 0 || k->cq[i].val == 0)
		k->cq[i].val = val;
}

static void rsim_push(struct rsim_kick *k, struct ib_cq *ibcq,
		      const struct ib_wc *wc, bool solicited)
{
	rsim_kick_add(k, ibcq, rsim_cq_push(to_rsim_cq(ibcq), wc, solicited));
}

void rsim_qp_init(struct rsim_dev *rsim)
{
	xa_init_flags(&rsim->qp_xa, XA_FLAGS_ALLOC);
	rsim->qp_next = RSIM_QPN_MIN;
	spin_lock_init(&rsim->dp_lock);
	atomic_set(&rsim->dp_active, 0);
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

/* Remove the WR at the head; under the QP lock (and dp_lock, see above). */
static void rsim_wq_pop(struct rsim_wq *wq)
{
	wq->head = (wq->head + 1) % wq->max_wr;
	wq->count--;
}

/*
 * A ring of @max_wr slots of @hdr bytes plus @max_sge SGEs (or @payload
 * bytes of inline data, if more), followed by @max_sge checked ranges:
 * the engine's scratch space for the WR it executes.
 */
static int rsim_wq_alloc(struct rsim_dev *rsim, struct rsim_wq *wq,
			 u32 max_wr, u32 max_sge, size_t hdr, size_t payload)
{
	size_t ring;

	wq->max_wr = max_wr;
	wq->max_sge = max_sge;
	wq->wqe_size = ALIGN(hdr + max_t(size_t, payload,
					 (size_t)max_sge * sizeof(struct ib_sge)),
			     sizeof(u64));
	if (!max_wr)
		return 0;
	if (rsim_should_fail(rsim, RSIM_FAULT_ALLOC))
		return -ENOMEM;
	ring = (size_t)max_wr * wq->wqe_size;
	wq->ring = kvzalloc(ring + (size_t)max_sge * sizeof(struct rsim_mem_ref),
			    GFP_KERNEL);
	if (!wq->ring)
		return -ENOMEM;
	wq->refs = wq->ring + ring;
	return 0;
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
			    sizeof(struct rsim_send_wqe),
			    init->cap.max_inline_data);
	if (err)
		goto err_res_put;
	err = rsim_wq_alloc(rsim, &qp->rq, init->cap.max_recv_wr,
			    init->cap.max_recv_sge,
			    sizeof(struct rsim_recv_wqe), 0);
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
	u32 peer = qp->attr.dest_qp_num;

	xa_erase(&rsim->qp_xa, ibqp->qp_num);
	/* no engine run holds it now, and none will find it */
	rsim_dp_sync(rsim);
	kvfree(qp->rq.ring);
	kvfree(qp->sq.ring);
	rsim_res_put(rsim, RSIM_RES_QP);
	/* a requester waiting on this responder learns that it is gone */
	if (ibqp->qp_type == IB_QPT_RC)
		rsim_dp_run(rsim, peer, true);
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

static enum ib_wc_opcode rsim_wc_opcode(enum ib_wr_opcode op)
{
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
	default:
		return IB_WC_SEND;
	}
}

/*
 * Complete the receive WR at the head of @qp's receive queue with @wc
 * (its wr_id and QP filled in here) and remove it.
 */
static void rsim_rq_complete_locked(struct rsim_qp *qp, struct ib_wc *wc,
				    bool solicited, struct rsim_kick *k)
{
	struct rsim_recv_wqe *wqe = rsim_wqe(&qp->rq, 0);

	lockdep_assert_held(&qp->lock);
	wc->wr_id = wqe->wr_id;
	wc->qp = &qp->ibqp;
	rsim_push(k, qp->ibqp.recv_cq, wc, solicited);
	rsim_wq_pop(&qp->rq);
}

/* Posted receives complete with IB_WC_WR_FLUSH_ERR, in order. */
static void rsim_qp_flush_rq_locked(struct rsim_qp *qp, struct rsim_kick *k)
{
	while (qp->rq.count) {
		struct ib_wc wc = {
			.status = IB_WC_WR_FLUSH_ERR,
			.opcode = IB_WC_RECV,
		};

		rsim_rq_complete_locked(qp, &wc, false, k);
	}
}

/* Send WRs not executed complete with IB_WC_WR_FLUSH_ERR, signaled or not. */
static void rsim_qp_flush_sq_locked(struct rsim_qp *qp, struct rsim_kick *k)
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

		rsim_push(k, qp->ibqp.send_cq, &wc, false);
		rsim_wq_pop(&qp->sq);
	}
	qp->rnr_wait = false;
}

/* Enter the error state: flush both queues (@sq: the send queue too). */
static void rsim_qp_error_locked(struct rsim_qp *qp, bool sq,
				 struct rsim_kick *k)
{
	lockdep_assert_held(&qp->lock);
	qp->state = IB_QPS_ERR;
	if (sq)
		rsim_qp_flush_sq_locked(qp, k);
	rsim_qp_flush_rq_locked(qp, k);
}

static void rsim_kick_run(struct rsim_kick *k)
{
	unsigned int i;

	for (i = 0; i < k->ncq; i++)
		rsim_cq_kick(k->cq[i].cq, k->cq[i].val);
	k->ncq = 0;
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
	struct rsim_kick k = { .ncq = 0 };
	enum ib_qp_state cur, new;
	unsigned long flags;
	u32 peer;
	int err;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;
	err = rsim_qp_check_attr(rsim, attr, mask);
	if (err)
		return err;

	/* the engine must not be half way through one of this QP's WRs */
	spin_lock_irqsave(&rsim->dp_lock, flags);
	spin_lock(&qp->lock);
	cur = qp->state;
	peer = qp->attr.dest_qp_num;
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
		qp->rnr_wait = false;
	} else {
		rsim_qp_apply_locked(qp, attr, mask);
	}
	qp->state = new;
	if (new == IB_QPS_ERR)
		rsim_qp_error_locked(qp, true, &k);
out_unlock:
	spin_unlock(&qp->lock);
	spin_unlock_irqrestore(&rsim->dp_lock, flags);
	rsim_kick_run(&k);
	if (err || (ibqp->qp_type != IB_QPT_RC &&
		    ibqp->qp_type != IB_QPT_UC))
		return err;
	/* SQD -> RTS resumes the send queue */
	if (new == IB_QPS_RTS)
		rsim_dp_run(rsim, ibqp->qp_num, false);
	/* a requester waiting on this responder sees the change */
	if (new != cur && ibqp->qp_type == IB_QPT_RC)
		rsim_dp_run(rsim, peer, true);
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

/**
 * rsim_dp_sync() - wait until no engine run uses an unpublished object
 * @rsim: device
 *
 * Called after a QP or an MR was removed from its table: an engine run
 * that found it before has finished with it, including the completion
 * handlers it calls after dropping dp_lock.
 *
 * Context: process; may sleep.
 */
void rsim_dp_sync(struct rsim_dev *rsim)
{
	might_sleep();
	spin_lock_irq(&rsim->dp_lock);
	spin_unlock_irq(&rsim->dp_lock);
	wait_var_event(&rsim->dp_active, !atomic_read(&rsim->dp_active));
}

/*
 * The responder of an RC or UC QP: the QP it is connected to on this
 * device, if the address vector names this port's LID, the QP exists, is
 * of the same type, is ready to receive and is connected back. NULL is
 * what a fabric offers a packet to nowhere.
 */
static struct rsim_qp *rsim_dp_peer(struct rsim_dev *rsim, struct rsim_qp *qp)
{
	struct rsim_qp *peer;
	bool ok;

	if (rdma_ah_get_dlid(&qp->attr.ah_attr) != READ_ONCE(rsim->port.lid))
		return NULL;
	peer = xa_load(&rsim->qp_xa, qp->attr.dest_qp_num);
	if (!peer || peer->ibqp.qp_type != qp->ibqp.qp_type)
		return NULL;
	spin_lock(&peer->lock);
	ok = (peer->state == IB_QPS_RTR || peer->state == IB_QPS_RTS ||
	      peer->state == IB_QPS_SQD) &&
	     peer->attr.dest_qp_num == qp->ibqp.qp_num;
	spin_unlock(&peer->lock);
	return ok ? peer : NULL;
}

/* Check a local SGE list; fills @refs. Returns 0 or IB_WC_LOC_PROT_ERR. */
static int rsim_dp_local(struct rsim_dev *rsim, struct ib_pd *pd,
			 const struct ib_sge *sge, u32 n, int access,
			 struct rsim_mem_ref *refs, u64 *total)
{
	u32 i;

	*total = 0;
	for (i = 0; i < n; i++) {
		if (rsim_mr_lookup(rsim, pd, sge[i].lkey, false, sge[i].addr,
				   sge[i].length, access, &refs[i]))
			return IB_WC_LOC_PROT_ERR;
		*total += sge[i].length;
	}
	return 0;
}

/*
 * A responder error in RC: the responder's receive WR (if one was taken)
 * completes with @rstatus and the responder enters the error state.
 */
static void rsim_dp_responder_error(struct rsim_qp *qp, struct rsim_qp *peer,
				    bool took_wqe, enum ib_wc_status rstatus,
				    struct rsim_kick *k)
{
	spin_lock(&peer->lock);
	if (took_wqe) {
		struct ib_wc wc = {
			.status = rstatus,
			.opcode = IB_WC_RECV,
		};

		rsim_rq_complete_locked(peer, &wc, false, k);
	}
	/* a QP connected to itself flushes its send queue as requester */
	rsim_qp_error_locked(peer, peer != qp, k);
	spin_unlock(&peer->lock);
}

/*
 * Execute the send WR @wqe of @qp, the head of its send queue. Returns
 * an IB_WC_* status for the requester, or RSIM_EXEC_WAIT if a SEND found
 * no receive WR (RNR) and must wait for one. *@len gets the bytes moved.
 */
static int rsim_qp_exec(struct rsim_dev *rsim, struct rsim_qp *qp,
			struct rsim_send_wqe *wqe, u64 *len,
			struct rsim_kick *k)
{
	bool rc = qp->ibqp.qp_type == IB_QPT_RC;
	struct rsim_mem_ref *lrefs = qp->sq.refs;
	struct rsim_mem_ref rref;
	struct rsim_recv_wqe *rwqe = NULL;
	struct rsim_qp *peer;
	const void *inl = NULL;
	bool read = wqe->opcode == IB_WR_RDMA_READ;
	int status, err;
	u64 cap;

	*len = 0;
	switch (wqe->opcode) {
	case IB_WR_REG_MR:
		return rsim_mr_fast_reg(rsim, qp->ibqp.pd, wqe->mr, wqe->key,
					wqe->access);
	case IB_WR_LOCAL_INV:
		return rsim_mr_invalidate(rsim, qp->ibqp.pd, wqe->inv);
	default:
		break;
	}

	/* the local side: the gather list, or READ's scatter list */
	if (wqe->send_flags & IB_SEND_INLINE) {
		inl = wqe->sge;
		*len = wqe->inline_len;
	} else {
		status = rsim_dp_local(rsim, qp->ibqp.pd, wqe->sge, wqe->num_sge,
				       read ? IB_ACCESS_LOCAL_WRITE : 0, lrefs,
				       len);
		if (status)
			return status;
		if (*len > RSIM_MAX_MSG)
			return IB_WC_LOC_LEN_ERR;
	}

	peer = rsim_dp_peer(rsim, qp);
	if (!peer)
		/* RC retries until retry_cnt is spent; UC loses the message */
		return rc ? IB_WC_RETRY_EXC_ERR : IB_WC_SUCCESS;

	switch (wqe->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		if (!(peer->attr.qp_access_flags &
		      (read ? IB_ACCESS_REMOTE_READ : IB_ACCESS_REMOTE_WRITE)) ||
		    rsim_mr_lookup(rsim, peer->ibqp.pd, wqe->rkey, true,
				   wqe->remote_addr, *len,
				   read ? IB_ACCESS_REMOTE_READ :
					  IB_ACCESS_REMOTE_WRITE, &rref)) {
			if (!rc)
				return IB_WC_SUCCESS;	/* dropped */
			rsim_dp_responder_error(qp, peer, false,
						IB_WC_REM_ACCESS_ERR, k);
			return IB_WC_REM_ACCESS_ERR;
		}
		break;
	default:
		break;
	}

	/* SENDs and WRITE_WITH_IMM consume a receive WR */
	if (wqe->opcode != IB_WR_RDMA_WRITE && !read) {
		spin_lock(&peer->lock);
		if (peer->rq.count)
			rwqe = rsim_wqe(&peer->rq, 0);
		spin_unlock(&peer->lock);
		if (!rwqe) {
			if (!rc)
				return IB_WC_SUCCESS;	/* dropped */
			/* RNR NAK: retried (untimed) unless rnr_retry is 0 */
			return qp->attr.rnr_retry ? RSIM_EXEC_WAIT :
						    IB_WC_RNR_RETRY_EXC_ERR;
		}
	}

	switch (wqe->opcode) {
	case IB_WR_RDMA_READ:
		err = rsim_mr_copy(rsim, lrefs, wqe->num_sge, &rref, 1, NULL,
				   *len);
		if (err)
			return IB_WC_LOC_PROT_ERR;
		break;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		err = rsim_mr_copy(rsim, &rref, 1, lrefs, wqe->num_sge, inl,
				   *len);
		if (err == -ENXIO)
			return IB_WC_LOC_PROT_ERR;
		if (err) {
			if (!rc)
				return IB_WC_SUCCESS;
			rsim_dp_responder_error(qp, peer, false,
						IB_WC_REM_ACCESS_ERR, k);
			return IB_WC_REM_ACCESS_ERR;
		}
		break;
	default:
		/* SEND: the responder's scatter list */
		if (rsim_dp_local(rsim, peer->ibqp.pd, rwqe->sge,
				  rwqe->num_sge, IB_ACCESS_LOCAL_WRITE,
				  peer->rq.refs, &cap)) {
			if (!rc)
				return IB_WC_SUCCESS;	/* dropped */
			rsim_dp_responder_error(qp, peer, true,
						IB_WC_LOC_PROT_ERR, k);
			return IB_WC_REM_OP_ERR;
		}
		if (cap < *len) {
			if (!rc)
				return IB_WC_SUCCESS;	/* dropped */
			rsim_dp_responder_error(qp, peer, true,
						IB_WC_LOC_LEN_ERR, k);
			return IB_WC_REM_INV_REQ_ERR;
		}
		err = rsim_mr_copy(rsim, peer->rq.refs, rwqe->num_sge, lrefs,
				   wqe->num_sge, inl, *len);
		if (err == -ENXIO)
			return IB_WC_LOC_PROT_ERR;
		if (err) {
			if (!rc)
				return IB_WC_SUCCESS;	/* dropped */
			rsim_dp_responder_error(qp, peer, true,
						IB_WC_LOC_PROT_ERR, k);
			return IB_WC_REM_OP_ERR;
		}
		break;
	}

	if (wqe->opcode == IB_WR_SEND_WITH_INV &&
	    rsim_mr_invalidate(rsim, peer->ibqp.pd, wqe->inv)) {
		rsim_dp_responder_error(qp, peer, true, IB_WC_REM_INV_REQ_ERR,
					k);
		return IB_WC_REM_INV_REQ_ERR;
	}

	if (rwqe) {
		struct ib_wc wc = {
			.status = IB_WC_SUCCESS,
			.opcode = wqe->opcode == IB_WR_RDMA_WRITE_WITH_IMM ?
				  IB_WC_RECV_RDMA_WITH_IMM : IB_WC_RECV,
			.byte_len = *len,
			.src_qp = qp->ibqp.qp_num,
			.slid = READ_ONCE(rsim->port.lid),
			.sl = rdma_ah_get_sl(&qp->attr.ah_attr),
			.port_num = RSIM_PORT,
		};

		if (wqe->opcode == IB_WR_SEND_WITH_IMM ||
		    wqe->opcode == IB_WR_RDMA_WRITE_WITH_IMM) {
			wc.wc_flags |= IB_WC_WITH_IMM;
			wc.ex.imm_data = wqe->imm;
		} else if (wqe->opcode == IB_WR_SEND_WITH_INV) {
			wc.wc_flags |= IB_WC_WITH_INVALIDATE;
			wc.ex.invalidate_rkey = wqe->inv;
		}
		spin_lock(&peer->lock);
		rsim_rq_complete_locked(peer, &wc,
					wqe->send_flags & IB_SEND_SOLICITED, k);
		spin_unlock(&peer->lock);
	}
	return IB_WC_SUCCESS;
}

/* a delivered message: the data path and port counters */
static void rsim_dp_count(struct rsim_dev *rsim, struct rsim_qp *qp,
			  const struct rsim_send_wqe *wqe, u64 len)
{
	struct rsim_port_counters *c = &rsim->dp.port;
	u64 mtu = ib_mtu_enum_to_int(qp->attr.path_mtu);
	u64 pkts;

	if (wqe->opcode == IB_WR_REG_MR || wqe->opcode == IB_WR_LOCAL_INV)
		return;
	rsim->dp.bytes += len;
	pkts = max_t(u64, 1, DIV_ROUND_UP_ULL(len, mtu));
	c->xmit_data += len;
	c->rcv_data += len;
	c->xmit_pkts += pkts;
	c->rcv_pkts += pkts;
}

/*
 * Execute @qp's send queue from its head until it is empty, the QP
 * leaves RTS, a SEND waits for a receive WR, or a WR fails (the QP then
 * enters the error state and the rest is flushed).
 */
static void rsim_qp_run_locked(struct rsim_dev *rsim, struct rsim_qp *qp,
			       struct rsim_kick *k)
{
	lockdep_assert_held(&rsim->dp_lock);
	for (;;) {
		struct rsim_send_wqe *wqe;
		int status;
		u64 len;

		spin_lock(&qp->lock);
		if (qp->state != IB_QPS_RTS || !qp->sq.count) {
			spin_unlock(&qp->lock);
			return;
		}
		/* only the engine moves the head, so the slot stays put */
		wqe = rsim_wqe(&qp->sq, 0);
		spin_unlock(&qp->lock);

		status = rsim_qp_exec(rsim, qp, wqe, &len, k);
		if (status == RSIM_EXEC_WAIT) {
			if (!qp->rnr_wait)
				rsim->dp.rnr_waits++;
			qp->rnr_wait = true;
			return;
		}
		rsim->dp.wqes++;
		if (status == IB_WC_SUCCESS)
			rsim_dp_count(rsim, qp, wqe, len);
		else
			rsim->dp.errors++;

		spin_lock(&qp->lock);
		qp->rnr_wait = false;
		if (status != IB_WC_SUCCESS || qp->sq_sig_all ||
		    (wqe->send_flags & IB_SEND_SIGNALED)) {
			struct ib_wc wc = {
				.wr_id = wqe->wr_id,
				.status = status,
				.opcode = rsim_wc_opcode(wqe->opcode),
				.byte_len = len,
				.qp = &qp->ibqp,
			};

			rsim_push(k, qp->ibqp.send_cq, &wc, false);
		}
		rsim_wq_pop(&qp->sq);
		if (status != IB_WC_SUCCESS)
			rsim_qp_error_locked(qp, true, k);
		spin_unlock(&qp->lock);
		if (status != IB_WC_SUCCESS)
			return;
	}
}

/**
 * rsim_dp_run() - run the engine on a QP's send queue
 * @rsim: device
 * @qpn: the QP
 * @waiting: only if its head waits for a receive WR (RNR)
 *
 * Completion handlers run after the engine has dropped its lock.
 *
 * Context: any; does not sleep.
 */
void rsim_dp_run(struct rsim_dev *rsim, u32 qpn, bool waiting)
{
	struct rsim_kick k = { .ncq = 0 };
	struct rsim_qp *qp;
	unsigned long flags;

	spin_lock_irqsave(&rsim->dp_lock, flags);
	qp = xa_load(&rsim->qp_xa, qpn);
	if (qp && (qp->ibqp.qp_type == IB_QPT_RC ||
		   qp->ibqp.qp_type == IB_QPT_UC) &&
	    (!waiting || qp->rnr_wait))
		rsim_qp_run_locked(rsim, qp, &k);
	/* rsim_dp_sync() waits for the handlers too */
	atomic_inc(&rsim->dp_active);
	spin_unlock_irqrestore(&rsim->dp_lock, flags);
	rsim_kick_run(&k);
	if (atomic_dec_and_test(&rsim->dp_active))
		wake_up_var(&rsim->dp_active);
}

/* The post-time checks of one send WR (rxe's and the IBA's rules). */
static int rsim_post_send_check(struct rsim_qp *qp,
				const struct ib_send_wr *wr, u64 *inline_len)
{
	struct rsim_dev *rsim = to_rsim_dev(qp->ibqp.device);
	bool rc = qp->ibqp.qp_type == IB_QPT_RC;
	int i;

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
	default:
		/* atomics (atomic_cap is NONE), MW binds, LSO, ... */
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

static void rsim_post_send_fill(struct rsim_send_wqe *wqe,
				const struct ib_send_wr *wr, u64 inline_len)
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
	if (wr->opcode == IB_WR_RDMA_WRITE ||
	    wr->opcode == IB_WR_RDMA_WRITE_WITH_IMM ||
	    wr->opcode == IB_WR_RDMA_READ) {
		wqe->remote_addr = rdma_wr(wr)->remote_addr;
		wqe->rkey = rdma_wr(wr)->rkey;
	}
	if (wr->send_flags & IB_SEND_INLINE) {
		/* inline data is copied now, from kernel virtual addresses */
		u8 *p = (u8 *)wqe->sge;

		for (i = 0; i < wr->num_sge; i++) {
			memcpy(p, (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			p += wr->sg_list[i].length;
		}
		wqe->inline_len = inline_len;
		return;
	}
	wqe->num_sge = wr->num_sge;
	memcpy(wqe->sge, wr->sg_list, wr->num_sge * sizeof(*wr->sg_list));
}

/*
 * RC and UC send WRs are queued and executed at once by the loopback
 * engine (rsim_dp_run()) on the caller's context. UD, SMI and GSI QPs do
 * not send yet.
 *
 * Context: any; does not sleep.
 */
static int rsim_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
			  const struct ib_send_wr **bad_wr)
{
	struct rsim_dev *rsim = to_rsim_dev(ibqp->device);
	struct rsim_qp *qp = to_rsim_qp(ibqp);
	struct rsim_kick k = { .ncq = 0 };
	enum ib_qp_state state;
	unsigned long flags;
	int err = 0;

	if (ibqp->qp_type != IB_QPT_RC && ibqp->qp_type != IB_QPT_UC) {
		*bad_wr = wr;
		return -EOPNOTSUPP;
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
				    inline_len);
		qp->sq.count++;
	}
	/* the error state completes what is posted with a flush */
	if (state == IB_QPS_ERR)
		rsim_qp_flush_sq_locked(qp, &k);
out:
	spin_unlock_irqrestore(&qp->lock, flags);
	rsim_kick_run(&k);
	if (err)
		*bad_wr = wr;
	if (state == IB_QPS_RTS)
		rsim_dp_run(rsim, ibqp->qp_num, false);
	return err;
}

/* Context: any; does not sleep. */
static int rsim_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad_wr)
{
	struct rsim_dev *rsim = to_rsim_dev(ibqp->device);
	struct rsim_qp *qp = to_rsim_qp(ibqp);
	struct rsim_kick k = { .ncq = 0 };
	unsigned long flags;
	bool posted = false;
	u32 peer = 0;
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
		posted = true;
	}
	if (qp->state == IB_QPS_ERR)
		rsim_qp_flush_rq_locked(qp, &k);
	else if (posted && ibqp->qp_type == IB_QPT_RC)
		peer = qp->attr.dest_qp_num;
out:
	spin_unlock_irqrestore(&qp->lock, flags);
	rsim_kick_run(&k);
	if (err)
		*bad_wr = wr;
	/* a requester waiting for a receive WR (RNR) goes on */
	if (posted && ibqp->qp_type == IB_QPT_RC)
		rsim_dp_run(rsim, peer, true);
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
