// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * virtio-stellar unit tests: DCQCN rate control of a QP
 * (kernel/stellar_cc.h, kernel/stellar_cc.c).
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "stellar_cc.h"
#include "test_util.h"

#define T0	1000000ULL	/* a clock that does not start at 0 */
#define ONE	STELLAR_CC_ALPHA_ONE

/* 100 Mb/s line, 1 Mb/s floor; timers 100 us; g = 1/16; 5 fast stages. */
static const struct stellar_cc_params params = {
	.max_rate_kbps = 100000,
	.min_rate_kbps = 1000,
	.ai_rate_kbps = 5000,
	.hai_rate_kbps = 50000,
	.rate_period_us = 100,
	.alpha_period_us = 100,
	.byte_stage = 1000,
	.g_shift = 4,
	.fast_stages = 5,
};

static void test_cc_init(void **state)
{
	struct stellar_cc cc;

	(void)state;
	memset(&cc, 0xee, sizeof(cc));
	stellar_cc_init(&cc, &params, T0);
	assert_int_equal(cc.rate_kbps, 100000);
	assert_int_equal(cc.target_kbps, 100000);
	assert_int_equal(cc.alpha, ONE);
	assert_int_equal(cc.cuts, 0);
	assert_int_equal(cc.increases, 0);
	assert_int_equal(cc.timer_stages, 0);
	assert_int_equal(cc.byte_stages, 0);
	assert_int_equal(cc.bytes, 0);
	assert_false(stellar_cc_limited(&cc, &params));
	assert_int_equal(stellar_cc_rate_bytes(&cc), 12500000);
}

static void test_cc_cut_and_hold(void **state)
{
	struct stellar_cc cc;

	(void)state;
	stellar_cc_init(&cc, &params, T0);
	/* alpha = 1: the first cut halves (alpha stays 1: 1024 - 64 + 64) */
	assert_true(stellar_cc_cnp(&cc, &params, 500, T0 + 10));
	assert_int_equal(cc.alpha, ONE);
	assert_int_equal(cc.target_kbps, 100000);
	assert_int_equal(cc.rate_kbps, 50000);
	assert_int_equal(cc.cuts, 1);
	assert_true(stellar_cc_limited(&cc, &params));
	/* within the hold time: nothing changes */
	assert_false(stellar_cc_cnp(&cc, &params, 500, T0 + 509));
	assert_int_equal(cc.rate_kbps, 50000);
	assert_int_equal(cc.cuts, 1);
	/* after it: cut again, the target is the rate before the cut */
	assert_true(stellar_cc_cnp(&cc, &params, 500, T0 + 510));
	assert_int_equal(cc.target_kbps, 50000);
	assert_int_equal(cc.rate_kbps, 25000);
	assert_int_equal(cc.cuts, 2);
	/* hold 0: every CNP cuts */
	assert_true(stellar_cc_cnp(&cc, &params, 0, T0 + 510));
	assert_int_equal(cc.rate_kbps, 12500);
}

static void test_cc_hold_without_rtt(void **state)
{
	struct stellar_cc cc;
	u32 hold = stellar_cc_feedback_us(0);

	(void)state;
	assert_int_equal(stellar_cc_feedback_us(2500), 2500);
	assert_int_equal(hold, STELLAR_CC_NO_RTT_US);
	stellar_cc_init(&cc, &params, T0);
	/* no RTT sample yet: a burst of CNPs cuts once */
	assert_true(stellar_cc_cnp(&cc, &params, hold, T0));
	assert_false(stellar_cc_cnp(&cc, &params, hold, T0 + 50));
	assert_false(stellar_cc_cnp(&cc, &params, hold, T0 + hold - 1));
	assert_int_equal(cc.rate_kbps, 50000);
	assert_int_equal(cc.cuts, 1);
	assert_true(stellar_cc_cnp(&cc, &params, hold, T0 + hold));
	assert_int_equal(cc.cuts, 2);

	/* nor does alpha decay, or the rate recover, in microsecond periods */
	stellar_cc_init(&cc, &params, T0);
	stellar_cc_tick(&cc, &params, hold, T0 + hold - 1);
	assert_int_equal(cc.alpha, ONE);
	assert_true(stellar_cc_cnp(&cc, &params, hold, T0 + hold - 1));
	assert_int_equal(cc.rate_kbps, 50000);
	stellar_cc_tick(&cc, &params, hold, T0 + 2 * hold - 2);
	assert_int_equal(cc.rate_kbps, 50000);
	stellar_cc_tick(&cc, &params, hold, T0 + 2 * hold - 1);
	assert_int_equal(cc.rate_kbps, 75000);
}

static void test_cc_cut_by_alpha(void **state)
{
	struct stellar_cc cc;

	(void)state;
	stellar_cc_init(&cc, &params, T0);
	cc.alpha = 0;
	/* alpha 0 -> 64 (1/16): the cut is 64/2048 of the rate */
	assert_true(stellar_cc_cnp(&cc, &params, 0, T0));
	assert_int_equal(cc.alpha, 64);
	assert_int_equal(cc.rate_kbps, 100000 - 3125);
}

static void test_cc_min_rate(void **state)
{
	struct stellar_cc cc;
	int i;

	(void)state;
	stellar_cc_init(&cc, &params, T0);
	for (i = 0; i < 20; i++)
		assert_true(stellar_cc_cnp(&cc, &params, 0, T0));
	assert_int_equal(cc.rate_kbps, 1000);
	assert_int_equal(cc.cuts, 20);
	assert_true(stellar_cc_limited(&cc, &params));
}

static void test_cc_alpha_decay(void **state)
{
	struct stellar_cc cc;

	(void)state;
	stellar_cc_init(&cc, &params, T0);
	/* 99 us: no period over */
	stellar_cc_tick(&cc, &params, 0, T0 + 99);
	assert_int_equal(cc.alpha, ONE);
	/* one period: 1024 - 64 = 960; two: 960 - 60 = 900 */
	stellar_cc_tick(&cc, &params, 0, T0 + 100);
	assert_int_equal(cc.alpha, 960);
	stellar_cc_tick(&cc, &params, 0, T0 + 250);
	assert_int_equal(cc.alpha, 900);
	/* the 50 us left over count towards the next period */
	stellar_cc_tick(&cc, &params, 0, T0 + 300);
	assert_int_equal(cc.alpha, 900 - 56);
	/* idle for more than 64 periods: forgotten */
	stellar_cc_tick(&cc, &params, 0, T0 + 300 + 65 * 100);
	assert_int_equal(cc.alpha, 0);
	assert_int_equal(cc.alpha_stamp_us, T0 + 300 + 65 * 100);
	/* time going backwards does nothing */
	stellar_cc_tick(&cc, &params, 0, T0);
	assert_int_equal(cc.alpha, 0);
	assert_int_equal(cc.alpha_stamp_us, T0 + 300 + 65 * 100);

	/*
	 * The decay alone stops at 2^g - 1 = 15 (15 >> 4 = 0): from 16, 64
	 * periods leave 15; only a QP idle beyond them forgets to 0.
	 */
	stellar_cc_init(&cc, &params, T0);
	cc.alpha = 16;
	stellar_cc_tick(&cc, &params, 0, T0 + 64 * 100 + 99);
	assert_int_equal(cc.alpha, 15);
	assert_int_equal(cc.alpha_stamp_us, T0 + 64 * 100);
	stellar_cc_init(&cc, &params, T0);
	cc.alpha = 16;
	stellar_cc_tick(&cc, &params, 0, T0 + 65 * 100);
	assert_int_equal(cc.alpha, 0);
}

static void test_cc_fast_recovery(void **state)
{
	struct stellar_cc cc;

	(void)state;
	stellar_cc_init(&cc, &params, T0);
	assert_true(stellar_cc_cnp(&cc, &params, 0, T0));
	assert_int_equal(cc.rate_kbps, 50000);
	/* each period halves the distance to the 100000 target */
	stellar_cc_tick(&cc, &params, 0, T0 + 100);
	assert_int_equal(cc.timer_stages, 1);
	assert_int_equal(cc.target_kbps, 100000);
	assert_int_equal(cc.rate_kbps, 75000);
	stellar_cc_tick(&cc, &params, 0, T0 + 400);
	assert_int_equal(cc.timer_stages, 4);
	/* 87500, 93750, 96875 */
	assert_int_equal(cc.rate_kbps, 96875);
	assert_int_equal(cc.increases, 4);
	assert_int_equal(cc.target_kbps, 100000);

	/*
	 * Rounded up, the rate reaches the target: 10 below it,
	 * 99995, 99998, 99999, 100000 within the 5 fast stages.
	 */
	stellar_cc_init(&cc, &params, T0);
	assert_true(stellar_cc_cnp(&cc, &params, 0, T0));
	cc.rate_kbps = 99990;
	stellar_cc_tick(&cc, &params, 0, T0 + 100);
	assert_int_equal(cc.rate_kbps, 99995);
	stellar_cc_tick(&cc, &params, 0, T0 + 400);
	assert_int_equal(cc.timer_stages, 4);
	assert_int_equal(cc.rate_kbps, 100000);
	assert_int_equal(cc.target_kbps, 100000);
	assert_int_equal(cc.increases, 4);
	assert_false(stellar_cc_limited(&cc, &params));
	/* at max_rate stages still count, but nothing is an increase */
	stellar_cc_tick(&cc, &params, 0, T0 + 1000);
	assert_int_equal(cc.timer_stages, 10);
	assert_int_equal(cc.rate_kbps, 100000);
	assert_int_equal(cc.increases, 4);
}

static void test_cc_additive_then_hyper(void **state)
{
	struct stellar_cc_params p = params;
	struct stellar_cc cc;

	(void)state;
	p.byte_stage = 0;	/* the timer alone: T grows, B stays 0 */
	stellar_cc_init(&cc, &p, T0);
	cc.rate_kbps = 10000;
	cc.target_kbps = 10000;
	/* stages 1-4: fast recovery, the target stays */
	stellar_cc_tick(&cc, &p, 0, T0 + 400);
	assert_int_equal(cc.target_kbps, 10000);
	assert_int_equal(cc.rate_kbps, 10000);
	assert_int_equal(cc.increases, 0);
	/* stage 5 (T = F): additive, target + 5000, rate halfway up */
	stellar_cc_tick(&cc, &p, 0, T0 + 500);
	assert_int_equal(cc.target_kbps, 15000);
	assert_int_equal(cc.rate_kbps, 12500);
	/* with B at 0, T alone never reaches hyper increase */
	stellar_cc_tick(&cc, &p, 0, T0 + 700);
	assert_int_equal(cc.target_kbps, 25000);
	assert_int_equal(cc.rate_kbps, 20625);

	/* both counts beyond F: hyper increase, hai * (min - F) */
	stellar_cc_init(&cc, &params, T0);
	cc.rate_kbps = 10000;
	cc.target_kbps = 10000;
	cc.timer_stages = 6;
	cc.byte_stages = 5;
	stellar_cc_sent(&cc, &params, 1000);	/* B = 6: min 6, +50000 */
	assert_int_equal(cc.byte_stages, 6);
	assert_int_equal(cc.target_kbps, 60000);
	assert_int_equal(cc.rate_kbps, 35000);
	stellar_cc_sent(&cc, &params, 1000);	/* B = 7: min 6 again */
	assert_int_equal(cc.target_kbps, 100000);
	assert_int_equal(cc.rate_kbps, 67500);
	/* at the line rate nothing is paced any more */
	stellar_cc_sent(&cc, &params, 20 * 1000);
	assert_int_equal(cc.rate_kbps, 100000);
	assert_false(stellar_cc_limited(&cc, &params));
}

static void test_cc_floor_stretches_periods(void **state)
{
	struct stellar_cc cc;

	(void)state;
	stellar_cc_init(&cc, &params, T0);
	assert_true(stellar_cc_cnp(&cc, &params, 0, T0));
	/* with a 1 ms smoothed RTT, 999 us is no period of either timer */
	stellar_cc_tick(&cc, &params, 1000, T0 + 999);
	assert_int_equal(cc.rate_kbps, 50000);
	assert_int_equal(cc.alpha, ONE);
	stellar_cc_tick(&cc, &params, 1000, T0 + 1000);
	assert_int_equal(cc.rate_kbps, 75000);
	assert_int_equal(cc.alpha, 960);
}

static void test_cc_byte_counter(void **state)
{
	struct stellar_cc_params p = params;
	struct stellar_cc cc;

	(void)state;
	stellar_cc_init(&cc, &params, T0);
	assert_true(stellar_cc_cnp(&cc, &params, 0, T0));
	stellar_cc_sent(&cc, &params, 999);
	assert_int_equal(cc.byte_stages, 0);
	assert_int_equal(cc.bytes, 999);
	stellar_cc_sent(&cc, &params, 2);
	assert_int_equal(cc.byte_stages, 1);
	assert_int_equal(cc.bytes, 1);
	assert_int_equal(cc.rate_kbps, 75000);
	/* a huge send gives a bounded number of stages, drops the rest */
	stellar_cc_sent(&cc, &params, UINT32_MAX);
	assert_int_equal(cc.byte_stages, 1 + 64);
	assert_int_equal(cc.bytes, 0);
	assert_int_equal(cc.rate_kbps, 100000);
	/* byte_stage 0: no byte counter */
	p.byte_stage = 0;
	stellar_cc_init(&cc, &p, T0);
	assert_true(stellar_cc_cnp(&cc, &p, 0, T0));
	stellar_cc_sent(&cc, &p, 1 << 30);
	assert_int_equal(cc.byte_stages, 0);
	assert_int_equal(cc.rate_kbps, 50000);
}

static void test_cc_bounds(void **state)
{
	struct stellar_cc_params p = params;
	struct stellar_cc cc;

	(void)state;
	/* a line rate near U32_MAX: no overflow on cut or increase */
	p.max_rate_kbps = UINT32_MAX - 1;
	p.hai_rate_kbps = UINT32_MAX;
	stellar_cc_init(&cc, &p, T0);
	assert_true(stellar_cc_cnp(&cc, &p, 0, T0));
	assert_int_equal(cc.rate_kbps, (UINT32_MAX - 1) / 2);
	cc.timer_stages = 100;
	cc.byte_stages = 100;
	stellar_cc_sent(&cc, &p, 1000);
	assert_int_equal(cc.target_kbps, UINT32_MAX - 1);
	/* (4294967294 + 2147483647 + 1) / 2 */
	assert_int_equal(cc.rate_kbps, 3221225471U);
	/* an idle QP recovers by at most STELLAR_CC_MAX_TICK_STAGES at once */
	stellar_cc_init(&cc, &params, T0);
	assert_true(stellar_cc_cnp(&cc, &params, 0, T0));
	stellar_cc_tick(&cc, &params, 0, T0 + 1000000000ULL);
	assert_int_equal(cc.timer_stages, STELLAR_CC_MAX_TICK_STAGES);
	assert_int_equal(cc.rate_kbps, 100000);
	assert_int_equal(cc.rate_stamp_us, T0 + 1000000000ULL);
	assert_int_equal(cc.alpha, 0);
	/* time going backwards does nothing */
	stellar_cc_tick(&cc, &params, 0, T0);
	assert_int_equal(cc.timer_stages, STELLAR_CC_MAX_TICK_STAGES);
	assert_int_equal(cc.rate_stamp_us, T0 + 1000000000ULL);
	/* beyond the bound, the stamp still moves by whole periods only */
	stellar_cc_init(&cc, &params, T0);
	assert_true(stellar_cc_cnp(&cc, &params, 0, T0));
	stellar_cc_tick(&cc, &params, 0, T0 + 100 * 100 + 50);
	assert_int_equal(cc.timer_stages, STELLAR_CC_MAX_TICK_STAGES);
	assert_int_equal(cc.rate_stamp_us, T0 + 100 * 100);
	assert_int_equal(cc.alpha_stamp_us, T0 + 100 * 100);
	/* the 50 us left over plus 50 more make the next period */
	stellar_cc_tick(&cc, &params, 0, T0 + 101 * 100);
	assert_int_equal(cc.timer_stages, STELLAR_CC_MAX_TICK_STAGES + 1);
	/*
	 * The end of time: (2^64 - 1 - 10^6) us is ...615 us, 15 past a
	 * whole number of 100 us periods.
	 */
	stellar_cc_init(&cc, &params, T0);
	stellar_cc_tick(&cc, &params, 0, UINT64_MAX);
	assert_int_equal(cc.timer_stages, STELLAR_CC_MAX_TICK_STAGES);
	assert_int_equal(cc.rate_stamp_us, UINT64_MAX - 15);
	assert_int_equal(cc.alpha_stamp_us, UINT64_MAX - 15);
	assert_int_equal(cc.alpha, 0);
	assert_int_equal(cc.rate_kbps, 100000);
	assert_int_equal(cc.increases, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cc_init),
		cmocka_unit_test(test_cc_cut_and_hold),
		cmocka_unit_test(test_cc_hold_without_rtt),
		cmocka_unit_test(test_cc_cut_by_alpha),
		cmocka_unit_test(test_cc_min_rate),
		cmocka_unit_test(test_cc_alpha_decay),
		cmocka_unit_test(test_cc_fast_recovery),
		cmocka_unit_test(test_cc_additive_then_hyper),
		cmocka_unit_test(test_cc_floor_stretches_periods),
		cmocka_unit_test(test_cc_byte_counter),
		cmocka_unit_test(test_cc_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
