// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * nccl_replay: the verbs usage of NCCL's IB transport (net_ib), replayed
 * without a GPU, with every byte and every completion checked.
 *
 * What it does the way NCCL's net_ib does it:
 *  - picks the device and port like NCCL: an ACTIVE Ethernet port, the
 *    device's PCI path from the sysfs "device" link, the link speed from
 *    active_speed/active_width, and a RoCE v2 GID of the IPv4 family found
 *    through sysfs (gid_attrs/types);
 *  - probes what NCCL probes: ibv_reg_mr_iova2 with RELAXED_ORDERING (all
 *    its buffers are registered so), ibv_reg_dmabuf_mr with fd -1 (DMA-BUF
 *    support), ibv_query_ece/ibv_set_ece (ECE, exchanged when supported);
 *  - connects 1 to 128 RC QPs per connection with NCCL's attributes: one
 *    CQ, timeout (-t, NCCL_IB_TIMEOUT), retry_cnt 7, rnr_retry 7,
 *    min_rnr_timer 12, one outstanding READ each way, the port's MTU, GRH
 *    with hop limit 255;
 *  - the receiver announces each receive (a "clear to send" element:
 *    address, rkey, size, index) by an RDMA WRITE on the first QP into the
 *    sender's FIFO (signalled once per round of slots), after posting one
 *    zero-SGE receive on every QP;
 *  - the sender polls its FIFO, splits every message over the QPs in
 *    128-byte aligned chunks and posts, per QP, a chain of unsignalled RDMA
 *    WRITEs (one per grouped receive, -m) ending in a signalled RDMA WRITE
 *    WITH IMM; with one receive the last data WRITE carries the immediate,
 *    with several (or in adaptive-routing mode, -a, above 8 KiB) a 0-byte
 *    WRITE WITH IMM follows the data; several receives also get their
 *    sizes written to the receiver first;
 *  - the receiver takes one RECV_RDMA_WITH_IMM per QP per request and, with
 *    -f, "flushes" each received buffer with a 1-byte RDMA READ on a QP
 *    connected to itself, as NCCL does for GPU Direct RDMA.
 * Up to 8 requests are in flight (NCCL's steps).  Checked: every byte,
 * the immediate data, that each QP's completions come in posting order
 * and that nothing completes with an error.
 *
 *   nccl_replay -s [-p PORT] [options]          receiver
 *   nccl_replay -c HOST [-p PORT] [options]     sender
 * options (the same on both sides): -d DEV, -G IPv4 (the GID to use),
 * -q QPS (1..128), -n ITERATIONS, -S MAX_SIZE, -m RECVS (1..8), -a, -f,
 * -t TIMEOUT, -i (CTS written inline).
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define MAX_QPS		128
#define MAX_RECVS	8	/* receives grouped in one request */
#define SLOTS		8	/* requests in flight */
#define SPLIT_ALIGN	128	/* per-QP chunks are multiples of this */
#define AR_THRESHOLD	8192	/* adaptive routing: bulk WRITE above this */
#define TIMEOUT_S	60	/* no progress for this long: fail */

/* One "clear to send" element, as the receiver writes it. */
struct cts_elem {
	uint64_t addr;
	uint32_t rkey;
	uint32_t size;
	uint32_t nreqs;
	uint32_t pad;
	uint64_t idx;		/* request number + 1; written last */
	uint8_t fill[32];	/* 64 bytes, like NCCL's FIFO elements */
};

/* What the two sides exchange over TCP before connecting the QPs. */
struct conn_info {
	uint8_t gid[16];
	uint32_t qpn[MAX_QPS];
	uint32_t ece_vendor[MAX_QPS];
	uint32_t ece_options[MAX_QPS];
	uint32_t ece_comp[MAX_QPS];
	uint8_t ece_ok[MAX_QPS];
	uint64_t fifo_addr;	/* sender: its CTS FIFO */
	uint32_t fifo_rkey;
	uint64_t sizes_addr;	/* receiver: where grouped sizes go */
	uint32_t sizes_rkey;
};

static struct {
	const char *dev;
	const char *gid_ip;
	const char *host;
	int port;
	int qps;
	int iters;
	uint32_t max_size;
	int recvs;
	bool ar;
	bool flush;
	bool inline_cts;
	int timeout;
} opt = {
	.port = 18515, .qps = 1, .iters = 200, .max_size = 1 << 20,
	.recvs = 1, .timeout = 20,
};

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp[MAX_QPS];
	struct ibv_qp *flush_qp;
	struct ibv_port_attr port;
	int gid_index;
	union ibv_gid gid;
	uint8_t *buf;		/* SLOTS * recvs buffers of max_size */
	struct ibv_mr *buf_mr;
	struct cts_elem *fifo;	/* sender: written by the receiver */
	struct ibv_mr *fifo_mr;
	struct cts_elem *cts;	/* receiver: CTS elements it writes */
	struct ibv_mr *cts_mr;
	uint32_t *sizes;	/* receiver: SLOTS * MAX_RECVS sizes */
	struct ibv_mr *sizes_mr;
	uint32_t *sizes_src;	/* sender: the sizes it writes */
	struct ibv_mr *sizes_src_mr;
	uint8_t flush_byte;
	struct ibv_mr *flush_mr;
	uint32_t ece_vendor[MAX_QPS], ece_options[MAX_QPS], ece_comp[MAX_QPS];
	uint8_t ece_ok[MAX_QPS];
};

static bool is_server;

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "nccl_replay %s: FAIL: ", is_server ? "receiver" : "sender");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("nccl_replay %s: ", is_server ? "receiver" : "sender");
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Size of receive @k of request @r: 0, odd, aligned, big, cycling. */
static uint32_t msg_size(uint64_t r, int k)
{
	static const uint32_t sizes[] = {
		4096, 0, 1, 127, 128, 1000, 65536 + 7, 12345, 131072,
		UINT32_MAX, 8192, 8193, 524288 + 64,
	};
	uint32_t s = sizes[(r * MAX_RECVS + k) % (sizeof(sizes) / sizeof(sizes[0]))];

	return s < opt.max_size ? s : opt.max_size;
}

static uint8_t pattern(uint64_t r, int k, uint32_t j)
{
	return (uint8_t)(r * 131 + k * 17 + j * 7 + (j >> 8));
}

static uint8_t *slot_buf(struct side *s, uint64_t r, int k)
{
	return s->buf + ((r % SLOTS) * opt.recvs + k) * (size_t)opt.max_size;
}

/* ---- device, port and GID, chosen like NCCL ------------------------- */

static int read_sysfs(const char *path, char *out, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(out, 1, size - 1, f);
	fclose(f);
	out[n] = 0;
	while (n && (out[n - 1] == '\n' || out[n - 1] == ' '))
		out[--n] = 0;
	return 0;
}

/* Gb/s of an IB active_speed code, as NCCL decodes it. */
static double speed_gbps(uint8_t speed)
{
	switch (speed) {
	case 1: return 2.5;
	case 2: return 5.0;
	case 4: case 8: return 10.0;
	case 16: return 14.0;
	case 32: return 25.0;
	case 64: return 50.0;
	case 128: return 100.0;
	default: return 0;
	}
}

static int width_lanes(uint8_t width)
{
	switch (width) {
	case 1: return 1;
	case 2: return 4;
	case 4: return 8;
	case 8: return 12;
	case 16: return 2;
	default: return 0;
	}
}

/* A RoCE v2, IPv4-mapped GID (the one of -G if given) through sysfs. */
static void pick_gid(struct side *s, const char *name)
{
	char path[256], type[64];
	struct in_addr want = { 0 };
	int i;

	if (opt.gid_ip && inet_pton(AF_INET, opt.gid_ip, &want) != 1)
		die("bad -G address %s", opt.gid_ip);
	for (i = 0; i < s->port.gid_tbl_len; i++) {
		union ibv_gid gid;
		static const uint8_t v4_prefix[12] = {
			0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
		};

		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/1/gid_attrs/types/%d",
			 name, i);
		if (read_sysfs(path, type, sizeof(type)) ||
		    strcmp(type, "RoCE v2"))
			continue;
		if (ibv_query_gid(s->ctx, 1, i, &gid))
			continue;
		if (memcmp(gid.raw, v4_prefix, sizeof(v4_prefix)))
			continue;
		if (opt.gid_ip && memcmp(gid.raw + 12, &want, 4))
			continue;
		s->gid_index = i;
		s->gid = gid;
		return;
	}
	die("%s: no RoCE v2 IPv4 GID%s%s", name, opt.gid_ip ? " for " : "",
	    opt.gid_ip ? opt.gid_ip : "");
}

static bool port_usable(struct ibv_context *ctx, struct ibv_port_attr *port)
{
	return !ibv_query_port(ctx, 1, port) &&
	       port->state == IBV_PORT_ACTIVE &&
	       port->link_layer == IBV_LINK_LAYER_ETHERNET;
}

static void open_device(struct side *s)
{
	struct ibv_device **list;
	char path[256], *pci;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list || !n)
		die("no RDMA device");
	for (i = 0; i < n && !s->ctx; i++) {
		const char *name = ibv_get_device_name(list[i]);

		if (opt.dev && strcmp(name, opt.dev))
			continue;
		s->ctx = ibv_open_device(list[i]);
		if (s->ctx && !port_usable(s->ctx, &s->port)) {
			ibv_close_device(s->ctx);
			s->ctx = NULL;
		}
	}
	if (!s->ctx)
		die("no usable device%s%s", opt.dev ? " named " : "",
		    opt.dev ? opt.dev : "");
	opt.dev = strdup(ibv_get_device_name(s->ctx->device));
	ibv_free_device_list(list);
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device", opt.dev);
	pci = realpath(path, NULL);
	note("device %s, sysfs device %s, port 1 active, MTU %d, %.1f Gb/s (%d x %.1f)",
	     opt.dev, pci ? pci : "(none)", 128 << s->port.active_mtu,
	     width_lanes(s->port.active_width) * speed_gbps(s->port.active_speed),
	     width_lanes(s->port.active_width), speed_gbps(s->port.active_speed));
	if (!pci && !strncmp(opt.dev, "stellar", 7))
		die("%s has no sysfs device link (NCCL reads its PCI path)",
		    opt.dev);
	free(pci);
	pick_gid(s, opt.dev);
	note("GID index %d (RoCE v2, IPv4)", s->gid_index);
}

/* ---- memory, like NCCL's registrations ------------------------------ */

static unsigned int mr_access(void)
{
	return IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
	       IBV_ACCESS_REMOTE_READ | IBV_ACCESS_RELAXED_ORDERING;
}

static struct ibv_mr *reg(struct side *s, void *addr, size_t len)
{
	struct ibv_mr *mr = ibv_reg_mr_iova2(s->pd, addr, len,
					     (uintptr_t)addr, mr_access());

	if (!mr)
		die("ibv_reg_mr_iova2(%zu bytes, RELAXED_ORDERING): %s", len,
		    strerror(errno));
	return mr;
}

static void *zalloc(size_t len)
{
	void *p;

	if (posix_memalign(&p, 4096, len ? len : 1))
		die("out of memory");
	memset(p, 0, len);
	return p;
}

/* NCCL's DMA-BUF probe: an fd of -1 must be refused, never registered. */
static void probe_dmabuf(struct side *s)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_dmabuf_mr(s->pd, 0, 0, 0, -1, 0);
	if (mr)
		die("ibv_reg_dmabuf_mr(fd -1) returned an MR");
	note("DMA-BUF probe: %s (%s)", strerror(errno),
	     errno == EOPNOTSUPP || errno == EPROTONOSUPPORT ?
	     "not supported" : "supported");
}

static void setup_memory(struct side *s)
{
	size_t bufs = (size_t)SLOTS * opt.recvs * opt.max_size;

	s->buf = zalloc(bufs);
	s->buf_mr = reg(s, s->buf, bufs);
	if (is_server) {
		s->cts = zalloc(sizeof(*s->cts) * SLOTS * MAX_RECVS);
		s->cts_mr = reg(s, s->cts, sizeof(*s->cts) * SLOTS * MAX_RECVS);
		s->sizes = zalloc(sizeof(*s->sizes) * SLOTS * MAX_RECVS);
		s->sizes_mr = reg(s, s->sizes,
				  sizeof(*s->sizes) * SLOTS * MAX_RECVS);
		s->flush_mr = reg(s, &s->flush_byte, 1);
	} else {
		s->fifo = zalloc(sizeof(*s->fifo) * SLOTS * MAX_RECVS);
		s->fifo_mr = reg(s, s->fifo, sizeof(*s->fifo) * SLOTS * MAX_RECVS);
		s->sizes_src = zalloc(sizeof(*s->sizes_src) * SLOTS * MAX_RECVS);
		s->sizes_src_mr = reg(s, s->sizes_src,
				      sizeof(*s->sizes_src) * SLOTS * MAX_RECVS);
	}
}

/* ---- QPs, with NCCL's attributes ------------------------------------- */

static struct ibv_qp *create_qp(struct side *s)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = s->cq,
		.recv_cq = s->cq,
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = 2 * SLOTS * (MAX_RECVS + 2),
			.max_recv_wr = SLOTS,
			.max_send_sge = 1,
			.max_recv_sge = 1,
			.max_inline_data = opt.inline_cts ?
				sizeof(struct cts_elem) * opt.recvs : 0,
		},
	};
	struct ibv_qp_attr init = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};
	struct ibv_qp *qp = ibv_create_qp(s->pd, &attr);

	if (!qp)
		die("ibv_create_qp: %s", strerror(errno));
	if (ibv_modify_qp(qp, &init, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("QP %u to INIT: %s", qp->qp_num, strerror(errno));
	return qp;
}

/* ECE as NCCL handles it: optional, exchanged, set before RTR. */
static void query_ece(struct side *s, int q)
{
	struct ibv_ece ece = { 0 };
	int ret = ibv_query_ece(s->qp[q], &ece);

	if (ret == EOPNOTSUPP || ret == ENOTSUP)
		return;
	if (ret)
		die("ibv_query_ece: %s", strerror(ret));
	s->ece_ok[q] = 1;
	s->ece_vendor[q] = ece.vendor_id;
	s->ece_options[q] = ece.options;
	s->ece_comp[q] = ece.comp_mask;
}

static void set_ece(struct side *s, int q, const struct conn_info *peer)
{
	struct ibv_ece ece = {
		.vendor_id = peer->ece_vendor[q],
		.options = peer->ece_options[q],
		.comp_mask = peer->ece_comp[q],
	};
	int ret;

	if (!s->ece_ok[q] || !peer->ece_ok[q])
		return;
	ret = ibv_set_ece(s->qp[q], &ece);
	if (ret && ret != EOPNOTSUPP && ret != ENOTSUP)
		die("ibv_set_ece: %s", strerror(ret));
}

static void connect_qp(struct side *s, struct ibv_qp *qp, uint32_t dest_qpn,
		       const uint8_t *dgid)
{
	struct ibv_qp_attr rtr = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = s->port.active_mtu,
		.dest_qp_num = dest_qpn,
		.rq_psn = 0,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1,
			.grh = {
				.flow_label = 0,
				.hop_limit = 255,
				.sgid_index = s->gid_index,
				.traffic_class = 0,
			},
			.sl = 0,
			.port_num = 1,
		},
	};
	struct ibv_qp_attr rts = {
		.qp_state = IBV_QPS_RTS,
		.timeout = opt.timeout,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.sq_psn = 0,
		.max_rd_atomic = 1,
	};

	memcpy(rtr.ah_attr.grh.dgid.raw, dgid, 16);
	if (ibv_modify_qp(qp, &rtr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("QP %u to RTR: %s", qp->qp_num, strerror(errno));
	if (ibv_modify_qp(qp, &rts, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			  IBV_QP_MAX_QP_RD_ATOMIC))
		die("QP %u to RTS: %s", qp->qp_num, strerror(errno));
}

/* ---- bootstrap over TCP --------------------------------------------- */

static int tcp_connect(void)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res;
	char port[16];
	int fd = -1, one = 1, tries;

	snprintf(port, sizeof(port), "%d", opt.port);
	if (is_server) {
		struct sockaddr_in sa = {
			.sin_family = AF_INET,
			.sin_port = htons(opt.port),
		};
		int lfd = socket(AF_INET, SOCK_STREAM, 0);

		if (lfd < 0 ||
		    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
		    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
		    listen(lfd, 1))
			die("listen on port %d: %s", opt.port, strerror(errno));
		fd = accept(lfd, NULL, NULL);
		close(lfd);
		if (fd < 0)
			die("accept: %s", strerror(errno));
		return fd;
	}
	if (getaddrinfo(opt.host, port, &hints, &res))
		die("cannot resolve %s", opt.host);
	for (tries = 0; tries < 100; tries++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd >= 0 && !connect(fd, res->ai_addr, res->ai_addrlen))
			break;
		if (fd >= 0)
			close(fd);
		fd = -1;
		usleep(100000);
	}
	freeaddrinfo(res);
	if (fd < 0)
		die("connect to %s:%d failed", opt.host, opt.port);
	return fd;
}

static void xfer(int fd, void *buf, size_t len, bool send_it)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = send_it ? write(fd, p, len) : read(fd, p, len);

		if (n <= 0)
			die("bootstrap %s: %s", send_it ? "write" : "read",
			    n ? strerror(errno) : "peer closed");
		p += n;
		len -= n;
	}
}

static void exchange(struct side *s, int fd, struct conn_info *peer)
{
	struct conn_info me = { 0 };
	int q;

	memcpy(me.gid, s->gid.raw, 16);
	for (q = 0; q < opt.qps; q++) {
		me.qpn[q] = s->qp[q]->qp_num;
		me.ece_ok[q] = s->ece_ok[q];
		me.ece_vendor[q] = s->ece_vendor[q];
		me.ece_options[q] = s->ece_options[q];
		me.ece_comp[q] = s->ece_comp[q];
	}
	if (s->fifo_mr) {
		me.fifo_addr = (uintptr_t)s->fifo;
		me.fifo_rkey = s->fifo_mr->rkey;
	}
	if (s->sizes_mr) {
		me.sizes_addr = (uintptr_t)s->sizes;
		me.sizes_rkey = s->sizes_mr->rkey;
	}
	xfer(fd, &me, sizeof(me), true);
	xfer(fd, peer, sizeof(*peer), false);
}

static void setup(struct side *s, struct conn_info *peer)
{
	int q, fd, ece = 0;
	char ok = 0;

	open_device(s);
	s->pd = ibv_alloc_pd(s->ctx);
	if (!s->pd)
		die("ibv_alloc_pd: %s", strerror(errno));
	s->cq = ibv_create_cq(s->ctx, 2 * SLOTS * (MAX_RECVS + 2) * opt.qps +
			      2 * SLOTS, NULL, NULL, 0);
	if (!s->cq)
		die("ibv_create_cq: %s", strerror(errno));
	probe_dmabuf(s);
	setup_memory(s);
	for (q = 0; q < opt.qps; q++) {
		s->qp[q] = create_qp(s);
		query_ece(s, q);
		ece += s->ece_ok[q];
	}
	note("%d QP%s, ECE %s, MRs with RELAXED_ORDERING", opt.qps,
	     opt.qps > 1 ? "s" : "", ece ? "supported" : "not supported");
	fd = tcp_connect();
	exchange(s, fd, peer);
	for (q = 0; q < opt.qps; q++) {
		set_ece(s, q, peer);
		connect_qp(s, s->qp[q], peer->qpn[q], peer->gid);
	}
	if (is_server && opt.flush) {
		s->flush_qp = create_qp(s);
		connect_qp(s, s->flush_qp, s->flush_qp->qp_num, s->gid.raw);
	}
	/* Both sides in RTS before anything is sent. */
	xfer(fd, &ok, 1, true);
	xfer(fd, &ok, 1, false);
	close(fd);
}

/* ---- completions ------------------------------------------------------ */

static int qp_index(struct side *s, uint32_t qpn)
{
	int q;

	for (q = 0; q < opt.qps; q++)
		if (s->qp[q]->qp_num == qpn)
			return q;
	if (s->flush_qp && s->flush_qp->qp_num == qpn)
		return MAX_QPS;
	die("completion for unknown QP %u", qpn);
	return -1;
}

static int poll_some(struct side *s, struct ibv_wc *wc, int max, double *last)
{
	int n = ibv_poll_cq(s->cq, max, wc), i;

	if (n < 0)
		die("ibv_poll_cq: %d", n);
	for (i = 0; i < n; i++)
		if (wc[i].status != IBV_WC_SUCCESS)
			die("completion wr_id %" PRIu64 " on QP %u: %s (vendor 0x%x)",
			    wc[i].wr_id, wc[i].qp_num,
			    ibv_wc_status_str(wc[i].status), wc[i].vendor_err);
	if (n)
		*last = now_s();
	else if (now_s() - *last > TIMEOUT_S)
		die("no completion for %d s", TIMEOUT_S);
	return n;
}

/* ---- receiver --------------------------------------------------------- */

static void post_recvs(struct side *s, uint64_t r)
{
	struct ibv_recv_wr wr = { .wr_id = r, .sg_list = NULL, .num_sge = 0 };
	struct ibv_recv_wr *bad;
	int q;

	for (q = 0; q < opt.qps; q++)
		if (ibv_post_recv(s->qp[q], &wr, &bad))
			die("ibv_post_recv: %s", strerror(errno));
}

/* Clear to send request @r: its receives' addresses into the FIFO. */
static void post_cts(struct side *s, const struct conn_info *peer, uint64_t r)
{
	struct cts_elem *e = &s->cts[(r % SLOTS) * MAX_RECVS];
	struct ibv_sge sge = {
		.addr = (uintptr_t)e,
		.length = sizeof(*e) * opt.recvs,
		.lkey = s->cts_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = UINT64_MAX,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = (opt.inline_cts ? IBV_SEND_INLINE : 0) |
			      (r % SLOTS == 0 ? IBV_SEND_SIGNALED : 0),
		.wr.rdma = {
			.remote_addr = peer->fifo_addr +
				       (r % SLOTS) * MAX_RECVS * sizeof(*e),
			.rkey = peer->fifo_rkey,
		},
	};
	struct ibv_send_wr *bad;
	int k;

	for (k = 0; k < opt.recvs; k++) {
		e[k].addr = (uintptr_t)slot_buf(s, r, k);
		e[k].rkey = s->buf_mr->rkey;
		e[k].size = opt.max_size;
		e[k].nreqs = opt.recvs;
		e[k].idx = r + 1;
		memset(slot_buf(s, r, k), 0xee, opt.max_size);
	}
	if (ibv_post_send(s->qp[0], &wr, &bad))
		die("posting the CTS of request %" PRIu64 ": %s", r,
		    strerror(errno));
}

static uint32_t expected_imm(uint64_t r)
{
	return opt.recvs == 1 ? msg_size(r, 0) : (uint32_t)opt.recvs;
}

/* Receives completed per slot, and the next request per QP. */
static int recv_got[SLOTS];
static uint64_t recv_next[MAX_QPS];

/* A completion of a data QP's receive or of a signalled CTS WRITE. */
static void recv_completion(struct side *s, const struct ibv_wc *wc)
{
	int q;

	if (wc->wr_id == UINT64_MAX)
		return;		/* a signalled CTS WRITE */
	q = qp_index(s, wc->qp_num);
	if (q == MAX_QPS)
		die("flush QP: completion wr_id %" PRIu64 " out of turn",
		    wc->wr_id);
	if (wc->opcode != IBV_WC_RECV_RDMA_WITH_IMM ||
	    !(wc->wc_flags & IBV_WC_WITH_IMM))
		die("QP %d: opcode %d, not a WRITE WITH IMM", q, wc->opcode);
	if (wc->wr_id != recv_next[q])
		die("QP %d: receive %" PRIu64 " completed, %" PRIu64 " was next",
		    q, wc->wr_id, recv_next[q]);
	if (ntohl(wc->imm_data) != expected_imm(recv_next[q]))
		die("QP %d request %" PRIu64 ": immediate %u, want %u", q,
		    recv_next[q], ntohl(wc->imm_data),
		    expected_imm(recv_next[q]));
	recv_got[recv_next[q] % SLOTS]++;
	recv_next[q]++;
}

/* NCCL's GPU Direct flush: a 1-byte READ of the buffer, on itself. */
static void flush_buffer(struct side *s, uint64_t r, int k, double *last)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)&s->flush_byte,
		.length = 1,
		.lkey = s->flush_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = UINT64_MAX - 1,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = {
			.remote_addr = (uintptr_t)slot_buf(s, r, k),
			.rkey = s->buf_mr->rkey,
		},
	};
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	s->flush_byte = ~pattern(r, k, 0);
	if (ibv_post_send(s->flush_qp, &wr, &bad))
		die("posting the flush READ: %s", strerror(errno));
	for (;;) {
		if (!poll_some(s, &wc, 1, last))
			continue;
		if (wc.wr_id != UINT64_MAX - 1) {	/* later requests */
			recv_completion(s, &wc);
			continue;
		}
		if (wc.opcode != IBV_WC_RDMA_READ)
			die("flush: completion opcode %d", wc.opcode);
		break;
	}
	if (s->flush_byte != pattern(r, k, 0))
		die("flush READ of request %" PRIu64 " read 0x%02x", r,
		    s->flush_byte);
}

static void check_request(struct side *s, uint64_t r, double *last)
{
	int k;

	for (k = 0; k < opt.recvs; k++) {
		uint32_t size = msg_size(r, k), j;
		uint8_t *b = slot_buf(s, r, k);

		if (opt.recvs > 1 && s->sizes[(r % SLOTS) * MAX_RECVS + k] != size)
			die("request %" PRIu64 " receive %d: size %u written, %u sent",
			    r, k, s->sizes[(r % SLOTS) * MAX_RECVS + k], size);
		for (j = 0; j < size; j++)
			if (b[j] != pattern(r, k, j))
				die("request %" PRIu64 " receive %d: byte %u of %u is 0x%02x, want 0x%02x",
				    r, k, j, size, b[j], pattern(r, k, j));
		if (size < opt.max_size && b[size] != 0xee)
			die("request %" PRIu64 " receive %d: written past %u bytes",
			    r, k, size);
		if (opt.flush && size)
			flush_buffer(s, r, k, last);
	}
}

static void run_receiver(struct side *s, const struct conn_info *peer)
{
	uint64_t posted = 0, done = 0, bytes = 0;
	struct ibv_wc wc[64];
	double last = now_s(), start = last;
	int i, n, k;

	while (done < (uint64_t)opt.iters) {
		while (posted < (uint64_t)opt.iters && posted - done < SLOTS) {
			post_recvs(s, posted);
			post_cts(s, peer, posted);
			posted++;
		}
		n = poll_some(s, wc, 64, &last);
		for (i = 0; i < n; i++)
			recv_completion(s, &wc[i]);
		while (done < posted && recv_got[done % SLOTS] == opt.qps) {
			check_request(s, done, &last);
			for (k = 0; k < opt.recvs; k++)
				bytes += msg_size(done, k);
			recv_got[done % SLOTS] = 0;
			done++;
		}
	}
	note("OK: %d requests, %" PRIu64 " bytes checked, %.1f MB/s, %d QPs, %d receive%s per request%s%s",
	     opt.iters, bytes, bytes / 1e6 / (now_s() - start), opt.qps,
	     opt.recvs, opt.recvs > 1 ? "s" : "", opt.ar ? ", adaptive routing" : "",
	     opt.flush ? ", flushed" : "");
}

/* ---- sender ----------------------------------------------------------- */

/* The CTS of request @r, once its index shows it was written whole. */
static bool cts_ready(struct side *s, uint64_t r)
{
	struct cts_elem *e = &s->fifo[(r % SLOTS) * MAX_RECVS];
	int k;

	for (k = 0; k < opt.recvs; k++)
		if (__atomic_load_n(&e[k].idx, __ATOMIC_ACQUIRE) != r + 1)
			return false;
	return true;
}

/* The chain of request @r on QP @q, as NCCL's multi-send builds it. */
static void post_request_qp(struct side *s, const struct conn_info *peer,
			    uint64_t r, int q, bool ar)
{
	struct ibv_send_wr wr[MAX_RECVS + 2], *bad;
	struct ibv_sge sge[MAX_RECVS + 1];
	struct cts_elem *e = &s->fifo[(r % SLOTS) * MAX_RECVS];
	int k, nwr = 0;

	memset(wr, 0, sizeof(wr));
	if (opt.recvs > 1 && q == 0) {
		uint32_t *src = &s->sizes_src[(r % SLOTS) * MAX_RECVS];

		for (k = 0; k < opt.recvs; k++)
			src[k] = msg_size(r, k);
		sge[MAX_RECVS] = (struct ibv_sge) {
			.addr = (uintptr_t)src,
			.length = sizeof(*src) * opt.recvs,
			.lkey = s->sizes_src_mr->lkey,
		};
		wr[nwr].sg_list = &sge[MAX_RECVS];
		wr[nwr].num_sge = 1;
		wr[nwr].opcode = IBV_WR_RDMA_WRITE;
		wr[nwr].wr.rdma.remote_addr = peer->sizes_addr +
			(r % SLOTS) * MAX_RECVS * sizeof(*src);
		wr[nwr].wr.rdma.rkey = peer->sizes_rkey;
		nwr++;
	}
	for (k = 0; k < opt.recvs; k++) {
		uint32_t size = msg_size(r, k);
		uint32_t chunk = (size + opt.qps - 1) / opt.qps;
		uint32_t off, len;

		chunk = (chunk + SPLIT_ALIGN - 1) / SPLIT_ALIGN * SPLIT_ALIGN;
		off = q * chunk;
		len = off < size ? size - off : 0;
		if (len > chunk)
			len = chunk;
		if (size > e[k].size)
			die("request %" PRIu64 ": %u bytes for a %u-byte receive",
			    r, size, e[k].size);
		sge[k] = (struct ibv_sge) {
			.addr = (uintptr_t)slot_buf(s, r, k) + off,
			.length = len,
			.lkey = s->buf_mr->lkey,
		};
		wr[nwr].sg_list = len ? &sge[k] : NULL;
		wr[nwr].num_sge = len ? 1 : 0;
		wr[nwr].opcode = IBV_WR_RDMA_WRITE;
		wr[nwr].wr.rdma.remote_addr = e[k].addr + off;
		wr[nwr].wr.rdma.rkey = e[k].rkey;
		nwr++;
	}
	if (opt.recvs > 1 || ar)
		nwr++;		/* a 0-byte WRITE WITH IMM after the data */
	wr[nwr - 1].opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr[nwr - 1].imm_data = htonl(expected_imm(r));
	wr[nwr - 1].send_flags = IBV_SEND_SIGNALED;
	wr[nwr - 1].wr_id = r;
	if (opt.recvs > 1 || ar) {
		wr[nwr - 1].wr.rdma.remote_addr = e[0].addr;
		wr[nwr - 1].wr.rdma.rkey = e[0].rkey;
	}
	for (k = 0; k < nwr - 1; k++)
		wr[k].next = &wr[k + 1];
	if (ibv_post_send(s->qp[q], wr, &bad))
		die("posting request %" PRIu64 " on QP %d: %s", r, q,
		    strerror(errno));
}

static void post_request(struct side *s, const struct conn_info *peer,
			 uint64_t r)
{
	bool ar = opt.ar && msg_size(r, 0) > AR_THRESHOLD;
	int q, k;

	for (k = 0; k < opt.recvs; k++) {
		uint8_t *b = slot_buf(s, r, k);
		uint32_t j, size = msg_size(r, k);

		for (j = 0; j < size; j++)
			b[j] = pattern(r, k, j);
	}
	for (q = 0; q < opt.qps; q++)
		post_request_qp(s, peer, r, q, ar);
}

static void run_sender(struct side *s, const struct conn_info *peer)
{
	uint64_t sent = 0, done = 0, next[MAX_QPS] = { 0 };
	int got[SLOTS] = { 0 }, i, n;
	struct ibv_wc wc[64];
	double last = now_s();

	while (done < (uint64_t)opt.iters) {
		if (sent < (uint64_t)opt.iters && sent - done < SLOTS &&
		    cts_ready(s, sent)) {
			post_request(s, peer, sent);
			sent++;
			last = now_s();
		}
		n = poll_some(s, wc, 64, &last);
		for (i = 0; i < n; i++) {
			int q = qp_index(s, wc[i].qp_num);

			if (wc[i].opcode != IBV_WC_RDMA_WRITE)
				die("QP %d: send opcode %d", q, wc[i].opcode);
			if (wc[i].wr_id != next[q])
				die("QP %d: request %" PRIu64 " completed, %" PRIu64 " was next",
				    q, wc[i].wr_id, next[q]);
			got[next[q] % SLOTS]++;
			next[q]++;
		}
		while (done < sent && got[done % SLOTS] == opt.qps) {
			got[done % SLOTS] = 0;
			done++;
		}
	}
	note("OK: %d requests sent and completed in order", opt.iters);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: nccl_replay -s|-c HOST [-p PORT] [-d DEV] [-G IPV4] [-q QPS]\n"
		"       [-n ITERATIONS] [-S MAX_SIZE] [-m RECVS] [-a] [-f] [-t TIMEOUT] [-i]\n");
	exit(2);
}

static long num_arg(const char *s, long lo, long hi)
{
	char *end;
	long v = strtol(s, &end, 0);

	if (*end || v < lo || v > hi)
		usage();
	return v;
}

int main(int argc, char **argv)
{
	struct conn_info peer;
	struct side s = { 0 };
	int c;

	while ((c = getopt(argc, argv, "sc:p:d:G:q:n:S:m:aft:i")) != -1) {
		switch (c) {
		case 's': is_server = true; break;
		case 'c': opt.host = optarg; break;
		case 'p': opt.port = num_arg(optarg, 1, 65535); break;
		case 'd': opt.dev = optarg; break;
		case 'G': opt.gid_ip = optarg; break;
		case 'q': opt.qps = num_arg(optarg, 1, MAX_QPS); break;
		case 'n': opt.iters = num_arg(optarg, 1, 1 << 24); break;
		case 'S': opt.max_size = num_arg(optarg, 1, 1 << 24); break;
		case 'm': opt.recvs = num_arg(optarg, 1, MAX_RECVS); break;
		case 'a': opt.ar = true; break;
		case 'f': opt.flush = true; break;
		case 't': opt.timeout = num_arg(optarg, 1, 31); break;
		case 'i': opt.inline_cts = true; break;
		default: usage();
		}
	}
	if (is_server == !!opt.host)
		usage();
	setup(&s, &peer);
	if (is_server)
		run_receiver(&s, &peer);
	else
		run_sender(&s, &peer);
	return 0;
}
