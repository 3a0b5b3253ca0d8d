// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: the completer - ACKs, NAKs, READ responses and atomic
 * ACKs retire send WQEs; the retransmission and RNR timers; completions.
 *
 * ACKs are cumulative: an ACK for PSN p finishes every SEND and WRITE
 * whose last packet is at or before p.  A READ or atomic finishes only
 * with its responses; an ACK beyond one means they were lost, and the
 * requester resends from the first missing response.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include "stellar_spray_dev.h"
#include "stellar_xport.h"

/* RNR NAK timer field (IBTA table 45) in microseconds. */
static const u32 stellar_rnr_usecs[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

static u8 stellar_wc_opcode(u8 wr_opcode)
{
	switch (wr_opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case STELLAR_WR_ATOMIC_WRITE:
		return STELLAR_WC_ATOMIC_WRITE;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_WR_BIND_MW:
		return IB_WC_BIND_MW;
	default:
		return IB_WC_SEND;
	}
}

static void stellar_post_send_cqe(struct stellar_qp_xport *xp, u64 wr_id,
				  u8 wr_opcode, u8 status, u32 byte_len)
{
	struct stellar_qp *qp = xp->qp;
	struct stellar_cqe cqe = {
		.wr_id = wr_id,
		.status = status,
		.opcode = stellar_wc_opcode(wr_opcode),
		.byte_len = byte_len,
		.qp_num = qp->ibqp.qp_num,
		.port_num = 1,
		.reserved1 = (uintptr_t)&qp->ibqp,
	};

	stellar_cq_post(to_scq(qp->ibqp.send_cq), &cqe, false);
}

/**
 * stellar_wqe_done() - a send WQE finished (completes when it is oldest)
 * @xp: the transport, req_mutex held
 * @index: its ring index
 * @status: IB_WC_* status; an error moves the QP to ERR
 */
void stellar_wqe_done(struct stellar_qp_xport *xp, u32 index, u8 status)
{
	struct stellar_swqe *s = stellar_swqe_at(xp, index);

	s->state = STELLAR_SWQE_DONE;
	s->status = status;
	stellar_lat_done(xp, index, status == IB_WC_SUCCESS);
	if (status != IB_WC_SUCCESS)
		stellar_xport_fatal(xp);
}

/**
 * stellar_comp_retire() - complete finished WQEs in order
 * @xp: the transport, req_mutex held
 *
 * Stops after an error completion: the rest is flushed.
 */
void stellar_comp_retire(struct stellar_qp_xport *xp)
{
	struct stellar_qp *qp = xp->qp;
	u32 index = READ_ONCE(qp->sq_consumer);
	u32 count = 0, i;

	while (stellar_index_before(index + count, xp->next_new)) {
		struct stellar_swqe *s = stellar_swqe_at(xp, index + count);

		if (s->state != STELLAR_SWQE_DONE)
			break;
		count++;
		if (s->status != IB_WC_SUCCESS)
			break;
	}
	/*
	 * A consumer that sees a completion may post into the slot at once:
	 * free the slots first.  What the CQEs need is in the kernel's own
	 * slot state, which only the requester (under req_mutex) reuses.
	 */
	if (count)
		stellar_sq_retire(qp, count);
	for (i = 0; i < count; i++) {
		struct stellar_swqe *s = stellar_swqe_at(xp, index + i);

		if (s->signaled || s->status != IB_WC_SUCCESS)
			stellar_post_send_cqe(xp, s->wr_id, s->opcode,
					      s->status, s->length);
		stellar_lat_retired(xp, index + i,
				    s->signaled && s->status == IB_WC_SUCCESS);
		s->state = STELLAR_SWQE_NEW;
	}
	/* The send position never lags behind retired WQEs. */
	if (stellar_index_before(xp->req_index, index + count)) {
		xp->req_index = index + count;
		xp->req_pkt = 0;
	}
	if (stellar_index_before(xp->next_new, xp->req_index))
		xp->next_new = xp->req_index;
}

/**
 * stellar_comp_flush() - complete every outstanding send WQE with a flush
 * @xp: the transport, req_mutex held, QP in ERR
 */
void stellar_comp_flush(struct stellar_qp_xport *xp)
{
	struct stellar_qp *qp = xp->qp;
	u32 pending, i;

	if (xp->req_pkt)
		xp->req_index++;
	xp->req_pkt = 0;
	stellar_comp_retire(xp);
	pending = stellar_sq_pending(qp);
	for (i = 0; i < pending; i++) {
		u32 index = READ_ONCE(qp->sq_consumer);
		struct stellar_sq_wqe *wqe = stellar_sq_copy(xp, index);
		struct stellar_swqe *s = stellar_swqe_at(xp, index);
		u8 status = IB_WC_WR_FLUSH_ERR, opcode;
		u32 length = 0;
		u64 wr_id;

		/* Never started: copy it now; a malformed one names its wr_id. */
		if (!stellar_index_before(index, xp->next_new))
			stellar_sq_fetch(qp, index, wqe);
		wr_id = wqe->wr_id;
		opcode = wqe->opcode;
		if (s->state == STELLAR_SWQE_DONE &&
		    s->status != IB_WC_SUCCESS) {
			wr_id = s->wr_id;
			opcode = s->opcode;
			status = s->status;
			length = s->length;
		}
		s->state = STELLAR_SWQE_NEW;
		/*
		 * As in stellar_comp_retire(): the slot is free before its
		 * CQE, for a consumer that posts again on a flush.
		 */
		stellar_sq_retire(qp, 1);
		stellar_post_send_cqe(xp, wr_id, opcode, status, length);
	}
	xp->req_index = READ_ONCE(qp->sq_consumer);
	xp->next_new = xp->req_index;
}

/*
 * The local ACK timer: 4.096 us * 2^timeout, doubled after each timeout
 * in a row without progress up to four times that (the range IBA allows),
 * so that a peer that is briefly unable to run is not given up on early.
 * IBA sets the least time a retry waits; in extended mode it is also at
 * least twice the RTT-based timeout (at most STELLAR_RETRY_RTT_MAX_US),
 * so that queues that make the RTT longer than the local ACK timeout do
 * not use up the retries of a QP whose packets are only late: the
 * RTT-based probe still goes out after one RTT-based timeout.
 */
static unsigned long stellar_ib_timeout(struct stellar_qp_xport *xp)
{
	u64 nsecs = 4096ULL << min_t(u8, xp->cfg.timeout, 31);

	if (xp->x_on && xp->srtt_us)
		nsecs = max_t(u64, nsecs, 2ULL * NSEC_PER_USEC *
			      min_t(u32, xp->srtt_us + 4 * xp->rttvar_us,
				    STELLAR_RETRY_RTT_MAX_US));
	nsecs <<= min_t(u8, xp->backoff, STELLAR_BACKOFF_MAX);
	return max_t(unsigned long, nsecs_to_jiffies64(nsecs), 1);
}

/*
 * The ACK timer: the local ACK timeout, or in extended mode the RTT-based
 * one (stellar_rec_rto_us()), whose expiry only probes.  A timer due in n
 * jiffies fires at the n-th tick, which may be as early as n - 1 jiffies
 * from now: one more keeps the RTT-based one from firing before its time
 * (at HZ=250 the 2 ms minimum is one jiffy, which could fire at once).
 */
static unsigned long stellar_ack_timeout(struct stellar_qp_xport *xp)
{
	unsigned long ib = stellar_ib_timeout(xp);
	u32 rto_us;

	if (!xp->x_on || !xp->srtt_us)
		return ib;
	rto_us = stellar_rec_rto_us(xp, min_t(u64, jiffies_to_usecs(ib) / 2,
					      U32_MAX));
	return min(usecs_to_jiffies(rto_us) + 1, ib);
}

static bool stellar_comp_outstanding(struct stellar_qp_xport *xp)
{
	return stellar_qp_is_reliable(xp->qp) && xp->una_psn != xp->psn_high;
}

/**
 * stellar_comp_arm_timer() - start the ACK timer if packets are in flight
 * @xp: the transport, req_mutex held
 */
void stellar_comp_arm_timer(struct stellar_qp_xport *xp)
{
	if (!xp->cfg.timeout || xp->rnr_wait || !stellar_comp_outstanding(xp) ||
	    timer_pending(&xp->retrans_timer))
		return;
	xp->timer_base = jiffies;
	mod_timer(&xp->retrans_timer, jiffies + stellar_ack_timeout(xp));
}

/* The peer made progress: reset the retry state, restart the ACK timer. */
static void stellar_comp_progress(struct stellar_qp_xport *xp)
{
	xp->retry_left = xp->cfg.retry_cnt;
	xp->rnr_left = xp->cfg.rnr_retry;
	xp->backoff = 0;
	xp->resp_gap = 0;
	xp->rd_ooo = 0;
	xp->retrying = false;
	xp->timeout_deferred = false;
	xp->timer_base = jiffies;
	if (!stellar_comp_outstanding(xp))
		del_timer(&xp->retrans_timer);
	else if (xp->cfg.timeout)
		mod_timer(&xp->retrans_timer,
			  jiffies + stellar_ack_timeout(xp));
	/* The window moved: only WQEs waiting to be sent need the work. */
	if (stellar_req_has_work(xp))
		stellar_xport_queue(xp, &xp->req_work);
}

void stellar_comp_timeout(struct timer_list *t)
{
	struct stellar_qp_xport *xp = from_timer(xp, t, retrans_timer);

	set_bit(STELLAR_XP_TIMEOUT, &xp->flags);
	stellar_xport_queue(xp, &xp->req_work);
}

void stellar_comp_rnr_expired(struct timer_list *t)
{
	struct stellar_qp_xport *xp = from_timer(xp, t, rnr_timer);

	set_bit(STELLAR_XP_RNR_DONE, &xp->flags);
	stellar_xport_queue(xp, &xp->req_work);
}

/* Complete the oldest unfinished WQE with @status (retries exhausted). */
static void stellar_comp_fail_head(struct stellar_qp_xport *xp, u8 status)
{
	u32 index;

	for (index = READ_ONCE(xp->qp->sq_consumer);
	     stellar_index_before(index, xp->next_new); index++) {
		if (stellar_swqe_at(xp, index)->state != STELLAR_SWQE_DONE) {
			stellar_wqe_done(xp, index, status);
			return;
		}
	}
	stellar_xport_fatal(xp);
}

/**
 * stellar_comp_retry() - resend from the oldest unacknowledged PSN
 * @xp: the transport, req_mutex held
 * @timeout: the ACK timer expired (else: a sequence error was reported)
 *
 * Both kinds of retry use up the retry count, which progress restores.
 * A sequence error reported again before any progress (a duplicated NAK,
 * more responses beyond the same gap) is already being handled by the
 * resend in progress and is ignored; if that resend is lost, the timer
 * fires.  The window shrinks so that a resend after a loss burst does not
 * cause the next one: to a few packets after a timeout, by half after a
 * sequence error, and in go-back-N grows back by one packet per window
 * from half its size (stellar_win.h).
 */
static void stellar_comp_retry(struct stellar_qp_xport *xp, bool timeout)
{
	if (!timeout && xp->retrying)
		return;
	if (!xp->retry_left) {
		stellar_comp_fail_head(xp, IB_WC_RETRY_EXC_ERR);
		return;
	}
	xp->retry_left--;
	xp->retrying = true;
	xp->resp_gap = 0;
	xp->timer_base = jiffies;
	stellar_rec_forget_sacks(xp);
	/* Extended mode: losses are the spray's and DCQCN's to judge. */
	stellar_win_loss(&xp->tx_win, timeout, !xp->x_on);
	if (timeout) {
		if (xp->backoff < STELLAR_BACKOFF_MAX)
			xp->backoff++;
		if (xp->x_offer && !xp->x_on && xp->rc->spray.nr_paths > 1)
			xp->offer_sport = stellar_spray_sport(&xp->rc->spray,
				(xp->cfg.retry_cnt - xp->retry_left) %
				xp->rc->spray.nr_paths);
	}
	stellar_req_rewind(xp, xp->una_psn);
	stellar_xport_queue(xp, &xp->req_work);
}

/*
 * An expired timer gets one more period instead of a retry while the
 * requester waits for its congestion control rate (what it has not sent
 * yet cannot have been acknowledged; once the window is full it no longer
 * waits), or, once until progress, while responses wait unprocessed in
 * the backlog (this host did not get to run).
 */
static bool stellar_comp_defer_timeout(struct stellar_qp_xport *xp)
{
	if (stellar_cnp_pacing(xp)) {
		mod_timer(&xp->retrans_timer, jiffies + stellar_ack_timeout(xp));
		return true;
	}
	if (xp->timeout_deferred || skb_queue_empty(&xp->rxq))
		return false;
	xp->timeout_deferred = true;
	mod_timer(&xp->retrans_timer, jiffies + stellar_ack_timeout(xp));
	stellar_xport_queue(xp, &xp->rx_work);
	return true;
}

/*
 * Extended mode: the RTT-based timer expired before a local ACK timeout
 * passed since the last progress (or retry): probe (stellar_rec_probe()),
 * no retry is counted.  Return: true if handled.
 */
static bool stellar_comp_early_timeout(struct stellar_qp_xport *xp)
{
	if (!xp->x_on ||
	    time_after_eq(jiffies, xp->timer_base + stellar_ib_timeout(xp)))
		return false;
	stellar_rec_probe(xp);
	mod_timer(&xp->retrans_timer, jiffies + stellar_ack_timeout(xp));
	return true;
}

/**
 * stellar_comp_handle_timers() - act on expired timers
 * @xp: the transport, req_mutex held
 */
void stellar_comp_handle_timers(struct stellar_qp_xport *xp)
{
	if (test_and_clear_bit(STELLAR_XP_RNR_DONE, &xp->flags) &&
	    xp->rnr_wait) {
		xp->rnr_wait = false;
		/*
		 * Extended mode: the peer kept what followed the refused
		 * packet and says so in its selective ACKs; resend just that
		 * packet.  Else go back to it.
		 */
		if (!xp->x_on || !stellar_req_resend_psn(xp, xp->una_psn))
			stellar_req_rewind(xp, xp->una_psn);
	}
	if (test_and_clear_bit(STELLAR_XP_TIMEOUT, &xp->flags) &&
	    stellar_comp_outstanding(xp) && !xp->rnr_wait &&
	    !stellar_comp_defer_timeout(xp) &&
	    !stellar_comp_early_timeout(xp)) {
		xp->timeout_deferred = false;
		stellar_xstat(xp, STELLAR_XS_TIMEOUTS, 1);
		if (xp->x_on)
			stellar_rec_timeout_loss(xp);
		stellar_comp_retry(xp, true);
	}
}

/* The slot holding @psn among the sent WQEs, or NULL. */
static struct stellar_swqe *stellar_comp_find(struct stellar_qp_xport *xp,
					      u32 psn, u32 *index_out)
{
	u32 index;

	for (index = READ_ONCE(xp->qp->sq_consumer);
	     stellar_index_before(index, xp->next_new); index++) {
		struct stellar_swqe *s = stellar_swqe_at(xp, index);

		if (s->state == STELLAR_SWQE_DONE || !s->npkts)
			continue;
		if (stellar_psn_between(psn, s->first_psn,
					stellar_psn_add(s->first_psn,
							s->npkts - 1))) {
			*index_out = index;
			return s;
		}
		if (stellar_psn_before(psn, s->first_psn))
			return NULL;
	}
	return NULL;
}

/*
 * Finish every SEND/WRITE WQE whose packets are all at or before @psn.
 * Return: false if a READ/atomic at or before @psn lacks its responses
 * (the caller resends it).
 */
static bool stellar_comp_ack_through(struct stellar_qp_xport *xp, u32 psn)
{
	u32 index;

	for (index = READ_ONCE(xp->qp->sq_consumer);
	     stellar_index_before(index, xp->next_new); index++) {
		struct stellar_swqe *s = stellar_swqe_at(xp, index);
		u32 last = stellar_psn_add(s->first_psn, s->npkts - 1);

		if (s->state == STELLAR_SWQE_DONE || !s->npkts)
			continue;
		if (stellar_psn_before(psn, s->first_psn))
			break;
		if (s->opcode == IB_WR_RDMA_READ ||
		    s->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
		    s->opcode == IB_WR_ATOMIC_FETCH_AND_ADD)
			return false;
		/* @psn < psn_high: every packet up to @psn went out once. */
		if (stellar_psn_before(psn, last))
			break;
		stellar_wqe_done(xp, index, IB_WC_SUCCESS);
	}
	return true;
}

/*
 * Advance una_psn to @psn + 1 if that is progress, and act on it; true if
 * it was.  Packets acknowledged while they were being resent are not sent
 * again, and the window grows by what was acknowledged.
 */
static bool stellar_comp_advance(struct stellar_qp_xport *xp, u32 psn)
{
	u32 next = stellar_psn_add(psn, 1);

	if (!stellar_psn_after(next, xp->una_psn) ||
	    stellar_psn_after(next, xp->psn_high))
		return false;
	if (xp->x_on)
		stellar_rec_acked(xp, xp->una_psn, next);
	stellar_win_acked(&xp->tx_win, stellar_psn_diff(next, xp->una_psn));
	xp->una_psn = next;
	if (stellar_psn_before(xp->sq_psn, next))
		stellar_req_rewind(xp, next);
	stellar_comp_progress(xp);
	return true;
}

/*
 * The READ or atomic at ring index @index finished with @status; its last
 * response is @psn.  The WQE it held back (fence, READ/atomic limit) may
 * go now: stellar_req_has_work() counts on this to queue the requester
 * even when the response acknowledges nothing new.
 */
static void stellar_comp_rd_finished(struct stellar_qp_xport *xp, u32 index,
				     u8 status, u32 psn)
{
	stellar_wqe_done(xp, index, status);
	if (!stellar_comp_advance(xp, psn) && stellar_req_has_work(xp))
		stellar_xport_queue(xp, &xp->req_work);
}

/* A response for a PSN never sent, or long acknowledged. */
static bool stellar_comp_psn_valid(struct stellar_qp_xport *xp, u32 psn)
{
	return !stellar_psn_before(psn, stellar_psn_add(xp->una_psn, -1)) &&
	       stellar_psn_before(psn, xp->psn_high);
}

/*
 * An ACK for @psn; @repeat: a later SACK block, whose cumulative PSN
 * repeats that of the ACK before it (counting it again would take a gap
 * in READ responses for a loss sooner).
 */
static void stellar_comp_ack(struct stellar_qp_xport *xp, u32 psn,
			     bool repeat)
{
	bool complete = stellar_comp_ack_through(xp, psn);

	if (!complete) {
		if (repeat)
			return;
		/*
		 * Responses to a READ/atomic before @psn were lost; or, with
		 * a stellar peer whose packets may take different paths,
		 * they are still on their way: wait for a few such ACKs.
		 */
		if (xp->x_on && xp->resp_gap < STELLAR_RESP_GAP_THRESHOLD) {
			xp->resp_gap++;
			return;
		}
		stellar_comp_retry(xp, false);
		return;
	}
	stellar_comp_advance(xp, psn);
}

static void stellar_comp_rnr(struct stellar_qp_xport *xp, u32 psn, u8 timer)
{
	stellar_xstat(xp, STELLAR_XS_RNR_NAKS_RCVD, 1);
	if (stellar_comp_ack_through(xp, stellar_psn_add(psn, -1)))
		stellar_comp_advance(xp, stellar_psn_add(psn, -1));
	if (!xp->rnr_left) {
		stellar_comp_fail_head(xp, IB_WC_RNR_RETRY_EXC_ERR);
		return;
	}
	if (xp->cfg.rnr_retry != 7)
		xp->rnr_left--;
	xp->rnr_wait = true;
	del_timer(&xp->retrans_timer);
	mod_timer(&xp->rnr_timer,
		  jiffies + max_t(unsigned long,
				  usecs_to_jiffies(stellar_rnr_usecs[timer]), 1));
}

static u8 stellar_nak_status(u8 code)
{
	switch (code) {
	case STELLAR_NAK_INVALID_REQ:
		return IB_WC_REM_INV_REQ_ERR;
	case STELLAR_NAK_REM_ACCESS_ERR:
		return IB_WC_REM_ACCESS_ERR;
	default:
		return IB_WC_REM_OP_ERR;
	}
}

static void stellar_comp_nak(struct stellar_qp_xport *xp, u32 psn, u8 code)
{
	struct stellar_swqe *s;
	u32 index;

	stellar_xstat(xp, STELLAR_XS_NAKS_RCVD, 1);
	if (stellar_comp_ack_through(xp, stellar_psn_add(psn, -1)))
		stellar_comp_advance(xp, stellar_psn_add(psn, -1));
	if (code == STELLAR_NAK_PSN_SEQ_ERR) {
		if (stellar_psn_between(psn, xp->una_psn,
					stellar_psn_add(xp->psn_high, -1)))
			stellar_comp_retry(xp, false);
		return;
	}
	/*
	 * A NAK naming no request in flight is a ghost (a duplicate of one
	 * acted on, or one from before the QP was reset): dropped, as a
	 * stray ACK is, rather than failing whatever is in flight now.
	 */
	s = stellar_comp_find(xp, psn, &index);
	if (!s) {
		stellar_xstat(xp, STELLAR_XS_DUPLICATES, 1);
		return;
	}
	stellar_wqe_done(xp, index, stellar_nak_status(code));
}

static void stellar_comp_aeth(struct stellar_qp_xport *xp,
			      const struct stellar_pkt *pkt)
{
	u8 type = FIELD_GET(STELLAR_AETH_TYPE, pkt->aeth.syndrome);
	u8 value = FIELD_GET(STELLAR_AETH_VALUE, pkt->aeth.syndrome);
	bool sack = (pkt->ext & STELLAR_EXT_X) && xp->x_on;

	switch (type) {
	case STELLAR_AETH_TYPE_ACK:
		xp->ack_newest = pkt->psn;
		if (sack)
			xp->ack_newest = stellar_psn_add(pkt->psn,
							 pkt->sack.newest);
		xp->ack_ecn = xp->x_on && pkt->becn;
		if (xp->ack_ecn)
			stellar_xstat(xp, STELLAR_XS_ECN_ECHOES_RCVD, 1);
		stellar_comp_ack(xp, pkt->psn,
				 sack && pkt->sack.base > STELLAR_SACK_FIRST_BASE);
		if (sack)
			stellar_rec_sack(xp, pkt);
		break;
	case STELLAR_AETH_TYPE_RNR_NAK:
		stellar_comp_rnr(xp, pkt->psn, value);
		break;
	case STELLAR_AETH_TYPE_NAK:
		stellar_comp_nak(xp, pkt->psn, value);
		break;
	default:
		stellar_xstat(xp, STELLAR_XS_DROP_HEADER, 1);
		break;
	}
}

/*
 * The READ or atomic WQE a response belongs to: everything before it is
 * implicitly acknowledged.
 */
static struct stellar_swqe *stellar_comp_rd_wqe(struct stellar_qp_xport *xp,
						u32 psn, u32 *index)
{
	struct stellar_swqe *s = stellar_comp_find(xp, psn, index);

	if (!s || (s->opcode != IB_WR_RDMA_READ &&
		   s->opcode != IB_WR_ATOMIC_CMP_AND_SWP &&
		   s->opcode != IB_WR_ATOMIC_FETCH_AND_ADD))
		return NULL;
	/* An earlier READ/atomic still lacks responses: these are early. */
	if (!stellar_comp_ack_through(xp, stellar_psn_add(s->first_psn, -1)))
		return NULL;
	return s;
}

static bool stellar_read_resp_fits(struct stellar_qp_xport *xp,
				   const struct stellar_swqe *s,
				   const struct stellar_pkt *pkt)
{
	const struct stellar_opcode_info *info = stellar_opcode_info(pkt->opcode);
	bool last = s->rcvd_pkts == s->npkts - 1;
	u32 expect = last ? s->length - s->rcvd_pkts * xp->cfg.mtu :
			    xp->cfg.mtu;

	if (s->opcode != IB_WR_RDMA_READ || pkt->payload_len != expect)
		return false;
	if (s->rcvd_pkts == 0 && last)
		return info->flags & STELLAR_OPF_ONLY;
	if (s->rcvd_pkts == 0)
		return info->flags & STELLAR_OPF_FIRST;
	/*
	 * Past the start, the answer to a re-request from this PSN begins a
	 * new response sequence (FIRST or ONLY); the answer to an earlier
	 * request continues one.  Either carries the bytes due.
	 */
	if (last)
		return info->flags & (STELLAR_OPF_LAST | STELLAR_OPF_ONLY);
	return info->flags & (STELLAR_OPF_MIDDLE | STELLAR_OPF_FIRST);
}

/*
 * A READ response or atomic ACK that is not the one due next: a duplicate,
 * or one beyond a lost response.  Responses are not held, so after a few
 * beyond a gap the READ is asked for again from the first missing one,
 * without waiting for the timer.
 */
static void stellar_comp_resp_gap(struct stellar_qp_xport *xp, u32 psn)
{
	if (!stellar_psn_after(psn, xp->una_psn)) {
		stellar_xstat(xp, STELLAR_XS_DUPLICATES, 1);
		return;
	}
	stellar_xstat(xp, STELLAR_XS_OUT_OF_ORDER, 1);
	if (xp->resp_gap < U8_MAX)
		xp->resp_gap++;
	if (xp->resp_gap >= STELLAR_RESP_GAP_THRESHOLD)
		stellar_comp_retry(xp, false);
}

/* An out-of-order READ response carries the bytes due at its PSN. */
static bool stellar_read_resp_len_ok(struct stellar_qp_xport *xp,
				     const struct stellar_swqe *s,
				     const struct stellar_pkt *pkt)
{
	u32 i = stellar_psn_diff(pkt->psn, s->first_psn);

	return pkt->payload_len == (i == s->npkts - 1 ?
				    s->length - i * xp->cfg.mtu :
				    xp->cfg.mtu);
}

/* The READ response window follows the oldest READ WQE. */
static void stellar_comp_rd_window(struct stellar_qp_xport *xp,
				   const struct stellar_swqe *s, u32 index)
{
	u32 epsn = stellar_psn_add(s->first_psn, s->rcvd_pkts);

	if (xp->rd_valid && xp->rd_index == index && xp->rd_win.epsn == epsn)
		return;
	stellar_psn_window_init(&xp->rd_win, epsn);
	xp->rd_index = index;
	xp->rd_valid = true;
}

/* Copy a READ response to its place in the WQE's SGEs; 0 or IB_WC_*. */
static u8 stellar_comp_read_copy(struct stellar_qp_xport *xp,
				 const struct stellar_swqe *s, u32 index,
				 const struct stellar_pkt *pkt,
				 const u8 *payload)
{
	const struct stellar_sq_wqe *wqe = stellar_sq_copy(xp, index);
	u64 offset = (u64)stellar_psn_diff(pkt->psn, s->first_psn) *
		     xp->cfg.mtu;
	int ret;

	ret = stellar_sgl_copy(to_spd(xp->qp->ibqp.pd), stellar_wqe_sge(wqe),
			       wqe->num_sge, offset, (void *)payload,
			       pkt->payload_len, STELLAR_COPY_TO_MR);
	if (ret)
		return ret == -EMSGSIZE ? IB_WC_LOC_LEN_ERR :
					  IB_WC_LOC_PROT_ERR;
	return IB_WC_SUCCESS;
}

/*
 * A READ response placed beyond a gap.  Only when many arrived beyond it
 * is the gap taken for a loss and the rest of the READ asked for again
 * (what was placed comes back as duplicates); else the timer decides.
 */
static void stellar_comp_rd_reorder(struct stellar_qp_xport *xp, u32 psn)
{
	stellar_spray_dev_ooo(xp->sdev, stellar_psn_diff(psn, xp->rd_win.epsn));
	stellar_xstat(xp, STELLAR_XS_OUT_OF_ORDER, 1);
	stellar_xstat(xp, STELLAR_XS_OOO_PLACED, 1);
	if (xp->rd_ooo < U16_MAX)
		xp->rd_ooo++;
	if (xp->rd_ooo >= STELLAR_RD_REORDER_THRESHOLD) {
		xp->rd_ooo = 0;
		stellar_comp_retry(xp, false);
	}
}

/**
 * stellar_comp_read_resp() - place a READ response by its offset
 * @xp: the transport, req_mutex held
 * @pkt: the response
 * @payload: its payload
 *
 * Responses of the oldest outstanding READ are placed wherever their PSN
 * says, in order or not, within the receive window; the window tracks
 * which arrived, duplicates are dropped, and the READ completes (and the
 * send queue moves on) only when every response is in.
 */
static void stellar_comp_read_resp(struct stellar_qp_xport *xp,
				   const struct stellar_pkt *pkt,
				   const u8 *payload)
{
	enum stellar_psn_class class;
	struct stellar_swqe *s;
	u32 index;
	u8 status;

	s = stellar_comp_rd_wqe(xp, pkt->psn, &index);
	if (!s) {
		stellar_comp_resp_gap(xp, pkt->psn);
		return;
	}
	stellar_comp_rd_window(xp, s, index);
	class = stellar_psn_classify(&xp->rd_win, pkt->psn);
	if (class == STELLAR_PSN_DUPLICATE) {
		stellar_xstat(xp, STELLAR_XS_DUPLICATES, 1);
		return;
	}
	if (class == STELLAR_PSN_OUT_OF_WINDOW) {
		stellar_comp_resp_gap(xp, pkt->psn);
		return;
	}
	if (class == STELLAR_PSN_NEW_IN_ORDER ?
	    !stellar_read_resp_fits(xp, s, pkt) :
	    s->opcode != IB_WR_RDMA_READ ||
	    !stellar_read_resp_len_ok(xp, s, pkt)) {
		stellar_xstat(xp, STELLAR_XS_DROP_HEADER, 1);
		return;
	}
	status = stellar_comp_read_copy(xp, s, index, pkt, payload);
	if (status != IB_WC_SUCCESS) {
		stellar_wqe_done(xp, index, status);
		return;
	}
	if (class == STELLAR_PSN_NEW_OUT_OF_ORDER) {
		stellar_psn_mark(&xp->rd_win, pkt->psn);
		stellar_comp_rd_reorder(xp, pkt->psn);
		return;
	}
	s->rcvd_pkts += stellar_psn_mark(&xp->rd_win, pkt->psn);
	if (s->rcvd_pkts < s->npkts) {
		stellar_comp_advance(xp, stellar_psn_add(s->first_psn,
							 s->rcvd_pkts - 1));
		return;
	}
	xp->rd_valid = false;
	stellar_comp_rd_finished(xp, index, IB_WC_SUCCESS,
				 stellar_psn_add(s->first_psn, s->npkts - 1));
}

static void stellar_comp_atomic_ack(struct stellar_qp_xport *xp,
				    const struct stellar_pkt *pkt)
{
	u64 orig = pkt->atomic_ack_orig;
	const struct stellar_sq_wqe *wqe;
	struct stellar_swqe *s;
	u32 index;
	int ret;

	s = stellar_comp_rd_wqe(xp, pkt->psn, &index);
	if (!s || s->opcode == IB_WR_RDMA_READ) {
		stellar_comp_resp_gap(xp, pkt->psn);
		return;
	}
	wqe = stellar_sq_copy(xp, index);
	ret = stellar_sgl_copy(to_spd(xp->qp->ibqp.pd), stellar_wqe_sge(wqe),
			       wqe->num_sge, 0, &orig, sizeof(orig),
			       STELLAR_COPY_TO_MR);
	stellar_comp_rd_finished(xp, index,
				 ret ? IB_WC_LOC_PROT_ERR : IB_WC_SUCCESS, pkt->psn);
}

/**
 * stellar_comp_rcv() - handle a response (ACK, READ response, atomic ACK)
 * @xp: the transport, req_mutex held
 * @skb: the packet, data at the BTH (not consumed)
 * @pkt: its parsed headers
 */
void stellar_comp_rcv(struct stellar_qp_xport *xp, struct sk_buff *skb,
		      const struct stellar_pkt *pkt)
{
	if (!stellar_qp_is_reliable(xp->qp) ||
	    (xp->cfg.state != IB_QPS_RTS && xp->cfg.state != IB_QPS_SQD) ||
	    test_bit(STELLAR_XP_ERROR, &xp->flags)) {
		stellar_xstat(xp, STELLAR_XS_DROP_STATE, 1);
		return;
	}
	stellar_rec_way_back(xp, skb, pkt);
	if (!stellar_comp_psn_valid(xp, pkt->psn)) {
		stellar_xstat(xp, STELLAR_XS_DUPLICATES, 1);
		return;
	}
	/* The responder accepted the extensions: use them from now on. */
	if (pkt->xcap && xp->x_offer)
		xp->x_on = true;
	if (pkt->opcode == STELLAR_OP_RC_ACKNOWLEDGE) {
		stellar_comp_aeth(xp, pkt);
	} else {
		stellar_rec_rd_answered(xp, pkt->psn);
		if (pkt->opcode == STELLAR_OP_RC_ATOMIC_ACKNOWLEDGE)
			stellar_comp_atomic_ack(xp, pkt);
		else
			stellar_comp_read_resp(xp, pkt,
					       skb->data + pkt->hdr_len);
	}
	stellar_comp_retire(xp);
}
