/* SPDX-License-Identifier: GPL-2.0 */
/*
 * virtio-stellar: latency telemetry.
 *
 * Each work request's life is cut into segments (enum stellar_lat_seg):
 * the doorbell that announced a send WQE to its first packet on the wire
 * (queue), that packet to the acknowledgement or last response that
 * finished the WQE (network), that to the completion written to the CQ
 * (completion), and on the responder a request packet's arrival to its
 * handling (responder).  Each segment has a log2 histogram per QP (in the
 * QP's transport, updated under the mutex the path holds anyway) and per
 * device (per-CPU); the device keeps the requester's segments per
 * message-size class too.  Per-WQE times live in the kernel's own
 * per-slot array, never in memory a process maps.  RTT samples go into
 * histograms per path (of the device, and of the QP), and one more than
 * latency_burst_us above the path's minimum is a microburst.  A QP that
 * does not spray has one path, 0; without the wire extensions its
 * samples are the network times of single-packet work requests that
 * were sent once.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_LAT_H
#define STELLAR_LAT_H

#include <linux/atomic.h>
#include <linux/percpu.h>
#include <linux/types.h>

#include "stellar-netlink.h"
#include "stellar_lat_hist.h"
#include "stellar_spray.h"

struct sk_buff;
struct stellar_dev;
struct stellar_qp;
struct stellar_qp_xport;

/**
 * struct stellar_lat_slot - latency state of one send queue slot
 * @db_ns: time of the doorbell that announced the WQE at @db_index
 *	(written by doorbells without a lock, see stellar_lat_doorbell())
 * @db_index: ring index @db_ns is for
 * @posted_ns: the started WQE's doorbell time (0: not measured);
 *	this and the rest under req_mutex
 * @sent_ns: its first packet went out (0: not yet)
 * @done_ns: it finished (acknowledged, or sent for UC/UD; 0: not yet)
 */
struct stellar_lat_slot {
	u64 db_ns;
	u32 db_index;
	u64 posted_ns;
	u64 sent_ns;
	u64 done_ns;
};

/**
 * struct stellar_lat_paths - RTT histograms of a QP's paths
 * @rcu: freed after a grace period (readers take no lock)
 * @nr: paths
 * @hist: per path, under req_mutex
 */
struct stellar_lat_paths {
	struct rcu_head rcu;
	u32 nr;
	struct stellar_lat_hist hist[];
};

/**
 * struct stellar_qp_lat - latency telemetry of one QP
 * @seg: histogram per segment: the requester's under req_mutex, the
 *	responder's under resp_mutex; read without locks
 * @paths: RTT per path, sized when the QP enters RTS (NULL: none);
 *	replaced under req_mutex, read under RCU
 * @resent_ns: when the requester last went back to resend: WQEs first
 *	sent before it give no RTT sample (Karn)
 * @stamped: ring index up to which doorbells stamped @slot
 * @entries: slots (the send queue's entries, a power of 2)
 * @slot: per send queue slot
 */
struct stellar_qp_lat {
	struct stellar_lat_hist seg[__STELLAR_LAT_SEG_MAX];
	struct stellar_lat_paths __rcu *paths;
	u64 resent_ns;
	atomic_t stamped;
	u32 entries;
	struct stellar_lat_slot slot[];
};

/* The requester's segments, which the device also keeps per size class. */
#define STELLAR_LAT_REQ_SEGS	STELLAR_LAT_SEG_RESPONDER

/**
 * struct stellar_lat_pcpu - per-CPU histograms of a device
 * @seg: per segment
 * @size: per requester segment and message-size class
 */
struct stellar_lat_pcpu {
	struct stellar_lat_hist seg[__STELLAR_LAT_SEG_MAX];
	struct stellar_lat_hist size[STELLAR_LAT_REQ_SEGS][__STELLAR_LAT_SIZE_MAX];
};

/**
 * struct stellar_lat_burst - microbursts of path i of a device's QPs
 * @count: RTT samples above the path's minimum by more than the threshold
 * @last_ns: ktime_get_ns() of the latest
 * @max_us: the largest excess seen
 */
struct stellar_lat_burst {
	atomic64_t count;
	atomic64_t last_ns;
	atomic_t max_us;
};

/**
 * struct stellar_lat_path - RTT samples of path i of a device's QPs
 * @bucket: samples per log2 bucket (ns, as struct stellar_lat_hist)
 * @sum_ns: their sum
 */
struct stellar_lat_path {
	atomic64_t bucket[STELLAR_LAT_BUCKETS];
	atomic64_t sum_ns;
};

/**
 * struct stellar_lat_dev - latency telemetry of a device
 * @pcpu: histograms, per CPU
 * @burst: microbursts per spray path
 * @path: RTT histogram per spray path
 */
struct stellar_lat_dev {
	struct stellar_lat_pcpu __percpu *pcpu;
	struct stellar_lat_burst burst[STELLAR_SPRAY_MAX_PATHS];
	struct stellar_lat_path path[STELLAR_SPRAY_MAX_PATHS];
};

/* Device and QP lifetime. */
struct stellar_lat_dev *stellar_lat_dev_alloc(void);
void stellar_lat_dev_free(struct stellar_lat_dev *ld);
struct stellar_qp_lat *stellar_lat_qp_alloc(u32 entries);
void stellar_lat_qp_free(struct stellar_qp_lat *lat);

/* Data path hooks (see stellar_lat.c for the context of each). */
void stellar_lat_doorbell(struct stellar_qp_xport *xp);
void stellar_lat_req_reset(struct stellar_qp_xport *xp, u32 nr_paths);
void stellar_lat_resent(struct stellar_qp_xport *xp);
void stellar_lat_fetched(struct stellar_qp_xport *xp, u32 index);
void stellar_lat_sent(struct stellar_qp_xport *xp, u32 index);
void stellar_lat_done(struct stellar_qp_xport *xp, u32 index, bool ok);
void stellar_lat_retired(struct stellar_qp_xport *xp, u32 index,
			 bool completed);
void stellar_lat_rx_stamp(struct sk_buff *skb);
void stellar_lat_rx_done(struct stellar_qp_xport *xp, u64 arrived_ns);
void stellar_lat_path_rtt(struct stellar_qp_xport *xp, u32 path, u32 rtt_us,
			  u64 now_us);

/* Netlink: fill a STELLAR_CMD_GET_LATENCY reply (@qp NULL: the device). */
int stellar_lat_fill(struct sk_buff *skb, struct stellar_dev *sdev,
		     struct stellar_qp *qp);

/* Bytes a STELLAR_CMD_GET_LATENCY reply may need. */
#define STELLAR_LAT_MSG_SIZE	65536

#endif /* STELLAR_LAT_H */
