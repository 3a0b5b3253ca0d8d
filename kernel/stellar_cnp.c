// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: DCQCN congestion control of a QP - CNPs and pacing.
 *
 * Notification point (the responder): a request that arrives marked CE
 * by a switch gets a CNP back to the sending QP, at most one per
 * cnp_interval microseconds per QP.  Any peer gets them; one that does
 * not know CNPs (rdma_rxe) drops them.
 *
 * Reaction point (the requester): a CNP from the QP's peer cuts its rate
 * and the rate recovers over time and bytes sent (stellar_cc.c).  While
 * the rate is below the line rate, requests are paced by a token bucket
 * at the rate; a timer queues the requester when the bucket has tokens
 * again.  With DCQCN on, requests are sent ECN-capable (stellar_tx.c),
 * so that marking switches mark them instead of dropping them.  The
 * rate applies to the QP as a whole, over all its spray paths: a CNP
 * does not say which path was marked.
 *
 * The device's cc and cc_max_rate settings are read when a QP enters RTR
 * (notification point) and RTS (reaction point), the module's other
 * DCQCN parameters when it enters RTS.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <net/inet_ecn.h>

#include "stellar_xport.h"

/*
 * The pacing bucket holds 1/2^STELLAR_CC_BURST_SHIFT s of the rate (4 ms,
 * a jiffy at HZ=250: the pacing timer's resolution), at least two full
 * packets.
 */
#define STELLAR_CC_BURST_SHIFT	8
#define STELLAR_CC_MIN_BURST	(2 * (4096 + STELLAR_MAX_XHDR_LEN))

static void stellar_cnp_pace_expired(struct timer_list *t)
{
	struct stellar_qp_xport *xp = from_timer(xp, t, cc.timer);

	stellar_xport_queue(xp, &xp->req_work);
}

void stellar_cnp_qp_init(struct stellar_qp_xport *xp)
{
	timer_setup(&xp->cc.timer, stellar_cnp_pace_expired, 0);
}

void stellar_cnp_qp_stop(struct stellar_qp_xport *xp)
{
	del_timer_sync(&xp->cc.timer);
}

static bool stellar_cnp_dcqcn(struct stellar_qp_xport *xp)
{
	return !stellar_qp_is_ud(xp->qp) &&
	       READ_ONCE(xp->sdev->settings.cc) == STELLAR_CC_DCQCN;
}

/* Point the pacing bucket at the current rate, keeping its tokens. */
static void stellar_cnp_pace_rate(struct stellar_qp_cc *cc, u64 now_ns)
{
	u64 rate = stellar_cc_rate_bytes(&cc->rate);

	if (cc->pace.rate == rate)
		return;
	stellar_tbf_refill(&cc->pace, now_ns);
	cc->pace.rate = rate;
	cc->pace.burst = max_t(u64, rate >> STELLAR_CC_BURST_SHIFT,
			       STELLAR_CC_MIN_BURST);
	if (cc->pace.tokens > (s64)cc->pace.burst)
		cc->pace.tokens = cc->pace.burst;
}

/**
 * stellar_cnp_req_reset() - start the reaction point at the line rate
 * @xp: the transport, both mutexes held; the QP enters RTS from RTR
 */
void stellar_cnp_req_reset(struct stellar_qp_xport *xp)
{
	struct stellar_qp_cc *cc = &xp->cc;
	u32 mbps = READ_ONCE(xp->sdev->settings.cc_max_rate);
	u64 now_ns = ktime_get_ns();

	del_timer(&cc->timer);
	cc->on = stellar_cnp_dcqcn(xp);
	if (!cc->on)
		return;
	stellar_default_cc_params(&cc->params);
	cc->params.max_rate_kbps = (mbps ? mbps : STELLAR_DEFAULT_SPEED) * 1000;
	cc->params.min_rate_kbps = min(cc->params.min_rate_kbps,
				       cc->params.max_rate_kbps);
	stellar_cc_init(&cc->rate, &cc->params, div_u64(now_ns, NSEC_PER_USEC));
	stellar_tbf_init(&cc->pace, 0, STELLAR_CC_MIN_BURST, now_ns);
	stellar_cnp_pace_rate(cc, now_ns);
}

/**
 * stellar_cnp_resp_reset() - start the notification point
 * @xp: the transport, both mutexes held; the QP enters RTR
 */
void stellar_cnp_resp_reset(struct stellar_qp_xport *xp)
{
	struct stellar_cc_params unused;

	xp->cc.np_on = stellar_cnp_dcqcn(xp);
	xp->cc.cnp_gap_us = stellar_default_cc_params(&unused);
	xp->cc.cnp_sent_us = 0;
}

static void stellar_cnp_send(struct stellar_qp_xport *xp)
{
	struct stellar_tx_pkt tp = {};

	tp.hdr.opcode = STELLAR_OP_CNP;
	tp.hdr.becn = true;
	tp.hdr.pkey = STELLAR_DEFAULT_PKEY;
	tp.hdr.dest_qpn = xp->cfg.dest_qpn;
	if (stellar_tx_alloc(xp, &tp, 0))
		return;
	if (!stellar_tx_xmit(xp, &xp->cfg.av, &tp, xp->cfg.sport))
		stellar_xstat(xp, STELLAR_XS_CNP_SENT, 1);
}

static bool stellar_cnp_skb_ce(const struct sk_buff *skb)
{
	if (skb->protocol == htons(ETH_P_IP))
		return INET_ECN_is_ce(ip_hdr(skb)->tos);
	return INET_ECN_is_ce(ipv6_get_dsfield(ipv6_hdr(skb)));
}

/**
 * stellar_cnp_marked() - answer a CE-marked request with a CNP
 * @xp: the transport, resp_mutex held
 * @skb: a request from the QP's peer
 */
void stellar_cnp_marked(struct stellar_qp_xport *xp, const struct sk_buff *skb)
{
	struct stellar_qp_cc *cc = &xp->cc;
	u64 now_us;

	if (!cc->np_on || !stellar_cnp_skb_ce(skb))
		return;
	now_us = stellar_now_us();
	if (cc->cnp_sent_us && now_us - cc->cnp_sent_us < cc->cnp_gap_us)
		return;
	cc->cnp_sent_us = now_us;
	stellar_cnp_send(xp);
}

/* Count the rate increases of the last update. */
static void stellar_cnp_count_increases(struct stellar_qp_xport *xp,
					u64 before)
{
	if (xp->cc.rate.increases != before)
		stellar_xstat(xp, STELLAR_XS_CC_RATE_INCREASES,
			      xp->cc.rate.increases - before);
}

/* Apply the timers that expired, at @now_ns. */
static void stellar_cnp_tick(struct stellar_qp_xport *xp, u64 now_ns)
{
	u64 before = xp->cc.rate.increases;

	stellar_cc_tick(&xp->cc.rate, &xp->cc.params,
			stellar_cc_feedback_us(xp->srtt_us),
			div_u64(now_ns, NSEC_PER_USEC));
	stellar_cnp_count_increases(xp, before);
}

/**
 * stellar_cnp_rcvd() - a CNP from the QP's peer: cut the rate
 * @xp: the transport, req_mutex held
 *
 * At most once per smoothed RTT (stellar_cc_feedback_us(), stellar_cc_cnp()).
 */
void stellar_cnp_rcvd(struct stellar_qp_xport *xp)
{
	struct stellar_qp_cc *cc = &xp->cc;
	u64 now_ns = ktime_get_ns();

	stellar_xstat(xp, STELLAR_XS_CNP_RCVD, 1);
	if (!cc->on)
		return;
	stellar_cnp_tick(xp, now_ns);
	if (!stellar_cc_cnp(&cc->rate, &cc->params,
			    stellar_cc_feedback_us(xp->srtt_us),
			    div_u64(now_ns, NSEC_PER_USEC)))
		return;
	stellar_xstat(xp, STELLAR_XS_CC_RATE_CUTS, 1);
	stellar_cnp_pace_rate(cc, now_ns);
}

/**
 * stellar_cnp_hold() - whether the QP's rate holds the next request back
 * @xp: the transport, req_mutex held
 *
 * Return: true if the requester must stop; the pacing timer queues it
 * again when it may go on.
 */
bool stellar_cnp_hold(struct stellar_qp_xport *xp)
{
	struct stellar_qp_cc *cc = &xp->cc;
	u64 now_ns, wait_ns;

	if (!cc->on)
		return false;
	now_ns = ktime_get_ns();
	stellar_cnp_tick(xp, now_ns);
	if (!stellar_cc_limited(&cc->rate, &cc->params))
		return false;
	stellar_cnp_pace_rate(cc, now_ns);
	stellar_tbf_refill(&cc->pace, now_ns);
	wait_ns = stellar_tbf_wait_ns(&cc->pace);
	if (!wait_ns)
		return false;
	stellar_xstat(xp, STELLAR_XS_CC_PACED, 1);
	timer_reduce(&cc->timer, jiffies + nsecs_to_jiffies(wait_ns) + 1);
	return true;
}

/**
 * stellar_cnp_pacing() - whether the requester waits for its rate now
 * @xp: the transport, req_mutex held
 */
bool stellar_cnp_pacing(struct stellar_qp_xport *xp)
{
	return xp->cc.on && timer_pending(&xp->cc.timer);
}

/**
 * stellar_cnp_sent() - charge a request to the QP's rate
 * @xp: the transport, req_mutex held
 * @len: bytes of the packet
 */
void stellar_cnp_sent(struct stellar_qp_xport *xp, u32 len)
{
	struct stellar_qp_cc *cc = &xp->cc;
	u64 before = cc->rate.increases;

	if (!cc->on)
		return;
	stellar_cc_sent(&cc->rate, &cc->params, len);
	stellar_cnp_count_increases(xp, before);
	if (stellar_cc_limited(&cc->rate, &cc->params))
		stellar_tbf_charge(&cc->pace, len);
}

/**
 * stellar_cnp_show() - print a QP's congestion control state
 * @m: the seq_file
 * @xp: the transport (read without its locks: a snapshot)
 */
void stellar_cnp_show(struct seq_file *m, struct stellar_qp_xport *xp)
{
	const struct stellar_qp_cc *cc = &xp->cc;

	seq_printf(m, "cc: %s\n", READ_ONCE(cc->on) ? "dcqcn" : "off");
	if (!READ_ONCE(cc->on))
		return;
	seq_printf(m, "cc_rate_kbps: %u\ncc_target_kbps: %u\ncc_alpha: %u/%u\n",
		   READ_ONCE(cc->rate.rate_kbps),
		   READ_ONCE(cc->rate.target_kbps),
		   READ_ONCE(cc->rate.alpha), STELLAR_CC_ALPHA_ONE);
}
