// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) 2026 The virtio-stellar authors
 *
 * The provider's rings against the real kernel driver (run in a VM by
 * vm-rings.sh), using only the public libibverbs API.  It needs no peer
 * traffic: receive WQEs reach the kernel and come back as flush
 * completions when the QP moves to the error state, which exercises the
 * whole receive-ring -> kernel -> completion-ring -> poll path.
 *
 *   vm_rings DEVICE GID_INDEX PEER_IPV4
 *
 * Checks:
 *  - receives posted through the RQ ring come back, in order and with
 *    their wr_ids, as IBV_WC_WR_FLUSH_ERR completions through ibv_poll_cq
 *    and through ibv_start_poll, over many wraps of a 4-entry CQ ring;
 *  - a full RQ/SRQ/SQ ring reports ENOMEM, bad SGE counts EINVAL;
 *  - a completion channel event fires for an armed CQ;
 *  - ibv_resize_cq with completions pending keeps all of them, in order,
 *    and the kernel goes on writing the new ring; shrinking below the
 *    number pending, to 0 entries or past the device limit is EINVAL;
 *  - ibv_modify_srq(IBV_SRQ_MAX_WR) keeps the posted receives' counters
 *    (the room left is exact) and refuses sizes below what is posted or
 *    below the armed limit;
 *  - ibv_post_recv, ibv_post_srq_recv, ibv_poll_cq and the ibv_start_poll
 *    family run in a thread under SECCOMP_MODE_STRICT (any system call
 *    other than read/write/exit kills the thread).  ibv_post_send is not
 *    among them: its doorbell is a command that libibverbs sends with
 *    ioctl();
 *  - completion timestamps: hca_core_clock and the timestamp mask are
 *    reported, ibv_query_rt_values_ex reads the clock, and every
 *    completion of a CQ that asked for them (with all of
 *    IBV_WC_STANDARD_FLAGS) carries its time and wall-clock time;
 *  - sends flushed from a full SQ ring can be posted again from their
 *    flush completions, one by one, without ENOMEM;
 *  - UD sends through ibv_post_send and ibv_wr_*, AH create/destroy,
 *    SRQ modify/query, unsupported extended-verb requests are refused.
 *
 * Exit status 0 when every check passes; a failed check prints "FAIL:".
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define RING_WRS	4	/* queue depth asked for: rings of 4 */
#define ROUNDS		6	/* 24 completions through a 4-entry ring */
#define QKEY		0x11111111

static int failures;

static void check(bool ok, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf(ok ? "ok:   " : "FAIL: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	if (!ok)
		failures++;
}

static void die(const char *what)
{
	printf("FAIL: %s: %s\n", what, strerror(errno));
	exit(1);
}

struct env {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	char buf[4096];
	int gid_index;
	union ibv_gid peer_gid;
};

static struct ibv_qp *create_qp(struct env *env, enum ibv_qp_type type,
				struct ibv_cq *cq, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = type,
		.cap = { .max_send_wr = RING_WRS, .max_recv_wr = RING_WRS,
			 .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = 64 },
	};
	struct ibv_qp *qp = ibv_create_qp(env->pd, &attr);

	if (!qp)
		die("ibv_create_qp");
	return qp;
}

static int qp_to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	mask |= qp->qp_type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	return ibv_modify_qp(qp, &attr, mask);
}

static int qp_to_state(struct ibv_qp *qp, enum ibv_qp_state state)
{
	struct ibv_qp_attr attr = { .qp_state = state };
	int mask = IBV_QP_STATE;

	if (state == IBV_QPS_RTS)
		mask |= IBV_QP_SQ_PSN;
	return ibv_modify_qp(qp, &attr, mask);
}

static int post_recvs(struct env *env, struct ibv_qp *qp, uint64_t first_id,
		      int count)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)env->buf, .length = 64,
		.lkey = env->mr->lkey,
	};
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	int i, ret;

	for (i = 0; i < count; i++) {
		wr.wr_id = first_id + i;
		ret = ibv_post_recv(qp, &wr, &bad);
		if (ret)
			return ret;
	}
	return 0;
}

/* Polls until count completions arrived (no more) or ~2 s passed. */
static int poll_flushes(struct ibv_cq *cq, struct ibv_qp *qp,
			uint64_t first_id, int count)
{
	struct ibv_wc wc[RING_WRS];
	int got = 0, n, i, tries;

	for (tries = 0; got < count && tries < 2000; tries++) {
		n = ibv_poll_cq(cq, count - got < RING_WRS ? count - got :
				RING_WRS, wc);
		if (n < 0)
			return -1;
		for (i = 0; i < n; i++, got++)
			if (wc[i].wr_id != first_id + got ||
			    wc[i].status != IBV_WC_WR_FLUSH_ERR ||
			    wc[i].opcode != IBV_WC_RECV ||
			    wc[i].qp_num != qp->qp_num)
				return -1;
		if (!n)
			usleep(1000);
	}
	return got;
}

static int poll_flushes_ex(struct ibv_cq_ex *cq, struct ibv_qp *qp,
			   uint64_t first_id, int count)
{
	struct ibv_poll_cq_attr attr = {};
	int got = 0, ret, tries;

	for (tries = 0; got < count && tries < 2000; tries++) {
		ret = ibv_start_poll(cq, &attr);
		if (ret == ENOENT) {
			usleep(1000);
			continue;
		}
		if (ret)
			return -1;
		do {
			if (cq->wr_id != first_id + got ||
			    cq->status != IBV_WC_WR_FLUSH_ERR ||
			    ibv_wc_read_opcode(cq) != IBV_WC_RECV ||
			    ibv_wc_read_qp_num(cq) != qp->qp_num) {
				ibv_end_poll(cq);
				return -1;
			}
			got++;
		} while (!ibv_next_poll(cq));
		ibv_end_poll(cq);
	}
	return got;
}

/* Receives go through the RQ ring and return as flush completions. */
static void test_recv_flush(struct env *env, bool use_cq_ex)
{
	struct ibv_cq_init_attr_ex cq_attr = {
		.cqe = RING_WRS,
		.wc_flags = IBV_WC_STANDARD_FLAGS,
	};
	const char *how = use_cq_ex ? "ibv_start_poll" : "ibv_poll_cq";
	struct ibv_cq_ex *cq_ex = NULL;
	struct ibv_recv_wr *bad;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int round, got, ret;

	if (use_cq_ex) {
		cq_ex = ibv_create_cq_ex(env->ctx, &cq_attr);
		if (!cq_ex)
			die("ibv_create_cq_ex");
		cq = ibv_cq_ex_to_cq(cq_ex);
	} else {
		cq = ibv_create_cq(env->ctx, RING_WRS, NULL, NULL, 0);
		if (!cq)
			die("ibv_create_cq");
	}

	for (round = 0; round < ROUNDS; round++) {
		uint64_t first = 1000 * (round + 1);

		qp = create_qp(env, IBV_QPT_RC, cq, NULL);
		if (qp_to_init(qp))
			die("modify_qp INIT");
		ret = post_recvs(env, qp, first, RING_WRS);
		check(!ret, "round %d: %d receives posted (%d)", round,
		      RING_WRS, ret);
		if (round == 0) {
			struct ibv_recv_wr wr = { .wr_id = 1 };

			ret = ibv_post_recv(qp, &wr, &bad);
			check(ret == ENOMEM && bad == &wr,
			      "full receive ring: ENOMEM (%d)", ret);
		}
		if (qp_to_state(qp, IBV_QPS_ERR))
			die("modify_qp ERR");
		got = use_cq_ex ? poll_flushes_ex(cq_ex, qp, first, RING_WRS) :
				  poll_flushes(cq, qp, first, RING_WRS);
		check(got == RING_WRS,
		      "round %d: %s returned %d of %d flushed receives in order",
		      round, how, got, RING_WRS);
		if (ibv_destroy_qp(qp))
			die("ibv_destroy_qp");
	}
	if (ibv_destroy_cq(cq))
		die("ibv_destroy_cq");
}

/* An RC QP in RTS towards a QP number nobody has on the peer. */
static struct ibv_qp *rc_qp_to_nowhere(struct env *env, struct ibv_cq *cq)
{
	struct ibv_qp *qp = create_qp(env, IBV_QPT_RC, cq, NULL);
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = 0xabcde, .rq_psn = 1,
		.max_dest_rd_atomic = 1, .min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = env->peer_gid,
				      .sgid_index = env->gid_index,
				      .hop_limit = 64 } },
	};

	if (qp_to_init(qp) ||
	    ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("modify_qp RTR");
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 1;
	attr.timeout = 20;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN |
			  IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify_qp RTS");
	return qp;
}

/*
 * A full SQ ring of sends that cannot complete, flushed by the move to
 * ERR: each flush completion frees its slot before it is seen, so the
 * send posted in answer to it finds room (and is flushed in turn).
 */
static void test_send_flush_repost(struct env *env)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)env->buf, .length = 64,
		.lkey = env->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_SEND, .sg_list = &sge, .num_sge = 1,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_cq *cq = ibv_create_cq(env->ctx, 4 * RING_WRS, NULL, NULL, 0);
	int posted = 0, flushed = 0, refused = 0, tries;
	struct ibv_qp *qp;
	struct ibv_wc wc;

	if (!cq)
		die("ibv_create_cq");
	qp = rc_qp_to_nowhere(env, cq);
	for (; posted < RING_WRS; posted++) {
		wr.wr_id = 7000 + posted;
		if (ibv_post_send(qp, &wr, &bad))
			die("ibv_post_send");
	}
	if (qp_to_state(qp, IBV_QPS_ERR))
		die("modify_qp ERR");
	for (tries = 0; flushed < 2 * RING_WRS && tries < 5000; tries++) {
		if (ibv_poll_cq(cq, 1, &wc) != 1) {
			usleep(1000);
			continue;
		}
		flushed++;
		if (wc.status != IBV_WC_WR_FLUSH_ERR)
			refused++;
		if (posted < 2 * RING_WRS) {
			wr.wr_id = 7000 + posted;
			if (ibv_post_send(qp, &wr, &bad))
				refused++;
			posted++;
		}
	}
	check(flushed == 2 * RING_WRS && !refused,
	      "%d sends flushed, each answered by a new send: %d flushed, %d "
	      "refused or not flushed", 2 * RING_WRS, flushed, refused);
	if (ibv_destroy_qp(qp) || ibv_destroy_cq(cq))
		die("destroy");
}

/* An RC QP in INIT with @count receives posted (wr_id first_id...). */
static struct ibv_qp *qp_with_recvs(struct env *env, struct ibv_cq *cq,
				    uint64_t first_id, int count)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = count,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(env->pd, &attr);

	if (!qp)
		die("ibv_create_qp");
	if (qp_to_init(qp))
		die("modify_qp INIT");
	if (post_recvs(env, qp, first_id, count))
		die("ibv_post_recv");
	return qp;
}

/*
 * Resizing keeps pending completions, in order; the kernel writes the
 * new ring afterwards.  Moving a QP to the error state completes its
 * receives before ibv_modify_qp returns.
 */
static void test_cq_resize(struct env *env)
{
	struct ibv_device_attr dev_attr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int ret, got;

	if (ibv_query_device(env->ctx, &dev_attr))
		die("ibv_query_device");
	cq = ibv_create_cq(env->ctx, 16, NULL, NULL, 0);
	if (!cq)
		die("ibv_create_cq");
	qp = qp_with_recvs(env, cq, 500, 12);
	if (qp_to_state(qp, IBV_QPS_ERR))
		die("modify_qp ERR");
	check(poll_flushes(cq, qp, 500, 2) == 2, "resize: first 2 of 12 polled");

	ret = ibv_resize_cq(cq, 4);
	check(ret == EINVAL, "resize to 4 with 10 pending: EINVAL (%d)", ret);
	ret = ibv_resize_cq(cq, 0);
	check(ret == EINVAL, "resize to 0: EINVAL (%d)", ret);
	ret = ibv_resize_cq(cq, dev_attr.max_cqe + 1);
	check(ret == EINVAL, "resize past max_cqe %d: EINVAL (%d)",
	      dev_attr.max_cqe, ret);
	ret = ibv_resize_cq(cq, 100);
	check(!ret && cq->cqe >= 100, "resize to 100 with 10 pending (%d, cqe %d)",
	      ret, cq->cqe);
	got = poll_flushes(cq, qp, 502, 10);
	check(got == 10, "resize: %d of 10 pending completions polled in order",
	      got);
	if (ibv_destroy_qp(qp))
		die("ibv_destroy_qp");

	/* Shrink while 3 are pending, then fill the new ring and wrap it. */
	qp = qp_with_recvs(env, cq, 600, 11);
	if (qp_to_state(qp, IBV_QPS_ERR))
		die("modify_qp ERR");
	check(poll_flushes(cq, qp, 600, 8) == 8, "resize: first 8 of 11 polled");
	ret = ibv_resize_cq(cq, 3);
	check(!ret && cq->cqe >= 3 && cq->cqe < 8,
	      "resize to 3 with 3 pending (%d, cqe %d)", ret, cq->cqe);
	got = poll_flushes(cq, qp, 608, 3);
	check(got == 3, "resize: %d of 3 pending completions polled in order",
	      got);
	if (ibv_destroy_qp(qp))
		die("ibv_destroy_qp");
	qp = qp_with_recvs(env, cq, 700, cq->cqe);
	if (qp_to_state(qp, IBV_QPS_ERR))
		die("modify_qp ERR");
	got = poll_flushes(cq, qp, 700, cq->cqe);
	check(got == cq->cqe, "resized ring: %d of %d new completions in order",
	      got, cq->cqe);
	if (ibv_destroy_qp(qp))
		die("ibv_destroy_qp");
	if (ibv_destroy_cq(cq))
		die("ibv_destroy_cq");
}

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * The device's clock is CLOCK_MONOTONIC in ns (hca_core_clock 1 GHz):
 * flush completions of a CQ with timestamps carry a time between the
 * moment the QP was moved to ERR and the moment they were polled, in
 * order, and a wall-clock time likewise.
 */
static void test_cq_timestamps(struct env *env)
{
	struct ibv_cq_init_attr_ex cq_attr = {
		.cqe = RING_WRS,
		.wc_flags = IBV_WC_STANDARD_FLAGS |
			    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
			    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
	};
	struct ibv_values_ex values = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	struct ibv_device_attr_ex attr = {};
	struct ibv_poll_cq_attr poll_attr = {};
	uint64_t t0, t1, r0, r1, ts, wall, last = 0;
	struct ibv_cq_ex *cq;
	struct ibv_qp *qp;
	int got = 0, tries, ret;

	ret = ibv_query_device_ex(env->ctx, NULL, &attr);
	check(!ret && attr.hca_core_clock == 1000000 &&
	      attr.completion_timestamp_mask,
	      "hca_core_clock %" PRIu64 " kHz (1 GHz), timestamp mask %#"
	      PRIx64, attr.hca_core_clock, attr.completion_timestamp_mask);
	t0 = clock_ns(CLOCK_MONOTONIC);
	ret = ibv_query_rt_values_ex(env->ctx, &values);
	t1 = clock_ns(CLOCK_MONOTONIC);
	check(!ret && (values.comp_mask & IBV_VALUES_MASK_RAW_CLOCK) &&
	      (uint64_t)values.raw_clock.tv_nsec >= t0 &&
	      (uint64_t)values.raw_clock.tv_nsec <= t1,
	      "ibv_query_rt_values_ex: %d, raw clock %ld within [%" PRIu64
	      ", %" PRIu64 "]", ret, (long)values.raw_clock.tv_nsec, t0, t1);

	cq = ibv_create_cq_ex(env->ctx, &cq_attr);
	if (!cq)
		die("ibv_create_cq_ex with timestamps");
	qp = qp_with_recvs(env, ibv_cq_ex_to_cq(cq), 500, RING_WRS);
	t0 = clock_ns(CLOCK_MONOTONIC);
	r0 = clock_ns(CLOCK_REALTIME);
	if (qp_to_state(qp, IBV_QPS_ERR))
		die("modify_qp ERR");
	for (tries = 0; got < RING_WRS && tries < 2000; tries++) {
		if (ibv_start_poll(cq, &poll_attr)) {
			usleep(1000);
			continue;
		}
		do {
			ts = ibv_wc_read_completion_ts(cq);
			wall = ibv_wc_read_completion_wallclock_ns(cq);
			t1 = clock_ns(CLOCK_MONOTONIC);
			r1 = clock_ns(CLOCK_REALTIME);
			check(ts >= t0 && ts <= t1 && ts >= last,
			      "completion %d: timestamp %" PRIu64 " within [%"
			      PRIu64 ", %" PRIu64 "], not before %" PRIu64, got,
			      ts, t0, t1, last);
			/* Two clock reads apart: allow a millisecond. */
			check(wall + 1000000 >= r0 && wall <= r1 + 1000000,
			      "completion %d: wall clock %" PRIu64 " within [%"
			      PRIu64 ", %" PRIu64 "] (1 ms slack)", got, wall,
			      r0, r1);
			check(ibv_wc_read_qp_num(cq) == qp->qp_num &&
			      ibv_wc_read_opcode(cq) == IBV_WC_RECV,
			      "completion %d: qp_num/opcode", got);
			last = ts;
			got++;
		} while (!ibv_next_poll(cq));
		ibv_end_poll(cq);
	}
	check(got == RING_WRS, "%d of %d timestamped completions", got,
	      RING_WRS);
	if (ibv_destroy_qp(qp) || ibv_destroy_cq(ibv_cq_ex_to_cq(cq)))
		die("destroy");
}

/* An armed CQ raises a completion event when the kernel adds a CQE. */
static void test_cq_event(struct env *env)
{
	struct ibv_comp_channel *channel;
	struct pollfd pfd;
	struct ibv_cq *cq, *ev_cq;
	struct ibv_qp *qp;
	void *ev_ctx;
	int ret;

	channel = ibv_create_comp_channel(env->ctx);
	if (!channel)
		die("ibv_create_comp_channel");
	cq = ibv_create_cq(env->ctx, RING_WRS, env, channel, 0);
	if (!cq)
		die("ibv_create_cq");
	qp = create_qp(env, IBV_QPT_RC, cq, NULL);
	if (qp_to_init(qp) || post_recvs(env, qp, 1, 1))
		die("QP setup");
	check(!ibv_req_notify_cq(cq, 0), "ibv_req_notify_cq");
	if (qp_to_state(qp, IBV_QPS_ERR))
		die("modify_qp ERR");

	pfd.fd = channel->fd;
	pfd.events = POLLIN;
	ret = poll(&pfd, 1, 3000);
	check(ret == 1, "completion channel became readable (%d)", ret);
	if (ret == 1) {
		ret = ibv_get_cq_event(channel, &ev_cq, &ev_ctx);
		check(!ret && ev_cq == cq && ev_ctx == env,
		      "ibv_get_cq_event names the CQ");
		if (!ret)
			ibv_ack_cq_events(cq, 1);
	}
	check(poll_flushes(cq, qp, 1, 1) == 1, "the CQE is there to poll");
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_destroy_comp_channel(channel);
}

static void test_srq(struct env *env)
{
	struct ibv_srq_init_attr init = {
		.attr = { .max_wr = RING_WRS, .max_sge = 1 },
	};
	struct ibv_sge sges[2] = {
		{ .addr = (uintptr_t)env->buf, .length = 8,
		  .lkey = env->mr->lkey },
		{ .addr = (uintptr_t)env->buf, .length = 8,
		  .lkey = env->mr->lkey },
	};
	struct ibv_recv_wr wr = { .sg_list = sges, .num_sge = 2 }, *bad;
	struct ibv_srq_attr attr = {};
	struct ibv_srq *srq;
	int i, ret;

	srq = ibv_create_srq(env->pd, &init);
	if (!srq)
		die("ibv_create_srq");
	ret = ibv_post_srq_recv(srq, &wr, &bad);
	check(ret == EINVAL && bad == &wr,
	      "SRQ: 2 SGEs with max_sge 1: EINVAL (%d)", ret);
	wr.num_sge = 1;
	for (i = 0; i < (int)init.attr.max_wr; i++) {
		wr.wr_id = i;
		ret = ibv_post_srq_recv(srq, &wr, &bad);
		if (ret)
			break;
	}
	check(!ret, "SRQ: %u receives posted", init.attr.max_wr);
	ret = ibv_post_srq_recv(srq, &wr, &bad);
	check(ret == ENOMEM, "SRQ: full ring: ENOMEM (%d)", ret);

	attr.srq_limit = 2;
	ret = ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT);
	check(!ret, "ibv_modify_srq(IBV_SRQ_LIMIT) (%d)", ret);
	ret = ibv_query_srq(srq, &attr);
	check(!ret && attr.max_sge == 1 && attr.max_wr >= RING_WRS,
	      "ibv_query_srq: max_wr %u max_sge %u (%d)", attr.max_wr,
	      attr.max_sge, ret);
	check(!ibv_destroy_srq(srq), "ibv_destroy_srq");
}

/* Posts receives to @srq until it refuses one; returns how many went in. */
static int fill_srq(struct env *env, struct ibv_srq *srq, uint64_t first_id,
		    int max)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)env->buf, .length = 8,
		.lkey = env->mr->lkey,
	};
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	int n;

	for (n = 0; n < max; n++) {
		wr.wr_id = first_id + n;
		if (ibv_post_srq_recv(srq, &wr, &bad))
			break;
	}
	return n;
}

/*
 * ibv_modify_srq(IBV_SRQ_MAX_WR) moves the posted receives to a new ring:
 * the free room left afterwards shows the kernel kept the counters.
 */
static void test_srq_resize(struct env *env)
{
	struct ibv_srq_init_attr init = {
		.attr = { .max_wr = 16, .max_sge = 1 },
	};
	struct ibv_srq_attr attr = {};
	struct ibv_srq *srq;
	int ret, posted;

	srq = ibv_create_srq(env->pd, &init);
	if (!srq)
		die("ibv_create_srq");
	check(fill_srq(env, srq, 800, 10) == 10, "SRQ resize: 10 posted");

	attr.max_wr = 4;
	ret = ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR);
	check(ret == EINVAL, "SRQ resize to 4 with 10 posted: EINVAL (%d)",
	      ret);
	attr.max_wr = 0;
	ret = ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR);
	check(ret == EINVAL, "SRQ resize to 0: EINVAL (%d)", ret);
	attr.max_wr = 64;
	ret = ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR);
	check(!ret, "SRQ resize to 64 with 10 posted (%d)", ret);
	ret = ibv_query_srq(srq, &attr);
	check(!ret && attr.max_wr == 64, "SRQ resized: max_wr %u (%d)",
	      attr.max_wr, ret);
	posted = fill_srq(env, srq, 810, 100);
	check(posted == 54, "SRQ resized: room for %d more, expected 54",
	      posted);

	/* A limit must stay below the new size; both change together. */
	attr.max_wr = 128;
	attr.srq_limit = 100;
	ret = ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT);
	check(!ret, "SRQ resize to 128 with limit 100 (%d)", ret);
	attr.max_wr = 64;
	ret = ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR);
	check(ret == EINVAL, "SRQ resize to 64, limit 100: EINVAL (%d)",
	      ret);
	ret = ibv_query_srq(srq, &attr);
	check(!ret && attr.max_wr == 128 && attr.srq_limit == 100,
	      "SRQ: max_wr %u limit %u after the refused resize (%d)",
	      attr.max_wr, attr.srq_limit, ret);
	posted = fill_srq(env, srq, 900, 100);
	check(posted == 64, "SRQ resized twice: room for %d more, expected 64",
	      posted);
	check(!ibv_destroy_srq(srq), "ibv_destroy_srq");

	/* Shrinking with a new, lower limit in the same call is fine. */
	srq = ibv_create_srq(env->pd, &init);
	if (!srq)
		die("ibv_create_srq");
	attr.srq_limit = 12;
	check(!ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT), "SRQ limit 12");
	attr.max_wr = 8;
	attr.srq_limit = 4;
	ret = ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT);
	check(!ret, "SRQ resize to 8 with new limit 4 (%d)", ret);
	attr.max_wr = 4;
	ret = ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR);
	check(ret == EINVAL, "SRQ resize to 4, limit 4: EINVAL (%d)", ret);
	ret = ibv_query_srq(srq, &attr);
	check(!ret && attr.max_wr == 8 && attr.srq_limit == 4,
	      "SRQ: max_wr %u limit %u, nothing changed by the refusal (%d)",
	      attr.max_wr, attr.srq_limit, ret);
	check(!ibv_destroy_srq(srq), "ibv_destroy_srq");
}

static struct ibv_ah *create_ah(struct env *env)
{
	struct ibv_ah_attr attr = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = env->peer_gid, .sgid_index = env->gid_index,
			 .hop_limit = 64 },
	};

	return ibv_create_ah(env->pd, &attr);
}

static struct ibv_qp *create_ud_qp_ex(struct env *env, struct ibv_cq *cq,
				      uint64_t send_ops)
{
	struct ibv_qp_init_attr_ex attr = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = RING_WRS, .max_recv_wr = RING_WRS,
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = 32 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = env->pd,
		.send_ops_flags = send_ops,
	};

	return ibv_create_qp_ex(env->ctx, &attr);
}

/*
 * UD sends: the SQ ring fills up (the placeholder transport retires
 * nothing, a working one may retire some: either way no more than the
 * ring holds is accepted).
 */
static void test_ud_send(struct env *env)
{
	struct ibv_sge sge = { .addr = (uintptr_t)env->buf, .length = 16,
			       .lkey = env->mr->lkey };
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_SEND, .sg_list = &sge, .num_sge = 1,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_qp_ex *qpx;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_ah *ah;
	int i, ret = 0;

	cq = ibv_create_cq(env->ctx, 4 * RING_WRS, NULL, NULL, 0);
	if (!cq)
		die("ibv_create_cq");
	ah = create_ah(env);
	check(ah != NULL, "ibv_create_ah to the peer (%s)",
	      ah ? "ok" : strerror(errno));
	if (!ah)
		goto out_cq;

	qp = create_ud_qp_ex(env, cq, IBV_QP_EX_WITH_SEND |
				      IBV_QP_EX_WITH_RDMA_WRITE);
	check(!qp && errno == EOPNOTSUPP,
	      "UD QP with send_ops RDMA_WRITE refused (%s)",
	      qp ? "created" : strerror(errno));
	qp = create_ud_qp_ex(env, cq, IBV_QP_EX_WITH_SEND);
	if (!qp)
		die("ibv_create_qp_ex(UD)");
	qpx = ibv_qp_to_qp_ex(qp);
	check(qpx != NULL, "ibv_qp_to_qp_ex");

	ret = ibv_post_send(qp, &wr, &bad);
	check(ret == EINVAL, "post_send before RTS: EINVAL (%d)", ret);
	if (qp_to_init(qp) || qp_to_state(qp, IBV_QPS_RTR) ||
	    qp_to_state(qp, IBV_QPS_RTS))
		die("modify UD QP to RTS");

	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = 1;
	wr.wr.ud.remote_qkey = QKEY;
	wr.opcode = IBV_WR_RDMA_WRITE;
	ret = ibv_post_send(qp, &wr, &bad);
	check(ret == EINVAL, "RDMA WRITE on UD: EINVAL (%d)", ret);
	wr.opcode = IBV_WR_SEND;
	ret = ibv_post_send(qp, &wr, &bad);
	check(!ret, "UD ibv_post_send (%d)", ret);

	ibv_wr_start(qpx);
	qpx->wr_id = 2;
	ibv_wr_send(qpx);
	ibv_wr_set_ud_addr(qpx, ah, 1, QKEY);
	ibv_wr_set_inline_data(qpx, env->buf, 64);	/* max_inline 32 */
	ret = ibv_wr_complete(qpx);
	check(ret == EINVAL, "ibv_wr: inline data above max: EINVAL (%d)", ret);

	ibv_wr_start(qpx);
	qpx->wr_id = 3;
	ibv_wr_send(qpx);
	ibv_wr_set_ud_addr(qpx, ah, 1, QKEY);
	ibv_wr_set_sge(qpx, env->mr->lkey, (uintptr_t)env->buf, 16);
	ret = ibv_wr_complete(qpx);
	check(!ret, "ibv_wr_send + set_ud_addr + set_sge (%d)", ret);

	/* Fill the ring: at most num_entries WQEs are outstanding. */
	for (i = 0; i < 64 && !ret; i++)
		ret = ibv_post_send(qp, &wr, &bad);
	check(ret == ENOMEM || !ret, "send ring full: ENOMEM, or all %d retired (%d)",
	      i, ret);

	check(!ibv_destroy_qp(qp), "destroy UD QP with queued sends");
	check(!ibv_destroy_ah(ah), "ibv_destroy_ah");
out_cq:
	check(!ibv_destroy_cq(cq), "destroy CQ");
}

/* ------------------------------------------------------------------ */
/* No system calls on the data path                                    */
/* ------------------------------------------------------------------ */

struct strict_job {
	struct env *env;
	struct ibv_qp *rc_qp;		/* INIT: receives may be posted */
	struct ibv_srq *srq;
	struct ibv_cq *cq;
	struct ibv_cq_ex *cq_ex;
	int recv_ret, srq_ret, poll_ret, start_poll_ret;
	bool done;
};

/*
 * Runs under SECCOMP_MODE_STRICT: only read, write, exit and sigreturn
 * are allowed, anything else kills the whole process.  Ends with the raw
 * exit system call (glibc's thread exit would make others).
 */
static void *strict_thread(void *arg)
{
	struct strict_job *job = arg;
	struct ibv_sge sge = { .addr = (uintptr_t)job->env->buf, .length = 8,
			       .lkey = job->env->mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 77, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *rbad;
	struct ibv_poll_cq_attr attr = {};
	struct ibv_wc wc;

	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT))
		syscall(SYS_exit, 1);

	job->recv_ret = ibv_post_recv(job->rc_qp, &rwr, &rbad);
	job->srq_ret = ibv_post_srq_recv(job->srq, &rwr, &rbad);
	job->poll_ret = ibv_poll_cq(job->cq, 1, &wc);
	job->start_poll_ret = ibv_start_poll(job->cq_ex, &attr);
	if (!job->start_poll_ret)
		ibv_end_poll(job->cq_ex);
	__atomic_store_n(&job->done, true, __ATOMIC_RELEASE);
	syscall(SYS_exit, 0);
	return NULL;
}

static void test_no_syscalls(struct env *env)
{
	struct ibv_cq_init_attr_ex cq_attr = { .cqe = RING_WRS };
	struct ibv_srq_init_attr srq_init = {
		.attr = { .max_wr = RING_WRS, .max_sge = 1 },
	};
	/* -1: the call did not return (the thread was killed before). */
	struct strict_job job = { .env = env, .recv_ret = -1, .srq_ret = -1,
				  .poll_ret = -1, .start_poll_ret = -1 };
	pthread_t thread;

	job.cq = ibv_create_cq(env->ctx, RING_WRS, NULL, NULL, 0);
	job.cq_ex = ibv_create_cq_ex(env->ctx, &cq_attr);
	job.srq = ibv_create_srq(env->pd, &srq_init);
	if (!job.cq || !job.cq_ex || !job.srq)
		die("strict test setup");
	job.rc_qp = create_qp(env, IBV_QPT_RC, job.cq, NULL);
	if (qp_to_init(job.rc_qp))
		die("strict test QP setup");

	if (pthread_create(&thread, NULL, strict_thread, &job))
		die("pthread_create");
	pthread_join(thread, NULL);
	/* Reaching this line means no forbidden system call was made. */
	check(__atomic_load_n(&job.done, __ATOMIC_ACQUIRE),
	      "data path ran under SECCOMP_MODE_STRICT");
	check(!job.recv_ret, "  ibv_post_recv (%d)", job.recv_ret);
	check(!job.srq_ret, "  ibv_post_srq_recv (%d)", job.srq_ret);
	check(!job.poll_ret, "  ibv_poll_cq on an empty CQ (%d)", job.poll_ret);
	check(job.start_poll_ret == ENOENT,
	      "  ibv_start_poll on an empty CQ: ENOENT (%d)",
	      job.start_poll_ret);

	/* The receive posted in the strict thread reached the kernel. */
	if (qp_to_state(job.rc_qp, IBV_QPS_ERR))
		die("modify_qp ERR");
	check(poll_flushes(job.cq, job.rc_qp, 77, 1) == 1,
	      "the receive posted without a system call was flushed");

	ibv_destroy_qp(job.rc_qp);
	ibv_destroy_srq(job.srq);
	ibv_destroy_cq(ibv_cq_ex_to_cq(job.cq_ex));
	ibv_destroy_cq(job.cq);
}

static void test_refused(struct env *env)
{
	struct ibv_cq_init_attr_ex cq_attr = {
		.cqe = 4, .wc_flags = IBV_WC_EX_WITH_FLOW_TAG,
	};
	struct ibv_qp_init_attr attr = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = 1, .max_send_sge = 1 },
	};
	struct ibv_cq_ex *cq_ex;
	struct ibv_qp *qp;
	struct ibv_cq *cq;

	cq_ex = ibv_create_cq_ex(env->ctx, &cq_attr);
	check(!cq_ex && errno == EOPNOTSUPP,
	      "CQ with flow tags refused (%s)",
	      cq_ex ? "created" : strerror(errno));
	cq = ibv_create_cq(env->ctx, 4, NULL, NULL, 0);
	if (!cq)
		die("ibv_create_cq");
	attr.send_cq = attr.recv_cq = cq;
	qp = ibv_create_qp(env->pd, &attr);
	check(!qp && errno == EOPNOTSUPP, "raw packet QP refused (%s)",
	      qp ? "created" : strerror(errno));
	ibv_destroy_cq(cq);
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
	if (!ctx)
		die("ibv_open_device");
	return ctx;
}

int main(int argc, char **argv)
{
	struct env env = {};
	struct in_addr peer;

	if (argc != 4 || inet_pton(AF_INET, argv[3], &peer) != 1) {
		fprintf(stderr, "usage: %s DEVICE GID_INDEX PEER_IPV4\n",
			argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	env.gid_index = atoi(argv[2]);
	env.peer_gid.raw[10] = 0xff;
	env.peer_gid.raw[11] = 0xff;
	memcpy(&env.peer_gid.raw[12], &peer, 4);

	env.ctx = open_device(argv[1]);
	env.pd = ibv_alloc_pd(env.ctx);
	if (!env.pd)
		die("ibv_alloc_pd");
	env.mr = ibv_reg_mr(env.pd, env.buf, sizeof(env.buf),
			    IBV_ACCESS_LOCAL_WRITE);
	if (!env.mr)
		die("ibv_reg_mr");

	test_recv_flush(&env, false);
	test_recv_flush(&env, true);
	test_cq_event(&env);
	test_cq_resize(&env);
	test_cq_timestamps(&env);
	test_send_flush_repost(&env);
	test_srq(&env);
	test_srq_resize(&env);
	test_ud_send(&env);
	test_no_syscalls(&env);
	test_refused(&env);

	ibv_dereg_mr(env.mr);
	ibv_dealloc_pd(env.pd);
	ibv_close_device(env.ctx);
	printf("%s: %d check(s) failed\n", argv[0], failures);
	return failures ? 1 : 0;
}
