// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of stellar-tool's PVDMA and eMTT output (src/mem.c).
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

#include "mem.h"

static void add(struct stellar_counters *c, unsigned int type, uint64_t v)
{
	c->entry[c->count].type = type;
	c->entry[c->count].value = v;
	c->count++;
}

/* Run @print on @info; return the output (caller frees). */
static char *render(void (*print)(FILE *, const struct stellar_dev_info *,
				  bool),
		    const struct stellar_dev_info *info, bool json)
{
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);

	assert_non_null(fp);
	print(fp, info, json);
	fclose(fp);
	return text;
}

static void pvdma_info(struct stellar_dev_info *info)
{
	memset(info, 0, sizeof(*info));
	strcpy(info->dev_name, "stellar0");
	add(&info->pvdma, STELLAR_PVDMA_ACTIVE_MAPPINGS, 1245);
	add(&info->pvdma, STELLAR_PVDMA_PINNED_BYTES, 2611003392ULL);
	add(&info->pvdma, STELLAR_PVDMA_LOOKUPS, 1000);
	add(&info->pvdma, STELLAR_PVDMA_FAULTS, 13);
	add(&info->pvdma, STELLAR_PVDMA_PREFETCHES, 2);
	add(&info->pvdma, STELLAR_PVDMA_PIN_LAT_10US, 4);
	add(&info->pvdma, STELLAR_PVDMA_PIN_LAT_SLOW, 1);
	info->present = 1u << STELLAR_ATTR_PIN_MODE;
	info->pin_mode = STELLAR_PIN_LAZY;
}

static void test_pvdma_text(void **state)
{
	struct stellar_dev_info info;
	char *text;

	(void)state;
	pvdma_info(&info);
	text = render(stellar_print_pvdma, &info, false);
	assert_string_equal(text,
			    "[stellar0]\n"
			    "Active mappings: 1245\n"
			    "Cache hits: 98.7%\n"
			    "Page faults: 13\n"
			    "Prefetches: 2\n"
			    "Pinned bytes: 2611003392\n"
			    "Lookups: 1000\n"
			    "Pin mode: lazy\n"
			    "Pin latency: <10us 4, >=10ms 1\n");
	free(text);
}

static void test_pvdma_json(void **state)
{
	struct stellar_dev_info info;
	char *text;

	(void)state;
	pvdma_info(&info);
	info.pin_mode = STELLAR_PIN_EAGER;
	text = render(stellar_print_pvdma, &info, true);
	assert_string_equal(text,
			    "{\"device\":\"stellar0\",\"active_mappings\":1245,"
			    "\"cache_hit_percent\":98.7,\"page_faults\":13,"
			    "\"prefetches\":2,\"pinned_bytes\":2611003392,"
			    "\"lookups\":1000,\"pin_mode\":\"eager\","
			    "\"pin_latency\":{\"lt_10us\":4,\"ge_10ms\":1}}");
	free(text);
}

/* No lookups yet: 0.0%, not a division by zero. */
static void test_pvdma_idle(void **state)
{
	struct stellar_dev_info info;
	char *text;

	(void)state;
	memset(&info, 0, sizeof(info));
	strcpy(info.dev_name, "stellar1");
	add(&info.pvdma, STELLAR_PVDMA_LOOKUPS, 0);
	add(&info.pvdma, STELLAR_PVDMA_FAULTS, 0);
	text = render(stellar_print_pvdma, &info, false);
	assert_non_null(strstr(text, "Cache hits: 0.0%\n"));
	free(text);
}

static void test_emtt(void **state)
{
	struct stellar_dev_info info;
	char *text;

	(void)state;
	memset(&info, 0, sizeof(info));
	strcpy(info.dev_name, "stellar0");
	add(&info.emtt, STELLAR_EMTT_ENTRIES, 64000);
	add(&info.emtt, STELLAR_EMTT_HITS, 3);
	add(&info.emtt, STELLAR_EMTT_MISSES, 1);
	add(&info.emtt, STELLAR_EMTT_EVICTIONS, 0);
	text = render(stellar_print_emtt, &info, false);
	assert_string_equal(text, "[stellar0]\nEntries: 64000\n"
			    "Hit rate: 75.0%\nHits: 3\nMisses: 1\n"
			    "Evictions: 0\n");
	free(text);
	text = render(stellar_print_emtt, &info, true);
	assert_string_equal(text, "{\"device\":\"stellar0\",\"entries\":64000,"
			    "\"hit_percent\":75.0,\"hits\":3,\"misses\":1,"
			    "\"evictions\":0}");
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pvdma_text),
		cmocka_unit_test(test_pvdma_json),
		cmocka_unit_test(test_pvdma_idle),
		cmocka_unit_test(test_emtt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
