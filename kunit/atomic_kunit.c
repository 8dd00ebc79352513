// SPDX-License-Identifier: GPL-2.0-only
/*
 * Suite rdmasim_atomic: remote atomics on the loopback data path (the
 * fixture: dp_helpers.c). FETCH_AND_ADD and CMP_AND_SWP between two
 * connected RC QPs, every way the responder refuses one (table), the
 * post-time rules, and the access flags the CM asks for.
 */

#include "dp_helpers.h"

/* atomics: a fault of the remote side, and what the requester sees */
enum at_fault {
	AT_OK,
	AT_MISALIGNED,
	AT_QP_NO_ATOMIC,
	AT_MR_NO_ATOMIC,
	AT_PAST_END,
};

struct at_case {
	const char *name;
	enum at_fault fault;
	enum ib_wc_status status;
};

static const struct at_case at_cases[] = {
	{ "fetch_add_and_cmp_swap", AT_OK, IB_WC_SUCCESS },
	{ "misaligned", AT_MISALIGNED, IB_WC_REM_INV_REQ_ERR },
	{ "qp_forbids_atomic", AT_QP_NO_ATOMIC, IB_WC_REM_ACCESS_ERR },
	{ "mr_forbids_atomic", AT_MR_NO_ATOMIC, IB_WC_REM_ACCESS_ERR },
	{ "past_end", AT_PAST_END, IB_WC_REM_ACCESS_ERR },
};

KUNIT_ARRAY_PARAM_DESC(at, at_cases, name);

/* post one atomic into 8 bytes at @src_off of f->src, poll it */
static void at_one(struct kunit *test, struct dp_fixture *f,
		   struct ib_atomic_wr *wr, u32 src_off,
		   enum ib_wc_status status)
{
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, dp_post(f->a, &wr->wr, f->src.dma + src_off, 8,
				      f->pd->local_dma_lkey), 0);
	dp_poll_one(test, f, f->a, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, status);
	KUNIT_EXPECT_EQ(test, wc.wr_id, wr->wr.wr_id);
	if (status == IB_WC_SUCCESS) {
		KUNIT_EXPECT_EQ(test, wc.opcode,
				wr->wr.opcode == IB_WR_ATOMIC_FETCH_AND_ADD ?
				IB_WC_FETCH_ADD : IB_WC_COMP_SWAP);
		KUNIT_EXPECT_EQ(test, wc.byte_len, 8);
	}
}

/*
 * Remote atomics (atomic_cap IB_ATOMIC_HCA): FETCH_AND_ADD and
 * CMP_AND_SWP on 8 aligned bytes of an MR that allows REMOTE_ATOMIC, the
 * original value returned into the requester's SGE; a misaligned target,
 * a QP or MR without REMOTE_ATOMIC or a range past the MR fail at the
 * responder, which changes nothing.
 */
static void rsim_atomic_test_remote(struct kunit *test)
{
	const struct at_case *c = test->param_value;
	int qp_access = DP_ACCESS | (c->fault == AT_QP_NO_ATOMIC ? 0 :
				     IB_ACCESS_REMOTE_ATOMIC);
	struct dp_fixture *f = dp_fixture_type(test, IB_QPT_RC, qp_access, 7);
	struct ib_mr *mr = rsim_kunit_mr(test, f->pd, IB_MR_TYPE_MEM_REG, 2);
	int access = IB_ACCESS_LOCAL_WRITE | DP_ACCESS |
		     (c->fault == AT_MR_NO_ATOMIC ? 0 : IB_ACCESS_REMOTE_ATOMIC);
	struct ib_atomic_wr wr = {
		.wr.opcode = IB_WR_ATOMIC_FETCH_AND_ADD,
		.wr.wr_id = 9,
		.wr.send_flags = IB_SEND_SIGNALED,
		.compare_add = 5,
	};
	u64 *remote = (u64 *)(f->dst.va + 64);
	u64 *local = (u64 *)f->src.va;
	struct ib_wc wc;

	*remote = 100;
	*local = 0;
	ib_dma_sync_single_for_device(&f->rsim->ibdev, f->dst.dma, DP_BUF,
				      DMA_BIDIRECTIONAL);
	ib_dma_sync_single_for_device(&f->rsim->ibdev, f->src.dma, DP_BUF,
				      DMA_BIDIRECTIONAL);
	KUNIT_ASSERT_EQ(test, dp_reg(test, f, f->b, mr, &f->dst, 0, 128,
				     access, false), 0);
	KUNIT_ASSERT_EQ(test, dp_poll(f, &wc, 1), 0);
	wr.rkey = mr->rkey;
	wr.remote_addr = mr->iova + 64;
	if (c->fault == AT_MISALIGNED)
		wr.remote_addr += 4;
	if (c->fault == AT_PAST_END)
		wr.remote_addr = mr->iova + 128;

	at_one(test, f, &wr, 0, c->status);
	dp_cpu(f, &f->src);
	dp_cpu(f, &f->dst);
	if (c->fault != AT_OK) {
		KUNIT_EXPECT_EQ(test, *remote, 100);
		KUNIT_EXPECT_EQ(test, *local, 0);
		KUNIT_EXPECT_EQ(test, to_rsim_qp(f->a)->state, IB_QPS_ERR);
		KUNIT_EXPECT_EQ(test, to_rsim_qp(f->b)->state, IB_QPS_ERR);
		return;
	}
	KUNIT_EXPECT_EQ(test, *local, 100);
	KUNIT_EXPECT_EQ(test, *remote, 105);

	/* compare matches: swapped; the original comes back */
	wr.wr.opcode = IB_WR_ATOMIC_CMP_AND_SWP;
	wr.compare_add = 105;
	wr.swap = 0x1122334455667788ULL;
	at_one(test, f, &wr, 8, IB_WC_SUCCESS);
	dp_cpu(f, &f->src);
	dp_cpu(f, &f->dst);
	KUNIT_EXPECT_EQ(test, local[1], 105);
	KUNIT_EXPECT_EQ(test, *remote, 0x1122334455667788ULL);

	/* compare does not match: nothing changes */
	wr.compare_add = 1;
	wr.swap = 2;
	at_one(test, f, &wr, 16, IB_WC_SUCCESS);
	dp_cpu(f, &f->src);
	dp_cpu(f, &f->dst);
	KUNIT_EXPECT_EQ(test, local[2], 0x1122334455667788ULL);
	KUNIT_EXPECT_EQ(test, *remote, 0x1122334455667788ULL);
	/* the bytes around the target are untouched */
	KUNIT_EXPECT_EQ(test, ((u64 *)f->dst.va)[7], 0);
	KUNIT_EXPECT_EQ(test, ((u64 *)f->dst.va)[9], 0);

	/* post-time rules: one SGE of 8 bytes, RC only */
	{
		const struct ib_send_wr *bad;
		struct ib_sge sge = { .addr = f->src.dma, .length = 4,
				      .lkey = f->pd->local_dma_lkey };

		wr.wr.sg_list = &sge;
		wr.wr.num_sge = 1;
		KUNIT_EXPECT_EQ(test, ib_post_send(f->a, &wr.wr, &bad),
				-EINVAL);
		sge.length = 8;
		wr.wr.send_flags |= IB_SEND_INLINE;
		KUNIT_EXPECT_EQ(test, ib_post_send(f->a, &wr.wr, &bad),
				-EINVAL);
		KUNIT_EXPECT_EQ(test, dp_poll(f, &wc, 1), 0);
	}
}

/*
 * ib_cm_init_qp_attr() asks for REMOTE_ATOMIC whenever responder_resources
 * is not 0 (cm.c, cm_init_qp_init_attr()): INIT must accept it; an atomic
 * WR without its one 8-byte SGE is refused at post.
 */
static void rsim_atomic_test_cm_access_flags(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_qp *qp = dp_qp(test, f, IB_QPT_RC, f->pd);
	struct ib_atomic_wr wr = {
		.wr.opcode = IB_WR_ATOMIC_CMP_AND_SWP,
		.remote_addr = f->dst.dma,
	};
	const struct ib_send_wr *bad;

	KUNIT_ASSERT_EQ(test, dp_connect(f, qp, f->b->qp_num,
					 IB_ACCESS_REMOTE_WRITE |
					 IB_ACCESS_REMOTE_READ |
					 IB_ACCESS_REMOTE_ATOMIC, 7), 0);
	KUNIT_EXPECT_EQ(test, to_rsim_qp(qp)->state, IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, ib_post_send(qp, &wr.wr, &bad), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, bad, &wr.wr);
}

static struct kunit_case rsim_atomic_test_cases[] = {
	KUNIT_CASE_PARAM(rsim_atomic_test_remote, at_gen_params),
	KUNIT_CASE(rsim_atomic_test_cm_access_flags),
	RSIM_KUNIT_NO_LEFTOVERS,
	{}
};

static struct kunit_suite rsim_atomic_test_suite = {
	.name = "rdmasim_atomic",
	.suite_init = rsim_kunit_suite_init,
	.test_cases = rsim_atomic_test_cases,
};

kunit_test_suite(rsim_atomic_test_suite);
