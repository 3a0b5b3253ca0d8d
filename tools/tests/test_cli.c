// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of stellar-tool's command line parsing (src/cli.c).
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cli.h"

#define ARGC(argv) ((int)(sizeof(argv) / sizeof((argv)[0])) - 1)

/* Error output of the parser under test, captured in memory. */
struct captured {
	char *text;
	size_t len;
	FILE *fp;
};

static int open_capture(void **state)
{
	struct captured *cap = calloc(1, sizeof(*cap));

	assert_non_null(cap);
	cap->fp = open_memstream(&cap->text, &cap->len);
	assert_non_null(cap->fp);
	*state = cap;
	return 0;
}

static int close_capture(void **state)
{
	struct captured *cap = *state;

	fclose(cap->fp);
	free(cap->text);
	free(cap);
	return 0;
}

static const char *captured_text(void **state)
{
	struct captured *cap = *state;

	fflush(cap->fp);
	return cap->text;
}

static FILE *capture(void **state)
{
	return ((struct captured *)*state)->fp;
}

static void test_u32_accepts_decimal(void **state)
{
	uint32_t value = 1;

	(void)state;
	assert_int_equal(stellar_parse_u32("0", &value), 0);
	assert_int_equal(value, 0);
	assert_int_equal(stellar_parse_u32("4096", &value), 0);
	assert_int_equal(value, 4096);
	assert_int_equal(stellar_parse_u32("007", &value), 0);
	assert_int_equal(value, 7);
	assert_int_equal(stellar_parse_u32("4294967295", &value), 0);
	assert_int_equal(value, UINT32_MAX);
}

static void test_u32_rejects_other_text(void **state)
{
	static const char *const bad[] = {
		"", "-1", "+1", " 1", "1 ", "12a", "0x10", "1e3", "1.5",
		"4294967296", "99999999999999999999999",
	};
	uint32_t value = 42;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(stellar_parse_u32(bad[i], &value), -1);
		assert_int_equal(value, 42);
	}
	assert_int_equal(stellar_parse_u32(NULL, &value), -1);
}

static void test_global_finds_command(void **state)
{
	char *argv[] = { "stellar-tool", "-j", "status", "--device", "x",
			 NULL };
	struct stellar_global_opts opts;

	assert_int_equal(stellar_parse_global(ARGC(argv), argv, &opts,
					      capture(state)), 0);
	assert_true(opts.json);
	assert_false(opts.help);
	assert_false(opts.version);
	assert_int_equal(opts.cmd_index, 2);
	assert_string_equal(captured_text(state), "");
}

static void test_global_long_options(void **state)
{
	char *argv[] = { "stellar-tool", "--json", "--version", "--help",
			 NULL };
	struct stellar_global_opts opts;

	assert_int_equal(stellar_parse_global(ARGC(argv), argv, &opts,
					      capture(state)), 0);
	assert_true(opts.json);
	assert_true(opts.version);
	assert_true(opts.help);
	assert_int_equal(opts.cmd_index, ARGC(argv));
}

static void test_global_without_command(void **state)
{
	char *argv[] = { "stellar-tool", NULL };
	struct stellar_global_opts opts;

	assert_int_equal(stellar_parse_global(ARGC(argv), argv, &opts,
					      capture(state)), 0);
	assert_int_equal(opts.cmd_index, 1);
}

static void test_global_unknown_short_option(void **state)
{
	char *argv[] = { "stellar-tool", "-x", "status", NULL };
	struct stellar_global_opts opts;

	assert_int_equal(stellar_parse_global(ARGC(argv), argv, &opts,
					      capture(state)), -1);
	assert_string_equal(captured_text(state),
			    "stellar-tool: unknown option '-x'\n");
}

static void test_global_unknown_long_option(void **state)
{
	char *argv[] = { "stellar-tool", "--frobnicate", "status", NULL };
	struct stellar_global_opts opts;

	assert_int_equal(stellar_parse_global(ARGC(argv), argv, &opts,
					      capture(state)), -1);
	assert_string_equal(captured_text(state),
			    "stellar-tool: unrecognized option '--frobnicate'\n");
}

static void test_global_stops_at_command(void **state)
{
	/* Options after COMMAND belong to the command. */
	char *argv[] = { "stellar-tool", "stats", "-x", NULL };
	struct stellar_global_opts opts;

	assert_int_equal(stellar_parse_global(ARGC(argv), argv, &opts,
					      capture(state)), 0);
	assert_int_equal(opts.cmd_index, 1);
}

static void test_cmd_device_forms(void **state)
{
	char *long_form[] = { "status", "--device", "stellar0", NULL };
	char *equals_form[] = { "status", "--device=stellar1", NULL };
	char *short_form[] = { "status", "-d", "stellar2", NULL };
	struct stellar_cmd_opts opts;

	assert_int_equal(stellar_parse_cmd(ARGC(long_form), long_form,
					   STELLAR_OPT_DEVICE, &opts,
					   capture(state)), 0);
	assert_string_equal(opts.dev_name, "stellar0");
	assert_int_equal(stellar_parse_cmd(ARGC(equals_form), equals_form,
					   STELLAR_OPT_DEVICE, &opts,
					   capture(state)), 0);
	assert_string_equal(opts.dev_name, "stellar1");
	assert_int_equal(stellar_parse_cmd(ARGC(short_form), short_form,
					   STELLAR_OPT_DEVICE, &opts,
					   capture(state)), 0);
	assert_string_equal(opts.dev_name, "stellar2");
	assert_false(opts.json);
	assert_false(opts.help);
	assert_int_equal(stellar_settings_given(&opts.settings), 0);
}

static void test_cmd_no_device(void **state)
{
	char *argv[] = { "status", NULL };
	struct stellar_cmd_opts opts;

	assert_int_equal(stellar_parse_cmd(ARGC(argv), argv,
					   STELLAR_OPT_DEVICE, &opts,
					   capture(state)), 0);
	assert_null(opts.dev_name);
}

static void test_cmd_json_and_help(void **state)
{
	char *argv[] = { "params", "--json", "-h", NULL };
	struct stellar_cmd_opts opts;

	assert_int_equal(stellar_parse_cmd(ARGC(argv), argv, 0, &opts,
					   capture(state)), 0);
	assert_true(opts.json);
	assert_true(opts.help);
}

static void test_cmd_device_needs_value(void **state)
{
	char *argv[] = { "status", "--device", NULL };
	struct stellar_cmd_opts opts;

	assert_int_equal(stellar_parse_cmd(ARGC(argv), argv,
					   STELLAR_OPT_DEVICE, &opts,
					   capture(state)), -1);
	assert_string_equal(captured_text(state),
			    "stellar-tool: status: option '--device' needs a value\n");
}

static void test_cmd_empty_device(void **state)
{
	char *argv[] = { "stats", "--device=", NULL };
	struct stellar_cmd_opts opts;

	assert_int_equal(stellar_parse_cmd(ARGC(argv), argv,
					   STELLAR_OPT_DEVICE, &opts,
					   capture(state)), -1);
	assert_string_equal(captured_text(state),
			    "stellar-tool: stats: empty device name\n");
}

static void test_cmd_device_name_length(void **state)
{
	char longest[STELLAR_DEV_NAME_MAX + 1];
	char too_long[STELLAR_DEV_NAME_MAX + 2];
	char *ok_argv[] = { "status", "--device", longest, NULL };
	char *bad_argv[] = { "status", "--device", too_long, NULL };
	struct stellar_cmd_opts opts;

	memset(longest, 'a', sizeof(longest) - 1);
	longest[sizeof(longest) - 1] = '\0';
	memset(too_long, 'b', sizeof(too_long) - 1);
	too_long[sizeof(too_long) - 1] = '\0';
	assert_int_equal(stellar_parse_cmd(ARGC(ok_argv), ok_argv,
					   STELLAR_OPT_DEVICE, &opts,
					   capture(state)), 0);
	assert_string_equal(opts.dev_name, longest);
	assert_int_equal(stellar_parse_cmd(ARGC(bad_argv), bad_argv,
					   STELLAR_OPT_DEVICE, &opts,
					   capture(state)), -1);
	assert_non_null(strstr(captured_text(state),
			       "is longer than 63 characters"));
}

static void test_cmd_rejects_operand(void **state)
{
	char *argv[] = { "status", "stellar0", NULL };
	struct stellar_cmd_opts opts;

	assert_int_equal(stellar_parse_cmd(ARGC(argv), argv,
					   STELLAR_OPT_DEVICE, &opts,
					   capture(state)), -1);
	assert_string_equal(captured_text(state),
			    "stellar-tool: status: unexpected argument 'stellar0'\n");
}

static void test_cmd_rejects_option_not_accepted(void **state)
{
	char *device_argv[] = { "params", "--device", "x", NULL };
	char *setting_argv[] = { "status", "--spray-paths", "4", NULL };
	struct stellar_cmd_opts opts;

	assert_int_equal(stellar_parse_cmd(ARGC(device_argv), device_argv, 0,
					   &opts, capture(state)), -1);
	assert_int_equal(stellar_parse_cmd(ARGC(setting_argv), setting_argv,
					   STELLAR_OPT_DEVICE, &opts,
					   capture(state)), -1);
	assert_string_equal(captured_text(state),
			    "stellar-tool: params: unrecognized option '--device'\n"
			    "stellar-tool: status: unrecognized option '--spray-paths'\n");
}

static void test_cmd_settings(void **state)
{
	char *argv[] = { "set", "--device", "stellar0", "--spray-paths", "8",
			 "--db-poll-interval=0", "--rx-buf-size", "65536",
			 NULL };
	struct stellar_cmd_opts opts;

	assert_int_equal(stellar_parse_cmd(ARGC(argv), argv,
					   STELLAR_OPT_DEVICE |
					   STELLAR_OPT_SETTINGS,
					   &opts, capture(state)), 0);
	assert_string_equal(opts.dev_name, "stellar0");
	assert_int_equal(stellar_settings_given(&opts.settings), 3);
	assert_true(opts.settings.present[STELLAR_SETTING_SPRAY_PATHS]);
	assert_int_equal(opts.settings.value[STELLAR_SETTING_SPRAY_PATHS], 8);
	assert_true(opts.settings.present[STELLAR_SETTING_DB_POLL_INTERVAL]);
	assert_int_equal(opts.settings.value[STELLAR_SETTING_DB_POLL_INTERVAL],
			 0);
	assert_true(opts.settings.present[STELLAR_SETTING_RX_BUF_SIZE]);
	assert_int_equal(opts.settings.value[STELLAR_SETTING_RX_BUF_SIZE],
			 65536);
	assert_false(opts.settings.present[STELLAR_SETTING_EMTT_CACHE_SIZE]);
}

static void test_cmd_setting_last_wins(void **state)
{
	char *argv[] = { "set", "--emtt-cache-size", "1",
			 "--emtt-cache-size", "2", NULL };
	struct stellar_cmd_opts opts;

	assert_int_equal(stellar_parse_cmd(ARGC(argv), argv,
					   STELLAR_OPT_SETTINGS, &opts,
					   capture(state)), 0);
	assert_int_equal(opts.settings.value[STELLAR_SETTING_EMTT_CACHE_SIZE],
			 2);
}

static void test_cmd_setting_bad_number(void **state)
{
	char *argv[] = { "set", "--device", "x", "--spray-paths", "-1",
			 NULL };
	struct stellar_cmd_opts opts;

	assert_int_equal(stellar_parse_cmd(ARGC(argv), argv,
					   STELLAR_OPT_DEVICE |
					   STELLAR_OPT_SETTINGS,
					   &opts, capture(state)), -1);
	assert_string_equal(captured_text(state),
			    "stellar-tool: set: --spray-paths: '-1' is not a whole number between 0 and 4294967295\n");
}

static void test_cmd_unknown_short_option(void **state)
{
	char *argv[] = { "stats", "-q", NULL };
	struct stellar_cmd_opts opts;

	assert_int_equal(stellar_parse_cmd(ARGC(argv), argv,
					   STELLAR_OPT_DEVICE, &opts,
					   capture(state)), -1);
	assert_string_equal(captured_text(state),
			    "stellar-tool: stats: unknown option '-q'\n");
}

static void test_cmd_parse_is_repeatable(void **state)
{
	/* getopt keeps global state; each parse must start afresh. */
	char *first[] = { "status", "-d", "a", "extra", NULL };
	char *second[] = { "status", "-d", "b", NULL };
	struct stellar_cmd_opts opts;

	assert_int_equal(stellar_parse_cmd(ARGC(first), first,
					   STELLAR_OPT_DEVICE, &opts,
					   capture(state)), -1);
	assert_int_equal(stellar_parse_cmd(ARGC(second), second,
					   STELLAR_OPT_DEVICE, &opts,
					   capture(state)), 0);
	assert_string_equal(opts.dev_name, "b");
}

static void test_size_suffixes(void **state)
{
	uint64_t v = 7;

	(void)state;
	assert_int_equal(stellar_parse_size("0", &v), 0);
	assert_true(v == 0);
	assert_int_equal(stellar_parse_size("100M", &v), 0);
	assert_true(v == 100ULL << 20);
	assert_int_equal(stellar_parse_size("1G", &v), 0);
	assert_true(v == 1ULL << 30);
	assert_int_equal(stellar_parse_size("3K", &v), 0);
	assert_true(v == 3072);
	assert_int_equal(stellar_parse_size("2T", &v), 0);
	assert_true(v == 2ULL << 40);
	assert_int_equal(stellar_parse_size("18446744073709551615", &v), 0);
	assert_true(v == UINT64_MAX);
	v = 7;
	assert_int_equal(stellar_parse_size("18446744073709551616", &v), -1);
	assert_int_equal(stellar_parse_size("16777216T", &v), -1);
	assert_int_equal(stellar_parse_size("", &v), -1);
	assert_int_equal(stellar_parse_size("M", &v), -1);
	assert_int_equal(stellar_parse_size("1MB", &v), -1);
	assert_int_equal(stellar_parse_size("1m", &v), -1);
	assert_int_equal(stellar_parse_size("-1", &v), -1);
	assert_true(v == 7);
}

static void test_cmd_limits(void **state)
{
	char *argv[] = { "set", "--device", "stellar0", "--rate-bytes", "100M",
			 "--rate-pkts", "0", "--max-qp", "64", "--max-mr",
			 "128", "--max-pinned", "1G", NULL };
	char *bad[] = { "set", "--max-qp", "64K", NULL };
	struct stellar_cmd_opts opts;

	assert_int_equal(stellar_parse_cmd(ARGC(argv), argv,
					   STELLAR_OPT_DEVICE |
					   STELLAR_OPT_SETTINGS,
					   &opts, capture(state)), 0);
	assert_int_equal(stellar_settings_given(&opts.settings), 5);
	assert_true(opts.settings.value[STELLAR_SETTING_RATE_BYTES] ==
		    100ULL << 20);
	assert_true(opts.settings.present[STELLAR_SETTING_RATE_PKTS]);
	assert_true(opts.settings.value[STELLAR_SETTING_RATE_PKTS] == 0);
	assert_true(opts.settings.value[STELLAR_SETTING_MAX_QP] == 64);
	assert_true(opts.settings.value[STELLAR_SETTING_MAX_MR] == 128);
	assert_true(opts.settings.value[STELLAR_SETTING_MAX_PINNED] ==
		    1ULL << 30);
	/* the counts take no suffix */
	assert_int_equal(stellar_parse_cmd(ARGC(bad), bad,
					   STELLAR_OPT_SETTINGS, &opts,
					   capture(state)), -1);
	assert_string_equal(captured_text(state),
			    "stellar-tool: set: --max-qp: '64K' is not a whole number between 0 and 4294967295\n");
}

#define CAPTURED_TEST(fn) \
	cmocka_unit_test_setup_teardown(fn, open_capture, close_capture)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_u32_accepts_decimal),
		cmocka_unit_test(test_u32_rejects_other_text),
		cmocka_unit_test(test_size_suffixes),
		CAPTURED_TEST(test_global_finds_command),
		CAPTURED_TEST(test_global_long_options),
		CAPTURED_TEST(test_global_without_command),
		CAPTURED_TEST(test_global_unknown_short_option),
		CAPTURED_TEST(test_global_unknown_long_option),
		CAPTURED_TEST(test_global_stops_at_command),
		CAPTURED_TEST(test_cmd_device_forms),
		CAPTURED_TEST(test_cmd_no_device),
		CAPTURED_TEST(test_cmd_json_and_help),
		CAPTURED_TEST(test_cmd_device_needs_value),
		CAPTURED_TEST(test_cmd_empty_device),
		CAPTURED_TEST(test_cmd_device_name_length),
		CAPTURED_TEST(test_cmd_rejects_operand),
		CAPTURED_TEST(test_cmd_rejects_option_not_accepted),
		CAPTURED_TEST(test_cmd_settings),
		CAPTURED_TEST(test_cmd_setting_last_wins),
		CAPTURED_TEST(test_cmd_setting_bad_number),
		CAPTURED_TEST(test_cmd_limits),
		CAPTURED_TEST(test_cmd_unknown_short_option),
		CAPTURED_TEST(test_cmd_parse_is_repeatable),
	};

	return cmocka_run_group_tests_name("stellar-tool cli", tests, NULL,
					   NULL);
}
