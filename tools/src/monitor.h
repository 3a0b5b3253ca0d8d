/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stellar-monitor: the device's hw counters (sysfs) as metrics, and their
 * Prometheus text and JSON output.  No socket here: the unit tests link it.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_MONITOR_H
#define STELLAR_MONITOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Metric groups (--metrics), a bit each. */
enum mon_group {
	MON_THROUGHPUT = 1u << 0,	/* bytes and packets, rx backlog */
	MON_ERRORS = 1u << 1,		/* retransmits, timeouts, NAKs, drops */
	MON_MEMORY = 1u << 2,		/* pvdma_*, emtt_* */
	MON_SPRAY = 1u << 3,		/* spray_*, ooo_* */
	MON_LATENCY = 1u << 4,		/* latency histograms, path RTTs (netlink) */
};

#define MON_DEFAULT_GROUPS (MON_THROUGHPUT | MON_ERRORS | MON_MEMORY | MON_SPRAY)

enum mon_type { MON_COUNTER, MON_GAUGE, MON_HISTOGRAM };

/* One metric family as exported. */
struct mon_family {
	const char *name;	/* stellar_..., with its unit and _total */
	enum mon_type type;
	unsigned int group;	/* enum mon_group */
	const char *label;	/* extra label of the sysfs names, or NULL */
	const char *help;
};

/* One sysfs hw counter and the series it becomes. */
struct mon_counter {
	const char *file;	/* name in hw_counters/ */
	unsigned int family;	/* index in mon_families[] */
	const char *label_value;/* value of the family's label, or NULL */
	bool per_device;	/* read from <dev>/hw_counters, not the port's */
};

extern const struct mon_family mon_families[];
extern const size_t mon_nr_families;
extern const struct mon_counter mon_counters[];
extern const size_t mon_nr_counters;

/* Indices of families not read from sysfs. */
extern const unsigned int mon_family_path_srtt;
extern const unsigned int mon_family_read_errors;
extern const unsigned int mon_family_latency;
extern const unsigned int mon_family_path_bursts;
extern const unsigned int mon_family_path_rtt;
extern const unsigned int mon_family_latency_size;

/* Device and port names are bounded; so is the number of samples. */
#define MON_NAME_LEN	64
#define MON_MAX_SAMPLES	16384

/* One value read. */
struct mon_sample {
	unsigned int family;
	const char *label_value;	/* the family's extra label, or NULL */
	const char *size;		/* message-size class label, or NULL */
	char device[MON_NAME_LEN];
	unsigned int port;		/* 0: device-wide */
	int path;			/* -1: none */
	unsigned int order;		/* in a family: mon_counters[] index */
	uint64_t value;			/* counters and integer gauges */
	double fvalue;			/* when is_float */
	bool is_float;
	const char *suffix;		/* histograms: _bucket, _sum, _count */
	char le[24];			/* histogram buckets: the le label */
};

struct mon_snapshot {
	struct mon_sample *samples;
	size_t nr, cap;
	uint64_t read_errors;		/* files that did not read as a number */
	bool truncated;			/* MON_MAX_SAMPLES reached */
};

int mon_parse_groups(const char *list, unsigned int *groups);
const char *mon_sysfs_class(char *buf, size_t len);

struct mon_sample *mon_add(struct mon_snapshot *snap, unsigned int family,
			   const char *device, unsigned int port);
size_t mon_list_devices(const char *class_dir, char (*names)[MON_NAME_LEN],
			size_t max);
int mon_collect(struct mon_snapshot *snap, const char *class_dir,
		unsigned int groups, const char *only_device);
void mon_sort(struct mon_snapshot *snap);
int mon_add_histogram(struct mon_snapshot *snap, unsigned int family,
		      const char *device, const char *label_value, int path,
		      unsigned int order, const uint64_t *bucket,
		      unsigned int nr_buckets, unsigned int min_shift,
		      uint64_t sum_ns);
void mon_snapshot_free(struct mon_snapshot *snap);

void mon_format_prometheus(FILE *fp, const struct mon_snapshot *snap,
			   unsigned int groups);
void mon_format_json(FILE *fp, const struct mon_snapshot *snap,
		     double timestamp);

#endif /* STELLAR_MONITOR_H */
