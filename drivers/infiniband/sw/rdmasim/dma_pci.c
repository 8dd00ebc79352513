// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: PCI functions lent to the devices as their DMA devices.
 *
 * A software device has no bus of its own: rdmasim's DMA device is its
 * platform device, which dma-direct maps (physical addresses, or swiotlb
 * bounce slots). new_device's attribute dma_pci=DDDD:BB:DD.F names a PCI
 * function instead, such as QEMU's "edu" or "pci-testdev" (any other once
 * offered to the driver through its new_id or a driver_override): the
 * driver "rdmasim_dma" binds it then (rsim_dma_pci_get()) and the device
 * maps through it. Behind an IOMMU its DMA addresses are I/O virtual
 * addresses of the function's domain: the RDMA core's and the ULPs'
 * mappings, the PUDA pool's and the data path's reads and writes then go
 * through the IOMMU's page tables (rsim_dma_to_phys()), as a real HCA's
 * accesses do. Devices may share a function; several may be bound.
 *
 * The function does no DMA itself: the simulated device's engine is the
 * CPU. Binding it keeps its IOMMU domain the DMA API's and keeps other
 * drivers (vfio-pci, uio) off it while the devices use it. It has no bind
 * or unbind files: a function stays bound until the module unloads; if it
 * is removed (hot unplug), the devices that map through it go first.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-direct.h>
#include <linux/dma-mapping.h>
#include <linux/iommu.h>
#include <linux/pci.h>

#include "rdmasim.h"

/**
 * struct rsim_dma_fn - a function bound to rdmasim_dma
 * @list: entry in rsim_dma_fns
 * @pdev: the function
 */
struct rsim_dma_fn {
	struct list_head list;
	struct pci_dev *pdev;
};

/*
 * Binding is one function at a time: the probe takes only the function
 * being bound (rsim_dma_want), never one the PCI core offers on its own
 * (a function hot-added, or present when the driver registers). The bind
 * lock is held from the binding until the device that asked for it is
 * made, or the function let go again (rsim_dma_pci_lock()).
 */
static DEFINE_MUTEX(rsim_dma_bind_lock);	/* serializes binding and unbinding */
static DEFINE_MUTEX(rsim_dma_fns_lock);	/* protects rsim_dma_fns, rsim_dma_want */
static LIST_HEAD(rsim_dma_fns);
static struct pci_dev *rsim_dma_want;

/*
 * QEMU's functions that do nothing a driver must drive; any other
 * function is offered through the driver's new_id file. No
 * MODULE_DEVICE_TABLE: such a function must not load rdmasim.
 */
static const struct pci_device_id rsim_dma_pci_ids[] = {
	{ PCI_DEVICE(0x1234, 0x11e8) },	/* QEMU edu */
	{ PCI_DEVICE(PCI_VENDOR_ID_REDHAT, 0x0005) },	/* QEMU pci-testdev */
	{ }
};

static struct rsim_dma_fn *rsim_dma_fn_find_locked(struct pci_dev *pdev)
{
	struct rsim_dma_fn *fn;

	lockdep_assert_held(&rsim_dma_fns_lock);
	list_for_each_entry(fn, &rsim_dma_fns, list)
		if (fn->pdev == pdev)
			return fn;
	return NULL;
}

static bool rsim_dma_fn_bound(struct pci_dev *pdev)
{
	bool bound;

	mutex_lock(&rsim_dma_fns_lock);
	bound = rsim_dma_fn_find_locked(pdev);
	mutex_unlock(&rsim_dma_fns_lock);
	return bound;
}

static int rsim_dma_pci_probe(struct pci_dev *pdev,
			      const struct pci_device_id *id)
{
	struct rsim_dma_fn *fn;
	bool wanted;
	int err;

	/* only the function rsim_dma_pci_get() is binding */
	mutex_lock(&rsim_dma_fns_lock);
	wanted = rsim_dma_want == pdev;
	mutex_unlock(&rsim_dma_fns_lock);
	if (!wanted)
		return -ENODEV;
	err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (err)
		err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(32));
	if (err)
		return err;
	/* freed when the function is unbound */
	fn = devm_kzalloc(&pdev->dev, sizeof(*fn), GFP_KERNEL);
	if (!fn)
		return -ENOMEM;
	fn->pdev = pdev;
	/*
	 * as the platform device's (dev.c); a PCI function carries
	 * dma_parms: this cannot fail
	 */
	dma_set_max_seg_size(&pdev->dev,
			     min_t(size_t, UINT_MAX,
				   dma_max_mapping_size(&pdev->dev)));

	mutex_lock(&rsim_dma_fns_lock);
	list_add_tail(&fn->list, &rsim_dma_fns);
	mutex_unlock(&rsim_dma_fns_lock);
	pci_info(pdev, "rdmasim devices may map through this function (%s)\n",
		 rsim_dma_domain_name(&pdev->dev));
	return 0;
}

static void rsim_dma_pci_remove(struct pci_dev *pdev)
{
	/* the devices that map through it, then the function */
	rsim_del_dma_users(&pdev->dev);
}

static struct pci_driver rsim_dma_pci_driver = {
	.name = "rdmasim_dma",
	.id_table = rsim_dma_pci_ids,
	.probe = rsim_dma_pci_probe,
	.remove = rsim_dma_pci_remove,
	.driver = {
		/* rsim_dma_pci_get() answers whether it bound */
		.probe_type = PROBE_FORCE_SYNCHRONOUS,
		/* the devices' mappings live as long as the binding */
		.suppress_bind_attrs = true,
	},
};

/**
 * rsim_dma_pci_lock() - begin making a device that maps through a
 *	function: no other binds or lets one go until rsim_dma_pci_unlock()
 *
 * Context: Process context; before main.c's device list lock.
 */
void rsim_dma_pci_lock(void)
{
	mutex_lock(&rsim_dma_bind_lock);
}

/**
 * rsim_dma_pci_unlock() - end what rsim_dma_pci_lock() began
 *
 * Context: Process context.
 */
void rsim_dma_pci_unlock(void)
{
	mutex_unlock(&rsim_dma_bind_lock);
}

/**
 * rsim_dma_pci_get() - the function @name names, bound to rdmasim_dma
 * @name: "DDDD:BB:DD.F" (hexadecimal, as lspci -D prints it)
 * @pdevp: set to the function, held (pci_dev_put() when done)
 *
 * Binds the function unless rdmasim_dma has it already. A caller that
 * fails after this lets it go again with rsim_dma_pci_put_new(), before
 * rsim_dma_pci_unlock().
 *
 * Context: Process context, under rsim_dma_pci_lock(); takes the
 * function's device lock.
 * Return: 1 if this call bound it, 0 if it was bound, -EINVAL for a
 * malformed @name, -ENODEV for no such function or one the driver does
 * not take (not QEMU's edu or pci-testdev, nor offered through new_id),
 * -EBUSY for a function another driver has, or the probe's error.
 */
int rsim_dma_pci_get(const char *name, struct pci_dev **pdevp)
{
	unsigned int dom, bus, slot, func;
	struct pci_dev *pdev;
	char end;
	int err;

	/* field widths: more digits than a field has are no wrap, but EINVAL */
	if (sscanf(name, "%8x:%2x:%2x.%1x%c", &dom, &bus, &slot, &func,
		   &end) != 4 || dom > INT_MAX || slot > 0x1f || func > 7)
		return -EINVAL;
	pdev = pci_get_domain_bus_and_slot(dom, bus, PCI_DEVFN(slot, func));
	if (!pdev)
		return -ENODEV;

	lockdep_assert_held(&rsim_dma_bind_lock);
	if (rsim_dma_fn_bound(pdev)) {
		*pdevp = pdev;
		return 0;
	}
	mutex_lock(&rsim_dma_fns_lock);
	rsim_dma_want = pdev;
	mutex_unlock(&rsim_dma_fns_lock);
	err = device_driver_attach(&rsim_dma_pci_driver.driver, &pdev->dev);
	mutex_lock(&rsim_dma_fns_lock);
	rsim_dma_want = NULL;
	mutex_unlock(&rsim_dma_fns_lock);
	/* the list is the truth: a probe that refused may report nothing */
	if (rsim_dma_fn_bound(pdev)) {
		*pdevp = pdev;
		return 1;
	}
	pci_dev_put(pdev);
	return err ? err : -ENODEV;
}

/**
 * rsim_dma_pci_put_new() - let go of a function rsim_dma_pci_get() bound
 *	for a device that was then not made
 * @pdev: the function
 * @bound: rsim_dma_pci_get()'s return value: 1 unbinds the function
 *	(nobody maps through it: nobody else could bind it since), 0 only
 *	drops the reference
 *
 * Context: Process context, under rsim_dma_pci_lock(); not under main.c's
 * device list lock.
 */
void rsim_dma_pci_put_new(struct pci_dev *pdev, int bound)
{
	lockdep_assert_held(&rsim_dma_bind_lock);
	if (bound > 0)
		device_release_driver(&pdev->dev);
	pci_dev_put(pdev);
}

/**
 * rsim_dma_domain_name() - how @dev's DMA addresses reach memory
 * @dev: a DMA device
 *
 * Context: Any context.
 * Return: "iommu" (translated by an IOMMU domain of the DMA API),
 * "iommu passthrough" or "direct".
 */
const char *rsim_dma_domain_name(struct device *dev)
{
	struct iommu_domain *dom = iommu_get_domain_for_dev(dev);

	if (!dom)
		return "direct";
	return iommu_is_dma_domain(dom) ? "iommu" : "iommu passthrough";
}

/**
 * rsim_dma_dev_select() - the DMA device of a device being created
 * @rsim: the device; its platform device set
 * @pdev: the function new_device's dma_pci named, or NULL
 *
 * Sets @rsim->dma_dev and @rsim->dma_domain: @pdev, else the platform
 * device. Called
 * under main.c's device list lock, which rsim_del_dma_users() takes too:
 * a device is never created on a function going away.
 *
 * Context: Process context.
 * Return: 0, or -ENODEV when the function is no longer bound (removed).
 */
int rsim_dma_dev_select(struct rsim_dev *rsim, struct pci_dev *pdev)
{
	struct iommu_domain *dom;
	struct device *dev;

	if (pdev && !rsim_dma_fn_bound(pdev))
		return -ENODEV;
	dev = pdev ? &pdev->dev : &rsim->pdev->dev;
	rsim->dma_dev = dev;
	dom = iommu_get_domain_for_dev(dev);
	rsim->dma_domain = dom && iommu_is_dma_domain(dom) ? dom : NULL;
	return 0;
}

/**
 * rsim_dma_to_phys() - the physical address the device reaches at @dma
 * @rsim: the device
 * @dma: a DMA address of @rsim->dma_dev's
 *
 * Context: Any context.
 * Return: the translation through the IOMMU domain's page tables when one
 * translates (0 for an address it does not map), else dma-direct's.
 */
phys_addr_t rsim_dma_to_phys(struct rsim_dev *rsim, u64 dma)
{
	if (rsim->dma_domain)
		return iommu_iova_to_phys(rsim->dma_domain, dma);
	return dma_to_phys(rsim->dma_dev, dma);
}

/**
 * rsim_dma_pci_init() - register rdmasim_dma, which binds nothing yet
 *
 * Context: Process context (module load).
 * Return: 0 or pci_register_driver()'s error.
 */
int rsim_dma_pci_init(void)
{
	return pci_register_driver(&rsim_dma_pci_driver);
}

/**
 * rsim_dma_pci_exit() - let every function go (every device deleted)
 *
 * Context: Process context (module unload).
 */
void rsim_dma_pci_exit(void)
{
	pci_unregister_driver(&rsim_dma_pci_driver);
}

/**
 * rsim_dma_pci_forget() - @dev's function is going: no device maps
 *	through it any more
 * @dev: the function's device
 *
 * Called by rsim_del_dma_users() under main.c's device list lock, once
 * every device that mapped through it is deleted.
 *
 * Context: Process context.
 */
void rsim_dma_pci_forget(struct device *dev)
{
	struct rsim_dma_fn *fn;

	mutex_lock(&rsim_dma_fns_lock);
	fn = rsim_dma_fn_find_locked(to_pci_dev(dev));
	if (fn)
		list_del(&fn->list);
	mutex_unlock(&rsim_dma_fns_lock);
}
