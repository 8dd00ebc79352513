// SPDX-License-Identifier: GPL-2.0-only
/*
 * Suite rdmasim_mad: the SMA and PMA behind process_mad. MADs are built
 * here and handed to the device's process_mad as the MAD layer and sysfs
 * do; every refusal must be a response with the right MAD status.
 */

#include <linux/delay.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_pma.h>
#include <rdma/ib_smi.h>

#include "helpers.h"

struct mad_fixture {
	struct rsim_dev *rsim;
	struct ib_mad *in;
	struct ib_mad *out;
};

static struct mad_fixture *mad_fixture(struct kunit *test)
{
	struct mad_fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, f);
	f->rsim = rsim_kunit_shared_dev(test);
	f->in = kunit_kzalloc(test, sizeof(*f->in), GFP_KERNEL);
	f->out = kunit_kzalloc(test, sizeof(*f->out), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f->in);
	KUNIT_ASSERT_NOT_NULL(test, f->out);
	return f;
}

static void mad_init(struct ib_mad *mad, u8 mgmt_class, u8 method,
		     __be16 attr, u32 attr_mod)
{
	memset(mad, 0, sizeof(*mad));
	mad->mad_hdr.base_version = IB_MGMT_BASE_VERSION;
	mad->mad_hdr.mgmt_class = mgmt_class;
	mad->mad_hdr.class_version = 1;
	mad->mad_hdr.method = method;
	mad->mad_hdr.tid = cpu_to_be64(0x1234);
	mad->mad_hdr.attr_id = attr;
	mad->mad_hdr.attr_mod = cpu_to_be32(attr_mod);
	/* directed route, hop count 0: as the MAD layer hands it over */
	if (mgmt_class == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE)
		((struct ib_smp *)mad)->hop_ptr = 1;
}

/* hand f->in to the device's process_mad on @port; f->out gets the reply */
static int mad_run(struct mad_fixture *f, u32 port)
{
	size_t size = sizeof(*f->out);
	u16 pkey_index = 0;

	memset(f->out, 0xee, sizeof(*f->out));
	return f->rsim->ibdev.ops.process_mad(&f->rsim->ibdev, 0, port, NULL,
					      NULL, f->in, f->out, &size,
					      &pkey_index);
}

#define REPLY	(IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY)

/* SubnAdmGetTable: a method the PMA does not have (not in ib_mad.h < 6.13) */
#define MAD_METHOD_GET_TABLE	0x12

/* a response to the request in f->in, with MAD status @status */
static void mad_expect_reply(struct kunit *test, struct mad_fixture *f,
			     int ret, u16 status)
{
	KUNIT_EXPECT_EQ(test, ret, REPLY);
	KUNIT_EXPECT_EQ(test, f->out->mad_hdr.method, IB_MGMT_METHOD_GET_RESP);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(f->out->mad_hdr.status) & 0x7fff,
			status);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(f->out->mad_hdr.tid),
			be64_to_cpu(f->in->mad_hdr.tid));
	KUNIT_EXPECT_EQ(test, be16_to_cpu(f->out->mad_hdr.attr_id),
			be16_to_cpu(f->in->mad_hdr.attr_id));
}

static void rsim_mad_test_node_info(struct kunit *test)
{
	struct mad_fixture *f = mad_fixture(test);
	struct ib_smp *smp = (struct ib_smp *)f->out;
	struct ib_node_info *ni = (struct ib_node_info *)smp->data;

	mad_init(f->in, IB_MGMT_CLASS_SUBN_LID_ROUTED, IB_MGMT_METHOD_GET,
		 IB_SMP_ATTR_NODE_INFO, 0);
	mad_expect_reply(test, f, mad_run(f, 1), 0);
	KUNIT_EXPECT_EQ(test, ni->base_version, 1);
	KUNIT_EXPECT_EQ(test, ni->class_version, 1);
	KUNIT_EXPECT_EQ(test, ni->node_type, RDMA_NODE_IB_CA);
	KUNIT_EXPECT_EQ(test, ni->num_ports, 1);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(ni->node_guid),
			be64_to_cpu(f->rsim->ibdev.node_guid));
	KUNIT_EXPECT_EQ(test, be64_to_cpu(ni->sys_guid),
			be64_to_cpu(f->rsim->ibdev.node_guid));
	KUNIT_EXPECT_EQ(test, be64_to_cpu(ni->port_guid),
			be64_to_cpu(f->rsim->port.guid));
	KUNIT_EXPECT_EQ(test, be16_to_cpu(ni->partition_cap),
			f->rsim->cfg.limits.pkey_tbl_len);
	KUNIT_EXPECT_EQ(test, ni->local_port_num, 1);
	/* LID routed: no direction bit */
	KUNIT_EXPECT_EQ(test, be16_to_cpu(smp->status), 0);
}

static void rsim_mad_test_node_desc_dr(struct kunit *test)
{
	struct mad_fixture *f = mad_fixture(test);
	struct ib_smp *smp = (struct ib_smp *)f->out;

	mad_init(f->in, IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE, IB_MGMT_METHOD_GET,
		 IB_SMP_ATTR_NODE_DESC, 0);
	mad_expect_reply(test, f, mad_run(f, 1), 0);
	/* the response of a directed-route SMP carries the D bit */
	KUNIT_EXPECT_TRUE(test, smp->status & IB_SMP_DIRECTION);
	KUNIT_EXPECT_EQ(test, strncmp((char *)smp->data,
				      f->rsim->ibdev.node_desc,
				      IB_DEVICE_NODE_DESC_MAX), 0);
}

static void rsim_mad_test_port_info(struct kunit *test)
{
	struct mad_fixture *f = mad_fixture(test);
	struct ib_smp *smp = (struct ib_smp *)f->out;
	struct ib_port_info *pi = (struct ib_port_info *)smp->data;
	struct ib_port_attr attr;
	u32 mod;

	KUNIT_ASSERT_EQ(test, ib_query_port(&f->rsim->ibdev, 1, &attr), 0);
	/* attribute modifier 0 (the receiving port) and 1 */
	for (mod = 0; mod <= 1; mod++) {
		mad_init(f->in, IB_MGMT_CLASS_SUBN_LID_ROUTED,
			 IB_MGMT_METHOD_GET, IB_SMP_ATTR_PORT_INFO, mod);
		mad_expect_reply(test, f, mad_run(f, 1), 0);
		KUNIT_EXPECT_EQ(test, be16_to_cpu(pi->lid), attr.lid);
		KUNIT_EXPECT_EQ(test, be16_to_cpu(pi->sm_lid), attr.sm_lid);
		KUNIT_EXPECT_EQ(test, be32_to_cpu(pi->cap_mask),
				attr.port_cap_flags);
		KUNIT_EXPECT_EQ(test, pi->linkspeed_portstate & 0xf,
				IB_PORT_ACTIVE);
		KUNIT_EXPECT_EQ(test, pi->portphysstate_linkdown >> 4,
				IB_PORT_PHYS_STATE_LINK_UP);
		KUNIT_EXPECT_EQ(test, pi->link_width_active, attr.active_width);
		KUNIT_EXPECT_EQ(test, pi->inittypereply_mtucap & 0xf,
				attr.max_mtu);
		KUNIT_EXPECT_EQ(test, pi->local_port_num, 1);
		KUNIT_EXPECT_EQ(test, be64_to_cpu(pi->gid_prefix),
				0xfe80000000000000ULL);
		/* LinkSpeedExtActive: EDR, as query_port's active_speed */
		KUNIT_EXPECT_EQ(test, smp->data[62] >> 4, 2);
	}
}

static void rsim_mad_test_guid_and_pkeys(struct kunit *test)
{
	struct mad_fixture *f = mad_fixture(test);
	struct ib_smp *smp = (struct ib_smp *)f->out;
	__be16 *pkeys = (__be16 *)smp->data;
	int i;

	mad_init(f->in, IB_MGMT_CLASS_SUBN_LID_ROUTED, IB_MGMT_METHOD_GET,
		 IB_SMP_ATTR_GUID_INFO, 0);
	mad_expect_reply(test, f, mad_run(f, 1), 0);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(*(__be64 *)smp->data),
			be64_to_cpu(f->rsim->port.guid));
	KUNIT_EXPECT_EQ(test, be64_to_cpu(*(__be64 *)(smp->data + 8)), 0);

	mad_init(f->in, IB_MGMT_CLASS_SUBN_LID_ROUTED, IB_MGMT_METHOD_GET,
		 IB_SMP_ATTR_PKEY_TABLE, 0);
	mad_expect_reply(test, f, mad_run(f, 1), 0);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(pkeys[0]), 0xffff);
	for (i = 1; i < 32; i++)
		KUNIT_EXPECT_EQ(test, be16_to_cpu(pkeys[i]), 0);
}

/* Every request the SMA cannot serve gets a response with a status. */
struct mad_bad_case {
	const char *name;
	u8 mgmt_class;
	u8 class_version;
	u8 method;
	__be16 attr;
	u32 attr_mod;
	u16 status;
};

static const struct mad_bad_case mad_bad_cases[] = {
	{ "smp_class_version_2", IB_MGMT_CLASS_SUBN_LID_ROUTED, 2,
	  IB_MGMT_METHOD_GET, IB_SMP_ATTR_NODE_INFO, 0,
	  IB_MGMT_MAD_STATUS_BAD_VERSION },
	{ "smp_method_send", IB_MGMT_CLASS_SUBN_LID_ROUTED, 1,
	  IB_MGMT_METHOD_SEND, IB_SMP_ATTR_NODE_INFO, 0,
	  IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD },
	{ "smp_set_node_info", IB_MGMT_CLASS_SUBN_LID_ROUTED, 1,
	  IB_MGMT_METHOD_SET, IB_SMP_ATTR_NODE_INFO, 0,
	  IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB },
	{ "smp_set_sm_info", IB_MGMT_CLASS_SUBN_LID_ROUTED, 1,
	  IB_MGMT_METHOD_SET, IB_SMP_ATTR_SM_INFO, 0,
	  IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB },
	{ "smp_sm_info_mod_1", IB_MGMT_CLASS_SUBN_LID_ROUTED, 1,
	  IB_MGMT_METHOD_GET, IB_SMP_ATTR_SM_INFO, 1,
	  IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE },
	{ "smp_switch_info", IB_MGMT_CLASS_SUBN_LID_ROUTED, 1,
	  IB_MGMT_METHOD_GET, IB_SMP_ATTR_SWITCH_INFO, 0,
	  IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB },
	{ "smp_port_info_port_2", IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE, 1,
	  IB_MGMT_METHOD_GET, IB_SMP_ATTR_PORT_INFO, 2,
	  IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE },
	{ "smp_guid_block_1", IB_MGMT_CLASS_SUBN_LID_ROUTED, 1,
	  IB_MGMT_METHOD_GET, IB_SMP_ATTR_GUID_INFO, 1,
	  IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE },
	{ "smp_pkey_block_past_table", IB_MGMT_CLASS_SUBN_LID_ROUTED, 1,
	  IB_MGMT_METHOD_GET, IB_SMP_ATTR_PKEY_TABLE, 4096,
	  IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE },
	{ "pma_class_version_2", IB_MGMT_CLASS_PERF_MGMT, 2,
	  IB_MGMT_METHOD_GET, IB_PMA_PORT_COUNTERS, 0,
	  IB_MGMT_MAD_STATUS_BAD_VERSION },
	{ "pma_port_samples", IB_MGMT_CLASS_PERF_MGMT, 1,
	  IB_MGMT_METHOD_GET, IB_PMA_PORT_SAMPLES_CONTROL, 0,
	  IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB },
	{ "pma_set_class_port_info", IB_MGMT_CLASS_PERF_MGMT, 1,
	  IB_MGMT_METHOD_SET, IB_PMA_CLASS_PORT_INFO, 0,
	  IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB },
	{ "pma_get_table", IB_MGMT_CLASS_PERF_MGMT, 1,
	  MAD_METHOD_GET_TABLE, IB_PMA_PORT_COUNTERS, 0,
	  IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD },
};

static void mad_bad_desc(const struct mad_bad_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(mad_bad, mad_bad_cases, mad_bad_desc);

static void rsim_mad_test_refused(struct kunit *test)
{
	const struct mad_bad_case *c = test->param_value;
	struct mad_fixture *f = mad_fixture(test);
	struct ib_pma_mad *pma = (struct ib_pma_mad *)f->in;
	int i;

	mad_init(f->in, c->mgmt_class, c->method, c->attr, c->attr_mod);
	f->in->mad_hdr.class_version = c->class_version;
	pma->data[1] = 1;	/* PortSelect, for PMA cases */
	mad_expect_reply(test, f, mad_run(f, 1), c->status);
	/* nothing but the header is answered */
	if (c->mgmt_class != IB_MGMT_CLASS_PERF_MGMT)
		for (i = 0; i < IB_SMP_DATA_SIZE; i++)
			KUNIT_ASSERT_EQ(test,
					((struct ib_smp *)f->out)->data[i], 0);
}

/* What is not the agents' is left alone: no reply, @out untouched. */
static void rsim_mad_test_not_ours(struct kunit *test)
{
	struct mad_fixture *f = mad_fixture(test);
	size_t size = sizeof(*f->out);
	u16 pkey_index = 0;
	int ret;

	/* a response */
	mad_init(f->in, IB_MGMT_CLASS_SUBN_LID_ROUTED, IB_MGMT_METHOD_GET_RESP,
		 IB_SMP_ATTR_NODE_INFO, 0);
	KUNIT_EXPECT_EQ(test, mad_run(f, 1), IB_MAD_RESULT_SUCCESS);
	KUNIT_EXPECT_EQ(test, f->out->mad_hdr.base_version, 0xee);
	/* a trap */
	f->in->mad_hdr.method = IB_MGMT_METHOD_TRAP;
	KUNIT_EXPECT_EQ(test, mad_run(f, 1), IB_MAD_RESULT_SUCCESS);
	/* another class (an SA query is the SM's) */
	mad_init(f->in, IB_MGMT_CLASS_SUBN_ADM, IB_MGMT_METHOD_GET,
		 cpu_to_be16(0x11), 0);
	KUNIT_EXPECT_EQ(test, mad_run(f, 1), IB_MAD_RESULT_SUCCESS);
	KUNIT_EXPECT_EQ(test, f->out->mad_hdr.base_version, 0xee);
	/* an OPA MAD, another port, too little room: not for this device */
	mad_init(f->in, IB_MGMT_CLASS_SUBN_LID_ROUTED, IB_MGMT_METHOD_GET,
		 IB_SMP_ATTR_NODE_INFO, 0);
	f->in->mad_hdr.base_version = OPA_MGMT_BASE_VERSION;
	KUNIT_EXPECT_EQ(test, mad_run(f, 1), IB_MAD_RESULT_FAILURE);
	f->in->mad_hdr.base_version = IB_MGMT_BASE_VERSION;
	KUNIT_EXPECT_EQ(test, mad_run(f, 2), IB_MAD_RESULT_FAILURE);
	size = sizeof(*f->out) - 1;
	ret = f->rsim->ibdev.ops.process_mad(&f->rsim->ibdev, 0, 1, NULL, NULL,
					     f->in, f->out, &size, &pkey_index);
	KUNIT_EXPECT_EQ(test, ret, IB_MAD_RESULT_FAILURE);
}

static void rsim_mad_test_pma_class_port_info(struct kunit *test)
{
	struct mad_fixture *f = mad_fixture(test);
	struct ib_class_port_info *cpi =
		(struct ib_class_port_info *)((struct ib_pma_mad *)f->out)->data;

	mad_init(f->in, IB_MGMT_CLASS_PERF_MGMT, IB_MGMT_METHOD_GET,
		 IB_PMA_CLASS_PORT_INFO, 0);
	mad_expect_reply(test, f, mad_run(f, 1), 0);
	KUNIT_EXPECT_EQ(test, cpi->base_version, 1);
	KUNIT_EXPECT_EQ(test, cpi->class_version, 1);
	KUNIT_EXPECT_TRUE(test, cpi->capability_mask &
				IB_PMA_CLASS_CAP_EXT_WIDTH);
}

/* The PMA counts the data path: read, clear by CounterSelect, bounds. */
static void rsim_mad_test_pma_counters(struct kunit *test)
{
	struct mad_fixture *f = mad_fixture(test);
	struct rsim_port_counters *c = &f->rsim->dp.port;
	struct ib_pma_mad *in = (struct ib_pma_mad *)f->in;
	struct ib_pma_mad *out = (struct ib_pma_mad *)f->out;
	struct ib_pma_portcounters_ext *x = (void *)out->data;
	struct ib_pma_portcounters *pc = (void *)out->data;
	struct rsim_port_counters saved;

	spin_lock_bh(&f->rsim->stats_lock);
	saved = *c;
	c->xmit_data = 4000;
	c->rcv_data = 8000;
	c->xmit_pkts = 10;
	c->rcv_pkts = 1ULL << 33;	/* saturates the 32-bit counter */
	spin_unlock_bh(&f->rsim->stats_lock);

	mad_init(f->in, IB_MGMT_CLASS_PERF_MGMT, IB_MGMT_METHOD_GET,
		 IB_PMA_PORT_COUNTERS_EXT, 0);
	in->data[1] = 1;
	mad_expect_reply(test, f, mad_run(f, 1), 0);
	KUNIT_EXPECT_EQ(test, x->port_select, 1);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(x->port_xmit_data), 1000);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(x->port_rcv_data), 2000);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(x->port_xmit_packets), 10);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(x->port_rcv_packets), 1ULL << 33);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(x->port_unicast_xmit_packets), 10);

	mad_init(f->in, IB_MGMT_CLASS_PERF_MGMT, IB_MGMT_METHOD_GET,
		 IB_PMA_PORT_COUNTERS, 0);
	in->data[1] = 1;
	mad_expect_reply(test, f, mad_run(f, 1), 0);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(pc->port_xmit_data), 1000);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(pc->port_rcv_packets), U32_MAX);

	/* Set clears what CounterSelect names, and only that */
	f->in->mad_hdr.method = IB_MGMT_METHOD_SET;
	((struct ib_pma_portcounters *)in->data)->counter_select =
		IB_PMA_SEL_PORT_RCV_PACKETS;
	mad_expect_reply(test, f, mad_run(f, 1), 0);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(pc->port_rcv_packets), 0);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(pc->port_xmit_data), 1000);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(pc->port_rcv_data), 2000);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(pc->port_xmit_packets), 10);
	((struct ib_pma_portcounters *)in->data)->counter_select =
		IB_PMA_SEL_PORT_XMIT_DATA;
	mad_expect_reply(test, f, mad_run(f, 1), 0);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(pc->port_xmit_data), 0);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(pc->port_rcv_data), 2000);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(pc->port_xmit_packets), 10);
	/* the extended Set: its own select bits */
	f->in->mad_hdr.attr_id = IB_PMA_PORT_COUNTERS_EXT;
	((struct ib_pma_portcounters_ext *)in->data)->counter_select =
		IB_PMA_SELX_PORT_RCV_DATA;
	mad_expect_reply(test, f, mad_run(f, 1), 0);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(x->port_rcv_data), 0);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(x->port_xmit_packets), 10);
	f->in->mad_hdr.attr_id = IB_PMA_PORT_COUNTERS;

	/* PortSelect 2 does not exist; 0xff (all ports) is port 1 */
	f->in->mad_hdr.method = IB_MGMT_METHOD_GET;
	in->data[1] = 2;
	mad_expect_reply(test, f, mad_run(f, 1),
			 IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE);
	in->data[1] = 0xff;
	mad_expect_reply(test, f, mad_run(f, 1), 0);

	spin_lock_bh(&f->rsim->stats_lock);
	*c = saved;
	spin_unlock_bh(&f->rsim->stats_lock);
}

/* ---- SubnSet(PortInfo), port states and events, M_Key, SMInfo ---- */

/* the shared device's port as a case found it, put back by an action */
struct mad_port_saved {
	struct rsim_dev *rsim;
	struct rsim_port port;
};

static void mad_port_restore(void *arg)
{
	struct mad_port_saved *sv = arg;
	struct rsim_port *p = &sv->rsim->port;
	u32 ev;

	spin_lock_bh(&p->lock);
	ev = p->lid != sv->port.lid ? RSIM_PORT_EV_LID : 0;
	ev |= rsim_port_set_state_locked(p, sv->port.state,
					 sv->port.phys_state);
	p->lid = sv->port.lid;
	p->sm_lid = sv->port.sm_lid;
	p->sm_sl = sv->port.sm_sl;
	p->mtu = sv->port.mtu;
	p->subnet_timeout = sv->port.subnet_timeout;
	p->width_enabled = sv->port.width_enabled;
	p->speed_enabled = sv->port.speed_enabled;
	p->speed_ext_enabled = sv->port.speed_ext_enabled;
	p->mkey = sv->port.mkey;
	p->mkey_lease = sv->port.mkey_lease;
	p->mkey_prot = sv->port.mkey_prot;
	p->mkey_lease_running = false;
	spin_unlock_bh(&p->lock);
	rsim_port_dispatch(sv->rsim, ev);
	flush_workqueue(ib_wq);
}

static void mad_port_save(struct kunit *test, struct rsim_dev *rsim)
{
	struct mad_port_saved *sv = kunit_kzalloc(test, sizeof(*sv),
						  GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, sv);
	sv->rsim = rsim;
	spin_lock_bh(&rsim->port.lock);
	sv->port = rsim->port;
	spin_unlock_bh(&rsim->port.lock);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   mad_port_restore,
							   sv));
}

/* f->in becomes SubnSet(PortInfo) of the port's current PortInfo */
static void mad_port_info_for_set(struct kunit *test, struct mad_fixture *f)
{
	mad_init(f->in, IB_MGMT_CLASS_SUBN_LID_ROUTED, IB_MGMT_METHOD_GET,
		 IB_SMP_ATTR_PORT_INFO, 1);
	/* authenticated: the port's own M_Key */
	((struct ib_smp *)f->in)->mkey = f->rsim->port.mkey;
	mad_expect_reply(test, f, mad_run(f, 1), 0);
	memcpy(((struct ib_smp *)f->in)->data, ((struct ib_smp *)f->out)->data,
	       IB_SMP_DATA_SIZE);
	f->in->mad_hdr.method = IB_MGMT_METHOD_SET;
	/* as ibportstate does: PortState and PortPhysicalState "no change" */
	((struct ib_port_info *)((struct ib_smp *)f->in)->data)->
		linkspeed_portstate &= 0xf0;
	((struct ib_port_info *)((struct ib_smp *)f->in)->data)->
		portphysstate_linkdown &= 0x0f;
}

static struct ib_port_info *mad_in_pi(struct mad_fixture *f)
{
	return (struct ib_port_info *)((struct ib_smp *)f->in)->data;
}

static struct ib_port_info *mad_out_pi(struct mad_fixture *f)
{
	return (struct ib_port_info *)((struct ib_smp *)f->out)->data;
}

/*
 * SubnSet(PortInfo) changes what an SM may change: the LID and SM LID
 * (query_port, hence sysfs and rdma link, see them; LID_CHANGE and
 * SM_CHANGE are raised), the SM SL, the subnet timeout, the MTU; the
 * response is the port's new PortInfo. The data path follows the LID.
 */
static void rsim_mad_test_set_port_info(struct kunit *test)
{
	struct mad_fixture *f = mad_fixture(test);
	struct rsim_kunit_ev_count *ev = rsim_kunit_ev_count(test, f->rsim);
	struct ib_port_info *pi = mad_in_pi(f);
	struct ib_port_attr attr;
	u16 lid;

	mad_port_save(test, f->rsim);
	mad_port_info_for_set(test, f);
	lid = be16_to_cpu(pi->lid);
	KUNIT_ASSERT_NE(test, lid, 0x0b0b);
	pi->lid = cpu_to_be16(0x0b0b);
	pi->sm_lid = cpu_to_be16(0x0c0c);
	pi->neighbormtu_mastersmsl = IB_MTU_2048 << 4 | 5;
	pi->clientrereg_resv_subnetto = 0x80 | 12;	/* + ClientReregister */
	mad_expect_reply(test, f, mad_run(f, 1), 0);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(mad_out_pi(f)->lid), 0x0b0b);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(mad_out_pi(f)->sm_lid), 0x0c0c);
	KUNIT_EXPECT_EQ(test, mad_out_pi(f)->neighbormtu_mastersmsl,
			IB_MTU_2048 << 4 | 5);
	KUNIT_EXPECT_EQ(test, mad_out_pi(f)->clientrereg_resv_subnetto, 12);
	/* the state did not change: still Active */
	KUNIT_EXPECT_EQ(test, mad_out_pi(f)->linkspeed_portstate & 0xf,
			IB_PORT_ACTIVE);

	KUNIT_ASSERT_EQ(test, ib_query_port(&f->rsim->ibdev, 1, &attr), 0);
	KUNIT_EXPECT_EQ(test, attr.lid, 0x0b0b);
	KUNIT_EXPECT_EQ(test, attr.sm_lid, 0x0c0c);
	KUNIT_EXPECT_EQ(test, attr.sm_sl, 5);
	KUNIT_EXPECT_EQ(test, attr.subnet_timeout, 12);
	KUNIT_EXPECT_EQ(test, attr.active_mtu, IB_MTU_2048);
	KUNIT_EXPECT_EQ(test, rsim_kunit_ev_seen(ev, IB_EVENT_LID_CHANGE), 1);
	KUNIT_EXPECT_EQ(test, rsim_kunit_ev_seen(ev, IB_EVENT_SM_CHANGE), 1);
	KUNIT_EXPECT_EQ(test, rsim_kunit_ev_seen(ev, IB_EVENT_CLIENT_REREGISTER),
			1);
	KUNIT_EXPECT_EQ(test, rsim_kunit_ev_seen(ev, IB_EVENT_PORT_ERR), 0);

	/* the same Set again changes nothing and raises nothing new */
	pi->clientrereg_resv_subnetto = 12;
	mad_expect_reply(test, f, mad_run(f, 1), 0);
	KUNIT_EXPECT_EQ(test, rsim_kunit_ev_seen(ev, IB_EVENT_LID_CHANGE), 1);
	KUNIT_EXPECT_EQ(test, rsim_kunit_ev_seen(ev, IB_EVENT_SM_CHANGE), 1);
}

enum mad_pi_fault {
	PI_LID_0, PI_LID_MULTICAST, PI_SM_LID_PERMISSIVE, PI_LMC_1,
	PI_GID_PREFIX, PI_MTU_0, PI_MTU_8192, PI_VLS_2, PI_WIDTH_8X,
	PI_SPEED_5G, PI_SPEED_EXT_HDR, PI_PHYS_SLEEP, PI_STATE_INIT,
	PI_STATE_ARMED_FROM_ACTIVE, PI_STATE_5, PI_PORT_2,
};

/**
 * struct mad_pi_case - a SubnSet(PortInfo) that must be refused
 * @name: case name
 * @fault: what is wrong with it
 */
struct mad_pi_case {
	const char *name;
	enum mad_pi_fault fault;
};

static const struct mad_pi_case mad_pi_cases[] = {
	{ "lid_0", PI_LID_0 },
	{ "lid_multicast", PI_LID_MULTICAST },
	{ "sm_lid_permissive", PI_SM_LID_PERMISSIVE },
	{ "lmc_1", PI_LMC_1 },
	{ "gid_prefix_not_fe80", PI_GID_PREFIX },
	{ "neighbor_mtu_0", PI_MTU_0 },
	{ "neighbor_mtu_above_cap", PI_MTU_8192 },
	{ "operational_vls_2", PI_VLS_2 },
	{ "link_width_8x_unsupported", PI_WIDTH_8X },
	{ "link_speed_5g_unsupported", PI_SPEED_5G },
	{ "link_speed_ext_hdr_unsupported", PI_SPEED_EXT_HDR },
	{ "phys_state_sleep", PI_PHYS_SLEEP },
	{ "port_state_init", PI_STATE_INIT },
	{ "armed_from_active", PI_STATE_ARMED_FROM_ACTIVE },
	{ "port_state_5", PI_STATE_5 },
	{ "attr_mod_port_2", PI_PORT_2 },
};

static void mad_pi_desc(const struct mad_pi_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(mad_pi, mad_pi_cases, mad_pi_desc);

/*
 * A SubnSet(PortInfo) with one bad field (other fields changed too) is
 * refused as a whole: INVALID_ATTRIB_VALUE, the response is the unchanged
 * PortInfo, the port and its event count are as they were.
 */
static void rsim_mad_test_set_port_info_refused(struct kunit *test)
{
	const struct mad_pi_case *c = test->param_value;
	struct mad_fixture *f = mad_fixture(test);
	struct ib_port_info *pi = mad_in_pi(f);
	struct rsim_port *port = &f->rsim->port;
	u16 lid = port->lid;
	u32 events = port->events;

	mad_port_save(test, f->rsim);
	mad_port_info_for_set(test, f);
	/* a change that must not happen */
	pi->sm_lid = cpu_to_be16(0x0d0d);
	switch (c->fault) {
	case PI_LID_0:
		pi->lid = 0;
		break;
	case PI_LID_MULTICAST:
		pi->lid = cpu_to_be16(0xc001);
		break;
	case PI_SM_LID_PERMISSIVE:
		pi->sm_lid = cpu_to_be16(0xffff);
		break;
	case PI_LMC_1:
		pi->mkeyprot_resv_lmc |= 1;
		break;
	case PI_GID_PREFIX:
		pi->gid_prefix = cpu_to_be64(0xfec0000000000000ULL);
		break;
	case PI_MTU_0:
		pi->neighbormtu_mastersmsl &= 0x0f;
		break;
	case PI_MTU_8192:
		pi->neighbormtu_mastersmsl = 6 << 4;
		break;
	case PI_VLS_2:
		pi->operationalvl_pei_peo_fpi_fpo = 2 << 4;
		break;
	case PI_WIDTH_8X:
		pi->link_width_enabled = IB_WIDTH_8X;
		break;
	case PI_SPEED_5G:
		pi->linkspeedactive_enabled = 2;
		break;
	case PI_SPEED_EXT_HDR:
		((struct ib_smp *)f->in)->data[63] = 1 << 4;	/* 53 Gb/s */
		break;
	case PI_PHYS_SLEEP:
		pi->portphysstate_linkdown |= IB_PORT_PHYS_STATE_SLEEP << 4;
		break;
	case PI_STATE_INIT:
		pi->linkspeed_portstate |= IB_PORT_INIT;
		break;
	case PI_STATE_ARMED_FROM_ACTIVE:
		pi->linkspeed_portstate |= IB_PORT_ARMED;
		break;
	case PI_STATE_5:
		pi->linkspeed_portstate |= 5;
		break;
	case PI_PORT_2:
		f->in->mad_hdr.attr_mod = cpu_to_be32(2);
		break;
	}
	mad_expect_reply(test, f, mad_run(f, 1),
			 IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(mad_out_pi(f)->lid), lid);
	KUNIT_EXPECT_NE(test, be16_to_cpu(mad_out_pi(f)->sm_lid), 0x0d0d);
	KUNIT_EXPECT_EQ(test, port->lid, lid);
	KUNIT_EXPECT_NE(test, port->sm_lid, 0x0d0d);
	KUNIT_EXPECT_EQ(test, port->state, IB_PORT_ACTIVE);
	KUNIT_EXPECT_EQ(test, port->phys_state, IB_PORT_PHYS_STATE_LINK_UP);
	KUNIT_EXPECT_EQ(test, port->mtu, IB_MTU_4096);
	KUNIT_EXPECT_EQ(test, port->events, events);
}

/* Set PortState and PortPhysicalState as ibportstate does */
static u16 mad_set_state(struct kunit *test, struct mad_fixture *f,
			 u8 state, u8 phys)
{
	mad_port_info_for_set(test, f);
	mad_in_pi(f)->linkspeed_portstate |= state;
	mad_in_pi(f)->portphysstate_linkdown |= phys << 4;
	KUNIT_EXPECT_EQ(test, mad_run(f, 1), REPLY);
	return be16_to_cpu(f->out->mad_hdr.status);
}

/*
 * The port's state machine through SubnSet(PortInfo) (IBA 7.2): Down
 * retrains the link to Init, Init -> Armed -> Active; Disabled takes the
 * link down until Polling enables it; PORT_ERR when the port leaves
 * Active, PORT_ACTIVE when it comes back. The debugfs link knob does the
 * same for a pulled cable.
 */
static void rsim_mad_test_port_states(struct kunit *test)
{
	struct mad_fixture *f = mad_fixture(test);
	struct rsim_kunit_ev_count *ev = rsim_kunit_ev_count(test, f->rsim);
	struct rsim_port *port = &f->rsim->port;
	struct ib_port_attr attr;
	enum ib_port_state cached;

	mad_port_save(test, f->rsim);
	KUNIT_EXPECT_EQ(test, mad_set_state(test, f, IB_PORT_DOWN, 0), 0);
	KUNIT_EXPECT_EQ(test, port->state, IB_PORT_INIT);
	KUNIT_EXPECT_EQ(test, rsim_kunit_ev_seen(ev, IB_EVENT_PORT_ERR), 1);
	KUNIT_ASSERT_EQ(test, ib_query_port(&f->rsim->ibdev, 1, &attr), 0);
	KUNIT_EXPECT_EQ(test, attr.state, IB_PORT_INIT);
	/* the core's cache followed the event */
	KUNIT_ASSERT_EQ(test, ib_get_cached_port_state(&f->rsim->ibdev, 1,
						       &cached), 0);
	KUNIT_EXPECT_EQ(test, cached, IB_PORT_INIT);
	/* Active only from Armed */
	KUNIT_EXPECT_EQ(test, mad_set_state(test, f, IB_PORT_ACTIVE, 0),
			IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE);
	KUNIT_EXPECT_EQ(test, mad_set_state(test, f, IB_PORT_ARMED, 0), 0);
	KUNIT_EXPECT_EQ(test, port->state, IB_PORT_ARMED);
	KUNIT_EXPECT_EQ(test, rsim_kunit_ev_seen(ev, IB_EVENT_PORT_ACTIVE), 0);
	KUNIT_EXPECT_EQ(test, mad_set_state(test, f, IB_PORT_ACTIVE, 0), 0);
	KUNIT_EXPECT_EQ(test, port->state, IB_PORT_ACTIVE);
	KUNIT_EXPECT_EQ(test, rsim_kunit_ev_seen(ev, IB_EVENT_PORT_ACTIVE), 1);

	/* Disabled: down until enabled (Polling), then Init */
	KUNIT_EXPECT_EQ(test, mad_set_state(test, f, 0,
					    IB_PORT_PHYS_STATE_DISABLED), 0);
	KUNIT_EXPECT_EQ(test, port->state, IB_PORT_DOWN);
	KUNIT_EXPECT_EQ(test, port->phys_state, IB_PORT_PHYS_STATE_DISABLED);
	KUNIT_EXPECT_EQ(test, rsim_kunit_ev_seen(ev, IB_EVENT_PORT_ERR), 2);
	KUNIT_EXPECT_EQ(test, mad_set_state(test, f, IB_PORT_ARMED, 0),
			IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE);
	KUNIT_EXPECT_EQ(test, mad_set_state(test, f, IB_PORT_DOWN, 0), 0);
	KUNIT_EXPECT_EQ(test, port->state, IB_PORT_DOWN);
	KUNIT_EXPECT_EQ(test, mad_set_state(test, f, 0,
					    IB_PORT_PHYS_STATE_POLLING), 0);
	KUNIT_EXPECT_EQ(test, port->state, IB_PORT_INIT);
	KUNIT_EXPECT_EQ(test, port->phys_state, IB_PORT_PHYS_STATE_LINK_UP);

	/* the cable: pulled (Down, Polling), plugged back (Active) */
	rsim_port_set_link(f->rsim, true);
	KUNIT_EXPECT_EQ(test, rsim_kunit_ev_seen(ev, IB_EVENT_PORT_ACTIVE), 2);
	rsim_port_set_link(f->rsim, false);
	KUNIT_EXPECT_EQ(test, port->state, IB_PORT_DOWN);
	KUNIT_EXPECT_EQ(test, port->phys_state, IB_PORT_PHYS_STATE_POLLING);
	KUNIT_EXPECT_EQ(test, rsim_kunit_ev_seen(ev, IB_EVENT_PORT_ERR), 3);
	rsim_port_set_link(f->rsim, true);
	KUNIT_EXPECT_EQ(test, port->state, IB_PORT_ACTIVE);
	KUNIT_EXPECT_EQ(test, rsim_kunit_ev_seen(ev, IB_EVENT_PORT_ACTIVE), 3);
	KUNIT_ASSERT_EQ(test, ib_query_port(&f->rsim->ibdev, 1, &attr), 0);
	KUNIT_EXPECT_EQ(test, attr.state, IB_PORT_ACTIVE);
	KUNIT_EXPECT_EQ(test, attr.phys_state, IB_PORT_PHYS_STATE_LINK_UP);
}

#define MAD_MKEY	0x0123456789abcdefULL

/**
 * struct mad_mkey_case - an SMP against a port with an M_Key
 * @name: case name
 * @prot: the port's M_KeyProtectBits
 * @method: Get or Set
 * @match: the SMP carries the port's M_Key
 * @answered: the SMA answers (else the SMP is dropped and counted)
 * @mkey_shown: a Get's PortInfo shows the M_Key
 */
struct mad_mkey_case {
	const char *name;
	u8 prot;
	u8 method;
	bool match;
	bool answered;
	bool mkey_shown;
};

/* IBA 14.2.4.3, table 134 */
static const struct mad_mkey_case mad_mkey_cases[] = {
	{ "prot0_get_wrong_key", 0, IB_MGMT_METHOD_GET, false, true, true },
	{ "prot0_set_wrong_key", 0, IB_MGMT_METHOD_SET, false, false },
	{ "prot1_get_wrong_key", 1, IB_MGMT_METHOD_GET, false, true, false },
	{ "prot1_set_wrong_key", 1, IB_MGMT_METHOD_SET, false, false },
	{ "prot2_get_wrong_key", 2, IB_MGMT_METHOD_GET, false, false },
	{ "prot2_set_wrong_key", 2, IB_MGMT_METHOD_SET, false, false },
	{ "prot3_get_wrong_key", 3, IB_MGMT_METHOD_GET, false, false },
	{ "prot3_get_right_key", 3, IB_MGMT_METHOD_GET, true, true, true },
	{ "prot3_set_right_key", 3, IB_MGMT_METHOD_SET, true, true, true },
};

static void mad_mkey_desc(const struct mad_mkey_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(mad_mkey, mad_mkey_cases, mad_mkey_desc);

/* the port gets MAD_MKEY with @prot and @lease through SubnSet */
static void mad_set_mkey(struct kunit *test, struct mad_fixture *f, u8 prot,
			 u16 lease)
{
	mad_port_info_for_set(test, f);
	mad_in_pi(f)->mkey = cpu_to_be64(MAD_MKEY);
	mad_in_pi(f)->mkeyprot_resv_lmc = prot << 6;
	mad_in_pi(f)->mkey_lease_period = cpu_to_be16(lease);
	mad_expect_reply(test, f, mad_run(f, 1), 0);
	KUNIT_ASSERT_EQ(test, f->rsim->port.mkey_prot, prot);
	KUNIT_ASSERT_EQ(test, be64_to_cpu(f->rsim->port.mkey), MAD_MKEY);
}

/*
 * M_Key protection levels: a mismatched SMP is answered or dropped as the
 * level says, and each drop counts in M_KeyViolations; a Get at level 1
 * is answered with the M_Key hidden. Kernel-internal MADs that ask to
 * skip the check (IB_MAD_IGNORE_MKEY) always pass.
 */
static void rsim_mad_test_mkey(struct kunit *test)
{
	const struct mad_mkey_case *c = test->param_value;
	struct mad_fixture *f = mad_fixture(test);
	struct ib_smp *in = (struct ib_smp *)f->in;
	size_t size = sizeof(*f->out);
	u16 viol, pkey_index = 0;
	int ret;

	mad_port_save(test, f->rsim);
	mad_set_mkey(test, f, c->prot, 0);
	viol = f->rsim->port.mkey_viol;

	mad_port_info_for_set(test, f);	/* a Get with the right key */
	in->mkey = c->match ? cpu_to_be64(MAD_MKEY) : cpu_to_be64(1);
	in->method = c->method;
	ret = mad_run(f, 1);
	if (c->answered) {
		mad_expect_reply(test, f, ret, 0);
		if (c->method == IB_MGMT_METHOD_GET)
			KUNIT_EXPECT_EQ(test, be64_to_cpu(mad_out_pi(f)->mkey),
					c->mkey_shown ? MAD_MKEY : 0);
		KUNIT_EXPECT_EQ(test, f->rsim->port.mkey_viol, viol);
	} else {
		KUNIT_EXPECT_EQ(test, ret, IB_MAD_RESULT_SUCCESS |
					   IB_MAD_RESULT_CONSUMED);
		KUNIT_EXPECT_EQ(test, f->rsim->port.mkey_viol, viol + 1);
		/* a dropped Set changed nothing */
		KUNIT_EXPECT_EQ(test, f->rsim->port.mkey_prot, c->prot);
	}
	/* the kernel's own MADs skip the check */
	in->method = IB_MGMT_METHOD_GET;
	in->mkey = 0;
	ret = f->rsim->ibdev.ops.process_mad(&f->rsim->ibdev,
					     IB_MAD_IGNORE_MKEY, 1, NULL,
					     NULL, f->in, f->out, &size,
					     &pkey_index);
	mad_expect_reply(test, f, ret, 0);
}

/*
 * The M_Key lease: a violation starts it; when it runs out with no SMP
 * carrying the M_Key, the protection bits are cleared (IBA 14.2.4.2) and
 * a Get with a wrong key is answered again. A right key stops the lease.
 */
static void rsim_mad_test_mkey_lease(struct kunit *test)
{
	struct mad_fixture *f = mad_fixture(test);
	struct ib_smp *in = (struct ib_smp *)f->in;

	mad_port_save(test, f->rsim);
	mad_set_mkey(test, f, 2, 1);

	/* a violation starts the lease; the right key stops it */
	mad_init(f->in, IB_MGMT_CLASS_SUBN_LID_ROUTED, IB_MGMT_METHOD_GET,
		 IB_SMP_ATTR_NODE_INFO, 0);
	KUNIT_EXPECT_EQ(test, mad_run(f, 1),
			IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_CONSUMED);
	KUNIT_EXPECT_TRUE(test, f->rsim->port.mkey_lease_running);
	in->mkey = cpu_to_be64(MAD_MKEY);
	mad_expect_reply(test, f, mad_run(f, 1), 0);
	KUNIT_EXPECT_FALSE(test, f->rsim->port.mkey_lease_running);

	/* a violation, then the lease runs out */
	in->mkey = 0;
	KUNIT_EXPECT_EQ(test, mad_run(f, 1),
			IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_CONSUMED);
	msleep(1100);
	mad_expect_reply(test, f, mad_run(f, 1), 0);
	KUNIT_EXPECT_EQ(test, f->rsim->port.mkey_prot, 0);
	KUNIT_EXPECT_FALSE(test, f->rsim->port.mkey_lease_running);
}

/* SMInfo: the device's SM, MASTER or STANDBY as the subnet elected it */
static void rsim_mad_test_sm_info(struct kunit *test)
{
	struct mad_fixture *f = mad_fixture(test);
	u8 *d = ((struct ib_smp *)f->out)->data;
	u32 act;

	mad_init(f->in, IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE, IB_MGMT_METHOD_GET,
		 IB_SMP_ATTR_SM_INFO, 0);
	mad_expect_reply(test, f, mad_run(f, 1), 0);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(*(__be64 *)d),
			be64_to_cpu(f->rsim->port.guid));
	KUNIT_EXPECT_EQ(test, be64_to_cpu(*(__be64 *)(d + 8)), 0);
	/* priority 0, MASTER (3) or STANDBY (2) */
	KUNIT_EXPECT_EQ(test, d[20], f->rsim->port.sm_master ? 3 : 2);
	act = be32_to_cpu(*(__be32 *)(d + 16));
	mad_expect_reply(test, f, mad_run(f, 1), 0);
	/* ActCount counts the SMA's SMPs */
	KUNIT_EXPECT_EQ(test, be32_to_cpu(*(__be32 *)(d + 16)), act + 1);
}

static struct kunit_case rsim_mad_test_cases[] = {
	KUNIT_CASE(rsim_mad_test_node_info),
	KUNIT_CASE(rsim_mad_test_node_desc_dr),
	KUNIT_CASE(rsim_mad_test_port_info),
	KUNIT_CASE(rsim_mad_test_guid_and_pkeys),
	KUNIT_CASE_PARAM(rsim_mad_test_refused, mad_bad_gen_params),
	KUNIT_CASE(rsim_mad_test_not_ours),
	KUNIT_CASE(rsim_mad_test_pma_class_port_info),
	KUNIT_CASE(rsim_mad_test_pma_counters),
	KUNIT_CASE(rsim_mad_test_set_port_info),
	KUNIT_CASE_PARAM(rsim_mad_test_set_port_info_refused,
			 mad_pi_gen_params),
	KUNIT_CASE(rsim_mad_test_port_states),
	KUNIT_CASE_PARAM(rsim_mad_test_mkey, mad_mkey_gen_params),
	KUNIT_CASE_SLOW(rsim_mad_test_mkey_lease),
	KUNIT_CASE(rsim_mad_test_sm_info),
	RSIM_KUNIT_NO_LEFTOVERS,
	{}
};

static struct kunit_suite rsim_mad_test_suite = {
	.name = "rdmasim_mad",
	.suite_init = rsim_kunit_suite_init,
	.test_cases = rsim_mad_test_cases,
};

kunit_test_suite(rsim_mad_test_suite);
