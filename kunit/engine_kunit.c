// SPDX-License-Identifier: GPL-2.0-only
/*
 * Suite rdmasim_engine: the send queue's ownership protocol (dp.c) and
 * what a caller can do to QPs that are not its own. One case per defect
 * the review of issue 20 found, each failing on the engine before its
 * fix: an owner that gives the queue up while it still holds the QP's
 * scratch lists, completions that outlive their QP, a stranger's QP
 * that wakes (and spends the RNR retries of) a requester it is not the
 * responder of, and post_srq_recv running other QPs' queues.
 */

#include <linux/delay.h>

#include "dp_helpers.h"

/* references an owner still held as it gave a send queue up */
static atomic_t engine_leave_held = ATOMIC_INIT(0);
/* give-ups seen */
static atomic_t engine_leaves = ATOMIC_INIT(0);

/* under the QP's lock, as the owner gives the queue up */
static void engine_leave_hook(struct rsim_qp *qp)
{
	struct rsim_dev *rsim = to_rsim_dev(qp->ibqp.device);
	u32 nl = max(qp->sq.max_sge, 1U);
	u32 i;

	atomic_inc(&engine_leaves);
	for (i = 0; i < nl + rsim->cfg.limits.max_recv_sge; i++)
		if (qp->lrefs[i].mr)
			atomic_inc(&engine_leave_held);
}

static void engine_leave_hook_clear(void *rsim)
{
	((struct rsim_dev *)rsim)->dp_leave_hook = NULL;
}

/*
 * Defect 1: the owner completes a WR, gives the queue up, and only then
 * drops the MR references in the QP's scratch lists; a new owner (a
 * second poster, the worker) gathers into those lists meanwhile and then
 * copies through entries the old owner cleared, to raw DMA addresses.
 * Here SENDs between two registered MRs run, and at every give-up the
 * scratch lists (the gather list and the responder's scatter list) must
 * hold no reference.
 */
static void rsim_engine_test_give_up_holds_nothing(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_mr *smr = rsim_kunit_mr(test, f->pd, IB_MR_TYPE_MEM_REG, 4);
	struct ib_mr *dmr = rsim_kunit_mr(test, f->pd, IB_MR_TYPE_MEM_REG, 4);
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct ib_wc wc[2];
	int err, i;

	KUNIT_ASSERT_EQ(test, dp_reg(test, f, f->a, smr, &f->src, 0, DP_BUF,
				     0, true), 0);
	KUNIT_ASSERT_EQ(test, dp_wait(f->cq, wc, 1), 1);
	KUNIT_ASSERT_EQ(test, dp_reg(test, f, f->b, dmr, &f->dst, 0, DP_BUF,
				     IB_ACCESS_LOCAL_WRITE, true), 0);
	KUNIT_ASSERT_EQ(test, dp_wait(f->cq, wc, 1), 1);

	err = kunit_add_action_or_reset(test, engine_leave_hook_clear, f->rsim);
	KUNIT_ASSERT_EQ(test, err, 0);
	atomic_set(&engine_leave_held, 0);
	atomic_set(&engine_leaves, 0);
	f->rsim->dp_leave_hook = engine_leave_hook;
	for (i = 0; i < 8; i++) {
		KUNIT_ASSERT_EQ(test, dp_post_recv(f->b, i, dmr->iova,
						   DP_BUF, dmr->lkey), 0);
		wr.wr_id = i;
		KUNIT_ASSERT_EQ(test, dp_post(f->a, &wr, smr->iova,
					      PAGE_SIZE + i, smr->lkey), 0);
		KUNIT_ASSERT_EQ(test, dp_wait(f->cq, wc, 2), 2);
		KUNIT_EXPECT_EQ(test, wc[0].status, IB_WC_SUCCESS);
		KUNIT_EXPECT_EQ(test, wc[1].status, IB_WC_SUCCESS);
	}
	f->rsim->dp_leave_hook = NULL;
	KUNIT_EXPECT_GE(test, atomic_read(&engine_leaves), 8);
	KUNIT_EXPECT_EQ(test, atomic_read(&engine_leave_held), 0);
}

/* wait (at most DP_WAIT_MS) until @cq holds @n completions */
static bool engine_cq_holds(struct ib_cq *cq, u32 n)
{
	struct rsim_cq *rcq = to_rsim_cq(cq);
	unsigned long end = jiffies + msecs_to_jiffies(DP_WAIT_MS);

	while (READ_ONCE(rcq->count) != n) {
		if (time_after(jiffies, end))
			return false;
		usleep_range(500, 1000);
	}
	return true;
}

/*
 * Defect 2: destroy_qp left the QP's completions in its CQs, and a poll
 * after it returned completions whose wc->qp was freed (the core reads
 * wc->qp->qp_num: a use-after-free, and to userspace 4 bytes of freed
 * memory). Eight SENDs complete on both sides, unpolled; the responder
 * is destroyed; the CQ then holds the requester's eight only.
 */
static void rsim_engine_test_destroy_cleans_cq(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct ib_wc wc[16];
	int i, n;

	for (i = 0; i < 8; i++) {
		KUNIT_ASSERT_EQ(test, dp_post_recv(f->b, 100 + i, f->dst.dma,
						   64, f->pd->local_dma_lkey),
				0);
		wr.wr_id = i;
		KUNIT_ASSERT_EQ(test, dp_post(f->a, &wr, f->src.dma, 64,
					      f->pd->local_dma_lkey), 0);
	}
	KUNIT_ASSERT_TRUE_MSG(test, engine_cq_holds(f->cq, 16),
			      "16 completions never arrived (%u)",
			      READ_ONCE(to_rsim_cq(f->cq)->count));
	kunit_release_action(test, dp_qp_destroy, f->b);
	n = dp_poll(f, wc, ARRAY_SIZE(wc));
	KUNIT_EXPECT_EQ(test, n, 8);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_PTR_EQ(test, wc[i].qp, f->a);
		KUNIT_EXPECT_EQ(test, wc[i].wr_id, i);
	}
}

/*
 * Defect 4: a wake-up of an RNR-waiting requester came from any QP that
 * named it as its destination, and each counted as an RNR retry, so a
 * stranger's QP spent the victim's rnr_retry in microseconds (the SEND
 * completed with IB_WC_RNR_RETRY_EXC_ERR and the QP went to ERR). The
 * requester waits on its responder with six retries of its 655 ms timer;
 * a third QP connected to it posts eight receive WRs and goes RTS -> SQD
 * -> RTS twenty times: nothing completes, and the SEND succeeds once its
 * own responder posts a receive WR.
 */
static void rsim_engine_test_stranger_cannot_wake(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture_type(test, IB_QPT_RC, DP_ACCESS, 6);
	struct ib_qp *c = dp_qp(test, f, IB_QPT_RC, f->pd);
	struct ib_qp_attr qa = { .min_rnr_timer = 0 };	/* 655.36 ms */
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
		.wr_id = 1,
	};
	enum ib_qp_state st;
	struct ib_wc wc[2];
	int i;

	KUNIT_ASSERT_EQ(test, ib_modify_qp(f->b, &qa, IB_QP_MIN_RNR_TIMER), 0);
	KUNIT_ASSERT_EQ(test, dp_connect(f, c, f->a->qp_num, DP_ACCESS, 7), 0);
	KUNIT_ASSERT_EQ(test, dp_post(f->a, &wr, f->src.dma, 64,
				      f->pd->local_dma_lkey), 0);
	KUNIT_ASSERT_EQ(test, to_rsim_qp(f->a)->owner, RSIM_SQ_RNR);
	for (i = 0; i < 20; i++) {
		if (i < 8)
			KUNIT_ASSERT_EQ(test,
					dp_post_recv(c, 200 + i, f->dst.dma, 64,
						     f->pd->local_dma_lkey), 0);
		qa.qp_state = IB_QPS_SQD;
		KUNIT_ASSERT_EQ(test, ib_modify_qp(c, &qa, IB_QP_STATE), 0);
		qa.qp_state = IB_QPS_RTS;
		KUNIT_ASSERT_EQ(test, ib_modify_qp(c, &qa, IB_QP_STATE), 0);
	}
	KUNIT_EXPECT_EQ(test, dp_poll(f, wc, 2), 0);
	st = READ_ONCE(to_rsim_qp(f->a)->state);
	KUNIT_EXPECT_EQ(test, st, IB_QPS_RTS);

	KUNIT_ASSERT_EQ(test, dp_post_recv(f->b, 2, f->dst.dma, 64,
					   f->pd->local_dma_lkey), 0);
	KUNIT_ASSERT_EQ(test, dp_wait(f->cq, wc, 2), 2);
	for (i = 0; i < 2; i++)
		KUNIT_EXPECT_EQ(test, wc[i].status, IB_WC_SUCCESS);
}

static void engine_srq_destroy(void *srq)
{
	ib_destroy_srq(srq);
}

/*
 * Defect 5: post_srq_recv walked every QP of the device and ran each
 * waiting requester's queue inside the caller's call (O(QPs) x 64 KiB of
 * copying, possibly in softirq context). A requester waits (RNR) on a
 * responder of an SRQ; a receive WR posted to the SRQ with BH off (so
 * that the worker cannot run meanwhile) must return with nothing
 * executed: the requester's retry is the worker's, and completes after.
 */
static void rsim_engine_test_srq_post_runs_nothing(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_srq_init_attr sa = {
		.attr = { .max_wr = 4, .max_sge = 1 },
		.srq_type = IB_SRQT_BASIC,
	};
	struct ib_qp_init_attr qa = {
		.qp_type = IB_QPT_RC,
		.send_cq = f->cq,
		.recv_cq = f->cq,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
		.port_num = 1,
	};
	struct ib_send_wr send = {
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
		.wr_id = 1,
	};
	struct ib_sge sge = {
		.addr = f->dst.dma,
		.length = 64,
		.lkey = f->pd->local_dma_lkey,
	};
	struct ib_recv_wr rwr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1 };
	struct ib_srq *srq;
	struct ib_qp *a, *b;
	struct ib_wc wc[2];
	u32 held;
	int err, i;

	srq = ib_create_srq(f->pd, &sa);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, srq);
	err = kunit_add_action_or_reset(test, engine_srq_destroy, srq);
	KUNIT_ASSERT_EQ(test, err, 0);
	qa.srq = srq;
	b = ib_create_qp(f->pd, &qa);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, b);
	err = kunit_add_action_or_reset(test, dp_qp_destroy, b);
	KUNIT_ASSERT_EQ(test, err, 0);
	a = dp_qp(test, f, IB_QPT_RC, f->pd);
	KUNIT_ASSERT_EQ(test, dp_connect(f, a, b->qp_num, DP_ACCESS, 7), 0);
	KUNIT_ASSERT_EQ(test, dp_connect(f, b, a->qp_num, DP_ACCESS, 7), 0);

	KUNIT_ASSERT_EQ(test, dp_post(a, &send, f->src.dma, 64,
				      f->pd->local_dma_lkey), 0);
	KUNIT_ASSERT_EQ(test, to_rsim_qp(a)->owner, RSIM_SQ_RNR);
	local_bh_disable();
	err = ib_post_srq_recv(srq, &rwr, NULL);
	held = READ_ONCE(to_rsim_cq(f->cq)->count);
	local_bh_enable();
	KUNIT_ASSERT_EQ(test, err, 0);
	KUNIT_EXPECT_EQ(test, held, 0);
	KUNIT_ASSERT_EQ(test, dp_wait(f->cq, wc, 2), 2);
	for (i = 0; i < 2; i++)
		KUNIT_EXPECT_EQ(test, wc[i].status, IB_WC_SUCCESS);
}

static struct kunit_case rsim_engine_test_cases[] = {
	KUNIT_CASE(rsim_engine_test_give_up_holds_nothing),
	KUNIT_CASE(rsim_engine_test_destroy_cleans_cq),
	KUNIT_CASE(rsim_engine_test_stranger_cannot_wake),
	KUNIT_CASE(rsim_engine_test_srq_post_runs_nothing),
	RSIM_KUNIT_NO_LEFTOVERS,
	{}
};

static struct kunit_suite rsim_engine_test_suite = {
	.name = "rdmasim_engine",
	.suite_init = rsim_kunit_suite_init,
	.test_cases = rsim_engine_test_cases,
};

kunit_test_suite(rsim_engine_test_suite);
