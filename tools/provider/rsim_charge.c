// SPDX-License-Identifier: GPL-2.0-only
/*
 * rsim_charge: memory a process makes the kernel allocate for it is
 * charged to the process (issue 20, defect 11: GFP_KERNEL_ACCOUNT). Run
 * inside a memory cgroup, it reads the group's memory.current before and
 * after each of: a CQ of the device's max_cqe entries, an RC QP with a
 * send queue of max_qp_wr WRs of max_send_sge SGEs, and a DM of 256 KiB
 * (where the device has device memory); and prints
 *
 *   charged <object> <bytes the kernel allocates for it> <bytes charged>
 *
 * then "result PASS" if each was charged at least half of what the
 * kernel allocates for it (the rest of the group moves a little meanwhile),
 * else "result FAIL". The sizes are lower bounds of the driver's: the
 * CQ's ring of struct ib_wc (more than 48 bytes each on 64-bit), the send
 * queue's WQEs (each at least its SGEs, 16 bytes each).
 *
 *   RDMAV_DRIVERS=<tools/provider>/librdmasim rsim_charge -d rdmasim0
 *	-m /sys/fs/cgroup/<group>/memory.current
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "rsim_open.h"

static const char *current_path;

static long long current(void)
{
	FILE *f = fopen(current_path, "r");
	long long v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static int failed;

static void report(const char *what, long long want, long long before)
{
	long long got = current() - before;

	printf("charged %s %lld %lld\n", what, want, got);
	if (before < 0 || got < want / 2)
		failed = 1;
}

int main(int argc, char **argv)
{
	const char *name = "rdmasim0";
	struct ibv_context *ctx;
	struct ibv_device_attr da;
	struct ibv_alloc_dm_attr dma = { .length = 256 * 1024 };
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC };
	struct ibv_pd *pd;
	struct ibv_cq *cq, *small;
	struct ibv_qp *qp;
	struct ibv_dm *dm;
	long long before;
	int opt;

	while ((opt = getopt(argc, argv, "d:m:")) != -1) {
		switch (opt) {
		case 'd':
			name = optarg;
			break;
		case 'm':
			current_path = optarg;
			break;
		default:
			fprintf(stderr, "usage: %s [-d dev] -m memory.current\n",
				argv[0]);
			return 2;
		}
	}
	if (!current_path || current() < 0) {
		printf("result FAIL (no memory.current: %s)\n",
		       current_path ? current_path : "-m");
		return 1;
	}
	ctx = rsim_open_device(name);
	if (!ctx || ibv_query_device(ctx, &da)) {
		printf("result FAIL (cannot open %s: %s)\n", name,
		       strerror(errno));
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	small = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!pd || !small) {
		printf("result FAIL (PD, CQ: %s)\n", strerror(errno));
		return 1;
	}

	before = current();
	cq = ibv_create_cq(ctx, da.max_cqe, NULL, NULL, 0);
	if (!cq) {
		printf("result FAIL (a CQ of %d: %s)\n", da.max_cqe,
		       strerror(errno));
		return 1;
	}
	report("cq", 48LL * da.max_cqe, before);

	qa.send_cq = small;
	qa.recv_cq = small;
	qa.cap.max_send_wr = da.max_qp_wr;
	qa.cap.max_send_sge = da.max_sge;
	qa.cap.max_recv_wr = 1;
	qa.cap.max_recv_sge = 1;
	before = current();
	qp = ibv_create_qp(pd, &qa);
	if (!qp) {
		printf("result FAIL (a QP of %d x %d: %s)\n", da.max_qp_wr,
		       da.max_sge, strerror(errno));
		return 1;
	}
	report("qp", 16LL * da.max_qp_wr * da.max_sge, before);

	before = current();
	dm = ibv_alloc_dm(ctx, &dma);
	if (dm)
		report("dm", dma.length, before);
	else
		printf("no device memory (%s)\n", strerror(errno));

	if (dm)
		ibv_free_dm(dm);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_destroy_cq(small);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	printf("result %s\n", failed ? "FAIL" : "PASS");
	return failed;
}
