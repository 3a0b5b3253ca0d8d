// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stellar-tool stats --device NAME: the counters, "name: value" per line.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <stdio.h>

#include "commands.h"
#include "format.h"
#include "query.h"

static int run_stats(const struct stellar_cmd_opts *opts)
{
	struct stellar_nl_status status;
	struct stellar_dev_info info;
	struct stellar_nl nl;
	int ret = STELLAR_EXIT_OK;

	if (!opts->dev_name) {
		fprintf(stderr, "stellar-tool: stats: --device NAME is required\n");
		return STELLAR_EXIT_USAGE;
	}
	if (stellar_nl_open(&nl))
		return STELLAR_EXIT_FAILURE;
	if (stellar_query_dev(&nl, opts->dev_name, &info, &status)) {
		stellar_nl_report(&status, "stats", opts->dev_name);
		ret = STELLAR_EXIT_FAILURE;
	} else {
		stellar_print_counters(stdout, &info.counters, opts->json, "");
		if (opts->json)
			fputc('\n', stdout);
	}
	stellar_nl_close(&nl);
	return ret;
}

const struct stellar_command stellar_cmd_stats = {
	.name = "stats",
	.synopsis = "--device NAME",
	.summary = "Show the counters of one device, one 'name: value' per line",
	.accepted = STELLAR_OPT_DEVICE,
	.run = run_stats,
};
