/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stellar-tool: packet spray statistics (STELLAR_CMD_GET_SPRAY) decoded,
 * and their text and JSON output.  No socket here: the unit tests link it.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_TOOL_SPRAY_H
#define STELLAR_TOOL_SPRAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <stellar-netlink.h>

#include "info.h"

/* Paths the tool shows per device (the kernel's STELLAR_SPRAY_MAX_PATHS). */
#define STELLAR_TOOL_MAX_PATHS	64

struct nl_msg;

struct stellar_path_info {
	uint32_t index;
	uint32_t qps;		/* QPs that have the path */
	uint32_t active;	/* ... use it */
	uint32_t failed;	/* ... took it out */
	uint32_t probing;	/* ... probe it */
	uint32_t srtt_us;	/* mean smoothed RTT, 0 if none */
	uint32_t back_dead;	/* of failed + probing: way back dead */
	uint64_t packets;
	uint64_t bytes;
	uint64_t retransmits;
	uint64_t losses;
	uint64_t ecn_marks;
	uint64_t back_failures;	/* taken out for a dead way back */
};

struct stellar_spray_info {
	char dev_name[STELLAR_NAME_LEN];
	uint32_t spray_paths;	/* the device's setting */
	uint32_t qps;		/* QPs that spray */
	uint32_t ooo_max;
	uint64_t ooo[STELLAR_SPRAY_OOO_BUCKETS];
	uint32_t nr_paths;	/* entries of path[] filled */
	struct stellar_path_info path[STELLAR_TOOL_MAX_PATHS];
};

int stellar_decode_spray(struct nl_msg *msg, struct stellar_spray_info *info);
void stellar_ooo_label(unsigned int bucket, char *buf, size_t len);
const char *stellar_path_state(const struct stellar_path_info *path);

void stellar_print_spray(FILE *fp, const struct stellar_spray_info *info,
			 bool json);
void stellar_print_spray_list(FILE *fp, const struct stellar_spray_info *infos,
			      size_t count, bool json);
void stellar_print_ooo_frame(FILE *fp, const struct stellar_spray_info *prev,
			     const struct stellar_spray_info *cur,
			     unsigned int interval_ms, bool json);

/* spray_query.c: the requests (these need a socket). */
struct stellar_nl;
struct stellar_nl_status;
int stellar_query_spray(struct stellar_nl *nl, const char *dev_name,
			struct stellar_spray_info *info,
			struct stellar_nl_status *status);
int stellar_set_qp_spray(struct stellar_nl *nl, const char *dev_name,
			 uint32_t qpn, uint32_t spray_paths,
			 struct stellar_nl_status *status);

#endif /* STELLAR_TOOL_SPRAY_H */
