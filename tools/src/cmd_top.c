// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stellar-tool top [-n COUNT] [-d SECONDS] [--device NAME]: a live view of
 * devices, spray paths and QPs with throughput, retransmits and latency
 * percentiles, redrawn every -d seconds (default 2) like top(1).  On a
 * terminal each screen replaces the last (ANSI clear); otherwise (batch
 * mode, for scripts and tests) screens follow each other, separated by a
 * blank line.  QPs are shown to CAP_NET_ADMIN in the devices' namespace.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <netlink/msg.h>

#include "commands.h"
#include "query.h"
#include "top.h"

#define DEFAULT_DELAY_MS	2000

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int add_qp(struct nl_msg *msg, void *arg)
{
	return stellar_top_add_qp(arg, msg);
}

static void read_qps(struct stellar_nl *nl, struct stellar_top_dev *dev)
{
	struct stellar_nl_status status = { 0 };
	struct nl_msg *msg = stellar_nl_new_request(nl, STELLAR_CMD_GET_QP,
						    NLM_F_DUMP);

	dev->nr_qps = 0;
	dev->qps_total = 0;
	if (msg && nla_put_string(msg, STELLAR_ATTR_DEV_NAME, dev->name)) {
		nlmsg_free(msg);
		msg = NULL;
	}
	dev->qp_error = 0;
	if (stellar_nl_transact(nl, msg, add_qp, dev, &status))
		dev->qp_error = status.error ? status.error : EIO;
}

/* One device; false if it went away meanwhile. */
static bool read_dev(struct stellar_nl *nl, const struct stellar_dev_info *info,
		     struct stellar_top_dev *dev)
{
	struct stellar_nl_status status;

	memset(dev, 0, sizeof(*dev));
	stellar_top_dev_counters(dev, info);
	dev->has_lat = !stellar_query_latency(nl, dev->name, NULL, &dev->lat,
					      &status);
	dev->has_spray = !stellar_query_spray(nl, dev->name, &dev->spray,
					      &status);
	if (!dev->has_spray && status.error == ENODEV)
		return false;
	read_qps(nl, dev);
	return true;
}

static int read_frame(struct stellar_nl *nl, const char *only,
		      struct stellar_top_frame *frame)
{
	struct stellar_nl_status status;
	struct stellar_dev_list list;
	size_t i;

	if (stellar_query_all_devs(nl, &list, &status)) {
		stellar_nl_report(&status, "top", NULL);
		stellar_dev_list_free(&list);
		return -1;
	}
	frame->nr_devs = 0;
	frame->at_ns = monotonic_ns();
	for (i = 0; i < list.count && frame->nr_devs < STELLAR_TOP_MAX_DEVS;
	     i++) {
		if (only && strcmp(only, list.devs[i].dev_name))
			continue;
		if (read_dev(nl, &list.devs[i], &frame->devs[frame->nr_devs]))
			frame->nr_devs++;
	}
	stellar_dev_list_free(&list);
	if (only && !frame->nr_devs) {
		fprintf(stderr, "stellar-tool: top: no stellar device '%s'\n",
			only);
		return -1;
	}
	return 0;
}

static void wall_clock(char *buf, size_t len)
{
	time_t now = time(NULL);
	struct tm tm;

	if (localtime_r(&now, &tm))
		strftime(buf, len, "%H:%M:%S", &tm);
	else
		snprintf(buf, len, "?");
}

static void sleep_ms(uint32_t ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (!stop && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int run_top(const struct stellar_cmd_opts *opts)
{
	uint32_t delay = opts->has_interval ? opts->interval_ms :
					       DEFAULT_DELAY_MS;
	struct stellar_top_frame *frames = calloc(2, sizeof(*frames));
	bool tty = isatty(STDOUT_FILENO);
	int ret = STELLAR_EXIT_OK;
	struct stellar_nl nl;
	unsigned int n;
	char clock[16];

	if (opts->json) {
		fprintf(stderr, "stellar-tool: top: no JSON output; use stats, paths or latency\n");
		free(frames);
		return STELLAR_EXIT_USAGE;
	}
	if (opts->has_count && !opts->count) {
		fprintf(stderr, "stellar-tool: top: -n must be at least 1\n");
		free(frames);
		return STELLAR_EXIT_USAGE;
	}
	if (!frames || stellar_nl_open(&nl)) {
		free(frames);
		return STELLAR_EXIT_FAILURE;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	for (n = 1; !stop && (!opts->has_count || n <= opts->count); n++) {
		struct stellar_top_frame *cur = &frames[n % 2];
		struct stellar_top_frame *prev = n > 1 ? &frames[(n + 1) % 2]
						       : NULL;

		if (read_frame(&nl, opts->dev_name, cur)) {
			ret = STELLAR_EXIT_FAILURE;
			break;
		}
		wall_clock(clock, sizeof(clock));
		if (tty)
			fputs("\033[H\033[2J", stdout);
		else if (n > 1)
			fputc('\n', stdout);
		stellar_top_render(stdout, prev, cur, n, clock);
		fflush(stdout);
		if (!opts->has_count || n < opts->count)
			sleep_ms(delay);
	}
	stellar_nl_close(&nl);
	free(frames);
	return ret;
}

const struct stellar_command stellar_cmd_top = {
	.name = "top",
	.synopsis = "[-n COUNT] [-d SECONDS] [--device NAME]",
	.summary = "Live view of devices, spray paths and QPs: throughput, retransmits, latency percentiles",
	.accepted = STELLAR_OPT_DEVICE | STELLAR_OPT_TOP,
	.run = run_top,
};
