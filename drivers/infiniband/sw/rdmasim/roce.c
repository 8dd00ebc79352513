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
 * away. The data path routes a packet by its destination GID to whichever
 * RoCE-mode rdmasim device on the host holds that GID (itself, or the
 * device on the other end of a veth pair, in this namespace or another):
 * nothing travels through the network stack.
 */

#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/rculist.h>
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

/**
 * rsim_roce_add() - make a registered RoCE-mode device reachable
 * @rsim: the device
 *
 * Context: process; after ib_register_device().
 */
void rsim_roce_add(struct rsim_dev *rsim)
{
	spin_lock(&rsim_roce_lock);
	list_add_tail_rcu(&rsim->roce_node, &rsim_roce_devs);
	spin_unlock(&rsim_roce_lock);
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

/**
 * rsim_roce_route() - the RoCE-mode device that holds a GID
 * @dgid: a packet's destination GID
 *
 * What a switch and the far end's address match do: the packet reaches
 * the device whose GID table holds @dgid as a RoCE v2 GID.
 *
 * Context: any; does not sleep.
 * Return: the device, held (ib_device_put() it), or NULL.
 */
struct rsim_dev *rsim_roce_route(const union ib_gid *dgid)
{
	const struct ib_gid_attr *attr;
	struct rsim_dev *rsim, *found = NULL;

	rcu_read_lock();
	list_for_each_entry_rcu(rsim, &rsim_roce_devs, roce_node) {
		if (!ib_device_try_get(&rsim->ibdev))
			continue;
		attr = rdma_find_gid_by_port(&rsim->ibdev, dgid,
					     IB_GID_TYPE_ROCE_UDP_ENCAP,
					     RSIM_PORT, NULL);
		if (!IS_ERR(attr)) {
			rdma_put_gid_attr(attr);
			found = rsim;
			break;
		}
		ib_device_put(&rsim->ibdev);
	}
	rcu_read_unlock();
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
	struct rsim_dev *rsim = rsim_roce_get_by_ndev(ndev);

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
