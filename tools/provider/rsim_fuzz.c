// SPDX-License-Identifier: GPL-2.0-only
/*
 * rsim_fuzz: a seeded fuzzer of rdmasim's verbs through libibverbs and
 * the provider. Two threads share one context and make random but
 * structurally valid calls on a shared pool of objects: PDs, CQs (create,
 * resize, destroy, poll, arm), QPs of every type (create, destroy, modify
 * to any state with attributes that connect them to the pool's own QPs
 * or to QP numbers that do not exist), MRs over parts of one buffer
 * (register, rereg, deregister, with any access flags), multicast
 * attaches and detaches (IPoIB's broadcast group, other MGIDs, unicast
 * GIDs, any LID), and posts: every
 * send opcode the device knows, random SGE lists whose keys are the
 * pool's or made up, ranges inside and outside the MRs, rkeys, flags and
 * inline data; receive WRs likewise. Then it closes the context with
 * everything still alive.
 *
 * What it proves is judged outside: the kernel log (no WARN, BUG,
 * KASAN, lockdep or kmemleak report), restrack's and rdmasim's counts
 * back to what they were before it ran, and rmmod afterwards (the
 * selftest, scripts/guest/selftest-provider.sh). Errors of the calls
 * themselves are expected and only counted.
 *
 * Each thread draws from its own generator, seeded from the seed and its
 * number, so a seed gives the same calls in the same order per thread;
 * how the two threads interleave is the scheduler's. A failing seed is
 * rerun with -s; -t 1 takes the interleaving away.
 *
 * A pool slot is taken for reading by a call that uses its object and
 * for writing by the call that destroys it, so the program itself never
 * touches a freed object; the kernel sees two threads on one QP, CQ or
 * MR at once all the same.
 *
 * Memory windows of both types are allocated, bound to any MR (with
 * ibv_bind_mw() or a BIND_MW WR, any range, rights and new key) and
 * deallocated bound or not, while MRs they are bound to are deregistered
 * (EBUSY) and their rkeys are used as any other key. Half the RC QPs are
 * made with the extended send API's FLUSH and ATOMIC_WRITE where the
 * device has them, and get lists of both (any key, address, length, type
 * and level, known or not) with WRITEs between.
 *
 * With -x, one more thread is hostile to the rings the kernel shares
 * with the process (rdmasim-abi.h): it finds every mapping of the uverbs
 * file in /proc/self/maps and writes random bytes at random offsets of
 * it (with process_vm_writev(), which fails with EFAULT on a ring that
 * went away instead of faulting) until the others end. The kernel must
 * write nothing outside a ring and report nothing; the provider's view of
 * its CQs is garbage, which the counts ignore.
 *
 * With -c, two more threads churn what a hostile process can race in
 * the kernel without the provider's locks: the first resizes the pool's
 * CQs through the uverbs write ABI directly (the provider orders its own
 * resizes of a CQ under the CQ's lock; this one does not, so two resizes
 * of one CQ, and a resize beside a poll, meet in the kernel), and in
 * rounds makes an RC responder on an empty SRQ and a requester connected
 * to it, and destroys the responder while the second thread posts SENDs
 * to it in a loop (each waits on RNR, the responder's QP on the SRQ's
 * waiters), then posts a receive to the SRQ and destroys the rest. It
 * prints "churn: <resizes> resizes (<ok> ok), <rounds> rounds, <sends>
 * sends".
 *
 * Prints "seed <n>", one "thread <i>: <calls> calls, <ok> ok" line per
 * thread, "close 0" and "result PASS" (exit 0), or "result FAIL (<why>)".
 *
 *   RDMAV_DRIVERS=<tools/provider>/librdmasim rsim_fuzz [-d rdmasim0]
 *	[-s seed] [-n calls per thread] [-t threads] [-x]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include "rsim_open.h"

#define NPD	4
#define NCQ	6
#define NQP	10
#define NMR	10
#define NMW	6
#define BUF_LEN	(256 * 1024)
#define MAX_THREADS 4	/* and the hostile one */

struct slot {
	pthread_rwlock_t lock;
	void *obj;
	bool ex;	/* a QP of the extended send API (FLUSH, ATOMIC_WRITE) */
};

static struct ibv_context *ctx;
static struct ibv_pd *base_pd;
static struct ibv_ah *ah;
static uint16_t lid;
static uint8_t *buf;
static struct slot pds[NPD], cqs[NCQ], qps[NQP], mrs[NMR], mws[NMW];

struct thread {
	pthread_t t;
	unsigned int id;
	uint64_t rnd;
	unsigned long calls, ok;
	unsigned long n;
};

/* xorshift64*: the thread's own sequence */
static uint64_t rnd(struct thread *t)
{
	t->rnd ^= t->rnd >> 12;
	t->rnd ^= t->rnd << 25;
	t->rnd ^= t->rnd >> 27;
	return t->rnd * 0x2545f4914f6cdd1dULL;
}

static uint32_t below(struct thread *t, uint32_t n)
{
	return n ? rnd(t) % n : 0;
}

static void count(struct thread *t, int ok)
{
	t->calls++;
	t->ok += !!ok;
}

/* a slot of @pool, read-locked, with its object or NULL */
static struct slot *get(struct thread *t, struct slot *pool, int n)
{
	struct slot *s = &pool[below(t, n)];

	pthread_rwlock_rdlock(&s->lock);
	return s;
}

static void put(struct slot *s)
{
	pthread_rwlock_unlock(&s->lock);
}

static uint32_t any_lkey(struct thread *t)
{
	struct slot *s;
	uint32_t key;

	switch (below(t, 5)) {
	case 0:
		return rnd(t);
	case 1:
		return 0;
	case 4:
		/* a memory window's rkey (mapped send queues only) */
		s = get(t, mws, NMW);
		key = s->obj ? ((struct ibv_mw *)s->obj)->rkey : rnd(t);
		put(s);
		return key;
	default:
		s = get(t, mrs, NMR);
		key = s->obj ? (below(t, 2) ? ((struct ibv_mr *)s->obj)->lkey :
					    ((struct ibv_mr *)s->obj)->rkey) :
			       rnd(t);
		put(s);
		return key;
	}
}

static uint64_t any_addr(struct thread *t)
{
	if (below(t, 8) == 0)
		return rnd(t);
	return (uintptr_t)buf + below(t, BUF_LEN + 4096) - 2048;
}

static uint32_t any_len(struct thread *t)
{
	switch (below(t, 6)) {
	case 0:
		return 0;
	case 1:
		return rnd(t);
	case 2:
		return below(t, BUF_LEN * 2);
	default:
		return below(t, 8192);
	}
}

static int any_access(struct thread *t)
{
	static const int a[] = {
		IBV_ACCESS_LOCAL_WRITE, IBV_ACCESS_REMOTE_WRITE,
		IBV_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_ATOMIC,
	};
	int i, acc = 0;

	for (i = 0; i < 4; i++)
		if (below(t, 2))
			acc |= a[i];
	if (below(t, 16) == 0)
		acc |= 1 << below(t, 31);
	return acc;
}

static void op_pd(struct thread *t)
{
	struct slot *s = &pds[below(t, NPD)];

	pthread_rwlock_wrlock(&s->lock);
	if (!s->obj) {
		s->obj = ibv_alloc_pd(ctx);
		count(t, !!s->obj);
	} else if (!ibv_dealloc_pd(s->obj)) {
		s->obj = NULL;
		count(t, 1);
	} else {
		count(t, 0);	/* EBUSY: something uses it */
	}
	pthread_rwlock_unlock(&s->lock);
}

static void op_cq(struct thread *t)
{
	struct slot *s = &cqs[below(t, NCQ)];

	pthread_rwlock_wrlock(&s->lock);
	if (!s->obj) {
		s->obj = ibv_create_cq(ctx, below(t, 300), NULL, NULL, 0);
		count(t, !!s->obj);
	} else if (below(t, 2)) {
		count(t, !ibv_resize_cq(s->obj, below(t, 300)));
	} else if (!ibv_destroy_cq(s->obj)) {
		s->obj = NULL;
		count(t, 1);
	} else {
		count(t, 0);
	}
	pthread_rwlock_unlock(&s->lock);
}

static void op_poll(struct thread *t)
{
	struct slot *s = get(t, cqs, NCQ);
	struct ibv_wc wc[8];

	if (s->obj) {
		if (below(t, 4))
			count(t, ibv_poll_cq(s->obj, 8, wc) >= 0);
		else
			count(t, !ibv_req_notify_cq(s->obj, below(t, 2)));
	}
	put(s);
}

static void op_qp(struct thread *t)
{
	static const enum ibv_qp_type types[] = {
		IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD,
	};
	struct slot *s = &qps[below(t, NQP)];
	struct slot *p, *c1, *c2;

	pthread_rwlock_wrlock(&s->lock);
	if (s->obj) {
		if (!ibv_destroy_qp(s->obj))
			s->obj = NULL;
		count(t, !s->obj);
		pthread_rwlock_unlock(&s->lock);
		return;
	}
	p = get(t, pds, NPD);
	c1 = get(t, cqs, NCQ);
	c2 = get(t, cqs, NCQ);
	if (p->obj && c1->obj && c2->obj) {
		struct ibv_qp_init_attr a = {
			.send_cq = c1->obj,
			.recv_cq = c2->obj,
			.qp_type = types[below(t, 3)],
			.sq_sig_all = below(t, 2),
			.cap = {
				.max_send_wr = below(t, 70),
				.max_recv_wr = below(t, 70),
				.max_send_sge = below(t, 6),
				.max_recv_sge = below(t, 6),
				.max_inline_data = below(t, 300),
			},
		};

		/*
		 * an RC QP with FLUSH and ATOMIC_WRITE where the device and
		 * the context have them (mapped send queues), else a plain one
		 */
		s->obj = NULL;
		s->ex = false;
		if (a.qp_type == IBV_QPT_RC && below(t, 2)) {
			struct ibv_qp_init_attr_ex x = {
				.send_cq = a.send_cq, .recv_cq = a.recv_cq,
				.qp_type = a.qp_type, .sq_sig_all = a.sq_sig_all,
				.cap = a.cap, .pd = p->obj,
				.comp_mask = IBV_QP_INIT_ATTR_PD |
					     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
				.send_ops_flags = IBV_QP_EX_WITH_FLUSH |
						  IBV_QP_EX_WITH_ATOMIC_WRITE |
						  IBV_QP_EX_WITH_RDMA_WRITE,
			};

			s->obj = ibv_create_qp_ex(ctx, &x);
			s->ex = !!s->obj;
		}
		if (!s->obj)
			s->obj = ibv_create_qp(p->obj, &a);
		count(t, !!s->obj);
	}
	put(c2);
	put(c1);
	put(p);
	pthread_rwlock_unlock(&s->lock);
}

/* a QP number: one of the pool's, or one that is probably nobody's */
static uint32_t any_qpn(struct thread *t)
{
	struct slot *s;
	uint32_t n;

	if (below(t, 5) == 0)
		return below(t, 1 << 24);
	s = get(t, qps, NQP);
	n = s->obj ? ((struct ibv_qp *)s->obj)->qp_num : below(t, 64);
	put(s);
	return n;
}

static void op_modify(struct thread *t)
{
	static const enum ibv_qp_state states[] = {
		IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS,
		IBV_QPS_SQD, IBV_QPS_ERR,
	};
	struct slot *s = get(t, qps, NQP);
	struct ibv_qp_attr a = {
		.qp_state = states[below(t, 6)],
		.pkey_index = below(t, 8) ? 0 : below(t, 20),
		.port_num = below(t, 8) ? 1 : below(t, 3),
		.qp_access_flags = any_access(t),
		.qkey = below(t, 2) ? 0x11111111 : rnd(t),
		.path_mtu = 1 + below(t, 5),
		.dest_qp_num = any_qpn(t),
		.rq_psn = below(t, 1 << 24),
		.sq_psn = below(t, 1 << 24),
		.max_dest_rd_atomic = below(t, 20),
		.max_rd_atomic = below(t, 20),
		.min_rnr_timer = below(t, 32),
		.timeout = below(t, 4) ? 10 + below(t, 6) : below(t, 32),
		.retry_cnt = below(t, 8),
		.rnr_retry = below(t, 8),
		.en_sqd_async_notify = below(t, 2),
	};
	int mask = IBV_QP_STATE;

	a.ah_attr.dlid = below(t, 8) ? lid : below(t, 0x10000);
	a.ah_attr.port_num = 1;
	a.ah_attr.sl = below(t, 16);
	switch (a.qp_state) {
	case IBV_QPS_INIT:
		mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		mask |= below(t, 2) ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
		break;
	case IBV_QPS_RTR:
		mask |= below(t, 2) ? IBV_QP_AV | IBV_QP_PATH_MTU |
				      IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				      IBV_QP_MAX_DEST_RD_ATOMIC |
				      IBV_QP_MIN_RNR_TIMER : 0;
		break;
	case IBV_QPS_RTS:
		mask |= IBV_QP_SQ_PSN;
		mask |= below(t, 2) ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				      IBV_QP_RNR_RETRY |
				      IBV_QP_MAX_QP_RD_ATOMIC : 0;
		break;
	case IBV_QPS_SQD:
		mask |= IBV_QP_EN_SQD_ASYNC_NOTIFY;
		break;
	default:
		break;
	}
	if (below(t, 16) == 0)
		mask |= rnd(t) & 0x1fffff;
	if (s->obj)
		count(t, !ibv_modify_qp(s->obj, &a, mask));
	put(s);
}

static void op_mr(struct thread *t)
{
	struct slot *s = &mrs[below(t, NMR)];
	struct slot *p;

	pthread_rwlock_wrlock(&s->lock);
	if (s->obj && below(t, 3) == 0) {
		int flags = below(t, 8);

		p = get(t, pds, NPD);
		/* libibverbs reads the new PD's handle: a real one */
		if (!p->obj)
			flags &= ~IBV_REREG_MR_CHANGE_PD;
		count(t, !ibv_rereg_mr(s->obj, flags, p->obj,
				       buf + below(t, BUF_LEN / 2),
				       below(t, BUF_LEN / 2), any_access(t)));
		put(p);
	} else if (s->obj) {
		if (!ibv_dereg_mr(s->obj))
			s->obj = NULL;
		count(t, !s->obj);
	} else {
		size_t off = below(t, BUF_LEN);

		p = get(t, pds, NPD);
		if (p->obj) {
			/* half of them for windows to bind to */
			s->obj = ibv_reg_mr(p->obj, buf + off,
					    below(t, BUF_LEN - off + 4096),
					    any_access(t) | (below(t, 2) ?
					    IBV_ACCESS_MW_BIND : 0));
			count(t, !!s->obj);
		}
		put(p);
	}
	pthread_rwlock_unlock(&s->lock);
}

static void fill_sges(struct thread *t, struct ibv_sge *sge, int *n)
{
	int i;

	*n = below(t, 5);
	for (i = 0; i < *n; i++) {
		sge[i].addr = any_addr(t);
		sge[i].length = any_len(t);
		sge[i].lkey = any_lkey(t);
	}
}

static void op_post_send(struct thread *t)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
		IBV_WR_LOCAL_INV, IBV_WR_SEND_WITH_INV,
	};
	struct slot *s = get(t, qps, NQP);
	struct ibv_send_wr wr[2] = {}, *bad;
	struct ibv_sge sge[2][4];
	int i, n = 1 + below(t, 2);
	bool ud = s->obj && ((struct ibv_qp *)s->obj)->qp_type == IBV_QPT_UD;

	for (i = 0; i < n; i++) {
		wr[i].wr_id = rnd(t);
		wr[i].opcode = below(t, 16) ? ops[below(t, 9)] : rnd(t) % 64;
		wr[i].send_flags = below(t, 16) ? below(t, 16) : rnd(t);
		fill_sges(t, sge[i], &wr[i].num_sge);
		wr[i].sg_list = sge[i];
		wr[i].imm_data = rnd(t);
		wr[i].wr.rdma.remote_addr = any_addr(t);
		wr[i].wr.rdma.rkey = any_lkey(t);
		if (wr[i].opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
		    wr[i].opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			wr[i].wr.atomic.remote_addr = any_addr(t) & ~7ULL;
			wr[i].wr.atomic.rkey = any_lkey(t);
			wr[i].wr.atomic.compare_add = rnd(t);
		}
		/* the provider reads a UD WR's AH: always a real one */
		if (ud) {
			wr[i].wr.ud.ah = ah;
			wr[i].wr.ud.remote_qpn = any_qpn(t);
			wr[i].wr.ud.remote_qkey = 0x11111111;
		}
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	if (s->obj)
		count(t, !ibv_post_send(s->obj, wr, &bad));
	put(s);
}

/*
 * FLUSH and ATOMIC_WRITE through the extended send API on a QP made with
 * them: any rkey, address (aligned or not), length, placement type and
 * selectivity level, known or not, one or two WRs, and a WRITE between
 */
static void op_place(struct thread *t)
{
	struct slot *s = get(t, qps, NQP);
	struct ibv_qp_ex *x;
	uint64_t v = rnd(t);
	int i, n = 1 + below(t, 2);

	if (!s->obj || !s->ex) {
		put(s);
		return;
	}
	x = ibv_qp_to_qp_ex(s->obj);
	x->wr_flags = below(t, 4) ? IBV_SEND_SIGNALED : rnd(t) % 32;
	ibv_wr_start(x);
	for (i = 0; i < n; i++) {
		x->wr_id = rnd(t);
		switch (below(t, 3)) {
		case 0:
			ibv_wr_flush(x, any_lkey(t), any_addr(t), any_len(t),
				     below(t, 8) ? 1 + below(t, 3) : rnd(t),
				     below(t, 8) ? below(t, 2) : rnd(t));
			break;
		case 1:
			ibv_wr_atomic_write(x, any_lkey(t), below(t, 4) ?
					    any_addr(t) & ~7ULL : any_addr(t),
					    &v);
			break;
		default:
			ibv_wr_rdma_write(x, any_lkey(t), any_addr(t));
			ibv_wr_set_sge(x, any_lkey(t), any_addr(t),
				       any_len(t));
			break;
		}
	}
	count(t, !ibv_wr_complete(x));
	put(s);
}

/*
 * Memory windows (with mapped send queues): allocate one of either type
 * in a PD, bind it to any MR (ibv_bind_mw() for type 1, a BIND_MW WR for
 * either) with any range and rights, or deallocate it, bound or not
 */
static void op_mw(struct thread *t)
{
	struct slot *s = &mws[below(t, NMW)];
	struct slot *q, *m, *p;
	struct ibv_mw_bind b = {};
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_mw *mw;

	pthread_rwlock_wrlock(&s->lock);
	mw = s->obj;
	if (!mw) {
		p = get(t, pds, NPD);
		if (p->obj) {
			s->obj = ibv_alloc_mw(p->obj, below(t, 2) ?
					      IBV_MW_TYPE_1 : IBV_MW_TYPE_2);
			count(t, !!s->obj);
		}
		put(p);
	} else if (below(t, 4) == 0) {
		if (!ibv_dealloc_mw(mw))
			s->obj = NULL;
		count(t, !s->obj);
	} else {
		q = get(t, qps, NQP);
		m = get(t, mrs, NMR);
		b.wr_id = rnd(t);
		b.send_flags = below(t, 4);
		b.bind_info.mr = m->obj;
		b.bind_info.addr = any_addr(t);
		b.bind_info.length = m->obj ? any_len(t) : 0;
		b.bind_info.mw_access_flags = any_access(t);
		if (q->obj && mw->type == IBV_MW_TYPE_1 && below(t, 2)) {
			count(t, !ibv_bind_mw(q->obj, mw, &b));
		} else if (q->obj) {
			wr.wr_id = b.wr_id;
			wr.opcode = IBV_WR_BIND_MW;
			wr.send_flags = b.send_flags;
			wr.bind_mw.mw = mw;
			wr.bind_mw.rkey = below(t, 8) ? ibv_inc_rkey(mw->rkey) :
					  rnd(t);
			wr.bind_mw.bind_info = b.bind_info;
			/*
			 * a UD QP's WR names an AH, which libibverbs reads
			 * where the post_send command carries it (a QP with
			 * no send ring): a real one, as in op_post_send()
			 */
			if (((struct ibv_qp *)q->obj)->qp_type == IBV_QPT_UD)
				wr.wr.ud.ah = ah;
			count(t, !ibv_post_send(q->obj, &wr, &bad));
		}
		put(m);
		put(q);
	}
	pthread_rwlock_unlock(&s->lock);
}

static void op_post_recv(struct thread *t)
{
	struct slot *s = get(t, qps, NQP);
	struct ibv_recv_wr wr = {}, *bad;
	struct ibv_sge sge[4];

	wr.wr_id = rnd(t);
	fill_sges(t, sge, &wr.num_sge);
	wr.sg_list = sge;
	if (s->obj)
		count(t, !ibv_post_recv(s->obj, &wr, &bad));
	put(s);
}

/*
 * attach or detach a QP of the pool to or from a multicast group: IPoIB's
 * broadcast group at its MLID (the one the SA made), another MGID, or an
 * address that is no group's, at a LID of the multicast range or not
 */
static void op_mcast(struct thread *t)
{
	struct slot *s = get(t, qps, NQP);
	union ibv_gid gid = { .raw = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff } };
	uint16_t mlid = 0xc000;
	int err;

	memset(gid.raw + 12, 0xff, 4);
	switch (below(t, 4)) {
	case 0:
		gid.raw[15] = rnd(t);		/* another group */
		break;
	case 1:
		gid.raw[0] = rnd(t);		/* unicast, mostly */
		break;
	case 2:
		mlid = rnd(t);			/* any LID */
		break;
	}
	if (s->obj) {
		if (below(t, 2))
			err = ibv_attach_mcast(s->obj, &gid, mlid);
		else
			err = ibv_detach_mcast(s->obj, &gid, mlid);
		count(t, !err);
	}
	put(s);
}

static void *run(void *arg)
{
	struct thread *t = arg;
	unsigned long i;

	for (i = 0; i < t->n; i++) {
		switch (below(t, 18)) {
		case 0:
			op_pd(t);
			break;
		case 1:
			op_cq(t);
			break;
		case 2:
		case 3:
			op_qp(t);
			break;
		case 4:
		case 5:
		case 6:
			op_modify(t);
			break;
		case 7:
		case 8:
			op_mr(t);
			break;
		case 9:
		case 10:
		case 11:
			op_post_send(t);
			break;
		case 12:
		case 13:
			op_post_recv(t);
			break;
		case 14:
			op_mcast(t);
			break;
		case 15:
			op_mw(t);
			break;
		case 16:
			op_place(t);
			break;
		default:
			op_poll(t);
			break;
		}
	}
	return NULL;
}

static atomic_int running;

/*
 * The hostile thread: random bytes into every mapping of the uverbs file
 * (the rings), found anew each round; a write to one that went away fails
 */
static void *scribble(void *arg)
{
	struct thread *t = arg;
	char line[512], path[256];
	unsigned long from, to;
	FILE *maps;
	int i;

	while (atomic_load(&running)) {
		maps = fopen("/proc/self/maps", "r");
		if (!maps)
			break;
		while (fgets(line, sizeof(line), maps)) {
			uint64_t v;
			struct iovec local = { .iov_base = &v },
				     remote;

			if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %255s", &from,
				   &to, path) != 3 ||
			    strncmp(path, "/dev/infiniband/uverbs", 22))
				continue;
			for (i = 0; i < 16; i++) {
				v = rnd(t);
				local.iov_len = 1 + below(t, 8);
				remote.iov_base = (void *)(from +
					below(t, to - from - 8));
				remote.iov_len = local.iov_len;
				t->ok += process_vm_writev(getpid(), &local, 1,
							   &remote, 1, 0) > 0;
				t->calls++;
			}
		}
		fclose(maps);
	}
	return NULL;
}

/*
 * The churn (-c): resizes through the write ABI, and rounds of an SRQ's
 * responder destroyed under a requester's SENDs
 */
static struct {
	pthread_mutex_t lock;	/* protects req: the sender posts under it */
	struct ibv_qp *req;	/* the round's requester, or NULL */
	atomic_int stop;	/* the sender ends */
	struct ibv_mr *mr;
	unsigned long resizes, resized, rounds;
	atomic_ulong sends;
} churn = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* ibv_resize_cq() without the provider: IB_USER_VERBS_CMD_RESIZE_CQ */
static int raw_resize_cq(struct ibv_cq *cq, uint32_t cqe)
{
	uint64_t resp[32] = {};
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_resize_cq cmd;
	} req = {
		.hdr = {
			.command = IB_USER_VERBS_CMD_RESIZE_CQ,
			.in_words = sizeof(req) / 4,
			.out_words = sizeof(resp) / 4,
		},
		.cmd = {
			.response = (uintptr_t)resp,
			.cq_handle = cq->handle,
			.cqe = cqe,
		},
	};

	return write(ctx->cmd_fd, &req, sizeof(req)) == sizeof(req) ? 0 : -1;
}

/* the second churn thread: SENDs to whatever requester the round has */
static void *churn_send(void *arg)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 64 };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND }, *bad;

	(void)arg;
	sge.lkey = churn.mr->lkey;
	while (!atomic_load(&churn.stop)) {
		int err = 1;

		pthread_mutex_lock(&churn.lock);
		/* the queue fills (nothing polls it): then it waits */
		if (churn.req)
			err = ibv_post_send(churn.req, &wr, &bad);
		pthread_mutex_unlock(&churn.lock);
		if (!err)
			atomic_fetch_add(&churn.sends, 1);
		else
			sched_yield();
	}
	return NULL;
}

static void churn_round(struct thread *t)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 64 };
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_qp *resp = NULL, *req = NULL;
	struct ibv_srq *srq;
	struct ibv_cq *cq;

	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	srq = ibv_create_srq(base_pd, &sa);
	if (!cq || !srq)
		goto out;
	qa.send_cq = cq;
	qa.recv_cq = cq;
	req = ibv_create_qp(base_pd, &qa);
	qa.srq = srq;
	resp = ibv_create_qp(base_pd, &qa);
	if (!req || !resp ||
	    rsim_connect_to(resp, req->qp_num, lid, 0, IBV_MTU_1024, 1) ||
	    rsim_connect_to(req, resp->qp_num, lid, 0, IBV_MTU_1024, 1))
		goto out;
	pthread_mutex_lock(&churn.lock);
	churn.req = req;
	pthread_mutex_unlock(&churn.lock);
	usleep(below(t, 3000));
	/* the responder goes while SENDs wait on it */
	if (!ibv_destroy_qp(resp))
		resp = NULL;
	usleep(below(t, 1000));
	sge.lkey = churn.mr->lkey;
	ibv_post_srq_recv(srq, &rwr, &bad);
	churn.rounds++;
out:
	/* no post to req from here on */
	pthread_mutex_lock(&churn.lock);
	churn.req = NULL;
	pthread_mutex_unlock(&churn.lock);
	if (resp)
		ibv_destroy_qp(resp);
	if (req)
		ibv_destroy_qp(req);
	if (srq)
		ibv_destroy_srq(srq);
	if (cq)
		ibv_destroy_cq(cq);
}

/* the first churn thread: raw resizes of the pool's CQs, and the rounds */
static void *churn_run(void *arg)
{
	struct thread *t = arg;
	struct slot *s;
	int i;

	while (atomic_load(&running)) {
		for (i = 0; i < 16; i++) {
			s = get(t, cqs, NCQ);
			if (s->obj) {
				churn.resizes++;
				churn.resized += !raw_resize_cq(s->obj,
								below(t, 300));
			}
			put(s);
		}
		churn_round(t);
	}
	return NULL;
}

static int fail(const char *why)
{
	printf("result FAIL (%s: %s)\n", why, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	const char *ibdev = "rdmasim0";
	struct thread th[MAX_THREADS + 2] = {};
	unsigned long calls = 2000, seed = time(NULL);
	struct ibv_ah_attr aa = { .port_num = 1 };
	struct ibv_port_attr port;
	int i, opt, nthreads = 2;
	bool hostile = false, churning = false;
	pthread_t churners[2];

	while ((opt = getopt(argc, argv, "d:s:n:t:xc")) != -1) {
		switch (opt) {
		case 'x':
			hostile = true;
			break;
		case 'c':
			churning = true;
			break;
		case 'd':
			ibdev = optarg;
			break;
		case 's':
			seed = strtoul(optarg, NULL, 0);
			break;
		case 'n':
			calls = strtoul(optarg, NULL, 0);
			break;
		case 't':
			nthreads = atoi(optarg);
			break;
		default:
			fprintf(stderr,
				"usage: %s [-d ibdev] [-s seed] [-n calls] [-t threads]\n"
				"       [-x: scribble into the mapped rings]\n"
				"       [-c: raw resizes, SRQ responders destroyed under SENDs]\n",
				argv[0]);
			return 2;
		}
	}
	if (nthreads < 1 || nthreads > MAX_THREADS)
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("seed %lu\n", seed);

	ctx = rsim_open_device(ibdev);
	if (!ctx || ibv_query_port(ctx, 1, &port))
		return fail("open");
	lid = port.lid;
	buf = aligned_alloc(4096, BUF_LEN);
	base_pd = ibv_alloc_pd(ctx);
	if (!buf || !base_pd)
		return fail("buffer, pd");
	memset(buf, 0x5a, BUF_LEN);
	aa.dlid = lid;
	ah = ibv_create_ah(base_pd, &aa);
	if (!ah)
		return fail("ah");
	for (i = 0; i < NPD; i++)
		pthread_rwlock_init(&pds[i].lock, NULL);
	for (i = 0; i < NCQ; i++)
		pthread_rwlock_init(&cqs[i].lock, NULL);
	for (i = 0; i < NQP; i++)
		pthread_rwlock_init(&qps[i].lock, NULL);
	for (i = 0; i < NMR; i++)
		pthread_rwlock_init(&mrs[i].lock, NULL);
	for (i = 0; i < NMW; i++)
		pthread_rwlock_init(&mws[i].lock, NULL);

	for (i = 0; i < nthreads; i++) {
		th[i].id = i;
		th[i].n = calls;
		th[i].rnd = (seed * 2654435761ULL) ^ (0x9e3779b97f4a7c15ULL * (i + 1));
		if (!th[i].rnd)
			th[i].rnd = 1;
		if (pthread_create(&th[i].t, NULL, run, &th[i]))
			return fail("pthread_create");
	}
	atomic_store(&running, 1);
	if (hostile) {
		th[nthreads].id = nthreads;
		th[nthreads].rnd = seed ^ 0x5bd1e995;
		if (pthread_create(&th[nthreads].t, NULL, scribble,
				   &th[nthreads]))
			return fail("pthread_create");
	}
	if (churning) {
		churn.mr = ibv_reg_mr(base_pd, buf, BUF_LEN,
				      IBV_ACCESS_LOCAL_WRITE);
		th[MAX_THREADS + 1].rnd = seed ^ 0xc2b2ae35;
		if (!churn.mr ||
		    pthread_create(&churners[0], NULL, churn_run,
				   &th[MAX_THREADS + 1]) ||
		    pthread_create(&churners[1], NULL, churn_send, NULL))
			return fail("churn");
	}
	for (i = 0; i < nthreads; i++) {
		pthread_join(th[i].t, NULL);
		printf("thread %d: %lu calls, %lu ok\n", i, th[i].calls,
		       th[i].ok);
	}
	atomic_store(&running, 0);
	if (hostile) {
		pthread_join(th[nthreads].t, NULL);
		printf("scribbler: %lu writes, %lu into a ring\n",
		       th[nthreads].calls, th[nthreads].ok);
	}
	if (churning) {
		pthread_join(churners[0], NULL);
		atomic_store(&churn.stop, 1);
		pthread_join(churners[1], NULL);
		printf("churn: %lu resizes (%lu ok), %lu rounds, %lu sends\n",
		       churn.resizes, churn.resized, churn.rounds,
		       atomic_load(&churn.sends));
	}
	/* everything still alive: the kernel frees it with the file */
	errno = 0;
	i = ibv_close_device(ctx);
	printf("close %d\n", i ? errno : 0);
	if (i)
		return fail("close");
	printf("result PASS\n");
	return 0;
}
