// SPDX-License-Identifier: GPL-2.0-only
/*
 * Suite rdmasim_cq: completion queue objects.
 */

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

static struct kunit_case rsim_cq_test_cases[] = {
	KUNIT_CASE_PARAM(rsim_cq_test_create, rsim_cq_gen_params),
	KUNIT_CASE(rsim_cq_test_poll_and_arm_empty),
	KUNIT_CASE(rsim_cq_test_limit_refused),
	RSIM_KUNIT_NO_LEFTOVERS,
	{}
};

static struct kunit_suite rsim_cq_test_suite = {
	.name = "rdmasim_cq",
	.suite_init = rsim_kunit_suite_init,
	.test_cases = rsim_cq_test_cases,
};

kunit_test_suite(rsim_cq_test_suite);
