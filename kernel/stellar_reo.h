/* SPDX-License-Identifier: GPL-2.0 */
/*
 * virtio-stellar: how far a spraying QP's packets overtake each other.
 * Portable: also compiled into the unit tests (tests/unit/test_reo.c).
 *
 * A packet delivered after one that was sent D microseconds later has
 * been overtaken by D.  RACK loss detection (RFC 8985) takes a packet
 * for lost once a packet sent more than its reordering window later was
 * delivered, so a window below the reordering the paths really show
 * resends packets that are still on their way.
 *
 * The window of a spraying QP used to add the spread of its paths'
 * smoothed RTTs.  Over one link all paths share one queue and deliver
 * in sending order, yet their smoothed RTTs, samples of one swinging
 * queue taken at different moments, lay 15-75 ms apart: every loss
 * waited that much longer.  This estimate measures the reordering
 * itself: the largest D seen in the last STELLAR_REO_SEEN_WIN_US,
 * from first copies only, by their own send times (a resend's says
 * nothing about the first copy's way; a resend that was in vain says,
 * with the first copy's send time, how late that copy was).  Where the
 * paths' queues really differ it grows to what they differ by; where
 * they do not, it stays 0.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_REO_H
#define STELLAR_REO_H

#include "stellar_portable.h"

/* A reordering seen counts this long, then the next one replaces it. */
#define STELLAR_REO_SEEN_WIN_US		(1000 * 1000)

/**
 * struct stellar_reo - reordering seen by a requester
 * @xmit_us: send time of the latest-sent first copy known delivered
 * @seen_us: the largest overtaking seen since @seen_at_us
 * @seen_at_us: when @seen_us was taken (0: never)
 */
struct stellar_reo {
	u64 xmit_us;
	u32 seen_us;
	u64 seen_at_us;
};

void stellar_reo_init(struct stellar_reo *r);
void stellar_reo_delivered(struct stellar_reo *r, u64 sent_us, u64 now_us);
u32 stellar_reo_seen_us(const struct stellar_reo *r, u64 now_us);

#endif /* STELLAR_REO_H */
