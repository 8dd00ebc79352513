// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: multicast in the device: UD QPs attached to groups
 * (attach_mcast, detach_mcast) and the receivers of a datagram sent to a
 * multicast LID.
 *
 * A device keeps, per group its QPs attached to (by MGID and MLID), the
 * QP numbers attached: at most RSIM_MC_QP_ATTACH per group and
 * RSIM_MC_GROUPS groups (query_device's max_mcast_qp_attach and
 * max_mcast_grp; beyond, ENOMEM). A QP attached twice stays attached until
 * it is detached twice, as the core counts the QP's uses; detaching a QP
 * that is not attached is EINVAL; a destroyed QP leaves its groups.
 *
 * A UD datagram to a multicast LID (0xC000 up, not the permissive LID),
 * with the destination QP number 0xFFFFFF, reaches (IBA 10.5.2.6):
 *  - every QP of another port of the subnet attached to the group, if
 *    that port is a FullMember or NonMember of the group with that MLID
 *    at the SA (mcast.c): what the switch's forwarding table says;
 *  - every QP of the sender's own port attached to it, the sender
 *    included, unless the sender was created with
 *    IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK (the HCA's own loopback, which
 *    needs no switch).
 * With a GRH, a QP's group must also have the datagram's destination GID
 * as its MGID. Each receiver checks the Q_Key and P_Key as for unicast.
 * RoCE-mode devices deliver to their own QPs only. In the fabric
 * (fabric.c) the switches' MulticastForwardingTables say which CAs a
 * datagram reaches, as the SM programmed them.
 */

#include <linux/slab.h>
#include <kunit/visibility.h>

#include "rdmasim.h"

/**
 * struct rsim_mc_grp - a group a device's QPs are attached to
 * @node: on the device's @mc_grps
 * @mgid: the group's MGID
 * @mlid: its multicast LID
 * @nqp: QPs attached
 * @qpn: their numbers
 * @serial: and their serials (&rsim_qp.serial), which a datagram's
 *	receiver must still have: a QP given a number that was attached
 *	receives nothing for it
 * @refs: how often each is attached
 */
struct rsim_mc_grp {
	struct list_head node;
	union ib_gid mgid;
	u16 mlid;
	u32 nqp;
	u32 qpn[RSIM_MC_QP_ATTACH];
	u64 serial[RSIM_MC_QP_ATTACH];
	u32 refs[RSIM_MC_QP_ATTACH];
};

static struct rsim_mc_grp *rsim_mc_find(struct rsim_dev *rsim,
					const union ib_gid *mgid)
{
	struct rsim_mc_grp *g;

	list_for_each_entry(g, &rsim->mc_grps, node)
		if (!memcmp(&g->mgid, mgid, sizeof(*mgid)))
			return g;
	return NULL;
}

static int rsim_mc_qp_index(const struct rsim_mc_grp *g, u32 qpn)
{
	u32 i;

	for (i = 0; i < g->nqp; i++)
		if (g->qpn[i] == qpn)
			return i;
	return -1;
}

/**
 * rsim_attach_mcast() - attach a UD QP to a multicast group
 * @ibqp: the QP (the core has checked it is UD, @gid is multicast and
 *	@lid a multicast LID)
 * @gid: the group's MGID
 * @lid: its MLID
 *
 * Context: process; sleeps (GFP_KERNEL_ACCOUNT).
 * Return: 0 (also when the QP is attached already: once more); -EINVAL
 * for an MLID
 * that is not the group's the device knows; -ENOMEM past the limits or
 * without memory.
 */
int rsim_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct rsim_dev *rsim = to_rsim_dev(ibqp->device);
	struct rsim_mc_grp *g, *fresh;
	int i, err = 0;

	if (ibqp->qp_type != IB_QPT_UD || gid->raw[0] != 0xff)
		return -EINVAL;
	/* a process attaches through uverbs: its memory */
	fresh = rsim_kzalloc_obj(*fresh, GFP_KERNEL_ACCOUNT);
	if (!fresh)
		return -ENOMEM;
	spin_lock_bh(&rsim->mc_lock);
	g = rsim_mc_find(rsim, gid);
	if (!g) {
		if (rsim->mc_ngrps == RSIM_MC_GROUPS) {
			err = -ENOMEM;
			goto out;
		}
		g = fresh;
		fresh = NULL;
		g->mgid = *gid;
		g->mlid = lid;
		list_add_tail(&g->node, &rsim->mc_grps);
		rsim->mc_ngrps++;
	} else if (g->mlid != lid) {
		err = -EINVAL;
		goto out;
	}
	i = rsim_mc_qp_index(g, ibqp->qp_num);
	if (i >= 0) {
		g->refs[i]++;
		goto out;
	}
	if (g->nqp == RSIM_MC_QP_ATTACH) {
		err = -ENOMEM;
		goto out;
	}
	g->refs[g->nqp] = 1;
	g->serial[g->nqp] = to_rsim_qp(ibqp)->serial;
	g->qpn[g->nqp++] = ibqp->qp_num;
out:
	spin_unlock_bh(&rsim->mc_lock);
	kfree(fresh);
	return err;
}

/* take @g's QP @i out; the group goes with its last QP */
static void rsim_mc_remove_locked(struct rsim_dev *rsim,
				  struct rsim_mc_grp *g, int i)
{
	g->nqp--;
	g->qpn[i] = g->qpn[g->nqp];
	g->serial[i] = g->serial[g->nqp];
	g->refs[i] = g->refs[g->nqp];
	if (g->nqp)
		return;
	list_del(&g->node);
	rsim->mc_ngrps--;
	kfree(g);
}

/**
 * rsim_detach_mcast() - detach a UD QP from a multicast group
 * @ibqp: the QP
 * @gid: the group's MGID
 * @lid: its MLID
 *
 * Context: process or softirq.
 * Return: 0, or -EINVAL if the QP is not attached to that group.
 */
int rsim_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct rsim_dev *rsim = to_rsim_dev(ibqp->device);
	struct rsim_mc_grp *g;
	int i, err = -EINVAL;

	spin_lock_bh(&rsim->mc_lock);
	g = rsim_mc_find(rsim, gid);
	i = g && g->mlid == lid ? rsim_mc_qp_index(g, ibqp->qp_num) : -1;
	if (i >= 0) {
		if (!--g->refs[i])
			rsim_mc_remove_locked(rsim, g, i);
		err = 0;
	}
	spin_unlock_bh(&rsim->mc_lock);
	return err;
}

/**
 * rsim_mcast_qp_gone() - a QP being destroyed leaves every group
 * @qp: the QP
 *
 * Context: process or softirq.
 */
void rsim_mcast_qp_gone(struct rsim_qp *qp)
{
	struct rsim_dev *rsim = to_rsim_dev(qp->ibqp.device);
	struct rsim_mc_grp *g, *tmp;
	int i;

	if (qp->ibqp.qp_type != IB_QPT_UD)
		return;
	spin_lock_bh(&rsim->mc_lock);
	list_for_each_entry_safe(g, tmp, &rsim->mc_grps, node) {
		i = rsim_mc_qp_index(g, qp->ibqp.qp_num);
		if (i >= 0)
			rsim_mc_remove_locked(rsim, g, i);
	}
	spin_unlock_bh(&rsim->mc_lock);
}

/* @d's QPs attached to the group (@mlid, and @mgid unless NULL) */
static int rsim_mc_collect(struct rsim_dev *d, u16 mlid,
			   const union ib_gid *mgid, struct rsim_mc_dest *dest,
			   int n, int max)
{
	struct rsim_mc_grp *g;
	u32 i;

	spin_lock_bh(&d->mc_lock);
	list_for_each_entry(g, &d->mc_grps, node) {
		if (g->mlid != mlid ||
		    (mgid && memcmp(&g->mgid, mgid, sizeof(*mgid))))
			continue;
		for (i = 0; i < g->nqp && n < max; i++) {
			dest[n].rsim = d;
			dest[n].serial = g->serial[i];
			dest[n++].qpn = g->qpn[i];
		}
	}
	spin_unlock_bh(&d->mc_lock);
	return n;
}

struct rsim_mc_walk {
	struct rsim_dev *from;
	bool loopback;
	u16 mlid;
	const union ib_gid *mgid;
	struct rsim_mc_dest *dest;
	int n;
	int max;
};

/*
 * Another port that receives the group: its QPs attached to it; the
 * device stays held while a receiver of it is listed
 */
static void rsim_mc_take(struct rsim_mc_walk *w, struct rsim_dev *d)
{
	int n;

	if (!ib_device_try_get(&d->ibdev))
		return;
	n = rsim_mc_collect(d, w->mlid, w->mgid, w->dest, w->n, w->max);
	if (n == w->n)
		ib_device_put(&d->ibdev);
	else
		w->dest[w->n].held = true;
	w->n = n;
}

static int rsim_mc_walk_one(struct rsim_dev *d, void *arg)
{
	struct rsim_mc_walk *w = arg;

	if (d == w->from) {
		if (w->loopback)
			w->n = rsim_mc_collect(d, w->mlid, w->mgid, w->dest,
					       w->n, w->max);
		return 0;
	}
	if (rsim_mcast_port_receives(w->mlid, d->port.guid))
		rsim_mc_take(w, d);
	return 0;
}

/*
 * A CA of the fabric that a datagram reached through the switches'
 * multicast tables (rsim_fabric_mcast()): its QPs attached to the group,
 * whoever the SA thinks the members are (the tables are the SM's word)
 */
static int rsim_mc_fabric_one(struct rsim_dev *d, void *arg)
{
	struct rsim_mc_walk *w = arg;

	if (d != w->from)
		rsim_mc_take(w, d);
	return 0;
}

/**
 * rsim_mcast_dests() - the QPs a multicast datagram reaches
 * @from: the sending device
 * @loopback: the sender's own port's QPs receive it too
 * @mlid: the destination LID, a multicast LID
 * @mgid: the destination GID (the GRH's), or NULL
 * @dest: room for @max receivers: device and QP number; a device other
 *	than @from is held (the first of its entries has @held set)
 * @max: how many fit; the datagram reaches no more
 *
 * Context: process or softirq; does not sleep.
 * Return: the number of receivers in @dest (rsim_mcast_dests_put() them).
 */
int rsim_mcast_dests(struct rsim_dev *from, bool loopback, u16 mlid,
		     const union ib_gid *mgid, struct rsim_mc_dest *dest,
		     int max)
{
	struct rsim_mc_walk w = {
		.from = from, .loopback = loopback, .mlid = mlid,
		.mgid = mgid, .dest = dest, .max = max,
	};

	memset(dest, 0, max * sizeof(*dest));
	if (rsim_is_roce(from)) {
		/* RoCE: the device's own QPs only */
		return loopback ? rsim_mc_collect(from, mlid, mgid, dest, 0,
						  max) : 0;
	}
	if (rsim_fabric_member(from)) {
		if (loopback)
			w.n = rsim_mc_collect(from, mlid, mgid, dest, 0, max);
		rsim_fabric_mcast(from, mlid, rsim_mc_fabric_one, &w);
		return w.n;
	}
	rsim_subnet_for_each(rsim_mc_walk_one, &w);
	return w.n;
}

/**
 * rsim_mcast_dests_put() - let go of what rsim_mcast_dests() held
 * @dest: its receivers
 * @n: how many
 *
 * Context: any.
 */
void rsim_mcast_dests_put(struct rsim_mc_dest *dest, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (dest[i].held)
			ib_device_put(&dest[i].rsim->ibdev);
}

/**
 * rsim_mcast_dev_init() - a device with no group attached
 * @rsim: the device
 *
 * Context: any.
 */
void rsim_mcast_dev_init(struct rsim_dev *rsim)
{
	spin_lock_init(&rsim->mc_lock);
	INIT_LIST_HEAD(&rsim->mc_grps);
	rsim->mc_ngrps = 0;
}
