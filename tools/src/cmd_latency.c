// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stellar-tool latency [--device NAME [--qp N]]: the segmented latency
 * histograms of devices (or of one QP: CAP_NET_ADMIN) with percentiles,
 * a text histogram per segment and the microbursts per spray path.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "commands.h"
#include "latency.h"
#include "query.h"

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int show_one(struct stellar_nl *nl, const char *dev_name,
		    const uint32_t *qpn, bool json, bool first)
{
	struct stellar_nl_status status;
	struct stellar_lat_info *info = malloc(sizeof(*info));
	int ret = STELLAR_EXIT_OK;

	if (!info) {
		fprintf(stderr, "stellar-tool: latency: out of memory\n");
		return STELLAR_EXIT_FAILURE;
	}
	if (stellar_query_latency(nl, dev_name, qpn, info, &status)) {
		if (status.error == EPERM && qpn)
			fprintf(stderr,
				"stellar-tool: latency: per-QP figures need CAP_NET_ADMIN in %s's network namespace\n",
				dev_name);
		else
			stellar_nl_report(&status, "latency", dev_name);
		ret = status.error == ENODEV && !first ? STELLAR_EXIT_OK :
			STELLAR_EXIT_FAILURE;
		goto out;
	}
	if (!first)
		fputs(json ? "," : "\n", stdout);
	stellar_print_latency(stdout, info, monotonic_ns(), json);
out:
	free(info);
	return ret;
}

static int show_all(struct stellar_nl *nl, bool json)
{
	struct stellar_nl_status status;
	struct stellar_dev_list list;
	int ret = STELLAR_EXIT_OK;
	size_t i;

	if (stellar_query_all_devs(nl, &list, &status)) {
		stellar_nl_report(&status, "latency", NULL);
		return STELLAR_EXIT_FAILURE;
	}
	if (json)
		fputc('[', stdout);
	for (i = 0; i < list.count && ret == STELLAR_EXIT_OK; i++)
		ret = show_one(nl, list.devs[i].dev_name, NULL, json, i == 0);
	if (json)
		fputs("]\n", stdout);
	stellar_dev_list_free(&list);
	return ret;
}

static int run_latency(const struct stellar_cmd_opts *opts)
{
	struct stellar_nl nl;
	int ret;

	if (opts->has_qpn && !opts->dev_name) {
		fprintf(stderr, "stellar-tool: latency: --qp needs --device\n");
		return STELLAR_EXIT_USAGE;
	}
	if (stellar_nl_open(&nl))
		return STELLAR_EXIT_FAILURE;
	if (opts->dev_name) {
		ret = show_one(&nl, opts->dev_name,
			       opts->has_qpn ? &opts->qpn : NULL, opts->json,
			       true);
		if (opts->json && ret == STELLAR_EXIT_OK)
			fputc('\n', stdout);
	} else {
		ret = show_all(&nl, opts->json);
	}
	stellar_nl_close(&nl);
	return ret;
}

const struct stellar_command stellar_cmd_latency = {
	.name = "latency",
	.synopsis = "[--device NAME [--qp N]]",
	.summary = "Show latency percentiles and histograms per segment (queue, network, completion, responder) and microbursts",
	.accepted = STELLAR_OPT_DEVICE | STELLAR_OPT_QPN,
	.run = run_latency,
};
