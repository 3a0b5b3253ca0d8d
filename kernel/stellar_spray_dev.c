// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: per-device packet spray statistics.
 *
 *   /proc/stellar/spray_stats   a section per device: per path (summed
 *                               over the device's QPs) packets, bytes,
 *                               retransmits, losses, ECN marks, ways
 *                               back found dead, RTT and state; the out-of-order depth histogram;
 *                               a line per spraying QP
 *   STELLAR_CMD_GET_SPRAY       the same for stellar-tool
 *   STELLAR_CMD_SET_QP          per-QP spray_paths
 *
 * Per-path figures are read from each QP's spray state without its
 * req_mutex (reading statistics never waits for, or stalls, a QP's data
 * path): each field is one aligned word the requester writes, read once,
 * so a sum may be a packet behind but never torn.  To them are added the
 * counters the transport retired into the device
 * (stellar_spray_dev_retire()) when it reset or destroyed a QP's spray
 * state; a retirement moves counts from the QP to the device under
 * @retire_lock, and a reader that overlapped one sums again, so no packet
 * is counted twice or missed.  A path no current QP has is "idle".
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <linux/slab.h>
#include <net/genetlink.h>

#include "stellar_xport.h"

/**
 * struct stellar_spray_path_sum - path i of every spraying QP of a device
 * @qps: QPs that have path i
 * @active: of them, those using it
 * @failed: those that took it out
 * @probing: those probing it
 * @srtt_n: QPs with an RTT measured on it
 * @srtt_sum: sum of their smoothed RTTs
 * @packets: packets sent on it
 * @bytes: payload bytes sent on it
 * @retransmits: of @packets, retransmissions
 * @losses: packets declared lost
 * @ecn_marks: acknowledgements that reported congestion
 * @back_dead: of @failed and @probing, those out for a dead way back
 * @back_failures: times a QP took it out for a dead way back
 */
struct stellar_spray_path_sum {
	u32 qps;
	u32 active;
	u32 failed;
	u32 probing;
	u32 srtt_n;
	u64 srtt_sum;
	u64 packets;
	u64 bytes;
	u64 retransmits;
	u64 losses;
	u64 ecn_marks;
	u32 back_dead;
	u64 back_failures;
};

/**
 * struct stellar_spray_snapshot - spray figures of a device at one time
 * @qps: QPs with spray state
 * @nr_paths: most paths any of them has
 * @ooo_max: deepest out-of-order arrival
 * @ooo: out-of-order arrivals per depth bucket
 * @path: per-path sums
 */
struct stellar_spray_snapshot {
	u32 qps;
	u32 nr_paths;
	u32 ooo_max;
	u64 ooo[STELLAR_SPRAY_OOO_BUCKETS];
	struct stellar_spray_path_sum path[STELLAR_SPRAY_MAX_PATHS];
};

/* Label of out-of-order depth bucket @bucket ("1", "2-3", ..., "2048+"). */
static void spray_ooo_label(char *buf, size_t size, u32 bucket)
{
	u32 low = 1U << bucket;

	if (!bucket)
		snprintf(buf, size, "1");
	else if (bucket == STELLAR_SPRAY_OOO_BUCKETS - 1)
		snprintf(buf, size, "%u+", low);
	else
		snprintf(buf, size, "%u-%u", low, 2 * low - 1);
}

void stellar_spray_dev_init(struct stellar_spray_dev_stats *st)
{
	seqlock_init(&st->retire_lock);
}

void stellar_spray_dev_ooo(struct stellar_dev *sdev, u32 depth)
{
	struct stellar_spray_dev_stats *st = &sdev->spray;
	int deepest = atomic_read(&st->ooo_max);
	int capped = min_t(u32, depth, INT_MAX);
	u32 bucket = 0;

	if (depth > 1)
		bucket = min_t(u32, fls(depth) - 1,
			       STELLAR_SPRAY_OOO_BUCKETS - 1);
	atomic64_inc(&st->ooo[bucket]);
	while (capped > deepest) {
		if (atomic_try_cmpxchg(&st->ooo_max, &deepest, capped))
			break;
	}
}

void stellar_spray_dev_retire(struct stellar_dev *sdev,
			      struct stellar_spray *s)
{
	u32 n = min_t(u32, s->nr_paths, STELLAR_SPRAY_MAX_PATHS), i;
	int used = 0, seen;

	write_seqlock(&sdev->spray.retire_lock);
	for (i = 0; i < n; i++) {
		struct stellar_spray_dev_retired *r = &sdev->spray.retired[i];
		struct stellar_spray_path *p = &s->path[i];

		if (!p->tx_packets && !p->losses && !p->ecn_marks &&
		    !p->back_failures)
			continue;
		atomic64_add(p->tx_packets, &r->packets);
		atomic64_add(p->tx_bytes, &r->bytes);
		atomic64_add(p->retransmits, &r->retransmits);
		atomic64_add(p->losses, &r->losses);
		atomic64_add(p->ecn_marks, &r->ecn_marks);
		atomic64_add(p->back_failures, &r->back_failures);
		p->tx_packets = 0;
		p->tx_bytes = 0;
		p->retransmits = 0;
		p->losses = 0;
		p->ecn_marks = 0;
		p->back_failures = 0;
		used = i + 1;
	}
	seen = atomic_read(&sdev->spray.retired_paths);
	while (used > seen) {
		if (atomic_try_cmpxchg(&sdev->spray.retired_paths, &seen, used))
			break;
	}
	write_sequnlock(&sdev->spray.retire_lock);
}

u32 stellar_qp_spray_paths(struct stellar_qp *qp)
{
	struct stellar_dev *sdev = to_sdev(qp->ibqp.device);
	u32 paths = READ_ONCE(qp->spray_paths);

	if (!paths)
		paths = READ_ONCE(sdev->settings.spray_paths);
	return clamp_t(u32, paths, 1, STELLAR_SPRAY_MAX_PATHS);
}

/*
 * The requester changes @p under its req_mutex, which readers do not
 * take: every field is read once, as a whole word (data_race: a
 * statistic may lag by a packet).
 */
static void spray_sum_path(struct stellar_spray_path_sum *sum,
			   const struct stellar_spray_path *p)
{
	u8 state = stellar_peek(p->state);
	u32 srtt = stellar_peek(p->srtt_us);

	sum->qps++;
	sum->active += state == STELLAR_PATH_ACTIVE;
	sum->failed += state == STELLAR_PATH_FAILED;
	sum->probing += state == STELLAR_PATH_PROBING;
	sum->back_dead += state != STELLAR_PATH_ACTIVE &&
			  stellar_peek(p->back_dead);
	if (srtt) {
		sum->srtt_n++;
		sum->srtt_sum += srtt;
	}
	sum->packets += stellar_peek(p->tx_packets);
	sum->bytes += stellar_peek(p->tx_bytes);
	sum->retransmits += stellar_peek(p->retransmits);
	sum->losses += stellar_peek(p->losses);
	sum->ecn_marks += stellar_peek(p->ecn_marks);
	sum->back_failures += stellar_peek(p->back_failures);
}

/* A QP's spray state, NULL if it has none (UD, never connected). */
static const struct stellar_spray *spray_of_qp(struct stellar_qp *qp)
{
	const struct stellar_xport_rc *rc;

	if (!qp->xport || stellar_qp_is_ud(qp))
		return NULL;
	/* Pairs with the release in stellar_xport_prepare(). */
	rc = smp_load_acquire(&qp->xport->rc);
	return rc ? &rc->spray : NULL;
}

static void spray_sum_qp(struct stellar_spray_snapshot *snap,
			 const struct stellar_spray *s)
{
	u32 i, n;

	n = min_t(u32, stellar_peek(s->nr_paths),
		  STELLAR_SPRAY_MAX_PATHS);
	if (n) {
		snap->qps++;
		snap->nr_paths = max(snap->nr_paths, n);
	}
	for (i = 0; i < n; i++)
		spray_sum_path(&snap->path[i], &s->path[i]);
}

/* The counters of QPs gone count too. */
static void spray_add_retired(struct stellar_spray_snapshot *snap,
			      struct stellar_spray_dev_stats *st)
{
	u32 n = min_t(u32, atomic_read(&st->retired_paths),
		      STELLAR_SPRAY_MAX_PATHS), i;

	snap->nr_paths = max(snap->nr_paths, n);
	for (i = 0; i < n; i++) {
		struct stellar_spray_path_sum *sum = &snap->path[i];
		struct stellar_spray_dev_retired *r = &st->retired[i];

		sum->packets += atomic64_read(&r->packets);
		sum->bytes += atomic64_read(&r->bytes);
		sum->retransmits += atomic64_read(&r->retransmits);
		sum->losses += atomic64_read(&r->losses);
		sum->ecn_marks += atomic64_read(&r->ecn_marks);
		sum->back_failures += atomic64_read(&r->back_failures);
	}
}

/* One pass over the QPs, then over the retired counters. */
static void spray_collect_once(struct stellar_dev *sdev,
			       struct stellar_spray_snapshot *snap)
{
	const struct stellar_spray *spray;
	struct stellar_qp *qp;
	unsigned long index;

	memset(snap, 0, sizeof(*snap));
	xa_for_each(&sdev->qps, index, qp) {
		qp = stellar_qp_get(sdev, index);
		if (!qp)
			continue;
		spray = spray_of_qp(qp);
		if (spray)
			spray_sum_qp(snap, spray);
		stellar_qp_put(qp);
	}
	spray_add_retired(snap, &sdev->spray);
}

/*
 * A retirement during a pass may have moved counts the pass saw in a QP
 * into the retired totals (or the reverse): pass again.  Retirements come
 * with QP resets and destruction only, so a few tries settle; after them
 * the figures stand as summed (a statistic, not a ledger).
 */
static void spray_collect(struct stellar_dev *sdev,
			  struct stellar_spray_snapshot *snap)
{
	int tries = 4;
	unsigned int seq;
	u32 i;

	do {
		seq = read_seqbegin(&sdev->spray.retire_lock);
		spray_collect_once(sdev, snap);
	} while (read_seqretry(&sdev->spray.retire_lock, seq) && --tries);
	for (i = 0; i < STELLAR_SPRAY_OOO_BUCKETS; i++)
		snap->ooo[i] = atomic64_read(&sdev->spray.ooo[i]);
	snap->ooo_max = atomic_read(&sdev->spray.ooo_max);
}

static const char *spray_sum_state(const struct stellar_spray_path_sum *sum)
{
	if (!sum->qps)
		return "idle";
	if (sum->active == sum->qps)
		return "active";
	if (sum->failed == sum->qps)
		return "failed";
	if (sum->probing == sum->qps)
		return "probing";
	return "degraded";
}

static u32 spray_sum_srtt(const struct stellar_spray_path_sum *sum)
{
	return sum->srtt_n ? div_u64(sum->srtt_sum, sum->srtt_n) : 0;
}

/**
 * stellar_spray_dev_totals() - the spray figures of a device, all paths
 * @sdev: the device
 * @totals: __STELLAR_HW_SPRAY_MAX values, indexed by enum stellar_hw_spray
 *
 * The sums of what /proc/stellar/spray_stats shows per path.
 *
 * Context: process; takes no QP lock.
 * Return: 0 or -ENOMEM.
 */
int stellar_spray_dev_totals(struct stellar_dev *sdev, u64 *totals)
{
	struct stellar_spray_snapshot *snap;
	u32 i;

	snap = kmalloc(sizeof(*snap), GFP_KERNEL);
	if (!snap)
		return -ENOMEM;
	spray_collect(sdev, snap);
	memset(totals, 0, __STELLAR_HW_SPRAY_MAX * sizeof(*totals));
	totals[STELLAR_HW_SPRAY_QPS] = snap->qps;
	totals[STELLAR_HW_SPRAY_OOO_MAX] = snap->ooo_max;
	for (i = 0; i < snap->nr_paths; i++) {
		const struct stellar_spray_path_sum *sum = &snap->path[i];

		totals[STELLAR_HW_SPRAY_PACKETS] += sum->packets;
		totals[STELLAR_HW_SPRAY_BYTES] += sum->bytes;
		totals[STELLAR_HW_SPRAY_RETRANSMITS] += sum->retransmits;
		totals[STELLAR_HW_SPRAY_LOSSES] += sum->losses;
		totals[STELLAR_HW_SPRAY_ECN_MARKS] += sum->ecn_marks;
		totals[STELLAR_HW_SPRAY_PATHS_FAILED] += sum->failed;
		totals[STELLAR_HW_SPRAY_PATHS_PROBING] += sum->probing;
		totals[STELLAR_HW_SPRAY_BACK_FAILURES] += sum->back_failures;
	}
	kfree(snap);
	return 0;
}

/* ---- /proc/stellar/spray_stats ------------------------------------------ */

static void spray_show_paths(struct seq_file *m,
			     const struct stellar_spray_snapshot *snap)
{
	u32 i;

	if (snap->nr_paths)
		seq_puts(m, "  path  qps active failed probing      packets          bytes retransmits     losses  ecn_marks back_failures  srtt_us state\n");
	for (i = 0; i < snap->nr_paths; i++) {
		const struct stellar_spray_path_sum *sum = &snap->path[i];

		seq_printf(m, "  %4u %4u %6u %6u %7u %12llu %14llu %11llu %10llu %10llu %13llu %8u %s\n",
			   i, sum->qps, sum->active, sum->failed, sum->probing,
			   sum->packets, sum->bytes, sum->retransmits,
			   sum->losses, sum->ecn_marks, sum->back_failures,
			   spray_sum_srtt(sum), spray_sum_state(sum));
	}
}

static void spray_show_ooo(struct seq_file *m,
			   const struct stellar_spray_snapshot *snap)
{
	char label[16];
	u32 i;

	seq_puts(m, "  ooo_depth");
	for (i = 0; i < STELLAR_SPRAY_OOO_BUCKETS; i++) {
		spray_ooo_label(label, sizeof(label), i);
		seq_printf(m, " %s:%llu", label, snap->ooo[i]);
	}
	seq_printf(m, " max:%u\n", snap->ooo_max);
}

static void spray_show_qp(struct seq_file *m, struct stellar_qp *qp,
			  const struct stellar_spray *s)
{
	struct stellar_spray_path_sum sum = {};
	u32 i, n;

	/* Read without the req_mutex, as spray_sum_path() says. */
	n = min_t(u32, stellar_peek(s->nr_paths),
		  STELLAR_SPRAY_MAX_PATHS);
	if (!n)
		return;
	for (i = 0; i < n; i++)
		spray_sum_path(&sum, &s->path[i]);
	seq_printf(m, "  qp %u: paths %u active %u failed %u probing %u sports",
		   qp->ibqp.qp_num, n, sum.active, sum.failed, sum.probing);
	for (i = 0; i < n; i++)
		seq_printf(m, "%c%u", i ? ',' : ' ',
			   stellar_peek(s->path[i].sport));
	seq_putc(m, '\n');
}

static void spray_show_qps(struct seq_file *m, struct stellar_dev *sdev)
{
	const struct stellar_spray *spray;
	struct stellar_qp *qp;
	unsigned long index;

	xa_for_each(&sdev->qps, index, qp) {
		qp = stellar_qp_get(sdev, index);
		if (!qp)
			continue;
		spray = spray_of_qp(qp);
		if (spray)
			spray_show_qp(m, qp, spray);
		stellar_qp_put(qp);
	}
}

static void spray_show_dev(struct seq_file *m, struct stellar_dev *sdev,
			   struct stellar_spray_snapshot *snap)
{
	spray_collect(sdev, snap);
	seq_printf(m, "device %s netdev %s spray_paths %u qps %u\n",
		   dev_name(&sdev->ibdev.dev), netdev_name(sdev->ndev),
		   READ_ONCE(sdev->settings.spray_paths), snap->qps);
	spray_show_paths(m, snap);
	spray_show_ooo(m, snap);
	if (stellar_proc_may_see_qps(m->file, sdev))
		spray_show_qps(m, sdev);
}

/*
 * Every device, each held by a registration reference while it is shown
 * (showing sleeps); a held device stays on the list, so the walk can go
 * on from it.
 */
int stellar_spray_dev_proc_show(struct seq_file *m, void *v)
{
	struct stellar_spray_snapshot *snap;
	struct stellar_dev *sdev;

	snap = kmalloc(sizeof(*snap), GFP_KERNEL);
	if (!snap)
		return -ENOMEM;
	rcu_read_lock();
	list_for_each_entry_rcu(sdev, &stellar_dev_list, list) {
		if (!stellar_proc_may_see_dev(m->file, sdev) ||
		    !ib_device_try_get(&sdev->ibdev))
			continue;
		rcu_read_unlock();
		spray_show_dev(m, sdev, snap);
		rcu_read_lock();
		ib_device_put(&sdev->ibdev);
	}
	rcu_read_unlock();
	kfree(snap);
	return 0;
}

/* ---- netlink -------------------------------------------------------------- */

static int spray_put_path(struct sk_buff *skb, u32 index,
			  const struct stellar_spray_path_sum *sum)
{
	struct nlattr *nest = nla_nest_start(skb, STELLAR_ATTR_SPRAY_PATH);

	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, STELLAR_PATH_ATTR_INDEX, index) ||
	    nla_put_u32(skb, STELLAR_PATH_ATTR_QPS, sum->qps) ||
	    nla_put_u32(skb, STELLAR_PATH_ATTR_ACTIVE, sum->active) ||
	    nla_put_u32(skb, STELLAR_PATH_ATTR_FAILED, sum->failed) ||
	    nla_put_u32(skb, STELLAR_PATH_ATTR_PROBING, sum->probing) ||
	    nla_put_u64_64bit(skb, STELLAR_PATH_ATTR_PACKETS, sum->packets,
			      STELLAR_PATH_ATTR_PAD) ||
	    nla_put_u64_64bit(skb, STELLAR_PATH_ATTR_BYTES, sum->bytes,
			      STELLAR_PATH_ATTR_PAD) ||
	    nla_put_u64_64bit(skb, STELLAR_PATH_ATTR_RETRANSMITS,
			      sum->retransmits, STELLAR_PATH_ATTR_PAD) ||
	    nla_put_u64_64bit(skb, STELLAR_PATH_ATTR_LOSSES, sum->losses,
			      STELLAR_PATH_ATTR_PAD) ||
	    nla_put_u64_64bit(skb, STELLAR_PATH_ATTR_ECN_MARKS,
			      sum->ecn_marks, STELLAR_PATH_ATTR_PAD) ||
	    nla_put_u32(skb, STELLAR_PATH_ATTR_SRTT_US, spray_sum_srtt(sum)) ||
	    nla_put_u32(skb, STELLAR_PATH_ATTR_BACK_DEAD, sum->back_dead) ||
	    nla_put_u64_64bit(skb, STELLAR_PATH_ATTR_BACK_FAILURES,
			      sum->back_failures, STELLAR_PATH_ATTR_PAD)) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

static int spray_put_ooo(struct sk_buff *skb,
			 const struct stellar_spray_snapshot *snap)
{
	struct nlattr *nest = nla_nest_start(skb, STELLAR_ATTR_SPRAY_OOO);
	u32 i;

	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < STELLAR_SPRAY_OOO_BUCKETS; i++) {
		if (nla_put_u64_64bit(skb, i + 1, snap->ooo[i],
				      STELLAR_SPRAY_OOO_PAD)) {
			nla_nest_cancel(skb, nest);
			return -EMSGSIZE;
		}
	}
	nla_nest_end(skb, nest);
	return nla_put_u32(skb, STELLAR_ATTR_SPRAY_OOO_MAX, snap->ooo_max);
}

static int spray_put(struct sk_buff *skb, struct stellar_dev *sdev,
		     const struct stellar_spray_snapshot *snap)
{
	u32 i;

	if (nla_put_string(skb, STELLAR_ATTR_DEV_NAME,
			   dev_name(&sdev->ibdev.dev)) ||
	    nla_put_u32(skb, STELLAR_ATTR_SPRAY_PATHS,
			READ_ONCE(sdev->settings.spray_paths)) ||
	    nla_put_u32(skb, STELLAR_ATTR_SPRAY_QPS, snap->qps) ||
	    spray_put_ooo(skb, snap))
		return -EMSGSIZE;
	for (i = 0; i < snap->nr_paths; i++)
		if (spray_put_path(skb, i, &snap->path[i]))
			return -EMSGSIZE;
	return 0;
}

/**
 * stellar_spray_dev_fill() - the attributes of a STELLAR_CMD_GET_SPRAY reply
 * @skb: the reply (STELLAR_SPRAY_MSG_SIZE bytes of room)
 * @sdev: the device
 *
 * Context: process; takes no QP lock.
 * Return: 0, -ENOMEM or -EMSGSIZE.
 */
int stellar_spray_dev_fill(struct sk_buff *skb, struct stellar_dev *sdev)
{
	struct stellar_spray_snapshot *snap;
	int ret;

	snap = kmalloc(sizeof(*snap), GFP_KERNEL);
	if (!snap)
		return -ENOMEM;
	spray_collect(sdev, snap);
	ret = spray_put(skb, sdev, snap);
	kfree(snap);
	return ret;
}

/**
 * stellar_spray_dev_set_qp() - apply STELLAR_CMD_SET_QP
 * @sdev: the device
 * @info: the request: STELLAR_ATTR_QPN and STELLAR_ATTR_SPRAY_PATHS
 *
 * The new number of paths takes effect when the transport next sets up
 * the QP's spray state (its next move to RTS).
 *
 * Return: 0, -EINVAL without the attributes or for a datagram QP, -ENOENT
 * for an unknown QP.
 */
int stellar_spray_dev_set_qp(struct stellar_dev *sdev, struct genl_info *info)
{
	struct nlattr **tb = info->attrs;
	struct stellar_qp *qp;
	int ret = 0;

	if (GENL_REQ_ATTR_CHECK(info, STELLAR_ATTR_QPN) ||
	    GENL_REQ_ATTR_CHECK(info, STELLAR_ATTR_SPRAY_PATHS))
		return -EINVAL;
	qp = stellar_qp_get(sdev, nla_get_u32(tb[STELLAR_ATTR_QPN]));
	if (!qp) {
		NL_SET_ERR_MSG_ATTR(info->extack, tb[STELLAR_ATTR_QPN],
				    "no such QP on this device");
		return -ENOENT;
	}
	if (stellar_qp_is_ud(qp)) {
		NL_SET_ERR_MSG_ATTR(info->extack, tb[STELLAR_ATTR_QPN],
				    "datagram QPs do not spray");
		ret = -EINVAL;
	} else {
		WRITE_ONCE(qp->spray_paths,
			   nla_get_u32(tb[STELLAR_ATTR_SPRAY_PATHS]));
	}
	stellar_qp_put(qp);
	return ret;
}
