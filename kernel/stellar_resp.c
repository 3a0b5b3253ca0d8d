// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: the receiver and the responder.
 *
 * The receive work drains a QP's backlog: responses go to the completer,
 * requests to the responder.  The responder of an RC QP executes requests
 * in PSN order; packets that arrive ahead of the expected PSN, inside the
 * receive window, wait in xp->ooo (bounded by the device's rx_buf_size)
 * and run as soon as the gap is filled, so completions stay in order.
 * Duplicates are acknowledged again.  A READ or atomic request takes a
 * responder resource (at most max_dest_rd_atomic unanswered; beyond, NAK
 * Invalid Request) that records it; its responses are sent by the
 * responder work a budget of packets at a time, in PSN order, and ACKs
 * and NAKs for later PSNs wait behind them.  The resource stays after
 * that, so a duplicate is answered again from what the original asked for
 * without the atomic running twice.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/inet_ecn.h>
#include <rdma/ib_mad.h>

#include "stellar_spray_dev.h"
#include "stellar_xport.h"

/* Out-of-order packets held before the responder asks for a resend. */
#define STELLAR_NAK_THRESHOLD	3

#define STELLAR_SYN_OK		0
#define STELLAR_SYN_ACK		(FIELD_PREP(STELLAR_AETH_TYPE,		\
					    STELLAR_AETH_TYPE_ACK) |	\
				 STELLAR_AETH_CREDIT_INVALID)
#define STELLAR_SYN_NAK(code)	(FIELD_PREP(STELLAR_AETH_TYPE,		\
					    STELLAR_AETH_TYPE_NAK) | (code))

static u8 stellar_syn_rnr(struct stellar_qp_xport *xp)
{
	return FIELD_PREP(STELLAR_AETH_TYPE, STELLAR_AETH_TYPE_RNR_NAK) |
	       FIELD_PREP(STELLAR_AETH_VALUE, xp->cfg.min_rnr_timer);
}

static bool stellar_syn_is_rnr(u8 syn)
{
	return FIELD_GET(STELLAR_AETH_TYPE, syn) == STELLAR_AETH_TYPE_RNR_NAK;
}

/*
 * The PD a request's keys and receive WQE belong to: its QP's, or on an
 * XRC target QP that of the XRC SRQ it names (stellar_resp_xrc_enter()).
 */
static struct stellar_pd *stellar_resp_pd(struct stellar_qp_xport *xp)
{
	if (xp->xrc_srq)
		return to_spd(xp->xrc_srq->ibsrq.pd);
	return to_spd(xp->qp->ibqp.pd);
}

/* Where receive completions go: the QP's CQ, or the XRC SRQ's. */
static struct stellar_cq *stellar_resp_cq(struct stellar_qp_xport *xp)
{
	if (xp->xrc_srq)
		return to_scq(xp->xrc_srq->ibsrq.ext.cq);
	return to_scq(xp->qp->ibqp.recv_cq);
}

/* The next receive WQE: the QP's (or its SRQ's), or the XRC SRQ's. */
static int stellar_resp_rq_take(struct stellar_qp_xport *xp,
				struct stellar_recv_wqe *wqe)
{
	if (xp->xrc_srq)
		return stellar_srq_take(xp->xrc_srq, wqe);
	return stellar_rq_take(xp->qp, wqe);
}

static bool stellar_resp_is_xrc(const struct stellar_qp_xport *xp)
{
	return xp->qp->ibqp.qp_type == IB_QPT_XRC_TGT;
}

static struct stellar_srq *stellar_resp_xrc_srq(struct stellar_qp_xport *xp,
						u32 srq_num, u64 serial)
{
	return stellar_xrc_srq_get(xp->sdev, srq_num, serial,
				   xp->qp->ibqp.xrcd);
}

/*
 * An XRC target QP serves each request from the XRC SRQ it names, which
 * must be one of the QP's XRC domain; a message keeps the SRQ it began
 * with (by serial: a new SRQ may have the number of a destroyed one).
 * The reference lasts until stellar_resp_xrc_exit().  Other QPs
 * have nothing to look up.
 * Return: STELLAR_SYN_OK or the NAK to answer with.
 */
static u8 stellar_resp_xrc_enter(struct stellar_qp_xport *xp,
				 const struct stellar_pkt *pkt)
{
	if (!stellar_resp_is_xrc(xp))
		return STELLAR_SYN_OK;
	if (xp->msg.kind && xp->msg.xrc_srqn != pkt->xrc_srqn)
		return STELLAR_SYN_NAK(STELLAR_NAK_INVALID_REQ);
	xp->xrc_srq = stellar_resp_xrc_srq(xp, pkt->xrc_srqn,
					   xp->msg.kind ?
					   xp->msg.xrc_srq_serial : 0);
	if (!xp->xrc_srq)
		return STELLAR_SYN_NAK(STELLAR_NAK_INVALID_REQ);
	xp->msg.xrc_srqn = pkt->xrc_srqn;
	xp->msg.xrc_srq_serial = xp->xrc_srq->serial;
	return STELLAR_SYN_OK;
}

static void stellar_resp_xrc_exit(struct stellar_qp_xport *xp)
{
	if (xp->xrc_srq)
		stellar_srq_put(xp->xrc_srq);
	xp->xrc_srq = NULL;
}

/**
 * stellar_post_recv_cqe() - complete a receive WQE
 * @xp: the transport
 * @wr_id: the WQE's cookie
 * @status: IB_WC_* status
 * @opcode: IB_WC_RECV or IB_WC_RECV_RDMA_WITH_IMM
 */
void stellar_post_recv_cqe(struct stellar_qp_xport *xp, u64 wr_id, u8 status,
			   u8 opcode)
{
	struct stellar_qp *qp = xp->qp;
	struct stellar_cqe cqe = {
		.wr_id = wr_id,
		.status = status,
		.opcode = opcode,
		.qp_num = qp->ibqp.qp_num,
		.port_num = 1,
		.reserved1 = (uintptr_t)&qp->ibqp,
	};

	/* A flush on an XRC target QP: its message's SRQ, if still there. */
	if (stellar_resp_is_xrc(xp) && !xp->xrc_srq) {
		struct stellar_srq *srq;

		srq = stellar_resp_xrc_srq(xp, xp->msg.xrc_srqn,
					   xp->msg.xrc_srq_serial);
		if (srq) {
			stellar_cq_post(to_scq(srq->ibsrq.ext.cq), &cqe, false);
			stellar_srq_put(srq);
		}
		return;
	}
	stellar_cq_post(stellar_resp_cq(xp), &cqe, false);
}

/*
 * Extended mode: an ACK for epsn - 1 also says which of the
 * STELLAR_SACK_BITS PSNs from epsn - 1 + @base on arrived, and which PSN
 * arrived last (the requester measures RTTs from that one only: the others
 * may have waited for the gap).  The first block
 * (STELLAR_SACK_FIRST_BASE) starts right after the gap at epsn.
 */
static void stellar_resp_fill_sack(struct stellar_qp_xport *xp,
				   struct stellar_pkt *hdr, u16 base)
{
	s32 newest = stellar_psn_diff(xp->newest_psn, hdr->psn);
	u32 i;

	if (!xp->peer_x || hdr->psn != stellar_psn_add(xp->win.epsn, -1) ||
	    (!xp->win.nr_ooo && !newest))
		return;
	hdr->xhdr = true;
	hdr->sack.newest = clamp_t(s32, newest, S16_MIN, S16_MAX);
	hdr->sack.base = base;
	for (i = 0; i < STELLAR_SACK_BITS; i++)
		if (stellar_psn_received(&xp->win,
					 stellar_psn_add(hdr->psn, base + i)))
			hdr->sack.bitmap[i / 8] |= 0x80 >> (i % 8);
}

/*
 * The UDP source port of a response.  A stellar peer sprays its requests
 * and stops using paths that lose packets, so a response sent with the
 * port of the request that caused it travels a path the requester
 * currently trusts (the same link where the hash is symmetric, as with a
 * bond's layer3+4 policy) and responses spread like the requests do.
 * Other peers get every response on the QP's own port.
 */
static u16 stellar_resp_sport(const struct stellar_qp_xport *xp)
{
	return xp->peer_x && xp->reply_sport ? xp->reply_sport :
					       xp->cfg.sport;
}

/* The BTH and AETH of a response to PSN @psn. */
static void stellar_resp_hdr(struct stellar_qp_xport *xp, struct stellar_pkt *hdr,
			     u8 opcode, u32 psn, u8 syndrome, u32 msn)
{
	hdr->opcode = opcode;
	hdr->xcap = xp->peer_x;
	hdr->pkey = STELLAR_DEFAULT_PKEY;
	hdr->dest_qpn = xp->cfg.dest_qpn;
	hdr->psn = psn;
	hdr->aeth.syndrome = syndrome;
	hdr->aeth.msn = msn & STELLAR_MSN_MASK;
}

/*
 * An ACK for a packet the requester sent again (it filled a gap, or it was
 * a duplicate) may be what a stalled requester waits for: copies go on
 * the previous reply ports too, in case the way back for the newest one
 * is broken (over ECMP the way back of a port is not the way there, and
 * with one spine of two dark both ways only a quarter of the ports work).
 * The last packet of a message gets one copy.
 */
static void stellar_resp_ack_alt(struct stellar_qp_xport *xp,
				 const struct stellar_tx_pkt *tp)
{
	u8 copies = min_t(u8, xp->ack_copies, STELLAR_ALT_REPLY_PORTS);
	u16 reply = stellar_resp_sport(xp);
	u8 i;

	xp->ack_copies = 0;
	if (!xp->peer_x)
		return;
	for (i = 0; i < copies; i++) {
		struct stellar_tx_pkt copy = *tp;
		u16 port = xp->alt_sports[i];

		if (!port || port == reply)
			continue;
		copy.skb = skb_copy(tp->skb, GFP_KERNEL);
		if (!copy.skb)
			return;
		stellar_tx_xmit(xp, &xp->cfg.av, &copy, port);
	}
}

/* A request asked for an echo: the next ACK goes on its port too. */
static void stellar_resp_echo_port(struct stellar_qp_xport *xp, u16 sport)
{
	u8 i;

	for (i = 0; i < STELLAR_ECHO_PORTS; i++) {
		if (xp->echo_sports[i] == sport)
			return;
		if (!xp->echo_sports[i]) {
			xp->echo_sports[i] = sport;
			return;
		}
	}
	xp->echo_sports[STELLAR_ECHO_PORTS - 1] = sport;
}

/*
 * Copies of ACK @tp, marked as an echo, on the ports of the requests that
 * asked for one (the ACK itself takes the reply port): their requester
 * learns which ways back work (stellar_spray_want_echo()).
 */
static void stellar_resp_ack_echoes(struct stellar_qp_xport *xp,
				    const struct stellar_tx_pkt *tp)
{
	u16 reply = stellar_resp_sport(xp);
	u8 i;

	for (i = 0; i < STELLAR_ECHO_PORTS && xp->echo_sports[i]; i++) {
		struct stellar_tx_pkt copy = *tp;
		u16 port = xp->echo_sports[i];

		stellar_xstat(xp, STELLAR_XS_ECHOES_SENT, 1);
		if (port == reply)
			continue;
		copy.skb = skb_copy(tp->skb, GFP_KERNEL);
		if (!copy.skb)
			break;
		stellar_tx_xmit(xp, &xp->cfg.av, &copy, port);
	}
	memset(xp->echo_sports, 0, sizeof(xp->echo_sports));
}

/*
 * Extended mode: the requester may have a whole window beyond the gap in
 * flight, four times what one bitmap describes.  Knowing only the first
 * block it would find the losses further on one round trip at a time
 * (while go-back-N resends them all at once), so the blocks after it up
 * to the newest PSN received go in ACKs of their own for the same PSN,
 * those that hold a received PSN.
 */
static void stellar_resp_more_sacks(struct stellar_qp_xport *xp, u32 psn,
				    u32 msn)
{
	s32 newest = stellar_psn_diff(xp->newest_psn, psn);
	u32 base;

	if (!xp->peer_x || !xp->win.nr_ooo)
		return;
	for (base = STELLAR_SACK_FIRST_BASE + STELLAR_SACK_BITS;
	     (s32)base <= newest && base < STELLAR_TX_WINDOW;
	     base += STELLAR_SACK_BITS) {
		struct stellar_tx_pkt tp = {};

		stellar_resp_hdr(xp, &tp.hdr, STELLAR_OP_RC_ACKNOWLEDGE, psn,
				 STELLAR_SYN_ACK, msn);
		stellar_resp_fill_sack(xp, &tp.hdr, base);
		if (!memchr_inv(tp.hdr.sack.bitmap, 0,
				sizeof(tp.hdr.sack.bitmap)))
			continue;
		if (stellar_tx_alloc(xp, &tp, 0))
			return;
		stellar_xstat(xp, STELLAR_XS_SACKS_SENT, 1);
		stellar_tx_xmit(xp, &xp->cfg.av, &tp, stellar_resp_sport(xp));
	}
}

/* An ACK or NAK for PSN @psn, saying @msn messages completed. */
static void stellar_resp_ack_msn(struct stellar_qp_xport *xp, u8 syndrome,
				 u32 psn, u32 msn)
{
	struct stellar_tx_pkt tp = {};

	stellar_resp_hdr(xp, &tp.hdr, STELLAR_OP_RC_ACKNOWLEDGE, psn, syndrome,
			 msn);
	if (syndrome == STELLAR_SYN_ACK) {
		stellar_resp_fill_sack(xp, &tp.hdr, STELLAR_SACK_FIRST_BASE);
		tp.hdr.becn = xp->peer_x && xp->newest_ce;
		xp->newest_ce = false;
	}
	tp.hdr.xecho = xp->peer_x && xp->echo_sports[0];
	if (stellar_tx_alloc(xp, &tp, 0))
		return;
	if (tp.hdr.xecho)
		stellar_resp_ack_echoes(xp, &tp);
	if (tp.hdr.xhdr && xp->win.nr_ooo)
		stellar_xstat(xp, STELLAR_XS_SACKS_SENT, 1);
	if (syndrome == STELLAR_SYN_ACK)
		stellar_xstat(xp, STELLAR_XS_ACKS_SENT, 1);
	else if (stellar_syn_is_rnr(syndrome))
		stellar_xstat(xp, STELLAR_XS_RNR_NAKS_SENT, 1);
	else
		stellar_xstat(xp, STELLAR_XS_NAKS_SENT, 1);
	stellar_resp_ack_alt(xp, &tp);
	stellar_tx_xmit(xp, &xp->cfg.av, &tp, stellar_resp_sport(xp));
	if (syndrome == STELLAR_SYN_ACK)
		stellar_resp_more_sacks(xp, psn, msn);
}

static void stellar_resp_send_ack(struct stellar_qp_xport *xp, u8 syndrome,
				  u32 psn)
{
	stellar_resp_ack_msn(xp, syndrome, psn, xp->msn);
}

/*
 * Send the coalesced ACK for everything before the expected PSN, unless
 * responses to READ or atomic requests before it wait to be sent (the
 * responder work sends it after them).
 */
static void stellar_resp_flush_ack(struct stellar_qp_xport *xp)
{
	if (!xp->ack_pending || xp->res_pending)
		return;
	xp->ack_pending = false;
	stellar_resp_send_ack(xp, STELLAR_SYN_ACK,
			      stellar_psn_add(xp->win.epsn, -1));
}

/*
 * A sequence or RNR NAK for @psn: it waits for the responses to READ and
 * atomic requests before it (the requester would take it for an ACK of
 * those), and is sent then only if @psn is still the expected PSN.
 */
static void stellar_resp_nak(struct stellar_qp_xport *xp, u8 syndrome,
			     u32 psn)
{
	stellar_resp_flush_ack(xp);
	if (xp->res_pending) {
		xp->nak_syn = syndrome;
		xp->nak_psn = psn;
		return;
	}
	stellar_resp_send_ack(xp, syndrome, psn);
}

/* The NAK that waited for the responses before it, if still due. */
static void stellar_resp_owed_nak(struct stellar_qp_xport *xp)
{
	u8 syndrome = xp->nak_syn;

	xp->nak_syn = 0;
	if (syndrome && xp->nak_psn == xp->win.epsn)
		stellar_resp_send_ack(xp, syndrome, xp->nak_psn);
}

/* Forget every READ and atomic request, answered or not. */
static void stellar_resp_forget_res(struct stellar_qp_xport *xp)
{
	if (xp->rc)
		memset(xp->rc->res, 0, sizeof(xp->rc->res));
	xp->res_next = 0;
	xp->res_send = 0;
	xp->res_pending = 0;
	xp->res_replays = 0;
	xp->nak_syn = 0;
}

/**
 * stellar_resp_purge() - drop the packets waiting for a gap
 * @xp: the transport (resp_mutex held, or the QP is being destroyed)
 */
void stellar_resp_purge(struct stellar_qp_xport *xp)
{
	struct stellar_ooo_pkt *rec;
	unsigned long psn;

	xa_for_each(&xp->ooo, psn, rec) {
		xa_erase(&xp->ooo, psn);
		kfree_skb(rec->skb);
		kfree(rec);
	}
	xp->ooo_bytes = 0;
}

static void stellar_resp_restart(struct stellar_qp_xport *xp, u32 epsn)
{
	stellar_resp_purge(xp);
	stellar_psn_window_init(&xp->win, epsn);
	xp->nak_sent = false;
}

/* Slot @i of the receive WQEs taken ahead, @i < STELLAR_RQ_AHEAD. */
static struct stellar_recv_wqe **stellar_resp_ahead(struct stellar_qp_xport *xp,
						    u32 i)
{
	return &xp->rc->rq_ahead[(xp->rq_ahead_first + i) % STELLAR_RQ_AHEAD];
}

/* Free the first receive WQE taken ahead. */
static void stellar_resp_ahead_pop(struct stellar_qp_xport *xp)
{
	struct stellar_recv_wqe **slot = stellar_resp_ahead(xp, 0);

	kfree(*slot);
	*slot = NULL;
	xp->rq_ahead_bytes -= sizeof(struct stellar_recv_wqe);
	xp->rq_ahead_first = (xp->rq_ahead_first + 1) % STELLAR_RQ_AHEAD;
	xp->rq_ahead_n--;
}

/**
 * stellar_resp_drop_ahead() - forget the receive WQEs taken ahead
 * @xp: the transport, resp_mutex held, or the QP is being destroyed
 *
 * For a move to RESET, which empties the receive queue without
 * completions, and for the QP's end.
 */
void stellar_resp_drop_ahead(struct stellar_qp_xport *xp)
{
	while (xp->rq_ahead_n)
		stellar_resp_ahead_pop(xp);
	xp->rq_ahead_first = 0;
}

/*
 * The message in progress is over (rq_msgs counts it): the next one's
 * receive WQE, if it was taken ahead, becomes the one in use.
 */
static void stellar_resp_next_wqe(struct stellar_qp_xport *xp)
{
	xp->msg.have_wqe = false;
	if (!xp->rq_ahead_n)
		return;
	xp->msg.rwqe = **stellar_resp_ahead(xp, 0);
	xp->msg.have_wqe = true;
	stellar_resp_ahead_pop(xp);
}

/* The receive WQE a message was landing in completes with @status. */
static void stellar_resp_fail_msg(struct stellar_qp_xport *xp, u8 status)
{
	struct stellar_resp_msg *msg = &xp->msg;

	if (msg->have_wqe) {
		stellar_post_recv_cqe(xp, msg->rwqe.wr_id, status, IB_WC_RECV);
		xp->rq_msgs++;
		stellar_resp_next_wqe(xp);
	}
	msg->kind = 0;
}

/**
 * stellar_resp_reset() - the QP enters RTR: expect attr.rq_psn
 * @xp: the transport, both mutexes held
 */
void stellar_resp_reset(struct stellar_qp_xport *xp)
{
	stellar_resp_restart(xp, xp->qp->attr.rq_psn);
	stellar_resp_drop_ahead(xp);
	memset(&xp->msg, 0, sizeof(xp->msg));
	stellar_resp_forget_res(xp);
	xp->msn = 0;
	xp->rq_msgs = 0;
	xp->ack_pending = false;
	xp->peer_x = false;
	xp->newest_psn = stellar_psn_add(xp->win.epsn, -1);
	xp->newest_ce = false;
	xp->reply_sport = 0;
	memset(xp->alt_sports, 0, sizeof(xp->alt_sports));
	xp->ack_copies = 0;
	memset(xp->echo_sports, 0, sizeof(xp->echo_sports));
}

/**
 * stellar_resp_flush() - the QP entered ERR: flush the receive WQEs taken
 * @xp: the transport, resp_mutex held
 *
 * The one in use and those taken ahead, in order, before the caller
 * flushes the rest of the receive queue.
 */
void stellar_resp_flush(struct stellar_qp_xport *xp)
{
	do
		stellar_resp_fail_msg(xp, IB_WC_WR_FLUSH_ERR);
	while (xp->msg.have_wqe);
	stellar_resp_purge(xp);
	stellar_resp_forget_res(xp);
}

static bool stellar_resp_len_ok(struct stellar_qp_xport *xp, u16 flags,
				u32 len)
{
	if (flags & (STELLAR_OPF_FIRST | STELLAR_OPF_MIDDLE))
		return len == xp->cfg.mtu;
	return len <= xp->cfg.mtu;
}

/* Opcode sequence: FIRST/ONLY start a message, MIDDLE/LAST continue it. */
static bool stellar_resp_seq_ok(struct stellar_qp_xport *xp, u16 flags)
{
	u16 kind = flags & (STELLAR_OPF_SEND | STELLAR_OPF_WRITE);

	if (flags & (STELLAR_OPF_FIRST | STELLAR_OPF_ONLY))
		return !xp->msg.kind;
	return xp->msg.kind == kind;
}

static u8 stellar_resp_take_wqe(struct stellar_qp_xport *xp)
{
	int ret;

	if (xp->msg.have_wqe)
		return STELLAR_SYN_OK;
	ret = stellar_resp_rq_take(xp, &xp->msg.rwqe);
	if (ret == -ENOENT)
		return stellar_syn_rnr(xp);
	if (ret)
		return STELLAR_SYN_NAK(STELLAR_NAK_REM_OP_ERR);
	xp->msg.have_wqe = true;
	return STELLAR_SYN_OK;
}

/*
 * A message's receive completion.  On an RC QP its completion event waits
 * until the ACK that covers the message has been sent (the end of the
 * receive work, stellar_resp_signal()), as a NIC acknowledges before the
 * host sees the completion: a consumer woken earlier could answer, and
 * its answer overtake the ACK, so that its peer saw the answer arrive
 * before its own send completed, which programs that share one completion
 * channel between their send and receive CQs (perftest's -e) wait on
 * forever.  The CQE itself is written at once.
 */
static void stellar_resp_post_cqe(struct stellar_qp_xport *xp,
				  struct stellar_cqe *cqe, bool solicited)
{
	struct stellar_cq *cq = stellar_resp_cq(xp);

	if (!stellar_cq_post_quiet(cq, cqe, solicited))
		return;
	if (xp->xrc_srq || stellar_qp_is_ud(xp->qp) ||
	    xp->qp->ibqp.qp_type == IB_QPT_UC ||
	    (xp->signal_cq && xp->signal_cq != cq)) {
		stellar_cq_signal(cq);
		return;
	}
	xp->signal_cq = cq;
}

/* The completion event stellar_resp_post_cqe() held back, if any. */
static void stellar_resp_signal(struct stellar_qp_xport *xp)
{
	struct stellar_cq *cq = xp->signal_cq;

	xp->signal_cq = NULL;
	if (cq)
		stellar_cq_signal(cq);
}

static void stellar_resp_complete_msg(struct stellar_qp_xport *xp,
				      const struct stellar_pkt *pkt,
				      u8 opcode, u32 byte_len)
{
	struct stellar_qp *qp = xp->qp;
	struct stellar_cqe cqe = {
		.wr_id = xp->msg.rwqe.wr_id,
		.status = IB_WC_SUCCESS,
		.opcode = opcode,
		.byte_len = byte_len,
		.qp_num = qp->ibqp.qp_num,
		.src_qp = xp->cfg.dest_qpn,
		.port_num = 1,
		.reserved1 = (uintptr_t)&qp->ibqp,
	};

	if (pkt->ext & STELLAR_EXT_IMMDT) {
		cqe.wc_flags |= STELLAR_CQE_WITH_IMM;
		cqe.imm_data = pkt->imm_data;
	} else if (pkt->ext & STELLAR_EXT_IETH) {
		cqe.wc_flags |= STELLAR_CQE_WITH_INV;
		cqe.imm_data = cpu_to_be32(pkt->ieth_rkey);
	}
	xp->msg.kind = 0;
	xp->msn++;
	xp->rq_msgs++;
	stellar_resp_next_wqe(xp);
	stellar_resp_post_cqe(xp, &cqe, pkt->se);
}

/*
 * A SEND packet placed ahead of its turn went where its turn puts it: the
 * receive WQE and offset of the message in progress.
 */
static bool stellar_resp_send_placed_ok(struct stellar_qp_xport *xp,
					const struct stellar_pkt *pkt)
{
	return xp->msg.have_wqe && pkt->xph.rmsn == xp->rq_msgs &&
	       pkt->xph.offset == xp->msg.offset;
}

/* @payload is NULL if it was placed already. */
static u8 stellar_resp_send(struct stellar_qp_xport *xp,
			    const struct stellar_pkt *pkt, u16 flags,
			    const u8 *payload)
{
	struct stellar_pd *pd = stellar_resp_pd(xp);
	struct stellar_resp_msg *msg = &xp->msg;
	int ret = 0;
	u8 syn;

	if (flags & (STELLAR_OPF_FIRST | STELLAR_OPF_ONLY)) {
		syn = stellar_resp_take_wqe(xp);
		if (syn)
			return syn;
		msg->kind = STELLAR_OPF_SEND;
		msg->offset = 0;
	}
	if (!payload && !stellar_resp_send_placed_ok(xp, pkt))
		ret = -EINVAL;
	else if (payload)
		ret = stellar_sgl_copy(pd, msg->rwqe.sge, msg->rwqe.num_sge,
				       msg->offset, (void *)payload,
				       pkt->payload_len, STELLAR_COPY_TO_MR);
	if (ret) {
		bool len_err = ret == -EMSGSIZE || ret == -EINVAL;

		stellar_resp_fail_msg(xp, len_err ? IB_WC_LOC_LEN_ERR :
						    IB_WC_LOC_PROT_ERR);
		return STELLAR_SYN_NAK(len_err ? STELLAR_NAK_INVALID_REQ :
						 STELLAR_NAK_REM_OP_ERR);
	}
	msg->offset += pkt->payload_len;
	xp->ack_pending = true;
	if (!(flags & (STELLAR_OPF_LAST | STELLAR_OPF_ONLY)))
		return STELLAR_SYN_OK;
	if ((flags & STELLAR_OPF_INV) &&
	    stellar_mr_invalidate(pd, pkt->ieth_rkey, xp->qp)) {
		stellar_resp_fail_msg(xp, IB_WC_LOC_PROT_ERR);
		return STELLAR_SYN_NAK(STELLAR_NAK_REM_OP_ERR);
	}
	stellar_resp_complete_msg(xp, pkt, IB_WC_RECV, msg->offset);
	return STELLAR_SYN_OK;
}

static u8 stellar_resp_write_start(struct stellar_qp_xport *xp,
				   const struct stellar_pkt *pkt)
{
	struct stellar_resp_msg *msg = &xp->msg;

	if (pkt->reth.len > STELLAR_MAX_MSG_SIZE)
		return STELLAR_SYN_NAK(STELLAR_NAK_INVALID_REQ);
	msg->kind = STELLAR_OPF_WRITE;
	msg->va = pkt->reth.va;
	msg->rkey = pkt->reth.rkey;
	msg->length = pkt->reth.len;
	msg->offset = 0;
	return STELLAR_SYN_OK;
}

/* A WRITE packet placed ahead of its turn went where its turn puts it. */
static bool stellar_resp_write_placed_ok(struct stellar_qp_xport *xp,
					 const struct stellar_pkt *pkt)
{
	return pkt->xph.va == xp->msg.va + xp->msg.offset &&
	       pkt->xph.rkey == xp->msg.rkey;
}

/* @payload is NULL if it was placed already. */
static u8 stellar_resp_write(struct stellar_qp_xport *xp,
			     const struct stellar_pkt *pkt, u16 flags,
			     const u8 *payload)
{
	struct stellar_resp_msg *msg = &xp->msg;
	bool last = flags & (STELLAR_OPF_LAST | STELLAR_OPF_ONLY);
	u32 len = pkt->payload_len;
	u8 syn;

	if (!(xp->cfg.access & IB_ACCESS_REMOTE_WRITE))
		return STELLAR_SYN_NAK(STELLAR_NAK_REM_ACCESS_ERR);
	/* Immediate data needs a receive WQE: RNR before touching memory. */
	if (last && (flags & STELLAR_OPF_IMM)) {
		syn = stellar_resp_take_wqe(xp);
		if (syn)
			return syn;
	}
	if (flags & (STELLAR_OPF_FIRST | STELLAR_OPF_ONLY)) {
		syn = stellar_resp_write_start(xp, pkt);
		if (syn)
			return syn;
	}
	if (msg->offset + len > msg->length ||
	    (last && msg->offset + len != msg->length) ||
	    (!payload && !stellar_resp_write_placed_ok(xp, pkt)))
		return STELLAR_SYN_NAK(STELLAR_NAK_INVALID_REQ);
	if (payload &&
	    stellar_mr_copy(stellar_resp_pd(xp), msg->rkey, xp->qp,
			    msg->va + msg->offset, (void *)payload, len,
			    STELLAR_COPY_TO_MR, IB_ACCESS_REMOTE_WRITE))
		return STELLAR_SYN_NAK(STELLAR_NAK_REM_ACCESS_ERR);
	msg->offset += len;
	xp->ack_pending = true;
	if (!last)
		return STELLAR_SYN_OK;
	if (flags & STELLAR_OPF_IMM) {
		stellar_resp_complete_msg(xp, pkt, IB_WC_RECV_RDMA_WITH_IMM,
					  msg->length);
	} else {
		msg->kind = 0;
		xp->msn++;
	}
	return STELLAR_SYN_OK;
}

static u8 stellar_read_resp_opcode(u32 i, u32 npkts)
{
	if (npkts == 1)
		return STELLAR_OP_RC_RDMA_READ_RESPONSE_ONLY;
	if (i == 0)
		return STELLAR_OP_RC_RDMA_READ_RESPONSE_FIRST;
	if (i == npkts - 1)
		return STELLAR_OP_RC_RDMA_READ_RESPONSE_LAST;
	return STELLAR_OP_RC_RDMA_READ_RESPONSE_MIDDLE;
}

static u32 stellar_read_npkts(struct stellar_qp_xport *xp, u32 len)
{
	return max_t(u32, DIV_ROUND_UP(len, xp->cfg.mtu), 1);
}

static struct stellar_resp_res *stellar_res_slot(struct stellar_qp_xport *xp,
						 u32 index)
{
	return &xp->rc->res[index % STELLAR_MAX_RD_ATOM];
}

static bool stellar_res_pending(const struct stellar_resp_res *res)
{
	return res->valid && res->sent < res->npkts;
}

/* All the responses of @res went out: it no longer waits to be sent. */
static void stellar_resp_res_sent(struct stellar_qp_xport *xp,
				  struct stellar_resp_res *res)
{
	res->sent = res->npkts;
	xp->res_pending--;
	if (res->replay) {
		res->replay = false;
		xp->res_replays--;
	}
}

/*
 * The peer may have max_dest_rd_atomic READ/atomic requests unanswered;
 * requests answered once and asked for again by a duplicate do not count
 * (the peer sent the duplicate before it saw the answers, then moved on).
 * The entry a new request takes may still be replayed for such a
 * duplicate: it is STELLAR_MAX_RD_ATOM requests old, more than the peer
 * may wait for, so the replay stops.  A first answer still being sent
 * there means no room.  Return: true if there is no room left.
 */
static bool stellar_resp_res_full(struct stellar_qp_xport *xp)
{
	struct stellar_resp_res *next = stellar_res_slot(xp, xp->res_next);

	if (stellar_res_pending(next) && next->replay)
		stellar_resp_res_sent(xp, next);
	if (xp->res_pending - xp->res_replays < xp->cfg.max_dest_rd_atomic &&
	    !stellar_res_pending(next))
		return false;
	stellar_xstat(xp, STELLAR_XS_NAK_RD_LIMIT, 1);
	return true;
}

/*
 * Record a READ or atomic request at @psn taking @npkts PSNs; it is a new
 * message.  Its responses go after those of earlier requests, and after
 * the ACK owed for the requests before it.
 */
static struct stellar_resp_res *stellar_resp_new_res(struct stellar_qp_xport *xp,
						     u32 psn, u32 npkts)
{
	struct stellar_resp_res *res = stellar_res_slot(xp, xp->res_next);

	memset(res, 0, sizeof(*res));
	res->xrc_srqn = xp->msg.xrc_srqn;
	res->xrc_srq_serial = xp->msg.xrc_srq_serial;
	res->first_psn = psn;
	res->last_psn = stellar_psn_add(psn, npkts - 1);
	res->npkts = npkts;
	res->msn = ++xp->msn;
	res->ack_first = xp->ack_pending;
	res->valid = true;
	xp->ack_pending = false;
	if (!xp->res_pending)
		xp->res_send = xp->res_next;
	xp->res_next++;
	xp->res_pending++;
	return res;
}

/*
 * Check a READ request and record it; the responder work sends its
 * responses.  The R_Key and range are checked now, and again as each
 * response is read.
 */
static u8 stellar_resp_read(struct stellar_qp_xport *xp,
			    const struct stellar_pkt *pkt, u32 *npsn)
{
	struct stellar_resp_res *res;

	if (!(xp->cfg.access & IB_ACCESS_REMOTE_READ))
		return STELLAR_SYN_NAK(STELLAR_NAK_REM_ACCESS_ERR);
	if (pkt->reth.len > STELLAR_MAX_MSG_SIZE || stellar_resp_res_full(xp))
		return STELLAR_SYN_NAK(STELLAR_NAK_INVALID_REQ);
	if (stellar_mr_check_remote(stellar_resp_pd(xp), xp->qp,
				    pkt->reth.rkey, pkt->reth.va, pkt->reth.len,
				    IB_ACCESS_REMOTE_READ))
		return STELLAR_SYN_NAK(STELLAR_NAK_REM_ACCESS_ERR);
	res = stellar_resp_new_res(xp, pkt->psn,
				   stellar_read_npkts(xp, pkt->reth.len));
	res->mtu = xp->cfg.mtu;
	res->va = pkt->reth.va;
	res->rkey = pkt->reth.rkey;
	res->length = pkt->reth.len;
	*npsn = res->npkts;
	return STELLAR_SYN_OK;
}

static u8 stellar_resp_atomic(struct stellar_qp_xport *xp,
			      const struct stellar_pkt *pkt)
{
	bool cmp_swap = pkt->opcode == STELLAR_OP_RC_COMPARE_SWAP;
	struct stellar_resp_res *res;
	u64 orig;
	int ret;

	if (!(xp->cfg.access & IB_ACCESS_REMOTE_ATOMIC))
		return STELLAR_SYN_NAK(STELLAR_NAK_REM_ACCESS_ERR);
	if (stellar_resp_res_full(xp))
		return STELLAR_SYN_NAK(STELLAR_NAK_INVALID_REQ);
	ret = stellar_mr_atomic(stellar_resp_pd(xp), xp->qp, pkt->atomic.rkey,
				pkt->atomic.va, cmp_swap,
				cmp_swap ? pkt->atomic.compare :
					   pkt->atomic.swap_add,
				cmp_swap ? pkt->atomic.swap_add : 0, &orig);
	if (ret == -EINVAL)
		return STELLAR_SYN_NAK(STELLAR_NAK_INVALID_REQ);
	if (ret)
		return STELLAR_SYN_NAK(STELLAR_NAK_REM_ACCESS_ERR);
	res = stellar_resp_new_res(xp, pkt->psn, 1);
	res->orig = orig;
	res->is_atomic = true;
	return STELLAR_SYN_OK;
}

/*
 * An ATOMIC WRITE: 8 bytes at an aligned address of an MR the peer may
 * write, stored under the device's atomic lock (atomic with respect to
 * the other remote atomics, not to the CPU's plain loads).  It runs in
 * order only (it has no placement header), after every earlier
 * request; a duplicate is ACKed, not written again.
 */
static u8 stellar_resp_atomic_write(struct stellar_qp_xport *xp,
				    const struct stellar_pkt *pkt,
				    const u8 *payload)
{
	u64 value;
	int ret;

	if (!(xp->cfg.access & IB_ACCESS_REMOTE_WRITE))
		return STELLAR_SYN_NAK(STELLAR_NAK_REM_ACCESS_ERR);
	if (!payload || pkt->payload_len != sizeof(value) ||
	    pkt->reth.len != sizeof(value))
		return STELLAR_SYN_NAK(STELLAR_NAK_INVALID_REQ);
	memcpy(&value, payload, sizeof(value));
	ret = stellar_mr_atomic_write(stellar_resp_pd(xp), xp->qp,
				      pkt->reth.rkey, pkt->reth.va, value);
	if (ret == -EINVAL)
		return STELLAR_SYN_NAK(STELLAR_NAK_INVALID_REQ);
	if (ret)
		return STELLAR_SYN_NAK(STELLAR_NAK_REM_ACCESS_ERR);
	return STELLAR_SYN_OK;
}

/* stellar_resp_execute() for a request that has what it needs. */
static u8 stellar_resp_do_request(struct stellar_qp_xport *xp,
				  const struct stellar_pkt *pkt,
				  const u8 *payload, u32 *npsn)
{
	u16 flags = stellar_opcode_info(pkt->opcode)->flags;

	*npsn = 1;
	if (!stellar_resp_seq_ok(xp, flags))
		return STELLAR_SYN_NAK(STELLAR_NAK_INVALID_REQ);
	if ((flags & STELLAR_OPF_PAYLOAD) &&
	    !stellar_resp_len_ok(xp, flags, pkt->payload_len))
		return STELLAR_SYN_NAK(STELLAR_NAK_INVALID_REQ);
	if (flags & STELLAR_OPF_SEND)
		return stellar_resp_send(xp, pkt, flags, payload);
	if (flags & STELLAR_OPF_WRITE)
		return stellar_resp_write(xp, pkt, flags, payload);
	if (flags & STELLAR_OPF_READ)
		return stellar_resp_read(xp, pkt, npsn);
	if (flags & STELLAR_OPF_ATOMIC_WRITE)
		return stellar_resp_atomic_write(xp, pkt, payload);
	return stellar_resp_atomic(xp, pkt);
}

/*
 * Execute one request in order; @payload is NULL if it was placed
 * already.  *@npsn receives the PSNs it consumed.  On an XRC target QP
 * the request runs with the XRC SRQ it names.
 * Return: STELLAR_SYN_OK or the NAK/RNR NAK syndrome to answer with.
 */
static u8 stellar_resp_execute(struct stellar_qp_xport *xp,
			       const struct stellar_pkt *pkt,
			       const u8 *payload, u32 *npsn)
{
	u8 syn;

	*npsn = 1;
	syn = stellar_resp_xrc_enter(xp, pkt);
	if (!syn)
		syn = stellar_resp_do_request(xp, pkt, payload, npsn);
	stellar_resp_xrc_exit(xp);
	return syn;
}

/* The asynchronous event of a responder QP that answered with NAK @syn. */
static enum ib_event_type stellar_resp_event(u8 syn)
{
	if (FIELD_GET(STELLAR_AETH_VALUE, syn) == STELLAR_NAK_REM_ACCESS_ERR)
		return IB_EVENT_QP_ACCESS_ERR;
	return IB_EVENT_QP_REQ_ERR;
}

/*
 * Answer a failed request; anything but RNR is fatal for the QP, and its
 * NAK goes at once.
 */
static void stellar_resp_error(struct stellar_qp_xport *xp, u8 syn, u32 psn)
{
	if (stellar_syn_is_rnr(syn)) {
		stellar_resp_nak(xp, syn, psn);
		return;
	}
	stellar_resp_flush_ack(xp);
	stellar_resp_send_ack(xp, syn, psn);
	stellar_resp_fail_msg(xp, IB_WC_REM_INV_REQ_ERR);
	stellar_xport_fail(xp, stellar_resp_event(syn));
}

static bool stellar_resp_state_ok(struct stellar_qp_xport *xp)
{
	enum ib_qp_state state = xp->cfg.state;

	return (state == IB_QPS_RTR || state == IB_QPS_RTS ||
		state == IB_QPS_SQD || state == IB_QPS_SQE) &&
	       !test_bit(STELLAR_XP_ERROR, &xp->flags) &&
	       !test_bit(STELLAR_XP_GO_ERROR, &xp->flags);
}

/*
 * Copy @len bytes at @off of READ @res into @buf, with the key's PD: its
 * QP's, or the XRC SRQ's the READ named, looked up again (the SRQ may
 * have gone since; the copy fails then).
 */
static int stellar_resp_read_copy(struct stellar_qp_xport *xp,
				  const struct stellar_resp_res *res, u64 off,
				  void *buf, u32 len)
{
	struct stellar_srq *srq = NULL;
	struct stellar_pd *pd;
	int ret;

	if (stellar_resp_is_xrc(xp)) {
		srq = stellar_resp_xrc_srq(xp, res->xrc_srqn,
					   res->xrc_srq_serial);
		if (!srq)
			return -EACCES;
		pd = to_spd(srq->ibsrq.pd);
	} else {
		pd = to_spd(xp->qp->ibqp.pd);
	}
	ret = stellar_mr_copy(pd, res->rkey, xp->qp, res->va + off, buf, len,
			      STELLAR_COPY_FROM_MR, IB_ACCESS_REMOTE_READ);
	if (srq)
		stellar_srq_put(srq);
	return ret;
}

/*
 * Send response @res->sent of a READ or atomic request.  Return: 0,
 * -ENOMEM, or another errno if the READ's memory cannot be read (any
 * more).
 */
static int stellar_resp_res_pkt(struct stellar_qp_xport *xp,
				const struct stellar_resp_res *res)
{
	u64 off = (u64)res->sent * res->mtu;
	u32 psn = stellar_psn_add(res->first_psn, res->sent);
	u32 plen = res->is_atomic ? 0 : min_t(u64, res->length - off, res->mtu);
	struct stellar_tx_pkt tp = {};
	int ret;

	if (res->is_atomic) {
		stellar_resp_hdr(xp, &tp.hdr, STELLAR_OP_RC_ATOMIC_ACKNOWLEDGE,
				 psn, STELLAR_SYN_ACK, res->msn);
		tp.hdr.atomic_ack_orig = res->orig;
	} else {
		stellar_resp_hdr(xp, &tp.hdr,
				 stellar_read_resp_opcode(res->sent, res->npkts),
				 psn, STELLAR_SYN_ACK, res->msn);
	}
	ret = stellar_tx_alloc(xp, &tp, plen);
	if (ret)
		return ret;
	ret = stellar_resp_read_copy(xp, res, off, tp.payload, plen);
	if (ret) {
		kfree_skb(tp.skb);
		return ret;
	}
	stellar_tx_xmit(xp, &xp->cfg.av, &tp, stellar_resp_sport(xp));
	return 0;
}

/* The device's rate limit holds the responses back (stellar_limits.c). */
static bool stellar_resp_held(struct stellar_qp_xport *xp)
{
	return stellar_rate_hold(&xp->sdev->limits, xp->qp->ibqp.qp_num,
				 STELLAR_RATE_RESP);
}

/*
 * Send up to @budget responses of @res, the oldest request with responses
 * to send, fewer if the rate limit says so.  Return: the packets it took
 * from the budget.
 */
static u32 stellar_resp_send_res(struct stellar_qp_xport *xp,
				 struct stellar_resp_res *res, u32 budget)
{
	u32 n;
	int ret;

	if (res->ack_first) {
		res->ack_first = false;
		stellar_resp_ack_msn(xp, STELLAR_SYN_ACK,
				     stellar_psn_add(res->first_psn, -1),
				     res->msn - 1);
	}
	for (n = 0; n < budget && res->sent < res->npkts &&
	     !stellar_resp_held(xp); n++) {
		ret = stellar_resp_res_pkt(xp, res);
		if (ret && ret != -ENOMEM) {
			stellar_resp_error(xp,
					   STELLAR_SYN_NAK(STELLAR_NAK_REM_ACCESS_ERR),
					   stellar_psn_add(res->first_psn,
							   res->sent));
			return n + 1;
		}
		/* Without memory, give up: the requester asks again. */
		res->sent = ret ? res->npkts : res->sent + 1;
		if (res->sent == res->npkts)
			stellar_resp_res_sent(xp, res);
	}
	return n;
}

/*
 * Send the responses to READ and atomic requests, oldest first, at most
 * STELLAR_TX_BUDGET packets; once all are out, the ACK and the NAK that
 * waited for them.  Nothing is sent once the QP is in error or dying.
 * Return: true if responses remain to be sent.
 */
static bool stellar_resp_stream(struct stellar_qp_xport *xp)
{
	u32 budget = STELLAR_TX_BUDGET;

	while (xp->res_pending) {
		struct stellar_resp_res *res = stellar_res_slot(xp, xp->res_send);

		if (!stellar_resp_state_ok(xp) ||
		    test_bit(STELLAR_XP_DYING, &xp->flags))
			return false;
		if (!stellar_res_pending(res)) {
			xp->res_send++;
			continue;
		}
		if (!budget)
			return true;
		/* Held back: the rate limit's timer queues the work again. */
		if (stellar_resp_held(xp))
			return false;
		budget -= stellar_resp_send_res(xp, res, budget);
	}
	stellar_resp_flush_ack(xp);
	stellar_resp_owed_nak(xp);
	return false;
}

/**
 * stellar_resp_work() - send responses of READ and atomic requests
 * @work: xp->resp_work
 *
 * Runs again while responses remain, so that a long READ neither holds
 * resp_mutex (and QP state changes) nor a worker for long.
 */
void stellar_resp_work(struct work_struct *work)
{
	struct stellar_qp_xport *xp = container_of(work, struct stellar_qp_xport,
						   resp_work);
	bool more;

	mutex_lock(&xp->resp_mutex);
	more = stellar_resp_stream(xp);
	mutex_unlock(&xp->resp_mutex);
	if (more)
		stellar_xport_queue(xp, &xp->resp_work);
}

/* Run the waiting packets that the arrival of @psn put in order. */
static void stellar_resp_run_ooo(struct stellar_qp_xport *xp, u32 psn,
				 u32 count)
{
	u32 i;

	for (i = 1; i < count; i++) {
		u32 next = stellar_psn_add(psn, i), npsn;
		struct stellar_ooo_pkt *rec = xa_erase(&xp->ooo, next);
		u8 syn;

		if (!rec)
			continue;
		xp->ooo_bytes -= rec->charge;
		syn = stellar_resp_execute(xp, &rec->pkt, rec->skb ?
					   rec->skb->data + rec->pkt.hdr_len :
					   NULL, &npsn);
		kfree_skb(rec->skb);
		kfree(rec);
		if (syn) {
			stellar_resp_restart(xp, next);
			stellar_resp_error(xp, syn, next);
			return;
		}
		if (npsn > 1) {
			stellar_resp_restart(xp, stellar_psn_add(next, npsn));
			return;
		}
	}
}

static void stellar_resp_in_order(struct stellar_qp_xport *xp,
				  struct sk_buff *skb,
				  const struct stellar_pkt *pkt)
{
	u32 npsn, count;
	u8 syn;

	syn = stellar_resp_execute(xp, pkt, skb->data + pkt->hdr_len, &npsn);
	if (syn) {
		stellar_resp_error(xp, syn, pkt->psn);
		return;
	}
	xp->nak_sent = false;
	if (npsn > 1) {
		stellar_resp_restart(xp, stellar_psn_add(pkt->psn, npsn));
		return;
	}
	count = stellar_psn_mark(&xp->win, pkt->psn);
	stellar_resp_run_ooo(xp, pkt->psn, count);
}

/* Ask for a resend from the expected PSN, once per gap. */
static void stellar_resp_seq_nak(struct stellar_qp_xport *xp)
{
	if (xp->nak_sent)
		return;
	xp->nak_sent = true;
	stellar_resp_nak(xp, STELLAR_SYN_NAK(STELLAR_NAK_PSN_SEQ_ERR),
			 xp->win.epsn);
}

/* Direct placement of a WRITE packet: its own header says where. */
static int stellar_resp_place_write(struct stellar_qp_xport *xp,
				    const struct stellar_pkt *pkt,
				    const u8 *payload)
{
	int ret;

	if (!(xp->cfg.access & IB_ACCESS_REMOTE_WRITE))
		return -EACCES;
	if ((pkt->ext & STELLAR_EXT_RETH) &&
	    (pkt->xph.va != pkt->reth.va || pkt->xph.rkey != pkt->reth.rkey))
		return -EINVAL;
	if (!pkt->payload_len)
		return 1;
	ret = stellar_mr_copy(to_spd(xp->qp->ibqp.pd), pkt->xph.rkey, xp->qp,
			      pkt->xph.va, (void *)payload, pkt->payload_len,
			      STELLAR_COPY_TO_MR, IB_ACCESS_REMOTE_WRITE);
	return ret ? ret : 1;
}

/* Bytes the QP holds for packets and WQEs beyond a gap (rx_buf_size). */
static u32 stellar_resp_held_bytes(const struct stellar_qp_xport *xp)
{
	return xp->ooo_bytes + xp->rq_ahead_bytes;
}

/* Take the next receive WQE ahead of its turn: 0, -ENOENT or an errno. */
static int stellar_resp_take_ahead(struct stellar_qp_xport *xp)
{
	u32 limit = READ_ONCE(xp->sdev->settings.rx_buf_size);
	struct stellar_recv_wqe *rwqe;
	int ret;

	if (stellar_resp_held_bytes(xp) + sizeof(*rwqe) > limit)
		return -ENOENT;
	rwqe = kmalloc(sizeof(*rwqe), GFP_KERNEL);
	if (!rwqe)
		return -ENOENT;
	ret = stellar_rq_take(xp->qp, rwqe);
	if (ret) {
		kfree(rwqe);
		return ret;
	}
	*stellar_resp_ahead(xp, xp->rq_ahead_n++) = rwqe;
	xp->rq_ahead_bytes += sizeof(*rwqe);
	return 0;
}

/*
 * The receive WQE of the SEND message that @rmsn receive-consuming
 * messages precede: the one in use, or, on a QP with its own receive
 * queue, one up to STELLAR_RQ_AHEAD messages later.  Those before it are
 * taken too, in order, as their messages would take them.
 *
 * Return: the WQE; NULL if it cannot be had now (no WQE posted, too far
 * ahead, rx_buf_size reached); an ERR_PTR if the queue is broken.
 */
static struct stellar_recv_wqe *stellar_resp_rwqe_of(struct stellar_qp_xport *xp,
						     u32 rmsn)
{
	struct stellar_resp_msg *msg = &xp->msg;
	u32 ahead = rmsn - xp->rq_msgs;
	int ret = 0;

	if (ahead && (ahead > STELLAR_RQ_AHEAD || xp->qp->srq ||
		      stellar_resp_is_xrc(xp)))
		return NULL;
	if (!msg->have_wqe) {
		ret = stellar_rq_take(xp->qp, &msg->rwqe);
		msg->have_wqe = !ret;
	}
	while (!ret && xp->rq_ahead_n < ahead)
		ret = stellar_resp_take_ahead(xp);
	if (ret == -ENOENT)
		return NULL;	/* RNR is answered in order */
	if (ret)
		return ERR_PTR(ret);
	return ahead ? *stellar_resp_ahead(xp, ahead - 1) : &msg->rwqe;
}

/*
 * Direct placement of a SEND packet into its receive WQE, if that is the
 * one in use or one taken ahead (stellar_resp_rwqe_of()).
 */
static int stellar_resp_place_send(struct stellar_qp_xport *xp,
				   const struct stellar_pkt *pkt,
				   const u8 *payload)
{
	struct stellar_recv_wqe *rwqe = stellar_resp_rwqe_of(xp, pkt->xph.rmsn);
	int ret;

	if (!rwqe)
		return 0;
	if (IS_ERR(rwqe)) {
		stellar_xport_fail(xp, IB_EVENT_QP_FATAL);
		return PTR_ERR(rwqe);
	}
	ret = stellar_sgl_copy(to_spd(xp->qp->ibqp.pd), rwqe->sge,
			       rwqe->num_sge, pkt->xph.offset,
			       (void *)payload, pkt->payload_len,
			       STELLAR_COPY_TO_MR);
	return ret ? ret : 1;
}

/**
 * stellar_resp_place() - place an out-of-order request's payload directly
 * @xp: the transport, resp_mutex held
 * @skb: the packet
 * @pkt: its headers
 *
 * Only SEND and WRITE packets with a placement header are placed; every
 * field of the header is checked (lengths, offset, R_Key and access
 * rights, MR bounds, receive WQE size) before a byte is written.
 *
 * Return: 1 if placed, 0 if it cannot be placed now (keep the packet), a
 * negative errno if the placement header is invalid (drop the packet).
 */
static int stellar_resp_place(struct stellar_qp_xport *xp,
			      const struct sk_buff *skb,
			      const struct stellar_pkt *pkt)
{
	u16 flags = stellar_opcode_info(pkt->opcode)->flags;
	const u8 *payload = skb->data + pkt->hdr_len;

	if (!(pkt->ext & STELLAR_EXT_X))
		return 0;
	if (!stellar_resp_len_ok(xp, flags, pkt->payload_len) ||
	    pkt->xph.offset % xp->cfg.mtu ||
	    pkt->xph.offset > STELLAR_MAX_MSG_SIZE ||
	    ((flags & (STELLAR_OPF_FIRST | STELLAR_OPF_ONLY)) &&
	     pkt->xph.offset))
		return -EINVAL;
	if (flags & STELLAR_OPF_WRITE)
		return stellar_resp_place_write(xp, pkt, payload);
	return stellar_resp_place_send(xp, pkt, payload);
}


static bool stellar_resp_ooo_drop(struct stellar_qp_xport *xp)
{
	stellar_xstat(xp, STELLAR_XS_DROP_WINDOW, 1);
	stellar_resp_seq_nak(xp);
	return false;
}

/*
 * A request that arrived ahead of a gap: placed directly if it can be,
 * else kept whole, within rx_buf_size.  Return: true if @skb was kept.
 */
static bool stellar_resp_ooo(struct stellar_qp_xport *xp,
			     struct sk_buff *skb,
			     const struct stellar_pkt *pkt)
{
	u32 limit = READ_ONCE(xp->sdev->settings.rx_buf_size);
	struct stellar_ooo_pkt *rec;
	int placed;

	stellar_xstat(xp, STELLAR_XS_OUT_OF_ORDER, 1);
	stellar_spray_dev_ooo(xp->sdev,
			      stellar_psn_diff(pkt->psn, xp->win.epsn));
	if (stellar_resp_held_bytes(xp) + sizeof(*rec) + skb->len > limit)
		return stellar_resp_ooo_drop(xp);
	rec = kmalloc(sizeof(*rec), GFP_KERNEL);
	if (!rec)
		return stellar_resp_ooo_drop(xp);
	placed = stellar_resp_place(xp, skb, pkt);
	if (placed < 0) {
		kfree(rec);
		stellar_xstat(xp, STELLAR_XS_DROP_PLACE, 1);
		return false;
	}
	rec->pkt = *pkt;
	rec->skb = placed ? NULL : skb;
	rec->charge = sizeof(*rec) + (placed ? 0 : skb->len);
	if (xa_insert(&xp->ooo, pkt->psn, rec, GFP_KERNEL)) {
		kfree(rec);
		return stellar_resp_ooo_drop(xp);
	}
	xp->ooo_bytes += rec->charge;
	if (placed)
		stellar_xstat(xp, STELLAR_XS_OOO_PLACED, 1);
	stellar_psn_mark(&xp->win, pkt->psn);
	/*
	 * A stellar peer learns of the gap from the selective ACK sent after
	 * this batch and decides itself what is lost; others get a NAK.
	 */
	if (xp->peer_x)
		xp->ack_pending = true;
	else if (xp->win.nr_ooo >= STELLAR_NAK_THRESHOLD)
		stellar_resp_seq_nak(xp);
	return !placed;
}

/*
 * A READ or atomic request at @psn that was seen before: the responses of
 * the recorded request from @psn on are sent again, from what it asked
 * for (a duplicate's own RETH is not used; the R_Key is checked again as
 * each response is read); an atomic is not executed again.
 * Return: false if no recorded request matches.
 */
static bool stellar_resp_redo(struct stellar_qp_xport *xp, u32 psn,
			      bool is_atomic)
{
	u32 i;

	for (i = 1; i <= STELLAR_MAX_RD_ATOM; i++) {
		u32 index = xp->res_next - i, from;
		struct stellar_resp_res *res = stellar_res_slot(xp, index);

		if (!res->valid || res->is_atomic != is_atomic ||
		    !stellar_psn_between(psn, res->first_psn, res->last_psn))
			continue;
		from = (psn - res->first_psn) & STELLAR_PSN_MASK;
		if (from >= res->sent)
			return true;	/* not sent yet: it will be */
		if (!stellar_res_pending(res)) {
			if (!xp->res_pending ||
			    stellar_index_before(index, xp->res_send))
				xp->res_send = index;
			xp->res_pending++;
			xp->res_replays++;
			res->replay = true;
		}
		res->sent = from;
		return true;
	}
	return false;
}

static void stellar_resp_duplicate(struct stellar_qp_xport *xp,
				   const struct stellar_pkt *pkt)
{
	u16 flags = stellar_opcode_info(pkt->opcode)->flags;

	stellar_xstat(xp, STELLAR_XS_DUPLICATES, 1);
	if (flags & (STELLAR_OPF_SEND | STELLAR_OPF_WRITE |
		     STELLAR_OPF_ATOMIC_WRITE)) {
		xp->ack_pending = true;
		return;
	}
	if (!stellar_resp_redo(xp, pkt->psn, flags & STELLAR_OPF_ATOMIC))
		stellar_xstat(xp, STELLAR_XS_DROP_RD_DUP, 1);
}

/* The IP header of @skb carries the congestion mark (ECN CE). */
static bool stellar_resp_ce(const struct sk_buff *skb)
{
	if (skb->protocol == htons(ETH_P_IP))
		return INET_ECN_is_ce(ip_hdr(skb)->tos);
	return INET_ECN_is_ce(ipv6_get_dsfield(ipv6_hdr(skb)));
}

/* A new request packet arrived: the newest one, for the next ACK. */
static void stellar_resp_newest(struct stellar_qp_xport *xp,
				const struct sk_buff *skb, u32 psn)
{
	xp->newest_psn = psn;
	xp->newest_ce = xp->peer_x && stellar_resp_ce(skb);
	if (xp->newest_ce)
		stellar_xstat(xp, STELLAR_XS_ECN_CE_RCVD, 1);
}

/*
 * With a stellar peer, responses echo the port of the latest request; the
 * ports before it are kept, newest first, for copies of ACKs.
 */
static void stellar_resp_reply_port(struct stellar_qp_xport *xp, u16 sport)
{
	u16 alt[STELLAR_ALT_REPLY_PORTS] = {};
	u8 i, n = 0;

	if (sport == xp->reply_sport)
		return;
	if (xp->reply_sport)
		alt[n++] = xp->reply_sport;
	for (i = 0; i < STELLAR_ALT_REPLY_PORTS && n < STELLAR_ALT_REPLY_PORTS;
	     i++) {
		u16 port = xp->alt_sports[i];

		if (port && port != sport && port != xp->reply_sport)
			alt[n++] = port;
	}
	memcpy(xp->alt_sports, alt, sizeof(alt));
	xp->reply_sport = sport;
}

/*
 * The last packet of a SEND or WRITE: while the requester waits for its
 * ACK nothing may follow to acknowledge it again, so when requests are
 * sprayed that ACK goes on two reply ports.
 */
static bool stellar_resp_msg_tail(const struct stellar_qp_xport *xp,
				  const struct stellar_pkt *pkt)
{
	u16 flags = stellar_opcode_info(pkt->opcode)->flags;

	return xp->peer_x && (flags & (STELLAR_OPF_LAST | STELLAR_OPF_ONLY)) &&
	       (flags & (STELLAR_OPF_SEND | STELLAR_OPF_WRITE));
}

/* RC: returns true if the responder kept @skb. */
static bool stellar_resp_rc(struct stellar_qp_xport *xp, struct sk_buff *skb,
			    const struct stellar_pkt *pkt)
{
	/* The peer offers the extensions: responses accept them. */
	if (pkt->xcap && READ_ONCE(stellar_wire_ext))
		xp->peer_x = true;
	/*
	 * A request asking for an echo may be the probe of a path whose way
	 * back is dead: it gets its echo, the reply port stays.
	 */
	if (xp->peer_x) {
		u16 sport = ntohs(udp_hdr(skb)->source);

		if (pkt->xecho)
			stellar_resp_echo_port(xp, sport);
		else
			stellar_resp_reply_port(xp, sport);
	}
	if (pkt->xhdr)
		stellar_xstat(xp, STELLAR_XS_X_RCVD, 1);
	switch (stellar_psn_classify(&xp->win, pkt->psn)) {
	case STELLAR_PSN_NEW_IN_ORDER:
		if (xp->win.nr_ooo > 0 || stellar_resp_msg_tail(xp, pkt))
			xp->ack_copies = max_t(u8, xp->ack_copies, 1);
		stellar_resp_newest(xp, skb, pkt->psn);
		stellar_resp_in_order(xp, skb, pkt);
		return false;
	case STELLAR_PSN_NEW_OUT_OF_ORDER:
		stellar_resp_newest(xp, skb, pkt->psn);
		return stellar_resp_ooo(xp, skb, pkt);
	case STELLAR_PSN_DUPLICATE:
		xp->ack_copies = STELLAR_ALT_REPLY_PORTS;
		stellar_resp_duplicate(xp, pkt);
		return false;
	default:
		stellar_xstat(xp, STELLAR_XS_DROP_WINDOW, 1);
		stellar_resp_seq_nak(xp);
		return false;
	}
}

/* UC: a lost packet loses its message; the receive WQE is reused. */
static void stellar_resp_uc(struct stellar_qp_xport *xp, struct sk_buff *skb,
			    const struct stellar_pkt *pkt)
{
	u16 flags = stellar_opcode_info(pkt->opcode)->flags;
	u32 npsn;

	if (pkt->psn != xp->win.epsn) {
		xp->msg.kind = 0;
		stellar_xstat(xp, STELLAR_XS_DROP_WINDOW, 1);
	}
	stellar_psn_window_init(&xp->win, stellar_psn_add(pkt->psn, 1));
	if (stellar_resp_execute(xp, pkt, skb->data + pkt->hdr_len,
				 &npsn) != STELLAR_SYN_OK) {
		xp->msg.kind = 0;
		if (flags & (STELLAR_OPF_FIRST | STELLAR_OPF_ONLY))
			stellar_xstat(xp, STELLAR_XS_DROP_NO_RECV, 1);
	}
	xp->ack_pending = false;
}

/* The 40 bytes a UD receive buffer starts with: the IP header as GRH. */
static void stellar_resp_grh(struct sk_buff *skb, union rdma_network_hdr *hdr)
{
	memset(hdr, 0, sizeof(*hdr));
	if (skb->protocol == htons(ETH_P_IP))
		memcpy(&hdr->roce4grh, ip_hdr(skb), sizeof(hdr->roce4grh));
	else
		memcpy(&hdr->ibgrh, ipv6_hdr(skb), sizeof(hdr->ibgrh));
}

static u8 stellar_resp_ud_place(struct stellar_qp_xport *xp,
				struct sk_buff *skb,
				const struct stellar_pkt *pkt)
{
	struct stellar_pd *pd = to_spd(xp->qp->ibqp.pd);
	struct stellar_recv_wqe *rwqe = &xp->msg.rwqe;
	union rdma_network_hdr grh;
	int ret;

	stellar_resp_grh(skb, &grh);
	ret = stellar_sgl_copy(pd, rwqe->sge, rwqe->num_sge, 0, &grh,
			       sizeof(grh), STELLAR_COPY_TO_MR);
	if (!ret)
		ret = stellar_sgl_copy(pd, rwqe->sge, rwqe->num_sge,
				       sizeof(grh), skb->data + pkt->hdr_len,
				       pkt->payload_len, STELLAR_COPY_TO_MR);
	if (!ret)
		return IB_WC_SUCCESS;
	return ret == -EMSGSIZE ? IB_WC_LOC_LEN_ERR : IB_WC_LOC_PROT_ERR;
}

/*
 * What a UD receive reports in sl for RoCE: the L3 header in front of the
 * 40 GRH bytes (2: IPv4, 1: IPv6), as RoCE NICs do.  UCX and other
 * consumers read it to know where the source GID is.
 */
static u8 stellar_resp_l3_type(const struct sk_buff *skb)
{
	return skb->protocol == htons(ETH_P_IP) ? 2 : 1;
}

static void stellar_resp_ud(struct stellar_qp_xport *xp, struct sk_buff *skb,
			    const struct stellar_pkt *pkt)
{
	struct stellar_qp *qp = xp->qp;
	struct stellar_cqe cqe = {
		.opcode = IB_WC_RECV,
		.wc_flags = STELLAR_CQE_GRH,
		.byte_len = sizeof(union rdma_network_hdr) + pkt->payload_len,
		.qp_num = qp->ibqp.qp_num,
		.src_qp = pkt->deth.src_qpn,
		.port_num = 1,
		.reserved1 = (uintptr_t)&qp->ibqp,
	};

	if (pkt->deth.qkey != xp->cfg.qkey || pkt->payload_len > xp->cfg.mtu) {
		stellar_xstat(xp, STELLAR_XS_DROP_HEADER, 1);
		return;
	}
	if (stellar_rq_take(qp, &xp->msg.rwqe)) {
		stellar_xstat(xp, STELLAR_XS_DROP_NO_RECV, 1);
		return;
	}
	cqe.wr_id = xp->msg.rwqe.wr_id;
	if (qp->is_user)	/* kernel ULPs read wc->network_hdr_type */
		cqe.sl = stellar_resp_l3_type(skb);
	cqe.status = stellar_resp_ud_place(xp, skb, pkt);
	if (pkt->ext & STELLAR_EXT_IMMDT) {
		cqe.wc_flags |= STELLAR_CQE_WITH_IMM;
		cqe.imm_data = pkt->imm_data;
	}
	stellar_cq_post(to_scq(qp->ibqp.recv_cq), &cqe, pkt->se);
}

/* A request for this QP; consumes @skb. */
static void stellar_resp_rcv(struct stellar_qp_xport *xp, struct sk_buff *skb,
			     const struct stellar_pkt *pkt)
{
	if (!stellar_resp_state_ok(xp))
		stellar_xstat(xp, STELLAR_XS_DROP_STATE, 1);
	else if (stellar_qp_is_ud(xp->qp))
		stellar_resp_ud(xp, skb, pkt);
	else if (xp->qp->ibqp.qp_type == IB_QPT_UC)
		stellar_resp_uc(xp, skb, pkt);
	else if (stellar_resp_rc(xp, skb, pkt))
		return;	/* held until the gap before it fills */
	kfree_skb(skb);
}

/*
 * A connected (RC or UC) QP takes packets from its peer's address only;
 * else any host that reaches this one could inject into a connection by
 * guessing its QPN and PSN.  Called with either mutex held (the address is
 * set under both).
 */
static bool stellar_rx_from_peer(struct stellar_qp_xport *xp,
				 const struct sk_buff *skb)
{
	/* Before RTR there is no peer yet: the state check drops it. */
	if (stellar_qp_is_ud(xp->qp) || !xp->cfg.av.valid ||
	    stellar_skb_from_gid(skb, &xp->cfg.av.dgid))
		return true;
	stellar_xstat(xp, STELLAR_XS_DROP_SOURCE, 1);
	return false;
}

/* A response or a CNP: for the QP's requester; consumes @skb. */
static void stellar_rx_for_requester(struct stellar_qp_xport *xp,
				     struct sk_buff *skb,
				     const struct stellar_pkt *pkt)
{
	mutex_lock(&xp->req_mutex);
	if (stellar_rx_from_peer(xp, skb)) {
		if (pkt->opcode == STELLAR_OP_CNP)
			stellar_cnp_rcvd(xp);
		else
			stellar_comp_rcv(xp, skb, pkt);
	}
	mutex_unlock(&xp->req_mutex);
	kfree_skb(skb);
}

static void stellar_rx_one(struct stellar_qp_xport *xp, struct sk_buff *skb)
{
	struct stellar_pkt pkt;
	u64 arrived_ns;

	stellar_xstat(xp, STELLAR_XS_RX_PACKETS, 1);
	stellar_xstat(xp, STELLAR_XS_RX_BYTES, skb->len);
	if (stellar_parse_packet(skb->data, skb->len, &pkt) != STELLAR_RX_OK) {
		stellar_xstat(xp, STELLAR_XS_DROP_HEADER, 1);
		kfree_skb(skb);
		return;
	}
	stellar_xrc_as_rc(&pkt);
	if (pkt.opcode == STELLAR_OP_CNP ||
	    stellar_opcode_info(pkt.opcode)->flags & STELLAR_OPF_RESPONSE) {
		stellar_rx_for_requester(xp, skb, &pkt);
		return;
	}
	arrived_ns = ktime_to_ns(skb->tstamp);
	mutex_lock(&xp->resp_mutex);
	if (stellar_rx_from_peer(xp, skb)) {
		stellar_cnp_marked(xp, skb);
		stellar_resp_rcv(xp, skb, &pkt);
		stellar_lat_rx_done(xp, arrived_ns);
	} else {
		kfree_skb(skb);
	}
	mutex_unlock(&xp->resp_mutex);
}

/**
 * stellar_rx_work() - drain a QP's backlog of received packets
 * @work: xp->rx_work
 */
void stellar_rx_work(struct work_struct *work)
{
	struct stellar_qp_xport *xp = container_of(work, struct stellar_qp_xport,
						   rx_work);
	u32 budget = STELLAR_RX_BUDGET;
	struct sk_buff *skb;
	bool more;

	while (budget-- && (skb = stellar_xport_rx_dequeue(xp)))
		stellar_rx_one(xp, skb);
	mutex_lock(&xp->resp_mutex);
	more = stellar_resp_stream(xp);
	stellar_resp_flush_ack(xp);
	stellar_resp_signal(xp);
	mutex_unlock(&xp->resp_mutex);
	if (more)
		stellar_xport_queue(xp, &xp->resp_work);
	if (!skb_queue_empty(&xp->rxq))
		stellar_xport_queue(xp, &xp->rx_work);
}
