// SPDX-License-Identifier: GPL-2.0-only
/*
 * Suite rdmasim_fault: an injected failure at every allocation point of a
 * verb unwinds with nothing left behind.
 *
 * For k = 1, 2, ... the k-th allocation point of the verb is made to fail
 * (the one-shot fail_nth countdown); each such call must fail with -ENOMEM
 * and leave every counter as it was (kmemleak, run after the suites, checks
 * the memory). The walk ends at the first k the verb survives, which must
 * be exactly one past the number of allocation points the verb has.
 *
 * A point's trace names the call site of each check in order, and
 * injected_at the one that failed: the n-th site of a traced run is what
 * fail_nth = n fails.
 */

#include <linux/kallsyms.h>
#include <linux/mman.h>

#include "helpers.h"

enum rsim_fault_op {
	OP_ALLOC_MR,
	OP_ALLOC_MR_GAPS,
	OP_ALLOC_PD,
	OP_CREATE_CQ,
	OP_CREATE_QP,
	OP_CREATE_QP_NO_RQ,
	OP_GET_DMA_MR,
	OP_REG_USER_MR,
};

struct rsim_fault_case {
	const char *name;
	enum rsim_fault_op op;
	int points;	/* allocation points the verb has */
};

static const struct rsim_fault_case rsim_fault_cases[] = {
	/* MR struct, translation table, key index */
	{ "alloc_mr", OP_ALLOC_MR, 3 },
	{ "alloc_mr_sg_gaps", OP_ALLOC_MR_GAPS, 3 },
	/* PD number */
	{ "alloc_pd", OP_ALLOC_PD, 1 },
	/* completion ring */
	{ "create_cq", OP_CREATE_CQ, 1 },
	/* send ring, receive ring, the engine's scratch space, QP number */
	{ "create_qp", OP_CREATE_QP, 4 },
	{ "create_qp_send_only", OP_CREATE_QP_NO_RQ, 3 },
	/* PD number; MR struct and key index of the PD's DMA MR */
	{ "get_dma_mr", OP_GET_DMA_MR, 3 },
	/* MR struct, key index, umem pin */
	{ "reg_user_mr", OP_REG_USER_MR, 4 },
};

KUNIT_ARRAY_PARAM_DESC(rsim_fault, rsim_fault_cases, name);

struct rsim_fault_ctx {
	struct rsim_dev *rsim;
	struct ib_pd *pd;
	struct ib_cq *cq;
	unsigned long uaddr;
};

/* Run the verb once; on success undo it. Returns 0 or the verb's errno. */
static int rsim_fault_run(struct rsim_fault_ctx *ctx,
			  enum rsim_fault_op op)
{
	struct ib_qp_init_attr qpa = {};
	struct ib_cq_init_attr cqa = { .cqe = 16 };
	struct ib_mr *mr;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;

	switch (op) {
	case OP_ALLOC_MR:
	case OP_ALLOC_MR_GAPS:
		mr = ib_alloc_mr(ctx->pd, op == OP_ALLOC_MR ?
				 IB_MR_TYPE_MEM_REG : IB_MR_TYPE_SG_GAPS, 32);
		if (IS_ERR(mr))
			return PTR_ERR(mr);
		return ib_dereg_mr(mr);
	case OP_ALLOC_PD:
	case OP_GET_DMA_MR:
		pd = ib_alloc_pd(&ctx->rsim->ibdev, op == OP_GET_DMA_MR ?
				 IB_PD_UNSAFE_GLOBAL_RKEY : 0);
		if (IS_ERR(pd))
			return PTR_ERR(pd);
		ib_dealloc_pd(pd);
		return 0;
	case OP_CREATE_CQ:
		cq = ib_create_cq(&ctx->rsim->ibdev, NULL, NULL, NULL, &cqa);
		if (IS_ERR(cq))
			return PTR_ERR(cq);
		ib_destroy_cq(cq);
		return 0;
	case OP_CREATE_QP:
	case OP_CREATE_QP_NO_RQ:
		qpa.qp_type = IB_QPT_RC;
		qpa.send_cq = ctx->cq;
		qpa.recv_cq = ctx->cq;
		qpa.cap.max_send_wr = 16;
		qpa.cap.max_send_sge = 2;
		qpa.cap.max_recv_wr = op == OP_CREATE_QP ? 16 : 0;
		qpa.cap.max_recv_sge = 2;
		qp = ib_create_qp(ctx->pd, &qpa);
		if (IS_ERR(qp))
			return PTR_ERR(qp);
		return ib_destroy_qp(qp);
	case OP_REG_USER_MR:
		mr = ib_reg_user_mr(ctx->pd, ctx->uaddr, PAGE_SIZE, ctx->uaddr,
				    IB_ACCESS_LOCAL_WRITE);
		if (IS_ERR(mr))
			return PTR_ERR(mr);
		return ib_dereg_mr(mr);
	}
	return -EINVAL;
}

static void rsim_fault_test_every_point_unwinds(struct kunit *test)
{
	const struct rsim_fault_case *c = test->param_value;
	struct rsim_kunit_counts before;
	struct rsim_fault_ctx ctx = {};
	struct rsim_fault_point *fp;
	int k, err;

	ctx.rsim = rsim_kunit_shared_dev(test);
	fp = &ctx.rsim->fault[RSIM_FAULT_ALLOC];
	ctx.pd = rsim_kunit_pd(test, ctx.rsim);
	ctx.cq = rsim_kunit_cq(test, ctx.rsim, 64);
	if (c->op == OP_REG_USER_MR) {
		ctx.uaddr = rsim_kunit_vm_mmap(test, PAGE_SIZE,
					       PROT_READ | PROT_WRITE);
	}

	for (k = 1; k <= 16; k++) {
		rsim_kunit_snapshot(ctx.rsim, &before);
		rsim_fault_set_nth(fp, k);
		err = rsim_fault_run(&ctx, c->op);
		if (!err)
			break;
		KUNIT_EXPECT_EQ_MSG(test, err, -ENOMEM, "point %d", k);
		KUNIT_EXPECT_EQ_MSG(test,
				    rsim_fault_injected(fp),
				    before.injected[RSIM_FAULT_ALLOC] + 1,
				    "point %d fired", k);
		rsim_kunit_expect_counts(test, ctx.rsim, &before);
	}
	rsim_fault_set_nth(fp, 0);
	KUNIT_EXPECT_EQ(test, k, c->points + 1);
	rsim_kunit_expect_counts(test, ctx.rsim, &before);
}

static void rsim_fault_test_nth_is_one_shot(struct kunit *test)
{
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	struct rsim_fault_point *fp = &rsim->fault[RSIM_FAULT_ALLOC];
	struct ib_pd *pd = rsim_kunit_pd(test, rsim);
	int injected = rsim_fault_injected(fp);
	struct ib_mr *mr;

	rsim_fault_set_nth(fp, 1);
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, 4)),
			-ENOMEM);
	KUNIT_EXPECT_EQ(test, rsim_fault_get_nth(fp), 0);
	mr = rsim_kunit_mr(test, pd, IB_MR_TYPE_MEM_REG, 4);
	KUNIT_EXPECT_NOT_ERR_OR_NULL(test, mr);
	KUNIT_EXPECT_EQ(test, rsim_fault_injected(fp),
			injected + 1);
}

static void rsim_fault_test_countdown_spans_calls(struct kunit *test)
{
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	struct rsim_fault_point *fp = &rsim->fault[RSIM_FAULT_ALLOC];
	struct ib_pd *pd = rsim_kunit_pd(test, rsim);

	/* alloc_mr has 3 points: the 5th check is the 2nd of the 2nd call */
	rsim_fault_set_nth(fp, 5);
	rsim_kunit_mr(test, pd, IB_MR_TYPE_MEM_REG, 4);
	KUNIT_EXPECT_EQ(test, rsim_fault_get_nth(fp), 2);
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, 4)),
			-ENOMEM);
	KUNIT_EXPECT_EQ(test, rsim_fault_get_nth(fp), 0);
}

/* a point's trace names the call site of each check, in order */
static void rsim_fault_test_trace_records_sites(struct kunit *test)
{
	struct rsim_fault_point fp;
	unsigned long ip[4] = {};

	rsim_fault_point_init(&fp, NULL);
	KUNIT_EXPECT_EQ(test, rsim_fault_trace_read(&fp, ip, 4), -ENOENT);
	KUNIT_ASSERT_EQ(test, rsim_fault_trace_start(&fp, 2), 0);
	rsim_fault_set_nth(&fp, 2);
	KUNIT_EXPECT_FALSE(test, rsim_fault_check(&fp, 0x100));
	KUNIT_EXPECT_TRUE(test, rsim_fault_check(&fp, 0x200));
	KUNIT_EXPECT_FALSE(test, rsim_fault_check(&fp, 0x300));
	/* three checks counted, the room for two recorded */
	KUNIT_EXPECT_EQ(test, rsim_fault_trace_read(&fp, ip, 4), 3);
	KUNIT_EXPECT_EQ(test, ip[0], 0x100UL);
	KUNIT_EXPECT_EQ(test, ip[1], 0x200UL);
	KUNIT_EXPECT_EQ(test, ip[2], 0UL);
	KUNIT_EXPECT_EQ(test, rsim_fault_injected_at(&fp), 0x200UL);
	/* too long a trace is refused and the running one stays */
	KUNIT_EXPECT_EQ(test,
			rsim_fault_trace_start(&fp, RSIM_FAULT_TRACE_MAX + 1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, rsim_fault_trace_read(&fp, ip, 4), 3);
	/* a new trace starts from nothing; 0 stops tracing */
	KUNIT_EXPECT_EQ(test, rsim_fault_trace_start(&fp, 4), 0);
	KUNIT_EXPECT_EQ(test, rsim_fault_trace_read(&fp, ip, 4), 0);
	KUNIT_EXPECT_EQ(test, rsim_fault_trace_start(&fp, 0), 0);
	rsim_fault_check(&fp, 0x400);
	KUNIT_EXPECT_EQ(test, rsim_fault_trace_read(&fp, ip, 4), -ENOENT);
	rsim_fault_point_fini(&fp);
}

/*
 * Traced, a verb's checks name its own allocations, each its own site: the
 * n-th entry is what fail_nth = n fails (injected_at)
 */
static void rsim_fault_test_trace_of_a_verb(struct kunit *test)
{
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	struct rsim_fault_point *fp = &rsim->fault[RSIM_FAULT_ALLOC];
	struct ib_pd *pd = rsim_kunit_pd(test, rsim);
	char sym[KSYM_SYMBOL_LEN];
	unsigned long ip[4] = {};
	int i;

	KUNIT_ASSERT_EQ(test, rsim_fault_trace_start(fp, 4), 0);
	rsim_kunit_mr(test, pd, IB_MR_TYPE_MEM_REG, 4);
	/* alloc_mr has 3 points */
	KUNIT_EXPECT_EQ(test, rsim_fault_trace_read(fp, ip, 4), 3);
	for (i = 0; i < 3; i++) {
		sprint_symbol_no_offset(sym, ip[i]);
		KUNIT_EXPECT_TRUE_MSG(test, !strncmp(sym, "rsim_", 5),
				      "check %d from %s", i + 1, sym);
	}
	KUNIT_EXPECT_NE(test, ip[0], ip[1]);
	KUNIT_EXPECT_NE(test, ip[1], ip[2]);
	KUNIT_EXPECT_NE(test, ip[0], ip[2]);
	rsim_fault_set_nth(fp, 2);
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, 4)),
			-ENOMEM);
	KUNIT_EXPECT_EQ(test, rsim_fault_injected_at(fp), ip[1]);
	KUNIT_EXPECT_EQ(test, rsim_fault_trace_start(fp, 0), 0);
}

static struct kunit_case rsim_fault_test_cases[] = {
	KUNIT_CASE_PARAM(rsim_fault_test_every_point_unwinds,
			 rsim_fault_gen_params),
	KUNIT_CASE(rsim_fault_test_nth_is_one_shot),
	KUNIT_CASE(rsim_fault_test_countdown_spans_calls),
	KUNIT_CASE(rsim_fault_test_trace_records_sites),
	KUNIT_CASE(rsim_fault_test_trace_of_a_verb),
	RSIM_KUNIT_NO_LEFTOVERS,
	{}
};

static struct kunit_suite rsim_fault_test_suite = {
	.name = "rdmasim_fault",
	.suite_init = rsim_kunit_suite_init,
	.test_cases = rsim_fault_test_cases,
};

kunit_test_suite(rsim_fault_test_suite);
