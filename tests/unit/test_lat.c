// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * virtio-stellar unit tests: the log2 latency histograms
 * (kernel/stellar_lat_hist.h, kernel/stellar_lat_hist.c).
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "stellar_lat_hist.h"
#include "test_util.h"

#define LAST	(STELLAR_LAT_BUCKETS - 1)

static void test_bucket_edges(void **state)
{
	u32 b;

	(void)state;
	assert_int_equal(stellar_lat_bucket(0), 0);
	assert_int_equal(stellar_lat_bucket(1), 0);
	assert_int_equal(stellar_lat_bucket(1023), 0);
	assert_int_equal(stellar_lat_bucket(1024), 1);
	assert_int_equal(stellar_lat_bucket(2047), 1);
	assert_int_equal(stellar_lat_bucket(2048), 2);
	assert_int_equal(stellar_lat_bucket(1000000), 10);	/* 1 ms */
	assert_int_equal(stellar_lat_bucket(UINT64_MAX), LAST);
	for (b = 1; b < LAST; b++) {
		u64 lo = stellar_lat_bucket_lower_ns(b);
		u64 hi = stellar_lat_bucket_upper_ns(b);

		assert_true(lo < hi);
		assert_int_equal(stellar_lat_bucket(lo), b);
		assert_int_equal(stellar_lat_bucket(hi - 1), b);
		assert_int_equal(stellar_lat_bucket(hi), b + 1);
		assert_int_equal(stellar_lat_bucket_upper_ns(b - 1), lo);
	}
	assert_int_equal(stellar_lat_bucket_lower_ns(0), 0);
	assert_true(stellar_lat_bucket_upper_ns(LAST) == UINT64_MAX);
	assert_true(stellar_lat_bucket_upper_ns(LAST + 5) == UINT64_MAX);
	assert_true(stellar_lat_bucket_lower_ns(LAST + 5) ==
		    stellar_lat_bucket_lower_ns(LAST));
	/* the last bounded bucket ends at 2^40 ns, about 18 minutes */
	assert_true(stellar_lat_bucket_upper_ns(LAST - 1) == 1ULL << 40);
	assert_int_equal(stellar_lat_bucket((1ULL << 40) - 1), LAST - 1);
	assert_int_equal(stellar_lat_bucket(1ULL << 40), LAST);
}

static void test_hist_add(void **state)
{
	struct stellar_lat_hist h;

	(void)state;
	memset(&h, 0, sizeof(h));
	stellar_lat_hist_add(&h, 500);
	stellar_lat_hist_add(&h, 1500);
	stellar_lat_hist_add(&h, 1500);
	stellar_lat_hist_add(&h, 1ULL << 50);
	assert_int_equal(h.bucket[0], 1);
	assert_int_equal(h.bucket[1], 2);
	assert_int_equal(h.bucket[LAST], 1);
	assert_true(h.sum_ns == 3500 + (1ULL << 50));
	assert_int_equal(stellar_lat_count(h.bucket, STELLAR_LAT_BUCKETS), 4);
}

/* Each class holds its bound; the byte above it is the next class. */
static void test_size_class_edges(void **state)
{
	static const u64 bound[__STELLAR_LAT_SIZE_MAX] =
		STELLAR_LAT_SIZE_BOUNDS_INIT;
	u32 c;

	(void)state;
	assert_int_equal(stellar_lat_size_class(0), STELLAR_LAT_SIZE_256);
	assert_int_equal(stellar_lat_size_class(8), STELLAR_LAT_SIZE_256);
	for (c = 0; c < __STELLAR_LAT_SIZE_MAX - 1; c++) {
		assert_int_equal(stellar_lat_size_class(bound[c]), c);
		assert_int_equal(stellar_lat_size_class(bound[c] + 1), c + 1);
	}
	assert_int_equal(stellar_lat_size_class(1ULL << 31),
			 STELLAR_LAT_SIZE_LARGE);
	assert_int_equal(stellar_lat_size_class(UINT64_MAX),
			 STELLAR_LAT_SIZE_LARGE);
}

static void test_percentile_empty(void **state)
{
	u64 bucket[STELLAR_LAT_BUCKETS] = { 0 };

	(void)state;
	assert_int_equal(stellar_lat_percentile_ns(bucket, 500000), 0);
	assert_int_equal(stellar_lat_percentile_ns(bucket, 999000), 0);
}

static void test_percentile_one_bucket(void **state)
{
	u64 bucket[STELLAR_LAT_BUCKETS] = { 0 };
	u64 p;

	(void)state;
	/* 100 samples in [8192, 16384) */
	bucket[4] = 100;
	p = stellar_lat_percentile_ns(bucket, 500000);
	assert_true(p >= 8192 && p < 16384);
	/* rank 50 of 100: half way */
	assert_int_equal(p, 8192 + 8192 * 50 / 100);
	assert_int_equal(stellar_lat_percentile_ns(bucket, 1000000), 16384);
	assert_int_equal(stellar_lat_percentile_ns(bucket, 0), 8192 + 81);
	/* out of range ppm is clamped */
	assert_int_equal(stellar_lat_percentile_ns(bucket, 2000000), 16384);
}

static void test_percentile_ranks(void **state)
{
	u64 bucket[STELLAR_LAT_BUCKETS] = { 0 };

	(void)state;
	/* 990 fast samples, 9 slow ones, 1 very slow one */
	bucket[2] = 990;
	bucket[12] = 9;
	bucket[20] = 1;
	assert_true(stellar_lat_percentile_ns(bucket, 500000) < 4096);
	assert_true(stellar_lat_percentile_ns(bucket, 990000) <= 4096);
	/* rank 991: the first slow one */
	assert_true(stellar_lat_percentile_ns(bucket, 991000) >=
		    stellar_lat_bucket_lower_ns(12));
	assert_true(stellar_lat_percentile_ns(bucket, 999000) <=
		    stellar_lat_bucket_upper_ns(12));
	/* rank 1000: the very slow one */
	assert_true(stellar_lat_percentile_ns(bucket, 999001) >=
		    stellar_lat_bucket_lower_ns(20));
	/* the last, open bucket reports its lower bound */
	bucket[LAST] = 1000000;
	assert_true(stellar_lat_percentile_ns(bucket, 999000) ==
		    stellar_lat_bucket_lower_ns(LAST));
}

static void test_percentile_huge_counts(void **state)
{
	u64 bucket[STELLAR_LAT_BUCKETS] = { 0 };
	u64 p;

	(void)state;
	bucket[1] = 1ULL << 62;
	bucket[3] = 1ULL << 62;
	p = stellar_lat_percentile_ns(bucket, 250000);
	assert_true(p >= 1024 && p <= 2048);
	p = stellar_lat_percentile_ns(bucket, 750000);
	assert_true(p >= 4096 && p <= 8192);
}

/* Monotonic in ppm, always within the histogram's range. */
static void test_percentile_monotonic(void **state)
{
	struct test_rng rng;
	int round;

	(void)state;
	test_rng_seed(&rng, 12);
	for (round = 0; round < 200; round++) {
		u64 bucket[STELLAR_LAT_BUCKETS] = { 0 };
		u64 prev = 0;
		u32 ppm, b, lo = LAST, hi = 0;

		for (b = 0; b < STELLAR_LAT_BUCKETS; b++) {
			if (test_rng_next(&rng) % 3)
				continue;
			bucket[b] = test_rng_next(&rng) % 1000;
			if (bucket[b]) {
				lo = b < lo ? b : lo;
				hi = b > hi ? b : hi;
			}
		}
		if (!stellar_lat_count(bucket, STELLAR_LAT_BUCKETS))
			continue;
		for (ppm = 0; ppm <= 1000000; ppm += 997) {
			u64 p = stellar_lat_percentile_ns(bucket, ppm);

			assert_true(p >= prev);
			assert_true(p >= stellar_lat_bucket_lower_ns(lo));
			assert_true(hi == LAST ||
				    p <= stellar_lat_bucket_upper_ns(hi));
			prev = p;
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bucket_edges),
		cmocka_unit_test(test_hist_add),
		cmocka_unit_test(test_size_class_edges),
		cmocka_unit_test(test_percentile_empty),
		cmocka_unit_test(test_percentile_one_bucket),
		cmocka_unit_test(test_percentile_ranks),
		cmocka_unit_test(test_percentile_huge_counts),
		cmocka_unit_test(test_percentile_monotonic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
