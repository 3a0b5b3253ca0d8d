// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * virtio-stellar unit tests: 24-bit PSN arithmetic and the out-of-order
 * receive window (kernel/stellar_psn.h, kernel/stellar_psn.c).
 *
 * Built twice: with the default window and with a 64-bit one
 * (-DSTELLAR_PSN_WINDOW_BITS=64), so that window edges are hit often.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "stellar_psn.h"
#include "test_util.h"

#define WBITS		STELLAR_PSN_WINDOW_BITS
#define PSN_MOD		0x1000000U

/* ---- arithmetic -------------------------------------------------------- */

static void test_psn_add(void **state)
{
	(void)state;
	assert_int_equal(STELLAR_PSN_MASK, 0xffffff);
	assert_int_equal(stellar_psn_add(0, 1), 1);
	assert_int_equal(stellar_psn_add(0xffffff, 1), 0);
	assert_int_equal(stellar_psn_add(0xfffffe, 5), 3);
	assert_int_equal(stellar_psn_add(0, -1), 0xffffff);
	assert_int_equal(stellar_psn_add(2, -5), 0xfffffd);
	assert_int_equal(stellar_psn_add(0x123456, 0), 0x123456);
	assert_int_equal(stellar_psn_add(0x800000, 0x800000), 0);
}

static void test_psn_diff(void **state)
{
	(void)state;
	assert_int_equal(stellar_psn_diff(5, 5), 0);
	assert_int_equal(stellar_psn_diff(6, 5), 1);
	assert_int_equal(stellar_psn_diff(5, 6), -1);
	assert_int_equal(stellar_psn_diff(0, 0xffffff), 1);
	assert_int_equal(stellar_psn_diff(0xffffff, 0), -1);
	assert_int_equal(stellar_psn_diff(2, 0xfffffe), 4);
	assert_int_equal(stellar_psn_diff(0x7fffff, 0), 0x7fffff);
	assert_int_equal(stellar_psn_diff(0x800000, 0), -0x800000);
	assert_int_equal(stellar_psn_diff(0x800001, 0), -0x7fffff);
	assert_int_equal(stellar_psn_diff(0x10, 0x800010), -0x800000);
}

static void test_psn_order(void **state)
{
	(void)state;
	assert_true(stellar_psn_before(1, 2));
	assert_false(stellar_psn_before(2, 2));
	assert_true(stellar_psn_before(0xffffff, 0));
	assert_true(stellar_psn_before(0xfffff0, 0x10));
	assert_false(stellar_psn_before(0x10, 0xfffff0));
	assert_true(stellar_psn_after(0, 0xffffff));
	assert_true(stellar_psn_after(0x7ffffe, 0xffffff));
	assert_false(stellar_psn_after(0x7fffff, 0xffffff));
	assert_false(stellar_psn_after(3, 3));
}

static void test_psn_between(void **state)
{
	(void)state;
	assert_true(stellar_psn_between(5, 5, 5));
	assert_false(stellar_psn_between(6, 5, 5));
	assert_true(stellar_psn_between(5, 1, 9));
	assert_true(stellar_psn_between(1, 1, 9));
	assert_true(stellar_psn_between(9, 1, 9));
	assert_false(stellar_psn_between(10, 1, 9));
	assert_false(stellar_psn_between(0, 1, 9));
	/* ranges across the wrap */
	assert_true(stellar_psn_between(0xffffff, 0xfffffd, 2));
	assert_true(stellar_psn_between(0, 0xfffffd, 2));
	assert_true(stellar_psn_between(2, 0xfffffd, 2));
	assert_false(stellar_psn_between(3, 0xfffffd, 2));
	assert_false(stellar_psn_between(0xfffffc, 0xfffffd, 2));
}

/* ---- window: directed cases -------------------------------------------- */

static void test_window_classify(void **state)
{
	struct stellar_psn_window win;

	(void)state;
	stellar_psn_window_init(&win, 100);
	assert_int_equal(win.epsn, 100);
	assert_int_equal(stellar_psn_classify(&win, 100),
			 STELLAR_PSN_NEW_IN_ORDER);
	assert_int_equal(stellar_psn_classify(&win, 101),
			 STELLAR_PSN_NEW_OUT_OF_ORDER);
	assert_int_equal(stellar_psn_classify(&win, 100 + WBITS - 1),
			 STELLAR_PSN_NEW_OUT_OF_ORDER);
	assert_int_equal(stellar_psn_classify(&win, 100 + WBITS),
			 STELLAR_PSN_OUT_OF_WINDOW);
	assert_int_equal(stellar_psn_classify(&win, 100 + 0x7fffff),
			 STELLAR_PSN_OUT_OF_WINDOW);
	assert_int_equal(stellar_psn_classify(&win, 99),
			 STELLAR_PSN_DUPLICATE);
	assert_int_equal(stellar_psn_classify(&win, 0),
			 STELLAR_PSN_DUPLICATE);
	/* behind across the wrap, up to 2^23 */
	assert_int_equal(stellar_psn_classify(&win, 0xffffff),
			 STELLAR_PSN_DUPLICATE);
	assert_int_equal(stellar_psn_classify(&win, 100 + 0x800000),
			 STELLAR_PSN_DUPLICATE);
	/* the bits above 24 are ignored */
	assert_int_equal(stellar_psn_classify(&win, 0x5000064),
			 STELLAR_PSN_NEW_IN_ORDER);
}

static void test_window_mark_in_order(void **state)
{
	struct stellar_psn_window win;
	u32 psn;

	(void)state;
	stellar_psn_window_init(&win, 7);
	for (psn = 7; psn < 7 + 3 * WBITS; psn++)
		assert_int_equal(stellar_psn_mark(&win, psn), 1);
	assert_int_equal(win.epsn, 7 + 3 * WBITS);
	assert_int_equal(win.nr_ooo, 0);
	assert_int_equal(stellar_psn_mark(&win, 7), 0);
	assert_int_equal(win.epsn, 7 + 3 * WBITS);
}

static void test_window_mark_out_of_order(void **state)
{
	struct stellar_psn_window win;
	u32 missing;

	(void)state;
	stellar_psn_window_init(&win, 100);
	assert_false(stellar_psn_first_missing(&win, &missing));
	assert_int_equal(stellar_psn_mark(&win, 102), 0);
	assert_int_equal(stellar_psn_mark(&win, 103), 0);
	assert_int_equal(stellar_psn_classify(&win, 102),
			 STELLAR_PSN_DUPLICATE);
	assert_int_equal(stellar_psn_mark(&win, 102), 0);
	assert_int_equal(win.nr_ooo, 2);
	assert_true(stellar_psn_first_missing(&win, &missing));
	assert_int_equal(missing, 100);

	assert_int_equal(stellar_psn_mark(&win, 100), 1);
	assert_int_equal(win.epsn, 101);
	assert_true(stellar_psn_first_missing(&win, &missing));
	assert_int_equal(missing, 101);

	assert_int_equal(stellar_psn_mark(&win, 101), 3);
	assert_int_equal(win.epsn, 104);
	assert_int_equal(win.nr_ooo, 0);
	assert_false(stellar_psn_first_missing(&win, &missing));
	assert_int_equal(stellar_psn_classify(&win, 103),
			 STELLAR_PSN_DUPLICATE);
}

static void test_window_wraparound(void **state)
{
	struct stellar_psn_window win;

	(void)state;
	stellar_psn_window_init(&win, 0xfffffe);
	assert_int_equal(stellar_psn_mark(&win, 1), 0);
	assert_int_equal(stellar_psn_mark(&win, 0xffffff), 0);
	assert_int_equal(stellar_psn_classify(&win, 0),
			 STELLAR_PSN_NEW_OUT_OF_ORDER);
	assert_int_equal(stellar_psn_mark(&win, 0xfffffe), 2);
	assert_int_equal(win.epsn, 0);
	assert_int_equal(stellar_psn_classify(&win, 0xffffff),
			 STELLAR_PSN_DUPLICATE);
	assert_int_equal(stellar_psn_mark(&win, 0), 2);
	assert_int_equal(win.epsn, 2);
	assert_int_equal(win.nr_ooo, 0);
	assert_int_equal(stellar_psn_classify(&win, 2 + WBITS - 1),
			 STELLAR_PSN_NEW_OUT_OF_ORDER);
	assert_int_equal(stellar_psn_classify(&win, 2 + WBITS),
			 STELLAR_PSN_OUT_OF_WINDOW);
}

static void test_window_out_of_window_ignored(void **state)
{
	struct stellar_psn_window win, before;

	(void)state;
	stellar_psn_window_init(&win, 0xffff00);
	assert_int_equal(stellar_psn_mark(&win, 0xffff05), 0);
	memcpy(&before, &win, sizeof(win));
	assert_int_equal(stellar_psn_mark(&win, 0xffff00 + WBITS), 0);
	assert_int_equal(stellar_psn_mark(&win, 0x400000), 0);
	assert_int_equal(stellar_psn_mark(&win, 0xfffeff), 0);	/* behind */
	assert_int_equal(stellar_psn_mark(&win, 0xffff05), 0);	/* dup */
	assert_memory_equal(&win, &before, sizeof(win));
}

/* Fill the whole window out of order, then close the gap at once. */
static void test_window_full(void **state)
{
	struct stellar_psn_window win;
	u32 start = 0xffffff - WBITS / 2;
	u32 i;

	(void)state;
	stellar_psn_window_init(&win, start);
	for (i = WBITS - 1; i >= 1; i--)
		assert_int_equal(stellar_psn_mark(&win,
						  stellar_psn_add(start, (s32)i)),
				 0);
	assert_int_equal(win.nr_ooo, WBITS - 1);
	assert_int_equal(win.max_psn, stellar_psn_add(start, WBITS - 1));
	assert_int_equal(stellar_psn_classify(&win,
					      stellar_psn_add(start, WBITS)),
			 STELLAR_PSN_OUT_OF_WINDOW);
	assert_int_equal(stellar_psn_mark(&win, start), WBITS);
	assert_int_equal(win.epsn, stellar_psn_add(start, WBITS));
	assert_int_equal(win.nr_ooo, 0);
	/* all the reused bits are clear again */
	for (i = 1; i < WBITS; i++)
		assert_int_equal(stellar_psn_classify(&win,
				stellar_psn_add(win.epsn, (s32)i)),
				STELLAR_PSN_NEW_OUT_OF_ORDER);
}

static void test_window_missing_ranges(void **state)
{
	struct stellar_psn_window win;
	struct stellar_psn_range ranges[4];
	struct stellar_psn_range range;

	(void)state;
	stellar_psn_window_init(&win, 0xfffffa);
	assert_int_equal(stellar_psn_missing_ranges(&win, ranges, 4), 0);
	/* received: fffffc fffffd, 1, 4; missing: fffffa-fffffb, fffffe-0, 2-3 */
	stellar_psn_mark(&win, 0xfffffc);
	stellar_psn_mark(&win, 0xfffffd);
	stellar_psn_mark(&win, 4);
	stellar_psn_mark(&win, 1);
	assert_int_equal(win.max_psn, 4);
	assert_int_equal(stellar_psn_missing_ranges(&win, ranges, 4), 3);
	assert_int_equal(ranges[0].first, 0xfffffa);
	assert_int_equal(ranges[0].last, 0xfffffb);
	assert_int_equal(ranges[1].first, 0xfffffe);
	assert_int_equal(ranges[1].last, 0);
	assert_int_equal(ranges[2].first, 2);
	assert_int_equal(ranges[2].last, 3);
	/* capacity limits the list, oldest first */
	assert_int_equal(stellar_psn_missing_ranges(&win, ranges, 1), 1);
	assert_int_equal(ranges[0].last, 0xfffffb);
	assert_int_equal(stellar_psn_missing_ranges(&win, ranges, 0), 0);
	/* searching from inside a gap, from a received PSN, past the end */
	assert_true(stellar_psn_next_missing(&win, 0xffffff, &range));
	assert_int_equal(range.first, 0xffffff);
	assert_int_equal(range.last, 0);
	assert_true(stellar_psn_next_missing(&win, 1, &range));
	assert_int_equal(range.first, 2);
	assert_false(stellar_psn_next_missing(&win, 4, &range));
	assert_false(stellar_psn_next_missing(&win, 5, &range));
	/* from behind epsn starts at epsn */
	assert_true(stellar_psn_next_missing(&win, 0xfff000, &range));
	assert_int_equal(range.first, 0xfffffa);

	/* filling the first gap leaves two */
	assert_int_equal(stellar_psn_mark(&win, 0xfffffa), 1);
	assert_int_equal(stellar_psn_mark(&win, 0xfffffb), 3);
	assert_int_equal(stellar_psn_missing_ranges(&win, ranges, 4), 2);
	assert_int_equal(ranges[0].first, 0xfffffe);
	assert_int_equal(ranges[1].first, 2);
}

/* ---- window against a model ---------------------------------------------- */

#define MODEL_SPAN	(8 * WBITS + 4096)

/* PSNs as unbounded offsets from the initial expected PSN. */
struct model {
	u32 base;
	bool received[MODEL_SPAN];
	u32 expected;		/* offset of epsn */
	u32 highest;		/* offset of the highest received, if any */
	bool any_ooo;
};

static u32 model_psn(const struct model *m, u32 offset)
{
	return (m->base + offset) & STELLAR_PSN_MASK;
}

static enum stellar_psn_class model_classify(const struct model *m, u32 off)
{
	if (off == m->expected)
		return STELLAR_PSN_NEW_IN_ORDER;
	if (off < m->expected || m->received[off])
		return STELLAR_PSN_DUPLICATE;
	if (off >= m->expected + WBITS)
		return STELLAR_PSN_OUT_OF_WINDOW;
	return STELLAR_PSN_NEW_OUT_OF_ORDER;
}

static u32 model_mark(struct model *m, u32 off)
{
	u32 advanced = 0;

	switch (model_classify(m, off)) {
	case STELLAR_PSN_NEW_IN_ORDER:
		m->received[off] = true;
		while (m->expected < MODEL_SPAN && m->received[m->expected]) {
			m->expected++;
			advanced++;
		}
		break;
	case STELLAR_PSN_NEW_OUT_OF_ORDER:
		m->received[off] = true;
		if (!m->any_ooo || off > m->highest)
			m->highest = off;
		break;
	default:
		break;
	}
	m->any_ooo = m->highest > m->expected;
	return advanced;
}

static u32 model_ranges(const struct model *m, struct stellar_psn_range *r,
			u32 max)
{
	u32 nr = 0, off = m->expected;

	if (!m->any_ooo)
		return 0;
	while (off < m->highest && nr < max) {
		if (m->received[off]) {
			off++;
			continue;
		}
		r[nr].first = model_psn(m, off);
		while (!m->received[off + 1])
			off++;
		r[nr++].last = model_psn(m, off);
		off++;
	}
	return nr;
}

static void compare_ranges(const struct stellar_psn_window *win,
			   const struct model *m)
{
	struct stellar_psn_range got[16], want[16];
	u32 nr_got = stellar_psn_missing_ranges(win, got, 16);
	u32 nr_want = model_ranges(m, want, 16);
	u32 i;

	assert_int_equal(nr_got, nr_want);
	for (i = 0; i < nr_got; i++) {
		assert_int_equal(got[i].first, want[i].first);
		assert_int_equal(got[i].last, want[i].last);
	}
}

static void run_model(u32 base, uint64_t seed)
{
	static struct model m;
	struct stellar_psn_window win;
	struct test_rng rng;
	unsigned int step;

	memset(&m, 0, sizeof(m));
	m.base = base;
	stellar_psn_window_init(&win, base);
	test_rng_seed(&rng, seed);
	for (step = 0; step < 40000 && m.expected + 2 * WBITS < MODEL_SPAN;
	     step++) {
		/* mostly near epsn, sometimes behind or beyond the window */
		u32 lo = m.expected > 64 ? m.expected - 64 : 0;
		u32 off = lo + test_rng_below(&rng, WBITS + 128);
		u32 psn;

		if (test_rng_below(&rng, 8) == 0)
			off = m.expected;
		psn = model_psn(&m, off);

		assert_int_equal(stellar_psn_classify(&win, psn),
				 model_classify(&m, off));
		assert_int_equal(stellar_psn_mark(&win, psn),
				 model_mark(&m, off));
		assert_int_equal(win.epsn, model_psn(&m, m.expected));
		if (step % 64 == 0)
			compare_ranges(&win, &m);
	}
	/* the run really went through the window many times */
	assert_true(m.expected > 4 * WBITS);
}

static void test_window_model_plain(void **state)
{
	(void)state;
	run_model(1000, 11);
}

static void test_window_model_wrap(void **state)
{
	(void)state;
	run_model(PSN_MOD - 3 * WBITS, 12);
	run_model(PSN_MOD - 1, 13);
}

/* stellar_psn_received(): only PSNs ahead of epsn, in the window, marked. */
static void test_window_received(void **state)
{
	struct stellar_psn_window win;
	u32 epsn = 0xfffff0, i;

	(void)state;
	stellar_psn_window_init(&win, epsn);
	assert_false(stellar_psn_received(&win, epsn));
	stellar_psn_mark(&win, stellar_psn_add(epsn, 3));
	stellar_psn_mark(&win, stellar_psn_add(epsn, WBITS - 1));
	for (i = 0; i < WBITS + 8; i++)
		assert_int_equal(stellar_psn_received(&win,
						      stellar_psn_add(epsn, i)),
				 i == 3 || i == WBITS - 1);
	/* Behind the window: a duplicate, not "received ahead". */
	assert_false(stellar_psn_received(&win, stellar_psn_add(epsn, -1)));
	/* The bit of epsn + WBITS + 3 is the one of epsn + 3: not it. */
	assert_false(stellar_psn_received(&win,
					  stellar_psn_add(epsn, WBITS + 3)));
	stellar_psn_mark(&win, epsn);
	assert_int_equal(win.epsn, stellar_psn_add(epsn, 1));
	assert_true(stellar_psn_received(&win, stellar_psn_add(epsn, 3)));
	assert_false(stellar_psn_received(&win, epsn));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_psn_add),
		cmocka_unit_test(test_psn_diff),
		cmocka_unit_test(test_psn_order),
		cmocka_unit_test(test_psn_between),
		cmocka_unit_test(test_window_classify),
		cmocka_unit_test(test_window_mark_in_order),
		cmocka_unit_test(test_window_mark_out_of_order),
		cmocka_unit_test(test_window_wraparound),
		cmocka_unit_test(test_window_out_of_window_ignored),
		cmocka_unit_test(test_window_full),
		cmocka_unit_test(test_window_missing_ranges),
		cmocka_unit_test(test_window_model_plain),
		cmocka_unit_test(test_window_model_wrap),
		cmocka_unit_test(test_window_received),
	};

	return cmocka_run_group_tests_name("stellar_psn", tests, NULL, NULL);
}
