/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * rdmasim: what the kernel driver and its libibverbs provider
 * (tools/provider) agree on beyond the core's uverbs ABI. Included by
 * both; only types every compiler has.
 */
#ifndef RDMASIM_ABI_H
#define RDMASIM_ABI_H

#include <linux/types.h>

/* the uverbs ABI version the driver reports and the provider accepts */
#define RSIM_UVERBS_ABI_VERSION 1

/*
 * The driver's attribute of UVERBS_METHOD_DM_ALLOC (the driver namespace,
 * UVERBS_ID_NS_SHIFT = 12): the mmap offset of the device memory, a u64
 * the provider maps it with on its command fd.
 */
enum rsim_uverbs_dm_alloc_attrs {
	RSIM_UVERBS_ATTR_ALLOC_DM_MMAP_OFFSET = 1U << 12,
};

/*
 * alloc_ucontext's driver data. A provider that asks for RSIM_UCTX_MAP
 * gets mapped queues where the response's caps grant them (an old
 * provider sends nothing and keeps the system-call path). Unknown flags
 * and nonzero reserved fields are EINVAL.
 */
#define RSIM_UCTX_MAP_CQ	0x1	/* CQ rings mapped */
#define RSIM_UCTX_MAP_RQ	0x2	/* receive queues and SRQs mapped */
#define RSIM_UCTX_MAP_SQ	0x4	/* send queues mapped, a doorbell a post */
/*
 * With RSIM_UCTX_MAP_SQ: the provider rings a send queue's doorbell only
 * when its ring's flags ask for one (RSIM_URING_F_DOORBELL). Without, it
 * rings after every post, and the kernel ignores what it need not hear.
 */
#define RSIM_UCTX_SQ_DB		0x8

struct rsim_alloc_ucontext_cmd {
	__u32 flags;		/* RSIM_UCTX_MAP_* asked for */
	__u32 reserved;
};

struct rsim_alloc_ucontext_resp {
	__u32 caps;		/* RSIM_UCTX_MAP_* granted */
	__u32 reserved;
};

/*
 * A mapped ring: this header, then slots from RSIM_URING_SLOTS. Each index
 * runs freely (u32, wrapping); slot i is at i % nslots, nslots a power of
 * two. The producer writes prod after the slot, the consumer cons after
 * reading it (each a release store, read with an acquire load). The
 * kernel keeps its own copy of the index it owns (the shared one is a
 * mirror) and reads the other once per use: a process that writes
 * nonsense harms only its own queue. flags are the kernel's
 * (RSIM_URING_F_*), written after cons on its cache line.
 */
struct rsim_uring_hdr {
	__u32 prod;
	__u32 pad0[15];		/* prod and cons on cache lines of their own */
	__u32 cons;
	__u32 flags;
	__u32 pad1[14];
};

/*
 * After a post (prod stored, then a full barrier), the provider rings
 * the doorbell if the kernel set this; the kernel sets it, then (a full
 * barrier) reads prod again, so that one of the two sees the other.
 *
 * A receive ring (RQ, SRQ; the post_recv or post_srq_recv command with no
 * WR): set when a requester met the queue empty and waits (RNR), and
 * while the QP is in the error state, where the doorbell flushes what is
 * posted.
 *
 * A send ring (the post_send command with no WR; RSIM_UCTX_SQ_DB): set
 * while nobody executes the queue. It is clear while the kernel runs it:
 * it takes what is published before it lets the queue go, and the
 * process's WRs need no doorbell.
 */
#define RSIM_URING_F_DOORBELL	0x1

#define RSIM_URING_SLOTS	128	/* bytes from the mapping's start */

/* a completion in a CQ ring, as the kernel writes it */
struct rsim_ucqe {
	__aligned_u64 wr_id;
	__u32 status;		/* enum ib_wc_status (= ibv_wc_status) */
	__u32 opcode;		/* enum ib_wc_opcode (= ibv_wc_opcode) */
	__u32 vendor_err;
	__u32 byte_len;
	__u32 ex;		/* immediate data (network order) or rkey */
	__u32 qp_num;
	__u32 src_qp;
	__u32 wc_flags;		/* as the poll_cq command returns them */
	__u16 pkey_index;
	__u16 slid;
	__u8 sl;
	__u8 dlid_path_bits;
	__u8 port_num;
	__u8 reserved;
};

/* create_cq's and resize_cq's driver response for a mapped CQ */
struct rsim_cq_ring_resp {
	__aligned_u64 mmap_offset;	/* the ring, on the uverbs fd */
	__u32 mmap_len;			/* bytes */
	__u32 nslots;
};

/*
 * A receive WR in an RQ or SRQ ring, as the provider writes it: the slot
 * is stride bytes, room for max_sge entries. The kernel copies a slot
 * once, when a message takes it, and checks only its copy: num_sge above
 * the queue's max_sge or a nonzero reserved field completes the WR with
 * IBV_WC_LOC_QP_OP_ERR and puts the QP in the error state.
 */
struct rsim_usge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

struct rsim_urwqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 reserved;
	struct rsim_usge sge[];
};

/*
 * A work queue's ring (receive or send), in create_qp's and create_srq's
 * driver response
 */
struct rsim_uwq_resp {
	__aligned_u64 mmap_offset;	/* the ring, on the uverbs fd */
	__u32 mmap_len;			/* bytes; 0: no ring */
	__u32 nslots;			/* a power of two */
	__u32 max_wr;			/* at most this many outstanding */
	__u32 stride;			/* bytes per slot */
};

/*
 * A send WR in an SQ ring, as the provider writes it (opcodes and flags
 * are libibverbs', IBV_WR_* and IBV_SEND_*). The slot is stride bytes:
 * room for max_sge SGEs or max_inline bytes of inline data, which take
 * the SGEs' place. The kernel copies a slot once, at the doorbell that
 * finds it, and checks only its copy, with the rules of the post_send
 * command; a WR that breaks one completes with IBV_WC_LOC_QP_OP_ERR in
 * its turn and puts the QP in the error state. IBV_WR_LOCAL_INV (ex: the
 * rkey) and IBV_WR_BIND_MW (wr.bind), which that command cannot carry,
 * act on memory windows; IBV_WR_FLUSH (wr.flush) and IBV_WR_ATOMIC_WRITE
 * (wr.atomic_write), which it cannot carry either, are RC's memory
 * placement operations (IBA annex A19): no SGEs, no inline data.
 */
struct rsim_uswqe {
	__aligned_u64 wr_id;
	__u32 opcode;
	__u32 send_flags;
	__u32 num_sge;		/* SGEs; 0 with IBV_SEND_INLINE */
	__u32 inline_len;	/* IBV_SEND_INLINE: bytes where the SGEs go */
	__u32 ex;		/* immediate data (BE), or rkey to invalidate */
	__u32 xrc_srqn;		/* an XRC INI QP's: the XRC SRQ; else 0 */
	union {
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 reserved;
		} rdma;
		struct {
			__aligned_u64 remote_addr;
			__aligned_u64 compare_add;
			__aligned_u64 swap;
			__u32 rkey;
			__u32 reserved;
		} atomic;
		struct {
			__u32 ah_num;	/* create_ah's driver response */
			__u32 remote_qpn;
			__u32 remote_qkey;
			__u32 reserved;
		} ud;
		struct {
			__aligned_u64 addr;	/* in the MR's addresses */
			__aligned_u64 length;	/* 0: unbind (type 1) */
			__u32 mw_rkey;		/* the window's rkey now */
			__u32 mr_lkey;
			__u32 rkey;		/* new: its low 8 bits count */
			__u32 access;		/* IBV_ACCESS_* */
		} bind;
		struct {
			__aligned_u64 remote_addr;
			__aligned_u64 length;	/* IBV_FLUSH_RANGE's bytes */
			__u32 rkey;
			__u8 type;		/* IBV_FLUSH_GLOBAL, _PERSISTENT */
			__u8 level;		/* IBV_FLUSH_RANGE or _MR */
			__u16 reserved;
		} flush;
		struct {
			__aligned_u64 remote_addr;	/* 8-byte aligned */
			__aligned_u64 value;	/* the 8 bytes, as in memory */
			__u32 rkey;
			__u32 reserved;
		} atomic_write;
	} wr;
	struct rsim_usge sge[];
};

/* create_qp's driver response for a context with mapped queues */
struct rsim_create_qp_resp {
	struct rsim_uwq_resp rq;	/* none for a QP of an SRQ */
	struct rsim_uwq_resp sq;	/* RSIM_UCTX_MAP_SQ */
};

/*
 * create_ah's driver response, for a context with mapped send queues:
 * the number a UD WR in a send ring names the AH by (the kernel looks it
 * up, and refuses one of another PD)
 */
struct rsim_create_ah_resp {
	__u32 ah_num;
	__u32 reserved;
};

/* create_srq's driver response for a context with mapped queues */
struct rsim_create_srq_resp {
	struct rsim_uwq_resp rq;
};

/*
 * modify_srq's driver data. Resizing a mapped SRQ (IBV_SRQ_MAX_WR) makes
 * a new ring: the kernel writes struct rsim_modify_srq_resp at @resp_addr
 * before the resize takes effect, and the provider posts into the new
 * ring (producer index from 0) once the command returns; the WRs of the
 * old ring are taken first. The new ring's consumer index starts below 0
 * by the WRs the old ring still holds, so that the room it shows is the
 * SRQ's.
 */
struct rsim_modify_srq_cmd {
	__aligned_u64 resp_addr;
};

struct rsim_modify_srq_resp {
	struct rsim_uwq_resp rq;
};

#endif /* RDMASIM_ABI_H */
