/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stellar-tool: command line parsing.  Nothing here talks to the kernel,
 * so the unit tests link it on its own.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_TOOL_CLI_H
#define STELLAR_TOOL_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "info.h"

/* Exit statuses of stellar-tool. */
enum {
	STELLAR_EXIT_OK = 0,
	STELLAR_EXIT_FAILURE = 1,
	STELLAR_EXIT_USAGE = 2,
};

/* Longest device name the kernel accepts (IB_DEVICE_NAME_MAX - 1). */
#define STELLAR_DEV_NAME_MAX (STELLAR_NAME_LEN - 1)

struct stellar_global_opts {
	bool json;
	bool help;
	bool version;
	int cmd_index;		/* argv index of COMMAND; argc when none */
};

/* Which options a command accepts (bits for stellar_parse_cmd()). */
enum {
	STELLAR_OPT_DEVICE = 1u << 0,	/* --device NAME */
	STELLAR_OPT_SETTINGS = 1u << 1,	/* --spray-paths N and friends */
	STELLAR_OPT_INTERVAL = 1u << 2,	/* --interval MS */
	STELLAR_OPT_COUNT = 1u << 3,	/* --count N */
	STELLAR_OPT_QPN = 1u << 4,	/* --qp N */
	STELLAR_OPT_OUTPUT = 1u << 5,	/* --output PATH */
	/* top's: -n COUNT, -d SECONDS (delay); --device is long only */
	STELLAR_OPT_TOP = 1u << 6,
};

struct stellar_cmd_opts {
	const char *dev_name;		/* NULL unless --device was given */
	const char *output;		/* NULL unless --output was given */
	bool json;
	bool help;
	struct stellar_settings settings; /* present[] marks those given */
	uint32_t interval_ms;		/* --interval, if has_interval */
	uint32_t count;			/* --count, if has_count */
	uint32_t qpn;			/* --qp, if has_qpn */
	bool has_interval;
	bool has_count;
	bool has_qpn;
};

int stellar_parse_u32(const char *text, uint32_t *value);
int stellar_parse_size(const char *text, uint64_t *value);
int stellar_parse_global(int argc, char **argv,
			 struct stellar_global_opts *opts, FILE *err);
int stellar_parse_cmd(int argc, char **argv, unsigned int accepted,
		      struct stellar_cmd_opts *opts, FILE *err);
unsigned int stellar_settings_given(const struct stellar_settings *settings);

#endif /* STELLAR_TOOL_CLI_H */
