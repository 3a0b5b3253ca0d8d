// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of stellar-tool's packet spray statistics (src/spray.c):
 * decoding STELLAR_CMD_GET_SPRAY replies built here the way the kernel
 * builds them, and the paths and ooo-monitor output.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "spray.h"

static struct nl_msg *new_reply(void)
{
	struct nl_msg *msg = nlmsg_alloc_size(65536);

	assert_non_null(msg);
	assert_non_null(genlmsg_put(msg, 0, 1, 0x20, 0, 0,
				    STELLAR_CMD_GET_SPRAY,
				    STELLAR_GENL_VERSION));
	return msg;
}

static void put_path(struct nl_msg *msg, uint32_t index, uint32_t qps,
		     uint32_t active, uint32_t failed, uint64_t packets)
{
	struct nlattr *nest = nla_nest_start(msg, STELLAR_ATTR_SPRAY_PATH);

	assert_non_null(nest);
	assert_int_equal(nla_put_u32(msg, STELLAR_PATH_ATTR_INDEX, index), 0);
	assert_int_equal(nla_put_u32(msg, STELLAR_PATH_ATTR_QPS, qps), 0);
	assert_int_equal(nla_put_u32(msg, STELLAR_PATH_ATTR_ACTIVE, active), 0);
	assert_int_equal(nla_put_u32(msg, STELLAR_PATH_ATTR_FAILED, failed), 0);
	assert_int_equal(nla_put_u32(msg, STELLAR_PATH_ATTR_PROBING,
				     qps - active - failed), 0);
	assert_int_equal(nla_put_u64(msg, STELLAR_PATH_ATTR_PACKETS, packets),
			 0);
	assert_int_equal(nla_put_u64(msg, STELLAR_PATH_ATTR_BYTES,
				     packets * 4096), 0);
	assert_int_equal(nla_put_u64(msg, STELLAR_PATH_ATTR_RETRANSMITS,
				     index), 0);
	assert_int_equal(nla_put_u64(msg, STELLAR_PATH_ATTR_LOSSES, index), 0);
	assert_int_equal(nla_put_u64(msg, STELLAR_PATH_ATTR_ECN_MARKS, 0), 0);
	assert_int_equal(nla_put_u32(msg, STELLAR_PATH_ATTR_SRTT_US,
				     100 + index), 0);
	assert_int_equal(nla_put_u32(msg, STELLAR_PATH_ATTR_BACK_DEAD,
				     failed), 0);
	assert_int_equal(nla_put_u64(msg, STELLAR_PATH_ATTR_BACK_FAILURES,
				     3 * failed), 0);
	nla_nest_end(msg, nest);
}

static void put_ooo(struct nl_msg *msg, uint64_t scale)
{
	struct nlattr *nest = nla_nest_start(msg, STELLAR_ATTR_SPRAY_OOO);
	int i;

	assert_non_null(nest);
	assert_int_equal(nla_put(msg, STELLAR_SPRAY_OOO_PAD, 0, NULL), 0);
	for (i = 0; i < STELLAR_SPRAY_OOO_BUCKETS; i++)
		assert_int_equal(nla_put_u64(msg, i + 1, scale * (i + 1)), 0);
	nla_nest_end(msg, nest);
	assert_int_equal(nla_put_u32(msg, STELLAR_ATTR_SPRAY_OOO_MAX, 37), 0);
}

/* stellar0: 4 paths, path 2 failed on its one QP, histogram * @scale. */
static struct nl_msg *spray_reply(uint64_t scale)
{
	struct nl_msg *msg = new_reply();
	uint32_t i;

	assert_int_equal(nla_put_string(msg, STELLAR_ATTR_DEV_NAME,
					"stellar0"), 0);
	assert_int_equal(nla_put_u32(msg, STELLAR_ATTR_SPRAY_PATHS, 4), 0);
	assert_int_equal(nla_put_u32(msg, STELLAR_ATTR_SPRAY_QPS, 1), 0);
	put_ooo(msg, scale);
	for (i = 0; i < 4; i++)
		put_path(msg, i, 1, i == 2 ? 0 : 1, i == 2, 1000 * scale);
	return msg;
}

static void decode(struct nl_msg *msg, struct stellar_spray_info *info)
{
	assert_int_equal(stellar_decode_spray(msg, info), 0);
	nlmsg_free(msg);
}

static char *print_to_string(const struct stellar_spray_info *info,
			     bool json)
{
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);

	assert_non_null(fp);
	stellar_print_spray(fp, info, json);
	fclose(fp);
	return text;
}

static void test_decode_full(void **state)
{
	struct stellar_spray_info info;

	(void)state;
	decode(spray_reply(1), &info);
	assert_string_equal(info.dev_name, "stellar0");
	assert_int_equal(info.spray_paths, 4);
	assert_int_equal(info.qps, 1);
	assert_int_equal(info.ooo_max, 37);
	assert_int_equal(info.ooo[0], 1);
	assert_int_equal(info.ooo[STELLAR_SPRAY_OOO_BUCKETS - 1],
			 STELLAR_SPRAY_OOO_BUCKETS);
	assert_int_equal(info.nr_paths, 4);
	assert_int_equal(info.path[3].index, 3);
	assert_int_equal(info.path[3].packets, 1000);
	assert_int_equal(info.path[3].bytes, 4096000);
	assert_int_equal(info.path[3].srtt_us, 103);
	assert_int_equal(info.path[2].failed, 1);
	assert_string_equal(stellar_path_state(&info.path[2]), "failed");
	assert_string_equal(stellar_path_state(&info.path[1]), "active");
}

static void test_decode_needs_device(void **state)
{
	struct stellar_spray_info info;
	struct nl_msg *msg = new_reply();

	(void)state;
	assert_int_equal(nla_put_u32(msg, STELLAR_ATTR_SPRAY_QPS, 1), 0);
	assert_int_equal(stellar_decode_spray(msg, &info), -EINVAL);
	nlmsg_free(msg);
}

static void test_decode_path_without_index(void **state)
{
	struct stellar_spray_info info;
	struct nl_msg *msg = new_reply();
	struct nlattr *nest;

	(void)state;
	assert_int_equal(nla_put_string(msg, STELLAR_ATTR_DEV_NAME, "s0"), 0);
	nest = nla_nest_start(msg, STELLAR_ATTR_SPRAY_PATH);
	assert_int_equal(nla_put_u32(msg, STELLAR_PATH_ATTR_QPS, 1), 0);
	nla_nest_end(msg, nest);
	assert_int_equal(stellar_decode_spray(msg, &info), -EINVAL);
	nlmsg_free(msg);
}

static void test_decode_short_u32(void **state)
{
	struct stellar_spray_info info;
	struct nl_msg *msg = new_reply();

	(void)state;
	assert_int_equal(nla_put_string(msg, STELLAR_ATTR_DEV_NAME, "s0"), 0);
	assert_int_equal(nla_put_u8(msg, STELLAR_ATTR_SPRAY_QPS, 1), 0);
	assert_int_equal(stellar_decode_spray(msg, &info), -EINVAL);
	nlmsg_free(msg);
}

static void test_decode_too_many_paths(void **state)
{
	struct stellar_spray_info info;
	struct nl_msg *msg = new_reply();
	uint32_t i;

	(void)state;
	assert_int_equal(nla_put_string(msg, STELLAR_ATTR_DEV_NAME, "s0"), 0);
	assert_int_equal(nla_put_u32(msg, 200, 5), 0);	/* a newer attribute */
	for (i = 0; i < STELLAR_TOOL_MAX_PATHS + 3; i++)
		put_path(msg, i, 2, 1, 1, i);
	decode(msg, &info);
	assert_int_equal(info.nr_paths, STELLAR_TOOL_MAX_PATHS);
	assert_string_equal(stellar_path_state(&info.path[5]), "degraded");
}

static void test_ooo_labels(void **state)
{
	char buf[24];

	(void)state;
	stellar_ooo_label(0, buf, sizeof(buf));
	assert_string_equal(buf, "1");
	stellar_ooo_label(1, buf, sizeof(buf));
	assert_string_equal(buf, "2-3");
	stellar_ooo_label(5, buf, sizeof(buf));
	assert_string_equal(buf, "32-63");
	stellar_ooo_label(STELLAR_SPRAY_OOO_BUCKETS - 1, buf, sizeof(buf));
	assert_string_equal(buf, "2048+");
}

static void test_print_text(void **state)
{
	struct stellar_spray_info info;
	char *text;

	(void)state;
	decode(spray_reply(1), &info);
	text = print_to_string(&info, false);
	assert_non_null(strstr(text, "stellar0: spray_paths 4, 1 QP spraying\n"));
	assert_non_null(strstr(text, "     2 failed      1         1000        4096000           2          2          0         3      102\n"));
	assert_non_null(strstr(text, "  out-of-order depth: 1:1 2-3:2 4-7:3 "));
	assert_non_null(strstr(text, " 2048+:12 max:37\n"));
	free(text);
}

static void test_print_json(void **state)
{
	struct stellar_spray_info info;
	char *text;

	(void)state;
	decode(spray_reply(1), &info);
	text = print_to_string(&info, true);
	assert_non_null(strstr(text, "{\"device\":\"stellar0\",\"spray_paths\":4,\"qps\":1,\"paths\":[{\"index\":0,\"state\":\"active\",\"qps\":1,"));
	assert_non_null(strstr(text, "\"ecn_marks\":0,\"back_dead\":1,\"back_failures\":3,\"srtt_us\":102}"));
	assert_non_null(strstr(text, "\"ooo_depth\":{\"1\":1,\"2-3\":2,"));
	assert_non_null(strstr(text, "\"2048+\":12},\"ooo_max\":37}"));
	free(text);
}

static void test_monitor_frame(void **state)
{
	struct stellar_spray_info prev, cur;
	char *text = NULL;
	size_t len = 0;
	FILE *fp;

	(void)state;
	decode(spray_reply(1), &prev);
	decode(spray_reply(3), &cur);
	fp = open_memstream(&text, &len);
	stellar_print_ooo_frame(fp, &prev, &cur, 500, true);
	fclose(fp);
	/* bucket 0: 3 - 1 = 2 in the interval; 3000 - 1000 packets in 0.5 s */
	assert_non_null(strstr(text, "\"interval_ms\":500,\"qps\":1,\"ooo_interval\":{\"1\":2,\"2-3\":4,"));
	assert_non_null(strstr(text, "\"ooo_total\":{\"1\":3,"));
	assert_non_null(strstr(text, "{\"index\":1,\"state\":\"active\",\"packets_per_s\":4000.0,\"mbytes_per_s\":16.384,"));
	/* One line per refresh. */
	assert_ptr_equal(strchr(text, '\n'), text + len - 1);
	free(text);

	text = NULL;
	fp = open_memstream(&text, &len);
	stellar_print_ooo_frame(fp, NULL, &cur, 1000, false);
	fclose(fp);
	assert_non_null(strstr(text, "stellar0: out-of-order arrivals, 1000 ms interval, 1 QP spraying\n"));
	assert_non_null(strstr(text, "  2048+              36             36\n"));
	assert_non_null(strstr(text, "  deepest: 37\n"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_full),
		cmocka_unit_test(test_decode_needs_device),
		cmocka_unit_test(test_decode_path_without_index),
		cmocka_unit_test(test_decode_short_u32),
		cmocka_unit_test(test_decode_too_many_paths),
		cmocka_unit_test(test_ooo_labels),
		cmocka_unit_test(test_print_text),
		cmocka_unit_test(test_print_json),
		cmocka_unit_test(test_monitor_frame),
	};

	return cmocka_run_group_tests_name("spray", tests, NULL, NULL);
}
