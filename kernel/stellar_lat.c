// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: latency telemetry (see stellar_lat.h).
 *
 * Times are ktime_get_ns().  The send side's per-WQE times sit in
 * xp->lat->slot[], by send queue slot: a doorbell stamps the slots of the
 * WQEs it announces; the requester, when it first reaches a WQE, takes that
 * stamp as the WQE's posted time (or its own time when no doorbell stamped
 * the slot: WQEs posted before RTS, a doorbell racing with a ring reset)
 * and clears the rest; its first packet, its end and its completion add
 * one sample each to the segments they close.  All of that runs under
 * req_mutex, which the requester and the completer hold anyway; the
 * responder's samples under resp_mutex; the device's copies are per-CPU.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <net/genetlink.h>

#include "stellar_lat.h"
#include "stellar_xport.h"

static bool stellar_lat_on = true;
module_param_named(latency_telemetry, stellar_lat_on, bool, 0644);
MODULE_PARM_DESC(latency_telemetry,
		 "Keep latency histograms and microburst counts (default on)");

static uint stellar_lat_burst_us = 500;
module_param_named(latency_burst_us, stellar_lat_burst_us, uint, 0644);
MODULE_PARM_DESC(latency_burst_us,
		 "RTT above a spray path's minimum that counts as a microburst, in microseconds (default 500)");

static bool stellar_lat_enabled(void)
{
	return READ_ONCE(stellar_lat_on);
}

struct stellar_lat_dev *stellar_lat_dev_alloc(void)
{
	struct stellar_lat_dev *ld = kvzalloc(sizeof(*ld), GFP_KERNEL);

	if (!ld)
		return NULL;
	ld->pcpu = alloc_percpu(struct stellar_lat_pcpu);
	if (!ld->pcpu) {
		kvfree(ld);
		return NULL;
	}
	return ld;
}

void stellar_lat_dev_free(struct stellar_lat_dev *ld)
{
	if (!ld)
		return;
	free_percpu(ld->pcpu);
	kvfree(ld);
}

/**
 * stellar_lat_qp_alloc() - telemetry state of a new QP
 * @entries: its send queue's entries (a power of 2)
 *
 * Return: the state or NULL; charged to the memory cgroup like the rest
 * of the QP's transport state.
 */
struct stellar_qp_lat *stellar_lat_qp_alloc(u32 entries)
{
	struct stellar_qp_lat *lat;

	lat = kvzalloc(struct_size(lat, slot, entries), STELLAR_GFP_USER);
	if (lat)
		lat->entries = entries;
	return lat;
}

void stellar_lat_qp_free(struct stellar_qp_lat *lat)
{
	if (!lat)
		return;
	/* No reader left: they hold a reference to the QP. */
	kvfree(rcu_dereference_protected(lat->paths, true));
	kvfree(lat);
}

/*
 * Give the QP @nr_paths path histograms (process context, req_mutex
 * held): the ones it has if the number is the same, else new ones; none
 * for 0 or if there is no memory for them (the device's still count).
 */
static void stellar_lat_size_paths(struct stellar_qp_xport *xp, u32 nr_paths)
{
	struct stellar_qp_lat *lat = xp->lat;
	struct stellar_lat_paths *old, *paths;

	old = rcu_dereference_protected(lat->paths,
					lockdep_is_held(&xp->req_mutex));
	if (old ? old->nr == nr_paths : !nr_paths)
		return;
	paths = nr_paths ? kvzalloc(struct_size(paths, hist, nr_paths),
				    STELLAR_GFP_USER) : NULL;
	if (paths)
		paths->nr = nr_paths;
	rcu_assign_pointer(lat->paths, paths);
	if (old)
		kvfree_rcu(old, rcu);
}

static struct stellar_lat_slot *stellar_lat_slot(struct stellar_qp_lat *lat,
						 u32 index)
{
	return &lat->slot[index & (lat->entries - 1)];
}

/* One sample of @seg, in @bucket, into the QP's and device's histograms. */
static void stellar_lat_record_at(struct stellar_qp_xport *xp,
				  enum stellar_lat_seg seg, u32 bucket, u64 ns)
{
	struct stellar_lat_pcpu __percpu *pcpu = xp->sdev->lat->pcpu;

	stellar_lat_hist_add_at(&xp->lat->seg[seg], bucket, ns);
	this_cpu_inc(pcpu->seg[seg].bucket[bucket]);
	this_cpu_add(pcpu->seg[seg].sum_ns, ns);
}

/*
 * One sample of requester segment @seg of the WQE at @index: also into
 * the device's histogram of the WQE's size class.
 */
static void stellar_lat_record_req(struct stellar_qp_xport *xp,
				   enum stellar_lat_seg seg, u32 index, u64 ns)
{
	struct stellar_lat_pcpu __percpu *pcpu = xp->sdev->lat->pcpu;
	u32 class = stellar_lat_size_class(stellar_swqe_at(xp, index)->length);
	u32 bucket = stellar_lat_bucket(ns);

	stellar_lat_record_at(xp, seg, bucket, ns);
	this_cpu_inc(pcpu->size[seg][class].bucket[bucket]);
	this_cpu_add(pcpu->size[seg][class].sum_ns, ns);
}

/**
 * stellar_lat_doorbell() - a doorbell: stamp the slots of the new WQEs
 * @xp: the QP's transport
 *
 * The producer index comes from the ring, which a process may write at
 * any time: at most one ring's worth of slots is stamped, and a producer
 * behind the stamped index stamps nothing.  Concurrent doorbells each
 * claim their range with a cmpxchg.  A wrong producer only spoils the
 * process's own QP's figures.
 *
 * Context: any (post_send, the doorbell poller); no lock needed.
 */
void stellar_lat_doorbell(struct stellar_qp_xport *xp)
{
	struct stellar_qp_lat *lat = xp->lat;
	u32 producer, from;
	u64 now;

	if (!stellar_lat_enabled())
		return;
	producer = stellar_queue_producer(&xp->qp->sq);
	from = atomic_read(&lat->stamped);
	do {
		if ((s32)(producer - from) <= 0)
			return;
	} while (!atomic_try_cmpxchg(&lat->stamped, &from, producer));
	if (producer - from > lat->entries)
		from = producer - lat->entries;
	now = ktime_get_ns();
	for (; from != producer; from++) {
		struct stellar_lat_slot *slot = stellar_lat_slot(lat, from);

		WRITE_ONCE(slot->db_ns, now);
		/* the time before the index that says it is valid */
		smp_wmb();
		WRITE_ONCE(slot->db_index, from);
	}
}

/**
 * stellar_lat_req_reset() - the requester starts from the ring's consumer
 * @xp: the transport, req_mutex held (QP entering RTS; process context)
 * @nr_paths: the paths the QP sends on from now on
 */
void stellar_lat_req_reset(struct stellar_qp_xport *xp, u32 nr_paths)
{
	struct stellar_qp *qp = xp->qp;
	u32 from = READ_ONCE(qp->sq_consumer);
	u32 producer = stellar_queue_producer(&qp->sq);

	/* Posted before RTS: stamped by the next doorbell, or when fetched. */
	if ((s32)(producer - from) > 0 &&
	    producer - from <= xp->lat->entries)
		from = producer;
	atomic_set(&xp->lat->stamped, from);
	xp->lat->resent_ns = 0;
	stellar_lat_size_paths(xp, nr_paths);
}

/**
 * stellar_lat_resent() - the requester goes back to resend
 * @xp: the transport, req_mutex held
 *
 * The WQEs sent so far may be sent again: their network times are no RTT
 * samples.
 */
void stellar_lat_resent(struct stellar_qp_xport *xp)
{
	xp->lat->resent_ns = ktime_get_ns();
}

/**
 * stellar_lat_fetched() - the requester reached a new WQE
 * @xp: the transport, req_mutex held
 * @index: its ring index
 */
void stellar_lat_fetched(struct stellar_qp_xport *xp, u32 index)
{
	struct stellar_lat_slot *slot = stellar_lat_slot(xp->lat, index);
	u64 db_ns;

	slot->sent_ns = 0;
	slot->done_ns = 0;
	if (!stellar_lat_enabled()) {
		slot->posted_ns = 0;
		return;
	}
	db_ns = 0;
	if (READ_ONCE(slot->db_index) == index) {
		/* the index before the time it vouches for */
		smp_rmb();
		db_ns = READ_ONCE(slot->db_ns);
	}
	/*
	 * A doorbell's stamp is never ahead of the clock; stellar_lat_sent()
	 * clamps at 0 all the same.  Only an unstamped WQE needs a clock read.
	 */
	slot->posted_ns = db_ns ?: ktime_get_ns();
}

/**
 * stellar_lat_sent() - packets of the WQE at @index went out
 * @xp: the transport, req_mutex held
 * @index: its ring index
 *
 * The first call for a WQE closes its queue segment; resends do not count.
 */
void stellar_lat_sent(struct stellar_qp_xport *xp, u32 index)
{
	struct stellar_lat_slot *slot = stellar_lat_slot(xp->lat, index);
	u64 now;

	if (!slot->posted_ns || slot->sent_ns)
		return;
	now = ktime_get_ns();
	slot->sent_ns = now;
	stellar_lat_record_req(xp, STELLAR_LAT_SEG_QUEUE, index,
			       now > slot->posted_ns ? now - slot->posted_ns : 0);
}

/**
 * stellar_lat_done() - the WQE at @index finished
 * @xp: the transport, req_mutex held
 * @index: its ring index
 * @ok: successfully (a failed WQE gives no samples)
 *
 * For RC, the network segment: from its first packet to the ACK or
 * response that finished it; without the wire extensions, for a WQE of
 * one packet sent once, also an RTT sample of path 0.
 */
void stellar_lat_done(struct stellar_qp_xport *xp, u32 index, bool ok)
{
	struct stellar_lat_slot *slot = stellar_lat_slot(xp->lat, index);
	u64 now, ns;
	u32 rtt_us;

	if (!slot->posted_ns || slot->done_ns)
		return;
	if (!ok) {
		slot->posted_ns = 0;
		return;
	}
	now = ktime_get_ns();
	slot->done_ns = now;
	if (!slot->sent_ns || !stellar_qp_is_reliable(xp->qp))
		return;
	ns = now > slot->sent_ns ? now - slot->sent_ns : 0;
	stellar_lat_record_req(xp, STELLAR_LAT_SEG_NETWORK, index, ns);
	/* With the extensions, every packet gives an RTT sample instead. */
	if (xp->x_on || stellar_swqe_at(xp, index)->npkts != 1 ||
	    slot->sent_ns <= xp->lat->resent_ns)
		return;
	rtt_us = min_t(u64, div_u64(ns, NSEC_PER_USEC), U32_MAX);
	stellar_lat_path_rtt(xp, 0, rtt_us, div_u64(now, NSEC_PER_USEC));
}

/**
 * stellar_lat_retired() - the WQE at @index left the send queue
 * @xp: the transport, req_mutex held
 * @index: its ring index
 * @completed: a successful completion was written for it
 */
void stellar_lat_retired(struct stellar_qp_xport *xp, u32 index,
			 bool completed)
{
	struct stellar_lat_slot *slot = stellar_lat_slot(xp->lat, index);
	u64 now;

	if (completed && slot->posted_ns && slot->done_ns) {
		now = ktime_get_ns();
		stellar_lat_record_req(xp, STELLAR_LAT_SEG_COMPLETION, index,
				       now > slot->done_ns ?
				       now - slot->done_ns : 0);
	}
	slot->posted_ns = 0;
}

/**
 * stellar_lat_rx_stamp() - note when a packet reached its QP's backlog
 * @skb: the packet, owned by the driver from now on
 *
 * The time goes into skb->tstamp (0 while telemetry is off): the skb
 * never goes back to the stack.
 *
 * Context: softirq, under the backlog's lock.
 */
void stellar_lat_rx_stamp(struct sk_buff *skb)
{
	skb->tstamp = stellar_lat_enabled() ? ns_to_ktime(ktime_get_ns()) : 0;
}

/**
 * stellar_lat_rx_done() - the responder handled a request packet
 * @xp: the transport, resp_mutex held
 * @arrived_ns: its skb->tstamp from stellar_lat_rx_stamp() (0: none)
 */
void stellar_lat_rx_done(struct stellar_qp_xport *xp, u64 arrived_ns)
{
	u64 now, ns;

	if (!arrived_ns || !stellar_lat_enabled())
		return;
	now = ktime_get_ns();
	ns = now > arrived_ns ? now - arrived_ns : 0;
	stellar_lat_record_at(xp, STELLAR_LAT_SEG_RESPONDER,
			      stellar_lat_bucket(ns), ns);
}

/**
 * stellar_lat_path_rtt() - an RTT sample of a spray path
 * @xp: the transport, req_mutex held
 * @path: the path
 * @rtt_us: the sample
 * @now_us: when it was taken
 *
 * The sample goes into path @path's RTT histograms of the QP and of the
 * device; one more than latency_burst_us above the path's minimum is a
 * microburst there.
 */
void stellar_lat_path_rtt(struct stellar_qp_xport *xp, u32 path, u32 rtt_us,
			  u64 now_us)
{
	struct stellar_lat_paths *qp_paths;
	struct stellar_lat_path *p;
	struct stellar_lat_burst *b;
	u64 rtt_ns = (u64)rtt_us * NSEC_PER_USEC;
	u32 bucket, excess, max;

	if (!stellar_lat_enabled() || path >= STELLAR_SPRAY_MAX_PATHS ||
	    !rtt_us)
		return;
	bucket = stellar_lat_bucket(rtt_ns);
	qp_paths = rcu_dereference_protected(xp->lat->paths,
					     lockdep_is_held(&xp->req_mutex));
	if (qp_paths && path < qp_paths->nr)
		stellar_lat_hist_add_at(&qp_paths->hist[path], bucket, rtt_ns);
	p = &xp->sdev->lat->path[path];
	atomic64_inc(&p->bucket[bucket]);
	atomic64_add(rtt_ns, &p->sum_ns);
	excess = stellar_spray_queue_delay_us(&xp->rc->spray, path, rtt_us, now_us);
	if (excess <= READ_ONCE(stellar_lat_burst_us))
		return;
	b = &xp->sdev->lat->burst[path];
	atomic64_inc(&b->count);
	atomic64_set(&b->last_ns, ktime_get_ns());
	max = atomic_read(&b->max_us);
	while (excess > max && !atomic_try_cmpxchg(&b->max_us, &max, excess))
		;
}

/* Add the racy snapshot of @in to @out. */
static void stellar_lat_hist_peek_add(struct stellar_lat_hist *out,
				      const struct stellar_lat_hist *in)
{
	int b;

	for (b = 0; b < STELLAR_LAT_BUCKETS; b++)
		out->bucket[b] += stellar_peek(in->bucket[b]);
	out->sum_ns += stellar_peek(in->sum_ns);
}

/* The device's histograms, summed over the CPUs. */
static void stellar_lat_dev_sum(struct stellar_dev *sdev,
				struct stellar_lat_hist *out)
{
	int cpu, seg;

	memset(out, 0, sizeof(*out) * __STELLAR_LAT_SEG_MAX);
	for_each_possible_cpu(cpu) {
		const struct stellar_lat_pcpu *p =
			per_cpu_ptr(sdev->lat->pcpu, cpu);

		for (seg = 0; seg < __STELLAR_LAT_SEG_MAX; seg++)
			stellar_lat_hist_peek_add(&out[seg], &p->seg[seg]);
	}
}

/* A QP's histograms, read without its mutexes. */
static void stellar_lat_qp_copy(struct stellar_qp *qp,
				struct stellar_lat_hist *out)
{
	const struct stellar_qp_lat *lat = qp->xport->lat;
	int seg;

	memset(out, 0, sizeof(*out) * __STELLAR_LAT_SEG_MAX);
	for (seg = 0; seg < __STELLAR_LAT_SEG_MAX; seg++)
		stellar_lat_hist_peek_add(&out[seg], &lat->seg[seg]);
}

static int stellar_lat_put_buckets(struct sk_buff *skb,
				   const struct stellar_lat_hist *h)
{
	struct nlattr *nest = nla_nest_start(skb, STELLAR_LAT_ATTR_BUCKETS);
	int b;

	if (!nest)
		return -EMSGSIZE;
	for (b = 0; b < STELLAR_LAT_BUCKETS; b++) {
		if (h->bucket[b] &&
		    nla_put_u64_64bit(skb, b + 1, h->bucket[b],
				      STELLAR_LAT_BUCKET_PAD))
			return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/* The samples of @h: count, sum and buckets, in an open nest. */
static int stellar_lat_put_samples(struct sk_buff *skb,
				   const struct stellar_lat_hist *h)
{
	if (nla_put_u64_64bit(skb, STELLAR_LAT_ATTR_COUNT,
			      stellar_lat_count(h->bucket, STELLAR_LAT_BUCKETS),
			      STELLAR_LAT_ATTR_PAD) ||
	    nla_put_u64_64bit(skb, STELLAR_LAT_ATTR_SUM_NS, h->sum_ns,
			      STELLAR_LAT_ATTR_PAD))
		return -EMSGSIZE;
	return stellar_lat_put_buckets(skb, h);
}

/*
 * One histogram: a STELLAR_ATTR_LAT_SEGMENT nest of segment @id, or a
 * STELLAR_ATTR_LAT_PATH nest of path @id.
 */
static int stellar_lat_put_hist(struct sk_buff *skb, int type, u32 id,
				const struct stellar_lat_hist *h)
{
	struct nlattr *nest = nla_nest_start(skb, type);

	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, type == STELLAR_ATTR_LAT_PATH ?
			STELLAR_LAT_ATTR_PATH : STELLAR_LAT_ATTR_SEGMENT_ID,
			id) ||
	    stellar_lat_put_samples(skb, h))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

/* Of the histograms @h of paths 0 to @nr - 1, those with samples. */
static int stellar_lat_put_path_hists(struct sk_buff *skb,
				      const struct stellar_lat_hist *h, u32 nr)
{
	u32 path;

	for (path = 0; path < nr; path++) {
		if (!stellar_lat_count(h[path].bucket, STELLAR_LAT_BUCKETS))
			continue;
		if (stellar_lat_put_hist(skb, STELLAR_ATTR_LAT_PATH, path,
					 &h[path]))
			return -EMSGSIZE;
	}
	return 0;
}

/* The device's RTT histograms per path. */
static int stellar_lat_put_paths(struct sk_buff *skb,
				 struct stellar_lat_dev *ld)
{
	struct stellar_lat_hist *h;
	int path, b, ret;

	h = kvcalloc(STELLAR_SPRAY_MAX_PATHS, sizeof(*h), GFP_KERNEL);
	if (!h)
		return -ENOMEM;
	for (path = 0; path < STELLAR_SPRAY_MAX_PATHS; path++) {
		const struct stellar_lat_path *p = &ld->path[path];

		for (b = 0; b < STELLAR_LAT_BUCKETS; b++)
			h[path].bucket[b] = atomic64_read(&p->bucket[b]);
		h[path].sum_ns = atomic64_read(&p->sum_ns);
	}
	ret = stellar_lat_put_path_hists(skb, h, STELLAR_SPRAY_MAX_PATHS);
	kvfree(h);
	return ret;
}

/* A QP's RTT histograms per path, read under RCU. */
static int stellar_lat_put_qp_paths(struct sk_buff *skb,
				    const struct stellar_qp_lat *lat)
{
	const struct stellar_lat_paths *paths;
	struct stellar_lat_hist *h;
	u32 nr = 0, path;
	int ret;

	h = kvcalloc(STELLAR_SPRAY_MAX_PATHS, sizeof(*h), GFP_KERNEL);
	if (!h)
		return -ENOMEM;
	rcu_read_lock();
	paths = rcu_dereference(lat->paths);
	if (paths)
		nr = min_t(u32, paths->nr, STELLAR_SPRAY_MAX_PATHS);
	for (path = 0; path < nr; path++)
		stellar_lat_hist_peek_add(&h[path], &paths->hist[path]);
	rcu_read_unlock();
	ret = stellar_lat_put_path_hists(skb, h, nr);
	kvfree(h);
	return ret;
}

/* The device's requester segments per size class, those with samples. */
static int stellar_lat_put_sizes(struct sk_buff *skb,
				 struct stellar_lat_dev *ld)
{
	struct stellar_lat_hist (*h)[__STELLAR_LAT_SIZE_MAX];
	int cpu, seg, class, ret = -ENOMEM;
	struct nlattr *nest;

	h = kcalloc(STELLAR_LAT_REQ_SEGS, sizeof(*h), GFP_KERNEL);
	if (!h)
		return ret;
	for_each_possible_cpu(cpu) {
		const struct stellar_lat_pcpu *p = per_cpu_ptr(ld->pcpu, cpu);

		for (seg = 0; seg < STELLAR_LAT_REQ_SEGS; seg++)
			for (class = 0; class < __STELLAR_LAT_SIZE_MAX; class++)
				stellar_lat_hist_peek_add(&h[seg][class],
							  &p->size[seg][class]);
	}
	ret = -EMSGSIZE;
	for (seg = 0; seg < STELLAR_LAT_REQ_SEGS; seg++) {
		for (class = 0; class < __STELLAR_LAT_SIZE_MAX; class++) {
			if (!stellar_lat_count(h[seg][class].bucket,
					       STELLAR_LAT_BUCKETS))
				continue;
			nest = nla_nest_start(skb, STELLAR_ATTR_LAT_SIZE);
			if (!nest ||
			    nla_put_u32(skb, STELLAR_LAT_ATTR_SEGMENT_ID, seg) ||
			    nla_put_u32(skb, STELLAR_LAT_ATTR_SIZE_CLASS, class) ||
			    stellar_lat_put_samples(skb, &h[seg][class]))
				goto out;
			nla_nest_end(skb, nest);
		}
	}
	ret = 0;
out:
	kfree(h);
	return ret;
}

static int stellar_lat_put_bursts(struct sk_buff *skb,
				  struct stellar_lat_dev *ld)
{
	int path;

	for (path = 0; path < STELLAR_SPRAY_MAX_PATHS; path++) {
		const struct stellar_lat_burst *b = &ld->burst[path];
		u64 count = atomic64_read(&b->count);
		struct nlattr *nest;

		if (!count)
			continue;
		nest = nla_nest_start(skb, STELLAR_ATTR_LAT_BURST);
		if (!nest ||
		    nla_put_u32(skb, STELLAR_BURST_ATTR_PATH, path) ||
		    nla_put_u64_64bit(skb, STELLAR_BURST_ATTR_COUNT, count,
				      STELLAR_BURST_ATTR_PAD) ||
		    nla_put_u64_64bit(skb, STELLAR_BURST_ATTR_LAST_NS,
				      atomic64_read(&b->last_ns),
				      STELLAR_BURST_ATTR_PAD) ||
		    nla_put_u32(skb, STELLAR_BURST_ATTR_MAX_US,
				atomic_read(&b->max_us)))
			return -EMSGSIZE;
		nla_nest_end(skb, nest);
	}
	return 0;
}

/**
 * stellar_lat_fill() - the body of a STELLAR_CMD_GET_LATENCY reply
 * @skb: the reply
 * @sdev: the device
 * @qp: a QP of @sdev (the caller checked who may see it): its segments
 *	and per-path RTT histograms; or NULL for the device's segments,
 *	microbursts, per-path RTT histograms and requester segments per
 *	message-size class
 *
 * Return: 0, -ENOMEM or -EMSGSIZE.
 */
int stellar_lat_fill(struct sk_buff *skb, struct stellar_dev *sdev,
		     struct stellar_qp *qp)
{
	struct stellar_lat_hist *h;
	int seg, ret = -EMSGSIZE;

	h = kcalloc(__STELLAR_LAT_SEG_MAX, sizeof(*h), GFP_KERNEL);
	if (!h)
		return -ENOMEM;
	if (qp)
		stellar_lat_qp_copy(qp, h);
	else
		stellar_lat_dev_sum(sdev, h);
	if (nla_put_string(skb, STELLAR_ATTR_DEV_NAME,
			   dev_name(&sdev->ibdev.dev)) ||
	    nla_put_u8(skb, STELLAR_ATTR_LAT_ENABLED, stellar_lat_enabled()) ||
	    nla_put_u32(skb, STELLAR_ATTR_LAT_BURST_US,
			READ_ONCE(stellar_lat_burst_us)) ||
	    (qp && nla_put_u32(skb, STELLAR_ATTR_QPN, qp->ibqp.qp_num)))
		goto out;
	for (seg = 0; seg < __STELLAR_LAT_SEG_MAX; seg++)
		if (stellar_lat_put_hist(skb, STELLAR_ATTR_LAT_SEGMENT, seg,
					 &h[seg]))
			goto out;
	if (qp)
		ret = stellar_lat_put_qp_paths(skb, qp->xport->lat);
	else
		ret = stellar_lat_put_bursts(skb, sdev->lat) ?:
		      stellar_lat_put_paths(skb, sdev->lat) ?:
		      stellar_lat_put_sizes(skb, sdev->lat);
out:
	kfree(h);
	return ret;
}
