// SPDX-License-Identifier: GPL-2.0-only
/*
 * Suite rdmasim_subnet: the InfiniBand subnet of rdmasim devices
 * (subnet.c). The suite's shared device and one made for each case (and
 * rdmasim0, when it is loaded: it is on the subnet too) have LIDs of their own, route packets
 * to each other by LID, agree on one master SM, which hands over when its
 * link goes down; no two ports take one LID, at creation or through an
 * SMP; an RC connection across them moves data, counted at each end's
 * port, and a packet from a port its responder's path does not name is
 * dropped; a responder whose device takes more SGEs per receive WR than
 * the requester's still gets all of them filled.
 */

#include <rdma/ib_mad.h>
#include <rdma/ib_smi.h>

#include "dp_helpers.h"

/* two devices of the subnet, each with a PD, a CQ and a buffer */
struct sn_fixture {
	struct dp_fixture a;
	struct dp_fixture b;
};

static struct sn_fixture *sn_fixture(struct kunit *test)
{
	struct sn_fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	struct dp_fixture *e[] = { &f->a, &f->b };
	int i;

	KUNIT_ASSERT_NOT_NULL(test, f);
	/* the suite's shared device, and one made for the case */
	f->a.rsim = rsim_kunit_shared_dev(test);
	f->b.rsim = rsim_kunit_dev(test, NULL);
	for (i = 0; i < ARRAY_SIZE(e); i++) {
		e[i]->pd = rsim_kunit_pd(test, e[i]->rsim);
		e[i]->cq = rsim_kunit_cq(test, e[i]->rsim, 64);
	}
	return f;
}

static u16 sn_lid(struct rsim_dev *rsim)
{
	return READ_ONCE(rsim->port.lid);
}

static u16 sn_sm_lid(struct rsim_dev *rsim)
{
	return READ_ONCE(rsim->port.sm_lid);
}

/* the device that has the subnet's SM LID as seen from @from, held */
static struct rsim_dev *sn_master(struct kunit *test, struct rsim_dev *from)
{
	struct rsim_dev *m = rsim_subnet_route(from, sn_sm_lid(from));

	KUNIT_ASSERT_NOT_NULL(test, m);
	return m;
}

/*
 * Each device has a LID of its own; a packet to one reaches it from the
 * other; a LID nobody has, a multicast LID and LID 0 reach nothing; a
 * device that left is not reached.
 */
static void rsim_subnet_test_routes_by_lid(struct kunit *test)
{
	struct sn_fixture *f = sn_fixture(test);
	struct rsim_dev *a = f->a.rsim, *b = f->b.rsim, *c, *to;
	struct rsim_dev_config cfg;
	u16 lid_c;

	KUNIT_EXPECT_NE(test, sn_lid(a), sn_lid(b));
	KUNIT_EXPECT_PTR_EQ(test, rsim_subnet_route(a, sn_lid(a)), a);
	to = rsim_subnet_route(a, sn_lid(b));
	KUNIT_EXPECT_PTR_EQ(test, to, b);
	rsim_subnet_put(a, to);
	to = rsim_subnet_route(b, sn_lid(a));
	KUNIT_EXPECT_PTR_EQ(test, to, a);
	rsim_subnet_put(b, to);
	KUNIT_EXPECT_NULL(test, rsim_subnet_route(a, 0));
	KUNIT_EXPECT_NULL(test, rsim_subnet_route(a, 0xc001));
	KUNIT_EXPECT_NULL(test, rsim_subnet_route(a, 0xffff));

	rsim_default_config(&cfg);
	c = rsim_dev_new(rsim_kunit_new_id(), &cfg);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c);
	lid_c = sn_lid(c);
	to = rsim_subnet_route(a, lid_c);
	KUNIT_EXPECT_PTR_EQ(test, to, c);
	rsim_subnet_put(a, to);
	KUNIT_ASSERT_EQ(test, rsim_dev_del(c->id), 0);
	KUNIT_EXPECT_NULL(test, rsim_subnet_route(a, lid_c));
}

static void sn_link_up(void *rsim)
{
	rsim_port_set_link(rsim, true);
}

/* @r's SMA answers @in in @out; what process_mad returns */
static int sn_mad(struct rsim_dev *r, struct ib_smp *in, struct ib_smp *out)
{
	size_t size = sizeof(struct ib_mad);
	u16 pkey_index = 0;

	return r->ibdev.ops.process_mad(&r->ibdev, 0, 1, NULL, NULL,
					(struct ib_mad *)in,
					(struct ib_mad *)out, &size,
					&pkey_index);
}

/* hand @in to @rsim's SMA (process_mad); @out gets its reply */
static void sn_smp(struct kunit *test, struct rsim_dev *rsim,
		   struct ib_smp *in, struct ib_smp *out)
{
	KUNIT_ASSERT_EQ(test, sn_mad(rsim, in, out),
			IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY);
}

/* a LID-routed SubnGet(@attr) with @rsim's M_Key in a new @in; @out too */
static void sn_smp_get(struct kunit *test, struct rsim_dev *rsim,
		       __be16 attr, u32 attr_mod, struct ib_smp **in,
		       struct ib_smp **out)
{
	*in = kunit_kzalloc(test, sizeof(**in), GFP_KERNEL);
	*out = kunit_kzalloc(test, sizeof(**out), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, *in);
	KUNIT_ASSERT_NOT_NULL(test, *out);
	(*in)->base_version = IB_MGMT_BASE_VERSION;
	(*in)->mgmt_class = IB_MGMT_CLASS_SUBN_LID_ROUTED;
	(*in)->class_version = 1;
	(*in)->method = IB_MGMT_METHOD_GET;
	(*in)->attr_id = attr;
	(*in)->attr_mod = cpu_to_be32(attr_mod);
	(*in)->mkey = rsim->port.mkey;
	sn_smp(test, rsim, *in, *out);
}

/* SMInfo's SMState, through the SMA */
static u8 sn_sm_state(struct kunit *test, struct rsim_dev *rsim)
{
	struct ib_smp *in, *out;

	sn_smp_get(test, rsim, IB_SMP_ATTR_SM_INFO, 0, &in, &out);
	KUNIT_ASSERT_EQ(test, be16_to_cpu(out->status), 0);
	return out->data[20] & 0xf;
}

/*
 * One master: every port's SM LID is its LID, its SMInfo says MASTER and
 * the others' STANDBY. When its link goes down another port (the lowest
 * GUID left with its link up) takes over, and each port that follows
 * raises SM_CHANGE; when it comes back it is the master again.
 */
static void rsim_subnet_test_one_master(struct kunit *test)
{
	struct sn_fixture *f = sn_fixture(test);
	struct rsim_dev *a = f->a.rsim, *b = f->b.rsim, *m, *m2;
	struct rsim_kunit_ev_count *ev_a = rsim_kunit_ev_count(test, a);
	struct rsim_kunit_ev_count *ev_b = rsim_kunit_ev_count(test, b);
	int sm_a, sm_b;

	KUNIT_EXPECT_EQ(test, sn_sm_lid(a), sn_sm_lid(b));
	m = sn_master(test, a);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(m->port.sm_master));
	KUNIT_EXPECT_EQ(test, sn_sm_lid(m), sn_lid(m));
	KUNIT_EXPECT_EQ(test, sn_sm_state(test, m), 3);	/* MASTER */
	/* a device made later has a higher GUID than the master's */
	KUNIT_EXPECT_PTR_NE(test, m, b);
	KUNIT_EXPECT_FALSE(test, READ_ONCE(b->port.sm_master));
	KUNIT_EXPECT_EQ(test, sn_sm_state(test, b), 2);	/* STANDBY */

	sm_a = rsim_kunit_ev_seen(ev_a, IB_EVENT_SM_CHANGE);
	sm_b = rsim_kunit_ev_seen(ev_b, IB_EVENT_SM_CHANGE);
	rsim_port_set_link(m, false);
	if (kunit_add_action_or_reset(test, sn_link_up, m)) {
		rsim_subnet_put(a, m);
		KUNIT_FAIL(test, "no action to plug the master's cable back");
		return;
	}
	m2 = sn_master(test, b);
	KUNIT_EXPECT_PTR_NE(test, m2, m);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(m2->port.sm_master));
	KUNIT_EXPECT_FALSE(test, READ_ONCE(m->port.sm_master));
	KUNIT_EXPECT_EQ(test, sn_sm_lid(b), sn_lid(m2));
	if (m != a) {
		KUNIT_EXPECT_EQ(test, sn_sm_lid(a), sn_lid(m2));
		KUNIT_EXPECT_EQ(test, rsim_kunit_ev_seen(ev_a, IB_EVENT_SM_CHANGE), sm_a + 1);
	}
	KUNIT_EXPECT_EQ(test, rsim_kunit_ev_seen(ev_b, IB_EVENT_SM_CHANGE), sm_b + 1);
	rsim_subnet_put(b, m2);

	kunit_release_action(test, sn_link_up, m);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(m->port.sm_master));
	KUNIT_EXPECT_EQ(test, sn_sm_lid(a), sn_lid(m));
	KUNIT_EXPECT_EQ(test, sn_sm_lid(b), sn_lid(m));
	KUNIT_EXPECT_EQ(test, rsim_kunit_ev_seen(ev_b, IB_EVENT_SM_CHANGE), sm_b + 2);
	rsim_subnet_put(a, m);
}

/*
 * No two ports take one LID: a device asking for a LID another has is not
 * made (and leaves nothing behind); SubnSet(PortInfo) giving a port
 * another's LID is refused with the port unchanged.
 */
static void rsim_subnet_test_lid_unique(struct kunit *test)
{
	struct sn_fixture *f = sn_fixture(test);
	struct rsim_dev *a = f->a.rsim, *b = f->b.rsim, *c;
	struct rsim_dev_config cfg;
	struct ib_smp *in, *out;
	struct ib_port_info *pi;
	u16 lid_a = sn_lid(a);

	rsim_default_config(&cfg);
	cfg.lid = sn_lid(b);
	c = rsim_dev_new(rsim_kunit_new_id(), &cfg);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(c), -EADDRINUSE);
	if (!IS_ERR_OR_NULL(c))
		rsim_dev_del(c->id);

	sn_smp_get(test, a, IB_SMP_ATTR_PORT_INFO, 1, &in, &out);
	memcpy(in->data, out->data, IB_SMP_DATA_SIZE);
	in->method = IB_MGMT_METHOD_SET;
	pi = (struct ib_port_info *)in->data;
	pi->linkspeed_portstate &= 0xf0;
	pi->portphysstate_linkdown &= 0x0f;
	pi->lid = cpu_to_be16(sn_lid(b));
	sn_smp(test, a, in, out);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(out->status) & 0x7fff,
			IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE);
	KUNIT_EXPECT_EQ(test, sn_lid(a), lid_a);
}

/*
 * SubnSet(PortInfo) of @r's port: PortPhysicalState @phys, LinkState
 * @state (0: no change); the reply's MAD status, U16_MAX without one
 */
static u16 sn_set(struct rsim_dev *r, u8 phys, u8 state)
{
	struct ib_smp in = {}, out = {};
	struct ib_port_info *pi = (struct ib_port_info *)in.data;

	in.base_version = IB_MGMT_BASE_VERSION;
	in.mgmt_class = IB_MGMT_CLASS_SUBN_LID_ROUTED;
	in.class_version = 1;
	in.method = IB_MGMT_METHOD_GET;
	in.attr_id = IB_SMP_ATTR_PORT_INFO;
	in.attr_mod = cpu_to_be32(1);
	in.mkey = r->port.mkey;
	sn_mad(r, &in, &out);
	memcpy(in.data, out.data, IB_SMP_DATA_SIZE);
	in.method = IB_MGMT_METHOD_SET;
	pi->linkspeed_portstate = (pi->linkspeed_portstate & 0xf0) | state;
	pi->portphysstate_linkdown = phys << 4 |
				     (pi->portphysstate_linkdown & 0x0f);
	if (sn_mad(r, &in, &out) != (IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY))
		return U16_MAX;
	return be16_to_cpu(out.status) & 0x7fff;
}

/*
 * an action: enable @rsim's port again (PortPhysicalState Polling: Init)
 * and take it to Active through Armed, as an SM does
 */
static void sn_enable(void *rsim)
{
	sn_set(rsim, IB_PORT_PHYS_STATE_POLLING, IB_PORT_NOP);
	sn_set(rsim, 0, IB_PORT_ARMED);
	sn_set(rsim, 0, IB_PORT_ACTIVE);
}

/*
 * An SM disables the master's port (SubnSet PortPhysicalState Disabled):
 * the election is held again and another port is the master; enabled
 * again (Polling, then Armed and Active), the port is up and the master
 * once more.
 */
static void rsim_subnet_test_master_disabled(struct kunit *test)
{
	struct sn_fixture *f = sn_fixture(test);
	struct rsim_dev *b = f->b.rsim, *m, *m2;

	m = sn_master(test, f->a.rsim);
	KUNIT_EXPECT_EQ(test, sn_set(m, IB_PORT_PHYS_STATE_DISABLED,
				     IB_PORT_NOP), 0);
	if (kunit_add_action_or_reset(test, sn_enable, m)) {
		rsim_subnet_put(f->a.rsim, m);
		KUNIT_FAIL(test, "no action to enable the master's port again");
		return;
	}
	KUNIT_EXPECT_EQ(test, READ_ONCE(m->port.phys_state),
			IB_PORT_PHYS_STATE_DISABLED);
	KUNIT_EXPECT_FALSE(test, READ_ONCE(m->port.sm_master));
	m2 = sn_master(test, b);
	KUNIT_EXPECT_PTR_NE(test, m2, m);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(m2->port.sm_master));
	rsim_subnet_put(b, m2);

	kunit_release_action(test, sn_enable, m);
	KUNIT_EXPECT_EQ(test, READ_ONCE(m->port.phys_state),
			IB_PORT_PHYS_STATE_LINK_UP);
	KUNIT_EXPECT_EQ(test, READ_ONCE(m->port.state), IB_PORT_ACTIVE);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(m->port.sm_master));
	KUNIT_EXPECT_EQ(test, sn_sm_lid(b), sn_lid(m));
	rsim_subnet_put(f->a.rsim, m);
}

/* an FRWR MR over the first page of @e's dst, registered through its QP b */
static struct ib_mr *sn_reg(struct kunit *test, struct dp_fixture *e)
{
	struct ib_mr *mr = rsim_kunit_mr(test, e->pd, IB_MR_TYPE_MEM_REG, 4);
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, dp_reg(test, e, e->b, mr, &e->dst, 0, PAGE_SIZE,
				     IB_ACCESS_LOCAL_WRITE | DP_ACCESS, true),
			0);
	dp_poll_one(test, e, e->b, &wc);
	KUNIT_ASSERT_EQ(test, wc.status, IB_WC_SUCCESS);
	return mr;
}

/*
 * QP a on the first device and QP b of @type on the second, a connected
 * to b; b's path names the port with LID @b_dlid (a's, or another); a's
 * source buffer, b's destination buffer, an FRWR MR over its first page
 * (returned)
 */
static struct ib_mr *sn_pair(struct kunit *test, struct sn_fixture *f,
			     enum ib_qp_type type, u16 b_dlid, int access)
{
	struct dp_fixture *fa = &f->a, *fb = &f->b;

	fa->a = dp_qp(test, fa, type, fa->pd);
	fb->b = dp_qp(test, fb, type, fb->pd);
	KUNIT_ASSERT_EQ(test, dp_connect_lid(fa->a, sn_lid(fb->rsim),
					     fb->b->qp_num, access, 7, 0), 0);
	KUNIT_ASSERT_EQ(test, dp_connect_lid(fb->b, b_dlid, fa->a->qp_num,
					     access, 7, 0), 0);
	dp_buf_init(test, fa, &fa->src, DP_BUF, 0x5a);
	dp_buf_init(test, fb, &fb->dst, DP_BUF, 0x00);
	return sn_reg(test, fb);
}

/* a page of a's source written to @mr by QP a; the completion's status */
static enum ib_wc_status sn_write(struct kunit *test, struct sn_fixture *f,
				  struct ib_mr *mr)
{
	struct ib_rdma_wr w = {
		.wr.opcode = IB_WR_RDMA_WRITE,
		.wr.wr_id = 1,
		.wr.send_flags = IB_SEND_SIGNALED,
		.remote_addr = mr->iova,
		.rkey = mr->rkey,
	};
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, dp_post(f->a.a, &w.wr, f->a.src.dma, PAGE_SIZE,
				      f->a.pd->local_dma_lkey), 0);
	dp_poll_one(test, &f->a, f->a.a, &wc);
	return wc.status;
}

/*
 * An RC connection between the two devices: an RDMA WRITE lands in the
 * responder's memory and a SEND's receive completion names the sender's
 * LID; each port counts what it sent or received, not the other's.
 */
static void rsim_subnet_test_rc_across(struct kunit *test)
{
	struct sn_fixture *f = sn_fixture(test);
	struct dp_fixture *fa = &f->a, *fb = &f->b;
	struct rsim_port_counters pa0, pb0, pa1, pb1;
	struct ib_send_wr s = {};
	struct ib_mr *mr_b;
	struct ib_wc wc;
	u8 *dst;

	mr_b = sn_pair(test, f, IB_QPT_RC, sn_lid(fa->rsim), DP_ACCESS);
	pa0 = fa->rsim->dp.port;
	pb0 = fb->rsim->dp.port;
	KUNIT_EXPECT_EQ(test, sn_write(test, f, mr_b), IB_WC_SUCCESS);
	dst = dp_cpu(fb, &fb->dst);
	KUNIT_EXPECT_EQ(test, dst[0], 0x5a);
	KUNIT_EXPECT_EQ(test, dst[PAGE_SIZE - 1], 0x5a);
	KUNIT_EXPECT_EQ(test, dst[PAGE_SIZE], 0);

	KUNIT_ASSERT_EQ(test, dp_post_recv(fb->b, 7, fb->dst.dma + PAGE_SIZE,
					   PAGE_SIZE, fb->pd->local_dma_lkey),
			0);
	s.opcode = IB_WR_SEND;
	s.wr_id = 2;
	s.send_flags = IB_SEND_SIGNALED;
	KUNIT_ASSERT_EQ(test, dp_post(fa->a, &s, fa->src.dma, 64,
				      fa->pd->local_dma_lkey), 0);
	dp_poll_one(test, fa, fa->a, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	dp_poll_one(test, fb, fb->b, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 7);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 64);
	KUNIT_EXPECT_EQ(test, wc.slid, sn_lid(fa->rsim));

	pa1 = fa->rsim->dp.port;
	pb1 = fb->rsim->dp.port;
	KUNIT_EXPECT_GT(test, pa1.xmit_data, pa0.xmit_data);
	KUNIT_EXPECT_EQ(test, pa1.rcv_data, pa0.rcv_data);
	KUNIT_EXPECT_GT(test, pb1.rcv_data, pb0.rcv_data);
	KUNIT_EXPECT_EQ(test, pb1.xmit_data, pb0.xmit_data);
}

/*
 * A responder whose path names another port (its own LID here) drops
 * what the requester sends: over UC the RDMA WRITE completes at the
 * requester, as nothing acknowledges it, and nothing is written. The
 * path fixed, the same WRITE lands.
 */
static void rsim_subnet_test_path_names_requester(struct kunit *test)
{
	struct sn_fixture *f = sn_fixture(test);
	struct dp_fixture *fa = &f->a, *fb = &f->b;
	int access = IB_ACCESS_REMOTE_WRITE;
	struct ib_mr *mr_b;

	mr_b = sn_pair(test, f, IB_QPT_UC, sn_lid(fb->rsim), access);
	KUNIT_EXPECT_EQ(test, sn_write(test, f, mr_b), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, dp_cpu(fb, &fb->dst)[0], 0);

	KUNIT_ASSERT_EQ(test, ib_modify_qp(fb->b, &(struct ib_qp_attr){
					.qp_state = IB_QPS_RESET },
					   IB_QP_STATE), 0);
	KUNIT_ASSERT_EQ(test, dp_connect_lid(fb->b, sn_lid(fa->rsim),
					     fa->a->qp_num, access, 7, 0), 0);
	mr_b = sn_reg(test, fb);
	KUNIT_EXPECT_EQ(test, sn_write(test, f, mr_b), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, dp_cpu(fb, &fb->dst)[0], 0x5a);
}

/*
 * Issue 40, item 7: the requester copied the responder's receive WR into
 * scratch space sized by its own device's max_recv_sge. Here the
 * responder's device allows RSIM_RECV_SGE_CEIL SGEs per receive WR (the
 * requester's the default 16) and posts one of 40 SGEs of 8 bytes; a
 * SEND of 320 bytes fills them all, in order. A device asking for more
 * than the ceiling is refused.
 */
static void rsim_subnet_test_wide_receive(struct kunit *test)
{
	struct sn_fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	struct dp_fixture *fa, *fb;
	struct ib_qp_init_attr qa = {
		.qp_type = IB_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 40 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.port_num = 1,
	};
	struct ib_sge sge[40];
	struct ib_recv_wr rwr = { .wr_id = 40, .sg_list = sge, .num_sge = 40 };
	struct ib_send_wr s = {
		.opcode = IB_WR_SEND,
		.wr_id = 2,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct rsim_dev_config cfg;
	struct ib_wc wc;
	u8 *src, *dst;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, f);
	fa = &f->a;
	fb = &f->b;
	rsim_default_config(&cfg);
	cfg.limits.max_recv_sge = RSIM_RECV_SGE_CEIL + 1;
	cfg.lid = 0x700;
	KUNIT_EXPECT_EQ(test, PTR_ERR(rsim_dev_new(rsim_kunit_new_id(), &cfg)),
			-EINVAL);
	cfg.limits.max_recv_sge = RSIM_RECV_SGE_CEIL;
	cfg.lid = 0;
	fa->rsim = rsim_kunit_shared_dev(test);
	fb->rsim = rsim_kunit_dev(test, &cfg);
	for (i = 0; i < 2; i++) {
		struct dp_fixture *e = i ? fb : fa;

		e->pd = rsim_kunit_pd(test, e->rsim);
		e->cq = rsim_kunit_cq(test, e->rsim, 64);
	}
	fa->a = dp_qp(test, fa, IB_QPT_RC, fa->pd);
	qa.send_cq = fb->cq;
	qa.recv_cq = fb->cq;
	fb->b = ib_create_qp(fb->pd, &qa);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, fb->b);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, dp_qp_destroy,
							fb->b), 0);
	KUNIT_ASSERT_EQ(test, dp_connect_lid(fa->a, sn_lid(fb->rsim),
					     fb->b->qp_num, DP_ACCESS, 7, 0), 0);
	KUNIT_ASSERT_EQ(test, dp_connect_lid(fb->b, sn_lid(fa->rsim),
					     fa->a->qp_num, DP_ACCESS, 7, 0), 0);
	dp_buf_init(test, fa, &fa->src, PAGE_SIZE, 0);
	dp_buf_init(test, fb, &fb->dst, PAGE_SIZE, 0);
	src = fa->src.va;
	for (i = 0; i < 320; i++)
		src[i] = i;
	/* 8 bytes every 16: the gaps stay 0 */
	for (i = 0; i < 40; i++)
		sge[i] = (struct ib_sge){ fb->dst.dma + 16 * i, 8,
					  fb->pd->local_dma_lkey };
	KUNIT_ASSERT_EQ(test, ib_post_recv(fb->b, &rwr, NULL), 0);
	KUNIT_ASSERT_EQ(test, dp_post(fa->a, &s, fa->src.dma, 320,
				      fa->pd->local_dma_lkey), 0);
	dp_poll_one(test, fa, fa->a, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	dp_poll_one(test, fb, fb->b, &wc);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 40);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 320);
	dst = dp_cpu(fb, &fb->dst);
	for (i = 0; i < 640; i++)
		KUNIT_ASSERT_EQ(test, dst[i], i % 16 < 8 ?
				(u8)(i / 16 * 8 + i % 16) : 0);
}

static struct kunit_case rsim_subnet_test_cases[] = {
	KUNIT_CASE(rsim_subnet_test_routes_by_lid),
	KUNIT_CASE(rsim_subnet_test_one_master),
	KUNIT_CASE(rsim_subnet_test_lid_unique),
	KUNIT_CASE(rsim_subnet_test_master_disabled),
	KUNIT_CASE(rsim_subnet_test_rc_across),
	KUNIT_CASE(rsim_subnet_test_wide_receive),
	KUNIT_CASE(rsim_subnet_test_path_names_requester),
	RSIM_KUNIT_NO_LEFTOVERS,
	{}
};

static struct kunit_suite rsim_subnet_test_suite = {
	.name = "rdmasim_subnet",
	.suite_init = rsim_kunit_suite_init,
	.test_cases = rsim_subnet_test_cases,
};

kunit_test_suite(rsim_subnet_test_suite);
