// SPDX-License-Identifier: GPL-2.0-only
/*
 * rsim_dmah: DMA handles (ibv_alloc_dmah) on an RDMA device through the
 * uverbs ioctl ABI directly, with no provider library: a ucontext, a PD,
 * DMA handles with good and bad attributes (every errno checked), an MR
 * over real user memory bound to a handle, the handle refused while the
 * MR holds it, bad ioctl input, objects of another context, a user CQ.
 *
 * Built against the uapi headers of a kernel with the DMAH core (7.3):
 * see the Makefile. Prints one "<what> <case> <errno name or 0>" line per
 * case (the selftest reads them), "FAIL ..." for every expectation that
 * does not hold, and exits 0 only when every one held.
 *
 *   rsim_dmah [-d rdmasim0] [-L]
 *
 * -L adds a request that leaks a task_struct reference in 7.3's core
 * (see get_context_write()), to show that defect; the selftest does not.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/udmabuf.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdma/rdma_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/ib_user_verbs.h>

/* enum tph_mem_type of include/linux/pci-tph.h: the ENUM_IN element ids */
#define TPH_MEM_VM 0
#define TPH_MEM_PM 1

#define MAX_ATTRS 16
#define NONE (-1)
#define MR_LEN (64 * 1024)
#define MR_ACCESS (IB_UVERBS_ACCESS_LOCAL_WRITE | \
		   IB_UVERBS_ACCESS_REMOTE_READ | \
		   IB_UVERBS_ACCESS_REMOTE_WRITE)

static int failures;
static __u32 driver_id;

/* one ioctl request: the header and its attributes, in one buffer */
struct req {
	__u64 buf[(sizeof(struct ib_uverbs_ioctl_hdr) +
		   MAX_ATTRS * sizeof(struct ib_uverbs_attr)) / sizeof(__u64)];
};

static struct ib_uverbs_ioctl_hdr *hdr(struct req *r)
{
	return (struct ib_uverbs_ioctl_hdr *)r->buf;
}

static void req_init(struct req *r, __u16 object, __u16 method)
{
	memset(r, 0, sizeof(*r));
	hdr(r)->object_id = object;
	hdr(r)->method_id = method;
	hdr(r)->driver_id = driver_id;
}

/* req_attr: add an attribute; returns its index */
static int req_attr(struct req *r, __u16 id, __u16 len, __u64 data,
		    __u16 flags)
{
	struct ib_uverbs_ioctl_hdr *h = hdr(r);
	struct ib_uverbs_attr *a;

	if (h->num_attrs == MAX_ATTRS) {
		fprintf(stderr, "rsim_dmah: too many attributes\n");
		exit(2);
	}
	a = &h->attrs[h->num_attrs];
	a->attr_id = id;
	a->len = len;
	a->flags = flags;
	a->data = data;
	return h->num_attrs++;
}

/* an object handle (IDR): a new one's id comes back in the attribute */
static int req_idr(struct req *r, __u16 id, __u32 handle)
{
	return req_attr(r, id, 0, handle, UVERBS_ATTR_F_MANDATORY);
}

/* a PTR_IN of up to 8 bytes: inline in the attribute's data */
static int req_in(struct req *r, __u16 id, const void *p, __u16 len)
{
	__u64 data = 0;

	memcpy(&data, p, len);
	return req_attr(r, id, len, data, 0);
}

static int req_in64(struct req *r, __u16 id, __u64 v)
{
	return req_in(r, id, &v, sizeof(v));
}

static int req_out(struct req *r, __u16 id, void *p, __u16 len)
{
	return req_attr(r, id, len, (uintptr_t)p, 0);
}

static __u64 attr_data(struct req *r, int idx)
{
	return hdr(r)->attrs[idx].data;
}

/* req_send: the ioctl as the header stands; 0 or the errno */
static int req_send(int fd, struct req *r)
{
	return ioctl(fd, RDMA_VERBS_IOCTL, r->buf) ? errno : 0;
}

/* req_run: the header's length from its attributes, then the ioctl */
static int req_run(int fd, struct req *r)
{
	hdr(r)->length = sizeof(struct ib_uverbs_ioctl_hdr) +
			 hdr(r)->num_attrs * sizeof(struct ib_uverbs_attr);
	return req_send(fd, r);
}

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

static void fail(const char *fmt, const char *arg)
{
	printf("FAIL ");
	printf(fmt, arg);
	printf("\n");
	failures++;
}

/* open_uverbs: /dev/infiniband/uverbsN of device <ibdev> */
static int open_uverbs(const char *ibdev, char *path, size_t len)
{
	glob_t g;
	size_t i;
	int fd = -1;

	if (glob("/sys/class/infiniband_verbs/uverbs*/ibdev", 0, NULL, &g))
		return -1;
	for (i = 0; i < g.gl_pathc && fd < 0; i++) {
		char name[64] = "", *node;
		FILE *f = fopen(g.gl_pathv[i], "r");

		if (!f)
			continue;
		if (fscanf(f, "%63s", name) == 1 && !strcmp(name, ibdev)) {
			node = strstr(g.gl_pathv[i], "uverbs");
			*strchr(node, '/') = 0;
			snprintf(path, len, "/dev/infiniband/%s", node);
			fd = open(path, O_RDWR | O_CLOEXEC);
		}
		fclose(f);
	}
	globfree(&g);
	return fd;
}

/*
 * probe_driver_id: the core refuses a header whose driver_id is not the
 * device's with EINVAL before it looks the method up; a method no object
 * has then fails with EPROTONOSUPPORT.
 */
static int probe_driver_id(int fd)
{
	struct req r;
	__u32 id;

	for (id = 0; id < 64; id++) {
		driver_id = id;
		req_init(&r, 0x0fff, 0x0fff);
		if (req_run(fd, &r) == EPROTONOSUPPORT)
			return 0;
	}
	return -1;
}

static int get_context(int fd, __u32 *ncomp, __u64 *core)
{
	struct req r;

	req_init(&r, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_GET_CONTEXT);
	req_out(&r, UVERBS_ATTR_GET_CONTEXT_NUM_COMP_VECTORS, ncomp,
		sizeof(*ncomp));
	req_out(&r, UVERBS_ATTR_GET_CONTEXT_CORE_SUPPORT, core, sizeof(*core));
	return req_run(fd, &r);
}

/*
 * get_context_write: the write() command. Its error path is clean; the
 * ioctl's (UVERBS_METHOD_GET_CONTEXT) frees a context that did not come
 * up without rdma_restrack_put(), which leaks the task reference
 * rdma_restrack_set_name() took (7.3's uverbs_std_types_device.c): only
 * -L sends that one.
 */
static int get_context_write(int fd)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_get_context cmd;
	} c;
	struct ib_uverbs_get_context_resp resp;

	memset(&c, 0, sizeof(c));
	memset(&resp, 0, sizeof(resp));
	c.hdr.command = IB_USER_VERBS_CMD_GET_CONTEXT;
	c.hdr.in_words = sizeof(c) / 4;
	c.hdr.out_words = sizeof(resp) / 4;
	c.cmd.response = (uintptr_t)&resp;
	if (write(fd, &c, sizeof(c)) != sizeof(c))
		return errno;
	close(resp.async_fd);
	return 0;
}

static int leaky;

/* alloc_pd: the write() command (7.3 has no ioctl method for it) */
static int alloc_pd(int fd, __u32 *pd)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_alloc_pd cmd;
	} c;
	struct ib_uverbs_alloc_pd_resp resp;

	memset(&c, 0, sizeof(c));
	memset(&resp, 0, sizeof(resp));
	c.hdr.command = IB_USER_VERBS_CMD_ALLOC_PD;
	c.hdr.in_words = sizeof(c) / 4;
	c.hdr.out_words = sizeof(resp) / 4;
	c.cmd.response = (uintptr_t)&resp;
	if (write(fd, &c, sizeof(c)) != sizeof(c))
		return errno;
	*pd = resp.pd_handle;
	return 0;
}

static int destroy(int fd, __u16 object, __u16 method, __u16 attr,
		   __u32 handle)
{
	struct req r;

	req_init(&r, object, method);
	req_idr(&r, attr, handle);
	return req_run(fd, &r);
}

static int free_pd(int fd, __u32 pd)
{
	return destroy(fd, UVERBS_OBJECT_PD, UVERBS_METHOD_PD_DESTROY,
		       UVERBS_ATTR_DESTROY_PD_HANDLE, pd);
}

static int free_dmah(int fd, __u32 h)
{
	return destroy(fd, UVERBS_OBJECT_DMAH, UVERBS_METHOD_DMAH_FREE,
		       UVERBS_ATTR_FREE_DMA_HANDLE, h);
}

static int dereg_mr(int fd, __u32 mr)
{
	return destroy(fd, UVERBS_OBJECT_MR, UVERBS_METHOD_MR_DESTROY,
		       UVERBS_ATTR_DESTROY_MR_HANDLE, mr);
}

/*
 * The attributes of one DMAH_ALLOC: NONE leaves one out (the kernel sees
 * only which attributes are present; rdma-core's comp_mask maps onto
 * that). The rest bend the encoding.
 */
struct dmah_attrs {
	long long cpu;		/* CPU_ID, a u32 */
	int mem;		/* TPH_MEM_TYPE's element id */
	int ph;			/* PH, a u8 */
	__u16 cpu_len;		/* CPU_ID's length if not 4 */
	__u16 ph_len;		/* PH's length if not 1 */
	__u8 mem_reserved;	/* TPH_MEM_TYPE's enum_data.reserved */
	__u16 extra_attr;	/* an attribute id the method does not have */
	__u16 extra_flags;
	int twice;		/* PH given twice */
};

static int alloc_dmah(int fd, const struct dmah_attrs *a, __u32 *h)
{
	struct ib_uverbs_attr *m;
	struct req r;
	int idx, ret;

	req_init(&r, UVERBS_OBJECT_DMAH, UVERBS_METHOD_DMAH_ALLOC);
	idx = req_idr(&r, UVERBS_ATTR_ALLOC_DMAH_HANDLE, 0);
	if (a->cpu != NONE) {
		__u64 cpu = a->cpu;

		req_in(&r, UVERBS_ATTR_ALLOC_DMAH_CPU_ID, &cpu,
		       a->cpu_len ? a->cpu_len : sizeof(__u32));
	}
	if (a->mem != NONE) {
		/* an ENUM_IN: the element id is the value, no data */
		m = &hdr(&r)->attrs[req_attr(&r, UVERBS_ATTR_ALLOC_DMAH_TPH_MEM_TYPE,
					     0, 0, 0)];
		m->attr_data.enum_data.elem_id = a->mem;
		m->attr_data.enum_data.reserved = a->mem_reserved;
	}
	if (a->ph != NONE) {
		__u64 ph = a->ph;

		req_in(&r, UVERBS_ATTR_ALLOC_DMAH_PH, &ph,
		       a->ph_len ? a->ph_len : sizeof(__u8));
		if (a->twice)
			req_in(&r, UVERBS_ATTR_ALLOC_DMAH_PH, &ph, sizeof(__u8));
	}
	if (a->extra_attr)
		req_attr(&r, a->extra_attr, 0, 0, a->extra_flags);
	ret = req_run(fd, &r);
	if (!ret)
		*h = attr_data(&r, idx);
	return ret;
}

struct mr {
	__u32 handle, lkey, rkey;
};

/* how a registration's request is bent, for the bad-input cases */
struct mr_bend {
	__u16 lkey_len;		/* RESP_LKEY's length if not 4 */
	__u64 lkey_ptr;		/* RESP_LKEY's pointer if not &mr->lkey */
	__u64 iova_delta;	/* added to the IOVA */
};

/* reg_mr: UVERBS_METHOD_REG_MR over [addr, addr + len); dmah NONE: none */
static int reg_mr_bent(int fd, __u32 pd, long long dmah, void *addr,
		       size_t len, struct mr *mr, const struct mr_bend *b)
{
	static const struct mr_bend straight;
	struct req r;
	int idx, ret;

	if (!b)
		b = &straight;
	req_init(&r, UVERBS_OBJECT_MR, UVERBS_METHOD_REG_MR);
	idx = req_idr(&r, UVERBS_ATTR_REG_MR_HANDLE, 0);
	req_idr(&r, UVERBS_ATTR_REG_MR_PD_HANDLE, pd);
	if (dmah != NONE)
		req_idr(&r, UVERBS_ATTR_REG_MR_DMA_HANDLE, dmah);
	req_in64(&r, UVERBS_ATTR_REG_MR_IOVA, (uintptr_t)addr + b->iova_delta);
	req_in64(&r, UVERBS_ATTR_REG_MR_ADDR, (uintptr_t)addr);
	req_in64(&r, UVERBS_ATTR_REG_MR_LENGTH, len);
	req_in64(&r, UVERBS_ATTR_REG_MR_ACCESS_FLAGS, MR_ACCESS);
	req_attr(&r, UVERBS_ATTR_REG_MR_RESP_LKEY,
		 b->lkey_len ? b->lkey_len : sizeof(mr->lkey),
		 b->lkey_ptr ? b->lkey_ptr : (uintptr_t)&mr->lkey, 0);
	req_out(&r, UVERBS_ATTR_REG_MR_RESP_RKEY, &mr->rkey, sizeof(mr->rkey));
	ret = req_run(fd, &r);
	if (!ret)
		mr->handle = attr_data(&r, idx);
	return ret;
}

static int reg_mr(int fd, __u32 pd, long long dmah, void *addr, size_t len,
		  struct mr *mr)
{
	return reg_mr_bent(fd, pd, dmah, addr, len, mr, NULL);
}

/* what the selftest and the checks need about the CPUs */
static int nr_cpu_ids;
static cpu_set_t allowed;
static int cpu_ok;		/* the first CPU in the affinity */

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

static const struct dmah_attrs no_attrs = {
	.cpu = NONE, .mem = NONE, .ph = NONE,
};

/* dmah_case name attrs want: allocate; free what was allocated */
static void dmah_case(int fd, const char *name, struct dmah_attrs a, int want)
{
	__u32 h;

	if (!expect("dmah", name, alloc_dmah(fd, &a, &h), want)) {
		int ret = free_dmah(fd, h);

		if (ret) {
			printf("FAIL dmah %s: freeing it: %s\n", name,
			       errname(ret));
			failures++;
		}
	}
}

static void dmah_table(int fd)
{
	struct dmah_attrs a;
	char name[32];
	int ph;

	for (ph = 0; ph <= 3; ph++) {
		a = no_attrs;
		a.cpu = cpu_ok;
		a.mem = TPH_MEM_VM;
		a.ph = ph;
		snprintf(name, sizeof(name), "cpu_vm_ph%d", ph);
		dmah_case(fd, name, a, 0);
	}
	a = no_attrs;
	a.cpu = cpu_ok;
	a.mem = TPH_MEM_PM;
	a.ph = 2;
	dmah_case(fd, "cpu_pm_ph2", a, 0);
	a = no_attrs;
	a.ph = 0;
	dmah_case(fd, "ph_only", a, 0);

	/* the driver's rules (mlx5's): PH is a must; CPU and type together */
	dmah_case(fd, "no_attrs", no_attrs, EINVAL);
	a = no_attrs;
	a.cpu = cpu_ok;
	a.mem = TPH_MEM_VM;
	dmah_case(fd, "cpu_vm_no_ph", a, EINVAL);
	a = no_attrs;
	a.cpu = cpu_ok;
	a.ph = 0;
	dmah_case(fd, "cpu_no_mem_type", a, EINVAL);
	a = no_attrs;
	a.mem = TPH_MEM_PM;
	a.ph = 0;
	dmah_case(fd, "mem_type_no_cpu", a, EINVAL);

	/* the core's: cpu_id < nr_cpu_ids and allowed, ph in 2 bits */
	a = no_attrs;
	a.cpu = nr_cpu_ids;
	a.mem = TPH_MEM_VM;
	a.ph = 0;
	dmah_case(fd, "cpu_nr_cpu_ids", a, EINVAL);
	a.cpu = 0xffff;
	dmah_case(fd, "cpu_0xffff", a, EINVAL);
	a.cpu = 0xffffffffu;
	dmah_case(fd, "cpu_0xffffffff", a, EINVAL);
	a = no_attrs;
	a.ph = 4;
	dmah_case(fd, "ph4", a, EINVAL);
	a.ph = 0xff;
	dmah_case(fd, "ph255", a, EINVAL);

	/* the ioctl parser's: the enum's ids, the attributes' sizes */
	a = no_attrs;
	a.cpu = cpu_ok;
	a.mem = 2;
	a.ph = 0;
	dmah_case(fd, "mem_type_id2", a, EOPNOTSUPP);
	a.mem = 255;
	dmah_case(fd, "mem_type_id255", a, EOPNOTSUPP);
	a.mem = TPH_MEM_VM;
	a.mem_reserved = 1;
	dmah_case(fd, "mem_type_reserved_set", a, EINVAL);
	a = no_attrs;
	a.cpu = cpu_ok;
	a.mem = TPH_MEM_VM;
	a.ph = 0;
	a.cpu_len = 2;
	dmah_case(fd, "cpu_id_len2", a, EINVAL);
	a.cpu_len = 8;
	dmah_case(fd, "cpu_id_len8", a, EINVAL);
	a = no_attrs;
	a.ph = 0;
	a.ph_len = 4;
	dmah_case(fd, "ph_len4", a, EINVAL);
	a.ph_len = 0;
	a.twice = 1;
	dmah_case(fd, "ph_twice", a, EINVAL);
	a.twice = 0;
	a.extra_attr = 0x0100;
	a.extra_flags = UVERBS_ATTR_F_MANDATORY;
	dmah_case(fd, "unknown_attr_mandatory", a, EPROTONOSUPPORT);
	a.extra_flags = 0;
	dmah_case(fd, "unknown_attr_optional", a, 0);
}

/*
 * A CPU the process may not run on: with one CPU there is none; with
 * more, the process first gives up all but its first allowed CPU.
 */
static void dmah_outside_affinity(int fd)
{
	struct dmah_attrs a = no_attrs;
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
			fail("dmah cpu_outside_affinity: sched_setaffinity: %s",
			     strerror(errno));
			return;
		}
		restricted = 1;
		other = cpu_ok ? 0 : 1;
	}
	if (other < 0) {
		printf("dmah cpu_outside_affinity skipped (%d cpu)\n",
		       nr_cpu_ids);
		return;
	}
	printf("affinity cpu %d allowed, cpu %d not\n", cpu_ok, other);
	a.cpu = other;
	a.mem = TPH_MEM_VM;
	a.ph = 0;
	dmah_case(fd, "cpu_outside_affinity", a, EPERM);
	if (restricted) {
		/* allowed again: the same handle is granted */
		if (sched_setaffinity(0, sizeof(allowed), &allowed))
			fail("dmah cpu_outside_affinity: restoring: %s",
			     strerror(errno));
		else
			dmah_case(fd, "cpu_inside_affinity_again", a, 0);
	}
}

/* the word at index i of a pattern */
static unsigned int pattern(size_t i, unsigned int seed)
{
	return seed ^ (unsigned int)(i * 2654435761u);
}

static void *pattern_buf(size_t len, unsigned int seed)
{
	unsigned int *p;
	size_t i;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	for (i = 0; i < len / sizeof(*p); i++)
		p[i] = pattern(i, seed);
	return p;
}

static int pattern_ok(const void *buf, size_t len, unsigned int seed)
{
	const unsigned int *p = buf;
	size_t i;

	for (i = 0; i < len / sizeof(*p); i++)
		if (p[i] != pattern(i, seed))
			return 0;
	return 1;
}

/*
 * mr_with_dmah: an MR over a patterned buffer bound to a handle of the
 * given memory type: the handle is busy while the MR holds it
 */
static void mr_with_dmah(int fd, __u32 pd, const char *name, int mem)
{
	struct dmah_attrs a = no_attrs;
	char what[48];
	struct mr mr;
	__u32 h;
	void *buf;
	int ret;

	buf = pattern_buf(MR_LEN, mem + 1);
	if (!buf) {
		fail("mr %s: mmap failed", name);
		return;
	}
	a.cpu = cpu_ok;
	a.mem = mem;
	a.ph = 1;
	snprintf(what, sizeof(what), "%s_alloc_dmah", name);
	if (expect("mr", what, alloc_dmah(fd, &a, &h), 0))
		goto out;
	snprintf(what, sizeof(what), "%s_reg", name);
	ret = expect("mr", what, reg_mr(fd, pd, h, buf, MR_LEN, &mr), 0);
	if (!ret) {
		printf("mr %s lkey 0x%x rkey 0x%x length %d\n", name, mr.lkey,
		       mr.rkey, MR_LEN);
		snprintf(what, sizeof(what), "%s_free_dmah_busy", name);
		expect("mr", what, free_dmah(fd, h), EBUSY);
		snprintf(what, sizeof(what), "%s_dereg", name);
		expect("mr", what, dereg_mr(fd, mr.handle), 0);
		snprintf(what, sizeof(what), "%s_dereg_again", name);
		expect("mr", what, dereg_mr(fd, mr.handle), ENOENT);
	}
	snprintf(what, sizeof(what), "%s_free_dmah", name);
	expect("mr", what, free_dmah(fd, h), 0);
	snprintf(what, sizeof(what), "%s_free_dmah_again", name);
	expect("mr", what, free_dmah(fd, h), ENOENT);
	if (!pattern_ok(buf, MR_LEN, mem + 1))
		fail("mr %s: the buffer's pattern changed", name);
out:
	munmap(buf, MR_LEN);
}

/*
 * A dma-buf MR with a handle: a memfd's pages exported by udmabuf,
 * registered through UVERBS_METHOD_REG_MR's FD attributes (the driver's
 * reg_user_mr_dmabuf) with a persistent-memory handle, which it holds
 * (EBUSY) until it is deregistered. Skipped without /dev/udmabuf.
 */
static void mr_dmabuf(int fd, __u32 pd)
{
	struct udmabuf_create c = {
		.flags = UDMABUF_FLAGS_CLOEXEC,
		.size = MR_LEN,
	};
	struct dmah_attrs a = no_attrs;
	int ufd, memfd = -1, dfd = -1, idx, ret;
	struct mr mr;
	struct req r;
	__u32 h;

	ufd = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (ufd < 0) {
		printf("mr dmabuf skipped (no /dev/udmabuf)\n");
		return;
	}
	memfd = memfd_create("rsim_dmah", MFD_ALLOW_SEALING);
	if (memfd < 0 || ftruncate(memfd, MR_LEN) ||
	    fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
		fail("mr dmabuf: memfd: %s", strerror(errno));
		goto out;
	}
	c.memfd = memfd;
	dfd = ioctl(ufd, UDMABUF_CREATE, &c);
	if (dfd < 0) {
		fail("mr dmabuf: UDMABUF_CREATE: %s", strerror(errno));
		goto out;
	}
	a.cpu = cpu_ok;
	a.mem = TPH_MEM_PM;
	a.ph = 2;
	if (expect("mr", "dmabuf_alloc_dmah", alloc_dmah(fd, &a, &h), 0))
		goto out;
	req_init(&r, UVERBS_OBJECT_MR, UVERBS_METHOD_REG_MR);
	idx = req_idr(&r, UVERBS_ATTR_REG_MR_HANDLE, 0);
	req_idr(&r, UVERBS_ATTR_REG_MR_PD_HANDLE, pd);
	req_idr(&r, UVERBS_ATTR_REG_MR_DMA_HANDLE, h);
	req_in64(&r, UVERBS_ATTR_REG_MR_IOVA, 0x100000);
	req_in64(&r, UVERBS_ATTR_REG_MR_LENGTH, MR_LEN);
	req_in64(&r, UVERBS_ATTR_REG_MR_FD_OFFSET, 0);
	/* a raw fd: the value in data, no length */
	req_attr(&r, UVERBS_ATTR_REG_MR_FD, 0, dfd, 0);
	req_in64(&r, UVERBS_ATTR_REG_MR_ACCESS_FLAGS, MR_ACCESS);
	req_out(&r, UVERBS_ATTR_REG_MR_RESP_LKEY, &mr.lkey, sizeof(mr.lkey));
	req_out(&r, UVERBS_ATTR_REG_MR_RESP_RKEY, &mr.rkey, sizeof(mr.rkey));
	ret = req_run(fd, &r);
	if (!expect("mr", "dmabuf_reg", ret, 0)) {
		mr.handle = attr_data(&r, idx);
		printf("mr dmabuf lkey 0x%x rkey 0x%x length %d\n", mr.lkey,
		       mr.rkey, MR_LEN);
		expect("mr", "dmabuf_free_dmah_busy", free_dmah(fd, h), EBUSY);
		expect("mr", "dmabuf_dereg", dereg_mr(fd, mr.handle), 0);
	}
	expect("mr", "dmabuf_free_dmah", free_dmah(fd, h), 0);
out:
	if (dfd >= 0)
		close(dfd);
	if (memfd >= 0)
		close(memfd);
	close(ufd);
}

/* a user MR with no handle over patterned memory: ib_umem's path */
static void mr_plain(int fd, __u32 pd)
{
	struct mr mr;
	void *buf;

	buf = pattern_buf(MR_LEN, 5);
	if (!buf) {
		fail("mr plain: mmap failed%s", "");
		return;
	}
	if (!expect("mr", "plain_reg", reg_mr(fd, pd, NONE, buf, MR_LEN, &mr),
		    0)) {
		printf("mr plain lkey 0x%x rkey 0x%x length %d\n", mr.lkey,
		       mr.rkey, MR_LEN);
		expect("mr", "plain_dereg", dereg_mr(fd, mr.handle), 0);
	}
	if (!pattern_ok(buf, MR_LEN, 5))
		fail("mr plain: the buffer's pattern changed%s", "");
	munmap(buf, MR_LEN);
}

/*
 * Registrations that fail, with a handle: before the driver (the parser,
 * the core's checks), in the driver (unmapped memory), and after it (the
 * keys cannot be written back, so the core aborts the new MR). None may
 * keep a reference on the handle.
 */
static void mr_bad(int fd, __u32 pd)
{
	struct dmah_attrs a = no_attrs;
	struct mr_bend b;
	struct mr mr;
	void *buf, *gone;
	__u32 h;

	buf = pattern_buf(MR_LEN, 11);
	gone = pattern_buf(MR_LEN, 12);
	if (!buf || !gone) {
		fail("mr bad: mmap failed%s", "");
		return;
	}
	munmap(gone, MR_LEN);
	a.cpu = cpu_ok;
	a.mem = TPH_MEM_VM;
	a.ph = 0;
	if (expect("mr", "bad_alloc_dmah", alloc_dmah(fd, &a, &h), 0))
		goto out;
	memset(&b, 0, sizeof(b));
	b.lkey_len = 2;
	expect("mr", "reg_lkey_len2", reg_mr_bent(fd, pd, h, buf, MR_LEN, &mr,
						  &b), EINVAL);
	memset(&b, 0, sizeof(b));
	b.iova_delta = 8;
	expect("mr", "reg_iova_page_offset_differs",
	       reg_mr_bent(fd, pd, h, buf, MR_LEN, &mr, &b), EINVAL);
	expect("mr", "reg_unmapped_memory",
	       reg_mr(fd, pd, h, gone, MR_LEN, &mr), EFAULT);
	memset(&b, 0, sizeof(b));
	b.lkey_ptr = 8;
	expect("mr", "reg_lkey_unwritable",
	       reg_mr_bent(fd, pd, h, buf, MR_LEN, &mr, &b), EFAULT);
	expect("mr", "bad_free_dmah", free_dmah(fd, h), 0);
out:
	munmap(buf, MR_LEN);
}

/* a user CQ, created and destroyed (the ioctl and the write() command) */
static void user_cq(int fd)
{
	struct ib_uverbs_destroy_cq_resp dresp;
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_create_cq cmd;
	} c;
	struct ib_uverbs_create_cq_resp resp;
	__u32 cqe = 16, vec = 0, rcqe = 0;
	__u64 user_handle = 1;
	struct req r;
	int idx, ret;

	req_init(&r, UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_CREATE);
	idx = req_idr(&r, UVERBS_ATTR_CREATE_CQ_HANDLE, 0);
	req_in(&r, UVERBS_ATTR_CREATE_CQ_CQE, &cqe, sizeof(cqe));
	req_in64(&r, UVERBS_ATTR_CREATE_CQ_USER_HANDLE, user_handle);
	req_in(&r, UVERBS_ATTR_CREATE_CQ_COMP_VECTOR, &vec, sizeof(vec));
	req_out(&r, UVERBS_ATTR_CREATE_CQ_RESP_CQE, &rcqe, sizeof(rcqe));
	ret = expect("cq", "create_ioctl", req_run(fd, &r), 0);
	if (!ret) {
		req_init(&r, UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_DESTROY);
		req_idr(&r, UVERBS_ATTR_DESTROY_CQ_HANDLE, attr_data(&r, idx));
		req_out(&r, UVERBS_ATTR_DESTROY_CQ_RESP, &dresp, sizeof(dresp));
		req_run(fd, &r);
	}

	memset(&c, 0, sizeof(c));
	c.hdr.command = IB_USER_VERBS_CMD_CREATE_CQ;
	c.hdr.in_words = sizeof(c) / 4;
	c.hdr.out_words = sizeof(resp) / 4;
	c.cmd.response = (uintptr_t)&resp;
	c.cmd.user_handle = user_handle;
	c.cmd.cqe = cqe;
	c.cmd.comp_channel = -1;
	ret = write(fd, &c, sizeof(c)) == sizeof(c) ? 0 : errno;
	ret = expect("cq", "create_write", ret, 0);
	if (!ret) {
		req_init(&r, UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_DESTROY);
		req_idr(&r, UVERBS_ATTR_DESTROY_CQ_HANDLE, resp.cq_handle);
		req_out(&r, UVERBS_ATTR_DESTROY_CQ_RESP, &dresp, sizeof(dresp));
		req_run(fd, &r);
	}
}

/* malformed requests: each refused with an errno */
static void bad_ioctls(int fd, __u32 h)
{
	struct req r;
	__u32 saved = driver_id;

	req_init(&r, UVERBS_OBJECT_DMAH, UVERBS_METHOD_DMAH_FREE);
	req_idr(&r, UVERBS_ATTR_FREE_DMA_HANDLE, h);
	hdr(&r)->length = sizeof(struct ib_uverbs_ioctl_hdr);	/* no room */
	expect("ioctl", "hdr_length_short", req_send(fd, &r), EINVAL);
	hdr(&r)->length = sizeof(struct ib_uverbs_ioctl_hdr) +
			  2 * sizeof(struct ib_uverbs_attr);
	expect("ioctl", "hdr_length_long", req_send(fd, &r), EINVAL);
	hdr(&r)->length = 4;
	hdr(&r)->num_attrs = 0;
	expect("ioctl", "hdr_length_4", req_send(fd, &r), EINVAL);

	req_init(&r, UVERBS_OBJECT_DMAH, UVERBS_METHOD_DMAH_FREE);
	req_idr(&r, UVERBS_ATTR_FREE_DMA_HANDLE, h);
	hdr(&r)->reserved1 = 1;
	expect("ioctl", "hdr_reserved_set", req_run(fd, &r), EPROTONOSUPPORT);
	req_init(&r, UVERBS_OBJECT_DMAH, UVERBS_METHOD_DMAH_FREE);
	req_idr(&r, UVERBS_ATTR_FREE_DMA_HANDLE, h);
	hdr(&r)->driver_id = saved + 1;
	expect("ioctl", "wrong_driver_id", req_run(fd, &r), EINVAL);
	req_init(&r, UVERBS_OBJECT_DMAH, 0x77);
	expect("ioctl", "unknown_method", req_run(fd, &r), EPROTONOSUPPORT);
	/* the mandatory handle missing */
	req_init(&r, UVERBS_OBJECT_DMAH, UVERBS_METHOD_DMAH_FREE);
	expect("ioctl", "free_without_handle", req_run(fd, &r), EINVAL);
	/* an unknown id in the core's namespace, flagged mandatory */
	req_init(&r, UVERBS_OBJECT_DMAH, UVERBS_METHOD_DMAH_FREE);
	req_idr(&r, UVERBS_ATTR_FREE_DMA_HANDLE, h);
	req_attr(&r, 0x0042, 0, 0, UVERBS_ATTR_F_MANDATORY);
	expect("ioctl", "unknown_mandatory_attr", req_run(fd, &r),
	       EPROTONOSUPPORT);
	/* the driver's namespace: rdmasim defines no attribute there */
	req_init(&r, UVERBS_OBJECT_DMAH, UVERBS_METHOD_DMAH_FREE);
	req_idr(&r, UVERBS_ATTR_FREE_DMA_HANDLE, h);
	req_attr(&r, UVERBS_ID_DRIVER_NS_WITH_UHW + 5, 0, 0,
		 UVERBS_ATTR_F_MANDATORY);
	expect("ioctl", "unknown_driver_attr", req_run(fd, &r),
	       EPROTONOSUPPORT);
	/* an IDR attribute with a length */
	req_init(&r, UVERBS_OBJECT_DMAH, UVERBS_METHOD_DMAH_FREE);
	req_attr(&r, UVERBS_ATTR_FREE_DMA_HANDLE, 4, h, UVERBS_ATTR_F_MANDATORY);
	expect("ioctl", "idr_with_length", req_run(fd, &r), EINVAL);
	/* the header itself unreadable */
	expect("ioctl", "hdr_bad_pointer",
	       ioctl(fd, RDMA_VERBS_IOCTL, 8) ? errno : 0, EFAULT);
	/* a handle id that is no object, a negative id */
	expect("ioctl", "free_unknown_handle", free_dmah(fd, 0x7fff), ENOENT);
	req_init(&r, UVERBS_OBJECT_DMAH, UVERBS_METHOD_DMAH_FREE);
	req_attr(&r, UVERBS_ATTR_FREE_DMA_HANDLE, 0, (__u64)-1,
		 UVERBS_ATTR_F_MANDATORY);
	expect("ioctl", "free_negative_handle", req_run(fd, &r), EINVAL);
}

/*
 * A second open of the device: its own context; the first one's handle
 * ids mean nothing there (or another object)
 */
static void other_context(const char *path, __u32 h1, void *buf)
{
	struct dmah_attrs a = no_attrs;
	__u64 core = 0;
	__u32 ncomp = 0, pd2, h2;
	struct mr mr;
	struct req r;
	int fd2, ret;

	fd2 = open(path, O_RDWR | O_CLOEXEC);
	if (fd2 < 0) {
		fail("context2: open: %s", strerror(errno));
		return;
	}
	/* no context yet: objects need one */
	a.ph = 0;
	expect("ctx2", "dmah_without_context", alloc_dmah(fd2, &a, &h2),
	       EINVAL);
	/* an output nowhere: no context is left half made */
	req_init(&r, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_GET_CONTEXT);
	req_attr(&r, UVERBS_ATTR_GET_CONTEXT_NUM_COMP_VECTORS, 4, 8, 0);
	expect("ctx2", "get_context_bad_pointer", req_run(fd2, &r), EFAULT);
	if (expect("ctx2", "get_context", get_context(fd2, &ncomp, &core), 0))
		goto out;
	expect("ctx2", "get_context_twice", get_context_write(fd2), EINVAL);
	if (leaky)
		expect("ctx2", "get_context_twice_ioctl",
		       get_context(fd2, &ncomp, &core), EINVAL);
	if (expect("ctx2", "alloc_pd", alloc_pd(fd2, &pd2), 0))
		goto out;
	/* context 1's handle: not in this file (pd2 is its only object) */
	if (h1 == pd2)
		fail("ctx2: handle %s collides with its PD", "ids");
	expect("ctx2", "free_dmah_of_ctx1", free_dmah(fd2, h1), ENOENT);
	expect("ctx2", "reg_mr_with_dmah_of_ctx1",
	       reg_mr(fd2, pd2, h1, buf, MR_LEN, &mr), ENOENT);
	/* an id of this file's that is a PD, not a DMA handle */
	expect("ctx2", "reg_mr_with_pd_as_dmah",
	       reg_mr(fd2, pd2, pd2, buf, MR_LEN, &mr), EINVAL);
	expect("ctx2", "free_pd_as_dmah", free_dmah(fd2, pd2), EINVAL);
	/* left for close() to clean up: a handle, an MR holding it, a PD */
	a.cpu = cpu_ok;
	a.mem = TPH_MEM_PM;
	a.ph = 3;
	if (!expect("ctx2", "alloc_dmah", alloc_dmah(fd2, &a, &h2), 0)) {
		ret = reg_mr(fd2, pd2, h2, buf, MR_LEN, &mr);
		expect("ctx2", "reg_mr_left_for_close", ret, 0);
	}
out:
	expect("ctx2", "close", close(fd2) ? errno : 0, 0);
}

int main(int argc, char **argv)
{
	const char *ibdev = "rdmasim0";
	char path[64];
	struct dmah_attrs a = no_attrs;
	__u32 ncomp = 0, pd, h;
	__u64 core = 0;
	void *buf;
	int fd, opt, cpu, ret;

	while ((opt = getopt(argc, argv, "d:L")) != -1) {
		if (opt == 'd') {
			ibdev = optarg;
		} else if (opt == 'L') {
			leaky = 1;
		} else {
			fprintf(stderr, "usage: %s [-d ibdev] [-L]\n", argv[0]);
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

	fd = open_uverbs(ibdev, path, sizeof(path));
	if (fd < 0) {
		printf("FAIL open: no uverbs device for %s (%s)\n", ibdev,
		       strerror(errno));
		return 1;
	}
	if (probe_driver_id(fd)) {
		printf("FAIL open: %s accepts no driver id\n", path);
		return 1;
	}
	printf("device %s %s driver_id %u\n", ibdev, path, driver_id);
	if (expect("ctx", "get_context", get_context(fd, &ncomp, &core), 0))
		return 1;
	printf("ctx num_comp_vectors %u core_support 0x%llx\n", ncomp,
	       (unsigned long long)core);
	if (expect("ctx", "alloc_pd", alloc_pd(fd, &pd), 0))
		return 1;

	mr_plain(fd, pd);

	/* one handle kept for the bad requests and the other context */
	a.ph = 0;
	ret = alloc_dmah(fd, &a, &h);
	if (ret == EPROTONOSUPPORT) {
		/* the core exposes the object only if the driver has both ops */
		printf("FAIL dmah: %s has no DMA handles (EPROTONOSUPPORT)\n",
		       ibdev);
		failures++;
	} else if (!expect("dmah", "kept", ret, 0)) {
		dmah_table(fd);
		dmah_outside_affinity(fd);
		mr_with_dmah(fd, pd, "vm", TPH_MEM_VM);
		mr_with_dmah(fd, pd, "pm", TPH_MEM_PM);
		mr_dmabuf(fd, pd);
		mr_bad(fd, pd);
		bad_ioctls(fd, h);
		buf = pattern_buf(MR_LEN, 7);
		if (!buf) {
			fail("ctx2: mmap failed%s", "");
		} else {
			other_context(path, h, buf);
			munmap(buf, MR_LEN);
		}
		expect("cleanup", "free_dmah", free_dmah(fd, h), 0);
	}
	user_cq(fd);

	expect("cleanup", "free_pd", free_pd(fd, pd), 0);
	expect("cleanup", "close", close(fd) ? errno : 0, 0);
	printf("result %s (%d failure%s)\n", failures ? "FAIL" : "PASS",
	       failures, failures == 1 ? "" : "s");
	return failures ? 1 : 0;
}
