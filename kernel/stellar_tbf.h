/* SPDX-License-Identifier: GPL-2.0 */
/*
 * virtio-stellar: a token bucket, for the per-device transmit rate limits
 * (stellar_limits.c).  Portable: also compiled into the unit tests.
 *
 * Tokens (bytes or packets) flow in at @rate per second up to @burst.  A
 * sender may go ahead while the bucket holds any token at all, and is
 * then charged its whole packet: the bucket may go into debt by up to one
 * packet per sender, which the refill pays back before anyone is let
 * through again.  So the long-term rate is exact whatever the packet size,
 * and a packet is never split or refused for being larger than the tokens.
 * The caller serialises every call on one bucket.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_TBF_H
#define STELLAR_TBF_H

#include "stellar_portable.h"

#define STELLAR_TBF_NSEC_PER_SEC	1000000000ULL
/* Largest rate a bucket takes: 2^40 tokens a second (1 TiB/s). */
#define STELLAR_TBF_RATE_MAX		(1ULL << 40)
/* The bucket holds this fraction of a second's tokens: 1/32 (31 ms). */
#define STELLAR_TBF_BURST_SHIFT		5
/*
 * Elapsed time a refill looks at, at most: a bucket idle for longer is
 * full anyway unless it owes more than 10 s of tokens.
 */
#define STELLAR_TBF_MAX_ELAPSED_NS	(10 * STELLAR_TBF_NSEC_PER_SEC)

/**
 * struct stellar_tbf - one token bucket
 * @rate: tokens per second, 0: unlimited (the bucket is not used)
 * @burst: most tokens the bucket holds
 * @tokens: tokens held; negative: owed by packets sent on credit
 * @last_ns: the time up to which tokens were added
 */
struct stellar_tbf {
	u64 rate;
	u64 burst;
	s64 tokens;
	u64 last_ns;
};

void stellar_tbf_init(struct stellar_tbf *tb, u64 rate, u64 min_burst,
		      u64 now_ns);
void stellar_tbf_refill(struct stellar_tbf *tb, u64 now_ns);
void stellar_tbf_charge(struct stellar_tbf *tb, u64 n);
u64 stellar_tbf_wait_ns(const struct stellar_tbf *tb);

#endif /* STELLAR_TBF_H */
