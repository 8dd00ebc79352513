/* SPDX-License-Identifier: GPL-2.0-only */
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
 * kernel keeps its own copy of the index it produces and reads the other
 * once per use: a process that writes nonsense harms only its own queue.
 */
struct rsim_uring_hdr {
	__u32 prod;
	__u32 pad0[15];		/* prod and cons on cache lines of their own */
	__u32 cons;
	__u32 pad1[15];
};

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

#endif /* RDMASIM_ABI_H */
