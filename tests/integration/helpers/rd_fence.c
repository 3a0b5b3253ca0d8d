// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rd_fence: the send queue's ordering rules for READs and atomics, on two
 * RC QPs connected to each other with one READ or atomic outstanding
 * (max_rd_atomic 1), every WQE posted before any completes:
 *
 *  - fence: each READ is followed by a fenced WRITE of the buffer the
 *    READ fills; every WRITE must carry the READ's data, so it may start
 *    only once the READ finished (IBV_SEND_FENCE);
 *  - the atomic limit: fetch-and-adds in a row, then a fenced READ of
 *    the counter; each one must return the count of those before it and
 *    the READ the total;
 *  - the READ limit: READs in a row, each of several packets, every one
 *    placing its data.
 *
 * All complete in order, successfully, within DEADLINE_S seconds (a
 * requester that is never woken again fails here; the caller checks that
 * no retransmission timer had to wake it either).
 *
 *   rd_fence DEVICE GID_INDEX
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "rc_loop.h"

#define CHAIN		32
#define SZ		8192	/* 8 packets at the 1024-byte path MTU */
#define ATOMICS		64
#define DEADLINE_S	30
#define QUEUE		(2 * CHAIN + ATOMICS + 8)
#define ACCESS		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

/* The responder's memory, reached through its rkey. */
static struct {
	uint8_t src[CHAIN][SZ];
	uint8_t dst[CHAIN][SZ];
	uint64_t counter;
} __attribute__((aligned(4096))) rmem;

/* The requester's memory. */
static struct {
	uint8_t buf[CHAIN][SZ];
	uint64_t fetched[ATOMICS + 1];
} __attribute__((aligned(4096))) lmem;

struct side {
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	uint32_t lkey, rkey;
};

static void post(const struct side *s, enum ibv_wr_opcode op,
		 unsigned int flags, uint64_t wr_id, void *laddr, uint32_t len,
		 void *raddr)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)laddr, .length = len, .lkey = s->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = flags | IBV_SEND_SIGNALED,
	}, *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = (uintptr_t)raddr;
		wr.wr.atomic.rkey = s->rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = (uintptr_t)raddr;
		wr.wr.rdma.rkey = s->rkey;
	}
	if (ibv_post_send(s->qp, &wr, &bad))
		die("ibv_post_send of WQE %llu: %s",
		    (unsigned long long)wr_id, strerror(errno));
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Completions of WQEs 0 .. @n - 1, in order and successful. */
static void wait_all(const struct side *s, int n, const char *what)
{
	double deadline = now_s() + DEADLINE_S;
	struct ibv_wc wc[16];
	int got = 0, i, k;

	while (got < n) {
		k = ibv_poll_cq(s->cq, 16, wc);
		if (k < 0)
			die("%s: ibv_poll_cq: %d", what, k);
		for (i = 0; i < k; i++, got++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				die("%s: WQE %llu: %s", what,
				    (unsigned long long)wc[i].wr_id,
				    ibv_wc_status_str(wc[i].status));
			if (wc[i].wr_id != (uint64_t)got)
				die("%s: completion of WQE %llu where %d was due",
				    what, (unsigned long long)wc[i].wr_id, got);
		}
		if (!k && now_s() > deadline)
			die("%s: %d of %d completions after %d s", what, got, n,
			    DEADLINE_S);
	}
}

/* READ src[i] into buf[i], then a fenced WRITE of buf[i] to dst[i]. */
static void fenced_writes(const struct side *s)
{
	int i, j;

	for (i = 0; i < CHAIN; i++)
		for (j = 0; j < SZ; j++)
			rmem.src[i][j] = (uint8_t)(i * 31 + j * 7 + 1);
	for (i = 0; i < CHAIN; i++) {
		post(s, IBV_WR_RDMA_READ, 0, 2 * i, lmem.buf[i], SZ,
		     rmem.src[i]);
		post(s, IBV_WR_RDMA_WRITE, IBV_SEND_FENCE, 2 * i + 1,
		     lmem.buf[i], SZ, rmem.dst[i]);
	}
	wait_all(s, 2 * CHAIN, "READ, fenced WRITE");
	for (i = 0; i < CHAIN; i++)
		if (memcmp(rmem.dst[i], rmem.src[i], SZ))
			die("fenced WRITE %d did not carry its READ's data", i);
}

/* ATOMICS fetch-and-adds of 1, then a fenced READ of the counter. */
static void atomics_then_read(const struct side *s)
{
	int i;

	for (i = 0; i < ATOMICS; i++)
		post(s, IBV_WR_ATOMIC_FETCH_AND_ADD, 0, i, &lmem.fetched[i],
		     sizeof(uint64_t), &rmem.counter);
	post(s, IBV_WR_RDMA_READ, IBV_SEND_FENCE, ATOMICS,
	     &lmem.fetched[ATOMICS], sizeof(uint64_t), &rmem.counter);
	wait_all(s, ATOMICS + 1, "fetch-and-add, fenced READ");
	for (i = 0; i <= ATOMICS; i++)
		if (lmem.fetched[i] != (uint64_t)i)
			die("operation %d fetched %llu", i,
			    (unsigned long long)lmem.fetched[i]);
	if (rmem.counter != ATOMICS)
		die("the counter is %llu after %d adds",
		    (unsigned long long)rmem.counter, ATOMICS);
}

/* CHAIN READs in a row, held one at a time by the READ limit. */
static void reads_in_a_row(const struct side *s)
{
	int i;

	memset(lmem.buf, 0, sizeof(lmem.buf));
	for (i = 0; i < CHAIN; i++)
		post(s, IBV_WR_RDMA_READ, 0, i, lmem.buf[i], SZ,
		     rmem.src[CHAIN - 1 - i]);
	wait_all(s, CHAIN, "READs");
	for (i = 0; i < CHAIN; i++)
		if (memcmp(lmem.buf[i], rmem.src[CHAIN - 1 - i], SZ))
			die("READ %d placed other data", i);
}

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = QUEUE, .max_recv_wr = 1,
			.max_send_sge = 1, .max_recv_sge = 1,
		},
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &attr);

	if (!qp)
		die("ibv_create_qp: %s", strerror(errno));
	return qp;
}

int main(int argc, char **argv)
{
	struct ibv_mr *lmr, *rmr;
	struct ibv_context *ctx;
	struct ibv_qp *responder;
	struct ibv_pd *pd;
	union ibv_gid gid;
	struct side s;
	int gid_index;

	if (argc != 3)
		die("usage: rd_fence DEVICE GID_INDEX");
	gid_index = atoi(argv[2]);
	ctx = open_dev(argv[1]);
	if (ibv_query_gid(ctx, 1, gid_index, &gid))
		die("ibv_query_gid: %s", strerror(errno));
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("ibv_alloc_pd: %s", strerror(errno));
	lmr = ibv_reg_mr(pd, &lmem, sizeof(lmem), ACCESS);
	rmr = ibv_reg_mr(pd, &rmem, sizeof(rmem), ACCESS);
	s.cq = ibv_create_cq(ctx, 2 * QUEUE, NULL, NULL, 0);
	if (!lmr || !rmr || !s.cq)
		die("MRs/CQ: %s", strerror(errno));
	s.lkey = lmr->lkey;
	s.rkey = rmr->rkey;
	s.qp = make_qp(pd, s.cq);
	responder = make_qp(pd, s.cq);
	connect_qp_access(s.qp, responder->qp_num, gid_index, &gid, ACCESS);
	connect_qp_access(responder, s.qp->qp_num, gid_index, &gid, ACCESS);

	fenced_writes(&s);
	atomics_then_read(&s);
	reads_in_a_row(&s);

	if (ibv_destroy_qp(s.qp) || ibv_destroy_qp(responder) ||
	    ibv_destroy_cq(s.cq) || ibv_dereg_mr(lmr) || ibv_dereg_mr(rmr) ||
	    ibv_dealloc_pd(pd) || ibv_close_device(ctx))
		die("teardown: %s", strerror(errno));
	printf("rd_fence: OK: %d fenced WRITEs carried their READs' data, %d fetch-and-adds and %d READs in order\n",
	       CHAIN, ATOMICS, CHAIN);
	return 0;
}
