// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stellar-tool set-qp --device NAME --qp N --spray-paths N: the paths of
 * one QP, from its next move to RTS on.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <stdio.h>

#include "commands.h"
#include "nl.h"
#include "spray.h"

static int check_args(const struct stellar_cmd_opts *opts)
{
	const struct stellar_settings *set = &opts->settings;

	if (!opts->dev_name || !opts->has_qpn) {
		fprintf(stderr,
			"stellar-tool: set-qp: --device NAME and --qp N are required\n");
		return -1;
	}
	if (!set->present[STELLAR_SETTING_SPRAY_PATHS] ||
	    stellar_settings_given(set) != 1) {
		fprintf(stderr,
			"stellar-tool: set-qp: give --spray-paths N, the one per-QP setting\n");
		return -1;
	}
	return 0;
}

static int run_set_qp(const struct stellar_cmd_opts *opts)
{
	struct stellar_nl_status status;
	struct stellar_nl nl;
	int ret = STELLAR_EXIT_OK;

	if (check_args(opts))
		return STELLAR_EXIT_USAGE;
	if (stellar_nl_open(&nl))
		return STELLAR_EXIT_FAILURE;
	if (stellar_set_qp_spray(&nl, opts->dev_name, opts->qpn,
				 opts->settings.value[STELLAR_SETTING_SPRAY_PATHS],
				 &status))
		ret = STELLAR_EXIT_FAILURE;
	stellar_nl_report(&status, "set-qp", opts->dev_name);
	stellar_nl_close(&nl);
	return ret;
}

const struct stellar_command stellar_cmd_set_qp = {
	.name = "set-qp",
	.synopsis = "--device NAME --qp N --spray-paths N",
	.summary = "Set the spray paths of one QP, used from its next move to RTS (needs CAP_NET_ADMIN)",
	.accepted = STELLAR_OPT_DEVICE | STELLAR_OPT_QPN | STELLAR_OPT_SETTINGS,
	.run = run_set_qp,
};
