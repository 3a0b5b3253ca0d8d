/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stellar-tool: the command table.  A new command is a file defining one
 * struct stellar_command plus a line in main.c's table.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_TOOL_COMMANDS_H
#define STELLAR_TOOL_COMMANDS_H

#include "cli.h"

struct stellar_command {
	const char *name;
	const char *synopsis;	/* what follows the name in usage */
	const char *summary;	/* one line for --help */
	unsigned int accepted;	/* STELLAR_OPT_* the command takes */
	/* Return: STELLAR_EXIT_*; print own errors; USAGE adds the usage. */
	int (*run)(const struct stellar_cmd_opts *opts);
};

extern const struct stellar_command stellar_cmd_status;
extern const struct stellar_command stellar_cmd_params;
extern const struct stellar_command stellar_cmd_set;
extern const struct stellar_command stellar_cmd_stats;
extern const struct stellar_command stellar_cmd_qps;
extern const struct stellar_command stellar_cmd_paths;
extern const struct stellar_command stellar_cmd_ooo_monitor;
extern const struct stellar_command stellar_cmd_set_qp;
extern const struct stellar_command stellar_cmd_pvdma;
extern const struct stellar_command stellar_cmd_emtt;
extern const struct stellar_command stellar_cmd_cdi;
extern const struct stellar_command stellar_cmd_latency;
extern const struct stellar_command stellar_cmd_top;

#endif /* STELLAR_TOOL_COMMANDS_H */
