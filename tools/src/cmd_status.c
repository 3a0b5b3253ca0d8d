// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stellar-tool status [--device NAME]: one block per device.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <stdio.h>

#include "commands.h"
#include "format.h"
#include "query.h"

static int show_one(struct stellar_nl *nl, const struct stellar_cmd_opts *opts)
{
	struct stellar_nl_status status;
	struct stellar_dev_info info;

	if (stellar_query_dev(nl, opts->dev_name, &info, &status)) {
		stellar_nl_report(&status, "status", opts->dev_name);
		return STELLAR_EXIT_FAILURE;
	}
	stellar_print_dev_list(stdout, &info, 1, opts->json);
	return STELLAR_EXIT_OK;
}

static int show_all(struct stellar_nl *nl, const struct stellar_cmd_opts *opts)
{
	struct stellar_nl_status status;
	struct stellar_dev_list list;
	int ret = STELLAR_EXIT_OK;

	if (stellar_query_all_devs(nl, &list, &status)) {
		stellar_nl_report(&status, "status", NULL);
		ret = STELLAR_EXIT_FAILURE;
	} else {
		stellar_print_dev_list(stdout, list.devs, list.count,
				       opts->json);
		if (!list.count && !opts->json)
			fprintf(stderr,
				"stellar-tool: no stellar devices (add one with 'rdma link add NAME type stellar netdev IFACE')\n");
	}
	stellar_dev_list_free(&list);
	return ret;
}

static int run_status(const struct stellar_cmd_opts *opts)
{
	struct stellar_nl nl;
	int ret;

	if (stellar_nl_open(&nl))
		return STELLAR_EXIT_FAILURE;
	ret = opts->dev_name ? show_one(&nl, opts) : show_all(&nl, opts);
	stellar_nl_close(&nl);
	return ret;
}

const struct stellar_command stellar_cmd_status = {
	.name = "status",
	.synopsis = "[--device NAME]",
	.summary = "Show devices: netdev, port state, MTU, settings, counters",
	.accepted = STELLAR_OPT_DEVICE,
	.run = run_status,
};
