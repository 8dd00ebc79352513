// SPDX-License-Identifier: GPL-2.0-only
/*
 * Suite rdmasim_dmah_dp: the hints of a DMA handle (dmah.c) acting on the
 * loopback data path (dp.c; the fixture: dp_helpers.c): steering to the
 * handle's CPU, cache-flushing copies into persistent memory, the
 * processing hint counted; and where the worker runs a QP's work when
 * nothing steers it. The two-CPU boot (make smp) runs it with a second
 * CPU online, for the WR to cross. The hints case skips on a kernel
 * without DMA handles.
 */

#include <linux/cpumask.h>
#include <linux/uaccess.h>

#include "dp_helpers.h"

#if RSIM_HAVE_DMAH_OPS
/* WRITE (or READ) @len bytes between the fixture's src and a user MR */
static void dmah_dp_rdma(struct kunit *test, struct dp_fixture *f,
			 struct ib_mr *mr, enum ib_wr_opcode op, u32 len)
{
	struct ib_rdma_wr wr = {
		.wr.opcode = op,
		.wr.send_flags = IB_SEND_SIGNALED,
		.remote_addr = mr->iova,
		.rkey = mr->rkey,
	};
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, dp_post(f->a, &wr.wr, f->src.dma, len,
				      f->pd->local_dma_lkey), 0);
	KUNIT_ASSERT_EQ(test, dp_wait(f->cq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	/*
	 * The worker adds a run's counts at the run's end, after its
	 * completions: with two CPUs the completion is seen first.
	 */
	flush_workqueue(f->rsim->dp_wq);
}

/*
 * DMA handle hints in the data path. A WRITE into a user MR whose handle
 * names a CPU, persistent memory and PH 3, posted from the test's thread:
 * moved to that CPU's worker and run there, its bytes written with
 * cache-flushing copies, PH 3 counted, the data in user memory. A READ
 * from it: moved and steered, nothing flushed (the READ writes local
 * memory). An MR with a volatile-memory handle: steered, not flushed; an
 * MR without a handle: none of it.
 */
static void rsim_dmah_dp_test_hints(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	/* with two CPUs, the other one: the WR must cross */
	int cpu = num_online_cpus() > 1 ?
		  cpumask_any_but(cpu_online_mask, raw_smp_processor_id()) :
		  raw_smp_processor_id();
	int access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
		     IB_ACCESS_REMOTE_READ;
	struct rsim_dp_stats s0, s1;
	struct ib_dmah *pm, *vm;
	struct ib_mr *mr, *mr_vm, *mr_none;
	unsigned long uaddr, u2, u3;
	u8 got[64];

	pm = rsim_kunit_dmah(test, f->rsim, BIT(IB_DMAH_CPU_ID_EXISTS) |
			     BIT(IB_DMAH_MEM_TYPE_EXISTS) |
			     BIT(IB_DMAH_PH_EXISTS), cpu, TPH_MEM_TYPE_PM, 3);
	vm = rsim_kunit_dmah(test, f->rsim, BIT(IB_DMAH_CPU_ID_EXISTS) |
			     BIT(IB_DMAH_MEM_TYPE_EXISTS) |
			     BIT(IB_DMAH_PH_EXISTS), cpu, TPH_MEM_TYPE_VM, 1);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pm);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, vm);
	mr = rsim_kunit_user_mr(test, f->pd, 2 * PAGE_SIZE, access, pm, &uaddr);
	mr_vm = rsim_kunit_user_mr(test, f->pd, PAGE_SIZE, access, vm, &u2);
	mr_none = rsim_kunit_user_mr(test, f->pd, PAGE_SIZE, access, NULL, &u3);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr_vm);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr_none);

	s0 = f->rsim->dp;
	dmah_dp_rdma(test, f, mr, IB_WR_RDMA_WRITE, 6000);
	s1 = f->rsim->dp;
	KUNIT_EXPECT_EQ(test, s1.dmah_moves - s0.dmah_moves, 1);
	KUNIT_EXPECT_EQ(test, s1.dmah_steered - s0.dmah_steered, 1);
	KUNIT_EXPECT_EQ(test, s1.dmah_pmem_bytes - s0.dmah_pmem_bytes, 6000);
	KUNIT_EXPECT_EQ(test, s1.dmah_ph[3] - s0.dmah_ph[3], 1);
	KUNIT_EXPECT_EQ(test, s1.dmah_ph[1] - s0.dmah_ph[1], 0);
	/* the bytes are in the process's memory */
	KUNIT_ASSERT_EQ(test, copy_from_user(got, (void __user *)uaddr + 5936,
					     sizeof(got)), 0);
	KUNIT_EXPECT_EQ(test, got[0], 0x5a);
	KUNIT_EXPECT_EQ(test, got[63], 0x5a);

	s0 = s1;
	dmah_dp_rdma(test, f, mr, IB_WR_RDMA_READ, 100);
	s1 = f->rsim->dp;
	KUNIT_EXPECT_EQ(test, s1.dmah_moves - s0.dmah_moves, 1);
	KUNIT_EXPECT_EQ(test, s1.dmah_steered - s0.dmah_steered, 1);
	KUNIT_EXPECT_EQ(test, s1.dmah_pmem_bytes, s0.dmah_pmem_bytes);

	s0 = s1;
	dmah_dp_rdma(test, f, mr_vm, IB_WR_RDMA_WRITE, 100);
	s1 = f->rsim->dp;
	KUNIT_EXPECT_EQ(test, s1.dmah_steered - s0.dmah_steered, 1);
	KUNIT_EXPECT_EQ(test, s1.dmah_pmem_bytes, s0.dmah_pmem_bytes);
	KUNIT_EXPECT_EQ(test, s1.dmah_ph[1] - s0.dmah_ph[1], 1);

	s0 = s1;
	dmah_dp_rdma(test, f, mr_none, IB_WR_RDMA_WRITE, 100);
	s1 = f->rsim->dp;
	KUNIT_EXPECT_EQ(test, s1.dmah_moves, s0.dmah_moves);
	KUNIT_EXPECT_EQ(test, s1.dmah_steered, s0.dmah_steered);
	KUNIT_EXPECT_EQ(test, s1.dmah_pmem_bytes, s0.dmah_pmem_bytes);
}
#else
static void rsim_dmah_dp_test_hints(struct kunit *test)
{
	kunit_skip(test,
		   "this kernel has no DMA handles (struct ib_dmah: Linux 6.17)");
}
#endif

static int dmah_dp_ran_on = -1;

/* the engine's test hook: the CPU a WR executed on */
static void dmah_dp_cpu_hook(struct rsim_qp *qp, int status)
{
	WRITE_ONCE(dmah_dp_ran_on, raw_smp_processor_id());
}

static void dmah_dp_hook_off(void *rsim)
{
	((struct rsim_dev *)rsim)->dp_test_hook = NULL;
}

/*
 * A QP no handle steers: a SEND posted with interrupts off goes to the
 * worker, which runs it on the online CPU after the poster's
 * (rsim_dp_worker_cpu()), not under a poster that may busy-poll for the
 * completion; with one CPU online, on that one. Queued on the poster's
 * CPU, a 1 MiB WRITE waited there for the poller to sleep (issue 24).
 */
static void rsim_dmah_dp_test_worker_beside_poster(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	u32 lkey = f->pd->local_dma_lkey;
	struct ib_send_wr wr = { .opcode = IB_WR_SEND, .wr_id = 4,
				 .send_flags = IB_SEND_SIGNALED };
	struct ib_wc wc[2];
	int poster, want, ran;

	KUNIT_ASSERT_EQ(test, dp_post_recv(f->b, 1, f->dst.dma, 64, lkey), 0);
	WRITE_ONCE(dmah_dp_ran_on, -1);
	f->rsim->dp_test_hook = dmah_dp_cpu_hook;
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   dmah_dp_hook_off,
							   f->rsim));
	KUNIT_ASSERT_EQ(test, dp_post_irqs_off(f->a, &wr, f->src.dma, 64, lkey,
					       &poster), 0);
	KUNIT_ASSERT_EQ(test, dp_wait(f->cq, wc, 2), 2);
	KUNIT_EXPECT_EQ(test, wc[0].status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc[1].status, IB_WC_SUCCESS);
	ran = READ_ONCE(dmah_dp_ran_on);
	want = cpumask_next(poster, cpu_online_mask);
	if (want >= nr_cpu_ids)
		want = cpumask_first(cpu_online_mask);
	kunit_info(test, "posted on CPU %d, ran on CPU %d, %u online",
		   poster, ran, num_online_cpus());
	KUNIT_EXPECT_EQ(test, ran, want);
	if (num_online_cpus() > 1)
		KUNIT_EXPECT_NE(test, ran, poster);
}

/*
 * Where a mapped send queue's doorbell runs the queue (qp.c,
 * rsim_usq_streaming()): at once while its poster has no completion to
 * poll; on the worker once it has some (it streams, as perftest's
 * bandwidth tests do) and a second CPU is online; with one CPU always at
 * once. Here in the suite the two-CPU boot runs.
 */
static void rsim_dmah_dp_test_streaming_doorbell(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	u32 lkey = f->pd->local_dma_lkey, i;
	bool two = num_online_cpus() > 1;
	struct rsim_dp_stats s0;
	struct ib_wc wc[4];

	dp_ring_attach(test, f->b);
	for (i = 0; i < 2; i++) {
		KUNIT_ASSERT_EQ(test, dp_post_recv(f->a, i, f->dst.dma + 64 * i,
						   64, lkey), 0);
		dp_ring_slot_fill(f->b, i, IB_WR_SEND, 10 + i,
				  f->src.dma + 64 * i, 64, lkey);
	}
	s0 = f->rsim->dp;
	/* nothing to poll: at once */
	KUNIT_ASSERT_EQ(test, dp_ring(f->b, 1), 0);
	KUNIT_EXPECT_EQ(test, f->rsim->dp.inline_runs, s0.inline_runs + 1);
	/* its two completions (the SEND's, the receive's) not polled */
	KUNIT_ASSERT_EQ(test, dp_ring(f->b, 2), 0);
	KUNIT_ASSERT_EQ(test, dp_wait(f->cq, wc, 4), 4);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, wc[i].status, IB_WC_SUCCESS);
	flush_workqueue(f->rsim->dp_wq);
	kunit_info(test, "%u CPUs online: %llu inline, %llu deferred",
		   num_online_cpus(), f->rsim->dp.inline_runs - s0.inline_runs,
		   f->rsim->dp.deferred - s0.deferred);
	KUNIT_EXPECT_EQ(test, f->rsim->dp.inline_runs,
			s0.inline_runs + (two ? 1 : 2));
	KUNIT_EXPECT_EQ(test, f->rsim->dp.deferred, s0.deferred + two);
}

static struct kunit_case rsim_dmah_dp_test_cases[] = {
	KUNIT_CASE(rsim_dmah_dp_test_hints),
	KUNIT_CASE(rsim_dmah_dp_test_worker_beside_poster),
	KUNIT_CASE(rsim_dmah_dp_test_streaming_doorbell),
	RSIM_KUNIT_NO_LEFTOVERS,
	{}
};

static struct kunit_suite rsim_dmah_dp_test_suite = {
	.name = "rdmasim_dmah_dp",
	.suite_init = rsim_kunit_suite_init,
	.test_cases = rsim_dmah_dp_test_cases,
};

kunit_test_suite(rsim_dmah_dp_test_suite);
