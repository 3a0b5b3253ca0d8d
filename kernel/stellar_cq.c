// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: completion queues.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <linux/slab.h>

#include "stellar.h"

int stellar_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		      struct ib_udata *udata)
{
	struct stellar_cq *cq = to_scq(ibcq);

	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > STELLAR_MAX_CQE)
		return -EINVAL;

	cq->wc = kvcalloc(attr->cqe, sizeof(*cq->wc), GFP_KERNEL);
	if (!cq->wc)
		return -ENOMEM;
	spin_lock_init(&cq->lock);
	cq->size = attr->cqe;
	ibcq->cqe = attr->cqe;
	return 0;
}

int stellar_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	kvfree(to_scq(ibcq)->wc);
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

/**
 * stellar_cq_complete() - add a completion and signal the consumer
 * @cq: the completion queue
 * @wc: the completion; copied
 * @solicited: the completion is for a message with the solicited event bit
 *
 * A full queue is a consumer error: the completion is lost and the CQ
 * reports IB_EVENT_CQ_ERR once.
 *
 * Context: any; takes the CQ lock with interrupts disabled.
 */
void stellar_cq_complete(struct stellar_cq *cq, const struct ib_wc *wc,
			 bool solicited)
{
	bool signal = false, overflow = false;
	unsigned long flags;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->count == cq->size) {
		overflow = !cq->overflowed;
		cq->overflowed = true;
	} else {
		cq->wc[(cq->head + cq->count) % cq->size] = *wc;
		cq->count++;
		if (cq->notify == IB_CQ_NEXT_COMP ||
		    (cq->notify == IB_CQ_SOLICITED && solicited)) {
			cq->notify = 0;
			signal = true;
		}
	}
	spin_unlock_irqrestore(&cq->lock, flags);

	if (overflow)
		stellar_cq_overflow(cq);
	if (signal && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

int stellar_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct stellar_cq *cq = to_scq(ibcq);
	unsigned long flags;
	int n = 0;

	spin_lock_irqsave(&cq->lock, flags);
	while (n < num_entries && cq->count) {
		wc[n++] = cq->wc[cq->head];
		cq->head = (cq->head + 1) % cq->size;
		cq->count--;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

int stellar_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct stellar_cq *cq = to_scq(ibcq);
	unsigned long irqflags;
	int missed = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && cq->count)
		missed = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return missed;
}
