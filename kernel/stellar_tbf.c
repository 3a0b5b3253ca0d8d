// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: a token bucket (see stellar_tbf.h).  Portable: also
 * compiled into the unit tests (tests/unit/test_tbf.c).
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include "stellar_tbf.h"

/**
 * stellar_tbf_init() - set a bucket's rate; it starts full
 * @tb: the bucket
 * @rate: tokens per second (0: unlimited), at most STELLAR_TBF_RATE_MAX
 * @min_burst: the bucket holds at least this many tokens (a few packets),
 *	however low @rate is
 * @now_ns: the current time, in nanoseconds of a monotonic clock
 */
void stellar_tbf_init(struct stellar_tbf *tb, u64 rate, u64 min_burst,
		      u64 now_ns)
{
	u64 burst;

	if (rate > STELLAR_TBF_RATE_MAX)
		rate = STELLAR_TBF_RATE_MAX;
	burst = rate >> STELLAR_TBF_BURST_SHIFT;
	if (burst < min_burst)
		burst = min_burst;
	tb->rate = rate;
	tb->burst = burst;
	tb->tokens = (s64)burst;
	tb->last_ns = now_ns;
}

/**
 * stellar_tbf_refill() - add the tokens that flowed in since the last time
 * @tb: the bucket
 * @now_ns: the current time; an earlier time than the last one adds none
 *
 * Only whole tokens are added, and the time is moved on by exactly what
 * they took, so that frequent refills lose no fraction of a token.
 */
void stellar_tbf_refill(struct stellar_tbf *tb, u64 now_ns)
{
	u64 elapsed, add;

	if (!tb->rate || now_ns <= tb->last_ns)
		return;
	elapsed = now_ns - tb->last_ns;
	if (elapsed > STELLAR_TBF_MAX_ELAPSED_NS) {
		elapsed = STELLAR_TBF_MAX_ELAPSED_NS;
		tb->last_ns = now_ns - elapsed;
	}
	add = stellar_mul_div(elapsed, tb->rate, STELLAR_TBF_NSEC_PER_SEC);
	if (!add)
		return;
	if (tb->tokens + (s64)add >= (s64)tb->burst) {
		tb->tokens = (s64)tb->burst;
		tb->last_ns = now_ns;
		return;
	}
	tb->tokens += (s64)add;
	tb->last_ns += stellar_mul_div(add, STELLAR_TBF_NSEC_PER_SEC, tb->rate);
}

/**
 * stellar_tbf_charge() - take tokens for what was sent
 * @tb: the bucket
 * @n: tokens (bytes or packets); the bucket may go into debt
 */
void stellar_tbf_charge(struct stellar_tbf *tb, u64 n)
{
	if (tb->rate)
		tb->tokens -= (s64)n;
}

/**
 * stellar_tbf_wait_ns() - how long until a sender may go ahead
 * @tb: the bucket, refilled up to now
 *
 * Return: 0 if the bucket holds a token (or is unlimited), else the
 * nanoseconds until it holds one.
 */
u64 stellar_tbf_wait_ns(const struct stellar_tbf *tb)
{
	if (!tb->rate || tb->tokens > 0)
		return 0;
	/* (1 - tokens) tokens must flow in, rounded up to a nanosecond. */
	return stellar_mul_div((u64)(1 - tb->tokens), STELLAR_TBF_NSEC_PER_SEC,
			       tb->rate) + 1;
}
