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
 */

#include <rdma/ib_mad.h>
#include <rdma/ib_pma.h>
#include <rdma/ib_smi.h>

#include "rdmasim.h"

#define RSIM_PKEYS_PER_BLOCK	32
#define RSIM_GUIDS_PER_BLOCK	8

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

static void rsim_sma_node_info(struct rsim_dev *rsim, struct ib_smp *smp)
{
	struct ib_node_info *ni = (struct ib_node_info *)smp->data;

	ni->base_version = IB_MGMT_BASE_VERSION;
	ni->class_version = 1;
	ni->node_type = RDMA_NODE_IB_CA;
	ni->num_ports = RSIM_NUM_PORTS;
	ni->sys_guid = rsim->ibdev.node_guid;
	ni->node_guid = rsim->ibdev.node_guid;
	ni->port_guid = rsim->port.guid;
	ni->partition_cap = cpu_to_be16(rsim->cfg.limits.pkey_tbl_len);
	ni->device_id = cpu_to_be16(RSIM_VENDOR_PART_ID);
	ni->revision = cpu_to_be32(RSIM_HW_VER);
	ni->local_port_num = RSIM_PORT;
}

static void rsim_sma_port_info(struct rsim_dev *rsim, struct ib_smp *smp)
{
	struct ib_port_info *pi = (struct ib_port_info *)smp->data;
	struct rsim_port *port = &rsim->port;
	u32 qkey_viol, pkey_viol;
	u16 lid, sm_lid;
	u8 state;

	spin_lock_bh(&port->lock);
	lid = port->lid;
	sm_lid = port->sm_lid;
	state = port->state;
	qkey_viol = port->qkey_viol;
	pkey_viol = port->pkey_viol;
	spin_unlock_bh(&port->lock);

	pi->gid_prefix = cpu_to_be64(RSIM_GID_PREFIX);
	pi->lid = cpu_to_be16(lid);
	pi->sm_lid = cpu_to_be16(sm_lid);
	pi->cap_mask = cpu_to_be32(RSIM_PORT_CAP_FLAGS);
	pi->local_port_num = RSIM_PORT;
	pi->link_width_enabled = IB_WIDTH_4X;
	pi->link_width_supported = IB_WIDTH_1X | IB_WIDTH_4X;
	pi->link_width_active = IB_WIDTH_4X;
	/* LinkSpeedSupported 2.5 Gb/s (the extended speeds below), state */
	pi->linkspeed_portstate = 1 << 4 | state;
	pi->portphysstate_linkdown = (state == IB_PORT_ACTIVE ?
				      IB_PORT_PHYS_STATE_LINK_UP :
				      IB_PORT_PHYS_STATE_POLLING) << 4 |
				     IB_PORT_PHYS_STATE_POLLING;
	pi->mkeyprot_resv_lmc = 0;
	pi->linkspeedactive_enabled = 1 << 4 | 1;
	pi->neighbormtu_mastersmsl = IB_MTU_4096 << 4;
	pi->vlcap_inittype = 1 << 4;		/* VL0 only */
	pi->inittypereply_mtucap = IB_MTU_4096;
	pi->operationalvl_pei_peo_fpi_fpo = 1 << 4;
	pi->pkey_violations = cpu_to_be16(min_t(u32, pkey_viol, U16_MAX));
	pi->qkey_violations = cpu_to_be16(min_t(u32, qkey_viol, U16_MAX));
	pi->guid_cap = RSIM_GUIDS_PER_BLOCK;
	pi->clientrereg_resv_subnetto = RSIM_SUBNET_TIMEOUT;
	pi->resv_resptimevalue = 18;
	smp->data[RSIM_PI_SPEED_EXT] = RSIM_SPEED_EXT_EDR << 4 |
				       (RSIM_SPEED_EXT_FDR |
					RSIM_SPEED_EXT_EDR);
	smp->data[RSIM_PI_SPEED_EXT_EN] = RSIM_SPEED_EXT_FDR |
					  RSIM_SPEED_EXT_EDR;
}

/* SubnGet(): IBA 14.2.5; returns an IB_MGMT_MAD_STATUS_* */
static u16 rsim_sma_get(struct rsim_dev *rsim, struct ib_smp *smp)
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
		rsim_sma_node_info(rsim, smp);
		break;
	case IB_SMP_ATTR_GUID_INFO:
		/* one GUID (GUIDCap 8: one block of 8, the rest unassigned) */
		if (mod != 0)
			return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
		memcpy(smp->data, &rsim->port.guid, sizeof(rsim->port.guid));
		break;
	case IB_SMP_ATTR_PORT_INFO:
		/* 0 names the port the SMP arrived on */
		if (mod != 0 && mod != RSIM_PORT)
			return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
		rsim_sma_port_info(rsim, smp);
		break;
	case IB_SMP_ATTR_PKEY_TABLE:
		/* block number in the low 16 bits; a CA ignores the port */
		if ((mod & 0xffff) * RSIM_PKEYS_PER_BLOCK >= npkeys)
			return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
		pkeys = (__be16 *)smp->data;
		for (i = 0; i < RSIM_PKEYS_PER_BLOCK; i++) {
			u32 index = (mod & 0xffff) * RSIM_PKEYS_PER_BLOCK + i;

			pkeys[i] = cpu_to_be16(index == 0 ? IB_DEFAULT_PKEY_FULL :
					       0);
		}
		break;
	default:
		return IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB;
	}
	return IB_MGMT_MAD_STATUS_SUCCESS;
}

static int rsim_sma(struct rsim_dev *rsim, const struct ib_mad *in,
		    struct ib_mad *out)
{
	struct ib_smp *smp = (struct ib_smp *)out;
	u16 status;

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
		status = rsim_sma_get(rsim, smp);
		break;
	case IB_MGMT_METHOD_SET:
		/* the LID is self-assigned; no SM may change the port */
		status = IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB;
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
 * @flags: IB_MAD_IGNORE_* (there is no M_Key or B_Key to check)
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
	if ((hdr->method & IB_MGMT_METHOD_RESP) ||
	    hdr->method == IB_MGMT_METHOD_TRAP ||
	    hdr->method == IB_MGMT_METHOD_TRAP_REPRESS)
		return IB_MAD_RESULT_SUCCESS;
	if (rsim_mad_drop(in, in_wc))
		return IB_MAD_RESULT_FAILURE;

	switch (hdr->mgmt_class) {
	case IB_MGMT_CLASS_SUBN_LID_ROUTED:
	case IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE:
		*out_size = sizeof(*out);
		return rsim_sma(rsim, in, out);
	case IB_MGMT_CLASS_PERF_MGMT:
		*out_size = sizeof(*out);
		return rsim_pma(rsim, in, out);
	default:
		return IB_MAD_RESULT_SUCCESS;
	}
}
