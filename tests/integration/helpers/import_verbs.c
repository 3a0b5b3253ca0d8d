// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * import_verbs: ibv_import_device(), ibv_import_pd() and ibv_import_mr()
 * on a real device.
 *
 * A second context is imported from (a duplicate of) the first one's
 * command fd, as a process that received the fd would; the PD and an MR
 * are imported into it by handle.  A QP of the first context and a QP of
 * the imported one, connected to each other, exchange SENDs and RDMA
 * WRITEs through the original and the imported MRs (data checked).  The
 * imported MR must report the original's keys and length; a
 * handle that names no PD or MR is refused; unimporting leaves the
 * objects to the first context, which goes on using them after the
 * imported context is closed.
 *
 *   import_verbs DEVICE GID_INDEX
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "rc_loop.h"

#define MSG	8192

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &attr);

	if (!qp)
		die("ibv_create_qp: %s", strerror(errno));
	return qp;
}

static void wait_one(struct ibv_cq *cq)
{
	struct ibv_wc wc;
	long spins = 0;
	int n;

	while (!(n = ibv_poll_cq(cq, 1, &wc)))
		if (++spins > 200000000L)
			die("no completion");
	if (n < 0 || wc.status != IBV_WC_SUCCESS)
		die("completion: %s", n < 0 ? "poll error" :
		    ibv_wc_status_str(wc.status));
}

/* SEND from @src (lkey @slkey) on @sqp into @dst on @rqp. */
static void send_one(struct ibv_qp *sqp, struct ibv_cq *scq, uint8_t *src,
		     uint32_t slkey, struct ibv_qp *rqp, struct ibv_cq *rcq,
		     uint8_t *dst, uint32_t rlkey, int round)
{
	struct ibv_sge ss = { (uintptr_t)src, MSG, slkey };
	struct ibv_sge rs = { (uintptr_t)dst, MSG, rlkey };
	struct ibv_recv_wr rwr = { .sg_list = &rs, .num_sge = 1 }, *rbad;
	struct ibv_send_wr swr = {
		.sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *sbad;
	int j;

	for (j = 0; j < MSG; j++)
		src[j] = (uint8_t)(round * 13 + j);
	memset(dst, 0, MSG);
	if (ibv_post_recv(rqp, &rwr, &rbad) || ibv_post_send(sqp, &swr, &sbad))
		die("posting SEND %d: %s", round, strerror(errno));
	wait_one(scq);
	wait_one(rcq);
	if (memcmp(src, dst, MSG))
		die("SEND %d: data differs", round);
}

/* RDMA WRITE from @src on @qp into @dst (rkey @rkey). */
static void write_one(struct ibv_qp *qp, struct ibv_cq *cq, uint8_t *src,
		      uint32_t lkey, uint8_t *dst, uint32_t rkey, int round)
{
	struct ibv_sge ss = { (uintptr_t)src, MSG, lkey };
	struct ibv_send_wr wr = {
		.sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { (uintptr_t)dst, rkey },
	}, *bad;
	int j;

	for (j = 0; j < MSG; j++)
		src[j] = (uint8_t)(round * 29 + j * 3);
	memset(dst, 0, MSG);
	if (ibv_post_send(qp, &wr, &bad))
		die("posting WRITE %d: %s", round, strerror(errno));
	wait_one(cq);
	if (memcmp(src, dst, MSG))
		die("WRITE %d: data differs", round);
}

int main(int argc, char **argv)
{
	static uint8_t a_buf[2 * MSG], b_buf[2 * MSG];
	struct ibv_context *ctx, *ctx2;
	struct ibv_pd *pd, *pd2;
	struct ibv_mr *mra, *mrb, *mrb2;
	struct ibv_cq *cqa, *cqb;
	struct ibv_qp *qpa, *qpb;
	union ibv_gid gid;
	int gid_index, fd, r;

	if (argc != 3)
		die("usage: import_verbs DEVICE GID_INDEX");
	gid_index = atoi(argv[2]);
	ctx = open_dev(argv[1]);
	if (ibv_query_gid(ctx, 1, gid_index, &gid))
		die("ibv_query_gid: %s", strerror(errno));
	pd = ibv_alloc_pd(ctx);
	mra = pd ? ibv_reg_mr(pd, a_buf, sizeof(a_buf), IBV_ACCESS_LOCAL_WRITE |
			      IBV_ACCESS_REMOTE_WRITE) : NULL;
	mrb = pd ? ibv_reg_mr(pd, b_buf, sizeof(b_buf), IBV_ACCESS_LOCAL_WRITE |
			      IBV_ACCESS_REMOTE_WRITE) : NULL;
	if (!mra || !mrb)
		die("PD/MRs: %s", strerror(errno));

	/* Not a uverbs command fd: refused. */
	fd = open("/dev/null", O_RDWR);
	if (ibv_import_device(fd))
		die("ibv_import_device accepted /dev/null");
	close(fd);

	fd = dup(ctx->cmd_fd);
	ctx2 = ibv_import_device(fd);
	if (!ctx2)
		die("ibv_import_device: %s", strerror(errno));
	if (ctx2->device != ctx->device &&
	    strcmp(ibv_get_device_name(ctx2->device), argv[1]))
		die("imported context of another device");
	pd2 = ibv_import_pd(ctx2, pd->handle);
	if (!pd2)
		die("ibv_import_pd: %s", strerror(errno));
	if (pd2->handle != pd->handle || pd2->context != ctx2)
		die("imported PD: handle %u, context %p", pd2->handle,
		    (void *)pd2->context);
	errno = 0;
	if (ibv_import_pd(ctx2, pd->handle + 1000))
		die("ibv_import_pd accepted a handle of no PD");
	mrb2 = ibv_import_mr(pd2, mrb->handle);
	if (!mrb2)
		die("ibv_import_mr: %s", strerror(errno));
	/* libibverbs leaves addr NULL: it belongs to the exporter. */
	if (mrb2->lkey != mrb->lkey || mrb2->rkey != mrb->rkey ||
	    mrb2->length != mrb->length || mrb2->pd != pd2 ||
	    mrb2->handle != mrb->handle)
		die("imported MR: keys %#x/%#x length %zu, original %#x/%#x %zu",
		    mrb2->lkey, mrb2->rkey, mrb2->length,
		    mrb->lkey, mrb->rkey, mrb->length);
	if (ibv_import_mr(pd2, mrb->handle + 1000))
		die("ibv_import_mr accepted a handle of no MR");

	/* QP a in the first context, QP b in the imported one. */
	cqa = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	cqb = ibv_create_cq(ctx2, 64, NULL, NULL, 0);
	if (!cqa || !cqb)
		die("CQs: %s", strerror(errno));
	qpa = make_qp(pd, cqa);
	qpb = make_qp(pd2, cqb);
	connect_qp(qpa, qpb->qp_num, gid_index, &gid);
	connect_qp(qpb, qpa->qp_num, gid_index, &gid);
	for (r = 0; r < 16; r++) {
		send_one(qpa, cqa, a_buf, mra->lkey, qpb, cqb, b_buf,
			 mrb2->lkey, r);
		send_one(qpb, cqb, b_buf + MSG, mrb2->lkey, qpa, cqa, a_buf,
			 mra->lkey, r);
		write_one(qpb, cqb, b_buf, mrb2->lkey, a_buf + MSG, mra->rkey,
			  r);
		write_one(qpa, cqa, a_buf, mra->lkey, b_buf + MSG, mrb2->rkey,
			  r);
	}

	/* Unimported and closed: the first context keeps the objects. */
	if (ibv_destroy_qp(qpb) || ibv_destroy_cq(cqb))
		die("destroying the imported context's QP: %s", strerror(errno));
	ibv_unimport_mr(mrb2);
	ibv_unimport_pd(pd2);
	if (ibv_close_device(ctx2))
		die("closing the imported context: %s", strerror(errno));
	qpb = make_qp(pd, cqa);
	if (ibv_destroy_qp(qpb))
		die("destroy: %s", strerror(errno));
	if (ibv_dereg_mr(mrb) || ibv_dereg_mr(mra))
		die("the original MRs are gone: %s", strerror(errno));
	if (ibv_destroy_qp(qpa) || ibv_destroy_cq(cqa) || ibv_dealloc_pd(pd))
		die("cleanup: %s", strerror(errno));
	ibv_close_device(ctx);
	printf("import_verbs: OK: imported context, PD and MR; 16 rounds of SEND and WRITE checked\n");
	return 0;
}
