// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: transport life cycle - per-QP state, QP state changes,
 * the receive entry point and the transport workqueue.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <linux/slab.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_mad.h>

#include "stellar_xport.h"

static struct workqueue_struct *stellar_wq;

/*
 * Offer the stellar wire extensions to peers (read when a QP enters RTS)
 * and accept their offers.
 */
bool stellar_wire_ext = true;
module_param_named(wire_ext, stellar_wire_ext, bool, 0644);
MODULE_PARM_DESC(wire_ext,
		 "Offer and accept stellar RoCEv2 wire extensions (default: Y)");

/*
 * Offer them from RC QPs that do not spray too (read when a QP enters
 * RTS).  On one path selective recovery resends what was lost as soon as
 * go-back-N's sequence NAK would, and halves the window for a burst lost
 * as go-back-N does (Documentation/benchmarks.rst, "Selective recovery
 * by default").  A peer that does not answer the offer (rdma_rxe, a
 * stellar module with wire_ext off) keeps the QP on standard RoCEv2.
 */
bool stellar_wire_ext_all = true;
module_param_named(wire_ext_all, stellar_wire_ext_all, bool, 0644);
MODULE_PARM_DESC(wire_ext_all,
		 "Offer the wire extensions from RC QPs that do not spray too (default: Y)");

/**
 * stellar_xport_init() - create the transport workqueue
 *
 * Return: 0 or -ENOMEM.
 */
int stellar_xport_init(void)
{
	stellar_wq = alloc_workqueue("stellar_xport",
				     WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	return stellar_wq ? 0 : -ENOMEM;
}

void stellar_xport_exit(void)
{
	destroy_workqueue(stellar_wq);
	stellar_wq = NULL;
}

/* Queue one of a QP's work items unless the QP is going away. */
void stellar_xport_queue(struct stellar_qp_xport *xp, struct work_struct *w)
{
	if (test_bit(STELLAR_XP_DYING, &xp->flags))
		return;
	queue_work(stellar_wq ? stellar_wq : system_unbound_wq, w);
}

/**
 * stellar_xport_fatal() - a transport error: move the QP to ERR
 * @xp: the QP's transport
 *
 * The error work makes the state change without holding transport locks
 * (modify_qp takes them under qp->state_lock).  It runs on the system's
 * unbound workqueue, not the transport's: modify and destroy wait for
 * the transport's works under qp->state_lock, and on a workqueue with a
 * rescuer a work that waits for that lock could hold up the one they
 * wait for.
 */
void stellar_xport_fatal(struct stellar_qp_xport *xp)
{
	set_bit(STELLAR_XP_GO_ERROR, &xp->flags);
	if (!test_bit(STELLAR_XP_DYING, &xp->flags))
		queue_work(system_unbound_wq, &xp->err_work);
}

/**
 * stellar_xport_fail() - a transport error the consumer hears of by event
 * @xp: the QP's transport
 * @event: the affiliated asynchronous event to report, once the QP is in
 *	   the error state (the first error wins)
 */
void stellar_xport_fail(struct stellar_qp_xport *xp, enum ib_event_type event)
{
	atomic_cmpxchg(&xp->async_event, -1, event);
	stellar_xport_fatal(xp);
}

int stellar_xport_create(struct stellar_qp *qp)
{
	struct stellar_qp_xport *xp;

	xp = kvzalloc(sizeof(*xp), STELLAR_GFP_USER);
	if (!xp)
		return -ENOMEM;
	xp->swqe = kvcalloc(qp->sq.num_entries, sizeof(*xp->swqe),
			    STELLAR_GFP_USER);
	/* As large as the ring the process maps, so charged likewise. */
	xp->sq_copy = kvcalloc(qp->sq.num_entries, qp->sq.entry_size,
			       STELLAR_GFP_USER);
	xp->lat = stellar_lat_qp_alloc(qp->sq.num_entries);
	if (!xp->swqe || !xp->sq_copy || !xp->lat) {
		stellar_lat_qp_free(xp->lat);
		kvfree(xp->sq_copy);
		kvfree(xp->swqe);
		kvfree(xp);
		return -ENOMEM;
	}
	xp->qp = qp;
	xp->sdev = to_sdev(qp->ibqp.device);
	atomic_set(&xp->async_event, -1);
	mutex_init(&xp->req_mutex);
	mutex_init(&xp->resp_mutex);
	INIT_WORK(&xp->req_work, stellar_req_work);
	INIT_WORK(&xp->err_work, stellar_req_err_work);
	INIT_WORK(&xp->rx_work, stellar_rx_work);
	INIT_WORK(&xp->resp_work, stellar_resp_work);
	skb_queue_head_init(&xp->rxq);
	seqlock_init(&xp->rxf_lock);
	xa_init(&xp->ooo);
	timer_setup(&xp->retrans_timer, stellar_comp_timeout, 0);
	timer_setup(&xp->rnr_timer, stellar_comp_rnr_expired, 0);
	stellar_cnp_qp_init(xp);
	xp->cfg.state = IB_QPS_RESET;
	stellar_win_init(&xp->tx_win, STELLAR_TX_WINDOW);
	qp->xport = xp;
	return 0;
}

/**
 * stellar_xport_prepare() - allocate what a QP's next state needs
 * @qp: the QP, its state_lock held
 * @new_state: the state it is about to enter
 *
 * A connected QP gets its RC arrays (struct stellar_xport_rc) on its first
 * move to RTR, before the receive filter lets a request in; it keeps them
 * until it is destroyed, so that nothing that found them set sees them go.
 *
 * Return: 0, or -ENOMEM (the QP stays as it was).
 */
/**
 * stellar_xport_rx_settle() - handle what arrived before a move to ERR
 * @xp: the QP's transport
 *
 * A NIC has handled the packets it received before software moves the QP
 * to the error state; here they may still wait in the backlog for the
 * receive work.  An ACK among them completes a send that the move would
 * otherwise flush, and a consumer may take a flushed send for a lost one
 * (LIO's iSER target releases a flushed logout response as if it had
 * failed, and warns).  So the receive work first runs through what is
 * queued, and the ACKs it owes go out.  Not from the QP's own works: their
 * moves to ERR are the transport's, and the workqueue's rescuer
 * (WQ_MEM_RECLAIM) could end up waiting for itself.
 *
 * Context: process or another workqueue's work, under qp->state_lock.
 */
static void stellar_xport_rx_settle(struct stellar_qp_xport *xp)
{
	struct work_struct *self = current_work();

	if (self == &xp->rx_work || self == &xp->req_work ||
	    self == &xp->resp_work)
		return;
	flush_work(&xp->rx_work);
}

int stellar_xport_prepare(struct stellar_qp *qp, enum ib_qp_state new_state)
{
	struct stellar_qp_xport *xp = qp->xport;
	struct stellar_xport_rc *rc;

	if (new_state == IB_QPS_ERR && qp->attr.qp_state != IB_QPS_ERR)
		stellar_xport_rx_settle(xp);
	if (new_state != IB_QPS_RTR || stellar_qp_is_ud(qp) || xp->rc)
		return 0;
	rc = kvzalloc(sizeof(*rc), STELLAR_GFP_USER);
	if (!rc)
		return -ENOMEM;
	mutex_lock(&xp->req_mutex);
	mutex_lock(&xp->resp_mutex);
	/* Pairs with the acquire of lockless readers (statistics). */
	smp_store_release(&xp->rc, rc);
	mutex_unlock(&xp->resp_mutex);
	mutex_unlock(&xp->req_mutex);
	return 0;
}

static void stellar_xport_stop(struct stellar_qp_xport *xp)
{
	set_bit(STELLAR_XP_DYING, &xp->flags);
	del_timer_sync(&xp->retrans_timer);
	del_timer_sync(&xp->rnr_timer);
	stellar_cnp_qp_stop(xp);
	cancel_work_sync(&xp->req_work);
	cancel_work_sync(&xp->rx_work);
	cancel_work_sync(&xp->resp_work);
	/* Last: the works above may have queued it before they stopped. */
	cancel_work_sync(&xp->err_work);
	/* The work items may have armed the timers before they stopped. */
	del_timer_sync(&xp->retrans_timer);
	del_timer_sync(&xp->rnr_timer);
	stellar_cnp_qp_stop(xp);
}

/* Drop the QP's backlog, and its charge to the device. */
static void stellar_xport_rx_purge(struct stellar_qp_xport *xp)
{
	struct sk_buff *skb;

	while ((skb = stellar_xport_rx_dequeue(xp)))
		kfree_skb(skb);
}

void stellar_xport_destroy(struct stellar_qp *qp)
{
	struct stellar_qp_xport *xp = qp->xport;

	if (!xp)
		return;
	stellar_xport_stop(xp);
	if (xp->rc)
		stellar_spray_dev_retire(xp->sdev, &xp->rc->spray);
	stellar_xport_rx_purge(xp);
	stellar_resp_purge(xp);
	stellar_resp_drop_ahead(xp);
	xa_destroy(&xp->ooo);
	stellar_lat_qp_free(xp->lat);
	kvfree(xp->rc);
	kvfree(xp->sq_copy);
	kvfree(xp->swqe);
	kvfree(xp);
	qp->xport = NULL;
}

static u32 stellar_xport_mtu(struct stellar_qp *qp)
{
	struct stellar_dev *sdev = to_sdev(qp->ibqp.device);
	u32 link_mtu = ib_mtu_enum_to_int(iboe_get_mtu(READ_ONCE(sdev->ndev->mtu)));
	int path_mtu = ib_mtu_enum_to_int(qp->attr.path_mtu);

	if (stellar_qp_is_ud(qp) || path_mtu <= 0)
		return link_mtu > 0 ? link_mtu : 256;
	return path_mtu;
}

/* Copy what the transport needs from qp->attr (under both mutexes). */
static void stellar_xport_snapshot(struct stellar_qp_xport *xp)
{
	struct stellar_qp *qp = xp->qp;
	struct stellar_xport_cfg *cfg = &xp->cfg;

	cfg->state = qp->attr.qp_state;
	cfg->mtu = stellar_xport_mtu(qp);
	cfg->timeout = qp->attr.timeout;
	cfg->retry_cnt = qp->attr.retry_cnt;
	cfg->rnr_retry = qp->attr.rnr_retry;
	cfg->min_rnr_timer = qp->attr.min_rnr_timer;
	cfg->max_rd_atomic = max_t(u32, qp->attr.max_rd_atomic, 1);
	cfg->max_dest_rd_atomic = clamp_t(u32, qp->attr.max_dest_rd_atomic,
					  1, STELLAR_MAX_RD_ATOM);
	cfg->access = qp->attr.qp_access_flags;
	cfg->dest_qpn = qp->attr.dest_qp_num;
	cfg->qkey = qp->ibqp.qp_type == IB_QPT_GSI ? IB_QP1_QKEY :
						     qp->attr.qkey;
	cfg->av = qp->av;
	cfg->sport = rdma_get_udp_sport(qp->av.flow_label, qp->ibqp.qp_num,
					cfg->dest_qpn);
}

/* What the receive softirq may queue from now on (under both mutexes). */
static void stellar_xport_set_filter(struct stellar_qp_xport *xp)
{
	const struct stellar_xport_cfg *cfg = &xp->cfg;
	struct stellar_rx_filter f = { };
	bool connected = !stellar_qp_is_ud(xp->qp);

	f.requests = cfg->state == IB_QPS_RTR || cfg->state == IB_QPS_RTS ||
		     cfg->state == IB_QPS_SQD || cfg->state == IB_QPS_SQE;
	/* XRC: requests go to the target half, responses to the initiator. */
	if (xp->qp->ibqp.qp_type == IB_QPT_XRC_INI)
		f.requests = false;
	f.responses = (xp->qp->ibqp.qp_type == IB_QPT_RC ||
		       xp->qp->ibqp.qp_type == IB_QPT_XRC_INI) &&
		      (cfg->state == IB_QPS_RTS || cfg->state == IB_QPS_SQD);
	/* UD takes what fits its receive buffer: the netdev MTU may grow. */
	f.mtu = connected ? cfg->mtu : 0;
	f.peer_valid = connected && cfg->av.valid;
	f.peer = cfg->av.dgid;
	write_seqlock_bh(&xp->rxf_lock);
	xp->rxf = f;
	write_sequnlock_bh(&xp->rxf_lock);
}

static void stellar_xport_enter_state(struct stellar_qp_xport *xp,
				      enum ib_qp_state old_state)
{
	enum ib_qp_state state = xp->cfg.state;

	if (state == old_state)
		return;
	switch (state) {
	case IB_QPS_RESET:
		clear_bit(STELLAR_XP_ERROR, &xp->flags);
		clear_bit(STELLAR_XP_GO_ERROR, &xp->flags);
		atomic_set(&xp->async_event, -1);
		del_timer(&xp->retrans_timer);
		del_timer(&xp->rnr_timer);
		stellar_resp_purge(xp);
		stellar_resp_drop_ahead(xp);
		break;
	case IB_QPS_RTR:
		stellar_resp_reset(xp);
		stellar_cnp_resp_reset(xp);
		break;
	case IB_QPS_RTS:
		if (old_state != IB_QPS_RTR)
			break;
		stellar_req_reset(xp);
		stellar_cnp_req_reset(xp);
		break;
	case IB_QPS_ERR:
		set_bit(STELLAR_XP_ERROR, &xp->flags);
		del_timer(&xp->retrans_timer);
		del_timer(&xp->rnr_timer);
		stellar_resp_flush(xp);
		stellar_xport_queue(xp, &xp->req_work);
		break;
	default:
		break;
	}
}

void stellar_xport_modify(struct stellar_qp *qp, int mask,
			  enum ib_qp_state old_state)
{
	struct stellar_qp_xport *xp = qp->xport;

	mutex_lock(&xp->req_mutex);
	mutex_lock(&xp->resp_mutex);
	stellar_xport_snapshot(xp);
	stellar_xport_set_filter(xp);
	stellar_xport_enter_state(xp, old_state);
	mutex_unlock(&xp->resp_mutex);
	mutex_unlock(&xp->req_mutex);
	/* Work posted before RTS (or while paused) can go now. */
	stellar_xport_queue(xp, &xp->req_work);
}

void stellar_xport_kick(struct stellar_qp *qp)
{
	stellar_lat_doorbell(qp->xport);
	stellar_xport_queue(qp->xport, &qp->xport->req_work);
}

static bool stellar_class_matches(const struct stellar_qp *qp, u8 qp_class)
{
	switch (qp->ibqp.qp_type) {
	case IB_QPT_RC:
		return qp_class == STELLAR_QPC_RC || qp_class == STELLAR_QPC_CNP;
	case IB_QPT_UC:
		return qp_class == STELLAR_QPC_UC || qp_class == STELLAR_QPC_CNP;
	case IB_QPT_XRC_INI:
	case IB_QPT_XRC_TGT:
		return qp_class == STELLAR_QPC_XRC || qp_class == STELLAR_QPC_CNP;
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return qp_class == STELLAR_QPC_UD;
	default:
		return false;
	}
}

/*
 * The checks of the receive work that need no lock, before the packet
 * costs backlog memory: the QP's state takes it, a connected QP's peer
 * sent it, its payload fits the path MTU.  Counts what fails.
 */
static bool stellar_rx_filter_pass(struct stellar_qp_xport *xp,
				   const struct sk_buff *skb,
				   const struct stellar_pkt *pkt)
{
	const struct stellar_opcode_info *info = stellar_opcode_info(pkt->opcode);
	struct stellar_rx_filter f;
	unsigned int seq;

	do {
		seq = read_seqbegin(&xp->rxf_lock);
		f = xp->rxf;
	} while (read_seqretry(&xp->rxf_lock, seq));
	if (!((info->flags & STELLAR_OPF_RESPONSE) ? f.responses : f.requests) ||
	    test_bit(STELLAR_XP_ERROR, &xp->flags)) {
		stellar_xstat(xp, STELLAR_XS_DROP_STATE, 1);
		return false;
	}
	if (f.peer_valid && !stellar_skb_from_gid(skb, &f.peer)) {
		stellar_xstat(xp, STELLAR_XS_DROP_SOURCE, 1);
		return false;
	}
	if (f.mtu && pkt->payload_len > f.mtu) {
		stellar_xstat(xp, STELLAR_XS_DROP_HEADER, 1);
		return false;
	}
	return true;
}

/* Charge @bytes to the device's receive backlog; false if over its cap. */
static bool stellar_rx_charge(struct stellar_dev *sdev, unsigned int bytes)
{
	long queued = atomic_long_add_return(bytes, &sdev->rx_queued);
	long max = atomic_long_read(&sdev->rx_queued_max);

	if (queued > stellar_rx_queue_bytes()) {
		atomic_long_sub(bytes, &sdev->rx_queued);
		stellar_count(sdev, STELLAR_STAT_RX_DROP_QUEUE_FULL, 1);
		return false;
	}
	while (queued > max &&
	       !atomic_long_try_cmpxchg(&sdev->rx_queued_max, &max, queued))
		;
	return true;
}

/* Put @skb on the QP's backlog unless that holds too many or too much. */
static bool stellar_rx_backlog_add(struct stellar_qp_xport *xp,
				   struct sk_buff *skb)
{
	unsigned long flags;
	bool room;

	spin_lock_irqsave(&xp->rxq.lock, flags);
	room = skb_queue_len(&xp->rxq) < STELLAR_RX_BACKLOG &&
	       xp->rxq_bytes + skb->truesize <= STELLAR_RX_BACKLOG_BYTES;
	if (room) {
		stellar_lat_rx_stamp(skb);
		__skb_queue_tail(&xp->rxq, skb);
		xp->rxq_bytes += skb->truesize;
	}
	spin_unlock_irqrestore(&xp->rxq.lock, flags);
	if (!room)
		stellar_xstat(xp, STELLAR_XS_DROP_BACKLOG, 1);
	return room;
}

/**
 * stellar_xport_rx_dequeue() - take the oldest packet of a QP's backlog
 * @xp: the QP's transport
 *
 * Return: the skb, uncharged from the backlog and the device, or NULL.
 */
struct sk_buff *stellar_xport_rx_dequeue(struct stellar_qp_xport *xp)
{
	struct sk_buff *skb;
	unsigned long flags;

	spin_lock_irqsave(&xp->rxq.lock, flags);
	skb = __skb_dequeue(&xp->rxq);
	if (skb)
		xp->rxq_bytes -= skb->truesize;
	spin_unlock_irqrestore(&xp->rxq.lock, flags);
	if (skb)
		atomic_long_sub(skb->truesize, &xp->sdev->rx_queued);
	return skb;
}

/**
 * stellar_xport_enqueue() - queue a packet for a QP's receive work
 * @qp: the QP, held by the caller
 * @skb: the packet, consumed (queued or dropped and counted)
 * @pkt: its parsed headers
 *
 * Context: softirq or BH disabled.
 */
void stellar_xport_enqueue(struct stellar_qp *qp, struct sk_buff *skb,
				  const struct stellar_pkt *pkt)
{
	struct stellar_qp_xport *xp = qp->xport;
	unsigned int truesize = skb->truesize;

	if (!stellar_class_matches(qp, stellar_opcode_info(pkt->opcode)->qp_class) ||
	    (pkt->pkey & 0x7fff) != (STELLAR_DEFAULT_PKEY & 0x7fff)) {
		stellar_xstat(xp, STELLAR_XS_DROP_HEADER, 1);
		kfree_skb(skb);
		return;
	}
	if (!stellar_rx_filter_pass(xp, skb, pkt) ||
	    !stellar_rx_charge(xp->sdev, truesize)) {
		kfree_skb(skb);
		return;
	}
	if (!stellar_rx_backlog_add(xp, skb)) {
		atomic_long_sub(truesize, &xp->sdev->rx_queued);
		kfree_skb(skb);
		return;
	}
	stellar_xport_queue(xp, &xp->rx_work);
}

void stellar_xport_rcv(struct stellar_dev *sdev, struct sk_buff *skb,
		       const struct stellar_pkt *pkt)
{
	struct stellar_qp *qp;

	if (pkt->dest_qpn == STELLAR_MCAST_QPN) {
		stellar_mcast_rcv(sdev, skb, pkt);
		return;
	}
	qp = stellar_qp_get(sdev, pkt->dest_qpn);
	if (!qp) {
		stellar_count(sdev, STELLAR_STAT_RX_DROP_NO_QP, 1);
		kfree_skb(skb);
		return;
	}
	stellar_xport_enqueue(qp, skb, pkt);
	stellar_qp_put(qp);
}

static const char * const stellar_xstat_names[__STELLAR_XS_MAX] = {
	[STELLAR_XS_TX_PACKETS] = "tx_packets",
	[STELLAR_XS_TX_BYTES] = "tx_bytes",
	[STELLAR_XS_RX_PACKETS] = "rx_packets",
	[STELLAR_XS_RX_BYTES] = "rx_bytes",
	[STELLAR_XS_RETRANSMITS] = "retransmits",
	[STELLAR_XS_TIMEOUTS] = "timeouts",
	[STELLAR_XS_ACKS_SENT] = "acks_sent",
	[STELLAR_XS_NAKS_SENT] = "naks_sent",
	[STELLAR_XS_RNR_NAKS_SENT] = "rnr_naks_sent",
	[STELLAR_XS_NAKS_RCVD] = "naks_rcvd",
	[STELLAR_XS_RNR_NAKS_RCVD] = "rnr_naks_rcvd",
	[STELLAR_XS_DUPLICATES] = "duplicates",
	[STELLAR_XS_OUT_OF_ORDER] = "out_of_order",
	[STELLAR_XS_DROP_BACKLOG] = "drop_backlog",
	[STELLAR_XS_DROP_WINDOW] = "drop_window",
	[STELLAR_XS_DROP_STATE] = "drop_state",
	[STELLAR_XS_DROP_HEADER] = "drop_header",
	[STELLAR_XS_DROP_NO_RECV] = "drop_no_recv",
	[STELLAR_XS_TX_ERRORS] = "tx_errors",
	[STELLAR_XS_X_RCVD] = "ext_hdr_rcvd",
	[STELLAR_XS_OOO_PLACED] = "ooo_placed",
	[STELLAR_XS_DROP_PLACE] = "drop_place",
	[STELLAR_XS_SACKS_SENT] = "sacks_sent",
	[STELLAR_XS_SACKS_RCVD] = "sacks_rcvd",
	[STELLAR_XS_SEL_RETRANSMITS] = "sel_retransmits",
	[STELLAR_XS_EARLY_TIMEOUTS] = "early_timeouts",
	[STELLAR_XS_ECN_CE_RCVD] = "ecn_ce_rcvd",
	[STELLAR_XS_ECN_ECHOES_RCVD] = "ecn_echoes_rcvd",
	[STELLAR_XS_DROP_SOURCE] = "drop_source",
	[STELLAR_XS_NAK_RD_LIMIT] = "nak_rd_limit",
	[STELLAR_XS_DROP_RD_DUP] = "drop_rd_duplicate",
	[STELLAR_XS_CNP_SENT] = "cnp_sent",
	[STELLAR_XS_CNP_RCVD] = "cnp_rcvd",
	[STELLAR_XS_CC_RATE_CUTS] = "cc_rate_cuts",
	[STELLAR_XS_CC_RATE_INCREASES] = "cc_rate_increases",
	[STELLAR_XS_CC_PACED] = "cc_paced",
	[STELLAR_XS_ECHOES_ASKED] = "echoes_asked",
	[STELLAR_XS_ECHOES_SENT] = "echoes_sent",
	[STELLAR_XS_ECHOES_RCVD] = "echoes_rcvd",
};

/**
 * stellar_xport_show() - print a QP's transport state and counters
 * @m: the seq_file
 * @qp: the QP
 */
void stellar_xport_show(struct seq_file *m, struct stellar_qp *qp)
{
	struct stellar_qp_xport *xp = qp->xport;
	int i;

	seq_printf(m, "sq_psn: %u\nuna_psn: %u\nepsn: %u\nmsn: %u\nooo_packets: %u\n",
		   READ_ONCE(xp->sq_psn), READ_ONCE(xp->una_psn),
		   READ_ONCE(xp->win.epsn), READ_ONCE(xp->msn),
		   READ_ONCE(xp->win.nr_ooo));
	seq_printf(m, "ext_offered: %d\next_on: %d\next_peer: %d\n",
		   READ_ONCE(xp->x_offer), READ_ONCE(xp->x_on),
		   READ_ONCE(xp->peer_x));
	seq_printf(m, "srtt_us: %u\nrttvar_us: %u\nspray_paths: %u\n",
		   READ_ONCE(xp->srtt_us), READ_ONCE(xp->rttvar_us),
		   stellar_xport_spray_paths(xp));
	stellar_cnp_show(m, xp);
	for (i = 0; i < __STELLAR_XS_MAX; i++)
		seq_printf(m, "%s: %llu\n", stellar_xstat_names[i],
			   (u64)atomic64_read(&xp->stats[i]));
}

/**
 * stellar_xport_walk_stats() - report each per-QP counter
 * @qp: the QP
 * @fn: called with each counter's name and value; a non-zero return
 *	stops the walk
 * @arg: passed to @fn
 *
 * Return: 0, or what @fn returned.
 */
int stellar_xport_walk_stats(struct stellar_qp *qp, stellar_stat_fn fn,
				void *arg)
{
	struct stellar_qp_xport *xp = qp->xport;
	int i, ret;

	for (i = 0; i < __STELLAR_XS_MAX; i++) {
		ret = fn(arg, stellar_xstat_names[i],
			 atomic64_read(&xp->stats[i]));
		if (ret)
			return ret;
	}
	return 0;
}
