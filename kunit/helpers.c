// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim KUnit fixtures.
 */

#include <kunit/resource.h>
#include <linux/delay.h>
#include <linux/mman.h>
#include <linux/sched/mm.h>

#include "helpers.h"

/* Test devices use ids from 1000 so they never meet the module's own. */
static atomic_t rsim_kunit_next_id = ATOMIC_INIT(1000);

u32 rsim_kunit_new_id(void)
{
	return atomic_inc_return(&rsim_kunit_next_id);
}

static void rsim_kunit_dev_del(void *data)
{
	rsim_dev_del(((struct rsim_dev *)data)->id);
}

/**
 * rsim_kunit_dev() - create a device that goes away with the test
 * @test: the test
 * @cfg: configuration, or NULL for the defaults
 *
 * Return: the device; the test is aborted if creation fails.
 */
struct rsim_dev *rsim_kunit_dev(struct kunit *test,
				const struct rsim_dev_config *cfg)
{
	struct rsim_dev_config def;
	struct rsim_dev *rsim;

	if (!cfg) {
		rsim_default_config(&def);
		cfg = &def;
	}
	rsim = rsim_dev_new(rsim_kunit_new_id(), cfg);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, rsim);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, rsim_kunit_dev_del,
						  rsim));
	return rsim;
}

/*
 * One default device serves most cases: registering a device costs seconds
 * on the debug kernel (the MAD layer alone maps 1280 receive buffers).
 */
static struct rsim_dev *rsim_kunit_shared;
static struct rsim_kunit_counts rsim_kunit_suite_base;

int rsim_kunit_shared_create(void)
{
	struct rsim_dev_config cfg;

	rsim_default_config(&cfg);
	rsim_kunit_shared = rsim_dev_new(rsim_kunit_new_id(), &cfg);
	if (IS_ERR(rsim_kunit_shared)) {
		int err = PTR_ERR(rsim_kunit_shared);

		rsim_kunit_shared = NULL;
		return err;
	}
	return 0;
}

void rsim_kunit_shared_destroy(void)
{
	if (rsim_kunit_shared)
		rsim_dev_del(rsim_kunit_shared->id);
	rsim_kunit_shared = NULL;
}

/**
 * rsim_kunit_shared_dev() - the device shared by the suites
 * @test: the test
 *
 * Return: the device; aborts the test if the module could not create it.
 */
struct rsim_dev *rsim_kunit_shared_dev(struct kunit *test)
{
	KUNIT_ASSERT_NOT_NULL(test, rsim_kunit_shared);
	return rsim_kunit_shared;
}

/* .suite_init of every suite: note where the shared device's counts are */
/*
 * The core's own clients release objects on the shared device after a
 * suite's last case has returned: the MAD layer destroys the AH of a
 * response when its send completes (on the MAD port's workqueue), and a
 * port event reaches the SA from work on ib_wq, which then replaces its AH
 * to the SM (update_sm_ah()). Before a suite's counts are compared, ib_wq
 * is flushed (twice: the event's work queues the SA's) and the counts are
 * waited for, at most RSIM_KUNIT_SETTLE_MS: a real leftover still fails,
 * later. Seen on 6.12: one AH more at the end of rdmasim_ud, its MAD
 * replies' AH, gone during rdmasim_mad.
 */
#define RSIM_KUNIT_SETTLE_MS	10000

static bool rsim_kunit_counts_back(struct rsim_dev *rsim,
				   const struct rsim_kunit_counts *before)
{
	int i;

	for (i = 0; i < RSIM_RES_NR; i++)
		if (rsim_res_count(rsim, i) != before->res[i])
			return false;
	return true;
}

static void rsim_kunit_settle(struct rsim_dev *rsim,
			      const struct rsim_kunit_counts *before)
{
	unsigned long end = jiffies + msecs_to_jiffies(RSIM_KUNIT_SETTLE_MS);

	flush_workqueue(ib_wq);
	flush_workqueue(ib_wq);
	while (before && !rsim_kunit_counts_back(rsim, before) &&
	       time_before(jiffies, end))
		usleep_range(5000, 10000);
}

int rsim_kunit_suite_init(struct kunit_suite *suite)
{
	if (!rsim_kunit_shared)
		return -ENODEV;
	rsim_kunit_settle(rsim_kunit_shared, NULL);
	rsim_kunit_snapshot(rsim_kunit_shared, &rsim_kunit_suite_base);
	return 0;
}

/* The last case of every suite: nothing was left on the shared device. */
void rsim_kunit_test_no_leftovers(struct kunit *test)
{
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);

	rsim_kunit_settle(rsim, &rsim_kunit_suite_base);
	rsim_kunit_expect_counts(test, rsim, &rsim_kunit_suite_base);
}

static void rsim_kunit_pd_free(void *pd)
{
	ib_dealloc_pd(pd);
}

struct ib_pd *rsim_kunit_pd(struct kunit *test, struct rsim_dev *rsim)
{
	struct ib_pd *pd = ib_alloc_pd(&rsim->ibdev, 0);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pd);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, rsim_kunit_pd_free,
						  pd));
	return pd;
}

static void rsim_kunit_cq_free(void *cq)
{
	ib_free_cq(cq);
}

struct ib_cq *rsim_kunit_cq(struct kunit *test, struct rsim_dev *rsim,
			    int cqe)
{
	struct ib_cq *cq = ib_alloc_cq(&rsim->ibdev, NULL, cqe, 0,
				       IB_POLL_DIRECT);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cq);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, rsim_kunit_cq_free,
						  cq));
	return cq;
}

static void rsim_kunit_mr_free(void *mr)
{
	ib_dereg_mr(mr);
}

struct ib_mr *rsim_kunit_mr(struct kunit *test, struct ib_pd *pd,
			    enum ib_mr_type type, u32 max_num_sg)
{
	struct ib_mr *mr = ib_alloc_mr(pd, type, max_num_sg);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mr);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, rsim_kunit_mr_free,
						  mr));
	return mr;
}

/**
 * rsim_kunit_mr_release() - deregister an MR from rsim_kunit_user_mr() now
 * @test: the test
 * @mr: the MR
 */
void rsim_kunit_mr_release(struct kunit *test, struct ib_mr *mr)
{
	kunit_release_action(test, rsim_kunit_mr_free, mr);
}

#if RSIM_HAVE_DMAH_OPS
static void rsim_kunit_dmah_free(void *arg)
{
	struct ib_dmah *dmah = arg;

	if (!dmah->device->ops.dealloc_dmah(dmah, NULL))
		kfree(dmah);
}

/**
 * rsim_kunit_dmah() - a DMA handle, as the core's uverbs handler makes one
 * @test: the test; the handle is freed with it
 * @rsim: device
 * @fields: BIT(IB_DMAH_*_EXISTS) of the attributes given
 * @cpu: CPU id (if given)
 * @mem_type: enum tph_mem_type value (if given)
 * @ph: processing hint (if given)
 *
 * Return: the handle, or ERR_PTR() of alloc_dmah's errno.
 */
struct ib_dmah *rsim_kunit_dmah(struct kunit *test, struct rsim_dev *rsim,
				u8 fields, u32 cpu, u32 mem_type, u8 ph)
{
	struct ib_device *ibdev = &rsim->ibdev;
	struct ib_dmah *dmah = rdma_zalloc_drv_obj(ibdev, ib_dmah);
	int err;

	KUNIT_ASSERT_NOT_NULL(test, dmah);
	dmah->device = &rsim->ibdev;
	dmah->valid_fields = fields;
	dmah->cpu_id = cpu;
	dmah->mem_type = mem_type;
	dmah->ph = ph;
	err = rsim->ibdev.ops.alloc_dmah(dmah, NULL);
	if (err) {
		kfree(dmah);
		return ERR_PTR(err);
	}
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, rsim_kunit_dmah_free,
						  dmah));
	return dmah;
}
#endif

/**
 * rsim_kunit_user_mr() - an MR over user memory, as ib_reg_user_mr() makes
 *	one, with a DMA handle where the kernel has them
 * @test: the test; memory and MR go with it
 * @pd: its PD
 * @len: bytes
 * @access: IB_ACCESS_*
 * @dmah: the handle, or NULL
 * @uaddr: the user address of the memory (mapped in the test's mm)
 *
 * Return: the MR, or ERR_PTR() of reg_user_mr's errno.
 */
struct ib_mr *rsim_kunit_user_mr(struct kunit *test, struct ib_pd *pd,
				 size_t len, int access, struct ib_dmah *dmah,
				 unsigned long *uaddr)
{
	struct ib_mr *mr;

	*uaddr = rsim_kunit_vm_mmap(test, len, PROT_READ | PROT_WRITE);
	mr = pd->device->ops.reg_user_mr(pd, *uaddr, len, *uaddr, access,
					 RSIM_DMAH_ARG_OF(dmah) NULL);
	if (IS_ERR(mr))
		return mr;
	/* what ib_reg_user_mr() does after the driver */
	mr->device = pd->device;
	mr->type = IB_MR_TYPE_USER;
	mr->pd = pd;
	atomic_inc(&pd->usecnt);
	mr->iova = *uaddr;
	mr->length = len;
	/* not in restrack: a zeroed entry is skipped by ib_dereg_mr() */
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, rsim_kunit_mr_free,
						  mr));
	return mr;
}

/**
 * rsim_kunit_cq_wait() - poll a CQ until @n completions arrived or @ms
 *	milliseconds passed (work the engine deferred runs on the worker)
 * @cq: the CQ (IB_POLL_DIRECT)
 * @wc: room for @n completions
 * @n: completions wanted
 * @ms: how long to wait for them
 *
 * Return: the completions polled.
 */
int rsim_kunit_cq_wait(struct ib_cq *cq, struct ib_wc *wc, int n,
		       unsigned int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);
	int got = 0;

	while (got < n) {
		got += ib_poll_cq(cq, n - got, wc + got);
		if (got < n && time_after(jiffies, end))
			break;
		if (got < n)
			usleep_range(100, 200);
	}
	return got;
}

/**
 * rsim_kunit_ud_to_rts() - take a UD QP from RESET to RTS
 * @qp: the QP
 * @qkey: its Q_Key
 * @pkey_index: its P_Key index
 *
 * Return: 0, or the errno of the first ib_modify_qp() that failed.
 */
int rsim_kunit_ud_to_rts(struct ib_qp *qp, u32 qkey, u16 pkey_index)
{
	struct ib_qp_attr qa = {
		.qp_state = IB_QPS_INIT,
		.port_num = 1,
		.pkey_index = pkey_index,
		.qkey = qkey,
	};
	int err;

	err = ib_modify_qp(qp, &qa, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_QKEY);
	if (err)
		return err;
	qa.qp_state = IB_QPS_RTR;
	err = ib_modify_qp(qp, &qa, IB_QP_STATE);
	if (err)
		return err;
	qa.qp_state = IB_QPS_RTS;
	return ib_modify_qp(qp, &qa, IB_QP_STATE | IB_QP_SQ_PSN);
}

void rsim_kunit_snapshot(struct rsim_dev *rsim, struct rsim_kunit_counts *c)
{
	int i;

	for (i = 0; i < RSIM_RES_NR; i++) {
		c->res[i] = rsim_res_count(rsim, i);
		c->refused[i] = atomic_read(&rsim->res[i].refused);
	}
	for (i = 0; i < RSIM_FAULT_NR; i++)
		c->injected[i] = rsim_fault_injected(&rsim->fault[i]);
}

/* Live counts are back where they were (refusals may have grown). */
void rsim_kunit_expect_counts(struct kunit *test, struct rsim_dev *rsim,
			      const struct rsim_kunit_counts *before)
{
	int i;

	for (i = 0; i < RSIM_RES_NR; i++)
		KUNIT_EXPECT_EQ_MSG(test, rsim_res_count(rsim, i),
				    before->res[i], "%s count",
				    rsim_res_name(i));
}

/**
 * rsim_kunit_expect_master_sm_lid() - @sm_lid is the LID of the subnet's
 * master SM (subnet.c), as @rsim's port reports it
 * @test: the test
 * @rsim: an InfiniBand-mode device
 * @sm_lid: its SM LID, as query_port gave it
 */
void rsim_kunit_expect_master_sm_lid(struct kunit *test, struct rsim_dev *rsim,
				     u16 sm_lid)
{
	struct rsim_dev *m = rsim_subnet_route(rsim, sm_lid);

	KUNIT_ASSERT_NOT_NULL(test, m);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(m->port.sm_master));
	KUNIT_EXPECT_EQ(test, READ_ONCE(rsim->port.sm_master), m == rsim);
	rsim_subnet_put(rsim, m);
}

static void rsim_kunit_ev_handler(struct ib_event_handler *h,
				  struct ib_event *ev)
{
	struct rsim_kunit_ev_count *e =
		container_of(h, struct rsim_kunit_ev_count, h);

	if (ev->event < ARRAY_SIZE(e->n) && ev->element.port_num == 1)
		atomic_inc(&e->n[ev->event]);
}

static void rsim_kunit_ev_stop(void *arg)
{
	ib_unregister_event_handler(arg);
}

/**
 * rsim_kunit_ev_count() - count @rsim's port events until the test ends
 * @test: the test
 * @rsim: the device
 *
 * Return: the counts; aborts the test on failure.
 */
struct rsim_kunit_ev_count *rsim_kunit_ev_count(struct kunit *test,
						struct rsim_dev *rsim)
{
	struct rsim_kunit_ev_count *e = kunit_kzalloc(test, sizeof(*e),
						      GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, e);
	INIT_IB_EVENT_HANDLER(&e->h, &rsim->ibdev, rsim_kunit_ev_handler);
	ib_register_event_handler(&e->h);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   rsim_kunit_ev_stop,
							   &e->h));
	return e;
}

/**
 * rsim_kunit_ev_seen() - events of @type so far
 * @e: the counts
 * @type: the event type
 *
 * The core delivers events from its workqueue: flushed first.
 *
 * Return: how many were seen.
 */
int rsim_kunit_ev_seen(struct rsim_kunit_ev_count *e, enum ib_event_type type)
{
	flush_workqueue(ib_wq);
	return atomic_read(&e->n[type]);
}
