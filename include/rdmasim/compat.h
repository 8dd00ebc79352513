/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rdmasim: the only place that knows how supported kernels differ.
 *
 * Kernel differences are found by the probes in the top-level Kbuild (they
 * grep the target kernel's headers) and arrive here as RSIM_HAVE_* macros.
 * Nothing compares version numbers: Debian's stable kernels carry backports
 * that make version checks wrong.
 */
#ifndef RDMASIM_COMPAT_H
#define RDMASIM_COMPAT_H

#include <linux/module.h>
#include <linux/slab.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

/*
 * The alignment that keeps a DMA buffer off its neighbours' cache lines
 * where the architecture needs it; ARCH_DMA_MINALIGN is defined for every
 * architecture only since 6.4.
 */
#ifdef ARCH_DMA_MINALIGN
#define RSIM_DMA_MINALIGN	ARCH_DMA_MINALIGN
#else
#define RSIM_DMA_MINALIGN	__alignof__(unsigned long long)
#endif

/*
 * create_cq() takes a uverbs_attr_bundle (6.12 and later) or an ib_udata
 * (6.1). Kernel CQs get NULL either way.
 */
#ifdef RSIM_HAVE_CQ_ATTR_BUNDLE
#define RSIM_CREATE_CQ_EXTRA	struct uverbs_attr_bundle
#define RSIM_CREATE_CQ_UDATA(extra)	(&(extra)->driver_udata)
#else
#define RSIM_CREATE_CQ_EXTRA	struct ib_udata
#define RSIM_CREATE_CQ_UDATA(extra)	(extra)
#endif

/*
 * resize_cq() (6.1, 6.12) became resize_user_cq() (7.x), with an unsigned
 * count: RSIM_RESIZE_CQ_OP names the op, RSIM_RESIZE_CQE its count's type.
 */
#ifdef RSIM_HAVE_RESIZE_USER_CQ
#define RSIM_RESIZE_CQ_OP	resize_user_cq
#define RSIM_RESIZE_CQE		unsigned int
#else
#define RSIM_RESIZE_CQ_OP	resize_cq
#define RSIM_RESIZE_CQE		int
#endif

/*
 * A device name "rdma link add" gave is marked as the user's (6.8 and
 * later), so that rdma-ndd and udev's naming rules leave it alone, as rxe
 * and siw do; before, nothing renamed such a device.
 */
static inline void rsim_mark_name_by_user(struct ib_device *ibdev)
{
#ifdef RSIM_HAVE_NAME_BY_USER
	ib_mark_name_assigned_by_user(ibdev);
#endif
}

/*
 * IBA annex A19's memory placement operations, RDMA FLUSH and ATOMIC
 * WRITE: their access rights, opcodes, completions and device flags came
 * together (6.2 and later). Before, RSIM_PLACEMENT is false: no right,
 * no flag, and the opcodes (the uverbs ABI's numbers, which a mapped send
 * queue's slot may still carry) are refused.
 */
#ifdef RSIM_HAVE_ACCESS_FLUSH
#define RSIM_PLACEMENT		true
#define RSIM_ACCESS_FLUSH	(IB_ACCESS_FLUSH_GLOBAL | IB_ACCESS_FLUSH_PERSISTENT)
#define RSIM_ACCESS_FLUSH_GLOBAL	IB_ACCESS_FLUSH_GLOBAL
#define RSIM_ACCESS_FLUSH_PERSISTENT	IB_ACCESS_FLUSH_PERSISTENT
#define RSIM_DEVICE_PLACEMENT	(IB_DEVICE_FLUSH_GLOBAL |		\
				 IB_DEVICE_FLUSH_PERSISTENT |		\
				 IB_DEVICE_ATOMIC_WRITE)
#define RSIM_WR_FLUSH		IB_WR_FLUSH
#define RSIM_WR_ATOMIC_WRITE	IB_WR_ATOMIC_WRITE
#define RSIM_WC_FLUSH		IB_WC_FLUSH
#define RSIM_WC_ATOMIC_WRITE	IB_WC_ATOMIC_WRITE
#else
#define RSIM_PLACEMENT		false
#define RSIM_ACCESS_FLUSH	0
#define RSIM_ACCESS_FLUSH_GLOBAL	0
#define RSIM_ACCESS_FLUSH_PERSISTENT	0
#define RSIM_DEVICE_PLACEMENT	0
#define RSIM_WR_FLUSH		((enum ib_wr_opcode)14)
#define RSIM_WR_ATOMIC_WRITE	((enum ib_wr_opcode)15)
#define RSIM_WC_FLUSH		((enum ib_wc_opcode)8)
#define RSIM_WC_ATOMIC_WRITE	((enum ib_wc_opcode)9)
#endif
/* IBA A19.4.1: the placement types and selectivity levels (uverbs ABI) */
#define RSIM_FLUSH_GLOBAL	1
#define RSIM_FLUSH_PERSISTENT	2
#define RSIM_FLUSH_RANGE	0
#define RSIM_FLUSH_MR		1

/*
 * reg_user_mr_dmabuf() takes a uverbs_attr_bundle (6.12 and later) or an
 * ib_udata (6.1) last: RSIM_DMABUF_EXTRA(name) declares it.
 */
#ifdef RSIM_HAVE_DMABUF_ATTR_BUNDLE
#define RSIM_DMABUF_EXTRA(name)	struct uverbs_attr_bundle *(name)
#else
#define RSIM_DMABUF_EXTRA(name)	struct ib_udata *(name)
#endif

/*
 * reg_user_mr() gained a struct ib_dmah *dmah before udata with DMA
 * handles. RSIM_DMAH_PARAM declares it in the ops signature,
 * RSIM_DMAH_ARG passes it on (NULL where the kernel has no DMA handles),
 * RSIM_DMAH_ARG_OF(d) passes @d to the op where it takes one.
 */
struct ib_dmah;
#ifdef RSIM_HAVE_IB_DMAH
#define RSIM_DMAH_PARAM		struct ib_dmah *dmah,
#define RSIM_DMAH_ARG		dmah
#define RSIM_DMAH_ARG_OF(d)	(d),
#else
#define RSIM_DMAH_PARAM
#define RSIM_DMAH_ARG		NULL
#define RSIM_DMAH_ARG_OF(d)
#endif

/*
 * DMA handles (dmah.c) exist only where the kernel has them. Elsewhere no
 * MR carries one: rsim_dmah_bind() leaves it without hints, and the device
 * gets no DMA handle verbs. The probe is also in the driver's Kbuild,
 * which builds dmah.c only where it succeeds.
 */
struct rsim_mr;
#ifdef RSIM_HAVE_IB_DMAH
void rsim_dmah_bind(struct rsim_mr *mr, struct ib_dmah *dmah);
bool rsim_dmah_is_pmem(const struct ib_dmah *dmah);
void rsim_dmah_unbind(struct rsim_mr *mr);
void rsim_dmah_set_ops(struct ib_device *ibdev);
#define RSIM_HAVE_DMAH_OPS	1
#else
static inline void rsim_dmah_bind(struct rsim_mr *mr, struct ib_dmah *dmah)
{
}

static inline bool rsim_dmah_is_pmem(const struct ib_dmah *dmah)
{
	return false;
}

static inline void rsim_dmah_unbind(struct rsim_mr *mr)
{
}

static inline void rsim_dmah_set_ops(struct ib_device *ibdev)
{
}

#define RSIM_HAVE_DMAH_OPS	0
#endif

/* kzalloc_obj()/kzalloc_objs() (7.0, and Debian's 6.12) type the result. */
#ifdef RSIM_HAVE_KZALLOC_OBJ
#define rsim_kzalloc_obj(obj, gfp)	kzalloc_obj(obj, gfp)
#define rsim_kzalloc_objs(obj, n, gfp)	kzalloc_objs(obj, n, gfp)
#else
#define rsim_kzalloc_obj(obj, gfp)	kzalloc(sizeof(obj), gfp)
#define rsim_kzalloc_objs(obj, n, gfp)	kcalloc(n, sizeof(obj), gfp)
#endif

/* ib_umem_get() became ib_umem_get_va() in 7.0. */
static inline struct ib_umem *rsim_umem_get(struct ib_device *ibdev,
					    unsigned long addr, size_t size,
					    int access)
{
#ifdef RSIM_HAVE_UMEM_GET_VA
	return ib_umem_get_va(ibdev, addr, size, access);
#else
	return ib_umem_get(ibdev, addr, size, access);
#endif
}

/*
 * platform_driver.remove returns void since 6.11 and int before.
 * RSIM_PLATFORM_REMOVE_WRAPPER(fn) defines the int-returning wrapper where
 * one is needed; RSIM_PLATFORM_REMOVE(fn) names what goes in .remove.
 */
#ifdef RSIM_HAVE_PLATFORM_REMOVE_VOID
#define RSIM_PLATFORM_REMOVE_WRAPPER(fn)
#define RSIM_PLATFORM_REMOVE(fn)	(fn)
#else
#define RSIM_PLATFORM_REMOVE_WRAPPER(fn)				\
	static int fn##_int(struct platform_device *pdev)		\
	{								\
		fn(pdev);						\
		return 0;						\
	}
#define RSIM_PLATFORM_REMOVE(fn)	(fn##_int)
#endif

/* MODULE_IMPORT_NS() takes a string literal since 6.13, a token before. */
#ifdef RSIM_HAVE_IMPORT_NS_STRING
#define RSIM_IMPORT_KUNIT_NS()	MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING")
#else
#define RSIM_IMPORT_KUNIT_NS()	MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING)
#endif

/*
 * KUnit suites built at run time (the conformance module) run through
 * __kunit_test_suites_init(), which gained a run_tests flag in 6.13.
 */
#ifdef RSIM_HAVE_KUNIT_SUITES_INIT_RUN
#define rsim_kunit_run_suites(suites, n)	\
	__kunit_test_suites_init(suites, n, true)
#else
#define rsim_kunit_run_suites(suites, n)	__kunit_test_suites_init(suites, n)
#endif

/*
 * WARN backtrace suppression for the current task (7.x KUnit): the
 * conformance cases count the WARNs a device's verbs raise instead of
 * printing them. Without it WARNs print, and the log judge sees them;
 * RSIM_KUNIT_COUNTS_WARNS says which (a case that provokes some drivers'
 * WARNs is a hazard where they cannot be counted).
 */
struct kunit_suppressed_warning;
#ifdef RSIM_HAVE_KUNIT_SUPPRESS
#define RSIM_KUNIT_COUNTS_WARNS		1
#define rsim_kunit_warn_begin(test)	kunit_start_suppress_warning(test)
#define rsim_kunit_warn_count(w)	kunit_suppressed_warning_count(w)
#else
#define RSIM_KUNIT_COUNTS_WARNS		0
#define rsim_kunit_warn_begin(test)	((void)(test), NULL)
#define rsim_kunit_warn_count(w)	((void)(w), 0)
#endif

/*
 * 6.17 began to move workqueues to unbound by default: a per-CPU one must
 * say WQ_PERCPU (7.x warns otherwise). Before, per-CPU was the default.
 */
#ifdef RSIM_HAVE_WQ_PERCPU
#define RSIM_WQ_PERCPU		WQ_PERCPU
#else
#define RSIM_WQ_PERCPU		0
#endif

/*
 * 6.3 made a VMA's flags writable only through vm_flags_set() and
 * vm_flags_clear()
 */
#ifdef RSIM_HAVE_VM_FLAGS_SET
#define rsim_vm_flags_set(vma, flags)	vm_flags_set(vma, flags)
#define rsim_vm_flags_clear(vma, flags)	vm_flags_clear(vma, flags)
#else
#define rsim_vm_flags_set(vma, flags)	((vma)->vm_flags |= (flags))
#define rsim_vm_flags_clear(vma, flags)	((vma)->vm_flags &= ~(flags))
#endif

/*
 * On-demand paging (odp.c). The core's per-page state moved from a pfn
 * and a DMA address list (6.x: the core DMA-maps each page it faults, and
 * the access mask is its own ODP_*_ALLOWED_BIT) to an hmm_dma_map (7.x:
 * the driver maps, bumps npages, and the mask is HMM_PFN_WRITE or 0). The
 * pfn list is per PAGE_SIZE page either way, HMM_PFN_VALID/WRITE in it.
 * A DMA device that bounces (swiotlb) or cannot reach all memory gets no
 * ODP: the core's rule on 7.x (hmm_dma_map_alloc()), and ours before, as
 * the device writes the pages themselves and an unmap would copy a stale
 * bounce slot over them.
 */
#if IS_ENABLED(CONFIG_INFINIBAND_ON_DEMAND_PAGING)
#include <linux/dma-mapping.h>
#include <linux/hmm.h>
#include <linux/swiotlb.h>
#include <rdma/ib_umem_odp.h>

#ifdef RSIM_HAVE_HMM_DMA_MAP
#define RSIM_ODP_READ_MASK	0
#define RSIM_ODP_WRITE_MASK	HMM_PFN_WRITE
#define rsim_odp_pfns(umem)	((umem)->map.pfn_list)

static inline bool rsim_odp_dma_ok(struct device *dev)
{
#ifdef CONFIG_DMA_NEED_SYNC
	if (!dev_dma_skip_sync(dev))
		return false;
#endif
	return !dma_addressing_limited(dev);
}

/* map page @idx for the device, once; umem_mutex held */
static inline bool rsim_odp_dma_map(struct ib_umem_odp *umem, size_t idx)
{
	struct pci_p2pdma_map_state p2p = {};
	struct ib_device *dev = umem->umem.ibdev;
	dma_addr_t dma;

	/* mapped, or the zero page of a read-only umem: never written */
	if ((umem->map.pfn_list[idx] & HMM_PFN_DMA_MAPPED) ||
	    is_zero_page(hmm_pfn_to_page(umem->map.pfn_list[idx])))
		return true;
	dma = hmm_dma_map_pfn(dev->dma_device, &umem->map, idx, &p2p);
	if (ib_dma_mapping_error(dev, dma))
		return false;
	umem->npages++;
	return true;
}
#else
#define RSIM_ODP_READ_MASK	ODP_READ_ALLOWED_BIT
#define RSIM_ODP_WRITE_MASK	(ODP_READ_ALLOWED_BIT | ODP_WRITE_ALLOWED_BIT)
#define rsim_odp_pfns(umem)	((umem)->pfn_list)

static inline bool rsim_odp_dma_ok(struct device *dev)
{
	return !is_swiotlb_force_bounce(dev) && !dma_addressing_limited(dev);
}

/* the core mapped it in ib_umem_odp_map_dma_and_lock() */
static inline bool rsim_odp_dma_map(struct ib_umem_odp *umem, size_t idx)
{
	return true;
}
#endif
#endif /* CONFIG_INFINIBAND_ON_DEMAND_PAGING */

/* ODP of FLUSH and ATOMIC WRITE: per-transport bits (kernels after 6.12) */
#ifdef RSIM_HAVE_ODP_SUPPORT_FLUSH
#define RSIM_ODP_SUPPORT_PLACEMENT	(IB_ODP_SUPPORT_FLUSH |		\
					 IB_ODP_SUPPORT_ATOMIC_WRITE)
#else
#define RSIM_ODP_SUPPORT_PLACEMENT	0
#endif

#endif /* RDMASIM_COMPAT_H */
