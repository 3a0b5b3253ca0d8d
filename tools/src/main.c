// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stellar-tool: diagnostics for virtio-stellar RDMA devices.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <stdio.h>
#include <string.h>

#include <stellar-netlink.h>

#include "commands.h"

#ifndef STELLAR_TOOL_VERSION
#define STELLAR_TOOL_VERSION "unknown"
#endif

static const struct stellar_command *const commands[] = {
	&stellar_cmd_status,
	&stellar_cmd_params,
	&stellar_cmd_set,
	&stellar_cmd_stats,
	&stellar_cmd_qps,
	&stellar_cmd_paths,
	&stellar_cmd_ooo_monitor,
	&stellar_cmd_set_qp,
	&stellar_cmd_pvdma,
	&stellar_cmd_emtt,
	&stellar_cmd_cdi,
	&stellar_cmd_latency,
	&stellar_cmd_top,
};

#define NUM_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void print_synopsis(FILE *fp, const struct stellar_command *cmd)
{
	fprintf(fp, "  stellar-tool [-j] %s%s%s\n", cmd->name,
		*cmd->synopsis ? " " : "", cmd->synopsis);
}

static void print_settings_help(FILE *fp)
{
	int i;

	for (i = 0; i < STELLAR_SETTING_COUNT; i++) {
		const struct stellar_setting_desc *desc =
			&stellar_setting_descs[i];
		char option[40];

		snprintf(option, sizeof(option), "--%s %s", desc->option,
			 desc->metavar);
		fprintf(fp, "  %-29s %s\n", option, desc->meaning);
	}
}

static void print_usage(FILE *fp)
{
	size_t i;

	fputs("Usage: stellar-tool [-h|--help] [-V|--version] [-j|--json] COMMAND [ARGS]\n"
	      "\n"
	      "Diagnostics for virtio-stellar software RDMA devices.\n"
	      "\n"
	      "Options:\n"
	      "  -h, --help                    show this help and exit\n"
	      "  -V, --version                 show the version and exit\n"
	      "  -j, --json                    print results as JSON\n"
	      "\n"
	      "Commands:\n", fp);
	for (i = 0; i < NUM_COMMANDS; i++) {
		char head[64];

		snprintf(head, sizeof(head), "%s %s", commands[i]->name,
			 commands[i]->synopsis);
		fprintf(fp, "  %-29s %s\n", head, commands[i]->summary);
	}
	fputs("\nSettings (for set; the kernel checks the ranges; the values of\n"
	      "--rate-bytes, --rate-pkts and --max-pinned may end in K, M, G or T,\n"
	      "powers of 1024):\n", fp);
	print_settings_help(fp);
	fputs("\nRun 'stellar-tool COMMAND --help' for one command.\n"
	      "Exit status: 0 success, 1 failure, 2 bad usage.\n", fp);
}

static void print_cmd_help(FILE *fp, const struct stellar_command *cmd)
{
	fputs("Usage:\n", fp);
	print_synopsis(fp, cmd);
	fprintf(fp, "\n%s.\n\nOptions:\n", cmd->summary);
	if (cmd->accepted & STELLAR_OPT_TOP)
		fputs("  -n COUNT                      stop after COUNT screens (default: at Ctrl-C)\n"
		      "  -d SECONDS                    time between screens (0.1 to 86400; 2)\n"
		      "  --device NAME                 only this device\n",
		      fp);
	else if (cmd->accepted & STELLAR_OPT_DEVICE)
		fputs("  -d, --device NAME             the stellar device (ib_device name, e.g. stellar0)\n",
		      fp);
	if (cmd->accepted & STELLAR_OPT_QPN)
		fputs("  --qp N                        the QP number\n", fp);
	if (cmd->accepted & STELLAR_OPT_INTERVAL)
		fputs("  --interval MS                 time between refreshes (10 to 3600000; 1000)\n",
		      fp);
	if (cmd->accepted & STELLAR_OPT_COUNT)
		fputs("  --count N                     stop after N refreshes (default: at Ctrl-C)\n",
		      fp);
	if (cmd->accepted & STELLAR_OPT_OUTPUT)
		fputs("  --output PATH                 file to write, - for stdout (/etc/cdi/stellar.json)\n",
		      fp);
	if (cmd->accepted & STELLAR_OPT_SETTINGS)
		print_settings_help(fp);
	fputs("  -j, --json                    print results as JSON\n"
	      "  -h, --help                    show this help and exit\n", fp);
}

static void print_cmd_usage_error(const struct stellar_command *cmd)
{
	fputs("Usage:\n", stderr);
	print_synopsis(stderr, cmd);
	fprintf(stderr, "Try 'stellar-tool %s --help' for more.\n", cmd->name);
}

static const struct stellar_command *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < NUM_COMMANDS; i++)
		if (!strcmp(commands[i]->name, name))
			return commands[i];
	return NULL;
}

static int run_command(const struct stellar_command *cmd, bool json,
		       int argc, char **argv)
{
	struct stellar_cmd_opts opts;
	int ret;

	if (stellar_parse_cmd(argc, argv, cmd->accepted, &opts, stderr)) {
		print_cmd_usage_error(cmd);
		return STELLAR_EXIT_USAGE;
	}
	if (opts.help) {
		print_cmd_help(stdout, cmd);
		return STELLAR_EXIT_OK;
	}
	opts.json = opts.json || json;
	ret = cmd->run(&opts);
	if (ret == STELLAR_EXIT_USAGE)
		print_cmd_usage_error(cmd);
	return ret;
}

static int usage_error(void)
{
	size_t i;

	fputs("Usage: stellar-tool [-h|--help] [-V|--version] [-j|--json] COMMAND [ARGS]\n"
	      "Commands:", stderr);
	for (i = 0; i < NUM_COMMANDS; i++)
		fprintf(stderr, " %s", commands[i]->name);
	fputs("\nTry 'stellar-tool --help' for more.\n", stderr);
	return STELLAR_EXIT_USAGE;
}

int main(int argc, char **argv)
{
	const struct stellar_command *cmd;
	struct stellar_global_opts global;

	if (stellar_parse_global(argc, argv, &global, stderr))
		return usage_error();
	if (global.help) {
		print_usage(stdout);
		return STELLAR_EXIT_OK;
	}
	if (global.version) {
		printf("stellar-tool %s (generic netlink family '%s' version %d)\n",
		       STELLAR_TOOL_VERSION, STELLAR_GENL_NAME,
		       STELLAR_GENL_VERSION);
		return STELLAR_EXIT_OK;
	}
	if (global.cmd_index >= argc) {
		fputs("stellar-tool: no command given\n", stderr);
		return usage_error();
	}
	cmd = find_command(argv[global.cmd_index]);
	if (!cmd) {
		fprintf(stderr, "stellar-tool: unknown command '%s'\n",
			argv[global.cmd_index]);
		return usage_error();
	}
	return run_command(cmd, global.json, argc - global.cmd_index,
			   argv + global.cmd_index);
}
