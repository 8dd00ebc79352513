// SPDX-License-Identifier: GPL-2.0-only
/*
 * Suite rdmasim_datapath: the loopback data path between two RC (or UC)
 * QPs of the shared device connected to each other, over buffers mapped
 * with the DMA API (the fixture: dp_helpers.c). SEND and its lists,
 * inline data, fast registration (REG_MR, LOCAL_INV, remote
 * invalidation) with RDMA WRITE and READ, and every check an access must
 * pass: key and variant, MR state, PD, access rights, bounds, receive
 * capacity, RNR; post_send's own checks, the counters, CQ resize and
 * overflow, affiliated events, the engine's races and deferral, user
 * memory. Atomics, SRQs, UD, the DMA-handle hints and the long transfers
 * have suites of their own (atomic_kunit.c, srq_kunit.c, ud_kunit.c,
 * dmah_dp_kunit.c, stress_kunit.c).
 */

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/scatterlist.h>
#include <linux/uaccess.h>

#include "dp_helpers.h"

#define RSIM_MAX_CQE	32768	/* rsim_default_limits.max_cqe */

static void rsim_dp_test_send_recv(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	u32 lkey = f->pd->local_dma_lkey;
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND_WITH_IMM,
		.wr_id = 1,
		.send_flags = IB_SEND_SIGNALED,
		.ex.imm_data = cpu_to_be32(0xabcd),
	};
	struct ib_wc wc[2];
	int i;

	for (i = 0; i < 300; i++)
		f->src.va[i] = i;
	KUNIT_ASSERT_EQ(test, dp_post_recv(f->b, 9, f->dst.dma + 8, 1000,
					   lkey), 0);
	KUNIT_ASSERT_EQ(test, dp_post(f->a, &wr, f->src.dma, 300, lkey), 0);
	KUNIT_ASSERT_EQ(test, dp_poll(f, wc, 2), 2);
	/* the receive completes first: the responder acks before the ack */
	KUNIT_EXPECT_PTR_EQ(test, wc[0].qp, f->b);
	KUNIT_EXPECT_EQ(test, wc[0].status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc[0].opcode, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, 9);
	KUNIT_EXPECT_EQ(test, wc[0].byte_len, 300);
	KUNIT_EXPECT_EQ(test, wc[0].src_qp, f->a->qp_num);
	KUNIT_EXPECT_EQ(test, wc[0].slid, f->rsim->port.lid);
	KUNIT_EXPECT_TRUE(test, wc[0].wc_flags & IB_WC_WITH_IMM);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(wc[0].ex.imm_data), 0xabcd);
	KUNIT_EXPECT_PTR_EQ(test, wc[1].qp, f->a);
	KUNIT_EXPECT_EQ(test, wc[1].status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc[1].opcode, IB_WC_SEND);
	KUNIT_EXPECT_EQ(test, wc[1].wr_id, 1);
	dp_cpu(f, &f->dst);
	for (i = 0; i < 300; i++)
		KUNIT_ASSERT_EQ(test, f->dst.va[8 + i], (u8)i);
	KUNIT_EXPECT_EQ(test, f->dst.va[7], 0);
	KUNIT_EXPECT_EQ(test, f->dst.va[308], 0);
}

/* a gather list crossing pages into a scatter list of three pieces */
static void rsim_dp_test_sg_lists(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	u32 lkey = f->pd->local_dma_lkey;
	struct ib_sge gs[2] = {
		{ f->src.dma + PAGE_SIZE - 100, 300, lkey },
		{ f->src.dma + 2 * PAGE_SIZE, 200, lkey },
	};
	struct ib_sge ss[3] = {
		{ f->dst.dma, 50, lkey },
		{ f->dst.dma + PAGE_SIZE - 10, 20, lkey },
		{ f->dst.dma + 2 * PAGE_SIZE, 1000, lkey },
	};
	struct ib_send_wr wr = { .opcode = IB_WR_SEND, .sg_list = gs,
				 .num_sge = 2 };
	struct ib_recv_wr rwr = { .sg_list = ss, .num_sge = 3 };
	u8 *expect;
	struct ib_wc wc;
	int i, j;

	expect = kunit_kmalloc(test, 500, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, expect);
	for (i = 0; i < DP_BUF; i++)
		f->src.va[i] = i * 7;
	memcpy(expect, f->src.va + PAGE_SIZE - 100, 300);
	memcpy(expect + 300, f->src.va + 2 * PAGE_SIZE, 200);

	KUNIT_ASSERT_EQ(test, ib_post_recv(f->b, &rwr, NULL), 0);
	KUNIT_ASSERT_EQ(test, ib_post_send(f->a, &wr, NULL), 0);
	dp_poll_one(test, f, f->b, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 500);
	/* unsignaled: no send completion */
	KUNIT_EXPECT_EQ(test, dp_poll(f, &wc, 1), 0);
	dp_cpu(f, &f->dst);
	for (i = 0, j = 0; i < 3; i++) {
		u8 *p = f->dst.va + (ss[i].addr - f->dst.dma);
		u32 n = min_t(u32, ss[i].length, 500 - j);

		KUNIT_EXPECT_EQ(test, memcmp(p, expect + j, n), 0);
		j += n;
	}
}

static void rsim_dp_test_inline(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	u32 lkey = f->pd->local_dma_lkey;
	char msg[] = "inline data is copied when posted";
	struct ib_sge sge = { .addr = (uintptr_t)msg, .length = sizeof(msg) };
	struct ib_send_wr wr = { .opcode = IB_WR_SEND, .sg_list = &sge,
				 .num_sge = 1, .send_flags = IB_SEND_INLINE };
	struct ib_sge big = { .addr = (uintptr_t)f->src.va, .length = 65 };
	const struct ib_send_wr *bad;
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, dp_post_recv(f->b, 1, f->dst.dma, 100, lkey), 0);
	KUNIT_ASSERT_EQ(test, ib_post_send(f->a, &wr, NULL), 0);
	dp_poll_one(test, f, f->b, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, sizeof(msg));
	KUNIT_EXPECT_STREQ(test, (char *)dp_cpu(f, &f->dst), msg);

	/* above max_inline_data (64): refused when posted */
	wr.sg_list = &big;
	KUNIT_EXPECT_EQ(test, ib_post_send(f->a, &wr, &bad), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, bad, (const struct ib_send_wr *)&wr);
}

/* FRWR on the responder, RDMA WRITE and READ through its rkey */
static void rsim_dp_test_frwr_write_read(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	u32 lkey = f->pd->local_dma_lkey;
	struct ib_mr *mr = rsim_kunit_mr(test, f->pd, IB_MR_TYPE_MEM_REG, 4);
	struct ib_rdma_wr wr = { .wr.opcode = IB_WR_RDMA_WRITE,
				 .wr.send_flags = IB_SEND_SIGNALED };
	struct ib_wc wc;
	u64 iova;
	int i;

	/* 2 pages + a bit, starting 100 bytes into the buffer */
	KUNIT_ASSERT_EQ(test, dp_reg(test, f, f->b, mr, &f->dst, 100,
				     2 * PAGE_SIZE + 10,
				     IB_ACCESS_LOCAL_WRITE | DP_ACCESS, true),
			0);
	dp_poll_one(test, f, f->b, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_REG_MR);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 77);
	KUNIT_EXPECT_EQ(test, mr->iova, f->dst.dma + 100);

	for (i = 0; i < DP_BUF; i++)
		f->src.va[i] = i * 3;
	/* the whole MR, across both page boundaries */
	iova = mr->iova;
	wr.remote_addr = iova;
	wr.rkey = mr->rkey;
	KUNIT_ASSERT_EQ(test, dp_post(f->a, &wr.wr, f->src.dma,
				      2 * PAGE_SIZE + 10, lkey), 0);
	dp_poll_one(test, f, f->a, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RDMA_WRITE);
	dp_cpu(f, &f->dst);
	KUNIT_EXPECT_EQ(test, memcmp(f->dst.va + 100, f->src.va,
				     2 * PAGE_SIZE + 10), 0);
	KUNIT_EXPECT_EQ(test, f->dst.va[99], 0);
	KUNIT_EXPECT_EQ(test, f->dst.va[100 + 2 * PAGE_SIZE + 10], 0);

	/* READ back 50 bytes from the middle of the second page */
	memset(f->src.va, 0, DP_BUF);
	wr.wr.opcode = IB_WR_RDMA_READ;
	wr.remote_addr = iova + PAGE_SIZE + 1;
	KUNIT_ASSERT_EQ(test, dp_post(f->a, &wr.wr, f->src.dma + 1, 50, lkey),
			0);
	dp_poll_one(test, f, f->a, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RDMA_READ);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 50);
	dp_cpu(f, &f->src);
	KUNIT_EXPECT_EQ(test, memcmp(f->src.va + 1,
				     f->dst.va + 100 + PAGE_SIZE + 1, 50), 0);
	KUNIT_EXPECT_EQ(test, f->src.va[0], 0);
	KUNIT_EXPECT_EQ(test, f->src.va[51], 0);
}

/*
 * A consumer may rewrite the iova after mapping (rpcrdma puts its XID in
 * the upper 32 bits); addresses are relative to the registered iova.
 */
static void rsim_dp_test_iova_rewritten(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_mr *mr = rsim_kunit_mr(test, f->pd, IB_MR_TYPE_MEM_REG, 4);
	struct ib_reg_wr rw = { .wr.opcode = IB_WR_REG_MR, .mr = mr,
				.access = IB_ACCESS_LOCAL_WRITE | DP_ACCESS };
	struct ib_rdma_wr wr = { .wr.opcode = IB_WR_RDMA_WRITE,
				 .wr.send_flags = IB_SEND_SIGNALED };
	struct scatterlist sg;
	struct ib_wc wc;

	sg_init_table(&sg, 1);
	sg_dma_address(&sg) = f->dst.dma + 300;
	sg_dma_len(&sg) = 1000;
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE), 1);
	mr->iova = (mr->iova & 0xffffffffULL) | (0x1234ULL << 32);
	rw.key = mr->rkey;
	KUNIT_ASSERT_EQ(test, ib_post_send(f->b, &rw.wr, NULL), 0);

	f->src.va[0] = 0xee;
	wr.remote_addr = mr->iova + 10;
	wr.rkey = mr->rkey;
	KUNIT_ASSERT_EQ(test, dp_post(f->a, &wr.wr, f->src.dma, 1,
				      f->pd->local_dma_lkey), 0);
	dp_poll_one(test, f, f->a, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, dp_cpu(f, &f->dst)[310], 0xee);
}

/* A later map_mr_sg does not change a valid registration. */
static void rsim_dp_test_map_after_reg(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_mr *mr = rsim_kunit_mr(test, f->pd, IB_MR_TYPE_MEM_REG, 4);
	struct ib_rdma_wr wr = { .wr.opcode = IB_WR_RDMA_WRITE };
	struct scatterlist sg;
	u64 iova;
	int i;

	KUNIT_ASSERT_EQ(test, dp_reg(test, f, f->b, mr, &f->dst, 0, 512,
				     IB_ACCESS_LOCAL_WRITE | DP_ACCESS, false),
			0);
	iova = mr->iova;
	sg_init_table(&sg, 1);
	sg_dma_address(&sg) = f->dst.dma + PAGE_SIZE;
	sg_dma_len(&sg) = 512;
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE), 1);
	mr->iova = iova;

	wr.remote_addr = iova;
	wr.rkey = mr->rkey;
	KUNIT_ASSERT_EQ(test, dp_post(f->a, &wr.wr, f->src.dma, 512,
				      f->pd->local_dma_lkey), 0);
	dp_cpu(f, &f->dst);
	for (i = 0; i < 512; i++) {
		KUNIT_ASSERT_EQ(test, f->dst.va[i], 0x5a);
		KUNIT_ASSERT_EQ(test, f->dst.va[PAGE_SIZE + i], 0);
	}
}

/* SG_GAPS: entries of any alignment, back to back in the MR */
static void rsim_dp_test_sg_gaps(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_mr *mr = rsim_kunit_mr(test, f->pd, IB_MR_TYPE_SG_GAPS, 4);
	struct ib_reg_wr rw = { .wr.opcode = IB_WR_REG_MR, .mr = mr,
				.access = IB_ACCESS_LOCAL_WRITE | DP_ACCESS };
	struct ib_rdma_wr wr = { .wr.opcode = IB_WR_RDMA_WRITE,
				 .wr.send_flags = IB_SEND_SIGNALED };
	struct scatterlist sg[3];
	static const u32 off[3] = { 3, 1000, 5000 }, len[3] = { 10, 20, 30 };
	struct ib_wc wc;
	int i, j, k;

	sg_init_table(sg, 3);
	for (i = 0; i < 3; i++) {
		sg_dma_address(&sg[i]) = f->dst.dma + off[i];
		sg_dma_len(&sg[i]) = len[i];
	}
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg(mr, sg, 3, NULL, PAGE_SIZE), 3);
	KUNIT_EXPECT_EQ(test, mr->length, 60);
	rw.key = mr->rkey;
	KUNIT_ASSERT_EQ(test, ib_post_send(f->b, &rw.wr, NULL), 0);

	for (i = 0; i < 60; i++)
		f->src.va[i] = 100 + i;
	wr.remote_addr = mr->iova;
	wr.rkey = mr->rkey;
	KUNIT_ASSERT_EQ(test, dp_post(f->a, &wr.wr, f->src.dma, 60,
				      f->pd->local_dma_lkey), 0);
	dp_poll_one(test, f, f->a, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	dp_cpu(f, &f->dst);
	for (i = 0, k = 0; i < 3; i++)
		for (j = 0; j < len[i]; j++, k++)
			KUNIT_EXPECT_EQ(test, f->dst.va[off[i] + j], 100 + k);
}

/* Ways an RDMA WRITE's remote side can be wrong; all REM_ACCESS_ERR. */
enum dp_rkey_fault {
	RK_OK,
	RK_VARIANT,		/* the key's 8-bit variant differs */
	RK_INDEX,		/* no MR has that index */
	RK_INVALIDATED,		/* LOCAL_INV'ed before the WRITE */
	RK_BEFORE,		/* starts one byte before the iova */
	RK_PAST_END,		/* ends one byte past the MR */
	RK_NO_REMOTE_WRITE,	/* registered without REMOTE_WRITE */
	RK_OTHER_PD,		/* the MR is in another PD */
	RK_QP_NO_WRITE,		/* the responder QP forbids RDMA WRITE */
	RK_LOCAL_DMA_LKEY,	/* the local DMA lkey is no rkey */
};

struct dp_rkey_case {
	const char *name;
	enum dp_rkey_fault fault;
};

static const struct dp_rkey_case dp_rkey_cases[] = {
	{ "valid", RK_OK },
	{ "wrong_variant", RK_VARIANT },
	{ "unknown_index", RK_INDEX },
	{ "invalidated", RK_INVALIDATED },
	{ "before_iova", RK_BEFORE },
	{ "past_end", RK_PAST_END },
	{ "no_remote_write", RK_NO_REMOTE_WRITE },
	{ "other_pd", RK_OTHER_PD },
	{ "qp_forbids_write", RK_QP_NO_WRITE },
	{ "local_dma_lkey", RK_LOCAL_DMA_LKEY },
};

static void dp_rkey_desc(const struct dp_rkey_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(dp_rkey, dp_rkey_cases, dp_rkey_desc);

static void rsim_dp_test_rkey_checks(struct kunit *test)
{
	const struct dp_rkey_case *c = test->param_value;
	struct dp_fixture *f = dp_fixture_type(test, IB_QPT_RC,
					       c->fault == RK_QP_NO_WRITE ?
					       IB_ACCESS_REMOTE_READ :
					       DP_ACCESS, 7);
	struct ib_pd *pd = c->fault == RK_OTHER_PD ?
			   rsim_kunit_pd(test, f->rsim) : f->pd;
	struct ib_mr *mr = rsim_kunit_mr(test, pd, IB_MR_TYPE_MEM_REG, 2);
	int access = IB_ACCESS_LOCAL_WRITE | DP_ACCESS;
	struct ib_rdma_wr wr = { .wr.opcode = IB_WR_RDMA_WRITE,
				 .wr.wr_id = 5,
				 .wr.send_flags = IB_SEND_SIGNALED };
	struct ib_send_wr inv = { .opcode = IB_WR_LOCAL_INV };
	struct ib_qp *regqp = f->b;
	u32 len = 100;
	struct ib_wc wc;
	int i;

	if (c->fault == RK_NO_REMOTE_WRITE)
		access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ;
	if (c->fault == RK_OTHER_PD)
		/* registered by a QP of that PD */
		regqp = dp_qp(test, f, IB_QPT_RC, pd);
	if (regqp != f->b)
		KUNIT_ASSERT_EQ(test, dp_connect(f, regqp, regqp->qp_num,
						 DP_ACCESS, 7), 0);
	KUNIT_ASSERT_EQ(test, dp_reg(test, f, regqp, mr, &f->dst, 0, 1000,
				     access, false), 0);
	KUNIT_ASSERT_EQ(test, dp_poll(f, &wc, 1), 0);

	wr.remote_addr = mr->iova;
	wr.rkey = mr->rkey;
	switch (c->fault) {
	case RK_VARIANT:
		wr.rkey = mr->rkey ^ 1;
		break;
	case RK_INDEX:
		wr.rkey = mr->rkey + 0x100000;
		break;
	case RK_INVALIDATED:
		inv.ex.invalidate_rkey = mr->rkey;
		KUNIT_ASSERT_EQ(test, ib_post_send(regqp, &inv, NULL), 0);
		KUNIT_ASSERT_EQ(test, dp_poll(f, &wc, 1), 0);
		break;
	case RK_BEFORE:
		wr.remote_addr--;
		break;
	case RK_PAST_END:
		wr.remote_addr += 1000 - len + 1;
		break;
	case RK_LOCAL_DMA_LKEY:
		wr.rkey = f->pd->local_dma_lkey;
		wr.remote_addr = f->dst.dma;
		break;
	default:
		break;
	}
	KUNIT_ASSERT_EQ(test, dp_post(f->a, &wr.wr, f->src.dma, len,
				      f->pd->local_dma_lkey), 0);
	dp_poll_one(test, f, f->a, &wc);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 5);
	dp_cpu(f, &f->dst);
	if (c->fault == RK_OK) {
		KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
		KUNIT_EXPECT_EQ(test, f->dst.va[0], 0x5a);
		KUNIT_EXPECT_EQ(test, f->dst.va[len - 1], 0x5a);
		return;
	}
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_REM_ACCESS_ERR);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RDMA_WRITE);
	/* not one byte written; both ends are in the error state */
	for (i = 0; i < DP_BUF; i++)
		KUNIT_ASSERT_EQ(test, f->dst.va[i], 0);
	KUNIT_EXPECT_EQ(test, to_rsim_qp(f->a)->state, IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, to_rsim_qp(f->b)->state, IB_QPS_ERR);
}

/* The local side: lkeys, LOCAL_WRITE for what the device writes. */
static void rsim_dp_test_lkey_checks(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_mr *mr = rsim_kunit_mr(test, f->pd, IB_MR_TYPE_MEM_REG, 2);
	struct ib_mr *ro = rsim_kunit_mr(test, f->pd, IB_MR_TYPE_MEM_REG, 2);
	struct ib_rdma_wr wr = { .wr.opcode = IB_WR_RDMA_READ };
	struct ib_send_wr send = { .opcode = IB_WR_SEND };
	struct ib_wc wc;

	/* mr: remote-readable target; ro: a local MR without LOCAL_WRITE */
	KUNIT_ASSERT_EQ(test, dp_reg(test, f, f->b, mr, &f->dst, 0, 100,
				     IB_ACCESS_LOCAL_WRITE | DP_ACCESS, false),
			0);
	KUNIT_ASSERT_EQ(test, dp_reg(test, f, f->a, ro, &f->src, 0, 100, 0,
				     false), 0);

	/* a SEND may gather from it (local read needs no right) ... */
	KUNIT_ASSERT_EQ(test, dp_post_recv(f->b, 1, f->dst.dma + 200, 100,
					   f->pd->local_dma_lkey), 0);
	KUNIT_ASSERT_EQ(test, dp_post(f->a, &send, ro->iova, 100, ro->lkey),
			0);
	dp_poll_one(test, f, f->b, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);

	/* ... a READ may not scatter into it */
	wr.remote_addr = mr->iova;
	wr.rkey = mr->rkey;
	wr.wr.wr_id = 3;
	KUNIT_ASSERT_EQ(test, dp_post(f->a, &wr.wr, ro->iova, 10, ro->lkey),
			0);
	dp_poll_one(test, f, f->a, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_LOC_PROT_ERR);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 3);
	KUNIT_EXPECT_EQ(test, to_rsim_qp(f->a)->state, IB_QPS_ERR);
	/* a local error leaves the responder alone */
	KUNIT_EXPECT_EQ(test, to_rsim_qp(f->b)->state, IB_QPS_RTS);
}

static void rsim_dp_test_bad_lkey(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_send_wr wr = { .opcode = IB_WR_SEND, .wr_id = 4 };
	struct ib_send_wr wr2 = { .opcode = IB_WR_SEND, .wr_id = 6 };
	struct ib_sge sge = { .addr = f->src.dma, .length = 8,
			      .lkey = 0x12345678 };
	struct ib_wc wc[4];

	KUNIT_ASSERT_EQ(test, dp_post_recv(f->b, 1, f->dst.dma, 100,
					   f->pd->local_dma_lkey), 0);
	/* the bad WR fails, the one behind it is flushed, unsignaled too */
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.next = &wr2;
	KUNIT_ASSERT_EQ(test, ib_post_send(f->a, &wr, NULL), 0);
	KUNIT_ASSERT_EQ(test, dp_poll(f, wc, 4), 2);
	KUNIT_EXPECT_EQ(test, wc[0].status, IB_WC_LOC_PROT_ERR);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, 4);
	KUNIT_EXPECT_EQ(test, wc[1].status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, wc[1].wr_id, 6);
	/* the receive WR was not consumed */
	KUNIT_EXPECT_EQ(test, to_rsim_qp(f->b)->rq.count, 1);
}

static void rsim_dp_test_recv_too_small(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	u32 lkey = f->pd->local_dma_lkey;
	struct ib_send_wr wr = { .opcode = IB_WR_SEND, .wr_id = 2 };
	struct ib_wc wc[2];

	KUNIT_ASSERT_EQ(test, dp_post_recv(f->b, 1, f->dst.dma, 99, lkey), 0);
	KUNIT_ASSERT_EQ(test, dp_post(f->a, &wr, f->src.dma, 100, lkey), 0);
	KUNIT_ASSERT_EQ(test, dp_poll(f, wc, 2), 2);
	KUNIT_EXPECT_PTR_EQ(test, wc[0].qp, f->b);
	KUNIT_EXPECT_EQ(test, wc[0].status, IB_WC_LOC_LEN_ERR);
	KUNIT_EXPECT_PTR_EQ(test, wc[1].qp, f->a);
	KUNIT_EXPECT_EQ(test, wc[1].status, IB_WC_REM_INV_REQ_ERR);
	KUNIT_EXPECT_EQ(test, dp_cpu(f, &f->dst)[0], 0);
}

/* RNR: with rnr_retry 7 a SEND waits for a receive WR; with 0 it fails */
static void rsim_dp_test_rnr(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	u32 lkey = f->pd->local_dma_lkey;
	struct ib_send_wr wr = { .opcode = IB_WR_SEND, .wr_id = 8,
				 .send_flags = IB_SEND_SIGNALED };
	struct ib_wc wc[2];
	u64 waits = f->rsim->dp.rnr_waits;

	KUNIT_ASSERT_EQ(test, dp_post(f->a, &wr, f->src.dma, 10, lkey), 0);
	KUNIT_EXPECT_EQ(test, dp_poll(f, wc, 2), 0);
	KUNIT_EXPECT_EQ(test, f->rsim->dp.rnr_waits, waits + 1);
	/* the responder's post wakes it: the retry runs on its worker */
	KUNIT_ASSERT_EQ(test, dp_post_recv(f->b, 1, f->dst.dma, 10, lkey), 0);
	KUNIT_ASSERT_EQ(test, dp_wait(f->cq, wc, 2), 2);
	KUNIT_EXPECT_EQ(test, wc[0].status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc[1].status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc[1].wr_id, 8);
}

static void rsim_dp_test_rnr_no_retry(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture_type(test, IB_QPT_RC, DP_ACCESS, 0);
	struct ib_send_wr wr = { .opcode = IB_WR_SEND };
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, dp_post(f->a, &wr, f->src.dma, 10,
				      f->pd->local_dma_lkey), 0);
	dp_poll_one(test, f, f->a, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_RNR_RETRY_EXC_ERR);
}

/* A requester waiting on RNR fails when its responder goes away. */
static void rsim_dp_test_rnr_responder_error(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_send_wr wr = { .opcode = IB_WR_SEND };
	struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, dp_post(f->a, &wr, f->src.dma, 10,
				      f->pd->local_dma_lkey), 0);
	KUNIT_EXPECT_EQ(test, dp_poll(f, &wc, 1), 0);
	KUNIT_ASSERT_EQ(test, ib_modify_qp(f->b, &qa, IB_QP_STATE), 0);
	dp_poll_one(test, f, f->a, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_RETRY_EXC_ERR);
}

static void rsim_dp_test_not_connected(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_qp *lone = dp_qp(test, f, IB_QPT_RC, f->pd);
	struct ib_send_wr wr = { .opcode = IB_WR_SEND };
	struct ib_wc wc;

	/* connected to a QP number that is connected elsewhere */
	KUNIT_ASSERT_EQ(test, dp_connect(f, lone, f->b->qp_num, DP_ACCESS, 7),
			0);
	KUNIT_ASSERT_EQ(test, dp_post(lone, &wr, f->src.dma, 10,
				      f->pd->local_dma_lkey), 0);
	dp_poll_one(test, f, lone, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_RETRY_EXC_ERR);
	KUNIT_EXPECT_EQ(test, to_rsim_qp(f->b)->state, IB_QPS_RTS);
}

/* REG_MR's rules: FREE state, own PD, matching index; LOCAL_INV's too */
static void rsim_dp_test_fast_reg_rules(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_mr *mr = rsim_kunit_mr(test, f->pd, IB_MR_TYPE_MEM_REG, 2);
	struct ib_send_wr inv = { .opcode = IB_WR_LOCAL_INV,
				  .send_flags = IB_SEND_SIGNALED };
	struct ib_wc wc;
	u32 key;

	/* registering a valid MR again needs a LOCAL_INV first */
	KUNIT_ASSERT_EQ(test, dp_reg(test, f, f->a, mr, &f->src, 0, 100,
				     IB_ACCESS_LOCAL_WRITE, false), 0);
	KUNIT_ASSERT_EQ(test, dp_reg(test, f, f->a, mr, &f->src, 0, 100,
				     IB_ACCESS_LOCAL_WRITE, false), 0);
	dp_poll_one(test, f, f->a, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_LOC_QP_OP_ERR);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_REG_MR);
	KUNIT_EXPECT_EQ(test, to_rsim_qp(f->a)->state, IB_QPS_ERR);

	/* reconnect A; invalidating with a stale variant fails */
	f->a = dp_qp(test, f, IB_QPT_RC, f->pd);
	KUNIT_ASSERT_EQ(test, dp_connect(f, f->a, f->a->qp_num, DP_ACCESS, 7),
			0);
	key = to_rsim_mr(mr)->reg.key;
	inv.ex.invalidate_rkey = key ^ 0x80;
	KUNIT_ASSERT_EQ(test, ib_post_send(f->a, &inv, NULL), 0);
	dp_poll_one(test, f, f->a, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_LOC_QP_OP_ERR);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_LOCAL_INV);
	KUNIT_EXPECT_EQ(test, to_rsim_mr(mr)->state, RSIM_MR_VALID);

	f->a = dp_qp(test, f, IB_QPT_RC, f->pd);
	KUNIT_ASSERT_EQ(test, dp_connect(f, f->a, f->a->qp_num, DP_ACCESS, 7),
			0);
	inv.ex.invalidate_rkey = key;
	KUNIT_ASSERT_EQ(test, ib_post_send(f->a, &inv, NULL), 0);
	dp_poll_one(test, f, f->a, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, to_rsim_mr(mr)->state, RSIM_MR_FREE);
	/* invalidating a FREE MR fails */
	KUNIT_ASSERT_EQ(test, ib_post_send(f->a, &inv, NULL), 0);
	dp_poll_one(test, f, f->a, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_LOC_QP_OP_ERR);
}

static void rsim_dp_test_reg_other_pd(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_pd *pd2 = rsim_kunit_pd(test, f->rsim);
	struct ib_mr *mr = rsim_kunit_mr(test, pd2, IB_MR_TYPE_MEM_REG, 2);
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, dp_reg(test, f, f->a, mr, &f->src, 0, 100,
				     IB_ACCESS_LOCAL_WRITE, true), 0);
	dp_poll_one(test, f, f->a, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_LOC_QP_OP_ERR);
	KUNIT_EXPECT_EQ(test, to_rsim_mr(mr)->state, RSIM_MR_FREE);
}

static void rsim_dp_test_reg_without_map(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_mr *mr = rsim_kunit_mr(test, f->pd, IB_MR_TYPE_MEM_REG, 2);
	struct ib_reg_wr rw = { .wr.opcode = IB_WR_REG_MR, .mr = mr,
				.key = mr->rkey,
				.access = IB_ACCESS_LOCAL_WRITE };
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, ib_post_send(f->a, &rw.wr, NULL), 0);
	dp_poll_one(test, f, f->a, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_LOC_QP_OP_ERR);
}

/* SEND_WITH_INV invalidates the responder's MR; the rkey is then dead */
static void rsim_dp_test_send_with_inv(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	u32 lkey = f->pd->local_dma_lkey;
	struct ib_mr *mr = rsim_kunit_mr(test, f->pd, IB_MR_TYPE_MEM_REG, 2);
	struct ib_send_wr wr = { .opcode = IB_WR_SEND_WITH_INV };
	struct ib_rdma_wr w = { .wr.opcode = IB_WR_RDMA_WRITE };
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, dp_reg(test, f, f->b, mr, &f->dst, 0, 100,
				     IB_ACCESS_LOCAL_WRITE | DP_ACCESS, false),
			0);
	KUNIT_ASSERT_EQ(test, dp_post_recv(f->b, 1, f->dst.dma + 500, 100,
					   lkey), 0);
	wr.ex.invalidate_rkey = mr->rkey;
	KUNIT_ASSERT_EQ(test, dp_post(f->a, &wr, f->src.dma, 4, lkey), 0);
	dp_poll_one(test, f, f->b, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_WITH_INVALIDATE);
	KUNIT_EXPECT_EQ(test, wc.ex.invalidate_rkey, mr->rkey);
	KUNIT_EXPECT_EQ(test, to_rsim_mr(mr)->state, RSIM_MR_FREE);

	w.remote_addr = mr->iova;
	w.rkey = mr->rkey;
	KUNIT_ASSERT_EQ(test, dp_post(f->a, &w.wr, f->src.dma, 4, lkey), 0);
	dp_poll_one(test, f, f->a, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_REM_ACCESS_ERR);
}

static void rsim_dp_test_write_with_imm(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	u32 lkey = f->pd->local_dma_lkey;
	struct ib_mr *mr = rsim_kunit_mr(test, f->pd, IB_MR_TYPE_MEM_REG, 2);
	struct ib_rdma_wr w = { .wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM,
				.wr.ex.imm_data = cpu_to_be32(42) };
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, dp_reg(test, f, f->b, mr, &f->dst, 0, 100,
				     IB_ACCESS_LOCAL_WRITE | DP_ACCESS, false),
			0);
	KUNIT_ASSERT_EQ(test, dp_post_recv(f->b, 12, 0, 0, 0), 0);
	w.remote_addr = mr->iova + 1;
	w.rkey = mr->rkey;
	KUNIT_ASSERT_EQ(test, dp_post(f->a, &w.wr, f->src.dma, 20, lkey), 0);
	dp_poll_one(test, f, f->b, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV_RDMA_WITH_IMM);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 12);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 20);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(wc.ex.imm_data), 42);
	KUNIT_EXPECT_EQ(test, dp_cpu(f, &f->dst)[20], 0x5a);
	KUNIT_EXPECT_EQ(test, f->dst.va[21], 0);
}

/* UC: no READ; a message the responder cannot take is lost silently */
static void rsim_dp_test_uc(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture_type(test, IB_QPT_UC, DP_ACCESS, 0);
	u32 lkey = f->pd->local_dma_lkey;
	struct ib_send_wr wr = { .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED };
	struct ib_rdma_wr rd = { .wr.opcode = IB_WR_RDMA_READ };
	const struct ib_send_wr *bad;
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, dp_post(f->a, &wr, f->src.dma, 10, lkey), 0);
	dp_poll_one(test, f, f->a, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, dp_poll(f, &wc, 1), 0);

	KUNIT_ASSERT_EQ(test, dp_post_recv(f->b, 1, f->dst.dma, 10, lkey), 0);
	KUNIT_ASSERT_EQ(test, dp_post(f->a, &wr, f->src.dma, 10, lkey), 0);
	KUNIT_ASSERT_EQ(test, dp_poll(f, &wc, 1), 1);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, f->b);
	KUNIT_EXPECT_EQ(test, dp_poll(f, &wc, 1), 1);

	rd.wr.sg_list = NULL;
	KUNIT_EXPECT_EQ(test, ib_post_send(f->a, &rd.wr, &bad), -EINVAL);
}

/* post_send's own checks: errno and bad_wr, nothing queued past it */
static void rsim_dp_test_post_checks(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_qp *fresh = dp_qp(test, f, IB_QPT_RC, f->pd);
	struct ib_qp *ud = dp_qp(test, f, IB_QPT_UD, f->pd);
	struct ib_sge sge[5] = {};
	struct ib_atomic_wr at = { .wr.opcode = IB_WR_ATOMIC_CMP_AND_SWP };
	const struct ib_send_wr *bad;
	struct ib_send_wr *wrs;
	struct ib_wc *wc;
	int i;

	wrs = kunit_kcalloc(test, 17, sizeof(*wrs), GFP_KERNEL);
	wc = kunit_kcalloc(test, 17, sizeof(*wc), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, wrs);
	KUNIT_ASSERT_NOT_NULL(test, wc);
	for (i = 0; i < 17; i++) {
		wrs[i].opcode = IB_WR_RDMA_WRITE;	/* 0 bytes: no checks */
		wrs[i].wr_id = i;
		wrs[i].next = i + 1 < 17 ? &wrs[i + 1] : NULL;
	}
	/* RESET, INIT, RTR: nothing can be sent */
	KUNIT_EXPECT_EQ(test, ib_post_send(fresh, &wrs[16], &bad), -EINVAL);
	/* a UD QP in RESET (its own rules: rdmasim_qp, and the UD cases) */
	KUNIT_EXPECT_EQ(test, ib_post_send(ud, &wrs[16], &bad), -EINVAL);
	KUNIT_EXPECT_EQ(test, ib_post_send(f->a, &at.wr, &bad), -EINVAL);

	wrs[2].sg_list = sge;
	wrs[2].num_sge = 5;
	KUNIT_EXPECT_EQ(test, ib_post_send(f->a, &wrs[0], &bad), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, bad, (const struct ib_send_wr *)&wrs[2]);
	wrs[2].num_sge = 0;
	wrs[2].send_flags = 1 << 30;
	KUNIT_EXPECT_EQ(test, ib_post_send(f->a, &wrs[2], &bad), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, bad, (const struct ib_send_wr *)&wrs[2]);
	wrs[2].send_flags = 0;
	/* the two before it were executed (unsignaled, no completion) */
	KUNIT_EXPECT_EQ(test, dp_poll(f, wc, 17), 0);
	KUNIT_EXPECT_EQ(test, to_rsim_qp(f->a)->sq.count, 0);

	/* in SQD the queue fills: the 17th WR does not fit */
	{
		struct ib_qp_attr qa = { .qp_state = IB_QPS_SQD };

		KUNIT_ASSERT_EQ(test, ib_modify_qp(f->a, &qa, IB_QP_STATE), 0);
		KUNIT_EXPECT_EQ(test, ib_post_send(f->a, &wrs[0], &bad),
				-ENOMEM);
		KUNIT_EXPECT_PTR_EQ(test, bad,
				    (const struct ib_send_wr *)&wrs[16]);
		KUNIT_EXPECT_EQ(test, to_rsim_qp(f->a)->sq.count, 16);
		/* back to RTS: the queue runs */
		qa.qp_state = IB_QPS_RTS;
		KUNIT_ASSERT_EQ(test, ib_modify_qp(f->a, &qa, IB_QP_STATE), 0);
		KUNIT_EXPECT_EQ(test, to_rsim_qp(f->a)->sq.count, 0);
	}
	/* the error state flushes what is posted, in order */
	{
		struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };

		KUNIT_ASSERT_EQ(test, ib_modify_qp(f->a, &qa, IB_QP_STATE), 0);
		wrs[2].next = NULL;
		KUNIT_EXPECT_EQ(test, ib_post_send(f->a, &wrs[0], &bad), 0);
		KUNIT_ASSERT_EQ(test, dp_poll(f, wc, 17), 3);
		for (i = 0; i < 3; i++) {
			KUNIT_EXPECT_EQ(test, wc[i].status, IB_WC_WR_FLUSH_ERR);
			KUNIT_EXPECT_EQ(test, wc[i].wr_id, i);
		}
	}
}

/*
 * Resizing a CQ (the uverbs-only op, called directly) keeps the
 * completions not yet polled, in order; fewer entries than those, 0 or
 * more than max_cqe are refused and change nothing.
 */
static void rsim_dp_test_cq_resize(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_device *dev = f->cq->device;
	struct ib_rdma_wr wr = { .wr.opcode = IB_WR_RDMA_WRITE,
				 .wr.send_flags = IB_SEND_SIGNALED };
	struct ib_wc wc[4];
	int i;

	for (i = 0; i < 3; i++) {
		wr.wr.wr_id = 10 + i;
		KUNIT_ASSERT_EQ(test, ib_post_send(f->a, &wr.wr, NULL), 0);
	}
	KUNIT_EXPECT_EQ(test, dev->ops.RSIM_RESIZE_CQ_OP(f->cq, 2, NULL),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, dev->ops.RSIM_RESIZE_CQ_OP(f->cq, 0, NULL),
			-EINVAL);
	KUNIT_EXPECT_EQ(test,
			dev->ops.RSIM_RESIZE_CQ_OP(f->cq, RSIM_MAX_CQE + 1,
						   NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, f->cq->cqe, 64);
	KUNIT_ASSERT_EQ(test, dev->ops.RSIM_RESIZE_CQ_OP(f->cq, 3, NULL), 0);
	KUNIT_EXPECT_EQ(test, f->cq->cqe, 3);
	/* full: a fourth completion would overflow; poll them in order */
	KUNIT_ASSERT_EQ(test, dp_poll(f, wc, 4), 3);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, wc[i].wr_id, 10 + i);
	/* and it grows again, still working */
	KUNIT_ASSERT_EQ(test, dev->ops.RSIM_RESIZE_CQ_OP(f->cq, 64, NULL), 0);
	wr.wr.wr_id = 20;
	KUNIT_ASSERT_EQ(test, ib_post_send(f->a, &wr.wr, NULL), 0);
	KUNIT_ASSERT_EQ(test, dp_poll(f, wc, 4), 1);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, 20);
}

/*
 * Back to RESET, a QP's completions nobody polled leave its CQ (as mlx4
 * and mlx5 clean them); another QP's stay, in order.
 */
static void rsim_dp_test_reset_cleans_cq(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_qp *other = dp_qp(test, f, IB_QPT_RC, f->pd);
	struct ib_qp_attr reset = { .qp_state = IB_QPS_RESET };
	struct ib_rdma_wr wr = { .wr.opcode = IB_WR_RDMA_WRITE,
				 .wr.send_flags = IB_SEND_SIGNALED };
	struct ib_wc wc[8];
	int i;

	KUNIT_ASSERT_EQ(test, dp_connect(f, other, other->qp_num, DP_ACCESS,
					 7), 0);
	for (i = 0; i < 6; i++) {
		wr.wr.wr_id = i;
		KUNIT_ASSERT_EQ(test, ib_post_send(i % 2 ? other : f->a,
						   &wr.wr, NULL), 0);
	}
	KUNIT_ASSERT_EQ(test, ib_modify_qp(f->a, &reset, IB_QP_STATE), 0);
	KUNIT_ASSERT_EQ(test, dp_poll(f, wc, 8), 3);
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_PTR_EQ(test, wc[i].qp, other);
		KUNIT_EXPECT_EQ(test, wc[i].wr_id, 2 * i + 1);
	}
}

/* The device's data path counters: WRs, bytes, errors, port counters. */
static void rsim_dp_test_counters(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct rsim_dp_stats before = f->rsim->dp;
	u32 lkey = f->pd->local_dma_lkey;
	struct ib_send_wr wr = { .opcode = IB_WR_SEND };
	struct ib_sge bad = { .addr = f->src.dma, .length = 1, .lkey = 7 };

	KUNIT_ASSERT_EQ(test, dp_post_recv(f->b, 1, f->dst.dma, 64, lkey), 0);
	KUNIT_ASSERT_EQ(test, dp_post(f->a, &wr, f->src.dma, 64, lkey), 0);
	KUNIT_EXPECT_EQ(test, f->rsim->dp.wqes, before.wqes + 1);
	KUNIT_EXPECT_EQ(test, f->rsim->dp.bytes, before.bytes + 64);
	KUNIT_EXPECT_EQ(test, f->rsim->dp.errors, before.errors);
	/* the port counters the PMA reports: both directions, one packet */
	KUNIT_EXPECT_EQ(test, f->rsim->dp.port.xmit_data,
			before.port.xmit_data + 64);
	KUNIT_EXPECT_EQ(test, f->rsim->dp.port.rcv_data,
			before.port.rcv_data + 64);
	KUNIT_EXPECT_EQ(test, f->rsim->dp.port.xmit_pkts,
			before.port.xmit_pkts + 1);
	KUNIT_EXPECT_EQ(test, f->rsim->dp.port.rcv_pkts,
			before.port.rcv_pkts + 1);
	wr.sg_list = &bad;
	wr.num_sge = 1;
	KUNIT_ASSERT_EQ(test, ib_post_send(f->a, &wr, NULL), 0);
	KUNIT_EXPECT_EQ(test, f->rsim->dp.wqes, before.wqes + 2);
	KUNIT_EXPECT_EQ(test, f->rsim->dp.bytes, before.bytes + 64);
	KUNIT_EXPECT_EQ(test, f->rsim->dp.errors, before.errors + 1);
	KUNIT_EXPECT_EQ(test, f->rsim->dp.port.xmit_pkts,
			before.port.xmit_pkts + 1);
}

/**
 * struct dp_pingpong - two QPs bouncing a message from completion context
 * @f: fixture (its CQ is not used: @cq polls in softirq context)
 * @cq: IB_POLL_SOFTIRQ CQ of both QPs
 * @a: one end
 * @b: the other end
 * @cqe: completion callbacks of @a's and @b's receive WRs
 * @left: messages still to send
 * @errors: completions in error
 * @done: signalled when @left reaches 0 or a completion fails
 */
struct dp_pingpong {
	struct dp_fixture *f;
	struct ib_cq *cq;
	struct ib_qp *a;
	struct ib_qp *b;
	struct ib_cqe cqe[2];
	atomic_t left;
	atomic_t errors;
	struct completion done;
};

static int dp_pp_post_recv(struct dp_pingpong *pp, struct ib_qp *qp,
			   struct ib_cqe *cqe, u64 dma)
{
	struct ib_sge sge = { .addr = dma, .length = 64,
			      .lkey = pp->f->pd->local_dma_lkey };
	struct ib_recv_wr wr = { .wr_cqe = cqe, .sg_list = &sge,
				 .num_sge = 1 };

	return ib_post_recv(qp, &wr, NULL);
}

static int dp_pp_send(struct dp_pingpong *pp, struct ib_qp *qp, u64 dma)
{
	struct ib_sge sge = { .addr = dma, .length = 64,
			      .lkey = pp->f->pd->local_dma_lkey };
	struct ib_send_wr wr = { .opcode = IB_WR_SEND, .sg_list = &sge,
				 .num_sge = 1 };

	return ib_post_send(qp, &wr, NULL);
}

/* softirq: a message arrived; post the receive again and answer it */
static void dp_pp_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct dp_pingpong *pp = cq->cq_context;
	bool at_b = wc->wr_cqe == &pp->cqe[1];
	struct ib_qp *me = at_b ? pp->b : pp->a;
	u64 buf = at_b ? pp->f->dst.dma : pp->f->src.dma;

	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			atomic_inc(&pp->errors);
		complete(&pp->done);
		return;
	}
	if (dp_pp_post_recv(pp, me, wc->wr_cqe, buf + 64) ||
	    atomic_dec_return(&pp->left) <= 0 || dp_pp_send(pp, me, buf)) {
		complete(&pp->done);
		return;
	}
}

/*
 * Post from completion handlers (softirq context): the engine and its
 * locks must be safe there, and a handler's post must not recurse into
 * the run that called it.
 */
static void dp_cq_free(void *cq)
{
	ib_free_cq(cq);
}

static void rsim_dp_test_softirq_pingpong(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct dp_pingpong *pp = kunit_kzalloc(test, sizeof(*pp), GFP_KERNEL);
	u64 wqes;

	KUNIT_ASSERT_NOT_NULL(test, pp);
	pp->f = f;
	init_completion(&pp->done);
	atomic_set(&pp->left, 2000);
	pp->cqe[0].done = dp_pp_done;
	pp->cqe[1].done = dp_pp_done;
	pp->cq = ib_alloc_cq(&f->rsim->ibdev, pp, 64, 0, IB_POLL_SOFTIRQ);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pp->cq);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, dp_cq_free,
							   pp->cq));
	f->cq = pp->cq;
	pp->a = dp_qp(test, f, IB_QPT_RC, f->pd);
	pp->b = dp_qp(test, f, IB_QPT_RC, f->pd);
	KUNIT_ASSERT_EQ(test, dp_connect(f, pp->a, pp->b->qp_num, 0, 7), 0);
	KUNIT_ASSERT_EQ(test, dp_connect(f, pp->b, pp->a->qp_num, 0, 7), 0);

	wqes = f->rsim->dp.wqes;
	KUNIT_ASSERT_EQ(test, dp_pp_post_recv(pp, pp->a, &pp->cqe[0],
					      f->src.dma + 64), 0);
	KUNIT_ASSERT_EQ(test, dp_pp_post_recv(pp, pp->b, &pp->cqe[1],
					      f->dst.dma + 64), 0);
	KUNIT_ASSERT_EQ(test, dp_pp_send(pp, pp->a, f->src.dma), 0);
	KUNIT_ASSERT_GT(test, wait_for_completion_timeout(&pp->done, 20 * HZ),
			0);
	KUNIT_EXPECT_EQ(test, atomic_read(&pp->errors), 0);
	KUNIT_EXPECT_LE(test, atomic_read(&pp->left), 0);
	/*
	 * The last WRs ran on the worker (posted from completion handlers),
	 * which counts a run at its end, after the completions that ended
	 * the ping-pong (a cold make check saw 1784 of 2000 counted)
	 */
	flush_workqueue(f->rsim->dp_wq);
	KUNIT_EXPECT_EQ(test, f->rsim->dp.wqes - wqes, 2000);
}

/* A requester waiting on RNR fails when its responder is destroyed. */
static void rsim_dp_test_rnr_responder_destroyed(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_qp *a = dp_qp(test, f, IB_QPT_RC, f->pd);
	struct ib_qp *b = dp_qp(test, f, IB_QPT_RC, f->pd);
	struct ib_send_wr wr = { .opcode = IB_WR_SEND };
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, dp_connect(f, a, b->qp_num, DP_ACCESS, 7), 0);
	KUNIT_ASSERT_EQ(test, dp_connect(f, b, a->qp_num, DP_ACCESS, 7), 0);
	KUNIT_ASSERT_EQ(test, dp_post(a, &wr, f->src.dma, 10,
				      f->pd->local_dma_lkey), 0);
	KUNIT_EXPECT_EQ(test, dp_poll(f, &wc, 1), 0);
	/* destroy the responder now */
	kunit_release_action(test, dp_qp_destroy, b);
	dp_poll_one(test, f, a, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_RETRY_EXC_ERR);
}

/**
 * struct dp_spinner - a thread that posts zero-length WRITEs to a QP
 * @qp: the QP
 * @budget: posts it may still make (the main thread refills it)
 * @posted: posts that succeeded
 * @busy: between its look at @budget and the end of that post
 */
struct dp_spinner {
	struct ib_qp *qp;
	atomic_t budget;
	atomic_t posted;
	atomic_t busy;
};

static int dp_spin(void *arg)
{
	struct dp_spinner *s = arg;

	while (!kthread_should_stop()) {
		struct ib_rdma_wr wr = {
			.wr.opcode = IB_WR_RDMA_WRITE,
			.wr.send_flags = IB_SEND_SIGNALED,
			.wr.wr_id = 2,
		};

		atomic_set(&s->busy, 1);
		/* busy before budget: pairs with the main thread's smp_mb() */
		smp_mb__after_atomic();
		if (atomic_read(&s->budget) > 0 &&
		    !ib_post_send(s->qp, &wr.wr, NULL)) {
			atomic_inc(&s->posted);
			atomic_dec(&s->budget);
		}
		atomic_set_release(&s->busy, 0);
		cond_resched();
	}
	return 0;
}

/*
 * A QP connected to itself: a WRITE with a bad rkey puts it in the error
 * state from inside the engine while another CPU posts. The post's flush
 * must not complete the WR the engine is completing: every WR completes
 * exactly once and the send queue's count never wraps.
 */
static void rsim_dp_test_self_connected_flush_race(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_qp_attr reset = { .qp_state = IB_QPS_RESET };
	struct dp_spinner *s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	struct ib_cq *cq = rsim_kunit_cq(test, f->rsim, 4096);
	int bad_done = 0, done = 0, posted = 0, i, n;
	struct task_struct *t;
	struct ib_wc wc[4];

	KUNIT_ASSERT_NOT_NULL(test, s);
	f->cq = cq;
	s->qp = dp_qp(test, f, IB_QPT_RC, f->pd);
	t = kthread_run(dp_spin, s, "dp_spin");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	for (i = 0; i < 300; i++) {
		struct ib_rdma_wr bad = {
			.wr.opcode = IB_WR_RDMA_WRITE,
			.wr.send_flags = IB_SEND_SIGNALED,
			.wr.wr_id = 1,
			.rkey = 0x12345600,
			.remote_addr = f->dst.dma,
		};

		if (dp_connect(f, s->qp, s->qp->qp_num, DP_ACCESS, 0))
			break;
		atomic_set(&s->budget, 32);
		if (!dp_post(s->qp, &bad.wr, f->src.dma, 8,
			     f->pd->local_dma_lkey))
			posted++;
		usleep_range(100, 200);
		atomic_set(&s->budget, 0);
		smp_mb();	/* pairs with dp_spin()'s, around busy */
		/*
		 * every post completes at once, in RTS or with a flush: once
		 * the spinner is between posts and the queue is empty, every
		 * completion is in the CQ; poll them before RESET, which
		 * cleans the QP's completions out of its CQs
		 */
		for (n = 0; n < 100000 &&
		     (atomic_read_acquire(&s->busy) ||
		      READ_ONCE(to_rsim_qp(s->qp)->sq.count)); n++)
			usleep_range(10, 20);
		while ((n = ib_poll_cq(cq, ARRAY_SIZE(wc), wc)) > 0) {
			int j;

			for (j = 0; j < n; j++)
				bad_done += wc[j].wr_id == 1;
			done += n;
		}
		if (ib_modify_qp(s->qp, &reset, IB_QP_STATE))
			break;
		if (to_rsim_qp(s->qp)->sq.count)
			break;
	}
	kthread_stop(t);
	KUNIT_EXPECT_EQ(test, i, 300);
	KUNIT_EXPECT_EQ(test, to_rsim_qp(s->qp)->sq.count, 0);
	while ((n = ib_poll_cq(cq, ARRAY_SIZE(wc), wc)) > 0) {
		int j;

		for (j = 0; j < n; j++)
			bad_done += wc[j].wr_id == 1;
		done += n;
	}
	KUNIT_EXPECT_EQ(test, bad_done, posted);
	KUNIT_EXPECT_EQ(test, done, posted + atomic_read(&s->posted));
	kunit_info(test, "%d bad WRITEs, %d concurrent posts, on %u CPUs\n",
		   posted, atomic_read(&s->posted), num_online_cpus());
}

/* the engine's test hook: one post to the QP whose WR just failed */
static void dp_hook_post(struct rsim_qp *qp, int status)
{
	struct ib_rdma_wr wr = {
		.wr.opcode = IB_WR_RDMA_WRITE,
		.wr.send_flags = IB_SEND_SIGNALED,
		.wr.wr_id = 2,
	};

	if (status == IB_WC_SUCCESS)
		return;
	to_rsim_dev(qp->ibqp.device)->dp_test_hook = NULL;
	ib_post_send(&qp->ibqp, &wr.wr, NULL);
}

static void dp_hook_clear(void *rsim)
{
	((struct rsim_dev *)rsim)->dp_test_hook = NULL;
}

/*
 * A QP connected to itself: a WRITE with a bad rkey puts it in the error
 * state from inside the engine, and a post arrives before the engine has
 * completed that WR (deterministically, from the engine's test hook). The
 * post's flush must leave the WR being executed to the engine: it
 * completes once, the new WR completes with a flush error, and the send
 * queue's count does not wrap.
 */
static void rsim_dp_test_self_connected_post_in_error(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_qp *qp = dp_qp(test, f, IB_QPT_RC, f->pd);
	struct ib_rdma_wr bad = {
		.wr.opcode = IB_WR_RDMA_WRITE,
		.wr.send_flags = IB_SEND_SIGNALED,
		.wr.wr_id = 1,
		.rkey = 0x12345600,
		.remote_addr = f->dst.dma,
	};
	struct ib_wc wc[4];

	KUNIT_ASSERT_EQ(test, dp_connect(f, qp, qp->qp_num, DP_ACCESS, 0), 0);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, dp_hook_clear,
							   f->rsim));
	f->rsim->dp_test_hook = dp_hook_post;
	KUNIT_ASSERT_EQ(test, dp_post(qp, &bad.wr, f->src.dma, 8,
				      f->pd->local_dma_lkey), 0);
	KUNIT_ASSERT_EQ(test, dp_wait(f->cq, wc, 2), 2);
	KUNIT_EXPECT_EQ(test, wc[0].wr_id, 1);
	KUNIT_EXPECT_EQ(test, wc[0].status, IB_WC_REM_ACCESS_ERR);
	KUNIT_EXPECT_EQ(test, wc[1].wr_id, 2);
	KUNIT_EXPECT_EQ(test, wc[1].status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, dp_poll(f, wc, 4), 0);
	KUNIT_EXPECT_EQ(test, to_rsim_qp(qp)->sq.count, 0);
}

/*
 * rnr_retry 1-6 retries that often, each after the responder's RNR timer,
 * then fails the SEND with IB_WC_RNR_RETRY_EXC_ERR.
 */
static void rsim_dp_test_rnr_retry_count(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture_type(test, IB_QPT_RC, DP_ACCESS, 3);
	struct ib_send_wr wr = { .opcode = IB_WR_SEND, .wr_id = 5,
				 .send_flags = IB_SEND_SIGNALED };
	unsigned long start = jiffies;
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, dp_post(f->a, &wr, f->src.dma, 10,
				      f->pd->local_dma_lkey), 0);
	KUNIT_ASSERT_EQ(test, dp_wait(f->cq, &wc, 1), 1);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, f->a);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 5);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_RNR_RETRY_EXC_ERR);
	/* three timer periods of at least a jiffy each */
	KUNIT_EXPECT_GE(test, jiffies - start, 3);
	KUNIT_EXPECT_EQ(test, to_rsim_qp(f->a)->state, IB_QPS_ERR);
}

/**
 * struct dp_events - what a CQ's and a QP's handlers saw
 * @comp: completion handler calls
 * @cq_err: IB_EVENT_CQ_ERR events
 * @qp_fatal: IB_EVENT_QP_FATAL events
 * @qp_access: IB_EVENT_QP_ACCESS_ERR events
 * @qp_other: other QP events
 */
struct dp_events {
	atomic_t comp;
	atomic_t cq_err;
	atomic_t qp_fatal;
	atomic_t qp_access;
	atomic_t qp_other;
};

static void dp_ev_comp(struct ib_cq *cq, void *ctx)
{
	atomic_inc(&((struct dp_events *)ctx)->comp);
}

static void dp_ev_cq(struct ib_event *e, void *ctx)
{
	if (e->event == IB_EVENT_CQ_ERR)
		atomic_inc(&((struct dp_events *)ctx)->cq_err);
}

static void dp_ev_qp(struct ib_event *e, void *ctx)
{
	struct dp_events *ev = ctx;

	if (e->event == IB_EVENT_QP_FATAL)
		atomic_inc(&ev->qp_fatal);
	else if (e->event == IB_EVENT_QP_ACCESS_ERR)
		atomic_inc(&ev->qp_access);
	else
		atomic_inc(&ev->qp_other);
}

static void dp_cq_destroy(void *cq)
{
	ib_destroy_cq(cq);
}

/*
 * A CQ overflows in the run that armed its handler: the handler still
 * runs, the CQ reports IB_EVENT_CQ_ERR, and the QP that lost a completion
 * enters the error state with IB_EVENT_QP_FATAL.
 */
static void rsim_dp_test_cq_overflow(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct dp_events *ev = kunit_kzalloc(test, sizeof(*ev), GFP_KERNEL);
	struct ib_cq_init_attr ca = { .cqe = 2 };
	struct ib_qp_init_attr qa = {
		.qp_type = IB_QPT_RC,
		.recv_cq = f->cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.event_handler = dp_ev_qp,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
	};
	struct ib_rdma_wr wr[3] = {};
	struct ib_qp *a, *b;
	struct ib_cq *cq;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, ev);
	cq = ib_create_cq(&f->rsim->ibdev, dp_ev_comp, dp_ev_cq, ev, &ca);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cq);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, dp_cq_destroy,
							   cq));
	qa.send_cq = cq;
	qa.qp_context = ev;
	a = ib_create_qp(f->pd, &qa);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, a);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, dp_qp_destroy,
							   a));
	b = dp_qp(test, f, IB_QPT_RC, f->pd);
	KUNIT_ASSERT_EQ(test, dp_connect(f, a, b->qp_num, DP_ACCESS, 7), 0);
	KUNIT_ASSERT_EQ(test, dp_connect(f, b, a->qp_num, DP_ACCESS, 7), 0);

	KUNIT_ASSERT_EQ(test, ib_req_notify_cq(cq, IB_CQ_NEXT_COMP), 0);
	/* three zero-length WRITEs in one post: one run, two CQ slots */
	for (i = 0; i < 3; i++) {
		wr[i].wr.opcode = IB_WR_RDMA_WRITE;
		wr[i].wr.wr_id = i;
		wr[i].wr.next = i < 2 ? &wr[i + 1].wr : NULL;
	}
	KUNIT_ASSERT_EQ(test, ib_post_send(a, &wr[0].wr, NULL), 0);
	/* the worker may have run them: give it time */
	msleep(50);
	rsim_kunit_events_flush(f->rsim);
	KUNIT_EXPECT_EQ(test, atomic_read(&ev->comp), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&ev->cq_err), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&ev->qp_fatal), 1);
	KUNIT_EXPECT_EQ(test, to_rsim_qp(a)->state, IB_QPS_ERR);
	/* the responder is not affected */
	KUNIT_EXPECT_EQ(test, to_rsim_qp(b)->state, IB_QPS_RTS);
}

/*
 * An RDMA READ whose source fails at the responder (its registration
 * translates to memory that is not RAM) is a responder error, as for a
 * WRITE whose destination fails: IB_WC_REM_ACCESS_ERR at the requester,
 * and the responder enters the error state.
 */
static void rsim_dp_test_read_source_fails(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct ib_mr *mr = rsim_kunit_mr(test, f->pd, IB_MR_TYPE_MEM_REG, 1);
	struct ib_reg_wr reg = {
		.wr.opcode = IB_WR_REG_MR,
		.mr = mr,
		.access = IB_ACCESS_REMOTE_READ | IB_ACCESS_LOCAL_WRITE,
	};
	struct ib_rdma_wr rd = { .wr.opcode = IB_WR_RDMA_READ };
	struct scatterlist sg;
	struct ib_wc wc;

	/* a bus address far above the guest's memory */
	sg_init_table(&sg, 1);
	sg_dma_address(&sg) = 1ULL << 40;
	sg_dma_len(&sg) = PAGE_SIZE;
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE), 1);
	reg.key = mr->rkey;
	KUNIT_ASSERT_EQ(test, ib_post_send(f->b, &reg.wr, NULL), 0);

	rd.remote_addr = mr->iova;
	rd.rkey = mr->rkey;
	rd.wr.send_flags = IB_SEND_SIGNALED;
	KUNIT_ASSERT_EQ(test, dp_post(f->a, &rd.wr, f->src.dma, 8,
				      f->pd->local_dma_lkey), 0);
	KUNIT_ASSERT_EQ(test, dp_wait(f->cq, &wc, 1), 1);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, f->a);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_REM_ACCESS_ERR);
	KUNIT_EXPECT_EQ(test, to_rsim_qp(f->b)->state, IB_QPS_ERR);
}

/* an RC QP on the fixture's CQ whose events go to @ev */
static struct ib_qp *dp_ev_rc_qp(struct kunit *test, struct dp_fixture *f,
				 struct dp_events *ev)
{
	struct ib_qp_init_attr qa = {
		.qp_type = IB_QPT_RC,
		.send_cq = f->cq,
		.recv_cq = f->cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.event_handler = dp_ev_qp,
		.qp_context = ev,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
	};
	struct ib_qp *qp = ib_create_qp(f->pd, &qa);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, qp);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, dp_qp_destroy,
							   qp));
	return qp;
}

/*
 * A responder a request puts in the error state without a receive
 * completion to say so (a WRITE with a bad rkey) gets the affiliated
 * IB_EVENT_QP_ACCESS_ERR (IBA 11.6.3.1), once; the requester none. A
 * SEND the receive WR is too small for is reported by that completion:
 * no event.
 */
static void rsim_dp_test_responder_events(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	struct dp_events *ea = kunit_kzalloc(test, sizeof(*ea), GFP_KERNEL);
	struct dp_events *eb = kunit_kzalloc(test, sizeof(*eb), GFP_KERNEL);
	u32 lkey = f->pd->local_dma_lkey;
	struct ib_rdma_wr wr = { .wr.opcode = IB_WR_RDMA_WRITE,
				 .remote_addr = 0x1000, .rkey = 0xdead01 };
	struct ib_send_wr send = { .opcode = IB_WR_SEND };
	struct ib_qp *a, *b;
	struct ib_wc wc[2];

	KUNIT_ASSERT_NOT_NULL(test, ea);
	KUNIT_ASSERT_NOT_NULL(test, eb);
	a = dp_ev_rc_qp(test, f, ea);
	b = dp_ev_rc_qp(test, f, eb);
	KUNIT_ASSERT_EQ(test, dp_connect(f, a, b->qp_num, DP_ACCESS, 7), 0);
	KUNIT_ASSERT_EQ(test, dp_connect(f, b, a->qp_num, DP_ACCESS, 7), 0);
	KUNIT_ASSERT_EQ(test, dp_post(a, &wr.wr, f->src.dma, 8, lkey), 0);
	KUNIT_ASSERT_EQ(test, dp_wait(f->cq, wc, 1), 1);
	KUNIT_EXPECT_EQ(test, wc[0].status, IB_WC_REM_ACCESS_ERR);
	KUNIT_EXPECT_EQ(test, to_rsim_qp(b)->state, IB_QPS_ERR);
	/* the responder's event is the dispatcher's */
	rsim_kunit_events_flush(f->rsim);
	KUNIT_EXPECT_EQ(test, atomic_read(&eb->qp_access), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&eb->qp_fatal), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&eb->qp_other), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ea->qp_access) +
			      atomic_read(&ea->qp_fatal) +
			      atomic_read(&ea->qp_other), 0);

	/* the same pair afresh: a SEND too long for the receive WR */
	a = dp_ev_rc_qp(test, f, ea);
	b = dp_ev_rc_qp(test, f, eb);
	KUNIT_ASSERT_EQ(test, dp_connect(f, a, b->qp_num, DP_ACCESS, 7), 0);
	KUNIT_ASSERT_EQ(test, dp_connect(f, b, a->qp_num, DP_ACCESS, 7), 0);
	KUNIT_ASSERT_EQ(test, dp_post_recv(b, 1, f->dst.dma, 4, lkey), 0);
	KUNIT_ASSERT_EQ(test, dp_post(a, &send, f->src.dma, 8, lkey), 0);
	KUNIT_ASSERT_EQ(test, dp_wait(f->cq, wc, 2), 2);
	KUNIT_EXPECT_EQ(test, wc[0].status, IB_WC_LOC_LEN_ERR);
	KUNIT_EXPECT_EQ(test, wc[1].status, IB_WC_REM_INV_REQ_ERR);
	rsim_kunit_events_flush(f->rsim);
	KUNIT_EXPECT_EQ(test, atomic_read(&eb->qp_access), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&eb->qp_other), 0);
}

/* A SEND posted with interrupts off runs on the worker, not at once. */
static void rsim_dp_test_irqs_off_defers(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	u32 lkey = f->pd->local_dma_lkey;
	struct ib_send_wr wr = { .opcode = IB_WR_SEND, .wr_id = 3,
				 .send_flags = IB_SEND_SIGNALED };
	struct rsim_dp_stats before = f->rsim->dp;
	struct ib_wc wc[2];

	KUNIT_ASSERT_EQ(test, dp_post_recv(f->b, 1, f->dst.dma, 64, lkey), 0);
	KUNIT_ASSERT_EQ(test, dp_post_irqs_off(f->a, &wr, f->src.dma, 64, lkey,
					       NULL), 0);
	KUNIT_ASSERT_EQ(test, dp_wait(f->cq, wc, 2), 2);
	KUNIT_EXPECT_EQ(test, wc[0].status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc[1].status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, dp_cpu(f, &f->dst)[63], 0x5a);
	/* the worker counts its run at the run's end, after the completions */
	flush_workqueue(f->rsim->dp_wq);
	KUNIT_EXPECT_EQ(test, f->rsim->dp.deferred, before.deferred + 1);
	KUNIT_EXPECT_EQ(test, f->rsim->dp.inline_runs, before.inline_runs);
	KUNIT_EXPECT_GE(test, f->rsim->dp.worker_runs, before.worker_runs + 1);
}

/*
 * User memory registered with reg_user_mr is reachable by the data path
 * as any registered memory: a WRITE into it lands in the process's pages,
 * a READ from it returns them; a WRITE past its end is refused.
 */
static void rsim_dp_test_user_mr(struct kunit *test)
{
	struct dp_fixture *f = dp_fixture(test);
	int access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
		     IB_ACCESS_REMOTE_READ;
	struct ib_rdma_wr wr = { .wr.send_flags = IB_SEND_SIGNALED };
	unsigned long uaddr;
	struct ib_mr *mr;
	struct ib_wc wc;
	u8 *dst;
	u8 got[4];

	mr = rsim_kunit_user_mr(test, f->pd, 3 * PAGE_SIZE, access, NULL,
				&uaddr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	/* a WRITE across the first two pages */
	wr.wr.opcode = IB_WR_RDMA_WRITE;
	wr.remote_addr = mr->iova + PAGE_SIZE - 2;
	wr.rkey = mr->rkey;
	KUNIT_ASSERT_EQ(test, dp_post(f->a, &wr.wr, f->src.dma, 4,
				      f->pd->local_dma_lkey), 0);
	KUNIT_ASSERT_EQ(test, dp_wait(f->cq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_ASSERT_EQ(test, copy_from_user(got, (void __user *)uaddr +
					     PAGE_SIZE - 2, 4), 0);
	KUNIT_EXPECT_EQ(test, got[0], 0x5a);
	KUNIT_EXPECT_EQ(test, got[3], 0x5a);
	/* what the process writes, a READ returns */
	got[0] = 0xc3;
	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)uaddr +
					   2 * PAGE_SIZE, got, 1), 0);
	wr.wr.opcode = IB_WR_RDMA_READ;
	wr.remote_addr = mr->iova + 2 * PAGE_SIZE;
	KUNIT_ASSERT_EQ(test, dp_post(f->a, &wr.wr, f->dst.dma, 1,
				      f->pd->local_dma_lkey), 0);
	KUNIT_ASSERT_EQ(test, dp_wait(f->cq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	dst = dp_cpu(f, &f->dst);
	KUNIT_EXPECT_EQ(test, dst[0], 0xc3);
	/* one byte past the end */
	wr.wr.opcode = IB_WR_RDMA_WRITE;
	wr.remote_addr = mr->iova + 3 * PAGE_SIZE - 1;
	KUNIT_ASSERT_EQ(test, dp_post(f->a, &wr.wr, f->src.dma, 2,
				      f->pd->local_dma_lkey), 0);
	KUNIT_ASSERT_EQ(test, dp_wait(f->cq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_REM_ACCESS_ERR);
}

static struct kunit_case rsim_dp_test_cases[] = {
	KUNIT_CASE(rsim_dp_test_send_recv),
	KUNIT_CASE(rsim_dp_test_sg_lists),
	KUNIT_CASE(rsim_dp_test_inline),
	KUNIT_CASE(rsim_dp_test_frwr_write_read),
	KUNIT_CASE(rsim_dp_test_iova_rewritten),
	KUNIT_CASE(rsim_dp_test_map_after_reg),
	KUNIT_CASE(rsim_dp_test_sg_gaps),
	KUNIT_CASE_PARAM(rsim_dp_test_rkey_checks, dp_rkey_gen_params),
	KUNIT_CASE(rsim_dp_test_lkey_checks),
	KUNIT_CASE(rsim_dp_test_bad_lkey),
	KUNIT_CASE(rsim_dp_test_recv_too_small),
	KUNIT_CASE(rsim_dp_test_rnr),
	KUNIT_CASE(rsim_dp_test_rnr_no_retry),
	KUNIT_CASE(rsim_dp_test_rnr_responder_error),
	KUNIT_CASE(rsim_dp_test_not_connected),
	KUNIT_CASE(rsim_dp_test_fast_reg_rules),
	KUNIT_CASE(rsim_dp_test_reg_other_pd),
	KUNIT_CASE(rsim_dp_test_reg_without_map),
	KUNIT_CASE(rsim_dp_test_send_with_inv),
	KUNIT_CASE(rsim_dp_test_write_with_imm),
	KUNIT_CASE(rsim_dp_test_uc),
	KUNIT_CASE(rsim_dp_test_post_checks),
	KUNIT_CASE(rsim_dp_test_cq_resize),
	KUNIT_CASE(rsim_dp_test_reset_cleans_cq),
	KUNIT_CASE(rsim_dp_test_counters),
	KUNIT_CASE(rsim_dp_test_rnr_responder_destroyed),
	KUNIT_CASE(rsim_dp_test_softirq_pingpong),
	KUNIT_CASE(rsim_dp_test_self_connected_flush_race),
	KUNIT_CASE(rsim_dp_test_self_connected_post_in_error),
	KUNIT_CASE(rsim_dp_test_rnr_retry_count),
	KUNIT_CASE(rsim_dp_test_cq_overflow),
	KUNIT_CASE(rsim_dp_test_read_source_fails),
	KUNIT_CASE(rsim_dp_test_responder_events),
	KUNIT_CASE(rsim_dp_test_irqs_off_defers),
	KUNIT_CASE(rsim_dp_test_user_mr),
	RSIM_KUNIT_NO_LEFTOVERS,
	{}
};

static struct kunit_suite rsim_dp_test_suite = {
	.name = "rdmasim_datapath",
	.suite_init = rsim_kunit_suite_init,
	.test_cases = rsim_dp_test_cases,
};

kunit_test_suite(rsim_dp_test_suite);
