/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * virtio-stellar generic netlink interface (family "stellar").
 *
 * Used by stellar-tool and stellar-monitor to read device state and
 * statistics and to change per-device settings.  Attributes are only ever
 * added at the end of the enums; numbers never change meaning.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_NETLINK_USER_H
#define STELLAR_NETLINK_USER_H

#define STELLAR_GENL_NAME	"stellar"
#define STELLAR_GENL_VERSION	1

enum stellar_genl_cmd {
	STELLAR_CMD_UNSPEC,
	STELLAR_CMD_GET_DEV,	/* doit (by STELLAR_ATTR_DEV_NAME) or dump */
	STELLAR_CMD_SET_DEV,	/* change per-device settings (CAP_NET_ADMIN) */
	STELLAR_CMD_GET_PARAMS,	/* module-wide defaults */
	STELLAR_CMD_GET_SPRAY,	/* doit: spray statistics of a device */
	STELLAR_CMD_SET_QP,	/* per-QP settings (CAP_NET_ADMIN) */
	STELLAR_CMD_GET_QP,	/* dump the QPs of STELLAR_ATTR_DEV_NAME */
	STELLAR_CMD_GET_LATENCY, /* doit: latency histograms of a device or,
				  * with STELLAR_ATTR_QPN, of one QP
				  * (that one: CAP_NET_ADMIN)
				  */
	__STELLAR_CMD_MAX,
};
#define STELLAR_CMD_MAX (__STELLAR_CMD_MAX - 1)

enum stellar_genl_attr {
	STELLAR_ATTR_UNSPEC,
	STELLAR_ATTR_DEV_NAME,		/* string: ib_device name */
	STELLAR_ATTR_DEV_INDEX,		/* u32: ib_device index */
	STELLAR_ATTR_NETDEV_NAME,	/* string: underlying netdev */
	STELLAR_ATTR_NETDEV_IFINDEX,	/* u32 */
	STELLAR_ATTR_PORT_STATE,	/* u8: enum ib_port_state value */
	STELLAR_ATTR_MTU,		/* u32: active IB MTU in bytes */
	STELLAR_ATTR_STATS,		/* nest of STELLAR_STAT_* (u64 each) */
	STELLAR_ATTR_RX_BUF_SIZE,	/* u32: per-QP reorder memory, bytes */
	STELLAR_ATTR_SPRAY_PATHS,	/* u32: paths per QP */
	STELLAR_ATTR_EMTT_CACHE_SIZE,	/* u32: eMTT entries, thousands */
	STELLAR_ATTR_DB_POLL_INTERVAL,	/* u32: doorbell poll period, us */
	STELLAR_ATTR_PAD,
	STELLAR_ATTR_QPN,		/* u32: QP number */
	STELLAR_ATTR_SPRAY_QPS,		/* u32: QPs with spray state */
	STELLAR_ATTR_SPRAY_PATH,	/* nest of STELLAR_PATH_ATTR_*, repeated */
	STELLAR_ATTR_SPRAY_OOO,		/* nest: u64 per depth bucket, type = bucket + 1 */
	STELLAR_ATTR_SPRAY_OOO_MAX,	/* u32: deepest out-of-order arrival seen */
	STELLAR_ATTR_QP_TYPE,		/* u8: enum ib_qp_type value */
	STELLAR_ATTR_QP_STATE,		/* u8: enum ib_qp_state value */
	STELLAR_ATTR_QP_COUNTERS,	/* nest of STELLAR_COUNTER_ENTRY */
	STELLAR_ATTR_PIN_MODE,		/* u32: enum stellar_pin_mode */
	STELLAR_ATTR_PVDMA_STATS,	/* nest of STELLAR_PVDMA_* (u64 each) */
	STELLAR_ATTR_EMTT_STATS,	/* nest of STELLAR_EMTT_* (u64 each) */
	STELLAR_ATTR_LAT_ENABLED,	/* u8: latency telemetry is on */
	STELLAR_ATTR_LAT_SEGMENT,	/* nest of STELLAR_LAT_ATTR_*, repeated */
	STELLAR_ATTR_LAT_BURST_US,	/* u32: microburst threshold, us */
	STELLAR_ATTR_LAT_BURST,		/* nest of STELLAR_BURST_ATTR_*, repeated */
	STELLAR_ATTR_LAT_PATH,		/* nest: a spray path's RTT histogram */
	/*
	 * Tenant limits of a device, 0: none (GET_DEV, SET_DEV; setting them
	 * needs CAP_NET_ADMIN in the initial user namespace).
	 */
	STELLAR_ATTR_RATE_BYTES,	/* u64: transmit bytes per second */
	STELLAR_ATTR_RATE_PKTS,		/* u64: transmit packets per second */
	STELLAR_ATTR_MAX_QP,		/* u32: QPs, <= the module's max_qp */
	STELLAR_ATTR_MAX_MR,		/* u32: MRs, <= the module's max_mr */
	STELLAR_ATTR_MAX_PINNED,	/* u64: bytes PVDMA may hold pinned */
	/* Congestion control (GET_DEV, SET_DEV, GET_PARAMS). */
	STELLAR_ATTR_CC,		/* u32: enum stellar_cc_mode */
	STELLAR_ATTR_CC_MAX_RATE,	/* u32: line rate, Mb/s (0: 10000) */
	/* GET_LATENCY of a device: a requester segment of one size class. */
	STELLAR_ATTR_LAT_SIZE,		/* nest of STELLAR_LAT_ATTR_*, repeated */
	__STELLAR_ATTR_MAX,
};
#define STELLAR_ATTR_MAX (__STELLAR_ATTR_MAX - 1)

/*
 * Named counters nested in STELLAR_ATTR_QP_COUNTERS: each entry is a
 * STELLAR_COUNTER_ENTRY nest holding a name and a u64 value, so new
 * counters reach old tools without a new attribute.
 */
enum stellar_counter_attr {
	STELLAR_COUNTER_UNSPEC,
	STELLAR_COUNTER_ENTRY,		/* nest: one counter */
	STELLAR_COUNTER_NAME,		/* string */
	STELLAR_COUNTER_VALUE,		/* u64 */
	STELLAR_COUNTER_PAD,
	__STELLAR_COUNTER_MAX,
};
#define STELLAR_COUNTER_MAX (__STELLAR_COUNTER_MAX - 1)

/* Counters nested in STELLAR_ATTR_STATS; each is a u64. */
enum stellar_genl_stat {
	STELLAR_STAT_UNSPEC,
	STELLAR_STAT_RX_PACKETS,
	STELLAR_STAT_RX_BYTES,
	STELLAR_STAT_TX_PACKETS,
	STELLAR_STAT_TX_BYTES,
	STELLAR_STAT_RX_DROP_TRUNCATED,	/* shorter than its headers */
	STELLAR_STAT_RX_DROP_BAD_VERSION, /* BTH transport version != 0 */
	STELLAR_STAT_RX_DROP_BAD_OPCODE,
	STELLAR_STAT_RX_DROP_BAD_ICRC,
	STELLAR_STAT_RX_DROP_NO_QP,	/* destination QPN unknown */
	STELLAR_STAT_RX_DROP_NO_DEV,	/* arrived on a netdev without device */
	STELLAR_STAT_PAD,
	STELLAR_STAT_RX_DROP_BAD_LENGTH, /* lengths or IP header malformed */
	STELLAR_STAT_RX_DROP_PSN,	/* PSN outside the receive window */
	STELLAR_STAT_RX_DUPLICATE,	/* duplicate PSN, re-acknowledged */
	STELLAR_STAT_RETRANSMITS,	/* packets sent again */
	STELLAR_STAT_NAKS_SENT,
	STELLAR_STAT_NAKS_RCVD,
	STELLAR_STAT_RX_DROP_QUEUE_FULL, /* the device's receive backlog cap */
	STELLAR_STAT_RX_QUEUED_BYTES,	/* gauge: bytes queued for the QPs */
	STELLAR_STAT_RX_QUEUED_MAX,	/* gauge: most bytes ever queued */
	STELLAR_STAT_RNR_NAKS_SENT,	/* of NAKS_SENT, RNR NAKs */
	STELLAR_STAT_RNR_NAKS_RCVD,	/* of NAKS_RCVD, RNR NAKs */
	STELLAR_STAT_OUT_OF_ORDER,	/* packets that arrived ahead of a gap */
	STELLAR_STAT_TIMEOUTS,		/* local ACK timeouts */
	STELLAR_STAT_RX_MCAST_PACKETS,	/* for a multicast group joined here */
	STELLAR_STAT_TX_THROTTLED,	/* senders held back by the rate limit */
	STELLAR_STAT_QPS,		/* gauge: QPs (max_qp counts them) */
	STELLAR_STAT_MRS,		/* gauge: MRs (max_mr counts them) */
	STELLAR_STAT_LIMIT_PINNED,	/* gauge: pinned bytes (max_pinned) */
	STELLAR_STAT_LIMIT_REFUSED,	/* QPs, MRs, pins refused by a limit */
	STELLAR_STAT_CNP_SENT,		/* CNPs sent for CE-marked packets */
	STELLAR_STAT_CNP_RCVD,		/* CNPs received from peers */
	STELLAR_STAT_CC_RATE_CUTS,	/* QP rate cuts (DCQCN) */
	STELLAR_STAT_CC_RATE_INCREASES,	/* QP rate increases (DCQCN) */
	STELLAR_STAT_CC_PACED,		/* requesters held back by their rate */
	__STELLAR_STAT_MAX,
};
#define STELLAR_STAT_MAX (__STELLAR_STAT_MAX - 1)

/*
 * Initialiser of a table of the counters' names, indexed by enum
 * stellar_genl_stat: the names /proc/stellar/<dev>/stats and stellar-tool
 * print.  Numbers without a name (UNSPEC, PAD) are not counters.
 */
#define STELLAR_STAT_NAMES_INIT {					\
	[STELLAR_STAT_RX_PACKETS] = "rx_packets",			\
	[STELLAR_STAT_RX_BYTES] = "rx_bytes",				\
	[STELLAR_STAT_TX_PACKETS] = "tx_packets",			\
	[STELLAR_STAT_TX_BYTES] = "tx_bytes",				\
	[STELLAR_STAT_RX_DROP_TRUNCATED] = "rx_drop_truncated",	\
	[STELLAR_STAT_RX_DROP_BAD_VERSION] = "rx_drop_bad_version",	\
	[STELLAR_STAT_RX_DROP_BAD_OPCODE] = "rx_drop_bad_opcode",	\
	[STELLAR_STAT_RX_DROP_BAD_ICRC] = "rx_drop_bad_icrc",		\
	[STELLAR_STAT_RX_DROP_NO_QP] = "rx_drop_no_qp",		\
	[STELLAR_STAT_RX_DROP_NO_DEV] = "rx_drop_no_dev",		\
	[STELLAR_STAT_RX_DROP_BAD_LENGTH] = "rx_drop_bad_length",	\
	[STELLAR_STAT_RX_DROP_PSN] = "rx_drop_psn",			\
	[STELLAR_STAT_RX_DUPLICATE] = "rx_duplicate",			\
	[STELLAR_STAT_RETRANSMITS] = "retransmits",			\
	[STELLAR_STAT_NAKS_SENT] = "naks_sent",				\
	[STELLAR_STAT_NAKS_RCVD] = "naks_rcvd",				\
	[STELLAR_STAT_RX_DROP_QUEUE_FULL] = "rx_drop_queue_full",	\
	[STELLAR_STAT_RX_QUEUED_BYTES] = "rx_queued_bytes",		\
	[STELLAR_STAT_RX_QUEUED_MAX] = "rx_queued_bytes_max",		\
	[STELLAR_STAT_RNR_NAKS_SENT] = "rnr_naks_sent",			\
	[STELLAR_STAT_RNR_NAKS_RCVD] = "rnr_naks_rcvd",			\
	[STELLAR_STAT_OUT_OF_ORDER] = "out_of_order",			\
	[STELLAR_STAT_TIMEOUTS] = "timeouts",				\
	[STELLAR_STAT_RX_MCAST_PACKETS] = "rx_mcast_packets",		\
	[STELLAR_STAT_TX_THROTTLED] = "tx_throttled",			\
	[STELLAR_STAT_QPS] = "qps",					\
	[STELLAR_STAT_MRS] = "mrs",					\
	[STELLAR_STAT_LIMIT_PINNED] = "limit_pinned_bytes",		\
	[STELLAR_STAT_LIMIT_REFUSED] = "limit_refused",			\
	[STELLAR_STAT_CNP_SENT] = "cnp_sent",				\
	[STELLAR_STAT_CNP_RCVD] = "cnp_rcvd",				\
	[STELLAR_STAT_CC_RATE_CUTS] = "cc_rate_cuts",			\
	[STELLAR_STAT_CC_RATE_INCREASES] = "cc_rate_increases",		\
	[STELLAR_STAT_CC_PACED] = "cc_paced",				\
}

/*
 * One path of a device in STELLAR_CMD_GET_SPRAY, summed over the QPs that
 * spray (path i of every QP; each QP has its own source port for it).
 */
enum stellar_genl_path_attr {
	STELLAR_PATH_ATTR_UNSPEC,
	STELLAR_PATH_ATTR_INDEX,	/* u32: path number */
	STELLAR_PATH_ATTR_QPS,		/* u32: QPs that have this path */
	STELLAR_PATH_ATTR_ACTIVE,	/* u32: ... and use it */
	STELLAR_PATH_ATTR_FAILED,	/* u32: ... and took it out */
	STELLAR_PATH_ATTR_PROBING,	/* u32: ... and probe it */
	STELLAR_PATH_ATTR_PACKETS,	/* u64: packets sent */
	STELLAR_PATH_ATTR_BYTES,	/* u64: payload bytes sent */
	STELLAR_PATH_ATTR_RETRANSMITS,	/* u64: of the packets, resent ones */
	STELLAR_PATH_ATTR_LOSSES,	/* u64: packets declared lost */
	STELLAR_PATH_ATTR_ECN_MARKS,	/* u64: congestion-marked ACKs */
	STELLAR_PATH_ATTR_SRTT_US,	/* u32: mean smoothed RTT (0: none) */
	STELLAR_PATH_ATTR_PAD,
	STELLAR_PATH_ATTR_BACK_DEAD,	/* u32: of failed+probing, way back dead */
	STELLAR_PATH_ATTR_BACK_FAILURES, /* u64: taken out, way back dead */
	__STELLAR_PATH_ATTR_MAX,
};
#define STELLAR_PATH_ATTR_MAX (__STELLAR_PATH_ATTR_MAX - 1)

/*
 * Out-of-order depth histogram (STELLAR_ATTR_SPRAY_OOO): how far ahead of
 * the expected PSN packets arrived.  Bucket 0 counts depth 1, bucket k
 * depths 2^k .. 2^(k+1) - 1, the last bucket everything deeper.  In the
 * nest, bucket k is attribute type k + 1; STELLAR_SPRAY_OOO_PAD pads.
 */
#define STELLAR_SPRAY_OOO_BUCKETS	12
#define STELLAR_SPRAY_OOO_PAD		(STELLAR_SPRAY_OOO_BUCKETS + 1)
/* When user memory registrations pin their pages (STELLAR_ATTR_PIN_MODE). */
enum stellar_pin_mode {
	STELLAR_PIN_LAZY,	/* a 2 MB chunk on its first access */
	STELLAR_PIN_EAGER,	/* everything at registration */
	__STELLAR_PIN_MODE_MAX,
};
#define STELLAR_PIN_MODE_MAX (__STELLAR_PIN_MODE_MAX - 1)

/* Congestion control of a device's QPs (STELLAR_ATTR_CC). */
enum stellar_cc_mode {
	STELLAR_CC_OFF,		/* window only; CE marks are not answered */
	STELLAR_CC_DCQCN,	/* CNPs for CE marks, per-QP rate (DCQCN) */
	__STELLAR_CC_MODE_MAX,
};
#define STELLAR_CC_MODE_MAX (__STELLAR_CC_MODE_MAX - 1)

/*
 * PVDMA counters nested in STELLAR_ATTR_PVDMA_STATS; each is a u64.
 * ACTIVE_MAPPINGS and PINNED_BYTES are current values, the rest count
 * events since the device was created.  PIN_LAT_* is a histogram of the
 * time one chunk pin took.
 */
enum stellar_pvdma_stat {
	STELLAR_PVDMA_UNSPEC,
	STELLAR_PVDMA_PAD,
	STELLAR_PVDMA_ACTIVE_MAPPINGS,	/* chunks pinned now */
	STELLAR_PVDMA_PINNED_BYTES,	/* bytes pinned now */
	STELLAR_PVDMA_LOOKUPS,		/* page translations of user MRs */
	STELLAR_PVDMA_FAULTS,		/* chunks pinned on first access */
	STELLAR_PVDMA_PREFETCHES,	/* chunks pinned by advise_mr */
	STELLAR_PVDMA_EAGER_PINS,	/* chunks pinned at registration */
	STELLAR_PVDMA_HUGE_CHUNKS,	/* chunks held by one pin */
	STELLAR_PVDMA_PIN_ERRORS,	/* pins that failed (unmapped, ...) */
	STELLAR_PVDMA_MEMLOCK_ERRORS,	/* pins over RLIMIT_MEMLOCK */
	STELLAR_PVDMA_PIN_LAT_10US,	/* pin took < 10 us */
	STELLAR_PVDMA_PIN_LAT_100US,	/* 10 us .. 100 us */
	STELLAR_PVDMA_PIN_LAT_1MS,	/* 100 us .. 1 ms */
	STELLAR_PVDMA_PIN_LAT_10MS,	/* 1 ms .. 10 ms */
	STELLAR_PVDMA_PIN_LAT_SLOW,	/* >= 10 ms */
	STELLAR_PVDMA_ODP_INVALIDATIONS,	/* on-demand chunks unpinned: mm changed */
	__STELLAR_PVDMA_MAX,
};
#define STELLAR_PVDMA_MAX (__STELLAR_PVDMA_MAX - 1)

/* eMTT counters nested in STELLAR_ATTR_EMTT_STATS; each is a u64. */
enum stellar_emtt_stat {
	STELLAR_EMTT_UNSPEC,
	STELLAR_EMTT_PAD,
	STELLAR_EMTT_ENTRIES,		/* table size now (0: off) */
	STELLAR_EMTT_HITS,
	STELLAR_EMTT_MISSES,
	STELLAR_EMTT_FILLS,
	STELLAR_EMTT_EVICTIONS,		/* fills that replaced another entry */
	STELLAR_EMTT_INVALIDATIONS,	/* entries dropped at deregistration */
	__STELLAR_EMTT_MAX,
};
#define STELLAR_EMTT_MAX (__STELLAR_EMTT_MAX - 1)

/*
 * Latency telemetry (STELLAR_CMD_GET_LATENCY): log2 histograms of the
 * segments of a work request's life, in nanoseconds.  Bucket 0 counts
 * times below 2^STELLAR_LAT_MIN_SHIFT ns, bucket k (1 <= k < last) times
 * in [2^(STELLAR_LAT_MIN_SHIFT + k - 1), 2^(STELLAR_LAT_MIN_SHIFT + k)),
 * the last bucket everything longer.
 */
#define STELLAR_LAT_BUCKETS	32
#define STELLAR_LAT_MIN_SHIFT	10

/* The segments (STELLAR_LAT_ATTR_SEGMENT_ID). */
enum stellar_lat_seg {
	STELLAR_LAT_SEG_QUEUE,		/* doorbell -> first packet sent */
	STELLAR_LAT_SEG_NETWORK,	/* first packet -> ACK/last response */
	STELLAR_LAT_SEG_COMPLETION,	/* acknowledged -> CQE written */
	STELLAR_LAT_SEG_RESPONDER,	/* request arrived -> placed */
	__STELLAR_LAT_SEG_MAX,
};
#define STELLAR_LAT_SEG_MAX (__STELLAR_LAT_SEG_MAX - 1)

#define STELLAR_LAT_SEG_NAMES_INIT {					\
	[STELLAR_LAT_SEG_QUEUE] = "queue",				\
	[STELLAR_LAT_SEG_NETWORK] = "network",				\
	[STELLAR_LAT_SEG_COMPLETION] = "completion",			\
	[STELLAR_LAT_SEG_RESPONDER] = "responder",			\
}

/*
 * Message-size classes (STELLAR_LAT_ATTR_SIZE_CLASS): a work request's
 * bytes (a READ's: the bytes read) up to the class's bound, above the
 * previous class's.  The requester's segments (queue, network,
 * completion) of a device are also kept per class.
 */
enum stellar_lat_size {
	STELLAR_LAT_SIZE_256,		/* 0 .. 256 bytes */
	STELLAR_LAT_SIZE_4K,		/* .. 4 KiB */
	STELLAR_LAT_SIZE_64K,		/* .. 64 KiB */
	STELLAR_LAT_SIZE_LARGE,		/* more */
	__STELLAR_LAT_SIZE_MAX,
};

/* Upper bounds of the classes in bytes; 0: none. */
#define STELLAR_LAT_SIZE_BOUNDS_INIT { 256, 4096, 65536, 0 }

#define STELLAR_LAT_SIZE_NAMES_INIT {					\
	[STELLAR_LAT_SIZE_256] = "256B",				\
	[STELLAR_LAT_SIZE_4K] = "4KiB",					\
	[STELLAR_LAT_SIZE_64K] = "64KiB",				\
	[STELLAR_LAT_SIZE_LARGE] = "large",				\
}

/*
 * One segment's histogram, nested in STELLAR_ATTR_LAT_SEGMENT; or, in
 * STELLAR_ATTR_LAT_SIZE, of one size class too (STELLAR_LAT_ATTR_SIZE_CLASS;
 * only classes with samples are listed); or, in STELLAR_ATTR_LAT_PATH, the
 * RTT samples of path i (with STELLAR_LAT_ATTR_PATH instead of the
 * segment; only paths with samples are listed): of the device's QPs, or
 * of the QP a GET_LATENCY of a QP names.  A QP that does not spray has
 * one path, 0.
 */
enum stellar_lat_attr {
	STELLAR_LAT_ATTR_UNSPEC,
	STELLAR_LAT_ATTR_SEGMENT_ID,	/* u32: enum stellar_lat_seg */
	STELLAR_LAT_ATTR_COUNT,		/* u64: samples */
	STELLAR_LAT_ATTR_SUM_NS,	/* u64: their sum, ns */
	STELLAR_LAT_ATTR_BUCKETS,	/* nest: u64 per non-empty bucket,
					 * type = bucket + 1
					 */
	STELLAR_LAT_ATTR_PAD,
	STELLAR_LAT_ATTR_PATH,		/* u32: path number (STELLAR_ATTR_LAT_PATH) */
	STELLAR_LAT_ATTR_SIZE_CLASS,	/* u32: enum stellar_lat_size */
	__STELLAR_LAT_ATTR_MAX,
};
#define STELLAR_LAT_ATTR_MAX (__STELLAR_LAT_ATTR_MAX - 1)
/* Pad type inside STELLAR_LAT_ATTR_BUCKETS. */
#define STELLAR_LAT_BUCKET_PAD	(STELLAR_LAT_BUCKETS + 1)

/*
 * Microbursts of one spray path (path i of every QP of the device; path 0
 * of QPs that do not spray): RTT samples that exceeded the path's minimum
 * by more than STELLAR_ATTR_LAT_BURST_US.  Only paths with a burst are
 * listed.
 */
enum stellar_burst_attr {
	STELLAR_BURST_ATTR_UNSPEC,
	STELLAR_BURST_ATTR_PATH,	/* u32: path number */
	STELLAR_BURST_ATTR_COUNT,	/* u64: bursts seen */
	STELLAR_BURST_ATTR_LAST_NS,	/* u64: CLOCK_MONOTONIC of the last */
	STELLAR_BURST_ATTR_MAX_US,	/* u32: largest excess delay seen */
	STELLAR_BURST_ATTR_PAD,
	__STELLAR_BURST_ATTR_MAX,
};
#define STELLAR_BURST_ATTR_MAX (__STELLAR_BURST_ATTR_MAX - 1)

#endif /* STELLAR_NETLINK_USER_H */
