// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: user contexts, protection domains and address handles.
 *
 * A user context is what /dev/infiniband/uverbsN hands a process that
 * opens the device: its PDs, MRs and DMA handles hang off it. Its
 * provider may ask for mapped queue rings (include/rdmasim/rdmasim-abi.h):
 * CQ rings so far (cq.c); everything else goes through the core's
 * commands.
 */

#include <linux/idr.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_mad.h>
#include <kunit/visibility.h>
#include <rdmasim/rdmasim-abi.h>

#include "rdmasim.h"

/*
 * The provider's request (struct rsim_alloc_ucontext_cmd), copied once:
 * which queues it wants mapped. None (an old provider, or RSIM_NO_MAP=1)
 * keeps the system-call path. A request the device cannot parse (unknown
 * flags, nonzero reserved bytes or a longer request not zero past what
 * the device knows) is refused, not ignored.
 */
static int rsim_alloc_ucontext(struct ib_ucontext *uctx,
			       struct ib_udata *udata)
{
	struct rsim_ucontext *uc = container_of(uctx, struct rsim_ucontext,
						ibuc);
	struct rsim_alloc_ucontext_resp resp = {};
	struct rsim_alloc_ucontext_cmd cmd = {};
	int err;

	if (!udata->inlen)
		return 0;
	err = ib_copy_from_udata(&cmd, udata, min(sizeof(cmd), udata->inlen));
	if (err)
		return err;
	if (cmd.flags & ~(RSIM_UCTX_MAP_CQ | RSIM_UCTX_MAP_RQ |
			  RSIM_UCTX_MAP_SQ | RSIM_UCTX_SQ_DB) ||
	    cmd.reserved ||
	    (udata->inlen > sizeof(cmd) &&
	     !ib_is_udata_cleared(udata, sizeof(cmd),
				  udata->inlen - sizeof(cmd))))
		return -EINVAL;
	/* the doorbell flag means something only for mapped send queues */
	if (!(cmd.flags & RSIM_UCTX_MAP_SQ))
		cmd.flags &= ~RSIM_UCTX_SQ_DB;
	uc->map = cmd.flags;
	resp.caps = uc->map;
	return ib_copy_to_udata(udata, &resp, min(sizeof(resp), udata->outlen));
}

static void rsim_dealloc_ucontext(struct ib_ucontext *uctx)
{
}

/*
 * The device is being removed (del_device, rmmod) while a process holds
 * this context. Having this op is what lets the removal go on without
 * waiting for the process to close its file: the core has destroyed
 * every object of the context (RDMA_REMOVE_DRIVER_REMOVE, through the
 * same destroy verbs as a close), zapped the device-memory mappings made
 * with rdma_user_mmap_io(), and raises IB_EVENT_DEVICE_FATAL; the
 * process's next verb fails with EIO and its close() frees what is left.
 * The context reaches nothing else of the device (its CQ rings are pages
 * of memory that hold their own references, umap.c), so there is nothing
 * more to detach here (as in mlx5).
 */
static void rsim_disassociate_ucontext(struct ib_ucontext *uctx)
{
}

static int rsim_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct rsim_dev *rsim = to_rsim_dev(ibpd->device);
	struct rsim_pd *pd = to_rsim_pd(ibpd);
	int pdn;

	if (!rsim_res_get(rsim, RSIM_RES_PD))
		return -ENOMEM;

	if (rsim_should_fail(rsim, RSIM_FAULT_ALLOC))
		pdn = -ENOMEM;
	else
		pdn = ida_alloc(&rsim->pd_ida, GFP_KERNEL);
	if (pdn < 0) {
		rsim_res_put(rsim, RSIM_RES_PD);
		return pdn;
	}
	pd->pdn = pdn;
	return 0;
}

static int rsim_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct rsim_dev *rsim = to_rsim_dev(ibpd->device);

	ida_free(&rsim->pd_ida, to_rsim_pd(ibpd)->pdn);
	rsim_res_put(rsim, RSIM_RES_PD);
	return 0;
}

/**
 * rsim_ah_attr_check() - validate an address vector (AH or QP path)
 * @rsim: the device
 * @ah: the address vector
 *
 * InfiniBand: an IB vector on port 1 with a LID, a service level below 16
 * and, with a GRH, source GID index 0. RoCE: a RoCE vector on port 1 with
 * a GRH (the core has checked its source GID attribute and resolved the
 * destination MAC), a unicast destination GID and a service level below
 * 8 (the Ethernet priority).
 *
 * Context: any.
 * Return: 0, or -EINVAL.
 */
int rsim_ah_attr_check(struct rsim_dev *rsim, const struct rdma_ah_attr *ah)
{
	if (rsim_is_roce(rsim))
		return ah->type == RDMA_AH_ATTR_TYPE_ROCE &&
		       rdma_ah_get_port_num(ah) == RSIM_PORT &&
		       (rdma_ah_get_ah_flags(ah) & IB_AH_GRH) &&
		       !rdma_is_multicast_addr((struct in6_addr *)
					       rdma_ah_read_grh(ah)->dgid.raw) &&
		       rdma_ah_get_sl(ah) < 8 ? 0 : -EINVAL;
	if (ah->type != RDMA_AH_ATTR_TYPE_IB ||
	    rdma_ah_get_port_num(ah) != RSIM_PORT ||
	    rdma_ah_get_dlid(ah) == 0 || rdma_ah_get_sl(ah) > 15)
		return -EINVAL;
	if ((rdma_ah_get_ah_flags(ah) & IB_AH_GRH) &&
	    rdma_ah_read_grh(ah)->sgid_index != 0)
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_ah_attr_check);

/*
 * Address handles are created from atomic context too (without
 * RDMA_CREATE_AH_SLEEPABLE): nothing a kernel caller meets here sleeps.
 * A user AH (uverbs' create_ah, @udata set) is the same object: the
 * provider sends no driver data, and the kernel's post_send command hands
 * the data path the AH as a kernel ULP would. A process with mapped send
 * queues (usq.c) gets a number for it (struct rsim_create_ah_resp), which
 * its UD WRs in the ring name it by.
 */
static int rsim_create_ah(struct ib_ah *ibah,
			  struct rdma_ah_init_attr *init_attr,
			  struct ib_udata *udata)
{
	struct rsim_dev *rsim = to_rsim_dev(ibah->device);
	struct rsim_ah *ah = to_rsim_ah(ibah);
	int err;

	/* a request the device cannot parse is refused, not ignored */
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	err = rsim_ah_attr_check(rsim, init_attr->ah_attr);
	if (err)
		return err;
	if (!rsim_res_get(rsim, RSIM_RES_AH))
		return -ENOMEM;

	ah->attr = *init_attr->ah_attr;
	/* the copy must not hold a reference the core will drop */
	ah->attr.grh.sgid_attr = NULL;
	ah->num = 0;
	if (rsim_umap_uctx(udata, RSIM_UCTX_MAP_SQ)) {
		struct rsim_create_ah_resp resp = {};

		err = -EINVAL;
		if (udata->outlen < sizeof(resp))
			goto err_res;
		err = xa_alloc_cyclic(&rsim->ah_xa, &ah->num, ah, xa_limit_31b,
				      &rsim->ah_next, GFP_KERNEL);
		if (err < 0)
			goto err_res;
		resp.ah_num = ah->num;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_erase;
	}
	return 0;

err_erase:
	xa_erase(&rsim->ah_xa, ah->num);
err_res:
	rsim_res_put(rsim, RSIM_RES_AH);
	return err;
}

static int rsim_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	struct rsim_ah *ah = to_rsim_ah(ibah);

	memset(attr, 0, sizeof(*attr));
	attr->type = ah->attr.type;
	rdma_ah_set_port_num(attr, rdma_ah_get_port_num(&ah->attr));
	rdma_ah_set_dlid(attr, rdma_ah_get_dlid(&ah->attr));
	rdma_ah_set_sl(attr, rdma_ah_get_sl(&ah->attr));
	rdma_ah_set_path_bits(attr, rdma_ah_get_path_bits(&ah->attr));
	rdma_ah_set_static_rate(attr, rdma_ah_get_static_rate(&ah->attr));
	if (rdma_ah_get_ah_flags(&ah->attr) & IB_AH_GRH) {
		const struct ib_global_route *grh = rdma_ah_read_grh(&ah->attr);
		union ib_gid dgid = grh->dgid;

		rdma_ah_set_grh(attr, &dgid, grh->flow_label,
				grh->sgid_index, grh->hop_limit,
				grh->traffic_class);
	}
	return 0;
}

static int rsim_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct rsim_dev *rsim = to_rsim_dev(ibah->device);
	struct rsim_ah *ah = to_rsim_ah(ibah);

	/* no doorbell finds it from here on (it looks up under the lock) */
	if (ah->num)
		xa_erase(&rsim->ah_xa, ah->num);
	rsim_res_put(rsim, RSIM_RES_AH);
	return 0;
}

const struct ib_device_ops rsim_pd_ops = {
	.alloc_pd = rsim_alloc_pd,
	.alloc_ucontext = rsim_alloc_ucontext,
	.create_ah = rsim_create_ah,
	.create_user_ah = rsim_create_ah,
	.dealloc_pd = rsim_dealloc_pd,
	.dealloc_ucontext = rsim_dealloc_ucontext,
	.disassociate_ucontext = rsim_disassociate_ucontext,
	.destroy_ah = rsim_destroy_ah,
	.query_ah = rsim_query_ah,

	INIT_RDMA_OBJ_SIZE(ib_ah, rsim_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_pd, rsim_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, rsim_ucontext, ibuc),
};
