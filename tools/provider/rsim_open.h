/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tools/provider's test programs (rsim_verbs_test, rsim_hold, rsim_fuzz,
 * rsim_stress, rsim_charge, rsim_odp, rsim_xrc, ...): open an RDMA
 * device by its name, connect an RC QP to itself or another, and wait
 * for a completion, through libibverbs.
 */
#ifndef RSIM_OPEN_H
#define RSIM_OPEN_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

/* the context of device @name, or NULL with errno set (ENODEV: none) */
static inline struct ibv_context *rsim_open_device(const char *name)
{
	struct ibv_device **list, *dev = NULL;
	struct ibv_context *ctx = NULL;
	int i, n, err = ENODEV;

	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	for (i = 0; i < n && !dev; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			dev = list[i];
	if (dev) {
		ctx = ibv_open_device(dev);
		err = errno;
	}
	ibv_free_device_list(list);
	if (!ctx)
		errno = err;
	return ctx;
}

/*
 * RESET -> INIT -> RTR: @access the remote rights, @mtu the path MTU,
 * @rd_atomic the RDMA READs (and atomics) it answers at once, connected
 * to QP @dest through @ah (a LID, or a GRH on RoCE). 0, or -1 with errno.
 */
static inline int rsim_qp_to_rtr(struct ibv_qp *qp, uint32_t dest,
				 const struct ibv_ah_attr *ah, int access,
				 enum ibv_mtu mtu, uint8_t rd_atomic)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = access,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = dest;
	a.max_dest_rd_atomic = rd_atomic;
	a.min_rnr_timer = 1;
	a.ah_attr = *ah;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			     IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			     IBV_QP_MIN_RNR_TIMER);
}

/*
 * RTR -> RTS: @rd_atomic the RDMA READs (and atomics) in flight;
 * transport retries 7, RNR retries for ever (a SEND may wait for a
 * receive). 0, or -1 with errno.
 */
static inline int rsim_qp_to_rts(struct ibv_qp *qp, uint8_t rd_atomic)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.max_rd_atomic = rd_atomic,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* an RC QP from RESET to RTS, connected to QP @dest at @lid */
static inline int rsim_connect_to(struct ibv_qp *qp, uint32_t dest,
				  uint16_t lid, int access, enum ibv_mtu mtu,
				  uint8_t rd_atomic)
{
	struct ibv_ah_attr ah = { .dlid = lid, .port_num = 1 };

	if (rsim_qp_to_rtr(qp, dest, &ah, access, mtu, rd_atomic))
		return -1;
	return rsim_qp_to_rts(qp, rd_atomic);
}

/* one completion within about @ms milliseconds: its status, or -1 */
static inline int rsim_poll_one(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	int i, n;

	for (i = 0; i < ms; i++) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n < 0)
			return -1;
		if (n == 1)
			return wc->status;
		usleep(1000);
	}
	return -1;
}

/* an RC QP from RESET to RTS, connected to itself */
static inline int rsim_connect_self(struct ibv_qp *qp, uint16_t lid,
				    int access, enum ibv_mtu mtu,
				    uint8_t rd_atomic)
{
	return rsim_connect_to(qp, qp->qp_num, lid, access, mtu, rd_atomic);
}

#endif /* RSIM_OPEN_H */
