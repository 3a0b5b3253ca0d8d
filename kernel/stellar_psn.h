/* SPDX-License-Identifier: GPL-2.0 */
/*
 * virtio-stellar: 24-bit packet sequence number arithmetic and the
 * out-of-order receive window.  Portable: also compiled into the unit
 * tests.
 *
 * PSNs count modulo 2^24.  Two PSNs are compared by their signed distance,
 * so "a before b" holds when b is at most 2^23 - 1 ahead of a.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_PSN_H
#define STELLAR_PSN_H

#include "stellar_portable.h"

#define STELLAR_PSN_BITS	24
#define STELLAR_PSN_MASK	((1U << STELLAR_PSN_BITS) - 1)
#define STELLAR_PSN_HALF	(1U << (STELLAR_PSN_BITS - 1))

/**
 * stellar_psn_add() - advance a PSN
 * @psn: a PSN
 * @delta: packets to advance by, negative to go back
 *
 * Return: @psn + @delta modulo 2^24.
 */
static inline u32 stellar_psn_add(u32 psn, s32 delta)
{
	return (psn + (u32)delta) & STELLAR_PSN_MASK;
}

/**
 * stellar_psn_diff() - signed distance between two PSNs
 * @a: a PSN
 * @b: a PSN
 *
 * Return: the d in [-2^23, 2^23 - 1] with @b + d == @a modulo 2^24.
 */
static inline s32 stellar_psn_diff(u32 a, u32 b)
{
	u32 d = (a - b) & STELLAR_PSN_MASK;

	return d & STELLAR_PSN_HALF ? (s32)d - (s32)(1U << STELLAR_PSN_BITS) :
				      (s32)d;
}

/* @a comes before @b in sequence. */
static inline bool stellar_psn_before(u32 a, u32 b)
{
	return stellar_psn_diff(a, b) < 0;
}

/* @a comes after @b in sequence. */
static inline bool stellar_psn_after(u32 a, u32 b)
{
	return stellar_psn_diff(a, b) > 0;
}

/**
 * stellar_psn_between() - whether a PSN lies in an inclusive range
 * @psn: the PSN to test
 * @first: first PSN of the range
 * @last: last PSN of the range, reached from @first going forward
 *
 * Return: true if @psn is one of @first, @first + 1, ..., @last.
 */
static inline bool stellar_psn_between(u32 psn, u32 first, u32 last)
{
	return ((psn - first) & STELLAR_PSN_MASK) <=
	       ((last - first) & STELLAR_PSN_MASK);
}

/*
 * The receive window remembers which of the PSNs after the expected one
 * already arrived.  Build with -DSTELLAR_PSN_WINDOW_BITS=n to change its
 * size: a power of two from 64 to 2^22.
 */
#ifndef STELLAR_PSN_WINDOW_BITS
#define STELLAR_PSN_WINDOW_BITS	1024
#endif

static_assert(STELLAR_PSN_WINDOW_BITS >= 64 &&
	      STELLAR_PSN_WINDOW_BITS <= (1 << 22) &&
	      (STELLAR_PSN_WINDOW_BITS & (STELLAR_PSN_WINDOW_BITS - 1)) == 0,
	      "STELLAR_PSN_WINDOW_BITS must be a power of two in [64, 2^22]");

/**
 * struct stellar_psn_window - PSNs received at and above the expected one
 * @epsn: expected PSN: every PSN before it was received, it was not
 * @max_psn: highest PSN received out of order, valid while @nr_ooo != 0
 * @nr_ooo: PSNs after @epsn received (and so marked in @seen)
 * @seen: bit (psn % STELLAR_PSN_WINDOW_BITS) is set for each received PSN
 *	  in [@epsn + 1, @epsn + STELLAR_PSN_WINDOW_BITS - 1]; all other
 *	  bits are clear
 *
 * Not locked: the owner serializes access.
 */
struct stellar_psn_window {
	u32 epsn;
	u32 max_psn;
	u32 nr_ooo;
	u64 seen[STELLAR_PSN_WINDOW_BITS / 64];
};

enum stellar_psn_class {
	STELLAR_PSN_NEW_IN_ORDER,	/* the expected PSN */
	STELLAR_PSN_NEW_OUT_OF_ORDER,	/* ahead, in the window, first time */
	STELLAR_PSN_DUPLICATE,		/* received before, or behind epsn */
	STELLAR_PSN_OUT_OF_WINDOW,	/* too far ahead to remember */
};

/**
 * struct stellar_psn_range - an inclusive run of PSNs
 * @first: first PSN of the run
 * @last: last PSN of the run
 */
struct stellar_psn_range {
	u32 first;
	u32 last;
};

void stellar_psn_window_init(struct stellar_psn_window *win, u32 epsn);
enum stellar_psn_class
stellar_psn_classify(const struct stellar_psn_window *win, u32 psn);
u32 stellar_psn_mark(struct stellar_psn_window *win, u32 psn);
bool stellar_psn_received(const struct stellar_psn_window *win, u32 psn);
bool stellar_psn_first_missing(const struct stellar_psn_window *win,
			       u32 *psn);
bool stellar_psn_next_missing(const struct stellar_psn_window *win, u32 from,
			      struct stellar_psn_range *range);
u32 stellar_psn_missing_ranges(const struct stellar_psn_window *win,
			       struct stellar_psn_range *ranges,
			       u32 max_ranges);

#endif /* STELLAR_PSN_H */
