// SPDX-License-Identifier: GPL-2.0-only
/*
 * Suite rdmasim_mcast: multicast (mcast_dp.c) between the suite's shared
 * device and one made for each case, over the groups the SA keeps
 * (mcast.c): attach and detach and their limits; a datagram to the
 * group's MLID reaching every attached QP of the sender's port (its own
 * included) and of each port that is a receiving member at the SA, data
 * checked and counted at the receiving port; a port that is no member,
 * or a send-only one, receives nothing; IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK;
 * the losses (a QP number other than 0xFFFFFF, a Q_Key mismatch at one
 * receiver, a GRH naming another MGID, a receiving port's cable pulled);
 * a destroyed QP leaves its groups, and a QP given its number next
 * inherits none of them.
 */

#include <rdma/ib_mad.h>
#include <rdma/ib_sa.h>

#include "dp_helpers.h"

#define MC_QKEY		0x6d6d
#define MC_LEN		64

static const u8 mc_mgid[16] = {
	0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0x4d, 0x43,
};

struct mc_fixture {
	struct dp_fixture a;
	struct dp_fixture b;
	union ib_gid mgid;
	u16 mlid;
};

static void mc_leave_all(void *data)
{
	rsim_mcast_port_gone(((struct rsim_dev *)data)->port.guid);
}

/* @port joins (creating it if need be) the group, JoinState @join */
static u16 mc_join(struct kunit *test, struct mc_fixture *f,
		   struct rsim_dev *port, u8 join)
{
	u8 rec[IB_MGMT_SA_DATA] = {};
	struct rsim_sa_query q = {
		.method = IB_MGMT_METHOD_SET,
		.attr_id = IB_SA_ATTR_MC_MEMBER_REC,
		/* MGID, PortGID, Q_Key, TClass, P_Key, SL, FlowLabel, Join */
		.comp_mask = BIT_ULL(0) | BIT_ULL(1) | BIT_ULL(2) | BIT_ULL(6) |
			     BIT_ULL(7) | BIT_ULL(12) | BIT_ULL(13) |
			     BIT_ULL(16),
		.rec = rec,
		.slid = READ_ONCE(port->port.lid),
	};
	union ib_gid *pgid = (union ib_gid *)(rec + 16);
	struct rsim_sa_answer a;
	u16 status, mlid;

	memcpy(rec, mc_mgid, sizeof(mc_mgid));
	pgid->global.subnet_prefix = cpu_to_be64(RSIM_GID_PREFIX);
	pgid->global.interface_id = port->port.guid;
	*(__be32 *)(rec + 32) = cpu_to_be32(MC_QKEY);
	*(__be16 *)(rec + 40) = cpu_to_be16(IB_DEFAULT_PKEY_FULL);
	rec[48] = join;
	KUNIT_ASSERT_EQ(test, rsim_sa_answer(&q, &a), 0);
	status = a.status;
	mlid = a.count ? be16_to_cpu(*(__be16 *)(a.table + 36)) : 0;
	rsim_sa_answer_free(&a);
	if (!status)
		f->mlid = mlid;
	return status;
}

static struct mc_fixture *mc_fixture(struct kunit *test)
{
	struct mc_fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	struct dp_fixture *e[2];
	int i;

	KUNIT_ASSERT_NOT_NULL(test, f);
	e[0] = &f->a;
	e[1] = &f->b;
	f->a.rsim = rsim_kunit_shared_dev(test);
	f->b.rsim = rsim_kunit_dev(test, NULL);
	for (i = 0; i < 2; i++) {
		e[i]->pd = rsim_kunit_pd(test, e[i]->rsim);
		e[i]->cq = rsim_kunit_cq(test, e[i]->rsim, 64);
		dp_buf_init(test, e[i], &e[i]->src, PAGE_SIZE, 0x30 + i);
		dp_buf_init(test, e[i], &e[i]->dst, PAGE_SIZE, 0);
	}
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mc_leave_all,
							f->a.rsim), 0);
	memcpy(f->mgid.raw, mc_mgid, sizeof(mc_mgid));
	/* the shared device's port creates the group, a full member */
	KUNIT_ASSERT_EQ(test, mc_join(test, f, f->a.rsim, 1), 0);
	KUNIT_ASSERT_GE(test, f->mlid, RSIM_SA_MLID_FIRST);
	return f;
}

static void mc_cq_destroy(void *cq)
{
	ib_free_cq(cq);
}

/* a UD QP of @e's with CQs of its own, in RTS with @qkey */
static struct ib_qp *mc_qp(struct kunit *test, struct dp_fixture *e,
			   u32 qkey, u32 flags)
{
	struct ib_qp_init_attr a = {
		.qp_type = IB_QPT_UD,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.port_num = 1,
		.create_flags = flags,
	};
	struct ib_qp *qp;

	a.send_cq = ib_alloc_cq(&e->rsim->ibdev, NULL, 32, 0, IB_POLL_DIRECT);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, a.send_cq);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mc_cq_destroy,
							a.send_cq), 0);
	a.recv_cq = ib_alloc_cq(&e->rsim->ibdev, NULL, 32, 0, IB_POLL_DIRECT);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, a.recv_cq);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mc_cq_destroy,
							a.recv_cq), 0);
	qp = ib_create_qp(e->pd, &a);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, qp);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, dp_qp_destroy,
							qp), 0);
	KUNIT_ASSERT_EQ(test, rsim_kunit_ud_to_rts(qp, qkey, 0), 0);
	return qp;
}

struct mc_att {
	struct ib_qp *qp;
	struct mc_fixture *f;
};

static void mc_detach(void *data)
{
	struct mc_att *m = data;

	ib_detach_mcast(m->qp, &m->f->mgid, m->f->mlid);
}

/*
 * Attach @qp to the group; detached before the case ends (the core does
 * not destroy an attached QP: ib_attach_mcast() holds it)
 */
static int mc_attach(struct kunit *test, struct mc_fixture *f,
		     struct ib_qp *qp)
{
	struct mc_att *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	int err;

	KUNIT_ASSERT_NOT_NULL(test, m);
	err = ib_attach_mcast(qp, &f->mgid, f->mlid);
	if (err)
		return err;
	m->qp = qp;
	m->f = f;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mc_detach, m), 0);
	return 0;
}

/* @qp attached to the group, a receive WR posted at @e's dst + @off */
static void mc_listen(struct kunit *test, struct mc_fixture *f,
		      struct dp_fixture *e, struct ib_qp *qp, u32 off)
{
	KUNIT_ASSERT_EQ(test, mc_attach(test, f, qp), 0);
	KUNIT_ASSERT_EQ(test, dp_post_recv(qp, off, e->dst.dma + off,
					   40 + MC_LEN,
					   e->pd->local_dma_lkey), 0);
}

static void mc_ah_destroy(void *ah)
{
	rdma_destroy_ah(ah, 0);
}

/*
 * @qp sends MC_LEN bytes of its device's src to @dlid and QP @qpn (with a
 * GRH to @dgid if not NULL); returns the send's completion status.
 */
static int mc_send(struct kunit *test, struct dp_fixture *e, struct ib_qp *qp,
		   u16 dlid, union ib_gid *dgid, u32 qpn)
{
	struct rdma_ah_attr attr = { .type = RDMA_AH_ATTR_TYPE_IB };
	struct ib_sge sge = { .addr = e->src.dma, .length = MC_LEN,
			      .lkey = e->pd->local_dma_lkey };
	struct ib_ud_wr wr = {
		.wr.opcode = IB_WR_SEND,
		.wr.send_flags = IB_SEND_SIGNALED,
		.wr.wr_id = 77,
		.wr.sg_list = &sge,
		.wr.num_sge = 1,
		.remote_qpn = qpn,
		.remote_qkey = MC_QKEY,
	};
	struct ib_wc wc;
	struct ib_ah *ah;

	rdma_ah_set_port_num(&attr, 1);
	rdma_ah_set_dlid(&attr, dlid);
	if (dgid)
		rdma_ah_set_grh(&attr, dgid, 0, 0, 1, 0);
	ah = rdma_create_ah(e->pd, &attr, 0);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ah);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mc_ah_destroy,
							ah), 0);
	wr.ah = ah;
	KUNIT_ASSERT_EQ(test, ib_post_send(qp, &wr.wr, NULL), 0);
	/* every receiver has it before the sender's completion */
	for (;;) {
		KUNIT_ASSERT_EQ(test, rsim_kunit_cq_wait(qp->send_cq, &wc, 1,
							 DP_WAIT_MS), 1);
		if (wc.wr_id == 77)
			return wc.status;
	}
}

/* @qp's receive: true if one arrived, with the payload at @e's dst + @off */
static bool mc_got(struct kunit *test, struct dp_fixture *e, struct ib_qp *qp,
		   u32 off, struct dp_fixture *from)
{
	struct ib_wc wc;

	if (ib_poll_cq(qp->recv_cq, 1, &wc) != 1)
		return false;
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 40 + MC_LEN);
	KUNIT_EXPECT_EQ(test, wc.wr_id, off);
	KUNIT_EXPECT_EQ(test, wc.slid, READ_ONCE(from->rsim->port.lid));
	KUNIT_EXPECT_EQ(test, memcmp(dp_cpu(e, &e->dst) + off + 40,
				     from->src.va, MC_LEN), 0);
	return true;
}

/*
 * Attach and detach: UD only (the core refuses RC), a QP attached twice
 * stays until detached twice, a detach of what is not attached (or by another MLID) EINVAL,
 * RSIM_MC_QP_ATTACH QPs per group and no more, room again after a detach;
 * BLOCK_MULTICAST_LOOPBACK refused to an RC QP.
 */
static void rsim_mcast_test_attach_rules(struct kunit *test)
{
	struct mc_fixture *f = mc_fixture(test);
	struct dp_fixture *b = &f->b;
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC,
		.send_cq = b->cq, .recv_cq = b->cq,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.port_num = 1,
		.create_flags = IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK,
	};
	struct ib_qp *qp, *rc, *extra, *first = NULL;
	int i;

	qp = mc_qp(test, b, MC_QKEY, 0);
	KUNIT_EXPECT_EQ(test, ib_attach_mcast(qp, &f->mgid, f->mlid), 0);
	KUNIT_EXPECT_EQ(test, ib_detach_mcast(qp, &f->mgid, f->mlid + 1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, ib_detach_mcast(qp, &f->mgid, f->mlid), 0);
	KUNIT_EXPECT_EQ(test, ib_detach_mcast(qp, &f->mgid, f->mlid), -EINVAL);
	KUNIT_EXPECT_EQ(test, b->rsim->mc_ngrps, 0);
	/* twice: attached until detached twice, as the core counts */
	KUNIT_EXPECT_EQ(test, ib_attach_mcast(qp, &f->mgid, f->mlid), 0);
	KUNIT_EXPECT_EQ(test, ib_attach_mcast(qp, &f->mgid, f->mlid), 0);
	KUNIT_EXPECT_EQ(test, ib_detach_mcast(qp, &f->mgid, f->mlid), 0);
	KUNIT_EXPECT_EQ(test, b->rsim->mc_ngrps, 1);
	KUNIT_EXPECT_EQ(test, ib_detach_mcast(qp, &f->mgid, f->mlid), 0);
	KUNIT_EXPECT_EQ(test, b->rsim->mc_ngrps, 0);
	KUNIT_EXPECT_EQ(test, mc_attach(test, f, qp), 0);
	rc = dp_qp(test, b, IB_QPT_RC, b->pd);
	KUNIT_EXPECT_EQ(test, ib_attach_mcast(rc, &f->mgid, f->mlid), -EINVAL);
	extra = ib_create_qp(b->pd, &init);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(extra), -EOPNOTSUPP);
	if (!IS_ERR(extra))
		ib_destroy_qp(extra);

	/* a group takes RSIM_MC_QP_ATTACH QPs (qp is one) */
	for (i = 1; i < RSIM_MC_QP_ATTACH; i++) {
		struct ib_qp *more = dp_qp(test, b, IB_QPT_UD, b->pd);

		if (i == 1) {
			first = more;
			KUNIT_ASSERT_EQ(test, ib_attach_mcast(more, &f->mgid,
							      f->mlid), 0);
		} else {
			KUNIT_ASSERT_EQ(test, mc_attach(test, f, more), 0);
		}
	}
	extra = dp_qp(test, b, IB_QPT_UD, b->pd);
	KUNIT_EXPECT_EQ(test, ib_attach_mcast(extra, &f->mgid, f->mlid),
			-ENOMEM);
	/* one leaves: room for another */
	KUNIT_EXPECT_EQ(test, ib_detach_mcast(first, &f->mgid, f->mlid), 0);
	KUNIT_EXPECT_EQ(test, mc_attach(test, f, extra), 0);
}

/*
 * One datagram to the group's MLID: the sender's own copy, another QP of
 * its port, and a QP of the other device whose port is a member; each
 * with the data, the other port counting what it received.
 */
static void rsim_mcast_test_fanout(struct kunit *test)
{
	struct mc_fixture *f = mc_fixture(test);
	struct dp_fixture *a = &f->a, *b = &f->b;
	struct ib_qp *a1, *a2, *b1;
	u64 rcv;

	KUNIT_ASSERT_EQ(test, mc_join(test, f, b->rsim, 1), 0);
	a1 = mc_qp(test, a, MC_QKEY, 0);
	a2 = mc_qp(test, a, MC_QKEY, 0);
	b1 = mc_qp(test, b, MC_QKEY, 0);
	mc_listen(test, f, a, a1, 0);
	mc_listen(test, f, a, a2, 256);
	mc_listen(test, f, b, b1, 0);
	spin_lock_bh(&b->rsim->stats_lock);
	rcv = b->rsim->dp.port.rcv_data;
	spin_unlock_bh(&b->rsim->stats_lock);

	KUNIT_EXPECT_EQ(test, mc_send(test, a, a1, f->mlid, &f->mgid,
				      IB_MULTICAST_QPN), IB_WC_SUCCESS);
	KUNIT_EXPECT_TRUE(test, mc_got(test, a, a1, 0, a));
	KUNIT_EXPECT_TRUE(test, mc_got(test, a, a2, 256, a));
	KUNIT_EXPECT_TRUE(test, mc_got(test, b, b1, 0, a));
	spin_lock_bh(&b->rsim->stats_lock);
	KUNIT_EXPECT_EQ(test, b->rsim->dp.port.rcv_data, rcv + MC_LEN);
	spin_unlock_bh(&b->rsim->stats_lock);

	/* without a GRH, by the MLID alone; from the other side */
	KUNIT_ASSERT_EQ(test, dp_post_recv(a1, 0, a->dst.dma, 40 + MC_LEN,
					   a->pd->local_dma_lkey), 0);
	KUNIT_EXPECT_EQ(test, mc_send(test, b, b1, f->mlid, NULL,
				      IB_MULTICAST_QPN), IB_WC_SUCCESS);
	KUNIT_EXPECT_TRUE(test, mc_got(test, a, a1, 0, b));
	/* b1 has no receive WR left: its own copy is lost */
	KUNIT_EXPECT_FALSE(test, mc_got(test, b, b1, 0, b));
}

/*
 * The switch forwards a group's traffic to a port only if the SA has it
 * as a FullMember or NonMember: nothing before it joins, nothing as a
 * SendOnlyNonMember, the datagram once it is a NonMember.
 */
static void rsim_mcast_test_membership(struct kunit *test)
{
	struct mc_fixture *f = mc_fixture(test);
	struct dp_fixture *a = &f->a, *b = &f->b;
	struct ib_qp *a1, *b1;

	a1 = mc_qp(test, a, MC_QKEY, IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK);
	b1 = mc_qp(test, b, MC_QKEY, 0);
	mc_listen(test, f, b, b1, 0);
	KUNIT_EXPECT_EQ(test, mc_send(test, a, a1, f->mlid, &f->mgid,
				      IB_MULTICAST_QPN), IB_WC_SUCCESS);
	KUNIT_EXPECT_FALSE(test, mc_got(test, b, b1, 0, a));
	KUNIT_ASSERT_EQ(test, mc_join(test, f, b->rsim,
				      BIT(SENDONLY_NONMEBER_JOIN)), 0);
	KUNIT_EXPECT_EQ(test, mc_send(test, a, a1, f->mlid, &f->mgid,
				      IB_MULTICAST_QPN), IB_WC_SUCCESS);
	KUNIT_EXPECT_FALSE(test, mc_got(test, b, b1, 0, a));
	KUNIT_ASSERT_EQ(test, mc_join(test, f, b->rsim, BIT(NONMEMBER_JOIN)),
			0);
	KUNIT_EXPECT_EQ(test, mc_send(test, a, a1, f->mlid, &f->mgid,
				      IB_MULTICAST_QPN), IB_WC_SUCCESS);
	KUNIT_EXPECT_TRUE(test, mc_got(test, b, b1, 0, a));
}

/*
 * IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK: no QP of the sender's port gets
 * the datagram, the sender included; the other port's do.
 */
static void rsim_mcast_test_loopback_blocked(struct kunit *test)
{
	struct mc_fixture *f = mc_fixture(test);
	struct dp_fixture *a = &f->a, *b = &f->b;
	struct ib_qp *a1, *a2, *b1;

	KUNIT_ASSERT_EQ(test, mc_join(test, f, b->rsim, 1), 0);
	a1 = mc_qp(test, a, MC_QKEY, IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK);
	a2 = mc_qp(test, a, MC_QKEY, 0);
	b1 = mc_qp(test, b, MC_QKEY, 0);
	mc_listen(test, f, a, a1, 0);
	mc_listen(test, f, a, a2, 256);
	mc_listen(test, f, b, b1, 0);
	KUNIT_EXPECT_EQ(test, mc_send(test, a, a1, f->mlid, &f->mgid,
				      IB_MULTICAST_QPN), IB_WC_SUCCESS);
	KUNIT_EXPECT_FALSE(test, mc_got(test, a, a1, 0, a));
	KUNIT_EXPECT_FALSE(test, mc_got(test, a, a2, 256, a));
	KUNIT_EXPECT_TRUE(test, mc_got(test, b, b1, 0, a));
}

/*
 * Losses: a QP number other than 0xFFFFFF reaches nobody; a receiver with
 * another Q_Key loses it (its port counts the violation) while the others
 * get it; a GRH naming another MGID reaches nobody; a port whose cable is
 * pulled gets nothing. The SEND succeeds each time.
 */
static void rsim_mcast_test_losses(struct kunit *test)
{
	struct mc_fixture *f = mc_fixture(test);
	struct dp_fixture *a = &f->a, *b = &f->b;
	union ib_gid other = f->mgid;
	struct ib_qp *a1, *a2, *b0, *b1, *b2;
	u32 qviol;

	KUNIT_ASSERT_EQ(test, mc_join(test, f, b->rsim, 1), 0);
	a1 = mc_qp(test, a, MC_QKEY, IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK);
	a2 = mc_qp(test, a, MC_QKEY, 0);
	mc_listen(test, f, a, a2, 256);
	/* to the MLID, but to a2's QP number: nobody */
	b0 = mc_qp(test, b, MC_QKEY, 0);
	KUNIT_EXPECT_EQ(test, mc_send(test, b, b0, f->mlid, &f->mgid,
				      a2->qp_num), IB_WC_SUCCESS);
	KUNIT_EXPECT_FALSE(test, mc_got(test, a, a2, 256, b));

	/* b1's Q_Key is not the sender's: lost at b, a2 gets it */
	b1 = mc_qp(test, b, MC_QKEY + 1, 0);
	mc_listen(test, f, b, b1, 0);
	qviol = READ_ONCE(b->rsim->port.qkey_viol);
	KUNIT_EXPECT_EQ(test, mc_send(test, b, b0, f->mlid, &f->mgid,
				      IB_MULTICAST_QPN), IB_WC_SUCCESS);
	KUNIT_EXPECT_TRUE(test, mc_got(test, a, a2, 256, b));
	KUNIT_EXPECT_FALSE(test, mc_got(test, b, b1, 0, b));
	KUNIT_EXPECT_EQ(test, READ_ONCE(b->rsim->port.qkey_viol), qviol + 1);

	/* a GRH naming another MGID: nobody */
	other.raw[15] ^= 1;
	KUNIT_ASSERT_EQ(test, dp_post_recv(a2, 256, a->dst.dma + 256,
					   40 + MC_LEN,
					   a->pd->local_dma_lkey), 0);
	KUNIT_EXPECT_EQ(test, mc_send(test, b, b0, f->mlid, &other,
				      IB_MULTICAST_QPN), IB_WC_SUCCESS);
	KUNIT_EXPECT_FALSE(test, mc_got(test, a, a2, 256, b));

	/* b2 would take it, but b's cable is pulled */
	b2 = mc_qp(test, b, MC_QKEY, 0);
	mc_listen(test, f, b, b2, 256);
	qviol = READ_ONCE(b->rsim->port.qkey_viol);
	rsim_port_set_link(b->rsim, false);
	KUNIT_EXPECT_EQ(test, mc_send(test, a, a1, f->mlid, &f->mgid,
				      IB_MULTICAST_QPN), IB_WC_SUCCESS);
	KUNIT_EXPECT_FALSE(test, mc_got(test, b, b2, 256, a));
	KUNIT_EXPECT_EQ(test, READ_ONCE(b->rsim->port.qkey_viol), qviol);
	rsim_port_set_link(b->rsim, true);
}

/* destroy_qp's hook: a UD QP made there, given the number just freed */
struct mc_reuse {
	struct mc_fixture *f;
	struct ib_qp_init_attr init;
	struct ib_qp *qp;
	u32 want_qpn;
	int err;
};

static struct mc_reuse *mc_reuse;

static void mc_reuse_clear(void *rsim)
{
	((struct rsim_dev *)rsim)->qp_gone_hook = NULL;
}

/*
 * One shot, inside destroy_qp once the QP's number is free: a new UD QP
 * takes that number, goes to RTS with a receive WR, and attaches to the
 * group itself (through the driver, as the core's attach would).
 */
static void mc_reuse_hook(struct rsim_qp *gone)
{
	struct mc_reuse *r = mc_reuse;
	struct dp_fixture *a = &r->f->a;
	struct rsim_dev *rsim = a->rsim;
	struct ib_qp *qp;

	rsim->qp_gone_hook = NULL;
	rsim->qp_next = r->want_qpn;
	qp = ib_create_qp(a->pd, &r->init);
	if (IS_ERR(qp)) {
		r->err = PTR_ERR(qp);
		return;
	}
	r->qp = qp;
	r->err = rsim_kunit_ud_to_rts(qp, MC_QKEY, 0) ?:
		 dp_post_recv(qp, 512, a->dst.dma + 512, 40 + MC_LEN,
			      a->pd->local_dma_lkey) ?:
		 rsim->ibdev.ops.attach_mcast(qp, &r->f->mgid, r->f->mlid);
}

/*
 * Issue 40, item 7: destroy_qp gave the QP's number up before the QP
 * left its groups, so a QP given the number meanwhile inherited the
 * attachments (it received the group's datagrams it never asked for) and
 * then lost its own to the late cleanup. Here the QP made with the
 * number inside destroy_qp attaches itself; after the destroy it is
 * still attached, and receives the group's next datagram.
 */
static void rsim_mcast_test_number_reuse(struct kunit *test)
{
	struct mc_fixture *f = mc_fixture(test);
	struct dp_fixture *a = &f->a;
	struct mc_reuse *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	struct ib_qp *old, *sender;

	KUNIT_ASSERT_NOT_NULL(test, r);
	sender = mc_qp(test, a, MC_QKEY, 0);
	old = mc_qp(test, a, MC_QKEY, 0);
	r->f = f;
	r->init = (struct ib_qp_init_attr){
		.qp_type = IB_QPT_UD,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.port_num = 1,
		.send_cq = old->send_cq,
		.recv_cq = old->recv_cq,
	};
	r->want_qpn = old->qp_num;
	mc_reuse = r;
	/* through the driver: the core would refuse to destroy it attached */
	KUNIT_ASSERT_EQ(test, a->rsim->ibdev.ops.attach_mcast(old, &f->mgid,
							      f->mlid), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mc_reuse_clear,
							a->rsim), 0);
	a->rsim->qp_gone_hook = mc_reuse_hook;
	kunit_remove_action(test, dp_qp_destroy, old);
	KUNIT_ASSERT_EQ(test, ib_destroy_qp(old), 0);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, r->qp);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, dp_qp_destroy,
							r->qp), 0);
	KUNIT_ASSERT_EQ(test, r->err, 0);
	KUNIT_EXPECT_EQ(test, r->qp->qp_num, r->want_qpn);
	KUNIT_EXPECT_EQ(test, mc_send(test, a, sender, f->mlid, &f->mgid,
				      IB_MULTICAST_QPN), IB_WC_SUCCESS);
	KUNIT_EXPECT_TRUE(test, mc_got(test, a, r->qp, 512, a));
	KUNIT_EXPECT_EQ(test, a->rsim->ibdev.ops.detach_mcast(r->qp, &f->mgid,
							      f->mlid), 0);
}

static struct kunit_case rsim_mcast_test_cases[] = {
	KUNIT_CASE(rsim_mcast_test_attach_rules),
	KUNIT_CASE(rsim_mcast_test_fanout),
	KUNIT_CASE(rsim_mcast_test_membership),
	KUNIT_CASE(rsim_mcast_test_loopback_blocked),
	KUNIT_CASE(rsim_mcast_test_losses),
	KUNIT_CASE(rsim_mcast_test_number_reuse),
	RSIM_KUNIT_NO_LEFTOVERS,
	{}
};

static struct kunit_suite rsim_mcast_test_suite = {
	.name = "rdmasim_mcast",
	.suite_init = rsim_kunit_suite_init,
	.test_cases = rsim_mcast_test_cases,
};

kunit_test_suite(rsim_mcast_test_suite);
