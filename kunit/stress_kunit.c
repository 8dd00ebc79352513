// SPDX-License-Identifier: GPL-2.0-only
/*
 * Suite rdmasim_stress: long transfers on the loopback data path (the
 * fixture: dp_helpers.c), slow cases. A 1 GiB RDMA WRITE and 4096 queued
 * 1 MiB WRITEs run by the worker in bounded slices while an idle QP is
 * destroyed and a sleeping thread measures its latency; LOCAL_INV and
 * dereg of the destination MR stop a 1 GiB WRITE at once.
 */

#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/scatterlist.h>
#include <rdma/ib_mad.h>

#include "dp_helpers.h"

/**
 * struct stress_big - a large buffer on each side, mapped for the device
 * @src: requester's buffer (local DMA lkey)
 * @dst: responder's buffer
 */
struct stress_big {
	struct dp_buf src;
	struct dp_buf dst;
};

/*
 * Map @mr (SG_GAPS, @n entries) so that every entry aliases @b: @n *
 * @b->len bytes of address space over one buffer; register it through @qp.
 */
static void stress_alias_reg(struct kunit *test, struct dp_fixture *f,
			     struct ib_qp *qp, struct ib_mr *mr,
			     struct dp_buf *b, u32 n, int access)
{
	struct scatterlist *sgl = kunit_kcalloc(test, n, sizeof(*sgl),
						GFP_KERNEL);
	struct ib_reg_wr reg = { .wr.opcode = IB_WR_REG_MR, .mr = mr,
				 .access = access };
	struct ib_wc wc;
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, sgl);
	sg_init_table(sgl, n);
	for (i = 0; i < n; i++) {
		sg_dma_address(&sgl[i]) = b->dma;
		sg_dma_len(&sgl[i]) = b->len;
	}
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg(mr, sgl, n, NULL, PAGE_SIZE), n);
	reg.key = mr->rkey;
	reg.wr.send_flags = IB_SEND_SIGNALED;
	KUNIT_ASSERT_EQ(test, ib_post_send(qp, &reg.wr, NULL), 0);
	KUNIT_ASSERT_EQ(test, dp_wait(f->cq, &wc, 1), 1);
	KUNIT_ASSERT_EQ(test, wc.status, IB_WC_SUCCESS);
}

/* stress_alias_reg() on a new MR that the test releases */
static struct ib_mr *stress_alias_mr(struct kunit *test,
				     struct dp_fixture *f, struct ib_qp *qp,
				     struct dp_buf *b, u32 n, int access)
{
	struct ib_mr *mr = rsim_kunit_mr(test, f->pd, IB_MR_TYPE_SG_GAPS, n);

	stress_alias_reg(test, f, qp, mr, b, n, access);
	return mr;
}

static s64 stress_destroy_idle_qp_us(struct kunit *test, struct dp_fixture *f)
{
	struct ib_qp *idle = dp_qp(test, f, IB_QPT_RC, f->pd);
	ktime_t t0 = ktime_get();

	kunit_release_action(test, dp_qp_destroy, idle);
	return ktime_us_delta(ktime_get(), t0);
}

/**
 * struct stress_lat - a thread that measures how late its 1 ms sleeps end
 * @t: the thread
 * @max_us: the latest wake-up seen, in microseconds past the 1 ms
 * @loops: sleeps done
 */
struct stress_lat {
	struct task_struct *t;
	s64 max_us;
	atomic_t loops;
};

static int stress_lat_fn(void *arg)
{
	struct stress_lat *l = arg;

	while (!kthread_should_stop()) {
		ktime_t t0 = ktime_get();
		s64 late;

		usleep_range(1000, 1100);
		late = ktime_us_delta(ktime_get(), t0) - 1000;
		if (late > READ_ONCE(l->max_us))
			WRITE_ONCE(l->max_us, late);
		atomic_inc(&l->loops);
	}
	return 0;
}

static void stress_lat_start(struct kunit *test, struct stress_lat *l)
{
	l->max_us = 0;
	atomic_set(&l->loops, 0);
	l->t = kthread_run(stress_lat_fn, l, "stress_lat");
	KUNIT_ASSERT_FALSE(test, IS_ERR(l->t));
	/* measuring before the traffic starts */
	while (atomic_read(&l->loops) < 2)
		usleep_range(500, 1000);
}

/*
 * Whether @us, a wall-clock figure taken while a copy of @copy_ms ran, is
 * short: under @bound_us, or under half the copy. A loaded host
 * deschedules the whole UML process now and then, which stretches every
 * wall-clock figure by the same stall (a cold make check, two kernels
 * compiling beside it, saw a 1 ms sleep end 373 ms late during a 1427 ms
 * copy: more than the quarter this once allowed); what the bounds rule
 * out, a sleeper or a destroy that waits for the whole copy, is a figure
 * as long as the copy itself.
 */
static bool stress_short(s64 us, s64 bound_us, s64 copy_ms)
{
	return us < bound_us || us < copy_ms * USEC_PER_MSEC / 2;
}

/*
 * During a copy of @copy_ms: the idle QP's destroy did not wait for it,
 * and the copy yields (the sleeper never waited for the whole copy).
 */
static void stress_expect_short(struct kunit *test, s64 idle_us, s64 late_us,
				s64 copy_ms)
{
	KUNIT_EXPECT_TRUE(test, stress_short(idle_us, 100 * USEC_PER_MSEC,
					     copy_ms));
	KUNIT_EXPECT_TRUE(test, stress_short(late_us, 50 * USEC_PER_MSEC,
					     copy_ms));
}

#define STRESS_BIG	(2 * 1024 * 1024)
#define STRESS_BIG_N	512	/* 512 * 2 MiB = 1 GiB */

/*
 * One 1 GiB RDMA WRITE, then 4096 queued 1 MiB WRITEs: the worker runs
 * them in bounded slices and yields between pages (no soft lockup, no
 * long section with interrupts off), the data lands, and destroying an
 * idle QP meanwhile takes milliseconds, not the length of the traffic.
 */
static void rsim_stress_test_huge_writes(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct stress_big *big = kunit_kzalloc(test, sizeof(*big), GFP_KERNEL);
	struct stress_lat lat;
	struct ib_qp_init_attr qa = {
		.qp_type = IB_QPT_RC,
		.send_cq = f->cq,
		.recv_cq = f->cq,
		.cap = { .max_send_wr = 4096, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
	};
	struct rsim_dp_stats before = f->rsim->dp;
	struct ib_mr *smr, *dmr;
	struct ib_qp *a, *b;
	struct ib_rdma_wr wr = { .wr.opcode = IB_WR_RDMA_WRITE };
	s64 idle_us, copy_ms, extra;
	ktime_t t0;
	struct ib_wc wc;
	int i, err = 0;

	KUNIT_ASSERT_NOT_NULL(test, big);
	a = ib_create_qp(f->pd, &qa);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, a);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, dp_qp_destroy,
							   a));
	b = dp_qp(test, f, IB_QPT_RC, f->pd);
	KUNIT_ASSERT_EQ(test, dp_connect(f, a, b->qp_num, DP_ACCESS, 7), 0);
	KUNIT_ASSERT_EQ(test, dp_connect(f, b, a->qp_num, DP_ACCESS, 7), 0);
	dp_buf_init(test, f, &big->src, STRESS_BIG, 0xc3);
	dp_buf_init(test, f, &big->dst, STRESS_BIG, 0);
	smr = stress_alias_mr(test, f, a, &big->src, STRESS_BIG_N, 0);
	dmr = stress_alias_mr(test, f, b, &big->dst, STRESS_BIG_N,
			      IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);

	idle_us = stress_destroy_idle_qp_us(test, f);
	kunit_info(test, "idle QP destroyed without traffic in %lld us\n",
		   idle_us);

	/* 1 GiB in one WR; a sleeping thread measures the CPU's latency */
	stress_lat_start(test, &lat);
	t0 = ktime_get();
	wr.wr.wr_id = 1;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.remote_addr = dmr->iova;
	wr.rkey = dmr->rkey;
	KUNIT_ASSERT_EQ(test, dp_post(a, &wr.wr, smr->iova,
				      (u32)STRESS_BIG * STRESS_BIG_N,
				      smr->lkey), 0);
	idle_us = stress_destroy_idle_qp_us(test, f);
	while (!ib_poll_cq(f->cq, 1, &wc))
		msleep(20);
	copy_ms = ktime_ms_delta(ktime_get(), t0);
	kthread_stop(lat.t);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.byte_len, (u32)STRESS_BIG * STRESS_BIG_N);
	kunit_info(test, "1 GiB WRITE: %lld ms; idle QP destroyed meanwhile in %lld us; a 1 ms sleep ended at most %lld us late\n",
		   copy_ms, idle_us, lat.max_us);
	stress_expect_short(test, idle_us, lat.max_us, copy_ms);

	/* 4096 queued 1 MiB WRITEs, only the last one signaled */
	dp_fill(big->dst.va, STRESS_BIG, 0);
	stress_lat_start(test, &lat);
	t0 = ktime_get();
	for (i = 0; i < 4096 && !err; i++) {
		wr.wr.wr_id = 100 + i;
		wr.wr.send_flags = i == 4095 ? IB_SEND_SIGNALED : 0;
		wr.remote_addr = dmr->iova + (u64)(i % 1024) * SZ_1M;
		err = dp_post(a, &wr.wr, smr->iova + (u64)(i % 1024) * SZ_1M,
			      SZ_1M, smr->lkey);
	}
	KUNIT_ASSERT_EQ(test, err, 0);
	idle_us = stress_destroy_idle_qp_us(test, f);
	while (!ib_poll_cq(f->cq, 1, &wc))
		msleep(20);
	copy_ms = ktime_ms_delta(ktime_get(), t0);
	kthread_stop(lat.t);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 100 + 4095);
	kunit_info(test, "4096 x 1 MiB WRITEs: %lld ms; idle QP destroyed meanwhile in %lld us; a 1 ms sleep ended at most %lld us late\n",
		   copy_ms, idle_us, lat.max_us);
	stress_expect_short(test, idle_us, lat.max_us, copy_ms);
	ib_dma_sync_single_for_cpu(&f->rsim->ibdev, big->dst.dma, STRESS_BIG,
				   DMA_BIDIRECTIONAL);
	KUNIT_EXPECT_EQ(test, big->dst.va[0], 0xc3);
	KUNIT_EXPECT_EQ(test, big->dst.va[STRESS_BIG - 1], 0xc3);
	/*
	 * Every byte of the WRITEs counted once. The shared device's counter
	 * also counts the MAD layer's own traffic on QP0/QP1 meanwhile (the
	 * SA's queries after the port events of earlier suites, retried for
	 * seconds: 512 bytes more, once, on 6.12): whole MADs, a few.
	 */
	flush_workqueue(f->rsim->dp_wq);	/* a run counts at its end */
	extra = f->rsim->dp.bytes - before.bytes -
		((u64)STRESS_BIG * STRESS_BIG_N + 4096ULL * SZ_1M);
	KUNIT_EXPECT_GE(test, extra, 0);
	KUNIT_EXPECT_EQ(test, extra % IB_MGMT_MAD_SIZE, 0);
	KUNIT_EXPECT_LE(test, extra, 16 * IB_MGMT_MAD_SIZE);
	KUNIT_EXPECT_GE(test, f->rsim->dp.deferred - before.deferred, 2);
}

/* both QPs of the fixture back to RESET, then connected again */
static void stress_reconnect(struct kunit *test, struct dp_fixture *f)
{
	struct ib_qp_attr qa = { .qp_state = IB_QPS_RESET };

	KUNIT_ASSERT_EQ(test, ib_modify_qp(f->a, &qa, IB_QP_STATE), 0);
	KUNIT_ASSERT_EQ(test, ib_modify_qp(f->b, &qa, IB_QP_STATE), 0);
	KUNIT_ASSERT_EQ(test, dp_connect(f, f->a, f->b->qp_num, DP_ACCESS, 7),
			0);
	KUNIT_ASSERT_EQ(test, dp_connect(f, f->b, f->a->qp_num, DP_ACCESS, 7),
			0);
}

/*
 * LOCAL_INV (on another QP) or dereg of the destination MR while a 1 GiB
 * WRITE into it runs on the worker: once the invalidation completes or
 * dereg returns, not one byte more is written (the buffer, cleared then,
 * stays clear), and the WRITE fails as a responder access error.
 */
static void rsim_stress_test_inval_stops_writes(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct stress_big *big = kunit_kzalloc(test, sizeof(*big), GFP_KERNEL);
	bool dereg = false;
	int pass;

	KUNIT_ASSERT_NOT_NULL(test, big);
	dp_buf_init(test, f, &big->src, STRESS_BIG, 0xc3);
	dp_buf_init(test, f, &big->dst, STRESS_BIG, 0);
	for (pass = 0; pass < 2; pass++, dereg = true) {
		struct ib_mr *smr = stress_alias_mr(test, f, f->a, &big->src,
						STRESS_BIG_N, 0);
		struct ib_mr *dmr = dereg ?
			ib_alloc_mr(f->pd, IB_MR_TYPE_SG_GAPS, STRESS_BIG_N) :
			rsim_kunit_mr(test, f->pd, IB_MR_TYPE_SG_GAPS,
				      STRESS_BIG_N);
		struct ib_rdma_wr wr = {
			.wr.opcode = IB_WR_RDMA_WRITE,
			.wr.send_flags = IB_SEND_SIGNALED,
			.wr.wr_id = 1,
		};
		struct ib_send_wr inv = {
			.opcode = IB_WR_LOCAL_INV,
			.send_flags = IB_SEND_SIGNALED,
			.wr_id = 2,
		};
		struct ib_wc wc;
		size_t i, dirty = 0;

		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dmr);
		stress_alias_reg(test, f, f->b, dmr, &big->dst, STRESS_BIG_N,
				 IB_ACCESS_LOCAL_WRITE |
				 IB_ACCESS_REMOTE_WRITE);
		wr.remote_addr = dmr->iova;
		wr.rkey = dmr->rkey;
		inv.ex.invalidate_rkey = dmr->rkey;
		KUNIT_ASSERT_EQ(test, dp_post(f->a, &wr.wr, smr->iova,
					      (u32)STRESS_BIG * STRESS_BIG_N,
					      smr->lkey), 0);
		/* let the copy get going on the worker */
		msleep(20);
		if (dereg) {
			KUNIT_EXPECT_EQ(test, ib_dereg_mr(dmr), 0);
		} else {
			KUNIT_ASSERT_EQ(test, ib_post_send(f->b, &inv, NULL),
					0);
			KUNIT_ASSERT_EQ(test, dp_wait(f->cq, &wc, 1), 1);
			KUNIT_EXPECT_EQ(test, wc.wr_id, 2);
			KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
		}
		dp_fill(big->dst.va, STRESS_BIG, 0);
		ib_dma_sync_single_for_device(&f->rsim->ibdev, big->dst.dma,
					      STRESS_BIG, DMA_BIDIRECTIONAL);
		while (!ib_poll_cq(f->cq, 1, &wc))
			msleep(20);
		KUNIT_EXPECT_EQ(test, wc.wr_id, 1);
		KUNIT_EXPECT_EQ(test, wc.status, IB_WC_REM_ACCESS_ERR);
		ib_dma_sync_single_for_cpu(&f->rsim->ibdev, big->dst.dma,
					   STRESS_BIG, DMA_BIDIRECTIONAL);
		for (i = 0; i < STRESS_BIG; i++)
			dirty += big->dst.va[i] != 0;
		KUNIT_EXPECT_EQ_MSG(test, dirty, 0, "%s",
				    dereg ? "dereg" : "LOCAL_INV");
		/* the error took both QPs down: back to RTS for the next pass */
		while (ib_poll_cq(f->cq, 1, &wc))
			;
		stress_reconnect(test, f);
	}
}

static struct kunit_case rsim_stress_test_cases[] = {
	KUNIT_CASE_SLOW(rsim_stress_test_huge_writes),
	KUNIT_CASE_SLOW(rsim_stress_test_inval_stops_writes),
	RSIM_KUNIT_NO_LEFTOVERS,
	{}
};

static struct kunit_suite rsim_stress_test_suite = {
	.name = "rdmasim_stress",
	.suite_init = rsim_kunit_suite_init,
	.test_cases = rsim_stress_test_cases,
};

kunit_test_suite(rsim_stress_test_suite);
