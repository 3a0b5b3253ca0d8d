// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of stellar-tool's output formatting (src/format.c).
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

#include "format.h"

/* Output written by a formatter, collected in memory. */
struct output {
	char *text;
	size_t len;
	FILE *fp;
};

static int open_output(void **state)
{
	struct output *out = calloc(1, sizeof(*out));

	assert_non_null(out);
	out->fp = open_memstream(&out->text, &out->len);
	assert_non_null(out->fp);
	*state = out;
	return 0;
}

static int close_output(void **state)
{
	struct output *out = *state;

	fclose(out->fp);
	free(out->text);
	free(out);
	return 0;
}

static FILE *out_fp(void **state)
{
	return ((struct output *)*state)->fp;
}

static const char *out_text(void **state)
{
	struct output *out = *state;

	fflush(out->fp);
	return out->text;
}

static void set_setting(struct stellar_settings *settings, int which,
			uint32_t value)
{
	settings->present[which] = true;
	settings->value[which] = value;
}

static void add_counter(struct stellar_counters *counters, uint16_t type,
			uint64_t value)
{
	counters->entry[counters->count].type = type;
	counters->entry[counters->count].value = value;
	counters->count++;
}

/* A device as the kernel reports it, with every attribute present. */
static void fill_dev(struct stellar_dev_info *info, const char *name)
{
	int attr;

	memset(info, 0, sizeof(*info));
	strcpy(info->dev_name, name);
	strcpy(info->netdev_name, "eth0");
	info->dev_index = 3;
	info->netdev_ifindex = 2;
	info->port_state = 4;
	info->mtu = 1024;
	for (attr = STELLAR_ATTR_DEV_NAME; attr <= STELLAR_ATTR_DB_POLL_INTERVAL;
	     attr++)
		info->present |= 1u << attr;
	set_setting(&info->settings, STELLAR_SETTING_RX_BUF_SIZE, 1048576);
	set_setting(&info->settings, STELLAR_SETTING_SPRAY_PATHS, 4);
	set_setting(&info->settings, STELLAR_SETTING_EMTT_CACHE_SIZE, 64);
	set_setting(&info->settings, STELLAR_SETTING_DB_POLL_INTERVAL, 0);
	add_counter(&info->counters, STELLAR_STAT_RX_PACKETS, 10);
	add_counter(&info->counters, STELLAR_STAT_RX_DROP_BAD_ICRC,
		    18446744073709551615ULL);
}

static void test_port_state_names(void **state)
{
	static const char *const expected[] = {
		"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER",
	};
	char buf[32];
	unsigned int i;

	(void)state;
	for (i = 0; i < 6; i++)
		assert_string_equal(stellar_format_port_state(i, buf,
							      sizeof(buf)),
				    expected[i]);
	assert_string_equal(stellar_format_port_state(6, buf, sizeof(buf)),
			    "UNKNOWN(6)");
	assert_string_equal(stellar_format_port_state(255, buf, sizeof(buf)),
			    "UNKNOWN(255)");
}

static void test_stat_names(void **state)
{
	char buf[32];

	(void)state;
	assert_string_equal(stellar_format_stat_name(STELLAR_STAT_RX_PACKETS,
						     buf, sizeof(buf)),
			    "rx_packets");
	assert_string_equal(stellar_format_stat_name(STELLAR_STAT_RX_DROP_NO_DEV,
						     buf, sizeof(buf)),
			    "rx_drop_no_dev");
	/* Counters added to the kernel later still get shown. */
	assert_string_equal(stellar_format_stat_name(99, buf, sizeof(buf)),
			    "stat_99");
	assert_null(stellar_stat_name(STELLAR_STAT_PAD));
}

static void test_every_stat_has_a_name(void **state)
{
	int stat;

	(void)state;
	for (stat = STELLAR_STAT_UNSPEC + 1; stat < STELLAR_STAT_PAD; stat++)
		assert_non_null(stellar_stat_name(stat));
}

static void test_json_string_escapes(void **state)
{
	stellar_json_string(out_fp(state), "a\"b\\c\nd\x01\x7f" "e");
	assert_string_equal(out_text(state),
			    "\"a\\\"b\\\\c\\u000ad\\u0001\\u007fe\"");
}

static void test_settings_text_skips_absent(void **state)
{
	struct stellar_settings settings = { 0 };

	set_setting(&settings, STELLAR_SETTING_SPRAY_PATHS, 16);
	set_setting(&settings, STELLAR_SETTING_DB_POLL_INTERVAL, 100);
	stellar_print_settings(out_fp(state), &settings, false, "");
	assert_string_equal(out_text(state),
			    "spray_paths: 16\n"
			    "db_poll_interval: 100\n");
}

static void test_settings_json(void **state)
{
	struct stellar_settings settings = { 0 };

	set_setting(&settings, STELLAR_SETTING_RX_BUF_SIZE, 4096);
	set_setting(&settings, STELLAR_SETTING_EMTT_CACHE_SIZE, 0);
	stellar_print_settings(out_fp(state), &settings, true, "");
	assert_string_equal(out_text(state),
			    "{\"rx_buf_size\":4096,\"emtt_cache_size\":0}");
}

static void test_counters_text(void **state)
{
	struct stellar_counters counters = { 0 };

	add_counter(&counters, STELLAR_STAT_TX_BYTES, 123456789012ULL);
	add_counter(&counters, 42, 7);
	stellar_print_counters(out_fp(state), &counters, false, "");
	assert_string_equal(out_text(state),
			    "tx_bytes: 123456789012\n"
			    "stat_42: 7\n");
}

static void test_counters_json_empty(void **state)
{
	struct stellar_counters counters = { 0 };

	stellar_print_counters(out_fp(state), &counters, true, "");
	assert_string_equal(out_text(state), "{}");
}

static void test_dev_text(void **state)
{
	struct stellar_dev_info info;

	fill_dev(&info, "stellar0");
	stellar_print_dev(out_fp(state), &info, false);
	assert_string_equal(out_text(state),
			    "stellar0 (index 3):\n"
			    "  netdev: eth0 (ifindex 2)\n"
			    "  port_state: ACTIVE\n"
			    "  mtu: 1024\n"
			    "  settings:\n"
			    "    rx_buf_size: 1048576\n"
			    "    spray_paths: 4\n"
			    "    emtt_cache_size: 64\n"
			    "    db_poll_interval: 0\n"
			    "  counters:\n"
			    "    rx_packets: 10\n"
			    "    rx_drop_bad_icrc: 18446744073709551615\n");
}

static void test_dev_text_minimal(void **state)
{
	/* Only the name: nothing made up for what the kernel left out. */
	struct stellar_dev_info info = { 0 };

	strcpy(info.dev_name, "stellar9");
	info.present = 1u << STELLAR_ATTR_DEV_NAME;
	stellar_print_dev(out_fp(state), &info, false);
	assert_string_equal(out_text(state),
			    "stellar9:\n");
}

static void test_dev_json(void **state)
{
	struct stellar_dev_info info;

	fill_dev(&info, "stellar0");
	info.port_state = 9;
	stellar_print_dev(out_fp(state), &info, true);
	assert_string_equal(out_text(state),
			    "{\"name\":\"stellar0\",\"index\":3,"
			    "\"netdev\":\"eth0\",\"netdev_ifindex\":2,"
			    "\"port_state\":\"UNKNOWN(9)\",\"mtu\":1024,"
			    "\"settings\":{\"rx_buf_size\":1048576,"
			    "\"spray_paths\":4,\"emtt_cache_size\":64,"
			    "\"db_poll_interval\":0},"
			    "\"counters\":{\"rx_packets\":10,"
			    "\"rx_drop_bad_icrc\":18446744073709551615}}");
}

static void test_dev_list_text_separates_blocks(void **state)
{
	struct stellar_dev_info devs[2];

	fill_dev(&devs[0], "stellar0");
	fill_dev(&devs[1], "stellar1");
	devs[1].present &= ~(1u << STELLAR_ATTR_STATS);
	devs[1].port_state = 1;
	stellar_print_dev_list(out_fp(state), devs, 2, false);
	assert_non_null(strstr(out_text(state),
			       "    rx_drop_bad_icrc: 18446744073709551615\n"
			       "\n"
			       "stellar1 (index 3):\n"
			       "  netdev: eth0 (ifindex 2)\n"
			       "  port_state: DOWN\n"));
	assert_null(strstr(strstr(out_text(state), "stellar1"), "counters"));
}

static void test_dev_list_json(void **state)
{
	struct stellar_dev_info devs[2] = { 0 };

	strcpy(devs[0].dev_name, "a");
	strcpy(devs[1].dev_name, "b\"");
	stellar_print_dev_list(out_fp(state), devs, 2, true);
	assert_string_equal(out_text(state),
			    "[{\"name\":\"a\"},{\"name\":\"b\\\"\"}]\n");
}

static void test_dev_list_empty(void **state)
{
	stellar_print_dev_list(out_fp(state), NULL, 0, true);
	stellar_print_dev_list(out_fp(state), NULL, 0, false);
	assert_string_equal(out_text(state), "[]\n");
}

#define OUTPUT_TEST(fn) \
	cmocka_unit_test_setup_teardown(fn, open_output, close_output)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_port_state_names),
		cmocka_unit_test(test_stat_names),
		cmocka_unit_test(test_every_stat_has_a_name),
		OUTPUT_TEST(test_json_string_escapes),
		OUTPUT_TEST(test_settings_text_skips_absent),
		OUTPUT_TEST(test_settings_json),
		OUTPUT_TEST(test_counters_text),
		OUTPUT_TEST(test_counters_json_empty),
		OUTPUT_TEST(test_dev_text),
		OUTPUT_TEST(test_dev_text_minimal),
		OUTPUT_TEST(test_dev_json),
		OUTPUT_TEST(test_dev_list_text_separates_blocks),
		OUTPUT_TEST(test_dev_list_json),
		OUTPUT_TEST(test_dev_list_empty),
	};

	return cmocka_run_group_tests_name("stellar-tool format", tests, NULL,
					   NULL);
}
