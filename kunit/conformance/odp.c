// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdma_conformance_odp: on-demand paging, on a device that claims it
 * (IBK_ON_DEMAND_PAGING and the RC capability of the operation). The
 * memory is the test's own user memory (kunit_vm_mmap(): an mm of its
 * own), registered with ib_reg_user_mr(IB_ACCESS_ON_DEMAND) as uverbs
 * registers a process's, and reached by RDMA WRITEs from a kernel buffer
 * over a loopback RC connection. Nothing is pinned: the device faults
 * the pages in when a WRITE needs them, and must follow the process's
 * address space as it changes (the core's mmu_interval_notifier).
 */

#include <linux/mman.h>
#include <linux/uaccess.h>
#include <rdma/ib_verbs.h>
#include <rdmasim/kunit-mm.h>

#include "conformance.h"

#define RCF_SRC_ODP	"ib_umem_odp.h; ibv_reg_mr(3) IBV_ACCESS_ON_DEMAND"
#define RCF_SRC_ODP_IMPLICIT	"ibv_reg_mr(3): implicit ODP (NULL, SIZE_MAX)"

#define RCF_ODP_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_ON_DEMAND)
#define RCF_ODP_PAGES	3

/**
 * struct rcf_odp - an ODP MR, a connection to reach it and a source
 * @c: the connection; the requester writes into the MR
 * @src: the requester's buffer, a pattern in it
 * @uaddr: the user memory (RCF_ODP_PAGES pages, never touched before)
 * @mr: the ODP MR over it, or NULL (implicit rules make their own)
 */
struct rcf_odp {
	struct rcf_conn *c;
	struct rcf_buf *src;
	unsigned long uaddr;
	struct ib_mr *mr;
};

static void rcf_odp_mr_free(void *mr)
{
	ib_dereg_mr(mr);
}

/* skips unless the device has ODP and RC WRITEs with it */
static void rcf_need_odp(struct kunit *test)
{
	const struct ib_device_attr *a = &rcf_target(test)->attr;

	if (!(a->kernel_cap_flags & IBK_ON_DEMAND_PAGING) ||
	    !(a->odp_caps.general_caps & IB_ODP_SUPPORT))
		kunit_skip(test, "no on-demand paging (IBK_ON_DEMAND_PAGING)");
	if (!(a->odp_caps.per_transport_caps.rc_odp_caps &
	      IB_ODP_SUPPORT_WRITE))
		kunit_skip(test, "no RC RDMA WRITE with on-demand paging");
}

/* an ODP MR in @pd over [@start, @start + @len), freed with the test */
static struct ib_mr *rcf_odp_reg(struct kunit *test, struct ib_pd *pd,
				 u64 start, u64 len, u64 iova)
{
	struct ib_mr *mr = ib_reg_user_mr(pd, start, len, iova,
					  RCF_ODP_ACCESS);

	if (IS_ERR(mr)) {
		RCF_FAIL(test, "ib_reg_user_mr(IB_ACCESS_ON_DEMAND): %ld",
			 PTR_ERR(mr));
		return NULL;
	}
	if (kunit_add_action_or_reset(test, rcf_odp_mr_free, mr))
		return NULL;
	return mr;
}

static struct rcf_odp *rcf_odp_new(struct kunit *test, bool with_mr)
{
	struct rcf_target *t = rcf_target(test);
	struct ib_pd *pd_a, *pd_b;
	struct rcf_odp *o;
	int i;

	rcf_need_odp(test);
	o = kunit_kzalloc(test, sizeof(*o), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, o);
	pd_b = rcf_pd(test);
	pd_a = t->peer ? rcf_pd_on(test, t->peer->dev) : pd_b;
	o->src = rcf_buf_new(test, pd_a->device, RCF_ODP_PAGES * PAGE_SIZE, 0);
	for (i = 0; i < RCF_ODP_PAGES * PAGE_SIZE; i++)
		o->src->va[i] = i * 7 + 3;
	rcf_buf_sync_dev(o->src);
	o->uaddr = rsim_kunit_vm_mmap(test, RCF_ODP_PAGES * PAGE_SIZE,
				      PROT_READ | PROT_WRITE);
	if (with_mr) {
		o->mr = rcf_odp_reg(test, pd_b, o->uaddr,
				    RCF_ODP_PAGES * PAGE_SIZE, o->uaddr);
		KUNIT_ASSERT_NOT_NULL(test, o->mr);
	}
	o->c = rcf_conn_new(test, pd_a, pd_b);
	return o;
}

/* a WRITE of @len from @soff of the source to @raddr: its status, or -1 */
static int rcf_odp_write(struct kunit *test, struct rcf_odp *o, u32 soff,
			 u32 len, u64 raddr, u32 rkey)
{
	struct ib_wc wc;

	if (rcf_post_rdma(o->c->a.qp, IB_WR_RDMA_WRITE, o->src->dma + soff,
			  o->c->a.pd->local_dma_lkey, len, raddr, rkey, 1) ||
	    !rcf_poll_one(o->c->a.cq, &wc))
		return -1;
	return wc.status;
}

/* the user memory at @off holds the source's bytes from @soff */
static bool rcf_odp_landed(struct kunit *test, struct rcf_odp *o, u32 off,
			   u32 soff, u32 len)
{
	u8 *got = kunit_kmalloc(test, len, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, got);
	if (copy_from_user(got, (void __user *)(o->uaddr + off), len))
		return false;
	return !memcmp(got, o->src->va + soff, len);
}

static void rcf_test_odp_write_first_touch(struct kunit *test)
{
	struct rcf_odp *o;
	int st;

	RCF_RULE(test, "a WRITE into an ODP MR's untouched page faults it in and lands",
		 RCF_SRC_ODP);
	o = rcf_odp_new(test, true);
	st = rcf_odp_write(test, o, 0, PAGE_SIZE, o->mr->iova, o->mr->rkey);
	if (st != IB_WC_SUCCESS)
		RCF_FAIL(test, "WRITE of a page into an untouched ODP MR: status %d",
			 st);
	else if (!rcf_odp_landed(test, o, 0, 0, PAGE_SIZE))
		RCF_FAIL(test, "the WRITE's bytes are not in the process's page");
}

static void rcf_test_odp_write_unaligned(struct kunit *test)
{
	struct rcf_odp *o;
	u32 len = PAGE_SIZE + 200;
	int st;

	RCF_RULE(test, "a WRITE from inside one ODP page into the next lands byte for byte",
		 RCF_SRC_ODP);
	o = rcf_odp_new(test, true);
	st = rcf_odp_write(test, o, 0, len, o->mr->iova + 100, o->mr->rkey);
	if (st != IB_WC_SUCCESS)
		RCF_FAIL(test, "WRITE of %u bytes at offset 100: status %d", len,
			 st);
	else if (!rcf_odp_landed(test, o, 100, 0, len))
		RCF_FAIL(test, "the bytes are not at offset 100 on (the page offset ignored?)");
}

static void rcf_test_odp_write_into_hole(struct kunit *test)
{
	struct rcf_odp *o;
	int st;

	RCF_RULE(test, "a WRITE into an ODP page the process unmapped fails",
		 RCF_SRC_ODP);
	o = rcf_odp_new(test, true);
	/* faulted in first: the unmap is an invalidation, then a hole */
	st = rcf_odp_write(test, o, 0, PAGE_SIZE, o->mr->iova + PAGE_SIZE,
			   o->mr->rkey);
	KUNIT_ASSERT_EQ(test, st, IB_WC_SUCCESS);
	KUNIT_ASSERT_EQ(test, vm_munmap(o->uaddr + PAGE_SIZE, PAGE_SIZE), 0);
	st = rcf_odp_write(test, o, 0, PAGE_SIZE, o->mr->iova + PAGE_SIZE,
			   o->mr->rkey);
	if (st == IB_WC_SUCCESS)
		RCF_FAIL(test, "WRITE into an unmapped page of the MR succeeded");
	else if (st < 0)
		RCF_FAIL(test, "WRITE into an unmapped page: no completion");
}

static void rcf_test_odp_write_after_remap(struct kunit *test)
{
	unsigned long m;
	struct rcf_odp *o;
	int st;

	RCF_RULE(test, "new memory mapped over an ODP range: a WRITE lands in the new pages",
		 RCF_SRC_ODP);
	o = rcf_odp_new(test, true);
	st = rcf_odp_write(test, o, 0, PAGE_SIZE, o->mr->iova, o->mr->rkey);
	KUNIT_ASSERT_EQ(test, st, IB_WC_SUCCESS);
	/* new anonymous memory in its place: zeros, other pages */
	m = vm_mmap(NULL, o->uaddr, RCF_ODP_PAGES * PAGE_SIZE,
		    PROT_READ | PROT_WRITE,
		    MAP_ANONYMOUS | MAP_PRIVATE | MAP_FIXED, 0);
	KUNIT_ASSERT_EQ(test, m, o->uaddr);
	st = rcf_odp_write(test, o, PAGE_SIZE, PAGE_SIZE, o->mr->iova,
			   o->mr->rkey);
	if (st != IB_WC_SUCCESS)
		RCF_FAIL(test, "WRITE after the range was mapped anew: status %d",
			 st);
	else if (!rcf_odp_landed(test, o, 0, PAGE_SIZE, PAGE_SIZE))
		RCF_FAIL(test, "the WRITE went to the pages that were unmapped, not the new ones");
}

static void rcf_test_odp_implicit_bounds(struct kunit *test)
{
	const struct ib_device_attr *a = &rcf_target(test)->attr;
	struct rcf_odp *o;
	struct ib_mr *mr;
	int st;

	RCF_RULE(test, "an implicit ODP MR reaches the process's memory, nothing past it",
		 RCF_SRC_ODP_IMPLICIT);
	rcf_need_odp(test);
	if (!(a->odp_caps.general_caps & IB_ODP_SUPPORT_IMPLICIT))
		kunit_skip(test, "no implicit ODP (IB_ODP_SUPPORT_IMPLICIT)");
	o = rcf_odp_new(test, false);
	mr = rcf_odp_reg(test, o->c->b.pd, 0, U64_MAX, 0);
	KUNIT_ASSERT_NOT_NULL(test, mr);
	st = rcf_odp_write(test, o, 0, PAGE_SIZE, o->uaddr, mr->rkey);
	if (st != IB_WC_SUCCESS)
		RCF_FAIL(test, "WRITE through the implicit MR: status %d", st);
	else if (!rcf_odp_landed(test, o, 0, 0, PAGE_SIZE))
		RCF_FAIL(test, "the WRITE through the implicit MR did not land");
	st = rcf_odp_write(test, o, 0, PAGE_SIZE, U64_MAX - PAGE_SIZE + 1,
			   mr->rkey);
	if (st == IB_WC_SUCCESS)
		RCF_FAIL(test, "WRITE into the last page of a 64-bit address space succeeded");
}

static struct kunit_case rcf_odp_cases[] = {
	RCF_CASE(odp_write_first_touch),
	RCF_CASE(odp_write_unaligned),
	RCF_CASE(odp_write_into_hole),
	RCF_CASE(odp_write_after_remap),
	RCF_CASE(odp_implicit_bounds),
	{}
};

struct kunit_suite rcf_odp_suite = {
	.name = "rdma_conformance_odp",
	.test_cases = rcf_odp_cases,
};
