// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: fault injection, one mechanism for the whole module.
 *
 * An injection point (struct rsim_fault_point) has two layers:
 *  - a deterministic one-shot countdown, fail_nth: write N and the N-th
 *    check of the point from now fails, once. Tests walk N = 1, 2, ... over
 *    an operation to fail each of its allocation points in turn, the way
 *    the kernel's /proc/<pid>/fail-nth works for a task;
 *  - optionally, with CONFIG_FAULT_INJECTION, a struct fault_attr
 *    (probability, interval, times, ...) for soak testing, under the same
 *    debugfs directory when CONFIG_FAULT_INJECTION_DEBUG_FS is set.
 *
 * The device's sites (enum rsim_fault_site) and the PUDA library's (every
 * pool's, and the library-wide ones, enum rsim_puda_fault_site) are such
 * points, with one debugfs layout for all of them:
 *
 *   <owner>/fault/<site>/{fail_nth,injected[,probability,interval,...]}
 *
 * where <owner> is rdmasim<N>/, puda/ or a pool's directory.
 */

#include <linux/debugfs.h>
#include <linux/fault-inject.h>
#include <kunit/visibility.h>

#include "rdmasim.h"

static const char * const rsim_fault_names[RSIM_FAULT_NR] = {
	[RSIM_FAULT_ALLOC] = "alloc",
};

/**
 * rsim_fault_point_init() - disarm a point and reset its counter
 * @fp: the point
 * @store: room for its probabilistic layer, initialised here (default:
 *	never fails), or NULL for a countdown alone; ignored without
 *	CONFIG_FAULT_INJECTION
 *
 * Context: any; no check of @fp may run meanwhile.
 */
void rsim_fault_point_init(struct rsim_fault_point *fp,
			   struct rsim_fault_attr *store)
{
	atomic_set(&fp->nth, 0);
	atomic_set(&fp->injected, 0);
	fp->attr = NULL;
#ifdef CONFIG_FAULT_INJECTION
	if (store) {
		store->attr = (struct fault_attr)FAULT_ATTR_INITIALIZER;
		fp->attr = &store->attr;
	}
#endif
}

/**
 * rsim_fault_check() - decide whether this pass through @fp fails
 * @fp: the point
 *
 * Context: any.
 * Return: true if the caller must fail as if its operation had failed.
 */
bool rsim_fault_check(struct rsim_fault_point *fp)
{
	int n = atomic_read(&fp->nth);
	bool fail = false;

	while (n > 0) {
		if (atomic_try_cmpxchg(&fp->nth, &n, n - 1)) {
			fail = n == 1;
			break;
		}
	}
#ifdef CONFIG_FAULT_INJECTION
	if (!fail && fp->attr)
		fail = should_fail(fp->attr, 1);
#endif
	if (fail)
		atomic_inc(&fp->injected);
	return fail;
}

/**
 * rsim_fault_set_nth() - arm the one-shot countdown of a point
 * @fp: the point
 * @nth: the @nth check from now fails; 0 disarms
 *
 * The same countdown is the point's debugfs file fail_nth.
 */
void rsim_fault_set_nth(struct rsim_fault_point *fp, int nth)
{
	atomic_set(&fp->nth, nth);
}
EXPORT_SYMBOL_IF_KUNIT(rsim_fault_set_nth);

/**
 * rsim_fault_get_nth() - what is left of the countdown of a point
 * @fp: the point
 *
 * Return: 0 if disarmed or fired, else the checks left until it fires.
 */
int rsim_fault_get_nth(struct rsim_fault_point *fp)
{
	return atomic_read(&fp->nth);
}
EXPORT_SYMBOL_IF_KUNIT(rsim_fault_get_nth);

/**
 * rsim_fault_injected() - failures a point injected so far
 * @fp: the point
 *
 * Return: the count, by either layer (debugfs: injected).
 */
int rsim_fault_injected(struct rsim_fault_point *fp)
{
	return atomic_read(&fp->injected);
}
EXPORT_SYMBOL_IF_KUNIT(rsim_fault_injected);

/**
 * rsim_fault_debugfs_create() - the debugfs directories of a set of points
 * @parent: the owner's directory; nothing is created if it is NULL or an
 *	error
 * @fp: @n points
 * @names: their names
 * @n: number of points
 *
 * Creates @parent/fault/<name>/ for each point, with fail_nth, injected
 * and, for a point with a fault_attr and CONFIG_FAULT_INJECTION_DEBUG_FS,
 * the fault_attr's files. Removed with @parent.
 */
void rsim_fault_debugfs_create(struct dentry *parent,
			       struct rsim_fault_point *fp,
			       const char * const *names, int n)
{
	struct dentry *top, *dir;
	int i;

	if (IS_ERR_OR_NULL(parent))
		return;
	top = debugfs_create_dir("fault", parent);
	if (IS_ERR(top))
		return;
	for (i = 0; i < n; i++) {
#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
		if (fp[i].attr)
			dir = fault_create_debugfs_attr(names[i], top,
							fp[i].attr);
		else
#endif
			dir = debugfs_create_dir(names[i], top);
		if (IS_ERR(dir))
			continue;
		debugfs_create_atomic_t("fail_nth", 0600, dir, &fp[i].nth);
		debugfs_create_atomic_t("injected", 0400, dir, &fp[i].injected);
	}
}

/**
 * rsim_fault_init() - initialise a device's injection points
 * @rsim: device
 *
 * Every site gets a countdown and a fault_attr.
 */
void rsim_fault_init(struct rsim_dev *rsim)
{
	int i;

	for (i = 0; i < RSIM_FAULT_NR; i++)
		rsim_fault_point_init(&rsim->fault[i], &rsim->fault_attr[i]);
}

/**
 * rsim_fault_debugfs_init() - rdmasim<N>/fault/<site>/
 * @rsim: device, with its debugfs directory made
 */
void rsim_fault_debugfs_init(struct rsim_dev *rsim)
{
	rsim_fault_debugfs_create(rsim->debugfs, rsim->fault, rsim_fault_names,
				  RSIM_FAULT_NR);
}

/**
 * rsim_should_fail() - decide whether this pass through a device site fails
 * @rsim: device
 * @site: injection site
 *
 * Context: any.
 * Return: true if the caller must fail as if its allocation had failed.
 */
bool rsim_should_fail(struct rsim_dev *rsim, enum rsim_fault_site site)
{
	return rsim_fault_check(&rsim->fault[site]);
}
