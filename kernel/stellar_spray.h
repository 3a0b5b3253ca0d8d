/* SPDX-License-Identifier: GPL-2.0 */
/*
 * virtio-stellar: packet spray path choice (portable).
 *
 * A path is a UDP source port: ECMP switches and bonds hash the 5-tuple,
 * so each source port of a QP may take another link.  The requester of a
 * QP keeps one struct stellar_spray (under its req_mutex) and asks it, per
 * packet, which path to use; it reports what it observes (acknowledged
 * packets with their RTT, ECN marks, losses) so that slow, lossy or
 * congested paths get less traffic and a failing path is taken out and
 * probed back later.  No allocation, locking or logging: also compiled
 * into the unit tests.  Times are in microseconds from any fixed origin.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_SPRAY_H
#define STELLAR_SPRAY_H

#include "stellar_portable.h"

#define STELLAR_SPRAY_MAX_PATHS	64

/* What the sender believes of a path. */
enum stellar_path_state {
	STELLAR_PATH_ACTIVE,	/* carries its share of traffic */
	STELLAR_PATH_FAILED,	/* lost packets repeatedly: not used */
	STELLAR_PATH_PROBING,	/* failed, now carrying one probe packet */
};

/**
 * struct stellar_spray_path - sender state of one path
 * @sport: its UDP source port
 * @state: enum stellar_path_state
 * @weight: share of traffic, 0 (none) to STELLAR_SPRAY_WEIGHT_MAX
 * @srtt_us: smoothed RTT, 0 until measured
 * @rttvar_us: RTT variation
 * @loss_run: losses in a row without an acknowledged packet
 * @retry_at_us: FAILED: when to probe it again
 * @tx_packets: packets sent on it
 * @tx_bytes: payload bytes sent on it
 * @retransmits: of @tx_packets, retransmissions
 * @losses: packets on it declared lost
 * @ecn_marks: acknowledgements that reported congestion
 * @cong_level: congestion seen lately (ECN marks, losses): each level
 *		halves @weight; it rises at most once per RTT and decays
 * @fail_count: failures in a row without a successful probe (backoff)
 * @failed_at_us: when it last failed
 * @cong_at_us: when @cong_level last changed
 * @min_rtt_us: smallest RTT sample of the last STELLAR_SPRAY_MIN_RTT_WIN_US
 *		(0: none), for stellar_spray_queue_delay_us()
 * @min_rtt_at_us: when @min_rtt_us was taken
 * @echo_sent_us: when the newest packet that asked for an echo (an ACK on
 *		its own port, stellar_spray_want_echo()) went out on it
 * @back_seen_us: when a response last arrived through its port (its way
 *		back worked)
 * @echo_misses: echoes in a row that did not come back while those of
 *		other paths did
 * @back_dead: taken out because its way back is dead: only an echo
 *		through its port brings it back
 * @back_failures: times it was taken out for that
 */
struct stellar_spray_path {
	u16 sport;
	u8 state;
	u8 weight;
	u8 cong_level;
	u8 fail_count;
	u32 srtt_us;
	u32 rttvar_us;
	u32 loss_run;
	u64 retry_at_us;
	u64 tx_packets;
	u64 tx_bytes;
	u64 retransmits;
	u64 losses;
	u64 ecn_marks;
	u64 failed_at_us;
	u64 cong_at_us;
	u32 min_rtt_us;
	u64 min_rtt_at_us;
	u64 echo_sent_us;
	u64 back_seen_us;
	u8 echo_misses;
	bool back_dead;
	u64 back_failures;
};

#define STELLAR_SPRAY_WEIGHT_MAX	16
/* Highest stellar_spray_path.cong_level. */
#define STELLAR_SPRAY_CONG_MAX		4
/* Losses in a row, without an acknowledgement, that take a path out. */
#define STELLAR_SPRAY_FAIL_LOSSES	3
/* A failed path is probed after this (doubled per failure in a row)... */
#define STELLAR_SPRAY_PROBE_MIN_US	2000
/* ...up to this. */
#define STELLAR_SPRAY_PROBE_MAX_US	1000000
/* Port spacing: Linux bonding (layer3+4) ignores the lowest port bit. */
#define STELLAR_SPRAY_PORT_STRIDE	2
/* The dynamic port range all paths use: 49152..65535. */
#define STELLAR_SPRAY_PORT_MIN		0xc000
/* Ports of that range: 16384, a power of two. */
#define STELLAR_SPRAY_PORT_MASK		0x3fff
/* A path's minimum RTT is taken over this long, then restarts. */
#define STELLAR_SPRAY_MIN_RTT_WIN_US	(10 * 1000 * 1000)
/* RTT samples above this are clamped (keeps the arithmetic in u32). */
#define STELLAR_SPRAY_RTT_MAX_US	(1U << 26)
/* At most one packet in this many of a QP asks for an echo... */
#define STELLAR_SPRAY_ECHO_EVERY	8
/* ...and one per path per two of its RTTs, but not more often than this. */
#define STELLAR_SPRAY_ECHO_MIN_US	2000
/* Echoes missed in a row that take a path out for its way back. */
#define STELLAR_SPRAY_ECHO_MISSES	3

/**
 * struct stellar_spray - path choice of one QP's requester
 * @nr_paths: paths in use, 1 to STELLAR_SPRAY_MAX_PATHS (1: single path)
 * @shift: per-QP rotation offset, so QPs do not move in lock step
 * @credit: scheduling state of the weighted rotation
 * @echo_credit: packets since the last one that asked for an echo
 * @echo_seen: the peer answered an echo: it knows them, misses count
 * @echo_rcvd_us: when an echo last came back, through any path
 * @path: the paths
 */
struct stellar_spray {
	u32 nr_paths;
	u32 shift;
	u32 echo_credit;
	bool echo_seen;
	u64 echo_rcvd_us;
	s32 credit[STELLAR_SPRAY_MAX_PATHS];
	struct stellar_spray_path path[STELLAR_SPRAY_MAX_PATHS];
};

/**
 * stellar_spray_init() - set up the paths of a QP
 * @s: the state to initialize
 * @nr_paths: number of paths, clamped to [1, STELLAR_SPRAY_MAX_PATHS]
 * @base_sport: source port of path 0; path i uses a port derived from it
 *		(always in the dynamic range 49152..65535)
 * @shift: per-QP rotation offset (e.g. derived from the QPN)
 */
void stellar_spray_init(struct stellar_spray *s, u32 nr_paths, u16 base_sport,
			u32 shift);

/**
 * stellar_spray_pick() - path for a new packet
 * @s: the QP's spray state
 * @psn: the packet's PSN
 * @now_us: current time
 *
 * Rotation keyed by @psn and the QP's shift, weighted by what was seen
 * of each path.  A FAILED path whose retry time has come is returned once
 * as a probe (it becomes PROBING).
 *
 * Return: a path index below @s->nr_paths, never a FAILED path unless all
 * paths failed (then the least recently failed one).
 */
u32 stellar_spray_pick(struct stellar_spray *s, u32 psn, u64 now_us);

/**
 * stellar_spray_pick_retx() - path for a retransmission
 * @s: the QP's spray state
 * @psn: the packet's PSN
 * @lost_path: path the lost copy took
 * @now_us: current time
 *
 * Like stellar_spray_pick(), a FAILED path (other than @lost_path) whose
 * retry time has come is returned once as a probe.
 *
 * Return: a usable path other than @lost_path when there is one.
 */
u32 stellar_spray_pick_retx(struct stellar_spray *s, u32 psn, u32 lost_path,
			    u64 now_us);

/*
 * Port of path @path of a QP whose path 0 is derived from @base_sport:
 * the same for every QP state, so that a QP without spray state (GSI)
 * rotates over the ports a spraying peer would use.
 */
static inline u16 stellar_spray_path_port(u16 base_sport, u32 path)
{
	u32 port = base_sport + path * STELLAR_SPRAY_PORT_STRIDE;

	return STELLAR_SPRAY_PORT_MIN | (port & STELLAR_SPRAY_PORT_MASK);
}

/* Port of path @path. */
static inline u16 stellar_spray_sport(const struct stellar_spray *s, u32 path)
{
	return s->path[path < s->nr_paths ? path : 0].sport;
}

/* Number of paths in state @state. */
u32 stellar_spray_count_state(const struct stellar_spray *s, u8 state);

/* A packet of @bytes payload went out on @path (@retx: a retransmission). */
void stellar_spray_sent(struct stellar_spray *s, u32 path, u32 bytes,
			bool retx);

/**
 * stellar_spray_acked() - a packet sent on a path was acknowledged
 * @s: the QP's spray state
 * @path: the path it took
 * @rtt_us: measured RTT, 0 if unknown (e.g. it was retransmitted)
 * @ecn: the acknowledgement reported congestion (ECN-CE seen)
 * @now_us: current time
 */
void stellar_spray_acked(struct stellar_spray *s, u32 path, u32 rtt_us,
			 bool ecn, u64 now_us);

/**
 * stellar_spray_lost() - a packet sent on a path was declared lost
 * @s: the QP's spray state
 * @path: the path it took
 * @now_us: current time
 *
 * Repeated losses take the path out (FAILED) for a while, unless only a
 * quarter of the paths (at least one) are left in use; it is probed again
 * later.
 */
void stellar_spray_lost(struct stellar_spray *s, u32 path, u64 now_us);

/**
 * stellar_spray_want_echo() - should a new packet ask for an echo
 * @s: the QP's spray state
 * @path: the path it takes
 * @now_us: current time
 *
 * Over ECMP the way back of a UDP port is another link than its way
 * there, and ACKs of other ports acknowledge a port's packets when its way
 * back is dead: the sender would keep using it.  So a packet now and then
 * asks the responder to acknowledge it on its own port (an echo), on every
 * path in turn; a path whose echoes stop coming back, while those of other
 * paths come, is taken out like a lossy one, and only an echo through its
 * port (a probe asks for one) brings it back.  Misses count only once the
 * peer has answered an echo (it knows them).  Call once per new packet.
 *
 * Return: true if this packet asks for an echo (a probe always does).
 */
bool stellar_spray_want_echo(struct stellar_spray *s, u32 path, u64 now_us);

/**
 * stellar_spray_response() - a response arrived through a UDP port
 * @s: the QP's spray state
 * @sport: its UDP source port (the responder echoes the ports of requests)
 * @echo: the responder marked it as an echo
 * @now_us: current time
 *
 * The way back of the path with port @sport works; an echo also says the
 * peer answers echoes.  A path taken out for its way back comes back.
 */
void stellar_spray_response(struct stellar_spray *s, u16 sport, bool echo,
			    u64 now_us);

/**
 * stellar_spray_rto_us() - retransmission timeout from measured RTTs
 * @s: the QP's spray state
 * @min_us: lower bound
 * @max_us: upper bound (the IB local ACK timeout)
 *
 * Return: srtt + 4 * rttvar of the slowest active path, clamped to
 * [@min_us, @max_us]; @max_us while nothing is measured.
 */
u32 stellar_spray_rto_us(const struct stellar_spray *s, u32 min_us,
			 u32 max_us);

/**
 * stellar_spray_path_rto_us() - retransmission timeout of one path
 * @s: the QP's spray state
 * @path: the path the oldest unacknowledged packet took
 * @min_us: lower bound
 * @max_us: upper bound (half the IB local ACK timeout)
 *
 * Return: srtt + 4 * rttvar of @path clamped to [@min_us, @max_us], or
 * stellar_spray_rto_us() if @path has no RTT measured.
 */
u32 stellar_spray_path_rto_us(const struct stellar_spray *s, u32 path,
			      u32 min_us, u32 max_us);

/**
 * stellar_spray_queue_delay_us() - queueing delay of an RTT sample
 * @s: the QP's spray state
 * @path: the path the sample is of
 * @rtt_us: the sample (0: none)
 * @now_us: current time
 *
 * Folds @rtt_us into the path's windowed minimum RTT (the propagation
 * and processing time when nothing queues).
 *
 * Return: how much @rtt_us exceeds that minimum: time spent queued
 * somewhere on the path (0 for the first sample, a new minimum, or an
 * invalid @path).
 */
u32 stellar_spray_queue_delay_us(struct stellar_spray *s, u32 path,
				 u32 rtt_us, u64 now_us);

#endif /* STELLAR_SPRAY_H */
