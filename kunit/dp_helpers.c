// SPDX-License-Identifier: GPL-2.0-only
/*
 * The data-path suites' fixture: two QPs of the shared device connected
 * to each other through the loopback data path, buffers mapped with the
 * DMA API, and the posts, polls and fast registrations the suites of
 * dp_kunit.c, atomic_kunit.c, srq_kunit.c, ud_kunit.c, dmah_dp_kunit.c
 * and stress_kunit.c share.
 */

#include <linux/log2.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include <rdmasim/rdmasim-abi.h>

#include "dp_helpers.h"

/**
 * dp_fill() - fill a buffer a page at a time
 * @va: the buffer
 * @len: its length
 * @fill: the byte
 *
 * A single multi-megabyte memset is a sparse warning.
 */
void dp_fill(u8 *va, size_t len, u8 fill)
{
	size_t off;

	for (off = 0; off < len; off += PAGE_SIZE)
		memset(va + off, fill, min_t(size_t, PAGE_SIZE, len - off));
}

static void dp_buf_free(void *arg)
{
	struct dp_buf *b = arg;

	ib_dma_unmap_single(b->dev, b->dma, b->len, DMA_BIDIRECTIONAL);
	kfree(b->va);
}

/**
 * dp_buf_init() - allocate a buffer, fill it and map it for the device
 * @test: the test
 * @f: the fixture (its device)
 * @b: the buffer to set up
 * @len: its length
 * @fill: the byte it is filled with
 *
 * The buffer is unmapped and freed when the test ends; the test is
 * aborted if it cannot be allocated or mapped.
 */
void dp_buf_init(struct kunit *test, struct dp_fixture *f, struct dp_buf *b,
		 size_t len, u8 fill)
{
	int err;

	b->dev = &f->rsim->ibdev;
	b->len = len;
	b->va = kmalloc(len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, b->va);
	dp_fill(b->va, len, fill);
	b->dma = ib_dma_map_single(b->dev, b->va, len, DMA_BIDIRECTIONAL);
	err = ib_dma_mapping_error(b->dev, b->dma);
	if (err)
		kfree(b->va);
	KUNIT_ASSERT_EQ(test, err, 0);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, dp_buf_free,
							   b));
}

/**
 * dp_cpu() - let the CPU look at what the device wrote
 * @f: the fixture
 * @b: one of its buffers
 *
 * Return: @b's CPU address, synced for the CPU.
 */
u8 *dp_cpu(struct dp_fixture *f, struct dp_buf *b)
{
	ib_dma_sync_single_for_cpu(&f->rsim->ibdev, b->dma, b->len,
				   DMA_BIDIRECTIONAL);
	return b->va;
}

/**
 * dp_qp_destroy() - the KUnit action that destroys a QP of dp_qp()
 * @qp: the QP
 *
 * A case that destroys such a QP early passes this function to
 * kunit_release_action().
 */
void dp_qp_destroy(void *qp)
{
	ib_destroy_qp(qp);
}

/**
 * dp_qp() - create a QP on the fixture's CQ, destroyed when the test ends
 * @test: the test
 * @f: the fixture
 * @type: the QP type
 * @pd: its PD
 *
 * 16 send and receive WRs of 4 SGEs, 64 bytes of inline data; WRs
 * signaled on request.
 *
 * Return: the QP, in RESET; aborts the test on failure.
 */
struct ib_qp *dp_qp(struct kunit *test, struct dp_fixture *f,
		    enum ib_qp_type type, struct ib_pd *pd)
{
	struct ib_qp_init_attr a = {
		.qp_type = type,
		.send_cq = f->cq,
		.recv_cq = f->cq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 4, .max_recv_sge = 4,
			 .max_inline_data = 64 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.port_num = 1,
	};
	struct ib_qp *qp = ib_create_qp(pd, &a);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, qp);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, dp_qp_destroy,
							   qp));
	return qp;
}

/**
 * dp_connect() - take an RC or UC QP from RESET through INIT and RTR to
 * RTS, connected to QP @dest on this port
 * @f: the fixture (the port's LID)
 * @qp: the QP
 * @dest: the QP number it sends to
 * @access: its remote access flags (what the peer may do to it)
 * @rnr_retry: its RNR retry count (7: for ever)
 *
 * Return: 0, or the errno of the ib_modify_qp() that failed.
 */
int dp_connect(struct dp_fixture *f, struct ib_qp *qp, u32 dest, int access,
	       u8 rnr_retry)
{
	return dp_connect_pkey(f, qp, dest, access, rnr_retry, 0);
}

/**
 * dp_connect_pkey() - dp_connect() with the QP's P_Key index
 * @f: the fixture (the port's LID)
 * @qp: the QP
 * @dest: the QP number it sends to
 * @access: its remote access flags
 * @rnr_retry: its RNR retry count (7: for ever)
 * @pkey_index: its P_Key index (the port's table: 0 is 0xffff)
 *
 * Return: 0, or the errno of the ib_modify_qp() that failed.
 */
int dp_connect_pkey(struct dp_fixture *f, struct ib_qp *qp, u32 dest,
		    int access, u8 rnr_retry, u16 pkey_index)
{
	return dp_connect_lid(qp, f->rsim->port.lid, dest, access, rnr_retry,
			      pkey_index);
}

/**
 * dp_connect_lid() - dp_connect_pkey() to QP @dest at the port with LID
 * @dlid, this device's or another's (the subnet)
 * @qp: the QP
 * @dlid: the destination port's LID
 * @dest: the QP number it sends to
 * @access: its remote access flags
 * @rnr_retry: its RNR retry count
 * @pkey_index: its P_Key index
 *
 * Return: 0, or the errno of the ib_modify_qp() that failed.
 */
int dp_connect_lid(struct ib_qp *qp, u16 dlid, u32 dest, int access,
		   u8 rnr_retry, u16 pkey_index)
{
	bool rc = qp->qp_type == IB_QPT_RC;
	struct ib_qp_attr qa = {
		.qp_state = IB_QPS_INIT,
		.pkey_index = pkey_index,
		.port_num = 1,
		.qp_access_flags = access,
	};
	int err;

	err = ib_modify_qp(qp, &qa, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (err)
		return err;
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IB_QPS_RTR;
	qa.ah_attr.type = RDMA_AH_ATTR_TYPE_IB;
	rdma_ah_set_port_num(&qa.ah_attr, 1);
	rdma_ah_set_dlid(&qa.ah_attr, dlid);
	qa.path_mtu = IB_MTU_4096;
	qa.dest_qp_num = dest;
	qa.max_dest_rd_atomic = 4;
	qa.min_rnr_timer = 1;
	err = ib_modify_qp(qp, &qa, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   (rc ? IB_QP_MAX_DEST_RD_ATOMIC |
				 IB_QP_MIN_RNR_TIMER : 0));
	if (err)
		return err;
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IB_QPS_RTS;
	qa.timeout = 14;
	qa.retry_cnt = 7;
	qa.rnr_retry = rnr_retry;
	qa.max_rd_atomic = 4;
	return ib_modify_qp(qp, &qa, IB_QP_STATE | IB_QP_SQ_PSN |
			    (rc ? IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
				  IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC :
				  0));
}

/**
 * dp_fixture_type() - the fixture: a PD, a CQ of 64 entries, two QPs of
 * @type connected to each other, a buffer of DP_BUF bytes on each side
 * @test: the test
 * @type: IB_QPT_RC or IB_QPT_UC
 * @b_access: the responder's remote access flags (the requester has
 *	      DP_ACCESS)
 * @rnr_retry: both QPs' RNR retry count
 *
 * The source buffer is filled with 0x5a, the destination with zeroes.
 *
 * Return: the fixture (also in @test->priv); aborts the test on failure.
 */
struct dp_fixture *dp_fixture_type(struct kunit *test, enum ib_qp_type type,
				   int b_access, u8 rnr_retry)
{
	struct dp_fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, f);
	f->rsim = rsim_kunit_shared_dev(test);
	f->pd = rsim_kunit_pd(test, f->rsim);
	f->cq = rsim_kunit_cq(test, f->rsim, 64);
	f->a = dp_qp(test, f, type, f->pd);
	f->b = dp_qp(test, f, type, f->pd);
	KUNIT_ASSERT_EQ(test, dp_connect(f, f->a, f->b->qp_num, DP_ACCESS,
					 rnr_retry), 0);
	KUNIT_ASSERT_EQ(test, dp_connect(f, f->b, f->a->qp_num, b_access,
					 rnr_retry), 0);
	dp_buf_init(test, f, &f->src, DP_BUF, 0x5a);
	dp_buf_init(test, f, &f->dst, DP_BUF, 0x00);
	test->priv = f;
	return f;
}

/**
 * dp_poll_one() - poll exactly one completion, for @qp
 * @test: the test
 * @f: the fixture (its CQ)
 * @qp: the QP the completion must be for
 * @wc: where it goes
 *
 * Waits for it (DP_WAIT_MS at most: a retry a wake-up or a timer started
 * runs on the worker); aborts the test if there is none.
 */
void dp_poll_one(struct kunit *test, struct dp_fixture *f, struct ib_qp *qp,
		 struct ib_wc *wc)
{
	KUNIT_ASSERT_EQ(test, dp_wait(f->cq, wc, 1), 1);
	KUNIT_EXPECT_PTR_EQ(test, wc->qp, qp);
}

/**
 * dp_post_recv() - post one receive WR of one SGE
 * @qp: the QP
 * @wr_id: the WR's id
 * @addr: the SGE's address
 * @len: its length
 * @lkey: its lkey
 *
 * Return: what ib_post_recv() returns.
 */
int dp_post_recv(struct ib_qp *qp, u64 wr_id, u64 addr, u32 len, u32 lkey)
{
	struct ib_sge sge = { .addr = addr, .length = len, .lkey = lkey };
	struct ib_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				 .num_sge = 1 };

	return ib_post_recv(qp, &wr, NULL);
}

/**
 * dp_post_srq_recv() - post one receive WR of one SGE to an SRQ
 * @srq: the SRQ
 * @wr_id: the WR's id
 * @addr: the SGE's address
 * @len: its length
 * @lkey: its lkey
 *
 * Return: what ib_post_srq_recv() returns.
 */
int dp_post_srq_recv(struct ib_srq *srq, u64 wr_id, u64 addr, u32 len,
		     u32 lkey)
{
	struct ib_sge sge = { .addr = addr, .length = len, .lkey = lkey };
	struct ib_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				 .num_sge = 1 };

	return ib_post_srq_recv(srq, &wr, NULL);
}

/**
 * dp_post() - post one send WR with one SGE
 * @qp: the QP
 * @wr: the WR; its SGE list is set here (and points at this function's
 *	stack, so it is gone once this returns)
 * @addr: the SGE's address
 * @len: its length
 * @lkey: its lkey
 *
 * Return: what ib_post_send() returns.
 */
int dp_post(struct ib_qp *qp, struct ib_send_wr *wr, u64 addr, u32 len,
	    u32 lkey)
{
	struct ib_sge sge = { .addr = addr, .length = len, .lkey = lkey };

	wr->sg_list = &sge;
	wr->num_sge = 1;
	return ib_post_send(qp, wr, NULL);
}

/**
 * dp_post_irqs_off() - dp_post() with interrupts off (the engine must
 *	defer the WR to its worker)
 * @qp: the QP
 * @wr: the WR; its SGE list is set here
 * @addr: DMA address of the one SGE
 * @len: its length
 * @lkey: its lkey
 * @cpu: where to put the CPU it was posted on, or NULL
 *
 * Return: what ib_post_send() returns.
 */
int dp_post_irqs_off(struct ib_qp *qp, struct ib_send_wr *wr, u64 addr,
		     u32 len, u32 lkey, int *cpu)
{
	unsigned long flags;
	int err;

	local_irq_save(flags);
	if (cpu)
		*cpu = smp_processor_id();
	err = dp_post(qp, wr, addr, len, lkey);
	local_irq_restore(flags);
	return err;
}

/**
 * dp_reg() - map part of a buffer into an MR and post its REG_MR
 * @test: the test (the mapping must take the one entry)
 * @f: the fixture
 * @qp: the QP that posts the REG_MR
 * @mr: the MR (IB_MR_TYPE_MEM_REG); its key's variant is stepped first
 * @b: the buffer
 * @off: where in @b the MR starts
 * @len: its length
 * @access: the registration's access flags
 * @signaled: the REG_MR (wr_id 77) is signaled
 *
 * Return: what ib_post_send() returns.
 */
int dp_reg(struct kunit *test, struct dp_fixture *f, struct ib_qp *qp,
	   struct ib_mr *mr, struct dp_buf *b, size_t off, size_t len,
	   int access, bool signaled)
{
	struct ib_reg_wr wr = {
		.wr.opcode = IB_WR_REG_MR,
		.wr.wr_id = 77,
		.wr.send_flags = signaled ? IB_SEND_SIGNALED : 0,
		.mr = mr,
		.access = access,
	};
	struct scatterlist sg;
	int n;

	sg_init_table(&sg, 1);
	sg_dma_address(&sg) = b->dma + off;
	sg_dma_len(&sg) = len;
	n = ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, n, 1);
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	wr.key = mr->rkey;
	return ib_post_send(qp, &wr.wr, NULL);
}

/*
 * The ring leaves the QP once nobody executes its send queue: a worker
 * still queued for it would read the ring.
 */
static void dp_ring_detach(void *p)
{
	struct rsim_qp *qp = p;

	spin_lock_irq(&qp->lock);
	qp->stopping = true;
	spin_unlock_irq(&qp->lock);
	rsim_dp_stop(qp);
	spin_lock_irq(&qp->lock);
	to_rsim_dev(qp->ibqp.device)->usq_test_hook = NULL;
	kfree(qp->sq.uslot);
	qp->sq.uslot = NULL;
	qp->sq.umap = NULL;
	qp->owner = RSIM_SQ_IDLE;
	qp->stopping = false;
	spin_unlock_irq(&qp->lock);
}

/**
 * dp_ring_attach() - a send ring for a kernel QP, as usq.c makes one
 * @test: the case
 * @ibqp: the QP, nothing posted
 *
 * Kernel memory in place of the process's mapping: a case writes slots
 * and rings the doorbell as the provider does (dp_ring()).
 */
void dp_ring_attach(struct kunit *test, struct ib_qp *ibqp)
{
	struct rsim_qp *qp = to_rsim_qp(ibqp);
	struct rsim_wq *sq = &qp->sq;
	size_t stride = ALIGN(sizeof(struct rsim_uswqe) +
			      max_t(size_t, qp->max_inline,
				    (size_t)sq->max_sge *
				    sizeof(struct rsim_usge)), 16);
	struct rsim_umap *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	void *uslot;

	KUNIT_ASSERT_NOT_NULL(test, m);
	KUNIT_ASSERT_EQ(test, sq->count, 0);
	m->len = RSIM_URING_SLOTS +
		 (size_t)roundup_pow_of_two(sq->max_wr) * stride;
	m->vaddr = kunit_kzalloc(test, m->len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m->vaddr);
	uslot = kmalloc(stride, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, uslot);
	spin_lock_irq(&qp->lock);
	sq->nslots = roundup_pow_of_two(sq->max_wr);
	sq->ustride = stride;
	sq->ucons = 0;
	sq->umap = m;
	sq->uslot = uslot;
	/* idle: the first post rings */
	sq->db = false;
	rsim_usq_set_db(sq, true);
	spin_unlock_irq(&qp->lock);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, dp_ring_detach,
							qp), 0);
}

/**
 * dp_ring_slot() - slot @i of a QP's send ring (dp_ring_attach())
 * @ibqp: the QP
 * @i: the index (free-running)
 *
 * Return: the slot.
 */
struct rsim_uswqe *dp_ring_slot(struct ib_qp *ibqp, u32 i)
{
	struct rsim_wq *sq = &to_rsim_qp(ibqp)->sq;

	return sq->umap->vaddr + RSIM_URING_SLOTS +
	       (size_t)(i & (sq->nslots - 1)) * sq->ustride;
}

/**
 * dp_ring_slot_fill() - write slot @i of a send ring: a signaled WR with
 * one SGE
 * @ibqp: the QP (dp_ring_attach())
 * @i: the slot's index
 * @opcode: the WR's opcode (the RDMA fields left zero)
 * @wr_id: its wr_id
 * @addr: the SGE's DMA address
 * @len: its length
 * @lkey: its lkey
 *
 * Return: the slot, for the caller's other fields.
 */
struct rsim_uswqe *dp_ring_slot_fill(struct ib_qp *ibqp, u32 i,
				     enum ib_wr_opcode opcode, u64 wr_id,
				     u64 addr, u32 len, u32 lkey)
{
	struct rsim_uswqe *s = dp_ring_slot(ibqp, i);

	memset(s, 0, sizeof(*s) + sizeof(s->sge[0]));
	s->wr_id = wr_id;
	s->opcode = opcode;
	s->send_flags = IB_SEND_SIGNALED;
	s->num_sge = 1;
	s->sge[0].addr = addr;
	s->sge[0].length = len;
	s->sge[0].lkey = lkey;
	return s;
}

/**
 * dp_ring_publish() - publish a send ring's slots, as the provider does
 * @ibqp: the QP (dp_ring_attach())
 * @prod: the producer index: the slots before it are written
 *
 * Return: whether the ring asks for a doorbell now.
 */
bool dp_ring_publish(struct ib_qp *ibqp, u32 prod)
{
	struct rsim_uring_hdr *h = to_rsim_qp(ibqp)->sq.umap->vaddr;

	/* the slots before the index: the provider's release store */
	smp_store_release(&h->prod, prod);
	/* the index before the flag: pairs with the kernel's idle check */
	smp_mb();
	return READ_ONCE(h->flags) & RSIM_URING_F_DOORBELL;
}

/**
 * dp_ring() - publish up to @prod and ring the doorbell, flag or not
 * @ibqp: the QP (dp_ring_attach())
 * @prod: the producer index
 *
 * Return: the doorbell's (post_send with no WR).
 */
int dp_ring(struct ib_qp *ibqp, u32 prod)
{
	dp_ring_publish(ibqp, prod);
	return ib_post_send(ibqp, NULL, NULL);
}
