// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: debugfs.
 *
 * /sys/kernel/debug/rdmasim/rdmasim<N>/
 *	resources	live objects per type with limit, high-water mark and
 *			refusals at the limit
 *	limits		every advertised limit (ib_query_device() gives them
 *			to kernel clients; there is no userspace provider)
 *	datapath	what the loopback data path did: WRs executed,
 *			bytes moved, WRs failed, SENDs that waited (RNR)
 *	port		the port's state, LIDs, M_Key protection and event
 *			count; writing "down" pulls the cable, "up" plugs it
 *			back (the port activates itself)
 *	fault/		injection sites (fault.c)
 *	mad_pool/	the PUDA pool of the MAD receive queue (puda.c)
 * /sys/kernel/debug/rdmasim/puda/
 *	pools of other users, and the pool library's fault_attr points
 */

#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "rdmasim.h"

static struct dentry *rsim_debugfs_root;

static int rsim_resources_show(struct seq_file *m, void *unused)
{
	struct rsim_dev *rsim = m->private;
	int t;

	seq_printf(m, "%-4s %8s %8s %8s %8s\n",
		   "type", "count", "max", "hwm", "refused");
	for (t = 0; t < RSIM_RES_NR; t++)
		seq_printf(m, "%-4s %8d %8u %8d %8d\n", rsim_res_name(t),
			   atomic_read(&rsim->res[t].count),
			   rsim->cfg.limits.max_res[t],
			   atomic_read(&rsim->res[t].hwm),
			   atomic_read(&rsim->res[t].refused));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rsim_resources);

static int rsim_limits_show(struct seq_file *m, void *unused)
{
	struct rsim_dev *rsim = m->private;
	const struct ib_device_attr *a = &rsim->ibdev.attrs;

	seq_printf(m, "max_pd %u\nmax_mr %u\nmax_cq %u\nmax_qp %u\nmax_ah %u\n",
		   a->max_pd, a->max_mr, a->max_cq, a->max_qp, a->max_ah);
	seq_printf(m, "max_cqe %u\nmax_qp_wr %u\nmax_send_sge %u\n",
		   a->max_cqe, a->max_qp_wr, a->max_send_sge);
	seq_printf(m, "max_recv_sge %u\nmax_sge_rd %u\n",
		   a->max_recv_sge, a->max_sge_rd);
	seq_printf(m, "max_inline_data %u\n",
		   rsim->cfg.limits.max_inline_data);
	seq_printf(m, "max_fast_reg_page_list_len %u\n",
		   a->max_fast_reg_page_list_len);
	seq_printf(m, "max_qp_rd_atom %u\nmax_qp_init_rd_atom %u\n",
		   a->max_qp_rd_atom, a->max_qp_init_rd_atom);
	seq_printf(m, "max_mr_size 0x%llx\npage_size_cap 0x%llx\n",
		   a->max_mr_size, a->page_size_cap);
	seq_printf(m, "max_srq %u\nmax_srq_wr %u\nmax_srq_sge %u\n",
		   a->max_srq, a->max_srq_wr, a->max_srq_sge);
	seq_printf(m, "max_pkeys %u\nlocal_dma_lkey 0x%08x\n",
		   a->max_pkeys, rsim->ibdev.local_dma_lkey);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rsim_limits);

static const char * const rsim_dp_op_names[RSIM_OP_NR] = {
	[RSIM_OP_SEND] = "send",
	[RSIM_OP_SEND_INV] = "send_inv",
	[RSIM_OP_WRITE] = "rdma_write",
	[RSIM_OP_READ] = "rdma_read",
	[RSIM_OP_ATOMIC] = "atomic",
	[RSIM_OP_ATOMIC_WRITE] = "atomic_write",
	[RSIM_OP_FLUSH] = "flush",
	[RSIM_OP_REG_MR] = "reg_mr",
	[RSIM_OP_LOCAL_INV] = "local_inv",
	[RSIM_OP_BIND_MW] = "bind_mw",
};

static int rsim_datapath_show(struct seq_file *m, void *unused)
{
	struct rsim_dev *rsim = m->private;
	struct rsim_dp_stats st;
	unsigned int i;

	spin_lock_bh(&rsim->stats_lock);
	st = rsim->dp;
	spin_unlock_bh(&rsim->stats_lock);
	seq_printf(m, "wqes %llu\nbytes %llu\nerrors %llu\nrnr_waits %llu\n",
		   st.wqes, st.bytes, st.errors, st.rnr_waits);
	seq_printf(m, "rnr_retries %llu\nack_timeouts %llu\n", st.rnr_retries,
		   st.ack_timeouts);
	seq_printf(m, "inline_runs %llu\ndeferred %llu\n", st.inline_runs,
		   st.deferred);
	seq_printf(m, "worker_runs %llu\n", st.worker_runs);
	seq_printf(m, "dmah_moves %llu\ndmah_steered %llu\n",
		   st.dmah_moves, st.dmah_steered);
	seq_printf(m, "dmah_pmem_bytes %llu\n", st.dmah_pmem_bytes);
	seq_printf(m, "dmah_ph %llu %llu %llu %llu\n", st.dmah_ph[0],
		   st.dmah_ph[1], st.dmah_ph[2], st.dmah_ph[3]);
	seq_printf(m, "umem_bounced %llu\n", st.umem_bounced);
	seq_printf(m, "dma_device %s %s\n", dev_name(rsim->dma_dev),
		   rsim->dma_domain ? "iommu" : "direct");
	seq_printf(m, "iova_translations %lld\n",
		   atomic64_read(&rsim->iova_translations));
	seq_printf(m, "user_polls %lld\ncq_rings %lld\n",
		   atomic64_read(&rsim->user_polls),
		   atomic64_read(&rsim->cq_rings));
	seq_printf(m, "user_recv_posts %lld\nrq_rings %lld\nrecv_doorbells %lld\n",
		   atomic64_read(&rsim->user_recv_posts),
		   atomic64_read(&rsim->rq_rings),
		   atomic64_read(&rsim->recv_doorbells));
	seq_printf(m, "user_send_posts %lld\nsq_rings %lld\nsend_doorbells %lld\n",
		   atomic64_read(&rsim->user_send_posts),
		   atomic64_read(&rsim->sq_rings),
		   atomic64_read(&rsim->send_doorbells));
	seq_printf(m, "odp_moves %llu\n", st.odp_moves);
	seq_printf(m, "odp_faults %lld\nodp_fault_pages %lld\nodp_fault_errors %lld\n",
		   atomic64_read(&rsim->odp_faults),
		   atomic64_read(&rsim->odp_fault_pages),
		   atomic64_read(&rsim->odp_fault_errors));
	seq_printf(m, "odp_invalidations %lld\nodp_prefetches %lld\n",
		   atomic64_read(&rsim->odp_invalidations),
		   atomic64_read(&rsim->odp_prefetches));
	seq_printf(m, "roce_no_route %lld\nroce_ambiguous %lld\n",
		   atomic64_read(&rsim->roce_no_route),
		   atomic64_read(&rsim->roce_ambiguous));
	for (i = 0; i < RSIM_OP_NR; i++)
		seq_printf(m, "op_%s %llu\n", rsim_dp_op_names[i], st.ops[i]);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rsim_datapath);

static const char *rsim_port_state_name(enum ib_port_state st)
{
	static const char * const name[] = {
		[IB_PORT_NOP] = "nop", [IB_PORT_DOWN] = "down",
		[IB_PORT_INIT] = "init", [IB_PORT_ARMED] = "armed",
		[IB_PORT_ACTIVE] = "active",
	};

	return st < ARRAY_SIZE(name) && name[st] ? name[st] : "?";
}

static const char *rsim_phys_state_name(u8 st)
{
	switch (st) {
	case IB_PORT_PHYS_STATE_POLLING:
		return "polling";
	case IB_PORT_PHYS_STATE_DISABLED:
		return "disabled";
	case IB_PORT_PHYS_STATE_LINK_UP:
		return "link_up";
	default:
		return "?";
	}
}

static int rsim_port_show(struct seq_file *m, void *unused)
{
	struct rsim_dev *rsim = m->private;
	struct rsim_port *port = &rsim->port;
	struct rsim_port p;

	spin_lock_bh(&port->lock);
	p = *port;
	spin_unlock_bh(&port->lock);
	seq_printf(m, "state %s\nphys_state %s\n",
		   rsim_port_state_name(p.state),
		   rsim_phys_state_name(p.phys_state));
	seq_printf(m, "lid 0x%x\nsm_lid 0x%x\nsm_sl %u\nmtu %d\n",
		   p.lid, p.sm_lid, p.sm_sl, ib_mtu_enum_to_int(p.mtu));
	seq_printf(m, "mkey_prot %u\nmkey_lease %u\nmkey_violations %u\n",
		   p.mkey_prot, p.mkey_lease, p.mkey_viol);
	seq_printf(m, "sm_act %u\nevents %u\n", p.sm_act, p.events);
	return 0;
}

static int rsim_port_open(struct inode *inode, struct file *file)
{
	return single_open(file, rsim_port_show, inode->i_private);
}

static ssize_t rsim_port_write(struct file *file, const char __user *ubuf,
			       size_t len, loff_t *ppos)
{
	struct rsim_dev *rsim = ((struct seq_file *)file->private_data)->private;
	char buf[8];

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = 0;
	if (sysfs_streq(buf, "down"))
		rsim_port_set_link(rsim, false);
	else if (sysfs_streq(buf, "up"))
		rsim_port_set_link(rsim, true);
	else
		return -EINVAL;
	return len;
}

static const struct file_operations rsim_port_fops = {
	.owner = THIS_MODULE,
	.open = rsim_port_open,
	.read = seq_read,
	.write = rsim_port_write,
	.llseek = seq_lseek,
	.release = single_release,
};

void rsim_debugfs_init(void)
{
	rsim_debugfs_root = debugfs_create_dir(RSIM_DRV_NAME, NULL);
	rsim_puda_init(rsim_debugfs_root);
	rsim_sa_debugfs_init(rsim_debugfs_root);
	rsim_fabric_debugfs_init(rsim_debugfs_root);
}

void rsim_debugfs_exit(void)
{
	/* no file of the library's points is open when their traces go */
	debugfs_remove_recursive(rsim_debugfs_root);
	rsim_debugfs_root = NULL;
	rsim_puda_exit();
}

void rsim_debugfs_dev_init(struct rsim_dev *rsim)
{
	rsim->debugfs = debugfs_create_dir(rsim->cfg.name, rsim_debugfs_root);
	if (IS_ERR(rsim->debugfs))
		return;
	debugfs_create_file("resources", 0400, rsim->debugfs, rsim,
			    &rsim_resources_fops);
	debugfs_create_file("limits", 0400, rsim->debugfs, rsim,
			    &rsim_limits_fops);
	debugfs_create_file("datapath", 0400, rsim->debugfs, rsim,
			    &rsim_datapath_fops);
	debugfs_create_file("port", 0600, rsim->debugfs, rsim,
			    &rsim_port_fops);
	if (RSIM_ODP)
		debugfs_create_u32("odp_delay_ms", 0600, rsim->debugfs,
				   &rsim->odp_delay_ms);
	rsim_fault_debugfs_init(rsim);
}

void rsim_debugfs_dev_exit(struct rsim_dev *rsim)
{
	debugfs_remove_recursive(rsim->debugfs);
	rsim->debugfs = NULL;
}
