// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: the subnet administrator's MAD agent, its fault injection and
 * its debugfs.
 *
 * Every InfiniBand-mode rdmasim port registers an agent with the MAD layer
 * for the SA class (version 2: Get, Set, GetTable, Delete) on QP1, with
 * RMPP, through an ib_client of the module's (the MAD layer's own client
 * has set the port up before add() runs, and remove() runs before it goes).
 * Only the master SM's port answers, as a standby SM's SA does not serve:
 * the others drop what reaches them. The core's SA client (sa_query.c,
 * multicast.c), libibumad's tools and anything else addresses the SA at
 * the port's SM LID and reaches the master unchanged. A GetTable is
 * answered with RMPP (ib_create_send_mad() with rmpp_active: the MAD layer
 * segments it and waits for the requester's ACKs); every other answer is
 * one MAD. Methods the agent has not registered, and class versions other
 * than 2, get the MAD layer's own "unsupported" answer.
 *
 * A device made with new_device's sa=0 registers no agent: the SA
 * class stays free for another SM's SA on QP1 (opensm over umad), which
 * then owns the subnet's records. So does switching the built-in SM off
 * at run time (rdmasim/fabric/sm 0, rsim_sa_serve()). A port where the
 * class is taken already has no agent either.
 *
 * A requester gets at most RSIM_SA_RMPP_PER_LID GetTable answers in
 * flight at once (sent and not yet ended), and the SA at most
 * RSIM_SA_RMPP_MAX: past either, a GetTable is answered ERR_NO_RESOURCES
 * in one MAD, before its records are gathered. Each such answer holds up
 * to about 229 KiB for up to (retries + 1) * timeout, 4 s, if its
 * requester never ACKs; one ACKed to the end ends a timeout later (the
 * MAD layer completes an RMPP send with a timeout only when no response
 * comes in it), so the timeout is short: a requester asking one table
 * after another holds few at once. The LID is what a MAD says of its
 * requester (every process on a port shares it).
 *
 * Faults (debugfs rdmasim/sa/): three injection points, each with
 * fail_nth and, with CONFIG_FAULT_INJECTION, the probabilistic layer:
 * "drop" answers nothing, "status" answers with the MAD status in
 * error_status (no records), "delay" holds the answer back for delay_ms.
 * attr limits them to one attribute ID (0: every request). Each request
 * the master receives checks drop, then status, then delay.
 */

#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <kunit/visibility.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_sa.h>

#include "rdmasim.h"

/*
 * how long an RMPP answer waits for each window's ACK, and how often it
 * resends the window (the count starts again at each ACK that moves on):
 * a silent requester holds an answer 40 * 100 ms, 4 s. The timeout is
 * also how long an answer ACKed to the end stays in flight: the MAD layer
 * then waits that long for a response before it completes the send.
 */
#define RSIM_SA_RMPP_TIMEOUT_MS	100
#define RSIM_SA_RMPP_RETRIES	39
/* answers the delay fault holds back at once, per port */
#define RSIM_SA_HELD_MAX	256
/*
 * GetTable answers (RMPP: each holds its records, up to about 229 KiB,
 * until the requester ACKs the last segment or the retries run out, about
 * 4 s) in flight at once: per requesting LID, and in all. A requester over
 * its share gets ERR_NO_RESOURCES (IBA 15.2.1.1) and may ask again.
 */
#define RSIM_SA_RMPP_PER_LID	16
#define RSIM_SA_RMPP_MAX	64
/* buf->context[0] of an answer counted in flight: its LID, tagged */
#define RSIM_SA_RMPP_TAG	BIT(16)

enum rsim_sa_fault_site {
	RSIM_SA_FAULT_DROP,
	RSIM_SA_FAULT_STATUS,
	RSIM_SA_FAULT_DELAY,
	RSIM_SA_FAULT_NR,
};

static const char * const rsim_sa_fault_names[RSIM_SA_FAULT_NR] = {
	[RSIM_SA_FAULT_DROP] = "drop",
	[RSIM_SA_FAULT_STATUS] = "status",
	[RSIM_SA_FAULT_DELAY] = "delay",
};

static struct rsim_fault_point rsim_sa_faults[RSIM_SA_FAULT_NR];
static struct rsim_fault_attr rsim_sa_fault_attrs[RSIM_SA_FAULT_NR];
/* the faults' settings (debugfs; read once per request) */
static u32 rsim_sa_delay_ms = 1000;
static u16 rsim_sa_error_status = RSIM_SA_ERR_NO_RESOURCES;
static u16 rsim_sa_fault_attr_id;

/**
 * struct rsim_sa_stats - what the SA did (debugfs rdmasim/sa/stats)
 * @requests: requests the agents received
 * @standby: of those, dropped because the port's SM was not the master
 * @answered: answers posted (held-back ones when they are posted)
 * @errors: answers with a non-zero status
 * @rmpp: GetTable answers sent with RMPP
 * @records: records in the answers
 * @dropped: requests the drop fault dropped
 * @failed: requests the status fault answered
 * @delayed: answers the delay fault held back
 * @lost: answers that could not be made or posted
 * @rmpp_refused: GetTables answered ERR_NO_RESOURCES: their requester, or
 *	the SA, had RSIM_SA_RMPP_PER_LID (RSIM_SA_RMPP_MAX) answers in flight
 */
struct rsim_sa_stats {
	atomic64_t requests;
	atomic64_t standby;
	atomic64_t answered;
	atomic64_t errors;
	atomic64_t rmpp;
	atomic64_t records;
	atomic64_t dropped;
	atomic64_t failed;
	atomic64_t delayed;
	atomic64_t lost;
	atomic64_t rmpp_refused;
};

static struct rsim_sa_stats rsim_sa_stats;

/*
 * RMPP answers in flight: by requesting LID (value entries, a count) in
 * rsim_sa_rmpp_lids, whose xa_lock also protects rsim_sa_rmpp_total and
 * rsim_sa_rmpp_peak (process context only: the MAD layer's work)
 */
static DEFINE_XARRAY(rsim_sa_rmpp_lids);
static unsigned int rsim_sa_rmpp_total;
static unsigned int rsim_sa_rmpp_peak;

/* one more RMPP answer in flight for @lid, if within the limits */
static bool rsim_sa_rmpp_take(u16 lid)
{
	unsigned long n;
	bool ok = false;
	void *old;

	xa_lock(&rsim_sa_rmpp_lids);
	old = xa_load(&rsim_sa_rmpp_lids, lid);
	n = old ? xa_to_value(old) : 0;
	if (rsim_sa_rmpp_total < RSIM_SA_RMPP_MAX &&
	    n < RSIM_SA_RMPP_PER_LID &&
	    !xa_is_err(__xa_store(&rsim_sa_rmpp_lids, lid, xa_mk_value(n + 1),
				  GFP_NOWAIT))) {
		rsim_sa_rmpp_total++;
		rsim_sa_rmpp_peak = max(rsim_sa_rmpp_peak, rsim_sa_rmpp_total);
		ok = true;
	}
	xa_unlock(&rsim_sa_rmpp_lids);
	return ok;
}

/* an RMPP answer for @lid is no longer in flight */
static void rsim_sa_rmpp_put(u16 lid)
{
	unsigned long n;

	xa_lock(&rsim_sa_rmpp_lids);
	n = xa_to_value(xa_load(&rsim_sa_rmpp_lids, lid));
	if (n > 1)	/* an entry there already: nothing to allocate */
		__xa_store(&rsim_sa_rmpp_lids, lid, xa_mk_value(n - 1),
			   GFP_NOWAIT);
	else
		__xa_erase(&rsim_sa_rmpp_lids, lid);
	rsim_sa_rmpp_total--;
	xa_unlock(&rsim_sa_rmpp_lids);
}

/* an answer the delay fault holds back */
struct rsim_sa_held {
	struct list_head node;
	struct ib_mad_send_buf *buf;
	unsigned long due;
};

static void rsim_sa_free_buf(struct ib_mad_send_buf *buf)
{
	uintptr_t tag = (uintptr_t)buf->context[0];

	if (tag & RSIM_SA_RMPP_TAG)
		rsim_sa_rmpp_put(tag & 0xffff);
	rdma_destroy_ah(buf->ah, RDMA_DESTROY_AH_SLEEPABLE);
	ib_free_send_mad(buf);
}

static void rsim_sa_post(struct ib_mad_send_buf *buf)
{
	if (ib_post_send_mad(buf, NULL)) {
		atomic64_inc(&rsim_sa_stats.lost);
		rsim_sa_free_buf(buf);
		return;
	}
	atomic64_inc(&rsim_sa_stats.answered);
}

/* the answer's MAD, an AH back to the requester; NULL if none can be made */
static struct ib_mad_send_buf *rsim_sa_reply(struct ib_mad_agent *agent,
					     struct ib_mad_recv_wc *wc,
					     const struct rsim_sa_answer *a)
{
	const struct ib_sa_mad *req = (const struct ib_sa_mad *)wc->recv_buf.mad;
	bool rmpp = req->mad_hdr.method == IB_SA_METHOD_GET_TABLE && !a->status;
	size_t len = a->count * a->attr_offset * 8;
	struct ib_mad_send_buf *buf;
	struct ib_sa_mad *resp;
	struct ib_ah *ah;
	size_t off, n;
	int seg;

	ah = ib_create_ah_from_wc(agent->qp->pd, wc->wc, wc->recv_buf.grh,
				  agent->port_num);
	if (IS_ERR(ah))
		return NULL;
	buf = ib_create_send_mad(agent, wc->wc->src_qp, wc->wc->pkey_index,
				 rmpp, IB_MGMT_SA_HDR,
				 rmpp ? len : IB_MGMT_SA_DATA, GFP_KERNEL,
				 IB_MGMT_BASE_VERSION);
	if (IS_ERR(buf)) {
		rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
		return NULL;
	}
	buf->ah = ah;
	resp = buf->mad;
	resp->mad_hdr = req->mad_hdr;
	/* a Set is answered by GetResp (IBA 13.4.5), as the MAD layer does */
	if (req->mad_hdr.method == IB_MGMT_METHOD_SET)
		resp->mad_hdr.method = IB_MGMT_METHOD_GET;
	resp->mad_hdr.method |= IB_MGMT_METHOD_RESP;
	resp->mad_hdr.status = cpu_to_be16(a->status);
	resp->sa_hdr.comp_mask = req->sa_hdr.comp_mask;
	resp->sa_hdr.attr_offset = cpu_to_be16(a->attr_offset);
	if (!rmpp) {
		/* one record, or the request's own for an error (as opensm) */
		if (a->status)
			memcpy(resp->data, req->data, IB_MGMT_SA_DATA);
		else if (a->count)
			memcpy(resp->data, a->table,
			       min_t(size_t, len, IB_MGMT_SA_DATA));
		return buf;
	}
	buf->timeout_ms = RSIM_SA_RMPP_TIMEOUT_MS;
	buf->retries = RSIM_SA_RMPP_RETRIES;
	for (seg = 1, off = 0; off < len; seg++, off += n) {
		n = min_t(size_t, len - off, buf->seg_size);
		memcpy(ib_get_rmpp_segment(buf, seg), a->table + off, n);
	}
	atomic64_inc(&rsim_sa_stats.rmpp);
	return buf;
}

static void rsim_sa_delay_work(struct work_struct *work)
{
	struct rsim_sa_port *sa = container_of(to_delayed_work(work),
					       struct rsim_sa_port, delay_work);
	struct rsim_sa_held *h;

	for (;;) {
		spin_lock_bh(&sa->lock);
		h = list_first_entry_or_null(&sa->delayed, struct rsim_sa_held,
					     node);
		if (h && time_before(jiffies, h->due)) {
			if (!sa->stopping)
				schedule_delayed_work(&sa->delay_work,
						      h->due - jiffies);
			h = NULL;
		} else if (h) {
			list_del(&h->node);
			sa->nr_delayed--;
		}
		spin_unlock_bh(&sa->lock);
		if (!h)
			return;
		rsim_sa_post(h->buf);
		kfree(h);
	}
}

/*
 * hold an answer back for @ms; false if the agent is going or holds
 * RSIM_SA_HELD_MAX already (requests keep coming while the fault is on:
 * what waits stays bounded)
 */
static bool rsim_sa_hold(struct rsim_sa_port *sa, struct ib_mad_send_buf *buf,
			 u32 ms)
{
	struct rsim_sa_held *h = rsim_kzalloc_obj(*h, GFP_KERNEL);
	bool first;

	if (!h)
		return false;
	h->buf = buf;
	h->due = jiffies + msecs_to_jiffies(ms);
	spin_lock_bh(&sa->lock);
	if (sa->stopping || sa->nr_delayed >= RSIM_SA_HELD_MAX) {
		spin_unlock_bh(&sa->lock);
		kfree(h);
		return false;
	}
	first = list_empty(&sa->delayed);
	sa->nr_delayed++;
	list_add_tail(&h->node, &sa->delayed);
	if (first)
		schedule_delayed_work(&sa->delay_work, msecs_to_jiffies(ms));
	spin_unlock_bh(&sa->lock);
	return true;
}

static bool rsim_sa_fault(enum rsim_sa_fault_site site, u16 attr_id)
{
	u16 only = READ_ONCE(rsim_sa_fault_attr_id);

	if (only && only != attr_id)
		return false;
	return rsim_fault_check(&rsim_sa_faults[site], _RET_IP_);
}

/* a request for the SA class: answered by the master's port */
static void rsim_sa_recv(struct ib_mad_agent *agent,
			 struct ib_mad_send_buf *send_buf,
			 struct ib_mad_recv_wc *wc)
{
	struct rsim_dev *rsim = agent->context;
	const struct ib_sa_mad *req = (const struct ib_sa_mad *)wc->recv_buf.mad;
	struct rsim_sa_answer a = {};
	struct rsim_sa_query q;
	struct ib_mad_send_buf *buf;
	u16 attr_id;
	bool rmpp;

	atomic64_inc(&rsim_sa_stats.requests);
	if (!READ_ONCE(rsim->port.sm_master)) {
		atomic64_inc(&rsim_sa_stats.standby);
		goto out;
	}
	/* a request is one MAD: the MAD layer reassembled nothing longer */
	if (wc->mad_len < sizeof(*req))
		goto out;
	attr_id = be16_to_cpu(req->mad_hdr.attr_id);
	if (rsim_sa_fault(RSIM_SA_FAULT_DROP, attr_id)) {
		atomic64_inc(&rsim_sa_stats.dropped);
		goto out;
	}
	q = (struct rsim_sa_query){
		.method = req->mad_hdr.method,
		.attr_id = attr_id,
		.comp_mask = be64_to_cpu((__force __be64)req->sa_hdr.comp_mask),
		.rec = req->data,
		.slid = ib_lid_cpu16(wc->wc->slid),
	};
	/* a GetTable's answer is counted in flight before it is made */
	rmpp = q.method == IB_SA_METHOD_GET_TABLE;
	if (rsim_sa_fault(RSIM_SA_FAULT_STATUS, attr_id)) {
		atomic64_inc(&rsim_sa_stats.failed);
		a.status = READ_ONCE(rsim_sa_error_status);
		rmpp = false;
	} else if (rmpp && !rsim_sa_rmpp_take(q.slid)) {
		/* the requester has its share in flight: one MAD, no records */
		atomic64_inc(&rsim_sa_stats.rmpp_refused);
		a.status = RSIM_SA_ERR_NO_RESOURCES;
		rmpp = false;
	} else if (rsim_sa_answer(&q, &a)) {
		a.status = RSIM_SA_ERR_NO_RESOURCES;
	}
	if (rmpp && a.status) {
		/* an error is one MAD: not in flight */
		rsim_sa_rmpp_put(q.slid);
		rmpp = false;
	}
	if (a.status)
		atomic64_inc(&rsim_sa_stats.errors);
	atomic64_add(a.count, &rsim_sa_stats.records);
	buf = rsim_sa_reply(agent, wc, &a);
	rsim_sa_answer_free(&a);
	if (!buf) {
		if (rmpp)
			rsim_sa_rmpp_put(q.slid);
		atomic64_inc(&rsim_sa_stats.lost);
		goto out;
	}
	buf->context[0] = rmpp ? (void *)(uintptr_t)(RSIM_SA_RMPP_TAG | q.slid) :
			  NULL;
	if (rsim_sa_fault(RSIM_SA_FAULT_DELAY, attr_id)) {
		atomic64_inc(&rsim_sa_stats.delayed);
		if (rsim_sa_hold(&rsim->sa, buf, READ_ONCE(rsim_sa_delay_ms)))
			goto out;
		atomic64_inc(&rsim_sa_stats.lost);
		rsim_sa_free_buf(buf);
		goto out;
	}
	rsim_sa_post(buf);
out:
	ib_free_recv_mad(wc);
}

/* an answer went out (or its RMPP transfer ended): free it */
static void rsim_sa_sent(struct ib_mad_agent *agent,
			 struct ib_mad_send_wc *wc)
{
	rsim_sa_free_buf(wc->send_buf);
}

/*
 * protects every port's SA agent coming and going (rsim_sa_port's agent)
 * and rsim_sa_ports: the client's add and remove, and rsim_sa_serve()
 */
static DEFINE_MUTEX(rsim_sa_agents_mutex);
/* the ports the client has (between its add and its remove) */
static LIST_HEAD(rsim_sa_ports);

static void rsim_sa_register(struct rsim_dev *rsim)
{
	struct ib_mad_reg_req req = {
		.mgmt_class = IB_MGMT_CLASS_SUBN_ADM,
		.mgmt_class_version = RSIM_SA_CLASS_VERSION,
	};
	struct ib_mad_agent *agent;

	lockdep_assert_held(&rsim_sa_agents_mutex);
	if (rsim->sa.agent || rsim->cfg.no_sa || !rsim_fabric_sm_on())
		return;
	rsim->sa.stopping = false;
	set_bit(IB_MGMT_METHOD_GET, req.method_mask);
	set_bit(IB_MGMT_METHOD_SET, req.method_mask);
	set_bit(IB_SA_METHOD_GET_TABLE, req.method_mask);
	set_bit(IB_SA_METHOD_DELETE, req.method_mask);
	agent = ib_register_mad_agent(&rsim->ibdev, RSIM_PORT, IB_QPT_GSI, &req,
				      IB_MGMT_RMPP_VERSION, rsim_sa_sent,
				      rsim_sa_recv, rsim, 0);
	if (IS_ERR(agent)) {
		/* another SA has the class: the subnet is its */
		dev_info(&rsim->ibdev.dev, "no SA on this port: %pe\n", agent);
		agent = NULL;
	}
	rsim->sa.agent = agent;
}

static void rsim_sa_unregister(struct rsim_dev *rsim)
{
	struct rsim_sa_port *sa = &rsim->sa;
	struct rsim_sa_held *h, *tmp;
	LIST_HEAD(held);

	lockdep_assert_held(&rsim_sa_agents_mutex);
	if (!sa->agent)
		return;
	spin_lock_bh(&sa->lock);
	sa->stopping = true;
	spin_unlock_bh(&sa->lock);
	cancel_delayed_work_sync(&sa->delay_work);
	/* answers still held back are never sent */
	spin_lock_bh(&sa->lock);
	list_splice_init(&sa->delayed, &held);
	sa->nr_delayed = 0;
	spin_unlock_bh(&sa->lock);
	list_for_each_entry_safe(h, tmp, &held, node) {
		atomic64_inc(&rsim_sa_stats.lost);
		rsim_sa_free_buf(h->buf);
		kfree(h);
	}
	ib_unregister_mad_agent(sa->agent);
	sa->agent = NULL;
}

static int rsim_sa_add_one(struct ib_device *ibdev)
{
	struct rsim_dev *rsim;

	if (ibdev->ops.owner != THIS_MODULE)
		return -EOPNOTSUPP;
	rsim = to_rsim_dev(ibdev);
	if (rsim_is_roce(rsim))
		return -EOPNOTSUPP;
	spin_lock_init(&rsim->sa.lock);
	INIT_LIST_HEAD(&rsim->sa.delayed);
	rsim->sa.nr_delayed = 0;
	INIT_DELAYED_WORK(&rsim->sa.delay_work, rsim_sa_delay_work);
	mutex_lock(&rsim_sa_agents_mutex);
	list_add_tail(&rsim->sa.node, &rsim_sa_ports);
	rsim_sa_register(rsim);
	mutex_unlock(&rsim_sa_agents_mutex);
	return 0;
}

static void rsim_sa_remove_one(struct ib_device *ibdev, void *client_data)
{
	struct rsim_dev *rsim = to_rsim_dev(ibdev);

	mutex_lock(&rsim_sa_agents_mutex);
	list_del(&rsim->sa.node);
	rsim_sa_unregister(rsim);
	mutex_unlock(&rsim_sa_agents_mutex);
}

/**
 * rsim_sa_serve() - the SA's agents on every port, or on none
 * @on: register them (where the class is free), or unregister them so
 *	that another SA (opensm's) may take the class
 *
 * Context: process; sleeps. Called by rsim_fabric_set_sm() once the
 * built-in SM's switch has changed.
 */
void rsim_sa_serve(bool on)
{
	struct rsim_sa_port *sa;

	mutex_lock(&rsim_sa_agents_mutex);
	list_for_each_entry(sa, &rsim_sa_ports, node) {
		if (on)
			rsim_sa_register(container_of(sa, struct rsim_dev, sa));
		else
			rsim_sa_unregister(container_of(sa, struct rsim_dev, sa));
	}
	mutex_unlock(&rsim_sa_agents_mutex);
}

static struct ib_client rsim_sa_client = {
	.name = "rdmasim_sa",
	.add = rsim_sa_add_one,
	.remove = rsim_sa_remove_one,
};

/**
 * rsim_sa_fault_point() - one of the SA's injection points
 * @site: 0 drop, 1 status, 2 delay
 *
 * Context: any.
 * Return: the point, or NULL for another @site.
 */
struct rsim_fault_point *rsim_sa_fault_point(int site)
{
	return site >= 0 && site < RSIM_SA_FAULT_NR ? &rsim_sa_faults[site] :
						      NULL;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_sa_fault_point);

/**
 * rsim_sa_fault_settings() - what the SA's faults do
 * @attr_id: the only attribute they apply to, 0 for every one
 * @status: the MAD status the status fault answers with
 * @delay_ms: how long the delay fault holds an answer back
 *
 * Context: any.
 */
void rsim_sa_fault_settings(u16 attr_id, u16 status, u32 delay_ms)
{
	WRITE_ONCE(rsim_sa_fault_attr_id, attr_id);
	WRITE_ONCE(rsim_sa_error_status, status);
	WRITE_ONCE(rsim_sa_delay_ms, delay_ms);
}
EXPORT_SYMBOL_IF_KUNIT(rsim_sa_fault_settings);

/**
 * rsim_sa_served() - requests the master's agents answered or dropped
 *
 * Context: any.
 * Return: answers posted, plus requests the drop fault dropped.
 */
u64 rsim_sa_served(void)
{
	return atomic64_read(&rsim_sa_stats.answered) +
	       atomic64_read(&rsim_sa_stats.dropped);
}
EXPORT_SYMBOL_IF_KUNIT(rsim_sa_served);

static int rsim_sa_stats_show(struct seq_file *m, void *v)
{
	struct rsim_sa_stats *s = &rsim_sa_stats;
	unsigned int total, peak;

	seq_printf(m, "requests %lld\nstandby %lld\nanswered %lld\nerrors %lld\n",
		   atomic64_read(&s->requests), atomic64_read(&s->standby),
		   atomic64_read(&s->answered), atomic64_read(&s->errors));
	seq_printf(m, "rmpp %lld\nrecords %lld\ndropped %lld\nfailed %lld\n",
		   atomic64_read(&s->rmpp), atomic64_read(&s->records),
		   atomic64_read(&s->dropped), atomic64_read(&s->failed));
	seq_printf(m, "delayed %lld\nlost %lld\n", atomic64_read(&s->delayed),
		   atomic64_read(&s->lost));
	xa_lock(&rsim_sa_rmpp_lids);
	total = rsim_sa_rmpp_total;
	peak = rsim_sa_rmpp_peak;
	xa_unlock(&rsim_sa_rmpp_lids);
	seq_printf(m, "rmpp_in_flight %u\nrmpp_peak %u\nrmpp_refused %lld\n",
		   total, peak, atomic64_read(&s->rmpp_refused));
	seq_printf(m, "rmpp_per_lid_max %u\nrmpp_max %u\n",
		   RSIM_SA_RMPP_PER_LID, RSIM_SA_RMPP_MAX);
	seq_printf(m, "mcast_refused_port %llu\nmcast_refused_mlid %llu\n",
		   rsim_mcast_refused(true), rsim_mcast_refused(false));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rsim_sa_stats);

static int rsim_sa_groups_show(struct seq_file *m, void *v)
{
	rsim_mcast_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rsim_sa_groups);

/**
 * rsim_sa_debugfs_init() - the SA's debugfs directory
 * @root: the module's directory (rdmasim/)
 *
 * rdmasim/sa/: stats, groups (the multicast groups and their members),
 * fault/{drop,status,delay}/, error_status, delay_ms and attr. Removed
 * with @root.
 *
 * Context: process (module load), after rsim_sa_init().
 */
void rsim_sa_debugfs_init(struct dentry *root)
{
	struct dentry *dir;

	if (IS_ERR_OR_NULL(root))
		return;
	dir = debugfs_create_dir("sa", root);
	if (IS_ERR(dir))
		return;
	debugfs_create_file("stats", 0400, dir, NULL, &rsim_sa_stats_fops);
	debugfs_create_file("groups", 0400, dir, NULL, &rsim_sa_groups_fops);
	debugfs_create_x16("error_status", 0600, dir, &rsim_sa_error_status);
	debugfs_create_u32("delay_ms", 0600, dir, &rsim_sa_delay_ms);
	debugfs_create_x16("attr", 0600, dir, &rsim_sa_fault_attr_id);
	rsim_fault_debugfs_create(dir, rsim_sa_faults, rsim_sa_fault_names,
				  RSIM_SA_FAULT_NR);
}

/**
 * rsim_sa_init() - the SA's state: its faults and the groups an SM makes
 *
 * Context: process (module load), before any device.
 * Return: 0 or -ENOMEM.
 */
int rsim_sa_init(void)
{
	int i;

	for (i = 0; i < RSIM_SA_FAULT_NR; i++)
		rsim_fault_point_init(&rsim_sa_faults[i],
				      &rsim_sa_fault_attrs[i]);
	return rsim_mcast_init();
}

/**
 * rsim_sa_exit() - forget the SA's state
 *
 * Context: process (module unload), after rsim_sa_stop() and with no
 * device left.
 */
void rsim_sa_exit(void)
{
	int i;

	rsim_mcast_exit();
	for (i = 0; i < RSIM_SA_FAULT_NR; i++)
		rsim_fault_point_fini(&rsim_sa_faults[i]);
}

/**
 * rsim_sa_start() - an SA agent on every InfiniBand-mode port, now and
 *	as devices come (but those made with sa=0)
 *
 * Context: process (module load).
 * Return: 0 or what ib_register_client() returns.
 */
int rsim_sa_start(void)
{
	return ib_register_client(&rsim_sa_client);
}

/**
 * rsim_sa_stop() - no SA agent any more
 *
 * Context: process (module unload).
 */
void rsim_sa_stop(void)
{
	ib_unregister_client(&rsim_sa_client);
}
