// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: log2 latency histograms (portable, see stellar_lat_hist.h).
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include "stellar_lat_hist.h"

u32 stellar_lat_bucket(u64 ns)
{
	u32 bits = fls64(ns >> STELLAR_LAT_MIN_SHIFT);

	return bits < STELLAR_LAT_BUCKETS ? bits : STELLAR_LAT_BUCKETS - 1;
}

u64 stellar_lat_bucket_upper_ns(u32 b)
{
	if (b >= STELLAR_LAT_BUCKETS - 1)
		return U64_MAX;
	return 1ULL << (STELLAR_LAT_MIN_SHIFT + b);
}

u64 stellar_lat_bucket_lower_ns(u32 b)
{
	if (!b)
		return 0;
	if (b > STELLAR_LAT_BUCKETS - 1)
		b = STELLAR_LAT_BUCKETS - 1;
	return 1ULL << (STELLAR_LAT_MIN_SHIFT + b - 1);
}

u32 stellar_lat_size_class(u64 bytes)
{
	static const u64 bound[__STELLAR_LAT_SIZE_MAX] =
		STELLAR_LAT_SIZE_BOUNDS_INIT;
	u32 c;

	for (c = 0; c < __STELLAR_LAT_SIZE_MAX - 1; c++)
		if (bytes <= bound[c])
			break;
	return c;
}

void stellar_lat_hist_add(struct stellar_lat_hist *h, u64 ns)
{
	stellar_lat_hist_add_at(h, stellar_lat_bucket(ns), ns);
}

u64 stellar_lat_count(const u64 *bucket, u32 nr)
{
	u64 n = 0;
	u32 b;

	for (b = 0; b < nr; b++)
		n += bucket[b];
	return n;
}

#ifndef __KERNEL__
/*
 * Userspace only (stellar-tool, the unit tests): the kernel hands out the
 * buckets and never needs a percentile.
 */

/* @a * @b / @c rounded down, for @b <= @c, without overflow. */
static u64 stellar_lat_scale(u64 a, u64 b, u64 c)
{
	while (c >= (1ULL << 32)) {
		b >>= 1;
		c >>= 1;
	}
	/* a % c < c < 2^32 and b <= c: the product fits. */
	return a / c * b + a % c * b / c;
}

u64 stellar_lat_percentile_ns(const u64 *bucket, u32 ppm)
{
	u64 total = stellar_lat_count(bucket, STELLAR_LAT_BUCKETS);
	u64 rank, seen = 0, lo, hi;
	u32 b;

	if (!total)
		return 0;
	if (ppm > 1000000)
		ppm = 1000000;
	/* ceil(total * ppm / 10^6), at least 1, at most total */
	rank = total / 1000000 * ppm +
	       (total % 1000000 * ppm + 999999) / 1000000;
	if (!rank)
		rank = 1;
	if (rank > total)
		rank = total;
	for (b = 0; b < STELLAR_LAT_BUCKETS - 1; b++) {
		if (seen + bucket[b] >= rank)
			break;
		seen += bucket[b];
	}
	lo = stellar_lat_bucket_lower_ns(b);
	if (b == STELLAR_LAT_BUCKETS - 1)
		return lo;
	hi = stellar_lat_bucket_upper_ns(b);
	return lo + stellar_lat_scale(hi - lo, rank - seen, bucket[b]);
}
#endif /* !__KERNEL__ */
