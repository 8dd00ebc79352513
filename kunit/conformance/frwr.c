// SPDX-License-Identifier: GPL-2.0-only
/*
 * Suite rdma_conformance_frwr.<device>: fast registration and remote
 * access over an RC connection: a loopback one, or with the module's peer
 * parameter one from another device across the InfiniBand subnet.
 *
 * A window in the middle of the responder's buffer, unaligned at both
 * ends and across a page boundary, is registered with IB_WR_REG_MR; the
 * requester then writes and reads inside it, one byte past either end,
 * after LOCAL_INV, with a stale or wrong key, from another PD and without
 * the access right. Each refused access must complete as its transport's
 * specification says, and no byte outside what the key allowed may
 * change:
 *
 * - InfiniBand and RoCE (IBA vol. 1, ch. 9 transport and ch. 11 verbs):
 *   the responder NAKs with Remote Access Error and the requester's WR
 *   completes with IB_WC_REM_ACCESS_ERR.
 * - iWARP (RFC 5040 RDMAP and RFC 5041 DDP error handling): a WRITE
 *   completes at the requester once sent; the responder detects the violation, reports
 *   a local access error (IB_EVENT_QP_ACCESS_ERR) and sends a TERMINATE
 *   that moves the requester QP to the error state. DDP segments are
 *   validated one by one, so a WRITE that runs past the window may have
 *   placed its first segments inside it; nothing outside.
 */

#include "conformance.h"

#define RCF_SRC_FRWR		"ib_verbs.h: IB_WR_REG_MR, IB_WR_LOCAL_INV; IBA vol. 1 ch. 10"
#define RCF_SRC_ACCESS		"IBA vol. 1 ch. 9 (R_Key checks); RFC 5040, RFC 5041"
#define RCF_SRC_KEY		"ib_verbs.h: ib_update_fast_reg_key(); IBA vol. 1 ch. 10"
#define RCF_SRC_PD		"IBA vol. 1 ch. 10 (PD of MR and QP); RFC 5040"
#define RCF_SRC_SG_OFFSET	"verbs.c: ib_sg_to_pages() kernel-doc (sg_offset IN)"
#define RCF_SRC_DEREG		"verbs.c: ib_dereg_mr_user()"

#define RCF_W_OFF	100			/* window start in the buffer */
#define RCF_W_LEN	(2 * PAGE_SIZE - 200)	/* window length */
#define RCF_BUF_LEN	(3 * PAGE_SIZE)
#define RCF_FILL_DST	0xd7
#define RCF_FILL_SINK	0x11

static const char *rcf_status(enum ib_wc_status s)
{
	return ib_wc_status_msg(s);
}

/* Poll exactly one completion of @s; aborts the case on a timeout. */
static void rcf_side_poll(struct kunit *test, struct rcf_side *s,
			  struct ib_wc *wc, const char *what)
{
	int n = rcf_poll_one(s->cq, wc);

	if (n != 1)
		KUNIT_FAIL_AND_ABORT(test, "%s: %s: no completion within %d ms (%d)",
				     rcf_target(test)->name, what,
				     RCF_TIMEOUT_MS, n);
}

/* register @f->mr (mapped already) on @f->reg_side with a new key */
static enum ib_wc_status rcf_frwr_reg(struct kunit *test, struct rcf_frwr *f,
				      int access)
{
	struct ib_wc wc;
	int err;

	ib_update_fast_reg_key(f->mr, ib_inc_rkey(f->mr->rkey));
	err = rcf_post_reg(f->reg_side->qp, f->mr, f->mr->rkey, access, 1);
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "%s: posting REG_MR",
			    rcf_target(test)->name);
	rcf_side_poll(test, f->reg_side, &wc, "REG_MR");
	if (wc.status == IB_WC_SUCCESS) {
		KUNIT_EXPECT_EQ_MSG(test, wc.opcode, IB_WC_REG_MR,
				    "%s: REG_MR completion opcode",
				    rcf_target(test)->name);
		f->iova = f->mr->iova;
		f->rkey = f->mr->rkey;
	}
	return wc.status;
}

static void rcf_frwr_map(struct kunit *test, struct rcf_frwr *f, u64 off,
			 unsigned int len)
{
	struct scatterlist *sgl = rcf_sgl(test, 1);
	int n;

	rcf_sg_set(sgl, f->dst->dma + off, len);
	n = ib_map_mr_sg(f->mr, sgl, 1, NULL, PAGE_SIZE);
	KUNIT_ASSERT_EQ_MSG(test, n, 1, "%s: mapping the window",
			    rcf_target(test)->name);
}

/**
 * rcf_frwr_new() - a window registered with @access, and a connection
 * @test: the case
 * @access: the REG_MR access flags
 * @flags: RCF_OTHER_PD, RCF_NO_REG
 *
 * The window is on the device under test. The requester is there too, or
 * on the device's peer (the connection then crosses the subnet): with a
 * peer, a window in another PD than the responder's is registered through
 * a second connection on the device under test, in that PD.
 *
 * Return: the fixture; skips or aborts the case if it cannot be had.
 */
struct rcf_frwr *rcf_frwr_new(struct kunit *test, int access,
			      unsigned int flags)
{
	struct rcf_target *t = rcf_target(test);
	struct ib_pd *pd_a, *pd_b, *pd_mr;
	struct ib_device *req_dev;
	struct rcf_frwr *f;
	enum ib_wc_status st;
	int i;

	rcf_need_frwr(test);
	if (t->transport == RCF_TR_NONE)
		kunit_skip(test, "no loopback RC connection on %s: %s",
			   t->name, t->no_conn);
	f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f);
	if (t->peer) {
		pd_a = rcf_pd_on(test, t->peer->dev);
		pd_b = rcf_pd(test);
		pd_mr = flags & RCF_OTHER_PD ? rcf_pd(test) : pd_b;
	} else {
		pd_a = rcf_pd(test);
		pd_b = flags & RCF_OTHER_PD ? rcf_pd(test) : pd_a;
		pd_mr = pd_a;
	}
	req_dev = pd_a->device;

	f->src = rcf_buf_new(test, req_dev, RCF_BUF_LEN, 0);
	for (i = 0; i < RCF_BUF_LEN; i++)
		f->src->va[i] = i * 7 + 3;
	rcf_buf_sync_dev(f->src);
	f->sink = rcf_buf_new(test, req_dev, RCF_BUF_LEN, RCF_FILL_SINK);
	f->dst = rcf_buf_new(test, t->dev, 4 * PAGE_SIZE, RCF_FILL_DST);
	f->mr = rcf_mr(test, pd_mr, IB_MR_TYPE_MEM_REG, 4);

	f->c = rcf_conn_new(test, pd_a, pd_b);
	if (pd_mr == pd_b)
		f->reg_side = &f->c->b;
	else if (pd_mr == pd_a)
		f->reg_side = &f->c->a;
	else
		f->reg_side = &rcf_conn_new(test, pd_mr, pd_mr)->a;
	if (flags & RCF_NO_REG)
		return f;
	rcf_frwr_map(test, f, RCF_W_OFF, RCF_W_LEN);
	st = rcf_frwr_reg(test, f, access);
	KUNIT_ASSERT_EQ_MSG(test, st, IB_WC_SUCCESS,
			    "%s: REG_MR of the window completed with %s",
			    t->name, rcf_status(st));
	return f;
}

/*
 * Post one RDMA WRITE or READ from the requester: @len bytes between
 * @loff of the requester's buffer (src for WRITE, sink for READ) and
 * @roff bytes from the window's start (may be negative), with @rkey.
 */
static void rcf_frwr_rdma(struct kunit *test, struct rcf_frwr *f,
			  enum ib_wr_opcode op, size_t loff, s64 roff,
			  u32 len, u32 rkey, struct ib_wc *wc)
{
	struct rcf_buf *l = op == IB_WR_RDMA_READ ? f->sink : f->src;
	int err;

	err = rcf_post_rdma(f->c->a.qp, op, l->dma + loff,
			    f->c->a.pd->local_dma_lkey, len, f->iova + roff,
			    rkey, 2);
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "%s: posting the %s",
			    rcf_target(test)->name,
			    op == IB_WR_RDMA_READ ? "READ" : "WRITE");
	rcf_side_poll(test, &f->c->a,  wc,
		      op == IB_WR_RDMA_READ ? "READ" : "WRITE");
}

static void rcf_expect_success(struct kunit *test, struct ib_wc *wc,
			       const char *what)
{
	if (wc->status != IB_WC_SUCCESS)
		RCF_FAIL(test, "%s completed with %s, want success", what,
			 rcf_status(wc->status));
}

/*
 * A WR the device must refuse: it completes with an error status that
 * says why. A flush means "not executed because the QP was in error",
 * which hides the cause; IBA completes the WR in error with its own
 * status and flushes only the WRs after it.
 */
static void rcf_expect_wr_error(struct kunit *test, enum ib_wc_status st,
				const char *what)
{
	if (st == IB_WC_SUCCESS)
		RCF_FAIL(test, "%s succeeded", what);
	else if (st == IB_WC_WR_FLUSH_ERR)
		RCF_FAIL(test, "%s completed as flushed, not with its error",
			 what);
	else
		kunit_info(test, "%s: %s", what, rcf_status(st));
}

/*
 * A remote access the responder must refuse, as the transport says:
 * IB/RoCE complete the requester's WR with Remote Access Error; iWARP
 * moves the requester QP to error (TERMINATE) and raises an access
 * error at the responder (a WRITE may complete successfully first).
 */
static void rcf_expect_refused(struct kunit *test, struct rcf_frwr *f,
			       struct ib_wc *wc, bool read, const char *what)
{
	struct rcf_conn *c = f->c;
	unsigned long want, seen;
	int err;

	if (c->t->transport != RCF_TR_IWARP) {
		if (wc->status != IB_WC_REM_ACCESS_ERR)
			RCF_FAIL(test,
				 "%s completed with %s, want remote access error",
				 what, rcf_status(wc->status));
		return;
	}
	if (read && wc->status == IB_WC_SUCCESS)
		RCF_FAIL(test, "%s completed successfully", what);
	err = rcf_wait_qp_state(c->a.qp, IB_QPS_ERR);
	if (err)
		RCF_FAIL(test,
			 "%s: the requester QP did not reach ERROR (%d): no TERMINATE?",
			 what, err);
	want = BIT(IB_EVENT_QP_ACCESS_ERR);
	if (read)	/* the responder fails its read response */
		want |= BIT(IB_EVENT_QP_REQ_ERR);
	if (rcf_wait_events(c, &c->b, want, &seen))
		RCF_FAIL(test,
			 "%s: no access error event at the responder (events 0x%lx)",
			 what, seen);
}

/* the responder's buffer outside [from, to) is as it was */
static void rcf_expect_dst_outside(struct kunit *test, struct rcf_frwr *f,
				   size_t from, size_t to)
{
	rcf_buf_sync_cpu(f->dst);
	rcf_expect_unchanged(test, f->dst, RCF_FILL_DST, 0, from,
			     "the responder's buffer before the allowed range");
	rcf_expect_unchanged(test, f->dst, RCF_FILL_DST, to, f->dst->len,
			     "the responder's buffer after the allowed range");
}

static void rcf_expect_dst_untouched(struct kunit *test, struct rcf_frwr *f)
{
	rcf_expect_dst_outside(test, f, 0, 0);
}

/* a WRITE past the window: the guards intact; placement inside noted */
static void rcf_expect_guards(struct kunit *test, struct rcf_frwr *f)
{
	size_t i, placed = 0;

	rcf_expect_dst_outside(test, f, RCF_W_OFF, RCF_W_OFF + RCF_W_LEN);
	for (i = RCF_W_OFF; i < RCF_W_OFF + RCF_W_LEN; i++)
		placed += f->dst->va[i] != RCF_FILL_DST;
	if (placed)
		kunit_info(test,
			   "%zu byte(s) placed inside the window before the violation was found",
			   placed);
}

static void rcf_expect_sink_untouched(struct kunit *test, struct rcf_frwr *f)
{
	rcf_buf_sync_cpu(f->sink);
	rcf_expect_unchanged(test, f->sink, RCF_FILL_SINK, 0, f->sink->len,
			     "the requester's read buffer");
}

/* @len bytes of the responder's buffer from @doff equal src from @soff */
static void rcf_expect_written(struct kunit *test, struct rcf_frwr *f,
			       size_t doff, size_t soff, size_t len)
{
	rcf_buf_sync_cpu(f->dst);
	if (memcmp(f->dst->va + doff, f->src->va + soff, len))
		RCF_FAIL(test, "%zu bytes at offset %zu are not what was written",
			 len, doff);
}

/* Rule: inside the window, WRITE and READ move exactly the window. */
static void rcf_test_frwr_write_read_inside(struct kunit *test)
{
	struct rcf_frwr *f;
	struct ib_wc wc;

	RCF_RULE(test, "REG_MR; a WRITE and a READ of the window move just the window",
		 RCF_SRC_FRWR);
	f = rcf_frwr_new(test, RCF_ACCESS_ALL, 0);
	rcf_frwr_rdma(test, f, IB_WR_RDMA_WRITE, 0, 0, RCF_W_LEN, f->rkey,
		      &wc);
	rcf_expect_success(test, &wc, "WRITE of the window");
	rcf_expect_written(test, f, RCF_W_OFF, 0, RCF_W_LEN);
	rcf_expect_dst_outside(test, f, RCF_W_OFF, RCF_W_OFF + RCF_W_LEN);

	rcf_frwr_rdma(test, f, IB_WR_RDMA_READ, 0, 0, RCF_W_LEN, f->rkey, &wc);
	rcf_expect_success(test, &wc, "READ of the window");
	rcf_buf_sync_cpu(f->sink);
	if (memcmp(f->sink->va, f->dst->va + RCF_W_OFF, RCF_W_LEN))
		RCF_FAIL(test, "READ returned other bytes than the window's");
	rcf_expect_unchanged(test, f->sink, RCF_FILL_SINK, RCF_W_LEN,
			     f->sink->len, "the read buffer past the READ");
}

/**
 * rcf_frwr_refused() - one access that the responder must refuse
 * @test: the case
 * @access: what the window is registered with
 * @flags: RCF_OTHER_PD for a window in the requester's PD
 * @op: IB_WR_RDMA_WRITE or IB_WR_RDMA_READ
 * @roff: where the access starts, from the window's first byte
 * @len: bytes
 * @variant: use the key with its 8-bit variant changed
 * @what: the access, for messages
 *
 * A WRITE that overlaps the window may have placed bytes inside it (on
 * iWARP); any other refused access changes nothing at all, and a refused
 * READ returns nothing.
 */
static void rcf_frwr_refused(struct kunit *test, int access,
			     unsigned int flags, enum ib_wr_opcode op,
			     s64 roff, u32 len, bool variant,
			     const char *what)
{
	bool read = op == IB_WR_RDMA_READ;
	struct rcf_frwr *f;
	struct ib_wc wc;
	u32 key;

	f = rcf_frwr_new(test, access, flags);
	key = f->rkey;
	if (variant)
		key = ib_inc_rkey(key);
	rcf_frwr_rdma(test, f, op, 0, roff, len, key, &wc);
	rcf_expect_refused(test, f, &wc, read, what);
	if (read)
		rcf_expect_sink_untouched(test, f);
	else if (len > RCF_W_LEN)
		rcf_expect_guards(test, f);
	else
		rcf_expect_dst_untouched(test, f);
}

/* Rule: a WRITE that runs one byte past the window's end is refused. */
static void rcf_test_frwr_write_past_end(struct kunit *test)
{
	RCF_RULE(test, "WRITE one byte past the window: refused, nothing outside changes",
		 RCF_SRC_ACCESS);
	rcf_frwr_refused(test, RCF_ACCESS_ALL, 0, IB_WR_RDMA_WRITE, 0, RCF_W_LEN + 1, false,
			 "WRITE one byte past the end");
}

/* Rule: a WRITE that starts one byte before the window is refused. */
static void rcf_test_frwr_write_before_start(struct kunit *test)
{
	RCF_RULE(test, "WRITE from one byte before: refused, nothing outside changes",
		 RCF_SRC_ACCESS);
	rcf_frwr_refused(test, RCF_ACCESS_ALL, 0, IB_WR_RDMA_WRITE, -1, RCF_W_LEN + 1, false,
			 "WRITE from one byte before the start");
}

/* Rule: a READ that runs one byte past the window's end is refused. */
static void rcf_test_frwr_read_past_end(struct kunit *test)
{
	RCF_RULE(test, "READ one byte past the window: refused, nothing returned",
		 RCF_SRC_ACCESS);
	rcf_frwr_refused(test, RCF_ACCESS_ALL, 0, IB_WR_RDMA_READ, 0, RCF_W_LEN + 1, false,
			 "READ one byte past the end");
}

/* Rule: a READ that starts one byte before the window is refused. */
static void rcf_test_frwr_read_before_start(struct kunit *test)
{
	RCF_RULE(test, "READ from one byte before the window: refused, nothing returned",
		 RCF_SRC_ACCESS);
	rcf_frwr_refused(test, RCF_ACCESS_ALL, 0, IB_WR_RDMA_READ, -1, RCF_W_LEN + 1, false,
			 "READ from one byte before the start");
}

/* LOCAL_INV of the window's key on the side that registered it */
static void rcf_frwr_inv(struct kunit *test, struct rcf_frwr *f, u32 key,
			 struct ib_wc *wc)
{
	int err = rcf_post_inv(f->reg_side->qp, key, 3);

	KUNIT_ASSERT_EQ_MSG(test, err, 0, "%s: posting LOCAL_INV",
			    rcf_target(test)->name);
	rcf_side_poll(test, f->reg_side, wc, "LOCAL_INV");
}

/* Rule: after LOCAL_INV the key is refused, for WRITE... */
static void rcf_test_frwr_write_after_local_inv(struct kunit *test)
{
	struct rcf_frwr *f;
	struct ib_wc wc;

	RCF_RULE(test, "after LOCAL_INV, a WRITE with the key is refused",
		 RCF_SRC_FRWR);
	f = rcf_frwr_new(test, RCF_ACCESS_ALL, 0);
	rcf_frwr_rdma(test, f, IB_WR_RDMA_WRITE, 0, 0, 16, f->rkey, &wc);
	rcf_expect_success(test, &wc, "WRITE before LOCAL_INV");
	rcf_frwr_inv(test, f, f->rkey, &wc);
	if (wc.status != IB_WC_SUCCESS || wc.opcode != IB_WC_LOCAL_INV)
		KUNIT_FAIL_AND_ABORT(test,
				     "%s: LOCAL_INV completed with %s (opcode %d)",
				     rcf_target(test)->name,
				     rcf_status(wc.status), wc.opcode);
	rcf_frwr_rdma(test, f, IB_WR_RDMA_WRITE, 1000, 1000, 16, f->rkey, &wc);
	rcf_expect_refused(test, f, &wc, false, "WRITE after LOCAL_INV");
	rcf_expect_written(test, f, RCF_W_OFF, 0, 16);
	rcf_expect_dst_outside(test, f, RCF_W_OFF, RCF_W_OFF + 16);
}

/* ...and for READ */
static void rcf_test_frwr_read_after_local_inv(struct kunit *test)
{
	struct rcf_frwr *f;
	struct ib_wc wc;

	RCF_RULE(test, "after LOCAL_INV, a READ with the key is refused",
		 RCF_SRC_FRWR);
	f = rcf_frwr_new(test, RCF_ACCESS_ALL, 0);
	rcf_frwr_inv(test, f, f->rkey, &wc);
	if (wc.status != IB_WC_SUCCESS)
		KUNIT_FAIL_AND_ABORT(test, "%s: LOCAL_INV completed with %s",
				     rcf_target(test)->name,
				     rcf_status(wc.status));
	rcf_frwr_rdma(test, f, IB_WR_RDMA_READ, 0, 0, 16, f->rkey, &wc);
	rcf_expect_refused(test, f, &wc, true, "READ after LOCAL_INV");
	rcf_expect_sink_untouched(test, f);
}

/* Rule: the key's 8-bit variant is part of the key. */
static void rcf_test_frwr_wrong_key_variant(struct kunit *test)
{
	RCF_RULE(test, "a key with another 8-bit variant is refused",
		 RCF_SRC_KEY);
	rcf_frwr_refused(test, RCF_ACCESS_ALL, 0, IB_WR_RDMA_WRITE, 0, 16, true,
			 "WRITE with another variant");
}

/* Rule: a re-registration with a new key retires the old one. */
static void rcf_test_frwr_stale_key(struct kunit *test)
{
	enum ib_wc_status st;
	struct rcf_frwr *f;
	struct ib_wc wc;
	u32 old;

	RCF_RULE(test, "re-registered: the new key writes, the old one is refused",
		 RCF_SRC_FRWR);
	f = rcf_frwr_new(test, RCF_ACCESS_ALL, 0);
	old = f->rkey;
	rcf_frwr_inv(test, f, old, &wc);
	KUNIT_ASSERT_EQ_MSG(test, wc.status, IB_WC_SUCCESS, "%s: LOCAL_INV",
			    rcf_target(test)->name);
	rcf_frwr_map(test, f, RCF_W_OFF, RCF_W_LEN);
	st = rcf_frwr_reg(test, f, RCF_ACCESS_ALL);
	KUNIT_ASSERT_EQ_MSG(test, st, IB_WC_SUCCESS,
			    "%s: REG_MR with a new key completed with %s",
			    rcf_target(test)->name, rcf_status(st));
	rcf_frwr_rdma(test, f, IB_WR_RDMA_WRITE, 0, 0, 16, f->rkey, &wc);
	rcf_expect_success(test, &wc, "WRITE with the new key");
	rcf_frwr_rdma(test, f, IB_WR_RDMA_WRITE, 1000, 1000, 16, old, &wc);
	rcf_expect_refused(test, f, &wc, false, "WRITE with the old key");
	rcf_expect_written(test, f, RCF_W_OFF, 0, 16);
	rcf_expect_dst_outside(test, f, RCF_W_OFF, RCF_W_OFF + 16);
}

/* Rule: a key of another PD is refused. */
static void rcf_test_frwr_other_pd(struct kunit *test)
{
	RCF_RULE(test, "a key of another PD than the responder QP's is refused",
		 RCF_SRC_PD);
	rcf_frwr_refused(test, RCF_ACCESS_ALL, RCF_OTHER_PD, IB_WR_RDMA_WRITE, 0, 16,
			 false, "WRITE from another PD");
}

/* Rule: WRITE needs IB_ACCESS_REMOTE_WRITE in the registration. */
static void rcf_test_frwr_write_without_right(struct kunit *test)
{
	RCF_RULE(test, "WRITE without IB_ACCESS_REMOTE_WRITE is refused",
		 RCF_SRC_ACCESS);
	rcf_frwr_refused(test, IB_ACCESS_REMOTE_READ, 0, IB_WR_RDMA_WRITE, 0, 16, false,
			 "WRITE without the right");
}

/* Rule: READ needs IB_ACCESS_REMOTE_READ in the registration. */
static void rcf_test_frwr_read_without_right(struct kunit *test)
{
	RCF_RULE(test, "READ without IB_ACCESS_REMOTE_READ is refused",
		 RCF_SRC_ACCESS);
	rcf_frwr_refused(test, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE, 0,
			 IB_WR_RDMA_READ, 0, 16, false, "READ without the right");
}

/* Rule: REG_MR needs an MR that is not registered. */
static void rcf_test_frwr_reg_valid_mr(struct kunit *test)
{
	enum ib_wc_status st;
	struct rcf_frwr *f;

	RCF_RULE(test, "REG_MR of a registered MR fails with its own error, not a flush",
		 RCF_SRC_FRWR);
	f = rcf_frwr_new(test, RCF_ACCESS_ALL, 0);
	st = rcf_frwr_reg(test, f, RCF_ACCESS_ALL);
	rcf_expect_wr_error(test, st, "a second REG_MR without LOCAL_INV");
}

/*
 * Rule: LOCAL_INV with another variant of the key fails and leaves the
 * registration valid (checked over a second connection: the failure
 * moved the first one to error).
 */
static void rcf_test_frwr_local_inv_wrong_key(struct kunit *test)
{
	struct rcf_frwr *f;
	struct ib_wc wc;
	u32 key;

	RCF_RULE(test, "LOCAL_INV with another variant fails; the MR stays valid",
		 RCF_SRC_FRWR);
	f = rcf_frwr_new(test, RCF_ACCESS_ALL, 0);
	key = ib_inc_rkey(f->rkey);
	rcf_frwr_inv(test, f, key, &wc);
	rcf_expect_wr_error(test, wc.status, "LOCAL_INV with a wrong variant");

	f->c = rcf_conn_new(test, f->c->a.pd, f->c->b.pd);
	rcf_frwr_rdma(test, f, IB_WR_RDMA_WRITE, 0, 0, 16, f->rkey, &wc);
	if (wc.status != IB_WC_SUCCESS)
		RCF_FAIL(test,
			 "then a WRITE with the valid key: %s (registration lost)",
			 rcf_status(wc.status));
}

/*
 * Rule: *sg_offset is honoured by the data path: the MR's first byte is
 * the one the offset names.
 */
static void rcf_test_frwr_sg_offset_data(struct kunit *test)
{
	struct scatterlist *sgl = rcf_sgl(test, 2);
	unsigned int off = 300;
	enum ib_wc_status st;
	struct rcf_frwr *f;
	struct ib_wc wc;
	int n;

	RCF_RULE(test, "data lands at the byte *sg_offset named when mapping",
		 RCF_SRC_SG_OFFSET);
	f = rcf_frwr_new(test, RCF_ACCESS_ALL, RCF_NO_REG);
	rcf_sg_set(&sgl[0], f->dst->dma, PAGE_SIZE);
	rcf_sg_set(&sgl[1], f->dst->dma + PAGE_SIZE, PAGE_SIZE);
	n = ib_map_mr_sg(f->mr, sgl, 2, &off, PAGE_SIZE);
	KUNIT_ASSERT_EQ_MSG(test, n, 2, "%s: mapping with sg_offset 300",
			    rcf_target(test)->name);
	st = rcf_frwr_reg(test, f, RCF_ACCESS_ALL);
	KUNIT_ASSERT_EQ(test, st, IB_WC_SUCCESS);
	rcf_frwr_rdma(test, f, IB_WR_RDMA_WRITE, 0, 0, 64, f->rkey, &wc);
	rcf_expect_success(test, &wc, "WRITE at the iova");
	rcf_expect_written(test, f, 300, 0, 64);
	rcf_expect_dst_outside(test, f, 300, 364);
}

/*
 * Rule: the page list is honoured: an MR over pages 1 and 3 of a buffer
 * puts the second page's bytes in page 3 and leaves page 2 alone.
 */
static void rcf_test_frwr_page_list_data(struct kunit *test)
{
	struct scatterlist *sgl = rcf_sgl(test, 2);
	enum ib_wc_status st;
	struct rcf_frwr *f;
	struct ib_wc wc;
	int n;

	RCF_RULE(test, "data follows the page list, not the buffer around it",
		 RCF_SRC_FRWR);
	f = rcf_frwr_new(test, RCF_ACCESS_ALL, RCF_NO_REG);
	rcf_sg_set(&sgl[0], f->dst->dma + PAGE_SIZE, PAGE_SIZE);
	rcf_sg_set(&sgl[1], f->dst->dma + 3 * PAGE_SIZE, PAGE_SIZE);
	n = ib_map_mr_sg(f->mr, sgl, 2, NULL, PAGE_SIZE);
	KUNIT_ASSERT_EQ_MSG(test, n, 2, "%s: mapping pages 1 and 3",
			    rcf_target(test)->name);
	st = rcf_frwr_reg(test, f, RCF_ACCESS_ALL);
	KUNIT_ASSERT_EQ(test, st, IB_WC_SUCCESS);
	rcf_frwr_rdma(test, f, IB_WR_RDMA_WRITE, 100, PAGE_SIZE - 50, 100,
		      f->rkey, &wc);
	rcf_expect_success(test, &wc, "WRITE across the two pages");
	rcf_expect_written(test, f, 2 * PAGE_SIZE - 50, 100, 50);
	rcf_expect_written(test, f, 3 * PAGE_SIZE, 150, 50);
	rcf_buf_sync_cpu(f->dst);
	rcf_expect_unchanged(test, f->dst, RCF_FILL_DST, 0, 2 * PAGE_SIZE - 50,
			     "pages 0 and 1 before the write");
	rcf_expect_unchanged(test, f->dst, RCF_FILL_DST, 2 * PAGE_SIZE,
			     3 * PAGE_SIZE, "page 2, between the MR's pages");
	rcf_expect_unchanged(test, f->dst, RCF_FILL_DST, 3 * PAGE_SIZE + 50,
			     4 * PAGE_SIZE, "page 3 after the write");
}

/* Rule: a registered MR deregisters. */
static void rcf_test_frwr_dereg_registered(struct kunit *test)
{
	struct scatterlist *sgl = rcf_sgl(test, 1);
	enum ib_wc_status st;
	struct rcf_frwr *f;
	struct ib_mr *mr;
	u32 before;
	int n;

	RCF_RULE(test, "ib_dereg_mr() of a registered MR returns 0 and the MR is gone",
		 RCF_SRC_DEREG);
	f = rcf_frwr_new(test, RCF_ACCESS_ALL, RCF_NO_REG);
	before = rcf_mr_count(test);
	mr = rcf_mr(test, f->c->b.pd, IB_MR_TYPE_MEM_REG, 2);
	rcf_sg_set(sgl, f->dst->dma, 2 * PAGE_SIZE);
	n = ib_map_mr_sg(mr, sgl, 1, NULL, PAGE_SIZE);
	if (n == 1) {
		f->mr = mr;
		st = rcf_frwr_reg(test, f, RCF_ACCESS_ALL);
		if (st != IB_WC_SUCCESS)
			RCF_FAIL(test, "REG_MR completed with %s",
				 rcf_status(st));
	} else {
		RCF_FAIL(test, "mapping 2 pages: %d", n);
	}
	rcf_expect_dereg(test, mr, before, "a registered MR");
}

static struct kunit_case rcf_frwr_cases[] = {
	RCF_CASE(frwr_write_read_inside),
	RCF_CASE(frwr_write_past_end),
	RCF_CASE(frwr_write_before_start),
	RCF_CASE(frwr_read_past_end),
	RCF_CASE(frwr_read_before_start),
	RCF_CASE(frwr_write_after_local_inv),
	RCF_CASE(frwr_read_after_local_inv),
	RCF_CASE(frwr_wrong_key_variant),
	RCF_CASE(frwr_stale_key),
	RCF_CASE(frwr_other_pd),
	RCF_CASE(frwr_write_without_right),
	RCF_CASE(frwr_read_without_right),
	RCF_CASE(frwr_reg_valid_mr),
	RCF_CASE(frwr_local_inv_wrong_key),
	RCF_CASE(frwr_sg_offset_data),
	RCF_CASE(frwr_page_list_data),
	RCF_CASE(frwr_dereg_registered),
	{}
};

struct kunit_suite rcf_frwr_suite = {
	.name = "rdma_conformance_frwr",
	.test_cases = rcf_frwr_cases,
};
