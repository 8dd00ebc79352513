// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: the libibverbs provider of the rdmasim device (rdmasim<N>),
 * built out of tree against rdma-core's in-place build (its private
 * provider ABI, IBVERBS_PRIVATE_<N>). Everything goes through the generic
 * ibv_cmd_* command layer to the kernel's uverbs: context, device and
 * port query, PDs, MRs (plain, extended with a DMA handle, dma-buf) and
 * DMA handles. User CQs and QPs are not there yet: their create ops fail
 * with EOPNOTSUPP, as the kernel does.
 *
 * The kernel reports RDMA_DRIVER_UNKNOWN, which libibverbs never matches
 * by driver id, so the device is matched by its name.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/driver.h>
#include <infiniband/verbs.h>

/* the kernel's uverbs_abi_ver for rdmasim */
#define RSIM_UVERBS_ABI_VERSION 1

struct rsim_device {
	struct verbs_device vdev;
};

struct rsim_context {
	struct verbs_context vctx;
};

static int rsim_query_device_ex(struct ibv_context *ctx,
				const struct ibv_query_device_ex_input *input,
				struct ibv_device_attr_ex *attr,
				size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int ret;

	ret = ibv_cmd_query_device_any(ctx, input, attr, attr_size, &resp,
				       &resp_size);
	if (ret)
		return ret;

	/* the kernel's get_dev_fw_str (sysfs fw_ver): 16.16.32 bits */
	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%llu.%llu.%llu", (unsigned long long)(fw >> 48),
		 (unsigned long long)((fw >> 32) & 0xffff),
		 (unsigned long long)(fw & 0xffffffff));
	return 0;
}

static int rsim_query_port(struct ibv_context *ctx, uint8_t port,
			   struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd = {};

	return ibv_cmd_query_port(ctx, port, attr, &cmd, sizeof(cmd));
}

static struct ibv_pd *rsim_alloc_pd(struct ibv_context *ctx)
{
	struct ib_uverbs_alloc_pd_resp resp = {};
	struct ibv_alloc_pd cmd = {};
	struct ibv_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_alloc_pd(ctx, pd, &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}
	return pd;
}

static int rsim_dealloc_pd(struct ibv_pd *pd)
{
	int ret;

	ret = ibv_cmd_dealloc_pd(pd);
	if (ret)
		return ret;
	free(pd);
	return 0;
}

static struct ibv_mr *rsim_reg_mr(struct ibv_pd *pd, void *addr,
				  size_t length, uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp = {};
	struct ibv_reg_mr cmd = {};
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

static struct ibv_mr *rsim_reg_mr_ex(struct ibv_pd *pd,
				     struct ibv_mr_init_attr *init_attr)
{
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_reg_mr_ex(pd, vmr, init_attr);
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

static struct ibv_mr *rsim_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
					 size_t length, uint64_t iova, int fd,
					 int access)
{
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_reg_dmabuf_mr(pd, offset, length, iova, fd, access, vmr,
				    NULL);
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

static int rsim_dereg_mr(struct verbs_mr *vmr)
{
	int ret;

	ret = ibv_cmd_dereg_mr(vmr);
	if (ret)
		return ret;
	free(vmr);
	return 0;
}

static struct ibv_dmah *rsim_alloc_dmah(struct ibv_context *ctx,
					struct ibv_dmah_init_attr *attr)
{
	struct verbs_dmah *dmah;
	int ret;

	dmah = calloc(1, sizeof(*dmah));
	if (!dmah) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_alloc_dmah(ctx, dmah, attr);
	if (ret) {
		free(dmah);
		errno = ret;
		return NULL;
	}
	return &dmah->dmah;
}

static int rsim_dealloc_dmah(struct ibv_dmah *ibdmah)
{
	struct verbs_dmah *dmah = verbs_get_dmah(ibdmah);
	int ret;

	ret = ibv_cmd_free_dmah(dmah);
	if (ret)
		return ret;
	free(dmah);
	return 0;
}

/* user CQs and QPs: not yet (the kernel refuses them too) */
static struct ibv_cq *rsim_create_cq(struct ibv_context *ctx, int cqe,
				     struct ibv_comp_channel *channel,
				     int comp_vector)
{
	errno = EOPNOTSUPP;
	return NULL;
}

static struct ibv_qp *rsim_create_qp(struct ibv_pd *pd,
				     struct ibv_qp_init_attr *attr)
{
	errno = EOPNOTSUPP;
	return NULL;
}

static void rsim_free_context(struct ibv_context *ibctx)
{
	struct rsim_context *ctx =
		container_of(ibctx, struct rsim_context, vctx.context);

	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

static const struct verbs_context_ops rsim_ctx_ops = {
	.alloc_dmah = rsim_alloc_dmah,
	.alloc_pd = rsim_alloc_pd,
	.create_cq = rsim_create_cq,
	.create_qp = rsim_create_qp,
	.dealloc_dmah = rsim_dealloc_dmah,
	.dealloc_pd = rsim_dealloc_pd,
	.dereg_mr = rsim_dereg_mr,
	.free_context = rsim_free_context,
	.query_device_ex = rsim_query_device_ex,
	.query_port = rsim_query_port,
	.reg_dmabuf_mr = rsim_reg_dmabuf_mr,
	.reg_mr = rsim_reg_mr,
	.reg_mr_ex = rsim_reg_mr_ex,
};

static struct verbs_context *rsim_alloc_context(struct ibv_device *ibdev,
						int cmd_fd, void *private_data)
{
	struct ib_uverbs_get_context_resp resp = {};
	struct ibv_get_context cmd = {};
	struct rsim_context *ctx;
	int ret;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, vctx,
					   RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;
	ret = ibv_cmd_get_context(&ctx->vctx, &cmd, sizeof(cmd), NULL, &resp,
				  sizeof(resp));
	if (ret) {
		verbs_uninit_context(&ctx->vctx);
		free(ctx);
		errno = ret;
		return NULL;
	}
	verbs_set_ops(&ctx->vctx, &rsim_ctx_ops);
	return &ctx->vctx;
}

static struct verbs_device *rsim_device_alloc(struct verbs_sysfs_dev *sdev)
{
	struct rsim_device *dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	return &dev->vdev;
}

static void rsim_device_free(struct verbs_device *vdev)
{
	free(container_of(vdev, struct rsim_device, vdev));
}

/*
 * By name: the kernel's driver id is RDMA_DRIVER_UNKNOWN (0), which
 * libibverbs' match_driver_id() skips, and rdmasim<N> has no device/
 * modalias to match.
 */
static const struct verbs_match_ent rsim_match_table[] = {
	VERBS_NAME_MATCH("rdmasim", NULL),
	{},
};

static const struct verbs_device_ops rsim_dev_ops = {
	.name = "rdmasim",
	.match_min_abi_version = RSIM_UVERBS_ABI_VERSION,
	.match_max_abi_version = RSIM_UVERBS_ABI_VERSION,
	.match_table = rsim_match_table,
	.alloc_device = rsim_device_alloc,
	.uninit_device = rsim_device_free,
	.alloc_context = rsim_alloc_context,
};

PROVIDER_DRIVER(rdmasim, rsim_dev_ops);
