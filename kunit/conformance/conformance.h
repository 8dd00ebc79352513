/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rdma_conformance.ko: KUnit suites that check any RDMA device's
 * allocation paths against the kernel's documented contracts, through
 * public kernel verbs and rdma_cm only (no symbol of any driver).
 *
 * Every suite exists once per target device and is named
 * rdma_conformance_<area>.<device>; every case is one rule, and its first
 * log line says which rule and where it is written down.
 */
#ifndef RDMA_CONFORMANCE_H
#define RDMA_CONFORMANCE_H

#include <kunit/test.h>
#include <linux/if_ether.h>
#include <linux/scatterlist.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include <rdmasim/compat.h>

/*
 * How long a case waits for a completion or an rdma_cm step, and for an
 * asynchronous event or QP state (which the debug kernel delivers within
 * half a second; the wait is the cost of every divergence that never
 * raises one).
 */
#define RCF_TIMEOUT_MS		5000
#define RCF_EVENT_MS		2000

/**
 * enum rcf_transport - how a loopback RC connection is brought up
 * @RCF_TR_NONE: no RC connection possible (the reason is in the target)
 * @RCF_TR_IB: InfiniBand: modify_qp with a LID-routed address vector
 * @RCF_TR_ROCE: RoCE: modify_qp with a GRH to one of the port's own GIDs
 * @RCF_TR_IWARP: iWARP: an MPA/TCP connection through rdma_cm
 */
enum rcf_transport {
	RCF_TR_NONE,
	RCF_TR_IB,
	RCF_TR_ROCE,
	RCF_TR_IWARP,
};

/**
 * struct rcf_target - one device under test
 * @node: entry in the list of targets
 * @dev: the device
 * @name: its name when it was found (the suites carry it)
 * @driver: the name of the module that provides it
 * @port: the port the cases use (the first one)
 * @attr: a copy of the device attributes
 * @transport: how RC QPs get connected
 * @no_conn: why they cannot be, for skips (when @transport is NONE)
 * @mtu: the port's active MTU (the QPs' path MTU)
 * @lid: the port's LID (InfiniBand)
 * @sgid_index: the GID the QPs use (RoCE)
 * @gid: that GID, also the destination (RoCE)
 * @dmac: the destination MAC: the GID's own netdev's (RoCE)
 * @cm_addr: the address rdma_cm listens on and connects to (iWARP)
 * @hazards: run the checks that are known to hang or crash some devices
 * @is_target: the suites run on it (else it is only the peer)
 * @peer: where the requesters of its connections live, reached through
 *	the InfiniBand subnet by LID; NULL: both ends on this device
 * @lock: protects @users and @gone
 * @users: cases running on the device
 * @gone: the device is being unregistered; no new case may start
 * @idle: woken when @users drops to 0
 * @suites: this device's suites (NULL-terminated)
 */
struct rcf_target {
	struct list_head node;
	struct ib_device *dev;
	char name[IB_DEVICE_NAME_MAX];
	const char *driver;
	u32 port;
	struct ib_device_attr attr;
	enum rcf_transport transport;
	const char *no_conn;
	enum ib_mtu mtu;
	u32 lid;
	u32 sgid_index;
	union ib_gid gid;
	u8 dmac[ETH_ALEN];
	struct sockaddr_storage cm_addr;
	bool hazards;
	bool is_target;
	struct rcf_target *peer;
	spinlock_t lock;	/* protects users and gone */
	int users;
	bool gone;
	wait_queue_head_t idle;
	struct kunit_suite **suites;
};

/*
 * A case is named for its rule (the table's row); its function is
 * rcf_test_<rule>.
 */
#define RCF_CASE(rule)	{ .run_case = rcf_test_##rule, .name = #rule }
#define RCF_CASE_PARAM(rule, gen)					\
	{ .run_case = rcf_test_##rule, .name = #rule, .generate_params = gen }

/* main.c */
extern unsigned int rcf_limit_budget;
extern unsigned int rcf_bench_iters;
struct rcf_target *rcf_target(struct kunit *test);
const char *rcf_target_name(void);
int rcf_case_init(struct kunit *test);
void rcf_case_exit(struct kunit *test);
int rcf_suite_init(struct kunit_suite *suite);
void rcf_suite_exit(struct kunit_suite *suite);

/*
 * The rule a case checks, logged first so that the summary table can
 * quote it: what must hold, and the document that says so.
 */
#define RCF_RULE(test, rule, source)					\
	kunit_info(test, "rule: %s [%s]", rule, source)

/*
 * A broken rule: the device, what was expected and what it did, in one
 * line, "[<device>] ...", that the summary table quotes beside the rule.
 */
#define RCF_FAIL(test, fmt, ...)					\
	KUNIT_FAIL(test, "[%s] " fmt, rcf_target_name(), ##__VA_ARGS__)

/**
 * struct rcf_buf - kernel memory mapped for a device
 * @dev: the device it is mapped for
 * @page: the pages (alloc_pages)
 * @order: their order
 * @va: CPU address
 * @dma: DMA address
 * @len: bytes
 */
struct rcf_buf {
	struct ib_device *dev;
	struct page *page;
	unsigned int order;
	u8 *va;
	u64 dma;
	size_t len;
};

/* conn.c: buffers */
struct rcf_buf *rcf_buf_new(struct kunit *test, struct ib_device *dev,
			    size_t len, u8 fill);
void rcf_buf_sync_cpu(struct rcf_buf *b);
void rcf_buf_sync_dev(struct rcf_buf *b);
void rcf_expect_unchanged(struct kunit *test, struct rcf_buf *b, u8 fill,
			  size_t from, size_t to, const char *what);

/* conn.c: objects that go away with the case */
struct ib_pd *rcf_pd(struct kunit *test);
struct ib_pd *rcf_pd_on(struct kunit *test, struct ib_device *dev);
void rcf_pd_free(void *pd);
struct ib_cq *rcf_cq(struct kunit *test, int cqe);
struct ib_cq *rcf_cq_on(struct kunit *test, struct ib_device *dev, int cqe);
void rcf_cq_free(void *cq);
struct ib_mr *rcf_mr(struct kunit *test, struct ib_pd *pd,
		     enum ib_mr_type type, u32 max_num_sg);
void rcf_mr_free(void *mr);
void rcf_mr_own(struct kunit *test, struct ib_mr *mr);
int rcf_mr_dereg(struct kunit *test, struct ib_mr *mr);
void rcf_expect_dereg(struct kunit *test, struct ib_mr *mr, u32 before,
		      const char *what);
void rcf_expect_err_ptr(struct kunit *test, void *obj,
			void (*free)(void *obj), const char *what);
void rcf_sg_set(struct scatterlist *sg, u64 dma, unsigned int len);
struct scatterlist *rcf_sgl(struct kunit *test, int nents);

/**
 * struct rcf_side - one end of a connection
 * @conn: the connection it belongs to
 * @t: the device it is on: the device under test or its peer
 * @pd: its PD
 * @cq: its send and receive CQ
 * @qp: its QP
 * @cm_id: its rdma_cm id (iWARP)
 * @events: bit i set: async event i seen on @qp
 * @established: rdma_cm reported the connection up (iWARP)
 */
struct rcf_side {
	struct rcf_conn *conn;
	struct rcf_target *t;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct rdma_cm_id *cm_id;
	unsigned long events;
	bool established;
};

/**
 * struct rcf_conn - two RC QPs connected to each other
 * @t: the device under test: the responder's, and the requester's too
 *	unless the requester's PD is on @t's peer
 * @a: the requester
 * @b: the responder
 * @listen: the rdma_cm listener (iWARP)
 * @lock: protects @a.events, @b.events, @a.established, @b.established,
 *	@b.cm_id, @b.qp (while a handler may set them) and the fields below
 * @wq: woken on every event
 * @cm_seen: bit i set: the active side saw rdma_cm event i
 * @cm_error: an rdma_cm event that ended the attempt, or 0
 * @passive_done: a connection request was handled (accepted or not)
 * @passive_err: why the passive side could not accept, or 0
 */
struct rcf_conn {
	struct rcf_target *t;
	struct rcf_side a;
	struct rcf_side b;
	struct rdma_cm_id *listen;
	spinlock_t lock;	/* see above */
	wait_queue_head_t wq;
	unsigned long cm_seen;
	int cm_error;
	bool passive_done;
	int passive_err;
};

struct rcf_conn *rcf_conn_new(struct kunit *test, struct ib_pd *pd_a,
			      struct ib_pd *pd_b);
int rcf_wait_qp_state(struct ib_qp *qp, enum ib_qp_state state);
int rcf_wait_events(struct rcf_conn *c, struct rcf_side *s,
		    unsigned long mask, unsigned long *seen);
int rcf_poll_one(struct ib_cq *cq, struct ib_wc *wc);
int rcf_poll_busy(struct ib_cq *cq, struct ib_wc *wc);
int rcf_post_reg(struct ib_qp *qp, struct ib_mr *mr, u32 key, int access,
		 u64 wr_id);
int rcf_post_inv(struct ib_qp *qp, u32 key, u64 wr_id);
int rcf_post_rdma(struct ib_qp *qp, enum ib_wr_opcode op, u64 laddr,
		  u32 lkey, u32 len, u64 raddr, u32 rkey, u64 wr_id);

/* mr.c: helpers the other suites share */
void rcf_need_frwr(struct kunit *test);
u32 rcf_mr_count(struct kunit *test);
int rcf_map_same_page(struct kunit *test, struct ib_mr *mr, u64 page, int n,
		      unsigned int *sg_offset);

/* frwr.c: a registered window and a connection to reach it */
#define RCF_ACCESS_ALL	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | \
			 IB_ACCESS_REMOTE_WRITE)

/**
 * struct rcf_frwr - a registered window and a connection to reach it
 * @c: the connection (requester a, responder b)
 * @src: the requester's data (local DMA lkey of its PD)
 * @sink: where the requester reads to (local DMA lkey of its PD)
 * @dst: the responder's buffer; the window is [RCF_W_OFF, + RCF_W_LEN)
 * @mr: the MR over the window
 * @reg_side: the side whose QP registered @mr (its PD is @mr's)
 * @iova: the window's first address
 * @rkey: the key REG_MR gave it
 */
struct rcf_frwr {
	struct rcf_conn *c;
	struct rcf_buf *src;
	struct rcf_buf *sink;
	struct rcf_buf *dst;
	struct ib_mr *mr;
	struct rcf_side *reg_side;
	u64 iova;
	u32 rkey;
};

/* set-up choices */
#define RCF_OTHER_PD	BIT(0)	/* @mr in a PD not the responder's */
#define RCF_NO_REG	BIT(1)	/* map and register later */

struct rcf_frwr *rcf_frwr_new(struct kunit *test, int access,
			      unsigned int flags);

/* the suites, as templates; main.c makes one copy per device */
extern struct kunit_suite rcf_mr_suite;
extern struct kunit_suite rcf_map_suite;
extern struct kunit_suite rcf_frwr_suite;
extern struct kunit_suite rcf_limits_suite;
extern struct kunit_suite rcf_odp_suite;
extern struct kunit_suite rcf_bench_suite;

#endif /* RDMA_CONFORMANCE_H */
