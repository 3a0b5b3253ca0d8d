// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * virtio-stellar unit tests: the token bucket of the per-device transmit
 * rate limits (kernel/stellar_tbf.h, kernel/stellar_tbf.c).
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "stellar_tbf.h"
#include "test_util.h"

#define NS		STELLAR_TBF_NSEC_PER_SEC
#define MS		(NS / 1000)
#define T0		(5 * NS)	/* a clock that does not start at 0 */

static void test_tbf_unlimited(void **state)
{
	struct stellar_tbf tb;

	(void)state;
	stellar_tbf_init(&tb, 0, 64, T0);
	stellar_tbf_charge(&tb, 1ULL << 40);
	stellar_tbf_refill(&tb, T0 + NS);
	assert_int_equal(stellar_tbf_wait_ns(&tb), 0);
}

static void test_tbf_burst(void **state)
{
	struct stellar_tbf tb;

	(void)state;
	/* 32 MB/s: a 1/32 s burst is 1 MB. */
	stellar_tbf_init(&tb, 32 << 20, 64 << 10, T0);
	assert_int_equal(tb.burst, 1 << 20);
	assert_int_equal(tb.tokens, 1 << 20);
	/* a low rate still holds min_burst */
	stellar_tbf_init(&tb, 100, 16, T0);
	assert_int_equal(tb.burst, 16);
	/* the rate is capped */
	stellar_tbf_init(&tb, UINT64_MAX, 1, T0);
	assert_int_equal(tb.rate, STELLAR_TBF_RATE_MAX);
}

static void test_tbf_debt_and_wait(void **state)
{
	struct stellar_tbf tb;

	(void)state;
	stellar_tbf_init(&tb, 1000000, 1000, T0);	/* 1 MB/s, 31250 burst */
	assert_int_equal(stellar_tbf_wait_ns(&tb), 0);
	/* one large packet takes everything and more: credit */
	stellar_tbf_charge(&tb, 31250 + 4000);
	assert_int_equal(tb.tokens, -4000);
	/* 4001 tokens must flow in: 4.001 ms, rounded up */
	assert_int_equal(stellar_tbf_wait_ns(&tb), 4001 * 1000 + 1);
	stellar_tbf_refill(&tb, T0 + 4 * MS);
	assert_int_equal(tb.tokens, 0);
	assert_true(stellar_tbf_wait_ns(&tb) > 0);
	stellar_tbf_refill(&tb, T0 + 4 * MS + stellar_tbf_wait_ns(&tb));
	assert_true(tb.tokens > 0);
	assert_int_equal(stellar_tbf_wait_ns(&tb), 0);
}

static void test_tbf_refill_caps_at_burst(void **state)
{
	struct stellar_tbf tb;

	(void)state;
	stellar_tbf_init(&tb, 1000000, 1000, T0);
	stellar_tbf_charge(&tb, 10000);
	stellar_tbf_refill(&tb, T0 + 1000 * NS);	/* long idle */
	assert_int_equal(tb.tokens, tb.burst);
	/* time going backwards adds nothing */
	stellar_tbf_charge(&tb, 5);
	stellar_tbf_refill(&tb, T0);
	assert_int_equal(tb.tokens, tb.burst - 5);
}

/* Many refills a few nanoseconds apart lose no fraction of a token. */
static void test_tbf_refill_no_drift(void **state)
{
	struct stellar_tbf tb;
	u64 t;

	(void)state;
	stellar_tbf_init(&tb, 3000, 1, T0);	/* a token per 333.3 us */
	stellar_tbf_charge(&tb, tb.burst + 3000);	/* owe 3000 */
	for (t = T0; t <= T0 + NS; t += 7777)
		stellar_tbf_refill(&tb, t);
	stellar_tbf_refill(&tb, T0 + NS);
	assert_int_equal(tb.tokens, 0);
}

/*
 * A sender that sends whenever the bucket lets it, packets of random
 * size, waiting exactly as long as the bucket says: over 10 s it gets the
 * rate, plus at most the burst and one packet.
 */
static void simulate(u64 rate, u32 max_pkt, u64 seed)
{
	struct test_rng rng;
	struct stellar_tbf tb;
	u64 now = T0, sent = 0, waits = 0, wait;

	test_rng_seed(&rng, seed);
	stellar_tbf_init(&tb, rate, 2 * max_pkt, now);
	while (now < T0 + 10 * NS) {
		stellar_tbf_refill(&tb, now);
		wait = stellar_tbf_wait_ns(&tb);
		if (wait) {
			/* a timer fires late, by up to 4 ms (a jiffy) */
			now += wait + test_rng_below(&rng, 4 * MS);
			waits++;
			continue;
		}
		{
			u32 len = 1 + test_rng_below(&rng, max_pkt);

			stellar_tbf_charge(&tb, len);
			sent += len;
		}
		now += 1000;	/* 1 us per packet: faster than the rate */
	}
	assert_true(waits > 0);
	assert_true(sent <= 10 * rate + tb.burst + max_pkt);
	/* late timers cost nothing while the burst covers them */
	assert_true(sent >= 10 * rate - max_pkt);
}

static void test_tbf_rate_simulated(void **state)
{
	(void)state;
	simulate(20 << 20, 4096 + 64, 1);	/* 20 MB/s bytes */
	simulate(1 << 30, 9000, 2);		/* 1 GB/s */
	simulate(5000, 1, 3);			/* 5000 packets/s */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tbf_unlimited),
		cmocka_unit_test(test_tbf_burst),
		cmocka_unit_test(test_tbf_debt_and_wait),
		cmocka_unit_test(test_tbf_refill_caps_at_burst),
		cmocka_unit_test(test_tbf_refill_no_drift),
		cmocka_unit_test(test_tbf_rate_simulated),
	};

	return cmocka_run_group_tests_name("stellar_tbf", tests, NULL, NULL);
}
