// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: DCQCN-style rate control of a QP's requester (see
 * stellar_cc.h).  Portable: also compiled into the unit tests
 * (tests/unit/test_cc.c).
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include "stellar_cc.h"

/* Alpha periods one stellar_cc_tick() decays by; beyond them: 0. */
#define STELLAR_CC_MAX_ALPHA_STEPS	64
/* Byte stages one stellar_cc_sent() gives at most. */
#define STELLAR_CC_MAX_BYTE_STAGES	64

/**
 * stellar_cc_init() - start a QP at the line rate
 * @cc: the state
 * @p: the device's parameters
 * @now_us: the current time
 */
void stellar_cc_init(struct stellar_cc *cc, const struct stellar_cc_params *p,
		     u64 now_us)
{
	memset(cc, 0, sizeof(*cc));
	cc->rate_kbps = p->max_rate_kbps;
	cc->target_kbps = p->max_rate_kbps;
	cc->alpha = STELLAR_CC_ALPHA_ONE;
	cc->rate_stamp_us = now_us;
	cc->alpha_stamp_us = now_us;
}

static u32 stellar_cc_clamp(const struct stellar_cc_params *p, u64 kbps)
{
	if (kbps > p->max_rate_kbps)
		return p->max_rate_kbps;
	if (kbps < p->min_rate_kbps)
		return p->min_rate_kbps;
	return (u32)kbps;
}

/**
 * stellar_cc_cnp() - a CNP arrived: cut the rate
 * @cc: the state
 * @p: the device's parameters
 * @hold_us: no second cut within this long of the last one
 * @now_us: the current time
 *
 * Return: true if the rate was cut.
 */
bool stellar_cc_cnp(struct stellar_cc *cc, const struct stellar_cc_params *p,
		    u32 hold_us, u64 now_us)
{
	u64 cut;

	if (cc->cuts && now_us >= cc->cut_us && now_us - cc->cut_us < hold_us)
		return false;
	cc->alpha = cc->alpha - (cc->alpha >> p->g_shift) +
		    (STELLAR_CC_ALPHA_ONE >> p->g_shift);
	if (cc->alpha > STELLAR_CC_ALPHA_ONE)
		cc->alpha = STELLAR_CC_ALPHA_ONE;
	cc->target_kbps = cc->rate_kbps;
	cut = (u64)cc->rate_kbps * cc->alpha / (2 * STELLAR_CC_ALPHA_ONE);
	cc->rate_kbps = stellar_cc_clamp(p, cc->rate_kbps - cut);
	cc->timer_stages = 0;
	cc->byte_stages = 0;
	cc->bytes = 0;
	cc->rate_stamp_us = now_us;
	cc->alpha_stamp_us = now_us;
	cc->cut_us = now_us;
	cc->cuts++;
	return true;
}

/*
 * One recovery stage, counted in @count (the timer's or the byte counter's):
 * move the target up, the rate halfway to it (rounded up, so that it
 * reaches the target).
 */
static void stellar_cc_stage(struct stellar_cc *cc,
			     const struct stellar_cc_params *p, u32 *count)
{
	u32 fast = p->fast_stages;
	u32 lo, hi;
	u64 target = cc->target_kbps;
	u32 old = cc->rate_kbps;

	if (*count < U32_MAX)
		(*count)++;
	lo = cc->timer_stages;
	hi = cc->byte_stages;
	if (lo > hi) {
		hi = lo;
		lo = cc->byte_stages;
	}
	if (lo > fast)
		target += (u64)p->hai_rate_kbps * (lo - fast);
	else if (hi >= fast)
		target += p->ai_rate_kbps;
	cc->target_kbps = stellar_cc_clamp(p, target);
	cc->rate_kbps = stellar_cc_clamp(p, ((u64)cc->target_kbps +
					     cc->rate_kbps + 1) / 2);
	if (cc->rate_kbps != old)
		cc->increases++;
}

static u64 stellar_cc_period(u32 period_us, u32 floor_us)
{
	u32 period = period_us > floor_us ? period_us : floor_us;

	return period ? period : 1;
}

/* Whole periods from @stamp to @now (0 if @now is earlier). */
static u64 stellar_cc_periods(u64 stamp, u64 now, u64 period)
{
	if (now <= stamp || now - stamp < period)
		return 0;
	return stellar_mul_div(now - stamp, 1, period);
}

static void stellar_cc_decay_alpha(struct stellar_cc *cc,
				   const struct stellar_cc_params *p,
				   u32 floor_us, u64 now_us)
{
	u64 period = stellar_cc_period(p->alpha_period_us, floor_us);
	u64 k = stellar_cc_periods(cc->alpha_stamp_us, now_us, period);
	u64 n;

	if (!k)
		return;
	cc->alpha_stamp_us += k * period;
	/* Idle for long: the QP has forgotten its marks. */
	if (k > STELLAR_CC_MAX_ALPHA_STEPS) {
		cc->alpha = 0;
		return;
	}
	for (n = 0; n < k && cc->alpha; n++)
		cc->alpha -= cc->alpha >> p->g_shift;
}

/**
 * stellar_cc_tick() - apply the alpha and rate timers that expired
 * @cc: the state
 * @p: the device's parameters
 * @floor_us: the least length of a period (the QP's smoothed RTT)
 * @now_us: the current time; earlier than the last call: nothing happens
 */
void stellar_cc_tick(struct stellar_cc *cc, const struct stellar_cc_params *p,
		     u32 floor_us, u64 now_us)
{
	u64 period = stellar_cc_period(p->rate_period_us, floor_us);
	u64 k, n;

	stellar_cc_decay_alpha(cc, p, floor_us, now_us);
	k = stellar_cc_periods(cc->rate_stamp_us, now_us, period);
	if (!k)
		return;
	/* Whole periods only: the fraction counts towards the next one. */
	cc->rate_stamp_us += k * period;
	if (k > STELLAR_CC_MAX_TICK_STAGES)
		k = STELLAR_CC_MAX_TICK_STAGES;
	for (n = 0; n < k; n++)
		stellar_cc_stage(cc, p, &cc->timer_stages);
}

/**
 * stellar_cc_sent() - count bytes sent towards the byte-counter stages
 * @cc: the state
 * @p: the device's parameters (byte_stage 0: no byte counter)
 * @bytes: bytes just sent
 */
void stellar_cc_sent(struct stellar_cc *cc, const struct stellar_cc_params *p,
		     u32 bytes)
{
	u64 total = (u64)cc->bytes + bytes;
	u32 n = 0;

	if (!p->byte_stage)
		return;
	while (total >= p->byte_stage && n < STELLAR_CC_MAX_BYTE_STAGES) {
		total -= p->byte_stage;
		stellar_cc_stage(cc, p, &cc->byte_stages);
		n++;
	}
	cc->bytes = total < p->byte_stage ? (u32)total : 0;
}
