// SPDX-License-Identifier: GPL-2.0-only
/*
 * rsim_xrc: XRC through libibverbs and the provider, the rules a device's
 * XRC must keep, each case a failure if it does not:
 *
 *  - an XRC domain opened by a file (a memfd), an XRC SRQ of it (its number from
 *    ibv_get_srq_num(); a basic SRQ has none), an XRC RECV (TGT) QP of
 *    it and an XRC SEND (INI) QP connected to the TGT QP;
 *  - a SEND through the INI QP takes the receive WR of the SRQ it names
 *    and completes on that SRQ's CQ, as the TGT QP's (qp_num), from the
 *    INI QP (src_qp); the bytes land;
 *  - an RDMA WRITE through it is checked in the PD of the SRQ it names:
 *    an MR of that PD lands, an MR of another PD is IBV_WC_REM_ACCESS_ERR;
 *  - an SRQ number that names no SRQ, or an SRQ of another domain, is
 *    IBV_WC_REM_INV_REQ_ERR;
 *  - the TGT QP takes no posts, the INI QP no receives (EINVAL);
 *  - a SEND that finds the SRQ empty waits (RNR) and lands once a
 *    receive WR is posted;
 *  - another process opens the domain by the same file and the TGT QP by
 *    its number (ibv_open_qp()), connects an INI QP of its own to it and
 *    sends into the first process's SRQ; then, killed in the middle of a
 *    stream of SENDs, it leaves the first process's objects working.
 *
 * Prints one "xrc <case> <result>" line per case, "FAIL ..." for each
 * expectation that does not hold, and "result PASS" (exit 0) or "result
 * FAIL" (exit 1); exit 77 where the device has no XRC.
 *
 *   RDMAV_DRIVERS=<tools/provider>/librdmasim rsim_xrc [-d rdmasim0]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "rsim_open.h"

#define RSIM_EXPECT_TAG "xrc"
#include "rsim_expect.h"

#define MSG		256
#define NWR		16

static const char *devname = "rdmasim0";

/* one completion within a few seconds: its status, or -1 */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	return rsim_poll_one(cq, wc, 5000);
}

/* what one process holds: a context, a domain, an SRQ, two QPs */
struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd, *pd2;
	struct ibv_xrcd *xrcd;
	struct ibv_cq *cq;		/* the INI QP's, and the SRQ's */
	struct ibv_srq *srq;		/* XRC, of @xrcd, in @pd */
	uint32_t srqn;
	struct ibv_qp *tgt;		/* XRC RECV */
	struct ibv_qp *ini;		/* XRC SEND */
	unsigned char *buf;		/* MSG bytes to send, MSG to receive */
	struct ibv_mr *mr;		/* @buf, in @pd */
	struct ibv_mr *mr2;		/* @buf again, in @pd2 */
	uint16_t lid;
};

static struct ibv_xrcd *open_xrcd(struct ibv_context *ctx, int fd)
{
	struct ibv_xrcd_init_attr a = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = fd,
		.oflags = O_CREAT,
	};

	return ibv_open_xrcd(ctx, &a);
}

/* RESET -> INIT -> RTR (-> RTS), connected to @dest */
static int qp_connect(struct ibv_qp *qp, uint32_t dest, uint16_t lid,
		      bool rts)
{
	struct ibv_ah_attr ah = { .dlid = lid, .port_num = 1 };

	if (rsim_qp_to_rtr(qp, dest, &ah, IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ, IBV_MTU_1024, 1))
		return -1;
	return rts ? rsim_qp_to_rts(qp, 1) : 0;
}

static struct ibv_qp *new_ini(struct side *s)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_XRC_SEND,
		.send_cq = s->cq,
		.cap = { .max_send_wr = NWR, .max_send_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = s->pd,
	};

	return ibv_create_qp_ex(s->ctx, &a);
}

static struct ibv_qp *new_tgt(struct side *s)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
		.xrcd = s->xrcd,
	};

	return ibv_create_qp_ex(s->ctx, &a);
}

static int side_open(struct side *s, int fd)
{
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = NWR, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_XRCD,
		.srq_type = IBV_SRQT_XRC,
	};
	struct ibv_port_attr port;

	s->ctx = rsim_open_device(devname);
	if (!s->ctx || ibv_query_port(s->ctx, 1, &port))
		return -1;
	s->lid = port.lid;
	s->pd = ibv_alloc_pd(s->ctx);
	s->pd2 = ibv_alloc_pd(s->ctx);
	s->cq = ibv_create_cq(s->ctx, 4 * NWR, NULL, NULL, 0);
	s->xrcd = open_xrcd(s->ctx, fd);
	s->buf = mmap(NULL, 2 * MSG, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!s->pd || !s->pd2 || !s->cq || !s->xrcd || s->buf == MAP_FAILED)
		return -1;
	s->mr = ibv_reg_mr(s->pd, s->buf, 2 * MSG, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE);
	s->mr2 = ibv_reg_mr(s->pd2, s->buf, 2 * MSG, IBV_ACCESS_LOCAL_WRITE |
			    IBV_ACCESS_REMOTE_WRITE);
	sa.pd = s->pd;
	sa.xrcd = s->xrcd;
	sa.cq = s->cq;
	s->srq = s->mr && s->mr2 ? ibv_create_srq_ex(s->ctx, &sa) : NULL;
	if (!s->srq || ibv_get_srq_num(s->srq, &s->srqn))
		return -1;
	return 0;
}

static void side_close(struct side *s)
{
	if (s->ini)
		ibv_destroy_qp(s->ini);
	if (s->tgt)
		ibv_destroy_qp(s->tgt);
	if (s->srq)
		ibv_destroy_srq(s->srq);
	if (s->mr2)
		ibv_dereg_mr(s->mr2);
	if (s->mr)
		ibv_dereg_mr(s->mr);
	if (s->xrcd)
		ibv_close_xrcd(s->xrcd);
	if (s->cq)
		ibv_destroy_cq(s->cq);
	if (s->pd2)
		ibv_dealloc_pd(s->pd2);
	if (s->pd)
		ibv_dealloc_pd(s->pd);
	if (s->buf && s->buf != MAP_FAILED)
		munmap(s->buf, 2 * MSG);
	if (s->ctx)
		ibv_close_device(s->ctx);
}

static int post_recv(struct side *s, uint64_t id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)s->buf + MSG, .length = MSG,
		.lkey = s->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 },
			   *bad;

	return ibv_post_srq_recv(s->srq, &wr, &bad);
}

/* a WR through the INI QP naming SRQ @srqn; 0 or the post's errno */
static int post_xrc(struct ibv_qp *ini, struct side *s, uint32_t srqn,
		    enum ibv_wr_opcode op, uint64_t id, uint32_t rkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)s->buf, .length = MSG, .lkey = s->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.qp_type.xrc.remote_srqn = srqn;
	if (op == IBV_WR_RDMA_WRITE) {
		wr.wr.rdma.remote_addr = (uintptr_t)s->buf + MSG;
		wr.wr.rdma.rkey = rkey;
	}
	return ibv_post_send(ini, &wr, &bad);
}

/* the INI QP's completion of the WR just posted: its status, or -1 */
static int ini_status(struct side *s, uint64_t id)
{
	struct ibv_wc wc;
	int st;

	/* a receive completion on the shared CQ may come first */
	do {
		st = poll_one(s->cq, &wc);
	} while (st >= 0 && wc.wr_id != id);
	return st;
}

static int qp_reset(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

/* the INI QP again, in RTS (an error put the last one in ERR) */
static int reconnect(struct side *s)
{
	if (s->ini)
		ibv_destroy_qp(s->ini);
	s->ini = new_ini(s);
	if (!s->ini)
		return -1;
	/* the TGT QP answers the INI QP it is connected to: from RESET */
	if (qp_reset(s->tgt) ||
	    qp_connect(s->tgt, s->ini->qp_num, s->lid, false))
		return -1;
	return qp_connect(s->ini, s->tgt->qp_num, s->lid, true);
}

static void rules(struct side *s)
{
	struct ibv_srq_init_attr basic = {
		.attr = { .max_wr = 1, .max_sge = 1 },
	};
	struct ibv_recv_wr rwr = { .wr_id = 1 }, *rbad;
	struct ibv_send_wr swr = { .wr_id = 1, .opcode = IBV_WR_SEND }, *sbad;
	struct ibv_srq *bsrq;
	struct ibv_wc wc;
	uint32_t n;
	int st;

	bsrq = ibv_create_srq(s->pd, &basic);
	expect_errno("basic_srq_has_no_number",
		     bsrq ? ibv_get_srq_num(bsrq, &n) : -1, EOPNOTSUPP);
	if (bsrq)
		ibv_destroy_srq(bsrq);
	printf("xrc srq_num %s\n", s->srqn ? "set" : "0");
	if (!s->srqn)
		fail("srq_num", "0%ld%ld", 0, 0);

	s->tgt = new_tgt(s);
	if (!s->tgt || reconnect(s))
		return fail("setup", "QPs errno %ld%ld", errno, 0);
	expect_errno("tgt_post_send", ibv_post_send(s->tgt, &swr, &sbad),
		     EINVAL);
	expect_errno("tgt_post_recv", ibv_post_recv(s->tgt, &rwr, &rbad),
		     EINVAL);
	expect_errno("ini_post_recv", ibv_post_recv(s->ini, &rwr, &rbad),
		     EINVAL);

	/* a SEND: the SRQ's WR, its CQ, the TGT QP's number */
	memset(s->buf, 0x5a, MSG);
	memset(s->buf + MSG, 0, MSG);
	if (post_recv(s, 100) ||
	    post_xrc(s->ini, s, s->srqn, IBV_WR_SEND, 200, 0))
		return fail("send", "post errno %ld%ld", errno, 0);
	st = poll_one(s->cq, &wc);
	if (st == IBV_WC_SUCCESS && wc.wr_id == 200)
		st = poll_one(s->cq, &wc);
	else if (st == IBV_WC_SUCCESS && poll_one(s->cq, &(struct ibv_wc){}))
		st = -1;
	expect_status("send_lands", st, IBV_WC_SUCCESS);
	printf("xrc recv wr_id %llu qp_num %s src_qp %s\n",
	       (unsigned long long)wc.wr_id,
	       wc.qp_num == s->tgt->qp_num ? "tgt" : "other",
	       wc.src_qp == s->ini->qp_num ? "ini" : "other");
	if (wc.wr_id != 100 || wc.qp_num != s->tgt->qp_num ||
	    wc.src_qp != s->ini->qp_num || wc.byte_len != MSG ||
	    memcmp(s->buf, s->buf + MSG, MSG))
		fail("send_lands", "recv completion or data wrong%ld%ld", 0, 0);

	/* RDMA WRITE: the SRQ's PD */
	memset(s->buf + MSG, 0, MSG);
	st = post_xrc(s->ini, s, s->srqn, IBV_WR_RDMA_WRITE, 300,
		      s->mr->rkey) ? -1 : ini_status(s, 300);
	expect_status("write_srq_pd", st, IBV_WC_SUCCESS);
	if (memcmp(s->buf, s->buf + MSG, MSG))
		fail("write_srq_pd", "data differ%ld%ld", 0, 0);
	st = post_xrc(s->ini, s, s->srqn, IBV_WR_RDMA_WRITE, 301,
		      s->mr2->rkey) ? -1 : ini_status(s, 301);
	expect_status("write_other_pd", st, IBV_WC_REM_ACCESS_ERR);

	/* an SRQ number that names none */
	if (reconnect(s))
		return fail("setup", "reconnect errno %ld%ld", errno, 0);
	st = post_xrc(s->ini, s, s->srqn + 1000, IBV_WR_SEND, 400, 0) ? -1 :
	     ini_status(s, 400);
	expect_status("srqn_unknown", st, IBV_WC_REM_INV_REQ_ERR);

	/* an RNR wait that a post ends */
	if (reconnect(s))
		return fail("setup", "reconnect errno %ld%ld", errno, 0);
	if (post_xrc(s->ini, s, s->srqn, IBV_WR_SEND, 500, 0))
		return fail("rnr", "post errno %ld%ld", errno, 0);
	usleep(20000);
	st = post_recv(s, 501) ? -1 : ini_status(s, 500);
	expect_status("rnr_wait_then_post", st, IBV_WC_SUCCESS);
	usleep(10000);
	while (ibv_poll_cq(s->cq, 1, &wc) == 1)
		;
}

/* an SRQ of another domain: refused as one that is not there */
static void other_domain(struct side *s, int fd2)
{
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = NWR, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_XRCD,
		.srq_type = IBV_SRQT_XRC,
		.pd = s->pd,
		.cq = s->cq,
	};
	struct ibv_xrcd *x2 = open_xrcd(s->ctx, fd2);
	struct ibv_srq *srq2 = NULL;
	uint32_t n2 = 0;
	int st = -1;

	sa.xrcd = x2;
	if (x2)
		srq2 = ibv_create_srq_ex(s->ctx, &sa);
	if (!srq2 || ibv_get_srq_num(srq2, &n2) || reconnect(s)) {
		fail("other_domain", "setup errno %ld%ld", errno, 0);
		goto out;
	}
	st = post_xrc(s->ini, s, n2, IBV_WR_SEND, 600, 0) ? -1 :
	     ini_status(s, 600);
	expect_status("srq_of_other_domain", st, IBV_WC_REM_INV_REQ_ERR);
out:
	if (srq2)
		ibv_destroy_srq(srq2);
	if (x2)
		ibv_close_xrcd(x2);
}

/*
 * Another process: the domain by the same file, the TGT QP by number;
 * an INI QP of its own sends into this process's SRQ. It says "sent"
 * after one SEND landed, then streams until killed.
 */
static int child_main(int fd, uint32_t tgt_qpn, uint32_t srqn, int wfd)
{
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_num = tgt_qpn,
		.qp_type = IBV_QPT_XRC_RECV,
	};
	struct side c = {};
	struct ibv_qp *tgt;
	struct ibv_port_attr port;
	uint64_t id = 0;

	c.ctx = rsim_open_device(devname);
	if (!c.ctx || ibv_query_port(c.ctx, 1, &port))
		return 1;
	c.lid = port.lid;
	c.pd = ibv_alloc_pd(c.ctx);
	c.cq = ibv_create_cq(c.ctx, 4 * NWR, NULL, NULL, 0);
	c.xrcd = open_xrcd(c.ctx, fd);
	c.buf = mmap(NULL, 2 * MSG, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!c.pd || !c.cq || !c.xrcd || c.buf == MAP_FAILED)
		return 1;
	c.mr = ibv_reg_mr(c.pd, c.buf, 2 * MSG, IBV_ACCESS_LOCAL_WRITE);
	oa.xrcd = c.xrcd;
	tgt = ibv_open_qp(c.ctx, &oa);
	c.ini = new_ini(&c);
	if (!c.mr || !tgt || !c.ini ||
	    qp_connect(tgt, c.ini->qp_num, c.lid, false) ||
	    qp_connect(c.ini, tgt_qpn, c.lid, true))
		return 1;
	for (;; id++) {
		if (post_xrc(c.ini, &c, srqn, IBV_WR_SEND, id, 0) ||
		    ini_status(&c, id) != IBV_WC_SUCCESS)
			return 1;
		if (!id && write(wfd, "s", 1) != 1)
			return 1;
	}
}

static void shared_dying(struct side *s, int fd)
{
	int p[2], i, posted = 0, got = 0, status = 0;
	struct ibv_wc wc;
	pid_t child;
	char c;

	if (pipe(p))
		return fail("shared", "pipe errno %ld%ld", errno, 0);
	/* the TGT QP in RTR and not connected to this process's INI QP */
	if (qp_reset(s->tgt)) {
		fail("shared", "TGT to RESET errno %ld%ld", errno, 0);
		goto out;
	}
	for (i = 0; i < NWR; i++)
		posted += !post_recv(s, 1000 + i);
	fflush(stdout);
	child = fork();
	if (child == 0) {
		close(p[0]);
		_exit(child_main(fd, s->tgt->qp_num, s->srqn, p[1]));
	}
	close(p[1]);
	p[1] = -1;
	if (child < 0 || read(p[0], &c, 1) != 1) {
		fail("shared", "the other process did not send%ld%ld", 0, 0);
		if (child > 0)
			kill(child, SIGKILL);
	} else {
		printf("xrc shared other_process_sent ok\n");
		usleep(5000);
		kill(child, SIGKILL);
	}
	if (child > 0)
		waitpid(child, &status, 0);
	/* what it sent landed here: this process's CQ, SRQ and QPs work on */
	while (ibv_poll_cq(s->cq, 1, &wc) == 1)
		got += wc.status == IBV_WC_SUCCESS;
	printf("xrc shared received %s\n", got > 0 ? "some" : "none");
	if (!got)
		fail("shared", "nothing received%ld%ld", 0, 0);
	/* the TGT QP: still this process's, connected again */
	memset(s->buf + MSG, 0, MSG);
	i = reconnect(s) ? -1 :
	    post_recv(s, 2000) || post_xrc(s->ini, s, s->srqn, IBV_WR_SEND,
					   2001, 0) ? -1 : ini_status(s, 2001);
	expect_status("after_other_process_died", i, IBV_WC_SUCCESS);
out:
	close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
}

int main(int argc, char **argv)
{
	struct ibv_device_attr attr;
	struct side s = {};
	int fd, fd2, opt;

	while ((opt = getopt(argc, argv, "d:")) != -1) {
		if (opt != 'd') {
			fprintf(stderr, "usage: %s [-d ibdev]\n", argv[0]);
			return 2;
		}
		devname = optarg;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* the files that name the domains: anonymous ones do (an inode) */
	fd = memfd_create("rsim_xrc", 0);
	fd2 = memfd_create("rsim_xrc2", 0);
	if (fd < 0 || fd2 < 0) {
		printf("FAIL files: %s\nresult FAIL\n", strerror(errno));
		return 1;
	}
	s.ctx = rsim_open_device(devname);
	if (!s.ctx || ibv_query_device(s.ctx, &attr)) {
		printf("FAIL open %s: %s\nresult FAIL\n", devname,
		       strerror(errno));
		return 1;
	}
	if (!(attr.device_cap_flags & IBV_DEVICE_XRC)) {
		printf("xrc none\nresult SKIP\n");
		return 77;
	}
	ibv_close_device(s.ctx);
	s.ctx = NULL;
	if (side_open(&s, fd)) {
		fail("setup", "objects errno %ld%ld", errno, 0);
	} else {
		rules(&s);
		other_domain(&s, fd2);
		if (s.tgt && s.ini)
			shared_dying(&s, fd);
	}
	side_close(&s);
	close(fd);
	close(fd2);
	printf("result %s\n", rsim_failures ? "FAIL" : "PASS");
	return rsim_failures ? 1 : 0;
}
