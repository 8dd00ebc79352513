/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rdmasim: the simulated InfiniBand fabric, switches and the links between
 * ports (fabric.c), and the switches' management agents (switch.c).
 */
#ifndef RSIM_FABRIC_H
#define RSIM_FABRIC_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_smi.h>

struct rsim_dev;
struct rsim_switch;

/* external ports a switch may have (1 to this; port 0 is its own) */
#define RSIM_SW_PORTS_MAX	36
/* LinearFDBCap: one LFT entry per unicast LID, 0 to 0xbfff */
#define RSIM_SW_LFT_CAP		0xc000
/* MulticastFDBCap: MLIDs 0xc000 to 0xc3ff */
#define RSIM_SW_MFT_CAP		1024
/* port 0's P_Key table (NodeInfo.PartitionCap) */
#define RSIM_SW_PKEYS		32
/* NodeInfo.DeviceID: outside every vendor list opensm and the diags keep */
#define RSIM_SW_DEVICE_ID	0x5357	/* "SW" */
/* switch GUIDs: this, and the switch's number in bits 8 and up */
#define RSIM_SW_GUID_PREFIX	0x02ca530000000000ULL
/* the first multicast LID */
#define RSIM_LID_MCAST_BASE	0xc000
/* how many switches a LID-routed packet crosses before it is dropped */
#define RSIM_FABRIC_HOPS	64
/* a trap is sent this many times at most, this far apart (IBA 13.4.9) */
#define RSIM_TRAP_TRIES		5
#define RSIM_TRAP_INTERVAL_MS	1000
/* the most switches a fabric has */
#define RSIM_FABRIC_SWITCHES	64

/**
 * struct rsim_sw_counters - a switch port's PortCounters
 * @xmit_data: payload bytes sent out of the port
 * @rcv_data: payload bytes received on it
 * @xmit_pkts: packets sent
 * @rcv_pkts: packets received
 * @xmit_discards: packets that were to leave by it and could not
 *	(PortXmitDiscards: no link, port not Active, no route)
 */
struct rsim_sw_counters {
	atomic64_t xmit_data;
	atomic64_t rcv_data;
	atomic64_t xmit_pkts;
	atomic64_t rcv_pkts;
	atomic64_t xmit_discards;
};

/**
 * struct rsim_fab_end - the far end of a port's link
 * @sw: a switch, or NULL (RCU)
 * @ca: an rdmasim CA, or NULL (RCU)
 * @port: the far end's port number (a CA's is RSIM_PORT)
 *
 * Both pointers NULL: no link. Written under the fabric's mutex with
 * rcu_assign_pointer(); the data path reads them under rcu_read_lock().
 */
struct rsim_fab_end {
	struct rsim_switch __rcu *sw;
	struct rsim_dev __rcu *ca;
	u8 port;
};

/**
 * struct rsim_sw_port - one port of a switch
 * @peer: the link's far end
 * @state: PortState (IB_PORT_DOWN to IB_PORT_ACTIVE)
 * @phys: PortPhysicalState (IB_PORT_PHYS_STATE_*)
 * @pi: the PortInfo fields a subnet manager wrote (IBA 14.2.5.6); the
 *	read-only ones are filled in at each Get
 * @c: the port's counters
 */
struct rsim_sw_port {
	struct rsim_fab_end peer;
	u8 state;
	u8 phys;
	u8 pi[64];
	struct rsim_sw_counters c;
};

/**
 * struct rsim_switch - a switch of the fabric (not an ib_device)
 * @node: on the fabric's list (RCU)
 * @rcu: frees it after a grace period
 * @index: its number, in its GUID
 * @guid: node GUID, which is also port 0's (the only port with a GUID)
 * @name: NodeDescription, and its name in the control files
 * @nports: external ports, 1 to @nports
 * @lock: protects the SMA's state below (@si_*, @psc, @lft and @mft
 *	writes, the ports' @state, @phys, @pi and @pkeys); BH off
 * @lin_top: SwitchInfo.LinearFDBTop
 * @mcast_top: SwitchInfo.MulticastFDBTop
 * @life: SwitchInfo.LifeTimeValue
 * @psc: SwitchInfo.PortStateChange: a port's link went up or down
 * @trap_tid: the transaction ID of the last trap the SMA sent
 * @trap_left: how many more times it sends it, unless repressed
 * @trap_work: sends it again (RSIM_TRAP_INTERVAL_MS) until a TrapRepress
 *	with its transaction ID comes, RSIM_TRAP_TRIES times in all
 * @lft: LinearForwardingTable, an output port per LID (0xff: none); the
 *	data path reads it without the lock, one byte at a time
 * @mft: MulticastForwardingTable, a port mask per MLID (bit n: port n)
 * @pkeys: port 0's P_Key table (external ports enforce no partitions)
 * @sma_gets: SubnGet() the SMA answered
 * @sma_sets: SubnSet() it answered
 * @sma_errors: answers with a MAD status other than success
 * @dr_drops: directed-route SMPs dropped here (bad hop pointer or count,
 *	no such port, no link)
 * @no_route: LID-routed packets dropped here (no LFT entry, hop limit)
 * @traps: traps the SMA sent that reached the SM's port
 * @represses: TrapRepresses that ended a trap's repeats
 * @port: ports 0 to @nports
 */
struct rsim_switch {
	struct list_head node;
	struct rcu_head rcu;
	u32 index;
	__be64 guid;
	char name[IB_DEVICE_NODE_DESC_MAX];
	u8 nports;
	spinlock_t lock;	/* protects the SMA's state; BH off */
	u16 lin_top;
	u16 mcast_top;
	u8 life;
	bool psc;
	u64 trap_tid;
	u32 trap_left;
	struct delayed_work trap_work;
	u8 *lft;
	u64 *mft;
	__be16 pkeys[RSIM_SW_PKEYS];
	atomic64_t sma_gets;
	atomic64_t sma_sets;
	atomic64_t sma_errors;
	atomic64_t dr_drops;
	atomic64_t no_route;
	atomic64_t traps;
	atomic64_t represses;
	struct rsim_sw_port port[];
};

/**
 * struct rsim_fab_hit - where a fabric walk ended
 * @ca: a CA port that holds the destination LID, held with
 *	ib_device_try_get() unless it is the sender (rsim_subnet_put())
 * @sw: a switch whose port 0 holds it (valid under rcu_read_lock())
 * @in_port: the port of @sw it came in on
 * @qpn: the QP it lands on (a switch's answer: the sender's)
 * @slid: the LID the packet arrives from (a switch's answer: the switch's;
 *	a directed-route SMP: the permissive LID)
 */
struct rsim_fab_hit {
	struct rsim_dev *ca;
	struct rsim_switch *sw;
	u8 in_port;
	u32 qpn;
	u16 slid;
};

/* fabric.c */
bool rsim_fabric_sm_on(void);
bool rsim_fabric_member(const struct rsim_dev *rsim);
struct rsim_switch *rsim_fabric_switch_add(const char *name, u8 nports);
int rsim_fabric_switch_del(const char *name);
int rsim_fabric_link_add(const char *a, u8 pa, const char *b, u8 pb);
int rsim_fabric_link_del(const char *a, u8 pa);
int rsim_fabric_set_sm(bool on);
void rsim_fabric_ca_leave(struct rsim_dev *rsim);
void rsim_fabric_reset(void);
struct rsim_dev *rsim_fabric_route(struct rsim_dev *from, u16 dlid,
				   u64 bytes);
int rsim_fabric_mad(struct rsim_dev *from, u32 src_qpn, u32 dst_qpn,
		    u16 dlid, void *mad, u32 len, struct rsim_fab_hit *hit);
void rsim_fabric_mcast(struct rsim_dev *from, u16 mlid,
		       int (*fn)(struct rsim_dev *ca, void *arg), void *arg);
void rsim_fabric_debugfs_init(struct dentry *root);
void rsim_fabric_exit(void);
void rsim_fabric_port_retrain(struct rsim_switch *sw, u8 port, bool disable);
void rsim_fabric_ca_retrain(struct rsim_dev *rsim);

/* switch.c */
struct rsim_switch *rsim_sw_alloc(const char *name, u8 nports, u32 index);
void rsim_sw_free(struct rsim_switch *sw);
void rsim_sw_port_link(struct rsim_switch *sw, u8 port, bool up);
bool rsim_sw_port_up(struct rsim_switch *sw, u8 port, bool smp);
u16 rsim_sw_lid(struct rsim_switch *sw);
u8 rsim_sw_lft(struct rsim_switch *sw, u16 dlid);
bool rsim_sw_sma(struct rsim_switch *sw, struct ib_smp *smp, u8 in_port);
bool rsim_sw_pma(struct rsim_switch *sw, struct ib_mad *mad);

#endif /* RSIM_FABRIC_H */
