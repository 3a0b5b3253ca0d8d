// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stellar-tool: PVDMA and eMTT statistics.  The text output is the
 * device's section of /proc/stellar/pvdma_stats or emtt_stats; JSON uses
 * the snake_case keys below.  Counters the kernel did not send are left
 * out.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <errno.h>
#include <inttypes.h>

#include <netlink/attr.h>

#include "format.h"
#include "mem.h"

/**
 * stellar_decode_mem_counters() - read a PVDMA or eMTT statistics nest
 * @nest: STELLAR_ATTR_PVDMA_STATS or STELLAR_ATTR_EMTT_STATS
 * @counters: filled in the order the kernel sent them
 *
 * Both enums number UNSPEC 0 and PAD 1; those are skipped.
 *
 * Return: 0, or -EINVAL when a counter is not a u64.
 */
int stellar_decode_mem_counters(struct nlattr *nest,
				struct stellar_counters *counters)
{
	struct nlattr *attr;
	int rem;

	counters->count = 0;
	nla_for_each_nested(attr, nest, rem) {
		struct stellar_counter *entry;

		if (nla_type(attr) <= STELLAR_PVDMA_PAD)
			continue;
		if (nla_len(attr) != sizeof(uint64_t))
			return -EINVAL;
		if (counters->count == STELLAR_MAX_COUNTERS)
			continue;
		entry = &counters->entry[counters->count++];
		entry->type = nla_type(attr);
		entry->value = nla_get_u64(attr);
	}
	return 0;
}

static bool find(const struct stellar_counters *counters, unsigned int type,
		 uint64_t *value)
{
	unsigned int i;

	for (i = 0; i < counters->count; i++) {
		if (counters->entry[i].type == type) {
			*value = counters->entry[i].value;
			return true;
		}
	}
	return false;
}

struct mem_field {
	unsigned int type;
	const char *label;	/* text, as in /proc/stellar */
	const char *key;	/* JSON */
};

static void print_open(FILE *fp, const struct stellar_dev_info *info,
		       bool json)
{
	if (json) {
		fputs("{\"device\":", fp);
		stellar_json_string(fp, info->dev_name);
	} else {
		fprintf(fp, "[%s]\n", info->dev_name);
	}
}

static void print_u64(FILE *fp, bool json, const char *label,
		      const char *key, uint64_t value)
{
	if (json)
		fprintf(fp, ",\"%s\":%" PRIu64, key, value);
	else
		fprintf(fp, "%s: %" PRIu64 "\n", label, value);
}

/* @part of @whole in per mille (0 when @whole is 0). */
static uint64_t per_mille(uint64_t part, uint64_t whole)
{
	return whole ? part * 1000 / whole : 0;
}

static void print_percent(FILE *fp, bool json, const char *label,
			  const char *key, uint64_t permille)
{
	if (json)
		fprintf(fp, ",\"%s\":%" PRIu64 ".%" PRIu64, key,
			permille / 10, permille % 10);
	else
		fprintf(fp, "%s: %" PRIu64 ".%" PRIu64 "%%\n", label,
			permille / 10, permille % 10);
}

static void print_fields(FILE *fp, const struct stellar_counters *counters,
			 const struct mem_field *fields, size_t n, bool json)
{
	uint64_t value;
	size_t i;

	for (i = 0; i < n; i++)
		if (find(counters, fields[i].type, &value))
			print_u64(fp, json, fields[i].label, fields[i].key,
				  value);
}

static const struct mem_field pvdma_fields[] = {
	{ STELLAR_PVDMA_FAULTS, "Page faults", "page_faults" },
	{ STELLAR_PVDMA_PREFETCHES, "Prefetches", "prefetches" },
	{ STELLAR_PVDMA_EAGER_PINS, "Eager pins", "eager_pins" },
	{ STELLAR_PVDMA_PINNED_BYTES, "Pinned bytes", "pinned_bytes" },
	{ STELLAR_PVDMA_HUGE_CHUNKS, "Huge chunks", "huge_chunks" },
	{ STELLAR_PVDMA_LOOKUPS, "Lookups", "lookups" },
	{ STELLAR_PVDMA_PIN_ERRORS, "Pin errors", "pin_errors" },
	{ STELLAR_PVDMA_MEMLOCK_ERRORS, "Memlock errors", "memlock_errors" },
	{ STELLAR_PVDMA_ODP_INVALIDATIONS, "ODP invalidations",
	  "odp_invalidations" },
};

static const struct mem_field latency_fields[] = {
	{ STELLAR_PVDMA_PIN_LAT_10US, "<10us", "lt_10us" },
	{ STELLAR_PVDMA_PIN_LAT_100US, "<100us", "lt_100us" },
	{ STELLAR_PVDMA_PIN_LAT_1MS, "<1ms", "lt_1ms" },
	{ STELLAR_PVDMA_PIN_LAT_10MS, "<10ms", "lt_10ms" },
	{ STELLAR_PVDMA_PIN_LAT_SLOW, ">=10ms", "ge_10ms" },
};

static void print_latency(FILE *fp, const struct stellar_counters *counters,
			  bool json)
{
	const size_t n = sizeof(latency_fields) / sizeof(latency_fields[0]);
	bool first = true;
	uint64_t value;
	size_t i;

	fputs(json ? ",\"pin_latency\":{" : "Pin latency: ", fp);
	for (i = 0; i < n; i++) {
		if (!find(counters, latency_fields[i].type, &value))
			continue;
		if (json)
			fprintf(fp, "%s\"%s\":%" PRIu64, first ? "" : ",",
				latency_fields[i].key, value);
		else
			fprintf(fp, "%s%s %" PRIu64, first ? "" : ", ",
				latency_fields[i].label, value);
		first = false;
	}
	fputs(json ? "}" : "\n", fp);
}

static const char *pin_mode_name(uint32_t mode)
{
	return mode == STELLAR_PIN_EAGER ? "eager" :
	       mode == STELLAR_PIN_LAZY ? "lazy" : "unknown";
}

/**
 * stellar_print_pvdma() - one device's PVDMA statistics
 * @fp: output
 * @info: the device, with info->pvdma decoded
 * @json: a JSON object instead of text
 */
void stellar_print_pvdma(FILE *fp, const struct stellar_dev_info *info,
			 bool json)
{
	const struct stellar_counters *c = &info->pvdma;
	uint64_t active, lookups, faults = 0;

	print_open(fp, info, json);
	if (find(c, STELLAR_PVDMA_ACTIVE_MAPPINGS, &active))
		print_u64(fp, json, "Active mappings", "active_mappings",
			  active);
	if (find(c, STELLAR_PVDMA_LOOKUPS, &lookups)) {
		find(c, STELLAR_PVDMA_FAULTS, &faults);
		print_percent(fp, json, "Cache hits", "cache_hit_percent",
			      per_mille(lookups - (faults < lookups ?
						   faults : lookups),
					lookups));
	}
	print_fields(fp, c, pvdma_fields,
		     sizeof(pvdma_fields) / sizeof(pvdma_fields[0]), json);
	if (stellar_has(info, STELLAR_ATTR_PIN_MODE)) {
		if (json)
			fprintf(fp, ",\"pin_mode\":\"%s\"",
				pin_mode_name(info->pin_mode));
		else
			fprintf(fp, "Pin mode: %s\n",
				pin_mode_name(info->pin_mode));
	}
	print_latency(fp, c, json);
	if (json)
		fputc('}', fp);
}

static const struct mem_field emtt_fields[] = {
	{ STELLAR_EMTT_HITS, "Hits", "hits" },
	{ STELLAR_EMTT_MISSES, "Misses", "misses" },
	{ STELLAR_EMTT_FILLS, "Fills", "fills" },
	{ STELLAR_EMTT_EVICTIONS, "Evictions", "evictions" },
	{ STELLAR_EMTT_INVALIDATIONS, "Invalidations", "invalidations" },
};

/**
 * stellar_print_emtt() - one device's eMTT statistics
 * @fp: output
 * @info: the device, with info->emtt decoded
 * @json: a JSON object instead of text
 */
void stellar_print_emtt(FILE *fp, const struct stellar_dev_info *info,
			bool json)
{
	const struct stellar_counters *c = &info->emtt;
	uint64_t entries, hits = 0, misses = 0;

	print_open(fp, info, json);
	if (find(c, STELLAR_EMTT_ENTRIES, &entries))
		print_u64(fp, json, "Entries", "entries", entries);
	if (find(c, STELLAR_EMTT_HITS, &hits) &&
	    find(c, STELLAR_EMTT_MISSES, &misses))
		print_percent(fp, json, "Hit rate", "hit_percent",
			      per_mille(hits, hits + misses));
	print_fields(fp, c, emtt_fields,
		     sizeof(emtt_fields) / sizeof(emtt_fields[0]), json);
	if (json)
		fputc('}', fp);
}
