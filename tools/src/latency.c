// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stellar-tool: latency telemetry, decoded and shown.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "format.h"
#include "latency.h"
#include "lat_hist.h"

/* Width of the longest bar of a text histogram. */
#define BAR_WIDTH	40

static const char *const seg_names[] = STELLAR_LAT_SEG_NAMES_INIT;
static const char *const size_names[] = STELLAR_LAT_SIZE_NAMES_INIT;

const char *stellar_lat_seg_name(unsigned int seg)
{
	return seg < __STELLAR_LAT_SEG_MAX && seg_names[seg] ? seg_names[seg]
							      : "?";
}

const char *stellar_lat_size_name(unsigned int class)
{
	return class < __STELLAR_LAT_SIZE_MAX && size_names[class] ?
	       size_names[class] : "?";
}

static int decode_buckets(struct nlattr *nest, struct stellar_lat_seg_info *s)
{
	struct nlattr *attr;
	int rem;

	nla_for_each_nested(attr, nest, rem) {
		int bucket = nla_type(attr) - 1;

		if (nla_type(attr) == STELLAR_LAT_BUCKET_PAD)
			continue;
		if (nla_len(attr) != sizeof(uint64_t))
			return -EINVAL;
		if (bucket >= 0 && bucket < STELLAR_LAT_BUCKETS)
			s->bucket[bucket] = nla_get_u64(attr);
	}
	return 0;
}

static struct nla_policy seg_policy[STELLAR_LAT_ATTR_MAX + 1] = {
	[STELLAR_LAT_ATTR_SEGMENT_ID] = { .type = NLA_U32 },
	[STELLAR_LAT_ATTR_PATH] = { .type = NLA_U32 },
	[STELLAR_LAT_ATTR_COUNT] = { .type = NLA_U64 },
	[STELLAR_LAT_ATTR_SUM_NS] = { .type = NLA_U64 },
	[STELLAR_LAT_ATTR_BUCKETS] = { .type = NLA_NESTED },
	[STELLAR_LAT_ATTR_SIZE_CLASS] = { .type = NLA_U32 },
};

/* The histogram of a nest into @s. */
static int decode_hist(struct nlattr **tb, struct stellar_lat_seg_info *s)
{
	memset(s, 0, sizeof(*s));
	if (tb[STELLAR_LAT_ATTR_COUNT])
		s->count = nla_get_u64(tb[STELLAR_LAT_ATTR_COUNT]);
	if (tb[STELLAR_LAT_ATTR_SUM_NS])
		s->sum_ns = nla_get_u64(tb[STELLAR_LAT_ATTR_SUM_NS]);
	if (tb[STELLAR_LAT_ATTR_BUCKETS])
		return decode_buckets(tb[STELLAR_LAT_ATTR_BUCKETS], s);
	return 0;
}

/* One STELLAR_ATTR_LAT_SEGMENT; segments newer than the tool are skipped. */
static int decode_seg(struct nlattr *nest, struct stellar_lat_info *info)
{
	struct nlattr *tb[STELLAR_LAT_ATTR_MAX + 1];
	uint32_t id;

	if (nla_parse_nested(tb, STELLAR_LAT_ATTR_MAX, nest, seg_policy) ||
	    !tb[STELLAR_LAT_ATTR_SEGMENT_ID])
		return -EINVAL;
	id = nla_get_u32(tb[STELLAR_LAT_ATTR_SEGMENT_ID]);
	if (id >= __STELLAR_LAT_SEG_MAX)
		return 0;
	return decode_hist(tb, &info->seg[id]);
}

/* One STELLAR_ATTR_LAT_PATH; paths beyond the table are dropped. */
static int decode_path_rtt(struct nlattr *nest, struct stellar_lat_info *info)
{
	struct nlattr *tb[STELLAR_LAT_ATTR_MAX + 1];

	if (nla_parse_nested(tb, STELLAR_LAT_ATTR_MAX, nest, seg_policy) ||
	    !tb[STELLAR_LAT_ATTR_PATH])
		return -EINVAL;
	if (info->nr_paths == STELLAR_TOOL_MAX_BURST_PATHS)
		return 0;
	info->path_index[info->nr_paths] = nla_get_u32(tb[STELLAR_LAT_ATTR_PATH]);
	return decode_hist(tb, &info->path_rtt[info->nr_paths++]);
}

/* One STELLAR_ATTR_LAT_SIZE; segments or classes newer than the tool are skipped. */
static int decode_size(struct nlattr *nest, struct stellar_lat_info *info)
{
	struct nlattr *tb[STELLAR_LAT_ATTR_MAX + 1];
	uint32_t id, class;

	if (nla_parse_nested(tb, STELLAR_LAT_ATTR_MAX, nest, seg_policy) ||
	    !tb[STELLAR_LAT_ATTR_SEGMENT_ID] || !tb[STELLAR_LAT_ATTR_SIZE_CLASS])
		return -EINVAL;
	id = nla_get_u32(tb[STELLAR_LAT_ATTR_SEGMENT_ID]);
	class = nla_get_u32(tb[STELLAR_LAT_ATTR_SIZE_CLASS]);
	if (id >= __STELLAR_LAT_SEG_MAX || class >= __STELLAR_LAT_SIZE_MAX)
		return 0;
	info->has_size = true;
	return decode_hist(tb, &info->size[id][class]);
}

static struct nla_policy burst_policy[STELLAR_BURST_ATTR_MAX + 1] = {
	[STELLAR_BURST_ATTR_PATH] = { .type = NLA_U32 },
	[STELLAR_BURST_ATTR_COUNT] = { .type = NLA_U64 },
	[STELLAR_BURST_ATTR_LAST_NS] = { .type = NLA_U64 },
	[STELLAR_BURST_ATTR_MAX_US] = { .type = NLA_U32 },
};

static int decode_burst(struct nlattr *nest, struct stellar_lat_info *info)
{
	struct nlattr *tb[STELLAR_BURST_ATTR_MAX + 1];
	struct stellar_burst_info *b;

	if (nla_parse_nested(tb, STELLAR_BURST_ATTR_MAX, nest, burst_policy) ||
	    !tb[STELLAR_BURST_ATTR_PATH])
		return -EINVAL;
	if (info->nr_bursts == STELLAR_TOOL_MAX_BURST_PATHS)
		return 0;
	b = &info->burst[info->nr_bursts++];
	b->path = nla_get_u32(tb[STELLAR_BURST_ATTR_PATH]);
	if (tb[STELLAR_BURST_ATTR_COUNT])
		b->count = nla_get_u64(tb[STELLAR_BURST_ATTR_COUNT]);
	if (tb[STELLAR_BURST_ATTR_LAST_NS])
		b->last_ns = nla_get_u64(tb[STELLAR_BURST_ATTR_LAST_NS]);
	if (tb[STELLAR_BURST_ATTR_MAX_US])
		b->max_us = nla_get_u32(tb[STELLAR_BURST_ATTR_MAX_US]);
	return 0;
}

static int decode_top(struct nlattr *attr, struct stellar_lat_info *info)
{
	switch (nla_type(attr)) {
	case STELLAR_ATTR_DEV_NAME:
		nla_strlcpy(info->dev_name, attr, sizeof(info->dev_name));
		return 0;
	case STELLAR_ATTR_LAT_ENABLED:
		if (nla_len(attr) < 1)
			return -EINVAL;
		info->enabled = nla_get_u8(attr);
		return 0;
	case STELLAR_ATTR_LAT_BURST_US:
		if (nla_len(attr) < (int)sizeof(uint32_t))
			return -EINVAL;
		info->burst_us = nla_get_u32(attr);
		return 0;
	case STELLAR_ATTR_QPN:
		if (nla_len(attr) < (int)sizeof(uint32_t))
			return -EINVAL;
		info->qpn = nla_get_u32(attr);
		info->has_qpn = true;
		return 0;
	case STELLAR_ATTR_LAT_SEGMENT:
		return decode_seg(attr, info);
	case STELLAR_ATTR_LAT_BURST:
		return decode_burst(attr, info);
	case STELLAR_ATTR_LAT_PATH:
		return decode_path_rtt(attr, info);
	case STELLAR_ATTR_LAT_SIZE:
		return decode_size(attr, info);
	default:
		return 0;	/* newer than this tool */
	}
}

/**
 * stellar_decode_latency() - decode a STELLAR_CMD_GET_LATENCY reply
 * @msg: the reply
 * @info: zeroed and filled
 *
 * Return: 0, or -EINVAL when the reply is malformed or names no device.
 */
int stellar_decode_latency(struct nl_msg *msg, struct stellar_lat_info *info)
{
	struct nlmsghdr *hdr = nlmsg_hdr(msg);
	struct nlattr *attr;
	int rem, ret;

	memset(info, 0, sizeof(*info));
	if (!genlmsg_valid_hdr(hdr, 0))
		return -EINVAL;
	nla_for_each_attr(attr, genlmsg_attrdata(nlmsg_data(hdr), 0),
			  genlmsg_attrlen(nlmsg_data(hdr), 0), rem) {
		ret = decode_top(attr, info);
		if (ret)
			return ret;
	}
	return info->dev_name[0] ? 0 : -EINVAL;
}

uint64_t stellar_lat_seg_percentile(const struct stellar_lat_seg_info *seg,
				    uint32_t ppm)
{
	return stellar_lat_percentile_ns(seg->bucket, ppm);
}

void stellar_lat_seg_delta(const struct stellar_lat_seg_info *prev,
			   const struct stellar_lat_seg_info *cur,
			   struct stellar_lat_seg_info *out)
{
	int b;

	if (cur->count < prev->count || cur->sum_ns < prev->sum_ns) {
		*out = *cur;
		return;
	}
	out->count = cur->count - prev->count;
	out->sum_ns = cur->sum_ns - prev->sum_ns;
	for (b = 0; b < STELLAR_LAT_BUCKETS; b++)
		out->bucket[b] = cur->bucket[b] >= prev->bucket[b] ?
				 cur->bucket[b] - prev->bucket[b] : 0;
}

void stellar_format_ns(uint64_t ns, char *buf, size_t len)
{
	if (ns < 1000)
		snprintf(buf, len, "%" PRIu64 "ns", ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1fus", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.2fms", ns / 1e6);
	else
		snprintf(buf, len, "%.2fs", ns / 1e9);
}

static const uint32_t pct_ppm[] = { 500000, 990000, 999000 };
static const char *const pct_names[] = { "p50", "p99", "p99.9" };

static void print_seg_json(FILE *fp, const struct stellar_lat_seg_info *s)
{
	size_t i;
	int b;

	fprintf(fp, "{\"count\":%" PRIu64 ",\"sum_ns\":%" PRIu64, s->count,
		s->sum_ns);
	for (i = 0; i < 3; i++)
		fprintf(fp, ",\"%s_ns\":%" PRIu64, i == 0 ? "p50" :
			i == 1 ? "p99" : "p999",
			stellar_lat_seg_percentile(s, pct_ppm[i]));
	fputs(",\"buckets\":[", fp);
	for (b = 0; b < STELLAR_LAT_BUCKETS; b++)
		fprintf(fp, "%s%" PRIu64, b ? "," : "", s->bucket[b]);
	fputs("]}", fp);
}

/* "size_classes": {"queue": {"256B": {...}, ...}, ...}, classes with samples. */
static void print_sizes_json(FILE *fp, const struct stellar_lat_info *info)
{
	unsigned int seg, class;
	bool first;

	if (!info->has_size)
		return;
	fputs(",\"size_classes\":{", fp);
	for (seg = 0; seg < STELLAR_LAT_SEG_RESPONDER; seg++) {
		fprintf(fp, "%s\"%s\":{", seg ? "," : "",
			stellar_lat_seg_name(seg));
		first = true;
		for (class = 0; class < __STELLAR_LAT_SIZE_MAX; class++) {
			if (!info->size[seg][class].count)
				continue;
			fprintf(fp, "%s\"%s\":", first ? "" : ",",
				stellar_lat_size_name(class));
			print_seg_json(fp, &info->size[seg][class]);
			first = false;
		}
		fputc('}', fp);
	}
	fputc('}', fp);
}

static void print_json(FILE *fp, const struct stellar_lat_info *info)
{
	uint32_t i;

	fputs("{\"device\":", fp);
	stellar_json_string(fp, info->dev_name);
	if (info->has_qpn)
		fprintf(fp, ",\"qpn\":%u", info->qpn);
	fprintf(fp, ",\"enabled\":%s,\"bucket_min_shift\":%d,\"segments\":{",
		info->enabled ? "true" : "false", STELLAR_LAT_MIN_SHIFT);
	for (i = 0; i < __STELLAR_LAT_SEG_MAX; i++) {
		fprintf(fp, "%s\"%s\":", i ? "," : "", stellar_lat_seg_name(i));
		print_seg_json(fp, &info->seg[i]);
	}
	fputc('}', fp);
	if (!info->has_qpn) {
		fprintf(fp, ",\"burst_threshold_us\":%u,\"microbursts\":[",
			info->burst_us);
		for (i = 0; i < info->nr_bursts; i++) {
			const struct stellar_burst_info *b = &info->burst[i];

			fprintf(fp, "%s{\"path\":%u,\"count\":%" PRIu64
				",\"last_ns\":%" PRIu64 ",\"max_us\":%u}",
				i ? "," : "", b->path, b->count, b->last_ns,
				b->max_us);
		}
		fputc(']', fp);
		print_sizes_json(fp, info);
	}
	fputs(",\"path_rtt\":[", fp);
	for (i = 0; i < info->nr_paths; i++) {
		fprintf(fp, "%s{\"path\":%u,\"histogram\":", i ? "," : "",
			info->path_index[i]);
		print_seg_json(fp, &info->path_rtt[i]);
		fputc('}', fp);
	}
	fputs("]}", fp);
}

/* "[1.0us, 2.0us)" style label of bucket @b. */
static void bucket_label(int b, char *buf, size_t len)
{
	char lo[16], hi[16];

	stellar_format_ns(stellar_lat_bucket_lower_ns(b), lo, sizeof(lo));
	if (b == STELLAR_LAT_BUCKETS - 1) {
		snprintf(buf, len, ">= %s", lo);
		return;
	}
	stellar_format_ns(stellar_lat_bucket_upper_ns(b), hi, sizeof(hi));
	if (!b)
		snprintf(buf, len, "< %s", hi);
	else
		snprintf(buf, len, "%s - %s", lo, hi);
}

/* The text histogram of one segment: the buckets from first to last used. */
static void print_histogram(FILE *fp, unsigned int seg,
			    const struct stellar_lat_seg_info *s)
{
	int b, first = -1, last = -1, j;
	uint64_t max = 0;

	for (b = 0; b < STELLAR_LAT_BUCKETS; b++) {
		if (!s->bucket[b])
			continue;
		if (first < 0)
			first = b;
		last = b;
		if (s->bucket[b] > max)
			max = s->bucket[b];
	}
	if (first < 0)
		return;
	fprintf(fp, "\n%s (%" PRIu64 " samples):\n", stellar_lat_seg_name(seg),
		s->count);
	for (b = first; b <= last; b++) {
		char label[40];
		int width = (int)((s->bucket[b] * BAR_WIDTH + max - 1) / max);

		bucket_label(b, label, sizeof(label));
		fprintf(fp, "  %19s |", label);
		for (j = 0; j < width; j++)
			fputc('#', fp);
		fprintf(fp, "%*s %" PRIu64 "\n", BAR_WIDTH - width, "",
			s->bucket[b]);
	}
}

/* A table row: @name, then count, mean and the percentiles of @s. */
static void print_row(FILE *fp, const char *name,
		      const struct stellar_lat_seg_info *s)
{
	char mean[16], p[3][16];
	uint32_t k;

	if (!s->count) {
		fprintf(fp, "  %-17s %12d %10s %10s %10s %10s\n", name, 0, "-",
			"-", "-", "-");
		return;
	}
	stellar_format_ns(s->sum_ns / s->count, mean, sizeof(mean));
	for (k = 0; k < 3; k++)
		stellar_format_ns(stellar_lat_seg_percentile(s, pct_ppm[k]),
				  p[k], sizeof(p[k]));
	fprintf(fp, "  %-17s %12" PRIu64 " %10s %10s %10s %10s\n", name,
		s->count, mean, p[0], p[1], p[2]);
}

static void print_header(FILE *fp, const char *first)
{
	fprintf(fp, "  %-17s %12s %10s %10s %10s %10s\n", first, "count",
		"mean", pct_names[0], pct_names[1], pct_names[2]);
}

/* The requester's segments by message size, the classes with samples. */
static void print_sizes(FILE *fp, const struct stellar_lat_info *info)
{
	unsigned int seg, class;
	char name[32];

	if (!info->has_size)
		return;
	fputs("\nby message size (bytes up to):\n", fp);
	print_header(fp, "segment/size");
	for (seg = 0; seg < STELLAR_LAT_SEG_RESPONDER; seg++)
		for (class = 0; class < __STELLAR_LAT_SIZE_MAX; class++) {
			if (!info->size[seg][class].count)
				continue;
			snprintf(name, sizeof(name), "%s/%s",
				 stellar_lat_seg_name(seg),
				 stellar_lat_size_name(class));
			print_row(fp, name, &info->size[seg][class]);
		}
}

static void print_paths(FILE *fp, const struct stellar_lat_info *info)
{
	char name[16];
	uint32_t i;

	if (!info->nr_paths)
		return;
	fputs("\nRTT per path:\n", fp);
	print_header(fp, "path");
	for (i = 0; i < info->nr_paths; i++) {
		snprintf(name, sizeof(name), "%u", info->path_index[i]);
		print_row(fp, name, &info->path_rtt[i]);
	}
}

static void print_bursts(FILE *fp, const struct stellar_lat_info *info,
			 uint64_t now_ns)
{
	uint32_t i;

	fprintf(fp, "\nmicrobursts (RTT > path minimum + %u us):", info->burst_us);
	if (!info->nr_bursts) {
		fputs(" none\n", fp);
		return;
	}
	fputc('\n', fp);
	for (i = 0; i < info->nr_bursts; i++) {
		const struct stellar_burst_info *b = &info->burst[i];
		char ago[16];

		stellar_format_ns(now_ns > b->last_ns ? now_ns - b->last_ns : 0,
				  ago, sizeof(ago));
		fprintf(fp, "  path %2u: %" PRIu64 " bursts, largest +%u us, last %s ago\n",
			b->path, b->count, b->max_us, ago);
	}
}

static void print_text(FILE *fp, const struct stellar_lat_info *info,
		       uint64_t now_ns)
{
	uint32_t i;

	fprintf(fp, "%s", info->dev_name);
	if (info->has_qpn)
		fprintf(fp, " QP %u", info->qpn);
	fprintf(fp, ": latency telemetry %s\n",
		info->enabled ? "on" : "off (latency_telemetry=0)");
	print_header(fp, "segment");
	for (i = 0; i < __STELLAR_LAT_SEG_MAX; i++)
		print_row(fp, stellar_lat_seg_name(i), &info->seg[i]);
	for (i = 0; i < __STELLAR_LAT_SEG_MAX; i++)
		print_histogram(fp, i, &info->seg[i]);
	print_sizes(fp, info);
	print_paths(fp, info);
	if (!info->has_qpn)
		print_bursts(fp, info, now_ns);
}

void stellar_print_latency(FILE *fp, const struct stellar_lat_info *info,
			   uint64_t now_ns, bool json)
{
	if (json)
		print_json(fp, info);
	else
		print_text(fp, info, now_ns);
}
