// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: module entry, parameters and the "stellar" rdma link type.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <rdma/rdma_netlink.h>

#include "stellar.h"
#include "stellar_cc.h"
#include "stellar_transport.h"

/**
 * struct stellar_param - one bounded u32 tunable
 * @name: the parameter's name, for messages
 * @min: smallest accepted value
 * @max: largest accepted value
 * @value: current value; the default for devices created from now on
 */
struct stellar_param {
	const char *name;
	u32 min;
	u32 max;
	u32 value;
};

static struct stellar_param param_rx_buf_size = {
	.name = "rx_buf_size",
	.min = STELLAR_RX_BUF_SIZE_MIN,
	.max = STELLAR_RX_BUF_SIZE_MAX,
	.value = 1 << 20,
};

static struct stellar_param param_spray_paths = {
	.name = "spray_paths",
	.min = STELLAR_SPRAY_PATHS_MIN,
	.max = STELLAR_SPRAY_PATHS_MAX,
	.value = 1,
};

static struct stellar_param param_emtt_cache_size = {
	.name = "emtt_cache_size",
	.min = STELLAR_EMTT_CACHE_SIZE_MIN,
	.max = STELLAR_EMTT_CACHE_SIZE_MAX,
	.value = 64,
};

static struct stellar_param param_db_poll_interval = {
	.name = "db_poll_interval",
	.min = STELLAR_DB_POLL_INTERVAL_MIN,
	.max = STELLAR_DB_POLL_INTERVAL_MAX,
	.value = 0,
};

static struct stellar_param param_rx_queue_bytes = {
	.name = "rx_queue_bytes",
	.min = STELLAR_RX_QUEUE_BYTES_MIN,
	.max = STELLAR_RX_QUEUE_BYTES_MAX,
	.value = 64 << 20,
};

static bool stellar_param_ok(const struct stellar_param *param, u32 val)
{
	return val >= param->min && val <= param->max;
}

static int stellar_param_set(const char *val, const struct kernel_param *kp)
{
	struct stellar_param *param = kp->arg;
	u32 parsed;
	int ret;

	ret = kstrtou32(val, 0, &parsed);
	if (ret) {
		pr_err("%s: '%s' is not an unsigned number\n", param->name,
		       val);
		return ret;
	}
	if (!stellar_param_ok(param, parsed)) {
		pr_err("%s=%u is out of range [%u, %u]\n", param->name,
		       parsed, param->min, param->max);
		return -EINVAL;
	}
	WRITE_ONCE(param->value, parsed);
	return 0;
}

static int stellar_param_get(char *buf, const struct kernel_param *kp)
{
	const struct stellar_param *param = kp->arg;

	return sysfs_emit(buf, "%u\n", READ_ONCE(param->value));
}

static const struct kernel_param_ops stellar_param_ops = {
	.set = stellar_param_set,
	.get = stellar_param_get,
};

module_param_cb(rx_buf_size, &stellar_param_ops, &param_rx_buf_size, 0644);
MODULE_PARM_DESC(rx_buf_size,
		 "Bytes of out-of-order receive state per QP (4096..67108864, default 1048576)");
module_param_cb(spray_paths, &stellar_param_ops, &param_spray_paths, 0644);
MODULE_PARM_DESC(spray_paths,
		 "UDP source-port paths per QP (1..256, default 1 = single path)");
module_param_cb(emtt_cache_size, &stellar_param_ops, &param_emtt_cache_size,
		0644);
MODULE_PARM_DESC(emtt_cache_size,
		 "eMTT translation cache entries in thousands (0..1024, 0 = off, default 64)");
module_param_cb(db_poll_interval, &stellar_param_ops,
		&param_db_poll_interval, 0644);
MODULE_PARM_DESC(db_poll_interval,
		 "Doorbell poller period in microseconds (0..1000000, 0 = syscall doorbell, default 0)");
module_param_cb(rx_queue_bytes, &stellar_param_ops, &param_rx_queue_bytes,
		0644);
MODULE_PARM_DESC(rx_queue_bytes,
		 "Bytes (skb truesize) of received packets a device holds queued for its QPs (4096..1073741824, default 67108864)");

static struct stellar_param param_cc = {
	.name = "cc",
	.min = STELLAR_CC_OFF,
	.max = STELLAR_CC_MODE_MAX,
	.value = STELLAR_CC_DEFAULT,
};

static struct stellar_param param_cc_max_rate = {
	.name = "cc_max_rate",
	.min = 0,
	.max = STELLAR_CC_MAX_RATE_MAX,
	.value = 0,
};

module_param_cb(cc, &stellar_param_ops, &param_cc, 0644);
MODULE_PARM_DESC(cc,
		 "Congestion control of new devices' QPs: 0 = off (window only), 1 = DCQCN (default)");
module_param_cb(cc_max_rate, &stellar_param_ops, &param_cc_max_rate, 0644);
MODULE_PARM_DESC(cc_max_rate,
		 "Line rate in Mb/s that DCQCN starts QPs at and never exceeds (0..1600000, 0 = 10000)");

/* DCQCN parameters, read when a QP enters RTS (stellar_cnp.c). */
#define STELLAR_CC_PARAM(var, pname, lo, hi, def, desc)			\
	static struct stellar_param var = {				\
		.name = #pname, .min = lo, .max = hi, .value = def,	\
	};								\
	module_param_cb(pname, &stellar_param_ops, &var, 0644);	\
	MODULE_PARM_DESC(pname, desc)

STELLAR_CC_PARAM(param_cnp_interval, cnp_interval, 0, 1000000, 50,
		 "Least time between two CNPs a QP sends, us (default 50)");
STELLAR_CC_PARAM(param_cc_min_rate, cc_min_rate, 1, 1000000, 1000,
		 "Least rate DCQCN cuts a QP to, kb/s (default 1000)");
STELLAR_CC_PARAM(param_cc_ai_rate, cc_ai_rate, 1, 1000000, 5000,
		 "DCQCN additive increase of the target rate, kb/s (default 5000)");
STELLAR_CC_PARAM(param_cc_hai_rate, cc_hai_rate, 1, 10000000, 50000,
		 "DCQCN hyper increase of the target rate, kb/s (default 50000)");
STELLAR_CC_PARAM(param_cc_rate_period, cc_rate_period, 1, 10000000, 300,
		 "DCQCN rate increase timer, us; at least the QP's smoothed RTT (default 300)");
STELLAR_CC_PARAM(param_cc_alpha_period, cc_alpha_period, 1, 10000000, 55,
		 "DCQCN alpha decay timer, us; at least the QP's smoothed RTT (default 55)");
STELLAR_CC_PARAM(param_cc_byte_stage, cc_byte_stage, 0, 1U << 30, 1U << 20,
		 "Bytes sent per DCQCN byte-counter stage (0 = off, default 1048576)");
STELLAR_CC_PARAM(param_cc_g_shift, cc_g_shift, 1, 10, 4,
		 "DCQCN alpha gain g = 1/2^cc_g_shift (1..10, default 4)");
STELLAR_CC_PARAM(param_cc_fast_stages, cc_fast_stages, 1, 255, 5,
		 "DCQCN fast recovery stages before additive increase (default 5)");

/**
 * stellar_default_cc_params() - the module's DCQCN parameters
 * @p: filled in, except the line rate (a per-device setting)
 *
 * Return: the least time between two CNPs of a QP, in microseconds.
 */
u32 stellar_default_cc_params(struct stellar_cc_params *p)
{
	p->min_rate_kbps = READ_ONCE(param_cc_min_rate.value);
	p->ai_rate_kbps = READ_ONCE(param_cc_ai_rate.value);
	p->hai_rate_kbps = READ_ONCE(param_cc_hai_rate.value);
	p->rate_period_us = READ_ONCE(param_cc_rate_period.value);
	p->alpha_period_us = READ_ONCE(param_cc_alpha_period.value);
	p->byte_stage = READ_ONCE(param_cc_byte_stage.value);
	p->g_shift = READ_ONCE(param_cc_g_shift.value);
	p->fast_stages = READ_ONCE(param_cc_fast_stages.value);
	return READ_ONCE(param_cnp_interval.value);
}

static u32 param_pin_mode = STELLAR_PIN_MODE_DEFAULT;

static int stellar_pin_mode_set(const char *val, const struct kernel_param *kp)
{
	if (sysfs_streq(val, "lazy")) {
		WRITE_ONCE(param_pin_mode, STELLAR_PIN_LAZY);
	} else if (sysfs_streq(val, "eager")) {
		WRITE_ONCE(param_pin_mode, STELLAR_PIN_EAGER);
	} else {
		pr_err("pin_mode: '%s' is neither 'lazy' nor 'eager'\n", val);
		return -EINVAL;
	}
	return 0;
}

static int stellar_pin_mode_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n",
			  stellar_pin_mode_name(READ_ONCE(param_pin_mode)));
}

static const struct kernel_param_ops stellar_pin_mode_ops = {
	.set = stellar_pin_mode_set,
	.get = stellar_pin_mode_get,
};

module_param_cb(pin_mode, &stellar_pin_mode_ops, NULL, 0644);
MODULE_PARM_DESC(pin_mode,
		 "When user memory registrations pin pages: lazy (on first access, default) or eager (at registration)");

/**
 * stellar_default_settings() - settings for a device created now
 * @settings: filled from the current module parameters
 */
void stellar_default_settings(struct stellar_settings *settings)
{
	settings->rx_buf_size = READ_ONCE(param_rx_buf_size.value);
	settings->spray_paths = READ_ONCE(param_spray_paths.value);
	settings->emtt_cache_size = READ_ONCE(param_emtt_cache_size.value);
	settings->db_poll_interval = READ_ONCE(param_db_poll_interval.value);
	settings->pin_mode = READ_ONCE(param_pin_mode);
	settings->cc = READ_ONCE(param_cc.value);
	settings->cc_max_rate = READ_ONCE(param_cc_max_rate.value);
}

/**
 * stellar_rx_queue_bytes() - the receive backlog cap of every device
 *
 * Return: bytes (skb truesize) a device may hold queued for the receive
 * work of its QPs; packets beyond are dropped.  Applies at once.
 */
u32 stellar_rx_queue_bytes(void)
{
	return READ_ONCE(param_rx_queue_bytes.value);
}

static struct rdma_link_ops stellar_link_ops = {
	.type = "stellar",
	.newlink = stellar_newlink,
};

static int __init stellar_init(void)
{
	int ret;

	stellar_hw_stats_init();
	ret = stellar_xport_init();
	if (ret)
		return ret;
	ret = stellar_proc_init();
	if (ret)
		goto err_xport;
	ret = stellar_net_init();
	if (ret)
		goto err_proc;
	ret = stellar_device_init();
	if (ret)
		goto err_net;
	ret = stellar_genl_init();
	if (ret)
		goto err_device;
	rdma_link_register(&stellar_link_ops);
	pr_info("loaded; create devices with 'rdma link add stellarN type stellar netdev IFNAME'\n");
	return 0;

err_device:
	stellar_device_exit();
err_net:
	stellar_net_exit();
err_proc:
	stellar_proc_exit();
err_xport:
	stellar_xport_exit();
	return ret;
}

static void __exit stellar_exit(void)
{
	rdma_link_unregister(&stellar_link_ops);
	stellar_genl_exit();
	stellar_remove_all();
	stellar_device_exit();
	stellar_net_exit();
	stellar_proc_exit();
	stellar_xport_exit();
	pr_info("unloaded\n");
}

module_init(stellar_init);
module_exit(stellar_exit);

MODULE_AUTHOR("The virtio-stellar authors");
MODULE_DESCRIPTION("virtio-stellar software RoCEv2 RDMA device");
MODULE_LICENSE("GPL");
MODULE_ALIAS_RDMA_LINK("stellar");
