// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of stellar-tool's reply decoding (src/info.c), on messages
 * built here the way the kernel builds them.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "info.h"

static struct nl_msg *new_reply(uint8_t cmd)
{
	struct nl_msg *msg = nlmsg_alloc();

	assert_non_null(msg);
	assert_non_null(genlmsg_put(msg, 0, 1, 0x20, 0, 0, cmd,
				    STELLAR_GENL_VERSION));
	return msg;
}

/* Like the kernel's nla_put_u64_64bit(): a PAD attribute, then the u64. */
static void put_padded_u64(struct nl_msg *msg, int type, uint64_t value)
{
	assert_int_equal(nla_put(msg, STELLAR_STAT_PAD, 0, NULL), 0);
	assert_int_equal(nla_put_u64(msg, type, value), 0);
}

static void put_settings(struct nl_msg *msg)
{
	assert_int_equal(nla_put_u32(msg, STELLAR_ATTR_RX_BUF_SIZE, 1 << 20),
			 0);
	assert_int_equal(nla_put_u32(msg, STELLAR_ATTR_SPRAY_PATHS, 4), 0);
	assert_int_equal(nla_put_u32(msg, STELLAR_ATTR_EMTT_CACHE_SIZE, 64),
			 0);
	assert_int_equal(nla_put_u32(msg, STELLAR_ATTR_DB_POLL_INTERVAL, 0),
			 0);
}

static struct nl_msg *full_dev_reply(void)
{
	struct nl_msg *msg = new_reply(STELLAR_CMD_GET_DEV);
	struct nlattr *nest;

	assert_int_equal(nla_put_string(msg, STELLAR_ATTR_DEV_NAME,
					"stellar0"), 0);
	assert_int_equal(nla_put_u32(msg, STELLAR_ATTR_DEV_INDEX, 5), 0);
	assert_int_equal(nla_put_string(msg, STELLAR_ATTR_NETDEV_NAME,
					"eth1"), 0);
	assert_int_equal(nla_put_u32(msg, STELLAR_ATTR_NETDEV_IFINDEX, 3), 0);
	assert_int_equal(nla_put_u8(msg, STELLAR_ATTR_PORT_STATE, 4), 0);
	assert_int_equal(nla_put_u32(msg, STELLAR_ATTR_MTU, 4096), 0);
	put_settings(msg);
	nest = nla_nest_start(msg, STELLAR_ATTR_STATS);
	assert_non_null(nest);
	put_padded_u64(msg, STELLAR_STAT_RX_PACKETS, 7);
	put_padded_u64(msg, STELLAR_STAT_RX_DROP_NO_DEV, 1ULL << 40);
	nla_nest_end(msg, nest);
	return msg;
}

static int decode(struct nl_msg *msg, struct stellar_dev_info *info)
{
	struct nlattr *tb[STELLAR_ATTR_MAX + 1];
	int ret = stellar_parse_attrs(msg, tb);

	return ret ? ret : stellar_decode_dev(tb, info);
}

static void test_decode_full_dev(void **state)
{
	struct nl_msg *msg = full_dev_reply();
	struct stellar_dev_info info;

	(void)state;
	assert_int_equal(decode(msg, &info), 0);
	assert_string_equal(info.dev_name, "stellar0");
	assert_string_equal(info.netdev_name, "eth1");
	assert_int_equal(info.dev_index, 5);
	assert_int_equal(info.netdev_ifindex, 3);
	assert_int_equal(info.port_state, 4);
	assert_int_equal(info.mtu, 4096);
	assert_true(stellar_has(&info, STELLAR_ATTR_MTU));
	assert_true(stellar_has(&info, STELLAR_ATTR_STATS));
	assert_int_equal(info.settings.value[STELLAR_SETTING_RX_BUF_SIZE],
			 1 << 20);
	assert_int_equal(info.settings.value[STELLAR_SETTING_SPRAY_PATHS], 4);
	assert_true(info.settings.present[STELLAR_SETTING_DB_POLL_INTERVAL]);
	assert_int_equal(info.counters.count, 2);
	assert_int_equal(info.counters.entry[0].type, STELLAR_STAT_RX_PACKETS);
	assert_int_equal(info.counters.entry[0].value, 7);
	assert_int_equal(info.counters.entry[1].type,
			 STELLAR_STAT_RX_DROP_NO_DEV);
	assert_true(info.counters.entry[1].value == 1ULL << 40);
	nlmsg_free(msg);
}

static void test_decode_only_name(void **state)
{
	struct nl_msg *msg = new_reply(STELLAR_CMD_GET_DEV);
	struct stellar_dev_info info;

	(void)state;
	assert_int_equal(nla_put_string(msg, STELLAR_ATTR_DEV_NAME, "s"), 0);
	assert_int_equal(decode(msg, &info), 0);
	assert_string_equal(info.dev_name, "s");
	assert_int_equal(info.present, 1u << STELLAR_ATTR_DEV_NAME);
	assert_false(info.settings.present[STELLAR_SETTING_RX_BUF_SIZE]);
	assert_int_equal(info.counters.count, 0);
	nlmsg_free(msg);
}

static void test_decode_requires_name(void **state)
{
	struct nl_msg *msg = new_reply(STELLAR_CMD_GET_DEV);
	struct stellar_dev_info info;

	(void)state;
	assert_int_equal(nla_put_u32(msg, STELLAR_ATTR_MTU, 1024), 0);
	assert_int_equal(decode(msg, &info), -EINVAL);
	nlmsg_free(msg);
}

static void test_newer_attributes_ignored(void **state)
{
	struct nl_msg *msg = full_dev_reply();
	struct stellar_dev_info info;

	(void)state;
	assert_int_equal(nla_put_u32(msg, STELLAR_ATTR_MAX + 1, 99), 0);
	assert_int_equal(nla_put_string(msg, STELLAR_ATTR_MAX + 7, "x"), 0);
	assert_int_equal(decode(msg, &info), 0);
	assert_string_equal(info.dev_name, "stellar0");
	nlmsg_free(msg);
}

static void test_newer_counters_kept(void **state)
{
	struct nl_msg *msg = new_reply(STELLAR_CMD_GET_DEV);
	struct stellar_dev_info info;
	struct nlattr *nest;

	(void)state;
	assert_int_equal(nla_put_string(msg, STELLAR_ATTR_DEV_NAME, "s"), 0);
	nest = nla_nest_start(msg, STELLAR_ATTR_STATS);
	put_padded_u64(msg, 200, 12);
	nla_nest_end(msg, nest);
	assert_int_equal(decode(msg, &info), 0);
	assert_int_equal(info.counters.count, 1);
	assert_int_equal(info.counters.entry[0].type, 200);
	assert_int_equal(info.counters.entry[0].value, 12);
	nlmsg_free(msg);
}

static void test_too_many_counters_truncated(void **state)
{
	struct nl_msg *msg = nlmsg_alloc_size(16384);
	struct stellar_dev_info info;
	struct nlattr *nest;
	int i;

	(void)state;
	assert_non_null(genlmsg_put(msg, 0, 1, 0x20, 0, 0,
				    STELLAR_CMD_GET_DEV, 1));
	assert_int_equal(nla_put_string(msg, STELLAR_ATTR_DEV_NAME, "s"), 0);
	nest = nla_nest_start(msg, STELLAR_ATTR_STATS);
	for (i = 0; i < STELLAR_MAX_COUNTERS + 10; i++)
		put_padded_u64(msg, 100 + i, i);
	nla_nest_end(msg, nest);
	assert_int_equal(decode(msg, &info), 0);
	assert_int_equal(info.counters.count, STELLAR_MAX_COUNTERS);
	assert_int_equal(info.counters.entry[STELLAR_MAX_COUNTERS - 1].value,
			 STELLAR_MAX_COUNTERS - 1);
	nlmsg_free(msg);
}

static void test_short_counter_rejected(void **state)
{
	struct nl_msg *msg = new_reply(STELLAR_CMD_GET_DEV);
	struct stellar_dev_info info;
	struct nlattr *nest;

	(void)state;
	assert_int_equal(nla_put_string(msg, STELLAR_ATTR_DEV_NAME, "s"), 0);
	nest = nla_nest_start(msg, STELLAR_ATTR_STATS);
	assert_int_equal(nla_put_u32(msg, STELLAR_STAT_RX_BYTES, 1), 0);
	nla_nest_end(msg, nest);
	assert_int_equal(decode(msg, &info), -EINVAL);
	nlmsg_free(msg);
}

static void test_wrong_width_rejected(void **state)
{
	struct nl_msg *msg = new_reply(STELLAR_CMD_GET_DEV);
	struct stellar_dev_info info;

	(void)state;
	assert_int_equal(nla_put_string(msg, STELLAR_ATTR_DEV_NAME, "s"), 0);
	assert_int_equal(nla_put_u8(msg, STELLAR_ATTR_MTU, 1), 0);
	assert_int_equal(decode(msg, &info), -EINVAL);
	nlmsg_free(msg);
}

static void test_unterminated_name_rejected(void **state)
{
	struct nl_msg *msg = new_reply(STELLAR_CMD_GET_DEV);
	struct stellar_dev_info info;

	(void)state;
	assert_int_equal(nla_put(msg, STELLAR_ATTR_DEV_NAME, 3, "abc"), 0);
	assert_int_equal(decode(msg, &info), -EINVAL);
	nlmsg_free(msg);
}

static void test_overlong_name_rejected(void **state)
{
	struct nl_msg *msg = new_reply(STELLAR_CMD_GET_DEV);
	struct stellar_dev_info info;
	char name[STELLAR_NAME_LEN + 1];

	(void)state;
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	assert_int_equal(nla_put_string(msg, STELLAR_ATTR_DEV_NAME, name), 0);
	assert_int_equal(decode(msg, &info), -EINVAL);
	nlmsg_free(msg);
}

static void test_decode_params(void **state)
{
	struct nl_msg *msg = new_reply(STELLAR_CMD_GET_PARAMS);
	struct nlattr *tb[STELLAR_ATTR_MAX + 1];
	struct stellar_settings settings;

	(void)state;
	put_settings(msg);
	assert_int_equal(stellar_parse_attrs(msg, tb), 0);
	assert_int_equal(stellar_decode_settings(tb, &settings), 0);
	assert_int_equal(settings.value[STELLAR_SETTING_RX_BUF_SIZE], 1 << 20);
	assert_int_equal(settings.value[STELLAR_SETTING_SPRAY_PATHS], 4);
	assert_int_equal(settings.value[STELLAR_SETTING_EMTT_CACHE_SIZE], 64);
	assert_true(settings.present[STELLAR_SETTING_DB_POLL_INTERVAL]);
	assert_int_equal(settings.value[STELLAR_SETTING_DB_POLL_INTERVAL], 0);
	nlmsg_free(msg);
}

static void test_setting_table_matches_uapi(void **state)
{
	(void)state;
	assert_int_equal(stellar_setting_descs[STELLAR_SETTING_RX_BUF_SIZE].attr,
			 STELLAR_ATTR_RX_BUF_SIZE);
	assert_int_equal(stellar_setting_descs[STELLAR_SETTING_SPRAY_PATHS].attr,
			 STELLAR_ATTR_SPRAY_PATHS);
	assert_int_equal(stellar_setting_descs[STELLAR_SETTING_EMTT_CACHE_SIZE].attr,
			 STELLAR_ATTR_EMTT_CACHE_SIZE);
	assert_int_equal(stellar_setting_descs[STELLAR_SETTING_DB_POLL_INTERVAL].attr,
			 STELLAR_ATTR_DB_POLL_INTERVAL);
	assert_int_equal(stellar_setting_descs[STELLAR_SETTING_PIN_MODE].attr,
			 STELLAR_ATTR_PIN_MODE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_full_dev),
		cmocka_unit_test(test_decode_only_name),
		cmocka_unit_test(test_decode_requires_name),
		cmocka_unit_test(test_newer_attributes_ignored),
		cmocka_unit_test(test_newer_counters_kept),
		cmocka_unit_test(test_too_many_counters_truncated),
		cmocka_unit_test(test_short_counter_rejected),
		cmocka_unit_test(test_wrong_width_rejected),
		cmocka_unit_test(test_unterminated_name_rejected),
		cmocka_unit_test(test_overlong_name_rejected),
		cmocka_unit_test(test_decode_params),
		cmocka_unit_test(test_setting_table_matches_uapi),
	};

	return cmocka_run_group_tests_name("stellar-tool info", tests, NULL,
					   NULL);
}
