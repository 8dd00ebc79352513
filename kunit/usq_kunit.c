// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim_usq: a mapped send queue's doorbells (usq.c, dp.c).
 *
 * The ring asks for a doorbell (RSIM_URING_F_DOORBELL) only while nobody
 * executes the queue; while somebody does, the owner takes what the
 * process publishes before it lets the queue go. Here the ring is kernel
 * memory attached to a kernel QP of the data-path fixture, in place of
 * the process's mapping; the device's test hooks publish WRs at the
 * moments a second thread of the process could: while the owner copies
 * a slot, and as it gives the queue up. Every WR published runs, with no
 * doorbell but the first; an idle queue runs nothing until its doorbell;
 * in the error state the doorbell flushes; a producer index out of range
 * puts the QP in the error state once.
 */

#include <kunit/test.h>

#include "dp_helpers.h"

/* the case's QP, source and MR, for the hooks */
static struct ib_qp *usq_qp;
static u64 usq_src;
static struct ib_mr *usq_target;
/* what the hook did: published, and whether the ring asked to ring */
static bool usq_hook_done;
static bool usq_hook_db;

static u32 usq_flags(struct ib_qp *ibqp)
{
	struct rsim_uring_hdr *h = to_rsim_qp(ibqp)->sq.umap->vaddr;

	return READ_ONCE(h->flags);
}

static u64 usq_doorbells(struct dp_fixture *f)
{
	return atomic64_read(&f->rsim->send_doorbells);
}

/* an MR over the first page of the fixture's dst, remote write */
static struct ib_mr *usq_mr(struct kunit *test, struct dp_fixture *f)
{
	struct ib_mr *mr = rsim_kunit_mr(test, f->pd, IB_MR_TYPE_MEM_REG, 4);
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, dp_reg(test, f, f->a, mr, &f->dst, 0, PAGE_SIZE,
				     IB_ACCESS_LOCAL_WRITE |
				     IB_ACCESS_REMOTE_WRITE, true), 0);
	dp_poll_one(test, f, f->a, &wc);
	KUNIT_ASSERT_EQ(test, wc.status, IB_WC_SUCCESS);
	return mr;
}

/*
 * Slot @i of @ibqp's ring: a signaled WRITE of 8 bytes, from the local
 * DMA address @src + 8i to @mr's offset 8i; wr_id 200 + i.
 */
static void usq_slot_write(struct ib_qp *ibqp, u32 i, u64 src,
			   struct ib_mr *mr)
{
	struct rsim_uswqe *s = dp_ring_slot_fill(ibqp, i, IB_WR_RDMA_WRITE,
						 200 + i, src + 8 * i, 8,
						 ibqp->pd->local_dma_lkey);

	s->wr.rdma.remote_addr = mr->iova + 8 * i;
	s->wr.rdma.rkey = mr->rkey;
}

/* @n completions of the requester's ring WRs from 200, all @status */
static void usq_expect(struct kunit *test, struct dp_fixture *f, u32 n,
		       enum ib_wc_status status)
{
	struct ib_wc wc;
	u32 i;

	for (i = 0; i < n; i++) {
		dp_poll_one(test, f, f->b, &wc);
		KUNIT_EXPECT_EQ(test, wc.status, status);
		KUNIT_EXPECT_EQ(test, wc.wr_id, 200 + i);
	}
}

/* the WRITEs of slots [0, @n) landed */
static void usq_expect_landed(struct kunit *test, struct dp_fixture *f,
			      u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ(test, dp_cpu(f, &f->dst)[8 * i], 0x10 + i);
}

static void usq_fill_src(struct dp_fixture *f, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		f->src.va[8 * i] = 0x10 + i;
}

/*
 * An idle queue asks for a doorbell and runs nothing without one; the
 * doorbell runs what is published, and the queue, idle again, asks anew.
 */
static void rsim_usq_test_idle_asks_for_doorbell(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_mr *mr = usq_mr(test, f);
	u64 db = usq_doorbells(f);
	struct ib_wc wc;
	u32 i;

	dp_ring_attach(test, f->b);
	usq_fill_src(f, 4);
	KUNIT_EXPECT_EQ(test, usq_flags(f->b), RSIM_URING_F_DOORBELL);
	for (i = 0; i < 3; i++)
		usq_slot_write(f->b, i, f->src.dma, mr);
	KUNIT_EXPECT_TRUE(test, dp_ring_publish(f->b, 3));
	KUNIT_EXPECT_EQ(test, dp_poll(f, &wc, 1), 0);
	KUNIT_ASSERT_EQ(test, ib_post_send(f->b, NULL, NULL), 0);
	usq_expect(test, f, 3, IB_WC_SUCCESS);
	usq_expect_landed(test, f, 3);
	KUNIT_EXPECT_EQ(test, usq_flags(f->b), RSIM_URING_F_DOORBELL);
	KUNIT_EXPECT_EQ(test, usq_doorbells(f), db + 1);

	/* and again: one more WR, one more doorbell */
	usq_slot_write(f->b, 3, f->src.dma, mr);
	KUNIT_EXPECT_TRUE(test, dp_ring_publish(f->b, 4));
	KUNIT_EXPECT_EQ(test, dp_poll(f, &wc, 1), 0);
	KUNIT_ASSERT_EQ(test, ib_post_send(f->b, NULL, NULL), 0);
	dp_poll_one(test, f, f->b, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 203);
	usq_expect_landed(test, f, 4);
	KUNIT_EXPECT_EQ(test, to_rsim_qp(f->b)->sq.ucons, 4);
	KUNIT_EXPECT_EQ(test, usq_doorbells(f), db + 2);
}

/* a second thread of the process posts 3 WRs while the owner copies one */
static void usq_hook_post_during_copy(struct rsim_qp *qp, void *slot)
{
	u32 i;

	if (usq_hook_done || slot != dp_ring_slot(usq_qp, 0))
		return;
	usq_hook_done = true;
	for (i = 1; i < 4; i++)
		usq_slot_write(usq_qp, i, usq_src, usq_target);
	usq_hook_db = dp_ring_publish(usq_qp, 4);
}

/*
 * A hook case's start: the ring on the fixture's QP b, @n sources, slot 0
 * written (a WRITE into @mr), the hooks' state reset; the doorbell count
 * before
 */
static u64 usq_hook_case(struct kunit *test, struct dp_fixture *f,
			 struct ib_mr *mr, u32 n)
{
	dp_ring_attach(test, f->b);
	usq_fill_src(f, n);
	usq_slot_write(f->b, 0, f->src.dma, mr);
	usq_qp = f->b;
	usq_src = f->src.dma;
	usq_target = mr;
	usq_hook_done = false;
	usq_hook_db = true;
	return usq_doorbells(f);
}

/*
 * WRs published while the owner runs the queue need no doorbell: the
 * ring does not ask for one, and the owner takes them.
 */
static void rsim_usq_test_busy_queue_takes_posts(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_mr *mr = usq_mr(test, f);
	u64 db = usq_hook_case(test, f, mr, 4);

	f->rsim->usq_test_hook = usq_hook_post_during_copy;
	KUNIT_ASSERT_EQ(test, dp_ring(f->b, 1), 0);
	usq_expect(test, f, 4, IB_WC_SUCCESS);
	f->rsim->usq_test_hook = NULL;
	KUNIT_EXPECT_TRUE(test, usq_hook_done);
	KUNIT_EXPECT_FALSE(test, usq_hook_db);
	usq_expect_landed(test, f, 4);
	KUNIT_EXPECT_EQ(test, usq_doorbells(f), db + 1);
	KUNIT_EXPECT_EQ(test, usq_flags(f->b), RSIM_URING_F_DOORBELL);
}

static void usq_leave_hook_detach(void *p)
{
	((struct rsim_dev *)p)->dp_leave_hook = NULL;
}

/*
 * A second thread of the process posts one WR as the owner gives the
 * queue up, after its last look at the ring: the flag is still clear, so
 * the thread rings no doorbell.
 */
static void usq_hook_post_at_leave(struct rsim_qp *qp)
{
	if (usq_hook_done || qp != to_rsim_qp(usq_qp))
		return;
	usq_hook_done = true;
	usq_slot_write(usq_qp, 1, usq_src, usq_target);
	usq_hook_db = dp_ring_publish(usq_qp, 2);
}

/*
 * The race the flag's protocol closes: a WR published as the owner lets
 * the queue go, by a poster that saw no flag, still runs (the owner sets
 * the flag, then looks at the ring once more).
 */
static void rsim_usq_test_post_as_owner_leaves(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_mr *mr = usq_mr(test, f);
	u64 db = usq_hook_case(test, f, mr, 2);

	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							usq_leave_hook_detach,
							f->rsim), 0);
	f->rsim->dp_leave_hook = usq_hook_post_at_leave;
	KUNIT_ASSERT_EQ(test, dp_ring(f->b, 1), 0);
	usq_expect(test, f, 2, IB_WC_SUCCESS);
	f->rsim->dp_leave_hook = NULL;
	KUNIT_EXPECT_TRUE(test, usq_hook_done);
	KUNIT_EXPECT_FALSE(test, usq_hook_db);
	usq_expect_landed(test, f, 2);
	KUNIT_EXPECT_EQ(test, usq_doorbells(f), db + 1);
}

/*
 * In the error state the ring asks for doorbells; what is published is
 * flushed at the doorbell, in order, and its slots given back.
 */
static void rsim_usq_test_error_state_flushes(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_mr *mr = usq_mr(test, f);
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct rsim_uring_hdr *h;
	struct ib_wc wc;

	dp_ring_attach(test, f->b);
	h = to_rsim_qp(f->b)->sq.umap->vaddr;
	KUNIT_ASSERT_EQ(test, ib_modify_qp(f->b, &attr, IB_QP_STATE), 0);
	usq_slot_write(f->b, 0, f->src.dma, mr);
	usq_slot_write(f->b, 1, f->src.dma, mr);
	KUNIT_EXPECT_TRUE(test, dp_ring_publish(f->b, 2));
	KUNIT_EXPECT_EQ(test, dp_poll(f, &wc, 1), 0);
	KUNIT_ASSERT_EQ(test, ib_post_send(f->b, NULL, NULL), 0);
	usq_expect(test, f, 2, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, READ_ONCE(h->cons), 2);
	KUNIT_EXPECT_EQ(test, usq_flags(f->b), RSIM_URING_F_DOORBELL);
	/* nothing was written */
	KUNIT_EXPECT_EQ(test, dp_cpu(f, &f->dst)[0], 0);
}

/*
 * A producer index further ahead than the queue has room for: the
 * doorbell puts the QP in the error state, and nothing is taken, then or
 * at a later doorbell.
 */
static void rsim_usq_test_index_out_of_range(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct rsim_qp *qp = to_rsim_qp(f->b);
	struct rsim_uring_hdr *h;
	struct ib_wc wc;

	dp_ring_attach(test, f->b);
	h = qp->sq.umap->vaddr;
	KUNIT_ASSERT_EQ(test, dp_ring(f->b, qp->sq.max_wr + 1), 0);
	KUNIT_EXPECT_EQ(test, qp->state, IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, dp_poll(f, &wc, 1), 0);
	KUNIT_EXPECT_EQ(test, READ_ONCE(h->cons), 0);
	KUNIT_EXPECT_EQ(test, usq_flags(f->b), RSIM_URING_F_DOORBELL);
	KUNIT_ASSERT_EQ(test, ib_post_send(f->b, NULL, NULL), 0);
	KUNIT_EXPECT_EQ(test, qp->owner, RSIM_SQ_IDLE);
	KUNIT_EXPECT_EQ(test, qp->sq.count, 0);
	KUNIT_EXPECT_EQ(test, dp_poll(f, &wc, 1), 0);
}

/* completions pushed for the ring's QP, and those pushed before its slot */
static u32 usq_push_seen;
static u32 usq_push_early;

/* as each completion is pushed: its WR's slot is already given back */
static void usq_hook_push(struct rsim_cq *cq, const struct ib_wc *wc)
{
	struct rsim_uring_hdr *h;

	if (wc->qp != usq_qp)
		return;
	h = to_rsim_qp(usq_qp)->sq.umap->vaddr;
	usq_push_seen++;
	if (READ_ONCE(h->cons) < wc->wr_id - 200 + 1)
		usq_push_early++;
}

static void usq_push_hook_detach(void *p)
{
	((struct rsim_dev *)p)->cq_push_hook = NULL;
}

/*
 * A WR's slot is given back (the ring's cons) before its completion can
 * be seen: a process that polled the completion may post into the slot
 * at once, from another CPU than the one running the queue.
 */
static void rsim_usq_test_slot_before_completion(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_mr *mr = usq_mr(test, f);
	u32 i;

	usq_hook_case(test, f, mr, 3);
	for (i = 1; i < 3; i++)
		usq_slot_write(f->b, i, f->src.dma, mr);
	usq_push_seen = 0;
	usq_push_early = 0;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							usq_push_hook_detach,
							f->rsim), 0);
	f->rsim->cq_push_hook = usq_hook_push;
	KUNIT_ASSERT_EQ(test, dp_ring(f->b, 3), 0);
	usq_expect(test, f, 3, IB_WC_SUCCESS);
	f->rsim->cq_push_hook = NULL;
	KUNIT_EXPECT_EQ(test, usq_push_seen, 3);
	KUNIT_EXPECT_EQ(test, usq_push_early, 0);
}

static struct kunit_case rsim_usq_test_cases[] = {
	KUNIT_CASE(rsim_usq_test_idle_asks_for_doorbell),
	KUNIT_CASE(rsim_usq_test_busy_queue_takes_posts),
	KUNIT_CASE(rsim_usq_test_post_as_owner_leaves),
	KUNIT_CASE(rsim_usq_test_error_state_flushes),
	KUNIT_CASE(rsim_usq_test_index_out_of_range),
	KUNIT_CASE(rsim_usq_test_slot_before_completion),
	RSIM_KUNIT_NO_LEFTOVERS,
	{}
};

static struct kunit_suite rsim_usq_test_suite = {
	.name = "rdmasim_usq",
	.suite_init = rsim_kunit_suite_init,
	.test_cases = rsim_usq_test_cases,
};

kunit_test_suite(rsim_usq_test_suite);
