// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: RoCE mode. A device bound to a netdev, the way rxe and siw
 * attach:
 *
 *   rdma link add <name> type rdmasim netdev <netdev>
 *   rdma link del <name>
 *
 * The port is Ethernet (RoCE v2): the core owns its GID table, filled
 * from the netdev's IPv4 and IPv6 addresses; its state follows the
 * netdev's carrier, and the device is unregistered when the netdev goes
 * away (or moves to another namespace). The data path routes a packet by
 * its destination GID to the RoCE-mode rdmasim device that holds that GID
 * and that the sender reaches as the network would: itself, a device of
 * its netdev's namespace, or one across a link (the other end of a veth
 * pair, perhaps in another namespace, or a bridge); rsim_roce_route().
 * Nothing travels through the network stack.
 */

#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/rculist.h>
#include <linux/rtnetlink.h>
#include <net/ipv6.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/rdma_netlink.h>
#include <kunit/visibility.h>

#include "rdmasim.h"

/* UDP, BTH, DETH and ICRC: what a RoCE v2 datagram carries past its IP header */
#define RSIM_ROCE_UD_OVERHEAD	(8 + IB_BTH_BYTES + IB_DETH_BYTES + IB_ICRC_BYTES)

static LIST_HEAD(rsim_roce_devs);
static DEFINE_SPINLOCK(rsim_roce_lock);	/* protects rsim_roce_devs (writers) */

/*
 * The netdev @ndev is paired with, as the two ends of a veth pair are
 * (each one's link is the other, perhaps in another namespace), or NULL:
 * a VLAN's or a macvlan's link is its lower device, whose own link is
 * itself. Under RTNL (rtnl_link_ops->get_link_net() needs it).
 */
static struct net_device *rsim_roce_peer(struct net_device *ndev)
{
	const struct rtnl_link_ops *ops = ndev->rtnl_link_ops;
	struct net_device *peer;
	struct net *net;
	int iflink;

	ASSERT_RTNL();
	if (!ops || !ops->get_link_net)
		return NULL;
	iflink = dev_get_iflink(ndev);
	net = ops->get_link_net(ndev);
	/* an index is a namespace's: the peer's may be this one's number */
	if (!iflink || (iflink == ndev->ifindex && net_eq(net, dev_net(ndev))))
		return NULL;
	peer = __dev_get_by_index(net, iflink);
	if (!peer || peer == ndev || !peer->rtnl_link_ops ||
	    !peer->rtnl_link_ops->get_link_net ||
	    dev_get_iflink(peer) != ndev->ifindex ||
	    !net_eq(peer->rtnl_link_ops->get_link_net(peer), dev_net(ndev)))
		return NULL;
	return peer;
}

/* the bridge @ndev is a port of, or NULL; under RTNL */
static struct net_device *rsim_roce_bridge(struct net_device *ndev)
{
	struct net_device *m = netdev_master_upper_dev_get(ndev);

	return m && netif_is_bridge_master(m) ? m : NULL;
}

/* @ndev as a key of @seg, unless it is NULL or @gone */
static void rsim_roce_seg_add(struct rsim_roce_seg *seg,
			      const struct net_device *ndev,
			      const struct net_device *gone)
{
	if (!ndev || ndev == gone || seg->n == RSIM_ROCE_SEG_MAX)
		return;
	seg->net[seg->n] = dev_net(ndev)->net_cookie;
	seg->ifindex[seg->n++] = ndev->ifindex;
}

/*
 * The Ethernet segment of @rsim's netdev, as the netdevs that name it
 * (their namespace's cookie and their index: nothing is held): the netdev
 * itself (first: its namespace is the device's), its veth peer, and the
 * bridge either of them is a port of; @gone, a netdev being unregistered,
 * is left out. Stored for the data path, which cannot take RTNL.
 */
static void rsim_roce_seg_update(struct rsim_dev *rsim,
				 const struct net_device *gone)
{
	struct net_device *ndev = rsim->cfg.ndev, *peer;
	struct rsim_roce_seg seg = {};
	unsigned long flags;

	ASSERT_RTNL();
	seg.net[0] = dev_net(ndev)->net_cookie;
	seg.ifindex[0] = ndev->ifindex;
	seg.n = 1;
	rsim_roce_seg_add(&seg, rsim_roce_bridge(ndev), gone);
	peer = rsim_roce_peer(ndev);
	if (peer && peer != gone) {
		rsim_roce_seg_add(&seg, peer, gone);
		rsim_roce_seg_add(&seg, rsim_roce_bridge(peer), gone);
	}
	write_seqlock_irqsave(&rsim->roce_seg_lock, flags);
	rsim->roce_seg = seg;
	write_sequnlock_irqrestore(&rsim->roce_seg_lock, flags);
}

/* every bound device's segment anew (a netdev came, went or moved) */
static void rsim_roce_seg_update_all(const struct net_device *gone)
{
	struct rsim_dev *rsim;

	ASSERT_RTNL();
	rcu_read_lock();
	list_for_each_entry_rcu(rsim, &rsim_roce_devs, roce_node)
		rsim_roce_seg_update(rsim, gone);
	rcu_read_unlock();
}

static void rsim_roce_seg_read(struct rsim_dev *rsim,
			       struct rsim_roce_seg *seg)
{
	unsigned int seq;

	do {
		seq = read_seqbegin(&rsim->roce_seg_lock);
		*seg = rsim->roce_seg;
	} while (read_seqretry(&rsim->roce_seg_lock, seq));
}

/* KUnit: called by a RoCE-mode device's probe at its RSIM_ROCE_STAGE_* */
static void (*rsim_roce_probe_hook)(struct rsim_dev *rsim, int stage);

/**
 * rsim_roce_set_probe_hook() - watch RoCE-mode devices being made (KUnit)
 * @hook: called by each probe at each RSIM_ROCE_STAGE_*, with no lock
 *	held; NULL for none
 *
 * Context: any.
 */
void rsim_roce_set_probe_hook(void (*hook)(struct rsim_dev *rsim, int stage))
{
	WRITE_ONCE(rsim_roce_probe_hook, hook);
}
EXPORT_SYMBOL_IF_KUNIT(rsim_roce_set_probe_hook);

/* the probe is at @stage */
static void rsim_roce_stage(struct rsim_dev *rsim, int stage)
{
	void (*hook)(struct rsim_dev *rsim, int stage) =
		READ_ONCE(rsim_roce_probe_hook);

	if (hook)
		hook(rsim, stage);
}

/**
 * rsim_roce_bind() - bind a new RoCE-mode device to its netdev
 * @rsim: the device, not registered yet; its @cfg.ndev held
 *
 * Under RTNL, which every NETDEV_UNREGISTER is sent under: the netdev
 * must still be registered (ib_device_set_netdev()'s contract), and from
 * here on the notifier sees the device (rsim_roce_notify()), before its
 * registration as after: a netdev that goes away meanwhile is not missed,
 * and its unregistration does not wait for ever on the device's hold.
 * The routing list skips the device until it is registered
 * (ib_device_try_get() fails before).
 *
 * Context: process; takes RTNL.
 * Return: 0; -ENODEV if the netdev is being unregistered; or what
 * ib_device_set_netdev() returns.
 */
int rsim_roce_bind(struct rsim_dev *rsim)
{
	struct net_device *ndev = rsim->cfg.ndev;
	int err;

	rsim_roce_stage(rsim, RSIM_ROCE_STAGE_BIND);
	rtnl_lock();
	if (ndev->reg_state != NETREG_REGISTERED) {
		err = -ENODEV;
		goto out_unlock;
	}
	err = ib_device_set_netdev(&rsim->ibdev, ndev, RSIM_PORT);
	if (err)
		goto out_unlock;
	seqlock_init(&rsim->roce_seg_lock);
	rsim_roce_seg_update(rsim, NULL);
	spin_lock(&rsim_roce_lock);
	list_add_tail_rcu(&rsim->roce_node, &rsim_roce_devs);
	spin_unlock(&rsim_roce_lock);
out_unlock:
	rtnl_unlock();
	if (!err)
		rsim_roce_stage(rsim, RSIM_ROCE_STAGE_BOUND);
	return err;
}

/**
 * rsim_roce_watch() - a registered RoCE-mode device's netdev is still there
 * @rsim: the device, bound (rsim_roce_bind()) and registered
 *
 * From here on the notifier unregisters the device when its netdev goes
 * away (or moves to another namespace). If that happened since the bind,
 * the notifier noted it (and, once the device was registered, queued its
 * unregistration too): the caller unregisters the device, which the core
 * does once whoever calls first.
 *
 * Context: process; takes RTNL.
 * Return: 0, or -ENODEV if the netdev went away meanwhile.
 */
int rsim_roce_watch(struct rsim_dev *rsim)
{
	int err = 0;

	rsim_roce_stage(rsim, RSIM_ROCE_STAGE_REGISTERED);
	rtnl_lock();
	if (rsim->ndev_gone)
		err = -ENODEV;
	rtnl_unlock();
	return err;
}

/**
 * rsim_roce_del() - take a RoCE-mode device off the routing list
 * @rsim: the device, unregistered
 *
 * When this returns, no lookup sees the device any more.
 *
 * Context: process; sleeps (RCU grace period).
 */
void rsim_roce_del(struct rsim_dev *rsim)
{
	spin_lock(&rsim_roce_lock);
	list_del_rcu(&rsim->roce_node);
	spin_unlock(&rsim_roce_lock);
	synchronize_rcu();
}

/* The RoCE-mode device bound to @ndev, held; NULL if there is none. */
static struct rsim_dev *rsim_roce_get_by_ndev(const struct net_device *ndev)
{
	struct rsim_dev *rsim, *found = NULL;

	rcu_read_lock();
	list_for_each_entry_rcu(rsim, &rsim_roce_devs, roce_node) {
		if (rsim->cfg.ndev == ndev && ib_device_try_get(&rsim->ibdev)) {
			found = rsim;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}

/*
 * NETDEV_UNREGISTER (under RTNL): every device bound to @ndev learns it,
 * the registered ones and those between rsim_roce_bind() and
 * rsim_roce_watch(), which the notifier cannot unregister itself.
 */
static void rsim_roce_note_gone(const struct net_device *ndev)
{
	struct rsim_dev *rsim;

	ASSERT_RTNL();
	rcu_read_lock();
	list_for_each_entry_rcu(rsim, &rsim_roce_devs, roce_node)
		if (rsim->cfg.ndev == ndev)
			rsim->ndev_gone = true;
	rcu_read_unlock();
}

/**
 * rsim_roce_bound() - is an rdmasim device bound to @ndev?
 * @ndev: the netdev
 *
 * Context: any; the caller serializes creation (main.c's node lock).
 * Return: true if a registered RoCE-mode device is bound to @ndev.
 */
bool rsim_roce_bound(const struct net_device *ndev)
{
	struct rsim_dev *rsim;
	bool bound = false;

	rcu_read_lock();
	list_for_each_entry_rcu(rsim, &rsim_roce_devs, roce_node)
		bound |= rsim->cfg.ndev == ndev;
	rcu_read_unlock();
	return bound;
}

/**
 * rsim_roce_mtu() - the RoCE path MTU an Ethernet MTU leaves
 * @ndev: the netdev
 *
 * Context: any.
 * Return: the largest IB MTU that fits a frame with the RoCE v2 headers,
 * 256 at least (a netdev below IPv6's 1280 carries no RoCE v2 over IPv6
 * anyway).
 */
enum ib_mtu rsim_roce_mtu(const struct net_device *ndev)
{
	enum ib_mtu mtu = iboe_get_mtu(READ_ONCE(ndev->mtu));

	return mtu ? mtu : IB_MTU_256;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_roce_mtu);

/* how directly @from's netdev reaches @to's: enum rsim_roce_reach */
enum rsim_roce_reach {
	RSIM_ROCE_UNREACHABLE,
	RSIM_ROCE_SAME_NETNS,	/* an address of the sender's own namespace */
	RSIM_ROCE_SEGMENT,	/* a link: veth peers, or one bridge */
};

static enum rsim_roce_reach rsim_roce_reaches(const struct rsim_roce_seg *a,
					      const struct rsim_roce_seg *b)
{
	int i, j;

	if (a->net[0] == b->net[0])
		return RSIM_ROCE_SAME_NETNS;
	for (i = 0; i < a->n; i++)
		for (j = 0; j < b->n; j++)
			if (a->net[i] == b->net[j] &&
			    a->ifindex[i] == b->ifindex[j])
				return RSIM_ROCE_SEGMENT;
	return RSIM_ROCE_UNREACHABLE;
}

/*
 * A RoCE-mode device takes part in traffic where the RDMA core lets its
 * netdev's namespace use it: always in shared mode; with "rdma system set
 * netns exclusive", only once the device is in its netdev's namespace.
 */
static bool rsim_roce_in_net(const struct rsim_dev *rsim)
{
	return rdma_dev_access_netns(&rsim->ibdev, dev_net(rsim->cfg.ndev));
}

/* does @rsim's GID table hold @gid (RoCE v2)? */
static bool rsim_roce_holds(struct rsim_dev *rsim, const union ib_gid *gid)
{
	const struct ib_gid_attr *attr;

	attr = rdma_find_gid_by_port(&rsim->ibdev, gid,
				     IB_GID_TYPE_ROCE_UDP_ENCAP, RSIM_PORT,
				     NULL);
	if (IS_ERR(attr))
		return false;
	rdma_put_gid_attr(attr);
	return true;
}

/**
 * rsim_roce_route() - the RoCE-mode device a packet to a GID reaches
 * @from: the sending device
 * @dgid: the packet's destination GID
 *
 * What the network would do with a RoCE v2 packet, though none goes
 * through the stack: @from itself if its own GID table holds @dgid (the
 * HCA's loopback); else a device whose table holds it and whose netdev
 * is in @from's netdev's namespace (an address of that namespace is
 * delivered locally); else one whose netdev is on @from's netdev's
 * Ethernet segment (the other end of its veth pair, or a port of the
 * bridge either end is on, or that bridge itself). Two devices found at
 * the same step hold one address twice: the packet is refused (counted
 * in @from's roce_ambiguous), rather than guessed at. A device that holds
 * the GID in a namespace with no link to @from's never gets the packet,
 * whatever order the devices were made in; nor one that "rdma system set
 * netns exclusive" keeps out of its netdev's namespace (nor does it
 * send). Multi-hop IP routing between namespaces is not modelled.
 *
 * Context: any; does not sleep.
 * Return: the device, held (ib_device_put() it), or NULL (counted in
 * @from's roce_no_route, unless ambiguous).
 */
struct rsim_dev *rsim_roce_route(struct rsim_dev *from,
				 const union ib_gid *dgid)
{
	enum rsim_roce_reach best = RSIM_ROCE_UNREACHABLE, r;
	struct rsim_dev *rsim, *found = NULL;
	struct rsim_roce_seg fseg, seg;
	bool ambiguous = false;

	rcu_read_lock();
	if (!rsim_roce_in_net(from))
		goto out;
	if (rsim_roce_holds(from, dgid) && ib_device_try_get(&from->ibdev)) {
		found = from;
		goto out;
	}
	rsim_roce_seg_read(from, &fseg);
	list_for_each_entry_rcu(rsim, &rsim_roce_devs, roce_node) {
		if (rsim == from || !ib_device_try_get(&rsim->ibdev))
			continue;
		r = RSIM_ROCE_UNREACHABLE;
		if (rsim_roce_in_net(rsim) && rsim_roce_holds(rsim, dgid)) {
			rsim_roce_seg_read(rsim, &seg);
			r = rsim_roce_reaches(&fseg, &seg);
		}
		if (r != RSIM_ROCE_UNREACHABLE &&
		    (!found || r < best)) {
			if (found)
				ib_device_put(&found->ibdev);
			found = rsim;
			best = r;
			ambiguous = false;
			continue;
		}
		if (r != RSIM_ROCE_UNREACHABLE && r == best)
			ambiguous = true;
		ib_device_put(&rsim->ibdev);
	}
	if (ambiguous) {
		ib_device_put(&found->ibdev);
		found = NULL;
		atomic64_inc(&from->roce_ambiguous);
	}
out:
	rcu_read_unlock();
	if (!found && !ambiguous)
		atomic64_inc(&from->roce_no_route);
	return found;
}

/**
 * rsim_roce_build_hdr() - write the network header of a RoCE v2 packet
 * @g: the sender's GRH (destination GID, traffic class, flow label, hop
 *	limit)
 * @sgid: the source GID
 * @len: the packet's payload bytes
 * @hdr: filled with what a receive buffer gets in the GRH's 40 bytes: an
 *	IPv6 header, or 20 zero bytes and an IPv4 header with its checksum
 *	(IBA A17.4.5.1), as ib_get_rdma_header_version() tells them apart
 *
 * Context: any.
 * Return: RDMA_NETWORK_IPV4 or RDMA_NETWORK_IPV6; -EHOSTUNREACH if one of
 * the two GIDs is IPv4-mapped and the other not.
 */
int rsim_roce_build_hdr(const struct ib_global_route *g,
			const union ib_gid *sgid, u32 len,
			union rdma_network_hdr *hdr)
{
	bool v4 = ipv6_addr_v4mapped((const struct in6_addr *)sgid->raw);

	if (v4 != ipv6_addr_v4mapped((const struct in6_addr *)g->dgid.raw))
		return -EHOSTUNREACH;
	memset(hdr, 0, sizeof(*hdr));
	if (v4) {
		struct iphdr *ip = &hdr->roce4grh;

		ip->version = 4;
		ip->ihl = 5;
		ip->tos = g->traffic_class;
		ip->tot_len = htons(sizeof(*ip) + RSIM_ROCE_UD_OVERHEAD + len);
		ip->frag_off = htons(IP_DF);
		ip->ttl = g->hop_limit;
		ip->protocol = IPPROTO_UDP;
		memcpy(&ip->saddr, &sgid->raw[12], 4);
		memcpy(&ip->daddr, &g->dgid.raw[12], 4);
		ip->check = ip_fast_csum(ip, ip->ihl);
		return RDMA_NETWORK_IPV4;
	}
	hdr->ibgrh.version_tclass_flow =
		cpu_to_be32((6U << 28) | ((u32)g->traffic_class << 20) |
			    (g->flow_label & 0xfffff));
	hdr->ibgrh.paylen = cpu_to_be16(RSIM_ROCE_UD_OVERHEAD + len);
	hdr->ibgrh.next_hdr = IPPROTO_UDP;
	hdr->ibgrh.hop_limit = g->hop_limit;
	hdr->ibgrh.sgid = *sgid;
	hdr->ibgrh.dgid = g->dgid;
	return RDMA_NETWORK_IPV6;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_roce_build_hdr);

/**
 * rsim_roce_hdr() - the source GID and network header of a RoCE v2 packet
 * @rsim: the sending device
 * @g: the sender's address vector's GRH (with its source GID index)
 * @len: the packet's payload bytes
 * @hdr: filled by rsim_roce_build_hdr(), or NULL for the type alone
 * @sgid: filled with the source GID
 *
 * The source GID is read from the sender's GID table now, as a device
 * reads its table when it sends: an address removed since the AH was made
 * sends nothing.
 *
 * Context: any.
 * Return: RDMA_NETWORK_IPV4 or RDMA_NETWORK_IPV6; -EHOSTUNREACH if the
 * source GID index names no GID, or one of the two GIDs is IPv4 and the
 * other not.
 */
int rsim_roce_hdr(struct rsim_dev *rsim, const struct ib_global_route *g,
		  u32 len, union rdma_network_hdr *hdr, union ib_gid *sgid)
{
	union rdma_network_hdr scratch;

	if (rdma_query_gid(&rsim->ibdev, RSIM_PORT, g->sgid_index, sgid))
		return -EHOSTUNREACH;
	return rsim_roce_build_hdr(g, sgid, len, hdr ?: &scratch);
}

/*
 * rdma link add NAME type rdmasim netdev DEV: a RoCE-mode device bound to
 * DEV. As rxe: only an Ethernet device that is not a VLAN, and only one
 * rdmasim device per netdev (-EEXIST).
 */
static int rsim_roce_newlink(const char *ibdev_name, struct net_device *ndev)
{
	struct rsim_dev *rsim;

	if (is_vlan_dev(ndev) || ndev->type != ARPHRD_ETHER)
		return -EINVAL;
	rsim = rsim_dev_new_roce(ibdev_name, ndev);
	return PTR_ERR_OR_ZERO(rsim);
}

static struct rdma_link_ops rsim_link_ops = {
	.type = RSIM_DRV_NAME,
	.newlink = rsim_roce_newlink,
};

/*
 * The bound netdev's life: its carrier is the port's link, its MTU the
 * port's largest, and its unregistration the device's (queued: the RDMA
 * core's unregistration must not run under RTNL).
 */
static int rsim_roce_notify(struct notifier_block *nb, unsigned long event,
			    void *arg)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(arg);
	struct rsim_dev *rsim;

	if (event == NETDEV_UNREGISTER)
		rsim_roce_note_gone(ndev);
	/* a peer or a bridge that came, went or moved changes a segment */
	if (event == NETDEV_REGISTER || event == NETDEV_UNREGISTER ||
	    event == NETDEV_CHANGEUPPER)
		rsim_roce_seg_update_all(event == NETDEV_UNREGISTER ? ndev :
					 NULL);
	rsim = rsim_roce_get_by_ndev(ndev);
	if (!rsim)
		return NOTIFY_DONE;
	switch (event) {
	case NETDEV_UNREGISTER:
		ib_unregister_device_queued(&rsim->ibdev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		rsim_port_set_link(rsim,
				   netif_running(ndev) && netif_carrier_ok(ndev));
		break;
	case NETDEV_CHANGEMTU:
		spin_lock_bh(&rsim->port.lock);
		rsim->port.mtu = rsim_roce_mtu(ndev);
		spin_unlock_bh(&rsim->port.lock);
		break;
	default:
		break;
	}
	ib_device_put(&rsim->ibdev);
	return NOTIFY_OK;
}

static struct notifier_block rsim_roce_nb = {
	.notifier_call = rsim_roce_notify,
};

/**
 * rsim_roce_init() - offer the "rdmasim" link type and watch netdevs
 *
 * Context: module init.
 * Return: 0 or the notifier's registration error.
 */
int rsim_roce_init(void)
{
	int err;

	err = register_netdevice_notifier(&rsim_roce_nb);
	if (err)
		return err;
	rdma_link_register(&rsim_link_ops);
	return 0;
}

/**
 * rsim_roce_stop() - take the "rdmasim" link type away
 *
 * No link is added once this returns; the caller then removes the
 * devices, and calls rsim_roce_exit().
 *
 * Context: module exit.
 */
void rsim_roce_stop(void)
{
	rdma_link_unregister(&rsim_link_ops);
}

/**
 * rsim_roce_exit() - stop watching netdevs
 *
 * Called once no device is left: the unregistration replays
 * NETDEV_UNREGISTER for every netdev, which must find none bound.
 *
 * Context: module exit.
 */
void rsim_roce_exit(void)
{
	unregister_netdevice_notifier(&rsim_roce_nb);
}

MODULE_ALIAS_RDMA_LINK(RSIM_DRV_NAME);
