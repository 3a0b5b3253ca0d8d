// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stellar-monitor: the device's hw counters as metrics.
 *
 * The values are the RDMA core's hw counters of each stellar device
 * (kernel/stellar_hw_stats.c):
 *   /sys/class/infiniband/<dev>/ports/<port>/hw_counters/<name>
 *   /sys/class/infiniband/<dev>/hw_counters/<name>   (PVDMA, eMTT)
 * read when asked; nothing is counted here.  One table maps each file to
 * a metric family with its type and unit.  STELLAR_SYSFS_ROOT prefixes
 * the sysfs path (the unit tests use a fake tree).
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "monitor.h"

enum {
	F_TX_BYTES, F_RX_BYTES, F_TX_PACKETS, F_RX_PACKETS,
	F_RX_QUEUED, F_RX_QUEUED_MAX,
	F_RETRANSMITS, F_TIMEOUTS, F_NAKS_SENT, F_NAKS_RCVD,
	F_RNR_NAKS_SENT, F_RNR_NAKS_RCVD, F_DUPLICATE, F_OUT_OF_ORDER,
	F_DROPS, F_RX_MCAST,
	F_TX_THROTTLED, F_LIMIT_REFUSED, F_QPS, F_MRS, F_LIMIT_PINNED,
	F_CNP_SENT, F_CNP_RCVD, F_CC_CUTS, F_CC_INCREASES, F_CC_PACED,
	F_SPRAY_QPS, F_SPRAY_PACKETS, F_SPRAY_BYTES, F_SPRAY_RETRANSMITS,
	F_SPRAY_LOSSES, F_SPRAY_ECN, F_SPRAY_FAILED, F_SPRAY_PROBING,
	F_SPRAY_BACK_FAIL,
	F_OOO_MAX, F_OOO_DEPTH,
	F_PVDMA_MAPPINGS, F_PVDMA_PINNED, F_PVDMA_LOOKUPS, F_PVDMA_FAULTS,
	F_PVDMA_PREFETCHES, F_PVDMA_EAGER, F_PVDMA_HUGE, F_PVDMA_PIN_ERR,
	F_PVDMA_MEMLOCK_ERR, F_PVDMA_ODP_INVAL,
	F_EMTT_ENTRIES, F_EMTT_HITS, F_EMTT_MISSES, F_EMTT_FILLS,
	F_EMTT_EVICTIONS, F_EMTT_INVALIDATIONS,
	F_PATH_SRTT, F_LATENCY, F_LATENCY_SIZE, F_PATH_RTT, F_PATH_BURSTS,
	F_READ_ERRORS,
	F_NR
};

#define FAM(idx, n, t, g, l, h) [idx] = { "stellar_" n, t, g, l, h }
#define TP MON_THROUGHPUT
#define ER MON_ERRORS
#define ME MON_MEMORY
#define SP MON_SPRAY
#define C MON_COUNTER
#define G MON_GAUGE

const struct mon_family mon_families[F_NR] = {
	FAM(F_TX_BYTES, "tx_bytes_total", C, TP, NULL,
	    "Bytes sent, from the BTH to the ICRC."),
	FAM(F_RX_BYTES, "rx_bytes_total", C, TP, NULL,
	    "Bytes received, from the BTH to the ICRC."),
	FAM(F_TX_PACKETS, "tx_packets_total", C, TP, NULL, "Packets sent."),
	FAM(F_RX_PACKETS, "rx_packets_total", C, TP, NULL, "Packets received."),
	FAM(F_RX_QUEUED, "rx_queued_bytes", G, TP, NULL,
	    "Received bytes waiting to be processed."),
	FAM(F_RX_QUEUED_MAX, "rx_queued_max_bytes", G, TP, NULL,
	    "Highest rx_queued_bytes seen."),
	FAM(F_RETRANSMITS, "retransmits_total", C, ER, NULL,
	    "Packets sent again."),
	FAM(F_TIMEOUTS, "timeouts_total", C, ER, NULL,
	    "Local ACK timer expiries."),
	FAM(F_NAKS_SENT, "naks_sent_total", C, ER, NULL,
	    "NAKs sent, RNR NAKs included."),
	FAM(F_NAKS_RCVD, "naks_received_total", C, ER, NULL,
	    "NAKs received, RNR NAKs included."),
	FAM(F_RNR_NAKS_SENT, "rnr_naks_sent_total", C, ER, NULL,
	    "RNR NAKs sent."),
	FAM(F_RNR_NAKS_RCVD, "rnr_naks_received_total", C, ER, NULL,
	    "RNR NAKs received."),
	FAM(F_DUPLICATE, "rx_duplicates_total", C, ER, NULL,
	    "Duplicate packets received."),
	FAM(F_OUT_OF_ORDER, "rx_out_of_order_total", C, ER, NULL,
	    "Packets received ahead of a gap."),
	FAM(F_RX_MCAST, "rx_mcast_packets_total", C, TP, NULL,
	    "UD packets received for a multicast group joined here."),
	FAM(F_TX_THROTTLED, "tx_throttled_total", C, TP, NULL,
	    "Times a sender waited for the device's rate limit."),
	FAM(F_LIMIT_REFUSED, "limit_refused_total", C, ER, NULL,
	    "QPs, MRs and pins refused by the device's limits."),
	FAM(F_CNP_SENT, "cnp_sent_total", C, TP, NULL,
	    "CNPs sent for requests that arrived marked CE."),
	FAM(F_CNP_RCVD, "cnp_received_total", C, TP, NULL,
	    "CNPs received from peers."),
	FAM(F_CC_CUTS, "cc_rate_cuts_total", C, TP, NULL,
	    "Times DCQCN cut a QP's rate."),
	FAM(F_CC_INCREASES, "cc_rate_increases_total", C, TP, NULL,
	    "Times DCQCN raised a QP's rate."),
	FAM(F_CC_PACED, "cc_paced_total", C, TP, NULL,
	    "Times a requester waited for its DCQCN rate."),
	FAM(F_QPS, "qps", G, ME, NULL, "QPs of the device."),
	FAM(F_MRS, "mrs", G, ME, NULL, "MRs of the device."),
	FAM(F_LIMIT_PINNED, "limit_pinned_bytes", G, ME, NULL,
	    "Bytes pinned, counted against the device's max_pinned."),
	FAM(F_DROPS, "rx_drops_total", C, ER, "reason",
	    "Received packets dropped, by reason."),
	FAM(F_SPRAY_QPS, "spray_qps", G, SP, NULL, "QPs that spray."),
	FAM(F_SPRAY_PACKETS, "spray_packets_total", C, SP, NULL,
	    "Packets sent over spray paths."),
	FAM(F_SPRAY_BYTES, "spray_bytes_total", C, SP, NULL,
	    "Payload bytes sent over spray paths."),
	FAM(F_SPRAY_RETRANSMITS, "spray_retransmits_total", C, SP, NULL,
	    "Packets resent over spray paths."),
	FAM(F_SPRAY_LOSSES, "spray_losses_total", C, SP, NULL,
	    "Packets declared lost on spray paths."),
	FAM(F_SPRAY_ECN, "spray_ecn_marks_total", C, SP, NULL,
	    "ECN marks seen on spray paths."),
	FAM(F_SPRAY_FAILED, "spray_paths_failed", G, SP, NULL,
	    "Spray paths taken out, summed over QPs."),
	FAM(F_SPRAY_PROBING, "spray_paths_probing", G, SP, NULL,
	    "Spray paths being probed, summed over QPs."),
	FAM(F_SPRAY_BACK_FAIL, "spray_back_failures_total", C, SP, NULL,
	    "Spray paths taken out because their way back was dead."),
	FAM(F_OOO_MAX, "ooo_depth_max", G, SP, NULL,
	    "Deepest out-of-order arrival seen, in packets."),
	FAM(F_OOO_DEPTH, "ooo_arrivals_total", C, SP, "depth",
	    "Out-of-order arrivals by depth range in packets."),
	FAM(F_PVDMA_MAPPINGS, "pvdma_active_mappings", G, ME, NULL,
	    "PVDMA mappings in use."),
	FAM(F_PVDMA_PINNED, "pvdma_pinned_bytes", G, ME, NULL,
	    "Bytes of user memory pinned by PVDMA."),
	FAM(F_PVDMA_LOOKUPS, "pvdma_lookups_total", C, ME, NULL,
	    "PVDMA address lookups."),
	FAM(F_PVDMA_FAULTS, "pvdma_faults_total", C, ME, NULL,
	    "PVDMA chunks pinned on first access."),
	FAM(F_PVDMA_PREFETCHES, "pvdma_prefetches_total", C, ME, NULL,
	    "PVDMA chunks pinned ahead of access."),
	FAM(F_PVDMA_EAGER, "pvdma_eager_pins_total", C, ME, NULL,
	    "PVDMA chunks pinned at registration."),
	FAM(F_PVDMA_HUGE, "pvdma_huge_chunks_total", C, ME, NULL,
	    "PVDMA chunks backed by huge pages."),
	FAM(F_PVDMA_PIN_ERR, "pvdma_pin_errors_total", C, ME, NULL,
	    "PVDMA pins that failed."),
	FAM(F_PVDMA_MEMLOCK_ERR, "pvdma_memlock_errors_total", C, ME, NULL,
	    "PVDMA pins refused by RLIMIT_MEMLOCK."),
	FAM(F_PVDMA_ODP_INVAL, "pvdma_odp_invalidations_total", C, ME, NULL,
	    "On-demand PVDMA chunks unpinned because the address space changed."),
	FAM(F_EMTT_ENTRIES, "emtt_entries", G, ME, NULL,
	    "eMTT entries cached."),
	FAM(F_EMTT_HITS, "emtt_hits_total", C, ME, NULL, "eMTT lookup hits."),
	FAM(F_EMTT_MISSES, "emtt_misses_total", C, ME, NULL,
	    "eMTT lookup misses."),
	FAM(F_EMTT_FILLS, "emtt_fills_total", C, ME, NULL, "eMTT fills."),
	FAM(F_EMTT_EVICTIONS, "emtt_evictions_total", C, ME, NULL,
	    "eMTT evictions."),
	FAM(F_EMTT_INVALIDATIONS, "emtt_invalidations_total", C, ME, NULL,
	    "eMTT invalidations."),
	FAM(F_PATH_SRTT, "path_srtt_seconds", G, MON_LATENCY, NULL,
	    "Smoothed RTT of a spray path, mean over the QPs using it."),
	FAM(F_LATENCY, "latency_seconds", MON_HISTOGRAM, MON_LATENCY, "segment",
	    "Time of each segment of a work request: queue (doorbell to first packet), network (first packet to ACK or last response), completion (ACK to CQE), responder (request arrival to handling)."),
	FAM(F_LATENCY_SIZE, "latency_by_size_seconds", MON_HISTOGRAM,
	    MON_LATENCY, "segment",
	    "The requester's segments (queue, network, completion) by message size: size is the class's upper bound in bytes (256, 4096, 65536) or +Inf."),
	FAM(F_PATH_RTT, "path_rtt_seconds", MON_HISTOGRAM, MON_LATENCY, NULL,
	    "RTT samples of a path: per packet for QPs in extended mode, else of single-packet work requests sent once (path 0)."),
	FAM(F_PATH_BURSTS, "path_bursts_total", C, MON_LATENCY, NULL,
	    "RTT samples of a spray path above its minimum by more than the latency_burst_us module parameter."),
	FAM(F_READ_ERRORS, "monitor_read_errors", G, 0, NULL,
	    "Counter files that did not read as a number in this scrape."),
};

const size_t mon_nr_families = F_NR;
const unsigned int mon_family_path_srtt = F_PATH_SRTT;
const unsigned int mon_family_read_errors = F_READ_ERRORS;
const unsigned int mon_family_latency = F_LATENCY;
const unsigned int mon_family_path_bursts = F_PATH_BURSTS;
const unsigned int mon_family_path_rtt = F_PATH_RTT;
const unsigned int mon_family_latency_size = F_LATENCY_SIZE;

#define CTR(file, fam)		{ file, fam, NULL, false }
#define LBL(file, fam, v)	{ file, fam, v, false }
#define DEV(file, fam)		{ file, fam, NULL, true }

const struct mon_counter mon_counters[] = {
	CTR("tx_bytes", F_TX_BYTES), CTR("rx_bytes", F_RX_BYTES),
	CTR("tx_packets", F_TX_PACKETS), CTR("rx_packets", F_RX_PACKETS),
	CTR("rx_queued_bytes", F_RX_QUEUED),
	CTR("rx_queued_bytes_max", F_RX_QUEUED_MAX),
	CTR("retransmits", F_RETRANSMITS), CTR("timeouts", F_TIMEOUTS),
	CTR("naks_sent", F_NAKS_SENT), CTR("naks_rcvd", F_NAKS_RCVD),
	CTR("rnr_naks_sent", F_RNR_NAKS_SENT),
	CTR("rnr_naks_rcvd", F_RNR_NAKS_RCVD),
	CTR("rx_duplicate", F_DUPLICATE), CTR("out_of_order", F_OUT_OF_ORDER),
	LBL("rx_drop_truncated", F_DROPS, "truncated"),
	LBL("rx_drop_bad_version", F_DROPS, "bad_version"),
	LBL("rx_drop_bad_opcode", F_DROPS, "bad_opcode"),
	LBL("rx_drop_bad_icrc", F_DROPS, "bad_icrc"),
	LBL("rx_drop_no_qp", F_DROPS, "no_qp"),
	LBL("rx_drop_no_dev", F_DROPS, "no_dev"),
	LBL("rx_drop_bad_length", F_DROPS, "bad_length"),
	LBL("rx_drop_psn", F_DROPS, "psn"),
	LBL("rx_drop_queue_full", F_DROPS, "queue_full"),
	CTR("rx_mcast_packets", F_RX_MCAST),
	CTR("tx_throttled", F_TX_THROTTLED),
	CTR("limit_refused", F_LIMIT_REFUSED),
	CTR("cnp_sent", F_CNP_SENT), CTR("cnp_rcvd", F_CNP_RCVD),
	CTR("cc_rate_cuts", F_CC_CUTS),
	CTR("cc_rate_increases", F_CC_INCREASES),
	CTR("cc_paced", F_CC_PACED),
	CTR("spray_qps", F_SPRAY_QPS), CTR("spray_packets", F_SPRAY_PACKETS),
	CTR("spray_bytes", F_SPRAY_BYTES),
	CTR("spray_retransmits", F_SPRAY_RETRANSMITS),
	CTR("spray_losses", F_SPRAY_LOSSES),
	CTR("spray_ecn_marks", F_SPRAY_ECN),
	CTR("spray_paths_failed", F_SPRAY_FAILED),
	CTR("spray_paths_probing", F_SPRAY_PROBING),
	CTR("spray_back_failures", F_SPRAY_BACK_FAIL),
	CTR("ooo_depth_max", F_OOO_MAX),
	LBL("ooo_depth_1", F_OOO_DEPTH, "1"),
	LBL("ooo_depth_2_3", F_OOO_DEPTH, "2-3"),
	LBL("ooo_depth_4_7", F_OOO_DEPTH, "4-7"),
	LBL("ooo_depth_8_15", F_OOO_DEPTH, "8-15"),
	LBL("ooo_depth_16_31", F_OOO_DEPTH, "16-31"),
	LBL("ooo_depth_32_63", F_OOO_DEPTH, "32-63"),
	LBL("ooo_depth_64_127", F_OOO_DEPTH, "64-127"),
	LBL("ooo_depth_128_255", F_OOO_DEPTH, "128-255"),
	LBL("ooo_depth_256_511", F_OOO_DEPTH, "256-511"),
	LBL("ooo_depth_512_1023", F_OOO_DEPTH, "512-1023"),
	LBL("ooo_depth_1024_2047", F_OOO_DEPTH, "1024-2047"),
	LBL("ooo_depth_2048_up", F_OOO_DEPTH, "2048+"),
	DEV("pvdma_active_mappings", F_PVDMA_MAPPINGS),
	DEV("pvdma_pinned_bytes", F_PVDMA_PINNED),
	DEV("pvdma_lookups", F_PVDMA_LOOKUPS),
	DEV("pvdma_faults", F_PVDMA_FAULTS),
	DEV("pvdma_prefetches", F_PVDMA_PREFETCHES),
	DEV("pvdma_eager_pins", F_PVDMA_EAGER),
	DEV("pvdma_huge_chunks", F_PVDMA_HUGE),
	DEV("pvdma_pin_errors", F_PVDMA_PIN_ERR),
	DEV("pvdma_memlock_errors", F_PVDMA_MEMLOCK_ERR),
	DEV("pvdma_odp_invalidations", F_PVDMA_ODP_INVAL),
	DEV("emtt_entries", F_EMTT_ENTRIES), DEV("emtt_hits", F_EMTT_HITS),
	DEV("emtt_misses", F_EMTT_MISSES), DEV("emtt_fills", F_EMTT_FILLS),
	DEV("emtt_evictions", F_EMTT_EVICTIONS),
	DEV("emtt_invalidations", F_EMTT_INVALIDATIONS),
	DEV("qps", F_QPS), DEV("mrs", F_MRS),
	DEV("limit_pinned_bytes", F_LIMIT_PINNED),
};

const size_t mon_nr_counters = sizeof(mon_counters) / sizeof(mon_counters[0]);

static const struct {
	const char *name;
	unsigned int bits;
} group_names[] = {
	{ "throughput", MON_THROUGHPUT }, { "errors", MON_ERRORS },
	{ "memory", MON_MEMORY }, { "spray", MON_SPRAY },
	{ "latency", MON_LATENCY },
	{ "all", MON_DEFAULT_GROUPS | MON_LATENCY },
};

/**
 * mon_parse_groups() - parse a --metrics list ("throughput,spray")
 * @list: comma separated group names
 * @groups: set to their enum mon_group bits
 *
 * Return: 0, or -1 for an unknown or empty name.
 */
int mon_parse_groups(const char *list, unsigned int *groups)
{
	const char *p = list;
	size_t len, i;

	*groups = 0;
	for (;;) {
		len = strcspn(p, ",");
		for (i = 0; i < sizeof(group_names) / sizeof(group_names[0]); i++)
			if (strlen(group_names[i].name) == len &&
			    !strncmp(p, group_names[i].name, len))
				break;
		if (i == sizeof(group_names) / sizeof(group_names[0]))
			return -1;
		*groups |= group_names[i].bits;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

/* The sysfs class directory, under $STELLAR_SYSFS_ROOT if set. */
const char *mon_sysfs_class(char *buf, size_t len)
{
	const char *root = getenv("STELLAR_SYSFS_ROOT");

	snprintf(buf, len, "%s/sys/class/infiniband", root ? root : "");
	return buf;
}

/**
 * mon_add() - a new sample of @snap, zeroed but for its keys
 * @snap: the snapshot
 * @family: index in mon_families[]
 * @device: device name (cut to MON_NAME_LEN - 1)
 * @port: port number, 0 for the device
 *
 * Return: the sample, or NULL when MON_MAX_SAMPLES are taken (truncated
 * is set) or memory ran out.
 */
struct mon_sample *mon_add(struct mon_snapshot *snap, unsigned int family,
			   const char *device, unsigned int port)
{
	struct mon_sample *s;

	if (snap->nr == snap->cap) {
		size_t cap = snap->cap ? snap->cap * 2 : 128;

		if (snap->nr >= MON_MAX_SAMPLES) {
			snap->truncated = true;
			return NULL;
		}
		s = realloc(snap->samples, cap * sizeof(*s));
		if (!s)
			return NULL;
		snap->samples = s;
		snap->cap = cap;
	}
	s = &snap->samples[snap->nr++];
	memset(s, 0, sizeof(*s));
	s->family = family;
	snprintf(s->device, sizeof(s->device), "%s", device);
	s->port = port;
	s->path = -1;
	return s;
}

/**
 * mon_add_histogram() - a log2 histogram as Prometheus histogram samples
 * @snap: where to add
 * @family: a MON_HISTOGRAM family
 * @device: the device
 * @label_value: the family's label (e.g. the segment), or NULL
 * @path: the path label, or -1
 * @order: sort key of this histogram among the family's (a multiple of
 *	   nr_buckets + 2; its samples take the keys after it)
 * @bucket: counts per bucket: bucket 0 below 2^min_shift ns, bucket k
 *	    below 2^(min_shift + k) ns, the last one unbounded
 * @nr_buckets: entries of @bucket
 * @min_shift: see @bucket
 * @sum_ns: the sum of the samples, ns
 *
 * Adds cumulative _bucket samples with le in seconds, the +Inf bucket,
 * _sum in seconds and _count.
 *
 * Return: 0, or -1 when @snap is full.
 */
int mon_add_histogram(struct mon_snapshot *snap, unsigned int family,
		      const char *device, const char *label_value, int path,
		      unsigned int order, const uint64_t *bucket,
		      unsigned int nr_buckets, unsigned int min_shift,
		      uint64_t sum_ns)
{
	uint64_t cumulative = 0;
	struct mon_sample *s;
	unsigned int k;

	for (k = 0; k < nr_buckets; k++) {
		cumulative += bucket[k];
		s = mon_add(snap, family, device, 0);
		if (!s)
			return -1;
		s->label_value = label_value;
		s->path = path;
		s->order = order + k;
		s->suffix = "_bucket";
		s->value = cumulative;
		if (k == nr_buckets - 1)
			snprintf(s->le, sizeof(s->le), "+Inf");
		else
			snprintf(s->le, sizeof(s->le), "%.9g",
				 (double)(1ULL << (min_shift + k)) / 1e9);
	}
	s = mon_add(snap, family, device, 0);
	if (!s)
		return -1;
	s->label_value = label_value;
	s->path = path;
	s->order = order + nr_buckets;
	s->suffix = "_sum";
	s->is_float = true;
	s->fvalue = (double)sum_ns / 1e9;
	s = mon_add(snap, family, device, 0);
	if (!s)
		return -1;
	s->label_value = label_value;
	s->path = path;
	s->order = order + nr_buckets + 1;
	s->suffix = "_count";
	s->value = cumulative;
	return 0;
}

#define MON_PATH_LEN 4096

/* printf into a MON_PATH_LEN buffer; -1 if it did not fit. */
static int __attribute__((format(printf, 2, 3)))
pathf(char *buf, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, MON_PATH_LEN, fmt, ap);
	va_end(ap);
	return n < 0 || n >= MON_PATH_LEN ? -1 : 0;
}

/* Read one unsigned decimal number (a line) from @path. */
static int read_u64(const char *path, uint64_t *value)
{
	char buf[32], *end;
	FILE *fp = fopen(path, "re");
	size_t n;

	if (!fp)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	if (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	if (!n || buf[0] < '0' || buf[0] > '9')
		return -1;
	errno = 0;
	*value = strtoull(buf, &end, 10);
	return errno || *end ? -1 : 0;
}

/* Read the counters of one hw_counters directory. */
static void collect_dir(struct mon_snapshot *snap, const char *dir,
			const char *device, unsigned int port,
			unsigned int groups)
{
	char path[MON_PATH_LEN];
	const struct mon_counter *c;
	struct mon_sample *s;
	uint64_t v;
	size_t i;

	for (i = 0; i < mon_nr_counters; i++) {
		c = &mon_counters[i];
		if (c->per_device != !port ||
		    !(mon_families[c->family].group & groups))
			continue;
		if (pathf(path, "%s/%s", dir, c->file) || access(path, F_OK))
			continue;	/* an older module: not there */
		if (read_u64(path, &v)) {
			snap->read_errors++;
			continue;
		}
		s = mon_add(snap, c->family, device, port);
		if (!s)
			return;
		s->label_value = c->label_value;
		s->order = i;
		s->value = v;
	}
}

/* Is @name usable as a label value and path part? */
static bool safe_name(const char *name)
{
	size_t n = strlen(name);

	if (!n || n >= MON_NAME_LEN || name[0] == '.')
		return false;
	return strspn(name, "abcdefghijklmnopqrstuvwxyz"
			    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") == n;
}

/* Is @dev_dir a stellar device?  Its port 1 counts spray packets. */
static bool is_stellar(const char *dev_dir)
{
	char path[MON_PATH_LEN];

	return !pathf(path, "%s/ports/1/hw_counters/spray_packets", dev_dir) &&
	       !access(path, F_OK);
}

static void collect_device(struct mon_snapshot *snap, const char *dev_dir,
			   const char *device, unsigned int groups)
{
	char path[MON_PATH_LEN];
	struct dirent *de;
	unsigned long port;
	char *end;
	DIR *d;

	if (!pathf(path, "%s/hw_counters", dev_dir))
		collect_dir(snap, path, device, 0, groups);
	if (pathf(path, "%s/ports", dev_dir))
		return;
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		port = strtoul(de->d_name, &end, 10);
		if (de->d_name[0] < '1' || de->d_name[0] > '9' || *end ||
		    port > 255)
			continue;
		if (!pathf(path, "%s/ports/%lu/hw_counters", dev_dir, port))
			collect_dir(snap, path, device, port, groups);
	}
	closedir(d);
}

static int cmp_sample(const void *a, const void *b)
{
	const struct mon_sample *x = a, *y = b;
	int r;

	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	r = strcmp(x->device, y->device);
	if (r)
		return r;
	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	if (x->path != y->path)
		return x->path < y->path ? -1 : 1;
	return (int)x->order - (int)y->order;
}

/**
 * mon_list_devices() - the names of the stellar devices
 * @class_dir: the infiniband class directory (mon_sysfs_class())
 * @names: filled with up to @max names
 * @max: room in @names
 *
 * Return: the number of names filled.
 */
size_t mon_list_devices(const char *class_dir, char (*names)[MON_NAME_LEN],
			size_t max)
{
	char dev_dir[MON_PATH_LEN];
	struct dirent *de;
	DIR *d = opendir(class_dir);
	size_t n = 0;

	if (!d)
		return 0;
	while (n < max && (de = readdir(d))) {
		if (safe_name(de->d_name) &&
		    !pathf(dev_dir, "%s/%s", class_dir, de->d_name) &&
		    is_stellar(dev_dir))	/* safe_name(): fits */
			memcpy(names[n++], de->d_name, strlen(de->d_name) + 1);
	}
	closedir(d);
	return n;
}

/**
 * mon_collect() - read the hw counters of every stellar device
 * @snap: filled (appended to); free with mon_snapshot_free()
 * @class_dir: the infiniband class directory (mon_sysfs_class())
 * @groups: enum mon_group bits to read
 * @only_device: read this device only, or NULL for all
 *
 * Devices without stellar's counters are skipped.  The samples end up
 * sorted by family, device, port.
 *
 * Return: 0, or -1 if @class_dir cannot be read (no RDMA core).
 */
int mon_collect(struct mon_snapshot *snap, const char *class_dir,
		unsigned int groups, const char *only_device)
{
	char dev_dir[MON_PATH_LEN];
	struct dirent *de;
	DIR *d = opendir(class_dir);

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (!safe_name(de->d_name) ||
		    (only_device && strcmp(de->d_name, only_device)))
			continue;
		if (!pathf(dev_dir, "%s/%s", class_dir, de->d_name) &&
		    is_stellar(dev_dir))
			collect_device(snap, dev_dir, de->d_name, groups);
	}
	closedir(d);
	mon_sort(snap);
	return 0;
}

/* Sort the samples into the order the formatters need. */
void mon_sort(struct mon_snapshot *snap)
{
	if (snap->nr)
		qsort(snap->samples, snap->nr, sizeof(*snap->samples),
		      cmp_sample);
}

void mon_snapshot_free(struct mon_snapshot *snap)
{
	free(snap->samples);
	memset(snap, 0, sizeof(*snap));
}

/* The labels of @s, "{...}" (none: ""). */
static void format_labels(FILE *fp, const struct mon_sample *s)
{
	const struct mon_family *f = &mon_families[s->family];

	if (!s->device[0])
		return;
	fprintf(fp, "{device=\"%s\"", s->device);
	if (s->port)
		fprintf(fp, ",port=\"%u\"", s->port);
	if (s->path >= 0)
		fprintf(fp, ",path=\"%d\"", s->path);
	if (f->label && s->label_value)
		fprintf(fp, ",%s=\"%s\"", f->label, s->label_value);
	if (s->size)
		fprintf(fp, ",size=\"%s\"", s->size);
	if (s->le[0])
		fprintf(fp, ",le=\"%s\"", s->le);
	fputc('}', fp);
}

static const char *type_name(enum mon_type type)
{
	return type == MON_COUNTER ? "counter" :
	       type == MON_HISTOGRAM ? "histogram" : "gauge";
}

static void format_value(FILE *fp, const struct mon_sample *s)
{
	if (s->is_float)
		fprintf(fp, "%.9g", s->fvalue);
	else
		fprintf(fp, "%" PRIu64, s->value);
}

/**
 * mon_format_prometheus() - @snap in the Prometheus text format (0.0.4)
 * @fp: output
 * @snap: sorted samples (mon_collect(), mon_sort())
 * @groups: the families selected: each gets HELP and TYPE even without
 *	    samples, so that a scrape names every metric it may have
 *
 * Ends with stellar_monitor_read_errors.
 */
void mon_format_prometheus(FILE *fp, const struct mon_snapshot *snap,
			   unsigned int groups)
{
	const struct mon_family *f;
	size_t i = 0;
	unsigned int fam;

	for (fam = 0; fam < mon_nr_families; fam++) {
		f = &mon_families[fam];
		if (fam == mon_family_read_errors || !(f->group & groups))
			continue;
		fprintf(fp, "# HELP %s %s\n# TYPE %s %s\n", f->name, f->help,
			f->name, type_name(f->type));
		while (i < snap->nr && snap->samples[i].family < fam)
			i++;
		for (; i < snap->nr && snap->samples[i].family == fam; i++) {
			fputs(f->name, fp);
			if (snap->samples[i].suffix)
				fputs(snap->samples[i].suffix, fp);
			format_labels(fp, &snap->samples[i]);
			fputc(' ', fp);
			format_value(fp, &snap->samples[i]);
			fputc('\n', fp);
		}
	}
	f = &mon_families[mon_family_read_errors];
	fprintf(fp, "# HELP %s %s\n# TYPE %s gauge\n%s %" PRIu64 "\n",
		f->name, f->help, f->name, f->name, snap->read_errors);
}

/**
 * mon_format_json() - @snap as one line of JSON
 * @fp: output
 * @snap: the samples
 * @timestamp: seconds since the epoch
 *
 * {"timestamp":T,"metrics":[{"name":N,"type":"counter","labels":{...},
 * "value":V},...],"read_errors":E}
 */
void mon_format_json(FILE *fp, const struct mon_snapshot *snap,
		     double timestamp)
{
	const struct mon_sample *s;
	const struct mon_family *f;
	size_t i;

	fprintf(fp, "{\"timestamp\":%.3f,\"metrics\":[", timestamp);
	for (i = 0; i < snap->nr; i++) {
		s = &snap->samples[i];
		f = &mon_families[s->family];
		fprintf(fp, "%s{\"name\":\"%s%s\",\"type\":\"%s\",\"labels\":{\"device\":\"%s\"",
			i ? "," : "", f->name, s->suffix ? s->suffix : "",
			type_name(f->type), s->device);
		if (s->port)
			fprintf(fp, ",\"port\":\"%u\"", s->port);
		if (s->path >= 0)
			fprintf(fp, ",\"path\":\"%d\"", s->path);
		if (f->label && s->label_value)
			fprintf(fp, ",\"%s\":\"%s\"", f->label, s->label_value);
		if (s->size)
			fprintf(fp, ",\"size\":\"%s\"", s->size);
		if (s->le[0])
			fprintf(fp, ",\"le\":\"%s\"", s->le);
		fputs("},\"value\":", fp);
		format_value(fp, s);
		fputc('}', fp);
	}
	fprintf(fp, "],\"read_errors\":%" PRIu64 "}\n", snap->read_errors);
}
