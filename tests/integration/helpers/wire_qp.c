// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) 2026 The virtio-stellar authors
 *
 * An RC QP in RTS that crafted packets can target, for the wire tests.
 *
 *   wire_qp DEVICE GID_INDEX REMOTE_IPV4 REMOTE_QPN RQ_PSN [STATE]
 *
 * STATE (init, rtr or rts, default rts) is where the QP stops.
 * Creates the QP with one posted 4 KB receive (buffer filled with 0xcc),
 * connects it to REMOTE_QPN at ::ffff:REMOTE_IPV4 expecting RQ_PSN next,
 * prints "qpn N" and then answers commands read from stdin, one per line:
 *
 *   poll SECONDS   wait up to SECONDS for a completion; prints
 *                  "completions 0" or
 *                  "completion status S opcode O byte_len L data TEXT"
 *   untouched N    prints "untouched yes" if the first N bytes of the
 *                  receive buffer still hold 0xcc, else "untouched no"
 *   peek OFF LEN   prints "peek TEXT": LEN bytes of the buffer at OFF,
 *                  printable ones as they are, others as '.'
 *   recv           posts another receive of the whole buffer (after it
 *                  was refilled with 0xcc); prints "recv posted"
 *   mr             prints "mr va VA rkey RKEY" of the buffer (the MR
 *                  allows remote writes)
 *   bigmr MB       registers MB megabytes for remote reads that cost only
 *                  2 MB of memory (one memfd mapped again and again, bytes
 *                  'R'); prints "bigmr va VA rkey RKEY"
 *   error          moves the QP to the error state; prints "error MS",
 *                  the milliseconds ibv_modify_qp took
 *   quit           exits 0
 *
 * Build: gcc -O2 -Wall -o wire_qp wire_qp.c -libverbs
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define BUF_SIZE	4096
#define FILL_BYTE	0xcc
#define BIG_CHUNK	(2UL << 20)

struct wire_qp {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_mr *big_mr;
	unsigned char *buf;
};

static void die(const char *what)
{
	fprintf(stderr, "wire_qp: %s failed: %s\n", what, strerror(errno));
	exit(1);
}

static struct ibv_context *open_device(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	if (!list)
		die("ibv_get_device_list");
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx) {
		fprintf(stderr, "wire_qp: cannot open device %s\n", name);
		exit(1);
	}
	return ctx;
}

static void create_resources(struct wire_qp *w, const char *dev)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

	w->ctx = open_device(dev);
	w->pd = ibv_alloc_pd(w->ctx);
	if (!w->pd)
		die("ibv_alloc_pd");
	w->cq = ibv_create_cq(w->ctx, 8, NULL, NULL, 0);
	if (!w->cq)
		die("ibv_create_cq");
	w->buf = aligned_alloc(BUF_SIZE, BUF_SIZE);
	if (!w->buf)
		die("aligned_alloc");
	memset(w->buf, FILL_BYTE, BUF_SIZE);
	w->mr = ibv_reg_mr(w->pd, w->buf, BUF_SIZE, access);
	if (!w->mr)
		die("ibv_reg_mr");
	init.send_cq = w->cq;
	init.recv_cq = w->cq;
	w->qp = ibv_create_qp(w->pd, &init);
	if (!w->qp)
		die("ibv_create_qp");
}

static void post_recv(struct wire_qp *w)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)w->buf, .length = BUF_SIZE,
		.lkey = w->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	errno = ibv_post_recv(w->qp, &wr, &bad);
	if (errno)
		die("ibv_post_recv");
}

static void to_init(struct wire_qp *w)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .pkey_index = 0,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};

	errno = ibv_modify_qp(w->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			      IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (errno)
		die("modify_qp INIT");
}

static void to_rtr(struct wire_qp *w, int gid_index, const char *ipv4,
		   unsigned int remote_qpn, unsigned int rq_psn)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = remote_qpn, .rq_psn = rq_psn,
		.max_dest_rd_atomic = 1, .min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1, .port_num = 1,
			.grh = { .sgid_index = gid_index, .hop_limit = 64 },
		},
	};
	unsigned char *gid = attr.ah_attr.grh.dgid.raw;

	gid[10] = 0xff;
	gid[11] = 0xff;
	if (inet_pton(AF_INET, ipv4, gid + 12) != 1) {
		fprintf(stderr, "wire_qp: bad IPv4 address '%s'\n", ipv4);
		exit(1);
	}
	errno = ibv_modify_qp(w->qp, &attr, IBV_QP_STATE | IBV_QP_AV |
			      IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			      IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			      IBV_QP_MIN_RNR_TIMER);
	if (errno)
		die("modify_qp RTR");
}

static void to_rts(struct wire_qp *w)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTS, .sq_psn = 0, .timeout = 14,
		.retry_cnt = 7, .rnr_retry = 7, .max_rd_atomic = 1,
	};

	errno = ibv_modify_qp(w->qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN |
			      IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			      IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
	if (errno)
		die("modify_qp RTS");
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void cmd_poll(struct wire_qp *w, double seconds)
{
	double deadline = now() + seconds;
	struct ibv_wc wc;
	unsigned int i;
	int n;

	do {
		n = ibv_poll_cq(w->cq, 1, &wc);
		if (n < 0)
			die("ibv_poll_cq");
		if (n == 0)
			usleep(10000);
	} while (n == 0 && now() < deadline);
	if (n == 0) {
		printf("completions 0\n");
		return;
	}
	printf("completion status %d opcode %d byte_len %u data ", wc.status,
	       wc.opcode, wc.byte_len);
	for (i = 0; i < wc.byte_len && i < 64 && w->buf[i] >= 0x20 &&
		    w->buf[i] < 0x7f; i++)
		putchar(w->buf[i]);
	putchar('\n');
}

static void cmd_untouched(struct wire_qp *w, unsigned int len)
{
	unsigned int i;

	for (i = 0; i < len && i < BUF_SIZE; i++)
		if (w->buf[i] != FILL_BYTE)
			break;
	printf("untouched %s\n", i == len || i == BUF_SIZE ? "yes" : "no");
}

static void cmd_peek(struct wire_qp *w, unsigned int off, unsigned int len)
{
	unsigned int i;

	printf("peek ");
	for (i = off; i < off + len && i < BUF_SIZE; i++)
		putchar(w->buf[i] >= 0x20 && w->buf[i] < 0x7f ? w->buf[i] : '.');
	putchar('\n');
}

/* A big read-only MR: one 2 MB memfd mapped back to back @mb / 2 times. */
static void cmd_bigmr(struct wire_qp *w, unsigned long mb)
{
	unsigned long len = (mb << 20) / BIG_CHUNK * BIG_CHUNK, off;
	int fd = memfd_create("wire_qp", 0);
	char *base, *chunk;

	if (w->big_mr)
		die("a second bigmr");
	if (fd < 0 || ftruncate(fd, BIG_CHUNK))
		die("memfd");
	base = mmap(NULL, len, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (!len || base == MAP_FAILED)
		die("mmap");
	for (off = 0; off < len; off += BIG_CHUNK) {
		chunk = mmap(base + off, BIG_CHUNK, PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_FIXED, fd, 0);
		if (chunk == MAP_FAILED)
			die("mmap of the memfd");
	}
	memset(base, 'R', BIG_CHUNK);
	close(fd);
	w->big_mr = ibv_reg_mr(w->pd, base, len, IBV_ACCESS_REMOTE_READ);
	if (!w->big_mr)
		die("ibv_reg_mr of the big MR");
	printf("bigmr va %llu rkey %u\n", (unsigned long long)(uintptr_t)base,
	       w->big_mr->rkey);
}

static void cmd_error(struct wire_qp *w)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	double start = now();

	errno = ibv_modify_qp(w->qp, &attr, IBV_QP_STATE);
	if (errno)
		die("modify_qp ERR");
	printf("error %.0f\n", (now() - start) * 1000);
}

static void serve_commands(struct wire_qp *w)
{
	unsigned int len, off;
	unsigned long mb;
	char line[128];
	double seconds;

	while (fgets(line, sizeof(line), stdin) && strncmp(line, "quit", 4)) {
		if (sscanf(line, "poll %lf", &seconds) == 1)
			cmd_poll(w, seconds);
		else if (sscanf(line, "untouched %u", &len) == 1)
			cmd_untouched(w, len);
		else if (sscanf(line, "peek %u %u", &off, &len) == 2)
			cmd_peek(w, off, len);
		else if (!strncmp(line, "recv", 4)) {
			memset(w->buf, FILL_BYTE, BUF_SIZE);
			post_recv(w);
			printf("recv posted\n");
		} else if (sscanf(line, "bigmr %lu", &mb) == 1) {
			cmd_bigmr(w, mb);
		} else if (!strncmp(line, "error", 5)) {
			cmd_error(w);
		} else if (!strncmp(line, "mr", 2))
			printf("mr va %llu rkey %u\n",
			       (unsigned long long)(uintptr_t)w->buf,
			       w->mr->rkey);
		else
			printf("error unknown command\n");
		fflush(stdout);
	}
}

static void destroy_resources(struct wire_qp *w)
{
	if (ibv_destroy_qp(w->qp) || ibv_dereg_mr(w->mr) ||
	    (w->big_mr && ibv_dereg_mr(w->big_mr)) ||
	    ibv_destroy_cq(w->cq) || ibv_dealloc_pd(w->pd) ||
	    ibv_close_device(w->ctx))
		die("destroying the resources");
	free(w->buf);
}

int main(int argc, char **argv)
{
	struct wire_qp w = { 0 };

	const char *state = argc > 6 ? argv[6] : "rts";

	if (argc != 6 && argc != 7) {
		fprintf(stderr,
			"usage: %s DEVICE GID_INDEX REMOTE_IPV4 REMOTE_QPN RQ_PSN [init|rtr|rts]\n",
			argv[0]);
		return 2;
	}
	create_resources(&w, argv[1]);
	to_init(&w);
	post_recv(&w);
	if (strcmp(state, "init")) {
		to_rtr(&w, atoi(argv[2]), argv[3], strtoul(argv[4], NULL, 0),
		       strtoul(argv[5], NULL, 0));
		if (strcmp(state, "rtr"))
			to_rts(&w);
	}
	printf("qpn %u\n", w.qp->qp_num);
	fflush(stdout);
	serve_commands(&w);
	destroy_resources(&w);
	return 0;
}
