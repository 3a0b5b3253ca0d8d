/* SPDX-License-Identifier: GPL-2.0 */
/*
 * virtio-stellar: DCQCN-style rate control of a QP's requester.
 * Portable: also compiled into the unit tests (tests/unit/test_cc.c).
 *
 * The receiver of a packet that a switch marked CE returns a CNP to the
 * sending QP (at most one per QP per cnp interval; stellar_resp.c).  The
 * sender keeps, per QP, a current rate RC, a target rate RT and alpha, its
 * estimate of how often it is marked (in 1/STELLAR_CC_ALPHA_ONE):
 *
 *   - a CNP cuts: RT = RC, RC = RC * (1 - alpha / 2), alpha = (1 - g) *
 *     alpha + g, and the increase stages start again from 0.  At most one
 *     cut per hold time: the caller passes stellar_cc_feedback_us(), so that
 *     marks on packets sent before the last cut took effect do not cut
 *     again (with spray, CNPs of one congestion event arrive over many
 *     paths);
 *   - without CNPs, alpha decays: alpha = (1 - g) * alpha every alpha
 *     period;
 *   - the rate recovers in stages, one every rate period (the timer) and
 *     one every byte_stage bytes sent (the byte counter).  While both
 *     counts are below fast_stages: fast recovery, RC = (RT + RC) / 2.
 *     Once one of them reaches fast_stages: additive increase, RT += ai
 *     first.  Once both are beyond it: hyper increase, RT += hai * (the
 *     smaller count - fast_stages) first.
 *
 * Both periods are at least the floor the caller passes (the QP's smoothed
 * RTT, stellar_cc_feedback_us()): feedback cannot come faster than that,
 * and on slow hosts (TCG) a microsecond timer would recover the rate many
 * times per round trip.
 * RC stays within [min_rate, max_rate]; at max_rate the QP is not paced.
 * Time is a monotonic clock in microseconds, passed in.  Rates are kbit/s.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_CC_H
#define STELLAR_CC_H

#include "stellar_portable.h"

/* alpha's fixed-point one */
#define STELLAR_CC_ALPHA_ONE		1024
/* Timer stages one stellar_cc_tick() applies at most (an idle QP's). */
#define STELLAR_CC_MAX_TICK_STAGES	64
/* A QP's feedback delay until its first RTT sample, us. */
#define STELLAR_CC_NO_RTT_US		100000

/**
 * struct stellar_cc_params - a device's rate control settings
 * @max_rate_kbps: the line rate: where a QP starts, the most it reaches
 * @min_rate_kbps: the least a QP is cut to
 * @ai_rate_kbps: additive increase step of the target rate
 * @hai_rate_kbps: hyper increase step of the target rate
 * @rate_period_us: the rate increase timer
 * @alpha_period_us: the alpha decay timer
 * @byte_stage: bytes sent per byte-counter stage
 * @g_shift: alpha's gain g is 1 / 2^g_shift (1..10)
 * @fast_stages: stages of fast recovery before additive increase
 */
struct stellar_cc_params {
	u32 max_rate_kbps;
	u32 min_rate_kbps;
	u32 ai_rate_kbps;
	u32 hai_rate_kbps;
	u32 rate_period_us;
	u32 alpha_period_us;
	u32 byte_stage;
	u8 g_shift;
	u8 fast_stages;
};

/**
 * struct stellar_cc - one QP's rate control state
 * @rate_kbps: the current rate RC
 * @target_kbps: the target rate RT
 * @alpha: the marking estimate, 0..STELLAR_CC_ALPHA_ONE
 * @timer_stages: rate periods since the last cut
 * @byte_stages: byte stages since the last cut
 * @bytes: bytes sent since the last byte stage
 * @rate_stamp_us: start of the current rate period
 * @alpha_stamp_us: start of the current alpha period
 * @cut_us: time of the last cut (valid if @cuts)
 * @cuts: rate cuts so far
 * @increases: rate increases so far
 */
struct stellar_cc {
	u32 rate_kbps;
	u32 target_kbps;
	u32 alpha;
	u32 timer_stages;
	u32 byte_stages;
	u32 bytes;
	u64 rate_stamp_us;
	u64 alpha_stamp_us;
	u64 cut_us;
	u64 cuts;
	u64 increases;
};

void stellar_cc_init(struct stellar_cc *cc,
		     const struct stellar_cc_params *p, u64 now_us);
bool stellar_cc_cnp(struct stellar_cc *cc, const struct stellar_cc_params *p,
		    u32 hold_us, u64 now_us);
void stellar_cc_tick(struct stellar_cc *cc, const struct stellar_cc_params *p,
		     u32 floor_us, u64 now_us);
void stellar_cc_sent(struct stellar_cc *cc, const struct stellar_cc_params *p,
		     u32 bytes);

/**
 * stellar_cc_feedback_us() - how long a QP's congestion feedback takes
 * @srtt_us: the QP's smoothed RTT, 0 before its first sample
 *
 * The least time between two cuts (marks on packets sent before a cut
 * took effect must not cut again) and the floor of both timers.  Before
 * the first RTT sample the QP cannot tell; STELLAR_CC_NO_RTT_US stands in.
 * Without it, at the start of an incast on the fabric bench (three QPs
 * at the line rate into one bottleneck, queues of hundreds of
 * milliseconds, no ACK back yet), alpha decayed to nothing in the
 * microsecond alpha periods before the first CNP, so the first cuts took
 * 3%, and then a burst of CNPs cut a QP dozens of times within 0.7 s.
 *
 * Return: the time in microseconds.
 */
static inline u32 stellar_cc_feedback_us(u32 srtt_us)
{
	return srtt_us ? srtt_us : STELLAR_CC_NO_RTT_US;
}

/* The QP is held below the line rate: its sends must be paced. */
static inline bool stellar_cc_limited(const struct stellar_cc *cc,
				      const struct stellar_cc_params *p)
{
	return cc->rate_kbps < p->max_rate_kbps;
}

/* The current rate in bytes per second. */
static inline u64 stellar_cc_rate_bytes(const struct stellar_cc *cc)
{
	return (u64)cc->rate_kbps * 125;
}

#endif /* STELLAR_CC_H */
