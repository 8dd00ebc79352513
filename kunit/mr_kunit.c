// SPDX-License-Identifier: GPL-2.0-only
/*
 * Suite rdmasim_mr: MR allocation limits, types, keys, DMA and user MRs.
 * The map_mr_sg rules have their own suite (rdmasim_map).
 */

#include <linux/mman.h>
#include <linux/slab.h>

#include "helpers.h"

#define RSIM_FRPL_MAX	512	/* rsim_default_limits.max_fast_reg_page_list_len */

struct rsim_mr_alloc_limits_case {
	const char *name;
	enum ib_mr_type type;
	u32 max_num_sg;
	int err;
};

static const struct rsim_mr_alloc_limits_case rsim_mr_alloc_limits_cases[] = {
	{ "mem_reg_1", IB_MR_TYPE_MEM_REG, 1, 0 },
	{ "mem_reg_max", IB_MR_TYPE_MEM_REG, RSIM_FRPL_MAX, 0 },
	{ "mem_reg_zero", IB_MR_TYPE_MEM_REG, 0, -EINVAL },
	{ "mem_reg_max_plus_1", IB_MR_TYPE_MEM_REG, RSIM_FRPL_MAX + 1, -EINVAL },
	{ "mem_reg_u32_max", IB_MR_TYPE_MEM_REG, U32_MAX, -EINVAL },
	{ "sg_gaps_1", IB_MR_TYPE_SG_GAPS, 1, 0 },
	{ "sg_gaps_max", IB_MR_TYPE_SG_GAPS, RSIM_FRPL_MAX, 0 },
	{ "sg_gaps_zero", IB_MR_TYPE_SG_GAPS, 0, -EINVAL },
	{ "sg_gaps_max_plus_1", IB_MR_TYPE_SG_GAPS, RSIM_FRPL_MAX + 1, -EINVAL },
	{ "type_dm", IB_MR_TYPE_DM, 8, -EINVAL },
	{ "type_user", IB_MR_TYPE_USER, 8, -EINVAL },
	{ "type_dma", IB_MR_TYPE_DMA, 8, -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(rsim_mr_alloc_limits, rsim_mr_alloc_limits_cases, name);

static void rsim_mr_test_alloc_limits(struct kunit *test)
{
	const struct rsim_mr_alloc_limits_case *c = test->param_value;
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	struct ib_pd *pd = rsim_kunit_pd(test, rsim);
	struct rsim_kunit_counts before;
	struct ib_mr *mr;

	KUNIT_ASSERT_EQ(test, rsim->ibdev.attrs.max_fast_reg_page_list_len,
			RSIM_FRPL_MAX);
	rsim_kunit_snapshot(rsim, &before);
	mr = ib_alloc_mr(pd, c->type, c->max_num_sg);
	if (c->err) {
		KUNIT_EXPECT_EQ(test, PTR_ERR(mr), c->err);
		rsim_kunit_expect_counts(test, rsim, &before);
		KUNIT_EXPECT_EQ(test, atomic_read(&pd->usecnt), 0);
		return;
	}
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	KUNIT_EXPECT_EQ(test, mr->type, c->type);
	KUNIT_EXPECT_EQ(test, to_rsim_mr(mr)->max_segs, c->max_num_sg);
	KUNIT_EXPECT_EQ(test, rsim_res_count(rsim, RSIM_RES_MR),
			before.res[RSIM_RES_MR] + 1);
	ib_dereg_mr(mr);
	rsim_kunit_expect_counts(test, rsim, &before);
}

static void rsim_mr_test_keys_unique(struct kunit *test)
{
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	struct ib_pd *pd = rsim_kunit_pd(test, rsim);
	const int n = 64;
	u32 *keys;
	int i, j;

	keys = kunit_kcalloc(test, n, sizeof(*keys), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, keys);
	for (i = 0; i < n; i++) {
		struct ib_mr *mr = rsim_kunit_mr(test, pd, IB_MR_TYPE_MEM_REG,
						 4);

		KUNIT_EXPECT_EQ(test, mr->lkey, mr->rkey);
		KUNIT_EXPECT_NE(test, RSIM_KEY_INDEX(mr->lkey), 0);
		KUNIT_EXPECT_EQ(test, RSIM_KEY_INDEX(mr->lkey),
				to_rsim_mr(mr)->index);
		KUNIT_EXPECT_NE(test, mr->lkey, RSIM_LOCAL_DMA_LKEY);
		keys[i] = mr->lkey;
	}
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++) {
			KUNIT_EXPECT_NE(test, keys[i], keys[j]);
			KUNIT_EXPECT_NE(test, RSIM_KEY_INDEX(keys[i]),
					RSIM_KEY_INDEX(keys[j]));
		}
	/* the 8-bit variant moves from one MR to the next */
	KUNIT_EXPECT_NE(test, RSIM_KEY_VARIANT(keys[0]),
			RSIM_KEY_VARIANT(keys[1]));
}

static void rsim_mr_test_index_not_reused_at_once(struct kunit *test)
{
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	struct ib_pd *pd = rsim_kunit_pd(test, rsim);
	struct ib_mr *mr;
	u32 first;

	mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, 4);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	first = mr->lkey;
	ib_dereg_mr(mr);
	mr = rsim_kunit_mr(test, pd, IB_MR_TYPE_MEM_REG, 4);
	/* cyclic allocation: a stale key never names the next MR */
	KUNIT_EXPECT_NE(test, RSIM_KEY_INDEX(mr->lkey), RSIM_KEY_INDEX(first));
}

static void rsim_mr_test_limit_refused(struct kunit *test)
{
	struct rsim_dev_config cfg;
	struct rsim_kunit_counts before;
	struct rsim_dev *rsim;
	struct ib_pd *pd;
	int i, n;

	rsim_default_config(&cfg);
	cfg.limits.max_res[RSIM_RES_MR] = 8;
	rsim = rsim_kunit_dev(test, &cfg);
	pd = rsim_kunit_pd(test, rsim);
	n = 8 - rsim_res_count(rsim, RSIM_RES_MR);
	for (i = 0; i < n; i++)
		rsim_kunit_mr(test, pd, i & 1 ? IB_MR_TYPE_SG_GAPS :
				  IB_MR_TYPE_MEM_REG, 2);

	rsim_kunit_snapshot(rsim, &before);
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, 2)),
			-ENOMEM);
	/* DMA MRs count too */
	KUNIT_EXPECT_EQ(test,
			PTR_ERR(ib_alloc_pd(&rsim->ibdev,
					    IB_PD_UNSAFE_GLOBAL_RKEY)),
			-ENOMEM);
	rsim_kunit_expect_counts(test, rsim, &before);
	KUNIT_EXPECT_EQ(test, atomic_read(&rsim->res[RSIM_RES_MR].refused),
			before.refused[RSIM_RES_MR] + 2);
}

static void rsim_mr_test_map_on_dma_mr_refused(struct kunit *test)
{
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	struct ib_pd *pd = ib_alloc_pd(&rsim->ibdev, IB_PD_UNSAFE_GLOBAL_RKEY);
	struct scatterlist sg;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pd);
	sg_init_table(&sg, 1);
	sg_dma_address(&sg) = 0x10000;
	sg_dma_len(&sg) = 4096;
	KUNIT_EXPECT_EQ(test, ib_map_mr_sg(pd->__internal_mr, &sg, 1, NULL,
					   PAGE_SIZE), -EINVAL);
	ib_dealloc_pd(pd);
}

static void rsim_mr_user_mr_free(void *mr)
{
	ib_dereg_mr(mr);
}

struct rsim_mr_user_case {
	const char *name;
	unsigned long prot;	/* of the user mapping */
	bool zero_len;		/* register 0 bytes instead of 2 pages */
	int access;
	int err;
};

#define RSIM_LW		IB_ACCESS_LOCAL_WRITE
#define RSIM_RW		IB_ACCESS_REMOTE_WRITE
#define RSIM_RR		IB_ACCESS_REMOTE_READ

static const struct rsim_mr_user_case rsim_mr_user_cases[] = {
	{ "rw_mem_local_write", PROT_READ | PROT_WRITE, false, RSIM_LW, 0 },
	{ "rw_mem_remote_rw", PROT_READ | PROT_WRITE, false,
	  RSIM_LW | RSIM_RW | RSIM_RR, 0 },
	{ "ro_mem_read_only", PROT_READ, false, RSIM_RR, 0 },
	{ "ro_mem_local_write", PROT_READ, false, RSIM_LW, -EFAULT },
	{ "remote_write_without_local", PROT_READ | PROT_WRITE, false, RSIM_RW,
	  -EINVAL },
	{ "unknown_access_bit", PROT_READ | PROT_WRITE, false, 1 << 30,
	  -EINVAL },
	{ "remote_atomic", PROT_READ | PROT_WRITE, false,
	  RSIM_LW | IB_ACCESS_REMOTE_ATOMIC, 0 },
	/* remote atomic needs local write, as remote write does */
	{ "remote_atomic_without_local", PROT_READ | PROT_WRITE, false,
	  IB_ACCESS_REMOTE_ATOMIC, -EINVAL },
	{ "zero_length", PROT_READ | PROT_WRITE, true, RSIM_LW, -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(rsim_mr_user, rsim_mr_user_cases, name);

static void rsim_mr_test_reg_user_mr(struct kunit *test)
{
	const struct rsim_mr_user_case *c = test->param_value;
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	struct ib_pd *pd = rsim_kunit_pd(test, rsim);
	struct rsim_kunit_counts before;
	unsigned long uaddr;
	u64 len = 2 * PAGE_SIZE;
	struct ib_mr *mr;

	uaddr = rsim_kunit_vm_mmap(test, 2 * PAGE_SIZE, c->prot);
	if (c->zero_len)
		len = 0;

	rsim_kunit_snapshot(rsim, &before);
	mr = ib_reg_user_mr(pd, uaddr, len, uaddr, c->access);
	if (c->err) {
		KUNIT_EXPECT_EQ(test, PTR_ERR(mr), c->err);
		rsim_kunit_expect_counts(test, rsim, &before);
		return;
	}
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, rsim_mr_user_mr_free,
						  mr));
	KUNIT_EXPECT_EQ(test, mr->type, IB_MR_TYPE_USER);
	KUNIT_EXPECT_EQ(test, to_rsim_mr(mr)->access, c->access);
	KUNIT_EXPECT_NOT_NULL(test, to_rsim_mr(mr)->umem);
	KUNIT_EXPECT_EQ(test, mr->length, len);
	KUNIT_EXPECT_EQ(test, mr->iova, (u64)uaddr);
	KUNIT_EXPECT_EQ(test, rsim_res_count(rsim, RSIM_RES_MR),
			before.res[RSIM_RES_MR] + 1);
}

static void rsim_mr_test_reg_user_mr_limits(struct kunit *test)
{
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	struct ib_pd *pd = rsim_kunit_pd(test, rsim);
	struct rsim_kunit_counts before;
	u64 big = rsim->ibdev.attrs.max_mr_size + PAGE_SIZE;

	rsim_kunit_snapshot(rsim, &before);
	/* beyond max_mr_size, and iova + length wrapping */
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_reg_user_mr(pd, 0x10000, big, 0x10000,
						     RSIM_LW)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_reg_user_mr(pd, 0x10000, PAGE_SIZE,
						     U64_MAX - 100, RSIM_LW)),
			-EINVAL);
	rsim_kunit_expect_counts(test, rsim, &before);
}

static struct kunit_case rsim_mr_test_cases[] = {
	KUNIT_CASE_PARAM(rsim_mr_test_alloc_limits, rsim_mr_alloc_limits_gen_params),
	KUNIT_CASE(rsim_mr_test_keys_unique),
	KUNIT_CASE(rsim_mr_test_index_not_reused_at_once),
	KUNIT_CASE(rsim_mr_test_limit_refused),
	KUNIT_CASE(rsim_mr_test_map_on_dma_mr_refused),
	KUNIT_CASE_PARAM(rsim_mr_test_reg_user_mr, rsim_mr_user_gen_params),
	KUNIT_CASE(rsim_mr_test_reg_user_mr_limits),
	RSIM_KUNIT_NO_LEFTOVERS,
	{}
};

static struct kunit_suite rsim_mr_test_suite = {
	.name = "rdmasim_mr",
	.suite_init = rsim_kunit_suite_init,
	.test_cases = rsim_mr_test_cases,
};

kunit_test_suite(rsim_mr_test_suite);
