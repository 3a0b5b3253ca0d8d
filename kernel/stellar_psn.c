// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: out-of-order PSN receive window.
 *
 * A ring of STELLAR_PSN_WINDOW_BITS bits, indexed by PSN modulo its size,
 * remembers which PSNs after the expected one (epsn) have arrived.  Since
 * the window never spans more than its size, no two PSNs in it share a
 * bit.  Portable: no allocation, logging or locking.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include "stellar_psn.h"

static u32 sw_psn_bit(u32 psn)
{
	return psn & (STELLAR_PSN_WINDOW_BITS - 1);
}

static bool sw_psn_test(const struct stellar_psn_window *win, u32 psn)
{
	u32 bit = sw_psn_bit(psn);

	return (win->seen[bit / 64] >> (bit % 64)) & 1;
}

static void sw_psn_set(struct stellar_psn_window *win, u32 psn)
{
	u32 bit = sw_psn_bit(psn);

	win->seen[bit / 64] |= 1ULL << (bit % 64);
}

static void sw_psn_clear(struct stellar_psn_window *win, u32 psn)
{
	u32 bit = sw_psn_bit(psn);

	win->seen[bit / 64] &= ~(1ULL << (bit % 64));
}

/**
 * stellar_psn_window_init() - start an empty window
 * @win: the window
 * @epsn: the first PSN expected (masked to 24 bits)
 */
void stellar_psn_window_init(struct stellar_psn_window *win, u32 epsn)
{
	memset(win, 0, sizeof(*win));
	win->epsn = epsn & STELLAR_PSN_MASK;
	win->max_psn = win->epsn;
}

/**
 * stellar_psn_classify() - what an arriving PSN means to the window
 * @win: the window
 * @psn: PSN of the arriving packet (masked to 24 bits)
 *
 * PSNs up to 2^23 behind the expected PSN are duplicates; PSNs ahead by
 * STELLAR_PSN_WINDOW_BITS or more (up to 2^23 - 1) are out of the window.
 *
 * Return: the PSN's class; @win is not changed.
 */
enum stellar_psn_class
stellar_psn_classify(const struct stellar_psn_window *win, u32 psn)
{
	s32 ahead = stellar_psn_diff(psn & STELLAR_PSN_MASK, win->epsn);

	if (ahead == 0)
		return STELLAR_PSN_NEW_IN_ORDER;
	if (ahead < 0)
		return STELLAR_PSN_DUPLICATE;
	if (ahead >= STELLAR_PSN_WINDOW_BITS)
		return STELLAR_PSN_OUT_OF_WINDOW;
	return sw_psn_test(win, psn) ? STELLAR_PSN_DUPLICATE :
				       STELLAR_PSN_NEW_OUT_OF_ORDER;
}

/**
 * stellar_psn_received() - whether a PSN ahead of the expected one arrived
 * @win: the window
 * @psn: a PSN
 *
 * Return: true if @psn is after the expected PSN, inside the window, and
 * marked as received.
 */
bool stellar_psn_received(const struct stellar_psn_window *win, u32 psn)
{
	s32 ahead = stellar_psn_diff(psn & STELLAR_PSN_MASK, win->epsn);

	return ahead > 0 && ahead < STELLAR_PSN_WINDOW_BITS &&
	       sw_psn_test(win, psn);
}

/* Move epsn past itself and every PSN after it that already arrived. */
static u32 sw_psn_advance(struct stellar_psn_window *win)
{
	u32 advanced = 1;

	win->epsn = stellar_psn_add(win->epsn, 1);
	while (win->nr_ooo && sw_psn_test(win, win->epsn)) {
		sw_psn_clear(win, win->epsn);
		win->nr_ooo--;
		win->epsn = stellar_psn_add(win->epsn, 1);
		advanced++;
	}
	return advanced;
}

/**
 * stellar_psn_mark() - record the arrival of a PSN
 * @win: the window
 * @psn: PSN of the arriving packet (masked to 24 bits)
 *
 * An in-order PSN advances the expected PSN over it and over the run of
 * PSNs that had arrived out of order right after it.  A new out-of-order
 * PSN is remembered.  Duplicates and PSNs out of the window change nothing.
 *
 * Return: how many PSNs became in order: 0 unless @psn was the expected one.
 */
u32 stellar_psn_mark(struct stellar_psn_window *win, u32 psn)
{
	psn &= STELLAR_PSN_MASK;
	switch (stellar_psn_classify(win, psn)) {
	case STELLAR_PSN_NEW_IN_ORDER:
		return sw_psn_advance(win);
	case STELLAR_PSN_NEW_OUT_OF_ORDER:
		sw_psn_set(win, psn);
		if (!win->nr_ooo++ || stellar_psn_after(psn, win->max_psn))
			win->max_psn = psn;
		return 0;
	default:
		return 0;
	}
}

/**
 * stellar_psn_first_missing() - the oldest PSN not yet received
 * @win: the window
 * @psn: set to the expected PSN if the function returns true
 *
 * Return: true if a later PSN arrived already, so that @psn is a gap
 * rather than simply the next PSN due.
 */
bool stellar_psn_first_missing(const struct stellar_psn_window *win, u32 *psn)
{
	if (!win->nr_ooo)
		return false;
	*psn = win->epsn;
	return true;
}

/**
 * stellar_psn_next_missing() - find a run of missing PSNs
 * @win: the window
 * @from: where to start looking; PSNs before the expected one count as it
 * @range: set to the first run of missing PSNs at or after @from that
 *	   ends before the highest PSN received
 *
 * Return: true if @range was set, false if no PSN at or after @from is
 * missing below the highest PSN received.
 */
bool stellar_psn_next_missing(const struct stellar_psn_window *win, u32 from,
			      struct stellar_psn_range *range)
{
	u32 psn = from & STELLAR_PSN_MASK;

	if (!win->nr_ooo)
		return false;
	if (stellar_psn_before(psn, win->epsn))
		psn = win->epsn;
	while (stellar_psn_before(psn, win->max_psn) && sw_psn_test(win, psn))
		psn = stellar_psn_add(psn, 1);
	if (!stellar_psn_before(psn, win->max_psn))
		return false;

	range->first = psn;
	/* Stops at max_psn at the latest: it arrived. */
	while (!sw_psn_test(win, stellar_psn_add(psn, 1)))
		psn = stellar_psn_add(psn, 1);
	range->last = psn;
	return true;
}

/**
 * stellar_psn_missing_ranges() - list the gaps below the highest PSN received
 * @win: the window
 * @ranges: filled with runs of missing PSNs, oldest first
 * @max_ranges: capacity of @ranges
 *
 * Return: the number of runs stored, at most @max_ranges; 0 if nothing
 * arrived out of order.
 */
u32 stellar_psn_missing_ranges(const struct stellar_psn_window *win,
			       struct stellar_psn_range *ranges,
			       u32 max_ranges)
{
	u32 from = win->epsn;
	u32 nr = 0;

	while (nr < max_ranges &&
	       stellar_psn_next_missing(win, from, &ranges[nr])) {
		from = stellar_psn_add(ranges[nr].last, 1);
		nr++;
	}
	return nr;
}
