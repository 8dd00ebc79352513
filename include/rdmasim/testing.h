/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rdmasim: functions that are static unless the kernel has KUnit, where
 * they are exported to rdmasim_kunit.ko (VISIBLE_IF_KUNIT /
 * EXPORT_SYMBOL_IF_KUNIT, the spi/internals.h pattern).
 */
#ifndef RDMASIM_TESTING_H
#define RDMASIM_TESTING_H

#include <linux/kconfig.h>
#include <linux/types.h>

struct scatterlist;

#if IS_ENABLED(CONFIG_KUNIT)
/* mr.c */
int rsim_mr_sg_prefix(struct scatterlist *sgl, int nents, unsigned int offset,
		      u64 page_size);
#endif

#endif /* RDMASIM_TESTING_H */
