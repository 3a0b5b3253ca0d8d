/* SPDX-License-Identifier: GPL-2.0 */
/*
 * virtio-stellar: per-device packet spray statistics.
 *
 * The out-of-order depth histogram is kept per device (fed by the
 * responder); the per-path figures are summed on demand over the QPs'
 * spray state (struct stellar_spray in each QP's transport).
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_SPRAY_DEV_H
#define STELLAR_SPRAY_DEV_H

#include <linux/atomic.h>
#include <linux/types.h>

#include "stellar-netlink.h"

struct genl_info;
struct seq_file;
struct sk_buff;
struct stellar_dev;
struct stellar_qp;

/**
 * struct stellar_spray_dev_stats - spray statistics kept by a device
 * @ooo: out-of-order arrivals per depth bucket (STELLAR_SPRAY_OOO_BUCKETS)
 * @ooo_max: deepest out-of-order arrival seen
 */
struct stellar_spray_dev_stats {
	atomic64_t ooo[STELLAR_SPRAY_OOO_BUCKETS];
	atomic_t ooo_max;
};

/* Bytes a STELLAR_CMD_GET_SPRAY reply may need. */
#define STELLAR_SPRAY_MSG_SIZE		32768

/* The responder received a packet @depth PSNs ahead of the expected one. */
void stellar_spray_dev_ooo(struct stellar_dev *sdev, u32 depth);

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
