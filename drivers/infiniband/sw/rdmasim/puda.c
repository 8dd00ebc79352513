// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: the PUDA buffer pool (include/rdmasim/puda.h).
 *
 * Buffers are allocated (header and data in one kmalloc object) and mapped
 * with dma_map_single() once, when the pool grows; get and put move them
 * between lists. With a per-CPU cache (config.cache > 0) the common get
 * and put take only the current CPU's cache lock; the shared list and its
 * lock are touched once per cache refill or flush, a batch of half a cache
 * at a time. A get that finds its cache and the shared list empty takes
 * from other CPUs' caches before it reports the pool empty. With cache 0
 * every get and put takes the pool lock, as irdma's pool does.
 *
 * Lock order: a CPU cache's lock, then the pool lock. Two cache locks are
 * never held at once. The locks are BH-safe, not IRQ-safe: get and put
 * run in process or softirq context (completion handlers run in softirq
 * or a workqueue), and disabling interrupts on every get and put would
 * cost more than the rest of it (on UML, two sigprocmask() calls).
 *
 * Counters: everything about the shared list changes under the pool lock;
 * gets and puts are counted in the CPU cache that served them, under its
 * lock (pool lock when there is no cache), and summed for the statistics.
 * A pool never holds a buffer in two places, so with no get or put running
 * the free buffers plus the handed-out ones are exactly the buffers it
 * owns; rsim_puda_get_stats() counts the free ones where they are.
 *
 * Destroy unmaps and frees every free buffer and reports each buffer still
 * handed out; those stay mapped and allocated until their put, which
 * unmaps and frees them (the last one frees the pool). A pool, and a
 * single buffer, hold a reference on their struct device until then.
 *
 * A grow makes its buffers with no lock held. Destroy first marks the pool
 * closing, which a grow checks when it starts and again when it retakes
 * the lock to add what it made: one that finds the pool closing unmaps and
 * frees its buffers, then drops its reservation (pool->reserved) and
 * fails with -ENODEV. Destroy waits for the reservations of the grows
 * already running to go first, so no grow touches a pool (or unmaps for
 * a device) that a destroy or a last put has let go.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fault-inject.h>
#include <linux/overflow.h>
#include <linux/percpu.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>
#include <kunit/visibility.h>

#include <rdmasim/puda.h>

#include "rdmasim.h"

/**
 * struct rsim_puda_pcp - one CPU's cache of free buffers
 * @lock: protects every field below
 * @dead: the pool is being destroyed; puts go to the pool
 * @count: buffers in @bufs
 * @gets: buffers this cache handed out
 * @puts: buffers this cache took back
 * @bufs: the cached buffers (config.cache slots)
 */
struct rsim_puda_pcp {
	spinlock_t lock;	/* protects this struct */
	bool dead;
	u32 count;
	u64 gets;
	u64 puts;
	struct rsim_puda_buf *bufs[];
};

/**
 * struct rsim_puda_pool - a pool (opaque to users)
 * @dev: the device every buffer is mapped for
 * @cfg: creation parameters (name points into @name)
 * @name: the pool's name
 * @lock: protects the fields from @free to @dead_out
 * @free: free buffers not in a CPU cache
 * @nr_free: buffers on @free
 * @all: every buffer the pool owns (for destroy's report)
 * @allocated: buffers the pool owns
 * @reserved: buffers the grows in progress are allocating; destroy waits
 *	for it to drop to 0 (wait_var_event())
 * @hwm: most buffers off @free at once
 * @grows: grow events
 * @alloc_fail: failed buffer allocations
 * @map_fail: failed DMA mappings
 * @empty: gets that found nothing
 * @bad_puts: refused puts
 * @gets: gets served from @free (cache 0)
 * @puts: puts onto @free (cache 0)
 * @closing: destroy has begun; grows fail with -ENODEV
 * @dead: destroyed; the buffers still out free themselves when put
 * @dead_out: buffers still out after destroy
 * @pcp: per-CPU caches, or NULL for cache 0
 * @fault: the pool's injection points (countdowns, no fault_attr), one
 *	per &enum rsim_puda_fault_site
 * @grow_hook: KUnit only: called by a grow with its buffers made and no
 *	lock held (rsim_puda_set_grow_hook())
 * @grow_hook_data: @grow_hook's argument
 * @debugfs: the pool's debugfs directory
 */
struct rsim_puda_pool {
	struct device *dev;
	struct rsim_puda_config cfg;
	char name[32];

	spinlock_t lock;	/* protects @free .. @dead_out */
	struct list_head free;
	u32 nr_free;
	struct list_head all;
	u32 allocated;
	u32 reserved;
	u32 hwm;
	u64 grows;
	u64 alloc_fail;
	u64 map_fail;
	u64 empty;
	u64 bad_puts;
	u64 gets;
	u64 puts;
	bool closing;
	bool dead;
	u32 dead_out;

	struct rsim_puda_pcp __percpu *pcp;
	struct rsim_fault_point fault[RSIM_PUDA_FAULT_NR];
	void (*grow_hook)(void *data);
	void *grow_hook_data;
	struct dentry *debugfs;
};

static struct dentry *rsim_puda_debugfs;
/* DMA mappings the library holds, pools and single buffers together */
static atomic_t rsim_puda_mappings = ATOMIC_INIT(0);
/* numbers debugfs names of pools that have no directory of their own */
static atomic_t rsim_puda_next_id = ATOMIC_INIT(0);

/*
 * Fault injection (fault.c): every pool has a countdown per site, and the
 * library has one per site, with a fault_attr, for every pool and single
 * buffer (what has no pool to arm yet: a creation, rsim_puda_buf_alloc()).
 */
static const char * const rsim_puda_fault_names[RSIM_PUDA_FAULT_NR] = {
	[RSIM_PUDA_FAULT_ALLOC] = "alloc",
	[RSIM_PUDA_FAULT_MAP] = "map",
};

/* disarmed until rsim_puda_init() gives them their fault_attr */
static struct rsim_fault_attr rsim_puda_fault_attr[RSIM_PUDA_FAULT_NR];
static struct rsim_fault_point rsim_puda_lib_fault[RSIM_PUDA_FAULT_NR];

/*
 * The pool's point first, then the library's: one fault_attr per check.
 * Not inlined: its caller is the check's call site in the points' traces.
 */
static noinline bool rsim_puda_should_fail(struct rsim_puda_pool *pool,
					   enum rsim_puda_fault_site site)
{
	return (pool && rsim_fault_check(&pool->fault[site], _RET_IP_)) ||
	       rsim_fault_check(&rsim_puda_lib_fault[site], _RET_IP_);
}

/* Valid buffer length: a precise errno for each way it can be wrong. */
static int rsim_puda_check_len(size_t len)
{
	size_t total;

	if (!len)
		return -EINVAL;
	if (check_add_overflow(sizeof(struct rsim_puda_buf), len, &total))
		return -EOVERFLOW;
	if (len > RSIM_PUDA_MAX_LEN)
		return -E2BIG;
	return 0;
}

/*
 * Allocate and map one buffer. On failure nothing is left allocated or
 * mapped and *err says why: -ENOMEM (allocation) or -EIO (mapping).
 */
static struct rsim_puda_buf *rsim_puda_buf_new(struct rsim_puda_pool *pool,
					       struct device *dev, u32 len,
					       enum dma_data_direction dir,
					       gfp_t gfp, int *err)
{
	struct rsim_puda_buf *buf;

	buf = rsim_puda_should_fail(pool, RSIM_PUDA_FAULT_ALLOC) ? NULL :
	      kzalloc(struct_size(buf, data, len), gfp);
	if (!buf) {
		*err = -ENOMEM;
		return NULL;
	}
	INIT_LIST_HEAD(&buf->node);
	INIT_LIST_HEAD(&buf->all);
	buf->pool = pool;
	buf->dev = dev;
	buf->len = len;
	buf->dir = dir;

	if (rsim_puda_should_fail(pool, RSIM_PUDA_FAULT_MAP)) {
		kfree(buf);
		*err = -EIO;
		return NULL;
	}
	buf->dma = dma_map_single(dev, buf->data, len, dir);
	if (dma_mapping_error(dev, buf->dma)) {
		kfree(buf);
		*err = -EIO;
		return NULL;
	}
	atomic_inc(&rsim_puda_mappings);
	return buf;
}

/* Unmap with the mapping's own size and direction, then free. */
static void rsim_puda_buf_release(struct rsim_puda_buf *buf)
{
	dma_unmap_single(buf->dev, buf->dma, buf->len, buf->dir);
	atomic_dec(&rsim_puda_mappings);
	kfree(buf);
}

/* Unmap and free the buffers on @list (linked by their node). */
static void rsim_puda_release_list(struct list_head *list)
{
	struct rsim_puda_buf *buf, *tmp;

	list_for_each_entry_safe(buf, tmp, list, node) {
		list_del(&buf->node);
		rsim_puda_buf_release(buf);
	}
}

/**
 * rsim_puda_live_mappings() - DMA mappings the pool library holds now
 *
 * Return: buffers mapped and not yet unmapped, over every pool and single
 * buffer: a failed grow must leave it unchanged.
 */
int rsim_puda_live_mappings(void)
{
	return atomic_read(&rsim_puda_mappings);
}
EXPORT_SYMBOL_IF_KUNIT(rsim_puda_live_mappings);

/**
 * rsim_puda_buf_alloc() - allocate and DMA-map one buffer, outside a pool
 * @dev: device to map for (must have a DMA mask)
 * @len: data bytes, 1 .. RSIM_PUDA_MAX_LEN
 * @dir: DMA direction
 * @gfp: allocation flags (GFP_ATOMIC in atomic context)
 *
 * Context: any, as @gfp allows.
 * Return: the buffer, owned by the CPU; ERR_PTR(-EINVAL) for a zero
 * length, -EOVERFLOW if the header plus @len overflows, -E2BIG above
 * RSIM_PUDA_MAX_LEN, -ENOMEM if the allocation fails, -EIO if the mapping
 * fails.
 */
struct rsim_puda_buf *rsim_puda_buf_alloc(struct device *dev, size_t len,
					  enum dma_data_direction dir,
					  gfp_t gfp)
{
	struct rsim_puda_buf *buf;
	int err;

	err = rsim_puda_check_len(len);
	if (err)
		return ERR_PTR(err);
	if (!valid_dma_direction(dir))
		return ERR_PTR(-EINVAL);
	buf = rsim_puda_buf_new(NULL, dev, len, dir, gfp, &err);
	if (!buf)
		return ERR_PTR(err);
	get_device(dev);	/* dropped by rsim_puda_buf_free() */
	return buf;
}
EXPORT_SYMBOL_GPL(rsim_puda_buf_alloc);

/**
 * rsim_puda_buf_free() - unmap and free a buffer from rsim_puda_buf_alloc()
 * @buf: the buffer; NULL or an error pointer is ignored
 *
 * Context: any.
 */
void rsim_puda_buf_free(struct rsim_puda_buf *buf)
{
	struct device *dev;

	if (IS_ERR_OR_NULL(buf))
		return;
	if (WARN_ON_ONCE(buf->pool))
		return;		/* a pool's buffer goes back with rsim_puda_put() */
	dev = buf->dev;
	rsim_puda_buf_release(buf);
	put_device(dev);
}
EXPORT_SYMBOL_GPL(rsim_puda_buf_free);

/**
 * rsim_puda_grow() - add buffers to a pool, all or none
 * @pool: the pool
 * @count: buffers wanted; fewer are added if the pool would pass its max
 * @gfp: allocation flags
 *
 * Allocates and maps the buffers first, then adds them all in one step: a
 * failure part way unmaps and frees the ones already made and leaves the
 * pool as it was. So does a destroy that begins meanwhile (it waits for
 * this grow to unwind).
 *
 * Context: process or softirq context, as @gfp allows; takes the pool
 * lock.
 * Return: the number of buffers added; -EINVAL for a zero @count, -ENOSPC
 * if the pool is at its max, -ENOMEM or -EIO if an allocation or a mapping
 * failed (nothing added), -ENODEV once destroy has begun (nothing added,
 * nothing counted).
 */
int rsim_puda_grow(struct rsim_puda_pool *pool, u32 count, gfp_t gfp)
{
	struct rsim_puda_buf *buf;
	LIST_HEAD(fresh);
	u32 n, i;
	int err = 0;

	if (!count)
		return -EINVAL;

	spin_lock_bh(&pool->lock);
	if (pool->closing) {
		spin_unlock_bh(&pool->lock);
		return -ENODEV;
	}
	n = min(count, pool->cfg.max - pool->allocated - pool->reserved);
	pool->reserved += n;
	spin_unlock_bh(&pool->lock);
	if (!n)
		return -ENOSPC;

	for (i = 0; i < n; i++) {
		buf = rsim_puda_buf_new(pool, pool->dev, pool->cfg.buf_len,
					pool->cfg.dir, gfp, &err);
		if (!buf)
			break;
		list_add_tail(&buf->node, &fresh);
	}
	if (IS_ENABLED(CONFIG_KUNIT) && pool->grow_hook)
		pool->grow_hook(pool->grow_hook_data);

	spin_lock_bh(&pool->lock);
	if (pool->closing) {
		/*
		 * Destroy began meanwhile and waits for our reservation:
		 * unmap first, while the pool (and its device reference)
		 * still exist, then drop it and let destroy go on.
		 */
		spin_unlock_bh(&pool->lock);
		rsim_puda_release_list(&fresh);
		spin_lock_bh(&pool->lock);
		pool->reserved -= n;
		if (!pool->reserved)
			wake_up_var(&pool->reserved);
		spin_unlock_bh(&pool->lock);
		return -ENODEV;
	}
	pool->reserved -= n;
	if (err) {
		if (err == -EIO)
			pool->map_fail++;
		else
			pool->alloc_fail++;
	} else {
		list_for_each_entry(buf, &fresh, node)
			list_add_tail(&buf->all, &pool->all);
		list_splice_tail_init(&fresh, &pool->free);
		pool->nr_free += n;
		pool->allocated += n;
		pool->grows++;
	}
	spin_unlock_bh(&pool->lock);

	/* a partial grow: undo it, nothing reached the pool */
	rsim_puda_release_list(&fresh);
	return err ? err : n;
}
EXPORT_SYMBOL_GPL(rsim_puda_grow);

static void rsim_puda_hwm_locked(struct rsim_puda_pool *pool)
{
	u32 off = pool->allocated - pool->nr_free;

	lockdep_assert_held(&pool->lock);
	if (off > pool->hwm)
		pool->hwm = off;
}

/* Take the first buffer of the shared list, or NULL. */
static struct rsim_puda_buf *rsim_puda_take_locked(struct rsim_puda_pool *pool)
{
	struct rsim_puda_buf *buf;

	lockdep_assert_held(&pool->lock);
	buf = list_first_entry_or_null(&pool->free, struct rsim_puda_buf, node);
	if (buf) {
		list_del_init(&buf->node);
		pool->nr_free--;
	}
	return buf;
}

static void rsim_puda_refill_locked(struct rsim_puda_pool *pool,
				    struct rsim_puda_pcp *pcp)
{
	u32 batch = max(pool->cfg.cache / 2, 1U);
	struct rsim_puda_buf *buf;

	lockdep_assert_held(&pcp->lock);
	spin_lock(&pool->lock);
	while (pcp->count < batch) {
		buf = rsim_puda_take_locked(pool);
		if (!buf)
			break;
		pcp->bufs[pcp->count++] = buf;
	}
	rsim_puda_hwm_locked(pool);
	spin_unlock(&pool->lock);
}

/* The shared list is empty: take one buffer from another CPU's cache. */
static struct rsim_puda_buf *rsim_puda_steal(struct rsim_puda_pool *pool)
{
	struct rsim_puda_buf *buf = NULL;
	int cpu;

	for_each_possible_cpu(cpu) {
		struct rsim_puda_pcp *pcp = per_cpu_ptr(pool->pcp, cpu);

		spin_lock_bh(&pcp->lock);
		if (pcp->count) {
			buf = pcp->bufs[--pcp->count];
			pcp->gets++;
		}
		spin_unlock_bh(&pcp->lock);
		if (buf)
			break;
	}
	return buf;
}

static struct rsim_puda_buf *rsim_puda_take(struct rsim_puda_pool *pool)
{
	struct rsim_puda_buf *buf = NULL;
	struct rsim_puda_pcp *pcp;

	if (!pool->pcp) {
		spin_lock_bh(&pool->lock);
		buf = rsim_puda_take_locked(pool);
		if (buf) {
			pool->gets++;
			rsim_puda_hwm_locked(pool);
		}
		spin_unlock_bh(&pool->lock);
		return buf;
	}

	/* migration after raw_cpu_ptr() only means using another cache */
	pcp = raw_cpu_ptr(pool->pcp);
	spin_lock_bh(&pcp->lock);
	if (!pcp->count)
		rsim_puda_refill_locked(pool, pcp);
	if (pcp->count) {
		buf = pcp->bufs[--pcp->count];
		pcp->gets++;
	}
	spin_unlock_bh(&pcp->lock);
	return buf ? buf : rsim_puda_steal(pool);
}

/**
 * rsim_puda_get() - hand out a free buffer
 * @pool: the pool
 * @gfp: allocation flags for growing an empty pool (GFP_ATOMIC in atomic
 *	context); used only if the pool was created with a grow step
 *
 * Context: process or softirq context (never hardirq), as @gfp allows.
 * The common path takes only the current CPU's cache lock.
 * Return: a buffer the CPU owns, or NULL if the pool is empty and cannot
 * grow (counted in the "empty" statistic).
 */
struct rsim_puda_buf *rsim_puda_get(struct rsim_puda_pool *pool, gfp_t gfp)
{
	struct rsim_puda_buf *buf = rsim_puda_take(pool);

	if (!buf && pool->cfg.grow &&
	    rsim_puda_grow(pool, pool->cfg.grow, gfp) > 0)
		buf = rsim_puda_take(pool);
	if (!buf) {
		spin_lock_bh(&pool->lock);
		pool->empty++;
		spin_unlock_bh(&pool->lock);
		return NULL;
	}
	buf->out = true;
	return buf;
}
EXPORT_SYMBOL_GPL(rsim_puda_get);

static void rsim_puda_pool_free(struct rsim_puda_pool *pool)
{
	int i;

	for (i = 0; i < RSIM_PUDA_FAULT_NR; i++)
		rsim_fault_point_fini(&pool->fault[i]);
	put_device(pool->dev);
	free_percpu(pool->pcp);
	kfree(pool);
}

/*
 * A put that found its cache marked dead: before destroy took the pool
 * lock the buffer is simply free (destroy frees it); after, it is one of
 * the buffers destroy reported, and it goes now.
 */
static void rsim_puda_put_slow(struct rsim_puda_pool *pool,
			       struct rsim_puda_buf *buf)
{
	bool last = false;

	spin_lock_bh(&pool->lock);
	pool->puts++;
	if (!pool->dead) {
		list_add(&buf->node, &pool->free);
		pool->nr_free++;
		spin_unlock_bh(&pool->lock);
		return;
	}
	list_del(&buf->all);
	pool->allocated--;
	last = --pool->dead_out == 0;
	spin_unlock_bh(&pool->lock);

	rsim_puda_buf_release(buf);
	if (last)
		rsim_puda_pool_free(pool);
}

/**
 * rsim_puda_put() - take back a buffer rsim_puda_get() handed out
 * @pool: the pool it came from
 * @buf: the buffer, owned by the CPU (synced for the CPU if the device
 *	wrote it)
 *
 * A buffer that is not out, or belongs to another pool, is refused and
 * counted ("bad_puts"), never added twice. After rsim_puda_pool_destroy()
 * the buffer is unmapped and freed here.
 *
 * Context: process or softirq context (never hardirq). The common path
 * takes only the current CPU's cache lock.
 */
void rsim_puda_put(struct rsim_puda_pool *pool, struct rsim_puda_buf *buf)
{
	struct rsim_puda_pcp *pcp;

	if (unlikely(buf->pool != pool || !buf->out)) {
		spin_lock_bh(&pool->lock);
		pool->bad_puts++;
		spin_unlock_bh(&pool->lock);
		dev_err_ratelimited(pool->dev,
				    "puda %s: refused put of a buffer %s\n",
				    pool->name, buf->pool != pool ?
				    "from another pool" : "not handed out");
		return;
	}
	buf->out = false;

	if (!pool->pcp) {
		rsim_puda_put_slow(pool, buf);
		return;
	}

	pcp = raw_cpu_ptr(pool->pcp);
	spin_lock_bh(&pcp->lock);
	if (unlikely(pcp->dead)) {
		spin_unlock_bh(&pcp->lock);
		rsim_puda_put_slow(pool, buf);
		return;
	}
	pcp->bufs[pcp->count++] = buf;
	pcp->puts++;
	if (pcp->count == pool->cfg.cache) {
		/* full: return the older half to the shared list */
		u32 half = pcp->count / 2, i;

		spin_lock(&pool->lock);
		for (i = 0; i < half; i++)
			list_add(&pcp->bufs[i]->node, &pool->free);
		pool->nr_free += half;
		spin_unlock(&pool->lock);
		memmove(pcp->bufs, pcp->bufs + half,
			(pcp->count - half) * sizeof(*pcp->bufs));
		pcp->count -= half;
	}
	spin_unlock_bh(&pcp->lock);
}
EXPORT_SYMBOL_GPL(rsim_puda_put);

/**
 * rsim_puda_get_stats() - read a pool's counters
 * @pool: the pool
 * @stats: filled in
 *
 * Free buffers are counted where they are (shared list, each CPU cache),
 * one lock at a time: exact when no get or put runs.
 *
 * Context: process or softirq context.
 */
void rsim_puda_get_stats(struct rsim_puda_pool *pool,
			 struct rsim_puda_stats *stats)
{
	int cpu;

	memset(stats, 0, sizeof(*stats));
	if (pool->pcp) {
		for_each_possible_cpu(cpu) {
			struct rsim_puda_pcp *pcp = per_cpu_ptr(pool->pcp, cpu);

			spin_lock_bh(&pcp->lock);
			stats->available += pcp->count;
			stats->gets += pcp->gets;
			stats->puts += pcp->puts;
			spin_unlock_bh(&pcp->lock);
		}
	}
	spin_lock_bh(&pool->lock);
	stats->available += pool->nr_free;
	stats->gets += pool->gets;
	stats->puts += pool->puts;
	stats->allocated = pool->allocated;
	stats->hwm = pool->hwm;
	stats->grows = pool->grows;
	stats->alloc_fail = pool->alloc_fail;
	stats->map_fail = pool->map_fail;
	stats->empty = pool->empty;
	stats->bad_puts = pool->bad_puts;
	spin_unlock_bh(&pool->lock);
	stats->outstanding = stats->gets - stats->puts;
}
EXPORT_SYMBOL_GPL(rsim_puda_get_stats);

static int rsim_puda_stats_show(struct seq_file *m, void *unused)
{
	static const char * const dirs[] = {
		[DMA_BIDIRECTIONAL] = "bidirectional",
		[DMA_TO_DEVICE] = "to_device",
		[DMA_FROM_DEVICE] = "from_device",
	};
	struct rsim_puda_pool *pool = m->private;
	struct rsim_puda_stats st;

	rsim_puda_get_stats(pool, &st);
	/* rsim_puda_check_config() admitted only these three directions */
	seq_printf(m, "buf_len %u\ndir %s\nmax %u\ngrow %u\ncache %u\n",
		   pool->cfg.buf_len, dirs[pool->cfg.dir], pool->cfg.max,
		   pool->cfg.grow, pool->cfg.cache);
	seq_printf(m, "allocated %llu\navailable %llu\noutstanding %llu\n",
		   st.allocated, st.available, st.outstanding);
	seq_printf(m, "hwm %llu\ngrows %llu\nalloc_fail %llu\nmap_fail %llu\n",
		   st.hwm, st.grows, st.alloc_fail, st.map_fail);
	seq_printf(m, "empty %llu\ngets %llu\nputs %llu\nbad_puts %llu\n",
		   st.empty, st.gets, st.puts, st.bad_puts);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rsim_puda_stats);

static void rsim_puda_debugfs_init(struct rsim_puda_pool *pool)
{
	struct dentry *parent = pool->cfg.debugfs_parent;
	char name[48];

	/* the caller's directory: its name; the shared one: name-<n> */
	if (parent)
		strscpy(name, pool->name, sizeof(name));
	else
		snprintf(name, sizeof(name), "%s-%d", pool->name,
			 atomic_inc_return(&rsim_puda_next_id));
	parent = parent ?: rsim_puda_debugfs;
	if (IS_ERR_OR_NULL(parent))
		return;
	pool->debugfs = debugfs_create_dir(name, parent);
	if (IS_ERR(pool->debugfs))
		return;
	debugfs_create_file("stats", 0400, pool->debugfs, pool,
			    &rsim_puda_stats_fops);
	rsim_fault_debugfs_create(pool->debugfs, pool->fault,
				  rsim_puda_fault_names, RSIM_PUDA_FAULT_NR);
}

static int rsim_puda_check_config(const struct rsim_puda_config *cfg)
{
	int err = rsim_puda_check_len(cfg->buf_len);

	if (err)
		return err;
	/* a cache flushes half of itself when full: it needs two slots */
	if (!cfg->name || !cfg->max || cfg->initial > cfg->max ||
	    cfg->cache == 1 || cfg->cache > RSIM_PUDA_MAX_CACHE ||
	    !valid_dma_direction(cfg->dir))
		return -EINVAL;
	return 0;
}

/**
 * rsim_puda_pool_create() - create a pool and its first buffers
 * @dev: device every buffer is mapped for (must have a DMA mask)
 * @cfg: buffer length, initial count, grow step, max, cache depth, DMA
 *	direction, debugfs name and parent; copied
 *
 * Context: process context (allocates with GFP_KERNEL).
 * Return: the pool; ERR_PTR(-EINVAL) for a bad config (zero max, initial
 * above max, a cache of 1 or above RSIM_PUDA_MAX_CACHE, no name, an
 * invalid direction or a zero length),
 * -EOVERFLOW or -E2BIG for a length that cannot be allocated, or the
 * error of allocating the first @cfg->initial buffers (nothing is left).
 */
struct rsim_puda_pool *rsim_puda_pool_create(struct device *dev,
					     const struct rsim_puda_config *cfg)
{
	struct rsim_puda_pool *pool;
	int cpu, err, i;

	err = rsim_puda_check_config(cfg);
	if (err)
		return ERR_PTR(err);

	pool = rsim_kzalloc_obj(*pool, GFP_KERNEL);
	if (!pool)
		return ERR_PTR(-ENOMEM);
	/* the buffers are unmapped for @dev, perhaps after its driver left */
	pool->dev = get_device(dev);
	pool->cfg = *cfg;
	strscpy(pool->name, cfg->name, sizeof(pool->name));
	pool->cfg.name = pool->name;
	spin_lock_init(&pool->lock);
	INIT_LIST_HEAD(&pool->free);
	INIT_LIST_HEAD(&pool->all);
	for (i = 0; i < RSIM_PUDA_FAULT_NR; i++)
		rsim_fault_point_init(&pool->fault[i], NULL);

	if (cfg->cache) {
		pool->pcp = __alloc_percpu(size_add(sizeof(struct rsim_puda_pcp),
						    array_size(cfg->cache,
							       sizeof(void *))),
					   __alignof__(struct rsim_puda_pcp));
		if (!pool->pcp) {
			err = -ENOMEM;
			goto err_free_pool;
		}
		for_each_possible_cpu(cpu)
			spin_lock_init(&per_cpu_ptr(pool->pcp, cpu)->lock);
	}

	if (cfg->initial) {
		err = rsim_puda_grow(pool, cfg->initial, GFP_KERNEL);
		if (err < 0)
			goto err_free_pool;
	}
	rsim_puda_debugfs_init(pool);
	return pool;

err_free_pool:
	rsim_puda_pool_free(pool);
	return ERR_PTR(err);
}
EXPORT_SYMBOL_GPL(rsim_puda_pool_create);

/* No grow is running: none holds a reservation. */
static bool rsim_puda_grows_done(struct rsim_puda_pool *pool)
{
	bool done;

	spin_lock_bh(&pool->lock);
	done = !pool->reserved;
	spin_unlock_bh(&pool->lock);
	return done;
}

/**
 * rsim_puda_pool_destroy() - free a pool and report what is still out
 * @pool: the pool; no get may run during or after this
 *
 * Every free buffer is unmapped and freed. A buffer still handed out is
 * reported (its DMA address and length) and never freed or unmapped here:
 * its rsim_puda_put() does that later, and the last one frees the pool.
 * A grow running meanwhile fails with -ENODEV and adds nothing; destroy
 * waits for it first.
 *
 * Context: process context; may sleep until running grows return.
 * Return: the number of buffers still out (0: the pool is gone).
 */
unsigned int rsim_puda_pool_destroy(struct rsim_puda_pool *pool)
{
	struct rsim_puda_buf *buf;
	LIST_HEAD(doomed);
	unsigned int out;
	int cpu;

	debugfs_remove_recursive(pool->debugfs);
	pool->debugfs = NULL;

	/*
	 * Grows that start from now fail; those running fail when they
	 * retake the lock, and destroy waits until they have unmapped what
	 * they made and dropped their reservations: nothing they made
	 * reaches the pool, and neither destroy nor the last put frees the
	 * pool under them.
	 */
	spin_lock_bh(&pool->lock);
	pool->closing = true;
	spin_unlock_bh(&pool->lock);
	wait_var_event(&pool->reserved, rsim_puda_grows_done(pool));

	/* puts that come after this go to rsim_puda_put_slow() */
	if (pool->pcp) {
		for_each_possible_cpu(cpu) {
			struct rsim_puda_pcp *pcp = per_cpu_ptr(pool->pcp, cpu);

			spin_lock_bh(&pcp->lock);
			pcp->dead = true;
			spin_lock(&pool->lock);
			while (pcp->count) {
				list_add(&pcp->bufs[--pcp->count]->node,
					 &pool->free);
				pool->nr_free++;
			}
			spin_unlock(&pool->lock);
			spin_unlock_bh(&pcp->lock);
		}
	}

	spin_lock_bh(&pool->lock);
	pool->dead = true;
	list_for_each_entry(buf, &pool->free, node)
		list_del(&buf->all);
	list_splice_init(&pool->free, &doomed);
	pool->allocated -= pool->nr_free;
	pool->nr_free = 0;
	out = pool->allocated;
	pool->dead_out = out;
	list_for_each_entry(buf, &pool->all, all)
		dev_warn(pool->dev, "puda %s: buffer %pad (%u bytes) still out at destroy\n",
			 pool->name, &buf->dma, buf->len);
	spin_unlock_bh(&pool->lock);

	rsim_puda_release_list(&doomed);
	if (out)
		dev_warn(pool->dev, "puda %s: %u buffer(s) still out; freed when put back\n",
			 pool->name, out);
	else
		rsim_puda_pool_free(pool);
	return out;
}
EXPORT_SYMBOL_GPL(rsim_puda_pool_destroy);

/**
 * rsim_puda_fault() - an injection point of a pool, or of the library
 * @pool: the pool, or NULL for the library-wide point, which applies to
 *	every pool and single buffer (and so reaches what has no pool to arm
 *	yet: rsim_puda_pool_create(), rsim_puda_buf_alloc())
 * @site: which
 *
 * Armed and read with fault.c's rsim_fault_set_nth(), rsim_fault_get_nth()
 * and rsim_fault_injected(), like the device's points. The same points
 * are in debugfs: <pool>/fault/<site>/ and rdmasim/puda/fault/<site>/.
 *
 * Return: the point.
 */
struct rsim_fault_point *rsim_puda_fault(struct rsim_puda_pool *pool,
					 enum rsim_puda_fault_site site)
{
	return pool ? &pool->fault[site] : &rsim_puda_lib_fault[site];
}
EXPORT_SYMBOL_IF_KUNIT(rsim_puda_fault);

/**
 * rsim_puda_set_grow_hook() - run a function inside every grow of a pool
 * @pool: the pool
 * @fn: called by rsim_puda_grow() after it made its buffers and before it
 *	retakes the pool lock to add them, with no lock held (NULL: off)
 * @data: @fn's argument
 *
 * For KUnit: a test makes a race with the grow deterministic by doing the
 * other side (a destroy, say) from @fn. Set it while no grow runs.
 */
void rsim_puda_set_grow_hook(struct rsim_puda_pool *pool,
			     void (*fn)(void *data), void *data)
{
	pool->grow_hook = fn;
	pool->grow_hook_data = data;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_puda_set_grow_hook);

/**
 * rsim_puda_init() - set up the library's injection points and debugfs
 * @root: rdmasim's debugfs root
 *
 * /sys/kernel/debug/rdmasim/puda/: pools without a directory of their own,
 * and the library-wide injection points fault/alloc/ and fault/map/
 * (fail_nth, injected and, with CONFIG_FAULT_INJECTION_DEBUG_FS, a
 * fault_attr), which apply to every pool and buffer.
 */
void rsim_puda_init(struct dentry *root)
{
	int i;

	for (i = 0; i < RSIM_PUDA_FAULT_NR; i++)
		rsim_fault_point_init(&rsim_puda_lib_fault[i],
				      &rsim_puda_fault_attr[i]);
	if (IS_ERR_OR_NULL(root))
		return;
	rsim_puda_debugfs = debugfs_create_dir("puda", root);
	rsim_fault_debugfs_create(rsim_puda_debugfs, rsim_puda_lib_fault,
				  rsim_puda_fault_names, RSIM_PUDA_FAULT_NR);
}

/**
 * rsim_puda_exit() - forget the debugfs directory (rdmasim has removed
 *	it) and free the library's points' traces
 */
void rsim_puda_exit(void)
{
	int i;

	rsim_puda_debugfs = NULL;
	for (i = 0; i < RSIM_PUDA_FAULT_NR; i++)
		rsim_fault_point_fini(&rsim_puda_lib_fault[i]);
}
