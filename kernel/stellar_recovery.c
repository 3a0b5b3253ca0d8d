// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: selective loss recovery, the requester's side of the
 * stellar extended mode (Documentation/datapath.rst, "Loss recovery").
 *
 * With the extensions on, the requester tracks every packet of its window
 * (struct stellar_txp: send time, path, SACKed, resent) and learns from
 * each ACK's cumulative and selective parts which arrived: RTT samples
 * (RFC 6298, Karn), RACK-like loss detection against a reordering window,
 * the resend of exactly what was lost (on another path when spraying),
 * blame for the path a loss took, and RTT-based probes before a local
 * ACK timeout.  Standard RoCEv2 recovery (go-back-N) does not come here:
 * stellar_comp.c calls in only when xp->x_on.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include "stellar_xport.h"

/**
 * stellar_rec_forget_sacks() - before a go-back-N resend from una_psn
 * @xp: the transport, req_mutex held
 *
 * The resend goes again over SACKed packets: the peer may have dropped
 * what it held (reneging).
 */
void stellar_rec_forget_sacks(struct stellar_qp_xport *xp)
{
	u32 i;

	for (i = 0; i < STELLAR_TX_WINDOW; i++)
		xp->rc->txp[i].flags &= ~STELLAR_TXP_SACKED;
	xp->sack_high = xp->una_psn;
}

/*
 * A path that just failed may hold more lost packets, and nothing may come
 * after them on it to show the loss: resend what it carries that is not
 * acknowledged, on other paths.
 */
static void stellar_rec_evacuate(struct stellar_qp_xport *xp, u32 path)
{
	u32 budget = STELLAR_SEL_BUDGET, psn;

	for (psn = xp->una_psn; budget && stellar_psn_before(psn, xp->psn_high);
	     psn = stellar_psn_add(psn, 1)) {
		const struct stellar_txp *t = stellar_txp(xp, psn);

		if ((t->flags & STELLAR_TXP_DATA) &&
		    !(t->flags & STELLAR_TXP_SACKED) && t->path == path &&
		    stellar_req_resend_psn(xp, psn))
			budget--;
	}
}

/* A packet sent on @path was lost: tell the path choice, act on a failure. */
static void stellar_rec_path_loss(struct stellar_qp_xport *xp, u32 path)
{
	bool was_failed;

	if (!xp->spraying || path >= xp->rc->spray.nr_paths)
		return;
	was_failed = xp->rc->spray.path[path].state == STELLAR_PATH_FAILED;
	stellar_spray_lost(&xp->rc->spray, path, stellar_now_us());
	if (!was_failed &&
	    xp->rc->spray.path[path].state == STELLAR_PATH_FAILED &&
	    stellar_spray_count_state(&xp->rc->spray, STELLAR_PATH_ACTIVE))
		stellar_rec_evacuate(xp, path);
}

/**
 * stellar_rec_timeout_loss() - the ACK timer expired, una_psn unacknowledged
 * @xp: the transport, req_mutex held
 *
 * When the QP sprays, that is a loss on the path the oldest packet took
 * (a path that went dark may leave nothing later to detect the loss by).
 */
void stellar_rec_timeout_loss(struct stellar_qp_xport *xp)
{
	const struct stellar_txp *t = stellar_txp(xp, xp->una_psn);

	if ((t->flags & (STELLAR_TXP_DATA | STELLAR_TXP_RDREQ)) &&
	    !(t->flags & STELLAR_TXP_SACKED))
		stellar_rec_path_loss(xp, t->path);
}

/*
 * The oldest unacknowledged packet has been out for its path's own RTO.
 * The ACK timer is capped at half the local ACK timeout and may fire
 * earlier, while the packet may still sit in a queue: it is then resent
 * without blaming its path.
 */
static bool stellar_rec_una_overdue(struct stellar_qp_xport *xp)
{
	const struct stellar_txp *t = stellar_txp(xp, xp->una_psn);
	u64 now = stellar_now_us();

	if (!xp->spraying)
		return true;
	return now >= t->sent_us &&
	       now - t->sent_us >=
	       stellar_spray_path_rto_us(&xp->rc->spray, t->path,
					 STELLAR_RTO_MIN_US, U32_MAX);
}

/* RFC 6298 smoothing of an RTT sample; the windowed minimum. */
static void stellar_rec_rtt(struct stellar_qp_xport *xp, u32 rtt_us, u64 now)
{
	u32 err;

	if (!xp->min_rtt_us || rtt_us <= xp->min_rtt_us ||
	    now - xp->min_rtt_at_us > STELLAR_MIN_RTT_WIN_US) {
		xp->min_rtt_us = max_t(u32, rtt_us, 1);
		xp->min_rtt_at_us = now;
	}

	if (!xp->srtt_us) {
		xp->srtt_us = rtt_us;
		xp->rttvar_us = rtt_us / 2;
		return;
	}
	err = abs((s32)(xp->srtt_us - rtt_us));
	xp->rttvar_us = (3 * xp->rttvar_us + err) / 4;
	xp->srtt_us = (7 * xp->srtt_us + rtt_us) / 8;
}

/*
 * A resent packet acknowledged sooner than half an RTT after the resend:
 * the first copy arrived, the resend was spurious.  Such a delivery says
 * nothing about later sends, and the reordering window grows.
 */
static bool stellar_rec_spurious(struct stellar_qp_xport *xp,
				 const struct stellar_txp *t, u64 now)
{
	if (!(t->flags & STELLAR_TXP_RETX) ||
	    now - t->sent_us >= xp->srtt_us / 2)
		return false;
	if (xp->reo_shift < STELLAR_REO_SHIFT_MAX)
		xp->reo_shift++;
	return true;
}

/*
 * A tracked packet reached the peer: RTT sample if @sample (never for
 * resent packets), RACK's latest delivered send time, path feedback.
 * Return: false if it was known already (SACKed before) or not tracked.
 */
static bool stellar_rec_delivered(struct stellar_qp_xport *xp,
				  struct stellar_txp *t, u64 now, bool sample)
{
	u32 rtt_us = 0;

	if (!(t->flags & STELLAR_TXP_DATA) || (t->flags & STELLAR_TXP_SACKED))
		return false;
	if (sample && !(t->flags & STELLAR_TXP_RETX) && now > t->sent_us) {
		rtt_us = min_t(u64, now - t->sent_us, U32_MAX);
		stellar_rec_rtt(xp, rtt_us, now);
	}
	if (t->sent_us > xp->rack_xmit_us && !stellar_rec_spurious(xp, t, now))
		xp->rack_xmit_us = t->sent_us;
	/* An ECN echo counts only where an RTT does: one known copy. */
	if (xp->spraying)
		stellar_spray_acked(&xp->rc->spray, t->path, rtt_us,
				    rtt_us && xp->ack_ecn, now);
	stellar_lat_path_rtt(xp, t->path, rtt_us, now);
	return true;
}

/*
 * The first copy of a spraying QP's packet was delivered: how far it was
 * overtaken counts for the reordering window.  Only from the cumulative
 * and bitmap parts of an ACK, which describe deliveries in PSN order; the
 * newest PSN beyond the bitmap would make those below it look late.
 * That includes a packet resent in vain, whose first copy was overtaken
 * the most: left out, the window never learnt the reordering that made
 * it resend (at 20 Mbit/s over the fabric, four in five of a spraying
 * writer's resends reached the peer as duplicates).  An earlier copy
 * came when the acknowledgment followed the resend sooner than any round
 * trip took; it is taken for the first (after several resends it may be
 * a later one, and the window comes out wider than needed).
 */
static void stellar_rec_reo_seen(struct stellar_qp_xport *xp,
				 const struct stellar_txp *t, u64 now)
{
	if (!xp->spraying)
		return;
	if (!(t->flags & STELLAR_TXP_RETX))
		stellar_reo_delivered(&xp->reo, t->sent_us, now);
	else if (now - t->sent_us < xp->min_rtt_us)
		stellar_reo_delivered(&xp->reo, t->sent_us - t->since_first_us,
				      now);
}

/**
 * stellar_rec_acked() - PSNs were acknowledged cumulatively
 * @xp: the transport, req_mutex held
 * @from: the first, the old una_psn
 * @to: the PSN after the last
 *
 * The RTT is sampled from the one the peer received last: the others
 * waited for the ACK to be coalesced or for a gap to fill.
 */
void stellar_rec_acked(struct stellar_qp_xport *xp, u32 from, u32 to)
{
	u64 now = stellar_now_us();
	u32 psn;

	for (psn = from; psn != to; psn = stellar_psn_add(psn, 1)) {
		struct stellar_txp *t = stellar_txp(xp, psn);

		if (stellar_rec_delivered(xp, t, now, psn == xp->ack_newest))
			stellar_rec_reo_seen(xp, t, now);
		t->flags = 0;
	}
	if (stellar_psn_before(xp->sack_high, to))
		xp->sack_high = to;
}

/*
 * The reordering window: a quarter of the minimum RTT (at least
 * STELLAR_REO_MIN_US), doubled per spurious resend seen, up to 16 times.
 * A spraying QP waits at least a quarter more than the largest reordering
 * its packets showed of late (stellar_reo.h): a packet on a slow path is
 * overtaken by later ones on a fast path.  A QP that does not spray
 * sends on one path, which delivers in order: there the window is zero,
 * so that a packet SACKed beyond a gap resends the gap at once (as
 * quickly as go-back-N's sequence NAK), until a spurious resend shows
 * that the path reorders after all.
 */
static u64 stellar_rec_reo_us(const struct stellar_qp_xport *xp)
{
	u64 reo_us = max_t(u32, xp->min_rtt_us / 4, STELLAR_REO_MIN_US);

	if (xp->spraying) {
		u64 seen = stellar_reo_seen_us(&xp->reo, stellar_now_us());

		return max(reo_us << xp->reo_shift, seen + seen / 4);
	}
	if (!xp->reo_shift)
		return 0;
	return reo_us << (xp->reo_shift - 1);
}

/*
 * A packet found lost by RACK, on one path.  A queue that overflows, the
 * link's or the peer's receive queue, drops packets in a row; a lossy
 * link drops them one by one, and halving the window for each such loss
 * made selective recovery slower than go-back-N at 1% random loss.  So
 * the window is halved, as for go-back-N's sequence error, when two PSNs
 * in a row are lost, once per flight (packets sent before that belong to
 * the same episode).  A spraying QP blames the path instead (a dark link
 * is not congestion), and has DCQCN.
 */
static void stellar_rec_sel_loss(struct stellar_qp_xport *xp, u32 psn)
{
	bool in_row = psn == stellar_psn_add(xp->sel_lost_psn, 1);

	xp->sel_lost_psn = psn;
	if (xp->spraying || !in_row ||
	    stellar_psn_before(psn, xp->win_recover_psn))
		return;
	xp->win_recover_psn = xp->psn_high;
	stellar_win_loss(&xp->tx_win, false, true);
}

/*
 * RACK-like loss detection: an unacknowledged SEND/WRITE packet below the
 * highest SACKed one is lost when a packet sent more than the reordering
 * window after it was delivered; it is resent alone (on another path).
 * Reordering within the window never causes a resend.
 */
static void stellar_rec_rack(struct stellar_qp_xport *xp)
{
	u64 reo_us = stellar_rec_reo_us(xp);
	u32 budget = STELLAR_SEL_BUDGET, psn;

	/* After an RNR NAK the peer is not ready: the RNR timer resends. */
	if (xp->rnr_wait)
		return;
	for (psn = xp->una_psn; budget && stellar_psn_before(psn, xp->sack_high);
	     psn = stellar_psn_add(psn, 1)) {
		struct stellar_txp *t = stellar_txp(xp, psn);
		u32 path = t->path;

		if (!(t->flags & STELLAR_TXP_DATA) ||
		    (t->flags & STELLAR_TXP_SACKED) ||
		    t->sent_us + reo_us > xp->rack_xmit_us)
			continue;
		if (!stellar_req_resend_psn(xp, psn))
			continue;
		stellar_rec_sel_loss(xp, psn);
		stellar_rec_path_loss(xp, path);
		budget--;
	}
}

/*
 * The newest PSN the peer received, beyond what the bitmap describes: it
 * is delivered (RTT sample, RACK's latest delivery), but the PSNs between
 * it and the bitmap are unknown, so it does not move sack_high.
 */
static void stellar_rec_newest(struct stellar_qp_xport *xp, u64 now)
{
	u32 psn = xp->ack_newest;
	struct stellar_txp *t = stellar_txp(xp, psn);

	if (stellar_psn_between(psn, xp->una_psn,
				stellar_psn_add(xp->psn_high, -1)) &&
	    stellar_rec_delivered(xp, t, now, true))
		t->flags |= STELLAR_TXP_SACKED;
}

/**
 * stellar_rec_sack() - the selective part of an ACK
 * @xp: the transport, req_mutex held
 * @pkt: the ACK, its cumulative part handled
 *
 * PSNs received beyond the cumulative one are marked; RACK then resends
 * what they show lost.
 */
void stellar_rec_sack(struct stellar_qp_xport *xp, const struct stellar_pkt *pkt)
{
	u32 last = stellar_psn_add(xp->psn_high, -1);
	u64 now = stellar_now_us();
	bool news = false;
	u32 i;

	if (memchr_inv(pkt->sack.bitmap, 0, sizeof(pkt->sack.bitmap)))
		stellar_xstat(xp, STELLAR_XS_SACKS_RCVD, 1);
	for (i = 0; i < STELLAR_SACK_BITS; i++) {
		u32 psn = stellar_psn_add(pkt->psn, pkt->sack.base + i);
		struct stellar_txp *t = stellar_txp(xp, psn);

		if (!(pkt->sack.bitmap[i / 8] & (0x80 >> (i % 8))) ||
		    !stellar_psn_between(psn, xp->una_psn, last) ||
		    !stellar_rec_delivered(xp, t, now,
					   psn == xp->ack_newest))
			continue;
		stellar_rec_reo_seen(xp, t, now);
		t->flags |= STELLAR_TXP_SACKED;
		news = true;
		if (!stellar_psn_before(psn, xp->sack_high))
			xp->sack_high = stellar_psn_add(psn, 1);
	}
	stellar_rec_newest(xp, now);
	/*
	 * The peer is alive and receiving: while selective recovery makes
	 * headway, a local ACK timeout (go-back-N, a retry counted) waits.
	 * Once the window is full nothing new is acknowledged and it comes.
	 */
	if (news)
		xp->timer_base = jiffies;
	stellar_rec_rack(xp);
}

/**
 * stellar_rec_rd_answered() - a READ response or atomic ACK arrived
 * @xp: the transport, req_mutex held
 * @psn: its PSN
 *
 * If that is where a READ or atomic request was sent, its path works
 * (and, sent once, gives an RTT sample).
 */
void stellar_rec_rd_answered(struct stellar_qp_xport *xp, u32 psn)
{
	struct stellar_txp *t = stellar_txp(xp, psn);
	u64 now = stellar_now_us();
	u32 rtt_us = 0;

	if (!xp->x_on || !(t->flags & STELLAR_TXP_RDREQ))
		return;
	t->flags &= ~STELLAR_TXP_RDREQ;
	if (!(t->flags & STELLAR_TXP_RETX) && now > t->sent_us) {
		rtt_us = min_t(u64, now - t->sent_us, U32_MAX);
		stellar_rec_rtt(xp, rtt_us, now);
	}
	if (xp->spraying)
		stellar_spray_acked(&xp->rc->spray, t->path, rtt_us, false, now);
	stellar_lat_path_rtt(xp, t->path, rtt_us, now);
}

/**
 * stellar_rec_way_back() - a response came through a spray path's port
 * @xp: the transport, req_mutex held
 * @skb: the response
 * @pkt: its parsed headers
 *
 * That path's way back works (stellar_spray_response()).  Also for
 * copies and echoes of an ACK that others overtook, so before the PSN
 * check.
 */
void stellar_rec_way_back(struct stellar_qp_xport *xp,
			  const struct sk_buff *skb,
			  const struct stellar_pkt *pkt)
{
	if (!xp->spraying || !xp->x_on ||
	    !stellar_psn_before(pkt->psn, xp->psn_high))
		return;
	if (pkt->xecho)
		stellar_xstat(xp, STELLAR_XS_ECHOES_RCVD, 1);
	stellar_spray_response(&xp->rc->spray, ntohs(udp_hdr(skb)->source),
			       pkt->xecho, stellar_now_us());
}

/**
 * stellar_rec_rto_us() - the RTT-based ACK timer
 * @xp: the transport, req_mutex held, an RTT measured
 * @max_us: the most it may be (half the local ACK timeout)
 *
 * srtt + 4 * rttvar (when spraying, of the path the oldest unacknowledged
 * packet took), at least STELLAR_RTO_MIN_US.  Its expiry only probes (at
 * least once before a local ACK timeout); retries are still counted in
 * local ACK timeouts.
 *
 * Return: the timer in microseconds.
 */
u32 stellar_rec_rto_us(struct stellar_qp_xport *xp, u32 max_us)
{
	const struct stellar_txp *una = stellar_txp(xp, xp->una_psn);
	u32 path = xp->rc->spray.nr_paths;

	if (una->flags & (STELLAR_TXP_DATA | STELLAR_TXP_RDREQ))
		path = una->path;
	if (xp->spraying)
		return stellar_spray_path_rto_us(&xp->rc->spray, path,
						 STELLAR_RTO_MIN_US, max_us);
	return clamp_t(u32, xp->srtt_us + 4 * xp->rttvar_us,
		       STELLAR_RTO_MIN_US, max_us);
}

/**
 * stellar_rec_probe() - the RTT-based ACK timer expired
 * @xp: the transport, req_mutex held
 *
 * Resend the oldest unacknowledged packet alone, as a probe whose
 * acknowledgement shows what else is missing (from it on if it is a READ
 * or atomic request).  Its path is blamed only when the packet has been
 * out for that path's own RTO.
 */
void stellar_rec_probe(struct stellar_qp_xport *xp)
{
	stellar_xstat(xp, STELLAR_XS_EARLY_TIMEOUTS, 1);
	if (stellar_rec_una_overdue(xp))
		stellar_rec_timeout_loss(xp);
	/*
	 * una_psn selectively acknowledged but not cumulatively means the
	 * peer dropped it again: resend it all the same.  A READ or atomic
	 * request cannot be resent alone: go back to it.
	 */
	stellar_txp(xp, xp->una_psn)->flags &= ~STELLAR_TXP_SACKED;
	if (!stellar_req_resend_psn(xp, xp->una_psn)) {
		stellar_req_rewind(xp, xp->una_psn);
		stellar_xport_queue(xp, &xp->req_work);
	}
}
