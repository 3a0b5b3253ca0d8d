// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: the requester - send WQEs become packets.
 *
 * The requester walks the send ring from xp->req_index, packet by packet
 * (xp->req_pkt), assigning PSNs from xp->sq_psn.  Each slot remembers the
 * PSN range of its WQE, and packet i of a WQE always carries the same
 * bytes, so any packet can be rebuilt later: retransmission rewinds
 * req_index/req_pkt/sq_psn to the first PSN to resend.  A WQE is read
 * from the ring, which its process may rewrite at any time, only once:
 * when the requester first reaches it, into xp->sq_copy, whose copy
 * every later packet, response and completion of the WQE uses.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <rdma/ib_mad.h>

#include "stellar_xport.h"

/*
 * Request an ACK at least every this many packets of a long message, and
 * at least twice per window (stellar_req_ack_due()).
 */
#define STELLAR_ACK_EVERY	64

static bool stellar_wr_is_local(u8 opcode)
{
	return opcode == IB_WR_REG_MR || opcode == IB_WR_LOCAL_INV ||
	       opcode == IB_WR_BIND_MW;
}

/*
 * RC QPs offer the stellar extensions when enabled and when the netdev
 * MTU has room for the placement header on top of the path MTU: QPs that
 * spray always, the others with wire_ext_all, on by default (on one path
 * selective recovery resends only what was lost, as soon as go-back-N
 * would).
 */
static bool stellar_req_may_offer_ext(struct stellar_qp_xport *xp)
{
	return READ_ONCE(stellar_wire_ext) &&
	       xp->qp->ibqp.qp_type == IB_QPT_RC &&
	       (stellar_qp_spray_paths(xp->qp) > 1 ||
		READ_ONCE(stellar_wire_ext_all)) &&
	       xp->cfg.mtu + STELLAR_X_OVERHEAD <=
	       READ_ONCE(xp->sdev->ndev->mtu);
}

static bool stellar_wr_consumes_recv(u8 opcode)
{
	return opcode == IB_WR_SEND || opcode == IB_WR_SEND_WITH_IMM ||
	       opcode == IB_WR_SEND_WITH_INV ||
	       opcode == IB_WR_RDMA_WRITE_WITH_IMM;
}

/**
 * stellar_req_reset() - start sending from the ring's oldest WQE
 * @xp: the transport, both mutexes held
 *
 * Called when the QP enters RTS: the first packet gets attr.sq_psn.
 */
void stellar_req_reset(struct stellar_qp_xport *xp)
{
	struct stellar_qp *qp = xp->qp;

	xp->req_index = READ_ONCE(qp->sq_consumer);
	xp->req_pkt = 0;
	xp->next_new = xp->req_index;
	xp->sq_psn = qp->attr.sq_psn & STELLAR_PSN_MASK;
	xp->una_psn = xp->sq_psn;
	xp->psn_high = xp->sq_psn;
	stellar_win_init(&xp->tx_win, STELLAR_TX_WINDOW);
	xp->retry_left = xp->cfg.retry_cnt;
	xp->rnr_left = xp->cfg.rnr_retry;
	xp->backoff = 0;
	xp->resp_gap = 0;
	xp->retrying = false;
	xp->timeout_deferred = false;
	xp->rnr_wait = false;
	xp->x_offer = stellar_req_may_offer_ext(xp);
	xp->offer_sport = 0;
	xp->x_on = false;
	xp->rmsn_next = 0;
	xp->rd_valid = false;
	xp->rd_ooo = 0;
	xp->rack_xmit_us = 0;
	xp->sack_high = xp->sq_psn;
	xp->win_recover_psn = xp->sq_psn;
	xp->sel_lost_psn = stellar_psn_add(xp->sq_psn, -2);
	xp->srtt_us = 0;
	xp->rttvar_us = 0;
	xp->min_rtt_us = 0;
	xp->min_rtt_at_us = 0;
	xp->timer_base = jiffies;
	xp->spraying = false;
	xp->reo_shift = 0;
	stellar_reo_init(&xp->reo);
	xp->gsi_paths = qp->ibqp.qp_type == IB_QPT_GSI ?
			stellar_qp_spray_paths(qp) : 1;
	stellar_lat_req_reset(xp, xp->rc ? stellar_qp_spray_paths(qp) : 0);
	if (!xp->rc)
		return;
	memset(xp->rc->txp, 0, sizeof(xp->rc->txp));
	stellar_spray_dev_retire(xp->sdev, &xp->rc->spray);
	stellar_spray_init(&xp->rc->spray, stellar_qp_spray_paths(qp),
			   xp->cfg.sport, qp->ibqp.qp_num);
}

/**
 * stellar_req_rewind() - continue sending at a PSN
 * @xp: the transport, req_mutex held
 * @psn: the PSN, at most xp->psn_high
 *
 * Moves the send position back (to resend from @psn) or forward (past
 * packets the peer acknowledged while they were being resent).  Only
 * WQEs that were started already are searched; finished ones are
 * skipped, so a resend never repeats a completed READ, atomic or local
 * operation.
 */
void stellar_req_rewind(struct stellar_qp_xport *xp, u32 psn)
{
	u32 index;

	stellar_lat_resent(xp);
	for (index = READ_ONCE(xp->qp->sq_consumer);
	     stellar_index_before(index, xp->next_new); index++) {
		struct stellar_swqe *s = stellar_swqe_at(xp, index);

		if (s->state == STELLAR_SWQE_DONE || !s->npkts ||
		    stellar_psn_after(psn, stellar_psn_add(s->first_psn,
							   s->npkts - 1)))
			continue;
		if (stellar_psn_before(psn, s->first_psn))
			psn = s->first_psn;
		xp->req_index = index;
		xp->req_pkt = stellar_psn_diff(psn, s->first_psn);
		xp->sq_psn = psn;
		s->state = STELLAR_SWQE_NEW;
		return;
	}
	xp->req_index = xp->next_new;
	xp->req_pkt = 0;
	xp->sq_psn = xp->psn_high;
}

/* Outstanding READ/atomic WQEs before req_index. */
static u32 stellar_req_rd_atomic_out(struct stellar_qp_xport *xp)
{
	u32 index, count = 0;

	for (index = READ_ONCE(xp->qp->sq_consumer); index != xp->req_index;
	     index++) {
		struct stellar_swqe *s = stellar_swqe_at(xp, index);

		if (s->state != STELLAR_SWQE_DONE &&
		    stellar_wr_is_rd_atomic(s->opcode))
			count++;
	}
	return count;
}

/* In-flight PSNs leave no room for another packet. */
static bool stellar_req_window_full(struct stellar_qp_xport *xp)
{
	return stellar_qp_is_reliable(xp->qp) &&
	       stellar_psn_diff(xp->sq_psn, xp->una_psn) >= xp->tx_win.cwnd;
}

/* Whether send WQE @wqe must wait (fence, READ/atomic limit). */
static bool stellar_req_wqe_waits(struct stellar_qp_xport *xp,
				  const struct stellar_sq_wqe *wqe)
{
	u32 outstanding;

	if (!stellar_qp_is_reliable(xp->qp) || xp->req_pkt)
		return false;
	if (!(wqe->flags & STELLAR_WQE_FENCE) &&
	    !stellar_wr_is_rd_atomic(wqe->opcode))
		return false;
	outstanding = stellar_req_rd_atomic_out(xp);
	if (wqe->flags & STELLAR_WQE_FENCE && outstanding)
		return true;
	return stellar_wr_is_rd_atomic(wqe->opcode) &&
	       outstanding >= xp->cfg.max_rd_atomic;
}

/**
 * stellar_req_has_work() - the requester has packets it may send
 * @xp: the transport, req_mutex held
 *
 * True while the send position is inside a WQE or behind the ring's
 * producer: WQEs not sent yet, or sent in part when the window or the
 * congestion control stopped the requester, or rewound for a resend.
 * False while the window is full (the completer asks again whenever it
 * moves), and when the next WQE, copied already, waits for a fence or
 * for the READ/atomic limit: only a READ or atomic that finishes lets it
 * go, and the completer queues the requester then
 * (stellar_comp_rd_finished()).  Each of the READ responses that fill a
 * window would otherwise run the requester for nothing.  A doorbell that
 * publishes more WQEs runs or queues the requester itself, so a producer
 * read before it only decides for the WQEs it shows.
 */
bool stellar_req_has_work(struct stellar_qp_xport *xp)
{
	lockdep_assert_held(&xp->req_mutex);
	if (stellar_req_window_full(xp))
		return false;
	if (xp->req_pkt)
		return true;
	if (xp->req_index == stellar_queue_producer(&xp->qp->sq))
		return false;
	/* Not copied yet, or finished (a resend skips it). */
	if (!stellar_index_before(xp->req_index, xp->next_new) ||
	    stellar_swqe_at(xp, xp->req_index)->state == STELLAR_SWQE_DONE)
		return true;
	return !stellar_req_wqe_waits(xp, stellar_sq_copy(xp, xp->req_index));
}

/* The RETH of an ATOMIC WRITE comes from the same fields as a WRITE's. */
static_assert(offsetof(struct stellar_sq_wqe, u.atomic_write.remote_addr) ==
	      offsetof(struct stellar_sq_wqe, u.rdma.remote_addr));
static_assert(offsetof(struct stellar_sq_wqe, u.atomic_write.rkey) ==
	      offsetof(struct stellar_sq_wqe, u.rdma.rkey));

static u32 stellar_wqe_length(struct stellar_qp_xport *xp)
{
	if (xp->wqe->opcode == STELLAR_WR_ATOMIC_WRITE)
		return sizeof(xp->wqe->u.atomic_write.value);
	if (xp->wqe->flags & STELLAR_WQE_INLINE)
		return xp->wqe->inline_len;
	return min_t(u64, stellar_sgl_length(stellar_wqe_sge(xp->wqe),
					     xp->wqe->num_sge),
		     U32_MAX);
}

static u32 stellar_wqe_npkts(struct stellar_qp_xport *xp, u32 length)
{
	u8 opcode = xp->wqe->opcode;

	if (stellar_wr_is_local(opcode))
		return 0;
	if (opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	    opcode == IB_WR_ATOMIC_FETCH_AND_ADD)
		return 1;
	return max_t(u32, DIV_ROUND_UP(length, xp->cfg.mtu), 1);
}

/* Prepare a slot for the first packet of its WQE; IB_WC_* status. */
static u8 stellar_req_init_slot(struct stellar_qp_xport *xp,
				struct stellar_swqe *s)
{
	struct stellar_qp *qp = xp->qp;
	u64 length = stellar_wqe_length(xp);

	s->opcode = xp->wqe->opcode;
	s->wr_id = xp->wqe->wr_id;
	s->signaled = qp->sq_sig_all || (xp->wqe->flags & STELLAR_WQE_SIGNALED);
	s->first_psn = xp->sq_psn;
	s->rcvd_pkts = 0;
	s->status = IB_WC_SUCCESS;
	s->state = STELLAR_SWQE_NEW;
	s->length = stellar_wqe_length(xp);
	s->npkts = stellar_wqe_npkts(xp, s->length);
	s->rmsn = xp->rmsn_next;
	if (stellar_wr_consumes_recv(s->opcode))
		xp->rmsn_next++;
	if (length > STELLAR_MAX_MSG_SIZE ||
	    (stellar_qp_is_ud(qp) && length > xp->cfg.mtu))
		return IB_WC_LOC_LEN_ERR;
	if ((s->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	     s->opcode == IB_WR_ATOMIC_FETCH_AND_ADD) && length < 8)
		return IB_WC_LOC_LEN_ERR;
	return IB_WC_SUCCESS;
}

/* The wire opcode of packet @pkt of @npkts of a SEND or WRITE WQE. */
static u8 stellar_req_opcode(struct stellar_qp_xport *xp, u32 pkt, u32 npkts)
{
	u8 base = xp->qp->ibqp.qp_type == IB_QPT_UC ? STELLAR_OP_CLASS_UC :
						      STELLAR_OP_CLASS_RC;
	bool first = pkt == 0, last = pkt == npkts - 1;
	bool imm = xp->wqe->opcode == IB_WR_SEND_WITH_IMM ||
		   xp->wqe->opcode == IB_WR_RDMA_WRITE_WITH_IMM;

	if (stellar_qp_is_ud(xp->qp))
		return imm ? STELLAR_OP_UD_SEND_ONLY_WITH_IMMEDIATE :
			     STELLAR_OP_UD_SEND_ONLY;
	if (xp->wqe->opcode == STELLAR_WR_ATOMIC_WRITE)
		return STELLAR_OP_RC_ATOMIC_WRITE;
	if (xp->wqe->opcode == IB_WR_RDMA_WRITE ||
	    xp->wqe->opcode == IB_WR_RDMA_WRITE_WITH_IMM) {
		if (first && last)
			return base + (imm ?
				STELLAR_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE :
				STELLAR_OP_RC_RDMA_WRITE_ONLY);
		if (first)
			return base + STELLAR_OP_RC_RDMA_WRITE_FIRST;
		if (!last)
			return base + STELLAR_OP_RC_RDMA_WRITE_MIDDLE;
		return base + (imm ?
			STELLAR_OP_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE :
			STELLAR_OP_RC_RDMA_WRITE_LAST);
	}
	if (xp->wqe->opcode == IB_WR_SEND_WITH_INV && last)
		return first ? STELLAR_OP_RC_SEND_ONLY_WITH_INVALIDATE :
			       STELLAR_OP_RC_SEND_LAST_WITH_INVALIDATE;
	if (first && last)
		return base + (imm ? STELLAR_OP_RC_SEND_ONLY_WITH_IMMEDIATE :
				     STELLAR_OP_RC_SEND_ONLY);
	if (first)
		return base + STELLAR_OP_RC_SEND_FIRST;
	if (!last)
		return base + STELLAR_OP_RC_SEND_MIDDLE;
	return base + (imm ? STELLAR_OP_RC_SEND_LAST_WITH_IMMEDIATE :
			     STELLAR_OP_RC_SEND_LAST);
}

static void stellar_req_fill_hdr(struct stellar_qp_xport *xp,
				 struct stellar_pkt *hdr, u32 psn)
{
	memset(hdr, 0, sizeof(*hdr));
	hdr->pkey = STELLAR_DEFAULT_PKEY;
	hdr->dest_qpn = xp->cfg.dest_qpn;
	hdr->psn = psn;
	hdr->xcap = xp->x_offer;
	/* Only XRC opcodes carry it (stellar_tx_alloc() picks the class). */
	hdr->xrc_srqn = xp->wqe->xrc_srqn;
}

/* The port of a request outside extended mode. */
static u16 stellar_req_plain_sport(const struct stellar_qp_xport *xp)
{
	return xp->offer_sport ? xp->offer_sport : xp->cfg.sport;
}

/*
 * Note when packet @t (PSN @psn, @len payload bytes) goes out and on which
 * path: when spraying, another one than before if @resent, else the next
 * in the rotation.
 */
static void stellar_req_place(struct stellar_qp_xport *xp,
			      struct stellar_txp *t, u32 psn, u32 len,
			      bool resent)
{
	struct stellar_spray *spray = &xp->rc->spray;
	u64 now = stellar_now_us();
	u32 path = 0;

	xp->spraying = spray->nr_paths > 1;
	if (xp->spraying) {
		path = resent ?
		       stellar_spray_pick_retx(spray, psn, t->path, now) :
		       stellar_spray_pick(spray, psn, now);
		stellar_spray_sent(spray, path, len,
				   stellar_psn_before(psn, xp->psn_high));
	}
	/* How long after the first copy this one goes (0: the first). */
	t->since_first_us = resent ?
		min_t(u64, now - (t->sent_us - t->since_first_us), U32_MAX) : 0;
	t->sent_us = now;
	t->path = path;
}

/* The UDP source port of a packet that took path @path. */
static u16 stellar_req_path_sport(const struct stellar_qp_xport *xp, u32 path)
{
	return xp->spraying ? stellar_spray_sport(&xp->rc->spray, path) :
			      xp->cfg.sport;
}

/*
 * Extended mode: remember when and where a SEND/WRITE packet went, and
 * pick its path (spread over the spray paths when there are several).
 * *@echo says whether the packet asks for an echo of its path's way back
 * (stellar_spray_want_echo()).
 * Return: its UDP source port.
 */
static u16 stellar_req_track(struct stellar_qp_xport *xp, u32 psn, u32 len,
			     bool *echo)
{
	struct stellar_txp *t = stellar_txp(xp, psn);
	bool retx = stellar_psn_before(psn, xp->psn_high);

	*echo = false;
	if (!xp->x_on)
		return stellar_req_plain_sport(xp);
	if (!retx)
		t->flags = 0;
	stellar_req_place(xp, t, psn, len, retx && (t->flags & STELLAR_TXP_DATA));
	t->flags = (t->flags & ~STELLAR_TXP_SACKED) | STELLAR_TXP_DATA |
		   (retx ? STELLAR_TXP_RETX : 0);
	*echo = !retx && xp->spraying &&
		stellar_spray_want_echo(&xp->rc->spray, t->path, t->sent_us);
	return stellar_req_path_sport(xp, t->path);
}

/*
 * Extended mode: pick the path of a READ or atomic request (sent again:
 * another one than before, as its responses echo the request's port) and
 * remember it until the first response shows the path works.
 * Return: its UDP source port.
 */
static u16 stellar_req_track_rd(struct stellar_qp_xport *xp, u32 psn)
{
	struct stellar_txp *t = stellar_txp(xp, psn);
	bool retx = stellar_psn_before(psn, xp->psn_high) &&
		    (t->flags & STELLAR_TXP_RDREQ);

	if (!xp->x_on)
		return stellar_req_plain_sport(xp);
	stellar_req_place(xp, t, psn, 0, retx);
	t->flags = STELLAR_TXP_RDREQ | (retx ? STELLAR_TXP_RETX : 0);
	return stellar_req_path_sport(xp, t->path);
}

/* Extended mode: where packet xp->req_pkt of @s goes at the peer. */
static void stellar_req_fill_xph(struct stellar_qp_xport *xp,
				 const struct stellar_swqe *s,
				 struct stellar_pkt *hdr, u32 offset)
{
	/* An ATOMIC WRITE is never placed out of order: no header. */
	if (!xp->x_on || s->opcode == STELLAR_WR_ATOMIC_WRITE)
		return;
	hdr->xhdr = true;
	hdr->xph.offset = offset;
	hdr->xph.rmsn = s->rmsn;
	if (s->opcode == IB_WR_RDMA_WRITE ||
	    s->opcode == IB_WR_RDMA_WRITE_WITH_IMM) {
		hdr->xph.va = xp->wqe->u.rdma.remote_addr + offset;
		hdr->xph.rkey = xp->wqe->u.rdma.rkey;
	}
}

/*
 * UD: the destination comes from the WQE's address handle.  The MADs of
 * the GSI QP (the connection manager's) take the spray paths' ports in
 * turn when the QP has several, so that a MAD sent again after a timeout
 * takes another path than the copy that was lost; other UD QPs keep one
 * port per destination QP.
 */
static int stellar_req_ud_dest(struct stellar_qp_xport *xp,
			       struct stellar_pkt *hdr, struct stellar_av *av,
			       u16 *sport)
{
	struct stellar_qp *qp = xp->qp;
	u32 qkey = xp->wqe->u.ud.remote_qkey;

	if (stellar_ah_av(qp, xp->wqe->u.ud.ah_handle, av))
		return -EINVAL;
	if (qp->ibqp.qp_type == IB_QPT_GSI)
		qkey = IB_QP1_QKEY;
	else if (qkey & 0x80000000U)
		qkey = xp->cfg.qkey;
	hdr->dest_qpn = xp->wqe->u.ud.remote_qpn & STELLAR_QPN_MASK;
	hdr->deth.qkey = qkey;
	hdr->deth.src_qpn = qp->ibqp.qp_num;
	*sport = rdma_get_udp_sport(av->flow_label, qp->ibqp.qp_num,
				    hdr->dest_qpn);
	if (stellar_gsi_rotates(xp))
		*sport = stellar_spray_path_port(xp->cfg.sport,
						 xp->sq_psn % xp->gsi_paths);
	return 0;
}

static int stellar_req_copy_payload(struct stellar_qp_xport *xp, u8 *dst,
				    u32 offset, u32 len)
{
	if (!len)
		return 0;
	if (xp->wqe->opcode == STELLAR_WR_ATOMIC_WRITE) {
		memcpy(dst, (u8 *)&xp->wqe->u.atomic_write.value + offset, len);
		return 0;
	}
	if (xp->wqe->flags & STELLAR_WQE_INLINE) {
		memcpy(dst, stellar_wqe_inline(xp->wqe) + offset, len);
		return 0;
	}
	return stellar_sgl_copy(to_spd(xp->qp->ibqp.pd),
				stellar_wqe_sge(xp->wqe),
				xp->wqe->num_sge, offset, dst, len,
				STELLAR_COPY_FROM_MR);
}

static void stellar_req_account(struct stellar_qp_xport *xp, u32 psn,
				u32 npsn)
{
	if (stellar_psn_before(psn, xp->psn_high))
		stellar_xstat(xp, STELLAR_XS_RETRANSMITS, 1);
	else
		xp->psn_high = stellar_psn_add(psn, npsn);
}

static u8 stellar_copy_status(int ret)
{
	return ret == -EMSGSIZE ? IB_WC_LOC_LEN_ERR : IB_WC_LOC_PROT_ERR;
}

/*
 * Packet xp->req_pkt of a message asks for an ACK: every
 * STELLAR_ACK_EVERY packets, and at least twice per window.  A responder
 * may acknowledge only the packets that ask for it (rdma_rxe does): with
 * a window smaller than the interval, as after a loss, a long message
 * would fill the window without asking, and only the ACK timer (with its
 * backoff) would move it on.
 */
static bool stellar_req_ack_due(const struct stellar_qp_xport *xp)
{
	u32 every = clamp_t(u32, xp->tx_win.cwnd / 2, 1, STELLAR_ACK_EVERY);

	return !((xp->req_pkt + 1) % every);
}

/*
 * Build and send packet xp->req_pkt of a SEND or WRITE WQE.  Return: 0,
 * or an IB_WC_* error status for the WQE.
 */
static u8 stellar_req_send_data_pkt(struct stellar_qp_xport *xp,
				    struct stellar_swqe *s)
{
	u32 offset = xp->req_pkt * xp->cfg.mtu;
	u32 len = min(s->length - offset, xp->cfg.mtu);
	bool last = xp->req_pkt == s->npkts - 1;
	struct stellar_av av = xp->cfg.av;
	u16 sport = xp->cfg.sport;
	struct stellar_tx_pkt tp;
	bool echo = false;
	int ret;

	stellar_req_fill_hdr(xp, &tp.hdr, xp->sq_psn);
	tp.hdr.opcode = stellar_req_opcode(xp, xp->req_pkt, s->npkts);
	if (stellar_qp_is_ud(xp->qp) &&
	    stellar_req_ud_dest(xp, &tp.hdr, &av, &sport))
		return IB_WC_LOC_QP_OP_ERR;
	tp.hdr.ack_req = stellar_qp_is_reliable(xp->qp) &&
			 (last || stellar_req_ack_due(xp));
	tp.hdr.se = last && (xp->wqe->flags & STELLAR_WQE_SOLICITED);
	tp.hdr.reth.va = xp->wqe->u.rdma.remote_addr;
	tp.hdr.reth.rkey = xp->wqe->u.rdma.rkey;
	tp.hdr.reth.len = s->length;
	tp.hdr.imm_data = xp->wqe->imm_data;
	tp.hdr.ieth_rkey = be32_to_cpu(xp->wqe->imm_data);
	stellar_req_fill_xph(xp, s, &tp.hdr, offset);
	ret = stellar_tx_alloc(xp, &tp, len);
	if (ret)
		return ret == -ENOMEM ? 0 : IB_WC_LOC_QP_OP_ERR;
	ret = stellar_req_copy_payload(xp, tp.payload, offset, len);
	if (ret) {
		kfree_skb(tp.skb);
		return stellar_copy_status(ret);
	}
	if (stellar_qp_is_reliable(xp->qp))
		sport = stellar_req_track(xp, xp->sq_psn, len, &echo);
	if (echo) {
		stellar_tx_set_echo(&tp);
		stellar_xstat(xp, STELLAR_XS_ECHOES_ASKED, 1);
	}
	stellar_req_account(xp, xp->sq_psn, 1);
	stellar_tx_xmit(xp, &av, &tp, sport);
	return IB_WC_SUCCESS;
}

/* The started, unfinished WQE that PSN @psn belongs to, or NULL. */
static struct stellar_swqe *stellar_req_find(struct stellar_qp_xport *xp,
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
	}
	return NULL;
}

/**
 * stellar_req_resend_psn() - send one SEND or WRITE packet again
 * @xp: the transport, req_mutex held
 * @psn: its PSN, already sent once
 *
 * Selective retransmission: the packet is rebuilt from the WQE's copy
 * without moving the send position.
 *
 * Return: true if it was sent, false if @psn is not a SEND/WRITE packet
 * of an unfinished WQE (or the packet could not be built).
 */
bool stellar_req_resend_psn(struct stellar_qp_xport *xp, u32 psn)
{
	u32 req_index = xp->req_index, req_pkt = xp->req_pkt;
	u32 sq_psn = xp->sq_psn, index;
	struct stellar_swqe *s = stellar_req_find(xp, psn, &index);
	u8 status;

	if (!s || stellar_wr_is_rd_atomic(s->opcode) ||
	    !stellar_psn_before(psn, xp->psn_high))
		return false;
	xp->wqe = stellar_sq_copy(xp, index);
	xp->req_pkt = stellar_psn_diff(psn, s->first_psn);
	xp->sq_psn = psn;
	status = stellar_req_send_data_pkt(xp, s);
	xp->req_index = req_index;
	xp->req_pkt = req_pkt;
	xp->sq_psn = sq_psn;
	if (status != IB_WC_SUCCESS) {
		stellar_wqe_done(xp, index, status);
		return false;
	}
	stellar_xstat(xp, STELLAR_XS_SEL_RETRANSMITS, 1);
	return true;
}

/* The READ request for the responses not received yet. */
static u8 stellar_req_send_read(struct stellar_qp_xport *xp,
				struct stellar_swqe *s)
{
	u32 offset = xp->req_pkt * xp->cfg.mtu;
	struct stellar_tx_pkt tp;
	u16 sport;

	stellar_req_fill_hdr(xp, &tp.hdr, xp->sq_psn);
	tp.hdr.opcode = STELLAR_OP_RC_RDMA_READ_REQUEST;
	tp.hdr.ack_req = true;
	tp.hdr.reth.va = xp->wqe->u.rdma.remote_addr + offset;
	tp.hdr.reth.rkey = xp->wqe->u.rdma.rkey;
	tp.hdr.reth.len = s->length - offset;
	if (stellar_tx_alloc(xp, &tp, 0))
		return IB_WC_SUCCESS;	/* no memory: the timer resends */
	sport = stellar_req_track_rd(xp, xp->sq_psn);
	stellar_req_account(xp, xp->sq_psn, s->npkts - xp->req_pkt);
	stellar_tx_xmit(xp, &xp->cfg.av, &tp, sport);
	return IB_WC_SUCCESS;
}

static u8 stellar_req_send_atomic(struct stellar_qp_xport *xp)
{
	struct stellar_tx_pkt tp;
	bool cmp_swap = xp->wqe->opcode == IB_WR_ATOMIC_CMP_AND_SWP;
	u16 sport;

	stellar_req_fill_hdr(xp, &tp.hdr, xp->sq_psn);
	tp.hdr.opcode = cmp_swap ? STELLAR_OP_RC_COMPARE_SWAP :
				   STELLAR_OP_RC_FETCH_ADD;
	tp.hdr.ack_req = true;
	tp.hdr.atomic.va = xp->wqe->u.atomic.remote_addr;
	tp.hdr.atomic.rkey = xp->wqe->u.atomic.rkey;
	tp.hdr.atomic.swap_add = cmp_swap ? xp->wqe->u.atomic.swap :
					    xp->wqe->u.atomic.compare_add;
	tp.hdr.atomic.compare = cmp_swap ? xp->wqe->u.atomic.compare_add : 0;
	if (stellar_tx_alloc(xp, &tp, 0))
		return IB_WC_SUCCESS;
	sport = stellar_req_track_rd(xp, xp->sq_psn);
	stellar_req_account(xp, xp->sq_psn, 1);
	stellar_tx_xmit(xp, &xp->cfg.av, &tp, sport);
	return IB_WC_SUCCESS;
}

static u8 stellar_req_local_op(struct stellar_qp_xport *xp)
{
	struct stellar_pd *pd = to_spd(xp->qp->ibqp.pd);
	int ret;

	switch (xp->wqe->opcode) {
	case IB_WR_REG_MR:
		ret = stellar_mr_fast_reg(pd,
					  (struct ib_mr *)(uintptr_t)xp->wqe->u.raw[0],
					  (u32)xp->wqe->u.raw[1],
					  (int)xp->wqe->u.raw[2]);
		break;
	case IB_WR_BIND_MW:
		ret = stellar_mw_bind(xp->qp, xp->wqe);
		break;
	default:
		ret = stellar_mr_invalidate(pd, be32_to_cpu(xp->wqe->imm_data),
					    NULL);
	}
	return ret ? IB_WC_MW_BIND_ERR : IB_WC_SUCCESS;
}

/*
 * The QP's congestion control rate (stellar_cnp.c) or the device's rate
 * limit (stellar_limits.c) holds the requester back: it stops, and its
 * work is queued again when there are tokens.
 */
static bool stellar_req_held(struct stellar_qp_xport *xp)
{
	return stellar_cnp_hold(xp) ||
	       stellar_rate_hold(&xp->sdev->limits, xp->qp->ibqp.qp_num,
				 STELLAR_RATE_REQ);
}

/*
 * Send what the current WQE allows within @budget packets.  Return: the
 * WQE's error status, IB_WC_SUCCESS; *@done tells if all of it was sent.
 */
static u8 stellar_req_send_wqe(struct stellar_qp_xport *xp,
			       struct stellar_swqe *s, u32 *budget,
			       bool *done)
{
	u8 status = IB_WC_SUCCESS;

	*done = false;
	switch (s->opcode) {
	case IB_WR_REG_MR:
	case IB_WR_LOCAL_INV:
	case IB_WR_BIND_MW:
		*done = true;
		return stellar_req_local_op(xp);
	case IB_WR_RDMA_READ:
		status = stellar_req_send_read(xp, s);
		stellar_lat_sent(xp, xp->req_index);
		xp->sq_psn = stellar_psn_add(s->first_psn, s->npkts);
		xp->req_pkt = s->npkts;
		(*budget)--;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		status = stellar_req_send_atomic(xp);
		stellar_lat_sent(xp, xp->req_index);
		xp->sq_psn = stellar_psn_add(xp->sq_psn, 1);
		xp->req_pkt = 1;
		(*budget)--;
		break;
	default:
		while (xp->req_pkt < s->npkts && *budget &&
		       !stellar_req_window_full(xp) && !stellar_req_held(xp)) {
			status = stellar_req_send_data_pkt(xp, s);
			if (status != IB_WC_SUCCESS)
				return status;
			if (!xp->req_pkt)
				stellar_lat_sent(xp, xp->req_index);
			xp->sq_psn = stellar_psn_add(xp->sq_psn, 1);
			xp->req_pkt++;
			(*budget)--;
		}
	}
	*done = xp->req_pkt >= s->npkts;
	return status;
}

/*
 * The WQE at req_index: copied from the ring when first reached, then only
 * its copy is used.  False if there is none (or it failed).
 */
static bool stellar_req_fetch(struct stellar_qp_xport *xp,
			      struct stellar_swqe *s)
{
	struct stellar_sq_wqe *wqe = stellar_sq_copy(xp, xp->req_index);
	u8 status;
	int ret;

	xp->wqe = wqe;
	/* A resend keeps the slot: its PSNs and READ progress stay valid. */
	if (xp->req_pkt || stellar_index_before(xp->req_index, xp->next_new))
		return true;
	ret = stellar_sq_fetch(xp->qp, xp->req_index, wqe);
	if (ret == -ENOENT)
		return false;
	stellar_lat_fetched(xp, xp->req_index);
	if (ret) {
		s->opcode = wqe->opcode;
		s->wr_id = wqe->wr_id;
		s->npkts = 0;
		xp->next_new = xp->req_index + 1;
		stellar_wqe_done(xp, xp->req_index, IB_WC_LOC_QP_OP_ERR);
		return false;
	}
	status = stellar_req_init_slot(xp, s);
	xp->next_new = xp->req_index + 1;
	if (status == IB_WC_SUCCESS)
		return true;
	s->npkts = 0;
	stellar_wqe_done(xp, xp->req_index, status);
	return false;
}

static bool stellar_req_can_send(struct stellar_qp_xport *xp)
{
	return xp->cfg.state == IB_QPS_RTS && !xp->rnr_wait &&
	       !test_bit(STELLAR_XP_ERROR, &xp->flags) &&
	       !test_bit(STELLAR_XP_GO_ERROR, &xp->flags);
}

/* Send new and rewound WQEs; return true if the budget ran out. */
static bool stellar_req_send(struct stellar_qp_xport *xp)
{
	struct stellar_qp *qp = xp->qp;
	u32 budget = STELLAR_TX_BUDGET;

	while (budget && stellar_req_can_send(xp) &&
	       !stellar_req_window_full(xp)) {
		struct stellar_swqe *s = stellar_swqe_at(xp, xp->req_index);
		bool done;
		u8 status;

		/* Resending: what finished meanwhile is not sent again. */
		if (s->state == STELLAR_SWQE_DONE && !xp->req_pkt &&
		    stellar_index_before(xp->req_index, xp->next_new)) {
			xp->req_index++;
			continue;
		}
		if (!stellar_req_fetch(xp, s) ||
		    stellar_req_wqe_waits(xp, xp->wqe) ||
		    stellar_req_held(xp))
			break;
		status = stellar_req_send_wqe(xp, s, &budget, &done);
		if (status != IB_WC_SUCCESS) {
			stellar_wqe_done(xp, xp->req_index, status);
			break;
		}
		if (!done)
			break;
		if (stellar_qp_is_reliable(qp) && s->npkts)
			s->state = STELLAR_SWQE_SENT;
		else
			stellar_wqe_done(xp, xp->req_index, IB_WC_SUCCESS);
		xp->req_index++;
		xp->req_pkt = 0;
	}
	stellar_comp_arm_timer(xp);
	return !budget;
}

/* Under qp->state_lock: the error was not withdrawn by a reset. */
static bool stellar_req_error_stands(struct stellar_qp *qp)
{
	return test_and_clear_bit(STELLAR_XP_GO_ERROR, &qp->xport->flags);
}

/* stellar_xport_fatal()'s work: move the QP to ERR, then report. */
void stellar_req_err_work(struct work_struct *work)
{
	struct stellar_qp_xport *xp = container_of(work, struct stellar_qp_xport,
						   err_work);
	int event;

	if (!stellar_qp_error_if(xp->qp, stellar_req_error_stands))
		return;
	event = atomic_xchg(&xp->async_event, -1);
	if (event >= 0)
		stellar_qp_event(xp->qp, event);
}

/**
 * stellar_xport_drain() - send what a UD QP posted before it is destroyed
 * @qp: the QP being destroyed, still in its state
 *
 * A process may post datagrams and destroy the QP at once, without
 * waiting for a completion (mckey's sender does): a NIC would have
 * fetched them by then, while here they still wait for the requester
 * work, and the move to the error state would flush them.  So the posted
 * datagrams go out first, in the caller's context: at most one round per
 * ring slot, so a ring a process keeps refilling cannot hold destroy.
 * Connected QPs do not need this: their consumers wait for completions.
 *
 * Context: process, under qp->state_lock, from destroy_qp or, for the QPs
 * that may use an AH, destroy_ah.
 */
void stellar_xport_drain(struct stellar_qp *qp)
{
	struct stellar_qp_xport *xp = qp->xport;
	u32 rounds = qp->sq.num_entries;

	if (!stellar_qp_is_ud(qp))
		return;
	mutex_lock(&xp->req_mutex);
	while (rounds-- && stellar_req_send(xp))
		;
	stellar_comp_retire(xp);
	mutex_unlock(&xp->req_mutex);
}

/* One pass of the requester under req_mutex; true if it has more to send. */
static bool stellar_req_pass(struct stellar_qp_xport *xp)
{
	bool more;

	lockdep_assert_held(&xp->req_mutex);
	if (test_bit(STELLAR_XP_ERROR, &xp->flags)) {
		stellar_comp_flush(xp);
		return false;
	}
	stellar_comp_handle_timers(xp);
	more = stellar_req_send(xp);
	stellar_comp_retire(xp);
	return more;
}

/**
 * stellar_req_work() - the requester: send, retransmit, flush
 * @work: xp->req_work
 */
void stellar_req_work(struct work_struct *work)
{
	struct stellar_qp_xport *xp = container_of(work, struct stellar_qp_xport,
						   req_work);
	bool more;

	mutex_lock(&xp->req_mutex);
	more = stellar_req_pass(xp);
	mutex_unlock(&xp->req_mutex);
	if (more)
		stellar_xport_queue(xp, &xp->req_work);
}

/*
 * A reliable QP with nothing in flight: a doorbell now starts a new
 * exchange, whose first packet is worth sending at once.
 */
static bool stellar_req_idle(struct stellar_qp_xport *xp)
{
	return stellar_qp_is_reliable(xp->qp) && xp->sq_psn == xp->una_psn &&
	       !test_bit(STELLAR_XP_ERROR, &xp->flags);
}

/**
 * stellar_xport_kick_inline() - run the requester in the doorbell's context
 * @qp: a QP whose process rang its send doorbell
 *
 * Handing every doorbell to the requester work costs a context switch
 * before the first packet leaves, which is most of what a ping-pong
 * waits for.  When a reliable QP has nothing in flight and its
 * requester is idle, the process that rang pays for its own sends
 * instead: one pass, bounded by the requester's budget, and the work
 * takes whatever is left.  Otherwise the work is queued as before: a
 * QP that streams keeps sending from its work, which batches the WQEs
 * that several doorbells published (sending each doorbell's WQE in its
 * own system call cost ib_send_bw a sixth of its rate), and queueing a
 * running work runs it again, so no WQE is missed.
 *
 * Context: process, may sleep; not under qp->state_lock.  The caller
 * holds the QP's uverbs object, so the QP is not destroyed meanwhile.
 */
void stellar_xport_kick_inline(struct stellar_qp *qp)
{
	struct stellar_qp_xport *xp = qp->xport;
	bool more;

	might_sleep();
	stellar_lat_doorbell(xp);
	if (test_bit(STELLAR_XP_DYING, &xp->flags))
		return;
	if (!mutex_trylock(&xp->req_mutex)) {
		stellar_xport_queue(xp, &xp->req_work);
		return;
	}
	if (!stellar_req_idle(xp)) {
		mutex_unlock(&xp->req_mutex);
		stellar_xport_queue(xp, &xp->req_work);
		return;
	}
	more = stellar_req_pass(xp);
	mutex_unlock(&xp->req_mutex);
	if (more)
		stellar_xport_queue(xp, &xp->req_work);
}
