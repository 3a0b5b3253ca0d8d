// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xrc: XRC on a real device, an XRC send QP connected to an XRC receive
 * QP of the same device.  The receive side has an XRC domain with two XRC
 * SRQs, each with its own PD and CQ, and a third SRQ in another domain.
 *
 *  - the device says IBV_DEVICE_XRC; ibv_get_srq_num() numbers the XRC
 *    SRQs and refuses a basic SRQ;
 *  - a SEND lands in the SRQ its work request names: its buffer, its CQ
 *    (the other SRQ's CQ stays empty), with the receive QP's number;
 *  - RDMA WRITE, READ and FETCH_ADD reach a region of the named SRQ's
 *    PD, and every byte is checked;
 *  - refused with an error completion, each on a pair of its own: a SEND
 *    to an SRQ number that does not exist (IBV_WC_REM_INV_REQ_ERR), one to
 *    the SRQ of another XRC domain (likewise), a WRITE with the key of the
 *    other SRQ's PD (IBV_WC_REM_ACCESS_ERR);
 *  - the provider refuses ibv_post_recv() on the send QP and
 *    ibv_post_send() on the receive QP.
 *
 *   xrc DEVICE GID_INDEX
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <fcntl.h>
#include <stdbool.h>
#include <time.h>

#include "rc_loop.h"

#define BUF		4096
#define ACCESS		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

/* One XRC SRQ with its PD, CQ and a registered buffer. */
struct target {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	uint32_t srqn;
	uint8_t *buf;
	struct ibv_mr *mr;
};

static struct ibv_context *ctx;
static union ibv_gid gid;
static int gid_index;
static struct ibv_pd *send_pd;
static struct ibv_cq *send_cq;
static uint8_t *local;
static struct ibv_mr *local_mr;

static struct ibv_xrcd *open_xrcd(void)
{
	struct ibv_xrcd_init_attr attr = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1, .oflags = O_CREAT,
	};
	struct ibv_xrcd *xrcd = ibv_open_xrcd(ctx, &attr);

	if (!xrcd)
		die("ibv_open_xrcd: %s", strerror(errno));
	return xrcd;
}

static void make_target(struct target *t, struct ibv_xrcd *xrcd)
{
	struct ibv_srq_init_attr_ex attr = {
		.attr = { .max_wr = 16, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
	};

	t->pd = ibv_alloc_pd(ctx);
	t->cq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	t->buf = calloc(1, BUF);
	if (!t->pd || !t->cq || !t->buf)
		die("target resources: %s", strerror(errno));
	t->mr = ibv_reg_mr(t->pd, t->buf, BUF, ACCESS);
	if (!t->mr)
		die("ibv_reg_mr: %s", strerror(errno));
	attr.pd = t->pd;
	attr.xrcd = xrcd;
	attr.cq = t->cq;
	t->srq = ibv_create_srq_ex(ctx, &attr);
	if (!t->srq)
		die("ibv_create_srq_ex(XRC): %s", strerror(errno));
	if (ibv_get_srq_num(t->srq, &t->srqn))
		die("ibv_get_srq_num: %s", strerror(errno));
}

static void post_srq_recv(struct target *t, uint64_t wr_id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)t->buf, .length = BUF, .lkey = t->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	if (ibv_post_srq_recv(t->srq, &wr, &bad))
		die("ibv_post_srq_recv: %s", strerror(errno));
}

static void modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
		   const char *what)
{
	if (ibv_modify_qp(qp, a, mask | IBV_QP_STATE))
		die("%s to %s: %s", qp->qp_type == IBV_QPT_XRC_SEND ?
		    "send QP" : "receive QP", what, strerror(errno));
}

/* RESET to RTS with the attributes each half takes (IBTA's table). */
static void connect_xrc(struct ibv_qp *qp, uint32_t dest)
{
	bool send = qp->qp_type == IBV_QPT_XRC_SEND;
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = ACCESS & ~IBV_ACCESS_LOCAL_WRITE,
	};

	modify(qp, &a, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
	       "INIT");
	rtr_attr(&a, dest, gid_index, &gid);
	modify(qp, &a, IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
	       IBV_QP_RQ_PSN | (send ? 0 : IBV_QP_MAX_DEST_RD_ATOMIC |
				IBV_QP_MIN_RNR_TIMER), "RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	modify(qp, &a, IBV_QP_TIMEOUT | IBV_QP_SQ_PSN |
	       (send ? IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		IBV_QP_MAX_QP_RD_ATOMIC : 0), "RTS");
}

/* An XRC send QP connected to an XRC receive QP of @xrcd. */
static void make_pair(struct ibv_xrcd *xrcd, struct ibv_qp **ini,
		      struct ibv_qp **tgt)
{
	struct ibv_qp_init_attr_ex send = {
		.send_cq = send_cq, .qp_type = IBV_QPT_XRC_SEND,
		.cap = { .max_send_wr = 16, .max_send_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = send_pd,
	};
	struct ibv_qp_init_attr_ex recv = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD, .xrcd = xrcd,
	};

	*tgt = ibv_create_qp_ex(ctx, &recv);
	if (!*tgt)
		die("ibv_create_qp_ex(XRC_RECV): %s", strerror(errno));
	*ini = ibv_create_qp_ex(ctx, &send);
	if (!*ini)
		die("ibv_create_qp_ex(XRC_SEND): %s", strerror(errno));
	connect_xrc(*tgt, (*ini)->qp_num);
	connect_xrc(*ini, (*tgt)->qp_num);
}

static void destroy_pair(struct ibv_qp *ini, struct ibv_qp *tgt)
{
	if (ibv_destroy_qp(ini) || ibv_destroy_qp(tgt))
		die("ibv_destroy_qp: %s", strerror(errno));
}

/* One completion of @cq within 20 s. */
static struct ibv_wc poll_one(struct ibv_cq *cq, const char *what)
{
	time_t end = time(NULL) + 20;
	struct ibv_wc wc;
	int n;

	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0 && time(NULL) < end)
		;
	if (n != 1)
		die("%s: no completion (%d)", what, n);
	return wc;
}

static void post(struct ibv_qp *qp, struct ibv_send_wr *wr, uint32_t srqn,
		 uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)local, .length = len, .lkey = local_mr->lkey,
	};
	struct ibv_send_wr *bad;

	wr->sg_list = &sge;
	wr->num_sge = 1;
	wr->send_flags = IBV_SEND_SIGNALED;
	wr->qp_type.xrc.remote_srqn = srqn;
	if (ibv_post_send(qp, wr, &bad))
		die("ibv_post_send(opcode %d): %s", wr->opcode, strerror(errno));
}

/* Post @wr and expect its completion with @status. */
static void run(struct ibv_qp *qp, struct ibv_send_wr *wr, uint32_t srqn,
		uint32_t len, enum ibv_wc_status status, const char *what)
{
	struct ibv_wc wc;

	post(qp, wr, srqn, len);
	wc = poll_one(send_cq, what);
	if (wc.status != status)
		die("%s: %s, want %s", what, ibv_wc_status_str(wc.status),
		    ibv_wc_status_str(status));
}

static void check_bytes(const uint8_t *p, uint8_t v, uint32_t len,
			const char *what)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		if (p[i] != v)
			die("%s: byte %u is 0x%02x, want 0x%02x", what, i, p[i],
			    v);
}

/* A SEND lands in the named SRQ and completes on its CQ only. */
static void send_to(struct ibv_qp *ini, struct ibv_qp *tgt, struct target *t,
		    struct target *other, uint8_t v)
{
	struct ibv_send_wr wr = { .wr_id = v, .opcode = IBV_WR_SEND };
	struct ibv_wc wc, none;

	post_srq_recv(t, 100 + v);
	memset(local, v, 1000);
	run(ini, &wr, t->srqn, 1000, IBV_WC_SUCCESS, "SEND");
	wc = poll_one(t->cq, "SEND's receive");
	if (wc.status != IBV_WC_SUCCESS || wc.wr_id != 100u + v ||
	    wc.byte_len != 1000 || wc.opcode != IBV_WC_RECV)
		die("receive: status %s wr_id %llu byte_len %u opcode %d",
		    ibv_wc_status_str(wc.status),
		    (unsigned long long)wc.wr_id, wc.byte_len, wc.opcode);
	if (wc.qp_num != tgt->qp_num)
		die("receive on QP %u, the receive QP is %u", wc.qp_num,
		    tgt->qp_num);
	check_bytes(t->buf, v, 1000, "SEND");
	if (ibv_poll_cq(other->cq, 1, &none) != 0)
		die("the other SRQ's CQ has a completion");
}

static void rdma_ops(struct ibv_qp *ini, struct target *t)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_RDMA_WRITE };
	uint64_t *word = (uint64_t *)(t->buf + 2048);

	memset(local, 0x5c, 512);
	wr.wr.rdma.remote_addr = (uintptr_t)t->buf + 1024;
	wr.wr.rdma.rkey = t->mr->rkey;
	run(ini, &wr, t->srqn, 512, IBV_WC_SUCCESS, "RDMA WRITE");
	check_bytes(t->buf + 1024, 0x5c, 512, "RDMA WRITE");

	memset(t->buf + 3072, 0xa7, 256);
	memset(local, 0, 256);
	wr.opcode = IBV_WR_RDMA_READ;
	wr.wr.rdma.remote_addr = (uintptr_t)t->buf + 3072;
	run(ini, &wr, t->srqn, 256, IBV_WC_SUCCESS, "RDMA READ");
	check_bytes(local, 0xa7, 256, "RDMA READ");

	*word = 40;
	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.wr.atomic.remote_addr = (uintptr_t)word;
	wr.wr.atomic.rkey = t->mr->rkey;
	wr.wr.atomic.compare_add = 2;
	run(ini, &wr, t->srqn, 8, IBV_WC_SUCCESS, "FETCH_ADD");
	if (*(uint64_t *)local != 40 || *word != 42)
		die("FETCH_ADD: returned %llu, now %llu",
		    (unsigned long long)*(uint64_t *)local,
		    (unsigned long long)*word);
}

/* What no XRC QP may do: each failure on a pair of its own. */
static void refusals(struct ibv_xrcd *xrcd, struct target *a,
		     struct target *b, struct target *foreign)
{
	struct ibv_send_wr send = { .opcode = IBV_WR_SEND };
	struct ibv_send_wr write = { .opcode = IBV_WR_RDMA_WRITE };
	struct ibv_qp *ini, *tgt;

	make_pair(xrcd, &ini, &tgt);
	run(ini, &send, 0xfffff, 16, IBV_WC_REM_INV_REQ_ERR,
	    "SEND to no SRQ");
	destroy_pair(ini, tgt);

	make_pair(xrcd, &ini, &tgt);
	post_srq_recv(foreign, 7);
	run(ini, &send, foreign->srqn, 16, IBV_WC_REM_INV_REQ_ERR,
	    "SEND to another domain's SRQ");
	destroy_pair(ini, tgt);

	make_pair(xrcd, &ini, &tgt);
	memset(b->buf, 0x77, 16);
	memset(local, 0x99, 16);
	write.wr.rdma.remote_addr = (uintptr_t)b->buf;
	write.wr.rdma.rkey = b->mr->rkey;
	run(ini, &write, a->srqn, 16, IBV_WC_REM_ACCESS_ERR,
	    "WRITE with another SRQ's key");
	check_bytes(b->buf, 0x77, 16, "refused WRITE");
	destroy_pair(ini, tgt);
}

static void free_target(struct target *t)
{
	if (ibv_destroy_srq(t->srq) || ibv_dereg_mr(t->mr) ||
	    ibv_destroy_cq(t->cq) || ibv_dealloc_pd(t->pd))
		die("target teardown: %s", strerror(errno));
	free(t->buf);
}

int main(int argc, char **argv)
{
	struct target a, b, foreign;
	struct ibv_srq_init_attr basic_attr = { .attr = { .max_wr = 4,
							  .max_sge = 1 } };
	struct ibv_device_attr dattr;
	struct ibv_xrcd *xrcd, *xrcd2;
	struct ibv_recv_wr rwr = { 0 }, *rbad;
	struct ibv_send_wr swr = { .opcode = IBV_WR_SEND }, *sbad;
	struct ibv_qp *ini, *tgt;
	struct ibv_srq *basic;
	uint32_t num;

	if (argc != 3)
		die("usage: xrc DEVICE GID_INDEX");
	ctx = open_dev(argv[1]);
	gid_index = atoi(argv[2]);
	if (ibv_query_gid(ctx, 1, gid_index, &gid))
		die("ibv_query_gid: %s", strerror(errno));
	if (ibv_query_device(ctx, &dattr))
		die("ibv_query_device: %s", strerror(errno));
	if (!(dattr.device_cap_flags & IBV_DEVICE_XRC))
		die("the device does not say IBV_DEVICE_XRC");

	send_pd = ibv_alloc_pd(ctx);
	send_cq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	local = calloc(1, BUF);
	if (!send_pd || !send_cq || !local)
		die("send resources: %s", strerror(errno));
	local_mr = ibv_reg_mr(send_pd, local, BUF, IBV_ACCESS_LOCAL_WRITE);
	if (!local_mr)
		die("ibv_reg_mr: %s", strerror(errno));

	xrcd = open_xrcd();
	xrcd2 = open_xrcd();
	make_target(&a, xrcd);
	make_target(&b, xrcd);
	make_target(&foreign, xrcd2);
	if (a.srqn == b.srqn)
		die("two XRC SRQs share number %u", a.srqn);
	basic = ibv_create_srq(a.pd, &basic_attr);
	if (!basic)
		die("ibv_create_srq: %s", strerror(errno));
	if (!ibv_get_srq_num(basic, &num))
		die("ibv_get_srq_num numbered a basic SRQ");
	ibv_destroy_srq(basic);

	make_pair(xrcd, &ini, &tgt);
	if (!ibv_post_recv(ini, &rwr, &rbad))
		die("ibv_post_recv on an XRC send QP succeeded");
	if (!ibv_post_send(tgt, &swr, &sbad))
		die("ibv_post_send on an XRC receive QP succeeded");
	send_to(ini, tgt, &a, &b, 0x11);
	send_to(ini, tgt, &b, &a, 0x22);
	send_to(ini, tgt, &a, &b, 0x33);
	rdma_ops(ini, &a);
	rdma_ops(ini, &b);
	destroy_pair(ini, tgt);

	refusals(xrcd, &a, &b, &foreign);

	free_target(&a);
	free_target(&b);
	free_target(&foreign);
	if (ibv_close_xrcd(xrcd) || ibv_close_xrcd(xrcd2))
		die("ibv_close_xrcd: %s", strerror(errno));
	ibv_dereg_mr(local_mr);
	ibv_destroy_cq(send_cq);
	ibv_dealloc_pd(send_pd);
	ibv_close_device(ctx);
	printf("xrc: OK\n");
	return 0;
}
