// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * parent_domain: ibv_alloc_td() and ibv_alloc_parent_domain() on a real
 * device, with the application's allocators.
 *
 *  - a CQ (ibv_create_cq_ex with the parent domain), an SRQ and two RC
 *    QPs connected to each other are created in a parent domain with a
 *    thread domain and counting allocators; each object's memory comes
 *    from the allocator with the provider's resource type and pd_context,
 *    and goes back to it when the object is destroyed;
 *  - SENDs through the SRQ and RDMA WRITEs between the two QPs carry
 *    checked data; MRs are registered through the parent domain;
 *  - a PD with a parent domain, a parent domain with objects and a thread
 *    domain with a parent domain refuse to go (EBUSY); a parent domain of
 *    a parent domain, an unknown comp_mask and allocators without free are
 *    refused; IBV_ALLOCATOR_USE_DEFAULT falls back to the provider's own
 *    memory and an allocator returning NULL fails the creation (ENOMEM).
 *
 *   parent_domain DEVICE GID_INDEX
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "rc_loop.h"

#define CTX_MAGIC	((void *)0x5eed)
#define MSG		4096
#define ROUNDS		64

enum alloc_mode { ALLOC_OWN, ALLOC_DEFAULT, ALLOC_FAIL };

static struct {
	enum alloc_mode mode;
	int allocs, frees, bad_ctx;
	uint64_t types[16];
} al;

static void *test_alloc(struct ibv_pd *pd, void *pd_context, size_t size,
			size_t alignment, uint64_t resource_type)
{
	void *p;

	(void)pd;
	if (pd_context != CTX_MAGIC)
		al.bad_ctx++;
	if (al.mode == ALLOC_DEFAULT)
		return IBV_ALLOCATOR_USE_DEFAULT;
	if (al.mode == ALLOC_FAIL)
		return NULL;
	if (posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *) :
			   alignment, size))
		return NULL;
	memset(p, 0xa5, size);	/* the provider must not rely on zeroes */
	if (al.allocs < 16)
		al.types[al.allocs] = resource_type;
	al.allocs++;
	return p;
}

static void test_free(struct ibv_pd *pd, void *pd_context, void *ptr,
		      uint64_t resource_type)
{
	(void)pd;
	(void)resource_type;
	if (pd_context != CTX_MAGIC)
		al.bad_ctx++;
	al.frees++;
	free(ptr);
}

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq,
			      struct ibv_srq *srq)
{
	struct ibv_qp_init_attr_ex attr = {
		.send_cq = cq, .recv_cq = cq, .srq = srq,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};

	return ibv_create_qp_ex(pd->context, &attr);
}

static void wait_wc(struct ibv_cq *cq, int want)
{
	struct ibv_wc wc[8];
	int got = 0, n, i, idle = 0;

	while (got < want) {
		n = ibv_poll_cq(cq, 8, wc);
		if (n < 0)
			die("ibv_poll_cq: %d", n);
		for (i = 0; i < n; i++)
			if (wc[i].status != IBV_WC_SUCCESS)
				die("completion: %s",
				    ibv_wc_status_str(wc[i].status));
		got += n;
		if (n)
			idle = 0;
		else if (++idle > 20000000)
			die("waited too long for completions (%d of %d)", got,
			    want);
	}
}

/* SENDs into the SRQ and WRITEs from QP a to QP b, data checked. */
static void traffic(struct ibv_pd *parent, struct ibv_cq *cq,
		    struct ibv_srq *srq, struct ibv_qp *a)
{
	static uint8_t src[MSG], dst[MSG], wdst[MSG];
	struct ibv_mr *smr = ibv_reg_mr(parent, src, MSG, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *dmr = ibv_reg_mr(parent, dst, MSG, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *wmr = ibv_reg_mr(parent, wdst, MSG,
					IBV_ACCESS_LOCAL_WRITE |
					IBV_ACCESS_REMOTE_WRITE);
	int r, j;

	if (!smr || !dmr || !wmr)
		die("ibv_reg_mr through the parent domain: %s", strerror(errno));
	if (smr->pd != parent)
		die("the MR does not name the parent domain");
	for (r = 0; r < ROUNDS; r++) {
		struct ibv_sge ss = { (uintptr_t)src, MSG, smr->lkey };
		struct ibv_sge ds = { (uintptr_t)dst, MSG, dmr->lkey };
		struct ibv_recv_wr rwr = { .sg_list = &ds, .num_sge = 1 };
		struct ibv_send_wr swr = {
			.sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED,
		};
		struct ibv_send_wr wwr = {
			.sg_list = &ss, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { (uintptr_t)wdst, wmr->rkey },
		};
		struct ibv_recv_wr *rbad;
		struct ibv_send_wr *sbad;

		for (j = 0; j < MSG; j++)
			src[j] = (uint8_t)(r * 7 + j);
		if (ibv_post_srq_recv(srq, &rwr, &rbad) ||
		    ibv_post_send(a, &swr, &sbad))
			die("posting SEND round %d: %s", r, strerror(errno));
		wait_wc(cq, 2);
		if (memcmp(src, dst, MSG))
			die("SEND round %d: data differs", r);
		if (ibv_post_send(a, &wwr, &sbad))
			die("posting WRITE round %d: %s", r, strerror(errno));
		wait_wc(cq, 1);
		if (memcmp(src, wdst, MSG))
			die("WRITE round %d: data differs", r);
	}
	ibv_dereg_mr(smr);
	ibv_dereg_mr(dmr);
	ibv_dereg_mr(wmr);
}

static struct ibv_pd *parent_of(struct ibv_context *ctx, struct ibv_pd *pd,
				struct ibv_td *td)
{
	struct ibv_parent_domain_init_attr attr = {
		.pd = pd, .td = td,
		.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			     IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
		.alloc = test_alloc, .free = test_free,
		.pd_context = CTX_MAGIC,
	};

	return ibv_alloc_parent_domain(ctx, &attr);
}

static void check_refusals(struct ibv_context *ctx, struct ibv_pd *pd,
			   struct ibv_pd *parent, struct ibv_td *td)
{
	struct ibv_parent_domain_init_attr attr = { .pd = parent };

	if (ibv_alloc_parent_domain(ctx, &attr) || errno != EINVAL)
		die("a parent domain of a parent domain: errno %d", errno);
	attr.pd = pd;
	attr.comp_mask = 1 << 7;
	if (ibv_alloc_parent_domain(ctx, &attr) || errno != EOPNOTSUPP)
		die("unknown comp_mask: errno %d", errno);
	attr.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS;
	attr.alloc = test_alloc;
	if (ibv_alloc_parent_domain(ctx, &attr) || errno != EINVAL)
		die("allocators without free: errno %d", errno);
	if (ibv_dealloc_pd(pd) != EBUSY)
		die("a PD with a parent domain was deallocated");
	if (ibv_dealloc_td(td) != EBUSY)
		die("a thread domain with a parent domain was deallocated");
}

/* USE_DEFAULT: provider memory; NULL: the creation fails with ENOMEM. */
static void check_alloc_modes(struct ibv_pd *parent, struct ibv_cq *cq)
{
	struct ibv_qp *qp;
	int allocs = al.allocs;

	al.mode = ALLOC_DEFAULT;
	qp = make_qp(parent, cq, NULL);
	if (!qp || ibv_destroy_qp(qp))
		die("QP with IBV_ALLOCATOR_USE_DEFAULT: %s", strerror(errno));
	if (al.allocs != allocs)
		die("USE_DEFAULT: the allocator's memory was used");
	al.mode = ALLOC_FAIL;
	errno = 0;
	qp = make_qp(parent, cq, NULL);
	if (qp || errno != ENOMEM)
		die("QP with a failing allocator: %p, errno %d", (void *)qp,
		    errno);
	al.mode = ALLOC_OWN;
}

int main(int argc, char **argv)
{
	struct ibv_cq_init_attr_ex cq_attr = { .cqe = 256 };
	struct ibv_td_init_attr td_attr = { 0 };
	struct ibv_srq_init_attr srq_attr = {
		.attr = { .max_wr = 128, .max_sge = 1 },
	};
	struct ibv_context *ctx;
	struct ibv_pd *pd, *parent;
	struct ibv_td *td;
	struct ibv_cq_ex *cqx;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_qp *a, *b;
	union ibv_gid gid;
	int gid_index;

	if (argc != 3)
		die("usage: parent_domain DEVICE GID_INDEX");
	gid_index = atoi(argv[2]);
	ctx = open_dev(argv[1]);
	if (ibv_query_gid(ctx, 1, gid_index, &gid))
		die("ibv_query_gid: %s", strerror(errno));
	pd = ibv_alloc_pd(ctx);
	td = ibv_alloc_td(ctx, &td_attr);
	if (!pd || !td)
		die("ibv_alloc_pd/ibv_alloc_td: %s", strerror(errno));
	parent = parent_of(ctx, pd, td);
	if (!parent)
		die("ibv_alloc_parent_domain: %s", strerror(errno));
	check_refusals(ctx, pd, parent, td);

	cq_attr.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD;
	cq_attr.parent_domain = parent;
	cqx = ibv_create_cq_ex(ctx, &cq_attr);
	if (!cqx)
		die("ibv_create_cq_ex in the parent domain: %s", strerror(errno));
	cq = ibv_cq_ex_to_cq(cqx);
	srq = ibv_create_srq(parent, &srq_attr);
	a = make_qp(parent, cq, srq);
	b = make_qp(parent, cq, srq);
	if (!srq || !a || !b)
		die("SRQ/QP in the parent domain: %s", strerror(errno));
	if (al.allocs != 4)
		die("%d allocations for a CQ, an SRQ and 2 QPs", al.allocs);
	/* CQ, SRQ, QP, QP: the types tell the kinds apart. */
	if (al.types[0] == al.types[1] || al.types[0] == al.types[2] ||
	    al.types[1] == al.types[2] || al.types[2] != al.types[3])
		die("resource types %#llx %#llx %#llx %#llx",
		    (unsigned long long)al.types[0],
		    (unsigned long long)al.types[1],
		    (unsigned long long)al.types[2],
		    (unsigned long long)al.types[3]);
	if (ibv_dealloc_pd(parent) != EBUSY)
		die("a parent domain with objects was deallocated");
	connect_qp(a, b->qp_num, gid_index, &gid);
	connect_qp(b, a->qp_num, gid_index, &gid);
	traffic(parent, cq, srq, a);
	check_alloc_modes(parent, cq);

	if (ibv_destroy_qp(a) || ibv_destroy_qp(b) || ibv_destroy_srq(srq) ||
	    ibv_destroy_cq(cq))
		die("destroying the objects: %s", strerror(errno));
	if (al.frees != al.allocs || al.bad_ctx)
		die("%d allocations, %d frees, %d calls with a wrong pd_context",
		    al.allocs, al.frees, al.bad_ctx);
	if (ibv_dealloc_pd(parent) || ibv_dealloc_td(td) || ibv_dealloc_pd(pd))
		die("deallocating the domains: %s", strerror(errno));
	ibv_close_device(ctx);
	printf("parent_domain: OK: %d allocations through the parent domain, %d SEND and WRITE rounds checked\n",
	       al.allocs, ROUNDS);
	return 0;
}
