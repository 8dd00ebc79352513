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
	seq_printf(m, "max_pkeys %u\nlocal_dma_lkey 0x%08x\n",
		   a->max_pkeys, rsim->ibdev.local_dma_lkey);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rsim_limits);

static int rsim_datapath_show(struct seq_file *m, void *unused)
{
	struct rsim_dev *rsim = m->private;
	struct rsim_dp_stats st;

	spin_lock_bh(&rsim->stats_lock);
	st = rsim->dp;
	spin_unlock_bh(&rsim->stats_lock);
	seq_printf(m, "wqes %llu\nbytes %llu\nerrors %llu\nrnr_waits %llu\n",
		   st.wqes, st.bytes, st.errors, st.rnr_waits);
	seq_printf(m, "rnr_retries %llu\ninline_runs %llu\ndeferred %llu\n",
		   st.rnr_retries, st.inline_runs, st.deferred);
	seq_printf(m, "worker_runs %llu\n", st.worker_runs);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rsim_datapath);

void rsim_debugfs_init(void)
{
	rsim_debugfs_root = debugfs_create_dir(RSIM_DRV_NAME, NULL);
	rsim_puda_init(rsim_debugfs_root);
}

void rsim_debugfs_exit(void)
{
	rsim_puda_exit();
	debugfs_remove_recursive(rsim_debugfs_root);
	rsim_debugfs_root = NULL;
}

void rsim_debugfs_dev_init(struct rsim_dev *rsim)
{
	char name[RSIM_DEV_NAME_LEN];

	snprintf(name, sizeof(name), RSIM_DEV_NAME_FMT, rsim->id);
	rsim->debugfs = debugfs_create_dir(name, rsim_debugfs_root);
	if (IS_ERR(rsim->debugfs))
		return;
	debugfs_create_file("resources", 0400, rsim->debugfs, rsim,
			    &rsim_resources_fops);
	debugfs_create_file("limits", 0400, rsim->debugfs, rsim,
			    &rsim_limits_fops);
	debugfs_create_file("datapath", 0400, rsim->debugfs, rsim,
			    &rsim_datapath_fops);
	rsim_fault_debugfs_init(rsim);
}

void rsim_debugfs_dev_exit(struct rsim_dev *rsim)
{
	debugfs_remove_recursive(rsim->debugfs);
	rsim->debugfs = NULL;
}
