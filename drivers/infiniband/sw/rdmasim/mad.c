// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: the port's subnet management agent (SMA) and performance
 * management agent (PMA), answered in process_mad.
 *
 * The MAD layer offers the driver every MAD it receives on QP0 and QP1
 * and every directed-route SMP that ends at the port (hop count 0, so
 * "smpquery -D <attr> 0" works without a fabric), and sysfs reads the
 * port counters through it (ports/1/counters/). The values are the ones
 * query_device and query_port report, and the PMA counts what the
 * loopback data path moved. Requests the agents cannot serve get a
 * response with a MAD status (IBA 13.4.7), never silence: a bad class
 * version, an unsupported method, an unknown attribute or an attribute
 * modifier out of range. Responses, traps and other classes are left to
 * the MAD layer's agents. Malformed MADs (truncated; a directed-route
 * request whose HopCount, HopPointer or D bit says it does not end at
 * this SMA) are dropped, as the MAD layer and smi.c drop them.
 *
 * The SMA serves what a CA port answers a subnet manager: SubnGet of
 * NodeDescription, NodeInfo, GUIDInfo, PortInfo, P_KeyTable and SMInfo
 * (the port is its own SM), SubnSet(PortInfo) for the fields IBA
 * 14.2.5.6 lets an SM write, validated as a whole before anything
 * changes, and SubnSet(P_KeyTable) (an SM's partitions). With the
 * built-in SM off (fabric.c), SMInfo is left to another SM on the port.
 * M_Key protection (IBA 14.2.4) guards every SMP: an SMP whose M_Key
 * does not match is dropped as the protection level says, counted in
 * M_KeyViolations, and starts the M_Key lease.
 */

#include <linux/jiffies.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_pma.h>
#include <rdma/ib_smi.h>

#include "rdmasim.h"

#define RSIM_PKEYS_PER_BLOCK	32
#define RSIM_GUIDS_PER_BLOCK	8

/* SMInfo (IBA 14.2.5.13): GUID, SM_Key, ActCount, Priority:4 SMState:4 */
#define RSIM_SMI_GUID		0
#define RSIM_SMI_ACT_COUNT	16
#define RSIM_SMI_PRIO_STATE	20
#define RSIM_SM_STATE_STANDBY	2
#define RSIM_SM_STATE_MASTER	3

/* PortInfo past struct ib_port_info (IBA 14.2.5.6) */
#define RSIM_PI_CAP_MASK2	60	/* CapabilityMask2, 16 bits */
#define RSIM_PI_SPEED_EXT	62	/* LinkSpeedExtActive:4, Supported:4 */
#define RSIM_PI_SPEED_EXT_EN	63	/* resv:3, LinkSpeedExtEnabled:5 */
#define RSIM_SPEED_EXT_EDR	2	/* 25.78125 Gb/s */
#define RSIM_SPEED_EXT_FDR	1	/* 14.0625 Gb/s */

/* the PMA's attributes start after 40 reserved bytes (struct ib_pma_mad) */
#define RSIM_PMA_DATA(mad)	(((struct ib_pma_mad *)(mad))->data)

static int rsim_mad_status(struct ib_mad *out, u16 status)
{
	out->mad_hdr.status |= cpu_to_be16(status);
	return IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY;
}

/**
 * rsim_mad_node_info() - NodeInfo (IBA 14.2.5.3) of a device
 * @rsim: the device
 * @data: room for the attribute, 40 bytes, zeroed
 *
 * The SMA's answer and the SA's NodeRecord (sa.c) alike.
 *
 * Context: any.
 */
void rsim_mad_node_info(struct rsim_dev *rsim, void *data)
{
	struct ib_node_info *ni = data;

	ni->base_version = IB_MGMT_BASE_VERSION;
	ni->class_version = 1;
	ni->node_type = RDMA_NODE_IB_CA;
	ni->num_ports = RSIM_NUM_PORTS;
	ni->sys_guid = rsim->ibdev.node_guid;
	ni->node_guid = rsim->ibdev.node_guid;
	ni->port_guid = rsim->port.guid;
	ni->partition_cap = cpu_to_be16(rsim->cfg.limits.pkey_tbl_len);
	ni->vendor_id[0] = (RSIM_VENDOR_ID >> 16) & 0xff;
	ni->vendor_id[1] = (RSIM_VENDOR_ID >> 8) & 0xff;
	ni->vendor_id[2] = RSIM_VENDOR_ID & 0xff;
	ni->device_id = cpu_to_be16(RSIM_VENDOR_PART_ID);
	ni->revision = cpu_to_be32(RSIM_HW_VER);
	ni->local_port_num = RSIM_PORT;
}

/**
 * rsim_mad_port_info() - PortInfo (IBA 14.2.5.6) of a device's port
 * @rsim: the device
 * @data: room for the attribute, 64 bytes, zeroed
 * @show_mkey: the requester may read the M_Key
 *
 * The SMA's answer and the SA's PortInfoRecord (sa.c) alike.
 *
 * Context: process or softirq; takes the port's lock with BH off.
 */
void rsim_mad_port_info(struct rsim_dev *rsim, void *data, bool show_mkey)
{
	struct ib_port_info *pi = data;
	u8 *raw = data;
	struct rsim_port *port = &rsim->port;
	struct rsim_port p;

	spin_lock_bh(&port->lock);
	p = *port;
	spin_unlock_bh(&port->lock);

	if (show_mkey)
		pi->mkey = p.mkey;
	pi->gid_prefix = cpu_to_be64(RSIM_GID_PREFIX);
	pi->lid = cpu_to_be16(p.lid);
	pi->sm_lid = cpu_to_be16(p.sm_lid);
	pi->cap_mask = cpu_to_be32(rsim_port_cap_flags(rsim));
	pi->mkey_lease_period = cpu_to_be16(p.mkey_lease);
	pi->local_port_num = RSIM_PORT;
	pi->link_width_enabled = p.width_enabled;
	pi->link_width_supported = RSIM_PORT_WIDTHS;
	pi->link_width_active = IB_WIDTH_4X;
	pi->linkspeed_portstate = RSIM_PORT_SPEEDS << 4 | p.state;
	/* LinkDownDefaultState: Polling */
	pi->portphysstate_linkdown = p.phys_state << 4 |
				     IB_PORT_PHYS_STATE_POLLING;
	pi->mkeyprot_resv_lmc = p.mkey_prot << 6;	/* LMC 0 */
	pi->linkspeedactive_enabled = 1 << 4 | p.speed_enabled;
	pi->neighbormtu_mastersmsl = p.mtu << 4 | p.sm_sl;
	pi->vlcap_inittype = 1 << 4;		/* VL0 only */
	pi->inittypereply_mtucap = IB_MTU_4096;
	pi->operationalvl_pei_peo_fpi_fpo = 1 << 4;
	pi->mkey_violations = cpu_to_be16(p.mkey_viol);
	pi->pkey_violations = cpu_to_be16(min_t(u32, p.pkey_viol, U16_MAX));
	pi->qkey_violations = cpu_to_be16(min_t(u32, p.qkey_viol, U16_MAX));
	pi->guid_cap = RSIM_GUIDS_PER_BLOCK;
	pi->clientrereg_resv_subnetto = p.subnet_timeout;
	pi->resv_resptimevalue = 18;
	raw[RSIM_PI_SPEED_EXT] = RSIM_SPEED_EXT_EDR << 4 | RSIM_PORT_SPEEDS_EXT;
	raw[RSIM_PI_SPEED_EXT_EN] = p.speed_ext_enabled;
}

/*
 * SMInfo (IBA 14.2.5.13): the device's SM, the subnet's master or standby
 * (subnet.c's election)
 */
static void rsim_sma_sm_info(struct rsim_dev *rsim, struct ib_smp *smp)
{
	bool master;
	u32 act;

	spin_lock_bh(&rsim->port.lock);
	act = rsim->port.sm_act;
	master = rsim->port.sm_master;
	spin_unlock_bh(&rsim->port.lock);
	memcpy(&smp->data[RSIM_SMI_GUID], &rsim->port.guid,
	       sizeof(rsim->port.guid));
	/* SM_Key stays 0: nobody authenticates to this SM */
	*(__be32 *)&smp->data[RSIM_SMI_ACT_COUNT] = cpu_to_be32(act);
	smp->data[RSIM_SMI_PRIO_STATE] = master ? RSIM_SM_STATE_MASTER :
						  RSIM_SM_STATE_STANDBY;
}

/*
 * PortInfo's attribute modifier: the port number, 0 naming the port the
 * SMP arrived on; bit 31 asks for the extended speed fields, which are
 * always there.
 */
static bool rsim_sma_port_mod(u32 mod)
{
	mod &= ~BIT(31);
	return mod == 0 || mod == RSIM_PORT;
}

/* SubnGet(): IBA 14.2.5; returns an IB_MGMT_MAD_STATUS_* */
static u16 rsim_sma_get(struct rsim_dev *rsim, struct ib_smp *smp,
			bool show_mkey)
{
	u32 mod = be32_to_cpu(smp->attr_mod);
	u16 npkeys = rsim->cfg.limits.pkey_tbl_len;
	__be16 *pkeys;
	u32 i;

	switch (smp->attr_id) {
	case IB_SMP_ATTR_NODE_DESC:
		memcpy(smp->data, rsim->ibdev.node_desc, IB_DEVICE_NODE_DESC_MAX);
		break;
	case IB_SMP_ATTR_NODE_INFO:
		rsim_mad_node_info(rsim, smp->data);
		break;
	case IB_SMP_ATTR_GUID_INFO:
		/* one GUID (GUIDCap 8: one block of 8, the rest unassigned) */
		if (mod != 0)
			return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
		memcpy(smp->data, &rsim->port.guid, sizeof(rsim->port.guid));
		break;
	case IB_SMP_ATTR_PORT_INFO:
		if (!rsim_sma_port_mod(mod))
			return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
		rsim_mad_port_info(rsim, smp->data, show_mkey);
		break;
	case IB_SMP_ATTR_SM_INFO:
		if (mod != 0)
			return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
		rsim_sma_sm_info(rsim, smp);
		break;
	case IB_SMP_ATTR_PKEY_TABLE:
		/* block number in the low 16 bits; a CA ignores the port */
		if ((mod & 0xffff) * RSIM_PKEYS_PER_BLOCK >= npkeys)
			return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
		pkeys = (__be16 *)smp->data;
		for (i = 0; i < RSIM_PKEYS_PER_BLOCK; i++) {
			u32 index = (mod & 0xffff) * RSIM_PKEYS_PER_BLOCK + i;

			pkeys[i] = cpu_to_be16(rsim_port_pkey(rsim, index));
		}
		break;
	default:
		return IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB;
	}
	return IB_MGMT_MAD_STATUS_SUCCESS;
}

/*
 * An enable field: 0 (or @nop) leaves it, @all sets what is supported,
 * anything else must be a non-empty subset of @supported.
 */
static bool rsim_pi_enable(u8 val, u8 nop, u8 all, u8 supported, u8 *out)
{
	if (val == 0 || val == nop)
		return true;
	if (val == all) {
		*out = supported;
		return true;
	}
	if (val & ~supported)
		return false;
	*out = val;
	return true;
}

/*
 * SubnSet(PortInfo), IBA 14.2.5.6: the fields an SM may write. Every
 * field is checked before any changes: a bad one leaves the port as it
 * was and answers INVALID_ATTRIB_VALUE. Read-only fields are ignored.
 * The GID prefix is fixed (fe80::/64): another value is refused, as are
 * an LMC above 0 (one LID per port) and more than one operational VL.
 */
static u16 rsim_sma_set_port_info(struct rsim_dev *rsim, struct ib_smp *smp)
{
	const struct ib_port_info *pi = (const struct ib_port_info *)smp->data;
	struct rsim_port *port = &rsim->port;
	u16 lid = be16_to_cpu(pi->lid), sm_lid = be16_to_cpu(pi->sm_lid);
	u8 state = pi->linkspeed_portstate & 0xf;
	u8 phys = pi->portphysstate_linkdown >> 4;
	u8 mtu = pi->neighbormtu_mastersmsl >> 4;
	u8 vls = pi->operationalvl_pei_peo_fpi_fpo >> 4;
	u8 new_state;
	u8 new_phys, old_phys, width, speed, speed_ext;
	u32 ev = 0;

	if (!rsim_sma_port_mod(be32_to_cpu(smp->attr_mod)))
		return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;

	/* no two ports of the subnet with one LID (subnet.c) */
	rsim_subnet_lock_bh();
	spin_lock_bh(&port->lock);
	new_state = port->state;
	new_phys = port->phys_state;
	width = port->width_enabled;
	speed = port->speed_enabled;
	speed_ext = port->speed_ext_enabled;
	if (!lid || lid > RSIM_LID_UNICAST_MAX ||
	    !sm_lid || sm_lid > RSIM_LID_UNICAST_MAX ||
	    be64_to_cpu(pi->gid_prefix) != RSIM_GID_PREFIX ||
	    (pi->mkeyprot_resv_lmc & 7) || vls > 1 ||
	    mtu < IB_MTU_256 || mtu > IB_MTU_4096 ||
	    !rsim_pi_enable(pi->link_width_enabled, 0, 0xff,
			    RSIM_PORT_WIDTHS, &width) ||
	    !rsim_pi_enable(pi->linkspeedactive_enabled & 0xf, 0, 0xf,
			    RSIM_PORT_SPEEDS, &speed) ||
	    !rsim_pi_enable(smp->data[RSIM_PI_SPEED_EXT_EN] & 0x1f, 0x1e,
			    0x1f, RSIM_PORT_SPEEDS_EXT, &speed_ext) ||
	    (!rsim_is_roce(rsim) && rsim_subnet_lid_used(rsim, lid)))
		goto invalid;

	/* PortPhysicalState: 0 no change, Polling enables, Disabled */
	switch (phys) {
	case 0:
		break;
	case IB_PORT_PHYS_STATE_POLLING:
		/* the link trains at once: the port comes up in Init */
		if (new_phys == IB_PORT_PHYS_STATE_DISABLED) {
			new_phys = IB_PORT_PHYS_STATE_LINK_UP;
			new_state = IB_PORT_INIT;
		}
		break;
	case IB_PORT_PHYS_STATE_DISABLED:
		new_phys = IB_PORT_PHYS_STATE_DISABLED;
		new_state = IB_PORT_DOWN;
		break;
	default:
		goto invalid;
	}
	if (!rsim_port_state_step(state, new_phys, &new_state))
		goto invalid;

	if (lid != port->lid)
		ev |= RSIM_PORT_EV_LID;
	if (sm_lid != port->sm_lid ||
	    (pi->neighbormtu_mastersmsl & 0xf) != port->sm_sl)
		ev |= RSIM_PORT_EV_SM;
	if (pi->clientrereg_resv_subnetto & 0x80)
		ev |= RSIM_PORT_EV_REREG;
	port->lid = lid;
	port->sm_lid = sm_lid;
	port->sm_sl = pi->neighbormtu_mastersmsl & 0xf;
	port->mtu = mtu;
	port->subnet_timeout = pi->clientrereg_resv_subnetto & 0x1f;
	port->width_enabled = width;
	port->speed_enabled = speed;
	port->speed_ext_enabled = speed_ext;
	port->mkey = pi->mkey;
	port->mkey_lease = be16_to_cpu(pi->mkey_lease_period);
	port->mkey_prot = pi->mkeyprot_resv_lmc >> 6;
	old_phys = port->phys_state;
	ev |= rsim_port_set_state_locked(port, new_state, new_phys);
	new_phys = port->phys_state;
	spin_unlock_bh(&port->lock);
	/*
	 * what the election looks at changed (the LID, the link up or not):
	 * the election again, the other ports' SM LIDs after it (this one's
	 * is what the SMP wrote)
	 */
	if (!rsim_is_roce(rsim) &&
	    ((ev & RSIM_PORT_EV_LID) || new_phys != old_phys))
		rsim_subnet_sweep_locked(rsim);
	rsim_subnet_unlock_bh();
	rsim_port_dispatch(rsim, ev);
	/* a link of the fabric retrains: its far end comes back in Init */
	if (state == IB_PORT_DOWN && new_phys == IB_PORT_PHYS_STATE_LINK_UP &&
	    rsim_fabric_member(rsim))
		rsim_fabric_ca_retrain(rsim);
	return IB_MGMT_MAD_STATUS_SUCCESS;

invalid:
	spin_unlock_bh(&port->lock);
	rsim_subnet_unlock_bh();
	return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
}

/*
 * SubnSet(P_KeyTable), IBA 14.2.5.7: a block of 32 entries (the low 16
 * bits of the modifier; a CA ignores the port in the high ones); entries
 * past the table's length are ignored. The core rereads the table at the
 * PKEY_CHANGE event.
 */
static u16 rsim_sma_set_pkeys(struct rsim_dev *rsim, struct ib_smp *smp)
{
	u32 block = be32_to_cpu(smp->attr_mod) & 0xffff;
	u16 npkeys = rsim->cfg.limits.pkey_tbl_len;
	const __be16 *pkeys = (const __be16 *)smp->data;
	bool changed = false;
	u32 i;

	if (block * RSIM_PKEYS_PER_BLOCK >= npkeys)
		return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
	spin_lock_bh(&rsim->port.lock);
	for (i = 0; i < RSIM_PKEYS_PER_BLOCK; i++) {
		u32 index = block * RSIM_PKEYS_PER_BLOCK + i;
		u16 pkey = be16_to_cpu(pkeys[i]);

		if (index >= npkeys)
			break;
		if (rsim->port.pkeys[index] != pkey) {
			WRITE_ONCE(rsim->port.pkeys[index], pkey);
			changed = true;
		}
	}
	spin_unlock_bh(&rsim->port.lock);
	if (changed)
		rsim_port_dispatch(rsim, RSIM_PORT_EV_PKEY);
	return IB_MGMT_MAD_STATUS_SUCCESS;
}

/*
 * M_Key check (IBA 14.2.4.3, table 134), for every SMP the SMA takes.
 * Returns true if the SMP may go on; *@show_mkey says whether a Get may
 * read the M_Key. A mismatch fails a Set or TrapRepress at every
 * protection level and a Get from level 2: the failure is counted, starts
 * the lease (when the lease period is not 0) and the SMP is dropped. A
 * lease that ran out clears the protection bits. A matching M_Key stops
 * the lease.
 */
static bool rsim_sma_mkey_ok(struct rsim_dev *rsim, const struct ib_smp *smp,
			     int flags, bool *show_mkey)
{
	struct rsim_port *port = &rsim->port;
	bool ok = true, match;

	spin_lock_bh(&port->lock);
	if (port->mkey_lease_running &&
	    time_after_eq(jiffies, port->mkey_deadline)) {
		port->mkey_lease_running = false;
		port->mkey_prot = 0;
	}
	match = !port->mkey || smp->mkey == port->mkey ||
		(flags & IB_MAD_IGNORE_MKEY);
	if (match) {
		port->mkey_lease_running = false;
		*show_mkey = true;
		goto out;
	}
	*show_mkey = port->mkey_prot == 0;
	if (smp->method == IB_MGMT_METHOD_GET && port->mkey_prot < 2)
		goto out;
	ok = false;
	if (port->mkey_viol < U16_MAX)
		port->mkey_viol++;
	if (port->mkey_lease && !port->mkey_lease_running) {
		port->mkey_deadline = jiffies + port->mkey_lease * HZ;
		port->mkey_lease_running = true;
	}
out:
	spin_unlock_bh(&port->lock);
	return ok;
}

static int rsim_sma(struct rsim_dev *rsim, int flags, const struct ib_mad *in,
		    struct ib_mad *out)
{
	struct ib_smp *smp = (struct ib_smp *)out;
	bool show_mkey;
	u16 status;

	if (!rsim_sma_mkey_ok(rsim, (const struct ib_smp *)in, flags,
			      &show_mkey))
		return IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_CONSUMED;
	spin_lock_bh(&rsim->port.lock);
	rsim->port.sm_act++;
	spin_unlock_bh(&rsim->port.lock);

	memcpy(out, in, sizeof(*out));
	memset(smp->data, 0, sizeof(smp->data));
	smp->method = IB_MGMT_METHOD_GET_RESP;
	smp->status = 0;
	if (smp->mgmt_class == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE)
		smp->status |= IB_SMP_DIRECTION;

	if (in->mad_hdr.class_version != 1)
		return rsim_mad_status(out, IB_MGMT_MAD_STATUS_BAD_VERSION);
	switch (in->mad_hdr.method) {
	case IB_MGMT_METHOD_GET:
		status = rsim_sma_get(rsim, smp, show_mkey);
		break;
	case IB_MGMT_METHOD_SET:
		if (in->mad_hdr.attr_id == IB_SMP_ATTR_PKEY_TABLE) {
			/* the request's table, then the port's as it now is */
			memcpy(smp->data, ((const struct ib_smp *)in)->data,
			       sizeof(smp->data));
			status = rsim_sma_set_pkeys(rsim, smp);
			memset(smp->data, 0, sizeof(smp->data));
			if (!status)
				status = rsim_sma_get(rsim, smp, show_mkey);
			break;
		}
		if (in->mad_hdr.attr_id != IB_SMP_ATTR_PORT_INFO) {
			status = IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB;
			break;
		}
		/* the request's PortInfo, then the port's as it now is */
		memcpy(smp->data, ((const struct ib_smp *)in)->data,
		       sizeof(smp->data));
		status = rsim_sma_set_port_info(rsim, smp);
		memset(smp->data, 0, sizeof(smp->data));
		rsim_mad_port_info(rsim, smp->data, true);
		break;
	default:
		status = IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD;
		break;
	}
	return rsim_mad_status(out, status);
}

static void rsim_pma_class_port_info(struct ib_mad *out)
{
	struct ib_class_port_info *cpi =
		(struct ib_class_port_info *)RSIM_PMA_DATA(out);

	cpi->base_version = IB_MGMT_BASE_VERSION;
	cpi->class_version = 1;
	/* PortCountersExtended with all eight counters */
	cpi->capability_mask = IB_PMA_CLASS_CAP_EXT_WIDTH;
	cpi->cap_mask2_resp_time = cpu_to_be32(18);
}

static __be32 rsim_pma_sat32(u64 v)
{
	return cpu_to_be32(min_t(u64, v, U32_MAX));
}

/*
 * PortCounters / PortCountersExtended: read, or (Set) clear the counters
 * CounterSelect names and read. Data counters count 4-octet words.
 */
static u16 rsim_pma_counters(struct rsim_dev *rsim, struct ib_mad *out,
			     bool ext, bool set)
{
	struct rsim_port_counters *c = &rsim->dp.port;
	struct ib_pma_portcounters_ext *pcx = (void *)RSIM_PMA_DATA(out);
	struct ib_pma_portcounters *pc = (void *)RSIM_PMA_DATA(out);
	u8 port_select = ext ? pcx->port_select : pc->port_select;
	__be16 sel = ext ? pcx->counter_select : pc->counter_select;
	struct rsim_port_counters now;

	/* 0xff: all ports, which is the one */
	if (port_select != RSIM_PORT && port_select != 0xff)
		return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;

	spin_lock_bh(&rsim->stats_lock);
	if (set && ext) {
		if (sel & IB_PMA_SELX_PORT_XMIT_DATA)
			c->xmit_data = 0;
		if (sel & IB_PMA_SELX_PORT_RCV_DATA)
			c->rcv_data = 0;
		if (sel & (IB_PMA_SELX_PORT_XMIT_PACKETS |
			   IB_PMA_SELX_PORT_UNI_XMIT_PACKETS))
			c->xmit_pkts = 0;
		if (sel & (IB_PMA_SELX_PORT_RCV_PACKETS |
			   IB_PMA_SELX_PORT_UNI_RCV_PACKETS))
			c->rcv_pkts = 0;
	} else if (set) {
		if (sel & IB_PMA_SEL_PORT_XMIT_DATA)
			c->xmit_data = 0;
		if (sel & IB_PMA_SEL_PORT_RCV_DATA)
			c->rcv_data = 0;
		if (sel & IB_PMA_SEL_PORT_XMIT_PACKETS)
			c->xmit_pkts = 0;
		if (sel & IB_PMA_SEL_PORT_RCV_PACKETS)
			c->rcv_pkts = 0;
	}
	now = *c;
	spin_unlock_bh(&rsim->stats_lock);

	memset(RSIM_PMA_DATA(out), 0, sizeof_field(struct ib_pma_mad, data));
	if (ext) {
		pcx->port_select = port_select;
		pcx->counter_select = sel;
		pcx->port_xmit_data = cpu_to_be64(now.xmit_data / 4);
		pcx->port_rcv_data = cpu_to_be64(now.rcv_data / 4);
		pcx->port_xmit_packets = cpu_to_be64(now.xmit_pkts);
		pcx->port_rcv_packets = cpu_to_be64(now.rcv_pkts);
		/* loopback traffic is all unicast */
		pcx->port_unicast_xmit_packets = cpu_to_be64(now.xmit_pkts);
		pcx->port_unicast_rcv_packets = cpu_to_be64(now.rcv_pkts);
	} else {
		pc->port_select = port_select;
		pc->counter_select = sel;
		pc->port_xmit_data = rsim_pma_sat32(now.xmit_data / 4);
		pc->port_rcv_data = rsim_pma_sat32(now.rcv_data / 4);
		pc->port_xmit_packets = rsim_pma_sat32(now.xmit_pkts);
		pc->port_rcv_packets = rsim_pma_sat32(now.rcv_pkts);
	}
	return IB_MGMT_MAD_STATUS_SUCCESS;
}

static int rsim_pma(struct rsim_dev *rsim, const struct ib_mad *in,
		    struct ib_mad *out)
{
	bool set = in->mad_hdr.method == IB_MGMT_METHOD_SET;
	u16 status;

	memcpy(out, in, sizeof(*out));
	out->mad_hdr.method = IB_MGMT_METHOD_GET_RESP;
	out->mad_hdr.status = 0;

	if (in->mad_hdr.class_version != 1)
		return rsim_mad_status(out, IB_MGMT_MAD_STATUS_BAD_VERSION);
	if (in->mad_hdr.method != IB_MGMT_METHOD_GET && !set)
		return rsim_mad_status(out,
				       IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD);

	switch (in->mad_hdr.attr_id) {
	case IB_PMA_CLASS_PORT_INFO:
		if (set) {
			status = IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB;
			break;
		}
		memset(RSIM_PMA_DATA(out), 0,
		       sizeof_field(struct ib_pma_mad, data));
		rsim_pma_class_port_info(out);
		status = IB_MGMT_MAD_STATUS_SUCCESS;
		break;
	case IB_PMA_PORT_COUNTERS:
		status = rsim_pma_counters(rsim, out, false, set);
		break;
	case IB_PMA_PORT_COUNTERS_EXT:
		status = rsim_pma_counters(rsim, out, true, set);
		break;
	default:
		status = IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB;
		break;
	}
	return rsim_mad_status(out, status);
}

/*
 * MADs no agent here may answer, dropped (IB_MAD_RESULT_FAILURE: no
 * response, and none from the MAD layer's generate_unmatched_resp(); its
 * agents still see the MAD). The MAD layer filters the same way before it
 * calls process_mad (validate_mad(), handle_ib_smi() with smi.c's C14-x
 * checks); these checks hold for every caller.
 */
static bool rsim_mad_drop(const struct ib_mad *in, const struct ib_wc *in_wc)
{
	const struct ib_smp *smp = (const struct ib_smp *)in;

	/*
	 * Truncated: a MAD is always 256 bytes (IBA 13.4); a UD receive counts
	 * the GRH's 40 bytes too. Whatever lies past a shorter datagram
	 * in the receive buffer is not the sender's.
	 */
	if (in_wc && in_wc->byte_len < sizeof(struct ib_grh) + sizeof(*in))
		return true;
	if (smp->mgmt_class != IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE)
		return false;
	/* C14-6: HopCount 0 to 63 (smi.c discards the others) */
	if (smp->hop_cnt >= IB_SMP_MAX_PATH_HOPS)
		return true;
	/* a returning request (D set) is for the SM at its end (C14-13:4) */
	if (smp->status & IB_SMP_DIRECTION)
		return true;
	/*
	 * C14-9:4, C14-9:5: the SMA answers at the end of the path, where
	 * HopPointer is HopCount + 1 (smi_check_local_smp()); a CA is never
	 * an intermediate hop (C14-9:2), any other pointer is discarded.
	 */
	return smp->hop_ptr != smp->hop_cnt + 1;
}

/**
 * rsim_process_mad() - the port's SMA and PMA
 * @ibdev: device
 * @flags: IB_MAD_IGNORE_MKEY skips the M_Key check (there is no B_Key)
 * @port: port the MAD arrived on
 * @in_wc: its receive completion, or NULL (local: sysfs, DR to self)
 * @in_grh: its GRH, or NULL
 * @in: the MAD
 * @out: the response, if one is returned
 * @out_size: in: room at @out; out: the response's size
 * @out_pkey_index: P_Key index for the response (OPA only)
 *
 * Context: process (the MAD layer's workqueue, sysfs); does not sleep.
 * Takes the port's lock and, for the PMA, the data path counters' lock
 * with BH off.
 * Return: IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY with a response in
 * @out; IB_MAD_RESULT_SUCCESS alone for MADs that are not the agents' to
 * answer (responses, traps, other classes); IB_MAD_RESULT_FAILURE for
 * MADs that are not InfiniBand MADs for this port, @out too small, and
 * MADs dropped as malformed (truncated; a directed-route request with a
 * bad HopCount or HopPointer or the D bit set).
 */
int rsim_process_mad(struct ib_device *ibdev, int flags, u32 port,
		     const struct ib_wc *in_wc, const struct ib_grh *in_grh,
		     const struct ib_mad *in, struct ib_mad *out,
		     size_t *out_size, u16 *out_pkey_index)
{
	struct rsim_dev *rsim = to_rsim_dev(ibdev);
	const struct ib_mad_hdr *hdr = &in->mad_hdr;

	if (port != RSIM_PORT || *out_size < sizeof(*out) ||
	    hdr->base_version != IB_MGMT_BASE_VERSION)
		return IB_MAD_RESULT_FAILURE;
	/* responses, traps and trap represses are for the agents */
	if (!rsim_mad_method_answered(hdr->method))
		return IB_MAD_RESULT_SUCCESS;
	if (rsim_mad_drop(in, in_wc))
		return IB_MAD_RESULT_FAILURE;

	switch (hdr->mgmt_class) {
	case IB_MGMT_CLASS_SUBN_LID_ROUTED:
	case IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE:
		/* another SM's (opensm on this port, through umad) */
		if (hdr->attr_id == IB_SMP_ATTR_SM_INFO && !rsim_fabric_sm_on())
			return IB_MAD_RESULT_SUCCESS;
		*out_size = sizeof(*out);
		return rsim_sma(rsim, flags, in, out);
	case IB_MGMT_CLASS_PERF_MGMT:
		*out_size = sizeof(*out);
		return rsim_pma(rsim, in, out);
	default:
		return IB_MAD_RESULT_SUCCESS;
	}
}
