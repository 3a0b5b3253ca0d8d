// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: per-device limits (stellar_limits.h).
 *
 * Object limits: QPs, MRs and pinned bytes are counted per device and a
 * creation (or a PVDMA pin) beyond the device's limit fails with -ENOMEM,
 * as one beyond the module's fixed limits does.  Lowering a limit below
 * what is in use takes nothing away; only new objects are refused.
 *
 * Rate limit: every packet the device sends is charged to two token
 * buckets, bytes and packets (stellar_tx_xmit()).  The senders that make
 * traffic on their own - the requester and the responder's READ and
 * atomic responses - ask stellar_rate_hold() before each packet; when a
 * bucket is empty the sender stops, its QP is put on a waiting list and a
 * device timer set for when the buckets hold tokens again queues the
 * sender's work once more.  Nothing is dropped and nobody spins.  ACKs,
 * NAKs and retransmissions the completer sends in reply to an ACK are
 * charged but never held back: holding them would make the peer time out
 * and resend more; their bytes are paid back by the next new packets.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <linux/jiffies.h>
#include <linux/ktime.h>

#include "stellar.h"
#include "stellar_transport.h"
#include "stellar_xport.h"

static struct stellar_dev *stellar_lim_dev(struct stellar_limits *lim)
{
	return container_of(lim, struct stellar_dev, limits);
}

/* Queue the work of every waiting sender again. */
static void stellar_rate_kick(struct work_struct *work)
{
	struct stellar_limits *lim = container_of(work, struct stellar_limits,
						  kick);
	struct stellar_dev *sdev = stellar_lim_dev(lim);
	struct stellar_qp *qp;
	unsigned long qpn;
	void *entry;
	int who;

	for (who = 0; who < __STELLAR_RATE_SENDERS; who++) {
		xa_for_each(&lim->waiters[who], qpn, entry) {
			xa_erase(&lim->waiters[who], qpn);
			qp = stellar_qp_get(sdev, qpn);
			if (!qp)
				continue;
			if (who == STELLAR_RATE_REQ)
				stellar_xport_kick(qp);
			else if (qp->xport)
				stellar_xport_queue(qp->xport,
						    &qp->xport->resp_work);
			stellar_qp_put(qp);
		}
	}
}

static void stellar_rate_timer(struct timer_list *t)
{
	struct stellar_limits *lim = from_timer(lim, t, timer);

	queue_work(system_wq, &lim->kick);
}

/**
 * stellar_limits_init() - a new device: no limits
 * @lim: the device's limits
 */
void stellar_limits_init(struct stellar_limits *lim)
{
	int who;

	memset(lim, 0, sizeof(*lim));
	mutex_init(&lim->set_lock);
	spin_lock_init(&lim->lock);
	for (who = 0; who < __STELLAR_RATE_SENDERS; who++)
		xa_init(&lim->waiters[who]);
	timer_setup(&lim->timer, stellar_rate_timer, 0);
	INIT_WORK(&lim->kick, stellar_rate_kick);
}

/**
 * stellar_limits_fini() - the device goes: every QP and MR is gone
 * @lim: the device's limits
 */
void stellar_limits_fini(struct stellar_limits *lim)
{
	int who;

	del_timer_sync(&lim->timer);
	cancel_work_sync(&lim->kick);
	for (who = 0; who < __STELLAR_RATE_SENDERS; who++)
		xa_destroy(&lim->waiters[who]);
	mutex_destroy(&lim->set_lock);
}

/*
 * The RDMA core answers the legacy query_device command, and its own
 * users, from the attributes it cached at registration: keep the ones
 * the limits change up to date there too.
 */
static void stellar_limits_update_attrs(struct stellar_dev *sdev)
{
	struct ib_device_attr *attrs = &sdev->ibdev.attrs;
	u32 max_qp = stellar_limit_max_qp(sdev);

	WRITE_ONCE(attrs->max_qp, max_qp);
	WRITE_ONCE(attrs->max_mr, stellar_limit_max_mr(sdev));
	WRITE_ONCE(attrs->max_res_rd_atom, STELLAR_MAX_RD_ATOM * max_qp);
}

/**
 * stellar_limits_apply() - change a device's limits
 * @sdev: the device
 * @set: the new values (0: no limit)
 * @mask: STELLAR_LIMIT_* bits: which fields of @set to take
 *
 * New rates start with full buckets; senders waiting for the old ones
 * try again at once.  query_device reports the new max_qp and max_mr.
 */
void stellar_limits_apply(struct stellar_dev *sdev,
			  const struct stellar_limit_set *set, u32 mask)
{
	struct stellar_limits *lim = &sdev->limits;
	struct stellar_limit_set *cur = &lim->set;
	u64 now = ktime_get_ns();

	mutex_lock(&lim->set_lock);
	if (mask & STELLAR_LIMIT_RATE_BYTES)
		WRITE_ONCE(cur->rate_bytes, set->rate_bytes);
	if (mask & STELLAR_LIMIT_RATE_PKTS)
		WRITE_ONCE(cur->rate_pkts, set->rate_pkts);
	if (mask & STELLAR_LIMIT_MAX_QP)
		WRITE_ONCE(cur->max_qp, set->max_qp);
	if (mask & STELLAR_LIMIT_MAX_MR)
		WRITE_ONCE(cur->max_mr, set->max_mr);
	if (mask & STELLAR_LIMIT_MAX_PINNED)
		WRITE_ONCE(cur->max_pinned, set->max_pinned);
	spin_lock_bh(&lim->lock);
	stellar_tbf_init(&lim->bytes, cur->rate_bytes,
			 STELLAR_RATE_MIN_BURST_BYTES, now);
	stellar_tbf_init(&lim->pkts, cur->rate_pkts,
			 STELLAR_RATE_MIN_BURST_PKTS, now);
	WRITE_ONCE(lim->limited, cur->rate_bytes || cur->rate_pkts);
	spin_unlock_bh(&lim->lock);
	stellar_limits_update_attrs(sdev);
	mutex_unlock(&lim->set_lock);
	queue_work(system_wq, &lim->kick);
}

/* Return: the QPs the device allows (what query_device reports). */
u32 stellar_limit_max_qp(struct stellar_dev *sdev)
{
	u32 max = READ_ONCE(sdev->limits.set.max_qp);

	return max && max < STELLAR_MAX_QP ? max : STELLAR_MAX_QP;
}

/* Return: the MRs the device allows (what query_device reports). */
u32 stellar_limit_max_mr(struct stellar_dev *sdev)
{
	u32 max = READ_ONCE(sdev->limits.set.max_mr);

	return max && max < STELLAR_MAX_MR ? max : STELLAR_MAX_MR;
}

/* Count one more object unless @max exist (or more, after lowering it). */
static int stellar_limit_get(struct stellar_dev *sdev, atomic_t *count,
			     u32 max)
{
	int old = atomic_read(count);

	do {
		if (old >= (int)max) {
			stellar_count(sdev, STELLAR_STAT_LIMIT_REFUSED, 1);
			return -ENOMEM;
		}
	} while (!atomic_try_cmpxchg(count, &old, old + 1));
	return 0;
}

/**
 * stellar_limit_qp_get() - count a new QP against the device's max_qp
 * @sdev: the device
 *
 * Return: 0, or -ENOMEM if the device has as many QPs as it allows.
 */
int stellar_limit_qp_get(struct stellar_dev *sdev)
{
	return stellar_limit_get(sdev, &sdev->limits.num_qps,
				 stellar_limit_max_qp(sdev));
}

void stellar_limit_qp_put(struct stellar_dev *sdev)
{
	atomic_dec(&sdev->limits.num_qps);
}

/**
 * stellar_limit_mr_get() - count a new MR against the device's max_mr
 * @sdev: the device
 *
 * Return: 0, or -ENOMEM if the device has as many MRs as it allows.
 */
int stellar_limit_mr_get(struct stellar_dev *sdev)
{
	return stellar_limit_get(sdev, &sdev->limits.num_mrs,
				 stellar_limit_max_mr(sdev));
}

void stellar_limit_mr_put(struct stellar_dev *sdev)
{
	atomic_dec(&sdev->limits.num_mrs);
}

/**
 * stellar_limit_pin() - count memory about to be pinned for the device
 * @sdev: the device
 * @bytes: how much
 *
 * Return: 0, or -ENOMEM if it would take the device beyond max_pinned.
 */
int stellar_limit_pin(struct stellar_dev *sdev, u64 bytes)
{
	struct stellar_limits *lim = &sdev->limits;
	u64 max = READ_ONCE(lim->set.max_pinned);
	s64 old = atomic64_read(&lim->pinned);

	do {
		if (max && (u64)old + bytes > max) {
			stellar_count(sdev, STELLAR_STAT_LIMIT_REFUSED, 1);
			return -ENOMEM;
		}
	} while (!atomic64_try_cmpxchg(&lim->pinned, &old, old + bytes));
	return 0;
}

void stellar_limit_unpin(struct stellar_dev *sdev, u64 bytes)
{
	atomic64_sub(bytes, &sdev->limits.pinned);
}

void __stellar_rate_charge(struct stellar_limits *lim, u32 len)
{
	u64 now = ktime_get_ns();

	spin_lock_bh(&lim->lock);
	stellar_tbf_refill(&lim->bytes, now);
	stellar_tbf_refill(&lim->pkts, now);
	stellar_tbf_charge(&lim->bytes, len);
	stellar_tbf_charge(&lim->pkts, 1);
	spin_unlock_bh(&lim->lock);
}

/* Nanoseconds until both buckets hold a token; 0: now. */
static u64 stellar_rate_wait_ns(struct stellar_limits *lim)
{
	u64 now = ktime_get_ns();
	u64 wait;

	spin_lock_bh(&lim->lock);
	stellar_tbf_refill(&lim->bytes, now);
	stellar_tbf_refill(&lim->pkts, now);
	wait = max(stellar_tbf_wait_ns(&lim->bytes),
		   stellar_tbf_wait_ns(&lim->pkts));
	spin_unlock_bh(&lim->lock);
	return wait;
}

bool __stellar_rate_hold(struct stellar_limits *lim, u32 qpn,
			 enum stellar_rate_sender who)
{
	u64 wait = stellar_rate_wait_ns(lim);

	if (!wait)
		return false;
	/* Without memory for the list entry, send: over the limit, briefly. */
	if (xa_err(xa_store(&lim->waiters[who], qpn, xa_mk_value(1),
			    GFP_NOWAIT | __GFP_NOWARN)))
		return false;
	stellar_count(stellar_lim_dev(lim), STELLAR_STAT_TX_THROTTLED, 1);
	/* On the list first: a timer that fired meanwhile is set again. */
	timer_reduce(&lim->timer, jiffies + nsecs_to_jiffies(wait) + 1);
	return true;
}
