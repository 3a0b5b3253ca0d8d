/* SPDX-License-Identifier: GPL-2.0 */
/*
 * virtio-stellar: the requester's window, packets a QP may have in flight.
 * Portable: also compiled into the unit tests (tests/unit/test_win.c).
 *
 * Additive increase, multiplicative decrease on loss, as TCP Reno does
 * with its congestion window (RFC 5681), counted in packets (PSNs):
 *
 *   - a QP starts with the whole window (@max) and no threshold below it;
 *   - a loss taken for congestion sets the threshold to half the window
 *     (at least STELLAR_WIN_MIN); a sequence error continues from half
 *     the window, a timeout from STELLAR_WIN_MIN;
 *   - below the threshold each acknowledged packet adds one packet (slow
 *     start); from it on, one window's worth of acknowledged packets adds
 *     one (congestion avoidance), up to @max.
 *
 * Growing back by every packet acknowledged, as the window did before,
 * refilled a link's queue within a round trip of each loss: a receiver
 * whose buffers the burst overran lost the next burst again, and every
 * loss costs go-back-N its whole window.  The caller says whether a loss
 * is congestion: a QP in the stellar extended mode resends only what was
 * lost, takes a path that lost packets out of its spray (a dead link is
 * not congestion) and has DCQCN for congestion; its window still
 * shrinks on a loss but grows back at once, as before.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_WIN_H
#define STELLAR_WIN_H

#include "stellar_portable.h"

/* The least window: enough for a 16 KB message at a 1 KB path MTU. */
#define STELLAR_WIN_MIN		16

/**
 * struct stellar_win - a requester's window
 * @cwnd: packets that may be in flight, STELLAR_WIN_MIN..@max
 * @ssthresh: slow start below it, congestion avoidance from it on
 * @acked: packets acknowledged since the last increase in avoidance
 * @max: the most @cwnd grows to
 */
struct stellar_win {
	u32 cwnd;
	u32 ssthresh;
	u32 acked;
	u32 max;
};

void stellar_win_init(struct stellar_win *w, u32 max);
void stellar_win_acked(struct stellar_win *w, u32 packets);
void stellar_win_loss(struct stellar_win *w, bool timeout, bool congestion);

#endif /* STELLAR_WIN_H */
