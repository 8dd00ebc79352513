// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim_loopback: a small kernel client of the loopback data path, for
 * kernels without KUnit (a distribution's stock kernel). On load, for
 * every rdmasim device present, it connects two RC QPs on the device's
 * port and, through public verbs only:
 *
 *   registers a fast-registration MR over a destination buffer (REG_MR),
 *   RDMA WRITEs a patterned source buffer into it through the MR's rkey,
 *   RDMA READs it back into a third buffer, SENDs with immediate data,
 *   invalidates the MR (LOCAL_INV) and checks that a WRITE through the
 *   stale rkey now fails with a remote access error,
 *
 * comparing every byte moved. Each device ends in one line:
 *   "rdmasim_loopback: rdmasim0: passed: ..." or "...: FAILED at <step>".
 * Everything is released before the module's init returns.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include <rdmasim/compat.h>

#define LB_LEN		4096	/* bytes per WRITE and READ */
#define LB_SEND_LEN	64
#define LB_WAIT_US	5000000	/* the data path may defer to a worker */
#define LB_STEP_US	1000

static uint len = LB_LEN;
module_param(len, uint, 0444);
MODULE_PARM_DESC(len, "bytes per RDMA WRITE and READ, 1..4096 (default 4096)");

/* one connected pair of RC QPs and its buffers on one device */
struct lb {
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *a, *b;
	struct ib_mr *mr;
	u8 *buf[3];		/* source, destination, read-back */
	u64 dma[3];
	const char *step;	/* what failed, for the log line */
};

static int lb_connect(struct lb *lb, struct ib_qp *qp, u32 dest, u16 lid)
{
	struct ib_qp_attr qa = {
		.qp_state = IB_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IB_ACCESS_REMOTE_READ |
				   IB_ACCESS_REMOTE_WRITE,
	};
	int err;

	err = ib_modify_qp(qp, &qa, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (err)
		return err;
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IB_QPS_RTR;
	qa.ah_attr.type = RDMA_AH_ATTR_TYPE_IB;
	rdma_ah_set_port_num(&qa.ah_attr, 1);
	rdma_ah_set_dlid(&qa.ah_attr, lid);
	qa.path_mtu = IB_MTU_4096;
	qa.dest_qp_num = dest;
	qa.max_dest_rd_atomic = 1;
	qa.min_rnr_timer = 1;
	err = ib_modify_qp(qp, &qa, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (err)
		return err;
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IB_QPS_RTS;
	qa.timeout = 14;
	qa.retry_cnt = 7;
	qa.rnr_retry = 7;
	qa.max_rd_atomic = 1;
	return ib_modify_qp(qp, &qa, IB_QP_STATE | IB_QP_SQ_PSN |
			    IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
			    IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC);
}

static struct ib_qp *lb_qp(struct lb *lb)
{
	struct ib_qp_init_attr a = {
		.qp_type = IB_QPT_RC,
		.send_cq = lb->cq,
		.recv_cq = lb->cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.port_num = 1,
	};

	return ib_create_qp(lb->pd, &a);
}

/* Poll @n completions into @wc, for up to LB_WAIT_US; 0 or -ETIMEDOUT. */
static int lb_poll(struct lb *lb, struct ib_wc *wc, int n)
{
	int got = 0, us;

	for (us = 0; us < LB_WAIT_US; us += LB_STEP_US) {
		got += ib_poll_cq(lb->cq, n - got, wc + got);
		if (got == n)
			return 0;
		usleep_range(LB_STEP_US, 2 * LB_STEP_US);
	}
	return -ETIMEDOUT;
}

/* One completion, which must be @wr_id's: its status (0 is success). */
static int lb_wait(struct lb *lb, u64 wr_id)
{
	struct ib_wc wc;
	int err = lb_poll(lb, &wc, 1);

	if (err)
		return err;
	return wc.wr_id == wr_id ? wc.status : -EPROTO;
}

/* The buffers move between the CPU and the device around each step. */
static void lb_sync(struct lb *lb, bool for_cpu)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(lb->buf); i++) {
		if (for_cpu)
			ib_dma_sync_single_for_cpu(lb->ibdev, lb->dma[i], LB_LEN,
						   DMA_BIDIRECTIONAL);
		else
			ib_dma_sync_single_for_device(lb->ibdev, lb->dma[i],
						      LB_LEN, DMA_BIDIRECTIONAL);
	}
}

/* Do buffers @x and @y hold the same @n bytes? */
static bool lb_same(struct lb *lb, int x, int y, unsigned int n)
{
	bool same;

	lb_sync(lb, true);
	same = !memcmp(lb->buf[x], lb->buf[y], n);
	memset(lb->buf[2], 0, LB_LEN);	/* the next step reads into it */
	lb_sync(lb, false);
	return same;
}

static int lb_post_rdma(struct lb *lb, enum ib_wr_opcode opcode, u64 wr_id,
			int local, u32 rkey)
{
	struct ib_sge sge = {
		.addr = lb->dma[local],
		.length = len,
		.lkey = lb->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr.opcode = opcode,
		.wr.wr_id = wr_id,
		.wr.send_flags = IB_SEND_SIGNALED,
		.wr.sg_list = &sge,
		.wr.num_sge = 1,
		.remote_addr = lb->mr->iova,
		.rkey = rkey,
	};

	return ib_post_send(lb->a, &wr.wr, NULL);
}

/* Register the MR over the destination buffer (REG_MR on QP a). */
static int lb_reg(struct lb *lb)
{
	struct ib_reg_wr wr = {
		.wr.opcode = IB_WR_REG_MR,
		.wr.wr_id = 1,
		.wr.send_flags = IB_SEND_SIGNALED,
		.mr = lb->mr,
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
			  IB_ACCESS_REMOTE_WRITE,
	};
	struct scatterlist sg;
	int n;

	sg_init_table(&sg, 1);
	sg_dma_address(&sg) = lb->dma[1];
	sg_dma_len(&sg) = len;
	n = ib_map_mr_sg(lb->mr, &sg, 1, NULL, PAGE_SIZE);
	if (n != 1)
		return n < 0 ? n : -EINVAL;
	ib_update_fast_reg_key(lb->mr, ib_inc_rkey(lb->mr->rkey));
	wr.key = lb->mr->rkey;
	n = ib_post_send(lb->a, &wr.wr, NULL);
	return n ? n : lb_wait(lb, 1);
}

static int lb_send(struct lb *lb)
{
	struct ib_sge rsge = { .addr = lb->dma[2], .length = LB_SEND_LEN,
			       .lkey = lb->pd->local_dma_lkey };
	struct ib_recv_wr rwr = { .wr_id = 5, .sg_list = &rsge, .num_sge = 1 };
	struct ib_sge sge = { .addr = lb->dma[0], .length = LB_SEND_LEN,
			      .lkey = lb->pd->local_dma_lkey };
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND_WITH_IMM,
		.wr_id = 4,
		.send_flags = IB_SEND_SIGNALED,
		.sg_list = &sge,
		.num_sge = 1,
		.ex.imm_data = cpu_to_be32(0x5eed),
	};
	struct ib_wc wc[2];
	int err, i;

	err = ib_post_recv(lb->b, &rwr, NULL) ?:
	      ib_post_send(lb->a, &wr, NULL) ?:
	      lb_poll(lb, wc, 2);
	if (err)
		return err;
	/* the sender's completion and the receiver's, in either order */
	i = wc[0].wr_id == 5 ? 0 : 1;
	if (wc[i].wr_id != 5 || wc[!i].wr_id != 4)
		return -EPROTO;
	if (wc[i].status || wc[!i].status)
		return wc[i].status ?: wc[!i].status;
	if (wc[i].opcode != IB_WC_RECV || !(wc[i].wc_flags & IB_WC_WITH_IMM) ||
	    be32_to_cpu(wc[i].ex.imm_data) != 0x5eed ||
	    wc[i].byte_len != LB_SEND_LEN)
		return -EPROTO;
	return lb_same(lb, 0, 2, LB_SEND_LEN) ? 0 : -EIO;
}

static int lb_inv(struct lb *lb)
{
	struct ib_send_wr wr = {
		.opcode = IB_WR_LOCAL_INV,
		.wr_id = 6,
		.send_flags = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = lb->mr->rkey,
	};
	int err = ib_post_send(lb->a, &wr, NULL);

	return err ? err : lb_wait(lb, 6);
}

/* The steps, in order; the first failure names itself in lb->step. */
static int lb_run(struct lb *lb, u16 lid)
{
	int err;

	lb->step = "connect";
	err = lb_connect(lb, lb->a, lb->b->qp_num, lid) ?:
	      lb_connect(lb, lb->b, lb->a->qp_num, lid);
	if (err)
		return err;
	lb->step = "REG_MR";
	err = lb_reg(lb);
	if (err)
		return err;
	lb->step = "RDMA WRITE";
	err = lb_post_rdma(lb, IB_WR_RDMA_WRITE, 2, 0, lb->mr->rkey) ?:
	      lb_wait(lb, 2);
	if (err)
		return err;
	if (!lb_same(lb, 0, 1, len))
		return -EIO;
	lb->step = "RDMA READ";
	err = lb_post_rdma(lb, IB_WR_RDMA_READ, 3, 2, lb->mr->rkey) ?:
	      lb_wait(lb, 3);
	if (err)
		return err;
	if (!lb_same(lb, 1, 2, len))
		return -EIO;
	lb->step = "SEND with immediate";
	err = lb_send(lb);
	if (err)
		return err;
	lb->step = "LOCAL_INV";
	err = lb_inv(lb);
	if (err)
		return err;
	/* the last step: a remote access error moves both QPs to ERROR */
	lb->step = "WRITE through the invalidated rkey";
	err = lb_post_rdma(lb, IB_WR_RDMA_WRITE, 7, 0, lb->mr->rkey);
	if (err)
		return err;
	err = lb_wait(lb, 7);
	return err == IB_WC_REM_ACCESS_ERR ? 0 : (err ? err : -EACCES);
}

static void lb_free(struct lb *lb)
{
	unsigned int i;

	if (!IS_ERR_OR_NULL(lb->mr))
		ib_dereg_mr(lb->mr);
	if (!IS_ERR_OR_NULL(lb->b))
		ib_destroy_qp(lb->b);
	if (!IS_ERR_OR_NULL(lb->a))
		ib_destroy_qp(lb->a);
	if (!IS_ERR_OR_NULL(lb->cq))
		ib_free_cq(lb->cq);
	for (i = 0; i < ARRAY_SIZE(lb->buf); i++) {
		if (!lb->buf[i])
			continue;
		if (lb->dma[i])
			ib_dma_unmap_single(lb->ibdev, lb->dma[i], LB_LEN,
					    DMA_BIDIRECTIONAL);
		kfree(lb->buf[i]);
	}
	if (!IS_ERR_OR_NULL(lb->pd))
		ib_dealloc_pd(lb->pd);
}

/* The objects and buffers; NULL, or the step whose allocation failed. */
static const char *lb_alloc(struct lb *lb)
{
	unsigned int i, j;

	lb->pd = ib_alloc_pd(lb->ibdev, 0);
	if (IS_ERR(lb->pd))
		return "ib_alloc_pd";
	lb->cq = ib_alloc_cq(lb->ibdev, NULL, 16, 0, IB_POLL_DIRECT);
	if (IS_ERR(lb->cq))
		return "ib_alloc_cq";
	lb->a = lb_qp(lb);
	if (IS_ERR(lb->a))
		return "ib_create_qp";
	lb->b = lb_qp(lb);
	if (IS_ERR(lb->b))
		return "ib_create_qp";
	lb->mr = ib_alloc_mr(lb->pd, IB_MR_TYPE_MEM_REG, 1);
	if (IS_ERR(lb->mr))
		return "ib_alloc_mr";
	for (i = 0; i < ARRAY_SIZE(lb->buf); i++) {
		lb->buf[i] = kzalloc(LB_LEN, GFP_KERNEL);
		if (!lb->buf[i])
			return "kzalloc";
		if (i == 0)	/* the source's pattern */
			for (j = 0; j < LB_LEN; j++)
				lb->buf[0][j] = (u8)(j * 7 + 1);
		lb->dma[i] = ib_dma_map_single(lb->ibdev, lb->buf[i], LB_LEN,
					       DMA_BIDIRECTIONAL);
		if (ib_dma_mapping_error(lb->ibdev, lb->dma[i])) {
			lb->dma[i] = 0;
			return "ib_dma_map_single";
		}
	}
	return NULL;
}

static int lb_add(struct ib_device *ibdev)
{
	const char *name = dev_name(&ibdev->dev);
	struct ib_port_attr pa;
	struct lb lb = { .ibdev = ibdev };
	const char *fail;
	int err;

	if (strncmp(name, "rdmasim", 7))
		return 0;
	err = ib_query_port(ibdev, 1, &pa);
	if (err) {
		pr_info("%s: FAILED at ib_query_port: %d\n", name, err);
		return 0;
	}
	fail = lb_alloc(&lb);
	if (fail) {
		pr_info("%s: FAILED at %s\n", name, fail);
		goto out;
	}
	err = lb_run(&lb, pa.lid);
	if (err)
		pr_info("%s: FAILED at %s: %d\n", name, lb.step, err);
	else
		pr_info("%s: passed: REG_MR, RDMA WRITE %u B, RDMA READ %u B, SEND %d B with immediate, LOCAL_INV, stale rkey refused (LID 0x%x, QPs %u and %u)\n",
			name, len, len, LB_SEND_LEN, pa.lid, lb.a->qp_num,
			lb.b->qp_num);
out:
	lb_free(&lb);
	return 0;
}

static struct ib_client lb_client = {
	.name = "rdmasim_loopback",
	.add = lb_add,
};

static int __init lb_init(void)
{
	if (!len || len > LB_LEN)
		return -EINVAL;
	return ib_register_client(&lb_client);
}

static void __exit lb_exit(void)
{
	ib_unregister_client(&lb_client);
}

module_init(lb_init);
module_exit(lb_exit);

MODULE_DESCRIPTION("rdmasim loopback client: REG_MR, RDMA WRITE and READ, SEND and LOCAL_INV on every rdmasim device");
MODULE_AUTHOR("rdmasim developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(RSIM_VERSION);
