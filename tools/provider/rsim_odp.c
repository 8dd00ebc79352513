// SPDX-License-Identifier: GPL-2.0-only
/*
 * rsim_odp: on-demand paging MRs through libibverbs and the provider, the
 * rules a device's ODP must keep, each case a failure if it does not:
 *
 *  - caps: ODP and implicit ODP claimed, every RC operation;
 *  - fault-in: an RDMA WRITE of 64 KiB into an ODP MR over memory never
 *    touched lands (the device faults it: odp_faults in debugfs grows),
 *    and a second one needs no fault; after madvise(MADV_DONTNEED) the
 *    MMU notifier invalidates the range (odp_invalidations grows) and the
 *    next WRITE faults again and lands; an ODP source works too;
 *  - UC: a WRITE into an untouched ODP MR lands;
 *  - a hole: a WRITE into a page of an ODP MR that was unmapped completes
 *    with IBV_WC_REM_ACCESS_ERR, a local SGE in it with
 *    IBV_WC_LOC_PROT_ERR, as a HCA whose page fault cannot be resolved;
 *  - implicit ODP (ibv_reg_mr(pd, NULL, SIZE_MAX)): a WRITE anywhere the
 *    process has memory lands, into an unmapped range or past the end of
 *    the address space fails; an implicit MR with an iova is refused; it
 *    translates 64 GiB of distinct address space at most;
 *  - atomics into untouched ODP memory, an RDMA READ of untouched memory
 *    through a read-only ODP MR (zeros);
 *  - fault injection (debugfs fault/odp_fault/fail_nth): the WR fails as
 *    on an unresolvable fault, and the next one works;
 *  - ibv_advise_mr(): synchronous prefetch faults the range; a bad lkey,
 *    a non-ODP MR, a range past the MR, PREFETCH_WRITE of a read-only MR
 *    are refused with their errno;
 *  - fork: the parent's ODP range turns copy-on-write; a WRITE into it
 *    lands in the parent's own copy, the child keeps the old bytes;
 *  - mremap: the range moved away is a hole, moved back it works again;
 *  - a race (the hostile process): two threads post WRITEs into an ODP
 *    MR (each on its own QPs) while a third zaps and remaps its pages
 *    (madvise, mmap MAP_FIXED):
 *    the range never lacks a mapping, so every WRITE completes
 *    successfully (what lands is lost to the next zap: not compared);
 *    again with munmap and mmap, holes in time: each WRITE completes
 *    successfully or with IBV_WC_REM_ACCESS_ERR, nothing else.
 *
 * Prints one "odp <case> <result>" line per case, "FAIL ..." for each
 * expectation that does not hold, and "result PASS" (exit 0) or "result
 * FAIL" (exit 1); exit 77 where the device claims no ODP.
 *
 * With -b, make bench's figures instead, on any device with ODP (rxe
 * too: RoCE devices are connected to themselves by their GID 0): an RDMA
 * WRITE of 64 KiB and of 1 MiB from a pinned MR into a pinned MR, into
 * an ODP MR warm (its pages faulted) and into an ODP MR at first touch
 * (MADV_DONTNEED before each WRITE, outside the time), each the median
 * of its runs, from post to completion on one self-connected QP; and
 * the page fault's cost, (first touch - warm) / pages (0 if first touch
 * was not the slower):
 *
 *   RSIM-BENCH odp <device> write <bytes> pinned <us> warm <us> first <us> fault_per_page <us>
 *
 *   RDMAV_DRIVERS=<tools/provider>/librdmasim rsim_odp [-d rdmasim0] [-b]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "rsim_open.h"

#define RSIM_EXPECT_TAG "odp"
#include "rsim_expect.h"

#define LEN		(64 * 1024)
#define PAGE		4096
#define ODP_ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
			 IBV_ACCESS_ON_DEMAND)
#define QP_ACCESS	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_REMOTE_ATOMIC)
#define RACE_SECONDS	2

static const char *devname = "rdmasim0";
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static uint16_t lid;

/* one of the device's debugfs datapath counters, or -1 */
static long long counter(const char *name)
{
	char path[256], key[64], line[256];
	long long v, found = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/rdmasim/%s/datapath",
		 devname);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %lld", key, &v) == 2 &&
		    !strcmp(key, name))
			found = v;
	fclose(f);
	return found;
}

static int write_knob(const char *rel, const char *val)
{
	char path[256];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/sys/kernel/debug/rdmasim/%s/%s",
		 devname, rel);
	f = fopen(path, "w");
	if (!f)
		return -1;
	ok = fputs(val, f) >= 0;
	return fclose(f) || !ok ? -1 : 0;
}

/* a CQ and an RC QP connected to itself */
struct loop {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
};

/*
 * an RC QP connected to itself: by the port's LID, or on RoCE (rxe0 in
 * make bench) by its GID 0
 */
static int connect_self(struct ibv_qp *qp)
{
	struct ibv_ah_attr ah = { .dlid = lid, .port_num = 1 };
	struct ibv_port_attr pa;

	if (ibv_query_port(ctx, 1, &pa))
		return -1;
	if (pa.link_layer == IBV_LINK_LAYER_ETHERNET) {
		ah.dlid = 0;
		ah.is_global = 1;
		ah.grh.hop_limit = 1;
		if (ibv_query_gid(ctx, 1, 0, &ah.grh.dgid))
			return -1;
	}
	if (rsim_qp_to_rtr(qp, qp->qp_num, &ah, QP_ACCESS, IBV_MTU_1024, 4))
		return -1;
	return rsim_qp_to_rts(qp, 4);
}

static int loop_open(struct loop *l)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 64, .max_recv_wr = 1,
			 .max_send_sge = 2, .max_recv_sge = 1 },
	};

	l->cq = ibv_create_cq(ctx, 128, NULL, NULL, 0);
	if (!l->cq)
		return -1;
	ia.send_cq = l->cq;
	ia.recv_cq = l->cq;
	l->qp = ibv_create_qp(pd, &ia);
	if (!l->qp || connect_self(l->qp))
		return -1;
	return 0;
}

static void loop_close(struct loop *l)
{
	if (l->qp)
		ibv_destroy_qp(l->qp);
	if (l->cq)
		ibv_destroy_cq(l->cq);
	l->qp = NULL;
	l->cq = NULL;
}

/* one completion within a few seconds: its status, or -1 */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	return rsim_poll_one(cq, wc, 5000);
}

/*
 * A page the next one_wr() unmaps once its QP and CQ exist: their rings
 * are mappings too, and one made after the hole was punched could fill it
 */
static void *hole_at;
/* or a range (LEN bytes) it moves away with mremap() */
static void *move_from, *move_to;

/* post one RC WR on a fresh loop (an error leaves its QP in ERR) */
static int one_wr(struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	struct loop l = {};
	int st = -1;

	if (!loop_open(&l)) {
		if (hole_at && munmap(hole_at, PAGE))
			fail("hole", "munmap errno %ld%ld", errno, 0);
		if (move_from &&
		    mremap(move_from, LEN, LEN, MREMAP_MAYMOVE | MREMAP_FIXED,
			   move_to) != move_to)
			fail("mremap", "mremap errno %ld%ld", errno, 0);
		hole_at = NULL;
		move_from = NULL;
		if (!ibv_post_send(l.qp, wr, &bad))
			st = poll_one(l.cq, &wc);
	}
	loop_close(&l);
	return st;
}

static int rdma(enum ibv_wr_opcode op, void *laddr, uint32_t lkey,
		uint64_t raddr, uint32_t rkey, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)laddr, .length = len, .lkey = lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	};

	return one_wr(&wr);
}

static void *map_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void fill(void *p, size_t len, int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		((unsigned char *)p)[i] = (unsigned char)(i * 7 + seed);
}

static void expect_grew(const char *what, const char *name,
			long long before)
{
	long long now = counter(name);

	printf("odp %s %s %s\n", what, name, now > before ? "grew" : "same");
	if (now <= before)
		fail(what, "counter did not grow: %ld -> %ld", before, now);
}

/* a WRITE of @len from @from (@lkey) to @to (@rkey) completes and lands */
static void expect_write_lands(const char *what, void *from, uint32_t lkey,
			       void *to, uint32_t rkey, uint32_t len)
{
	expect_status(what, rdma(IBV_WR_RDMA_WRITE, from, lkey, (uintptr_t)to,
				 rkey, len), IBV_WC_SUCCESS);
	if (memcmp(to, from, len))
		fail(what, "data differ%ld%ld", 0, 0);
}

/* ---- the cases ---- */

/* ODP claimed; with @strict, implicit ODP and every RC operation too */
static bool odp_caps_ok(bool strict)
{
	struct ibv_device_attr_ex a = {};
	uint32_t rc = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		      IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
		      IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV;

	if (ibv_query_device_ex(ctx, NULL, &a)) {
		fail("caps", "query_device_ex %ld%ld", errno, 0);
		return false;
	}
	if (!(a.odp_caps.general_caps & IBV_ODP_SUPPORT))
		return false;
	printf("odp caps general 0x%llx rc 0x%x uc 0x%x ud 0x%x\n",
	       (unsigned long long)a.odp_caps.general_caps,
	       a.odp_caps.per_transport_caps.rc_odp_caps,
	       a.odp_caps.per_transport_caps.uc_odp_caps,
	       a.odp_caps.per_transport_caps.ud_odp_caps);
	if (!strict)
		return true;
	if (!(a.odp_caps.general_caps & IBV_ODP_SUPPORT_IMPLICIT))
		fail("caps", "no implicit ODP (0x%lx)%ld",
		     (long)a.odp_caps.general_caps, 0);
	if ((a.odp_caps.per_transport_caps.rc_odp_caps & rc) != rc)
		fail("caps", "rc caps 0x%lx, want 0x%lx",
		     a.odp_caps.per_transport_caps.rc_odp_caps, rc);
	return true;
}

/* a UC QP connected to itself (the attributes UC takes) */
static int uc_connect_self(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = qp->qp_num;
	a.ah_attr.dlid = lid;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

/* UC: a WRITE into an untouched ODP MR lands (the UC capability claimed) */
static void uc_write(struct ibv_mr *src, void *sbuf)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	char *dst = map_anon(2 * PAGE);
	struct ibv_sge sge = { .addr = (uintptr_t)sbuf, .length = PAGE,
			       .lkey = src->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 7, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_qp *qp = NULL;
	struct ibv_mr *mr = NULL;
	struct ibv_wc wc;

	if (cq) {
		ia.send_cq = cq;
		ia.recv_cq = cq;
		qp = ibv_create_qp(pd, &ia);
	}
	if (dst)
		mr = ibv_reg_mr(pd, dst, 2 * PAGE, ODP_ACCESS);
	if (!qp || !mr || uc_connect_self(qp)) {
		fail("uc", "setup errno %ld%ld", errno, 0);
		goto out;
	}
	fill(sbuf, PAGE, 11);
	wr.wr.rdma.remote_addr = (uintptr_t)dst;
	wr.wr.rdma.rkey = mr->rkey;
	expect_status("uc_write_first_touch",
		      ibv_post_send(qp, &wr, &bad) ? -1 : poll_one(cq, &wc),
		      IBV_WC_SUCCESS);
	if (memcmp(dst, sbuf, PAGE))
		fail("uc_write_first_touch", "data differ%ld%ld", 0, 0);
out:
	if (qp)
		ibv_destroy_qp(qp);
	if (mr)
		ibv_dereg_mr(mr);
	if (cq)
		ibv_destroy_cq(cq);
	if (dst)
		munmap(dst, 2 * PAGE);
}

static void fault_in(struct ibv_mr *src, void *sbuf)
{
	void *dst = map_anon(LEN);
	struct ibv_mr *mr;
	long long f, inv;

	mr = dst ? ibv_reg_mr(pd, dst, LEN, ODP_ACCESS) : NULL;
	if (!mr) {
		fail("fault_in", "reg_mr errno %ld%ld", errno, 0);
		goto out;
	}
	fill(sbuf, LEN, 1);
	f = counter("odp_faults");
	expect_write_lands("write_first_touch", sbuf, src->lkey,
			   dst, mr->rkey, LEN);
	expect_grew("write_first_touch", "odp_faults", f);

	f = counter("odp_faults");
	fill(sbuf, LEN, 2);
	expect_write_lands("write_warm", sbuf, src->lkey, dst, mr->rkey, LEN);
	if (counter("odp_faults") != f)
		fail("write_warm", "faulted again: %ld -> %ld", f,
		     counter("odp_faults"));

	inv = counter("odp_invalidations");
	madvise(dst, LEN, MADV_DONTNEED);
	expect_grew("dontneed_invalidates", "odp_invalidations", inv);
	f = counter("odp_faults");
	fill(sbuf, LEN, 3);
	expect_write_lands("write_after_dontneed", sbuf, src->lkey,
			   dst, mr->rkey, LEN);
	expect_grew("write_after_dontneed", "odp_faults", f);

	/* the ODP MR as the source of a WRITE into the pinned one */
	madvise(dst, LEN, MADV_DONTNEED);
	fill(dst, LEN, 4);
	memset(sbuf, 0, LEN);
	expect_write_lands("odp_source", dst, mr->lkey, sbuf, src->rkey, LEN);
	ibv_dereg_mr(mr);
out:
	if (dst)
		munmap(dst, LEN);
}

static void hole(struct ibv_mr *src, void *sbuf)
{
	char *buf = map_anon(3 * PAGE);
	struct ibv_mr *mr;

	mr = buf ? ibv_reg_mr(pd, buf, 3 * PAGE, ODP_ACCESS) : NULL;
	if (!mr) {
		fail("hole", "reg_mr errno %ld%ld", errno, 0);
		goto out;
	}
	/* fault the middle page in first: the hole is an invalidation too */
	expect_status("write_before_hole",
		      rdma(IBV_WR_RDMA_WRITE, sbuf, src->lkey,
			   (uintptr_t)buf + PAGE, mr->rkey, PAGE),
		      IBV_WC_SUCCESS);
	hole_at = buf + PAGE;
	expect_status("write_into_hole",
		      rdma(IBV_WR_RDMA_WRITE, sbuf, src->lkey,
			   (uintptr_t)buf + PAGE, mr->rkey, PAGE),
		      IBV_WC_REM_ACCESS_ERR);
	if (mmap(buf + PAGE, PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
		fail("hole", "mmap errno %ld%ld", errno, 0);
	hole_at = buf + PAGE;
	expect_status("local_sge_in_hole",
		      rdma(IBV_WR_RDMA_WRITE, buf + PAGE, mr->lkey,
			   (uintptr_t)sbuf, src->rkey, PAGE),
		      IBV_WC_LOC_PROT_ERR);
	/* the pages around the hole still work */
	expect_status("write_beside_hole",
		      rdma(IBV_WR_RDMA_WRITE, sbuf, src->lkey,
			   (uintptr_t)buf + 2 * PAGE, mr->rkey, PAGE),
		      IBV_WC_SUCCESS);
	ibv_dereg_mr(mr);
	munmap(buf, PAGE);
	munmap(buf + 2 * PAGE, PAGE);
	return;
out:
	if (buf)
		munmap(buf, 3 * PAGE);
}

static void implicit(struct ibv_mr *src, void *sbuf)
{
	char *buf = map_anon(LEN), *gone = map_anon(PAGE);
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_mr_iova(pd, NULL, SIZE_MAX, PAGE, ODP_ACCESS);
	expect_errno("implicit_with_iova", mr ? 0 : errno, EINVAL);
	if (mr)
		ibv_dereg_mr(mr);
	mr = ibv_reg_mr(pd, NULL, SIZE_MAX, ODP_ACCESS);
	expect_errno("implicit_reg", mr ? 0 : errno, 0);
	if (!mr || !buf || !gone)
		goto out;
	fill(sbuf, LEN, 5);
	expect_write_lands("implicit_write", sbuf, src->lkey,
			   buf, mr->rkey, LEN);
	/* a local SGE through the implicit lkey */
	memset(buf, 0x5a, PAGE);
	expect_status("implicit_local_sge",
		      rdma(IBV_WR_RDMA_WRITE, buf, mr->lkey,
			   (uintptr_t)sbuf, src->rkey, PAGE), IBV_WC_SUCCESS);
	hole_at = gone;
	expect_status("implicit_unmapped",
		      rdma(IBV_WR_RDMA_WRITE, sbuf, src->lkey,
			   (uintptr_t)gone, mr->rkey, PAGE),
		      IBV_WC_REM_ACCESS_ERR);
	gone = NULL;
	/* the last page of a 64-bit address space: past the MR's end */
	expect_status("implicit_past_end",
		      rdma(IBV_WR_RDMA_WRITE, sbuf, src->lkey,
			   UINT64_MAX - PAGE + 1, mr->rkey, PAGE),
		      IBV_WC_REM_ACCESS_ERR);
	expect_status("implicit_wrap",
		      rdma(IBV_WR_RDMA_WRITE, sbuf, src->lkey,
			   UINT64_MAX - 15, mr->rkey, 32),
		      IBV_WC_REM_ACCESS_ERR);
out:
	if (mr)
		ibv_dereg_mr(mr);
	if (buf)
		munmap(buf, LEN);
	if (gone)
		munmap(gone, PAGE);
}

/*
 * An implicit MR translates 64 GiB of distinct address space at most (64
 * children of 1 GiB, odp.c): a page in each of 64 GiB ranges lands, one in
 * the 65th is refused as unresolvable, and the kernel allocated for 64
 * ranges, not for the whole address space
 */
#define IMPLICIT_MAX_GB	64

static void implicit_bounded(struct ibv_mr *src, void *sbuf)
{
	/* 1 GiB apart from 256 GiB on (UML gives a process 512 GiB) */
	uintptr_t base = (uintptr_t)1 << 38;
	struct ibv_mr *mr = ibv_reg_mr(pd, NULL, SIZE_MAX, ODP_ACCESS);
	int i, st = IBV_WC_SUCCESS, n = 0;
	void *p[IMPLICIT_MAX_GB + 1] = {};

	if (!mr) {
		fail("implicit_bounded", "reg_mr errno %ld%ld", errno, 0);
		return;
	}
	for (i = 0; i <= IMPLICIT_MAX_GB; i++) {
		p[i] = mmap((void *)(base + ((uintptr_t)i << 30)), PAGE,
			    PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			    -1, 0);
		if (p[i] == MAP_FAILED) {
			p[i] = NULL;
			fail("implicit_bounded", "mmap errno %ld%ld", errno, 0);
			goto out;
		}
	}
	for (i = 0; i < IMPLICIT_MAX_GB && st == IBV_WC_SUCCESS; i++, n++)
		st = rdma(IBV_WR_RDMA_WRITE, sbuf, src->lkey, (uintptr_t)p[i],
			  mr->rkey, PAGE);
	printf("odp implicit_ranges_written %d\n", st == IBV_WC_SUCCESS ? n : -n);
	if (st != IBV_WC_SUCCESS)
		fail("implicit_bounded", "range %ld: status %ld", n, st);
	expect_status("implicit_range_past_bound",
		      rdma(IBV_WR_RDMA_WRITE, sbuf, src->lkey,
			   (uintptr_t)p[IMPLICIT_MAX_GB], mr->rkey, PAGE),
		      IBV_WC_REM_ACCESS_ERR);
out:
	ibv_dereg_mr(mr);
	for (i = 0; i <= IMPLICIT_MAX_GB; i++)
		if (p[i])
			munmap(p[i], PAGE);
}

static void atomics_and_reads(struct ibv_mr *src, void *sbuf)
{
	uint64_t *dst = map_anon(PAGE);
	struct ibv_mr *mr, *ro;
	struct ibv_sge sge;
	struct ibv_send_wr wr = {
		.wr_id = 2, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
		.send_flags = IBV_SEND_SIGNALED,
	};

	mr = dst ? ibv_reg_mr(pd, dst, PAGE, ODP_ACCESS) : NULL;
	ro = dst ? ibv_reg_mr(pd, dst, PAGE, IBV_ACCESS_REMOTE_READ |
			      IBV_ACCESS_ON_DEMAND) : NULL;
	if (!mr || !ro) {
		fail("atomics", "reg_mr errno %ld%ld", errno, 0);
		goto out;
	}
	sge = (struct ibv_sge){ .addr = (uintptr_t)sbuf, .length = 8,
				.lkey = src->lkey };
	wr.wr.atomic.remote_addr = (uintptr_t)&dst[1];
	wr.wr.atomic.rkey = mr->rkey;
	wr.wr.atomic.compare_add = 5;
	memset(sbuf, 0xff, 8);
	expect_status("fetch_add_untouched", one_wr(&wr), IBV_WC_SUCCESS);
	if (dst[1] != 5 || *(uint64_t *)sbuf != 0)
		fail("fetch_add_untouched", "memory %ld, returned %ld",
		     (long)dst[1], (long)*(uint64_t *)sbuf);

	/* the read-only MR: the page faulted read-only is zero-filled */
	madvise(dst, PAGE, MADV_DONTNEED);
	memset(sbuf, 0xff, PAGE);
	expect_status("read_untouched_readonly",
		      rdma(IBV_WR_RDMA_READ, sbuf, src->lkey,
			   (uintptr_t)dst, ro->rkey, PAGE), IBV_WC_SUCCESS);
	if (((unsigned char *)sbuf)[0] || ((unsigned char *)sbuf)[PAGE - 1])
		fail("read_untouched_readonly", "not zeros%ld%ld", 0, 0);
	expect_status("write_readonly",
		      rdma(IBV_WR_RDMA_WRITE, sbuf, src->lkey,
			   (uintptr_t)dst, ro->rkey, PAGE),
		      IBV_WC_REM_ACCESS_ERR);
out:
	if (ro)
		ibv_dereg_mr(ro);
	if (mr)
		ibv_dereg_mr(mr);
	if (dst)
		munmap(dst, PAGE);
}

static void injected(struct ibv_mr *src, void *sbuf)
{
	void *dst = map_anon(LEN);
	struct ibv_mr *mr;
	long long err;

	mr = dst ? ibv_reg_mr(pd, dst, LEN, ODP_ACCESS) : NULL;
	if (!mr) {
		fail("injected", "reg_mr errno %ld%ld", errno, 0);
		goto out;
	}
	err = counter("odp_fault_errors");
	/* the third page of the fault fails: the WRITE with it */
	if (write_knob("fault/odp_fault/fail_nth", "3")) {
		fail("injected", "no fault/odp_fault/fail_nth knob%ld%ld", 0, 0);
		goto out_dereg;
	}
	expect_status("fault_injected",
		      rdma(IBV_WR_RDMA_WRITE, sbuf, src->lkey,
			   (uintptr_t)dst, mr->rkey, LEN),
		      IBV_WC_REM_ACCESS_ERR);
	expect_grew("fault_injected", "odp_fault_errors", err);
	fill(sbuf, LEN, 6);
	expect_write_lands("after_injected", sbuf, src->lkey,
			   dst, mr->rkey, LEN);
	/* a fault held back: the WRITE waits for it and lands */
	madvise(dst, LEN, MADV_DONTNEED);
	if (!write_knob("odp_delay_ms", "50")) {
		expect_status("fault_delayed",
			      rdma(IBV_WR_RDMA_WRITE, sbuf, src->lkey,
				   (uintptr_t)dst, mr->rkey, LEN),
			      IBV_WC_SUCCESS);
		write_knob("odp_delay_ms", "0");
		if (memcmp(dst, sbuf, LEN))
			fail("fault_delayed", "data differ%ld%ld", 0, 0);
	}
out_dereg:
	ibv_dereg_mr(mr);
out:
	if (dst)
		munmap(dst, LEN);
}

static int advise(struct ibv_mr *mr, void *addr, uint32_t len,
		  enum ibv_advise_mr_advice advice, uint32_t lkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)addr, .length = len, .lkey = lkey,
	};

	(void)mr;
	return ibv_advise_mr(pd, advice, IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1);
}

static void prefetch(struct ibv_mr *src, void *sbuf)
{
	void *dst = map_anon(LEN);
	struct ibv_mr *mr, *ro;
	long long f;

	mr = dst ? ibv_reg_mr(pd, dst, LEN, ODP_ACCESS) : NULL;
	ro = dst ? ibv_reg_mr(pd, dst, LEN, IBV_ACCESS_REMOTE_READ |
			      IBV_ACCESS_ON_DEMAND) : NULL;
	if (!mr || !ro) {
		fail("prefetch", "reg_mr errno %ld%ld", errno, 0);
		goto out;
	}
	f = counter("odp_faults");
	expect_errno("prefetch_write_sync",
		     advise(mr, dst, LEN, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			    mr->lkey), 0);
	expect_grew("prefetch_write_sync", "odp_faults", f);
	/* prefetched: the WRITE finds every page */
	f = counter("odp_faults");
	expect_status("write_after_prefetch",
		      rdma(IBV_WR_RDMA_WRITE, sbuf, src->lkey,
			   (uintptr_t)dst, mr->rkey, LEN), IBV_WC_SUCCESS);
	if (counter("odp_faults") != f)
		fail("write_after_prefetch", "faulted: %ld -> %ld", f,
		     counter("odp_faults"));
	expect_errno("prefetch_bad_lkey",
		     advise(mr, dst, LEN, IBV_ADVISE_MR_ADVICE_PREFETCH,
			    mr->lkey ^ 0x100), EINVAL);
	expect_errno("prefetch_pinned_mr",
		     advise(src, sbuf, LEN, IBV_ADVISE_MR_ADVICE_PREFETCH,
			    src->lkey), EINVAL);
	expect_errno("prefetch_past_mr",
		     advise(mr, (char *)dst + PAGE, LEN,
			    IBV_ADVISE_MR_ADVICE_PREFETCH, mr->lkey), EINVAL);
	expect_errno("prefetch_wrap",
		     advise(mr, (void *)(uintptr_t)(UINT64_MAX - 15), 32,
			    IBV_ADVISE_MR_ADVICE_PREFETCH, mr->lkey), EINVAL);
	expect_errno("prefetch_write_readonly",
		     advise(ro, dst, LEN, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			    ro->lkey), EPERM);
	expect_errno("prefetch_no_fault",
		     advise(mr, dst, LEN,
			    IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT, mr->lkey),
		     0);
out:
	if (ro)
		ibv_dereg_mr(ro);
	if (mr)
		ibv_dereg_mr(mr);
	if (dst)
		munmap(dst, LEN);
}

/* ---- the race ---- */

/*
 * QPs a poster opens before the race: one goes to the error state with
 * each WRITE that meets a hole, and a QP opened during the race could
 * map its rings into the hole the zapper made
 */
#define RACE_LOOPS	32

struct poster {
	pthread_t t;
	int seed;
	struct ibv_mr *src;
	unsigned char *sbuf;
	struct ibv_mr *dst;
	unsigned char *dbuf;	/* its own LEN / 2 of the ODP range */
	struct loop l[RACE_LOOPS];
	long wrs;
	long holes;		/* WRITEs that met a hole (holes mode) */
	long bad;
};

static atomic_bool race_stop;
/* the zapper unmaps the range for a while: a WRITE may meet the hole */
static bool race_holes;

static void *poster_main(void *arg)
{
	struct poster *p = arg;
	struct ibv_sge sge;
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;
	int i = 0, st;

	while (!atomic_load(&race_stop) && i < RACE_LOOPS) {
		uint32_t len = PAGE + (uint32_t)(rand_r((unsigned int *)&p->seed) %
						 (LEN / 2 - PAGE));

		fill(p->sbuf, len, p->seed + (int)p->wrs);
		sge = (struct ibv_sge){ .addr = (uintptr_t)p->sbuf,
					.length = len, .lkey = p->src->lkey };
		wr.wr_id = (uint64_t)p->wrs;
		wr.wr.rdma.remote_addr = (uintptr_t)p->dbuf;
		wr.wr.rdma.rkey = p->dst->rkey;
		st = ibv_post_send(p->l[i].qp, &wr, &bad) ? -1 :
		     poll_one(p->l[i].cq, &wc);
		if (st == IBV_WC_SUCCESS) {
			p->wrs++;
		} else if (race_holes && st == IBV_WC_REM_ACCESS_ERR) {
			/* the QP is in the error state: the next one */
			p->holes++;
			i++;
		} else {
			printf("odp race status %d\n", st);
			p->bad++;
			break;
		}
	}
	return NULL;
}

static void race(bool holes)
{
	const char *what = holes ? "race_holes" : "race";
	unsigned char *dst = map_anon(LEN);
	struct poster p[2] = {};
	struct ibv_mr *mr = NULL;
	long long inv = counter("odp_invalidations");
	time_t end;
	long zaps = 0, wrs = 0;
	int i;

	mr = dst ? ibv_reg_mr(pd, dst, LEN, ODP_ACCESS) : NULL;
	if (!mr) {
		fail(what, "reg_mr errno %ld%ld", errno, 0);
		goto out;
	}
	race_holes = holes;
	atomic_store(&race_stop, false);
	for (i = 0; i < 2; i++) {
		int j;

		p[i].seed = i + 1;
		p[i].sbuf = map_anon(LEN / 2);
		p[i].src = p[i].sbuf ? ibv_reg_mr(pd, p[i].sbuf, LEN / 2,
						  IBV_ACCESS_LOCAL_WRITE) :
			   NULL;
		p[i].dst = mr;
		p[i].dbuf = dst + i * (LEN / 2);
		for (j = 0; j < RACE_LOOPS && p[i].src; j++)
			if (loop_open(&p[i].l[j]))
				p[i].src = NULL;
		if (!p[i].src || pthread_create(&p[i].t, NULL, poster_main,
						&p[i])) {
			fail(what, "poster %ld: setup%ld", i, 0);
			p[i].t = 0;
		}
	}
	/*
	 * zap and remap under the posters: madvise and mmap MAP_FIXED (the
	 * range never lacks a VMA), or with @holes munmap, a moment, and
	 * mmap again where it was (MAP_FIXED_NOREPLACE: nothing else took
	 * the hole, as the posters make no mapping meanwhile)
	 */
	end = time(NULL) + RACE_SECONDS;
	while (time(NULL) < end) {
		void *m;

		if (holes) {
			munmap(dst, LEN);
			usleep(100);
			m = mmap(dst, LEN, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS |
				 MAP_FIXED_NOREPLACE, -1, 0);
		} else if (zaps & 1) {
			m = madvise(dst, LEN, MADV_DONTNEED) ? MAP_FAILED :
			    (void *)dst;
		} else {
			m = mmap(dst, LEN, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		}
		if (m != dst) {
			fail(what, "remap errno %ld%ld", errno, 0);
			break;
		}
		zaps++;
		usleep(200);
	}
	atomic_store(&race_stop, true);
	for (i = 0; i < 2; i++) {
		int j;

		if (p[i].t)
			pthread_join(p[i].t, NULL);
		printf("odp %s poster %d wrs %ld holes %ld bad %ld\n", what, i,
		       p[i].wrs, p[i].holes, p[i].bad);
		/*
		 * with holes, one poster may meet a hole on each of its QPs
		 * (the guest's one CPU may run it only while the range is
		 * away): the WRITEs that landed are counted over both
		 */
		if (p[i].bad || (!holes && !p[i].wrs))
			fail(what, "poster %ld: %ld failed", i, p[i].bad);
		wrs += p[i].wrs;
		for (j = 0; j < RACE_LOOPS; j++)
			loop_close(&p[i].l[j]);
		if (p[i].src)
			ibv_dereg_mr(p[i].src);
		if (p[i].sbuf)
			munmap(p[i].sbuf, LEN / 2);
	}
	if (!wrs)
		fail(what, "no WRITE landed: %ld of %ld posters", 0, 2);
	printf("odp %s zaps %ld\n", what, zaps);
	expect_grew(what, "odp_invalidations", inv);
	ibv_dereg_mr(mr);
out:
	if (dst)
		munmap(dst, LEN);
}

/*
 * fork: the parent's pages become copy-on-write, which invalidates its
 * ODP range; a WRITE into it then faults the parent's own copy in (a
 * write fault breaks the sharing), so the parent sees the bytes and the
 * child, which kept the old page, does not
 */
static void fork_copy_on_write(struct ibv_mr *src, void *sbuf)
{
	unsigned char *dst = map_anon(PAGE), seen = 0xee;
	struct ibv_mr *mr;
	int go[2] = { -1, -1 }, back[2] = { -1, -1 }, st;
	long long inv = counter("odp_invalidations");
	pid_t child = -1;
	char c;

	mr = dst ? ibv_reg_mr(pd, dst, PAGE, ODP_ACCESS) : NULL;
	if (!mr || pipe(go) || pipe(back)) {
		fail("fork_cow", "setup errno %ld%ld", errno, 0);
		goto out;
	}
	memset(dst, 0x11, PAGE);
	/* faulted in before the fork */
	memset(sbuf, 0x22, PAGE);
	st = rdma(IBV_WR_RDMA_WRITE, sbuf, src->lkey, (uintptr_t)dst,
		  mr->rkey, PAGE);
	child = fork();
	if (child == 0) {
		/* the child: what its copy holds once the parent wrote */
		if (read(go[0], &c, 1) == 1)
			c = (char)dst[0];
		_exit(write(back[1], &c, 1) == 1 ? 0 : 1);
	}
	if (child < 0) {
		fail("fork_cow", "fork errno %ld%ld", errno, 0);
		goto out;
	}
	memset(sbuf, 0x33, PAGE);
	expect_status("write_after_fork",
		      st ?: rdma(IBV_WR_RDMA_WRITE, sbuf, src->lkey,
				 (uintptr_t)dst, mr->rkey, PAGE),
		      IBV_WC_SUCCESS);
	if (write(go[1], "g", 1) != 1 || read(back[0], &seen, 1) != 1)
		fail("fork_cow", "pipe errno %ld%ld", errno, 0);
	printf("odp fork_cow parent 0x%x child 0x%x\n", dst[0], seen);
	if (dst[0] != 0x33 || dst[PAGE - 1] != 0x33)
		fail("fork_cow", "parent's page 0x%lx, want 0x%lx", dst[0],
		     0x33);
	if (seen != 0x22)
		fail("fork_cow", "child's page 0x%lx, want 0x%lx", seen, 0x22);
	expect_grew("fork_cow", "odp_invalidations", inv);
out:
	if (child > 0)
		waitpid(child, NULL, 0);
	if (go[0] >= 0) {
		close(go[0]);
		close(go[1]);
	}
	if (back[0] >= 0) {
		close(back[0]);
		close(back[1]);
	}
	if (mr)
		ibv_dereg_mr(mr);
	if (dst)
		munmap(dst, PAGE);
}

/*
 * mremap: the MR is its addresses, not its pages. The range moved away
 * is a hole (REM_ACCESS_ERR); moved back, the WRITE lands again
 */
static void moved(struct ibv_mr *src, void *sbuf)
{
	unsigned char *dst = map_anon(LEN), *away = map_anon(LEN);
	struct ibv_mr *mr;
	void *m;

	mr = dst && away ? ibv_reg_mr(pd, dst, LEN, ODP_ACCESS) : NULL;
	if (!mr) {
		fail("mremap", "setup errno %ld%ld", errno, 0);
		goto out;
	}
	expect_status("write_before_mremap",
		      rdma(IBV_WR_RDMA_WRITE, sbuf, src->lkey, (uintptr_t)dst,
			   mr->rkey, LEN), IBV_WC_SUCCESS);
	/* moved once the QP exists: its rings must not land where dst was */
	move_from = dst;
	move_to = away;
	expect_status("write_after_mremap_away",
		      rdma(IBV_WR_RDMA_WRITE, sbuf, src->lkey, (uintptr_t)dst,
			   mr->rkey, LEN), IBV_WC_REM_ACCESS_ERR);
	m = mremap(away, LEN, LEN, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	away = map_anon(LEN);
	if (m != dst) {
		fail("mremap", "mremap back errno %ld%ld", errno, 0);
		goto out;
	}
	fill(sbuf, LEN, 8);
	expect_write_lands("write_after_mremap_back", sbuf, src->lkey,
			   dst, mr->rkey, LEN);
out:
	if (mr)
		ibv_dereg_mr(mr);
	if (dst)
		munmap(dst, LEN);
	if (away)
		munmap(away, LEN);
}

/* ---- make bench ---- */

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * The median time of @runs WRITEs of @len from @src into @dst (MADV_DONTNEED
 * on it before each with @zap, outside the time), or -1
 */
static double bench_write(struct loop *l, struct ibv_mr *src,
			  struct ibv_mr *dst, size_t len, int runs, bool zap)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)src->addr, .length = (uint32_t)len,
		.lkey = src->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)dst->addr,
			     .rkey = dst->rkey },
	}, *bad;
	double t[64], t0;
	struct ibv_wc wc;
	int i, n;

	if (runs > 64)
		runs = 64;
	for (i = 0; i < runs; i++) {
		if (zap)
			madvise(dst->addr, len, MADV_DONTNEED);
		t0 = now_us();
		if (ibv_post_send(l->qp, &wr, &bad))
			return -1;
		/* busy: poll_one()'s sleeps would be the figure */
		do {
			n = ibv_poll_cq(l->cq, 1, &wc);
		} while (!n && now_us() - t0 < 5e6);
		if (n != 1 || wc.status != IBV_WC_SUCCESS)
			return -1;
		t[i] = now_us() - t0;
	}
	qsort(t, runs, sizeof(t[0]), cmp_double);
	return t[runs / 2];
}

static int bench(void)
{
	static const size_t sizes[] = { 64 * 1024, 1024 * 1024 };
	size_t len = sizes[1], i;
	void *sbuf = map_anon(len), *pbuf = map_anon(len),
	     *obuf = map_anon(len);
	struct ibv_mr *src = NULL, *pin = NULL, *odp = NULL;
	struct loop l = {};
	int ret = 1;

	if (!sbuf || !pbuf || !obuf || loop_open(&l))
		goto out;
	fill(sbuf, len, 9);
	src = ibv_reg_mr(pd, sbuf, len, IBV_ACCESS_LOCAL_WRITE);
	pin = ibv_reg_mr(pd, pbuf, len, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE);
	odp = ibv_reg_mr(pd, obuf, len, ODP_ACCESS);
	if (!src || !pin || !odp) {
		printf("RSIM-BENCH odp %s failed: reg_mr %s\n", devname,
		       strerror(errno));
		goto out;
	}
	for (i = 0; i < 2; i++) {
		size_t n = sizes[i];
		int runs = n > 65536 ? 21 : 41;
		double p = bench_write(&l, src, pin, n, runs, false);
		double f = bench_write(&l, src, odp, n, runs, true);
		double w = bench_write(&l, src, odp, n, runs, false);

		if (p < 0 || w < 0 || f < 0) {
			printf("RSIM-BENCH odp %s failed: write %zu\n", devname,
			       n);
			goto out;
		}
		printf("RSIM-BENCH odp %s write %zu pinned %.1f warm %.1f ",
		       devname, n, p, w);
		printf("first %.1f fault_per_page %.2f\n", f,
		       /* below the noise: none to tell */
		       f > w ? (f - w) / (double)(n / PAGE) : 0.0);
	}
	ret = 0;
out:
	if (odp)
		ibv_dereg_mr(odp);
	if (pin)
		ibv_dereg_mr(pin);
	if (src)
		ibv_dereg_mr(src);
	loop_close(&l);
	if (sbuf)
		munmap(sbuf, len);
	if (pbuf)
		munmap(pbuf, len);
	if (obuf)
		munmap(obuf, len);
	return ret;
}

int main(int argc, char **argv)
{
	struct ibv_port_attr port;
	struct ibv_mr *src = NULL;
	void *sbuf = NULL;
	bool do_bench = false;
	int opt;

	while ((opt = getopt(argc, argv, "d:b")) != -1) {
		if (opt == 'b') {
			do_bench = true;
		} else if (opt == 'd') {
			devname = optarg;
		} else {
			fprintf(stderr, "usage: %s [-d ibdev] [-b]\n", argv[0]);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	ctx = rsim_open_device(devname);
	if (!ctx || ibv_query_port(ctx, 1, &port)) {
		printf("FAIL open %s: %s\nresult FAIL\n", devname,
		       strerror(errno));
		return 1;
	}
	lid = port.lid;
	pd = ibv_alloc_pd(ctx);
	if (!pd) {
		printf("FAIL alloc_pd: %s\nresult FAIL\n", strerror(errno));
		return 1;
	}
	if (!odp_caps_ok(!do_bench)) {
		printf("odp caps none\nresult SKIP\n");
		ibv_dealloc_pd(pd);
		ibv_close_device(ctx);
		return 77;
	}
	if (do_bench) {
		opt = bench();
		ibv_dealloc_pd(pd);
		ibv_close_device(ctx);
		return opt;
	}
	sbuf = map_anon(LEN);
	src = sbuf ? ibv_reg_mr(pd, sbuf, LEN, IBV_ACCESS_LOCAL_WRITE |
				IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ) : NULL;
	if (!src) {
		fail("setup", "pinned MR errno %ld%ld", errno, 0);
	} else {
		fault_in(src, sbuf);
		uc_write(src, sbuf);
		hole(src, sbuf);
		implicit(src, sbuf);
		implicit_bounded(src, sbuf);
		atomics_and_reads(src, sbuf);
		injected(src, sbuf);
		prefetch(src, sbuf);
		fork_copy_on_write(src, sbuf);
		moved(src, sbuf);
		race(false);
		race(true);
		ibv_dereg_mr(src);
	}
	if (sbuf)
		munmap(sbuf, LEN);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	printf("result %s\n", rsim_failures ? "FAIL" : "PASS");
	return rsim_failures ? 1 : 0;
}
