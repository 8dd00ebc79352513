// SPDX-License-Identifier: GPL-2.0-only
/*
 * Suite rdmasim_roce: what RoCE mode (roce.c) puts on the wire and accepts
 * without a netdev's addresses: the network header a UD receive gets (read
 * back with the RDMA core's own parsers, as ib_init_ah_attr_from_wc()
 * does), the path MTU an Ethernet MTU leaves, and the address vectors a
 * RoCE port takes; a netdev unregistered at each point of a RoCE-mode
 * device's creation, which must not wait for ever on the device. The
 * device itself, bound to veth pairs, is the shell selftest's
 * (guest/selftest-roce.sh) and the conformance boot's.
 */

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/kthread.h>
#include <linux/rtnetlink.h>
#include <linux/ip.h>
#include <net/ipv6.h>
#include <rdma/ib_addr.h>

#include "helpers.h"

/* fe80::1 and fe80::2; ::ffff:127.0.0.1 and ::ffff:127.0.0.2 */
static void rsim_roce_gid_ll(union ib_gid *gid, u8 last)
{
	memset(gid, 0, sizeof(*gid));
	gid->raw[0] = 0xfe;
	gid->raw[1] = 0x80;
	gid->raw[15] = last;
}

static void rsim_roce_gid_v4(union ib_gid *gid, u8 last)
{
	ipv6_addr_set_v4mapped(htonl(0x7f000000 | last),
			       (struct in6_addr *)gid->raw);
}

static void rsim_roce_grh(struct ib_global_route *g, const union ib_gid *dgid)
{
	memset(g, 0, sizeof(*g));
	g->dgid = *dgid;
	g->traffic_class = 0x28;
	g->flow_label = 0x12345;
	g->hop_limit = 64;
}

static void rsim_roce_test_ipv6_header(struct kunit *test)
{
	union rdma_network_hdr hdr;
	struct ib_global_route g;
	union ib_gid sgid, dgid, s, d;

	rsim_roce_gid_ll(&sgid, 1);
	rsim_roce_gid_ll(&dgid, 2);
	rsim_roce_grh(&g, &dgid);
	KUNIT_ASSERT_EQ(test, rsim_roce_build_hdr(&g, &sgid, 256, &hdr),
			RDMA_NETWORK_IPV6);
	KUNIT_EXPECT_EQ(test, ib_get_rdma_header_version(&hdr), 6);
	KUNIT_ASSERT_EQ(test, ib_get_gids_from_rdma_hdr(&hdr, RDMA_NETWORK_IPV6,
							&s, &d), 0);
	KUNIT_EXPECT_MEMEQ(test, &s, &sgid, sizeof(s));
	KUNIT_EXPECT_MEMEQ(test, &d, &dgid, sizeof(d));
	KUNIT_EXPECT_EQ(test, hdr.ibgrh.next_hdr, IPPROTO_UDP);
	KUNIT_EXPECT_EQ(test, hdr.ibgrh.hop_limit, 64);
	/* UDP 8, BTH 12, DETH 8, ICRC 4 around the payload */
	KUNIT_EXPECT_EQ(test, be16_to_cpu(hdr.ibgrh.paylen), 256 + 32);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(hdr.ibgrh.version_tclass_flow),
			(6U << 28) | (0x28U << 20) | 0x12345);
}

static void rsim_roce_test_ipv4_header(struct kunit *test)
{
	union rdma_network_hdr hdr;
	struct ib_global_route g;
	union ib_gid sgid, dgid, s, d;
	const struct iphdr *ip = &hdr.roce4grh;
	static const u8 zero[20];

	rsim_roce_gid_v4(&sgid, 1);
	rsim_roce_gid_v4(&dgid, 2);
	rsim_roce_grh(&g, &dgid);
	KUNIT_ASSERT_EQ(test, rsim_roce_build_hdr(&g, &sgid, 100, &hdr),
			RDMA_NETWORK_IPV4);
	/* the first 20 bytes are zero: the core reads an IPv4 header */
	KUNIT_EXPECT_MEMEQ(test, &hdr, zero, sizeof(zero));
	KUNIT_EXPECT_EQ(test, ib_get_rdma_header_version(&hdr), 4);
	KUNIT_ASSERT_EQ(test, ib_get_gids_from_rdma_hdr(&hdr, RDMA_NETWORK_IPV4,
							&s, &d), 0);
	KUNIT_EXPECT_MEMEQ(test, &s, &sgid, sizeof(s));
	KUNIT_EXPECT_MEMEQ(test, &d, &dgid, sizeof(d));
	KUNIT_EXPECT_EQ(test, (u8)ip->ihl, 5);
	KUNIT_EXPECT_EQ(test, ip->protocol, IPPROTO_UDP);
	KUNIT_EXPECT_EQ(test, ip->tos, 0x28);
	KUNIT_EXPECT_EQ(test, ip->ttl, 64);
	KUNIT_EXPECT_EQ(test, ntohs(ip->tot_len), 20 + 100 + 32);
	/* a valid checksum sums to zero */
	KUNIT_EXPECT_EQ(test, (__force u16)ip_fast_csum(ip, ip->ihl), 0);
}

static void rsim_roce_test_mixed_families_refused(struct kunit *test)
{
	union rdma_network_hdr hdr;
	struct ib_global_route g;
	union ib_gid v4, v6;

	rsim_roce_gid_v4(&v4, 1);
	rsim_roce_gid_ll(&v6, 2);
	rsim_roce_grh(&g, &v6);
	KUNIT_EXPECT_EQ(test, rsim_roce_build_hdr(&g, &v4, 0, &hdr),
			-EHOSTUNREACH);
	rsim_roce_grh(&g, &v4);
	KUNIT_EXPECT_EQ(test, rsim_roce_build_hdr(&g, &v6, 0, &hdr),
			-EHOSTUNREACH);
}

static void rsim_roce_ndev_free(void *ndev)
{
	free_netdev(ndev);
}

/* an Ethernet netdev, never registered: what the port reads of one */
static struct net_device *rsim_roce_ndev(struct kunit *test)
{
	struct net_device *ndev = alloc_etherdev(0);

	KUNIT_ASSERT_NOT_NULL(test, ndev);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							rsim_roce_ndev_free,
							ndev), 0);
	return ndev;
}

static void rsim_roce_test_mtu_from_netdev(struct kunit *test)
{
	static const struct {
		unsigned int eth;
		enum ib_mtu ib;
	} cases[] = {
		{ 9000, IB_MTU_4096 },
		{ 4200, IB_MTU_4096 },
		{ 4000, IB_MTU_2048 },
		{ 1500, IB_MTU_1024 },
		{ 1280, IB_MTU_1024 },
		{ 1000, IB_MTU_512 },
		{ 576, IB_MTU_256 },
		/* too small for RoCE: still the smallest IB MTU */
		{ 68, IB_MTU_256 },
	};
	struct net_device *ndev = rsim_roce_ndev(test);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		ndev->mtu = cases[i].eth;
		KUNIT_EXPECT_EQ_MSG(test, rsim_roce_mtu(ndev), cases[i].ib,
				    "Ethernet MTU %u", cases[i].eth);
	}
}

/* a RoCE address vector to fe80::2 from GID index 0, SL 0 */
static void rsim_roce_av(struct rdma_ah_attr *ah)
{
	union ib_gid dgid;

	rsim_roce_gid_ll(&dgid, 2);
	memset(ah, 0, sizeof(*ah));
	ah->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(ah, RSIM_PORT);
	rdma_ah_set_grh(ah, &dgid, 0, 0, 64, 0);
}

static void rsim_roce_test_address_vectors(struct kunit *test)
{
	struct rsim_dev *roce = kunit_kzalloc(test, sizeof(*roce), GFP_KERNEL);
	struct rsim_dev *ib = rsim_kunit_shared_dev(test);
	struct rdma_ah_attr ah;

	KUNIT_ASSERT_NOT_NULL(test, roce);
	/* what rsim_is_roce() looks at */
	roce->cfg.ndev = rsim_roce_ndev(test);

	rsim_roce_av(&ah);
	KUNIT_EXPECT_EQ(test, rsim_ah_attr_check(roce, &ah), 0);
	/* an InfiniBand port takes no RoCE vector, nor the other way */
	KUNIT_EXPECT_EQ(test, rsim_ah_attr_check(ib, &ah), -EINVAL);
	ah.type = RDMA_AH_ATTR_TYPE_IB;
	rdma_ah_set_dlid(&ah, 1);
	KUNIT_EXPECT_EQ(test, rsim_ah_attr_check(roce, &ah), -EINVAL);

	/* RoCE needs the GRH */
	rsim_roce_av(&ah);
	ah.ah_flags &= ~IB_AH_GRH;
	KUNIT_EXPECT_EQ(test, rsim_ah_attr_check(roce, &ah), -EINVAL);
	/* no multicast (no groups on a RoCE-mode port) */
	rsim_roce_av(&ah);
	ah.grh.dgid.raw[0] = 0xff;
	KUNIT_EXPECT_EQ(test, rsim_ah_attr_check(roce, &ah), -EINVAL);
	/* the SL is the Ethernet priority: 0..7 */
	rsim_roce_av(&ah);
	rdma_ah_set_sl(&ah, 7);
	KUNIT_EXPECT_EQ(test, rsim_ah_attr_check(roce, &ah), 0);
	rdma_ah_set_sl(&ah, 8);
	KUNIT_EXPECT_EQ(test, rsim_ah_attr_check(roce, &ah), -EINVAL);
	/* port 1 only */
	rsim_roce_av(&ah);
	rdma_ah_set_port_num(&ah, 2);
	KUNIT_EXPECT_EQ(test, rsim_ah_attr_check(roce, &ah), -EINVAL);
}

/* a netdev unregistered while a RoCE-mode device is made over it */
struct roce_race {
	struct net_device *ndev;
	int stage;
	struct completion gone;
	ktime_t t0;
	bool started;
};

static struct roce_race *roce_race;

static netdev_tx_t roce_race_xmit(struct sk_buff *skb, struct net_device *dev)
{
	dev_kfree_skb(skb);
	return NETDEV_TX_OK;
}

static const struct net_device_ops roce_race_ops = {
	.ndo_start_xmit = roce_race_xmit,
};

static int roce_race_unregister(void *arg)
{
	struct roce_race *r = arg;

	unregister_netdev(r->ndev);
	complete(&r->gone);
	return 0;
}

/*
 * At the case's stage of the probe: the netdev's unregistration starts
 * in a thread, and the probe goes on once its NETDEV_UNREGISTER has been
 * sent (the thread has let RTNL go, and waits for the netdev's holders)
 */
static void roce_race_hook(struct rsim_dev *rsim, int stage)
{
	struct roce_race *r = roce_race;
	int i;

	if (stage != r->stage)
		return;
	rsim_roce_set_probe_hook(NULL);
	if (IS_ERR(kthread_run(roce_race_unregister, r, "roce_race")))
		return;
	r->started = true;
	r->t0 = ktime_get();
	for (i = 0; i < 2000 && READ_ONCE(r->ndev->reg_state) ==
				NETREG_REGISTERED; i++)
		usleep_range(500, 1000);
	rtnl_lock();
	rtnl_unlock();
	/*
	 * Registered: the notifier queued the device's unregistration; let
	 * it run to its end (dealloc_driver marks the device dead) before
	 * the probe unregisters the device too. The probe holds the memory
	 * (issue 41's CI: without that hold, the queued unregistration freed
	 * the device first, once in a while, and the probe's own
	 * unregistration took a reference on freed memory).
	 */
	if (stage != RSIM_ROCE_STAGE_REGISTERED)
		return;
	for (i = 0; i < 2000 && !READ_ONCE(rsim->dead); i++)
		usleep_range(500, 1000);
}

static void roce_race_hook_clear(void *unused)
{
	rsim_roce_set_probe_hook(NULL);
}

static const int roce_race_stages[] = {
	RSIM_ROCE_STAGE_BIND, RSIM_ROCE_STAGE_BOUND, RSIM_ROCE_STAGE_REGISTERED,
};

static void roce_race_desc(const int *stage, char *desc)
{
	static const char * const names[] = { "bind", "bound", "registered" };

	strscpy(desc, names[*stage], KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(roce_race, roce_race_stages, roce_race_desc);

/*
 * Issue 40, item 6: "rdma link add" raced the netdev's unregistration:
 * a NETDEV_UNREGISTER sent before the device was on the notifier's list
 * was missed: the device was made over a netdev that was going away
 * (ib_device_set_netdev() on an unregistering netdev, against its
 * contract), and kept its hold on it until unregister_netdevice()'s
 * rebroadcast of NETDEV_UNREGISTER, a second later, found it. Here the
 * netdev is unregistered before the bind, between the bind and the
 * registration, and between the registration and the watch: each time
 * the creation fails with ENODEV and the netdev's unregistration ends
 * (the time it took is printed).
 */
static void rsim_roce_test_netdev_gone_during_add(struct kunit *test)
{
	struct roce_race *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	struct rsim_dev *rsim;
	bool ended;
	int err;

	KUNIT_ASSERT_NOT_NULL(test, r);
	r->stage = *(const int *)test->param_value;
	init_completion(&r->gone);
	r->ndev = alloc_netdev(0, "rsimk%d", NET_NAME_ENUM, ether_setup);
	KUNIT_ASSERT_NOT_NULL(test, r->ndev);
	r->ndev->netdev_ops = &roce_race_ops;
	eth_hw_addr_random(r->ndev);
	err = register_netdev(r->ndev);
	if (err)
		free_netdev(r->ndev);
	KUNIT_ASSERT_EQ(test, err, 0);
	roce_race = r;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							roce_race_hook_clear,
							NULL), 0);
	rsim_roce_set_probe_hook(roce_race_hook);
	rsim = rsim_dev_new_roce("rsimk_rdmasim", r->ndev);
	rsim_roce_set_probe_hook(NULL);
	KUNIT_EXPECT_TRUE(test, r->started);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(rsim), -ENODEV);
	if (!r->started) {
		unregister_netdev(r->ndev);
		free_netdev(r->ndev);
		return;
	}
	ended = wait_for_completion_timeout(&r->gone, 20 * HZ);
	KUNIT_ASSERT_TRUE(test, ended);
	kunit_info(test, "netdev unregistered in %lld ms",
		   ktime_ms_delta(ktime_get(), r->t0));
	free_netdev(r->ndev);
}

static struct kunit_case rsim_roce_test_cases[] = {
	KUNIT_CASE(rsim_roce_test_ipv6_header),
	KUNIT_CASE(rsim_roce_test_ipv4_header),
	KUNIT_CASE(rsim_roce_test_mixed_families_refused),
	KUNIT_CASE(rsim_roce_test_mtu_from_netdev),
	KUNIT_CASE(rsim_roce_test_address_vectors),
	KUNIT_CASE_PARAM(rsim_roce_test_netdev_gone_during_add,
			 roce_race_gen_params),
	{}
};

static struct kunit_suite rsim_roce_test_suite = {
	.name = "rdmasim_roce",
	.suite_init = rsim_kunit_suite_init,
	.test_cases = rsim_roce_test_cases,
};

kunit_test_suite(rsim_roce_test_suite);
