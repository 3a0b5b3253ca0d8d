// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stellar-tool params: the module-wide defaults new devices start with.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <stdio.h>

#include "commands.h"
#include "format.h"
#include "query.h"

static int run_params(const struct stellar_cmd_opts *opts)
{
	struct stellar_nl_status status;
	struct stellar_settings settings;
	struct stellar_nl nl;
	int ret = STELLAR_EXIT_OK;

	if (stellar_nl_open(&nl))
		return STELLAR_EXIT_FAILURE;
	if (stellar_query_params(&nl, &settings, &status)) {
		stellar_nl_report(&status, "params", NULL);
		ret = STELLAR_EXIT_FAILURE;
	} else {
		stellar_print_settings(stdout, &settings, opts->json, "");
		if (opts->json)
			fputc('\n', stdout);
	}
	stellar_nl_close(&nl);
	return ret;
}

const struct stellar_command stellar_cmd_params = {
	.name = "params",
	.synopsis = "",
	.summary = "Show the module-wide defaults for new devices",
	.accepted = 0,
	.run = run_params,
};
