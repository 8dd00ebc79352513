// SPDX-License-Identifier: GPL-2.0-only
/*
 * Suite rdma_conformance_bench.<device>: figures, not rules (make bench;
 * suites=bench). On the same loopback RC connection the frwr suite uses,
 * the fast-registration cycle a storage ULP runs for every I/O:
 *
 *   ib_map_mr_sg() of one 4 KiB page, a new key, REG_MR on the responder,
 *   a 4 KiB RDMA WRITE into it from the requester, LOCAL_INV,
 *
 * each work request signalled and its completion busy-polled, timed over
 * up to bench_iters cycles (at most three seconds) after 100 to warm up.
 * The case fails only if a work request does; the time is a figure:
 * "rdma_conformance: bench <dev> frwr_cycle <ns> ns per cycle".
 */

#include <linux/ktime.h>

#include "conformance.h"

#define RCF_BENCH_WARMUP	100
#define RCF_BENCH_MAX_NS	(3 * NSEC_PER_SEC)

/* post one WR on @s with @post, then busy-poll its completion */
static int rcf_bench_wr(struct rcf_side *s, int post,
			enum ib_wc_opcode opcode)
{
	struct ib_wc wc;

	if (post)
		return post;
	if (rcf_poll_busy(s->cq, &wc) != 1)
		return -ETIMEDOUT;
	if (wc.status != IB_WC_SUCCESS || wc.opcode != opcode)
		return -EIO;
	return 0;
}

/* one cycle; 0, or what failed */
static int rcf_bench_cycle(struct rcf_frwr *f, struct scatterlist *sg)
{
	struct rcf_side *a = &f->c->a, *b = &f->c->b;
	int err;

	if (ib_map_mr_sg(f->mr, sg, 1, NULL, PAGE_SIZE) != 1)
		return -EINVAL;
	ib_update_fast_reg_key(f->mr, ib_inc_rkey(f->mr->rkey));
	err = rcf_bench_wr(b, rcf_post_reg(b->qp, f->mr, f->mr->rkey,
					   RCF_ACCESS_ALL, 1), IB_WC_REG_MR);
	if (!err)
		err = rcf_bench_wr(a, rcf_post_rdma(a->qp, IB_WR_RDMA_WRITE,
						    f->src->dma,
						    a->pd->local_dma_lkey,
						    PAGE_SIZE, f->mr->iova,
						    f->mr->rkey, 2),
				   IB_WC_RDMA_WRITE);
	if (!err)
		err = rcf_bench_wr(b, rcf_post_inv(b->qp, f->mr->rkey, 3),
				   IB_WC_LOCAL_INV);
	return err;
}

/* Figure: ns per REG_MR + 4 KiB WRITE + LOCAL_INV cycle. */
static void rcf_test_frwr_cycle(struct kunit *test)
{
	struct rcf_target *t = rcf_target(test);
	struct scatterlist *sg = rcf_sgl(test, 1);
	u32 i, n = 0;
	struct rcf_frwr *f;
	u64 t0, ns = 0;
	int err = 0;

	kunit_info(test, "figure: REG_MR + 4 KiB RDMA WRITE + LOCAL_INV, busy-polled");
	f = rcf_frwr_new(test, RCF_ACCESS_ALL, RCF_NO_REG);
	rcf_sg_set(sg, f->dst->dma, PAGE_SIZE);
	for (i = 0; i < RCF_BENCH_WARMUP && !err; i++)
		err = rcf_bench_cycle(f, sg);
	t0 = ktime_get_ns();
	while (!err && n < rcf_bench_iters && ns < RCF_BENCH_MAX_NS) {
		err = rcf_bench_cycle(f, sg);
		n++;
		ns = ktime_get_ns() - t0;
	}
	if (err) {
		RCF_FAIL(test, "cycle %u failed: %d", n, err);
		return;
	}
	pr_info("rdma_conformance: bench %s frwr_cycle %llu ns per cycle, %u cycles\n",
		t->name, div_u64(ns, n), n);
}

static struct kunit_case rcf_bench_cases[] = {
	RCF_CASE(frwr_cycle),
	{}
};

struct kunit_suite rcf_bench_suite = {
	.name = "rdma_conformance_bench",
	.test_cases = rcf_bench_cases,
};
