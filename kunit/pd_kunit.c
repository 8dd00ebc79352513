// SPDX-License-Identifier: GPL-2.0-only
/*
 * Suite rdmasim_pd: protection domains and address handles.
 */

#include "helpers.h"

static void rsim_pd_test_alloc_dealloc_counts(struct kunit *test)
{
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	struct rsim_kunit_counts before;
	struct ib_pd *pd;

	rsim_kunit_snapshot(rsim, &before);
	pd = ib_alloc_pd(&rsim->ibdev, 0);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pd);
	KUNIT_EXPECT_EQ(test, rsim_res_count(rsim, RSIM_RES_PD),
			before.res[RSIM_RES_PD] + 1);
	/* IBK_LOCAL_DMA_LKEY: no internal DMA MR per PD */
	KUNIT_EXPECT_EQ(test, pd->local_dma_lkey, RSIM_LOCAL_DMA_LKEY);
	KUNIT_EXPECT_NULL(test, pd->__internal_mr);
	KUNIT_EXPECT_EQ(test, rsim_res_count(rsim, RSIM_RES_MR),
			before.res[RSIM_RES_MR]);
	ib_dealloc_pd(pd);
	rsim_kunit_expect_counts(test, rsim, &before);
}

static void rsim_pd_test_unsafe_global_rkey_uses_dma_mr(struct kunit *test)
{
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	struct rsim_kunit_counts before;
	struct ib_pd *pd;

	rsim_kunit_snapshot(rsim, &before);
	pd = ib_alloc_pd(&rsim->ibdev, IB_PD_UNSAFE_GLOBAL_RKEY);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pd);
	KUNIT_ASSERT_NOT_NULL(test, pd->__internal_mr);
	KUNIT_EXPECT_EQ(test, pd->__internal_mr->type, IB_MR_TYPE_DMA);
	KUNIT_EXPECT_EQ(test, pd->__internal_mr->length, U64_MAX);
	KUNIT_EXPECT_EQ(test, pd->unsafe_global_rkey, pd->__internal_mr->rkey);
	KUNIT_EXPECT_EQ(test, rsim_res_count(rsim, RSIM_RES_MR),
			before.res[RSIM_RES_MR] + 1);
	ib_dealloc_pd(pd);
	rsim_kunit_expect_counts(test, rsim, &before);
}

static void rsim_pd_test_limit_refused(struct kunit *test)
{
	struct rsim_dev_config cfg;
	struct rsim_kunit_counts before;
	struct rsim_dev *rsim;
	struct ib_pd *extra;
	int i, n;

	rsim_default_config(&cfg);
	/* the MAD layer takes one PD per port */
	cfg.limits.max_res[RSIM_RES_PD] = 4;
	rsim = rsim_kunit_dev(test, &cfg);
	n = 4 - rsim_res_count(rsim, RSIM_RES_PD);
	KUNIT_ASSERT_GT(test, n, 0);
	for (i = 0; i < n; i++)
		rsim_kunit_pd(test, rsim);
	rsim_kunit_snapshot(rsim, &before);
	extra = ib_alloc_pd(&rsim->ibdev, 0);
	KUNIT_EXPECT_EQ(test, PTR_ERR(extra), -ENOMEM);
	rsim_kunit_expect_counts(test, rsim, &before);
	KUNIT_EXPECT_EQ(test, atomic_read(&rsim->res[RSIM_RES_PD].refused),
			before.refused[RSIM_RES_PD] + 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&rsim->res[RSIM_RES_PD].hwm), 4);
}

static void rsim_pd_test_pdn_unique(struct kunit *test)
{
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	struct ib_pd *a = rsim_kunit_pd(test, rsim);
	struct ib_pd *b = rsim_kunit_pd(test, rsim);

	KUNIT_EXPECT_NE(test, to_rsim_pd(a)->pdn, to_rsim_pd(b)->pdn);
}

struct rsim_pd_ah_case {
	const char *name;
	u32 port;
	u16 dlid;
	u8 sl;
	bool grh;
	u8 sgid_index;
	int err;
};

static const struct rsim_pd_ah_case rsim_pd_ah_cases[] = {
	{ "valid", 1, 5, 0, false, 0, 0 },
	{ "valid_sl15", 1, 5, 15, false, 0, 0 },
	{ "valid_permissive_dlid", 1, 0xffff, 0, false, 0, 0 },
	{ "valid_grh", 1, 5, 0, true, 0, 0 },
	{ "dlid_zero", 1, 0, 0, false, 0, -EINVAL },
	{ "port_two", 2, 5, 0, false, 0, -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(rsim_pd_ah, rsim_pd_ah_cases, name);

static void rsim_pd_test_create_ah(struct kunit *test)
{
	const struct rsim_pd_ah_case *c = test->param_value;
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	struct ib_pd *pd = rsim_kunit_pd(test, rsim);
	struct rsim_kunit_counts before;
	struct rdma_ah_attr attr = {};
	struct rdma_ah_attr q;
	struct ib_ah *ah;

	attr.type = RDMA_AH_ATTR_TYPE_IB;
	rdma_ah_set_port_num(&attr, c->port);
	rdma_ah_set_dlid(&attr, c->dlid);
	rdma_ah_set_sl(&attr, c->sl);
	if (c->grh) {
		union ib_gid dgid = {};

		dgid.global.subnet_prefix = cpu_to_be64(0xfe80000000000000ULL);
		dgid.global.interface_id = cpu_to_be64(0x1234);
		rdma_ah_set_grh(&attr, &dgid, 0, c->sgid_index, 64, 0);
	}

	rsim_kunit_snapshot(rsim, &before);
	ah = rdma_create_ah(pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
	if (c->err) {
		KUNIT_EXPECT_EQ(test, PTR_ERR(ah), c->err);
		rsim_kunit_expect_counts(test, rsim, &before);
		return;
	}
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ah);
	KUNIT_EXPECT_EQ(test, rsim_res_count(rsim, RSIM_RES_AH),
			before.res[RSIM_RES_AH] + 1);
	KUNIT_EXPECT_EQ(test, rdma_query_ah(ah, &q), 0);
	KUNIT_EXPECT_EQ(test, rdma_ah_get_dlid(&q), c->dlid);
	KUNIT_EXPECT_EQ(test, rdma_ah_get_sl(&q), c->sl);
	KUNIT_EXPECT_EQ(test, !!(rdma_ah_get_ah_flags(&q) & IB_AH_GRH), c->grh);
	rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
	rsim_kunit_expect_counts(test, rsim, &before);
}

static struct kunit_case rsim_pd_test_cases[] = {
	KUNIT_CASE(rsim_pd_test_alloc_dealloc_counts),
	KUNIT_CASE(rsim_pd_test_unsafe_global_rkey_uses_dma_mr),
	KUNIT_CASE(rsim_pd_test_limit_refused),
	KUNIT_CASE(rsim_pd_test_pdn_unique),
	KUNIT_CASE_PARAM(rsim_pd_test_create_ah, rsim_pd_ah_gen_params),
	RSIM_KUNIT_NO_LEFTOVERS,
	{}
};

static struct kunit_suite rsim_pd_test_suite = {
	.name = "rdmasim_pd",
	.suite_init = rsim_kunit_suite_init,
	.test_cases = rsim_pd_test_cases,
};

kunit_test_suite(rsim_pd_test_suite);
