/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * virtio-stellar unit tests: small shared helpers.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_TEST_UTIL_H
#define STELLAR_TEST_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Deterministic xorshift64*: runs are reproducible. */
struct test_rng {
	uint64_t state;
};

static inline void test_rng_seed(struct test_rng *rng, uint64_t seed)
{
	rng->state = seed ? seed : 0x9e3779b97f4a7c15ULL;
}

static inline uint64_t test_rng_next(struct test_rng *rng)
{
	uint64_t x = rng->state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng->state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

static inline uint32_t test_rng_below(struct test_rng *rng, uint32_t bound)
{
	return (uint32_t)(test_rng_next(rng) % bound);
}

static inline void test_rng_fill(struct test_rng *rng, uint8_t *buf,
				 size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)test_rng_next(rng);
}

/*
 * A heap copy of exactly @len bytes, so that valgrind or ASan catch any
 * read past the end.  Never returns NULL (aborts the test instead).
 */
static inline uint8_t *test_exact_copy(const uint8_t *src, size_t len)
{
	uint8_t *copy = malloc(len);

	if (!copy && len)
		abort();
	if (len)
		memcpy(copy, src, len);
	return copy;
}

#endif /* STELLAR_TEST_UTIL_H */
