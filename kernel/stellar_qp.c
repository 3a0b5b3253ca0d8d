// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: queue pairs - creation, the state machine and the
 * receive queue.  The wire transport that consumes the queues lives in
 * the requester/responder/completer files.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <linux/slab.h>
#include <rdma/ib_addr.h>

#include "stellar.h"

#define STELLAR_MAX_QPN		0xffffff

static int stellar_check_qp_caps(const struct ib_qp_cap *cap)
{
	if (cap->max_send_wr > STELLAR_MAX_QP_WR ||
	    cap->max_recv_wr > STELLAR_MAX_QP_WR ||
	    cap->max_send_sge > STELLAR_MAX_SGE ||
	    cap->max_recv_sge > STELLAR_MAX_SGE ||
	    cap->max_inline_data > STELLAR_MAX_INLINE_DATA)
		return -EINVAL;
	return 0;
}

static int stellar_check_qp_init(struct ib_qp_init_attr *init)
{
	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		break;
	case IB_QPT_GSI:
		if (init->port_num != 1)
			return -EINVAL;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags || init->srq)
		return -EOPNOTSUPP;
	if (!init->send_cq || !init->recv_cq)
		return -EINVAL;
	return stellar_check_qp_caps(&init->cap);
}

static int stellar_wq_init(struct stellar_wq *wq, u32 size, u32 max_sge)
{
	spin_lock_init(&wq->lock);
	wq->size = max_t(u32, size, 1);
	wq->max_sge = max_t(u32, max_sge, 1);
	wq->stride = sizeof(struct stellar_rwqe) +
		     wq->max_sge * sizeof(struct ib_sge);
	wq->buf = kvcalloc(wq->size, wq->stride, GFP_KERNEL);
	return wq->buf ? 0 : -ENOMEM;
}

static struct stellar_rwqe *stellar_wq_slot(struct stellar_wq *wq, u32 n)
{
	return wq->buf + (size_t)((wq->head + n) % wq->size) * wq->stride;
}

static int stellar_alloc_qpn(struct stellar_dev *sdev, struct stellar_qp *qp)
{
	u32 qpn;
	int ret;

	if (qp->ibqp.qp_type == IB_QPT_GSI) {
		ret = xa_insert_irq(&sdev->qps, 1, qp, GFP_KERNEL);
		qpn = 1;
	} else {
		ret = xa_alloc_cyclic_irq(&sdev->qps, &qpn, qp,
					  XA_LIMIT(STELLAR_FIRST_QPN,
						   STELLAR_MAX_QPN),
					  &sdev->next_qpn, GFP_KERNEL);
		ret = ret < 0 ? ret : 0;
	}
	if (ret)
		return ret == -EBUSY ? -ENOSPC : ret;
	qp->ibqp.qp_num = qpn;
	return 0;
}

int stellar_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		      struct ib_udata *udata)
{
	struct stellar_dev *sdev = to_sdev(ibqp->device);
	struct stellar_qp *qp = to_sqp(ibqp);
	int ret;

	ret = stellar_check_qp_init(init);
	if (ret)
		return ret;

	mutex_init(&qp->state_lock);
	qp->attr.qp_state = IB_QPS_RESET;
	qp->attr.port_num = 1;
	qp->sq_size = max_t(u32, init->cap.max_send_wr, 1);
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	ret = stellar_wq_init(&qp->rq, init->cap.max_recv_wr,
			      init->cap.max_recv_sge);
	if (ret)
		return ret;
	ret = stellar_alloc_qpn(sdev, qp);
	if (ret) {
		kvfree(qp->rq.buf);
		return ret;
	}
	init->cap.max_send_wr = qp->sq_size;
	init->cap.max_recv_wr = qp->rq.size;
	init->cap.max_recv_sge = qp->rq.max_sge;
	init->cap.max_send_sge = max_t(u32, init->cap.max_send_sge, 1);
	init->cap.max_inline_data = STELLAR_MAX_INLINE_DATA;
	return 0;
}

static void stellar_flush_rq(struct stellar_qp *qp, bool complete)
{
	struct stellar_cq *cq = to_scq(qp->ibqp.recv_cq);
	struct ib_wc wc = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp = &qp->ibqp,
	};
	struct stellar_wq *rq = &qp->rq;
	unsigned long flags;

	spin_lock_irqsave(&rq->lock, flags);
	while (rq->count) {
		wc.wr_id = stellar_wq_slot(rq, 0)->wr_id;
		rq->head = (rq->head + 1) % rq->size;
		rq->count--;
		if (complete) {
			spin_unlock_irqrestore(&rq->lock, flags);
			stellar_cq_complete(cq, &wc, false);
			spin_lock_irqsave(&rq->lock, flags);
		}
	}
	spin_unlock_irqrestore(&rq->lock, flags);
}

static int stellar_check_qp_attr(struct stellar_qp *qp,
				 struct ib_qp_attr *attr, int mask)
{
	enum ib_qp_state cur = mask & IB_QP_CUR_STATE ?
			       attr->cur_qp_state : qp->attr.qp_state;
	enum ib_qp_state next = mask & IB_QP_STATE ? attr->qp_state : cur;

	if (!ib_modify_qp_is_ok(cur, next, qp->ibqp.qp_type, mask))
		return -EINVAL;
	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) &&
	    attr->pkey_index >= STELLAR_PKEY_TBL_LEN)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > STELLAR_MAX_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > STELLAR_MAX_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_CAP) && stellar_check_qp_caps(&attr->cap))
		return -EINVAL;
	return 0;
}

/* Copy the attributes named by @mask into the QP's current attributes. */
static void stellar_apply_qp_attr(struct stellar_qp *qp,
				  const struct ib_qp_attr *attr, int mask)
{
	struct ib_qp_attr *cur = &qp->attr;

	if (mask & IB_QP_ACCESS_FLAGS)
		cur->qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PKEY_INDEX)
		cur->pkey_index = attr->pkey_index;
	if (mask & IB_QP_QKEY)
		cur->qkey = attr->qkey;
	if (mask & IB_QP_AV)
		rdma_replace_ah_attr(&cur->ah_attr, &attr->ah_attr);
	if (mask & IB_QP_PATH_MTU)
		cur->path_mtu = attr->path_mtu;
	if (mask & IB_QP_TIMEOUT)
		cur->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		cur->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		cur->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_RQ_PSN)
		cur->rq_psn = attr->rq_psn & STELLAR_MAX_QPN;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		cur->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		cur->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_SQ_PSN)
		cur->sq_psn = attr->sq_psn & STELLAR_MAX_QPN;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		cur->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_DEST_QPN)
		cur->dest_qp_num = attr->dest_qp_num;
	if (mask & IB_QP_STATE)
		cur->qp_state = attr->qp_state;
}

int stellar_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		      int mask, struct ib_udata *udata)
{
	struct stellar_qp *qp = to_sqp(ibqp);
	enum ib_qp_state old_state;
	int ret;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;

	mutex_lock(&qp->state_lock);
	ret = stellar_check_qp_attr(qp, attr, mask);
	if (ret)
		goto out;
	old_state = qp->attr.qp_state;
	stellar_apply_qp_attr(qp, attr, mask);
	if (qp->attr.qp_state == IB_QPS_ERR && old_state != IB_QPS_ERR)
		stellar_flush_rq(qp, true);
	else if (qp->attr.qp_state == IB_QPS_RESET)
		stellar_flush_rq(qp, false);
out:
	mutex_unlock(&qp->state_lock);
	return ret;
}

int stellar_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		     struct ib_qp_init_attr *init)
{
	struct stellar_qp *qp = to_sqp(ibqp);

	mutex_lock(&qp->state_lock);
	*attr = qp->attr;
	mutex_unlock(&qp->state_lock);

	/* The caller gets no reference on the source GID entry. */
	attr->ah_attr.grh.sgid_attr = NULL;

	attr->cur_qp_state = attr->qp_state;
	attr->cap.max_send_wr = qp->sq_size;
	attr->cap.max_recv_wr = qp->rq.size;
	attr->cap.max_recv_sge = qp->rq.max_sge;
	attr->cap.max_send_sge = STELLAR_MAX_SGE;
	attr->cap.max_inline_data = STELLAR_MAX_INLINE_DATA;

	memset(init, 0, sizeof(*init));
	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR :
					     IB_SIGNAL_REQ_WR;
	return 0;
}

int stellar_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct stellar_dev *sdev = to_sdev(ibqp->device);
	struct stellar_qp *qp = to_sqp(ibqp);

	xa_erase_irq(&sdev->qps, ibqp->qp_num);
	stellar_flush_rq(qp, qp->attr.qp_state != IB_QPS_RESET);
	rdma_destroy_ah_attr(&qp->attr.ah_attr);
	kvfree(qp->rq.buf);
	return 0;
}

/*
 * The send path arrives with the data-path transport; until then no send
 * work request is accepted.
 */
int stellar_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		      const struct ib_send_wr **bad_wr)
{
	*bad_wr = wr;
	return -EOPNOTSUPP;
}

static int stellar_post_one_recv(struct stellar_qp *qp,
				 const struct ib_recv_wr *wr)
{
	struct stellar_wq *rq = &qp->rq;
	struct stellar_rwqe *wqe;

	if (wr->num_sge < 0 || wr->num_sge > rq->max_sge)
		return -EINVAL;
	if (rq->count == rq->size)
		return -ENOMEM;
	wqe = stellar_wq_slot(rq, rq->count);
	wqe->wr_id = wr->wr_id;
	wqe->num_sge = wr->num_sge;
	memcpy(wqe->sge, wr->sg_list, wr->num_sge * sizeof(*wr->sg_list));
	rq->count++;
	return 0;
}

int stellar_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr)
{
	struct stellar_qp *qp = to_sqp(ibqp);
	enum ib_qp_state state = READ_ONCE(qp->attr.qp_state);
	unsigned long flags;
	int ret = 0;

	if (state == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->rq.lock, flags);
	for (; wr; wr = wr->next) {
		ret = stellar_post_one_recv(qp, wr);
		if (ret) {
			*bad_wr = wr;
			break;
		}
	}
	spin_unlock_irqrestore(&qp->rq.lock, flags);
	if (state == IB_QPS_ERR)
		stellar_flush_rq(qp, true);
	return ret;
}
