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
 *   rsim_umad ... safuzz SEED COUNT	COUNT requests to the SA at the
 *		port's SM LID, each a valid query (NodeRecord, PortInfoRecord,
 *		PathRecord, MCMemberRecord, ClassPortInfo) or a random
 *		mutation of one, some through an agent without RMPP so that
 *		their RMPP headers reach the SA's MAD layer as written; every
 *		request must end exactly once (an answer to its TID or a
 *		timeout), every answer must be well formed (its method, a
 *		known status, a whole number of records), valid queries must
 *		succeed; the groups it made are deleted and the SA must still
 *		answer
 *   rsim_umad ... saflood JOINS TABLES	JOINS creates of groups of the
 *		port's own, then TABLES MCMemberRecord GetTables at once
 *		whose RMPP answers it never ACKs; prints how many the SA
 *		granted and refused (ERR_NO_RESOURCES), leaves the groups
 *   rsim_umad ... smpflood SEED COUNT LID	COUNT malformed SMPs, sent
 *		without waiting: directed-route ones with random hop counts,
 *		hop pointers, paths, D bits and DR LIDs, and LID-routed ones
 *		to LID (a switch's) with random methods (not Set),
 *		attributes, modifiers and data; the kernel refuses some as they are
 *		sent, the fabric drops or answers the rest. Prints what was
 *		sent, refused and answered; fails only if the port breaks
 *
 * Several commands may follow one another; the first failure stops.
 */
#include <endian.h>
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

/* the SA (class 0x03, version 2; IBA 15.2) */
#define CLASS_SA		0x03
#define SA_VERSION		2
#define SA_GET_TABLE		0x12
#define SA_GET_TABLE_RESP	0x92
#define SA_DELETE		0x15
#define SA_DELETE_RESP		0x95
#define SA_ATTR_CPI		0x0001
#define SA_ATTR_NODE_REC	0x0011
#define SA_ATTR_PORTINFO_REC	0x0012
#define SA_ATTR_PATH_REC	0x0035
#define SA_ATTR_MCM_REC		0x0038
#define SA_DATA			56	/* MAD, RMPP and SA headers */
#define SA_COMP			48	/* ComponentMask */
#define SA_OFFSET		44	/* AttributeOffset, in 8-byte words */
/* how long a valid request and a mutated one wait for their answer */
#define SA_TIMEOUT_MS		4000
#define SA_TIMEOUT_BAD_MS	500
#define SA_WINDOW		16	/* requests in flight */
#define SA_BUF			65536	/* room for a GetTable answer */
/* MCMemberRecord: MGID, PortGID, Q_Key, TClass, P_Key, SL, FlowLabel, JoinState */
#define MCM_CREATE		0x130c7ULL
#define MCM_LEAVE		0x10003ULL
#define RMPP_TYPE_STOP		3
#define RMPP_TYPE_ABORT		4

enum { SA_T_CPI, SA_T_NODES, SA_T_NODE, SA_T_PORTS, SA_T_PATHS, SA_T_PATH,
	SA_T_JOIN, SA_T_GROUPS, SA_T_UNKNOWN, SA_T_NR };

struct sa_fuzz {
	struct port *p;
	unsigned int seed0;	/* as given, for messages */
	unsigned int seed;	/* the generator's state */
	unsigned int sm_lid;
	unsigned char gid[16];	/* the port's GID: fe80::<port GUID> */
	int agent;		/* RMPP: the kernel (de)segments */
	int raw;		/* no RMPP: headers go out as written */
	unsigned int tid0;
	/* per request: what it was, and how it ended */
	unsigned char *method, *pristine, *ended, *raw_sent;
	unsigned int sent, open, answered, timeouts, refused, extra;
	unsigned int ok, statuses, rmpp_ctl, joined, left;
};

static unsigned int sa_rand(struct sa_fuzz *f)
{
	return rand_r(&f->seed);
}

static void put64(unsigned char *p, unsigned long long v)
{
	put32(p, v >> 32);
	put32(p + 4, v);
}

/* a valid request of template @t; its expected status is 0 but for @t UNKNOWN */
static void sa_template(struct sa_fuzz *f, unsigned char *mad, int t,
			unsigned int tid)
{
	static const struct { int method, attr; } tmpl[SA_T_NR] = {
		[SA_T_CPI] = { METHOD_GET, SA_ATTR_CPI },
		[SA_T_NODES] = { SA_GET_TABLE, SA_ATTR_NODE_REC },
		[SA_T_NODE] = { METHOD_GET, SA_ATTR_NODE_REC },
		[SA_T_PORTS] = { SA_GET_TABLE, SA_ATTR_PORTINFO_REC },
		[SA_T_PATHS] = { SA_GET_TABLE, SA_ATTR_PATH_REC },
		[SA_T_PATH] = { METHOD_GET, SA_ATTR_PATH_REC },
		[SA_T_JOIN] = { METHOD_SET, SA_ATTR_MCM_REC },
		[SA_T_GROUPS] = { SA_GET_TABLE, SA_ATTR_MCM_REC },
		[SA_T_UNKNOWN] = { METHOD_GET, 0x00ff },
	};
	unsigned char *rec = mad + SA_DATA;

	memset(mad, 0, MAD_SIZE);
	mad_hdr(mad, CLASS_SA, tmpl[t].method, tid, tmpl[t].attr, 0);
	mad[2] = SA_VERSION;
	switch (t) {
	case SA_T_NODE:		/* by LID: the port's own */
		put64(mad + SA_COMP, 1);
		put16(rec, f->p->lid);
		break;
	case SA_T_PATH:		/* from the port to itself, one path */
		/* DGID, SGID, Reversible, NumbPath, P_Key */
		put64(mad + SA_COMP, 0x380c);
		memcpy(rec + 8, f->gid, 16);
		memcpy(rec + 24, f->gid, 16);
		rec[49] = 0x81;			/* Reversible, NumbPath 1 */
		put16(rec + 50, 0xffff);
		break;
	case SA_T_JOIN:		/* a new group of the port's own */
		put64(mad + SA_COMP, MCM_CREATE);
		rec[0] = 0xff;
		rec[1] = 0x12;
		rec[2] = 0x60;			/* not IPoIB's 401b */
		rec[3] = 0x1b;
		put32(rec + 8, f->seed ^ tid);
		put32(rec + 12, tid);
		memcpy(rec + 16, f->gid, 16);
		put32(rec + 32, 0x0b1b);	/* Q_Key */
		put16(rec + 40, 0xffff);	/* P_Key */
		rec[48] = 0x21;			/* Scope 2, JoinState full */
		break;
	}
}

/* mutate 1 to 8 bytes outside the TID and the class; some of them in the headers */
static void sa_mutate(struct sa_fuzz *f, unsigned char *mad, int raw)
{
	int n = 1 + sa_rand(f) % 8, i, at;

	if (sa_rand(f) % 4 == 0)	/* a whole new component mask */
		put64(mad + SA_COMP, (unsigned long long)sa_rand(f) << 32 |
		      sa_rand(f));
	for (i = 0; i < n; i++) {
		at = sa_rand(f) % 2 ? sa_rand(f) % SA_DATA :
			SA_DATA + sa_rand(f) % (MAD_SIZE - SA_DATA);
		if (at == 1 || (at >= 8 && at < 16))
			continue;
		if (at >= 24 && at < 36 && !raw)
			continue;	/* the kernel writes RMPP headers */
		mad[at] = sa_rand(f);
	}
}

static int sa_index(const struct sa_fuzz *f, unsigned int tid)
{
	unsigned int i = tid - f->tid0;

	return i < f->sent ? (int)i : -1;
}

/* A known MAD status: IBA 13.4.7's class-independent bits, or 15.2.1.1's 1 to 7. */
static int sa_status_known(unsigned int s)
{
	unsigned int low = s & 0xff;

	return (low == 0 || low == 0x04 || low == 0x08 || low == 0x0c ||
		low == 0x1c) && (s >> 8) <= 7;
}

static int sa_resp_method(int req)
{
	switch (req) {
	case METHOD_GET:
	case METHOD_SET:	/* IBA 13.4.5: a Set is answered by GetResp */
		return METHOD_GET | METHOD_RESP;
	case SA_GET_TABLE:
		return SA_GET_TABLE_RESP;
	case SA_DELETE:
		return SA_DELETE_RESP;
	default:
		return -1;	/* the SA has no such method: no answer */
	}
}

/* One ending: an answer (checked) or a request that failed or timed out. */
static void sa_ended(struct sa_fuzz *f, void *umad, int len)
{
	unsigned char *mad = umad_get_mad(umad);
	unsigned int tid = get32(mad + 12), status = get16(mad + 4);
	int i = sa_index(f, tid), rmpp = mad[26] & RMPP_FLAG_ACTIVE;
	int want, words, t;

	if (i < 0)
		fail("safuzz (seed %u): an ending for TID 0x%x, never sent",
		     f->seed0, tid);
	if (f->ended[i]) {
		/*
		 * Through the agent without RMPP, the MAD layer's RMPP
		 * answers (ACK, STOP, ABORT) to a header as written end the
		 * request, and the segments of a GetTable answer after the
		 * first, or the SA's answer to what a segment reassembled,
		 * may follow.
		 */
		if (!f->raw_sent[i])
			fail("safuzz (seed %u): request %d (TID 0x%x) ended twice",
			     f->seed0, i, tid);
		f->extra++;
		return;
	}
	f->ended[i] = 1;
	f->open--;
	if (umad_status(umad)) {
		if (umad_status(umad) != ETIMEDOUT)
			fail("safuzz (seed %u): request %d failed: %s", f->seed0,
			     i, strerror(umad_status(umad)));
		f->timeouts++;
		if (f->pristine[i] != 0xff)
			fail("safuzz (seed %u): valid request %d (template %d) was not answered",
			     f->seed0, i, f->pristine[i]);
		return;
	}
	f->answered++;
	if (len < SA_DATA || mad[1] != CLASS_SA)
		fail("safuzz (seed %u): answer %d: %d bytes, class 0x%02x",
		     f->seed0, i, len, mad[1]);
	if (rmpp && mad[25] != RMPP_TYPE_DATA) {
		/* the SA's MAD layer on an RMPP header as written */
		if (!f->raw_sent[i])
			fail("safuzz (seed %u): request %d: RMPP type %d answer",
			     f->seed0, i, mad[25]);
		f->rmpp_ctl++;
		return;
	}
	want = sa_resp_method(f->method[i]);
	if (mad[3] != want)
		fail("safuzz (seed %u): request %d, method 0x%02x: answer 0x%02x, not 0x%02x",
		     f->seed0, i, f->method[i], mad[3], want);
	if (!sa_status_known(status))
		fail("safuzz (seed %u): request %d: unknown status 0x%04x",
		     f->seed0, i, status);
	t = f->pristine[i];
	/*
	 * a GetTable past the port's share of RMPP answers in flight (those
	 * through the agent without RMPP are never ACKed): no resources
	 */
	if (t != 0xff && status == 0x0100 && f->method[i] == SA_GET_TABLE)
		t = 0xff;
	if (t != 0xff && status != (t == SA_T_UNKNOWN ? STATUS_UNSUP_METH_ATTR : 0))
		fail("safuzz (seed %u): valid request %d (template %d): status 0x%04x",
		     f->seed0, i, t, status);
	if (status) {
		f->statuses++;
		return;
	}
	f->ok++;
	words = get16(mad + SA_OFFSET);
	/* a raw agent sees the first segment only */
	if (mad[3] == SA_GET_TABLE_RESP && len > SA_DATA && !rmpp &&
	    (!words || (len - SA_DATA) % (words * 8)))
		fail("safuzz (seed %u): request %d: %d bytes of records of %d bytes",
		     f->seed0, i, len - SA_DATA, words * 8);
	f->joined += get16(mad + 16) == SA_ATTR_MCM_REC &&
		     f->method[i] == METHOD_SET;
}

/* wait for one ending (at most the timeout and a margin) */
static void sa_reap(struct sa_fuzz *f, void **umad, int *room)
{
	int len = *room, ret;

	ret = umad_recv(f->p->fd, *umad, &len, SA_TIMEOUT_MS + 4000);
	if (ret == -ENOSPC) {
		umad_free(*umad);
		*room = len;
		*umad = umad_alloc(1, umad_size() + len);
		if (!*umad)
			fail("umad_alloc(%d): out of memory", len);
		ret = umad_recv(f->p->fd, *umad, &len, 0);
	}
	if (ret < 0)
		fail("safuzz (seed %u): %u of %u requests never ended: %s",
		     f->seed0, f->open, f->sent, strerror(-ret));
	sa_ended(f, *umad, len);
}

/* sa_ask()'s one try */
static unsigned int sa_ask_once(struct sa_fuzz *f, void *out, int method,
				int attr, unsigned long long comp,
				const unsigned char *rec, int reclen,
				unsigned int *rlen)
{
	unsigned char *mad = umad_get_mad(out);
	unsigned int tid = ++f->p->tid;
	int len = SA_BUF, ret;

	memset(mad, 0, MAD_SIZE);
	mad_hdr(mad, CLASS_SA, method, tid, attr, 0);
	mad[2] = SA_VERSION;
	put64(mad + SA_COMP, comp);
	memcpy(mad + SA_DATA, rec, reclen);
	umad_set_addr(out, f->sm_lid, 1, 0, QKEY_GSI);
	umad_set_pkey(out, 0);
	if (umad_send(f->p->fd, f->agent, out, MAD_SIZE, 2000, MAD_RETRIES) < 0)
		fail("umad_send(SA method 0x%02x): %s", method, strerror(errno));
	do {
		len = SA_BUF;
		ret = umad_recv(f->p->fd, out, &len, 8000);
		if (ret < 0)
			fail("umad_recv(SA): %s", strerror(-ret));
	} while (get32(mad + 12) != tid);	/* a late fuzz answer: not ours */
	if (umad_status(out))
		fail("SA method 0x%02x attribute 0x%04x: %s", method, attr,
		     strerror(umad_status(out)));
	*rlen = len - SA_DATA;
	return get16(mad + 4);
}

/*
 * One request through the RMPP agent, waited for: the answer's status, and
 * the length of its records in *@len. A GetTable refused for resources
 * (0x0100: the port's share of RMPP answers is in flight, such as the
 * run's raw GetTables, which nobody ACKs and which the SA drops after
 * its retries, about 4 s) is asked again every 250 ms, for at most 12 s,
 * as an SA client does with ERR_NO_RESOURCES.
 */
static unsigned int sa_ask(struct sa_fuzz *f, void *out, int method,
			   int attr, unsigned long long comp,
			   const unsigned char *rec, int reclen,
			   unsigned int *rlen)
{
	unsigned int res, tries = 0;

	for (;;) {
		res = sa_ask_once(f, out, method, attr, comp, rec, reclen,
				  rlen);
		if (res != 0x0100 || method != SA_GET_TABLE || ++tries > 48)
			return res;
		usleep(250000);
	}
}

/*
 * The port's memberships (MCMemberRecord GetTable by PortGID): how many,
 * their records (56 bytes apart) in *@recs, to free()
 */
static unsigned int sa_memberships(struct sa_fuzz *f, void *out,
				   unsigned char **recs)
{
	unsigned char rec[52] = { 0 };
	unsigned int res, len, words;

	memcpy(rec + 16, f->gid, 16);
	res = sa_ask(f, out, SA_GET_TABLE, SA_ATTR_MCM_REC, 0x2, rec,
		     sizeof(rec), &len);
	if (res)
		fail("safuzz: the port's MCMemberRecords: status 0x%04x", res);
	words = get16(umad_get_mad(out) + SA_OFFSET);
	if (len && words != 7)
		fail("safuzz: MCMemberRecords %u bytes apart", words * 8);
	*recs = malloc(len + 1);
	if (!*recs)
		fail("safuzz: out of memory");
	memcpy(*recs, (unsigned char *)umad_get_mad(out) + SA_DATA, len);
	return len / 56;
}

/* @rec's MGID is among the @n records of @recs */
static int sa_member_of(const unsigned char *recs, unsigned int n,
			const unsigned char *rec)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!memcmp(recs + i * 56, rec, 16))
			return 1;
	return 0;
}

/*
 * @f's port facts (the SM's LID, the port's GID) and its two SA agents:
 * with RMPP (the kernel segments) and without (headers as written)
 */
static void sa_open(struct sa_fuzz *f)
{
	umad_port_t port;
	int ret;

	ret = umad_get_port(f->p->ca, f->p->portnum, &port);
	if (ret < 0)
		fail("umad_get_port: %s", strerror(-ret));
	f->sm_lid = port.sm_lid;
	f->gid[0] = 0xfe;
	f->gid[1] = 0x80;
	memcpy(f->gid + 8, &port.port_guid, 8);	/* network order */
	umad_release_port(&port);
	f->agent = umad_register(f->p->fd, CLASS_SA, SA_VERSION, 1, NULL);
	f->raw = umad_register(f->p->fd, CLASS_SA, SA_VERSION, 0, NULL);
	if (f->agent < 0 || f->raw < 0)
		fail("umad_register(SA): %s", strerror(errno));
}

static void cmd_safuzz(struct port *p, unsigned int seed, unsigned int count)
{
	struct sa_fuzz f = { .p = p, .seed0 = seed, .seed = seed };
	unsigned char leave[52] = { 0 }, *before, *now;
	unsigned int i, n, nbefore, res, len;
	int room = SA_BUF, raw;
	void *umad, *out;
	unsigned char *mad;

	sa_open(&f);
	f.method = calloc(count, 1);
	f.pristine = calloc(count, 1);
	f.ended = calloc(count, 1);
	f.raw_sent = calloc(count, 1);
	umad = umad_alloc(1, umad_size() + room);
	out = umad_alloc(1, umad_size() + SA_BUF);
	if (!f.method || !f.pristine || !f.ended || !f.raw_sent || !umad ||
	    !out)
		fail("safuzz: out of memory");
	printf("Seed %u\n", seed);
	fflush(stdout);
	nbefore = sa_memberships(&f, out, &before);

	f.tid0 = p->tid + 1;
	for (i = 0; i < count; i++) {
		while (f.open >= SA_WINDOW)
			sa_reap(&f, &umad, &room);
		mad = umad_get_mad(out);
		f.pristine[i] = sa_rand(&f) % SA_T_NR;
		sa_template(&f, mad, f.pristine[i], f.tid0 + i);
		raw = sa_rand(&f) % 4 == 0;
		if (sa_rand(&f) % 3) {
			sa_mutate(&f, mad, raw);
			f.pristine[i] = 0xff;
		}
		f.method[i] = mad[3];
		f.raw_sent[i] = raw;
		umad_set_addr(out, f.sm_lid, 1, 0, QKEY_GSI);
		umad_set_pkey(out, 0);
		f.sent = i + 1;
		if (umad_send(p->fd, raw ? f.raw : f.agent, out, MAD_SIZE,
			      f.pristine[i] == 0xff ? SA_TIMEOUT_BAD_MS :
			      SA_TIMEOUT_MS, 0) < 0) {
			/* the kernel refused what was written: never sent */
			if (f.pristine[i] != 0xff)
				fail("safuzz: valid request %u refused: %s", i,
				     strerror(errno));
			f.ended[i] = 1;
			f.refused++;
			continue;
		}
		f.open++;
	}
	while (f.open)
		sa_reap(&f, &umad, &room);
	p->tid = f.tid0 + count;

	/* leave every group joined during the run; then the SA still answers */
	n = sa_memberships(&f, out, &now);
	for (i = 0; i < n; i++) {
		const unsigned char *rec = now + i * 56;

		if (sa_member_of(before, nbefore, rec))
			continue;
		memcpy(leave, rec, 16);
		memcpy(leave + 16, f.gid, 16);
		leave[48] = rec[48] & 0x0f;
		res = sa_ask(&f, out, SA_DELETE, SA_ATTR_MCM_REC, MCM_LEAVE,
			     leave, sizeof(leave), &len);
		if (res)
			fail("safuzz: leaving group %u: status 0x%04x", i, res);
		f.left++;
	}
	free(now);
	if (sa_memberships(&f, out, &now) != nbefore)
		fail("safuzz: the port is a member of other groups than before");
	free(now);
	res = sa_ask(&f, out, SA_GET_TABLE, SA_ATTR_NODE_REC, 0, leave, 0,
		     &len);
	if (res)
		fail("safuzz: NodeRecord GetTable after the run: status 0x%04x",
		     res);
	printf("Sent %u\nRefused %u\nAnswered %u\nTimeouts %u\n", f.sent,
	       f.refused, f.answered, f.timeouts);
	printf("Succeeded %u\nStatuses %u\nRmppControl %u\nExtra %u\n", f.ok,
	       f.statuses, f.rmpp_ctl, f.extra);
	printf("Joined %u\nLeft %u\nNodeRecordBytes %u\n", f.joined, f.left,
	       len);
	if (umad_unregister(p->fd, f.agent) || umad_unregister(p->fd, f.raw))
		fail("umad_unregister: %s", strerror(errno));
	umad_free(umad);
	umad_free(out);
	free(f.method);
	free(f.pristine);
	free(f.ended);
	free(f.raw_sent);
	free(before);
}

/* one answer of the flood: its index (-1: none of ours), its status */
static int sa_flood_recv(struct sa_fuzz *f, void *umad, unsigned int n,
			 unsigned int *status, int *rmpp)
{
	unsigned char *mad = umad_get_mad(umad);
	int len = MAD_SIZE, ret;
	unsigned int i;

	ret = umad_recv(f->p->fd, umad, &len, SA_TIMEOUT_MS + 4000);
	if (ret < 0)	/* -ENOSPC too: every answer here is one MAD */
		fail("saflood: no answer: %s", strerror(-ret));
	if (umad_status(umad))
		fail("saflood: a request ended in %s",
		     strerror(umad_status(umad)));
	i = get32(mad + 12) - f->tid0;
	*status = get16(mad + 4);
	*rmpp = mad[26] & RMPP_FLAG_ACTIVE;
	return i < n ? (int)i : -1;
}

/*
 * Take all the SA gives one port: @joins creates of groups of the port's
 * own (not IPoIB's signatures), SA_WINDOW at a time, each answered with a
 * group or, once the port holds its share, ERR_NO_RESOURCES (0x0100);
 * then @tables MCMemberRecord GetTables at once through the agent without
 * RMPP, whose answers' segments it never ACKs: the SA keeps each one it
 * sends in flight until its retries run out (seconds), and answers the
 * rest 0x0100 once the port has its share in flight. Prints the counts;
 * the groups stay until the port leaves the subnet.
 */
static void cmd_saflood(struct port *p, unsigned int joins,
			unsigned int tables)
{
	struct sa_fuzz f = { .p = p };
	unsigned int i, done, status, joined = 0, jrefused = 0;
	unsigned int data = 0, trefused = 0, extra = 0;
	unsigned char *mad, *ended;
	void *umad, *out;
	int rmpp, k;

	sa_open(&f);
	umad = umad_alloc(1, umad_size() + MAD_SIZE);
	out = umad_alloc(1, umad_size() + MAD_SIZE);
	ended = calloc(joins + tables + 1, 1);
	if (!umad || !out || !ended)
		fail("saflood: out of memory");
	mad = umad_get_mad(out);

	/* the joins: a window of SA_WINDOW */
	f.tid0 = p->tid + 1;
	for (i = 0, done = 0; done < joins;) {
		if (i < joins && i - done < SA_WINDOW) {
			sa_template(&f, mad, SA_T_JOIN, f.tid0 + i);
			mad[SA_DATA + 2] = 0x70;	/* ff12:701b: no IPoIB's */
			put32(mad + SA_DATA + 8, getpid());
			umad_set_addr(out, f.sm_lid, 1, 0, QKEY_GSI);
			umad_set_pkey(out, 0);
			if (umad_send(p->fd, f.agent, out, MAD_SIZE,
				      SA_TIMEOUT_MS, 0) < 0)
				fail("saflood: umad_send(join %u): %s", i,
				     strerror(errno));
			i++;
			continue;
		}
		k = sa_flood_recv(&f, umad, joins, &status, &rmpp);
		if (k < 0 || ended[k])
			fail("saflood: a join's answer for TID 0x%x",
			     get32((unsigned char *)umad_get_mad(umad) + 12));
		ended[k] = 1;
		done++;
		if (status == 0)
			joined++;
		else if (status == 0x0100)
			jrefused++;
		else
			fail("saflood: join %d: status 0x%04x", k, status);
	}
	printf("Joins %u\nJoined %u\nJoinsRefused %u\n", joins, joined,
	       jrefused);
	fflush(stdout);

	/* the GetTables, all at once; no segment is ever ACKed */
	f.tid0 += joins;
	memset(ended, 0, joins + tables + 1);
	for (i = 0; i < tables; i++) {
		memset(mad, 0, MAD_SIZE);
		mad_hdr(mad, CLASS_SA, SA_GET_TABLE, f.tid0 + i,
			SA_ATTR_MCM_REC, 0);
		mad[2] = SA_VERSION;
		umad_set_addr(out, f.sm_lid, 1, 0, QKEY_GSI);
		umad_set_pkey(out, 0);
		if (umad_send(p->fd, f.raw, out, MAD_SIZE, SA_TIMEOUT_MS, 0) < 0)
			fail("saflood: umad_send(GetTable %u): %s", i,
			     strerror(errno));
	}
	for (done = 0; done < tables;) {
		k = sa_flood_recv(&f, umad, tables, &status, &rmpp);
		if (k < 0 || ended[k]) {
			extra++;	/* a segment sent again */
			continue;
		}
		ended[k] = 1;
		done++;
		if (status == 0 && rmpp)
			data++;
		else if (status == 0x0100 && !rmpp)
			trefused++;
		else
			fail("saflood: GetTable %d: status 0x%04x%s", k, status,
			     rmpp ? " (RMPP)" : "");
	}
	p->tid = f.tid0 + tables;
	printf("Tables %u\nTablesInFlight %u\nTablesRefused %u\nResent %u\n",
	       tables, data, trefused, extra);
	if (umad_unregister(p->fd, f.agent) || umad_unregister(p->fd, f.raw))
		fail("umad_unregister: %s", strerror(errno));
	umad_free(umad);
	umad_free(out);
	free(ended);
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

/* read whatever came back, without waiting; returns how many */
static unsigned int smp_drain(struct port *p, void *umad)
{
	unsigned int n = 0;
	int len;

	for (;;) {
		len = MAD_SIZE;
		if (umad_recv(p->fd, umad, &len, 0) < 0)
			return n;
		if (!umad_status(umad))
			n++;
	}
}

/*
 * A hostile client of the switches' SMAs and the fabric's directed-route
 * forwarding: nothing it sends may make a kernel report, and the fabric
 * must still sweep after it (guest/selftest-fabric.sh)
 */
static void cmd_smpflood(struct port *p, void *umad, unsigned int seed,
			 unsigned int count, unsigned int lid)
{
	static const int attrs[] = {
		0x0010, 0x0011, 0x0012, 0x0015, 0x0016, 0x0017, 0x0019, 0x001b,
		0x0020, 0x0002, 0xff00, 0x0014,
	};
	/*
	 * no Set: a client that may write PortInfo without an M_Key takes
	 * links down on real switches too; anything else goes
	 */
	static const int methods[] = { 0x01, 0x01, 0x05, 0x07, 0x81, 0x06 };
	unsigned int sent = 0, refused = 0, answers = 0, i, j;
	unsigned char *mad = umad_get_mad(umad);
	int agent;

	srandom(seed);
	for (i = 0; i < count; i++) {
		int dr = random() % 2;
		int cls = dr ? CLASS_SUBN_DR : CLASS_SUBN_LID;

		memset(umad, 0, umad_size() + MAD_SIZE);
		mad_hdr(mad, cls, methods[random() % 6], ++p->tid,
			attrs[random() % 12], random() % 4 ? random() % 40 :
							     (unsigned int)random());
		if (random() % 8 == 0)
			mad[2] = random() % 4;		/* ClassVersion */
		for (j = SMP_DATA; j < SMP_DATA + 64; j++)
			mad[j] = random();
		if (dr) {
			int hops = random() % 70;

			mad[7] = hops;				/* HopCount */
			mad[6] = random() % 3 ? 0 : random() % 70;
			if (random() % 4 == 0)
				put16(mad + 4, DR_DIRECTION);
			put16(mad + 32, random() % 4 ? PERMISSIVE_LID :
					random() % 0x10000);
			put16(mad + 34, random() % 4 ? PERMISSIVE_LID :
					random() % 0x10000);
			/* the first hop is this port, or the kernel refuses */
			mad[128 + 1] = random() % 8 ? p->portnum : random();
			for (j = 2; j < 64; j++)
				mad[128 + j] = random() % 4 ? random() % 10 :
							      random();
			for (j = 192; j < 256; j++)
				mad[j] = random();
			umad_set_addr(umad, PERMISSIVE_LID, 0, 0, 0);
		} else {
			umad_set_addr(umad, lid, 0, 0, 0);
		}
		umad_set_pkey(umad, 0);
		agent = agent_for(p, cls);
		if (umad_send(p->fd, agent, umad, MAD_SIZE, 50, 0) < 0)
			refused++;
		else
			sent++;
		if (i % 16 == 15)
			answers += smp_drain(p, umad);
	}
	usleep(200 * 1000);
	answers += smp_drain(p, umad);
	printf("Sent %u\nRefused %u\nAnswers %u\n", sent, refused, answers);
}

static void bad_usage(void)
{
	fail("usage: rsim_umad [-C ca] [-P port] [-D] command...\n"
	     "  commands: nodeinfo portinfo counters unknown small rmpp block\n"
	     "            safuzz SEED COUNT, saflood JOINS TABLES,\n"
	     "            smpflood SEED COUNT LID");
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
		if (!strcmp(argv[i], "saflood") && i + 2 < argc) {
			cmd_saflood(&p, strtoul(argv[i + 1], NULL, 0),
				    strtoul(argv[i + 2], NULL, 0));
			i += 2;
			continue;
		}
		if (!strcmp(argv[i], "smpflood") && i + 3 < argc) {
			cmd_smpflood(&p, umad, strtoul(argv[i + 1], NULL, 0),
				     strtoul(argv[i + 2], NULL, 0),
				     strtoul(argv[i + 3], NULL, 0));
			i += 3;
			continue;
		}
		if (!strcmp(argv[i], "safuzz") && i + 2 < argc) {
			cmd_safuzz(&p, strtoul(argv[i + 1], NULL, 0),
				   strtoul(argv[i + 2], NULL, 0));
			i += 2;
			continue;
		}
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
