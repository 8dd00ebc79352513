// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: a PCI function lent to the devices as their DMA device.
 *
 * A software device has no bus of its own: rdmasim's DMA device is its
 * platform device, which dma-direct maps (physical addresses, or swiotlb
 * bounce slots). The module parameter dma_pci names a PCI function, such
 * as QEMU's "edu" or "pci-testdev", which the driver "rdmasim_dma" binds;
 * every rdmasim device created while it is bound maps through it. Behind
 * an IOMMU its DMA addresses are I/O virtual addresses of the function's
 * domain: the RDMA core's and the ULPs' mappings, the PUDA pool's and the
 * data path's reads and writes then go through the IOMMU's page tables
 * (rsim_dma_to_phys()), as a real HCA's accesses do.
 *
 * The function does no DMA itself: the simulated device's engine is the
 * CPU. Binding it keeps its IOMMU domain the DMA API's and keeps other
 * drivers (vfio-pci, uio) off it while the devices use it. It has no bind
 * or unbind files; if it is removed (hot unplug), the devices that map
 * through it go first.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-direct.h>
#include <linux/dma-mapping.h>
#include <linux/iommu.h>
#include <linux/pci.h>

#include "rdmasim.h"

static DEFINE_MUTEX(rsim_dma_pci_lock);	/* protects rsim_dma_pci_dev */
static struct pci_dev *rsim_dma_pci_dev;

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

static int rsim_dma_pci_probe(struct pci_dev *pdev,
			      const struct pci_device_id *id)
{
	int err;

	/* only the function the parameter names */
	if (!rsim_param_dma_pci() ||
	    strcmp(pci_name(pdev), rsim_param_dma_pci()))
		return -ENODEV;
	err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (err)
		err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(32));
	if (err)
		return err;
	/*
	 * as the platform device's (dev.c); a PCI function carries
	 * dma_parms: this cannot fail
	 */
	dma_set_max_seg_size(&pdev->dev,
			     min_t(size_t, UINT_MAX,
				   dma_max_mapping_size(&pdev->dev)));

	mutex_lock(&rsim_dma_pci_lock);
	rsim_dma_pci_dev = pdev;
	mutex_unlock(&rsim_dma_pci_lock);
	pci_info(pdev, "rdmasim devices map through this function (%s)\n",
		 rsim_dma_domain_name(&pdev->dev));
	return 0;
}

static void rsim_dma_pci_remove(struct pci_dev *pdev)
{
	/* the devices that map through it, then the function */
	rsim_del_dma_users();
}

static struct pci_driver rsim_dma_pci_driver = {
	.name = "rdmasim_dma",
	.id_table = rsim_dma_pci_ids,
	.probe = rsim_dma_pci_probe,
	.remove = rsim_dma_pci_remove,
	.driver = {
		/* rsim_dma_pci_init() answers whether it bound */
		.probe_type = PROBE_FORCE_SYNCHRONOUS,
		/* the devices' mappings live as long as the binding */
		.suppress_bind_attrs = true,
	},
};

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
 *
 * Sets @rsim->dma_dev and @rsim->dma_domain: the function dma_pci names
 * while it is bound, else the platform device. Called under main.c's
 * device list lock, which rsim_del_dma_users() takes too: a device is
 * never created on a function going away.
 *
 * Context: Process context.
 * Return: 0, or -ENODEV when dma_pci names a function that is not bound.
 */
int rsim_dma_dev_select(struct rsim_dev *rsim)
{
	struct iommu_domain *dom;
	struct device *dev;

	mutex_lock(&rsim_dma_pci_lock);
	dev = rsim_dma_pci_dev ? &rsim_dma_pci_dev->dev : NULL;
	mutex_unlock(&rsim_dma_pci_lock);
	if (!dev && rsim_param_dma_pci())
		return -ENODEV;
	if (!dev)
		dev = &rsim->pdev->dev;
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
 * rsim_dma_pci_init() - bind the function dma_pci names, if it names one
 *
 * Context: Process context (module load).
 * Return: 0, or -ENODEV if it names a function nobody offered the driver
 * (absent, bound to another driver, or of another vendor and device).
 */
int rsim_dma_pci_init(void)
{
	int err;

	if (!rsim_param_dma_pci())
		return 0;
	err = pci_register_driver(&rsim_dma_pci_driver);
	if (err)
		return err;
	mutex_lock(&rsim_dma_pci_lock);
	err = rsim_dma_pci_dev ? 0 : -ENODEV;
	mutex_unlock(&rsim_dma_pci_lock);
	if (err) {
		pr_err("dma_pci=%s: no such function free for rdmasim_dma\n",
		       rsim_param_dma_pci());
		pci_unregister_driver(&rsim_dma_pci_driver);
	}
	return err;
}

/**
 * rsim_dma_pci_exit() - let the function go (every device deleted)
 *
 * Context: Process context (module unload).
 */
void rsim_dma_pci_exit(void)
{
	if (rsim_param_dma_pci())
		pci_unregister_driver(&rsim_dma_pci_driver);
}

/**
 * rsim_dma_pci_forget() - the function is going: map through nobody
 *
 * Called by rsim_del_dma_users() under main.c's device list lock, once
 * every device is deleted.
 *
 * Context: Process context.
 */
void rsim_dma_pci_forget(void)
{
	mutex_lock(&rsim_dma_pci_lock);
	rsim_dma_pci_dev = NULL;
	mutex_unlock(&rsim_dma_pci_lock);
}
