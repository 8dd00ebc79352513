// SPDX-License-Identifier: GPL-2.0-only
/*
 * Suite rdma_conformance_mr.<device>: ib_alloc_mr() limits and types.
 *
 * ib_alloc_mr() passes max_num_sg and the MR type to the driver without
 * checking either (drivers/infiniband/core/verbs.c): the bound the
 * device advertises in max_fast_reg_page_list_len, and the types it can
 * register, are the driver's to enforce, and a refused request must come
 * back as an ERR_PTR with nothing allocated.
 */

#include <rdma/restrack.h>

#include "conformance.h"

#define RCF_SRC_ALLOC_MR	"verbs.c: ib_alloc_mr() kernel-doc"
#define RCF_SRC_DEV_ATTR	"ib_verbs.h: ib_device_attr.max_fast_reg_page_list_len"

/* Skip unless the device does fast registration at all. */
void rcf_need_frwr(struct kunit *test)
{
	struct rcf_target *t = rcf_target(test);

	if (!(t->attr.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS))
		kunit_skip(test,
			   "%s does not advertise IB_DEVICE_MEM_MGT_EXTENSIONS",
			   t->name);
	if (!t->attr.max_fast_reg_page_list_len)
		kunit_skip(test, "%s advertises max_fast_reg_page_list_len 0",
			   t->name);
}

/* MRs the core tracks on the device (kernel and user, every type) */
u32 rcf_mr_count(struct kunit *test)
{
	return rdma_restrack_count(rcf_target(test)->dev, RDMA_RESTRACK_MR,
				   true);
}

/*
 * ib_alloc_mr() must have refused (an accepted MR is released again), and
 * left the @before MRs the core tracked.
 */
static void rcf_expect_refused_mr(struct kunit *test, struct ib_mr *mr,
				  u32 before, const char *what)
{
	rcf_expect_err_ptr(test, mr, rcf_mr_free, what);
	KUNIT_EXPECT_EQ_MSG(test, rcf_mr_count(test), before,
			    "%s: MRs tracked after the refusal", what);
}

/**
 * rcf_map_same_page() - map @n entries that all name one page
 * @test: the case
 * @mr: the MR
 * @page: DMA address of a page-aligned page
 * @n: entries
 * @sg_offset: in: where to start in the first entry; out: where to resume
 *
 * A page list may name a page more than once, and ib_map_mr_sg() never
 * touches the memory, so one real page is enough to probe a bound of
 * thousands of pages.
 *
 * Return: what ib_map_mr_sg() returned.
 */
int rcf_map_same_page(struct kunit *test, struct ib_mr *mr, u64 page, int n,
		      unsigned int *sg_offset)
{
	struct scatterlist *sgl = rcf_sgl(test, n);
	int i, ret;

	for (i = 0; i < n; i++)
		rcf_sg_set(&sgl[i], page, PAGE_SIZE);
	ret = ib_map_mr_sg(mr, sgl, n, sg_offset, PAGE_SIZE);
	kunit_kfree(test, sgl);
	return ret;
}

/* a bound this check can afford to probe with one page per entry */
#define RCF_MAX_SG_PROBE	16384

/*
 * Rule: an MR allocated for 0 entries maps nothing. ib_alloc_mr() may
 * refuse max_num_sg = 0 (there is nothing to register); if it does not,
 * the MR holds no page.
 */
static void rcf_test_alloc_mr_zero_sg(struct kunit *test)
{
	struct rcf_target *t = rcf_target(test);
	struct ib_pd *pd = rcf_pd(test);
	struct rcf_buf *b;
	struct ib_mr *mr;
	int ret;

	RCF_RULE(test, "max_num_sg 0: refused, or the MR maps no page",
		 RCF_SRC_ALLOC_MR);
	rcf_need_frwr(test);
	mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, 0);
	if (!mr) {
		RCF_FAIL(test, "ib_alloc_mr(0) returned NULL, not an ERR_PTR");
		return;
	}
	if (IS_ERR(mr)) {
		kunit_info(test, "refused with %ld", PTR_ERR(mr));
		return;
	}
	rcf_mr_own(test, mr);
	b = rcf_buf_new(test, t->dev, PAGE_SIZE, 0);
	ret = rcf_map_same_page(test, mr, b->dma, 1, NULL);
	if (ret > 0)
		RCF_FAIL(test,
			 "an MR of 0 entries mapped %d entry (length %llu)",
			 ret, mr->length);
	KUNIT_EXPECT_EQ_MSG(test, rcf_mr_dereg(test, mr), 0,
			    "%s: ib_dereg_mr", t->name);
}

/*
 * Rule: max_num_sg = 1 is a valid request and its MR holds exactly one
 * page: one page maps, a second entry is left out, and an entry that
 * needs two pages is not reported mapped.
 */
static void rcf_test_alloc_mr_one_sg(struct kunit *test)
{
	struct rcf_target *t = rcf_target(test);
	struct scatterlist *sgl;
	unsigned int off = 0;
	struct rcf_buf *b;
	struct ib_mr *mr;
	int ret;

	RCF_RULE(test, "max_num_sg 1: allocated; the MR holds one page, not two",
		 RCF_SRC_ALLOC_MR);
	rcf_need_frwr(test);
	mr = rcf_mr(test, rcf_pd(test), IB_MR_TYPE_MEM_REG, 1);
	b = rcf_buf_new(test, t->dev, 2 * PAGE_SIZE, 0);

	ret = rcf_map_same_page(test, mr, b->dma, 1, NULL);
	if (ret != 1 || mr->length != PAGE_SIZE)
		RCF_FAIL(test, "one page: returned %d, length %llu (want 1, %lu)",
			 ret, mr->length, PAGE_SIZE);

	ret = rcf_map_same_page(test, mr, b->dma, 2, &off);
	if (ret != 1 || mr->length != PAGE_SIZE || off)
		RCF_FAIL(test,
			 "two one-page entries: returned %d, length %llu, sg_offset %u (want 1, %lu, 0)",
			 ret, mr->length, off, PAGE_SIZE);

	sgl = rcf_sgl(test, 1);
	rcf_sg_set(sgl, b->dma, 2 * PAGE_SIZE);
	ret = ib_map_mr_sg(mr, sgl, 1, NULL, PAGE_SIZE);
	if (ret > 0)
		RCF_FAIL(test,
			 "an entry of two pages: returned %d (mapped), length %llu; a one-page MR cannot hold it",
			 ret, mr->length);
}

/*
 * Rule: the advertised max_fast_reg_page_list_len is usable: an MR of
 * that many entries is allocated and maps that many pages, and no more.
 */
static void rcf_test_alloc_mr_max_sg(struct kunit *test)
{
	struct rcf_target *t = rcf_target(test);
	u32 max = t->attr.max_fast_reg_page_list_len;
	unsigned int off = 0;
	struct rcf_buf *b;
	struct ib_pd *pd;
	struct ib_mr *mr;
	int ret;

	RCF_RULE(test,
		 "the advertised maximum: allocated, maps that many pages, not one more",
		 RCF_SRC_DEV_ATTR);
	rcf_need_frwr(test);
	if (max > RCF_MAX_SG_PROBE)
		kunit_skip(test,
			   "max_fast_reg_page_list_len %u is more than this check probes (%u)",
			   max, RCF_MAX_SG_PROBE);
	pd = rcf_pd(test);
	mr = rcf_mr(test, pd, IB_MR_TYPE_MEM_REG, max);
	b = rcf_buf_new(test, t->dev, PAGE_SIZE, 0);

	ret = rcf_map_same_page(test, mr, b->dma, max, NULL);
	if (ret != max || mr->length != (u64)max * PAGE_SIZE)
		RCF_FAIL(test, "%u pages: returned %d, length %llu (want %u, %llu)",
			 max, ret, mr->length, max, (u64)max * PAGE_SIZE);

	ret = rcf_map_same_page(test, mr, b->dma, max + 1, &off);
	if (ret != max || mr->length != (u64)max * PAGE_SIZE || off)
		RCF_FAIL(test,
			 "%u pages: returned %d, length %llu, sg_offset %u (want %u, %llu, 0)",
			 max + 1, ret, mr->length, off, max,
			 (u64)max * PAGE_SIZE);
}

/*
 * Rule: ib_alloc_mr() refuses a max_num_sg above the advertised
 * max_fast_reg_page_list_len; the core does not check it, the driver
 * must (an MR it cannot honour, or memory sized by the caller's number).
 */
static void rcf_test_alloc_mr_above_max(struct kunit *test)
{
	struct rcf_target *t = rcf_target(test);
	u32 max = t->attr.max_fast_reg_page_list_len;
	struct ib_pd *pd = rcf_pd(test);
	char what[64];
	u32 before;

	RCF_RULE(test, "the advertised maximum + 1: refused (ERR_PTR), nothing allocated",
		 RCF_SRC_DEV_ATTR);
	rcf_need_frwr(test);
	if (max == U32_MAX)
		kunit_skip(test, "max_fast_reg_page_list_len is U32_MAX");
	snprintf(what, sizeof(what), "ib_alloc_mr(%u) (limit %u)", max + 1,
		 max);
	before = rcf_mr_count(test);
	rcf_expect_refused_mr(test, ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG,
						max + 1), before, what);
}

static const u32 rcf_huge_sg[] = {
	1U << 20,	/* x 4 KiB pages: 4 GiB, past a 32-bit byte count */
	0x7fffffff,	/* INT_MAX: page arrays of 32 GiB and more */
	0x80000000,	/* negative as an int */
	0xffffffff,	/* -1 as an int, U32_MAX */
};

static void rcf_huge_sg_desc(const u32 *v, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "max_num_sg=0x%x", *v);
}

KUNIT_ARRAY_PARAM(rcf_huge_sg, rcf_huge_sg, rcf_huge_sg_desc);

/*
 * Rule: counts that overflow an int, a byte count or an allocation size
 * are refused with an ERR_PTR, without a WARN and without leaking.
 */
static void rcf_test_alloc_mr_huge_sg(struct kunit *test)
{
	struct rcf_target *t = rcf_target(test);
	const u32 *n = test->param_value;
	struct ib_pd *pd = rcf_pd(test);
	char what[64];
	u32 before;

	RCF_RULE(test, "max_num_sg past an int or a page count: refused, no WARN, no leak",
		 RCF_SRC_DEV_ATTR);
	rcf_need_frwr(test);
	if (*n <= t->attr.max_fast_reg_page_list_len)
		kunit_skip(test, "0x%x is within the advertised limit %u", *n,
			   t->attr.max_fast_reg_page_list_len);
	/*
	 * Some drivers size an allocation by the count and the page
	 * allocator WARNs (rxe). Where KUnit cannot count that WARN it is
	 * printed instead, and the case cannot see it: a hazard then.
	 */
	if (!RSIM_KUNIT_COUNTS_WARNS && !t->hazards)
		kunit_skip(test,
			   "hazard: some drivers WARN on it, and this kernel's KUnit cannot count WARNs (no kunit_start_suppress_warning()); run with hazards=%s",
			   t->name);
	snprintf(what, sizeof(what), "ib_alloc_mr(0x%x)", *n);
	before = rcf_mr_count(test);
	rcf_expect_refused_mr(test, ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, *n),
			      before, what);
}

static const enum ib_mr_type rcf_mr_types[] = {
	IB_MR_TYPE_MEM_REG,
	IB_MR_TYPE_SG_GAPS,
	IB_MR_TYPE_DM,
	IB_MR_TYPE_USER,
	IB_MR_TYPE_DMA,
	IB_MR_TYPE_INTEGRITY,
};

static const char * const rcf_mr_type_names[] = {
	[IB_MR_TYPE_MEM_REG] = "MEM_REG",
	[IB_MR_TYPE_SG_GAPS] = "SG_GAPS",
	[IB_MR_TYPE_DM] = "DM",
	[IB_MR_TYPE_USER] = "USER",
	[IB_MR_TYPE_DMA] = "DMA",
	[IB_MR_TYPE_INTEGRITY] = "INTEGRITY",
};

static void rcf_mr_type_desc(const enum ib_mr_type *type, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", rcf_mr_type_names[*type]);
}

KUNIT_ARRAY_PARAM(rcf_mr_types, rcf_mr_types, rcf_mr_type_desc);

/*
 * Rule: ib_alloc_mr() makes fast-registration MRs only: MEM_REG where
 * the device advertises IB_DEVICE_MEM_MGT_EXTENSIONS, SG_GAPS exactly
 * where it advertises IBK_SG_GAPS_REG; DM, USER and DMA MRs come from
 * their own verbs and are refused here.
 */
static void rcf_test_alloc_mr_types(struct kunit *test)
{
	struct rcf_target *t = rcf_target(test);
	const enum ib_mr_type *type = test->param_value;
	bool want;
	struct ib_pd *pd;
	struct ib_mr *mr;
	char what[64];
	u32 before;

	RCF_RULE(test, "MEM_REG made, SG_GAPS only with IBK_SG_GAPS_REG, DM/USER/DMA refused",
		 "ib_verbs.h enum ib_mr_type, IBK_SG_GAPS_REG");
	switch (*type) {
	case IB_MR_TYPE_MEM_REG:
		rcf_need_frwr(test);
		want = true;
		break;
	case IB_MR_TYPE_SG_GAPS:
		want = t->attr.kernel_cap_flags & IBK_SG_GAPS_REG;
		break;
	case IB_MR_TYPE_INTEGRITY:
		kunit_skip(test,
			   "ib_alloc_mr() refuses INTEGRITY itself, with a WARN: those MRs come from ib_alloc_mr_integrity()");
		return;
	default:
		want = false;
		break;
	}
	pd = rcf_pd(test);
	snprintf(what, sizeof(what), "ib_alloc_mr(%s, 4)",
		 rcf_mr_type_names[*type]);
	before = rcf_mr_count(test);
	mr = ib_alloc_mr(pd, *type, 4);
	if (!want) {
		rcf_expect_refused_mr(test, mr, before, what);
		return;
	}
	if (IS_ERR_OR_NULL(mr)) {
		RCF_FAIL(test, "%s failed (%ld) though the device advertises it",
			 what, PTR_ERR(mr));
		return;
	}
	KUNIT_EXPECT_EQ_MSG(test, mr->type, *type, "%s: mr->type", what);
	KUNIT_EXPECT_EQ_MSG(test, ib_dereg_mr(mr), 0, "%s: ib_dereg_mr", what);
}

/*
 * Rule: live MRs have distinct keys: an lkey or rkey names one MR.
 */
static void rcf_test_alloc_mr_distinct_keys(struct kunit *test)
{
	struct ib_mr *mr[4];
	struct ib_pd *pd;
	int i, j;

	RCF_RULE(test, "live MRs have distinct lkeys and distinct rkeys",
		 "ib_verbs.h struct ib_mr; IBA vol. 1 ch. 10");
	rcf_need_frwr(test);
	pd = rcf_pd(test);
	for (i = 0; i < ARRAY_SIZE(mr); i++)
		mr[i] = rcf_mr(test, pd, IB_MR_TYPE_MEM_REG, 1);
	for (i = 0; i < ARRAY_SIZE(mr); i++)
		for (j = i + 1; j < ARRAY_SIZE(mr); j++)
			if (mr[i]->lkey == mr[j]->lkey ||
			    mr[i]->rkey == mr[j]->rkey)
				RCF_FAIL(test,
					 "MRs %d, %d share a key: lkeys %x %x rkeys %x %x",
					 i, j, mr[i]->lkey, mr[j]->lkey,
					 mr[i]->rkey, mr[j]->rkey);
}

static struct kunit_case rcf_mr_cases[] = {
	RCF_CASE(alloc_mr_zero_sg),
	RCF_CASE(alloc_mr_one_sg),
	RCF_CASE(alloc_mr_max_sg),
	RCF_CASE(alloc_mr_above_max),
	RCF_CASE_PARAM(alloc_mr_huge_sg, rcf_huge_sg_gen_params),
	RCF_CASE_PARAM(alloc_mr_types, rcf_mr_types_gen_params),
	RCF_CASE(alloc_mr_distinct_keys),
	{}
};

struct kunit_suite rcf_mr_suite = {
	.name = "rdma_conformance_mr",
	.test_cases = rcf_mr_cases,
};
