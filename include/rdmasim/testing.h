/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rdmasim: what the KUnit module (rdmasim_kunit.ko) uses from the driver.
 *
 * Every function here is exported with EXPORT_SYMBOL_IF_KUNIT: only to the
 * EXPORTED_FOR_KUNIT_TESTING namespace, and only when the kernel has
 * KUnit. Those under CONFIG_KUNIT are also VISIBLE_IF_KUNIT: static
 * without KUnit (the spi/internals.h pattern). The rest of the driver
 * calls some of them as well; nothing else outside the driver may.
 *
 * The public PUDA API (rdmasim/puda.h, EXPORT_SYMBOL_GPL) is not here.
 *
 * Included by rdmasim.h once the types these prototypes name are defined.
 */
#ifndef RDMASIM_TESTING_H
#define RDMASIM_TESTING_H

#include <linux/kconfig.h>
#include <linux/types.h>

struct rsim_dev;
struct rsim_dev_config;
struct rsim_fault_point;
struct rsim_puda_pool;
struct scatterlist;

/* main.c */
void rsim_default_config(struct rsim_dev_config *cfg);
struct rsim_dev *rsim_dev_new(u32 id, const struct rsim_dev_config *cfg);
int rsim_dev_del(u32 id);

/* dev.c */
const char *rsim_res_name(enum rsim_res_type type);
int rsim_res_count(struct rsim_dev *rsim, enum rsim_res_type type);

/* fault.c: any injection point, the device's or the PUDA library's */
void rsim_fault_set_nth(struct rsim_fault_point *fp, int nth);
int rsim_fault_get_nth(struct rsim_fault_point *fp);
int rsim_fault_injected(struct rsim_fault_point *fp);
int rsim_fault_trace_start(struct rsim_fault_point *fp, u32 cap);
int rsim_fault_trace_read(struct rsim_fault_point *fp, unsigned long *ip,
			  u32 max);
unsigned long rsim_fault_injected_at(struct rsim_fault_point *fp);

/* puda.c */
struct rsim_fault_point *rsim_puda_fault(struct rsim_puda_pool *pool,
					 enum rsim_puda_fault_site site);
void rsim_puda_set_grow_hook(struct rsim_puda_pool *pool,
			     void (*fn)(void *data), void *data);
int rsim_puda_live_mappings(void);

#if IS_ENABLED(CONFIG_KUNIT)
/* mr.c */
struct rsim_mr;
int rsim_mr_sg_prefix(struct scatterlist *sgl, int nents, unsigned int offset,
		      u64 page_size);
int rsim_sg_to_pages(struct rsim_mr *mr, struct scatterlist *sgl,
		     int sg_nents, unsigned int *sg_offset_p);
#endif

#endif /* RDMASIM_TESTING_H */
