// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: reordering seen by a spraying requester (see
 * stellar_reo.h).
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include "stellar_reo.h"

/**
 * stellar_reo_init() - nothing delivered, no reordering seen
 * @r: the estimate
 */
void stellar_reo_init(struct stellar_reo *r)
{
	r->xmit_us = 0;
	r->seen_us = 0;
	r->seen_at_us = 0;
}

/**
 * stellar_reo_delivered() - the first copy of a packet was delivered
 * @r: the estimate
 * @sent_us: when that first copy was sent
 * @now_us: now, on the clock of @sent_us
 *
 * Call in the order the peer's acknowledgements describe deliveries
 * (cumulative before selective, lower PSNs first); for a packet that was
 * resent only when the first copy is known to be what came.
 */
void stellar_reo_delivered(struct stellar_reo *r, u64 sent_us, u64 now_us)
{
	u64 late;

	if (sent_us >= r->xmit_us) {
		r->xmit_us = sent_us;
		return;
	}
	late = r->xmit_us - sent_us;
	if (late > U32_MAX)
		late = U32_MAX;
	if (late >= r->seen_us || !r->seen_at_us ||
	    now_us - r->seen_at_us > STELLAR_REO_SEEN_WIN_US) {
		r->seen_us = late;
		r->seen_at_us = now_us;
	}
}

/**
 * stellar_reo_seen_us() - the reordering to allow for now
 * @r: the estimate
 * @now_us: now
 *
 * Return: the largest overtaking seen in the last STELLAR_REO_SEEN_WIN_US,
 * in microseconds, or 0.
 */
u32 stellar_reo_seen_us(const struct stellar_reo *r, u64 now_us)
{
	if (!r->seen_at_us || now_us - r->seen_at_us > STELLAR_REO_SEEN_WIN_US)
		return 0;
	return r->seen_us;
}
