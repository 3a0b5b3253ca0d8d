// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stellar-tool pvdma|emtt [--device NAME]: memory statistics, a section
 * per device (as /proc/stellar/pvdma_stats and emtt_stats).
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <stdio.h>

#include "commands.h"
#include "mem.h"
#include "query.h"

typedef void (*mem_printer)(FILE *fp, const struct stellar_dev_info *info,
			    bool json);

static void print_list(const struct stellar_dev_info *devs, size_t count,
		       bool json, mem_printer print)
{
	size_t i;

	if (json)
		fputc('[', stdout);
	for (i = 0; i < count; i++) {
		if (i)
			fputs(json ? "," : "\n", stdout);
		print(stdout, &devs[i], json);
	}
	if (json)
		fputs("]\n", stdout);
}

static int run_mem(const struct stellar_cmd_opts *opts, const char *what,
		   mem_printer print)
{
	struct stellar_nl_status status;
	struct stellar_dev_list list = { 0 };
	struct stellar_dev_info info;
	struct stellar_nl nl;
	int ret = STELLAR_EXIT_OK;

	if (stellar_nl_open(&nl))
		return STELLAR_EXIT_FAILURE;
	if (opts->dev_name) {
		if (stellar_query_dev(&nl, opts->dev_name, &info, &status)) {
			stellar_nl_report(&status, what, opts->dev_name);
			ret = STELLAR_EXIT_FAILURE;
		} else {
			print_list(&info, 1, opts->json, print);
		}
	} else if (stellar_query_all_devs(&nl, &list, &status)) {
		stellar_nl_report(&status, what, NULL);
		ret = STELLAR_EXIT_FAILURE;
	} else {
		print_list(list.devs, list.count, opts->json, print);
		if (!list.count && !opts->json)
			fprintf(stderr, "stellar-tool: no stellar devices\n");
	}
	stellar_dev_list_free(&list);
	stellar_nl_close(&nl);
	return ret;
}

static int run_pvdma(const struct stellar_cmd_opts *opts)
{
	return run_mem(opts, "pvdma", stellar_print_pvdma);
}

static int run_emtt(const struct stellar_cmd_opts *opts)
{
	return run_mem(opts, "emtt", stellar_print_emtt);
}

const struct stellar_command stellar_cmd_pvdma = {
	.name = "pvdma",
	.synopsis = "[--device NAME]",
	.summary = "Show on-demand pinning statistics (as /proc/stellar/pvdma_stats)",
	.accepted = STELLAR_OPT_DEVICE,
	.run = run_pvdma,
};

const struct stellar_command stellar_cmd_emtt = {
	.name = "emtt",
	.synopsis = "[--device NAME]",
	.summary = "Show translation cache statistics (as /proc/stellar/emtt_stats)",
	.accepted = STELLAR_OPT_DEVICE,
	.run = run_emtt,
};
