// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: DMA handles, the kernel side of ibv_alloc_dmah().
 *
 * A DMA handle carries PCIe TPH hints for the memory an MR registers: the
 * CPU whose cache the DMA should target (steering tag), the memory type
 * (volatile or persistent) and a processing hint (PH, 2 bits). The core
 * (uverbs_std_types_dmah.c) allocates the handle, checks the CPU against
 * nr_cpu_ids and the caller's allowed CPUs and PH's range, and calls
 * alloc_dmah; it refuses dealloc while an MR uses the handle. On top of
 * that this device applies mlx5's rules (mlx5/dmah.c): PH must be given,
 * and a CPU and a memory type come together or not at all. The same
 * checks run here again, so that a kernel caller gets the errno userspace
 * would.
 *
 * A software device has no PCIe function, so the hints act on the data
 * path instead (dp.c): work that targets an MR bound to a handle with a
 * CPU runs on that CPU's worker, writes into an MR whose handle says
 * persistent memory use cache-flushing copies, and the processing hint of
 * each access is counted. debugfs shows all of it.
 *
 * Built only where the kernel has DMA handles (compat.h has the stubs).
 */

#include <kunit/visibility.h>
#include <linux/cpumask.h>
#include <linux/sched.h>

#include "rdmasim.h"

#define RSIM_DMAH_FIELDS	(BIT(IB_DMAH_CPU_ID_EXISTS) |		\
				 BIT(IB_DMAH_MEM_TYPE_EXISTS) |		\
				 BIT(IB_DMAH_PH_EXISTS))

/**
 * struct rsim_dmah - a DMA handle
 * @ibdmah: core object; must be first
 */
struct rsim_dmah {
	struct ib_dmah ibdmah;
};

/**
 * rsim_dmah_check() - are a handle's attributes acceptable?
 * @d: the handle, with @d->valid_fields saying which attributes were given
 * @allowed: the CPUs the caller may name (its task's allowed CPUs)
 *
 * In the order userspace meets the checks: the ioctl parser (a memory
 * type it does not know: -EOPNOTSUPP), the core's handler (CPU id and PH
 * range: -EINVAL; a CPU outside @allowed: -EPERM), then mlx5's rules (no
 * PH, or a CPU without a memory type or the other way round: -EINVAL).
 * Unknown attribute bits are refused with -EINVAL.
 *
 * Context: any.
 * Return: 0 or the errno above.
 */
int rsim_dmah_check(const struct ib_dmah *d, const struct cpumask *allowed)
{
	bool cpu = d->valid_fields & BIT(IB_DMAH_CPU_ID_EXISTS);
	bool mem = d->valid_fields & BIT(IB_DMAH_MEM_TYPE_EXISTS);
	bool ph = d->valid_fields & BIT(IB_DMAH_PH_EXISTS);

	if (d->valid_fields & ~RSIM_DMAH_FIELDS)
		return -EINVAL;
	if (mem && d->mem_type != TPH_MEM_TYPE_VM &&
	    d->mem_type != TPH_MEM_TYPE_PM)
		return -EOPNOTSUPP;
	if (cpu && d->cpu_id >= nr_cpu_ids)
		return -EINVAL;
	if (cpu && !cpumask_test_cpu(d->cpu_id, allowed))
		return -EPERM;
	if (ph && (d->ph & ~3))
		return -EINVAL;
	/* mlx5: "PH is a must"; no partial steering data */
	if (!ph || cpu != mem)
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_dmah_check);

static int rsim_alloc_dmah(struct ib_dmah *ibdmah,
			   struct uverbs_attr_bundle *attrs)
{
	struct rsim_dev *rsim = to_rsim_dev(ibdmah->device);
	int err;

	err = rsim_dmah_check(ibdmah, current->cpus_ptr);
	if (err)
		return err;
	if (!rsim_res_get(rsim, RSIM_RES_DMAH))
		return -ENOMEM;
	return 0;
}

static int rsim_dealloc_dmah(struct ib_dmah *ibdmah,
			     struct uverbs_attr_bundle *attrs)
{
	/* the core checked it too; a kernel caller gets the same answer */
	if (atomic_read(&ibdmah->usecnt))
		return -EBUSY;
	rsim_res_put(to_rsim_dev(ibdmah->device), RSIM_RES_DMAH);
	return 0;
}

/**
 * rsim_dmah_bind() - an MR registered with a DMA handle takes its hints
 * @mr: the MR, not yet visible to anyone
 * @dmah: the handle, or NULL
 *
 * The MR holds the handle (its use count) until rsim_dmah_unbind(), on top
 * of the core's own count, so that a kernel caller cannot free a handle an
 * MR still uses either.
 *
 * Context: any.
 */
void rsim_dmah_bind(struct rsim_mr *mr, struct ib_dmah *dmah)
{
	mr->dmah = dmah;
	if (!dmah)
		return;
	atomic_inc(&dmah->usecnt);
	if (dmah->valid_fields & BIT(IB_DMAH_CPU_ID_EXISTS))
		mr->hints.cpu = dmah->cpu_id;
	mr->hints.pmem = rsim_dmah_is_pmem(dmah);
	if (dmah->valid_fields & BIT(IB_DMAH_PH_EXISTS))
		mr->hints.ph = dmah->ph;
}

/**
 * rsim_dmah_is_pmem() - a DMA handle says its memory is persistent
 * @dmah: the handle, or NULL
 *
 * Context: any.
 * Return: true if it names TPH_MEM_TYPE_PM.
 */
bool rsim_dmah_is_pmem(const struct ib_dmah *dmah)
{
	return dmah && (dmah->valid_fields & BIT(IB_DMAH_MEM_TYPE_EXISTS)) &&
	       dmah->mem_type == TPH_MEM_TYPE_PM;
}

/**
 * rsim_dmah_unbind() - the MR lets its DMA handle go
 * @mr: the MR being deregistered
 *
 * Context: any.
 */
void rsim_dmah_unbind(struct rsim_mr *mr)
{
	if (mr->dmah)
		atomic_dec(&mr->dmah->usecnt);
	mr->dmah = NULL;
}

static const struct ib_device_ops rsim_dmah_ops = {
	.alloc_dmah = rsim_alloc_dmah,
	.dealloc_dmah = rsim_dealloc_dmah,

	INIT_RDMA_OBJ_SIZE(ib_dmah, rsim_dmah, ibdmah),
};

/**
 * rsim_dmah_set_ops() - give the device the DMA handle verbs
 * @ibdev: the device, before registration
 *
 * Context: process.
 */
void rsim_dmah_set_ops(struct ib_device *ibdev)
{
	ib_set_device_ops(ibdev, &rsim_dmah_ops);
}
