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
 *
 * And the verbs a ULP's MR pool is made of, each timed the same way (at
 * most a second a figure): ib_alloc_mr(MEM_REG, n) for n = 1, 16 and 256
 * and the ib_dereg_mr() of those MRs, in batches of RCF_BENCH_BATCH so
 * that an allocation does not merely reuse the object just freed; and
 * ib_map_mr_sg() of 16 and 256 pages into one MR; and RDMA WRITE and
 * READ of 64 KiB and 1 MiB on one QP, one WR at a time, and on
 * RCF_BENCH_QPS connections at once, one WR in flight on each. Lines
 * "rdma_conformance: bench <dev> <figure> <ns> ns per op, <n> ops".
 */

#include <linux/ktime.h>
#include <linux/sizes.h>

#include "conformance.h"

#define RCF_BENCH_WARMUP	100
#define RCF_BENCH_MAX_NS	(3 * NSEC_PER_SEC)
/* the MR verbs' figures: at most this long each, MRs held at once */
#define RCF_BENCH_OP_NS		NSEC_PER_SEC
#define RCF_BENCH_BATCH		64
/* the throughput figures' connections, one WR in flight on each */
#define RCF_BENCH_QPS		16

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

static void rcf_bench_print(struct rcf_target *t, const char *what,
			    u32 arg, u64 ns, u32 n)
{
	pr_info("rdma_conformance: bench %s %s_%u %llu ns per op, %u ops\n",
		t->name, what, arg, n ? div_u64(ns, n) : 0, n);
}

/*
 * ib_alloc_mr(MEM_REG, @nsg), RCF_BENCH_BATCH at a time, then the
 * ib_dereg_mr() of each; 0 or the allocation's error
 */
static int rcf_bench_alloc(struct kunit *test, struct ib_pd *pd, u32 nsg)
{
	struct rcf_target *t = rcf_target(test);
	struct ib_mr *mrs[RCF_BENCH_BATCH];
	u64 ta = 0, td = 0, t0;
	int err = 0;
	u32 n = 0, i, k;

	while (!err && n < rcf_bench_iters && ta + td < RCF_BENCH_OP_NS) {
		t0 = ktime_get_ns();
		for (k = 0; k < RCF_BENCH_BATCH; k++) {
			mrs[k] = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, nsg);
			if (IS_ERR(mrs[k])) {
				err = PTR_ERR(mrs[k]);
				break;
			}
		}
		ta += ktime_get_ns() - t0;
		t0 = ktime_get_ns();
		for (i = 0; i < k; i++)
			ib_dereg_mr(mrs[i]);
		td += ktime_get_ns() - t0;
		n += k;
	}
	if (!err) {
		rcf_bench_print(t, "alloc_mr", nsg, ta, n);
		rcf_bench_print(t, "dereg_mr", nsg, td, n);
	}
	return err;
}

/* Figures: ns per ib_alloc_mr(MEM_REG, n), n = 1, 16, 256, and dereg. */
static void rcf_test_alloc_dereg(struct kunit *test)
{
	static const u32 nsg[] = { 1, 16, 256 };
	struct ib_pd *pd = rcf_pd(test);
	unsigned int i;
	int err;

	kunit_info(test, "figure: ib_alloc_mr(MEM_REG, n) and ib_dereg_mr");
	rcf_need_frwr(test);
	for (i = 0; i < ARRAY_SIZE(nsg); i++) {
		err = rcf_bench_alloc(test, pd, nsg[i]);
		if (err) {
			RCF_FAIL(test, "ib_alloc_mr(%u) failed: %d", nsg[i],
				 err);
			return;
		}
	}
}

/* Figures: ns per ib_map_mr_sg() of 16 and of 256 pages. */
static void rcf_test_map_mr_sg(struct kunit *test)
{
	static const int pages[] = { 16, 256 };
	struct rcf_target *t = rcf_target(test);
	struct ib_pd *pd = rcf_pd(test);
	struct scatterlist *sgl;
	struct rcf_buf *b;
	struct ib_mr *mr;
	unsigned int i;
	u64 t0, ns;
	int j, np;
	u32 n;

	kunit_info(test, "figure: ib_map_mr_sg of 16 and 256 pages");
	rcf_need_frwr(test);
	mr = rcf_mr(test, pd, IB_MR_TYPE_MEM_REG, 256);
	b = rcf_buf_new(test, pd->device, PAGE_SIZE, 0);
	sgl = rcf_sgl(test, 256);
	for (j = 0; j < 256; j++)
		rcf_sg_set(&sgl[j], b->dma, PAGE_SIZE);
	for (i = 0; i < ARRAY_SIZE(pages); i++) {
		np = pages[i];
		n = 0;
		ns = 0;
		t0 = ktime_get_ns();
		while (n < rcf_bench_iters && ns < RCF_BENCH_OP_NS) {
			if (ib_map_mr_sg(mr, sgl, np, NULL, PAGE_SIZE) != np) {
				RCF_FAIL(test, "ib_map_mr_sg(%d) failed", np);
				return;
			}
			n++;
			ns = ktime_get_ns() - t0;
		}
		rcf_bench_print(t, "map_mr_sg", np, ns, n);
	}
}

/* an RDMA WRITE or READ of @len bytes on @f's connection; 0 or error */
static int rcf_bench_rdma(struct rcf_frwr *f, struct rcf_buf *buf,
			  struct ib_mr *mr, enum ib_wr_opcode op, u32 len)
{
	struct rcf_side *a = &f->c->a;

	return rcf_bench_wr(a, rcf_post_rdma(a->qp, op, buf->dma,
					     a->pd->local_dma_lkey, len,
					     mr->iova, mr->rkey, 4),
			    op == IB_WR_RDMA_READ ? IB_WC_RDMA_READ :
						    IB_WC_RDMA_WRITE);
}

/*
 * RDMA WRITEs or READs of @len bytes on the requesters of @c, one in
 * flight on each, reposted as each completes, for at most
 * RCF_BENCH_OP_NS: *@n WRs completed in *@ns. 0, or what failed.
 */
static int rcf_bench_rdma_qps(struct rcf_conn **c, struct rcf_buf *buf,
			      struct ib_mr *mr, enum ib_wr_opcode op, u32 len,
			      u64 *ns, u32 *n)
{
	enum ib_wc_opcode wop = op == IB_WR_RDMA_READ ? IB_WC_RDMA_READ :
						       IB_WC_RDMA_WRITE;
	unsigned long end = jiffies + msecs_to_jiffies(RCF_TIMEOUT_MS);
	u64 t0 = ktime_get_ns(), spin_end = t0 + NSEC_PER_MSEC;
	bool posted[RCF_BENCH_QPS] = {};
	unsigned int i, busy = 0;
	struct ib_wc wc;
	bool more;
	int err = 0;

	*n = 0;
	*ns = 0;
	for (i = 0; i < RCF_BENCH_QPS && !err; i++) {
		err = rcf_post_rdma(c[i]->a.qp, op, buf->dma,
				    c[i]->a.pd->local_dma_lkey, len, mr->iova,
				    mr->rkey, 5);
		posted[i] = !err;
		busy += !err;
	}
	while (busy) {
		bool seen = false;

		for (i = 0; i < RCF_BENCH_QPS; i++) {
			if (!posted[i] || ib_poll_cq(c[i]->a.cq, 1, &wc) != 1)
				continue;
			seen = true;
			posted[i] = false;
			busy--;
			if (wc.status != IB_WC_SUCCESS || wc.opcode != wop)
				err = err ?: -EIO;
			(*n)++;
			*ns = ktime_get_ns() - t0;
			more = *n + busy < rcf_bench_iters &&
			       *ns < RCF_BENCH_OP_NS;
			if (err || !more)
				continue;
			err = rcf_post_rdma(c[i]->a.qp, op, buf->dma,
					    c[i]->a.pd->local_dma_lkey, len,
					    mr->iova, mr->rkey, 5);
			posted[i] = !err;
			busy += !err;
		}
		if (seen) {
			end = jiffies + msecs_to_jiffies(RCF_TIMEOUT_MS);
			spin_end = ktime_get_ns() + NSEC_PER_MSEC;
		} else if (time_after(jiffies, end)) {
			return -ETIMEDOUT;
		} else if (ktime_get_ns() < spin_end) {
			cpu_relax();
		} else {
			usleep_range(10, 20);
		}
	}
	return err;
}

/*
 * Figures: ns per RDMA WRITE and per RDMA READ of 64 KiB and of 1 MiB
 * on one QP, one WR at a time (signalled, busy-polled), into and out of
 * a 1 MiB MR the responder registered with REG_MR; then the same on
 * RCF_BENCH_QPS connections between the same PDs at once, one WR in
 * flight on each, into and out of the same MR (ns per WR, over all of
 * them). make bench turns them into GB/s.
 */
static void rcf_test_rdma_throughput(struct kunit *test)
{
	static const u32 sizes[] = { SZ_64K, SZ_1M };
	static const enum ib_wr_opcode ops[] = { IB_WR_RDMA_WRITE,
						 IB_WR_RDMA_READ };
	struct rcf_target *t = rcf_target(test);
	struct scatterlist *sg = rcf_sgl(test, 1);
	struct rcf_conn *c[RCF_BENCH_QPS];
	struct rcf_buf *buf, *dst;
	unsigned int i, j;
	struct rcf_frwr *f;
	struct ib_mr *mr;
	u64 t0, ns;
	int err;
	u32 n;

	kunit_info(test, "figure: RDMA WRITE and READ of 64 KiB and 1 MiB, one QP and %u",
		   RCF_BENCH_QPS);
	f = rcf_frwr_new(test, RCF_ACCESS_ALL, RCF_NO_REG);
	buf = rcf_buf_new(test, f->c->a.pd->device, SZ_1M, 0);
	dst = rcf_buf_new(test, t->dev, SZ_1M, 0);
	mr = rcf_mr(test, f->reg_side->pd, IB_MR_TYPE_MEM_REG,
		    SZ_1M / PAGE_SIZE);
	rcf_sg_set(sg, dst->dma, SZ_1M);
	if (ib_map_mr_sg(mr, sg, 1, NULL, PAGE_SIZE) != 1) {
		RCF_FAIL(test, "ib_map_mr_sg of 1 MiB failed");
		return;
	}
	err = rcf_bench_wr(f->reg_side, rcf_post_reg(f->reg_side->qp, mr,
						     mr->rkey, RCF_ACCESS_ALL,
						     1), IB_WC_REG_MR);
	for (i = 0; i < ARRAY_SIZE(ops) && !err; i++) {
		for (j = 0; j < ARRAY_SIZE(sizes) && !err; j++) {
			err = rcf_bench_rdma(f, buf, mr, ops[i], sizes[j]);
			n = 0;
			ns = 0;
			t0 = ktime_get_ns();
			while (!err && n < rcf_bench_iters &&
			       ns < RCF_BENCH_OP_NS) {
				err = rcf_bench_rdma(f, buf, mr, ops[i],
						     sizes[j]);
				n++;
				ns = ktime_get_ns() - t0;
			}
			if (!err)
				rcf_bench_print(t, ops[i] == IB_WR_RDMA_READ ?
						"rdma_read" : "rdma_write",
						sizes[j], ns, n);
		}
	}
	if (err) {
		RCF_FAIL(test, "an RDMA WRITE or READ failed: %d", err);
		return;
	}

	c[0] = f->c;
	for (i = 1; i < RCF_BENCH_QPS; i++)
		c[i] = rcf_conn_new(test, f->c->a.pd, f->c->b.pd);
	for (i = 0; i < ARRAY_SIZE(ops) && !err; i++) {
		for (j = 0; j < ARRAY_SIZE(sizes) && !err; j++) {
			err = rcf_bench_rdma_qps(c, buf, mr, ops[i], sizes[j],
						 &ns, &n);
			if (!err)
				rcf_bench_print(t, ops[i] == IB_WR_RDMA_READ ?
						"rdma_read_16qp" :
						"rdma_write_16qp",
						sizes[j], ns, n);
		}
	}
	if (err)
		RCF_FAIL(test, "an RDMA WRITE or READ on %u QPs failed: %d",
			 RCF_BENCH_QPS, err);
}

static struct kunit_case rcf_bench_cases[] = {
	RCF_CASE(frwr_cycle),
	RCF_CASE(alloc_dereg),
	RCF_CASE(map_mr_sg),
	RCF_CASE(rdma_throughput),
	{}
};

struct kunit_suite rcf_bench_suite = {
	.name = "rdma_conformance_bench",
	.test_cases = rcf_bench_cases,
};
