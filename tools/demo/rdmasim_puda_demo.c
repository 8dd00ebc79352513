// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim_puda_demo: a kernel client of rdmasim's PUDA pool library. On
 * load it creates a pool on the first rdmasim device's DMA device, takes
 * two buffers out, writes one and hands it to the "device" and back with
 * the sync calls, prints the pool's counters, and keeps the two buffers
 * out until it is unloaded. Meanwhile rdmasim cannot be unloaded (this
 * module uses its exported symbols); on unload the buffers go back and the
 * pool is destroyed with nothing outstanding.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <rdma/ib_verbs.h>

#include <rdmasim/puda.h>

static struct rsim_puda_pool *pool;
static struct rsim_puda_buf *bufs[2];

static void puda_demo_stats(const char *when)
{
	struct rsim_puda_stats st;

	rsim_puda_get_stats(pool, &st);
	pr_info("%s: allocated %llu available %llu outstanding %llu gets %llu puts %llu\n",
		when, st.allocated, st.available, st.outstanding, st.gets,
		st.puts);
}

static int puda_demo_add(struct ib_device *ibdev)
{
	struct rsim_puda_config cfg = {
		.name = "rdmasim_puda_demo",
		.buf_len = 2048,
		.initial = 4,
		.max = 8,
		.grow = 4,
		.cache = 2,
		.dir = DMA_BIDIRECTIONAL,
	};
	int i;

	if (pool || strncmp(dev_name(&ibdev->dev), "rdmasim", 7))
		return 0;
	pool = rsim_puda_pool_create(ibdev->dma_device, &cfg);
	if (IS_ERR(pool)) {
		pr_info("%s: rsim_puda_pool_create -> %pe\n",
			dev_name(&ibdev->dev), pool);
		pool = NULL;
		return 0;
	}
	pr_info("%s: pool of %u-byte buffers on %s\n", dev_name(&ibdev->dev),
		cfg.buf_len, dev_name(ibdev->dma_device));
	for (i = 0; i < ARRAY_SIZE(bufs); i++)
		bufs[i] = rsim_puda_get(pool, GFP_KERNEL);
	if (bufs[0]) {
		memset(bufs[0]->data, 0x5a, bufs[0]->len);
		rsim_puda_sync_for_device(bufs[0]);
		rsim_puda_sync_for_cpu(bufs[0]);
		pr_info("buffer at DMA address %pad, %u bytes, round trip %s\n",
			&bufs[0]->dma, bufs[0]->len,
			bufs[0]->data[2047] == 0x5a ? "intact" : "CORRUPT");
	}
	puda_demo_stats("holding two buffers");
	return 0;
}

static void puda_demo_remove(struct ib_device *ibdev, void *client_data)
{
}

static struct ib_client puda_demo_client = {
	.name = "rdmasim_puda_demo",
	.add = puda_demo_add,
	.remove = puda_demo_remove,
};

static int __init puda_demo_init(void)
{
	return ib_register_client(&puda_demo_client);
}

static void __exit puda_demo_exit(void)
{
	int i;

	ib_unregister_client(&puda_demo_client);
	if (!pool)
		return;
	for (i = 0; i < ARRAY_SIZE(bufs); i++)
		if (bufs[i])
			rsim_puda_put(pool, bufs[i]);
	puda_demo_stats("all back");
	pr_info("pool destroyed, %u buffer(s) were still out\n",
		rsim_puda_pool_destroy(pool));
}

module_init(puda_demo_init);
module_exit(puda_demo_exit);

MODULE_DESCRIPTION("rdmasim demo: a client of the PUDA pool library");
MODULE_AUTHOR("rdmasim developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(RSIM_VERSION);
