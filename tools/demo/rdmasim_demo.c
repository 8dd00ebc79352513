// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim_demo: on load, for every RDMA device present (rdmasim, rxe,
 * siw, hardware), allocate a fast-registration MR, map real DMA-mapped
 * pages into it with ib_map_mr_sg(), push it past its max_num_sg and past
 * the device's advertised limit, and print what the device did. Everything
 * is released before the module's init returns; unload it afterwards.
 *
 * With hold=1 it also keeps a PD, CQ, QP and MR on every rdmasim device
 * until the device goes away: the device's removal (del_device, or
 * unloading rdmasim) must then call our remove(), which releases them.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include <rdmasim/compat.h>

#define DEMO_PAGES	12
#define DEMO_MAX_SG	8

static bool hold;
module_param(hold, bool, 0444);
MODULE_PARM_DESC(hold, "keep a PD, CQ, QP and MR on each rdmasim device");

/* what hold=1 keeps on one device, released in demo_remove() */
struct demo_held {
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct ib_mr *mr;
};

static struct ib_client demo_client;

static void demo_release(struct demo_held *h)
{
	if (!IS_ERR_OR_NULL(h->mr))
		ib_dereg_mr(h->mr);
	if (!IS_ERR_OR_NULL(h->qp))
		ib_destroy_qp(h->qp);
	if (!IS_ERR_OR_NULL(h->cq))
		ib_free_cq(h->cq);
	if (!IS_ERR_OR_NULL(h->pd))
		ib_dealloc_pd(h->pd);
	kfree(h);
}

static void demo_hold(struct ib_device *ibdev)
{
	struct ib_qp_init_attr qpa = {
		.qp_type = IB_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct demo_held *h = rsim_kzalloc_obj(*h, GFP_KERNEL);

	if (!h)
		return;
	h->pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(h->pd))
		goto err;
	h->cq = ib_alloc_cq(ibdev, NULL, 8, 0, IB_POLL_WORKQUEUE);
	if (IS_ERR(h->cq))
		goto err;
	qpa.send_cq = h->cq;
	qpa.recv_cq = h->cq;
	h->qp = ib_create_qp(h->pd, &qpa);
	if (IS_ERR(h->qp))
		goto err;
	h->mr = ib_alloc_mr(h->pd, IB_MR_TYPE_MEM_REG, DEMO_MAX_SG);
	if (IS_ERR(h->mr))
		goto err;
	ib_set_client_data(ibdev, &demo_client, h);
	pr_info("%s: holding a PD, CQ, QP and MR until the device goes\n",
		dev_name(&ibdev->dev));
	return;
err:
	pr_info("%s: hold failed\n", dev_name(&ibdev->dev));
	demo_release(h);
}

static void demo_alloc_limit(struct ib_device *ibdev, struct ib_pd *pd,
			     u32 max_num_sg, const char *what)
{
	struct ib_mr *mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, max_num_sg);

	if (IS_ERR(mr)) {
		pr_info("%s:   ib_alloc_mr(max_num_sg=%u, %s) -> %pe\n",
			dev_name(&ibdev->dev), max_num_sg, what, mr);
		return;
	}
	pr_info("%s:   ib_alloc_mr(max_num_sg=%u, %s) -> accepted\n",
		dev_name(&ibdev->dev), max_num_sg, what);
	ib_dereg_mr(mr);
}

static void demo_map(struct ib_device *ibdev, struct ib_mr *mr,
		     struct scatterlist *sgl, int nents)
{
	int n = ib_map_mr_sg(mr, sgl, nents, NULL, PAGE_SIZE);

	if (n < 0)
		pr_info("%s:   map %d pages -> %d (%pe)\n", dev_name(&ibdev->dev),
			nents, n, ERR_PTR(n));
	else
		pr_info("%s:   map %d pages -> %d entries mapped, iova 0x%llx length %llu\n",
			dev_name(&ibdev->dev), nents, n, mr->iova, mr->length);
}

static int demo_add(struct ib_device *ibdev)
{
	const char *name = dev_name(&ibdev->dev);
	struct page *pages[DEMO_PAGES] = {};
	struct scatterlist *sgl;
	struct ib_mr *mr;
	struct ib_pd *pd;
	int i, n;

	pr_info("%s: max_fast_reg_page_list_len %u, page_size_cap 0x%llx, %s\n",
		name, ibdev->attrs.max_fast_reg_page_list_len,
		ibdev->attrs.page_size_cap,
		ib_uses_virt_dma(ibdev) ? "virtual DMA" : "DMA API");

	pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(pd)) {
		pr_info("%s: ib_alloc_pd -> %pe\n", name, pd);
		return 0;
	}
	sgl = rsim_kzalloc_objs(*sgl, DEMO_PAGES, GFP_KERNEL);
	if (!sgl)
		goto out_pd;
	sg_init_table(sgl, DEMO_PAGES);
	for (i = 0; i < DEMO_PAGES; i++) {
		pages[i] = alloc_page(GFP_KERNEL);
		if (!pages[i])
			goto out_pages;
		sg_set_page(&sgl[i], pages[i], PAGE_SIZE, 0);
	}
	n = ib_dma_map_sg(ibdev, sgl, DEMO_PAGES, DMA_BIDIRECTIONAL);
	if (n != DEMO_PAGES) {
		pr_info("%s: ib_dma_map_sg -> %d\n", name, n);
		goto out_unmap;
	}

	mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, DEMO_MAX_SG);
	if (IS_ERR(mr)) {
		pr_info("%s: ib_alloc_mr(max_num_sg=%d) -> %pe\n", name,
			DEMO_MAX_SG, mr);
		goto out_unmap;
	}
	pr_info("%s: MR lkey 0x%08x rkey 0x%08x, max_num_sg %d\n", name,
		mr->lkey, mr->rkey, DEMO_MAX_SG);
	demo_map(ibdev, mr, sgl, 3);
	demo_map(ibdev, mr, sgl, DEMO_PAGES);
	ib_dereg_mr(mr);

	demo_alloc_limit(ibdev, pd, 0, "zero");
	demo_alloc_limit(ibdev, pd, ibdev->attrs.max_fast_reg_page_list_len + 1,
			 "limit + 1");
out_unmap:
	ib_dma_unmap_sg(ibdev, sgl, DEMO_PAGES, DMA_BIDIRECTIONAL);
out_pages:
	for (i = 0; i < DEMO_PAGES; i++)
		if (pages[i])
			__free_page(pages[i]);
	kfree(sgl);
out_pd:
	ib_dealloc_pd(pd);
	if (hold && !strncmp(name, "rdmasim", 7))
		demo_hold(ibdev);
	return 0;
}

static void demo_remove(struct ib_device *ibdev, void *client_data)
{
	if (!client_data)
		return;
	demo_release(client_data);
	pr_info("%s: released what it held\n", dev_name(&ibdev->dev));
}

static struct ib_client demo_client = {
	.name = "rdmasim_demo",
	.add = demo_add,
	.remove = demo_remove,
};

static int __init demo_init(void)
{
	return ib_register_client(&demo_client);
}

static void __exit demo_exit(void)
{
	ib_unregister_client(&demo_client);
}

module_init(demo_init);
module_exit(demo_exit);

MODULE_DESCRIPTION("rdmasim demo: MR allocation and mapping on every RDMA device");
MODULE_AUTHOR("rdmasim developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(RSIM_VERSION);
