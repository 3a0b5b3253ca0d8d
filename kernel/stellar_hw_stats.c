// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: the device's counters as RDMA core hw counters.
 *
 *   rdma statistic show link stellar0/1
 *   /sys/class/infiniband/stellar0/ports/1/hw_counters/   every counter
 *   /sys/class/infiniband/stellar0/hw_counters/           PVDMA and eMTT
 *
 * One table names every counter and where its value lives: the per-CPU
 * device counters (enum stellar_genl_stat), the spray statistics and the
 * PVDMA and eMTT counters, the same that /proc/stellar and stellar-tool
 * read.  Nothing is copied: get_hw_stats reads them when the core asks.
 * The port shows the whole table; the device (memory is not per port)
 * the PVDMA and eMTT part at its end.  Documentation/observability.rst
 * lists the counters.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <linux/slab.h>

#include "stellar_mem.h"

/* Where a hw counter's value comes from. */
enum stellar_hw_src {
	STELLAR_HW_DEV,		/* stellar_read_counter(), enum stellar_genl_stat */
	STELLAR_HW_SPRAY,	/* stellar_spray_dev_totals(), enum stellar_hw_spray */
	STELLAR_HW_OOO,		/* out-of-order depth bucket @idx */
	STELLAR_HW_PVDMA,	/* stellar_pvdma_read(), enum stellar_pvdma_stat */
	STELLAR_HW_EMTT,	/* stellar_emtt_read(), enum stellar_emtt_stat */
};

/**
 * struct stellar_hw_counter - one hw counter
 * @src: enum stellar_hw_src
 * @idx: the counter in its source
 * @name: its name, NULL for a device counter (its uAPI name, the one
 *	  /proc/stellar/<dev>/stats and stellar-tool print)
 */
struct stellar_hw_counter {
	u8 src;
	u8 idx;
	const char *name;
};

#define HW_DEV(stat)		{ STELLAR_HW_DEV, STELLAR_STAT_##stat, NULL }
#define HW_SPRAY(what, name)	{ STELLAR_HW_SPRAY, STELLAR_HW_SPRAY_##what, name }
#define HW_OOO(bucket, name)	{ STELLAR_HW_OOO, bucket, name }
#define HW_PVDMA(stat, name)	{ STELLAR_HW_PVDMA, STELLAR_PVDMA_##stat, name }
#define HW_EMTT(stat, name)	{ STELLAR_HW_EMTT, STELLAR_EMTT_##stat, name }

/*
 * The table; memory and object counters last (the device's view starts
 * at the first memory counter).
 */
static const struct stellar_hw_counter stellar_hw_counters[] = {
	HW_DEV(TX_PACKETS), HW_DEV(TX_BYTES),
	HW_DEV(RX_PACKETS), HW_DEV(RX_BYTES),
	HW_DEV(RETRANSMITS), HW_DEV(TIMEOUTS),
	HW_DEV(NAKS_SENT), HW_DEV(NAKS_RCVD),
	HW_DEV(RNR_NAKS_SENT), HW_DEV(RNR_NAKS_RCVD),
	HW_DEV(RX_DUPLICATE), HW_DEV(OUT_OF_ORDER),
	HW_DEV(RX_DROP_TRUNCATED), HW_DEV(RX_DROP_BAD_VERSION),
	HW_DEV(RX_DROP_BAD_OPCODE), HW_DEV(RX_DROP_BAD_ICRC),
	HW_DEV(RX_DROP_NO_QP), HW_DEV(RX_DROP_NO_DEV),
	HW_DEV(RX_DROP_BAD_LENGTH), HW_DEV(RX_DROP_PSN),
	HW_DEV(RX_DROP_QUEUE_FULL),
	HW_DEV(RX_QUEUED_BYTES), HW_DEV(RX_QUEUED_MAX),
	HW_DEV(RX_MCAST_PACKETS),
	HW_DEV(TX_THROTTLED), HW_DEV(LIMIT_REFUSED),
	HW_DEV(CNP_SENT), HW_DEV(CNP_RCVD),
	HW_DEV(CC_RATE_CUTS), HW_DEV(CC_RATE_INCREASES), HW_DEV(CC_PACED),
	HW_SPRAY(QPS, "spray_qps"),
	HW_SPRAY(PACKETS, "spray_packets"),
	HW_SPRAY(BYTES, "spray_bytes"),
	HW_SPRAY(RETRANSMITS, "spray_retransmits"),
	HW_SPRAY(LOSSES, "spray_losses"),
	HW_SPRAY(ECN_MARKS, "spray_ecn_marks"),
	HW_SPRAY(PATHS_FAILED, "spray_paths_failed"),
	HW_SPRAY(PATHS_PROBING, "spray_paths_probing"),
	HW_SPRAY(BACK_FAILURES, "spray_back_failures"),
	HW_SPRAY(OOO_MAX, "ooo_depth_max"),
	HW_OOO(0, "ooo_depth_1"), HW_OOO(1, "ooo_depth_2_3"),
	HW_OOO(2, "ooo_depth_4_7"), HW_OOO(3, "ooo_depth_8_15"),
	HW_OOO(4, "ooo_depth_16_31"), HW_OOO(5, "ooo_depth_32_63"),
	HW_OOO(6, "ooo_depth_64_127"), HW_OOO(7, "ooo_depth_128_255"),
	HW_OOO(8, "ooo_depth_256_511"), HW_OOO(9, "ooo_depth_512_1023"),
	HW_OOO(10, "ooo_depth_1024_2047"), HW_OOO(11, "ooo_depth_2048_up"),
	HW_PVDMA(ACTIVE_MAPPINGS, "pvdma_active_mappings"),
	HW_PVDMA(PINNED_BYTES, "pvdma_pinned_bytes"),
	HW_PVDMA(LOOKUPS, "pvdma_lookups"),
	HW_PVDMA(FAULTS, "pvdma_faults"),
	HW_PVDMA(PREFETCHES, "pvdma_prefetches"),
	HW_PVDMA(EAGER_PINS, "pvdma_eager_pins"),
	HW_PVDMA(HUGE_CHUNKS, "pvdma_huge_chunks"),
	HW_PVDMA(PIN_ERRORS, "pvdma_pin_errors"),
	HW_PVDMA(MEMLOCK_ERRORS, "pvdma_memlock_errors"),
	HW_PVDMA(ODP_INVALIDATIONS, "pvdma_odp_invalidations"),
	HW_EMTT(ENTRIES, "emtt_entries"),
	HW_EMTT(HITS, "emtt_hits"),
	HW_EMTT(MISSES, "emtt_misses"),
	HW_EMTT(FILLS, "emtt_fills"),
	HW_EMTT(EVICTIONS, "emtt_evictions"),
	HW_EMTT(INVALIDATIONS, "emtt_invalidations"),
	/* What the device's limits count: device-wide, as memory is. */
	HW_DEV(QPS), HW_DEV(MRS), HW_DEV(LIMIT_PINNED),
};

#define STELLAR_HW_NUM		ARRAY_SIZE(stellar_hw_counters)

/* The core's view of the table: names, and the counter as private data. */
static struct rdma_stat_desc stellar_hw_descs[STELLAR_HW_NUM] __ro_after_init;
/* The first memory counter: the device's view. */
static int stellar_hw_first_mem __ro_after_init;

/**
 * stellar_hw_stats_init() - name the hw counters (module load)
 */
void __init stellar_hw_stats_init(void)
{
	const struct stellar_hw_counter *c;
	int i;

	BUILD_BUG_ON(STELLAR_SPRAY_OOO_BUCKETS != 12);
	stellar_hw_first_mem = STELLAR_HW_NUM;
	for (i = STELLAR_HW_NUM - 1; i >= 0; i--) {
		c = &stellar_hw_counters[i];
		stellar_hw_descs[i].name = c->name ?: stellar_stat_name(c->idx);
		stellar_hw_descs[i].priv = c;
		if (c->src == STELLAR_HW_PVDMA || c->src == STELLAR_HW_EMTT)
			stellar_hw_first_mem = i;
	}
}

struct rdma_hw_stats *stellar_alloc_hw_port_stats(struct ib_device *ibdev,
						  u32 port)
{
	return rdma_alloc_hw_stats_struct(stellar_hw_descs, STELLAR_HW_NUM,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

struct rdma_hw_stats *stellar_alloc_hw_device_stats(struct ib_device *ibdev)
{
	return rdma_alloc_hw_stats_struct(stellar_hw_descs + stellar_hw_first_mem,
					  STELLAR_HW_NUM - stellar_hw_first_mem,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

static bool stellar_hw_needs_spray(const struct rdma_hw_stats *stats)
{
	const struct stellar_hw_counter *c;
	int i;

	for (i = 0; i < stats->num_counters; i++) {
		c = stats->descs[i].priv;
		if (c->src == STELLAR_HW_SPRAY)
			return true;
	}
	return false;
}

static u64 stellar_hw_read(struct stellar_dev *sdev,
			   const struct stellar_hw_counter *c,
			   const u64 *spray)
{
	switch (c->src) {
	case STELLAR_HW_DEV:
		return stellar_read_counter(sdev, c->idx);
	case STELLAR_HW_SPRAY:
		return spray ? spray[c->idx] : 0;
	case STELLAR_HW_OOO:
		return atomic64_read(&sdev->spray.ooo[c->idx]);
	case STELLAR_HW_PVDMA:
		return stellar_pvdma_read(sdev, c->idx);
	case STELLAR_HW_EMTT:
		return stellar_emtt_read(sdev, c->idx);
	}
	return 0;
}

/**
 * stellar_get_hw_stats() - fill every counter of @stats
 * @ibdev: the device
 * @stats: from stellar_alloc_hw_port_stats() or _device_stats()
 * @port: the port, 0 for the device's counters
 * @index: the counter the core wants; all are filled
 *
 * Context: process (the core holds @stats->lock); takes no QP lock.
 * Return: the number of counters filled, or -ENOMEM.
 */
int stellar_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
			 u32 port, int index)
{
	struct stellar_dev *sdev = to_sdev(ibdev);
	u64 *spray = NULL;
	int i;

	if (stellar_hw_needs_spray(stats)) {
		spray = kcalloc(__STELLAR_HW_SPRAY_MAX, sizeof(*spray),
				GFP_KERNEL);
		if (!spray || stellar_spray_dev_totals(sdev, spray)) {
			kfree(spray);
			return -ENOMEM;
		}
	}
	for (i = 0; i < stats->num_counters; i++)
		stats->value[i] = stellar_hw_read(sdev, stats->descs[i].priv,
						  spray);
	kfree(spray);
	return stats->num_counters;
}
