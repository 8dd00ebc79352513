// SPDX-License-Identifier: GPL-2.0-only
/*
 * Suite rdma_conformance_map.<device>: every rule of ib_map_mr_sg().
 *
 * The core stores page_size and calls the driver (verbs.c); nothing is
 * validated on the way. The rules below are the ones its kernel-doc and
 * that of ib_sg_to_pages() write down, which ULPs rely on: the return
 * value counts whole entries mapped, *sg_offset says where to resume, the
 * mapped prefix stops at gaps, and the MR never describes more than
 * max_num_sg pages of page_size bytes.
 *
 * ib_map_mr_sg() does not touch the memory, so most cases map real pages
 * but never register them; the wrap-around case maps fabricated DMA
 * addresses, only on devices whose DMA addresses are not kernel virtual
 * addresses.
 */

#include <linux/log2.h>
#include <linux/overflow.h>

#include "conformance.h"

#define RCF_SRC_MAP		"verbs.c: ib_map_mr_sg() kernel-doc"
#define RCF_SRC_SG_TO_PAGES	"verbs.c: ib_sg_to_pages() kernel-doc (sg_offset OUT)"
#define RCF_SRC_ALLOC_MR_MAP	"verbs.c: ib_alloc_mr(), ib_map_mr_sg() kernel-doc"
#define RCF_SRC_CAP		"ib_verbs.h: ib_device_attr.page_size_cap"
#define RCF_SRC_DEREG		"verbs.c: ib_dereg_mr_user()"

/*
 * What a mapping of @nents entries of @sgl that started at @in_off and
 * returned @ret (with *sg_offset now @out_off) must satisfy:
 * - whole entries were mapped and the resume point lies inside the next
 *   one (at or after the start offset when it is the first);
 * - the MR starts at the first mapped byte and its length runs exactly to
 *   the resume point;
 * - the MR spans at most @max pages of @ps bytes, and does not wrap.
 * A negative @ret is checked by the caller (it may be required or not).
 */
static void rcf_check_mapping(struct kunit *test, struct ib_mr *mr,
			      struct scatterlist *sgl, int nents, int ret,
			      unsigned int in_off, unsigned int out_off,
			      u32 max, unsigned int ps, const char *what)
{
	u64 want_len = 0, end, span;
	int i;

	if (ret < 0)
		return;
	if (ret > nents) {
		RCF_FAIL(test, "%s: returned %d of %d entries", what, ret,
			 nents);
		return;
	}
	for (i = 0; i < ret; i++)
		want_len += sg_dma_len(&sgl[i]);
	if (ret == nents) {
		if (out_off)
			RCF_FAIL(test,
				 "%s: every entry mapped but sg_offset is %u, not 0",
				 what, out_off);
		out_off = 0;
	} else if (out_off > sg_dma_len(&sgl[ret]) ||
		   (!ret && out_off < in_off)) {
		RCF_FAIL(test,
			 "%s: returned %d and sg_offset %u, outside entry %d (%u bytes, started at %u)",
			 what, ret, out_off, ret, sg_dma_len(&sgl[ret]),
			 in_off);
		return;
	}
	if (!ret && out_off == in_off)
		return;		/* nothing mapped: nothing to describe */
	want_len += out_off;
	want_len -= in_off;

	if (mr->iova != sg_dma_address(sgl) + in_off)
		RCF_FAIL(test, "%s: iova 0x%llx, want 0x%llx", what, mr->iova,
			 sg_dma_address(sgl) + in_off);
	if (mr->length != want_len)
		RCF_FAIL(test,
			 "%s: returned %d, sg_offset %u: length %llu, want %llu (up to the resume point)",
			 what, ret, out_off, mr->length, want_len);
	if (check_add_overflow(mr->iova, mr->length, &end) && end) {
		RCF_FAIL(test, "%s: iova 0x%llx + length %llu wraps", what,
			 mr->iova, mr->length);
		return;
	}
	span = DIV_ROUND_UP_ULL((mr->iova & (ps - 1)) + mr->length, ps);
	if (span > max)
		RCF_FAIL(test,
			 "%s: the MR spans %llu pages of %u bytes, max_num_sg is %u",
			 what, span, ps, max);
}

/* map and check; returns what ib_map_mr_sg() returned */
static int rcf_map_check(struct kunit *test, struct ib_mr *mr,
			 struct scatterlist *sgl, int nents,
			 unsigned int in_off, u32 max, unsigned int ps,
			 const char *what)
{
	unsigned int off = in_off;
	int ret = ib_map_mr_sg(mr, sgl, nents, &off, ps);

	rcf_check_mapping(test, mr, sgl, nents, ret, in_off, off, max, ps,
			  what);
	return ret;
}

/* a list whose first entry the MR cannot hold: nothing may map */
static void rcf_map_too_big(struct kunit *test, struct ib_mr *mr,
			    struct scatterlist *sgl, int nents, u32 max,
			    unsigned int ps, const char *what)
{
	int ret = rcf_map_check(test, mr, sgl, nents, 0, max, ps, what);

	if (ret > 0)
		RCF_FAIL(test, "%s: returned %d (mapped), length %llu", what,
			 ret, mr->length);
}

static void rcf_expect_ret(struct kunit *test, int ret, int want,
			   const char *what)
{
	if (ret != want)
		RCF_FAIL(test, "%s: returned %d, want %d", what, ret, want);
}

/* a fast-registration MR of @max entries on a new PD, and a buffer */
static struct ib_mr *rcf_map_setup(struct kunit *test, u32 max,
				   size_t buf_len, struct rcf_buf **b)
{
	struct rcf_target *t = rcf_target(test);

	rcf_need_frwr(test);
	if (max > t->attr.max_fast_reg_page_list_len)
		kunit_skip(test, "needs max_fast_reg_page_list_len >= %u (%u)",
			   max, t->attr.max_fast_reg_page_list_len);
	*b = rcf_buf_new(test, t->dev, buf_len, 0);
	return rcf_mr(test, rcf_pd(test), IB_MR_TYPE_MEM_REG, max);
}

/**
 * struct rcf_map_case - one ib_map_mr_sg() call on fresh pages
 * @what: the call, for messages
 * @max: the MR's max_num_sg
 * @pages: the buffer, in pages
 * @in_off: *sg_offset on input
 * @want: entries that must map; -1: the first entry cannot be held, so
 *	nothing may be reported mapped
 * @nents: entries in @e
 * @e: the entries, as offset and length in the buffer
 */
struct rcf_map_case {
	const char *what;
	u32 max;
	u32 pages;
	u32 in_off;
	int want;
	int nents;
	struct {
		u32 off;
		u32 len;
	} e[6];
};

#define P	PAGE_SIZE

/* map @c on @mr over @b, check the mapping and the count */
static void rcf_map_case_on(struct kunit *test, struct ib_mr *mr,
			    struct rcf_buf *b, const struct rcf_map_case *c)
{
	struct scatterlist *sgl = rcf_sgl(test, c->nents);
	int i, ret;

	for (i = 0; i < c->nents; i++)
		rcf_sg_set(&sgl[i], b->dma + c->e[i].off, c->e[i].len);
	if (c->want < 0) {
		rcf_map_too_big(test, mr, sgl, c->nents, c->max, P, c->what);
		return;
	}
	ret = rcf_map_check(test, mr, sgl, c->nents, c->in_off, c->max, P,
			    c->what);
	rcf_expect_ret(test, ret, c->want, c->what);
}

/* each @c on one new MR, in turn */
static void rcf_map_run(struct kunit *test, const struct rcf_map_case *c,
			int n)
{
	struct rcf_buf *b;
	struct ib_mr *mr;
	int i;

	mr = rcf_map_setup(test, c->max, c->pages * P, &b);
	for (i = 0; i < n; i++)
		rcf_map_case_on(test, mr, b, &c[i]);
}

/* Rule: a contiguous run of max_num_sg pages maps whole. */
static void rcf_test_map_full_list(struct kunit *test)
{
	static const struct rcf_map_case c = {
		"8 pages into 8", 8, 8, 0, 1, 1, { { 0, 8 * P } },
	};

	RCF_RULE(test, "max_num_sg contiguous pages map whole", RCF_SRC_MAP);
	rcf_map_run(test, &c, 1);
}

/* Rule: the first entry may start inside a page. */
static void rcf_test_map_first_entry_offset(struct kunit *test)
{
	static const struct rcf_map_case c = {
		"entry at +100", 2, 2, 0, 1, 1, { { 100, 2 * P - 100 } },
	};

	RCF_RULE(test, "the first entry may start inside a page; iova is its address",
		 RCF_SRC_MAP);
	rcf_map_run(test, &c, 1);
}

/* Rule: *sg_offset skips bytes of the first entry. */
static void rcf_test_map_sg_offset(struct kunit *test)
{
	static const struct rcf_map_case c = {
		"sg_offset 100", 2, 2, 100, 2, 2, { { 0, P }, { P, P } },
	};

	RCF_RULE(test, "*sg_offset skips bytes of the first entry; OUT is 0 when all map",
		 RCF_SRC_SG_TO_PAGES);
	rcf_map_run(test, &c, 1);
}

/* Rule: the last entry may end inside a page. */
static void rcf_test_map_short_last(struct kunit *test)
{
	static const struct rcf_map_case c = {
		"short last entry", 3, 4, 0, 3, 3,
		{ { 0, P }, { P, P }, { 2 * P, P / 2 } },
	};

	RCF_RULE(test, "the last entry may be shorter than a page", RCF_SRC_MAP);
	rcf_map_run(test, &c, 1);
}

/*
 * Rule: more entries than max_num_sg pages: the largest prefix maps, the
 * return value counts it, and *sg_offset is 0 (the next entry whole).
 */
static void rcf_test_map_partial_entries(struct kunit *test)
{
	static const struct rcf_map_case c = {
		"6 pages into 4", 4, 8, 0, 4, 6,
		{ { 0, P }, { 2 * P, P }, { 4 * P, P }, { 6 * P, P },
		  { 1 * P, P }, { 3 * P, P } },
	};

	RCF_RULE(test, "6 one-page entries into 4: returns 4, *sg_offset 0",
		 RCF_SRC_MAP);
	rcf_map_run(test, &c, 1);
}

/*
 * Rule: when max_num_sg runs out inside an entry, the entries before it
 * are reported, and *sg_offset and the MR's length agree on where the
 * caller resumes.
 */
static void rcf_test_map_partial_in_entry(struct kunit *test)
{
	static const struct rcf_map_case c = {
		"2 + 4 pages into 4", 4, 8, 0, 1, 2,
		{ { 0, 2 * P }, { 4 * P, 4 * P } },
	};

	RCF_RULE(test, "a stop inside an entry: iova + length is the resume point",
		 RCF_SRC_SG_TO_PAGES);
	rcf_map_run(test, &c, 1);
}

/*
 * Rule: the same when the first entry starts inside its page and the MR
 * cannot hold even it: nothing is reported mapped, and the resume point
 * stays inside the entry (ib_sg_to_pages() itself rolls back to the
 * page-aligned address below the entry here).
 */
static void rcf_test_map_partial_unaligned(struct kunit *test)
{
	static const struct rcf_map_case c = {
		"2 unaligned pages into 1", 1, 2, 0, -1, 1,
		{ { 100, 2 * P - 100 } },
	};

	RCF_RULE(test, "unaligned 2 pages into 1: nothing mapped, offset in the entry",
		 RCF_SRC_SG_TO_PAGES);
	rcf_map_run(test, &c, 1);
}

/*
 * Rule: the length rule. One entry of 8 pages into an MR of 4: the entry
 * is not mapped, and no more than 4 pages are described.
 */
static void rcf_test_map_length_bound(struct kunit *test)
{
	static const struct rcf_map_case c = {
		"8 pages into 4", 4, 8, 0, -1, 1, { { 0, 8 * P } },
	};

	RCF_RULE(test, "never more than max_num_sg * page_size mapped",
		 RCF_SRC_ALLOC_MR_MAP);
	rcf_map_run(test, &c, 1);
}

/* Rule: a gap stops a MEM_REG mapping before the entry after it. */
static void rcf_test_map_gap_stops(struct kunit *test)
{
	static const struct rcf_map_case c[] = {
		{ "half page, then a gap", 4, 4, 0, 1, 2,
		  { { 0, P / 2 }, { 2 * P, P } } },
		{ "page, then an unaligned entry", 4, 4, 0, 1, 2,
		  { { 0, P }, { 2 * P + 100, P - 100 } } },
	};

	RCF_RULE(test, "an unaligned, non-contiguous entry ends the mapped prefix",
		 RCF_SRC_MAP);
	rcf_map_run(test, c, ARRAY_SIZE(c));
}

/* Rule: unaligned but contiguous entries coalesce. */
static void rcf_test_map_contiguous_unaligned(struct kunit *test)
{
	static const struct rcf_map_case c = {
		"contiguous halves", 4, 4, 0, 2, 2,
		{ { 0, P / 2 }, { P / 2, P } },
	};

	RCF_RULE(test, "an unaligned entry contiguous with the one before maps",
		 RCF_SRC_MAP);
	rcf_map_run(test, &c, 1);
}

/*
 * Rule: an SG_GAPS MR takes any entries, aligned or not, up to
 * max_num_sg of them (the device advertises IBK_SG_GAPS_REG).
 */
static void rcf_test_map_sg_gaps(struct kunit *test)
{
	struct rcf_target *t = rcf_target(test);
	struct scatterlist *sgl = rcf_sgl(test, 6);
	unsigned int off = 0;
	struct rcf_buf *b;
	struct ib_mr *mr;
	int ret;

	RCF_RULE(test, "SG_GAPS: any entries map, up to max_num_sg of them",
		 RCF_SRC_MAP);
	if (!(t->attr.kernel_cap_flags & IBK_SG_GAPS_REG))
		kunit_skip(test, "%s does not advertise IBK_SG_GAPS_REG",
			   t->name);
	b = rcf_buf_new(test, t->dev, 4 * PAGE_SIZE, 0);
	mr = rcf_mr(test, rcf_pd(test), IB_MR_TYPE_SG_GAPS, 4);
	rcf_sg_set(&sgl[0], b->dma + 100, 50);
	rcf_sg_set(&sgl[1], b->dma + PAGE_SIZE + 7, 300);
	rcf_sg_set(&sgl[2], b->dma + 3 * PAGE_SIZE, 1000);
	rcf_sg_set(&sgl[3], b->dma + 2 * PAGE_SIZE, 10);
	rcf_sg_set(&sgl[4], b->dma + 2 * PAGE_SIZE + 100, 10);
	rcf_sg_set(&sgl[5], b->dma + 2 * PAGE_SIZE + 200, 10);

	ret = ib_map_mr_sg(mr, sgl, 3, &off, PAGE_SIZE);
	if (ret != 3 || mr->iova != b->dma + 100 || mr->length != 1350 || off)
		RCF_FAIL(test,
			 "3 gapped entries: returned %d, iova +%lld, length %llu, sg_offset %u (want 3, +100, 1350, 0)",
			 ret, mr->iova - b->dma, mr->length, off);
	ret = ib_map_mr_sg(mr, sgl, 6, &off, PAGE_SIZE);
	if (ret != 4 || mr->length != 1360 || off)
		RCF_FAIL(test,
			 "6 gapped entries into 4: returned %d, length %llu, sg_offset %u (want 4, 1360, 0)",
			 ret, mr->length, off);
}

/* page sizes to try: every power of two from 512 bytes to 1 MiB */
static const unsigned int rcf_page_sizes[] = {
	SZ_512, SZ_1K, SZ_2K, SZ_4K, SZ_8K, SZ_16K, SZ_32K, SZ_64K,
	SZ_128K, SZ_256K, SZ_512K, SZ_1M,
};

static void rcf_page_size_desc(const unsigned int *ps, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "page_size=%u", *ps);
}

KUNIT_ARRAY_PARAM(rcf_page_sizes, rcf_page_sizes, rcf_page_size_desc);

/*
 * Rule: every page size the device advertises in page_size_cap maps, with
 * the MR's pages of that size: two pages hold an entry that starts
 * inside the first, three are needed when it runs one byte further.
 */
static void rcf_test_map_page_size_in_cap(struct kunit *test)
{
	struct rcf_target *t = rcf_target(test);
	const unsigned int *ps = test->param_value;
	struct scatterlist *sgl = rcf_sgl(test, 1);
	struct rcf_buf *b;
	struct ib_mr *mr;
	int ret;

	RCF_RULE(test, "each size in page_size_cap maps: 2 pages of it, not a byte more",
		 RCF_SRC_CAP);
	if (!(t->attr.page_size_cap & *ps))
		kunit_skip(test, "%u is not in page_size_cap 0x%llx", *ps,
			   t->attr.page_size_cap);
	mr = rcf_map_setup(test, 2, max_t(size_t, 2 * *ps, 2 * PAGE_SIZE),
			   &b);
	rcf_sg_set(sgl, b->dma + 100, 2 * *ps - 100);
	ret = rcf_map_check(test, mr, sgl, 1, 0, 2, *ps, "two pages");
	rcf_expect_ret(test, ret, 1, "two pages");
	KUNIT_EXPECT_EQ_MSG(test, mr->page_size, *ps, "mr->page_size");

	rcf_sg_set(sgl, b->dma + 100, 2 * *ps - 99);
	rcf_map_too_big(test, mr, sgl, 1, 2, *ps, "two pages and a byte");
}

/*
 * Page sizes that are never valid somewhere: 0 (a hazard: see below),
 * non powers of two, and powers of two that page_size_cap may lack.
 */
static const unsigned int rcf_bad_page_sizes[] = {
	0, 3000, SZ_2K, SZ_4K + SZ_2K, 3 * SZ_4K, 3 * SZ_1M, 1U << 31,
};

KUNIT_ARRAY_PARAM(rcf_bad_page_sizes, rcf_bad_page_sizes, rcf_page_size_desc);

/*
 * Rule: a page size outside page_size_cap (which lists powers of two
 * only) is refused with an error, not used: a non power of two makes
 * page masks meaningless, and a size the device cannot translate maps
 * the wrong memory.
 *
 * 0 is a hazard: ib_sg_to_pages() then adds 0 to the page address for
 * ever, so a driver that hands it page_size 0 hangs unless its set_page()
 * fails at capacity (siw's never fails). It runs only with hazards=.
 */
static void rcf_test_map_page_size_outside_cap(struct kunit *test)
{
	struct rcf_target *t = rcf_target(test);
	const unsigned int *ps = test->param_value;
	struct scatterlist *sgl = rcf_sgl(test, 1);
	struct rcf_buf *b;
	struct ib_mr *mr;
	int ret;

	RCF_RULE(test, "a page size outside page_size_cap fails",
		 RCF_SRC_CAP);
	if (is_power_of_2(*ps) && (t->attr.page_size_cap & *ps))
		kunit_skip(test, "%u is in page_size_cap 0x%llx", *ps,
			   t->attr.page_size_cap);
	if (!*ps && !t->hazards)
		kunit_skip(test,
			   "hazard: page_size 0 hangs a driver whose set_page() never fails; run with hazards=%s",
			   t->name);
	mr = rcf_map_setup(test, 4, 4 * PAGE_SIZE, &b);
	rcf_sg_set(sgl, b->dma, 2 * PAGE_SIZE);
	ret = ib_map_mr_sg(mr, sgl, 1, NULL, *ps);
	if (ret >= 0)
		RCF_FAIL(test,
			 "page_size %u (page_size_cap 0x%llx): returned %d, length %llu; want an error",
			 *ps, t->attr.page_size_cap, ret, mr->length);
	else
		kunit_info(test, "page_size %u: %d", *ps, ret);
}

/*
 * Rule: no mapping wraps past the top of the 64-bit DMA address space.
 * Fabricated addresses: only where DMA addresses are bus addresses (a
 * dma_device); a virt-DMA device would turn them into struct pages.
 */
static void rcf_test_map_no_wrap(struct kunit *test)
{
	struct rcf_target *t = rcf_target(test);
	struct scatterlist *sgl = rcf_sgl(test, 2);
	const u64 top = 0ULL - PAGE_SIZE;	/* the last page */
	struct ib_mr *mr;
	int ret;

	RCF_RULE(test, "no mapping wraps past the top of the 64-bit DMA space",
		 RCF_SRC_MAP);
	rcf_need_frwr(test);
	if (ib_uses_virt_dma(t->dev))
		kunit_skip(test,
			   "%s uses virtual DMA addresses (no dma_device): fabricated ones would be translated to pages",
			   t->name);
	mr = rcf_mr(test, rcf_pd(test), IB_MR_TYPE_MEM_REG, 4);

	rcf_sg_set(sgl, top, 2 * PAGE_SIZE);
	rcf_map_too_big(test, mr, sgl, 1, 4, PAGE_SIZE, "last page + 1 page");

	rcf_sg_set(sgl, 0ULL - 100, 200);
	rcf_map_too_big(test, mr, sgl, 1, 4, PAGE_SIZE,
			"100 bytes past the top");

	rcf_sg_set(&sgl[0], top - PAGE_SIZE, PAGE_SIZE);
	rcf_sg_set(&sgl[1], top, 2 * PAGE_SIZE);
	ret = rcf_map_check(test, mr, sgl, 2, 0, 4, PAGE_SIZE,
			    "a page, then one that wraps");
	if (ret > 1)
		RCF_FAIL(test, "a page, then one that wraps: returned %d",
			 ret);
}

/* Rule: mapping an MR again replaces its translation. */
static void rcf_test_map_remap_replaces(struct kunit *test)
{
	static const struct rcf_map_case c[] = {
		{ "first map", 4, 4, 0, 1, 1, { { 0, 4 * P } } },
		{ "second map", 4, 4, 0, 1, 1, { { 2 * P + 200, 100 } } },
	};

	RCF_RULE(test, "mapping again replaces iova and length", RCF_SRC_MAP);
	rcf_map_run(test, c, ARRAY_SIZE(c));
}

/*
 * Rule: the bound is max_num_sg pages of the page size of each mapping:
 * an earlier mapping with larger pages does not raise it.
 */
static void rcf_test_map_remap_page_size_bound(struct kunit *test)
{
	struct rcf_target *t = rcf_target(test);
	struct scatterlist *sgl = rcf_sgl(test, 1);
	struct rcf_buf *b;
	struct ib_mr *mr;
	int ret;

	RCF_RULE(test, "larger pages mapped before do not raise the page bound",
		 RCF_SRC_ALLOC_MR_MAP);
	if (!(t->attr.page_size_cap & (2 * PAGE_SIZE)) ||
	    !(t->attr.page_size_cap & PAGE_SIZE))
		kunit_skip(test, "page_size_cap 0x%llx lacks PAGE_SIZE or 2 * PAGE_SIZE",
			   t->attr.page_size_cap);
	mr = rcf_map_setup(test, 4, 8 * P, &b);
	rcf_sg_set(sgl, b->dma, 8 * P);
	ret = rcf_map_check(test, mr, sgl, 1, 0, 4, 2 * P,
			    "4 pages of 2 * PAGE_SIZE");
	rcf_expect_ret(test, ret, 1, "4 pages of 2 * PAGE_SIZE");
	rcf_map_too_big(test, mr, sgl, 1, 4, PAGE_SIZE,
			"then 8 pages of PAGE_SIZE into 4");
}

/* Rule: malformed requests fail. */
static void rcf_test_map_bad_args(struct kunit *test)
{
	struct scatterlist *sgl = rcf_sgl(test, 1);
	unsigned int off;
	struct rcf_buf *b;
	struct ib_mr *mr;
	int ret;

	RCF_RULE(test, "sg_nents 0, or *sg_offset past the first entry, fails",
		 RCF_SRC_SG_TO_PAGES);
	mr = rcf_map_setup(test, 4, PAGE_SIZE, &b);
	rcf_sg_set(sgl, b->dma, PAGE_SIZE);
	ret = ib_map_mr_sg(mr, sgl, 0, NULL, PAGE_SIZE);
	if (ret >= 0)
		RCF_FAIL(test, "sg_nents 0: returned %d", ret);
	off = PAGE_SIZE + 1;
	ret = ib_map_mr_sg(mr, sgl, 1, &off, PAGE_SIZE);
	if (ret >= 0)
		RCF_FAIL(test, "sg_offset past the entry: returned %d", ret);
}

/* Rule: a mapped (never registered) MR deregisters. */
static void rcf_test_dereg_mapped_mr(struct kunit *test)
{
	struct rcf_target *t = rcf_target(test);
	struct scatterlist *sgl = rcf_sgl(test, 1);
	struct rcf_buf *b;
	struct ib_pd *pd;
	struct ib_mr *mr;
	u32 before;
	int ret;

	RCF_RULE(test, "ib_dereg_mr() of a mapped MR returns 0 and the MR is gone",
		 RCF_SRC_DEREG);
	rcf_need_frwr(test);
	b = rcf_buf_new(test, t->dev, 2 * PAGE_SIZE, 0);
	pd = rcf_pd(test);
	before = rcf_mr_count(test);
	mr = rcf_mr(test, pd, IB_MR_TYPE_MEM_REG, 2);
	rcf_sg_set(sgl, b->dma, 2 * PAGE_SIZE);
	ret = ib_map_mr_sg(mr, sgl, 1, NULL, PAGE_SIZE);
	rcf_expect_ret(test, ret, 1, "map");
	rcf_expect_dereg(test, mr, before, "a mapped MR");
}

static struct kunit_case rcf_map_cases[] = {
	RCF_CASE(map_full_list),
	RCF_CASE(map_first_entry_offset),
	RCF_CASE(map_sg_offset),
	RCF_CASE(map_short_last),
	RCF_CASE(map_partial_entries),
	RCF_CASE(map_partial_in_entry),
	RCF_CASE(map_partial_unaligned),
	RCF_CASE(map_length_bound),
	RCF_CASE(map_gap_stops),
	RCF_CASE(map_contiguous_unaligned),
	RCF_CASE(map_sg_gaps),
	RCF_CASE_PARAM(map_page_size_in_cap, rcf_page_sizes_gen_params),
	RCF_CASE_PARAM(map_page_size_outside_cap,
		       rcf_bad_page_sizes_gen_params),
	RCF_CASE(map_no_wrap),
	RCF_CASE(map_remap_replaces),
	RCF_CASE(map_remap_page_size_bound),
	RCF_CASE(map_bad_args),
	RCF_CASE(dereg_mapped_mr),
	{}
};

struct kunit_suite rcf_map_suite = {
	.name = "rdma_conformance_map",
	.test_cases = rcf_map_cases,
};
