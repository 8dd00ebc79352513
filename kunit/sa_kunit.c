// SPDX-License-Identifier: GPL-2.0-only
/*
 * Suite rdmasim_sa: the subnet administrator (sa.c, mcast.c, sa_agent.c).
 * The suite's shared device and one made for each case are ports of the
 * subnet (with rdmasim0, when it is loaded). The SA's answers are asked
 * for directly (rsim_sa_answer(): records, component masks, selectors,
 * every IBA status; the multicast limits a port is held to, and the MLIDs
 * kept for IPoIB) and through the MAD layer by the core's own SA client
 * (ib_sa_path_rec_get() from the case's device to the master), with the
 * SA's drop, status and delay faults.
 */

#include <linux/completion.h>
#include <linux/delay.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_sa.h>

#include "helpers.h"

/* MCMemberRecord's fields (IBA 15.2.5.17), bytes */
#define MCM_PORT_GID	16
#define MCM_QKEY	32
#define MCM_MLID	36
#define MCM_MTU		38
#define MCM_PKEY	40
#define MCM_JOIN	48	/* Scope:4 JoinState:4 */
/* PathRecord's (IBA 15.2.5.16) */
#define PR_DGID		8
#define PR_SGID		24
#define PR_DLID		40
#define PR_SLID		42
#define PR_TCLASS	48
#define PR_PKEY		50
#define PR_MTU		54
#define PR_RATE		55
#define PR_PLT		56

#define C(n)		BIT_ULL(n)
/* PathRecord components */
#define PR_C_DGID	C(2)
#define PR_C_SGID	C(3)
#define PR_C_DLID	C(4)
#define PR_C_SLID	C(5)
#define PR_C_RAW	C(6)
#define PR_C_TCLASS	C(10)
#define PR_C_PKEY	C(13)
#define PR_C_MTU_SEL	C(16)
#define PR_C_MTU	C(17)
#define PR_C_RATE_SEL	C(18)
#define PR_C_RATE	C(19)
/* MCMemberRecord components */
#define MC_C_MGID	C(0)
#define MC_C_PORT_GID	C(1)
#define MC_C_QKEY	C(2)
#define MC_C_MTU_SEL	C(4)
#define MC_C_MTU	C(5)
#define MC_C_TCLASS	C(6)
#define MC_C_PKEY	C(7)
#define MC_C_SL		C(12)
#define MC_C_FLOW	C(13)
#define MC_C_JOIN	C(16)
#define MC_C_CREATE	(MC_C_QKEY | MC_C_TCLASS | MC_C_PKEY | MC_C_SL | \
			 MC_C_FLOW | MC_C_PORT_GID | MC_C_JOIN)

static const u8 sa_bcast[16] = {
	0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,
};

/* one request and its answer */
struct sa_q {
	u8 rec[IB_MGMT_SA_DATA];
	struct rsim_sa_query q;
	struct rsim_sa_answer a;
};

static void sa_q_free(void *data)
{
	rsim_sa_answer_free(&((struct sa_q *)data)->a);
}

static struct sa_q *sa_q(struct kunit *test)
{
	struct sa_q *s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, s);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, sa_q_free, s), 0);
	return s;
}

/* ask the SA; its status */
static u16 sa_ask(struct kunit *test, struct sa_q *s, u8 method, u16 attr,
		  u64 comp, struct rsim_dev *from)
{
	rsim_sa_answer_free(&s->a);
	s->q = (struct rsim_sa_query){
		.method = method,
		.attr_id = attr,
		.comp_mask = comp,
		.rec = s->rec,
		.slid = READ_ONCE(from->port.lid),
	};
	KUNIT_ASSERT_EQ(test, rsim_sa_answer(&s->q, &s->a), 0);
	if (s->a.status)
		KUNIT_EXPECT_EQ(test, s->a.count, 0);
	return s->a.status;
}

static u8 *sa_rec(struct sa_q *s, u32 i)
{
	return s->a.table + i * s->a.attr_offset * 8;
}

static u16 sa_lid(struct rsim_dev *rsim)
{
	return READ_ONCE(rsim->port.lid);
}

static void sa_put_gid(u8 *p, __be64 guid)
{
	union ib_gid *gid = (union ib_gid *)p;

	gid->global.subnet_prefix = cpu_to_be64(RSIM_GID_PREFIX);
	gid->global.interface_id = guid;
}

static u64 sa_gid_guid(const u8 *p)
{
	return be64_to_cpu(((const union ib_gid *)p)->global.interface_id);
}

static u64 sa_be64(const u8 *p)
{
	return be64_to_cpu(*(const __be64 *)p);
}

static u64 sa_guid(struct rsim_dev *rsim)
{
	return be64_to_cpu(rsim->port.guid);
}

static u16 sa_be16(const u8 *p)
{
	return be16_to_cpu(*(const __be16 *)p);
}

/* the shared device and the case's own */
static void sa_devs(struct kunit *test, struct rsim_dev **a,
		    struct rsim_dev **b)
{
	*a = rsim_kunit_shared_dev(test);
	*b = rsim_kunit_dev(test, NULL);
}

/*
 * ClassPortInfo: class version 2, SendOnlyFullMember joins supported; a
 * method or an attribute the SA does not have is "unsupported".
 */
static void rsim_sa_test_class_port_info(struct kunit *test)
{
	struct rsim_dev *a = rsim_kunit_shared_dev(test);
	struct sa_q *s = sa_q(test);
	struct ib_class_port_info *cpi;

	KUNIT_ASSERT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_GET,
				     IB_SA_ATTR_CLASS_PORTINFO, 0, a), 0);
	KUNIT_ASSERT_EQ(test, s->a.count, 1);
	cpi = (struct ib_class_port_info *)s->a.table;
	KUNIT_EXPECT_EQ(test, cpi->class_version, 2);
	KUNIT_EXPECT_TRUE(test, ib_get_cpi_capmask2(cpi) &
				IB_SA_CAP_MASK2_SENDONLY_FULL_MEM_SUPPORT);
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_SA_METHOD_GET_TABLE,
				     IB_SA_ATTR_CLASS_PORTINFO, 0, a),
			IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB);
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_SET,
				     IB_SA_ATTR_PATH_REC, 0, a),
			IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB);
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_GET,
				     IB_SA_ATTR_LINK_REC, 0, a),
			IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB);
}

/*
 * NodeRecord: one per port, matched on any component; a Get needs
 * exactly one; a reserved component or one past the last is invalid.
 */
static void rsim_sa_test_node_records(struct kunit *test)
{
	struct sa_q *s = sa_q(test);
	struct rsim_dev *a, *b;
	u32 i, seen = 0;

	sa_devs(test, &a, &b);
	KUNIT_ASSERT_EQ(test, sa_ask(test, s, IB_SA_METHOD_GET_TABLE,
				     IB_SA_ATTR_NODE_REC, 0, a), 0);
	KUNIT_EXPECT_EQ(test, s->a.count, rsim_subnet_ports());
	KUNIT_EXPECT_EQ(test, s->a.attr_offset, 14);	/* 108 bytes, padded */
	for (i = 0; i < s->a.count; i++) {
		u8 *r = sa_rec(s, i);

		if (sa_be16(r) != sa_lid(b))
			continue;
		seen++;
		/* NodeInfo's NodeGUID, PortGUID; the NodeDescription */
		KUNIT_EXPECT_EQ(test, sa_be64(r + 16), be64_to_cpu(b->ibdev.node_guid));
		KUNIT_EXPECT_EQ(test, sa_be64(r + 24), sa_guid(b));
		KUNIT_EXPECT_STREQ(test, (char *)r + 44, b->ibdev.node_desc);
	}
	KUNIT_EXPECT_EQ(test, seen, 1);

	/* by LID: a Get of one record */
	*(__be16 *)s->rec = cpu_to_be16(sa_lid(b));
	KUNIT_ASSERT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_GET,
				     IB_SA_ATTR_NODE_REC, C(0), a), 0);
	KUNIT_EXPECT_EQ(test, sa_be64(sa_rec(s, 0) + 24), sa_guid(b));
	/* by PortGUID */
	memset(s->rec, 0, sizeof(s->rec));
	*(__be64 *)(s->rec + 24) = a->port.guid;
	KUNIT_ASSERT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_GET,
				     IB_SA_ATTR_NODE_REC, C(8), b), 0);
	KUNIT_EXPECT_EQ(test, sa_be16(sa_rec(s, 0)), sa_lid(a));
	/* nobody's LID; every port; a reserved component; past the end */
	*(__be16 *)s->rec = cpu_to_be16(RSIM_LID_UNICAST_MAX);
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_GET,
				     IB_SA_ATTR_NODE_REC, C(0), a),
			RSIM_SA_ERR_NO_RECORDS);
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_SA_METHOD_GET_TABLE,
				     IB_SA_ATTR_NODE_REC, C(0), a), 0);
	KUNIT_EXPECT_EQ(test, s->a.count, 0);
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_GET,
				     IB_SA_ATTR_NODE_REC, 0, a),
			RSIM_SA_ERR_TOO_MANY_RECORDS);
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_SA_METHOD_GET_TABLE,
				     IB_SA_ATTR_NODE_REC, C(1), a),
			RSIM_SA_ERR_REQ_INVALID);
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_SA_METHOD_GET_TABLE,
				     IB_SA_ATTR_NODE_REC, C(15), a),
			RSIM_SA_ERR_REQ_INVALID);
}

/*
 * PortInfoRecord: every port's PortInfo with its M_Key hidden; the
 * CapabilityMask component matches ports that have all its bits
 * (saquery -s: IsSM).
 */
static void rsim_sa_test_port_info_records(struct kunit *test)
{
	struct sa_q *s = sa_q(test);
	struct rsim_dev *a, *b;
	u32 i;

	sa_devs(test, &a, &b);
	spin_lock_bh(&b->port.lock);
	b->port.mkey = cpu_to_be64(0x1234);
	spin_unlock_bh(&b->port.lock);
	/* IsSM: CapabilityMask bit 1, at PortInfo byte 20 */
	*(__be32 *)(s->rec + 4 + 20) = cpu_to_be32(IB_PORT_SM);
	KUNIT_ASSERT_EQ(test, sa_ask(test, s, IB_SA_METHOD_GET_TABLE,
				     IB_SA_ATTR_PORT_INFO_REC, C(7), a), 0);
	KUNIT_EXPECT_EQ(test, s->a.count, rsim_subnet_ports());
	KUNIT_EXPECT_EQ(test, s->a.attr_offset, 9);	/* 68 bytes, padded */
	for (i = 0; i < s->a.count; i++) {
		u8 *r = sa_rec(s, i);

		KUNIT_EXPECT_EQ(test, r[2], RSIM_PORT);
		KUNIT_EXPECT_EQ(test, sa_be64(r + 4), 0);	/* M_Key */
		/* the port's own LID in PortInfo */
		KUNIT_EXPECT_EQ(test, sa_be16(r), sa_be16(r + 4 + 16));
	}
	/* a bit no port has */
	*(__be32 *)(s->rec + 4 + 20) = cpu_to_be32(IB_PORT_SNMP_TUNNEL_SUP);
	KUNIT_ASSERT_EQ(test, sa_ask(test, s, IB_SA_METHOD_GET_TABLE,
				     IB_SA_ATTR_PORT_INFO_REC, C(7), a), 0);
	KUNIT_EXPECT_EQ(test, s->a.count, 0);
	/* by EndportLID */
	memset(s->rec, 0, sizeof(s->rec));
	*(__be16 *)s->rec = cpu_to_be16(sa_lid(b));
	KUNIT_ASSERT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_GET,
				     IB_SA_ATTR_PORT_INFO_REC, C(0), a), 0);
	/* its SM LID is the master's */
	KUNIT_EXPECT_EQ(test, sa_be16(sa_rec(s, 0) + 4 + 18),
			READ_ONCE(a->port.sm_lid));
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_GET,
				     IB_SA_ATTR_PORT_INFO_REC, C(19), a),
			RSIM_SA_ERR_REQ_INVALID);
}

/* a PathRecord query from @s to @d by GID */
static void sa_path_q(struct sa_q *q, struct rsim_dev *s, struct rsim_dev *d)
{
	memset(q->rec, 0, sizeof(q->rec));
	sa_put_gid(q->rec + PR_SGID, s->port.guid);
	sa_put_gid(q->rec + PR_DGID, d->port.guid);
}

/*
 * PathRecord Get between two ports: their LIDs and GIDs, the MTU both
 * have, 4X EDR's rate, opensm's packet lifetime, the default P_Key,
 * reversible; the traffic class asked for; the source the requester's
 * port when the query names none.
 */
static void rsim_sa_test_path_get(struct kunit *test)
{
	struct sa_q *s = sa_q(test);
	struct rsim_dev *a, *b;
	u8 *r;

	sa_devs(test, &a, &b);
	sa_path_q(s, a, b);
	s->rec[PR_TCLASS] = 0x20;
	KUNIT_ASSERT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_GET,
				     IB_SA_ATTR_PATH_REC,
				     PR_C_SGID | PR_C_DGID | PR_C_TCLASS, b), 0);
	r = sa_rec(s, 0);
	KUNIT_EXPECT_EQ(test, sa_be16(r + PR_DLID), sa_lid(b));
	KUNIT_EXPECT_EQ(test, sa_be16(r + PR_SLID), sa_lid(a));
	KUNIT_EXPECT_EQ(test, sa_gid_guid(r + PR_DGID), sa_guid(b));
	KUNIT_EXPECT_EQ(test, sa_gid_guid(r + PR_SGID), sa_guid(a));
	KUNIT_EXPECT_EQ(test, r[PR_TCLASS], 0x20);
	KUNIT_EXPECT_EQ(test, r[49] & 0x80, 0x80);	/* reversible */
	KUNIT_EXPECT_EQ(test, sa_be16(r + PR_PKEY), IB_DEFAULT_PKEY_FULL);
	KUNIT_EXPECT_EQ(test, r[PR_MTU] & 0x3f,
			min(READ_ONCE(a->port.mtu), READ_ONCE(b->port.mtu)));
	KUNIT_EXPECT_EQ(test, r[PR_RATE] & 0x3f, IB_RATE_100_GBPS);
	KUNIT_EXPECT_EQ(test, r[PR_PLT] & 0x3f, RSIM_SA_PLT);
	/* by LIDs, and with the source left to the requester */
	memset(s->rec, 0, sizeof(s->rec));
	*(__be16 *)(s->rec + PR_DLID) = cpu_to_be16(sa_lid(a));
	KUNIT_ASSERT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_GET,
				     IB_SA_ATTR_PATH_REC, PR_C_DLID, b), 0);
	KUNIT_EXPECT_EQ(test, sa_be16(sa_rec(s, 0) + PR_SLID), sa_lid(b));
	KUNIT_EXPECT_EQ(test, sa_gid_guid(sa_rec(s, 0) + PR_DGID), sa_guid(a));
}

/* Every way a PathRecord query fails, with its status */
static void rsim_sa_test_path_statuses(struct kunit *test)
{
	u64 ends = PR_C_SGID | PR_C_DGID;
	struct sa_q *s = sa_q(test);
	struct rsim_dev *a, *b;

	sa_devs(test, &a, &b);
	/* no destination */
	sa_path_q(s, a, b);
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_GET,
				     IB_SA_ATTR_PATH_REC, PR_C_SGID, a),
			RSIM_SA_ERR_REQ_INSUFFICIENT_COMPONENTS);
	/* a GID of another subnet, and a GUID no port has */
	s->rec[PR_DGID] = 0xfe;
	s->rec[PR_DGID + 7] = 1;
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_GET,
				     IB_SA_ATTR_PATH_REC, ends, a),
			RSIM_SA_ERR_REQ_INVALID_GID);
	sa_put_gid(s->rec + PR_DGID, cpu_to_be64(0x1234));
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_GET,
				     IB_SA_ATTR_PATH_REC, ends, a),
			RSIM_SA_ERR_REQ_INVALID_GID);
	/* a DLID nobody has; a DLID another port's than the DGID's */
	sa_path_q(s, a, b);
	*(__be16 *)(s->rec + PR_DLID) = cpu_to_be16(RSIM_LID_UNICAST_MAX);
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_GET,
				     IB_SA_ATTR_PATH_REC, PR_C_SGID | PR_C_DLID, a),
			RSIM_SA_ERR_NO_RECORDS);
	*(__be16 *)(s->rec + PR_DLID) = cpu_to_be16(sa_lid(a));
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_GET,
				     IB_SA_ATTR_PATH_REC, ends | PR_C_DLID, a),
			RSIM_SA_ERR_NO_RECORDS);
	/* another partition; raw traffic; the reserved component 7 */
	sa_path_q(s, a, b);
	*(__be16 *)(s->rec + PR_PKEY) = cpu_to_be16(0x8001);
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_GET,
				     IB_SA_ATTR_PATH_REC, ends | PR_C_PKEY, a),
			RSIM_SA_ERR_NO_RECORDS);
	*(__be16 *)(s->rec + PR_PKEY) = cpu_to_be16(0x7fff);	/* limited */
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_GET,
				     IB_SA_ATTR_PATH_REC, ends | PR_C_PKEY, a), 0);
	KUNIT_EXPECT_EQ(test, sa_be16(sa_rec(s, 0) + PR_PKEY), 0x7fff);
	s->rec[44] = 0x80;
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_GET,
				     IB_SA_ATTR_PATH_REC, ends | PR_C_RAW, a),
			RSIM_SA_ERR_NO_RECORDS);
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_GET,
				     IB_SA_ATTR_PATH_REC, ends | C(7), a),
			RSIM_SA_ERR_REQ_INVALID);
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_GET,
				     IB_SA_ATTR_PATH_REC, ends | C(23), a),
			RSIM_SA_ERR_REQ_INVALID);
	/* selectors: an MTU above 4096, below 256; above 1024 is there */
	sa_path_q(s, a, b);
	s->rec[PR_MTU] = IB_SA_GT << 6 | IB_MTU_4096;
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_GET,
				     IB_SA_ATTR_PATH_REC,
				     ends | PR_C_MTU_SEL | PR_C_MTU, a),
			RSIM_SA_ERR_NO_RECORDS);
	s->rec[PR_MTU] = IB_SA_LT << 6 | IB_MTU_256;
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_GET,
				     IB_SA_ATTR_PATH_REC,
				     ends | PR_C_MTU_SEL | PR_C_MTU, a),
			RSIM_SA_ERR_NO_RECORDS);
	s->rec[PR_MTU] = IB_SA_GT << 6 | IB_MTU_1024;
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_GET,
				     IB_SA_ATTR_PATH_REC,
				     ends | PR_C_MTU_SEL | PR_C_MTU, a), 0);
	/* rates by speed: exactly 10 Gb/s no, below 200 Gb/s yes */
	s->rec[PR_RATE] = IB_SA_EQ << 6 | IB_RATE_10_GBPS;
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_GET,
				     IB_SA_ATTR_PATH_REC,
				     ends | PR_C_RATE_SEL | PR_C_RATE, a),
			RSIM_SA_ERR_NO_RECORDS);
	s->rec[PR_RATE] = IB_SA_LT << 6 | IB_RATE_200_GBPS;
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_GET,
				     IB_SA_ATTR_PATH_REC,
				     ends | PR_C_RATE_SEL | PR_C_RATE, a), 0);
	/* the destination's cable pulled: no path; plugged back: the path */
	rsim_port_set_link(b, false);
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_GET,
				     IB_SA_ATTR_PATH_REC, ends, a),
			RSIM_SA_ERR_NO_RECORDS);
	rsim_port_set_link(b, true);
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_GET,
				     IB_SA_ATTR_PATH_REC, ends, a), 0);
}

/* PathRecord GetTable: from one port to every port; every pair */
static void rsim_sa_test_path_table(struct kunit *test)
{
	struct sa_q *s = sa_q(test);
	struct rsim_dev *a, *b;
	u32 n, i, to_b = 0;

	sa_devs(test, &a, &b);
	n = rsim_subnet_ports();
	sa_path_q(s, a, b);
	KUNIT_ASSERT_EQ(test, sa_ask(test, s, IB_SA_METHOD_GET_TABLE,
				     IB_SA_ATTR_PATH_REC, PR_C_SGID, a), 0);
	KUNIT_EXPECT_EQ(test, s->a.count, n);
	for (i = 0; i < s->a.count; i++) {
		KUNIT_EXPECT_EQ(test, sa_gid_guid(sa_rec(s, i) + PR_SGID),
				sa_guid(a));
		to_b += sa_gid_guid(sa_rec(s, i) + PR_DGID) == sa_guid(b);
	}
	KUNIT_EXPECT_EQ(test, to_b, 1);
	KUNIT_ASSERT_EQ(test, sa_ask(test, s, IB_SA_METHOD_GET_TABLE,
				     IB_SA_ATTR_PATH_REC, 0, a), 0);
	KUNIT_EXPECT_EQ(test, s->a.count, n * n);
	KUNIT_EXPECT_EQ(test, s->a.attr_offset, 8);
}

static void sa_leave_all(void *data)
{
	rsim_mcast_port_gone(((struct rsim_dev *)data)->port.guid);
}

/* an MCMemberRecord for @port's join of @mgid with @join_state */
static void sa_mcm_q(struct sa_q *s, const u8 *mgid, struct rsim_dev *port,
		     u8 join_state)
{
	memset(s->rec, 0, sizeof(s->rec));
	if (mgid)
		memcpy(s->rec, mgid, 16);
	sa_put_gid(s->rec + MCM_PORT_GID, port->port.guid);
	s->rec[MCM_JOIN] = join_state;
}

/*
 * IPoIB's broadcast group is there before anyone joins (Q_Key 0x0b1b,
 * MTU 2048, MLID 0xC000 up); a port joins it as IPoIB does (MGID, PortGID,
 * P_Key, JoinState), adds a NonMember bit, and leaves bit by bit; the
 * group stays without members.
 */
static void rsim_sa_test_mcast_broadcast(struct kunit *test)
{
	u64 join = MC_C_MGID | MC_C_PORT_GID | MC_C_PKEY | MC_C_JOIN;
	struct rsim_dev *a = rsim_kunit_shared_dev(test);
	struct sa_q *s = sa_q(test);
	u8 *r;

	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, sa_leave_all, a),
			0);
	sa_mcm_q(s, sa_bcast, a, 1);
	*(__be16 *)(s->rec + MCM_PKEY) = cpu_to_be16(IB_DEFAULT_PKEY_FULL);
	KUNIT_ASSERT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_SET,
				     IB_SA_ATTR_MC_MEMBER_REC, join, a), 0);
	r = sa_rec(s, 0);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(*(__be32 *)(r + MCM_QKEY)),
			RSIM_SA_IPOIB_QKEY);
	KUNIT_EXPECT_GE(test, sa_be16(r + MCM_MLID), RSIM_SA_MLID_FIRST);
	KUNIT_EXPECT_EQ(test, r[MCM_MTU] & 0x3f, IB_MTU_2048);
	KUNIT_EXPECT_EQ(test, r[MCM_JOIN], 0x21);	/* scope 2, full */
	KUNIT_EXPECT_EQ(test, sa_gid_guid(r + MCM_PORT_GID), sa_guid(a));
	/* a NonMember bit more */
	s->rec[MCM_JOIN] = 2;
	KUNIT_ASSERT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_SET,
				     IB_SA_ATTR_MC_MEMBER_REC, join, a), 0);
	KUNIT_EXPECT_EQ(test, sa_rec(s, 0)[MCM_JOIN] & 0xf, 3);
	/* the member's record, by MGID and PortGID */
	KUNIT_ASSERT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_GET,
				     IB_SA_ATTR_MC_MEMBER_REC,
				     MC_C_MGID | MC_C_PORT_GID, a), 0);
	KUNIT_EXPECT_EQ(test, sa_rec(s, 0)[MCM_JOIN] & 0xf, 3);
	/* leave: FullMember, then NonMember; a bit it no longer has */
	s->rec[MCM_JOIN] = 1;
	KUNIT_ASSERT_EQ(test, sa_ask(test, s, IB_SA_METHOD_DELETE,
				     IB_SA_ATTR_MC_MEMBER_REC,
				     MC_C_MGID | MC_C_PORT_GID | MC_C_JOIN, a), 0);
	KUNIT_EXPECT_EQ(test, sa_rec(s, 0)[MCM_JOIN] & 0xf, 1);
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_SA_METHOD_DELETE,
				     IB_SA_ATTR_MC_MEMBER_REC,
				     MC_C_MGID | MC_C_PORT_GID | MC_C_JOIN, a),
			RSIM_SA_ERR_REQ_INVALID);
	s->rec[MCM_JOIN] = 2;
	KUNIT_ASSERT_EQ(test, sa_ask(test, s, IB_SA_METHOD_DELETE,
				     IB_SA_ATTR_MC_MEMBER_REC,
				     MC_C_MGID | MC_C_PORT_GID | MC_C_JOIN, a), 0);
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_GET,
				     IB_SA_ATTR_MC_MEMBER_REC,
				     MC_C_MGID | MC_C_PORT_GID, a),
			RSIM_SA_ERR_NO_RECORDS);
	/* the group stays: a join finds it, without create components */
	s->rec[MCM_JOIN] = 1;
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_SET,
				     IB_SA_ATTR_MC_MEMBER_REC, join, a), 0);
}

/* a create of a group with @mgid (NULL: the SA's) by @port */
static void sa_create_q(struct sa_q *s, const u8 *mgid, struct rsim_dev *port)
{
	sa_mcm_q(s, mgid, port, 1);
	*(__be32 *)(s->rec + MCM_QKEY) = cpu_to_be32(0x11223344);
	*(__be16 *)(s->rec + MCM_PKEY) = cpu_to_be16(IB_DEFAULT_PKEY_FULL);
}

/*
 * Groups made by a join: the SA's MGID when the request has none, an MLID
 * of their own, the MTU the selector allows; what a create must name, who
 * may create, join and leave, and what a join may not contradict; the
 * group goes with its last member, or with its port.
 */
static void rsim_sa_test_mcast_create(struct kunit *test)
{
	u64 leave = MC_C_MGID | MC_C_PORT_GID | MC_C_JOIN;
	static const u8 mgid[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, 0, 0,
				     0, 0, 0, 0, 0, 0, 0, 0x42 };
	struct sa_q *s = sa_q(test);
	struct rsim_dev *a, *b;
	u8 assigned[16];
	u16 mlid;
	u8 *r;

	sa_devs(test, &a, &b);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, sa_leave_all, a),
			0);
	/* the SA's MGID: ff12:a01b:<P_Key>::<MLID> */
	sa_create_q(s, NULL, b);
	KUNIT_ASSERT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_SET,
				     IB_SA_ATTR_MC_MEMBER_REC, MC_C_CREATE, b), 0);
	r = sa_rec(s, 0);
	mlid = sa_be16(r + MCM_MLID);
	KUNIT_EXPECT_GE(test, mlid, RSIM_SA_MLID_FIRST);
	KUNIT_EXPECT_EQ(test, r[0], 0xff);
	KUNIT_EXPECT_EQ(test, r[2], 0xa0);
	KUNIT_EXPECT_EQ(test, sa_be16(r + 14), mlid);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(*(__be32 *)(r + MCM_QKEY)),
			0x11223344);
	memcpy(assigned, r, sizeof(assigned));

	/* a group of the requester's MGID: its MTU below 2048 is 1024 */
	sa_create_q(s, mgid, a);
	s->rec[MCM_MTU] = IB_SA_LT << 6 | IB_MTU_2048;
	KUNIT_ASSERT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_SET,
				     IB_SA_ATTR_MC_MEMBER_REC,
				     MC_C_CREATE | MC_C_MGID | MC_C_MTU_SEL |
				     MC_C_MTU, a), 0);
	KUNIT_EXPECT_EQ(test, sa_rec(s, 0)[MCM_MTU] & 0x3f, IB_MTU_1024);
	KUNIT_EXPECT_NE(test, sa_be16(sa_rec(s, 0) + MCM_MLID), mlid);
	/* b joins it; with another Q_Key it may not */
	sa_create_q(s, mgid, b);
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_SET,
				     IB_SA_ATTR_MC_MEMBER_REC,
				     MC_C_MGID | MC_C_PORT_GID | MC_C_QKEY |
				     MC_C_JOIN, b), 0);
	*(__be32 *)(s->rec + MCM_QKEY) = cpu_to_be32(0x55);
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_SET,
				     IB_SA_ATTR_MC_MEMBER_REC,
				     MC_C_MGID | MC_C_PORT_GID | MC_C_QKEY |
				     MC_C_JOIN, b), RSIM_SA_ERR_REQ_INVALID);
	/* GetTable of the group: its two members */
	sa_mcm_q(s, mgid, a, 0);
	KUNIT_ASSERT_EQ(test, sa_ask(test, s, IB_SA_METHOD_GET_TABLE,
				     IB_SA_ATTR_MC_MEMBER_REC, MC_C_MGID, a), 0);
	KUNIT_EXPECT_EQ(test, s->a.count, 2);
	KUNIT_EXPECT_EQ(test, s->a.attr_offset, 7);

	/* a create without Q_Key; by a NonMember; an MTU above 4096 */
	sa_create_q(s, NULL, a);
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_SET,
				     IB_SA_ATTR_MC_MEMBER_REC,
				     MC_C_CREATE & ~MC_C_QKEY, a),
			RSIM_SA_ERR_REQ_INSUFFICIENT_COMPONENTS);
	s->rec[MCM_JOIN] = 2;
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_SET,
				     IB_SA_ATTR_MC_MEMBER_REC, MC_C_CREATE, a),
			RSIM_SA_ERR_REQ_INVALID);
	s->rec[MCM_JOIN] = 1;
	s->rec[MCM_MTU] = IB_SA_GT << 6 | IB_MTU_4096;
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_SET,
				     IB_SA_ATTR_MC_MEMBER_REC,
				     MC_C_CREATE | MC_C_MTU_SEL | MC_C_MTU, a),
			RSIM_SA_ERR_REQ_INVALID);
	/* an MGID that is not multicast; JoinState 0 */
	sa_create_q(s, NULL, a);
	s->rec[0] = 0xfe;
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_SET,
				     IB_SA_ATTR_MC_MEMBER_REC,
				     MC_C_CREATE | MC_C_MGID, a),
			RSIM_SA_ERR_REQ_INVALID);
	sa_create_q(s, NULL, a);
	s->rec[MCM_JOIN] = 0;
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_SET,
				     IB_SA_ATTR_MC_MEMBER_REC, MC_C_CREATE, a),
			RSIM_SA_ERR_REQ_INVALID);
	/* for another port (a proxy join); for a port that is no port */
	sa_create_q(s, NULL, b);
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_SET,
				     IB_SA_ATTR_MC_MEMBER_REC, MC_C_CREATE, a),
			RSIM_SA_ERR_REQ_DENIED);
	sa_put_gid(s->rec + MCM_PORT_GID, cpu_to_be64(0x1234));
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_SET,
				     IB_SA_ATTR_MC_MEMBER_REC, MC_C_CREATE, a),
			RSIM_SA_ERR_REQ_INVALID_GID);
	/* a Delete without its MGID; of a group a port is not in */
	sa_mcm_q(s, assigned, a, 1);
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_SA_METHOD_DELETE,
				     IB_SA_ATTR_MC_MEMBER_REC,
				     MC_C_PORT_GID | MC_C_JOIN, a),
			RSIM_SA_ERR_REQ_INSUFFICIENT_COMPONENTS);
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_SA_METHOD_DELETE,
				     IB_SA_ATTR_MC_MEMBER_REC, leave, a),
			RSIM_SA_ERR_REQ_INVALID);
	/* its last member leaves: the SA's group goes */
	sa_mcm_q(s, assigned, b, 1);
	KUNIT_ASSERT_EQ(test, sa_ask(test, s, IB_SA_METHOD_DELETE,
				     IB_SA_ATTR_MC_MEMBER_REC, leave, b), 0);
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_SET,
				     IB_SA_ATTR_MC_MEMBER_REC,
				     MC_C_MGID | MC_C_PORT_GID | MC_C_JOIN, b),
			RSIM_SA_ERR_REQ_INSUFFICIENT_COMPONENTS);
	/* b's port leaves the subnet's groups: a is the last in mgid's */
	rsim_mcast_port_gone(b->port.guid);
	sa_mcm_q(s, mgid, a, 0);
	KUNIT_ASSERT_EQ(test, sa_ask(test, s, IB_SA_METHOD_GET_TABLE,
				     IB_SA_ATTR_MC_MEMBER_REC, MC_C_MGID, a), 0);
	KUNIT_EXPECT_EQ(test, s->a.count, 1);
}

static void sa_limits_reset(void *unused)
{
	rsim_mcast_set_limits(0, 0);
}

/*
 * What one port may hold: each group it joins counts against its limit,
 * creating or not (past it: ERR_NO_RESOURCES, counted, nothing made); a
 * bit more in a group it is in does not; a leave makes room. With no
 * ordinary MLID left, a create is refused, and an IPoIB group (signature
 * 0x601b) still gets one from the reserve.
 */
static void rsim_sa_test_mcast_limits(struct kunit *test)
{
	static const u8 ipoib[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, 0, 0,
				      0, 0, 0, 0, 0, 0, 0x4b, 0x55 };
	u64 join = MC_C_MGID | MC_C_PORT_GID | MC_C_JOIN;
	u64 port0 = rsim_mcast_refused(true);
	u64 mlid0 = rsim_mcast_refused(false);
	struct sa_q *s = sa_q(test);
	struct rsim_dev *a, *b;
	u8 first[16], bg[16];
	u32 base = 0, i;

	sa_devs(test, &a, &b);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, sa_leave_all, a),
			0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, sa_limits_reset,
							NULL), 0);
	/* the groups a is in already (other suites') */
	sa_mcm_q(s, NULL, a, 0);
	if (!sa_ask(test, s, IB_SA_METHOD_GET_TABLE, IB_SA_ATTR_MC_MEMBER_REC,
		    MC_C_PORT_GID, a))
		base = s->a.count;
	rsim_mcast_set_limits(base + 3, 0);
	for (i = 0; i < 3; i++) {
		sa_create_q(s, NULL, a);
		KUNIT_ASSERT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_SET,
					     IB_SA_ATTR_MC_MEMBER_REC,
					     MC_C_CREATE, a), 0);
		if (!i)
			memcpy(first, sa_rec(s, 0), sizeof(first));
	}
	sa_create_q(s, NULL, a);
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_SET,
				     IB_SA_ATTR_MC_MEMBER_REC, MC_C_CREATE, a),
			RSIM_SA_ERR_NO_RESOURCES);
	KUNIT_EXPECT_EQ(test, rsim_mcast_refused(true), port0 + 1);
	sa_mcm_q(s, NULL, a, 0);
	KUNIT_ASSERT_EQ(test, sa_ask(test, s, IB_SA_METHOD_GET_TABLE,
				     IB_SA_ATTR_MC_MEMBER_REC, MC_C_PORT_GID,
				     a), 0);
	KUNIT_EXPECT_EQ(test, s->a.count, base + 3);
	/* joining b's group is a membership too */
	sa_create_q(s, NULL, b);
	KUNIT_ASSERT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_SET,
				     IB_SA_ATTR_MC_MEMBER_REC, MC_C_CREATE, b),
			0);
	memcpy(bg, sa_rec(s, 0), sizeof(bg));
	sa_mcm_q(s, bg, a, 1);
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_SET,
				     IB_SA_ATTR_MC_MEMBER_REC, join, a),
			RSIM_SA_ERR_NO_RESOURCES);
	/* a NonMember bit in a group a is in: no new membership */
	sa_mcm_q(s, first, a, 2);
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_SET,
				     IB_SA_ATTR_MC_MEMBER_REC, join, a), 0);
	/* a leaves it: room for b's */
	sa_mcm_q(s, first, a, 3);
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_SA_METHOD_DELETE,
				     IB_SA_ATTR_MC_MEMBER_REC, join, a), 0);
	sa_mcm_q(s, bg, a, 1);
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_SET,
				     IB_SA_ATTR_MC_MEMBER_REC, join, a), 0);

	/* the ordinary MLIDs: 0xC000 alone, the broadcast group's */
	rsim_mcast_set_limits(0, RSIM_SA_MLID_FIRST);
	sa_create_q(s, NULL, b);
	KUNIT_EXPECT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_SET,
				     IB_SA_ATTR_MC_MEMBER_REC, MC_C_CREATE, b),
			RSIM_SA_ERR_NO_RESOURCES);
	KUNIT_EXPECT_EQ(test, rsim_mcast_refused(false), mlid0 + 1);
	sa_create_q(s, ipoib, b);
	KUNIT_ASSERT_EQ(test, sa_ask(test, s, IB_MGMT_METHOD_SET,
				     IB_SA_ATTR_MC_MEMBER_REC,
				     MC_C_CREATE | MC_C_MGID, b), 0);
	KUNIT_EXPECT_GT(test, sa_be16(sa_rec(s, 0) + MCM_MLID),
			RSIM_SA_MLID_FIRST);
	KUNIT_EXPECT_EQ(test, rsim_mcast_refused(true), port0 + 2);
}

/* the core's SA client, asking from @from for the path to @to */
struct sa_call {
	struct completion done;
	int status;
	struct sa_path_rec rec;
};

static void sa_path_done(int status, struct sa_path_rec *resp,
			 unsigned int num_paths, void *context)
{
	struct sa_call *c = context;

	c->status = status;
	if (!status && resp)
		c->rec = *resp;
	complete(&c->done);
}

static struct ib_sa_client sa_client;

static int sa_path_get(struct kunit *test, struct rsim_dev *from,
		       struct rsim_dev *to, unsigned long timeout_ms)
{
	struct sa_path_rec rec = {};
	struct ib_sa_query *query;
	struct sa_call c;
	int id, tries;

	rec.rec_type = SA_PATH_REC_TYPE_IB;
	rec.sgid.global.subnet_prefix = cpu_to_be64(RSIM_GID_PREFIX);
	rec.sgid.global.interface_id = from->port.guid;
	rec.dgid.global.subnet_prefix = cpu_to_be64(RSIM_GID_PREFIX);
	rec.dgid.global.interface_id = to->port.guid;
	rec.numb_path = 1;
	rec.pkey = cpu_to_be16(IB_DEFAULT_PKEY_FULL);
	rec.reversible = 1;
	/* the client learns the SM's address from a port event: wait */
	for (tries = 0; tries < 100; tries++) {
		init_completion(&c.done);
		id = ib_sa_path_rec_get(&sa_client, &from->ibdev, RSIM_PORT,
					&rec, IB_SA_PATH_REC_DGID |
					IB_SA_PATH_REC_SGID |
					IB_SA_PATH_REC_NUMB_PATH |
					IB_SA_PATH_REC_PKEY, timeout_ms,
					GFP_KERNEL, sa_path_done, &c, &query);
		if (id != -EAGAIN)
			break;
		msleep(20);
	}
	KUNIT_ASSERT_GE(test, id, 0);
	KUNIT_ASSERT_GT(test, wait_for_completion_timeout(&c.done,
							  msecs_to_jiffies(10000)),
			0);
	if (!c.status)
		KUNIT_EXPECT_EQ(test, be16_to_cpu(c.rec.ib.dlid), sa_lid(to));
	return c.status;
}

/* the drop fault's probabilistic layer: every request, or none */
static void sa_drop_all(bool on)
{
#ifdef CONFIG_FAULT_INJECTION
	struct fault_attr *fa = rsim_sa_fault_point(0)->attr;

	fa->verbose = 0;
	fa->interval = 1;
	atomic_set(&fa->times, -1);
	fa->probability = on ? 100 : 0;
#endif
}

static void sa_faults_off(void *data)
{
	int i;

	sa_drop_all(false);
	for (i = 0; i < 3; i++)
		rsim_fault_set_nth(rsim_sa_fault_point(i), 0);
	rsim_sa_fault_settings(0, RSIM_SA_ERR_NO_RESOURCES, 1000);
}

/*
 * Through the MAD layer: the core's SA client on the case's device gets
 * the path from the master's SA; a dropped request is sent again and
 * answered, requests all dropped time out, an error status fails the
 * query, a delayed answer still arrives; faults limited to another
 * attribute leave PathRecord alone.
 */
static void rsim_sa_test_sa_client(struct kunit *test)
{
	struct rsim_dev *a, *b;
	u64 served;

	sa_devs(test, &a, &b);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, sa_faults_off,
							NULL), 0);
	served = rsim_sa_served();
	KUNIT_EXPECT_EQ(test, sa_path_get(test, b, a, 5000), 0);
	KUNIT_EXPECT_GT(test, rsim_sa_served(), served);

	rsim_fault_set_nth(rsim_sa_fault_point(0), 1);
	KUNIT_EXPECT_EQ(test, sa_path_get(test, b, a, 5000), 0);
	KUNIT_EXPECT_EQ(test, rsim_fault_get_nth(rsim_sa_fault_point(0)), 0);
	KUNIT_EXPECT_GT(test, rsim_fault_injected(rsim_sa_fault_point(0)), 0);
	if (IS_ENABLED(CONFIG_FAULT_INJECTION)) {
		sa_drop_all(true);
		KUNIT_EXPECT_EQ(test, sa_path_get(test, b, a, 300), -ETIMEDOUT);
		sa_drop_all(false);
	}

	rsim_fault_set_nth(rsim_sa_fault_point(1), 1);
	KUNIT_EXPECT_EQ(test, sa_path_get(test, b, a, 5000), -EINVAL);

	rsim_sa_fault_settings(0, RSIM_SA_ERR_NO_RESOURCES, 100);
	rsim_fault_set_nth(rsim_sa_fault_point(2), 1);
	KUNIT_EXPECT_EQ(test, sa_path_get(test, b, a, 5000), 0);
	KUNIT_EXPECT_EQ(test, rsim_fault_injected(rsim_sa_fault_point(2)) > 0,
			true);

	/* a fault for NodeRecord only: PathRecord is answered */
	rsim_sa_fault_settings(IB_SA_ATTR_NODE_REC, RSIM_SA_ERR_NO_RESOURCES,
			       1000);
	rsim_fault_set_nth(rsim_sa_fault_point(0), 1);
	KUNIT_EXPECT_EQ(test, sa_path_get(test, b, a, 5000), 0);
	KUNIT_EXPECT_EQ(test, rsim_fault_get_nth(rsim_sa_fault_point(0)), 1);
}

static int rsim_sa_suite_init(struct kunit_suite *suite)
{
	ib_sa_register_client(&sa_client);
	return rsim_kunit_suite_init(suite);
}

static void rsim_sa_suite_exit(struct kunit_suite *suite)
{
	ib_sa_unregister_client(&sa_client);
}

/*
 * new_device's sa=0 (cfg.no_sa): the device registers no SA agent, so
 * that another SA may take the class on its port; the others do
 */
static void rsim_sa_test_no_sa_device(struct kunit *test)
{
	struct rsim_dev_config cfg;
	struct rsim_dev *d;

	KUNIT_EXPECT_NOT_NULL(test, rsim_kunit_shared_dev(test)->sa.agent);
	rsim_default_config(&cfg);
	cfg.no_sa = true;
	d = rsim_kunit_dev(test, &cfg);
	KUNIT_EXPECT_NULL(test, d->sa.agent);
}

static struct kunit_case rsim_sa_test_cases[] = {
	KUNIT_CASE(rsim_sa_test_class_port_info),
	KUNIT_CASE(rsim_sa_test_node_records),
	KUNIT_CASE(rsim_sa_test_port_info_records),
	KUNIT_CASE(rsim_sa_test_path_get),
	KUNIT_CASE(rsim_sa_test_path_statuses),
	KUNIT_CASE(rsim_sa_test_path_table),
	KUNIT_CASE(rsim_sa_test_mcast_broadcast),
	KUNIT_CASE(rsim_sa_test_mcast_create),
	KUNIT_CASE(rsim_sa_test_mcast_limits),
	KUNIT_CASE(rsim_sa_test_sa_client),
	KUNIT_CASE(rsim_sa_test_no_sa_device),
	RSIM_KUNIT_NO_LEFTOVERS,
	{}
};

static struct kunit_suite rsim_sa_test_suite = {
	.name = "rdmasim_sa",
	.suite_init = rsim_sa_suite_init,
	.suite_exit = rsim_sa_suite_exit,
	.test_cases = rsim_sa_test_cases,
};

kunit_test_suite(rsim_sa_test_suite);
