/* SPDX-License-Identifier: GPL-2.0 */
/*
 * virtio-stellar: per-device packet spray statistics.
 *
 * The out-of-order depth histogram is kept per device (fed by the
 * responder); the per-path figures are summed on demand over the QPs'
 * spray state (struct stellar_spray in each QP's transport) and the
 * counters retired from spray states that were reset or destroyed.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_SPRAY_DEV_H
#define STELLAR_SPRAY_DEV_H

#include <linux/atomic.h>
#include <linux/seqlock.h>
#include <linux/types.h>

#include "stellar-netlink.h"
#include "stellar_spray.h"

struct genl_info;
struct seq_file;
struct sk_buff;
struct stellar_dev;
struct stellar_qp;

/**
 * struct stellar_spray_dev_retired - counters of path i of QPs gone
 * @packets: packets sent
 * @bytes: payload bytes sent
 * @retransmits: of @packets, retransmissions
 * @losses: packets declared lost
 * @ecn_marks: congestion-marked acknowledgements
 * @back_failures: times a QP took the path out for its dead way back
 */
struct stellar_spray_dev_retired {
	atomic64_t packets;
	atomic64_t bytes;
	atomic64_t retransmits;
	atomic64_t losses;
	atomic64_t ecn_marks;
	atomic64_t back_failures;
};

/**
 * struct stellar_spray_dev_stats - spray statistics kept by a device
 * @ooo: out-of-order arrivals per depth bucket (STELLAR_SPRAY_OOO_BUCKETS)
 * @ooo_max: deepest out-of-order arrival seen
 * @retired_paths: highest path number in @retired with traffic, plus one
 * @retired: per path, the counters of spray states reset or destroyed
 * @retire_lock: a retirement moves counts from a QP into @retired under it;
 *	readers that overlapped one sum again (stellar_spray_dev.c)
 *
 * Zero at allocation but for @retire_lock (stellar_spray_dev_init()).
 */
struct stellar_spray_dev_stats {
	atomic64_t ooo[STELLAR_SPRAY_OOO_BUCKETS];
	atomic_t ooo_max;
	atomic_t retired_paths;
	seqlock_t retire_lock;		/* moving counts into @retired */
	struct stellar_spray_dev_retired retired[STELLAR_SPRAY_MAX_PATHS];
};

/* Bytes a STELLAR_CMD_GET_SPRAY reply may need. */
#define STELLAR_SPRAY_MSG_SIZE		32768

/* Spray totals of a device (stellar_spray_dev_totals()), for hw counters. */
enum stellar_hw_spray {
	STELLAR_HW_SPRAY_QPS,		/* QPs with spray state */
	STELLAR_HW_SPRAY_PACKETS,	/* packets sent, all paths */
	STELLAR_HW_SPRAY_BYTES,		/* payload bytes sent, all paths */
	STELLAR_HW_SPRAY_RETRANSMITS,	/* of them, retransmissions */
	STELLAR_HW_SPRAY_LOSSES,	/* packets declared lost */
	STELLAR_HW_SPRAY_ECN_MARKS,	/* congestion-marked ACKs */
	STELLAR_HW_SPRAY_PATHS_FAILED,	/* paths of all QPs taken out now */
	STELLAR_HW_SPRAY_PATHS_PROBING,	/* paths of all QPs probed now */
	STELLAR_HW_SPRAY_OOO_MAX,	/* deepest out-of-order arrival */
	STELLAR_HW_SPRAY_BACK_FAILURES,	/* paths taken out: way back dead */
	__STELLAR_HW_SPRAY_MAX,
};

int stellar_spray_dev_totals(struct stellar_dev *sdev, u64 *totals);

/* Set up a new device's statistics. */
void stellar_spray_dev_init(struct stellar_spray_dev_stats *st);

/* The responder received a packet @depth PSNs ahead of the expected one. */
void stellar_spray_dev_ooo(struct stellar_dev *sdev, u32 depth);

/*
 * Move the counters of a QP's spray state into the device's totals (and
 * zero them there), so that /proc/stellar/spray_stats keeps them: for the
 * transport, before it re-initializes a used spray state and when the QP
 * is destroyed.  Caller holds what protects @s (the QP's req_mutex).
 */
void stellar_spray_dev_retire(struct stellar_dev *sdev,
			      struct stellar_spray *s);

/*
 * Paths a QP sprays over: its own setting (STELLAR_CMD_SET_QP) if it has
 * one, else its device's, at most STELLAR_SPRAY_MAX_PATHS.  For the
 * transport, when it (re)initializes the QP's spray state.
 */
u32 stellar_qp_spray_paths(struct stellar_qp *qp);

/* /proc/stellar/spray_stats */
int stellar_spray_dev_proc_show(struct seq_file *m, void *v);

/* Netlink: fill a STELLAR_CMD_GET_SPRAY reply; apply STELLAR_CMD_SET_QP. */
int stellar_spray_dev_fill(struct sk_buff *skb, struct stellar_dev *sdev);
int stellar_spray_dev_set_qp(struct stellar_dev *sdev, struct genl_info *info);

#endif /* STELLAR_SPRAY_DEV_H */
