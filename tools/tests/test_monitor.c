// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of stellar-monitor: the counter to metric table, reading a
 * fake sysfs tree (tests/fake-sysfs.sh), the Prometheus text and JSON
 * output, the --metrics parser and the HTTP request router.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "monitor.h"
#include "monitor_http.h"

static char root[] = "/tmp/stellar-monitor-test.XXXXXX";
static char class_dir[4200];

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* Names, types and units follow the Prometheus conventions. */
static void test_family_names(void **state)
{
	const struct mon_family *f;
	size_t i, j;

	(void)state;
	for (i = 0; i < mon_nr_families; i++) {
		f = &mon_families[i];
		assert_non_null(f->name);
		assert_int_equal(strncmp(f->name, "stellar_", 8), 0);
		assert_int_equal(strspn(f->name, "abcdefghijklmnopqrstuvwxyz0123456789_"),
				 strlen(f->name));
		assert_non_null(f->help);
		assert_true(strlen(f->help) > 5);
		if (f->type == MON_COUNTER)
			assert_true(ends_with(f->name, "_total"));
		else
			assert_null(strstr(f->name, "total"));
		/* A unit is the last word before _total, base units only. */
		assert_null(strstr(f->name, "milli"));
		assert_null(strstr(f->name, "micro"));
		assert_null(strstr(f->name, "_us"));
		for (j = 0; j < i; j++)
			assert_string_not_equal(f->name, mon_families[j].name);
	}
}

/* Every hw counter maps to a family once; byte counts say _bytes. */
static void test_counter_table(void **state)
{
	const struct mon_counter *c;
	const struct mon_family *f;
	size_t i, j;

	(void)state;
	assert_int_equal(mon_nr_counters, 72);	/* stellar_hw_stats.c */
	for (i = 0; i < mon_nr_counters; i++) {
		c = &mon_counters[i];
		assert_true(c->family < mon_nr_families);
		f = &mon_families[c->family];
		assert_true(f->group != 0);
		assert_true(!f->label == !c->label_value);
		if (strstr(c->file, "bytes"))
			assert_true(ends_with(f->name, "_bytes") ||
				    ends_with(f->name, "_bytes_total"));
		assert_true(c->per_device == (f->group == MON_MEMORY));
		for (j = 0; j < i; j++)
			assert_string_not_equal(c->file, mon_counters[j].file);
	}
	assert_string_equal(mon_families[mon_family_path_srtt].name,
			    "stellar_path_srtt_seconds");
}

static void test_parse_groups(void **state)
{
	unsigned int g;

	(void)state;
	assert_int_equal(mon_parse_groups("latency,throughput", &g), 0);
	assert_int_equal(g, MON_LATENCY | MON_THROUGHPUT);
	assert_int_equal(mon_parse_groups("memory", &g), 0);
	assert_int_equal(g, MON_MEMORY);
	assert_int_equal(mon_parse_groups("all", &g), 0);
	assert_int_equal(g, MON_DEFAULT_GROUPS | MON_LATENCY);
	assert_int_equal(mon_parse_groups("throughput,spray,errors", &g), 0);
	assert_int_equal(g, MON_THROUGHPUT | MON_SPRAY | MON_ERRORS);
	assert_int_equal(mon_parse_groups("throughput,", &g), -1);
	assert_int_equal(mon_parse_groups("", &g), -1);
	assert_int_equal(mon_parse_groups("through", &g), -1);
	assert_int_equal(mon_parse_groups("throughputs", &g), -1);
}

/* The Prometheus text of @groups read from the fake tree. */
static char *scrape(unsigned int groups, uint64_t *read_errors)
{
	struct mon_snapshot snap = { 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);

	assert_non_null(fp);
	assert_int_equal(mon_collect(&snap, class_dir, groups, NULL), 0);
	mon_format_prometheus(fp, &snap, groups);
	if (read_errors)
		*read_errors = snap.read_errors;
	mon_snapshot_free(&snap);
	fclose(fp);
	return text;
}

static void assert_line(const char *text, const char *line)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "\n%s\n", line);
	if (!strstr(text, buf))
		fail_msg("no line '%s' in:\n%s", line, text);
}

static int count(const char *text, const char *what)
{
	int n = 0;

	for (; (text = strstr(text, what)); text++)
		n++;
	return n;
}

static void test_collect_and_format(void **state)
{
	uint64_t errors;
	char *t = scrape(MON_DEFAULT_GROUPS, &errors);

	(void)state;
	assert_int_equal(errors, 0);
	assert_line(t, "# TYPE stellar_tx_bytes_total counter");
	assert_line(t, "stellar_tx_bytes_total{device=\"stellar0\",port=\"1\"} 123456789012");
	assert_line(t, "stellar_tx_bytes_total{device=\"stellar1\",port=\"1\"} 7");
	assert_line(t, "stellar_tx_packets_total{device=\"stellar0\",port=\"1\"} 1000");
	assert_line(t, "stellar_rx_bytes_total{device=\"stellar0\",port=\"1\"} 1003");
	assert_line(t, "stellar_rx_drops_total{device=\"stellar0\",port=\"1\",reason=\"bad_icrc\"} 1015");
	assert_line(t, "stellar_ooo_arrivals_total{device=\"stellar0\",port=\"1\",depth=\"2048+\"} 1043");
	assert_line(t, "# TYPE stellar_spray_qps gauge");
	assert_line(t, "# TYPE stellar_pvdma_pinned_bytes gauge");
	/* Memory counters once, from the device, not the port too. */
	assert_line(t, "stellar_pvdma_pinned_bytes{device=\"stellar0\"} 5001");
	assert_int_equal(count(t, "stellar_pvdma_faults_total{"), 1);
	assert_line(t, "stellar_emtt_invalidations_total{device=\"stellar0\"} 5014");
	assert_line(t, "stellar_pvdma_odp_invalidations_total{device=\"stellar0\"} 5018");
	/* Not stellar: not read. */
	assert_null(strstr(t, "mlx5_0"));
	/* HELP and TYPE once per family, before its samples. */
	assert_int_equal(count(t, "# TYPE stellar_rx_drops_total "), 1);
	assert_int_equal(count(t, "stellar_rx_drops_total{"), 9);
	assert_true(strstr(t, "# TYPE stellar_tx_bytes_total") <
		    strstr(t, "stellar_tx_bytes_total{"));
	assert_line(t, "stellar_monitor_read_errors 0");
	/* Each counter of the tree (tests/monitor.sh: the kernel's) once. */
	assert_int_equal(count(t, "{device=\"stellar0\""), mon_nr_counters);
	/* No latency family unless asked. */
	assert_null(strstr(t, "srtt"));
	assert_true(t[strlen(t) - 1] == '\n');
	free(t);
}

static void test_groups_filter(void **state)
{
	char *t = scrape(MON_MEMORY, NULL);

	(void)state;
	assert_null(strstr(t, "stellar_tx_bytes_total"));
	assert_null(strstr(t, "stellar_spray"));
	assert_non_null(strstr(t, "stellar_emtt_hits_total{"));
	free(t);
	t = scrape(MON_THROUGHPUT, NULL);
	assert_non_null(strstr(t, "stellar_tx_bytes_total{"));
	assert_null(strstr(t, "stellar_retransmits_total"));
	assert_null(strstr(t, "pvdma"));
	free(t);
	/* Latency: the family is declared even without samples. */
	t = scrape(MON_LATENCY, NULL);
	assert_line(t, "# TYPE stellar_path_srtt_seconds gauge");
	assert_null(strstr(t, "stellar_path_srtt_seconds{"));
	free(t);
}

static void test_read_error(void **state)
{
	char path[4400];
	uint64_t errors;
	FILE *fp;
	char *t;

	(void)state;
	snprintf(path, sizeof(path), "%s/stellar0/ports/1/hw_counters/timeouts",
		 class_dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("12x\n", fp);
	fclose(fp);
	t = scrape(MON_ERRORS, &errors);
	assert_int_equal(errors, 1);
	assert_line(t, "stellar_monitor_read_errors 1");
	assert_null(strstr(t, "stellar_timeouts_total{"));
	free(t);
	fp = fopen(path, "w");
	fputs("1005\n", fp);
	fclose(fp);
}

static void test_srtt_and_json(void **state)
{
	struct mon_snapshot snap = { 0 };
	struct mon_sample *s;
	char *text = NULL;
	size_t len = 0;
	FILE *fp;

	(void)state;
	s = mon_add(&snap, mon_family_path_srtt, "stellar0", 1);
	s->path = 3;
	s->is_float = true;
	s->fvalue = 250 / 1e6;
	s = mon_add(&snap, 0, "stellar0", 1);	/* tx_bytes */
	s->value = 42;
	mon_sort(&snap);
	fp = open_memstream(&text, &len);
	mon_format_prometheus(fp, &snap, MON_LATENCY | MON_THROUGHPUT);
	fflush(fp);
	assert_line(text, "stellar_path_srtt_seconds{device=\"stellar0\",port=\"1\",path=\"3\"} 0.00025");
	assert_line(text, "stellar_tx_bytes_total{device=\"stellar0\",port=\"1\"} 42");
	rewind(fp);
	mon_format_json(fp, &snap, 1700000000.5);
	fputc('\0', fp);
	fclose(fp);
	assert_string_equal(text,
		"{\"timestamp\":1700000000.500,\"metrics\":["
		"{\"name\":\"stellar_tx_bytes_total\",\"type\":\"counter\","
		"\"labels\":{\"device\":\"stellar0\",\"port\":\"1\"},\"value\":42},"
		"{\"name\":\"stellar_path_srtt_seconds\",\"type\":\"gauge\","
		"\"labels\":{\"device\":\"stellar0\",\"port\":\"1\",\"path\":\"3\"},"
		"\"value\":0.00025}],\"read_errors\":0}\n");
	free(text);
	mon_snapshot_free(&snap);
}

/* A log2 histogram becomes cumulative _bucket series with le in seconds. */
static void test_histogram(void **state)
{
	uint64_t bucket[4] = { 2, 0, 3, 1 };
	struct mon_snapshot snap = { 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *fp;

	(void)state;
	assert_int_equal(mon_add_histogram(&snap, mon_family_latency,
					   "stellar0", "network", -1, 6, bucket, 4,
					   10, 5000000000ULL), 0);
	assert_int_equal(mon_add_histogram(&snap, mon_family_latency,
					   "stellar0", "queue", -1, 0, bucket, 4,
					   10, 1500), 0);
	assert_int_equal(mon_add_histogram(&snap, mon_family_path_rtt,
					   "stellar0", NULL, 2, 0, bucket, 4,
					   10, 7000), 0);
	assert_int_equal(snap.nr, 18);
	mon_sort(&snap);
	fp = open_memstream(&text, &len);
	mon_format_prometheus(fp, &snap, MON_LATENCY);
	fclose(fp);
	assert_line(text, "# TYPE stellar_latency_seconds histogram");
	assert_line(text, "stellar_latency_seconds_bucket{device=\"stellar0\",segment=\"network\",le=\"1.024e-06\"} 2");
	assert_line(text, "stellar_latency_seconds_bucket{device=\"stellar0\",segment=\"network\",le=\"2.048e-06\"} 2");
	assert_line(text, "stellar_latency_seconds_bucket{device=\"stellar0\",segment=\"network\",le=\"4.096e-06\"} 5");
	assert_line(text, "stellar_latency_seconds_bucket{device=\"stellar0\",segment=\"network\",le=\"+Inf\"} 6");
	assert_line(text, "stellar_latency_seconds_sum{device=\"stellar0\",segment=\"network\"} 5");
	assert_line(text, "stellar_latency_seconds_count{device=\"stellar0\",segment=\"network\"} 6");
	assert_line(text, "stellar_latency_seconds_sum{device=\"stellar0\",segment=\"queue\"} 1.5e-06");
	assert_line(text, "# TYPE stellar_path_rtt_seconds histogram");
	assert_line(text, "stellar_path_rtt_seconds_bucket{device=\"stellar0\",path=\"2\",le=\"4.096e-06\"} 5");
	assert_line(text, "stellar_path_rtt_seconds_count{device=\"stellar0\",path=\"2\"} 6");
	/* queue (order 0) before network (order 6); +Inf, _sum, _count last */
	assert_true(strstr(text, "segment=\"queue\"") <
		    strstr(text, "segment=\"network\""));
	assert_true(strstr(text, "network\",le=\"+Inf\"") <
		    strstr(text, "stellar_latency_seconds_sum{device=\"stellar0\",segment=\"network\""));
	free(text);
	mon_snapshot_free(&snap);
}

static void test_sample_bound(void **state)
{
	struct mon_snapshot snap = { 0 };
	size_t i;

	(void)state;
	for (i = 0; i < MON_MAX_SAMPLES; i++)
		assert_non_null(mon_add(&snap, 0, "stellar0", 1));
	assert_null(mon_add(&snap, 0, "stellar0", 1));
	assert_true(snap.truncated);
	mon_snapshot_free(&snap);
}

static int route(const char *req)
{
	return mon_http_route(req, strlen(req));
}

static void test_http_route(void **state)
{
	(void)state;
	assert_int_equal(route("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"), 200);
	assert_int_equal(route("GET /metrics?x=1 HTTP/1.0\r\n\r\n"), 200);
	assert_int_equal(route("GET /metrics HTTP/1.0\n\n"), 200);
	assert_int_equal(route("GET /metrics HTTP/1.1\r\nHost: x\r\n"), 0);
	assert_int_equal(route("GET /metrics"), 0);
	assert_int_equal(route("GET / HTTP/1.1\r\n\r\n"), 404);
	assert_int_equal(route("GET /metricsx HTTP/1.1\r\n\r\n"), 404);
	assert_int_equal(route("GET /metrics/ HTTP/1.1\r\n\r\n"), 404);
	assert_int_equal(route("POST /metrics HTTP/1.1\r\n\r\n"), 405);
	assert_int_equal(route("HEAD /metrics HTTP/1.1\r\n\r\n"), 405);
	assert_int_equal(route("GET /metrics\r\n\r\n"), 400);
	assert_int_equal(route("garbage\r\n\r\n"), 400);
	assert_int_equal(route("GET /metrics H\n\n"), 400);
	assert_int_equal(route(" /metrics HTTP/1.1\r\n\r\n"), 400);
}

static int make_tree(void **state)
{
	char cmd[256];

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(cmd, sizeof(cmd), "./tests/fake-sysfs.sh %s", root);
	assert_int_equal(system(cmd), 0);
	snprintf(class_dir, sizeof(class_dir), "%s/sys/class/infiniband", root);
	return 0;
}

static int remove_tree(void **state)
{
	char cmd[256];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	return system(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_family_names),
		cmocka_unit_test(test_counter_table),
		cmocka_unit_test(test_parse_groups),
		cmocka_unit_test(test_collect_and_format),
		cmocka_unit_test(test_groups_filter),
		cmocka_unit_test(test_read_error),
		cmocka_unit_test(test_srtt_and_json),
		cmocka_unit_test(test_histogram),
		cmocka_unit_test(test_sample_bound),
		cmocka_unit_test(test_http_route),
	};

	return cmocka_run_group_tests(tests, make_tree, remove_tree);
}
