// SPDX-License-Identifier: GPL-2.0-only
/*
 * rsim_verbs_test: DMA handles and bad input through rdmasim's libibverbs
 * provider (tools/provider), the way an application meets them: the
 * public verbs API of rdma-core's libibverbs, nothing else on the wire.
 *
 * It covers what tools/dmah/rsim_dmah.c does with raw ioctls, as far as
 * libibverbs can express it:
 *
 *  - ibv_alloc_dmah() with every row of the kernel's attribute rules
 *    (struct ibv_dmah_init_attr's comp_mask says which attributes are
 *    sent: IBV_DMAH_INIT_ATTR_MASK_CPU_ID, _PH, _TPH_MEM_TYPE), including
 *    out-of-range values and a CPU outside the process's affinity;
 *  - ibv_reg_mr_ex() with IBV_REG_MR_MASK_DMAH, the handle refused by
 *    ibv_dealloc_dmah() (EBUSY) while the MR holds it, freed after
 *    ibv_dereg_mr(); a failed registration keeps no reference;
 *  - ibv_rereg_mr() of rights, translation and PD, and bad reregs;
 *  - device memory (ibv_alloc_dm): copies, a zero-based MR over it that
 *    an RDMA write lands in, the DM busy while the MR covers it;
 *  - multicast: a UD QP attached to and detached from two groups, busy
 *    while attached; bad attaches refused;
 *  - receive queues (mapped rings, or with RSIM_NO_MAP=1 the kernel's
 *    post commands, with the same errnos): posts in RESET, past the
 *    queue's depth and SGEs; a SEND waiting on RNR woken by a post (the
 *    doorbell the kernel asks for in the ring), for a QP's queue and an
 *    SRQ; flushes in the error state, of what was posted before and
 *    after; the queue after a return to RESET; and, with mapped rings,
 *    a ring the test writes itself: a WR with too many SGEs and a
 *    producer index out of range put the QP in the error state;
 *  - bad input: a PD with a live MR (EBUSY, the MR still usable), a CQ a
 *    QP uses (EBUSY), bad access flags, empty and unmapped MRs, CQ and QP
 *    sizes beyond the device's limits, address handles (a UD send to
 *    itself through one; bad ones refused), objects of another context,
 *    invalid handles and double frees.
 *
 * Invalid handles and double frees are made without undefined behaviour:
 * a copy of the object the provider allocated (its public part: struct
 * ibv_pd, ibv_cq, ibv_qp, or verbs_mr and verbs_dmah of rdma-core's
 * infiniband/driver.h, in a zeroed block as large as any provider
 * object, so that the provider's own fields past it read as those of a
 * plain object) is allocated on the heap, its handle
 * changed to a number the context does not use (or left as it was, for a
 * double free after the real object is gone), and passed to the verb.
 * The kernel refuses it; the provider frees an object only when the
 * kernel succeeded, so the copy is freed here afterwards (had the kernel
 * wrongly succeeded the provider would free the heap copy, still no
 * double free).
 *
 * Prints one "<what> <case> <errno name or 0>" line per case (the
 * selftest, scripts/guest/selftest-provider.sh, reads them), "FAIL ..." for
 * every expectation that does not hold, "result PASS (0 failures)" or
 * "result FAIL (<n> failures)" last, and exits 0 only when every one held.
 *
 *   RDMAV_DRIVERS=<tools/provider>/librdmasim rsim_verbs_test [-d rdmasim0]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <infiniband/driver.h>
#include <rdmasim/rdmasim-abi.h>

#include "rsim_open.h"

#define MR_LEN (64 * 1024)
#define MR_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | \
		   IBV_ACCESS_REMOTE_WRITE)
/* a handle number no context of this program gets near */
#define BOGUS_HANDLE 0x7ffffu

/* the device's context, its PD and limits */
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_device_attr dev_attr;
static uint16_t port_lid;
static int failures;

/* the CPUs: how many the kernel may have, which ones we may run on */
static int nr_cpu_ids;
static cpu_set_t allowed;
static int cpu_ok;

static const char *errname(int e)
{
	static char buf[16];

	switch (e) {
	case 0: return "0";
	case EINVAL: return "EINVAL";
	case EPERM: return "EPERM";
	case EBUSY: return "EBUSY";
	case ENOENT: return "ENOENT";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EPROTONOSUPPORT: return "EPROTONOSUPPORT";
	case EFAULT: return "EFAULT";
	case ENOMEM: return "ENOMEM";
	case ENOSPC: return "ENOSPC";
	case EIO: return "EIO";
	case EBADF: return "EBADF";
	case ENODEV: return "ENODEV";
	case EACCES: return "EACCES";
	}
	snprintf(buf, sizeof(buf), "errno%d", e);
	return buf;
}

/* expect what case got want: print the measured line, count a mismatch */
static int expect(const char *what, const char *name, int got, int want)
{
	printf("%s %s %s\n", what, name, errname(got));
	if (got != want) {
		printf("FAIL %s %s: %s, expected %s\n", what, name,
		       errname(got), errname(want));
		failures++;
	}
	return got;
}

/* expect_ptr: a constructor's result (NULL and errno, or an object) */
static int expect_ptr(const char *what, const char *name, const void *p,
		      int want)
{
	return expect(what, name, p ? 0 : (errno ? errno : EIO), want);
}

static void fail(const char *what, const char *why)
{
	printf("FAIL %s: %s\n", what, why);
	failures++;
}

/*
 * A heap copy of the public part (<size> bytes) of an object the provider
 * allocated, in a zeroed block as large as any provider object: what the
 * provider keeps past the public struct (a PD's parent-domain links, a
 * QP's send list, ...) reads as that of a plain, idle object.
 */
#define FORGE_ROOM 4096

static void *forge(const void *obj, size_t size, const uint32_t *field,
		   uint32_t handle)
{
	char *c = calloc(1, FORGE_ROOM);

	if (!c || size > FORGE_ROOM) {
		free(c);
		return NULL;
	}
	memcpy(c, obj, size);
	/* the handle field, at the same offset in the copy */
	memcpy(c + ((const char *)field - (const char *)obj), &handle,
	       sizeof(handle));
	return c;
}

static struct ibv_pd *forge_pd(struct ibv_pd *p, uint32_t handle)
{
	return forge(p, sizeof(*p), &p->handle, handle);
}

static struct ibv_mr *forge_mr(struct ibv_mr *m, uint32_t handle)
{
	struct verbs_mr *v = verbs_get_mr(m), *c;

	c = forge(v, sizeof(*v), &v->ibv_mr.handle, handle);
	return c ? &c->ibv_mr : NULL;
}

static struct ibv_dmah *forge_dmah(struct ibv_dmah *d, uint32_t handle)
{
	struct verbs_dmah *v = verbs_get_dmah(d), *c;

	c = forge(v, sizeof(*v), &v->handle, handle);
	return c ? &c->dmah : NULL;
}

static void unforge_mr(struct ibv_mr *m)
{
	free(verbs_get_mr(m));
}

static void unforge_dmah(struct ibv_dmah *d)
{
	free(verbs_get_dmah(d));
}

static struct ibv_cq *forge_cq(struct ibv_cq *q, uint32_t handle)
{
	return forge(q, sizeof(*q), &q->handle, handle);
}

static struct ibv_qp *forge_qp(struct ibv_qp *q, uint32_t handle)
{
	return forge(q, sizeof(*q), &q->handle, handle);
}

static void *pattern_buf(size_t len, int seed)
{
	unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t i;

	if (p == MAP_FAILED)
		return NULL;
	for (i = 0; i < len; i++)
		p[i] = (unsigned char)(i * 7 + seed);
	return p;
}

static int read_nr_cpu_ids(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	char buf[256], *p;
	long last = 0;

	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	/* "0", "0-1", "0-3,8-11": the last number is the highest */
	for (p = buf; *p; p++)
		if (p == buf || p[-1] == '-' || p[-1] == ',')
			last = strtol(p, NULL, 10);
	return last + 1;
}

/* ibv_alloc_dmah's result: 0 and the handle, or the errno */
static int alloc_dmah(struct ibv_context *c, uint32_t mask, uint32_t cpu,
		      int mem, int ph, struct ibv_dmah **out)
{
	struct ibv_dmah_init_attr a = {
		.comp_mask = mask,
		.cpu_id = cpu,
		.ph = (uint8_t)ph,
		.tph_mem_type = (uint8_t)mem,
	};

	errno = 0;
	*out = ibv_alloc_dmah(c, &a);
	return *out ? 0 : (errno ? errno : EIO);
}

#define M_CPU IBV_DMAH_INIT_ATTR_MASK_CPU_ID
#define M_PH IBV_DMAH_INIT_ATTR_MASK_PH
#define M_MEM IBV_DMAH_INIT_ATTR_MASK_TPH_MEM_TYPE
#define M_ALL (M_CPU | M_PH | M_MEM)

/* dmah_case name mask cpu mem ph want: allocate; free what was allocated */
static void dmah_case(const char *name, uint32_t mask, uint32_t cpu, int mem,
		      int ph, int want)
{
	struct ibv_dmah *d;
	int ret;

	if (!expect("dmah", name, alloc_dmah(ctx, mask, cpu, mem, ph, &d),
		    want)) {
		ret = ibv_dealloc_dmah(d);
		if (ret) {
			printf("FAIL dmah %s: freeing it: %s\n", name,
			       errname(ret));
			failures++;
		}
	}
}

/*
 * The kernel's table (Documentation/rdmasim.rst, "Userspace access and
 * DMA handles"), as far as ibv_dmah_init_attr can say it: libibverbs
 * sends the attributes comp_mask names, with the values as given, and
 * rejects nothing itself. What it cannot say (an attribute's length, one
 * twice, reserved bits, unknown attribute ids) rsim_dmah covers.
 */
static void dmah_table(void)
{
	char name[32];
	int ph;

	for (ph = 0; ph <= 3; ph++) {
		snprintf(name, sizeof(name), "cpu_vm_ph%d", ph);
		dmah_case(name, M_ALL, cpu_ok, IBV_TPH_MEM_TYPE_VM, ph, 0);
	}
	dmah_case("cpu_pm_ph2", M_ALL, cpu_ok, IBV_TPH_MEM_TYPE_PM, 2, 0);
	dmah_case("ph_only", M_PH, 0, 0, 0, 0);
	dmah_case("ph_only3", M_PH, 0, 0, 3, 0);

	/* the driver's rules (mlx5's): PH is a must; CPU and type together */
	dmah_case("no_attrs", 0, 0, 0, 0, EINVAL);
	dmah_case("cpu_vm_no_ph", M_CPU | M_MEM, cpu_ok, IBV_TPH_MEM_TYPE_VM,
		  0, EINVAL);
	dmah_case("cpu_no_mem_type", M_CPU | M_PH, cpu_ok, 0, 0, EINVAL);
	dmah_case("mem_type_no_cpu", M_MEM | M_PH, 0, IBV_TPH_MEM_TYPE_PM, 0,
		  EINVAL);
	dmah_case("cpu_only", M_CPU, cpu_ok, 0, 0, EINVAL);
	dmah_case("mem_type_only", M_MEM, 0, IBV_TPH_MEM_TYPE_VM, 0, EINVAL);

	/* the core's: cpu_id < nr_cpu_ids, ph in 2 bits */
	dmah_case("cpu_nr_cpu_ids", M_ALL, nr_cpu_ids, IBV_TPH_MEM_TYPE_VM, 0,
		  EINVAL);
	dmah_case("cpu_0xffff", M_ALL, 0xffff, IBV_TPH_MEM_TYPE_VM, 0, EINVAL);
	dmah_case("cpu_0xffffffff", M_ALL, 0xffffffffu, IBV_TPH_MEM_TYPE_VM, 0,
		  EINVAL);
	dmah_case("ph4", M_PH, 0, 0, 4, EINVAL);
	dmah_case("ph255", M_PH, 0, 0, 255, EINVAL);

	/* the ioctl parser's: a memory type the kernel's enum does not have */
	dmah_case("mem_type_id2", M_ALL, cpu_ok, 2, 0, EOPNOTSUPP);
	dmah_case("mem_type_id255", M_ALL, cpu_ok, 255, 0, EOPNOTSUPP);

	/*
	 * libibverbs' own leniency: fields comp_mask does not name are not
	 * sent, and comp_mask bits it does not know are ignored, not refused
	 */
	dmah_case("unmasked_bad_fields", M_PH, 0xffffffffu, 255, 1, 0);
	dmah_case("unknown_mask_bit", M_PH | (1u << 3), 0, 0, 0, 0);
	dmah_case("unknown_mask_bit31", M_PH | (1u << 31), 0, 0, 0, 0);
}

/*
 * A CPU the process may not run on: with one CPU there is none; with
 * more, the process first gives up all but its first allowed CPU.
 */
static void dmah_outside_affinity(void)
{
	cpu_set_t one;
	int cpu, other = -1, restricted = 0;

	for (cpu = 0; cpu < nr_cpu_ids && cpu < CPU_SETSIZE; cpu++)
		if (!CPU_ISSET(cpu, &allowed)) {
			other = cpu;
			break;
		}
	if (other < 0 && nr_cpu_ids >= 2) {
		CPU_ZERO(&one);
		CPU_SET(cpu_ok, &one);
		if (sched_setaffinity(0, sizeof(one), &one)) {
			fail("dmah cpu_outside_affinity", "sched_setaffinity");
			return;
		}
		restricted = 1;
		other = cpu_ok ? 0 : 1;
	}
	if (other < 0) {
		printf("dmah cpu_outside_affinity skipped (1 cpu)\n");
		return;
	}
	dmah_case("cpu_outside_affinity", M_ALL, other, IBV_TPH_MEM_TYPE_VM, 0,
		  EPERM);
	if (restricted && sched_setaffinity(0, sizeof(allowed), &allowed))
		fail("dmah cpu_outside_affinity", "restoring the affinity");
}

/* ibv_reg_mr_ex over [addr, addr + len) with <dmah> (or none) */
static int reg_mr_ex(struct ibv_pd *p, void *addr, size_t len, int access,
		     uint64_t mask, struct ibv_dmah *d, struct ibv_mr **out)
{
	struct ibv_mr_init_attr a = {
		.length = len,
		.access = access,
		.comp_mask = mask,
		.addr = addr,
		.dmah = d,
	};

	errno = 0;
	*out = ibv_reg_mr_ex(p, &a);
	return *out ? 0 : (errno ? errno : EIO);
}

#define MR_MASK_DMAH (IBV_REG_MR_MASK_ADDR | IBV_REG_MR_MASK_DMAH)

/* an MR bound to a handle of memory type <mem>: the handle is held */
static void mr_with_dmah(const char *tag, int mem)
{
	struct ibv_dmah *d;
	struct ibv_mr *mr;
	char name[48];
	void *buf;

	buf = pattern_buf(MR_LEN, 3);
	if (!buf) {
		fail("mr", "mmap");
		return;
	}
	snprintf(name, sizeof(name), "%s_alloc_dmah", tag);
	if (expect("mr", name, alloc_dmah(ctx, M_ALL, cpu_ok, mem, 1, &d), 0))
		goto out;
	snprintf(name, sizeof(name), "%s_reg", tag);
	if (expect("mr", name, reg_mr_ex(pd, buf, MR_LEN, MR_ACCESS,
					 MR_MASK_DMAH, d, &mr), 0)) {
		ibv_dealloc_dmah(d);
		goto out;
	}
	if (mr->addr != buf || mr->length != MR_LEN || mr->pd != pd)
		fail("mr", "reg_mr_ex's MR does not describe the buffer");
	snprintf(name, sizeof(name), "%s_free_dmah_busy", tag);
	expect("mr", name, ibv_dealloc_dmah(d), EBUSY);
	snprintf(name, sizeof(name), "%s_dereg", tag);
	expect("mr", name, ibv_dereg_mr(mr), 0);
	snprintf(name, sizeof(name), "%s_free_dmah", tag);
	expect("mr", name, ibv_dealloc_dmah(d), 0);
out:
	munmap(buf, MR_LEN);
}

/*
 * Registrations with a handle that fail (in libibverbs, the core, the
 * driver, pinning): none may keep a reference on the handle.
 */
static void mr_dmah_bad(void)
{
	struct ibv_dmah *d, *fd;
	struct ibv_mr *mr;
	void *buf, *gone;

	buf = pattern_buf(MR_LEN, 5);
	gone = pattern_buf(MR_LEN, 6);
	if (!buf || !gone) {
		fail("mr", "mmap");
		return;
	}
	munmap(gone, MR_LEN);
	if (expect("mr", "bad_alloc_dmah",
		   alloc_dmah(ctx, M_PH, 0, 0, 2, &d), 0))
		goto out;
	/* libibverbs: an address-based MR needs IBV_REG_MR_MASK_ADDR */
	expect("mr", "reg_ex_dmah_no_addr_mask",
	       reg_mr_ex(pd, buf, MR_LEN, MR_ACCESS, IBV_REG_MR_MASK_DMAH, d,
			 &mr), EINVAL);
	expect("mr", "reg_ex_dmah_len0",
	       reg_mr_ex(pd, buf, 0, MR_ACCESS, MR_MASK_DMAH, d, &mr), EINVAL);
	expect("mr", "reg_ex_dmah_remote_write_only",
	       reg_mr_ex(pd, buf, MR_LEN, IBV_ACCESS_REMOTE_WRITE,
			 MR_MASK_DMAH, d, &mr), EINVAL);
	expect("mr", "reg_ex_dmah_unmapped",
	       reg_mr_ex(pd, gone, MR_LEN, MR_ACCESS, MR_MASK_DMAH, d, &mr),
	       EFAULT);
	/* a handle number the context does not have */
	fd = forge_dmah(d, BOGUS_HANDLE);
	if (fd) {
		expect("mr", "reg_ex_bogus_dmah",
		       reg_mr_ex(pd, buf, MR_LEN, MR_ACCESS, MR_MASK_DMAH, fd,
				 &mr), ENOENT);
		expect("dmah", "free_bogus_handle", ibv_dealloc_dmah(fd),
		       ENOENT);
		unforge_dmah(fd);
	}
	/* and the PD's number as a DMA handle: another type of object */
	fd = forge_dmah(d, pd->handle);
	if (fd) {
		expect("mr", "reg_ex_pd_as_dmah",
		       reg_mr_ex(pd, buf, MR_LEN, MR_ACCESS, MR_MASK_DMAH, fd,
				 &mr), EINVAL);
		expect("dmah", "free_pd_as_dmah", ibv_dealloc_dmah(fd), EINVAL);
		unforge_dmah(fd);
	}
	/* no reference kept by any of them */
	fd = forge_dmah(d, verbs_get_dmah(d)->handle);
	if (expect("mr", "bad_free_dmah", ibv_dealloc_dmah(d), 0) == 0 && fd)
		expect("dmah", "double_free", ibv_dealloc_dmah(fd), ENOENT);
	if (fd)
		unforge_dmah(fd);
out:
	munmap(buf, MR_LEN);
}

/* ibv_reg_mr's result: 0 and the MR, or the errno */
static int reg_mr(struct ibv_pd *p, void *addr, size_t len, int access,
		  struct ibv_mr **out)
{
	errno = 0;
	*out = ibv_reg_mr(p, addr, len, access);
	return *out ? 0 : (errno ? errno : EIO);
}

/* bad registrations through ibv_reg_mr; each must leave nothing behind */
static void mr_bad(void)
{
	struct ibv_mr *mr;
	void *buf, *gone;

	buf = pattern_buf(MR_LEN, 9);
	gone = pattern_buf(MR_LEN, 10);
	if (!buf || !gone) {
		fail("mr", "mmap");
		return;
	}
	munmap(gone, MR_LEN);
	expect("mr", "reg_remote_write_no_local_write",
	       reg_mr(pd, buf, MR_LEN, IBV_ACCESS_REMOTE_WRITE, &mr), EINVAL);
	expect("mr", "reg_remote_atomic_no_local_write",
	       reg_mr(pd, buf, MR_LEN, IBV_ACCESS_REMOTE_ATOMIC, &mr), EINVAL);
	/* with local write, remote atomic is fine (atomic_cap IBV_ATOMIC_HCA) */
	if (!expect("mr", "reg_remote_atomic",
		    reg_mr(pd, buf, MR_LEN, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_ATOMIC, &mr), 0))
		expect("mr", "dereg_remote_atomic", ibv_dereg_mr(mr), 0);
	expect("mr", "reg_unknown_access_bit30",
	       reg_mr(pd, buf, MR_LEN, IBV_ACCESS_LOCAL_WRITE | (1 << 30),
		      &mr), EINVAL);
	expect("mr", "reg_len0", reg_mr(pd, buf, 0, MR_ACCESS, &mr), EINVAL);
	expect("mr", "reg_null_addr", reg_mr(pd, NULL, MR_LEN, MR_ACCESS, &mr),
	       EFAULT);
	expect("mr", "reg_unmapped", reg_mr(pd, gone, MR_LEN, MR_ACCESS, &mr),
	       EFAULT);
	expect("mr", "reg_len_over_max_mr_size",
	       reg_mr(pd, buf, dev_attr.max_mr_size + 1, MR_ACCESS, &mr),
	       EINVAL);
	munmap(buf, MR_LEN);
}

/* RC QP to itself: a send from one buffer into another */
static int qp_to(struct ibv_qp *qp, enum ibv_qp_state state)
{
	struct ibv_qp_attr a = { .qp_state = state };
	int mask = IBV_QP_STATE;

	switch (state) {
	case IBV_QPS_INIT:
		a.pkey_index = 0;
		a.port_num = 1;
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
		break;
	case IBV_QPS_RTR:
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = qp->qp_num;
		a.rq_psn = 0;
		a.max_dest_rd_atomic = 1;
		a.min_rnr_timer = 12;
		a.ah_attr.dlid = port_lid;
		a.ah_attr.port_num = 1;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			IBV_QP_MIN_RNR_TIMER;
		break;
	case IBV_QPS_RTS:
		a.timeout = 14;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.sq_psn = 0;
		a.max_rd_atomic = 1;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
		break;
	default:
		break;
	}
	return ibv_modify_qp(qp, &a, mask);
}

/* one completion within about a second; its status, or -1 */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	return rsim_poll_one(cq, wc, 1000);
}

/* an RDMA write through <mr> (local source) into <dst>: 0 if it landed */
static int rdma_write_through(struct ibv_qp *qp, struct ibv_cq *cq,
			      struct ibv_mr *mr, struct ibv_mr *dst)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)mr->addr,
		.length = 4096,
		.lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 42,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma.remote_addr = (uintptr_t)dst->addr,
		.wr.rdma.rkey = dst->rkey,
	}, *bad;
	struct ibv_wc wc;

	memset(dst->addr, 0, 4096);
	if (ibv_post_send(qp, &wr, &bad))
		return -1;
	if (poll_one(cq, &wc) != IBV_WC_SUCCESS || wc.wr_id != 42)
		return -1;
	return memcmp(mr->addr, dst->addr, 4096) ? -1 : 0;
}

#define UD_QKEY 0x11111111
#define UD_GRH 40
#define UD_LEN 64

/*
 * A UD send from a QP to itself through a user AH: the kernel's post_send
 * command carries the AH's handle, the data path its address vector.
 * 0 if the message arrived whole, or an errno.
 */
static int ud_send_through(struct ibv_ah *ah)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 2, .max_recv_wr = 2,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = {};
	struct ibv_sge rs, ss;
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &rs, .num_sge = 1 },
			   *rbad;
	struct ibv_send_wr swr = {
		.wr_id = 2, .sg_list = &ss, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *sbad;
	struct ibv_wc wc;
	struct ibv_cq *cq;
	struct ibv_qp *qp = NULL;
	struct ibv_mr *mr = NULL;
	unsigned char *buf;
	int i, ret = ENOMEM, got_send = 0, got_recv = 0;

	buf = pattern_buf(MR_LEN, 21);
	if (!buf)
		return ret;
	ret = EIO;
	memset(buf, 0, UD_GRH + UD_LEN);
	cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	if (!cq)
		goto out;
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qp = ibv_create_qp(pd, &qa);
	if (reg_mr(pd, buf, MR_LEN, IBV_ACCESS_LOCAL_WRITE, &mr) || !qp)
		goto out;
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = UD_QKEY;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		goto out;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		goto out;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		goto out;
	rs.addr = (uintptr_t)buf;
	rs.length = UD_GRH + UD_LEN;
	rs.lkey = mr->lkey;
	ss.addr = (uintptr_t)buf + 4096;
	ss.length = UD_LEN;
	ss.lkey = mr->lkey;
	swr.wr.ud.ah = ah;
	swr.wr.ud.remote_qpn = qp->qp_num;
	swr.wr.ud.remote_qkey = UD_QKEY;
	if (ibv_post_recv(qp, &rwr, &rbad) || ibv_post_send(qp, &swr, &sbad))
		goto out;
	for (i = 0; i < 2; i++) {
		if (poll_one(cq, &wc) != IBV_WC_SUCCESS)
			goto out;
		if (wc.wr_id == 2)
			got_send = 1;
		if (wc.wr_id == 1 && wc.byte_len == UD_GRH + UD_LEN &&
		    wc.src_qp == qp->qp_num)
			got_recv = 1;
	}
	if (got_send && got_recv &&
	    !memcmp(buf + UD_GRH, buf + 4096, UD_LEN))
		ret = 0;
out:
	if (qp)
		ibv_destroy_qp(qp);
	if (mr)
		ibv_dereg_mr(mr);
	if (cq)
		ibv_destroy_cq(cq);
	munmap(buf, MR_LEN);
	return ret;
}

/*
 * Multicast through the provider (ibv_attach_mcast, ibv_detach_mcast):
 * a UD QP attached to IPoIB's broadcast group at its MLID, once more
 * (uverbs keeps one attachment), and to a second group; the broadcast
 * group's MGID at another MLID refused (EINVAL: the device has it at
 * 0xc000); the QP refuses to go while attached (EBUSY); detached, and
 * detached again (none left: EINVAL); an RC QP, a unicast GID and a
 * unicast LID refused (EINVAL). Like an HCA's, the device's groups are
 * what its QPs are attached to, whatever the SA has.
 */
static void multicast(void)
{
	union ibv_gid bcast = { .raw = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff,
					 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff,
					 0xff } };
	union ibv_gid other = bcast, unicast = bcast;
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *ud, *rc;
	struct ibv_cq *cq;

	other.raw[15] = 0x01;
	unicast.raw[0] = 0xfe;
	unicast.raw[1] = 0x80;
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	if (expect_ptr("mcast", "cq", cq, 0))
		return;
	qa.send_cq = cq;
	qa.recv_cq = cq;
	errno = 0;
	ud = ibv_create_qp(pd, &qa);
	qa.qp_type = IBV_QPT_RC;
	rc = ibv_create_qp(pd, &qa);
	if (expect_ptr("mcast", "qps", ud && rc ? ud : NULL, 0))
		goto out;
	expect("mcast", "attach", ibv_attach_mcast(ud, &bcast, 0xc000), 0);
	expect("mcast", "attach_again", ibv_attach_mcast(ud, &bcast, 0xc000), 0);
	expect("mcast", "attach_other_mlid",
	       ibv_attach_mcast(ud, &bcast, 0xc001), EINVAL);
	expect("mcast", "attach_second_group",
	       ibv_attach_mcast(ud, &other, 0xc001), 0);
	expect("mcast", "destroy_attached", ibv_destroy_qp(ud), EBUSY);
	expect("mcast", "detach", ibv_detach_mcast(ud, &bcast, 0xc000), 0);
	expect("mcast", "detach_again", ibv_detach_mcast(ud, &bcast, 0xc000),
	       EINVAL);
	expect("mcast", "detach_second_group",
	       ibv_detach_mcast(ud, &other, 0xc001), 0);
	expect("mcast", "attach_rc", ibv_attach_mcast(rc, &bcast, 0xc000),
	       EINVAL);
	expect("mcast", "attach_unicast_gid",
	       ibv_attach_mcast(ud, &unicast, 0xc000), EINVAL);
	expect("mcast", "attach_unicast_lid", ibv_attach_mcast(ud, &bcast, 1),
	       EINVAL);
out:
	if (ud)
		expect("mcast", "destroy_ud", ibv_destroy_qp(ud), 0);
	if (rc)
		expect("mcast", "destroy_rc", ibv_destroy_qp(rc), 0);
	expect("mcast", "destroy_cq", ibv_destroy_cq(cq), 0);
}

/*
 * Objects in use: a PD with a live MR, a CQ a QP uses. Both refused with
 * EBUSY and still usable after: the MR carries an RDMA write over a QP
 * connected to itself.
 */
static void busy_objects(void)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_mr *mr = NULL, *dst = NULL;
	struct ibv_qp *qp = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_pd *p2;
	void *buf, *buf2;

	buf = pattern_buf(MR_LEN, 13);
	buf2 = pattern_buf(MR_LEN, 14);
	if (!buf || !buf2) {
		fail("busy", "mmap");
		return;
	}
	errno = 0;
	p2 = ibv_alloc_pd(ctx);
	if (expect_ptr("busy", "alloc_pd", p2, 0))
		goto out;
	if (expect("busy", "reg_mr", reg_mr(p2, buf, MR_LEN, MR_ACCESS, &mr),
		   0) ||
	    expect("busy", "reg_mr_dst",
		   reg_mr(p2, buf2, MR_LEN, MR_ACCESS, &dst), 0))
		goto out_mr;
	expect("busy", "dealloc_pd_with_mr", ibv_dealloc_pd(p2), EBUSY);

	errno = 0;
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (expect_ptr("busy", "create_cq", cq, 0))
		goto out_mr;
	qa.send_cq = cq;
	qa.recv_cq = cq;
	errno = 0;
	qp = ibv_create_qp(p2, &qa);
	if (expect_ptr("busy", "create_qp", qp, 0))
		goto out_cq;
	expect("busy", "destroy_cq_with_qp", ibv_destroy_cq(cq), EBUSY);
	expect("busy", "dealloc_pd_with_qp_and_mr", ibv_dealloc_pd(p2), EBUSY);

	/* and everything still works */
	if (!expect("busy", "qp_init", qp_to(qp, IBV_QPS_INIT), 0) &&
	    !expect("busy", "qp_rtr", qp_to(qp, IBV_QPS_RTR), 0) &&
	    !expect("busy", "qp_rts", qp_to(qp, IBV_QPS_RTS), 0))
		expect("busy", "mr_after_dealloc_pd_write",
		       rdma_write_through(qp, cq, mr, dst) ? EIO : 0, 0);
	expect("busy", "destroy_qp", ibv_destroy_qp(qp), 0);
out_cq:
	expect("busy", "destroy_cq", ibv_destroy_cq(cq), 0);
out_mr:
	if (dst)
		expect("busy", "dereg_mr_dst", ibv_dereg_mr(dst), 0);
	if (mr)
		expect("busy", "dereg_mr", ibv_dereg_mr(mr), 0);
	expect("busy", "dealloc_pd", ibv_dealloc_pd(p2), 0);
out:
	if (buf)
		munmap(buf, MR_LEN);
	if (buf2)
		munmap(buf2, MR_LEN);
}

/*
 * ibv_rereg_mr(): new rights, a new translation, a new PD (which then
 * cannot be freed under it), all in place: the keys stay. Unknown flags
 * and an empty translation are refused (libibverbs' IBV_REREG_MR_ERR_*
 * codes) and leave the MR as it was.
 */
static void mr_rereg(void)
{
	unsigned char *buf, *buf2;
	uint32_t lkey, rkey;
	struct ibv_mr *mr;
	struct ibv_pd *p2;

	buf = pattern_buf(MR_LEN, 41);
	buf2 = pattern_buf(MR_LEN, 42);
	errno = 0;
	p2 = ibv_alloc_pd(ctx);
	if (!buf || !buf2 || expect_ptr("rereg", "alloc_pd", p2, 0))
		goto out;
	if (expect("rereg", "reg_mr",
		   reg_mr(pd, buf, MR_LEN, IBV_ACCESS_LOCAL_WRITE, &mr), 0))
		goto out_pd;
	lkey = mr->lkey;
	rkey = mr->rkey;
	expect("rereg", "access",
	       ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			    MR_ACCESS) ? EIO : 0, 0);
	expect("rereg", "translation",
	       ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, buf2,
			    MR_LEN, 0) ? EIO : 0, 0);
	if (mr->addr != buf2 || mr->length != MR_LEN)
		fail("rereg", "the MR does not describe the new buffer");
	expect("rereg", "pd",
	       ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, p2, NULL, 0, 0) ?
	       EIO : 0, 0);
	expect("rereg", "dealloc_new_pd_busy", ibv_dealloc_pd(p2), EBUSY);
	expect("rereg", "unknown_flag",
	       ibv_rereg_mr(mr, 1 << 5, NULL, NULL, 0, 0) ? EINVAL : 0,
	       EINVAL);
	expect("rereg", "empty_translation",
	       ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, buf, 0,
			    0) ? EINVAL : 0, EINVAL);
	if (mr->addr != buf2 || mr->pd != p2)
		fail("rereg", "a refused rereg changed the MR");
	/* in place: a peer that learned the keys goes on using them */
	if (mr->lkey != lkey || mr->rkey != rkey)
		fail("rereg", "the keys changed");
	expect("rereg", "dereg", ibv_dereg_mr(mr), 0);
out_pd:
	expect("rereg", "dealloc_pd", ibv_dealloc_pd(p2), 0);
out:
	if (buf)
		munmap(buf, MR_LEN);
	if (buf2)
		munmap(buf2, MR_LEN);
}

/*
 * Device memory: ibv_alloc_dm() within max_dm_size (one byte more is
 * refused), copies to and from it (a misaligned offset or a range past
 * the end: EINVAL), a zero-based MR over its second page (not zero-based,
 * or past the end: EINVAL), an RDMA write into that MR over an RC QP
 * connected to itself, read back with ibv_memcpy_from_dm(); the DM cannot
 * be freed while the MR covers it (EBUSY).
 */
static void device_memory(void)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_alloc_dm_attr da = { .length = 2 * 4096 };
	unsigned int dm_access = IBV_ACCESS_ZERO_BASED |
				 IBV_ACCESS_LOCAL_WRITE |
				 IBV_ACCESS_REMOTE_WRITE;
	struct ibv_device_attr_ex ax = {};
	struct ibv_mr *mr = NULL, *dmr = NULL, *bad;
	struct ibv_sge sge;
	struct ibv_send_wr wr = {
		.wr_id = 43, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
	}, *sbad;
	unsigned char back[4096];
	struct ibv_qp *qp = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_dm *dm;
	struct ibv_wc wc;
	unsigned char *buf;

	if (expect("dm", "query_device_ex",
		   ibv_query_device_ex(ctx, NULL, &ax), 0))
		return;
	printf("dm max_dm_size %llu\n", (unsigned long long)ax.max_dm_size);
	da.length = ax.max_dm_size + 1;
	errno = 0;
	dm = ibv_alloc_dm(ctx, &da);
	if (expect_ptr("dm", "alloc_beyond_max", dm, EINVAL) == 0)
		ibv_free_dm(dm);
	da.length = 2 * 4096;
	errno = 0;
	dm = ibv_alloc_dm(ctx, &da);
	if (expect_ptr("dm", "alloc", dm, 0))
		return;
	buf = pattern_buf(MR_LEN, 31);
	if (!buf) {
		fail("dm", "mmap");
		goto out_dm;
	}
	expect("dm", "copy_to", ibv_memcpy_to_dm(dm, 0, buf, 2 * 4096), 0);
	if (!expect("dm", "copy_from",
		    ibv_memcpy_from_dm(back, dm, 4096, 4096), 0) &&
	    memcmp(back, buf + 4096, 4096))
		fail("dm", "copy_from does not read what copy_to wrote");
	expect("dm", "copy_to_misaligned", ibv_memcpy_to_dm(dm, 2, buf, 16),
	       EINVAL);
	expect("dm", "copy_to_odd_length", ibv_memcpy_to_dm(dm, 0, buf, 6),
	       EINVAL);
	expect("dm", "copy_to_past_end",
	       ibv_memcpy_to_dm(dm, 2 * 4096 - 4, buf, 8), EINVAL);

	errno = 0;
	bad = ibv_reg_dm_mr(pd, dm, 4096, 4096, dm_access &
			    ~IBV_ACCESS_ZERO_BASED);
	if (expect_ptr("dm", "reg_dm_mr_not_zero_based", bad, EINVAL) == 0)
		ibv_dereg_mr(bad);
	errno = 0;
	bad = ibv_reg_dm_mr(pd, dm, 4096, 2 * 4096, dm_access);
	if (expect_ptr("dm", "reg_dm_mr_past_end", bad, EINVAL) == 0)
		ibv_dereg_mr(bad);
	errno = 0;
	dmr = ibv_reg_dm_mr(pd, dm, 4096, 4096, dm_access);
	if (expect_ptr("dm", "reg_dm_mr", dmr, 0))
		goto out_buf;
	expect("dm", "free_dm_with_mr", ibv_free_dm(dm), EBUSY);

	/* an RDMA write lands in the DM, zero-based through the MR */
	memset(buf + 8192, 0x5c, 4096);
	if (reg_mr(pd, buf, MR_LEN, MR_ACCESS, &mr)) {
		fail("dm", "reg_mr");
		goto out_dmr;
	}
	errno = 0;
	cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	if (expect_ptr("dm", "create_cq", cq, 0))
		goto out_mr;
	qa.send_cq = cq;
	qa.recv_cq = cq;
	errno = 0;
	qp = ibv_create_qp(pd, &qa);
	if (expect_ptr("dm", "create_qp", qp, 0))
		goto out_cq;
	if (qp_to(qp, IBV_QPS_INIT) || qp_to(qp, IBV_QPS_RTR) ||
	    qp_to(qp, IBV_QPS_RTS)) {
		fail("dm", "connecting the QP");
		goto out_qp;
	}
	sge.addr = (uintptr_t)buf + 8192;
	sge.length = 4096;
	sge.lkey = mr->lkey;
	wr.wr.rdma.remote_addr = 0;
	wr.wr.rdma.rkey = dmr->rkey;
	if (expect("dm", "post_write_into_dm",
		   ibv_post_send(qp, &wr, &sbad), 0) == 0 &&
	    expect("dm", "write_into_dm_status", poll_one(cq, &wc), 0) == 0 &&
	    !expect("dm", "copy_from_after_write",
		    ibv_memcpy_from_dm(back, dm, 4096, 4096), 0) &&
	    memcmp(back, buf + 8192, 4096))
		fail("dm", "the RDMA write did not land in the DM");
out_qp:
	expect("dm", "destroy_qp", ibv_destroy_qp(qp), 0);
out_cq:
	expect("dm", "destroy_cq", ibv_destroy_cq(cq), 0);
out_mr:
	expect("dm", "dereg_mr", ibv_dereg_mr(mr), 0);
out_dmr:
	expect("dm", "dereg_dm_mr", ibv_dereg_mr(dmr), 0);
out_buf:
	munmap(buf, MR_LEN);
out_dm:
	expect("dm", "free_dm", ibv_free_dm(dm), 0);
}

/* CQs and QPs beyond the device's limits; user AHs, good and bad */
static void bad_sizes(void)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_ah_attr aa = { .dlid = port_lid, .port_num = 1 };
	struct ibv_cq *cq, *bad;
	struct ibv_qp *qp;
	struct ibv_ah *ah;

	errno = 0;
	bad = ibv_create_cq(ctx, dev_attr.max_cqe + 1, NULL, NULL, 0);
	expect_ptr("cq", "cqe_over_max_cqe", bad, EINVAL);
	if (bad)
		ibv_destroy_cq(bad);
	errno = 0;
	bad = ibv_create_cq(ctx, 0, NULL, NULL, 0);
	expect_ptr("cq", "cqe0", bad, EINVAL);
	if (bad)
		ibv_destroy_cq(bad);
	errno = 0;
	bad = ibv_create_cq(ctx, 16, NULL, NULL, ctx->num_comp_vectors);
	expect_ptr("cq", "comp_vector_over", bad, EINVAL);
	if (bad)
		ibv_destroy_cq(bad);
	errno = 0;
	bad = ibv_create_cq(ctx, dev_attr.max_cqe, NULL, NULL, 0);
	if (!expect_ptr("cq", "cqe_max_cqe", bad, 0))
		expect("cq", "destroy_max_cqe", ibv_destroy_cq(bad), 0);

	errno = 0;
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (expect_ptr("qp", "create_cq", cq, 0))
		return;
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qa.cap.max_send_wr = dev_attr.max_qp_wr + 1;
	errno = 0;
	qp = ibv_create_qp(pd, &qa);
	if (expect_ptr("qp", "max_send_wr_over_max_qp_wr", qp, EINVAL) == 0)
		ibv_destroy_qp(qp);
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = dev_attr.max_qp_wr + 1;
	errno = 0;
	qp = ibv_create_qp(pd, &qa);
	if (expect_ptr("qp", "max_recv_wr_over_max_qp_wr", qp, EINVAL) == 0)
		ibv_destroy_qp(qp);
	qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = dev_attr.max_sge + 1;
	errno = 0;
	qp = ibv_create_qp(pd, &qa);
	if (expect_ptr("qp", "max_send_sge_over_max_sge", qp, EINVAL) == 0)
		ibv_destroy_qp(qp);
	qa.cap.max_send_sge = 1;
	errno = 0;
	qp = ibv_create_qp(pd, &qa);
	if (!expect_ptr("qp", "max_wr_ok", qp, 0))
		expect("qp", "destroy", ibv_destroy_qp(qp), 0);
	expect("qp", "destroy_cq", ibv_destroy_cq(cq), 0);

	errno = 0;
	ah = ibv_create_ah(pd, &aa);
	if (!expect_ptr("ah", "create", ah, 0)) {
		expect("ah", "ud_send_to_self", ud_send_through(ah), 0);
		expect("ah", "destroy", ibv_destroy_ah(ah), 0);
	}
	aa.dlid = 0;
	errno = 0;
	ah = ibv_create_ah(pd, &aa);
	if (expect_ptr("ah", "dlid0", ah, EINVAL) == 0)
		ibv_destroy_ah(ah);
	aa.dlid = port_lid;
	aa.port_num = 2;
	errno = 0;
	ah = ibv_create_ah(pd, &aa);
	if (expect_ptr("ah", "port2", ah, EINVAL) == 0)
		ibv_destroy_ah(ah);
	aa.port_num = 1;
	aa.sl = 16;
	errno = 0;
	ah = ibv_create_ah(pd, &aa);
	if (expect_ptr("ah", "sl16", ah, EINVAL) == 0)
		ibv_destroy_ah(ah);
}

/*
 * Invalid handles and double frees of PDs, MRs, CQs and QPs (heap copies,
 * see the top of the file): each refused, the real object untouched.
 */
static void bogus_and_double(void)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_pd *p2, *fp;
	struct ibv_mr *mr, *fm;
	struct ibv_cq *cq, *fc;
	struct ibv_qp *qp, *fq;
	void *buf;

	buf = pattern_buf(MR_LEN, 17);
	if (!buf) {
		fail("bogus", "mmap");
		return;
	}
	/* a PD handle no object has; a PD handle that is an MR */
	fp = forge_pd(pd, BOGUS_HANDLE);
	if (fp) {
		expect("bogus", "reg_mr_pd", reg_mr(fp, buf, MR_LEN, MR_ACCESS,
						    &mr), ENOENT);
		expect("bogus", "dealloc_pd", ibv_dealloc_pd(fp), ENOENT);
		errno = 0;
		cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
		qa.send_cq = cq;
		qa.recv_cq = cq;
		if (cq) {
			errno = 0;
			qp = ibv_create_qp(fp, &qa);
			if (expect_ptr("bogus", "create_qp_pd", qp, ENOENT) == 0)
				ibv_destroy_qp(qp);
			ibv_destroy_cq(cq);
		}
		free(fp);
	}
	if (!expect("bogus", "reg_mr", reg_mr(pd, buf, MR_LEN, MR_ACCESS, &mr),
		    0)) {
		fp = forge_pd(pd, mr->handle);
		if (fp) {
			expect("bogus", "dealloc_pd_names_mr",
			       ibv_dealloc_pd(fp), EINVAL);
			free(fp);
		}
		fm = forge_mr(mr, BOGUS_HANDLE);
		if (fm) {
			expect("bogus", "dereg_mr", ibv_dereg_mr(fm), ENOENT);
			unforge_mr(fm);
		}
		fm = forge_mr(mr, mr->handle);
		if (!expect("double", "dereg_mr_first", ibv_dereg_mr(mr), 0) &&
		    fm)
			expect("double", "dereg_mr_again", ibv_dereg_mr(fm),
			       ENOENT);
		if (fm)
			unforge_mr(fm);
	}

	errno = 0;
	p2 = ibv_alloc_pd(ctx);
	if (!expect_ptr("double", "alloc_pd", p2, 0)) {
		fp = forge_pd(p2, p2->handle);
		if (!expect("double", "dealloc_pd_first", ibv_dealloc_pd(p2),
			    0) && fp)
			expect("double", "dealloc_pd_again", ibv_dealloc_pd(fp),
			       ENOENT);
		free(fp);
	}

	errno = 0;
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (expect_ptr("double", "create_cq", cq, 0))
		goto out;
	qa.send_cq = cq;
	qa.recv_cq = cq;
	errno = 0;
	qp = ibv_create_qp(pd, &qa);
	if (!expect_ptr("double", "create_qp", qp, 0)) {
		fq = forge_qp(qp, BOGUS_HANDLE);
		if (fq) {
			expect("bogus", "destroy_qp", ibv_destroy_qp(fq),
			       ENOENT);
			free(fq);
		}
		fq = forge_qp(qp, qp->handle);
		if (!expect("double", "destroy_qp_first", ibv_destroy_qp(qp),
			    0) && fq)
			expect("double", "destroy_qp_again", ibv_destroy_qp(fq),
			       ENOENT);
		free(fq);
	}
	fc = forge_cq(cq, BOGUS_HANDLE);
	if (fc) {
		expect("bogus", "destroy_cq", ibv_destroy_cq(fc), ENOENT);
		free(fc);
	}
	fc = forge_cq(cq, cq->handle);
	if (!expect("double", "destroy_cq_first", ibv_destroy_cq(cq), 0) && fc)
		expect("double", "destroy_cq_again", ibv_destroy_cq(fc), ENOENT);
	free(fc);
out:
	munmap(buf, MR_LEN);
}

/* a mapping of the uverbs file (a ring the provider mapped) */
struct umap {
	unsigned long start, len;
};

/* the process's mappings of the uverbs file, at most @max; how many */
static int uverbs_maps(struct umap *u, int max)
{
	char line[512], *end;
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		if (!strstr(line, "/dev/infiniband/uverbs"))
			continue;
		u[n].start = strtoul(line, &end, 16);
		u[n].len = strtoul(end + 1, NULL, 16) - u[n].start;
		n++;
	}
	fclose(f);
	return n;
}

/*
 * Of the uverbs mappings in @now[@n] that are not in @was[@m], the
 * largest (@largest) or the smallest; NULL if there is none
 */
static void *new_map(const struct umap *was, int m, const struct umap *now,
		     int n, bool largest)
{
	const struct umap *found = NULL;
	int i, j;

	for (i = 0; i < n; i++) {
		for (j = 0; j < m && was[j].start != now[i].start; j++)
			;
		if (j < m)
			continue;
		if (!found || (largest ? now[i].len > found->len :
					 now[i].len < found->len))
			found = &now[i];
	}
	return found ? (void *)found->start : NULL;
}

#define RQ_WR 4
#define RQ_SGE 2
/* a receive ring of two pages, larger than the send ring beside it */
#define RQ_BIG_WR 128

/* what recv_rings() works on */
struct rq_env {
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	unsigned char *buf;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	/* the QP's (or the SRQ's) receive ring, if the provider mapped it */
	struct rsim_uring_hdr *ring;
	/* the QP's send ring, if mapped and told apart (no receive ring) */
	struct rsim_uring_hdr *sring;
};

/*
 * An RC QP of @rq_wr receive WRs (none with @srq) to connect to itself,
 * its rings found: the receive ring is the largest new mapping (with
 * RQ_BIG_WR, the only one of two pages), the send ring the only one when
 * there is no receive ring; 0 or -1
 */
static int rq_qp_wr(struct rq_env *e, struct ibv_srq *srq, uint32_t rq_wr)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = e->cq, .recv_cq = e->cq, .srq = srq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = RQ_WR, .max_recv_wr = rq_wr,
			 .max_send_sge = 1, .max_recv_sge = RQ_SGE },
	};
	struct umap was[64], now[64];
	int m = uverbs_maps(was, 64), n;

	e->qp = ibv_create_qp(pd, &qa);
	if (!e->qp)
		return -1;
	n = uverbs_maps(now, 64);
	if (srq || !rq_wr)
		e->sring = new_map(was, m, now, n, true);
	else
		e->ring = new_map(was, m, now, n, true);
	return 0;
}

static int rq_qp(struct rq_env *e, struct ibv_srq *srq)
{
	return rq_qp_wr(e, srq, RQ_WR);
}

static int rq_post(struct rq_env *e, uint64_t wr_id, int num_sge)
{
	struct ibv_sge sge[RQ_SGE + 1];
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sge,
				  .num_sge = num_sge }, *bad;
	int i;

	for (i = 0; i < num_sge; i++) {
		sge[i].addr = (uintptr_t)e->buf + 4096 * (i + 1);
		sge[i].length = 64;
		sge[i].lkey = e->mr->lkey;
	}
	return e->srq ? ibv_post_srq_recv(e->srq, &wr, &bad) :
			ibv_post_recv(e->qp, &wr, &bad);
}

static int rq_send(struct rq_env *e, uint64_t wr_id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)e->buf, .length = 64,
			       .lkey = e->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	return ibv_post_send(e->qp, &wr, &bad);
}

/*
 * @n completions within about a second, each expected by wr_id (in
 * @ids) with its status (in @st); 0 if each came, else EIO
 */
static int rq_expect(struct rq_env *e, int n, const uint64_t *ids,
		     const int *st)
{
	int i, j, seen = 0, ret = EIO;
	struct ibv_wc wc;

	for (i = 0; i < n; i++) {
		if (poll_one(e->cq, &wc) < 0)
			return ret;
		for (j = 0; j < n && ids[j] != wc.wr_id; j++)
			;
		if (j == n || (int)wc.status != st[j]) {
			printf("rq unexpected completion wr_id %llu status %d\n",
			       (unsigned long long)wc.wr_id, wc.status);
			return ret;
		}
		seen |= 1 << j;
	}
	if (seen == (1 << n) - 1)
		ret = 0;
	return ret;
}

/* the QP's state, or -1 */
static int rq_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	return ibv_query_qp(qp, &a, IBV_QP_STATE, &ia) ? -1 :
	       (int)a.qp_state;
}

/* an IBV_EVENT_QP_FATAL of @qp within about a second: 0, else EIO */
static int rq_fatal_event(struct ibv_qp *qp)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	int fl = fcntl(ctx->async_fd, F_GETFL), i, ret = EIO;

	fcntl(ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
	for (i = 0; i < 100 && ret; i++) {
		if (poll(&pfd, 1, 10) != 1)
			continue;
		while (!ibv_get_async_event(ctx, &ev)) {
			if (ev.event_type == IBV_EVENT_QP_FATAL &&
			    ev.element.qp == qp)
				ret = 0;
			ibv_ack_async_event(&ev);
		}
	}
	fcntl(ctx->async_fd, F_SETFL, fl);
	return ret;
}

static void rq_destroy_qp(struct rq_env *e)
{
	if (e->qp)
		ibv_destroy_qp(e->qp);
	e->qp = NULL;
	e->ring = NULL;
	e->sring = NULL;
}

/*
 * The posting rules, an RNR wait a post ends, and the error state's
 * flushes, on a QP's own receive queue
 */
static void rq_rules(struct rq_env *e)
{
	static const int ok2[] = { IBV_WC_SUCCESS, IBV_WC_SUCCESS };
	static const int fl2[] = { IBV_WC_WR_FLUSH_ERR, IBV_WC_WR_FLUSH_ERR };
	uint64_t ids[2];
	struct ibv_wc wc;
	int i, ret;

	expect("rq", "post_in_reset", rq_post(e, 1, 1), EINVAL);
	if (qp_to(e->qp, IBV_QPS_INIT))
		return fail("rq", "to INIT");
	expect("rq", "post_too_many_sges", rq_post(e, 2, RQ_SGE + 1), EINVAL);
	for (i = 0, ret = 0; i < RQ_WR && !ret; i++)
		ret = rq_post(e, 10 + i, RQ_SGE);
	expect("rq", "post_fill", ret, 0);
	expect("rq", "post_past_max_wr", rq_post(e, 20, 1), ENOMEM);
	if (qp_to(e->qp, IBV_QPS_RTR) || qp_to(e->qp, IBV_QPS_RTS))
		return fail("rq", "to RTS");
	/* the SENDs take the receive WRs posted in INIT, in order */
	for (i = 0, ret = 0; i < RQ_WR && !ret; i++) {
		ids[0] = 30 + i;
		ids[1] = 10 + i;
		ret = rq_send(e, ids[0]) ?: rq_expect(e, 2, ids, ok2);
	}
	expect("rq", "sends_take_posted", ret, 0);
	/* rnr_retry 7: only a post ends the wait */
	ret = rq_send(e, 40);
	if (!ret && ibv_poll_cq(e->cq, 1, &wc) != 0)
		ret = EIO;
	usleep(20000);
	ids[0] = 40;
	ids[1] = 41;
	ret = ret ?: rq_post(e, 41, 1) ?: rq_expect(e, 2, ids, ok2);
	expect("rq", "rnr_wait_ended_by_post", ret, 0);
	/* the error state: what is posted is flushed, and so is what comes */
	ids[0] = 50;
	ids[1] = 51;
	ret = rq_post(e, 50, 1) ?: rq_post(e, 51, 1) ?:
	      qp_to(e->qp, IBV_QPS_ERR) ?: rq_expect(e, 2, ids, fl2);
	expect("rq", "err_flushes_posted", ret, 0);
	ids[0] = 52;
	ret = rq_post(e, 52, 1) ?: rq_expect(e, 1, ids, fl2);
	expect("rq", "err_flushes_post", ret, 0);
	/* back to RESET: empty, refusing posts, then as new */
	ret = qp_to(e->qp, IBV_QPS_RESET);
	expect("rq", "post_after_reset", ret ?: rq_post(e, 60, 1), EINVAL);
	ids[0] = 61;
	ids[1] = 62;
	ret = qp_to(e->qp, IBV_QPS_INIT) ?: rq_post(e, 61, 1) ?:
	      qp_to(e->qp, IBV_QPS_RTR) ?: qp_to(e->qp, IBV_QPS_RTS) ?:
	      rq_send(e, 62) ?: rq_expect(e, 2, ids, ok2);
	expect("rq", "reset_then_receive", ret, 0);
}

static int srq_resize(struct ibv_srq *srq, uint32_t max_wr)
{
	struct ibv_srq_attr a = { .max_wr = max_wr };

	return ibv_modify_srq(srq, &a, IBV_SRQ_MAX_WR);
}

/*
 * A resize (IBV_DEVICE_SRQ_RESIZE): refused below what is posted or past
 * the device's depth; the WRs posted before it are taken first, in
 * order, then the new ring's; they count against the new depth until
 * taken, and a second resize meanwhile is EBUSY; once they are taken the
 * SRQ may shrink again
 */
static void rq_srq_resize(struct rq_env *e)
{
	static const int ok2[] = { IBV_WC_SUCCESS, IBV_WC_SUCCESS };
	struct ibv_srq_attr q;
	uint64_t ids[2];
	int i, ret;

	if (!(dev_attr.device_cap_flags & IBV_DEVICE_SRQ_RESIZE))
		return fail("srq", "no IBV_DEVICE_SRQ_RESIZE");
	for (i = 0, ret = 0; i < RQ_WR && !ret; i++)
		ret = rq_post(e, 100 + i, 1);
	expect("srq", "resize_fill", ret, 0);
	expect("srq", "resize_below_posted", srq_resize(e->srq, RQ_WR - 1),
	       EINVAL);
	expect("srq", "resize_past_max_srq_wr",
	       srq_resize(e->srq, dev_attr.max_srq_wr + 1), EINVAL);
	expect("srq", "resize", srq_resize(e->srq, 2 * RQ_WR), 0);
	ret = ibv_query_srq(e->srq, &q);
	expect("srq", "resize_query",
	       ret ?: q.max_wr == 2 * RQ_WR ? 0 : EIO, 0);
	expect("srq", "resize_again_busy", srq_resize(e->srq, 4 * RQ_WR),
	       EBUSY);
	for (i = 0, ret = 0; i < RQ_WR && !ret; i++)
		ret = rq_post(e, 200 + i, 1);
	expect("srq", "resize_post_new", ret, 0);
	expect("srq", "resize_post_past_depth", rq_post(e, 300, 1), ENOMEM);
	for (i = 0, ret = 0; i < 2 * RQ_WR && !ret; i++) {
		ids[0] = 400 + i;
		ids[1] = i < RQ_WR ? 100 + i : 200 + i - RQ_WR;
		ret = rq_send(e, ids[0]) ?: rq_expect(e, 2, ids, ok2);
	}
	expect("srq", "resize_old_first", ret, 0);
	expect("srq", "resize_shrink_drained", srq_resize(e->srq, RQ_WR), 0);
	ids[0] = 500;
	ids[1] = 501;
	ret = rq_post(e, 501, 1) ?: rq_send(e, 500) ?:
	      rq_expect(e, 2, ids, ok2);
	expect("srq", "resize_shrunk_receives", ret, 0);
}

/*
 * An SRQ: its depth, and an RNR wait on a QP of it that a post ends (the
 * SRQ's doorbell)
 */
static void rq_srq(struct rq_env *e)
{
	static const int ok2[] = { IBV_WC_SUCCESS, IBV_WC_SUCCESS };
	struct ibv_srq_init_attr sa = {
		.attr = { .max_wr = RQ_WR, .max_sge = RQ_SGE },
	};
	uint64_t ids[2];
	int i, ret;

	e->srq = ibv_create_srq(pd, &sa);
	if (expect_ptr("srq", "create", e->srq, 0))
		return;
	if (rq_qp(e, e->srq) || qp_to(e->qp, IBV_QPS_INIT) ||
	    qp_to(e->qp, IBV_QPS_RTR) || qp_to(e->qp, IBV_QPS_RTS)) {
		fail("srq", "QP to RTS");
		goto out;
	}
	expect("srq", "post_too_many_sges", rq_post(e, 1, RQ_SGE + 1),
	       EINVAL);
	for (i = 0, ret = 0; i < RQ_WR && !ret; i++)
		ret = rq_post(e, 10 + i, 1);
	expect("srq", "post_fill", ret, 0);
	expect("srq", "post_past_max_wr", rq_post(e, 20, 1), ENOMEM);
	for (i = 0, ret = 0; i < RQ_WR && !ret; i++) {
		ids[0] = 30 + i;
		ids[1] = 10 + i;
		ret = rq_send(e, ids[0]) ?: rq_expect(e, 2, ids, ok2);
	}
	expect("srq", "sends_take_posted", ret, 0);
	ret = rq_send(e, 40);
	usleep(20000);
	ids[0] = 40;
	ids[1] = 41;
	ret = ret ?: rq_post(e, 41, 1) ?: rq_expect(e, 2, ids, ok2);
	expect("srq", "rnr_wait_ended_by_post", ret, 0);
	rq_srq_resize(e);
out:
	rq_destroy_qp(e);
	expect("srq", "destroy", ibv_destroy_srq(e->srq), 0);
	e->srq = NULL;
}

/*
 * A ring written by the process itself, past the provider: the kernel
 * copies a slot once and checks the copy. A WR with more SGEs than the
 * queue's completes with IBV_WC_LOC_QP_OP_ERR (the SEND that took it
 * with IBV_WC_REM_OP_ERR); a producer index beyond the queue's depth is
 * IBV_EVENT_QP_FATAL, nothing taken. The QP ends in the error state.
 */
static void rq_hostile(struct rq_env *e)
{
	static const int bad2[] = { IBV_WC_REM_OP_ERR, IBV_WC_LOC_QP_OP_ERR };
	static const int rem[] = { IBV_WC_REM_OP_ERR };
	/* the ABI's slot: RQ_BIG_WR slots (a power of two), RQ_SGE entries */
	size_t stride = sizeof(struct rsim_urwqe) +
			RQ_SGE * sizeof(struct rsim_usge);
	struct rsim_urwqe *slot;
	uint64_t ids[2] = { 70, 71 };
	uint32_t prod;
	int ret;

	if (rq_qp_wr(e, NULL, RQ_BIG_WR) || !e->ring ||
	    qp_to(e->qp, IBV_QPS_INIT) ||
	    qp_to(e->qp, IBV_QPS_RTR) || qp_to(e->qp, IBV_QPS_RTS)) {
		fail("rq", "hostile QP to RTS, its ring found");
		goto out;
	}
	/* a ring is never executable: not at mmap(), not by mprotect() */
	ret = mprotect(e->ring, sysconf(_SC_PAGESIZE), PROT_READ | PROT_EXEC);
	expect("rq", "ring_mprotect_exec", ret ? errno : 0, EACCES);
	prod = e->ring->prod;
	slot = (struct rsim_urwqe *)((char *)e->ring + RSIM_URING_SLOTS +
				     (prod & (RQ_BIG_WR - 1)) * stride);
	slot->wr_id = 71;
	slot->num_sge = RQ_SGE + 1;
	slot->reserved = 0;
	__atomic_store_n(&e->ring->prod, prod + 1, __ATOMIC_RELEASE);
	ret = rq_send(e, 70) ?: rq_expect(e, 2, ids, bad2);
	expect("rq", "hostile_num_sge", ret ?: rq_state(e->qp) != IBV_QPS_ERR,
	       0);
	rq_destroy_qp(e);

	if (rq_qp_wr(e, NULL, RQ_BIG_WR) || !e->ring ||
	    qp_to(e->qp, IBV_QPS_INIT) ||
	    qp_to(e->qp, IBV_QPS_RTR) || qp_to(e->qp, IBV_QPS_RTS)) {
		fail("rq", "hostile QP to RTS, its ring found");
		goto out;
	}
	__atomic_store_n(&e->ring->prod, e->ring->prod + 1000,
			 __ATOMIC_RELEASE);
	ids[0] = 80;
	ret = rq_send(e, 80) ?: rq_expect(e, 1, ids, rem) ?:
	      rq_fatal_event(e->qp);
	expect("rq", "hostile_prod_index",
	       ret ?: rq_state(e->qp) != IBV_QPS_ERR, 0);
out:
	rq_destroy_qp(e);
}

/* a send ring's slot i: RQ_WR slots of the ABI's size for 1 SGE */
static struct rsim_uswqe *sq_slot(struct rq_env *e, uint32_t i)
{
	size_t stride = (sizeof(struct rsim_uswqe) +
			 sizeof(struct rsim_usge) + 15) & ~(size_t)15;

	return (struct rsim_uswqe *)((char *)e->sring + RSIM_URING_SLOTS +
				     (i & (RQ_WR - 1)) * stride);
}

/* a fresh send-only QP in RTS with its send ring found; 0 or -1 */
static int sq_qp(struct rq_env *e)
{
	return rq_qp_wr(e, NULL, 0) || !e->sring ||
	       qp_to(e->qp, IBV_QPS_INIT) || qp_to(e->qp, IBV_QPS_RTR) ||
	       qp_to(e->qp, IBV_QPS_RTS) ? -1 : 0;
}

/*
 * One slot written past the provider (@s filled by the caller, wr_id 90,
 * signaled), published, and the doorbell rung as the provider rings it
 * (the post_send command with no WR): it must complete with
 * IBV_WC_LOC_QP_OP_ERR and leave the QP in the error state
 */
static int sq_bad_slot(struct rq_env *e, struct rsim_uswqe *s)
{
	static const int st[] = { IBV_WC_LOC_QP_OP_ERR };
	static const uint64_t id[] = { 90 };
	uint32_t prod = e->sring->prod;
	struct ibv_send_wr *bad;
	int ret;

	memcpy(sq_slot(e, prod), s, sizeof(*s));
	__atomic_store_n(&e->sring->prod, prod + 1, __ATOMIC_RELEASE);
	ret = ibv_cmd_post_send(e->qp, NULL, &bad) ?:
	      rq_expect(e, 1, id, st);
	if (!ret && rq_state(e->qp) != IBV_QPS_ERR)
		ret = EIO;
	return ret;
}

/*
 * Send queues through the provider: posts before RTS, and a bind that
 * names no window, EINVAL either way; a WRITE to itself. With
 * mapped rings, a new queue's ring asks for a doorbell (nobody executes
 * it), and a send ring the test writes itself: a WR with an opcode
 * no ring may carry (IB_WR_REG_MR's) and one with more SGEs than the
 * QP's complete in error; a producer index beyond the queue's room raises
 * IBV_EVENT_QP_FATAL; the QP ends in the error state each time.
 */
static void sq_rings(struct rq_env *e, bool mapped)
{
	static const int ok[] = { IBV_WC_SUCCESS };
	static const uint64_t id[] = { 3 };
	struct ibv_sge sge = { .addr = (uintptr_t)e->buf, .length = 4096,
			       .lkey = e->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 3, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma.remote_addr = (uintptr_t)e->buf + MR_LEN / 2,
		.wr.rdma.rkey = e->mr->rkey,
	}, *bad;
	struct rsim_uswqe s;
	int ret;

	if (rq_qp_wr(e, NULL, 0)) {
		fail("sq", "create_qp");
		return;
	}
	expect("sq", "post_in_reset", ibv_post_send(e->qp, &wr, &bad), EINVAL);
	if (qp_to(e->qp, IBV_QPS_INIT) || qp_to(e->qp, IBV_QPS_RTR))
		return fail("sq", "to RTR");
	expect("sq", "post_in_rtr", ibv_post_send(e->qp, &wr, &bad), EINVAL);
	if (qp_to(e->qp, IBV_QPS_RTS))
		return fail("sq", "to RTS");
	wr.opcode = IBV_WR_BIND_MW;
	expect("sq", "bind_mw_opcode", ibv_post_send(e->qp, &wr, &bad),
	       EINVAL);
	wr.opcode = IBV_WR_RDMA_WRITE;
	memset(e->buf + MR_LEN / 2, 0, 4096);
	ret = ibv_post_send(e->qp, &wr, &bad) ?: rq_expect(e, 1, id, ok);
	if (!ret && memcmp(e->buf, e->buf + MR_LEN / 2, 4096))
		ret = EIO;
	expect("sq", "write_to_itself", ret, 0);
	rq_destroy_qp(e);
	if (!mapped)
		return;

	/* nobody executes a new queue: its ring asks for a doorbell */
	ret = sq_qp(e) ? EIO : 0;
	if (!ret && __atomic_load_n(&e->sring->flags, __ATOMIC_ACQUIRE) !=
		    RSIM_URING_F_DOORBELL)
		ret = EIO;
	expect("sq", "idle_ring_asks_doorbell", ret, 0);
	rq_destroy_qp(e);

	memset(&s, 0, sizeof(s));
	s.wr_id = 90;
	s.opcode = 0x20;	/* IB_WR_REG_MR: not a user opcode */
	s.send_flags = IBV_SEND_SIGNALED;
	ret = sq_qp(e) ? EIO : sq_bad_slot(e, &s);
	expect("sq", "hostile_opcode", ret, 0);
	rq_destroy_qp(e);

	s.opcode = IBV_WR_RDMA_WRITE;
	s.num_sge = 99;
	ret = sq_qp(e) ? EIO : sq_bad_slot(e, &s);
	expect("sq", "hostile_num_sge", ret, 0);
	rq_destroy_qp(e);

	ret = sq_qp(e) ? EIO : 0;
	if (!ret) {
		__atomic_store_n(&e->sring->prod, e->sring->prod + 1000,
				 __ATOMIC_RELEASE);
		ret = ibv_cmd_post_send(e->qp, NULL, &bad) ? EIO :
		      rq_fatal_event(e->qp);
		if (!ret && rq_state(e->qp) != IBV_QPS_ERR)
			ret = EIO;
	}
	expect("sq", "hostile_prod_index", ret, 0);
	rq_destroy_qp(e);

	/* FLUSH and ATOMIC_WRITE: a slot that breaks their posting rules */
	memset(&s, 0, sizeof(s));
	s.wr_id = 90;
	s.opcode = IBV_WR_FLUSH;
	s.send_flags = IBV_SEND_SIGNALED;
	s.wr.flush.type = 0;		/* no placement type */
	ret = sq_qp(e) ? EIO : sq_bad_slot(e, &s);
	expect("sq", "flush_without_type", ret, 0);
	rq_destroy_qp(e);

	memset(&s, 0, sizeof(s));
	s.wr_id = 90;
	s.opcode = IBV_WR_ATOMIC_WRITE;
	s.send_flags = IBV_SEND_SIGNALED;
	s.num_sge = 1;			/* its 8 bytes are in the WR */
	ret = sq_qp(e) ? EIO : sq_bad_slot(e, &s);
	expect("sq", "atomic_write_with_sge", ret, 0);
	rq_destroy_qp(e);
}

/*
 * FLUSH and ATOMIC_WRITE come only through the extended send API, which
 * keeps their operands: ibv_post_send() has no room for them and refuses
 * both opcodes (EINVAL), with or without mapped send queues.
 */
static void placement_post_send(struct rq_env *e)
{
	struct ibv_send_wr wr = {
		.wr_id = 5, .opcode = IBV_WR_FLUSH,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma.remote_addr = (uintptr_t)e->buf,
		.wr.rdma.rkey = e->mr->rkey,
	}, *bad;

	if (sq_qp(e))
		return fail("placement", "create_qp");
	expect("placement", "post_send_flush", ibv_post_send(e->qp, &wr, &bad),
	       EINVAL);
	wr.opcode = IBV_WR_ATOMIC_WRITE;
	expect("placement", "post_send_atomic_write",
	       ibv_post_send(e->qp, &wr, &bad), EINVAL);
	rq_destroy_qp(e);
}

/*
 * ibv_bind_mw() of @mw to @mr through a new QP of @type with
 * @send_wr send WRs (0: no send queue), in INIT; its errno
 */
static int mw_bind_other_qp(struct rq_env *e, struct ibv_mw *mw,
			    struct ibv_mr *mr, enum ibv_qp_type type,
			    uint32_t send_wr)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = e->cq, .recv_cq = e->cq, .qp_type = type,
		.cap = { .max_send_wr = send_wr, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_mw_bind b = {
		.wr_id = 14, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = mr, .addr = (uintptr_t)mr->addr,
			       .length = 4096,
			       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &qa);
	uint32_t rkey = mw->rkey;
	int ret;

	if (!qp)
		return errno ? errno : EIO;
	ret = ibv_bind_mw(qp, mw, &b);
	if (mw->rkey != rkey)
		ret = EIO;
	ibv_destroy_qp(qp);
	return ret;
}

/* one signaled WRITE of @len bytes from the start of the buffer */
static int mw_write(struct rq_env *e, uint32_t lkey, uint32_t rkey,
		    void *to, uint32_t len, int want)
{
	const int st[] = { want };
	static const uint64_t id[] = { 13 };
	struct ibv_sge sge = { .addr = (uintptr_t)e->buf, .length = len,
			       .lkey = lkey };
	struct ibv_send_wr wr = {
		.wr_id = 13, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma.remote_addr = (uintptr_t)to, .wr.rdma.rkey = rkey,
	}, *bad;

	return ibv_post_send(e->qp, &wr, &bad) ?: rq_expect(e, 1, id, st);
}

/*
 * Memory windows (type 1 and 2B), bound through the send ring: the
 * capability bits and ibv_alloc_mw() say so only with mapped send
 * queues (EOPNOTSUPP without); a type that is not 1 or 2 is EINVAL. A
 * type 1 window bound with ibv_bind_mw() takes the next rkey and lets a
 * WRITE through; its MR cannot be deregistered while it is bound
 * (EBUSY), and can once it is deallocated. A type 2 bind past the end of
 * its MR completes with IBV_WC_MW_BIND_ERR and the QP is in error.
 */
static void mw_rules(struct rq_env *e, bool mapped)
{
	static const uint64_t id11[] = { 11 }, id12[] = { 12 };
	static const int ok[] = { IBV_WC_SUCCESS };
	static const int bind_err[] = { IBV_WC_MW_BIND_ERR };
	const unsigned int caps = IBV_DEVICE_MEM_WINDOW |
				  IBV_DEVICE_MEM_WINDOW_TYPE_2B;
	unsigned char *win = e->buf + MR_LEN / 2;
	struct ibv_device_attr_ex ax;
	struct ibv_mw *mw1, *mw2;
	struct ibv_mw_bind b = {
		.wr_id = 11, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .addr = (uintptr_t)win, .length = 4096,
			       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE },
	};
	struct ibv_send_wr wr = {
		.wr_id = 12, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_mr *mr;
	uint32_t old;
	int ret;

	ret = ibv_query_device_ex(ctx, NULL, &ax) ? errno :
	      (ax.orig_attr.device_cap_flags & caps) != (mapped ? caps : 0) ||
	      !ax.orig_attr.max_mw != !mapped ? EIO : 0;
	expect("mw", "caps", ret, 0);
	mw1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	if (!mapped) {
		expect("mw", "alloc_without_rings", mw1 ? 0 : errno,
		       EOPNOTSUPP);
		if (mw1)
			ibv_dealloc_mw(mw1);
		return;
	}
	if (!mw1)
		return fail("mw", "alloc type 1");
	mw2 = ibv_alloc_mw(pd, 3);
	expect("mw", "alloc_type_3", mw2 ? 0 : errno, EINVAL);
	mw2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	if (!mw2 || reg_mr(pd, e->buf, MR_LEN, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND, &mr) ||
	    sq_qp(e)) {
		fail("mw", "setup");
		goto out;
	}

	b.bind_info.mr = mr;
	old = mw1->rkey;
	ret = ibv_bind_mw(e->qp, mw1, &b) ?: rq_expect(e, 1, id11, ok);
	if (!ret && mw1->rkey == old)
		ret = EIO;
	expect("mw", "bind_type_1", ret, 0);
	memset(win, 0, 4096);
	ret = mw_write(e, mr->lkey, mw1->rkey, win, 4096, IBV_WC_SUCCESS);
	if (!ret && memcmp(e->buf, win, 4096))
		ret = EIO;
	expect("mw", "write_through_type_1", ret, 0);
	expect("mw", "dereg_mr_window_bound", ibv_dereg_mr(mr), EBUSY);
	/* a bind through a QP whose send queue cannot carry one */
	expect("mw", "bind_ud_qp", mw_bind_other_qp(e, mw1, mr, IBV_QPT_UD, 4),
	       EINVAL);
	expect("mw", "bind_no_send_queue",
	       mw_bind_other_qp(e, mw1, mr, IBV_QPT_RC, 0), EINVAL);

	/* type 2, bound with a send WR: one byte past the MR */
	wr.bind_mw.mw = mw2;
	wr.bind_mw.rkey = ibv_inc_rkey(mw2->rkey);
	wr.bind_mw.bind_info = b.bind_info;
	wr.bind_mw.bind_info.addr = (uintptr_t)e->buf + MR_LEN - 4095;
	ret = ibv_post_send(e->qp, &wr, &bad) ?:
	      rq_expect(e, 1, id12, bind_err);
	if (!ret && rq_state(e->qp) != IBV_QPS_ERR)
		ret = EIO;
	expect("mw", "bind_type_2_beyond_mr", ret, 0);

	expect("mw", "dealloc_bound", ibv_dealloc_mw(mw1), 0);
	mw1 = NULL;
	expect("mw", "dereg_mr_window_gone", ibv_dereg_mr(mr), 0);
out:
	rq_destroy_qp(e);
	if (mw2)
		ibv_dealloc_mw(mw2);
	if (mw1)
		ibv_dealloc_mw(mw1);
}

/*
 * Receive queues through the provider: mapped rings unless RSIM_NO_MAP=1
 * (the kernel's post commands), the same errnos either way
 */
/*
 * The SRQ rules again on a context of the kernel's rings (the post
 * commands; RSIM_NO_MAP=1 when it is opened): a resize there swaps the
 * kernel's ring, its old WRs taken first all the same
 */
static void srq_kernel_rings(struct ibv_device *dev)
{
	struct ibv_context *ctx0 = ctx;
	struct ibv_pd *pd0 = pd;
	struct rq_env e = {};

	setenv("RSIM_NO_MAP", "1", 1);
	ctx = ibv_open_device(dev);
	unsetenv("RSIM_NO_MAP");
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	if (!pd) {
		fail("srq", "a context without mapped rings");
		goto out;
	}
	e.buf = pattern_buf(MR_LEN, 37);
	e.cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (!e.buf || !e.cq ||
	    reg_mr(pd, e.buf, MR_LEN, IBV_ACCESS_LOCAL_WRITE, &e.mr)) {
		fail("srq", "kernel rings: setup");
		goto out;
	}
	printf("srq kernel rings\n");
	rq_srq(&e);
out:
	if (e.mr)
		ibv_dereg_mr(e.mr);
	if (e.cq)
		ibv_destroy_cq(e.cq);
	if (e.buf)
		munmap(e.buf, MR_LEN);
	if (pd)
		ibv_dealloc_pd(pd);
	if (ctx)
		ibv_close_device(ctx);
	ctx = ctx0;
	pd = pd0;
}

static void recv_rings(void)
{
	struct rq_env e = {};
	const char *no_map = getenv("RSIM_NO_MAP");

	e.buf = pattern_buf(MR_LEN, 31);
	e.cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (!e.buf || !e.cq ||
	    reg_mr(pd, e.buf, MR_LEN, IBV_ACCESS_LOCAL_WRITE |
		   IBV_ACCESS_REMOTE_WRITE, &e.mr)) {
		fail("rq", "setup");
		goto out;
	}
	if (rq_qp(&e, NULL)) {
		fail("rq", "create_qp");
		goto out;
	}
	printf("rq ring %s\n", e.ring ? "mapped" : "none");
	if (!e.ring != (no_map && !strcmp(no_map, "1")))
		fail("rq", "a ring mapped unless RSIM_NO_MAP=1");
	rq_rules(&e);
	rq_destroy_qp(&e);
	rq_srq(&e);
	if (!no_map || strcmp(no_map, "1"))
		rq_hostile(&e);
	sq_rings(&e, !no_map || strcmp(no_map, "1"));
	placement_post_send(&e);
	mw_rules(&e, !no_map || strcmp(no_map, "1"));
out:
	rq_destroy_qp(&e);
	if (e.mr)
		ibv_dereg_mr(e.mr);
	if (e.cq)
		ibv_destroy_cq(e.cq);
	if (e.buf)
		munmap(e.buf, MR_LEN);
}

/*
 * Another ibv_context of the same device (a second open). A uverbs
 * handle is a number in the file it came from: the kernel refuses
 * another context's object as a number that names nothing of that type
 * in the caller's file (ENOENT, or EINVAL if it names another type). The
 * objects of the second context are used from the first: copies of them
 * that carry the first context (what a program mixing two contexts up
 * would send).
 */
static void other_context(struct ibv_device *dev)
{
	struct ibv_pd *pds[3] = {}, *fp;
	struct ibv_mr *mr1 = NULL, *mr;
	struct ibv_dmah *d2 = NULL, *fd;
	struct ibv_context *ctx2;
	void *buf;
	int i, done_enoent = 0, done_einval = 0;

	buf = pattern_buf(MR_LEN, 19);
	if (!buf) {
		fail("ctx2", "mmap");
		return;
	}
	errno = 0;
	ctx2 = ibv_open_device(dev);
	if (expect_ptr("ctx2", "open", ctx2, 0))
		goto out;
	/* the first context now has its PD and this MR, nothing else */
	if (expect("ctx2", "reg_mr_ctx1", reg_mr(pd, buf, MR_LEN, MR_ACCESS,
						 &mr1), 0))
		goto close;
	for (i = 0; i < 3; i++) {
		errno = 0;
		pds[i] = ibv_alloc_pd(ctx2);
		if (expect_ptr("ctx2", "alloc_pd", pds[i], 0))
			goto free;
	}
	for (i = 0; i < 3; i++) {
		uint32_t h = pds[i]->handle;

		if (h == pd->handle)
			continue;	/* the same number: a PD there too */
		fp = forge_pd(pds[i], h);
		if (!fp)
			continue;
		fp->context = ctx;
		if (h == mr1->handle && !done_einval) {
			expect("ctx2", "reg_mr_pd_of_ctx2_names_mr",
			       reg_mr(fp, buf, MR_LEN, MR_ACCESS, &mr), EINVAL);
			done_einval = 1;
		} else if (h != mr1->handle && !done_enoent) {
			expect("ctx2", "reg_mr_pd_of_ctx2",
			       reg_mr(fp, buf, MR_LEN, MR_ACCESS, &mr), ENOENT);
			expect("ctx2", "dealloc_pd_of_ctx2", ibv_dealloc_pd(fp),
			       ENOENT);
			done_enoent = 1;
		}
		free(fp);
	}
	if (!done_enoent)
		fail("ctx2", "no PD of ctx2 whose handle names nothing in ctx1");
	/* a DMA handle of the second context, with an MR of the first */
	if (!expect("ctx2", "alloc_dmah", alloc_dmah(ctx2, M_PH, 0, 0, 1, &d2),
		    0)) {
		fd = forge_dmah(d2, BOGUS_HANDLE);
		if (fd) {
			fd->context = ctx;
			expect("ctx2", "reg_mr_ex_dmah_of_ctx2_bogus",
			       reg_mr_ex(pd, buf, MR_LEN, MR_ACCESS,
					 MR_MASK_DMAH, fd, &mr), ENOENT);
			unforge_dmah(fd);
		}
		/* its own context's MR holds it: left for the close */
		expect("ctx2", "reg_mr_ex_left_for_close",
		       reg_mr_ex(pds[0], buf, MR_LEN, MR_ACCESS, MR_MASK_DMAH,
				 d2, &mr), 0);
		expect("ctx2", "dealloc_dmah_busy", ibv_dealloc_dmah(d2),
		       EBUSY);
	}
	/* the PD with the MR: refused; the close cleans all of it up */
	expect("ctx2", "dealloc_pd_with_mr", ibv_dealloc_pd(pds[0]), EBUSY);
	for (i = 1; i < 3; i++) {
		expect("ctx2", "dealloc_pd", ibv_dealloc_pd(pds[i]), 0);
		pds[i] = NULL;
	}
	pds[0] = NULL;
free:
	for (i = 0; i < 3; i++)
		if (pds[i])
			ibv_dealloc_pd(pds[i]);
	if (mr1)
		expect("ctx2", "dereg_mr_ctx1", ibv_dereg_mr(mr1), 0);
close:
	/*
	 * ibv_close_device() does not free what the provider allocated for
	 * the objects left open (the kernel does its side): d2, the MR and
	 * pds[0] are leaked in this process's heap, on purpose.
	 */
	expect("ctx2", "close", ibv_close_device(ctx2), 0);
out:
	munmap(buf, MR_LEN);
}

int main(int argc, char **argv)
{
	const char *ibdev = "rdmasim0";
	struct ibv_device **list, *dev = NULL;
	struct ibv_port_attr port;
	struct ibv_dmah *kept;
	int i, n, opt, cpu;

	while ((opt = getopt(argc, argv, "d:")) != -1) {
		if (opt == 'd') {
			ibdev = optarg;
		} else {
			fprintf(stderr, "usage: %s [-d ibdev]\n", argv[0]);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	nr_cpu_ids = read_nr_cpu_ids();
	if (nr_cpu_ids < 1 || sched_getaffinity(0, sizeof(allowed), &allowed)) {
		printf("FAIL cpus: cannot read the possible CPUs or the affinity\n");
		return 1;
	}
	for (cpu = 0; cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &allowed); cpu++)
		;
	cpu_ok = cpu;
	printf("cpus nr_cpu_ids %d allowed %d first %d\n", nr_cpu_ids,
	       CPU_COUNT(&allowed), cpu_ok);

	list = ibv_get_device_list(&n);
	if (!list) {
		printf("FAIL open: ibv_get_device_list: %s\n", strerror(errno));
		return 1;
	}
	for (i = 0; i < n && !dev; i++)
		if (!strcmp(ibv_get_device_name(list[i]), ibdev))
			dev = list[i];
	if (!dev) {
		printf("FAIL open: no device %s (is RDMAV_DRIVERS set?)\n",
		       ibdev);
		ibv_free_device_list(list);
		return 1;
	}
	errno = 0;
	ctx = ibv_open_device(dev);
	if (expect_ptr("ctx", "open", ctx, 0))
		goto out_list;
	if (expect("ctx", "query_device", ibv_query_device(ctx, &dev_attr), 0) ||
	    expect("ctx", "query_port", ibv_query_port(ctx, 1, &port), 0))
		goto out_close;
	port_lid = port.lid;
	printf("ctx max_cqe %d max_qp_wr %d max_sge %d max_mr_size %llu lid %u\n",
	       dev_attr.max_cqe, dev_attr.max_qp_wr, dev_attr.max_sge,
	       (unsigned long long)dev_attr.max_mr_size, port_lid);
	errno = 0;
	pd = ibv_alloc_pd(ctx);
	if (expect_ptr("ctx", "alloc_pd", pd, 0))
		goto out_close;

	/* one handle kept across the rest, as an application would */
	if (!expect("dmah", "kept", alloc_dmah(ctx, M_PH, 0, 0, 0, &kept), 0)) {
		dmah_table();
		dmah_outside_affinity();
		mr_with_dmah("vm", IBV_TPH_MEM_TYPE_VM);
		mr_with_dmah("pm", IBV_TPH_MEM_TYPE_PM);
		mr_dmah_bad();
		expect("cleanup", "free_dmah", ibv_dealloc_dmah(kept), 0);
	}
	mr_bad();
	busy_objects();
	mr_rereg();
	device_memory();
	bad_sizes();
	bogus_and_double();
	multicast();
	recv_rings();
	srq_kernel_rings(dev);
	other_context(dev);

	expect("cleanup", "dealloc_pd", ibv_dealloc_pd(pd), 0);
out_close:
	expect("cleanup", "close", ibv_close_device(ctx), 0);
out_list:
	ibv_free_device_list(list);
	printf("result %s (%d failure%s)\n", failures ? "FAIL" : "PASS",
	       failures, failures == 1 ? "" : "s");
	return failures ? 1 : 0;
}
