// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * rdmasim: the libibverbs provider of the rdmasim device (rdmasim<N>),
 * built out of tree against rdma-core's in-place build (its private
 * provider ABI, IBVERBS_PRIVATE_<N>). Everything goes through the generic
 * ibv_cmd_* command layer to the kernel's uverbs: context, device and
 * port query, PDs, MRs (plain, extended with a DMA handle, dma-buf) and
 * DMA handles, AHs, CQs and QPs with the kernel's post commands. CQs are
 * polled from a ring the kernel writes and the process maps, and receive
 * WRs (of QPs and SRQs) are posted into a ring the kernel reads (the
 * context asks for both: rdmasim-abi.h), without a system call but for
 * the doorbell the kernel asks for in the ring; send WRs go into a ring
 * too, with a doorbell only when the ring asks for one (the kernel is not
 * executing the queue). RSIM_NO_MAP=1 in the environment, or a kernel
 * that does not grant it, keeps the kernel's poll and post commands;
 * RSIM_RING_ALWAYS=1 rings the send doorbell after every post, as a
 * provider from before RSIM_UCTX_SQ_DB did.
 *
 * This tree's kernel driver reports RDMA_DRIVER_UNKNOWN, which libibverbs
 * never matches by driver id, so the device is matched by its name; a
 * kernel with rdmasim in it reports RDMA_DRIVER_RDMASIM. The ioctl
 * commands carry the id the kernel reports (the kernel refuses any other
 * with EINVAL), so that one provider works with either.
 */

#include <errno.h>
#include <pthread.h>
#include <sys/mman.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/cmd_ioctl.h>
#include <infiniband/driver.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdmasim/rdmasim-abi.h>

struct rsim_device {
	struct verbs_device vdev;
};

/* the device's flags for FLUSH and ATOMIC_WRITE (a kernel that has them) */
#define RSIM_DEVICE_PLACEMENT_EX (IB_UVERBS_DEVICE_FLUSH_GLOBAL |	\
				  IB_UVERBS_DEVICE_FLUSH_PERSISTENT |	\
				  IB_UVERBS_DEVICE_ATOMIC_WRITE)

struct rsim_context {
	struct verbs_context vctx;
	uint32_t map;		/* RSIM_UCTX_MAP_* the kernel granted */
	/*
	 * the device executes FLUSH and ATOMIC_WRITE (its capability flags,
	 * asked once, at the first QP that wants them): 0 unknown, 1 yes,
	 * -1 no
	 */
	int placement;
};

/* the core's commands and responses with the driver's data after them */
struct rsim_get_context {
	struct ibv_get_context ibv_cmd;
	struct rsim_alloc_ucontext_cmd drv;
};

struct rsim_get_context_resp {
	struct ib_uverbs_get_context_resp ibv_resp;
	struct rsim_alloc_ucontext_resp drv;
};

struct rsim_create_cq_resp {
	struct ib_uverbs_create_cq_resp ibv_resp;
	struct rsim_cq_ring_resp drv;
};

struct rsim_create_cq_ex_resp {
	struct ib_uverbs_ex_create_cq_resp ibv_resp;
	struct rsim_cq_ring_resp drv;
};

struct rsim_resize_cq_resp {
	struct ib_uverbs_resize_cq_resp ibv_resp;
	struct rsim_cq_ring_resp drv;
};

struct rsim_create_qp_ex_resp {
	struct ib_uverbs_ex_create_qp_resp ibv_resp;
	struct rsim_create_qp_resp drv;
};

struct rsim_create_srq_ex_resp {
	struct ib_uverbs_create_srq_resp ibv_resp;
	struct rsim_create_srq_resp drv;
};

struct rsim_modify_srq_ex {
	struct ibv_modify_srq ibv_cmd;
	struct rsim_modify_srq_cmd drv;
};

struct rsim_create_ah_ex_resp {
	struct ib_uverbs_create_ah_resp ibv_resp;
	struct rsim_create_ah_resp drv;
};

/* no padding between the core's part and the driver's */
static_assert(sizeof(struct rsim_get_context) ==
	      sizeof(struct ibv_get_context) +
	      sizeof(struct rsim_alloc_ucontext_cmd), "get_context");
static_assert(sizeof(struct rsim_create_cq_resp) ==
	      sizeof(struct ib_uverbs_create_cq_resp) +
	      sizeof(struct rsim_cq_ring_resp), "create_cq");
static_assert(sizeof(struct rsim_create_cq_ex_resp) ==
	      sizeof(struct ib_uverbs_ex_create_cq_resp) +
	      sizeof(struct rsim_cq_ring_resp), "create_cq_ex");
static_assert(sizeof(struct rsim_resize_cq_resp) ==
	      sizeof(struct ib_uverbs_resize_cq_resp) +
	      sizeof(struct rsim_cq_ring_resp), "resize_cq");
static_assert(sizeof(struct rsim_create_qp_ex_resp) ==
	      sizeof(struct ib_uverbs_ex_create_qp_resp) +
	      sizeof(struct rsim_create_qp_resp), "create_qp_ex");
static_assert(sizeof(struct rsim_create_srq_ex_resp) ==
	      sizeof(struct ib_uverbs_create_srq_resp) +
	      sizeof(struct rsim_create_srq_resp), "create_srq");
static_assert(sizeof(struct rsim_modify_srq_ex) ==
	      sizeof(struct ibv_modify_srq) +
	      sizeof(struct rsim_modify_srq_cmd), "modify_srq");
/* a ring's SGE is an ibv_sge */
static_assert(sizeof(struct rsim_usge) == sizeof(struct ibv_sge), "sge");

static struct rsim_context *to_rsim_ctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct rsim_context, vctx.context);
}

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

	/*
	 * windows are bound, and FLUSH and ATOMIC_WRITE posted, through
	 * mapped send queues only
	 */
	if (!(to_rsim_ctx(ctx)->map & RSIM_UCTX_MAP_SQ)) {
		attr->orig_attr.device_cap_flags &=
			~(IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2A |
			  IBV_DEVICE_MEM_WINDOW_TYPE_2B);
		attr->orig_attr.max_mw = 0;
		attr->device_cap_flags_ex &= ~RSIM_DEVICE_PLACEMENT_EX;
	}
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

/*
 * PDs and parent domains. A parent domain (ibv_alloc_parent_domain) is a
 * provider object only: it names its protection domain's kernel handle,
 * so that the objects created with it belong to that PD, and carries the
 * caller's allocators, which the extended send API's buffers come from
 * (rsim_qp_buf_alloc()). The protection domain cannot be freed while a
 * parent domain holds it (EBUSY). There are no thread domains, so no
 * parent domain names one; a CC (unprotected allocation) parent domain is
 * an ordinary one, the device not reporting IBV_DEVICE_CC_DMA_BOUNCE.
 */
struct rsim_pd {
	struct ibv_pd ibpd;
	struct rsim_pd *protection;	/* a parent domain's PD, or NULL */
	atomic_int users;		/* parent domains holding this PD */
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size,
		       size_t alignment, uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr,
		     uint64_t resource_type);
	void *pd_context;
};

static struct rsim_pd *to_rsim_pd(struct ibv_pd *ibpd)
{
	return container_of(ibpd, struct rsim_pd, ibpd);
}

static struct ibv_pd *rsim_alloc_pd(struct ibv_context *ctx)
{
	struct ib_uverbs_alloc_pd_resp resp = {};
	struct ibv_alloc_pd cmd = {};
	struct rsim_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_alloc_pd(ctx, &pd->ibpd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}
	return &pd->ibpd;
}

#define RSIM_PARENT_DOMAIN_MASK (IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS | \
				 IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT | \
				 IBV_PARENT_DOMAIN_INIT_ATTR_ALLOW_CC_UNPROTECTED_ALLOC)

static struct ibv_pd *
rsim_alloc_parent_domain(struct ibv_context *ctx,
			 struct ibv_parent_domain_init_attr *attr)
{
	struct rsim_pd *pd, *protection;

	if (ibv_check_alloc_parent_domain(attr))
		return NULL;
	if ((attr->comp_mask & ~RSIM_PARENT_DOMAIN_MASK) || attr->td ||
	    attr->pd->context != ctx) {
		errno = EINVAL;
		return NULL;
	}
	protection = to_rsim_pd(attr->pd);
	if (protection->protection) {	/* a parent domain of a parent */
		errno = EINVAL;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	ibv_initialize_parent_domain(&pd->ibpd, &protection->ibpd);
	pd->protection = protection;
	atomic_fetch_add(&protection->users, 1);
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		pd->alloc = attr->alloc;
		pd->free = attr->free;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		pd->pd_context = attr->pd_context;
	return &pd->ibpd;
}

static int rsim_dealloc_pd(struct ibv_pd *ibpd)
{
	struct rsim_pd *pd = to_rsim_pd(ibpd);
	int ret = EBUSY;	/* libibverbs wants a positive errno */

	if (atomic_load(&pd->users))
		return ret;
	if (pd->protection) {
		atomic_fetch_sub(&pd->protection->users, 1);
		free(pd);
		return 0;
	}
	ret = ibv_cmd_dealloc_pd(ibpd);
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

/* the kernel reregisters in place, keys kept (mr.c) */
static int rsim_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			 void *addr, size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct ibv_rereg_mr cmd;

	return ibv_cmd_rereg_mr(vmr, flags, addr, length, (uintptr_t)addr,
				access, pd, &cmd, sizeof(cmd), &resp,
				sizeof(resp));
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
 *
 * Extended CQs (ibv_create_cq_ex) poll through the same command: a batch
 * of work completions is fetched into the CQ's buffer, and the
 * start/next/end_poll iterator and its read_* accessors walk it. The
 * buffer is shared with ibv_poll_cq(), which empties it first, so that no
 * completion fetched is lost whichever interface the caller uses.
 */
#define RSIM_CQ_BATCH 16

#define RSIM_WC_FLAGS (IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |	\
		       IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |	\
		       IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |		\
		       IBV_WC_EX_WITH_DLID_PATH_BITS)

struct rsim_cq {
	struct verbs_cq vcq;
	/* protects wc, cur, n and the ring; held from start_poll to end_poll */
	pthread_spinlock_t lock;
	struct ibv_wc wc[RSIM_CQ_BATCH];
	int cur;			/* the entry being read */
	int n;				/* entries fetched */
	/* a mapped CQ: the kernel's ring (NULL: the poll command) */
	struct rsim_uring_hdr *ring;
	size_t ring_len;
	uint32_t nslots;		/* a power of two */
	/*
	 * QPs' uses of it (atomic): it cannot go while a QP that is being
	 * destroyed may still clean it (EBUSY, as the kernel's use count)
	 */
	int users;
};

static struct rsim_cq *to_rsim_cq(struct ibv_cq *ibcq)
{
	return container_of(ibcq, struct rsim_cq, vcq.cq);
}

static struct rsim_cq *ex_to_rsim_cq(struct ibv_cq_ex *ibcq)
{
	return container_of(ibcq, struct rsim_cq, vcq.cq_ex);
}

static struct rsim_ucqe *rsim_cq_slot(struct rsim_cq *cq, uint32_t i)
{
	return (struct rsim_ucqe *)((char *)cq->ring + RSIM_URING_SLOTS) +
	       (i & (cq->nslots - 1));
}

/*
 * Up to @ne completions from the mapped ring into @wc, consumed: the
 * kernel's index read with an acquire (the slots before it are written),
 * ours published with a release once they are copied out.
 */
static int rsim_cq_ring_poll(struct rsim_cq *cq, int ne, struct ibv_wc *wc)
{
	uint32_t cons = cq->ring->cons;
	uint32_t prod = __atomic_load_n(&cq->ring->prod, __ATOMIC_ACQUIRE);
	int n = 0;

	while (n < ne && cons != prod) {
		const struct rsim_ucqe *e = rsim_cq_slot(cq, cons++);
		struct ibv_wc *w = &wc[n++];

		memset(w, 0, sizeof(*w));
		w->wr_id = e->wr_id;
		w->status = e->status;
		w->opcode = e->opcode;
		w->vendor_err = e->vendor_err;
		w->byte_len = e->byte_len;
		w->imm_data = (__be32)e->ex;
		w->qp_num = e->qp_num;
		w->src_qp = e->src_qp;
		w->wc_flags = e->wc_flags;
		w->pkey_index = e->pkey_index;
		w->slid = e->slid;
		w->sl = e->sl;
		w->dlid_path_bits = e->dlid_path_bits;
	}
	/* an empty poll writes nothing: the kernel reads cons at each push */
	if (n)
		__atomic_store_n(&cq->ring->cons, cons, __ATOMIC_RELEASE);
	return n;
}

/*
 * Drop @qpn's completions from a mapped ring (the QP went back to RESET
 * or away; the kernel drops them itself from a ring it polls): the others
 * keep their order, moved towards the producer, and the consumer index
 * skips the freed slots. The kernel only writes at its index, past these.
 */
static void rsim_cq_ring_clean(struct rsim_cq *cq, uint32_t qpn)
{
	uint32_t cons, prod, i, freed = 0;

	if (!cq->ring)
		return;
	pthread_spin_lock(&cq->lock);
	cons = cq->ring->cons;
	prod = __atomic_load_n(&cq->ring->prod, __ATOMIC_ACQUIRE);
	/* indices the process itself wrote over: nothing to keep */
	if (prod - cons > cq->nslots)
		cons = prod - cq->nslots;
	for (i = prod; i != cons; i--) {
		struct rsim_ucqe *e = rsim_cq_slot(cq, i - 1);

		if (e->qp_num == qpn)
			freed++;
		else if (freed)
			*rsim_cq_slot(cq, i - 1 + freed) = *e;
	}
	__atomic_store_n(&cq->ring->cons, cons + freed, __ATOMIC_RELEASE);
	/* and from the batch already taken out of the ring */
	for (i = freed = cq->cur; i < (uint32_t)cq->n; i++)
		if (cq->wc[i].qp_num != qpn)
			cq->wc[freed++] = cq->wc[i];
	cq->n = freed;
	pthread_spin_unlock(&cq->lock);
}

/* the entry at cur, fetching a batch if none is left: 0 or ENOENT/errno */
static int rsim_cq_fill(struct rsim_cq *cq)
{
	int n;

	if (cq->cur < cq->n)
		return 0;
	n = cq->ring ? rsim_cq_ring_poll(cq, RSIM_CQ_BATCH, cq->wc) :
		       ibv_cmd_poll_cq(&cq->vcq.cq, RSIM_CQ_BATCH, cq->wc);
	cq->cur = 0;
	cq->n = n > 0 ? n : 0;
	if (n < 0)	/* -1, errno set */
		return errno ?: EIO;
	return n ? 0 : ENOENT;
}

static void rsim_cq_current(struct rsim_cq *cq)
{
	cq->vcq.cq_ex.status = cq->wc[cq->cur].status;
	cq->vcq.cq_ex.wr_id = cq->wc[cq->cur].wr_id;
}

static int rsim_start_poll(struct ibv_cq_ex *ibcq, struct ibv_poll_cq_attr *attr)
{
	struct rsim_cq *cq = ex_to_rsim_cq(ibcq);
	int ret = EINVAL;	/* positive, as libibverbs wants */

	if (attr->comp_mask)
		return ret;
	pthread_spin_lock(&cq->lock);
	ret = rsim_cq_fill(cq);
	if (ret) {
		pthread_spin_unlock(&cq->lock);
		return ret;
	}
	rsim_cq_current(cq);
	return 0;
}

static int rsim_next_poll(struct ibv_cq_ex *ibcq)
{
	struct rsim_cq *cq = ex_to_rsim_cq(ibcq);
	int ret;

	cq->cur++;
	ret = rsim_cq_fill(cq);
	if (ret)
		return ret;
	rsim_cq_current(cq);
	return 0;
}

static void rsim_end_poll(struct ibv_cq_ex *ibcq)
{
	struct rsim_cq *cq = ex_to_rsim_cq(ibcq);

	/* the entry last read is consumed, unless next_poll found none */
	if (cq->cur < cq->n)
		cq->cur++;
	pthread_spin_unlock(&cq->lock);
}

static struct ibv_wc *rsim_cq_wc(struct ibv_cq_ex *ibcq)
{
	struct rsim_cq *cq = ex_to_rsim_cq(ibcq);

	return &cq->wc[cq->cur];
}

static enum ibv_wc_opcode rsim_read_opcode(struct ibv_cq_ex *ibcq)
{
	return rsim_cq_wc(ibcq)->opcode;
}

static uint32_t rsim_read_vendor_err(struct ibv_cq_ex *ibcq)
{
	return rsim_cq_wc(ibcq)->vendor_err;
}

static uint32_t rsim_read_byte_len(struct ibv_cq_ex *ibcq)
{
	return rsim_cq_wc(ibcq)->byte_len;
}

static __be32 rsim_read_imm_data(struct ibv_cq_ex *ibcq)
{
	return rsim_cq_wc(ibcq)->imm_data;
}

static uint32_t rsim_read_qp_num(struct ibv_cq_ex *ibcq)
{
	return rsim_cq_wc(ibcq)->qp_num;
}

static uint32_t rsim_read_src_qp(struct ibv_cq_ex *ibcq)
{
	return rsim_cq_wc(ibcq)->src_qp;
}

static unsigned int rsim_read_wc_flags(struct ibv_cq_ex *ibcq)
{
	return rsim_cq_wc(ibcq)->wc_flags;
}

static uint32_t rsim_read_slid(struct ibv_cq_ex *ibcq)
{
	return rsim_cq_wc(ibcq)->slid;
}

static uint8_t rsim_read_sl(struct ibv_cq_ex *ibcq)
{
	return rsim_cq_wc(ibcq)->sl;
}

static uint8_t rsim_read_dlid_path_bits(struct ibv_cq_ex *ibcq)
{
	return rsim_cq_wc(ibcq)->dlid_path_bits;
}

static void rsim_cq_set_ex_ops(struct rsim_cq *cq, uint64_t wc_flags)
{
	struct ibv_cq_ex *ex = &cq->vcq.cq_ex;

	ex->start_poll = rsim_start_poll;
	ex->next_poll = rsim_next_poll;
	ex->end_poll = rsim_end_poll;
	ex->read_opcode = rsim_read_opcode;
	ex->read_vendor_err = rsim_read_vendor_err;
	ex->read_wc_flags = rsim_read_wc_flags;
	if (wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		ex->read_byte_len = rsim_read_byte_len;
	if (wc_flags & IBV_WC_EX_WITH_IMM)
		ex->read_imm_data = rsim_read_imm_data;
	if (wc_flags & IBV_WC_EX_WITH_QP_NUM)
		ex->read_qp_num = rsim_read_qp_num;
	if (wc_flags & IBV_WC_EX_WITH_SRC_QP)
		ex->read_src_qp = rsim_read_src_qp;
	if (wc_flags & IBV_WC_EX_WITH_SLID)
		ex->read_slid = rsim_read_slid;
	if (wc_flags & IBV_WC_EX_WITH_SL)
		ex->read_sl = rsim_read_sl;
	if (wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		ex->read_dlid_path_bits = rsim_read_dlid_path_bits;
}

static struct rsim_cq *rsim_cq_alloc(void)
{
	struct rsim_cq *cq = calloc(1, sizeof(*cq));

	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	return cq;
}

static void rsim_cq_free(struct rsim_cq *cq)
{
	if (cq->ring)
		munmap(cq->ring, cq->ring_len);
	pthread_spin_destroy(&cq->lock);
	free(cq);
}

/* map the ring the kernel made (its response); 0 or -1 with errno set */
static int rsim_cq_map(struct rsim_cq *cq, struct ibv_context *ctx,
		       const struct rsim_cq_ring_resp *r)
{
	void *p;

	if (!r->nslots || (r->nslots & (r->nslots - 1)) ||
	    r->mmap_len < RSIM_URING_SLOTS +
			  (size_t)r->nslots * sizeof(struct rsim_ucqe)) {
		errno = EPROTO;
		return -1;
	}
	p = mmap(NULL, r->mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 ctx->cmd_fd, r->mmap_offset);
	if (p == MAP_FAILED)
		return -1;
	cq->ring = p;
	cq->ring_len = r->mmap_len;
	cq->nslots = r->nslots;
	return 0;
}

/*
 * A CQ the kernel made: its ring mapped if the context has mapped CQs.
 * False if that failed: the CQ destroyed and freed, errno set.
 */
static bool rsim_cq_created(struct rsim_cq *cq, struct ibv_context *ctx,
			    const struct rsim_cq_ring_resp *r)
{
	int err;

	if (!(to_rsim_ctx(ctx)->map & RSIM_UCTX_MAP_CQ) ||
	    !rsim_cq_map(cq, ctx, r))
		return true;
	err = errno;
	ibv_cmd_destroy_cq(&cq->vcq.cq);
	rsim_cq_free(cq);
	errno = err;
	return false;
}

static struct ibv_cq *rsim_create_cq(struct ibv_context *ctx, int cqe,
				     struct ibv_comp_channel *channel,
				     int comp_vector)
{
	struct rsim_create_cq_resp resp = {};
	struct ibv_create_cq cmd = {};
	struct rsim_cq *cq;
	int ret;

	cq = rsim_cq_alloc();
	if (!cq)
		return NULL;
	ret = ibv_cmd_create_cq(ctx, cqe, channel, comp_vector, &cq->vcq.cq,
				&cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp));
	if (ret) {
		rsim_cq_free(cq);
		errno = ret;
		return NULL;
	}
	if (!rsim_cq_created(cq, ctx, &resp.drv))
		return NULL;
	return &cq->vcq.cq;
}

/* no completion timestamps, VLANs, flow tags or tag matching */
static struct ibv_cq_ex *rsim_create_cq_ex(struct ibv_context *ctx,
					   struct ibv_cq_init_attr_ex *attr)
{
	struct rsim_create_cq_ex_resp resp = {};
	struct ibv_create_cq_ex cmd = {};
	struct rsim_cq *cq;
	int ret;

	if (attr->wc_flags & ~RSIM_WC_FLAGS) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* a CQ's PD can only be a parent domain, as mlx5 has it */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	    (!attr->parent_domain ||
	     !to_rsim_pd(attr->parent_domain)->protection)) {
		errno = EINVAL;
		return NULL;
	}
	cq = rsim_cq_alloc();
	if (!cq)
		return NULL;
	ret = ibv_cmd_create_cq_ex(ctx, attr, NULL, &cq->vcq, &cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp), 0);
	if (ret) {
		rsim_cq_free(cq);
		errno = ret;
		return NULL;
	}
	if (!rsim_cq_created(cq, ctx, &resp.drv))
		return NULL;
	rsim_cq_set_ex_ops(cq, attr->wc_flags);
	return &cq->vcq.cq_ex;
}

static int rsim_destroy_cq(struct ibv_cq *ibcq)
{
	int ret;

	/* in use by a QP of ours: the kernel's answer, without asking it */
	ret = __atomic_load_n(&to_rsim_cq(ibcq)->users, __ATOMIC_ACQUIRE) ?
	      EBUSY : ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;
	rsim_cq_free(to_rsim_cq(ibcq));
	return 0;
}

/*
 * A new ring in the kernel, the completions not yet polled kept there; a
 * mapped CQ's new ring mapped in place of the old one, under the CQ's
 * lock (no poll in between)
 */
static int rsim_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct rsim_cq *cq = to_rsim_cq(ibcq);
	struct rsim_resize_cq_resp resp = {};
	struct ibv_resize_cq cmd = {};
	struct rsim_uring_hdr *old = cq->ring;
	size_t old_len = cq->ring_len;
	int ret;

	pthread_spin_lock(&cq->lock);
	ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (!ret && old) {
		ret = rsim_cq_map(cq, ibcq->context, &resp.drv) ? errno : 0;
		if (!ret)
			munmap(old, old_len);
	}
	pthread_spin_unlock(&cq->lock);
	return ret;
}

/* what start_poll fetched and nobody read first, then the kernel's */
static int rsim_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
{
	struct rsim_cq *cq = to_rsim_cq(ibcq);
	int got = 0, n;

	pthread_spin_lock(&cq->lock);
	while (got < ne && cq->cur < cq->n)
		wc[got++] = cq->wc[cq->cur++];
	if (got < ne) {
		n = cq->ring ? rsim_cq_ring_poll(cq, ne - got, wc + got) :
			       ibv_cmd_poll_cq(ibcq, ne - got, wc + got);
		if (n < 0 && !got)
			got = n;
		else if (n > 0)
			got += n;
	}
	pthread_spin_unlock(&cq->lock);
	return got;
}

static int rsim_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	return ibv_cmd_req_notify_cq(cq, solicited_only);
}

/*
 * QPs. The extended send API (ibv_qp_ex: wr_start, wr_send, wr_set_sge,
 * ..., wr_complete) builds a list of ordinary send WRs in the QP's own
 * array, posted with one post_send command at wr_complete; an error met
 * while building (too many WRs or SGEs, inline data too long) is kept and
 * returned there, and nothing of the list is posted.
 */
#define RSIM_RC_SEND_OPS (IBV_QP_EX_WITH_RDMA_WRITE |			\
			  IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |		\
			  IBV_QP_EX_WITH_SEND |				\
			  IBV_QP_EX_WITH_SEND_WITH_IMM |		\
			  IBV_QP_EX_WITH_RDMA_READ |			\
			  IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |		\
			  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |		\
			  IBV_QP_EX_WITH_SEND_WITH_INV)
#define RSIM_UC_SEND_OPS (IBV_QP_EX_WITH_RDMA_WRITE |			\
			  IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |		\
			  IBV_QP_EX_WITH_SEND |				\
			  IBV_QP_EX_WITH_SEND_WITH_IMM)
#define RSIM_UD_SEND_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)
/* memory windows: only through a mapped send queue (RC and UC) */
#define RSIM_MW_SEND_OPS (IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV)
/*
 * FLUSH and ATOMIC_WRITE (IBA annex A19): RC, through a mapped send queue
 * only, where the kernel has them (RSIM_DEVICE_PLACEMENT_EX)
 */
#define RSIM_PLACEMENT_SEND_OPS (IBV_QP_EX_WITH_FLUSH |			\
				 IBV_QP_EX_WITH_ATOMIC_WRITE)

/* create_flags go to the kernel, which accepts none */
#define RSIM_QP_COMP_MASK (IBV_QP_INIT_ATTR_PD |			\
			   IBV_QP_INIT_ATTR_XRCD |			\
			   IBV_QP_INIT_ATTR_CREATE_FLAGS |		\
			   IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
/* an XRC SEND QP: RC's operations, each WR naming an XRC SRQ */
#define RSIM_XRC_SEND_OPS (RSIM_RC_SEND_OPS & ~IBV_QP_EX_WITH_SEND_WITH_INV)

/*
 * A mapped receive queue (a QP's or an SRQ's): the provider writes each
 * WR into the slot at its producer index and publishes the index; the
 * kernel copies the slot when a message takes it and mirrors its own
 * consumer index in cons. A post rings the doorbell (the post command
 * with no WR) only when the kernel asked for it in flags.
 */
struct rsim_urq {
	pthread_spinlock_t lock;	/* serializes posters: protects prod */
	struct rsim_uring_hdr *ring;	/* NULL: the post command */
	size_t len;
	uint32_t nslots;		/* a power of two */
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t stride;
	uint32_t prod;
	bool reset;			/* posting is EINVAL (the QP in RESET) */
};

/*
 * Map a work queue's ring the kernel made (its response; slots of at
 * least @slot bytes): the ring, NULL if the response has none, or
 * MAP_FAILED with errno set
 */
static void *rsim_uwq_mmap(struct ibv_context *ctx,
			   const struct rsim_uwq_resp *r, size_t slot)
{
	if (!r->mmap_len)
		return NULL;
	if (!r->nslots || (r->nslots & (r->nslots - 1)) ||
	    r->max_wr > r->nslots || !r->max_wr || r->stride < slot ||
	    r->mmap_len < RSIM_URING_SLOTS + (size_t)r->nslots * r->stride) {
		errno = EPROTO;
		return MAP_FAILED;
	}
	return mmap(NULL, r->mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		    ctx->cmd_fd, r->mmap_offset);
}

/* map the ring the kernel made (its response); 0 or -1 with errno set */
static int rsim_urq_map(struct rsim_urq *rq, struct ibv_context *ctx,
			const struct rsim_uwq_resp *r)
{
	void *p = rsim_uwq_mmap(ctx, r, sizeof(struct rsim_urwqe));

	if (p == MAP_FAILED)
		return -1;
	if (!p)
		return 0;
	rq->ring = p;
	rq->len = r->mmap_len;
	rq->nslots = r->nslots;
	rq->max_wr = r->max_wr;
	rq->stride = r->stride;
	rq->max_sge = (r->stride - sizeof(struct rsim_urwqe)) /
		      sizeof(struct rsim_usge);
	return 0;
}

static void rsim_urq_unmap(struct rsim_urq *rq)
{
	if (rq->ring)
		munmap(rq->ring, rq->len);
	rq->ring = NULL;
}

/*
 * Post into the ring: each WR checked as the kernel's post command checks
 * it (SGEs, room), the ones before a refused one posted. Returns 0 or an
 * errno, *@bad_wr the refused WR; *@db whether the kernel asked for a
 * doorbell.
 */
static int rsim_urq_post(struct rsim_urq *rq, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr, bool *db)
{
	struct rsim_urwqe *slot;
	uint32_t prod, cons;
	int ret = 0;

	pthread_spin_lock(&rq->lock);
	prod = rq->prod;
	for (; wr; wr = wr->next) {
		if (rq->reset) {
			ret = EINVAL;
			break;
		}
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > rq->max_sge) {
			ret = EINVAL;
			break;
		}
		cons = __atomic_load_n(&rq->ring->cons, __ATOMIC_ACQUIRE);
		if (prod - cons >= rq->max_wr) {
			ret = ENOMEM;
			break;
		}
		slot = (struct rsim_urwqe *)((char *)rq->ring +
					     RSIM_URING_SLOTS +
					     (size_t)(prod & (rq->nslots - 1)) *
					     rq->stride);
		slot->wr_id = wr->wr_id;
		slot->num_sge = wr->num_sge;
		slot->reserved = 0;
		memcpy(slot->sge, wr->sg_list,
		       wr->num_sge * sizeof(struct rsim_usge));
		prod++;
	}
	*db = false;
	if (prod != rq->prod) {
		__atomic_store_n(&rq->ring->prod, prod, __ATOMIC_RELEASE);
		rq->prod = prod;
		/* the index before the flag: pairs with the kernel's take */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		*db = __atomic_load_n(&rq->ring->flags, __ATOMIC_RELAXED) &
		      RSIM_URING_F_DOORBELL;
	}
	pthread_spin_unlock(&rq->lock);
	if (ret)
		*bad_wr = wr;
	return ret;
}

static void rsim_urq_set_reset(struct rsim_urq *rq, bool reset)
{
	pthread_spin_lock(&rq->lock);
	rq->reset = reset;
	pthread_spin_unlock(&rq->lock);
}

/*
 * A mapped send queue: the provider writes each WR into the slot of its
 * producer index (slot i is WR i of the queue), publishes the index and
 * rings the doorbell (the post_send command with no WR) if the ring asks
 * for one (RSIM_URING_F_DOORBELL: the kernel is not executing the queue;
 * while it is, it takes what is published before it stops), or after
 * every post if the kernel did not grant RSIM_UCTX_SQ_DB. The kernel
 * copies the new slots and mirrors the WRs it completed in cons, which
 * frees their slots.
 */
struct rsim_usq {
	pthread_spinlock_t lock;	/* serializes posters: protects prod */
	struct rsim_uring_hdr *ring;	/* NULL: the post command */
	size_t len;
	uint32_t nslots;		/* a power of two */
	uint32_t max_wr;
	uint32_t stride;
	uint32_t prod;
	bool ready;			/* RTS or later: posting is allowed */
	bool db_flag;			/* ring only when the ring asks */
};

/* an AH: its number in a send ring (0 without mapped send queues) */
struct rsim_ah {
	struct ibv_ah ibah;
	uint32_t num;
};

static void rsim_usq_set_ready(struct rsim_usq *sq, bool ready)
{
	pthread_spin_lock(&sq->lock);
	sq->ready = ready;
	pthread_spin_unlock(&sq->lock);
}

static int rsim_usq_map(struct rsim_usq *sq, struct ibv_context *ctx,
			const struct rsim_uwq_resp *r)
{
	void *p = rsim_uwq_mmap(ctx, r, sizeof(struct rsim_uswqe));

	if (p == MAP_FAILED)
		return -1;
	if (!p)
		return 0;
	sq->ring = p;
	sq->db_flag = to_rsim_ctx(ctx)->map & RSIM_UCTX_SQ_DB;
	sq->len = r->mmap_len;
	sq->nslots = r->nslots;
	sq->max_wr = r->max_wr;
	sq->stride = r->stride;
	return 0;
}

/*
 * The allocators' resource type for a QP's buffers: the driver id (0,
 * RDMA_DRIVER_UNKNOWN) in the upper half, as mlx5dv's types have theirs
 */
#define RSIM_RES_TYPE_QP 1
#define RSIM_BUF_ALIGN 64

/*
 * a FLUSH's or an ATOMIC_WRITE's operands, which struct ibv_send_wr has
 * no room for: beside their WR in the extended send API's list
 */
struct rsim_place {
	uint64_t remote_addr;
	uint64_t length;
	uint64_t value;
	uint32_t rkey;
	uint8_t type;
	uint8_t level;
};

struct rsim_qp {
	struct verbs_qp vqp;
	struct rsim_pd *pd;		/* its PD or parent domain */
	/* the extended send API's list, between wr_start and wr_complete */
	struct ibv_send_wr *wrs;	/* max_wr WRs */
	struct rsim_place *place;	/* FLUSH's, ATOMIC_WRITE's: per WR */
	struct ibv_sge *sges;		/* max_sge per WR */
	uint8_t *inl;			/* max_inline bytes per WR */
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t max_inline;
	uint32_t nwr;
	int err;
	struct rsim_urq rq;		/* its receive queue, if mapped */
	struct rsim_usq sq;		/* its send queue, if mapped */
};

/* the extended send API posts its list as ibv_post_send() does */
static int rsim_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			  struct ibv_send_wr **bad_wr);

static struct rsim_qp *ex_to_rsim_qp(struct ibv_qp_ex *ibqp)
{
	return container_of(ibqp, struct rsim_qp, vqp.qp_ex);
}

/* the WR being built, or NULL once the list is in error */
static struct ibv_send_wr *rsim_wr_cur(struct rsim_qp *qp)
{
	return qp->err || !qp->nwr ? NULL : &qp->wrs[qp->nwr - 1];
}

static struct ibv_send_wr *rsim_wr_new(struct ibv_qp_ex *ibqp,
				       enum ibv_wr_opcode opcode)
{
	struct rsim_qp *qp = ex_to_rsim_qp(ibqp);
	struct ibv_send_wr *wr;

	if (qp->err)
		return NULL;
	if (qp->nwr == qp->max_wr) {
		qp->err = ENOMEM;
		return NULL;
	}
	wr = &qp->wrs[qp->nwr];
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = ibqp->wr_id;
	wr->send_flags = ibqp->wr_flags;
	wr->opcode = opcode;
	wr->sg_list = &qp->sges[(size_t)qp->nwr * qp->max_sge];
	if (qp->nwr)
		qp->wrs[qp->nwr - 1].next = wr;
	qp->nwr++;
	return wr;
}

static void rsim_wr_send(struct ibv_qp_ex *ibqp)
{
	rsim_wr_new(ibqp, IBV_WR_SEND);
}

static void rsim_wr_send_imm(struct ibv_qp_ex *ibqp, __be32 imm_data)
{
	struct ibv_send_wr *wr = rsim_wr_new(ibqp, IBV_WR_SEND_WITH_IMM);

	if (wr)
		wr->imm_data = imm_data;
}

static void rsim_wr_send_inv(struct ibv_qp_ex *ibqp, uint32_t rkey)
{
	struct ibv_send_wr *wr = rsim_wr_new(ibqp, IBV_WR_SEND_WITH_INV);

	if (wr)
		wr->invalidate_rkey = rkey;
}

static void rsim_wr_local_inv(struct ibv_qp_ex *ibqp, uint32_t rkey)
{
	struct ibv_send_wr *wr = rsim_wr_new(ibqp, IBV_WR_LOCAL_INV);

	if (wr)
		wr->invalidate_rkey = rkey;
}

static void rsim_wr_bind_mw(struct ibv_qp_ex *ibqp, struct ibv_mw *mw,
			    uint32_t rkey, const struct ibv_mw_bind_info *info)
{
	struct ibv_send_wr *wr = rsim_wr_new(ibqp, IBV_WR_BIND_MW);

	if (!wr)
		return;
	wr->bind_mw.mw = mw;
	wr->bind_mw.rkey = rkey;
	wr->bind_mw.bind_info = *info;
}

static void rsim_wr_rdma(struct ibv_qp_ex *ibqp, enum ibv_wr_opcode opcode,
			 uint32_t rkey, uint64_t remote_addr, __be32 imm)
{
	struct ibv_send_wr *wr = rsim_wr_new(ibqp, opcode);

	if (!wr)
		return;
	wr->wr.rdma.rkey = rkey;
	wr->wr.rdma.remote_addr = remote_addr;
	wr->imm_data = imm;
}

static void rsim_wr_rdma_write(struct ibv_qp_ex *ibqp, uint32_t rkey,
			       uint64_t remote_addr)
{
	rsim_wr_rdma(ibqp, IBV_WR_RDMA_WRITE, rkey, remote_addr, 0);
}

static void rsim_wr_rdma_write_imm(struct ibv_qp_ex *ibqp, uint32_t rkey,
				   uint64_t remote_addr, __be32 imm_data)
{
	rsim_wr_rdma(ibqp, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr,
		     imm_data);
}

static void rsim_wr_rdma_read(struct ibv_qp_ex *ibqp, uint32_t rkey,
			      uint64_t remote_addr)
{
	rsim_wr_rdma(ibqp, IBV_WR_RDMA_READ, rkey, remote_addr, 0);
}

static void rsim_wr_atomic(struct ibv_qp_ex *ibqp, enum ibv_wr_opcode opcode,
			   uint32_t rkey, uint64_t remote_addr,
			   uint64_t compare_add, uint64_t swap)
{
	struct ibv_send_wr *wr = rsim_wr_new(ibqp, opcode);

	if (!wr)
		return;
	wr->wr.atomic.rkey = rkey;
	wr->wr.atomic.remote_addr = remote_addr;
	wr->wr.atomic.compare_add = compare_add;
	wr->wr.atomic.swap = swap;
}

static void rsim_wr_atomic_cmp_swp(struct ibv_qp_ex *ibqp, uint32_t rkey,
				   uint64_t remote_addr, uint64_t compare,
				   uint64_t swap)
{
	rsim_wr_atomic(ibqp, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr,
		       compare, swap);
}

static void rsim_wr_atomic_fetch_add(struct ibv_qp_ex *ibqp, uint32_t rkey,
				     uint64_t remote_addr, uint64_t add)
{
	rsim_wr_atomic(ibqp, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, remote_addr,
		       add, 0);
}

static struct rsim_place *rsim_wr_place(struct ibv_qp_ex *ibqp,
					enum ibv_wr_opcode opcode)
{
	struct rsim_qp *qp = ex_to_rsim_qp(ibqp);
	struct ibv_send_wr *wr = rsim_wr_new(ibqp, opcode);
	struct rsim_place *pl;

	if (!wr)
		return NULL;
	pl = &qp->place[qp->nwr - 1];
	memset(pl, 0, sizeof(*pl));
	return pl;
}

static void rsim_wr_flush(struct ibv_qp_ex *ibqp, uint32_t rkey,
			  uint64_t remote_addr, size_t len, uint8_t type,
			  uint8_t level)
{
	struct rsim_place *pl = rsim_wr_place(ibqp, IBV_WR_FLUSH);

	if (!pl)
		return;
	pl->rkey = rkey;
	pl->remote_addr = remote_addr;
	pl->length = len;
	pl->type = type;
	pl->level = level;
}

static void rsim_wr_atomic_write(struct ibv_qp_ex *ibqp, uint32_t rkey,
				 uint64_t remote_addr, const void *atomic_wr)
{
	struct rsim_place *pl = rsim_wr_place(ibqp, IBV_WR_ATOMIC_WRITE);

	if (!pl)
		return;
	pl->rkey = rkey;
	pl->remote_addr = remote_addr;
	memcpy(&pl->value, atomic_wr, sizeof(pl->value));
}

static void rsim_wr_set_xrc_srqn(struct ibv_qp_ex *ibqp, uint32_t srqn)
{
	struct ibv_send_wr *wr = rsim_wr_cur(ex_to_rsim_qp(ibqp));

	if (wr)
		wr->qp_type.xrc.remote_srqn = srqn;
}

static void rsim_wr_set_ud_addr(struct ibv_qp_ex *ibqp, struct ibv_ah *ah,
				uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct ibv_send_wr *wr = rsim_wr_cur(ex_to_rsim_qp(ibqp));

	if (!wr)
		return;
	wr->wr.ud.ah = ah;
	wr->wr.ud.remote_qpn = remote_qpn;
	wr->wr.ud.remote_qkey = remote_qkey;
}

static void rsim_wr_set_sge_list(struct ibv_qp_ex *ibqp, size_t num_sge,
				 const struct ibv_sge *sg_list)
{
	struct rsim_qp *qp = ex_to_rsim_qp(ibqp);
	struct ibv_send_wr *wr = rsim_wr_cur(qp);

	if (!wr)
		return;
	if (num_sge > qp->max_sge) {
		qp->err = EINVAL;
		return;
	}
	memcpy(wr->sg_list, sg_list, num_sge * sizeof(*sg_list));
	wr->num_sge = num_sge;
}

static void rsim_wr_set_sge(struct ibv_qp_ex *ibqp, uint32_t lkey,
			    uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	rsim_wr_set_sge_list(ibqp, 1, &sge);
}

/*
 * Inline data is copied now into the QP's buffer, as the verb promises
 * (the caller may reuse its buffers at once); the kernel copies it again
 * from there at post time.
 */
static void rsim_wr_set_inline_data_list(struct ibv_qp_ex *ibqp,
					 size_t num_buf,
					 const struct ibv_data_buf *buf_list)
{
	struct rsim_qp *qp = ex_to_rsim_qp(ibqp);
	struct ibv_send_wr *wr = rsim_wr_cur(qp);
	uint8_t *p;
	size_t len = 0, i;

	if (!wr)
		return;
	for (i = 0; i < num_buf; i++)
		len += buf_list[i].length;
	if (len > qp->max_inline || !qp->max_sge) {
		qp->err = EINVAL;
		return;
	}
	p = qp->inl + (size_t)(qp->nwr - 1) * qp->max_inline;
	wr->sg_list[0].addr = (uintptr_t)p;
	wr->sg_list[0].length = len;
	wr->sg_list[0].lkey = 0;
	wr->num_sge = 1;
	wr->send_flags |= IBV_SEND_INLINE;
	for (i = 0; i < num_buf; i++) {
		memcpy(p, buf_list[i].addr, buf_list[i].length);
		p += buf_list[i].length;
	}
}

static void rsim_wr_set_inline_data(struct ibv_qp_ex *ibqp, void *addr,
				    size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	rsim_wr_set_inline_data_list(ibqp, 1, &buf);
}

static void rsim_wr_start(struct ibv_qp_ex *ibqp)
{
	struct rsim_qp *qp = ex_to_rsim_qp(ibqp);

	qp->nwr = 0;
	qp->err = 0;
}

static int rsim_wr_complete(struct ibv_qp_ex *ibqp)
{
	struct rsim_qp *qp = ex_to_rsim_qp(ibqp);
	struct ibv_send_wr *bad;
	int ret = qp->err;

	if (!ret && qp->nwr)
		ret = rsim_post_send(&qp->vqp.qp, qp->wrs, &bad);
	qp->nwr = 0;
	qp->err = 0;
	return ret;
}

static void rsim_wr_abort(struct ibv_qp_ex *ibqp)
{
	rsim_wr_start(ibqp);
}

static void rsim_qp_set_send_ops(struct rsim_qp *qp, uint64_t ops)
{
	struct ibv_qp_ex *ex = &qp->vqp.qp_ex;

	if (ops & IBV_QP_EX_WITH_RDMA_WRITE)
		ex->wr_rdma_write = rsim_wr_rdma_write;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		ex->wr_rdma_write_imm = rsim_wr_rdma_write_imm;
	if (ops & IBV_QP_EX_WITH_SEND)
		ex->wr_send = rsim_wr_send;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_IMM)
		ex->wr_send_imm = rsim_wr_send_imm;
	if (ops & IBV_QP_EX_WITH_RDMA_READ)
		ex->wr_rdma_read = rsim_wr_rdma_read;
	if (ops & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP)
		ex->wr_atomic_cmp_swp = rsim_wr_atomic_cmp_swp;
	if (ops & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
		ex->wr_atomic_fetch_add = rsim_wr_atomic_fetch_add;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_INV)
		ex->wr_send_inv = rsim_wr_send_inv;
	if (ops & IBV_QP_EX_WITH_BIND_MW)
		ex->wr_bind_mw = rsim_wr_bind_mw;
	if (ops & IBV_QP_EX_WITH_LOCAL_INV)
		ex->wr_local_inv = rsim_wr_local_inv;
	if (ops & IBV_QP_EX_WITH_FLUSH)
		ex->wr_flush = rsim_wr_flush;
	if (ops & IBV_QP_EX_WITH_ATOMIC_WRITE)
		ex->wr_atomic_write = rsim_wr_atomic_write;
	ex->wr_set_ud_addr = rsim_wr_set_ud_addr;
	ex->wr_set_xrc_srqn = rsim_wr_set_xrc_srqn;
	ex->wr_set_inline_data = rsim_wr_set_inline_data;
	ex->wr_set_inline_data_list = rsim_wr_set_inline_data_list;
	ex->wr_set_sge = rsim_wr_set_sge;
	ex->wr_set_sge_list = rsim_wr_set_sge_list;
	ex->wr_start = rsim_wr_start;
	ex->wr_complete = rsim_wr_complete;
	ex->wr_abort = rsim_wr_abort;
}

/*
 * the send operations a QP type may ask for, or 0 for an unknown type;
 * @mw: the context maps send queues, which carry binds
 */
static uint64_t rsim_send_ops(enum ibv_qp_type type, bool mw)
{
	switch (type) {
	case IBV_QPT_RC:
		return RSIM_RC_SEND_OPS | (mw ? RSIM_MW_SEND_OPS : 0);
	case IBV_QPT_UC:
		return RSIM_UC_SEND_OPS | (mw ? RSIM_MW_SEND_OPS : 0);
	case IBV_QPT_UD:
		return RSIM_UD_SEND_OPS;
	case IBV_QPT_XRC_SEND:
		return RSIM_XRC_SEND_OPS;
	default:
		return 0;
	}
}

/* the device executes FLUSH and ATOMIC_WRITE: asked once per context */
static bool rsim_ctx_placement(struct rsim_context *ctx)
{
	int p = __atomic_load_n(&ctx->placement, __ATOMIC_RELAXED);
	struct ibv_device_attr_ex attr = {};

	if (!p) {
		p = !ibv_query_device_ex(&ctx->vctx.context, NULL, &attr) &&
		    (attr.device_cap_flags_ex & RSIM_DEVICE_PLACEMENT_EX) ==
		    RSIM_DEVICE_PLACEMENT_EX ? 1 : -1;
		__atomic_store_n(&ctx->placement, p, __ATOMIC_RELAXED);
	}
	return p > 0;
}

/*
 * the send operations a QP of @attr's type may ask for, FLUSH and
 * ATOMIC_WRITE only if it asks and the device has them
 */
static uint64_t rsim_qp_send_ops(struct rsim_context *ctx,
				 const struct ibv_qp_init_attr_ex *attr)
{
	uint64_t ops = rsim_send_ops(attr->qp_type,
				     ctx->map & RSIM_UCTX_MAP_SQ);

	if (attr->qp_type == IBV_QPT_RC && (ctx->map & RSIM_UCTX_MAP_SQ) &&
	    (attr->send_ops_flags & RSIM_PLACEMENT_SEND_OPS) &&
	    rsim_ctx_placement(ctx))
		ops |= RSIM_PLACEMENT_SEND_OPS;
	return ops;
}

/*
 * A QP buffer: from the parent domain's allocator if the QP was created
 * with one that has allocators (unless it answers
 * IBV_ALLOCATOR_USE_DEFAULT), else from the heap; zeroed either way.
 */
static void *rsim_qp_buf_alloc(struct rsim_qp *qp, size_t size)
{
	struct rsim_pd *pd = qp->pd;
	void *p;

	if (pd && pd->alloc) {
		p = pd->alloc(&pd->ibpd, pd->pd_context, size, RSIM_BUF_ALIGN,
			      RSIM_RES_TYPE_QP);
		if (p != IBV_ALLOCATOR_USE_DEFAULT) {
			if (p)
				memset(p, 0, size);
			return p;
		}
	}
	return calloc(1, size);
}

static void rsim_qp_buf_free(struct rsim_qp *qp, void *p)
{
	struct rsim_pd *pd = qp->pd;

	if (!p)
		return;
	if (pd && pd->alloc)
		pd->free(&pd->ibpd, pd->pd_context, p, RSIM_RES_TYPE_QP);
	else
		free(p);
}

static void rsim_qp_free(struct rsim_qp *qp)
{
	rsim_urq_unmap(&qp->rq);
	pthread_spin_destroy(&qp->rq.lock);
	if (qp->sq.ring)
		munmap(qp->sq.ring, qp->sq.len);
	pthread_spin_destroy(&qp->sq.lock);
	rsim_qp_buf_free(qp, qp->wrs);
	rsim_qp_buf_free(qp, qp->place);
	rsim_qp_buf_free(qp, qp->sges);
	rsim_qp_buf_free(qp, qp->inl);
	free(qp);
}

/* the extended send API's list, sized by what the kernel granted */
static int rsim_qp_alloc_list(struct rsim_qp *qp,
			      const struct ibv_qp_cap *cap)
{
	size_t wrs = cap->max_send_wr ?: 1;

	qp->max_wr = cap->max_send_wr;
	qp->max_sge = cap->max_send_sge;
	qp->max_inline = cap->max_inline_data;
	qp->wrs = rsim_qp_buf_alloc(qp, wrs * sizeof(*qp->wrs));
	qp->place = rsim_qp_buf_alloc(qp, wrs * sizeof(*qp->place));
	qp->sges = rsim_qp_buf_alloc(qp, wrs * (qp->max_sge ?: 1) *
					 sizeof(*qp->sges));
	qp->inl = rsim_qp_buf_alloc(qp, wrs * (qp->max_inline ?: 1));
	return qp->wrs && qp->place && qp->sges && qp->inl ? 0 : ENOMEM;
}

/*
 * A QP back in RESET, or destroyed: its completions leave its mapped CQs,
 * as the kernel takes them out of a CQ it polls itself
 */
static void rsim_qp_clean_cqs(struct ibv_qp *qp)
{
	/*
	 * an XRC RECV QP has no CQ: its completions are in its XRC SRQs' CQs,
	 * where its number stays (a number, which nothing looks up)
	 */
	if (!qp->send_cq)
		return;
	rsim_cq_ring_clean(to_rsim_cq(qp->send_cq), qp->qp_num);
	if (qp->recv_cq && qp->recv_cq != qp->send_cq)
		rsim_cq_ring_clean(to_rsim_cq(qp->recv_cq), qp->qp_num);
}

/* a QP's uses of its CQs (@n: 1 when it is made, -1 when it has gone) */
static void rsim_qp_use_cqs(struct ibv_qp *qp, int n)
{
	/* an XRC RECV QP has no CQ, an XRC SEND QP no receive CQ */
	if (qp->send_cq)
		__atomic_add_fetch(&to_rsim_cq(qp->send_cq)->users, n,
				   __ATOMIC_ACQ_REL);
	if (qp->recv_cq)
		__atomic_add_fetch(&to_rsim_cq(qp->recv_cq)->users, n,
				   __ATOMIC_ACQ_REL);
}

static struct ibv_qp *rsim_create_qp_ex(struct ibv_context *ctx,
					struct ibv_qp_init_attr_ex *attr)
{
	struct rsim_create_qp_ex_resp resp = {};
	struct ibv_create_qp_ex cmd = {};
	bool ex = attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	bool map = to_rsim_ctx(ctx)->map &
		   (RSIM_UCTX_MAP_RQ | RSIM_UCTX_MAP_SQ);
	struct rsim_qp *qp;
	int ret;

	if ((attr->comp_mask & ~RSIM_QP_COMP_MASK) ||
	    (ex && (attr->send_ops_flags &
		    ~rsim_qp_send_ops(to_rsim_ctx(ctx), attr)))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_spin_init(&qp->rq.lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->sq.lock, PTHREAD_PROCESS_PRIVATE);
	qp->rq.reset = true;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_PD)
		qp->pd = to_rsim_pd(attr->pd);
	/* the driver's response only where the context has mapped queues */
	ret = ibv_cmd_create_qp_ex2(ctx, &qp->vqp, attr, &cmd, sizeof(cmd),
				    &resp.ibv_resp,
				    map ? sizeof(resp) : sizeof(resp.ibv_resp),
				    NULL);
	if (ret)
		goto err_free;
	if (map && rsim_urq_map(&qp->rq, ctx, &resp.drv.rq)) {
		ret = errno;
		goto err_destroy;
	}
	if ((to_rsim_ctx(ctx)->map & RSIM_UCTX_MAP_SQ) &&
	    rsim_usq_map(&qp->sq, ctx, &resp.drv.sq)) {
		ret = errno;
		goto err_destroy;
	}
	/* what the kernel granted: the ring's posts are checked against it */
	qp->max_sge = attr->cap.max_send_sge;
	qp->max_inline = attr->cap.max_inline_data;
	if (ex) {
		ret = rsim_qp_alloc_list(qp, &attr->cap);
		if (ret)
			goto err_destroy;
		rsim_qp_set_send_ops(qp, attr->send_ops_flags);
		qp->vqp.comp_mask |= VERBS_QP_EX;
	}
	rsim_qp_use_cqs(&qp->vqp.qp, 1);
	return &qp->vqp.qp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	rsim_qp_free(qp);
	errno = ret;
	return NULL;
}

static struct ibv_qp *rsim_create_qp(struct ibv_pd *pd,
				     struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ex = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq,
		.srq = attr->srq,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct ibv_qp *qp = rsim_create_qp_ex(pd->context, &ex);

	if (qp)
		attr->cap = ex.cap;
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
	int ret;

	ret = ibv_cmd_modify_qp(qp, attr, attr_mask, &cmd, sizeof(cmd));
	if (ret || !(attr_mask & IBV_QP_STATE))
		return ret;
	if (attr->qp_state == IBV_QPS_RESET)
		rsim_qp_clean_cqs(qp);
	/* the kernel discarded what was posted: the indices agree again */
	rsim_urq_set_reset(&container_of(qp, struct rsim_qp, vqp.qp)->rq,
			   attr->qp_state == IBV_QPS_RESET);
	rsim_usq_set_ready(&container_of(qp, struct rsim_qp, vqp.qp)->sq,
			   attr->qp_state != IBV_QPS_RESET &&
			   attr->qp_state != IBV_QPS_INIT &&
			   attr->qp_state != IBV_QPS_RTR);
	return 0;
}

static int rsim_destroy_qp(struct ibv_qp *ibqp)
{
	struct rsim_qp *qp = container_of(ibqp, struct rsim_qp, vqp.qp);
	int ret;

	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;
	rsim_qp_clean_cqs(ibqp);
	rsim_qp_use_cqs(ibqp, -1);
	rsim_qp_free(qp);
	return 0;
}

/*
 * A bind's own rules, before it goes into the ring; the kernel checks
 * its copy against the window and the MR when it executes it
 */
static bool rsim_usq_bind_ok(const struct ibv_send_wr *wr)
{
	const struct ibv_mw_bind_info *b = &wr->bind_mw.bind_info;

	if (wr->send_flags & ~(IBV_SEND_FENCE | IBV_SEND_SIGNALED |
			       IBV_SEND_SOLICITED))
		return false;
	if (!wr->bind_mw.mw || (b->length && !b->mr))
		return false;
	/* zero-based windows are not supported (nor by rxe) */
	return !(b->mw_access_flags & IBV_ACCESS_ZERO_BASED);
}

/*
 * A FLUSH's or ATOMIC_WRITE's operands: a WR of the extended send API's
 * list has them beside it; any other (ibv_post_send()'s) has none
 */
static const struct rsim_place *rsim_wr_place_of(const struct rsim_qp *qp,
						 const struct ibv_send_wr *wr)
{
	if (!qp->wrs || wr < qp->wrs || wr >= qp->wrs + qp->nwr)
		return NULL;
	return &qp->place[wr - qp->wrs];
}

/*
 * The post_send command's rules for one WR, checked before it goes into
 * the ring (the kernel checks its copy again); false: EINVAL
 */
static bool rsim_usq_check(struct rsim_qp *qp, const struct ibv_send_wr *wr,
			   uint32_t *inline_len)
{
	bool xrc = qp->vqp.qp.qp_type == IBV_QPT_XRC_SEND;
	bool rc = qp->vqp.qp.qp_type == IBV_QPT_RC || xrc;
	bool ud = qp->vqp.qp.qp_type == IBV_QPT_UD;
	bool inl = wr->send_flags & IBV_SEND_INLINE;
	uint64_t len = 0;
	int i;

	if (ud && (wr->opcode != IBV_WR_SEND &&
		   wr->opcode != IBV_WR_SEND_WITH_IMM))
		return false;
	if (ud && (!wr->wr.ud.ah || wr->wr.ud.ah->pd != qp->vqp.qp.pd ||
		   !container_of(wr->wr.ud.ah, struct rsim_ah, ibah)->num))
		return false;
	switch (wr->opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		break;
	case IBV_WR_RDMA_READ:
	case IBV_WR_SEND_WITH_INV:
		if (!rc || (inl && wr->opcode == IBV_WR_RDMA_READ))
			return false;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		if (!rc || wr->num_sge != 1 || wr->sg_list[0].length != 8 || inl)
			return false;
		break;
	case IBV_WR_BIND_MW:
	case IBV_WR_LOCAL_INV:
		/* no data: the SGEs are not looked at (RC and UC) */
		if (ud || inl)
			return false;
		*inline_len = 0;
		if (wr->opcode == IBV_WR_LOCAL_INV)
			return !(wr->send_flags & ~(IBV_SEND_FENCE |
						    IBV_SEND_SIGNALED |
						    IBV_SEND_SOLICITED));
		return rsim_usq_bind_ok(wr);
	case IBV_WR_FLUSH:
	case IBV_WR_ATOMIC_WRITE:
		/* RC, no data; operands only from the extended send API */
		*inline_len = 0;
		return rc && rsim_wr_place_of(qp, wr) &&
		       !(wr->send_flags & ~(IBV_SEND_FENCE | IBV_SEND_SIGNALED |
					    IBV_SEND_SOLICITED));
	default:
		return false;
	}
	if (wr->send_flags & ~(IBV_SEND_FENCE | IBV_SEND_SIGNALED |
			       IBV_SEND_SOLICITED | IBV_SEND_INLINE))
		return false;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->max_sge)
		return false;
	*inline_len = 0;
	if (!inl)
		return true;
	for (i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	*inline_len = len;
	return len <= qp->max_inline;
}

/*
 * one WR into its slot (checked already); @ud: the QP is UD; @pl: a
 * FLUSH's or ATOMIC_WRITE's operands
 */
static void rsim_usq_fill(struct rsim_usq *sq, uint32_t i,
			  const struct ibv_send_wr *wr, uint32_t inline_len,
			  bool ud, bool xrc, const struct rsim_place *pl)
{
	struct rsim_uswqe *s = (struct rsim_uswqe *)((char *)sq->ring +
		RSIM_URING_SLOTS + (size_t)(i & (sq->nslots - 1)) * sq->stride);
	uint8_t *p = (uint8_t *)s->sge;
	int k;

	memset(s, 0, sizeof(*s));
	s->wr_id = wr->wr_id;
	s->opcode = wr->opcode;
	s->send_flags = wr->send_flags;
	if (xrc)
		s->xrc_srqn = wr->qp_type.xrc.remote_srqn;
	switch (wr->opcode) {
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		s->ex = (uint32_t)wr->imm_data;
		break;
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_LOCAL_INV:
		s->ex = wr->invalidate_rkey;
		break;
	default:
		break;
	}
	switch (wr->opcode) {
	case IBV_WR_LOCAL_INV:
		return;
	case IBV_WR_FLUSH:
		s->wr.flush.remote_addr = pl->remote_addr;
		s->wr.flush.length = pl->length;
		s->wr.flush.rkey = pl->rkey;
		s->wr.flush.type = pl->type;
		s->wr.flush.level = pl->level;
		return;
	case IBV_WR_ATOMIC_WRITE:
		s->wr.atomic_write.remote_addr = pl->remote_addr;
		s->wr.atomic_write.value = pl->value;
		s->wr.atomic_write.rkey = pl->rkey;
		return;
	case IBV_WR_BIND_MW:
		s->wr.bind.addr = wr->bind_mw.bind_info.addr;
		s->wr.bind.length = wr->bind_mw.bind_info.length;
		s->wr.bind.mw_rkey = wr->bind_mw.mw->rkey;
		s->wr.bind.mr_lkey = wr->bind_mw.bind_info.mr ?
				     wr->bind_mw.bind_info.mr->lkey : 0;
		s->wr.bind.rkey = wr->bind_mw.rkey;
		s->wr.bind.access = wr->bind_mw.bind_info.mw_access_flags;
		return;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		s->wr.rdma.remote_addr = wr->wr.rdma.remote_addr;
		s->wr.rdma.rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		s->wr.atomic.remote_addr = wr->wr.atomic.remote_addr;
		s->wr.atomic.compare_add = wr->wr.atomic.compare_add;
		s->wr.atomic.swap = wr->wr.atomic.swap;
		s->wr.atomic.rkey = wr->wr.atomic.rkey;
		break;
	default:
		/* wr.ud shares its bytes with wr.rdma: only a UD QP's */
		if (ud) {
			s->wr.ud.ah_num = container_of(wr->wr.ud.ah,
						       struct rsim_ah,
						       ibah)->num;
			s->wr.ud.remote_qpn = wr->wr.ud.remote_qpn;
			s->wr.ud.remote_qkey = wr->wr.ud.remote_qkey;
		}
		break;
	}
	if (wr->send_flags & IBV_SEND_INLINE) {
		s->inline_len = inline_len;
		for (k = 0; k < wr->num_sge; k++) {
			memcpy(p, (void *)(uintptr_t)wr->sg_list[k].addr,
			       wr->sg_list[k].length);
			p += wr->sg_list[k].length;
		}
		return;
	}
	s->num_sge = wr->num_sge;
	memcpy(s->sge, wr->sg_list, wr->num_sge * sizeof(struct rsim_usge));
}

/*
 * Into the ring, then one doorbell for the list: each WR checked as the
 * kernel's post command checks it, the ones before a refused one posted
 */
static int rsim_usq_post(struct rsim_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr)
{
	struct rsim_usq *sq = &qp->sq;
	struct ibv_send_wr *db_bad;
	uint32_t prod, cons, inline_len;
	bool db = false;
	int ret = 0;

	pthread_spin_lock(&sq->lock);
	prod = sq->prod;
	for (; wr; wr = wr->next) {
		if (!sq->ready || !rsim_usq_check(qp, wr, &inline_len)) {
			ret = EINVAL;
			break;
		}
		cons = __atomic_load_n(&sq->ring->cons, __ATOMIC_ACQUIRE);
		if (prod - cons >= sq->max_wr) {
			ret = ENOMEM;
			break;
		}
		rsim_usq_fill(sq, prod, wr, inline_len,
			      qp->vqp.qp.qp_type == IBV_QPT_UD,
			      qp->vqp.qp.qp_type == IBV_QPT_XRC_SEND,
			      rsim_wr_place_of(qp, wr));
		prod++;
	}
	if (prod != sq->prod) {
		__atomic_store_n(&sq->ring->prod, prod, __ATOMIC_RELEASE);
		sq->prod = prod;
		db = true;
		if (sq->db_flag) {
			/* the index before the flag: pairs with the kernel's */
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
			db = __atomic_load_n(&sq->ring->flags,
					     __ATOMIC_RELAXED) &
			     RSIM_URING_F_DOORBELL;
		}
	}
	pthread_spin_unlock(&sq->lock);
	if (ret)
		*bad_wr = wr;
	/* one doorbell for what this call posted, if the ring asks */
	if (db) {
		int err = ibv_cmd_post_send(&qp->vqp.qp, NULL, &db_bad);

		ret = ret ?: err;
	}
	return ret;
}

static int rsim_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			  struct ibv_send_wr **bad_wr)
{
	struct rsim_qp *qp = container_of(ibqp, struct rsim_qp, vqp.qp);

	if (qp->sq.ring)
		return rsim_usq_post(qp, wr, bad_wr);
	return ibv_cmd_post_send(ibqp, wr, bad_wr);
}

/*
 * Memory windows (type 1 and 2B): binds and invalidations are send WRs,
 * which only a mapped send queue carries (the post_send command cannot);
 * a context without one has no windows.
 */
static struct ibv_mw *rsim_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp = {};
	struct ibv_alloc_mw cmd = {};
	struct ibv_mw *mw;
	int ret;

	if (!(to_rsim_ctx(pd->context)->map & RSIM_UCTX_MAP_SQ)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	mw = calloc(1, sizeof(*mw));
	if (!mw) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(mw);
		errno = ret;
		return NULL;
	}
	return mw;
}

static int rsim_dealloc_mw(struct ibv_mw *mw)
{
	int ret = ibv_cmd_dealloc_mw(mw);

	if (ret)
		return ret;
	free(mw);
	return 0;
}

/*
 * ibv_bind_mw() (type 1): a BIND_MW WR with the next rkey, which the
 * window takes once posted (as rxe's provider does: an error completion
 * leaves the consumer to undo it)
 */
static int rsim_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
			struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr = {
		.wr_id = mw_bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = mw_bind->send_flags,
	};
	struct rsim_qp *rqp = container_of(qp, struct rsim_qp, vqp.qp);
	struct ibv_send_wr *bad;
	int ret;

	/*
	 * Only an RC or UC QP's send ring carries a bind; never the post
	 * command, which cannot (and reads a UD WR's AH, which a bind has
	 * none of)
	 */
	ret = EINVAL;
	if (!rqp->sq.ring ||
	    (qp->qp_type != IBV_QPT_RC && qp->qp_type != IBV_QPT_UC))
		return ret;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = mw_bind->bind_info;
	ret = rsim_post_send(qp, &wr, &bad);
	if (ret)
		return ret;
	mw->rkey = wr.bind_mw.rkey;
	return 0;
}

static int rsim_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
			  struct ibv_recv_wr **bad_wr)
{
	struct rsim_qp *qp = container_of(ibqp, struct rsim_qp, vqp.qp);
	struct ibv_recv_wr *db_bad;
	bool db;
	int ret;

	if (!qp->rq.ring)
		return ibv_cmd_post_recv(ibqp, wr, bad_wr);
	ret = rsim_urq_post(&qp->rq, wr, bad_wr, &db);
	if (db) {
		int err = ibv_cmd_post_recv(ibqp, NULL, &db_bad);

		ret = ret ?: err;
	}
	return ret;
}

/*
 * Shared receive queues (basic, no XRC): the kernel's, posted to with its
 * post_srq_recv command, or mapped like a QP's receive queue.
 */
struct rsim_srq {
	struct verbs_srq vsrq;		/* an XRC SRQ's number in it */
	struct rsim_urq rq;
};

static void rsim_srq_free(struct rsim_srq *srq)
{
	rsim_urq_unmap(&srq->rq);
	pthread_spin_destroy(&srq->rq.lock);
	free(srq);
}

/*
 * A resize of a mapped SRQ gives it a new ring (the kernel writes it into
 * @resp): posts stop while the command runs, then go to the new ring from
 * its index 0, the old one unmapped (the kernel takes its WRs first). If
 * the new ring cannot be mapped the SRQ refuses posts from then on.
 */
static int rsim_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
			   int attr_mask)
{
	struct rsim_srq *srq = container_of(ibsrq, struct rsim_srq, vsrq.srq);
	struct rsim_modify_srq_resp resp = {};
	struct rsim_modify_srq_ex cmd = {};
	struct rsim_urq nrq = {};
	int ret;

	if (!srq->rq.ring || !(attr_mask & IBV_SRQ_MAX_WR))
		return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd.ibv_cmd,
					  sizeof(cmd.ibv_cmd));
	pthread_spin_lock(&srq->rq.lock);
	cmd.drv.resp_addr = (uintptr_t)&resp;
	ret = ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd.ibv_cmd,
				 sizeof(cmd));
	if (ret)
		goto out;
	if (rsim_urq_map(&nrq, ibsrq->context, &resp.rq) || !nrq.ring) {
		ret = nrq.ring ? errno : EPROTO;
		srq->rq.reset = true;
		goto out;
	}
	munmap(srq->rq.ring, srq->rq.len);
	srq->rq.ring = nrq.ring;
	srq->rq.len = nrq.len;
	srq->rq.nslots = nrq.nslots;
	srq->rq.max_wr = nrq.max_wr;
	srq->rq.max_sge = nrq.max_sge;
	srq->rq.stride = nrq.stride;
	srq->rq.prod = 0;
out:
	pthread_spin_unlock(&srq->rq.lock);
	return ret;
}

/*
 * An SRQ with the extended attributes: basic, or XRC (of an XRC domain,
 * completing to its own CQ; ibv_get_srq_num() gives its number, which
 * the WRs of XRC SEND QPs name). Mapped as the basic one.
 */
static struct ibv_srq *rsim_create_srq_ex(struct ibv_context *ctx,
					  struct ibv_srq_init_attr_ex *attr)
{
	struct rsim_create_srq_ex_resp resp = {};
	bool map = to_rsim_ctx(ctx)->map & RSIM_UCTX_MAP_RQ;
	struct ibv_create_xsrq cmd = {};
	struct rsim_srq *srq;
	int ret;

	srq = calloc(1, sizeof(*srq));
	if (!srq) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_spin_init(&srq->rq.lock, PTHREAD_PROCESS_PRIVATE);
	ret = ibv_cmd_create_srq_ex(ctx, &srq->vsrq, attr, &cmd, sizeof(cmd),
				    &resp.ibv_resp,
				    map ? sizeof(resp) : sizeof(resp.ibv_resp));
	if (ret)
		goto err_free;
	if (map && rsim_urq_map(&srq->rq, ctx, &resp.drv.rq)) {
		ret = errno;
		ibv_cmd_destroy_srq(&srq->vsrq.srq);
		goto err_free;
	}
	return &srq->vsrq.srq;

err_free:
	rsim_srq_free(srq);
	errno = ret;
	return NULL;
}

/* a basic SRQ: rsim_create_srq_ex()'s, its attributes as granted */
static struct ibv_srq *rsim_create_srq(struct ibv_pd *pd,
				       struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex ex = {
		.srq_context = attr->srq_context,
		.attr = attr->attr,
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD,
		.srq_type = IBV_SRQT_BASIC,
		.pd = pd,
	};
	struct ibv_srq *srq = rsim_create_srq_ex(pd->context, &ex);

	if (srq)
		attr->attr = ex.attr;
	return srq;
}

static int rsim_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	struct rsim_srq *srq = container_of(ibsrq, struct rsim_srq, vsrq.srq);
	/* libibverbs' ops return a positive errno */
	int not_xrc = EOPNOTSUPP;

	if (srq->vsrq.srq_type != IBV_SRQT_XRC)
		return not_xrc;
	*srq_num = srq->vsrq.srq_num;
	return 0;
}

/* XRC domains: the kernel's, shared through the file they are opened by */
static struct ibv_xrcd *rsim_open_xrcd(struct ibv_context *ctx,
				       struct ibv_xrcd_init_attr *attr)
{
	struct ib_uverbs_open_xrcd_resp resp;
	struct ibv_open_xrcd cmd = {};
	struct verbs_xrcd *xrcd;
	int ret;

	xrcd = calloc(1, sizeof(*xrcd));
	if (!xrcd) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_open_xrcd(ctx, xrcd, sizeof(*xrcd), attr, &cmd,
				sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(xrcd);
		errno = ret;
		return NULL;
	}
	return &xrcd->xrcd;
}

static int rsim_close_xrcd(struct ibv_xrcd *ibxrcd)
{
	struct verbs_xrcd *xrcd = container_of(ibxrcd, struct verbs_xrcd, xrcd);
	int ret;

	ret = ibv_cmd_close_xrcd(xrcd);
	if (ret)
		return ret;
	free(xrcd);
	return 0;
}

/*
 * An XRC RECV QP that another QP (another process's, often) made, opened
 * by its number in a shared XRC domain: it has no queue to map
 */
static struct ibv_qp *rsim_open_qp(struct ibv_context *ctx,
				   struct ibv_qp_open_attr *attr)
{
	struct ib_uverbs_create_qp_resp resp;
	struct ibv_open_qp cmd = {};
	struct rsim_qp *qp;
	int ret;

	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_spin_init(&qp->rq.lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->sq.lock, PTHREAD_PROCESS_PRIVATE);
	qp->rq.reset = true;
	ret = ibv_cmd_open_qp(ctx, &qp->vqp, sizeof(qp->vqp), attr, &cmd,
			      sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		rsim_qp_free(qp);
		errno = ret;
		return NULL;
	}
	return &qp->vqp.qp;
}

static int rsim_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd = {};

	return ibv_cmd_query_srq(srq, attr, &cmd, sizeof(cmd));
}

static int rsim_destroy_srq(struct ibv_srq *ibsrq)
{
	int ret;

	ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret)
		return ret;
	rsim_srq_free(container_of(ibsrq, struct rsim_srq, vsrq.srq));
	return 0;
}

static int rsim_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			      struct ibv_recv_wr **bad_wr)
{
	struct rsim_srq *srq = container_of(ibsrq, struct rsim_srq, vsrq.srq);
	struct ibv_recv_wr *db_bad;
	bool db;
	int ret;

	if (!srq->rq.ring)
		return ibv_cmd_post_srq_recv(ibsrq, wr, bad_wr);
	ret = rsim_urq_post(&srq->rq, wr, bad_wr, &db);
	if (db) {
		int err = ibv_cmd_post_srq_recv(ibsrq, NULL, &db_bad);

		ret = ret ?: err;
	}
	return ret;
}

/*
 * Device memory: the kernel's pages (dm.c), mapped here at the offset the
 * driver's attribute of the DM_ALLOC method returns; ibv_memcpy_to_dm and
 * ibv_memcpy_from_dm copy through the mapping, at offsets and lengths that
 * are multiples of 4 (as mlx5 requires) and within the allocation. An MR over
 * it is the kernel's (reg_dm_mr, zero-based).
 */
struct rsim_dm {
	struct verbs_dm vdm;
	void *map;
	size_t len;
};

static struct rsim_dm *to_rsim_dm(struct ibv_dm *ibdm)
{
	return container_of(ibdm, struct rsim_dm, vdm.dm);
}

static int rsim_dm_range(struct rsim_dm *dm, uint64_t off, size_t len)
{
	int ret = EINVAL;	/* positive, as libibverbs wants */

	if (off % 4 || len % 4 || off > dm->len || len > dm->len - off)
		return ret;
	return 0;
}

static int rsim_memcpy_to_dm(struct ibv_dm *ibdm, uint64_t dm_offset,
			     const void *host_addr, size_t length)
{
	struct rsim_dm *dm = to_rsim_dm(ibdm);
	int ret = rsim_dm_range(dm, dm_offset, length);

	if (!ret)
		memcpy((char *)dm->map + dm_offset, host_addr, length);
	return ret;
}

static int rsim_memcpy_from_dm(void *host_addr, struct ibv_dm *ibdm,
			       uint64_t dm_offset, size_t length)
{
	struct rsim_dm *dm = to_rsim_dm(ibdm);
	int ret = rsim_dm_range(dm, dm_offset, length);

	if (!ret)
		memcpy(host_addr, (char *)dm->map + dm_offset, length);
	return ret;
}

static struct ibv_dm *rsim_alloc_dm(struct ibv_context *ctx,
				    struct ibv_alloc_dm_attr *attr)
{
	DECLARE_COMMAND_BUFFER(cmdb, UVERBS_OBJECT_DM, UVERBS_METHOD_DM_ALLOC,
			       1);
	uint64_t offset = 0;
	struct rsim_dm *dm;
	int ret;

	if (attr->comp_mask) {
		errno = EINVAL;
		return NULL;
	}
	dm = calloc(1, sizeof(*dm));
	if (!dm) {
		errno = ENOMEM;
		return NULL;
	}
	fill_attr_out_ptr(cmdb, RSIM_UVERBS_ATTR_ALLOC_DM_MMAP_OFFSET, &offset);
	ret = ibv_cmd_alloc_dm(ctx, attr, &dm->vdm, cmdb);
	if (ret) {
		free(dm);
		errno = ret;
		return NULL;
	}
	dm->len = attr->length;
	dm->map = mmap(NULL, dm->len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       ctx->cmd_fd, offset);
	if (dm->map == MAP_FAILED) {
		ret = errno;
		ibv_cmd_free_dm(&dm->vdm);
		free(dm);
		errno = ret;
		return NULL;
	}
	dm->vdm.dm.memcpy_to_dm = rsim_memcpy_to_dm;
	dm->vdm.dm.memcpy_from_dm = rsim_memcpy_from_dm;
	return &dm->vdm.dm;
}

static int rsim_free_dm(struct ibv_dm *ibdm)
{
	struct rsim_dm *dm = to_rsim_dm(ibdm);
	int ret;

	ret = ibv_cmd_free_dm(&dm->vdm);
	if (ret)
		return ret;
	munmap(dm->map, dm->len);
	free(dm);
	return 0;
}

static struct ibv_mr *rsim_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *ibdm,
				     uint64_t dm_offset, size_t length,
				     unsigned int access)
{
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_reg_dm_mr(pd, &to_rsim_dm(ibdm)->vdm, dm_offset, length,
				access, vmr, NULL);
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

static struct ibv_ah *rsim_create_ah(struct ibv_pd *pd,
				     struct ibv_ah_attr *attr)
{
	struct rsim_create_ah_ex_resp resp = {};
	bool map = to_rsim_ctx(pd->context)->map & RSIM_UCTX_MAP_SQ;
	struct rsim_ah *ah;
	int ret;

	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}
	/* with mapped send queues, the number UD WRs name it by */
	ret = ibv_cmd_create_ah(pd, &ah->ibah, attr, &resp.ibv_resp,
				map ? sizeof(resp) : sizeof(resp.ibv_resp));
	if (ret) {
		free(ah);
		errno = ret;
		return NULL;
	}
	ah->num = resp.drv.ah_num;
	return &ah->ibah;
}

static int rsim_destroy_ah(struct ibv_ah *ah)
{
	int ret;

	ret = ibv_cmd_destroy_ah(ah);
	if (ret)
		return ret;
	free(container_of(ah, struct rsim_ah, ibah));
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
	.advise_mr = ibv_cmd_advise_mr,	/* prefetch of ODP MRs */
	.alloc_dmah = rsim_alloc_dmah,
	.alloc_dm = rsim_alloc_dm,
	.alloc_mw = rsim_alloc_mw,
	.alloc_parent_domain = rsim_alloc_parent_domain,
	.alloc_pd = rsim_alloc_pd,
	.attach_mcast = ibv_cmd_attach_mcast,
	.bind_mw = rsim_bind_mw,
	.create_ah = rsim_create_ah,
	.create_cq = rsim_create_cq,
	.create_cq_ex = rsim_create_cq_ex,
	.create_qp = rsim_create_qp,
	.create_qp_ex = rsim_create_qp_ex,
	.create_srq = rsim_create_srq,
	.create_srq_ex = rsim_create_srq_ex,
	.dealloc_dmah = rsim_dealloc_dmah,
	.dealloc_mw = rsim_dealloc_mw,
	.dealloc_pd = rsim_dealloc_pd,
	.dereg_mr = rsim_dereg_mr,
	.destroy_ah = rsim_destroy_ah,
	.destroy_cq = rsim_destroy_cq,
	.destroy_qp = rsim_destroy_qp,
	.destroy_srq = rsim_destroy_srq,
	.detach_mcast = ibv_cmd_detach_mcast,
	.close_xrcd = rsim_close_xrcd,
	.free_context = rsim_free_context,
	.get_srq_num = rsim_get_srq_num,
	.free_dm = rsim_free_dm,
	.modify_qp = rsim_modify_qp,
	.modify_srq = rsim_modify_srq,
	.open_qp = rsim_open_qp,
	.open_xrcd = rsim_open_xrcd,
	.poll_cq = rsim_poll_cq,
	.post_recv = rsim_post_recv,
	.post_send = rsim_post_send,
	.post_srq_recv = rsim_post_srq_recv,
	.query_device_ex = rsim_query_device_ex,
	.query_port = rsim_query_port,
	.query_qp = rsim_query_qp,
	.query_srq = rsim_query_srq,
	.reg_dm_mr = rsim_reg_dm_mr,
	.reg_dmabuf_mr = rsim_reg_dmabuf_mr,
	.reg_mr = rsim_reg_mr,
	.reg_mr_ex = rsim_reg_mr_ex,
	.req_notify_cq = rsim_req_notify_cq,
	.rereg_mr = rsim_rereg_mr,
	.resize_cq = rsim_resize_cq,
};

static struct verbs_context *rsim_alloc_context(struct ibv_device *ibdev,
						int cmd_fd, void *private_data)
{
	struct rsim_get_context_resp resp = {};
	struct rsim_get_context cmd = {};
	const char *no_map = getenv("RSIM_NO_MAP");
	const char *always = getenv("RSIM_RING_ALWAYS");
	struct rsim_context *ctx;
	int ret = 0;

	/* the driver id the kernel reports: see the top of this file */
	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, vctx,
					   verbs_get_device(ibdev)->sysfs->driver_id);
	if (!ctx)
		return NULL;
	/*
	 * Mapped CQs, receive and send queues unless RSIM_NO_MAP=1, the
	 * kernel saying what it grants; send doorbells only when the ring
	 * asks, unless RSIM_RING_ALWAYS=1 (a kernel that knows no such flag
	 * refuses it: asked again without). Without, the request is an old
	 * provider's: no driver data at all (so is the retry when a kernel
	 * from before the ABI refuses one).
	 */
	if (!no_map || strcmp(no_map, "1")) {
		cmd.drv.flags = RSIM_UCTX_MAP_CQ | RSIM_UCTX_MAP_RQ |
				RSIM_UCTX_MAP_SQ;
		if (!always || strcmp(always, "1"))
			cmd.drv.flags |= RSIM_UCTX_SQ_DB;
		ret = ibv_cmd_get_context(&ctx->vctx, &cmd.ibv_cmd,
					  sizeof(cmd), NULL, &resp.ibv_resp,
					  sizeof(resp));
		if (ret == EINVAL && (cmd.drv.flags & RSIM_UCTX_SQ_DB)) {
			cmd.drv.flags &= ~RSIM_UCTX_SQ_DB;
			ret = ibv_cmd_get_context(&ctx->vctx, &cmd.ibv_cmd,
						  sizeof(cmd), NULL,
						  &resp.ibv_resp,
						  sizeof(resp));
		}
	}
	if (!cmd.drv.flags || ret == EINVAL) {
		cmd.drv.flags = 0;
		ret = ibv_cmd_get_context(&ctx->vctx, &cmd.ibv_cmd,
					  sizeof(cmd.ibv_cmd), NULL,
					  &resp.ibv_resp, sizeof(resp.ibv_resp));
	}
	if (ret) {
		verbs_uninit_context(&ctx->vctx);
		free(ctx);
		errno = ret;
		return NULL;
	}
	ctx->map = resp.drv.caps & cmd.drv.flags;
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
 * By name, or by the parent's modalias (the platform device rdmasim.<N>
 * or rdmasim.<N>.auto): the kernel's driver id is RDMA_DRIVER_UNKNOWN
 * (0), which libibverbs' match_driver_id() skips.
 */
static const struct verbs_match_ent rsim_match_table[] = {
	VERBS_NAME_MATCH("rdmasim", NULL),
	/* any name ("rdma link add" names RoCE-mode devices): the parent */
	VERBS_MODALIAS_MATCH("platform:rdmasim", NULL),
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
