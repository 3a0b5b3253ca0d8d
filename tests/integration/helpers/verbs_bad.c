// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * verbs_bad: bad requests from a process against a stellar device, each on
 * a fresh RC QP pair connected to itself through the device (loopback):
 *
 *   - the low (key) byte of R_Keys differs between registrations;
 *   - RDMA WRITE with a wrong R_Key (also one with the right MR index and
 *     another key byte), beyond the end of the MR, or into an
 *     MR without remote write access; RDMA READ from an MR without remote
 *     read access; an atomic on an MR without remote atomic access: the
 *     requester gets IBV_WC_REM_ACCESS_ERR, the responder's memory is
 *     unchanged and the responder QP reports IBV_EVENT_QP_ACCESS_ERR;
 *   - work requests the provider must refuse at once (bad opcode, too many
 *     SGEs, oversized inline data, a misaligned atomic, posting to a QP in
 *     RESET): ibv_post_send fails with EINVAL and nothing is sent;
 *   - outstanding receives of a QP moved to the error state are flushed
 *     with IBV_WC_WR_FLUSH_ERR;
 *   - a SEND (inline, or from an SGE) that RNR NAKs hold while the process
 *     rewrites its send ring entry (inline flag and length, data, SGEs,
 *     wr_id) still delivers the bytes posted and completes with the wr_id
 *     posted: the kernel reads a WQE from the ring only once; an inline
 *     READ written into the ring fails with IBV_WC_LOC_QP_OP_ERR;
 *   - after all that, a correct RDMA WRITE on a new pair delivers its data.
 *
 *   verbs_bad DEVICE GID_INDEX
 *
 * Prints one line per check; exits 0 when every check passed.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "stellar.h"	/* the provider's rings, to rewrite a send WQE */

#define BUF_SIZE	8192
#define PATTERN		0x5a
#define POLL_SECONDS	20

struct env {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	union ibv_gid gid;
	int gid_index;
	uint8_t *local;		/* requester's buffer */
	uint8_t *target;	/* responder's buffer, full remote access */
	uint8_t *plain;		/* responder's buffer, local access only */
	struct ibv_mr *local_mr;
	struct ibv_mr *target_mr;
	struct ibv_mr *plain_mr;
};

/* A QP connected to its partner on the same device, with its own CQ. */
struct end {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
};

static int failures;

static void check(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s: ", ok ? "ok" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (!ok)
		failures++;
}

static void die(const char *what)
{
	fprintf(stderr, "verbs_bad: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void create_end(struct env *env, struct end *end)
{
	struct ibv_qp_init_attr attr = {
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = 16, .max_recv_wr = 16,
			.max_send_sge = 2, .max_recv_sge = 2,
			.max_inline_data = 64,
		},
	};

	end->cq = ibv_create_cq(env->ctx, 32, NULL, NULL, 0);
	if (!end->cq)
		die("ibv_create_cq");
	attr.send_cq = end->cq;
	attr.recv_cq = end->cq;
	end->qp = ibv_create_qp(env->pd, &attr);
	if (!end->qp)
		die("ibv_create_qp");
}

static int modify(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	errno = ibv_modify_qp(qp, attr, mask);
	return errno ? -1 : 0;
}

static void to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};

	if (modify(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
		   IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("modify to INIT");
}

static void to_rts(struct env *env, struct ibv_qp *qp, uint32_t dest_qpn)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = dest_qpn, .rq_psn = 0,
		.max_dest_rd_atomic = 4, .min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1, .port_num = 1,
			.grh = { .dgid = env->gid, .sgid_index = env->gid_index,
				 .hop_limit = 64 },
		},
	};

	if (modify(qp, &attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		   IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("modify to RTR");
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = 4;
	if (modify(qp, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT |
		   IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
		   IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify to RTS");
}

static void connect_pair(struct env *env, struct end *req, struct end *resp)
{
	create_end(env, req);
	create_end(env, resp);
	to_init(req->qp);
	to_init(resp->qp);
	to_rts(env, req->qp, resp->qp->qp_num);
	to_rts(env, resp->qp, req->qp->qp_num);
}

static void destroy_end(struct end *end)
{
	if (ibv_destroy_qp(end->qp))
		die("ibv_destroy_qp");
	if (ibv_destroy_cq(end->cq))
		die("ibv_destroy_cq");
}

/* Wait for one completion on @cq; false on timeout. */
static bool poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	time_t deadline = time(NULL) + POLL_SECONDS;
	int n;

	while (time(NULL) < deadline) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n < 0)
			die("ibv_poll_cq");
		if (n == 1)
			return true;
	}
	return false;
}

static bool buf_is(const uint8_t *buf, size_t len, uint8_t value)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (buf[i] != value)
			return false;
	return true;
}

/*
 * Wait for the asynchronous event @expected of @qp, skipping unrelated
 * ones (port and GID events); @got says what came last.
 */
static bool qp_event_seen(struct env *env, struct ibv_qp *qp,
			  enum ibv_event_type expected, const char **got)
{
	struct pollfd pfd = { .fd = env->ctx->async_fd, .events = POLLIN };
	struct ibv_async_event event;
	bool seen = false;

	*got = "none";
	while (!seen && poll(&pfd, 1, POLL_SECONDS * 1000) == 1) {
		if (ibv_get_async_event(env->ctx, &event))
			die("ibv_get_async_event");
		*got = ibv_event_type_str(event.event_type);
		seen = event.event_type == expected && event.element.qp == qp;
		ibv_ack_async_event(&event);
	}
	return seen;
}

/* Post @wr on a fresh pair; check the requester's completion status. */
static void remote_error_case(struct env *env, const char *what,
			      struct ibv_send_wr *wr,
			      enum ibv_wc_status expected)
{
	struct ibv_send_wr *bad_wr;
	struct end req, resp;
	const char *event;
	struct ibv_wc wc;
	bool seen;
	int ret;

	connect_pair(env, &req, &resp);
	memset(env->target, PATTERN, BUF_SIZE);
	memset(env->plain, PATTERN, BUF_SIZE);
	ret = ibv_post_send(req.qp, wr, &bad_wr);
	check(ret == 0, "%s: posted (%s)", what, strerror(ret));
	if (!ret && poll_one(req.cq, &wc))
		check(wc.status == expected && wc.wr_id == wr->wr_id,
		      "%s: requester completion '%s' (expected '%s')", what,
		      ibv_wc_status_str(wc.status),
		      ibv_wc_status_str(expected));
	else if (!ret)
		check(false, "%s: no completion in %d s", what, POLL_SECONDS);
	check(buf_is(env->target, BUF_SIZE, PATTERN) &&
	      buf_is(env->plain, BUF_SIZE, PATTERN),
	      "%s: responder memory unchanged", what);
	seen = qp_event_seen(env, resp.qp, IBV_EVENT_QP_ACCESS_ERR, &event);
	check(seen, "%s: responder QP event '%s' (expected '%s')", what, event,
	      ibv_event_type_str(IBV_EVENT_QP_ACCESS_ERR));
	destroy_end(&req);
	destroy_end(&resp);
}

static void test_remote_access(struct env *env)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)env->local, .length = 512,
		.lkey = env->local_mr->lkey,
	};
	struct ibv_sge atomic_sge = {
		.addr = (uintptr_t)env->local, .length = 8,
		.lkey = env->local_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
	};

	memset(env->local, 0xa5, BUF_SIZE);
	wr.wr.rdma.remote_addr = (uintptr_t)env->target;
	wr.wr.rdma.rkey = env->target_mr->rkey ^ 0x5500;
	remote_error_case(env, "WRITE with a wrong R_Key", &wr,
			  IBV_WC_REM_ACCESS_ERR);

	wr.wr_id = 6;
	wr.wr.rdma.rkey = env->target_mr->rkey ^ 0x5a;
	remote_error_case(env, "WRITE with the right index but another key byte",
			  &wr, IBV_WC_REM_ACCESS_ERR);

	wr.wr_id = 2;
	wr.wr.rdma.remote_addr = (uintptr_t)env->target + BUF_SIZE - 256;
	wr.wr.rdma.rkey = env->target_mr->rkey;
	remote_error_case(env, "WRITE past the end of the MR", &wr,
			  IBV_WC_REM_ACCESS_ERR);

	wr.wr_id = 3;
	wr.wr.rdma.remote_addr = (uintptr_t)env->plain;
	wr.wr.rdma.rkey = env->plain_mr->rkey;
	remote_error_case(env, "WRITE without remote write access", &wr,
			  IBV_WC_REM_ACCESS_ERR);

	wr.wr_id = 4;
	wr.opcode = IBV_WR_RDMA_READ;
	remote_error_case(env, "READ without remote read access", &wr,
			  IBV_WC_REM_ACCESS_ERR);

	wr.wr_id = 5;
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.sg_list = &atomic_sge;
	wr.wr.atomic.remote_addr = (uintptr_t)env->plain;
	wr.wr.atomic.rkey = env->plain_mr->rkey;
	wr.wr.atomic.compare_add = 1;
	remote_error_case(env, "atomic without remote atomic access", &wr,
			  IBV_WC_REM_ACCESS_ERR);
}

/* @wr must be refused by ibv_post_send with EINVAL, nothing completes. */
static void refused_case(struct ibv_qp *qp, struct ibv_cq *cq,
			 const char *what, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad_wr = NULL;
	struct ibv_wc wc;
	int ret = ibv_post_send(qp, wr, &bad_wr);

	check(ret == EINVAL && bad_wr == wr,
	      "%s: ibv_post_send refused it (%s)", what,
	      ret ? strerror(ret) : "accepted");
	check(ibv_poll_cq(cq, 1, &wc) == 0, "%s: no completion", what);
}

static void test_refused(struct env *env)
{
	struct ibv_sge sges[3];
	struct ibv_send_wr wr;
	struct end req, resp;
	uint8_t big[512];
	int i;

	connect_pair(env, &req, &resp);
	for (i = 0; i < 3; i++) {
		sges[i].addr = (uintptr_t)env->local;
		sges[i].length = 8;
		sges[i].lkey = env->local_mr->lkey;
	}
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = sges;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.opcode = (enum ibv_wr_opcode)77;
	refused_case(req.qp, req.cq, "unknown opcode", &wr);

	wr.opcode = IBV_WR_SEND;
	wr.num_sge = 3;		/* the QP has max_send_sge 2 */
	refused_case(req.qp, req.cq, "more SGEs than max_send_sge", &wr);

	sges[0].addr = (uintptr_t)big;
	sges[0].length = sizeof(big);
	wr.num_sge = 1;
	wr.send_flags |= IBV_SEND_INLINE;
	refused_case(req.qp, req.cq, "inline data over max_inline_data", &wr);

	sges[0].addr = (uintptr_t)env->local;
	sges[0].length = 8;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.remote_addr = (uintptr_t)env->target + 4;
	wr.wr.atomic.rkey = env->target_mr->rkey;
	refused_case(req.qp, req.cq, "atomic on a misaligned address", &wr);
	destroy_end(&req);
	destroy_end(&resp);

	create_end(env, &req);
	wr.opcode = IBV_WR_SEND;
	refused_case(req.qp, req.cq, "SEND on a QP in RESET", &wr);
	destroy_end(&req);
}

static void test_flush(struct env *env)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct ibv_sge sge = {
		.addr = (uintptr_t)env->target, .length = 64,
		.lkey = env->target_mr->lkey,
	};
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad_rwr;
	struct end req, resp;
	struct ibv_wc wc;
	int i, flushed = 0;

	connect_pair(env, &req, &resp);
	for (i = 0; i < 4; i++) {
		rwr.wr_id = 100 + i;
		if (ibv_post_recv(resp.qp, &rwr, &bad_rwr))
			die("ibv_post_recv");
	}
	if (modify(resp.qp, &attr, IBV_QP_STATE))
		die("modify to ERR");
	while (flushed < 4 && poll_one(resp.cq, &wc)) {
		if (wc.status != IBV_WC_WR_FLUSH_ERR ||
		    wc.wr_id != (uint64_t)(100 + flushed))
			break;
		flushed++;
	}
	check(flushed == 4, "receives of a QP moved to ERR: %d of 4 flushed in order",
	      flushed);
	destroy_end(&req);
	destroy_end(&resp);
}

/* Device counter @name of /proc/stellar/DEVICE/stats (0: not there). */
static unsigned long long dev_stat(struct env *env, const char *name)
{
	unsigned long long value, found = 0;
	char path[128], key[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/stellar/%s/stats",
		 ibv_get_device_name(env->ctx->device));
	f = fopen(path, "r");
	if (!f)
		die(path);
	while (fscanf(f, " %63[^:]: %llu", key, &value) == 2)
		if (!strcmp(key, name))
			found = value;
	fclose(f);
	return found;
}

/* Wait until counter @name exceeds @old; false on timeout. */
static bool dev_stat_grows(struct env *env, const char *name,
			   unsigned long long old)
{
	time_t deadline = time(NULL) + POLL_SECONDS;

	while (time(NULL) < deadline) {
		if (dev_stat(env, name) > old)
			return true;
		usleep(10000);
	}
	return false;
}

/* The send ring entry of @qp at free-running index @index. */
static struct stellar_sq_wqe *send_entry(struct ibv_qp *qp, uint32_t index)
{
	struct stellar_uring *ring = &to_stellar_qp(qp)->sq.ring;
	uint32_t slot = index & (ring->num_entries - 1);

	return (struct stellar_sq_wqe *)((uint8_t *)ring->hdr +
					 STELLAR_RING_HDR_SIZE +
					 (size_t)slot * ring->entry_size);
}

/*
 * Rewrite a posted send WQE the way a hostile process would: inline data
 * of the longest length the QP allows, other SGE count and contents, and
 * another wr_id.
 */
static void scribble(struct stellar_sq_wqe *wqe, uint32_t max_inline)
{
	wqe->wr_id = ~wqe->wr_id;
	wqe->flags |= STELLAR_WQE_INLINE;
	wqe->inline_len = max_inline;
	wqe->num_sge = 2;
	memset(wqe + 1, 0xee, max_inline);
}

/* Offset of the first byte where @a and @b differ, or @len. */
static size_t first_difference(const uint8_t *a, const uint8_t *b,
			       size_t len)
{
	size_t i;

	for (i = 0; i < len && a[i] == b[i]; i++)
		;
	return i;
}

/*
 * Post a SEND of @len bytes (@inl: inline) that the responder, with no
 * receive posted, RNR NAKs; rewrite its ring entry, then post the receive.
 */
static void rewrite_case(struct env *env, const char *what, bool inl,
			 uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)env->local, .length = len,
		.lkey = env->local_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 0x5e4d, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED | (inl ? IBV_SEND_INLINE : 0),
	};
	struct ibv_sge rsge = {
		.addr = (uintptr_t)env->target, .length = BUF_SIZE,
		.lkey = env->target_mr->lkey,
	};
	struct ibv_recv_wr rwr = { .wr_id = 7, .sg_list = &rsge, .num_sge = 1 };
	struct ibv_recv_wr *bad_rwr;
	struct ibv_send_wr *bad_wr;
	unsigned long long naks;
	struct end req, resp;
	struct ibv_wc wc;
	size_t diff;
	bool got;
	int i;

	for (i = 0; i < BUF_SIZE; i++)
		env->local[i] = (uint8_t)(i * 7 + 1);
	memset(env->target, PATTERN, BUF_SIZE);
	connect_pair(env, &req, &resp);
	naks = dev_stat(env, "naks_rcvd");
	if (ibv_post_send(req.qp, &wr, &bad_wr))
		die("ibv_post_send");
	check(dev_stat_grows(env, "naks_rcvd", naks),
	      "%s: RNR NAKed while no receive is posted", what);
	scribble(send_entry(req.qp, to_stellar_qp(req.qp)->sq.ring.head - 1),
		 64);
	if (ibv_post_recv(resp.qp, &rwr, &bad_rwr))
		die("ibv_post_recv");
	got = poll_one(resp.cq, &wc);
	diff = first_difference(env->target, env->local, len);
	check(got && wc.status == IBV_WC_SUCCESS && wc.byte_len == len &&
	      diff == len && buf_is(env->target + len, BUF_SIZE - len, PATTERN),
	      "%s: the responder received the %u bytes posted "
	      "(%s, %u bytes, first difference at %zu: %02x)", what, len,
	      got ? ibv_wc_status_str(wc.status) : "no completion",
	      got ? wc.byte_len : 0, diff,
	      diff < BUF_SIZE ? env->target[diff] : 0);
	if (diff < len && len >= 320) {
		printf("    received bytes 256..319:");
		for (i = 256; i < 320; i++)
			printf("%s%02x", i % 16 ? "" : "\n     ", env->target[i]);
		putchar('\n');
	}
	got = poll_one(req.cq, &wc);
	check(got && wc.status == IBV_WC_SUCCESS && wc.wr_id == 0x5e4d,
	      "%s: requester completion '%s', wr_id %#llx", what,
	      got ? ibv_wc_status_str(wc.status) : "none",
	      got ? (unsigned long long)wc.wr_id : 0ULL);
	destroy_end(&req);
	destroy_end(&resp);
}

/*
 * A READ written straight into the send ring with the inline flag and 255
 * SGEs (ibv_post_send refuses both) fails with IBV_WC_LOC_QP_OP_ERR: its
 * response would land in SGEs that an inline WQE does not carry.
 */
static void inline_read_case(struct env *env)
{
	struct stellar_sq_wqe *wqe;
	struct stellar_uring *ring;
	struct end req, resp;
	struct stellar_qp *qp;
	struct ibv_wc wc;
	bool got;

	connect_pair(env, &req, &resp);
	qp = to_stellar_qp(req.qp);
	ring = &qp->sq.ring;
	wqe = send_entry(req.qp, ring->head);
	memset(wqe, 0, ring->entry_size);
	wqe->wr_id = 0x7ead;
	wqe->opcode = IBV_WR_RDMA_READ;
	wqe->flags = STELLAR_WQE_INLINE | STELLAR_WQE_SIGNALED;
	wqe->inline_len = 64;
	wqe->num_sge = 255;
	wqe->u.rdma.remote_addr = (uintptr_t)env->target;
	wqe->u.rdma.rkey = env->target_mr->rkey;
	ring->head++;
	__atomic_store_n(&ring->hdr->producer, ring->head, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!(__atomic_load_n(&ring->hdr->flags, __ATOMIC_RELAXED) &
	      STELLAR_RING_POLLED) && qp->ring_doorbell(qp))
		die("send doorbell");
	got = poll_one(req.cq, &wc);
	check(got && wc.status == IBV_WC_LOC_QP_OP_ERR && wc.wr_id == 0x7ead,
	      "inline READ in the ring: requester completion '%s' "
	      "(expected '%s')", got ? ibv_wc_status_str(wc.status) : "none",
	      ibv_wc_status_str(IBV_WC_LOC_QP_OP_ERR));
	destroy_end(&req);
	destroy_end(&resp);
}

static void test_rewrite(struct env *env)
{
	rewrite_case(env, "inline SEND rewritten under RNR", true, 32);
	rewrite_case(env, "SGE SEND rewritten under RNR", false, 1024);
	inline_read_case(env);
}

static void test_still_works(struct env *env)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)env->local, .length = BUF_SIZE,
		.lkey = env->local_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 9, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad_wr;
	struct end req, resp;
	struct ibv_wc wc;
	bool done;

	connect_pair(env, &req, &resp);
	memset(env->local, 0x3c, BUF_SIZE);
	memset(env->target, 0, BUF_SIZE);
	wr.wr.rdma.remote_addr = (uintptr_t)env->target;
	wr.wr.rdma.rkey = env->target_mr->rkey;
	if (ibv_post_send(req.qp, &wr, &bad_wr))
		die("ibv_post_send");
	done = poll_one(req.cq, &wc);
	check(done && wc.status == IBV_WC_SUCCESS,
	      "a correct WRITE afterwards completes (%s)",
	      done ? ibv_wc_status_str(wc.status) : "timeout");
	check(buf_is(env->target, BUF_SIZE, 0x3c),
	      "a correct WRITE afterwards delivers its data");
	destroy_end(&req);
	destroy_end(&resp);
}

/*
 * The low byte of a key must not be predictable: among KEY_SAMPLES
 * registrations of one buffer, at least KEY_BYTES_MIN different ones
 * (random bytes give about 56; a constant byte gives 1).
 */
#define KEY_SAMPLES	64
#define KEY_BYTES_MIN	16

static void test_key_bytes(struct env *env)
{
	struct ibv_mr *mr[KEY_SAMPLES];
	bool seen[256] = { false };
	int i, distinct = 0, same = 0;

	for (i = 0; i < KEY_SAMPLES; i++) {
		mr[i] = ibv_reg_mr(env->pd, env->plain, BUF_SIZE,
				   IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_REMOTE_WRITE);
		if (!mr[i])
			die("ibv_reg_mr");
		same += mr[i]->lkey == mr[i]->rkey;
		if (!seen[mr[i]->rkey & 0xff])
			distinct++;
		seen[mr[i]->rkey & 0xff] = true;
	}
	for (i = 0; i < KEY_SAMPLES; i++)
		ibv_dereg_mr(mr[i]);
	check(distinct >= KEY_BYTES_MIN,
	      "R_Keys of %d registrations have %d different low bytes (at least %d)",
	      KEY_SAMPLES, distinct, KEY_BYTES_MIN);
	check(same == KEY_SAMPLES, "L_Key equals R_Key for %d of %d registrations",
	      same, KEY_SAMPLES);
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
		fprintf(stderr, "verbs_bad: cannot open device %s\n", name);
		exit(2);
	}
	return ctx;
}

static struct ibv_mr *reg(struct env *env, void *buf, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(env->pd, buf, BUF_SIZE, access);

	if (!mr)
		die("ibv_reg_mr");
	return mr;
}

int main(int argc, char **argv)
{
	const int remote = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	struct env env = { 0 };

	if (argc != 3) {
		fprintf(stderr, "usage: verbs_bad DEVICE GID_INDEX\n");
		return 2;
	}
	env.ctx = open_device(argv[1]);
	env.gid_index = atoi(argv[2]);
	if (ibv_query_gid(env.ctx, 1, env.gid_index, &env.gid))
		die("ibv_query_gid");
	env.pd = ibv_alloc_pd(env.ctx);
	if (!env.pd)
		die("ibv_alloc_pd");
	env.local = aligned_alloc(4096, BUF_SIZE);
	env.target = aligned_alloc(4096, BUF_SIZE);
	env.plain = aligned_alloc(4096, BUF_SIZE);
	if (!env.local || !env.target || !env.plain)
		die("aligned_alloc");
	env.local_mr = reg(&env, env.local, remote);
	env.target_mr = reg(&env, env.target, remote);
	env.plain_mr = reg(&env, env.plain, IBV_ACCESS_LOCAL_WRITE);

	test_key_bytes(&env);
	test_remote_access(&env);
	test_refused(&env);
	test_flush(&env);
	test_rewrite(&env);
	test_still_works(&env);

	ibv_dereg_mr(env.plain_mr);
	ibv_dereg_mr(env.target_mr);
	ibv_dereg_mr(env.local_mr);
	ibv_dealloc_pd(env.pd);
	ibv_close_device(env.ctx);
	free(env.local);
	free(env.target);
	free(env.plain);
	printf("%s: %d failed check(s)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
