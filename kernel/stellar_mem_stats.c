// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: PVDMA and eMTT statistics.
 *
 *   /proc/stellar/pvdma_stats   a section per device
 *   /proc/stellar/emtt_stats    a section per device
 *   STELLAR_ATTR_PVDMA_STATS, STELLAR_ATTR_EMTT_STATS   (stellar-tool)
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <net/genetlink.h>
#include <linux/seq_file.h>

#include "stellar_mem.h"

const char *stellar_pin_mode_name(u32 pin_mode)
{
	return pin_mode == STELLAR_PIN_EAGER ? "eager" : "lazy";
}

/* "98.7%": @part of @whole with one decimal, "0.0%" when @whole is 0. */
static void stellar_seq_percent(struct seq_file *m, const char *label,
				u64 part, u64 whole)
{
	u64 permille = whole ? div64_u64(part * 1000, whole) : 0;

	seq_printf(m, "%s: %llu.%llu%%\n", label, permille / 10, permille % 10);
}

static void stellar_pvdma_show_dev(struct seq_file *m, struct stellar_dev *sdev)
{
	u64 lookups = stellar_pvdma_read(sdev, STELLAR_PVDMA_LOOKUPS);
	u64 faults = stellar_pvdma_read(sdev, STELLAR_PVDMA_FAULTS);

	seq_printf(m, "[%s]\n", dev_name(&sdev->ibdev.dev));
	seq_printf(m, "Active mappings: %llu\n",
		   stellar_pvdma_read(sdev, STELLAR_PVDMA_ACTIVE_MAPPINGS));
	stellar_seq_percent(m, "Cache hits", lookups - min(faults, lookups),
			    lookups);
	seq_printf(m, "Page faults: %llu\n", faults);
	seq_printf(m, "Prefetches: %llu\n",
		   stellar_pvdma_read(sdev, STELLAR_PVDMA_PREFETCHES));
	seq_printf(m, "Eager pins: %llu\n",
		   stellar_pvdma_read(sdev, STELLAR_PVDMA_EAGER_PINS));
	seq_printf(m, "Pinned bytes: %llu\n",
		   stellar_pvdma_read(sdev, STELLAR_PVDMA_PINNED_BYTES));
	seq_printf(m, "Huge chunks: %llu\n",
		   stellar_pvdma_read(sdev, STELLAR_PVDMA_HUGE_CHUNKS));
	seq_printf(m, "Lookups: %llu\n", lookups);
	seq_printf(m, "Pin errors: %llu\n",
		   stellar_pvdma_read(sdev, STELLAR_PVDMA_PIN_ERRORS));
	seq_printf(m, "Memlock errors: %llu\n",
		   stellar_pvdma_read(sdev, STELLAR_PVDMA_MEMLOCK_ERRORS));
	seq_printf(m, "ODP invalidations: %llu\n",
		   stellar_pvdma_read(sdev, STELLAR_PVDMA_ODP_INVALIDATIONS));
	seq_printf(m, "Pin mode: %s\n",
		   stellar_pin_mode_name(READ_ONCE(sdev->settings.pin_mode)));
	seq_printf(m, "Pin latency: <10us %llu, <100us %llu, <1ms %llu, <10ms %llu, >=10ms %llu\n",
		   stellar_pvdma_read(sdev, STELLAR_PVDMA_PIN_LAT_10US),
		   stellar_pvdma_read(sdev, STELLAR_PVDMA_PIN_LAT_100US),
		   stellar_pvdma_read(sdev, STELLAR_PVDMA_PIN_LAT_1MS),
		   stellar_pvdma_read(sdev, STELLAR_PVDMA_PIN_LAT_10MS),
		   stellar_pvdma_read(sdev, STELLAR_PVDMA_PIN_LAT_SLOW));
}

int stellar_pvdma_stats_show(struct seq_file *m, void *v)
{
	struct stellar_dev *sdev;
	bool first = true;

	rcu_read_lock();
	list_for_each_entry_rcu(sdev, &stellar_dev_list, list) {
		if (!stellar_proc_may_see_dev(m->file, sdev))
			continue;
		if (!first)
			seq_putc(m, '\n');
		first = false;
		stellar_pvdma_show_dev(m, sdev);
	}
	rcu_read_unlock();
	return 0;
}

static void stellar_emtt_show_dev(struct seq_file *m, struct stellar_dev *sdev)
{
	u64 hits = stellar_emtt_read(sdev, STELLAR_EMTT_HITS);
	u64 misses = stellar_emtt_read(sdev, STELLAR_EMTT_MISSES);

	seq_printf(m, "[%s]\n", dev_name(&sdev->ibdev.dev));
	seq_printf(m, "Entries: %llu\n",
		   stellar_emtt_read(sdev, STELLAR_EMTT_ENTRIES));
	stellar_seq_percent(m, "Hit rate", hits, hits + misses);
	seq_printf(m, "Hits: %llu\n", hits);
	seq_printf(m, "Misses: %llu\n", misses);
	seq_printf(m, "Fills: %llu\n", stellar_emtt_read(sdev, STELLAR_EMTT_FILLS));
	seq_printf(m, "Evictions: %llu\n",
		   stellar_emtt_read(sdev, STELLAR_EMTT_EVICTIONS));
	seq_printf(m, "Invalidations: %llu\n",
		   stellar_emtt_read(sdev, STELLAR_EMTT_INVALIDATIONS));
}

int stellar_emtt_stats_show(struct seq_file *m, void *v)
{
	struct stellar_dev *sdev;
	bool first = true;

	rcu_read_lock();
	list_for_each_entry_rcu(sdev, &stellar_dev_list, list) {
		if (!stellar_proc_may_see_dev(m->file, sdev))
			continue;
		if (!first)
			seq_putc(m, '\n');
		first = false;
		stellar_emtt_show_dev(m, sdev);
	}
	rcu_read_unlock();
	return 0;
}

static int stellar_put_nest(struct sk_buff *skb, int attr, int max,
			    u64 (*read)(struct stellar_dev *, int),
			    struct stellar_dev *sdev)
{
	struct nlattr *nest = nla_nest_start(skb, attr);
	int stat;

	if (!nest)
		return -EMSGSIZE;
	/* Both enums start with UNSPEC and PAD. */
	BUILD_BUG_ON((int)STELLAR_PVDMA_PAD != (int)STELLAR_EMTT_PAD);
	for (stat = STELLAR_PVDMA_PAD + 1; stat <= max; stat++) {
		if (nla_put_u64_64bit(skb, stat, read(sdev, stat),
				      STELLAR_PVDMA_PAD)) {
			nla_nest_cancel(skb, nest);
			return -EMSGSIZE;
		}
	}
	nla_nest_end(skb, nest);
	return 0;
}

static u64 stellar_pvdma_read_any(struct stellar_dev *sdev, int stat)
{
	return stellar_pvdma_read(sdev, stat);
}

static u64 stellar_emtt_read_any(struct stellar_dev *sdev, int stat)
{
	return stellar_emtt_read(sdev, stat);
}

/**
 * stellar_put_mem_stats() - the PVDMA and eMTT counters as two nests
 * @skb: message being built
 * @sdev: the device
 *
 * Return: 0 or -EMSGSIZE.
 */
int stellar_put_mem_stats(struct sk_buff *skb, struct stellar_dev *sdev)
{
	if (stellar_put_nest(skb, STELLAR_ATTR_PVDMA_STATS, STELLAR_PVDMA_MAX,
			     stellar_pvdma_read_any, sdev) ||
	    stellar_put_nest(skb, STELLAR_ATTR_EMTT_STATS, STELLAR_EMTT_MAX,
			     stellar_emtt_read_any, sdev))
		return -EMSGSIZE;
	return 0;
}
