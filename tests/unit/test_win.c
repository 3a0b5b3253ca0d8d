// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * virtio-stellar unit tests: the requester's window
 * (kernel/stellar_win.h, kernel/stellar_win.c).
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "stellar_win.h"
#include "test_util.h"

#define MAX	512

static void test_win_init(void **state)
{
	struct stellar_win w;

	(void)state;
	memset(&w, 0xee, sizeof(w));
	stellar_win_init(&w, MAX);
	assert_int_equal(w.cwnd, MAX);
	assert_int_equal(w.ssthresh, MAX);
	assert_int_equal(w.acked, 0);
	/* Acknowledgements at the top change nothing. */
	stellar_win_acked(&w, 1000);
	assert_int_equal(w.cwnd, MAX);
	assert_int_equal(w.acked, 0);
	/* A maximum below the least window is raised to it. */
	stellar_win_init(&w, 3);
	assert_int_equal(w.cwnd, STELLAR_WIN_MIN);
	assert_int_equal(w.max, STELLAR_WIN_MIN);
}

/* A sequence error halves the window; it grows one per window after. */
static void test_win_seq_error(void **state)
{
	struct stellar_win w;
	int i;

	(void)state;
	stellar_win_init(&w, MAX);
	stellar_win_loss(&w, false, true);
	assert_int_equal(w.cwnd, MAX / 2);
	assert_int_equal(w.ssthresh, MAX / 2);
	stellar_win_acked(&w, MAX / 2 - 1);
	assert_int_equal(w.cwnd, MAX / 2);
	assert_int_equal(w.acked, MAX / 2 - 1);
	stellar_win_acked(&w, 1);
	assert_int_equal(w.cwnd, MAX / 2 + 1);
	assert_int_equal(w.acked, 0);
	/* One window's worth at a time, in ACKs of any size. */
	for (i = 0; i < MAX / 2 + 1; i++)
		stellar_win_acked(&w, 1);
	assert_int_equal(w.cwnd, MAX / 2 + 2);
	/* 258 + 259 + 260 of 779 packets: three more, 2 left over. */
	stellar_win_acked(&w, 3 * (MAX / 2 + 2) + 5);
	assert_int_equal(w.cwnd, MAX / 2 + 5);
	assert_int_equal(w.acked, 2);
}

/* A timeout starts from the least window, slow start up to half. */
static void test_win_timeout(void **state)
{
	struct stellar_win w;

	(void)state;
	stellar_win_init(&w, MAX);
	stellar_win_loss(&w, true, true);
	assert_int_equal(w.cwnd, STELLAR_WIN_MIN);
	assert_int_equal(w.ssthresh, MAX / 2);
	stellar_win_acked(&w, 100);
	assert_int_equal(w.cwnd, STELLAR_WIN_MIN + 100);
	assert_int_equal(w.acked, 0);
	/* Past the threshold, the rest counts toward avoidance. */
	stellar_win_acked(&w, MAX / 2 - STELLAR_WIN_MIN - 100 + 7);
	assert_int_equal(w.cwnd, MAX / 2);
	assert_int_equal(w.acked, 7);
}

/* A loss not taken for congestion keeps the threshold: fast regrowth. */
static void test_win_not_congestion(void **state)
{
	struct stellar_win w;

	(void)state;
	stellar_win_init(&w, MAX);
	stellar_win_loss(&w, true, false);
	assert_int_equal(w.cwnd, STELLAR_WIN_MIN);
	assert_int_equal(w.ssthresh, MAX);
	stellar_win_acked(&w, 100);
	assert_int_equal(w.cwnd, STELLAR_WIN_MIN + 100);
	stellar_win_acked(&w, MAX);
	assert_int_equal(w.cwnd, MAX);
	stellar_win_loss(&w, false, false);
	assert_int_equal(w.cwnd, MAX / 2);
	assert_int_equal(w.ssthresh, MAX);
	/* After a congestion loss, the lower threshold stays. */
	stellar_win_loss(&w, false, true);
	assert_int_equal(w.ssthresh, MAX / 4);
	stellar_win_loss(&w, true, false);
	assert_int_equal(w.ssthresh, MAX / 4);
	stellar_win_acked(&w, MAX / 4);
	assert_int_equal(w.cwnd, MAX / 4);
	assert_int_equal(w.acked, STELLAR_WIN_MIN);
}

/* Losses in a row never take the window below the least one. */
static void test_win_floor(void **state)
{
	struct stellar_win w;
	int i;

	(void)state;
	stellar_win_init(&w, MAX);
	for (i = 0; i < 20; i++)
		stellar_win_loss(&w, i & 1, true);
	assert_int_equal(w.cwnd, STELLAR_WIN_MIN);
	assert_int_equal(w.ssthresh, STELLAR_WIN_MIN);
	stellar_win_acked(&w, STELLAR_WIN_MIN);
	assert_int_equal(w.cwnd, STELLAR_WIN_MIN + 1);
}

/* Growth stops at the maximum, from either phase. */
static void test_win_ceiling(void **state)
{
	struct stellar_win w;
	int i;

	(void)state;
	stellar_win_init(&w, 64);
	stellar_win_loss(&w, false, true);
	assert_int_equal(w.cwnd, 32);
	for (i = 0; i < 100; i++)
		stellar_win_acked(&w, 64);
	assert_int_equal(w.cwnd, 64);
	assert_int_equal(w.acked, 0);
	stellar_win_acked(&w, UINT32_MAX);
	assert_int_equal(w.cwnd, 64);
	/* Slow start cannot jump past the maximum either. */
	w.ssthresh = 1000;
	w.cwnd = 60;
	stellar_win_acked(&w, 500);
	assert_true(w.cwnd <= 64);
}

/* Random ACKs and losses keep the window within its bounds. */
static void test_win_random(void **state)
{
	struct test_rng rng;
	struct stellar_win w;
	int i;

	(void)state;
	test_rng_seed(&rng, 11);
	stellar_win_init(&w, MAX);
	for (i = 0; i < 100000; i++) {
		uint64_t r = test_rng_next(&rng);

		if (r % 50 == 0)
			stellar_win_loss(&w, r % 100 == 0, r % 3 != 0);
		else
			stellar_win_acked(&w, (r >> 8) % 64);
		assert_in_range(w.cwnd, STELLAR_WIN_MIN, MAX);
		assert_in_range(w.ssthresh, STELLAR_WIN_MIN, MAX);
		assert_true(w.acked < w.cwnd || w.cwnd == MAX);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_win_init),
		cmocka_unit_test(test_win_seq_error),
		cmocka_unit_test(test_win_timeout),
		cmocka_unit_test(test_win_not_congestion),
		cmocka_unit_test(test_win_floor),
		cmocka_unit_test(test_win_ceiling),
		cmocka_unit_test(test_win_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
