// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stellar-tool: packet spray statistics, decoded and shown.
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
#include "spray.h"

static uint32_t get_u32(struct nlattr **tb, int type)
{
	return tb[type] ? nla_get_u32(tb[type]) : 0;
}

static uint64_t get_u64(struct nlattr **tb, int type)
{
	return tb[type] ? nla_get_u64(tb[type]) : 0;
}

static struct nla_policy path_policy[STELLAR_PATH_ATTR_MAX + 1] = {
	[STELLAR_PATH_ATTR_INDEX] = { .type = NLA_U32 },
	[STELLAR_PATH_ATTR_QPS] = { .type = NLA_U32 },
	[STELLAR_PATH_ATTR_ACTIVE] = { .type = NLA_U32 },
	[STELLAR_PATH_ATTR_FAILED] = { .type = NLA_U32 },
	[STELLAR_PATH_ATTR_PROBING] = { .type = NLA_U32 },
	[STELLAR_PATH_ATTR_PACKETS] = { .type = NLA_U64 },
	[STELLAR_PATH_ATTR_BYTES] = { .type = NLA_U64 },
	[STELLAR_PATH_ATTR_RETRANSMITS] = { .type = NLA_U64 },
	[STELLAR_PATH_ATTR_LOSSES] = { .type = NLA_U64 },
	[STELLAR_PATH_ATTR_ECN_MARKS] = { .type = NLA_U64 },
	[STELLAR_PATH_ATTR_SRTT_US] = { .type = NLA_U32 },
	[STELLAR_PATH_ATTR_BACK_DEAD] = { .type = NLA_U32 },
	[STELLAR_PATH_ATTR_BACK_FAILURES] = { .type = NLA_U64 },
};

/* One STELLAR_ATTR_SPRAY_PATH nest; paths beyond the table are dropped. */
static int decode_path(struct nlattr *nest, struct stellar_spray_info *info)
{
	struct nlattr *tb[STELLAR_PATH_ATTR_MAX + 1];
	struct stellar_path_info *path;

	if (nla_parse_nested(tb, STELLAR_PATH_ATTR_MAX, nest, path_policy) ||
	    !tb[STELLAR_PATH_ATTR_INDEX])
		return -EINVAL;
	if (info->nr_paths == STELLAR_TOOL_MAX_PATHS)
		return 0;
	path = &info->path[info->nr_paths++];
	path->index = get_u32(tb, STELLAR_PATH_ATTR_INDEX);
	path->qps = get_u32(tb, STELLAR_PATH_ATTR_QPS);
	path->active = get_u32(tb, STELLAR_PATH_ATTR_ACTIVE);
	path->failed = get_u32(tb, STELLAR_PATH_ATTR_FAILED);
	path->probing = get_u32(tb, STELLAR_PATH_ATTR_PROBING);
	path->srtt_us = get_u32(tb, STELLAR_PATH_ATTR_SRTT_US);
	path->packets = get_u64(tb, STELLAR_PATH_ATTR_PACKETS);
	path->bytes = get_u64(tb, STELLAR_PATH_ATTR_BYTES);
	path->retransmits = get_u64(tb, STELLAR_PATH_ATTR_RETRANSMITS);
	path->losses = get_u64(tb, STELLAR_PATH_ATTR_LOSSES);
	path->ecn_marks = get_u64(tb, STELLAR_PATH_ATTR_ECN_MARKS);
	path->back_dead = get_u32(tb, STELLAR_PATH_ATTR_BACK_DEAD);
	path->back_failures = get_u64(tb, STELLAR_PATH_ATTR_BACK_FAILURES);
	return 0;
}

/* The histogram nest: a u64 per bucket, type = bucket + 1; pads skipped. */
static int decode_ooo(struct nlattr *nest, struct stellar_spray_info *info)
{
	struct nlattr *attr;
	int rem;

	nla_for_each_nested(attr, nest, rem) {
		int bucket = nla_type(attr) - 1;

		if (nla_type(attr) == STELLAR_SPRAY_OOO_PAD)
			continue;
		if (nla_len(attr) != sizeof(uint64_t))
			return -EINVAL;
		if (bucket >= 0 && bucket < STELLAR_SPRAY_OOO_BUCKETS)
			info->ooo[bucket] = nla_get_u64(attr);
	}
	return 0;
}

static int take_u32(struct nlattr *attr, uint32_t *value)
{
	if (nla_len(attr) < (int)sizeof(uint32_t))
		return -EINVAL;
	*value = nla_get_u32(attr);
	return 0;
}

static int decode_top(struct nlattr *attr, struct stellar_spray_info *info)
{
	switch (nla_type(attr)) {
	case STELLAR_ATTR_DEV_NAME:
		nla_strlcpy(info->dev_name, attr, sizeof(info->dev_name));
		return 0;
	case STELLAR_ATTR_SPRAY_PATHS:
		return take_u32(attr, &info->spray_paths);
	case STELLAR_ATTR_SPRAY_QPS:
		return take_u32(attr, &info->qps);
	case STELLAR_ATTR_SPRAY_OOO_MAX:
		return take_u32(attr, &info->ooo_max);
	case STELLAR_ATTR_SPRAY_PATH:
		return decode_path(attr, info);
	case STELLAR_ATTR_SPRAY_OOO:
		return decode_ooo(attr, info);
	default:
		return 0;	/* newer than this tool */
	}
}

/**
 * stellar_decode_spray() - decode a STELLAR_CMD_GET_SPRAY reply
 * @msg: the reply
 * @info: zeroed and filled
 *
 * Return: 0, or -EINVAL when the reply is malformed or names no device.
 */
int stellar_decode_spray(struct nl_msg *msg, struct stellar_spray_info *info)
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

/* "1", "2-3", ..., "2048+": the depths bucket @bucket counts. */
void stellar_ooo_label(unsigned int bucket, char *buf, size_t len)
{
	unsigned long low = 1UL << bucket;

	if (!bucket)
		snprintf(buf, len, "1");
	else if (bucket >= STELLAR_SPRAY_OOO_BUCKETS - 1)
		snprintf(buf, len, "%lu+", low);
	else
		snprintf(buf, len, "%lu-%lu", low, 2 * low - 1);
}

/*
 * idle (no QP has it now), active (every QP uses it), failed, probing, or
 * degraded (some QPs do not use it).
 */
const char *stellar_path_state(const struct stellar_path_info *path)
{
	if (!path->qps)
		return "idle";
	if (path->active == path->qps)
		return "active";
	if (path->failed == path->qps)
		return "failed";
	if (path->probing == path->qps)
		return "probing";
	return "degraded";
}

static void print_ooo_json(FILE *fp, const char *key, const uint64_t *ooo)
{
	char label[24];
	int i;

	fprintf(fp, "\"%s\":{", key);
	for (i = 0; i < STELLAR_SPRAY_OOO_BUCKETS; i++) {
		stellar_ooo_label(i, label, sizeof(label));
		fprintf(fp, "%s\"%s\":%" PRIu64, i ? "," : "", label, ooo[i]);
	}
	fputc('}', fp);
}

static void print_path_json(FILE *fp, const struct stellar_path_info *p)
{
	fprintf(fp,
		"{\"index\":%u,\"state\":\"%s\",\"qps\":%u,\"active\":%u,"
		"\"failed\":%u,\"probing\":%u,\"packets\":%" PRIu64
		",\"bytes\":%" PRIu64 ",\"retransmits\":%" PRIu64
		",\"losses\":%" PRIu64 ",\"ecn_marks\":%" PRIu64
		",\"back_dead\":%u,\"back_failures\":%" PRIu64
		",\"srtt_us\":%u}",
		p->index, stellar_path_state(p), p->qps, p->active, p->failed,
		p->probing, p->packets, p->bytes, p->retransmits, p->losses,
		p->ecn_marks, p->back_dead, p->back_failures, p->srtt_us);
}

static void print_spray_json(FILE *fp, const struct stellar_spray_info *info)
{
	uint32_t i;

	fputs("{\"device\":", fp);
	stellar_json_string(fp, info->dev_name);
	fprintf(fp, ",\"spray_paths\":%u,\"qps\":%u,\"paths\":[",
		info->spray_paths, info->qps);
	for (i = 0; i < info->nr_paths; i++) {
		if (i)
			fputc(',', fp);
		print_path_json(fp, &info->path[i]);
	}
	fputs("],", fp);
	print_ooo_json(fp, "ooo_depth", info->ooo);
	fprintf(fp, ",\"ooo_max\":%u}", info->ooo_max);
}

static void print_ooo_text(FILE *fp, const uint64_t *ooo, uint32_t max)
{
	char label[24];
	int i;

	fputs("  out-of-order depth:", fp);
	for (i = 0; i < STELLAR_SPRAY_OOO_BUCKETS; i++) {
		stellar_ooo_label(i, label, sizeof(label));
		fprintf(fp, " %s:%" PRIu64, label, ooo[i]);
	}
	fprintf(fp, " max:%u\n", max);
}

static void print_spray_text(FILE *fp, const struct stellar_spray_info *info)
{
	uint32_t i;

	fprintf(fp, "%s: spray_paths %u, %u QP%s spraying\n", info->dev_name,
		info->spray_paths, info->qps, info->qps == 1 ? "" : "s");
	if (info->nr_paths)
		fprintf(fp, "  %4s %-8s %4s %12s %14s %11s %10s %10s %9s %8s\n",
			"path", "state", "qps", "packets", "bytes",
			"retransmits", "losses", "ecn_marks", "back_fail",
			"srtt_us");
	for (i = 0; i < info->nr_paths; i++) {
		const struct stellar_path_info *p = &info->path[i];

		fprintf(fp, "  %4u %-8s %4u %12" PRIu64 " %14" PRIu64
			" %11" PRIu64 " %10" PRIu64 " %10" PRIu64 " %9" PRIu64
			" %8u\n",
			p->index, stellar_path_state(p), p->qps, p->packets,
			p->bytes, p->retransmits, p->losses, p->ecn_marks,
			p->back_failures, p->srtt_us);
	}
	print_ooo_text(fp, info->ooo, info->ooo_max);
}

/**
 * stellar_print_spray() - show one device's spray statistics
 * @fp: output
 * @info: the statistics
 * @json: one JSON object (no newline) instead of a text block
 */
void stellar_print_spray(FILE *fp, const struct stellar_spray_info *info,
			 bool json)
{
	if (json)
		print_spray_json(fp, info);
	else
		print_spray_text(fp, info);
}

/* Several devices: a JSON array, or text blocks with blank lines between. */
void stellar_print_spray_list(FILE *fp, const struct stellar_spray_info *infos,
			      size_t count, bool json)
{
	size_t i;

	if (json)
		fputc('[', fp);
	for (i = 0; i < count; i++) {
		if (i)
			fputs(json ? "," : "\n", fp);
		stellar_print_spray(fp, &infos[i], json);
	}
	if (json)
		fputs("]\n", fp);
}

/* @cur - @prev, or @cur when the counter went backwards (a new device). */
static uint64_t delta(uint64_t cur, uint64_t prev)
{
	return cur >= prev ? cur - prev : cur;
}

static const struct stellar_path_info *
find_path(const struct stellar_spray_info *info, uint32_t index)
{
	uint32_t i;

	for (i = 0; info && i < info->nr_paths; i++)
		if (info->path[i].index == index)
			return &info->path[i];
	return NULL;
}

static double per_second(uint64_t count, unsigned int interval_ms)
{
	return interval_ms ? count * 1000.0 / interval_ms : 0;
}

static void frame_deltas(const struct stellar_spray_info *prev,
			 const struct stellar_spray_info *cur, uint64_t *ooo)
{
	int i;

	for (i = 0; i < STELLAR_SPRAY_OOO_BUCKETS; i++)
		ooo[i] = delta(cur->ooo[i], prev ? prev->ooo[i] : 0);
}

static void frame_path(FILE *fp, const struct stellar_path_info *p,
		       const struct stellar_path_info *old,
		       unsigned int interval_ms, bool json)
{
	double pps = per_second(delta(p->packets, old ? old->packets : 0),
				interval_ms);
	double bps = per_second(delta(p->bytes, old ? old->bytes : 0),
				interval_ms);
	double rps = per_second(delta(p->retransmits,
				      old ? old->retransmits : 0),
				interval_ms);

	if (json)
		fprintf(fp,
			"{\"index\":%u,\"state\":\"%s\",\"packets_per_s\":%.1f,"
			"\"mbytes_per_s\":%.3f,\"retransmits_per_s\":%.1f,"
			"\"srtt_us\":%u}",
			p->index, stellar_path_state(p), pps, bps / 1e6, rps,
			p->srtt_us);
	else
		fprintf(fp, "  %4u %-8s %10.0f %9.2f %10.0f %8u\n", p->index,
			stellar_path_state(p), pps, bps / 1e6, rps, p->srtt_us);
}

/**
 * stellar_print_ooo_frame() - one refresh of ooo-monitor
 * @fp: output
 * @prev: the previous sample, NULL for the first
 * @cur: this sample
 * @interval_ms: time between them
 * @json: a JSON object on one line instead of a text block
 *
 * Shows the out-of-order arrivals of the interval per depth bucket (and
 * since the device was created), and per path the packet, byte and
 * retransmission rates.
 */
void stellar_print_ooo_frame(FILE *fp, const struct stellar_spray_info *prev,
			     const struct stellar_spray_info *cur,
			     unsigned int interval_ms, bool json)
{
	uint64_t ooo[STELLAR_SPRAY_OOO_BUCKETS];
	char label[24];
	uint32_t i;

	frame_deltas(prev, cur, ooo);
	if (json) {
		fputs("{\"device\":", fp);
		stellar_json_string(fp, cur->dev_name);
		fprintf(fp, ",\"interval_ms\":%u,\"qps\":%u,", interval_ms,
			cur->qps);
		print_ooo_json(fp, "ooo_interval", ooo);
		fputc(',', fp);
		print_ooo_json(fp, "ooo_total", cur->ooo);
		fprintf(fp, ",\"ooo_max\":%u,\"paths\":[", cur->ooo_max);
	} else {
		fprintf(fp, "%s: out-of-order arrivals, %u ms interval, %u QP%s spraying\n",
			cur->dev_name, interval_ms, cur->qps,
			cur->qps == 1 ? "" : "s");
		fprintf(fp, "  %-8s %12s %14s\n", "depth", "interval", "total");
		for (i = 0; i < STELLAR_SPRAY_OOO_BUCKETS; i++) {
			stellar_ooo_label(i, label, sizeof(label));
			fprintf(fp, "  %-8s %12" PRIu64 " %14" PRIu64 "\n",
				label, ooo[i], cur->ooo[i]);
		}
		fprintf(fp, "  deepest: %u\n", cur->ooo_max);
		if (cur->nr_paths)
			fprintf(fp, "  %4s %-8s %10s %9s %10s %8s\n", "path",
				"state", "pkts/s", "MB/s", "retx/s",
				"srtt_us");
	}
	for (i = 0; i < cur->nr_paths; i++) {
		if (json && i)
			fputc(',', fp);
		frame_path(fp, &cur->path[i],
			   find_path(prev, cur->path[i].index), interval_ms,
			   json);
	}
	fputs(json ? "]}\n" : "", fp);
}
