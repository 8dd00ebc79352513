// SPDX-License-Identifier: GPL-2.0-only
/*
 * rsim_rds: RDS over the IB transport between two addresses of this host
 * (issue 21; Documentation/ulps.rst, "RDS"). A host program the UML boots
 * run on two RoCE-mode rdmasim devices, one on each end of a veth pair:
 *
 *   rsim_rds <addr0>%<if0> <addr1>%<if1> [exchanges]
 *
 * Two AF_RDS sockets, pinned to the IB transport (SO_RDS_TRANSPORT, so RDS
 * cannot fall back to another one), bound to the two IPv6 link-local
 * addresses. Then:
 *  1. messages: <exchanges> (default 200) round trips, A to B and back,
 *     of sizes from 1 byte to 64 KiB, each carrying a pattern made from its
 *     number; every message is checked for its source, length and bytes;
 *  2. RDMA WRITE: B registers a buffer by a message to A that carries the
 *     mapping (RDS_CMSG_RDMA_MAP: a fast registration on B's device) and
 *     whose cookie A receives (RDS_CMSG_RDMA_DEST); A sends a message
 *     carrying an RDMA WRITE of 64 KiB into it (RDS_CMSG_RDMA_ARGS) and
 *     asks to be told when it completed (RDS_RDMA_NOTIFY_ME); B checks its
 *     buffer when the message arrives (RDS delivers it after the RDMA);
 *  3. RDMA READ: the same, A reading B's buffer into its own; B registers
 *     the same buffer again, as an application that reuses its buffers
 *     does (with a buffer of its own the DMA-API report of finding 2 in
 *     Documentation/ulps.rst does not show);
 *  4. both MRs freed (RDS_FREE_MR).
 *
 * Prints one "ok <step>" line per step; the first failure prints
 * "not ok <step>: <why>" and exits 1.
 */

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <linux/rds.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef AF_RDS
#define AF_RDS 21
#endif
#ifndef SOL_RDS
#define SOL_RDS 276
#endif

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define RSIM_RDS_PORT	18634
#define RSIM_RDS_MAX	65536
#define RSIM_RDS_WAIT	30000	/* ms a message or a notification may take */

static const size_t sizes[] = { 1, 7, 64, 1000, 4096, 4097, 8192, 30000,
				65536 };

struct end {
	int fd;
	struct sockaddr_in6 addr;
	const char *name;
};

static void fail(const char *step, const char *fmt, ...)
{
	va_list ap;

	printf("not ok %s: ", step);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	exit(1);
}

/* "<addr>%<if>" into an IPv6 socket address with the interface's scope */
static void parse_addr(const char *arg, struct sockaddr_in6 *sa, int port)
{
	char buf[INET6_ADDRSTRLEN + IF_NAMESIZE + 2];
	char *pct;

	if (strlen(arg) >= sizeof(buf))
		fail("args", "%s: too long", arg);
	strcpy(buf, arg);
	pct = strchr(buf, '%');
	if (!pct)
		fail("args", "%s: no %%<interface>", arg);
	*pct = '\0';
	memset(sa, 0, sizeof(*sa));
	sa->sin6_family = AF_INET6;
	sa->sin6_port = htons(port);
	if (inet_pton(AF_INET6, buf, &sa->sin6_addr) != 1)
		fail("args", "%s: not an IPv6 address", buf);
	sa->sin6_scope_id = if_nametoindex(pct + 1);
	if (!sa->sin6_scope_id)
		fail("args", "%s: no such interface", pct + 1);
}

static void open_end(struct end *e, const char *arg, int port,
		     const char *name)
{
	int trans = RDS_TRANS_IB;

	e->name = name;
	parse_addr(arg, &e->addr, port);
	e->fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	if (e->fd < 0)
		fail("socket", "%s: %m", name);
	if (setsockopt(e->fd, SOL_RDS, SO_RDS_TRANSPORT, &trans, sizeof(trans)))
		fail("transport_ib", "%s: %m", name);
	if (bind(e->fd, (struct sockaddr *)&e->addr, sizeof(e->addr)))
		fail("bind", "%s to %s: %m", name, arg);
}

static void pattern(unsigned char *buf, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (unsigned char)(seed * 131 + i * 7 + (i >> 8));
}

static void send_to(const char *step, struct end *from, struct end *to,
		    const void *buf, size_t len, void *ctl, size_t ctllen)
{
	struct sockaddr_in6 dst = to->addr;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = {
		.msg_name = &dst,
		.msg_namelen = sizeof(dst),
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl,
		.msg_controllen = ctllen,
	};
	struct pollfd p = { .fd = from->fd, .events = POLLOUT };
	ssize_t n;

	/*
	 * A socket bound to a link-local address sends on its own link:
	 * the destination's scope must be the sender's (rds_sendmsg()),
	 * the far end being the same link's other side.
	 */
	dst.sin6_scope_id = from->addr.sin6_scope_id;
	for (;;) {
		n = sendmsg(from->fd, &msg, MSG_DONTWAIT);
		if (n >= 0)
			break;
		if (errno != EAGAIN && errno != ENOBUFS)
			fail(step, "sendmsg %s to %s: %m", from->name,
			     to->name);
		if (poll(&p, 1, RSIM_RDS_WAIT) <= 0)
			fail(step, "%s cannot send", from->name);
	}
	if ((size_t)n != len)
		fail(step, "sent %zd of %zu bytes", n, len);
}

/*
 * recv_from(): the next message or notification of <to>: its length, the
 * RDMA status from a notification in *status (-1 if none)
 */
static ssize_t recv_from(const char *step, struct end *to, struct end *from,
			 void *buf, size_t cap, int *status,
			 uint64_t *token, rds_rdma_cookie_t *cookie)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct rds_rdma_notify)) +
			 CMSG_SPACE(sizeof(rds_rdma_cookie_t))];
		struct cmsghdr align;
	} ctl;
	struct sockaddr_in6 src;
	struct iovec iov = { .iov_base = buf, .iov_len = cap };
	struct msghdr msg = {
		.msg_name = &src,
		.msg_namelen = sizeof(src),
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	struct pollfd p = { .fd = to->fd, .events = POLLIN };
	struct rds_rdma_notify note;
	struct cmsghdr *c;
	ssize_t n;

	*status = -1;
	/*
	 * poll() may say readable for what recvmsg() then does not return
	 * (RDS's poll also reports congestion map updates): wait again
	 */
	do {
		if (poll(&p, 1, RSIM_RDS_WAIT) <= 0)
			fail(step, "nothing for %s within %d ms", to->name,
			     RSIM_RDS_WAIT);
		msg.msg_namelen = sizeof(src);
		msg.msg_controllen = sizeof(ctl.buf);
		n = recvmsg(to->fd, &msg, MSG_DONTWAIT);
	} while (n < 0 && errno == EAGAIN);
	if (n < 0)
		fail(step, "recvmsg %s: %m", to->name);
	if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
		fail(step, "%s: truncated (flags %#x)", to->name,
		     msg.msg_flags);
	if (cookie)
		*cookie = 0;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_RDS)
			continue;
		if (c->cmsg_type == RDS_CMSG_RDMA_STATUS) {
			memcpy(&note, CMSG_DATA(c), sizeof(note));
			*status = note.status;
			*token = note.user_token;
		} else if (c->cmsg_type == RDS_CMSG_RDMA_DEST && cookie) {
			memcpy(cookie, CMSG_DATA(c), sizeof(*cookie));
		}
	}
	if (*status < 0 &&
	    (memcmp(&src.sin6_addr, &from->addr.sin6_addr,
		    sizeof(src.sin6_addr)) || src.sin6_port != from->addr.sin6_port))
		fail(step, "%s: a message not from %s", to->name, from->name);
	return n;
}

/* one message <from> -> <to> of <len> bytes made from <seed>, checked */
static void exchange(const char *step, struct end *from, struct end *to,
		     unsigned char *out, unsigned char *in, size_t len,
		     unsigned int seed)
{
	uint64_t token;
	int status;
	ssize_t n;

	pattern(out, len, seed);
	send_to(step, from, to, out, len, NULL, 0);
	n = recv_from(step, to, from, in, RSIM_RDS_MAX, &status, &token, NULL);
	if (status >= 0)
		fail(step, "%s: a notification, not a message", to->name);
	if ((size_t)n != len)
		fail(step, "message %u: %zd bytes, not %zu", seed, n, len);
	if (memcmp(out, in, len))
		fail(step, "message %u: bytes differ", seed);
}

/*
 * b's buffer registered for RDMA by a message to a that carries the
 * mapping (RDS_CMSG_RDMA_MAP: with FRWR, RDS registers only on a
 * connection, so RDS_GET_MR alone is refused); a gets the cookie in the
 * message (RDS_CMSG_RDMA_DEST), which must be the one b got
 */
static rds_rdma_cookie_t map_mr(const char *step, struct end *b,
				struct end *a, void *buf, size_t len,
				unsigned char *in)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct rds_get_mr_args))];
		struct cmsghdr align;
	} ctl;
	rds_rdma_cookie_t cookie = 0, got = 0;
	struct rds_get_mr_args args = {
		.vec = { .addr = (uintptr_t)buf, .bytes = len },
		.cookie_addr = (uintptr_t)&cookie,
		.flags = 0,
	};
	static const char note[] = "an MR for you";
	struct cmsghdr *c;
	uint64_t token;
	int status;
	ssize_t n;

	memset(&ctl, 0, sizeof(ctl));
	c = &ctl.align;
	c->cmsg_level = SOL_RDS;
	c->cmsg_type = RDS_CMSG_RDMA_MAP;
	c->cmsg_len = CMSG_LEN(sizeof(args));
	memcpy(CMSG_DATA(c), &args, sizeof(args));
	send_to(step, b, a, note, sizeof(note), ctl.buf, sizeof(ctl.buf));
	if (!cookie)
		fail(step, "%s got no cookie", b->name);
	n = recv_from(step, a, b, in, RSIM_RDS_MAX, &status, &token, &got);
	if (status >= 0 || (size_t)n != sizeof(note) || memcmp(in, note, n))
		fail(step, "%s: not the message that carried the MR", a->name);
	if (got != cookie)
		fail(step, "%s got cookie %#llx, %s made %#llx", a->name,
		     (unsigned long long)got, b->name,
		     (unsigned long long)cookie);
	return cookie;
}

static void free_mr(const char *step, struct end *b, rds_rdma_cookie_t c)
{
	struct rds_free_mr_args args = { .cookie = c, .flags = 0 };

	if (setsockopt(b->fd, SOL_RDS, RDS_FREE_MR, &args, sizeof(args)))
		fail(step, "RDS_FREE_MR on %s: %m", b->name);
}

/*
 * a sends b a message carrying an RDMA op on b's MR <cookie>: a WRITE of
 * <local> into it, or a READ of it into <local>; a waits for its
 * notification, b for the message
 */
static void rdma_op(const char *step, struct end *a, struct end *b,
		    rds_rdma_cookie_t cookie, void *local, size_t len,
		    int write, unsigned char *in)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct rds_rdma_args))];
		struct cmsghdr align;
	} ctl;
	struct rds_iovec lvec = { .addr = (uintptr_t)local, .bytes = len };
	struct rds_rdma_args args = {
		.cookie = cookie,
		/* RDS registers zero-based: the offset into b's MR */
		.remote_vec = { .addr = 0, .bytes = len },
		.local_vec_addr = (uintptr_t)&lvec,
		.nr_local = 1,
		.flags = RDS_RDMA_NOTIFY_ME | (write ? RDS_RDMA_READWRITE : 0),
		.user_token = write ? 0x5772 : 0x5265,
	};
	static const char note[] = "rdma done";
	struct cmsghdr *c;
	uint64_t token = 0;
	int status;
	ssize_t n;

	memset(&ctl, 0, sizeof(ctl));
	c = &ctl.align;
	c->cmsg_level = SOL_RDS;
	c->cmsg_type = RDS_CMSG_RDMA_ARGS;
	c->cmsg_len = CMSG_LEN(sizeof(args));
	memcpy(CMSG_DATA(c), &args, sizeof(args));
	send_to(step, a, b, note, sizeof(note), ctl.buf, sizeof(ctl.buf));

	/* the sender's notification: the op completed, with its token */
	n = recv_from(step, a, b, in, RSIM_RDS_MAX, &status, &token, NULL);
	if (status < 0)
		fail(step, "%s: a message (%zd bytes), not the notification",
		     a->name, n);
	if (status != RDS_RDMA_SUCCESS || token != args.user_token)
		fail(step, "notification: status %d token %#llx", status,
		     (unsigned long long)token);

	/* the message, delivered after the RDMA */
	n = recv_from(step, b, a, in, RSIM_RDS_MAX, &status, &token, NULL);
	if (status >= 0 || (size_t)n != sizeof(note) || memcmp(in, note, n))
		fail(step, "%s: not the message that carried the op", b->name);
}

int main(int argc, char **argv)
{
	static unsigned char out[RSIM_RDS_MAX], in[RSIM_RDS_MAX];
	static unsigned char abuf[RSIM_RDS_MAX], bbuf[RSIM_RDS_MAX];
	struct end a, b;
	rds_rdma_cookie_t cookie;
	unsigned int i, rounds = 200;
	size_t len;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3 || argc > 4) {
		fprintf(stderr,
			"usage: %s <addr0>%%<if0> <addr1>%%<if1> [exchanges]\n",
			argv[0]);
		return 2;
	}
	if (argc == 4)
		rounds = (unsigned int)strtoul(argv[3], NULL, 0);
	open_end(&a, argv[1], RSIM_RDS_PORT, "A");
	open_end(&b, argv[2], RSIM_RDS_PORT + 1, "B");
	printf("ok sockets\n");

	for (i = 0; i < rounds; i++) {
		len = sizes[i % ARRAY_SIZE(sizes)];
		exchange("messages", &a, &b, out, in, len, 2 * i);
		exchange("messages", &b, &a, out, in, len, 2 * i + 1);
	}
	printf("ok messages %u round trips\n", rounds);

	/* RDMA WRITE from A's buffer into B's MR */
	memset(bbuf, 0, sizeof(bbuf));
	pattern(abuf, sizeof(abuf), 0xabcd);
	cookie = map_mr("rdma_write", &b, &a, bbuf, sizeof(bbuf), in);
	rdma_op("rdma_write", &a, &b, cookie, abuf, sizeof(abuf), 1, in);
	if (memcmp(abuf, bbuf, sizeof(bbuf)))
		fail("rdma_write", "B's buffer does not hold what A wrote");
	free_mr("rdma_write", &b, cookie);
	printf("ok rdma_write\n");

	/* RDMA READ of B's MR into A's buffer */
	memset(abuf, 0, sizeof(abuf));
	pattern(bbuf, sizeof(bbuf), 0x1234);
	cookie = map_mr("rdma_read", &b, &a, bbuf, sizeof(bbuf), in);
	rdma_op("rdma_read", &a, &b, cookie, abuf, sizeof(abuf), 0, in);
	if (memcmp(abuf, bbuf, sizeof(bbuf)))
		fail("rdma_read", "A's buffer does not hold B's");
	free_mr("rdma_read", &b, cookie);
	printf("ok rdma_read\n");

	close(a.fd);
	close(b.fd);
	printf("ok closed\n");
	return 0;
}
