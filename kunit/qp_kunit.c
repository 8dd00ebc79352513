// SPDX-License-Identifier: GPL-2.0-only
/*
 * Suite rdmasim_qp: QP objects, the state machine, attribute validation,
 * the receive queue, and the send queue of QPs that do not send yet.
 */

#include "helpers.h"

struct rsim_qp_fixture {
	struct rsim_dev *rsim;
	struct ib_pd *pd;
	struct ib_cq *cq;
};

/* A PD and a CQ on the shared device, in test->priv (not .init: the
 * suite's last case checks that nothing is left on the device).
 */
static struct rsim_qp_fixture *rsim_qp_fixture(struct kunit *test)
{
	struct rsim_qp_fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, f);
	f->rsim = rsim_kunit_shared_dev(test);
	f->pd = rsim_kunit_pd(test, f->rsim);
	f->cq = rsim_kunit_cq(test, f->rsim, 64);
	test->priv = f;
	return f;
}

static void rsim_qp_init_attr(struct rsim_qp_fixture *f,
			      struct ib_qp_init_attr *a, enum ib_qp_type type)
{
	memset(a, 0, sizeof(*a));
	a->qp_type = type;
	a->send_cq = f->cq;
	a->recv_cq = f->cq;
	a->cap.max_send_wr = 8;
	a->cap.max_recv_wr = 8;
	a->cap.max_send_sge = 2;
	a->cap.max_recv_sge = 2;
	a->sq_sig_type = IB_SIGNAL_REQ_WR;
	a->port_num = 1;
}

static void rsim_qp_destroy_action(void *qp)
{
	ib_destroy_qp(qp);
}

static struct ib_qp *rsim_qp_owned(struct kunit *test, enum ib_qp_type type)
{
	struct rsim_qp_fixture *f = test->priv;
	struct ib_qp_init_attr a;
	struct ib_qp *qp;

	rsim_qp_init_attr(f, &a, type);
	qp = ib_create_qp(f->pd, &a);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, qp);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, rsim_qp_destroy_action,
						  qp));
	return qp;
}

enum rsim_qp_tweak {
	TWEAK_NONE,
	TWEAK_SEND_WR,
	TWEAK_RECV_WR,
	TWEAK_SEND_SGE,
	TWEAK_RECV_SGE,
	TWEAK_INLINE,
	TWEAK_CREATE_FLAGS,
	TWEAK_NO_SEND_CQ,
	TWEAK_ZERO_WR,
};

struct rsim_qp_new_case {
	const char *name;
	enum ib_qp_type type;
	enum rsim_qp_tweak tweak;
	int err;
};

static const struct rsim_qp_new_case rsim_qp_new_cases[] = {
	{ "rc", IB_QPT_RC, TWEAK_NONE, 0 },
	{ "uc", IB_QPT_UC, TWEAK_NONE, 0 },
	{ "ud", IB_QPT_UD, TWEAK_NONE, 0 },
	{ "rc_no_queues", IB_QPT_RC, TWEAK_ZERO_WR, 0 },
	/* the MAD layer holds QP0 and QP1 of port 1 */
	{ "smi_taken", IB_QPT_SMI, TWEAK_NONE, -EBUSY },
	{ "gsi_taken", IB_QPT_GSI, TWEAK_NONE, -EBUSY },
	{ "xrc_ini_unsupported", IB_QPT_XRC_INI, TWEAK_NONE, -EOPNOTSUPP },
	{ "raw_packet_unsupported", IB_QPT_RAW_PACKET, TWEAK_NONE,
	  -EOPNOTSUPP },
	{ "send_wr_over_limit", IB_QPT_RC, TWEAK_SEND_WR, -EINVAL },
	{ "recv_wr_over_limit", IB_QPT_RC, TWEAK_RECV_WR, -EINVAL },
	{ "send_sge_over_limit", IB_QPT_RC, TWEAK_SEND_SGE, -EINVAL },
	{ "recv_sge_over_limit", IB_QPT_RC, TWEAK_RECV_SGE, -EINVAL },
	{ "inline_over_limit", IB_QPT_RC, TWEAK_INLINE, -EINVAL },
	{ "create_flags_unsupported", IB_QPT_RC, TWEAK_CREATE_FLAGS,
	  -EOPNOTSUPP },
	{ "no_send_cq", IB_QPT_UD, TWEAK_NO_SEND_CQ, -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(rsim_qp_new, rsim_qp_new_cases, name);

static void rsim_qp_test_create(struct kunit *test)
{
	const struct rsim_qp_new_case *c = test->param_value;
	struct rsim_qp_fixture *f = rsim_qp_fixture(test);
	const struct rsim_limits *lim = &f->rsim->cfg.limits;
	struct rsim_kunit_counts before;
	struct ib_qp_init_attr a;
	struct ib_qp_attr qa;
	struct ib_qp_init_attr qi;
	struct ib_qp *qp;

	rsim_qp_init_attr(f, &a, c->type);
	switch (c->tweak) {
	case TWEAK_SEND_WR:
		a.cap.max_send_wr = lim->max_qp_wr + 1;
		break;
	case TWEAK_RECV_WR:
		a.cap.max_recv_wr = lim->max_qp_wr + 1;
		break;
	case TWEAK_SEND_SGE:
		a.cap.max_send_sge = lim->max_send_sge + 1;
		break;
	case TWEAK_RECV_SGE:
		a.cap.max_recv_sge = lim->max_recv_sge + 1;
		break;
	case TWEAK_INLINE:
		a.cap.max_inline_data = lim->max_inline_data + 1;
		break;
	case TWEAK_CREATE_FLAGS:
		a.create_flags = IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK;
		break;
	case TWEAK_NO_SEND_CQ:
		a.send_cq = NULL;
		break;
	case TWEAK_ZERO_WR:
		a.cap.max_send_wr = 0;
		a.cap.max_recv_wr = 0;
		break;
	case TWEAK_NONE:
		break;
	}

	rsim_kunit_snapshot(f->rsim, &before);
	qp = ib_create_qp(f->pd, &a);
	if (c->err) {
		KUNIT_EXPECT_EQ(test, PTR_ERR(qp), c->err);
		rsim_kunit_expect_counts(test, f->rsim, &before);
		return;
	}
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, qp);
	KUNIT_EXPECT_GE(test, qp->qp_num, RSIM_QPN_MIN);
	KUNIT_EXPECT_LE(test, qp->qp_num, RSIM_QPN_MAX);
	KUNIT_EXPECT_PTR_EQ(test, xa_load(&f->rsim->qp_xa, qp->qp_num),
			    (void *)to_rsim_qp(qp));
	KUNIT_EXPECT_EQ(test, ib_query_qp(qp, &qa, IB_QP_STATE, &qi), 0);
	KUNIT_EXPECT_EQ(test, qa.qp_state, IB_QPS_RESET);
	KUNIT_EXPECT_EQ(test, qi.cap.max_send_wr, a.cap.max_send_wr);
	KUNIT_EXPECT_EQ(test, qi.cap.max_recv_sge, a.cap.max_recv_sge);
	KUNIT_EXPECT_EQ(test, rsim_res_count(f->rsim, RSIM_RES_QP),
			before.res[RSIM_RES_QP] + 1);
	KUNIT_EXPECT_EQ(test, ib_destroy_qp(qp), 0);
	rsim_kunit_expect_counts(test, f->rsim, &before);
}

static void rsim_qp_test_numbers_unique(struct kunit *test)
{
	struct ib_qp *a, *b;

	rsim_qp_fixture(test);
	a = rsim_qp_owned(test, IB_QPT_RC);
	b = rsim_qp_owned(test, IB_QPT_UD);

	KUNIT_EXPECT_NE(test, a->qp_num, b->qp_num);
}

static void rsim_qp_test_limit_refused(struct kunit *test)
{
	struct rsim_qp_fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	struct rsim_dev_config cfg;
	struct rsim_kunit_counts before;
	struct ib_qp_init_attr a;
	int i, n;

	KUNIT_ASSERT_NOT_NULL(test, f);
	test->priv = f;
	rsim_default_config(&cfg);
	cfg.limits.max_res[RSIM_RES_QP] = 5;	/* QP0 + QP1 + 3 */
	f->rsim = rsim_kunit_dev(test, &cfg);
	f->pd = rsim_kunit_pd(test, f->rsim);
	f->cq = rsim_kunit_cq(test, f->rsim, 16);
	n = 5 - rsim_res_count(f->rsim, RSIM_RES_QP);
	KUNIT_ASSERT_EQ(test, n, 3);
	for (i = 0; i < n; i++)
		rsim_qp_owned(test, IB_QPT_RC);
	rsim_kunit_snapshot(f->rsim, &before);
	rsim_qp_init_attr(f, &a, IB_QPT_RC);
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_create_qp(f->pd, &a)), -ENOMEM);
	rsim_kunit_expect_counts(test, f->rsim, &before);
}

static void rsim_qp_rc_attr(struct ib_qp_attr *qa, enum ib_qp_state to,
			    int *mask)
{
	memset(qa, 0, sizeof(*qa));
	qa->qp_state = to;
	switch (to) {
	case IB_QPS_INIT:
		qa->pkey_index = 0;
		qa->port_num = 1;
		qa->qp_access_flags = IB_ACCESS_REMOTE_READ |
				      IB_ACCESS_REMOTE_WRITE;
		*mask = IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
			IB_QP_ACCESS_FLAGS;
		break;
	case IB_QPS_RTR:
		qa->ah_attr.type = RDMA_AH_ATTR_TYPE_IB;
		rdma_ah_set_port_num(&qa->ah_attr, 1);
		rdma_ah_set_dlid(&qa->ah_attr, 1);
		qa->path_mtu = IB_MTU_4096;
		qa->dest_qp_num = 0x1234;
		qa->rq_psn = 0x100;
		qa->max_dest_rd_atomic = 4;
		qa->min_rnr_timer = 12;
		*mask = IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER;
		break;
	case IB_QPS_RTS:
		qa->sq_psn = 0x200;
		qa->timeout = 14;
		qa->retry_cnt = 7;
		qa->rnr_retry = 7;
		qa->max_rd_atomic = 4;
		*mask = IB_QP_STATE | IB_QP_SQ_PSN | IB_QP_TIMEOUT |
			IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
			IB_QP_MAX_QP_RD_ATOMIC;
		break;
	default:
		*mask = IB_QP_STATE;
		break;
	}
}

static enum ib_qp_state rsim_qp_state(struct kunit *test, struct ib_qp *qp)
{
	struct ib_qp_init_attr qi;
	struct ib_qp_attr qa;

	KUNIT_EXPECT_EQ(test, ib_query_qp(qp, &qa, IB_QP_STATE, &qi), 0);
	return qa.qp_state;
}

static void rsim_qp_test_rc_full_cycle(struct kunit *test)
{
	/* state, and whether only IB_QP_STATE goes with it */
	static const struct {
		enum ib_qp_state to;
		bool bare;
	} path[] = {
		{ IB_QPS_INIT }, { IB_QPS_RTR }, { IB_QPS_RTS },
		{ IB_QPS_SQD, true }, { IB_QPS_RTS, true }, { IB_QPS_ERR, true },
		{ IB_QPS_RESET, true }, { IB_QPS_INIT },
	};
	struct ib_qp_init_attr qi;
	struct ib_qp_attr qa;
	struct ib_qp *qp;
	int i, mask;

	rsim_qp_fixture(test);
	qp = rsim_qp_owned(test, IB_QPT_RC);
	for (i = 0; i < ARRAY_SIZE(path); i++) {
		rsim_qp_rc_attr(&qa, path[i].to, &mask);
		if (path[i].bare)
			mask = IB_QP_STATE;
		KUNIT_EXPECT_EQ_MSG(test, ib_modify_qp(qp, &qa, mask), 0,
				    "step %d to state %d", i, path[i].to);
		KUNIT_EXPECT_EQ(test, rsim_qp_state(test, qp), path[i].to);
		if (i != 2)
			continue;
		/* the attributes stick */
		KUNIT_EXPECT_EQ(test, ib_query_qp(qp, &qa, ~0, &qi), 0);
		KUNIT_EXPECT_EQ(test, qa.dest_qp_num, 0x1234);
		KUNIT_EXPECT_EQ(test, qa.rq_psn, 0x100);
		KUNIT_EXPECT_EQ(test, qa.sq_psn, 0x200);
		KUNIT_EXPECT_EQ(test, qa.path_mtu, IB_MTU_4096);
		KUNIT_EXPECT_EQ(test, qa.max_rd_atomic, 4);
		KUNIT_EXPECT_EQ(test, qa.max_dest_rd_atomic, 4);
		KUNIT_EXPECT_EQ(test, qa.timeout, 14);
		KUNIT_EXPECT_EQ(test, qa.port_num, 1);
		KUNIT_EXPECT_EQ(test, rdma_ah_get_dlid(&qa.ah_attr), 1);
		KUNIT_EXPECT_EQ(test, qa.qp_access_flags,
				IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE);
	}
	/* RESET forgot everything */
	rsim_qp_rc_attr(&qa, IB_QPS_RESET, &mask);
	KUNIT_EXPECT_EQ(test, ib_modify_qp(qp, &qa, mask), 0);
	KUNIT_EXPECT_EQ(test, ib_query_qp(qp, &qa, ~0, &qi), 0);
	KUNIT_EXPECT_EQ(test, qa.dest_qp_num, 0);
}

struct rsim_qp_trans_case {
	const char *name;
	enum ib_qp_state from;
	enum ib_qp_state to;
	int drop_mask;		/* a required attribute left out */
	int extra_mask;		/* an attribute not allowed here */
};

static const struct rsim_qp_trans_case rsim_qp_bad_transitions[] = {
	{ "reset_to_rtr", IB_QPS_RESET, IB_QPS_RTR, 0, 0 },
	{ "reset_to_rts", IB_QPS_RESET, IB_QPS_RTS, 0, 0 },
	{ "init_to_rts", IB_QPS_INIT, IB_QPS_RTS, 0, 0 },
	{ "init_without_port", IB_QPS_RESET, IB_QPS_INIT, IB_QP_PORT, 0 },
	{ "rtr_without_av", IB_QPS_INIT, IB_QPS_RTR, IB_QP_AV, 0 },
	{ "rtr_without_dest_qpn", IB_QPS_INIT, IB_QPS_RTR, IB_QP_DEST_QPN, 0 },
	{ "rts_without_sq_psn", IB_QPS_RTR, IB_QPS_RTS, IB_QP_SQ_PSN, 0 },
	{ "init_with_sq_psn", IB_QPS_RESET, IB_QPS_INIT, 0, IB_QP_SQ_PSN },
	{ "rtr_to_sqd", IB_QPS_RTR, IB_QPS_SQD, 0, 0 },
};

KUNIT_ARRAY_PARAM_DESC(rsim_qp_trans, rsim_qp_bad_transitions, name);

static void rsim_qp_walk_to(struct kunit *test, struct ib_qp *qp,
			    enum ib_qp_state to)
{
	static const enum ib_qp_state order[] = {
		IB_QPS_INIT, IB_QPS_RTR, IB_QPS_RTS,
	};
	struct ib_qp_attr qa;
	int i, mask;

	for (i = 0; i < ARRAY_SIZE(order) && to != IB_QPS_RESET; i++) {
		rsim_qp_rc_attr(&qa, order[i], &mask);
		KUNIT_ASSERT_EQ(test, ib_modify_qp(qp, &qa, mask), 0);
		if (order[i] == to)
			break;
	}
}

static void rsim_qp_test_bad_transition(struct kunit *test)
{
	const struct rsim_qp_trans_case *c = test->param_value;
	struct ib_qp_attr qa;
	struct ib_qp *qp;
	int mask;

	rsim_qp_fixture(test);
	qp = rsim_qp_owned(test, IB_QPT_RC);
	rsim_qp_walk_to(test, qp, c->from);
	rsim_qp_rc_attr(&qa, c->to, &mask);
	mask &= ~c->drop_mask;
	mask |= c->extra_mask;
	KUNIT_EXPECT_EQ(test, ib_modify_qp(qp, &qa, mask), -EINVAL);
	KUNIT_EXPECT_EQ(test, rsim_qp_state(test, qp), c->from);
}

struct rsim_qp_attr_case {
	const char *name;
	enum ib_qp_state to;
	int field;
	int err;
};

enum {
	F_PORT, F_PKEY, F_ACCESS_MW_BIND, F_MTU, F_DEST_QPN,
	F_DEST_RD_ATOMIC, F_RD_ATOMIC, F_AV_DLID, F_AV_SL, F_AV_PORT,
	F_TIMEOUT, F_RETRY, F_RNR_RETRY, F_ALT_PATH, F_CUR_STATE,
};

static const struct rsim_qp_attr_case rsim_qp_attr_cases[] = {
	/*
	 * Through the driver op: ib_modify_qp() reads the port data of
	 * attr->port_num before anything checks it (rdma_ib_or_roce() in
	 * _ib_modify_qp(), core/verbs.c:1897 in 7.3), out of bounds for port 2.
	 */
	{ "init_port_2", IB_QPS_INIT, F_PORT, -EINVAL },
	{ "init_pkey_index_past_table", IB_QPS_INIT, F_PKEY, -EINVAL },
	/* REMOTE_ATOMIC is accepted (the CM sets it); memory windows are not */
	{ "init_mw_bind", IB_QPS_INIT, F_ACCESS_MW_BIND, -EINVAL },
	{ "rtr_mtu_8192", IB_QPS_RTR, F_MTU, -EINVAL },
	{ "rtr_dest_qpn_25_bits", IB_QPS_RTR, F_DEST_QPN, -EINVAL },
	{ "rtr_dest_rd_atomic_over", IB_QPS_RTR, F_DEST_RD_ATOMIC, -EINVAL },
	{ "rtr_av_dlid_0", IB_QPS_RTR, F_AV_DLID, -EINVAL },
	{ "rtr_av_sl_16", IB_QPS_RTR, F_AV_SL, -EINVAL },
	{ "rtr_av_port_2", IB_QPS_RTR, F_AV_PORT, -EINVAL },
	{ "rtr_alt_path", IB_QPS_RTR, F_ALT_PATH, -EOPNOTSUPP },
	{ "rtr_wrong_cur_state", IB_QPS_RTR, F_CUR_STATE, -EINVAL },
	{ "rts_rd_atomic_over", IB_QPS_RTS, F_RD_ATOMIC, -EINVAL },
	{ "rts_timeout_32", IB_QPS_RTS, F_TIMEOUT, -EINVAL },
	{ "rts_retry_8", IB_QPS_RTS, F_RETRY, -EINVAL },
	{ "rts_rnr_retry_8", IB_QPS_RTS, F_RNR_RETRY, -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(rsim_qp_attr, rsim_qp_attr_cases, name);

static void rsim_qp_test_bad_attribute(struct kunit *test)
{
	const struct rsim_qp_attr_case *c = test->param_value;
	struct rsim_qp_fixture *f = rsim_qp_fixture(test);
	const struct rsim_limits *lim = &f->rsim->cfg.limits;
	struct ib_qp *qp = rsim_qp_owned(test, IB_QPT_RC);
	enum ib_qp_state from = c->to == IB_QPS_INIT ? IB_QPS_RESET :
				c->to == IB_QPS_RTR ? IB_QPS_INIT : IB_QPS_RTR;
	struct ib_qp_attr qa;
	int mask, err;

	rsim_qp_walk_to(test, qp, from);
	rsim_qp_rc_attr(&qa, c->to, &mask);
	switch (c->field) {
	case F_PORT:
		qa.port_num = 2;
		break;
	case F_PKEY:
		qa.pkey_index = lim->pkey_tbl_len;
		break;
	case F_ACCESS_MW_BIND:
		qa.qp_access_flags |= IB_ACCESS_MW_BIND;
		break;
	case F_MTU:
		qa.path_mtu = IB_MTU_4096 + 1;
		break;
	case F_DEST_QPN:
		qa.dest_qp_num = 0x1000000;
		break;
	case F_DEST_RD_ATOMIC:
		qa.max_dest_rd_atomic = lim->max_qp_rd_atom + 1;
		break;
	case F_RD_ATOMIC:
		qa.max_rd_atomic = lim->max_qp_init_rd_atom + 1;
		break;
	case F_AV_DLID:
		rdma_ah_set_dlid(&qa.ah_attr, 0);
		break;
	case F_AV_SL:
		rdma_ah_set_sl(&qa.ah_attr, 16);
		break;
	case F_AV_PORT:
		rdma_ah_set_port_num(&qa.ah_attr, 2);
		break;
	case F_TIMEOUT:
		qa.timeout = 32;
		break;
	case F_RETRY:
		qa.retry_cnt = 8;
		break;
	case F_RNR_RETRY:
		qa.rnr_retry = 8;
		break;
	case F_ALT_PATH:
		qa.alt_ah_attr = qa.ah_attr;
		qa.alt_port_num = 1;
		mask |= IB_QP_ALT_PATH;
		break;
	case F_CUR_STATE:
		qa.cur_qp_state = IB_QPS_RESET;
		mask |= IB_QP_CUR_STATE;
		break;
	}
	if (c->field == F_PORT)
		err = qp->device->ops.modify_qp(qp, &qa, mask, NULL);
	else
		err = ib_modify_qp(qp, &qa, mask);
	KUNIT_EXPECT_EQ(test, err, c->err);
	KUNIT_EXPECT_EQ(test, rsim_qp_state(test, qp), from);
}

/* PSNs are 24 bits: the core masks larger ones before the driver sees them */
static void rsim_qp_test_psn_masked_to_24_bits(struct kunit *test)
{
	struct ib_qp_init_attr qi;
	struct ib_qp_attr qa;
	struct ib_qp *qp;
	int mask;

	rsim_qp_fixture(test);
	qp = rsim_qp_owned(test, IB_QPT_RC);
	rsim_qp_walk_to(test, qp, IB_QPS_INIT);
	rsim_qp_rc_attr(&qa, IB_QPS_RTR, &mask);
	qa.rq_psn = 0x1000100;
	KUNIT_EXPECT_EQ(test, ib_modify_qp(qp, &qa, mask), 0);
	KUNIT_EXPECT_EQ(test, ib_query_qp(qp, &qa, IB_QP_RQ_PSN, &qi), 0);
	KUNIT_EXPECT_EQ(test, qa.rq_psn, 0x100);
}

/*
 * UD post_send's own rules (delivery: suite rdmasim_ud): nothing
 * before RTS, SENDs only, and an address handle of this device.
 */
static void rsim_qp_test_post_send_ud_rules(struct kunit *test)
{
	struct ib_qp *qp;
	struct ib_ud_wr wr2 = { .wr.opcode = IB_WR_SEND };
	struct ib_ud_wr wr1 = { .wr.opcode = IB_WR_SEND, .wr.next = &wr2.wr };
	struct ib_rdma_wr write = { .wr.opcode = IB_WR_RDMA_WRITE };
	const struct ib_send_wr *bad = NULL;

	rsim_qp_fixture(test);
	qp = rsim_qp_owned(test, IB_QPT_UD);
	KUNIT_EXPECT_EQ(test, ib_post_send(qp, &wr1.wr, &bad), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, bad, (const struct ib_send_wr *)&wr1.wr);
	KUNIT_ASSERT_EQ(test, rsim_kunit_ud_to_rts(qp, 0x11, 0), 0);
	/* no address handle */
	bad = NULL;
	KUNIT_EXPECT_EQ(test, ib_post_send(qp, &wr1.wr, &bad), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, bad, (const struct ib_send_wr *)&wr1.wr);
	bad = NULL;
	KUNIT_EXPECT_EQ(test, ib_post_send(qp, &write.wr, &bad), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, bad, (const struct ib_send_wr *)&write.wr);
	KUNIT_EXPECT_EQ(test, to_rsim_qp(qp)->sq.count, 0);
}

static void rsim_qp_test_post_recv_rules(struct kunit *test)
{
	struct rsim_qp_fixture *f = rsim_qp_fixture(test);
	struct ib_qp *qp = rsim_qp_owned(test, IB_QPT_RC);
	struct ib_recv_wr wrs[9] = {};
	const struct ib_recv_wr *bad = NULL;
	struct ib_sge sge[3] = {};
	struct ib_wc *wc;
	int i, n;

	wc = kunit_kcalloc(test, 16, sizeof(*wc), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, wc);

	for (i = 0; i < ARRAY_SIZE(wrs); i++) {
		wrs[i].wr_id = 100 + i;
		wrs[i].sg_list = sge;
		wrs[i].num_sge = 1;
		wrs[i].next = i + 1 < ARRAY_SIZE(wrs) ? &wrs[i + 1] : NULL;
	}

	/* RESET: nothing can be posted */
	KUNIT_EXPECT_EQ(test, ib_post_recv(qp, &wrs[0], &bad), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, bad, (const struct ib_recv_wr *)&wrs[0]);

	rsim_qp_walk_to(test, qp, IB_QPS_INIT);
	/* too many SGEs: the WR before it is queued, bad_wr names it */
	wrs[1].num_sge = 3;
	KUNIT_EXPECT_EQ(test, ib_post_recv(qp, &wrs[0], &bad), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, bad, (const struct ib_recv_wr *)&wrs[1]);
	KUNIT_EXPECT_EQ(test, to_rsim_qp(qp)->rq.count, 1);
	wrs[1].num_sge = 1;

	/* depth 8: one queued, seven more fit, the ninth WR overflows */
	KUNIT_EXPECT_EQ(test, ib_post_recv(qp, &wrs[1], &bad), -ENOMEM);
	KUNIT_EXPECT_PTR_EQ(test, bad, (const struct ib_recv_wr *)&wrs[8]);
	KUNIT_EXPECT_EQ(test, to_rsim_qp(qp)->rq.count, 8);

	/* the error state flushes them, in order */
	{
		struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };

		KUNIT_EXPECT_EQ(test, ib_modify_qp(qp, &qa, IB_QP_STATE), 0);
	}
	n = ib_poll_cq(f->cq, 16, wc);
	KUNIT_EXPECT_EQ(test, n, 8);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(test, wc[i].status, IB_WC_WR_FLUSH_ERR);
		KUNIT_EXPECT_EQ(test, wc[i].wr_id, 100 + i);
		KUNIT_EXPECT_PTR_EQ(test, wc[i].qp, qp);
	}
	/* posting in the error state completes at once with a flush */
	wrs[0].next = NULL;
	KUNIT_EXPECT_EQ(test, ib_post_recv(qp, &wrs[0], &bad), 0);
	KUNIT_EXPECT_EQ(test, ib_poll_cq(f->cq, 1, wc), 1);
	KUNIT_EXPECT_EQ(test, wc[0].status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, to_rsim_qp(qp)->rq.count, 0);
}

static struct kunit_case rsim_qp_test_cases[] = {
	KUNIT_CASE_PARAM(rsim_qp_test_create, rsim_qp_new_gen_params),
	KUNIT_CASE(rsim_qp_test_numbers_unique),
	KUNIT_CASE(rsim_qp_test_limit_refused),
	KUNIT_CASE(rsim_qp_test_rc_full_cycle),
	KUNIT_CASE_PARAM(rsim_qp_test_bad_transition, rsim_qp_trans_gen_params),
	KUNIT_CASE_PARAM(rsim_qp_test_bad_attribute, rsim_qp_attr_gen_params),
	KUNIT_CASE(rsim_qp_test_psn_masked_to_24_bits),
	KUNIT_CASE(rsim_qp_test_post_send_ud_rules),
	KUNIT_CASE(rsim_qp_test_post_recv_rules),
	RSIM_KUNIT_NO_LEFTOVERS,
	{}
};

static struct kunit_suite rsim_qp_test_suite = {
	.name = "rdmasim_qp",
	.suite_init = rsim_kunit_suite_init,
	.test_cases = rsim_qp_test_cases,
};

kunit_test_suite(rsim_qp_test_suite);
