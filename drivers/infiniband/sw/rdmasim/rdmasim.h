/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rdmasim: private header shared by the driver files and the KUnit suites.
 *
 * One sub-struct per concern, prototypes grouped by the file that defines
 * them (rxe_loc.h style).
 */
#ifndef RDMASIM_H
#define RDMASIM_H

#include <linux/atomic.h>
#include <linux/fault-inject.h>
#include <linux/idr.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/percpu.h>
#include <linux/platform_device.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#include <rdmasim/compat.h>
#include <rdmasim/puda.h>

#include "fabric.h"

struct pci_dev;
struct rsim_cq;
struct rsim_qp;

#define RSIM_DRV_NAME		"rdmasim"
#define RSIM_NUM_PORTS		1
#define RSIM_PORT		1
/* rdmasim<id> (ib_device, node description, debugfs); any u32 id fits */
#define RSIM_DEV_NAME_FMT	RSIM_DRV_NAME "%u"
#define RSIM_DEV_NAME_LEN	sizeof(RSIM_DRV_NAME "4294967295")
/* rdmasim<id> gets the base LID + id; unicast LIDs are 1..0xbfff */
#define RSIM_DEFAULT_BASE_LID	1
#define RSIM_LID_UNICAST_MAX	(be16_to_cpu(IB_MULTICAST_LID_BASE) - 1)
/* The port: link-local GID prefix, subnet timeout, largest message */
#define RSIM_GID_PREFIX		0xfe80000000000000ULL
#define RSIM_SUBNET_TIMEOUT	18	/* 4.096 us * 2^18 = ~1 s */
#define RSIM_MAX_MSG		0x80000000ULL
#define RSIM_DM_MAX		(256 * 1024)	/* max_dm_size */
/*
 * The most SGEs a receive WR has on any device (its max_recv_sge is at
 * most this): a requester copies a responder's receive WR, perhaps of
 * another device, into scratch space of this size
 */
#define RSIM_RECV_SGE_CEIL	64
/* RoCE mode: GID table entries (the netdev's addresses, as rxe's 1024) */
#define RSIM_ROCE_GID_TBL_LEN	128

/*
 * Memory keys: a 24-bit index and an 8-bit variant (key = index << 8 |
 * variant), the convention ib_update_fast_reg_key() relies on. Index 0 is
 * reserved for the local DMA lkey and never given to an MR.
 */
#define RSIM_KEY_VARIANT_BITS	8
#define RSIM_KEY_INDEX(key)	((key) >> RSIM_KEY_VARIANT_BITS)
#define RSIM_KEY_VARIANT(key)	((key) & 0xff)
#define RSIM_MR_INDEX_MAX	((1U << 24) - 1)
#define RSIM_LOCAL_DMA_LKEY	0x000000a5U

/* QP numbers 0 and 1 are the per-port SMI and GSI QPs. */
#define RSIM_QPN_MIN		2
#define RSIM_QPN_MAX		0x00ffffffU

/*
 * Page sizes map_mr_sg accepts for IB_MR_TYPE_MEM_REG: every power of two
 * from 4 KiB to 1 GiB. This is also the advertised page_size_cap.
 */
#define RSIM_PAGE_SIZE_CAP	GENMASK_ULL(30, 12)

/**
 * enum rsim_res_type - object types counted against a device limit
 * @RSIM_RES_PD: protection domains
 * @RSIM_RES_MR: memory regions of every type (including DMA MRs)
 * @RSIM_RES_CQ: completion queues
 * @RSIM_RES_QP: queue pairs, including the MAD layer's QP0 and QP1
 * @RSIM_RES_AH: address handles
 * @RSIM_RES_DMAH: DMA handles
 * @RSIM_RES_SRQ: shared receive queues
 * @RSIM_RES_DM: device memory allocations (dm.c)
 * @RSIM_RES_MW: memory windows (mw.c)
 * @RSIM_RES_NR: number of types; keep last
 */
enum rsim_res_type {
	RSIM_RES_PD,
	RSIM_RES_MR,
	RSIM_RES_CQ,
	RSIM_RES_QP,
	RSIM_RES_AH,
	RSIM_RES_DMAH,
	RSIM_RES_SRQ,
	RSIM_RES_DM,
	RSIM_RES_MW,
	RSIM_RES_NR,
};

/**
 * struct rsim_limits - the limits a device advertises and enforces
 * @max_res: maximum live objects per &enum rsim_res_type
 * @max_cqe: maximum CQ depth
 * @max_qp_wr: maximum send or receive queue depth
 * @max_send_sge: maximum scatter/gather entries per send WR
 * @max_recv_sge: maximum scatter/gather entries per receive WR
 * @max_sge_rd: maximum scatter/gather entries per RDMA READ
 * @max_inline_data: maximum inline data per send WR
 * @max_fast_reg_page_list_len: maximum @max_num_sg for ib_alloc_mr()
 * @max_qp_rd_atom: maximum outstanding RDMA READ as responder
 * @max_qp_init_rd_atom: maximum outstanding RDMA READ as initiator
 * @max_mr_size: largest MR, in bytes
 * @pkey_tbl_len: P_Key table length (entry 0 is 0xffff, the rest 0)
 */
struct rsim_limits {
	u32 max_res[RSIM_RES_NR];
	u32 max_cqe;
	u32 max_qp_wr;
	u32 max_send_sge;
	u32 max_recv_sge;
	u32 max_sge_rd;
	u32 max_inline_data;
	u32 max_fast_reg_page_list_len;
	u32 max_qp_rd_atom;
	u32 max_qp_init_rd_atom;
	u64 max_mr_size;
	u16 pkey_tbl_len;
};

/**
 * struct rsim_dev_config - what a device is created with
 * @limits: advertised and enforced limits
 * @lid: the port's unicast LID (also its SM LID); 0 picks the base LID + id
 *	(InfiniBand only)
 * @no_sa: the device's SA never answers (new_device's sa=0): the class
 *	on its port is left to another SA
 * @dma_pci: the PCI function it maps through (new_device's dma_pci=,
 *	dma_pci.c), held by main.c's node while the device exists; NULL:
 *	its platform device. Read at probe only.
 * @ndev: RoCE mode: the netdev the port is bound to (held by the device
 *	while it exists); NULL: an InfiniBand port (roce.c)
 * @name: the ib_device's name; empty: rdmasim<id>
 */
struct rsim_dev_config {
	struct rsim_limits limits;
	u16 lid;
	bool no_sa;
	struct pci_dev *dma_pci;
	struct net_device *ndev;
	char name[IB_DEVICE_NAME_MAX];
};

/**
 * struct rsim_res - live count of one object type
 * @count: live objects; never above the limit
 * @hwm: highest @count seen
 * @refused: allocations refused because @count was at the limit
 */
struct rsim_res {
	atomic_t count;
	atomic_t hwm;
	atomic_t refused;
};

/**
 * enum rsim_fault_site - places where a failure can be injected
 * @RSIM_FAULT_ALLOC: every memory and index allocation inside a verb
 * @RSIM_FAULT_ODP: every page the data path faults into an ODP MR
 *	(odp.c): the fault fails there, as a page fault an HCA's firmware
 *	could not resolve (fail_nth N: the N-th page from now)
 * @RSIM_FAULT_NR: number of sites; keep last
 */
enum rsim_fault_site {
	RSIM_FAULT_ALLOC,
	RSIM_FAULT_ODP,
	RSIM_FAULT_NR,
};

/**
 * enum rsim_puda_fault_site - places where the PUDA library can fail
 * @RSIM_PUDA_FAULT_ALLOC: a buffer's allocation
 * @RSIM_PUDA_FAULT_MAP: a buffer's DMA mapping
 * @RSIM_PUDA_FAULT_NR: number of sites; keep last
 */
enum rsim_puda_fault_site {
	RSIM_PUDA_FAULT_ALLOC,
	RSIM_PUDA_FAULT_MAP,
	RSIM_PUDA_FAULT_NR,
};

/**
 * struct rsim_fault_trace - where a point's checks came from, in order
 *	(fault.c: the debugfs file trace)
 * @rcu: the trace is freed after the checks that may still write it
 * @n: checks since the trace began; may pass @cap
 * @cap: entries of @ip
 * @ip: the call site of each of the first @cap checks
 */
struct rsim_fault_trace {
	struct rcu_head rcu;
	atomic_t n;
	u32 cap;
	unsigned long ip[];
};

/* the longest trace a point keeps: 16384 checks, 128 KiB */
#define RSIM_FAULT_TRACE_MAX	16384

/**
 * struct rsim_fault_point - one injection point (fault.c), the device's
 *	and the PUDA library's alike
 * @nth: one-shot countdown; the check that takes it from 1 to 0 fails
 * @injected: failures injected at this point so far
 * @attr: optional probabilistic layer, or NULL (always NULL without
 *	CONFIG_FAULT_INJECTION)
 * @injected_at: call site of the last injected failure, or 0
 *	(READ_ONCE/WRITE_ONCE)
 * @trace: the call sites of the checks since a trace began, or NULL
 *	(RCU; replaced under fault.c's rsim_fault_trace_lock)
 */
struct rsim_fault_point {
	atomic_t nth;
	atomic_t injected;
	struct fault_attr *attr;
	unsigned long injected_at;
	struct rsim_fault_trace __rcu *trace;
};

/**
 * struct rsim_fault_attr - room for a point's probabilistic layer
 * @attr: the layer; absent without CONFIG_FAULT_INJECTION, where
 *	<linux/fault-inject.h> declares no struct fault_attr (6.1)
 */
struct rsim_fault_attr {
#ifdef CONFIG_FAULT_INJECTION
	struct fault_attr attr;
#endif
};

/* the largest P_Key table a device may have (limits.pkey_tbl_len) */
#define RSIM_PKEYS_MAX		64

/**
 * struct rsim_port - the single InfiniBand port's mutable state
 * @lock: protects every field below; taken with BH off (the data path
 *	counts Q_Key and P_Key violations from softirq context)
 * @lid: unicast LID
 * @sm_lid: master SM LID (initially the port itself: there is no subnet
 *	manager, the port assigns its own LID and activates itself)
 * @sm_sl: master SM SL
 * @state: logical port state (DOWN, INIT, ARMED, ACTIVE)
 * @phys_state: IB_PORT_PHYS_STATE_* (LINK_UP, POLLING, DISABLED)
 * @mtu: NeighborMTU: the active MTU, enum ib_mtu
 * @subnet_timeout: SubnetTimeOut (4.096 us * 2^n)
 * @width_enabled: LinkWidthEnabled
 * @speed_enabled: LinkSpeedEnabled
 * @speed_ext_enabled: LinkSpeedExtEnabled
 * @mkey: M_Key (0: no M_Key protection)
 * @mkey_lease: M_KeyLeasePeriod in seconds (0: the lease never expires)
 * @mkey_prot: M_KeyProtectBits (IBA 14.2.4.1)
 * @mkey_deadline: when the running lease expires (jiffies); valid only
 *	while @mkey_lease_running
 * @mkey_lease_running: a failed M_Key check started the lease timer
 * @guid: port GUID (GID index 0 is fe80::/64 + this)
 * @mkey_viol: M_Key violation counter (saturates at 0xffff)
 * @qkey_viol: Q_Key violation counter
 * @pkey_viol: P_Key violation counter
 * @sm_act: SMInfo ActCount: SMPs the SMA answered
 * @sm_master: this device's subnet manager is the subnet's master
 *	(subnet.c's election); else it is standby
 * @issm: a process holds the port's issm device open (modify_port set
 *	IsSM): with the built-in SM off, the port reports IsSM for it
 * @pkeys: the P_Key table (pkey_tbl_len entries): index 0 the default
 *	P_Key until an SM writes another; the data path reads entries with
 *	READ_ONCE()
 * @events: port events dispatched (debugfs)
 */
struct rsim_port {
	spinlock_t lock;	/* protects this struct; BH off */
	u16 lid;
	u16 sm_lid;
	u8 sm_sl;
	enum ib_port_state state;
	u8 phys_state;
	enum ib_mtu mtu;
	u8 subnet_timeout;
	u8 width_enabled;
	u8 speed_enabled;
	u8 speed_ext_enabled;
	__be64 mkey;
	u16 mkey_lease;
	u8 mkey_prot;
	unsigned long mkey_deadline;
	bool mkey_lease_running;
	__be64 guid;
	u16 mkey_viol;
	u32 qkey_viol;
	u32 pkey_viol;
	u32 sm_act;
	bool sm_master;
	bool issm;
	u16 pkeys[RSIM_PKEYS_MAX];
	u32 events;
};

/* What query_device, query_port and the SMA report */
#define RSIM_PORT_WIDTHS	(IB_WIDTH_1X | IB_WIDTH_4X)	/* supported */
#define RSIM_PORT_SPEEDS	1	/* LinkSpeedSupported: 2.5 Gb/s */
#define RSIM_PORT_SPEEDS_EXT	3	/* 14.0625 and 25.78125 Gb/s */
/* no IEEE OUI of its own: the "none" value, which rxe reports too */
#define RSIM_VENDOR_ID		0xffffff
#define RSIM_VENDOR_PART_ID	0x5153	/* "SQ" */
#define RSIM_HW_VER		1
#define RSIM_PORT_CAP_FLAGS	(IB_PORT_SM | IB_PORT_CM_SUP |		\
				 IB_PORT_SYS_IMAGE_GUID_SUP |		\
				 IB_PORT_EXTENDED_SPEEDS_SUP |		\
				 IB_PORT_CLIENT_REG_SUP)
u32 rsim_port_cap_flags(struct rsim_dev *rsim);

/**
 * struct rsim_port_counters - the PMA's port counters
 * @xmit_data: payload bytes sent
 * @rcv_data: payload bytes received
 * @xmit_pkts: packets sent (path-MTU packets of each message, at least 1)
 * @rcv_pkts: packets received
 *
 * Each message the loopback data path delivers leaves and enters the
 * same port, so it counts on both sides.
 */
struct rsim_port_counters {
	u64 xmit_data;
	u64 rcv_data;
	u64 xmit_pkts;
	u64 rcv_pkts;
};

/**
 * enum rsim_dp_op - the kinds of send WR the data path counts
 * @RSIM_OP_SEND: SEND and SEND_WITH_IMM
 * @RSIM_OP_SEND_INV: SEND_WITH_INV (the responder's rkey invalidated)
 * @RSIM_OP_WRITE: RDMA WRITE and WRITE_WITH_IMM
 * @RSIM_OP_READ: RDMA READ
 * @RSIM_OP_ATOMIC: CMP_AND_SWP and FETCH_AND_ADD
 * @RSIM_OP_ATOMIC_WRITE: ATOMIC_WRITE
 * @RSIM_OP_FLUSH: FLUSH
 * @RSIM_OP_REG_MR: REG_MR (fast registration)
 * @RSIM_OP_LOCAL_INV: LOCAL_INV
 * @RSIM_OP_BIND_MW: BIND_MW (a memory window bound or unbound, mw.c)
 * @RSIM_OP_NR: number of kinds; keep last
 */
enum rsim_dp_op {
	RSIM_OP_SEND,
	RSIM_OP_SEND_INV,
	RSIM_OP_WRITE,
	RSIM_OP_READ,
	RSIM_OP_ATOMIC,
	RSIM_OP_ATOMIC_WRITE,
	RSIM_OP_FLUSH,
	RSIM_OP_REG_MR,
	RSIM_OP_LOCAL_INV,
	RSIM_OP_BIND_MW,
	RSIM_OP_NR,
};

/**
 * struct rsim_dp_stats - what the loopback data path did
 * @wqes: send WRs executed (successfully or not)
 * @bytes: payload bytes moved between registered memory
 * @errors: send WRs that completed in error (flushes not counted)
 * @rnr_waits: SENDs that found no receive WR and waited for one
 * @rnr_retries: RNR timer expiries that retried a waiting SEND
 * @ack_timeouts: transport timer expiries that retried an RC WR no
 *	responder had answered
 * @inline_runs: engine runs on the poster's context
 * @deferred: worker runs of work a post or a spent budget handed over
 *	(hard-IRQ, interrupts-off or nested context; a WR too large to run
 *	inline; more than a budget)
 * @worker_runs: runs of the device's worker (@deferred plus RNR timers)
 * @dmah_moves: WRs handed to the worker of the CPU a DMA handle names
 * @odp_moves: WRs handed to the worker because they may touch an ODP MR
 * @dmah_steered: WRs executed on the CPU their MR's DMA handle names
 * @dmah_pmem_bytes: bytes written into persistent-memory MRs with
 *	cache-flushing copies
 * @dmah_ph: WRs that touched an MR with processing hint 0, 1, 2, 3
 * @ops: send WRs that completed successfully, per &enum rsim_dp_op (a
 *	ULP's fast registrations and invalidations show here)
 * @umem_bounced: pages of pinned user memory registered whose DMA
 *	address is not their physical address (a bounce slot, under
 *	swiotlb): the data path reaches them through their pages
 * @port: the port counters the PMA reports and clears
 */
struct rsim_dp_stats {
	u64 wqes;
	u64 bytes;
	u64 errors;
	u64 rnr_waits;
	u64 rnr_retries;
	u64 ack_timeouts;
	u64 inline_runs;
	u64 deferred;
	u64 worker_runs;
	u64 dmah_moves;
	u64 odp_moves;
	u64 dmah_steered;
	u64 dmah_pmem_bytes;
	u64 dmah_ph[4];
	u64 ops[RSIM_OP_NR];
	u64 umem_bounced;
	struct rsim_port_counters port;
};

/**
 * struct rsim_sa_port - the subnet administrator's MAD agent on a port
 *	(sa_agent.c)
 * @agent: the agent for the SA class's requests on QP1, or NULL (RoCE
 *	mode, a device made with sa=0, the built-in SM off, or another SA
 *	holds the class)
 * @node: entry in sa_agent.c's list of the ports the SA client has
 *	(between its add() and its remove()), under its agents' mutex
 * @lock: protects @delayed, @nr_delayed and @stopping; BH off
 * @delayed: answers held back by the delay fault, oldest first
 * @nr_delayed: how many (at most RSIM_SA_HELD_MAX: more are lost)
 * @stopping: the agent is going: nothing more is held back
 * @delay_work: posts the held-back answers that are due
 */
struct rsim_sa_port {
	struct ib_mad_agent *agent;
	struct list_head node;
	spinlock_t lock;	/* protects delayed, nr_delayed, stopping */
	struct list_head delayed;
	unsigned int nr_delayed;
	bool stopping;
	struct delayed_work delay_work;
};

/* netdevs a RoCE-mode device's Ethernet segment is named by (roce.c) */
#define RSIM_ROCE_SEG_MAX	4

/**
 * struct rsim_roce_seg - the Ethernet segment of a RoCE-mode device's
 *	netdev, as rsim_roce_route() compares them
 * @net: the namespace cookie of each netdev (the first: the device's own)
 * @ifindex: the index of each in its namespace
 * @n: how many
 */
struct rsim_roce_seg {
	u64 net[RSIM_ROCE_SEG_MAX];
	int ifindex[RSIM_ROCE_SEG_MAX];
	int n;
};

/**
 * struct rsim_dev - one simulated RDMA device
 * @ibdev: the RDMA core's device; must be first (ib_alloc_device)
 * @pdev: platform device: sysfs parent, and DMA device unless a PCI
 *	function is lent (dma_pci.c)
 * @dma_dev: the DMA device: @pdev's, or a PCI function (dma_pci.c)
 * @dma_domain: @dma_dev's IOMMU domain when it translates for the DMA
 *	API (I/O virtual addresses), else NULL (dma-direct)
 * @iova_translations: DMA addresses the data path translated through
 *	@dma_domain
 * @id: device number, also the N of rdmasim<N>
 * @cfg: creation parameters (limits, LID)
 * @port: port state
 * @res: live object counts, one per &enum rsim_res_type
 * @pd_ida: PD numbers
 * @mr_xa: key index -> &struct rsim_mr, or a &struct rsim_mw tagged
 *	RSIM_KEY_MW_TAG (locking: the xarray's own lock, taken with BH off:
 *	the data path looks keys up from softirq context)
 * @mr_next: cursor for cyclic MR index allocation
 * @ah_xa: the AHs of processes with mapped send queues, by the number
 *	their UD WRs name them by (usq.c)
 * @ah_next: cursor for cyclic AH number allocation
 * @xsrq_xa: XRC SRQs by their number, which an XRC INI QP's WRs name
 *	(srq.c); looked up under its lock (BH off), which destroy_srq's
 *	erase takes too
 * @xsrq_next: cursor for cyclic XRC SRQ number allocation
 * @key_variant: source of the initial 8-bit key variant
 * @qp_serial: source of &rsim_qp.serial
 * @qp_xa: QP number -> &struct rsim_qp (locking: the xarray's own lock,
 *	taken with BH off: the data path looks QPs up from softirq context)
 * @qp_next: cursor for cyclic QP number allocation
 * @fault: injection sites
 * @fault_attr: their probabilistic layers
 * @mad_pool: DMA-mapped buffers for the MAD receive queue
 * @debugfs: /sys/kernel/debug/rdmasim/rdmasim<N>
 * @dp_wq: the data path's worker (dp.c): runs what a poster may not or
 *	need not run at once
 * @ev_wq: the dispatcher's workqueue (per-CPU, high priority): runs
 *	@ev_work
 * @ev_lock: protects @ev_list, @ev_cur and the &struct rsim_ev of every
 *	object (event.c); any context
 * @ev_list: objects whose handlers wait for the dispatcher, oldest first
 * @ev_cur: the object whose handlers the dispatcher runs now, or NULL
 * @ev_work: the dispatcher: runs handlers of objects other than the
 *	caller's own, from the device's context (event.c)
 * @atomic_lock: serializes the device's atomic operations (dp.c), so that
 *	one compare-and-swap or fetch-and-add sees no other between its read
 *	and its write; taken with BH off, outside the MRs' locks
 * @stats_lock: protects @dp
 * @dp: data path counters
 * @user_polls: poll_cq commands of processes (their CQs are not mapped)
 * @cq_rings: CQ rings made for processes to map
 * @user_recv_posts: post_recv and post_srq_recv commands of processes
 *	that carried WRs (their receive queues are not mapped)
 * @rq_rings: receive rings (RQs, SRQs) made for processes to map
 * @recv_doorbells: post_recv and post_srq_recv commands without a WR on
 *	a mapped receive queue (urq.c)
 * @sq_rings: send rings made for processes to map (usq.c)
 * @send_doorbells: post_send commands without a WR on a mapped send queue
 * @user_send_posts: post_send commands of processes that carried WRs
 * @odp_faults: page faults the data path and advise_mr resolved in ODP MRs
 * @odp_fault_pages: pages they brought in
 * @odp_fault_errors: faults that failed (no mapping, no right, dereg,
 *	injected)
 * @odp_invalidations: MMU notifier invalidations of ODP MRs' ranges
 * @odp_prefetches: advise_mr calls
 * @odp_delay_ms: debugfs knob: each ODP fault waits this long first
 *	(at most a second), so that a test can race it
 * @roce_no_route: RoCE: packets no device took, its GID held by no device
 *	this one reaches (rsim_roce_route())
 * @roce_ambiguous: RoCE: packets refused because more than one device
 *	it reaches equally holds their GID
 * @ndev_tracker: tracks the hold on @cfg.ndev (RoCE)
 * @roce_node: on roce.c's list of RoCE devices, which the data path
 *	routes by destination GID (RCU), from its bind to its netdev on
 * @ndev_gone: its netdev sent NETDEV_UNREGISTER (under RTNL)
 * @roce_seg_lock: protects @roce_seg (written under RTNL)
 * @roce_seg: RoCE: its netdev's Ethernet segment (roce.c)
 * @subnet_node: on subnet.c's list of InfiniBand-mode devices, which the
 *	data path routes by destination LID (RCU)
 * @link: the far end of the port's link in the fabric (fabric.c)
 * @fab_member: the port is in the fabric, from its first link: routed
 *	by links and switches, not on the flat subnet (written under
 *	rsim_fabric_mutex and the subnet's lock)
 * @sa: the subnet administrator's agent on the port (sa_agent.c)
 * @mc_lock: protects @mc_grps and @mc_ngrps (mcast_dp.c); BH off
 * @mc_grps: the multicast groups the device's UD QPs are attached to
 * @mc_ngrps: how many
 * @dead: set by dealloc_driver: the ib_device is unregistered, whoever
 *	unregistered it (main.c reaps the platform device)
 * @usq_test_hook: KUnit only: called at a send doorbell once a slot of
 *	the ring is copied, with the slot (the process's memory)
 * @dp_test_hook: KUnit only: called by the engine after a WR executed and
 *	before it completes, on the owner's context with no lock held
 * @dp_leave_hook: KUnit only: called as the owner of a send queue gives
 *	it up, under the QP's lock
 * @dp_peer_hook: KUnit only: called by the engine once it has found the
 *	responder of a WR and before it takes a receive WR there, on the
 *	owner's context with no lock held
 * @cq_resize_hook: KUnit only: called by resize_cq of one of the
 *	device's CQs once it may resize it, before it looks at the CQ
 * @cq_batch_hook: KUnit only: called by a resize or clean of one of the
 *	device's CQs between two batches, with no lock held
 * @cq_push_hook: KUnit only: called as a completion is added to one of
 *	the device's CQs, before the CQ's lock (its QP's may be held)
 * @qp_gone_hook: KUnit only: called by destroy_qp once the QP's number is
 *	free for another QP
 */
struct rsim_dev {
	struct ib_device ibdev;
	struct platform_device *pdev;
	struct device *dma_dev;
	struct iommu_domain *dma_domain;
	atomic64_t iova_translations;
	u32 id;
	struct rsim_dev_config cfg;
	struct rsim_port port;
	struct rsim_res res[RSIM_RES_NR];
	struct ida pd_ida;
	struct xarray mr_xa;
	u32 mr_next;
	struct xarray ah_xa;
	u32 ah_next;
	struct xarray xsrq_xa;
	u32 xsrq_next;
	atomic_t key_variant;
	atomic64_t qp_serial;
	struct xarray qp_xa;
	u32 qp_next;
	struct rsim_fault_point fault[RSIM_FAULT_NR];
	struct rsim_fault_attr fault_attr[RSIM_FAULT_NR];
	struct rsim_puda_pool *mad_pool;
	struct dentry *debugfs;
	struct workqueue_struct *dp_wq;
	struct workqueue_struct *ev_wq;
	spinlock_t ev_lock;	/* protects ev_list, ev_cur, objects' ev */
	struct list_head ev_list;
	struct rsim_ev *ev_cur;
	struct work_struct ev_work;
	spinlock_t atomic_lock;	/* serializes atomic WRs; BH off */
	spinlock_t stats_lock;	/* protects dp; taken with BH off */
	struct rsim_dp_stats dp;
	atomic64_t user_polls;
	atomic64_t cq_rings;
	atomic64_t user_recv_posts;
	atomic64_t rq_rings;
	atomic64_t recv_doorbells;
	atomic64_t sq_rings;
	atomic64_t send_doorbells;
	atomic64_t user_send_posts;
	atomic64_t odp_faults;
	atomic64_t odp_fault_pages;
	atomic64_t odp_fault_errors;
	atomic64_t odp_invalidations;
	atomic64_t odp_prefetches;
	u32 odp_delay_ms;
	atomic64_t roce_no_route;
	atomic64_t roce_ambiguous;
	netdevice_tracker ndev_tracker;
	struct list_head roce_node;
	bool ndev_gone;
	seqlock_t roce_seg_lock;	/* protects roce_seg */
	struct rsim_roce_seg roce_seg;
	struct list_head subnet_node;
	struct rsim_fab_end link;
	bool fab_member;
	struct rsim_sa_port sa;
	spinlock_t mc_lock;	/* protects mc_grps, mc_ngrps; BH off */
	struct list_head mc_grps;
	u32 mc_ngrps;
	bool dead;
#if IS_ENABLED(CONFIG_KUNIT)
	void (*usq_test_hook)(struct rsim_qp *qp, void *slot);
	void (*dp_test_hook)(struct rsim_qp *qp, int status);
	void (*dp_leave_hook)(struct rsim_qp *qp);
	void (*dp_peer_hook)(struct rsim_qp *qp, struct rsim_qp *peer);
	void (*cq_resize_hook)(struct rsim_cq *cq);
	void (*cq_batch_hook)(struct rsim_cq *cq);
	void (*cq_push_hook)(struct rsim_cq *cq, const struct ib_wc *wc);
	void (*qp_gone_hook)(struct rsim_qp *qp);
#endif
};

/**
 * struct rsim_ucontext - a process's context on the device (uverbs)
 * @ibuc: core object; must be first
 * @map: RSIM_UCTX_MAP_* its provider asked for and got
 */
struct rsim_ucontext {
	struct ib_ucontext ibuc;
	u32 map;
};

/* what a struct rsim_umap holds */
enum rsim_umap_kind {
	RSIM_UMAP_DM,		/* device memory: contiguous pages */
	RSIM_UMAP_RING,		/* a queue ring: pages, vmapped */
};

/**
 * struct rsim_umap - memory a process maps from its uverbs file (umap.c)
 * @entry: its context's mmap entry, which owns it; must be first
 * @kind: &enum rsim_umap_kind
 * @vaddr: the kernel's address of it
 * @len: bytes, whole pages
 * @pages: a ring's pages
 * @npages: how many
 */
struct rsim_umap {
	struct rdma_user_mmap_entry entry;
	u8 kind;
	void *vaddr;
	size_t len;
	struct page **pages;
	unsigned int npages;
};

/**
 * struct rsim_pd - protection domain
 * @ibpd: core object
 * @pdn: its number
 * @odp_mrs: ODP MRs in it (odp.c): while there are any, a send that may
 *	land in its receive buffers runs on the device's worker, where a
 *	page fault may sleep
 */
struct rsim_pd {
	struct ib_pd ibpd;
	u32 pdn;
	atomic_t odp_mrs;
};

struct rsim_ah {
	struct ib_ah ibah;
	struct rdma_ah_attr attr;
	u32 num;
};

/**
 * enum rsim_ev_kind - what a &struct rsim_ev is part of
 * @RSIM_EV_CQ: &struct rsim_cq
 * @RSIM_EV_QP: &struct rsim_qp
 * @RSIM_EV_SRQ: &struct rsim_srq
 */
enum rsim_ev_kind {
	RSIM_EV_CQ,
	RSIM_EV_QP,
	RSIM_EV_SRQ,
};

/**
 * struct rsim_ev - an object's handlers waiting for the dispatcher
 *	(event.c); under &rsim_dev.ev_lock
 * @node: on &rsim_dev.ev_list while @pending is not 0
 * @pending: a CQ's RSIM_NOTIFY_* flags; a QP's or SRQ's events, one bit
 *	per &enum ib_event_type
 * @kind: &enum rsim_ev_kind
 */
struct rsim_ev {
	struct list_head node;
	u32 pending;
	u8 kind;
};

/**
 * struct rsim_cq_seg - the completions a resize has not moved yet
 * @queue: the ring they are in (the CQ's earlier one), or NULL
 * @size: its size
 * @head: index of the oldest
 * @count: how many are left: they come before the CQ's own
 */
struct rsim_cq_seg {
	struct ib_wc *queue;
	u32 size;
	u32 head;
	u32 count;
};

/**
 * struct rsim_cq - completion queue
 * @ibcq: core object; must be first
 * @mutex: orders resize_cq and rsim_cq_clean(), whose steps drop @lock
 *	between bounded batches
 * @lock: protects @queue, @head, @count, @old, @clean_u, @clean_h,
 *	@notify, @overflow, @ring, @prod and @filling
 * @queue: ring of @size completions (NULL for a mapped CQ)
 * @size: ring size (the cqe the consumer asked for; a power of two for a
 *	mapped CQ)
 * @head: index of the oldest completion
 * @count: slots of the ring in use (completions, and @clean_h holes)
 * @old: while a resize moves them, the completions of the ring before
 *	@queue, which are polled first
 * @clean_u: while rsim_cq_clean() runs, the slots from @head on it has
 *	not looked at yet (polled first)
 * @clean_h: the holes it left after them (completions it dropped)
 * @notify: armed notification (0, IB_CQ_SOLICITED or IB_CQ_NEXT_COMP)
 * @overflow: a completion found the ring full: the CQ is in the error
 *	state (IBA 11.4.2.1) and takes no more completions
 * @ring: a user CQ's ring, mapped by its process, or NULL
 * @prod: the ring's producer index: the kernel's own, mirrored to the ring
 *	unless @filling
 * @filling: a resize copies the earlier ring's completions into @ring's
 *	first slots: @prod is published when it is done
 * @ev: its handlers, when the dispatcher runs them
 */
struct rsim_cq {
	struct ib_cq ibcq;
	/* orders resizes and cleans (each drops @lock between batches) */
	struct mutex mutex;
	/*
	 * protects queue, head, count, old, clean_u, clean_h, notify,
	 * overflow, ring, prod, filling
	 */
	spinlock_t lock;
	struct ib_wc *queue;
	u32 size;
	u32 head;
	u32 count;
	struct rsim_cq_seg old;
	u32 clean_u;
	u32 clean_h;
	u8 notify;
	bool overflow;
	bool filling;
	struct rsim_umap *ring;
	u32 prod;
	struct rsim_ev ev;
};

/* completions a resize or a clean moves per hold of a CQ's lock */
#define RSIM_CQ_BATCH		64

/*
 * What a completion did, for rsim_notify_run(): RSIM_NOTIFY_COMP runs the
 * CQ's completion handler, RSIM_NOTIFY_ERR raises IB_EVENT_CQ_ERR.
 */
#define RSIM_NOTIFY_COMP	BIT(0)
#define RSIM_NOTIFY_ERR		BIT(1)

/**
 * struct rsim_notify - handlers and events to deliver once no lock is held
 * @cq: CQs that got completions, with RSIM_NOTIFY_* flags
 * @cq.cq: the CQ
 * @cq.flags: what to deliver
 * @ncq: used entries of @cq
 * @fatal: QPs that lost a completion to a full CQ: they enter the error
 *	state and get IB_EVENT_QP_FATAL
 * @nfatal: used entries of @fatal
 * @resp: an RC responder a request put in the error state without a
 *	receive completion to say why, or NULL; held by the engine step
 * @resp_event: the affiliated error it gets (IBA 11.6.3.1):
 *	IB_EVENT_QP_ACCESS_ERR or IB_EVENT_QP_REQ_ERR
 * @last_wqe: QPs of an SRQ that entered the error state: they get
 *	IB_EVENT_QP_LAST_WQE_REACHED
 * @nlast: used entries of @last_wqe
 *
 * One engine step touches at most two QPs (requester and responder) and
 * their send and receive CQs.
 */
struct rsim_notify {
	struct {
		struct rsim_cq *cq;
		u8 flags;
	} cq[4];
	unsigned int ncq;
	struct rsim_qp *fatal[2];
	unsigned int nfatal;
	struct rsim_qp *resp;
	enum ib_event_type resp_event;
	struct rsim_qp *last_wqe[2];
	unsigned int nlast;
};

/**
 * struct rsim_mem_ref - a checked range of registered memory
 * @rsim: the device whose memory (and DMA address space) it is
 * @mr: the MR (a reference is held), or NULL for the local DMA lkey
 *	(identity translation)
 * @gen: the MR's registration generation when the range was checked: a
 *	LOCAL_INV, re-registration or dereg in between makes it stale
 * @mw: the memory window an rkey named (a reference is held), whose MR is
 *	@mr, or NULL
 * @mw_gen: @mw's generation when the range was checked: an invalidation,
 *	a bind or dealloc in between makes it stale
 * @off: offset of the range from the MR's registered iova
 * @len: bytes
 */
struct rsim_mem_ref {
	struct rsim_dev *rsim;
	struct rsim_mr *mr;
	u32 gen;
	struct rsim_mw *mw;
	u32 mw_gen;
	u64 off;
	u64 len;
};

/**
 * struct rsim_placement_wr - what a FLUSH or ATOMIC_WRITE WR asks (a send
 *	ring's slot: IBA annex A19's memory placement operations)
 * @remote_addr: the target address (ATOMIC_WRITE: 8-byte aligned)
 * @rkey: the target key
 * @length: FLUSH with IB_FLUSH_RANGE: the range's bytes
 * @value: ATOMIC_WRITE: the 8 bytes written, as in memory
 * @type: FLUSH: IB_FLUSH_GLOBAL and/or IB_FLUSH_PERSISTENT
 * @level: FLUSH: IB_FLUSH_RANGE or IB_FLUSH_MR
 */
struct rsim_placement_wr {
	u64 remote_addr;
	u32 rkey;
	u64 length;
	u64 value;
	u8 type;
	u8 level;
};

/**
 * struct rsim_mw_bind - what a BIND_MW WR asks (a send ring's slot)
 * @mw_rkey: the window's current rkey
 * @mr_lkey: the MR to bind it to
 * @rkey: the window's new rkey (its low 8 bits are the new variant)
 * @access: IB_ACCESS_* of the window
 * @addr: first address, in the MR's address space
 * @length: bytes; 0 unbinds a type 1 window
 */
struct rsim_mw_bind {
	u32 mw_rkey;
	u32 mr_lkey;
	u32 rkey;
	int access;
	u64 addr;
	u64 length;
};

/**
 * struct rsim_recv_wqe - a posted receive WR
 * @wr_id: consumer's cookie
 * @num_sge: entries in @sge
 * @sge: scatter list
 */
struct rsim_recv_wqe {
	u64 wr_id;
	u32 num_sge;
	struct ib_sge sge[];
};

/**
 * struct rsim_send_wqe - a posted send WR
 * @wr_id: consumer's cookie
 * @opcode: IB_WR_*
 * @send_flags: IB_SEND_*
 * @num_sge: entries in @sge (0 for inline data)
 * @inline_len: bytes of inline data, stored where @sge would be
 * @len: message bytes (the gather list's total; inline: @inline_len)
 * @imm: immediate data (*_WITH_IMM)
 * @inv: rkey to invalidate (SEND_WITH_INV, LOCAL_INV)
 * @remote_addr: RDMA, atomic, FLUSH or ATOMIC_WRITE target address
 * @rkey: RDMA, atomic, FLUSH or ATOMIC_WRITE target key
 * @compare_add: CMP_AND_SWP: the value compared; FETCH_AND_ADD: added
 * @swap: CMP_AND_SWP: the value written if the compare matched;
 *	ATOMIC_WRITE: the 8 bytes written (as in memory)
 * @flush_len: FLUSH with IB_FLUSH_RANGE: the range's bytes (0: none)
 * @flush_type: FLUSH: IB_FLUSH_GLOBAL and/or IB_FLUSH_PERSISTENT
 * @flush_level: FLUSH: IB_FLUSH_RANGE or IB_FLUSH_MR (the whole region
 *	the rkey names)
 * @mr: REG_MR: the MR
 * @key: REG_MR: the key to register it with
 * @access: REG_MR: IB_ACCESS_* of the registration
 * @ah: UD: the address vector of ud_wr(wr)->ah, copied when posted
 * @remote_qpn: UD: destination QP
 * @remote_qkey: UD: Q_Key (high bit set: the sending QP's own)
 * @bind: BIND_MW (a mapped send queue's only): the window and its range
 * @xrc_srqn: an XRC INI QP's WR: the XRC SRQ it names at the responder
 * @bad: a mapped send queue's WR that broke a posting rule (usq.c): it
 *	completes with IB_WC_LOC_QP_OP_ERR when it reaches the head
 * @sge: gather list, or the inline data
 */
struct rsim_send_wqe {
	u64 wr_id;
	enum ib_wr_opcode opcode;
	int send_flags;
	u32 num_sge;
	u32 inline_len;
	u64 len;
	__be32 imm;
	u32 inv;
	u64 remote_addr;
	u32 rkey;
	u64 compare_add;
	u64 swap;
	u64 flush_len;
	u8 flush_type;
	u8 flush_level;
	struct ib_mr *mr;
	u32 key;
	int access;
	struct rdma_ah_attr ah;
	u32 remote_qpn;
	u32 remote_qkey;
	struct rsim_mw_bind bind;
	u32 xrc_srqn;
	bool bad;
	struct ib_sge sge[];
};

/**
 * struct rsim_wq - a send or receive work queue (ring of WR slots)
 * @max_wr: depth
 * @max_sge: scatter/gather entries per WR
 * @wqe_size: bytes per slot
 * @ring: @max_wr slots of @wqe_size bytes (a queue of the kernel's)
 * @head: oldest posted WR; of a mapped queue, the kernel's consumer index
 *	(free-running)
 * @count: posted WRs; of a mapped queue, those the last take found
 *	posted after the one it took
 * @umap: a queue's ring mapped by its process, or NULL: its provider
 *	writes the WRs into the slots of this ring (a receive queue's,
 *	urq.c, or a send queue's, usq.c)
 * @nslots: slots of @umap, a power of two (at least @max_wr)
 * @db: RSIM_URING_F_DOORBELL as the kernel last wrote it to @umap
 * @ucons: a mapped send queue's WRs completed (free-running), mirrored
 *	in @umap's cons
 * @ustride: a mapped send queue's slot bytes
 * @uslot: a mapped send queue's copy of the slot a doorbell reads (set
 *	for a mapped send queue only)
 * @held: an SRQ's WRs still in its ring from before a resize (srq.c),
 *	which count against @max_wr: posts find the room less by them, and
 *	a mapped ring's consumer index, as the process reads it, is @head
 *	less them
 */
struct rsim_wq {
	u32 max_wr;
	u32 max_sge;
	size_t wqe_size;
	void *ring;
	u32 head;
	u32 count;
	struct rsim_umap *umap;
	u32 nslots;
	bool db;
	u32 ucons;
	u32 ustride;
	void *uslot;
	u32 held;
};

/**
 * struct rsim_srq - a shared receive queue (srq.c)
 * @ibsrq: core object; must be first
 * @lock: protects @rq, @limit and @waiters; taken with interrupts off, or
 *	nested inside a QP's lock (which has them off)
 * @rq: the receive WRs
 * @limit: the armed limit (IB_EVENT_SRQ_LIMIT_REACHED when fewer WRs
 *	remain), or 0
 * @waiters: RC QPs of the SRQ (by &rsim_qp.srq_wait) whose requester met
 *	an RNR NAK because the SRQ was empty: the next post_srq_recv hands
 *	their wake-ups to the worker
 * @ev: its events, when the dispatcher raises them
 * @old: the ring before the last resize: its WRs (@rq.held of them) are
 *	taken before @rq's, in order; freed at the next resize or destroy
 *	(under @lock, except its freeing)
 * @resize_mutex: serializes resizes
 * @srqn: an XRC SRQ's number (in &rsim_dev.xsrq_xa), or 0
 * @ref: an XRC SRQ's: the data path's references (rsim_xsrq_get()) and
 *	one dropped by destroy, which waits for the others
 */
struct rsim_srq {
	struct ib_srq ibsrq;
	spinlock_t lock;	/* protects rq, old, limit, waiters; irqs off */
	struct rsim_wq rq;
	u32 limit;
	struct list_head waiters;
	struct rsim_ev ev;
	struct rsim_wq old;
	struct mutex resize_mutex;	/* serializes modify_srq's resizes */
	u32 srqn;
	refcount_t ref;
};

/**
 * struct rsim_xrcd - an XRC domain (srq.c): the core keeps what it
 *	shares (its inode, its TGT QPs); XRC SRQs and TGT QPs name it
 * @ibxrcd: core object
 */
struct rsim_xrcd {
	struct ib_xrcd ibxrcd;
};

/**
 * enum rsim_sq_owner - who executes a send queue (see dp.c)
 * @RSIM_SQ_IDLE: nobody: a post may run it at once
 * @RSIM_SQ_RUNNING: a context is executing it, inline or the worker; only
 *	that context moves the head or flushes the queue
 * @RSIM_SQ_QUEUED: the worker is queued to run it
 * @RSIM_SQ_RNR: its head is a SEND that met an RNR NAK, or an RC WR no
 *	responder answered (&rsim_qp.ack_wait); the worker is armed as the
 *	RNR timer unless rnr_retry is 7, or as the transport timer unless
 *	timeout is 0 (wait for ever)
 */
enum rsim_sq_owner {
	RSIM_SQ_IDLE,
	RSIM_SQ_RUNNING,
	RSIM_SQ_QUEUED,
	RSIM_SQ_RNR,
};

/**
 * struct rsim_qp - queue pair
 * @ibqp: core object; must be first
 * @lock: protects @state, @attr, @sq, @rq, @owner, @rnr_tries,
 *	@ack_tries, @ack_wait, @rnr_wake, @sqd_notify, @dying, @stopping and
 *	@steer_cpu
 * @modify_mutex: serializes modify_qp calls, so that none overtakes a
 *	transition to RESET while it waits for the send queue's owner
 * @serial: never reused on the device (a type 2 window names its QP by it)
 * @ref: lookups by QP number hold a reference (the data path while it
 *	touches this QP as responder, a poster waking this QP's RNR wait);
 *	destroy_qp drops the initial one and waits for 0
 * @state: current state
 * @attr: attributes set through modify_qp
 * @sq: send queue
 * @rq: receive queue
 * @owner: who executes the send queue (&enum rsim_sq_owner)
 * @rnr_tries: RNR retries spent on the send queue's head
 * @ack_tries: transport retries spent on it (no responder answered)
 * @ack_wait: a RSIM_SQ_RNR owner waits on the transport timer, not on
 *	an RNR NAK
 * @rnr_wake: its responder woke it while it was not parked (RUNNING or
 *	QUEUED): if the head is about to wait (RNR, or no answer), it is
 *	retried at once instead, since the wake-up will not come again
 * @sqd_notify: SQD with en_sqd_async_notify while a WR was in execution:
 *	IB_EVENT_SQ_DRAINED when its owner gives the queue up
 * @dying: destroy_qp has started: no lookup finds the QP
 * @stopping: destroy_qp or a transition to RESET waits for the send
 *	queue's owner (rsim_dp_stop()): nobody claims the queue, queues the
 *	worker or takes the queue over on the worker until it is cleared
 * @sq_sig_all: IB_SIGNAL_ALL_WR
 * @mc_no_loopback: IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK: its multicast
 *	datagrams reach no QP of its own port
 * @max_inline: inline data limit
 * @cpu: the worker's CPU for this QP, or WORK_CPU_UNBOUND (the online
 *	CPU after the one that hands the work over)
 * @steer_cpu: the CPU a DMA handle moved the head WR to, or -1; the
 *	worker runs there until that WR completes (under @lock)
 * @work: the worker (immediate, or delayed as the RNR timer)
 * @wake_work: wakes the requester connected to this QP, for a receive WR
 *	posted where the QP table cannot be looked up (hard IRQ), or posted
 *	to this QP's SRQ
 * @srq_wait: on its SRQ's @waiters list (under the SRQ's lock)
 * @lrefs: the requester's checked gather (or READ scatter) list, max_sge
 *	entries; used only by the owner of the send queue
 * @rrefs: the responder's checked scatter list, RSIM_RECV_SGE_CEIL entries;
 *	used only by the owner of the send queue
 * @rwqe: the receive WR a SEND took from the responder; likewise
 * @ev: its events, when the dispatcher raises them
 */
struct rsim_qp {
	struct ib_qp ibqp;
	spinlock_t lock;	/* protects state, attr, sq, rq, owner, ... */
	struct mutex modify_mutex;	/* serializes modify_qp */
	u64 serial;
	refcount_t ref;
	enum ib_qp_state state;
	struct ib_qp_attr attr;
	struct rsim_wq sq;
	struct rsim_wq rq;
	u8 owner;
	u8 rnr_tries;
	u8 ack_tries;
	bool ack_wait;
	bool rnr_wake;
	bool sqd_notify;
	bool dying;
	bool stopping;
	bool sq_sig_all;
	bool mc_no_loopback;
	u32 max_inline;
	int cpu;
	int steer_cpu;
	struct delayed_work work;
	struct work_struct wake_work;
	struct list_head srq_wait;
	struct rsim_mem_ref *lrefs;
	struct rsim_mem_ref *rrefs;
	struct rsim_recv_wqe *rwqe;
	struct rsim_ev ev;
};

/**
 * enum rsim_mr_state - fast-registration state of an MR
 * @RSIM_MR_FREE: no valid translation (after alloc_mr or LOCAL_INV, and
 *	for ever after dereg)
 * @RSIM_MR_VALID: registered; keys accepted by the data path
 */
enum rsim_mr_state {
	RSIM_MR_FREE,
	RSIM_MR_VALID,
};

/**
 * struct rsim_mr_seg - one translation entry
 * @addr: DMA address (a kernel consumer's map_mr_sg), if the registration
 *	is not in pages
 * @page: first page of the entry (pinned user memory, device memory), if
 *	it is: the entry's bytes are physically contiguous from its start
 * @len: bytes (page_size for MEM_REG, the sg entry length for SG_GAPS)
 */
struct rsim_mr_seg {
	union {
		u64 addr;
		struct page *page;
	};
	u64 len;
};

/**
 * struct rsim_mr_hints - what a DMA handle asks of the data path for an MR
 * @cpu: work that targets the MR runs on this CPU's worker, or -1
 * @pmem: persistent memory: writes into the MR use cache-flushing copies
 * @ph: the TPH processing hint (0-3), counted per access, or -1
 */
struct rsim_mr_hints {
	int cpu;
	bool pmem;
	s8 ph;
};

/**
 * struct rsim_mr - memory region
 * @ibmr: core object
 * @rsim: owning device
 * @lock: protects @state, @reg and @nmw; the data path holds it while it
 *	copies a chunk (at most 64 KiB) to or from the MR, so that once
 *	LOCAL_INV, REG_MR or dereg has held it, no access checked against
 *	the old registration writes or reads any more
 * @ref: the data path's references (see &struct rsim_mem_ref) plus one
 *	dropped by dereg; the last one frees the MR
 * @type: what alloc_mr/get_dma_mr/reg_user_mr created
 * @state: FRWR state
 * @index: key index (lkey >> 8)
 * @access: IB_ACCESS_* flags
 * @page_size: page size of the current translation (MEM_REG)
 * @first_off: offset of the mapped iova into @segs[0] (MEM_REG)
 * @max_segs: capacity of @segs (max_num_sg)
 * @nsegs: entries in @segs
 * @segs: translation: pages (MEM_REG) or sg entries (SG_GAPS), as
 *	map_mr_sg wrote it (the "descriptor list" the consumer builds)
 * @umem: pinned user memory (reg_user_mr)
 * @umtt: its translation, one entry per page (@reg.mtt points here)
 * @dmah: the DMA handle it was registered with (held), or NULL
 * @hints: what @dmah asks of the data path (none without one)
 * @reg: what the data path uses, copied from the fields above by REG_MR
 *	(as a device copies the descriptor list into its translation table,
 *	so a later map_mr_sg cannot change a valid registration)
 * @reg.gen: bumped by every REG_MR, invalidation and dereg
 * @reg.key: the valid lkey and rkey
 * @reg.access: IB_ACCESS_* of the registration
 * @reg.iova: first address
 * @reg.length: bytes
 * @reg.page_size: page size (0: @reg.mtt entries have their own lengths)
 * @reg.first_off: offset of @reg.iova into @reg.mtt[0]
 * @reg.nsegs: entries in @reg.mtt
 * @reg.pages: @reg.mtt holds pages, not DMA addresses (see dp.c's
 *	rsim_ref_map())
 * @reg.mtt: translation; NULL for DMA MRs (identity)
 * @nmw: memory windows bound to it (mw.c): while there are any, it cannot
 *	be invalidated, re-registered or deregistered
 * @odp: an on-demand-paging MR's pages (odp.c), or NULL
 */
struct rsim_mr {
	struct ib_mr ibmr;
	struct rsim_dev *rsim;
	spinlock_t lock;	/* protects state, reg, nmw; see above */
	refcount_t ref;
	enum ib_mr_type type;
	enum rsim_mr_state state;
	u32 index;
	int access;
	unsigned int page_size;
	u32 first_off;
	u32 max_segs;
	u32 nsegs;
	struct rsim_mr_seg *segs;
	struct ib_umem *umem;
	struct rsim_mr_seg *umtt;
	struct ib_dmah *dmah;
	struct rsim_mr_hints hints;
	struct {
		u32 gen;
		u32 key;
		int access;
		u64 iova;
		u64 length;
		u32 page_size;
		u32 first_off;
		u32 nsegs;
		bool pages;
		struct rsim_mr_seg *mtt;
	} reg;
	u32 nmw;
	struct rsim_odp *odp;
};

/**
 * struct rsim_mw - a memory window (mw.c), the device's side of it
 * @rsim: owning device
 * @ibmw: the core's object; NULL once deallocated (the data path may
 *	hold this struct a little longer)
 * @lock: protects @state, @mr, @rkey, @addr, @length, @access and
 *	@qp_serial; @gen is written under it and under the bound MR's lock,
 *	so that the data path reads it under either (taken before any MR's
 *	lock)
 * @ref: the data path's references (&struct rsim_mem_ref) plus one
 *	dropped by dealloc; the last one frees it
 * @type: IB_MW_TYPE_1 or IB_MW_TYPE_2 (2B: bound to a QP)
 * @pd: its PD
 * @index: key index, in the MRs' key space
 * @bound: bound to @mr; a type 2 window is FREE when it is not
 * @dead: deallocated
 * @gen: bumped by every bind, invalidation and dealloc
 * @rkey: the current rkey
 * @mr: the MR it is bound to (a reference held, counted in its @nmw)
 * @addr: first address of the window
 * @length: bytes
 * @access: IB_ACCESS_REMOTE_* it grants
 * @qp_serial: type 2: the &rsim_qp.serial of the QP it is bound to
 */
struct rsim_mw {
	struct rsim_dev *rsim;
	struct ib_mw *ibmw;
	spinlock_t lock;	/* protects the binding; BH off; see above */
	refcount_t ref;
	enum ib_mw_type type;
	struct ib_pd *pd;
	u32 index;
	bool bound;
	bool dead;
	u32 gen;
	u32 rkey;
	struct rsim_mr *mr;
	u64 addr;
	u64 length;
	int access;
	u64 qp_serial;
};

/* the core's memory window: the device's side is allocated apart */
struct rsim_ibmw {
	struct ib_mw ibmw;
	struct rsim_mw *mw;
};

/*
 * Does [@addr, @addr + @len) lie within [@base, @base + @blen)? Without
 * overflow, whatever the values (an MR's registration, a window, a bind).
 */
static inline bool rsim_range_in(u64 base, u64 blen, u64 addr, u64 len)
{
	return addr >= base && addr - base <= blen &&
	       len <= blen - (addr - base);
}

static inline struct rsim_dev *to_rsim_dev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct rsim_dev, ibdev);
}

/* a RoCE-mode device: an Ethernet port bound to a netdev (roce.c) */
static inline bool rsim_is_roce(const struct rsim_dev *rsim)
{
	return rsim->cfg.ndev;
}

static inline struct rsim_pd *to_rsim_pd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct rsim_pd, ibpd);
}

static inline struct rsim_ah *to_rsim_ah(struct ib_ah *ibah)
{
	return container_of(ibah, struct rsim_ah, ibah);
}

static inline struct rsim_cq *to_rsim_cq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct rsim_cq, ibcq);
}

static inline struct rsim_srq *to_rsim_srq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct rsim_srq, ibsrq);
}

static inline struct rsim_qp *to_rsim_qp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct rsim_qp, ibqp);
}

/* a datagram QP: UD, or the MAD layer's SMI (QP0) and GSI (QP1) */
static inline bool rsim_qp_is_ud(const struct rsim_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_SMI ||
	       qp->ibqp.qp_type == IB_QPT_GSI;
}

/*
 * reliable connected: RC, and XRC (an XRC INI QP requests as an RC QP
 * does, an XRC TGT QP responds as one)
 */
static inline bool rsim_qp_is_rc(const struct rsim_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_RC ||
	       qp->ibqp.qp_type == IB_QPT_XRC_INI ||
	       qp->ibqp.qp_type == IB_QPT_XRC_TGT;
}

/* the MAD layer's QP0 or QP1 */
static inline bool rsim_qp_is_special(const struct rsim_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_SMI || qp->ibqp.qp_type == IB_QPT_GSI;
}

static inline struct rsim_mr *to_rsim_mr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct rsim_mr, ibmr);
}

#define rsim_dbg(rsim, fmt, ...)					\
	ibdev_dbg(&(rsim)->ibdev, "%s: " fmt, __func__, ##__VA_ARGS__)
#define rsim_err_ratelimited(rsim, fmt, ...)				\
	ibdev_err_ratelimited(&(rsim)->ibdev, "%s: " fmt, __func__,	\
			      ##__VA_ARGS__)

/* dma_pci.c */
int rsim_dma_pci_init(void);
void rsim_dma_pci_exit(void);
void rsim_dma_pci_lock(void);
void rsim_dma_pci_unlock(void);
int rsim_dma_pci_get(const char *name, struct pci_dev **pdevp);
void rsim_dma_pci_put_new(struct pci_dev *pdev, int bound);
void rsim_dma_pci_forget(struct device *dev);
int rsim_dma_dev_select(struct rsim_dev *rsim, struct pci_dev *pdev);
const char *rsim_dma_domain_name(struct device *dev);
phys_addr_t rsim_dma_to_phys(struct rsim_dev *rsim, u64 dma);

/* main.c (and testing.h) */
void rsim_del_dma_users(struct device *dev);
#ifdef RSIM_MODPARAMS
/*
 * modparams.c: the out-of-tree build's module parameters; the upstream
 * form has none (make upstream leaves out the file and every
 * RSIM_MODPARAMS block, and writes RSIM_DEFAULT_BASE_LID for the base LID)
 */
unsigned int rsim_param_base_lid(void);
bool rsim_param_sa(void);
struct pci_dev *rsim_param_dma_pci(void);
int rsim_modparams_init(void);
void rsim_modparams_exit(void);
#endif
struct rsim_dev *rsim_dev_new_roce(const char *name, struct net_device *ndev);
void rsim_dev_reap(void);

/* roce.c */
int rsim_roce_init(void);
void rsim_roce_stop(void);
void rsim_roce_exit(void);
bool rsim_roce_bound(const struct net_device *ndev);
int rsim_roce_bind(struct rsim_dev *rsim);
int rsim_roce_watch(struct rsim_dev *rsim);
/* where a RoCE-mode device's probe calls rsim_roce_probe_hook (KUnit) */
enum {
	RSIM_ROCE_STAGE_BIND,		/* before rsim_roce_bind() */
	RSIM_ROCE_STAGE_BOUND,		/* bound, not registered yet */
	RSIM_ROCE_STAGE_REGISTERED,	/* registered, before rsim_roce_watch() */
};

void rsim_roce_set_probe_hook(void (*hook)(struct rsim_dev *rsim, int stage));
void rsim_roce_del(struct rsim_dev *rsim);
enum ib_mtu rsim_roce_mtu(const struct net_device *ndev);
struct rsim_dev *rsim_roce_route(struct rsim_dev *from,
				 const union ib_gid *dgid);
int rsim_roce_build_hdr(const struct ib_global_route *g,
			const union ib_gid *sgid, u32 len,
			union rdma_network_hdr *hdr);
int rsim_roce_hdr(struct rsim_dev *rsim, const struct ib_global_route *g,
		  u32 len, union rdma_network_hdr *hdr, union ib_gid *sgid);

/* subnet.c */
void rsim_subnet_lock_bh(void);
void rsim_subnet_unlock_bh(void);
bool rsim_subnet_lid_used(const struct rsim_dev *rsim, u16 lid);
void rsim_subnet_sweep_locked(struct rsim_dev *keep);
void rsim_subnet_sweep(void);
int rsim_subnet_join(struct rsim_dev *rsim);
void rsim_subnet_leave(struct rsim_dev *rsim);
struct rsim_dev *rsim_subnet_route(struct rsim_dev *from, u16 dlid);
void rsim_subnet_put(struct rsim_dev *from, struct rsim_dev *to);
int rsim_subnet_for_each(int (*fn)(struct rsim_dev *d, void *arg), void *arg);
u32 rsim_subnet_ports(void);
bool rsim_subnet_lid_guid(u16 lid, __be64 *guid);
bool rsim_subnet_has_guid(__be64 guid);
struct rsim_dev *rsim_subnet_get_by_name(const char *name);

/*
 * sa.c: the subnet administrator's answers (IBA 15). The SA class
 * version, the SA's own MAD statuses (IBA 15.2.1.1: bits 8-14 of the MAD
 * status) and the records' sizes on the wire.
 */
#define RSIM_SA_CLASS_VERSION		2
#define RSIM_SA_ERR_NO_RESOURCES	0x0100
#define RSIM_SA_ERR_REQ_INVALID		0x0200
#define RSIM_SA_ERR_NO_RECORDS		0x0300
#define RSIM_SA_ERR_TOO_MANY_RECORDS	0x0400
#define RSIM_SA_ERR_REQ_INVALID_GID	0x0500
#define RSIM_SA_ERR_REQ_INSUFFICIENT_COMPONENTS	0x0600
#define RSIM_SA_ERR_REQ_DENIED		0x0700
#define RSIM_SA_NODE_REC_LEN		108
#define RSIM_SA_PORTINFO_REC_LEN	68
#define RSIM_SA_PATH_REC_LEN		64
#define RSIM_SA_MCM_REC_LEN		52
/*
 * the most records one answer carries (a GetTable of PathRecords grows as
 * the square of the ports)
 */
#define RSIM_SA_MAX_RECORDS		4096
/* what a path or a group gets when the request does not say */
#define RSIM_SA_PLT			0x12	/* 4.096 us * 2^18: opensm's */
#define RSIM_SA_PATH_RATE		IB_RATE_100_GBPS	/* 4X EDR */
#define RSIM_SA_MCG_MTU			IB_MTU_2048
#define RSIM_SA_MCG_RATE		IB_RATE_10_GBPS
#define RSIM_SA_IPOIB_QKEY		0x0b1b
#define RSIM_SA_MLID_FIRST		0xc000
#define RSIM_SA_MLID_LAST		0xfffe
/* MLIDs kept for IPoIB's groups, and the groups a port may be in (mcast.c) */
#define RSIM_SA_MLID_RESERVE		1024
#define RSIM_SA_MCG_PORT_MEMBERS	256

/**
 * struct rsim_sa_query - one request to the SA, as its MAD carried it
 * @method: IB_MGMT_METHOD_GET, _SET, IB_SA_METHOD_GET_TABLE or _DELETE
 * @attr_id: the attribute (IB_SA_ATTR_*), CPU order
 * @comp_mask: the component mask, CPU order
 * @rec: the record, IB_MGMT_SA_DATA bytes (the MAD's SA data)
 * @slid: the requester's LID (the MAD's source)
 */
struct rsim_sa_query {
	u8 method;
	u16 attr_id;
	u64 comp_mask;
	const u8 *rec;
	u16 slid;
};

/**
 * struct rsim_sa_answer - the SA's answer to a query
 * @status: a MAD status, IB_MGMT_MAD_STATUS_* or RSIM_SA_ERR_*, CPU order
 * @attr_offset: the distance between records, in 8-byte words
 * @count: records in @table
 * @room: records @table holds (rsim_sa_table())
 * @table: @count records, @attr_offset * 8 bytes apart (kvfree()), or
 *	NULL
 */
struct rsim_sa_answer {
	u16 status;
	u16 attr_offset;
	u32 count;
	u32 room;
	u8 *table;
};

/**
 * enum rsim_sa_cmp - how a component of a query is matched
 * @RSIM_SA_CMP_EQ: the bits are equal
 * @RSIM_SA_CMP_SEL: a selector: not compared itself
 * @RSIM_SA_CMP_MTU: an enum ib_mtu, compared as its selector says
 * @RSIM_SA_CMP_RATE: an enum ib_rate, compared by speed as its selector says
 * @RSIM_SA_CMP_PLT: a packet lifetime, compared as its selector says
 * @RSIM_SA_CMP_SUBSET: the query's bits are all set in the record's
 *	(CapabilityMask, as opensm matches it)
 * @RSIM_SA_CMP_SKIP: not a filter (a parameter of the request)
 * @RSIM_SA_CMP_RESERVED: a reserved component: a query naming it is invalid
 */
enum rsim_sa_cmp {
	RSIM_SA_CMP_RESERVED,
	RSIM_SA_CMP_EQ,
	RSIM_SA_CMP_SEL,
	RSIM_SA_CMP_MTU,
	RSIM_SA_CMP_RATE,
	RSIM_SA_CMP_PLT,
	RSIM_SA_CMP_SUBSET,
	RSIM_SA_CMP_SKIP,
};

/**
 * struct rsim_sa_field - one component of a record on the wire
 * @bit: its first bit, counted from the record's first byte, MSB first
 * @bits: its width
 * @cmp: how a query matches it
 */
struct rsim_sa_field {
	u16 bit;
	u16 bits;
	u8 cmp;
};

u64 rsim_sa_get_bits(const u8 *rec, u16 bit, u16 bits);
void rsim_sa_put_bits(u8 *rec, u16 bit, u16 bits, u64 val);
u16 rsim_sa_check_mask(const struct rsim_sa_field *f, int n, u64 comp);
bool rsim_sa_match(const struct rsim_sa_field *f, int n, u64 comp,
		   const u8 *query, const u8 *rec);
bool rsim_sa_sel_ok(u8 cmp, u8 sel, u8 want, u8 have);
int rsim_sa_answer(const struct rsim_sa_query *q, struct rsim_sa_answer *a);
void rsim_sa_answer_free(struct rsim_sa_answer *a);
u8 *rsim_sa_table(struct rsim_sa_answer *a, u32 max, u16 rec_len);
bool rsim_sa_add(struct rsim_sa_answer *a, const u8 *rec, u16 rec_len);

struct seq_file;
/* mcast.c: the SA's multicast groups (MCMemberRecord) */
int rsim_mcast_init(void);
void rsim_mcast_exit(void);
int rsim_mcast_answer(const struct rsim_sa_query *q, __be64 requester,
		      struct rsim_sa_answer *a);
void rsim_mcast_port_gone(__be64 guid);
void rsim_mcast_set_limits(u32 port_members, u16 mlid_last);
u64 rsim_mcast_refused(bool port);
void rsim_mcast_show(struct seq_file *m);
bool rsim_mcast_port_receives(u16 mlid, __be64 guid);

/* sa_agent.c: the SA's MAD agent, faults and debugfs */
int rsim_sa_init(void);
void rsim_sa_exit(void);
int rsim_sa_start(void);
void rsim_sa_stop(void);
void rsim_sa_debugfs_init(struct dentry *root);
void rsim_sa_serve(bool on);
int rsim_dp_wire_init(void);
void rsim_dp_wire_exit(void);
int rsim_dp_mad_inject(struct rsim_dev *to, u32 qpn, const void *mad,
		       u32 len, u16 slid);

/* mcast_dp.c: QPs attached to multicast groups, a datagram's receivers */
#define RSIM_MC_GROUPS		1024	/* max_mcast_grp */
#define RSIM_MC_QP_ATTACH	56	/* max_mcast_qp_attach, as rxe */
/* the most QPs one multicast datagram reaches, the subnet over */
#define RSIM_MC_FANOUT		256

/**
 * struct rsim_mc_dest - one receiver of a multicast datagram
 * @rsim: its device
 * @qpn: its QP number
 * @serial: the serial of the QP that was attached (&rsim_qp.serial)
 * @held: @rsim is held (rsim_mcast_dests_put() lets it go)
 */
struct rsim_mc_dest {
	struct rsim_dev *rsim;
	u64 serial;
	u32 qpn;
	bool held;
};

int rsim_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int rsim_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
void rsim_mcast_qp_gone(struct rsim_qp *qp);
int rsim_mcast_dests(struct rsim_dev *from, bool loopback, u16 mlid,
		     const union ib_gid *mgid, struct rsim_mc_dest *dest,
		     int max);
void rsim_mcast_dests_put(struct rsim_mc_dest *dest, int n);
void rsim_mcast_dev_init(struct rsim_dev *rsim);
struct rsim_fault_point *rsim_sa_fault_point(int site);
void rsim_sa_fault_settings(u16 attr_id, u16 status, u32 delay_ms);
u64 rsim_sa_served(void);

/* dev.c (and testing.h) */
int rsim_dev_probe(struct platform_device *pdev,
		   const struct rsim_dev_config *cfg);
void rsim_dev_remove(struct platform_device *pdev);
bool rsim_res_get(struct rsim_dev *rsim, enum rsim_res_type type);
void rsim_res_put(struct rsim_dev *rsim, enum rsim_res_type type);
int rsim_dev_lid(u16 cfg_lid, unsigned int base_lid, u32 id, u16 *lid);
extern const struct rsim_limits rsim_default_limits;

/* dev.c (and testing.h) */
u16 rsim_port_pkey(const struct rsim_dev *rsim, u16 index);

/* Port events a change raises (rsim_port_dispatch()) */
#define RSIM_PORT_EV_ERR	BIT(0)	/* left Active: IB_EVENT_PORT_ERR */
#define RSIM_PORT_EV_ACTIVE	BIT(1)	/* became Active */
#define RSIM_PORT_EV_LID	BIT(2)	/* LID changed */
#define RSIM_PORT_EV_SM		BIT(3)	/* SM LID or SL changed */
#define RSIM_PORT_EV_REREG	BIT(4)	/* ClientReregister */
#define RSIM_PORT_EV_PKEY	BIT(5)	/* the P_Key table changed */
u32 rsim_port_set_state_locked(struct rsim_port *port,
			       enum ib_port_state state, u8 phys_state);
void rsim_port_dispatch(struct rsim_dev *rsim, u32 events);
bool rsim_port_state_step(u8 req, u8 phys, u8 *state);
void rsim_port_set_link(struct rsim_dev *rsim, bool up);
bool rsim_port_passes(struct rsim_dev *rsim, enum ib_qp_type sender);

/* pd.c */
extern const struct ib_device_ops rsim_pd_ops;
extern const struct ib_device_ops rsim_srq_ops;
int rsim_ah_attr_check(struct rsim_dev *rsim, const struct rdma_ah_attr *ah);

/* srq.c: XRC */
extern const struct ib_device_ops rsim_xrc_ops;
struct rsim_srq *rsim_xsrq_get(struct rsim_dev *rsim, u32 srqn,
			       const struct ib_xrcd *xrcd);
void rsim_xsrq_put(struct rsim_srq *srq);

/* mr.c (and testing.h) */
extern const struct ib_device_ops rsim_mr_ops;
extern atomic_t rsim_odp_mrs;
void rsim_mr_init(struct rsim_dev *rsim);
void rsim_mr_exit(struct rsim_dev *rsim);
enum ib_wc_status rsim_mr_fast_reg(struct rsim_dev *rsim, struct ib_pd *pd,
				   struct ib_mr *ibmr, u32 key, int access);
enum ib_wc_status rsim_mr_invalidate(struct rsim_dev *rsim,
				     const struct rsim_qp *qp, u32 key,
				     bool remote);
int rsim_mr_lookup(struct rsim_dev *rsim, const struct rsim_qp *qp, u32 key,
		   bool remote, u64 addr, u64 len, int access,
		   struct rsim_mem_ref *ref);
int rsim_mr_lookup_pd(struct rsim_dev *rsim, const struct rsim_qp *qp,
		      struct ib_pd *pd, u32 key, bool remote, u64 addr,
		      u64 len, int access, struct rsim_mem_ref *ref);
int rsim_mr_key_range(struct rsim_dev *rsim, u32 key, u64 *addr, u64 *len);
void rsim_mr_refs_put(struct rsim_mem_ref *refs, u32 n);
struct rsim_mr *rsim_mr_get(struct rsim_dev *rsim, u32 key);
void rsim_mr_put(struct rsim_mr *mr);

/* odp.c: on-demand paging, where the kernel has it */
extern const struct ib_device_ops rsim_odp_ops;	/* only if RSIM_ODP */
#if IS_ENABLED(CONFIG_INFINIBAND_ON_DEMAND_PAGING)
#define RSIM_ODP	true
bool rsim_odp_possible(struct rsim_dev *rsim);
void rsim_odp_caps(struct ib_device_attr *attr);
int rsim_odp_init(struct rsim_mr *mr, u64 start, u64 length, u64 iova);
void rsim_odp_dereg(struct rsim_mr *mr);
void rsim_odp_free(struct rsim_mr *mr);
void *rsim_odp_map(const struct rsim_mr *mr, u64 at, u64 *len, bool write);
int rsim_odp_fault(struct rsim_mr *mr, u64 at, u64 len, bool write);
#else
#define RSIM_ODP	false
static inline bool rsim_odp_possible(struct rsim_dev *rsim)
{
	return false;
}

static inline void rsim_odp_caps(struct ib_device_attr *attr) {}
static inline int rsim_odp_init(struct rsim_mr *mr, u64 start, u64 length,
				u64 iova)
{
	return -EOPNOTSUPP;
}

static inline void rsim_odp_dereg(struct rsim_mr *mr) {}
static inline void rsim_odp_free(struct rsim_mr *mr) {}
static inline void *rsim_odp_map(const struct rsim_mr *mr, u64 at, u64 *len,
				 bool write)
{
	return NULL;
}

static inline int rsim_odp_fault(struct rsim_mr *mr, u64 at, u64 len,
				 bool write)
{
	return -EFAULT;
}
#endif

/* mw.c */
extern const struct ib_device_ops rsim_mw_ops;
#define RSIM_KEY_MW_TAG		1	/* a memory window's entry in mr_xa */
struct rsim_mw *rsim_mw_get(struct rsim_dev *rsim, u32 key);
void rsim_mw_put(struct rsim_mw *mw);
enum ib_wc_status rsim_mw_bind(struct rsim_dev *rsim, const struct rsim_qp *qp,
			       const struct rsim_mw_bind *b);
int rsim_mw_invalidate(struct rsim_mw *mw, const struct rsim_qp *qp,
		       u32 key, bool remote);
int rsim_mw_lookup(struct rsim_mw *mw, const struct rsim_qp *qp, u32 key,
		   u64 addr, u64 len, int access, struct rsim_mem_ref *ref);

/* cq.c */
extern const struct ib_device_ops rsim_cq_ops;
int rsim_cq_push(struct rsim_notify *n, struct rsim_cq *cq,
		 const struct ib_wc *wc, bool solicited);
void rsim_cq_deliver(struct rsim_cq *cq, u32 flags);

/* event.c */
DECLARE_PER_CPU(unsigned int, rsim_dp_depth);
int rsim_ev_init(struct rsim_dev *rsim);
void rsim_ev_exit(struct rsim_dev *rsim);
void rsim_ev_obj_init(struct rsim_ev *ev, enum rsim_ev_kind kind);
void rsim_ev_queue(struct rsim_dev *rsim, struct rsim_ev *ev, u32 what);
void rsim_ev_forget(struct rsim_dev *rsim, struct rsim_ev *ev);
void rsim_qp_raise(struct rsim_qp *qp, enum ib_event_type type,
		   const struct rsim_qp *own);
void rsim_notify_run(struct rsim_notify *n, const struct rsim_qp *own);

/* qp.c */
extern const struct ib_device_ops rsim_qp_ops;
int rsim_qp_init(struct rsim_dev *rsim);
void rsim_qp_exit(struct rsim_dev *rsim);
struct rsim_qp *rsim_qp_get(struct rsim_dev *rsim, u32 qpn);
void rsim_qp_put(struct rsim_qp *qp);
void *rsim_wqe(struct rsim_wq *wq, u32 n);
void rsim_wq_pop(struct rsim_wq *wq);
void rsim_wq_free(struct rsim_wq *wq);
int rsim_wq_alloc(struct rsim_dev *rsim, struct rsim_wq *wq, u32 max_wr,
		  u32 max_sge, size_t hdr, size_t payload);
int rsim_wq_post_recv(struct rsim_wq *rq, const struct ib_recv_wr **wr);
int rsim_srq_take(struct rsim_srq *srq, struct rsim_recv_wqe *rwqe,
		  struct rsim_qp *waiter);
void rsim_srq_unwait(struct rsim_qp *qp);
struct page *rsim_dm_page(struct ib_dm *ibdm, u64 offset);
void rsim_cq_clean(struct rsim_cq *cq, struct ib_qp *qp);
u32 rsim_cq_backlog(struct rsim_cq *cq);
void rsim_dm_set_ops(struct ib_device *ibdev);

/* umap.c */
struct rsim_umap *rsim_umap_ring_new(struct ib_ucontext *uctx, size_t len);
u64 rsim_umap_offset(struct rsim_umap *m);
struct ib_ucontext *rsim_umap_uctx(struct ib_udata *udata, u32 what);
void rsim_umap_set_ops(struct ib_device *ibdev);

/* urq.c */
struct rsim_uwq_resp;
int rsim_urq_new(struct rsim_dev *rsim, struct ib_ucontext *uctx,
		 struct rsim_wq *rq, u32 max_wr, u32 max_sge,
		 struct rsim_uwq_resp *resp);
void rsim_urq_free(struct rsim_wq *rq);
int rsim_urq_take(struct rsim_wq *rq, struct rsim_recv_wqe *rwqe, bool wait);
int rsim_urq_take_slot(struct rsim_wq *rq, struct rsim_recv_wqe *rwqe);
u32 rsim_urq_count(struct rsim_wq *rq);
u32 rsim_urq_flushable(struct rsim_wq *rq);
u64 rsim_urq_pop_id(struct rsim_wq *rq);
void rsim_urq_consumed(struct rsim_wq *rq);
void rsim_urq_reset(struct rsim_wq *rq);
void rsim_urq_doorbell(struct rsim_wq *rq);

/* usq.c */

/**
 * struct rsim_usq_ib_wr - a send ring's slot as a send WR (usq.c)
 * @wr: the WR
 * @rdma: as an RDMA WR
 * @atomic: as an atomic WR
 * @ud: as a UD WR
 * @sge: the SGE an inline WR's data is described by
 * @bind: a BIND_MW WR's fields (the kernel's send WRs have none)
 * @place: a FLUSH or ATOMIC_WRITE WR's fields (nor for these)
 * @xrc_srqn: the XRC SRQ an XRC INI QP's WR names (nor for it)
 */
struct rsim_usq_ib_wr {
	union {
		struct ib_send_wr wr;
		struct ib_rdma_wr rdma;
		struct ib_atomic_wr atomic;
		struct ib_ud_wr ud;
	};
	struct ib_sge sge;
	struct rsim_mw_bind bind;
	struct rsim_placement_wr place;
	u32 xrc_srqn;
};

int rsim_usq_new(struct rsim_dev *rsim, struct ib_ucontext *uctx,
		 struct rsim_wq *sq, u32 max_inline, struct rsim_uwq_resp *resp);
void rsim_usq_set_db(struct rsim_wq *sq, bool db);
u32 rsim_usq_published(struct rsim_wq *sq, bool *room);
void rsim_usq_popped(struct rsim_wq *sq);
void rsim_usq_reset(struct rsim_wq *sq);
u32 rsim_usq_prod(struct rsim_wq *sq);
int rsim_usq_wr(struct rsim_qp *qp, u32 i, struct rsim_usq_ib_wr *w,
		const u8 **inl);
u32 rsim_usq_ah_num(struct rsim_qp *qp);
enum ib_wr_opcode rsim_usq_opcode_or_send(u32 op);
void rsim_srq_event(struct rsim_srq *srq, enum ib_event_type type);
void rsim_qp_push(struct rsim_notify *n, struct rsim_qp *qp,
		  struct ib_cq *ibcq, const struct ib_wc *wc, bool solicited);
void rsim_qp_flush_sq_locked(struct rsim_qp *qp, struct rsim_notify *n);
void rsim_qp_error_locked(struct rsim_qp *qp, struct rsim_notify *n);
bool rsim_qp_pull_sq(struct rsim_qp *qp, struct rsim_notify *n);
void rsim_qp_fatal(struct rsim_qp *qp, const struct rsim_qp *own);
void rsim_qp_event(struct rsim_qp *qp, enum ib_event_type type);
enum ib_wc_opcode rsim_wc_opcode(enum ib_wr_opcode op);

/* dp.c */
bool rsim_dp_may_run_inline(void);
bool rsim_dp_claim_locked(struct rsim_qp *qp, bool inl);
void rsim_dp_idle_locked(struct rsim_qp *qp);
void rsim_dp_run(struct rsim_qp *qp);
void rsim_dp_wake_qpn(struct rsim_dev *rsim, u16 dlid,
		      const union ib_gid *dgid, u32 qpn, u32 from, bool inl);
void rsim_dp_wake_requester(struct rsim_qp *qp);
void rsim_dp_work(struct work_struct *work);
void rsim_dp_wake_work(struct work_struct *work);
void rsim_dp_stop(struct rsim_qp *qp);

/* fault.c (and testing.h) */
void rsim_fault_point_init(struct rsim_fault_point *fp,
			   struct rsim_fault_attr *store);
bool rsim_fault_check(struct rsim_fault_point *fp, unsigned long ip);
void rsim_fault_point_fini(struct rsim_fault_point *fp);
void rsim_fault_debugfs_create(struct dentry *parent,
			       struct rsim_fault_point *fp,
			       const char * const *names, int n);
bool rsim_should_fail(struct rsim_dev *rsim, enum rsim_fault_site site);
void rsim_fault_init(struct rsim_dev *rsim);
void rsim_fault_fini(struct rsim_dev *rsim);
void rsim_fault_debugfs_init(struct rsim_dev *rsim);

/* puda.c (and testing.h) */
void rsim_puda_init(struct dentry *root);
void rsim_puda_exit(void);

/* dmah.c (and testing.h), where the kernel has DMA handles */
int rsim_dmah_check(const struct ib_dmah *d, const struct cpumask *allowed);

/* mad.c */
/*
 * A MAD method an SMA or PMA answers: not a response, a trap or a
 * TrapRepress (those are for the agents, and get no answer)
 */
static inline bool rsim_mad_method_answered(u8 method)
{
	return !(method & IB_MGMT_METHOD_RESP) &&
	       method != IB_MGMT_METHOD_TRAP &&
	       method != IB_MGMT_METHOD_TRAP_REPRESS;
}

void rsim_mad_node_info(struct rsim_dev *rsim, void *data);
void rsim_mad_port_info(struct rsim_dev *rsim, void *data, bool show_mkey);
int rsim_process_mad(struct ib_device *ibdev, int flags, u32 port,
		     const struct ib_wc *in_wc, const struct ib_grh *in_grh,
		     const struct ib_mad *in, struct ib_mad *out,
		     size_t *out_size, u16 *out_pkey_index);

/* debugfs.c */
void rsim_debugfs_init(void);
void rsim_debugfs_exit(void);
void rsim_debugfs_dev_init(struct rsim_dev *rsim);
void rsim_debugfs_dev_exit(struct rsim_dev *rsim);

/* What the KUnit module uses from the driver */
#include <rdmasim/testing.h>

#endif /* RDMASIM_H */
