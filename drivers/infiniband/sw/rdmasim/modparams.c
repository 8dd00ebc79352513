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
 */

#include <linux/moduleparam.h>
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

/**
 * rsim_param_num_devices() - how many devices the module makes at load
 *
 * Context: any.
 * Return: num_devices.
 */
unsigned int rsim_param_num_devices(void)
{
	return num_devices;
}

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
 * rsim_param_dma_pci() - the PCI function the devices map through
 *
 * Context: any.
 * Return: dma_pci, or NULL.
 */
const char *rsim_param_dma_pci(void)
{
	return dma_pci;
}
