// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: completion queues.
 *
 * A CQ is a ring of struct stellar_cqe.  The kernel is always the
 * producer; the consumer is the process (user CQs, polled without a
 * system call) or stellar_poll_cq() for kernel consumers.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <rdma/uverbs_ioctl.h>

#include "stellar.h"
#include "stellar_transport.h"

int stellar_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		      struct ib_udata *udata)
{
	struct stellar_dev *sdev = to_sdev(ibcq->device);
	struct stellar_cq *cq = to_scq(ibcq);
	struct stellar_create_cq_resp resp = {};
	int ret;

	if (attr->flags & ~IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > STELLAR_MAX_CQE)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	ret = stellar_obj_count_get(&sdev->num_cqs, STELLAR_MAX_CQ);
	if (ret)
		return ret;

	/* One slot more than asked: the ring holds num_entries entries. */
	ret = stellar_queue_init(&cq->queue, udata, attr->cqe,
				 sizeof(struct stellar_cqe), &resp.cq);
	if (ret)
		goto err_count;
	cq->is_user = udata;
	cq->timestamps = attr->flags & IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION;
	ibcq->cqe = cq->queue.num_entries;
	if (udata) {
		ret = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (ret)
			goto err_queue;
	}
	return 0;

err_queue:
	stellar_queue_free(&cq->queue);
err_count:
	atomic_dec(&sdev->num_cqs);
	return ret;
}

int stellar_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	stellar_queue_free(&to_scq(ibcq)->queue);
	atomic_dec(&to_sdev(ibcq->device)->num_cqs);
	return 0;
}

static void stellar_cq_overflow(struct stellar_cq *cq)
{
	struct ib_event event = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = IB_EVENT_CQ_ERR,
	};

	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&event, cq->ibcq.cq_context);
}

/* Entries the consumer has not taken; a corrupt counter reads as full. */
static u32 stellar_cq_used(struct stellar_cq *cq)
{
	u32 used = cq->producer - stellar_queue_consumer(&cq->queue);

	return used <= cq->queue.num_entries ? used : cq->queue.num_entries;
}

static bool stellar_cq_should_signal(struct stellar_cq *cq, bool solicited)
{
	if (cq->notify == IB_CQ_NEXT_COMP ||
	    (cq->notify == IB_CQ_SOLICITED && solicited)) {
		cq->notify = 0;
		return true;
	}
	return false;
}

/**
 * stellar_cq_post_quiet() - add a completion to a CQ, not yet signalled
 * @cq: the completion queue
 * @cqe: the completion
 * @solicited: the completion is for a message with the solicited event bit
 *
 * A full queue is a consumer error: the completion is lost and the CQ
 * reports IB_EVENT_CQ_ERR once.  An armed CQ is disarmed here; the
 * caller owes its consumer the completion event, stellar_cq_signal().
 *
 * Context: any; takes the CQ lock with interrupts disabled.
 * Return: true if the completion event is owed.
 */
bool stellar_cq_post_quiet(struct stellar_cq *cq, struct stellar_cqe *cqe,
			   bool solicited)
{
	bool signal = false, overflow = false;
	unsigned long flags;

	if (cq->is_user)
		cqe->completion_ts = cq->timestamps ? ktime_get_ns() : 0;
	spin_lock_irqsave(&cq->queue.lock, flags);
	if (stellar_cq_used(cq) == cq->queue.num_entries) {
		overflow = !cq->overflowed;
		cq->overflowed = true;
	} else {
		memcpy(stellar_queue_entry(&cq->queue, cq->producer), cqe,
		       sizeof(*cqe));
		cq->producer++;
		stellar_queue_set_producer(&cq->queue, cq->producer);
		signal = stellar_cq_should_signal(cq, solicited);
	}
	spin_unlock_irqrestore(&cq->queue.lock, flags);

	if (overflow)
		stellar_cq_overflow(cq);
	return signal;
}

/**
 * stellar_cq_signal() - the completion event stellar_cq_post_quiet() owed
 * @cq: the completion queue
 *
 * Context: any.
 */
void stellar_cq_signal(struct stellar_cq *cq)
{
	if (cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

/**
 * stellar_cq_post() - add a completion to a CQ and signal its consumer
 * @cq: the completion queue
 * @cqe: the completion
 * @solicited: the completion is for a message with the solicited event bit
 *
 * Context: any; takes the CQ lock with interrupts disabled.
 */
void stellar_cq_post(struct stellar_cq *cq, struct stellar_cqe *cqe,
		     bool solicited)
{
	if (stellar_cq_post_quiet(cq, cqe, solicited))
		stellar_cq_signal(cq);
}

static void stellar_cqe_to_wc(const struct stellar_cqe *cqe, struct ib_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->qp = (struct ib_qp *)(uintptr_t)cqe->reserved1;
	wc->src_qp = cqe->src_qp;
	wc->pkey_index = cqe->pkey_index;
	wc->slid = cqe->slid;
	wc->sl = cqe->sl;
	wc->dlid_path_bits = cqe->dlid_path_bits;
	wc->port_num = cqe->port_num;
	if (cqe->wc_flags & STELLAR_CQE_GRH)
		wc->wc_flags |= IB_WC_GRH;
	if (cqe->wc_flags & STELLAR_CQE_WITH_IMM) {
		wc->wc_flags |= IB_WC_WITH_IMM;
		wc->ex.imm_data = cqe->imm_data;
	}
	if (cqe->wc_flags & STELLAR_CQE_WITH_INV) {
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
		wc->ex.invalidate_rkey = be32_to_cpu(cqe->imm_data);
	}
}

/* Kernel consumers only: user CQs are polled in the provider. */
int stellar_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct stellar_cq *cq = to_scq(ibcq);
	struct stellar_queue *q = &cq->queue;
	unsigned long flags;
	u32 consumer;
	int n = 0;

	spin_lock_irqsave(&q->lock, flags);
	consumer = q->ring->consumer;
	while (n < num_entries && consumer != cq->producer) {
		stellar_cqe_to_wc(stellar_queue_entry(q, consumer), &wc[n++]);
		consumer++;
	}
	stellar_queue_set_consumer(q, consumer);
	spin_unlock_irqrestore(&q->lock, flags);
	return n;
}

int stellar_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct stellar_cq *cq = to_scq(ibcq);
	unsigned long irqflags;
	int missed = 0;

	spin_lock_irqsave(&cq->queue.lock, irqflags);
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && stellar_cq_used(cq))
		missed = 1;
	spin_unlock_irqrestore(&cq->queue.lock, irqflags);
	return missed;
}

/*
 * Copy the completions the consumer has not taken into @ring, at the same
 * free-running indexes, and hand it the counters.  Called with the CQ
 * lock held.
 *
 * Return: 0, or -EINVAL if they do not fit (or the consumer counter a
 * process wrote is corrupt).
 */
static int stellar_cq_move_entries(struct stellar_cq *cq,
				   struct stellar_queue *ring)
{
	u32 consumer = stellar_queue_consumer(&cq->queue);
	u32 used = cq->producer - consumer;
	u32 i;

	if (used > cq->queue.num_entries || used > ring->num_entries)
		return -EINVAL;
	for (i = consumer; i != cq->producer; i++)
		memcpy(stellar_queue_entry(ring, i),
		       stellar_queue_entry(&cq->queue, i),
		       sizeof(struct stellar_cqe));
	ring->ring->consumer = consumer;
	ring->ring->producer = cq->producer;
	return 0;
}

/**
 * stellar_resize_cq() - give a CQ a ring of another size
 * @ibcq: the completion queue
 * @cqe: entries wanted
 * @udata: for a user CQ, receives struct stellar_resize_cq_resp
 *
 * Completions not yet polled move to the new ring in order; the old ring
 * is no longer written.  A process must stop polling while this runs (the
 * provider holds its CQ lock) and poll the new ring afterwards.
 *
 * Context: process.
 * Return: 0 or a negative errno; -EINVAL if @cqe is out of range or less
 * than the number of completions not yet polled.
 */
int stellar_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct stellar_cq *cq = to_scq(ibcq);
	struct stellar_resize_cq_resp resp = {};
	struct stellar_queue ring;
	unsigned long flags;
	int ret;

	if (cqe < 1 || cqe > STELLAR_MAX_CQE)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;

	ret = stellar_queue_init(&ring, udata, cqe, sizeof(struct stellar_cqe),
				 &resp.cq);
	if (ret)
		return ret;
	/*
	 * Before the swap: once the kernel writes the new ring, the
	 * process must be able to find it.
	 */
	if (udata) {
		ret = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (ret)
			goto out;
	}

	spin_lock_irqsave(&cq->queue.lock, flags);
	ret = stellar_cq_move_entries(cq, &ring);
	if (!ret) {
		stellar_queue_swap_ring(&cq->queue, &ring);
		ibcq->cqe = cq->queue.num_entries;
	}
	spin_unlock_irqrestore(&cq->queue.lock, flags);
out:
	/* The old ring after a swap, else the one just allocated. */
	stellar_queue_free(&ring);
	return ret;
}
