// SPDX-License-Identifier: GPL-2.0-only
/*
 * Suite rdmasim_srq: a shared receive queue (srq.c) on the loopback data
 * path (the fixture: dp_helpers.c). SENDs to a QP of the SRQ take its
 * WRs in order; its limit event, RNR waits on it, Last WQE Reached, and
 * the attributes it refuses.
 */

#include "dp_helpers.h"

/**
 * struct srq_events - what an SRQ's and its QP's handlers saw
 * @limit: IB_EVENT_SRQ_LIMIT_REACHED events
 * @last_wqe: IB_EVENT_QP_LAST_WQE_REACHED events
 */
struct srq_events {
	atomic_t limit;
	atomic_t last_wqe;
};

static void srq_ev(struct ib_event *e, void *ctx)
{
	struct srq_events *ev = ctx;

	if (e->event == IB_EVENT_SRQ_LIMIT_REACHED)
		atomic_inc(&ev->limit);
	else if (e->event == IB_EVENT_QP_LAST_WQE_REACHED)
		atomic_inc(&ev->last_wqe);
}

static void srq_destroy(void *srq)
{
	ib_destroy_srq(srq);
}

/*
 * A shared receive queue: SENDs to a QP of the SRQ land in the SRQ's WRs,
 * in order, completed on the QP's receive CQ; post_recv on that QP is
 * refused; the armed limit fires once; an RNR wait ends when the SRQ gets
 * a WR; the QP entering the error state gets LAST_WQE_REACHED; bad
 * attributes are refused and change nothing.
 */
static void rsim_srq_test_shared_receive(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct srq_events *ev = kunit_kzalloc(test, sizeof(*ev), GFP_KERNEL);
	struct ib_srq_init_attr sa = {
		.event_handler = srq_ev,
		.attr = { .max_wr = 4, .max_sge = 1 },
		.srq_type = IB_SRQT_BASIC,
	};
	struct ib_qp_init_attr qa = {
		.qp_type = IB_QPT_RC,
		.send_cq = f->cq,
		.recv_cq = f->cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.event_handler = srq_ev,
		.port_num = 1,
	};
	u32 lkey = f->pd->local_dma_lkey;
	struct ib_send_wr send = { .opcode = IB_WR_SEND,
				   .send_flags = IB_SEND_SIGNALED };
	struct rsim_kunit_counts before;
	struct ib_srq_attr attr;
	struct ib_qp_attr err = { .qp_state = IB_QPS_ERR };
	struct ib_srq *srq;
	struct ib_qp *a, *b;
	struct ib_wc wc[4];
	int i;

	KUNIT_ASSERT_NOT_NULL(test, ev);
	sa.srq_context = ev;
	qa.qp_context = ev;

	/* bad attributes */
	rsim_kunit_snapshot(f->rsim, &before);
	sa.attr.max_wr = 0;
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_create_srq(f->pd, &sa)), -EINVAL);
	sa.attr.max_wr = 4097;
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_create_srq(f->pd, &sa)), -EINVAL);
	sa.attr.max_wr = 4;
	sa.attr.srq_limit = 5;
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_create_srq(f->pd, &sa)), -EINVAL);
	sa.attr.srq_limit = 0;
	sa.attr.max_sge = 17;
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_create_srq(f->pd, &sa)), -EINVAL);
	sa.attr.max_sge = 1;
	rsim_kunit_expect_counts(test, f->rsim, &before);

	srq = ib_create_srq(f->pd, &sa);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, srq);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, srq_destroy,
							   srq));
	KUNIT_EXPECT_EQ(test, rsim_res_count(f->rsim, RSIM_RES_SRQ),
			before.res[RSIM_RES_SRQ] + 1);
	qa.srq = srq;
	b = ib_create_qp(f->pd, &qa);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, b);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, dp_qp_destroy,
							   b));
	KUNIT_EXPECT_EQ(test, qa.cap.max_recv_wr, 0);
	a = dp_qp(test, f, IB_QPT_RC, f->pd);
	KUNIT_ASSERT_EQ(test, dp_connect(f, a, b->qp_num, DP_ACCESS, 7), 0);
	KUNIT_ASSERT_EQ(test, dp_connect(f, b, a->qp_num, DP_ACCESS, 7), 0);
	KUNIT_EXPECT_EQ(test, dp_post_recv(b, 1, f->dst.dma, 64, lkey),
			-EINVAL);

	/* two SENDs take the SRQ's WRs in order */
	for (i = 0; i < 3; i++)
		KUNIT_ASSERT_EQ(test, dp_post_srq_recv(srq, 100 + i,
						       f->dst.dma + 64 * i,
						       64, lkey), 0);
	for (i = 0; i < 2; i++) {
		f->src.va[0] = 'A' + i;
		ib_dma_sync_single_for_device(&f->rsim->ibdev, f->src.dma,
					      DP_BUF, DMA_BIDIRECTIONAL);
		send.wr_id = i;
		KUNIT_ASSERT_EQ(test, dp_post(a, &send, f->src.dma, 16, lkey),
				0);
		KUNIT_ASSERT_EQ(test, dp_poll(f, wc, 4), 2);
		KUNIT_EXPECT_EQ(test, wc[0].status, IB_WC_SUCCESS);
		KUNIT_EXPECT_EQ(test, wc[1].status, IB_WC_SUCCESS);
		/* the receive completion: on b, with the SRQ WR's id */
		if (wc[0].qp != b)
			swap(wc[0], wc[1]);
		KUNIT_EXPECT_PTR_EQ(test, wc[0].qp, b);
		KUNIT_EXPECT_EQ(test, wc[0].wr_id, 100 + i);
		KUNIT_EXPECT_EQ(test, wc[0].byte_len, 16);
		KUNIT_EXPECT_EQ(test, dp_cpu(f, &f->dst)[64 * i], 'A' + i);
	}

	/* the limit: fires once when fewer than 2 WRs remain (3 now) */
	KUNIT_ASSERT_EQ(test, dp_post_srq_recv(srq, 103, f->dst.dma + 192,
					       64, lkey), 0);
	KUNIT_ASSERT_EQ(test, dp_post_srq_recv(srq, 104, f->dst.dma + 256,
					       64, lkey), 0);
	/* a resize below the 3 WRs posted */
	attr.max_wr = 2;
	KUNIT_EXPECT_EQ(test, ib_modify_srq(srq, &attr, IB_SRQ_MAX_WR),
			-EINVAL);
	attr.srq_limit = 5;
	KUNIT_EXPECT_EQ(test, ib_modify_srq(srq, &attr, IB_SRQ_LIMIT),
			-EINVAL);
	attr.srq_limit = 2;
	KUNIT_ASSERT_EQ(test, ib_modify_srq(srq, &attr, IB_SRQ_LIMIT), 0);
	KUNIT_ASSERT_EQ(test, ib_query_srq(srq, &attr), 0);
	KUNIT_EXPECT_EQ(test, attr.srq_limit, 2);
	KUNIT_EXPECT_EQ(test, attr.max_wr, 4);
	for (i = 0; i < 2; i++) {
		KUNIT_ASSERT_EQ(test, dp_post(a, &send, f->src.dma, 16, lkey),
				0);
		KUNIT_ASSERT_EQ(test, dp_poll(f, wc, 4), 2);
		/* the SRQ's event is the dispatcher's */
		rsim_kunit_events_flush(f->rsim);
		KUNIT_EXPECT_EQ(test, atomic_read(&ev->limit), i);
	}
	KUNIT_ASSERT_EQ(test, ib_query_srq(srq, &attr), 0);
	KUNIT_EXPECT_EQ(test, attr.srq_limit, 0);
	/* disarmed: the last WR goes without another event */
	KUNIT_ASSERT_EQ(test, dp_post(a, &send, f->src.dma, 16, lkey), 0);
	KUNIT_ASSERT_EQ(test, dp_poll(f, wc, 4), 2);
	rsim_kunit_events_flush(f->rsim);
	KUNIT_EXPECT_EQ(test, atomic_read(&ev->limit), 1);

	/* empty: the SEND waits (rnr_retry 7) until the SRQ gets a WR */
	send.wr_id = 9;
	KUNIT_ASSERT_EQ(test, dp_post(a, &send, f->src.dma, 16, lkey), 0);
	KUNIT_EXPECT_EQ(test, dp_poll(f, wc, 4), 0);
	KUNIT_ASSERT_EQ(test, dp_post_srq_recv(srq, 105, f->dst.dma, 64,
					       lkey), 0);
	KUNIT_ASSERT_EQ(test, dp_wait(f->cq, wc, 2), 2);
	KUNIT_EXPECT_EQ(test, wc[0].status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc[1].status, IB_WC_SUCCESS);
	rsim_kunit_events_flush(f->rsim);
	KUNIT_EXPECT_EQ(test, atomic_read(&ev->limit), 1);

	/* the error state: LAST_WQE_REACHED, once */
	KUNIT_EXPECT_EQ(test, atomic_read(&ev->last_wqe), 0);
	KUNIT_ASSERT_EQ(test, ib_modify_qp(b, &err, IB_QP_STATE), 0);
	KUNIT_ASSERT_EQ(test, ib_modify_qp(b, &err, IB_QP_STATE), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ev->last_wqe), 1);
	/* the SRQ's WRs stay for its other QPs: nothing was flushed */
	KUNIT_EXPECT_EQ(test, dp_poll(f, wc, 4), 0);
	KUNIT_EXPECT_EQ(test, to_rsim_srq(srq)->rq.count, 0);

	/*
	 * a resize of the kernel's ring: the WRs posted before it are held
	 * in the old one and counted against the new depth; a second resize
	 * meanwhile is EBUSY
	 */
	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_EQ(test, dp_post_srq_recv(srq, 110 + i,
						       f->dst.dma, 64, lkey),
				0);
	attr.max_wr = 6;
	KUNIT_EXPECT_EQ(test, ib_modify_srq(srq, &attr, IB_SRQ_MAX_WR), 0);
	KUNIT_EXPECT_EQ(test, to_rsim_srq(srq)->rq.held, 4);
	KUNIT_EXPECT_EQ(test, ib_modify_srq(srq, &attr, IB_SRQ_MAX_WR),
			-EBUSY);
	KUNIT_EXPECT_EQ(test, dp_post_srq_recv(srq, 120, f->dst.dma, 64, lkey),
			0);
	KUNIT_EXPECT_EQ(test, dp_post_srq_recv(srq, 121, f->dst.dma, 64, lkey),
			0);
	KUNIT_EXPECT_EQ(test, dp_post_srq_recv(srq, 122, f->dst.dma, 64, lkey),
			-ENOMEM);
	KUNIT_ASSERT_EQ(test, ib_query_srq(srq, &attr), 0);
	KUNIT_EXPECT_EQ(test, attr.max_wr, 6);
}

static struct kunit_case rsim_srq_test_cases[] = {
	KUNIT_CASE(rsim_srq_test_shared_receive),
	RSIM_KUNIT_NO_LEFTOVERS,
	{}
};

static struct kunit_suite rsim_srq_test_suite = {
	.name = "rdmasim_srq",
	.suite_init = rsim_kunit_suite_init,
	.test_cases = rsim_srq_test_cases,
};

kunit_test_suite(rsim_srq_test_suite);
