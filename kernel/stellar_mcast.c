// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: UD multicast (attach_mcast/detach_mcast).
 *
 * A device keeps a table from multicast GID (an IPv4-mapped 224.0.0.0/4
 * address or an IPv6 ff00::/8 address) to the group's UD QPs.  The first
 * QP attached to a group adds the group's Ethernet multicast address to
 * the netdev's filter (dev_mc_add); the last one to leave removes it.  The
 * IP membership (IGMP/MLD) that lets the IP stack hand the packets to the
 * UDP 4791 socket belongs to whoever joins: the RDMA CM joins IPv4 groups
 * itself (ip_mc_inc_group) before the process attaches its QP.
 *
 * A received UD packet with destination QPN 0xffffff and a multicast
 * destination address is queued to every QP attached to the group, a
 * clone each (at most STELLAR_MAX_MCAST_QP_ATTACH of them), each clone
 * charged to the device's receive backlog like any packet.  Sending needs
 * nothing special: the IP stack maps a multicast destination to its
 * Ethernet address.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <linux/jhash.h>
#include <linux/rculist.h>
#include <net/addrconf.h>
#include <net/if_inet6.h>
#include <net/ip.h>
#include <rdma/ib_addr.h>

#include "stellar_xport.h"

/**
 * struct stellar_mcg - a multicast group with at least one QP attached
 * @node: entry in sdev->mcast_groups
 * @mgid: the group's GID
 * @qps: struct stellar_mca of the attached QPs (RCU list)
 * @nr_qps: entries on @qps, at most STELLAR_MAX_MCAST_QP_ATTACH
 * @rcu: frees the group after the receive path's lookups
 */
struct stellar_mcg {
	struct hlist_node node;
	union ib_gid mgid;
	struct list_head qps;
	u32 nr_qps;
	struct rcu_head rcu;
};

/**
 * struct stellar_mca - one QP attached to one group
 * @node: entry in stellar_mcg.qps
 * @qp: the QP; destroy_qp detaches it and waits out the RCU readers
 * @users: attach calls for this QP and group not yet detached
 * @rcu: frees the attachment after the receive path's walks
 */
struct stellar_mca {
	struct list_head node;
	struct stellar_qp *qp;
	u32 users;
	struct rcu_head rcu;
};

void stellar_mcast_dev_init(struct stellar_dev *sdev)
{
	mutex_init(&sdev->mcast_lock);
	hash_init(sdev->mcast_groups);
	sdev->mcast_seed = get_random_u32();
}

/* Called once every QP is gone: every group went with its last QP. */
void stellar_mcast_dev_fini(struct stellar_dev *sdev)
{
	WARN_ON(sdev->num_mcast_grps || sdev->num_mcast_attach);
	mutex_destroy(&sdev->mcast_lock);
}

static u32 stellar_mgid_hash(struct stellar_dev *sdev, const union ib_gid *mgid)
{
	return jhash(mgid->raw, sizeof(mgid->raw), sdev->mcast_seed);
}

/* Context: sdev->mcast_lock or RCU read side. */
static struct stellar_mcg *stellar_mcg_find(struct stellar_dev *sdev,
					    const union ib_gid *mgid)
{
	struct stellar_mcg *mcg;

	hash_for_each_possible_rcu(sdev->mcast_groups, mcg, node,
				   stellar_mgid_hash(sdev, mgid),
				   lockdep_is_held(&sdev->mcast_lock))
		if (!memcmp(mcg->mgid.raw, mgid->raw, sizeof(mgid->raw)))
			return mcg;
	return NULL;
}

static struct stellar_mca *stellar_mca_find(struct stellar_mcg *mcg,
					    struct stellar_qp *qp)
{
	struct stellar_mca *mca;

	list_for_each_entry(mca, &mcg->qps, node)
		if (mca->qp == qp)
			return mca;
	return NULL;
}

/* The Ethernet address an IPv4-mapped or IPv6 multicast GID maps to. */
static void stellar_mgid_mac(const union ib_gid *mgid, u8 *mac)
{
	if (ipv6_addr_v4mapped((const struct in6_addr *)mgid->raw))
		ip_eth_mc_map(*(const __be32 *)&mgid->raw[12], mac);
	else
		ipv6_eth_mc_map((const struct in6_addr *)mgid->raw, mac);
}

/* A new, empty group whose address the netdev now receives. */
static struct stellar_mcg *stellar_mcg_create(struct stellar_dev *sdev,
					      const union ib_gid *mgid)
{
	struct stellar_mcg *mcg;
	u8 mac[ETH_ALEN];
	int ret;

	if (sdev->num_mcast_grps >= STELLAR_MAX_MCAST_GRP)
		return ERR_PTR(-ENOMEM);
	mcg = kzalloc(sizeof(*mcg), STELLAR_GFP_USER);
	if (!mcg)
		return ERR_PTR(-ENOMEM);
	mcg->mgid = *mgid;
	INIT_LIST_HEAD(&mcg->qps);
	stellar_mgid_mac(mgid, mac);
	ret = dev_mc_add(sdev->ndev, mac);
	if (ret) {
		kfree(mcg);
		return ERR_PTR(ret);
	}
	hash_add_rcu(sdev->mcast_groups, &mcg->node,
		     stellar_mgid_hash(sdev, mgid));
	sdev->num_mcast_grps++;
	return mcg;
}

/* Drop a group without QPs; lookups under RCU may still see it. */
static void stellar_mcg_release(struct stellar_dev *sdev,
				struct stellar_mcg *mcg)
{
	u8 mac[ETH_ALEN];

	if (mcg->nr_qps)
		return;
	hash_del_rcu(&mcg->node);
	sdev->num_mcast_grps--;
	stellar_mgid_mac(&mcg->mgid, mac);
	/* -ENOENT once the netdev is unregistered and its list flushed. */
	dev_mc_del(sdev->ndev, mac);
	kfree_rcu(mcg, rcu);
}

static int stellar_mca_add(struct stellar_dev *sdev, struct stellar_mcg *mcg,
			   struct stellar_qp *qp)
{
	struct stellar_mca *mca = stellar_mca_find(mcg, qp);

	if (mca) {
		mca->users++;
		return 0;
	}
	if (mcg->nr_qps >= STELLAR_MAX_MCAST_QP_ATTACH ||
	    sdev->num_mcast_attach >= STELLAR_MAX_TOTAL_MCAST_QP_ATTACH)
		return -ENOMEM;
	mca = kzalloc(sizeof(*mca), STELLAR_GFP_USER);
	if (!mca)
		return -ENOMEM;
	mca->qp = qp;
	mca->users = 1;
	list_add_tail_rcu(&mca->node, &mcg->qps);
	mcg->nr_qps++;
	sdev->num_mcast_attach++;
	qp->nr_mcast++;
	WRITE_ONCE(qp->was_mcast, true);
	return 0;
}

static void stellar_mca_del(struct stellar_dev *sdev, struct stellar_mcg *mcg,
			    struct stellar_mca *mca)
{
	list_del_rcu(&mca->node);
	mcg->nr_qps--;
	sdev->num_mcast_attach--;
	mca->qp->nr_mcast--;
	kfree_rcu(mca, rcu);
	stellar_mcg_release(sdev, mcg);
}

static bool stellar_mcast_ok(struct ib_qp *ibqp, const union ib_gid *gid)
{
	return ibqp->qp_type == IB_QPT_UD &&
	       rdma_is_multicast_addr((struct in6_addr *)gid->raw);
}

/**
 * stellar_attach_mcast() - attach a UD QP to a multicast group
 * @ibqp: the QP
 * @gid: the group: an IPv4-mapped 224.0.0.0/4 or an IPv6 ff00::/8 GID
 * @lid: unused on RoCE
 *
 * Attaching a QP again to a group it is attached to counts one more
 * attach, which one more detach undoes.
 *
 * Context: process.
 * Return: 0, -EINVAL for a QP that is not UD or a GID that is not
 * multicast, -ENOMEM at an advertised limit (max_mcast_grp,
 * max_mcast_qp_attach, max_total_mcast_qp_attach) or without memory.
 */
int stellar_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct stellar_dev *sdev = to_sdev(ibqp->device);
	struct stellar_mcg *mcg;
	int ret;

	if (!stellar_mcast_ok(ibqp, gid))
		return -EINVAL;
	mutex_lock(&sdev->mcast_lock);
	mcg = stellar_mcg_find(sdev, gid);
	if (!mcg)
		mcg = stellar_mcg_create(sdev, gid);
	if (IS_ERR(mcg)) {
		ret = PTR_ERR(mcg);
	} else {
		ret = stellar_mca_add(sdev, mcg, to_sqp(ibqp));
		if (ret)
			stellar_mcg_release(sdev, mcg);
	}
	mutex_unlock(&sdev->mcast_lock);
	return ret;
}

/**
 * stellar_detach_mcast() - undo one stellar_attach_mcast()
 * @ibqp: the QP
 * @gid: the group
 * @lid: unused on RoCE
 *
 * Context: process.
 * Return: 0, or -EINVAL if @ibqp is not attached to @gid.
 */
int stellar_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct stellar_dev *sdev = to_sdev(ibqp->device);
	struct stellar_mca *mca = NULL;
	struct stellar_mcg *mcg;

	mutex_lock(&sdev->mcast_lock);
	mcg = stellar_mcg_find(sdev, gid);
	if (mcg)
		mca = stellar_mca_find(mcg, to_sqp(ibqp));
	if (mca && !--mca->users)
		stellar_mca_del(sdev, mcg, mca);
	mutex_unlock(&sdev->mcast_lock);
	return mca ? 0 : -EINVAL;
}

/**
 * stellar_mcast_qp_destroy() - detach a QP being destroyed from every group
 * @qp: the QP
 *
 * The RDMA core detaches a QP before destroying it; this catches what it
 * did not.  Then waits until no receive path walk can still hold a
 * pointer to @qp: the core frees the QP without an RCU grace period.
 *
 * Context: process, from destroy_qp.
 */
void stellar_mcast_qp_destroy(struct stellar_qp *qp)
{
	struct stellar_dev *sdev = to_sdev(qp->ibqp.device);
	struct stellar_mca *mca;
	struct stellar_mcg *mcg;
	struct hlist_node *tmp;
	int bkt;

	if (!READ_ONCE(qp->was_mcast))
		return;
	mutex_lock(&sdev->mcast_lock);
	hash_for_each_safe(sdev->mcast_groups, bkt, tmp, mcg, node) {
		mca = qp->nr_mcast ? stellar_mca_find(mcg, qp) : NULL;
		if (mca)
			stellar_mca_del(sdev, mcg, mca);
	}
	mutex_unlock(&sdev->mcast_lock);
	synchronize_rcu();
}

/* The group GID of a packet's multicast destination address. */
static bool stellar_skb_mgid(const struct sk_buff *skb, union ib_gid *mgid)
{
	if (skb->protocol == htons(ETH_P_IP)) {
		__be32 daddr = ip_hdr(skb)->daddr;

		ipv6_addr_set_v4mapped(daddr, (struct in6_addr *)mgid->raw);
		return ipv4_is_multicast(daddr);
	}
	if (skb->protocol == htons(ETH_P_IPV6)) {
		memcpy(mgid->raw, &ipv6_hdr(skb)->daddr, sizeof(mgid->raw));
		return ipv6_addr_is_multicast(&ipv6_hdr(skb)->daddr);
	}
	return false;
}

/* Queue @skb (NULL: a clone that failed) to @qp and drop its reference. */
static void stellar_mcast_deliver(struct stellar_qp *qp, struct sk_buff *skb,
				  const struct stellar_pkt *pkt)
{
	if (skb)
		stellar_xport_enqueue(qp, skb, pkt);
	else
		stellar_xstat(qp->xport, STELLAR_XS_DROP_BACKLOG, 1);
	stellar_qp_put(qp);
}

/**
 * stellar_mcast_rcv() - deliver a packet for a multicast group
 * @sdev: the device it arrived on
 * @skb: a validated packet with destination QPN STELLAR_MCAST_QPN
 * @pkt: its parsed headers
 *
 * Each QP attached to the group gets a copy (the last one the original),
 * queued and charged like any received packet; the QPs' own checks (UD,
 * state, Q_Key) follow in their receive work.
 *
 * Context: softirq or BH disabled, RCU held.  Consumes @skb.
 */
void stellar_mcast_rcv(struct stellar_dev *sdev, struct sk_buff *skb,
		       const struct stellar_pkt *pkt)
{
	struct stellar_qp *prev = NULL;
	struct stellar_mcg *mcg = NULL;
	struct stellar_mca *mca;
	union ib_gid mgid;

	if (stellar_skb_mgid(skb, &mgid))
		mcg = stellar_mcg_find(sdev, &mgid);
	if (!mcg) {
		stellar_count(sdev, STELLAR_STAT_RX_DROP_NO_QP, 1);
		kfree_skb(skb);
		return;
	}
	stellar_count(sdev, STELLAR_STAT_RX_MCAST_PACKETS, 1);
	list_for_each_entry_rcu(mca, &mcg->qps, node) {
		if (!refcount_inc_not_zero(&mca->qp->ref))
			continue;
		if (prev)
			stellar_mcast_deliver(prev, skb_clone(skb, GFP_ATOMIC),
					      pkt);
		prev = mca->qp;
	}
	if (prev)
		stellar_mcast_deliver(prev, skb, pkt);
	else
		kfree_skb(skb);
}
