// SPDX-License-Identifier: GPL-2.0-only
/*
 * Suite rdma_conformance_limits.<device>: the limits a device advertises
 * in struct ib_device_attr hold. Up to the limit every allocation
 * succeeds; one more is refused with an error pointer and leaves nothing
 * behind.
 *
 * Object counts (max_pd, max_cq, max_qp, max_mr) are device-wide: the
 * objects that already exist (the MAD layer's, other users') are counted
 * through restrack, and a check that would need more than limit_budget
 * allocations is skipped with the reason (rdma_rxe advertises a million
 * of each). Sizes (max_cqe, max_qp_wr, max_send_sge, max_recv_sge) are
 * checked at the limit where that fits the budget, and one past it
 * always.
 */

#include <linux/slab.h>
#include <rdma/restrack.h>

#include "conformance.h"

#define RCF_SRC_ATTR	"ib_verbs.h: struct ib_device_attr (the device's limits)"

/* the most entries (CQEs, WRs) one at-limit allocation may ask for */
#define RCF_MAX_ENTRIES	65536U

/**
 * struct rcf_pile - objects allocated up to a limit, freed in reverse
 * @n: objects held
 * @obj: the objects
 * @free: how to free one
 */
struct rcf_pile {
	u32 n;
	void **obj;
	void (*free)(void *obj);
};

static void rcf_pile_release(void *arg)
{
	struct rcf_pile *p = arg;
	ktime_t t0 = ktime_get();
	u32 n = p->n;

	while (p->n)
		p->free(p->obj[--p->n]);
	kvfree(p->obj);
	if (n > 1000)
		pr_info("rdma_conformance: %u objects freed in %lld ms\n", n,
			ktime_ms_delta(ktime_get(), t0));
}

static struct rcf_pile *rcf_pile_new(struct kunit *test, u32 cap,
				     void (*free)(void *obj))
{
	struct rcf_pile *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	p->obj = kvcalloc(cap, sizeof(*p->obj), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p->obj);
	p->free = free;
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, rcf_pile_release, p));
	return p;
}

/**
 * struct rcf_limit - one device-wide object limit
 * @what: the object, for messages
 * @attr: the ib_device_attr field
 * @res: its restrack type
 * @max: the advertised limit
 * @alloc: allocate one (ERR_PTR on failure)
 * @free: free one
 */
struct rcf_limit {
	const char *what;
	const char *attr;
	enum rdma_restrack_type res;
	u32 max;
	void *(*alloc)(struct kunit *test, void *ctx);
	void (*free)(void *obj);
};

/*
 * Allocate up to @l->max live objects, then one more: every allocation
 * up to the limit must succeed, the next one must be refused.
 */
static void rcf_check_limit(struct kunit *test, const struct rcf_limit *l,
			    void *ctx)
{
	struct rcf_target *t = rcf_target(test);
	u32 live = rdma_restrack_count(t->dev, l->res, true);
	struct rcf_pile *pile;
	u32 need, after;
	char what[64];
	ktime_t t0;
	void *obj;

	if (live > l->max) {
		RCF_FAIL(test, "%u %ss exist already, %s is %u", live, l->what,
			 l->attr, l->max);
		return;
	}
	need = l->max - live;
	if (need > rcf_limit_budget)
		kunit_skip(test,
			   "%s %u with %u in use: %u allocations, more than limit_budget=%u",
			   l->attr, l->max, live, need, rcf_limit_budget);
	pile = rcf_pile_new(test, need, l->free);
	t0 = ktime_get();
	while (pile->n < need) {
		obj = l->alloc(test, ctx);
		if (IS_ERR_OR_NULL(obj)) {
			RCF_FAIL(test,
				 "%s %u of %u (%u were in use, %s %u) failed: %ld",
				 l->what, pile->n + 1, need, live, l->attr,
				 l->max, PTR_ERR(obj));
			return;
		}
		pile->obj[pile->n++] = obj;
	}
	kunit_info(test, "%u %ss allocated in %lld ms", need, l->what,
		   ktime_ms_delta(ktime_get(), t0));
	snprintf(what, sizeof(what), "%s number %u (%s %u)", l->what,
		 l->max + 1, l->attr, l->max);
	rcf_expect_err_ptr(test, l->alloc(test, ctx), l->free, what);
	after = rdma_restrack_count(t->dev, l->res, true);
	KUNIT_EXPECT_EQ_MSG(test, after, l->max,
			    "%s: %ss tracked at the limit", t->name, l->what);
}

static void *rcf_pd_alloc(struct kunit *test, void *ctx)
{
	return ib_alloc_pd(rcf_target(test)->dev, 0);
}

/* Rule: max_pd PDs can live at once, and no more. */
static void rcf_test_limit_pd(struct kunit *test)
{
	struct rcf_limit l = {
		.what = "PD", .attr = "max_pd", .res = RDMA_RESTRACK_PD,
		.max = rcf_target(test)->attr.max_pd,
		.alloc = rcf_pd_alloc, .free = rcf_pd_free,
	};

	RCF_RULE(test, "max_pd PDs can exist at once; one more is refused",
		 RCF_SRC_ATTR);
	rcf_check_limit(test, &l, NULL);
}

static void *rcf_cq_alloc(struct kunit *test, void *ctx)
{
	return ib_alloc_cq(rcf_target(test)->dev, NULL, 1, 0, IB_POLL_DIRECT);
}

/* Rule: max_cq CQs can live at once, and no more. */
static void rcf_test_limit_cq(struct kunit *test)
{
	struct rcf_limit l = {
		.what = "CQ", .attr = "max_cq", .res = RDMA_RESTRACK_CQ,
		.max = rcf_target(test)->attr.max_cq,
		.alloc = rcf_cq_alloc, .free = rcf_cq_free,
	};

	RCF_RULE(test, "max_cq CQs can exist at once; one more is refused",
		 RCF_SRC_ATTR);
	rcf_check_limit(test, &l, NULL);
}

/**
 * struct rcf_qp_ctx - what the QPs of a limit check are made of
 * @pd: their PD
 * @cq: their CQ
 * @cap: their capacities
 */
struct rcf_qp_ctx {
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp_cap cap;
};

static void *rcf_qp_alloc(struct kunit *test, void *arg)
{
	struct rcf_qp_ctx *ctx = arg;
	struct ib_qp_init_attr a = {
		.send_cq = ctx->cq,
		.recv_cq = ctx->cq,
		.cap = ctx->cap,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
		.port_num = rcf_target(test)->port,
	};

	return ib_create_qp(ctx->pd, &a);
}

static void rcf_qp_free(void *qp)
{
	ib_destroy_qp(qp);
}

static void rcf_qp_ctx_init(struct kunit *test, struct rcf_qp_ctx *ctx)
{
	ctx->pd = rcf_pd(test);
	ctx->cq = rcf_cq(test, 1);
	ctx->cap = (struct ib_qp_cap){
		.max_send_wr = 1, .max_recv_wr = 1,
		.max_send_sge = 1, .max_recv_sge = 1,
	};
}

/* Rule: max_qp QPs can live at once, and no more. */
static void rcf_test_limit_qp(struct kunit *test)
{
	struct rcf_limit l = {
		.what = "QP", .attr = "max_qp", .res = RDMA_RESTRACK_QP,
		.max = rcf_target(test)->attr.max_qp,
		.alloc = rcf_qp_alloc, .free = rcf_qp_free,
	};
	struct rcf_qp_ctx ctx;

	RCF_RULE(test, "max_qp QPs (the MAD layer's too) can exist; one more is refused",
		 RCF_SRC_ATTR);
	rcf_qp_ctx_init(test, &ctx);
	rcf_check_limit(test, &l, &ctx);
}

static void *rcf_mr_alloc(struct kunit *test, void *pd)
{
	return ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, 1);
}

/* Rule: max_mr MRs can live at once, and no more. */
static void rcf_test_limit_mr(struct kunit *test)
{
	struct rcf_limit l = {
		.what = "MR", .attr = "max_mr", .res = RDMA_RESTRACK_MR,
		.max = rcf_target(test)->attr.max_mr,
		.alloc = rcf_mr_alloc, .free = rcf_mr_free,
	};

	RCF_RULE(test, "max_mr MRs can exist at once; one more is refused",
		 RCF_SRC_ATTR);
	rcf_need_frwr(test);
	rcf_check_limit(test, &l, rcf_pd(test));
}

static void rcf_expect_ok_obj(struct kunit *test, void *obj,
			      void (*free)(void *obj), const char *what)
{
	if (IS_ERR_OR_NULL(obj))
		RCF_FAIL(test, "%s failed: %ld", what, PTR_ERR(obj));
	else
		free(obj);
}

/* Rule: a CQ of max_cqe entries can be created, one of max_cqe + 1 not. */
static void rcf_test_limit_cqe(struct kunit *test)
{
	struct rcf_target *t = rcf_target(test);
	u32 max = t->attr.max_cqe;
	char what[64];

	RCF_RULE(test, "a CQ of max_cqe entries is made; max_cqe + 1 is refused",
		 RCF_SRC_ATTR);
	if (max <= RCF_MAX_ENTRIES) {
		snprintf(what, sizeof(what), "a CQ of max_cqe (%u) entries",
			 max);
		rcf_expect_ok_obj(test, ib_alloc_cq(t->dev, NULL, max, 0,
						    IB_POLL_DIRECT),
				  rcf_cq_free, what);
	} else {
		kunit_info(test, "max_cqe %u: only max_cqe + 1 is tried", max);
	}
	if (max >= INT_MAX)
		return;
	snprintf(what, sizeof(what), "a CQ of max_cqe + 1 (%u) entries",
		 max + 1);
	rcf_expect_err_ptr(test, ib_alloc_cq(t->dev, NULL, max + 1, 0,
					     IB_POLL_DIRECT),
			   rcf_cq_free, what);
}

/* one QP with @cap; the caller says whether it may exist */
static void rcf_try_qp(struct kunit *test, struct rcf_qp_ctx *ctx,
		       const struct ib_qp_cap *cap, bool ok, const char *what)
{
	ctx->cap = *cap;
	if (ok)
		rcf_expect_ok_obj(test, rcf_qp_alloc(test, ctx), rcf_qp_free,
				  what);
	else
		rcf_expect_err_ptr(test, rcf_qp_alloc(test, ctx), rcf_qp_free,
				   what);
}

/* Rule: queues of max_qp_wr WRs can be created, of max_qp_wr + 1 not. */
static void rcf_test_limit_qp_wr(struct kunit *test)
{
	u32 max = rcf_target(test)->attr.max_qp_wr;
	struct rcf_qp_ctx ctx;
	struct ib_qp_cap cap;

	RCF_RULE(test, "queues of max_qp_wr WRs are made; max_qp_wr + 1 is refused",
		 RCF_SRC_ATTR);
	rcf_qp_ctx_init(test, &ctx);
	cap = ctx.cap;
	if (max <= RCF_MAX_ENTRIES) {
		cap.max_send_wr = max;
		cap.max_recv_wr = max;
		rcf_try_qp(test, &ctx, &cap, true, "queues of max_qp_wr WRs");
	} else {
		kunit_info(test, "max_qp_wr %u: only max_qp_wr + 1 is tried",
			   max);
	}
	if (max == U32_MAX)
		return;
	cap = ctx.cap;
	cap.max_send_wr = max + 1;
	rcf_try_qp(test, &ctx, &cap, false, "a send queue of max_qp_wr + 1");
	cap = ctx.cap;
	cap.max_recv_wr = max + 1;
	rcf_try_qp(test, &ctx, &cap, false,
		   "a receive queue of max_qp_wr + 1");
}

/* Rule: max_send_sge and max_recv_sge hold, and one more is refused. */
static void rcf_test_limit_qp_sge(struct kunit *test)
{
	struct rcf_target *t = rcf_target(test);
	struct rcf_qp_ctx ctx;
	struct ib_qp_cap cap;

	RCF_RULE(test, "max_send_sge and max_recv_sge are made; one more is refused",
		 RCF_SRC_ATTR);
	rcf_qp_ctx_init(test, &ctx);
	cap = ctx.cap;
	cap.max_send_sge = t->attr.max_send_sge;
	cap.max_recv_sge = t->attr.max_recv_sge;
	rcf_try_qp(test, &ctx, &cap, true, "max_send_sge and max_recv_sge");
	cap = ctx.cap;
	cap.max_send_sge = t->attr.max_send_sge + 1;
	rcf_try_qp(test, &ctx, &cap, false, "max_send_sge + 1");
	cap = ctx.cap;
	cap.max_recv_sge = t->attr.max_recv_sge + 1;
	rcf_try_qp(test, &ctx, &cap, false, "max_recv_sge + 1");
}

static struct kunit_case rcf_limits_cases[] = {
	RCF_CASE(limit_pd),
	RCF_CASE(limit_cq),
	RCF_CASE(limit_qp),
	RCF_CASE(limit_mr),
	RCF_CASE(limit_cqe),
	RCF_CASE(limit_qp_wr),
	RCF_CASE(limit_qp_sge),
	{}
};

struct kunit_suite rcf_limits_suite = {
	.name = "rdma_conformance_limits",
	.test_cases = rcf_limits_cases,
};
