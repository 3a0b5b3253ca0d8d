/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stellar-tool: PVDMA and eMTT statistics (STELLAR_ATTR_PVDMA_STATS,
 * STELLAR_ATTR_EMTT_STATS): decoding and output, no sockets.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_TOOL_MEM_H
#define STELLAR_TOOL_MEM_H

#include <stdbool.h>
#include <stdio.h>

#include "info.h"

struct nlattr;

int stellar_decode_mem_counters(struct nlattr *nest,
				struct stellar_counters *counters);
void stellar_print_pvdma(FILE *fp, const struct stellar_dev_info *info,
			 bool json);
void stellar_print_emtt(FILE *fp, const struct stellar_dev_info *info,
			bool json);

#endif /* STELLAR_TOOL_MEM_H */
