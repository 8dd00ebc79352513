// SPDX-License-Identifier: GPL-2.0-only
/*
 * Suite rdmasim_map: ib_map_mr_sg() on rdmasim, rule by rule.
 *
 * Every case first maps a known baseline (one page at 0x50000), then runs
 * its own mapping; a refused or empty mapping must leave the baseline
 * untouched, including the page size the core stores before the driver
 * sees the call.
 */

#include <linux/dma-mapping.h>
#include <linux/prandom.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "helpers.h"

#define P4K		0x1000ULL
#define TOP		0xffffffffffffffffULL
#define MAX_ENTS	4

struct rsim_map_ent {
	u64 addr;
	u32 len;
};

struct rsim_map_case {
	const char *name;
	enum ib_mr_type type;
	u32 max_num_sg;
	u32 page_size;
	int nents;
	struct rsim_map_ent sg[MAX_ENTS];
	u32 in_off;
	/* expected */
	int ret;
	u32 out_off;
	u64 iova;
	u64 length;
	u32 nsegs;
	u64 seg0;
};

#define MR	IB_MR_TYPE_MEM_REG
#define GAPS	IB_MR_TYPE_SG_GAPS

static const struct rsim_map_case rsim_map_cases[] = {
	/* name, type, max_num_sg, page_size, nents, sg, in_off,
	 * ret, out_off, iova, length, nsegs, seg0
	 */
	{ "one_aligned_page", MR, 4, P4K, 1, { { 0x10000, 0x1000 } }, 0,
	  1, 0, 0x10000, 0x1000, 1, 0x10000 },
	{ "three_contiguous_pages", MR, 4, P4K, 3,
	  { { 0x10000, 0x1000 }, { 0x11000, 0x1000 }, { 0x12000, 0x1000 } }, 0,
	  3, 0, 0x10000, 0x3000, 3, 0x10000 },
	{ "aligned_entries_need_not_touch", MR, 4, P4K, 2,
	  { { 0x10000, 0x1000 }, { 0x40000, 0x1000 } }, 0,
	  2, 0, 0x10000, 0x2000, 2, 0x10000 },
	{ "first_entry_offset", MR, 4, P4K, 1, { { 0x10000, 0x2000 } }, 0x100,
	  1, 0, 0x10100, 0x1f00, 2, 0x10000 },
	{ "unaligned_first_entry", MR, 4, P4K, 1, { { 0x10800, 0x1000 } }, 0,
	  1, 0, 0x10800, 0x1000, 2, 0x10000 },
	{ "short_last_entry", MR, 4, P4K, 2,
	  { { 0x10000, 0x1000 }, { 0x11000, 0x200 } }, 0,
	  2, 0, 0x10000, 0x1200, 2, 0x10000 },
	{ "gap_after_short_entry_stops", MR, 4, P4K, 2,
	  { { 0x10000, 0x800 }, { 0x20000, 0x1000 } }, 0,
	  1, 0, 0x10000, 0x800, 1, 0x10000 },
	{ "unaligned_start_gap_stops", MR, 4, P4K, 2,
	  { { 0x10000, 0x1000 }, { 0x20100, 0x100 } }, 0,
	  1, 0, 0x10000, 0x1000, 1, 0x10000 },
	{ "contiguous_unaligned_coalesce", MR, 4, P4K, 3,
	  { { 0x10000, 0x800 }, { 0x10800, 0x800 }, { 0x11000, 0x1000 } }, 0,
	  3, 0, 0x10000, 0x2000, 2, 0x10000 },
	{ "capacity_stops_between_entries", MR, 2, P4K, 3,
	  { { 0x10000, 0x1000 }, { 0x11000, 0x1000 }, { 0x12000, 0x1000 } }, 0,
	  2, 0, 0x10000, 0x2000, 2, 0x10000 },
	{ "capacity_stops_inside_first_entry", MR, 3, P4K, 1,
	  { { 0x10000, 0x5000 } }, 0,
	  0, 0x2000, 0x10000, 0x2000, 3, 0x10000 },
	{ "capacity_stops_inside_second_entry", MR, 3, P4K, 2,
	  { { 0x10000, 0x1000 }, { 0x20000, 0x4000 } }, 0,
	  1, 0x1000, 0x10000, 0x2000, 3, 0x10000 },
	{ "length_rule_1mib_into_16_pages", MR, 16, P4K, 1,
	  { { 0x100000, 0x100000 } }, 0,
	  0, 0xf000, 0x100000, 0xf000, 16, 0x100000 },
	/* ib_sg_to_pages() alone would report length -0x800 here */
	{ "one_page_mr_unaligned_two_page_entry", MR, 1, P4K, 1,
	  { { 0x10800, 0x1000 } }, 0,
	  0, 0, 0x50000, 0x1000, 1, 0x50000 },
	{ "one_page_mr_offset_into_two_pages", MR, 1, P4K, 1,
	  { { 0x10000, 0x1800 } }, 0x800,
	  0, 0x800, 0x50000, 0x1000, 1, 0x50000 },
	{ "offset_equal_to_length", MR, 4, P4K, 1, { { 0x10000, 0x1000 } },
	  0x1000, -EINVAL, 0x1000, 0x50000, 0x1000, 1, 0x50000 },
	{ "offset_beyond_length", MR, 4, P4K, 1, { { 0x10000, 0x1000 } },
	  0x1001, -EINVAL, 0x1001, 0x50000, 0x1000, 1, 0x50000 },
	{ "zero_length_first_entry", MR, 4, P4K, 1, { { 0x10000, 0 } }, 0,
	  -EINVAL, 0, 0x50000, 0x1000, 1, 0x50000 },
	{ "zero_length_second_entry", MR, 4, P4K, 2,
	  { { 0x10000, 0x1000 }, { 0x11000, 0 } }, 0,
	  1, 0, 0x10000, 0x1000, 1, 0x10000 },
	{ "no_entries", MR, 4, P4K, 0, { { 0x10000, 0x1000 } }, 0,
	  -EINVAL, 0, 0x50000, 0x1000, 1, 0x50000 },
	{ "page_size_zero", MR, 4, 0, 1, { { 0x10000, 0x1000 } }, 0,
	  -EINVAL, 0, 0x50000, 0x1000, 1, 0x50000 },
	{ "page_size_3000", MR, 4, 3000, 1, { { 0x10000, 0x1000 } }, 0,
	  -EINVAL, 0, 0x50000, 0x1000, 1, 0x50000 },
	{ "page_size_2k_below_cap", MR, 4, 0x800, 1, { { 0x10000, 0x1000 } },
	  0, -EINVAL, 0, 0x50000, 0x1000, 1, 0x50000 },
	{ "page_size_12k_not_power_of_2", MR, 4, 0x3000, 1,
	  { { 0x10000, 0x1000 } }, 0,
	  -EINVAL, 0, 0x50000, 0x1000, 1, 0x50000 },
	{ "page_size_2g_above_cap", MR, 4, 0x80000000, 1,
	  { { 0x10000, 0x1000 } }, 0,
	  -EINVAL, 0, 0x50000, 0x1000, 1, 0x50000 },
	{ "page_size_64k", MR, 2, 0x10000, 1, { { 0x10000, 0x20000 } }, 0,
	  1, 0, 0x10000, 0x20000, 2, 0x10000 },
	{ "page_size_64k_unaligned", MR, 2, 0x10000, 1,
	  { { 0x18000, 0x10000 } }, 0,
	  1, 0, 0x18000, 0x10000, 2, 0x10000 },
	{ "page_size_1g", MR, 1, 0x40000000, 1, { { 0x40000000, 0x1000 } }, 0,
	  1, 0, 0x40000000, 0x1000, 1, 0x40000000 },
	/* the core loop would wrap to 0 and report one page mapped */
	{ "wrap_1mib_at_top_256_pages", MR, 256, P4K, 1,
	  { { 0xfffffffffff00000ULL, 0x100000 } }, 0,
	  -EINVAL, 0, 0x50000, 0x1000, 1, 0x50000 },
	{ "wrap_1mib_at_top_512_pages", MR, 512, P4K, 1,
	  { { 0xfffffffffff00000ULL, 0x100000 } }, 0,
	  -EINVAL, 0, 0x50000, 0x1000, 1, 0x50000 },
	{ "partial_top_page", MR, 4, P4K, 1,
	  { { 0xfffffffffffff000ULL, 0x800 } }, 0,
	  -EINVAL, 0, 0x50000, 0x1000, 1, 0x50000 },
	{ "last_page_below_top", MR, 4, P4K, 1,
	  { { 0xffffffffffffe000ULL, 0x1000 } }, 0,
	  1, 0, 0xffffffffffffe000ULL, 0x1000, 1, 0xffffffffffffe000ULL },
	{ "valid_entry_then_wrapping_entry", MR, 512, P4K, 2,
	  { { 0x10000, 0x1000 }, { 0xfffffffffff00000ULL, 0x100000 } }, 0,
	  1, 0, 0x10000, 0x1000, 1, 0x10000 },
	{ "gaps_accepts_gaps", GAPS, 4, P4K, 3,
	  { { 0x10000, 0x800 }, { 0x20100, 0x300 }, { 0x30000, 0x1000 } }, 0,
	  3, 0, 0x10000, 0x1b00, 3, 0x10000 },
	{ "gaps_capacity_counts_entries", GAPS, 2, P4K, 3,
	  { { 0x10000, 0x800 }, { 0x20100, 0x300 }, { 0x30000, 0x1000 } }, 0,
	  2, 0, 0x10000, 0xb00, 2, 0x10000 },
	{ "gaps_ignores_page_size", GAPS, 4, 3000, 2,
	  { { 0x10000, 0x800 }, { 0x20100, 0x300 } }, 0,
	  2, 0, 0x10000, 0xb00, 2, 0x10000 },
	{ "gaps_first_entry_offset", GAPS, 4, P4K, 1, { { 0x10000, 0x1000 } },
	  0x100, 1, 0, 0x10100, 0xf00, 1, 0x10100 },
	{ "gaps_end_at_top_ok", GAPS, 4, P4K, 1,
	  { { 0xfffffffffffff000ULL, 0xfff } }, 0,
	  1, 0, 0xfffffffffffff000ULL, 0xfff, 1, 0xfffffffffffff000ULL },
	{ "gaps_wrap_refused", GAPS, 4, P4K, 1,
	  { { 0xfffffffffffff000ULL, 0x1000 } }, 0,
	  -EINVAL, 0, 0x50000, 0x1000, 1, 0x50000 },
};

KUNIT_ARRAY_PARAM_DESC(rsim_map, rsim_map_cases, name);

static void rsim_map_fill_sg(struct scatterlist *sgl,
			     const struct rsim_map_ent *e, int n)
{
	int i;

	sg_init_table(sgl, n);
	for (i = 0; i < n; i++) {
		sg_dma_address(&sgl[i]) = e[i].addr;
		sg_dma_len(&sgl[i]) = e[i].len;
	}
}

static void rsim_map_baseline(struct kunit *test, struct ib_mr *mr)
{
	const struct rsim_map_ent base = { 0x50000, 0x1000 };
	struct scatterlist sg;

	rsim_map_fill_sg(&sg, &base, 1);
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg(mr, &sg, 1, NULL, P4K), 1);
}

static void rsim_map_test_rule(struct kunit *test)
{
	const struct rsim_map_case *c = test->param_value;
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	struct ib_pd *pd = rsim_kunit_pd(test, rsim);
	struct scatterlist sgl[MAX_ENTS];
	unsigned int off = c->in_off;
	struct rsim_mr *rmr;
	struct ib_mr *mr;
	u32 i;
	int ret;

	mr = rsim_kunit_mr(test, pd, c->type, c->max_num_sg);
	rmr = to_rsim_mr(mr);
	rsim_map_baseline(test, mr);

	rsim_map_fill_sg(sgl, c->sg, c->nents ? c->nents : 1);
	ret = ib_map_mr_sg(mr, sgl, c->nents, &off, c->page_size);

	KUNIT_EXPECT_EQ(test, ret, c->ret);
	KUNIT_EXPECT_EQ(test, off, c->out_off);
	KUNIT_EXPECT_EQ(test, mr->iova, c->iova);
	KUNIT_EXPECT_EQ(test, mr->length, c->length);
	KUNIT_EXPECT_EQ(test, rmr->nsegs, c->nsegs);
	if (rmr->nsegs)
		KUNIT_EXPECT_EQ(test, rmr->segs[0].addr, c->seg0);
	/* never more entries than max_num_sg */
	KUNIT_EXPECT_LE(test, rmr->nsegs, c->max_num_sg);
	if (c->iova == 0x50000) {
		/* the baseline survived, page size included */
		KUNIT_EXPECT_EQ(test, mr->page_size, P4K);
		return;
	}
	if (c->type != IB_MR_TYPE_MEM_REG)
		return;
	/* the length rule, and every page aligned to the page size */
	KUNIT_EXPECT_EQ(test, mr->page_size, c->page_size);
	KUNIT_EXPECT_LE(test, mr->length, (u64)c->max_num_sg * c->page_size);
	for (i = 0; i < rmr->nsegs; i++) {
		KUNIT_EXPECT_EQ(test, rmr->segs[i].addr & (c->page_size - 1), 0);
		KUNIT_EXPECT_EQ(test, rmr->segs[i].len, c->page_size);
	}
}

/* A caller resumes a partial mapping where *sg_offset says. */
static void rsim_map_test_partial_then_resume(struct kunit *test)
{
	const struct rsim_map_ent ent = { 0x10000, 0x5000 };
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	struct ib_pd *pd = rsim_kunit_pd(test, rsim);
	struct ib_mr *mr = rsim_kunit_mr(test, pd, IB_MR_TYPE_MEM_REG, 3);
	struct scatterlist sg;
	unsigned int off = 0;
	u64 covered;

	rsim_map_fill_sg(&sg, &ent, 1);
	KUNIT_EXPECT_EQ(test, ib_map_mr_sg(mr, &sg, 1, &off, P4K), 0);
	KUNIT_EXPECT_EQ(test, off, 0x2000);
	covered = mr->length;

	KUNIT_EXPECT_EQ(test, ib_map_mr_sg(mr, &sg, 1, &off, P4K), 1);
	KUNIT_EXPECT_EQ(test, off, 0);
	KUNIT_EXPECT_EQ(test, mr->iova, 0x12000);
	KUNIT_EXPECT_EQ(test, mr->length, 0x3000);
	/* the two calls together cover the entry exactly once */
	KUNIT_EXPECT_EQ(test, covered + mr->length, (u64)ent.len);
}

/* max_num_sg * page_size, over a grid of shapes. */
static void rsim_map_test_length_rule_grid(struct kunit *test)
{
	static const u32 page_sizes[] = { 0x1000, 0x2000, 0x10000 };
	static const u32 lens[] = { 1, 0x800, 0x1000, 0x1801, 0x10000,
				    0x23456 };
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	struct ib_pd *pd = rsim_kunit_pd(test, rsim);
	u32 max_sg, p, l, a;

	for (max_sg = 1; max_sg <= 4; max_sg++) {
		struct ib_mr *mr = rsim_kunit_mr(test, pd, IB_MR_TYPE_MEM_REG,
						 max_sg);

		for (p = 0; p < ARRAY_SIZE(page_sizes); p++)
			for (l = 0; l < ARRAY_SIZE(lens); l++)
				for (a = 0; a < 3; a++) {
					struct rsim_map_ent e[2] = {
						{ 0x100000 + a * 0x700, lens[l] },
						{ 0x100000 + a * 0x700 + lens[l],
						  lens[(l + a) % ARRAY_SIZE(lens)] },
					};
					struct scatterlist sgl[2];
					u64 ps = page_sizes[p];
					int ret;

					rsim_map_fill_sg(sgl, e, 2);
					ret = ib_map_mr_sg(mr, sgl, 2, NULL, ps);
					KUNIT_EXPECT_GE(test, ret, 0);
					KUNIT_EXPECT_LE(test, mr->length,
							max_sg * ps);
					KUNIT_EXPECT_LE(test,
							to_rsim_mr(mr)->nsegs,
							max_sg);
					if (ret == 2)
						KUNIT_EXPECT_EQ(test, mr->length,
								(u64)e[0].len +
								e[1].len);
				}
	}
}

/* Real memory through the real DMA API. */
static void rsim_map_test_dma_mapped_pages(struct kunit *test)
{
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	struct ib_device *ibdev = &rsim->ibdev;
	struct ib_pd *pd = rsim_kunit_pd(test, rsim);
	struct ib_mr *mr = rsim_kunit_mr(test, pd, IB_MR_TYPE_MEM_REG, 8);
	struct rsim_mr *rmr = to_rsim_mr(mr);
	struct scatterlist sgl[3];
	struct page *pages[3];
	int i, n;

	sg_init_table(sgl, 3);
	for (i = 0; i < 3; i++) {
		pages[i] = alloc_page(GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, pages[i]);
		/* last entry short: a page-aligned prefix of its page */
		sg_set_page(&sgl[i], pages[i], i == 2 ? 100 : PAGE_SIZE, 0);
	}
	n = ib_dma_map_sg(ibdev, sgl, 3, DMA_BIDIRECTIONAL);
	KUNIT_ASSERT_GT(test, n, 0);

	KUNIT_EXPECT_EQ(test, ib_map_mr_sg(mr, sgl, n, NULL, PAGE_SIZE), n);
	KUNIT_EXPECT_EQ(test, mr->iova, sg_dma_address(&sgl[0]));
	KUNIT_EXPECT_EQ(test, mr->length, 2 * PAGE_SIZE + 100);
	KUNIT_EXPECT_EQ(test, rmr->nsegs, 3);
	for (i = 0; i < n && i < 3; i++)
		KUNIT_EXPECT_EQ(test, rmr->segs[i].addr,
				sg_dma_address(&sgl[i]) & PAGE_MASK);

	ib_dma_unmap_sg(ibdev, sgl, 3, DMA_BIDIRECTIONAL);
	for (i = 0; i < 3; i++)
		__free_page(pages[i]);
}

static void rsim_map_test_sg_prefix(struct kunit *test)
{
	const struct rsim_map_ent e[3] = {
		{ 0x10000, 0x1000 },
		{ 0xffffffffffffe000ULL, 0x1000 },
		{ 0xfffffffffffff000ULL, 0x1000 },
	};
	struct scatterlist sgl[3];

	rsim_map_fill_sg(sgl, e, 3);
	KUNIT_EXPECT_EQ(test, rsim_mr_sg_prefix(sgl, 3, 0, P4K), 2);
	KUNIT_EXPECT_EQ(test, rsim_mr_sg_prefix(sgl, 3, 0, 0), 2);
	KUNIT_EXPECT_EQ(test, rsim_mr_sg_prefix(sgl, 3, 0x1000, P4K), 0);
	KUNIT_EXPECT_EQ(test, rsim_mr_sg_prefix(sgl, 1, 0xfff, P4K), 1);
	/* ends 4K below the top: fine for 4K pages, wraps for 8K pages */
	KUNIT_EXPECT_EQ(test, rsim_mr_sg_prefix(&sgl[1], 1, 0, P4K), 1);
	KUNIT_EXPECT_EQ(test, rsim_mr_sg_prefix(&sgl[1], 1, 0, 0x2000), 0);
}

/* the reference walk: the core helper, its set_page into @pages */
struct rsim_map_ref {
	struct ib_mr ibmr;
	u32 n;
	u32 max;
	u64 pages[64];
};

static int rsim_map_ref_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct rsim_map_ref *r = container_of(ibmr, struct rsim_map_ref, ibmr);

	if (r->n >= r->max)
		return -ENOMEM;
	r->pages[r->n++] = addr;
	return 0;
}

/* a random entry: mostly continuing the last, sometimes not */
static void rsim_map_rand_ent(struct rnd_state *rs, struct rsim_map_ent *e,
			      u64 prev_end, u64 ps)
{
	u32 r = prandom_u32_state(rs);

	switch (r % 8) {
	case 0:		/* near the top of the address space */
		e->addr = 0 - ps * (1 + r / 8 % 4) + (r / 64 % 2) * 0x80;
		break;
	case 1:		/* a gap */
		e->addr = prev_end + ps;
		break;
	case 2:		/* unaligned, contiguous or not */
		e->addr = prev_end + (r / 8 % 3) * 0x100;
		break;
	default:
		e->addr = prev_end ? prev_end : 0x100000 + (r / 8 % 4) * ps;
	}
	switch (r / 512 % 6) {
	case 0:
		e->len = 0;
		break;
	case 1:
		e->len = 1 + r / 4096 % 0x1800;
		break;
	default:
		e->len = ps * (1 + r / 4096 % 3);
	}
}

/*
 * rsim_sg_to_pages() against what map_mr_sg did before it: a pass of
 * rsim_mr_sg_prefix(), then the core's ib_sg_to_pages(). Random lists
 * (contiguous, gapped, unaligned, empty and near-the-top entries, any
 * offset into the first, 4K to 64K pages, a room of 1 to 16 pages): the
 * same return value, offset out, iova, length and pages, every time.
 */
static void rsim_map_test_walk_matches_core(struct kunit *test)
{
	static const u64 sizes[] = { 0x1000, 0x2000, 0x10000 };
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	struct ib_pd *pd = rsim_kunit_pd(test, rsim);
	struct ib_mr *mr = rsim_kunit_mr(test, pd, MR, 64);
	struct rsim_mr *rmr = to_rsim_mr(mr);
	struct rsim_map_ref *ref;
	u32 max_segs = rmr->max_segs, iter, compared = 0;
	struct rsim_map_ent e[MAX_ENTS];
	struct scatterlist sgl[MAX_ENTS];
	struct rnd_state rs;

	ref = kunit_kzalloc(test, sizeof(*ref), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ref);
	prandom_seed_state(&rs, 24);
	for (iter = 0; iter < 20000; iter++) {
		u64 ps = sizes[prandom_u32_state(&rs) % ARRAY_SIZE(sizes)];
		int n = 1 + prandom_u32_state(&rs) % MAX_ENTS, i, nents;
		unsigned int off = 0, roff, ooff;
		u64 end = 0;
		int rret, oret;

		for (i = 0; i < n; i++) {
			rsim_map_rand_ent(&rs, &e[i], end, ps);
			end = e[i].addr + e[i].len;
		}
		if (e[0].len && prandom_u32_state(&rs) % 3 == 0)
			off = prandom_u32_state(&rs) % e[0].len;
		rsim_map_fill_sg(sgl, e, n);
		/* a first entry map_mr_sg refuses never reaches a walk */
		if (!rsim_mr_sg_prefix(sgl, 1, off, ps))
			continue;

		memset(ref, 0, sizeof(*ref));
		ref->ibmr.page_size = ps;
		ref->max = 1 + prandom_u32_state(&rs) % 16;
		nents = rsim_mr_sg_prefix(sgl, n, off, ps);
		roff = off;
		rret = ib_sg_to_pages(&ref->ibmr, sgl, nents, &roff,
				      rsim_map_ref_set_page);

		rmr->max_segs = ref->max;
		mr->page_size = ps;
		ooff = off;
		oret = rsim_sg_to_pages(rmr, sgl, n, &ooff);
		rmr->max_segs = max_segs;

		compared++;
		KUNIT_EXPECT_EQ_MSG(test, oret, rret, "iteration %u", iter);
		KUNIT_EXPECT_EQ_MSG(test, ooff, roff, "iteration %u", iter);
		KUNIT_EXPECT_EQ_MSG(test, mr->iova, ref->ibmr.iova,
				    "iteration %u", iter);
		KUNIT_EXPECT_EQ_MSG(test, mr->length, ref->ibmr.length,
				    "iteration %u", iter);
		KUNIT_EXPECT_EQ_MSG(test, rmr->nsegs, ref->n, "iteration %u",
				    iter);
		for (i = 0; i < ref->n && i < rmr->nsegs; i++) {
			KUNIT_EXPECT_EQ(test, rmr->segs[i].addr, ref->pages[i]);
			KUNIT_EXPECT_EQ(test, rmr->segs[i].len, ps);
		}
		if (test->status == KUNIT_FAILURE)
			break;
	}
	/* most lists reach the walks */
	KUNIT_EXPECT_GT(test, compared, 10000);
	mr->page_size = P4K;
}

static struct kunit_case rsim_map_test_cases[] = {
	KUNIT_CASE_PARAM(rsim_map_test_rule, rsim_map_gen_params),
	KUNIT_CASE(rsim_map_test_partial_then_resume),
	KUNIT_CASE(rsim_map_test_length_rule_grid),
	KUNIT_CASE(rsim_map_test_dma_mapped_pages),
	KUNIT_CASE(rsim_map_test_sg_prefix),
	KUNIT_CASE(rsim_map_test_walk_matches_core),
	RSIM_KUNIT_NO_LEFTOVERS,
	{}
};

static struct kunit_suite rsim_map_test_suite = {
	.name = "rdmasim_map",
	.suite_init = rsim_kunit_suite_init,
	.test_cases = rsim_map_test_cases,
};

kunit_test_suite(rsim_map_test_suite);
