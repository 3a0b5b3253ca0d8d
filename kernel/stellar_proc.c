// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: human-readable statistics under /proc/stellar/.
 *
 *   /proc/stellar/devices          one line per device
 *   /proc/stellar/<dev>/stats      the device's counters, "name: value"
 *   /proc/stellar/<dev>/settings   the device's tunables
 *   /proc/stellar/<dev>/limits     tenant limits: use against limit
 *   /proc/stellar/<dev>/qps        every QP with its transport counters
 *                                  (CAP_NET_ADMIN in the device's netns)
 *   /proc/stellar/spray_stats      packet spray, all devices (stellar_spray_dev.c);
 *                                  its per-QP lines as for qps
 *   /proc/stellar/pvdma_stats      PVDMA, a section per device
 *   /proc/stellar/emtt_stats       eMTT, a section per device
 *
 * /proc is not per network namespace: a process sees the devices of its
 * own network namespace here, and the host's administrator every device
 * (stellar_proc_may_see_dev()), so that one tenant does not read
 * another's counters.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/nsproxy.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>

#include "stellar.h"
#include "stellar_transport.h"

static struct proc_dir_entry *stellar_proc_root;

static const char * const stellar_stat_names[__STELLAR_STAT_MAX] =
	STELLAR_STAT_NAMES_INIT;

/**
 * stellar_stat_name() - the user-visible name of a counter
 * @stat: counter
 *
 * Return: the name, or NULL for numbers that are not counters.
 */
const char *stellar_stat_name(enum stellar_genl_stat stat)
{
	if (stat <= STELLAR_STAT_UNSPEC || stat >= __STELLAR_STAT_MAX)
		return NULL;
	return stellar_stat_names[stat];
}

static const char *stellar_port_state_name(enum ib_port_state state)
{
	return state == IB_PORT_ACTIVE ? "ACTIVE" : "DOWN";
}

/**
 * stellar_proc_may_see_dev() - may the reader of @file see a device here?
 * @file: an open /proc/stellar file, read by the current task
 * @sdev: the device
 *
 * A device of the reader's own network namespace, or any device for
 * CAP_NET_ADMIN in the initial user namespace (the host's administrator,
 * judged by the credentials the file was opened with).  A tenant - a
 * process in a container's namespace - sees its own devices only.
 *
 * Return: true if the device's lines may be shown.
 */
bool stellar_proc_may_see_dev(const struct file *file,
			      struct stellar_dev *sdev)
{
	return net_eq(dev_net(sdev->ndev), current->nsproxy->net_ns) ||
	       file_ns_capable(file, &init_user_ns, CAP_NET_ADMIN);
}

static int stellar_devices_show(struct seq_file *m, void *v)
{
	struct stellar_dev *sdev;

	seq_puts(m, "device           netdev           port    mtu   spray_paths\n");
	rcu_read_lock();
	list_for_each_entry_rcu(sdev, &stellar_dev_list, list) {
		if (!stellar_proc_may_see_dev(m->file, sdev))
			continue;
		seq_printf(m, "%-16s %-16s %-7s %-5d %u\n",
			   dev_name(&sdev->ibdev.dev),
			   netdev_name(sdev->ndev),
			   stellar_port_state_name(stellar_port_state(sdev)),
			   ib_mtu_enum_to_int(iboe_get_mtu(READ_ONCE(sdev->ndev->mtu))),
			   READ_ONCE(sdev->settings.spray_paths));
	}
	rcu_read_unlock();
	return 0;
}

static int stellar_stats_show(struct seq_file *m, void *v)
{
	struct stellar_dev *sdev = m->private;
	int stat;

	for (stat = STELLAR_STAT_UNSPEC + 1; stat < __STELLAR_STAT_MAX; stat++)
		if (stellar_stat_name(stat))
			seq_printf(m, "%s: %llu\n", stellar_stat_name(stat),
				   stellar_read_counter(sdev, stat));
	return 0;
}

static int stellar_settings_show(struct seq_file *m, void *v)
{
	struct stellar_dev *sdev = m->private;
	struct stellar_settings *set = &sdev->settings;

	seq_printf(m, "rx_buf_size: %u\n", READ_ONCE(set->rx_buf_size));
	seq_printf(m, "spray_paths: %u\n", READ_ONCE(set->spray_paths));
	seq_printf(m, "emtt_cache_size: %u\n", READ_ONCE(set->emtt_cache_size));
	seq_printf(m, "db_poll_interval: %u\n",
		   READ_ONCE(set->db_poll_interval));
	seq_printf(m, "pin_mode: %s\n",
		   stellar_pin_mode_name(READ_ONCE(set->pin_mode)));
	seq_printf(m, "cc: %s\n",
		   READ_ONCE(set->cc) == STELLAR_CC_DCQCN ? "dcqcn" : "off");
	seq_printf(m, "cc_max_rate: %u\n", READ_ONCE(set->cc_max_rate));
	return 0;
}

/* "name: used / limit", a limit of 0 being none. */
static void stellar_limit_show(struct seq_file *m, const char *name, u64 used,
			       u64 limit)
{
	if (limit)
		seq_printf(m, "%s: %llu / %llu\n", name, used, limit);
	else
		seq_printf(m, "%s: %llu / unlimited\n", name, used);
}

static int stellar_limits_show(struct seq_file *m, void *v)
{
	struct stellar_dev *sdev = m->private;
	struct stellar_limit_set *set = &sdev->limits.set;

	stellar_limit_show(m, "qps", stellar_read_counter(sdev, STELLAR_STAT_QPS),
			   stellar_limit_max_qp(sdev));
	stellar_limit_show(m, "mrs", stellar_read_counter(sdev, STELLAR_STAT_MRS),
			   stellar_limit_max_mr(sdev));
	stellar_limit_show(m, "pinned_bytes",
			   stellar_read_counter(sdev, STELLAR_STAT_LIMIT_PINNED),
			   READ_ONCE(set->max_pinned));
	seq_printf(m, "rate_bytes: %llu\n", READ_ONCE(set->rate_bytes));
	seq_printf(m, "rate_pkts: %llu\n", READ_ONCE(set->rate_pkts));
	seq_printf(m, "tx_throttled: %llu\n",
		   stellar_read_counter(sdev, STELLAR_STAT_TX_THROTTLED));
	seq_printf(m, "limit_refused: %llu\n",
		   stellar_read_counter(sdev, STELLAR_STAT_LIMIT_REFUSED));
	return 0;
}

static const char *stellar_qp_type_name(enum ib_qp_type type)
{
	switch (type) {
	case IB_QPT_RC:
		return "RC";
	case IB_QPT_UC:
		return "UC";
	case IB_QPT_UD:
		return "UD";
	case IB_QPT_GSI:
		return "GSI";
	case IB_QPT_XRC_INI:
		return "XRC_INI";
	case IB_QPT_XRC_TGT:
		return "XRC_TGT";
	default:
		return "?";
	}
}

/**
 * stellar_qp_state_name() - a QP state as the verbs name it ("RTS")
 * @state: the state
 *
 * Return: the name, "?" for a value out of range.
 */
const char *stellar_qp_state_name(enum ib_qp_state state)
{
	static const char * const names[] = {
		[IB_QPS_RESET] = "RESET", [IB_QPS_INIT] = "INIT",
		[IB_QPS_RTR] = "RTR", [IB_QPS_RTS] = "RTS",
		[IB_QPS_SQD] = "SQD", [IB_QPS_SQE] = "SQE",
		[IB_QPS_ERR] = "ERR",
	};

	return state < ARRAY_SIZE(names) && names[state] ? names[state] : "?";
}

/* One block per QP: identity, then the transport's counters. */
static int stellar_qps_show(struct seq_file *m, void *v)
{
	struct stellar_dev *sdev = m->private;
	struct stellar_qp *qp;
	unsigned long index;

	xa_for_each(&sdev->qps, index, qp) {
		qp = stellar_qp_get(sdev, index);
		if (!qp)
			continue;
		seq_printf(m, "qp %u: type %s state %s dest_qp %u user %d\n",
			   qp->ibqp.qp_num, stellar_qp_type_name(qp->ibqp.qp_type),
			   stellar_qp_state_name(READ_ONCE(qp->attr.qp_state)),
			   qp->attr.dest_qp_num, qp->is_user);
		stellar_xport_show(m, qp);
		stellar_qp_put(qp);
	}
	return 0;
}

/**
 * stellar_proc_may_see_qps() - may the opener of @file see QP details?
 * @file: an open /proc/stellar file
 * @sdev: the device whose QPs would be shown
 *
 * QP numbers, PSNs and source ports are what a host needs to inject
 * packets into a connection, so they are shown only to whoever may
 * administer the device's network namespace: CAP_NET_ADMIN in its owning
 * user namespace, judged by the credentials the file was opened with.
 *
 * Return: true if the details may be shown.
 */
bool stellar_proc_may_see_qps(const struct file *file,
			      struct stellar_dev *sdev)
{
	return file_ns_capable(file, dev_net(sdev->ndev)->user_ns,
			       CAP_NET_ADMIN);
}

static int stellar_qps_open(struct inode *inode, struct file *file)
{
	struct stellar_dev *sdev = pde_data(inode);

	if (!stellar_proc_may_see_qps(file, sdev))
		return -EPERM;
	return single_open(file, stellar_qps_show, sdev);
}

/*
 * A device's own files (stats, settings, limits): the directory's data is
 * the device, the file's the show function.
 */
static int stellar_dev_file_open(struct inode *inode, struct file *file)
{
	struct stellar_dev *sdev = proc_get_parent_data(inode);
	int (*show)(struct seq_file *m, void *v) = pde_data(inode);

	if (!stellar_proc_may_see_dev(file, sdev))
		return -EPERM;
	return single_open(file, show, sdev);
}

static const struct proc_ops stellar_dev_file_ops = {
	.proc_open = stellar_dev_file_open,
	.proc_read = seq_read,
	.proc_lseek = seq_lseek,
	.proc_release = single_release,
};

static bool stellar_proc_dev_file(struct stellar_dev *sdev, const char *name,
				  int (*show)(struct seq_file *m, void *v))
{
	return proc_create_data(name, 0444, sdev->proc_dir,
				&stellar_dev_file_ops, show);
}

static const struct proc_ops stellar_qps_proc_ops = {
	.proc_open = stellar_qps_open,
	.proc_read = seq_read,
	.proc_lseek = seq_lseek,
	.proc_release = single_release,
};

/**
 * stellar_proc_add_dev() - create /proc/stellar/<dev>/
 * @sdev: a registered device
 *
 * Statistics are a convenience: failing to create them is logged and the
 * device works without them.
 */
void stellar_proc_add_dev(struct stellar_dev *sdev)
{
	strscpy(sdev->proc_name, dev_name(&sdev->ibdev.dev),
		sizeof(sdev->proc_name));
	sdev->proc_dir = proc_mkdir_data(sdev->proc_name, 0, stellar_proc_root,
					 sdev);
	if (!sdev->proc_dir)
		goto fail;
	if (!stellar_proc_dev_file(sdev, "stats", stellar_stats_show) ||
	    !stellar_proc_dev_file(sdev, "settings", stellar_settings_show) ||
	    !stellar_proc_dev_file(sdev, "limits", stellar_limits_show))
		goto fail;
	if (!proc_create_data("qps", 0400, sdev->proc_dir,
			      &stellar_qps_proc_ops, sdev))
		goto fail;
	return;
fail:
	pr_warn("%s: cannot create /proc/stellar entries\n", sdev->proc_name);
}

/**
 * stellar_proc_del_dev() - remove /proc/stellar/<dev>/
 * @sdev: the device
 *
 * Waits for readers of the device's files to finish.
 */
void stellar_proc_del_dev(struct stellar_dev *sdev)
{
	proc_remove(sdev->proc_dir);
	sdev->proc_dir = NULL;
}

int stellar_proc_init(void)
{
	stellar_proc_root = proc_mkdir("stellar", NULL);
	if (!stellar_proc_root)
		return -ENOMEM;
	if (!proc_create_single("devices", 0444, stellar_proc_root,
				stellar_devices_show) ||
	    !proc_create_single("pvdma_stats", 0444, stellar_proc_root,
				stellar_pvdma_stats_show) ||
	    !proc_create_single("emtt_stats", 0444, stellar_proc_root,
				stellar_emtt_stats_show)) {
		proc_remove(stellar_proc_root);
		return -ENOMEM;
	}
	if (!proc_create_single("spray_stats", 0444, stellar_proc_root,
				stellar_spray_dev_proc_show)) {
		proc_remove(stellar_proc_root);
		return -ENOMEM;
	}
	return 0;
}

void stellar_proc_exit(void)
{
	proc_remove(stellar_proc_root);
}
