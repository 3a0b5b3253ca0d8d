// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * virtio-stellar unit tests: the eMTT index function
 * (kernel/stellar_emtt_index.c), and a direct-mapped cache model built on
 * it that behaves as the kernel's table must.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "stellar_emtt_index.h"
#include "test_util.h"

static void test_nslots(void **state)
{
	(void)state;
	assert_int_equal(stellar_emtt_nslots(0), 0);
	assert_int_equal(stellar_emtt_nslots(1), 1000);
	assert_int_equal(stellar_emtt_nslots(64), 64000);
	assert_int_equal(stellar_emtt_nslots(1024), 1024000);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Serials 1..N all get different bases; the function is deterministic. */
static void test_base_distinct(void **state)
{
	enum { N = 100000 };
	uint64_t *bases = malloc(N * sizeof(*bases));
	int i;

	(void)state;
	assert_non_null(bases);
	for (i = 0; i < N; i++)
		bases[i] = stellar_emtt_base(i + 1);
	assert_true(stellar_emtt_base(77) == bases[76]);
	qsort(bases, N, sizeof(*bases), cmp_u64);
	for (i = 1; i < N; i++)
		assert_true(bases[i] != bases[i - 1]);
	free(bases);
}

/* Flipping one input bit flips about half of the output bits. */
static void test_base_avalanche(void **state)
{
	struct test_rng rng;
	uint64_t flipped = 0;
	int i, bit, trials = 0;

	(void)state;
	test_rng_seed(&rng, 5);
	for (i = 0; i < 200; i++) {
		uint64_t x = test_rng_next(&rng);

		for (bit = 0; bit < 64; bit++, trials++)
			flipped += __builtin_popcountll(stellar_emtt_base(x) ^
					stellar_emtt_base(x ^ (1ULL << bit)));
	}
	/* 32 on average for a good mix; allow a small margin. */
	assert_in_range(flipped / trials, 30, 34);
}

/* Reference: (base + page) mod n computed without any overflow. */
static uint32_t slot_ref(uint64_t base, uint64_t page, uint32_t n)
{
	return (uint32_t)(((unsigned __int128)base + page) % n);
}

static void test_slot_range_and_reference(void **state)
{
	static const uint32_t sizes[] = { 1, 7, 1000, 64000, 1024000 };
	static const uint64_t edges[] = { 0, 1, UINT64_MAX, UINT64_MAX - 1,
					  1ULL << 63, 0xffffffffULL };
	struct test_rng rng;
	size_t s, a, b;
	int i;

	(void)state;
	test_rng_seed(&rng, 9);
	for (s = 0; s < ARRAY_SIZE(sizes); s++) {
		uint32_t n = sizes[s];

		for (a = 0; a < ARRAY_SIZE(edges); a++)
			for (b = 0; b < ARRAY_SIZE(edges); b++)
				assert_int_equal(stellar_emtt_slot(edges[a],
								   edges[b], n),
						 slot_ref(edges[a], edges[b], n));
		for (i = 0; i < 10000; i++) {
			uint64_t base = test_rng_next(&rng);
			uint64_t page = test_rng_next(&rng) >> (i % 64);
			uint32_t slot = stellar_emtt_slot(base, page, n);

			assert_true(slot < n);
			assert_int_equal(slot, slot_ref(base, page, n));
		}
	}
}

/* A run of n consecutive pages of one registration fills every slot. */
static void test_slot_run_is_permutation(void **state)
{
	static const uint32_t sizes[] = { 1, 7, 1000, 64000 };
	size_t s;

	(void)state;
	for (s = 0; s < ARRAY_SIZE(sizes); s++) {
		uint32_t n = sizes[s], i;
		uint64_t base = stellar_emtt_base(s + 3);
		uint8_t *seen = calloc(n, 1);

		assert_non_null(seen);
		for (i = 0; i < n; i++) {
			uint32_t slot = stellar_emtt_slot(base, 12345 + i, n);

			assert_int_equal(seen[slot], 0);
			seen[slot] = 1;
		}
		free(seen);
	}
}

/* First pages of many registrations spread evenly over the table. */
static void test_slot_spread(void **state)
{
	enum { SLOTS = 1000, REGS = 100000 };
	uint32_t count[SLOTS] = { 0 }, max = 0;
	double chi2 = 0;
	int i;

	(void)state;
	for (i = 1; i <= REGS; i++)
		count[stellar_emtt_slot(stellar_emtt_base(i), 0, SLOTS)]++;
	for (i = 0; i < SLOTS; i++) {
		double d = count[i] - (double)REGS / SLOTS;

		chi2 += d * d / ((double)REGS / SLOTS);
		if (count[i] > max)
			max = count[i];
	}
	/* 999 degrees of freedom: mean 999, sd about 45. */
	assert_true(chi2 < 1200);
	assert_true(max < 160);
}

/* ---- a direct-mapped cache on the index, as the kernel's table ---- */

struct model {
	uint32_t n;
	uint64_t *serial;
	uint64_t *page;
	unsigned int hits, misses, evictions;
};

static void model_init(struct model *m, uint32_t n)
{
	m->n = n;
	m->serial = calloc(n, sizeof(*m->serial));
	m->page = calloc(n, sizeof(*m->page));
	assert_non_null(m->serial);
	assert_non_null(m->page);
	m->hits = m->misses = m->evictions = 0;
}

static void model_free(struct model *m)
{
	free(m->serial);
	free(m->page);
}

static void model_access(struct model *m, uint64_t serial, uint64_t page)
{
	uint32_t slot = stellar_emtt_slot(stellar_emtt_base(serial), page,
					  m->n);

	if (m->serial[slot] == serial && m->page[slot] == page) {
		m->hits++;
		return;
	}
	m->misses++;
	if (m->serial[slot])
		m->evictions++;
	m->serial[slot] = serial;
	m->page[slot] = page;
}

/* A working set of n pages of one MR: after one round, only hits. */
static void test_model_fits(void **state)
{
	struct model m;
	uint32_t i;

	(void)state;
	model_init(&m, 1000);
	for (i = 0; i < 1000; i++)
		model_access(&m, 42, i);
	assert_int_equal(m.misses, 1000);
	assert_int_equal(m.evictions, 0);
	for (i = 0; i < 5000; i++)
		model_access(&m, 42, i % 1000);
	assert_int_equal(m.hits, 5000);
	model_free(&m);
}

/* n + 1 pages cycled: pages 0 and n share a slot, 2 misses a round. */
static void test_model_one_too_many(void **state)
{
	struct model m;
	uint32_t round, i;

	(void)state;
	model_init(&m, 1000);
	for (i = 0; i <= 1000; i++)
		model_access(&m, 7, i);
	m.hits = m.misses = m.evictions = 0;
	for (round = 0; round < 10; round++)
		for (i = 0; i <= 1000; i++)
			model_access(&m, 7, i);
	assert_int_equal(m.misses, 20);
	assert_int_equal(m.evictions, 20);
	assert_int_equal(m.hits, 10 * 1001 - 20);
	model_free(&m);
}

/* A re-registration (new serial) of the same pages never hits old entries. */
static void test_model_new_serial_misses(void **state)
{
	struct model m;
	uint32_t i;

	(void)state;
	model_init(&m, 1000);
	for (i = 0; i < 100; i++)
		model_access(&m, 1, i);
	m.hits = m.misses = 0;
	for (i = 0; i < 100; i++)
		model_access(&m, 2, i);
	assert_int_equal(m.hits, 0);
	assert_int_equal(m.misses, 100);
	model_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nslots),
		cmocka_unit_test(test_base_distinct),
		cmocka_unit_test(test_base_avalanche),
		cmocka_unit_test(test_slot_range_and_reference),
		cmocka_unit_test(test_slot_run_is_permutation),
		cmocka_unit_test(test_slot_spread),
		cmocka_unit_test(test_model_fits),
		cmocka_unit_test(test_model_one_too_many),
		cmocka_unit_test(test_model_new_serial_misses),
	};

	return cmocka_run_group_tests_name("emtt", tests, NULL, NULL);
}
