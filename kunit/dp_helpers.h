/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The data-path suites' fixture (dp_helpers.c): two RC (or UC) QPs of the
 * shared device connected to each other, a buffer mapped with the DMA API
 * on each side, and the posts, polls and registrations the cases repeat.
 * Everything a helper acquires is released by a KUnit action.
 */
#ifndef RDMASIM_KUNIT_DP_HELPERS_H
#define RDMASIM_KUNIT_DP_HELPERS_H

#include <linux/dma-mapping.h>
#include <rdmasim/rdmasim-abi.h>

#include "helpers.h"

/* the size of each of the fixture's two buffers */
#define DP_BUF		(3 * PAGE_SIZE)
/* the remote rights the fixture's requester QP grants */
#define DP_ACCESS	(IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE)

/**
 * struct dp_buf - a kernel buffer mapped for the device
 * @dev: the device it is mapped for
 * @va: CPU address
 * @dma: DMA address
 * @len: bytes
 */
struct dp_buf {
	struct ib_device *dev;
	u8 *va;
	u64 dma;
	size_t len;
};

/**
 * struct dp_fixture - two connected QPs and their resources
 * @rsim: the shared device
 * @pd: both QPs' PD
 * @cq: both QPs' send and receive CQ
 * @a: requester
 * @b: responder
 * @src: a buffer on @a's side
 * @dst: a buffer on @b's side
 */
struct dp_fixture {
	struct rsim_dev *rsim;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *a;
	struct ib_qp *b;
	struct dp_buf src;
	struct dp_buf dst;
};

void dp_fill(u8 *va, size_t len, u8 fill);
void dp_buf_init(struct kunit *test, struct dp_fixture *f, struct dp_buf *b,
		 size_t len, u8 fill);
u8 *dp_cpu(struct dp_fixture *f, struct dp_buf *b);
void dp_qp_destroy(void *qp);
struct ib_qp *dp_qp(struct kunit *test, struct dp_fixture *f,
		    enum ib_qp_type type, struct ib_pd *pd);
int dp_connect(struct dp_fixture *f, struct ib_qp *qp, u32 dest, int access,
	       u8 rnr_retry);
int dp_connect_pkey(struct dp_fixture *f, struct ib_qp *qp, u32 dest,
		    int access, u8 rnr_retry, u16 pkey_index);
int dp_connect_lid(struct ib_qp *qp, u16 dlid, u32 dest, int access,
		   u8 rnr_retry, u16 pkey_index);
struct dp_fixture *dp_fixture_type(struct kunit *test, enum ib_qp_type type,
				   int b_access, u8 rnr_retry);
void dp_poll_one(struct kunit *test, struct dp_fixture *f, struct ib_qp *qp,
		 struct ib_wc *wc);
int dp_post_recv(struct ib_qp *qp, u64 wr_id, u64 addr, u32 len, u32 lkey);
int dp_post_srq_recv(struct ib_srq *srq, u64 wr_id, u64 addr, u32 len,
		     u32 lkey);
int dp_post(struct ib_qp *qp, struct ib_send_wr *wr, u64 addr, u32 len,
	    u32 lkey);
int dp_post_irqs_off(struct ib_qp *qp, struct ib_send_wr *wr, u64 addr,
		     u32 len, u32 lkey, int *cpu);
int dp_reg(struct kunit *test, struct dp_fixture *f, struct ib_qp *qp,
	   struct ib_mr *mr, struct dp_buf *b, size_t off, size_t len,
	   int access, bool signaled);
void dp_ring_attach(struct kunit *test, struct ib_qp *ibqp);
struct rsim_uswqe *dp_ring_slot(struct ib_qp *ibqp, u32 i);
struct rsim_uswqe *dp_ring_slot_fill(struct ib_qp *ibqp, u32 i,
				     enum ib_wr_opcode opcode, u64 wr_id,
				     u64 addr, u32 len, u32 lkey);
bool dp_ring_publish(struct ib_qp *ibqp, u32 prod);
int dp_ring(struct ib_qp *ibqp, u32 prod);

/**
 * dp_fixture() - the default fixture: RC, both QPs with DP_ACCESS,
 * rnr_retry 7 (wait for a receive WR for ever)
 * @test: the test
 *
 * Return: the fixture (also in @test->priv); aborts the test on failure.
 */
static inline struct dp_fixture *dp_fixture(struct kunit *test)
{
	return dp_fixture_type(test, IB_QPT_RC, DP_ACCESS, 7);
}

/**
 * dp_poll() - poll the fixture's CQ once
 * @f: the fixture
 * @wc: room for @n completions
 * @n: at most this many
 *
 * Return: what ib_poll_cq() returns.
 */
static inline int dp_poll(struct dp_fixture *f, struct ib_wc *wc, int n)
{
	return ib_poll_cq(f->cq, n, wc);
}

/*
 * How long a case waits for completions it expects: only a failing case
 * waits that long, and a loaded host may stall the test kernel for
 * seconds at a time.
 */
#define DP_WAIT_MS	30000

/**
 * dp_wait() - poll @cq until @n completions arrived or DP_WAIT_MS passed
 * (work the engine deferred runs on the device's worker)
 * @cq: the CQ
 * @wc: room for @n completions
 * @n: how many to wait for
 *
 * Return: the completions polled.
 */
static inline int dp_wait(struct ib_cq *cq, struct ib_wc *wc, int n)
{
	return rsim_kunit_cq_wait(cq, wc, n, DP_WAIT_MS);
}

#endif /* RDMASIM_KUNIT_DP_HELPERS_H */
