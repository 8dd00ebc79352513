// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: module init/exit and device lifecycle.
 *
 * Each simulated device is a platform device "rdmasim.<id>" bound to the
 * platform driver "rdmasim", whose probe registers the ib_device
 * rdmasim<id>. The platform device gives the ib_device a real DMA device
 * (64-bit mask and dma_parms) and a sysfs parent. Devices are created and
 * destroyed at run time, netdevsim-style, through two driver attributes:
 *
 *   echo "<id> [lid=N] [sa=0|1] [dma_pci=DDDD:BB:DD.F]" \
 *	> /sys/bus/platform/drivers/rdmasim/new_device
 *   echo <id> > /sys/bus/platform/drivers/rdmasim/del_device
 *
 * A RoCE-mode device (roce.c) is a platform device "rdmasim.<n>.auto"
 * created by "rdma link add" and named by it; new_device and del_device
 * do not see it. The RDMA core may unregister its ib_device on its own
 * ("rdma link del", the netdev going away): dealloc_driver then asks the
 * reaper here to remove the platform device.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-mapping.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <kunit/visibility.h>

#include "rdmasim.h"

/**
 * struct rsim_node - a created device, as the lifecycle code sees it
 * @list: entry in rsim_nodes
 * @id: device number (InfiniBand mode)
 * @roce: a RoCE-mode device: @id means nothing, new_device and del_device
 *	do not see it
 * @cfg: creation parameters, read by probe (through platform data)
 * @pdev: the platform device
 * @rsim: set by a successful probe, cleared by remove; its ib_device is
 *	held (get_device()) so that @rsim stays readable after the RDMA core
 *	unregistered it
 * @probe_err: result of the last probe
 */
struct rsim_node {
	struct list_head list;
	u32 id;
	bool roce;
	struct rsim_dev_config cfg;
	struct platform_device *pdev;
	struct rsim_dev *rsim;
	int probe_err;
};

static LIST_HEAD(rsim_nodes);
static bool rsim_closing;
static DEFINE_MUTEX(rsim_nodes_lock);	/* protects rsim_nodes, rsim_closing */

static void rsim_reap_fn(struct work_struct *work);
static DECLARE_WORK(rsim_reap_work, rsim_reap_fn);

/**
 * rsim_default_config() - fill in the configuration of a default device
 * @cfg: configuration to fill
 *
 * Context: Any context.
 */
void rsim_default_config(struct rsim_dev_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->limits = rsim_default_limits;
#ifdef RSIM_MODPARAMS
	/* the out-of-tree parameters: as new_device's sa=0 and dma_pci= */
	cfg->no_sa = !rsim_param_sa();
	cfg->dma_pci = rsim_param_dma_pci();
#endif
}
EXPORT_SYMBOL_IF_KUNIT(rsim_default_config);

static int rsim_plat_probe(struct platform_device *pdev)
{
	struct rsim_node **pnode = dev_get_platdata(&pdev->dev);
	struct rsim_node *node = *pnode;
	int err;

	err = rsim_dev_probe(pdev, &node->cfg);
	node->probe_err = err;
	if (!err) {
		node->rsim = platform_get_drvdata(pdev);
		get_device(&node->rsim->ibdev.dev);
	}
	return err;
}

static void rsim_plat_remove(struct platform_device *pdev)
{
	struct rsim_node **pnode = dev_get_platdata(&pdev->dev);
	struct rsim_dev *rsim = (*pnode)->rsim;

	/* nothing to do if the RDMA core has unregistered it already */
	rsim_dev_remove(pdev);
	(*pnode)->rsim = NULL;
	put_device(&rsim->ibdev.dev);
}

RSIM_PLATFORM_REMOVE_WRAPPER(rsim_plat_remove)

static struct rsim_node *rsim_node_find_locked(u32 id)
{
	struct rsim_node *node;

	lockdep_assert_held(&rsim_nodes_lock);
	list_for_each_entry(node, &rsim_nodes, list)
		if (!node->roce && node->id == id)
			return node;
	return NULL;
}

/* a node's memory and the reference it holds on its PCI function */
static void rsim_node_free(struct rsim_node *node)
{
	pci_dev_put(node->cfg.dma_pci);
	kfree(node);
}

static void rsim_node_destroy_locked(struct rsim_node *node)
{
	lockdep_assert_held(&rsim_nodes_lock);
	list_del(&node->list);
	platform_device_unregister(node->pdev);
	rsim_node_free(node);
}

/*
 * Register the platform device of @node (id @id, or PLATFORM_DEVID_AUTO)
 * and return what its probe made. Takes @node over: it is on rsim_nodes
 * on success and freed on failure.
 */
static struct rsim_dev *rsim_node_add_locked(struct rsim_node *node, int id)
{
	struct platform_device_info info = {
		.name = RSIM_DRV_NAME,
		.id = id,
		.dma_mask = DMA_BIT_MASK(64),
		.data = &node,
		.size_data = sizeof(node),
	};
	struct platform_device *pdev;
	struct rsim_dev *rsim;
	int err;

	lockdep_assert_held(&rsim_nodes_lock);
	node->probe_err = -ENODEV;
	pdev = platform_device_register_full(&info);
	if (IS_ERR(pdev)) {
		rsim_node_free(node);
		return ERR_CAST(pdev);
	}
	node->pdev = pdev;
	list_add_tail(&node->list, &rsim_nodes);

	/* Probe ran synchronously inside platform_device_register_full(). */
	rsim = node->rsim;
	if (!rsim) {
		err = node->probe_err;
		rsim_node_destroy_locked(node);
		return ERR_PTR(err);
	}
	return rsim;
}

/**
 * rsim_dev_new() - create the device rdmasim<id>
 * @id: device number, unique among rdmasim devices
 * @cfg: limits, LID, SA, PCI function; copied, the function held anew
 *	(@cfg->ndev must be NULL: an InfiniBand device)
 *
 * Registers the platform device "rdmasim.<id>"; the driver's probe
 * registers the ib_device. Tests use @cfg for small limits. What does not
 * fit is refused before anything is made.
 *
 * Context: Process context; takes rsim_nodes_lock and the RDMA core's locks.
 * Return: the new device; ERR_PTR(-EINVAL) if @id is above INT_MAX (a
 * platform device id is an int), @cfg->lid is not a unicast LID or
 * @cfg->ndev is set, -ERANGE if @cfg->lid is 0 and the base LID + @id is
 * past the last unicast LID, -EEXIST if @id is taken, -ENODEV while the
 * module unloads, or the probe's error.
 */
struct rsim_dev *rsim_dev_new(u32 id, const struct rsim_dev_config *cfg)
{
	struct rsim_node *node;
	struct rsim_dev *rsim;
	u16 lid;
	int err;

	if (id > INT_MAX || cfg->ndev)
		return ERR_PTR(-EINVAL);
	err = rsim_dev_lid(cfg->lid, rsim_param_base_lid(), id, &lid);
	if (err)
		return ERR_PTR(err);

	node = rsim_kzalloc_obj(*node, GFP_KERNEL);
	if (!node)
		return ERR_PTR(-ENOMEM);
	node->id = id;
	node->cfg = *cfg;
	node->cfg.lid = lid;
	pci_dev_get(node->cfg.dma_pci);
	if (!node->cfg.name[0])
		snprintf(node->cfg.name, sizeof(node->cfg.name),
			 RSIM_DEV_NAME_FMT, id);

	mutex_lock(&rsim_nodes_lock);
	if (rsim_closing) {
		/* a new_device write that raced with module unload */
		err = -ENODEV;
		goto err_unlock;
	}
	if (rsim_node_find_locked(id)) {
		err = -EEXIST;
		goto err_unlock;
	}
	rsim = rsim_node_add_locked(node, id);
	mutex_unlock(&rsim_nodes_lock);
	return rsim;

err_unlock:
	mutex_unlock(&rsim_nodes_lock);
	rsim_node_free(node);
	return ERR_PTR(err);
}
EXPORT_SYMBOL_IF_KUNIT(rsim_dev_new);

/**
 * rsim_dev_new_roce() - create a RoCE-mode device bound to a netdev
 * @name: the ib_device's name ("rdma link add"'s NAME)
 * @ndev: the netdev; the device holds it while it exists
 *
 * Context: Process context; takes rsim_nodes_lock and the RDMA core's locks.
 * Return: the new device; ERR_PTR(-EEXIST) if an rdmasim device is bound
 * to @ndev already, -ENODEV while the module unloads, or the probe's
 * error (-EEXIST as well for a name in use).
 */
struct rsim_dev *rsim_dev_new_roce(const char *name, struct net_device *ndev)
{
	struct rsim_node *node;
	struct rsim_dev *rsim;
	int err;

	node = rsim_kzalloc_obj(*node, GFP_KERNEL);
	if (!node)
		return ERR_PTR(-ENOMEM);
	node->roce = true;
	rsim_default_config(&node->cfg);
	pci_dev_get(node->cfg.dma_pci);
	node->cfg.ndev = ndev;
	strscpy(node->cfg.name, name, sizeof(node->cfg.name));

	/* a device the core unregistered is gone once the reaper has run */
	flush_work(&rsim_reap_work);
	mutex_lock(&rsim_nodes_lock);
	if (rsim_closing) {
		err = -ENODEV;
		goto err_unlock;
	}
	if (rsim_roce_bound(ndev)) {
		err = -EEXIST;
		goto err_unlock;
	}
	rsim = rsim_node_add_locked(node, PLATFORM_DEVID_AUTO);
	mutex_unlock(&rsim_nodes_lock);
	return rsim;

err_unlock:
	mutex_unlock(&rsim_nodes_lock);
	kfree(node);
	return ERR_PTR(err);
}
EXPORT_SYMBOL_IF_KUNIT(rsim_dev_new_roce);

/*
 * Remove the platform devices of devices whose ib_device the RDMA core
 * unregistered on its own.
 */
static void rsim_reap_fn(struct work_struct *work)
{
	struct rsim_node *node, *tmp;

	mutex_lock(&rsim_nodes_lock);
	list_for_each_entry_safe(node, tmp, &rsim_nodes, list)
		if (node->rsim && READ_ONCE(node->rsim->dead))
			rsim_node_destroy_locked(node);
	mutex_unlock(&rsim_nodes_lock);
}

/**
 * rsim_dev_reap() - a device's ib_device is unregistered: remove what is
 *	left of it soon
 *
 * Context: any (dealloc_driver, perhaps under rsim_nodes_lock).
 */
void rsim_dev_reap(void)
{
	schedule_work(&rsim_reap_work);
}

/**
 * rsim_dev_del() - destroy the device rdmasim<id>
 * @id: device number
 *
 * Unregisters the ib_device (every RDMA client's remove() runs and must
 * release what it allocated on the device) and then the platform device.
 *
 * Context: Process context; may sleep until the RDMA core lets go.
 * Return: 0, or -ENODEV if no such device.
 */
int rsim_dev_del(u32 id)
{
	struct rsim_node *node;

	mutex_lock(&rsim_nodes_lock);
	node = rsim_node_find_locked(id);
	if (!node) {
		mutex_unlock(&rsim_nodes_lock);
		return -ENODEV;
	}
	rsim_node_destroy_locked(node);
	mutex_unlock(&rsim_nodes_lock);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_dev_del);

/*
 * new_device's line: "ID [lid=N] [sa=0|1] [dma_pci=DDDD:BB:DD.F]", as
 * netdevsim's takes "ID [PORT_COUNT]": the device number, then attributes
 * of the device. lid: its LID (else the base LID + ID); sa=0: its SA never
 * answers, leaving the class on its port to another SA; dma_pci: the PCI
 * function it maps through (dma_pci.c), left in @dma (a pointer into
 * @line) for the caller to resolve once the whole line is known good.
 */
static int rsim_new_device_parse(char *line, unsigned int *id,
				 struct rsim_dev_config *cfg, char **dma)
{
	char *tok, *val;
	unsigned int v;
	bool b;

	tok = strsep(&line, " \t\n");
	if (!tok || kstrtouint(tok, 0, id))
		return -EINVAL;
	while ((tok = strsep(&line, " \t\n"))) {
		if (!*tok)
			continue;
		val = strchr(tok, '=');
		if (!val)
			return -EINVAL;
		*val++ = '\0';
		if (!strcmp(tok, "lid")) {
			if (kstrtouint(val, 0, &v) || !v ||
			    v > RSIM_LID_UNICAST_MAX)
				return -EINVAL;
			cfg->lid = v;
		} else if (!strcmp(tok, "sa")) {
			if (kstrtobool(val, &b))
				return -EINVAL;
			cfg->no_sa = !b;
		} else if (!strcmp(tok, "dma_pci")) {
			if (*dma || !*val)
				return -EINVAL;
			*dma = val;
		} else {
			return -EINVAL;
		}
	}
	return 0;
}

static ssize_t new_device_store(struct device_driver *drv, const char *buf,
				size_t count)
{
	struct rsim_dev_config cfg;
	struct rsim_dev *rsim;
	char *line, *dma = NULL;
	unsigned int id;
	int bound = 0;
	int err;

	line = kstrndup(buf, count, GFP_KERNEL);
	if (!line)
		return -ENOMEM;
	rsim_default_config(&cfg);
	err = rsim_new_device_parse(line, &id, &cfg, &dma);
	if (err) {
		pr_err("Format for adding a device is \"id [lid=N] [sa=0|1] [dma_pci=DDDD:BB:DD.F]\"\n");
		goto out_free;
	}
	if (dma) {
		rsim_dma_pci_lock();
		bound = rsim_dma_pci_get(dma, &cfg.dma_pci);
		if (bound < 0) {
			err = bound;
			goto out_unlock;
		}
	}
	rsim = rsim_dev_new(id, &cfg);
	err = PTR_ERR_OR_ZERO(rsim);
	if (dma)
		/* the node holds its own reference; unbound if just bound */
		rsim_dma_pci_put_new(cfg.dma_pci, err ? bound : 0);
out_unlock:
	if (dma)
		rsim_dma_pci_unlock();
out_free:
	kfree(line);
	return err ? err : count;
}
static DRIVER_ATTR_WO(new_device);

static ssize_t del_device_store(struct device_driver *drv, const char *buf,
				size_t count)
{
	unsigned int id;
	int err;

	err = kstrtouint(buf, 0, &id);
	if (err) {
		pr_err("Format for deleting a device is \"id\" (uint)\n");
		return err;
	}
	err = rsim_dev_del(id);
	return err ? err : count;
}
static DRIVER_ATTR_WO(del_device);

static struct attribute *rsim_drv_attrs[] = {
	&driver_attr_new_device.attr,
	&driver_attr_del_device.attr,
	NULL,
};
ATTRIBUTE_GROUPS(rsim_drv);

static struct platform_driver rsim_platform_driver = {
	.probe = rsim_plat_probe,
	.remove = RSIM_PLATFORM_REMOVE(rsim_plat_remove),
	.driver = {
		.name = RSIM_DRV_NAME,
		.groups = rsim_drv_groups,
		/* a device is bound only by new_device, never by a user */
		.suppress_bind_attrs = true,
		/*
		 * rsim_dev_new() returns what probe made: never probe
		 * asynchronously, whatever async_probe=1 or
		 * driver_async_probe=rdmasim ask for (as the faux bus does)
		 */
		.probe_type = PROBE_FORCE_SYNCHRONOUS,
	},
};

/* Delete every device and refuse new ones: the module is going away. */
static void rsim_del_all(void)
{
	struct rsim_node *node, *tmp;

	mutex_lock(&rsim_nodes_lock);
	rsim_closing = true;
	list_for_each_entry_safe_reverse(node, tmp, &rsim_nodes, list)
		rsim_node_destroy_locked(node);
	mutex_unlock(&rsim_nodes_lock);
	/* the reaper finds nothing now, and is not queued again */
	cancel_work_sync(&rsim_reap_work);
}

/**
 * rsim_del_dma_users() - delete every device that maps through @dev: the
 *	PCI function is going (dma_pci.c)
 * @dev: the function's device
 *
 * Devices created later with that function fail to probe (-ENODEV).
 *
 * Context: Process context; may sleep.
 */
void rsim_del_dma_users(struct device *dev)
{
	struct rsim_node *node, *tmp;

	mutex_lock(&rsim_nodes_lock);
	list_for_each_entry_safe_reverse(node, tmp, &rsim_nodes, list)
		if (node->rsim && node->rsim->dma_dev == dev)
			rsim_node_destroy_locked(node);
	rsim_dma_pci_forget(dev);
	mutex_unlock(&rsim_nodes_lock);
}

static int __init rsim_init(void)
{
	int err;

	err = rsim_sa_init();
	if (err)
		return err;
	err = rsim_dp_wire_init();
	if (err)
		goto err_sa_exit;
	rsim_debugfs_init();

	err = rsim_sa_start();
	if (err)
		goto err_debugfs_exit;
	err = rsim_dma_pci_init();
	if (err)
		goto err_sa_stop;
	err = platform_driver_register(&rsim_platform_driver);
	if (err)
		goto err_dma_pci_exit;
	err = rsim_roce_init();
	if (err)
		goto err_driver_unregister;
#ifdef RSIM_MODPARAMS
	/* the out-of-tree build's parameters: the devices made at load */
	err = rsim_modparams_init();
	if (err)
		goto err_del_all;
#endif
	return 0;

#ifdef RSIM_MODPARAMS
err_del_all:
	rsim_roce_stop();
	rsim_del_all();
	rsim_fabric_exit();
	rsim_roce_exit();
#endif
err_driver_unregister:
	platform_driver_unregister(&rsim_platform_driver);
err_dma_pci_exit:
	rsim_dma_pci_exit();
err_sa_stop:
	rsim_sa_stop();
err_debugfs_exit:
	rsim_debugfs_exit();
	rsim_dp_wire_exit();
err_sa_exit:
	rsim_sa_exit();
	return err;
}

static void __exit rsim_exit(void)
{
	rsim_roce_stop();
	rsim_del_all();
	rsim_fabric_exit();
	rsim_roce_exit();
	platform_driver_unregister(&rsim_platform_driver);
	rsim_dma_pci_exit();
#ifdef RSIM_MODPARAMS
	rsim_modparams_exit();
#endif
	rsim_sa_stop();
	rsim_debugfs_exit();
	rsim_dp_wire_exit();
	rsim_sa_exit();
}

module_init(rsim_init);
module_exit(rsim_exit);

MODULE_AUTHOR("rdmasim developers");
MODULE_DESCRIPTION("Simulated RDMA device for allocation-path testing");
MODULE_LICENSE("GPL");
MODULE_VERSION(RSIM_VERSION);
