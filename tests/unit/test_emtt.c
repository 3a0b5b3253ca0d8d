// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * virtio-stellar unit tests: the eMTT index function and entry checks
 * (kernel/stellar_emtt_index.c), and a direct-mapped cache model built on
 * them that behaves as the kernel's table must: looked up by (key, iova
 * page) alone, without the MR.
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

/* Keys 1..N all get different bases; the function is deterministic. */
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

/* ---- (key, iova page): eligibility, spans, checks -------------------- */

/* The index is the slot function on the key's base: consecutive pages. */
static void test_index_by_key(void **state)
{
	uint32_t key = 0x1200, n = 64000, i;

	(void)state;
	for (i = 0; i < 100; i++)
		assert_int_equal(stellar_emtt_index(key, 777 + i, n),
				 stellar_emtt_slot(stellar_emtt_base(key),
						   777 + i, n));
	assert_int_equal((stellar_emtt_index(key, 778, n) + n -
			  stellar_emtt_index(key, 777, n)) % n, 1);
	/* The variant byte moves the key elsewhere. */
	assert_true(stellar_emtt_index(0x1200, 5, n) !=
		    stellar_emtt_index(0x1201, 5, n));
}

static struct stellar_emtt_mr mk_mr(uint64_t serial, uint64_t iova,
				    uint64_t length, const void *pd,
				    uint32_t key, uint32_t access)
{
	struct stellar_emtt_mr mr = {
		.serial = serial, .iova = iova, .length = length, .pd = pd,
		.key = key, .access = access,
	};

	return mr;
}

static void test_eligible(void **state)
{
	struct stellar_emtt_mr mr = mk_mr(1, 0x7f0000001234ULL, 100000, NULL,
					  0x100, 0);

	(void)state;
	/* ibv_reg_mr: iova == address. */
	assert_true(stellar_emtt_mr_eligible(&mr, 0x7f0000001234ULL, 12));
	/* Another iova with the same offset in the page. */
	assert_true(stellar_emtt_mr_eligible(&mr, 0x5555234ULL, 12));
	/* Another offset in the page: an iova page spans two user pages. */
	assert_false(stellar_emtt_mr_eligible(&mr, 0x5555235ULL, 12));
	assert_false(stellar_emtt_mr_eligible(&mr, 0x5555034ULL, 12));
	/* Ending exactly at the top of the iova space is fine... */
	mr = mk_mr(1, UINT64_MAX - 4095, 4096, NULL, 0x100, 0);
	assert_true(stellar_emtt_mr_eligible(&mr, 0x10000, 12));
	/* ...wrapping around it is not. */
	mr.length = 4097;
	assert_false(stellar_emtt_mr_eligible(&mr, 0x10000, 12));
	/* No serial or no bytes: nothing to cache. */
	mr = mk_mr(0, 0x1000, 4096, NULL, 0x100, 0);
	assert_false(stellar_emtt_mr_eligible(&mr, 0x1000, 12));
	mr = mk_mr(1, 0x1000, 0, NULL, 0x100, 0);
	assert_false(stellar_emtt_mr_eligible(&mr, 0x1000, 12));
}

static void test_iova_page(void **state)
{
	struct stellar_emtt_mr mr = mk_mr(1, 0x10005, 1 << 20, NULL, 0x100, 0);
	uint64_t start = 0x7f0000000005ULL;

	(void)state;
	assert_true(stellar_emtt_iova_page(&mr, start, start, 12) == 0x10);
	assert_true(stellar_emtt_iova_page(&mr, start, start + 4090, 12) ==
		    0x10);
	assert_true(stellar_emtt_iova_page(&mr, start, start + 4091, 12) ==
		    0x11);
	/* An iova below the user address: the difference wraps, harmlessly. */
	mr.iova = 5;
	assert_true(stellar_emtt_iova_page(&mr, start, start + 8192, 12) == 2);
}

/* Is byte @b inside [iova, iova + length), with no wrap-around? */
static bool in_mr(const struct stellar_emtt_mr *mr, uint64_t b)
{
	return b >= mr->iova && b - mr->iova < mr->length;
}

/*
 * Tiny pages (16 bytes) make an exhaustive check cheap: for MRs at every
 * offset and length, a page's tag marks exactly the bytes inside the MR.
 */
static void check_spans(uint64_t iova, uint64_t length)
{
	const uint32_t shift = 4, psize = 1U << shift;
	struct stellar_emtt_mr mr = mk_mr(9, iova, length, NULL, 0x300, 0);
	uint64_t first_page = iova >> shift, p;
	struct stellar_emtt_tag tag;
	uint32_t b;

	for (p = first_page - 2; p != first_page + (length >> shift) + 3; p++) {
		bool any = false;

		if (p > (UINT64_MAX >> shift))
			continue;
		for (b = 0; b < psize; b++)
			any |= in_mr(&mr, (p << shift) + b);
		assert_int_equal(stellar_emtt_tag_init(&tag, &mr, p, shift),
				 any);
		if (!any) {
			assert_true(tag.serial == 0);
			continue;
		}
		assert_true(tag.serial == 9 && tag.iova_page == p);
		assert_int_equal(tag.key, 0x300);
		for (b = 0; b < psize; b++)
			assert_int_equal(b >= tag.valid_first &&
					 b < tag.valid_end,
					 in_mr(&mr, (p << shift) + b));
	}
}

static void test_tag_spans(void **state)
{
	uint64_t iova, len;

	(void)state;
	for (iova = 1000; iova < 1000 + 48; iova++)
		for (len = 1; len < 70; len++)
			check_spans(iova, len);
	/* At the top of the iova space. */
	for (len = 1; len <= 40; len++)
		check_spans(UINT64_MAX - len + 1, len);
}

static void test_tag_rejects_wrapping_mr(void **state)
{
	struct stellar_emtt_mr mr = mk_mr(1, UINT64_MAX - 10, 20, NULL, 1, 0);
	struct stellar_emtt_tag tag;

	(void)state;
	assert_false(stellar_emtt_tag_init(&tag, &mr, UINT64_MAX >> 12, 12));
	assert_false(stellar_emtt_tag_init(&tag, &mr, 0, 12));
	mr.length = 0;
	mr.iova = 0x1000;
	assert_false(stellar_emtt_tag_init(&tag, &mr, 1, 12));
}

/*
 * tag_allows() against a reference that knows the MR: key, PD, access,
 * serial, and every byte of [iova, iova + len) inside the MR.
 */
static void test_tag_allows_reference(void **state)
{
	const uint32_t shift = 4, psize = 1U << shift;
	static const uint32_t accesses[] = { 0, 1, 2, 3, 6, 7, 8, 15 };
	int pd_a, pd_b;
	struct test_rng rng;
	int i;

	(void)state;
	test_rng_seed(&rng, 77);
	for (i = 0; i < 200000; i++) {
		struct stellar_emtt_mr mr = mk_mr(1 + test_rng_below(&rng, 3),
				1000 + test_rng_below(&rng, 64),
				1 + test_rng_below(&rng, 80),
				test_rng_below(&rng, 2) ? &pd_a : &pd_b,
				0x100 + test_rng_below(&rng, 2),
				accesses[test_rng_below(&rng, 8)]);
		struct stellar_emtt_req req = {
			.pd = test_rng_below(&rng, 4) ? mr.pd : &pd_b,
			.key = test_rng_below(&rng, 4) ? mr.key : 0x101,
			.access = accesses[test_rng_below(&rng, 8)],
		};
		uint64_t page = (mr.iova >> shift) + test_rng_below(&rng, 7) - 1;
		uint32_t in_page = test_rng_below(&rng, psize);
		uint32_t len = 1 + test_rng_below(&rng, psize - in_page);
		uint64_t iova = (page << shift) + in_page;
		struct stellar_emtt_tag tag;
		bool want;

		if (!stellar_emtt_tag_init(&tag, &mr, page, shift))
			continue;
		want = req.key == mr.key && req.pd == mr.pd &&
		       (mr.access & req.access) == req.access &&
		       in_mr(&mr, iova) && in_mr(&mr, iova + len - 1);
		assert_int_equal(stellar_emtt_tag_allows(&tag, &req, iova, len,
							 shift), want);
	}
}

/* Each field of the tag is checked on its own. */
static void test_tag_allows_each_field(void **state)
{
	int pd, other_pd;
	struct stellar_emtt_mr mr = mk_mr(5, 0x10000, 0x3000, &pd, 0x4200,
					  6 /* remote write | read */);
	struct stellar_emtt_req req = { .pd = &pd, .key = 0x4200, .access = 4 };
	struct stellar_emtt_tag tag, t;

	(void)state;
	assert_true(stellar_emtt_tag_init(&tag, &mr, 0x11, 12));
	assert_true(stellar_emtt_tag_allows(&tag, &req, 0x11000, 4096, 12));
	/* Another page than the entry's. */
	assert_false(stellar_emtt_tag_allows(&tag, &req, 0x12000, 1, 12));
	/* Another key, e.g. the same index with another variant byte. */
	req.key = 0x4201;
	assert_false(stellar_emtt_tag_allows(&tag, &req, 0x11000, 1, 12));
	req.key = 0x4200;
	/* Another PD. */
	req.pd = &other_pd;
	assert_false(stellar_emtt_tag_allows(&tag, &req, 0x11000, 1, 12));
	req.pd = &pd;
	/* Rights the MR does not grant. */
	req.access = 8;
	assert_false(stellar_emtt_tag_allows(&tag, &req, 0x11000, 1, 12));
	req.access = 0;
	assert_true(stellar_emtt_tag_allows(&tag, &req, 0x11000, 1, 12));
	/* An empty entry never answers. */
	t = tag;
	t.serial = 0;
	assert_false(stellar_emtt_tag_allows(&t, &req, 0x11000, 1, 12));
	/* The last page: bytes past the MR's end are refused. */
	mr.length = 0x2800;
	assert_true(stellar_emtt_tag_init(&tag, &mr, 0x12, 12));
	assert_true(stellar_emtt_tag_allows(&tag, &req, 0x12000, 0x800, 12));
	assert_false(stellar_emtt_tag_allows(&tag, &req, 0x12000, 0x801, 12));
	assert_false(stellar_emtt_tag_allows(&tag, &req, 0x127ff, 2, 12));
	assert_true(stellar_emtt_tag_allows(&tag, &req, 0x127ff, 1, 12));
}

/*
 * The kernel's hit path checks a multi-page copy by the entries of its
 * first and last pages only (same registration, each admitting its part):
 * since an MR is contiguous in iova, that must be exactly "every byte of
 * the copy is in the MR".  Exhaustive on 16-byte pages.
 */
static void test_first_last_cover_range(void **state)
{
	const uint32_t shift = 4, psize = 1U << shift;
	struct stellar_emtt_req req = { .key = 0x100 };
	uint64_t mr_iova, mr_len, iova, len;

	(void)state;
	for (mr_iova = 64; mr_iova < 64 + 2 * psize; mr_iova++) {
		for (mr_len = 1; mr_len < 4 * psize; mr_len++) {
			struct stellar_emtt_mr mr = mk_mr(3, mr_iova, mr_len,
							  NULL, 0x100, 0);

			for (iova = 40; iova < 64 + 7 * psize; iova++) {
				for (len = 1; len < 3 * psize; len++) {
					uint64_t last = iova + len - 1;
					uint32_t n = psize - (iova & (psize - 1));
					struct stellar_emtt_tag first_tag, last_tag;
					bool ok, want;

					if (n > len)
						n = len;
					want = in_mr(&mr, iova) && in_mr(&mr, last);
					ok = stellar_emtt_tag_init(&first_tag, &mr,
								   iova >> shift, shift) &&
					     stellar_emtt_tag_allows(&first_tag, &req,
								     iova, n, shift);
					if (ok && n < len)
						ok = stellar_emtt_tag_init(&last_tag, &mr,
									   last >> shift, shift) &&
						     stellar_emtt_tag_allows(&last_tag, &req,
									     last & ~(uint64_t)(psize - 1),
									     (last & (psize - 1)) + 1, shift) &&
						     last_tag.serial == first_tag.serial;
					assert_int_equal(ok, want);
				}
			}
		}
	}
}

/* ---- a direct-mapped cache on the index, as the kernel's table ---- */

struct model {
	uint32_t n;
	struct stellar_emtt_tag *tag;
	unsigned int hits, misses, evictions;
};

static void model_init(struct model *m, uint32_t n)
{
	m->n = n;
	m->tag = calloc(n, sizeof(*m->tag));
	assert_non_null(m->tag);
	m->hits = m->misses = m->evictions = 0;
}

static void model_free(struct model *m)
{
	free(m->tag);
}

/*
 * The hit path: the entry of (key, iova page) answers a copy of one byte
 * at @iova with no knowledge of the MR.  Returns the serial of the
 * registration that answered, 0 on a miss.
 */
static uint64_t model_hit(struct model *m, const struct stellar_emtt_req *req,
			  uint64_t iova)
{
	struct stellar_emtt_tag *tag;

	tag = &m->tag[stellar_emtt_index(req->key, iova >> 12, m->n)];
	return stellar_emtt_tag_allows(tag, req, iova, 1, 12) ? tag->serial : 0;
}

/* A copy: the hit path, else the slow path (knows @mr) fills. */
static void model_access(struct model *m, const struct stellar_emtt_mr *mr,
			 uint64_t iova)
{
	struct stellar_emtt_req req = {
		.pd = mr->pd, .key = mr->key, .access = mr->access,
	};
	struct stellar_emtt_tag *tag;

	if (model_hit(m, &req, iova)) {
		m->hits++;
		return;
	}
	m->misses++;
	tag = &m->tag[stellar_emtt_index(mr->key, iova >> 12, m->n)];
	if (tag->serial)
		m->evictions++;
	assert_true(stellar_emtt_tag_init(tag, mr, iova >> 12, 12));
}

/* Deregistration: clear every entry of the registration. */
static unsigned int model_invalidate(struct model *m, uint64_t serial)
{
	unsigned int cleared = 0;
	uint32_t i;

	for (i = 0; i < m->n; i++) {
		if (m->tag[i].serial == serial) {
			memset(&m->tag[i], 0, sizeof(m->tag[i]));
			cleared++;
		}
	}
	return cleared;
}

/* A working set of n pages of one MR: after one round, only hits. */
static void test_model_fits(void **state)
{
	struct stellar_emtt_mr mr = mk_mr(42, 0x400000, 1000 * 4096, NULL,
					  0x700, 0);
	struct model m;
	uint32_t i;

	(void)state;
	model_init(&m, 1000);
	for (i = 0; i < 1000; i++)
		model_access(&m, &mr, mr.iova + i * 4096ULL);
	assert_int_equal(m.misses, 1000);
	assert_int_equal(m.evictions, 0);
	for (i = 0; i < 5000; i++)
		model_access(&m, &mr, mr.iova + (i % 1000) * 4096ULL + i % 4096);
	assert_int_equal(m.hits, 5000);
	model_free(&m);
}

/* n + 1 pages cycled: pages 0 and n share a slot, 2 misses a round. */
static void test_model_one_too_many(void **state)
{
	struct stellar_emtt_mr mr = mk_mr(7, 0x400000, 1001 * 4096, NULL,
					  0x700, 0);
	struct model m;
	uint32_t round, i;

	(void)state;
	model_init(&m, 1000);
	for (i = 0; i <= 1000; i++)
		model_access(&m, &mr, mr.iova + i * 4096ULL);
	m.hits = m.misses = m.evictions = 0;
	for (round = 0; round < 10; round++)
		for (i = 0; i <= 1000; i++)
			model_access(&m, &mr, mr.iova + i * 4096ULL);
	assert_int_equal(m.misses, 20);
	assert_int_equal(m.evictions, 20);
	assert_int_equal(m.hits, 10 * 1001 - 20);
	model_free(&m);
}

/*
 * A working set far larger than the table: it evicts, and whatever the
 * hit path answers is always the right registration's right page.
 */
static void test_model_thrash_stays_right(void **state)
{
	struct stellar_emtt_mr a = mk_mr(1, 0x400000, 4096 * 4096ULL, NULL,
					 0x100, 0);
	struct stellar_emtt_mr b = mk_mr(2, 0x400000, 4096 * 4096ULL, NULL,
					 0x200, 0);
	struct test_rng rng;
	struct model m;
	int i;

	(void)state;
	model_init(&m, 1000);
	test_rng_seed(&rng, 3);
	for (i = 0; i < 100000; i++) {
		struct stellar_emtt_mr *mr = test_rng_below(&rng, 2) ? &a : &b;
		uint64_t iova = mr->iova + test_rng_below(&rng, 4096) * 4096ULL;
		struct stellar_emtt_req req = { .key = mr->key };
		struct stellar_emtt_tag *tag;
		uint64_t serial = model_hit(&m, &req, iova);

		if (serial) {
			tag = &m.tag[stellar_emtt_index(mr->key, iova >> 12,
							m.n)];
			assert_true(serial == mr->serial);
			assert_true(tag->iova_page == iova >> 12);
		}
		model_access(&m, mr, iova);
	}
	assert_true(m.evictions > 50000);
	assert_true(m.hits > 0);
	model_free(&m);
}

/*
 * Deregistration, then a new registration that gets the same key (same
 * index, same variant byte) at the same iova: once the old entries are
 * cleared, the new MR never hits them.  Without the clearing it would:
 * that is why deregistration must clear before the key index is reused.
 */
static void test_model_rereg_same_key(void **state)
{
	int pd;
	struct stellar_emtt_mr old = mk_mr(10, 0x400000, 100 * 4096, &pd,
					   0x500, 6);
	struct stellar_emtt_mr new = mk_mr(11, 0x400000, 100 * 4096, &pd,
					   0x500, 6);
	struct stellar_emtt_mr other = mk_mr(12, 0x9000000, 10 * 4096, &pd,
					     0x600, 6);
	struct stellar_emtt_req req = { .pd = &pd, .key = 0x500, .access = 2 };
	struct model m;
	uint32_t i;

	(void)state;
	model_init(&m, 1000);
	for (i = 0; i < 100; i++)
		model_access(&m, &old, old.iova + i * 4096ULL);
	for (i = 0; i < 10; i++)
		model_access(&m, &other, other.iova + i * 4096ULL);
	/* The hazard: by key and iova alone, the old entries still answer. */
	assert_true(model_hit(&m, &req, new.iova) == old.serial);
	assert_int_equal(model_invalidate(&m, old.serial), 100);
	for (i = 0; i < 100; i++)
		assert_true(model_hit(&m, &req, new.iova + i * 4096ULL) == 0);
	/* Another MR's entries survive. */
	req.key = 0x600;
	assert_true(model_hit(&m, &req, other.iova) == other.serial);
	/* The new registration fills and hits its own entries. */
	m.hits = m.misses = 0;
	for (i = 0; i < 200; i++)
		model_access(&m, &new, new.iova + (i % 100) * 4096ULL);
	assert_int_equal(m.misses, 100);
	assert_int_equal(m.hits, 100);
	req.key = 0x500;
	assert_true(model_hit(&m, &req, new.iova) == new.serial);
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
		cmocka_unit_test(test_index_by_key),
		cmocka_unit_test(test_eligible),
		cmocka_unit_test(test_iova_page),
		cmocka_unit_test(test_tag_spans),
		cmocka_unit_test(test_tag_rejects_wrapping_mr),
		cmocka_unit_test(test_tag_allows_reference),
		cmocka_unit_test(test_tag_allows_each_field),
		cmocka_unit_test(test_first_last_cover_range),
		cmocka_unit_test(test_model_fits),
		cmocka_unit_test(test_model_one_too_many),
		cmocka_unit_test(test_model_thrash_stays_right),
		cmocka_unit_test(test_model_rereg_same_key),
	};

	return cmocka_run_group_tests_name("emtt", tests, NULL, NULL);
}
