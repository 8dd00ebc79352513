// SPDX-License-Identifier: GPL-2.0-only
/*
 * rsim_cost: where the time of one small RDMA WRITE goes, through the
 * provider, on one CPU with nothing else to wait for (make bench's
 * profile of the userspace figures). Times, in nanoseconds, the median
 * of five rounds of -n each:
 *
 *   syscall   a system call that does nothing (getppid())
 *   doorbell  a send doorbell with nothing published (the post_send
 *             command with no WR): the system call the provider makes
 *             per ibv_post_send() with mapped send queues
 *   write8    an 8-byte RDMA WRITE of an RC QP to itself, signaled, and
 *             polling its completion: ibv_post_send() + ibv_poll_cq()
 *
 * and prints one line
 *
 *   RSIM-BENCH cost <device> <map|no-map> syscall <ns> doorbell <ns>
 *	write8 <ns>
 *
 * (doorbell is 0 without mapped send queues). With RSIM_NO_MAP=1 the
 * provider uses the kernel's post_send and poll_cq commands.
 *
 *   RDMAV_DRIVERS=<tools/provider>/librdmasim rsim_cost [-d rdmasim0]
 *	[-n iterations]
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/driver.h>

#include "rsim_open.h"

#define ROUNDS 5

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* the median of @r, sorted in place */
static uint64_t median(uint64_t *r)
{
	qsort(r, ROUNDS, sizeof(*r), cmp_u64);
	return r[ROUNDS / 2];
}

int main(int argc, char **argv)
{
	const char *name = "rdmasim0", *nm = getenv("RSIM_NO_MAP");
	bool map = !nm || strcmp(nm, "1");
	uint64_t sys[ROUNDS], db[ROUNDS], wr8[ROUNDS], t;
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_port_attr port;
	struct ibv_context *ctx;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	long n = 20000, i;
	int opt, r, k;
	char *buf;

	while ((opt = getopt(argc, argv, "d:n:")) != -1) {
		if (opt == 'd')
			name = optarg;
		else if (opt == 'n')
			n = atol(optarg);
		else
			return 2;
	}
	ctx = rsim_open_device(name);
	buf = calloc(1, 4096);
	if (!ctx || !buf || ibv_query_port(ctx, 1, &port))
		goto fail;
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	mr = cq ? ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE |
			     IBV_ACCESS_REMOTE_WRITE) : NULL;
	if (!mr)
		goto fail;
	{
		struct ibv_qp_init_attr qa = {
			.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 4, .max_recv_wr = 1,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};

		qp = ibv_create_qp(pd, &qa);
	}
	if (!qp || rsim_connect_self(qp, port.lid, IBV_ACCESS_REMOTE_WRITE,
				     IBV_MTU_1024, 1))
		goto fail;
	sge = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = 8,
				.lkey = mr->lkey };
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)buf + 2048;
	wr.wr.rdma.rkey = mr->rkey;

	for (r = 0; r < ROUNDS; r++) {
		t = now_ns();
		for (i = 0; i < n; i++)
			getppid();
		sys[r] = (now_ns() - t) / n;

		db[r] = 0;
		if (map) {
			t = now_ns();
			for (i = 0; i < n; i++)
				if (ibv_cmd_post_send(qp, NULL, &bad))
					goto fail;
			db[r] = (now_ns() - t) / n;
		}

		t = now_ns();
		for (i = 0; i < n; i++) {
			if (ibv_post_send(qp, &wr, &bad))
				goto fail;
			do
				k = ibv_poll_cq(cq, 1, &wc);
			while (!k);
			if (k < 0 || wc.status != IBV_WC_SUCCESS)
				goto fail;
		}
		wr8[r] = (now_ns() - t) / n;
	}
	printf("RSIM-BENCH cost %s %s syscall %llu doorbell %llu write8 %llu\n",
	       name, map ? "map" : "no-map",
	       (unsigned long long)median(sys), (unsigned long long)median(db),
	       (unsigned long long)median(wr8));
	return 0;
fail:
	printf("RSIM-BENCH cost %s failed: %s\n", name, strerror(errno));
	return 1;
}
