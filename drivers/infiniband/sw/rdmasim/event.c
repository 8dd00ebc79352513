// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: where completion handlers and asynchronous events run.
 *
 * A verb runs, once it holds no lock, the handlers of the QP it was
 * called on and of that QP's own send and receive CQs, as a device's
 * interrupt for them would. Handlers of any other object it touched (the
 * responder's receive CQ, the responder QP's affiliated errors, an SRQ's
 * limit event) are queued for the device's dispatcher, which runs them
 * from the device's own context, a high-priority kworker on the CPU that
 * queued them (as rxe's tasks and siw's threads run theirs): an
 * unprivileged process's post
 * never runs another process's or a kernel ULP's handler, and its verb
 * never waits for them. Where there is no caller (the worker, the RNR
 * timer, the dispatcher itself), every handler runs at once; in hard-IRQ
 * context or with interrupts off, none does (all are queued).
 *
 * Depth: every handler runs with this CPU marked as inside the engine
 * (@rsim_dp_depth, with BH off): a post from a handler queues its WRs for
 * the worker instead of running them, and the handlers its verb calls
 * for (a flush in the error state) for the dispatcher, so a handler that
 * re-arms and posts is never entered again below itself.
 *
 * Lifetimes: an object waits on the dispatcher's list through its
 * &struct rsim_ev, queued once however many handlers wait (they are
 * flags). Destroying it takes it off the list and waits while the
 * dispatcher runs its handlers (rsim_ev_forget()); only holders of the
 * object queue it (a step holding the responder, a QP of the CQ or SRQ),
 * and none is left when it is destroyed.
 */

#include <linux/percpu.h>
#include <linux/wait_bit.h>

#include "rdmasim.h"

/* objects the dispatcher serves before it lets other work on its CPU go */
#define RSIM_EV_BATCH	64
/*
 * @own inside a handler, in hard-IRQ context or with interrupts off:
 * nothing is the caller's own, every handler is queued (so that handlers
 * never nest, and never run where BH cannot be turned off)
 */
#define RSIM_OWN_NONE	((const struct rsim_qp *)ERR_PTR(-EDEADLK))

DEFINE_PER_CPU(unsigned int, rsim_dp_depth);

/* Mark this CPU as inside the engine (see rsim_dp_may_run_inline()). */
static void rsim_handlers_enter(void)
{
	local_bh_disable();
	__this_cpu_inc(rsim_dp_depth);
}

static void rsim_handlers_exit(void)
{
	__this_cpu_dec(rsim_dp_depth);
	local_bh_enable();
}

static void rsim_ev_deliver(struct rsim_ev *ev, u32 what)
{
	unsigned long bits = what;
	unsigned int type;

	switch (ev->kind) {
	case RSIM_EV_CQ:
		rsim_cq_deliver(container_of(ev, struct rsim_cq, ev), what);
		break;
	case RSIM_EV_QP:
		for_each_set_bit(type, &bits, BITS_PER_TYPE(what))
			rsim_qp_event(container_of(ev, struct rsim_qp, ev),
				      type);
		break;
	case RSIM_EV_SRQ:
		for_each_set_bit(type, &bits, BITS_PER_TYPE(what))
			rsim_srq_event(container_of(ev, struct rsim_srq, ev),
				       type);
		break;
	}
}

/* Is the dispatcher running @ev's handlers? */
static bool rsim_ev_running(struct rsim_dev *rsim, struct rsim_ev *ev)
{
	bool ret;

	spin_lock_irq(&rsim->ev_lock);
	ret = rsim->ev_cur == ev;
	spin_unlock_irq(&rsim->ev_lock);
	return ret;
}

/*
 * The dispatcher: the queued objects' handlers, oldest first, a batch at
 * a time.
 */
static void rsim_ev_work(struct work_struct *work)
{
	struct rsim_dev *rsim = container_of(work, struct rsim_dev, ev_work);
	unsigned int done;

	spin_lock_irq(&rsim->ev_lock);
	for (done = 0; done < RSIM_EV_BATCH; done++) {
		struct rsim_ev *ev = list_first_entry_or_null(&rsim->ev_list,
							      struct rsim_ev,
							      node);
		u32 what;

		if (!ev)
			break;
		list_del_init(&ev->node);
		what = ev->pending;
		ev->pending = 0;
		rsim->ev_cur = ev;
		spin_unlock_irq(&rsim->ev_lock);

		rsim_handlers_enter();
		rsim_ev_deliver(ev, what);
		rsim_handlers_exit();

		spin_lock_irq(&rsim->ev_lock);
		rsim->ev_cur = NULL;
		/*
		 * Under the lock the waiter's condition takes: it either
		 * sees NULL, or was on the wait queue before we looked.
		 */
		wake_up_var(&rsim->ev_cur);
	}
	if (!list_empty(&rsim->ev_list))
		queue_work(rsim->ev_wq, &rsim->ev_work);
	spin_unlock_irq(&rsim->ev_lock);
}

/**
 * rsim_ev_init() - set up a device's dispatcher
 * @rsim: device
 *
 * Its workqueue is per-CPU and high-priority: the dispatcher runs on the
 * CPU whose verb queued it, ahead of that CPU's normal work, as soon as
 * the verb returns. The handler it runs is typically the one that wakes
 * the responder's process: on a normal-priority worker that wake-up
 * waited until the poster went to sleep itself (make bench's
 * ibv_rc_pingpong -e across two CPUs: 530 us per round trip against 410).
 *
 * Return: 0 or -ENOMEM.
 */
int rsim_ev_init(struct rsim_dev *rsim)
{
	spin_lock_init(&rsim->ev_lock);
	INIT_LIST_HEAD(&rsim->ev_list);
	INIT_WORK(&rsim->ev_work, rsim_ev_work);
	rsim->ev_wq = alloc_workqueue("rdmasim%u_ev",
				      RSIM_WQ_PERCPU | WQ_HIGHPRI, 0, rsim->id);
	return rsim->ev_wq ? 0 : -ENOMEM;
}

/**
 * rsim_ev_exit() - tear down a device's dispatcher, once no object is left
 *	to queue it
 * @rsim: device
 */
void rsim_ev_exit(struct rsim_dev *rsim)
{
	if (rsim->ev_wq)
		destroy_workqueue(rsim->ev_wq);
}

/**
 * rsim_ev_obj_init() - set up an object's place on the dispatcher's list
 * @ev: the object's &struct rsim_ev
 * @kind: what it is embedded in
 */
void rsim_ev_obj_init(struct rsim_ev *ev, enum rsim_ev_kind kind)
{
	INIT_LIST_HEAD(&ev->node);
	ev->pending = 0;
	ev->kind = kind;
}

/**
 * rsim_ev_queue() - have the dispatcher run an object's handlers
 * @rsim: device
 * @ev: the object's &struct rsim_ev (the caller holds the object)
 * @what: a CQ's RSIM_NOTIFY_* flags, or BIT() of a QP's or SRQ's
 *	&enum ib_event_type
 *
 * Context: any; does not sleep.
 */
void rsim_ev_queue(struct rsim_dev *rsim, struct rsim_ev *ev, u32 what)
{
	unsigned long flags;

	if (!what)
		return;
	spin_lock_irqsave(&rsim->ev_lock, flags);
	if (!ev->pending)
		list_add_tail(&ev->node, &rsim->ev_list);
	ev->pending |= what;
	queue_work(rsim->ev_wq, &rsim->ev_work);
	spin_unlock_irqrestore(&rsim->ev_lock, flags);
}

/**
 * rsim_ev_forget() - an object is being destroyed: no handler of it runs
 *	once this returns
 * @rsim: device
 * @ev: the object's &struct rsim_ev; nobody queues it any more
 *
 * Handlers still queued are dropped; one the dispatcher runs is waited
 * for, unless it is that handler that destroys its own object.
 *
 * Context: process; sleeps.
 */
void rsim_ev_forget(struct rsim_dev *rsim, struct rsim_ev *ev)
{
	spin_lock_irq(&rsim->ev_lock);
	list_del_init(&ev->node);
	ev->pending = 0;
	spin_unlock_irq(&rsim->ev_lock);
	if (current_work() != &rsim->ev_work)
		wait_var_event(&rsim->ev_cur, !rsim_ev_running(rsim, ev));
}

/* Are @cq's handlers the caller's own? NULL @own: the device's context. */
static bool rsim_ev_own_cq(const struct rsim_qp *own, const struct rsim_cq *cq)
{
	if (own == RSIM_OWN_NONE)
		return false;
	return !own || own->ibqp.send_cq == &cq->ibcq ||
	       own->ibqp.recv_cq == &cq->ibcq;
}

/* @own, or RSIM_OWN_NONE where no handler may run at once */
static const struct rsim_qp *rsim_ev_own(const struct rsim_qp *own)
{
	/* inside a handler BH is off: no migration between here and there */
	return rsim_dp_may_run_inline() ? own : RSIM_OWN_NONE;
}

/* rsim_qp_raise() once rsim_ev_own() has looked at the context */
static void rsim_qp_raise_as(struct rsim_qp *qp, enum ib_event_type type,
			     const struct rsim_qp *own)
{
	if (own && own != qp) {
		rsim_ev_queue(to_rsim_dev(qp->ibqp.device), &qp->ev, BIT(type));
		return;
	}
	rsim_handlers_enter();
	rsim_qp_event(qp, type);
	rsim_handlers_exit();
}

/**
 * rsim_qp_raise() - an affiliated asynchronous event on a QP
 * @qp: the QP (held by the caller)
 * @type: IB_EVENT_QP_*
 * @own: the QP whose verb the caller runs, or NULL where the device's
 *	own context calls: the event is raised at once if it is @qp's own
 *	(and the caller is not a handler), else by the dispatcher
 *
 * Context: any; no rdmasim lock held.
 */
void rsim_qp_raise(struct rsim_qp *qp, enum ib_event_type type,
		   const struct rsim_qp *own)
{
	rsim_qp_raise_as(qp, type, rsim_ev_own(own));
}

/**
 * rsim_notify_run() - deliver what completions and errors asked for
 * @n: collected by rsim_cq_push(), rsim_qp_push() and the engine
 * @own: the QP whose verb the caller runs, or NULL where the device's
 *	own context calls
 *
 * Completion handlers first, then CQ error events, then the QPs that lost
 * a completion enter the error state (at once) with IB_EVENT_QP_FATAL,
 * then the responder's affiliated error and IB_EVENT_QP_LAST_WQE_REACHED.
 * Handlers of @own and its CQs run here; the others' are queued for the
 * dispatcher, and so are all of them if the caller is itself a handler
 * (a post from one). The caller holds a reference on every QP in @n.
 *
 * Context: any; no rdmasim lock held.
 */
void rsim_notify_run(struct rsim_notify *n, const struct rsim_qp *own)
{
	unsigned int i;

	if (!n->ncq && !n->nfatal && !n->resp && !n->nlast)
		return;
	own = rsim_ev_own(own);
	for (i = 0; i < n->ncq; i++) {
		struct rsim_cq *cq = n->cq[i].cq;

		if (!rsim_ev_own_cq(own, cq)) {
			rsim_ev_queue(to_rsim_dev(cq->ibcq.device), &cq->ev,
				      n->cq[i].flags);
			continue;
		}
		rsim_handlers_enter();
		rsim_cq_deliver(cq, n->cq[i].flags);
		rsim_handlers_exit();
	}
	n->ncq = 0;
	for (i = 0; i < n->nfatal; i++)
		rsim_qp_fatal(n->fatal[i], own);
	n->nfatal = 0;
	if (n->resp)
		rsim_qp_raise_as(n->resp, n->resp_event, own);
	n->resp = NULL;
	for (i = 0; i < n->nlast; i++)
		rsim_qp_raise_as(n->last_wqe[i], IB_EVENT_QP_LAST_WQE_REACHED,
				 own);
	n->nlast = 0;
}
