// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: the loopback data path. RC and UC QPs connected to a QP of the
 * same device, and datagram QPs (UD, QP0, QP1) sending to this device's
 * port, execute their send WRs against registered memory: every
 * access is checked (key and variant, MR state, PD, access rights,
 * bounds) and every byte is copied page by page as a DMA engine would.
 *
 * Who executes a send queue: exactly one context at a time, its owner
 * (&enum rsim_sq_owner, under the QP lock). A post from process or
 * softirq context becomes the owner and runs the queue at once, within a
 * budget (RSIM_DP_INLINE_BYTES, RSIM_DP_INLINE_WRS): a small WR completes
 * before post_send returns, as on hardware that is never busy. Past the
 * budget, for a WR larger than it, in hard-IRQ context, with interrupts
 * off, or from a completion handler this engine called, the queue goes
 * to the device's worker (a per-CPU, CPU-intensive workqueue; the QP's
 * @cpu picks the CPU, by default the one after the poster's, so that the
 * engine does not wait for a poster busy-polling its completion), which
 * runs it in larger budgets and yields between
 * 64 KiB chunks. WRs of one QP therefore execute in order, and a QP whose queue
 * is with the worker sends everything new there too.
 *
 * The ownership protocol (&enum rsim_sq_owner, @owner under the QP lock):
 *
 * - Claiming: only rsim_dp_claim_locked() (a post, modify_qp to RTS, an
 *   RNR wake-up) takes an IDLE queue, and only rsim_dp_work() takes a
 *   QUEUED or RNR one; neither while @stopping is set. RUNNING means one
 *   context, the owner, executes the queue.
 * - What an owner may touch: the head of the send queue (it alone pops
 *   it, or flushes the queue in the error state), the QP's scratch lists
 *   (@lrefs, @rrefs, @rwqe) and @steer_cpu, and @rnr_tries. Of a mapped
 *   send queue (usq.c), the tail too: it alone takes WRs from the ring,
 *   whenever the kernel's queue runs empty.
 * - Doorbells of a mapped send queue: its ring asks for them while the
 *   queue is IDLE, and only then (rsim_dp_idle_locked() sets the flag and
 *   looks at the ring once more; a claim clears it).
 * - Giving up: rsim_dp_leave_locked(), to IDLE (or QUEUED, if a mapped
 *   queue's ring has WRs the owner did not see), QUEUED (the worker goes
 *   on) or RNR (an RNR NAK). Before it, the owner has let go of everything
 *   its WR held: the MR references in the scratch lists and the responder
 *   (rsim_dp_release()). A new owner may start the moment the lock drops.
 * - Stopping: destroy_qp and a transition to RESET set @stopping under the
 *   lock, then rsim_dp_stop() waits for a RUNNING owner to give up (it
 *   looks at the state at every WR and every 64 KiB) and cancels the
 *   worker; then nobody runs the queue until the caller clears @stopping.
 *   modify_qp calls are serialized (@modify_mutex), so none overtakes it.
 * - Wake-ups: a requester parked on an RNR NAK is woken early only by its
 *   own responder (the QP its dest_qp_num names, whose own dest_qp_num
 *   names it back), and its retry runs on its worker: a verb runs no
 *   other QP's queue. Only the RNR timer's expiries count as retries.
 * - Handlers (event.c): a poster's run calls the handlers of its own QP
 *   and CQs once it holds no lock; the responder's (its receive CQ, its
 *   affiliated errors, its SRQ's limit) go to the device's dispatcher.
 *   A run on the worker is the device's context and calls them all.
 *   Handlers run marked as inside the engine: what they post goes to
 *   the worker, and what that post calls for, to the dispatcher.
 *
 * Lifetimes: a step holds a reference on the responder QP and on each MR
 * it touches; destroying an idle QP or MR waits for nothing else. Each
 * page is copied under the MR's lock after a check that its registration
 * is the one the access was checked against (the lock is held for a chunk
 * of 16 pages at most), so once LOCAL_INV or dereg returns, nothing is
 * written to or read from the old registration.
 *
 * Locks: QP lock (interrupts off), then CQ locks; MR locks (BH off) are
 * taken with no other lock held, two at a time in address order. No lock
 * with interrupts off is held across a copy; an MR lock is held across
 * one 64 KiB chunk at most.
 */

#include <kunit/visibility.h>
#include <linux/etherdevice.h>
#include <linux/highmem.h>
#include <linux/jiffies.h>
#include <linux/libnvdimm.h>
#include <linux/percpu.h>
#include <linux/wait_bit.h>
#include <rdma/ib_cache.h>

#include "rdmasim.h"

/* What a post runs at once; the rest goes to the worker. */
#define RSIM_DP_INLINE_BYTES	(64 * 1024)
#define RSIM_DP_INLINE_WRS	16
/* What the worker runs before it lets other QPs' work go first. */
#define RSIM_DP_WORKER_BYTES	(4 * 1024 * 1024)
#define RSIM_DP_WORKER_WRS	256
/*
 * Pages copied under one hold of the MRs' locks, and between two looks at
 * the QPs' state (and a reschedule on the worker): 64 KiB.
 */
#define RSIM_DP_CHECK_PAGES	16

/*
 * ODP (odp.c): what one page fault of a copy brings in at most, and how
 * often a copy faults at the same place (invalidations racing it) before
 * the WR fails as on an unresolvable page fault.
 */
#define RSIM_DP_ODP_FAULT_BYTES	(4 * 1024 * 1024)
#define RSIM_DP_ODP_TRIES	16

/* rsim_dp_exec() and its steps: beyond IB_WC_* */
#define RSIM_EXEC_WAIT		(-1)	/* RNR NAK: wait for a receive WR */
#define RSIM_EXEC_DROP		(-2)	/* UC, UD: the message is lost */
#define RSIM_EXEC_MOVE		(-3)	/* to the worker of a DMA handle's CPU */
#define RSIM_EXEC_NOACK		(-4)	/* RC: no responder answered */

/* rnr_retry 7: retry for ever */
#define RSIM_RNR_INFINITE	7

/*
 * The transport timer (IBA 9.7.6.1.3: 4.096 us * 2^timeout; timeout 0
 * waits for ever), scaled down by 2^RSIM_ACK_SCALE_SHIFT so that a
 * requester whose responder never answers spends its retry_cnt in
 * milliseconds rather than seconds (timeout 14, the usual value: 67 ms
 * per try on a wire, 4.2 ms here), and never less than a jiffy.
 */
#define RSIM_ACK_SCALE_SHIFT	4

static unsigned long rsim_ack_delay(u8 timeout)
{
	u64 ns = (4096ULL << min_t(u8, timeout, 31)) >> RSIM_ACK_SCALE_SHIFT;

	return max(1UL, nsecs_to_jiffies(ns));
}

/**
 * struct rsim_budget - what one run may still execute, and what it did
 * @bytes: message bytes
 * @wrs: work requests
 * @ran: a WR was executed in this run
 * @worker: the run is the worker's: its first WR runs whatever its size
 * @rnr_timer: the worker's run as the RNR timer: the head's retry counts
 * @did: the run's own counters (runs, deferrals, RNR waits and retries,
 *	DMA-handle moves), added to the device's at its end (one lock); each
 *	WR's are added as it completes
 */
struct rsim_budget {
	s64 bytes;
	u32 wrs;
	bool ran;
	bool worker;
	bool rnr_timer;
	struct rsim_dp_stats did;
};

/**
 * struct rsim_exec - one send WR being executed
 * @rsim: device
 * @qp: requester; its send queue is owned by this context
 * @wqe: the head of @qp's send queue
 * @rc: @qp is RC (else UC or a datagram QP)
 * @worker: running on the worker (may reschedule between pages)
 * @dlid: the requester's destination LID, read under its lock
 * @grh: its path's GRH (RoCE: the destination GID routes the packet)
 * @dest_qpn: its destination QP
 * @sl: its service level
 * @mtu: its path MTU
 * @rnr_retry: its RNR retry count
 * @timeout: its transport timer's exponent (0: for ever)
 * @retry_cnt: its transport retry count
 * @pkey_index: its P_Key index
 * @peer: the responder, held, once found
 * @prsim: the responder's device (RoCE: perhaps another), valid while
 *	@peer is held
 * @peer_access: the responder's qp_access_flags
 * @rnr_timer: the responder's min_rnr_timer (for an RNR NAK)
 * @nl: entries of @qp->lrefs checked (and held)
 * @nr: entries of @qp->rrefs checked (and held)
 * @rref: the RDMA target range (held)
 * @took: @qp->rwqe holds a receive WR taken from @peer's queue
 * @len: message bytes
 * @xsrq: an XRC SRQ the WR names, held (its responder is an XRC TGT QP)
 * @xrc: its responder is an XRC TGT QP (which stays set once @xsrq is
 *	released)
 * @moved: a DMA handle already moved this WR to its CPU's worker
 * @odp_move: it goes to the worker because it may touch an ODP MR
 * @steer_cpu: the CPU to move it to (RSIM_EXEC_MOVE)
 * @steered: it runs on the CPU its DMA handle names
 * @ph: processing hints of the MRs it touched, one bit per PH value
 * @pmem_bytes: bytes written into persistent-memory MRs
 * @n: notifications to deliver once no lock is held
 * @mcast: a multicast datagram: each receiving port counted what it
 *	received (rsim_dp_ud_mcast())
 * @fab: a MAD the fabric carried (rsim_dp_fabric_mad()): it arrives from
 *	@fab_slid, a switch's or the permissive LID
 * @fab_slid: its source LID
 */
struct rsim_exec {
	struct rsim_dev *rsim;
	struct rsim_qp *qp;
	struct rsim_send_wqe *wqe;
	bool rc;
	bool worker;
	u16 dlid;
	struct ib_global_route grh;
	u32 dest_qpn;
	u8 sl;
	enum ib_mtu mtu;
	u8 rnr_retry;
	u8 timeout;
	u8 retry_cnt;
	u16 pkey_index;
	struct rsim_qp *peer;
	struct rsim_dev *prsim;
	int peer_access;
	u8 rnr_timer;
	u32 nl;
	u32 nr;
	struct rsim_mem_ref rref;
	bool took;
	bool xrc;
	bool moved;
	bool odp_move;
	bool steered;
	bool mcast;
	bool fab;
	u16 fab_slid;
	u8 ph;
	u64 len;
	struct rsim_srq *xsrq;
	int steer_cpu;
	u64 pmem_bytes;
	struct rsim_notify n;
};

/**
 * rsim_dp_may_run_inline() - may this context execute WRs at once?
 *
 * Not in hard-IRQ or NMI context, not with interrupts off (the engine
 * takes BH-off locks), and not inside an engine run or a completion
 * handler it called on this CPU.
 *
 * Context: any; call before taking the QP lock.
 * Return: true if a send queue claimed here may be run at once.
 */
bool rsim_dp_may_run_inline(void)
{
	return !in_hardirq() && !in_nmi() && !irqs_disabled() &&
	       !raw_cpu_read(rsim_dp_depth);
}

/*
 * The CPU the QP's worker runs on: the one a DMA handle steered its head
 * WR to, else its policy; if that CPU is online. With no policy, the
 * online CPU after the one handing the work over: the device's engine
 * does not run under its caller, who may busy-poll for the completion
 * (on a kernel without preemption a worker queued on the poller's CPU
 * waits until the poller sleeps: 1 MiB WRITEs took 1.2 ms each so).
 * Called under the QP lock: the current CPU is stable.
 */
static int rsim_dp_worker_cpu(const struct rsim_qp *qp)
{
	int cpu = READ_ONCE(qp->steer_cpu);

	if (cpu < 0)
		cpu = READ_ONCE(qp->cpu);
	if (cpu != WORK_CPU_UNBOUND && cpu_online(cpu))
		return cpu;
	cpu = cpumask_next(raw_smp_processor_id(), cpu_online_mask);
	return cpu < nr_cpu_ids ? cpu : cpumask_first(cpu_online_mask);
}

/*
 * Queue the QP's worker after @delay (or set its RNR timer anew), unless
 * a stop is under way; with @keep, a timer already armed runs as it was.
 */
static void rsim_dp_arm_locked(struct rsim_qp *qp, unsigned long delay,
			       bool keep)
{
	struct rsim_dev *rsim = to_rsim_dev(qp->ibqp.device);
	int cpu = rsim_dp_worker_cpu(qp);

	lockdep_assert_held(&qp->lock);
	if (qp->stopping)
		return;
	if (keep)
		queue_delayed_work_on(cpu, rsim->dp_wq, &qp->work, delay);
	else
		mod_delayed_work_on(cpu, rsim->dp_wq, &qp->work, delay);
}

static void rsim_dp_queue_locked(struct rsim_qp *qp, unsigned long delay)
{
	rsim_dp_arm_locked(qp, delay, false);
}

/**
 * rsim_dp_claim_locked() - take an idle send queue with work on it
 * @qp: a QP that sends (RC, UC, UD, QP0, QP1); its lock held
 * @inl: rsim_dp_may_run_inline(), asked before the lock was taken
 *
 * A mapped send queue is claimed for what its ring holds too, in RTS to
 * run it and in the error state to flush it; its ring stops asking for
 * doorbells.
 *
 * Context: any; @qp's lock held.
 * Return: true if the caller now owns the queue and must call
 * rsim_dp_run() once it has dropped the lock; false if someone else runs
 * it (the worker, queued here if @inl is false), or there is nothing to
 * run.
 */
bool rsim_dp_claim_locked(struct rsim_qp *qp, bool inl)
{
	bool room = false;
	u32 ring = 0;

	lockdep_assert_held(&qp->lock);
	if (qp->owner != RSIM_SQ_IDLE || qp->stopping || qp->dying)
		return false;
	/*
	 * A mapped queue's published WRs: to run in RTS (a producer index
	 * out of range, to put the QP in the error state), to flush in ERR
	 */
	if (qp->sq.uslot)
		ring = rsim_usq_published(&qp->sq, &room);
	if (qp->state == IB_QPS_RTS ? !qp->sq.count && !ring :
				      qp->state != IB_QPS_ERR || !ring || !room)
		return false;
	/* the owner takes what is published before it lets the queue go */
	if (qp->sq.uslot)
		rsim_usq_set_db(&qp->sq, false);
	if (inl) {
		qp->owner = RSIM_SQ_RUNNING;
		return true;
	}
	qp->owner = RSIM_SQ_QUEUED;
	rsim_dp_queue_locked(qp, 0);
	return false;
}

/**
 * rsim_dp_idle_locked() - the send queue becomes nobody's
 * @qp: the QP; its lock held
 *
 * A mapped send queue asks for doorbells again, then (a full barrier,
 * paired with the provider's after its index) looks at the ring once
 * more: WRs published meanwhile, whose poster saw no flag and rang no
 * doorbell, are claimed for the worker (rsim_dp_claim_locked()).
 *
 * Context: any; @qp's lock held.
 */
void rsim_dp_idle_locked(struct rsim_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	qp->owner = RSIM_SQ_IDLE;
	if (!qp->sq.uslot)
		return;
	rsim_usq_set_db(&qp->sq, true);
	/* the flag before the index: pairs with the provider's post */
	smp_mb();
	rsim_dp_claim_locked(qp, false);
}

/*
 * Deliver completions and events (event.c): a run on the worker is the
 * device's own context and runs every handler; a poster's runs only its
 * own QP's and CQs' handlers, and queues the others' (the responder's)
 * for the dispatcher.
 */
static void rsim_dp_notify(struct rsim_notify *n, const struct rsim_budget *b,
			   const struct rsim_qp *qp)
{
	rsim_notify_run(n, b->worker ? NULL : qp);
}

/* The states in which a QP takes incoming messages (IBA 10.3.1) */
static bool rsim_qp_receives(enum ib_qp_state st)
{
	return st == IB_QPS_RTR || st == IB_QPS_RTS || st == IB_QPS_SQD;
}

/* IBA Table 45: the RNR NAK timer field's values, in microseconds */
static const u32 rsim_rnr_usec[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/* ---- a checked copy, page by page ---- */

/*
 * Is the registration a range was checked against still there, and the
 * window it was checked through still bound as it was? The MR's lock is
 * held, under which a window's generation moves too (mw.c).
 */
static bool rsim_ref_live(const struct rsim_mem_ref *ref)
{
	return !ref->mr || (ref->mr->state == RSIM_MR_VALID &&
			    ref->mr->reg.gen == ref->gen &&
			    (!ref->mw ||
			     READ_ONCE(ref->mw->gen) == ref->mw_gen));
}

/*
 * The device's access to a DMA address, as a DMA engine reaches memory:
 * through dma-direct's translation back to a physical page (the platform
 * device), or through the IOMMU's page tables (a PCI function lent by
 * dma_pci behind an IOMMU: rsim_dma_to_phys()). Under swiotlb that page
 * is the bounce slot the consumer's mapping handed out, exactly where a
 * device would write; the consumer's sync or unmap carries the bytes to
 * its buffer. An address the IOMMU does not map, or that is not RAM, is a
 * bus error. *@len is cut to the end of the page (an IOMMU maps pages).
 */
static void *rsim_dma_map_local(struct rsim_dev *rsim, u64 dma, u64 *len)
{
	phys_addr_t phys = rsim_dma_to_phys(rsim, dma);
	unsigned long pfn = PHYS_PFN(phys);

	if (rsim->dma_domain) {
		atomic64_inc(&rsim->iova_translations);
		if (!phys)
			return NULL;
	}
	if (!pfn_valid(pfn))
		return NULL;
	*len = min_t(u64, *len, PAGE_SIZE - offset_in_page(phys));
	return kmap_local_page(pfn_to_page(pfn)) + offset_in_page(phys);
}

/**
 * rsim_ref_map() - map byte @pos of a checked range for the device
 * @ref: the range; its MR's lock held
 * @pos: offset into the range
 * @len: in: bytes wanted; out: bytes mapped, contiguous in the
 *	translation and within one page
 * @write: the device writes them (an ODP MR's page must be writable)
 *
 * A kernel consumer's registration (map_mr_sg, the local DMA lkey, a DMA
 * MR) holds DMA addresses, reached as a device reaches them
 * (rsim_dma_map_local()). Pinned user memory and the device's own memory
 * are registered in pages (&struct rsim_mr_seg): the data path maps the
 * page itself, the memory the process sees, whatever DMA address the
 * mapping made for it (under swiotlb a bounce slot no process reads).
 *
 * An ODP MR's pages are the device's only while it has a translation of
 * them (odp.c): without one, the access stops with -EAGAIN for a fault.
 *
 * Context: any; the mapping is kmap_local_page()'s: undo it with
 * kunmap_local(), in reverse order.
 * Return: the mapping, NULL if the address is not RAM (a bus error), or
 * ERR_PTR(-EAGAIN): an ODP page to fault in (rsim_dp_odp_fault()).
 */
static void *rsim_ref_map(const struct rsim_mem_ref *ref, u64 pos, u64 *len,
			  bool write)
{
	struct rsim_dev *rsim = ref->rsim;
	const struct rsim_mr *mr = ref->mr;
	u64 at = ref->off + pos;
	struct page *page;
	u32 i;

	*len = min(*len, ref->len - pos);
	if (mr && mr->odp)
		return rsim_odp_map(mr, at, len, write);
	if (!mr || !mr->reg.mtt)
		/* local DMA lkey or DMA MR: DMA address == address */
		return rsim_dma_map_local(rsim, mr ? mr->reg.iova + at : at,
					  len);
	at += mr->reg.first_off;
	if (mr->reg.page_size) {
		u64 ps = mr->reg.page_size;

		i = div64_u64(at, ps);
		at -= (u64)i * ps;
		*len = min(*len, ps - at);
	} else {
		/* the lookup checked the range against the registered length */
		for (i = 0; i + 1 < mr->reg.nsegs && at >= mr->reg.mtt[i].len;
		     i++)
			at -= mr->reg.mtt[i].len;
		*len = min(*len, mr->reg.mtt[i].len - at);
	}
	if (!mr->reg.pages)
		return rsim_dma_map_local(rsim, mr->reg.mtt[i].addr + at, len);
	page = pfn_to_page(page_to_pfn(mr->reg.mtt[i].page) +
			   (at >> PAGE_SHIFT));
	at = offset_in_page(at);
	*len = min_t(u64, *len, PAGE_SIZE - at);
	return kmap_local_page(page) + at;
}

/* a cursor over a list of checked ranges */
struct rsim_cursor {
	const struct rsim_mem_ref *refs;
	u32 n;
	u32 i;
	u64 pos;
};

static const struct rsim_mem_ref *rsim_cursor_ref(struct rsim_cursor *c)
{
	while (c->i < c->n && c->pos == c->refs[c->i].len) {
		c->i++;
		c->pos = 0;
	}
	return c->i < c->n ? &c->refs[c->i] : NULL;
}

/* the (at most two) MRs a chunk is copied between, in lock order */
struct rsim_mr_pair {
	struct rsim_mr *a;
	struct rsim_mr *b;
};

/* @x and @y as a pair: distinct, the lower address first, NULLs last */
static struct rsim_mr_pair rsim_mr_pair(struct rsim_mr *x, struct rsim_mr *y)
{
	if (x == y)
		y = NULL;
	if (!x || (y && y < x))
		swap(x, y);
	return (struct rsim_mr_pair){ .a = x, .b = y };
}

static void rsim_mr_pair_lock(struct rsim_mr_pair *p)
{
	if (p->a)
		spin_lock_bh(&p->a->lock);
	if (p->b)
		spin_lock_nested(&p->b->lock, SINGLE_DEPTH_NESTING);
}

static void rsim_mr_pair_unlock(struct rsim_mr_pair *p)
{
	if (p->b)
		spin_unlock(&p->b->lock);
	if (p->a)
		spin_unlock_bh(&p->a->lock);
}

/*
 * Copy at most one page from the source (@sref at @spos, or @sbuf) to
 * @dref at @dpos; both MRs locked. Returns the bytes copied, or a
 * negative errno: -EFAULT the destination, -ENXIO the source is no longer
 * registered or not RAM; -EAGAIN an ODP page of the destination, -EBUSY
 * one of the source, to fault in.
 */
static s64 rsim_dp_copy_page(const struct rsim_mem_ref *dref, u64 dpos,
			     const struct rsim_mem_ref *sref, u64 spos,
			     const void *sbuf, u64 want)
{
	u64 n = want;
	void *dp, *sp = NULL;

	if (!rsim_ref_live(dref))
		return -EFAULT;
	if (sref && !rsim_ref_live(sref))
		return -ENXIO;
	dp = rsim_ref_map(dref, dpos, &n, true);
	if (IS_ERR(dp))
		return -EAGAIN;
	if (!dp)
		return -EFAULT;
	if (sref) {
		sp = rsim_ref_map(sref, spos, &n, false);
		if (IS_ERR_OR_NULL(sp)) {
			kunmap_local(dp);
			return sp ? -EBUSY : -ENXIO;
		}
	}
	/* persistent memory (a DMA handle says so): past the CPU's caches */
	if (dref->mr && dref->mr->hints.pmem)
		memcpy_flushcache(dp, sp ?: sbuf, n);
	else
		memcpy(dp, sp ?: sbuf, n);
	if (sp)
		kunmap_local(sp);
	kunmap_local(dp);
	return n;
}

/*
 * Should a long copy stop? The requester left RTS or is being destroyed
 * (-EINTR), or the responder is being destroyed (-ESHUTDOWN).
 */
static int rsim_dp_interrupted(const struct rsim_exec *x)
{
	enum ib_qp_state st = READ_ONCE(x->qp->state);

	if (READ_ONCE(x->qp->dying) || st == IB_QPS_ERR || st == IB_QPS_RESET)
		return -EINTR;
	if (x->peer && x->peer != x->qp && READ_ONCE(x->peer->dying))
		return -ESHUTDOWN;
	return 0;
}

/*
 * An ODP page a copy needs (odp.c): fault the rest of @ref from @pos in,
 * RSIM_DP_ODP_FAULT_BYTES at most. Only the worker may sleep for it (a WR
 * that may touch an ODP MR runs there: rsim_dp_odp_move()); @tries is the
 * count of faults at this very place. Returns 0 or -EFAULT.
 */
static int rsim_dp_odp_fault(struct rsim_exec *x,
			     const struct rsim_mem_ref *ref, u64 pos,
			     bool write, unsigned int tries)
{
	u64 len = min_t(u64, ref->len - pos, RSIM_DP_ODP_FAULT_BYTES);

	if (!x->worker || !ref->mr || tries > RSIM_DP_ODP_TRIES)
		return -EFAULT;
	return rsim_odp_fault(ref->mr, ref->off + pos, len, write) ? -EFAULT : 0;
}

/**
 * rsim_dp_copy() - move bytes between registered memory, as the device
 * @x: the WR
 * @dst: checked destination ranges
 * @ndst: entries in @dst
 * @src: checked source ranges (ignored if @src_buf is set)
 * @nsrc: entries in @src
 * @src_buf: kernel buffer holding the source (inline data), or NULL
 * @len: bytes to move; the ranges hold at least that many
 *
 * Context: process or softirq; reschedules between chunks on the worker,
 * and faults ODP pages in there.
 * Return: 0; -EFAULT if the destination, -ENXIO if the source stopped
 * being registered memory or an ODP page of it could not be faulted in
 * (some bytes may have been written, as by a device that hits a bus
 * error); -EINTR or -ESHUTDOWN, see rsim_dp_interrupted().
 */
static int rsim_dp_copy(struct rsim_exec *x, const struct rsim_mem_ref *dst,
			u32 ndst, const struct rsim_mem_ref *src, u32 nsrc,
			const void *src_buf, u64 len)
{
	struct rsim_cursor d = { .refs = dst, .n = ndst };
	struct rsim_cursor s = { .refs = src, .n = nsrc };
	struct rsim_mr_pair held = {};
	unsigned int pages = 0, tries = 0;
	u64 done = 0, fault_at = 0;
	bool locked = false;
	s64 n = 0;

	while (done < len) {
		const struct rsim_mem_ref *dref, *sref = NULL;
		struct rsim_mr_pair want;

		/* a chunk of pages per lock hold; between chunks, look up */
		if (pages && pages % RSIM_DP_CHECK_PAGES == 0) {
			if (locked)
				rsim_mr_pair_unlock(&held);
			locked = false;
			n = rsim_dp_interrupted(x);
			if (n)
				return n;
			if (x->worker)
				cond_resched();
		}
		dref = rsim_cursor_ref(&d);
		if (!src_buf)
			sref = rsim_cursor_ref(&s);
		if (WARN_ON_ONCE(!dref || (!src_buf && !sref))) {
			n = dref ? -ENXIO : -EFAULT;
			break;
		}
		want = rsim_mr_pair(dref->mr, sref ? sref->mr : NULL);
		if (locked && (want.a != held.a || want.b != held.b)) {
			rsim_mr_pair_unlock(&held);
			locked = false;
		}
		if (!locked) {
			held = want;
			rsim_mr_pair_lock(&held);
			locked = true;
		}
		n = rsim_dp_copy_page(dref, d.pos, sref, s.pos,
				      src_buf ? src_buf + done : NULL,
				      len - done);
		if (n == -EAGAIN || n == -EBUSY) {
			/* an ODP page: fault it in, go on from here */
			rsim_mr_pair_unlock(&held);
			locked = false;
			tries = done == fault_at ? tries + 1 : 1;
			fault_at = done;
			if (n == -EAGAIN)
				n = rsim_dp_odp_fault(x, dref, d.pos, true,
						      tries) ? -EFAULT : 0;
			else
				n = rsim_dp_odp_fault(x, sref, s.pos, false,
						      tries) ? -ENXIO : 0;
			if (n)
				break;
			continue;
		}
		if (n < 0)
			break;
		if (dref->mr && dref->mr->hints.pmem)
			x->pmem_bytes += n;
		d.pos += n;
		s.pos += n;
		done += n;
		pages++;
	}
	if (locked)
		rsim_mr_pair_unlock(&held);
	return n < 0 ? n : 0;
}

/* ---- the steps of one WR ---- */

static bool rsim_dp_is_atomic(enum ib_wr_opcode op)
{
	return op == IB_WR_ATOMIC_CMP_AND_SWP ||
	       op == IB_WR_ATOMIC_FETCH_AND_ADD;
}

/* IBA annex A19's memory placement operations (a send ring's only) */
static bool rsim_dp_is_placement(enum ib_wr_opcode op)
{
	return op == RSIM_WR_FLUSH || op == RSIM_WR_ATOMIC_WRITE;
}

/* the WRs that name remote memory with an rkey */
static bool rsim_dp_is_rdma(enum ib_wr_opcode op)
{
	return op == IB_WR_RDMA_WRITE || op == IB_WR_RDMA_WRITE_WITH_IMM ||
	       op == IB_WR_RDMA_READ || rsim_dp_is_atomic(op) ||
	       rsim_dp_is_placement(op);
}

/* SENDs and WRITE_WITH_IMM consume a receive WR at the responder */
static bool rsim_dp_needs_recv(enum ib_wr_opcode op)
{
	return op != IB_WR_RDMA_WRITE && op != IB_WR_RDMA_READ &&
	       !rsim_dp_is_atomic(op) && !rsim_dp_is_placement(op);
}

/* the local access a WR's own list needs: READ and atomics write to it */
static int rsim_dp_local_access(enum ib_wr_opcode op)
{
	return op == IB_WR_RDMA_READ || rsim_dp_is_atomic(op) ?
	       IB_ACCESS_LOCAL_WRITE : 0;
}

/* A WR's inline data, or NULL if its source is its gather list. */
static const void *rsim_dp_inline(const struct rsim_send_wqe *wqe)
{
	return wqe->send_flags & IB_SEND_INLINE ? wqe->sge : NULL;
}

/* Check the local gather list (READ: scatter list) into @qp->lrefs. */
static int rsim_dp_gather(struct rsim_exec *x)
{
	struct rsim_send_wqe *wqe = x->wqe;
	int access = rsim_dp_local_access(wqe->opcode);
	u32 i;

	x->len = wqe->len;
	if (wqe->send_flags & IB_SEND_INLINE)
		return 0;
	for (i = 0; i < wqe->num_sge; i++) {
		const struct ib_sge *sge = &wqe->sge[i];

		if (rsim_mr_lookup(x->rsim, x->qp, sge->lkey, false,
				   sge->addr, sge->length, access,
				   &x->qp->lrefs[i]))
			return IB_WC_LOC_PROT_ERR;
		x->nl = i + 1;
	}
	return x->len > RSIM_MAX_MSG ? IB_WC_LOC_LEN_ERR : 0;
}

/*
 * IBA 10.9.3: two P_Keys match if their low 15 bits are equal, not 0, and
 * at least one of them is a full member.
 */
static bool rsim_pkey_match(u16 a, u16 b)
{
	return (a & 0x7fff) && (a & 0x7fff) == (b & 0x7fff) &&
	       ((a | b) & 0x8000);
}

static void rsim_port_violation(struct rsim_dev *rsim, bool qkey)
{
	spin_lock_bh(&rsim->port.lock);
	if (qkey)
		rsim->port.qkey_viol++;
	else
		rsim->port.pkey_viol++;
	spin_unlock_bh(&rsim->port.lock);
}

/*
 * The device a packet to @dlid (InfiniBand) or @dgid (RoCE) reaches, held
 * unless it is @from (rsim_dp_route_put() it): InfiniBand, the subnet's
 * port with that LID (rsim_subnet_route()); RoCE, the RoCE-mode device
 * that holds the GID and that this one reaches through its netdev
 * (rsim_roce_route()); this one or another. NULL if none.
 */
static struct rsim_dev *rsim_dp_route(struct rsim_dev *from, u16 dlid,
				      const union ib_gid *dgid, u64 bytes)
{
	if (rsim_is_roce(from))
		return rsim_roce_route(from, dgid);
	/* the fabric's switch ports count what crosses them */
	if (rsim_fabric_member(from))
		return rsim_fabric_route(from, dlid, bytes);
	return rsim_subnet_route(from, dlid);
}

static void rsim_dp_route_put(struct rsim_dev *from, struct rsim_dev *to)
{
	if (rsim_is_roce(from))
		ib_device_put(&to->ibdev);
	else
		rsim_subnet_put(from, to);
}

/*
 * The QP a packet to @dlid (InfiniBand) or @grh's destination GID (RoCE)
 * and @qpn reaches, held, with its device in @x->prsim (rsim_dp_route():
 * this device or another). The ports' states must let the packet through
 * (rsim_port_passes()), the QP must exist, not be going away, and be
 * ready to receive (RTR, RTS or SQD). Its state is read without its
 * lock, as a packet meets the state it meets: a modify_qp racing it may
 * or may not be seen. NULL is what a fabric offers a packet to nowhere.
 *
 * The responder's device needs no reference of its own while the QP is
 * held: it is not deallocated before its QPs are destroyed, and
 * destroy_qp waits for the reference.
 */
static struct rsim_qp *rsim_dp_dest_get(struct rsim_exec *x, u16 dlid,
					const struct ib_global_route *grh,
					u32 qpn)
{
	enum ib_qp_type type = x->qp->ibqp.qp_type;
	struct rsim_qp *dest;
	struct rsim_dev *to;
	enum ib_qp_state st;

	if (!rsim_port_passes(x->rsim, type))
		return NULL;
	to = rsim_dp_route(x->rsim, dlid, &grh->dgid, x->len);
	if (!to)
		return NULL;
	dest = to == x->rsim || rsim_port_passes(to, type) ?
	       rsim_qp_get(to, qpn) : NULL;
	rsim_dp_route_put(x->rsim, to);
	if (!dest)
		return NULL;
	st = READ_ONCE(dest->state);
	if (READ_ONCE(dest->dying) || !rsim_qp_receives(st)) {
		rsim_qp_put(dest);
		return NULL;
	}
	x->prsim = to;
	return dest;
}

/*
 * The responder's path must name the requester: InfiniBand, its
 * destination LID is the requester's port's LID; RoCE, its destination GID
 * the requester's source GID (and its own source GID the requester's
 * destination), as rxe's address check does. A packet from elsewhere is
 * dropped. The addresses are read as the packet meets them.
 */
static bool rsim_dp_addr_ok(struct rsim_exec *x, struct rsim_qp *peer)
{
	union ib_gid sgid, psgid, pdgid;
	u8 pindex;

	if (!rsim_is_roce(x->rsim))
		return rdma_ah_get_dlid(&peer->attr.ah_attr) ==
		       READ_ONCE(x->rsim->port.lid);
	if (rsim_roce_hdr(x->rsim, &x->grh, 0, NULL, &sgid) < 0)
		return false;
	pindex = READ_ONCE(peer->attr.ah_attr.grh.sgid_index);
	memcpy(&pdgid, &peer->attr.ah_attr.grh.dgid, sizeof(pdgid));
	return !rdma_query_gid(&x->prsim->ibdev, RSIM_PORT, pindex, &psgid) &&
	       !memcmp(&pdgid, &sgid, sizeof(sgid)) &&
	       !memcmp(&psgid, &x->grh.dgid, sizeof(psgid));
}

/*
 * the PD the responder's accesses are checked in: its QP's, or the XRC
 * SRQ's the WR names (an XRC TGT QP has none)
 */
static struct ib_pd *rsim_dp_ppd(const struct rsim_exec *x)
{
	return x->xsrq ? x->xsrq->ibsrq.pd : x->peer->ibqp.pd;
}

/* RC to RC, UC to UC, and an XRC INI QP to an XRC TGT QP */
static bool rsim_dp_peer_type_ok(const struct rsim_qp *qp,
				 const struct rsim_qp *peer)
{
	if (qp->ibqp.qp_type == IB_QPT_XRC_INI)
		return peer->ibqp.qp_type == IB_QPT_XRC_TGT;
	return peer->ibqp.qp_type == qp->ibqp.qp_type;
}

/*
 * The responder: the QP this one is connected to (rsim_dp_dest_get()),
 * if it is of the same type (an XRC TGT QP for an XRC INI QP), connected
 * back, and its P_Key matches the requester's (a mismatch is the port's
 * P_Key violation, and the packet is dropped: RC sees no acknowledgment,
 * UC loses the message).
 */
static struct rsim_qp *rsim_dp_peer_get(struct rsim_exec *x)
{
	struct rsim_qp *peer = rsim_dp_dest_get(x, x->dlid, &x->grh,
						x->dest_qpn);

	if (!peer)
		return NULL;
	if (!rsim_dp_peer_type_ok(x->qp, peer) ||
	    READ_ONCE(peer->attr.dest_qp_num) != x->qp->ibqp.qp_num ||
	    !rsim_dp_addr_ok(x, peer)) {
		rsim_qp_put(peer);
		return NULL;
	}
	/* the receiving port counts the violation */
	if (!rsim_pkey_match(rsim_port_pkey(x->rsim, x->pkey_index),
			     rsim_port_pkey(x->prsim,
					    READ_ONCE(peer->attr.pkey_index)))) {
		rsim_port_violation(x->prsim, false);
		rsim_qp_put(peer);
		return NULL;
	}
	x->peer_access = READ_ONCE(peer->attr.qp_access_flags);
	x->rnr_timer = READ_ONCE(peer->attr.min_rnr_timer);
	return peer;
}

/* Complete the receive WR taken from the responder with @wc. */
static void rsim_dp_complete_recv(struct rsim_exec *x, struct ib_wc *wc,
				  bool solicited)
{
	struct rsim_qp *peer = x->peer;
	unsigned long flags;

	wc->wr_id = x->qp->rwqe->wr_id;
	wc->qp = &peer->ibqp;
	spin_lock_irqsave(&peer->lock, flags);
	/* an XRC SRQ's completions go to its own CQ */
	rsim_qp_push(&x->n, peer, x->xsrq ? x->xsrq->ibsrq.ext.cq :
		     peer->ibqp.recv_cq, wc, solicited);
	spin_unlock_irqrestore(&peer->lock, flags);
	x->took = false;
}

/*
 * The responder cannot take the message. UC loses it: the requester's WR
 * succeeds, and a receive WR the responder had taken completes with
 * @rstatus (IBA class D, as in rxe). RC: the receive WR (if taken)
 * completes with @rstatus, the responder enters the error state, and the
 * requester's WR completes with @sstatus.
 */
static int rsim_dp_resp_fail(struct rsim_exec *x, enum ib_wc_status rstatus,
			     enum ib_wc_status sstatus)
{
	struct rsim_qp *peer = x->peer;
	bool took = x->took;
	unsigned long flags;

	if (x->took) {
		struct ib_wc wc = { .status = rstatus, .opcode = IB_WC_RECV };

		rsim_dp_complete_recv(x, &wc, false);
	}
	if (!x->rc)
		return RSIM_EXEC_DROP;
	spin_lock_irqsave(&peer->lock, flags);
	rsim_qp_error_locked(peer, &x->n);
	spin_unlock_irqrestore(&peer->lock, flags);
	/*
	 * Without a receive completion (WRITE, READ), the responder learns
	 * of the error from an affiliated event, as on hardware
	 */
	if (!took && (sstatus == IB_WC_REM_ACCESS_ERR ||
		      sstatus == IB_WC_REM_INV_REQ_ERR)) {
		x->n.resp = peer;
		x->n.resp_event = sstatus == IB_WC_REM_ACCESS_ERR ?
				  IB_EVENT_QP_ACCESS_ERR : IB_EVENT_QP_REQ_ERR;
	}
	return sstatus;
}

/* The requester's own side failed after the responder took a receive WR. */
static int rsim_dp_local_fail(struct rsim_exec *x, enum ib_wc_status status)
{
	if (x->took) {
		struct ib_wc wc = {
			.status = IB_WC_REM_ABORT_ERR,
			.opcode = IB_WC_RECV,
		};

		rsim_dp_complete_recv(x, &wc, false);
	}
	return status;
}

/*
 * FLUSH: the rights its placement types need, in the responder QP and in
 * the registration; its range (IB_FLUSH_RANGE, unchecked when empty, as
 * any zero-length access), or the whole region the rkey names
 * (IB_FLUSH_MR: the WR's address and length are not looked at).
 */
static int rsim_dp_check_flush(struct rsim_exec *x)
{
	const struct rsim_send_wqe *wqe = x->wqe;
	int need = (wqe->flush_type & RSIM_FLUSH_GLOBAL ?
		    RSIM_ACCESS_FLUSH_GLOBAL : 0) |
		   (wqe->flush_type & RSIM_FLUSH_PERSISTENT ?
		    RSIM_ACCESS_FLUSH_PERSISTENT : 0);
	u64 addr = wqe->remote_addr, len = wqe->flush_len;

	if ((x->peer_access & need) != need ||
	    (wqe->flush_level == RSIM_FLUSH_MR &&
	     rsim_mr_key_range(x->prsim, wqe->rkey, &addr, &len)) ||
	    rsim_mr_lookup(x->prsim, x->peer, wqe->rkey, true, addr, len,
			   need, &x->rref))
		return rsim_dp_resp_fail(x, IB_WC_REM_ACCESS_ERR,
					 IB_WC_REM_ACCESS_ERR);
	return 0;
}

/*
 * RDMA READ, WRITE, atomics, ATOMIC_WRITE and FLUSH: the responder's
 * rights and the rkey; the target of an atomic or an ATOMIC_WRITE must be
 * 8-byte aligned (IBA 9.4.5, oA19-28: an invalid request).
 */
static int rsim_dp_check_rkey(struct rsim_exec *x)
{
	enum ib_wr_opcode op = x->wqe->opcode;
	int need = op == IB_WR_RDMA_READ ? IB_ACCESS_REMOTE_READ :
		   rsim_dp_is_atomic(op) ? IB_ACCESS_REMOTE_ATOMIC :
		   IB_ACCESS_REMOTE_WRITE;

	if (op == RSIM_WR_FLUSH)
		return rsim_dp_check_flush(x);
	if ((rsim_dp_is_atomic(op) || op == RSIM_WR_ATOMIC_WRITE) &&
	    !IS_ALIGNED(x->wqe->remote_addr, 8))
		return rsim_dp_resp_fail(x, IB_WC_REM_INV_REQ_ERR,
					 IB_WC_REM_INV_REQ_ERR);
	if (!(x->peer_access & need) ||
	    rsim_mr_lookup_pd(x->prsim, x->peer, rsim_dp_ppd(x), x->wqe->rkey,
			      true,
			      x->wqe->remote_addr, x->len, need, &x->rref))
		return rsim_dp_resp_fail(x, IB_WC_REM_ACCESS_ERR,
					 IB_WC_REM_ACCESS_ERR);
	return 0;
}

/*
 * The responder's mapped receive queue holds nonsense its process wrote
 * (urq.c): a malformed WR (-EBADMSG), which was taken and completes with
 * IB_WC_LOC_QP_OP_ERR, or a producer index out of range (-EIO), which
 * raises IB_EVENT_QP_FATAL instead. The responder enters the error state
 * whatever its transport; an RC requester's WR completes with
 * IB_WC_REM_OP_ERR, and UC and UD lose the message.
 */
static int rsim_dp_bad_recv(struct rsim_exec *x, int err)
{
	struct rsim_qp *peer = x->peer;
	unsigned long flags;

	if (x->took) {
		struct ib_wc wc = {
			.status = IB_WC_LOC_QP_OP_ERR,
			.opcode = IB_WC_RECV,
		};

		rsim_dp_complete_recv(x, &wc, false);
	}
	spin_lock_irqsave(&peer->lock, flags);
	rsim_qp_error_locked(peer, &x->n);
	spin_unlock_irqrestore(&peer->lock, flags);
	if (err == -EIO) {
		x->n.resp = peer;
		x->n.resp_event = IB_EVENT_QP_FATAL;
	}
	return x->rc ? IB_WC_REM_OP_ERR : RSIM_EXEC_DROP;
}

/*
 * Take the receive WR at the head of the responder's queue (or of its
 * SRQ), as a device owns a WQE once it starts to fill it: a flush of the
 * responder cannot complete it a second time. A mapped queue's WR is
 * copied from its ring (urq.c); an RC requester that finds such a queue
 * empty asks its process for the doorbell that wakes it.
 */
static int rsim_dp_take_recv(struct rsim_exec *x)
{
	struct rsim_qp *peer = x->peer;
	struct rsim_srq *srq = x->xsrq ?: peer->ibqp.srq ?
			       to_rsim_srq(peer->ibqp.srq) : NULL;
	/*
	 * an RC requester waits on the SRQ for its next post; an XRC one
	 * (whose TGT QP may meet many SRQs) on its RNR timer
	 */
	struct rsim_qp *waiter = x->rc && !x->xsrq ? peer : NULL;
	unsigned long flags;
	int limit = 0;
	int bad = 0;

	spin_lock_irqsave(&peer->lock, flags);
	if (peer->dying) {
		/*
		 * destroy_qp has begun (it set @dying under this lock, then
		 * took the QP off its SRQ's waiters): a QP going away is no
		 * responder, and must not go back on that list, where it
		 * would stay after it is freed. RC retries as for a QP that
		 * is not there.
		 */
		spin_unlock_irqrestore(&peer->lock, flags);
		return x->rc ? RSIM_EXEC_NOACK : RSIM_EXEC_DROP;
	}
	if (!rsim_qp_receives(peer->state)) {
		/* nothing taken: ERR, or back to RESET (and INIT) meanwhile */
	} else if (srq) {
		limit = rsim_srq_take(srq, x->qp->rwqe, waiter);
		x->took = limit >= 0 || limit == -EBADMSG;
		if (limit == -EBADMSG || limit == -EIO)
			swap(bad, limit);
	} else if (peer->rq.umap) {
		bad = rsim_urq_take(&peer->rq, x->qp->rwqe, x->rc);
		x->took = !bad || bad == -EBADMSG;
		if (bad == -ENOENT)
			bad = 0;
	} else if (peer->rq.count) {
		struct rsim_recv_wqe *rwqe = rsim_wqe(&peer->rq, 0);

		memcpy(x->qp->rwqe, rwqe,
		       struct_size(rwqe, sge, rwqe->num_sge));
		rsim_wq_pop(&peer->rq);
		x->took = true;
	}
	spin_unlock_irqrestore(&peer->lock, flags);
	/* the SRQ is the responder's: its event is the dispatcher's */
	if (limit > 0)
		rsim_ev_queue(x->prsim, &srq->ev,
			      BIT(IB_EVENT_SRQ_LIMIT_REACHED));
	if (bad)
		return rsim_dp_bad_recv(x, bad);
	if (x->took)
		return 0;
	/* UC, UD: lost; RC: an RNR NAK, which the run loop retries or fails */
	return x->rc ? RSIM_EXEC_WAIT : RSIM_EXEC_DROP;
}

/*
 * A SEND's landing place: the taken receive WR's scatter list, which must
 * hold @need bytes.
 */
static int rsim_dp_scatter(struct rsim_exec *x, u64 need)
{
	struct rsim_recv_wqe *rwqe = x->qp->rwqe;
	u64 cap = 0;
	u32 i;

	for (i = 0; i < rwqe->num_sge; i++) {
		const struct ib_sge *sge = &rwqe->sge[i];

		if (rsim_mr_lookup_pd(x->prsim, x->peer, rsim_dp_ppd(x), sge->lkey,
				      false, sge->addr, sge->length,
				      IB_ACCESS_LOCAL_WRITE, &x->qp->rrefs[i]))
			return rsim_dp_resp_fail(x, IB_WC_LOC_PROT_ERR,
						 IB_WC_REM_OP_ERR);
		x->nr = i + 1;
		cap += sge->length;
	}
	if (cap < need)
		return rsim_dp_resp_fail(x, IB_WC_LOC_LEN_ERR,
					 IB_WC_REM_INV_REQ_ERR);
	return 0;
}

/*
 * A copy failed: on the responder's side (@remote_dst and the destination
 * failed, or the other way round) the responder reports it as the WRITE
 * path does; on the requester's side it is a local protection error.
 */
static int rsim_dp_copy_failed(struct rsim_exec *x, int err, bool remote_dst,
			       enum ib_wc_status rstatus,
			       enum ib_wc_status sstatus)
{
	switch (err) {
	case 0:
		return 0;
	case -EINTR:
		return rsim_dp_local_fail(x, IB_WC_WR_FLUSH_ERR);
	case -ESHUTDOWN:
		x->took = false;	/* its QP is going away */
		return x->rc ? IB_WC_RETRY_EXC_ERR : RSIM_EXEC_DROP;
	default:
		if ((err == -EFAULT) == remote_dst)
			return rsim_dp_resp_fail(x, rstatus, sstatus);
		return rsim_dp_local_fail(x, IB_WC_LOC_PROT_ERR);
	}
}

/* The hints of the MRs a WR touches: the remote range, its local list. */
static const struct rsim_mr_hints *rsim_dp_hints(struct rsim_exec *x, u32 i)
{
	const struct rsim_mem_ref *ref = i ? &x->qp->lrefs[i - 1] : &x->rref;

	return ref->mr ? &ref->mr->hints : NULL;
}

/*
 * DMA handles (dmah.c): a WR that touches an MR whose handle names a CPU
 * runs on that CPU's worker, as a device steers the DMA of that memory to
 * that CPU's cache. Called before the WR has done anything: on another
 * context it is moved (RSIM_EXEC_MOVE) and runs again from the start
 * there; once moved it runs wherever it is (the CPU went offline). The
 * processing hints of the MRs it touches are noted for the counters.
 */
static int rsim_dp_steer(struct rsim_exec *x)
{
	int cpu = -1;
	u32 i;

	for (i = 0; i <= x->nl; i++) {
		const struct rsim_mr_hints *h = rsim_dp_hints(x, i);

		if (!h)
			continue;
		if (cpu < 0 && h->cpu >= 0)
			cpu = h->cpu;
		if (h->ph >= 0)
			x->ph |= BIT(h->ph);
	}
	if (cpu < 0 || !cpu_online(cpu))
		return 0;
	if (x->worker && raw_smp_processor_id() == cpu) {
		x->steered = true;
		return 0;
	}
	if (x->moved)
		return 0;
	x->ph = 0;
	x->steer_cpu = cpu;
	return RSIM_EXEC_MOVE;
}

/*
 * ODP (odp.c): a page fault may sleep, so a WR that may touch an ODP MR
 * runs on the worker: one whose checked ranges are in one, or that lands
 * in receive buffers of a PD that has any (@peer's; the receive WR itself
 * is looked at later), or a multicast (@peer NULL) while any ODP MR
 * exists. Called before the WR has done anything: moved, it runs again
 * from the start there.
 */
static int rsim_dp_odp_move(struct rsim_exec *x, const struct rsim_qp *peer)
{
	u32 i;

	if (!RSIM_ODP || x->worker || !atomic_read(&rsim_odp_mrs))
		return 0;
	for (i = 0; i <= x->nl; i++) {
		const struct rsim_mem_ref *ref = i ? &x->qp->lrefs[i - 1] :
						 &x->rref;

		if (ref->mr && ref->mr->odp)
			goto move;
	}
	if (!rsim_dp_needs_recv(x->wqe->opcode))
		return 0;
	if (peer && !atomic_read(&to_rsim_pd(rsim_dp_ppd(x))->odp_mrs))
		return 0;
move:
	x->odp_move = true;
	x->steer_cpu = -1;
	return RSIM_EXEC_MOVE;
}

/*
 * An atomic at the responder: read the 8 bytes at the checked remote
 * range, compare-and-swap or add, write back; all under the device's
 * atomic lock and the MR's lock, so that no other atomic of this device
 * comes between (IBA 9.4.5; like rxe, atomics are not atomic with respect
 * to the CPU). The original value is then written into the requester's
 * SGE, as the ATOMIC ACKNOWLEDGE's payload would be. An ATOMIC_WRITE
 * stores its 8 bytes at once under the same locks (no atomic of this
 * device sees half of it), a persistent-memory MR's line written back as
 * its copies are, and returns nothing.
 */
static int rsim_dp_atomic(struct rsim_exec *x)
{
	const struct rsim_mem_ref *ref = &x->rref;
	struct rsim_send_wqe *wqe = x->wqe;
	bool store = wqe->opcode == RSIM_WR_ATOMIC_WRITE;
	unsigned int tries = 0;
	u64 orig, n;
	int err;
	void *p;

again:
	err = -EFAULT;
	p = NULL;
	n = sizeof(orig);
	spin_lock_bh(&x->prsim->atomic_lock);
	if (ref->mr)
		spin_lock(&ref->mr->lock);
	if (rsim_ref_live(ref))
		p = rsim_ref_map(ref, 0, &n, true);
	if (IS_ERR(p)) {
		/* an ODP page: fault it in, then try again */
		spin_unlock(&ref->mr->lock);
		spin_unlock_bh(&x->prsim->atomic_lock);
		if (!rsim_dp_odp_fault(x, ref, 0, true, ++tries))
			goto again;
		return rsim_dp_copy_failed(x, -EFAULT, true,
					   IB_WC_REM_ACCESS_ERR,
					   IB_WC_REM_ACCESS_ERR);
	}
	if (p && n == sizeof(orig)) {
		u64 *v = p;

		orig = READ_ONCE(*v);
		if (store)
			WRITE_ONCE(*v, wqe->swap);
		else if (wqe->opcode == IB_WR_ATOMIC_FETCH_AND_ADD)
			WRITE_ONCE(*v, orig + wqe->compare_add);
		else if (orig == wqe->compare_add)
			WRITE_ONCE(*v, wqe->swap);
		if (store && ref->mr && ref->mr->hints.pmem) {
			arch_wb_cache_pmem(p, sizeof(orig));
			x->pmem_bytes += sizeof(orig);
		}
		err = 0;
	}
	if (p)
		kunmap_local(p);
	if (ref->mr)
		spin_unlock(&ref->mr->lock);
	spin_unlock_bh(&x->prsim->atomic_lock);
	if (err || store)
		return rsim_dp_copy_failed(x, err, true, IB_WC_REM_ACCESS_ERR,
					   IB_WC_REM_ACCESS_ERR);
	err = rsim_dp_copy(x, x->qp->lrefs, x->nl, NULL, 0, &orig,
			   sizeof(orig));
	return rsim_dp_copy_failed(x, err, false, IB_WC_REM_ACCESS_ERR,
				   IB_WC_REM_ACCESS_ERR);
}

/*
 * A FLUSH at the responder, once every earlier WR of the QP has executed
 * (the queue executes in order, each WR to its end): what they placed is
 * visible to every access (IB_FLUSH_GLOBAL: the stores ordered), or,
 * of a persistent-memory MR (IB_FLUSH_PERSISTENT, which only such an MR
 * grants), written back. Nothing moves; the range was checked.
 */
static int rsim_dp_flush(struct rsim_exec *x)
{
	const struct rsim_mem_ref *ref = &x->rref;
	u64 pos = 0, n;
	void *p;

	/* a page at a time, the MR's lock held for one page only */
	while ((x->wqe->flush_type & RSIM_FLUSH_PERSISTENT) && ref->mr &&
	       ref->mr->hints.pmem && pos < ref->len) {
		n = ref->len - pos;
		spin_lock_bh(&ref->mr->lock);
		p = rsim_ref_live(ref) ? rsim_ref_map(ref, pos, &n, false) :
		    NULL;
		if (IS_ERR(p)) {
			/* an ODP page not present: none of its lines to write */
			p = NULL;
			spin_unlock_bh(&ref->mr->lock);
			pos += n;
			continue;
		}
		if (p) {
			arch_wb_cache_pmem(p, n);
			kunmap_local(p);
		}
		spin_unlock_bh(&ref->mr->lock);
		if (!p)		/* invalidated or deregistered meanwhile */
			return rsim_dp_resp_fail(x, IB_WC_REM_ACCESS_ERR,
						 IB_WC_REM_ACCESS_ERR);
		pos += n;
	}
	wmb();	/* the stores before the FLUSH, before its completion */
	return 0;
}

/* Move the message. */
static int rsim_dp_move(struct rsim_exec *x)
{
	struct rsim_send_wqe *wqe = x->wqe;
	const void *inl = rsim_dp_inline(wqe);
	struct rsim_qp *qp = x->qp;
	int err;

	/* not case labels: before 6.2 the enum has no such values */
	if (wqe->opcode == RSIM_WR_ATOMIC_WRITE)
		return rsim_dp_atomic(x);
	if (wqe->opcode == RSIM_WR_FLUSH)
		return rsim_dp_flush(x);
	switch (wqe->opcode) {
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return rsim_dp_atomic(x);
	case IB_WR_RDMA_READ:
		err = rsim_dp_copy(x, qp->lrefs, x->nl, &x->rref, 1, NULL,
				   x->len);
		return rsim_dp_copy_failed(x, err, false, IB_WC_REM_ACCESS_ERR,
					   IB_WC_REM_ACCESS_ERR);
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		err = rsim_dp_copy(x, &x->rref, 1, qp->lrefs, x->nl, inl,
				   x->len);
		return rsim_dp_copy_failed(x, err, true, IB_WC_REM_ACCESS_ERR,
					   IB_WC_REM_ACCESS_ERR);
	default:
		err = rsim_dp_scatter(x, x->len);
		if (err)
			return err;
		err = rsim_dp_copy(x, qp->rrefs, x->nr, qp->lrefs, x->nl, inl,
				   x->len);
		return rsim_dp_copy_failed(x, err, true, IB_WC_LOC_PROT_ERR,
					   IB_WC_REM_OP_ERR);
	}
}

/*
 * The responder's completion of a message that arrived: @wc brings what
 * depends on the transport (byte_len, sl; UD: pkey_index, IB_WC_GRH).
 */
static void rsim_dp_deliver(struct rsim_exec *x, struct ib_wc *wc)
{
	struct rsim_send_wqe *wqe = x->wqe;

	wc->status = IB_WC_SUCCESS;
	wc->opcode = wqe->opcode == IB_WR_RDMA_WRITE_WITH_IMM ?
		     IB_WC_RECV_RDMA_WITH_IMM : IB_WC_RECV;
	wc->src_qp = x->qp->ibqp.qp_num;
	wc->slid = x->fab ? x->fab_slid : READ_ONCE(x->rsim->port.lid);
	wc->port_num = RSIM_PORT;
	if (wqe->opcode == IB_WR_SEND_WITH_IMM ||
	    wqe->opcode == IB_WR_RDMA_WRITE_WITH_IMM) {
		wc->wc_flags |= IB_WC_WITH_IMM;
		wc->ex.imm_data = wqe->imm;
	} else if (wqe->opcode == IB_WR_SEND_WITH_INV) {
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
		wc->ex.invalidate_rkey = wqe->inv;
	}
	rsim_dp_complete_recv(x, wc, wqe->send_flags & IB_SEND_SOLICITED);
}

/* ---- UD ---- */

/* Bytes a UD receive buffer holds before the payload: the GRH's place */
#define RSIM_UD_GRH		((u32)sizeof(struct ib_grh))

/*
 * Who takes a datagram from whom: QP0 (SMI) talks only to QP0; a UD QP or
 * QP1 (GSI) sends to UD QPs and to QP1.
 */
static bool rsim_ud_reaches(const struct rsim_qp *src,
			    const struct rsim_qp *dest)
{
	switch (dest->ibqp.qp_type) {
	case IB_QPT_SMI:
		return src->ibqp.qp_type == IB_QPT_SMI;
	case IB_QPT_GSI:
	case IB_QPT_UD:
		return src->ibqp.qp_type != IB_QPT_SMI;
	default:
		return false;
	}
}

/*
 * The destination of a datagram (rsim_dp_dest_get()): a UD, SMI or GSI QP
 * that may take it from this QP and whose Q_Key and P_Key accept it (QP0
 * checks neither; the others match the sender's P_Key against the entry
 * their P_Key index names, 0 for QP1). What a fabric would not deliver
 * returns NULL: the SEND succeeds and the message is lost (a Q_Key or
 * P_Key mismatch is counted as the port's violation).
 */
static struct rsim_qp *rsim_dp_ud_accept(struct rsim_exec *x,
					 struct rsim_qp *dest)
{
	struct rsim_qp *qp = x->qp;
	u32 qkey = x->wqe->remote_qkey;

	if (!rsim_ud_reaches(qp, dest))
		goto drop;
	if (dest->ibqp.qp_type == IB_QPT_SMI)
		return dest;
	/* a controlled Q_Key (high bit set) means the sender's own */
	if (qkey & 0x80000000)
		qkey = READ_ONCE(qp->attr.qkey);
	/* the receiving port counts a violation */
	if (qkey != READ_ONCE(dest->attr.qkey)) {
		rsim_port_violation(x->prsim, true);
		goto drop;
	}
	if (!rsim_pkey_match(rsim_port_pkey(x->rsim,
					    READ_ONCE(qp->attr.pkey_index)),
			     rsim_port_pkey(x->prsim,
					    READ_ONCE(dest->attr.pkey_index)))) {
		rsim_port_violation(x->prsim, false);
		goto drop;
	}
	return dest;

drop:
	rsim_qp_put(dest);
	return NULL;
}

static struct rsim_qp *rsim_dp_ud_dest(struct rsim_exec *x)
{
	struct rsim_send_wqe *wqe = x->wqe;
	struct rsim_qp *dest;

	dest = rsim_dp_dest_get(x, rdma_ah_get_dlid(&wqe->ah),
				rdma_ah_read_grh(&wqe->ah), wqe->remote_qpn);
	return dest ? rsim_dp_ud_accept(x, dest) : NULL;
}

/*
 * The GRH a UD message carries when its address vector asks for one; in
 * RoCE mode always, as the packet's IPv4 or IPv6 header. Returns the
 * network header type (RDMA_NETWORK_IB, _IPV4, _IPV6), or a negative
 * errno if the packet cannot be sent (RoCE: no source GID).
 */
static int rsim_dp_ud_grh(struct rsim_exec *x, struct ib_grh *grh)
{
	const struct ib_global_route *g = rdma_ah_read_grh(&x->wqe->ah);
	union ib_gid sgid;

	if (rsim_is_roce(x->rsim))
		return rsim_roce_hdr(x->rsim, g, x->len,
				     (union rdma_network_hdr *)grh, &sgid);
	memset(grh, 0, sizeof(*grh));
	grh->version_tclass_flow =
		cpu_to_be32((6U << 28) | ((u32)g->traffic_class << 20) |
			    (g->flow_label & 0xfffff));
	grh->paylen = cpu_to_be16(x->len);
	grh->next_hdr = 0x1b;	/* IBA: the next header is the BTH */
	grh->hop_limit = g->hop_limit;
	grh->sgid.global.subnet_prefix = cpu_to_be64(RSIM_GID_PREFIX);
	grh->sgid.global.interface_id = x->rsim->port.guid;
	grh->dgid = g->dgid;
	return RDMA_NETWORK_IB;
}

/*
 * The device's MAD receive queue: a datagram for QP0 or QP1 is written
 * (GRH place, then payload) by the device into a DMA-mapped buffer of the
 * device's PUDA pool, as a device DMAs a packet into a buffer it was
 * given, and the receive WR is filled from there. Returns the buffer,
 * the CPU's again; NULL with *@ret set if the datagram is lost (no
 * buffer, or longer than a MAD) or its source failed.
 */
static struct rsim_puda_buf *rsim_dp_mad_rx(struct rsim_exec *x,
					    const struct ib_grh *grh, int *ret)
{
	struct rsim_puda_pool *pool = x->prsim->mad_pool;
	struct rsim_puda_buf *buf;
	struct rsim_mem_ref ref;
	int err = 0;

	buf = rsim_puda_get(pool, GFP_ATOMIC);
	if (!buf || RSIM_UD_GRH + x->len > buf->len) {
		if (buf)
			rsim_puda_put(pool, buf);
		*ret = RSIM_EXEC_DROP;
		return NULL;
	}
	rsim_puda_sync_for_device(buf);
	/* the buffer's DMA address, as the local DMA lkey names memory */
	ref = (struct rsim_mem_ref){
		.rsim = x->prsim, .off = buf->dma, .len = buf->len,
	};
	if (grh)
		err = rsim_dp_copy(x, &ref, 1, NULL, 0, grh, RSIM_UD_GRH);
	ref.off += RSIM_UD_GRH;
	ref.len -= RSIM_UD_GRH;
	if (!err)
		err = rsim_dp_copy(x, &ref, 1, x->qp->lrefs, x->nl,
				   rsim_dp_inline(x->wqe), x->len);
	rsim_puda_sync_for_cpu(buf);
	if (err) {
		rsim_puda_put(pool, buf);
		*ret = rsim_dp_copy_failed(x, err, true, IB_WC_LOC_PROT_ERR,
					   IB_WC_SUCCESS);
		return NULL;
	}
	return buf;
}

/*
 * A datagram lands at the responder (@x->peer): a receive WR taken (none:
 * the message is lost), the GRH's 40 bytes (@grh_src, written only if
 * @has_grh), then the payload (@inl, or the sender's gather list).
 */
static int rsim_dp_ud_land(struct rsim_exec *x, bool has_grh, int net_type,
			   const void *grh_src, const void *inl)
{
	struct ib_wc wc = { .sl = rdma_ah_get_sl(&x->wqe->ah) };
	u32 i, skip;
	int ret;

	/* no RNR: without a receive WR the message is lost */
	ret = rsim_dp_take_recv(x);
	if (ret)
		return ret;
	/* UD is unreliable: rsim_dp_resp_fail() loses the message */
	ret = rsim_dp_scatter(x, RSIM_UD_GRH + x->len);
	if (ret)
		return ret;
	if (has_grh) {
		ret = rsim_dp_copy(x, x->qp->rrefs, x->nr, NULL, 0, grh_src,
				   RSIM_UD_GRH);
		ret = rsim_dp_copy_failed(x, ret, true, IB_WC_LOC_PROT_ERR,
					  IB_WC_SUCCESS);
		if (ret)
			return ret;
	}
	/* the payload starts after the GRH's place */
	for (i = 0, skip = RSIM_UD_GRH; i < x->nr && skip; i++) {
		u64 n = min_t(u64, skip, x->qp->rrefs[i].len);

		x->qp->rrefs[i].off += n;
		x->qp->rrefs[i].len -= n;
		skip -= n;
	}
	ret = rsim_dp_copy(x, x->qp->rrefs, x->nr, x->qp->lrefs, x->nl, inl,
			   x->len);
	ret = rsim_dp_copy_failed(x, ret, true, IB_WC_LOC_PROT_ERR,
				  IB_WC_SUCCESS);
	if (ret)
		return ret;

	wc.byte_len = x->len + RSIM_UD_GRH;
	wc.pkey_index = READ_ONCE(x->peer->attr.pkey_index);
	if (has_grh)
		wc.wc_flags |= IB_WC_GRH;
	/* RoCE: what ib_init_ah_attr_from_wc() needs to answer */
	if (rsim_is_roce(x->rsim)) {
		wc.wc_flags |= IB_WC_WITH_NETWORK_HDR_TYPE | IB_WC_WITH_SMAC;
		wc.network_hdr_type = net_type;
		ether_addr_copy(wc.smac, x->rsim->cfg.ndev->dev_addr);
	}
	rsim_dp_deliver(x, &wc);
	return IB_WC_SUCCESS;
}

static void rsim_dp_account(struct rsim_dev *rsim,
			    const struct rsim_dp_stats *did);
static void rsim_dp_release(struct rsim_exec *x);

/* the packets a WR's message takes: path-MTU packets, at least one */
static u64 rsim_dp_pkts(const struct rsim_exec *x)
{
	return max_t(u64, 1, DIV_ROUND_UP_ULL(x->len,
					      ib_mtu_enum_to_int(x->mtu)));
}

/* Is a UD datagram for a multicast group? */
static bool rsim_dp_ud_is_mcast(struct rsim_exec *x)
{
	const struct rdma_ah_attr *ah = &x->wqe->ah;
	u16 dlid = rdma_ah_get_dlid(ah);

	if (rsim_is_roce(x->rsim))
		return rdma_ah_read_grh(ah)->dgid.raw[0] == 0xff;
	return dlid >= be16_to_cpu(IB_MULTICAST_LID_BASE) &&
	       dlid != be16_to_cpu(IB_LID_PERMISSIVE);
}

/*
 * A multicast datagram (mcast_dp.c says who receives it): each receiver
 * checks the Q_Key and P_Key and takes a receive WR as for unicast, its
 * completion handlers run (or are queued) before the next receiver's
 * turn, its port counts what it received. The SEND succeeds whoever
 * received it; only a failure on the sender's side (its gather list)
 * fails it.
 */
static int rsim_dp_ud_mcast(struct rsim_exec *x, bool has_grh, int net_type,
			    const struct ib_grh *grh)
{
	const struct rdma_ah_attr *ah = &x->wqe->ah;
	u64 pkts = rsim_dp_pkts(x);
	struct rsim_mc_dest *dest;
	int n, i, ret = IB_WC_SUCCESS;

	x->mcast = true;
	if (x->wqe->remote_qpn != IB_MULTICAST_QPN ||
	    !rsim_port_passes(x->rsim, IB_QPT_UD))
		return RSIM_EXEC_DROP;
	dest = kmalloc_array(RSIM_MC_FANOUT, sizeof(*dest), GFP_ATOMIC);
	if (!dest)
		return RSIM_EXEC_DROP;
	n = rsim_mcast_dests(x->rsim, !x->qp->mc_no_loopback,
			     rdma_ah_get_dlid(ah),
			     has_grh ? &rdma_ah_read_grh(ah)->dgid : NULL, dest,
			     RSIM_MC_FANOUT);
	for (i = 0; i < n; i++) {
		struct rsim_dp_stats rcv = {};
		struct rsim_qp *q;

		if (dest[i].rsim != x->rsim &&
		    !rsim_port_passes(dest[i].rsim, IB_QPT_UD))
			continue;
		q = rsim_qp_get(dest[i].rsim, dest[i].qpn);
		if (!q)
			continue;
		/* the number the group had may have gone to another QP */
		if (q->serial != dest[i].serial || READ_ONCE(q->dying) ||
		    !rsim_qp_receives(READ_ONCE(q->state))) {
			rsim_qp_put(q);
			continue;
		}
		x->prsim = dest[i].rsim;
		x->peer = rsim_dp_ud_accept(x, q);
		if (!x->peer)
			continue;
		ret = rsim_dp_ud_land(x, has_grh, net_type, grh,
				      rsim_dp_inline(x->wqe));
		if (ret == IB_WC_SUCCESS) {
			rcv.port.rcv_data = x->len;
			rcv.port.rcv_pkts = pkts;
			rsim_dp_account(x->prsim, &rcv);
		}
		rsim_notify_run(&x->n, x->worker ? NULL : x->qp);
		rsim_mr_refs_put(x->qp->rrefs, x->nr);
		x->nr = 0;
		rsim_qp_put(x->peer);
		x->peer = NULL;
		if (ret != IB_WC_SUCCESS && ret != RSIM_EXEC_DROP)
			break;
		ret = IB_WC_SUCCESS;
	}
	rsim_mcast_dests_put(dest, n);
	kfree(dest);
	return ret;
}

/*
 * A MAD from QP0 or QP1 of a port in the fabric (fabric.c): the device
 * reads it into a buffer of its own (rsim_dp_mad_rx()), and the fabric
 * carries it, through the switches' forwarding tables or, a
 * directed-route SMP, hop by hop; a switch on the way may answer it in
 * place (its SMA or PMA), and the answer comes back to the sender. Where
 * it lands it is received as any datagram for QP0 or QP1.
 */
static int rsim_dp_fabric_mad(struct rsim_exec *x, bool has_grh,
			      int net_type, const struct ib_grh *grh)
{
	struct rsim_puda_pool *pool = x->rsim->mad_pool;
	enum ib_qp_type type = x->qp->ibqp.qp_type;
	struct rsim_fab_hit hit;
	struct rsim_puda_buf *buf;
	struct rsim_qp *dest;
	int ret;

	if (!rsim_port_passes(x->rsim, type))
		return RSIM_EXEC_DROP;
	x->prsim = x->rsim;
	buf = rsim_dp_mad_rx(x, has_grh ? grh : NULL, &ret);
	if (!buf)
		return ret;
	ret = RSIM_EXEC_DROP;
	if (rsim_fabric_mad(x->rsim, x->qp->ibqp.qp_num, x->wqe->remote_qpn,
			    rdma_ah_get_dlid(&x->wqe->ah),
			    buf->data + RSIM_UD_GRH, x->len, &hit))
		goto put_buf;
	if (hit.ca != x->rsim && !rsim_port_passes(hit.ca, type))
		goto put_ca;
	dest = rsim_qp_get(hit.ca, hit.qpn);
	if (!dest)
		goto put_ca;
	if (READ_ONCE(dest->dying) || !rsim_qp_receives(READ_ONCE(dest->state))) {
		rsim_qp_put(dest);
		goto put_ca;
	}
	x->prsim = hit.ca;
	x->peer = rsim_dp_ud_accept(x, dest);
	if (!x->peer)
		goto put_ca;
	x->fab = true;
	x->fab_slid = hit.slid;
	ret = rsim_dp_ud_land(x, has_grh, net_type, buf->data,
			      buf->data + RSIM_UD_GRH);
	x->fab = false;
put_ca:
	rsim_subnet_put(x->rsim, hit.ca);
put_buf:
	rsim_puda_put(pool, buf);
	return ret;
}

/*
 * The sender of what the fabric sends unasked (rsim_dp_mad_inject()): a
 * QP of no device, only its scratch (the receive WR taken, the checked
 * scatter list); one MAD at a time under its lock
 */
static struct rsim_qp *rsim_dp_wire_qp;
/* protects rsim_dp_wire_qp's scratch while a MAD lands; BH off */
static DEFINE_SPINLOCK(rsim_dp_wire_lock);

/**
 * rsim_dp_wire_init() - the fabric's sender of unasked MADs
 *
 * Context: process (module load).
 * Return: 0 or -ENOMEM.
 */
int rsim_dp_wire_init(void)
{
	struct rsim_qp *qp = kzalloc(sizeof(*qp), GFP_KERNEL);

	if (!qp)
		return -ENOMEM;
	qp->lrefs = kcalloc(RSIM_RECV_SGE_CEIL, sizeof(*qp->lrefs),
			    GFP_KERNEL);
	qp->rrefs = qp->lrefs;
	qp->rwqe = kzalloc(struct_size(qp->rwqe, sge, RSIM_RECV_SGE_CEIL),
			   GFP_KERNEL);
	if (!qp->lrefs || !qp->rwqe) {
		kfree(qp->rwqe);
		kfree(qp->lrefs);
		kfree(qp);
		return -ENOMEM;
	}
	spin_lock_init(&qp->lock);
	qp->ibqp.qp_type = IB_QPT_SMI;
	qp->state = IB_QPS_RTS;
	rsim_dp_wire_qp = qp;
	return 0;
}

/**
 * rsim_dp_wire_exit() - free it (module unload, no device left)
 *
 * Context: process.
 */
void rsim_dp_wire_exit(void)
{
	struct rsim_qp *qp = rsim_dp_wire_qp;

	if (!qp)
		return;
	kfree(qp->rwqe);
	kfree(qp->lrefs);
	kfree(qp);
	rsim_dp_wire_qp = NULL;
}

/**
 * rsim_dp_mad_inject() - a MAD the fabric sends unasked lands on a CA
 * @to: the CA, held by the caller
 * @qpn: its QP, 0 (SMI) or 1 (GSI)
 * @mad: the MAD (a switch's trap)
 * @len: its length
 * @slid: the LID it comes from
 *
 * Received on @to's QP @qpn as a datagram from QP @qpn of the sender: a
 * receive WR taken (none: the MAD is lost), its completion with the
 * sender's LID. The CQ's handler runs from the device's event work, not
 * here.
 *
 * Context: process or softirq; takes BH-off locks.
 * Return: 0 if it landed; -ENOENT if it was lost.
 */
int rsim_dp_mad_inject(struct rsim_dev *to, u32 qpn, const void *mad,
		       u32 len, u16 slid)
{
	struct rsim_send_wqe wqe = { .opcode = IB_WR_SEND };
	struct rsim_exec x = {
		.rsim = to, .prsim = to, .wqe = &wqe, .worker = true,
		.len = len, .fab = true, .fab_slid = slid,
	};
	struct rsim_qp *dest;
	int ret = -ENOENT;

	if (!rsim_dp_wire_qp || len > IB_MGMT_MAD_SIZE ||
	    !rsim_port_passes(to, qpn ? IB_QPT_GSI : IB_QPT_SMI))
		return -ENOENT;
	dest = rsim_qp_get(to, qpn);
	if (!dest)
		return -ENOENT;
	if (READ_ONCE(dest->dying) || !rsim_qp_receives(READ_ONCE(dest->state))) {
		rsim_qp_put(dest);
		return -ENOENT;
	}
	spin_lock_bh(&rsim_dp_wire_lock);
	x.qp = rsim_dp_wire_qp;
	x.qp->ibqp.qp_num = qpn;
	x.qp->ibqp.qp_type = qpn ? IB_QPT_GSI : IB_QPT_SMI;
	x.peer = dest;
	if (rsim_dp_ud_land(&x, false, 0, NULL, mad) == IB_WC_SUCCESS)
		ret = 0;
	rsim_dp_release(&x);
	spin_unlock_bh(&rsim_dp_wire_lock);
	rsim_notify_run(&x.n, NULL);
	return ret;
}

/*
 * A UD SEND: at most one path MTU; the receive WR gets the GRH's 40 bytes
 * (written only if the address vector has a GRH) and then the payload.
 * No RNR: without a receive WR the message is lost. Datagrams for QP0 and
 * QP1 pass through the device's MAD receive queue (rsim_dp_mad_rx()); a
 * datagram to a multicast LID reaches the group's receivers
 * (rsim_dp_ud_mcast()).
 */
static int rsim_dp_exec_ud(struct rsim_exec *x)
{
	struct rsim_send_wqe *wqe = x->wqe;
	bool has_grh = rdma_ah_get_ah_flags(&wqe->ah) & IB_AH_GRH;
	struct rsim_puda_buf *buf = NULL;
	struct rsim_puda_pool *pool;
	const void *grh_src, *inl;
	int ret, net_type = 0;
	struct ib_grh grh;

	ret = rsim_dp_gather(x);
	if (ret)
		return ret;
	if (x->len > ib_mtu_enum_to_int(x->mtu))
		return IB_WC_LOC_LEN_ERR;
	ret = rsim_dp_steer(x);
	if (ret)
		return ret;
	if (has_grh) {
		net_type = rsim_dp_ud_grh(x, &grh);
		if (net_type < 0)
			return RSIM_EXEC_DROP;
	}
	if (rsim_qp_is_special(x->qp) && rsim_fabric_member(x->rsim))
		return rsim_dp_fabric_mad(x, has_grh, net_type, &grh);
	if (rsim_dp_ud_is_mcast(x)) {
		ret = rsim_dp_odp_move(x, NULL);
		if (ret)
			return ret;
		return rsim_dp_ud_mcast(x, has_grh, net_type, &grh);
	}
	x->peer = rsim_dp_ud_dest(x);
	if (!x->peer)
		return RSIM_EXEC_DROP;
	ret = rsim_dp_odp_move(x, x->peer);
	if (ret)
		return ret;
	grh_src = &grh;
	inl = rsim_dp_inline(wqe);
	pool = x->prsim->mad_pool;
	if (rsim_qp_is_special(x->peer)) {
		buf = rsim_dp_mad_rx(x, has_grh ? &grh : NULL, &ret);
		if (!buf)
			return ret;
		grh_src = buf->data;
		inl = buf->data + RSIM_UD_GRH;
	}
	ret = rsim_dp_ud_land(x, has_grh, net_type, grh_src, inl);
	if (buf)
		rsim_puda_put(pool, buf);
	return ret;
}

/*
 * An XRC TGT QP's XRC SRQ: every message to one
 * names an SRQ of the TGT QP's domain (IBA 9.14.3: the XRCETH), whose PD
 * its accesses are checked in and whose receive WRs a SEND takes. A
 * number that names none is an invalid request; the TGT QP stays as it
 * is.
 */
static int rsim_dp_xrc(struct rsim_exec *x)
{
	struct rsim_qp *peer = x->peer;

	if (peer->ibqp.qp_type != IB_QPT_XRC_TGT)
		return 0;
	x->xrc = true;
	x->xsrq = rsim_xsrq_get(x->prsim, x->wqe->xrc_srqn, peer->ibqp.xrcd);
	if (!x->xsrq)
		return IB_WC_REM_INV_REQ_ERR;
	/* no remote invalidation through XRC: the TGT QP has no PD */
	if (x->wqe->opcode == IB_WR_SEND_WITH_INV)
		return IB_WC_REM_INV_REQ_ERR;
	return 0;
}

/*
 * Execute the send WR at the head of the queue. Returns an IB_WC_*
 * status for the requester, RSIM_EXEC_WAIT (RNR NAK) or RSIM_EXEC_DROP
 * (UC, UD: lost, the WR succeeds).
 */
static int rsim_dp_exec(struct rsim_exec *x)
{
	struct rsim_send_wqe *wqe = x->wqe;
	int ret;

	/* a mapped send queue's WR that broke a posting rule (usq.c) */
	if (wqe->bad)
		return IB_WC_LOC_QP_OP_ERR;
	if (rsim_qp_is_ud(x->qp))
		return rsim_dp_exec_ud(x);
	switch (wqe->opcode) {
	case IB_WR_REG_MR:
		return rsim_mr_fast_reg(x->rsim, x->qp->ibqp.pd, wqe->mr,
					wqe->key, wqe->access);
	case IB_WR_LOCAL_INV:
		return rsim_mr_invalidate(x->rsim, x->qp, wqe->inv, false);
	case IB_WR_BIND_MW:
		return rsim_mw_bind(x->rsim, x->qp, &wqe->bind);
	default:
		break;
	}

	ret = rsim_dp_gather(x);
	if (ret)
		return ret;
	x->peer = rsim_dp_peer_get(x);
	if (!x->peer)
		/* RC retries until retry_cnt is spent; UC loses the message */
		return x->rc ? RSIM_EXEC_NOACK : RSIM_EXEC_DROP;
	ret = rsim_dp_xrc(x);
	if (ret)
		return ret;
	if (rsim_dp_is_rdma(wqe->opcode)) {
		ret = rsim_dp_check_rkey(x);
		if (ret)
			return ret;
	}
	ret = rsim_dp_steer(x);
	if (ret)
		return ret;
	ret = rsim_dp_odp_move(x, x->peer);
	if (ret)
		return ret;
#if IS_ENABLED(CONFIG_KUNIT)
	if (x->rsim->dp_peer_hook)
		x->rsim->dp_peer_hook(x->qp, x->peer);
#endif
	if (rsim_dp_needs_recv(wqe->opcode)) {
		ret = rsim_dp_take_recv(x);
		if (ret)
			return ret;
	}
	ret = rsim_dp_move(x);
	if (ret)
		return ret;
	if (wqe->opcode == IB_WR_SEND_WITH_INV &&
	    rsim_mr_invalidate(x->prsim, x->peer, wqe->inv, true))
		return rsim_dp_resp_fail(x, IB_WC_REM_INV_REQ_ERR,
					 IB_WC_REM_INV_REQ_ERR);
	if (x->took) {
		struct ib_wc wc = { .byte_len = x->len, .sl = x->sl };

		rsim_dp_deliver(x, &wc);
	}
	return IB_WC_SUCCESS;
}

/* ---- the run loop ---- */

/* the &enum rsim_dp_op of a send WR's opcode */
static enum rsim_dp_op rsim_dp_op_of(enum ib_wr_opcode op)
{
	/* not case labels: before 6.2 the enum has no such values */
	if (op == RSIM_WR_ATOMIC_WRITE)
		return RSIM_OP_ATOMIC_WRITE;
	if (op == RSIM_WR_FLUSH)
		return RSIM_OP_FLUSH;
	switch (op) {
	case IB_WR_SEND_WITH_INV:
		return RSIM_OP_SEND_INV;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return RSIM_OP_WRITE;
	case IB_WR_RDMA_READ:
		return RSIM_OP_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return RSIM_OP_ATOMIC;
	case IB_WR_REG_MR:
		return RSIM_OP_REG_MR;
	case IB_WR_LOCAL_INV:
		return RSIM_OP_LOCAL_INV;
	case IB_WR_BIND_MW:
		return RSIM_OP_BIND_MW;
	default:
		return RSIM_OP_SEND;
	}
}

/* a delivered message: the data path and port counters */
static void rsim_dp_count(struct rsim_exec *x, int status,
			  struct rsim_dp_stats *did)
{
	struct rsim_port_counters *c = &did->port;
	u64 pkts = rsim_dp_pkts(x);
	bool data = x->wqe->opcode != IB_WR_REG_MR &&
		    x->wqe->opcode != IB_WR_LOCAL_INV &&
		    x->wqe->opcode != IB_WR_BIND_MW;
	unsigned int i;

	did->wqes++;
	did->dmah_steered += x->steered;
	did->dmah_pmem_bytes += x->pmem_bytes;
	for (i = 0; i < ARRAY_SIZE(did->dmah_ph); i++)
		did->dmah_ph[i] += !!(x->ph & BIT(i));
	if (status != IB_WC_SUCCESS) {
		did->errors++;
		return;
	}
	did->ops[rsim_dp_op_of(x->wqe->opcode)]++;
	if (data) {
		did->bytes += x->len;
		c->xmit_data += x->len;
		c->rcv_data += x->len;
		c->xmit_pkts += pkts;
		c->rcv_pkts += pkts;
	}
}

/* Add what a run did to the device's counters. */
static void rsim_dp_account(struct rsim_dev *rsim,
			    const struct rsim_dp_stats *did)
{
	struct rsim_dp_stats *dp = &rsim->dp;
	unsigned int i;

	spin_lock_bh(&rsim->stats_lock);
	dp->wqes += did->wqes;
	dp->bytes += did->bytes;
	dp->errors += did->errors;
	dp->rnr_waits += did->rnr_waits;
	dp->rnr_retries += did->rnr_retries;
	dp->ack_timeouts += did->ack_timeouts;
	dp->inline_runs += did->inline_runs;
	dp->deferred += did->deferred;
	dp->worker_runs += did->worker_runs;
	dp->dmah_moves += did->dmah_moves;
	dp->odp_moves += did->odp_moves;
	dp->dmah_steered += did->dmah_steered;
	dp->dmah_pmem_bytes += did->dmah_pmem_bytes;
	for (i = 0; i < ARRAY_SIZE(dp->dmah_ph); i++)
		dp->dmah_ph[i] += did->dmah_ph[i];
	for (i = 0; i < ARRAY_SIZE(dp->ops); i++)
		dp->ops[i] += did->ops[i];
	dp->port.xmit_data += did->port.xmit_data;
	dp->port.rcv_data += did->port.rcv_data;
	dp->port.xmit_pkts += did->port.xmit_pkts;
	dp->port.rcv_pkts += did->port.rcv_pkts;
	spin_unlock_bh(&rsim->stats_lock);
}

/* Drop what the step held: checked ranges and the responder. */
static void rsim_dp_release(struct rsim_exec *x)
{
	rsim_mr_refs_put(x->qp->lrefs, x->nl);
	rsim_mr_refs_put(x->qp->rrefs, x->nr);
	rsim_mr_refs_put(&x->rref, 1);
	x->nl = 0;
	x->nr = 0;
	if (x->xsrq)
		rsim_xsrq_put(x->xsrq);
	x->xsrq = NULL;
	if (x->peer)
		rsim_qp_put(x->peer);
	x->peer = NULL;
}

/*
 * The owner gives the queue up (to nobody, the worker or the RNR wait)
 * and whoever waits for that (rsim_dp_stop()) is woken.
 */
static void rsim_dp_leave_locked(struct rsim_qp *qp, enum rsim_sq_owner to)
{
	lockdep_assert_held(&qp->lock);
#if IS_ENABLED(CONFIG_KUNIT)
	if (to_rsim_dev(qp->ibqp.device)->dp_leave_hook)
		to_rsim_dev(qp->ibqp.device)->dp_leave_hook(qp);
#endif
	if (to == RSIM_SQ_IDLE)
		rsim_dp_idle_locked(qp);
	else
		qp->owner = to;
	/* the WR in execution was the last outstanding one: SQD drained */
	if (qp->sqd_notify && qp->state == IB_QPS_SQD) {
		qp->sqd_notify = false;
		rsim_ev_queue(to_rsim_dev(qp->ibqp.device), &qp->ev,
			      BIT(IB_EVENT_SQ_DRAINED));
	}
	/* rsim_dp_stop() reads @owner without the lock: wake_up_var() */
	smp_mb();
	wake_up_var(&qp->owner);
}

static void rsim_dp_setup(struct rsim_qp *qp, struct rsim_budget *b,
			  struct rsim_exec *x, struct rsim_send_wqe *wqe);

/*
 * Look at the head of the send queue: set @x up to execute it and return
 * true, or give the queue up and return false (empty, not in RTS, flushed
 * in the error state into @n, or the budget is spent: then to the
 * worker). The QP lock is held.
 */
static bool rsim_dp_next_locked(struct rsim_qp *qp, struct rsim_budget *b,
				struct rsim_exec *x, struct rsim_notify *n)
{
	struct rsim_send_wqe *wqe;

	lockdep_assert_held(&qp->lock);
	if (qp->dying || qp->state != IB_QPS_RTS || !qp->sq.count) {
		/* the owner flushes its own queue, exactly once */
		if (qp->state == IB_QPS_ERR)
			rsim_qp_flush_sq_locked(qp, n);
		rsim_dp_leave_locked(qp, RSIM_SQ_IDLE);
		return false;
	}
	wqe = rsim_wqe(&qp->sq, 0);
	if (!b->wrs || ((s64)wqe->len > b->bytes && (!b->worker || b->ran))) {
		rsim_dp_leave_locked(qp, RSIM_SQ_QUEUED);
		rsim_dp_queue_locked(qp, 0);
		return false;
	}
	rsim_dp_setup(qp, b, x, wqe);
	return true;
}

/*
 * The first WR of a run that a post has just claimed, read without the
 * lock: only the owner moves the head, and the post saw it under the lock.
 * The attributes are read as a packet meets them; a modify_qp racing the
 * post may or may not be seen. Returns false if the WR is too large to run
 * here: rsim_dp_next_locked() hands it to the worker.
 */
static bool rsim_dp_first(struct rsim_qp *qp, struct rsim_budget *b,
			  struct rsim_exec *x)
{
	struct rsim_send_wqe *wqe = rsim_wqe(&qp->sq, 0);

	if ((s64)wqe->len > b->bytes)
		return false;
	rsim_dp_setup(qp, b, x, wqe);
	return true;
}

/* the requester's side of a WR: what it needs of the QP's attributes */
static void rsim_dp_setup(struct rsim_qp *qp, struct rsim_budget *b,
			  struct rsim_exec *x, struct rsim_send_wqe *wqe)
{
	*x = (struct rsim_exec){
		.rsim = to_rsim_dev(qp->ibqp.device),
		.qp = qp,
		.wqe = wqe,
		.rc = rsim_qp_is_rc(qp),
		.worker = b->worker,
		.dlid = rdma_ah_get_dlid(&qp->attr.ah_attr),
		.grh = qp->attr.ah_attr.grh,
		.dest_qpn = qp->attr.dest_qp_num,
		.sl = rdma_ah_get_sl(&qp->attr.ah_attr),
		/* UD messages are one packet of at most the port's MTU */
		.mtu = rsim_qp_is_ud(qp) ?
		       READ_ONCE(to_rsim_dev(qp->ibqp.device)->port.mtu) :
		       qp->attr.path_mtu,
		.rnr_retry = qp->attr.rnr_retry,
		.timeout = qp->attr.timeout,
		.retry_cnt = qp->attr.retry_cnt,
		.pkey_index = qp->attr.pkey_index,
		.moved = READ_ONCE(qp->steer_cpu) >= 0,
	};
}

/*
 * Wait for the send queue's head to be retried (the owner becomes
 * RSIM_SQ_RNR), for one of two reasons:
 *
 * - an RNR NAK (@ack false): wait for a receive WR (rnr_retry 7), or
 *   retry when the responder's RNR timer expires until rnr_retry retries
 *   are spent;
 * - no responder answered an RC request (@ack true: none exists, it is
 *   not connected back, not ready to receive, or its P_Key does not
 *   match): retry when the transport timer expires (rsim_ack_delay())
 *   until retry_cnt retries are spent; timeout 0 waits for ever.
 *
 * The timers have a jiffy's granularity at least. The first try of a WR
 * and each retry the timer started count; a retry its responder's
 * wake-up started (rsim_dp_wake_qpn()) does not, and leaves an armed
 * timer as it is. Returns false if the WR must complete with
 * IB_WC_RNR_RETRY_EXC_ERR (or IB_WC_RETRY_EXC_ERR) instead.
 */
static bool rsim_dp_park(struct rsim_exec *x, struct rsim_budget *b,
			 bool ack)
{
	struct rsim_qp *qp = x->qp;
	u8 *tries = ack ? &qp->ack_tries : &qp->rnr_tries;
	u8 limit = ack ? x->retry_cnt : x->rnr_retry;
	bool forever = ack ? !x->timeout : x->rnr_retry == RSIM_RNR_INFINITE;
	/*
	 * no post wakes an XRC requester (its TGT QP may meet many SRQs):
	 * with rnr_retry 7 it retries on its RNR timer, for ever
	 */
	bool timer = !forever || (!ack && x->xrc);
	unsigned long delay, flags;
	bool first, counts;

	spin_lock_irqsave(&qp->lock, flags);
	first = !*tries;
	counts = first || b->rnr_timer;
	if (!forever && counts && *tries >= limit) {
		spin_unlock_irqrestore(&qp->lock, flags);
		return false;
	}
	/*
	 * Its responder woke it while it ran (after the take that found no
	 * receive WR, before this): a wake-up nobody would repeat. The wait
	 * ends at once: a retry on the worker, uncounted.
	 */
	if (qp->rnr_wake) {
		qp->rnr_wake = false;
		rsim_dp_leave_locked(qp, RSIM_SQ_QUEUED);
		rsim_dp_queue_locked(qp, 0);
		spin_unlock_irqrestore(&qp->lock, flags);
		return true;
	}
	rsim_dp_leave_locked(qp, RSIM_SQ_RNR);
	qp->ack_wait = ack;
	if (!timer) {
		*tries = 1;
	} else {
		delay = ack ? rsim_ack_delay(x->timeout) :
			usecs_to_jiffies(rsim_rnr_usec[x->rnr_timer]);
		*tries = forever ? 1 : *tries + counts;
		/* uncounted: the timer goes on as it was, or anew if it fired */
		rsim_dp_arm_locked(qp, delay, !counts);
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	if (first && !ack)
		b->did.rnr_waits++;
	return true;
}

/*
 * The owner of a mapped send queue takes what its process published, if
 * the kernel's queue is empty (qp.c).
 */
static void rsim_dp_pull(struct rsim_qp *qp, struct rsim_budget *b)
{
	struct rsim_notify n = {};
	bool fatal;

	if (!qp->sq.uslot)
		return;
	fatal = rsim_qp_pull_sq(qp, &n);
	rsim_dp_notify(&n, b, qp);
	if (fatal)
		rsim_qp_raise(qp, IB_EVENT_QP_FATAL, b->worker ? NULL : qp);
}

/*
 * Complete the WR @x executed with @status and, in the same critical
 * section, look at the next one (into @nx). Returns false if the run
 * stops: the queue was given up, or the WR waits for an RNR retry.
 */
static bool rsim_dp_finish(struct rsim_exec *x, int status,
			   struct rsim_budget *b, struct rsim_exec *nx)
{
	struct rsim_qp *qp = x->qp;
	struct rsim_send_wqe *wqe = x->wqe;
	struct rsim_dp_stats wr_did = {};
	unsigned long flags;
	bool more, empty;

#if IS_ENABLED(CONFIG_KUNIT)
	if (x->rsim->dp_test_hook)
		x->rsim->dp_test_hook(qp, status);
#endif
	if (status == RSIM_EXEC_WAIT || status == RSIM_EXEC_NOACK) {
		bool ack = status == RSIM_EXEC_NOACK;

		rsim_dp_notify(&x->n, b, qp);
		rsim_dp_release(x);
		if (rsim_dp_park(x, b, ack))
			return false;
		status = ack ? IB_WC_RETRY_EXC_ERR : IB_WC_RNR_RETRY_EXC_ERR;
	}
	if (status == RSIM_EXEC_MOVE) {
		rsim_dp_notify(&x->n, b, qp);
		rsim_dp_release(x);
		spin_lock_irqsave(&qp->lock, flags);
		qp->steer_cpu = x->steer_cpu;
		rsim_dp_leave_locked(qp, RSIM_SQ_QUEUED);
		rsim_dp_queue_locked(qp, 0);
		spin_unlock_irqrestore(&qp->lock, flags);
		if (x->odp_move)
			b->did.odp_moves++;
		else
			b->did.dmah_moves++;
		return false;
	}
	if (status == RSIM_EXEC_DROP)
		status = IB_WC_SUCCESS;
	/*
	 * The WR's counts reach the device's counters before its completion
	 * is seen (the run's own counts wait for its end): whoever polls a
	 * completion and then reads the port counters finds it counted.
	 */
	rsim_dp_count(x, status, &wr_did);
	/*
	 * What arrived counts at the receiving port, if it arrived (RoCE
	 * counts nothing received at the sender even on one device)
	 */
	if (x->mcast) {
		/* each receiving port counted its own copy */
		wr_did.port.rcv_data = 0;
		wr_did.port.rcv_pkts = 0;
	} else if (rsim_is_roce(x->rsim) || (x->peer && x->prsim != x->rsim)) {
		struct rsim_dp_stats rcv = {};

		swap(rcv.port.rcv_data, wr_did.port.rcv_data);
		swap(rcv.port.rcv_pkts, wr_did.port.rcv_pkts);
		if (x->peer)
			rsim_dp_account(x->prsim, &rcv);
	}
	rsim_dp_account(x->rsim, &wr_did);
	b->wrs--;
	b->bytes -= x->len;
	b->ran = true;

	spin_lock_irqsave(&qp->lock, flags);
	/* a WR cut short by a transition to RESET completes with nothing */
	if (qp->state == IB_QPS_RESET) {
		rsim_wq_pop(&qp->sq);
	} else {
		bool signal = status != IB_WC_SUCCESS || qp->sq_sig_all ||
			      (wqe->send_flags & IB_SEND_SIGNALED);
		struct ib_wc wc = {
			.wr_id = wqe->wr_id,
			.status = status,
			.opcode = rsim_wc_opcode(wqe->opcode),
			.byte_len = x->len,
			.qp = &qp->ibqp,
		};

		/*
		 * The WR's slot first (a mapped queue's consumer index), then
		 * its completion: a process that polled the completion may
		 * post into the slot at once, from another CPU than the one
		 * executing here (perftest keeps tx_depth WRs in flight by
		 * its completions).
		 */
		rsim_wq_pop(&qp->sq);
		if (signal)
			rsim_qp_push(&x->n, qp, qp->ibqp.send_cq, &wc, false);
		/* the rest of the send queue: rsim_dp_next_locked() flushes it */
		if (status != IB_WC_SUCCESS)
			rsim_qp_error_locked(qp, &x->n);
	}
	qp->rnr_tries = 0;
	qp->ack_tries = 0;
	/* a wake-up meant for this WR's wait; the next WR's take is later */
	qp->rnr_wake = false;
	qp->steer_cpu = -1;
	empty = !qp->sq.count;
	spin_unlock_irqrestore(&qp->lock, flags);

	/* handlers run while the responder is still held */
	rsim_dp_notify(&x->n, b, qp);
	/*
	 * The queue is still ours: let go of what the WR held (the QP's
	 * scratch lists among it) before the next look at the head can give
	 * the queue up to another owner.
	 */
	rsim_dp_release(x);
	if (empty)
		rsim_dp_pull(qp, b);
	spin_lock_irqsave(&qp->lock, flags);
	more = rsim_dp_next_locked(qp, b, nx, &x->n);
	spin_unlock_irqrestore(&qp->lock, flags);
	rsim_dp_notify(&x->n, b, qp);
	return more;
}

/*
 * Run the send queue the caller owns until it is given up; @claimed: a
 * post has just claimed it with a WR at the head (not a mapped queue's
 * doorbell, which may find only the ring's).
 */
static void rsim_dp_process(struct rsim_qp *qp, struct rsim_budget *b,
			    bool claimed)
{
	struct rsim_exec xs[2], *x = &xs[0];
	struct rsim_notify n = {};
	unsigned long flags;
	bool more;

	if (qp->sq.uslot) {
		rsim_dp_pull(qp, b);
		claimed = false;
	}
	more = claimed && rsim_dp_first(qp, b, x);
	if (!more) {
		spin_lock_irqsave(&qp->lock, flags);
		more = rsim_dp_next_locked(qp, b, x, &n);
		spin_unlock_irqrestore(&qp->lock, flags);
		rsim_dp_notify(&n, b, qp);
	}
	while (more) {
		struct rsim_exec *nx = x == &xs[0] ? &xs[1] : &xs[0];

		more = rsim_dp_finish(x, rsim_dp_exec(x), b, nx);
		x = nx;
		if (b->worker)
			cond_resched();
	}
	rsim_dp_account(to_rsim_dev(qp->ibqp.device), &b->did);
}

/**
 * rsim_dp_run() - execute a send queue the caller has claimed
 * @qp: the QP (rsim_dp_claim_locked() returned true)
 *
 * Context: process or softirq, interrupts on; does not sleep.
 */
void rsim_dp_run(struct rsim_qp *qp)
{
	struct rsim_budget b = {
		.bytes = RSIM_DP_INLINE_BYTES,
		.wrs = RSIM_DP_INLINE_WRS,
		.did.inline_runs = 1,
	};

	rsim_dp_process(qp, &b, true);
}

/**
 * rsim_dp_work() - the device worker's run of one QP
 * @work: &rsim_qp.work
 *
 * Runs a send queue handed over by rsim_dp_claim_locked() or a spent
 * budget, or retries a SEND whose RNR timer expired, or an RC WR whose
 * transport timer did.
 *
 * Context: process (workqueue); may sleep.
 */
void rsim_dp_work(struct work_struct *work)
{
	struct rsim_qp *qp = container_of(to_delayed_work(work),
					  struct rsim_qp, work);
	struct rsim_budget b = {
		.bytes = RSIM_DP_WORKER_BYTES,
		.wrs = RSIM_DP_WORKER_WRS,
		.worker = true,
		.did.worker_runs = 1,
	};
	bool retry = false, ack = false;

	spin_lock_irq(&qp->lock);
	if (qp->stopping) {
		/* rsim_dp_stop() cancels this work and finds the owner as is */
		spin_unlock_irq(&qp->lock);
		return;
	}
	if (qp->owner == RSIM_SQ_RNR) {
		retry = true;
		ack = qp->ack_wait;
	} else if (qp->owner != RSIM_SQ_QUEUED) {
		spin_unlock_irq(&qp->lock);
		return;
	}
	qp->owner = RSIM_SQ_RUNNING;
	spin_unlock_irq(&qp->lock);

	b.rnr_timer = retry;
	b.did.rnr_retries = retry && !ack;
	b.did.ack_timeouts = ack;
	b.did.deferred = !retry;
	rsim_dp_process(qp, &b, false);
}

/**
 * rsim_dp_wake_qpn() - a requester waiting for an RNR retry may go on
 * @rsim: the responder's device
 * @dlid: InfiniBand: the responder's path's destination LID, which
 *	routes the wake-up to the requester's device (rsim_dp_route())
 * @dgid: RoCE: the path's destination GID, which routes it instead
 * @qpn: the requester's QP number
 * @from: the QP number of the responder that calls
 * @inl: the caller is the device's own context (the responder's
 *	@wake_work), which may run the retry itself; a verb of the
 *	responder's hands it to the requester's worker instead, as it runs
 *	no other QP's queue
 *
 * Called when its responder posted a receive WR, changed state or is
 * being destroyed: the waiting SEND is retried now. Only the requester's
 * own responder wakes it: a QP that merely names it as its destination
 * does not. A retry that meets the RNR NAK again does not count against
 * rnr_retry (only the RNR timer's expiries do).
 *
 * Context: process or softirq, interrupts on (the QP table's lock).
 */
void rsim_dp_wake_qpn(struct rsim_dev *rsim, u16 dlid,
		      const union ib_gid *dgid, u32 qpn, u32 from, bool inl)
{
	struct rsim_dev *to;
	unsigned long flags;
	struct rsim_qp *qp;
	bool run = false;

	to = rsim_dp_route(rsim, dlid, dgid, 0);
	if (!to)
		return;
	qp = rsim_qp_get(to, qpn);
	rsim_dp_route_put(rsim, to);
	if (!qp)
		return;
	inl = inl && rsim_dp_may_run_inline();
	spin_lock_irqsave(&qp->lock, flags);
	if (!qp->stopping && (qp->ibqp.qp_type == IB_QPT_RC ||
			      qp->ibqp.qp_type == IB_QPT_XRC_INI) &&
	    qp->attr.dest_qp_num == from) {
		if (qp->owner == RSIM_SQ_RNR) {
			qp->owner = RSIM_SQ_IDLE;
			run = rsim_dp_claim_locked(qp, inl);
			if (qp->owner == RSIM_SQ_IDLE)
				rsim_dp_idle_locked(qp);
		} else if (qp->owner != RSIM_SQ_IDLE) {
			/* it runs: if it is about to park, it retries instead */
			qp->rnr_wake = true;
		}
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	if (run)
		rsim_dp_run(qp);
	rsim_qp_put(qp);
}

/* rsim_dp_wake_qpn() for the requester @qp is connected to now */
static void rsim_dp_wake_peer(struct rsim_qp *qp, bool inl)
{
	unsigned long flags;
	union ib_gid dgid;
	u32 qpn;
	u16 dlid;

	spin_lock_irqsave(&qp->lock, flags);
	qpn = qp->attr.dest_qp_num;
	dgid = qp->attr.ah_attr.grh.dgid;
	dlid = rdma_ah_get_dlid(&qp->attr.ah_attr);
	spin_unlock_irqrestore(&qp->lock, flags);
	rsim_dp_wake_qpn(to_rsim_dev(qp->ibqp.device), dlid, &dgid, qpn,
			 qp->ibqp.qp_num, inl);
}

/**
 * rsim_dp_wake_requester() - wake the requester @qp is connected to
 * @qp: a responder that posted a receive WR
 *
 * The retry runs on the requester's worker. From hard-IRQ context or
 * with interrupts off, the QP table cannot be looked up: @qp's
 * @wake_work does it.
 *
 * Context: any; does not sleep.
 */
void rsim_dp_wake_requester(struct rsim_qp *qp)
{
	unsigned long flags;

	if (!in_hardirq() && !in_nmi() && !irqs_disabled()) {
		rsim_dp_wake_peer(qp, false);
		return;
	}
	/* not @qp's own work: that is its RNR timer, if it waits itself */
	spin_lock_irqsave(&qp->lock, flags);
	if (!qp->stopping)
		queue_work(to_rsim_dev(qp->ibqp.device)->dp_wq, &qp->wake_work);
	spin_unlock_irqrestore(&qp->lock, flags);
}

/**
 * rsim_dp_wake_work() - rsim_dp_wake_requester() from the device's
 *	context, for a post in hard-IRQ context or to the QP's SRQ: the
 *	retry runs here
 * @work: &rsim_qp.wake_work
 *
 * Context: process (workqueue).
 */
void rsim_dp_wake_work(struct work_struct *work)
{
	struct rsim_qp *qp = container_of(work, struct rsim_qp, wake_work);

	rsim_dp_wake_peer(qp, true);
}

/**
 * rsim_dp_stop() - wait until nobody executes a QP's send queue
 * @qp: the QP, with @stopping set under its lock (and a state other than
 *	RTS, or @dying)
 *
 * Waits for an owner in the middle of a WR, which stops at its next page
 * boundary check and gives the queue up, then cancels the worker (and
 * the RNR timer, and a wake-up of the requester). With @stopping set,
 * nobody claims the queue, queues the worker or takes the queue over on
 * it: when this returns, nobody runs the queue or will until @stopping is
 * cleared, and the owner is IDLE, QUEUED or RNR, which the caller resets.
 *
 * Context: process; sleeps.
 */
void rsim_dp_stop(struct rsim_qp *qp)
{
	might_sleep();
	wait_var_event(&qp->owner, READ_ONCE(qp->owner) != RSIM_SQ_RUNNING);
	cancel_delayed_work_sync(&qp->work);
	cancel_work_sync(&qp->wake_work);
}
EXPORT_SYMBOL_IF_KUNIT(rsim_dp_stop);
