// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdma_conformance.ko: the device-agnostic conformance suites.
 *
 *   insmod rdma_conformance.ko [target=all|<dev>[,<dev>...]] [peer=<dev>]
 *				[suites=mr,map,frwr,limits|bench]
 *				[hazards=<dev>[,<dev>...]|all]
 *				[limit_budget=<objects>] [print_warns=1]
 *				[bench_iters=<cycles>]
 *
 * The module registers an ib_client, so the RDMA core tells it about
 * every kernel-verbs device, and runs four suites per chosen device from
 * module_init: rdma_conformance_{mr,map,frwr,limits}.<device>. The suites
 * are built at run time (KUnit suites are normally static) and run through
 * the same entry point the KUnit executor uses, so the KTAP they print is
 * ordinary KTAP. They stay in debugfs (kunit/<suite>/results) until the
 * module is unloaded.
 *
 * peer=<dev> puts the requester of every connection on <dev>, for each
 * InfiniBand target other than <dev> itself: the responder, its keys and
 * its memory stay on the target, which is reached through the subnet by
 * LID (rdmasim devices form one subnet; so do the ports of real HCAs on
 * one fabric). Only frwr's and bench's cases connect QPs.
 *
 * A device that goes away while its cases run is waited for: its client
 * remove() blocks until the running case has released everything, and
 * later cases on it are skipped.
 */

#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/inetdevice.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <net/addrconf.h>
#include <rdma/ib_cache.h>

#include "conformance.h"

static char *target = "all";
module_param(target, charp, 0444);
MODULE_PARM_DESC(target,
		 "devices to check: all, or a comma-separated list of names");

static char *hazards = "";
module_param(hazards, charp, 0444);
MODULE_PARM_DESC(hazards,
		 "devices on which to run the checks that hang some devices (see Documentation/conformance.rst): all, or a list");

static char *peer = "";
module_param(peer, charp, 0444);
MODULE_PARM_DESC(peer,
		 "a device for the requesters of the connections: InfiniBand targets other than it are reached through the subnet");

static bool print_warns;
module_param(print_warns, bool, 0444);
MODULE_PARM_DESC(print_warns,
		 "let WARNs in the verbs print backtraces instead of counting them (cases then do not fail on them)");

unsigned int rcf_limit_budget = 20000;
module_param_named(limit_budget, rcf_limit_budget, uint, 0444);
MODULE_PARM_DESC(limit_budget,
		 "most objects one limit check may allocate; limits further away are skipped");

unsigned int rcf_bench_iters = 10000;
module_param_named(bench_iters, rcf_bench_iters, uint, 0444);
MODULE_PARM_DESC(bench_iters,
		 "cycles the bench suite times (at most three seconds' worth)");

static char *suites = "mr,map,frwr,limits,odp";
module_param(suites, charp, 0444);
MODULE_PARM_DESC(suites,
		 "suites to run: any of mr,map,frwr,limits,odp (the rules) and bench (figures)");

#define RCF_SUITE_PREFIX	"rdma_conformance_"

/* the suite templates, in the order they run on each device */
static struct kunit_suite * const rcf_templates[] = {
	&rcf_mr_suite,
	&rcf_map_suite,
	&rcf_frwr_suite,
	&rcf_limits_suite,
	&rcf_odp_suite,
	&rcf_bench_suite,
};

/*
 * targets (and the peer, which may be one), in the order the RDMA core
 * reported the devices
 */
static LIST_HEAD(rcf_targets);
static DEFINE_MUTEX(rcf_targets_lock);	/* protects rcf_targets, rcf_peer */

/* the device named by peer=, once the core reported it */
static struct rcf_target *rcf_peer;

/* every suite of every target, in run order, for the KUnit entry points */
static struct kunit_suite **rcf_all;
static int rcf_nr_suites;

/*
 * The device the running suite belongs to. KUnit runs one suite at a time
 * (under its run lock), and a case cannot see its suite, so suite_init
 * publishes it here.
 */
static struct rcf_target *rcf_current;

/**
 * struct rcf_suite - one device's copy of a suite template
 * @suite: the KUnit suite (its name carries the device)
 * @t: the device
 */
struct rcf_suite {
	struct kunit_suite suite;
	struct rcf_target *t;
};

/**
 * struct rcf_case_ctx - per-case state kept by the fixture
 * @w: the WARN suppression handle, or NULL
 */
struct rcf_case_ctx {
	struct kunit_suppressed_warning *w;
};

/* the device of the running case */
struct rcf_target *rcf_target(struct kunit *test)
{
	return rcf_current;
}

/* its name, for messages */
const char *rcf_target_name(void)
{
	return rcf_current ? rcf_current->name : "?";
}

static bool rcf_name_listed(const char *list, const char *name)
{
	size_t len = strlen(name);
	const char *p = list;

	if (!strcmp(list, "all"))
		return true;
	while ((p = strstr(p, name))) {
		bool starts = p == list || p[-1] == ',';
		bool ends = p[len] == '\0' || p[len] == ',';

		if (starts && ends)
			return true;
		p += len;
	}
	return false;
}

static void rcf_target_put(void *arg)
{
	struct rcf_target *t = arg;

	spin_lock(&t->lock);
	if (!--t->users)
		wake_up_all(&t->idle);
	spin_unlock(&t->lock);
}

/* a case's hold on @t: no unregistration until the case has ended */
static void rcf_target_hold(struct kunit *test, struct rcf_target *t)
{
	bool gone;

	spin_lock(&t->lock);
	gone = t->gone;
	if (!gone)
		t->users++;
	spin_unlock(&t->lock);
	if (gone)
		kunit_skip(test, "%s was unregistered", t->name);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, rcf_target_put, t));
}

/*
 * .init of every case: the device (and its peer) is still there and stays
 * until the case has released what it made; WARNs in this task are
 * counted, not printed (a verb that WARNs on its input breaks the rule of
 * every case).
 */
int rcf_case_init(struct kunit *test)
{
	struct rcf_target *t = rcf_current;
	struct rcf_case_ctx *ctx;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	test->priv = ctx;

	rcf_target_hold(test, t);
	if (t->peer)
		rcf_target_hold(test, t->peer);
	if (!print_warns)
		ctx->w = rsim_kunit_warn_begin(test);
	return 0;
}

void rcf_case_exit(struct kunit *test)
{
	struct rcf_case_ctx *ctx = test->priv;
	int warns = ctx ? rsim_kunit_warn_count(ctx->w) : 0;

	if (warns)
		RCF_FAIL(test,
			 "%d WARN(s) in the verbs this case called (backtraces suppressed); bad input must get an errno, not a WARN",
			 warns);
}

/* InfiniBand: the port must be ACTIVE with a LID */
static void rcf_prepare_ib(struct rcf_target *t, struct ib_port_attr *pa)
{
	if (pa->state != IB_PORT_ACTIVE) {
		t->no_conn = "the port is not ACTIVE";
		return;
	}
	t->lid = pa->lid;
	t->transport = RCF_TR_IB;
}

/*
 * RoCE: one of the port's own GIDs, as source and destination; RoCE v2
 * and IPv6 link-local preferred (they need no routing).
 */
static void rcf_prepare_roce(struct rcf_target *t, struct ib_port_attr *pa)
{
	const struct ib_gid_attr *best = NULL;
	struct net_device *ndev;
	int best_score = -1;
	int i;

	for (i = 0; i < pa->gid_tbl_len; i++) {
		const struct ib_gid_attr *ga = rdma_get_gid_attr(t->dev,
								 t->port, i);
		int score;

		if (IS_ERR(ga))
			continue;
		score = (ga->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP) * 2 +
			rdma_link_local_addr((struct in6_addr *)ga->gid.raw);
		if (score > best_score) {
			if (best)
				rdma_put_gid_attr(best);
			best = ga;
			best_score = score;
		} else {
			rdma_put_gid_attr(ga);
		}
	}
	if (!best) {
		t->no_conn = "the port has no GID";
		return;
	}
	t->sgid_index = best->index;
	t->gid = best->gid;
	/*
	 * The core resolves the destination MAC only for user QPs: a kernel
	 * consumer passes it. The destination is this GID's own netdev.
	 */
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(best);
	if (!IS_ERR(ndev))
		ether_addr_copy(t->dmac, ndev->dev_addr);
	rcu_read_unlock();
	rdma_put_gid_attr(best);
	if (IS_ERR(ndev)) {
		t->no_conn = "the GID has no netdev";
		return;
	}
	t->transport = RCF_TR_ROCE;
}

/* an IPv6 link-local address of @ndev that finished DAD */
static bool rcf_ipv6_lladdr(struct net_device *ndev, struct in6_addr *addr)
{
	struct inet6_dev *idev = in6_dev_get(ndev);
	struct inet6_ifaddr *ifp;
	bool found = false;

	if (!idev)
		return false;
	read_lock_bh(&idev->lock);
	list_for_each_entry(ifp, &idev->addr_list, if_list) {
		if (ifp->scope == IFA_LINK &&
		    !(ifp->flags & (IFA_F_TENTATIVE | IFA_F_DADFAILED))) {
			*addr = ifp->addr;
			found = true;
			break;
		}
	}
	read_unlock_bh(&idev->lock);
	in6_dev_put(idev);
	return found;
}

/*
 * iWARP: the port's netdev must have an address to listen on and connect
 * to: IPv4 first, else an IPv6 link-local one that finished DAD (waited
 * for up to five seconds).
 */
static void rcf_prepare_iwarp(struct rcf_target *t)
{
	struct net_device *ndev = ib_device_get_netdev(t->dev, t->port);
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&t->cm_addr;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&t->cm_addr;
	struct in_device *in_dev;
	int tries;

	if (!ndev) {
		t->no_conn = "the port has no netdev";
		return;
	}
	rcu_read_lock();
	in_dev = __in_dev_get_rcu(ndev);
	if (in_dev && in_dev->ifa_list) {
		s4->sin_family = AF_INET;
		s4->sin_addr.s_addr =
			rcu_dereference(in_dev->ifa_list)->ifa_local;
	}
	rcu_read_unlock();
	for (tries = 0; !s4->sin_family && tries < 50; tries++) {
		if (rcf_ipv6_lladdr(ndev, &s6->sin6_addr)) {
			s6->sin6_family = AF_INET6;
			s6->sin6_scope_id = ndev->ifindex;
			break;
		}
		msleep(100);
	}
	if (!s4->sin_family)
		t->no_conn = "the port's netdev has no IPv4 or IPv6 link-local address";
	else
		t->transport = RCF_TR_IWARP;
	dev_put(ndev);
}

/* what the cases need to know about a device, found once */
static void rcf_target_prepare(struct rcf_target *t)
{
	struct ib_port_attr pa;
	int err;

	t->port = rdma_start_port(t->dev);
	t->attr = t->dev->attrs;
	t->no_conn = "the transport is neither InfiniBand, RoCE nor iWARP";
	err = ib_query_port(t->dev, t->port, &pa);
	if (err) {
		t->no_conn = "ib_query_port() failed";
		return;
	}
	t->mtu = min(pa.active_mtu, IB_MTU_4096);
	if (rdma_protocol_ib(t->dev, t->port))
		rcf_prepare_ib(t, &pa);
	else if (rdma_protocol_roce(t->dev, t->port))
		rcf_prepare_roce(t, &pa);
	else if (rdma_protocol_iwarp(t->dev, t->port))
		rcf_prepare_iwarp(t);
}

/*
 * The peer's QPs are @t's requesters if both are InfiniBand ports with a
 * LID; otherwise (RoCE, iWARP, a port down) @t connects to itself.
 */
static void rcf_pair(struct rcf_target *t)
{
	if (rcf_peer && rcf_peer != t && t->transport == RCF_TR_IB &&
	    rcf_peer->transport == RCF_TR_IB)
		t->peer = rcf_peer;
}

static const char *rcf_transport_name(enum rcf_transport tr)
{
	switch (tr) {
	case RCF_TR_IB:
		return "InfiniBand";
	case RCF_TR_ROCE:
		return "RoCE";
	case RCF_TR_IWARP:
		return "iWARP";
	default:
		return "none";
	}
}

/*
 * One line per suite about its device, in the suite's log (so that it is
 * also in debugfs/kunit/<suite>/results): what the table and a reader
 * need to know.
 */
static void rcf_target_report(struct kunit_suite *suite, struct rcf_target *t)
{
	const char *tr = rcf_transport_name(t->transport);

#define RCF_REPORT(fmt, ...)						\
	kunit_log(KERN_INFO, suite, KUNIT_SUBTEST_INDENT		\
		  "# rdma_conformance: target %s: driver %s, port %u, " fmt, \
		  t->name, t->driver, t->port, ##__VA_ARGS__)
	switch (t->transport) {
	case RCF_TR_IB:
		if (t->peer)
			RCF_REPORT("%s, LID %u, requesters on %s (LID %u) across the subnet",
				   tr, t->lid, t->peer->name, t->peer->lid);
		else
			RCF_REPORT("%s, LID %u", tr, t->lid);
		break;
	case RCF_TR_ROCE:
		RCF_REPORT("%s, GID %pI6 (index %u)", tr, t->gid.raw,
			   t->sgid_index);
		break;
	case RCF_TR_IWARP:
		RCF_REPORT("%s, rdma_cm at %pISc", tr, &t->cm_addr);
		break;
	default:
		RCF_REPORT("no RC connection: %s", t->no_conn);
		break;
	}
#undef RCF_REPORT
}

int rcf_suite_init(struct kunit_suite *suite)
{
	rcf_current = container_of(suite, struct rcf_suite, suite)->t;
	rcf_target_report(suite, rcf_current);
	return 0;
}

void rcf_suite_exit(struct kunit_suite *suite)
{
	rcf_current = NULL;
}

static int rcf_add_one(struct ib_device *dev);
static void rcf_remove_one(struct ib_device *dev, void *client_data);

static struct ib_client rcf_client = {
	.name = "rdma_conformance",
	.add = rcf_add_one,
	.remove = rcf_remove_one,
};

/*
 * a device the core reports; it becomes a target if the list names it,
 * and the peer if peer= does
 */
static int rcf_add_one(struct ib_device *dev)
{
	bool is_target = rcf_name_listed(target, dev_name(&dev->dev));
	bool is_peer = !strcmp(peer, dev_name(&dev->dev));
	struct rcf_target *t;

	if (!is_target && !is_peer)
		return -EOPNOTSUPP;
	t = rsim_kzalloc_obj(*t, GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	t->dev = dev;
	strscpy(t->name, dev_name(&dev->dev), sizeof(t->name));
	t->driver = dev->ops.owner ? module_name(dev->ops.owner) : "builtin";
	t->hazards = rcf_name_listed(hazards, t->name);
	t->is_target = is_target;
	spin_lock_init(&t->lock);
	init_waitqueue_head(&t->idle);
	ib_set_client_data(dev, &rcf_client, t);
	mutex_lock(&rcf_targets_lock);
	list_add_tail(&t->node, &rcf_targets);
	if (is_peer)
		rcf_peer = t;
	mutex_unlock(&rcf_targets_lock);
	return 0;
}

/*
 * The device is being unregistered: no new case starts on it, and the
 * running one finishes (every case is bounded by RCF_TIMEOUT_MS waits)
 * and releases its objects before the core goes on. The target itself
 * lives until the module goes: its suites name it.
 */
static void rcf_remove_one(struct ib_device *dev, void *client_data)
{
	struct rcf_target *t = client_data;

	spin_lock(&t->lock);
	t->gone = true;
	spin_unlock(&t->lock);
	wait_event(t->idle, !READ_ONCE(t->users));
}

static void rcf_free_suites(struct kunit_suite **suites)
{
	int i;

	for (i = 0; suites && suites[i]; i++) {
		kfree(suites[i]->test_cases);
		kfree(container_of(suites[i], struct rcf_suite, suite));
	}
	kfree(suites);
}

/* a template that suites= names */
static bool rcf_template_chosen(const struct kunit_suite *tmpl)
{
	return rcf_name_listed(suites, tmpl->name + strlen(RCF_SUITE_PREFIX));
}

/*
 * One copy of every chosen template for @t, named <template>.<device>.
 * Return: how many, or a negative errno.
 */
static int rcf_build_suites(struct rcf_target *t)
{
	struct kunit_suite **out;
	int i, n = 0;

	out = kcalloc(ARRAY_SIZE(rcf_templates) + 1, sizeof(*out),
		      GFP_KERNEL);
	if (!out)
		return -ENOMEM;
	for (i = 0; i < ARRAY_SIZE(rcf_templates); i++) {
		const struct kunit_suite *tmpl = rcf_templates[i];
		struct kunit_case *c;
		struct rcf_suite *s;
		int nc = 0;

		if (!rcf_template_chosen(tmpl))
			continue;

		s = rsim_kzalloc_obj(*s, GFP_KERNEL);
		if (!s)
			goto err;
		for (c = tmpl->test_cases; c->run_case; c++)
			nc++;
		s->suite.test_cases = kmemdup(tmpl->test_cases,
					      (nc + 1) * sizeof(*c),
					      GFP_KERNEL);
		if (!s->suite.test_cases) {
			kfree(s);
			goto err;
		}
		s->t = t;
		/* KUnit declares the name const: suites are normally static */
		snprintf((char *)s->suite.name, sizeof(s->suite.name), "%s.%s",
			 tmpl->name, t->name);
		s->suite.suite_init = rcf_suite_init;
		s->suite.suite_exit = rcf_suite_exit;
		s->suite.init = rcf_case_init;
		s->suite.exit = rcf_case_exit;
		out[n++] = &s->suite;
	}
	t->suites = out;
	return n;

err:
	rcf_free_suites(out);
	return -ENOMEM;
}

static void rcf_free_targets(void)
{
	struct rcf_target *t, *tmp;

	list_for_each_entry_safe(t, tmp, &rcf_targets, node) {
		list_del(&t->node);
		rcf_free_suites(t->suites);
		kfree(t);
	}
}

static int __init rcf_init(void)
{
	struct rcf_target *t;
	int err, i, n = 0;

	err = ib_register_client(&rcf_client);
	if (err)
		return err;

	mutex_lock(&rcf_targets_lock);
	if (*peer && !rcf_peer) {
		pr_err("rdma_conformance: no kernel-verbs device named peer=%s\n",
		       peer);
		err = -ENODEV;
		goto err_unlock;
	}
	list_for_each_entry(t, &rcf_targets, node)
		rcf_target_prepare(t);
	list_for_each_entry(t, &rcf_targets, node) {
		if (!t->is_target)
			continue;
		rcf_pair(t);
		err = rcf_build_suites(t);
		if (err < 0)
			goto err_unlock;
		n += err;
	}
	if (!n) {
		pr_err("rdma_conformance: no kernel-verbs device matches target=%s, or no suite suites=%s\n",
		       target, suites);
		err = -ENODEV;
		goto err_unlock;
	}
	rcf_all = kcalloc(n, sizeof(*rcf_all), GFP_KERNEL);
	if (!rcf_all) {
		err = -ENOMEM;
		goto err_unlock;
	}
	list_for_each_entry(t, &rcf_targets, node)
		for (i = 0; t->suites && t->suites[i]; i++)
			rcf_all[rcf_nr_suites++] = t->suites[i];
	mutex_unlock(&rcf_targets_lock);

	/* the header the KUnit executor prints for the suites it runs */
	pr_info("KTAP version 1\n");
	pr_info("1..%d\n", rcf_nr_suites);
	rsim_kunit_run_suites(rcf_all, rcf_nr_suites);
	return 0;

err_unlock:
	mutex_unlock(&rcf_targets_lock);
	ib_unregister_client(&rcf_client);
	rcf_free_targets();
	return err;
}

static void __exit rcf_exit(void)
{
	__kunit_test_suites_exit(rcf_all, rcf_nr_suites);
	ib_unregister_client(&rcf_client);
	kfree(rcf_all);
	rcf_free_targets();
}

module_init(rcf_init);
module_exit(rcf_exit);

MODULE_DESCRIPTION("RDMA device conformance suites (KUnit): allocation, mapping, fast registration, remote access and on-demand paging rules for any kernel-verbs device");
MODULE_AUTHOR("rdmasim developers");
MODULE_LICENSE("GPL");
/* mm_alloc() and arch_pick_mmap_layout(), for odp.c's user memory */
RSIM_IMPORT_KUNIT_NS();
MODULE_VERSION(RSIM_VERSION);
