// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: the ib_device: probe/remove, attributes, the port, limits.
 */

#include <linux/dma-mapping.h>
#include <linux/slab.h>
#include <net/addrconf.h>
#include <rdma/ib_mad.h>
#include <kunit/visibility.h>

#include <rdmasim/rdmasim-abi.h>

#include "rdmasim.h"

/* A locally administered EUI-64 prefix; the device id goes in bits 8..23. */
#define RSIM_GUID_PREFIX	0x02ca510000000000ULL
#define RSIM_FW_VER		0x0001000000000000ULL	/* 1.0.0 */

static_assert(RSIM_DEV_NAME_LEN <= IB_DEVICE_NAME_MAX);
static_assert(RSIM_DEV_NAME_LEN <= IB_DEVICE_NODE_DESC_MAX);

/*
 * The limits of a device created without a config, in one reviewable
 * table (rxe_pool.c style). The MAD layer alone needs a CQ of 1280 entries
 * (128 + 512 for each of QP0 and QP1), queues of 512 receive and 128 send
 * WRs, and 2 send SGEs.
 */
const struct rsim_limits rsim_default_limits = {
	.max_res = {
		[RSIM_RES_PD] = 1024,
		[RSIM_RES_MR] = 16384,
		[RSIM_RES_CQ] = 1024,
		[RSIM_RES_QP] = 1024,
		[RSIM_RES_AH] = 4096,
		[RSIM_RES_DMAH] = 1024,
		[RSIM_RES_SRQ] = 1024,
		[RSIM_RES_DM] = 256,
		[RSIM_RES_MW] = 16384,
	},
	.max_cqe = 32768,
	.max_qp_wr = 4096,
	.max_send_sge = 16,
	.max_recv_sge = 16,
	.max_sge_rd = 16,
	.max_inline_data = 256,
	.max_fast_reg_page_list_len = 512,
	.max_qp_rd_atom = 16,
	.max_qp_init_rd_atom = 16,
	.max_mr_size = 1ULL << 40,
	.pkey_tbl_len = 16,
};

static const char * const rsim_res_names[RSIM_RES_NR] = {
	[RSIM_RES_PD] = "pd",
	[RSIM_RES_MR] = "mr",
	[RSIM_RES_CQ] = "cq",
	[RSIM_RES_QP] = "qp",
	[RSIM_RES_AH] = "ah",
	[RSIM_RES_DMAH] = "dmah",
	[RSIM_RES_SRQ] = "srq",
	[RSIM_RES_DM] = "dm",
	[RSIM_RES_MW] = "mw",
};

/**
 * rsim_res_name() - short name of an object type
 * @type: object type
 *
 * Return: "pd", "mr", ... or "?" for an unknown type.
 */
const char *rsim_res_name(enum rsim_res_type type)
{
	return type < RSIM_RES_NR ? rsim_res_names[type] : "?";
}
EXPORT_SYMBOL_IF_KUNIT(rsim_res_name);

/**
 * rsim_res_get() - account one more object of @type against its limit
 * @rsim: device
 * @type: object type
 *
 * Context: Any context.
 * Return: true if the object fits; false (and the refusal is counted) if
 * the device is at its limit.
 */
bool rsim_res_get(struct rsim_dev *rsim, enum rsim_res_type type)
{
	struct rsim_res *res = &rsim->res[type];
	int n, hwm;

	if (!atomic_add_unless(&res->count, 1,
			       rsim->cfg.limits.max_res[type])) {
		atomic_inc(&res->refused);
		return false;
	}
	n = atomic_read(&res->count);
	hwm = atomic_read(&res->hwm);
	while (n > hwm && !atomic_try_cmpxchg(&res->hwm, &hwm, n))
		;
	return true;
}

/**
 * rsim_res_put() - release what rsim_res_get() accounted
 * @rsim: device
 * @type: object type
 *
 * Context: Any context.
 */
void rsim_res_put(struct rsim_dev *rsim, enum rsim_res_type type)
{
	WARN_ON_ONCE(atomic_dec_return(&rsim->res[type].count) < 0);
}

/**
 * rsim_res_count() - live objects of @type
 * @rsim: device
 * @type: object type
 *
 * Return: the count.
 */
int rsim_res_count(struct rsim_dev *rsim, enum rsim_res_type type)
{
	return atomic_read(&rsim->res[type].count);
}
EXPORT_SYMBOL_IF_KUNIT(rsim_res_count);

static int rsim_query_device(struct ib_device *ibdev,
			     struct ib_device_attr *attr,
			     struct ib_udata *udata)
{
	struct rsim_dev *rsim = to_rsim_dev(ibdev);
	const struct rsim_limits *lim = &rsim->cfg.limits;

	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;

	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = RSIM_FW_VER;
	attr->sys_image_guid = ibdev->node_guid;
	attr->max_mr_size = lim->max_mr_size;
	attr->page_size_cap = RSIM_PAGE_SIZE_CAP;
	attr->vendor_id = RSIM_VENDOR_ID;
	attr->vendor_part_id = RSIM_VENDOR_PART_ID;
	attr->hw_ver = RSIM_HW_VER;
	attr->max_qp = lim->max_res[RSIM_RES_QP];
	attr->max_qp_wr = lim->max_qp_wr;
	attr->device_cap_flags = IB_DEVICE_BAD_PKEY_CNTR |
				 IB_DEVICE_BAD_QKEY_CNTR |
				 IB_DEVICE_SYS_IMAGE_GUID |
				 IB_DEVICE_RC_RNR_NAK_GEN |
				 IB_DEVICE_PORT_ACTIVE_EVENT |
				 IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B |
				 IB_DEVICE_SRQ_RESIZE |
				 IB_DEVICE_XRC |
				 /* a mapped send queue's: no kernel WR has them */
				 RSIM_DEVICE_PLACEMENT;
	attr->kernel_cap_flags = IBK_LOCAL_DMA_LKEY | IBK_SG_GAPS_REG |
				 IBK_BLOCK_MULTICAST_LOOPBACK;
	/* a device "rdma link add" made, "rdma link del" removes */
	if (rsim_is_roce(rsim))
		attr->kernel_cap_flags |= IBK_ALLOW_USER_UNREG;
	/* where the DMA device bounces, ODP MRs are refused (compat.h) */
	if (rsim_odp_possible(rsim))
		rsim_odp_caps(attr);
	attr->max_send_sge = lim->max_send_sge;
	attr->max_recv_sge = lim->max_recv_sge;
	attr->max_sge_rd = lim->max_sge_rd;
	attr->max_cq = lim->max_res[RSIM_RES_CQ];
	attr->max_cqe = lim->max_cqe;
	attr->max_mr = lim->max_res[RSIM_RES_MR];
	attr->max_mw = lim->max_res[RSIM_RES_MW];
	attr->max_pd = lim->max_res[RSIM_RES_PD];
	attr->max_qp_rd_atom = lim->max_qp_rd_atom;
	attr->max_qp_init_rd_atom = lim->max_qp_init_rd_atom;
	attr->max_res_rd_atom = lim->max_qp_rd_atom *
				lim->max_res[RSIM_RES_QP];
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->masked_atomic_cap = IB_ATOMIC_NONE;
	attr->max_ah = lim->max_res[RSIM_RES_AH];
	attr->max_srq = lim->max_res[RSIM_RES_SRQ];
	attr->max_srq_wr = lim->max_qp_wr;
	attr->max_srq_sge = lim->max_recv_sge;
	attr->max_dm_size = RSIM_DM_MAX;
	attr->max_fast_reg_page_list_len = lim->max_fast_reg_page_list_len;
	attr->max_pkeys = lim->pkey_tbl_len;
	attr->local_ca_ack_delay = 15;
	attr->max_mcast_grp = RSIM_MC_GROUPS;
	attr->max_mcast_qp_attach = RSIM_MC_QP_ATTACH;
	attr->max_total_mcast_qp_attach = RSIM_MC_GROUPS * RSIM_MC_QP_ATTACH;
	return 0;
}

static int rsim_query_port(struct ib_device *ibdev, u32 port_num,
			   struct ib_port_attr *attr)
{
	struct rsim_dev *rsim = to_rsim_dev(ibdev);
	struct rsim_port *port = &rsim->port;

	if (port_num != RSIM_PORT)
		return -EINVAL;

	/* The core hands us a zeroed attr (ib_query_port()). */
	spin_lock_bh(&port->lock);
	attr->state = port->state;
	attr->lid = port->lid;
	attr->sm_lid = port->sm_lid;
	attr->bad_pkey_cntr = port->pkey_viol;
	attr->qkey_viol_cntr = port->qkey_viol;

	attr->phys_state = port->phys_state;
	attr->active_mtu = port->mtu;
	attr->sm_sl = port->sm_sl;
	attr->subnet_timeout = port->subnet_timeout;
	spin_unlock_bh(&port->lock);

	attr->max_mtu = IB_MTU_4096;
	attr->gid_tbl_len = rsim_is_roce(rsim) ? RSIM_ROCE_GID_TBL_LEN : 1;
	/* RoCE: no SM, no LIDs; the CM over QP1 */
	attr->port_cap_flags = rsim_is_roce(rsim) ? IB_PORT_CM_SUP :
						    rsim_port_cap_flags(rsim);
	attr->max_msg_sz = RSIM_MAX_MSG;
	attr->pkey_tbl_len = rsim->cfg.limits.pkey_tbl_len;
	attr->lmc = 0;
	attr->max_vl_num = 1;		/* VL0 only */
	attr->init_type_reply = 0;
	attr->active_width = IB_WIDTH_4X;
	attr->active_speed = IB_SPEED_EDR;
	return 0;
}

static int rsim_query_gid(struct ib_device *ibdev, u32 port_num, int index,
			  union ib_gid *gid)
{
	struct rsim_dev *rsim = to_rsim_dev(ibdev);

	if (port_num != RSIM_PORT || index != 0)
		return -EINVAL;
	gid->global.subnet_prefix = cpu_to_be64(RSIM_GID_PREFIX);
	gid->global.interface_id = rsim->port.guid;
	return 0;
}

/**
 * rsim_port_pkey() - an entry of the port's P_Key table
 * @rsim: device
 * @index: the entry, below pkey_tbl_len
 *
 * Entry 0 is the default partition's full member and the others are 0
 * (not a valid P_Key, so they match nothing), until an SM writes the
 * table (SubnSet(P_KeyTable), mad.c).
 *
 * Context: any.
 * Return: the P_Key.
 */
u16 rsim_port_pkey(const struct rsim_dev *rsim, u16 index)
{
	if (index >= rsim->cfg.limits.pkey_tbl_len)
		return 0;
	return READ_ONCE(rsim->port.pkeys[index]);
}

static int rsim_query_pkey(struct ib_device *ibdev, u32 port_num, u16 index,
			   u16 *pkey)
{
	struct rsim_dev *rsim = to_rsim_dev(ibdev);

	if (port_num != RSIM_PORT || index >= rsim->cfg.limits.pkey_tbl_len)
		return -EINVAL;
	*pkey = rsim_port_pkey(rsim, index);
	return 0;
}

/**
 * rsim_port_set_state_locked() - move the port to a logical and physical
 *	state
 * @port: the port, its lock held
 * @state: IB_PORT_DOWN, _INIT, _ARMED or _ACTIVE
 * @phys_state: IB_PORT_PHYS_STATE_*
 *
 * Context: the port's lock held.
 * Return: the RSIM_PORT_EV_* the change raises, for rsim_port_dispatch().
 */
u32 rsim_port_set_state_locked(struct rsim_port *port,
			       enum ib_port_state state, u8 phys_state)
{
	enum ib_port_state old = port->state;

	lockdep_assert_held(&port->lock);
	port->state = state;
	port->phys_state = phys_state;
	if (old == IB_PORT_ACTIVE && state != IB_PORT_ACTIVE)
		return RSIM_PORT_EV_ERR;
	if (old != IB_PORT_ACTIVE && state == IB_PORT_ACTIVE)
		return RSIM_PORT_EV_ACTIVE;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_port_set_state_locked);

/**
 * rsim_port_state_step() - the PortState a SubnSet(PortInfo) asks for
 * @req: the PortState field of the Set (IB_PORT_NOP: no change)
 * @phys: the port's PortPhysicalState once the Set's applies
 * @state: in: the port's PortState; out: the one it moves to
 *
 * IBA 14.2.5.6: Down retrains a link that is up (the port comes back in
 * Init), Armed only from Init or Armed, Active only from Armed or Active.
 * The CA SMA's rule (mad.c) and the switch SMA's (switch.c).
 *
 * Context: any.
 * Return: false if the step is not allowed (or @req is no state).
 */
bool rsim_port_state_step(u8 req, u8 phys, u8 *state)
{
	switch (req) {
	case IB_PORT_NOP:
		return true;
	case IB_PORT_DOWN:
		if (phys == IB_PORT_PHYS_STATE_LINK_UP)
			*state = IB_PORT_INIT;
		return true;
	case IB_PORT_ARMED:
		if (*state != IB_PORT_INIT && *state != IB_PORT_ARMED)
			return false;
		*state = IB_PORT_ARMED;
		return true;
	case IB_PORT_ACTIVE:
		if (*state != IB_PORT_ARMED && *state != IB_PORT_ACTIVE)
			return false;
		*state = IB_PORT_ACTIVE;
		return true;
	default:
		return false;
	}
}

/**
 * rsim_port_dispatch() - raise the port events a change asked for
 * @rsim: device
 * @events: RSIM_PORT_EV_* flags
 *
 * The core's cache handler updates its copy of the port (state, LID) on
 * these events; the MAD layer and the CM's clients see them.
 *
 * Nothing is raised once the device's unregistration has begun: the
 * reference held while an event is queued orders it before the core's
 * final flush of its event work.
 *
 * Context: process or softirq, without the port's lock (it is taken with
 * BH off to count the events); ib_dispatch_event() defers to a workqueue.
 */
void rsim_port_dispatch(struct rsim_dev *rsim, u32 events)
{
	static const enum ib_event_type type[] = {
		IB_EVENT_PORT_ERR, IB_EVENT_PORT_ACTIVE, IB_EVENT_LID_CHANGE,
		IB_EVENT_SM_CHANGE, IB_EVENT_CLIENT_REREGISTER,
		IB_EVENT_PKEY_CHANGE,
	};
	unsigned int i;

	if (!events || !ib_device_try_get(&rsim->ibdev))
		return;
	for (i = 0; i < ARRAY_SIZE(type); i++) {
		struct ib_event ev = {
			.device = &rsim->ibdev,
			.element.port_num = RSIM_PORT,
			.event = type[i],
		};

		if (!(events & BIT(i)))
			continue;
		spin_lock_bh(&rsim->port.lock);
		rsim->port.events++;
		spin_unlock_bh(&rsim->port.lock);
		ib_dispatch_event(&ev);
	}
	ib_device_put(&rsim->ibdev);
}
EXPORT_SYMBOL_IF_KUNIT(rsim_port_dispatch);

/**
 * rsim_port_set_link() - pull the cable, or plug it back
 * @rsim: device
 * @up: false: the link goes down (PortState Down, PhysState Polling);
 *	true: the link trains and the subnet's master SM activates the
 *	port with the LID it had
 *
 * InfiniBand: the subnet's SM election is held again (subnet.c): a master
 * whose link went down hands over to another port.
 *
 * Context: process or softirq.
 */
void rsim_port_set_link(struct rsim_dev *rsim, bool up)
{
	u32 ev;

	spin_lock_bh(&rsim->port.lock);
	ev = rsim_port_set_state_locked(&rsim->port,
					up ? IB_PORT_ACTIVE : IB_PORT_DOWN,
					up ? IB_PORT_PHYS_STATE_LINK_UP :
					     IB_PORT_PHYS_STATE_POLLING);
	spin_unlock_bh(&rsim->port.lock);
	rsim_port_dispatch(rsim, ev);
	if (!rsim_is_roce(rsim))
		rsim_subnet_sweep();
}
EXPORT_SYMBOL_IF_KUNIT(rsim_port_set_link);

/**
 * rsim_port_passes() - does the port carry a packet from this sender?
 * @rsim: device
 * @sender: the sending QP's type
 *
 * The packet leaves and enters the same port. IBA 7.2: a port in Init or
 * Armed sends and takes only subnet management packets (QP0); in Active
 * everything; in Down nothing.
 *
 * Context: any.
 * Return: true if the packet gets through.
 */
bool rsim_port_passes(struct rsim_dev *rsim, enum ib_qp_type sender)
{
	enum ib_port_state st = READ_ONCE(rsim->port.state);

	return st == IB_PORT_ACTIVE ||
	       (sender == IB_QPT_SMI && st != IB_PORT_DOWN &&
		st != IB_PORT_NOP);
}

/**
 * rsim_port_cap_flags() - an InfiniBand port's CapabilityMask
 * @rsim: the device
 *
 * IsSM while the built-in SM serves, or while a process holds the port's
 * issm device open (another SM runs there).
 *
 * Context: any.
 * Return: the IB_PORT_* flags.
 */
u32 rsim_port_cap_flags(struct rsim_dev *rsim)
{
	u32 caps = RSIM_PORT_CAP_FLAGS;

	if (!rsim_fabric_sm_on() && !READ_ONCE(rsim->port.issm))
		caps &= ~IB_PORT_SM;
	return caps;
}

static int rsim_modify_port(struct ib_device *ibdev, u32 port_num, int mask,
			    struct ib_port_modify *props)
{
	struct rsim_dev *rsim = to_rsim_dev(ibdev);

	if (port_num != RSIM_PORT)
		return -EINVAL;
	if (mask & ~(IB_PORT_RESET_QKEY_CNTR | IB_PORT_SHUTDOWN |
		     IB_PORT_INIT_TYPE))
		return -EOPNOTSUPP;
	if (mask & (IB_PORT_SHUTDOWN | IB_PORT_INIT_TYPE))
		return -EOPNOTSUPP;

	spin_lock_bh(&rsim->port.lock);
	if (mask & IB_PORT_RESET_QKEY_CNTR)
		rsim->port.qkey_viol = 0;
	/* opening and closing issm (user_mad.c) */
	if (props->set_port_cap_mask & IB_PORT_SM)
		WRITE_ONCE(rsim->port.issm, true);
	if (props->clr_port_cap_mask & IB_PORT_SM)
		WRITE_ONCE(rsim->port.issm, false);
	spin_unlock_bh(&rsim->port.lock);
	return 0;
}

static enum rdma_link_layer rsim_get_link_layer(struct ib_device *ibdev,
						u32 port_num)
{
	return rsim_is_roce(to_rsim_dev(ibdev)) ? IB_LINK_LAYER_ETHERNET :
						  IB_LINK_LAYER_INFINIBAND;
}

static int rsim_get_port_immutable(struct ib_device *ibdev, u32 port_num,
				   struct ib_port_immutable *immutable)
{
	struct ib_port_attr attr;
	int err;

	err = ib_query_port(ibdev, port_num, &attr);
	if (err)
		return err;

	immutable->pkey_tbl_len = attr.pkey_tbl_len;
	immutable->gid_tbl_len = attr.gid_tbl_len;
	/* RoCE v2 only, as rxe: the GID table holds no RoCE v1 entries */
	immutable->core_cap_flags =
		rsim_is_roce(to_rsim_dev(ibdev)) ?
		RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP : RDMA_CORE_PORT_IBA_IB;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static void rsim_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%llu.%llu.%llu",
		 RSIM_FW_VER >> 48, (RSIM_FW_VER >> 32) & 0xffff,
		 RSIM_FW_VER & 0xffffffff);
}

static void rsim_dealloc_driver(struct ib_device *ibdev)
{
	struct rsim_dev *rsim = to_rsim_dev(ibdev);
	int t;

	/* no packet is routed here any more (before the QPs' workers go) */
	if (rsim_is_roce(rsim) && !list_empty(&rsim->roce_node))
		rsim_roce_del(rsim);
	if (!list_empty(&rsim->subnet_node))
		rsim_subnet_leave(rsim);

	for (t = 0; t < RSIM_RES_NR; t++) {
		int n = rsim_res_count(rsim, t);

		if (n)
			ibdev_err(ibdev, "%d %s object(s) leaked by a client\n",
				  n, rsim_res_name(t));
	}
	if (rsim->mad_pool && rsim_puda_pool_destroy(rsim->mad_pool))
		ibdev_err(ibdev, "MAD buffers still out at teardown\n");
	rsim_debugfs_dev_exit(rsim);
	rsim_fault_fini(rsim);
	rsim_qp_exit(rsim);
	rsim_mr_exit(rsim);
	xa_destroy(&rsim->ah_xa);
	ida_destroy(&rsim->pd_ida);
	if (rsim_is_roce(rsim))
		netdev_put(rsim->cfg.ndev, &rsim->ndev_tracker);
	/* whoever unregistered it, the platform device goes too */
	WRITE_ONCE(rsim->dead, true);
	rsim_dev_reap();
}

/*
 * What InfiniBand drivers show beside the core's attributes, and what
 * libibumad (ibstat's "CA type" and "Hardware version") and
 * ibv_devinfo's board_id read: the ib_device's sysfs group, which the
 * core keeps for drivers that had these before netlink (a new attribute
 * would go there; these are the ones the IB tools look for).
 */
static ssize_t hca_type_show(struct device *device,
			     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", KBUILD_MODNAME);
}
static DEVICE_ATTR_RO(hca_type);

static ssize_t hw_rev_show(struct device *device,
			   struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%x\n", RSIM_HW_VER);
}
static DEVICE_ATTR_RO(hw_rev);

static ssize_t board_id_show(struct device *device,
			     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "RSIM_%04X\n", RSIM_VENDOR_PART_ID);
}
static DEVICE_ATTR_RO(board_id);

static struct attribute *rsim_dev_attrs[] = {
	&dev_attr_hca_type.attr,
	&dev_attr_hw_rev.attr,
	&dev_attr_board_id.attr,
	NULL,
};

static const struct attribute_group rsim_dev_attr_group = {
	.attrs = rsim_dev_attrs,
};

static const struct ib_device_ops rsim_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = RSIM_UVERBS_ABI_VERSION,
	.device_group = &rsim_dev_attr_group,

	.dealloc_driver = rsim_dealloc_driver,
	.get_dev_fw_str = rsim_get_dev_fw_str,
	.get_link_layer = rsim_get_link_layer,
	.get_port_immutable = rsim_get_port_immutable,
	.modify_port = rsim_modify_port,
	.process_mad = rsim_process_mad,
	.query_device = rsim_query_device,
	.query_gid = rsim_query_gid,
	.query_pkey = rsim_query_pkey,
	.query_port = rsim_query_port,
};

/*
 * The pool the device's own MAD receive queue draws from: one GRH slot
 * plus one MAD per buffer, written by the device.
 */
static int rsim_mad_pool_create(struct rsim_dev *rsim)
{
	struct rsim_puda_config cfg = {
		.name = "mad_pool",
		.buf_len = sizeof(struct ib_grh) + IB_MGMT_MAD_SIZE,
		.initial = 32,
		.grow = 32,
		.max = 512,
		.cache = 16,
		.dir = DMA_FROM_DEVICE,
		.debugfs_parent = rsim->debugfs,
	};
	struct rsim_puda_pool *pool;

	pool = rsim_puda_pool_create(rsim->dma_dev, &cfg);
	if (IS_ERR(pool))
		return PTR_ERR(pool);
	rsim->mad_pool = pool;
	return 0;
}

/**
 * rsim_dev_lid() - the LID of the device @id
 * @cfg_lid: the LID its configuration asks for; 0 for @base_lid + @id
 * @base_lid: the LID of rdmasim0, the others' base
 * @id: device number
 * @lid: the LID, on success
 *
 * Unicast LIDs are 1..RSIM_LID_UNICAST_MAX; nothing is truncated to the
 * 16 bits of a LID.
 *
 * Context: Any context.
 * Return: 0; -EINVAL if @cfg_lid, or @base_lid when it is used, is not a
 * unicast LID; -ERANGE if @base_lid + @id is past the last unicast LID.
 */
int rsim_dev_lid(u16 cfg_lid, unsigned int base_lid, u32 id, u16 *lid)
{
	u64 sum;

	if (cfg_lid) {
		if (cfg_lid > RSIM_LID_UNICAST_MAX)
			return -EINVAL;
		*lid = cfg_lid;
		return 0;
	}
	if (!base_lid || base_lid > RSIM_LID_UNICAST_MAX)
		return -EINVAL;
	sum = (u64)base_lid + id;
	if (sum > RSIM_LID_UNICAST_MAX)
		return -ERANGE;
	*lid = sum;
	return 0;
}

/*
 * The port, with the LID rsim_dev_lid() chose (in rsim->cfg.lid); in RoCE
 * mode no LID, and the netdev's carrier and MTU.
 */
static void rsim_port_init(struct rsim_dev *rsim)
{
	struct rsim_port *port = &rsim->port;
	struct net_device *ndev = rsim->cfg.ndev;
	u16 lid = rsim->cfg.lid;

	spin_lock_init(&port->lock);
	port->lid = lid;
	port->sm_lid = lid;
	port->state = IB_PORT_ACTIVE;
	port->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	port->mtu = IB_MTU_4096;
	if (ndev) {
		bool up = netif_running(ndev) && netif_carrier_ok(ndev);

		port->state = up ? IB_PORT_ACTIVE : IB_PORT_DOWN;
		port->phys_state = up ? IB_PORT_PHYS_STATE_LINK_UP :
					IB_PORT_PHYS_STATE_POLLING;
		port->mtu = rsim_roce_mtu(ndev);
	}
	port->subnet_timeout = RSIM_SUBNET_TIMEOUT;
	port->width_enabled = RSIM_PORT_WIDTHS;
	port->speed_enabled = RSIM_PORT_SPEEDS;
	port->speed_ext_enabled = RSIM_PORT_SPEEDS_EXT;
	port->guid = cpu_to_be64(be64_to_cpu(rsim->ibdev.node_guid) + 1);
	port->pkeys[0] = IB_DEFAULT_PKEY_FULL;
}

/**
 * rsim_dev_probe() - create and register the ib_device for @pdev
 * @pdev: platform device "rdmasim.<id>"
 * @cfg: limits and LID
 *
 * Context: Process context.
 * Return: 0 or a negative errno; nothing is left behind on failure.
 */
int rsim_dev_probe(struct platform_device *pdev,
		   const struct rsim_dev_config *cfg)
{
	const struct rsim_limits *lim = &cfg->limits;
	struct rsim_dev *rsim;
	u16 lid;
	int err;

	lid = 0;
	err = cfg->ndev ? 0 : rsim_dev_lid(cfg->lid, rsim_param_base_lid(), pdev->id,
					   &lid);
	if (err) {
		dev_err(&pdev->dev, "no unicast LID: %d\n", err);
		return err;
	}
	if (!lim->max_fast_reg_page_list_len || !lim->pkey_tbl_len ||
	    lim->pkey_tbl_len > RSIM_PKEYS_MAX ||
	    !lim->max_cqe || !lim->max_qp_wr ||
	    lim->max_recv_sge > RSIM_RECV_SGE_CEIL)
		return -EINVAL;

	/*
	 * the mask platform_device_register_full() gave, set again through
	 * the DMA API, which then also decides whether the device's mappings
	 * need syncs (7.x): never asked, they would always seem to, and the
	 * core would refuse ODP, which needs none (compat.h)
	 */
	err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (err)
		return err;
	/*
	 * platform devices carry dma_parms: this cannot fail. No segment
	 * longer than one mapping can be (swiotlb's slots: 256 KiB under
	 * swiotlb=force), or pinning a large user buffer would fail to map
	 */
	dma_set_max_seg_size(&pdev->dev,
			     min_t(size_t, UINT_MAX,
				   dma_max_mapping_size(&pdev->dev)));

	rsim = ib_alloc_device(rsim_dev, ibdev);
	if (!rsim)
		return -ENOMEM;

	rsim->pdev = pdev;
	rsim->id = pdev->id;
	rsim->cfg = *cfg;
	rsim->cfg.lid = lid;
	/* main.c's node holds the function; the device keeps @dma_dev */
	rsim->cfg.dma_pci = NULL;
	if (!rsim->cfg.name[0])
		snprintf(rsim->cfg.name, sizeof(rsim->cfg.name),
			 RSIM_DEV_NAME_FMT, rsim->id);
	INIT_LIST_HEAD(&rsim->roce_node);
	INIT_LIST_HEAD(&rsim->subnet_node);
	rsim_mcast_dev_init(rsim);
	/* dealloc_driver lets go of it */
	if (cfg->ndev)
		netdev_hold(cfg->ndev, &rsim->ndev_tracker, GFP_KERNEL);
	ida_init(&rsim->pd_ida);
	/* user AHs' numbers (usq.c); looked up in process context only */
	xa_init_flags(&rsim->ah_xa, XA_FLAGS_ALLOC1);
	/* XRC SRQs by number; the data path looks them up, BH off */
	xa_init_flags(&rsim->xsrq_xa, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_BH);
	rsim_mr_init(rsim);
	rsim_fault_init(rsim);
	err = rsim_dma_dev_select(rsim, cfg->dma_pci);
	if (err)
		goto err_dealloc;
	err = rsim_qp_init(rsim);
	if (err)
		goto err_dealloc;

	rsim->ibdev.node_type = RDMA_NODE_IB_CA;
	rsim->ibdev.phys_port_cnt = RSIM_NUM_PORTS;
	rsim->ibdev.num_comp_vectors = 1;
	rsim->ibdev.local_dma_lkey = RSIM_LOCAL_DMA_LKEY;
	rsim->ibdev.node_guid = cpu_to_be64(RSIM_GUID_PREFIX |
					    ((u64)rsim->id << 8));
	/* RoCE: the EUI-64 of the netdev's MAC, as rxe and siw */
	if (cfg->ndev)
		addrconf_addr_eui48((u8 *)&rsim->ibdev.node_guid,
				    cfg->ndev->dev_addr);
	rsim->ibdev.dev.parent = &pdev->dev;
	strscpy(rsim->ibdev.node_desc, rsim->cfg.name,
		sizeof(rsim->ibdev.node_desc));
	rsim_port_init(rsim);

	ib_set_device_ops(&rsim->ibdev, &rsim_dev_ops);
	ib_set_device_ops(&rsim->ibdev, &rsim_pd_ops);
	ib_set_device_ops(&rsim->ibdev, &rsim_mr_ops);
	ib_set_device_ops(&rsim->ibdev, &rsim_mw_ops);
	if (RSIM_ODP)
		ib_set_device_ops(&rsim->ibdev, &rsim_odp_ops);
	ib_set_device_ops(&rsim->ibdev, &rsim_xrc_ops);
	ib_set_device_ops(&rsim->ibdev, &rsim_cq_ops);
	ib_set_device_ops(&rsim->ibdev, &rsim_qp_ops);
	ib_set_device_ops(&rsim->ibdev, &rsim_srq_ops);
	/*
	 * User CQs, QPs and SRQs post and poll through the kernel (nothing
	 * is mapped): the core's write() commands for that are off by
	 * default.
	 */
	rsim->ibdev.uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POLL_CQ) |
					BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ) |
					BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
					BIT_ULL(IB_USER_VERBS_CMD_POST_RECV) |
					BIT_ULL(IB_USER_VERBS_CMD_POST_SRQ_RECV);
	rsim_dmah_set_ops(&rsim->ibdev);
	rsim_dm_set_ops(&rsim->ibdev);
	rsim_umap_set_ops(&rsim->ibdev);

	rsim_debugfs_dev_init(rsim);
	err = rsim_mad_pool_create(rsim);
	if (err)
		goto err_dealloc;

	if (cfg->ndev) {
		err = rsim_roce_bind(rsim);
		if (err)
			goto err_dealloc;
		/* the name "rdma link add" gave */
		rsim_mark_name_by_user(&rsim->ibdev);
	} else {
		/* a LID no other port has; the master's SM LID */
		err = rsim_subnet_join(rsim);
		if (err) {
			dev_err(&pdev->dev, "LID 0x%x is taken\n", lid);
			goto err_dealloc;
		}
	}
	/*
	 * Once registered, a RoCE-mode device can be unregistered and freed
	 * by the queued unregistration its netdev's NETDEV_UNREGISTER starts
	 * (roce.c) at any time, before this probe's own unregistration below
	 * has taken its reference: hold the memory until the probe is done
	 * with it (the core fences the two unregistrations; the second finds
	 * nothing to do).
	 */
	get_device(&rsim->ibdev.dev);
	err = ib_register_device(&rsim->ibdev, rsim->cfg.name,
				 rsim->dma_dev);
	if (err)
		goto err_dealloc_put;
	/* the netdev went between the bind and now: nobody else removes it */
	if (cfg->ndev) {
		err = rsim_roce_watch(rsim);
		if (err)
			goto err_unregister;
	}
	platform_set_drvdata(pdev, rsim);
	put_device(&rsim->ibdev.dev);
	return 0;

err_unregister:
	/* dealloc_driver frees rsim at the last put */
	ib_unregister_device(&rsim->ibdev);
	put_device(&rsim->ibdev.dev);
	return err;

err_dealloc_put:
	/* dealloc_driver undoes everything after ib_alloc_device() */
	ib_dealloc_device(&rsim->ibdev);
	put_device(&rsim->ibdev.dev);
	return err;

err_dealloc:
	ib_dealloc_device(&rsim->ibdev);
	return err;
}

/**
 * rsim_dev_remove() - unregister and free the ib_device of @pdev
 * @pdev: platform device
 *
 * Every RDMA client's remove() runs first and releases its objects; the
 * device memory is freed through dealloc_driver before this returns.
 *
 * Context: Process context; may sleep.
 */
void rsim_dev_remove(struct platform_device *pdev)
{
	struct rsim_dev *rsim = platform_get_drvdata(pdev);

	platform_set_drvdata(pdev, NULL);
	/* dealloc_driver frees rsim before this returns */
	ib_unregister_device(&rsim->ibdev);
}
