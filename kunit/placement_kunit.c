// SPDX-License-Identifier: GPL-2.0-only
/*
 * Suite rdmasim_placement: IBA annex A19's memory placement operations,
 * RDMA FLUSH and ATOMIC WRITE, on the loopback data path (the fixture:
 * dp_helpers.c). No kernel send WR carries their operands: they come
 * through a mapped send queue's slot (usq.c), here a ring attached to the
 * requester as in rdmasim_usq. ATOMIC_WRITE stores 8 aligned bytes where
 * the QP and the MR allow REMOTE_WRITE; FLUSH needs its placement types'
 * rights in the responder QP and the MR, over its range or (IB_FLUSH_MR)
 * the whole region. Every way the responder refuses one (tables) changes
 * nothing and leaves both QPs in the error state; the post-time rules
 * fail the WR at the requester. Where the kernel has neither (before
 * 6.2), a slot that names one is refused like any unknown opcode.
 */

#include "dp_helpers.h"

/* the MR's offset the cases aim at, in f->dst */
#define PL_OFF		64
#define PL_MR_LEN	128
#define PL_VALUE	0x1122334455667788ULL
#define PL_OLD		0xa5a5a5a5a5a5a5a5ULL

enum pl_fault {
	PL_OK,
	PL_MISALIGNED,
	PL_QP_NO_RIGHT,
	PL_MR_NO_RIGHT,
	PL_PAST_END,
	PL_BAD_KEY,
};

struct pl_case {
	const char *name;
	enum pl_fault fault;
	enum ib_wc_status status;
};

static const struct pl_case aw_cases[] = {
	{ "stores_8_bytes", PL_OK, IB_WC_SUCCESS },
	{ "misaligned", PL_MISALIGNED, IB_WC_REM_INV_REQ_ERR },
	{ "qp_forbids_write", PL_QP_NO_RIGHT, IB_WC_REM_ACCESS_ERR },
	{ "mr_forbids_write", PL_MR_NO_RIGHT, IB_WC_REM_ACCESS_ERR },
	{ "past_end", PL_PAST_END, IB_WC_REM_ACCESS_ERR },
	{ "bad_rkey", PL_BAD_KEY, IB_WC_REM_ACCESS_ERR },
};

KUNIT_ARRAY_PARAM_DESC(aw, aw_cases, name);

static const struct pl_case fl_cases[] = {
	{ "global_range", PL_OK, IB_WC_SUCCESS },
	{ "qp_forbids_flush", PL_QP_NO_RIGHT, IB_WC_REM_ACCESS_ERR },
	{ "mr_forbids_flush", PL_MR_NO_RIGHT, IB_WC_REM_ACCESS_ERR },
	{ "range_past_end", PL_PAST_END, IB_WC_REM_ACCESS_ERR },
	{ "bad_rkey", PL_BAD_KEY, IB_WC_REM_ACCESS_ERR },
};

KUNIT_ARRAY_PARAM_DESC(fl, fl_cases, name);

static void pl_need_placement(struct kunit *test)
{
	if (!RSIM_PLACEMENT)
		kunit_skip(test, "the kernel has no FLUSH or ATOMIC_WRITE");
}

/*
 * The fixture with a ring on the requester, the responder's QP rights
 * @qp_access, and an MR over f->dst's first PL_MR_LEN bytes with @access
 * (PL_OLD at PL_OFF, zeros around).
 */
static struct dp_fixture *pl_fixture(struct kunit *test, int qp_access,
				     int access, struct ib_mr **mrp)
{
	struct dp_fixture *f = dp_fixture_type(test, IB_QPT_RC, qp_access, 7);
	struct ib_mr *mr = rsim_kunit_mr(test, f->pd, IB_MR_TYPE_MEM_REG, 2);
	struct ib_wc wc;

	*(u64 *)(f->dst.va + PL_OFF) = PL_OLD;
	ib_dma_sync_single_for_device(&f->rsim->ibdev, f->dst.dma, DP_BUF,
				      DMA_BIDIRECTIONAL);
	KUNIT_ASSERT_EQ(test, dp_reg(test, f, f->b, mr, &f->dst, 0, PL_MR_LEN,
				     IB_ACCESS_LOCAL_WRITE | access, false),
			0);
	KUNIT_ASSERT_EQ(test, dp_poll(f, &wc, 1), 0);
	dp_ring_attach(test, f->a);
	*mrp = mr;
	return f;
}

/* slot @i of the requester's ring: a signaled WR, no SGE */
static struct rsim_uswqe *pl_slot(struct ib_qp *qp, u32 i, u32 opcode,
				  u64 wr_id)
{
	struct rsim_uswqe *s = dp_ring_slot(qp, i);

	memset(s, 0, sizeof(*s) + sizeof(s->sge[0]));
	s->wr_id = wr_id;
	s->opcode = opcode;
	s->send_flags = IB_SEND_SIGNALED;
	return s;
}

/* ring slots up to @prod, poll the requester's one completion */
static void pl_run(struct kunit *test, struct dp_fixture *f, u32 prod,
		   struct ib_wc *wc)
{
	KUNIT_ASSERT_EQ(test, dp_ring(f->a, prod), 0);
	dp_poll_one(test, f, f->a, wc);
}

/* a refused WR changed nothing and took both QPs to the error state */
static void pl_expect_refused(struct kunit *test, struct dp_fixture *f)
{
	u64 *dst = (u64 *)dp_cpu(f, &f->dst);

	KUNIT_EXPECT_EQ(test, dst[PL_OFF / 8], PL_OLD);
	KUNIT_EXPECT_EQ(test, to_rsim_qp(f->a)->state, IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, to_rsim_qp(f->b)->state, IB_QPS_ERR);
}

/*
 * ATOMIC_WRITE (oA19-28): the 8 bytes at an 8-byte aligned target of an
 * MR the QP and the registration open to REMOTE_WRITE, nothing around
 * them; completion IB_WC_ATOMIC_WRITE. Misaligned: an invalid request;
 * no right, a range past the MR or a bad rkey: a remote access error.
 */
static void rsim_placement_test_atomic_write(struct kunit *test)
{
	const struct pl_case *c = test->param_value;
	int qp_access = c->fault == PL_QP_NO_RIGHT ? IB_ACCESS_REMOTE_READ :
			DP_ACCESS;
	int access = c->fault == PL_MR_NO_RIGHT ? IB_ACCESS_REMOTE_READ :
		     IB_ACCESS_REMOTE_WRITE;
	struct rsim_uswqe *s;
	struct dp_fixture *f;
	struct ib_mr *mr;
	struct ib_wc wc;
	u64 *dst;

	pl_need_placement(test);
	f = pl_fixture(test, qp_access, access, &mr);
	s = pl_slot(f->a, 0, RSIM_WR_ATOMIC_WRITE, 7);
	s->wr.atomic_write.remote_addr = mr->iova + PL_OFF;
	s->wr.atomic_write.rkey = mr->rkey;
	s->wr.atomic_write.value = PL_VALUE;
	if (c->fault == PL_MISALIGNED)
		s->wr.atomic_write.remote_addr += 4;
	if (c->fault == PL_PAST_END)
		s->wr.atomic_write.remote_addr = mr->iova + PL_MR_LEN;
	if (c->fault == PL_BAD_KEY)
		s->wr.atomic_write.rkey = ib_inc_rkey(mr->rkey);
	pl_run(test, f, 1, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, c->status);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 7);
	if (c->fault != PL_OK) {
		pl_expect_refused(test, f);
		return;
	}
	KUNIT_EXPECT_EQ(test, wc.opcode, RSIM_WC_ATOMIC_WRITE);
	dst = (u64 *)dp_cpu(f, &f->dst);
	KUNIT_EXPECT_EQ(test, dst[PL_OFF / 8], PL_VALUE);
	KUNIT_EXPECT_EQ(test, dst[PL_OFF / 8 - 1], 0);
	KUNIT_EXPECT_EQ(test, dst[PL_OFF / 8 + 1], 0);
	KUNIT_EXPECT_EQ(test, to_rsim_qp(f->b)->state, IB_QPS_RTS);
}

/*
 * FLUSH (A19.4): IB_FLUSH_GLOBAL over a range needs the type's right in
 * the responder QP and in the MR, and the range inside the MR; then a
 * zero-length range and the whole MR (IB_FLUSH_MR: address and length not
 * looked at, here both nonsense) succeed too. Each refusal is a remote
 * access error that changes nothing.
 */
static void rsim_placement_test_flush(struct kunit *test)
{
	const struct pl_case *c = test->param_value;
	int qp_access = DP_ACCESS | (c->fault == PL_QP_NO_RIGHT ? 0 :
				     RSIM_ACCESS_FLUSH_GLOBAL);
	int access = IB_ACCESS_REMOTE_WRITE |
		     (c->fault == PL_MR_NO_RIGHT ? 0 : RSIM_ACCESS_FLUSH_GLOBAL);
	struct rsim_uswqe *s;
	struct dp_fixture *f;
	struct ib_mr *mr;
	struct ib_wc wc;

	pl_need_placement(test);
	f = pl_fixture(test, qp_access, access, &mr);
	s = pl_slot(f->a, 0, RSIM_WR_FLUSH, 1);
	s->wr.flush.remote_addr = mr->iova;
	s->wr.flush.length = PL_MR_LEN;
	s->wr.flush.rkey = mr->rkey;
	s->wr.flush.type = RSIM_FLUSH_GLOBAL;
	s->wr.flush.level = RSIM_FLUSH_RANGE;
	if (c->fault == PL_PAST_END)
		s->wr.flush.length = PL_MR_LEN + 1;
	if (c->fault == PL_BAD_KEY)
		s->wr.flush.rkey = ib_inc_rkey(mr->rkey);
	pl_run(test, f, 1, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, c->status);
	if (c->fault != PL_OK) {
		pl_expect_refused(test, f);
		return;
	}
	KUNIT_EXPECT_EQ(test, wc.opcode, RSIM_WC_FLUSH);

	s = pl_slot(f->a, 1, RSIM_WR_FLUSH, 2);
	s->wr.flush.remote_addr = mr->iova + PL_MR_LEN;	/* the end */
	s->wr.flush.rkey = mr->rkey;
	s->wr.flush.type = RSIM_FLUSH_GLOBAL;
	s->wr.flush.level = RSIM_FLUSH_RANGE;
	pl_run(test, f, 2, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 2);

	s = pl_slot(f->a, 2, RSIM_WR_FLUSH, 3);
	s->wr.flush.remote_addr = 1;
	s->wr.flush.length = U64_MAX;
	s->wr.flush.rkey = mr->rkey;
	s->wr.flush.type = RSIM_FLUSH_GLOBAL;
	s->wr.flush.level = RSIM_FLUSH_MR;
	pl_run(test, f, 3, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 3);
	KUNIT_EXPECT_EQ(test, to_rsim_qp(f->b)->state, IB_QPS_RTS);
}

/*
 * rdma-core's test_qp_ex_rc_flush_type_violate: a persistent FLUSH to an
 * MR that grants global visibility only is a remote access error, even
 * when the QP allows both types.
 */
static void rsim_placement_test_flush_type_violation(struct kunit *test)
{
	struct rsim_uswqe *s;
	struct dp_fixture *f;
	struct ib_mr *mr;
	struct ib_wc wc;

	pl_need_placement(test);
	f = pl_fixture(test, DP_ACCESS | RSIM_ACCESS_FLUSH,
		       IB_ACCESS_REMOTE_WRITE | RSIM_ACCESS_FLUSH_GLOBAL, &mr);
	s = pl_slot(f->a, 0, RSIM_WR_FLUSH, 4);
	s->wr.flush.remote_addr = mr->iova;
	s->wr.flush.length = 8;
	s->wr.flush.rkey = mr->rkey;
	s->wr.flush.type = RSIM_FLUSH_PERSISTENT;
	s->wr.flush.level = RSIM_FLUSH_RANGE;
	pl_run(test, f, 1, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_REM_ACCESS_ERR);
	pl_expect_refused(test, f);
}

/*
 * No registration of memory that is not persistent grants the persistent
 * type (rxe's rule): a fast registration asking for it fails, one asking
 * for global visibility succeeds.
 */
static void rsim_placement_test_persistent_needs_pmem(struct kunit *test)
{
	struct dp_fixture *f;
	struct ib_mr *mr;
	struct ib_wc wc;

	pl_need_placement(test);
	f = dp_fixture(test);
	mr = rsim_kunit_mr(test, f->pd, IB_MR_TYPE_MEM_REG, 2);
	KUNIT_ASSERT_EQ(test, dp_reg(test, f, f->b, mr, &f->dst, 0, PL_MR_LEN,
				     IB_ACCESS_LOCAL_WRITE |
				     RSIM_ACCESS_FLUSH_GLOBAL, true), 0);
	dp_poll_one(test, f, f->b, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	mr = rsim_kunit_mr(test, f->pd, IB_MR_TYPE_MEM_REG, 2);
	KUNIT_ASSERT_EQ(test, dp_reg(test, f, f->b, mr, &f->dst, 0, PL_MR_LEN,
				     IB_ACCESS_LOCAL_WRITE |
				     RSIM_ACCESS_FLUSH_PERSISTENT, true), 0);
	dp_poll_one(test, f, f->b, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_LOC_QP_OP_ERR);
}

/* a slot's fields that break a posting rule, after a good FLUSH's */
enum pl_post_fault {
	PL_POST_TYPE_NONE,
	PL_POST_TYPE_UNKNOWN,
	PL_POST_LEVEL_UNKNOWN,
	PL_POST_SGE,
	PL_POST_INLINE,
	PL_POST_RESERVED,
	PL_POST_UC,
};

struct pl_post_case {
	const char *name;
	enum pl_post_fault fault;
};

static const struct pl_post_case pl_post_cases[] = {
	{ "no_placement_type", PL_POST_TYPE_NONE },
	{ "unknown_placement_type", PL_POST_TYPE_UNKNOWN },
	{ "unknown_selectivity_level", PL_POST_LEVEL_UNKNOWN },
	{ "with_an_sge", PL_POST_SGE },
	{ "inline", PL_POST_INLINE },
	{ "reserved_field_set", PL_POST_RESERVED },
	{ "on_a_uc_qp", PL_POST_UC },
};

KUNIT_ARRAY_PARAM_DESC(pl_post, pl_post_cases, name);

/*
 * The posting rules of both (usq.c, qp.c): RC only, no SGE, no inline
 * data, reserved fields zero; a FLUSH names one or both known types and
 * a known level. A slot that breaks one completes with
 * IB_WC_LOC_QP_OP_ERR at the requester, which enters the error state;
 * the responder sees nothing.
 */
static void rsim_placement_test_post_rules(struct kunit *test)
{
	const struct pl_post_case *c = test->param_value;
	enum ib_qp_type type = c->fault == PL_POST_UC ? IB_QPT_UC : IB_QPT_RC;
	struct dp_fixture *f;
	struct rsim_uswqe *s;
	struct ib_wc wc;

	pl_need_placement(test);
	f = dp_fixture_type(test, type, type == IB_QPT_UC ?
			    IB_ACCESS_REMOTE_WRITE :
			    DP_ACCESS | RSIM_ACCESS_FLUSH, 7);
	dp_ring_attach(test, f->a);
	s = pl_slot(f->a, 0, RSIM_WR_FLUSH, 5);
	s->wr.flush.rkey = 1;
	s->wr.flush.type = RSIM_FLUSH_GLOBAL;
	s->wr.flush.level = RSIM_FLUSH_RANGE;
	switch (c->fault) {
	case PL_POST_TYPE_NONE:
		s->wr.flush.type = 0;
		break;
	case PL_POST_TYPE_UNKNOWN:
		s->wr.flush.type = 4;
		break;
	case PL_POST_LEVEL_UNKNOWN:
		s->wr.flush.level = 2;
		break;
	case PL_POST_SGE:
		s->num_sge = 1;
		s->sge[0].addr = f->src.dma;
		s->sge[0].length = 8;
		s->sge[0].lkey = f->pd->local_dma_lkey;
		break;
	case PL_POST_INLINE:
		s->send_flags |= IB_SEND_INLINE;
		s->inline_len = 8;
		break;
	case PL_POST_RESERVED:
		s->wr.flush.reserved = 1;
		break;
	case PL_POST_UC:
		break;
	}
	pl_run(test, f, 1, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_LOC_QP_OP_ERR);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 5);
	KUNIT_EXPECT_EQ(test, to_rsim_qp(f->a)->state, IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, to_rsim_qp(f->b)->state, IB_QPS_RTS);
}

/*
 * No kernel send WR carries their operands: ib_post_send() refuses both
 * opcodes; so does a ring where the kernel has neither.
 */
static void rsim_placement_test_kernel_post_refused(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_rdma_wr wr = {
		.wr.opcode = RSIM_WR_FLUSH,
		.wr.send_flags = IB_SEND_SIGNALED,
		.remote_addr = f->dst.dma,
	};
	const struct ib_send_wr *bad;
	struct ib_wc wc;

	KUNIT_EXPECT_EQ(test, ib_post_send(f->a, &wr.wr, &bad), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, bad, &wr.wr);
	wr.wr.opcode = RSIM_WR_ATOMIC_WRITE;
	KUNIT_EXPECT_EQ(test, ib_post_send(f->a, &wr.wr, &bad), -EINVAL);
	KUNIT_EXPECT_EQ(test, dp_poll(f, &wc, 1), 0);
	KUNIT_EXPECT_EQ(test, to_rsim_qp(f->a)->state, IB_QPS_RTS);
	if (RSIM_PLACEMENT)
		return;
	dp_ring_attach(test, f->a);
	pl_slot(f->a, 0, RSIM_WR_FLUSH, 6);
	pl_run(test, f, 1, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_LOC_QP_OP_ERR);
}

/* the device's flags say what it executes */
static void rsim_placement_test_device_flags(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	u64 flags = f->rsim->ibdev.attrs.device_cap_flags;

	KUNIT_EXPECT_EQ(test, flags & RSIM_DEVICE_PLACEMENT,
			(u64)RSIM_DEVICE_PLACEMENT);
	KUNIT_EXPECT_EQ(test, (int)!!RSIM_DEVICE_PLACEMENT,
			(int)RSIM_PLACEMENT);
}

static struct kunit_case rsim_placement_test_cases[] = {
	KUNIT_CASE_PARAM(rsim_placement_test_atomic_write, aw_gen_params),
	KUNIT_CASE_PARAM(rsim_placement_test_flush, fl_gen_params),
	KUNIT_CASE(rsim_placement_test_flush_type_violation),
	KUNIT_CASE(rsim_placement_test_persistent_needs_pmem),
	KUNIT_CASE_PARAM(rsim_placement_test_post_rules, pl_post_gen_params),
	KUNIT_CASE(rsim_placement_test_kernel_post_refused),
	KUNIT_CASE(rsim_placement_test_device_flags),
	RSIM_KUNIT_NO_LEFTOVERS,
	{}
};

static struct kunit_suite rsim_placement_test_suite = {
	.name = "rdmasim_placement",
	.suite_init = rsim_kunit_suite_init,
	.test_cases = rsim_placement_test_cases,
};

kunit_test_suite(rsim_placement_test_suite);
