/* SPDX-License-Identifier: GPL-2.0 */
/*
 * virtio-stellar: per-device limits, what keeps one tenant (a device in
 * its own network namespace) from taking more than its share of the host:
 * a transmit rate limit in bytes and packets per second, and maximum QPs,
 * MRs and pinned memory.  Set by the host's administrator with stellar-tool
 * (Documentation/deployment.rst, "Tenants").
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_LIMITS_H
#define STELLAR_LIMITS_H

#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "stellar_tbf.h"

struct stellar_dev;

/*
 * Smallest bucket: a low rate still lets a 64 KiB message through at
 * once, and a sender that was not scheduled for some tens of ms (a busy
 * host) loses no tokens it was owed.
 */
#define STELLAR_RATE_MIN_BURST_BYTES	(64 << 10)
#define STELLAR_RATE_MIN_BURST_PKTS	64

/* Which of a QP's senders waits for tokens. */
enum stellar_rate_sender {
	STELLAR_RATE_REQ,	/* the requester (req_work) */
	STELLAR_RATE_RESP,	/* READ and atomic responses (resp_work) */
	__STELLAR_RATE_SENDERS,
};

/**
 * struct stellar_limit_set - limits as stellar-tool sets them, 0: none
 * @rate_bytes: bytes per second the device may send
 * @rate_pkts: packets per second the device may send
 * @max_qp: QPs (the GSI QP aside), at most STELLAR_MAX_QP
 * @max_mr: MRs, at most STELLAR_MAX_MR
 * @max_pinned: bytes of user memory PVDMA may hold pinned
 */
struct stellar_limit_set {
	u64 rate_bytes;
	u64 rate_pkts;
	u32 max_qp;
	u32 max_mr;
	u64 max_pinned;
};

/**
 * struct stellar_limits - a device's limits and what it uses of them
 * @set: the limits (written under @set_lock, read without it)
 * @set_lock: serialises changes of @set
 * @num_qps: QPs of the device, the GSI QP aside
 * @num_mrs: MRs of the device
 * @pinned: bytes PVDMA holds pinned for the device's MRs
 * @limited: a rate is set: the transmit path takes @lock
 * @lock: the buckets
 * @bytes: bytes bucket
 * @pkts: packets bucket
 * @waiters: per enum stellar_rate_sender, QPN to xa_mk_value(1): QPs
 *	whose sender waits for tokens
 * @timer: fires when the buckets hold tokens again
 * @kick: queues the waiting senders' work again (@timer, changes)
 */
struct stellar_limits {
	struct stellar_limit_set set;
	struct mutex set_lock;		/* changes of @set */
	atomic_t num_qps;
	atomic_t num_mrs;
	atomic64_t pinned;
	bool limited;
	spinlock_t lock;		/* @bytes, @pkts */
	struct stellar_tbf bytes;
	struct stellar_tbf pkts;
	struct xarray waiters[__STELLAR_RATE_SENDERS];
	struct timer_list timer;
	struct work_struct kick;
};

void stellar_limits_init(struct stellar_limits *lim);
void stellar_limits_fini(struct stellar_limits *lim);
void stellar_limits_apply(struct stellar_dev *sdev,
			  const struct stellar_limit_set *set, u32 mask);
u32 stellar_limit_max_qp(struct stellar_dev *sdev);
u32 stellar_limit_max_mr(struct stellar_dev *sdev);
int stellar_limit_qp_get(struct stellar_dev *sdev);
void stellar_limit_qp_put(struct stellar_dev *sdev);
int stellar_limit_mr_get(struct stellar_dev *sdev);
void stellar_limit_mr_put(struct stellar_dev *sdev);
int stellar_limit_pin(struct stellar_dev *sdev, u64 bytes);
void stellar_limit_unpin(struct stellar_dev *sdev, u64 bytes);

/* Bits of stellar_limits_apply()'s @mask: the fields of the set to take. */
#define STELLAR_LIMIT_RATE_BYTES	BIT(0)
#define STELLAR_LIMIT_RATE_PKTS		BIT(1)
#define STELLAR_LIMIT_MAX_QP		BIT(2)
#define STELLAR_LIMIT_MAX_MR		BIT(3)
#define STELLAR_LIMIT_MAX_PINNED	BIT(4)

void __stellar_rate_charge(struct stellar_limits *lim, u32 len);
bool __stellar_rate_hold(struct stellar_limits *lim, u32 qpn,
			 enum stellar_rate_sender who);

/**
 * stellar_rate_charge() - count a packet against the device's rate limit
 * @lim: the device's limits
 * @len: its bytes (from the BTH)
 *
 * Every packet the device sends is counted, responses and ACKs included;
 * only senders that stellar_rate_hold() asks wait.  Without a rate limit
 * this is one load.
 */
static inline void stellar_rate_charge(struct stellar_limits *lim, u32 len)
{
	if (unlikely(READ_ONCE(lim->limited)))
		__stellar_rate_charge(lim, len);
}

/**
 * stellar_rate_hold() - must a QP's sender wait for the rate limit
 * @lim: the device's limits
 * @qpn: the QP
 * @who: the sender, which stops sending if this returns true: its work is
 *	 queued again when the buckets hold tokens
 *
 * Context: process (the QP's work).  Without a rate limit this is one load.
 * Return: true if the sender must stop now.
 */
static inline bool stellar_rate_hold(struct stellar_limits *lim, u32 qpn,
				     enum stellar_rate_sender who)
{
	if (likely(!READ_ONCE(lim->limited)))
		return false;
	return __stellar_rate_hold(lim, qpn, who);
}

#endif /* STELLAR_LIMITS_H */
