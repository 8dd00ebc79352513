// SPDX-License-Identifier: GPL-2.0-only
/*
 * rsim_hold: a process that holds a context on an rdmasim device, with
 * live objects (PD, CQ, QP in RTS, an MR, device memory mapped and in an
 * MR), while the device is removed under it (del_device or rmmod). The
 * removal must not wait for it (rdmasim's disassociate_ucontext): the
 * core destroys the context's objects and zaps its mappings, the
 * process's next verb fails with EIO, and its close() still frees what
 * is left.
 *
 * It prints "ready" once everything exists, then waits until @gofile
 * exists (the selftest creates it after the removal returned), then:
 *   "alloc_pd <errno name>"   a new verb on the context (EIO expected)
 *   "async <event name>"      the first async event: IBV_EVENT_DEVICE_FATAL
 *   "close <0 or errno>"      ibv_close_device()
 * "result PASS" / "result FAIL (<why>)" last; exit 0 on PASS.
 *
 *   RDMAV_DRIVERS=<tools/provider>/librdmasim rsim_hold -d rdmasim1 GOFILE
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "rsim_open.h"

#define BUF_LEN (64 * 1024)
#define DM_LEN 4096
/* how long it waits for the go file: the selftest's removal and a margin */
#define GO_WAIT_S 120

static const char *errname(int e)
{
	switch (e) {
	case 0: return "0";
	case EIO: return "EIO";
	case ENODEV: return "ENODEV";
	case EINVAL: return "EINVAL";
	case ENOMEM: return "ENOMEM";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	default: return "other";
	}
}

static int fail(const char *why)
{
	printf("result FAIL (%s: %s)\n", why, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_alloc_dm_attr da = { .length = DM_LEN };
	const char *ibdev = "rdmasim0", *gofile;
	struct ibv_async_event ev;
	struct ibv_port_attr port;
	struct ibv_context *ctx;
	struct ibv_mr *mr, *dmmr;
	struct pollfd pfd;
	struct ibv_dm *dm;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct stat st;
	int i, opt, ret;
	void *buf;

	while ((opt = getopt(argc, argv, "d:")) != -1) {
		if (opt != 'd') {
			fprintf(stderr, "usage: %s [-d ibdev] gofile\n",
				argv[0]);
			return 2;
		}
		ibdev = optarg;
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: %s [-d ibdev] gofile\n", argv[0]);
		return 2;
	}
	gofile = argv[optind];
	setvbuf(stdout, NULL, _IOLBF, 0);

	ctx = rsim_open_device(ibdev);
	if (!ctx)
		return fail("open");
	buf = calloc(1, BUF_LEN);
	if (!buf || ibv_query_port(ctx, 1, &port))
		return fail("query_port");
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!pd || !cq)
		return fail("pd, cq");
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qp = ibv_create_qp(pd, &qa);
	mr = ibv_reg_mr(pd, buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	if (!qp || !mr ||
	    rsim_connect_self(qp, port.lid, IBV_ACCESS_REMOTE_WRITE,
			      IBV_MTU_1024, 1))
		return fail("qp, mr");
	dm = ibv_alloc_dm(ctx, &da);
	if (!dm)
		return fail("alloc_dm");
	dmmr = ibv_reg_dm_mr(pd, dm, 0, DM_LEN, IBV_ACCESS_ZERO_BASED |
			     IBV_ACCESS_LOCAL_WRITE);
	if (!dmmr || ibv_memcpy_to_dm(dm, 0, buf, DM_LEN))
		return fail("dm mr");
	printf("ready\n");

	for (i = 0; i < GO_WAIT_S * 10 && stat(gofile, &st); i++)
		usleep(100 * 1000);
	if (stat(gofile, &st))
		return fail("no go file");

	errno = 0;
	pd = ibv_alloc_pd(ctx);
	ret = pd ? 0 : errno;
	printf("alloc_pd %s\n", errname(ret));
	pfd.fd = ctx->async_fd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 5000) == 1 && !ibv_get_async_event(ctx, &ev)) {
		printf("async %s\n", ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
	} else {
		printf("async none\n");
	}
	/* the objects are gone in the kernel: close frees the rest */
	ret = ibv_close_device(ctx);
	printf("close %s\n", errname(ret ? errno : 0));
	free(buf);
	if (ret)
		return fail("close");
	printf("result PASS\n");
	return 0;
}
