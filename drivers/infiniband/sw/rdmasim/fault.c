// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: fault injection.
 *
 * Each site has two layers:
 *  - a deterministic one-shot countdown, fail_nth: write N and the N-th
 *    check of the site from now fails, once. Tests walk N = 1, 2, ... over
 *    a verb to fail each of its allocation points in turn, the way the
 *    kernel's /proc/<pid>/fail-nth works for a task;
 *  - with CONFIG_FAULT_INJECTION, a struct fault_attr (probability,
 *    interval, times, ...) for soak testing, under the same debugfs
 *    directory when CONFIG_FAULT_INJECTION_DEBUG_FS is set.
 *
 * /sys/kernel/debug/rdmasim/rdmasim<N>/fault/<site>/{fail_nth,injected,...}
 */

#include <linux/debugfs.h>
#include <linux/fault-inject.h>
#include <kunit/visibility.h>

#include "rdmasim.h"

static const char * const rsim_fault_names[RSIM_FAULT_NR] = {
	[RSIM_FAULT_ALLOC] = "alloc",
};

void rsim_fault_init(struct rsim_dev *rsim)
{
	int i;

	for (i = 0; i < RSIM_FAULT_NR; i++) {
		struct rsim_fault_point *fp = &rsim->fault[i];

		atomic_set(&fp->nth, 0);
		atomic_set(&fp->injected, 0);
#ifdef CONFIG_FAULT_INJECTION
		fp->attr = (struct fault_attr)FAULT_ATTR_INITIALIZER;
#endif
	}
}

/**
 * rsim_should_fail() - decide whether this pass through @site fails
 * @rsim: device
 * @site: injection site
 *
 * Context: any.
 * Return: true if the caller must fail as if its allocation had failed.
 */
bool rsim_should_fail(struct rsim_dev *rsim, enum rsim_fault_site site)
{
	struct rsim_fault_point *fp = &rsim->fault[site];
	int n = atomic_read(&fp->nth);
	bool fail = false;

	while (n > 0) {
		if (atomic_try_cmpxchg(&fp->nth, &n, n - 1)) {
			fail = n == 1;
			break;
		}
	}
#ifdef CONFIG_FAULT_INJECTION
	if (!fail)
		fail = should_fail(&fp->attr, 1);
#endif
	if (fail)
		atomic_inc(&fp->injected);
	return fail;
}

/**
 * rsim_fault_set_nth() - arm the one-shot countdown of @site
 * @rsim: device
 * @site: injection site
 * @nth: the @nth check from now fails; 0 disarms
 */
void rsim_fault_set_nth(struct rsim_dev *rsim, enum rsim_fault_site site,
			int nth)
{
	atomic_set(&rsim->fault[site].nth, nth);
}
EXPORT_SYMBOL_IF_KUNIT(rsim_fault_set_nth);

/**
 * rsim_fault_get_nth() - what is left of the countdown of @site
 * @rsim: device
 * @site: injection site
 *
 * Return: 0 if disarmed or fired, else the checks left until it fires.
 */
int rsim_fault_get_nth(struct rsim_dev *rsim, enum rsim_fault_site site)
{
	return atomic_read(&rsim->fault[site].nth);
}
EXPORT_SYMBOL_IF_KUNIT(rsim_fault_get_nth);

/**
 * rsim_fault_injected() - failures injected at @site so far
 * @rsim: device
 * @site: injection site
 *
 * Return: the count.
 */
int rsim_fault_injected(struct rsim_dev *rsim, enum rsim_fault_site site)
{
	return atomic_read(&rsim->fault[site].injected);
}
EXPORT_SYMBOL_IF_KUNIT(rsim_fault_injected);

void rsim_fault_debugfs_init(struct rsim_dev *rsim)
{
	struct dentry *top, *dir;
	int i;

	top = debugfs_create_dir("fault", rsim->debugfs);
	if (IS_ERR(top))
		return;
	for (i = 0; i < RSIM_FAULT_NR; i++) {
		struct rsim_fault_point *fp = &rsim->fault[i];

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
		dir = fault_create_debugfs_attr(rsim_fault_names[i], top,
						&fp->attr);
#else
		dir = debugfs_create_dir(rsim_fault_names[i], top);
#endif
		if (IS_ERR(dir))
			continue;
		debugfs_create_atomic_t("fail_nth", 0600, dir, &fp->nth);
		debugfs_create_atomic_t("injected", 0400, dir, &fp->injected);
	}
}
