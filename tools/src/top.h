/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stellar-tool top: one reading of every device (counters, latency,
 * spray paths, QPs) and the rendering of a screen from two readings.
 * No socket here: the unit tests link it; cmd_top.c reads and loops.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_TOOL_TOP_H
#define STELLAR_TOOL_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "info.h"
#include "latency.h"
#include "spray.h"

/* QPs and devices one screen shows at most. */
#define STELLAR_TOP_MAX_QPS	32
#define STELLAR_TOP_MAX_DEVS	8

struct stellar_top_qp {
	uint32_t qpn;
	uint8_t type;		/* enum ib_qp_type */
	uint8_t state;		/* enum ib_qp_state */
	uint64_t tx_bytes;
	uint64_t rx_bytes;
	uint64_t retransmits;
};

struct stellar_top_dev {
	char name[STELLAR_NAME_LEN];
	char netdev[STELLAR_NAME_LEN];
	uint64_t tx_bytes, rx_bytes, tx_packets, rx_packets, retransmits;
	bool has_lat;
	struct stellar_lat_info lat;
	bool has_spray;
	struct stellar_spray_info spray;
	int qp_error;		/* 0, or the errno of the QP dump (EPERM) */
	size_t nr_qps;
	size_t qps_total;	/* QPs the device has (beyond the table too) */
	struct stellar_top_qp qps[STELLAR_TOP_MAX_QPS];
};

struct stellar_top_frame {
	uint64_t at_ns;		/* CLOCK_MONOTONIC of the reading */
	size_t nr_devs;
	struct stellar_top_dev devs[STELLAR_TOP_MAX_DEVS];
};

/* The counters of a GET_DEV reply that top shows. */
void stellar_top_dev_counters(struct stellar_top_dev *dev,
			      const struct stellar_dev_info *info);
/* Add one GET_QP dump message to @dev; -EBADMSG if malformed. */
int stellar_top_add_qp(struct stellar_top_dev *dev, struct nl_msg *msg);

/**
 * stellar_top_render() - one screen
 * @fp: where to
 * @prev: the previous reading, or NULL (rates are shown as "-")
 * @cur: this reading
 * @frame: frame number from 1, for the header
 * @clock: wall clock text for the header ("12:00:00")
 */
void stellar_top_render(FILE *fp, const struct stellar_top_frame *prev,
			const struct stellar_top_frame *cur, unsigned int frame,
			const char *clock);

#endif /* STELLAR_TOOL_TOP_H */
