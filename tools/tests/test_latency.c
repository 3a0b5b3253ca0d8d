// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of stellar-tool's latency telemetry and top (src/latency.c,
 * src/top.c): decoding STELLAR_CMD_GET_LATENCY replies built here the way
 * the kernel builds them, the latency output, and top's screens from two
 * readings.
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

#include "latency.h"
#include "top.h"

static void put_seg(struct nl_msg *msg, uint32_t seg, uint32_t bucket,
		    uint64_t n)
{
	struct nlattr *nest = nla_nest_start(msg, STELLAR_ATTR_LAT_SEGMENT);
	struct nlattr *b;

	assert_non_null(nest);
	assert_int_equal(nla_put_u32(msg, STELLAR_LAT_ATTR_SEGMENT_ID, seg), 0);
	assert_int_equal(nla_put_u64(msg, STELLAR_LAT_ATTR_COUNT, n), 0);
	assert_int_equal(nla_put_u64(msg, STELLAR_LAT_ATTR_SUM_NS,
				     n * (3ULL << (8 + bucket))), 0);
	b = nla_nest_start(msg, STELLAR_LAT_ATTR_BUCKETS);
	assert_non_null(b);
	assert_int_equal(nla_put(msg, STELLAR_LAT_BUCKET_PAD, 0, NULL), 0);
	if (n)
		assert_int_equal(nla_put_u64(msg, bucket + 1, n), 0);
	nla_nest_end(msg, b);
	nla_nest_end(msg, nest);
}

/* @n samples in @bucket of segment @seg's size class @class. */
static void put_size(struct nl_msg *msg, uint32_t seg, uint32_t class,
		     uint32_t bucket, uint64_t n)
{
	struct nlattr *nest = nla_nest_start(msg, STELLAR_ATTR_LAT_SIZE);
	struct nlattr *b;

	assert_non_null(nest);
	assert_int_equal(nla_put_u32(msg, STELLAR_LAT_ATTR_SEGMENT_ID, seg), 0);
	assert_int_equal(nla_put_u32(msg, STELLAR_LAT_ATTR_SIZE_CLASS, class),
			 0);
	assert_int_equal(nla_put_u64(msg, STELLAR_LAT_ATTR_COUNT, n), 0);
	assert_int_equal(nla_put_u64(msg, STELLAR_LAT_ATTR_SUM_NS,
				     n * (3ULL << (8 + bucket))), 0);
	b = nla_nest_start(msg, STELLAR_LAT_ATTR_BUCKETS);
	assert_non_null(b);
	assert_int_equal(nla_put_u64(msg, bucket + 1, n), 0);
	nla_nest_end(msg, b);
	nla_nest_end(msg, nest);
}

/*
 * stellar0: every segment's @n samples in bucket 5 + segment, path 2's
 * RTTs; for the device also a microburst and the network segment of two
 * size classes.
 */
static struct nl_msg *lat_reply(uint64_t n, bool qp)
{
	struct nl_msg *msg = nlmsg_alloc_size(65536);
	struct nlattr *nest, *b;
	uint32_t seg;

	assert_non_null(msg);
	assert_non_null(genlmsg_put(msg, 0, 1, 0x20, 0, 0,
				    STELLAR_CMD_GET_LATENCY,
				    STELLAR_GENL_VERSION));
	assert_int_equal(nla_put_string(msg, STELLAR_ATTR_DEV_NAME, "stellar0"),
			 0);
	assert_int_equal(nla_put_u8(msg, STELLAR_ATTR_LAT_ENABLED, 1), 0);
	assert_int_equal(nla_put_u32(msg, STELLAR_ATTR_LAT_BURST_US, 500), 0);
	if (qp)
		assert_int_equal(nla_put_u32(msg, STELLAR_ATTR_QPN, 17), 0);
	for (seg = 0; seg < __STELLAR_LAT_SEG_MAX; seg++)
		put_seg(msg, seg, 5 + seg, n);
	/* a segment from a newer kernel is skipped */
	put_seg(msg, 99, 1, 1);
	if (!qp) {
		nest = nla_nest_start(msg, STELLAR_ATTR_LAT_BURST);
		assert_int_equal(nla_put_u32(msg, STELLAR_BURST_ATTR_PATH, 3), 0);
		assert_int_equal(nla_put_u64(msg, STELLAR_BURST_ATTR_COUNT, 7), 0);
		assert_int_equal(nla_put_u64(msg, STELLAR_BURST_ATTR_LAST_NS,
					     1000000000ULL), 0);
		assert_int_equal(nla_put_u32(msg, STELLAR_BURST_ATTR_MAX_US, 900),
				 0);
		nla_nest_end(msg, nest);
		put_size(msg, STELLAR_LAT_SEG_NETWORK, STELLAR_LAT_SIZE_256, 4,
			 60);
		put_size(msg, STELLAR_LAT_SEG_NETWORK, STELLAR_LAT_SIZE_LARGE, 8,
			 40);
		/* a class from a newer kernel is skipped */
		put_size(msg, STELLAR_LAT_SEG_NETWORK, 99, 1, 1);
	}
	nest = nla_nest_start(msg, STELLAR_ATTR_LAT_PATH);
	assert_int_equal(nla_put_u32(msg, STELLAR_LAT_ATTR_PATH, 2), 0);
	assert_int_equal(nla_put_u64(msg, STELLAR_LAT_ATTR_COUNT, 9), 0);
	assert_int_equal(nla_put_u64(msg, STELLAR_LAT_ATTR_SUM_NS, 9000), 0);
	b = nla_nest_start(msg, STELLAR_LAT_ATTR_BUCKETS);
	assert_int_equal(nla_put_u64(msg, 1, 9), 0);
	nla_nest_end(msg, b);
	nla_nest_end(msg, nest);
	return msg;
}

static void test_decode(void **state)
{
	struct stellar_lat_info info;
	struct nl_msg *msg = lat_reply(100, false);

	(void)state;
	assert_int_equal(stellar_decode_latency(msg, &info), 0);
	assert_string_equal(info.dev_name, "stellar0");
	assert_true(info.enabled);
	assert_false(info.has_qpn);
	assert_int_equal(info.burst_us, 500);
	assert_int_equal(info.seg[STELLAR_LAT_SEG_NETWORK].count, 100);
	assert_int_equal(info.seg[STELLAR_LAT_SEG_NETWORK].bucket[6], 100);
	assert_int_equal(info.seg[STELLAR_LAT_SEG_QUEUE].bucket[5], 100);
	assert_int_equal(info.nr_bursts, 1);
	assert_int_equal(info.burst[0].path, 3);
	assert_int_equal(info.burst[0].count, 7);
	assert_int_equal(info.burst[0].max_us, 900);
	assert_int_equal(info.nr_paths, 1);
	assert_int_equal(info.path_index[0], 2);
	assert_int_equal(info.path_rtt[0].count, 9);
	assert_int_equal(info.path_rtt[0].bucket[0], 9);
	assert_true(info.has_size);
	assert_int_equal(info.size[STELLAR_LAT_SEG_NETWORK]
				  [STELLAR_LAT_SIZE_256].count, 60);
	assert_int_equal(info.size[STELLAR_LAT_SEG_NETWORK]
				  [STELLAR_LAT_SIZE_LARGE].bucket[8], 40);
	assert_int_equal(info.size[STELLAR_LAT_SEG_QUEUE]
				  [STELLAR_LAT_SIZE_256].count, 0);
	/* bucket 6: [32768, 65536) ns; the median is half way */
	assert_int_equal(stellar_lat_seg_percentile(
				 &info.seg[STELLAR_LAT_SEG_NETWORK], 500000),
			 32768 + 16384);
	nlmsg_free(msg);
}

static void test_decode_bad(void **state)
{
	struct stellar_lat_info info;
	struct nl_msg *msg = nlmsg_alloc_size(4096);
	struct nlattr *nest;

	(void)state;
	assert_non_null(genlmsg_put(msg, 0, 1, 0x20, 0, 0,
				    STELLAR_CMD_GET_LATENCY,
				    STELLAR_GENL_VERSION));
	/* no device name */
	assert_int_equal(stellar_decode_latency(msg, &info), -EINVAL);
	assert_int_equal(nla_put_string(msg, STELLAR_ATTR_DEV_NAME, "s0"), 0);
	/* a segment without its number */
	nest = nla_nest_start(msg, STELLAR_ATTR_LAT_SEGMENT);
	assert_int_equal(nla_put_u64(msg, STELLAR_LAT_ATTR_COUNT, 1), 0);
	nla_nest_end(msg, nest);
	assert_int_equal(stellar_decode_latency(msg, &info), -EINVAL);
	nlmsg_free(msg);
}

static char *render_latency(const struct stellar_lat_info *info, bool json)
{
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);

	stellar_print_latency(fp, info, 3000000000ULL, json);
	fclose(fp);
	return text;
}

static void test_print(void **state)
{
	struct stellar_lat_info info;
	struct nl_msg *msg = lat_reply(100, false);
	char *text;

	(void)state;
	assert_int_equal(stellar_decode_latency(msg, &info), 0);
	text = render_latency(&info, false);
	if (getenv("SHOW"))
		fputs(text, stderr);
	assert_non_null(strstr(text, "stellar0: latency telemetry on\n"));
	assert_non_null(strstr(text, "  network                    100     49.2us     49.2us     65.2us     65.5us\n"));
	assert_non_null(strstr(text, "\nnetwork (100 samples):\n"));
	assert_non_null(strstr(text, "      32.8us - 65.5us |######################################## 100\n"));
	assert_non_null(strstr(text, "  path  3: 7 bursts, largest +900 us, last 2.00s ago\n"));
	assert_non_null(strstr(text, "\nRTT per path:\n"));
	assert_non_null(strstr(text, "  2                            9      1.0us      568ns      1.0us      1.0us\n"));
	assert_non_null(strstr(text, "\nby message size (bytes up to):\n"));
	assert_non_null(strstr(text, "  network/256B                60     12.3us     12.3us     16.4us     16.4us\n"));
	assert_non_null(strstr(text, "  network/large               40    196.6us    196.6us    262.1us    262.1us\n"));
	assert_null(strstr(text, "queue/256B"));
	free(text);
	text = render_latency(&info, true);
	assert_non_null(strstr(text, "\"network\":{\"count\":100,"));
	assert_non_null(strstr(text, "\"p50_ns\":49152,"));
	assert_non_null(strstr(text, "\"microbursts\":[{\"path\":3,\"count\":7,"));
	assert_non_null(strstr(text, "\"path_rtt\":[{\"path\":2,\"histogram\":{\"count\":9,"));
	assert_non_null(strstr(text, "\"size_classes\":{\"queue\":{},\"network\":{\"256B\":{\"count\":60,"));
	assert_non_null(strstr(text, "\"large\":{\"count\":40,"));
	free(text);
	nlmsg_free(msg);
	msg = lat_reply(0, true);
	assert_int_equal(stellar_decode_latency(msg, &info), 0);
	assert_true(info.has_qpn);
	text = render_latency(&info, false);
	assert_non_null(strstr(text, "stellar0 QP 17: latency telemetry on\n"));
	assert_non_null(strstr(text, "  network                      0          -          -"));
	assert_null(strstr(text, "microbursts"));
	assert_null(strstr(text, "by message size"));
	/* a QP's own paths */
	assert_non_null(strstr(text, "\nRTT per path:\n"));
	free(text);
	text = render_latency(&info, true);
	assert_non_null(strstr(text, "\"qpn\":17,"));
	assert_non_null(strstr(text, "\"path_rtt\":[{\"path\":2,"));
	assert_null(strstr(text, "size_classes"));
	free(text);
	nlmsg_free(msg);
}

static void test_format_ns(void **state)
{
	char buf[16];

	(void)state;
	stellar_format_ns(950, buf, sizeof(buf));
	assert_string_equal(buf, "950ns");
	stellar_format_ns(12345, buf, sizeof(buf));
	assert_string_equal(buf, "12.3us");
	stellar_format_ns(4560000, buf, sizeof(buf));
	assert_string_equal(buf, "4.56ms");
	stellar_format_ns(1200000000, buf, sizeof(buf));
	assert_string_equal(buf, "1.20s");
}

/* A device with @mb MB sent and 10 network samples per @mb in bucket 4. */
static void fill_dev(struct stellar_top_dev *d, uint64_t mb, bool qps_ok)
{
	memset(d, 0, sizeof(*d));
	strcpy(d->name, "stellar0");
	strcpy(d->netdev, "eth0");
	d->tx_bytes = mb * 1000000;
	d->rx_bytes = mb * 500000;
	d->tx_packets = mb * 1000;
	d->rx_packets = mb * 1000;
	d->has_lat = true;
	d->lat.seg[STELLAR_LAT_SEG_NETWORK].count = 10 * mb;
	d->lat.seg[STELLAR_LAT_SEG_NETWORK].bucket[4] = 10 * mb;
	d->lat.nr_paths = 1;
	d->lat.path_index[0] = 0;
	d->lat.path_rtt[0].count = 4 * mb;
	d->lat.path_rtt[0].bucket[8] = 4 * mb;
	d->has_spray = true;
	d->spray.nr_paths = 2;
	d->spray.spray_paths = 2;
	d->spray.qps = 1;
	d->spray.path[0].index = 0;
	d->spray.path[0].qps = d->spray.path[0].active = 1;
	d->spray.path[0].bytes = mb * 750000;
	d->spray.path[1].index = 1;
	d->spray.path[1].qps = d->spray.path[1].active = 1;
	d->spray.path[1].bytes = mb * 250000;
	d->qp_error = qps_ok ? 0 : EPERM;
	if (qps_ok) {
		d->nr_qps = d->qps_total = 1;
		d->qps[0].qpn = 17;
		d->qps[0].type = 2;
		d->qps[0].state = 3;
		d->qps[0].tx_bytes = mb * 1000000;
	}
}

static void test_top_render(void **state)
{
	struct stellar_top_frame *f = calloc(2, sizeof(*f));
	char *text = NULL;
	size_t len = 0;
	FILE *fp;

	(void)state;
	f[0].at_ns = 1000000000ULL;
	f[0].nr_devs = 1;
	fill_dev(&f[0].devs[0], 10, true);
	f[1].at_ns = 3000000000ULL;
	f[1].nr_devs = 1;
	fill_dev(&f[1].devs[0], 30, true);
	fp = open_memstream(&text, &len);
	stellar_top_render(fp, NULL, &f[0], 1, "12:00:00");
	stellar_top_render(fp, &f[0], &f[1], 2, "12:00:02");
	fclose(fp);
	if (getenv("SHOW"))
		fputs(text, stderr);
	/* first screen: no rates, latency since creation */
	assert_non_null(strstr(text, "stellar-tool top - 12:00:00, frame 1, latency since device creation\n"));
	assert_non_null(strstr(text, "stellar0   eth0            -        -"));
	/* second: 20 MB in 2 s, 200 network samples in [8.2us, 16.4us) */
	assert_non_null(strstr(text, "stellar-tool top - 12:00:02, frame 2, rates over 2.00s\n"));
	assert_non_null(strstr(text, "stellar0   eth0         10.0      5.0     10000     10000       0         -    12.3us    16.3us         -         -\n"));
	assert_non_null(strstr(text, "    0 active        7.5       0        0   262.1us       0  |###############     |  75%\n"));
	assert_non_null(strstr(text, "    1 active        2.5       0        0         -       0  |#####               |  25%\n"));
	assert_non_null(strstr(text, "      17 RC   RTS       10.0      0.0       0\n"));
	free(text);
	text = NULL;
	fill_dev(&f[1].devs[0], 30, false);
	fp = open_memstream(&text, &len);
	stellar_top_render(fp, &f[0], &f[1], 2, "12:00:02");
	fclose(fp);
	assert_non_null(strstr(text, "QPS stellar0: per-QP figures need CAP_NET_ADMIN\n"));
	assert_non_null(strstr(text, "PATHS stellar0: 2 spraying QPs") ||
			strstr(text, "PATHS stellar0: 1 spraying QPs"));
	assert_null(strstr(text, " RC "));
	free(text);
	text = NULL;
	f[1].devs[0].spray.spray_paths = 1;
	f[1].devs[0].spray.nr_paths = 1;
	fp = open_memstream(&text, &len);
	stellar_top_render(fp, &f[0], &f[1], 3, "12:00:04");
	fclose(fp);
	assert_non_null(strstr(text, "PATHS stellar0: one path (spray_paths 1)\n"));
	assert_null(strstr(text, "SHARE"));
	free(text);
	text = NULL;
	f[1].nr_devs = 0;
	fp = open_memstream(&text, &len);
	stellar_top_render(fp, &f[0], &f[1], 3, "12:00:04");
	fclose(fp);
	assert_non_null(strstr(text, "no stellar devices\n"));
	free(text);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_decode_bad),
		cmocka_unit_test(test_print),
		cmocka_unit_test(test_format_ns),
		cmocka_unit_test(test_top_render),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
