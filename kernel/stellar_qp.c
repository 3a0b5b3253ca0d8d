// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: queue pairs - creation, the state machine and the send
 * and receive rings.  The transport that consumes the rings lives in the
 * requester/responder/completer files (stellar_transport.h).
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <linux/slab.h>
#include <rdma/ib_addr.h>
#include <rdma/uverbs_ioctl.h>

#include "stellar.h"
#include "stellar_mem.h"
#include "stellar_transport.h"

#define STELLAR_MAX_QPN		0xffffff
/* QPNs of QPs other than the GSI QP: max_qp of them, handed out cyclically. */
#define STELLAR_QPN_LIMIT	XA_LIMIT(STELLAR_FIRST_QPN, \
					 STELLAR_FIRST_QPN + STELLAR_MAX_QP - 1)

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

/* XRC's halves, which have one CQ (send) or none and no receive queue. */
static int stellar_check_xrc_init(struct ib_qp_init_attr *init,
				  struct ib_udata *udata)
{
	if (init->srq || init->recv_cq)
		return -EINVAL;
	if (init->qp_type == IB_QPT_XRC_INI)
		return init->send_cq ? 0 : -EINVAL;
	/* The core creates a target QP itself, without udata. */
	return !udata && init->xrcd && !init->send_cq ? 0 : -EINVAL;
}

static int stellar_check_qp_init(struct ib_qp_init_attr *init,
				 struct ib_udata *udata)
{
	int ret;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		break;
	case IB_QPT_GSI:
		if (init->port_num != 1 || udata)
			return -EINVAL;
		break;
	case IB_QPT_XRC_INI:
	case IB_QPT_XRC_TGT:
		ret = stellar_check_xrc_init(init, udata);
		if (ret)
			return ret;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags)
		return -EOPNOTSUPP;
	if (init->qp_type != IB_QPT_XRC_INI &&
	    init->qp_type != IB_QPT_XRC_TGT &&
	    (!init->send_cq || !init->recv_cq))
		return -EINVAL;
	if (udata && udata->outlen < sizeof(struct stellar_create_qp_resp))
		return -EINVAL;
	return stellar_check_qp_caps(&init->cap);
}

/**
 * stellar_qp_get() - look a QP up by number and take a reference
 * @sdev: device
 * @qpn: QP number
 *
 * The RDMA core frees a QP's memory as soon as stellar_destroy_qp()
 * returns, without an RCU grace period, so the reference is taken under
 * the table's lock: once destroy has erased the QP and waited for its
 * references, no lookup can still be touching it.
 *
 * Context: any.
 * Return: the QP or NULL; release with stellar_qp_put().
 */
struct stellar_qp *stellar_qp_get(struct stellar_dev *sdev, u32 qpn)
{
	struct stellar_qp *qp;
	unsigned long flags;

	xa_lock_irqsave(&sdev->qps, flags);
	qp = xa_load(&sdev->qps, qpn);
	if (qp && !refcount_inc_not_zero(&qp->ref))
		qp = NULL;
	xa_unlock_irqrestore(&sdev->qps, flags);
	return qp;
}

/**
 * stellar_qp_get_next() - take a reference on the next QP of a device
 * @sdev: device
 * @index: the first QPN to look at; set to the QPN of the QP returned
 *
 * For walks that must read a QP's fields: the reference is taken under
 * the table's lock, as in stellar_qp_get().
 *
 * Context: any.
 * Return: the QP or NULL at the end; release with stellar_qp_put().
 */
struct stellar_qp *stellar_qp_get_next(struct stellar_dev *sdev,
				       unsigned long *index)
{
	struct stellar_qp *qp;
	unsigned long flags;

	xa_lock_irqsave(&sdev->qps, flags);
	qp = xa_find(&sdev->qps, index, ULONG_MAX, XA_PRESENT);
	while (qp && !refcount_inc_not_zero(&qp->ref))
		qp = xa_find_after(&sdev->qps, index, ULONG_MAX, XA_PRESENT);
	xa_unlock_irqrestore(&sdev->qps, flags);
	return qp;
}

void stellar_qp_put(struct stellar_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref))
		complete(&qp->released);
}

/**
 * stellar_qp_event() - report an asynchronous event of a QP
 * @qp: the QP
 * @type: IB_EVENT_QP_FATAL, IB_EVENT_QP_REQ_ERR, IB_EVENT_QP_ACCESS_ERR...
 *
 * Context: process context (the handlers of kernel ULPs may sleep).
 */
void stellar_qp_event(struct stellar_qp *qp, enum ib_event_type type)
{
	struct ib_event event = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = type,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&event, qp->ibqp.qp_context);
}

/*
 * Reserve a QPN for @qp.  The QP stays invisible to lookups until
 * stellar_publish_qpn(), so a creation that fails after this step frees
 * a QP no one else can hold.  Return: 0, or -ENOMEM beyond the device's
 * max_qp (stellar_limits.c) or the module's.
 */
static int stellar_alloc_qpn(struct stellar_dev *sdev, struct stellar_qp *qp)
{
	u32 qpn;
	int ret;

	if (qp->ibqp.qp_type == IB_QPT_GSI) {
		ret = xa_insert_irq(&sdev->qps, 1, NULL, GFP_KERNEL);
		qpn = 1;
	} else {
		ret = stellar_limit_qp_get(sdev);
		if (ret)
			return ret;
		ret = xa_alloc_cyclic_irq(&sdev->qps, &qpn, NULL,
					  STELLAR_QPN_LIMIT, &sdev->next_qpn,
					  GFP_KERNEL);
		ret = ret < 0 ? ret : 0;
		if (ret)
			stellar_limit_qp_put(sdev);
	}
	/* -EBUSY: max_qp QPs exist (or the GSI QP does). */
	if (ret)
		return ret == -EBUSY ? -ENOMEM : ret;
	qp->ibqp.qp_num = qpn;
	qp->serial = atomic64_inc_return(&sdev->mem->next_serial);
	return 0;
}

/* Give the QPN back, and the QP's place under the device's max_qp. */
static void stellar_free_qpn(struct stellar_dev *sdev, struct stellar_qp *qp)
{
	xa_erase_irq(&sdev->qps, qp->ibqp.qp_num);
	if (qp->ibqp.qp_type != IB_QPT_GSI)
		stellar_limit_qp_put(sdev);
}

/* Make a fully created QP visible: the reserved slot needs no memory. */
static void stellar_publish_qpn(struct stellar_dev *sdev, struct stellar_qp *qp)
{
	WARN_ON(xa_is_err(xa_store_irq(&sdev->qps, qp->ibqp.qp_num, qp,
				       GFP_KERNEL)));
}

static int stellar_qp_init_sq(struct stellar_qp *qp,
			      struct ib_qp_init_attr *init,
			      struct ib_udata *udata,
			      struct stellar_create_qp_resp *resp)
{
	u32 data;

	qp->sq_max_sge = max_t(u32, init->cap.max_send_sge, 1);
	qp->sq_max_inline = init->cap.max_inline_data;
	data = max_t(u32, qp->sq_max_sge * sizeof(struct stellar_sge),
		     qp->sq_max_inline);
	return stellar_queue_init(&qp->sq, udata, init->cap.max_send_wr,
				  sizeof(struct stellar_sq_wqe) + data,
				  &resp->sq);
}

static int stellar_qp_init_rq(struct stellar_qp *qp,
			      struct ib_qp_init_attr *init,
			      struct ib_udata *udata,
			      struct stellar_create_qp_resp *resp)
{
	if (init->srq) {
		qp->srq = to_ssrq(init->srq);
		return 0;
	}
	qp->rq_max_sge = max_t(u32, init->cap.max_recv_sge, 1);
	return stellar_queue_init(&qp->rq, udata, init->cap.max_recv_wr,
				  sizeof(struct stellar_rq_wqe) +
				  qp->rq_max_sge * sizeof(struct stellar_sge),
				  &resp->rq);
}

static void stellar_qp_free_queues(struct stellar_qp *qp)
{
	if (!qp->srq)
		stellar_queue_free(&qp->rq);
	stellar_queue_free(&qp->sq);
}

/* XRC QPs have no receive queue of their own (nor a target QP a send queue). */
static bool stellar_qp_has_rq(const struct stellar_qp *qp)
{
	return !qp->srq && qp->ibqp.qp_type != IB_QPT_XRC_INI &&
	       qp->ibqp.qp_type != IB_QPT_XRC_TGT;
}

static void stellar_qp_report_caps(struct stellar_qp *qp,
				   struct ib_qp_init_attr *init)
{
	if (qp->ibqp.qp_type != IB_QPT_XRC_TGT) {
		init->cap.max_send_wr = qp->sq.num_entries;
		init->cap.max_send_sge = qp->sq_max_sge;
		init->cap.max_inline_data = qp->sq_max_inline;
	}
	if (stellar_qp_has_rq(qp)) {
		init->cap.max_recv_wr = qp->rq.num_entries;
		init->cap.max_recv_sge = qp->rq_max_sge;
	}
}

int stellar_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		      struct ib_udata *udata)
{
	struct stellar_dev *sdev = to_sdev(ibqp->device);
	struct stellar_create_qp_resp resp = {};
	struct stellar_qp *qp = to_sqp(ibqp);
	int ret;

	ret = stellar_check_qp_init(init, udata);
	if (ret)
		return ret;

	mutex_init(&qp->state_lock);
	refcount_set(&qp->ref, 1);
	init_completion(&qp->released);
	qp->attr.qp_state = IB_QPS_RESET;
	qp->attr.port_num = 1;
	qp->is_user = udata;
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;

	ret = stellar_qp_init_sq(qp, init, udata, &resp);
	if (ret)
		return ret;
	ret = stellar_qp_init_rq(qp, init, udata, &resp);
	if (ret)
		goto err_sq;
	ret = stellar_xport_create(qp);
	if (ret)
		goto err_rq;
	ret = stellar_alloc_qpn(sdev, qp);
	if (ret)
		goto err_xport;
	resp.qp_num = ibqp->qp_num;
	if (udata) {
		ret = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (ret)
			goto err_qpn;
	}
	stellar_qp_report_caps(qp, init);
	stellar_publish_qpn(sdev, qp);
	return 0;

err_qpn:
	stellar_free_qpn(sdev, qp);
err_xport:
	stellar_xport_destroy(qp);
err_rq:
	if (!qp->srq)
		stellar_queue_free(&qp->rq);
err_sq:
	stellar_queue_free(&qp->sq);
	return ret;
}

/* Complete every posted receive of the QP's own RQ with a flush error. */
static void stellar_flush_rq(struct stellar_qp *qp)
{
	struct stellar_cqe cqe = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp_num = qp->ibqp.qp_num,
		.port_num = 1,
		.reserved1 = (uintptr_t)&qp->ibqp,
	};

	if (!stellar_qp_has_rq(qp))
		return;
	while (!stellar_take_recv_wr_id(&qp->rq, &qp->rq_consumer,
					&cqe.wr_id))
		stellar_cq_post(to_scq(qp->ibqp.recv_cq), &cqe, false);
}

/* RESET empties both rings without completions. */
static void stellar_reset_queues(struct stellar_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->sq.lock, flags);
	qp->sq_consumer = stellar_queue_producer(&qp->sq);
	stellar_queue_set_consumer(&qp->sq, qp->sq_consumer);
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	if (qp->srq)
		return;
	spin_lock_irqsave(&qp->rq.lock, flags);
	qp->rq_consumer = stellar_queue_producer(&qp->rq);
	stellar_queue_set_consumer(&qp->rq, qp->rq_consumer);
	spin_unlock_irqrestore(&qp->rq.lock, flags);
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
		cur->dest_qp_num = attr->dest_qp_num & STELLAR_MAX_QPN;
	if (mask & IB_QP_STATE)
		WRITE_ONCE(cur->qp_state, attr->qp_state);
}

static int stellar_modify_qp_locked(struct stellar_qp *qp,
				    struct ib_qp_attr *attr, int mask)
{
	enum ib_qp_state old_state = qp->attr.qp_state;
	struct stellar_av av = {};
	int ret;

	ret = stellar_check_qp_attr(qp, attr, mask);
	if (ret)
		return ret;
	if (mask & IB_QP_STATE) {
		ret = stellar_xport_prepare(qp, attr->qp_state);
		if (ret)
			return ret;
	}
	if (mask & IB_QP_AV) {
		ret = stellar_av_from_ah_attr(&attr->ah_attr, &av);
		if (ret)
			return ret;
	}
	stellar_apply_qp_attr(qp, attr, mask);
	if (mask & IB_QP_AV) {
		rdma_replace_ah_attr(&qp->attr.ah_attr, &attr->ah_attr);
		qp->av = av;
	}
	stellar_xport_modify(qp, mask, old_state);
	if (qp->attr.qp_state == IB_QPS_ERR && old_state != IB_QPS_ERR)
		stellar_flush_rq(qp);
	else if (qp->attr.qp_state == IB_QPS_RESET)
		stellar_reset_queues(qp);
	return 0;
}

/**
 * stellar_qp_error_if() - move a QP to ERR for a transport error
 * @qp: the QP
 * @still_wanted: tells, under qp->state_lock, whether the error still
 *	stands; a move to RESET since it was raised withdraws it
 *
 * The error work waits for the state lock: a consumer that saw the
 * error's completion may meanwhile have reset the QP and connected it
 * anew, and the old error must not put the new connection in ERR.
 *
 * Return: true if the QP moved to ERR.
 */
bool stellar_qp_error_if(struct stellar_qp *qp,
			 bool (*still_wanted)(struct stellar_qp *qp))
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	bool moved = false;

	mutex_lock(&qp->state_lock);
	if (still_wanted(qp))
		moved = !stellar_modify_qp_locked(qp, &attr, IB_QP_STATE);
	mutex_unlock(&qp->state_lock);
	return moved;
}

int stellar_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		      int mask, struct ib_udata *udata)
{
	struct stellar_qp *qp = to_sqp(ibqp);
	int ret;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;

	mutex_lock(&qp->state_lock);
	ret = stellar_modify_qp_locked(qp, attr, mask);
	mutex_unlock(&qp->state_lock);
	return ret;
}

/*
 * Attributes the caller did not ask for are undefined: those that would
 * help inject packets into the connection (PSNs, the peer's QPN) read 0
 * unless the task may see them.  The RDMA core's restrack (rdma resource
 * show qp) queries with an empty mask, for any local user, in the
 * requester's context; owners that want them ask for them (ibv_query_qp
 * with IBV_QP_SQ_PSN...).
 */
static void stellar_query_qp_hide(struct stellar_qp *qp,
				  struct ib_qp_attr *attr, int mask)
{
	const int all = IB_QP_SQ_PSN | IB_QP_RQ_PSN | IB_QP_DEST_QPN;

	if ((mask & all) == all ||
	    stellar_may_see_qp_detail(to_sdev(qp->ibqp.device)))
		return;
	if (!(mask & IB_QP_SQ_PSN))
		attr->sq_psn = 0;
	if (!(mask & IB_QP_RQ_PSN))
		attr->rq_psn = 0;
	if (!(mask & IB_QP_DEST_QPN))
		attr->dest_qp_num = 0;
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
	stellar_query_qp_hide(qp, attr, mask);
	attr->cur_qp_state = attr->qp_state;
	attr->cap.max_send_wr = qp->sq.num_entries;
	attr->cap.max_send_sge = qp->sq_max_sge;
	attr->cap.max_inline_data = qp->sq_max_inline;
	attr->cap.max_recv_wr = stellar_qp_has_rq(qp) ? qp->rq.num_entries : 0;
	attr->cap.max_recv_sge = stellar_qp_has_rq(qp) ? qp->rq_max_sge : 0;

	memset(init, 0, sizeof(*init));
	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR :
					     IB_SIGNAL_REQ_WR;
	return 0;
}

int stellar_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct stellar_dev *sdev = to_sdev(ibqp->device);
	struct stellar_qp *qp = to_sqp(ibqp);
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	/* Outstanding work requests complete with flush errors. */
	mutex_lock(&qp->state_lock);
	stellar_xport_drain(qp);
	if (qp->attr.qp_state != IB_QPS_RESET &&
	    qp->attr.qp_state != IB_QPS_ERR)
		stellar_modify_qp_locked(qp, &attr, IB_QP_STATE);
	mutex_unlock(&qp->state_lock);

	stellar_mcast_qp_destroy(qp);
	stellar_free_qpn(sdev, qp);
	stellar_qp_put(qp);
	wait_for_completion(&qp->released);
	stellar_xport_destroy(qp);
	rdma_destroy_ah_attr(&qp->attr.ah_attr);
	stellar_qp_free_queues(qp);
	return 0;
}

/*
 * The work requests a QP's type takes.  An XRC send QP takes what an RC
 * QP does, but for memory windows; an XRC receive QP has no send queue.
 */
static bool stellar_opcode_ok(struct stellar_qp *qp, u8 opcode)
{
	bool rc = qp->ibqp.qp_type == IB_QPT_RC ||
		  qp->ibqp.qp_type == IB_QPT_XRC_INI;

	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT)
		return false;
	switch (opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
		return true;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return rc || qp->ibqp.qp_type == IB_QPT_UC;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_RDMA_READ:
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
	case STELLAR_WR_ATOMIC_WRITE:
		return rc;
	case IB_WR_LOCAL_INV:
		return rc || qp->ibqp.qp_type == IB_QPT_UC || !qp->is_user;
	case IB_WR_BIND_MW:
		/* Windows are a user verb: no ib_send_wr carries a bind. */
		return qp->is_user && (qp->ibqp.qp_type == IB_QPT_RC ||
				       qp->ibqp.qp_type == IB_QPT_UC);
	case IB_WR_REG_MR:
		return !qp->is_user;
	default:
		return false;
	}
}

/**
 * stellar_sq_pending() - send WQEs published and not yet retired
 * @qp: the QP
 *
 * Return: producer - consumer, 0 if a process corrupted its counter.
 */
u32 stellar_sq_pending(struct stellar_qp *qp)
{
	return stellar_queue_pending(&qp->sq, READ_ONCE(qp->sq_consumer));
}

void stellar_sq_retire(struct stellar_qp *qp, u32 count)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->sq.lock, flags);
	qp->sq_consumer += count;
	stellar_queue_set_consumer(&qp->sq, qp->sq_consumer);
	spin_unlock_irqrestore(&qp->sq.lock, flags);
}

/* Copy the SGEs or inline data that the copied header @wqe announces. */
static int stellar_sq_copy_data(struct stellar_qp *qp,
				struct stellar_sq_wqe *wqe, const u8 *src)
{
	u8 *dst = (u8 *)(wqe + 1);

	if (wqe->flags & STELLAR_WQE_INLINE) {
		/* Its num_sge is not checked: nothing may use its SGEs. */
		if (wqe->inline_len > qp->sq_max_inline ||
		    stellar_wr_is_rd_atomic(wqe->opcode))
			return -EINVAL;
		memcpy(dst, src, wqe->inline_len);
		return 0;
	}
	if (wqe->num_sge > qp->sq_max_sge)
		return -EINVAL;
	memcpy(dst, src, wqe->num_sge * sizeof(struct stellar_sge));
	return 0;
}

int stellar_sq_fetch(struct stellar_qp *qp, u32 index,
		     struct stellar_sq_wqe *wqe)
{
	const u8 *entry;

	if (index - READ_ONCE(qp->sq_consumer) >= stellar_sq_pending(qp))
		return -ENOENT;
	entry = stellar_queue_entry(&qp->sq, index);
	/*
	 * The process may rewrite the entry under us: each byte is read
	 * once, and only the copy is checked and used.
	 */
	memcpy(wqe, entry, sizeof(*wqe));
	if (!stellar_opcode_ok(qp, wqe->opcode))
		return -EINVAL;
	return stellar_sq_copy_data(qp, wqe, entry + sizeof(*wqe));
}

int stellar_rq_take(struct stellar_qp *qp, struct stellar_recv_wqe *wqe)
{
	struct stellar_srq *srq = qp->srq;

	if (srq)
		return stellar_srq_take(srq, wqe);
	return stellar_take_recv_wqe(&qp->rq, &qp->rq_consumer,
				     qp->rq_max_sge, wqe);
}

static int stellar_wr_inline(struct stellar_qp *qp,
			     const struct ib_send_wr *wr,
			     struct stellar_sq_wqe *wqe)
{
	u8 *dst = (u8 *)(wqe + 1);
	u32 len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		if (wr->sg_list[i].length > qp->sq_max_inline - len)
			return -EINVAL;
		memcpy(dst + len, (void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		len += wr->sg_list[i].length;
	}
	wqe->inline_len = len;
	return 0;
}

static void stellar_wr_sges(const struct ib_send_wr *wr,
			    struct stellar_sq_wqe *wqe)
{
	struct stellar_sge *sge = (struct stellar_sge *)(wqe + 1);
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
}

static void stellar_wr_remote(const struct ib_send_wr *wr,
			      struct stellar_sq_wqe *wqe)
{
	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		wqe->u.rdma.remote_addr = rdma_wr(wr)->remote_addr;
		wqe->u.rdma.rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		wqe->u.atomic.remote_addr = atomic_wr(wr)->remote_addr;
		wqe->u.atomic.compare_add = atomic_wr(wr)->compare_add;
		wqe->u.atomic.swap = atomic_wr(wr)->swap;
		wqe->u.atomic.rkey = atomic_wr(wr)->rkey;
		break;
	case IB_WR_REG_MR:
		wqe->u.raw[0] = (uintptr_t)reg_wr(wr)->mr;
		wqe->u.raw[1] = reg_wr(wr)->key;
		wqe->u.raw[2] = reg_wr(wr)->access;
		break;
	default:
		break;
	}
}

/* Translate a kernel work request into a ring entry. */
static int stellar_wr_to_wqe(struct stellar_qp *qp,
			     const struct ib_send_wr *wr,
			     struct stellar_sq_wqe *wqe)
{
	if (!stellar_opcode_ok(qp, wr->opcode) || wr->num_sge < 0 ||
	    wr->num_sge > qp->sq_max_sge)
		return -EINVAL;
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = wr->wr_id;
	wqe->opcode = wr->opcode;
	wqe->num_sge = wr->num_sge;
	wqe->flags = wr->send_flags & (STELLAR_WQE_FENCE |
				       STELLAR_WQE_SIGNALED |
				       STELLAR_WQE_SOLICITED |
				       STELLAR_WQE_INLINE);
	if (wr->opcode == IB_WR_SEND_WITH_INV ||
	    wr->opcode == IB_WR_LOCAL_INV)
		wqe->imm_data = cpu_to_be32(wr->ex.invalidate_rkey);
	else
		wqe->imm_data = wr->ex.imm_data;
	if (qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI) {
		wqe->u.ud.ah_handle = to_sah(ud_wr(wr)->ah)->handle;
		wqe->u.ud.remote_qpn = ud_wr(wr)->remote_qpn;
		wqe->u.ud.remote_qkey = ud_wr(wr)->remote_qkey;
	} else {
		stellar_wr_remote(wr, wqe);
	}
	if (wqe->flags & STELLAR_WQE_INLINE)
		return stellar_wr_inline(qp, wr, wqe);
	stellar_wr_sges(wr, wqe);
	return 0;
}

static int stellar_post_one_send(struct stellar_qp *qp,
				 const struct ib_send_wr *wr)
{
	struct stellar_queue *sq = &qp->sq;
	u32 producer = sq->ring->producer;

	if (producer - qp->sq_consumer >= sq->num_entries)
		return -ENOMEM;
	if (stellar_wr_to_wqe(qp, wr, stellar_queue_entry(sq, producer)))
		return -EINVAL;
	stellar_queue_set_producer(sq, producer + 1);
	return 0;
}

static bool stellar_can_send(struct stellar_qp *qp)
{
	enum ib_qp_state state = READ_ONCE(qp->attr.qp_state);

	return state == IB_QPS_RTS || state == IB_QPS_SQD ||
	       state == IB_QPS_SQE || state == IB_QPS_ERR;
}

int stellar_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		      const struct ib_send_wr **bad_wr)
{
	struct stellar_qp *qp = to_sqp(ibqp);
	unsigned long flags;
	int ret = 0;

	/* A process publishes WQEs in its mapped ring: this is a doorbell. */
	if (qp->is_user) {
		stellar_xport_kick_inline(qp);
		stellar_db_wake(to_sdev(ibqp->device));
		return 0;
	}
	if (!stellar_can_send(qp)) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->sq.lock, flags);
	for (; wr; wr = wr->next) {
		ret = stellar_post_one_send(qp, wr);
		if (ret) {
			*bad_wr = wr;
			break;
		}
	}
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	stellar_xport_kick(qp);
	return ret;
}

int stellar_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr)
{
	struct stellar_qp *qp = to_sqp(ibqp);
	enum ib_qp_state state = READ_ONCE(qp->attr.qp_state);
	int ret = 0;

	if (!stellar_qp_has_rq(qp) || state == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}
	for (; wr; wr = wr->next) {
		ret = stellar_post_recv_wqe(&qp->rq, qp->rq_max_sge, wr);
		if (ret) {
			*bad_wr = wr;
			break;
		}
	}
	if (state == IB_QPS_ERR)
		stellar_flush_rq(qp);
	return ret;
}
