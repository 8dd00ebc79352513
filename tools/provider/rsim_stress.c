// SPDX-License-Identifier: GPL-2.0-only
/*
 * rsim_stress: two threads post to one self-connected RC QP through
 * libibverbs and the provider, and every byte that moves is checked.
 *
 * Each thread owns a source and a destination buffer (each registered as
 * an MR), and in a loop picks an RDMA WRITE (its source to its
 * destination through the destination's rkey), an RDMA READ (the other
 * way), or a SEND (its source into whichever receive buffer the receive
 * queue gives it), with random lengths (up to 256 KiB), offsets and one to
 * three SGEs; the first thread also writes into and reads from device
 * memory (ibv_alloc_dm, an MR over it) and checks it with
 * ibv_memcpy_from_dm. Both post to the one send queue at once, as
 * uverbs lets any number of threads do; this is the engine's
 * single-owner protocol under concurrent posters (issue 20, defect 1:
 * 64 to 256 KiB READs beside SENDs on one QP), and the data path's view of
 * pinned user memory and device memory (defect 10: the bytes the process
 * sees, whatever DMA address the core's mapping gave them).
 *
 * Completions: one send CQ and one receive CQ, polled by whichever thread
 * takes the poll lock; a send completion marks its thread's WR done (the
 * wr_id names the thread), a receive completion is checked against the
 * header its message carries (thread, sequence, length) and its buffer
 * posted again. A thread waits for its own WR before it checks the data.
 *
 * At the end each thread's destination buffer is deregistered and must
 * hold what it held before (under swiotlb the unmap copies bounce slots
 * back over the pages).
 *
 * Prints "seed <n>", one "thread <i>: <ops> ops, <bytes> bytes" line per
 * thread, and "result PASS" (exit 0), or "FAIL ..." lines and "result
 * FAIL" (exit 1).
 *
 * With -r 1 the receive queue holds one buffer: a SEND of one thread
 * meets it taken by the other's most of the time and waits on an RNR NAK
 * (rnr_retry 7: for ever) until the buffer is posted again, which must
 * wake it (with mapped receive queues, the doorbell the kernel asks for).
 *
 *   RDMAV_DRIVERS=<tools/provider>/librdmasim rsim_stress [-d rdmasim0]
 *	[-s seed] [-n ops per thread] [-r receive buffers, 1-8]
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
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "rsim_open.h"

#define NTHREADS	2
#define BUF_LEN		(256 * 1024)
#define DM_LEN		(64 * 1024)
#define NRECV		8	/* receive buffers, at most */
#define HDR_LEN		16
#define WAIT_SEC	30

/* a SEND's first bytes: who sent it, and what the rest must be */
struct hdr {
	uint32_t thread;
	uint32_t seq;
	uint32_t len;
	uint32_t magic;
};

#define MAGIC 0x5253494d	/* "RSIM" */

struct thread {
	int id;
	pthread_t tid;
	uint64_t rng;
	uint8_t *src;
	uint8_t *dst;
	struct ibv_mr *src_mr;
	struct ibv_mr *dst_mr;
	atomic_int done;	/* the send completion of its current WR */
	atomic_int status;	/* its status */
	unsigned long ops;
	unsigned long long bytes;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *scq, *rcq;
static struct ibv_qp *qp;
static struct ibv_dm *dm;
static struct ibv_mr *dm_mr;
/* receive buffers posted (-r): 1 makes most SENDs wait on RNR */
static int nrecv = NRECV;
static uint8_t *rbuf[NRECV];
static struct ibv_mr *rbuf_mr[NRECV];
static pthread_mutex_t poll_lock = PTHREAD_MUTEX_INITIALIZER;
static struct thread threads[NTHREADS];
static atomic_int failures;
static atomic_ulong recvs_checked;
static unsigned long nops = 200;

static void fail(const char *fmt, int a, int b, unsigned long c)
{
	printf("FAIL ");
	printf(fmt, a, b, c);
	printf("\n");
	fflush(stdout);
	atomic_fetch_add(&failures, 1);
}

/* xorshift64*: each thread's own sequence */
static uint64_t next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static uint32_t below(struct thread *t, uint32_t n)
{
	return n ? next(&t->rng) % n : 0;
}

/* the byte a message of (thread, seq) carries at @i */
static uint8_t pattern(uint32_t thread, uint32_t seq, size_t i)
{
	return (uint8_t)((i * 131 + seq * 7 + thread * 61 + (i >> 8)) ^
			 (seq >> 3));
}

static void fill(uint8_t *p, size_t len, uint32_t thread, uint32_t seq)
{
	for (size_t i = 0; i < len; i++)
		p[i] = pattern(thread, seq, i);
}

/* the first byte of @p that is not the pattern, or -1 */
static long mismatch(const uint8_t *p, size_t len, uint32_t thread,
		     uint32_t seq)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != pattern(thread, seq, i))
			return (long)i;
	return -1;
}

static int post_recv(int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)rbuf[i],
		.length = BUF_LEN,
		.lkey = rbuf_mr[i]->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

/* a received message: its header says what the rest must be */
static void check_recv(const struct ibv_wc *wc)
{
	const uint8_t *p = rbuf[wc->wr_id];
	struct hdr h;
	long at;

	if (wc->byte_len < HDR_LEN) {
		fail("recv %d: %d bytes, no header (%lu)", (int)wc->wr_id,
		     wc->byte_len, 0);
		return;
	}
	memcpy(&h, p, sizeof(h));
	if (h.magic != MAGIC || h.thread >= NTHREADS ||
	    h.len != wc->byte_len) {
		fail("recv %d: bad header, %d bytes (magic %lx)",
		     (int)wc->wr_id, wc->byte_len, h.magic);
		return;
	}
	at = mismatch(p + HDR_LEN, h.len - HDR_LEN, h.thread, h.seq);
	if (at >= 0)
		fail("recv from thread %d seq %d: byte %lu differs", h.thread,
		     h.seq, at);
	atomic_fetch_add(&recvs_checked, 1);
}

/* poll both CQs once, under the poll lock; false on a CQ error */
static bool poll_once(void)
{
	struct ibv_wc wc[8];
	int n, i;
	bool ok = true;

	pthread_mutex_lock(&poll_lock);
	n = ibv_poll_cq(scq, 8, wc);
	if (n < 0)
		ok = false;
	for (i = 0; i < n; i++) {
		struct thread *t = &threads[wc[i].wr_id >> 32];

		atomic_store(&t->status, wc[i].status);
		atomic_store(&t->done, 1);
	}
	n = ibv_poll_cq(rcq, 8, wc);
	if (n < 0)
		ok = false;
	for (i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			fail("recv %d: status %d (%lu)", (int)wc[i].wr_id,
			     wc[i].status, 0);
			continue;
		}
		check_recv(&wc[i]);
		if (post_recv(wc[i].wr_id))
			ok = false;
	}
	pthread_mutex_unlock(&poll_lock);
	return ok;
}

/* wait for the thread's WR; its status, or -1 */
static int wait_done(struct thread *t)
{
	time_t end = time(NULL) + WAIT_SEC;

	while (!atomic_load(&t->done)) {
		if (!poll_once() || time(NULL) > end)
			return -1;
		sched_yield();
	}
	return atomic_load(&t->status);
}

/*
 * Split [addr, addr + len) of @mr into 1 to 3 SGEs; returns how many
 */
static int split(struct thread *t, struct ibv_sge *sge, uint64_t addr,
		 uint32_t len, uint32_t lkey)
{
	int n = 1 + below(t, 3), i;
	uint32_t left = len;

	if (len < 3)
		n = 1;
	for (i = 0; i < n; i++) {
		uint32_t l = i == n - 1 ? left : 1 + below(t, left - (n - i));

		sge[i].addr = addr;
		sge[i].length = l;
		sge[i].lkey = lkey;
		addr += l;
		left -= l;
	}
	return n;
}

enum op { OP_WRITE, OP_READ, OP_SEND, OP_DM_WRITE, OP_DM_READ, NOPS };

static const char *const op_name[] = {
	"WRITE", "READ", "SEND", "WRITE to DM", "READ from DM",
};

static void *run(void *arg)
{
	struct thread *t = arg;
	uint32_t seq;

	for (seq = 1; seq <= nops && !atomic_load(&failures); seq++) {
		enum op op = below(t, dm && t->id == 0 ? NOPS : OP_DM_WRITE);
		uint32_t max = op >= OP_DM_WRITE ? DM_LEN : BUF_LEN;
		uint32_t len = 1 + below(t, below(t, 4) ? 4096 : max);
		uint32_t soff = below(t, BUF_LEN - len + 1);
		uint32_t doff = below(t, max - len + 1);
		struct ibv_sge sge[3];
		struct ibv_send_wr wr = {
			.wr_id = (uint64_t)t->id << 32 | seq,
			.sg_list = sge,
			.send_flags = IBV_SEND_SIGNALED,
		};
		struct ibv_send_wr *bad;
		uint8_t *check;
		long at;
		int st;

		if (op == OP_SEND && len < HDR_LEN)
			len = HDR_LEN;
		/* ibv_memcpy_{to,from}_dm: offsets and lengths in words */
		if (op >= OP_DM_WRITE) {
			len = (len + 3) & ~3u;
			doff &= ~3u;
			if (doff + len > DM_LEN)
				doff = DM_LEN - len;
		}
		if (op == OP_SEND)
			soff = below(t, BUF_LEN - len + 1);
		switch (op) {
		case OP_WRITE:
		case OP_DM_WRITE:
			fill(t->src + soff, len, t->id, seq);
			wr.opcode = IBV_WR_RDMA_WRITE;
			wr.num_sge = split(t, sge, (uintptr_t)t->src + soff,
					   len, t->src_mr->lkey);
			wr.wr.rdma.remote_addr = op == OP_WRITE ?
				(uintptr_t)t->dst + doff : doff;
			wr.wr.rdma.rkey = op == OP_WRITE ? t->dst_mr->rkey :
							   dm_mr->rkey;
			break;
		case OP_READ:
		case OP_DM_READ:
			if (op == OP_READ) {
				fill(t->src + soff, len, t->id, seq);
			} else {
				fill(t->src, len, t->id, seq);
				if (ibv_memcpy_to_dm(dm, doff, t->src, len)) {
					fail("thread %d seq %d: memcpy_to_dm (%lu)",
					     t->id, seq, 0);
					return NULL;
				}
			}
			wr.opcode = IBV_WR_RDMA_READ;
			wr.num_sge = split(t, sge, (uintptr_t)t->dst + doff,
					   len, t->dst_mr->lkey);
			wr.wr.rdma.remote_addr = op == OP_READ ?
				(uintptr_t)t->src + soff : doff;
			wr.wr.rdma.rkey = op == OP_READ ? t->src_mr->rkey :
							  dm_mr->rkey;
			break;
		default: {
			struct hdr h = {
				.thread = t->id, .seq = seq, .len = len,
				.magic = MAGIC,
			};

			memcpy(t->src + soff, &h, sizeof(h));
			fill(t->src + soff + HDR_LEN, len - HDR_LEN, t->id,
			     seq);
			wr.opcode = IBV_WR_SEND;
			wr.num_sge = split(t, sge, (uintptr_t)t->src + soff,
					   len, t->src_mr->lkey);
			break;
		}
		}
		atomic_store(&t->done, 0);
		if (ibv_post_send(qp, &wr, &bad)) {
			fail("thread %d seq %d: post_send errno %lu", t->id,
			     seq, errno);
			return NULL;
		}
		st = wait_done(t);
		if (st) {
			fail("thread %d seq %d: completion status %lu", t->id,
			     seq, (unsigned long)st);
			printf("  (%s of %u bytes)\n", op_name[op], len);
			return NULL;
		}
		t->ops++;
		t->bytes += len;
		/* what arrived where it was sent */
		switch (op) {
		case OP_WRITE:
			check = t->dst + doff;
			break;
		case OP_DM_WRITE:
			check = t->dst + doff;
			if (ibv_memcpy_from_dm(check, dm, doff, len)) {
				fail("thread %d seq %d: memcpy_from_dm (%lu)",
				     t->id, seq, 0);
				return NULL;
			}
			break;
		case OP_READ:
		case OP_DM_READ:
			check = t->dst + doff;
			break;
		default:
			continue;	/* the receiver checks it */
		}
		at = mismatch(check, len, t->id, seq);
		if (at >= 0) {
			fail("thread %d seq %d: byte %lu differs", t->id, seq,
			     at);
			printf("  (%s of %u bytes)\n", op_name[op], len);
			return NULL;
		}
	}
	return NULL;
}

static struct ibv_mr *reg(void *p, size_t len)
{
	return ibv_reg_mr(pd, p, len, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
}

int main(int argc, char **argv)
{
	const char *name = "rdmasim0";
	struct ibv_alloc_dm_attr dma = { .length = DM_LEN };
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = 2 * NTHREADS,
			.max_recv_wr = nrecv,
			.max_send_sge = 3,
			.max_recv_sge = 1,
		},
	};
	struct ibv_port_attr port;
	unsigned long seed = time(NULL);
	const char *step = "open";
	int opt, i, rc = 1;

	while ((opt = getopt(argc, argv, "d:s:n:r:")) != -1) {
		switch (opt) {
		case 'd':
			name = optarg;
			break;
		case 's':
			seed = strtoul(optarg, NULL, 0);
			break;
		case 'n':
			nops = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			nrecv = atoi(optarg);
			break;
		default:
			nrecv = 0;
			break;
		}
		if (nrecv < 1 || nrecv > NRECV) {
			fprintf(stderr,
				"usage: %s [-d dev] [-s seed] [-n ops] [-r 1-%d]\n",
				argv[0], NRECV);
			return 2;
		}
	}
	printf("seed %lu\n", seed);
	ctx = rsim_open_device(name);
	if (!ctx || ibv_query_port(ctx, 1, &port)) {
		printf("result FAIL (cannot open %s: %s)\n", name,
		       strerror(errno));
		return 1;
	}
	step = "PD, CQs";
	pd = ibv_alloc_pd(ctx);
	scq = ibv_create_cq(ctx, 4 * NTHREADS, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, nrecv, NULL, NULL, 0);
	if (!pd || !scq || !rcq)
		goto out;
	qa.send_cq = scq;
	qa.recv_cq = rcq;
	step = "QP";
	qp = ibv_create_qp(pd, &qa);
	if (!qp || rsim_connect_self(qp, port.lid, IBV_ACCESS_REMOTE_WRITE |
						 IBV_ACCESS_REMOTE_READ,
					 IBV_MTU_4096, 4))
		goto out;
	step = "device memory";
	dm = ibv_alloc_dm(ctx, &dma);
	if (dm) {
		dm_mr = ibv_reg_dm_mr(pd, dm, 0, DM_LEN,
				      IBV_ACCESS_ZERO_BASED |
				      IBV_ACCESS_LOCAL_WRITE |
				      IBV_ACCESS_REMOTE_WRITE |
				      IBV_ACCESS_REMOTE_READ);
		if (!dm_mr)
			goto out;
	} else {
		printf("no device memory (%s): its cases skipped\n",
		       strerror(errno));
	}
	step = "receive buffers";
	for (i = 0; i < nrecv; i++) {
		rbuf[i] = aligned_alloc(4096, BUF_LEN);
		rbuf_mr[i] = rbuf[i] ? reg(rbuf[i], BUF_LEN) : NULL;
		if (!rbuf_mr[i] || post_recv(i))
			goto out;
	}
	step = "the threads' buffers";
	for (i = 0; i < NTHREADS; i++) {
		struct thread *t = &threads[i];

		t->id = i;
		t->rng = seed * 2654435761u + i + 1;
		t->src = aligned_alloc(4096, BUF_LEN);
		t->dst = aligned_alloc(4096, BUF_LEN);
		if (!t->src || !t->dst)
			goto out;
		/* fresh pages, touched once, so that the device's view is
		 * of memory the process has written
		 */
		memset(t->src, 0, BUF_LEN);
		memset(t->dst, 0, BUF_LEN);
		t->src_mr = reg(t->src, BUF_LEN);
		t->dst_mr = reg(t->dst, BUF_LEN);
		if (!t->src_mr || !t->dst_mr)
			goto out;
	}
	step = "threads";
	for (i = 0; i < NTHREADS; i++)
		if (pthread_create(&threads[i].tid, NULL, run, &threads[i]))
			goto out;
	for (i = 0; i < NTHREADS; i++)
		pthread_join(threads[i].tid, NULL);
	/* the SENDs of the last iterations: their receives are checked */
	for (i = 0; i < 100 && poll_once(); i++)
		;
	for (i = 0; i < NTHREADS; i++)
		printf("thread %d: %lu ops, %llu bytes\n", i, threads[i].ops,
		       threads[i].bytes);
	printf("receives checked %lu\n", atomic_load(&recvs_checked));
	/*
	 * Deregistration unpins the memory; where the core's mapping of it
	 * bounces (swiotlb), the unmap copies each slot back over the pages:
	 * what the device wrote there must still be there afterwards.
	 */
	for (i = 0; i < NTHREADS; i++) {
		struct thread *t = &threads[i];
		uint8_t *copy = malloc(BUF_LEN);

		if (!copy)
			goto out;
		memcpy(copy, t->dst, BUF_LEN);
		ibv_dereg_mr(t->dst_mr);
		t->dst_mr = NULL;
		if (memcmp(copy, t->dst, BUF_LEN))
			fail("thread %d: its buffer changed when it was deregistered (%d, %lu)",
			     i, 0, 0);
		free(copy);
	}
	if (!atomic_load(&failures))
		rc = 0;
out:
	if (rc && !atomic_load(&failures))
		printf("FAIL setup (%s): %s\n", step, strerror(errno));
	for (i = 0; i < NTHREADS; i++) {
		if (threads[i].src_mr)
			ibv_dereg_mr(threads[i].src_mr);
		if (threads[i].dst_mr)
			ibv_dereg_mr(threads[i].dst_mr);
		free(threads[i].src);
		free(threads[i].dst);
	}
	if (qp)
		ibv_destroy_qp(qp);
	for (i = 0; i < nrecv; i++) {
		if (rbuf_mr[i])
			ibv_dereg_mr(rbuf_mr[i]);
		free(rbuf[i]);
	}
	if (dm_mr)
		ibv_dereg_mr(dm_mr);
	if (dm)
		ibv_free_dm(dm);
	if (scq)
		ibv_destroy_cq(scq);
	if (rcq)
		ibv_destroy_cq(rcq);
	if (pd)
		ibv_dealloc_pd(pd);
	if (ctx)
		ibv_close_device(ctx);
	printf("result %s\n", rc ? "FAIL" : "PASS");
	return rc;
}
