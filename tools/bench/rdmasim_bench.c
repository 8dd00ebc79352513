// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim_bench: ns per buffer get + return, on 1 and 2 CPUs, for
 *  - the PUDA pool with per-CPU caches (rsim_puda_get/put, cache 32),
 *  - the same pool with its cache off (one lock, every operation),
 *  - irdma's pool as it is (a list under one spinlock, the available
 *    count updated after the unlock; irdma_puda_get_bufpool/ret_bufpool),
 *  - no pool: allocate, map, unmap and free a buffer per use,
 * with ratios against the last, and the cost on this platform of the two
 * primitives they differ by: a spin_lock_irqsave/irqrestore pair (irdma)
 * and a spin_lock_bh/unlock_bh pair (the PUDA pool). Runs on load, against the first rdmasim
 * device's DMA device, prints its table, and stays loaded doing nothing.
 * A figure, not a test: it never fails on speed.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include <rdmasim/puda.h>

static unsigned int iters = 200000;
module_param(iters, uint, 0444);
MODULE_PARM_DESC(iters, "get+return pairs per thread per run (default 200000)");

static unsigned int buf_len = 1024;
module_param(buf_len, uint, 0444);
MODULE_PARM_DESC(buf_len, "buffer bytes (default 1024, irdma's ILQ size)");

#define BENCH_BUFS	64

/* irdma's pool, as irdma/puda.c has it (puda.c:36-70) */
struct irdma_like_pool {
	struct list_head bufpool;
	spinlock_t bufpool_lock;	/* protects bufpool */
	u32 avail_buf_count;
	u32 stats_buf_alloc_fail;
};

struct bench_ctx {
	struct device *dev;
	struct rsim_puda_pool *pool;
	struct irdma_like_pool irdma;
	spinlock_t lock;	/* the primitives' rows; protects nothing */
	int (*pair)(struct bench_ctx *ctx);
};

struct bench_thread {
	struct bench_ctx *ctx;
	struct completion *go;
	struct completion done;
	u64 ns;
	int err;
};

static int pair_pool(struct bench_ctx *ctx)
{
	struct rsim_puda_buf *buf = rsim_puda_get(ctx->pool, GFP_ATOMIC);

	if (!buf)
		return -ENOBUFS;
	rsim_puda_put(ctx->pool, buf);
	return 0;
}

static int pair_irdma(struct bench_ctx *ctx)
{
	struct irdma_like_pool *p = &ctx->irdma;
	struct rsim_puda_buf *buf = NULL;
	unsigned long flags;

	spin_lock_irqsave(&p->bufpool_lock, flags);
	if (!list_empty(&p->bufpool)) {
		buf = list_first_entry(&p->bufpool, struct rsim_puda_buf, node);
		list_del(&buf->node);
		p->avail_buf_count--;
	} else {
		p->stats_buf_alloc_fail++;
	}
	spin_unlock_irqrestore(&p->bufpool_lock, flags);
	if (!buf)
		return -ENOBUFS;

	spin_lock_irqsave(&p->bufpool_lock, flags);
	list_add(&buf->node, &p->bufpool);
	spin_unlock_irqrestore(&p->bufpool_lock, flags);
	p->avail_buf_count++;	/* irdma: outside the lock */
	return 0;
}

/* what a driver without a pool does (irdma_puda_alloc_buf() and dele_buf) */
static int pair_per_use(struct bench_ctx *ctx)
{
	dma_addr_t dma;
	void *va;

	va = kzalloc(buf_len, GFP_ATOMIC);
	if (!va)
		return -ENOMEM;
	dma = dma_map_single(ctx->dev, va, buf_len, DMA_BIDIRECTIONAL);
	if (dma_mapping_error(ctx->dev, dma)) {
		kfree(va);
		return -EIO;
	}
	dma_unmap_single(ctx->dev, dma, buf_len, DMA_BIDIRECTIONAL);
	kfree(va);
	return 0;
}

static int pair_irqsave(struct bench_ctx *ctx)
{
	unsigned long flags;

	spin_lock_irqsave(&ctx->lock, flags);
	spin_unlock_irqrestore(&ctx->lock, flags);
	return 0;
}

static int pair_bh(struct bench_ctx *ctx)
{
	spin_lock_bh(&ctx->lock);
	spin_unlock_bh(&ctx->lock);
	return 0;
}

static int bench_thread_fn(void *data)
{
	struct bench_thread *t = data;
	unsigned int i;
	u64 start;

	/* sleep, not spin: the thread that says go may share this CPU */
	wait_for_completion(t->go);
	start = ktime_get_ns();
	for (i = 0; i < iters && !t->err; i++)
		t->err = t->ctx->pair(t->ctx);
	t->ns = ktime_get_ns() - start;
	complete(&t->done);
	return 0;
}

/* ns per pair, averaged over @nthreads threads bound to CPUs 0.. */
static s64 bench_run(struct bench_ctx *ctx, int nthreads)
{
	struct bench_thread t[2] = {};
	DECLARE_COMPLETION_ONSTACK(go);
	u64 total = 0;
	int i, err = 0;

	for (i = 0; i < nthreads; i++) {
		struct task_struct *task;

		t[i].ctx = ctx;
		t[i].go = &go;
		init_completion(&t[i].done);
		task = kthread_create(bench_thread_fn, &t[i], "rsim_bench/%d", i);
		if (IS_ERR(task))
			return PTR_ERR(task);
		kthread_bind(task, i);
		wake_up_process(task);
	}
	complete_all(&go);
	for (i = 0; i < nthreads; i++) {
		wait_for_completion(&t[i].done);
		total += t[i].ns;
		err = err ?: t[i].err;
	}
	return err ? err : div_u64(total, (u64)nthreads * iters);
}

static int bench_irdma_fill(struct bench_ctx *ctx)
{
	struct irdma_like_pool *p = &ctx->irdma;
	int i;

	INIT_LIST_HEAD(&p->bufpool);
	spin_lock_init(&p->bufpool_lock);
	for (i = 0; i < BENCH_BUFS; i++) {
		struct rsim_puda_buf *buf;

		buf = rsim_puda_buf_alloc(ctx->dev, buf_len, DMA_BIDIRECTIONAL,
					  GFP_KERNEL);
		if (IS_ERR(buf))
			return PTR_ERR(buf);
		list_add(&buf->node, &p->bufpool);
		p->avail_buf_count++;
	}
	return 0;
}

static void bench_irdma_drain(struct bench_ctx *ctx)
{
	struct rsim_puda_buf *buf, *tmp;

	list_for_each_entry_safe(buf, tmp, &ctx->irdma.bufpool, node) {
		list_del(&buf->node);
		rsim_puda_buf_free(buf);
	}
}

static void bench_all(struct device *dev, const char *devname)
{
	static const char * const names[] = {
		"puda pool, per-CPU cache", "puda pool, one lock",
		"irdma pool (list + lock)", "per use: alloc+map+unmap+free",
		"(one spin_lock_irqsave pair)", "(one spin_lock_bh pair)",
	};
	int ncpus = min(num_online_cpus(), 2U);
	s64 ns[6][2] = {};
	struct bench_ctx ctx = { .dev = dev };
	int v, n;

	spin_lock_init(&ctx.lock);
	pr_info("%s: %u pairs per thread, %u-byte buffers, %d CPU(s) online\n",
		devname, iters, buf_len, num_online_cpus());
	for (v = 0; v < 6; v++) {
		struct rsim_puda_config cfg = {
			.name = "rdmasim_bench",
			.buf_len = buf_len,
			.initial = BENCH_BUFS,
			.max = BENCH_BUFS,
			.cache = v == 0 ? 32 : 0,
			.dir = DMA_BIDIRECTIONAL,
		};

		ctx.pool = NULL;
		if (v < 2) {
			ctx.pool = rsim_puda_pool_create(dev, &cfg);
			if (IS_ERR(ctx.pool)) {
				pr_err("pool: %pe\n", ctx.pool);
				return;
			}
			ctx.pair = pair_pool;
		} else if (v == 2) {
			if (bench_irdma_fill(&ctx)) {
				bench_irdma_drain(&ctx);
				return;
			}
			ctx.pair = pair_irdma;
		} else {
			ctx.pair = v == 3 ? pair_per_use :
				   v == 4 ? pair_irqsave : pair_bh;
		}
		for (n = 1; n <= ncpus; n++)
			ns[v][n - 1] = bench_run(&ctx, n);
		if (v < 2)
			rsim_puda_pool_destroy(ctx.pool);
		if (v == 2)
			bench_irdma_drain(&ctx);
	}

	pr_info("%-32s %10s %10s %10s %10s\n", "ns per get+return",
		"1 CPU", "ratio", "2 CPUs", "ratio");
	for (v = 0; v < 6; v++) {
		/* room for two s64 and ".x": W=1 checks the worst case */
		char r1[48], r2[48];

		for (n = 0; n < 2; n++) {
			char *r = n ? r2 : r1;

			if (v < 4 && ns[v][n] > 0 && ns[3][n] > 0)
				snprintf(r, sizeof(r1), "%lld.%02lldx",
					 div_s64(ns[3][n], ns[v][n]),
					 div_s64(ns[3][n] * 100, ns[v][n]) % 100);
			else
				strscpy(r, "-", sizeof(r1));
		}
		pr_info("%-32s %10lld %10s %10lld %10s\n", names[v], ns[v][0],
			r1, ns[v][1], r2);
	}
	pr_info("ratio: per-use ns / this ns (how many times faster than no pool)\n");
}

static bool bench_done;

static int bench_add(struct ib_device *ibdev)
{
	if (bench_done || strncmp(dev_name(&ibdev->dev), "rdmasim", 7))
		return 0;
	bench_done = true;
	bench_all(ibdev->dma_device, dev_name(&ibdev->dev));
	return 0;
}

static void bench_remove(struct ib_device *ibdev, void *client_data)
{
}

static struct ib_client bench_client = {
	.name = "rdmasim_bench",
	.add = bench_add,
	.remove = bench_remove,
};

static int __init bench_init(void)
{
	return ib_register_client(&bench_client);
}

static void __exit bench_exit(void)
{
	ib_unregister_client(&bench_client);
}

module_init(bench_init);
module_exit(bench_exit);

MODULE_DESCRIPTION("rdmasim benchmark: PUDA pool against irdma's pool and no pool");
MODULE_AUTHOR("rdmasim developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(RSIM_VERSION);
