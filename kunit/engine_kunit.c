// SPDX-License-Identifier: GPL-2.0-only
/*
 * Suite rdmasim_engine: the send queue's ownership protocol (dp.c) and
 * what a caller can do to QPs that are not its own. One case per defect
 * the review of issue 20 found, each failing on the engine before its
 * fix: an owner that gives the queue up while it still holds the QP's
 * scratch lists, completions that outlive their QP, a stranger's QP
 * that wakes (and spends the RNR retries of) a requester it is not the
 * responder of, post_srq_recv running other QPs' queues, a responder
 * reset under a requester still taking its receive WRs, a reset that let
 * a modify and a post in while it waited for the owner, and handlers of
 * other objects (or nested ones) running inside a caller's verb. And
 * one of issue 40's review: a responder being destroyed that a requester
 * put back on its SRQ's waiters.
 */

#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/prandom.h>
#include <linux/sched/task.h>

#include "dp_helpers.h"

/* references an owner still held as it gave a send queue up */
static atomic_t engine_leave_held = ATOMIC_INIT(0);
/* give-ups seen */
static atomic_t engine_leaves = ATOMIC_INIT(0);

/* under the QP's lock, as the owner gives the queue up */
static void engine_leave_hook(struct rsim_qp *qp)
{
	u32 nl = max(qp->sq.max_sge, 1U);
	u32 i;

	atomic_inc(&engine_leaves);
	for (i = 0; i < nl + RSIM_RECV_SGE_CEIL; i++)
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

/* the receive WR the hook posts, and what the post returned */
static struct dp_fixture *engine_wake_f;
static int engine_wake_err;

/*
 * One shot, on the requester's context after its WR executed: a negative
 * status is the engine's own, the RNR wait it is about to enter. Its
 * responder gets a receive WR now, in the window between the take that
 * found none and the park.
 */
static void engine_wake_hook(struct rsim_qp *qp, int status)
{
	struct dp_fixture *f = engine_wake_f;

	if (status >= 0)
		return;
	to_rsim_dev(qp->ibqp.device)->dp_test_hook = NULL;
	engine_wake_err = dp_post_recv(f->b, 2, f->dst.dma, 64,
				       f->pd->local_dma_lkey);
}

static void engine_wake_hook_clear(void *rsim)
{
	((struct rsim_dev *)rsim)->dp_test_hook = NULL;
}

/*
 * A receive WR posted while its requester runs, after the take that
 * found the queue empty and before the requester parks on the RNR NAK:
 * the wake-up finds a requester that is not parked. With rnr_retry 7
 * nothing else retries the SEND, which once waited for ever; the
 * requester remembers the wake-up (rnr_wake) and retries at once.
 */
static void rsim_engine_test_rnr_wake_while_running(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture_type(test, IB_QPT_RC, DP_ACCESS, 7);
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
		.wr_id = 1,
	};
	struct ib_wc wc[2];
	int err, i;

	engine_wake_f = f;
	engine_wake_err = -EINPROGRESS;
	err = kunit_add_action_or_reset(test, engine_wake_hook_clear, f->rsim);
	KUNIT_ASSERT_EQ(test, err, 0);
	f->rsim->dp_test_hook = engine_wake_hook;
	KUNIT_ASSERT_EQ(test, dp_post(f->a, &wr, f->src.dma, 64,
				      f->pd->local_dma_lkey), 0);
	KUNIT_EXPECT_EQ(test, engine_wake_err, 0);
	KUNIT_ASSERT_EQ(test, dp_wait(f->cq, wc, 2), 2);
	for (i = 0; i < 2; i++)
		KUNIT_EXPECT_EQ(test, wc[i].status, IB_WC_SUCCESS);
}

static void engine_srq_destroy(void *srq)
{
	ib_destroy_srq(srq);
}

/*
 * An SRQ (4 WRs), a responder @b on it and a requester @a, connected to
 * each other with @rnr_retry; all destroyed with the test. Returns the SRQ.
 */
static struct ib_srq *engine_srq_pair(struct kunit *test, struct dp_fixture *f,
				      u8 rnr_retry, struct ib_qp **a,
				      struct ib_qp **b)
{
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
	struct ib_srq *srq;
	int err;

	srq = ib_create_srq(f->pd, &sa);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, srq);
	err = kunit_add_action_or_reset(test, engine_srq_destroy, srq);
	KUNIT_ASSERT_EQ(test, err, 0);
	qa.srq = srq;
	*b = ib_create_qp(f->pd, &qa);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, *b);
	err = kunit_add_action_or_reset(test, dp_qp_destroy, *b);
	KUNIT_ASSERT_EQ(test, err, 0);
	*a = dp_qp(test, f, IB_QPT_RC, f->pd);
	KUNIT_ASSERT_EQ(test, dp_connect(f, *a, (*b)->qp_num, DP_ACCESS,
					 rnr_retry), 0);
	KUNIT_ASSERT_EQ(test, dp_connect(f, *b, (*a)->qp_num, DP_ACCESS,
					 rnr_retry), 0);
	return srq;
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
	struct ib_send_wr send = {
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
		.wr_id = 1,
	};
	struct ib_srq *srq;
	struct ib_qp *a, *b;
	struct ib_wc wc[2];
	u32 held;
	int err, i;

	srq = engine_srq_pair(test, f, 7, &a, &b);

	KUNIT_ASSERT_EQ(test, dp_post(a, &send, f->src.dma, 64,
				      f->pd->local_dma_lkey), 0);
	KUNIT_ASSERT_EQ(test, to_rsim_qp(a)->owner, RSIM_SQ_RNR);
	local_bh_disable();
	err = dp_post_srq_recv(srq, 2, f->dst.dma, 64,
			       f->pd->local_dma_lkey);
	held = READ_ONCE(to_rsim_cq(f->cq)->count);
	local_bh_enable();
	KUNIT_ASSERT_EQ(test, err, 0);
	KUNIT_EXPECT_EQ(test, held, 0);
	KUNIT_ASSERT_EQ(test, dp_wait(f->cq, wc, 2), 2);
	for (i = 0; i < 2; i++)
		KUNIT_EXPECT_EQ(test, wc[i].status, IB_WC_SUCCESS);
}

/* the responder the peer hook sent back to RESET and INIT, and how */
static struct ib_qp *engine_reset_peer;
static int engine_reset_err = -EINVAL;

/*
 * One shot, on the requester's context (an inline run in the test's
 * thread: it may sleep) between finding the responder and taking a
 * receive WR there: the responder goes RESET -> INIT, as a concurrent
 * modify_qp would take it.
 */
static void engine_peer_reset_hook(struct rsim_qp *qp, struct rsim_qp *peer)
{
	struct ib_qp_attr a = { .qp_state = IB_QPS_RESET };

	if (&peer->ibqp != engine_reset_peer)
		return;
	to_rsim_dev(qp->ibqp.device)->dp_peer_hook = NULL;
	engine_reset_err = ib_modify_qp(&peer->ibqp, &a, IB_QP_STATE);
	if (engine_reset_err)
		return;
	a.qp_state = IB_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = DP_ACCESS;
	engine_reset_err = ib_modify_qp(&peer->ibqp, &a, IB_QP_STATE |
					IB_QP_PKEY_INDEX | IB_QP_PORT |
					IB_QP_ACCESS_FLAGS);
}

static void engine_peer_hook_clear(void *rsim)
{
	((struct rsim_dev *)rsim)->dp_peer_hook = NULL;
}

/*
 * Defect 8: a responder in RESET or INIT still received (the engine
 * refused only ERR), so an SRQ's receive WR was taken by a QP that had
 * been reset meanwhile, and completed on its CQ after the reset had
 * cleaned it. The responder of an SRQ holding one receive WR goes RESET
 * -> INIT between the engine's lookup of it and the take: the receive
 * WR must stay in the SRQ, nothing complete on the responder's CQ, and
 * the SEND (rnr_retry 0) fail with IB_WC_RNR_RETRY_EXC_ERR.
 */
static void rsim_engine_test_reset_responder_takes_nothing(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_send_wr send = {
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
		.wr_id = 1,
	};
	struct ib_srq *srq;
	struct ib_qp *a, *b;
	struct ib_wc wc[2];
	u32 left;
	int err;

	srq = engine_srq_pair(test, f, 0, &a, &b);
	KUNIT_ASSERT_EQ(test, dp_post_srq_recv(srq, 2, f->dst.dma, 64,
					       f->pd->local_dma_lkey), 0);

	engine_reset_peer = b;
	engine_reset_err = -EINVAL;
	err = kunit_add_action_or_reset(test, engine_peer_hook_clear, f->rsim);
	KUNIT_ASSERT_EQ(test, err, 0);
	f->rsim->dp_peer_hook = engine_peer_reset_hook;
	KUNIT_ASSERT_EQ(test, dp_post(a, &send, f->src.dma, 64,
				      f->pd->local_dma_lkey), 0);
	KUNIT_ASSERT_EQ(test, dp_wait(f->cq, wc, 1), 1);
	KUNIT_EXPECT_EQ(test, engine_reset_err, 0);
	KUNIT_EXPECT_PTR_EQ(test, wc[0].qp, a);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, 1);
	KUNIT_EXPECT_EQ(test, wc[0].status, IB_WC_RNR_RETRY_EXC_ERR);
	KUNIT_EXPECT_EQ(test, dp_poll(f, wc, 2), 0);
	left = READ_ONCE(to_rsim_srq(srq)->rq.count);
	KUNIT_EXPECT_EQ(test, left, 1);
}

/* the destroy the peer hook starts, and whether it has returned */
struct engine_dying {
	struct ib_qp *victim;
	struct completion done;
	struct task_struct *task;
	bool dying_seen;
};

static struct engine_dying *engine_dying;

static int engine_dying_destroy_fn(void *arg)
{
	struct engine_dying *d = arg;

	ib_destroy_qp(d->victim);
	complete(&d->done);
	return 0;
}

/*
 * One shot, on the requester's context between finding the responder
 * and taking a receive WR there: destroy_qp of the responder starts in
 * a thread of its own and runs until it waits for this requester's
 * reference (its @dying set, its SRQ wait undone); only then does the
 * requester go on to the SRQ, which is empty.
 */
static void engine_dying_hook(struct rsim_qp *qp, struct rsim_qp *peer)
{
	struct engine_dying *d = engine_dying;
	int i;

	if (&peer->ibqp != d->victim)
		return;
	to_rsim_dev(qp->ibqp.device)->dp_peer_hook = NULL;
	d->task = kthread_run(engine_dying_destroy_fn, d, "dying_destroy");
	if (IS_ERR(d->task))
		return;
	for (i = 0; i < 2000 && !READ_ONCE(peer->dying); i++)
		usleep_range(500, 1000);
	/* and past the SRQ's unwait, which follows under no lock of ours */
	msleep(20);
	d->dying_seen = READ_ONCE(peer->dying);
}

/*
 * Issue 40, item 1: a requester that found its responder before
 * destroy_qp began put the dying QP on the SRQ's RNR waiters after
 * destroy_qp had taken it off (rsim_srq_unwait()); the QP was freed with
 * its node on the list, and the next post_srq_recv wrote to freed memory
 * (list_del_init, queue_work). Here the responder's destroy runs between
 * the requester's lookup and its take from the empty SRQ: once the
 * destroy has returned, the SRQ has no waiter, a receive WR posted to it
 * stays there (no requester woken, nothing taken), and the SEND is not
 * completed as received.
 */
static void rsim_engine_test_dying_responder_waits_nowhere(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_send_wr send = {
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
		.wr_id = 1,
	};
	struct engine_dying *d;
	struct ib_srq *srq;
	struct ib_qp *a, *b;
	struct rsim_srq *rsrq;
	struct ib_wc wc;
	u32 left;
	int err;

	srq = engine_srq_pair(test, f, 7, &a, &b);
	rsrq = to_rsim_srq(srq);
	d = kunit_kzalloc(test, sizeof(*d), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, d);
	d->victim = b;
	init_completion(&d->done);
	engine_dying = d;
	/* the hook's thread destroys @b, not the test's end */
	kunit_remove_action(test, dp_qp_destroy, b);
	err = kunit_add_action_or_reset(test, engine_peer_hook_clear, f->rsim);
	KUNIT_ASSERT_EQ(test, err, 0);
	f->rsim->dp_peer_hook = engine_dying_hook;

	KUNIT_ASSERT_EQ(test, dp_post(a, &send, f->src.dma, 64,
				      f->pd->local_dma_lkey), 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(d->task));
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&d->done, 10 * HZ));
	KUNIT_EXPECT_TRUE(test, d->dying_seen);
	spin_lock_irq(&rsrq->lock);
	err = list_empty(&rsrq->waiters);
	spin_unlock_irq(&rsrq->lock);
	/* before the fix: the freed QP's node, and the post below wrote it */
	KUNIT_ASSERT_TRUE(test, err);
	KUNIT_ASSERT_EQ(test, dp_post_srq_recv(srq, 2, f->dst.dma, 64,
					       f->pd->local_dma_lkey), 0);
	msleep(20);
	left = READ_ONCE(rsrq->rq.count);
	KUNIT_EXPECT_EQ(test, left, 1);
	/* the SEND found nobody: at most its retries' end, never a receive */
	if (dp_poll(f, &wc, 1) == 1) {
		KUNIT_EXPECT_PTR_EQ(test, wc.qp, a);
		KUNIT_EXPECT_EQ(test, wc.status, IB_WC_RETRY_EXC_ERR);
	}
}

/* defect 3's actors: a poster held inside the engine, a reset, a modify */
struct engine_r3 {
	struct dp_fixture *f;
	struct completion running;	/* the poster's run is in the hook */
	struct completion release;	/* ... and may go on */
	struct completion posted, reset, rts;
	int post_err, reset_err, rts_err;
};

static struct engine_r3 *engine_r3;

/* one shot: the owner, after executing its WR, waits to be released */
static void engine_r3_hook(struct rsim_qp *qp, int status)
{
	to_rsim_dev(qp->ibqp.device)->dp_test_hook = NULL;
	complete(&engine_r3->running);
	wait_for_completion_timeout(&engine_r3->release, 10 * HZ);
}

static void engine_r3_hook_clear(void *rsim)
{
	((struct rsim_dev *)rsim)->dp_test_hook = NULL;
	complete(&engine_r3->release);
}

static int engine_r3_post_fn(void *arg)
{
	struct engine_r3 *r = arg;
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
		.wr_id = 1,
	};

	r->post_err = dp_post(r->f->a, &wr, r->f->src.dma, 64,
			      r->f->pd->local_dma_lkey);
	complete(&r->posted);
	return 0;
}

static int engine_r3_reset_fn(void *arg)
{
	struct engine_r3 *r = arg;
	struct ib_qp_attr a = { .qp_state = IB_QPS_RESET };

	r->reset_err = ib_modify_qp(r->f->a, &a, IB_QP_STATE);
	complete(&r->reset);
	return 0;
}

static int engine_r3_rts_fn(void *arg)
{
	struct engine_r3 *r = arg;

	r->rts_err = dp_connect(r->f, r->f->a, r->f->b->qp_num, DP_ACCESS, 7);
	complete(&r->rts);
	return 0;
}

/* the thread's completion, or false after five seconds */
static bool engine_r3_wait(struct completion *c)
{
	return wait_for_completion_timeout(c, 5 * HZ);
}

/*
 * Defect 3: modify_qp(RESET) set the state and dropped the QP's lock to
 * wait for the send queue's owner; meanwhile a second modify_qp took the
 * QP back to RTS and a post claimed the queue, and the reset then zeroed
 * the queue and made it nobody's under a live owner (two owners, and
 * WARN_ON_ONCE(!wq->count)). Here the owner is held inside the engine
 * (the test hook, after its WR executed) while a reset waits for it: a
 * modify to RTS must wait for the reset, a post must be refused, and the
 * owner must still own the queue; released, the reset finishes, the
 * modify follows, and the QP works with one owner and an empty queue.
 */
static void rsim_engine_test_reset_waits_alone(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct rsim_qp *qp = to_rsim_qp(f->a);
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
		.wr_id = 9,
	};
	enum rsim_sq_owner owner;
	enum ib_qp_state state;
	struct engine_r3 *r;
	struct ib_wc wc;
	int i, err, n;

	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	r->f = f;
	init_completion(&r->running);
	init_completion(&r->release);
	init_completion(&r->posted);
	init_completion(&r->reset);
	init_completion(&r->rts);
	engine_r3 = r;
	KUNIT_ASSERT_EQ(test, dp_post_recv(f->b, 100, f->dst.dma, 64,
					   f->pd->local_dma_lkey), 0);
	err = kunit_add_action_or_reset(test, engine_r3_hook_clear, f->rsim);
	KUNIT_ASSERT_EQ(test, err, 0);
	f->rsim->dp_test_hook = engine_r3_hook;

	KUNIT_ASSERT_FALSE(test, IS_ERR(kthread_run(engine_r3_post_fn, r,
						    "r3_post")));
	KUNIT_ASSERT_TRUE(test, engine_r3_wait(&r->running));
	KUNIT_ASSERT_FALSE(test, IS_ERR(kthread_run(engine_r3_reset_fn, r,
						    "r3_reset")));
	for (i = 0; i < 500 && !READ_ONCE(qp->stopping); i++)
		usleep_range(1000, 2000);
	KUNIT_ASSERT_TRUE(test, READ_ONCE(qp->stopping));
	KUNIT_ASSERT_FALSE(test, IS_ERR(kthread_run(engine_r3_rts_fn, r,
						    "r3_rts")));
	msleep(50);
	/* the reset waits for the owner, and nothing else gets in */
	KUNIT_EXPECT_FALSE(test, completion_done(&r->reset));
	KUNIT_EXPECT_FALSE(test, completion_done(&r->rts));
	state = READ_ONCE(qp->state);
	KUNIT_EXPECT_EQ(test, state, IB_QPS_RESET);
	KUNIT_EXPECT_NE(test, dp_post(f->a, &wr, f->src.dma, 64,
				      f->pd->local_dma_lkey), 0);
	owner = READ_ONCE(qp->owner);
	KUNIT_EXPECT_EQ(test, owner, RSIM_SQ_RUNNING);

	complete(&r->release);
	KUNIT_ASSERT_TRUE(test, engine_r3_wait(&r->posted));
	KUNIT_ASSERT_TRUE(test, engine_r3_wait(&r->reset));
	KUNIT_ASSERT_TRUE(test, engine_r3_wait(&r->rts));
	KUNIT_EXPECT_EQ(test, r->post_err, 0);
	KUNIT_EXPECT_EQ(test, r->reset_err, 0);
	KUNIT_EXPECT_EQ(test, r->rts_err, 0);
	state = READ_ONCE(qp->state);
	owner = READ_ONCE(qp->owner);
	KUNIT_EXPECT_EQ(test, state, IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, owner, RSIM_SQ_IDLE);
	KUNIT_EXPECT_EQ(test, qp->sq.count, 0);

	/* one owner again: a SEND goes through */
	KUNIT_ASSERT_EQ(test, dp_post_recv(f->b, 101, f->dst.dma, 64,
					   f->pd->local_dma_lkey), 0);
	KUNIT_ASSERT_EQ(test, dp_post(f->a, &wr, f->src.dma, 64,
				      f->pd->local_dma_lkey), 0);
	for (i = 0; i < 4; i++) {
		n = dp_wait(f->cq, &wc, 1);
		KUNIT_ASSERT_EQ(test, n, 1);
		if (wc.qp == f->a)
			break;
	}
	KUNIT_EXPECT_EQ(test, wc.wr_id, 9);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
}

/* what a handler saw of where it ran */
struct engine_handler {
	struct task_struct *poster;	/* the task inside a verb, or NULL */
	struct ib_qp *qp;		/* where a handler posts, or NULL */
	atomic_t calls;
	atomic_t in_verb;		/* calls made inside the verb */
	atomic_t nested;		/* calls made inside another one */
	int posts;			/* posts a handler still makes */
	struct completion done;
};

static DEFINE_PER_CPU(int, engine_handler_depth);

static void engine_handler_enter(struct engine_handler *h)
{
	atomic_inc(&h->calls);
	if (READ_ONCE(h->poster) == current)
		atomic_inc(&h->in_verb);
	if (this_cpu_inc_return(engine_handler_depth) > 1)
		atomic_inc(&h->nested);
}

static void engine_handler_exit(struct engine_handler *h)
{
	this_cpu_dec(engine_handler_depth);
	complete(&h->done);
}

/* wait (at most DP_WAIT_MS) for a call of @h */
static bool engine_handler_ran(struct engine_handler *h)
{
	unsigned long t = msecs_to_jiffies(DP_WAIT_MS);

	return wait_for_completion_timeout(&h->done, t) > 0;
}

static void engine_comp(struct ib_cq *cq, void *ctx)
{
	struct engine_handler *h = ctx;
	struct ib_send_wr wr = { .opcode = IB_WR_SEND };

	engine_handler_enter(h);
	ib_req_notify_cq(cq, IB_CQ_NEXT_COMP);
	/* a ULP's handler that posts again: to a QP in the error state */
	if (h->qp && h->posts > 0) {
		h->posts--;
		dp_post(h->qp, &wr, 0, 0, 0);
	}
	engine_handler_exit(h);
}

static void engine_qp_event(struct ib_event *ev, void *ctx)
{
	struct engine_handler *h = ctx;

	if (ev->event != IB_EVENT_QP_ACCESS_ERR)
		return;
	engine_handler_enter(h);
	engine_handler_exit(h);
}

static void engine_cq_destroy(void *cq)
{
	ib_destroy_cq(cq);
}

/* a CQ of 64 entries whose handler is engine_comp(), armed */
static struct ib_cq *engine_cq(struct kunit *test, struct dp_fixture *f,
			       struct engine_handler *h)
{
	struct ib_cq_init_attr ca = { .cqe = 64 };
	struct ib_cq *cq;

	init_completion(&h->done);
	cq = ib_create_cq(&f->rsim->ibdev, engine_comp, NULL, h, &ca);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cq);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							engine_cq_destroy, cq),
			0);
	KUNIT_ASSERT_GE(test, ib_req_notify_cq(cq, IB_CQ_NEXT_COMP), 0);
	return cq;
}

/*
 * an RC QP on @scq and @rcq whose events go to @handler with @ctx (or
 * nowhere), destroyed when the test ends
 */
static struct ib_qp *engine_qp(struct kunit *test, struct dp_fixture *f,
			       struct ib_cq *scq, struct ib_cq *rcq,
			       void (*handler)(struct ib_event *, void *),
			       void *ctx)
{
	struct ib_qp_init_attr qa = {
		.qp_type = IB_QPT_RC,
		.send_cq = scq,
		.recv_cq = rcq,
		.cap = { .max_send_wr = 32, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.port_num = 1,
		.event_handler = handler,
		.qp_context = ctx,
	};
	struct ib_qp *qp = ib_create_qp(f->pd, &qa);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, qp);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, dp_qp_destroy,
							qp), 0);
	return qp;
}

/*
 * Defect 6: a post ran the responder's completion handler and raised the
 * responder's affiliated error inside the poster's call: a kernel ULP's
 * handlers inside an unprivileged process's system call. A SEND lands on
 * a responder whose receive CQ has a handler, then a WRITE with a bad
 * rkey puts the responder in the error state: neither handler may run
 * inside the requester's post, and both run (on the device's context).
 */
static void rsim_engine_test_others_handlers_elsewhere(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct engine_handler *cqh = kunit_kzalloc(test, sizeof(*cqh),
						   GFP_KERNEL);
	struct engine_handler *qph = kunit_kzalloc(test, sizeof(*qph),
						   GFP_KERNEL);
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct ib_rdma_wr bad = {
		.wr.opcode = IB_WR_RDMA_WRITE,
		.wr.send_flags = IB_SEND_SIGNALED,
		.wr.wr_id = 2,
		.remote_addr = 0x1000,
		.rkey = 0x1234500,	/* no such MR */
	};
	struct ib_cq *rcq;
	struct ib_qp *a, *r;
	struct ib_wc wc[2];

	KUNIT_ASSERT_NOT_NULL(test, cqh);
	KUNIT_ASSERT_NOT_NULL(test, qph);
	init_completion(&qph->done);
	rcq = engine_cq(test, f, cqh);
	a = dp_qp(test, f, IB_QPT_RC, f->pd);
	r = engine_qp(test, f, f->cq, rcq, engine_qp_event, qph);
	KUNIT_ASSERT_EQ(test, dp_connect(f, a, r->qp_num, DP_ACCESS, 7), 0);
	KUNIT_ASSERT_EQ(test, dp_connect(f, r, a->qp_num, DP_ACCESS, 7), 0);
	KUNIT_ASSERT_EQ(test, dp_post_recv(r, 1, f->dst.dma, 64,
					   f->pd->local_dma_lkey), 0);

	WRITE_ONCE(cqh->poster, current);
	KUNIT_ASSERT_EQ(test, dp_post(a, &wr, f->src.dma, 64,
				      f->pd->local_dma_lkey), 0);
	WRITE_ONCE(cqh->poster, NULL);
	KUNIT_ASSERT_EQ(test, dp_wait(f->cq, wc, 1), 1);
	KUNIT_EXPECT_EQ(test, wc[0].status, IB_WC_SUCCESS);
	KUNIT_EXPECT_TRUE(test, engine_handler_ran(cqh));
	KUNIT_EXPECT_EQ(test, atomic_read(&cqh->calls), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&cqh->in_verb), 0);

	WRITE_ONCE(qph->poster, current);
	KUNIT_ASSERT_EQ(test, dp_post(a, &bad.wr, f->src.dma, 64,
				      f->pd->local_dma_lkey), 0);
	WRITE_ONCE(qph->poster, NULL);
	KUNIT_ASSERT_EQ(test, dp_wait(f->cq, wc, 1), 1);
	KUNIT_EXPECT_EQ(test, wc[0].status, IB_WC_REM_ACCESS_ERR);
	KUNIT_EXPECT_TRUE(test, engine_handler_ran(qph));
	KUNIT_EXPECT_EQ(test, atomic_read(&qph->calls), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&qph->in_verb), 0);
}

/*
 * Defect 6: the flush of a post to a QP in the error state ran the
 * handler without the engine's depth marker, so a handler that re-arms
 * and posts again was entered again below itself, once per post (an
 * unbounded recursion on the kernel stack). Here twenty posts chain
 * through the handler: all complete, and no handler call is nested in
 * another.
 */
static void rsim_engine_test_handler_depth_bounded(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct engine_handler *h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);
	struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };
	struct ib_send_wr wr = { .opcode = IB_WR_SEND };
	struct ib_cq *cq;
	struct ib_qp *q;

	KUNIT_ASSERT_NOT_NULL(test, h);
	cq = engine_cq(test, f, h);
	q = engine_qp(test, f, cq, cq, NULL, NULL);
	KUNIT_ASSERT_EQ(test, ib_modify_qp(q, &qa, IB_QP_STATE), -EINVAL);
	KUNIT_ASSERT_EQ(test, dp_connect(f, q, q->qp_num, DP_ACCESS, 7), 0);
	KUNIT_ASSERT_EQ(test, ib_modify_qp(q, &qa, IB_QP_STATE), 0);
	h->qp = q;
	h->posts = 20;
	KUNIT_ASSERT_EQ(test, dp_post(q, &wr, 0, 0, 0), 0);
	KUNIT_EXPECT_TRUE_MSG(test, engine_cq_holds(cq, 21),
			      "21 flushed WRs never arrived (%u)",
			      READ_ONCE(to_rsim_cq(cq)->count));
	KUNIT_EXPECT_EQ(test, READ_ONCE(h->posts), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&h->nested), 0);
}

/* the device's transport retries so far (the worker's runs flushed) */
static u64 engine_ack_timeouts(struct rsim_dev *rsim)
{
	u64 n;

	flush_workqueue(rsim->dp_wq);
	spin_lock_bh(&rsim->stats_lock);
	n = rsim->dp.ack_timeouts;
	spin_unlock_bh(&rsim->stats_lock);
	return n;
}

/*
 * Defect 9: an RC request that no responder answers (here the QP the
 * requester names is connected to another) completed at once with
 * IB_WC_RETRY_EXC_ERR, although timeout and retry_cnt were set. It is
 * now sent again each time the (scaled) transport timer expires: nothing
 * completes at once, the error comes after retry_cnt (7) expiries, each
 * of timeout 14's 4.2 ms at least.
 */
static void rsim_engine_test_no_answer_retries(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_qp *lone = dp_qp(test, f, IB_QPT_RC, f->pd);
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	u64 before = engine_ack_timeouts(f->rsim);
	struct ib_wc wc;
	ktime_t t0;
	s64 ms;

	KUNIT_ASSERT_EQ(test, dp_connect(f, lone, f->b->qp_num, DP_ACCESS, 7),
			0);
	t0 = ktime_get();
	KUNIT_ASSERT_EQ(test, dp_post(lone, &wr, f->src.dma, 10,
				      f->pd->local_dma_lkey), 0);
	KUNIT_EXPECT_EQ(test, dp_poll(f, &wc, 1), 0);
	KUNIT_ASSERT_EQ(test, dp_wait(f->cq, &wc, 1), 1);
	ms = ktime_ms_delta(ktime_get(), t0);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_RETRY_EXC_ERR);
	KUNIT_EXPECT_GE(test, ms, 7 * 4);
	KUNIT_EXPECT_EQ(test, engine_ack_timeouts(f->rsim) - before, 7);
	KUNIT_EXPECT_EQ(test, to_rsim_qp(lone)->state, IB_QPS_ERR);
}

/*
 * Defect 9: RC ignored the P_Key. A responder whose P_Key index names an
 * invalid P_Key (entry 1: 0) drops the requester's packets as a P_Key
 * violation: the SEND ends with IB_WC_RETRY_EXC_ERR, its receive WR is
 * not taken, and the port counts the violations.
 */
static void rsim_engine_test_rc_pkey(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_qp *a = dp_qp(test, f, IB_QPT_RC, f->pd);
	struct ib_qp *b = dp_qp(test, f, IB_QPT_RC, f->pd);
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct ib_wc wc;
	u32 viol;

	KUNIT_ASSERT_EQ(test, dp_connect(f, a, b->qp_num, DP_ACCESS, 7), 0);
	KUNIT_ASSERT_EQ(test, dp_connect_pkey(f, b, a->qp_num, DP_ACCESS, 7,
					      1), 0);
	KUNIT_ASSERT_EQ(test, dp_post_recv(b, 5, f->dst.dma, 64,
					   f->pd->local_dma_lkey), 0);
	spin_lock_bh(&f->rsim->port.lock);
	viol = f->rsim->port.pkey_viol;
	spin_unlock_bh(&f->rsim->port.lock);

	KUNIT_ASSERT_EQ(test, dp_post(a, &wr, f->src.dma, 10,
				      f->pd->local_dma_lkey), 0);
	KUNIT_ASSERT_EQ(test, dp_wait(f->cq, &wc, 1), 1);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, a);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_RETRY_EXC_ERR);
	KUNIT_EXPECT_EQ(test, to_rsim_qp(b)->rq.count, 1);
	spin_lock_bh(&f->rsim->port.lock);
	KUNIT_EXPECT_EQ(test, f->rsim->port.pkey_viol - viol, 8);
	spin_unlock_bh(&f->rsim->port.lock);
}

static void engine_sqd_event(struct ib_event *ev, void *ctx)
{
	if (ev->event == IB_EVENT_SQ_DRAINED)
		complete(ctx);
}

/*
 * Defect 9: SQD with en_sqd_async_notify raised no IB_EVENT_SQ_DRAINED.
 * A QP with nothing in execution gets it at once; SQD -> RTS then sends
 * again.
 */
static void rsim_engine_test_sq_drained(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct completion *done = kunit_kzalloc(test, sizeof(*done),
						GFP_KERNEL);
	struct ib_qp_attr qa = {
		.qp_state = IB_QPS_SQD,
		.en_sqd_async_notify = 1,
	};
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	unsigned long wait = msecs_to_jiffies(DP_WAIT_MS);
	struct ib_wc wc[2];
	struct ib_qp *q;

	KUNIT_ASSERT_NOT_NULL(test, done);
	init_completion(done);
	q = engine_qp(test, f, f->cq, f->cq, engine_sqd_event, done);
	KUNIT_ASSERT_EQ(test, dp_connect(f, q, q->qp_num, DP_ACCESS, 7), 0);
	KUNIT_ASSERT_EQ(test, ib_modify_qp(q, &qa, IB_QP_STATE |
					   IB_QP_EN_SQD_ASYNC_NOTIFY), 0);
	KUNIT_EXPECT_GT(test, wait_for_completion_timeout(done, wait), 0UL);
	qa.qp_state = IB_QPS_RTS;
	KUNIT_ASSERT_EQ(test, ib_modify_qp(q, &qa, IB_QP_STATE), 0);
	KUNIT_ASSERT_EQ(test, dp_post_recv(q, 1, f->dst.dma, 64,
					   f->pd->local_dma_lkey), 0);
	KUNIT_ASSERT_EQ(test, dp_post(q, &wr, f->src.dma, 10,
				      f->pd->local_dma_lkey), 0);
	KUNIT_EXPECT_EQ(test, dp_wait(f->cq, wc, 2), 2);
}

/* ---- many posters ---- */

/* posting threads: three on the self-connected QP, two on the pair */
#define MP_SELF		3
#define MP_THREADS	5
#define MP_REGION	(4 * PAGE_SIZE)	/* each thread's part of a buffer */
#define MP_SEND_LEN	1000
#define MP_SLOTS	4		/* receive buffers per thread */
#define MP_SEND_FILL	0xa5
#define MP_RUN_MS	4000
/* wr_id: thread, what, sequence number */
#define MP_ID(t, k, seq)	((u64)(t) << 48 | (u64)(k) << 40 | (seq))
#define MP_TID(id)		((u32)((id) >> 48))
#define MP_KIND(id)		((u32)((id) >> 40) & 0xff)
#define MP_SEQ(id)		((id) & GENMASK_ULL(39, 0))
#define MP_RECV		1
#define MP_OP		2
#define MP_CHURN	0xff

/**
 * struct mp - the shared state of the many-posters case
 * @f: the fixture (its QPs are not used)
 * @cq: every QP's send and receive CQ
 * @self: the self-connected QP (its RESET cycles change @gen)
 * @p1: the pair's requester
 * @p2: the pair's responder
 * @src: the requesters' data (each thread's region)
 * @dst: the responders' data, behind @dmr
 * @rcv: receive buffers, MP_SLOTS per thread
 * @scratch: READ destinations
 * @dmr: FRWR MR over @dst, remote read and write
 * @gen: bumped before each RESET of @self
 * @stop: the threads stop
 * @wq: where threads wait for their completions
 * @done: per thread, the last sequence number completed, and its status
 * @status: per thread, that completion's status
 * @ok: operations whose data checked out
 * @bad_data: data that did not
 * @bad_status: completions with a status other than success or a flush
 * @cycles: RESETs of @self
 * @churns: QP pairs created, used and destroyed
 */
struct mp {
	struct dp_fixture *f;
	struct ib_cq *cq;
	struct ib_qp *self, *p1, *p2;
	struct dp_buf src, dst, rcv, scratch;
	struct ib_mr *dmr;
	atomic_t gen;
	bool stop;
	wait_queue_head_t wq;
	u64 done[MP_THREADS];
	int status[MP_THREADS];
	atomic_t ok, bad_data, bad_status, cycles, churns;
};

struct mp_thread {
	struct mp *mp;
	u32 id;
	u64 seq;
	struct rnd_state rnd;
};

static bool mp_all(const u8 *p, size_t len, u8 v)
{
	return !memchr_inv(p, v, len);
}

/* the poller: completions to their threads, receives checked here */
static int mp_poll_fn(void *arg)
{
	struct mp *mp = arg;
	struct ib_wc wc[16];
	int i, n;

	while (!kthread_should_stop()) {
		n = ib_poll_cq(mp->cq, ARRAY_SIZE(wc), wc);
		for (i = 0; i < n; i++) {
			u64 id = wc[i].wr_id;
			u32 t = MP_TID(id);

			if (wc[i].status != IB_WC_SUCCESS &&
			    wc[i].status != IB_WC_WR_FLUSH_ERR)
				atomic_inc(&mp->bad_status);
			if (MP_KIND(id) == MP_CHURN || t >= MP_THREADS)
				continue;
			if (MP_KIND(id) == MP_RECV) {
				size_t off = (t * MP_SLOTS + MP_SEQ(id) %
					      MP_SLOTS) * PAGE_SIZE;

				if (wc[i].status != IB_WC_SUCCESS)
					continue;
				ib_dma_sync_single_for_cpu(mp->rcv.dev,
							   mp->rcv.dma + off,
							   PAGE_SIZE,
							   DMA_BIDIRECTIONAL);
				if (wc[i].byte_len != MP_SEND_LEN ||
				    !mp_all(mp->rcv.va + off, MP_SEND_LEN,
					    MP_SEND_FILL))
					atomic_inc(&mp->bad_data);
				else
					atomic_inc(&mp->ok);
				continue;
			}
			WRITE_ONCE(mp->status[t], wc[i].status);
			/* the status is seen by whoever sees the number */
			smp_store_release(&mp->done[t], MP_SEQ(id));
		}
		if (n)
			wake_up_all(&mp->wq);
		else
			usleep_range(50, 100);
	}
	return 0;
}

/* wait for the thread's WR @seq; false if it was lost (RESET) or failed */
static bool mp_done(struct mp_thread *t)
{
	/* pairs with the poller's release: the status is read after */
	return smp_load_acquire(&t->mp->done[t->id]) == t->seq;
}

static bool mp_wait(struct mp_thread *t, int gen)
{
	struct mp *mp = t->mp;

	wait_event_timeout(mp->wq,
			   mp_done(t) || atomic_read(&mp->gen) != gen ||
			   READ_ONCE(mp->stop),
			   msecs_to_jiffies(DP_WAIT_MS));
	return mp_done(t) && READ_ONCE(mp->status[t->id]) == IB_WC_SUCCESS;
}

/* one SEND, WRITE or READ of thread @t to @qp (whose responder is @resp) */
static void mp_op(struct mp_thread *t, struct ib_qp *qp, struct ib_qp *resp)
{
	struct mp *mp = t->mp;
	struct ib_device *dev = mp->src.dev;
	size_t off = t->id * MP_REGION;
	u32 lkey = mp->f->pd->local_dma_lkey;
	struct ib_rdma_wr wr = { .wr.send_flags = IB_SEND_SIGNALED };
	u32 len = (prandom_u32_state(&t->rnd) % MP_REGION) + 1;
	u8 fill = 0x80 | (t->seq & 0x7f);
	int gen = atomic_read(&mp->gen);
	u32 op = prandom_u32_state(&t->rnd) % 3;
	u64 at;

	t->seq++;
	wr.wr.wr_id = MP_ID(t->id, MP_OP, t->seq);
	if (op == 0) {
		u32 slot = t->seq % MP_SLOTS;

		at = mp->rcv.dma + (t->id * MP_SLOTS + slot) * PAGE_SIZE;
		if (dp_post_recv(resp, MP_ID(t->id, MP_RECV, slot), at,
				 PAGE_SIZE, lkey))
			return;
		wr.wr.opcode = IB_WR_SEND;
		if (dp_post(qp, &wr.wr, mp->src.dma + MP_THREADS * MP_REGION,
			    MP_SEND_LEN, lkey))
			return;
		mp_wait(t, gen);
		return;
	}
	/* WRITE this thread's region of @dst, then READ it back */
	dp_fill(mp->src.va + off, MP_REGION, fill);
	ib_dma_sync_single_for_device(dev, mp->src.dma + off, MP_REGION,
				      DMA_BIDIRECTIONAL);
	wr.wr.opcode = IB_WR_RDMA_WRITE;
	wr.remote_addr = mp->dmr->iova + off;
	wr.rkey = mp->dmr->rkey;
	if (dp_post(qp, &wr.wr, mp->src.dma + off, len, lkey) ||
	    !mp_wait(t, gen))
		return;
	ib_dma_sync_single_for_cpu(dev, mp->dst.dma + off, len,
				   DMA_BIDIRECTIONAL);
	if (!mp_all(mp->dst.va + off, len, fill)) {
		atomic_inc(&mp->bad_data);
		return;
	}
	atomic_inc(&mp->ok);
	if (op == 1)
		return;
	memset(mp->scratch.va + off, 0, len);
	ib_dma_sync_single_for_device(dev, mp->scratch.dma + off, len,
				      DMA_BIDIRECTIONAL);
	t->seq++;
	wr.wr.wr_id = MP_ID(t->id, MP_OP, t->seq);
	wr.wr.opcode = IB_WR_RDMA_READ;
	if (dp_post(qp, &wr.wr, mp->scratch.dma + off, len, lkey) ||
	    !mp_wait(t, gen))
		return;
	ib_dma_sync_single_for_cpu(dev, mp->scratch.dma + off, len,
				   DMA_BIDIRECTIONAL);
	if (mp_all(mp->scratch.va + off, len, fill))
		atomic_inc(&mp->ok);
	else
		atomic_inc(&mp->bad_data);
}

static int mp_post_fn(void *arg)
{
	struct mp_thread *t = arg;
	struct mp *mp = t->mp;
	bool self = t->id < MP_SELF;

	while (!kthread_should_stop()) {
		if (READ_ONCE(mp->stop)) {
			usleep_range(1000, 2000);
			continue;
		}
		mp_op(t, self ? mp->self : mp->p1, self ? mp->self : mp->p2);
		cond_resched();
	}
	return 0;
}

/* RESET -> RTS of the self-connected QP, under its posters' feet */
static int mp_cycle_fn(void *arg)
{
	struct mp *mp = arg;
	struct ib_qp_attr qa = { .qp_state = IB_QPS_RESET };

	while (!kthread_should_stop()) {
		msleep(20);
		if (READ_ONCE(mp->stop))
			continue;
		atomic_inc(&mp->gen);
		wake_up_all(&mp->wq);
		if (ib_modify_qp(mp->self, &qa, IB_QP_STATE) ||
		    dp_connect(mp->f, mp->self, mp->self->qp_num, DP_ACCESS,
			       7)) {
			atomic_inc(&mp->bad_status);
			break;
		}
		atomic_inc(&mp->cycles);
	}
	return 0;
}

/* a pair created, sent on, and destroyed with its WRs in flight */
static int mp_churn_fn(void *arg)
{
	struct mp *mp = arg;
	struct ib_qp_init_attr qa = {
		.qp_type = IB_QPT_RC,
		.send_cq = mp->cq,
		.recv_cq = mp->cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.port_num = 1,
	};
	u32 lkey = mp->f->pd->local_dma_lkey;
	u64 at = mp->scratch.dma + MP_THREADS * MP_REGION;

	while (!kthread_should_stop()) {
		struct ib_rdma_wr wr = {
			.wr.opcode = IB_WR_RDMA_WRITE,
			.wr.wr_id = MP_ID(0, MP_CHURN, 0),
			.wr.send_flags = IB_SEND_SIGNALED,
			.remote_addr = mp->dmr->iova,
			.rkey = mp->dmr->rkey,
		};
		struct ib_qp *a, *b;
		int i;

		if (READ_ONCE(mp->stop)) {
			usleep_range(1000, 2000);
			continue;
		}
		a = ib_create_qp(mp->f->pd, &qa);
		if (IS_ERR(a))
			break;
		b = ib_create_qp(mp->f->pd, &qa);
		if (IS_ERR(b)) {
			ib_destroy_qp(a);
			break;
		}
		/* WRITEs of zero length: the threads' data stays theirs */
		if (!dp_connect(mp->f, a, b->qp_num, DP_ACCESS, 7) &&
		    !dp_connect(mp->f, b, a->qp_num, DP_ACCESS, 7)) {
			for (i = 0; i < 4; i++) {
				dp_post_recv(b, MP_ID(0, MP_CHURN, 0), at,
					     PAGE_SIZE, lkey);
				dp_post(a, &wr.wr, at, 0, lkey);
				wr.wr.opcode = IB_WR_SEND;
			}
		}
		ib_destroy_qp(b);
		ib_destroy_qp(a);
		atomic_inc(&mp->churns);
		cond_resched();
	}
	return 0;
}

static void mp_stop(void *arg)
{
	kthread_stop(arg);
	put_task_struct(arg);
}

static struct task_struct *mp_start(struct kunit *test, int (*fn)(void *),
				    void *arg, const char *name)
{
	struct task_struct *t = kthread_run(fn, arg, "%s", name);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, t);
	get_task_struct(t);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mp_stop, t), 0);
	return t;
}

/*
 * The multi-poster stress: three threads post SENDs, WRITEs and READs
 * (random lengths up to 16 KiB, every byte checked) to one
 * self-connected RC QP, two more to a connected pair, while a thread
 * takes the self-connected QP RESET -> RTS every 20 ms and another
 * creates QP pairs, posts to them and destroys them with their WRs in
 * flight; one poller takes every completion. Defects 1, 3, 7 and 8 show
 * here as wrong data, a completion for a QP's earlier life, a hang, a
 * WARN or a KASAN or kmemleak report.
 */
static void rsim_engine_test_many_posters(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct mp *mp = kunit_kzalloc(test, sizeof(*mp), GFP_KERNEL);
	struct mp_thread *th = kunit_kcalloc(test, MP_THREADS, sizeof(*th),
					     GFP_KERNEL);
	struct ib_wc wc;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, mp);
	KUNIT_ASSERT_NOT_NULL(test, th);
	mp->f = f;
	init_waitqueue_head(&mp->wq);
	mp->cq = rsim_kunit_cq(test, f->rsim, 1024);
	/* and after the threads' regions, the SENDs' payload */
	dp_buf_init(test, f, &mp->src, (MP_THREADS + 1) * MP_REGION, 0);
	dp_buf_init(test, f, &mp->dst, MP_THREADS * MP_REGION, 0);
	dp_buf_init(test, f, &mp->scratch, (MP_THREADS + 1) * MP_REGION, 0);
	dp_buf_init(test, f, &mp->rcv, MP_THREADS * MP_SLOTS * PAGE_SIZE, 0);
	memset(mp->src.va + MP_THREADS * MP_REGION, MP_SEND_FILL, MP_SEND_LEN);
	ib_dma_sync_single_for_device(mp->src.dev, mp->src.dma, mp->src.len,
				      DMA_BIDIRECTIONAL);
	mp->dmr = rsim_kunit_mr(test, f->pd, IB_MR_TYPE_MEM_REG,
				MP_THREADS * MP_REGION / PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, dp_reg(test, f, f->a, mp->dmr, &mp->dst, 0,
				     MP_THREADS * MP_REGION,
				     IB_ACCESS_LOCAL_WRITE |
				     IB_ACCESS_REMOTE_READ |
				     IB_ACCESS_REMOTE_WRITE, true), 0);
	KUNIT_ASSERT_EQ(test, dp_wait(f->cq, &wc, 1), 1);
	KUNIT_ASSERT_EQ(test, wc.status, IB_WC_SUCCESS);

	f->cq = mp->cq;		/* dp_qp() puts the QPs on it */
	mp->self = dp_qp(test, f, IB_QPT_RC, f->pd);
	mp->p1 = dp_qp(test, f, IB_QPT_RC, f->pd);
	mp->p2 = dp_qp(test, f, IB_QPT_RC, f->pd);
	KUNIT_ASSERT_EQ(test, dp_connect(f, mp->self, mp->self->qp_num,
					 DP_ACCESS, 7), 0);
	KUNIT_ASSERT_EQ(test, dp_connect(f, mp->p1, mp->p2->qp_num,
					 DP_ACCESS, 7), 0);
	KUNIT_ASSERT_EQ(test, dp_connect(f, mp->p2, mp->p1->qp_num,
					 DP_ACCESS, 7), 0);
	mp_start(test, mp_poll_fn, mp, "mp_poll");
	for (i = 0; i < MP_THREADS; i++) {
		th[i].mp = mp;
		th[i].id = i;
		prandom_seed_state(&th[i].rnd, 20 + i);
		mp_start(test, mp_post_fn, &th[i], "mp_post");
	}
	mp_start(test, mp_cycle_fn, mp, "mp_cycle");
	mp_start(test, mp_churn_fn, mp, "mp_churn");
	msleep(MP_RUN_MS);
	WRITE_ONCE(mp->stop, true);
	wake_up_all(&mp->wq);
	/* the KUnit actions stop the threads before the QPs go */
	kunit_info(test, "%d checked, %d RESET cycles, %d pairs churned",
		   atomic_read(&mp->ok), atomic_read(&mp->cycles),
		   atomic_read(&mp->churns));
	KUNIT_EXPECT_EQ(test, atomic_read(&mp->bad_data), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&mp->bad_status), 0);
	KUNIT_EXPECT_GT(test, atomic_read(&mp->ok), 100);
	KUNIT_EXPECT_GT(test, atomic_read(&mp->cycles), 10);
	KUNIT_EXPECT_GT(test, atomic_read(&mp->churns), 10);
}

static struct kunit_case rsim_engine_test_cases[] = {
	KUNIT_CASE(rsim_engine_test_give_up_holds_nothing),
	KUNIT_CASE(rsim_engine_test_destroy_cleans_cq),
	KUNIT_CASE(rsim_engine_test_stranger_cannot_wake),
	KUNIT_CASE(rsim_engine_test_rnr_wake_while_running),
	KUNIT_CASE(rsim_engine_test_srq_post_runs_nothing),
	KUNIT_CASE(rsim_engine_test_reset_responder_takes_nothing),
	KUNIT_CASE(rsim_engine_test_dying_responder_waits_nowhere),
	KUNIT_CASE(rsim_engine_test_reset_waits_alone),
	KUNIT_CASE(rsim_engine_test_others_handlers_elsewhere),
	KUNIT_CASE(rsim_engine_test_handler_depth_bounded),
	KUNIT_CASE(rsim_engine_test_no_answer_retries),
	KUNIT_CASE(rsim_engine_test_rc_pkey),
	KUNIT_CASE(rsim_engine_test_sq_drained),
	KUNIT_CASE_SLOW(rsim_engine_test_many_posters),
	RSIM_KUNIT_NO_LEFTOVERS,
	{}
};

static struct kunit_suite rsim_engine_test_suite = {
	.name = "rdmasim_engine",
	.suite_init = rsim_kunit_suite_init,
	.test_cases = rsim_engine_test_cases,
};

kunit_test_suite(rsim_engine_test_suite);
