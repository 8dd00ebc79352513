// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: receive queues a process maps (the RQs of its QPs, its SRQs).
 *
 * A context whose provider asked for RSIM_UCTX_MAP_RQ gets, for each QP
 * with a receive queue of its own and for each SRQ, a ring (umap.c) of
 * struct rsim_urwqe slots (rdmasim-abi.h) that the provider fills and
 * publishes by its producer index: posting a receive is no system call.
 *
 * Nothing in the ring is trusted. The kernel owns the consumer index
 * (&rsim_wq.head; the ring's cons is a mirror it writes) and reads the
 * process's producer index once per take. It copies the slot at its
 * index, once, into the QP's scratch WR (the copy rsim_dp_take_recv()
 * makes of a kernel queue's WR too) and checks only the copy, so what
 * the process writes into the slot afterwards changes nothing; the keys
 * and ranges of the copied SGEs are checked when the message lands, as
 * for any receive WR. A producer index more than max_wr ahead of the
 * kernel's, or a copied WR with more SGEs than the queue's or nonzero
 * reserved bytes, is the process's own doing: its QP enters the error
 * state (dp.c), and nothing else is touched.
 *
 * Doorbells (the post_recv or post_srq_recv command with no WR) are
 * needed only when the kernel asks for one with RSIM_URING_F_DOORBELL in
 * the ring's flags:
 *
 * - an RC requester met the queue empty and waits (RNR) until the
 *   doorbell wakes it, or its RNR timer fires;
 * - the QP is in the error state: the doorbell flushes what was posted.
 *
 * The kernel sets the flag, then (a full barrier) reads the producer
 * index again; the provider stores the index, then (a full barrier)
 * reads the flag: one of the two sees the other's store, so a post that
 * the requester did not see rings the doorbell.
 */

#include <linux/log2.h>
#include <rdma/uverbs_ioctl.h>
#include <rdmasim/rdmasim-abi.h>

#include "rdmasim.h"

/* the copy of a slot's SGEs is a copy of struct ib_sge */
static_assert(sizeof(struct rsim_usge) == sizeof(struct ib_sge));
static_assert(offsetof(struct rsim_usge, addr) ==
	      offsetof(struct ib_sge, addr));
static_assert(offsetof(struct rsim_usge, length) ==
	      offsetof(struct ib_sge, length));
static_assert(offsetof(struct rsim_usge, lkey) ==
	      offsetof(struct ib_sge, lkey));

static struct rsim_uring_hdr *rsim_urq_hdr(struct rsim_wq *rq)
{
	return rq->umap->vaddr;
}

static struct rsim_urwqe *rsim_urq_slot(struct rsim_wq *rq, u32 i)
{
	return rq->umap->vaddr + RSIM_URING_SLOTS +
	       (size_t)(i & (rq->nslots - 1)) * rq->wqe_size;
}

/**
 * rsim_urq_new() - a mapped ring for a receive queue
 * @rsim: the device (its allocation fault point)
 * @uctx: the process's context
 * @rq: the queue, zeroed
 * @max_wr: WRs posted at once, at most (0: no ring)
 * @max_sge: SGEs per WR
 * @resp: its part of the driver response
 *
 * The ring has max_wr rounded up to a power of two slots, charged to the
 * process (umap.c).
 *
 * Context: process; sleeps.
 * Return: 0 or a negative errno.
 */
int rsim_urq_new(struct rsim_dev *rsim, struct ib_ucontext *uctx,
		 struct rsim_wq *rq, u32 max_wr, u32 max_sge,
		 struct rsim_uwq_resp *resp)
{
	struct rsim_umap *m;

	rq->max_wr = max_wr;
	rq->max_sge = max_sge;
	rq->wqe_size = sizeof(struct rsim_urwqe) +
		       (size_t)max_sge * sizeof(struct rsim_usge);
	if (!max_wr)
		return 0;
	if (rsim_should_fail(rsim, RSIM_FAULT_ALLOC))
		return -ENOMEM;
	rq->nslots = roundup_pow_of_two(max_wr);
	m = rsim_umap_ring_new(uctx, RSIM_URING_SLOTS +
				     (size_t)rq->nslots * rq->wqe_size);
	if (IS_ERR(m))
		return PTR_ERR(m);
	rq->umap = m;
	resp->mmap_offset = rsim_umap_offset(m);
	resp->mmap_len = m->len;
	resp->nslots = rq->nslots;
	resp->max_wr = max_wr;
	resp->stride = rq->wqe_size;
	atomic64_inc(&rsim->rq_rings);
	return 0;
}

/**
 * rsim_urq_free() - the queue's ring leaves its context
 * @rq: the queue, which nobody takes from any more
 *
 * Its pages stay while the process maps them (umap.c).
 *
 * Context: process.
 */
void rsim_urq_free(struct rsim_wq *rq)
{
	if (rq->umap)
		rdma_user_mmap_entry_remove(&rq->umap->entry);
	rq->umap = NULL;
}

static void rsim_urq_set_db(struct rsim_wq *rq, bool db)
{
	if (rq->db == db)
		return;
	rq->db = db;
	WRITE_ONCE(rsim_urq_hdr(rq)->flags, db ? RSIM_URING_F_DOORBELL : 0);
}

/* WRs posted past the kernel's index, by the process's index read once */
static u32 rsim_urq_posted(struct rsim_wq *rq)
{
	/* the slots up to it before the index: the provider's release store */
	return smp_load_acquire(&rsim_urq_hdr(rq)->prod) - rq->head;
}

/*
 * The consumer index the process reads: the kernel's, less an SRQ's WRs
 * still held in its ring from before a resize, so that the provider finds
 * the room the kernel does
 */
static void rsim_urq_publish(struct rsim_wq *rq)
{
	/* the slots taken are the process's again */
	smp_store_release(&rsim_urq_hdr(rq)->cons, rq->head - rq->held);
}

/**
 * rsim_urq_count() - WRs posted to a mapped queue, for its limit
 * @rq: the queue; its lock held
 *
 * Context: any; does not sleep.
 * Return: WRs posted past the kernel's index, or 0 if the producer index
 * is out of range.
 */
u32 rsim_urq_count(struct rsim_wq *rq)
{
	u32 n = rsim_urq_posted(rq);

	return n > rq->max_wr - rq->held ? 0 : n;
}

/**
 * rsim_urq_take_slot() - copy the slot at the kernel's index, and move on
 * @rq: a mapped queue with a WR posted there; its lock held
 * @rwqe: where to (room for RSIM_RECV_SGE_CEIL SGEs)
 *
 * The slot is read once, into @rwqe; a malformed WR is taken all the
 * same. The caller publishes the index (rsim_urq_consumed(), or a take).
 *
 * Context: any; does not sleep.
 * Return: 0, or -EBADMSG if it is malformed (@rwqe->num_sge 0).
 */
int rsim_urq_take_slot(struct rsim_wq *rq, struct rsim_recv_wqe *rwqe)
{
	struct rsim_urwqe *slot = rsim_urq_slot(rq, rq->head), w;
	int ret = 0;

	memcpy(&w, slot, sizeof(w));
	rwqe->wr_id = w.wr_id;
	rwqe->num_sge = 0;
	if (w.num_sge > rq->max_sge || w.reserved) {
		ret = -EBADMSG;
	} else {
		memcpy(rwqe->sge, slot->sge, w.num_sge * sizeof(*rwqe->sge));
		rwqe->num_sge = w.num_sge;
	}
	rq->head++;
	return ret;
}

/**
 * rsim_urq_take() - copy the receive WR at the head of a mapped queue
 * @rq: the queue; its lock held (the QP's, or the SRQ's)
 * @rwqe: where to (room for RSIM_RECV_SGE_CEIL SGEs)
 * @wait: the taker is an RC requester that waits if the queue is empty:
 *	ask for a doorbell before concluding that it is
 *
 * The slot is read once, into @rwqe; a malformed WR is taken all the
 * same (it is gone from the queue, and completes in error).
 *
 * Context: any; does not sleep.
 * Return: 0 if a WR was taken; -ENOENT if none is posted; -EBADMSG if
 *	the WR taken is malformed (@rwqe->wr_id is its, @rwqe->num_sge 0);
 *	-EIO if the producer index is out of range (nothing taken).
 */
int rsim_urq_take(struct rsim_wq *rq, struct rsim_recv_wqe *rwqe, bool wait)
{
	u32 n = rsim_urq_posted(rq);
	int ret;

	if (!n && wait) {
		rsim_urq_set_db(rq, true);
		/* the flag before the index: pairs with the provider's post */
		smp_mb();
		n = rsim_urq_posted(rq);
	}
	if (!n)
		return -ENOENT;
	if (n > rq->max_wr - rq->held)
		return -EIO;
	ret = rsim_urq_take_slot(rq, rwqe);
	rq->count = n - 1;
	/* the slot is the process's again once copied */
	rsim_urq_publish(rq);
	return ret;
}

/**
 * rsim_urq_flushable() - WRs a flush of a mapped queue completes
 * @rq: a QP's receive queue, the QP in the error state; its lock held
 *
 * Asks for a doorbell after every post from now on (a post to a QP in
 * the error state completes with a flush error). The caller completes
 * the WRs with rsim_urq_pop_id(), then rsim_urq_consumed().
 *
 * Context: any; does not sleep.
 * Return: WRs posted, or 0 if the producer index is out of range.
 */
u32 rsim_urq_flushable(struct rsim_wq *rq)
{
	u32 n;

	rsim_urq_set_db(rq, true);
	/* the flag before the index: pairs with the provider's post */
	smp_mb();
	n = rsim_urq_posted(rq);
	return n > rq->max_wr ? 0 : n;
}

/**
 * rsim_urq_pop_id() - take the WR at the head of a mapped queue, unread
 * @rq: the queue, with a WR that rsim_urq_flushable() counted; its lock
 *	held
 *
 * Context: any; does not sleep.
 * Return: its wr_id, read once (the process's cookie, returned to it).
 */
u64 rsim_urq_pop_id(struct rsim_wq *rq)
{
	return READ_ONCE(rsim_urq_slot(rq, rq->head++)->wr_id);
}

/**
 * rsim_urq_consumed() - publish the kernel's index after pops
 * @rq: the queue; its lock held
 *
 * Context: any; does not sleep.
 */
void rsim_urq_consumed(struct rsim_wq *rq)
{
	rq->count = 0;
	rsim_urq_publish(rq);
}

/**
 * rsim_urq_reset() - discard what is posted (a transition to RESET)
 * @rq: the queue; its lock held
 *
 * The process's index, read once, becomes the kernel's: the queue is
 * empty, and a provider that goes on from its index finds it so.
 *
 * Context: any; does not sleep.
 */
void rsim_urq_reset(struct rsim_wq *rq)
{
	rq->head = READ_ONCE(rsim_urq_hdr(rq)->prod);
	rsim_urq_set_db(rq, false);
	rsim_urq_consumed(rq);
}

/**
 * rsim_urq_doorbell() - a doorbell outside the error state
 * @rq: the queue; its lock held
 *
 * Clears the flag; the caller then wakes the requesters that wait, and
 * whichever of them finds the queue empty again sets it anew.
 *
 * Context: any; does not sleep.
 */
void rsim_urq_doorbell(struct rsim_wq *rq)
{
	rsim_urq_set_db(rq, false);
}
