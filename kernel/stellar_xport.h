/* SPDX-License-Identifier: GPL-2.0 */
/*
 * virtio-stellar: private state of the RoCEv2 transport engine.
 *
 * Each QP has three work items on the transport workqueue: the requester
 * (req_work: sends new and retransmitted packets, handles timer expiry and
 * flushes the send queue in the error state), the receiver (rx_work:
 * drains the QP's backlog of received packets; requests go to the
 * responder, responses to the completer) and the responder's sender
 * (resp_work: the responses of READ and atomic requests, a budget of
 * packets per run).  The requester and the completer share the send
 * side state under req_mutex; the responder has its own state under
 * resp_mutex.  Neither mutex is ever held while taking the
 * verbs layer's qp->state_lock, which is held when stellar_xport_modify()
 * takes them.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_XPORT_H
#define STELLAR_XPORT_H

#include <linux/atomic.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/mutex.h>
#include <linux/seqlock.h>
#include <linux/seq_file.h>
#include <linux/skbuff.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <net/ip.h>
#include <net/ipv6.h>

#include "stellar.h"
#include "stellar_cc.h"
#include "stellar_win.h"
#include "stellar_lat.h"
#include "stellar_psn.h"
#include "stellar_reo.h"
#include "stellar_spray.h"
#include "stellar_tbf.h"
#include "stellar_transport.h"
#include "stellar_wire.h"

/* Received packets a QP may have queued before further ones are dropped. */
#define STELLAR_RX_BACKLOG		4096
/* ... and their bytes (skb truesize); the device has its own cap too. */
#define STELLAR_RX_BACKLOG_BYTES	(4 << 20)
/* Packets the requester keeps in flight: half the receive window. */
#define STELLAR_TX_WINDOW		(STELLAR_PSN_WINDOW_BITS / 2)
/*
 * Receive WQEs of later messages a QP may take from its own receive queue
 * ahead of their turn, so that SEND packets beyond a gap are placed
 * directly (they count against rx_buf_size too).
 */
#define STELLAR_RQ_AHEAD		64
/* Timeouts in a row double the ACK timer up to 2^this times (IBA: <= 4x). */
#define STELLAR_BACKOFF_MAX		2
/* READ responses seen beyond a gap before the rest is asked for again. */
#define STELLAR_RESP_GAP_THRESHOLD	3
/*
 * The same, for responses placed out of order: reordering alone must not
 * make the requester ask for the tail of a READ again.
 */
#define STELLAR_RD_REORDER_THRESHOLD	64
/* Packets the requester sends per run before it yields the worker. */
#define STELLAR_TX_BUDGET		256
/* Received packets handled per run of the receive work. */
#define STELLAR_RX_BUDGET		256

/*
 * Bytes a packet with the longest stellar headers needs beyond the path
 * MTU: IPv6, UDP, BTH + RETH + ImmDt + placement header, ICRC.  The
 * extensions are offered only if the netdev MTU leaves this much room.
 */
#define STELLAR_X_OVERHEAD		(STELLAR_IPV6_HDR_LEN + \
					 STELLAR_UDP_HDR_LEN + \
					 STELLAR_MAX_XHDR_LEN + STELLAR_ICRC_LEN)

/*
 * Extended mode loss detection (RACK-like): a packet is lost when one sent
 * at least max(min_rtt / 4, this) later was acknowledged.
 */
#define STELLAR_REO_MIN_US		1000
/* Doublings of the reordering window after spurious retransmissions. */
#define STELLAR_REO_SHIFT_MAX		4
/* The minimum RTT is taken over this long (then restarts from a sample). */
#define STELLAR_MIN_RTT_WIN_US		(10 * USEC_PER_SEC)
/* Shortest retransmission timeout computed from the RTT. */
#define STELLAR_RTO_MIN_US		2000
/* The RTT-based timeout a retry waits for twice, at most. */
#define STELLAR_RETRY_RTT_MAX_US	(500 * USEC_PER_MSEC)
/* Lost packets resent per acknowledgement, at most. */
#define STELLAR_SEL_BUDGET		64
/*
 * Reply ports besides the newest that an ACK answering a resent packet
 * also takes: over ECMP the way back of a port is not its way there, and
 * the responder cannot tell which ways back are dead.
 */
#define STELLAR_ALT_REPLY_PORTS		3
/*
 * Ports of requests asking for an echo that one ACK answers, at most (a
 * requester asks on at most one packet in STELLAR_SPRAY_ECHO_EVERY).
 */
#define STELLAR_ECHO_PORTS		4

/* Bits of stellar_txp.flags. */
#define STELLAR_TXP_DATA		BIT(0)	/* SEND/WRITE packet, tracked */
#define STELLAR_TXP_SACKED		BIT(1)	/* selectively acknowledged */
#define STELLAR_TXP_RETX		BIT(2)	/* sent more than once */
#define STELLAR_TXP_RDREQ		BIT(3)	/* READ/atomic request, tracked */

/**
 * struct stellar_txp - requester state of one packet in flight
 * @sent_us: when it was (last) sent
 * @since_first_us: how long after its first copy it was last sent (0:
 *	sent once), so that a late first copy's overtaking can be measured
 * @path: spray path it (last) took
 * @flags: STELLAR_TXP_* bits; 0 for packets not tracked
 */
struct stellar_txp {
	u64 sent_us;
	u32 since_first_us;
	u8 path;
	u8 flags;
};

/* AETH syndrome: bits 7..5 say what it is, bits 4..0 qualify it. */
#define STELLAR_AETH_TYPE		GENMASK(7, 5)
#define STELLAR_AETH_VALUE		GENMASK(4, 0)
#define STELLAR_AETH_TYPE_ACK		0
#define STELLAR_AETH_TYPE_RNR_NAK	1
#define STELLAR_AETH_TYPE_NAK		3
#define STELLAR_AETH_CREDIT_INVALID	0x1f	/* no end-to-end flow control */

/* NAK codes (AETH value of a NAK). */
#define STELLAR_NAK_PSN_SEQ_ERR		0
#define STELLAR_NAK_INVALID_REQ		1
#define STELLAR_NAK_REM_ACCESS_ERR	2
#define STELLAR_NAK_REM_OP_ERR		3

/* Bits of stellar_qp_xport.flags. */
enum stellar_xport_flag {
	STELLAR_XP_DYING,	/* being destroyed: queue no more work */
	STELLAR_XP_ERROR,	/* QP in the error state: flush */
	STELLAR_XP_TIMEOUT,	/* retransmission timer expired */
	STELLAR_XP_RNR_DONE,	/* RNR wait is over: resend */
	STELLAR_XP_GO_ERROR,	/* transport error: move the QP to ERR */
};

/* Per-QP counters, shown by stellar_xport_show(). */
enum stellar_xport_stat {
	STELLAR_XS_TX_PACKETS,
	STELLAR_XS_TX_BYTES,
	STELLAR_XS_RX_PACKETS,
	STELLAR_XS_RX_BYTES,
	STELLAR_XS_RETRANSMITS,
	STELLAR_XS_TIMEOUTS,
	STELLAR_XS_ACKS_SENT,
	STELLAR_XS_NAKS_SENT,
	STELLAR_XS_RNR_NAKS_SENT,
	STELLAR_XS_NAKS_RCVD,
	STELLAR_XS_RNR_NAKS_RCVD,
	STELLAR_XS_DUPLICATES,
	STELLAR_XS_OUT_OF_ORDER,
	STELLAR_XS_DROP_BACKLOG,
	STELLAR_XS_DROP_WINDOW,
	STELLAR_XS_DROP_STATE,
	STELLAR_XS_DROP_HEADER,
	STELLAR_XS_DROP_NO_RECV,
	STELLAR_XS_TX_ERRORS,
	STELLAR_XS_X_RCVD,
	STELLAR_XS_OOO_PLACED,
	STELLAR_XS_DROP_PLACE,
	STELLAR_XS_SACKS_SENT,
	STELLAR_XS_SACKS_RCVD,
	STELLAR_XS_SEL_RETRANSMITS,
	STELLAR_XS_EARLY_TIMEOUTS,
	STELLAR_XS_ECN_CE_RCVD,
	STELLAR_XS_ECN_ECHOES_RCVD,
	STELLAR_XS_DROP_SOURCE,
	STELLAR_XS_NAK_RD_LIMIT,
	STELLAR_XS_DROP_RD_DUP,
	STELLAR_XS_CNP_SENT,
	STELLAR_XS_CNP_RCVD,
	STELLAR_XS_CC_RATE_CUTS,
	STELLAR_XS_CC_RATE_INCREASES,
	STELLAR_XS_CC_PACED,
	STELLAR_XS_ECHOES_ASKED,
	STELLAR_XS_ECHOES_SENT,
	STELLAR_XS_ECHOES_RCVD,
	__STELLAR_XS_MAX,
};

/* Where a send WQE is. */
enum stellar_swqe_state {
	STELLAR_SWQE_NEW,	/* not (entirely) sent yet */
	STELLAR_SWQE_SENT,	/* all packets sent, waiting for the peer */
	STELLAR_SWQE_DONE,	/* finished: complete when it is the oldest */
};

/**
 * struct stellar_swqe - requester state of one send queue slot
 * @first_psn: PSN of its first packet (read: first response)
 * @npkts: PSNs the WQE consumes (at least 1 for RC/UC, 0 for local ops)
 * @length: message length in bytes
 * @rcvd_pkts: read responses received in order so far
 * @rmsn: receive-consuming messages (SEND, WRITE with immediate) the QP
 *	sent before this WQE: its receive WQE at the peer
 * @opcode: IB_WR_* of the WQE
 * @state: enum stellar_swqe_state
 * @status: IB_WC_* status once done
 * @signaled: a completion is reported on success
 * @wr_id: the consumer's cookie
 *
 * PSN i of the WQE carries bytes [i * mtu, (i + 1) * mtu) of the message,
 * so every packet can be rebuilt from the WQE's copy in
 * stellar_qp_xport.sq_copy: the basis of selective retransmission.
 */
struct stellar_swqe {
	u32 first_psn;
	u32 npkts;
	u32 length;
	u32 rcvd_pkts;
	u32 rmsn;
	u8 opcode;
	u8 state;
	u8 status;
	bool signaled;
	u64 wr_id;
};

/**
 * struct stellar_resp_res - a READ or atomic request of the peer
 * @first_psn: its PSN
 * @last_psn: PSN of its last response
 * @npkts: responses it takes (1 for an atomic)
 * @sent: responses sent so far; a duplicate request moves it back
 * @msn: the MSN its responses carry
 * @mtu: READ: payload bytes per response
 * @va: READ: remote address
 * @rkey: READ: its key
 * @length: READ length
 * @orig: atomic: the value returned
 * @is_atomic: atomic rather than READ
 * @ack_first: an ACK for the requests before it was deferred behind
 *	earlier responses: it goes out before this request's responses
 * @valid: entry holds a request
 * @replay: its responses are sent again, for a duplicate request, after
 *	they had all gone out once
 * @xrc_srqn: on an XRC target QP, the XRC SRQ the request named, whose PD
 *	its key belongs to (looked up again for each response)
 * @xrc_srq_serial: that SRQ's serial, so that another SRQ given its
 *	number later is not taken for it
 *
 * The responses are sent by the responder work, a few at a time; the
 * entry stays after that, so that a duplicate request is answered again
 * from what the original asked for, without executing an atomic twice.
 */
struct stellar_resp_res {
	u32 first_psn;
	u32 last_psn;
	u32 npkts;
	u32 sent;
	u32 msn;
	u32 mtu;
	u64 va;
	u32 rkey;
	u32 length;
	u64 orig;
	bool is_atomic;
	bool ack_first;
	bool valid;
	bool replay;
	u32 xrc_srqn;
	u64 xrc_srq_serial;
};

/**
 * struct stellar_resp_msg - the multi-packet message being received
 * @kind: 0, STELLAR_OPF_SEND or STELLAR_OPF_WRITE
 * @have_wqe: @rwqe holds the receive WQE the message lands in
 * @offset: bytes received so far
 * @va: WRITE: remote address of the next byte
 * @rkey: WRITE: the R_Key
 * @length: WRITE: DMA length from the RETH
 * @status: first local error seen (IB_WC_SUCCESS if none)
 * @xrc_srqn: XRC target QP: the XRC SRQ the message lands in
 * @xrc_srq_serial: and its serial
 * @rwqe: the receive WQE (SEND, WRITE with immediate)
 */
struct stellar_resp_msg {
	u16 kind;
	bool have_wqe;
	u64 offset;
	u64 va;
	u32 rkey;
	u32 length;
	u8 status;
	u32 xrc_srqn;
	u64 xrc_srq_serial;
	struct stellar_recv_wqe rwqe;
};

/**
 * struct stellar_ooo_pkt - a request received ahead of its turn
 * @pkt: its parsed headers
 * @skb: the packet; NULL once its payload was placed directly
 * @charge: bytes it counts against the device's rx_buf_size
 *
 * When the gap before it fills, the responder runs it in PSN order:
 * checks, message state, completion; a placed payload is not copied
 * again.
 */
struct stellar_ooo_pkt {
	struct stellar_pkt pkt;
	struct sk_buff *skb;
	u32 charge;
};

/**
 * struct stellar_xport_cfg - QP attributes the transport uses
 * @state: QP state
 * @mtu: path MTU in bytes (UD: from the netdev)
 * @timeout: local ACK timeout exponent (0: infinite)
 * @retry_cnt: retries after timeouts and sequence NAKs
 * @rnr_retry: retries after RNR NAKs (7: infinite)
 * @min_rnr_timer: RNR NAK timer value this QP sends
 * @max_rd_atomic: outstanding READ/atomic requests we may issue
 * @max_dest_rd_atomic: READ/atomic requests we keep for the peer
 * @access: IB_ACCESS_REMOTE_* the QP allows
 * @dest_qpn: peer QP (RC, UC)
 * @qkey: UD Q_Key
 * @sport: UDP source port
 * @av: path (RC, UC)
 */
struct stellar_xport_cfg {
	enum ib_qp_state state;
	u32 mtu;
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
	u8 min_rnr_timer;
	u32 max_rd_atomic;
	u32 max_dest_rd_atomic;
	int access;
	u32 dest_qpn;
	u32 qkey;
	u16 sport;
	struct stellar_av av;
};

/**
 * struct stellar_rx_filter - what the receive softirq may queue for a QP
 * @requests: the QP state takes requests (RTR, RTS, SQD, SQE)
 * @responses: the QP state takes responses (RC in RTS or SQD)
 * @mtu: longest payload a packet may carry (0: not checked)
 * @peer_valid: a connected QP with a path: packets come from @peer only
 * @peer: the peer's address
 *
 * A copy of xp->cfg kept under its own seqlock: the softirq drops what the
 * receive work would drop anyway before the packet costs queue memory.
 */
struct stellar_rx_filter {
	bool requests;
	bool responses;
	u32 mtu;
	bool peer_valid;
	union ib_gid peer;
};

/**
 * struct stellar_xport_rc - the large per-QP arrays only connected QPs use
 * @txp: extended mode: per-packet state, by PSN % STELLAR_TX_WINDOW
 * @spray: path choice of the requester (one path unless negotiated)
 * @res: READ/atomic requests of the peer by free-running index (modulo
 *	STELLAR_MAX_RD_ATOM), kept after they are answered for duplicates
 * @rq_ahead: receive WQEs taken ahead of their turn, a ring from
 *	qp_xport.rq_ahead_first: the first is message rq_msgs + 1's
 *
 * About 25 KiB: datagram QPs never carry it, and a connected QP gets it
 * on its first move to RTR (stellar_xport_prepare()), so that QPs created
 * ahead of use or never connected stay small.
 */
struct stellar_xport_rc {
	struct stellar_txp txp[STELLAR_TX_WINDOW];
	struct stellar_spray spray;
	struct stellar_resp_res res[STELLAR_MAX_RD_ATOM];
	struct stellar_recv_wqe *rq_ahead[STELLAR_RQ_AHEAD];
};

/**
 * struct stellar_qp_cc - a QP's DCQCN congestion control (stellar_cnp.c)
 * @on: reaction point: CNPs cut the rate, requests are paced to it (the
 *	device's cc setting when the QP entered RTS); under req_mutex
 * @params: the device's and module's parameters then
 * @rate: the rate state (stellar_cc.h)
 * @pace: token bucket at the rate, used while it is below the line rate
 * @timer: queues the requester when @pace has tokens again
 * @np_on: notification point: CE-marked requests are answered with CNPs
 *	(the device's cc setting when the QP entered RTR); under resp_mutex
 * @cnp_gap_us: least time between two CNPs
 * @cnp_sent_us: when the last CNP went (0: none yet)
 */
struct stellar_qp_cc {
	bool on;
	struct stellar_cc_params params;
	struct stellar_cc rate;
	struct stellar_tbf pace;
	struct timer_list timer;
	bool np_on;
	u32 cnp_gap_us;
	u64 cnp_sent_us;
};

/**
 * struct stellar_qp_xport - transport state of a QP
 * @qp: the QP
 * @sdev: its device
 * @flags: enum stellar_xport_flag bits
 * @async_event: enum ib_event_type to report once the QP is in ERR, or -1
 * @stats: enum stellar_xport_stat counters
 * @cfg: attribute snapshot, written under both mutexes
 * @req_mutex: requester and completer state below
 * @req_work: the requester
 * @err_work: moves the QP to ERR after a transport error (GO_ERROR), on
 *	a workqueue of its own: it takes qp->state_lock, under which
 *	modify and destroy wait for the transport's works
 * @swqe: per send queue slot state, qp->sq.num_entries entries
 * @req_index: next WQE to send (free-running ring index)
 * @req_pkt: next packet of that WQE
 * @next_new: first WQE never started: slots before it are initialized
 * @sq_psn: PSN of the next packet to send
 * @una_psn: oldest PSN not acknowledged yet
 * @psn_high: PSN after the highest one ever sent
 * @tx_win: packets the requester may have in flight (cut after losses)
 * @retry_left: retries left after timeouts and sequence NAKs
 * @rnr_left: retries left after RNR NAKs
 * @backoff: timeouts in a row without progress (ACK timer scale)
 * @resp_gap: READ/atomic responses seen beyond a gap since progress
 * @retrying: a resend from una_psn started since the last progress
 * @timeout_deferred: a timeout found unprocessed packets and waited
 * @rnr_wait: sending is paused until the RNR timer expires
 * @x_offer: requests offer the stellar extensions (BTH XCAP)
 * @offer_sport: with @x_offer, until the extensions are agreed: the port
 *	of requests (0: the QP's own); another spray path's after each
 *	local ACK timeout, so that a QP whose first packets meet a broken
 *	path is not stuck on it
 * @x_on: the peer accepted: requests carry a placement header
 * @rmsn_next: receive-consuming messages started so far
 * @retrans_timer: the local ACK timer
 * @rnr_timer: RNR NAK wait
 * @rd_win: READ responses received of the oldest READ (@rd_index)
 * @rd_index: ring index of the WQE @rd_win belongs to
 * @rd_valid: @rd_win is in use
 * @rd_ooo: READ responses placed beyond a gap since the last progress
 * @rack_xmit_us: send time of the latest-sent packet known delivered
 * @sack_high: PSN after the highest one selectively acknowledged
 * @win_recover_psn: a selective resend below it belongs to the loss
 *	episode that last shrank @tx_win
 * @sel_lost_psn: the PSN RACK found lost last
 * @ack_newest: of the ACK being processed, the newest PSN the peer
 *	received (the only one an RTT is measured from)
 * @ack_ecn: the ACK being processed says @ack_newest arrived marked CE
 * @srtt_us: smoothed RTT (0: not measured yet)
 * @rttvar_us: RTT variation
 * @min_rtt_us: smallest RTT sample of the last STELLAR_MIN_RTT_WIN_US
 * @min_rtt_at_us: when @min_rtt_us was taken
 * @timer_base: jiffies of the last progress or real retry; a retry is
 *	counted only a full local ACK timeout after it
 * @spraying: packets are spread over the paths of rc->spray
 * @reo_shift: the reordering window is doubled this often (0..4), once
 *	per spurious retransmission seen
 * @reo: reordering seen among a spraying QP's packets
 * @gsi_paths: GSI QP: the spray paths its MADs rotate over (1: none)
 * @rc: connected QPs only, from their first move to RTR on (NULL
 *	before and for datagram QPs); never freed before the QP
 * @sq_copy: the kernel's own copy of each started send WQE, by send
 *	queue slot (qp->sq.num_entries entries of qp->sq.entry_size bytes):
 *	taken from the ring once, when the requester first reaches the
 *	WQE; resends, READ responses and completions read only the copy
 * @wqe: the WQE being sent: its entry in @sq_copy
 * @lat: latency telemetry: histograms and per-slot times (stellar_lat.c)
 * @cc: congestion control, requester and responder parts
 * @resp_mutex: responder state below
 * @rx_work: the receiver
 * @rxq: backlog of received packets (own lock: filled in softirq)
 * @rxq_bytes: truesize of the skbs in @rxq (under its lock)
 * @rxf_lock: writers of @rxf (stellar_xport_modify) against the softirq
 * @rxf: checks the softirq does before it queues a packet
 * @win: PSNs received ahead of the expected one
 * @ooo: out-of-order requests by PSN (struct stellar_ooo_pkt), waiting
 *	for the gap before them
 * @ooo_bytes: bytes charged for @ooo
 * @rq_msgs: receive-consuming messages completed (placement header rmsn)
 * @msn: message sequence number
 * @ack_pending: an ACK for win.epsn - 1 is owed
 * @signal_cq: a receive CQ whose completion event waits for that ACK
 * @nak_sent: a sequence NAK was sent for the current gap
 * @peer_x: the peer offered the stellar extensions: responses accept
 * @newest_psn: PSN of the latest new request packet received (SACKs)
 * @newest_ce: with @peer_x, that packet arrived marked CE (congestion);
 *	the next ACK says so (BECN) once
 * @reply_sport: with @peer_x, the UDP source port of the latest request:
 *	responses take the path the requester chose for it (0: none yet)
 * @alt_sports: the distinct reply ports before @reply_sport, newest
 *	first (0: none)
 * @ack_copies: the next ACK ends a message (1) or answers a resent
 *	packet (STELLAR_ALT_REPLY_PORTS): it goes on that many of
 *	@alt_sports too
 * @echo_sports: with @peer_x, the distinct ports of requests that asked
 *	for an echo (XECHO) since the last ACK, which goes on them too,
 *	marked (0: none)
 * @msg: the message being received
 * @rq_ahead_first: ring index of the first of rc->rq_ahead
 * @rq_ahead_n: receive WQEs taken ahead (only while @msg has its own)
 * @rq_ahead_bytes: bytes charged for them against rx_buf_size
 * @xrc_srq: on an XRC target QP, while a request executes, the XRC SRQ
 *	it names (a reference): its receive WQEs, PD and CQ serve it; held
 *	no longer, so that destroying the SRQ never waits for a peer
 * @resp_work: sends the responses of READ and atomic requests
 * @res_next: index of the next request
 * @res_send: index of the oldest request that may have responses to send
 * @res_pending: requests with responses to send, at most
 *	cfg.max_dest_rd_atomic new ones (beyond: NAK Invalid Request); while
 *	there are any, ACKs and NAKs for later PSNs wait
 * @res_replays: how many of them are replays (&stellar_resp_res.replay),
 *	which do not count against that limit
 * @nak_syn: a sequence or RNR NAK that waits for them (0: none)
 * @nak_psn: its PSN
 */
struct stellar_qp_xport {
	struct stellar_qp *qp;
	struct stellar_dev *sdev;
	unsigned long flags;
	atomic_t async_event;
	atomic64_t stats[__STELLAR_XS_MAX];
	struct stellar_xport_cfg cfg;

	struct mutex req_mutex;		/* requester and completer */
	struct work_struct req_work;
	struct work_struct err_work;
	struct stellar_swqe *swqe;
	u32 req_index;
	u32 req_pkt;
	u32 next_new;
	u32 sq_psn;
	u32 una_psn;
	u32 psn_high;
	struct stellar_win tx_win;
	u8 retry_left;
	u8 rnr_left;
	u8 backoff;
	u8 resp_gap;
	bool retrying;
	bool timeout_deferred;
	bool rnr_wait;
	bool x_offer;
	u16 offer_sport;
	bool x_on;
	u32 rmsn_next;
	struct timer_list retrans_timer;
	struct timer_list rnr_timer;
	struct stellar_psn_window rd_win;
	u32 rd_index;
	bool rd_valid;
	u16 rd_ooo;
	u64 rack_xmit_us;
	u32 sack_high;
	u32 win_recover_psn;
	u32 sel_lost_psn;
	u32 ack_newest;
	bool ack_ecn;
	u32 srtt_us;
	u32 rttvar_us;
	u32 min_rtt_us;
	u64 min_rtt_at_us;
	unsigned long timer_base;
	bool spraying;
	u8 reo_shift;
	u8 gsi_paths;
	struct stellar_reo reo;
	struct stellar_xport_rc *rc;
	u8 *sq_copy;
	const struct stellar_sq_wqe *wqe;
	struct stellar_qp_lat *lat;
	struct stellar_qp_cc cc;

	struct mutex resp_mutex;	/* responder */
	struct work_struct rx_work;
	struct sk_buff_head rxq;
	u32 rxq_bytes;
	seqlock_t rxf_lock;
	struct stellar_rx_filter rxf;
	struct stellar_psn_window win;
	struct xarray ooo;
	u32 ooo_bytes;
	u32 rq_msgs;
	u32 msn;
	bool ack_pending;
	struct stellar_cq *signal_cq;
	bool nak_sent;
	bool peer_x;
	u32 newest_psn;
	bool newest_ce;
	u16 reply_sport;
	u16 alt_sports[STELLAR_ALT_REPLY_PORTS];
	u8 ack_copies;
	u16 echo_sports[STELLAR_ECHO_PORTS];
	struct stellar_resp_msg msg;
	u8 rq_ahead_first;
	u8 rq_ahead_n;
	u32 rq_ahead_bytes;
	struct stellar_srq *xrc_srq;
	struct work_struct resp_work;
	u32 res_next;
	u32 res_send;
	u32 res_pending;
	u32 res_replays;
	u8 nak_syn;
	u32 nak_psn;
};

/* The kernel's own state of the send WQE at ring index @index. */
static inline struct stellar_swqe *stellar_swqe_at(struct stellar_qp_xport *xp,
						   u32 index)
{
	return &xp->swqe[index & (xp->qp->sq.num_entries - 1)];
}

/**
 * struct stellar_tx_pkt - a packet under construction
 * @skb: the buffer; data starts at the BTH
 * @payload: where the payload goes (already reserved)
 * @hdr: header fields
 */
struct stellar_tx_pkt {
	struct sk_buff *skb;
	u8 *payload;
	struct stellar_pkt hdr;
};

/* The device-wide counter a per-QP counter also feeds, if any. */
static inline enum stellar_genl_stat
stellar_xstat_dev(enum stellar_xport_stat stat)
{
	switch (stat) {
	case STELLAR_XS_RETRANSMITS:
		return STELLAR_STAT_RETRANSMITS;
	case STELLAR_XS_NAKS_SENT:
	case STELLAR_XS_RNR_NAKS_SENT:
		return STELLAR_STAT_NAKS_SENT;
	case STELLAR_XS_NAKS_RCVD:
	case STELLAR_XS_RNR_NAKS_RCVD:
		return STELLAR_STAT_NAKS_RCVD;
	case STELLAR_XS_DUPLICATES:
		return STELLAR_STAT_RX_DUPLICATE;
	case STELLAR_XS_DROP_WINDOW:
		return STELLAR_STAT_RX_DROP_PSN;
	case STELLAR_XS_CNP_SENT:
		return STELLAR_STAT_CNP_SENT;
	case STELLAR_XS_CNP_RCVD:
		return STELLAR_STAT_CNP_RCVD;
	case STELLAR_XS_CC_RATE_CUTS:
		return STELLAR_STAT_CC_RATE_CUTS;
	case STELLAR_XS_CC_RATE_INCREASES:
		return STELLAR_STAT_CC_RATE_INCREASES;
	case STELLAR_XS_CC_PACED:
		return STELLAR_STAT_CC_PACED;
	default:
		return STELLAR_STAT_UNSPEC;
	}
}

/* A second device-wide counter, a finer one, a per-QP counter feeds. */
static inline enum stellar_genl_stat
stellar_xstat_dev_detail(enum stellar_xport_stat stat)
{
	switch (stat) {
	case STELLAR_XS_RNR_NAKS_SENT:
		return STELLAR_STAT_RNR_NAKS_SENT;
	case STELLAR_XS_RNR_NAKS_RCVD:
		return STELLAR_STAT_RNR_NAKS_RCVD;
	case STELLAR_XS_OUT_OF_ORDER:
		return STELLAR_STAT_OUT_OF_ORDER;
	case STELLAR_XS_TIMEOUTS:
		return STELLAR_STAT_TIMEOUTS;
	default:
		return STELLAR_STAT_UNSPEC;
	}
}

static inline void stellar_xstat(struct stellar_qp_xport *xp,
				 enum stellar_xport_stat stat, u64 n)
{
	enum stellar_genl_stat dev_stat = stellar_xstat_dev(stat);
	enum stellar_genl_stat detail = stellar_xstat_dev_detail(stat);

	atomic64_add(n, &xp->stats[stat]);
	if (dev_stat != STELLAR_STAT_UNSPEC)
		stellar_count(xp->sdev, dev_stat, n);
	if (detail != STELLAR_STAT_UNSPEC)
		stellar_count(xp->sdev, detail, n);
}

/*
 * Paths a QP spreads its packets over, for statistics read without its
 * lock: rc, once set, stays until the QP goes.
 */
static inline u32 stellar_xport_spray_paths(const struct stellar_qp_xport *xp)
{
	/* Pairs with the release in stellar_xport_prepare(). */
	const struct stellar_xport_rc *rc = smp_load_acquire(&xp->rc);

	if (!rc || !READ_ONCE(xp->spraying))
		return 1;
	return stellar_peek(rc->spray.nr_paths);
}

/* Free-running ring index @a comes before @b. */
static inline bool stellar_index_before(u32 a, u32 b)
{
	return (s32)(a - b) < 0;
}

/* The kernel's copy of the send WQE at ring index @index. */
static inline struct stellar_sq_wqe *
stellar_sq_copy(const struct stellar_qp_xport *xp, u32 index)
{
	const struct stellar_queue *sq = &xp->qp->sq;

	return (struct stellar_sq_wqe *)(xp->sq_copy +
		(size_t)(index & (sq->num_entries - 1)) * sq->entry_size);
}

/* The SGEs of a send WQE's copy. */
static inline const struct stellar_sge *
stellar_wqe_sge(const struct stellar_sq_wqe *wqe)
{
	return (const struct stellar_sge *)(wqe + 1);
}

/* The inline data of a send WQE's copy. */
static inline const u8 *stellar_wqe_inline(const struct stellar_sq_wqe *wqe)
{
	return (const u8 *)(wqe + 1);
}

static inline bool stellar_qp_is_ud(const struct stellar_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI;
}

/* XRC's send (initiator) or receive (target) half. */
static inline bool stellar_qp_is_xrc(const struct stellar_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_XRC_INI ||
	       qp->ibqp.qp_type == IB_QPT_XRC_TGT;
}

/*
 * The reliable connected services: RC and XRC, whose two halves run RC's
 * transport (the XRC opcodes are RC's in another class, see
 * stellar_xrc_as_rc()).
 */
static inline bool stellar_qp_is_reliable(const struct stellar_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_RC || stellar_qp_is_xrc(qp);
}

/*
 * A received XRC packet, for the transport: the RC operation it carries
 * (its XRCETH stays in @pkt).  The transport works on RC opcodes and
 * stellar_tx_alloc() puts an XRC QP's packets in the XRC class.
 */
static inline void stellar_xrc_as_rc(struct stellar_pkt *pkt)
{
	if ((pkt->opcode & STELLAR_OP_CLASS_MASK) == STELLAR_OP_CLASS_XRC)
		pkt->opcode &= ~STELLAR_OP_CLASS_MASK;
}

/*
 * The packet's IP source address is @gid (an IPv4-mapped GID for IPv4).
 * Context: the network header of @skb is set.
 */
static inline bool stellar_skb_from_gid(const struct sk_buff *skb,
					const union ib_gid *gid)
{
	if (skb->protocol == htons(ETH_P_IP))
		return ipv6_addr_v4mapped((const struct in6_addr *)gid->raw) &&
		       !memcmp(&gid->raw[12], &ip_hdr(skb)->saddr, 4);
	return !memcmp(gid->raw, &ipv6_hdr(skb)->saddr, sizeof(gid->raw));
}

/*
 * The GSI QP's MADs take the spray paths' ports in turn (and may route over
 * any link) when it has several paths: a MAD sent again takes another path.
 */
static_assert(STELLAR_SPRAY_MAX_PATHS <= U8_MAX);	/* gsi_paths */

static inline bool stellar_gsi_rotates(const struct stellar_qp_xport *xp)
{
	return xp->qp->ibqp.qp_type == IB_QPT_GSI && xp->gsi_paths > 1;
}

/* stellar_xport.c (init/exit/show: see stellar_transport.h) */
extern bool stellar_wire_ext;
extern bool stellar_wire_ext_all;
void stellar_xport_queue(struct stellar_qp_xport *xp, struct work_struct *w);
void stellar_xport_fatal(struct stellar_qp_xport *xp);
void stellar_xport_fail(struct stellar_qp_xport *xp, enum ib_event_type event);
struct sk_buff *stellar_xport_rx_dequeue(struct stellar_qp_xport *xp);

/* stellar_tx.c */
int stellar_tx_alloc(struct stellar_qp_xport *xp, struct stellar_tx_pkt *tp,
		     u32 payload_len);
void stellar_tx_set_echo(struct stellar_tx_pkt *tp);
int stellar_tx_xmit(struct stellar_qp_xport *xp, const struct stellar_av *av,
		    struct stellar_tx_pkt *tp, u16 sport);
int stellar_tx_loopback_rcv(struct sk_buff *skb);

/* stellar_req.c */
void stellar_req_work(struct work_struct *work);
void stellar_req_err_work(struct work_struct *work);
void stellar_req_reset(struct stellar_qp_xport *xp);
void stellar_req_rewind(struct stellar_qp_xport *xp, u32 psn);
bool stellar_req_has_work(struct stellar_qp_xport *xp);
bool stellar_req_resend_psn(struct stellar_qp_xport *xp, u32 psn);

/* Microseconds, for RTTs and send times. */
static inline u64 stellar_now_us(void)
{
	return div_u64(ktime_get_ns(), NSEC_PER_USEC);
}

static inline struct stellar_txp *stellar_txp(struct stellar_qp_xport *xp,
					      u32 psn)
{
	return &xp->rc->txp[psn % STELLAR_TX_WINDOW];
}

/* stellar_cnp.c */
void stellar_cnp_qp_init(struct stellar_qp_xport *xp);
void stellar_cnp_qp_stop(struct stellar_qp_xport *xp);
void stellar_cnp_req_reset(struct stellar_qp_xport *xp);
void stellar_cnp_resp_reset(struct stellar_qp_xport *xp);
void stellar_cnp_marked(struct stellar_qp_xport *xp,
			const struct sk_buff *skb);
void stellar_cnp_rcvd(struct stellar_qp_xport *xp);
bool stellar_cnp_hold(struct stellar_qp_xport *xp);
bool stellar_cnp_pacing(struct stellar_qp_xport *xp);
void stellar_cnp_sent(struct stellar_qp_xport *xp, u32 len);
void stellar_cnp_show(struct seq_file *m, struct stellar_qp_xport *xp);

/* stellar_comp.c */
void stellar_comp_rcv(struct stellar_qp_xport *xp, struct sk_buff *skb,
		      const struct stellar_pkt *pkt);
void stellar_comp_retire(struct stellar_qp_xport *xp);
void stellar_comp_flush(struct stellar_qp_xport *xp);
void stellar_comp_arm_timer(struct stellar_qp_xport *xp);
void stellar_comp_timeout(struct timer_list *t);
void stellar_comp_rnr_expired(struct timer_list *t);
void stellar_comp_handle_timers(struct stellar_qp_xport *xp);
void stellar_wqe_done(struct stellar_qp_xport *xp, u32 index, u8 status);

/* stellar_recovery.c: the loss recovery of the extended mode (xp->x_on) */
u32 stellar_rec_rto_us(struct stellar_qp_xport *xp, u32 max_us);
void stellar_rec_probe(struct stellar_qp_xport *xp);
void stellar_rec_timeout_loss(struct stellar_qp_xport *xp);
void stellar_rec_forget_sacks(struct stellar_qp_xport *xp);
void stellar_rec_acked(struct stellar_qp_xport *xp, u32 from, u32 to);
void stellar_rec_sack(struct stellar_qp_xport *xp, const struct stellar_pkt *pkt);
void stellar_rec_rd_answered(struct stellar_qp_xport *xp, u32 psn);
void stellar_rec_way_back(struct stellar_qp_xport *xp,
			  const struct sk_buff *skb,
			  const struct stellar_pkt *pkt);

/* stellar_resp.c */
void stellar_rx_work(struct work_struct *work);
void stellar_resp_work(struct work_struct *work);
void stellar_resp_reset(struct stellar_qp_xport *xp);
void stellar_resp_purge(struct stellar_qp_xport *xp);
void stellar_resp_flush(struct stellar_qp_xport *xp);
void stellar_resp_drop_ahead(struct stellar_qp_xport *xp);
void stellar_post_recv_cqe(struct stellar_qp_xport *xp, u64 wr_id, u8 status,
			   u8 opcode);

#endif /* STELLAR_XPORT_H */
