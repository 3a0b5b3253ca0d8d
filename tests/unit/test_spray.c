// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * virtio-stellar unit tests: packet spray path choice
 * (kernel/stellar_spray.h, kernel/stellar_spray.c).
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "stellar_spray.h"
#include "test_util.h"

#define T0	1000000ULL	/* an arbitrary start time, us */

static struct stellar_spray *new_spray(u32 nr_paths, u32 shift)
{
	struct stellar_spray *s = malloc(sizeof(*s));

	assert_non_null(s);
	stellar_spray_init(s, nr_paths, 0xc123, shift);
	return s;
}

/* Picks of PSNs first..first+count-1 at @now, counted per path. */
static void count_picks(struct stellar_spray *s, u32 first, u32 count,
			u64 now, u32 *per_path)
{
	u32 i;

	memset(per_path, 0, sizeof(u32) * STELLAR_SPRAY_MAX_PATHS);
	for (i = 0; i < count; i++) {
		u32 path = stellar_spray_pick(s, first + i, now);

		assert_true(path < s->nr_paths);
		per_path[path]++;
	}
}

/* Acknowledge one packet of every path with the given RTTs. */
static void ack_all(struct stellar_spray *s, const u32 *rtt, u64 now)
{
	u32 i;

	for (i = 0; i < s->nr_paths; i++)
		stellar_spray_acked(s, i, rtt[i], false, now);
}

static void fail_path(struct stellar_spray *s, u32 path, u64 now)
{
	u32 i;

	for (i = 0; i < STELLAR_SPRAY_FAIL_LOSSES; i++)
		stellar_spray_lost(s, path, now);
	assert_int_equal(s->path[path].state, STELLAR_PATH_FAILED);
}

/* ---- set-up ------------------------------------------------------------ */

static void test_init_clamps(void **state)
{
	struct stellar_spray *s = new_spray(0, 0);

	(void)state;
	assert_int_equal(s->nr_paths, 1);
	stellar_spray_init(s, 1000, 1, 0);
	assert_int_equal(s->nr_paths, STELLAR_SPRAY_MAX_PATHS);
	assert_int_equal(stellar_spray_count_state(s, STELLAR_PATH_ACTIVE),
			 STELLAR_SPRAY_MAX_PATHS);
	free(s);
}

static void check_ports(u32 nr_paths, u16 base)
{
	struct stellar_spray s;
	u32 i, j;

	stellar_spray_init(&s, nr_paths, base, 7);
	for (i = 0; i < nr_paths; i++) {
		u16 port = stellar_spray_sport(&s, i);

		assert_in_range(port, 49152, 65535);
		/* What a QP without spray state (GSI) computes alone. */
		assert_int_equal(port, stellar_spray_path_port(base, i));
		for (j = 0; j < i; j++)
			assert_int_not_equal(port, stellar_spray_sport(&s, j));
	}
}

static void test_ports_distinct_in_range(void **state)
{
	static const u16 bases[] = { 0, 1, 0xc000, 0xfff0, 0xffff, 0x7fff };
	u32 i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bases); i++) {
		check_ports(1, bases[i]);
		check_ports(4, bases[i]);
		check_ports(STELLAR_SPRAY_MAX_PATHS, bases[i]);
	}
}

static void test_sport_out_of_range_path(void **state)
{
	struct stellar_spray *s = new_spray(4, 0);

	(void)state;
	assert_int_equal(stellar_spray_sport(s, 99), stellar_spray_sport(s, 0));
	free(s);
}

/* ---- rotation ------------------------------------------------------------ */

static void test_rotation_by_psn_and_shift(void **state)
{
	struct stellar_spray *a = new_spray(4, 0), *b = new_spray(4, 2);
	u32 psn;

	(void)state;
	for (psn = 100; psn < 140; psn++) {
		assert_int_equal(stellar_spray_pick(a, psn, T0), psn % 4);
		assert_int_equal(stellar_spray_pick(b, psn, T0), (psn + 2) % 4);
	}
	free(a);
	free(b);
}

static void test_64_paths_all_used_evenly(void **state)
{
	struct stellar_spray *s = new_spray(STELLAR_SPRAY_MAX_PATHS, 5);
	u32 per_path[STELLAR_SPRAY_MAX_PATHS], i;

	(void)state;
	count_picks(s, 0, STELLAR_SPRAY_MAX_PATHS, T0, per_path);
	for (i = 0; i < STELLAR_SPRAY_MAX_PATHS; i++)
		assert_int_equal(per_path[i], 1);
	count_picks(s, 64, 6400, T0, per_path);
	for (i = 0; i < STELLAR_SPRAY_MAX_PATHS; i++)
		assert_int_equal(per_path[i], 100);
	free(s);
}

static void test_single_path(void **state)
{
	struct stellar_spray *s = new_spray(1, 3);
	u32 psn;

	(void)state;
	for (psn = 0; psn < 10; psn++)
		assert_int_equal(stellar_spray_pick(s, psn, T0), 0);
	/* The only path is never taken out. */
	for (psn = 0; psn < 10; psn++)
		stellar_spray_lost(s, 0, T0);
	assert_int_equal(s->path[0].state, STELLAR_PATH_ACTIVE);
	assert_int_equal(stellar_spray_pick(s, 11, T0 + 1), 0);
	assert_int_equal(stellar_spray_pick_retx(s, 12, 0, T0 + 1), 0);
	free(s);
}

/* ---- weights --------------------------------------------------------------- */

static void test_weights_follow_rtt(void **state)
{
	static const u32 rtt[4] = { 100, 400, 400, 400 };
	struct stellar_spray *s = new_spray(4, 0);
	u32 per_path[STELLAR_SPRAY_MAX_PATHS];

	(void)state;
	ack_all(s, rtt, T0);
	assert_int_equal(s->path[0].weight, STELLAR_SPRAY_WEIGHT_MAX);
	/* 16 * 125 / 400: proportional beyond the 25% slack. */
	assert_int_equal(s->path[1].weight, 5);
	/* Shares 16 : 5 : 5 : 5 of 31. */
	count_picks(s, 0, 3100, T0, per_path);
	assert_int_equal(per_path[0], 1600);
	assert_int_equal(per_path[1], 500);
	assert_int_equal(per_path[3], 500);
	free(s);
}

static void test_rtt_noise_ignored(void **state)
{
	static const u32 rtt[4] = { 100, 110, 124, 125 };
	struct stellar_spray *s = new_spray(4, 0);
	u32 i;

	(void)state;
	ack_all(s, rtt, T0);
	for (i = 0; i < 4; i++)
		assert_int_equal(s->path[i].weight, STELLAR_SPRAY_WEIGHT_MAX);
	stellar_spray_acked(s, 3, 200, false, T0);	/* srtt 134 */
	assert_int_equal(s->path[3].weight, 15);	/* 16 * 125 / 134 */
	free(s);
}

static void test_rtt_smoothing(void **state)
{
	struct stellar_spray *s = new_spray(2, 0);

	(void)state;
	stellar_spray_acked(s, 0, 800, false, T0);
	assert_int_equal(s->path[0].srtt_us, 800);
	assert_int_equal(s->path[0].rttvar_us, 400);
	stellar_spray_acked(s, 0, 0, false, T0);	/* no sample */
	assert_int_equal(s->path[0].srtt_us, 800);
	stellar_spray_acked(s, 0, 1600, false, T0);
	assert_int_equal(s->path[0].srtt_us, 900);	/* 7/8 800 + 1/8 1600 */
	assert_int_equal(s->path[0].rttvar_us, 500);	/* 3/4 400 + 1/4 800 */
	stellar_spray_acked(s, 1, 0xffffffff, false, T0);
	assert_int_equal(s->path[1].srtt_us, STELLAR_SPRAY_RTT_MAX_US);
	free(s);
}

static void test_ecn_halves_then_decays(void **state)
{
	static const u32 rtt[4] = { 100, 100, 100, 100 };
	struct stellar_spray *s = new_spray(4, 0);
	u32 per_path[STELLAR_SPRAY_MAX_PATHS];
	u64 now = T0;

	(void)state;
	ack_all(s, rtt, now);
	stellar_spray_acked(s, 2, 100, true, now);
	assert_int_equal(s->path[2].ecn_marks, 1);
	assert_int_equal(s->path[2].weight, STELLAR_SPRAY_WEIGHT_MAX / 2);
	/* A second mark within the same RTT changes nothing more. */
	stellar_spray_acked(s, 2, 100, true, now + 10);
	assert_int_equal(s->path[2].weight, STELLAR_SPRAY_WEIGHT_MAX / 2);
	/* One RTT later it does. */
	stellar_spray_acked(s, 2, 100, true, now + 200);
	assert_int_equal(s->path[2].weight, STELLAR_SPRAY_WEIGHT_MAX / 4);
	count_picks(s, 0, 520, now + 200, per_path);
	assert_int_equal(per_path[2], 40);		/* 4 of 52 */
	assert_int_equal(per_path[0], 160);
	/* Clean acknowledgements bring it back, one level per period. */
	stellar_spray_acked(s, 2, 100, false, now + 300);
	assert_int_equal(s->path[2].weight, STELLAR_SPRAY_WEIGHT_MAX / 4);
	now += 200 + 1000;
	stellar_spray_acked(s, 2, 100, false, now);
	assert_int_equal(s->path[2].weight, STELLAR_SPRAY_WEIGHT_MAX / 2);
	now += 1000;
	stellar_spray_acked(s, 2, 100, false, now);
	assert_int_equal(s->path[2].weight, STELLAR_SPRAY_WEIGHT_MAX);
	free(s);
}

static void test_congestion_level_bounded(void **state)
{
	struct stellar_spray *s = new_spray(2, 0);
	u64 now = T0;
	u32 i;

	(void)state;
	for (i = 0; i < 20; i++, now += 1000)
		stellar_spray_acked(s, 1, 100, true, now);
	assert_int_equal(s->path[1].cong_level, STELLAR_SPRAY_CONG_MAX);
	assert_int_equal(s->path[1].weight, 1);
	assert_int_equal(s->path[1].state, STELLAR_PATH_ACTIVE);
	free(s);
}

static void test_loss_lowers_weight(void **state)
{
	struct stellar_spray *s = new_spray(4, 0);

	(void)state;
	stellar_spray_lost(s, 3, T0);
	assert_int_equal(s->path[3].losses, 1);
	assert_int_equal(s->path[3].state, STELLAR_PATH_ACTIVE);
	assert_int_equal(s->path[3].weight, STELLAR_SPRAY_WEIGHT_MAX / 2);
	free(s);
}

/* ---- failure and probing --------------------------------------------------- */

static void test_fails_after_few_losses(void **state)
{
	struct stellar_spray *s = new_spray(4, 0);
	u32 per_path[STELLAR_SPRAY_MAX_PATHS], i;

	(void)state;
	/* Losses broken by an acknowledgement do not take a path out. */
	for (i = 0; i < 5; i++) {
		stellar_spray_lost(s, 1, T0 + i);
		stellar_spray_lost(s, 1, T0 + i);
		stellar_spray_acked(s, 1, 0, false, T0 + i);
	}
	assert_int_equal(s->path[1].state, STELLAR_PATH_ACTIVE);
	/* STELLAR_SPRAY_FAIL_LOSSES in a row do. */
	fail_path(s, 1, T0 + 10);
	assert_int_equal(s->path[1].weight, 0);
	assert_int_equal(stellar_spray_count_state(s, STELLAR_PATH_FAILED), 1);
	count_picks(s, 0, 300, T0 + 11, per_path);
	assert_int_equal(per_path[1], 0);
	assert_int_equal(per_path[0] + per_path[2] + per_path[3], 300);
	assert_true(per_path[0] >= 90 && per_path[2] >= 90 &&
		    per_path[3] >= 90);
	free(s);
}

/* Pick until path @path comes up (at most 2 * nr_paths picks). */
static bool picks_path(struct stellar_spray *s, u32 path, u64 now)
{
	u32 i;

	for (i = 0; i < 2 * s->nr_paths; i++)
		if (stellar_spray_pick(s, i, now) == path)
			return true;
	return false;
}

static void test_probe_after_retry_at(void **state)
{
	struct stellar_spray *s = new_spray(4, 0);
	u64 retry_at, first_wait;

	(void)state;
	fail_path(s, 2, T0);
	retry_at = s->path[2].retry_at_us;
	first_wait = retry_at - T0;
	assert_true(first_wait >= STELLAR_SPRAY_PROBE_MIN_US);
	assert_false(picks_path(s, 2, retry_at - 1));
	/* Due: exactly one probe, then nothing until it is answered. */
	assert_int_equal(stellar_spray_pick(s, 0, retry_at), 2);
	assert_int_equal(s->path[2].state, STELLAR_PATH_PROBING);
	assert_false(picks_path(s, 2, retry_at + 1));
	assert_int_not_equal(stellar_spray_pick_retx(s, 5, 0, retry_at + 1), 2);
	/* Probe lost: failed again, the wait doubles. */
	stellar_spray_lost(s, 2, retry_at + 2);
	assert_int_equal(s->path[2].state, STELLAR_PATH_FAILED);
	assert_int_equal(s->path[2].retry_at_us - (retry_at + 2),
			 2 * first_wait);
	/* Next probe acknowledged: back in the rotation. */
	retry_at = s->path[2].retry_at_us;
	assert_int_equal(stellar_spray_pick(s, 0, retry_at), 2);
	stellar_spray_acked(s, 2, 50, false, retry_at + 10);
	assert_int_equal(s->path[2].state, STELLAR_PATH_ACTIVE);
	assert_int_equal(s->path[2].fail_count, 0);
	assert_true(picks_path(s, 2, retry_at + 20));
	free(s);
}

static void test_unanswered_probe_fails(void **state)
{
	struct stellar_spray *s = new_spray(4, 0);
	u64 retry_at;

	(void)state;
	fail_path(s, 0, T0);
	retry_at = s->path[0].retry_at_us;
	assert_int_equal(stellar_spray_pick(s, 0, retry_at), 0);
	/* Neither acknowledged nor reported lost before its deadline. */
	stellar_spray_pick(s, 1, s->path[0].retry_at_us);
	assert_int_equal(s->path[0].state, STELLAR_PATH_FAILED);
	assert_int_equal(s->path[0].fail_count, 2);
	free(s);
}

static void test_probe_wait_bounded(void **state)
{
	struct stellar_spray *s = new_spray(2, 0);
	u64 now = T0;
	u32 i;

	(void)state;
	fail_path(s, 1, now);
	for (i = 0; i < 40; i++) {
		now = s->path[1].retry_at_us;
		assert_int_equal(stellar_spray_pick(s, 0, now), 1);
		stellar_spray_lost(s, 1, now);
		assert_true(s->path[1].retry_at_us - now <=
			    STELLAR_SPRAY_PROBE_MAX_US);
	}
	assert_int_equal(s->path[1].retry_at_us - now,
			 STELLAR_SPRAY_PROBE_MAX_US);
	free(s);
}

static void test_last_paths_stay(void **state)
{
	struct stellar_spray *s = new_spray(8, 0);
	u32 i;

	(void)state;
	for (i = 0; i < 6; i++)
		fail_path(s, i, T0 + i);
	/* A quarter of the paths stay in use, however many losses. */
	for (i = 0; i < 10; i++) {
		stellar_spray_lost(s, 6, T0 + 10 + i);
		stellar_spray_lost(s, 7, T0 + 10 + i);
	}
	assert_int_equal(stellar_spray_count_state(s, STELLAR_PATH_ACTIVE), 2);
	assert_int_equal(s->path[6].state, STELLAR_PATH_ACTIVE);
	assert_int_equal(s->path[7].state, STELLAR_PATH_ACTIVE);
	assert_true(s->path[6].cong_level > 0);
	/* One path: it is never taken out. */
	free(s);
	s = new_spray(2, 0);
	fail_path(s, 0, T0);
	for (i = 0; i < 10; i++)
		stellar_spray_lost(s, 1, T0 + i);
	assert_int_equal(s->path[1].state, STELLAR_PATH_ACTIVE);
	free(s);
}

static void test_all_failed_fallback(void **state)
{
	struct stellar_spray *s = new_spray(4, 0);
	u32 i, psn;

	(void)state;
	/* Every path out (losses alone never do that): set it up. */
	for (i = 0; i < 4; i++) {
		s->path[i].state = STELLAR_PATH_FAILED;
		s->path[i].retry_at_us = T0 + 1000000;
	}
	s->path[1].failed_at_us = T0;
	s->path[3].failed_at_us = T0 + 1;
	s->path[0].failed_at_us = T0 + 2;
	s->path[2].failed_at_us = T0 + 3;
	for (psn = 0; psn < 8; psn++)
		assert_int_equal(stellar_spray_pick(s, psn, T0 + 4), 1);
	/* A retransmission avoids the path its copy was lost on. */
	assert_int_equal(stellar_spray_pick_retx(s, 0, 1, T0 + 4), 3);
	/* Lost again: the fallback moves on to the next path in turn. */
	stellar_spray_lost(s, 1, T0 + 5);
	assert_int_equal(stellar_spray_pick(s, 0, T0 + 6), 3);
	stellar_spray_lost(s, 3, T0 + 7);
	assert_int_equal(stellar_spray_pick(s, 0, T0 + 8), 0);
	/* The fallback path answers: it is back. */
	stellar_spray_acked(s, 0, 100, false, T0 + 9);
	for (psn = 0; psn < 8; psn++)
		assert_int_equal(stellar_spray_pick(s, psn, T0 + 10), 0);
	free(s);
}

/*
 * A requester whose window is full only resends: a failed path due for a
 * probe gets it from a resend (not the lost copy's own path), once.
 */
static void test_retx_probes_due_path(void **state)
{
	struct stellar_spray *s = new_spray(4, 0);
	u64 retry_at;

	(void)state;
	fail_path(s, 2, T0);
	retry_at = s->path[2].retry_at_us;
	assert_int_not_equal(stellar_spray_pick_retx(s, 0, 0, retry_at - 1), 2);
	/* Due, but the resend of a copy lost on it goes elsewhere. */
	assert_int_not_equal(stellar_spray_pick_retx(s, 1, 2, retry_at), 2);
	assert_int_equal(s->path[2].state, STELLAR_PATH_FAILED);
	assert_int_equal(stellar_spray_pick_retx(s, 2, 0, retry_at), 2);
	assert_int_equal(s->path[2].state, STELLAR_PATH_PROBING);
	assert_int_not_equal(stellar_spray_pick_retx(s, 3, 0, retry_at + 1), 2);
	/* Its acknowledgement brings it back. */
	stellar_spray_acked(s, 2, 0, false, retry_at + 10);
	assert_int_equal(s->path[2].state, STELLAR_PATH_ACTIVE);
	free(s);
}

static void test_retx_avoids_lost_path(void **state)
{
	struct stellar_spray *s = new_spray(4, 1);
	u32 psn, lost, path;

	(void)state;
	for (psn = 0; psn < 64; psn++) {
		lost = psn % 4;
		path = stellar_spray_pick_retx(s, psn, lost, T0);
		assert_true(path < 4);
		assert_int_not_equal(path, lost);
	}
	fail_path(s, 2, T0);
	for (psn = 0; psn < 64; psn++) {
		path = stellar_spray_pick_retx(s, psn, 0, T0 + 1);
		assert_true(path == 1 || path == 3);
	}
	/* Only the lost path is left: use it rather than a failed one. */
	fail_path(s, 1, T0 + 2);
	fail_path(s, 3, T0 + 3);
	assert_int_equal(stellar_spray_pick_retx(s, 9, 0, T0 + 4), 0);
	free(s);
}

/* ---- counters and timers ----------------------------------------------------- */

static void test_sent_counters(void **state)
{
	struct stellar_spray *s = new_spray(2, 0);

	(void)state;
	stellar_spray_sent(s, 1, 4096, false);
	stellar_spray_sent(s, 1, 1000, true);
	stellar_spray_sent(s, 7, 1000, true);	/* no such path: ignored */
	stellar_spray_acked(s, 7, 10, true, T0);
	stellar_spray_lost(s, 7, T0);
	assert_int_equal(s->path[1].tx_packets, 2);
	assert_int_equal(s->path[1].tx_bytes, 5096);
	assert_int_equal(s->path[1].retransmits, 1);
	assert_int_equal(s->path[0].tx_packets, 0);
	free(s);
}

static void test_rto_from_rtt(void **state)
{
	struct stellar_spray *s = new_spray(4, 0);

	(void)state;
	assert_int_equal(stellar_spray_rto_us(s, 100, 500000), 500000);
	stellar_spray_acked(s, 0, 1000, false, T0);	/* 1000 + 4 * 500 */
	assert_int_equal(stellar_spray_rto_us(s, 100, 500000), 3000);
	stellar_spray_acked(s, 1, 2000, false, T0);	/* slowest: 6000 */
	assert_int_equal(stellar_spray_rto_us(s, 100, 500000), 6000);
	assert_int_equal(stellar_spray_rto_us(s, 100, 4000), 4000);
	assert_int_equal(stellar_spray_rto_us(s, 8000, 500000), 8000);
	/* A failed path's RTT no longer counts. */
	fail_path(s, 1, T0);
	assert_int_equal(stellar_spray_rto_us(s, 100, 500000), 3000);
	free(s);
}

static void test_path_rto(void **state)
{
	struct stellar_spray *s = new_spray(4, 0);

	(void)state;
	/* Nothing measured: the bound; then the slowest path's. */
	assert_int_equal(stellar_spray_path_rto_us(s, 0, 100, 500000), 500000);
	stellar_spray_acked(s, 0, 1000, false, T0);	/* 1000 + 4 * 500 */
	stellar_spray_acked(s, 1, 2000, false, T0);	/* 2000 + 4 * 1000 */
	assert_int_equal(stellar_spray_path_rto_us(s, 0, 100, 500000), 3000);
	assert_int_equal(stellar_spray_path_rto_us(s, 1, 100, 500000), 6000);
	assert_int_equal(stellar_spray_path_rto_us(s, 2, 100, 500000), 6000);
	assert_int_equal(stellar_spray_path_rto_us(s, 4, 100, 500000), 6000);
	assert_int_equal(stellar_spray_path_rto_us(s, 0, 4000, 500000), 4000);
	assert_int_equal(stellar_spray_path_rto_us(s, 1, 100, 5000), 5000);
	free(s);
}

/*
 * 16 paths that a hash put 7/4/3/2 on 4 equal links; a link's RTT grows
 * with the queue of the traffic beyond its fair share, as on a saturated
 * link.  The weights must even the links out.
 */
static void test_weights_balance_uneven_hash(void **state)
{
	static const u32 link_of[16] = { 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1,
					 2, 2, 2, 3, 3 };
	struct stellar_spray *s = new_spray(16, 5);
	double worst = 0, least = 1;
	u64 now = T0;
	u32 round, i;

	(void)state;
	for (round = 0; round < 60; round++, now += 1000) {
		double share[4] = { 0 };

		for (i = 0; i < 1600; i++)
			share[link_of[stellar_spray_pick(s, round * 1600 + i,
							 now)]] += 1.0 / 1600;
		for (i = 0; i < 16; i++) {
			double over = share[link_of[i]] - 0.25;

			stellar_spray_acked(s, i, 100 + (over > 0 ? 20000 * over : 0),
					    false, now);
		}
		for (i = 0; i < 4 && round >= 30; i++) {
			worst = share[i] > worst ? share[i] : worst;
			least = share[i] < least ? share[i] : least;
		}
	}
	/* Plain rotation would give 0.44 and 0.125. */
	assert_true(worst <= 0.31);
	assert_true(least >= 0.19);
	free(s);
}

/* Queueing delay: the RTT above the path's windowed minimum. */
static void test_queue_delay(void **state)
{
	struct stellar_spray *s = new_spray(4, 0);
	u64 now = T0;

	(void)state;
	/* first sample: the minimum, no delay */
	assert_int_equal(stellar_spray_queue_delay_us(s, 1, 300, now), 0);
	assert_int_equal(s->path[1].min_rtt_us, 300);
	assert_int_equal(stellar_spray_queue_delay_us(s, 1, 900, now + 10), 600);
	/* a lower sample lowers the minimum */
	assert_int_equal(stellar_spray_queue_delay_us(s, 1, 200, now + 20), 0);
	assert_int_equal(stellar_spray_queue_delay_us(s, 1, 700, now + 30), 500);
	/* paths are separate */
	assert_int_equal(stellar_spray_queue_delay_us(s, 2, 5000, now + 40), 0);
	assert_int_equal(stellar_spray_queue_delay_us(s, 2, 5100, now + 50), 100);
	/* no sample, bad paths */
	assert_int_equal(stellar_spray_queue_delay_us(s, 1, 0, now + 60), 0);
	assert_int_equal(stellar_spray_queue_delay_us(s, 4, 9000, now), 0);
	assert_int_equal(stellar_spray_queue_delay_us(s, 1000, 9000, now), 0);
	/* the minimum expires after its window and restarts */
	now += STELLAR_SPRAY_MIN_RTT_WIN_US + 100;
	assert_int_equal(stellar_spray_queue_delay_us(s, 1, 800, now), 0);
	assert_int_equal(s->path[1].min_rtt_us, 800);
	assert_int_equal(stellar_spray_queue_delay_us(s, 1, 900, now + 1), 100);
	/* huge samples are clamped like the RTT */
	assert_int_equal(stellar_spray_queue_delay_us(s, 1, U32_MAX, now + 2),
			 STELLAR_SPRAY_RTT_MAX_US - 800);
	free(s);
}

/* ---- echoes: paths whose way back is dead ------------------------------ */

#define ECHO_STEP_US	100	/* time between two packets of the runs */

/*
 * Send @count packets, one every ECHO_STEP_US from *@now: each is
 * acknowledged (through some port: data is never lost here), and an echo
 * it asks for comes back at once through its own port unless that path is
 * in @dead_back (bit per path) or the peer does not know echoes
 * (@echo_peer false: it replies on the packet's port without the mark).
 * Echoes asked for are counted per path in @echoes (may be NULL).
 */
static void echo_run(struct stellar_spray *s, u32 count, u64 dead_back,
		     bool echo_peer, u64 *now, u32 *echoes)
{
	u32 i, path;

	for (i = 0; i < count; i++, *now += ECHO_STEP_US) {
		path = stellar_spray_pick(s, i, *now);
		assert_true(path < s->nr_paths);
		stellar_spray_acked(s, path, 50, false, *now);
		if (!stellar_spray_want_echo(s, path, *now))
			continue;
		if (echoes)
			echoes[path]++;
		if (!(dead_back & (1ULL << path)))
			stellar_spray_response(s, stellar_spray_sport(s, path),
					       echo_peer, *now + 1);
	}
}

static void test_echoes_cover_every_path(void **state)
{
	struct stellar_spray *s = new_spray(16, 5);
	u32 echoes[STELLAR_SPRAY_MAX_PATHS] = {}, total = 0, i;
	u64 now = T0;

	(void)state;
	echo_run(s, 20000, 0, true, &now, echoes);
	for (i = 0; i < 16; i++) {
		assert_true(echoes[i] >= 10);
		total += echoes[i];
		assert_int_equal(s->path[i].state, STELLAR_PATH_ACTIVE);
	}
	/* At most one packet in STELLAR_SPRAY_ECHO_EVERY asks for one. */
	assert_true(total <= 20000 / STELLAR_SPRAY_ECHO_EVERY);
	/* ...and a path at most once per STELLAR_SPRAY_ECHO_MIN_US. */
	for (i = 0; i < 16; i++)
		assert_true(echoes[i] <= 20000 * ECHO_STEP_US /
					 STELLAR_SPRAY_ECHO_MIN_US + 1);
	assert_false(stellar_spray_want_echo(new_spray(1, 0), 0, now));
	free(s);
}

static void test_dead_way_back_taken_out(void **state)
{
	struct stellar_spray *s = new_spray(4, 0);
	u64 now = T0, retry_at;
	u32 per_path[STELLAR_SPRAY_MAX_PATHS];
	u8 fails;

	(void)state;
	/* Its probes during the run are not answered either: it stays out. */
	echo_run(s, 2000, 1ULL << 2, true, &now, NULL);
	assert_int_equal(s->path[2].state, STELLAR_PATH_FAILED);
	assert_true(s->path[2].back_dead);
	assert_int_equal(s->path[2].back_failures, 1);
	assert_int_equal(stellar_spray_count_state(s, STELLAR_PATH_ACTIVE), 3);
	count_picks(s, 0, 30, now, per_path);
	assert_int_equal(per_path[2], 0);
	/* Its probe is acknowledged through other ports: still out. */
	fails = s->path[2].fail_count;
	retry_at = s->path[2].retry_at_us;
	assert_int_equal(stellar_spray_pick(s, 0, retry_at), 2);
	assert_true(stellar_spray_want_echo(s, 2, retry_at));
	stellar_spray_acked(s, 2, 50, false, retry_at + 10);
	assert_int_equal(s->path[2].state, STELLAR_PATH_PROBING);
	/* Unanswered until its deadline: failed again, longer wait. */
	stellar_spray_pick(s, 1, s->path[2].retry_at_us);
	assert_int_equal(s->path[2].state, STELLAR_PATH_FAILED);
	assert_int_equal(s->path[2].fail_count, fails + 1);
	/* The way back works again: the next probe's echo brings it back. */
	retry_at = s->path[2].retry_at_us;
	assert_int_equal(stellar_spray_pick(s, 0, retry_at), 2);
	assert_true(stellar_spray_want_echo(s, 2, retry_at));
	stellar_spray_response(s, stellar_spray_sport(s, 2), true, retry_at + 5);
	assert_int_equal(s->path[2].state, STELLAR_PATH_ACTIVE);
	assert_false(s->path[2].back_dead);
	assert_int_equal(s->path[2].fail_count, 0);
	assert_true(picks_path(s, 2, retry_at + 6));
	free(s);
}

/* A peer that never marks echoes, or no echo at all coming back: no path
 * is blamed (misses count against the echoes of other paths). */
static void test_echo_misses_need_evidence(void **state)
{
	struct stellar_spray *s = new_spray(8, 1);
	u64 now = T0;

	(void)state;
	echo_run(s, 5000, 1ULL << 3, false, &now, NULL);
	assert_int_equal(stellar_spray_count_state(s, STELLAR_PATH_ACTIVE), 8);
	assert_false(s->echo_seen);
	/* Echoes known, then every way back dead at once. */
	echo_run(s, 100, 0, true, &now, NULL);
	assert_true(s->echo_seen);
	echo_run(s, 5000, ~0ULL, true, &now, NULL);
	assert_int_equal(stellar_spray_count_state(s, STELLAR_PATH_ACTIVE), 8);
	free(s);
}

/* Ways back dead on all but one path: a quarter of the paths stays. */
static void test_echo_keeps_last_paths(void **state)
{
	struct stellar_spray *s = new_spray(8, 0);
	u64 now = T0;
	u32 i, dead = 0;

	(void)state;
	echo_run(s, 20000, 0xfe, true, &now, NULL);
	assert_int_equal(stellar_spray_count_state(s, STELLAR_PATH_ACTIVE) +
			 stellar_spray_count_state(s, STELLAR_PATH_PROBING), 2);
	assert_int_equal(s->path[0].state, STELLAR_PATH_ACTIVE);
	for (i = 0; i < 8; i++)
		dead += s->path[i].back_dead;
	assert_int_equal(dead, 6);
	free(s);
}

/* Responses through ports that are not the QP's paths change nothing. */
static void test_response_port_mapping(void **state)
{
	struct stellar_spray *s = malloc(sizeof(*s));
	u32 i;

	(void)state;
	assert_non_null(s);
	/* Path ports wrap around the top of the range. */
	stellar_spray_init(s, 4, 0xfffc, 0);
	assert_int_equal(stellar_spray_sport(s, 2), 0xc000);
	for (i = 0; i < 4; i++) {
		s->path[i].back_dead = true;
		s->path[i].state = STELLAR_PATH_FAILED;
	}
	stellar_spray_response(s, 0xc001, true, T0);
	stellar_spray_response(s, 0xc004, true, T0);
	stellar_spray_response(s, 4791, true, T0);
	for (i = 0; i < 4; i++)
		assert_true(s->path[i].back_dead);
	stellar_spray_response(s, 0xc000, false, T0);
	assert_false(s->path[2].back_dead);
	assert_int_equal(s->path[2].state, STELLAR_PATH_ACTIVE);
	assert_int_equal(s->path[2].back_seen_us, T0);
	assert_int_equal(stellar_spray_count_state(s, STELLAR_PATH_ACTIVE), 1);
	free(s);
}

/* Random events never produce an out-of-range path or a FAILED pick. */
static void test_random_events(void **state)
{
	struct stellar_spray *s = new_spray(16, 3);
	struct test_rng rng;
	u64 now = T0;
	u32 i, path;

	(void)state;
	test_rng_seed(&rng, 42);
	for (i = 0; i < 200000; i++) {
		now += test_rng_below(&rng, 50);
		path = test_rng_below(&rng, 16);
		switch (test_rng_below(&rng, 4)) {
		case 0:
			stellar_spray_lost(s, path, now);
			break;
		case 1:
			stellar_spray_acked(s, path, test_rng_below(&rng, 5000),
					    test_rng_below(&rng, 8) == 0, now);
			break;
		default:
			path = stellar_spray_pick(s, i, now);
			assert_true(path < 16);
			if (stellar_spray_count_state(s, STELLAR_PATH_ACTIVE))
				assert_int_not_equal(s->path[path].state,
						     STELLAR_PATH_FAILED);
			break;
		}
		/* A quarter of the paths always stays in use. */
		assert_true(stellar_spray_count_state(s, STELLAR_PATH_ACTIVE) >=
			    4);
	}
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_clamps),
		cmocka_unit_test(test_ports_distinct_in_range),
		cmocka_unit_test(test_sport_out_of_range_path),
		cmocka_unit_test(test_rotation_by_psn_and_shift),
		cmocka_unit_test(test_64_paths_all_used_evenly),
		cmocka_unit_test(test_single_path),
		cmocka_unit_test(test_weights_follow_rtt),
		cmocka_unit_test(test_rtt_smoothing),
		cmocka_unit_test(test_rtt_noise_ignored),
		cmocka_unit_test(test_ecn_halves_then_decays),
		cmocka_unit_test(test_congestion_level_bounded),
		cmocka_unit_test(test_loss_lowers_weight),
		cmocka_unit_test(test_weights_balance_uneven_hash),
		cmocka_unit_test(test_fails_after_few_losses),
		cmocka_unit_test(test_probe_after_retry_at),
		cmocka_unit_test(test_unanswered_probe_fails),
		cmocka_unit_test(test_probe_wait_bounded),
		cmocka_unit_test(test_last_paths_stay),
		cmocka_unit_test(test_all_failed_fallback),
		cmocka_unit_test(test_retx_avoids_lost_path),
		cmocka_unit_test(test_retx_probes_due_path),
		cmocka_unit_test(test_sent_counters),
		cmocka_unit_test(test_rto_from_rtt),
		cmocka_unit_test(test_path_rto),
		cmocka_unit_test(test_echoes_cover_every_path),
		cmocka_unit_test(test_dead_way_back_taken_out),
		cmocka_unit_test(test_echo_misses_need_evidence),
		cmocka_unit_test(test_echo_keeps_last_paths),
		cmocka_unit_test(test_response_port_mapping),
		cmocka_unit_test(test_random_events),
		cmocka_unit_test(test_queue_delay),
	};

	return cmocka_run_group_tests_name("spray", tests, NULL, NULL);
}
