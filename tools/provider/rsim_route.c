// SPDX-License-Identifier: GPL-2.0-only
/*
 * rsim_route: UD datagrams between two RoCE-mode devices by GID alone, with
 * no IP exchange between the two processes (they may be in namespaces with
 * no link between them): where the data path delivers a packet to a GID,
 * and where it does not (the selftest's routing checks, guest/
 * selftest-netns.sh).
 *
 *   rsim_route recv DEV GID QPNFILE STOPFILE
 *	a UD QP on DEV (Q_Key 0x11111111) with 32 receive WRs; its QP number
 *	written to QPNFILE; counts the datagrams that arrive until STOPFILE
 *	exists (60 s at most), then prints "received <n>". GID is the
 *	device's own RoCE v2 GID the QP listens on (checked to be in its
 *	table).
 *   rsim_route send DEV GID DGID QPN COUNT
 *	COUNT datagrams from DEV's RoCE v2 GID GID to DGID, QP QPN; prints
 *	"sent <n>" (the send completions that succeeded: a UD send succeeds
 *	whether or not anything receives it).
 *
 * Exit status 0 when the verbs worked (whatever was received), 1 if not.
 *
 *   RDMAV_DRIVERS=<tools/provider>/librdmasim rsim_route recv d fe80::b ...
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "rsim_open.h"

#define QKEY 0x11111111
#define NRECV 32
#define PAYLOAD 64
#define GRH 40
#define WAIT_S 60

static int fail(const char *why)
{
	fprintf(stderr, "rsim_route: %s: %s\n", why, strerror(errno));
	return 1;
}

/* the index of @gid in port 1's table as a RoCE v2 GID, or -1 */
static int gid_index(struct ibv_context *ctx, const union ibv_gid *gid)
{
	struct ibv_port_attr pa;
	struct ibv_gid_entry e;
	int i;

	if (ibv_query_port(ctx, 1, &pa))
		return -1;
	for (i = 0; i < pa.gid_tbl_len; i++) {
		if (ibv_query_gid_ex(ctx, 1, i, &e, 0))
			continue;
		if (e.gid_type == IBV_GID_TYPE_ROCE_V2 &&
		    !memcmp(&e.gid, gid, sizeof(*gid)))
			return i;
	}
	errno = ENOENT;
	return -1;
}

static int parse_gid(const char *s, union ibv_gid *gid)
{
	if (inet_pton(AF_INET6, s, gid->raw) == 1)
		return 0;
	errno = EINVAL;
	return -1;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* a UD QP in RTS with Q_Key QKEY on @cq */
static struct ibv_qp *ud_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = NRECV, .max_recv_wr = NRECV,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &qa);

	if (!qp)
		return NULL;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		return NULL;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return NULL;
	a.qp_state = IBV_QPS_RTS;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return NULL;
	return qp;
}

static int post_recv(struct ibv_qp *qp, struct ibv_mr *mr, char *buf, int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(buf + i * (GRH + PAYLOAD)),
		.length = GRH + PAYLOAD, .lkey = mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

static int do_recv(struct ibv_pd *pd, struct ibv_cq *cq, struct ibv_mr *mr,
		   char *buf, const char *qpnfile, const char *stopfile)
{
	struct ibv_qp *qp = ud_qp(pd, cq);
	char tmp[4096];
	double end = now_s() + WAIT_S;
	struct ibv_wc wc;
	struct stat st;
	int i, n = 0;
	FILE *f;

	if (!qp)
		return fail("UD QP");
	for (i = 0; i < NRECV; i++)
		if (post_recv(qp, mr, buf, i))
			return fail("post_recv");
	snprintf(tmp, sizeof(tmp), "%s.tmp", qpnfile);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%u\n", qp->qp_num) < 0 || fclose(f) ||
	    rename(tmp, qpnfile))
		return fail(qpnfile);
	while (now_s() < end) {
		int got = ibv_poll_cq(cq, 1, &wc);

		if (got < 0)
			return fail("poll_cq");
		if (got) {
			if (wc.status == IBV_WC_SUCCESS &&
			    wc.byte_len == GRH + PAYLOAD &&
			    !memcmp(buf + wc.wr_id * (GRH + PAYLOAD) + GRH,
				    "rsim_route", 10))
				n++;
			if (post_recv(qp, mr, buf, wc.wr_id))
				return fail("post_recv");
			continue;
		}
		if (!stat(stopfile, &st))
			break;
		usleep(1000);
	}
	printf("received %d\n", n);
	return 0;
}

static int do_send(struct ibv_context *ctx, struct ibv_pd *pd,
		   struct ibv_cq *cq, struct ibv_mr *mr, char *buf, int sgix,
		   const union ibv_gid *dgid, uint32_t qpn, int count)
{
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = *dgid, .sgid_index = sgix, .hop_limit = 64 },
	};
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf, .length = PAYLOAD, .lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_qp *qp = ud_qp(pd, cq);
	struct ibv_ah *ah = ibv_create_ah(pd, &aa);
	double end = now_s() + WAIT_S;
	struct ibv_wc wc;
	int i, ok = 0, done = 0;

	if (!qp)
		return fail("UD QP");
	if (!ah)
		return fail("create_ah");
	memcpy(buf, "rsim_route", 10);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = QKEY;
	for (i = 0; i < count; i++) {
		wr.wr_id = i;
		if (ibv_post_send(qp, &wr, &bad))
			return fail("post_send");
		/* one in flight: the send queue never overflows */
		while (done <= i && now_s() < end) {
			int got = ibv_poll_cq(cq, 1, &wc);

			if (got < 0)
				return fail("poll_cq");
			if (got) {
				done++;
				ok += wc.status == IBV_WC_SUCCESS;
			}
		}
	}
	printf("sent %d\n", ok);
	return done == count ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	union ibv_gid gid, dgid;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	int sgix;
	char *buf;
	bool send = argc == 7 && !strcmp(argv[1], "send");

	if (!send && !(argc == 6 && !strcmp(argv[1], "recv"))) {
		fprintf(stderr, "usage: rsim_route recv DEV GID QPNFILE STOPFILE\n"
			"       rsim_route send DEV GID DGID QPN COUNT\n");
		return 2;
	}
	if (parse_gid(argv[3], &gid) || (send && parse_gid(argv[4], &dgid)))
		return fail("GID");
	ctx = rsim_open_device(argv[2]);
	if (!ctx)
		return fail(argv[2]);
	sgix = gid_index(ctx, &gid);
	if (sgix < 0)
		return fail("no such RoCE v2 GID on the device");
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 2 * NRECV, NULL, NULL, 0) : NULL;
	buf = calloc(NRECV, GRH + PAYLOAD);
	mr = cq && buf ? ibv_reg_mr(pd, buf, NRECV * (GRH + PAYLOAD),
				    IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!mr)
		return fail("PD, CQ or MR");
	if (send)
		return do_send(ctx, pd, cq, mr, buf, sgix, &dgid,
			       strtoul(argv[5], NULL, 0), atoi(argv[6]));
	return do_recv(pd, cq, mr, buf, argv[4], argv[5]);
}
