// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stellar-monitor: a Prometheus exporter of virtio-stellar's counters.
 *
 *   stellar-monitor [--metrics LIST] [--export prometheus|json]
 *                   [--listen HOST:PORT] [--interval S] [--device DEV] [--once]
 *
 * Counters come from the RDMA core's hw_counters in sysfs (monitor.c),
 * per-path smoothed RTTs (--metrics latency) from stellar's netlink spray
 * query.  See stellar-monitor(8).
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "monitor.h"
#include "monitor_http.h"
#include "nl.h"
#include "latency.h"
#include "spray.h"

#ifndef STELLAR_TOOL_VERSION
#define STELLAR_TOOL_VERSION "unknown"
#endif

struct monitor {
	unsigned int groups;
	const char *device;
	char class_dir[4096];
	char module_dir[4096];	/* /sys/module/virtio_stellar */
	bool json;
	/* --interval with HTTP: the text of the last read, served as is. */
	char *cache;
	size_t cache_len;
};

static volatile int stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/*
 * The requester's segments of @dev by message size, one histogram per
 * segment and class with samples.  Return: 0, or -1 when @snap is full.
 */
static int add_size_histograms(struct mon_snapshot *snap, const char *dev,
			       const struct stellar_lat_info *lat)
{
	static const char *const bound[__STELLAR_LAT_SIZE_MAX] = {
		"256", "4096", "65536", "+Inf"
	};
	unsigned int seg, class;
	size_t first, i;

	for (seg = 0; seg < STELLAR_LAT_SEG_RESPONDER; seg++)
		for (class = 0; class < __STELLAR_LAT_SIZE_MAX; class++) {
			if (!lat->size[seg][class].count)
				continue;
			first = snap->nr;
			if (mon_add_histogram(snap, mon_family_latency_size, dev,
					      stellar_lat_seg_name(seg), -1,
					      (seg * __STELLAR_LAT_SIZE_MAX + class) *
					      (STELLAR_LAT_BUCKETS + 2),
					      lat->size[seg][class].bucket,
					      STELLAR_LAT_BUCKETS,
					      STELLAR_LAT_MIN_SHIFT,
					      lat->size[seg][class].sum_ns))
				return -1;
			for (i = first; i < snap->nr; i++)
				snap->samples[i].size = bound[class];
		}
	return 0;
}

/* The latency histograms and microbursts of one device. */
static void collect_device_latency(struct stellar_nl *nl, const char *dev,
				   struct mon_snapshot *snap)
{
	static struct stellar_lat_info lat;
	struct stellar_nl_status status;
	struct mon_sample *s;
	unsigned int seg;
	uint32_t b;

	if (stellar_query_latency(nl, dev, NULL, &lat, &status))
		return;
	for (seg = 0; seg < __STELLAR_LAT_SEG_MAX; seg++)
		if (mon_add_histogram(snap, mon_family_latency, dev,
				      stellar_lat_seg_name(seg), -1,
				      seg * (STELLAR_LAT_BUCKETS + 2),
				      lat.seg[seg].bucket, STELLAR_LAT_BUCKETS,
				      STELLAR_LAT_MIN_SHIFT,
				      lat.seg[seg].sum_ns))
			return;
	if (add_size_histograms(snap, dev, &lat))
		return;
	for (b = 0; b < lat.nr_paths; b++)
		if (mon_add_histogram(snap, mon_family_path_rtt, dev, NULL,
				      (int)lat.path_index[b], 0,
				      lat.path_rtt[b].bucket,
				      STELLAR_LAT_BUCKETS,
				      STELLAR_LAT_MIN_SHIFT,
				      lat.path_rtt[b].sum_ns))
			return;
	for (b = 0; b < lat.nr_bursts; b++) {
		s = mon_add(snap, mon_family_path_bursts, dev, 1);
		if (!s)
			return;
		s->path = lat.burst[b].path;
		s->value = lat.burst[b].count;
	}
}

/* Devices whose latency and path RTTs are read, at most. */
#define MON_LATENCY_DEVICES 16

/*
 * Add the latency histograms, microbursts and per-path smoothed RTTs of
 * every device to @snap.
 */
static void collect_latency(struct monitor *m, struct mon_snapshot *snap)
{
	static struct stellar_spray_info info;
	static char devs[MON_LATENCY_DEVICES][MON_NAME_LEN];
	struct stellar_nl_status status;
	struct stellar_nl nl;
	struct mon_sample *s;
	size_t d, nd;
	uint32_t p;

	nd = mon_list_devices(m->class_dir, devs, MON_LATENCY_DEVICES);
	/* No module (or a fake tree): no netlink family to ask. */
	if (!nd || access(m->module_dir, F_OK) || stellar_nl_open(&nl))
		return;
	for (d = 0; d < nd; d++) {
		if (m->device && strcmp(m->device, devs[d]))
			continue;
		collect_device_latency(&nl, devs[d], snap);
		if (stellar_query_spray(&nl, devs[d], &info, &status))
			continue;
		for (p = 0; p < info.nr_paths; p++) {
			if (!info.path[p].srtt_us)
				continue;	/* no RTT measured */
			s = mon_add(snap, mon_family_path_srtt, devs[d], 1);
			if (!s)
				break;
			s->path = info.path[p].index;
			s->is_float = true;
			s->fvalue = info.path[p].srtt_us / 1e6;
		}
	}
	stellar_nl_close(&nl);
	mon_sort(snap);
}

/* Read everything selected into @snap. */
static void collect(struct monitor *m, struct mon_snapshot *snap)
{
	memset(snap, 0, sizeof(*snap));
	mon_collect(snap, m->class_dir, m->groups, m->device);
	if (m->groups & MON_LATENCY)
		collect_latency(m, snap);
}

/* The output of one read, malloc'd. */
static int render(struct monitor *m, char **text, size_t *len)
{
	struct mon_snapshot snap;
	struct timeval tv;
	FILE *fp = open_memstream(text, len);

	if (!fp)
		return -1;
	collect(m, &snap);
	if (m->json) {
		gettimeofday(&tv, NULL);
		mon_format_json(fp, &snap, tv.tv_sec + tv.tv_usec / 1e6);
	} else {
		mon_format_prometheus(fp, &snap, m->groups);
	}
	mon_snapshot_free(&snap);
	if (fclose(fp)) {
		free(*text);
		return -1;
	}
	return 0;
}

static int body_now(char **body, size_t *len, void *arg)
{
	return render(arg, body, len);
}

static int body_cached(char **body, size_t *len, void *arg)
{
	struct monitor *m = arg;

	*body = malloc(m->cache_len ? m->cache_len : 1);
	if (!*body)
		return -1;
	memcpy(*body, m->cache, m->cache_len);
	*len = m->cache_len;
	return 0;
}

static void refresh(void *arg)
{
	struct monitor *m = arg;
	char *text;
	size_t len;

	if (render(m, &text, &len))
		return;
	free(m->cache);
	m->cache = text;
	m->cache_len = len;
}

static void usage(FILE *fp)
{
	fputs("Usage: stellar-monitor [--metrics LIST] [--export prometheus|json]\n"
	      "                       [--listen HOST:PORT] [--interval S]\n"
	      "                       [--device DEV] [--once]\n"
	      "  --metrics LIST   throughput,errors,memory,spray,latency or all\n"
	      "                   (default throughput,errors,memory,spray)\n"
	      "  --export FORMAT  prometheus: serve GET /metrics (default);\n"
	      "                   json: print a line of JSON every interval\n"
	      "  --listen H:P     address to serve on (default 127.0.0.1:9464)\n"
	      "  --interval S     read every S seconds (default: at each scrape;\n"
	      "                   json: 10)\n"
	      "  --device DEV     this device only (default: every stellar device)\n"
	      "  --once           print one reading to stdout and exit\n", fp);
}

static int run_json(struct monitor *m, int interval, bool once)
{
	struct timespec ts = { .tv_sec = interval > 0 ? interval : 10 };
	char *text;
	size_t len;

	while (!stop) {
		if (render(m, &text, &len))
			return 1;
		fwrite(text, 1, len, stdout);
		free(text);
		if (fflush(stdout) || once)
			break;
		nanosleep(&ts, NULL);
	}
	return 0;
}

static int run_http(struct monitor *m, const char *listen_at, int interval)
{
	int fd = mon_http_listen(listen_at), ret;

	if (fd < 0)
		return 1;
	fprintf(stderr, "stellar-monitor: serving http://%s/metrics\n", listen_at);
	if (interval > 0) {
		refresh(m);
		ret = mon_http_serve(fd, body_cached, refresh, interval * 1000,
				     m, &stop);
	} else {
		ret = mon_http_serve(fd, body_now, NULL, 0, m, &stop);
	}
	close(fd);
	free(m->cache);
	return ret ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "metrics", required_argument, NULL, 'm' },
		{ "export", required_argument, NULL, 'e' },
		{ "listen", required_argument, NULL, 'l' },
		{ "interval", required_argument, NULL, 'i' },
		{ "device", required_argument, NULL, 'd' },
		{ "once", no_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct monitor m = { .groups = MON_DEFAULT_GROUPS };
	const char *listen_at = "127.0.0.1:9464";
	struct sigaction sa = { .sa_handler = on_signal };
	int c, interval = 0;
	bool once = false;
	char *end;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (mon_parse_groups(optarg, &m.groups)) {
				fprintf(stderr, "stellar-monitor: unknown metrics in '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'e':
			if (strcmp(optarg, "json") && strcmp(optarg, "prometheus")) {
				fprintf(stderr, "stellar-monitor: --export prometheus or json\n");
				return 2;
			}
			m.json = !strcmp(optarg, "json");
			break;
		case 'l':
			listen_at = optarg;
			break;
		case 'i':
			interval = strtol(optarg, &end, 10);
			if (*end || interval < 1 || interval > 86400) {
				fprintf(stderr, "stellar-monitor: --interval wants 1..86400 seconds\n");
				return 2;
			}
			break;
		case 'd':
			m.device = optarg;
			break;
		case 'o':
			once = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("stellar-monitor %s\n", STELLAR_TOOL_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	mon_sysfs_class(m.class_dir, sizeof(m.class_dir));
	snprintf(m.module_dir, sizeof(m.module_dir), "%s/sys/module/virtio_stellar",
		 getenv("STELLAR_SYSFS_ROOT") ?: "");
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (m.json || once) {
		if (once && !m.json) {
			char *text;
			size_t len;

			if (render(&m, &text, &len))
				return 1;
			fwrite(text, 1, len, stdout);
			free(text);
			return fflush(stdout) ? 1 : 0;
		}
		return run_json(&m, interval, once);
	}
	return run_http(&m, listen_at, interval);
}
