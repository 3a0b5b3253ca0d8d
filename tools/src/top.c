// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stellar-tool top: rendering (see top.h).
 *
 * Rates are differences of the kernel's counters over the time between
 * two readings; latency percentiles are those of the histogram samples
 * taken between them (the difference of the two histograms), or of
 * everything since the device was created on the first screen.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "top.h"

/* Width of a path's share bar. */
#define SHARE_WIDTH	20

static uint64_t counter(const struct stellar_dev_info *info, int type)
{
	unsigned int i;

	for (i = 0; i < info->counters.count; i++)
		if (info->counters.entry[i].type == type)
			return info->counters.entry[i].value;
	return 0;
}

void stellar_top_dev_counters(struct stellar_top_dev *dev,
			      const struct stellar_dev_info *info)
{
	snprintf(dev->name, sizeof(dev->name), "%s", info->dev_name);
	snprintf(dev->netdev, sizeof(dev->netdev), "%s", info->netdev_name);
	dev->tx_bytes = counter(info, STELLAR_STAT_TX_BYTES);
	dev->rx_bytes = counter(info, STELLAR_STAT_RX_BYTES);
	dev->tx_packets = counter(info, STELLAR_STAT_TX_PACKETS);
	dev->rx_packets = counter(info, STELLAR_STAT_RX_PACKETS);
	dev->retransmits = counter(info, STELLAR_STAT_RETRANSMITS);
}

static void take_qp_counter(struct stellar_top_qp *qp, struct nlattr *entry)
{
	struct nlattr *tb[STELLAR_COUNTER_MAX + 1];
	const char *name;
	uint64_t value;

	if (nla_parse_nested(tb, STELLAR_COUNTER_MAX, entry, NULL) < 0 ||
	    !tb[STELLAR_COUNTER_NAME] || !tb[STELLAR_COUNTER_VALUE] ||
	    nla_len(tb[STELLAR_COUNTER_VALUE]) != sizeof(value))
		return;
	name = nla_get_string(tb[STELLAR_COUNTER_NAME]);
	value = nla_get_u64(tb[STELLAR_COUNTER_VALUE]);
	if (!strcmp(name, "tx_bytes"))
		qp->tx_bytes = value;
	else if (!strcmp(name, "rx_bytes"))
		qp->rx_bytes = value;
	else if (!strcmp(name, "retransmits"))
		qp->retransmits = value;
}

int stellar_top_add_qp(struct stellar_top_dev *dev, struct nl_msg *msg)
{
	struct nlattr *tb[STELLAR_ATTR_MAX + 1];
	struct stellar_top_qp *qp;
	struct nlattr *entry;
	int rem;

	if (stellar_parse_attrs(msg, tb) || !tb[STELLAR_ATTR_QPN] ||
	    !tb[STELLAR_ATTR_QP_TYPE] || !tb[STELLAR_ATTR_QP_STATE])
		return -EBADMSG;
	dev->qps_total++;
	if (dev->nr_qps == STELLAR_TOP_MAX_QPS)
		return 0;
	qp = &dev->qps[dev->nr_qps++];
	memset(qp, 0, sizeof(*qp));
	qp->qpn = nla_get_u32(tb[STELLAR_ATTR_QPN]);
	qp->type = nla_get_u8(tb[STELLAR_ATTR_QP_TYPE]);
	qp->state = nla_get_u8(tb[STELLAR_ATTR_QP_STATE]);
	if (tb[STELLAR_ATTR_QP_COUNTERS])
		nla_for_each_nested(entry, tb[STELLAR_ATTR_QP_COUNTERS], rem)
			take_qp_counter(qp, entry);
	return 0;
}

/* Per second, of a counter that went from @a to @b in @secs. */
static double rate(uint64_t a, uint64_t b, double secs)
{
	return b >= a && secs > 0 ? (double)(b - a) / secs : 0;
}

static void fmt_rate(char *buf, size_t len, bool have, double value,
		     double scale)
{
	if (have && scale == 1)
		snprintf(buf, len, "%.0f", value);
	else if (have)
		snprintf(buf, len, "%.1f", value / scale);
	else
		snprintf(buf, len, "-");
}

static const struct stellar_top_dev *find_dev(const struct stellar_top_frame *f,
					      const char *name)
{
	size_t i;

	for (i = 0; f && i < f->nr_devs; i++)
		if (!strcmp(f->devs[i].name, name))
			return &f->devs[i];
	return NULL;
}

/* A percentile of segment @seg over the interval (or all time). */
static void fmt_pct(char *buf, size_t len, const struct stellar_top_dev *prev,
		    const struct stellar_top_dev *cur, int seg, uint32_t ppm)
{
	struct stellar_lat_seg_info window;

	if (!cur->has_lat) {
		snprintf(buf, len, "-");
		return;
	}
	if (prev && prev->has_lat)
		stellar_lat_seg_delta(&prev->lat.seg[seg], &cur->lat.seg[seg],
				      &window);
	else
		window = cur->lat.seg[seg];
	if (!window.count) {
		snprintf(buf, len, "-");
		return;
	}
	stellar_format_ns(stellar_lat_seg_percentile(&window, ppm), buf, len);
}

static void render_devs(FILE *fp, const struct stellar_top_frame *prev,
			const struct stellar_top_frame *cur, double secs)
{
	size_t i;

	fprintf(fp, "%-10s %-8s %8s %8s %9s %9s %7s %9s %9s %9s %9s %9s\n",
		"DEVICE", "NETDEV", "TX_MB/s", "RX_MB/s", "TX_pkt/s",
		"RX_pkt/s", "RETX/s", "queue_p99", "net_p50", "net_p99",
		"cqe_p99", "resp_p99");
	for (i = 0; i < cur->nr_devs; i++) {
		const struct stellar_top_dev *d = &cur->devs[i];
		const struct stellar_top_dev *p = find_dev(prev, d->name);
		char txb[16], rxb[16], txp[16], rxp[16], retx[16];
		char q99[16], n50[16], n99[16], c99[16], r99[16];

		fmt_rate(txb, sizeof(txb), p, p ? rate(p->tx_bytes, d->tx_bytes, secs) : 0, 1e6);
		fmt_rate(rxb, sizeof(rxb), p, p ? rate(p->rx_bytes, d->rx_bytes, secs) : 0, 1e6);
		fmt_rate(txp, sizeof(txp), p, p ? rate(p->tx_packets, d->tx_packets, secs) : 0, 1);
		fmt_rate(rxp, sizeof(rxp), p, p ? rate(p->rx_packets, d->rx_packets, secs) : 0, 1);
		fmt_rate(retx, sizeof(retx), p, p ? rate(p->retransmits, d->retransmits, secs) : 0, 1);
		fmt_pct(q99, sizeof(q99), p, d, STELLAR_LAT_SEG_QUEUE, 990000);
		fmt_pct(n50, sizeof(n50), p, d, STELLAR_LAT_SEG_NETWORK, 500000);
		fmt_pct(n99, sizeof(n99), p, d, STELLAR_LAT_SEG_NETWORK, 990000);
		fmt_pct(c99, sizeof(c99), p, d, STELLAR_LAT_SEG_COMPLETION, 990000);
		fmt_pct(r99, sizeof(r99), p, d, STELLAR_LAT_SEG_RESPONDER, 990000);
		fprintf(fp, "%-10s %-8s %8s %8s %9s %9s %7s %9s %9s %9s %9s %9s\n",
			d->name, d->netdev, txb, rxb, txp, rxp, retx, q99, n50,
			n99, c99, r99);
	}
}

static const struct stellar_path_info *
find_path(const struct stellar_top_dev *d, uint32_t index)
{
	uint32_t i;

	for (i = 0; d && d->has_spray && i < d->spray.nr_paths; i++)
		if (d->spray.path[i].index == index)
			return &d->spray.path[i];
	return NULL;
}

/* Path @path's RTT histogram in @d, or NULL. */
static const struct stellar_lat_seg_info *
path_rtt_of(const struct stellar_top_dev *d, uint32_t path)
{
	uint32_t i;

	for (i = 0; d && d->has_lat && i < d->lat.nr_paths; i++)
		if (d->lat.path_index[i] == path)
			return &d->lat.path_rtt[i];
	return NULL;
}

/* p99 of path @path's RTT samples since @p (all of them without @p). */
static void fmt_path_p99(char *buf, size_t len,
			 const struct stellar_top_dev *p,
			 const struct stellar_top_dev *d, uint32_t path)
{
	const struct stellar_lat_seg_info *cur = path_rtt_of(d, path);
	const struct stellar_lat_seg_info *old = path_rtt_of(p, path);
	struct stellar_lat_seg_info window;

	if (!cur) {
		snprintf(buf, len, "-");
		return;
	}
	if (old)
		stellar_lat_seg_delta(old, cur, &window);
	else
		window = *cur;
	if (!window.count)
		snprintf(buf, len, "-");
	else
		stellar_format_ns(stellar_lat_seg_percentile(&window, 990000),
				  buf, len);
}

static uint64_t bursts_of(const struct stellar_top_dev *d, uint32_t path)
{
	uint32_t i;

	for (i = 0; d && d->has_lat && i < d->lat.nr_bursts; i++)
		if (d->lat.burst[i].path == path)
			return d->lat.burst[i].count;
	return 0;
}

/* Bytes of path @p in the interval (all time on the first screen). */
static uint64_t path_bytes(const struct stellar_path_info *p,
			   const struct stellar_path_info *old)
{
	if (!old)
		return p->bytes;
	return p->bytes >= old->bytes ? p->bytes - old->bytes : p->bytes;
}

static void render_paths(FILE *fp, const struct stellar_top_dev *p,
			 const struct stellar_top_dev *d, double secs)
{
	uint64_t total = 0;
	uint32_t i;
	int j;

	if (!d->has_spray || !d->spray.nr_paths)
		return;
	if (d->spray.spray_paths <= 1 && d->spray.nr_paths <= 1) {
		fprintf(fp, "\nPATHS %s: one path (spray_paths 1)\n", d->name);
		return;
	}
	for (i = 0; i < d->spray.nr_paths; i++)
		total += path_bytes(&d->spray.path[i],
				    find_path(p, d->spray.path[i].index));
	fprintf(fp, "\nPATHS %s: %u spraying QPs, microburst threshold %u us\n",
		d->name, d->spray.qps, d->has_lat ? d->lat.burst_us : 0);
	fprintf(fp, "%5s %-8s %8s %7s %8s %9s %7s  %s\n", "PATH", "STATE",
		"TX_MB/s", "RETX/s", "SRTT_us", "RTT_p99", "BURSTS", "SHARE");
	for (i = 0; i < d->spray.nr_paths; i++) {
		const struct stellar_path_info *pi = &d->spray.path[i];
		const struct stellar_path_info *old = find_path(p, pi->index);
		uint64_t bytes = path_bytes(pi, old);
		int width = total ? (int)((bytes * SHARE_WIDTH + total / 2) /
					  total) : 0;
		char txb[16], retx[16], p99[16];

		fmt_rate(txb, sizeof(txb), old, old ? rate(old->bytes, pi->bytes, secs) : 0, 1e6);
		fmt_rate(retx, sizeof(retx), old, old ? rate(old->retransmits, pi->retransmits, secs) : 0, 1);
		fmt_path_p99(p99, sizeof(p99), p, d, pi->index);
		fprintf(fp, "%5u %-8s %8s %7s %8u %9s %7" PRIu64 "  |", pi->index,
			stellar_path_state(pi), txb, retx, pi->srtt_us, p99,
			bursts_of(d, pi->index));
		for (j = 0; j < SHARE_WIDTH; j++)
			fputc(j < width ? '#' : ' ', fp);
		fprintf(fp, "| %3d%%\n",
			total ? (int)(bytes * 100 / total) : 0);
	}
}

static const struct stellar_top_qp *find_qp(const struct stellar_top_dev *d,
					    uint32_t qpn)
{
	size_t i;

	for (i = 0; d && i < d->nr_qps; i++)
		if (d->qps[i].qpn == qpn)
			return &d->qps[i];
	return NULL;
}

static void render_qps(FILE *fp, const struct stellar_top_dev *p,
		       const struct stellar_top_dev *d, double secs)
{
	static const char *const types[] = {
		[0] = "SMI", [1] = "GSI", [2] = "RC", [3] = "UC", [4] = "UD",
		[9] = "XRC_INI", [10] = "XRC_TGT",
	};
	static const char *const states[] = { "RESET", "INIT", "RTR", "RTS",
					      "SQD", "SQE", "ERR" };
	size_t i;

	if (d->qp_error == EPERM) {
		fprintf(fp, "\nQPS %s: per-QP figures need CAP_NET_ADMIN\n",
			d->name);
		return;
	}
	if (d->qp_error) {
		fprintf(fp, "\nQPS %s: not readable (%s)\n", d->name,
			strerror(d->qp_error));
		return;
	}
	fprintf(fp, "\nQPS %s: %zu", d->name, d->qps_total);
	if (d->qps_total > d->nr_qps)
		fprintf(fp, " (first %zu shown)", d->nr_qps);
	fprintf(fp, "\n%8s %-4s %-5s %8s %8s %7s\n", "QPN", "TYPE", "STATE",
		"TX_MB/s", "RX_MB/s", "RETX/s");
	for (i = 0; i < d->nr_qps; i++) {
		const struct stellar_top_qp *q = &d->qps[i];
		const struct stellar_top_qp *o = find_qp(p, q->qpn);
		char txb[16], rxb[16], retx[16];

		fmt_rate(txb, sizeof(txb), o, o ? rate(o->tx_bytes, q->tx_bytes, secs) : 0, 1e6);
		fmt_rate(rxb, sizeof(rxb), o, o ? rate(o->rx_bytes, q->rx_bytes, secs) : 0, 1e6);
		fmt_rate(retx, sizeof(retx), o, o ? rate(o->retransmits, q->retransmits, secs) : 0, 1);
		fprintf(fp, "%8u %-4s %-5s %8s %8s %7s\n", q->qpn,
			q->type < sizeof(types) / sizeof(types[0]) &&
			types[q->type] ?
			types[q->type] : "?",
			q->state < 7 ? states[q->state] : "?", txb, rxb, retx);
	}
}

void stellar_top_render(FILE *fp, const struct stellar_top_frame *prev,
			const struct stellar_top_frame *cur, unsigned int frame,
			const char *clock)
{
	double secs = prev && cur->at_ns > prev->at_ns ?
		      (double)(cur->at_ns - prev->at_ns) / 1e9 : 0;
	size_t i;

	fprintf(fp, "stellar-tool top - %s, frame %u", clock, frame);
	if (prev)
		fprintf(fp, ", rates over %.2fs\n", secs);
	else
		fputs(", latency since device creation\n", fp);
	if (!cur->nr_devs) {
		fputs("no stellar devices\n", fp);
		return;
	}
	fputc('\n', fp);
	render_devs(fp, secs > 0 ? prev : NULL, cur, secs);
	for (i = 0; i < cur->nr_devs; i++) {
		const struct stellar_top_dev *d = &cur->devs[i];
		const struct stellar_top_dev *p =
			secs > 0 ? find_dev(prev, d->name) : NULL;

		render_paths(fp, p, d, secs);
		render_qps(fp, p, d, secs);
	}
}
