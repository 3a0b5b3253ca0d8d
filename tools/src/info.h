/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stellar-tool: what the kernel tells us about devices and parameters,
 * decoded from STELLAR_ATTR_* attributes into plain structures.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_TOOL_INFO_H
#define STELLAR_TOOL_INFO_H

#include <stdbool.h>
#include <stdint.h>

#include <stellar-netlink.h>

struct nlattr;
struct nl_msg;

/* Buffer size for ib_device and netdev names (IB_DEVICE_NAME_MAX). */
#define STELLAR_NAME_LEN 64

/*
 * The tunables a device has; those up to CC_MAX_RATE are also the module
 * defaults, the rest are the device's tenant limits (0: none).
 */
enum stellar_setting {
	STELLAR_SETTING_RX_BUF_SIZE,
	STELLAR_SETTING_SPRAY_PATHS,
	STELLAR_SETTING_EMTT_CACHE_SIZE,
	STELLAR_SETTING_DB_POLL_INTERVAL,
	STELLAR_SETTING_PIN_MODE,
	STELLAR_SETTING_CC,
	STELLAR_SETTING_CC_MAX_RATE,
	STELLAR_SETTING_RATE_BYTES,
	STELLAR_SETTING_RATE_PKTS,
	STELLAR_SETTING_MAX_QP,
	STELLAR_SETTING_MAX_MR,
	STELLAR_SETTING_MAX_PINNED,
	STELLAR_SETTING_COUNT,
};

struct stellar_setting_desc {
	int attr;		/* STELLAR_ATTR_* that carries the value */
	bool wide;		/* a u64 attribute; the value may take K/M/G/T */
	const char *name;	/* output key, as the module parameter */
	const char *option;	/* long option of "set" */
	const char *metavar;	/* placeholder for the value in usage */
	const char *meaning;	/* one line for --help */
};

extern const struct stellar_setting_desc
	stellar_setting_descs[STELLAR_SETTING_COUNT];

struct stellar_settings {
	uint64_t value[STELLAR_SETTING_COUNT];
	bool present[STELLAR_SETTING_COUNT];
};

/* Counters beyond this many in one reply are not kept. */
#define STELLAR_MAX_COUNTERS 64

struct stellar_counter {
	uint16_t type;		/* STELLAR_STAT_*, possibly newer than ours */
	uint64_t value;
};

struct stellar_counters {
	unsigned int count;
	struct stellar_counter entry[STELLAR_MAX_COUNTERS];
};

struct stellar_dev_info {
	char dev_name[STELLAR_NAME_LEN];
	char netdev_name[STELLAR_NAME_LEN];
	uint32_t dev_index;
	uint32_t netdev_ifindex;
	uint32_t mtu;
	uint8_t port_state;
	uint64_t present;	/* 1ull << STELLAR_ATTR_* for scalars seen */
	struct stellar_settings settings;
	struct stellar_counters counters;
	uint32_t pin_mode;		/* STELLAR_ATTR_PIN_MODE */
	struct stellar_counters pvdma;	/* STELLAR_ATTR_PVDMA_STATS */
	struct stellar_counters emtt;	/* STELLAR_ATTR_EMTT_STATS */
};

static inline bool stellar_has(const struct stellar_dev_info *info, int attr)
{
	return info->present & (1ull << attr);
}

const struct stellar_setting_desc *stellar_setting_by_attr(int attr);
const char *stellar_stat_name(unsigned int stat);
const char *stellar_port_state_name(unsigned int state);

int stellar_parse_attrs(struct nl_msg *msg, struct nlattr **tb);
int stellar_decode_settings(struct nlattr **tb,
			    struct stellar_settings *settings);
int stellar_decode_counters(struct nlattr *nest,
			    struct stellar_counters *counters);
int stellar_decode_dev(struct nlattr **tb, struct stellar_dev_info *info);

#endif /* STELLAR_TOOL_INFO_H */
