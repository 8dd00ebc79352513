// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: debugfs.
 *
 * /sys/kernel/debug/rdmasim/rdmasim<N>/
 *	resources	live objects per type with limit, high-water mark and
 *			refusals at the limit
 *	fault/		injection sites (fault.c)
 */

#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "rdmasim.h"

struct dentry *rsim_debugfs_root;

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

void rsim_debugfs_register(void)
{
	rsim_debugfs_root = debugfs_create_dir(RSIM_DRV_NAME, NULL);
}

void rsim_debugfs_unregister(void)
{
	debugfs_remove_recursive(rsim_debugfs_root);
	rsim_debugfs_root = NULL;
}

void rsim_debugfs_dev_init(struct rsim_dev *rsim)
{
	char name[16];

	snprintf(name, sizeof(name), "rdmasim%u", rsim->id);
	rsim->debugfs = debugfs_create_dir(name, rsim_debugfs_root);
	if (IS_ERR(rsim->debugfs))
		return;
	debugfs_create_file("resources", 0400, rsim->debugfs, rsim,
			    &rsim_resources_fops);
	rsim_fault_debugfs_init(rsim);
}

void rsim_debugfs_dev_exit(struct rsim_dev *rsim)
{
	debugfs_remove_recursive(rsim->debugfs);
	rsim->debugfs = NULL;
}
