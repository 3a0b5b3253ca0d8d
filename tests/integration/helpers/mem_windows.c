// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mem_windows: memory windows of type 1 and type 2 on a real device, with
 * RC QP pairs connected to each other.  Side "b" owns a region registered
 * with local rights and MW_BIND only: a peer reaches it through windows.
 *
 *  - type 1 (ibv_bind_mw): WRITE and READ through the window land in and
 *    come from the window's range; the region's own rkey, a WRITE past
 *    the window's end and a right it does not grant are refused
 *    (IBV_WC_REM_ACCESS_ERR); the region cannot be deregistered while
 *    the window is bound (EBUSY); a zero-length bind unbinds it, after
 *    which neither its old nor its new rkey opens anything;
 *  - type 2 (IBV_WR_BIND_MW): WRITE and FETCH_ADD through the window; a
 *    QP other than the one it is bound to is refused; LOCAL_INV and a
 *    peer's SEND_WITH_INV (IBV_WC_WITH_INV, invalidated_rkey) close it;
 *    binding a bound window fails with IBV_WC_MW_BIND_ERR, as does a bind
 *    to a region registered without MW_BIND;
 *  - the provider refuses a type 1 window in ibv_post_send() and a type 2
 *    one in ibv_bind_mw(); after ibv_dealloc_mw() the region goes.
 *
 *   mem_windows DEVICE GID_INDEX
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "rc_loop.h"

#define REGION		65536
#define LOCAL		16384
#define QP_ACCESS	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_REMOTE_ATOMIC)

struct pair {
	struct ibv_cq *cqa, *cqb;
	struct ibv_qp *a, *b;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid;
static int gid_index;
static uint8_t *region, *local;
static struct ibv_mr *region_mr, *local_mr;

static struct ibv_qp *make_qp(struct ibv_cq *cq)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &attr);

	if (!qp)
		die("ibv_create_qp: %s", strerror(errno));
	return qp;
}

static void allow_remote(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_access_flags = QP_ACCESS };

	if (ibv_modify_qp(qp, &a, IBV_QP_ACCESS_FLAGS))
		die("RTS access flags: %s", strerror(errno));
}

static void pair_open(struct pair *p)
{
	p->cqa = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	p->cqb = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (!p->cqa || !p->cqb)
		die("ibv_create_cq: %s", strerror(errno));
	p->a = make_qp(p->cqa);
	p->b = make_qp(p->cqb);
	connect_qp(p->a, p->b->qp_num, gid_index, &gid);
	connect_qp(p->b, p->a->qp_num, gid_index, &gid);
	allow_remote(p->a);
	allow_remote(p->b);
}

static void pair_close(struct pair *p)
{
	if (ibv_destroy_qp(p->a) || ibv_destroy_qp(p->b) ||
	    ibv_destroy_cq(p->cqa) || ibv_destroy_cq(p->cqb))
		die("destroying a pair: %s", strerror(errno));
}

/* After an error completion both QPs are in error: start over. */
static void pair_reopen(struct pair *p)
{
	pair_close(p);
	pair_open(p);
}

/* The next completion on @cq, within 10 s. */
static struct ibv_wc next_wc(struct ibv_cq *cq, const char *what)
{
	time_t end = time(NULL) + 10;
	struct ibv_wc wc;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, &wc);
		if (n < 0)
			die("%s: ibv_poll_cq: %d", what, n);
		if (n)
			return wc;
	} while (time(NULL) < end);
	die("%s: no completion within 10 s", what);
	return wc;
}

static void expect_wc(struct ibv_cq *cq, enum ibv_wc_status status,
		      const char *what)
{
	struct ibv_wc wc = next_wc(cq, what);

	if (wc.status != status)
		die("%s: completion %s, expected %s", what,
		    ibv_wc_status_str(wc.status), ibv_wc_status_str(status));
}

/* One signalled RDMA WRITE or READ of @len bytes of local[0..] by a. */
static void rdma(struct pair *p, enum ibv_wr_opcode op, uint32_t rkey,
		 uint8_t *remote, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)local, .length = len,
		.lkey = local_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.opcode = op, .sg_list = &sge, .num_sge = 1,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)remote, .rkey = rkey },
	}, *bad;

	if (ibv_post_send(p->a, &wr, &bad))
		die("ibv_post_send: %s", strerror(errno));
}

static void rdma_ok(struct pair *p, enum ibv_wr_opcode op, uint32_t rkey,
		    uint8_t *remote, uint32_t len, const char *what)
{
	rdma(p, op, rkey, remote, len);
	expect_wc(p->cqa, IBV_WC_SUCCESS, what);
}

/* An access that must be refused; the pair is opened again after it. */
static void rdma_refused(struct pair *p, enum ibv_wr_opcode op,
			 uint32_t rkey, uint8_t *remote, uint32_t len,
			 const char *what)
{
	rdma(p, op, rkey, remote, len);
	expect_wc(p->cqa, IBV_WC_REM_ACCESS_ERR, what);
	pair_reopen(p);
}

static void fill(uint8_t *buf, uint32_t len, uint8_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(seed + i * 7);
}

static void check(const uint8_t *buf, uint32_t len, uint8_t seed,
		  const char *what)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		if (buf[i] != (uint8_t)(seed + i * 7))
			die("%s: byte %u is %#x", what, i, buf[i]);
}

static void bind1(struct pair *p, struct ibv_mw *mw, uint64_t off,
		  uint64_t len, unsigned int access)
{
	struct ibv_mw_bind bind = {
		.wr_id = 1, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = {
			.mr = region_mr, .addr = (uintptr_t)region + off,
			.length = len, .mw_access_flags = access,
		},
	};
	struct ibv_wc wc;

	if (ibv_bind_mw(p->b, mw, &bind))
		die("ibv_bind_mw: %s", strerror(errno));
	wc = next_wc(p->cqb, "type 1 bind");
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_BIND_MW)
		die("type 1 bind: %s, opcode %d",
		    ibv_wc_status_str(wc.status), wc.opcode);
}

static void type1(struct pair *p)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	uint32_t old;

	if (!mw)
		die("ibv_alloc_mw(type 1): %s", strerror(errno));
	bind1(p, mw, 4096, 8192, IBV_ACCESS_REMOTE_WRITE |
	      IBV_ACCESS_REMOTE_READ);

	fill(local, 8192, 1);
	memset(region, 0, REGION);
	rdma_ok(p, IBV_WR_RDMA_WRITE, mw->rkey, region + 4096, 8192,
		"type 1 WRITE");
	check(region + 4096, 8192, 1, "type 1 WRITE");
	if (region[4095] || region[4096 + 8192])
		die("type 1 WRITE wrote outside its range");
	memset(local, 0, LOCAL);
	rdma_ok(p, IBV_WR_RDMA_READ, mw->rkey, region + 4096, 8192,
		"type 1 READ");
	check(local, 8192, 1, "type 1 READ");

	if (ibv_dereg_mr(region_mr) != EBUSY)
		die("a region with a bound window was deregistered");
	rdma_refused(p, IBV_WR_RDMA_WRITE, region_mr->rkey, region, 64,
		     "the region's own rkey");
	rdma_refused(p, IBV_WR_RDMA_WRITE, mw->rkey, region + 4096 + 8192 - 16,
		     32, "a WRITE past the window");

	/* READ only: a WRITE is refused, a READ goes. */
	bind1(p, mw, 0, 4096, IBV_ACCESS_REMOTE_READ);
	rdma_refused(p, IBV_WR_RDMA_WRITE, mw->rkey, region, 64,
		     "a WRITE through a READ window");
	bind1(p, mw, 0, 4096, IBV_ACCESS_REMOTE_READ);
	rdma_ok(p, IBV_WR_RDMA_READ, mw->rkey, region, 4096, "READ window");

	old = mw->rkey;
	bind1(p, mw, 0, 0, 0);
	if (mw->rkey == old)
		die("an unbind kept the rkey");
	rdma_refused(p, IBV_WR_RDMA_READ, old, region, 64,
		     "the rkey of an unbound window");
	rdma_refused(p, IBV_WR_RDMA_READ, mw->rkey, region, 64,
		     "the new rkey of an unbound window");

	if (ibv_dealloc_mw(mw))
		die("ibv_dealloc_mw: %s", strerror(errno));
	printf("type 1: WRITE, READ, rights, range, EBUSY, unbind\n");
}

/* Post a type 2 bind on b; return its completion status. */
static enum ibv_wc_status bind2(struct pair *p, struct ibv_mw *mw,
				uint32_t rkey, struct ibv_mr *mr,
				unsigned int access)
{
	struct ibv_send_wr wr = {
		.wr_id = 2, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_mw = {
			.mw = mw, .rkey = rkey,
			.bind_info = {
				.mr = mr, .addr = (uintptr_t)region,
				.length = 16384, .mw_access_flags = access,
			},
		},
	}, *bad;
	struct ibv_wc wc;

	if (ibv_post_send(p->b, &wr, &bad))
		die("type 2 bind: ibv_post_send: %s", strerror(errno));
	wc = next_wc(p->cqb, "type 2 bind");
	if (wc.status == IBV_WC_SUCCESS && wc.opcode != IBV_WC_BIND_MW)
		die("type 2 bind: opcode %d", wc.opcode);
	return wc.status;
}

static void local_inv(struct pair *p, uint32_t rkey)
{
	struct ibv_send_wr wr = {
		.wr_id = 3, .opcode = IBV_WR_LOCAL_INV,
		.send_flags = IBV_SEND_SIGNALED, .invalidate_rkey = rkey,
	}, *bad;
	struct ibv_wc wc;

	if (ibv_post_send(p->b, &wr, &bad))
		die("LOCAL_INV: ibv_post_send: %s", strerror(errno));
	wc = next_wc(p->cqb, "LOCAL_INV");
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_LOCAL_INV)
		die("LOCAL_INV: %s, opcode %d", ibv_wc_status_str(wc.status),
		    wc.opcode);
}

/* a sends a SEND_WITH_INV of @rkey to b, which must report it. */
static void send_inv(struct pair *p, uint32_t rkey)
{
	struct ibv_sge rsge = {
		.addr = (uintptr_t)local + 8192, .length = 64,
		.lkey = local_mr->lkey,
	};
	struct ibv_recv_wr rwr = { .wr_id = 4, .sg_list = &rsge, .num_sge = 1 };
	struct ibv_sge sge = {
		.addr = (uintptr_t)local, .length = 64, .lkey = local_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 5, .opcode = IBV_WR_SEND_WITH_INV, .sg_list = &sge,
		.num_sge = 1, .send_flags = IBV_SEND_SIGNALED,
		.invalidate_rkey = rkey,
	}, *bad;
	struct ibv_recv_wr *rbad;
	struct ibv_wc wc;

	if (ibv_post_recv(p->b, &rwr, &rbad) || ibv_post_send(p->a, &wr, &bad))
		die("SEND_WITH_INV: %s", strerror(errno));
	expect_wc(p->cqa, IBV_WC_SUCCESS, "SEND_WITH_INV");
	wc = next_wc(p->cqb, "SEND_WITH_INV receive");
	if (wc.status != IBV_WC_SUCCESS || !(wc.wc_flags & IBV_WC_WITH_INV) ||
	    wc.invalidated_rkey != rkey)
		die("SEND_WITH_INV receive: %s, flags %#x, rkey %#x (sent %#x)",
		    ibv_wc_status_str(wc.status), wc.wc_flags,
		    wc.invalidated_rkey, rkey);
}

static void fetch_add(struct pair *p, uint32_t rkey, uint64_t *target)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)local, .length = 8, .lkey = local_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD, .sg_list = &sge,
		.num_sge = 1, .send_flags = IBV_SEND_SIGNALED,
		.wr.atomic = { .remote_addr = (uintptr_t)target,
			       .compare_add = 5, .rkey = rkey },
	}, *bad;

	*target = 37;
	if (ibv_post_send(p->a, &wr, &bad))
		die("FETCH_ADD: %s", strerror(errno));
	expect_wc(p->cqa, IBV_WC_SUCCESS, "type 2 FETCH_ADD");
	if (*target != 42 || *(uint64_t *)local != 37)
		die("type 2 FETCH_ADD: %llu, returned %llu",
		    (unsigned long long)*target,
		    (unsigned long long)*(uint64_t *)local);
}

/* A new type 2 window bound on p->b with every right; *@rkey its key. */
static struct ibv_mw *bound_type2(struct pair *p, uint32_t *rkey)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);

	if (!mw)
		die("ibv_alloc_mw(type 2): %s", strerror(errno));
	*rkey = ibv_inc_rkey(mw->rkey);
	if (bind2(p, mw, *rkey, region_mr, QP_ACCESS) != IBV_WC_SUCCESS)
		die("type 2 bind failed");
	return mw;
}

static void type2(struct pair *p)
{
	struct ibv_mr *nobind;
	struct pair other;
	uint32_t rkey;
	struct ibv_mw *mw = bound_type2(p, &rkey);

	fill(local, 4096, 9);
	rdma_ok(p, IBV_WR_RDMA_WRITE, rkey, region + 8192, 4096,
		"type 2 WRITE");
	check(region + 8192, 4096, 9, "type 2 WRITE");
	fetch_add(p, rkey, (uint64_t *)(region + 64));

	/* Bound to p->b: another QP of the PD is refused. */
	pair_open(&other);
	rdma_refused(&other, IBV_WR_RDMA_WRITE, rkey, region, 64,
		     "a type 2 window through another QP");
	pair_close(&other);

	/* A bound window is invalidated before it is bound again. */
	if (bind2(p, mw, ibv_inc_rkey(rkey), region_mr, QP_ACCESS) !=
	    IBV_WC_MW_BIND_ERR)
		die("a bound type 2 window was bound again");
	pair_reopen(p);
	/* Still bound to the destroyed b: no new QP opens it. */
	rdma_refused(p, IBV_WR_RDMA_WRITE, rkey, region, 64,
		     "a type 2 window bound to a destroyed QP");
	/* Any QP of the PD invalidates it locally. */
	local_inv(p, rkey);

	rkey = ibv_inc_rkey(rkey);
	nobind = ibv_reg_mr(pd, region, REGION, IBV_ACCESS_LOCAL_WRITE);
	if (!nobind)
		die("ibv_reg_mr: %s", strerror(errno));
	if (bind2(p, mw, rkey, nobind, QP_ACCESS) != IBV_WC_MW_BIND_ERR)
		die("a region without MW_BIND was bound");
	pair_reopen(p);
	if (ibv_dereg_mr(nobind))
		die("ibv_dereg_mr: %s", strerror(errno));
	printf("type 2: WRITE, FETCH_ADD, QP binding, bind errors\n");
	if (ibv_dealloc_mw(mw))
		die("ibv_dealloc_mw: %s", strerror(errno));
}

static void type2_invalidate(struct pair *p)
{
	uint32_t rkey;
	struct ibv_mw *mw = bound_type2(p, &rkey);

	rdma_ok(p, IBV_WR_RDMA_READ, rkey, region, 64, "type 2 READ");
	local_inv(p, rkey);
	rdma_refused(p, IBV_WR_RDMA_READ, rkey, region, 64,
		     "a locally invalidated window");

	rkey = ibv_inc_rkey(rkey);
	if (bind2(p, mw, rkey, region_mr, QP_ACCESS) != IBV_WC_SUCCESS)
		die("type 2 bind after LOCAL_INV failed");
	rdma_ok(p, IBV_WR_RDMA_READ, rkey, region, 64, "type 2 READ again");
	send_inv(p, rkey);
	rdma_refused(p, IBV_WR_RDMA_READ, rkey, region, 64,
		     "a remotely invalidated window");
	if (ibv_dealloc_mw(mw))
		die("ibv_dealloc_mw: %s", strerror(errno));
	printf("type 2: LOCAL_INV, SEND_WITH_INV\n");
}

/* The provider refuses each type where the other's verb is used. */
static void wrong_verbs(struct pair *p)
{
	struct ibv_mw *mw1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ibv_mw *mw2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_mw_bind bind = {
		.bind_info = { .mr = region_mr, .addr = (uintptr_t)region,
			       .length = 64,
			       .mw_access_flags = IBV_ACCESS_REMOTE_READ },
	};
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_BIND_MW,
		.bind_mw = { .mw = mw1, .rkey = 0,
			     .bind_info = bind.bind_info },
	}, *bad;

	if (!mw1 || !mw2)
		die("ibv_alloc_mw: %s", strerror(errno));
	if (ibv_post_send(p->b, &wr, &bad) != EINVAL)
		die("ibv_post_send bound a type 1 window");
	if (ibv_bind_mw(p->b, mw2, &bind) != EINVAL)
		die("ibv_bind_mw bound a type 2 window");
	if (ibv_dealloc_mw(mw1) || ibv_dealloc_mw(mw2))
		die("ibv_dealloc_mw: %s", strerror(errno));
}

int main(int argc, char **argv)
{
	struct ibv_device_attr attr;
	struct pair p;

	if (argc != 3)
		die("usage: mem_windows DEVICE GID_INDEX");
	gid_index = atoi(argv[2]);
	ctx = open_dev(argv[1]);
	if (ibv_query_gid(ctx, 1, gid_index, &gid) ||
	    ibv_query_device(ctx, &attr))
		die("ibv_query_gid/device: %s", strerror(errno));
	if (!(attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW) ||
	    !(attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B) ||
	    attr.max_mw <= 0)
		die("device caps %#x, max_mw %d: no memory windows",
		    attr.device_cap_flags, attr.max_mw);
	pd = ibv_alloc_pd(ctx);
	region = aligned_alloc(4096, REGION);
	local = aligned_alloc(4096, LOCAL);
	if (!pd || !region || !local)
		die("ibv_alloc_pd/aligned_alloc: %s", strerror(errno));
	region_mr = ibv_reg_mr(pd, region, REGION,
			       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	local_mr = ibv_reg_mr(pd, local, LOCAL, IBV_ACCESS_LOCAL_WRITE);
	if (!region_mr || !local_mr)
		die("ibv_reg_mr: %s", strerror(errno));
	pair_open(&p);

	type1(&p);
	type2(&p);
	type2_invalidate(&p);
	wrong_verbs(&p);

	pair_close(&p);
	if (ibv_dereg_mr(region_mr) || ibv_dereg_mr(local_mr) ||
	    ibv_dealloc_pd(pd) || ibv_close_device(ctx))
		die("teardown: %s", strerror(errno));
	free(region);
	free(local);
	printf("mem_windows: OK\n");
	return 0;
}
