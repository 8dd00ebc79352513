// SPDX-License-Identifier: GPL-2.0-only
/*
 * Suite rdmasim_fabric: the simulated fabric (fabric.c) and the switches'
 * agents (switch.c). The control operations' errnos and what a link does
 * to the ports at its ends; the switch SMA's attributes, Get and Set, with
 * the MAD status of each bad request; LID routing through two switches'
 * forwarding tables, with the drops a wire makes (no entry, a port not
 * Active, a loop); directed-route SMPs hop by hop to a switch and to a CA
 * and back, and the ones the switch side of C14-9/C14-13 drops; a
 * LID-routed SMP answered by a switch's SMA; multicast through the MFTs,
 * each CA once. Each case leaves the flat subnet and the built-in SM as
 * they were.
 */

#include <rdma/ib_mad.h>
#include <rdma/ib_pma.h>
#include <rdma/ib_smi.h>

#include "helpers.h"

/* back to the flat subnet, the built-in SM on (a case's last action) */
static void fab_restore(void *unused)
{
	rsim_fabric_reset();
	rsim_fabric_set_sm(true);
}

static void fab_cleanup(struct kunit *test)
{
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, fab_restore,
							   NULL));
}

static void fab_switch_free(void *sw)
{
	rsim_sw_free(sw);
}

/* a switch of no fabric, for the SMA alone */
static struct rsim_switch *fab_lone_switch(struct kunit *test, u8 nports)
{
	struct rsim_switch *sw = rsim_sw_alloc("lone", nports, 63);

	KUNIT_ASSERT_NOT_NULL(test, sw);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test,
							   fab_switch_free,
							   sw));
	return sw;
}

static void fab_smp(struct ib_smp *smp, u8 class, u8 method, __be16 attr,
		    u32 mod)
{
	memset(smp, 0, sizeof(*smp));
	smp->base_version = IB_MGMT_BASE_VERSION;
	smp->mgmt_class = class;
	smp->class_version = 1;
	smp->method = method;
	smp->attr_id = attr;
	smp->attr_mod = cpu_to_be32(mod);
	smp->dr_slid = IB_LID_PERMISSIVE;
	smp->dr_dlid = IB_LID_PERMISSIVE;
}

/* the SMA's answer to a LID-routed SMP on port @in: its MAD status */
static u16 fab_sma(struct kunit *test, struct rsim_switch *sw,
		   struct ib_smp *smp, u8 in)
{
	KUNIT_ASSERT_TRUE(test, rsim_sw_sma(sw, smp, in));
	KUNIT_EXPECT_EQ(test, smp->method, IB_MGMT_METHOD_GET_RESP);
	return be16_to_cpu(smp->status) & ~0x8000;
}

static u16 fab_get(struct kunit *test, struct rsim_switch *sw,
		   struct ib_smp *smp, __be16 attr, u32 mod)
{
	fab_smp(smp, IB_MGMT_CLASS_SUBN_LID_ROUTED, IB_MGMT_METHOD_GET, attr,
		mod);
	return fab_sma(test, sw, smp, 1);
}

/* a Set of @data (64 bytes) */
static u16 fab_set(struct kunit *test, struct rsim_switch *sw,
		   struct ib_smp *smp, __be16 attr, u32 mod, const u8 *data)
{
	fab_smp(smp, IB_MGMT_CLASS_SUBN_LID_ROUTED, IB_MGMT_METHOD_SET, attr,
		mod);
	memcpy(smp->data, data, IB_SMP_DATA_SIZE);
	return fab_sma(test, sw, smp, 1);
}

/* a switch port's PortState, as PortInfo says */
static u8 fab_port_state(struct kunit *test, struct rsim_switch *sw, u8 port)
{
	struct ib_smp smp;

	KUNIT_EXPECT_EQ(test, fab_get(test, sw, &smp, IB_SMP_ATTR_PORT_INFO,
				      port), 0);
	return smp.data[32] & 0xf;
}

/* PortInfo Set of @port's PortState only */
static u16 fab_set_state(struct kunit *test, struct rsim_switch *sw,
			 u8 port, u8 state)
{
	struct ib_smp smp;
	u8 pi[IB_SMP_DATA_SIZE];

	KUNIT_EXPECT_EQ(test, fab_get(test, sw, &smp, IB_SMP_ATTR_PORT_INFO,
				      port), 0);
	memcpy(pi, smp.data, sizeof(pi));
	pi[32] = (pi[32] & 0xf0) | state;
	pi[33] &= 0x0f;		/* PortPhysicalState: no change */
	return fab_set(test, sw, &smp, IB_SMP_ATTR_PORT_INFO, port, pi);
}

/*
 * The control operations: what each refuses, with which errno, and that
 * a refused one changes nothing
 */
static void rsim_fabric_test_control_errnos(struct kunit *test)
{
	struct rsim_dev *a = rsim_kunit_shared_dev(test);
	const char *ca = a->cfg.name;
	struct rsim_switch *sw;

	fab_cleanup(test);
	KUNIT_EXPECT_TRUE(test, rsim_fabric_sm_on());
	KUNIT_EXPECT_EQ(test, PTR_ERR(rsim_fabric_switch_add("", 4)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(rsim_fabric_switch_add("kx", 0)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(rsim_fabric_switch_add("kx", 37)),
			-EINVAL);
	sw = rsim_fabric_switch_add("kx", 4);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, sw);
	KUNIT_EXPECT_EQ(test, PTR_ERR(rsim_fabric_switch_add("kx", 4)),
			-EEXIST);
	/* the built-in SM programs no switch: no links while it is on */
	KUNIT_EXPECT_EQ(test, rsim_fabric_link_add(ca, 1, "kx", 1), -EBUSY);
	KUNIT_EXPECT_FALSE(test, rsim_fabric_member(a));
	KUNIT_EXPECT_EQ(test, rsim_fabric_set_sm(false), 0);
	KUNIT_EXPECT_FALSE(test, rsim_fabric_sm_on());
	KUNIT_EXPECT_EQ(test, rsim_fabric_link_add("nosuch", 1, "kx", 1),
			-ENODEV);
	KUNIT_EXPECT_EQ(test, rsim_fabric_link_add(ca, 1, "kx", 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, rsim_fabric_link_add(ca, 1, "kx", 5), -EINVAL);
	KUNIT_EXPECT_EQ(test, rsim_fabric_link_add(ca, 2, "kx", 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, rsim_fabric_link_add("kx", 1, "kx", 1), -EINVAL);
	KUNIT_EXPECT_FALSE(test, rsim_fabric_member(a));
	KUNIT_EXPECT_EQ(test, rsim_fabric_link_add("kx", 1, "kx", 2), 0);
	KUNIT_EXPECT_EQ(test, rsim_fabric_link_add(ca, 1, "kx", 1), -EBUSY);
	KUNIT_EXPECT_EQ(test, rsim_fabric_link_add(ca, 1, "kx", 3), 0);
	KUNIT_EXPECT_TRUE(test, rsim_fabric_member(a));
	KUNIT_EXPECT_EQ(test, rsim_fabric_link_add(ca, 1, "kx", 4), -EBUSY);
	/* CAs in the fabric: the built-in SM cannot come back */
	KUNIT_EXPECT_EQ(test, rsim_fabric_set_sm(true), -EBUSY);
	KUNIT_EXPECT_FALSE(test, rsim_fabric_sm_on());
	KUNIT_EXPECT_EQ(test, rsim_fabric_link_del("kx", 2), 0);
	KUNIT_EXPECT_EQ(test, rsim_fabric_link_del("kx", 1), -ENOTCONN);
	KUNIT_EXPECT_EQ(test, rsim_fabric_link_del("kx", 9), -EINVAL);
	KUNIT_EXPECT_EQ(test, rsim_fabric_switch_del("nosuch"), -ENODEV);
	KUNIT_EXPECT_EQ(test, rsim_fabric_switch_del("kx"), 0);
	/* the CA's link went with the switch; it is still in the fabric */
	KUNIT_EXPECT_EQ(test, READ_ONCE(a->port.state), IB_PORT_DOWN);
	KUNIT_EXPECT_TRUE(test, rsim_fabric_member(a));
	rsim_fabric_reset();
	KUNIT_EXPECT_FALSE(test, rsim_fabric_member(a));
	KUNIT_EXPECT_EQ(test, READ_ONCE(a->port.state), IB_PORT_ACTIVE);
	KUNIT_EXPECT_EQ(test, rsim_fabric_set_sm(true), 0);
}

/*
 * A link trains both ends (Init, LinkUp; the switch's PortStateChange),
 * a CA keeps its LID; a cut one takes both Down (Polling)
 */
static void rsim_fabric_test_link_states(struct kunit *test)
{
	struct rsim_dev *a = rsim_kunit_shared_dev(test);
	u16 lid = READ_ONCE(a->port.lid);
	struct rsim_switch *sw, *sw2;
	struct ib_smp smp;
	u8 si[IB_SMP_DATA_SIZE];

	fab_cleanup(test);
	KUNIT_ASSERT_EQ(test, rsim_fabric_set_sm(false), 0);
	sw = rsim_fabric_switch_add("kl", 2);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, sw);
	KUNIT_EXPECT_EQ(test, fab_port_state(test, sw, 1), IB_PORT_DOWN);
	KUNIT_EXPECT_EQ(test, fab_port_state(test, sw, 0), IB_PORT_ACTIVE);
	KUNIT_ASSERT_EQ(test, rsim_fabric_link_add(a->cfg.name, 1, "kl", 1), 0);
	KUNIT_EXPECT_EQ(test, READ_ONCE(a->port.state), IB_PORT_INIT);
	KUNIT_EXPECT_EQ(test, READ_ONCE(a->port.phys_state),
			IB_PORT_PHYS_STATE_LINK_UP);
	KUNIT_EXPECT_EQ(test, READ_ONCE(a->port.lid), lid);
	KUNIT_EXPECT_EQ(test, fab_port_state(test, sw, 1), IB_PORT_INIT);
	KUNIT_EXPECT_EQ(test, fab_get(test, sw, &smp, IB_SMP_ATTR_SWITCH_INFO,
				      0), 0);
	KUNIT_EXPECT_TRUE(test, smp.data[11] & 0x04);
	/* PortStateChange: writing 1 clears it */
	memcpy(si, smp.data, sizeof(si));
	KUNIT_EXPECT_EQ(test, fab_set(test, sw, &smp, IB_SMP_ATTR_SWITCH_INFO,
				      0, si), 0);
	KUNIT_EXPECT_FALSE(test, smp.data[11] & 0x04);
	/* Init, Armed, Active, one step at a time */
	KUNIT_EXPECT_EQ(test, fab_set_state(test, sw, 1, IB_PORT_ACTIVE),
			IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE);
	KUNIT_EXPECT_EQ(test, fab_port_state(test, sw, 1), IB_PORT_INIT);
	KUNIT_EXPECT_EQ(test, fab_set_state(test, sw, 1, IB_PORT_ARMED), 0);
	KUNIT_EXPECT_EQ(test, fab_set_state(test, sw, 1, IB_PORT_ACTIVE), 0);
	KUNIT_EXPECT_EQ(test, fab_port_state(test, sw, 1), IB_PORT_ACTIVE);
	/* Down retrains: both ends back in Init */
	KUNIT_EXPECT_EQ(test, fab_set_state(test, sw, 1, IB_PORT_DOWN), 0);
	KUNIT_EXPECT_EQ(test, fab_port_state(test, sw, 1), IB_PORT_INIT);
	KUNIT_EXPECT_EQ(test, READ_ONCE(a->port.state), IB_PORT_INIT);
	/* a port with no link goes nowhere */
	KUNIT_EXPECT_EQ(test, fab_set_state(test, sw, 2, IB_PORT_ARMED),
			IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE);
	/*
	 * with a LID, an SM LID (a's) and a route to it, the switch sends
	 * trap 128 to a's QP0 when the link goes, and again
	 */
	KUNIT_EXPECT_EQ(test, fab_get(test, sw, &smp, IB_SMP_ATTR_PORT_INFO, 0),
			0);
	memcpy(si, smp.data, sizeof(si));
	*(__be16 *)&si[16] = cpu_to_be16(0x60);
	*(__be16 *)&si[18] = cpu_to_be16(lid);
	KUNIT_EXPECT_EQ(test, fab_set(test, sw, &smp, IB_SMP_ATTR_PORT_INFO, 0,
				      si), 0);
	KUNIT_EXPECT_EQ(test, fab_get(test, sw, &smp, IB_SMP_ATTR_SWITCH_INFO,
				      0), 0);
	memcpy(si, smp.data, sizeof(si));
	*(__be16 *)&si[6] = cpu_to_be16(lid);
	KUNIT_EXPECT_EQ(test, fab_set(test, sw, &smp, IB_SMP_ATTR_SWITCH_INFO,
				      0, si), 0);
	memset(si, 0xff, sizeof(si));
	si[lid % 64] = 1;
	KUNIT_EXPECT_EQ(test, fab_set(test, sw, &smp,
				      IB_SMP_ATTR_LINEAR_FORWARD_TABLE, lid / 64,
				      si), 0);
	KUNIT_EXPECT_EQ(test, rsim_fabric_link_del("kl", 2), -ENOTCONN);
	KUNIT_EXPECT_EQ(test, atomic64_read(&sw->traps), 0);
	KUNIT_EXPECT_EQ(test, rsim_fabric_link_add("kl", 2, "kl", 2), -EINVAL);
	/* a second link on the switch: its coming is a PortStateChange */
	sw2 = rsim_fabric_switch_add("km", 1);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, sw2);
	KUNIT_EXPECT_EQ(test, rsim_fabric_link_add("kl", 2, "km", 1), 0);
	KUNIT_EXPECT_GE(test, atomic64_read(&sw->traps), 1);
	KUNIT_EXPECT_EQ(test, sw->trap_left, RSIM_TRAP_TRIES - 1);
	KUNIT_EXPECT_EQ(test, rsim_fabric_link_del("kl", 1), 0);
	KUNIT_EXPECT_EQ(test, READ_ONCE(a->port.state), IB_PORT_DOWN);
	KUNIT_EXPECT_EQ(test, READ_ONCE(a->port.phys_state),
			IB_PORT_PHYS_STATE_POLLING);
	KUNIT_EXPECT_EQ(test, fab_port_state(test, sw, 1), IB_PORT_DOWN);
}

/* The switch SMA's attributes, and the status of each bad request */
static void rsim_fabric_test_switch_sma(struct kunit *test)
{
	struct rsim_switch *sw = fab_lone_switch(test, 20);
	struct ib_node_info *ni;
	struct ib_smp smp;
	u8 data[IB_SMP_DATA_SIZE];
	__be16 *masks;
	u32 i;

	KUNIT_EXPECT_EQ(test, fab_get(test, sw, &smp, IB_SMP_ATTR_NODE_INFO, 0),
			0);
	ni = (struct ib_node_info *)smp.data;
	KUNIT_EXPECT_EQ(test, ni->node_type, RDMA_NODE_IB_SWITCH);
	KUNIT_EXPECT_EQ(test, ni->num_ports, 20);
	KUNIT_EXPECT_EQ(test, ni->local_port_num, 1);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(ni->port_guid), be64_to_cpu(sw->guid));
	KUNIT_EXPECT_EQ(test, be16_to_cpu(ni->device_id), RSIM_SW_DEVICE_ID);
	KUNIT_EXPECT_EQ(test, fab_get(test, sw, &smp, IB_SMP_ATTR_NODE_DESC, 0),
			0);
	KUNIT_EXPECT_STREQ(test, (char *)smp.data, "lone");
	/* a port with no link answers too: Down, Polling */
	KUNIT_EXPECT_EQ(test, fab_get(test, sw, &smp, IB_SMP_ATTR_PORT_INFO,
				      20), 0);
	KUNIT_EXPECT_EQ(test, smp.data[32] & 0xf, IB_PORT_DOWN);
	KUNIT_EXPECT_EQ(test, smp.data[33] >> 4, IB_PORT_PHYS_STATE_POLLING);
	KUNIT_EXPECT_EQ(test, fab_get(test, sw, &smp, IB_SMP_ATTR_PORT_INFO,
				      21), IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE);
	/* port 0's LID and SM LID, kept and read back */
	KUNIT_EXPECT_EQ(test, fab_get(test, sw, &smp, IB_SMP_ATTR_PORT_INFO, 0),
			0);
	memcpy(data, smp.data, sizeof(data));
	*(__be16 *)&data[16] = cpu_to_be16(0x40);
	*(__be16 *)&data[18] = cpu_to_be16(0x1);
	data[42] = 0x12;
	KUNIT_EXPECT_EQ(test, fab_set(test, sw, &smp, IB_SMP_ATTR_PORT_INFO, 0,
				      data), 0);
	KUNIT_EXPECT_EQ(test, rsim_sw_lid(sw), 0x40);
	KUNIT_EXPECT_EQ(test, be16_to_cpup((__be16 *)&smp.data[18]), 1);
	KUNIT_EXPECT_EQ(test, smp.data[42], 0x12);
	/* LMC, more VLs than VLCap: refused, nothing changed */
	data[34] = 1;
	*(__be16 *)&data[16] = cpu_to_be16(0x41);
	KUNIT_EXPECT_EQ(test, fab_set(test, sw, &smp, IB_SMP_ATTR_PORT_INFO, 0,
				      data), IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE);
	data[34] = 0;
	data[43] = 2 << 4;
	KUNIT_EXPECT_EQ(test, fab_set(test, sw, &smp, IB_SMP_ATTR_PORT_INFO, 0,
				      data), IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE);
	KUNIT_EXPECT_EQ(test, rsim_sw_lid(sw), 0x40);
	/* SwitchInfo: the caps, LinearFDBTop within them */
	KUNIT_EXPECT_EQ(test, fab_get(test, sw, &smp, IB_SMP_ATTR_SWITCH_INFO,
				      0), 0);
	KUNIT_EXPECT_EQ(test, be16_to_cpup((__be16 *)&smp.data[0]),
			RSIM_SW_LFT_CAP);
	KUNIT_EXPECT_EQ(test, be16_to_cpup((__be16 *)&smp.data[4]),
			RSIM_SW_MFT_CAP);
	memcpy(data, smp.data, sizeof(data));
	*(__be16 *)&data[6] = cpu_to_be16(RSIM_SW_LFT_CAP);
	KUNIT_EXPECT_EQ(test, fab_set(test, sw, &smp, IB_SMP_ATTR_SWITCH_INFO,
				      0, data),
			IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE);
	*(__be16 *)&data[6] = cpu_to_be16(0x80);
	KUNIT_EXPECT_EQ(test, fab_set(test, sw, &smp, IB_SMP_ATTR_SWITCH_INFO,
				      0, data), 0);
	KUNIT_EXPECT_EQ(test, READ_ONCE(sw->lin_top), 0x80);
	KUNIT_EXPECT_EQ(test, fab_get(test, sw, &smp, IB_SMP_ATTR_SWITCH_INFO,
				      1), IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE);
	/* LFT: a block set and read back; none past LinearFDBCap */
	for (i = 0; i < 64; i++)
		data[i] = i % 21;
	KUNIT_EXPECT_EQ(test, fab_set(test, sw, &smp,
				      IB_SMP_ATTR_LINEAR_FORWARD_TABLE, 1, data),
			0);
	KUNIT_EXPECT_EQ(test, rsim_sw_lft(sw, 64 + 5), 5);
	/* above LinearFDBTop: no entry */
	KUNIT_EXPECT_EQ(test, rsim_sw_lft(sw, 0x81), 0xff);
	KUNIT_EXPECT_EQ(test, fab_get(test, sw, &smp,
				      IB_SMP_ATTR_LINEAR_FORWARD_TABLE, 1), 0);
	KUNIT_EXPECT_EQ(test, smp.data[20], 20);
	KUNIT_EXPECT_EQ(test, fab_get(test, sw, &smp,
				      IB_SMP_ATTR_LINEAR_FORWARD_TABLE,
				      RSIM_SW_LFT_CAP / 64),
			IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE);
	/* MFT: position 1 is ports 16 to 31, of which 16 to 20 exist */
	masks = (__be16 *)data;
	memset(data, 0, sizeof(data));
	masks[3] = cpu_to_be16(0xffff);
	KUNIT_EXPECT_EQ(test, fab_set(test, sw, &smp,
				      IB_SMP_ATTR_MCAST_FORWARD_TABLE,
				      1 << 28 | 2, data), 0);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(((__be16 *)smp.data)[3]), 0x1f);
	KUNIT_EXPECT_EQ(test, READ_ONCE(sw->mft[2 * 32 + 3]),
			GENMASK_ULL(20, 16));
	KUNIT_EXPECT_EQ(test, fab_get(test, sw, &smp,
				      IB_SMP_ATTR_MCAST_FORWARD_TABLE,
				      2 << 28), IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE);
	KUNIT_EXPECT_EQ(test, fab_get(test, sw, &smp,
				      IB_SMP_ATTR_MCAST_FORWARD_TABLE,
				      RSIM_SW_MFT_CAP / 32),
			IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE);
	/* P_KeyTable: port 0's, the default partition at index 0 */
	KUNIT_EXPECT_EQ(test, fab_get(test, sw, &smp, IB_SMP_ATTR_PKEY_TABLE, 0),
			0);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(((__be16 *)smp.data)[0]), 0xffff);
	KUNIT_EXPECT_EQ(test, fab_get(test, sw, &smp, IB_SMP_ATTR_PKEY_TABLE,
				      1 << 16), IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE);
	/* what a switch does not have, bad versions and methods */
	KUNIT_EXPECT_EQ(test, fab_get(test, sw, &smp, IB_SMP_ATTR_SM_INFO, 0),
			IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB);
	KUNIT_EXPECT_EQ(test, fab_get(test, sw, &smp, IB_SMP_ATTR_GUID_INFO, 0),
			IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB);
	fab_smp(&smp, IB_MGMT_CLASS_SUBN_LID_ROUTED, IB_MGMT_METHOD_SET,
		IB_SMP_ATTR_NODE_INFO, 0);
	KUNIT_EXPECT_EQ(test, fab_sma(test, sw, &smp, 1),
			IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB);
	fab_smp(&smp, IB_MGMT_CLASS_SUBN_LID_ROUTED, IB_MGMT_METHOD_GET,
		IB_SMP_ATTR_NODE_INFO, 0);
	smp.class_version = 2;
	KUNIT_EXPECT_EQ(test, fab_sma(test, sw, &smp, 1),
			IB_MGMT_MAD_STATUS_BAD_VERSION);
	fab_smp(&smp, IB_MGMT_CLASS_SUBN_LID_ROUTED, IB_MGMT_METHOD_SEND,
		IB_SMP_ATTR_NODE_INFO, 0);
	KUNIT_EXPECT_EQ(test, fab_sma(test, sw, &smp, 1),
			IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD);
	/* a directed-route answer carries the D bit */
	fab_smp(&smp, IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE, IB_MGMT_METHOD_GET,
		IB_SMP_ATTR_NODE_INFO, 0);
	KUNIT_EXPECT_TRUE(test, rsim_sw_sma(sw, &smp, 7));
	KUNIT_EXPECT_EQ(test, be16_to_cpu(smp.status), 0x8000);
	KUNIT_EXPECT_EQ(test, ((struct ib_node_info *)smp.data)->local_port_num,
			7);
	/*
	 * no answer to a TrapRepress; one with the pending trap's TID ends
	 * its repeats, another does not
	 */
	sw->trap_tid = 0x3f00000007ULL;
	sw->trap_left = 3;
	fab_smp(&smp, IB_MGMT_CLASS_SUBN_LID_ROUTED,
		IB_MGMT_METHOD_TRAP_REPRESS, IB_SMP_ATTR_NOTICE, 0);
	smp.tid = cpu_to_be64(0x3f00000006ULL);
	KUNIT_EXPECT_FALSE(test, rsim_sw_sma(sw, &smp, 1));
	KUNIT_EXPECT_EQ(test, sw->trap_left, 3);
	smp.tid = cpu_to_be64(0x3f00000007ULL);
	KUNIT_EXPECT_FALSE(test, rsim_sw_sma(sw, &smp, 1));
	KUNIT_EXPECT_EQ(test, sw->trap_left, 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&sw->represses), 1);
	fab_smp(&smp, IB_MGMT_CLASS_SUBN_LID_ROUTED, IB_MGMT_METHOD_GET_RESP,
		IB_SMP_ATTR_NODE_INFO, 0);
	KUNIT_EXPECT_FALSE(test, rsim_sw_sma(sw, &smp, 1));
	KUNIT_EXPECT_GE(test, atomic64_read(&sw->sma_errors), 10);
}

/* The switch PMA: counters of one port or all, cleared by a Set */
static void rsim_fabric_test_switch_pma(struct kunit *test)
{
	struct rsim_switch *sw = fab_lone_switch(test, 4);
	struct ib_pma_portcounters *pc;
	struct ib_class_port_info *cpi;
	struct ib_mad mad;

	atomic64_set(&sw->port[2].c.xmit_pkts, 7);
	atomic64_set(&sw->port[3].c.xmit_pkts, 5);
	atomic64_set(&sw->port[2].c.xmit_data, 400);
	memset(&mad, 0, sizeof(mad));
	mad.mad_hdr.base_version = IB_MGMT_BASE_VERSION;
	mad.mad_hdr.mgmt_class = IB_MGMT_CLASS_PERF_MGMT;
	mad.mad_hdr.class_version = 1;
	mad.mad_hdr.method = IB_MGMT_METHOD_GET;
	mad.mad_hdr.attr_id = IB_PMA_CLASS_PORT_INFO;
	KUNIT_ASSERT_TRUE(test, rsim_sw_pma(sw, &mad));
	KUNIT_EXPECT_EQ(test, be16_to_cpu(mad.mad_hdr.status), 0);
	cpi = (void *)((struct ib_pma_mad *)&mad)->data;
	KUNIT_EXPECT_TRUE(test, cpi->capability_mask &
			  IB_PMA_CLASS_CAP_ALLPORTSELECT);
	mad.mad_hdr.method = IB_MGMT_METHOD_GET;
	mad.mad_hdr.attr_id = IB_PMA_PORT_COUNTERS;
	pc = (void *)((struct ib_pma_mad *)&mad)->data;
	pc->port_select = 2;
	KUNIT_ASSERT_TRUE(test, rsim_sw_pma(sw, &mad));
	KUNIT_EXPECT_EQ(test, be16_to_cpu(mad.mad_hdr.status), 0);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(pc->port_xmit_packets), 7);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(pc->port_xmit_data), 100);
	mad.mad_hdr.method = IB_MGMT_METHOD_GET;
	pc->port_select = 0xff;
	KUNIT_ASSERT_TRUE(test, rsim_sw_pma(sw, &mad));
	KUNIT_EXPECT_EQ(test, be32_to_cpu(pc->port_xmit_packets), 12);
	mad.mad_hdr.method = IB_MGMT_METHOD_SET;
	pc->port_select = 2;
	pc->counter_select = IB_PMA_SEL_PORT_XMIT_PACKETS;
	KUNIT_ASSERT_TRUE(test, rsim_sw_pma(sw, &mad));
	KUNIT_EXPECT_EQ(test, be32_to_cpu(pc->port_xmit_packets), 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&sw->port[2].c.xmit_data), 400);
	mad.mad_hdr.method = IB_MGMT_METHOD_GET;
	pc->port_select = 5;
	KUNIT_ASSERT_TRUE(test, rsim_sw_pma(sw, &mad));
	KUNIT_EXPECT_EQ(test, be16_to_cpu(mad.mad_hdr.status),
			IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE);
	mad.mad_hdr.method = IB_MGMT_METHOD_GET;
	mad.mad_hdr.attr_id = IB_PMA_PORT_SAMPLES_CONTROL;
	KUNIT_ASSERT_TRUE(test, rsim_sw_pma(sw, &mad));
	KUNIT_EXPECT_EQ(test, be16_to_cpu(mad.mad_hdr.status),
			IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB);
}

/*
 * Two CAs through two switches: a -- kp:1, kp:2 -- kq:1, kq:2 -- b, and
 * kp:3 -- kq:3 (a second way). Port 0 of kp has LID 0x50.
 */
struct fab_pair {
	struct rsim_dev *a;
	struct rsim_dev *b;
	struct rsim_switch *p;
	struct rsim_switch *q;
};

static void fab_lft(struct kunit *test, struct rsim_switch *sw, u16 lid,
		    u8 port)
{
	struct ib_smp smp;
	u8 data[IB_SMP_DATA_SIZE];

	KUNIT_ASSERT_EQ(test, fab_get(test, sw, &smp,
				      IB_SMP_ATTR_LINEAR_FORWARD_TABLE,
				      lid / 64), 0);
	memcpy(data, smp.data, sizeof(data));
	data[lid % 64] = port;
	KUNIT_ASSERT_EQ(test, fab_set(test, sw, &smp,
				      IB_SMP_ATTR_LINEAR_FORWARD_TABLE,
				      lid / 64, data), 0);
}

static void fab_top(struct kunit *test, struct rsim_switch *sw)
{
	struct ib_smp smp;
	u8 data[IB_SMP_DATA_SIZE];

	KUNIT_ASSERT_EQ(test, fab_get(test, sw, &smp, IB_SMP_ATTR_SWITCH_INFO,
				      0), 0);
	memcpy(data, smp.data, sizeof(data));
	/* every unicast LID: KUnit's devices have LIDs above 1000 */
	*(__be16 *)&data[6] = cpu_to_be16(RSIM_SW_LFT_CAP - 1);
	KUNIT_ASSERT_EQ(test, fab_set(test, sw, &smp, IB_SMP_ATTR_SWITCH_INFO,
				      0, data), 0);
}

static void fab_activate(struct kunit *test, struct rsim_switch *sw, u8 port)
{
	KUNIT_ASSERT_EQ(test, fab_set_state(test, sw, port, IB_PORT_ARMED), 0);
	KUNIT_ASSERT_EQ(test, fab_set_state(test, sw, port, IB_PORT_ACTIVE), 0);
}

static struct fab_pair *fab_pair(struct kunit *test)
{
	struct fab_pair *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	struct ib_smp smp;
	u8 data[IB_SMP_DATA_SIZE];

	KUNIT_ASSERT_NOT_NULL(test, f);
	f->a = rsim_kunit_shared_dev(test);
	f->b = rsim_kunit_dev(test, NULL);
	fab_cleanup(test);
	KUNIT_ASSERT_EQ(test, rsim_fabric_set_sm(false), 0);
	f->p = rsim_fabric_switch_add("kp", 4);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, f->p);
	f->q = rsim_fabric_switch_add("kq", 4);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, f->q);
	KUNIT_ASSERT_EQ(test, rsim_fabric_link_add(f->a->cfg.name, 1, "kp", 1),
			0);
	KUNIT_ASSERT_EQ(test, rsim_fabric_link_add("kp", 2, "kq", 1), 0);
	KUNIT_ASSERT_EQ(test, rsim_fabric_link_add("kp", 3, "kq", 3), 0);
	KUNIT_ASSERT_EQ(test, rsim_fabric_link_add("kq", 2, f->b->cfg.name, 1),
			0);
	KUNIT_ASSERT_EQ(test, fab_get(test, f->p, &smp, IB_SMP_ATTR_PORT_INFO,
				      0), 0);
	memcpy(data, smp.data, sizeof(data));
	*(__be16 *)&data[16] = cpu_to_be16(0x50);
	KUNIT_ASSERT_EQ(test, fab_set(test, f->p, &smp, IB_SMP_ATTR_PORT_INFO,
				      0, data), 0);
	fab_top(test, f->p);
	fab_top(test, f->q);
	return f;
}

/*
 * LID routing: through the LFTs to the CA that has the LID; no entry, a
 * port in Init and a loop between the switches drop the packet, counted
 */
static void rsim_fabric_test_lid_routing(struct kunit *test)
{
	struct fab_pair *f = fab_pair(test);
	u16 la = READ_ONCE(f->a->port.lid), lb = READ_ONCE(f->b->port.lid);
	struct rsim_dev *to;
	s64 drops;

	KUNIT_EXPECT_TRUE(test, rsim_fabric_member(f->a));
	/* its own LID: the port's loopback, with no switch */
	KUNIT_EXPECT_PTR_EQ(test, rsim_fabric_route(f->a, la, 0), f->a);
	/* no LFT entry yet */
	drops = atomic64_read(&f->p->no_route);
	KUNIT_EXPECT_NULL(test, rsim_fabric_route(f->a, lb, 0));
	KUNIT_EXPECT_GT(test, atomic64_read(&f->p->no_route), drops);
	fab_lft(test, f->p, lb, 2);
	fab_lft(test, f->q, lb, 2);
	fab_lft(test, f->q, la, 1);
	fab_lft(test, f->p, la, 1);
	/* the switch ports are in Init: only SMPs cross them */
	KUNIT_EXPECT_NULL(test, rsim_fabric_route(f->a, lb, 0));
	fab_activate(test, f->p, 1);
	fab_activate(test, f->p, 2);
	fab_activate(test, f->q, 1);
	fab_activate(test, f->q, 2);
	to = rsim_fabric_route(f->a, lb, 100);
	KUNIT_EXPECT_PTR_EQ(test, to, f->b);
	rsim_subnet_put(f->a, to);
	to = rsim_fabric_route(f->b, la, 0);
	KUNIT_EXPECT_PTR_EQ(test, to, f->a);
	rsim_subnet_put(f->b, to);
	KUNIT_EXPECT_GE(test, atomic64_read(&f->p->port[2].c.xmit_data), 100);
	/* a loop: kq sends lb back over kp:3 -- kq:3, kp back to kq ... */
	fab_activate(test, f->p, 3);
	fab_activate(test, f->q, 3);
	fab_lft(test, f->q, lb, 3);
	fab_lft(test, f->p, lb, 3);
	drops = atomic64_read(&f->q->no_route) + atomic64_read(&f->p->no_route);
	KUNIT_EXPECT_NULL(test, rsim_fabric_route(f->a, lb, 0));
	KUNIT_EXPECT_GT(test, atomic64_read(&f->q->no_route) +
			atomic64_read(&f->p->no_route), drops);
	/* the cable pulled: no way through kp:2 either */
	fab_lft(test, f->p, lb, 2);
	fab_lft(test, f->q, lb, 2);
	KUNIT_EXPECT_EQ(test, rsim_fabric_link_del("kp", 2), 0);
	KUNIT_EXPECT_NULL(test, rsim_fabric_route(f->a, lb, 0));
	KUNIT_EXPECT_GT(test, atomic64_read(&f->p->port[2].c.xmit_discards), 0);
}

/* a DR SMP as the sending CA's MAD layer leaves it (HopPointer 1) */
static void fab_dr(struct ib_smp *smp, __be16 attr, const u8 *path, u8 hops)
{
	fab_smp(smp, IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE, IB_MGMT_METHOD_GET,
		attr, 0);
	smp->hop_cnt = hops;
	smp->hop_ptr = 1;
	memcpy(&smp->initial_path[1], path, hops);
}

/*
 * Directed route: to a switch two hops away and back, to a CA at the end
 * of a path; the drops of C14-9 (a bad hop pointer, a port that does not
 * exist or has no link)
 */
static void rsim_fabric_test_dr_smp(struct kunit *test)
{
	struct fab_pair *f = fab_pair(test);
	static const u8 to_q[] = { 1, 2 }, to_b[] = { 1, 2, 2 };
	static const u8 to_9[] = { 1, 9 }, to_4[] = { 1, 4 };
	struct rsim_fab_hit hit;
	struct ib_smp smp;
	s64 drops;

	fab_dr(&smp, IB_SMP_ATTR_NODE_INFO, to_q, 2);
	KUNIT_ASSERT_EQ(test, rsim_fabric_mad(f->a, 0, 0, 0xffff, &smp,
					      sizeof(smp), &hit), 0);
	KUNIT_EXPECT_PTR_EQ(test, hit.ca, f->a);
	KUNIT_EXPECT_EQ(test, hit.qpn, 0);
	KUNIT_EXPECT_EQ(test, hit.slid, 0xffff);
	KUNIT_EXPECT_EQ(test, smp.method, IB_MGMT_METHOD_GET_RESP);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(smp.status), 0x8000);
	/* for the CA's MAD layer, which takes it to 0 (C14-13:3) */
	KUNIT_EXPECT_EQ(test, smp.hop_ptr, 1);
	KUNIT_EXPECT_EQ(test, smp.return_path[1], 1);
	KUNIT_EXPECT_EQ(test, smp.return_path[2], 1);
	KUNIT_EXPECT_EQ(test,
			be64_to_cpu(((struct ib_node_info *)smp.data)->node_guid),
			be64_to_cpu(f->q->guid));
	KUNIT_EXPECT_EQ(test, ((struct ib_node_info *)smp.data)->local_port_num,
			1);
	rsim_subnet_put(f->a, hit.ca);

	/* to b: delivered to its QP0 with HopPointer at HopCount */
	fab_dr(&smp, IB_SMP_ATTR_NODE_INFO, to_b, 3);
	KUNIT_ASSERT_EQ(test, rsim_fabric_mad(f->a, 0, 0, 0xffff, &smp,
					      sizeof(smp), &hit), 0);
	KUNIT_EXPECT_PTR_EQ(test, hit.ca, f->b);
	KUNIT_EXPECT_EQ(test, smp.method, IB_MGMT_METHOD_GET);
	KUNIT_EXPECT_EQ(test, smp.hop_ptr, 3);
	KUNIT_EXPECT_EQ(test, smp.return_path[2], 1);
	rsim_subnet_put(f->a, hit.ca);

	drops = atomic64_read(&f->p->dr_drops);
	/* C14-9:1: the sender did not step the pointer */
	fab_dr(&smp, IB_SMP_ATTR_NODE_INFO, to_q, 2);
	smp.hop_ptr = 0;
	KUNIT_EXPECT_EQ(test, rsim_fabric_mad(f->a, 0, 0, 0xffff, &smp,
					      sizeof(smp), &hit), -ENOENT);
	/* a pointer past the path */
	fab_dr(&smp, IB_SMP_ATTR_NODE_INFO, to_q, 2);
	smp.hop_ptr = 9;
	KUNIT_EXPECT_EQ(test, rsim_fabric_mad(f->a, 0, 0, 0xffff, &smp,
					      sizeof(smp), &hit), -ENOENT);
	/* a port the switch does not have, a port with no link */
	fab_dr(&smp, IB_SMP_ATTR_NODE_INFO, to_9, 2);
	KUNIT_EXPECT_EQ(test, rsim_fabric_mad(f->a, 0, 0, 0xffff, &smp,
					      sizeof(smp), &hit), -ENOENT);
	fab_dr(&smp, IB_SMP_ATTR_NODE_INFO, to_4, 2);
	KUNIT_EXPECT_EQ(test, rsim_fabric_mad(f->a, 0, 0, 0xffff, &smp,
					      sizeof(smp), &hit), -ENOENT);
	/* HopCount 64 */
	fab_dr(&smp, IB_SMP_ATTR_NODE_INFO, to_q, 2);
	smp.hop_cnt = IB_SMP_MAX_PATH_HOPS;
	KUNIT_EXPECT_EQ(test, rsim_fabric_mad(f->a, 0, 0, 0xffff, &smp,
					      sizeof(smp), &hit), -ENOENT);
	KUNIT_EXPECT_GE(test, atomic64_read(&f->p->dr_drops), drops + 4);
}

/* A LID-routed SMP to a switch's LID: its SMA answers, back by LID */
static void rsim_fabric_test_lid_routed_smp(struct kunit *test)
{
	struct fab_pair *f = fab_pair(test);
	u16 la = READ_ONCE(f->a->port.lid);
	struct rsim_fab_hit hit;
	struct ib_smp smp;

	fab_lft(test, f->p, la, 1);
	fab_smp(&smp, IB_MGMT_CLASS_SUBN_LID_ROUTED, IB_MGMT_METHOD_GET,
		IB_SMP_ATTR_NODE_INFO, 0);
	KUNIT_ASSERT_EQ(test, rsim_fabric_mad(f->a, 0, 0, 0x50, &smp,
					      sizeof(smp), &hit), 0);
	KUNIT_EXPECT_PTR_EQ(test, hit.ca, f->a);
	KUNIT_EXPECT_EQ(test, hit.slid, 0x50);
	KUNIT_EXPECT_EQ(test, hit.qpn, 0);
	KUNIT_EXPECT_EQ(test, smp.method, IB_MGMT_METHOD_GET_RESP);
	KUNIT_EXPECT_EQ(test,
			be64_to_cpu(((struct ib_node_info *)smp.data)->node_guid),
			be64_to_cpu(f->p->guid));
	rsim_subnet_put(f->a, hit.ca);
	/* a switch has no agent for other classes on QP1 */
	fab_smp(&smp, IB_MGMT_CLASS_SUBN_ADM, IB_MGMT_METHOD_GET,
		IB_SMP_ATTR_NODE_INFO, 0);
	KUNIT_EXPECT_EQ(test, rsim_fabric_mad(f->a, 1, 1, 0x50, &smp,
					      sizeof(smp), &hit), -ENOENT);
}

static int fab_count_ca(struct rsim_dev *ca, void *arg)
{
	struct rsim_dev **seen = arg;

	if (seen[0] == ca)
		seen[1] = ca;	/* twice */
	seen[0] = ca;
	return 0;
}

/* Multicast through the MFTs, over a loop, reaches each CA once */
static void rsim_fabric_test_mcast(struct kunit *test)
{
	struct fab_pair *f = fab_pair(test);
	struct rsim_dev *seen[2] = {};
	struct ib_smp smp;
	u8 data[IB_SMP_DATA_SIZE] = {};
	__be16 *masks = (__be16 *)data;
	u8 p;

	for (p = 1; p <= 3; p++) {
		fab_activate(test, f->p, p);
		fab_activate(test, f->q, p);
	}
	/* MLID 0xc001: every port of both switches, the loop included */
	masks[1] = cpu_to_be16(0x1e);
	KUNIT_ASSERT_EQ(test, fab_set(test, f->p, &smp,
				      IB_SMP_ATTR_MCAST_FORWARD_TABLE, 0, data),
			0);
	KUNIT_ASSERT_EQ(test, fab_set(test, f->q, &smp,
				      IB_SMP_ATTR_MCAST_FORWARD_TABLE, 0, data),
			0);
	rsim_fabric_mcast(f->a, 0xc001, fab_count_ca, seen);
	KUNIT_EXPECT_PTR_EQ(test, seen[0], f->b);
	KUNIT_EXPECT_NULL(test, seen[1]);
	/* another MLID has no entry: nobody */
	seen[0] = NULL;
	rsim_fabric_mcast(f->a, 0xc002, fab_count_ca, seen);
	KUNIT_EXPECT_NULL(test, seen[0]);
	/* not a multicast LID */
	rsim_fabric_mcast(f->a, 0x10, fab_count_ca, seen);
	KUNIT_EXPECT_NULL(test, seen[0]);
}

static struct kunit_case rsim_fabric_test_cases[] = {
	KUNIT_CASE(rsim_fabric_test_control_errnos),
	KUNIT_CASE(rsim_fabric_test_link_states),
	KUNIT_CASE(rsim_fabric_test_switch_sma),
	KUNIT_CASE(rsim_fabric_test_switch_pma),
	KUNIT_CASE(rsim_fabric_test_lid_routing),
	KUNIT_CASE(rsim_fabric_test_dr_smp),
	KUNIT_CASE(rsim_fabric_test_lid_routed_smp),
	KUNIT_CASE(rsim_fabric_test_mcast),
	RSIM_KUNIT_NO_LEFTOVERS,
	{}
};

static struct kunit_suite rsim_fabric_test_suite = {
	.name = "rdmasim_fabric",
	.suite_init = rsim_kunit_suite_init,
	.test_cases = rsim_fabric_test_cases,
};

kunit_test_suite(rsim_fabric_test_suite);
