// SPDX-License-Identifier: GPL-2.0-only
/*
 * Suite rdmasim_madcheck: process_mad against a table of every request
 * the SMA and PMA serve and a table of malformed or unsupported MADs,
 * each with the outcome the specification gives (the kernel's MAD layer,
 * smi.c and the process_mad of mlx4, mlx5 and hfi1 as references), then a
 * seeded fuzz run through process_mad and through QP1. Every MAD handed
 * over is allocated at exactly its size, so that the sanitizer reports
 * any access past it.
 */

#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/prandom.h>
#include <linux/slab.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_pma.h>
#include <rdma/ib_smi.h>

#include "helpers.h"

#define MC_MAD		sizeof(struct ib_mad)
#define MC_GRH		sizeof(struct ib_grh)
#define MC_REPLY	(IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY)
#define MC_FILL		0xee
/* completions a case expects: only a failing case waits this long */
#define MC_WAIT_MS	30000
#define MC_DR		IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE
#define MC_LR		IB_MGMT_CLASS_SUBN_LID_ROUTED
#define MC_PMA		IB_MGMT_CLASS_PERF_MGMT
#define MC_GET		IB_MGMT_METHOD_GET
#define MC_SET		IB_MGMT_METHOD_SET
/* methods ib_mad.h does not name on every supported kernel */
#define MC_METHOD_GET_TABLE	0x12
#define MC_METHOD_DELETE	0x15

/**
 * struct mc_fixture - the shared device and MADs of exactly their size
 * @rsim: the device
 * @in: the request
 * @out: room for the response
 * @out_len: bytes at @out
 */
struct mc_fixture {
	struct rsim_dev *rsim;
	struct ib_mad *in;
	void *out;
	size_t out_len;
};

static void mc_kfree(void *p)
{
	kfree(p);
}

/* kmalloc'd at exactly @len (no KUnit padding), freed with the test */
static void *mc_alloc(struct kunit *test, size_t len)
{
	void *p = kmalloc(len, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, mc_kfree, p));
	return p;
}

static struct mc_fixture *mc_fixture(struct kunit *test, size_t out_len)
{
	struct mc_fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, f);
	f->rsim = rsim_kunit_shared_dev(test);
	f->in = mc_alloc(test, MC_MAD);
	f->out = mc_alloc(test, out_len);
	f->out_len = out_len;
	return f;
}

/* a request as the MAD layer hands it over (DR: at the end of its path) */
static void mc_init(struct ib_mad *mad, u8 mgmt_class, u8 method,
		    __be16 attr, u32 attr_mod)
{
	struct ib_smp *smp = (struct ib_smp *)mad;

	memset(mad, 0, sizeof(*mad));
	mad->mad_hdr.base_version = IB_MGMT_BASE_VERSION;
	mad->mad_hdr.mgmt_class = mgmt_class;
	mad->mad_hdr.class_version = 1;
	mad->mad_hdr.method = method;
	mad->mad_hdr.tid = cpu_to_be64(0x5eed0000c0ffee01ULL);
	mad->mad_hdr.attr_id = attr;
	mad->mad_hdr.attr_mod = cpu_to_be32(attr_mod);
	if (mgmt_class == MC_DR) {
		/* smi_handle_dr_smp_send() made HopPointer HopCount + 1 */
		smp->hop_ptr = 1;
		smp->dr_slid = IB_LID_PERMISSIVE;
		smp->dr_dlid = IB_LID_PERMISSIVE;
	}
	if (mgmt_class == MC_PMA)
		((struct ib_pma_mad *)mad)->data[1] = 1;	/* PortSelect */
}

/* process_mad on @port with @size room; @out filled with MC_FILL first */
static int mc_run(struct mc_fixture *f, u32 port, const struct ib_wc *wc,
		  size_t *size)
{
	u16 pkey_index = 0;

	memset(f->out, MC_FILL, f->out_len);
	return f->rsim->ibdev.ops.process_mad(&f->rsim->ibdev, 0, port, wc,
					      NULL, f->in, f->out, size,
					      &pkey_index);
}

static bool mc_untouched(const void *p, size_t from, size_t to)
{
	return !memchr_inv((const u8 *)p + from, MC_FILL, to - from);
}

/*
 * The response header: GetResp, the request's TID, attribute and
 * modifier, the status asked for. A directed-route response at its
 * destination (IBA 14.2.2.2) has the D bit set and HopCount, HopPointer,
 * DrSLID, DrDLID and both paths as the request had them: its way back
 * (C14-13:1 to :3, smi_handle_dr_smp_send()) starts from HopCount + 1;
 * qib, hfi1 and the MAD layer's generate_unmatched_resp() only set D.
 */
static void mc_expect_response(struct kunit *test, struct mc_fixture *f,
			       int ret, size_t size, u16 status)
{
	const struct ib_smp *in = (const struct ib_smp *)f->in;
	const struct ib_smp *out = f->out;
	u16 st = be16_to_cpu(out->status);

	KUNIT_ASSERT_EQ(test, ret, MC_REPLY);
	KUNIT_EXPECT_EQ(test, size, MC_MAD);
	KUNIT_EXPECT_EQ(test, out->base_version, IB_MGMT_BASE_VERSION);
	KUNIT_EXPECT_EQ(test, out->mgmt_class, in->mgmt_class);
	KUNIT_EXPECT_EQ(test, out->class_version, in->class_version);
	KUNIT_EXPECT_EQ(test, out->method, IB_MGMT_METHOD_GET_RESP);
	KUNIT_EXPECT_EQ(test, st & 0x7fff, status);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(out->tid), be64_to_cpu(in->tid));
	KUNIT_EXPECT_EQ(test, be16_to_cpu(out->attr_id),
			be16_to_cpu(in->attr_id));
	KUNIT_EXPECT_EQ(test, be32_to_cpu(out->attr_mod),
			be32_to_cpu(in->attr_mod));
	if (in->mgmt_class != MC_DR) {
		/* LID routed and GMPs: no D bit */
		KUNIT_EXPECT_EQ(test, st & 0x8000, 0);
		return;
	}
	KUNIT_EXPECT_TRUE(test, out->status & IB_SMP_DIRECTION);
	KUNIT_EXPECT_EQ(test, out->hop_cnt, in->hop_cnt);
	KUNIT_EXPECT_EQ(test, out->hop_ptr, in->hop_cnt + 1);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(out->dr_slid),
			be16_to_cpu(in->dr_slid));
	KUNIT_EXPECT_EQ(test, be16_to_cpu(out->dr_dlid),
			be16_to_cpu(in->dr_dlid));
	KUNIT_EXPECT_EQ(test, memcmp(out->initial_path, in->initial_path,
				     IB_SMP_MAX_PATH_HOPS), 0);
	KUNIT_EXPECT_EQ(test, memcmp(out->return_path, in->return_path,
				     IB_SMP_MAX_PATH_HOPS), 0);
}

/* what a served row checks in the response's data */
enum mc_key {
	MC_KEY_NODE_DESC, MC_KEY_NODE_INFO, MC_KEY_GUID, MC_KEY_PORT_INFO,
	MC_KEY_PKEY, MC_KEY_SM_INFO, MC_KEY_CPI, MC_KEY_PC, MC_KEY_PCX,
};

/**
 * struct mc_ok_case - a request the SMA or PMA serves
 * @name: row name
 * @mgmt_class: LID-routed or directed-route SMP, or PMA
 * @method: Get or Set
 * @attr: attribute
 * @attr_mod: attribute modifier
 * @hops: directed route: HopCount (the path goes out of port 1)
 * @port_select: PMA: PortSelect
 * @key: the data field checked
 */
struct mc_ok_case {
	const char *name;
	u8 mgmt_class;
	u8 method;
	__be16 attr;
	u32 attr_mod;
	u8 hops;
	u8 port_select;
	enum mc_key key;
};

static const struct mc_ok_case mc_ok_cases[] = {
	{ "sma_lr_node_desc", MC_LR, MC_GET, IB_SMP_ATTR_NODE_DESC, 0, 0, 0,
	  MC_KEY_NODE_DESC },
	{ "sma_dr_node_desc", MC_DR, MC_GET, IB_SMP_ATTR_NODE_DESC, 0, 0, 0,
	  MC_KEY_NODE_DESC },
	{ "sma_lr_node_info", MC_LR, MC_GET, IB_SMP_ATTR_NODE_INFO, 0, 0, 0,
	  MC_KEY_NODE_INFO },
	{ "sma_dr_node_info", MC_DR, MC_GET, IB_SMP_ATTR_NODE_INFO, 0, 0, 0,
	  MC_KEY_NODE_INFO },
	/* a longer path: what its way out left in the header comes back */
	{ "sma_dr_node_info_2_hops", MC_DR, MC_GET, IB_SMP_ATTR_NODE_INFO, 0,
	  2, 0, MC_KEY_NODE_INFO },
	/* C14-6: 63 hops is the longest path */
	{ "sma_dr_node_info_63_hops", MC_DR, MC_GET, IB_SMP_ATTR_NODE_INFO, 0,
	  63, 0, MC_KEY_NODE_INFO },
	{ "sma_lr_guid_info", MC_LR, MC_GET, IB_SMP_ATTR_GUID_INFO, 0, 0, 0,
	  MC_KEY_GUID },
	{ "sma_dr_guid_info", MC_DR, MC_GET, IB_SMP_ATTR_GUID_INFO, 0, 0, 0,
	  MC_KEY_GUID },
	/* PortInfo modifier 0: the port the SMP came in on (IBA 14.2.5.6) */
	{ "sma_lr_port_info_0", MC_LR, MC_GET, IB_SMP_ATTR_PORT_INFO, 0, 0, 0,
	  MC_KEY_PORT_INFO },
	{ "sma_lr_port_info_1", MC_LR, MC_GET, IB_SMP_ATTR_PORT_INFO, 1, 0, 0,
	  MC_KEY_PORT_INFO },
	{ "sma_dr_port_info_0", MC_DR, MC_GET, IB_SMP_ATTR_PORT_INFO, 0, 0, 0,
	  MC_KEY_PORT_INFO },
	{ "sma_dr_port_info_1", MC_DR, MC_GET, IB_SMP_ATTR_PORT_INFO, 1, 0, 0,
	  MC_KEY_PORT_INFO },
	{ "sma_lr_pkey_table", MC_LR, MC_GET, IB_SMP_ATTR_PKEY_TABLE, 0, 0, 0,
	  MC_KEY_PKEY },
	{ "sma_dr_pkey_table", MC_DR, MC_GET, IB_SMP_ATTR_PKEY_TABLE, 0, 0, 0,
	  MC_KEY_PKEY },
	{ "sma_lr_sm_info", MC_LR, MC_GET, IB_SMP_ATTR_SM_INFO, 0, 0, 0,
	  MC_KEY_SM_INFO },
	{ "sma_dr_sm_info", MC_DR, MC_GET, IB_SMP_ATTR_SM_INFO, 0, 0, 0,
	  MC_KEY_SM_INFO },
	{ "pma_get_class_port_info", MC_PMA, MC_GET, IB_PMA_CLASS_PORT_INFO, 0,
	  0, 0, MC_KEY_CPI },
	{ "pma_get_port_counters", MC_PMA, MC_GET, IB_PMA_PORT_COUNTERS, 0, 0,
	  1, MC_KEY_PC },
	{ "pma_get_port_counters_all", MC_PMA, MC_GET, IB_PMA_PORT_COUNTERS, 0,
	  0, 0xff, MC_KEY_PC },
	{ "pma_get_port_counters_ext", MC_PMA, MC_GET,
	  IB_PMA_PORT_COUNTERS_EXT, 0, 0, 1, MC_KEY_PCX },
	/* CounterSelect 0: the Sets clear nothing of the shared device */
	{ "pma_set_port_counters", MC_PMA, MC_SET, IB_PMA_PORT_COUNTERS, 0, 0,
	  1, MC_KEY_PC },
	{ "pma_set_port_counters_ext", MC_PMA, MC_SET,
	  IB_PMA_PORT_COUNTERS_EXT, 0, 0, 1, MC_KEY_PCX },
};

static void mc_ok_desc(const struct mc_ok_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(mc_ok, mc_ok_cases, mc_ok_desc);

static void mc_check_key(struct kunit *test, struct mc_fixture *f,
			 enum mc_key key, u8 port_select)
{
	struct rsim_dev *rsim = f->rsim;
	const struct ib_smp *smp = f->out;
	const u8 *pma = ((const struct ib_pma_mad *)f->out)->data;
	const struct ib_node_info *ni = (const void *)smp->data;
	const struct ib_port_info *pi = (const void *)smp->data;
	const struct ib_class_port_info *cpi = (const void *)pma;
	const struct ib_pma_portcounters *pc = (const void *)pma;
	const struct ib_pma_portcounters_ext *pcx = (const void *)pma;
	struct ib_port_attr attr;

	switch (key) {
	case MC_KEY_NODE_DESC:
		KUNIT_EXPECT_EQ(test, strncmp((const char *)smp->data,
					      rsim->ibdev.node_desc,
					      IB_DEVICE_NODE_DESC_MAX), 0);
		break;
	case MC_KEY_NODE_INFO:
		KUNIT_EXPECT_EQ(test, be64_to_cpu(ni->node_guid),
				be64_to_cpu(rsim->ibdev.node_guid));
		KUNIT_EXPECT_EQ(test, ni->node_type, RDMA_NODE_IB_CA);
		KUNIT_EXPECT_EQ(test, ni->num_ports, 1);
		break;
	case MC_KEY_GUID:
		KUNIT_EXPECT_EQ(test, be64_to_cpu(*(const __be64 *)smp->data),
				be64_to_cpu(rsim->port.guid));
		break;
	case MC_KEY_PORT_INFO:
		KUNIT_ASSERT_EQ(test, ib_query_port(&rsim->ibdev, 1, &attr), 0);
		KUNIT_EXPECT_EQ(test, be16_to_cpu(pi->lid), attr.lid);
		KUNIT_EXPECT_EQ(test, pi->local_port_num, 1);
		break;
	case MC_KEY_PKEY:
		KUNIT_EXPECT_EQ(test, be16_to_cpu(*(const __be16 *)smp->data),
				IB_DEFAULT_PKEY_FULL);
		break;
	case MC_KEY_SM_INFO:
		/*
		 * GUID, then SMState MASTER (3) or STANDBY (2) as the
		 * subnet elected it, priority 0, at byte 20
		 */
		KUNIT_EXPECT_EQ(test, be64_to_cpu(*(const __be64 *)smp->data),
				be64_to_cpu(rsim->port.guid));
		KUNIT_EXPECT_EQ(test, smp->data[20],
				rsim->port.sm_master ? 3 : 2);
		break;
	case MC_KEY_CPI:
		KUNIT_EXPECT_EQ(test, cpi->base_version, IB_MGMT_BASE_VERSION);
		KUNIT_EXPECT_EQ(test, cpi->class_version, 1);
		break;
	case MC_KEY_PC:
		KUNIT_EXPECT_EQ(test, pc->port_select, port_select);
		break;
	case MC_KEY_PCX:
		KUNIT_EXPECT_EQ(test, pcx->port_select, port_select);
		break;
	}
}

/* Every request the agents serve: a response, status 0, the data. */
static void rsim_madcheck_test_served(struct kunit *test)
{
	const struct mc_ok_case *c = test->param_value;
	struct mc_fixture *f = mc_fixture(test, MC_MAD);
	struct ib_smp *smp = (struct ib_smp *)f->in;
	size_t size = MC_MAD;
	int ret, i;

	mc_init(f->in, c->mgmt_class, c->method, c->attr, c->attr_mod);
	if (c->mgmt_class == MC_DR) {
		smp->hop_cnt = c->hops;
		smp->hop_ptr = c->hops + 1;
		/* out of port 1 at every hop; ports it came in on */
		for (i = 1; i <= c->hops; i++) {
			smp->initial_path[i] = 1;
			smp->return_path[i] = i % 36 + 1;
		}
	}
	if (c->mgmt_class == MC_PMA)
		((struct ib_pma_mad *)f->in)->data[1] = c->port_select;
	ret = mc_run(f, 1, NULL, &size);
	mc_expect_response(test, f, ret, size, 0);
	mc_check_key(test, f, c->key, c->port_select);
}

/* what becomes of a malformed or unsupported MAD */
enum mc_outcome {
	MC_DROPPED,	/* IB_MAD_RESULT_FAILURE, nothing written */
	MC_PASSED,	/* IB_MAD_RESULT_SUCCESS alone, nothing written */
	MC_STATUS,	/* a GetResp with a MAD status */
};

/* how a row's request differs from a good one */
enum mc_mangle {
	MC_NONE,
	MC_BASE_VERSION,	/* @value */
	MC_CLASS_VERSION,	/* @value */
	MC_HOPS,		/* HopCount @value >> 8, HopPointer @value & 0xff */
	MC_D_BIT,		/* a request with the D bit set, HopPointer 0 */
	MC_PORT_SELECT,		/* PMA PortSelect @value */
	MC_PKEY_PAST_END,	/* the first P_Key block past the table */
	MC_BYTE_LEN,		/* a receive completion of @value bytes */
	MC_PORT,		/* process_mad on port @value */
	MC_OUT_SIZE,		/* @value bytes of room for the response */
	MC_REQ_STATUS,		/* the request carries status @value */
};

/**
 * struct mc_bad_case - a malformed or unsupported MAD and its outcome
 * @name: row name
 * @mgmt_class: class
 * @method: method
 * @attr: attribute
 * @attr_mod: attribute modifier
 * @mangle: what is wrong with it
 * @value: the mangle's value
 * @outcome: dropped, passed on, or answered with @status
 * @status: the response's MAD status (without the D bit)
 */
struct mc_bad_case {
	const char *name;
	u8 mgmt_class;
	u8 method;
	__be16 attr;
	u32 attr_mod;
	enum mc_mangle mangle;
	u32 value;
	enum mc_outcome outcome;
	u16 status;
};

#define MC_BAD_VERSION	IB_MGMT_MAD_STATUS_BAD_VERSION
#define MC_BAD_METHOD	IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD
#define MC_BAD_ATTR	IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB
#define MC_BAD_VALUE	IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE
#define MC_NI		IB_SMP_ATTR_NODE_INFO
#define MC_PC		IB_PMA_PORT_COUNTERS
#define MC_HOPS_OF(cnt, ptr)	((cnt) << 8 | (ptr))

static const struct mc_bad_case mc_bad_cases[] = {
	/*
	 * Base version: the MAD layer's validate_mad() drops every MAD
	 * but version 1 (and OPA's on OPA ports) before process_mad; mlx4,
	 * mlx5 and hfi1 drop them as well.
	 */
	{ "base_version_2", MC_LR, MC_GET, MC_NI, 0, MC_BASE_VERSION, 2,
	  MC_DROPPED },
	{ "base_version_opa", MC_LR, MC_GET, MC_NI, 0, MC_BASE_VERSION,
	  OPA_MGMT_BASE_VERSION, MC_DROPPED },
	{ "pma_base_version_0", MC_PMA, MC_GET, MC_PC, 0, MC_BASE_VERSION, 0,
	  MC_DROPPED },
	/* class version: status 1, "bad version" (IBA 13.4.7, Table 109) */
	{ "sma_lr_class_version_2", MC_LR, MC_GET, MC_NI, 0, MC_CLASS_VERSION,
	  2, MC_STATUS, MC_BAD_VERSION },
	{ "sma_dr_class_version_0", MC_DR, MC_GET, MC_NI, 0, MC_CLASS_VERSION,
	  0, MC_STATUS, MC_BAD_VERSION },
	{ "pma_class_version_2", MC_PMA, MC_GET, MC_PC, 0, MC_CLASS_VERSION, 2,
	  MC_STATUS, MC_BAD_VERSION },
	/* a request method the class does not have: status 2 */
	{ "sma_method_0x7f", MC_LR, 0x7f, MC_NI, 0, MC_NONE, 0, MC_STATUS,
	  MC_BAD_METHOD },
	{ "sma_method_delete", MC_LR, MC_METHOD_DELETE, MC_NI, 0, MC_NONE, 0,
	  MC_STATUS, MC_BAD_METHOD },
	{ "sma_dr_method_get_table", MC_DR, MC_METHOD_GET_TABLE, MC_NI, 0,
	  MC_NONE, 0, MC_STATUS, MC_BAD_METHOD },
	{ "pma_method_0x7f", MC_PMA, 0x7f, MC_PC, 0, MC_NONE, 0, MC_STATUS,
	  MC_BAD_METHOD },
	{ "pma_method_delete", MC_PMA, MC_METHOD_DELETE, MC_PC, 0, MC_NONE, 0,
	  MC_STATUS, MC_BAD_METHOD },
	/* Set of a Get-only attribute (IBA Table 145): status 3 */
	{ "sma_set_node_info", MC_LR, MC_SET, MC_NI, 0, MC_NONE, 0, MC_STATUS,
	  MC_BAD_ATTR },
	{ "sma_dr_set_node_info", MC_DR, MC_SET, MC_NI, 0, MC_NONE, 0,
	  MC_STATUS, MC_BAD_ATTR },
	{ "sma_set_node_desc", MC_LR, MC_SET, IB_SMP_ATTR_NODE_DESC, 0,
	  MC_NONE, 0, MC_STATUS, MC_BAD_ATTR },
	{ "pma_set_class_port_info", MC_PMA, MC_SET, IB_PMA_CLASS_PORT_INFO, 0,
	  MC_NONE, 0, MC_STATUS, MC_BAD_ATTR },
	/* an attribute the agent does not have: status 3 */
	{ "sma_switch_info", MC_LR, MC_GET, IB_SMP_ATTR_SWITCH_INFO, 0,
	  MC_NONE, 0, MC_STATUS, MC_BAD_ATTR },
	{ "sma_dr_notice", MC_DR, MC_GET, IB_SMP_ATTR_NOTICE, 0, MC_NONE, 0,
	  MC_STATUS, MC_BAD_ATTR },
	{ "sma_attr_0xff00", MC_LR, MC_GET, cpu_to_be16(0xff00), 0, MC_NONE, 0,
	  MC_STATUS, MC_BAD_ATTR },
	{ "pma_port_samples_control", MC_PMA, MC_GET,
	  IB_PMA_PORT_SAMPLES_CONTROL, 0, MC_NONE, 0, MC_STATUS, MC_BAD_ATTR },
	{ "pma_attr_0x00ff", MC_PMA, MC_GET, cpu_to_be16(0x00ff), 0, MC_NONE,
	  0, MC_STATUS, MC_BAD_ATTR },
	/* a modifier or field out of range: status 7 */
	{ "sma_guid_info_block_1", MC_LR, MC_GET, IB_SMP_ATTR_GUID_INFO, 1,
	  MC_NONE, 0, MC_STATUS, MC_BAD_VALUE },
	{ "sma_pkey_block_past_end", MC_LR, MC_GET, IB_SMP_ATTR_PKEY_TABLE, 0,
	  MC_PKEY_PAST_END, 0, MC_STATUS, MC_BAD_VALUE },
	{ "sma_pkey_block_0xffff", MC_DR, MC_GET, IB_SMP_ATTR_PKEY_TABLE,
	  0xffff, MC_NONE, 0, MC_STATUS, MC_BAD_VALUE },
	{ "sma_port_info_port_2", MC_LR, MC_GET, IB_SMP_ATTR_PORT_INFO, 2,
	  MC_NONE, 0, MC_STATUS, MC_BAD_VALUE },
	{ "sma_dr_port_info_port_255", MC_DR, MC_GET, IB_SMP_ATTR_PORT_INFO,
	  255, MC_NONE, 0, MC_STATUS, MC_BAD_VALUE },
	{ "pma_port_select_2", MC_PMA, MC_GET, MC_PC, 0, MC_PORT_SELECT, 2,
	  MC_STATUS, MC_BAD_VALUE },
	{ "pma_port_select_0", MC_PMA, MC_GET, MC_PC, 0, MC_PORT_SELECT, 0,
	  MC_STATUS, MC_BAD_VALUE },
	{ "pma_ext_port_select_2", MC_PMA, MC_SET, IB_PMA_PORT_COUNTERS_EXT, 0,
	  MC_PORT_SELECT, 2, MC_STATUS, MC_BAD_VALUE },
	/*
	 * Directed route, discarded as smi.c does before process_mad:
	 * C14-6 HopCount past 63; C14-9:5 a HopPointer past HopCount + 1;
	 * C14-9:2 an intermediate hop (a CA forwards nothing); a request
	 * with the D bit set is on its way back to the SM (C14-13:4).
	 */
	{ "dr_hop_cnt_64", MC_DR, MC_GET, MC_NI, 0, MC_HOPS,
	  MC_HOPS_OF(64, 65), MC_DROPPED },
	{ "dr_hop_cnt_255", MC_DR, MC_GET, MC_NI, 0, MC_HOPS,
	  MC_HOPS_OF(255, 0), MC_DROPPED },
	{ "dr_hop_ptr_past_end", MC_DR, MC_GET, MC_NI, 0, MC_HOPS,
	  MC_HOPS_OF(0, 2), MC_DROPPED },
	{ "dr_hop_ptr_255", MC_DR, MC_GET, MC_NI, 0, MC_HOPS,
	  MC_HOPS_OF(2, 255), MC_DROPPED },
	{ "dr_hop_ptr_intermediate", MC_DR, MC_GET, MC_NI, 0, MC_HOPS,
	  MC_HOPS_OF(2, 1), MC_DROPPED },
	{ "dr_hop_ptr_not_advanced", MC_DR, MC_GET, MC_NI, 0, MC_HOPS,
	  MC_HOPS_OF(0, 0), MC_DROPPED },
	{ "dr_returning_request", MC_DR, MC_GET, MC_NI, 0, MC_D_BIT, 0,
	  MC_DROPPED },
	/*
	 * Truncated: a MAD is always 256 bytes (IBA 13.4); a UD receive
	 * counts 40 bytes for the GRH before it. The full length answers.
	 */
	{ "truncated_255", MC_LR, MC_GET, MC_NI, 0, MC_BYTE_LEN,
	  40 + 255, MC_DROPPED },
	{ "truncated_pma_header", MC_PMA, MC_GET, MC_PC, 0, MC_BYTE_LEN,
	  40 + 24, MC_DROPPED },
	{ "truncated_no_grh_room", MC_DR, MC_GET, MC_NI, 0, MC_BYTE_LEN, 256,
	  MC_DROPPED },
	{ "full_length", MC_PMA, MC_GET, MC_PC, 0, MC_BYTE_LEN, 40 + 256,
	  MC_STATUS, 0 },
	/* a request's status is not the response's */
	{ "request_with_status", MC_LR, MC_GET, MC_NI, 0, MC_REQ_STATUS,
	  0x7fff, MC_STATUS, 0 },
	/*
	 * Not the agents' to answer (responses, traps; IBA 13.4.6.2):
	 * passed on to the MAD layer's agents, as mlx4 and mlx5 do.
	 */
	{ "sma_get_resp", MC_LR, IB_MGMT_METHOD_GET_RESP, MC_NI, 0, MC_NONE, 0,
	  MC_PASSED },
	{ "sma_dr_get_resp", MC_DR, IB_MGMT_METHOD_GET_RESP, MC_NI, 0,
	  MC_D_BIT, 0, MC_PASSED },
	{ "sma_trap", MC_LR, IB_MGMT_METHOD_TRAP, IB_SMP_ATTR_NOTICE, 0,
	  MC_NONE, 0, MC_PASSED },
	{ "sma_trap_repress", MC_LR, IB_MGMT_METHOD_TRAP_REPRESS,
	  IB_SMP_ATTR_NOTICE, 0, MC_NONE, 0, MC_PASSED },
	{ "pma_get_resp", MC_PMA, IB_MGMT_METHOD_GET_RESP, MC_PC, 0, MC_NONE,
	  0, MC_PASSED },
	{ "pma_report_resp", MC_PMA, IB_MGMT_METHOD_REPORT_RESP, MC_PC, 0,
	  MC_NONE, 0, MC_PASSED },
	/* other classes are other agents' (the SA, the CM, vendors) */
	{ "class_sa", IB_MGMT_CLASS_SUBN_ADM, MC_GET, cpu_to_be16(0x11), 0,
	  MC_NONE, 0, MC_PASSED },
	{ "class_cm", IB_MGMT_CLASS_CM, IB_MGMT_METHOD_SEND,
	  cpu_to_be16(0x10), 0, MC_NONE, 0, MC_PASSED },
	{ "class_dev_mgt", IB_MGMT_CLASS_DEVICE_MGMT, MC_GET,
	  cpu_to_be16(0x10), 0, MC_NONE, 0, MC_PASSED },
	{ "class_vendor_0x09", 0x09, MC_GET, cpu_to_be16(0x10), 0, MC_NONE, 0, MC_PASSED },
	{ "class_vendor_0x30", IB_MGMT_CLASS_VENDOR_RANGE2_START, MC_GET,
	  cpu_to_be16(0x10), 0, MC_NONE, 0, MC_PASSED },
	/* not this port's, or no room: nothing written */
	{ "port_0", MC_LR, MC_GET, MC_NI, 0, MC_PORT, 0, MC_DROPPED },
	{ "port_2", MC_PMA, MC_GET, MC_PC, 0, MC_PORT, 2, MC_DROPPED },
	{ "out_size_255", MC_LR, MC_GET, MC_NI, 0, MC_OUT_SIZE, 255,
	  MC_DROPPED },
	{ "out_size_header", MC_PMA, MC_GET, MC_PC, 0, MC_OUT_SIZE, 24,
	  MC_DROPPED },
};

static void mc_bad_desc(const struct mc_bad_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(mc_bad, mc_bad_cases, mc_bad_desc);

static void rsim_madcheck_test_malformed(struct kunit *test)
{
	const struct mc_bad_case *c = test->param_value;
	size_t room = c->mangle == MC_OUT_SIZE ? c->value : MC_MAD;
	struct mc_fixture *f = mc_fixture(test, room);
	struct ib_smp *smp = (struct ib_smp *)f->in;
	struct ib_pma_mad *pma = (struct ib_pma_mad *)f->in;
	struct ib_wc wc = { .status = IB_WC_SUCCESS, .opcode = IB_WC_RECV,
			    .byte_len = MC_GRH + MC_MAD, .port_num = 1 };
	const struct ib_wc *in_wc = NULL;
	size_t size = room;
	u32 port = 1;
	int ret, i;

	mc_init(f->in, c->mgmt_class, c->method, c->attr, c->attr_mod);
	switch (c->mangle) {
	case MC_NONE:
		break;
	case MC_BASE_VERSION:
		smp->base_version = c->value;
		break;
	case MC_CLASS_VERSION:
		smp->class_version = c->value;
		break;
	case MC_HOPS:
		smp->hop_cnt = c->value >> 8;
		smp->hop_ptr = c->value & 0xff;
		break;
	case MC_D_BIT:
		/* on its way back, at the SM's end (C14-13:3, :4) */
		smp->status = IB_SMP_DIRECTION;
		smp->hop_ptr = 0;
		break;
	case MC_PORT_SELECT:
		pma->data[1] = c->value;
		break;
	case MC_PKEY_PAST_END:
		smp->attr_mod = cpu_to_be32(DIV_ROUND_UP(f->rsim->cfg.limits.pkey_tbl_len,
							 32));
		break;
	case MC_BYTE_LEN:
		wc.byte_len = c->value;
		in_wc = &wc;
		break;
	case MC_PORT:
		port = c->value;
		break;
	case MC_OUT_SIZE:
		break;
	case MC_REQ_STATUS:
		smp->status = cpu_to_be16(c->value);
		break;
	}

	ret = mc_run(f, port, in_wc, &size);
	if (c->outcome != MC_STATUS) {
		KUNIT_EXPECT_EQ(test, ret, c->outcome == MC_DROPPED ?
				IB_MAD_RESULT_FAILURE : IB_MAD_RESULT_SUCCESS);
		KUNIT_EXPECT_EQ(test, size, room);
		KUNIT_EXPECT_TRUE(test, mc_untouched(f->out, 0, room));
		return;
	}
	mc_expect_response(test, f, ret, size, c->status);
	/* a refused SMP answers nothing but the header */
	if (c->status && c->mgmt_class != MC_PMA)
		for (i = 0; i < IB_SMP_DATA_SIZE; i++)
			KUNIT_ASSERT_EQ(test, ((struct ib_smp *)f->out)->data[i],
					0);
}

/* More room than a MAD: the response is 256 bytes, the rest untouched. */
static void rsim_madcheck_test_out_larger(struct kunit *test)
{
	struct mc_fixture *f = mc_fixture(test, 2 * MC_MAD);
	size_t size = 2 * MC_MAD;
	int ret;

	mc_init(f->in, MC_DR, MC_GET, IB_SMP_ATTR_PORT_INFO, 1);
	ret = mc_run(f, 1, NULL, &size);
	mc_expect_response(test, f, ret, size, 0);
	KUNIT_EXPECT_TRUE(test, mc_untouched(f->out, MC_MAD, 2 * MC_MAD));
	mc_check_key(test, f, MC_KEY_PORT_INFO, 0);
}

/*
 * The fuzz: MADs of random bytes whose header fields lean toward what
 * the agents serve, so that most reach the attribute code.
 */
#define MC_FUZZ_SEED		0x9d5eed09U
#define MC_FUZZ_DIRECT		20000
#define MC_FUZZ_QP1		256
#define MC_BATCH		32
#define MC_RECVS		64
#define MC_SLOT			(MC_GRH + MC_MAD)
#define MC_TID_MAGIC		0xf00dfa11ULL	/* no MAD agent's hi TID */

static u32 mc_pick(struct rnd_state *st, const u32 *v, size_t n)
{
	return v[prandom_u32_state(st) % n];
}

static const u32 mc_methods[] = {
	MC_GET, MC_GET, MC_GET, MC_GET, MC_SET, MC_SET,
	IB_MGMT_METHOD_GET_RESP, IB_MGMT_METHOD_TRAP,
	IB_MGMT_METHOD_TRAP_REPRESS, IB_MGMT_METHOD_SEND,
	IB_MGMT_METHOD_REPORT, MC_METHOD_GET_TABLE, MC_METHOD_DELETE, 0x7f,
	0x100,	/* any */
};

/* NodeDesc, NodeInfo, GUIDInfo, PortInfo, PKeyTable twice; others; any */
static const u32 mc_smp_attrs[] = {
	0x0010, 0x0011, 0x0014, 0x0015, 0x0016, 0x0010, 0x0011, 0x0014,
	0x0015, 0x0016, 0x0012, 0x0020, 0x0002, 0x0001, 0x10000,
};

/* ClassPortInfo, PortCounters, PortCountersExtended twice; others; any */
static const u32 mc_pma_attrs[] = {
	0x0001, 0x0012, 0x001d, 0x0001, 0x0012, 0x001d, 0x0010, 0x0011,
	0x10000,
};

/*
 * Directly: every kind. Through QP1 no SA or CM MAD, which the kernel's own
 * agents would take (this is not their test); SMPs, which validate_mad()
 * drops on QP1, and classes no agent registered for.
 */
static const u32 mc_direct_classes[] = {
	MC_LR, MC_LR, MC_LR, MC_DR, MC_DR, MC_DR, MC_PMA, MC_PMA, MC_PMA,
	IB_MGMT_CLASS_SUBN_ADM, IB_MGMT_CLASS_CM, IB_MGMT_CLASS_DEVICE_MGMT,
	0x09, 0x30, 0x100,
};

static const u32 mc_qp1_classes[] = {
	MC_PMA, MC_PMA, MC_PMA, MC_PMA, MC_PMA, MC_PMA, MC_PMA, MC_PMA,
	IB_MGMT_CLASS_BM, IB_MGMT_CLASS_DEVICE_MGMT, IB_MGMT_CLASS_SNMP,
	0x09, 0x30, IB_MGMT_CLASS_CONG_MGMT, MC_LR, MC_DR,
};

static void mc_random_mad(struct rnd_state *st, struct ib_mad *mad,
			  u32 mgmt_class)
{
	struct ib_mad_hdr *h = &mad->mad_hdr;
	struct ib_smp *smp = (struct ib_smp *)mad;
	u32 r = prandom_u32_state(st), v;

	prandom_bytes_state(st, mad, sizeof(*mad));
	if (r % 32)
		h->base_version = IB_MGMT_BASE_VERSION;
	if (mgmt_class < 0x100)
		h->mgmt_class = mgmt_class;
	if ((r >> 5) % 8)
		h->class_version = 1;
	v = mc_pick(st, mc_methods, ARRAY_SIZE(mc_methods));
	if (v < 0x100)
		h->method = v;
	if (h->mgmt_class == MC_PMA)
		v = mc_pick(st, mc_pma_attrs, ARRAY_SIZE(mc_pma_attrs));
	else
		v = mc_pick(st, mc_smp_attrs, ARRAY_SIZE(mc_smp_attrs));
	if (v < 0x10000)
		h->attr_id = cpu_to_be16(v);
	if ((r >> 8) % 2)
		h->attr_mod = cpu_to_be32((r >> 9) % 4);
	if (h->mgmt_class == MC_DR && (r >> 11) % 4) {
		/* at the end of a good path, D clear */
		smp->hop_cnt = (r >> 13) % IB_SMP_MAX_PATH_HOPS;
		smp->hop_ptr = smp->hop_cnt + 1;
		smp->status &= ~IB_SMP_DIRECTION;
	}
	if (h->mgmt_class == MC_PMA && (r >> 19) % 4)
		((struct ib_pma_mad *)mad)->data[1] = (r >> 21) % 2 ? 1 : 0xff;
}

/* the flags a process_mad may return */
static bool mc_flags_valid(int ret)
{
	if (ret & ~(IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY |
		    IB_MAD_RESULT_CONSUMED))
		return false;
	if ((ret & IB_MAD_RESULT_REPLY) && (ret & IB_MAD_RESULT_CONSUMED))
		return false;
	return ret == IB_MAD_RESULT_FAILURE || (ret & IB_MAD_RESULT_SUCCESS);
}

/*
 * Through process_mad: random requests, receive completions (none, or
 * any byte count) and GRHs (none or random), port and room.
 */
static void mc_fuzz_direct(struct kunit *test, struct rsim_dev *rsim,
			   struct rnd_state *st)
{
	struct ib_mad *in = mc_alloc(test, MC_MAD);
	struct ib_mad *out = mc_alloc(test, MC_MAD);
	struct ib_grh *grh = mc_alloc(test, MC_GRH);
	struct ib_wc *wc = mc_alloc(test, sizeof(*wc));
	unsigned int n[4] = {}, status0 = 0, failed = 0;
	ktime_t t0 = ktime_get();
	int i;

	for (i = 0; i < MC_FUZZ_DIRECT && failed < 5; i++) {
		u32 r = prandom_u32_state(st);
		size_t size = r % 16 ? MC_MAD : (r >> 4) % MC_MAD;
		u32 port = (r >> 12) % 16 ? 1 : (r >> 16) % 4;
		u16 pkey_index = 0;
		int ret;

		mc_random_mad(st, in, mc_pick(st, mc_direct_classes,
					      ARRAY_SIZE(mc_direct_classes)));
		prandom_bytes_state(st, wc, sizeof(*wc));
		wc->wr_cqe = NULL;
		wc->qp = NULL;
		wc->byte_len = (r >> 20) % 4 ? MC_SLOT : (r >> 8) % 400;
		prandom_bytes_state(st, grh, sizeof(*grh));
		memset(out, MC_FILL, MC_MAD);
		ret = rsim->ibdev.ops.process_mad(&rsim->ibdev, 0, port,
						  (r >> 22) % 2 ? wc : NULL,
						  (r >> 23) % 2 ? grh : NULL,
						  in, out, &size, &pkey_index);
		if (!mc_flags_valid(ret)) {
			KUNIT_FAIL(test, "MAD %d: flags %#x", i, ret);
			failed++;
			continue;
		}
		if (ret & IB_MAD_RESULT_REPLY) {
			n[0]++;
			if (size != MC_MAD ||
			    out->mad_hdr.method != IB_MGMT_METHOD_GET_RESP ||
			    out->mad_hdr.tid != in->mad_hdr.tid ||
			    out->mad_hdr.mgmt_class != in->mad_hdr.mgmt_class) {
				KUNIT_FAIL(test,
					   "MAD %d: reply size %zu method %#x class %#x",
					   i, size, out->mad_hdr.method,
					   out->mad_hdr.mgmt_class);
				failed++;
			}
			status0 += !(out->mad_hdr.status & cpu_to_be16(0x7fff));
		} else if (ret & IB_MAD_RESULT_CONSUMED) {
			n[1]++;
		} else if (ret & IB_MAD_RESULT_SUCCESS) {
			n[2]++;
		} else {
			n[3]++;
		}
	}
	kunit_info(test,
		   "process_mad: %d MADs in %lld ms: %u replies (%u status 0), %u consumed, %u passed on, %u dropped\n",
		   i, ktime_ms_delta(ktime_get(), t0), n[0], status0, n[1],
		   n[2], n[3]);
	/* the bias reached every outcome and the attribute code */
	KUNIT_EXPECT_GT(test, status0, MC_FUZZ_DIRECT / 50U);
	KUNIT_EXPECT_GT(test, n[0] - status0, 0U);
	KUNIT_EXPECT_GT(test, n[2], 0U);
	KUNIT_EXPECT_GT(test, n[3], 0U);
}

/**
 * struct mc_qp1 - a UD QP that sends MADs to QP1 and takes the replies
 * @rsim: the device
 * @qp: the QP (Q_Key IB_QP1_QKEY, so that QP1's replies are accepted)
 * @ah: to the port's own LID
 * @scq: send completions
 * @rcq: receive completions
 * @sbuf: MC_BATCH send slots of a MAD
 * @rbuf: MC_RECVS receive slots of a GRH and a MAD
 * @sdma: @sbuf's DMA address
 * @rdma: @rbuf's DMA address
 */
struct mc_qp1 {
	struct rsim_dev *rsim;
	struct ib_qp *qp;
	struct ib_ah *ah;
	struct ib_cq *scq;
	struct ib_cq *rcq;
	u8 *sbuf;
	u8 *rbuf;
	u64 sdma;
	u64 rdma;
};

/**
 * struct mc_map - a buffer mapped for the device
 * @dev: the device
 * @dma: DMA address
 * @len: bytes
 * @dir: direction
 */
struct mc_map {
	struct ib_device *dev;
	u64 dma;
	size_t len;
	enum dma_data_direction dir;
};

static void mc_unmap(void *arg)
{
	struct mc_map *m = arg;

	ib_dma_unmap_single(m->dev, m->dma, m->len, m->dir);
}

/* @len bytes kmalloc'd and mapped; unmapped and freed with the test */
static void *mc_map(struct kunit *test, struct rsim_dev *rsim, size_t len,
		    enum dma_data_direction dir, u64 *dma)
{
	struct mc_map *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	void *va = mc_alloc(test, len);

	KUNIT_ASSERT_NOT_NULL(test, m);
	m->dev = &rsim->ibdev;
	m->len = len;
	m->dir = dir;
	m->dma = ib_dma_map_single(m->dev, va, len, dir);
	KUNIT_ASSERT_EQ(test, ib_dma_mapping_error(m->dev, m->dma), 0);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, mc_unmap, m));
	*dma = m->dma;
	return va;
}

static void mc_qp_destroy(void *qp)
{
	ib_destroy_qp(qp);
}

static void mc_ah_destroy(void *ah)
{
	rdma_destroy_ah(ah, 0);
}

static void mc_qp1_init(struct kunit *test, struct mc_qp1 *q,
			struct rsim_dev *rsim)
{
	struct ib_pd *pd = rsim_kunit_pd(test, rsim);
	struct rdma_ah_attr ah = { .type = RDMA_AH_ATTR_TYPE_IB };
	struct ib_qp_init_attr qa = {
		.qp_type = IB_QPT_UD,
		.cap = { .max_send_wr = MC_BATCH, .max_recv_wr = MC_RECVS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.port_num = 1,
	};

	q->rsim = rsim;
	q->scq = rsim_kunit_cq(test, rsim, 2 * MC_BATCH);
	q->rcq = rsim_kunit_cq(test, rsim, 2 * MC_RECVS);
	/* the buffers are unmapped after the QP is gone (actions unwind) */
	q->sbuf = mc_map(test, rsim, MC_BATCH * MC_MAD, DMA_TO_DEVICE,
			 &q->sdma);
	q->rbuf = mc_map(test, rsim, MC_RECVS * MC_SLOT, DMA_FROM_DEVICE,
			 &q->rdma);

	qa.send_cq = q->scq;
	qa.recv_cq = q->rcq;
	q->qp = ib_create_qp(pd, &qa);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, q->qp);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, mc_qp_destroy,
							   q->qp));
	KUNIT_ASSERT_EQ(test, rsim_kunit_ud_to_rts(q->qp, IB_QP1_QKEY, 0), 0);

	rdma_ah_set_port_num(&ah, 1);
	rdma_ah_set_dlid(&ah, rsim->port.lid);
	q->ah = rdma_create_ah(pd, &ah, 0);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, q->ah);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, mc_ah_destroy,
							   q->ah));
}

static int mc_qp1_post_recv(struct mc_qp1 *q, u32 slot)
{
	struct ib_sge sge = { .addr = q->rdma + slot * MC_SLOT,
			      .length = MC_SLOT,
			      .lkey = q->qp->pd->local_dma_lkey };
	struct ib_recv_wr wr = { .wr_id = slot, .sg_list = &sge,
				 .num_sge = 1 };

	return ib_post_recv(q->qp, &wr, NULL);
}

static int mc_qp1_send(struct mc_qp1 *q, u32 slot, u32 len)
{
	struct ib_sge sge = { .addr = q->sdma + slot * MC_MAD, .length = len,
			      .lkey = q->qp->pd->local_dma_lkey };
	struct ib_ud_wr wr = {
		.wr.opcode = IB_WR_SEND,
		.wr.send_flags = IB_SEND_SIGNALED,
		.wr.wr_id = slot,
		.wr.sg_list = &sge,
		.wr.num_sge = 1,
		.ah = q->ah,
		.remote_qpn = 1,	/* QP1 (IB_QP1 is big-endian) */
		.remote_qkey = IB_QP1_QKEY,
	};

	return ib_post_send(q->qp, &wr.wr, NULL);
}

/*
 * Whether a MAD sent to QP1 is answered: validate_mad() drops a base
 * version but 1 and SMPs that are not on QP0; rdmasim's PMA answers
 * every request method (a status for those it has not); the MAD layer
 * answers a Get or Set of a class no agent registered for with
 * generate_unmatched_resp(); responses and traps are not answered; a
 * truncated MAD is dropped.
 */
static bool mc_qp1_answered(const struct ib_mad_hdr *h, u32 len)
{
	if (len < MC_MAD || h->base_version != IB_MGMT_BASE_VERSION ||
	    h->mgmt_class == MC_LR || h->mgmt_class == MC_DR ||
	    (h->method & IB_MGMT_METHOD_RESP) ||
	    h->method == IB_MGMT_METHOD_TRAP ||
	    h->method == IB_MGMT_METHOD_TRAP_REPRESS)
		return false;
	return h->mgmt_class == MC_PMA || h->method == MC_GET ||
	       h->method == MC_SET;
}

/* take one reply: from QP1, a response to a MAD of ours not yet answered */
static bool mc_qp1_reply(struct kunit *test, struct mc_qp1 *q,
			 const struct ib_wc *wc, const bool *want, bool *got,
			 const u8 *classes)
{
	const struct ib_mad_hdr *h;
	u64 tid;
	u32 i;

	if (wc->status != IB_WC_SUCCESS || wc->byte_len != MC_SLOT ||
	    wc->src_qp != 1 || wc->slid != q->rsim->port.lid) {
		KUNIT_FAIL(test, "reply: status %d, %u bytes, from QP %u",
			   wc->status, wc->byte_len, wc->src_qp);
		return false;
	}
	ib_dma_sync_single_for_cpu(&q->rsim->ibdev,
				   q->rdma + wc->wr_id * MC_SLOT, MC_SLOT,
				   DMA_FROM_DEVICE);
	h = (const void *)(q->rbuf + wc->wr_id * MC_SLOT + MC_GRH);
	tid = be64_to_cpu(h->tid);
	i = lower_32_bits(tid);
	if (upper_32_bits(tid) != MC_TID_MAGIC || i >= MC_FUZZ_QP1 ||
	    !want[i] || got[i] || h->mgmt_class != classes[i] ||
	    h->method != IB_MGMT_METHOD_GET_RESP ||
	    h->base_version != IB_MGMT_BASE_VERSION) {
		KUNIT_FAIL(test, "reply TID %#llx, class %#x, method %#x",
			   tid, h->mgmt_class, h->method);
		return false;
	}
	got[i] = true;
	ib_dma_sync_single_for_device(&q->rsim->ibdev,
				      q->rdma + wc->wr_id * MC_SLOT, MC_SLOT,
				      DMA_FROM_DEVICE);
	return mc_qp1_post_recv(q, wc->wr_id) == 0;
}

/* Through QP1, from a UD QP: the MAD layer takes them, answers come back. */
static void mc_fuzz_qp1(struct kunit *test, struct rsim_dev *rsim,
			struct rnd_state *st)
{
	struct mc_qp1 *q = kunit_kzalloc(test, sizeof(*q), GFP_KERNEL);
	bool *want = kunit_kcalloc(test, MC_FUZZ_QP1, sizeof(bool), GFP_KERNEL);
	bool *got = kunit_kcalloc(test, MC_FUZZ_QP1, sizeof(bool), GFP_KERNEL);
	u8 *classes = kunit_kzalloc(test, MC_FUZZ_QP1, GFP_KERNEL);
	struct ib_wc *wc = kunit_kcalloc(test, MC_BATCH, sizeof(*wc),
					 GFP_KERNEL);
	unsigned int expected = 0, replies = 0, truncated = 0, pma = 0;
	struct rsim_dp_stats before, after;
	u32 qviol, pviol, lens[MC_BATCH], qp1_rq;
	struct rsim_qp *qp1 = xa_load(&rsim->qp_xa, 1);
	unsigned long end;
	ktime_t t0;
	int i, j, n;

	KUNIT_ASSERT_NOT_NULL(test, q);
	KUNIT_ASSERT_NOT_NULL(test, want);
	KUNIT_ASSERT_NOT_NULL(test, got);
	KUNIT_ASSERT_NOT_NULL(test, classes);
	KUNIT_ASSERT_NOT_NULL(test, wc);
	/* the MAD layer's QP1, with its receive buffers posted */
	KUNIT_ASSERT_NOT_NULL(test, qp1);
	qp1_rq = READ_ONCE(qp1->rq.count);
	mc_qp1_init(test, q, rsim);
	for (i = 0; i < MC_RECVS; i++)
		KUNIT_ASSERT_EQ(test, mc_qp1_post_recv(q, i), 0);

	spin_lock_bh(&rsim->stats_lock);
	before = rsim->dp;
	spin_unlock_bh(&rsim->stats_lock);
	spin_lock_bh(&rsim->port.lock);
	qviol = rsim->port.qkey_viol;
	pviol = rsim->port.pkey_viol;
	spin_unlock_bh(&rsim->port.lock);

	t0 = ktime_get();
	for (i = 0; i < MC_FUZZ_QP1; i += MC_BATCH) {
		int batch = min(MC_BATCH, MC_FUZZ_QP1 - i);
		unsigned int want_now = 0;

		for (j = 0; j < batch; j++) {
			struct ib_mad *mad = (void *)(q->sbuf + j * MC_MAD);
			u32 r = prandom_u32_state(st);
			u32 len = r % 16 ? MC_MAD : 1 + (r >> 4) % (MC_MAD - 1);

			lens[j] = len;
			mc_random_mad(st, mad,
				      mc_pick(st, mc_qp1_classes,
					      ARRAY_SIZE(mc_qp1_classes)));
			mad->mad_hdr.tid = cpu_to_be64(MC_TID_MAGIC << 32 |
						       (i + j));
			classes[i + j] = mad->mad_hdr.mgmt_class;
			want[i + j] = mc_qp1_answered(&mad->mad_hdr, len);
			want_now += want[i + j];
			truncated += len < MC_MAD;
			pma += mad->mad_hdr.mgmt_class == MC_PMA;
		}
		ib_dma_sync_single_for_device(&rsim->ibdev, q->sdma,
					      MC_BATCH * MC_MAD, DMA_TO_DEVICE);
		for (j = 0; j < batch; j++)
			KUNIT_ASSERT_EQ(test, mc_qp1_send(q, j, lens[j]), 0);
		expected += want_now;
		/* every send completes */
		n = rsim_kunit_cq_wait(q->scq, wc, batch, MC_WAIT_MS);
		KUNIT_ASSERT_EQ(test, n, batch);
		for (j = 0; j < n; j++)
			KUNIT_ASSERT_EQ(test, wc[j].status, IB_WC_SUCCESS);
		/* and every answer comes back, nothing else */
		while (want_now) {
			n = rsim_kunit_cq_wait(q->rcq, wc, 1, MC_WAIT_MS);
			KUNIT_ASSERT_EQ_MSG(test, n, 1,
					    "%u replies missing (%llu WRs run, Q_Key violations %u)",
					    want_now, rsim->dp.wqes - before.wqes,
					    rsim->port.qkey_viol - qviol);
			KUNIT_ASSERT_TRUE(test, mc_qp1_reply(test, q, wc, want,
							     got, classes));
			want_now--;
			replies++;
		}
	}
	/* the MAD layer gave QP1 back every receive buffer */
	end = jiffies + 2 * HZ;
	while (READ_ONCE(qp1->rq.count) != qp1_rq && time_before(jiffies, end))
		usleep_range(1000, 2000);
	KUNIT_EXPECT_EQ(test, READ_ONCE(qp1->rq.count), qp1_rq);
	/* nothing late: unanswered MADs stay unanswered */
	msleep(20);
	KUNIT_EXPECT_EQ(test, ib_poll_cq(q->rcq, 1, wc), 0);

	spin_lock_bh(&rsim->stats_lock);
	after = rsim->dp;
	spin_unlock_bh(&rsim->stats_lock);
	kunit_info(test,
		   "QP1: %d MADs (%u PMA, %u truncated) in %lld ms: %u answers, %u expected\n",
		   MC_FUZZ_QP1, pma, truncated, ktime_ms_delta(ktime_get(), t0),
		   replies, expected);
	/* the device's books: every send and reply executed, none failed */
	KUNIT_EXPECT_EQ(test, after.errors, before.errors);
	KUNIT_EXPECT_GE(test, after.wqes - before.wqes,
			(u64)MC_FUZZ_QP1 + replies);
	KUNIT_EXPECT_EQ(test, replies, expected);
	KUNIT_EXPECT_GT(test, replies, MC_FUZZ_QP1 / 4U);
	KUNIT_EXPECT_EQ(test, rsim->port.qkey_viol, qviol);
	KUNIT_EXPECT_EQ(test, rsim->port.pkey_viol, pviol);
}

/*
 * Seeded and bounded: the same MADs every run (the seed is printed), on a
 * device of the case's own, so that whatever a Set the SMA grows does to
 * its port stays there. QP1 first, then process_mad directly.
 */
static void rsim_madcheck_test_fuzz(struct kunit *test)
{
	struct rsim_dev *rsim = rsim_kunit_dev(test, NULL);
	struct rnd_state st;

	kunit_info(test, "seed %#x\n", MC_FUZZ_SEED);
	prandom_seed_state(&st, MC_FUZZ_SEED);
	mc_fuzz_qp1(test, rsim, &st);
	mc_fuzz_direct(test, rsim, &st);
}

static struct kunit_case rsim_madcheck_test_cases[] = {
	KUNIT_CASE_PARAM(rsim_madcheck_test_served, mc_ok_gen_params),
	KUNIT_CASE_PARAM(rsim_madcheck_test_malformed, mc_bad_gen_params),
	KUNIT_CASE(rsim_madcheck_test_out_larger),
	KUNIT_CASE_SLOW(rsim_madcheck_test_fuzz),
	RSIM_KUNIT_NO_LEFTOVERS,
	{}
};

static struct kunit_suite rsim_madcheck_test_suite = {
	.name = "rdmasim_madcheck",
	.suite_init = rsim_kunit_suite_init,
	.test_cases = rsim_madcheck_test_cases,
};

kunit_test_suite(rsim_madcheck_test_suite);
