// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: send queues a process maps (the SQs of its QPs).
 *
 * A context whose provider asked for RSIM_UCTX_MAP_SQ gets, for each
 * QP with a send queue, a ring (umap.c) of struct rsim_uswqe slots
 * (rdmasim-abi.h) that the provider fills and publishes by its producer
 * index. Slot i of the ring is the send queue's WR i; the ring's consumer
 * index, a mirror the kernel writes, counts the WRs completed
 * (&rsim_wq.ucons), so the process reuses a slot once its WR is done, as
 * with a hardware queue.
 *
 * Doorbells, as siw's: the doorbell is the post_send command with no WR
 * (rxe's provider rings that one after every post), and it is needed
 * only while nobody executes the queue, which the ring's flags say
 * (RSIM_URING_F_DOORBELL, set while the queue's owner is IDLE, dp.c).
 * The doorbell claims the queue. Its owner, the doorbell's context or
 * the worker, takes what is published whenever the kernel's queue runs
 * empty (rsim_qp_pull_sq()), and before it lets the queue go it sets the
 * flag, then (a full barrier) reads the producer index again: a post the
 * owner did not see finds the flag set and rings. A busy queue therefore
 * takes a stream of posts with no system call at all. Only the owner
 * takes from the ring, so takes need no lock of their own.
 *
 * Nothing in the ring is trusted. The owner reads the producer index
 * once per take, copies each new slot once into kernel memory (the QP's
 * @uslot), checks the copy with the post_send command's rules
 * (rsim_usq_wr()) and queues it in the kernel's own send queue, which the
 * engine executes as any QP's; what the process writes into a slot
 * afterwards changes nothing. A UD WR names its AH by the number
 * create_ah answered; the kernel looks it up and refuses one of another
 * PD. A WR that breaks a rule is queued all the same, marked
 * (&rsim_send_wqe.bad): in its turn it completes with
 * IB_WC_LOC_QP_OP_ERR and puts the QP in the error state, so that
 * completions keep the order of the WRs. A producer index further ahead
 * than the queue has room for puts the QP in the error state at once,
 * with IB_EVENT_QP_FATAL, and is not looked at again: no doorbell starts
 * a take of it.
 */

#include <kunit/visibility.h>
#include <linux/log2.h>
#include <rdma/uverbs_ioctl.h>
#include <rdmasim/rdmasim-abi.h>

#include "rdmasim.h"

static struct rsim_uring_hdr *rsim_usq_hdr(struct rsim_wq *sq)
{
	return sq->umap->vaddr;
}

/**
 * rsim_usq_new() - a mapped ring for a QP's send queue
 * @rsim: the device (its allocation fault point)
 * @uctx: the process's context
 * @sq: the send queue, its kernel ring allocated
 * @max_inline: the QP's inline data limit
 * @resp: its part of the driver response
 *
 * Context: process; sleeps.
 * Return: 0 or a negative errno.
 */
int rsim_usq_new(struct rsim_dev *rsim, struct ib_ucontext *uctx,
		 struct rsim_wq *sq, u32 max_inline, struct rsim_uwq_resp *resp)
{
	size_t stride = ALIGN(sizeof(struct rsim_uswqe) +
			      max_t(size_t, max_inline,
				    (size_t)sq->max_sge *
				    sizeof(struct rsim_usge)), 16);
	struct rsim_umap *m;

	if (!sq->max_wr)
		return 0;
	if (rsim_should_fail(rsim, RSIM_FAULT_ALLOC))
		return -ENOMEM;
	sq->nslots = roundup_pow_of_two(sq->max_wr);
	sq->ustride = stride;
	m = rsim_umap_ring_new(uctx, RSIM_URING_SLOTS +
				     (size_t)sq->nslots * stride);
	if (IS_ERR(m))
		return PTR_ERR(m);
	sq->uslot = kmalloc(stride, GFP_KERNEL_ACCOUNT);
	if (!sq->uslot) {
		rdma_user_mmap_entry_remove(&m->entry);
		return -ENOMEM;
	}
	sq->umap = m;
	/* nobody executes the queue yet: the first post rings */
	sq->db = false;
	rsim_usq_set_db(sq, true);
	resp->mmap_offset = rsim_umap_offset(m);
	resp->mmap_len = m->len;
	resp->nslots = sq->nslots;
	resp->max_wr = sq->max_wr;
	resp->stride = stride;
	atomic64_inc(&rsim->sq_rings);
	return 0;
}

/**
 * rsim_usq_set_db() - ask for doorbells, or stop asking
 * @sq: a mapped send queue; its QP's lock held
 * @db: RSIM_URING_F_DOORBELL: nobody executes the queue
 *
 * The flags' cache line is written only when the flag changes. Setting
 * it, the caller then (a full barrier) looks at the producer index again
 * (rsim_usq_published()).
 *
 * Context: any; does not sleep.
 */
void rsim_usq_set_db(struct rsim_wq *sq, bool db)
{
	if (sq->db == db)
		return;
	sq->db = db;
	WRITE_ONCE(rsim_usq_hdr(sq)->flags, db ? RSIM_URING_F_DOORBELL : 0);
}
EXPORT_SYMBOL_IF_KUNIT(rsim_usq_set_db);

/**
 * rsim_usq_published() - WRs in the ring for a take
 * @sq: a mapped send queue; its QP's lock held
 * @room: set if they fit in the queue's room; if not, the process's index
 *	is out of range (a take puts the QP in the error state)
 *
 * The process's index, read once, against the slot the next take starts
 * at (the WRs completed, then those in the kernel's queue).
 *
 * Context: any; does not sleep.
 * Return: how many WRs the index is past that slot (0: none).
 */
u32 rsim_usq_published(struct rsim_wq *sq, bool *room)
{
	u32 n = READ_ONCE(rsim_usq_hdr(sq)->prod) - (sq->ucons + sq->count);

	*room = n <= sq->max_wr - sq->count;
	return n;
}

/**
 * rsim_usq_popped() - a WR of a mapped send queue is done
 * @sq: the send queue; its QP's lock held
 *
 * Its slot is the process's again.
 *
 * Context: any; does not sleep.
 */
void rsim_usq_popped(struct rsim_wq *sq)
{
	sq->ucons++;
	/* the slot is given back before the WR's completion is pushed */
	smp_store_release(&rsim_usq_hdr(sq)->cons, sq->ucons);
}

/**
 * rsim_usq_reset() - discard what is published (a transition to RESET)
 * @sq: the send queue, emptied; its QP's lock held
 *
 * Context: any; does not sleep.
 */
void rsim_usq_reset(struct rsim_wq *sq)
{
	sq->ucons = READ_ONCE(rsim_usq_hdr(sq)->prod);
	WRITE_ONCE(rsim_usq_hdr(sq)->cons, sq->ucons);
	rsim_usq_set_db(sq, true);
}

/**
 * rsim_usq_prod() - the process's producer index, read once
 * @sq: the send queue
 *
 * Context: any.
 * Return: the index; the slots before it are visible.
 */
u32 rsim_usq_prod(struct rsim_wq *sq)
{
	/* the slots before the index: the provider's release store */
	return smp_load_acquire(&rsim_usq_hdr(sq)->prod);
}

/*
 * IBV_WR_* a ring may carry: the post_send command's, and those that
 * command cannot carry: the memory window operations (mw.c) and, where
 * the kernel has them, FLUSH and ATOMIC_WRITE
 */
static bool rsim_usq_opcode_ok(u32 op)
{
	if (op == RSIM_WR_FLUSH || op == RSIM_WR_ATOMIC_WRITE)
		return RSIM_PLACEMENT;
	switch (op) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_RDMA_READ:
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
	case IB_WR_BIND_MW:
		return true;
	default:
		return false;
	}
}

/**
 * rsim_usq_opcode_or_send() - the opcode a bad WR's completion reports
 * @op: the opcode the slot had
 *
 * Context: any.
 * Return: @op if a ring may carry it, else IB_WR_SEND.
 */
enum ib_wr_opcode rsim_usq_opcode_or_send(u32 op)
{
	return rsim_usq_opcode_ok(op) ? op : IB_WR_SEND;
}

/**
 * rsim_usq_wr() - copy slot @i of a mapped send queue and make it a WR
 * @qp: the QP; the caller owns its send queue (dp.c), with no lock held
 * @i: the slot's index (free-running)
 * @w: where to build the WR (its sg_list points into the copy)
 * @inl: the inline data, if the WR is inline (into the copy)
 *
 * The slot is read once, into @qp->sq.uslot; only the copy is looked at.
 * The checks here are the ring's own (opcode, reserved fields, sizes);
 * the caller applies the post_send command's after (a bind's, its own).
 * A UD WR's AH is not looked up here.
 *
 * Context: process.
 * Return: 0, or -EINVAL with @w->wr.wr_id set (the WR completes in error).
 */
int rsim_usq_wr(struct rsim_qp *qp, u32 i, struct rsim_usq_ib_wr *w,
		const u8 **inl)
{
	struct rsim_wq *sq = &qp->sq;
	struct rsim_uswqe *s = sq->uslot;
	bool inline_wr;

	void *slot = sq->umap->vaddr + RSIM_URING_SLOTS +
		     (size_t)(i & (sq->nslots - 1)) * sq->ustride;

	memcpy(s, slot, sq->ustride);
#if IS_ENABLED(CONFIG_KUNIT)
	/* a process writing the slot again, now: the copy is what counts */
	if (to_rsim_dev(qp->ibqp.device)->usq_test_hook)
		to_rsim_dev(qp->ibqp.device)->usq_test_hook(qp, slot);
#endif
	memset(w, 0, sizeof(*w));
	w->wr.wr_id = s->wr_id;
	w->wr.opcode = s->opcode;
	w->wr.send_flags = s->send_flags;
	*inl = NULL;
	inline_wr = s->send_flags & IB_SEND_INLINE;
	/* an XRC SRQ's number: an XRC INI QP's WRs name one, no other's */
	if (s->xrc_srqn && qp->ibqp.qp_type != IB_QPT_XRC_INI)
		return -EINVAL;
	w->xrc_srqn = s->xrc_srqn;
	if (!rsim_usq_opcode_ok(s->opcode) ||
	    (inline_wr ? s->num_sge || s->inline_len > qp->max_inline :
			 s->inline_len || s->num_sge > sq->max_sge))
		return -EINVAL;
	switch (s->opcode) {
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		w->wr.ex.imm_data = (__force __be32)s->ex;
		break;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		w->wr.ex.invalidate_rkey = s->ex;
		break;
	default:
		if (s->ex)
			return -EINVAL;
	}
	switch (s->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		if (s->wr.rdma.reserved)
			return -EINVAL;
		w->rdma.remote_addr = s->wr.rdma.remote_addr;
		w->rdma.rkey = s->wr.rdma.rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		if (s->wr.atomic.reserved)
			return -EINVAL;
		w->atomic.remote_addr = s->wr.atomic.remote_addr;
		w->atomic.compare_add = s->wr.atomic.compare_add;
		w->atomic.swap = s->wr.atomic.swap;
		w->atomic.rkey = s->wr.atomic.rkey;
		break;
	case IB_WR_BIND_MW:
		if (s->num_sge || s->inline_len || inline_wr)
			return -EINVAL;
		w->bind = (struct rsim_mw_bind){
			.mw_rkey = s->wr.bind.mw_rkey,
			.mr_lkey = s->wr.bind.mr_lkey,
			.rkey = s->wr.bind.rkey,
			.access = s->wr.bind.access,
			.addr = s->wr.bind.addr,
			.length = s->wr.bind.length,
		};
		break;
	case IB_WR_LOCAL_INV:
		if (s->num_sge || s->inline_len || inline_wr)
			return -EINVAL;
		break;
	case RSIM_WR_FLUSH:
		if (s->wr.flush.reserved)
			return -EINVAL;
		w->place = (struct rsim_placement_wr){
			.remote_addr = s->wr.flush.remote_addr,
			.rkey = s->wr.flush.rkey,
			.length = s->wr.flush.length,
			.type = s->wr.flush.type,
			.level = s->wr.flush.level,
		};
		break;
	case RSIM_WR_ATOMIC_WRITE:
		if (s->wr.atomic_write.reserved)
			return -EINVAL;
		w->place = (struct rsim_placement_wr){
			.remote_addr = s->wr.atomic_write.remote_addr,
			.rkey = s->wr.atomic_write.rkey,
			.value = s->wr.atomic_write.value,
		};
		break;
	default:
		if (rsim_qp_is_ud(qp)) {
			if (s->wr.ud.reserved)
				return -EINVAL;
			w->ud.remote_qpn = s->wr.ud.remote_qpn;
			w->ud.remote_qkey = s->wr.ud.remote_qkey;
		}
		break;
	}
	/* the SGEs (struct ib_sge's layout), or the inline bytes */
	if (inline_wr) {
		w->sge.length = s->inline_len;
		w->wr.sg_list = &w->sge;
		w->wr.num_sge = s->inline_len ? 1 : 0;
		*inl = (const u8 *)s->sge;
	} else {
		w->wr.sg_list = (struct ib_sge *)s->sge;
		w->wr.num_sge = s->num_sge;
	}
	return 0;
}

/**
 * rsim_usq_ah_num() - the AH number of the copied slot (UD)
 * @qp: the QP, after rsim_usq_wr()
 *
 * Context: any.
 * Return: the number its WR names.
 */
u32 rsim_usq_ah_num(struct rsim_qp *qp)
{
	return ((struct rsim_uswqe *)qp->sq.uslot)->wr.ud.ah_num;
}
