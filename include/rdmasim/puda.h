/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rdmasim PUDA buffer pool: DMA-mapped buffers for a driver's own queues.
 *
 * irdma keeps a pool of privileged-UDA (PUDA) buffers for its internal
 * queues; this is the same capability as a reusable library. A pool owns
 * buffers of one length, each allocated and mapped once with
 * dma_map_single() against the pool's struct device; get and put hand
 * them out and take them back without allocating or mapping.
 *
 * DMA ownership: a buffer from rsim_puda_get() is the CPU's. Call
 * rsim_puda_sync_for_device() before handing it to the device and
 * rsim_puda_sync_for_cpu() when the device hands it back, before the CPU
 * reads what the device wrote. rsim_puda_put() takes back a buffer the
 * CPU owns.
 *
 * Context: pools are used from process or softirq context, never from a
 * hardirq handler (their locks are BH-safe); single buffers from anywhere.
 */
#ifndef RDMASIM_PUDA_H
#define RDMASIM_PUDA_H

#include <linux/device.h>
#include <linux/dma-mapping.h>
#include <linux/list.h>
#include <linux/types.h>

#include <rdmasim/compat.h>

struct dentry;
struct rsim_puda_pool;

/**
 * struct rsim_puda_buf - one DMA-mapped buffer
 * @node: free-list linkage; the pool's while the buffer is free
 * @all: linkage in the pool's list of every buffer it owns
 * @pool: owning pool, or NULL for a buffer from rsim_puda_buf_alloc()
 * @dev: device the buffer is mapped for
 * @dma: DMA address of @data
 * @len: bytes of @data (the mapping's length)
 * @dir: the mapping's direction
 * @out: handed out by rsim_puda_get() and not yet put back
 * @priv: the user's, never touched by the pool
 * @data: the buffer, in the same allocation as the header and aligned to
 *	ARCH_DMA_MINALIGN so that the two never share a cache line where
 *	the architecture's DMA is not coherent
 */
struct rsim_puda_buf {
	struct list_head node;
	struct list_head all;
	struct rsim_puda_pool *pool;
	struct device *dev;
	dma_addr_t dma;
	u32 len;
	enum dma_data_direction dir;
	bool out;
	void *priv;
	u8 data[] __aligned(RSIM_DMA_MINALIGN);
};

/**
 * struct rsim_puda_config - what a pool is created with
 * @name: name of the pool's debugfs directory
 * @buf_len: bytes per buffer, 1 .. RSIM_PUDA_MAX_LEN
 * @initial: buffers allocated by rsim_puda_pool_create()
 * @grow: buffers a get on an empty pool adds (0: never grows by itself)
 * @max: most buffers the pool may own, 1 ..; @initial <= @max
 * @cache: per-CPU cache depth, 0 or 2 .. RSIM_PUDA_MAX_CACHE; 0 keeps
 *	every buffer on the shared list (one lock for everything, as irdma
 *	does)
 * @dir: DMA direction of every mapping (DMA_BIDIRECTIONAL if unsure)
 * @debugfs_parent: directory for the pool's debugfs entries, or NULL for
 *	/sys/kernel/debug/rdmasim/puda/
 */
struct rsim_puda_config {
	const char *name;
	u32 buf_len;
	u32 initial;
	u32 grow;
	u32 max;
	u32 cache;
	enum dma_data_direction dir;
	struct dentry *debugfs_parent;
};

/**
 * struct rsim_puda_stats - a pool's counters
 * @allocated: buffers the pool owns (free, cached or handed out)
 * @available: buffers free in the pool (shared list and CPU caches)
 * @outstanding: buffers handed out and not yet put back
 * @hwm: the most buffers ever off the shared list at once (handed out or
 *	in a CPU cache); with @cache 0, the high-water mark of @outstanding
 * @grows: grow events (on demand or rsim_puda_grow())
 * @alloc_fail: buffer allocations that failed
 * @map_fail: DMA mappings that failed
 * @empty: gets that found no buffer
 * @gets: buffers handed out
 * @puts: buffers taken back
 * @bad_puts: puts refused: not handed out, or from another pool
 *
 * When no get or put runs, @available + @outstanding == @allocated.
 */
struct rsim_puda_stats {
	u64 allocated;
	u64 available;
	u64 outstanding;
	u64 hwm;
	u64 grows;
	u64 alloc_fail;
	u64 map_fail;
	u64 empty;
	u64 gets;
	u64 puts;
	u64 bad_puts;
};

/* Largest buffer: one kmalloc() object holds header and data. */
#define RSIM_PUDA_MAX_LEN	(KMALLOC_MAX_SIZE - sizeof(struct rsim_puda_buf))
/* Deepest per-CPU cache. */
#define RSIM_PUDA_MAX_CACHE	512

struct rsim_puda_buf *rsim_puda_buf_alloc(struct device *dev, size_t len,
					  enum dma_data_direction dir,
					  gfp_t gfp);
void rsim_puda_buf_free(struct rsim_puda_buf *buf);

struct rsim_puda_pool *rsim_puda_pool_create(struct device *dev,
					     const struct rsim_puda_config *cfg);
unsigned int rsim_puda_pool_destroy(struct rsim_puda_pool *pool);
struct rsim_puda_buf *rsim_puda_get(struct rsim_puda_pool *pool, gfp_t gfp);
void rsim_puda_put(struct rsim_puda_pool *pool, struct rsim_puda_buf *buf);
int rsim_puda_grow(struct rsim_puda_pool *pool, u32 count, gfp_t gfp);
void rsim_puda_get_stats(struct rsim_puda_pool *pool,
			 struct rsim_puda_stats *stats);

/**
 * rsim_puda_sync_for_device() - hand a buffer the CPU wrote to the device
 * @buf: the buffer
 *
 * Context: any.
 */
static inline void rsim_puda_sync_for_device(struct rsim_puda_buf *buf)
{
	dma_sync_single_for_device(buf->dev, buf->dma, buf->len, buf->dir);
}

/**
 * rsim_puda_sync_for_cpu() - take back a buffer the device wrote
 * @buf: the buffer
 *
 * Context: any.
 */
static inline void rsim_puda_sync_for_cpu(struct rsim_puda_buf *buf)
{
	dma_sync_single_for_cpu(buf->dev, buf->dma, buf->len, buf->dir);
}

#endif /* RDMASIM_PUDA_H */
