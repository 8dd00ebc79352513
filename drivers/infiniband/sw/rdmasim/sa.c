// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: the subnet administrator's answers (IBA 15).
 *
 * The master SM's device answers the SA class on QP1 (sa_agent.c carries
 * the MADs); this file turns one request into one answer, records and a
 * MAD status, from what the subnet's ports are (subnet.c) and the groups
 * the SA keeps (mcast.c):
 *
 *  - ClassPortInfo (Get): SendOnlyFullMember joins are supported;
 *  - NodeRecord and PortInfoRecord (Get, GetTable): every port's NodeInfo,
 *    NodeDescription and PortInfo, as its SMA answers them (the M_Key
 *    hidden), matched on any component; a port whose link is down is
 *    not seen;
 *  - PathRecord (Get, GetTable): the one path between two ports whose
 *    logical state is Active: their LIDs and GIDs, the smaller MTU, 4X
 *    EDR's rate, SL, flow label, traffic class and hop limit as asked (0
 *    when not), the P_Key asked when it is the default partition's,
 *    reversible, the packet lifetime opensm gives; MTU, rate and lifetime
 *    selectors are honoured;
 *  - MCMemberRecord (Set, Delete, Get, GetTable): mcast.c.
 *
 * Every component mask is checked against the record's components: a
 * reserved or unknown component is ERR_REQ_INVALID. A Get that matches no
 * record is ERR_NO_RECORDS, more than one ERR_TOO_MANY_RECORDS; a GetTable
 * may match none. A PathRecord Get needs a destination (DGID or DLID):
 * ERR_REQ_INSUFFICIENT_COMPONENTS without one; the source defaults to the
 * requester's port. A GID outside the subnet (another prefix, or no port
 * with its GUID) is ERR_REQ_INVALID_GID, as opensm answers. A method an
 * attribute does not have is IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB.
 */

#include <linux/overflow.h>
#include <linux/slab.h>
#include <kunit/visibility.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_sa.h>
#include <rdma/ib_smi.h>

#include "rdmasim.h"

/**
 * rsim_sa_get_bits() - a field of a record on the wire
 * @rec: the record
 * @bit: the field's first bit, MSB first from @rec's first byte
 * @bits: its width, 1 to 64
 *
 * Context: any.
 * Return: the field's value.
 */
u64 rsim_sa_get_bits(const u8 *rec, u16 bit, u16 bits)
{
	u64 v = 0;
	u16 i;

	for (i = 0; i < bits; i++) {
		u16 b = bit + i;

		v = v << 1 | ((rec[b / 8] >> (7 - b % 8)) & 1);
	}
	return v;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_sa_get_bits);

/**
 * rsim_sa_put_bits() - set a field of a record on the wire
 * @rec: the record
 * @bit: the field's first bit, MSB first from @rec's first byte
 * @bits: its width, 1 to 64
 * @val: the value; bits above @bits are ignored
 *
 * Context: any.
 */
void rsim_sa_put_bits(u8 *rec, u16 bit, u16 bits, u64 val)
{
	u16 i;

	for (i = 0; i < bits; i++) {
		u16 b = bit + bits - 1 - i;
		u8 m = 1 << (7 - b % 8);

		if (val & 1)
			rec[b / 8] |= m;
		else
			rec[b / 8] &= ~m;
		val >>= 1;
	}
}
EXPORT_SYMBOL_IF_KUNIT(rsim_sa_put_bits);

/**
 * rsim_sa_check_mask() - is a component mask one of a record's?
 * @f: the record's components, by component bit
 * @n: how many it has
 * @comp: the query's component mask
 *
 * Context: any.
 * Return: 0, or RSIM_SA_ERR_REQ_INVALID for a reserved component or one
 * past the record's last.
 */
u16 rsim_sa_check_mask(const struct rsim_sa_field *f, int n, u64 comp)
{
	int i;

	if (n < 64 && comp >> n)
		return RSIM_SA_ERR_REQ_INVALID;
	for (i = 0; i < n; i++)
		if ((comp & BIT_ULL(i)) && f[i].cmp == RSIM_SA_CMP_RESERVED)
			return RSIM_SA_ERR_REQ_INVALID;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_sa_check_mask);

/* speed of an enum ib_rate, for comparing rates; 0 for a bad value */
static int rsim_sa_rate_mbps(u8 rate)
{
	return rate ? ib_rate_to_mbps(rate) : 0;
}

/**
 * rsim_sa_sel_ok() - does a value satisfy a selector?
 * @cmp: RSIM_SA_CMP_MTU, _RATE or _PLT
 * @sel: the selector (enum ib_sa_selector)
 * @want: the value the query gives
 * @have: the record's value
 *
 * Context: any.
 * Return: true if @have is greater than, less than or equal to @want as
 * @sel says, or @sel is "best".
 */
bool rsim_sa_sel_ok(u8 cmp, u8 sel, u8 want, u8 have)
{
	int w = want, h = have;

	if (cmp == RSIM_SA_CMP_RATE) {
		w = rsim_sa_rate_mbps(want);
		h = rsim_sa_rate_mbps(have);
		if (w <= 0 || h <= 0)
			return sel == IB_SA_BEST && h > 0;
	}
	switch (sel) {
	case IB_SA_GT:
		return h > w;
	case IB_SA_LT:
		return h < w;
	case IB_SA_EQ:
		return h == w;
	default:
		return true;
	}
}
EXPORT_SYMBOL_IF_KUNIT(rsim_sa_sel_ok);

static bool rsim_sa_field_eq(const struct rsim_sa_field *f, const u8 *a,
			     const u8 *b)
{
	if (f->bit % 8 == 0 && f->bits % 8 == 0)
		return !memcmp(a + f->bit / 8, b + f->bit / 8, f->bits / 8);
	return rsim_sa_get_bits(a, f->bit, f->bits) ==
	       rsim_sa_get_bits(b, f->bit, f->bits);
}

/**
 * rsim_sa_match() - does a record match a query's components?
 * @f: the record's components, by component bit
 * @n: how many it has
 * @comp: the query's component mask (rsim_sa_check_mask() passed it)
 * @query: the query's record
 * @rec: the record
 *
 * A value with a selector (the component before it) is compared as the
 * selector says when the query names the selector, else for equality.
 *
 * Context: any.
 * Return: true if every component the query names matches.
 */
bool rsim_sa_match(const struct rsim_sa_field *f, int n, u64 comp,
		   const u8 *query, const u8 *rec)
{
	u64 q, r;
	u8 sel;
	int i;

	for (i = 0; i < n; i++) {
		if (!(comp & BIT_ULL(i)))
			continue;
		switch (f[i].cmp) {
		case RSIM_SA_CMP_EQ:
			if (!rsim_sa_field_eq(&f[i], query, rec))
				return false;
			break;
		case RSIM_SA_CMP_MTU:
		case RSIM_SA_CMP_RATE:
		case RSIM_SA_CMP_PLT:
			sel = IB_SA_EQ;
			if (i && (comp & BIT_ULL(i - 1)))
				sel = rsim_sa_get_bits(query, f[i - 1].bit,
						       f[i - 1].bits);
			q = rsim_sa_get_bits(query, f[i].bit, f[i].bits);
			r = rsim_sa_get_bits(rec, f[i].bit, f[i].bits);
			if (!rsim_sa_sel_ok(f[i].cmp, sel, q, r))
				return false;
			break;
		case RSIM_SA_CMP_SUBSET:
			q = rsim_sa_get_bits(query, f[i].bit, f[i].bits);
			r = rsim_sa_get_bits(rec, f[i].bit, f[i].bits);
			if ((q & r) != q)
				return false;
			break;
		default:
			break;
		}
	}
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_sa_match);

#define EQ(b, w)	{ .bit = (b), .bits = (w), .cmp = RSIM_SA_CMP_EQ }
#define RSV(b, w)	{ .bit = (b), .bits = (w), .cmp = RSIM_SA_CMP_RESERVED }
#define SEL(b)		{ .bit = (b), .bits = 2, .cmp = RSIM_SA_CMP_SEL }
#define VAL(b, c)	{ .bit = (b), .bits = 6, .cmp = (c) }
#define SKIP(b, w)	{ .bit = (b), .bits = (w), .cmp = RSIM_SA_CMP_SKIP }

/* NodeRecord (IBA 15.2.5.2): LID, reserved, NodeInfo, NodeDescription */
#define RSIM_NR_NODE_INFO	4	/* bytes */
#define RSIM_NR_NODE_DESC	44
static const struct rsim_sa_field rsim_nr_fields[] = {
	EQ(0, 16), RSV(16, 16),
	EQ(32, 8), EQ(40, 8), EQ(48, 8), EQ(56, 8),	/* versions, type, ports */
	EQ(64, 64), EQ(128, 64), EQ(192, 64),		/* GUIDs */
	EQ(256, 16), EQ(272, 16), EQ(288, 32),		/* PartitionCap, dev, rev */
	EQ(320, 8), EQ(328, 24), EQ(352, 512),		/* port, vendor, desc */
};

/*
 * PortInfoRecord (IBA 15.2.5.3): EndportLID, PortNum, Options, PortInfo;
 * the PortInfo's components as opensm numbers them (IB_PIR_COMPMASK_*)
 */
#define RSIM_PIR_PORT_INFO	4	/* bytes */
#define PI(b, w)		EQ(32 + (b), w)
#define PI_RSV(b, w)		RSV(32 + (b), w)
static const struct rsim_sa_field rsim_pir_fields[] = {
	EQ(0, 16), EQ(16, 8), EQ(24, 8),
	PI(0, 64), PI(64, 64), PI(128, 16), PI(144, 16),	/* M_Key..SMLID */
	{ .bit = 32 + 160, .bits = 32, .cmp = RSIM_SA_CMP_SUBSET }, /* CapMask */
	PI(192, 16), PI(208, 16), PI(224, 8),		/* Diag, lease, port */
	PI(232, 8), PI(240, 8), PI(248, 8),		/* widths */
	PI(256, 4), PI(260, 4), PI(264, 4), PI(268, 4),	/* speed, states */
	PI(272, 2), PI_RSV(274, 3), PI(277, 3),		/* MKeyProt, LMC */
	PI(280, 4), PI(284, 4), PI(288, 4), PI(292, 4),	/* speeds, MTU, SMSL */
	PI(296, 4), PI(300, 4), PI(304, 8), PI(312, 8),	/* VLCap..VLArbHigh */
	PI(320, 8), PI(328, 4), PI(332, 4),		/* VLArbLow, MTUCap */
	PI(336, 3), PI(339, 5), PI(344, 4),		/* stall, HOQ, OpVLs */
	PI(348, 1), PI(349, 1), PI(350, 1), PI(351, 1),	/* enforcement */
	PI(352, 16), PI(368, 16), PI(384, 16), PI(400, 8), /* violations, GUIDCap */
	PI(408, 1), PI(409, 2), PI(411, 5),		/* rereg, trap, timeout */
	PI_RSV(416, 3), PI(419, 5), PI(424, 4), PI(428, 4), /* resp, errors */
	PI(432, 16), PI_RSV(448, 8), PI(456, 24),	/* credit, latency */
	PI(480, 16), PI(496, 4), PI(500, 4),		/* CapMask2, ext speeds */
	PI_RSV(504, 3), PI(507, 5),
};

/*
 * PathRecord (IBA 15.2.5.16), as sa_query.c's path_rec_table lays it out;
 * the components the path is computed from are not filters (SKIP)
 */
#define RSIM_PR_DGID_OFF	8	/* bytes */
#define RSIM_PR_SGID_OFF	24
/* PathRecord components, CPU order (rdma/ib_sa.h has them big-endian) */
#define RSIM_PR_DGID	BIT_ULL(2)
#define RSIM_PR_SGID	BIT_ULL(3)
#define RSIM_PR_DLID	BIT_ULL(4)
#define RSIM_PR_SLID	BIT_ULL(5)
#define RSIM_PR_RAW_TRAFFIC	BIT_ULL(6)
#define RSIM_PR_FLOW_LABEL	BIT_ULL(8)
#define RSIM_PR_HOP_LIMIT	BIT_ULL(9)
#define RSIM_PR_TRAFFIC_CLASS	BIT_ULL(10)
#define RSIM_PR_PKEY	BIT_ULL(13)
#define RSIM_PR_QOS_CLASS	BIT_ULL(14)
#define RSIM_PR_SL	BIT_ULL(15)
#define RSIM_PR_MTU_SELECTOR	BIT_ULL(16)
#define RSIM_PR_MTU	BIT_ULL(17)
#define RSIM_PR_RATE_SELECTOR	BIT_ULL(18)
#define RSIM_PR_RATE	BIT_ULL(19)
#define RSIM_PR_PACKET_LIFE_TIME_SELECTOR	BIT_ULL(20)
#define RSIM_PR_PACKET_LIFE_TIME	BIT_ULL(21)
static const struct rsim_sa_field rsim_pr_fields[] = {
	SKIP(0, 8), SKIP(8, 56),			/* ServiceID */
	EQ(64, 128), EQ(192, 128), EQ(320, 16), EQ(336, 16), /* GIDs, LIDs */
	EQ(352, 1), RSV(353, 3),			/* RawTraffic */
	SKIP(356, 20), SKIP(376, 8), SKIP(384, 8),	/* flow, hops, tclass */
	SKIP(392, 1), SKIP(393, 7), EQ(400, 16),	/* rev, numb, P_Key */
	SKIP(416, 12), SKIP(428, 4),			/* QoS class, SL */
	SEL(432), VAL(434, RSIM_SA_CMP_MTU),
	SEL(440), VAL(442, RSIM_SA_CMP_RATE),
	SEL(448), VAL(450, RSIM_SA_CMP_PLT),
	SKIP(456, 8),					/* Preference */
};

/* one port of the subnet, as the SA sees it */
struct rsim_sa_port_snap {
	struct rsim_dev *rsim;	/* only under the walk's RCU */
	__be64 guid;
	u16 lid;
	bool active;
	enum ib_mtu mtu;
};

/**
 * rsim_sa_table() - room for an answer's records
 * @a: the answer
 * @max: records it may have
 * @rec_len: bytes of one record; they are 8-byte aligned apart
 *
 * Context: process; sleeps.
 * Return: the zeroed table, or NULL (no memory, or @max is 0).
 */
u8 *rsim_sa_table(struct rsim_sa_answer *a, u32 max, u16 rec_len)
{
	a->attr_offset = DIV_ROUND_UP(rec_len, 8);
	a->count = 0;
	a->room = 0;
	if (!max)
		return NULL;
	a->table = kvcalloc(max, a->attr_offset * 8, GFP_KERNEL);
	if (a->table)
		a->room = max;
	return a->table;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_sa_table);

/**
 * rsim_sa_add() - one more record in an answer
 * @a: the answer (rsim_sa_table() made its table)
 * @rec: the record
 * @rec_len: its bytes, at most @a->attr_offset * 8
 *
 * Context: any.
 * Return: true, or false if the table is full (nothing added).
 */
bool rsim_sa_add(struct rsim_sa_answer *a, const u8 *rec, u16 rec_len)
{
	if (a->count == a->room)
		return false;
	memcpy(a->table + a->count++ * a->attr_offset * 8, rec, rec_len);
	return true;
}

/**
 * rsim_sa_answer_free() - free an answer's records
 * @a: the answer
 *
 * Context: process.
 */
void rsim_sa_answer_free(struct rsim_sa_answer *a)
{
	kvfree(a->table);
	a->table = NULL;
	a->count = 0;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_sa_answer_free);

/*
 * A walk over the subnet's ports: NodeRecord and PortInfoRecord (@q, @a,
 * @rec: one record per port, matched), or a snapshot of them (@snap, @n
 * of @max)
 */
struct rsim_sa_walk {
	const struct rsim_sa_query *q;
	struct rsim_sa_answer *a;
	u8 rec[RSIM_SA_NODE_REC_LEN];
	struct rsim_sa_port_snap *snap;
	u32 n;
	u32 max;
};

/* a port whose link is down is out of the SA's view, as after a sweep */
static bool rsim_sa_port_seen(struct rsim_dev *d)
{
	return READ_ONCE(d->port.phys_state) == IB_PORT_PHYS_STATE_LINK_UP;
}

static int rsim_sa_node_one(struct rsim_dev *d, void *arg)
{
	struct rsim_sa_walk *w = arg;
	u8 *rec = w->rec;

	if (!rsim_sa_port_seen(d))
		return 0;
	memset(rec, 0, sizeof(w->rec));
	*(__be16 *)rec = cpu_to_be16(READ_ONCE(d->port.lid));
	rsim_mad_node_info(d, rec + RSIM_NR_NODE_INFO);
	memcpy(rec + RSIM_NR_NODE_DESC, d->ibdev.node_desc,
	       IB_DEVICE_NODE_DESC_MAX);
	if (!rsim_sa_match(rsim_nr_fields, ARRAY_SIZE(rsim_nr_fields),
			   w->q->comp_mask, w->q->rec, rec))
		return 0;
	return rsim_sa_add(w->a, rec, RSIM_SA_NODE_REC_LEN) ? 0 : -ENOSPC;
}

static int rsim_sa_port_info_one(struct rsim_dev *d, void *arg)
{
	struct rsim_sa_walk *w = arg;
	u8 *rec = w->rec;

	if (!rsim_sa_port_seen(d))
		return 0;
	memset(rec, 0, sizeof(w->rec));
	*(__be16 *)rec = cpu_to_be16(READ_ONCE(d->port.lid));
	rec[2] = RSIM_PORT;
	/* the M_Key stays hidden, as an SA hides it from its clients */
	rsim_mad_port_info(d, rec + RSIM_PIR_PORT_INFO, false);
	if (!rsim_sa_match(rsim_pir_fields, ARRAY_SIZE(rsim_pir_fields),
			   w->q->comp_mask, w->q->rec, rec))
		return 0;
	return rsim_sa_add(w->a, rec, RSIM_SA_PORTINFO_REC_LEN) ? 0 : -ENOSPC;
}

/* NodeRecord or PortInfoRecord: every port's, matched */
static int rsim_sa_port_records(const struct rsim_sa_query *q,
				struct rsim_sa_answer *a, bool node)
{
	const struct rsim_sa_field *f = node ? rsim_nr_fields : rsim_pir_fields;
	int n = node ? ARRAY_SIZE(rsim_nr_fields) : ARRAY_SIZE(rsim_pir_fields);
	struct rsim_sa_walk *w;
	u32 max;
	int ret;

	a->status = rsim_sa_check_mask(f, n, q->comp_mask);
	if (a->status)
		return 0;
	w = rsim_kzalloc_obj(*w, GFP_KERNEL);
	if (!w)
		return -ENOMEM;
	w->q = q;
	w->a = a;
	/* a port that joins meanwhile is left out of this answer */
	max = min_t(u32, rsim_subnet_ports(), RSIM_SA_MAX_RECORDS);
	if (!rsim_sa_table(a, max, node ? RSIM_SA_NODE_REC_LEN :
			   RSIM_SA_PORTINFO_REC_LEN) && max) {
		kfree(w);
		return -ENOMEM;
	}
	ret = rsim_subnet_for_each(node ? rsim_sa_node_one :
				   rsim_sa_port_info_one, w);
	kfree(w);
	if (ret == -ENOSPC)
		a->status = RSIM_SA_ERR_NO_RESOURCES;
	return 0;
}

static int rsim_sa_snap_one(struct rsim_dev *d, void *arg)
{
	struct rsim_sa_walk *w = arg;
	struct rsim_sa_port_snap *s;

	if (w->n == w->max)
		return -ENOSPC;
	s = &w->snap[w->n++];
	s->guid = d->port.guid;
	spin_lock_bh(&d->port.lock);
	s->lid = d->port.lid;
	s->active = d->port.state == IB_PORT_ACTIVE &&
		    d->port.phys_state == IB_PORT_PHYS_STATE_LINK_UP;
	s->mtu = d->port.mtu;
	spin_unlock_bh(&d->port.lock);
	return 0;
}

/*
 * The subnet's ports now, in @w->snap (kfree() it), @w->n of them; a port
 * that joins meanwhile is left out. 0 or -ENOMEM.
 */
static int rsim_sa_snapshot(struct rsim_sa_walk *w)
{
	w->n = 0;
	w->max = rsim_subnet_ports();
	w->snap = kcalloc(max_t(u32, w->max, 1), sizeof(*w->snap), GFP_KERNEL);
	if (!w->snap)
		return -ENOMEM;
	rsim_subnet_for_each(rsim_sa_snap_one, w);
	return 0;
}

static struct rsim_sa_port_snap *
rsim_sa_find_port(struct rsim_sa_port_snap *snap, int n, __be64 guid, u16 lid)
{
	int i;

	for (i = 0; i < n; i++)
		if (guid ? snap[i].guid == guid : snap[i].lid == lid)
			return &snap[i];
	return NULL;
}

/*
 * An end of a path the query names by GID (@gid_comp) or LID (@lid_comp):
 * 0 and *@end (NULL when it names none); or a MAD status.
 */
static u16 rsim_sa_path_end(const struct rsim_sa_query *q,
			    struct rsim_sa_port_snap *snap, int n,
			    u64 gid_comp, int gid_off, u64 lid_comp,
			    int lid_off, struct rsim_sa_port_snap **end)
{
	const u8 *rec = q->rec;
	struct rsim_sa_port_snap *p = NULL;

	*end = NULL;
	if (q->comp_mask & gid_comp) {
		const union ib_gid *gid = (const union ib_gid *)(rec + gid_off);

		if (be64_to_cpu(gid->global.subnet_prefix) != RSIM_GID_PREFIX)
			return RSIM_SA_ERR_REQ_INVALID_GID;
		p = rsim_sa_find_port(snap, n, gid->global.interface_id, 0);
		if (!p)
			return RSIM_SA_ERR_REQ_INVALID_GID;
	}
	if (q->comp_mask & lid_comp) {
		u16 lid = be16_to_cpu(*(const __be16 *)(rec + lid_off));
		struct rsim_sa_port_snap *l = rsim_sa_find_port(snap, n, 0, lid);

		/* a LID nobody has, or another port's than the GID's */
		if (!l || (p && p != l))
			return RSIM_SA_ERR_NO_RECORDS;
		p = l;
	}
	*end = p;
	return 0;
}

/* the path from @s to @d as the query asks for it, in @rec; false: none */
static bool rsim_sa_path(const struct rsim_sa_query *q,
			 const struct rsim_sa_port_snap *s,
			 const struct rsim_sa_port_snap *d, u8 *rec)
{
	const u8 *in = q->rec;
	u64 comp = q->comp_mask;
	union ib_gid *gid;
	u16 pkey = IB_DEFAULT_PKEY_FULL;

	if (!s->active || !d->active)
		return false;
	/* raw datagrams have no path records here */
	if ((comp & RSIM_PR_RAW_TRAFFIC) && rsim_sa_get_bits(in, 352, 1))
		return false;
	/* the ports are full members of the default partition only */
	if (comp & RSIM_PR_PKEY) {
		pkey = be16_to_cpu(*(const __be16 *)(in + 50));
		if ((pkey & 0x7fff) != (IB_DEFAULT_PKEY_FULL & 0x7fff))
			return false;
	}
	memset(rec, 0, RSIM_SA_PATH_REC_LEN);
	/* the request's parameters, echoed: ServiceID, flow, hops, tclass */
	memcpy(rec, in, 8);
	gid = (union ib_gid *)(rec + RSIM_PR_DGID_OFF);
	gid->global.subnet_prefix = cpu_to_be64(RSIM_GID_PREFIX);
	gid->global.interface_id = d->guid;
	gid = (union ib_gid *)(rec + RSIM_PR_SGID_OFF);
	gid->global.subnet_prefix = cpu_to_be64(RSIM_GID_PREFIX);
	gid->global.interface_id = s->guid;
	*(__be16 *)(rec + 40) = cpu_to_be16(d->lid);
	*(__be16 *)(rec + 42) = cpu_to_be16(s->lid);
	if (comp & RSIM_PR_FLOW_LABEL)
		rsim_sa_put_bits(rec, 356, 20, rsim_sa_get_bits(in, 356, 20));
	if (comp & RSIM_PR_HOP_LIMIT)
		rec[47] = in[47];
	if (comp & RSIM_PR_TRAFFIC_CLASS)
		rec[48] = in[48];
	rec[49] = 0x80;				/* reversible; NumbPath 0 */
	*(__be16 *)(rec + 50) = cpu_to_be16(pkey);
	if (comp & RSIM_PR_QOS_CLASS)
		rsim_sa_put_bits(rec, 416, 12, rsim_sa_get_bits(in, 416, 12));
	if (comp & RSIM_PR_SL)
		rsim_sa_put_bits(rec, 428, 4, rsim_sa_get_bits(in, 428, 4));
	rec[54] = IB_SA_EQ << 6 | min(s->mtu, d->mtu);
	rec[55] = IB_SA_EQ << 6 | RSIM_SA_PATH_RATE;
	rec[56] = IB_SA_EQ << 6 | RSIM_SA_PLT;
	/* what the path is must satisfy what the query asks of it */
	return rsim_sa_match(rsim_pr_fields, ARRAY_SIZE(rsim_pr_fields),
			     comp & (RSIM_PR_MTU_SELECTOR |
				     RSIM_PR_MTU |
				     RSIM_PR_RATE_SELECTOR |
				     RSIM_PR_RATE |
				     RSIM_PR_PACKET_LIFE_TIME_SELECTOR |
				     RSIM_PR_PACKET_LIFE_TIME),
			     in, rec);
}

/* PathRecord: the paths between the ports the query names */
static int rsim_sa_path_records(const struct rsim_sa_query *q,
				struct rsim_sa_answer *a)
{
	struct rsim_sa_port_snap *src, *dst;
	struct rsim_sa_walk w = {};
	u8 rec[RSIM_SA_PATH_REC_LEN];
	u32 max;
	int n, i, j;

	a->status = rsim_sa_check_mask(rsim_pr_fields,
				       ARRAY_SIZE(rsim_pr_fields), q->comp_mask);
	if (a->status)
		return 0;
	if (rsim_sa_snapshot(&w))
		return -ENOMEM;
	n = w.n;
	a->status = rsim_sa_path_end(q, w.snap, n, RSIM_PR_SGID,
				     RSIM_PR_SGID_OFF, RSIM_PR_SLID, 42, &src);
	if (!a->status)
		a->status = rsim_sa_path_end(q, w.snap, n, RSIM_PR_DGID,
					     RSIM_PR_DGID_OFF, RSIM_PR_DLID,
					     40, &dst);
	if (a->status)
		goto out;
	if (q->method == IB_MGMT_METHOD_GET) {
		/* a Get is for one path: from the requester, by default */
		if (!dst) {
			a->status = RSIM_SA_ERR_REQ_INSUFFICIENT_COMPONENTS;
			goto out;
		}
		if (!src)
			src = rsim_sa_find_port(w.snap, n, 0, q->slid);
		if (!src) {
			a->status = RSIM_SA_ERR_NO_RECORDS;
			goto out;
		}
	}
	max = min_t(u32, (src ? 1 : n) * (dst ? 1 : n), RSIM_SA_MAX_RECORDS);
	if (!rsim_sa_table(a, max, RSIM_SA_PATH_REC_LEN) && max) {
		kfree(w.snap);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		if (src && &w.snap[i] != src)
			continue;
		for (j = 0; j < n; j++) {
			if (dst && &w.snap[j] != dst)
				continue;
			if (!rsim_sa_path(q, &w.snap[i], &w.snap[j], rec))
				continue;
			if (!rsim_sa_add(a, rec, RSIM_SA_PATH_REC_LEN)) {
				a->status = RSIM_SA_ERR_NO_RESOURCES;
				goto out;
			}
		}
	}
out:
	kfree(w.snap);
	return 0;
}

/* ClassPortInfo (IBA 13.4.8.1) of the SA class */
static int rsim_sa_class_port_info(const struct rsim_sa_query *q,
				   struct rsim_sa_answer *a)
{
	struct ib_class_port_info *cpi;

	if (!rsim_sa_table(a, 1, sizeof(*cpi)))
		return -ENOMEM;
	cpi = (struct ib_class_port_info *)a->table;
	cpi->base_version = IB_MGMT_BASE_VERSION;
	cpi->class_version = RSIM_SA_CLASS_VERSION;
	ib_set_cpi_capmask2(cpi, IB_SA_CAP_MASK2_SENDONLY_FULL_MEM_SUPPORT);
	/* 4.096 us * 2^18: about a second */
	ib_set_cpi_resp_time(cpi, 18);
	a->count = 1;
	return 0;
}

/**
 * rsim_sa_answer() - the SA's answer to one request
 * @q: the request
 * @a: the answer: a status, and the records of a successful Get (one),
 *	GetTable (any number), Set or Delete (the member record)
 *
 * Context: process; sleeps (GFP_KERNEL).
 * Return: 0 with @a filled (rsim_sa_answer_free() it), or -ENOMEM.
 */
int rsim_sa_answer(const struct rsim_sa_query *q, struct rsim_sa_answer *a)
{
	bool get = q->method == IB_MGMT_METHOD_GET;
	bool table = q->method == IB_SA_METHOD_GET_TABLE;
	__be64 requester = 0;
	int err;

	memset(a, 0, sizeof(*a));
	switch (q->attr_id) {
	case IB_SA_ATTR_CLASS_PORTINFO:
		if (!get)
			goto unsupported;
		return rsim_sa_class_port_info(q, a);
	case IB_SA_ATTR_NODE_REC:
	case IB_SA_ATTR_PORT_INFO_REC:
		if (!get && !table)
			goto unsupported;
		err = rsim_sa_port_records(q, a,
					   q->attr_id == IB_SA_ATTR_NODE_REC);
		break;
	case IB_SA_ATTR_PATH_REC:
		if (!get && !table)
			goto unsupported;
		err = rsim_sa_path_records(q, a);
		break;
	case IB_SA_ATTR_MC_MEMBER_REC:
		if (q->method != IB_MGMT_METHOD_SET &&
		    q->method != IB_SA_METHOD_DELETE && !get && !table)
			goto unsupported;
		/* the requester's port: joins are for the port itself */
		rsim_subnet_lid_guid(q->slid, &requester);
		err = rsim_mcast_answer(q, requester, a);
		break;
	default:
		goto unsupported;
	}
	if (err) {
		rsim_sa_answer_free(a);
		return err;
	}
	if (!a->status && get && a->count != 1)
		a->status = a->count ? RSIM_SA_ERR_TOO_MANY_RECORDS :
				       RSIM_SA_ERR_NO_RECORDS;
	if (a->status)
		rsim_sa_answer_free(a);
	return 0;

unsupported:
	a->status = IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_sa_answer);
