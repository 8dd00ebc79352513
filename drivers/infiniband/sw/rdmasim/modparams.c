// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: the module parameters of the out-of-tree build, kept for the
 * scripts and users that set them. The upstream form has none (make
 * upstream leaves this file out): devices, their LIDs, their SA and the
 * PCI function they map through come from the sysfs new_device interface
 * ("ID [lid=N] [sa=0|1] [dma_pci=DDDD:BB:DD.F]", main.c), the built-in SM
 * and SA from debugfs (rdmasim/fabric/sm), and no device is made at load.
 *
 *   num_devices	devices made at load (default 1: rdmasim0)
 *   base_lid		rdmasim<N>'s LID is base_lid + N unless new_device
 *			names one (default RSIM_DEFAULT_BASE_LID)
 *   sa=0		no device's SA answers (as new_device's sa=0 for each)
 *   dma_pci		the PCI function every device made without
 *			new_device's dma_pci maps through (dma_pci.c)
 *
 * What they change is here and in main.c's and dev.c's RSIM_MODPARAMS
 * blocks, which the upstream form does not have either.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/moduleparam.h>
#include <linux/pci.h>
#include <linux/stringify.h>

#include "rdmasim.h"

static unsigned int num_devices = 1;
module_param(num_devices, uint, 0444);
MODULE_PARM_DESC(num_devices, "Devices created at load (default 1)");

static unsigned int base_lid = RSIM_DEFAULT_BASE_LID;
module_param(base_lid, uint, 0444);
MODULE_PARM_DESC(base_lid,
		 "LID of rdmasim0, 1..0xbfff; rdmasim<N> gets base_lid + N (default "
		 __stringify(RSIM_DEFAULT_BASE_LID) ")");

static bool sa = true;
module_param(sa, bool, 0444);
MODULE_PARM_DESC(sa, "answer as the subnet administrator (default 1; 0 leaves the SA class to another SM)");

static char *dma_pci;
module_param(dma_pci, charp, 0444);
MODULE_PARM_DESC(dma_pci,
		 "PCI function (domain:bus:device.function) the devices made without new_device's dma_pci map through, bound by the driver rdmasim_dma (QEMU's edu or pci-testdev; others by its new_id); default: none, each device maps through its platform device");

/* the function dma_pci names, bound and held from load to unload */
static struct pci_dev *dma_pci_dev;

/**
 * rsim_param_base_lid() - rdmasim0's LID, the others' base
 *
 * Context: any.
 * Return: base_lid.
 */
unsigned int rsim_param_base_lid(void)
{
	return base_lid;
}

/**
 * rsim_param_sa() - may the devices' SA answer at all?
 *
 * Context: any.
 * Return: sa.
 */
bool rsim_param_sa(void)
{
	return sa;
}

/**
 * rsim_param_dma_pci() - the function the devices made without
 *	new_device's dma_pci map through
 *
 * Context: any; set from load to unload.
 * Return: the function dma_pci names, or NULL.
 */
struct pci_dev *rsim_param_dma_pci(void)
{
	return dma_pci_dev;
}

/**
 * rsim_modparams_init() - check the parameters, bind dma_pci's function
 *	and make the num_devices devices of the load
 *
 * Called once the drivers are registered.
 *
 * Context: Process context (module load).
 * Return: 0; -EINVAL if base_lid is not a unicast LID, -ERANGE if a
 * device made at load would have none, rsim_dma_pci_get()'s error for
 * dma_pci's function, or the first creation's error. On an error the
 * function is let go; the devices made before it stay (the caller
 * deletes them).
 */
int rsim_modparams_init(void)
{
	struct rsim_dev_config cfg;
	unsigned int i;
	u16 lid;
	int err;

	/* every device the load creates needs a unicast LID */
	err = rsim_dev_lid(0, base_lid, 0, &lid);
	if (err) {
		pr_err("base_lid %u is not a unicast LID (1..0x%x)\n",
		       base_lid, RSIM_LID_UNICAST_MAX);
		return err;
	}
	if (num_devices) {
		err = rsim_dev_lid(0, base_lid, num_devices - 1, &lid);
		if (err) {
			pr_err("base_lid %u leaves no LID for " RSIM_DEV_NAME_FMT "\n",
			       base_lid, num_devices - 1);
			return err;
		}
	}
	if (dma_pci) {
		rsim_dma_pci_lock();
		err = rsim_dma_pci_get(dma_pci, &dma_pci_dev);
		rsim_dma_pci_unlock();
		if (err < 0) {
			pr_err("dma_pci=%s: no such function free for rdmasim_dma: %d\n",
			       dma_pci, err);
			return err;
		}
	}

	rsim_default_config(&cfg);
	for (i = 0; i < num_devices; i++) {
		struct rsim_dev *rsim = rsim_dev_new(i, &cfg);

		if (IS_ERR(rsim)) {
			err = PTR_ERR(rsim);
			pr_err("creating " RSIM_DEV_NAME_FMT " failed: %d\n", i, err);
			rsim_modparams_exit();
			return err;
		}
	}
	return 0;
}

/**
 * rsim_modparams_exit() - let go of dma_pci's function (rdmasim_dma keeps
 *	it bound until it is unregistered)
 *
 * Context: Process context (module unload).
 */
void rsim_modparams_exit(void)
{
	pci_dev_put(dma_pci_dev);
	dma_pci_dev = NULL;
}
