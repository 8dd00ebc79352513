// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdmasim: a switch's subnet management agent (SMA, IBA 14.2.5) and
 * performance management agent (PMA, IBA 16.1), as functions of the
 * switch's state. fabric.c brings them the SMPs and PMA MADs that end at
 * the switch and carries their answers away.
 *
 * The SMA answers what a subnet manager asks of a switch (opensm's sweep,
 * the diags): Get of NodeInfo, NodeDescription, SwitchInfo, PortInfo of
 * port 0 and of every external port, P_KeyTable of port 0,
 * LinearForwardingTable and MulticastForwardingTable, and Set of
 * SwitchInfo, PortInfo, P_KeyTable and both tables. It always answers a
 * Get or Set, with a MAD status when it cannot serve it (0x000C an
 * attribute it does not have, 0x001C a modifier or value out of range):
 * opensm counts a silent switch as gone. A TrapRepress and responses get
 * no answer.
 *
 * Port 0 is base switch port 0 (IBA 18.2.1): always Active, the only
 * port with a LID; an external port's PortState moves one step at a time
 * (Init, Armed, Active), and a Set of Down retrains its link, so that
 * both ends come back in Init. Every writable PortInfo field is kept and
 * read back. M_Key protection is not enforced on switches.
 */

#include <linux/slab.h>
#include <linux/string.h>
#include <kunit/visibility.h>
#include <rdma/ib_pma.h>

#include "rdmasim.h"

/* PortInfo's bytes (IBA 14.2.5.6, struct ib_port_info) */
#define PI_LID		16
#define PI_SM_LID	18
#define PI_CAP		20
#define PI_LOCAL_PORT	28
#define PI_WIDTH_EN	29
#define PI_WIDTH_SUP	30
#define PI_WIDTH_ACT	31
#define PI_SPEED_STATE	32	/* LinkSpeedSupported:4 PortState:4 */
#define PI_PHYS		33	/* PortPhysicalState:4 LinkDownDefault:4 */
#define PI_LMC		34	/* MKeyProtect:2 resv:3 LMC:3 */
#define PI_SPEED_ACT	35	/* LinkSpeedActive:4 LinkSpeedEnabled:4 */
#define PI_MTU_SMSL	36	/* NeighborMTU:4 MasterSMSL:4 */
#define PI_VLCAP	37	/* VLCap:4 InitType:4 */
#define PI_MTUCAP	41	/* InitTypeReply:4 MTUCap:4 */
#define PI_OPVLS	43	/* OperationalVLs:4 enforcement:4 */
#define PI_GUID_CAP	50
#define PI_REREG	51	/* ClientReregister:1 resv:2 SubnetTimeOut:5 */
#define PI_RESP_TIME	52

/* SwitchInfo's bytes (IBA 14.2.5.4) */
#define SI_LIN_CAP	0
#define SI_MCAST_CAP	4
#define SI_LIN_TOP	6
#define SI_DEF_PORT	8
#define SI_DEF_MC_PRI	9
#define SI_DEF_MC_NOT	10
#define SI_LIFE_STATE	11	/* LifeTimeValue:5 PortStateChange:1 ... */
#define SI_PSC		0x04
#define SI_MCAST_TOP	18

#define PI_SPEED_EXT	62	/* LinkSpeedExtActive:4 Supported:4 */
#define PI_SPEED_EXT_EN	63	/* resv:3 LinkSpeedExtEnabled:5 */

/* port 0's CapabilityMask: IsTrapSupported, IsExtendedSpeedsSupported */
#define RSIM_SW_CAP	(0x00000008 | IB_PORT_EXTENDED_SPEEDS_SUP)
#define RSIM_SW_WIDTHS	(IB_WIDTH_1X | IB_WIDTH_4X)
#define RSIM_SW_SPEEDS	1	/* 2.5 Gb/s */
#define RSIM_SW_VLCAP	1	/* VL0 only, as the CAs */
/* the CAs' extended speeds: 14.0625 and 25.78125 Gb/s, the latter active */
#define RSIM_SW_SPEEDS_EXT	3
#define RSIM_SW_SPEED_EXT_EDR	2
#define RSIM_SW_LIFE	0x12	/* LifeTimeValue, opensm's default */

#define LFT_BLOCK	64
#define MFT_BLOCK	32
#define MFT_POS_PORTS	16
#define PKEY_BLOCK	32

/**
 * rsim_sw_alloc() - a switch with no links
 * @name: its NodeDescription
 * @nports: external ports, 1 to RSIM_SW_PORTS_MAX
 * @index: its number in the fabric (in its GUID)
 *
 * Every LFT and MFT entry is empty (0xff, no port), port 0 is Active
 * with no LID, the external ports are Down (Polling) until a link joins
 * them.
 *
 * Context: process.
 * Return: the switch, or NULL.
 */
struct rsim_switch *rsim_sw_alloc(const char *name, u8 nports, u32 index)
{
	struct rsim_switch *sw;
	u32 p;

	sw = kzalloc(struct_size(sw, port, nports + 1), GFP_KERNEL);
	if (!sw)
		return NULL;
	sw->lft = kvmalloc(RSIM_SW_LFT_CAP, GFP_KERNEL);
	sw->mft = kvcalloc(RSIM_SW_MFT_CAP, sizeof(*sw->mft), GFP_KERNEL);
	if (!sw->lft || !sw->mft) {
		rsim_sw_free(sw);
		return NULL;
	}
	memset(sw->lft, 0xff, RSIM_SW_LFT_CAP);
	spin_lock_init(&sw->lock);
	INIT_LIST_HEAD(&sw->node);
	sw->index = index;
	sw->guid = cpu_to_be64(RSIM_SW_GUID_PREFIX | ((u64)index << 8));
	strscpy_pad(sw->name, name, sizeof(sw->name));
	sw->nports = nports;
	sw->life = RSIM_SW_LIFE;
	sw->pkeys[0] = cpu_to_be16(IB_DEFAULT_PKEY_FULL);
	for (p = 0; p <= nports; p++) {
		struct rsim_sw_port *sp = &sw->port[p];
		u8 *pi = sp->pi;

		sp->state = p ? IB_PORT_DOWN : IB_PORT_ACTIVE;
		sp->phys = p ? IB_PORT_PHYS_STATE_POLLING :
			       IB_PORT_PHYS_STATE_LINK_UP;
		*(__be64 *)&pi[8] = cpu_to_be64(RSIM_GID_PREFIX);
		pi[PI_WIDTH_EN] = RSIM_SW_WIDTHS;
		pi[PI_PHYS] = IB_PORT_PHYS_STATE_POLLING;  /* LinkDownDefault */
		pi[PI_SPEED_ACT] = RSIM_SW_SPEEDS;
		pi[PI_SPEED_EXT_EN] = RSIM_SW_SPEEDS_EXT;
		/* what opensm computes for every link, so it bounces none */
		pi[PI_MTU_SMSL] = IB_MTU_4096 << 4;
		pi[PI_OPVLS] = RSIM_SW_VLCAP << 4;
	}
	return sw;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_sw_alloc);

/**
 * rsim_sw_free() - free a switch no walk can reach any more
 * @sw: the switch, or NULL
 *
 * Context: process, after an RCU grace period since it left the fabric.
 */
void rsim_sw_free(struct rsim_switch *sw)
{
	if (!sw)
		return;
	kvfree(sw->lft);
	kvfree(sw->mft);
	kfree(sw);
}
EXPORT_SYMBOL_IF_KUNIT(rsim_sw_free);

/**
 * rsim_sw_port_link() - a link joined an external port, or left it
 * @sw: the switch
 * @port: the port, 1 to @sw->nports
 * @up: true: the link trained (Init, LinkUp); false: it is gone (Down,
 *	Polling)
 *
 * Sets PortStateChange, as a switch does when a port's state changes
 * other than by a Set.
 *
 * Context: process or softirq; takes the switch's lock with BH off.
 */
void rsim_sw_port_link(struct rsim_switch *sw, u8 port, bool up)
{
	struct rsim_sw_port *sp = &sw->port[port];

	spin_lock_bh(&sw->lock);
	if (up && sp->phys != IB_PORT_PHYS_STATE_DISABLED) {
		WRITE_ONCE(sp->state, IB_PORT_INIT);
		WRITE_ONCE(sp->phys, IB_PORT_PHYS_STATE_LINK_UP);
	} else if (!up) {
		WRITE_ONCE(sp->state, IB_PORT_DOWN);
		if (sp->phys != IB_PORT_PHYS_STATE_DISABLED)
			WRITE_ONCE(sp->phys, IB_PORT_PHYS_STATE_POLLING);
	}
	sw->psc = true;
	spin_unlock_bh(&sw->lock);
}

/**
 * rsim_sw_port_up() - does a port carry a packet out of the switch?
 * @sw: the switch
 * @port: the port, 0 to @sw->nports
 * @smp: the packet is an SMP (VL15), which crosses a port in Init or
 *	Armed; anything else needs Active
 *
 * Context: any; reads the state without the lock.
 * Return: true if it does.
 */
bool rsim_sw_port_up(struct rsim_switch *sw, u8 port, bool smp)
{
	u8 st = READ_ONCE(sw->port[port].state);

	if (READ_ONCE(sw->port[port].phys) != IB_PORT_PHYS_STATE_LINK_UP)
		return false;
	return st == IB_PORT_ACTIVE || (smp && st >= IB_PORT_INIT);
}

/**
 * rsim_sw_lid() - the switch's LID (port 0's)
 * @sw: the switch
 *
 * Context: any.
 * Return: the LID, 0 before a subnet manager gave it one.
 */
u16 rsim_sw_lid(struct rsim_switch *sw)
{
	return be16_to_cpu(READ_ONCE(*(__be16 *)&sw->port[0].pi[PI_LID]));
}
EXPORT_SYMBOL_IF_KUNIT(rsim_sw_lid);

/**
 * rsim_sw_lft() - the LFT's output port for a LID
 * @sw: the switch
 * @dlid: a unicast LID
 *
 * Context: any; without the lock (one byte).
 * Return: the port, or 0xff: none (above LinearFDBTop too).
 */
u8 rsim_sw_lft(struct rsim_switch *sw, u16 dlid)
{
	if (dlid >= RSIM_SW_LFT_CAP || dlid > READ_ONCE(sw->lin_top))
		return 0xff;
	return READ_ONCE(sw->lft[dlid]);
}
EXPORT_SYMBOL_IF_KUNIT(rsim_sw_lft);

static void rsim_sw_node_info(struct rsim_switch *sw, u8 *data, u8 in_port)
{
	struct ib_node_info *ni = (struct ib_node_info *)data;

	ni->base_version = IB_MGMT_BASE_VERSION;
	ni->class_version = 1;
	ni->node_type = RDMA_NODE_IB_SWITCH;
	ni->num_ports = sw->nports;
	ni->sys_guid = sw->guid;
	ni->node_guid = sw->guid;
	ni->port_guid = sw->guid;
	ni->partition_cap = cpu_to_be16(RSIM_SW_PKEYS);
	ni->device_id = cpu_to_be16(RSIM_SW_DEVICE_ID);
	ni->revision = cpu_to_be32(RSIM_HW_VER);
	ni->local_port_num = in_port;
	ni->vendor_id[0] = (RSIM_VENDOR_ID >> 16) & 0xff;
	ni->vendor_id[1] = (RSIM_VENDOR_ID >> 8) & 0xff;
	ni->vendor_id[2] = RSIM_VENDOR_ID & 0xff;
}

static void rsim_sw_switch_info(struct rsim_switch *sw, u8 *data)
{
	*(__be16 *)&data[SI_LIN_CAP] = cpu_to_be16(RSIM_SW_LFT_CAP);
	*(__be16 *)&data[SI_MCAST_CAP] = cpu_to_be16(RSIM_SW_MFT_CAP);
	*(__be16 *)&data[SI_LIN_TOP] = cpu_to_be16(sw->lin_top);
	data[SI_DEF_MC_PRI] = 0xff;
	data[SI_DEF_MC_NOT] = 0xff;
	data[SI_LIFE_STATE] = sw->life << 3 | (sw->psc ? SI_PSC : 0);
	*(__be16 *)&data[SI_MCAST_TOP] = cpu_to_be16(sw->mcast_top);
}

/* PortInfo of a port: what was written, and the read-only fields */
static void rsim_sw_port_info(struct rsim_switch *sw, u8 port, u8 *data,
			      u8 in_port)
{
	struct rsim_sw_port *sp = &sw->port[port];

	memcpy(data, sp->pi, sizeof(sp->pi));
	if (port)
		memset(data, 0, PI_CAP);	/* M_Key to SM LID: port 0's */
	*(__be32 *)&data[PI_CAP] = cpu_to_be32(port ? 0 : RSIM_SW_CAP);
	data[PI_LOCAL_PORT] = in_port;
	data[PI_WIDTH_SUP] = RSIM_SW_WIDTHS;
	data[PI_WIDTH_ACT] = IB_WIDTH_4X;
	data[PI_SPEED_STATE] = RSIM_SW_SPEEDS << 4 | sp->state;
	data[PI_PHYS] = sp->phys << 4 | (sp->pi[PI_PHYS] & 0xf);
	data[PI_SPEED_ACT] = RSIM_SW_SPEEDS << 4 | (sp->pi[PI_SPEED_ACT] & 0xf);
	data[PI_VLCAP] = RSIM_SW_VLCAP << 4 | (sp->pi[PI_VLCAP] & 0xf);
	data[PI_MTUCAP] = IB_MTU_4096;
	data[PI_GUID_CAP] = port ? 0 : 1;
	data[PI_REREG] = sp->pi[PI_REREG] & 0x1f;
	data[PI_RESP_TIME] = 18;
	data[PI_SPEED_EXT] = RSIM_SW_SPEED_EXT_EDR << 4 | RSIM_SW_SPEEDS_EXT;
	data[PI_SPEED_EXT_EN] = sp->pi[PI_SPEED_EXT_EN];
}

/*
 * SubnSet(PortInfo) of a switch port: every field is checked before any
 * changes. Port 0 takes its LID, SM LID and the rest and stays Active;
 * an external port moves one step (Down retrains a link that is there:
 * Init at both ends, *retrain set for fabric.c to do the far end).
 */
static u16 rsim_sw_set_port_info(struct rsim_switch *sw, u8 port,
				 const u8 *req, int *retrain)
{
	struct rsim_sw_port *sp = &sw->port[port];
	u8 state = req[PI_SPEED_STATE] & 0xf, phys = req[PI_PHYS] >> 4;
	u8 mtu = req[PI_MTU_SMSL] >> 4, vls = req[PI_OPVLS] >> 4;
	u16 lid = be16_to_cpup((const __be16 *)&req[PI_LID]);
	u8 new_state = sp->state, new_phys = sp->phys;
	bool linked = rcu_access_pointer(sp->peer.sw) ||
		      rcu_access_pointer(sp->peer.ca);
	int rt = 0;

	if (vls > RSIM_SW_VLCAP || mtu > IB_MTU_4096 ||
	    (req[PI_WIDTH_EN] & ~RSIM_SW_WIDTHS && req[PI_WIDTH_EN] != 0xff) ||
	    (!port ? lid >= RSIM_SW_LFT_CAP || (req[PI_LMC] & 7) : false))
		return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
	/* a Get written back (ibportstate): the state it has, no change */
	if (phys == new_phys)
		phys = 0;
	if (port) {
		switch (phys) {
		case 0:
			break;
		case IB_PORT_PHYS_STATE_POLLING:
			if (new_phys == IB_PORT_PHYS_STATE_DISABLED) {
				new_phys = linked ? IB_PORT_PHYS_STATE_LINK_UP :
						    IB_PORT_PHYS_STATE_POLLING;
				new_state = linked ? IB_PORT_INIT :
						     IB_PORT_DOWN;
				rt = linked ? 1 : 0;
			}
			break;
		case IB_PORT_PHYS_STATE_DISABLED:
			new_phys = IB_PORT_PHYS_STATE_DISABLED;
			new_state = IB_PORT_DOWN;
			rt = linked ? 2 : 0;
			break;
		default:
			return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
		}
		if (!rsim_port_state_step(state, new_phys, &new_state))
			return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
		/* Down on a link that is up: its far end retrains too */
		if (state == IB_PORT_DOWN &&
		    new_phys == IB_PORT_PHYS_STATE_LINK_UP)
			rt = rt ?: 1;
	} else if (state > IB_PORT_ACTIVE) {
		return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
	}

	/* the writable fields; 0 in NeighborMTU and OperationalVLs: as is */
	memcpy(sp->pi, req, PI_CAP);			/* M_Key .. SM LID */
	memcpy(&sp->pi[26], &req[26], 2);		/* M_KeyLeasePeriod */
	if (req[PI_WIDTH_EN])
		sp->pi[PI_WIDTH_EN] = req[PI_WIDTH_EN] == 0xff ?
				      RSIM_SW_WIDTHS : req[PI_WIDTH_EN];
	sp->pi[PI_PHYS] = (sp->pi[PI_PHYS] & 0xf0) | (req[PI_PHYS] & 0xf);
	sp->pi[PI_LMC] = req[PI_LMC];
	if (req[PI_SPEED_ACT] & 0xf)
		sp->pi[PI_SPEED_ACT] = RSIM_SW_SPEEDS;
	sp->pi[PI_MTU_SMSL] = (mtu ?: sp->pi[PI_MTU_SMSL] >> 4) << 4 |
			      (req[PI_MTU_SMSL] & 0xf);
	sp->pi[PI_VLCAP] = req[PI_VLCAP] & 0xf;
	sp->pi[38] = req[38];				/* VLHighLimit */
	sp->pi[42] = req[42];				/* VLStall, HOQLife */
	sp->pi[PI_OPVLS] = (vls ?: sp->pi[PI_OPVLS] >> 4) << 4 |
			   (req[PI_OPVLS] & 0xf);
	sp->pi[PI_REREG] = req[PI_REREG] & 0x1f;
	sp->pi[53] = req[53];				/* error thresholds */
	if (req[PI_SPEED_EXT_EN] & 0x1f)
		sp->pi[PI_SPEED_EXT_EN] = RSIM_SW_SPEEDS_EXT;
	if (port) {
		WRITE_ONCE(sp->state, new_state);
		WRITE_ONCE(sp->phys, new_phys);
	}
	*retrain = rt;
	return IB_MGMT_MAD_STATUS_SUCCESS;
}

static u16 rsim_sw_lft_block(struct rsim_switch *sw, u32 block, u8 *data,
			     bool set)
{
	u32 i;

	if (block >= RSIM_SW_LFT_CAP / LFT_BLOCK)
		return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
	for (i = 0; i < LFT_BLOCK; i++) {
		if (set)
			WRITE_ONCE(sw->lft[block * LFT_BLOCK + i], data[i]);
		data[i] = sw->lft[block * LFT_BLOCK + i];
	}
	return IB_MGMT_MAD_STATUS_SUCCESS;
}

/* MFT: modifier block (bits 8:0) and position (31:28), 16 ports each */
static u16 rsim_sw_mft_block(struct rsim_switch *sw, u32 mod, u8 *data,
			     bool set)
{
	u32 block = mod & 0x1ff, pos = mod >> 28, i;
	u32 shift = pos * MFT_POS_PORTS;
	__be16 *masks = (__be16 *)data;

	if (block >= RSIM_SW_MFT_CAP / MFT_BLOCK || shift > sw->nports ||
	    (mod & 0x0ffffe00))
		return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
	for (i = 0; i < MFT_BLOCK; i++) {
		u64 *e = &sw->mft[block * MFT_BLOCK + i];

		if (set) {
			u64 m = *e & ~(0xffffULL << shift);

			m |= (u64)be16_to_cpu(masks[i]) << shift;
			/* no bit past the last port */
			m &= GENMASK_ULL(sw->nports, 0);
			WRITE_ONCE(*e, m);
		}
		masks[i] = cpu_to_be16((*e >> shift) & 0xffff);
	}
	return IB_MGMT_MAD_STATUS_SUCCESS;
}

/* P_KeyTable: block in bits 15:0, port in 31:16; only port 0 has one */
static u16 rsim_sw_pkeys(struct rsim_switch *sw, u32 mod, u8 *data, bool set)
{
	if ((mod & 0xffff) || (mod >> 16))
		return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
	if (set)
		memcpy(sw->pkeys, data, sizeof(sw->pkeys));
	memcpy(data, sw->pkeys, sizeof(sw->pkeys));
	return IB_MGMT_MAD_STATUS_SUCCESS;
}

/* one Get or Set, under the switch's lock; returns the MAD status */
static u16 rsim_sw_attr(struct rsim_switch *sw, struct ib_smp *smp,
			u8 in_port, bool set, int *retrain, u8 *port)
{
	u32 mod = be32_to_cpu(smp->attr_mod);
	u8 req[IB_SMP_DATA_SIZE];
	u16 status = IB_MGMT_MAD_STATUS_SUCCESS;

	memcpy(req, smp->data, sizeof(req));
	if (!set)
		memset(smp->data, 0, sizeof(smp->data));
	switch (smp->attr_id) {
	case IB_SMP_ATTR_NODE_DESC:
		if (set)
			return IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB;
		memcpy(smp->data, sw->name, sizeof(sw->name));
		break;
	case IB_SMP_ATTR_NODE_INFO:
		if (set)
			return IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB;
		rsim_sw_node_info(sw, smp->data, in_port);
		break;
	case IB_SMP_ATTR_SWITCH_INFO:
		if (mod)
			return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
		if (set) {
			u16 top = be16_to_cpup((__be16 *)&req[SI_LIN_TOP]);

			if (top >= RSIM_SW_LFT_CAP)
				return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
			WRITE_ONCE(sw->lin_top, top);
			sw->life = req[SI_LIFE_STATE] >> 3;
			/* PortStateChange: writing 1 clears it */
			if (req[SI_LIFE_STATE] & SI_PSC)
				sw->psc = false;
			sw->mcast_top =
				be16_to_cpup((__be16 *)&req[SI_MCAST_TOP]);
		}
		memset(smp->data, 0, sizeof(smp->data));
		rsim_sw_switch_info(sw, smp->data);
		break;
	case IB_SMP_ATTR_PORT_INFO:
		/* bit 31: the SM reads the extended speeds (none here) */
		mod &= ~BIT(31);
		if (mod > sw->nports)
			return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
		if (set) {
			status = rsim_sw_set_port_info(sw, mod, req, retrain);
			*port = mod;
		}
		memset(smp->data, 0, sizeof(smp->data));
		rsim_sw_port_info(sw, mod, smp->data, in_port);
		break;
	case IB_SMP_ATTR_PKEY_TABLE:
		return rsim_sw_pkeys(sw, mod, smp->data, set);
	case IB_SMP_ATTR_LINEAR_FORWARD_TABLE:
		return rsim_sw_lft_block(sw, mod, smp->data, set);
	case IB_SMP_ATTR_MCAST_FORWARD_TABLE:
		return rsim_sw_mft_block(sw, mod, smp->data, set);
	default:
		return IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB;
	}
	return status;
}

/**
 * rsim_sw_sma() - the switch's SMA answers an SMP, in place
 * @sw: the switch
 * @smp: an SMP that ends at the switch (LID-routed to its LID, or
 *	directed-route with HopPointer at HopCount + 1); becomes the answer
 * @in_port: the port it came in on (NodeInfo's and PortInfo's
 *	LocalPortNum)
 *
 * The answer is a GetResp with the request's header and paths, the D bit
 * set for a directed-route SMP; fabric.c sends it back.
 *
 * Context: process or softirq; takes the switch's lock with BH off.
 * Return: true if @smp is now an answer to send; false for what gets
 * none (responses, traps, TrapRepress).
 */
bool rsim_sw_sma(struct rsim_switch *sw, struct ib_smp *smp, u8 in_port)
{
	bool dr = smp->mgmt_class == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE;
	int retrain = 0;
	u8 port = 0;
	u16 status;

	if (smp->method == IB_MGMT_METHOD_TRAP_REPRESS &&
	    smp->attr_id == IB_SMP_ATTR_NOTICE) {
		/* the SM has the trap: no more repeats of it */
		spin_lock_bh(&sw->lock);
		if (sw->trap_left && be64_to_cpu(smp->tid) == sw->trap_tid) {
			sw->trap_left = 0;
			atomic64_inc(&sw->represses);
		}
		spin_unlock_bh(&sw->lock);
		return false;
	}
	if (!rsim_mad_method_answered(smp->method))
		return false;
	if (smp->method != IB_MGMT_METHOD_GET &&
	    smp->method != IB_MGMT_METHOD_SET) {
		status = IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD;
	} else if (smp->class_version != 1) {
		status = IB_MGMT_MAD_STATUS_BAD_VERSION;
	} else {
		bool set = smp->method == IB_MGMT_METHOD_SET;

		spin_lock_bh(&sw->lock);
		status = rsim_sw_attr(sw, smp, in_port, set, &retrain, &port);
		spin_unlock_bh(&sw->lock);
		atomic64_inc(set ? &sw->sma_sets : &sw->sma_gets);
	}
	if (status)
		atomic64_inc(&sw->sma_errors);
	if (retrain)
		rsim_fabric_port_retrain(sw, port, retrain == 2);
	smp->method = IB_MGMT_METHOD_GET_RESP;
	smp->status = cpu_to_be16(status);
	if (dr)
		smp->status |= IB_SMP_DIRECTION;
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_sw_sma);

/* PortCounters, PortCountersExtended: one port, or all (0xff) summed */
static u16 rsim_sw_counters(struct rsim_switch *sw, struct ib_mad *mad,
			    bool ext, bool set)
{
	struct ib_pma_mad *pma = (struct ib_pma_mad *)mad;
	struct ib_pma_portcounters_ext *pcx = (void *)pma->data;
	struct ib_pma_portcounters *pc = (void *)pma->data;
	u8 sel_port = pc->port_select;
	__be16 sel = pc->counter_select;
	u64 xd = 0, rd = 0, xp = 0, rp = 0, disc = 0;
	u32 p, first = sel_port, last = sel_port;

	if (sel_port == 0xff) {
		first = 1;
		last = sw->nports;
	} else if (sel_port > sw->nports) {
		return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
	}
	for (p = first; p <= last; p++) {
		struct rsim_sw_counters *c = &sw->port[p].c;

		if (set && sel & (ext ? IB_PMA_SELX_PORT_XMIT_DATA :
				  IB_PMA_SEL_PORT_XMIT_DATA))
			atomic64_set(&c->xmit_data, 0);
		if (set && sel & (ext ? IB_PMA_SELX_PORT_RCV_DATA :
				  IB_PMA_SEL_PORT_RCV_DATA))
			atomic64_set(&c->rcv_data, 0);
		if (set && sel & (ext ? IB_PMA_SELX_PORT_XMIT_PACKETS :
				  IB_PMA_SEL_PORT_XMIT_PACKETS))
			atomic64_set(&c->xmit_pkts, 0);
		if (set && sel & (ext ? IB_PMA_SELX_PORT_RCV_PACKETS :
				  IB_PMA_SEL_PORT_RCV_PACKETS))
			atomic64_set(&c->rcv_pkts, 0);
		if (set && !ext && sel & IB_PMA_SEL_PORT_XMIT_DISCARDS)
			atomic64_set(&c->xmit_discards, 0);
		xd += atomic64_read(&c->xmit_data);
		rd += atomic64_read(&c->rcv_data);
		xp += atomic64_read(&c->xmit_pkts);
		rp += atomic64_read(&c->rcv_pkts);
		disc += atomic64_read(&c->xmit_discards);
	}
	memset(pma->data, 0, sizeof(pma->data));
	if (ext) {
		pcx->port_select = sel_port;
		pcx->counter_select = sel;
		pcx->port_xmit_data = cpu_to_be64(xd / 4);
		pcx->port_rcv_data = cpu_to_be64(rd / 4);
		pcx->port_xmit_packets = cpu_to_be64(xp);
		pcx->port_rcv_packets = cpu_to_be64(rp);
		pcx->port_unicast_xmit_packets = cpu_to_be64(xp);
		pcx->port_unicast_rcv_packets = cpu_to_be64(rp);
	} else {
		pc->port_select = sel_port;
		pc->counter_select = sel;
		pc->port_xmit_discards = cpu_to_be16(min_t(u64, disc, U16_MAX));
		pc->port_xmit_data = cpu_to_be32(min_t(u64, xd / 4, U32_MAX));
		pc->port_rcv_data = cpu_to_be32(min_t(u64, rd / 4, U32_MAX));
		pc->port_xmit_packets = cpu_to_be32(min_t(u64, xp, U32_MAX));
		pc->port_rcv_packets = cpu_to_be32(min_t(u64, rp, U32_MAX));
	}
	return IB_MGMT_MAD_STATUS_SUCCESS;
}

/**
 * rsim_sw_pma() - the switch's PMA answers a MAD, in place
 * @sw: the switch
 * @mad: a PerformanceManagement MAD LID-routed to the switch
 *
 * ClassPortInfo (AllPortSelect, ExtendedWidth), PortCounters and
 * PortCountersExtended of ports 1 to N or all (0xff); a Set clears the
 * counters CounterSelect names.
 *
 * Context: any.
 * Return: true if @mad is now an answer; false for responses and traps.
 */
bool rsim_sw_pma(struct rsim_switch *sw, struct ib_mad *mad)
{
	struct ib_mad_hdr *h = &mad->mad_hdr;
	bool set = h->method == IB_MGMT_METHOD_SET;
	u16 status;

	if (!rsim_mad_method_answered(h->method))
		return false;
	if (h->method != IB_MGMT_METHOD_GET && !set) {
		status = IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD;
	} else if (h->class_version != 1) {
		status = IB_MGMT_MAD_STATUS_BAD_VERSION;
	} else if (h->attr_id == IB_PMA_CLASS_PORT_INFO && !set) {
		struct ib_class_port_info *cpi = (void *)
			((struct ib_pma_mad *)mad)->data;

		memset(cpi, 0, sizeof(((struct ib_pma_mad *)mad)->data));
		cpi->base_version = IB_MGMT_BASE_VERSION;
		cpi->class_version = 1;
		cpi->capability_mask = IB_PMA_CLASS_CAP_ALLPORTSELECT |
				       IB_PMA_CLASS_CAP_EXT_WIDTH;
		cpi->cap_mask2_resp_time = cpu_to_be32(18);
		status = IB_MGMT_MAD_STATUS_SUCCESS;
	} else if (h->attr_id == IB_PMA_PORT_COUNTERS) {
		status = rsim_sw_counters(sw, mad, false, set);
	} else if (h->attr_id == IB_PMA_PORT_COUNTERS_EXT) {
		status = rsim_sw_counters(sw, mad, true, set);
	} else {
		status = IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB;
	}
	h->method = IB_MGMT_METHOD_GET_RESP;
	h->status = cpu_to_be16(status);
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(rsim_sw_pma);
