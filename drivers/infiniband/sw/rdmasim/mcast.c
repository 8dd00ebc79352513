// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: the subnet administrator's multicast groups (MCMemberRecord,
 * IBA 15.2.5.17).
 *
 * The SA keeps the subnet's groups: each has an MGID, a multicast LID
 * (0xC000 up), the parameters its creator asked for (Q_Key, P_Key, MTU,
 * rate, SL, flow label, traffic class, hop limit, scope) and its member
 * ports, each with a JoinState (FullMember, NonMember, SendOnlyNonMember,
 * SendOnlyFullMember bits). The groups belong to the subnet, not to the
 * master SM's device: a new master keeps them, and a port that leaves the
 * subnet leaves every group.
 *
 *  - Set joins the requester's port (ERR_REQ_DENIED for another port's:
 *    no proxy joins), creating the group when its MGID is new or zero (the
 *    SA then assigns one, signature 0xA01B). Creating needs Q_Key, P_Key,
 *    SL, FlowLabel and TClass (ERR_REQ_INSUFFICIENT_COMPONENTS) and a
 *    full member; MTU and rate take what their selectors allow, 2048 and
 *    10 Gb/s when the request does not say (opensm's defaults). Joining
 *    an existing group must not contradict it (ERR_REQ_INVALID).
 *  - Delete takes JoinState bits away; the member goes with its last bit,
 *    and a group the SA did not make goes with its last member.
 *  - Get and GetTable return a record per member, matched on any
 *    component.
 *
 * As an SM does, the SA makes IPoIB's broadcast group of the default
 * partition when it starts (ff12:401b:ffff::ffff:ffff, Q_Key 0x0b1b): it
 * stays without members.
 *
 * Limits. Any process with the port's umad device can ask the SA for
 * joins, and nothing in a MAD says which process asked: the SA answers
 * ports, and bounds what each port may hold, as IBA lets it (o15-0.2.x:
 * a join it cannot honour is answered ERR_NO_RESOURCES):
 *
 *  - a port is a member of at most rsim_mcg_limits.port_members groups
 *    (each join of a group it is not yet in counts, creating or not; a
 *    group lives only while it has a member, so this bounds the groups
 *    one port can make, and their memory: about 200 bytes each);
 *  - MLIDs above rsim_mcg_limits.mlid_last are kept for IPoIB's groups
 *    (the signatures 0x401b and 0x601b: broadcast, all-nodes, solicited
 *    node): a flood of other groups from every port at once still
 *    leaves IPoIB its joins.
 *
 * The memory cannot be charged to the asking process: the SA runs in the
 * MAD layer's work, and the asker may be the kernel (IPoIB, the CM). A
 * membership goes when its port leaves it, or leaves the subnet (the
 * device goes): IBA has no lease that outlives a process, and a umad
 * process's joins outlive it, as with opensm. Refusals are counted
 * (sa/stats: mcast_refused_port, mcast_refused_mlid).
 */

#include <linux/debugfs.h>
#include <linux/idr.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <kunit/visibility.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_sa.h>

#include "rdmasim.h"

/* MCMemberRecord components, CPU order (rdma/ib_sa.h has them big-endian) */
#define RSIM_MCM_MGID		BIT_ULL(0)
#define RSIM_MCM_PORT_GID	BIT_ULL(1)
#define RSIM_MCM_QKEY		BIT_ULL(2)
#define RSIM_MCM_MLID		BIT_ULL(3)
#define RSIM_MCM_MTU_SEL	BIT_ULL(4)
#define RSIM_MCM_MTU		BIT_ULL(5)
#define RSIM_MCM_TCLASS		BIT_ULL(6)
#define RSIM_MCM_PKEY		BIT_ULL(7)
#define RSIM_MCM_RATE_SEL	BIT_ULL(8)
#define RSIM_MCM_RATE		BIT_ULL(9)
#define RSIM_MCM_PLT_SEL	BIT_ULL(10)
#define RSIM_MCM_PLT		BIT_ULL(11)
#define RSIM_MCM_SL		BIT_ULL(12)
#define RSIM_MCM_FLOW		BIT_ULL(13)
#define RSIM_MCM_HOP		BIT_ULL(14)
#define RSIM_MCM_SCOPE		BIT_ULL(15)
#define RSIM_MCM_JOIN_STATE	BIT_ULL(16)
#define RSIM_MCM_PROXY		BIT_ULL(17)
#define RSIM_MCM_CREATE		(RSIM_MCM_QKEY | RSIM_MCM_TCLASS | RSIM_MCM_PKEY | \
				 RSIM_MCM_FLOW | RSIM_MCM_SL)

/* where the fields are, in bytes and bits */
#define RSIM_MCM_PORT_GID_OFF	16
#define RSIM_MCM_QKEY_OFF	32
#define RSIM_MCM_MLID_OFF	36
#define RSIM_MCM_MTU_OFF	38
#define RSIM_MCM_PKEY_OFF	40
#define RSIM_MCM_RATE_OFF	42
#define RSIM_MCM_PLT_OFF	43
#define RSIM_MCM_SCOPE_BIT	384
#define RSIM_MCM_JOIN_BIT	388

#define RSIM_JOIN_FULL		BIT(FULLMEMBER_JOIN)
#define RSIM_JOIN_SENDONLY_FULL	BIT(SENDONLY_FULLMEMBER_JOIN)

/*
 * MCMemberRecord's components (IBA 15.2.5.17), by component bit, as
 * sa_query.c's mcmember_rec_table lays them out
 */
static const struct rsim_sa_field rsim_mcm_fields[] = {
	{ 0, 128, RSIM_SA_CMP_EQ },	/* MGID */
	{ 128, 128, RSIM_SA_CMP_EQ },	/* PortGID */
	{ 256, 32, RSIM_SA_CMP_EQ },	/* Q_Key */
	{ 288, 16, RSIM_SA_CMP_EQ },	/* MLID */
	{ 304, 2, RSIM_SA_CMP_SEL },
	{ 306, 6, RSIM_SA_CMP_MTU },
	{ 312, 8, RSIM_SA_CMP_EQ },	/* TClass */
	{ 320, 16, RSIM_SA_CMP_EQ },	/* P_Key */
	{ 336, 2, RSIM_SA_CMP_SEL },
	{ 338, 6, RSIM_SA_CMP_RATE },
	{ 344, 2, RSIM_SA_CMP_SEL },
	{ 346, 6, RSIM_SA_CMP_PLT },
	{ 352, 4, RSIM_SA_CMP_EQ },	/* SL */
	{ 356, 20, RSIM_SA_CMP_EQ },	/* FlowLabel */
	{ 376, 8, RSIM_SA_CMP_EQ },	/* HopLimit */
	{ 384, 4, RSIM_SA_CMP_EQ },	/* Scope */
	{ 388, 4, RSIM_SA_CMP_EQ },	/* JoinState */
	{ 392, 1, RSIM_SA_CMP_EQ },	/* ProxyJoin */
};

/**
 * struct rsim_mcg_member - a port in a group
 * @node: on the group's @members (RCU: the data path reads them)
 * @guid: the port's GUID (its PortGID is the subnet prefix and this)
 * @join_state: its JoinState bits (WRITE_ONCE: the data path reads them)
 * @rcu: freed after the readers
 */
struct rsim_mcg_member {
	struct list_head node;
	__be64 guid;
	u8 join_state;
	struct rcu_head rcu;
};

/**
 * struct rsim_mcg - a multicast group
 * @node: on rsim_mcgs (RCU: the data path finds a group's member ports)
 * @rec: the group's MCMemberRecord, PortGID and JoinState zero
 * @mlid: its multicast LID
 * @well_known: made by the SA; stays without members
 * @members: its &struct rsim_mcg_member
 * @rcu: freed after the readers
 */
struct rsim_mcg {
	struct list_head node;
	u8 rec[RSIM_SA_MCM_REC_LEN];
	u16 mlid;
	bool well_known;
	struct list_head members;
	struct rcu_head rcu;
};

/**
 * struct rsim_mcg_limits - what the SA lets a port hold (KUnit lowers them)
 * @port_members: groups one port may be a member of
 * @mlid_last: the last MLID an ordinary group may have; those above it
 *	(to RSIM_SA_MLID_LAST) are IPoIB's reserve
 */
struct rsim_mcg_limits {
	u32 port_members;
	u16 mlid_last;
};

static struct rsim_mcg_limits rsim_mcg_limits = {
	.port_members = RSIM_SA_MCG_PORT_MEMBERS,
	.mlid_last = RSIM_SA_MLID_LAST - RSIM_SA_MLID_RESERVE,
};

/*
 * joins refused because the port holds its limit, and creates refused
 * because no MLID was left (for the group's kind)
 */
static atomic64_t rsim_mcg_refused_port;
static atomic64_t rsim_mcg_refused_mlid;

static LIST_HEAD(rsim_mcgs);
/*
 * protects rsim_mcgs, every group and its members (writers; the data
 * path reads them under RCU) and rsim_mcg_limits; taken in process
 * context
 */
static DEFINE_MUTEX(rsim_mcg_lock);
/* the multicast LIDs in use (its own lock) */
static DEFINE_IDA(rsim_mlid_ida);

static struct rsim_mcg *rsim_mcg_find(const u8 *mgid)
{
	struct rsim_mcg *g;

	list_for_each_entry(g, &rsim_mcgs, node)
		if (!memcmp(g->rec, mgid, sizeof(union ib_gid)))
			return g;
	return NULL;
}

static struct rsim_mcg_member *rsim_mcg_member(struct rsim_mcg *g,
					       __be64 guid)
{
	struct rsim_mcg_member *m;

	list_for_each_entry(m, &g->members, node)
		if (m->guid == guid)
			return m;
	return NULL;
}

/* the groups @guid is a member of */
static u32 rsim_mcg_port_members(__be64 guid)
{
	struct rsim_mcg *g;
	u32 n = 0;

	list_for_each_entry(g, &rsim_mcgs, node)
		n += !!rsim_mcg_member(g, guid);
	return n;
}

/* an MGID of IPoIB's (signature 0x401b or 0x601b, RFC 4391 4.1) */
static bool rsim_mcg_ipoib(const u8 *mgid)
{
	return mgid[0] == 0xff && mgid[3] == 0x1b &&
	       (mgid[2] == 0x40 || mgid[2] == 0x60);
}

/* an MLID for a new group: IPoIB's may take the reserve */
static int rsim_mcg_mlid(const u8 *mgid)
{
	u16 last = rsim_mcg_limits.mlid_last;
	int mlid;

	mlid = ida_alloc_range(&rsim_mlid_ida, RSIM_SA_MLID_FIRST, last,
			       GFP_KERNEL);
	if (mlid == -ENOSPC && rsim_mcg_ipoib(mgid) && last < RSIM_SA_MLID_LAST)
		mlid = ida_alloc_range(&rsim_mlid_ida, last + 1,
				       RSIM_SA_MLID_LAST, GFP_KERNEL);
	if (mlid == -ENOSPC)
		atomic64_inc(&rsim_mcg_refused_mlid);
	return mlid;
}

static void rsim_mcg_free(struct rsim_mcg *g)
{
	struct rsim_mcg_member *m, *tmp;

	list_for_each_entry_safe(m, tmp, &g->members, node) {
		list_del_rcu(&m->node);
		kfree_rcu(m, rcu);
	}
	list_del_rcu(&g->node);
	ida_free(&rsim_mlid_ida, g->mlid);
	kfree_rcu(g, rcu);
}

/* @g's record for member @m (or with its JoinState @join) at @out */
static void rsim_mcg_record(const struct rsim_mcg *g, __be64 guid, u8 join,
			    u8 *out)
{
	union ib_gid *gid = (union ib_gid *)(out + RSIM_MCM_PORT_GID_OFF);

	memcpy(out, g->rec, RSIM_SA_MCM_REC_LEN);
	gid->global.subnet_prefix = cpu_to_be64(RSIM_GID_PREFIX);
	gid->global.interface_id = guid;
	rsim_sa_put_bits(out, RSIM_MCM_JOIN_BIT, 4, join);
}

/* a value a group can have: @lo to @max (for a rate: by speed) */
static bool rsim_mcg_within(u8 cmp, u8 v, u8 lo, u8 max)
{
	if (cmp == RSIM_SA_CMP_RATE) {
		int mbps = v ? ib_rate_to_mbps(v) : 0;

		return mbps > 0 && mbps <= ib_rate_to_mbps(max);
	}
	return v >= lo && v <= max;
}

/*
 * A group's MTU, rate or packet lifetime from what a create asks (@comp
 * names the value, @sel_comp its selector): the value itself for "equal",
 * the largest up to @max the selector allows, @dflt when the request does
 * not say. False if no value up to @max satisfies the request.
 */
static bool rsim_mcg_pick(u8 cmp, u64 mask, u64 sel_comp, u64 comp, u8 in,
			  u8 dflt, u8 max, u8 lo, u8 *out)
{
	u8 sel = (mask & sel_comp) ? in >> 6 : IB_SA_EQ;
	u8 want = in & 0x3f;
	int v, best = -1;

	if (!(mask & comp)) {
		*out = dflt;
		return true;
	}
	if (sel == IB_SA_EQ) {
		*out = want;
		return rsim_mcg_within(cmp, want, lo, max);
	}
	for (v = 0; v <= 0x3f; v++) {
		if (!rsim_mcg_within(cmp, v, lo, max) ||
		    !rsim_sa_sel_ok(cmp, sel, want, v))
			continue;
		if (best < 0 || rsim_sa_sel_ok(cmp, IB_SA_GT, best, v))
			best = v;
	}
	if (best < 0)
		return false;
	*out = best;
	return true;
}

/* a new group from a Set's record, its MLID assigned; a MAD status */
static u16 rsim_mcg_create(const struct rsim_sa_query *q, struct rsim_mcg **out)
{
	u64 comp = q->comp_mask;
	const u8 *in = q->rec;
	struct rsim_mcg *g;
	u8 mtu, rate, plt;
	u16 pkey;
	int mlid;

	if ((comp & RSIM_MCM_CREATE) != RSIM_MCM_CREATE)
		return RSIM_SA_ERR_REQ_INSUFFICIENT_COMPONENTS;
	/* only a full member creates (IBA o15-0.2.3) */
	if (!(rsim_sa_get_bits(in, RSIM_MCM_JOIN_BIT, 4) &
	      (RSIM_JOIN_FULL | RSIM_JOIN_SENDONLY_FULL)))
		return RSIM_SA_ERR_REQ_INVALID;
	pkey = be16_to_cpu(*(const __be16 *)(in + RSIM_MCM_PKEY_OFF));
	if ((pkey & 0x7fff) != (IB_DEFAULT_PKEY_FULL & 0x7fff))
		return RSIM_SA_ERR_REQ_INVALID;
	if (!rsim_mcg_pick(RSIM_SA_CMP_MTU, comp, RSIM_MCM_MTU_SEL,
			   RSIM_MCM_MTU, in[RSIM_MCM_MTU_OFF], RSIM_SA_MCG_MTU,
			   IB_MTU_4096, IB_MTU_256, &mtu) ||
	    !rsim_mcg_pick(RSIM_SA_CMP_RATE, comp, RSIM_MCM_RATE_SEL,
			   RSIM_MCM_RATE, in[RSIM_MCM_RATE_OFF],
			   RSIM_SA_MCG_RATE, RSIM_SA_PATH_RATE, IB_RATE_2_5_GBPS,
			   &rate) ||
	    !rsim_mcg_pick(RSIM_SA_CMP_PLT, comp, RSIM_MCM_PLT_SEL,
			   RSIM_MCM_PLT, in[RSIM_MCM_PLT_OFF], RSIM_SA_PLT,
			   0x3f, 0, &plt))
		return RSIM_SA_ERR_REQ_INVALID;

	g = rsim_kzalloc_obj(*g, GFP_KERNEL);
	if (!g)
		return RSIM_SA_ERR_NO_RESOURCES;
	/* the SA's own MGIDs (below) are never IPoIB's */
	mlid = rsim_mcg_mlid((comp & RSIM_MCM_MGID) ? in : g->rec);
	if (mlid < 0) {
		kfree(g);
		return RSIM_SA_ERR_NO_RESOURCES;
	}
	g->mlid = mlid;
	INIT_LIST_HEAD(&g->members);
	/* the creator's parameters; the rest of the record is the SA's */
	memcpy(g->rec, in, RSIM_SA_MCM_REC_LEN);
	memset(g->rec + RSIM_MCM_PORT_GID_OFF, 0, sizeof(union ib_gid));
	if (!(comp & RSIM_MCM_MGID) || !memchr_inv(in, 0, sizeof(union ib_gid))) {
		/* an MGID of the SA's: ff12:a01b:<P_Key>::<MLID> */
		memset(g->rec, 0, sizeof(union ib_gid));
		g->rec[0] = 0xff;
		g->rec[1] = 0x12;
		g->rec[2] = 0xa0;
		g->rec[3] = 0x1b;
		*(__be16 *)&g->rec[4] = cpu_to_be16(pkey);
		*(__be16 *)&g->rec[14] = cpu_to_be16(mlid);
	}
	*(__be16 *)(g->rec + RSIM_MCM_MLID_OFF) = cpu_to_be16(mlid);
	g->rec[RSIM_MCM_MTU_OFF] = IB_SA_EQ << 6 | mtu;
	g->rec[RSIM_MCM_RATE_OFF] = IB_SA_EQ << 6 | rate;
	g->rec[RSIM_MCM_PLT_OFF] = IB_SA_EQ << 6 | plt;
	if (!(comp & RSIM_MCM_HOP))
		g->rec[47] = 0;
	if (!(comp & RSIM_MCM_SCOPE))
		rsim_sa_put_bits(g->rec, RSIM_MCM_SCOPE_BIT, 4, g->rec[1] & 0xf);
	rsim_sa_put_bits(g->rec, RSIM_MCM_JOIN_BIT, 4, 0);
	rsim_sa_put_bits(g->rec, 392, 8, 0);		/* ProxyJoin, reserved */
	list_add_tail_rcu(&g->node, &rsim_mcgs);
	*out = g;
	return 0;
}

/*
 * The port a Set or Delete names (PortGID), which must be the requester's:
 * its GUID in @guid, or a MAD status.
 */
static u16 rsim_mcg_port(const struct rsim_sa_query *q, __be64 requester,
			 __be64 *guid)
{
	const union ib_gid *gid =
		(const union ib_gid *)(q->rec + RSIM_MCM_PORT_GID_OFF);

	if ((q->comp_mask & (RSIM_MCM_PORT_GID | RSIM_MCM_JOIN_STATE)) !=
	    (RSIM_MCM_PORT_GID | RSIM_MCM_JOIN_STATE))
		return RSIM_SA_ERR_REQ_INSUFFICIENT_COMPONENTS;
	if (!rsim_sa_get_bits(q->rec, RSIM_MCM_JOIN_BIT, 4))
		return RSIM_SA_ERR_REQ_INVALID;
	if (be64_to_cpu(gid->global.subnet_prefix) != RSIM_GID_PREFIX ||
	    !rsim_subnet_has_guid(gid->global.interface_id))
		return RSIM_SA_ERR_REQ_INVALID_GID;
	/* no proxy joins: a port joins and leaves for itself */
	if (gid->global.interface_id != requester ||
	    ((q->comp_mask & RSIM_MCM_PROXY) && rsim_sa_get_bits(q->rec, 392, 1)))
		return RSIM_SA_ERR_REQ_DENIED;
	*guid = gid->global.interface_id;
	return 0;
}

/* Set: join the requester's port, creating the group if it is new */
static u16 rsim_mcg_join(const struct rsim_sa_query *q, __be64 requester,
			 u8 *out)
{
	u8 join = rsim_sa_get_bits(q->rec, RSIM_MCM_JOIN_BIT, 4);
	u64 comp = q->comp_mask;
	struct rsim_mcg_member *m;
	struct rsim_mcg *g = NULL;
	bool created = false;
	__be64 guid;
	u16 status;

	status = rsim_mcg_port(q, requester, &guid);
	if (status)
		return status;
	if ((comp & RSIM_MCM_MGID) && memchr_inv(q->rec, 0, sizeof(union ib_gid))) {
		if (q->rec[0] != 0xff)
			return RSIM_SA_ERR_REQ_INVALID;
		g = rsim_mcg_find(q->rec);
	}
	/* a new membership: within the port's limit */
	if ((!g || !rsim_mcg_member(g, guid)) &&
	    rsim_mcg_port_members(guid) >= rsim_mcg_limits.port_members) {
		atomic64_inc(&rsim_mcg_refused_port);
		return RSIM_SA_ERR_NO_RESOURCES;
	}
	if (!g) {
		status = rsim_mcg_create(q, &g);
		if (status)
			return status;
		created = true;
	} else if (!rsim_sa_match(rsim_mcm_fields, ARRAY_SIZE(rsim_mcm_fields),
				  comp & ~(RSIM_MCM_PORT_GID | RSIM_MCM_JOIN_STATE |
					   RSIM_MCM_PROXY), q->rec, g->rec)) {
		/* the request contradicts the group */
		return RSIM_SA_ERR_REQ_INVALID;
	}
	m = rsim_mcg_member(g, guid);
	if (!m) {
		m = rsim_kzalloc_obj(*m, GFP_KERNEL);
		if (!m) {
			if (created)
				rsim_mcg_free(g);
			return RSIM_SA_ERR_NO_RESOURCES;
		}
		m->guid = guid;
		list_add_tail_rcu(&m->node, &g->members);
	}
	WRITE_ONCE(m->join_state, m->join_state | join);
	rsim_mcg_record(g, guid, m->join_state, out);
	return 0;
}

/* Delete: take JoinState bits away from the requester's port */
static u16 rsim_mcg_leave(const struct rsim_sa_query *q, __be64 requester,
			  u8 *out)
{
	u8 join = rsim_sa_get_bits(q->rec, RSIM_MCM_JOIN_BIT, 4);
	struct rsim_mcg_member *m;
	struct rsim_mcg *g;
	__be64 guid;
	u16 status;

	if (!(q->comp_mask & RSIM_MCM_MGID))
		return RSIM_SA_ERR_REQ_INSUFFICIENT_COMPONENTS;
	status = rsim_mcg_port(q, requester, &guid);
	if (status)
		return status;
	g = rsim_mcg_find(q->rec);
	m = g ? rsim_mcg_member(g, guid) : NULL;
	if (!m || !(m->join_state & join))
		return RSIM_SA_ERR_REQ_INVALID;
	rsim_mcg_record(g, guid, join, out);
	WRITE_ONCE(m->join_state, m->join_state & ~join);
	if (!m->join_state) {
		list_del_rcu(&m->node);
		kfree_rcu(m, rcu);
	}
	if (list_empty(&g->members) && !g->well_known)
		rsim_mcg_free(g);
	return 0;
}

/* Get, GetTable: a record per member of every group, matched */
static int rsim_mcg_records(const struct rsim_sa_query *q,
			    struct rsim_sa_answer *a)
{
	u8 rec[RSIM_SA_MCM_REC_LEN];
	struct rsim_mcg_member *m;
	struct rsim_mcg *g;
	u32 n = 0;

	list_for_each_entry(g, &rsim_mcgs, node)
		list_for_each_entry(m, &g->members, node)
			n++;
	n = min_t(u32, n, RSIM_SA_MAX_RECORDS);
	if (!rsim_sa_table(a, n, RSIM_SA_MCM_REC_LEN) && n)
		return -ENOMEM;
	list_for_each_entry(g, &rsim_mcgs, node) {
		list_for_each_entry(m, &g->members, node) {
			rsim_mcg_record(g, m->guid, m->join_state, rec);
			if (!rsim_sa_match(rsim_mcm_fields,
					   ARRAY_SIZE(rsim_mcm_fields),
					   q->comp_mask, q->rec, rec))
				continue;
			if (!rsim_sa_add(a, rec, RSIM_SA_MCM_REC_LEN)) {
				a->status = RSIM_SA_ERR_NO_RESOURCES;
				return 0;
			}
		}
	}
	return 0;
}

/**
 * rsim_mcast_answer() - the SA's answer to an MCMemberRecord request
 * @q: the request (Set, Delete, Get or GetTable)
 * @requester: the requesting port's GUID, or 0 if its LID is no port's
 * @a: the answer (rsim_sa_answer() sets it up)
 *
 * Context: process; sleeps.
 * Return: 0 with @a filled, or -ENOMEM.
 */
int rsim_mcast_answer(const struct rsim_sa_query *q, __be64 requester,
		      struct rsim_sa_answer *a)
{
	bool change = q->method == IB_MGMT_METHOD_SET ||
		      q->method == IB_SA_METHOD_DELETE;
	int err = 0;

	a->status = rsim_sa_check_mask(rsim_mcm_fields,
				       ARRAY_SIZE(rsim_mcm_fields), q->comp_mask);
	if (a->status)
		return 0;
	if (change && !rsim_sa_table(a, 1, RSIM_SA_MCM_REC_LEN))
		return -ENOMEM;
	mutex_lock(&rsim_mcg_lock);
	if (q->method == IB_MGMT_METHOD_SET)
		a->status = rsim_mcg_join(q, requester, a->table);
	else if (q->method == IB_SA_METHOD_DELETE)
		a->status = rsim_mcg_leave(q, requester, a->table);
	else
		err = rsim_mcg_records(q, a);
	mutex_unlock(&rsim_mcg_lock);
	if (change && !a->status)
		a->count = 1;
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_mcast_answer);

/**
 * rsim_mcast_port_gone() - a port left the subnet: it leaves every group
 * @guid: the port's GUID
 *
 * A group the SA did not make goes with its last member.
 *
 * Context: process; sleeps.
 */
void rsim_mcast_port_gone(__be64 guid)
{
	struct rsim_mcg *g, *tmp;
	struct rsim_mcg_member *m;

	mutex_lock(&rsim_mcg_lock);
	list_for_each_entry_safe(g, tmp, &rsim_mcgs, node) {
		m = rsim_mcg_member(g, guid);
		if (!m)
			continue;
		list_del_rcu(&m->node);
		kfree_rcu(m, rcu);
		if (list_empty(&g->members) && !g->well_known)
			rsim_mcg_free(g);
	}
	mutex_unlock(&rsim_mcg_lock);
}
EXPORT_SYMBOL_IF_KUNIT(rsim_mcast_port_gone);

/**
 * rsim_mcast_port_receives() - does a group's traffic reach a port?
 * @mlid: the group's multicast LID
 * @guid: the port's GUID
 *
 * What a switch's multicast forwarding table says: the port is a member
 * of the group with that MLID, as a FullMember or NonMember (a send-only
 * member receives nothing).
 *
 * Context: any; does not sleep.
 * Return: true if a datagram to @mlid is forwarded to the port.
 */
bool rsim_mcast_port_receives(u16 mlid, __be64 guid)
{
	struct rsim_mcg_member *m;
	struct rsim_mcg *g;
	bool yes = false;

	rcu_read_lock();
	list_for_each_entry_rcu(g, &rsim_mcgs, node) {
		if (g->mlid != mlid)
			continue;
		list_for_each_entry_rcu(m, &g->members, node)
			if (m->guid == guid &&
			    (READ_ONCE(m->join_state) &
			     (RSIM_JOIN_FULL | BIT(NONMEMBER_JOIN))))
				yes = true;
		break;
	}
	rcu_read_unlock();
	return yes;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_mcast_port_receives);

/**
 * rsim_mcast_show() - the groups and their members, for debugfs
 * @m: the file
 *
 * Context: process.
 */
void rsim_mcast_show(struct seq_file *m)
{
	struct rsim_mcg_member *mb;
	struct rsim_mcg *g;

	mutex_lock(&rsim_mcg_lock);
	list_for_each_entry(g, &rsim_mcgs, node) {
		seq_printf(m, "mgid %pI6 mlid 0x%04x qkey 0x%08x pkey 0x%04x mtu %d rate %d sl %u scope %u%s\n",
			   g->rec, g->mlid,
			   be32_to_cpu(*(__be32 *)(g->rec + RSIM_MCM_QKEY_OFF)),
			   be16_to_cpu(*(__be16 *)(g->rec + RSIM_MCM_PKEY_OFF)),
			   ib_mtu_enum_to_int(g->rec[RSIM_MCM_MTU_OFF] & 0x3f),
			   ib_rate_to_mbps(g->rec[RSIM_MCM_RATE_OFF] & 0x3f) / 1000,
			   (u32)rsim_sa_get_bits(g->rec, 352, 4),
			   (u32)rsim_sa_get_bits(g->rec, RSIM_MCM_SCOPE_BIT, 4),
			   g->well_known ? " well-known" : "");
		list_for_each_entry(mb, &g->members, node)
			seq_printf(m, "  member 0x%016llx join_state 0x%x\n",
				   be64_to_cpu(mb->guid), mb->join_state);
	}
	mutex_unlock(&rsim_mcg_lock);
}

/**
 * rsim_mcast_set_limits() - what the SA lets a port hold
 * @port_members: groups one port may be a member of (0: the default)
 * @mlid_last: the last MLID an ordinary group may have (0: the default);
 *	the MLIDs above it are IPoIB's reserve
 *
 * For KUnit, which lowers them to reach them; existing groups stay.
 *
 * Context: process; sleeps.
 */
void rsim_mcast_set_limits(u32 port_members, u16 mlid_last)
{
	mutex_lock(&rsim_mcg_lock);
	rsim_mcg_limits.port_members = port_members ?:
				       RSIM_SA_MCG_PORT_MEMBERS;
	rsim_mcg_limits.mlid_last = mlid_last ? clamp_t(u16, mlid_last,
						       RSIM_SA_MLID_FIRST,
						       RSIM_SA_MLID_LAST) :
				    RSIM_SA_MLID_LAST - RSIM_SA_MLID_RESERVE;
	mutex_unlock(&rsim_mcg_lock);
}
EXPORT_SYMBOL_IF_KUNIT(rsim_mcast_set_limits);

/**
 * rsim_mcast_refused() - joins the SA refused for want of resources
 * @port: true: for a port at its limit; false: for want of an MLID
 *
 * Context: any.
 * Return: how many since the module loaded.
 */
u64 rsim_mcast_refused(bool port)
{
	return atomic64_read(port ? &rsim_mcg_refused_port :
				    &rsim_mcg_refused_mlid);
}
EXPORT_SYMBOL_IF_KUNIT(rsim_mcast_refused);

/**
 * rsim_mcast_init() - the groups an SM makes when it starts
 *
 * IPoIB's broadcast group of the default partition: MGID
 * ff12:401b:ffff::ffff:ffff, Q_Key 0x0b1b, MTU 2048, 10 Gb/s, SL 0,
 * link-local scope.
 *
 * Context: process (module load).
 * Return: 0 or -ENOMEM.
 */
int rsim_mcast_init(void)
{
	static const u8 bcast[16] = {
		0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0,
		0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,
	};
	struct rsim_sa_query q = {
		.method = IB_MGMT_METHOD_SET,
		.comp_mask = RSIM_MCM_MGID | RSIM_MCM_CREATE |
			     RSIM_MCM_JOIN_STATE,
	};
	u8 rec[IB_MGMT_SA_DATA] = {};
	struct rsim_mcg *g;
	u16 status;

	memcpy(rec, bcast, sizeof(bcast));
	*(__be32 *)(rec + RSIM_MCM_QKEY_OFF) = cpu_to_be32(RSIM_SA_IPOIB_QKEY);
	*(__be16 *)(rec + RSIM_MCM_PKEY_OFF) = cpu_to_be16(IB_DEFAULT_PKEY_FULL);
	rsim_sa_put_bits(rec, RSIM_MCM_JOIN_BIT, 4, RSIM_JOIN_FULL);
	q.rec = rec;
	mutex_lock(&rsim_mcg_lock);
	status = rsim_mcg_create(&q, &g);
	if (!status)
		g->well_known = true;
	mutex_unlock(&rsim_mcg_lock);
	return status ? -ENOMEM : 0;
}

/**
 * rsim_mcast_exit() - forget every group
 *
 * Context: process (module unload), with no SA agent left.
 */
void rsim_mcast_exit(void)
{
	struct rsim_mcg *g, *tmp;

	mutex_lock(&rsim_mcg_lock);
	list_for_each_entry_safe(g, tmp, &rsim_mcgs, node)
		rsim_mcg_free(g);
	mutex_unlock(&rsim_mcg_lock);
}
