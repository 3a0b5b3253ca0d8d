// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) 2026 The virtio-stellar authors
 *
 * Unit tests of the provider's data path (datapath.c) against rings held
 * in ordinary memory.  The test plays the kernel: it reads the WQEs the
 * provider publishes, advances the consumer counters of send and receive
 * rings, and produces CQEs.  The doorbell is a stub that records the
 * producer counter it saw.  This program is linked without libibverbs,
 * so the data path provably makes no call into it.
 */
#include <endian.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "stellar.h"

/* ------------------------------------------------------------------ */
/* Fixtures                                                            */
/* ------------------------------------------------------------------ */

#define SQ_ENTRY_SIZE	128	/* 56-byte WQE + 4 SGEs, or 72 inline bytes */
#define RQ_ENTRY_SIZE	64	/* 16-byte WQE + 3 SGEs */
#define CQ_ENTRY_SIZE	64

static unsigned int doorbell_calls;
static uint32_t doorbell_saw_producer;
static int doorbell_result;

static int fake_doorbell(struct stellar_qp *qp)
{
	doorbell_calls++;
	doorbell_saw_producer = __atomic_load_n(&qp->sq.ring.hdr->producer,
						__ATOMIC_ACQUIRE);
	return doorbell_result;
}

/* A ring whose counters both start at start (to exercise wrap-around). */
static void ring_alloc(struct stellar_uring *ring, uint32_t num_entries,
		       uint32_t entry_size, uint32_t start, bool is_producer)
{
	size_t size = STELLAR_RING_HDR_SIZE + (size_t)num_entries * entry_size;
	struct stellar_ring *hdr;

	hdr = aligned_alloc(64, size);
	assert_non_null(hdr);
	memset(hdr, 0xa5, size);	/* stale data the provider must overwrite */
	memset(hdr, 0, STELLAR_RING_HDR_SIZE);
	hdr->producer = start;
	hdr->consumer = start;
	stellar_uring_attach(ring, hdr, size, num_entries, entry_size,
			     is_producer);
}

static void *ring_slot(const struct stellar_uring *ring, uint32_t index)
{
	return (uint8_t *)ring->hdr + STELLAR_RING_HDR_SIZE +
	       (size_t)(index & (ring->num_entries - 1)) * ring->entry_size;
}

static struct stellar_qp *qp_new(enum ibv_qp_type qp_type,
				 uint32_t num_entries, uint32_t start)
{
	struct stellar_qp *qp = calloc(1, sizeof(*qp));

	assert_non_null(qp);
	assert_int_equal(stellar_wq_init(&qp->sq, false), 0);
	assert_int_equal(stellar_wq_init(&qp->rq, false), 0);
	qp->vqp.qp.qp_type = qp_type;
	qp->vqp.qp.state = IBV_QPS_RTS;
	ring_alloc(&qp->sq.ring, num_entries, SQ_ENTRY_SIZE, start, true);
	ring_alloc(&qp->rq.ring, num_entries, RQ_ENTRY_SIZE, start, true);
	qp->sq.max_sge = 4;
	qp->sq.max_inline = 64;
	qp->rq.max_sge = 3;
	qp->ring_doorbell = fake_doorbell;
	stellar_qp_ex_set_ops(qp);
	doorbell_calls = 0;
	doorbell_saw_producer = 0;
	doorbell_result = 0;
	return qp;
}

static void qp_free(struct stellar_qp *qp)
{
	free(qp->sq.ring.hdr);
	free(qp->rq.ring.hdr);
	stellar_wq_destroy(&qp->sq);
	stellar_wq_destroy(&qp->rq);
	free(qp);
}

static uint32_t producer_of(const struct stellar_uring *ring)
{
	return __atomic_load_n(&ring->hdr->producer, __ATOMIC_ACQUIRE);
}

static uint32_t consumer_of(const struct stellar_uring *ring)
{
	return __atomic_load_n(&ring->hdr->consumer, __ATOMIC_ACQUIRE);
}

/* The kernel retired n entries of a ring the provider produces. */
static void kernel_consume(struct stellar_uring *ring, uint32_t n)
{
	__atomic_store_n(&ring->hdr->consumer, consumer_of(ring) + n,
			 __ATOMIC_RELEASE);
}

static const struct stellar_sge *wqe_sges(const struct stellar_sq_wqe *wqe)
{
	return (const struct stellar_sge *)(wqe + 1);
}

/* Asserts the spinlock is free (a leaked lock would hang the next user). */
static void assert_unlocked(struct stellar_lock *lock)
{
	assert_int_equal(pthread_spin_trylock(&lock->spin), 0);
	pthread_spin_unlock(&lock->spin);
}

/* ------------------------------------------------------------------ */
/* Receive queues                                                      */
/* ------------------------------------------------------------------ */

static void test_post_recv_encodes_wqes(void **state)
{
	struct stellar_qp *qp = qp_new(IBV_QPT_RC, 8, 0);
	struct ibv_sge sges[2] = {
		{ .addr = 0x1000, .length = 100, .lkey = 7 },
		{ .addr = 0x2000, .length = 200, .lkey = 8 },
	};
	struct ibv_recv_wr wr[2] = {
		{ .wr_id = 11, .sg_list = sges, .num_sge = 2, .next = &wr[1] },
		{ .wr_id = 12, .sg_list = NULL, .num_sge = 0 },
	};
	const struct stellar_rq_wqe *wqe;
	const struct stellar_sge *sge;
	struct ibv_recv_wr *bad = NULL;

	(void)state;
	assert_int_equal(stellar_post_recv(&qp->vqp.qp, wr, &bad), 0);
	assert_int_equal(producer_of(&qp->rq.ring), 2);

	wqe = ring_slot(&qp->rq.ring, 0);
	sge = (const struct stellar_sge *)(wqe + 1);
	assert_int_equal(wqe->wr_id, 11);
	assert_int_equal(wqe->num_sge, 2);
	assert_int_equal(wqe->reserved, 0);
	assert_int_equal(sge[0].addr, 0x1000);
	assert_int_equal(sge[0].length, 100);
	assert_int_equal(sge[0].lkey, 7);
	assert_int_equal(sge[1].addr, 0x2000);
	assert_int_equal(sge[1].length, 200);
	assert_int_equal(sge[1].lkey, 8);

	wqe = ring_slot(&qp->rq.ring, 1);
	assert_int_equal(wqe->wr_id, 12);
	assert_int_equal(wqe->num_sge, 0);

	assert_int_equal(doorbell_calls, 0);	/* receives need no doorbell */
	assert_unlocked(&qp->rq.lock);
	qp_free(qp);
}

static void test_post_recv_too_many_sges(void **state)
{
	struct stellar_qp *qp = qp_new(IBV_QPT_RC, 8, 0);
	struct ibv_sge sges[4] = {};
	struct ibv_recv_wr wr[3] = {
		{ .wr_id = 1, .sg_list = sges, .num_sge = 1, .next = &wr[1] },
		{ .wr_id = 2, .sg_list = sges, .num_sge = 4, .next = &wr[2] },
		{ .wr_id = 3, .sg_list = sges, .num_sge = 1 },
	};
	struct ibv_recv_wr *bad = NULL;

	(void)state;
	assert_int_equal(stellar_post_recv(&qp->vqp.qp, wr, &bad), EINVAL);
	assert_ptr_equal(bad, &wr[1]);
	/* The WR before the bad one is posted, nothing after it. */
	assert_int_equal(producer_of(&qp->rq.ring), 1);

	wr[1].num_sge = -1;
	assert_int_equal(stellar_post_recv(&qp->vqp.qp, &wr[1], &bad), EINVAL);
	assert_ptr_equal(bad, &wr[1]);
	assert_int_equal(producer_of(&qp->rq.ring), 1);
	assert_unlocked(&qp->rq.lock);
	qp_free(qp);
}

/*
 * In a thread domain a QP takes no lock: posting goes through while the
 * spinlock is held (it would spin for ever otherwise).
 */
static void test_thread_domain_takes_no_lock(void **state)
{
	struct stellar_qp *qp = qp_new(IBV_QPT_RC, 8, 0);
	struct ibv_recv_wr wr = { .wr_id = 5 };
	struct ibv_recv_wr *bad = NULL;

	(void)state;
	stellar_wq_destroy(&qp->rq);
	assert_int_equal(stellar_wq_init(&qp->rq, true), 0);
	assert_int_equal(pthread_spin_lock(&qp->rq.lock.spin), 0);
	assert_int_equal(stellar_post_recv(&qp->vqp.qp, &wr, &bad), 0);
	assert_int_equal(producer_of(&qp->rq.ring), 1);
	pthread_spin_unlock(&qp->rq.lock.spin);
	qp_free(qp);
}

static void test_post_recv_full_and_wrap(void **state)
{
	const uint32_t start = UINT32_MAX - 1;	/* counters wrap after 2 */
	struct stellar_qp *qp = qp_new(IBV_QPT_RC, 4, start);
	struct ibv_recv_wr wr[6];
	struct ibv_recv_wr *bad = NULL;
	const struct stellar_rq_wqe *wqe;
	int i;

	(void)state;
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 6; i++) {
		wr[i].wr_id = 100 + i;
		wr[i].next = i < 5 ? &wr[i + 1] : NULL;
	}

	/* Four fit, the fifth finds the ring full. */
	assert_int_equal(stellar_post_recv(&qp->vqp.qp, wr, &bad), ENOMEM);
	assert_ptr_equal(bad, &wr[4]);
	assert_int_equal(producer_of(&qp->rq.ring), start + 4);
	assert_int_equal(producer_of(&qp->rq.ring), 2);	/* wrapped */
	for (i = 0; i < 4; i++) {
		wqe = ring_slot(&qp->rq.ring, start + i);
		assert_int_equal(wqe->wr_id, 100 + i);
	}

	/* The kernel takes two; the remaining two WRs now fit. */
	kernel_consume(&qp->rq.ring, 2);
	assert_int_equal(stellar_post_recv(&qp->vqp.qp, &wr[4], &bad), 0);
	assert_int_equal(producer_of(&qp->rq.ring), start + 6);
	wqe = ring_slot(&qp->rq.ring, start + 4);	/* reuses slot 2 */
	assert_ptr_equal(wqe, ring_slot(&qp->rq.ring, 2));
	assert_int_equal(wqe->wr_id, 104);
	wqe = ring_slot(&qp->rq.ring, start + 5);
	assert_int_equal(wqe->wr_id, 105);

	wr[0].next = NULL;
	assert_int_equal(stellar_post_recv(&qp->vqp.qp, wr, &bad), ENOMEM);
	assert_ptr_equal(bad, &wr[0]);
	qp_free(qp);
}

static void test_post_recv_rejected(void **state)
{
	struct stellar_qp *qp = qp_new(IBV_QPT_RC, 4, 0);
	struct ibv_recv_wr wr = { .wr_id = 1 };
	struct ibv_recv_wr *bad = NULL;
	struct ibv_srq srq = {};

	(void)state;
	qp->vqp.qp.state = IBV_QPS_RESET;
	assert_int_equal(stellar_post_recv(&qp->vqp.qp, &wr, &bad), EINVAL);
	assert_ptr_equal(bad, &wr);

	qp->vqp.qp.state = IBV_QPS_INIT;	/* receives may be posted */
	assert_int_equal(stellar_post_recv(&qp->vqp.qp, &wr, &bad), 0);

	qp->vqp.qp.srq = &srq;			/* receives go to the SRQ */
	bad = NULL;
	assert_int_equal(stellar_post_recv(&qp->vqp.qp, &wr, &bad), EINVAL);
	assert_ptr_equal(bad, &wr);
	assert_int_equal(producer_of(&qp->rq.ring), 1);
	qp_free(qp);
}

static void test_post_srq_recv(void **state)
{
	struct stellar_srq *srq = calloc(1, sizeof(*srq));
	struct ibv_sge sge = { .addr = 0xabc, .length = 4096, .lkey = 3 };
	struct ibv_recv_wr wr[2] = {
		{ .wr_id = 5, .sg_list = &sge, .num_sge = 1, .next = &wr[1] },
		{ .wr_id = 6, .sg_list = &sge, .num_sge = 2 },
	};
	const struct stellar_rq_wqe *wqe;
	struct ibv_recv_wr *bad = NULL;

	(void)state;
	assert_non_null(srq);
	assert_int_equal(stellar_wq_init(&srq->rq, false), 0);
	ring_alloc(&srq->rq.ring, 4, RQ_ENTRY_SIZE, 0, true);
	srq->rq.max_sge = 1;

	assert_int_equal(stellar_post_srq_recv(&srq->vsrq.srq, wr, &bad),
			 EINVAL);
	assert_ptr_equal(bad, &wr[1]);
	assert_int_equal(producer_of(&srq->rq.ring), 1);
	wqe = ring_slot(&srq->rq.ring, 0);
	assert_int_equal(wqe->wr_id, 5);
	assert_int_equal(wqe->num_sge, 1);
	assert_int_equal(((const struct stellar_sge *)(wqe + 1))->addr, 0xabc);

	free(srq->rq.ring.hdr);
	stellar_wq_destroy(&srq->rq);
	free(srq);
}

/* ------------------------------------------------------------------ */
/* Send queue: ibv_post_send                                           */
/* ------------------------------------------------------------------ */

static void test_post_send_rc_opcodes(void **state)
{
	struct stellar_qp *qp = qp_new(IBV_QPT_RC, 8, 0);
	struct ibv_sge sges[2] = {
		{ .addr = 0x1000, .length = 16, .lkey = 1 },
		{ .addr = 0x2000, .length = 8, .lkey = 2 },
	};
	struct ibv_send_wr wr[5] = {};
	const struct stellar_sq_wqe *wqe;
	struct ibv_send_wr *bad = NULL;
	int i;

	(void)state;
	for (i = 0; i < 5; i++) {
		wr[i].wr_id = 50 + i;
		wr[i].sg_list = sges;
		wr[i].num_sge = 1;
		wr[i].next = i < 4 ? &wr[i + 1] : NULL;
	}
	wr[0].opcode = IBV_WR_SEND;
	wr[0].num_sge = 2;
	wr[0].send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED;
	wr[1].opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr[1].imm_data = htobe32(0x01020304);
	wr[1].wr.rdma.remote_addr = 0xdead0000;
	wr[1].wr.rdma.rkey = 0x99;
	wr[2].opcode = IBV_WR_RDMA_READ;
	wr[2].send_flags = IBV_SEND_FENCE;
	wr[2].wr.rdma.remote_addr = 0xbeef0000;
	wr[2].wr.rdma.rkey = 0x98;
	wr[3].opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr[3].sg_list = &sges[1];
	wr[3].wr.atomic.remote_addr = 0x8000;
	wr[3].wr.atomic.compare_add = 1;
	wr[3].wr.atomic.swap = 2;
	wr[3].wr.atomic.rkey = 0x97;
	wr[4].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr[4].sg_list = &sges[1];
	wr[4].wr.atomic.remote_addr = 0x8008;
	wr[4].wr.atomic.compare_add = 5;
	wr[4].wr.atomic.rkey = 0x96;

	assert_int_equal(stellar_post_send(&qp->vqp.qp, wr, &bad), 0);
	/* One doorbell, rung after all five WQEs were published. */
	assert_int_equal(doorbell_calls, 1);
	assert_int_equal(doorbell_saw_producer, 5);

	wqe = ring_slot(&qp->sq.ring, 0);
	assert_int_equal(wqe->wr_id, 50);
	assert_int_equal(wqe->opcode, IBV_WR_SEND);
	assert_int_equal(wqe->flags, STELLAR_WQE_SIGNALED | STELLAR_WQE_SOLICITED);
	assert_int_equal(wqe->num_sge, 2);
	assert_int_equal(wqe->inline_len, 0);
	assert_int_equal(wqe_sges(wqe)[0].addr, 0x1000);
	assert_int_equal(wqe_sges(wqe)[1].lkey, 2);

	wqe = ring_slot(&qp->sq.ring, 1);
	assert_int_equal(wqe->opcode, IBV_WR_RDMA_WRITE_WITH_IMM);
	assert_int_equal(wqe->imm_data, htobe32(0x01020304));
	assert_int_equal(wqe->u.rdma.remote_addr, 0xdead0000);
	assert_int_equal(wqe->u.rdma.rkey, 0x99);
	assert_int_equal(wqe->flags, 0);

	wqe = ring_slot(&qp->sq.ring, 2);
	assert_int_equal(wqe->opcode, IBV_WR_RDMA_READ);
	assert_int_equal(wqe->flags, STELLAR_WQE_FENCE);
	assert_int_equal(wqe->u.rdma.remote_addr, 0xbeef0000);
	assert_int_equal(wqe->imm_data, 0);

	wqe = ring_slot(&qp->sq.ring, 3);
	assert_int_equal(wqe->opcode, IBV_WR_ATOMIC_CMP_AND_SWP);
	assert_int_equal(wqe->u.atomic.remote_addr, 0x8000);
	assert_int_equal(wqe->u.atomic.compare_add, 1);
	assert_int_equal(wqe->u.atomic.swap, 2);
	assert_int_equal(wqe->u.atomic.rkey, 0x97);
	assert_int_equal(wqe_sges(wqe)[0].addr, 0x2000);

	wqe = ring_slot(&qp->sq.ring, 4);
	assert_int_equal(wqe->opcode, IBV_WR_ATOMIC_FETCH_AND_ADD);
	assert_int_equal(wqe->u.atomic.compare_add, 5);
	assert_int_equal(wqe->u.atomic.swap, 0);
	assert_unlocked(&qp->sq.lock);
	qp_free(qp);
}

static void test_post_send_inline(void **state)
{
	struct stellar_qp *qp = qp_new(IBV_QPT_RC, 8, 0);
	char part1[] = "hello, ", part2[] = "stellar";
	char big[65];
	struct ibv_sge sges[2] = {
		{ .addr = (uintptr_t)part1, .length = 7 },
		{ .addr = (uintptr_t)part2, .length = 7 },
	};
	struct ibv_sge big_sge = { .addr = (uintptr_t)big, .length = 65 };
	struct ibv_send_wr wr = {
		.wr_id = 9, .sg_list = sges, .num_sge = 2,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_INLINE,
	};
	const struct stellar_sq_wqe *wqe;
	struct ibv_send_wr *bad = NULL;

	(void)state;
	memset(big, 'x', sizeof(big));
	assert_int_equal(stellar_post_send(&qp->vqp.qp, &wr, &bad), 0);
	wqe = ring_slot(&qp->sq.ring, 0);
	assert_int_equal(wqe->flags, STELLAR_WQE_INLINE);
	assert_int_equal(wqe->inline_len, 14);
	assert_int_equal(wqe->num_sge, 0);
	assert_memory_equal(wqe + 1, "hello, stellar", 14);

	/* One byte more than max_inline. */
	wr.sg_list = &big_sge;
	wr.num_sge = 1;
	assert_int_equal(stellar_post_send(&qp->vqp.qp, &wr, &bad), EINVAL);
	assert_ptr_equal(bad, &wr);

	/* Exactly max_inline is fine. */
	big_sge.length = 64;
	assert_int_equal(stellar_post_send(&qp->vqp.qp, &wr, &bad), 0);
	wqe = ring_slot(&qp->sq.ring, 1);
	assert_int_equal(wqe->inline_len, 64);

	/* An RDMA READ cannot carry inline data. */
	wr.opcode = IBV_WR_RDMA_READ;
	big_sge.length = 8;
	assert_int_equal(stellar_post_send(&qp->vqp.qp, &wr, &bad), EINVAL);
	assert_int_equal(producer_of(&qp->sq.ring), 2);
	assert_int_equal(doorbell_calls, 2);
	qp_free(qp);
}

static void test_post_send_invalid(void **state)
{
	struct stellar_qp *qp = qp_new(IBV_QPT_RC, 2, 0);
	struct ibv_sge sges[5] = {};
	struct ibv_send_wr wr[2] = {
		{ .wr_id = 1, .opcode = IBV_WR_SEND, .sg_list = sges,
		  .num_sge = 1, .next = &wr[1] },
		{ .wr_id = 2, .opcode = IBV_WR_SEND, .sg_list = sges,
		  .num_sge = 5 },
	};
	struct ibv_send_wr *bad = NULL;

	(void)state;
	/* num_sge above max_sge: the first WR is posted and rung. */
	assert_int_equal(stellar_post_send(&qp->vqp.qp, wr, &bad), EINVAL);
	assert_ptr_equal(bad, &wr[1]);
	assert_int_equal(producer_of(&qp->sq.ring), 1);
	assert_int_equal(doorbell_calls, 1);

	/* Nothing posted: no doorbell. */
	wr[1].num_sge = -1;
	assert_int_equal(stellar_post_send(&qp->vqp.qp, &wr[1], &bad), EINVAL);
	wr[1].num_sge = 1;
	wr[1].opcode = IBV_WR_BIND_MW;
	assert_int_equal(stellar_post_send(&qp->vqp.qp, &wr[1], &bad), EINVAL);
	wr[1].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;	/* 0-byte SGE */
	wr[1].wr.atomic.remote_addr = 0x1000;
	assert_int_equal(stellar_post_send(&qp->vqp.qp, &wr[1], &bad), EINVAL);
	sges[0].length = 8;
	wr[1].wr.atomic.remote_addr = 0x1004;		/* misaligned */
	assert_int_equal(stellar_post_send(&qp->vqp.qp, &wr[1], &bad), EINVAL);
	assert_int_equal(doorbell_calls, 1);

	/* Not ready to send. */
	wr[1].opcode = IBV_WR_SEND;
	qp->vqp.qp.state = IBV_QPS_RTR;
	assert_int_equal(stellar_post_send(&qp->vqp.qp, &wr[1], &bad), EINVAL);
	assert_ptr_equal(bad, &wr[1]);
	qp->vqp.qp.state = IBV_QPS_RTS;

	/* Ring of two: second fits, third is ENOMEM until the kernel retires. */
	assert_int_equal(stellar_post_send(&qp->vqp.qp, &wr[1], &bad), 0);
	assert_int_equal(stellar_post_send(&qp->vqp.qp, &wr[1], &bad), ENOMEM);
	assert_ptr_equal(bad, &wr[1]);
	kernel_consume(&qp->sq.ring, 1);
	assert_int_equal(stellar_post_send(&qp->vqp.qp, &wr[1], &bad), 0);
	assert_int_equal(producer_of(&qp->sq.ring), 3);
	assert_unlocked(&qp->sq.lock);
	qp_free(qp);
}

static void test_post_send_ud(void **state)
{
	struct stellar_qp *qp = qp_new(IBV_QPT_UD, 4, 0);
	struct stellar_ah ah = { .ah_handle = 77 };
	struct ibv_sge sge = { .addr = 0x10, .length = 32, .lkey = 4 };
	struct ibv_send_wr wr = {
		.wr_id = 3, .opcode = IBV_WR_SEND_WITH_IMM, .sg_list = &sge,
		.num_sge = 1, .imm_data = htobe32(42),
	};
	const struct stellar_sq_wqe *wqe;
	struct ibv_send_wr *bad = NULL;

	(void)state;
	wr.wr.ud.ah = &ah.ibv_ah;
	wr.wr.ud.remote_qpn = 0x123456;
	wr.wr.ud.remote_qkey = 0x11111111;
	qp->sq_sig_all = true;
	assert_int_equal(stellar_post_send(&qp->vqp.qp, &wr, &bad), 0);
	wqe = ring_slot(&qp->sq.ring, 0);
	assert_int_equal(wqe->u.ud.ah_handle, 77);
	assert_int_equal(wqe->u.ud.remote_qpn, 0x123456);
	assert_int_equal(wqe->u.ud.remote_qkey, 0x11111111);
	assert_int_equal(wqe->imm_data, htobe32(42));
	assert_int_equal(wqe->flags, STELLAR_WQE_SIGNALED);	/* sq_sig_all */

	wr.opcode = IBV_WR_RDMA_WRITE;		/* not on UD */
	assert_int_equal(stellar_post_send(&qp->vqp.qp, &wr, &bad), EINVAL);
	wr.opcode = IBV_WR_SEND;
	wr.wr.ud.ah = NULL;
	assert_int_equal(stellar_post_send(&qp->vqp.qp, &wr, &bad), EINVAL);
	assert_int_equal(producer_of(&qp->sq.ring), 1);
	qp_free(qp);
}

static void test_post_send_doorbell_error(void **state)
{
	struct stellar_qp *qp = qp_new(IBV_QPT_RC, 4, 0);
	struct ibv_send_wr wr[2] = {
		{ .wr_id = 1, .opcode = IBV_WR_SEND, .next = &wr[1] },
		{ .wr_id = 2, .opcode = IBV_WR_SEND },
	};
	struct ibv_send_wr *bad = NULL;

	(void)state;
	doorbell_result = EIO;
	assert_int_equal(stellar_post_send(&qp->vqp.qp, wr, &bad), EIO);
	assert_ptr_equal(bad, &wr[0]);
	assert_int_equal(doorbell_calls, 1);
	assert_unlocked(&qp->sq.lock);
	qp_free(qp);
}

static void test_post_send_polled_ring(void **state)
{
	struct stellar_qp *qp = qp_new(IBV_QPT_RC, 4, 0);
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;
	struct ibv_send_wr wr = { .wr_id = 1, .opcode = IBV_WR_SEND };
	struct ibv_send_wr *bad = NULL;

	(void)state;
	/* The kernel's poller watches the ring: no doorbell system call. */
	qp->sq.ring.hdr->flags = STELLAR_RING_POLLED;
	assert_int_equal(stellar_post_send(&qp->vqp.qp, &wr, &bad), 0);
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	assert_int_equal(ibv_wr_complete(qpx), 0);
	assert_int_equal(producer_of(&qp->sq.ring), 2);
	assert_int_equal(doorbell_calls, 0);

	/* The poller went to sleep: ring again. */
	qp->sq.ring.hdr->flags = 0;
	assert_int_equal(stellar_post_send(&qp->vqp.qp, &wr, &bad), 0);
	assert_int_equal(doorbell_calls, 1);
	assert_int_equal(doorbell_saw_producer, 3);
	qp_free(qp);
}

static void test_send_with_inv(void **state)
{
	struct stellar_qp *qp = qp_new(IBV_QPT_RC, 4, 0);
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;
	struct ibv_send_wr wr = {
		.wr_id = 1, .opcode = IBV_WR_SEND_WITH_INV,
		.invalidate_rkey = 0x12345678,
	};
	const struct stellar_sq_wqe *wqe;
	struct ibv_send_wr *bad = NULL;

	(void)state;
	assert_int_equal(stellar_post_send(&qp->vqp.qp, &wr, &bad), 0);
	ibv_wr_start(qpx);
	ibv_wr_send_inv(qpx, 0x9abcdef0);
	assert_int_equal(ibv_wr_complete(qpx), 0);

	/* Carried big endian in imm_data, as the kernel reads it. */
	wqe = ring_slot(&qp->sq.ring, 0);
	assert_int_equal(wqe->opcode, IBV_WR_SEND_WITH_INV);
	assert_int_equal(wqe->imm_data, htobe32(0x12345678));
	wqe = ring_slot(&qp->sq.ring, 1);
	assert_int_equal(wqe->opcode, IBV_WR_SEND_WITH_INV);
	assert_int_equal(wqe->imm_data, htobe32(0x9abcdef0));

	qp->vqp.qp.qp_type = IBV_QPT_UC;	/* RC only */
	assert_int_equal(stellar_post_send(&qp->vqp.qp, &wr, &bad), EINVAL);
	qp_free(qp);
}

static void assert_bind_wqe(const struct stellar_sq_wqe *wqe, uint32_t mw_rkey,
			    uint32_t new_rkey, uint64_t length)
{
	assert_int_equal(wqe->opcode, IBV_WR_BIND_MW);
	assert_int_equal(wqe->num_sge, 0);
	assert_int_equal(wqe->u.bind.mw_rkey, mw_rkey);
	assert_int_equal(wqe->u.bind.new_rkey, new_rkey);
	assert_int_equal(wqe->u.bind.addr, 0x10000);
	assert_int_equal(wqe->u.bind.length, length);
	assert_int_equal(wqe->u.bind.mr_lkey, 0x3400);
	assert_int_equal(wqe->u.bind.access, IBV_ACCESS_REMOTE_READ);
}

/* Window binds and LOCAL_INV through every posting call. */
static void test_mem_windows(void **state)
{
	struct stellar_qp *qp = qp_new(IBV_QPT_RC, 8, 0);
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;
	struct ibv_mr mr = { .lkey = 0x3400 };
	struct ibv_mw mw2 = {
		.context = qp->vqp.qp.context, .rkey = 0x1200,
		.type = IBV_MW_TYPE_2,
	};
	struct ibv_mw mw1 = mw2;
	struct ibv_mw_bind_info info = {
		.mr = &mr, .addr = 0x10000, .length = 4096,
		.mw_access_flags = IBV_ACCESS_REMOTE_READ,
	};
	struct ibv_send_wr wr = {
		.wr_id = 1, .opcode = IBV_WR_BIND_MW, .num_sge = 3,
		.bind_mw = { .mw = &mw2, .rkey = 0x1201, .bind_info = info },
	};
	struct ibv_send_wr inv = {
		.wr_id = 2, .opcode = IBV_WR_LOCAL_INV,
		.invalidate_rkey = 0x1201,
	};
	const struct stellar_sq_wqe *wqe;
	struct ibv_send_wr *bad = NULL;

	(void)state;
	mw1.type = IBV_MW_TYPE_1;
	assert_true(stellar_qp_send_ops(IBV_QPT_UC) & IBV_QP_EX_WITH_BIND_MW);
	assert_false(stellar_qp_send_ops(IBV_QPT_UD) & IBV_QP_EX_WITH_LOCAL_INV);
	/* A bind's num_sge is not a gather list. */
	assert_int_equal(stellar_post_send(&qp->vqp.qp, &wr, &bad), 0);
	assert_bind_wqe(ring_slot(&qp->sq.ring, 0), 0x1200, 0x1201, 4096);
	assert_int_equal(stellar_post_send(&qp->vqp.qp, &inv, &bad), 0);
	wqe = ring_slot(&qp->sq.ring, 1);
	assert_int_equal(wqe->opcode, IBV_WR_LOCAL_INV);
	assert_int_equal(wqe->imm_data, htobe32(0x1201));

	/* ibv_post_send binds type 2 windows, ibv_bind_mw type 1 ones. */
	wr.bind_mw.mw = &mw1;
	assert_int_equal(stellar_post_send(&qp->vqp.qp, &wr, &bad), EINVAL);
	assert_int_equal(stellar_post_bind(&qp->vqp.qp, &wr, &bad), 0);
	wr.bind_mw.bind_info.length = 0;	/* type 1 unbind */
	assert_int_equal(stellar_post_bind(&qp->vqp.qp, &wr, &bad), 0);
	assert_bind_wqe(ring_slot(&qp->sq.ring, 3), 0x1200, 0x1201, 0);
	wr.bind_mw.mw = &mw2;			/* type 2: no unbind */
	assert_int_equal(stellar_post_send(&qp->vqp.qp, &wr, &bad), EINVAL);
	wr.bind_mw.bind_info = info;
	wr.bind_mw.bind_info.mw_access_flags |= IBV_ACCESS_ZERO_BASED;
	assert_int_equal(stellar_post_send(&qp->vqp.qp, &wr, &bad), EINVAL);
	wr.bind_mw.bind_info = info;
	wr.bind_mw.bind_info.mr = NULL;
	assert_int_equal(stellar_post_send(&qp->vqp.qp, &wr, &bad), EINVAL);

	ibv_wr_start(qpx);
	qpx->wr_id = 5;
	ibv_wr_bind_mw(qpx, &mw2, 0x1202, &info);
	ibv_wr_local_inv(qpx, 0x1202);
	assert_int_equal(ibv_wr_complete(qpx), 0);
	assert_bind_wqe(ring_slot(&qp->sq.ring, 4), 0x1200, 0x1202, 4096);
	wqe = ring_slot(&qp->sq.ring, 5);
	assert_int_equal(wqe->imm_data, htobe32(0x1202));

	ibv_wr_start(qpx);
	ibv_wr_bind_mw(qpx, &mw1, 0x1202, &info);	/* type 1 */
	assert_int_equal(ibv_wr_complete(qpx), EINVAL);
	ibv_wr_start(qpx);
	ibv_wr_local_inv(qpx, 0x1202);
	ibv_wr_set_sge(qpx, 1, 0x2000, 4);	/* carries no data */
	assert_int_equal(ibv_wr_complete(qpx), EINVAL);
	assert_int_equal(producer_of(&qp->sq.ring), 6);

	qp->vqp.qp.qp_type = IBV_QPT_UD;	/* RC and UC only */
	assert_int_equal(stellar_post_send(&qp->vqp.qp, &inv, &bad), EINVAL);
	qp_free(qp);
}

/* ------------------------------------------------------------------ */
/* Send queue: ibv_wr_*                                                */
/* ------------------------------------------------------------------ */

static void test_wr_batch(void **state)
{
	struct stellar_qp *qp = qp_new(IBV_QPT_RC, 4, UINT32_MAX);
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;
	struct ibv_sge list[2] = {
		{ .addr = 0x100, .length = 8, .lkey = 1 },
		{ .addr = 0x200, .length = 8, .lkey = 2 },
	};
	struct ibv_data_buf bufs[2] = {
		{ .addr = "ab", .length = 2 }, { .addr = "cd", .length = 2 },
	};
	const struct stellar_sq_wqe *wqe;

	(void)state;
	ibv_wr_start(qpx);
	qpx->wr_id = 1;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, 9, 0x5000, 100);
	qpx->wr_id = 2;
	qpx->wr_flags = IBV_SEND_INLINE;
	ibv_wr_rdma_write_imm(qpx, 0x44, 0x7000, htobe32(7));
	ibv_wr_set_inline_data(qpx, "hello", 5);
	qpx->wr_id = 3;
	qpx->wr_flags = 0;
	ibv_wr_atomic_cmp_swp(qpx, 0x45, 0x9000, 10, 20);
	ibv_wr_set_sge_list(qpx, 1, list);
	qpx->wr_id = 4;
	ibv_wr_send_imm(qpx, htobe32(8));
	ibv_wr_set_inline_data_list(qpx, 2, bufs);
	/* Nothing is visible to the kernel before wr_complete. */
	assert_int_equal(producer_of(&qp->sq.ring), UINT32_MAX);
	assert_int_equal(ibv_wr_complete(qpx), 0);
	assert_int_equal(producer_of(&qp->sq.ring), UINT32_MAX + 4U);
	assert_int_equal(doorbell_calls, 1);
	assert_int_equal(doorbell_saw_producer, 3);

	wqe = ring_slot(&qp->sq.ring, UINT32_MAX);
	assert_int_equal(wqe->wr_id, 1);
	assert_int_equal(wqe->opcode, IBV_WR_SEND);
	assert_int_equal(wqe->flags, STELLAR_WQE_SIGNALED);
	assert_int_equal(wqe->num_sge, 1);
	assert_int_equal(wqe_sges(wqe)[0].addr, 0x5000);
	assert_int_equal(wqe_sges(wqe)[0].length, 100);
	assert_int_equal(wqe_sges(wqe)[0].lkey, 9);

	wqe = ring_slot(&qp->sq.ring, 0);
	assert_int_equal(wqe->wr_id, 2);
	assert_int_equal(wqe->opcode, IBV_WR_RDMA_WRITE_WITH_IMM);
	assert_int_equal(wqe->flags, STELLAR_WQE_INLINE);
	assert_int_equal(wqe->u.rdma.rkey, 0x44);
	assert_int_equal(wqe->u.rdma.remote_addr, 0x7000);
	assert_int_equal(wqe->imm_data, htobe32(7));
	assert_int_equal(wqe->inline_len, 5);
	assert_memory_equal(wqe + 1, "hello", 5);

	wqe = ring_slot(&qp->sq.ring, 1);
	assert_int_equal(wqe->opcode, IBV_WR_ATOMIC_CMP_AND_SWP);
	assert_int_equal(wqe->u.atomic.compare_add, 10);
	assert_int_equal(wqe->u.atomic.swap, 20);
	assert_int_equal(wqe->u.atomic.rkey, 0x45);
	assert_int_equal(wqe_sges(wqe)[0].lkey, 1);

	wqe = ring_slot(&qp->sq.ring, 2);
	assert_int_equal(wqe->opcode, IBV_WR_SEND_WITH_IMM);
	assert_int_equal(wqe->inline_len, 4);
	assert_memory_equal(wqe + 1, "abcd", 4);
	assert_unlocked(&qp->sq.lock);
	qp_free(qp);
}

/* Runs one wr_start..wr_complete batch that must fail with err. */
static void expect_batch_error(struct stellar_qp *qp, int err)
{
	uint32_t before = producer_of(&qp->sq.ring);
	unsigned int calls = doorbell_calls;

	assert_int_equal(ibv_wr_complete(&qp->vqp.qp_ex), err);
	assert_int_equal(producer_of(&qp->sq.ring), before);
	assert_int_equal(qp->sq.ring.head, before);	/* batch dropped */
	assert_int_equal(doorbell_calls, calls);
	assert_unlocked(&qp->sq.lock);
}

/*
 * ATOMIC WRITE: the 8 bytes travel in the WQE, from ibv_wr_atomic_write()
 * or from ibv_post_send()'s single 8-byte SGE; anything else is refused.
 */
static void test_atomic_write(void **state)
{
	struct stellar_qp *qp = qp_new(IBV_QPT_RC, 8, 0);
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;
	uint64_t value = 0x0102030405060708ULL, got;
	struct ibv_sge sge = { .addr = (uintptr_t)&value, .length = 8 };
	struct ibv_send_wr wr = {
		.wr_id = 7, .opcode = IBV_WR_ATOMIC_WRITE, .sg_list = &sge,
		.num_sge = 1,
		.wr.rdma = { .remote_addr = 0x9000, .rkey = 0x55 },
	};
	const struct stellar_sq_wqe *wqe;
	struct ibv_send_wr *bad = NULL;

	(void)state;
	assert_true(stellar_qp_send_ops(IBV_QPT_RC) &
		    IBV_QP_EX_WITH_ATOMIC_WRITE);
	assert_false(stellar_qp_send_ops(IBV_QPT_UC) &
		     IBV_QP_EX_WITH_ATOMIC_WRITE);
	assert_int_equal(stellar_post_send(&qp->vqp.qp, &wr, &bad), 0);
	wqe = ring_slot(&qp->sq.ring, 0);
	assert_int_equal(wqe->opcode, STELLAR_WR_ATOMIC_WRITE);
	assert_int_equal(wqe->num_sge, 0);
	assert_int_equal(wqe->u.atomic_write.remote_addr, 0x9000);
	assert_int_equal(wqe->u.atomic_write.rkey, 0x55);
	memcpy(&got, &wqe->u.atomic_write.value, 8);
	assert_int_equal(got, value);

	ibv_wr_start(qpx);
	qpx->wr_id = 8;
	ibv_wr_atomic_write(qpx, 0x56, 0xa000, &value);
	assert_int_equal(ibv_wr_complete(qpx), 0);
	wqe = ring_slot(&qp->sq.ring, 1);
	assert_int_equal(wqe->opcode, STELLAR_WR_ATOMIC_WRITE);
	assert_int_equal(wqe->wr_id, 8);
	assert_int_equal(wqe->u.atomic_write.rkey, 0x56);
	assert_memory_equal(&wqe->u.atomic_write.value, &value, 8);

	/* Misaligned, or not exactly one 8-byte SGE. */
	wr.wr.rdma.remote_addr = 0x9004;
	assert_int_equal(stellar_post_send(&qp->vqp.qp, &wr, &bad), EINVAL);
	wr.wr.rdma.remote_addr = 0x9000;
	sge.length = 4;
	assert_int_equal(stellar_post_send(&qp->vqp.qp, &wr, &bad), EINVAL);
	ibv_wr_start(qpx);
	ibv_wr_atomic_write(qpx, 0x56, 0xa001, &value);
	expect_batch_error(qp, EINVAL);
	qp_free(qp);
}

static void test_wr_errors(void **state)
{
	struct stellar_qp *qp = qp_new(IBV_QPT_RC, 2, 0);
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;
	struct ibv_sge list[5] = {};
	char big[65] = {};

	(void)state;
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_set_sge_list(qpx, 5, list);	/* max_sge is 4 */
	expect_batch_error(qp, EINVAL);

	ibv_wr_start(qpx);
	ibv_wr_set_sge(qpx, 1, 2, 3);		/* no wr_<opcode> yet */
	expect_batch_error(qp, EINVAL);

	ibv_wr_start(qpx);
	ibv_wr_rdma_write(qpx, 1, 0);
	ibv_wr_set_inline_data(qpx, big, sizeof(big));
	expect_batch_error(qp, EINVAL);

	ibv_wr_start(qpx);
	ibv_wr_rdma_read(qpx, 1, 0);
	ibv_wr_set_inline_data(qpx, big, 4);	/* READ carries no data */
	expect_batch_error(qp, EINVAL);

	ibv_wr_start(qpx);
	ibv_wr_atomic_fetch_add(qpx, 1, 0x1000, 1);
	ibv_wr_set_sge(qpx, 1, 0x2000, 4);	/* atomics need 8 bytes */
	expect_batch_error(qp, EINVAL);

	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_send(qpx);
	ibv_wr_send(qpx);			/* ring holds two */
	expect_batch_error(qp, ENOMEM);

	ibv_wr_start(qpx);
	ibv_wr_set_xrc_srqn(qpx, 5);		/* no XRC */
	expect_batch_error(qp, EOPNOTSUPP);

	ibv_wr_start(qpx);
	qpx->wr_flags = 1U << 7;		/* not a stellar send flag */
	ibv_wr_send(qpx);
	expect_batch_error(qp, EINVAL);
	qpx->wr_flags = 0;

	qp->vqp.qp.state = IBV_QPS_INIT;
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	expect_batch_error(qp, EINVAL);
	qp->vqp.qp.state = IBV_QPS_RTS;

	/* wr_abort drops what was built. */
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	ibv_wr_abort(qpx);
	assert_int_equal(qp->sq.ring.head, 0);
	assert_unlocked(&qp->sq.lock);

	/* The QP still works afterwards. */
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);
	assert_int_equal(ibv_wr_complete(qpx), 0);
	assert_int_equal(producer_of(&qp->sq.ring), 1);
	qp_free(qp);
}

static void test_wr_ud(void **state)
{
	struct stellar_qp *qp = qp_new(IBV_QPT_UD, 4, 0);
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;
	struct stellar_ah ah = { .ah_handle = 5 };
	const struct stellar_sq_wqe *wqe;

	(void)state;
	ibv_wr_start(qpx);
	ibv_wr_send(qpx);			/* no wr_set_ud_addr */
	expect_batch_error(qp, EINVAL);

	ibv_wr_start(qpx);
	ibv_wr_rdma_write(qpx, 1, 2);		/* not on UD */
	expect_batch_error(qp, EINVAL);

	ibv_wr_start(qpx);
	qpx->wr_id = 8;
	ibv_wr_send(qpx);
	ibv_wr_set_ud_addr(qpx, &ah.ibv_ah, 0x42, 0x1234);
	ibv_wr_set_sge(qpx, 1, 0x10, 16);
	assert_int_equal(ibv_wr_complete(qpx), 0);
	wqe = ring_slot(&qp->sq.ring, 0);
	assert_int_equal(wqe->wr_id, 8);
	assert_int_equal(wqe->u.ud.ah_handle, 5);
	assert_int_equal(wqe->u.ud.remote_qpn, 0x42);
	assert_int_equal(wqe->u.ud.remote_qkey, 0x1234);
	assert_int_equal(wqe->num_sge, 1);
	qp_free(qp);
}

/*
 * XRC: a send QP's work requests carry the XRC SRQ they go to, from the
 * legacy WR or wr_set_xrc_srqn(), which the extended API requires; a
 * receive QP posts nothing; windows are not bound through XRC.
 */
static void test_xrc_send(void **state)
{
	struct stellar_qp *qp = qp_new(IBV_QPT_XRC_SEND, 4, 0);
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;
	struct ibv_sge sge = { .addr = 0x1000, .length = 8, .lkey = 3 };
	struct ibv_send_wr wr = {
		.wr_id = 1, .opcode = IBV_WR_RDMA_WRITE, .sg_list = &sge,
		.num_sge = 1, .wr.rdma = { .remote_addr = 0x2000, .rkey = 9 },
		.qp_type.xrc.remote_srqn = 0x123456,
	}, *bad;
	const struct stellar_sq_wqe *wqe;

	(void)state;
	assert_int_equal(stellar_post_send(&qp->vqp.qp, &wr, &bad), 0);
	wqe = ring_slot(&qp->sq.ring, 0);
	assert_int_equal(wqe->xrc_srqn, 0x123456);
	assert_int_equal(wqe->u.rdma.rkey, 9);

	ibv_wr_start(qpx);
	ibv_wr_send(qpx);			/* no wr_set_xrc_srqn */
	ibv_wr_set_sge(qpx, 3, 0x10, 16);
	expect_batch_error(qp, EINVAL);

	ibv_wr_start(qpx);
	qpx->wr_id = 2;
	ibv_wr_send(qpx);
	ibv_wr_set_xrc_srqn(qpx, 77);
	ibv_wr_set_sge(qpx, 3, 0x10, 16);
	assert_int_equal(ibv_wr_complete(qpx), 0);
	wqe = ring_slot(&qp->sq.ring, 1);
	assert_int_equal(wqe->wr_id, 2);
	assert_int_equal(wqe->xrc_srqn, 77);

	assert_true(stellar_qp_send_ops(IBV_QPT_XRC_SEND) &
		    IBV_QP_EX_WITH_RDMA_READ);
	assert_false(stellar_qp_send_ops(IBV_QPT_XRC_SEND) &
		     IBV_QP_EX_WITH_BIND_MW);
	assert_int_equal(stellar_qp_send_ops(IBV_QPT_XRC_RECV), 0);
	qp->vqp.qp.qp_type = IBV_QPT_XRC_RECV;
	wr.opcode = IBV_WR_SEND;
	assert_int_equal(stellar_post_send(&qp->vqp.qp, &wr, &bad), EINVAL);
	assert_ptr_equal(bad, &wr);
	qp_free(qp);
}

/* ------------------------------------------------------------------ */
/* Completion queues                                                   */
/* ------------------------------------------------------------------ */

static struct stellar_cq *cq_new(uint32_t num_entries, uint32_t start)
{
	struct stellar_cq *cq = calloc(1, sizeof(*cq));

	assert_non_null(cq);
	assert_int_equal(stellar_cq_init(cq, false), 0);
	ring_alloc(&cq->ring, num_entries, CQ_ENTRY_SIZE, start, false);
	stellar_cq_ex_set_ops(cq);
	return cq;
}

static void cq_free(struct stellar_cq *cq)
{
	free(cq->ring.hdr);
	stellar_cq_destroy(cq);
	free(cq);
}

/* The kernel's side: write a CQE and publish it. */
static void kernel_complete(struct stellar_cq *cq, const struct stellar_cqe *cqe)
{
	uint32_t producer = producer_of(&cq->ring);

	memcpy(ring_slot(&cq->ring, producer), cqe, sizeof(*cqe));
	__atomic_store_n(&cq->ring.hdr->producer, producer + 1,
			 __ATOMIC_RELEASE);
}

static const struct stellar_cqe cqe_recv_imm = {
	.wr_id = 1000, .status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV,
	.wc_flags = STELLAR_CQE_WITH_IMM | STELLAR_CQE_GRH, .sl = 3,
	.byte_len = 4096, .imm_data = 0x11223344, .qp_num = 17,
	.src_qp = 18, .pkey_index = 1, .slid = 0x99, .dlid_path_bits = 2,
};
static const struct stellar_cqe cqe_send_err = {
	.wr_id = 1001, .status = IBV_WC_RETRY_EXC_ERR, .opcode = IBV_WC_SEND,
	.vendor_err = 0x55, .qp_num = 17,
};
static const struct stellar_cqe cqe_recv_inv = {
	.wr_id = 1002, .opcode = IBV_WC_RECV,
	.wc_flags = STELLAR_CQE_WITH_INV, .imm_data = 0x78563412,
};

static void test_poll_cq(void **state)
{
	const uint32_t start = UINT32_MAX - 2;
	struct stellar_cq *cq = cq_new(4, start);
	struct ibv_wc wc[8];
	int i;

	(void)state;
	assert_int_equal(stellar_poll_cq(&cq->vcq.cq, 8, wc), 0);
	assert_int_equal(stellar_poll_cq(&cq->vcq.cq, -1, wc), -EINVAL);

	kernel_complete(cq, &cqe_recv_imm);
	kernel_complete(cq, &cqe_send_err);
	kernel_complete(cq, &cqe_recv_inv);

	memset(wc, 0xff, sizeof(wc));
	assert_int_equal(stellar_poll_cq(&cq->vcq.cq, 2, wc), 2);
	assert_int_equal(consumer_of(&cq->ring), start + 2);
	assert_int_equal(wc[0].wr_id, 1000);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
	assert_int_equal(wc[0].opcode, IBV_WC_RECV);
	assert_int_equal(wc[0].wc_flags, IBV_WC_WITH_IMM | IBV_WC_GRH);
	assert_int_equal(wc[0].imm_data, 0x11223344);	/* raw, big endian */
	assert_int_equal(wc[0].byte_len, 4096);
	assert_int_equal(wc[0].qp_num, 17);
	assert_int_equal(wc[0].src_qp, 18);
	assert_int_equal(wc[0].pkey_index, 1);
	assert_int_equal(wc[0].slid, 0x99);
	assert_int_equal(wc[0].sl, 3);
	assert_int_equal(wc[0].dlid_path_bits, 2);
	assert_int_equal(wc[1].wr_id, 1001);
	assert_int_equal(wc[1].status, IBV_WC_RETRY_EXC_ERR);
	assert_int_equal(wc[1].vendor_err, 0x55);
	assert_int_equal(wc[1].wc_flags, 0);

	assert_int_equal(stellar_poll_cq(&cq->vcq.cq, 8, wc), 1);
	assert_int_equal(wc[0].wr_id, 1002);
	assert_int_equal(wc[0].wc_flags, IBV_WC_WITH_INV);
	assert_int_equal(wc[0].invalidated_rkey, be32toh(0x78563412));
	assert_int_equal(consumer_of(&cq->ring), start + 3);	/* wrapped */
	assert_int_equal(consumer_of(&cq->ring), 0);

	/* A full ring (every slot in use) is drained in order. */
	for (i = 0; i < 4; i++) {
		struct stellar_cqe cqe = { .wr_id = 2000 + i };

		kernel_complete(cq, &cqe);
	}
	assert_int_equal(stellar_poll_cq(&cq->vcq.cq, 8, wc), 4);
	for (i = 0; i < 4; i++)
		assert_int_equal(wc[i].wr_id, 2000 + i);
	assert_int_equal(consumer_of(&cq->ring), 4);
	assert_unlocked(&cq->lock);
	cq_free(cq);
}

static void test_poll_cq_ex(void **state)
{
	struct stellar_cq *cq = cq_new(4, 2);
	struct ibv_cq_ex *cqx = &cq->vcq.cq_ex;
	struct ibv_poll_cq_attr attr = {};

	(void)state;
	assert_int_equal(ibv_start_poll(cqx, &attr), ENOENT);
	assert_unlocked(&cq->lock);	/* no end_poll after ENOENT */

	kernel_complete(cq, &cqe_recv_imm);
	kernel_complete(cq, &cqe_recv_inv);

	attr.comp_mask = 1;
	assert_int_equal(ibv_start_poll(cqx, &attr), EINVAL);
	assert_unlocked(&cq->lock);
	attr.comp_mask = 0;

	assert_int_equal(ibv_start_poll(cqx, &attr), 0);
	assert_int_equal(cqx->wr_id, 1000);
	assert_int_equal(cqx->status, IBV_WC_SUCCESS);
	assert_int_equal(ibv_wc_read_opcode(cqx), IBV_WC_RECV);
	assert_int_equal(ibv_wc_read_byte_len(cqx), 4096);
	assert_int_equal(ibv_wc_read_imm_data(cqx), 0x11223344);
	assert_int_equal(ibv_wc_read_qp_num(cqx), 17);
	assert_int_equal(ibv_wc_read_src_qp(cqx), 18);
	assert_int_equal(ibv_wc_read_wc_flags(cqx),
			 IBV_WC_WITH_IMM | IBV_WC_GRH);
	assert_int_equal(ibv_wc_read_slid(cqx), 0x99);
	assert_int_equal(ibv_wc_read_sl(cqx), 3);
	assert_int_equal(ibv_wc_read_dlid_path_bits(cqx), 2);
	assert_int_equal(ibv_wc_read_vendor_err(cqx), 0);

	assert_int_equal(ibv_next_poll(cqx), 0);
	assert_int_equal(cqx->wr_id, 1002);
	assert_int_equal(ibv_wc_read_wc_flags(cqx), IBV_WC_WITH_INV);
	assert_int_equal(ibv_wc_read_invalidated_rkey(cqx),
			 be32toh(0x78563412));
	/* Entries are handed back to the kernel at end_poll only. */
	assert_int_equal(consumer_of(&cq->ring), 2);

	assert_int_equal(ibv_next_poll(cqx), ENOENT);
	ibv_end_poll(cqx);
	assert_int_equal(consumer_of(&cq->ring), 4);
	assert_unlocked(&cq->lock);

	/* end_poll right after a successful start_poll consumes that entry. */
	kernel_complete(cq, &cqe_send_err);
	kernel_complete(cq, &cqe_recv_imm);
	assert_int_equal(ibv_start_poll(cqx, &attr), 0);
	assert_int_equal(cqx->wr_id, 1001);
	assert_int_equal(cqx->status, IBV_WC_RETRY_EXC_ERR);
	ibv_end_poll(cqx);
	assert_int_equal(consumer_of(&cq->ring), 5);
	assert_int_equal(ibv_start_poll(cqx, &attr), 0);
	assert_int_equal(cqx->wr_id, 1000);
	ibv_end_poll(cqx);
	assert_int_equal(consumer_of(&cq->ring), 6);
	cq_free(cq);
}

/* The completion time is the CQE's; the wall clock adds REALTIME's offset. */
static void test_poll_cq_ex_timestamps(void **state)
{
	struct stellar_cq *cq = cq_new(4, 2);
	struct ibv_cq_ex *cqx = &cq->vcq.cq_ex;
	struct ibv_poll_cq_attr attr = {};
	struct stellar_cqe cqe = cqe_recv_imm;
	uint64_t offset, wall;

	(void)state;
	cqe.completion_ts = stellar_clock_ns(CLOCK_MONOTONIC) - 5000000;
	kernel_complete(cq, &cqe);
	assert_int_equal(ibv_start_poll(cqx, &attr), 0);
	assert_int_equal(ibv_wc_read_completion_ts(cqx), cqe.completion_ts);
	offset = stellar_clock_ns(CLOCK_REALTIME) -
		 stellar_clock_ns(CLOCK_MONOTONIC);
	wall = ibv_wc_read_completion_wallclock_ns(cqx);
	/* The offset read twice: equal but for a step of the clock. */
	assert_true(wall + 1000000 > cqe.completion_ts + offset &&
		    wall < cqe.completion_ts + offset + 1000000);
	ibv_end_poll(cqx);
	cq_free(cq);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_post_recv_encodes_wqes),
		cmocka_unit_test(test_post_recv_too_many_sges),
		cmocka_unit_test(test_post_recv_full_and_wrap),
		cmocka_unit_test(test_thread_domain_takes_no_lock),
		cmocka_unit_test(test_post_recv_rejected),
		cmocka_unit_test(test_post_srq_recv),
		cmocka_unit_test(test_post_send_rc_opcodes),
		cmocka_unit_test(test_post_send_inline),
		cmocka_unit_test(test_post_send_invalid),
		cmocka_unit_test(test_post_send_ud),
		cmocka_unit_test(test_post_send_doorbell_error),
		cmocka_unit_test(test_post_send_polled_ring),
		cmocka_unit_test(test_send_with_inv),
		cmocka_unit_test(test_mem_windows),
		cmocka_unit_test(test_wr_batch),
		cmocka_unit_test(test_wr_errors),
		cmocka_unit_test(test_atomic_write),
		cmocka_unit_test(test_wr_ud),
		cmocka_unit_test(test_xrc_send),
		cmocka_unit_test(test_poll_cq),
		cmocka_unit_test(test_poll_cq_ex),
		cmocka_unit_test(test_poll_cq_ex_timestamps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
