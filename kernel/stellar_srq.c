// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: receive rings (a QP's RQ or a shared receive queue).
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <linux/log2.h>
#include <rdma/uverbs_ioctl.h>

#include "stellar.h"
#include "stellar_mem.h"
#include "stellar_transport.h"

/**
 * stellar_post_recv_wqe() - a kernel consumer posts one receive request
 * @q: the receive ring (kernel rings only)
 * @max_sge: SGEs an entry holds
 * @wr: the request
 *
 * Context: any.
 * Return: 0, -EINVAL (too many SGEs) or -ENOMEM (ring full).
 */
int stellar_post_recv_wqe(struct stellar_queue *q, u32 max_sge,
			  const struct ib_recv_wr *wr)
{
	struct stellar_sge *sge;
	struct stellar_rq_wqe *wqe;
	unsigned long flags;
	u32 producer;
	int i, ret = 0;

	if (wr->num_sge < 0 || wr->num_sge > max_sge)
		return -EINVAL;
	spin_lock_irqsave(&q->lock, flags);
	producer = q->ring->producer;
	if (producer - q->ring->consumer >= q->num_entries) {
		ret = -ENOMEM;
		goto out;
	}
	wqe = stellar_queue_entry(q, producer);
	wqe->wr_id = wr->wr_id;
	wqe->num_sge = wr->num_sge;
	sge = (struct stellar_sge *)(wqe + 1);
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
	stellar_queue_set_producer(q, producer + 1);
out:
	spin_unlock_irqrestore(&q->lock, flags);
	return ret;
}

/**
 * stellar_take_recv_wqe() - take the oldest posted receive request
 * @q: the receive ring
 * @consumer: the kernel's consumer counter of @q
 * @max_sge: SGEs an entry holds
 * @wqe: receives a validated copy
 *
 * A malformed entry (too many SGEs) is consumed and reported as -EINVAL.
 *
 * Context: any.
 * Return: 0, -ENOENT if none is posted, -EINVAL if malformed.
 */
int stellar_take_recv_wqe(struct stellar_queue *q, u32 *consumer,
			  u32 max_sge, struct stellar_recv_wqe *wqe)
{
	const struct stellar_rq_wqe *entry;
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&q->lock, flags);
	if (!stellar_queue_pending(q, *consumer)) {
		ret = -ENOENT;
		goto out;
	}
	entry = stellar_queue_entry(q, *consumer);
	wqe->wr_id = READ_ONCE(entry->wr_id);
	wqe->num_sge = READ_ONCE(entry->num_sge);
	if (wqe->num_sge > max_sge)
		ret = -EINVAL;
	else
		memcpy(wqe->sge, entry + 1, wqe->num_sge * sizeof(*wqe->sge));
	++*consumer;
	stellar_queue_set_consumer(q, *consumer);
out:
	spin_unlock_irqrestore(&q->lock, flags);
	return ret;
}

/**
 * stellar_take_recv_wr_id() - drop the oldest posted receive request
 * @q: the receive ring
 * @consumer: the kernel's consumer counter of @q
 * @wr_id: receives the request's cookie (for its flush completion)
 *
 * Return: 0 or -ENOENT if none is posted.
 */
int stellar_take_recv_wr_id(struct stellar_queue *q, u32 *consumer,
			    u64 *wr_id)
{
	const struct stellar_rq_wqe *entry;
	unsigned long flags;
	int ret = -ENOENT;

	spin_lock_irqsave(&q->lock, flags);
	if (stellar_queue_pending(q, *consumer)) {
		entry = stellar_queue_entry(q, *consumer);
		*wr_id = READ_ONCE(entry->wr_id);
		++*consumer;
		stellar_queue_set_consumer(q, *consumer);
		ret = 0;
	}
	spin_unlock_irqrestore(&q->lock, flags);
	return ret;
}

static void stellar_srq_limit_event(struct stellar_srq *srq)
{
	struct ib_event event = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
	};

	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&event, srq->ibsrq.srq_context);
}

/**
 * stellar_srq_take() - take a receive request from an SRQ
 * @srq: the SRQ
 * @wqe: receives a validated copy
 *
 * Fires the armed limit event when fewer than the limit remain posted.
 *
 * Return: as stellar_take_recv_wqe().
 */
int stellar_srq_take(struct stellar_srq *srq, struct stellar_recv_wqe *wqe)
{
	unsigned long flags;
	bool below = false;
	u32 limit;
	int ret;

	ret = stellar_take_recv_wqe(&srq->rq, &srq->consumer, srq->max_sge,
				    wqe);
	if (ret == -ENOENT)
		return ret;
	limit = READ_ONCE(srq->limit);
	if (limit) {
		/* The lock keeps a resize from freeing the ring under us. */
		spin_lock_irqsave(&srq->rq.lock, flags);
		below = stellar_queue_pending(&srq->rq, srq->consumer) < limit;
		spin_unlock_irqrestore(&srq->rq.lock, flags);
	}
	if (below && cmpxchg(&srq->limit, limit, 0) == limit)
		stellar_srq_limit_event(srq);
	return ret;
}

/**
 * stellar_xrc_srq_get() - look an XRC SRQ up by number, take a reference
 * @sdev: device
 * @srq_num: the number an XRC request names (its XRCETH)
 * @serial: 0, or the serial the SRQ must have: the one a message or READ
 *	    began with, since a number is reused once its SRQ is destroyed
 * @xrcd: the XRC domain of the target QP the request came to
 *
 * The reference is taken under the table's lock, as stellar_qp_get()
 * does: destroy erases the SRQ first and then waits for the references.
 *
 * Context: any.
 * Return: the SRQ, or NULL if there is no XRC SRQ of that number (and
 * serial) in @xrcd; release with stellar_srq_put().
 */
struct stellar_srq *stellar_xrc_srq_get(struct stellar_dev *sdev, u32 srq_num,
					u64 serial, const struct ib_xrcd *xrcd)
{
	struct stellar_srq *srq;
	unsigned long flags;

	xa_lock_irqsave(&sdev->srqs, flags);
	srq = xa_load(&sdev->srqs, srq_num);
	if (srq && (srq->ibsrq.srq_type != IB_SRQT_XRC ||
		    srq->ibsrq.ext.xrc.xrcd != xrcd ||
		    (serial && srq->serial != serial) ||
		    !refcount_inc_not_zero(&srq->ref)))
		srq = NULL;
	xa_unlock_irqrestore(&sdev->srqs, flags);
	return srq;
}

void stellar_srq_put(struct stellar_srq *srq)
{
	if (refcount_dec_and_test(&srq->ref))
		complete(&srq->released);
}

/* The SRQ types stellar offers, with what each needs from the caller. */
static int stellar_check_srq_init(const struct ib_srq_init_attr *init)
{
	const struct ib_srq_attr *attr = &init->attr;

	switch (init->srq_type) {
	case IB_SRQT_BASIC:
		break;
	case IB_SRQT_XRC:
		if (!init->ext.cq || !init->ext.xrc.xrcd)
			return -EINVAL;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (attr->max_wr > STELLAR_MAX_SRQ_WR || attr->max_sge > STELLAR_MAX_SGE)
		return -EINVAL;
	return 0;
}

int stellar_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		       struct ib_udata *udata)
{
	struct stellar_dev *sdev = to_sdev(ibsrq->device);
	struct stellar_srq *srq = to_ssrq(ibsrq);
	struct stellar_create_srq_resp resp = {};
	struct ib_srq_attr *attr = &init->attr;
	int ret;

	ret = stellar_check_srq_init(init);
	if (ret)
		return ret;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;

	srq->max_sge = max_t(u32, attr->max_sge, 1);
	srq->is_user = udata;
	ret = stellar_queue_init(&srq->rq, udata, attr->max_wr,
				 sizeof(struct stellar_rq_wqe) +
				 srq->max_sge * sizeof(struct stellar_sge),
				 &resp.rq);
	if (ret)
		return ret;
	if (attr->srq_limit >= srq->rq.num_entries) {
		ret = -EINVAL;
		goto err_queue;
	}
	srq->limit = attr->srq_limit;
	srq->serial = atomic64_inc_return(&sdev->mem->next_serial);
	refcount_set(&srq->ref, 1);
	init_completion(&srq->released);
	/* Reserved now, found by number once created (the store below). */
	ret = xa_alloc_irq(&sdev->srqs, &srq->srq_num, NULL,
			   XA_LIMIT(1, STELLAR_MAX_SRQ), GFP_KERNEL);
	if (ret) {
		/* -EBUSY: max_srq SRQs exist */
		ret = ret == -EBUSY ? -ENOMEM : ret;
		goto err_queue;
	}
	resp.srq_num = srq->srq_num;
	if (udata) {
		ret = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (ret)
			goto err_xa;
	}
	attr->max_wr = srq->rq.num_entries;
	attr->max_sge = srq->max_sge;
	if (init->srq_type == IB_SRQT_XRC)
		ibsrq->ext.xrc.srq_num = srq->srq_num;
	/* The slot is reserved: storing in it needs no memory. */
	WARN_ON(xa_is_err(xa_store_irq(&sdev->srqs, srq->srq_num, srq,
				       GFP_KERNEL)));
	return 0;

err_xa:
	xa_erase_irq(&sdev->srqs, srq->srq_num);
err_queue:
	stellar_queue_free(&srq->rq);
	return ret;
}

/*
 * Copy the receive requests not yet taken into @ring, at the same
 * free-running indexes, and hand it the counters.  Called with the SRQ's
 * ring lock held.
 *
 * Return: 0, or -EINVAL if they do not fit (or the producer counter a
 * process wrote is corrupt).
 */
static int stellar_srq_move_entries(struct stellar_srq *srq,
				    struct stellar_queue *ring)
{
	u32 producer = stellar_queue_producer(&srq->rq);
	u32 pending = producer - srq->consumer;
	u32 i;

	if (pending > srq->rq.num_entries || pending > ring->num_entries)
		return -EINVAL;
	for (i = srq->consumer; i != producer; i++)
		memcpy(stellar_queue_entry(ring, i),
		       stellar_queue_entry(&srq->rq, i), srq->rq.entry_size);
	ring->ring->consumer = srq->consumer;
	ring->ring->producer = producer;
	return 0;
}

/* Where a process wants the new ring described; NULL for kernel SRQs. */
static int stellar_srq_resize_response(struct ib_udata *udata,
				       void __user **response)
{
	struct stellar_modify_srq_cmd cmd;
	int ret;

	*response = NULL;
	if (!udata)
		return 0;
	if (udata->inlen < sizeof(cmd))
		return -EINVAL;
	ret = ib_copy_from_udata(&cmd, udata, sizeof(cmd));
	if (ret)
		return ret;
	if (!cmd.response)
		return -EINVAL;
	*response = u64_to_user_ptr(cmd.response);
	return 0;
}

/*
 * Give an SRQ a ring of @max_wr entries; the receive requests not yet
 * taken move to it in order.  A process must not post meanwhile (the
 * provider holds its SRQ lock) and posts to the new ring afterwards.
 */
static int stellar_srq_resize(struct stellar_srq *srq, u32 max_wr,
			      struct ib_udata *udata)
{
	struct stellar_modify_srq_resp resp = {};
	struct stellar_queue ring;
	void __user *response;
	unsigned long flags;
	int ret;

	ret = stellar_srq_resize_response(udata, &response);
	if (ret)
		return ret;
	ret = stellar_queue_init(&ring, udata, max_wr, srq->rq.entry_size,
				 &resp.rq);
	if (ret)
		return ret;
	/* Before the swap: the process must be able to find the new ring. */
	if (response && copy_to_user(response, &resp, sizeof(resp))) {
		ret = -EFAULT;
		goto out;
	}

	spin_lock_irqsave(&srq->rq.lock, flags);
	ret = stellar_srq_move_entries(srq, &ring);
	if (!ret)
		stellar_queue_swap_ring(&srq->rq, &ring);
	spin_unlock_irqrestore(&srq->rq.lock, flags);
out:
	/* The old ring after a swap, else the one just allocated. */
	stellar_queue_free(&ring);
	return ret;
}

/*
 * Everything is checked before anything changes: the limit (new or armed)
 * must stay below the ring size (new or current).
 */
int stellar_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		       enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct stellar_srq *srq = to_ssrq(ibsrq);
	u32 entries = srq->rq.num_entries;
	u32 limit = READ_ONCE(srq->limit);
	int ret;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	if (mask & IB_SRQ_MAX_WR) {
		if (attr->max_wr < 1 || attr->max_wr > STELLAR_MAX_SRQ_WR)
			return -EINVAL;
		entries = roundup_pow_of_two(attr->max_wr);
	}
	if (mask & IB_SRQ_LIMIT)
		limit = attr->srq_limit;
	if (limit >= entries)
		return -EINVAL;

	if (mask & IB_SRQ_MAX_WR) {
		ret = stellar_srq_resize(srq, attr->max_wr, udata);
		if (ret)
			return ret;
	}
	if (mask & IB_SRQ_LIMIT)
		WRITE_ONCE(srq->limit, limit);
	return 0;
}

int stellar_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct stellar_srq *srq = to_ssrq(ibsrq);

	attr->max_wr = srq->rq.num_entries;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = READ_ONCE(srq->limit);
	return 0;
}

int stellar_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct stellar_srq *srq = to_ssrq(ibsrq);

	xa_erase_irq(&to_sdev(ibsrq->device)->srqs, srq->srq_num);
	/* XRC requests that found it by number are done with it after this. */
	stellar_srq_put(srq);
	wait_for_completion(&srq->released);
	stellar_queue_free(&srq->rq);
	return 0;
}

int stellar_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad_wr)
{
	struct stellar_srq *srq = to_ssrq(ibsrq);
	int ret = 0;

	for (; wr; wr = wr->next) {
		ret = stellar_post_recv_wqe(&srq->rq, srq->max_sge, wr);
		if (ret) {
			*bad_wr = wr;
			break;
		}
	}
	return ret;
}
