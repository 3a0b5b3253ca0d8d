// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) 2026 The virtio-stellar authors
 *
 * stellar libibverbs provider: the data path.
 *
 * Work requests and completions travel through rings shared with the
 * kernel (struct stellar_ring in stellar-abi.h).  Each side owns one
 * counter of a ring: the producer fills entries and then publishes its
 * counter with a store-release; the consumer reads the producer's counter
 * with a load-acquire before reading entries, and publishes its own
 * counter (store-release) once it no longer needs them.
 *
 * post_recv, post_srq_recv and poll_cq (and the ibv_start_poll family)
 * make no system call.  post_send and ibv_wr_complete publish the send
 * ring and then ring the QP's doorbell, unless the kernel's doorbell
 * poller is watching the ring (STELLAR_RING_POLLED).  This file calls
 * nothing in libibverbs, which the unit test relies on (it links without
 * it).
 */
#include <endian.h>
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "stellar.h"

/* ------------------------------------------------------------------ */
/* Rings                                                               */
/* ------------------------------------------------------------------ */

static inline uint32_t stellar_load_acquire(const uint32_t *counter)
{
	return __atomic_load_n(counter, __ATOMIC_ACQUIRE);
}

static inline void stellar_store_release(uint32_t *counter, uint32_t value)
{
	__atomic_store_n(counter, value, __ATOMIC_RELEASE);
}

/*
 * Start using a ring at base.  Our counter resumes from the value the
 * header holds (0 for a new ring).
 */
void stellar_uring_attach(struct stellar_uring *ring, void *base,
			  size_t map_size, uint32_t num_entries,
			  uint32_t entry_size, bool is_producer)
{
	ring->hdr = base;
	ring->map_size = map_size;
	ring->num_entries = num_entries;
	ring->entry_size = entry_size;
	ring->head = is_producer ? stellar_load_acquire(&ring->hdr->producer) :
				   stellar_load_acquire(&ring->hdr->consumer);
}

static inline void *stellar_uring_entry(const struct stellar_uring *ring,
					uint32_t index)
{
	return (uint8_t *)ring->hdr + STELLAR_RING_HDR_SIZE +
	       (size_t)(index & (ring->num_entries - 1)) * ring->entry_size;
}

/* Producer side: entries we may still fill before the ring is full. */
static inline uint32_t stellar_uring_free(const struct stellar_uring *ring)
{
	uint32_t used = ring->head - stellar_load_acquire(&ring->hdr->consumer);

	/* A consumer counter ahead of ours is corrupt: treat as full. */
	return used <= ring->num_entries ? ring->num_entries - used : 0;
}

static inline void stellar_uring_publish(struct stellar_uring *ring)
{
	stellar_store_release(&ring->hdr->producer, ring->head);
}

/*
 * Publishes the send ring and tells the kernel.  The fence orders our
 * producer store before the load of flags: either the poller, which clears
 * STELLAR_RING_POLLED before re-reading the producer, sees the new WQEs,
 * or we see the flag clear and ring the doorbell.
 */
static int stellar_sq_kick(struct stellar_qp *qp)
{
	const uint32_t *flags = &qp->sq.ring.hdr->flags;

	stellar_uring_publish(&qp->sq.ring);
	atomic_thread_fence(memory_order_seq_cst);
	if (__atomic_load_n(flags, __ATOMIC_RELAXED) & STELLAR_RING_POLLED)
		return 0;
	return qp->ring_doorbell(qp);
}

/* Consumer side: entries the kernel has published that we have not read. */
static inline uint32_t stellar_uring_ready(const struct stellar_uring *ring)
{
	uint32_t producer = stellar_load_acquire(&ring->hdr->producer);
	uint32_t ready = producer - ring->head;

	return ready <= ring->num_entries ? ready : 0;
}

static inline void stellar_uring_release(struct stellar_uring *ring)
{
	stellar_store_release(&ring->hdr->consumer, ring->head);
}

static int stellar_lock_init(struct stellar_lock *lock, bool single_thread)
{
	lock->single_thread = single_thread;
	return pthread_spin_init(&lock->spin, PTHREAD_PROCESS_PRIVATE);
}

int stellar_wq_init(struct stellar_wq *wq, bool single_thread)
{
	return stellar_lock_init(&wq->lock, single_thread);
}

void stellar_wq_destroy(struct stellar_wq *wq)
{
	pthread_spin_destroy(&wq->lock.spin);
}

int stellar_cq_init(struct stellar_cq *cq, bool single_thread)
{
	return stellar_lock_init(&cq->lock, single_thread);
}

void stellar_cq_destroy(struct stellar_cq *cq)
{
	pthread_spin_destroy(&cq->lock.spin);
}

/* ------------------------------------------------------------------ */
/* Receive queues                                                      */
/* ------------------------------------------------------------------ */

static void stellar_write_sges(struct stellar_sge *dst,
			       const struct ibv_sge *src, uint32_t num_sge)
{
	uint32_t i;

	for (i = 0; i < num_sge; i++) {
		dst[i].addr = src[i].addr;
		dst[i].length = src[i].length;
		dst[i].lkey = src[i].lkey;
	}
}

static int stellar_wq_post_recv(struct stellar_wq *wq, struct ibv_recv_wr *wr,
				struct ibv_recv_wr **bad_wr)
{
	struct stellar_rq_wqe *wqe;
	uint32_t start;
	int ret = 0;

	stellar_lock(&wq->lock);
	start = wq->ring.head;
	for (; wr; wr = wr->next) {
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > wq->max_sge) {
			ret = EINVAL;
			break;
		}
		if (!stellar_uring_free(&wq->ring)) {
			ret = ENOMEM;
			break;
		}
		wqe = stellar_uring_entry(&wq->ring, wq->ring.head);
		wqe->wr_id = wr->wr_id;
		wqe->num_sge = wr->num_sge;
		wqe->reserved = 0;
		stellar_write_sges((struct stellar_sge *)(wqe + 1), wr->sg_list,
				   wr->num_sge);
		wq->ring.head++;
	}
	if (wq->ring.head != start)
		stellar_uring_publish(&wq->ring);
	stellar_unlock(&wq->lock);

	if (ret)
		*bad_wr = wr;
	return ret;
}

int stellar_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr)
{
	struct stellar_qp *qp = to_stellar_qp(ibqp);

	if (ibqp->srq || !qp->rq.ring.hdr || ibqp->state == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}
	return stellar_wq_post_recv(&qp->rq, wr, bad_wr);
}

int stellar_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			  struct ibv_recv_wr **bad_wr)
{
	return stellar_wq_post_recv(&to_stellar_srq(ibsrq)->rq, wr, bad_wr);
}

/* ------------------------------------------------------------------ */
/* Send queue                                                          */
/* ------------------------------------------------------------------ */

#define STELLAR_SEND_FLAGS						\
	(IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED |	\
	 IBV_SEND_INLINE)

_Static_assert((int)STELLAR_WQE_FENCE == (int)IBV_SEND_FENCE &&
	       (int)STELLAR_WQE_SIGNALED == (int)IBV_SEND_SIGNALED &&
	       (int)STELLAR_WQE_SOLICITED == (int)IBV_SEND_SOLICITED &&
	       (int)STELLAR_WQE_INLINE == (int)IBV_SEND_INLINE,
	       "stellar WQE flags are the ibv_send_flags bits");

_Static_assert(STELLAR_WR_ATOMIC_WRITE == IBV_WR_ATOMIC_WRITE &&
	       STELLAR_WC_ATOMIC_WRITE == IBV_WC_ATOMIC_WRITE,
	       "stellar's ATOMIC WRITE codes are libibverbs'");

/*
 * Which opcodes a QP type can post: an XRC send QP those of RC but for
 * memory window binds; an XRC receive QP none.
 */
static bool stellar_opcode_valid(enum ibv_qp_type qp_type,
				 enum ibv_wr_opcode opcode)
{
	bool rc = qp_type == IBV_QPT_RC || qp_type == IBV_QPT_XRC_SEND;

	switch (opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return qp_type != IBV_QPT_XRC_RECV;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_LOCAL_INV:
		return rc || qp_type == IBV_QPT_UC;
	case IBV_WR_BIND_MW:
		return qp_type == IBV_QPT_RC || qp_type == IBV_QPT_UC;
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_ATOMIC_WRITE:
		return rc;
	default:
		return false;
	}
}

static bool stellar_opcode_is_atomic(enum ibv_wr_opcode opcode)
{
	return opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

/* Only SENDs and RDMA WRITEs carry data from the WQE itself. */
static bool stellar_opcode_allows_inline(enum ibv_wr_opcode opcode)
{
	return opcode == IBV_WR_SEND || opcode == IBV_WR_SEND_WITH_IMM ||
	       opcode == IBV_WR_SEND_WITH_INV || opcode == IBV_WR_RDMA_WRITE ||
	       opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
}

/* An atomic operates on 8 aligned bytes and returns them to one SGE. */
static bool stellar_atomic_valid(uint64_t remote_addr, uint32_t num_sge,
				 uint32_t first_length)
{
	return !(remote_addr & 7) && num_sge == 1 && first_length >= 8;
}

static uint16_t stellar_wqe_flags(const struct stellar_qp *qp,
				  unsigned int send_flags)
{
	uint16_t flags = send_flags & STELLAR_SEND_FLAGS;

	if (qp->sq_sig_all)
		flags |= STELLAR_WQE_SIGNALED;
	return flags;
}

static bool stellar_qp_can_send(const struct ibv_qp *ibqp)
{
	return ibqp->state != IBV_QPS_RESET && ibqp->state != IBV_QPS_INIT &&
	       ibqp->state != IBV_QPS_RTR;
}

/* Copies the gather list into the WQE as inline data. */
static int stellar_write_inline(const struct stellar_qp *qp,
				struct stellar_sq_wqe *wqe,
				const struct ibv_sge *sg_list, int num_sge)
{
	uint8_t *data = (uint8_t *)(wqe + 1);
	uint64_t total = 0;
	int i;

	for (i = 0; i < num_sge; i++)
		total += sg_list[i].length;
	if (total > qp->sq.max_inline)
		return EINVAL;

	for (i = 0; i < num_sge; i++) {
		memcpy(data, (void *)(uintptr_t)sg_list[i].addr,
		       sg_list[i].length);
		data += sg_list[i].length;
	}
	wqe->inline_len = total;
	return 0;
}

/*
 * A bind names a window of this context; ibv_post_send() binds type 2
 * windows only (type 1 ones through ibv_bind_mw(): @type1), with a region
 * unless a type 1 window is unbound (length 0).
 */
static int stellar_check_bind(const struct stellar_qp *qp,
			      const struct ibv_mw *mw,
			      const struct ibv_mw_bind_info *info, bool type1)
{
	if (!mw || mw->context != qp->vqp.qp.context ||
	    mw->type != (type1 ? IBV_MW_TYPE_1 : IBV_MW_TYPE_2))
		return EINVAL;
	if (info->mw_access_flags & IBV_ACCESS_ZERO_BASED)
		return EINVAL;
	if (info->length && !info->mr)
		return EINVAL;
	if (!info->length && !type1)
		return EINVAL;
	return 0;
}

static int stellar_check_send_wr(const struct stellar_qp *qp,
				 const struct ibv_send_wr *wr, bool type1)
{
	enum ibv_qp_type qp_type = qp->vqp.qp.qp_type;
	bool is_inline = wr->send_flags & IBV_SEND_INLINE;

	if (!stellar_opcode_valid(qp_type, wr->opcode) || wr->num_sge < 0)
		return EINVAL;
	if (wr->opcode == IBV_WR_BIND_MW)
		return stellar_check_bind(qp, wr->bind_mw.mw,
					  &wr->bind_mw.bind_info, type1);
	if (wr->opcode == IBV_WR_LOCAL_INV)
		return 0;
	if (!is_inline && (uint32_t)wr->num_sge > qp->sq.max_sge)
		return EINVAL;
	if (is_inline && !stellar_opcode_allows_inline(wr->opcode))
		return EINVAL;
	if (stellar_opcode_is_atomic(wr->opcode) &&
	    !stellar_atomic_valid(wr->wr.atomic.remote_addr, wr->num_sge,
				  wr->num_sge ? wr->sg_list[0].length : 0))
		return EINVAL;
	/* ibv_post_send's ATOMIC WRITE takes its 8 bytes from one SGE. */
	if (wr->opcode == IBV_WR_ATOMIC_WRITE &&
	    ((wr->wr.rdma.remote_addr & 7) || wr->num_sge != 1 ||
	     wr->sg_list[0].length != 8))
		return EINVAL;
	if (qp_type == IBV_QPT_UD && !wr->wr.ud.ah)
		return EINVAL;
	return 0;
}

static void stellar_write_bind(struct stellar_sq_wqe *wqe,
			       const struct ibv_mw *mw, uint32_t rkey,
			       const struct ibv_mw_bind_info *info)
{
	wqe->u.bind.mw_rkey = mw->rkey;
	wqe->u.bind.new_rkey = rkey;
	wqe->u.bind.addr = info->addr;
	wqe->u.bind.length = info->length;
	wqe->u.bind.mr_lkey = info->mr ? info->mr->lkey : 0;
	wqe->u.bind.access = info->mw_access_flags;
}

static void stellar_write_send_remote(const struct stellar_qp *qp,
				      struct stellar_sq_wqe *wqe,
				      const struct ibv_send_wr *wr)
{
	if (qp->vqp.qp.qp_type == IBV_QPT_UD) {
		wqe->u.ud.ah_handle = to_stellar_ah(wr->wr.ud.ah)->ah_handle;
		wqe->u.ud.remote_qpn = wr->wr.ud.remote_qpn;
		wqe->u.ud.remote_qkey = wr->wr.ud.remote_qkey;
		return;
	}

	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		wqe->u.rdma.remote_addr = wr->wr.rdma.remote_addr;
		wqe->u.rdma.rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		wqe->u.atomic.remote_addr = wr->wr.atomic.remote_addr;
		wqe->u.atomic.compare_add = wr->wr.atomic.compare_add;
		wqe->u.atomic.swap = wr->wr.atomic.swap;
		wqe->u.atomic.rkey = wr->wr.atomic.rkey;
		break;
	case IBV_WR_ATOMIC_WRITE:
		wqe->u.atomic_write.remote_addr = wr->wr.rdma.remote_addr;
		wqe->u.atomic_write.rkey = wr->wr.rdma.rkey;
		memcpy(&wqe->u.atomic_write.value,
		       (void *)(uintptr_t)wr->sg_list[0].addr, 8);
		break;
	case IBV_WR_BIND_MW:
		stellar_write_bind(wqe, wr->bind_mw.mw, wr->bind_mw.rkey,
				   &wr->bind_mw.bind_info);
		break;
	default:
		break;
	}
}

/* Fills the next free send WQE from wr; the caller publishes it. */
static int stellar_write_send_wqe(struct stellar_qp *qp,
				  const struct ibv_send_wr *wr, bool type1)
{
	struct stellar_sq_wqe *wqe;
	int ret;

	ret = stellar_check_send_wr(qp, wr, type1);
	if (ret)
		return ret;
	if (!stellar_uring_free(&qp->sq.ring))
		return ENOMEM;

	wqe = stellar_uring_entry(&qp->sq.ring, qp->sq.ring.head);
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = wr->wr_id;
	wqe->opcode = wr->opcode;
	wqe->flags = stellar_wqe_flags(qp, wr->send_flags);
	if (qp->vqp.qp.qp_type == IBV_QPT_XRC_SEND)
		wqe->xrc_srqn = wr->qp_type.xrc.remote_srqn;
	if (wr->opcode == IBV_WR_SEND_WITH_IMM ||
	    wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
		wqe->imm_data = wr->imm_data;
	else if (wr->opcode == IBV_WR_SEND_WITH_INV ||
		 wr->opcode == IBV_WR_LOCAL_INV)
		wqe->imm_data = htobe32(wr->invalidate_rkey);
	stellar_write_send_remote(qp, wqe, wr);

	if (wr->opcode == IBV_WR_ATOMIC_WRITE ||
	    wr->opcode == IBV_WR_BIND_MW || wr->opcode == IBV_WR_LOCAL_INV) {
		/* Everything is in the WQE: no gather list. */
	} else if (wr->send_flags & IBV_SEND_INLINE) {
		ret = stellar_write_inline(qp, wqe, wr->sg_list, wr->num_sge);
		if (ret)
			return ret;
	} else {
		wqe->num_sge = wr->num_sge;
		stellar_write_sges((struct stellar_sge *)(wqe + 1), wr->sg_list,
				   wr->num_sge);
	}
	qp->sq.ring.head++;
	return 0;
}

static int stellar_post_send_list(struct ibv_qp *ibqp,
				  struct ibv_send_wr *wr,
				  struct ibv_send_wr **bad_wr, bool type1)
{
	struct stellar_qp *qp = to_stellar_qp(ibqp);
	struct ibv_send_wr *first = wr;
	uint32_t start;
	int ret = 0;

	if (!stellar_qp_can_send(ibqp)) {
		*bad_wr = wr;
		return EINVAL;
	}

	stellar_lock(&qp->sq.lock);
	start = qp->sq.ring.head;
	for (; wr; wr = wr->next) {
		ret = stellar_write_send_wqe(qp, wr, type1);
		if (ret)
			break;
	}
	if (qp->sq.ring.head != start) {
		/*
		 * The published WQEs stay queued if the kernel refuses the
		 * doorbell; report the failure against the first of them.
		 */
		int db_ret = stellar_sq_kick(qp);

		if (db_ret) {
			ret = db_ret;
			wr = first;
		}
	}
	stellar_unlock(&qp->sq.lock);

	if (ret)
		*bad_wr = wr;
	return ret;
}

int stellar_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr)
{
	return stellar_post_send_list(ibqp, wr, bad_wr, false);
}

/* ibv_bind_mw(): one bind of a type 1 window (stellar_bind_mw()). */
int stellar_post_bind(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr)
{
	return stellar_post_send_list(ibqp, wr, bad_wr, true);
}

/* ------------------------------------------------------------------ */
/* Extended send API: ibv_wr_*()                                        */
/* ------------------------------------------------------------------ */

uint64_t stellar_qp_send_ops(enum ibv_qp_type qp_type)
{
	uint64_t ops = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;

	if (qp_type == IBV_QPT_XRC_RECV)
		return 0;
	if (qp_type == IBV_QPT_RC || qp_type == IBV_QPT_UC ||
	    qp_type == IBV_QPT_XRC_SEND)
		ops |= IBV_QP_EX_WITH_RDMA_WRITE |
		       IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
		       IBV_QP_EX_WITH_LOCAL_INV;
	if (qp_type == IBV_QPT_RC || qp_type == IBV_QPT_UC)
		ops |= IBV_QP_EX_WITH_BIND_MW;
	if (qp_type == IBV_QPT_RC || qp_type == IBV_QPT_XRC_SEND)
		ops |= IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_RDMA_READ |
		       IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
		       IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
		       IBV_QP_EX_WITH_ATOMIC_WRITE;
	return ops;
}

static void stellar_wr_fail(struct stellar_qp *qp, int err)
{
	if (!qp->wr_err)
		qp->wr_err = err;
}

/* Checks the WQE being built before another starts or the batch ends. */
static void stellar_wr_finish_cur(struct stellar_qp *qp)
{
	struct stellar_sq_wqe *wqe = qp->wr_cur;
	const struct stellar_sge *sge;

	if (!wqe)
		return;
	sge = (const struct stellar_sge *)(wqe + 1);
	if ((qp->vqp.qp.qp_type == IBV_QPT_UD ||
	     qp->vqp.qp.qp_type == IBV_QPT_XRC_SEND) && !qp->wr_cur_has_addr)
		stellar_wr_fail(qp, EINVAL);
	if (stellar_opcode_is_atomic(wqe->opcode) &&
	    !stellar_atomic_valid(wqe->u.atomic.remote_addr, wqe->num_sge,
				  wqe->num_sge ? sge->length : 0))
		stellar_wr_fail(qp, EINVAL);
	/* Binds and invalidations carry no data. */
	if ((wqe->opcode == IBV_WR_BIND_MW ||
	     wqe->opcode == IBV_WR_LOCAL_INV) &&
	    (wqe->num_sge || (wqe->flags & STELLAR_WQE_INLINE)))
		stellar_wr_fail(qp, EINVAL);
	qp->wr_cur = NULL;
}

/* Starts the next WQE of a wr_start batch; NULL once the batch failed. */
static struct stellar_sq_wqe *stellar_wr_begin(struct ibv_qp_ex *ibqpx,
					       enum ibv_wr_opcode opcode)
{
	struct stellar_qp *qp = to_stellar_qp_ex(ibqpx);
	struct stellar_sq_wqe *wqe;

	stellar_wr_finish_cur(qp);
	if (qp->wr_err)
		return NULL;
	if (!stellar_opcode_valid(qp->vqp.qp.qp_type, opcode) ||
	    (ibqpx->wr_flags & ~STELLAR_SEND_FLAGS)) {
		stellar_wr_fail(qp, EINVAL);
		return NULL;
	}
	if (!stellar_uring_free(&qp->sq.ring)) {
		stellar_wr_fail(qp, ENOMEM);
		return NULL;
	}

	wqe = stellar_uring_entry(&qp->sq.ring, qp->sq.ring.head);
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = ibqpx->wr_id;
	wqe->opcode = opcode;
	/* Inline data is chosen by wr_set_inline_data*(), not the flag. */
	wqe->flags = stellar_wqe_flags(qp, ibqpx->wr_flags & ~IBV_SEND_INLINE);
	qp->sq.ring.head++;
	qp->wr_cur = wqe;
	qp->wr_cur_has_addr = false;
	return wqe;
}

static void stellar_wr_send(struct ibv_qp_ex *ibqpx)
{
	stellar_wr_begin(ibqpx, IBV_WR_SEND);
}

static void stellar_wr_send_imm(struct ibv_qp_ex *ibqpx, __be32 imm_data)
{
	struct stellar_sq_wqe *wqe = stellar_wr_begin(ibqpx,
						      IBV_WR_SEND_WITH_IMM);

	if (wqe)
		wqe->imm_data = imm_data;
}

/* SEND_WITH_INV or LOCAL_INV: the key travels big endian in imm_data. */
static void stellar_wr_inv(struct ibv_qp_ex *ibqpx, enum ibv_wr_opcode opcode,
			   uint32_t invalidate_rkey)
{
	struct stellar_sq_wqe *wqe = stellar_wr_begin(ibqpx, opcode);

	if (wqe)
		wqe->imm_data = htobe32(invalidate_rkey);
}

static void stellar_wr_send_inv(struct ibv_qp_ex *ibqpx,
				uint32_t invalidate_rkey)
{
	stellar_wr_inv(ibqpx, IBV_WR_SEND_WITH_INV, invalidate_rkey);
}

static void stellar_wr_rdma(struct ibv_qp_ex *ibqpx, enum ibv_wr_opcode opcode,
			    uint32_t rkey, uint64_t remote_addr,
			    __be32 imm_data)
{
	struct stellar_sq_wqe *wqe = stellar_wr_begin(ibqpx, opcode);

	if (!wqe)
		return;
	wqe->u.rdma.remote_addr = remote_addr;
	wqe->u.rdma.rkey = rkey;
	wqe->imm_data = imm_data;
}

static void stellar_wr_rdma_write(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				  uint64_t remote_addr)
{
	stellar_wr_rdma(ibqpx, IBV_WR_RDMA_WRITE, rkey, remote_addr, 0);
}

static void stellar_wr_rdma_write_imm(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				      uint64_t remote_addr, __be32 imm_data)
{
	stellar_wr_rdma(ibqpx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr,
			imm_data);
}

static void stellar_wr_rdma_read(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				 uint64_t remote_addr)
{
	stellar_wr_rdma(ibqpx, IBV_WR_RDMA_READ, rkey, remote_addr, 0);
}

static void stellar_wr_atomic(struct ibv_qp_ex *ibqpx,
			      enum ibv_wr_opcode opcode, uint32_t rkey,
			      uint64_t remote_addr, uint64_t compare_add,
			      uint64_t swap)
{
	struct stellar_sq_wqe *wqe = stellar_wr_begin(ibqpx, opcode);

	if (!wqe)
		return;
	wqe->u.atomic.remote_addr = remote_addr;
	wqe->u.atomic.compare_add = compare_add;
	wqe->u.atomic.swap = swap;
	wqe->u.atomic.rkey = rkey;
}

static void stellar_wr_atomic_cmp_swp(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				      uint64_t remote_addr, uint64_t compare,
				      uint64_t swap)
{
	stellar_wr_atomic(ibqpx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr,
			  compare, swap);
}

static void stellar_wr_atomic_fetch_add(struct ibv_qp_ex *ibqpx,
					uint32_t rkey, uint64_t remote_addr,
					uint64_t add)
{
	stellar_wr_atomic(ibqpx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey,
			  remote_addr, add, 0);
}

/* @atomic_wr: the 8 bytes to write at the 8-byte aligned @remote_addr. */
static void stellar_wr_atomic_write(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				    uint64_t remote_addr,
				    const void *atomic_wr)
{
	struct stellar_qp *qp = to_stellar_qp_ex(ibqpx);
	struct stellar_sq_wqe *wqe;

	if (remote_addr & 7) {
		stellar_wr_finish_cur(qp);
		stellar_wr_fail(qp, EINVAL);
		return;
	}
	wqe = stellar_wr_begin(ibqpx, IBV_WR_ATOMIC_WRITE);
	if (!wqe)
		return;
	wqe->u.atomic_write.remote_addr = remote_addr;
	wqe->u.atomic_write.rkey = rkey;
	memcpy(&wqe->u.atomic_write.value, atomic_wr, 8);
}

/* The WQE the wr_set_*() calls apply to, or NULL (batch failed). */
static struct stellar_sq_wqe *stellar_wr_cur(struct stellar_qp *qp)
{
	if (qp->wr_err)
		return NULL;
	if (!qp->wr_cur)
		stellar_wr_fail(qp, EINVAL);	/* no wr_<opcode>() yet */
	return qp->wr_cur;
}

static void stellar_wr_set_sge_list(struct ibv_qp_ex *ibqpx, size_t num_sge,
				    const struct ibv_sge *sg_list)
{
	struct stellar_qp *qp = to_stellar_qp_ex(ibqpx);
	struct stellar_sq_wqe *wqe = stellar_wr_cur(qp);

	if (!wqe)
		return;
	if (num_sge > qp->sq.max_sge) {
		stellar_wr_fail(qp, EINVAL);
		return;
	}
	wqe->flags &= ~STELLAR_WQE_INLINE;
	wqe->inline_len = 0;
	wqe->num_sge = num_sge;
	stellar_write_sges((struct stellar_sge *)(wqe + 1), sg_list, num_sge);
}

static void stellar_wr_set_sge(struct ibv_qp_ex *ibqpx, uint32_t lkey,
			       uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	stellar_wr_set_sge_list(ibqpx, 1, &sge);
}

static void stellar_wr_set_inline_data_list(struct ibv_qp_ex *ibqpx,
					    size_t num_buf,
					    const struct ibv_data_buf *buf_list)
{
	struct stellar_qp *qp = to_stellar_qp_ex(ibqpx);
	struct stellar_sq_wqe *wqe = stellar_wr_cur(qp);
	uint8_t *data;
	uint64_t total = 0;
	size_t i;

	if (!wqe)
		return;
	for (i = 0; i < num_buf; i++)
		total += buf_list[i].length;
	if (!stellar_opcode_allows_inline(wqe->opcode) ||
	    total > qp->sq.max_inline) {
		stellar_wr_fail(qp, EINVAL);
		return;
	}

	data = (uint8_t *)(wqe + 1);
	for (i = 0; i < num_buf; i++) {
		memcpy(data, buf_list[i].addr, buf_list[i].length);
		data += buf_list[i].length;
	}
	wqe->flags |= STELLAR_WQE_INLINE;
	wqe->inline_len = total;
	wqe->num_sge = 0;
}

static void stellar_wr_set_inline_data(struct ibv_qp_ex *ibqpx, void *addr,
				       size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	stellar_wr_set_inline_data_list(ibqpx, 1, &buf);
}

static void stellar_wr_set_ud_addr(struct ibv_qp_ex *ibqpx, struct ibv_ah *ah,
				   uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct stellar_qp *qp = to_stellar_qp_ex(ibqpx);
	struct stellar_sq_wqe *wqe = stellar_wr_cur(qp);

	if (!wqe)
		return;
	if (qp->vqp.qp.qp_type != IBV_QPT_UD || !ah) {
		stellar_wr_fail(qp, EINVAL);
		return;
	}
	wqe->u.ud.ah_handle = to_stellar_ah(ah)->ah_handle;
	wqe->u.ud.remote_qpn = remote_qpn;
	wqe->u.ud.remote_qkey = remote_qkey;
	qp->wr_cur_has_addr = true;
}

/* Operations stellar does not offer fail the batch instead of crashing. */
/* A type 2 window's bind, as IBV_WR_BIND_MW in ibv_post_send(). */
static void stellar_wr_bind_mw(struct ibv_qp_ex *ibqpx, struct ibv_mw *mw,
			       uint32_t rkey,
			       const struct ibv_mw_bind_info *bind_info)
{
	struct stellar_qp *qp = to_stellar_qp_ex(ibqpx);
	struct stellar_sq_wqe *wqe;

	if (stellar_check_bind(qp, mw, bind_info, false)) {
		stellar_wr_finish_cur(qp);
		stellar_wr_fail(qp, EINVAL);
		return;
	}
	wqe = stellar_wr_begin(ibqpx, IBV_WR_BIND_MW);
	if (wqe)
		stellar_write_bind(wqe, mw, rkey, bind_info);
}

static void stellar_wr_local_inv(struct ibv_qp_ex *ibqpx,
				 uint32_t invalidate_rkey)
{
	stellar_wr_inv(ibqpx, IBV_WR_LOCAL_INV, invalidate_rkey);
}

/* The XRC SRQ a work request of an XRC send QP goes to: its address. */
static void stellar_wr_set_xrc_srqn(struct ibv_qp_ex *ibqpx,
				    uint32_t remote_srqn)
{
	struct stellar_qp *qp = to_stellar_qp_ex(ibqpx);
	struct stellar_sq_wqe *wqe;

	if (qp->vqp.qp.qp_type != IBV_QPT_XRC_SEND) {
		stellar_wr_fail(qp, EOPNOTSUPP);
		return;
	}
	wqe = stellar_wr_cur(qp);
	if (!wqe)
		return;
	wqe->xrc_srqn = remote_srqn;
	qp->wr_cur_has_addr = true;
}

static void stellar_wr_send_tso(struct ibv_qp_ex *ibqpx, void *hdr,
				uint16_t hdr_sz, uint16_t mss)
{
	(void)hdr;
	(void)hdr_sz;
	(void)mss;
	stellar_wr_fail(to_stellar_qp_ex(ibqpx), EOPNOTSUPP);
}

static void stellar_wr_start(struct ibv_qp_ex *ibqpx)
{
	struct stellar_qp *qp = to_stellar_qp_ex(ibqpx);

	stellar_lock(&qp->sq.lock);
	qp->wr_start_head = qp->sq.ring.head;
	qp->wr_cur = NULL;
	qp->wr_err = stellar_qp_can_send(&qp->vqp.qp) ? 0 : EINVAL;
}

static void stellar_wr_abort(struct ibv_qp_ex *ibqpx)
{
	struct stellar_qp *qp = to_stellar_qp_ex(ibqpx);

	qp->sq.ring.head = qp->wr_start_head;
	qp->wr_cur = NULL;
	stellar_unlock(&qp->sq.lock);
}

/* Posts the whole batch, or (on any error since wr_start) none of it. */
static int stellar_wr_complete(struct ibv_qp_ex *ibqpx)
{
	struct stellar_qp *qp = to_stellar_qp_ex(ibqpx);
	int ret;

	stellar_wr_finish_cur(qp);
	ret = qp->wr_err;
	if (ret) {
		stellar_wr_abort(ibqpx);
		return ret;
	}
	if (qp->sq.ring.head != qp->wr_start_head)
		ret = stellar_sq_kick(qp);
	stellar_unlock(&qp->sq.lock);
	return ret;
}

void stellar_qp_ex_set_ops(struct stellar_qp *qp)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;

	qpx->wr_send = stellar_wr_send;
	qpx->wr_send_imm = stellar_wr_send_imm;
	qpx->wr_rdma_write = stellar_wr_rdma_write;
	qpx->wr_rdma_write_imm = stellar_wr_rdma_write_imm;
	qpx->wr_rdma_read = stellar_wr_rdma_read;
	qpx->wr_atomic_cmp_swp = stellar_wr_atomic_cmp_swp;
	qpx->wr_atomic_fetch_add = stellar_wr_atomic_fetch_add;
	qpx->wr_set_sge = stellar_wr_set_sge;
	qpx->wr_set_sge_list = stellar_wr_set_sge_list;
	qpx->wr_set_inline_data = stellar_wr_set_inline_data;
	qpx->wr_set_inline_data_list = stellar_wr_set_inline_data_list;
	qpx->wr_set_ud_addr = stellar_wr_set_ud_addr;
	qpx->wr_start = stellar_wr_start;
	qpx->wr_complete = stellar_wr_complete;
	qpx->wr_abort = stellar_wr_abort;
	qpx->wr_bind_mw = stellar_wr_bind_mw;
	qpx->wr_local_inv = stellar_wr_local_inv;
	qpx->wr_send_inv = stellar_wr_send_inv;
	qpx->wr_set_xrc_srqn = stellar_wr_set_xrc_srqn;
	qpx->wr_send_tso = stellar_wr_send_tso;
	qpx->wr_atomic_write = stellar_wr_atomic_write;
}

/* ------------------------------------------------------------------ */
/* Completion queues                                                   */
/* ------------------------------------------------------------------ */

#define STELLAR_CQE_FLAGS						\
	(STELLAR_CQE_GRH | STELLAR_CQE_WITH_IMM | STELLAR_CQE_WITH_INV)

_Static_assert((int)STELLAR_CQE_GRH == (int)IBV_WC_GRH &&
	       (int)STELLAR_CQE_WITH_IMM == (int)IBV_WC_WITH_IMM &&
	       (int)STELLAR_CQE_WITH_INV == (int)IBV_WC_WITH_INV,
	       "stellar CQE flags are the ibv_wc_flags bits");

static void stellar_cqe_to_wc(const struct stellar_cqe *cqe,
			      struct ibv_wc *wc)
{
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->wc_flags = cqe->wc_flags & STELLAR_CQE_FLAGS;
	if (cqe->wc_flags & STELLAR_CQE_WITH_INV)
		wc->invalidated_rkey = be32toh(cqe->imm_data);
	else
		wc->imm_data = cqe->imm_data;
	wc->qp_num = cqe->qp_num;
	wc->src_qp = cqe->src_qp;
	wc->pkey_index = cqe->pkey_index;
	wc->slid = cqe->slid;
	wc->sl = cqe->sl;
	wc->dlid_path_bits = cqe->dlid_path_bits;
}

int stellar_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct stellar_cq *cq = to_stellar_cq(ibcq);
	uint32_t ready;
	int n;

	if (num_entries < 0)
		return -EINVAL;

	stellar_lock(&cq->lock);
	ready = stellar_uring_ready(&cq->ring);
	for (n = 0; n < num_entries && (uint32_t)n < ready; n++) {
		stellar_cqe_to_wc(stellar_uring_entry(&cq->ring,
						      cq->ring.head), &wc[n]);
		cq->ring.head++;
	}
	if (n)
		stellar_uring_release(&cq->ring);
	stellar_unlock(&cq->lock);
	return n;
}

/* Makes the CQE at the ring head the current one of an ibv_start_poll(). */
static int stellar_cq_ex_load(struct stellar_cq *cq)
{
	const struct stellar_cqe *cqe;

	if (!stellar_uring_ready(&cq->ring)) {
		cq->cur_cqe = NULL;
		return ENOENT;
	}
	cqe = stellar_uring_entry(&cq->ring, cq->ring.head);
	cq->cur_cqe = cqe;
	cq->vcq.cq_ex.wr_id = cqe->wr_id;
	cq->vcq.cq_ex.status = cqe->status;
	return 0;
}

static int stellar_start_poll(struct ibv_cq_ex *ibcq,
			      struct ibv_poll_cq_attr *attr)
{
	struct stellar_cq *cq = to_stellar_cq_ex(ibcq);
	int ret;

	if (attr->comp_mask)
		return EINVAL;

	stellar_lock(&cq->lock);
	ret = stellar_cq_ex_load(cq);
	if (ret)
		stellar_unlock(&cq->lock);	/* no end_poll follows */
	return ret;
}

static int stellar_next_poll(struct ibv_cq_ex *ibcq)
{
	struct stellar_cq *cq = to_stellar_cq_ex(ibcq);

	if (cq->cur_cqe)
		cq->ring.head++;
	return stellar_cq_ex_load(cq);
}

static void stellar_end_poll(struct ibv_cq_ex *ibcq)
{
	struct stellar_cq *cq = to_stellar_cq_ex(ibcq);

	if (cq->cur_cqe)
		cq->ring.head++;
	cq->cur_cqe = NULL;
	stellar_uring_release(&cq->ring);
	stellar_unlock(&cq->lock);
}

static const struct stellar_cqe *stellar_cur_cqe(struct ibv_cq_ex *ibcq)
{
	return to_stellar_cq_ex(ibcq)->cur_cqe;
}

static enum ibv_wc_opcode stellar_read_opcode(struct ibv_cq_ex *ibcq)
{
	return stellar_cur_cqe(ibcq)->opcode;
}

static uint32_t stellar_read_vendor_err(struct ibv_cq_ex *ibcq)
{
	return stellar_cur_cqe(ibcq)->vendor_err;
}

static uint32_t stellar_read_byte_len(struct ibv_cq_ex *ibcq)
{
	return stellar_cur_cqe(ibcq)->byte_len;
}

/* Like ibv_wc: the immediate, or the invalidated rkey in host order. */
static __be32 stellar_read_imm_data(struct ibv_cq_ex *ibcq)
{
	const struct stellar_cqe *cqe = stellar_cur_cqe(ibcq);

	if (cqe->wc_flags & STELLAR_CQE_WITH_INV)
		return (__be32)be32toh(cqe->imm_data);
	return cqe->imm_data;
}

static uint32_t stellar_read_qp_num(struct ibv_cq_ex *ibcq)
{
	return stellar_cur_cqe(ibcq)->qp_num;
}

static uint32_t stellar_read_src_qp(struct ibv_cq_ex *ibcq)
{
	return stellar_cur_cqe(ibcq)->src_qp;
}

static unsigned int stellar_read_wc_flags(struct ibv_cq_ex *ibcq)
{
	return stellar_cur_cqe(ibcq)->wc_flags & STELLAR_CQE_FLAGS;
}

static uint32_t stellar_read_slid(struct ibv_cq_ex *ibcq)
{
	return stellar_cur_cqe(ibcq)->slid;
}

static uint8_t stellar_read_sl(struct ibv_cq_ex *ibcq)
{
	return stellar_cur_cqe(ibcq)->sl;
}

static uint8_t stellar_read_dlid_path_bits(struct ibv_cq_ex *ibcq)
{
	return stellar_cur_cqe(ibcq)->dlid_path_bits;
}

/* The device's clock, in hca_core_clock ticks (1 GHz). */
static uint64_t stellar_read_completion_ts(struct ibv_cq_ex *ibcq)
{
	return stellar_cur_cqe(ibcq)->completion_ts;
}

uint64_t stellar_clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* The timestamp is CLOCK_MONOTONIC: shift it by REALTIME's offset now. */
static uint64_t stellar_read_completion_wallclock_ns(struct ibv_cq_ex *ibcq)
{
	uint64_t mono = stellar_clock_ns(CLOCK_MONOTONIC);
	uint64_t real = stellar_clock_ns(CLOCK_REALTIME);

	return stellar_cur_cqe(ibcq)->completion_ts + (real - mono);
}

void stellar_cq_ex_set_ops(struct stellar_cq *cq)
{
	struct ibv_cq_ex *cqx = &cq->vcq.cq_ex;

	cqx->start_poll = stellar_start_poll;
	cqx->next_poll = stellar_next_poll;
	cqx->end_poll = stellar_end_poll;
	cqx->read_opcode = stellar_read_opcode;
	cqx->read_vendor_err = stellar_read_vendor_err;
	cqx->read_byte_len = stellar_read_byte_len;
	cqx->read_imm_data = stellar_read_imm_data;
	cqx->read_qp_num = stellar_read_qp_num;
	cqx->read_src_qp = stellar_read_src_qp;
	cqx->read_wc_flags = stellar_read_wc_flags;
	cqx->read_slid = stellar_read_slid;
	cqx->read_sl = stellar_read_sl;
	cqx->read_dlid_path_bits = stellar_read_dlid_path_bits;
	cqx->read_completion_ts = stellar_read_completion_ts;
	cqx->read_completion_wallclock_ns =
		stellar_read_completion_wallclock_ns;
}
