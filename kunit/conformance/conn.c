// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdma_conformance: fixtures. Buffers mapped for the device, PDs, CQs and
 * MRs that go away with the case, and a loopback RC connection between
 * two QPs of the device under test, brought up as its transport requires:
 * modify_qp with a LID (InfiniBand) or a GRH to the port's own GID
 * (RoCE), or an MPA/TCP connection through rdma_cm (iWARP, where a QP
 * reaches RTS only that way).
 *
 * Everything a fixture acquires is released by a KUnit action registered
 * at once, so a case that aborts, or a device that misbehaves, leaks
 * nothing.
 */

#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/gfp.h>
#include <linux/in6.h>
#include <linux/mm.h>
#include <kunit/resource.h>

#include "conformance.h"

static void rcf_buf_free(void *arg)
{
	struct rcf_buf *b = arg;

	ib_dma_unmap_single(b->dev, b->dma, b->len, DMA_BIDIRECTIONAL);
	__free_pages(b->page, b->order);
}

/**
 * rcf_buf_new() - pages mapped for the device under test
 * @test: the case
 * @dev: the device
 * @len: bytes; the buffer is aligned to its power-of-two size in pages
 * @fill: the byte it is filled with
 *
 * Return: the buffer; the case aborts if it cannot be had.
 */
struct rcf_buf *rcf_buf_new(struct kunit *test, struct ib_device *dev,
			    size_t len, u8 fill)
{
	struct rcf_buf *b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, b);
	b->dev = dev;
	b->len = len;
	b->order = get_order(len);
	b->page = alloc_pages(GFP_KERNEL | __GFP_NOWARN, b->order);
	KUNIT_ASSERT_NOT_NULL_MSG(test, b->page, "%zu bytes of pages", len);
	b->va = page_address(b->page);
	memset(b->va, fill, len);
	b->dma = ib_dma_map_single(dev, b->va, len, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(dev, b->dma)) {
		__free_pages(b->page, b->order);
		KUNIT_FAIL_AND_ABORT(test, "ib_dma_map_single(%zu bytes) failed",
				     len);
	}
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, rcf_buf_free, b));
	return b;
}

/* the CPU looks at what the device wrote */
void rcf_buf_sync_cpu(struct rcf_buf *b)
{
	ib_dma_sync_single_for_cpu(b->dev, b->dma, b->len, DMA_BIDIRECTIONAL);
}

/* the device may look at what the CPU wrote */
void rcf_buf_sync_dev(struct rcf_buf *b)
{
	ib_dma_sync_single_for_device(b->dev, b->dma, b->len,
				      DMA_BIDIRECTIONAL);
}

/**
 * rcf_expect_unchanged() - bytes [@from, @to) of @b still hold @fill
 * @test: the case
 * @b: the buffer (synced for the CPU by the caller)
 * @fill: the byte they were filled with
 * @from: first byte
 * @to: one past the last byte
 * @what: what the range is, for the message
 */
void rcf_expect_unchanged(struct kunit *test, struct rcf_buf *b, u8 fill,
			  size_t from, size_t to, const char *what)
{
	size_t i, first = to, changed = 0;

	for (i = from; i < to; i++) {
		if (b->va[i] != fill) {
			if (first == to)
				first = i;
			changed++;
		}
	}
	if (changed)
		RCF_FAIL(test,
			 "%zu byte(s) of %s changed (first at offset %zu: 0x%02x, was 0x%02x)",
			 changed, what, first, b->va[first], fill);
}

/* free a PD, as a KUnit action or a free function */
void rcf_pd_free(void *pd)
{
	ib_dealloc_pd(pd);
}

/* a PD on @dev; aborts the case if there is none */
struct ib_pd *rcf_pd_on(struct kunit *test, struct ib_device *dev)
{
	struct ib_pd *pd = ib_alloc_pd(dev, 0);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pd);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, rcf_pd_free, pd));
	return pd;
}

/* a PD on the device under test */
struct ib_pd *rcf_pd(struct kunit *test)
{
	return rcf_pd_on(test, rcf_target(test)->dev);
}

/* free a CQ, as a KUnit action or a free function */
void rcf_cq_free(void *cq)
{
	ib_free_cq(cq);
}

/* a CQ on @dev, polled directly by the case */
struct ib_cq *rcf_cq_on(struct kunit *test, struct ib_device *dev, int cqe)
{
	struct ib_cq *cq = ib_alloc_cq(dev, NULL, cqe, 0, IB_POLL_DIRECT);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cq);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, rcf_cq_free, cq));
	return cq;
}

/* a CQ on the device under test */
struct ib_cq *rcf_cq(struct kunit *test, int cqe)
{
	return rcf_cq_on(test, rcf_target(test)->dev, cqe);
}

/* dereg an MR, as a KUnit action or a free function */
void rcf_mr_free(void *mr)
{
	ib_dereg_mr(mr);
}

/* an MR that must be allocatable (the case aborts otherwise) */
struct ib_mr *rcf_mr(struct kunit *test, struct ib_pd *pd,
		     enum ib_mr_type type, u32 max_num_sg)
{
	struct ib_mr *mr = ib_alloc_mr(pd, type, max_num_sg);

	KUNIT_ASSERT_NOT_ERR_OR_NULL_MSG(test, mr, "%s: ib_alloc_mr(%u)",
					 rcf_target(test)->name, max_num_sg);
	rcf_mr_own(test, mr);
	return mr;
}

/* @mr goes away with the case, unless rcf_mr_dereg() releases it first */
void rcf_mr_own(struct kunit *test, struct ib_mr *mr)
{
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, rcf_mr_free, mr));
}

/* deregister an MR of rcf_mr_own() now; what ib_dereg_mr() returned */
int rcf_mr_dereg(struct kunit *test, struct ib_mr *mr)
{
	kunit_remove_action(test, rcf_mr_free, mr);
	return ib_dereg_mr(mr);
}

/*
 * Deregister @mr (of rcf_mr_own()) now: a kernel MR's dereg must succeed,
 * and leave the @before MRs the core tracked before @mr was made.
 */
void rcf_expect_dereg(struct kunit *test, struct ib_mr *mr, u32 before,
		      const char *what)
{
	int ret = rcf_mr_dereg(test, mr);

	if (ret)
		RCF_FAIL(test, "ib_dereg_mr() of %s: %d", what, ret);
	if (rcf_mr_count(test) != before)
		RCF_FAIL(test, "%u MRs tracked after the dereg of %s, want %u",
			 rcf_mr_count(test), what, before);
}

/**
 * rcf_expect_err_ptr() - an allocation that must have been refused
 * @test: the case
 * @obj: what the allocating verb returned
 * @free: how to release it if it was not refused
 * @what: the request, for the messages
 *
 * Refused means an ERR_PTR: NULL is a failure too. An accepted object is
 * released at once, so the case leaks nothing either way.
 */
void rcf_expect_err_ptr(struct kunit *test, void *obj,
			void (*free)(void *obj), const char *what)
{
	if (!obj) {
		RCF_FAIL(test, "%s returned NULL, not an ERR_PTR", what);
	} else if (!IS_ERR(obj)) {
		RCF_FAIL(test, "%s was accepted", what);
		free(obj);
	} else {
		kunit_info(test, "%s: refused with %ld", what, PTR_ERR(obj));
	}
}

/* a scatterlist of @nents entries, to be filled with rcf_sg_set() */
struct scatterlist *rcf_sgl(struct kunit *test, int nents)
{
	struct scatterlist *sgl = kunit_kcalloc(test, nents, sizeof(*sgl),
						GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, sgl);
	sg_init_table(sgl, nents);
	return sgl;
}

/* an entry as a DMA mapping leaves it: address and length */
void rcf_sg_set(struct scatterlist *sg, u64 dma, unsigned int len)
{
	sg->length = len;
	sg_dma_address(sg) = dma;
	sg_dma_len(sg) = len;
}

/* Completions, events and QP states, each waited for RCF_TIMEOUT_MS */

/* Return: 1 with *@wc filled, 0 on timeout, or a negative errno. */
int rcf_poll_one(struct ib_cq *cq, struct ib_wc *wc)
{
	unsigned long end = jiffies + msecs_to_jiffies(RCF_TIMEOUT_MS);
	int n;

	do {
		n = ib_poll_cq(cq, 1, wc);
		if (n)
			return n;
		usleep_range(200, 1000);
	} while (time_before(jiffies, end));
	return 0;
}

/*
 * For figures: poll without sleeping for up to a millisecond (the wait is
 * microseconds when the device's work runs on another CPU), then sleep a
 * little between polls, so that on one CPU that work gets to run.
 * Return: 1 with *@wc filled, 0 on timeout, or a negative errno.
 */
int rcf_poll_busy(struct ib_cq *cq, struct ib_wc *wc)
{
	unsigned long end = jiffies + msecs_to_jiffies(RCF_TIMEOUT_MS);
	u64 spin_end = ktime_get_ns() + NSEC_PER_MSEC;
	int n;

	for (;;) {
		n = ib_poll_cq(cq, 1, wc);
		if (n)
			return n;
		if (time_after(jiffies, end))
			return 0;
		if (ktime_get_ns() < spin_end)
			cpu_relax();
		else
			usleep_range(10, 20);
	}
}

/* Return: 0 once @qp is in @state, -ETIMEDOUT, or ib_query_qp()'s errno. */
int rcf_wait_qp_state(struct ib_qp *qp, enum ib_qp_state state)
{
	unsigned long end = jiffies + msecs_to_jiffies(RCF_EVENT_MS);
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;
	int err;

	do {
		err = ib_query_qp(qp, &attr, IB_QP_STATE, &init);
		if (err)
			return err;
		if (attr.qp_state == state)
			return 0;
		usleep_range(1000, 2000);
	} while (time_before(jiffies, end));
	return -ETIMEDOUT;
}

/**
 * rcf_wait_events() - wait until one of @mask's async events hit @s's QP
 * @c: the connection
 * @s: the side
 * @mask: BIT(ib_event_type) of the events wanted
 * @seen: the events seen when the wait ended
 *
 * Return: 0, or -ETIMEDOUT after RCF_EVENT_MS.
 */
int rcf_wait_events(struct rcf_conn *c, struct rcf_side *s,
		    unsigned long mask, unsigned long *seen)
{
	unsigned long end = jiffies + msecs_to_jiffies(RCF_EVENT_MS);

	do {
		spin_lock_irq(&c->lock);
		*seen = s->events;
		spin_unlock_irq(&c->lock);
		if (*seen & mask)
			return 0;
		usleep_range(1000, 2000);
	} while (time_before(jiffies, end));
	return -ETIMEDOUT;
}

static void rcf_qp_event(struct ib_event *ev, void *ctx)
{
	struct rcf_side *s = ctx;
	struct rcf_conn *c = s->conn;
	unsigned long flags;

	spin_lock_irqsave(&c->lock, flags);
	if (ev->event < BITS_PER_LONG)
		s->events |= BIT(ev->event);
	spin_unlock_irqrestore(&c->lock, flags);
	wake_up_all(&c->wq);
}

/* Posting: one signalled WR each */

int rcf_post_reg(struct ib_qp *qp, struct ib_mr *mr, u32 key, int access,
		 u64 wr_id)
{
	struct ib_reg_wr wr = {
		.wr.opcode = IB_WR_REG_MR,
		.wr.wr_id = wr_id,
		.wr.send_flags = IB_SEND_SIGNALED,
		.mr = mr,
		.key = key,
		.access = access,
	};

	return ib_post_send(qp, &wr.wr, NULL);
}

int rcf_post_inv(struct ib_qp *qp, u32 key, u64 wr_id)
{
	struct ib_send_wr wr = {
		.opcode = IB_WR_LOCAL_INV,
		.wr_id = wr_id,
		.send_flags = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = key,
	};

	return ib_post_send(qp, &wr, NULL);
}

int rcf_post_rdma(struct ib_qp *qp, enum ib_wr_opcode op, u64 laddr,
		  u32 lkey, u32 len, u64 raddr, u32 rkey, u64 wr_id)
{
	struct ib_sge sge = { .addr = laddr, .length = len, .lkey = lkey };
	struct ib_rdma_wr wr = {
		.wr.opcode = op,
		.wr.wr_id = wr_id,
		.wr.send_flags = IB_SEND_SIGNALED,
		.wr.sg_list = &sge,
		.wr.num_sge = 1,
		.remote_addr = raddr,
		.rkey = rkey,
	};

	return ib_post_send(qp, &wr.wr, NULL);
}

/* Connections */

#define RCF_QP_DEPTH	16
#define RCF_QP_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | \
			 IB_ACCESS_REMOTE_WRITE)

static void rcf_init_attr(struct rcf_conn *c, struct rcf_side *s,
			  struct ib_qp_init_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->event_handler = rcf_qp_event;
	a->qp_context = s;
	a->send_cq = s->cq;
	a->recv_cq = s->cq;
	a->cap.max_send_wr = RCF_QP_DEPTH;
	a->cap.max_recv_wr = RCF_QP_DEPTH;
	a->cap.max_send_sge = 1;
	a->cap.max_recv_sge = 1;
	a->sq_sig_type = IB_SIGNAL_REQ_WR;
	a->qp_type = IB_QPT_RC;
	a->port_num = s->t->port;
}

/* RDMA READs in flight each way: what both ends allow, up to 4 */
static u8 rcf_rd_depth(const struct rcf_target *t, const struct rcf_target *u)
{
	u32 rd = min_t(u32, t->attr.max_qp_rd_atom, u->attr.max_qp_rd_atom);
	u32 init = min_t(u32, t->attr.max_qp_init_rd_atom,
			 u->attr.max_qp_init_rd_atom);

	return min3(4U, rd, init);
}

/*
 * RESET -> INIT -> RTR -> RTS, @s connected to @to: a QP of the same port,
 * or on InfiniBand one of the peer's, by its LID
 */
static int rcf_qp_to_rts(struct rcf_side *s, const struct rcf_side *to)
{
	const struct rcf_target *t = s->t, *u = to->t;
	union ib_gid dgid = u->gid;
	struct ib_qp_attr qa = {
		.qp_state = IB_QPS_INIT,
		.port_num = t->port,
		.qp_access_flags = RCF_QP_ACCESS,
	};
	int err;

	err = ib_modify_qp(s->qp, &qa, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (err)
		return err;

	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IB_QPS_RTR;
	qa.ah_attr.type = rdma_ah_find_type(t->dev, t->port);
	rdma_ah_set_port_num(&qa.ah_attr, t->port);
	if (t->transport == RCF_TR_IB)
		rdma_ah_set_dlid(&qa.ah_attr, u->lid);
	else
		rdma_ah_set_grh(&qa.ah_attr, &dgid, 0, t->sgid_index, 64, 0);
	if (qa.ah_attr.type == RDMA_AH_ATTR_TYPE_ROCE)
		memcpy(qa.ah_attr.roce.dmac, u->dmac, ETH_ALEN);
	qa.path_mtu = min(t->mtu, u->mtu);
	qa.dest_qp_num = to->qp->qp_num;
	qa.max_dest_rd_atomic = rcf_rd_depth(t, u);
	qa.min_rnr_timer = 12;
	err = ib_modify_qp(s->qp, &qa, IB_QP_STATE | IB_QP_AV |
			   IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (err)
		return err;

	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IB_QPS_RTS;
	qa.timeout = 14;
	qa.retry_cnt = 6;	/* rxe retries 7 for ever */
	qa.rnr_retry = 7;
	qa.max_rd_atomic = rcf_rd_depth(t, u);
	return ib_modify_qp(s->qp, &qa, IB_QP_STATE | IB_QP_SQ_PSN |
			    IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
			    IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC);
}

static void rcf_connect_modify(struct kunit *test, struct rcf_conn *c)
{
	struct ib_qp_init_attr a;
	struct ib_qp *qp;
	int err;

	rcf_init_attr(c, &c->a, &a);
	qp = ib_create_qp(c->a.pd, &a);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, qp);
	c->a.qp = qp;
	rcf_init_attr(c, &c->b, &a);
	qp = ib_create_qp(c->b.pd, &a);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, qp);
	c->b.qp = qp;

	err = rcf_qp_to_rts(&c->a, &c->b);
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "%s: requester QP to RTS",
			    c->a.t->name);
	err = rcf_qp_to_rts(&c->b, &c->a);
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "%s: responder QP to RTS",
			    c->b.t->name);
}

static void rcf_conn_param(const struct rcf_target *t,
			   struct rdma_conn_param *p)
{
	memset(p, 0, sizeof(*p));
	p->responder_resources = rcf_rd_depth(t, t);
	p->initiator_depth = rcf_rd_depth(t, t);
	p->retry_count = 6;
	p->rnr_retry_count = 7;
}

/*
 * The passive side of an rdma_cm connection, in the CM's handler for
 * CONNECT_REQUEST (so rdma_accept() runs with the handler lock held, as
 * it must). A non-zero return makes the CM reject and destroy @id.
 */
static int rcf_cm_accept(struct rcf_conn *c, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr a;
	struct rdma_conn_param p;
	bool busy;
	int err;

	spin_lock_irq(&c->lock);
	busy = c->passive_done;
	spin_unlock_irq(&c->lock);
	if (busy)
		return -EBUSY;

	rcf_init_attr(c, &c->b, &a);
	err = rdma_create_qp(id, c->b.pd, &a);
	if (err)
		goto out;
	rcf_conn_param(c->t, &p);
	err = rdma_accept(id, &p);
	if (err)
		rdma_destroy_qp(id);
out:
	spin_lock_irq(&c->lock);
	c->passive_done = true;
	if (err) {
		c->passive_err = err;
	} else {
		c->b.cm_id = id;
		c->b.qp = id->qp;
	}
	spin_unlock_irq(&c->lock);
	return err;
}

static int rcf_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct rcf_conn *c = id->context;
	int ret = 0;

	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		ret = rcf_cm_accept(c, id);
		break;
	case RDMA_CM_EVENT_ADDR_RESOLVED:
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		spin_lock_irq(&c->lock);
		c->cm_seen |= BIT(ev->event);
		spin_unlock_irq(&c->lock);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		spin_lock_irq(&c->lock);
		if (id == c->a.cm_id)
			c->a.established = true;
		else
			c->b.established = true;
		spin_unlock_irq(&c->lock);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
		spin_lock_irq(&c->lock);
		if (!c->cm_error)
			c->cm_error = ev->event;
		spin_unlock_irq(&c->lock);
		break;
	default:
		break;
	}
	wake_up_all(&c->wq);
	return ret;
}

static bool rcf_cm_seen(struct rcf_conn *c, enum rdma_cm_event_type ev)
{
	bool seen;

	spin_lock_irq(&c->lock);
	seen = (c->cm_seen & BIT(ev)) || c->cm_error;
	spin_unlock_irq(&c->lock);
	return seen;
}

/*
 * Wait for the active side's @ev; 0, or the rdma_cm event that ended the
 * attempt, or -ETIMEDOUT.
 */
static int rcf_cm_wait(struct rcf_conn *c, enum rdma_cm_event_type ev)
{
	int err;

	wait_event_timeout(c->wq, rcf_cm_seen(c, ev),
			   msecs_to_jiffies(RCF_TIMEOUT_MS));
	spin_lock_irq(&c->lock);
	err = c->cm_seen & BIT(ev) ? 0 : c->cm_error ?: -ETIMEDOUT;
	spin_unlock_irq(&c->lock);
	return err;
}

static bool rcf_cm_up(struct rcf_conn *c)
{
	bool up;

	spin_lock_irq(&c->lock);
	up = (c->a.established && c->b.established) || c->cm_error ||
	     c->passive_err;
	spin_unlock_irq(&c->lock);
	return up;
}

static __be16 *rcf_sockaddr_port(struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return &((struct sockaddr_in *)ss)->sin_port;
	return &((struct sockaddr_in6 *)ss)->sin6_port;
}

static void rcf_connect_cm(struct kunit *test, struct rcf_conn *c)
{
	const struct rcf_target *t = c->t;
	struct sockaddr_storage addr = t->cm_addr;
	struct rdma_conn_param p;
	struct ib_qp_init_attr a;
	struct rdma_cm_id *id;
	int err;

	id = rdma_create_id(&init_net, rcf_cm_handler, c, RDMA_PS_TCP,
			    IB_QPT_RC);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, id);
	c->listen = id;
	*rcf_sockaddr_port(&addr) = 0;	/* any free port */
	err = rdma_bind_addr(id, (struct sockaddr *)&addr);
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "%s: rdma_bind_addr(%pISc)",
			    t->name, &addr);
	err = rdma_listen(id, 1);
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "%s: rdma_listen", t->name);
	KUNIT_ASSERT_PTR_EQ_MSG(test, id->device, t->dev,
				"%s: rdma_cm bound %pISc to another device",
				t->name, &addr);
	*rcf_sockaddr_port(&addr) =
		*rcf_sockaddr_port(&id->route.addr.src_addr);

	id = rdma_create_id(&init_net, rcf_cm_handler, c, RDMA_PS_TCP,
			    IB_QPT_RC);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, id);
	c->a.cm_id = id;
	err = rdma_resolve_addr(id, NULL, (struct sockaddr *)&addr,
				RCF_TIMEOUT_MS);
	if (!err)
		err = rcf_cm_wait(c, RDMA_CM_EVENT_ADDR_RESOLVED);
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "%s: resolving %pISpc", t->name,
			    &addr);
	KUNIT_ASSERT_PTR_EQ_MSG(test, id->device, t->dev,
				"%s: rdma_cm resolved %pISc to another device",
				t->name, &addr);
	err = rdma_resolve_route(id, RCF_TIMEOUT_MS);
	if (!err)
		err = rcf_cm_wait(c, RDMA_CM_EVENT_ROUTE_RESOLVED);
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "%s: route to %pISpc", t->name,
			    &addr);

	rcf_init_attr(c, &c->a, &a);
	err = rdma_create_qp(id, c->a.pd, &a);
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "%s: rdma_create_qp", t->name);
	c->a.qp = id->qp;
	rcf_conn_param(t, &p);
	err = rdma_connect(id, &p);
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "%s: rdma_connect", t->name);
	wait_event_timeout(c->wq, rcf_cm_up(c),
			   msecs_to_jiffies(RCF_TIMEOUT_MS));
	spin_lock_irq(&c->lock);
	err = c->a.established && c->b.established ? 0 :
	      c->passive_err ?: c->cm_error ?: -ETIMEDOUT;
	spin_unlock_irq(&c->lock);
	KUNIT_ASSERT_EQ_MSG(test, err, 0,
			    "%s: rdma_cm connection to %pISpc (an errno, or the rdma_cm event that ended it)",
			    t->name, &addr);
}

/*
 * Teardown, whatever was reached: the listener first (rdma_destroy_id()
 * waits for its handler, so no passive side appears after it), then each
 * side's QP before its id, and QPs before the CQs (freed by actions
 * registered before this one).
 */
static void rcf_side_release(struct rcf_side *s)
{
	if (s->cm_id) {
		if (s->cm_id->qp)
			rdma_destroy_qp(s->cm_id);
		rdma_destroy_id(s->cm_id);
	} else if (s->qp) {
		ib_destroy_qp(s->qp);
	}
}

static void rcf_conn_release(void *arg)
{
	struct rcf_conn *c = arg;

	if (c->listen)
		rdma_destroy_id(c->listen);
	if (c->a.cm_id)
		rdma_disconnect(c->a.cm_id);
	rcf_side_release(&c->a);
	rcf_side_release(&c->b);
}

/* the device @pd is on: the device under test or its peer */
static struct rcf_target *rcf_pd_target(struct kunit *test,
					struct rcf_target *t, struct ib_pd *pd)
{
	if (t->peer && pd->device == t->peer->dev)
		return t->peer;
	KUNIT_ASSERT_PTR_EQ_MSG(test, pd->device, t->dev,
				"a PD of neither %s nor its peer", t->name);
	return t;
}

/**
 * rcf_conn_new() - two connected RC QPs
 * @test: the case
 * @pd_a: the requester's PD: on the device under test, or on its peer
 *	(then the connection crosses the InfiniBand subnet)
 * @pd_b: the responder's PD (may be @pd_a), on the device under test
 *
 * Each side gets its own CQ, on its own device; both QPs allow local
 * write, remote read and remote write. Skips the case if the device's
 * transport cannot be connected here; aborts it if connecting fails.
 *
 * Return: the connection, torn down when the case ends.
 */
struct rcf_conn *rcf_conn_new(struct kunit *test, struct ib_pd *pd_a,
			      struct ib_pd *pd_b)
{
	struct rcf_target *t = rcf_target(test);
	struct rcf_conn *c;

	if (t->transport == RCF_TR_NONE)
		kunit_skip(test, "no loopback RC connection on %s: %s",
			   t->name, t->no_conn);
	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	c->t = t;
	spin_lock_init(&c->lock);
	init_waitqueue_head(&c->wq);
	c->a.conn = c;
	c->b.conn = c;
	c->a.t = rcf_pd_target(test, t, pd_a);
	c->b.t = t;
	KUNIT_ASSERT_PTR_EQ(test, pd_b->device, t->dev);
	c->a.pd = pd_a;
	c->b.pd = pd_b;
	c->a.cq = rcf_cq_on(test, c->a.t->dev, 2 * RCF_QP_DEPTH);
	c->b.cq = rcf_cq_on(test, c->b.t->dev, 2 * RCF_QP_DEPTH);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, rcf_conn_release, c));

	if (t->transport == RCF_TR_IWARP)
		rcf_connect_cm(test, c);
	else
		rcf_connect_modify(test, c);
	return c;
}
