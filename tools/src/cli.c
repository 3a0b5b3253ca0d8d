// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stellar-tool: command line parsing.
 *
 * Global options come before COMMAND; each command then parses its own
 * options.  Errors are written to the given stream and reported as -1,
 * which callers turn into exit status 2.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <getopt.h>
#include <string.h>

#include "cli.h"

/**
 * stellar_parse_u32() - read an unsigned decimal number
 * @text: digits only: no sign, no spaces, no suffix
 * @value: the number, when valid
 *
 * Return: 0, or -1 when @text is not a number in [0, UINT32_MAX].
 */
int stellar_parse_u32(const char *text, uint32_t *value)
{
	uint64_t parsed = 0;
	const char *p;

	if (!text || !*text)
		return -1;
	for (p = text; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		parsed = parsed * 10 + (uint64_t)(*p - '0');
		if (parsed > UINT32_MAX)
			return -1;
	}
	*value = (uint32_t)parsed;
	return 0;
}

/**
 * stellar_parse_size() - read a whole number with an optional suffix
 * @text: digits, then nothing or one of K, M, G, T (powers of 1024)
 * @value: the number, when valid
 *
 * Return: 0, or -1 when @text is not such a number below 2^64.
 */
int stellar_parse_size(const char *text, uint64_t *value)
{
	static const char suffixes[] = "KMGT";
	uint64_t parsed = 0;
	const char *p, *s;
	unsigned int shift = 0;

	if (!text || !*text)
		return -1;
	for (p = text; *p >= '0' && *p <= '9'; p++) {
		uint64_t digit = (uint64_t)(*p - '0');

		if (parsed > (UINT64_MAX - digit) / 10)
			return -1;
		parsed = parsed * 10 + digit;
	}
	if (p == text)
		return -1;
	if (*p) {
		s = strchr(suffixes, *p);
		if (!s || p[1])
			return -1;
		shift = 10 * (unsigned int)(s - suffixes + 1);
		if (parsed > (UINT64_MAX >> shift))
			return -1;
	}
	*value = parsed << shift;
	return 0;
}

/* Report what getopt_long() stopped at: unknown option or missing value. */
static void report_getopt_error(int ret, char **argv, const char *where,
				FILE *err)
{
	const char *arg = argv[optind - 1];

	if (ret == ':')
		fprintf(err, "stellar-tool: %soption '%s' needs a value\n",
			where, arg);
	else if (optopt && strncmp(arg, "--", 2) != 0)
		fprintf(err, "stellar-tool: %sunknown option '-%c'\n", where,
			optopt);
	else
		fprintf(err, "stellar-tool: %sunrecognized option '%s'\n", where,
			arg);
}

/**
 * stellar_parse_global() - parse the options before COMMAND
 * @argc: argument count, as given to main()
 * @argv: arguments, as given to main()
 * @opts: filled; cmd_index points at COMMAND or equals @argc
 * @err: where to report a usage error
 *
 * Return: 0, or -1 on a usage error.
 */
int stellar_parse_global(int argc, char **argv,
			 struct stellar_global_opts *opts, FILE *err)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	int ret;

	memset(opts, 0, sizeof(*opts));
	optind = 0;
	opterr = 0;
	while ((ret = getopt_long(argc, argv, "+:hVj", longopts, NULL)) != -1) {
		switch (ret) {
		case 'h':
			opts->help = true;
			break;
		case 'V':
			opts->version = true;
			break;
		case 'j':
			opts->json = true;
			break;
		default:
			report_getopt_error(ret, argv, "", err);
			return -1;
		}
	}
	opts->cmd_index = optind;
	return 0;
}

/* Long option values from 256 up select a setting of "set". */
#define OPT_SETTING_BASE 256
/* Long-only options below that. */
enum { OPT_INTERVAL = 200, OPT_COUNT, OPT_QPN, OPT_OUTPUT, OPT_DEVICE };

static const struct {
	unsigned int bit;
	struct option opt;
} number_opts[] = {
	{ STELLAR_OPT_INTERVAL, { "interval", required_argument, NULL, OPT_INTERVAL } },
	{ STELLAR_OPT_COUNT, { "count", required_argument, NULL, OPT_COUNT } },
	{ STELLAR_OPT_QPN, { "qp", required_argument, NULL, OPT_QPN } },
};

#define NUM_NUMBER_OPTS (sizeof(number_opts) / sizeof(number_opts[0]))

static void build_longopts(unsigned int accepted, struct option *longopts)
{
	static const struct option common[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'j' },
	};
	int n = 0, i;
	size_t k;

	for (i = 0; i < 2; i++)
		longopts[n++] = common[i];
	for (k = 0; k < NUM_NUMBER_OPTS; k++)
		if (accepted & number_opts[k].bit)
			longopts[n++] = number_opts[k].opt;
	if (accepted & STELLAR_OPT_DEVICE)
		longopts[n++] = (struct option){ "device", required_argument,
						 NULL, accepted & STELLAR_OPT_TOP ?
						 OPT_DEVICE : 'd' };
	if (accepted & STELLAR_OPT_OUTPUT)
		longopts[n++] = (struct option){ "output", required_argument,
						 NULL, OPT_OUTPUT };
	if (accepted & STELLAR_OPT_SETTINGS)
		for (i = 0; i < STELLAR_SETTING_COUNT; i++)
			longopts[n++] = (struct option){
				stellar_setting_descs[i].option,
				required_argument, NULL, OPT_SETTING_BASE + i };
	longopts[n] = (struct option){ NULL, 0, NULL, 0 };
}

static int take_device(const char *name, struct stellar_cmd_opts *opts,
		       const char *cmd, FILE *err)
{
	if (!*name) {
		fprintf(err, "stellar-tool: %s: empty device name\n", cmd);
		return -1;
	}
	if (strlen(name) > STELLAR_DEV_NAME_MAX) {
		fprintf(err,
			"stellar-tool: %s: device name '%s' is longer than %d characters\n",
			cmd, name, STELLAR_DEV_NAME_MAX);
		return -1;
	}
	opts->dev_name = name;
	return 0;
}

static int take_setting(int setting, const char *text,
			struct stellar_cmd_opts *opts, const char *cmd,
			FILE *err)
{
	const struct stellar_setting_desc *desc =
		&stellar_setting_descs[setting];
	uint32_t narrow;

	if (desc->wide) {
		if (stellar_parse_size(text, &opts->settings.value[setting])) {
			fprintf(err,
				"stellar-tool: %s: --%s: '%s' is not a whole number, optionally followed by K, M, G or T\n",
				cmd, desc->option, text);
			return -1;
		}
	} else {
		if (stellar_parse_u32(text, &narrow)) {
			fprintf(err,
				"stellar-tool: %s: --%s: '%s' is not a whole number between 0 and 4294967295\n",
				cmd, desc->option, text);
			return -1;
		}
		opts->settings.value[setting] = narrow;
	}
	opts->settings.present[setting] = true;
	return 0;
}

/* --interval, --count, --qp: a whole number into its field. */
static int take_number(int ret, const char *text,
		       struct stellar_cmd_opts *opts, const char *cmd,
		       FILE *err)
{
	uint32_t *value = ret == OPT_INTERVAL ? &opts->interval_ms :
			  ret == OPT_COUNT ? &opts->count : &opts->qpn;
	const char *name = ret == OPT_INTERVAL ? "interval" :
			   ret == OPT_COUNT ? "count" : "qp";

	if (stellar_parse_u32(text, value)) {
		fprintf(err,
			"stellar-tool: %s: --%s: '%s' is not a whole number between 0 and 4294967295\n",
			cmd, name, text);
		return -1;
	}
	opts->has_interval |= ret == OPT_INTERVAL;
	opts->has_count |= ret == OPT_COUNT;
	opts->has_qpn |= ret == OPT_QPN;
	return 0;
}

/*
 * top's -d: seconds, a whole number or with up to three decimals, at
 * least 0.1 and at most a day, into interval_ms.
 */
static int take_delay(const char *text, struct stellar_cmd_opts *opts,
		      const char *cmd, FILE *err)
{
	uint32_t whole = 0, frac = 0, scale = 1000;
	const char *dot = strchr(text, '.');
	char buf[16];

	if (dot && (size_t)(dot - text) < sizeof(buf)) {
		memcpy(buf, text, dot - text);
		buf[dot - text] = '\0';
		if ((dot == text || !stellar_parse_u32(buf, &whole)) &&
		    strlen(dot + 1) >= 1 && strlen(dot + 1) <= 3 &&
		    !stellar_parse_u32(dot + 1, &frac)) {
			for (size_t i = strlen(dot + 1); i < 3; i++)
				frac *= 10;
			scale = 0;
		}
	} else if (!dot && !stellar_parse_u32(text, &whole)) {
		scale = 0;
	}
	if (scale || whole > 86400 || whole * 1000 + frac < 100) {
		fprintf(err,
			"stellar-tool: %s: -d: '%s' is not a number of seconds between 0.1 and 86400\n",
			cmd, text);
		return -1;
	}
	opts->interval_ms = whole * 1000 + frac;
	opts->has_interval = true;
	return 0;
}

static int take_option(int ret, struct stellar_cmd_opts *opts, char **argv,
		       unsigned int accepted, FILE *err)
{
	if (accepted & STELLAR_OPT_TOP) {
		switch (ret) {
		case 'd':
			return take_delay(optarg, opts, argv[0], err);
		case 'n':
			return take_number(OPT_COUNT, optarg, opts, argv[0],
					   err);
		case OPT_DEVICE:
			return take_device(optarg, opts, argv[0], err);
		}
	}
	switch (ret) {
	case 'h':
		opts->help = true;
		return 0;
	case 'j':
		opts->json = true;
		return 0;
	case 'd':
		return take_device(optarg, opts, argv[0], err);
	case OPT_OUTPUT:
		if (!*optarg) {
			fprintf(err, "stellar-tool: %s: empty --output\n",
				argv[0]);
			return -1;
		}
		opts->output = optarg;
		return 0;
	case OPT_INTERVAL:
	case OPT_COUNT:
	case OPT_QPN:
		return take_number(ret, optarg, opts, argv[0], err);
	}
	if (ret >= OPT_SETTING_BASE &&
	    ret < OPT_SETTING_BASE + STELLAR_SETTING_COUNT)
		return take_setting(ret - OPT_SETTING_BASE, optarg, opts,
				    argv[0], err);
	return -1;
}

/**
 * stellar_parse_cmd() - parse the options of one command
 * @argc: count of @argv
 * @argv: COMMAND followed by its arguments
 * @accepted: STELLAR_OPT_* bits: which options this command takes
 * @opts: filled
 * @err: where to report a usage error
 *
 * Every command takes -h/--help and -j/--json.  A command takes no
 * operands, so anything that is not an option is an error.
 *
 * Return: 0, or -1 on a usage error.
 */
int stellar_parse_cmd(int argc, char **argv, unsigned int accepted,
		      struct stellar_cmd_opts *opts, FILE *err)
{
	struct option longopts[4 + NUM_NUMBER_OPTS + STELLAR_SETTING_COUNT + 1];
	const char *shortopts = accepted & STELLAR_OPT_TOP ? "+:hjn:d:" :
				accepted & STELLAR_OPT_DEVICE ? "+:hjd:" :
								"+:hj";
	char where[64];
	int ret;

	memset(opts, 0, sizeof(*opts));
	build_longopts(accepted, longopts);
	snprintf(where, sizeof(where), "%s: ", argv[0]);
	optind = 0;
	opterr = 0;
	while ((ret = getopt_long(argc, argv, shortopts, longopts, NULL)) !=
	       -1) {
		if (ret == '?' || ret == ':') {
			report_getopt_error(ret, argv, where, err);
			return -1;
		}
		if (take_option(ret, opts, argv, accepted, err))
			return -1;
	}
	if (optind < argc) {
		fprintf(err, "stellar-tool: %sunexpected argument '%s'\n",
			where, argv[optind]);
		return -1;
	}
	return 0;
}

/* Return: how many settings @settings marks as present. */
unsigned int stellar_settings_given(const struct stellar_settings *settings)
{
	unsigned int count = 0;
	int i;

	for (i = 0; i < STELLAR_SETTING_COUNT; i++)
		count += settings->present[i];
	return count;
}
