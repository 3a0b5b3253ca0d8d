// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * virtio-stellar unit tests: the reordering a spraying requester sees
 * (kernel/stellar_reo.h, kernel/stellar_reo.c).
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "stellar_reo.h"
#include "test_util.h"

#define T0	1000000ULL

/* Deliveries in sending order: no reordering, whatever the gaps. */
static void test_reo_in_order(void **state)
{
	struct stellar_reo r;
	u64 sent;

	(void)state;
	memset(&r, 0xee, sizeof(r));
	stellar_reo_init(&r);
	assert_int_equal(stellar_reo_seen_us(&r, T0), 0);
	for (sent = T0; sent < T0 + 100000; sent += 700)
		stellar_reo_delivered(&r, sent, sent + 5000);
	assert_int_equal(stellar_reo_seen_us(&r, T0 + 105000), 0);
	/* The same send time twice (one burst) is not reordering either. */
	stellar_reo_delivered(&r, T0 + 200000, T0 + 205000);
	stellar_reo_delivered(&r, T0 + 200000, T0 + 205000);
	assert_int_equal(stellar_reo_seen_us(&r, T0 + 205000), 0);
}

/* A packet overtaken by one sent 3 ms later: 3 ms seen; the largest counts. */
static void test_reo_overtaken(void **state)
{
	struct stellar_reo r;
	u64 now = T0 + 10000;

	(void)state;
	stellar_reo_init(&r);
	stellar_reo_delivered(&r, T0 + 3000, now);
	stellar_reo_delivered(&r, T0, now);
	assert_int_equal(stellar_reo_seen_us(&r, now), 3000);
	/* A smaller one later does not lower it ... */
	stellar_reo_delivered(&r, T0 + 2000, now + 10);
	assert_int_equal(stellar_reo_seen_us(&r, now + 10), 3000);
	/* ... a larger one raises it. */
	stellar_reo_delivered(&r, T0 + 9000, now + 30);
	stellar_reo_delivered(&r, T0 + 1500, now + 40);
	assert_int_equal(stellar_reo_seen_us(&r, now + 40), 7500);
}

/* What was seen lasts STELLAR_REO_SEEN_WIN_US, then the next sample rules. */
static void test_reo_ages(void **state)
{
	struct stellar_reo r;
	u64 now = T0 + 50000;

	(void)state;
	stellar_reo_init(&r);
	stellar_reo_delivered(&r, T0 + 40000, now);
	stellar_reo_delivered(&r, T0, now);
	assert_int_equal(stellar_reo_seen_us(&r, now), 40000);
	assert_int_equal(stellar_reo_seen_us(&r, now + STELLAR_REO_SEEN_WIN_US),
			 40000);
	/* Nothing seen since: it expires. */
	assert_int_equal(stellar_reo_seen_us(&r, now + STELLAR_REO_SEEN_WIN_US + 1),
			 0);
	/* A small reordering after the expiry replaces the large one. */
	now += STELLAR_REO_SEEN_WIN_US + 100;
	stellar_reo_delivered(&r, now - 500, now);
	stellar_reo_delivered(&r, now - 800, now);
	assert_int_equal(stellar_reo_seen_us(&r, now), 300);
}

/* An overtaking longer than 32 bits of microseconds is held at U32_MAX. */
static void test_reo_clamp(void **state)
{
	struct stellar_reo r;
	u64 far = T0 + (1ULL << 33);

	(void)state;
	stellar_reo_init(&r);
	stellar_reo_delivered(&r, far, far);
	stellar_reo_delivered(&r, T0, far);
	assert_int_equal(stellar_reo_seen_us(&r, far), U32_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reo_in_order),
		cmocka_unit_test(test_reo_overtaken),
		cmocka_unit_test(test_reo_ages),
		cmocka_unit_test(test_reo_clamp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
