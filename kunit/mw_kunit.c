// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim_mw: memory windows (mw.c), bound through a send ring (usq.c).
 *
 * A process binds windows by writing BIND_MW WRs into its mapped send
 * queue. Here the ring is kernel memory attached to a kernel QP of the
 * data-path fixture, in place of the process's mapping, so that a case
 * writes slots and rings the doorbell as the provider does, and the
 * device's test hook writes a slot again once the kernel has copied it,
 * as a second thread of the process can: the window is bound as the copy
 * says, never beyond its MR. Windows are allocated through the driver's
 * alloc_mw, as the uverbs command does.
 */

#include <kunit/test.h>
#include <rdmasim/rdmasim-abi.h>

#include "dp_helpers.h"

/* the window's and MR's rights in these cases */
#define MW_MR_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_MW_BIND)
#define MW_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE)

/* slot @i: a signaled BIND_MW of @mw to @mr's [@addr, @addr + @len) */
static void mw_slot_bind(struct ib_qp *ibqp, u32 i, struct ib_mw *mw,
			 struct ib_mr *mr, u64 addr, u64 len, u32 new_rkey)
{
	struct rsim_uswqe *s = dp_ring_slot(ibqp, i);

	memset(s, 0, sizeof(*s));
	s->wr_id = 100 + i;
	s->opcode = IB_WR_BIND_MW;
	s->send_flags = IB_SEND_SIGNALED;
	s->wr.bind.addr = addr;
	s->wr.bind.length = len;
	s->wr.bind.mw_rkey = mw->rkey;
	s->wr.bind.mr_lkey = mr->lkey;
	s->wr.bind.rkey = new_rkey;
	s->wr.bind.access = MW_ACCESS;
}

static void mw_dealloc(void *p)
{
	struct ib_mw *mw = p;

	mw->device->ops.dealloc_mw(mw);
	kfree(mw);
}

/* a window of @pd, through the driver's alloc_mw, as uverbs makes one */
static struct ib_mw *mw_alloc(struct kunit *test, struct dp_fixture *f,
			      enum ib_mw_type type)
{
	struct ib_device *dev = &f->rsim->ibdev;
	struct ib_mw *mw = rdma_zalloc_drv_obj(dev, ib_mw);

	KUNIT_ASSERT_NOT_NULL(test, mw);
	mw->device = dev;
	mw->pd = f->pd;
	mw->type = type;
	if (dev->ops.alloc_mw(mw, NULL)) {
		kfree(mw);
		KUNIT_FAIL_AND_ABORT(test, "alloc_mw failed\n");
	}
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mw_dealloc, mw),
			0);
	return mw;
}

static struct rsim_mw *mw_of(struct ib_mw *mw)
{
	return container_of(mw, struct rsim_ibmw, ibmw)->mw;
}

/* an MR over the first 2 pages of the responder's buffer, for binding */
static struct ib_mr *mw_mr(struct kunit *test, struct dp_fixture *f)
{
	struct ib_mr *mr = rsim_kunit_mr(test, f->pd, IB_MR_TYPE_MEM_REG, 4);
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, dp_reg(test, f, f->a, mr, &f->dst, 0,
				     2 * PAGE_SIZE, MW_MR_ACCESS, true), 0);
	dp_poll_one(test, f, f->a, &wc);
	KUNIT_ASSERT_EQ(test, wc.status, IB_WC_SUCCESS);
	return mr;
}

/* one signaled RDMA WRITE of @len bytes from the requester */
static enum ib_wc_status mw_write(struct kunit *test, struct dp_fixture *f,
				  u32 rkey, u64 addr, u32 len, u32 lkey)
{
	struct ib_rdma_wr wr = { .wr.opcode = IB_WR_RDMA_WRITE,
				 .wr.send_flags = IB_SEND_SIGNALED,
				 .remote_addr = addr, .rkey = rkey };
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, dp_post(f->a, &wr.wr, f->src.dma, len, lkey), 0);
	dp_poll_one(test, f, f->a, &wc);
	return wc.status;
}

static const struct rsim_uswqe *mw_hook_want;

/* a second thread of the process: the whole MR and more, after the copy */
static void mw_hook_widen(struct rsim_qp *qp, void *slot)
{
	struct rsim_uswqe *s = slot;

	if (s != mw_hook_want)
		return;
	s->wr.bind.addr = 0;
	s->wr.bind.length = U64_MAX;
	s->wr.bind.access = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
			    IB_ACCESS_REMOTE_ATOMIC;
}

/*
 * The slot of a bind is written again once the kernel copied it (a wider
 * range, more rights): the window is what the copy said, one page, and a
 * WRITE beyond it fails even though the MR holds the bytes.
 */
static void rsim_mw_test_slot_rewritten_after_copy(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_mr *mr = mw_mr(test, f);
	struct ib_mw *mw = mw_alloc(test, f, IB_MW_TYPE_2);
	u32 rkey = ib_inc_rkey(mw->rkey);
	u32 lkey = f->pd->local_dma_lkey;
	struct rsim_mw *w = mw_of(mw);
	struct ib_wc wc;

	dp_ring_attach(test, f->b);
	mw_slot_bind(f->b, 0, mw, mr, mr->iova, PAGE_SIZE, rkey);
	mw_hook_want = dp_ring_slot(f->b, 0);
	f->rsim->usq_test_hook = mw_hook_widen;
	KUNIT_ASSERT_EQ(test, dp_ring(f->b, 1), 0);
	dp_poll_one(test, f, f->b, &wc);
	f->rsim->usq_test_hook = NULL;
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_BIND_MW);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 100);
	/* the hook did run: the process's slot says otherwise */
	KUNIT_EXPECT_EQ(test, dp_ring_slot(f->b, 0)->wr.bind.length, U64_MAX);

	KUNIT_EXPECT_EQ(test, mw->rkey, rkey);
	KUNIT_EXPECT_TRUE(test, w->bound);
	KUNIT_EXPECT_EQ(test, w->addr, mr->iova);
	KUNIT_EXPECT_EQ(test, w->length, PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, w->access, IB_ACCESS_REMOTE_WRITE);
	KUNIT_EXPECT_EQ(test, to_rsim_mr(mr)->nmw, 1);

	/* inside the window: lands */
	f->src.va[0] = 0xab;
	KUNIT_EXPECT_EQ(test, mw_write(test, f, rkey, mr->iova + 8, 1, lkey),
			IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, dp_cpu(f, &f->dst)[8], 0xab);
	/* the MR's second page, outside the window: refused, untouched */
	f->src.va[0] = 0xcd;
	KUNIT_EXPECT_EQ(test, mw_write(test, f, rkey, mr->iova + PAGE_SIZE, 1,
				       lkey), IB_WC_REM_ACCESS_ERR);
	KUNIT_EXPECT_EQ(test, dp_cpu(f, &f->dst)[PAGE_SIZE], 0);
}

/*
 * A bind beyond its MR, or with rights the MR cannot back, fails with
 * IB_WC_MW_BIND_ERR and changes nothing: the window stays free, its key
 * as it was, the MR without a window.
 */
static void rsim_mw_test_bind_beyond_mr(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_mr *mr = mw_mr(test, f);
	struct ib_mw *mw = mw_alloc(test, f, IB_MW_TYPE_2);
	u32 rkey = mw->rkey;
	struct ib_wc wc;

	dp_ring_attach(test, f->b);
	mw_slot_bind(f->b, 0, mw, mr, mr->iova + PAGE_SIZE, PAGE_SIZE + 1,
		     ib_inc_rkey(rkey));
	KUNIT_ASSERT_EQ(test, dp_ring(f->b, 1), 0);
	dp_poll_one(test, f, f->b, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_MW_BIND_ERR);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_BIND_MW);
	KUNIT_EXPECT_EQ(test, mw->rkey, rkey);
	KUNIT_EXPECT_FALSE(test, mw_of(mw)->bound);
	KUNIT_EXPECT_EQ(test, to_rsim_mr(mr)->nmw, 0);
	KUNIT_EXPECT_EQ(test, to_rsim_qp(f->b)->state, IB_QPS_ERR);
}

/* the same with an MR that has no IB_ACCESS_MW_BIND */
static void rsim_mw_test_bind_needs_mw_bind(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_mr *mr = rsim_kunit_mr(test, f->pd, IB_MR_TYPE_MEM_REG, 4);
	struct ib_mw *mw = mw_alloc(test, f, IB_MW_TYPE_2);
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, dp_reg(test, f, f->a, mr, &f->dst, 0, PAGE_SIZE,
				     IB_ACCESS_LOCAL_WRITE, true), 0);
	dp_poll_one(test, f, f->a, &wc);
	dp_ring_attach(test, f->b);
	mw_slot_bind(f->b, 0, mw, mr, mr->iova, 64, ib_inc_rkey(mw->rkey));
	KUNIT_ASSERT_EQ(test, dp_ring(f->b, 1), 0);
	dp_poll_one(test, f, f->b, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_MW_BIND_ERR);
	KUNIT_EXPECT_FALSE(test, mw_of(mw)->bound);
}

/* A window's key is an rkey only: as an lkey it is a protection error. */
static void rsim_mw_test_key_is_no_lkey(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_mr *mr = mw_mr(test, f);
	struct ib_mw *mw = mw_alloc(test, f, IB_MW_TYPE_2);
	u32 rkey = ib_inc_rkey(mw->rkey);
	struct ib_wc wc;

	dp_ring_attach(test, f->b);
	mw_slot_bind(f->b, 0, mw, mr, mr->iova, PAGE_SIZE, rkey);
	KUNIT_ASSERT_EQ(test, dp_ring(f->b, 1), 0);
	dp_poll_one(test, f, f->b, &wc);
	KUNIT_ASSERT_EQ(test, wc.status, IB_WC_SUCCESS);
	/* a window's key as the requester's lkey */
	KUNIT_EXPECT_EQ(test, mw_write(test, f, mr->rkey, mr->iova, 1, rkey),
			IB_WC_LOC_PROT_ERR);
}

/*
 * A type 2 window is reached only through the QP that bound it: bound by
 * another QP of the PD, a WRITE arriving at the responder through it is
 * refused.
 */
static void rsim_mw_test_type2_other_qp(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_mr *mr = mw_mr(test, f);
	struct ib_mw *mw = mw_alloc(test, f, IB_MW_TYPE_2);
	u32 rkey = ib_inc_rkey(mw->rkey);
	struct ib_qp *binder;
	struct ib_wc wc;

	/* a third QP of the PD binds it: the responder is not its QP */
	binder = dp_qp(test, f, IB_QPT_RC, f->pd);
	KUNIT_ASSERT_EQ(test, dp_connect(f, binder, f->a->qp_num, DP_ACCESS,
					 7), 0);
	dp_ring_attach(test, binder);
	mw_slot_bind(binder, 0, mw, mr, mr->iova, PAGE_SIZE, rkey);
	KUNIT_ASSERT_EQ(test, dp_ring(binder, 1), 0);
	dp_poll_one(test, f, binder, &wc);
	KUNIT_ASSERT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, mw_write(test, f, rkey, mr->iova, 1,
				       f->pd->local_dma_lkey),
			IB_WC_REM_ACCESS_ERR);
}

/* An MR with a window bound cannot be invalidated. */
static void rsim_mw_test_mr_busy_while_bound(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_mr *mr = mw_mr(test, f);
	struct ib_mw *mw = mw_alloc(test, f, IB_MW_TYPE_2);
	u32 rkey = ib_inc_rkey(mw->rkey);
	struct ib_send_wr inv = { .opcode = IB_WR_LOCAL_INV,
				  .send_flags = IB_SEND_SIGNALED,
				  .ex.invalidate_rkey = mr->rkey };
	struct ib_wc wc;

	dp_ring_attach(test, f->b);
	mw_slot_bind(f->b, 0, mw, mr, mr->iova, PAGE_SIZE, rkey);
	KUNIT_ASSERT_EQ(test, dp_ring(f->b, 1), 0);
	dp_poll_one(test, f, f->b, &wc);
	KUNIT_ASSERT_EQ(test, wc.status, IB_WC_SUCCESS);

	/* the MR, with a window bound, from the requester (same PD) */
	KUNIT_ASSERT_EQ(test, ib_post_send(f->a, &inv, NULL), 0);
	dp_poll_one(test, f, f->a, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_LOC_QP_OP_ERR);
	KUNIT_EXPECT_EQ(test, to_rsim_mr(mr)->state, RSIM_MR_VALID);
}

/*
 * SEND_WITH_INV to the QP a type 2 window is bound to invalidates it;
 * the next WRITE through it fails.
 */
static void rsim_mw_test_send_with_inv(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_mr *mr = mw_mr(test, f);
	struct ib_mw *mw = mw_alloc(test, f, IB_MW_TYPE_2);
	u32 rkey = ib_inc_rkey(mw->rkey);
	u32 lkey = f->pd->local_dma_lkey;
	struct ib_send_wr swi = { .opcode = IB_WR_SEND_WITH_INV,
				  .send_flags = IB_SEND_SIGNALED,
				  .ex.invalidate_rkey = rkey };
	struct ib_wc wc[2];
	int n, i;

	dp_ring_attach(test, f->b);
	mw_slot_bind(f->b, 0, mw, mr, mr->iova, PAGE_SIZE, rkey);
	KUNIT_ASSERT_EQ(test, dp_ring(f->b, 1), 0);
	dp_poll_one(test, f, f->b, wc);
	KUNIT_ASSERT_EQ(test, wc[0].status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, mw_write(test, f, rkey, mr->iova, 1, lkey),
			IB_WC_SUCCESS);

	KUNIT_ASSERT_EQ(test, dp_post_recv(f->b, 5, f->dst.dma + 2 * PAGE_SIZE,
					   64, lkey), 0);
	KUNIT_ASSERT_EQ(test, dp_post(f->a, &swi, f->src.dma, 4, lkey), 0);
	n = dp_wait(f->cq, wc, 2);
	KUNIT_ASSERT_EQ(test, n, 2);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(test, wc[i].status, IB_WC_SUCCESS);
		if (wc[i].qp == f->b) {
			KUNIT_EXPECT_TRUE(test, wc[i].wc_flags &
					  IB_WC_WITH_INVALIDATE);
			KUNIT_EXPECT_EQ(test, wc[i].ex.invalidate_rkey, rkey);
		}
	}
	KUNIT_EXPECT_FALSE(test, mw_of(mw)->bound);
	KUNIT_EXPECT_EQ(test, to_rsim_mr(mr)->nmw, 0);
	KUNIT_EXPECT_EQ(test, mw_write(test, f, rkey, mr->iova, 1, lkey),
			IB_WC_REM_ACCESS_ERR);
}

/* A type 1 window is not invalidated by LOCAL_INV (o10-37.2.26). */
static void rsim_mw_test_type1_no_local_inv(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_mr *mr = mw_mr(test, f);
	struct ib_mw *mw = mw_alloc(test, f, IB_MW_TYPE_1);
	u32 rkey = ib_inc_rkey(mw->rkey);
	struct rsim_uswqe *s;
	struct ib_wc wc;

	dp_ring_attach(test, f->b);
	mw_slot_bind(f->b, 0, mw, mr, mr->iova, PAGE_SIZE, rkey);
	s = dp_ring_slot(f->b, 1);
	memset(s, 0, sizeof(*s));
	s->wr_id = 7;
	s->opcode = IB_WR_LOCAL_INV;
	s->send_flags = IB_SEND_SIGNALED;
	s->ex = rkey;
	KUNIT_ASSERT_EQ(test, dp_ring(f->b, 2), 0);
	dp_poll_one(test, f, f->b, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	dp_poll_one(test, f, f->b, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_LOC_QP_OP_ERR);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_LOCAL_INV);
	KUNIT_EXPECT_TRUE(test, mw_of(mw)->bound);
}

static struct kunit_case rsim_mw_test_cases[] = {
	KUNIT_CASE(rsim_mw_test_slot_rewritten_after_copy),
	KUNIT_CASE(rsim_mw_test_bind_beyond_mr),
	KUNIT_CASE(rsim_mw_test_bind_needs_mw_bind),
	KUNIT_CASE(rsim_mw_test_key_is_no_lkey),
	KUNIT_CASE(rsim_mw_test_type2_other_qp),
	KUNIT_CASE(rsim_mw_test_mr_busy_while_bound),
	KUNIT_CASE(rsim_mw_test_send_with_inv),
	KUNIT_CASE(rsim_mw_test_type1_no_local_inv),
	RSIM_KUNIT_NO_LEFTOVERS,
	{}
};

static struct kunit_suite rsim_mw_test_suite = {
	.name = "rdmasim_mw",
	.suite_init = rsim_kunit_suite_init,
	.test_cases = rsim_mw_test_cases,
};

kunit_test_suite(rsim_mw_test_suite);
