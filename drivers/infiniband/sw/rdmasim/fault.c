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
 *
 * Every check names its call site (the caller of rsim_should_fail() or of
 * the PUDA library's check: an allocation of the driver). A point keeps
 * the site of its last injected failure (file injected_at) and, while a
 * trace runs (write N to file trace: room for N checks; 0 stops it), the
 * site of each check in order. A clean run of a ULP traced tells a fault
 * sweep which n reaches which allocation of the driver, so that one run
 * per site covers every site (scripts/guest/ulp-fault-sweep.sh).
 */

#include <linux/debugfs.h>
#include <linux/fault-inject.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <kunit/visibility.h>

#include "rdmasim.h"

static const char * const rsim_fault_names[RSIM_FAULT_NR] = {
	[RSIM_FAULT_ALLOC] = "alloc",
	[RSIM_FAULT_ODP] = "odp_fault",
};

/* serializes the replacement of any point's trace (readers use RCU) */
static DEFINE_MUTEX(rsim_fault_trace_lock);

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
	fp->injected_at = 0;
	RCU_INIT_POINTER(fp->trace, NULL);
#ifdef CONFIG_FAULT_INJECTION
	if (store) {
		store->attr = (struct fault_attr)FAULT_ATTR_INITIALIZER;
		fp->attr = &store->attr;
	}
#endif
}
EXPORT_SYMBOL_IF_KUNIT(rsim_fault_point_init);

/**
 * rsim_fault_point_fini() - free what a point holds (its trace)
 * @fp: the point; no check of it may run any more, and its debugfs files
 *	are gone: nothing else can reach its trace
 *
 * Context: any (a PUDA pool goes with the put of its last buffer).
 */
void rsim_fault_point_fini(struct rsim_fault_point *fp)
{
	struct rsim_fault_trace *t = rcu_dereference_protected(fp->trace, 1);

	RCU_INIT_POINTER(fp->trace, NULL);
	if (t)
		kvfree_rcu(t, rcu);
}
EXPORT_SYMBOL_IF_KUNIT(rsim_fault_point_fini);

/* one more check of @fp from @ip, in its trace if one runs */
static void rsim_fault_trace_add(struct rsim_fault_point *fp,
				 unsigned long ip)
{
	struct rsim_fault_trace *t;
	int i;

	rcu_read_lock();
	t = rcu_dereference(fp->trace);
	if (t) {
		i = atomic_inc_return(&t->n) - 1;
		if (i < t->cap)
			WRITE_ONCE(t->ip[i], ip);
	}
	rcu_read_unlock();
}

/**
 * rsim_fault_check() - decide whether this pass through @fp fails
 * @fp: the point
 * @ip: the call site, for the point's trace and injected_at
 *	(the caller's _RET_IP_)
 *
 * Context: any.
 * Return: true if the caller must fail as if its operation had failed.
 */
bool rsim_fault_check(struct rsim_fault_point *fp, unsigned long ip)
{
	int n = atomic_read(&fp->nth);
	bool fail = false;

	rsim_fault_trace_add(fp, ip);

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
	if (fail) {
		WRITE_ONCE(fp->injected_at, ip);
		atomic_inc(&fp->injected);
	}
	return fail;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_fault_check);

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
 * rsim_fault_injected_at() - where the last injected failure of a point was
 * @fp: the point
 *
 * Return: the call site, or 0 if the point never failed.
 */
unsigned long rsim_fault_injected_at(struct rsim_fault_point *fp)
{
	return READ_ONCE(fp->injected_at);
}
EXPORT_SYMBOL_IF_KUNIT(rsim_fault_injected_at);

/**
 * rsim_fault_trace_start() - trace the call sites of a point's checks
 * @fp: the point
 * @cap: room for this many checks (at most %RSIM_FAULT_TRACE_MAX), or 0
 *	to stop tracing
 *
 * A trace already running is dropped. The checks past @cap are counted,
 * not recorded.
 *
 * Context: process; sleeps.
 * Return: 0, -EINVAL for a @cap too large, -ENOMEM.
 */
int rsim_fault_trace_start(struct rsim_fault_point *fp, u32 cap)
{
	struct rsim_fault_trace *t = NULL, *old;

	if (cap > RSIM_FAULT_TRACE_MAX)
		return -EINVAL;
	if (cap) {
		t = kvzalloc(struct_size(t, ip, cap), GFP_KERNEL);
		if (!t)
			return -ENOMEM;
		t->cap = cap;
	}
	mutex_lock(&rsim_fault_trace_lock);
	old = rcu_replace_pointer(fp->trace, t,
				  lockdep_is_held(&rsim_fault_trace_lock));
	mutex_unlock(&rsim_fault_trace_lock);
	if (old)
		kvfree_rcu(old, rcu);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_fault_trace_start);

/**
 * rsim_fault_trace_read() - the trace of a point so far
 * @fp: the point
 * @ip: room for @max call sites, in the order of the checks
 * @max: entries of @ip
 *
 * Return: the checks since the trace began (more than were recorded when
 * it passed its room), or -ENOENT if no trace runs.
 */
int rsim_fault_trace_read(struct rsim_fault_point *fp, unsigned long *ip,
			  u32 max)
{
	struct rsim_fault_trace *t;
	int n = -ENOENT;
	u32 i;

	rcu_read_lock();
	t = rcu_dereference(fp->trace);
	if (t) {
		n = atomic_read(&t->n);
		for (i = 0; i < max && i < t->cap && i < n; i++)
			ip[i] = READ_ONCE(t->ip[i]);
	}
	rcu_read_unlock();
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_fault_trace_read);

/* trace: "checks <n>", then "<i> <call site>" for each recorded check */
static int rsim_fault_trace_show(struct seq_file *m, void *unused)
{
	struct rsim_fault_point *fp = m->private;
	struct rsim_fault_trace *t;
	u32 i, n;

	rcu_read_lock();
	t = rcu_dereference(fp->trace);
	if (t) {
		n = atomic_read(&t->n);
		seq_printf(m, "checks %u\n", n);
		for (i = 0; i < n && i < t->cap; i++)
			seq_printf(m, "%u %pS\n", i + 1,
				   (void *)READ_ONCE(t->ip[i]));
	}
	rcu_read_unlock();
	return 0;
}

static int rsim_fault_trace_open(struct inode *inode, struct file *file)
{
	return single_open(file, rsim_fault_trace_show, inode->i_private);
}

static ssize_t rsim_fault_trace_write(struct file *file,
				      const char __user *buf, size_t len,
				      loff_t *ppos)
{
	struct rsim_fault_point *fp = file_inode(file)->i_private;
	unsigned int cap;
	int err;

	err = kstrtouint_from_user(buf, len, 0, &cap);
	if (err)
		return err;
	err = rsim_fault_trace_start(fp, cap);
	return err ? err : len;
}

static const struct file_operations rsim_fault_trace_fops = {
	.owner = THIS_MODULE,
	.open = rsim_fault_trace_open,
	.read = seq_read,
	.write = rsim_fault_trace_write,
	.llseek = seq_lseek,
	.release = single_release,
};

static int rsim_fault_injected_at_show(struct seq_file *m, void *unused)
{
	struct rsim_fault_point *fp = m->private;
	unsigned long ip = rsim_fault_injected_at(fp);

	if (ip)
		seq_printf(m, "%pS\n", (void *)ip);
	else
		seq_puts(m, "none\n");
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rsim_fault_injected_at);

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
		debugfs_create_file("injected_at", 0400, dir, &fp[i],
				    &rsim_fault_injected_at_fops);
		debugfs_create_file("trace", 0600, dir, &fp[i],
				    &rsim_fault_trace_fops);
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
 * rsim_fault_fini() - free what a device's injection points hold
 * @rsim: device, its debugfs directory removed
 */
void rsim_fault_fini(struct rsim_dev *rsim)
{
	int i;

	for (i = 0; i < RSIM_FAULT_NR; i++)
		rsim_fault_point_fini(&rsim->fault[i]);
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
noinline bool rsim_should_fail(struct rsim_dev *rsim,
			       enum rsim_fault_site site)
{
	return rsim_fault_check(&rsim->fault[site], _RET_IP_);
}
