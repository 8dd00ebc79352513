// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: the InfiniBand subnet. Every InfiniBand-mode rdmasim device on
 * the host is a port of one subnet: each has a LID of its own (no two
 * alike), the data path routes a packet by its destination LID to the
 * device whose port has it, and one device's built-in subnet manager is
 * the master, as IBA 14.4.1's election makes it: of the ports whose link
 * is up, the one with the lowest port GUID (all have priority 0). The
 * others' SMs are standby. Every port's SM LID is the master's LID, and
 * a port whose SM LID changes raises IB_EVENT_SM_CHANGE, so the core's SA
 * client addresses the new master.
 *
 * The election is held again (a sweep) when a device joins or leaves,
 * when a port's link goes down or comes up, and when an SMP changes a
 * port's LID or state. RoCE-mode devices are not on the subnet (roce.c
 * routes them by GID).
 *
 * A device with a link in the simulated fabric (fabric.c) is off the
 * flat subnet: its packets follow the links, it takes no part in the
 * election, and its LID is unique among the fabric's ports only. With
 * the built-in SM off (rdmasim/fabric/sm 0) there is no election: no
 * port's SM is the master, and SM LIDs are what another SM writes.
 */

#include <linux/rculist.h>
#include <kunit/visibility.h>

#include "rdmasim.h"

static LIST_HEAD(rsim_subnet_devs);
/*
 * protects rsim_subnet_devs (writers), every subnet port's LID and SM LID
 * (written under it and the port's lock, in that order) and the choice
 * of the master; BH off
 */
static DEFINE_SPINLOCK(rsim_subnet_lock);

/**
 * rsim_subnet_lock_bh() - hold the subnet still
 *
 * Taken around a change of a port's LID (SubnSet(PortInfo)), so that no
 * two ports take the same one, and around the sweep that follows. Nests
 * outside the ports' locks.
 *
 * Context: process or softirq.
 */
void rsim_subnet_lock_bh(void)
	__acquires(&rsim_subnet_lock)
{
	spin_lock_bh(&rsim_subnet_lock);
}

/**
 * rsim_subnet_unlock_bh() - let go of the subnet
 *
 * Context: after rsim_subnet_lock_bh().
 */
void rsim_subnet_unlock_bh(void)
	__releases(&rsim_subnet_lock)
{
	spin_unlock_bh(&rsim_subnet_lock);
}

/**
 * rsim_subnet_lid_used() - does another port of the subnet have a LID?
 * @rsim: the port asking (its own LID does not count)
 * @lid: the LID
 *
 * Context: under rsim_subnet_lock_bh().
 * Return: true if a device other than @rsim has @lid.
 */
bool rsim_subnet_lid_used(const struct rsim_dev *rsim, u16 lid)
{
	struct rsim_dev *d;

	lockdep_assert_held(&rsim_subnet_lock);
	list_for_each_entry(d, &rsim_subnet_devs, subnet_node)
		if (d != rsim && d->port.lid == lid &&
		    d->fab_member == rsim->fab_member)
			return true;
	return false;
}

/* The master's candidates: a port whose link is up */
static bool rsim_subnet_candidate(struct rsim_dev *d, u16 *lid)
{
	bool up;

	spin_lock(&d->port.lock);
	up = d->port.phys_state == IB_PORT_PHYS_STATE_LINK_UP;
	*lid = d->port.lid;
	spin_unlock(&d->port.lock);
	return up;
}

/**
 * rsim_subnet_sweep_locked() - elect the master, and point every port at it
 * @keep: a port whose SM LID an SMP has just written (it stays), or NULL
 *
 * The port with the lowest GUID among those whose link is up is the
 * master; each port's SM LID becomes its LID, an SM_CHANGE event where it
 * changed. With no link up, the SM LIDs stay as they are. Ports of the
 * fabric take no part; with the built-in SM off, no port is the master.
 *
 * Context: under rsim_subnet_lock_bh().
 */
void rsim_subnet_sweep_locked(struct rsim_dev *keep)
{
	struct rsim_dev *d, *master = NULL;
	u16 lid, master_lid = 0;

	lockdep_assert_held(&rsim_subnet_lock);
	list_for_each_entry(d, &rsim_subnet_devs, subnet_node) {
		if (d->fab_member || !rsim_fabric_sm_on() ||
		    !rsim_subnet_candidate(d, &lid))
			continue;
		if (!master ||
		    be64_to_cpu(d->port.guid) < be64_to_cpu(master->port.guid)) {
			master = d;
			master_lid = lid;
		}
	}
	list_for_each_entry(d, &rsim_subnet_devs, subnet_node) {
		u32 ev = 0;

		if (d->fab_member)
			continue;
		spin_lock(&d->port.lock);
		d->port.sm_master = d == master;
		if (master && d != keep && d->port.sm_lid != master_lid) {
			d->port.sm_lid = master_lid;
			ev = RSIM_PORT_EV_SM;
		}
		spin_unlock(&d->port.lock);
		/* a device not registered yet raises nothing */
		rsim_port_dispatch(d, ev);
	}
}

/**
 * rsim_subnet_sweep() - rsim_subnet_sweep_locked(), taking the lock
 *
 * Context: process or softirq, without the subnet's or a port's lock.
 */
void rsim_subnet_sweep(void)
{
	rsim_subnet_lock_bh();
	rsim_subnet_sweep_locked(NULL);
	rsim_subnet_unlock_bh();
}
EXPORT_SYMBOL_IF_KUNIT(rsim_subnet_sweep);

/**
 * rsim_subnet_join() - put an InfiniBand-mode device on the subnet
 * @rsim: the device, not registered yet (nothing is routed to it before
 *	ib_register_device(): the route takes a reference)
 *
 * Its port takes the master's SM LID, or becomes the master.
 *
 * Context: process.
 * Return: 0; -EADDRINUSE if another port has its LID.
 */
int rsim_subnet_join(struct rsim_dev *rsim)
{
	int err = 0;

	rsim_subnet_lock_bh();
	if (rsim_subnet_lid_used(rsim, rsim->port.lid)) {
		err = -EADDRINUSE;
	} else {
		list_add_tail_rcu(&rsim->subnet_node, &rsim_subnet_devs);
		rsim_subnet_sweep_locked(NULL);
	}
	rsim_subnet_unlock_bh();
	return err;
}

/**
 * rsim_subnet_leave() - take a device off the subnet
 * @rsim: the device, unregistered, or never registered
 *
 * When this returns no route reaches the device, and if it was the
 * master another port is.
 *
 * Context: process; sleeps (an RCU grace period).
 */
void rsim_subnet_leave(struct rsim_dev *rsim)
{
	rsim_fabric_ca_leave(rsim);
	rsim_subnet_lock_bh();
	list_del_rcu(&rsim->subnet_node);
	rsim_subnet_sweep_locked(NULL);
	rsim_subnet_unlock_bh();
	synchronize_rcu();
	INIT_LIST_HEAD(&rsim->subnet_node);
	/* as an SM forgets a port that left: its multicast memberships */
	rsim_mcast_port_gone(rsim->port.guid);
}

/**
 * rsim_subnet_route() - the device whose port has a LID
 * @from: the sending device (InfiniBand mode)
 * @dlid: a packet's destination LID
 *
 * What a switch's forwarding table does: a unicast LID reaches the port
 * that has it; @from's own LID reaches @from without a reference. A port
 * of the fabric reaches what its link and the switches' tables lead to
 * (rsim_fabric_route()); the others reach the flat subnet's ports.
 *
 * Context: any; does not sleep.
 * Return: the device, held with ib_device_try_get() unless it is @from
 * (rsim_subnet_put() it), or NULL.
 */
struct rsim_dev *rsim_subnet_route(struct rsim_dev *from, u16 dlid)
{
	struct rsim_dev *d, *found = NULL;

	if (rsim_fabric_member(from))
		return rsim_fabric_route(from, dlid, 0);
	if (dlid == READ_ONCE(from->port.lid))
		return from;
	if (!dlid || dlid > RSIM_LID_UNICAST_MAX)
		return NULL;
	rcu_read_lock();
	list_for_each_entry_rcu(d, &rsim_subnet_devs, subnet_node) {
		if (READ_ONCE(d->port.lid) == dlid &&
		    !READ_ONCE(d->fab_member) &&
		    ib_device_try_get(&d->ibdev)) {
			found = d;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_subnet_route);

/**
 * rsim_subnet_put() - let go of what a route returned
 * @from: the sending device
 * @to: the device rsim_subnet_route(), rsim_fabric_route() or
 *	rsim_fabric_mad() returned
 *
 * Context: any.
 */
void rsim_subnet_put(struct rsim_dev *from, struct rsim_dev *to)
{
	if (to && to != from)
		ib_device_put(&to->ibdev);
}
EXPORT_SYMBOL_IF_KUNIT(rsim_subnet_put);

/**
 * rsim_subnet_for_each() - visit every port of the subnet
 * @fn: called for each device in the order they joined; a non-zero
 *	return stops the walk
 * @arg: passed to @fn
 *
 * Context: any; @fn runs under rcu_read_lock() and must not sleep.
 * Return: what the last @fn returned, or 0.
 */
int rsim_subnet_for_each(int (*fn)(struct rsim_dev *d, void *arg), void *arg)
{
	struct rsim_dev *d;
	int ret = 0;

	rcu_read_lock();
	list_for_each_entry_rcu(d, &rsim_subnet_devs, subnet_node) {
		ret = fn(d, arg);
		if (ret)
			break;
	}
	rcu_read_unlock();
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_subnet_for_each);

static int rsim_subnet_count_one(struct rsim_dev *d, void *arg)
{
	(*(u32 *)arg)++;
	return 0;
}

/**
 * rsim_subnet_ports() - how many ports the subnet has now
 *
 * Context: any.
 * Return: the number of InfiniBand-mode devices on the subnet.
 */
u32 rsim_subnet_ports(void)
{
	u32 n = 0;

	rsim_subnet_for_each(rsim_subnet_count_one, &n);
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_subnet_ports);

/**
 * rsim_subnet_lid_guid() - the port GUID of the port that has a LID
 * @lid: a unicast LID
 * @guid: where the GUID goes
 *
 * Context: any.
 * Return: true if a port of the subnet has @lid.
 */
bool rsim_subnet_lid_guid(u16 lid, __be64 *guid)
{
	struct rsim_dev *d;
	bool found = false;

	rcu_read_lock();
	list_for_each_entry_rcu(d, &rsim_subnet_devs, subnet_node) {
		if (lid && READ_ONCE(d->port.lid) == lid) {
			*guid = d->port.guid;
			found = true;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}

/**
 * rsim_subnet_has_guid() - is a port GUID one of the subnet's?
 * @guid: the GUID
 *
 * Context: any.
 * Return: true if a port of the subnet has @guid.
 */
bool rsim_subnet_has_guid(__be64 guid)
{
	struct rsim_dev *d;
	bool found = false;

	rcu_read_lock();
	list_for_each_entry_rcu(d, &rsim_subnet_devs, subnet_node) {
		if (d->port.guid == guid) {
			found = true;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}

/**
 * rsim_subnet_get_by_name() - an InfiniBand-mode device by its name
 * @name: the device's name (rdmasimN)
 *
 * Context: any.
 * Return: the device, held with ib_device_try_get() (ib_device_put() it),
 * or NULL.
 */
struct rsim_dev *rsim_subnet_get_by_name(const char *name)
{
	struct rsim_dev *d, *found = NULL;

	rcu_read_lock();
	list_for_each_entry_rcu(d, &rsim_subnet_devs, subnet_node) {
		if (!strcmp(d->cfg.name, name) &&
		    ib_device_try_get(&d->ibdev)) {
			found = d;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}
