/* SPDX-License-Identifier: GPL-2.0 */
/*
 * virtio-stellar: log2 latency histograms (portable).
 *
 * The bucket layout is the uAPI's (STELLAR_LAT_BUCKETS buckets, the first
 * below 2^STELLAR_LAT_MIN_SHIFT ns, each next one twice as wide).  No
 * allocation, locking or clock: the callers take the times and hold what
 * protects a histogram.  Also compiled into the unit tests and
 * stellar-tool.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_LAT_HIST_H
#define STELLAR_LAT_HIST_H

#include "stellar_portable.h"
#include "stellar-netlink.h"

/**
 * struct stellar_lat_hist - one segment's histogram
 * @bucket: samples per bucket
 * @sum_ns: sum of the samples (wraps after 584 years of latency)
 *
 * The number of samples is the sum of @bucket.
 */
struct stellar_lat_hist {
	u64 bucket[STELLAR_LAT_BUCKETS];
	u64 sum_ns;
};

/* The bucket of a time of @ns nanoseconds. */
u32 stellar_lat_bucket(u64 ns);

/*
 * The exclusive upper bound of bucket @b in ns; U64_MAX for the last
 * bucket (and beyond).
 */
u64 stellar_lat_bucket_upper_ns(u32 b);

/* The inclusive lower bound of bucket @b in ns. */
u64 stellar_lat_bucket_lower_ns(u32 b);

/* The enum stellar_lat_size class of a work request of @bytes bytes. */
u32 stellar_lat_size_class(u64 bytes);

/* Count a sample of @ns nanoseconds into @h. */
void stellar_lat_hist_add(struct stellar_lat_hist *h, u64 ns);

/* Count a sample of @ns nanoseconds, in bucket @b, into @h. */
static inline void stellar_lat_hist_add_at(struct stellar_lat_hist *h, u32 b,
					   u64 ns)
{
	h->bucket[b]++;
	h->sum_ns += ns;
}

/* Samples in @nr buckets of @bucket. */
u64 stellar_lat_count(const u64 *bucket, u32 nr);

/**
 * stellar_lat_percentile_ns() - a percentile of a histogram
 * @bucket: STELLAR_LAT_BUCKETS counts
 * @ppm: the percentile in parts per million (500000: the median)
 *
 * The sample of rank ceil(count * @ppm / 10^6) is placed by linear
 * interpolation inside its bucket; in the last, open-ended bucket it is
 * that bucket's lower bound.
 *
 * Return: nanoseconds, 0 for an empty histogram.  Userspace only.
 */
u64 stellar_lat_percentile_ns(const u64 *bucket, u32 ppm);

#endif /* STELLAR_LAT_HIST_H */
