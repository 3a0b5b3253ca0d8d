/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stellar-tool: text and JSON output of decoded replies.  Pure functions
 * of their arguments, written to a FILE so the unit tests can check them.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_TOOL_FORMAT_H
#define STELLAR_TOOL_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "info.h"

const char *stellar_format_port_state(unsigned int state, char *buf,
				      size_t len);
const char *stellar_format_stat_name(unsigned int stat, char *buf,
				     size_t len);
void stellar_json_string(FILE *fp, const char *text);

void stellar_print_settings(FILE *fp, const struct stellar_settings *settings,
			    bool json, const char *indent);
void stellar_print_counters(FILE *fp, const struct stellar_counters *counters,
			    bool json, const char *indent);
void stellar_print_dev(FILE *fp, const struct stellar_dev_info *info,
		       bool json);
void stellar_print_dev_list(FILE *fp, const struct stellar_dev_info *devs,
			    size_t count, bool json);

#endif /* STELLAR_TOOL_FORMAT_H */
