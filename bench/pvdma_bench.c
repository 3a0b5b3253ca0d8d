// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * PVDMA benchmark: registration time and pinned memory, first-touch and
 * steady-state bandwidth, random-offset bandwidth (for the eMTT), over a
 * loopback RC QP pair on one RDMA device (stellar or rdma_rxe).
 *
 *   pvdma_bench -d DEV -g GID reg SIZE_MB...
 *	one line per size: reg SIZE_MB USEC PINNED_KB_AFTER_REG
 *	PINNED_KB_AFTER_TOUCHING_10%
 *   pvdma_bench -d DEV -g GID touch SIZE_MB
 *	touch FIRST_MBPS STEADY_MBPS  (1 MB RDMA WRITEs over the whole MR,
 *	twice)
 *   pvdma_bench -d DEV -g GID random SIZE_MB MSG_KB COUNT
 *	random MSG_KB MBPS EMTT_HIT_PERCENT  (after a warm-up pass; the hit
 *	rate is "-" without /proc/stellar)
 *
 * Pinned memory is the process's VmPin (mm->pinned_vm), which stellar and
 * rdma_rxe both charge.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define MAX_MSG		(1U << 20)
#define DEPTH		16

static const char *dev_name = "stellar0";
static int gid_index;

struct ctx {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp_a;
	struct ibv_qp *qp_b;
	uint8_t *src;
	struct ibv_mr *src_mr;
};

static void die(const char *what)
{
	fprintf(stderr, "pvdma_bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* The process's pinned memory in KiB (VmPin of /proc/self/status). */
static uint64_t vm_pin_kb(void)
{
	char line[128];
	uint64_t kb = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		die("/proc/self/status");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %" SCNu64, &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* Hits and misses of DEV's eMTT; false without /proc/stellar. */
static bool emtt_counts(uint64_t *hits, uint64_t *misses)
{
	char line[128], section[80];
	bool in_dev = false;
	FILE *f = fopen("/proc/stellar/emtt_stats", "r");

	if (!f)
		return false;
	snprintf(section, sizeof(section), "[%s]\n", dev_name);
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '[')
			in_dev = !strcmp(line, section);
		else if (in_dev && sscanf(line, "Hits: %" SCNu64, hits) != 1)
			sscanf(line, "Misses: %" SCNu64, misses);
	}
	fclose(f);
	return true;
}

static struct ibv_qp *make_qp(struct ctx *c)
{
	struct ibv_qp_init_attr init = {
		.send_cq = c->cq, .recv_cq = c->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};
	struct ibv_qp *qp = ibv_create_qp(c->pd, &init);

	if (!qp || ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				 IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("create QP");
	return qp;
}

static void connect_qp(struct ibv_qp *qp, struct ibv_qp *peer,
		       union ibv_gid *gid)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = peer->qp_num, .rq_psn = 1,
		.max_dest_rd_atomic = 16, .min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = *gid, .sgid_index = gid_index,
				      .hop_limit = 64 } },
	};

	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("modify to RTR");
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 1;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = 16;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN |
			  IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify to RTS");
}

static void setup(struct ctx *c)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	union ibv_gid gid;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev_name))
			c->ctx = ibv_open_device(list[i]);
	if (!c->ctx)
		die("open device");
	ibv_free_device_list(list);
	c->pd = ibv_alloc_pd(c->ctx);
	c->cq = ibv_create_cq(c->ctx, 2 * DEPTH, NULL, NULL, 0);
	if (!c->pd || !c->cq || ibv_query_gid(c->ctx, 1, gid_index, &gid))
		die("PD, CQ or GID");
	c->qp_a = make_qp(c);
	c->qp_b = make_qp(c);
	connect_qp(c->qp_a, c->qp_b, &gid);
	connect_qp(c->qp_b, c->qp_a, &gid);
	c->src = mmap(NULL, MAX_MSG, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c->src == MAP_FAILED)
		die("mmap");
	memset(c->src, 0x3c, MAX_MSG);
	c->src_mr = ibv_reg_mr(c->pd, c->src, MAX_MSG, IBV_ACCESS_LOCAL_WRITE);
	if (!c->src_mr)
		die("register the source buffer");
}

static void post_write(struct ctx *c, uint32_t len, uint64_t raddr,
		       uint32_t rkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)c->src, .length = len, .lkey = c->src_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_RDMA_WRITE, .sg_list = &sge, .num_sge = 1,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;

	if (ibv_post_send(c->qp_a, &wr, &bad))
		die("ibv_post_send");
}

static void reap(struct ctx *c, int n)
{
	struct ibv_wc wc;
	int got;

	while (n) {
		got = ibv_poll_cq(c->cq, 1, &wc);
		if (got < 0)
			die("ibv_poll_cq");
		if (!got)
			continue;
		if (wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "pvdma_bench: completion: %s\n",
				ibv_wc_status_str(wc.status));
			exit(1);
		}
		n--;
	}
}

/* RDMA WRITE @count messages of @len at offsets from @next_off. */
static double write_mbps(struct ctx *c, struct ibv_mr *mr, uint32_t len,
			 uint64_t count,
			 uint64_t (*next_off)(uint64_t i, void *arg),
			 void *arg)
{
	uint64_t i, inflight = 0;
	double t0 = now_us();

	for (i = 0; i < count; i++) {
		if (inflight == DEPTH) {
			reap(c, 1);
			inflight--;
		}
		post_write(c, len, (uintptr_t)mr->addr + next_off(i, arg),
			   mr->rkey);
		inflight++;
	}
	reap(c, inflight);
	return (double)len * count / (now_us() - t0);	/* bytes/us = MB/s */
}

static uint64_t seq_off(uint64_t i, void *arg)
{
	(void)arg;
	return i * MAX_MSG;
}

struct rand_arg {
	uint64_t span;
	uint64_t state;
};

static uint64_t rand_off(uint64_t i, void *arg)
{
	struct rand_arg *r = arg;
	uint64_t x = r->state;

	(void)i;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	r->state = x;
	return (x * 0x2545f4914f6cdd1dULL) % r->span;
}

static struct ibv_mr *big_mr(struct ctx *c, uint64_t size, double *reg_us)
{
	void *buf = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	struct ibv_mr *mr;
	double t0;

	if (buf == MAP_FAILED)
		die("mmap");
	t0 = now_us();
	mr = ibv_reg_mr(c->pd, buf, size, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (reg_us)
		*reg_us = now_us() - t0;
	if (!mr)
		die("ibv_reg_mr");
	return mr;
}

static void free_mr(struct ibv_mr *mr)
{
	void *addr = mr->addr;
	size_t len = mr->length;

	if (ibv_dereg_mr(mr))
		die("ibv_dereg_mr");
	munmap(addr, len);
}

static void run_reg(struct ctx *c, int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++) {
		uint64_t size = strtoull(argv[i], NULL, 0) << 20;
		uint64_t base = vm_pin_kb(), after_reg, after_touch;
		struct ibv_mr *mr;
		double us;

		mr = big_mr(c, size, &us);
		after_reg = vm_pin_kb() - base;
		write_mbps(c, mr, MAX_MSG, size / 10 / MAX_MSG, seq_off, NULL);
		after_touch = vm_pin_kb() - base;
		printf("reg %s %.1f %" PRIu64 " %" PRIu64 "\n", argv[i], us,
		       after_reg, after_touch);
		fflush(stdout);
		free_mr(mr);
	}
}

static void run_touch(struct ctx *c, uint64_t size_mb)
{
	struct ibv_mr *mr = big_mr(c, size_mb << 20, NULL);
	uint64_t n = (size_mb << 20) / MAX_MSG;
	double first = write_mbps(c, mr, MAX_MSG, n, seq_off, NULL);
	double steady = write_mbps(c, mr, MAX_MSG, n, seq_off, NULL);

	printf("touch %.1f %.1f\n", first, steady);
	free_mr(mr);
}

static void run_random(struct ctx *c, uint64_t size_mb, uint32_t msg_kb,
		       uint64_t count)
{
	struct ibv_mr *mr = big_mr(c, size_mb << 20, NULL);
	uint32_t len = msg_kb << 10;
	struct rand_arg r = { (size_mb << 20) - len, 88172645463325252ULL };
	uint64_t h0 = 0, m0 = 0, h1 = 0, m1 = 0;
	bool have_stats;
	double mbps;

	write_mbps(c, mr, MAX_MSG, (size_mb << 20) / MAX_MSG, seq_off, NULL);
	have_stats = emtt_counts(&h0, &m0);
	mbps = write_mbps(c, mr, len, count, rand_off, &r);
	emtt_counts(&h1, &m1);
	if (have_stats && h1 + m1 > h0 + m0)
		printf("random %u %.1f %.1f\n", msg_kb, mbps,
		       100.0 * (h1 - h0) / (h1 - h0 + m1 - m0));
	else
		printf("random %u %.1f -\n", msg_kb, mbps);
	free_mr(mr);
}

int main(int argc, char **argv)
{
	struct ctx c = {};
	const char *mode;
	int opt;

	while ((opt = getopt(argc, argv, "d:g:")) != -1) {
		if (opt == 'd')
			dev_name = optarg;
		else if (opt == 'g')
			gid_index = atoi(optarg);
		else
			return 2;
	}
	if (optind >= argc)
		return 2;
	mode = argv[optind++];
	setup(&c);
	if (!strcmp(mode, "reg"))
		run_reg(&c, argc - optind, argv + optind);
	else if (!strcmp(mode, "touch") && argc - optind == 1)
		run_touch(&c, strtoull(argv[optind], NULL, 0));
	else if (!strcmp(mode, "random") && argc - optind == 3)
		run_random(&c, strtoull(argv[optind], NULL, 0),
			   strtoul(argv[optind + 1], NULL, 0),
			   strtoull(argv[optind + 2], NULL, 0));
	else
		return 2;
	return 0;
}
