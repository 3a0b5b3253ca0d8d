// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: packet spray path choice.
 *
 * Paths are chosen by smooth weighted round robin: every pick adds each
 * usable path's weight to its credit and takes the path with the most
 * credit, which then pays the sum of the weights.  The scan starts at
 * (PSN + per-QP shift), so with equal weights the choice is a plain
 * rotation keyed by PSN.  Weights follow what acknowledgements and losses
 * say of a path: a path clearly slower than the fastest one (by more than
 * a quarter) gets a proportionally smaller share, every level of
 * congestion (ECN marks, losses; at most one level per RTT, decaying after
 * a few clean RTTs) halves it, and STELLAR_SPRAY_FAIL_LOSSES losses in a
 * row take the path out, except the last quarter of the paths.  A failed
 * path carries a single probe packet after an exponentially growing wait;
 * an acknowledgement brings it back.  Echoes (stellar_spray_want_echo())
 * find paths whose way back is dead; those come back by an echo only.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include "stellar_spray.h"

/* A congestion level decays after this many clean RTTs... */
#define STELLAR_SPRAY_DECAY_RTTS	8
/* ...but not faster than this. */
#define STELLAR_SPRAY_DECAY_MIN_US	1000
/* RTTs within 1 + 1/this of the fastest path's count as equal. */
#define STELLAR_SPRAY_RTT_SLACK_DIV	4
/* Failures in a row that still double the probe wait. */
#define STELLAR_SPRAY_BACKOFF_MAX	10

static u32 spray_min(u32 a, u32 b)
{
	return a < b ? a : b;
}

static u32 spray_max(u32 a, u32 b)
{
	return a > b ? a : b;
}

static bool spray_is_active(const struct stellar_spray_path *p)
{
	return p->state == STELLAR_PATH_ACTIVE;
}

/* A path joined or left the rotation: start the weighted rotation over. */
static void spray_reset_credits(struct stellar_spray *s)
{
	memset(s->credit, 0, sizeof(s->credit));
}

void stellar_spray_init(struct stellar_spray *s, u32 nr_paths, u16 base_sport,
			u32 shift)
{
	u32 i;

	memset(s, 0, sizeof(*s));
	nr_paths = spray_max(nr_paths, 1);
	nr_paths = spray_min(nr_paths, STELLAR_SPRAY_MAX_PATHS);
	s->nr_paths = nr_paths;
	s->shift = shift;
	for (i = 0; i < nr_paths; i++) {
		struct stellar_spray_path *p = &s->path[i];

		p->sport = stellar_spray_path_port(base_sport, i);
		p->state = STELLAR_PATH_ACTIVE;
		p->weight = STELLAR_SPRAY_WEIGHT_MAX;
	}
}

/* Smallest smoothed RTT of the active paths, 0 if none is measured. */
static u32 spray_min_srtt(const struct stellar_spray *s)
{
	u32 best = 0, i;

	for (i = 0; i < s->nr_paths; i++) {
		const struct stellar_spray_path *p = &s->path[i];

		if (spray_is_active(p) && p->srtt_us &&
		    (!best || p->srtt_us < best))
			best = p->srtt_us;
	}
	return best;
}

/*
 * Full weight up to STELLAR_SPRAY_RTT_SLACK times the fastest path's RTT
 * (so that RTT noise does not skew equal paths), inversely proportional
 * to the RTT beyond that; halved per congestion level.
 */
static u8 spray_weight(const struct stellar_spray_path *p, u32 min_srtt)
{
	u32 weight = STELLAR_SPRAY_WEIGHT_MAX;
	u32 slack = min_srtt + min_srtt / STELLAR_SPRAY_RTT_SLACK_DIV;

	if (!spray_is_active(p))
		return 0;
	if (min_srtt && p->srtt_us > slack)
		weight = (weight * slack + p->srtt_us / 2) / p->srtt_us;
	weight >>= p->cong_level;
	return spray_max(weight, 1);
}

static void spray_reweight(struct stellar_spray *s)
{
	u32 min_srtt = spray_min_srtt(s), i;

	for (i = 0; i < s->nr_paths; i++)
		s->path[i].weight = spray_weight(&s->path[i], min_srtt);
}

/*
 * The weighted rotation over the active paths other than @exclude,
 * starting the scan at (@psn + shift).  Returns nr_paths if none is left.
 */
static u32 spray_choose(struct stellar_spray *s, u32 psn, u32 exclude)
{
	u32 n = s->nr_paths, idx = (psn + s->shift) % n, best = n;
	s32 total = 0;
	u32 i;

	for (i = 0; i < n; i++, idx = idx + 1 < n ? idx + 1 : 0) {
		const struct stellar_spray_path *p = &s->path[idx];

		if (idx == exclude || !spray_is_active(p) || !p->weight)
			continue;
		s->credit[idx] += p->weight;
		total += p->weight;
		if (best == n || s->credit[idx] > s->credit[best])
			best = idx;
	}
	if (best < n)
		s->credit[best] -= total;
	return best;
}

/* Wait before probing a path that failed @fail_count times in a row. */
static u64 spray_probe_wait(const struct stellar_spray_path *p)
{
	u64 wait = spray_max(STELLAR_SPRAY_PROBE_MIN_US, 4 * p->srtt_us);

	wait <<= spray_min(p->fail_count, STELLAR_SPRAY_BACKOFF_MAX);
	return wait < STELLAR_SPRAY_PROBE_MAX_US ? wait :
	       STELLAR_SPRAY_PROBE_MAX_US;
}

static void spray_fail(struct stellar_spray *s, struct stellar_spray_path *p,
		       u64 now_us)
{
	p->state = STELLAR_PATH_FAILED;
	p->failed_at_us = now_us;
	p->retry_at_us = now_us + spray_probe_wait(p);
	if (p->fail_count < U8_MAX)
		p->fail_count++;
	p->loss_run = 0;
	spray_reset_credits(s);
}

/*
 * Paths never taken out, a quarter of them (at least one): when that many
 * are left, losses on all of them say the trouble is not the paths (the
 * peer or this host stalls, or everything is congested), and they stay in
 * use at a lower weight.
 */
static u32 spray_keep_active(const struct stellar_spray *s)
{
	return spray_max(s->nr_paths / 4, 1);
}

/* A probe answered neither by an acknowledgement nor a loss is lost. */
static void spray_expire_probes(struct stellar_spray *s, u64 now_us)
{
	u32 i;

	for (i = 0; i < s->nr_paths; i++) {
		struct stellar_spray_path *p = &s->path[i];

		if (p->state == STELLAR_PATH_PROBING &&
		    p->retry_at_us <= now_us)
			spray_fail(s, p, now_us);
	}
}

/*
 * A failed path other than @exclude due for a probe becomes PROBING and
 * is returned.  Returns nr_paths if no probe is due.
 */
static u32 spray_due_probe(struct stellar_spray *s, u32 exclude, u64 now_us)
{
	u32 i;

	spray_expire_probes(s, now_us);
	for (i = 0; i < s->nr_paths; i++) {
		struct stellar_spray_path *p = &s->path[i];

		if (i != exclude && p->state == STELLAR_PATH_FAILED &&
		    p->retry_at_us <= now_us) {
			p->state = STELLAR_PATH_PROBING;
			p->retry_at_us = now_us + STELLAR_SPRAY_PROBE_MIN_US +
					 4ULL * p->srtt_us;
			return i;
		}
	}
	return s->nr_paths;
}

/* Every path failed: the one that failed longest ago, other than @avoid. */
static u32 spray_fallback(const struct stellar_spray *s, u32 avoid)
{
	u32 best = 0, i;
	bool found = false;

	for (i = 0; i < s->nr_paths; i++) {
		if (i == avoid && s->nr_paths > 1)
			continue;
		if (!found ||
		    s->path[i].failed_at_us < s->path[best].failed_at_us)
			best = i;
		found = true;
	}
	return best;
}

u32 stellar_spray_pick(struct stellar_spray *s, u32 psn, u64 now_us)
{
	u32 path;

	if (s->nr_paths <= 1)
		return 0;
	path = spray_due_probe(s, s->nr_paths, now_us);
	if (path < s->nr_paths)
		return path;
	path = spray_choose(s, psn, s->nr_paths);
	if (path < s->nr_paths)
		return path;
	return spray_fallback(s, s->nr_paths);
}

u32 stellar_spray_pick_retx(struct stellar_spray *s, u32 psn, u32 lost_path,
			    u64 now_us)
{
	u32 path;

	if (s->nr_paths <= 1)
		return 0;
	/*
	 * A resend probes too: a requester whose window is full sends
	 * nothing new, and the paths it kept may be those whose way back
	 * is dead, where every ACK is lost (a stall until they recover).
	 */
	path = spray_due_probe(s, lost_path, now_us);
	if (path < s->nr_paths)
		return path;
	path = spray_choose(s, psn, lost_path);
	if (path < s->nr_paths)
		return path;
	if (lost_path < s->nr_paths && spray_is_active(&s->path[lost_path]))
		return lost_path;
	return spray_fallback(s, lost_path);
}

u32 stellar_spray_count_state(const struct stellar_spray *s, u8 state)
{
	u32 count = 0, i;

	for (i = 0; i < s->nr_paths; i++)
		count += s->path[i].state == state;
	return count;
}

void stellar_spray_sent(struct stellar_spray *s, u32 path, u32 bytes,
			bool retx)
{
	struct stellar_spray_path *p;

	if (path >= s->nr_paths)
		return;
	p = &s->path[path];
	p->tx_packets++;
	p->tx_bytes += bytes;
	if (retx)
		p->retransmits++;
}

/* RFC 6298 smoothing of one RTT sample. */
static void spray_rtt_sample(struct stellar_spray_path *p, u32 rtt_us)
{
	u32 delta;

	rtt_us = spray_min(rtt_us, STELLAR_SPRAY_RTT_MAX_US);
	if (!p->srtt_us) {
		p->srtt_us = rtt_us;
		p->rttvar_us = rtt_us / 2;
		return;
	}
	delta = p->srtt_us > rtt_us ? p->srtt_us - rtt_us :
				      rtt_us - p->srtt_us;
	p->rttvar_us = (3 * p->rttvar_us + delta) / 4;
	p->srtt_us = spray_max((7 * p->srtt_us + rtt_us) / 8, 1);
}

/* Congestion on @p: one more level, at most once per RTT. */
static void spray_congested(struct stellar_spray_path *p, u64 now_us)
{
	if (p->cong_level >= STELLAR_SPRAY_CONG_MAX)
		return;
	if (p->cong_level && now_us - p->cong_at_us < p->srtt_us)
		return;
	p->cong_level++;
	p->cong_at_us = now_us;
}

/* A clean acknowledgement: a level goes after a few clean RTTs. */
static void spray_cong_decay(struct stellar_spray_path *p, u64 now_us)
{
	u64 period = spray_max(STELLAR_SPRAY_DECAY_RTTS * p->srtt_us,
			       STELLAR_SPRAY_DECAY_MIN_US);

	if (p->cong_level && now_us - p->cong_at_us >= period) {
		p->cong_level--;
		p->cong_at_us = now_us;
	}
}

/* A failed or probing path is usable again. */
static void spray_revive(struct stellar_spray *s, struct stellar_spray_path *p)
{
	p->state = STELLAR_PATH_ACTIVE;
	p->fail_count = 0;
	p->retry_at_us = 0;
	spray_reset_credits(s);
}

void stellar_spray_acked(struct stellar_spray *s, u32 path, u32 rtt_us,
			 bool ecn, u64 now_us)
{
	struct stellar_spray_path *p;

	if (path >= s->nr_paths)
		return;
	p = &s->path[path];
	p->loss_run = 0;
	if (rtt_us)
		spray_rtt_sample(p, rtt_us);
	/* Acknowledged through other ports says nothing of its way back. */
	if (!spray_is_active(p) && !p->back_dead)
		spray_revive(s, p);
	if (ecn) {
		p->ecn_marks++;
		spray_congested(p, now_us);
	} else {
		spray_cong_decay(p, now_us);
	}
	spray_reweight(s);
}

void stellar_spray_lost(struct stellar_spray *s, u32 path, u64 now_us)
{
	struct stellar_spray_path *p;

	if (path >= s->nr_paths)
		return;
	p = &s->path[path];
	p->losses++;
	if (p->state == STELLAR_PATH_PROBING) {
		spray_fail(s, p, now_us);
	} else if (spray_is_active(p)) {
		p->loss_run++;
		if (p->loss_run >= STELLAR_SPRAY_FAIL_LOSSES &&
		    stellar_spray_count_state(s, STELLAR_PATH_ACTIVE) >
		    spray_keep_active(s))
			spray_fail(s, p, now_us);
		else
			spray_congested(p, now_us);
	} else {
		/* Lost again while out (a fallback): others go first. */
		p->failed_at_us = now_us;
	}
	spray_reweight(s);
}

/* RFC 6298: srtt + 4 * rttvar. */
static u32 spray_path_rto(const struct stellar_spray_path *p)
{
	return p->srtt_us + 4 * p->rttvar_us;
}

/* Time between two echoes of a path that answers them. */
static u64 spray_echo_gap(const struct stellar_spray_path *p)
{
	return spray_max(2 * p->srtt_us, STELLAR_SPRAY_ECHO_MIN_US);
}

/* How long an echo may take before it counts as missed. */
static u64 spray_echo_wait(const struct stellar_spray_path *p)
{
	return spray_max(2 * spray_path_rto(p), 2 * STELLAR_SPRAY_ECHO_MIN_US);
}

/*
 * An echo of @p did not come back while another path's did: after a few
 * in a row its way back is dead, and it is taken out (but not the last
 * quarter of the paths).
 */
static void spray_echo_missed(struct stellar_spray *s,
			      struct stellar_spray_path *p, u64 now_us)
{
	if (++p->echo_misses < STELLAR_SPRAY_ECHO_MISSES ||
	    stellar_spray_count_state(s, STELLAR_PATH_ACTIVE) <=
	    spray_keep_active(s))
		return;
	p->echo_misses = 0;
	p->back_dead = true;
	p->back_failures++;
	spray_fail(s, p, now_us);
	spray_reweight(s);
}

/*
 * May @p, an active path, carry an echo now?  Not while its last one may
 * still come back; one that did not is counted as missed (which may take
 * @p out) and another may go.
 */
static bool spray_echo_due(struct stellar_spray *s,
			   struct stellar_spray_path *p, u64 now_us)
{
	u64 age = now_us - p->echo_sent_us;

	if (!p->echo_sent_us)
		return true;
	if (p->back_seen_us >= p->echo_sent_us)
		return age >= spray_echo_gap(p);
	if (age < spray_echo_wait(p))
		return false;
	if (s->echo_seen && s->echo_rcvd_us > p->echo_sent_us)
		spray_echo_missed(s, p, now_us);
	p->echo_sent_us = 0;
	return spray_is_active(p);
}

static bool spray_echo_sent(struct stellar_spray *s,
			    struct stellar_spray_path *p, u64 now_us)
{
	s->echo_credit = 0;
	p->echo_sent_us = now_us;
	return true;
}

bool stellar_spray_want_echo(struct stellar_spray *s, u32 path, u64 now_us)
{
	struct stellar_spray_path *p;

	if (s->nr_paths <= 1 || path >= s->nr_paths)
		return false;
	p = &s->path[path];
	if (s->echo_credit < U32_MAX)
		s->echo_credit++;
	if (p->state == STELLAR_PATH_PROBING)
		return spray_echo_sent(s, p, now_us);
	if (!spray_is_active(p) || !spray_echo_due(s, p, now_us) ||
	    s->echo_credit < STELLAR_SPRAY_ECHO_EVERY)
		return false;
	return spray_echo_sent(s, p, now_us);
}

/* The path whose port is @sport, or nr_paths. */
static u32 spray_path_of_port(const struct stellar_spray *s, u16 sport)
{
	u32 delta = (u32)(sport - s->path[0].sport) & STELLAR_SPRAY_PORT_MASK;
	u32 path = delta / STELLAR_SPRAY_PORT_STRIDE;

	if (path < s->nr_paths && s->path[path].sport == sport)
		return path;
	return s->nr_paths;
}

void stellar_spray_response(struct stellar_spray *s, u16 sport, bool echo,
			    u64 now_us)
{
	struct stellar_spray_path *p;
	u32 path;

	if (s->nr_paths <= 1)
		return;
	if (echo) {
		s->echo_seen = true;
		s->echo_rcvd_us = now_us;
	}
	path = spray_path_of_port(s, sport);
	if (path >= s->nr_paths)
		return;
	p = &s->path[path];
	p->back_seen_us = now_us;
	p->echo_misses = 0;
	if (p->back_dead) {
		p->back_dead = false;
		if (!spray_is_active(p)) {
			spray_revive(s, p);
			spray_reweight(s);
		}
	}
}

u32 stellar_spray_rto_us(const struct stellar_spray *s, u32 min_us,
			 u32 max_us)
{
	u32 rto = 0, i;

	for (i = 0; i < s->nr_paths; i++) {
		const struct stellar_spray_path *p = &s->path[i];

		if (spray_is_active(p) && p->srtt_us)
			rto = spray_max(rto, spray_path_rto(p));
	}
	if (!rto)
		return max_us;
	return spray_min(spray_max(rto, min_us), max_us);
}

u32 stellar_spray_path_rto_us(const struct stellar_spray *s, u32 path,
			      u32 min_us, u32 max_us)
{
	const struct stellar_spray_path *p;

	if (path >= s->nr_paths || !s->path[path].srtt_us)
		return stellar_spray_rto_us(s, min_us, max_us);
	p = &s->path[path];
	return spray_min(spray_max(spray_path_rto(p), min_us), max_us);
}

u32 stellar_spray_queue_delay_us(struct stellar_spray *s, u32 path,
				 u32 rtt_us, u64 now_us)
{
	struct stellar_spray_path *p;

	if (path >= s->nr_paths || !rtt_us)
		return 0;
	p = &s->path[path];
	rtt_us = spray_min(rtt_us, STELLAR_SPRAY_RTT_MAX_US);
	if (!p->min_rtt_us || rtt_us <= p->min_rtt_us ||
	    now_us - p->min_rtt_at_us > STELLAR_SPRAY_MIN_RTT_WIN_US) {
		p->min_rtt_us = rtt_us;
		p->min_rtt_at_us = now_us;
		return 0;
	}
	return rtt_us - p->min_rtt_us;
}
