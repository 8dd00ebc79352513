// SPDX-License-Identifier: GPL-2.0-only
/*
 * Suite rdmasim_dev: device lifecycle, attributes, the port, the DMA
 * device, and teardown with objects held by a kernel client.
 */

#include <linux/dma-mapping.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>

#include "helpers.h"

static void rsim_dev_test_registers_named_device(struct kunit *test)
{
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	char name[IB_DEVICE_NAME_MAX];

	snprintf(name, sizeof(name), RSIM_DEV_NAME_FMT, rsim->id);
	KUNIT_EXPECT_STREQ(test, dev_name(&rsim->ibdev.dev), name);
	KUNIT_EXPECT_PTR_EQ(test, rsim->ibdev.dev.parent, &rsim->pdev->dev);
	KUNIT_EXPECT_TRUE(test, device_is_registered(&rsim->ibdev.dev));
}

static struct rsim_dev *rsim_dev_seen_want;
static int rsim_dev_seen_count;

static int rsim_dev_seen_add(struct ib_device *ibdev)
{
	if (ibdev == &rsim_dev_seen_want->ibdev)
		rsim_dev_seen_count++;
	return -EOPNOTSUPP;	/* keep no client data */
}

static void rsim_dev_seen_remove(struct ib_device *ibdev, void *data)
{
}

static struct ib_client rsim_dev_seen_client = {
	.name = "rdmasim_kunit_seen",
	.add = rsim_dev_seen_add,
	.remove = rsim_dev_seen_remove,
};

static void rsim_dev_test_kernel_clients_see_device(struct kunit *test)
{
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);

	/* every mandatory op present: in-kernel clients attach */
	KUNIT_EXPECT_TRUE(test, rsim->ibdev.kverbs_provider);
	rsim_dev_seen_want = rsim;
	rsim_dev_seen_count = 0;
	KUNIT_ASSERT_EQ(test, ib_register_client(&rsim_dev_seen_client), 0);
	ib_unregister_client(&rsim_dev_seen_client);
	KUNIT_EXPECT_EQ(test, rsim_dev_seen_count, 1);
}

static void rsim_dev_test_duplicate_id_refused(struct kunit *test)
{
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	struct rsim_dev_config cfg;

	rsim_default_config(&cfg);
	KUNIT_EXPECT_EQ(test, PTR_ERR(rsim_dev_new(rsim->id, &cfg)), -EEXIST);
}

static void rsim_dev_test_del_unknown_id(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, rsim_dev_del(rsim_kunit_new_id()), -ENODEV);
}

static void rsim_dev_test_bad_config_leaves_nothing(struct kunit *test)
{
	struct rsim_dev_config cfg;
	u32 id = rsim_kunit_new_id();

	rsim_default_config(&cfg);
	cfg.lid = 0xc000;		/* multicast range */
	KUNIT_EXPECT_EQ(test, PTR_ERR(rsim_dev_new(id, &cfg)), -EINVAL);
	KUNIT_EXPECT_EQ(test, rsim_dev_del(id), -ENODEV);

	rsim_default_config(&cfg);
	cfg.limits.max_fast_reg_page_list_len = 0;
	KUNIT_EXPECT_EQ(test, PTR_ERR(rsim_dev_new(id, &cfg)), -EINVAL);
	KUNIT_EXPECT_EQ(test, rsim_dev_del(id), -ENODEV);
}

static void rsim_dev_test_create_delete_cycle(struct kunit *test)
{
	struct rsim_dev_config cfg;
	u32 id = rsim_kunit_new_id();
	int i;

	rsim_default_config(&cfg);
	for (i = 0; i < 2; i++) {
		struct rsim_dev *rsim = rsim_dev_new(id, &cfg);

		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, rsim);
		KUNIT_EXPECT_EQ(test, rsim_dev_del(id), 0);
	}
}

static void rsim_dev_test_device_attrs(struct kunit *test)
{
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	const struct ib_device_attr *a = &rsim->ibdev.attrs;
	struct rsim_dev_config def;
	const struct rsim_limits *lim = &def.limits;

	rsim_default_config(&def);
	KUNIT_EXPECT_EQ(test, a->max_fast_reg_page_list_len,
			lim->max_fast_reg_page_list_len);
	KUNIT_EXPECT_EQ(test, a->max_mr, lim->max_res[RSIM_RES_MR]);
	KUNIT_EXPECT_EQ(test, a->max_pd, lim->max_res[RSIM_RES_PD]);
	KUNIT_EXPECT_EQ(test, a->max_qp, lim->max_res[RSIM_RES_QP]);
	KUNIT_EXPECT_EQ(test, a->max_cq, lim->max_res[RSIM_RES_CQ]);
	KUNIT_EXPECT_EQ(test, a->max_ah, lim->max_res[RSIM_RES_AH]);
	KUNIT_EXPECT_EQ(test, a->max_cqe, lim->max_cqe);
	KUNIT_EXPECT_EQ(test, a->max_qp_wr, lim->max_qp_wr);
	KUNIT_EXPECT_EQ(test, a->page_size_cap, RSIM_PAGE_SIZE_CAP);
	KUNIT_EXPECT_TRUE(test, a->page_size_cap & PAGE_SIZE);
	KUNIT_EXPECT_TRUE(test,
			  a->device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS);
	KUNIT_EXPECT_TRUE(test, a->kernel_cap_flags & IBK_LOCAL_DMA_LKEY);
	KUNIT_EXPECT_TRUE(test, a->kernel_cap_flags & IBK_SG_GAPS_REG);
	KUNIT_EXPECT_EQ(test, rsim->ibdev.local_dma_lkey, RSIM_LOCAL_DMA_LKEY);
	KUNIT_EXPECT_GT(test, a->max_qp_rd_atom, 0);
	KUNIT_EXPECT_GT(test, a->max_qp_init_rd_atom, 0);
	KUNIT_EXPECT_EQ(test, a->max_res_rd_atom,
			a->max_qp_rd_atom * a->max_qp);
	KUNIT_EXPECT_EQ(test, a->max_pkeys, lim->pkey_tbl_len);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(a->sys_image_guid),
			be64_to_cpu(rsim->ibdev.node_guid));
}

static void rsim_dev_test_port_is_active_ib(struct kunit *test)
{
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	struct ib_device *ibdev = &rsim->ibdev;
	struct ib_port_attr pa;
	union ib_gid gid;
	u16 pkey;

	KUNIT_ASSERT_EQ(test, ib_query_port(ibdev, 1, &pa), 0);
	KUNIT_EXPECT_EQ(test, pa.state, IB_PORT_ACTIVE);
	KUNIT_EXPECT_EQ(test, pa.phys_state, IB_PORT_PHYS_STATE_LINK_UP);
	/* the base LID + the device id, as rdmasim0's sysfs shows */
	KUNIT_EXPECT_EQ(test, pa.lid, rsim->port.lid);
	KUNIT_EXPECT_NE(test, pa.lid, 0);
	/* the subnet's master SM (subnet.c): this port, or the one it names */
	rsim_kunit_expect_master_sm_lid(test, rsim, pa.sm_lid);
	KUNIT_EXPECT_EQ(test, pa.active_mtu, IB_MTU_4096);
	KUNIT_EXPECT_LE(test, pa.active_mtu, pa.max_mtu);
	/* sysfs "rate" fails on an invalid width; libibumad reads it */
	KUNIT_EXPECT_GT(test, ib_width_enum_to_int(pa.active_width), 0);
	KUNIT_EXPECT_EQ(test, pa.active_speed, IB_SPEED_EDR);
	KUNIT_EXPECT_GE(test, pa.pkey_tbl_len, 1);
	KUNIT_EXPECT_EQ(test, pa.gid_tbl_len, 1);
	KUNIT_EXPECT_EQ(test, rdma_port_get_link_layer(ibdev, 1),
			IB_LINK_LAYER_INFINIBAND);

	KUNIT_EXPECT_EQ(test, ib_query_pkey(ibdev, 1, 0, &pkey), 0);
	KUNIT_EXPECT_EQ(test, pkey, IB_DEFAULT_PKEY_FULL);
	KUNIT_EXPECT_EQ(test, ib_query_pkey(ibdev, 1, pa.pkey_tbl_len, &pkey),
			-EINVAL);

	KUNIT_EXPECT_EQ(test, rdma_query_gid(ibdev, 1, 0, &gid), 0);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(gid.global.subnet_prefix),
			0xfe80000000000000ULL);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(gid.global.interface_id),
			be64_to_cpu(ibdev->node_guid) + 1);

	KUNIT_EXPECT_TRUE(test, rdma_cap_ib_mad(ibdev, 1));
	KUNIT_EXPECT_TRUE(test, rdma_cap_ib_smi(ibdev, 1));
	KUNIT_EXPECT_EQ(test, rdma_max_mad_size(ibdev, 1), IB_MGMT_MAD_SIZE);
	KUNIT_EXPECT_EQ(test, ib_query_port(ibdev, 2, &pa), -EINVAL);
}

static void rsim_dev_test_lids_follow_device_ids(struct kunit *test)
{
	struct rsim_dev_config cfg;
	struct rsim_dev *rsim;
	struct ib_port_attr pa;

	rsim_default_config(&cfg);
	cfg.lid = 0x1234;
	rsim = rsim_kunit_dev(test, &cfg);
	KUNIT_ASSERT_EQ(test, ib_query_port(&rsim->ibdev, 1, &pa), 0);
	KUNIT_EXPECT_EQ(test, pa.lid, 0x1234);
	rsim_kunit_expect_master_sm_lid(test, rsim, pa.sm_lid);
}

static void rsim_dev_test_real_dma_device(struct kunit *test)
{
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	struct ib_device *ibdev = &rsim->ibdev;
	dma_addr_t dma;
	void *buf;

	KUNIT_EXPECT_PTR_EQ(test, ibdev->dma_device, &rsim->pdev->dev);
	KUNIT_EXPECT_FALSE(test, ib_uses_virt_dma(ibdev));
	KUNIT_EXPECT_NOT_NULL(test, ibdev->dma_device->dma_parms);
	KUNIT_EXPECT_EQ(test, dma_get_mask(ibdev->dma_device),
			DMA_BIT_MASK(64));

	buf = kunit_kzalloc(test, 512, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	dma = ib_dma_map_single(ibdev, buf, 512, DMA_BIDIRECTIONAL);
	KUNIT_ASSERT_FALSE(test, ib_dma_mapping_error(ibdev, dma));
	ib_dma_unmap_single(ibdev, dma, 512, DMA_BIDIRECTIONAL);
}

static void rsim_dev_test_mad_layer_attached(struct kunit *test)
{
	struct rsim_dev *rsim = rsim_kunit_shared_dev(test);
	struct rsim_qp *qp0 = xa_load(&rsim->qp_xa, 0);
	struct rsim_qp *qp1 = xa_load(&rsim->qp_xa, 1);

	/* the MAD layer created QP0/QP1 and posted its receive buffers */
	KUNIT_ASSERT_NOT_NULL(test, qp0);
	KUNIT_ASSERT_NOT_NULL(test, qp1);
	KUNIT_EXPECT_EQ(test, qp0->ibqp.qp_type, IB_QPT_SMI);
	KUNIT_EXPECT_EQ(test, qp1->ibqp.qp_type, IB_QPT_GSI);
	KUNIT_EXPECT_EQ(test, qp0->state, IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, qp1->state, IB_QPS_RTS);
	KUNIT_EXPECT_GT(test, qp1->rq.count, 0);
}

/*
 * A kernel client that holds one object of every type on each rdmasim
 * device, and releases them in remove(), which ib_unregister_device() calls
 * when the device is deleted.
 */
struct rsim_dev_client_ctx {
	struct rsim_dev *rsim;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct ib_mr *mr;
	struct ib_ah *ah;
	struct rsim_kunit_counts before;
	struct rsim_kunit_counts after_release;
	bool removed;
};

static struct rsim_dev_client_ctx rsim_dev_client_data;
static struct ib_client rsim_dev_client;

static int rsim_dev_client_add(struct ib_device *ibdev)
{
	struct rsim_dev_client_ctx *ctx = &rsim_dev_client_data;
	struct ib_qp_init_attr qpa = {};
	struct rdma_ah_attr aha = {};

	if (ibdev != &ctx->rsim->ibdev)
		return -EOPNOTSUPP;

	rsim_kunit_snapshot(ctx->rsim, &ctx->before);
	ctx->pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(ctx->pd))
		return PTR_ERR(ctx->pd);
	ctx->cq = ib_alloc_cq(ibdev, NULL, 16, 0, IB_POLL_DIRECT);
	qpa.qp_type = IB_QPT_RC;
	qpa.send_cq = ctx->cq;
	qpa.recv_cq = ctx->cq;
	qpa.cap.max_send_wr = 4;
	qpa.cap.max_recv_wr = 4;
	qpa.cap.max_send_sge = 1;
	qpa.cap.max_recv_sge = 1;
	ctx->qp = IS_ERR(ctx->cq) ? ERR_CAST(ctx->cq) :
		  ib_create_qp(ctx->pd, &qpa);
	ctx->mr = ib_alloc_mr(ctx->pd, IB_MR_TYPE_MEM_REG, 8);
	aha.type = RDMA_AH_ATTR_TYPE_IB;
	rdma_ah_set_port_num(&aha, 1);
	rdma_ah_set_dlid(&aha, 7);
	ctx->ah = rdma_create_ah(ctx->pd, &aha, 0);
	ib_set_client_data(ibdev, &rsim_dev_client, ctx);
	return 0;
}

static void rsim_dev_client_remove(struct ib_device *ibdev, void *data)
{
	struct rsim_dev_client_ctx *ctx = data;

	if (!IS_ERR_OR_NULL(ctx->ah))
		rdma_destroy_ah(ctx->ah, 0);
	if (!IS_ERR_OR_NULL(ctx->mr))
		ib_dereg_mr(ctx->mr);
	if (!IS_ERR_OR_NULL(ctx->qp))
		ib_destroy_qp(ctx->qp);
	if (!IS_ERR_OR_NULL(ctx->cq))
		ib_free_cq(ctx->cq);
	ib_dealloc_pd(ctx->pd);
	/* the device is still alive here: read its counters */
	rsim_kunit_snapshot(ctx->rsim, &ctx->after_release);
	ctx->removed = true;
}

static struct ib_client rsim_dev_client = {
	.name = "rdmasim_kunit",
	.add = rsim_dev_client_add,
	.remove = rsim_dev_client_remove,
};

static void rsim_dev_client_unregister(void *client)
{
	ib_unregister_client(client);
}

static void rsim_dev_del_action(void *id)
{
	rsim_dev_del((uintptr_t)id);
}

static void rsim_dev_test_delete_with_client_objects(struct kunit *test)
{
	struct rsim_dev_client_ctx *ctx = &rsim_dev_client_data;
	struct rsim_dev_config cfg;
	u32 id = rsim_kunit_new_id();
	int t;

	memset(ctx, 0, sizeof(*ctx));
	rsim_default_config(&cfg);
	ctx->rsim = rsim_dev_new(id, &cfg);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->rsim);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, rsim_dev_del_action,
						  (void *)(uintptr_t)id));
	KUNIT_ASSERT_EQ(test, ib_register_client(&rsim_dev_client), 0);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test,
						  rsim_dev_client_unregister,
						  &rsim_dev_client));

	KUNIT_EXPECT_NOT_ERR_OR_NULL(test, ctx->pd);
	KUNIT_EXPECT_NOT_ERR_OR_NULL(test, ctx->cq);
	KUNIT_EXPECT_NOT_ERR_OR_NULL(test, ctx->qp);
	KUNIT_EXPECT_NOT_ERR_OR_NULL(test, ctx->mr);
	KUNIT_EXPECT_NOT_ERR_OR_NULL(test, ctx->ah);
	KUNIT_EXPECT_EQ(test, rsim_res_count(ctx->rsim, RSIM_RES_MR),
			ctx->before.res[RSIM_RES_MR] + 1);

	/* delete the device while the client still holds everything */
	KUNIT_EXPECT_EQ(test, rsim_dev_del(id), 0);
	KUNIT_EXPECT_TRUE(test, ctx->removed);
	for (t = 0; t < RSIM_RES_NR; t++)
		KUNIT_EXPECT_EQ(test, ctx->after_release.res[t],
				ctx->before.res[t]);
}

/*
 * What does not fit is refused before anything is made: an id beyond the
 * platform device's int, or a LID (the base LID + the id) past
 * the last unicast LID, however it would wrap in 16 bits.
 */
struct rsim_dev_unfit_case {
	const char *name;
	u32 id;
	u32 lid;	/* if set, the id is the one that gives this LID */
	int err;
};

static const struct rsim_dev_unfit_case rsim_dev_unfit_cases[] = {
	{ "id_past_int_max", 0x80000000U, 0, -EINVAL },
	{ "id_u32_max", U32_MAX, 0, -EINVAL },
	{ "lid_first_multicast", 0, 0xc000, -ERANGE },
	{ "lid_wraps_to_zero", 0, 0x10000, -ERANGE },
	{ "lid_wraps_to_rdmasim0s", 0x10000, 0, -ERANGE },
	{ "id_int_max", INT_MAX, 0, -ERANGE },
};

KUNIT_ARRAY_PARAM_DESC(rsim_dev_unfit, rsim_dev_unfit_cases, name);

static void rsim_dev_test_unfit_id_refused(struct kunit *test)
{
	const struct rsim_dev_unfit_case *c = test->param_value;
	struct rsim_dev *shared = rsim_kunit_shared_dev(test);
	int maps = rsim_puda_live_mappings();
	struct rsim_kunit_counts before;
	struct rsim_dev_config cfg;
	char name[IB_DEVICE_NAME_MAX];
	struct device *pdev;
	struct rsim_dev *rsim;
	u32 id = c->id;

	/* the shared device has the default LID: the base LID + its id */
	if (c->lid)
		id = c->lid - (shared->port.lid - shared->id);
	rsim_kunit_snapshot(shared, &before);
	rsim_default_config(&cfg);
	rsim = rsim_dev_new(id, &cfg);
	KUNIT_EXPECT_EQ_MSG(test, PTR_ERR_OR_ZERO(rsim), c->err, "id %u", id);
	if (!IS_ERR(rsim)) {
		kunit_info(test, RSIM_DEV_NAME_FMT " created with LID 0x%x", id,
			   rsim->port.lid);
		rsim_dev_del(id);
	}

	/* nothing was made: no device (no platform device), no mapping */
	KUNIT_EXPECT_EQ(test, rsim_dev_del(id), -ENODEV);
	snprintf(name, sizeof(name), RSIM_DRV_NAME ".%d", (int)id);
	pdev = bus_find_device_by_name(&platform_bus_type, NULL, name);
	KUNIT_EXPECT_NULL(test, pdev);
	put_device(pdev);
	KUNIT_EXPECT_EQ(test, rsim_puda_live_mappings(), maps);
	rsim_kunit_expect_counts(test, shared, &before);
}

/* A ten-digit id names every object after the whole id. */
static void rsim_dev_test_long_id_named_in_full(struct kunit *test)
{
	struct rsim_dev_config cfg;
	char name[IB_DEVICE_NAME_MAX];
	struct rsim_dev *rsim;
	u32 id = 1000000000 + rsim_kunit_new_id();

	rsim_default_config(&cfg);
	cfg.lid = 0x1235;	/* the base LID + id does not fit */
	rsim = rsim_dev_new(id, &cfg);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, rsim);
	KUNIT_ASSERT_EQ(test, 0,
			kunit_add_action_or_reset(test, rsim_dev_del_action,
						  (void *)(uintptr_t)id));
	snprintf(name, sizeof(name), RSIM_DEV_NAME_FMT, id);
	KUNIT_EXPECT_STREQ(test, dev_name(&rsim->ibdev.dev), name);
	KUNIT_EXPECT_STREQ(test, rsim->ibdev.node_desc, name);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(rsim->debugfs));
	snprintf(name, sizeof(name), "%pd", rsim->debugfs);
	KUNIT_EXPECT_STREQ(test, name, dev_name(&rsim->ibdev.dev));
	KUNIT_EXPECT_EQ(test, rsim->port.lid, 0x1235);
}

/*
 * insmod rdmasim.ko async_probe=1 (the kernel's generic parameter) asks
 * for asynchronous probing of the module's drivers, as does
 * driver_async_probe=rdmasim: creating a device must still work.
 */
static void rsim_dev_test_created_with_async_probe_requested(struct kunit *test)
{
	struct rsim_dev *shared = rsim_kunit_shared_dev(test);
	struct module *owner = shared->pdev->dev.driver->owner;
	struct rsim_dev_config cfg;
	struct rsim_dev *rsim;
	u32 id = rsim_kunit_new_id();
	bool was;

	KUNIT_ASSERT_NOT_NULL(test, owner);
	rsim_default_config(&cfg);
	was = owner->async_probe_requested;
	owner->async_probe_requested = true;
	rsim = rsim_dev_new(id, &cfg);
	owner->async_probe_requested = was;
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, rsim);
	KUNIT_EXPECT_TRUE(test, device_is_registered(&rsim->ibdev.dev));
	KUNIT_EXPECT_PTR_EQ(test, platform_get_drvdata(rsim->pdev), rsim);
	KUNIT_EXPECT_EQ(test, rsim_dev_del(id), 0);
}

static struct kunit_case rsim_dev_test_cases[] = {
	KUNIT_CASE(rsim_dev_test_registers_named_device),
	KUNIT_CASE(rsim_dev_test_kernel_clients_see_device),
	KUNIT_CASE(rsim_dev_test_duplicate_id_refused),
	KUNIT_CASE(rsim_dev_test_del_unknown_id),
	KUNIT_CASE(rsim_dev_test_bad_config_leaves_nothing),
	KUNIT_CASE_PARAM(rsim_dev_test_unfit_id_refused,
			 rsim_dev_unfit_gen_params),
	KUNIT_CASE(rsim_dev_test_long_id_named_in_full),
	KUNIT_CASE(rsim_dev_test_created_with_async_probe_requested),
	KUNIT_CASE(rsim_dev_test_create_delete_cycle),
	KUNIT_CASE(rsim_dev_test_device_attrs),
	KUNIT_CASE(rsim_dev_test_port_is_active_ib),
	KUNIT_CASE(rsim_dev_test_lids_follow_device_ids),
	KUNIT_CASE(rsim_dev_test_real_dma_device),
	KUNIT_CASE(rsim_dev_test_mad_layer_attached),
	KUNIT_CASE(rsim_dev_test_delete_with_client_objects),
	RSIM_KUNIT_NO_LEFTOVERS,
	{}
};

static struct kunit_suite rsim_dev_test_suite = {
	.name = "rdmasim_dev",
	.suite_init = rsim_kunit_suite_init,
	.test_cases = rsim_dev_test_cases,
};

kunit_test_suite(rsim_dev_test_suite);
