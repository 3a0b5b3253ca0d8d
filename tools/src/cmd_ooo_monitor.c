// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stellar-tool ooo-monitor --device NAME [--interval MS] [--count N]:
 * a live view of out-of-order arrivals and per-path rates, refreshed
 * every interval until Ctrl-C (exit status 0) or N refreshes.  On a
 * terminal each refresh redraws the screen; otherwise refreshes follow
 * each other (with --json: one JSON object per line).
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "nl.h"
#include "spray.h"

#define INTERVAL_DEFAULT_MS	1000
#define INTERVAL_MIN_MS		10
#define INTERVAL_MAX_MS		3600000

static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* SIGINT and SIGTERM end the loop; no SA_RESTART, so sleeps return. */
static void catch_stop_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Sleep @ms, or less when a stop signal arrives. */
static void sleep_ms(unsigned int ms)
{
	struct timespec left = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (!stop_requested && nanosleep(&left, &left) && errno == EINTR)
		;
}

static int check_args(const struct stellar_cmd_opts *opts)
{
	if (!opts->dev_name) {
		fprintf(stderr,
			"stellar-tool: ooo-monitor: --device NAME is required\n");
		return -1;
	}
	if (opts->has_interval && (opts->interval_ms < INTERVAL_MIN_MS ||
				   opts->interval_ms > INTERVAL_MAX_MS)) {
		fprintf(stderr,
			"stellar-tool: ooo-monitor: --interval %u: give %d to %d milliseconds\n",
			opts->interval_ms, INTERVAL_MIN_MS, INTERVAL_MAX_MS);
		return -1;
	}
	return 0;
}

static void start_frame(bool json, unsigned int frame)
{
	if (json)
		return;
	if (isatty(STDOUT_FILENO))
		fputs("\033[H\033[2J", stdout);	/* home, clear screen */
	else if (frame)
		fputc('\n', stdout);
}

static int monitor(struct stellar_nl *nl, const struct stellar_cmd_opts *opts)
{
	unsigned int interval = opts->has_interval ? opts->interval_ms :
				INTERVAL_DEFAULT_MS;
	struct stellar_spray_info sample[2];
	struct stellar_nl_status status;
	unsigned int frame = 0;
	uint64_t then, now;
	int cur = 0;

	if (stellar_query_spray(nl, opts->dev_name, &sample[cur], &status))
		goto fail;
	then = now_ms();
	while (!stop_requested && (!opts->has_count || frame < opts->count)) {
		sleep_ms(interval);
		if (stop_requested)
			break;
		if (stellar_query_spray(nl, opts->dev_name, &sample[!cur],
					&status))
			goto fail;
		now = now_ms();
		start_frame(opts->json, frame);
		stellar_print_ooo_frame(stdout, &sample[cur], &sample[!cur],
					(unsigned int)(now - then), opts->json);
		fflush(stdout);
		cur = !cur;
		then = now;
		frame++;
	}
	return STELLAR_EXIT_OK;
fail:
	stellar_nl_report(&status, "ooo-monitor", opts->dev_name);
	return STELLAR_EXIT_FAILURE;
}

static int run_ooo_monitor(const struct stellar_cmd_opts *opts)
{
	struct stellar_nl nl;
	int ret;

	if (check_args(opts))
		return STELLAR_EXIT_USAGE;
	catch_stop_signals();
	if (stellar_nl_open(&nl))
		return STELLAR_EXIT_FAILURE;
	ret = monitor(&nl, opts);
	stellar_nl_close(&nl);
	return ret;
}

const struct stellar_command stellar_cmd_ooo_monitor = {
	.name = "ooo-monitor",
	.synopsis = "--device NAME [--interval MS] [--count N]",
	.summary = "Live view of out-of-order arrivals and per-path rates (Ctrl-C ends it)",
	.accepted = STELLAR_OPT_DEVICE | STELLAR_OPT_INTERVAL | STELLAR_OPT_COUNT,
	.run = run_ooo_monitor,
};
