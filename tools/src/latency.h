/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stellar-tool: latency telemetry (STELLAR_CMD_GET_LATENCY) decoded, and
 * its text and JSON output.  No socket here: the unit tests link it.
 * Percentiles come from kernel/stellar_lat_hist.c, the code the kernel
 * buckets with.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_TOOL_LATENCY_H
#define STELLAR_TOOL_LATENCY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <stellar-netlink.h>

#include "info.h"

struct nl_msg;

struct stellar_lat_seg_info {
	uint64_t count;
	uint64_t sum_ns;
	uint64_t bucket[STELLAR_LAT_BUCKETS];
};

struct stellar_burst_info {
	uint32_t path;
	uint32_t max_us;
	uint64_t count;
	uint64_t last_ns;	/* CLOCK_MONOTONIC */
};

#define STELLAR_TOOL_MAX_BURST_PATHS	64

struct stellar_lat_info {
	char dev_name[STELLAR_NAME_LEN];
	bool enabled;
	bool has_qpn;
	uint32_t qpn;
	uint32_t burst_us;
	struct stellar_lat_seg_info seg[__STELLAR_LAT_SEG_MAX];
	uint32_t nr_bursts;
	struct stellar_burst_info burst[STELLAR_TOOL_MAX_BURST_PATHS];
	uint32_t nr_paths;	/* paths with RTT samples */
	uint32_t path_index[STELLAR_TOOL_MAX_BURST_PATHS];
	struct stellar_lat_seg_info path_rtt[STELLAR_TOOL_MAX_BURST_PATHS];
	/* A device's requester segments per message-size class. */
	bool has_size;
	struct stellar_lat_seg_info size[__STELLAR_LAT_SEG_MAX]
					[__STELLAR_LAT_SIZE_MAX];
};

/* "queue", "network", ...; "?" for an unknown number. */
const char *stellar_lat_seg_name(unsigned int seg);
/* "256B", "4KiB", ...; "?" for an unknown number. */
const char *stellar_lat_size_name(unsigned int class);

int stellar_decode_latency(struct nl_msg *msg, struct stellar_lat_info *info);

/* Percentile @ppm (parts per million) of a segment, in ns (0: empty). */
uint64_t stellar_lat_seg_percentile(const struct stellar_lat_seg_info *seg,
				    uint32_t ppm);
/* @cur minus @prev, bucket by bucket (a restarted counter: @cur). */
void stellar_lat_seg_delta(const struct stellar_lat_seg_info *prev,
			   const struct stellar_lat_seg_info *cur,
			   struct stellar_lat_seg_info *out);
/* "950ns", "12.3us", "4.56ms", "1.20s" into @buf. */
void stellar_format_ns(uint64_t ns, char *buf, size_t len);

/* @now_ns: CLOCK_MONOTONIC now, for "ago" of microbursts. */
void stellar_print_latency(FILE *fp, const struct stellar_lat_info *info,
			   uint64_t now_ns, bool json);

/* latency_query.c: the request (needs a socket). */
struct stellar_nl;
struct stellar_nl_status;
int stellar_query_latency(struct stellar_nl *nl, const char *dev_name,
			  const uint32_t *qpn, struct stellar_lat_info *info,
			  struct stellar_nl_status *status);

#endif /* STELLAR_TOOL_LATENCY_H */
