// SPDX-License-Identifier: GPL-2.0-only
/*
 * Suite rdmasim_cq: completion queue objects; resize_cq and the clean of
 * a QP's completions, which hold the CQ's lock for a batch at a time
 * while polls and new completions go on (issue 40's review: a resize and
 * a clean copied or scanned up to max_cqe completions with interrupts
 * off, and two resizes of one mapped CQ could free each other's ring).
 */

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>

#include "helpers.h"

#define RSIM_MAX_CQE	32768	/* rsim_default_limits.max_cqe */

struct rsim_cq_case {
	const char *name;
	int cqe;
	u32 comp_vector;
	u32 flags;
	int err;
};

/* cqe 0 is refused by the core itself, with a WARN: not a driver case */
static const struct rsim_cq_case rsim_cq_cases[] = {
	{ "cqe_1", 1, 0, 0, 0 },
	{ "cqe_max", RSIM_MAX_CQE, 0, 0, 0 },
	{ "cqe_max_plus_1", RSIM_MAX_CQE + 1, 0, 0, -EINVAL },
	{ "cqe_negative", -1, 0, 0, -EINVAL },
	{ "comp_vector_out_of_range", 16, 1, 0, -EINVAL },
	{ "flags_unsupported", 16, 0, IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION,
	  -EOPNOTSUPP },
};

KUNIT_ARRAY_PARAM_DESC(rsim_cq, rsim_cq_cases, name);

static void rsim_cq_test_create(struct kunit *test)
{
	const struct rsim_cq_case *c = test->param_value;
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	struct ib_cq_init_attr attr = {
		.cqe = c->cqe,
		.comp_vector = c->comp_vector,
		.flags = c->flags,
	};
	struct rsim_kunit_counts before;
	struct ib_cq *cq;

	rsim_kunit_snapshot(rsim, &before);
	cq = ib_create_cq(&rsim->ibdev, NULL, NULL, NULL, &attr);
	if (c->err) {
		KUNIT_EXPECT_EQ(test, PTR_ERR(cq), c->err);
		rsim_kunit_expect_counts(test, rsim, &before);
		return;
	}
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cq);
	KUNIT_EXPECT_EQ(test, cq->cqe, c->cqe);
	KUNIT_EXPECT_EQ(test, rsim_res_count(rsim, RSIM_RES_CQ),
			before.res[RSIM_RES_CQ] + 1);
	ib_destroy_cq(cq);
	rsim_kunit_expect_counts(test, rsim, &before);
}

static void rsim_cq_test_poll_and_arm_empty(struct kunit *test)
{
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	struct ib_cq *cq = rsim_kunit_cq(test, rsim, 8);
	struct ib_wc wc[4];

	KUNIT_EXPECT_EQ(test, ib_poll_cq(cq, 4, wc), 0);
	KUNIT_EXPECT_EQ(test, ib_req_notify_cq(cq, IB_CQ_NEXT_COMP), 0);
	KUNIT_EXPECT_EQ(test, ib_req_notify_cq(cq, IB_CQ_SOLICITED), 0);
	KUNIT_EXPECT_EQ(test, ib_req_notify_cq(cq, IB_CQ_NEXT_COMP |
					       IB_CQ_REPORT_MISSED_EVENTS), 0);
	/* a stronger arm is never weakened by a later SOLICITED */
	KUNIT_EXPECT_EQ(test, to_rsim_cq(cq)->notify, IB_CQ_NEXT_COMP);
}

static void rsim_cq_test_limit_refused(struct kunit *test)
{
	struct rsim_dev_config cfg;
	struct rsim_kunit_counts before;
	struct rsim_dev *rsim;
	struct ib_cq_init_attr attr = { .cqe = 4 };
	int i, n;

	rsim_default_config(&cfg);
	cfg.limits.max_res[RSIM_RES_CQ] = 4;
	rsim = rsim_kunit_dev(test, &cfg);
	n = 4 - rsim_res_count(rsim, RSIM_RES_CQ);
	for (i = 0; i < n; i++)
		rsim_kunit_cq(test, rsim, 4);
	rsim_kunit_snapshot(rsim, &before);
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_create_cq(&rsim->ibdev, NULL, NULL,
						   NULL, &attr)), -ENOMEM);
	rsim_kunit_expect_counts(test, rsim, &before);
}

/* the CQ's own resize op (7.x calls it for user CQs only: no core API) */
static int rsim_cq_resize(struct ib_cq *cq, int cqe)
{
	return cq->device->ops.RSIM_RESIZE_CQ_OP(cq, cqe, NULL);
}

static void rsim_cq_hooks_clear(void *rsim)
{
	struct rsim_dev *r = rsim;

	r->cq_resize_hook = NULL;
	r->cq_batch_hook = NULL;
}

/* what the cases below share with their hooks and threads */
struct rsim_cq_race {
	struct ib_cq *cq;
	struct completion entered, release, a_done, b_done;
	int a_err, b_err;
	/* batch hook: calls, calls with interrupts off, polled wr_ids */
	int batches, irqs_off;
	u64 next_polled, next_pushed;
	int poll_bad;
	struct ib_qp *keep, *drop;
};

static struct rsim_cq_race *rsim_cq_race;

/* one shot: the first resize waits inside, its mutex held */
static void rsim_cq_hold_hook(struct rsim_cq *cq)
{
	to_rsim_dev(cq->ibcq.device)->cq_resize_hook = NULL;
	complete(&rsim_cq_race->entered);
	wait_for_completion_timeout(&rsim_cq_race->release, 10 * HZ);
}

static int rsim_cq_resize_a(void *arg)
{
	struct rsim_cq_race *r = arg;

	r->a_err = rsim_cq_resize(r->cq, 32);
	complete(&r->a_done);
	return 0;
}

static int rsim_cq_resize_b(void *arg)
{
	struct rsim_cq_race *r = arg;

	r->b_err = rsim_cq_resize(r->cq, 64);
	complete(&r->b_done);
	return 0;
}

static void rsim_cq_release(void *arg)
{
	complete(&((struct rsim_cq_race *)arg)->release);
}

/*
 * Two resizes of one CQ follow each other: the second waits while the
 * first is inside (held in the resize hook), and the CQ ends with the
 * second's size. Before the CQ's mutex, the second ran beside the first,
 * and for a mapped CQ freed the ring the first had read its context from.
 */
static void rsim_cq_test_resize_waits_for_resize(struct kunit *test)
{
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	struct rsim_cq_race *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, r);
	r->cq = rsim_kunit_cq(test, rsim, 16);
	init_completion(&r->entered);
	init_completion(&r->release);
	init_completion(&r->a_done);
	init_completion(&r->b_done);
	rsim_cq_race = r;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, rsim_cq_hooks_clear,
							rsim), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, rsim_cq_release,
							r), 0);
	rsim->cq_resize_hook = rsim_cq_hold_hook;
	KUNIT_ASSERT_FALSE(test, IS_ERR(kthread_run(rsim_cq_resize_a, r,
						    "cq_resize_a")));
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&r->entered,
							    5 * HZ));
	KUNIT_ASSERT_FALSE(test, IS_ERR(kthread_run(rsim_cq_resize_b, r,
						    "cq_resize_b")));
	msleep(50);
	KUNIT_EXPECT_FALSE(test, completion_done(&r->b_done));
	complete(&r->release);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&r->a_done, 5 * HZ));
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&r->b_done, 5 * HZ));
	KUNIT_EXPECT_EQ(test, r->a_err, 0);
	KUNIT_EXPECT_EQ(test, r->b_err, 0);
	KUNIT_EXPECT_EQ(test, r->cq->cqe, 64);
}

/* a completion of @qp with @wr_id, straight into the CQ */
static void rsim_cq_add(struct kunit *test, struct ib_cq *cq, struct ib_qp *qp,
			u64 wr_id)
{
	struct ib_wc wc = { .wr_id = wr_id, .qp = qp };
	struct rsim_notify n = {};

	KUNIT_ASSERT_EQ(test, rsim_cq_push(&n, to_rsim_cq(cq), &wc, false), 0);
}

/*
 * Between batches: no lock held, interrupts on; a poll finds the next
 * completion in order, and a new completion goes in (after all the
 * earlier ones)
 */
static void rsim_cq_batch_hook(struct rsim_cq *cq)
{
	struct rsim_cq_race *r = rsim_cq_race;
	struct rsim_notify n = {};
	struct ib_wc wc = { .qp = r->keep };

	r->batches++;
	if (irqs_disabled())
		r->irqs_off++;
	if (ib_poll_cq(&cq->ibcq, 1, &wc) == 1) {
		/* a clean may still hand out one of the dropped QP's */
		if (wc.qp == r->keep && wc.wr_id != r->next_polled++)
			r->poll_bad++;
	}
	wc.qp = r->keep;
	wc.wr_id = r->next_pushed++;
	if (rsim_cq_push(&n, cq, &wc, false))
		r->poll_bad++;
}

/* poll @cq dry: the kept QP's wr_ids must follow r->next_polled */
static int rsim_cq_drain(struct rsim_cq_race *r, int *dropped)
{
	struct ib_wc wc;
	int n = 0;

	while (ib_poll_cq(r->cq, 1, &wc) == 1) {
		if (wc.qp != r->keep)
			(*dropped)++;
		else if (wc.wr_id != r->next_polled++)
			r->poll_bad++;
		n++;
	}
	return n;
}

/*
 * A resize of a CQ holding 4000 completions moves them RSIM_CQ_BATCH at
 * a time, its lock dropped between batches: a poll there finds the
 * oldest completion, a completion added there comes after every earlier
 * one, and the CQ holds them all in order at the end.
 */
static void rsim_cq_test_resize_in_batches(struct kunit *test)
{
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	struct rsim_cq_race *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	int i, dropped = 0, left;

	KUNIT_ASSERT_NOT_NULL(test, r);
	r->keep = kunit_kzalloc(test, sizeof(*r->keep), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r->keep);
	r->cq = rsim_kunit_cq(test, rsim, 4096);
	for (i = 0; i < 4000; i++)
		rsim_cq_add(test, r->cq, r->keep, i);
	r->next_pushed = 4000;
	rsim_cq_race = r;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, rsim_cq_hooks_clear,
							rsim), 0);
	rsim->cq_batch_hook = rsim_cq_batch_hook;
	KUNIT_ASSERT_EQ(test, rsim_cq_resize(r->cq, 8192), 0);
	rsim->cq_batch_hook = NULL;
	/* no hold of the lock moves more than 256 */
	KUNIT_EXPECT_GE(test, r->batches, 4000 / 256);
	KUNIT_EXPECT_EQ(test, r->irqs_off, 0);
	left = rsim_cq_drain(r, &dropped);
	KUNIT_EXPECT_EQ(test, left, 4000);
	KUNIT_EXPECT_EQ(test, r->poll_bad, 0);
	KUNIT_EXPECT_EQ(test, r->next_polled, r->next_pushed);
	KUNIT_EXPECT_EQ(test, r->cq->cqe, 8192);
	/* smaller than what it holds: refused, nothing lost */
	for (i = 0; i < 20; i++)
		rsim_cq_add(test, r->cq, r->keep, r->next_pushed++);
	KUNIT_EXPECT_EQ(test, rsim_cq_resize(r->cq, 10), -EINVAL);
	KUNIT_EXPECT_EQ(test, rsim_cq_drain(r, &dropped), 20);
	KUNIT_EXPECT_EQ(test, dropped, 0);
}

/*
 * The clean of a QP's completions from a CQ of 4000, every other one
 * that QP's, works a batch at a time from the newest back: polls between
 * batches take completions from the front (perhaps the dropped QP's,
 * which are not cleaned yet there), completions added there come after,
 * and at the end no completion of the QP is left and the others are in
 * order. The CQ was full: added completions found room only as polls
 * made it, never in a hole.
 */
static void rsim_cq_test_clean_in_batches(struct kunit *test)
{
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	struct rsim_cq_race *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	int i, dropped = 0, left;
	u64 k = 0;

	KUNIT_ASSERT_NOT_NULL(test, r);
	r->keep = kunit_kzalloc(test, sizeof(*r->keep), GFP_KERNEL);
	r->drop = kunit_kzalloc(test, sizeof(*r->drop), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r->keep);
	KUNIT_ASSERT_NOT_NULL(test, r->drop);
	r->cq = rsim_kunit_cq(test, rsim, 4000);
	for (i = 0; i < 4000; i++) {
		if (i % 2)
			rsim_cq_add(test, r->cq, r->drop, 1000000 + i);
		else
			rsim_cq_add(test, r->cq, r->keep, k++);
	}
	r->next_pushed = k;
	rsim_cq_race = r;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, rsim_cq_hooks_clear,
							rsim), 0);
	rsim->cq_batch_hook = rsim_cq_batch_hook;
	rsim_cq_clean(to_rsim_cq(r->cq), r->drop);
	rsim->cq_batch_hook = NULL;
	/* no hold of the lock moves more than 256 */
	KUNIT_EXPECT_GE(test, r->batches, 4000 / 256);
	KUNIT_EXPECT_EQ(test, r->irqs_off, 0);
	KUNIT_EXPECT_EQ(test, r->poll_bad, 0);
	left = rsim_cq_drain(r, &dropped);
	KUNIT_EXPECT_EQ(test, dropped, 0);
	KUNIT_EXPECT_EQ(test, r->poll_bad, 0);
	KUNIT_EXPECT_EQ(test, r->next_polled, r->next_pushed);
	KUNIT_EXPECT_GT(test, left, 0);
	KUNIT_EXPECT_FALSE(test, to_rsim_cq(r->cq)->overflow);
}

static struct kunit_case rsim_cq_test_cases[] = {
	KUNIT_CASE_PARAM(rsim_cq_test_create, rsim_cq_gen_params),
	KUNIT_CASE(rsim_cq_test_poll_and_arm_empty),
	KUNIT_CASE(rsim_cq_test_limit_refused),
	KUNIT_CASE(rsim_cq_test_resize_waits_for_resize),
	KUNIT_CASE(rsim_cq_test_resize_in_batches),
	KUNIT_CASE(rsim_cq_test_clean_in_batches),
	RSIM_KUNIT_NO_LEFTOVERS,
	{}
};

static struct kunit_suite rsim_cq_test_suite = {
	.name = "rdmasim_cq",
	.suite_init = rsim_kunit_suite_init,
	.test_cases = rsim_cq_test_cases,
};

kunit_test_suite(rsim_cq_test_suite);
