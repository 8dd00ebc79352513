// SPDX-License-Identifier: GPL-2.0-only
/*
 * Suite rdmasim_mad: the SMA and PMA behind process_mad. MADs are built
 * here and handed to the device's process_mad as the MAD layer and sysfs
 * do; every refusal must be a response with the right MAD status.
 */

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
	{ "smp_set_port_info", IB_MGMT_CLASS_SUBN_LID_ROUTED, 1,
	  IB_MGMT_METHOD_SET, IB_SMP_ATTR_PORT_INFO, 1,
	  IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB },
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

static struct kunit_case rsim_mad_test_cases[] = {
	KUNIT_CASE(rsim_mad_test_node_info),
	KUNIT_CASE(rsim_mad_test_node_desc_dr),
	KUNIT_CASE(rsim_mad_test_port_info),
	KUNIT_CASE(rsim_mad_test_guid_and_pkeys),
	KUNIT_CASE_PARAM(rsim_mad_test_refused, mad_bad_gen_params),
	KUNIT_CASE(rsim_mad_test_not_ours),
	KUNIT_CASE(rsim_mad_test_pma_class_port_info),
	KUNIT_CASE(rsim_mad_test_pma_counters),
	RSIM_KUNIT_NO_LEFTOVERS,
	{}
};

static struct kunit_suite rsim_mad_test_suite = {
	.name = "rdmasim_mad",
	.suite_init = rsim_kunit_suite_init,
	.test_cases = rsim_mad_test_cases,
};

kunit_test_suite(rsim_mad_test_suite);
