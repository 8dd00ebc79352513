// SPDX-License-Identifier: GPL-2.0-only
/*
 * rsim_umad: a libibumad client for an InfiniBand port with no fabric
 * behind it (rdmasim's), through /dev/infiniband/umadN only. Each command
 * prints "key value" lines and exits non-zero with a message on failure:
 *
 *   rsim_umad [-C ca] [-P port] [-D] nodeinfo|portinfo	SubnGet(), -D
 *		directed route (hop count 0), else LID-routed to the port's
 *		own LID
 *   rsim_umad [-C ca] [-P port] counters	PortCounters (PMA, QP1),
 *		checked against the port's sysfs counters
 *   rsim_umad ... unknown	SubnGet() of attribute 0xff00 (directed route
 *		and LID-routed) and PerfGet() of 0xff00: the status must be
 *		"unsupported method/attribute combination"
 *   rsim_umad ... small	umad_recv() with a buffer smaller than the MAD:
 *		refused, and the MAD is still there for a big enough one
 *   rsim_umad ... rmpp	a 4 KiB vendor MAD (class 0x30, RMPP) sent to the
 *		port's own LID and received: umad_alloc()'s size rule
 *   rsim_umad ... block	block in umad_recv() until the port goes away;
 *		exits 0 if that ends in an error
 *
 * Several commands may follow one another; the first failure stops.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/umad.h>

#define MAD_SIZE 256
#define MAD_TIMEOUT_MS 2000
#define MAD_RETRIES 2

#define CLASS_SUBN_LID 0x01
#define CLASS_SUBN_DR 0x81
#define CLASS_PERF 0x04
#define CLASS_VENDOR 0x30	/* vendor range 2: OUI, RMPP */
#define METHOD_GET 0x01
#define METHOD_SET 0x02
#define METHOD_RESP 0x80
#define ATTR_NODE_INFO 0x0011
#define ATTR_PORT_INFO 0x0015
#define ATTR_PORT_COUNTERS 0x0012
#define ATTR_UNKNOWN 0xff00
#define STATUS_UNSUP_METH_ATTR 0x000c	/* IBA 13.4.7, table 112 */
#define DR_DIRECTION 0x8000
#define QKEY_GSI 0x80010000
#define PERMISSIVE_LID 0xffff

/* where the SMP's and the GMP's data begin */
#define SMP_DATA 64
#define PMA_DATA 64
/* vendor class: MAD header, RMPP header, reserved byte, OUI; then data */
#define VENDOR_HDR 40
#define RMPP_PAYLOAD 4096
#define RMPP_FLAG_ACTIVE 0x01
#define RMPP_TYPE_DATA 1

static const unsigned char vendor_oui[3] = { 0x02, 0xca, 0x51 };

struct port {
	const char *ca;
	int portnum;
	int fd;
	unsigned int lid;
	int agent[3];	/* classes 0x01, 0x81 and 0x04 (clients) */
	unsigned int tid;
};

static void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "rsim_umad: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static unsigned int get16(const unsigned char *p)
{
	return p[0] << 8 | p[1];
}

static unsigned int get32(const unsigned char *p)
{
	return (unsigned int)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

static unsigned long long get64(const unsigned char *p)
{
	return (unsigned long long)get32(p) << 32 | get32(p + 4);
}

static void put16(unsigned char *p, unsigned int v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put32(unsigned char *p, unsigned int v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

/* the common MAD header (IBA 13.4.3) */
static void mad_hdr(unsigned char *mad, int mgmt_class, int method,
		    unsigned int tid, int attr_id, unsigned int attr_mod)
{
	mad[0] = 1;			/* BaseVersion */
	mad[1] = mgmt_class;
	mad[2] = 1;			/* ClassVersion */
	mad[3] = method;
	put32(mad + 8, 0);		/* TID: the kernel sets the top half */
	put32(mad + 12, tid);
	put16(mad + 16, attr_id);
	put32(mad + 20, attr_mod);
}

static unsigned long long sysfs_u64(const struct port *p, const char *what)
{
	char path[256];
	unsigned long long v;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/%s",
		 p->ca, p->portnum, what);
	f = fopen(path, "r");
	if (!f)
		fail("%s: %s", path, strerror(errno));
	if (fscanf(f, "%llu", &v) != 1)
		fail("%s: not a number", path);
	fclose(f);
	return v;
}

static void port_open(struct port *p)
{
	umad_ca_t ca;
	int ret;

	if (umad_init() < 0)
		fail("umad_init failed (is ib_umad loaded?)");
	ret = umad_get_ca(p->ca, &ca);
	if (ret < 0)
		fail("umad_get_ca(%s): %s", p->ca, strerror(-ret));
	if (p->portnum < 1 || p->portnum > ca.numports || !ca.ports[p->portnum])
		fail("%s has no port %d", p->ca, p->portnum);
	p->lid = ca.ports[p->portnum]->base_lid;
	umad_release_ca(&ca);
	p->fd = umad_open_port(p->ca, p->portnum);
	if (p->fd < 0)
		fail("umad_open_port(%s, %d): %s", p->ca, p->portnum,
		     strerror(-p->fd));
	p->agent[0] = -1;
	p->agent[1] = -1;
	p->agent[2] = -1;
	p->tid = (unsigned int)getpid() << 8;
}

/* agents as a client registers them: no methods, only responses */
static int agent_for(struct port *p, int mgmt_class)
{
	int i = mgmt_class == CLASS_SUBN_LID ? 0 :
		mgmt_class == CLASS_SUBN_DR ? 1 : 2;

	if (p->agent[i] < 0) {
		p->agent[i] = umad_register(p->fd, mgmt_class, 1, 0, NULL);
		if (p->agent[i] < 0)
			fail("umad_register(class 0x%02x): %s", mgmt_class,
			     strerror(errno));
	}
	return p->agent[i];
}

static void port_close(struct port *p)
{
	int i;

	for (i = 0; i < 3; i++)
		if (p->agent[i] >= 0 && umad_unregister(p->fd, p->agent[i]))
			fail("umad_unregister(%d): %s", p->agent[i],
			     strerror(errno));
	umad_close_port(p->fd);
	umad_done();
}

/* send a request, return its TID; the MAD is in umad_get_mad(umad) */
static unsigned int send_mad(struct port *p, void *umad, int mgmt_class)
{
	unsigned char *mad = umad_get_mad(umad);
	int agent = agent_for(p, mgmt_class);
	int ret;

	switch (mgmt_class) {
	case CLASS_SUBN_DR:
		umad_set_addr(umad, PERMISSIVE_LID, 0, 0, 0);
		break;
	case CLASS_SUBN_LID:
		umad_set_addr(umad, p->lid, 0, 0, 0);
		break;
	default:
		umad_set_addr(umad, p->lid, 1, 0, QKEY_GSI);
		break;
	}
	umad_set_pkey(umad, 0);
	ret = umad_send(p->fd, agent, umad, MAD_SIZE, MAD_TIMEOUT_MS,
			MAD_RETRIES);
	if (ret < 0)
		fail("umad_send(class 0x%02x, attr 0x%04x): %s", mgmt_class,
		     get16(mad + 16), strerror(errno));
	return get32(mad + 12);
}

/* wait for the response to <tid> into umad (MAD_SIZE bytes of MAD) */
static void recv_response(struct port *p, void *umad, unsigned int tid)
{
	unsigned char *mad = umad_get_mad(umad);
	int len = MAD_SIZE, ret;

	ret = umad_recv(p->fd, umad, &len, MAD_TIMEOUT_MS * (MAD_RETRIES + 2));
	if (ret < 0)
		fail("umad_recv: %s", strerror(-ret));
	if (umad_status(umad))
		fail("umad_recv: the request (TID 0x%x) failed: %s", tid,
		     strerror(umad_status(umad)));
	if (len < PMA_DATA || get32(mad + 12) != tid || !(mad[3] & METHOD_RESP))
		fail("umad_recv: not the response to TID 0x%x (length %d, TID 0x%x, method 0x%02x)",
		     tid, len, get32(mad + 12), mad[3]);
}

/* a Get of the SMA or the PMA; returns the response's status */
static unsigned int query(struct port *p, void *umad, int mgmt_class,
			  int attr_id, unsigned int attr_mod)
{
	unsigned char *mad = umad_get_mad(umad);
	unsigned int tid, status;

	memset(umad, 0, umad_size() + MAD_SIZE);
	mad_hdr(mad, mgmt_class, METHOD_GET, ++p->tid, attr_id, attr_mod);
	if (mgmt_class == CLASS_SUBN_DR) {
		put16(mad + 32, PERMISSIVE_LID);	/* DrSLID */
		put16(mad + 34, PERMISSIVE_LID);	/* DrDLID */
	}
	if (mgmt_class == CLASS_PERF && attr_id == ATTR_PORT_COUNTERS)
		mad[PMA_DATA + 1] = p->portnum;		/* PortSelect */
	tid = send_mad(p, umad, mgmt_class);
	recv_response(p, umad, tid);
	status = get16(mad + 4);
	if (mgmt_class == CLASS_SUBN_DR) {
		if (!(status & DR_DIRECTION))
			fail("directed-route response without the D bit (status 0x%04x)",
			     status);
		status &= ~DR_DIRECTION;
	}
	return status;
}

static int smp_class(int dr)
{
	return dr ? CLASS_SUBN_DR : CLASS_SUBN_LID;
}

static void print_route(const struct port *p, int dr)
{
	if (dr)
		printf("Route directed 0\n");
	else
		printf("Route lid %u\n", p->lid);
}

static void cmd_nodeinfo(struct port *p, void *umad, int dr)
{
	const unsigned char *d = (unsigned char *)umad_get_mad(umad) + SMP_DATA;
	unsigned int status = query(p, umad, smp_class(dr), ATTR_NODE_INFO, 0);

	if (status)
		fail("NodeInfo: MAD status 0x%04x", status);
	print_route(p, dr);
	printf("NodeType %u\n", d[2]);
	printf("NumPorts %u\n", d[3]);
	printf("SystemImageGUID 0x%016llx\n", get64(d + 4));
	printf("NodeGUID 0x%016llx\n", get64(d + 12));
	printf("PortGUID 0x%016llx\n", get64(d + 20));
	printf("PartitionCap %u\n", get16(d + 28));
	printf("DeviceID 0x%04x\n", get16(d + 30));
	printf("LocalPortNum %u\n", d[36]);
	printf("VendorID 0x%06x\n", get32(d + 36) & 0xffffff);
}

static void cmd_portinfo(struct port *p, void *umad, int dr)
{
	const unsigned char *d = (unsigned char *)umad_get_mad(umad) + SMP_DATA;
	unsigned int status = query(p, umad, smp_class(dr), ATTR_PORT_INFO,
				    p->portnum);

	if (status)
		fail("PortInfo: MAD status 0x%04x", status);
	print_route(p, dr);
	printf("GIDPrefix 0x%016llx\n", get64(d + 8));
	printf("LID %u\n", get16(d + 16));
	printf("SMLID %u\n", get16(d + 18));
	printf("CapabilityMask 0x%08x\n", get32(d + 20));
	printf("LocalPortNum %u\n", d[28]);
	printf("LinkWidthActive %u\n", d[31]);
	printf("PortState %u\n", d[32] & 0xf);
	printf("PhysState %u\n", d[33] >> 4);
	printf("LMC %u\n", d[34] & 0x7);
	printf("LinkSpeedActive %u\n", d[35] >> 4);
	printf("NeighborMTU %u\n", d[36] >> 4);
}

/*
 * PortCounters through QP1, between two reads of the same counters from
 * sysfs (which asks the PMA directly): counters only grow, and this
 * query's own request and response are traffic, so
 * before <= PMA <= after, and after > before for the packets.
 */
static void cmd_counters(struct port *p, void *umad)
{
	static const struct {
		const char *name, *sysfs;
		int off;
		int moves;
	} c[] = {
		{ "PortXmitData", "counters/port_xmit_data", 24, 1 },
		{ "PortRcvData", "counters/port_rcv_data", 28, 1 },
		{ "PortXmitPkts", "counters/port_xmit_packets", 32, 1 },
		{ "PortRcvPkts", "counters/port_rcv_packets", 36, 1 },
		{ "SymbolErrorCounter", "counters/symbol_error", 4, 0 },
	};
	const unsigned char *d = (unsigned char *)umad_get_mad(umad) + PMA_DATA;
	unsigned long long before[5], after, v, sat;
	unsigned int status, i;

	for (i = 0; i < 5; i++)
		before[i] = sysfs_u64(p, c[i].sysfs);
	status = query(p, umad, CLASS_PERF, ATTR_PORT_COUNTERS, 0);
	if (status)
		fail("PortCounters: MAD status 0x%04x", status);
	if (d[1] != p->portnum)
		fail("PortCounters: PortSelect %u, not %d", d[1], p->portnum);
	printf("Route lid %u\n", p->lid);
	for (i = 0; i < 5; i++) {
		after = sysfs_u64(p, c[i].sysfs);
		v = c[i].off == 4 ? get16(d + 4) : get32(d + c[i].off);
		printf("%s %llu\n", c[i].name, v);
		/* PortCounters saturate; sysfs may read the 64-bit ones */
		sat = c[i].off == 4 ? 0xffff : 0xffffffff;
		if ((v < before[i] && v != sat) || v > after)
			fail("%s: the PMA says %llu, sysfs %llu before and %llu after",
			     c[i].name, v, before[i], after);
		if (c[i].moves && after <= before[i])
			fail("%s: sysfs did not count this query (%llu before, %llu after)",
			     c[i].name, before[i], after);
	}
}

static void cmd_unknown(struct port *p, void *umad)
{
	static const struct {
		const char *name;
		int mgmt_class;
	} c[] = {
		{ "SMPStatusDirected", CLASS_SUBN_DR },
		{ "SMPStatusLID", CLASS_SUBN_LID },
		{ "PMAStatus", CLASS_PERF },
	};
	unsigned int i, status;

	for (i = 0; i < 3; i++) {
		status = query(p, umad, c[i].mgmt_class, ATTR_UNKNOWN, 0);
		printf("%s 0x%04x\n", c[i].name, status);
		if (status != STATUS_UNSUP_METH_ATTR)
			fail("attribute 0x%04x of class 0x%02x: status 0x%04x, not 0x%04x",
			     ATTR_UNKNOWN, c[i].mgmt_class, status,
			     STATUS_UNSUP_METH_ATTR);
	}
}

static void wait_readable(struct port *p)
{
	int ret = umad_poll(p->fd, MAD_TIMEOUT_MS * (MAD_RETRIES + 2));

	if (ret)
		fail("umad_poll: %s", strerror(-ret));
}

/*
 * umad_recv() with room for less than the MAD: the kernel refuses the
 * read (a single-segment MAD: EINVAL, "not room for the first segment";
 * ENOSPC with the length is for RMPP, see cmd_rmpp) and puts the MAD back
 * at the head of the queue: the next read with room gets the same one.
 */
static void cmd_small(struct port *p, void *umad)
{
	unsigned char *mad = umad_get_mad(umad);
	unsigned int tid;
	void *small;
	int len = 16, ret;

	memset(umad, 0, umad_size() + MAD_SIZE);
	mad_hdr(mad, CLASS_SUBN_LID, METHOD_GET, ++p->tid, ATTR_NODE_INFO, 0);
	tid = send_mad(p, umad, CLASS_SUBN_LID);
	wait_readable(p);

	small = umad_alloc(1, umad_size() + len);
	if (!small)
		fail("umad_alloc: out of memory");
	ret = umad_recv(p->fd, small, &len, 0);
	umad_free(small);
	printf("SmallRecv %d %s\n", ret, ret < 0 ? strerror(-ret) : "MAD");
	if (ret != -EINVAL)
		fail("umad_recv with room for 16 bytes returned %d, not -EINVAL",
		     ret);

	memset(umad, 0, umad_size() + MAD_SIZE);
	len = MAD_SIZE;
	ret = umad_recv(p->fd, umad, &len, 0);
	if (ret < 0)
		fail("umad_recv after the short one: %s (the MAD was lost)",
		     strerror(-ret));
	printf("Length %d\n", len);
	printf("TID 0x%08x\n", get32(mad + 12));
	if (len != MAD_SIZE || get32(mad + 12) != tid || get16(mad + 4))
		fail("not the response to TID 0x%x: length %d, TID 0x%x, status 0x%04x",
		     tid, len, get32(mad + 12), get16(mad + 4));
	printf("Requeued yes\n");
}

static unsigned char pattern(int i)
{
	return (unsigned char)(i * 7 + 3 + (i >> 8));
}

/*
 * umad_alloc()'s size rule: umad_size() plus the length umad_recv()
 * reported for an RMPP MAD. A sending and a receiving agent of vendor
 * class 0x30 (OUI 02:ca:51, RMPP version 1: the kernel segments and
 * reassembles) on one fd; a Set of RMPP_PAYLOAD bytes to the port's own
 * LID on QP1 arrives as one MAD.
 */
static void cmd_rmpp(struct port *p)
{
	long methods[16 / sizeof(long)] = { 0 };
	int total = VENDOR_HDR + RMPP_PAYLOAD;
	unsigned char oui[3], *mad;
	int tx, rx, len, ret, i;
	unsigned int tid;
	void *umad;

	memcpy(oui, vendor_oui, sizeof(oui));
	methods[0] = 1L << METHOD_SET;
	rx = umad_register_oui(p->fd, CLASS_VENDOR, 1, oui, methods);
	if (rx < 0)
		fail("umad_register_oui(receiver): %s", strerror(errno));
	tx = umad_register_oui(p->fd, CLASS_VENDOR, 1, oui, NULL);
	if (tx < 0)
		fail("umad_register_oui(sender): %s", strerror(errno));

	umad = umad_alloc(1, umad_size() + total);
	if (!umad)
		fail("umad_alloc: out of memory");
	mad = umad_get_mad(umad);
	mad_hdr(mad, CLASS_VENDOR, METHOD_SET, ++p->tid, 0x0010, 0);
	mad[24] = 1;			/* RMPPVersion */
	mad[25] = RMPP_TYPE_DATA;
	mad[26] = RMPP_FLAG_ACTIVE;
	memcpy(mad + 37, oui, 3);
	for (i = 0; i < RMPP_PAYLOAD; i++)
		mad[VENDOR_HDR + i] = pattern(i);
	tid = get32(mad + 12);
	umad_set_addr(umad, p->lid, 1, 0, QKEY_GSI);
	umad_set_pkey(umad, 0);
	/* no response expected: the last segment's ACK completes the send */
	if (umad_send(p->fd, tx, umad, total, 0, MAD_RETRIES) < 0)
		fail("umad_send(%d bytes, RMPP): %s", total, strerror(errno));
	umad_free(umad);

	/* a buffer for one MAD: the first segment and the whole length */
	wait_readable(p);
	umad = umad_alloc(1, umad_size() + MAD_SIZE);
	if (!umad)
		fail("umad_alloc: out of memory");
	len = MAD_SIZE;
	ret = umad_recv(p->fd, umad, &len, 0);
	umad_free(umad);
	printf("FirstRecv %d %s\n", ret, ret < 0 ? strerror(-ret) : "MAD");
	printf("NeededLength %d\n", len);
	if (ret != -ENOSPC)
		fail("umad_recv with room for %d bytes returned %d, not -ENOSPC",
		     MAD_SIZE, ret);
	if (len != total)
		fail("umad_recv reported %d bytes, the MAD is %d", len, total);

	umad = umad_alloc(1, umad_size() + len);
	if (!umad)
		fail("umad_alloc: out of memory");
	mad = umad_get_mad(umad);
	ret = umad_recv(p->fd, umad, &len, 0);
	if (ret < 0)
		fail("umad_recv with room for %d bytes: %s", len, strerror(-ret));
	printf("Agent %d\n", ret);
	printf("Length %d\n", len);
	printf("Segments %d\n",
	       (RMPP_PAYLOAD + MAD_SIZE - VENDOR_HDR - 1) / (MAD_SIZE - VENDOR_HDR));
	if (ret != rx || len != total || get32(mad + 12) != tid ||
	    mad[1] != CLASS_VENDOR || mad[3] != METHOD_SET ||
	    memcmp(mad + 37, oui, 3))
		fail("agent %d (not %d), length %d, TID 0x%x, class 0x%02x, method 0x%02x",
		     ret, rx, len, get32(mad + 12), mad[1], mad[3]);
	for (i = 0; i < RMPP_PAYLOAD; i++)
		if (mad[VENDOR_HDR + i] != pattern(i))
			fail("payload byte %d is 0x%02x, not 0x%02x", i,
			     mad[VENDOR_HDR + i], pattern(i));
	printf("Payload %d bytes identical\n", RMPP_PAYLOAD);
	umad_free(umad);

	if (umad_unregister(p->fd, tx) || umad_unregister(p->fd, rx))
		fail("umad_unregister: %s", strerror(errno));
}

/*
 * Block in umad_recv() (poll() then read()) until the port goes away:
 * the wait must end in an error. "Blocking" is printed (and flushed)
 * before the wait, for the caller to know when to remove the device.
 */
static void cmd_block(struct port *p, void *umad)
{
	int len = MAD_SIZE, ret;

	agent_for(p, CLASS_PERF);
	printf("Blocking %s %d\n", p->ca, p->portnum);
	fflush(stdout);
	ret = umad_recv(p->fd, umad, &len, -1);
	if (ret >= 0)
		fail("umad_recv returned a MAD (agent %d, length %d)", ret, len);
	printf("RecvError %d %s\n", -ret, strerror(-ret));
	/* the agents went with the port */
	p->agent[0] = -1;
	p->agent[1] = -1;
	p->agent[2] = -1;
}

static void bad_usage(void)
{
	fail("usage: rsim_umad [-C ca] [-P port] [-D] command...\n"
	     "  commands: nodeinfo portinfo counters unknown small rmpp block");
}

int main(int argc, char **argv)
{
	struct port p = { .ca = "rdmasim0", .portnum = 1 };
	int dr = 0, opt, i;
	void *umad;

	while ((opt = getopt(argc, argv, "C:P:D")) != -1) {
		switch (opt) {
		case 'C':
			p.ca = optarg;
			break;
		case 'P':
			p.portnum = atoi(optarg);
			break;
		case 'D':
			dr = 1;
			break;
		default:
			bad_usage();
		}
	}
	if (optind == argc)
		bad_usage();
	port_open(&p);
	umad = umad_alloc(1, umad_size() + MAD_SIZE);
	if (!umad)
		fail("umad_alloc: out of memory");
	for (i = optind; i < argc; i++) {
		if (!strcmp(argv[i], "nodeinfo"))
			cmd_nodeinfo(&p, umad, dr);
		else if (!strcmp(argv[i], "portinfo"))
			cmd_portinfo(&p, umad, dr);
		else if (!strcmp(argv[i], "counters"))
			cmd_counters(&p, umad);
		else if (!strcmp(argv[i], "unknown"))
			cmd_unknown(&p, umad);
		else if (!strcmp(argv[i], "small"))
			cmd_small(&p, umad);
		else if (!strcmp(argv[i], "rmpp"))
			cmd_rmpp(&p);
		else if (!strcmp(argv[i], "block"))
			cmd_block(&p, umad);
		else
			bad_usage();
	}
	umad_free(umad);
	port_close(&p);
	return 0;
}
