// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: the "stellar" generic netlink family (stellar-tool).
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <net/genetlink.h>

#include "stellar.h"
#include "stellar_lat.h"
#include "stellar_transport.h"

static struct netlink_range_validation stellar_rx_buf_size_range = {
	.min = STELLAR_RX_BUF_SIZE_MIN, .max = STELLAR_RX_BUF_SIZE_MAX,
};

static struct netlink_range_validation stellar_spray_paths_range = {
	.min = STELLAR_SPRAY_PATHS_MIN, .max = STELLAR_SPRAY_PATHS_MAX,
};

static struct netlink_range_validation stellar_emtt_range = {
	.min = STELLAR_EMTT_CACHE_SIZE_MIN, .max = STELLAR_EMTT_CACHE_SIZE_MAX,
};

static struct netlink_range_validation stellar_db_poll_range = {
	.min = STELLAR_DB_POLL_INTERVAL_MIN,
	.max = STELLAR_DB_POLL_INTERVAL_MAX,
};

static struct netlink_range_validation stellar_cc_max_rate_range = {
	.min = 0, .max = STELLAR_CC_MAX_RATE_MAX,
};

static struct netlink_range_validation stellar_rate_range = {
	.min = 0, .max = STELLAR_TBF_RATE_MAX,
};

static struct netlink_range_validation stellar_max_qp_range = {
	.min = 0, .max = STELLAR_MAX_QP,
};

static struct netlink_range_validation stellar_max_mr_range = {
	.min = 0, .max = STELLAR_MAX_MR,
};

/* Out-of-range settings are refused by the policy, with an extack. */
static const struct nla_policy stellar_genl_policy[STELLAR_ATTR_MAX + 1] = {
	[STELLAR_ATTR_DEV_NAME] = { .type = NLA_NUL_STRING,
				    .len = IB_DEVICE_NAME_MAX - 1 },
	[STELLAR_ATTR_RX_BUF_SIZE] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &stellar_rx_buf_size_range),
	[STELLAR_ATTR_SPRAY_PATHS] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &stellar_spray_paths_range),
	[STELLAR_ATTR_EMTT_CACHE_SIZE] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &stellar_emtt_range),
	[STELLAR_ATTR_DB_POLL_INTERVAL] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &stellar_db_poll_range),
	[STELLAR_ATTR_QPN] = { .type = NLA_U32 },
	[STELLAR_ATTR_PIN_MODE] = NLA_POLICY_MAX(NLA_U32, STELLAR_PIN_MODE_MAX),
	[STELLAR_ATTR_RATE_BYTES] =
		NLA_POLICY_FULL_RANGE(NLA_U64, &stellar_rate_range),
	[STELLAR_ATTR_RATE_PKTS] =
		NLA_POLICY_FULL_RANGE(NLA_U64, &stellar_rate_range),
	[STELLAR_ATTR_MAX_QP] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &stellar_max_qp_range),
	[STELLAR_ATTR_MAX_MR] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &stellar_max_mr_range),
	[STELLAR_ATTR_MAX_PINNED] = { .type = NLA_U64 },
	[STELLAR_ATTR_CC] = NLA_POLICY_MAX(NLA_U32, STELLAR_CC_MODE_MAX),
	[STELLAR_ATTR_CC_MAX_RATE] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &stellar_cc_max_rate_range),
};

static struct genl_family stellar_genl_family;

static int stellar_put_settings(struct sk_buff *skb,
				const struct stellar_settings *set)
{
	if (nla_put_u32(skb, STELLAR_ATTR_RX_BUF_SIZE,
			READ_ONCE(set->rx_buf_size)) ||
	    nla_put_u32(skb, STELLAR_ATTR_SPRAY_PATHS,
			READ_ONCE(set->spray_paths)) ||
	    nla_put_u32(skb, STELLAR_ATTR_EMTT_CACHE_SIZE,
			READ_ONCE(set->emtt_cache_size)) ||
	    nla_put_u32(skb, STELLAR_ATTR_DB_POLL_INTERVAL,
			READ_ONCE(set->db_poll_interval)) ||
	    nla_put_u32(skb, STELLAR_ATTR_PIN_MODE, READ_ONCE(set->pin_mode)) ||
	    nla_put_u32(skb, STELLAR_ATTR_CC, READ_ONCE(set->cc)) ||
	    nla_put_u32(skb, STELLAR_ATTR_CC_MAX_RATE,
			READ_ONCE(set->cc_max_rate)))
		return -EMSGSIZE;
	return 0;
}

static int stellar_put_limits(struct sk_buff *skb,
			      const struct stellar_limit_set *set)
{
	if (nla_put_u64_64bit(skb, STELLAR_ATTR_RATE_BYTES,
			      READ_ONCE(set->rate_bytes), STELLAR_ATTR_PAD) ||
	    nla_put_u64_64bit(skb, STELLAR_ATTR_RATE_PKTS,
			      READ_ONCE(set->rate_pkts), STELLAR_ATTR_PAD) ||
	    nla_put_u32(skb, STELLAR_ATTR_MAX_QP, READ_ONCE(set->max_qp)) ||
	    nla_put_u32(skb, STELLAR_ATTR_MAX_MR, READ_ONCE(set->max_mr)) ||
	    nla_put_u64_64bit(skb, STELLAR_ATTR_MAX_PINNED,
			      READ_ONCE(set->max_pinned), STELLAR_ATTR_PAD))
		return -EMSGSIZE;
	return 0;
}

static int stellar_put_stats(struct sk_buff *skb, struct stellar_dev *sdev)
{
	struct nlattr *nest = nla_nest_start(skb, STELLAR_ATTR_STATS);
	int stat;

	if (!nest)
		return -EMSGSIZE;
	for (stat = STELLAR_STAT_UNSPEC + 1; stat < __STELLAR_STAT_MAX; stat++) {
		if (!stellar_stat_name(stat))
			continue;
		if (nla_put_u64_64bit(skb, stat,
				      stellar_read_counter(sdev, stat),
				      STELLAR_STAT_PAD)) {
			nla_nest_cancel(skb, nest);
			return -EMSGSIZE;
		}
	}
	nla_nest_end(skb, nest);
	return 0;
}

static int stellar_put_dev(struct sk_buff *skb, struct stellar_dev *sdev)
{
	struct net_device *ndev = sdev->ndev;
	int mtu = ib_mtu_enum_to_int(iboe_get_mtu(READ_ONCE(ndev->mtu)));

	if (nla_put_string(skb, STELLAR_ATTR_DEV_NAME,
			   dev_name(&sdev->ibdev.dev)) ||
	    nla_put_u32(skb, STELLAR_ATTR_DEV_INDEX, sdev->ibdev.index) ||
	    nla_put_string(skb, STELLAR_ATTR_NETDEV_NAME, netdev_name(ndev)) ||
	    nla_put_u32(skb, STELLAR_ATTR_NETDEV_IFINDEX, ndev->ifindex) ||
	    nla_put_u8(skb, STELLAR_ATTR_PORT_STATE, stellar_port_state(sdev)) ||
	    nla_put_u32(skb, STELLAR_ATTR_MTU, mtu))
		return -EMSGSIZE;
	if (stellar_put_settings(skb, &sdev->settings) ||
	    stellar_put_limits(skb, &sdev->limits.set) ||
	    stellar_put_mem_stats(skb, sdev))
		return -EMSGSIZE;
	return stellar_put_stats(skb, sdev);
}

static int stellar_fill_dev(struct sk_buff *skb, struct stellar_dev *sdev,
			    u32 portid, u32 seq, int flags)
{
	void *hdr = genlmsg_put(skb, portid, seq, &stellar_genl_family, flags,
				STELLAR_CMD_GET_DEV);

	if (!hdr)
		return -EMSGSIZE;
	if (stellar_put_dev(skb, sdev)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

static struct stellar_dev *stellar_genl_dev(struct genl_info *info)
{
	struct stellar_dev *sdev;

	if (GENL_REQ_ATTR_CHECK(info, STELLAR_ATTR_DEV_NAME))
		return ERR_PTR(-EINVAL);
	sdev = stellar_dev_get_by_name(genl_info_net(info),
				       nla_data(info->attrs[STELLAR_ATTR_DEV_NAME]));
	if (!sdev) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[STELLAR_ATTR_DEV_NAME],
				    "no such stellar device");
		return ERR_PTR(-ENODEV);
	}
	return sdev;
}

static int stellar_cmd_get_dev(struct sk_buff *skb, struct genl_info *info)
{
	struct stellar_dev *sdev = stellar_genl_dev(info);
	struct sk_buff *msg;
	int ret;

	if (IS_ERR(sdev))
		return PTR_ERR(sdev);
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg) {
		ret = -ENOMEM;
		goto out;
	}
	ret = stellar_fill_dev(msg, sdev, info->snd_portid, info->snd_seq, 0);
	if (ret) {
		nlmsg_free(msg);
		goto out;
	}
	ret = genlmsg_reply(msg, info);
out:
	ib_device_put(&sdev->ibdev);
	return ret;
}

/* Every device of the requester's network namespace. */
static int stellar_dump_dev(struct sk_buff *skb, struct netlink_callback *cb)
{
	long skip = cb->args[0], index = 0;
	struct net *net = sock_net(skb->sk);
	struct stellar_dev *sdev;

	rcu_read_lock();
	list_for_each_entry_rcu(sdev, &stellar_dev_list, list) {
		if (!net_eq(dev_net(sdev->ndev), net))
			continue;
		if (index++ < skip)
			continue;
		if (stellar_fill_dev(skb, sdev, NETLINK_CB(cb->skb).portid,
				     cb->nlh->nlmsg_seq, NLM_F_MULTI)) {
			index--;
			break;
		}
	}
	rcu_read_unlock();
	cb->args[0] = index;
	return skb->len;
}

static void stellar_set_u32(struct nlattr *attr, u32 *setting)
{
	if (attr)
		WRITE_ONCE(*setting, nla_get_u32(attr));
}

/* The tenant limits a SET_DEV request changes, if any. */
static void stellar_set_limits(struct stellar_dev *sdev, struct nlattr **tb)
{
	struct stellar_limit_set set = {};
	u32 mask = 0;

	if (tb[STELLAR_ATTR_RATE_BYTES]) {
		set.rate_bytes = nla_get_u64(tb[STELLAR_ATTR_RATE_BYTES]);
		mask |= STELLAR_LIMIT_RATE_BYTES;
	}
	if (tb[STELLAR_ATTR_RATE_PKTS]) {
		set.rate_pkts = nla_get_u64(tb[STELLAR_ATTR_RATE_PKTS]);
		mask |= STELLAR_LIMIT_RATE_PKTS;
	}
	if (tb[STELLAR_ATTR_MAX_QP]) {
		set.max_qp = nla_get_u32(tb[STELLAR_ATTR_MAX_QP]);
		mask |= STELLAR_LIMIT_MAX_QP;
	}
	if (tb[STELLAR_ATTR_MAX_MR]) {
		set.max_mr = nla_get_u32(tb[STELLAR_ATTR_MAX_MR]);
		mask |= STELLAR_LIMIT_MAX_MR;
	}
	if (tb[STELLAR_ATTR_MAX_PINNED]) {
		set.max_pinned = nla_get_u64(tb[STELLAR_ATTR_MAX_PINNED]);
		mask |= STELLAR_LIMIT_MAX_PINNED;
	}
	if (mask)
		stellar_limits_apply(sdev, &set, mask);
}

static int stellar_cmd_set_dev(struct sk_buff *skb, struct genl_info *info)
{
	struct stellar_dev *sdev = stellar_genl_dev(info);
	struct stellar_settings *set;
	struct nlattr **tb = info->attrs;
	int ret;

	if (IS_ERR(sdev))
		return PTR_ERR(sdev);
	set = &sdev->settings;
	stellar_set_u32(tb[STELLAR_ATTR_RX_BUF_SIZE], &set->rx_buf_size);
	stellar_set_u32(tb[STELLAR_ATTR_SPRAY_PATHS], &set->spray_paths);
	stellar_set_u32(tb[STELLAR_ATTR_EMTT_CACHE_SIZE],
			&set->emtt_cache_size);
	stellar_set_u32(tb[STELLAR_ATTR_DB_POLL_INTERVAL],
			&set->db_poll_interval);
	stellar_set_u32(tb[STELLAR_ATTR_PIN_MODE], &set->pin_mode);
	stellar_set_u32(tb[STELLAR_ATTR_CC], &set->cc);
	stellar_set_u32(tb[STELLAR_ATTR_CC_MAX_RATE], &set->cc_max_rate);
	stellar_set_limits(sdev, tb);
	ret = stellar_emtt_resize(sdev);
	if (ret)
		NL_SET_ERR_MSG(info->extack, "no memory for the eMTT table");
	ib_device_put(&sdev->ibdev);
	return ret;
}

static int stellar_cmd_get_params(struct sk_buff *skb, struct genl_info *info)
{
	struct stellar_settings set;
	struct sk_buff *msg;
	void *hdr;

	stellar_default_settings(&set);
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &stellar_genl_family, 0,
				STELLAR_CMD_GET_PARAMS);
	if (!hdr || stellar_put_settings(msg, &set)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

static int stellar_cmd_get_spray(struct sk_buff *skb, struct genl_info *info)
{
	struct stellar_dev *sdev = stellar_genl_dev(info);
	struct sk_buff *msg;
	void *hdr;
	int ret;

	if (IS_ERR(sdev))
		return PTR_ERR(sdev);
	ret = -ENOMEM;
	msg = genlmsg_new(STELLAR_SPRAY_MSG_SIZE, GFP_KERNEL);
	if (!msg)
		goto out;
	hdr = genlmsg_put_reply(msg, info, &stellar_genl_family, 0,
				STELLAR_CMD_GET_SPRAY);
	ret = hdr ? stellar_spray_dev_fill(msg, sdev) : -EMSGSIZE;
	if (ret) {
		nlmsg_free(msg);
		goto out;
	}
	genlmsg_end(msg, hdr);
	ret = genlmsg_reply(msg, info);
out:
	ib_device_put(&sdev->ibdev);
	return ret;
}

static int stellar_cmd_set_qp(struct sk_buff *skb, struct genl_info *info)
{
	struct stellar_dev *sdev = stellar_genl_dev(info);
	int ret;

	if (IS_ERR(sdev))
		return PTR_ERR(sdev);
	ret = stellar_spray_dev_set_qp(sdev, info);
	ib_device_put(&sdev->ibdev);
	return ret;
}

/* The QP a GET_LATENCY request names, if it may be shown; ERR_PTR if not. */
static struct stellar_qp *stellar_lat_qp(struct stellar_dev *sdev,
					 struct genl_info *info)
{
	struct nlattr *attr = info->attrs[STELLAR_ATTR_QPN];
	struct stellar_qp *qp;

	if (!attr)
		return NULL;
	/* Per-QP detail: CAP_NET_ADMIN in the device's namespace only. */
	if (!stellar_may_see_qp_detail(sdev)) {
		NL_SET_ERR_MSG(info->extack,
			       "per-QP latency needs CAP_NET_ADMIN");
		return ERR_PTR(-EPERM);
	}
	qp = stellar_qp_get(sdev, nla_get_u32(attr));
	if (!qp) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr, "no such QP");
		return ERR_PTR(-ENOENT);
	}
	return qp;
}

static int stellar_cmd_get_latency(struct sk_buff *skb, struct genl_info *info)
{
	struct stellar_dev *sdev = stellar_genl_dev(info);
	struct stellar_qp *qp;
	struct sk_buff *msg;
	void *hdr;
	int ret;

	if (IS_ERR(sdev))
		return PTR_ERR(sdev);
	qp = stellar_lat_qp(sdev, info);
	ret = PTR_ERR_OR_ZERO(qp);
	if (ret)
		goto out;
	ret = -ENOMEM;
	msg = genlmsg_new(STELLAR_LAT_MSG_SIZE, GFP_KERNEL);
	if (!msg)
		goto out_qp;
	hdr = genlmsg_put_reply(msg, info, &stellar_genl_family, 0,
				STELLAR_CMD_GET_LATENCY);
	ret = hdr ? stellar_lat_fill(msg, sdev, qp) : -EMSGSIZE;
	if (ret) {
		nlmsg_free(msg);
		goto out_qp;
	}
	genlmsg_end(msg, hdr);
	ret = genlmsg_reply(msg, info);
out_qp:
	if (qp)
		stellar_qp_put(qp);
out:
	ib_device_put(&sdev->ibdev);
	return ret;
}

static int stellar_put_counter(void *arg, const char *name, u64 value)
{
	struct sk_buff *skb = arg;
	struct nlattr *entry = nla_nest_start(skb, STELLAR_COUNTER_ENTRY);

	if (!entry)
		return -EMSGSIZE;
	if (nla_put_string(skb, STELLAR_COUNTER_NAME, name) ||
	    nla_put_u64_64bit(skb, STELLAR_COUNTER_VALUE, value,
			      STELLAR_COUNTER_PAD)) {
		nla_nest_cancel(skb, entry);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, entry);
	return 0;
}

static int stellar_put_qp(struct sk_buff *skb, struct stellar_dev *sdev,
			  struct stellar_qp *qp)
{
	struct nlattr *counters;

	if (nla_put_string(skb, STELLAR_ATTR_DEV_NAME,
			   dev_name(&sdev->ibdev.dev)) ||
	    nla_put_u32(skb, STELLAR_ATTR_QPN, qp->ibqp.qp_num) ||
	    nla_put_u8(skb, STELLAR_ATTR_QP_TYPE, qp->ibqp.qp_type) ||
	    nla_put_u8(skb, STELLAR_ATTR_QP_STATE,
		       READ_ONCE(qp->attr.qp_state)))
		return -EMSGSIZE;
	counters = nla_nest_start(skb, STELLAR_ATTR_QP_COUNTERS);
	if (!counters)
		return -EMSGSIZE;
	if (stellar_xport_walk_stats(qp, stellar_put_counter, skb))
		return -EMSGSIZE;
	nla_nest_end(skb, counters);
	return 0;
}

static int stellar_fill_qp(struct sk_buff *skb, struct netlink_callback *cb,
			   struct stellar_dev *sdev, struct stellar_qp *qp)
{
	void *hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				cb->nlh->nlmsg_seq, &stellar_genl_family,
				NLM_F_MULTI, STELLAR_CMD_GET_QP);

	if (!hdr)
		return -EMSGSIZE;
	if (stellar_put_qp(skb, sdev, qp)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/* The device a GET_QP dump names, with a reference; ERR_PTR if none. */
static struct stellar_dev *stellar_dump_dev_get(struct netlink_callback *cb)
{
	const struct genl_dumpit_info *info = genl_dumpit_info(cb);
	struct nlattr *name = info->attrs[STELLAR_ATTR_DEV_NAME];
	struct stellar_dev *sdev;

	if (!name) {
		NL_SET_ERR_MSG(cb->extack, "a device name is required");
		return ERR_PTR(-EINVAL);
	}
	sdev = stellar_dev_get_by_name(sock_net(cb->skb->sk), nla_data(name));
	if (!sdev) {
		NL_SET_ERR_MSG_ATTR(cb->extack, name, "no such stellar device");
		return ERR_PTR(-ENODEV);
	}
	return sdev;
}

/*
 * Checked when the dump starts, so that a bad device name comes back as
 * an error acknowledgement rather than as an empty dump.
 */
static int stellar_dump_qp_start(struct netlink_callback *cb)
{
	struct stellar_dev *sdev = stellar_dump_dev_get(cb);

	if (IS_ERR(sdev))
		return PTR_ERR(sdev);
	ib_device_put(&sdev->ibdev);
	return 0;
}

/*
 * Dump the QPs of one device with their transport counters; cb->args[0]
 * is the QP number to resume from.  A device removed meanwhile ends the
 * dump.
 */
static int stellar_dump_qp(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct stellar_dev *sdev = stellar_dump_dev_get(cb);
	unsigned long index = cb->args[0];
	struct stellar_qp *qp;
	int ret = 0;

	if (IS_ERR(sdev))
		return 0;
	while (xa_find(&sdev->qps, &index, ULONG_MAX, XA_PRESENT)) {
		qp = stellar_qp_get(sdev, index);
		if (qp) {
			ret = stellar_fill_qp(skb, cb, sdev, qp);
			stellar_qp_put(qp);
			if (ret)
				break;
		}
		index++;
	}
	cb->args[0] = index;
	ib_device_put(&sdev->ibdev);
	/* A QP that does not fit in an empty message is an error. */
	if (ret && !skb->len)
		return ret;
	return skb->len;
}

/*
 * Devices resolve only in the requester's namespace, so the requester's
 * CAP_NET_ADMIN there (GENL_UNS_ADMIN_PERM) is CAP_NET_ADMIN in the
 * device's: needed for per-QP detail (QP numbers and PSNs are what an
 * injected packet must match) and per-QP changes.  Device settings size
 * host memory (eMTT cache, receive buffers) and the tenant limits restrain
 * whoever uses the device, root of its namespace included: they stay with
 * the host's administrator (GENL_ADMIN_PERM: CAP_NET_ADMIN in the initial
 * user namespace).
 */
static const struct genl_small_ops stellar_genl_ops[] = {
	{
		.cmd = STELLAR_CMD_GET_DEV,
		.doit = stellar_cmd_get_dev,
		.dumpit = stellar_dump_dev,
	},
	{
		.cmd = STELLAR_CMD_SET_DEV,
		.doit = stellar_cmd_set_dev,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = STELLAR_CMD_GET_PARAMS,
		.doit = stellar_cmd_get_params,
	},
	{
		.cmd = STELLAR_CMD_GET_SPRAY,
		.doit = stellar_cmd_get_spray,
	},
	{
		.cmd = STELLAR_CMD_SET_QP,
		.doit = stellar_cmd_set_qp,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		/* per-QP figures: checked in stellar_lat_qp() */
		.cmd = STELLAR_CMD_GET_LATENCY,
		.doit = stellar_cmd_get_latency,
	},
};

/* Commands that need more than genl_small_ops offers. */
static const struct genl_ops stellar_genl_full_ops[] = {
	{
		.cmd = STELLAR_CMD_GET_QP,
		.start = stellar_dump_qp_start,
		.dumpit = stellar_dump_qp,
		.flags = GENL_UNS_ADMIN_PERM,
	},
};

static struct genl_family stellar_genl_family __ro_after_init = {
	.name = STELLAR_GENL_NAME,
	.version = STELLAR_GENL_VERSION,
	.maxattr = STELLAR_ATTR_MAX,
	.policy = stellar_genl_policy,
	.netnsok = true,
	.module = THIS_MODULE,
	.ops = stellar_genl_full_ops,
	.n_ops = ARRAY_SIZE(stellar_genl_full_ops),
	.small_ops = stellar_genl_ops,
	.n_small_ops = ARRAY_SIZE(stellar_genl_ops),
	.resv_start_op = __STELLAR_CMD_MAX,
};

int stellar_genl_init(void)
{
	return genl_register_family(&stellar_genl_family);
}

void stellar_genl_exit(void)
{
	genl_unregister_family(&stellar_genl_family);
}
