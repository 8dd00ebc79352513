// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: a simulated InfiniBand fabric. Switches (not ib_devices, as
 * ibsim's are not) with external ports 1 to N and a management port 0,
 * and links that join two ports, a switch's or an rdmasim CA's, made and
 * cut at run time through debugfs (rdmasim/fabric/). A CA port with a
 * link is a member of the fabric: packets from it follow its link and the
 * switches' forwarding tables, and nothing reaches it any more through
 * the flat subnet (subnet.c), which stays what every CA without a link
 * is on.
 *
 * Nothing here is a subnet manager. The built-in one does not program
 * switches, so links are only made with it off (rdmasim/fabric/sm 0,
 * which also stops the built-in SA): an SM on one of the CAs (opensm,
 * over umad and issm) sweeps the fabric, gives the LIDs, programs the
 * forwarding tables and brings the ports to Active.
 *
 * Packets (the data path calls in):
 *
 * - LID-routed: from the sender's link to the far end; at a switch, the
 *   LinearForwardingTable names the port it leaves by, until it reaches
 *   the CA port or switch port 0 that holds the destination LID. No
 *   entry, a port that is not up, or more than RSIM_FABRIC_HOPS switches
 *   drop it and count it, as a wire would. An SMP (QP0) crosses ports in
 *   Init and Armed; anything else needs Active.
 * - Directed-route SMPs (IBA 14.2.2): the sending CA's MAD layer applied
 *   smi.c's rules as it sent; each switch applies the switch side of
 *   C14-9 (outgoing) and C14-13 (returning) as smi.c writes them, records
 *   the return path and steps the hop pointer; the far CA's MAD layer
 *   applies its receive rules. An SMP that ends at a switch is answered
 *   by the switch's SMA (switch.c) and goes back along its return path.
 *   Bad hop counts and pointers, ports that do not exist or have no link
 *   drop it (counted per switch). A path whose DR part ends in a
 *   LID-routed part (DrDLID or DrSLID not permissive) is not carried.
 * - MADs for a switch's LID: QP0 to its SMA, QP1 (PerformanceManagement)
 *   to its PMA, answered back by LID.
 */

#include <linux/debugfs.h>
#include <linux/idr.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <kunit/visibility.h>

#include "rdmasim.h"

/*
 * protects the fabric's shape: the switch list, every link end (theirs
 * and the CAs'), membership, and rsim_fabric_sm; taken in process
 * context, outside the subnet's lock and any port's or switch's lock
 */
static DEFINE_MUTEX(rsim_fabric_mutex);
static LIST_HEAD(rsim_fabric_switches);
static DEFINE_IDA(rsim_fabric_ida);
static u32 rsim_fabric_nswitches;
/* the built-in SM and SA serve (1, the default) or not */
static bool rsim_fabric_sm = true;
static atomic64_t rsim_fabric_drops;
static struct dentry *rsim_fabric_dir;

/**
 * rsim_fabric_sm_on() - do the built-in SM and SA serve the subnet?
 *
 * Context: any.
 * Return: true unless rdmasim/fabric/sm is 0.
 */
bool rsim_fabric_sm_on(void)
{
	return READ_ONCE(rsim_fabric_sm);
}
EXPORT_SYMBOL_IF_KUNIT(rsim_fabric_sm_on);

/**
 * rsim_fabric_member() - is a CA port in the fabric?
 * @rsim: the device
 *
 * Context: any.
 * Return: true from its first link until it leaves (or a reset).
 */
bool rsim_fabric_member(const struct rsim_dev *rsim)
{
	return READ_ONCE(rsim->fab_member);
}
EXPORT_SYMBOL_IF_KUNIT(rsim_fabric_member);

static void rsim_fabric_trap_work(struct work_struct *work);

static struct rsim_switch *rsim_fabric_find(const char *name)
{
	struct rsim_switch *sw;

	lockdep_assert_held(&rsim_fabric_mutex);
	list_for_each_entry(sw, &rsim_fabric_switches, node)
		if (!strcmp(sw->name, name))
			return sw;
	return NULL;
}

/**
 * rsim_fabric_switch_add() - a new switch, with no links
 * @name: its name and NodeDescription, unique among switches
 * @nports: external ports, 1 to RSIM_SW_PORTS_MAX
 *
 * Context: process; takes rsim_fabric_mutex.
 * Return: the switch, or ERR_PTR(): -EINVAL a bad name or port count,
 * -EEXIST the name is taken, -ENOSPC RSIM_FABRIC_SWITCHES already,
 * -ENOMEM.
 */
struct rsim_switch *rsim_fabric_switch_add(const char *name, u8 nports)
{
	struct rsim_switch *sw;
	int index;

	if (!name[0] || strlen(name) >= IB_DEVICE_NODE_DESC_MAX ||
	    !nports || nports > RSIM_SW_PORTS_MAX)
		return ERR_PTR(-EINVAL);
	mutex_lock(&rsim_fabric_mutex);
	if (rsim_fabric_find(name)) {
		sw = ERR_PTR(-EEXIST);
		goto out;
	}
	if (rsim_fabric_nswitches >= RSIM_FABRIC_SWITCHES) {
		sw = ERR_PTR(-ENOSPC);
		goto out;
	}
	index = ida_alloc_range(&rsim_fabric_ida, 1, RSIM_FABRIC_SWITCHES,
				GFP_KERNEL);
	if (index < 0) {
		sw = ERR_PTR(index);
		goto out;
	}
	sw = rsim_sw_alloc(name, nports, index);
	if (!sw) {
		ida_free(&rsim_fabric_ida, index);
		sw = ERR_PTR(-ENOMEM);
		goto out;
	}
	INIT_DELAYED_WORK(&sw->trap_work, rsim_fabric_trap_work);
	list_add_tail_rcu(&sw->node, &rsim_fabric_switches);
	rsim_fabric_nswitches++;
out:
	mutex_unlock(&rsim_fabric_mutex);
	return sw;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_fabric_switch_add);

/* the far end of @sw's @port, or of @ca's port (@sw NULL) */
static struct rsim_fab_end *rsim_fabric_end(struct rsim_switch *sw, u8 port,
					    struct rsim_dev *ca)
{
	return sw ? &sw->port[port].peer : &ca->link;
}

/* a CA port's link came up or went down: its states and events */
static void rsim_fabric_ca_link(struct rsim_dev *ca, bool up)
{
	u32 ev;

	spin_lock_bh(&ca->port.lock);
	if (up)
		ev = rsim_port_set_state_locked(&ca->port, IB_PORT_INIT,
						IB_PORT_PHYS_STATE_LINK_UP);
	else
		ev = rsim_port_set_state_locked(&ca->port, IB_PORT_DOWN,
						IB_PORT_PHYS_STATE_POLLING);
	spin_unlock_bh(&ca->port.lock);
	rsim_port_dispatch(ca, ev);
}

/* one end of a link goes; the caller waits for readers before reuse */
static void rsim_fabric_unlink_end(struct rsim_switch *sw, u8 port,
				   struct rsim_dev *ca)
{
	struct rsim_fab_end *e = rsim_fabric_end(sw, port, ca);

	RCU_INIT_POINTER(e->sw, NULL);
	RCU_INIT_POINTER(e->ca, NULL);
	e->port = 0;
	if (sw)
		rsim_sw_port_link(sw, port, false);
	else
		rsim_fabric_ca_link(ca, false);
}

/* cut the link at one end (which has one); both ends go Down */
static void rsim_fabric_cut(struct rsim_switch *sw, u8 port,
			    struct rsim_dev *ca, struct rsim_switch **far)
{
	struct rsim_fab_end *e = rsim_fabric_end(sw, port, ca);
	struct rsim_switch *fsw;
	struct rsim_dev *fca;
	u8 fport = e->port;

	lockdep_assert_held(&rsim_fabric_mutex);
	fsw = rcu_dereference_protected(e->sw,
					lockdep_is_held(&rsim_fabric_mutex));
	fca = rcu_dereference_protected(e->ca,
					lockdep_is_held(&rsim_fabric_mutex));
	rsim_fabric_unlink_end(sw, port, ca);
	if (fsw || fca)
		rsim_fabric_unlink_end(fsw, fport, fca);
	if (far)
		*far = fsw;
}

/*
 * A CA joins the fabric: it leaves the flat subnet and its election. Its
 * LID and SM LID stay until an SM writes others (a port keeps them across
 * a retrain); two ports of the fabric with one LID are an SM's to sort
 * out, as on a real subnet.
 */
static void rsim_fabric_ca_join(struct rsim_dev *ca)
{
	if (ca->fab_member)
		return;
	rsim_subnet_lock_bh();
	spin_lock_bh(&ca->port.lock);
	WRITE_ONCE(ca->fab_member, true);
	ca->port.sm_master = false;
	spin_unlock_bh(&ca->port.lock);
	rsim_subnet_sweep_locked(NULL);
	rsim_subnet_unlock_bh();
}

/* a CA back on the flat subnet: its LID, Active (rsim_fabric_reset()) */
static void rsim_fabric_ca_unjoin(struct rsim_dev *ca)
{
	u32 ev;

	rsim_subnet_lock_bh();
	spin_lock_bh(&ca->port.lock);
	WRITE_ONCE(ca->fab_member, false);
	ev = RSIM_PORT_EV_LID;
	ca->port.lid = rsim_subnet_lid_used(ca, ca->cfg.lid) ? 0 : ca->cfg.lid;
	ev |= rsim_port_set_state_locked(&ca->port, ca->port.lid ?
					 IB_PORT_ACTIVE : IB_PORT_DOWN,
					 IB_PORT_PHYS_STATE_LINK_UP);
	spin_unlock_bh(&ca->port.lock);
	rsim_subnet_sweep_locked(NULL);
	rsim_subnet_unlock_bh();
	rsim_port_dispatch(ca, ev);
}

struct rsim_fab_node {
	struct rsim_switch *sw;
	struct rsim_dev *ca;	/* held */
};

/* a node by name: a switch, else an rdmasim CA (held) */
static int rsim_fabric_node(const char *name, u8 port,
			    struct rsim_fab_node *n)
{
	n->sw = rsim_fabric_find(name);
	n->ca = NULL;
	if (n->sw)
		return port && port <= n->sw->nports ? 0 : -EINVAL;
	n->ca = rsim_subnet_get_by_name(name);
	if (!n->ca)
		return -ENODEV;
	if (port != RSIM_PORT) {
		ib_device_put(&n->ca->ibdev);
		n->ca = NULL;
		return -EINVAL;
	}
	return 0;
}

static void rsim_fabric_node_put(struct rsim_fab_node *n)
{
	if (n->ca)
		ib_device_put(&n->ca->ibdev);
}

static bool rsim_fabric_end_used(const struct rsim_fab_end *e)
{
	return rcu_access_pointer(e->sw) || rcu_access_pointer(e->ca);
}

static void rsim_fabric_trap128(struct rsim_switch *sw);

/**
 * rsim_fabric_link_add() - join two ports with a link
 * @a: a switch's name or an InfiniBand-mode rdmasim device's
 * @pa: its port (a switch's 1 to N, a CA's 1)
 * @b: the other node
 * @pb: its port
 *
 * Both ends train: Init, LinkUp; a switch sets PortStateChange. A CA
 * joins the fabric at its first link.
 *
 * Context: process; takes rsim_fabric_mutex.
 * Return: 0; -EBUSY the built-in SM is on (rdmasim/fabric/sm), or a port
 * has a link; -ENODEV no such node; -EINVAL no such port, or a port to
 * itself.
 */
int rsim_fabric_link_add(const char *a, u8 pa, const char *b, u8 pb)
{
	struct rsim_fab_node na, nb;
	struct rsim_fab_end *ea, *eb;
	int err;

	mutex_lock(&rsim_fabric_mutex);
	err = rsim_fabric_node(a, pa, &na);
	if (err)
		goto out;
	err = rsim_fabric_node(b, pb, &nb);
	if (err)
		goto put_a;
	ea = rsim_fabric_end(na.sw, pa, na.ca);
	eb = rsim_fabric_end(nb.sw, pb, nb.ca);
	err = -EINVAL;
	if (ea == eb)
		goto put_b;
	err = -EBUSY;
	if (rsim_fabric_sm || rsim_fabric_end_used(ea) ||
	    rsim_fabric_end_used(eb))
		goto put_b;
	if (na.ca)
		rsim_fabric_ca_join(na.ca);
	if (nb.ca)
		rsim_fabric_ca_join(nb.ca);
	ea->port = pb;
	eb->port = pa;
	rcu_assign_pointer(ea->sw, nb.sw);
	rcu_assign_pointer(ea->ca, nb.ca);
	rcu_assign_pointer(eb->sw, na.sw);
	rcu_assign_pointer(eb->ca, na.ca);
	if (na.sw)
		rsim_sw_port_link(na.sw, pa, true);
	else
		rsim_fabric_ca_link(na.ca, true);
	if (nb.sw)
		rsim_sw_port_link(nb.sw, pb, true);
	else
		rsim_fabric_ca_link(nb.ca, true);
	if (na.sw)
		rsim_fabric_trap128(na.sw);
	if (nb.sw && nb.sw != na.sw)
		rsim_fabric_trap128(nb.sw);
	err = 0;
put_b:
	rsim_fabric_node_put(&nb);
put_a:
	rsim_fabric_node_put(&na);
out:
	mutex_unlock(&rsim_fabric_mutex);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_fabric_link_add);

/**
 * rsim_fabric_link_del() - pull the cable at a port
 * @a: a switch's or a CA's name
 * @pa: its port
 *
 * Both ends go Down (Polling); a switch sets PortStateChange. When this
 * returns no packet is on its way over the link.
 *
 * Context: process; takes rsim_fabric_mutex; sleeps (a grace period).
 * Return: 0; -ENODEV no such node; -EINVAL no such port; -ENOTCONN the
 * port has no link.
 */
int rsim_fabric_link_del(const char *a, u8 pa)
{
	struct rsim_fab_node na;
	int err;

	mutex_lock(&rsim_fabric_mutex);
	err = rsim_fabric_node(a, pa, &na);
	if (err)
		goto out;
	if (!rsim_fabric_end_used(rsim_fabric_end(na.sw, pa, na.ca))) {
		err = -ENOTCONN;
	} else {
		struct rsim_switch *far;

		rsim_fabric_cut(na.sw, pa, na.ca, &far);
		synchronize_rcu();
		/* both switches tell the SM, which sweeps again */
		if (na.sw)
			rsim_fabric_trap128(na.sw);
		if (far && far != na.sw)
			rsim_fabric_trap128(far);
	}
	rsim_fabric_node_put(&na);
out:
	mutex_unlock(&rsim_fabric_mutex);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_fabric_link_del);

/* a switch leaves: its links cut, freed after a grace period */
static void rsim_fabric_switch_remove(struct rsim_switch *sw)
{
	u32 p;

	lockdep_assert_held(&rsim_fabric_mutex);
	for (p = 1; p <= sw->nports; p++)
		if (rsim_fabric_end_used(&sw->port[p].peer))
			rsim_fabric_cut(sw, p, NULL, NULL);
	list_del_rcu(&sw->node);
	rsim_fabric_nswitches--;
	synchronize_rcu();
	cancel_delayed_work_sync(&sw->trap_work);
	ida_free(&rsim_fabric_ida, sw->index);
	rsim_sw_free(sw);
}

/**
 * rsim_fabric_switch_del() - remove a switch and its links
 * @name: the switch's name
 *
 * Context: process; takes rsim_fabric_mutex; sleeps.
 * Return: 0, or -ENODEV.
 */
int rsim_fabric_switch_del(const char *name)
{
	struct rsim_switch *sw;
	int err = -ENODEV;

	mutex_lock(&rsim_fabric_mutex);
	sw = rsim_fabric_find(name);
	if (sw) {
		rsim_fabric_switch_remove(sw);
		err = 0;
	}
	mutex_unlock(&rsim_fabric_mutex);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_fabric_switch_del);

static int rsim_fabric_unjoin_one(struct rsim_dev *d, void *arg)
{
	struct rsim_dev **found = arg;

	if (READ_ONCE(d->fab_member) && ib_device_try_get(&d->ibdev)) {
		*found = d;
		return 1;
	}
	return 0;
}

/**
 * rsim_fabric_reset() - back to the flat subnet
 *
 * Every switch and link goes; every CA of the fabric returns to the flat
 * subnet with the LID it was created with, Active.
 *
 * Context: process; takes rsim_fabric_mutex; sleeps.
 */
void rsim_fabric_reset(void)
{
	struct rsim_switch *sw, *tmp;
	struct rsim_dev *ca;

	mutex_lock(&rsim_fabric_mutex);
	list_for_each_entry_safe(sw, tmp, &rsim_fabric_switches, node)
		rsim_fabric_switch_remove(sw);
	for (;;) {
		ca = NULL;
		rsim_subnet_for_each(rsim_fabric_unjoin_one, &ca);
		if (!ca)
			break;
		if (rsim_fabric_end_used(&ca->link)) {
			rsim_fabric_cut(NULL, RSIM_PORT, ca, NULL);
			synchronize_rcu();
		}
		rsim_fabric_ca_unjoin(ca);
		ib_device_put(&ca->ibdev);
	}
	mutex_unlock(&rsim_fabric_mutex);
}
EXPORT_SYMBOL_IF_KUNIT(rsim_fabric_reset);

/**
 * rsim_fabric_ca_leave() - a CA leaves the subnet: its link goes
 * @rsim: the device, unregistered
 *
 * Context: process; takes rsim_fabric_mutex. The caller waits for an RCU
 * grace period before the device goes (rsim_subnet_leave()).
 */
void rsim_fabric_ca_leave(struct rsim_dev *rsim)
{
	mutex_lock(&rsim_fabric_mutex);
	if (rsim_fabric_end_used(&rsim->link))
		rsim_fabric_cut(NULL, RSIM_PORT, rsim, NULL);
	WRITE_ONCE(rsim->fab_member, false);
	mutex_unlock(&rsim_fabric_mutex);
}

/**
 * rsim_fabric_set_sm() - the built-in SM and SA on or off
 * @on: true: they serve the subnet (the default); false: another SM's
 *	turn (opensm), and links may be made
 *
 * Off stops the election (no port's SM is the master) and unregisters
 * the SA's agents, so that another SA may take the class on QP1.
 *
 * Context: process; takes rsim_fabric_mutex; sleeps.
 * Return: 0, or -EBUSY turning it on while CAs are in the fabric
 * (rsim_fabric_reset() first).
 */
int rsim_fabric_set_sm(bool on)
{
	struct rsim_dev *ca = NULL;
	int err = 0;

	mutex_lock(&rsim_fabric_mutex);
	rsim_subnet_for_each(rsim_fabric_unjoin_one, &ca);
	if (ca) {
		ib_device_put(&ca->ibdev);
		if (on) {
			err = -EBUSY;
			goto out;
		}
	}
	if (on == rsim_fabric_sm)
		goto out;
	WRITE_ONCE(rsim_fabric_sm, on);
	rsim_subnet_sweep();
	rsim_sa_serve(on);
out:
	mutex_unlock(&rsim_fabric_mutex);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_fabric_set_sm);

/* ---- the walk ---- */

/* where a walk stands: at the far end of a link, arriving on @port */
struct rsim_fab_at {
	struct rsim_switch *sw;
	struct rsim_dev *ca;
	u8 port;
};

static void rsim_fabric_follow(const struct rsim_fab_end *e,
			       struct rsim_fab_at *at)
{
	at->ca = rcu_dereference(e->ca);
	at->sw = at->ca ? NULL : rcu_dereference(e->sw);
	at->port = READ_ONCE(e->port);
}

static void rsim_sw_count(struct rsim_sw_counters *c, bool xmit, u64 bytes)
{
	atomic64_inc(xmit ? &c->xmit_pkts : &c->rcv_pkts);
	atomic64_add(bytes, xmit ? &c->xmit_data : &c->rcv_data);
}

/*
 * A LID-routed packet from @at (the far end of the sender's link, or a
 * switch's port 0) to @dlid: the CA port or switch that holds it, in
 * @hit (a CA not yet held). Under rcu_read_lock().
 */
static bool rsim_fabric_walk(struct rsim_fab_at at, u16 dlid, bool smp,
			     u64 bytes, struct rsim_fab_hit *hit)
{
	u32 hops;

	for (hops = 0; hops < RSIM_FABRIC_HOPS; hops++) {
		struct rsim_switch *sw = at.sw;
		u8 out;

		if (at.ca) {
			if (!dlid || READ_ONCE(at.ca->port.lid) != dlid)
				break;
			hit->ca = at.ca;
			return true;
		}
		if (!sw)
			break;
		if (at.port) {
			if (!rsim_sw_port_up(sw, at.port, smp)) {
				atomic64_inc(&sw->no_route);
				return false;
			}
			rsim_sw_count(&sw->port[at.port].c, false, bytes);
		}
		if (dlid && rsim_sw_lid(sw) == dlid) {
			hit->sw = sw;
			hit->in_port = at.port;
			return true;
		}
		out = rsim_sw_lft(sw, dlid);
		if (!out || out > sw->nports || !rsim_sw_port_up(sw, out, smp)) {
			if (out && out <= sw->nports)
				atomic64_inc(&sw->port[out].c.xmit_discards);
			atomic64_inc(&sw->no_route);
			return false;
		}
		rsim_sw_count(&sw->port[out].c, true, bytes);
		rsim_fabric_follow(&sw->port[out].peer, &at);
	}
	if (at.sw)
		atomic64_inc(&at.sw->no_route);
	atomic64_inc(&rsim_fabric_drops);
	return false;
}

/* Notice (IBA 14.2.5.1): generic, urgent, from a switch, trap 128 */
#define RSIM_NOTICE_GENERIC_URGENT	0x81
#define RSIM_NOTICE_PRODUCER_SWITCH	2
#define RSIM_TRAP_PORT_STATE_CHANGE	128

/*
 * A switch's trap 128 (PortStateChange) to its SM, if an SM gave it a LID
 * and its own: a LID-routed SubnTrap(Notice) from port 0 to the SM LID,
 * with the switch's number in the high half of the transaction ID. Sent
 * again every RSIM_TRAP_INTERVAL_MS until opensm's TrapRepress with that
 * ID (switch.c), RSIM_TRAP_TRIES times at most: a trap that found no way
 * to the SM (a cut cable on it) arrives once the SM routed around it.
 */
static void rsim_fabric_trap_send(struct rsim_switch *sw)
{
	struct rsim_fab_at from = { .sw = sw };
	struct rsim_fab_hit hit = {};
	struct ib_smp *smp;
	u16 lid, sm_lid;
	u64 tid;
	u8 *n;

	spin_lock_bh(&sw->lock);
	lid = rsim_sw_lid(sw);
	sm_lid = be16_to_cpup((__be16 *)&sw->port[0].pi[18]);
	tid = sw->trap_tid;
	spin_unlock_bh(&sw->lock);
	if (!lid || !sm_lid || sm_lid > RSIM_LID_UNICAST_MAX)
		return;
	smp = rsim_kzalloc_obj(*smp, GFP_KERNEL);
	if (!smp)
		return;
	smp->base_version = IB_MGMT_BASE_VERSION;
	smp->mgmt_class = IB_MGMT_CLASS_SUBN_LID_ROUTED;
	smp->class_version = 1;
	smp->method = IB_MGMT_METHOD_TRAP;
	smp->tid = cpu_to_be64(tid);
	smp->attr_id = IB_SMP_ATTR_NOTICE;
	n = smp->data;
	n[0] = RSIM_NOTICE_GENERIC_URGENT;
	n[3] = RSIM_NOTICE_PRODUCER_SWITCH;
	*(__be16 *)&n[4] = cpu_to_be16(RSIM_TRAP_PORT_STATE_CHANGE);
	*(__be16 *)&n[6] = cpu_to_be16(lid);
	*(__be16 *)&n[10] = cpu_to_be16(lid);
	rcu_read_lock();
	if (rsim_fabric_walk(from, sm_lid, true, sizeof(*smp), &hit) && hit.ca &&
	    ib_device_try_get(&hit.ca->ibdev)) {
		rcu_read_unlock();
		if (!rsim_dp_mad_inject(hit.ca, 0, smp, sizeof(*smp), lid))
			atomic64_inc(&sw->traps);
		ib_device_put(&hit.ca->ibdev);
	} else {
		rcu_read_unlock();
	}
	kfree(smp);
}

/* the trap again, until repressed or sent RSIM_TRAP_TRIES times */
static void rsim_fabric_trap_work(struct work_struct *work)
{
	struct rsim_switch *sw = container_of(to_delayed_work(work),
					      struct rsim_switch, trap_work);
	bool again;

	spin_lock_bh(&sw->lock);
	again = sw->trap_left > 0;
	if (again)
		sw->trap_left--;
	spin_unlock_bh(&sw->lock);
	if (!again)
		return;
	rsim_fabric_trap_send(sw);
	if (READ_ONCE(sw->trap_left))
		schedule_delayed_work(&sw->trap_work,
				      msecs_to_jiffies(RSIM_TRAP_INTERVAL_MS));
}

/*
 * A port's state changed under a Set in the data path (the far end of a
 * port a Set retrained or disabled): a new trap 128, sent from the work
 */
static void rsim_fabric_trap_soon(struct rsim_switch *sw)
{
	spin_lock_bh(&sw->lock);
	sw->trap_tid = (u64)sw->index << 32 | (((sw->trap_tid & U32_MAX) + 1) &
					       U32_MAX);
	sw->trap_left = RSIM_TRAP_TRIES;
	spin_unlock_bh(&sw->lock);
	/* pending already: it goes out then (within RSIM_TRAP_INTERVAL_MS) */
	schedule_delayed_work(&sw->trap_work, 0);
}

/* a port's link came or went: a new trap 128, sent now and repeated */
static void rsim_fabric_trap128(struct rsim_switch *sw)
{
	spin_lock_bh(&sw->lock);
	sw->trap_tid = (u64)sw->index << 32 | (((sw->trap_tid & U32_MAX) + 1) &
					       U32_MAX);
	sw->trap_left = RSIM_TRAP_TRIES - 1;
	spin_unlock_bh(&sw->lock);
	rsim_fabric_trap_send(sw);
	/* the repeats start over (a repeat running now finds the new trap) */
	cancel_delayed_work(&sw->trap_work);
	schedule_delayed_work(&sw->trap_work,
			      msecs_to_jiffies(RSIM_TRAP_INTERVAL_MS));
}

/* the first step: the sender's own link, when it has a link up */
static bool rsim_fabric_start(struct rsim_dev *from, struct rsim_fab_at *at)
{
	rsim_fabric_follow(&from->link, at);
	return (at->ca || at->sw) &&
	       READ_ONCE(from->port.phys_state) == IB_PORT_PHYS_STATE_LINK_UP;
}

/**
 * rsim_fabric_route() - the CA a LID-routed packet from a member reaches
 * @from: the sending CA, a member of the fabric
 * @dlid: the destination LID
 * @bytes: the payload, which the switch ports count
 *
 * @from's own LID is @from (its port loops the packet back).
 *
 * Context: any; does not sleep.
 * Return: the CA, held unless it is @from (rsim_subnet_put()), or NULL:
 * no route, or the LID is a switch's.
 */
struct rsim_dev *rsim_fabric_route(struct rsim_dev *from, u16 dlid,
				   u64 bytes)
{
	struct rsim_fab_hit hit = {};
	struct rsim_fab_at at;
	struct rsim_dev *to = NULL;

	if (dlid && dlid == READ_ONCE(from->port.lid))
		return from;
	if (!dlid || dlid > RSIM_LID_UNICAST_MAX)
		return NULL;
	rcu_read_lock();
	if (rsim_fabric_start(from, &at) &&
	    rsim_fabric_walk(at, dlid, false, bytes, &hit) && hit.ca) {
		if (hit.ca == from || ib_device_try_get(&hit.ca->ibdev))
			to = hit.ca;
	}
	rcu_read_unlock();
	return to;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_fabric_route);

/**
 * rsim_fabric_mcast() - the CAs a multicast datagram from a member reaches
 * @from: the sending CA, a member of the fabric
 * @mlid: the multicast LID
 * @fn: called for each CA reached other than @from, once; a non-zero
 *	return stops the walk
 * @arg: passed to @fn
 *
 * From the sender's link, each switch sends the datagram out of every
 * Active port its MulticastForwardingTable names for @mlid, except the
 * one it came in on; each switch forwards it once (a table with a loop
 * delivers nothing twice), and the ports count it.
 *
 * Context: any; @fn runs under rcu_read_lock() and must not sleep.
 */
void rsim_fabric_mcast(struct rsim_dev *from, u16 mlid,
		       int (*fn)(struct rsim_dev *ca, void *arg), void *arg)
{
	DECLARE_BITMAP(seen, RSIM_FABRIC_SWITCHES + 1) = {};
	u32 head = 0, tail = 0, idx = mlid - RSIM_LID_MCAST_BASE;
	struct rsim_fab_at *queue, at;

	if (mlid < RSIM_LID_MCAST_BASE || idx >= RSIM_SW_MFT_CAP)
		return;
	/* each switch is queued once */
	queue = kmalloc_array(RSIM_FABRIC_SWITCHES, sizeof(*queue), GFP_ATOMIC);
	if (!queue)
		return;
	rcu_read_lock();
	if (!rsim_fabric_start(from, &at))
		goto out;
	if (at.ca) {
		/* two CAs back to back */
		if (at.ca != from && rsim_port_passes(at.ca, IB_QPT_UD))
			fn(at.ca, arg);
		goto out;
	}
	__set_bit(at.sw->index, seen);
	queue[tail++] = at;
	while (head < tail) {
		struct rsim_fab_at cur = queue[head++];
		struct rsim_switch *sw = cur.sw;
		u64 mask;
		u32 p;

		if (!rsim_sw_port_up(sw, cur.port, false))
			continue;
		rsim_sw_count(&sw->port[cur.port].c, false, 0);
		mask = READ_ONCE(sw->mft[idx]) & ~BIT_ULL(cur.port) & ~1ULL;
		for (p = 1; p <= sw->nports; p++) {
			if (!(mask & BIT_ULL(p)) || !rsim_sw_port_up(sw, p, false))
				continue;
			rsim_sw_count(&sw->port[p].c, true, 0);
			rsim_fabric_follow(&sw->port[p].peer, &at);
			if (at.ca) {
				if (at.ca != from && fn(at.ca, arg))
					goto out;
			} else if (at.sw && !__test_and_set_bit(at.sw->index,
								seen) &&
				   tail < RSIM_FABRIC_SWITCHES) {
				queue[tail++] = at;
			}
		}
	}
out:
	rcu_read_unlock();
	kfree(queue);
}
EXPORT_SYMBOL_IF_KUNIT(rsim_fabric_mcast);

/* ---- directed route: the switch side of smi.c's rules ---- */

enum rsim_smi { RSIM_SMI_DISCARD, RSIM_SMI_HANDLE };
enum rsim_smi_fwd { RSIM_SMI_LOCAL, RSIM_SMI_SEND, RSIM_SMI_FORWARD };

/* the D bit: a returning SMP */
static bool rsim_smp_returning(const struct ib_smp *smp)
{
	return smp->status & IB_SMP_DIRECTION;
}

static bool rsim_smp_dr_dlid_perm(const struct ib_smp *smp)
{
	return smp->dr_dlid == IB_LID_PERMISSIVE;
}

static bool rsim_smp_dr_slid_perm(const struct ib_smp *smp)
{
	return smp->dr_slid == IB_LID_PERMISSIVE;
}

/*
 * A switch sends an SMP out of @port (smi.c's __smi_handle_dr_smp_send()
 * with is_switch): C14-9 outgoing, C14-13 returning.
 */
static enum rsim_smi rsim_smi_send(struct ib_smp *smp, u8 port)
{
	u8 *hop_ptr = &smp->hop_ptr, hop_cnt = smp->hop_cnt;

	if (hop_cnt >= IB_SMP_MAX_PATH_HOPS)
		return RSIM_SMI_DISCARD;
	if (!rsim_smp_returning(smp)) {
		/* C14-9:1, C14-9:2 */
		if ((hop_cnt && *hop_ptr == 0) ||
		    (*hop_ptr && *hop_ptr < hop_cnt)) {
			(*hop_ptr)++;
			return smp->initial_path[*hop_ptr] == port ?
			       RSIM_SMI_HANDLE : RSIM_SMI_DISCARD;
		}
		/* C14-9:3: the end of the DR part */
		if (*hop_ptr == hop_cnt) {
			(*hop_ptr)++;
			return RSIM_SMI_HANDLE;
		}
		/* C14-9:4, C14-9:5 */
		return *hop_ptr == hop_cnt + 1 ? RSIM_SMI_HANDLE :
						 RSIM_SMI_DISCARD;
	}
	/* C14-13:1, C14-13:2 */
	if ((hop_cnt && *hop_ptr == hop_cnt + 1) ||
	    (*hop_ptr >= 2 && *hop_ptr <= hop_cnt)) {
		(*hop_ptr)--;
		return smp->return_path[*hop_ptr] == port ?
		       RSIM_SMI_HANDLE : RSIM_SMI_DISCARD;
	}
	/* C14-13:3 */
	if (*hop_ptr == 1) {
		(*hop_ptr)--;
		return RSIM_SMI_HANDLE;
	}
	/* C14-13:4, C14-13:5 */
	return *hop_ptr == 0 ? RSIM_SMI_HANDLE : RSIM_SMI_DISCARD;
}

/*
 * A switch receives an SMP on @port (__smi_handle_dr_smp_recv() with
 * is_switch): records the return path, checks the next hop's port.
 */
static enum rsim_smi rsim_smi_recv(struct ib_smp *smp, u8 port, u8 nports)
{
	u8 *hop_ptr = &smp->hop_ptr, hop_cnt = smp->hop_cnt;

	if (hop_cnt >= IB_SMP_MAX_PATH_HOPS)
		return RSIM_SMI_DISCARD;
	if (!rsim_smp_returning(smp)) {
		/* C14-9:1: the sender should have stepped it */
		if (hop_cnt && *hop_ptr == 0)
			return RSIM_SMI_DISCARD;
		/* C14-9:2: an intermediate hop */
		if (*hop_ptr && *hop_ptr < hop_cnt) {
			smp->return_path[*hop_ptr] = port;
			return smp->initial_path[*hop_ptr + 1] <= nports ?
			       RSIM_SMI_HANDLE : RSIM_SMI_DISCARD;
		}
		/* C14-9:3: the end of the DR part */
		if (*hop_ptr == hop_cnt) {
			if (hop_cnt)
				smp->return_path[*hop_ptr] = port;
			return RSIM_SMI_HANDLE;
		}
		/* C14-9:4, C14-9:5 */
		return *hop_ptr == hop_cnt + 1 ? RSIM_SMI_HANDLE :
						 RSIM_SMI_DISCARD;
	}
	/* C14-13:1 */
	if (hop_cnt && *hop_ptr == hop_cnt + 1) {
		(*hop_ptr)--;
		return smp->return_path[*hop_ptr] == port ?
		       RSIM_SMI_HANDLE : RSIM_SMI_DISCARD;
	}
	/* C14-13:2 */
	if (*hop_ptr >= 2 && *hop_ptr <= hop_cnt)
		return smp->return_path[*hop_ptr - 1] <= nports ?
		       RSIM_SMI_HANDLE : RSIM_SMI_DISCARD;
	/* C14-13:3: for an SM here, or the start of a LID-routed part */
	if (*hop_ptr == 1) {
		if (rsim_smp_dr_slid_perm(smp))
			(*hop_ptr)--;
		return RSIM_SMI_HANDLE;
	}
	/* C14-13:4, C14-13:5 */
	return *hop_ptr == 0 ? RSIM_SMI_HANDLE : RSIM_SMI_DISCARD;
}

/* __smi_check_forward_dr_smp() */
static enum rsim_smi_fwd rsim_smi_forward(const struct ib_smp *smp)
{
	u8 hop_ptr = smp->hop_ptr, hop_cnt = smp->hop_cnt;

	if (!rsim_smp_returning(smp)) {
		if (hop_ptr && hop_ptr < hop_cnt)
			return RSIM_SMI_FORWARD;
		if (hop_ptr == hop_cnt)
			return rsim_smp_dr_dlid_perm(smp) ? RSIM_SMI_SEND :
							    RSIM_SMI_LOCAL;
		if (hop_ptr == hop_cnt + 1)
			return RSIM_SMI_SEND;
	} else {
		if (hop_ptr >= 2 && hop_ptr <= hop_cnt)
			return RSIM_SMI_FORWARD;
		if (hop_ptr == 1)
			return rsim_smp_dr_slid_perm(smp) ? RSIM_SMI_LOCAL :
							    RSIM_SMI_SEND;
	}
	return RSIM_SMI_LOCAL;
}

/* the port an SMP leaves a switch by (smi_get_fwd_port()) */
static u8 rsim_smi_fwd_port(const struct ib_smp *smp)
{
	return !rsim_smp_returning(smp) ?
	       smp->initial_path[smp->hop_ptr + 1] :
	       smp->return_path[smp->hop_ptr - 1];
}

/*
 * Out of @sw by @out: @at becomes the far end. False if there is no such
 * port, or no trained link on it.
 */
static bool rsim_fabric_leave(struct rsim_switch *sw, u8 out,
			      struct rsim_fab_at *at)
{
	if (!out || out > sw->nports || !rsim_sw_port_up(sw, out, true))
		return false;
	rsim_sw_count(&sw->port[out].c, true, sizeof(struct ib_smp));
	rsim_fabric_follow(&sw->port[out].peer, at);
	return at->sw || at->ca;
}

/*
 * A directed-route SMP from a CA, hop by hop: to the CA where it ends
 * (@hit->ca), or to a switch whose SMA answers it, and then back along
 * its return path. Under rcu_read_lock().
 */
static bool rsim_fabric_dr(struct rsim_fab_at at, struct ib_smp *smp,
			   struct rsim_fab_hit *hit)
{
	u32 steps;

	for (steps = 0; steps < 2 * IB_SMP_MAX_PATH_HOPS + 2; steps++) {
		struct rsim_switch *sw = at.sw;
		u8 in = at.port, out;

		if (at.ca) {
			hit->ca = at.ca;
			return true;
		}
		if (!sw || !rsim_sw_port_up(sw, in, true))
			return false;
		rsim_sw_count(&sw->port[in].c, false, sizeof(*smp));
		/* a switch never sees a path of no hops on a wire */
		if (!smp->hop_cnt ||
		    rsim_smi_recv(smp, in, sw->nports) == RSIM_SMI_DISCARD)
			goto drop;
		switch (rsim_smi_forward(smp)) {
		case RSIM_SMI_FORWARD:
			out = rsim_smi_fwd_port(smp);
			if (rsim_smi_send(smp, out) == RSIM_SMI_DISCARD ||
			    !rsim_fabric_leave(sw, out, &at))
				goto drop;
			continue;
		case RSIM_SMI_SEND:
			/* the end of the path, and DrDLID permissive */
			if (rsim_smp_returning(smp) ||
			    rsim_smi_send(smp, in) == RSIM_SMI_DISCARD ||
			    smp->hop_ptr != smp->hop_cnt + 1)
				goto drop;
			if (!rsim_sw_sma(sw, smp, in))
				return false;
			/* C14-13:1: back by the port it came in on */
			out = smp->return_path[smp->hop_cnt];
			if (rsim_smi_send(smp, out) == RSIM_SMI_DISCARD ||
			    !rsim_fabric_leave(sw, out, &at))
				goto drop;
			continue;
		default:
			/* for an SM at this switch, or a LID-routed part */
			goto drop;
		}
	}
drop:
	if (at.sw)
		atomic64_inc(&at.sw->dr_drops);
	atomic64_inc(&rsim_fabric_drops);
	return false;
}

/**
 * rsim_fabric_mad() - carry a MAD from a member's QP0 or QP1
 * @from: the sending CA, a member of the fabric
 * @src_qpn: the sending QP, 0 or 1
 * @dst_qpn: the QP it is addressed to
 * @dlid: its destination LID (a directed-route SMP's is ignored)
 * @mad: the MAD, which a switch on the way rewrites (hop pointer, return
 *	path) or answers in place
 * @len: its length
 * @hit: where it lands: @hit->ca, held unless it is @from
 *	(rsim_subnet_put()), QP @hit->qpn, from LID @hit->slid
 *
 * Context: process or softirq; does not sleep (a switch's SMA takes its
 * lock with BH off).
 * Return: 0, or -ENOENT: the MAD is lost (no route, dropped by a switch,
 * or a switch's agent answers nothing).
 */
int rsim_fabric_mad(struct rsim_dev *from, u32 src_qpn, u32 dst_qpn,
		    u16 dlid, void *mad, u32 len, struct rsim_fab_hit *hit)
{
	struct ib_smp *smp = mad;
	struct rsim_fab_at at;
	bool ok = false;

	memset(hit, 0, sizeof(*hit));
	rcu_read_lock();
	if (!rsim_fabric_start(from, &at))
		goto out;
	if (src_qpn == 0 && len >= sizeof(*smp) &&
	    smp->mgmt_class == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE) {
		ok = rsim_fabric_dr(at, smp, hit);
		hit->qpn = 0;
		hit->slid = be16_to_cpu(IB_LID_PERMISSIVE);
		goto out;
	}
	hit->qpn = dst_qpn;
	hit->slid = READ_ONCE(from->port.lid);
	if (dlid == hit->slid) {
		hit->ca = from;
		ok = true;
		goto out;
	}
	if (!rsim_fabric_walk(at, dlid, src_qpn == 0, len, hit))
		goto out;
	if (hit->ca) {
		ok = true;
		goto out;
	}
	/* a switch's LID: its SMA on QP0, its PMA on QP1 */
	if (len < sizeof(struct ib_mad) || dst_qpn != src_qpn ||
	    (src_qpn == 0 &&
	     smp->mgmt_class != IB_MGMT_CLASS_SUBN_LID_ROUTED) ||
	    (src_qpn == 1 && smp->mgmt_class != IB_MGMT_CLASS_PERF_MGMT))
		goto out;
	if (src_qpn == 0 ? !rsim_sw_sma(hit->sw, smp, hit->in_port) :
			   !rsim_sw_pma(hit->sw, mad))
		goto out;
	/* the answer, by LID from the switch back to the sender */
	at = (struct rsim_fab_at){ .sw = hit->sw };
	dlid = hit->slid;
	hit->slid = rsim_sw_lid(hit->sw);
	hit->sw = NULL;
	hit->qpn = src_qpn;
	ok = rsim_fabric_walk(at, dlid, src_qpn == 0, len, hit) && hit->ca;
out:
	if (ok && hit->ca != from && !ib_device_try_get(&hit->ca->ibdev))
		ok = false;
	rcu_read_unlock();
	if (!ok) {
		hit->ca = NULL;
		return -ENOENT;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_fabric_mad);

/**
 * rsim_fabric_port_retrain() - the far end of a switch port follows a Set
 * @sw: the switch
 * @port: its external port, whose PortState a Set took Down (the link
 *	retrains) or whose PortPhysicalState it set
 * @disable: the port is disabled: the far end goes Down; else it trains
 *	again, Init
 *
 * Context: process or softirq (the switch's SMA, in the data path); takes
 * the far end's lock with BH off.
 */
void rsim_fabric_port_retrain(struct rsim_switch *sw, u8 port, bool disable)
{
	struct rsim_fab_at at;

	rcu_read_lock();
	rsim_fabric_follow(&sw->port[port].peer, &at);
	if (at.sw) {
		rsim_sw_port_link(at.sw, at.port, !disable);
		rsim_fabric_trap_soon(at.sw);
	} else if (at.ca) {
		rsim_fabric_ca_link(at.ca, !disable);
	}
	rcu_read_unlock();
}

/**
 * rsim_fabric_ca_retrain() - the far end of a CA port follows a Set
 * @rsim: the CA, a member, whose PortState a Set took Down
 *
 * The link retrains: the far end comes back in Init (a switch sets
 * PortStateChange).
 *
 * Context: process or softirq; takes the far end's lock with BH off.
 */
void rsim_fabric_ca_retrain(struct rsim_dev *rsim)
{
	struct rsim_fab_at at;

	rcu_read_lock();
	rsim_fabric_follow(&rsim->link, &at);
	if (at.sw) {
		rsim_sw_port_link(at.sw, at.port, true);
		rsim_fabric_trap_soon(at.sw);
	} else if (at.ca) {
		rsim_fabric_ca_link(at.ca, true);
	}
	rcu_read_unlock();
}

/* ---- debugfs: rdmasim/fabric/ ---- */

static ssize_t rsim_fabric_cmd(const char __user *ubuf, size_t len,
			       char *buf, size_t size)
{
	if (len >= size)
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	return len;
}

#define RSIM_FAB_NAME	"%63s"
#define RSIM_FAB_CMD	160

static ssize_t rsim_fabric_switch_add_write(struct file *f,
					    const char __user *ubuf,
					    size_t len, loff_t *pos)
{
	char buf[RSIM_FAB_CMD], name[IB_DEVICE_NODE_DESC_MAX];
	struct rsim_switch *sw;
	unsigned int nports;
	ssize_t ret;

	ret = rsim_fabric_cmd(ubuf, len, buf, sizeof(buf));
	if (ret < 0)
		return ret;
	if (sscanf(buf, RSIM_FAB_NAME " %u", name, &nports) != 2 ||
	    nports > RSIM_SW_PORTS_MAX)
		return -EINVAL;
	sw = rsim_fabric_switch_add(name, nports);
	return IS_ERR(sw) ? PTR_ERR(sw) : len;
}

static ssize_t rsim_fabric_switch_del_write(struct file *f,
					    const char __user *ubuf,
					    size_t len, loff_t *pos)
{
	char buf[RSIM_FAB_CMD], name[IB_DEVICE_NODE_DESC_MAX];
	ssize_t ret;

	ret = rsim_fabric_cmd(ubuf, len, buf, sizeof(buf));
	if (ret < 0)
		return ret;
	if (sscanf(buf, RSIM_FAB_NAME, name) != 1)
		return -EINVAL;
	ret = rsim_fabric_switch_del(name);
	return ret ?: len;
}

static ssize_t rsim_fabric_link_add_write(struct file *f,
					  const char __user *ubuf,
					  size_t len, loff_t *pos)
{
	char buf[RSIM_FAB_CMD], a[IB_DEVICE_NODE_DESC_MAX];
	char b[IB_DEVICE_NODE_DESC_MAX];
	unsigned int pa, pb;
	ssize_t ret;

	ret = rsim_fabric_cmd(ubuf, len, buf, sizeof(buf));
	if (ret < 0)
		return ret;
	if (sscanf(buf, RSIM_FAB_NAME " %u " RSIM_FAB_NAME " %u", a, &pa, b,
		   &pb) != 4 || pa > U8_MAX || pb > U8_MAX)
		return -EINVAL;
	ret = rsim_fabric_link_add(a, pa, b, pb);
	return ret ?: len;
}

static ssize_t rsim_fabric_link_del_write(struct file *f,
					  const char __user *ubuf,
					  size_t len, loff_t *pos)
{
	char buf[RSIM_FAB_CMD], a[IB_DEVICE_NODE_DESC_MAX];
	unsigned int pa;
	ssize_t ret;

	ret = rsim_fabric_cmd(ubuf, len, buf, sizeof(buf));
	if (ret < 0)
		return ret;
	if (sscanf(buf, RSIM_FAB_NAME " %u", a, &pa) != 2 || pa > U8_MAX)
		return -EINVAL;
	ret = rsim_fabric_link_del(a, pa);
	return ret ?: len;
}

static ssize_t rsim_fabric_reset_write(struct file *f, const char __user *ubuf,
				       size_t len, loff_t *pos)
{
	rsim_fabric_reset();
	return len;
}

static ssize_t rsim_fabric_sm_write(struct file *f, const char __user *ubuf,
				    size_t len, loff_t *pos)
{
	bool on;
	int err;

	err = kstrtobool_from_user(ubuf, len, &on);
	if (err)
		return err;
	err = rsim_fabric_set_sm(on);
	return err ?: len;
}

static ssize_t rsim_fabric_sm_read(struct file *f, char __user *ubuf,
				   size_t len, loff_t *pos)
{
	char buf[3];

	snprintf(buf, sizeof(buf), "%d\n", rsim_fabric_sm_on());
	return simple_read_from_buffer(ubuf, len, pos, buf, 2);
}

static const struct file_operations rsim_fabric_sm_fops = {
	.owner = THIS_MODULE,
	.read = rsim_fabric_sm_read,
	.write = rsim_fabric_sm_write,
};

#define RSIM_FAB_WFOPS(n)						\
static const struct file_operations rsim_fabric_##n##_fops = {		\
	.owner = THIS_MODULE,						\
	.write = rsim_fabric_##n##_write,				\
}

RSIM_FAB_WFOPS(switch_add);
RSIM_FAB_WFOPS(switch_del);
RSIM_FAB_WFOPS(link_add);
RSIM_FAB_WFOPS(link_del);
RSIM_FAB_WFOPS(reset);

/* a link end as a net file names it: "name"[port] */
static void rsim_fabric_show_end(struct seq_file *m, const struct rsim_fab_end *e)
{
	struct rsim_switch *sw = rcu_dereference_protected(e->sw,
			lockdep_is_held(&rsim_fabric_mutex));
	struct rsim_dev *ca = rcu_dereference_protected(e->ca,
			lockdep_is_held(&rsim_fabric_mutex));

	seq_printf(m, "\"%s\"[%u]\n", sw ? sw->name : ca->cfg.name, e->port);
}

static int rsim_fabric_show_ca(struct rsim_dev *d, void *arg)
{
	struct seq_file *m = arg;

	if (!READ_ONCE(d->fab_member))
		return 0;
	seq_printf(m, "Ca\t%u \"%s\"\t\t# lid %u\n", RSIM_NUM_PORTS,
		   d->cfg.name, READ_ONCE(d->port.lid));
	if (rsim_fabric_end_used(&d->link)) {
		seq_printf(m, "[%u]\t", RSIM_PORT);
		rsim_fabric_show_end(m, &d->link);
	}
	seq_putc(m, '\n');
	return 0;
}

/*
 * The fabric as ibsim's net files and ibnetdiscover write it: each switch
 * and CA of the fabric, and its linked ports with their far ends.
 */
static int rsim_fabric_topology_show(struct seq_file *m, void *v)
{
	struct rsim_switch *sw;
	u32 p;

	mutex_lock(&rsim_fabric_mutex);
	list_for_each_entry(sw, &rsim_fabric_switches, node) {
		seq_printf(m, "Switch\t%u \"%s\"\t\t# lid %u guid 0x%016llx\n",
			   sw->nports, sw->name, rsim_sw_lid(sw),
			   be64_to_cpu(sw->guid));
		for (p = 1; p <= sw->nports; p++) {
			if (!rsim_fabric_end_used(&sw->port[p].peer))
				continue;
			seq_printf(m, "[%u]\t", p);
			rsim_fabric_show_end(m, &sw->port[p].peer);
		}
		seq_putc(m, '\n');
	}
	rcu_read_lock();
	rsim_subnet_for_each(rsim_fabric_show_ca, m);
	rcu_read_unlock();
	mutex_unlock(&rsim_fabric_mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rsim_fabric_topology);

/* per switch: its SMA's and forwarding's counters, its ports' states */
static int rsim_fabric_stats_show(struct seq_file *m, void *v)
{
	struct rsim_switch *sw;
	u32 p;

	mutex_lock(&rsim_fabric_mutex);
	seq_printf(m, "drops %lld\n", atomic64_read(&rsim_fabric_drops));
	list_for_each_entry(sw, &rsim_fabric_switches, node) {
		seq_printf(m, "switch %s lid %u lin_top %u psc %d gets %lld sets %lld errors %lld dr_drops %lld no_route %lld traps %lld represses %lld\n",
			   sw->name, rsim_sw_lid(sw), READ_ONCE(sw->lin_top),
			   READ_ONCE(sw->psc), atomic64_read(&sw->sma_gets),
			   atomic64_read(&sw->sma_sets),
			   atomic64_read(&sw->sma_errors),
			   atomic64_read(&sw->dr_drops),
			   atomic64_read(&sw->no_route),
			   atomic64_read(&sw->traps),
			   atomic64_read(&sw->represses));
		for (p = 1; p <= sw->nports; p++) {
			struct rsim_sw_counters *c = &sw->port[p].c;

			seq_printf(m, " port %u state %u phys %u xmit %lld rcv %lld discards %lld\n",
				   p, READ_ONCE(sw->port[p].state),
				   READ_ONCE(sw->port[p].phys),
				   atomic64_read(&c->xmit_pkts),
				   atomic64_read(&c->rcv_pkts),
				   atomic64_read(&c->xmit_discards));
		}
	}
	mutex_unlock(&rsim_fabric_mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rsim_fabric_stats);

/**
 * rsim_fabric_debugfs_init() - rdmasim/fabric/
 * @root: the module's directory
 *
 * sm (0 or 1), switch_add ("name ports"), switch_del ("name"), link_add
 * ("a port b port"), link_del ("a port"), reset, and the read-only
 * topology and stats.
 *
 * Context: process (module init).
 */
void rsim_fabric_debugfs_init(struct dentry *root)
{
	struct dentry *d = debugfs_create_dir("fabric", root);

	rsim_fabric_dir = d;
	debugfs_create_file("sm", 0600, d, NULL, &rsim_fabric_sm_fops);
	debugfs_create_file("switch_add", 0200, d, NULL,
			    &rsim_fabric_switch_add_fops);
	debugfs_create_file("switch_del", 0200, d, NULL,
			    &rsim_fabric_switch_del_fops);
	debugfs_create_file("link_add", 0200, d, NULL,
			    &rsim_fabric_link_add_fops);
	debugfs_create_file("link_del", 0200, d, NULL,
			    &rsim_fabric_link_del_fops);
	debugfs_create_file("reset", 0200, d, NULL, &rsim_fabric_reset_fops);
	debugfs_create_file("topology", 0400, d, NULL,
			    &rsim_fabric_topology_fops);
	debugfs_create_file("stats", 0400, d, NULL, &rsim_fabric_stats_fops);
}

/**
 * rsim_fabric_exit() - free every switch (module exit, devices gone)
 *
 * Context: process.
 */
void rsim_fabric_exit(void)
{
	struct rsim_switch *sw, *tmp;

	mutex_lock(&rsim_fabric_mutex);
	list_for_each_entry_safe(sw, tmp, &rsim_fabric_switches, node)
		rsim_fabric_switch_remove(sw);
	mutex_unlock(&rsim_fabric_mutex);
}
