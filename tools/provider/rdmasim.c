// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: the libibverbs provider of the rdmasim device (rdmasim<N>),
 * built out of tree against rdma-core's in-place build (its private
 * provider ABI, IBVERBS_PRIVATE_<N>). Everything goes through the generic
 * ibv_cmd_* command layer to the kernel's uverbs: context, device and
 * port query, PDs, MRs (plain, extended with a DMA handle, dma-buf) and
 * DMA handles, AHs, CQs and QPs with the kernel's post and poll commands
 * (nothing is mapped into userspace).
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

/*
 * CQs and QPs live in the kernel: the core's create, modify, post, poll
 * and notify commands reach rdmasim's ops, with nothing mapped.
 */
static struct ibv_cq *rsim_create_cq(struct ibv_context *ctx, int cqe,
				     struct ibv_comp_channel *channel,
				     int comp_vector)
{
	struct ib_uverbs_create_cq_resp resp = {};
	struct ibv_create_cq cmd = {};
	struct ibv_cq *cq;
	int ret;

	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_create_cq(ctx, cqe, channel, comp_vector, cq, &cmd,
				sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(cq);
		errno = ret;
		return NULL;
	}
	return cq;
}

static int rsim_destroy_cq(struct ibv_cq *cq)
{
	int ret;

	ret = ibv_cmd_destroy_cq(cq);
	if (ret)
		return ret;
	free(cq);
	return 0;
}

static int rsim_poll_cq(struct ibv_cq *cq, int ne, struct ibv_wc *wc)
{
	return ibv_cmd_poll_cq(cq, ne, wc);
}

static int rsim_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	return ibv_cmd_req_notify_cq(cq, solicited_only);
}

static struct ibv_qp *rsim_create_qp(struct ibv_pd *pd,
				     struct ibv_qp_init_attr *attr)
{
	struct ib_uverbs_create_qp_resp resp = {};
	struct ibv_create_qp cmd = {};
	struct ibv_qp *qp;
	int ret;

	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_create_qp(pd, qp, attr, &cmd, sizeof(cmd), &resp,
				sizeof(resp));
	if (ret) {
		free(qp);
		errno = ret;
		return NULL;
	}
	return qp;
}

static int rsim_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd = {};

	return ibv_cmd_query_qp(qp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

static int rsim_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			  int attr_mask)
{
	struct ibv_modify_qp cmd = {};

	return ibv_cmd_modify_qp(qp, attr, attr_mask, &cmd, sizeof(cmd));
}

static int rsim_destroy_qp(struct ibv_qp *qp)
{
	int ret;

	ret = ibv_cmd_destroy_qp(qp);
	if (ret)
		return ret;
	free(qp);
	return 0;
}

static int rsim_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
			  struct ibv_send_wr **bad_wr)
{
	return ibv_cmd_post_send(qp, wr, bad_wr);
}

static int rsim_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			  struct ibv_recv_wr **bad_wr)
{
	return ibv_cmd_post_recv(qp, wr, bad_wr);
}

static struct ibv_ah *rsim_create_ah(struct ibv_pd *pd,
				     struct ibv_ah_attr *attr)
{
	struct ib_uverbs_create_ah_resp resp = {};
	struct ibv_ah *ah;
	int ret;

	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_create_ah(pd, ah, attr, &resp, sizeof(resp));
	if (ret) {
		free(ah);
		errno = ret;
		return NULL;
	}
	return ah;
}

static int rsim_destroy_ah(struct ibv_ah *ah)
{
	int ret;

	ret = ibv_cmd_destroy_ah(ah);
	if (ret)
		return ret;
	free(ah);
	return 0;
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
	.create_ah = rsim_create_ah,
	.create_cq = rsim_create_cq,
	.create_qp = rsim_create_qp,
	.dealloc_dmah = rsim_dealloc_dmah,
	.dealloc_pd = rsim_dealloc_pd,
	.dereg_mr = rsim_dereg_mr,
	.destroy_ah = rsim_destroy_ah,
	.destroy_cq = rsim_destroy_cq,
	.destroy_qp = rsim_destroy_qp,
	.free_context = rsim_free_context,
	.modify_qp = rsim_modify_qp,
	.poll_cq = rsim_poll_cq,
	.post_recv = rsim_post_recv,
	.post_send = rsim_post_send,
	.query_device_ex = rsim_query_device_ex,
	.query_port = rsim_query_port,
	.query_qp = rsim_query_qp,
	.reg_dmabuf_mr = rsim_reg_dmabuf_mr,
	.reg_mr = rsim_reg_mr,
	.reg_mr_ex = rsim_reg_mr_ex,
	.req_notify_cq = rsim_req_notify_cq,
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
