// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: the requester's window (see stellar_win.h).
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include "stellar_win.h"

/**
 * stellar_win_init() - a window for a QP that starts sending
 * @w: the window
 * @max: the most packets in flight, at least STELLAR_WIN_MIN
 */
void stellar_win_init(struct stellar_win *w, u32 max)
{
	if (max < STELLAR_WIN_MIN)
		max = STELLAR_WIN_MIN;
	w->max = max;
	w->cwnd = max;
	w->ssthresh = max;
	w->acked = 0;
}

/**
 * stellar_win_acked() - packets were acknowledged for the first time
 * @w: the window
 * @packets: how many
 */
void stellar_win_acked(struct stellar_win *w, u32 packets)
{
	u32 limit = w->ssthresh < w->max ? w->ssthresh : w->max;

	if (w->cwnd < limit) {
		u32 room = limit - w->cwnd;

		if (packets <= room) {
			w->cwnd += packets;
			return;
		}
		w->cwnd = limit;
		packets -= room;
	}
	if (w->cwnd >= w->max) {
		w->cwnd = w->max;
		w->acked = 0;
		return;
	}
	/* At most packets / STELLAR_WIN_MIN turns. */
	w->acked += packets;
	while (w->acked >= w->cwnd && w->cwnd < w->max) {
		w->acked -= w->cwnd;
		w->cwnd++;
	}
	if (w->cwnd >= w->max)
		w->acked = 0;
}

/**
 * stellar_win_loss() - the peer reported a gap, or the ACK timer expired
 * @w: the window
 * @timeout: the ACK timer expired (else: a sequence error)
 * @congestion: take the loss for congestion: grow back slowly from half
 *	the window (else slow start back to the threshold, as before it)
 */
void stellar_win_loss(struct stellar_win *w, bool timeout, bool congestion)
{
	u32 half = w->cwnd / 2;

	if (half < STELLAR_WIN_MIN)
		half = STELLAR_WIN_MIN;
	if (congestion)
		w->ssthresh = half;
	w->cwnd = timeout ? STELLAR_WIN_MIN : half;
	w->acked = 0;
}
