// SPDX-License-Identifier: GPL-2.0-only
/*
 * Suite rdmasim_puda: the PUDA buffer pool, on the shared rdmasim device's
 * platform device (a real DMA device: every mapping goes through the DMA
 * API and DMA_API_DEBUG).
 */

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/dma-direct.h>
#include <linux/kthread.h>
#include <linux/random.h>

#include "helpers.h"

static struct device *rsim_puda_dev(struct kunit *test)
{
	return &rsim_kunit_shared_dev(test)->pdev->dev;
}

struct rsim_puda_owned {
	struct kunit *test;
	struct rsim_puda_pool *pool;
};

/* Every buffer must be back by the end of the test: destroy reports 0. */
static void rsim_puda_destroy_action(void *data)
{
	struct rsim_puda_owned *o = data;
	unsigned int out = rsim_puda_pool_destroy(o->pool);

	if (out)
		KUNIT_FAIL(o->test, "pool destroyed with %u buffer(s) out", out);
}

/* A pool destroyed with the test. */
static struct rsim_puda_pool *
rsim_puda_pool_owned(struct kunit *test, const struct rsim_puda_config *c)
{
	struct rsim_puda_owned *o = kunit_kzalloc(test, sizeof(*o), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, o);
	o->test = test;
	o->pool = rsim_puda_pool_create(rsim_puda_dev(test), c);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, o->pool);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test,
						  rsim_puda_destroy_action, o));
	return o->pool;
}

static struct rsim_puda_stats rsim_puda_st(struct rsim_puda_pool *pool)
{
	struct rsim_puda_stats st;

	rsim_puda_get_stats(pool, &st);
	return st;
}

static void rsim_puda_test_buf_round_trip(struct kunit *test)
{
	struct device *dev = rsim_puda_dev(test);
	int maps = rsim_puda_live_mappings();
	struct rsim_puda_buf *buf;
	u8 *device_view;
	u32 i;

	buf = rsim_puda_buf_alloc(dev, 1000, DMA_BIDIRECTIONAL, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, buf);
	KUNIT_EXPECT_EQ(test, buf->len, 1000);
	KUNIT_EXPECT_EQ(test, (uintptr_t)buf->data % RSIM_DMA_MINALIGN, 0);
	KUNIT_EXPECT_EQ(test, rsim_puda_live_mappings(), maps + 1);
	for (i = 0; i < buf->len; i++)
		KUNIT_ASSERT_EQ(test, buf->data[i], 0);

	/* the CPU writes, then hands the buffer to the device */
	memset(buf->data, 0x5a, buf->len);
	rsim_puda_sync_for_device(buf);
	/* the device sees it at the DMA address (dma-direct translation) */
	device_view = phys_to_virt(dma_to_phys(dev, buf->dma));
	KUNIT_EXPECT_PTR_EQ(test, (void *)device_view, (void *)buf->data);
	KUNIT_EXPECT_EQ(test, device_view[999], 0x5a);
	/* the device writes, then hands it back */
	memset(device_view, 0xa5, buf->len);
	rsim_puda_sync_for_cpu(buf);
	for (i = 0; i < buf->len; i++)
		KUNIT_ASSERT_EQ(test, buf->data[i], 0xa5);

	rsim_puda_buf_free(buf);
	KUNIT_EXPECT_EQ(test, rsim_puda_live_mappings(), maps);
}

static void rsim_puda_test_buf_refused(struct kunit *test)
{
	struct device *dev = rsim_puda_dev(test);
	int maps = rsim_puda_live_mappings();

	KUNIT_EXPECT_EQ(test, PTR_ERR(rsim_puda_buf_alloc(dev, 0,
							  DMA_TO_DEVICE,
							  GFP_KERNEL)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(rsim_puda_buf_alloc(dev, SIZE_MAX - 8,
							  DMA_TO_DEVICE,
							  GFP_KERNEL)),
			-EOVERFLOW);
	KUNIT_EXPECT_EQ(test, PTR_ERR(rsim_puda_buf_alloc(dev,
							  RSIM_PUDA_MAX_LEN + 1,
							  DMA_TO_DEVICE,
							  GFP_KERNEL)),
			-E2BIG);
	KUNIT_EXPECT_EQ(test, PTR_ERR(rsim_puda_buf_alloc(dev, 64, DMA_NONE,
							  GFP_KERNEL)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, rsim_puda_live_mappings(), maps);
}

struct rsim_puda_cfg_case {
	const char *name;
	struct rsim_puda_config cfg;
	int err;
};

#define CFG(len, init, gr, mx, cch)					\
	{ .name = "p", .buf_len = (len), .initial = (init), .grow = (gr), \
	  .max = (mx), .cache = (cch), .dir = DMA_BIDIRECTIONAL }

static const struct rsim_puda_cfg_case rsim_puda_cfg_cases[] = {
	{ "valid", CFG(256, 4, 4, 16, 8), 0 },
	{ "valid_no_cache", CFG(256, 4, 4, 16, 0), 0 },
	{ "valid_empty_start", CFG(256, 0, 4, 16, 8), 0 },
	{ "zero_length", CFG(0, 4, 4, 16, 8), -EINVAL },
	{ "length_too_big", CFG(RSIM_PUDA_MAX_LEN + 1, 4, 4, 16, 8), -E2BIG },
	{ "zero_max", CFG(256, 0, 4, 0, 8), -EINVAL },
	{ "initial_above_max", CFG(256, 17, 4, 16, 8), -EINVAL },
	{ "cache_of_one", CFG(256, 4, 4, 16, 1), -EINVAL },
	{ "cache_too_deep", CFG(256, 4, 4, 16, RSIM_PUDA_MAX_CACHE + 1),
	  -EINVAL },
	{ "no_name", { .buf_len = 256, .max = 4, .dir = DMA_BIDIRECTIONAL },
	  -EINVAL },
	{ "direction_none", { .name = "p", .buf_len = 256, .max = 4,
			      .dir = DMA_NONE }, -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(rsim_puda_cfg, rsim_puda_cfg_cases, name);

static void rsim_puda_test_config(struct kunit *test)
{
	const struct rsim_puda_cfg_case *c = test->param_value;
	int maps = rsim_puda_live_mappings();
	struct rsim_puda_pool *pool;

	pool = rsim_puda_pool_create(rsim_puda_dev(test), &c->cfg);
	if (c->err) {
		KUNIT_EXPECT_EQ(test, PTR_ERR(pool), c->err);
		KUNIT_EXPECT_EQ(test, rsim_puda_live_mappings(), maps);
		return;
	}
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pool);
	KUNIT_EXPECT_EQ(test, rsim_puda_st(pool).allocated, c->cfg.initial);
	KUNIT_EXPECT_EQ(test, rsim_puda_live_mappings(), maps + c->cfg.initial);
	KUNIT_EXPECT_EQ(test, rsim_puda_pool_destroy(pool), 0);
	KUNIT_EXPECT_EQ(test, rsim_puda_live_mappings(), maps);
}

/* Both designs: per-CPU caches, and one lock for everything. */
struct rsim_puda_mode_case {
	const char *name;
	u32 cache;
};

static const struct rsim_puda_mode_case rsim_puda_mode_cases[] = {
	{ "per_cpu_cache", 8 },
	{ "single_lock", 0 },
};

KUNIT_ARRAY_PARAM_DESC(rsim_puda_mode, rsim_puda_mode_cases, name);

static void rsim_puda_test_exhaustion(struct kunit *test)
{
	const struct rsim_puda_mode_case *m = test->param_value;
	struct rsim_puda_config cfg = CFG(128, 4, 0, 4, m->cache);
	struct rsim_puda_pool *pool = rsim_puda_pool_owned(test, &cfg);
	struct rsim_puda_buf *bufs[4];
	struct rsim_puda_stats st;
	int i, j;

	for (i = 0; i < 4; i++) {
		bufs[i] = rsim_puda_get(pool, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, bufs[i]);
		for (j = 0; j < i; j++)
			KUNIT_EXPECT_PTR_NE(test, bufs[i], bufs[j]);
	}
	KUNIT_EXPECT_NULL(test, rsim_puda_get(pool, GFP_KERNEL));
	st = rsim_puda_st(pool);
	KUNIT_EXPECT_EQ(test, st.empty, 1);
	KUNIT_EXPECT_EQ(test, st.outstanding, 4);
	KUNIT_EXPECT_EQ(test, st.available, 0);
	KUNIT_EXPECT_EQ(test, st.hwm, 4);
	for (i = 0; i < 4; i++)
		rsim_puda_put(pool, bufs[i]);
	st = rsim_puda_st(pool);
	KUNIT_EXPECT_EQ(test, st.available, 4);
	KUNIT_EXPECT_EQ(test, st.outstanding, 0);
	KUNIT_EXPECT_EQ(test, st.gets, 4);
	KUNIT_EXPECT_EQ(test, st.puts, 4);
}

static void rsim_puda_test_grows_to_max_not_past(struct kunit *test)
{
	const struct rsim_puda_mode_case *m = test->param_value;
	struct rsim_puda_config cfg = CFG(128, 2, 2, 5, m->cache);
	struct rsim_puda_pool *pool = rsim_puda_pool_owned(test, &cfg);
	struct rsim_puda_buf *bufs[5];
	struct rsim_puda_stats st;
	int i;

	for (i = 0; i < 5; i++) {
		bufs[i] = rsim_puda_get(pool, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, bufs[i]);
	}
	KUNIT_EXPECT_NULL(test, rsim_puda_get(pool, GFP_KERNEL));
	st = rsim_puda_st(pool);
	KUNIT_EXPECT_EQ(test, st.allocated, 5);
	/* the initial fill, then +2 and +1 (clipped at max) on demand */
	KUNIT_EXPECT_EQ(test, st.grows, 3);
	KUNIT_EXPECT_EQ(test, st.empty, 1);
	KUNIT_EXPECT_EQ(test, rsim_puda_grow(pool, 1, GFP_KERNEL), -ENOSPC);
	for (i = 0; i < 5; i++)
		rsim_puda_put(pool, bufs[i]);
	KUNIT_EXPECT_EQ(test, rsim_puda_st(pool).available, 5);
}

static void rsim_puda_test_grow_explicit(struct kunit *test)
{
	struct rsim_puda_config cfg = CFG(64, 4, 0, 8, 8);
	struct rsim_puda_pool *pool = rsim_puda_pool_owned(test, &cfg);

	KUNIT_EXPECT_EQ(test, rsim_puda_grow(pool, 0, GFP_KERNEL), -EINVAL);
	KUNIT_EXPECT_EQ(test, rsim_puda_grow(pool, 10, GFP_KERNEL), 4);
	KUNIT_EXPECT_EQ(test, rsim_puda_grow(pool, 1, GFP_KERNEL), -ENOSPC);
	KUNIT_EXPECT_EQ(test, rsim_puda_st(pool).allocated, 8);
	KUNIT_EXPECT_EQ(test, rsim_puda_st(pool).available, 8);
}

/*
 * A bulk grow of 8 with the k-th allocation (or mapping) failing, for
 * every k: the grow fails with the precise errno, the pool is unchanged,
 * nothing stays mapped, and the failure is counted once.
 */
struct rsim_puda_fail_case {
	const char *name;
	bool map;
	enum rsim_puda_fault_site site;
};

static const struct rsim_puda_fail_case rsim_puda_fail_cases[] = {
	{ "kth_allocation", false, RSIM_PUDA_FAULT_ALLOC },
	{ "kth_mapping", true, RSIM_PUDA_FAULT_MAP },
};

KUNIT_ARRAY_PARAM_DESC(rsim_puda_fail, rsim_puda_fail_cases, name);

static void rsim_puda_test_grow_failure_unwinds(struct kunit *test)
{
	const struct rsim_puda_fail_case *c = test->param_value;
	struct rsim_puda_config cfg = CFG(512, 2, 0, 64, 8);
	struct rsim_puda_pool *pool = rsim_puda_pool_owned(test, &cfg);
	struct rsim_fault_point *fp = rsim_puda_fault(pool, c->site);
	struct rsim_puda_stats before, after;
	int k, maps, injected;

	for (k = 1; k <= 8; k++) {
		before = rsim_puda_st(pool);
		maps = rsim_puda_live_mappings();
		injected = rsim_fault_injected(fp);
		rsim_fault_set_nth(fp, k);
		KUNIT_EXPECT_EQ_MSG(test, rsim_puda_grow(pool, 8, GFP_KERNEL),
				    c->map ? -EIO : -ENOMEM, "k=%d", k);
		after = rsim_puda_st(pool);
		KUNIT_EXPECT_EQ_MSG(test, rsim_puda_live_mappings(), maps,
				    "k=%d", k);
		KUNIT_EXPECT_EQ(test, after.allocated, before.allocated);
		KUNIT_EXPECT_EQ(test, after.available, before.available);
		KUNIT_EXPECT_EQ(test, after.grows, before.grows);
		KUNIT_EXPECT_EQ(test, after.map_fail,
				before.map_fail + c->map);
		KUNIT_EXPECT_EQ(test, after.alloc_fail,
				before.alloc_fail + !c->map);
		KUNIT_EXPECT_EQ(test, rsim_fault_injected(fp), injected + 1);
		KUNIT_EXPECT_EQ(test, rsim_fault_get_nth(fp), 0);
	}
	rsim_fault_set_nth(fp, 0);
	KUNIT_EXPECT_EQ(test, rsim_puda_grow(pool, 8, GFP_KERNEL), 8);
	KUNIT_EXPECT_EQ(test, rsim_puda_st(pool).allocated, 10);
}

/* Creation fails at its k-th allocation or mapping: nothing is left. */
static void rsim_puda_test_create_failure_unwinds(struct kunit *test)
{
	const struct rsim_puda_fail_case *c = test->param_value;
	struct rsim_puda_config cfg = CFG(256, 6, 0, 8, 8);
	struct rsim_fault_point *fp = rsim_puda_fault(NULL, c->site);
	struct device *dev = rsim_puda_dev(test);
	int maps = rsim_puda_live_mappings();
	struct rsim_puda_pool *pool;
	int k;

	for (k = 1; k <= 6; k++) {
		rsim_fault_set_nth(fp, k);
		pool = rsim_puda_pool_create(dev, &cfg);
		KUNIT_EXPECT_EQ_MSG(test, PTR_ERR(pool),
				    c->map ? -EIO : -ENOMEM, "k=%d", k);
		if (!IS_ERR(pool))
			rsim_puda_pool_destroy(pool);
		KUNIT_EXPECT_EQ_MSG(test, rsim_puda_live_mappings(), maps,
				    "k=%d", k);
	}
	rsim_fault_set_nth(fp, 0);

	/* and a single buffer */
	rsim_fault_set_nth(fp, 1);
	KUNIT_EXPECT_EQ(test, PTR_ERR(rsim_puda_buf_alloc(dev, 64,
							  DMA_TO_DEVICE,
							  GFP_KERNEL)),
			c->map ? -EIO : -ENOMEM);
	KUNIT_EXPECT_EQ(test, rsim_fault_get_nth(fp), 0);
	rsim_fault_set_nth(fp, 0);
	KUNIT_EXPECT_EQ(test, rsim_puda_live_mappings(), maps);
}

static void rsim_puda_test_destroy_reports_outstanding(struct kunit *test)
{
	struct rsim_puda_config cfg = CFG(128, 4, 0, 4, 8);
	int maps = rsim_puda_live_mappings();
	struct rsim_puda_buf *bufs[3];
	struct rsim_puda_pool *pool;
	int i;

	pool = rsim_puda_pool_create(rsim_puda_dev(test), &cfg);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pool);
	for (i = 0; i < 3; i++) {
		bufs[i] = rsim_puda_get(pool, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, bufs[i]);
	}
	/* three reported, the free one unmapped, the three still mapped */
	KUNIT_EXPECT_EQ(test, rsim_puda_pool_destroy(pool), 3);
	KUNIT_EXPECT_EQ(test, rsim_puda_live_mappings(), maps + 3);
	/* still usable by their owner until put back */
	memset(bufs[0]->data, 1, bufs[0]->len);
	for (i = 0; i < 3; i++)
		rsim_puda_put(pool, bufs[i]);
	/* the last put unmapped them and freed the pool (kmemleak checks) */
	KUNIT_EXPECT_EQ(test, rsim_puda_live_mappings(), maps);
}

/*
 * A grow racing a destroy, made deterministic: the grow has made and
 * mapped its buffers and is about to add them when a destroy starts in
 * another kthread. The grow must fail with -ENODEV and unmap and free
 * what it made; the destroy must not free the pool under the grow nor
 * count the grow's buffers; a buffer still out frees the pool when put.
 */
struct rsim_puda_race_case {
	const char *name;
	u32 cache;
	bool buf_out;
};

static const struct rsim_puda_race_case rsim_puda_race_cases[] = {
	{ "idle_per_cpu_cache", 8, false },
	{ "idle_single_lock", 0, false },
	{ "buffer_out_per_cpu_cache", 8, true },
	{ "buffer_out_single_lock", 0, true },
};

KUNIT_ARRAY_PARAM_DESC(rsim_puda_race, rsim_puda_race_cases, name);

struct rsim_puda_race {
	struct kunit *test;
	struct rsim_puda_pool *pool;
	struct completion destroyed;
	unsigned int out;
	int maps_after;
	bool started;
};

static int rsim_puda_race_destroy_fn(void *data)
{
	struct rsim_puda_race *r = data;

	r->out = rsim_puda_pool_destroy(r->pool);
	r->maps_after = rsim_puda_live_mappings();
	complete(&r->destroyed);
	return 0;
}

/*
 * The grow hook: start the destroy, and return once it has begun. A grow
 * started now says so without making anything: -ENODEV once the destroy
 * has begun, -ENOSPC before (the racing grow holds all the room left).
 */
static void rsim_puda_race_hook(void *data)
{
	struct rsim_puda_race *r = data;
	unsigned long end = jiffies + 10 * HZ;
	struct task_struct *t;

	t = kthread_run(rsim_puda_race_destroy_fn, r, "rsim_puda_destroy");
	if (IS_ERR(t)) {
		KUNIT_FAIL(r->test, "kthread_run: %pe", t);
		return;
	}
	r->started = true;
	while (!completion_done(&r->destroyed) &&
	       rsim_puda_grow(r->pool, 1, GFP_KERNEL) == -ENOSPC) {
		if (time_after(jiffies, end)) {
			KUNIT_FAIL(r->test, "the destroy did not begin");
			return;
		}
		usleep_range(1000, 2000);
	}
}

static void rsim_puda_test_grow_racing_destroy(struct kunit *test)
{
	const struct rsim_puda_race_case *c = test->param_value;
	struct rsim_puda_config cfg = CFG(128, 2, 0, 6, c->cache);
	struct rsim_puda_race r = { .test = test };
	int maps = rsim_puda_live_mappings();
	struct rsim_puda_buf *buf = NULL;
	struct rsim_puda_stats st;
	int ret;

	init_completion(&r.destroyed);
	r.pool = rsim_puda_pool_create(rsim_puda_dev(test), &cfg);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, r.pool);
	if (c->buf_out) {
		buf = rsim_puda_get(r.pool, GFP_KERNEL);
		KUNIT_EXPECT_NOT_NULL(test, buf);
	}
	rsim_puda_set_grow_hook(r.pool, rsim_puda_race_hook, &r);

	/* the four buffers up to max; the destroy starts while they are made */
	ret = rsim_puda_grow(r.pool, 4, GFP_KERNEL);
	if (!r.started) {
		if (buf)
			rsim_puda_put(r.pool, buf);
		rsim_puda_pool_destroy(r.pool);
		return;
	}
	wait_for_completion(&r.destroyed);
	KUNIT_EXPECT_EQ(test, ret, -ENODEV);
	KUNIT_EXPECT_EQ(test, r.out, !!buf);
	/* the grow's buffers were unmapped before the destroy returned */
	KUNIT_EXPECT_EQ(test, r.maps_after, maps + !!buf);
	KUNIT_EXPECT_EQ(test, rsim_puda_live_mappings(), maps + !!buf);
	if (!buf)
		return;
	/* the pool lives on for that buffer, with the counters of before */
	st = rsim_puda_st(r.pool);
	KUNIT_EXPECT_EQ(test, st.allocated, 1);
	KUNIT_EXPECT_EQ(test, st.available, 0);
	KUNIT_EXPECT_EQ(test, st.grows, 1);
	KUNIT_EXPECT_EQ(test, st.alloc_fail, 0);
	KUNIT_EXPECT_EQ(test, st.map_fail, 0);
	rsim_puda_put(r.pool, buf);
	KUNIT_EXPECT_EQ(test, rsim_puda_live_mappings(), maps);
}

static void rsim_puda_test_bad_puts_refused(struct kunit *test)
{
	struct rsim_puda_config cfg = CFG(128, 2, 0, 2, 8);
	struct rsim_puda_pool *a = rsim_puda_pool_owned(test, &cfg);
	struct rsim_puda_pool *b = rsim_puda_pool_owned(test, &cfg);
	struct rsim_puda_buf *buf = rsim_puda_get(a, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, buf);
	rsim_puda_put(b, buf);			/* wrong pool */
	KUNIT_EXPECT_EQ(test, rsim_puda_st(b).bad_puts, 1);
	KUNIT_EXPECT_EQ(test, rsim_puda_st(b).available, 2);
	rsim_puda_put(a, buf);
	rsim_puda_put(a, buf);			/* twice */
	KUNIT_EXPECT_EQ(test, rsim_puda_st(a).bad_puts, 1);
	KUNIT_EXPECT_EQ(test, rsim_puda_st(a).available, 2);
	KUNIT_EXPECT_EQ(test, rsim_puda_st(a).outstanding, 0);
}

/* Several kthreads get and put at random; then the books must balance. */
#define RSIM_PUDA_THREADS	4
#define RSIM_PUDA_ROUNDS	4000

struct rsim_puda_worker {
	struct rsim_puda_pool *pool;
	struct completion done;
	unsigned long id;
	int clashes;	/* a buffer handed to two holders at once */
	int empties;
};

static int rsim_puda_worker_fn(void *data)
{
	struct rsim_puda_worker *w = data;
	struct rsim_puda_buf *held[3];
	int round, n, i;

	for (round = 0; round < RSIM_PUDA_ROUNDS; round++) {
		n = 1 + get_random_u32_below(3);
		for (i = 0; i < n; i++) {
			held[i] = rsim_puda_get(w->pool, GFP_KERNEL);
			if (!held[i]) {
				w->empties++;
				break;
			}
			if (held[i]->priv)
				w->clashes++;
			held[i]->priv = (void *)w->id;
			memset(held[i]->data, w->id, 16);
		}
		n = i;
		/* sleep while holding buffers: the others run meanwhile */
		if (!(round & 7))
			usleep_range(10, 20);
		for (i = 0; i < n; i++) {
			if (held[i]->priv != (void *)w->id ||
			    held[i]->data[15] != (u8)w->id)
				w->clashes++;
			held[i]->priv = NULL;
			rsim_puda_put(w->pool, held[i]);
		}
	}
	complete(&w->done);
	return 0;
}

static void rsim_puda_test_concurrent_accounting(struct kunit *test)
{
	const struct rsim_puda_mode_case *m = test->param_value;
	struct rsim_puda_config cfg = CFG(64, 8, 4, 24, m->cache);
	struct rsim_puda_pool *pool = rsim_puda_pool_owned(test, &cfg);
	struct rsim_puda_worker *w;
	struct rsim_puda_stats st;
	int i, clashes = 0;

	w = kunit_kcalloc(test, RSIM_PUDA_THREADS, sizeof(*w), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, w);
	for (i = 0; i < RSIM_PUDA_THREADS; i++) {
		struct task_struct *t;

		w[i].pool = pool;
		w[i].id = i + 1;
		init_completion(&w[i].done);
		t = kthread_run(rsim_puda_worker_fn, &w[i], "rsim_puda/%d", i);
		if (IS_ERR(t)) {
			/* no assert: the others must be waited for */
			KUNIT_FAIL(test, "kthread_run: %pe", t);
			complete(&w[i].done);
		}
	}
	for (i = 0; i < RSIM_PUDA_THREADS; i++) {
		wait_for_completion(&w[i].done);
		clashes += w[i].clashes;
	}

	st = rsim_puda_st(pool);
	KUNIT_EXPECT_EQ(test, clashes, 0);
	KUNIT_EXPECT_EQ(test, st.outstanding, 0);
	KUNIT_EXPECT_EQ(test, st.gets, st.puts);
	KUNIT_EXPECT_EQ(test, st.available, st.allocated - st.outstanding);
	KUNIT_EXPECT_LE(test, st.allocated, cfg.max);
	KUNIT_EXPECT_LE(test, st.hwm, st.allocated);
	KUNIT_EXPECT_EQ(test, st.bad_puts, 0);
	/* the threads did overlap: more buffers were out than one can hold */
	KUNIT_EXPECT_GT(test, st.hwm, 3);
	kunit_info(test, "%llu gets, %llu grows, %llu empty, hwm %llu of %llu",
		   st.gets, st.grows, st.empty, st.hwm, st.allocated);
}

static void rsim_puda_test_device_mad_pool(struct kunit *test)
{
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	struct rsim_puda_buf *buf;
	struct rsim_puda_stats st;

	KUNIT_ASSERT_NOT_NULL(test, rsim->mad_pool);
	st = rsim_puda_st(rsim->mad_pool);
	KUNIT_EXPECT_GE(test, st.allocated, 32);
	KUNIT_EXPECT_EQ(test, st.outstanding, 0);
	buf = rsim_puda_get(rsim->mad_pool, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	/* a GRH slot and a MAD, written by the device */
	KUNIT_EXPECT_EQ(test, buf->len, sizeof(struct ib_grh) + 256);
	KUNIT_EXPECT_EQ(test, buf->dir, DMA_FROM_DEVICE);
	KUNIT_EXPECT_PTR_EQ(test, buf->dev, &rsim->pdev->dev);
	rsim_puda_sync_for_device(buf);
	rsim_puda_sync_for_cpu(buf);
	rsim_puda_put(rsim->mad_pool, buf);
	st = rsim_puda_st(rsim->mad_pool);
	KUNIT_EXPECT_EQ(test, st.available, st.allocated);
}

static struct kunit_case rsim_puda_test_cases[] = {
	KUNIT_CASE(rsim_puda_test_buf_round_trip),
	KUNIT_CASE(rsim_puda_test_buf_refused),
	KUNIT_CASE_PARAM(rsim_puda_test_config, rsim_puda_cfg_gen_params),
	KUNIT_CASE_PARAM(rsim_puda_test_exhaustion, rsim_puda_mode_gen_params),
	KUNIT_CASE_PARAM(rsim_puda_test_grows_to_max_not_past,
			 rsim_puda_mode_gen_params),
	KUNIT_CASE(rsim_puda_test_grow_explicit),
	KUNIT_CASE_PARAM(rsim_puda_test_grow_failure_unwinds,
			 rsim_puda_fail_gen_params),
	KUNIT_CASE_PARAM(rsim_puda_test_create_failure_unwinds,
			 rsim_puda_fail_gen_params),
	KUNIT_CASE(rsim_puda_test_destroy_reports_outstanding),
	KUNIT_CASE_PARAM(rsim_puda_test_grow_racing_destroy,
			 rsim_puda_race_gen_params),
	KUNIT_CASE(rsim_puda_test_bad_puts_refused),
	KUNIT_CASE_PARAM(rsim_puda_test_concurrent_accounting,
			 rsim_puda_mode_gen_params),
	KUNIT_CASE(rsim_puda_test_device_mad_pool),
	RSIM_KUNIT_NO_LEFTOVERS,
	{}
};

static struct kunit_suite rsim_puda_test_suite = {
	.name = "rdmasim_puda",
	.suite_init = rsim_kunit_suite_init,
	.test_cases = rsim_puda_test_cases,
};

kunit_test_suite(rsim_puda_test_suite);
