// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stellar-tool: decoding of STELLAR_ATTR_* replies and the names used to
 * show them.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <errno.h>
#include <string.h>

#include <netlink/attr.h>
#include <netlink/genl/genl.h>

#include "info.h"
#include "mem.h"

_Static_assert(STELLAR_ATTR_MAX < 64, "present bitmap is a u64");

const struct stellar_setting_desc stellar_setting_descs[STELLAR_SETTING_COUNT] = {
	[STELLAR_SETTING_RX_BUF_SIZE] = {
		.attr = STELLAR_ATTR_RX_BUF_SIZE,
		.name = "rx_buf_size",
		.option = "rx-buf-size",
		.metavar = "BYTES",
		.meaning = "out-of-order receive memory per QP, in bytes",
	},
	[STELLAR_SETTING_SPRAY_PATHS] = {
		.attr = STELLAR_ATTR_SPRAY_PATHS,
		.name = "spray_paths",
		.option = "spray-paths",
		.metavar = "N",
		.meaning = "UDP source-port paths each QP spreads packets over",
	},
	[STELLAR_SETTING_EMTT_CACHE_SIZE] = {
		.attr = STELLAR_ATTR_EMTT_CACHE_SIZE,
		.name = "emtt_cache_size",
		.option = "emtt-cache-size",
		.metavar = "N",
		.meaning = "eMTT cache entries, in thousands (0: off)",
	},
	[STELLAR_SETTING_DB_POLL_INTERVAL] = {
		.attr = STELLAR_ATTR_DB_POLL_INTERVAL,
		.name = "db_poll_interval",
		.option = "db-poll-interval",
		.metavar = "USEC",
		.meaning = "doorbell poll period, in microseconds (0: off)",
	},
	[STELLAR_SETTING_PIN_MODE] = {
		.attr = STELLAR_ATTR_PIN_MODE,
		.name = "pin_mode",
		.option = "pin-mode",
		.metavar = "0|1",
		.meaning = "new user MRs pin on first access (0) or at registration (1)",
	},
	[STELLAR_SETTING_CC] = {
		.attr = STELLAR_ATTR_CC,
		.name = "cc",
		.option = "cc",
		.metavar = "0|1",
		.meaning = "congestion control of QPs entering RTS: off (0) or DCQCN (1)",
	},
	[STELLAR_SETTING_CC_MAX_RATE] = {
		.attr = STELLAR_ATTR_CC_MAX_RATE,
		.name = "cc_max_rate",
		.option = "cc-max-rate",
		.metavar = "MBPS",
		.meaning = "line rate DCQCN starts QPs at, in Mb/s (0: 10000)",
	},
	[STELLAR_SETTING_RATE_BYTES] = {
		.attr = STELLAR_ATTR_RATE_BYTES,
		.wide = true,
		.name = "rate_bytes",
		.option = "rate-bytes",
		.metavar = "BYTES",
		.meaning = "transmit limit, bytes per second (0: no limit)",
	},
	[STELLAR_SETTING_RATE_PKTS] = {
		.attr = STELLAR_ATTR_RATE_PKTS,
		.wide = true,
		.name = "rate_pkts",
		.option = "rate-pkts",
		.metavar = "N",
		.meaning = "transmit limit, packets per second (0: no limit)",
	},
	[STELLAR_SETTING_MAX_QP] = {
		.attr = STELLAR_ATTR_MAX_QP,
		.name = "max_qp",
		.option = "max-qp",
		.metavar = "N",
		.meaning = "QPs the device allows (0: the module's limit)",
	},
	[STELLAR_SETTING_MAX_MR] = {
		.attr = STELLAR_ATTR_MAX_MR,
		.name = "max_mr",
		.option = "max-mr",
		.metavar = "N",
		.meaning = "MRs the device allows (0: the module's limit)",
	},
	[STELLAR_SETTING_MAX_PINNED] = {
		.attr = STELLAR_ATTR_MAX_PINNED,
		.wide = true,
		.name = "max_pinned",
		.option = "max-pinned",
		.metavar = "BYTES",
		.meaning = "user memory the device may pin (0: no limit)",
	},
};

/* Same names as /proc/stellar/<dev>/stats. */
static const char *const stat_names[__STELLAR_STAT_MAX] =
	STELLAR_STAT_NAMES_INIT;

/* enum ib_port_state */
static const char *const port_state_names[] = {
	[0] = "NOP",
	[1] = "DOWN",
	[2] = "INIT",
	[3] = "ARMED",
	[4] = "ACTIVE",
	[5] = "ACTIVE_DEFER",
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Return: the setting carried by STELLAR_ATTR_* @attr, or NULL. */
const struct stellar_setting_desc *stellar_setting_by_attr(int attr)
{
	int i;

	for (i = 0; i < STELLAR_SETTING_COUNT; i++)
		if (stellar_setting_descs[i].attr == attr)
			return &stellar_setting_descs[i];
	return NULL;
}

/* Return: the counter's name, or NULL when this tool does not know it. */
const char *stellar_stat_name(unsigned int stat)
{
	return stat < ARRAY_SIZE(stat_names) ? stat_names[stat] : NULL;
}

/* Return: the IB port state's name, or NULL for values outside the enum. */
const char *stellar_port_state_name(unsigned int state)
{
	return state < ARRAY_SIZE(port_state_names) ?
	       port_state_names[state] : NULL;
}

static struct nla_policy attr_policy[STELLAR_ATTR_MAX + 1] = {
	[STELLAR_ATTR_DEV_NAME] = { .type = NLA_STRING,
				    .maxlen = STELLAR_NAME_LEN },
	[STELLAR_ATTR_DEV_INDEX] = { .type = NLA_U32 },
	[STELLAR_ATTR_NETDEV_NAME] = { .type = NLA_STRING,
				       .maxlen = STELLAR_NAME_LEN },
	[STELLAR_ATTR_NETDEV_IFINDEX] = { .type = NLA_U32 },
	[STELLAR_ATTR_PORT_STATE] = { .type = NLA_U8 },
	[STELLAR_ATTR_MTU] = { .type = NLA_U32 },
	[STELLAR_ATTR_STATS] = { .type = NLA_NESTED },
	[STELLAR_ATTR_RX_BUF_SIZE] = { .type = NLA_U32 },
	[STELLAR_ATTR_SPRAY_PATHS] = { .type = NLA_U32 },
	[STELLAR_ATTR_EMTT_CACHE_SIZE] = { .type = NLA_U32 },
	[STELLAR_ATTR_DB_POLL_INTERVAL] = { .type = NLA_U32 },
	[STELLAR_ATTR_PIN_MODE] = { .type = NLA_U32 },
	[STELLAR_ATTR_PVDMA_STATS] = { .type = NLA_NESTED },
	[STELLAR_ATTR_EMTT_STATS] = { .type = NLA_NESTED },
	[STELLAR_ATTR_RATE_BYTES] = { .type = NLA_U64 },
	[STELLAR_ATTR_RATE_PKTS] = { .type = NLA_U64 },
	[STELLAR_ATTR_MAX_QP] = { .type = NLA_U32 },
	[STELLAR_ATTR_MAX_MR] = { .type = NLA_U32 },
	[STELLAR_ATTR_MAX_PINNED] = { .type = NLA_U64 },
	[STELLAR_ATTR_CC] = { .type = NLA_U32 },
	[STELLAR_ATTR_CC_MAX_RATE] = { .type = NLA_U32 },
};

/**
 * stellar_parse_attrs() - split a "stellar" reply into its attributes
 * @msg: the reply
 * @tb: STELLAR_ATTR_MAX + 1 slots, filled with the attributes found
 *
 * Attributes newer than this tool are ignored.
 *
 * Return: 0, or -EINVAL when the reply is malformed.
 */
int stellar_parse_attrs(struct nl_msg *msg, struct nlattr **tb)
{
	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, STELLAR_ATTR_MAX,
			  attr_policy) < 0)
		return -EINVAL;
	return 0;
}

/* Return: 0 (absent settings are left unmarked). */
int stellar_decode_settings(struct nlattr **tb,
			    struct stellar_settings *settings)
{
	int i;

	for (i = 0; i < STELLAR_SETTING_COUNT; i++) {
		const struct stellar_setting_desc *desc =
			&stellar_setting_descs[i];
		struct nlattr *attr = tb[desc->attr];

		settings->present[i] = attr != NULL;
		if (!attr)
			settings->value[i] = 0;
		else if (desc->wide)
			settings->value[i] = nla_get_u64(attr);
		else
			settings->value[i] = nla_get_u32(attr);
	}
	return 0;
}

/**
 * stellar_decode_counters() - read the STELLAR_ATTR_STATS nest
 * @nest: the nest
 * @counters: filled in the order the kernel sent them
 *
 * Padding is skipped; counters past STELLAR_MAX_COUNTERS are dropped.
 *
 * Return: 0, or -EINVAL when a counter is not a u64.
 */
int stellar_decode_counters(struct nlattr *nest,
			    struct stellar_counters *counters)
{
	struct nlattr *attr;
	int rem;

	counters->count = 0;
	nla_for_each_nested(attr, nest, rem) {
		struct stellar_counter *entry;

		if (nla_type(attr) == STELLAR_STAT_PAD ||
		    nla_type(attr) == STELLAR_STAT_UNSPEC)
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

static void copy_name(char *dst, struct nlattr *attr)
{
	nla_strlcpy(dst, attr, STELLAR_NAME_LEN);
}

/**
 * stellar_decode_dev() - decode a STELLAR_CMD_GET_DEV reply
 * @tb: its attributes, from stellar_parse_attrs()
 * @info: zeroed and filled; present marks the scalars found
 *
 * Return: 0, or -EINVAL when the device name is missing or the counters
 * are malformed.
 */
int stellar_decode_dev(struct nlattr **tb, struct stellar_dev_info *info)
{
	int attr;

	memset(info, 0, sizeof(*info));
	if (!tb[STELLAR_ATTR_DEV_NAME])
		return -EINVAL;
	for (attr = STELLAR_ATTR_UNSPEC + 1; attr <= STELLAR_ATTR_MAX; attr++)
		if (tb[attr])
			info->present |= 1ull << attr;
	copy_name(info->dev_name, tb[STELLAR_ATTR_DEV_NAME]);
	if (tb[STELLAR_ATTR_NETDEV_NAME])
		copy_name(info->netdev_name, tb[STELLAR_ATTR_NETDEV_NAME]);
	if (tb[STELLAR_ATTR_DEV_INDEX])
		info->dev_index = nla_get_u32(tb[STELLAR_ATTR_DEV_INDEX]);
	if (tb[STELLAR_ATTR_NETDEV_IFINDEX])
		info->netdev_ifindex =
			nla_get_u32(tb[STELLAR_ATTR_NETDEV_IFINDEX]);
	if (tb[STELLAR_ATTR_PORT_STATE])
		info->port_state = nla_get_u8(tb[STELLAR_ATTR_PORT_STATE]);
	if (tb[STELLAR_ATTR_MTU])
		info->mtu = nla_get_u32(tb[STELLAR_ATTR_MTU]);
	stellar_decode_settings(tb, &info->settings);
	if (tb[STELLAR_ATTR_PIN_MODE])
		info->pin_mode = nla_get_u32(tb[STELLAR_ATTR_PIN_MODE]);
	if (tb[STELLAR_ATTR_PVDMA_STATS] &&
	    stellar_decode_mem_counters(tb[STELLAR_ATTR_PVDMA_STATS],
					&info->pvdma))
		return -EINVAL;
	if (tb[STELLAR_ATTR_EMTT_STATS] &&
	    stellar_decode_mem_counters(tb[STELLAR_ATTR_EMTT_STATS],
					&info->emtt))
		return -EINVAL;
	if (tb[STELLAR_ATTR_STATS])
		return stellar_decode_counters(tb[STELLAR_ATTR_STATS],
					       &info->counters);
	return 0;
}
