// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stellar-tool paths [--device NAME]: packet spray statistics per path
 * (summed over the device's spraying QPs) and the out-of-order depth
 * histogram, of one device or of all.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "query.h"
#include "spray.h"

static int show_one(struct stellar_nl *nl, const char *dev_name, bool json)
{
	struct stellar_nl_status status;
	struct stellar_spray_info info;

	if (stellar_query_spray(nl, dev_name, &info, &status)) {
		stellar_nl_report(&status, "paths", dev_name);
		return STELLAR_EXIT_FAILURE;
	}
	stellar_print_spray(stdout, &info, json);
	if (json)
		fputc('\n', stdout);
	return STELLAR_EXIT_OK;
}

/* Every device; one that went away since the dump is left out. */
static int show_all(struct stellar_nl *nl, bool json)
{
	struct stellar_spray_info *infos = NULL;
	struct stellar_nl_status status;
	struct stellar_dev_list list;
	size_t i, shown = 0;
	int ret = STELLAR_EXIT_OK;

	if (stellar_query_all_devs(nl, &list, &status)) {
		stellar_nl_report(&status, "paths", NULL);
		ret = STELLAR_EXIT_FAILURE;
		goto out;
	}
	infos = calloc(list.count ? list.count : 1, sizeof(*infos));
	if (!infos) {
		fprintf(stderr, "stellar-tool: paths: out of memory\n");
		ret = STELLAR_EXIT_FAILURE;
		goto out;
	}
	for (i = 0; i < list.count; i++) {
		const char *name = list.devs[i].dev_name;

		if (!stellar_query_spray(nl, name, &infos[shown], &status)) {
			shown++;
		} else if (status.error != ENODEV) {
			stellar_nl_report(&status, "paths", name);
			ret = STELLAR_EXIT_FAILURE;
			goto out;
		}
	}
	stellar_print_spray_list(stdout, infos, shown, json);
out:
	free(infos);
	stellar_dev_list_free(&list);
	return ret;
}

static int run_paths(const struct stellar_cmd_opts *opts)
{
	struct stellar_nl nl;
	int ret;

	if (stellar_nl_open(&nl))
		return STELLAR_EXIT_FAILURE;
	if (opts->dev_name)
		ret = show_one(&nl, opts->dev_name, opts->json);
	else
		ret = show_all(&nl, opts->json);
	stellar_nl_close(&nl);
	return ret;
}

const struct stellar_command stellar_cmd_paths = {
	.name = "paths",
	.synopsis = "[--device NAME]",
	.summary = "Show packet spray paths (packets, bytes, retransmits, RTT, state) and out-of-order depths",
	.accepted = STELLAR_OPT_DEVICE,
	.run = run_paths,
};
