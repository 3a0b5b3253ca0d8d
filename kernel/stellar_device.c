// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: device lifecycle.
 *
 * A device is created by "rdma link add stellarN type stellar netdev X"
 * (stellar_newlink) and removed by "rdma link delete", by the netdev going
 * away, or by module unload.  All three end in the RDMA core calling
 * stellar_dealloc_driver(), the one place a device's resources are freed.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/if_arp.h>
#include <net/addrconf.h>
#include <rdma/ib_verbs.h>

#include "stellar.h"
#include "stellar_lat.h"

/* Serialises device creation (name and netdev checks, registration). */
static DEFINE_MUTEX(stellar_newlink_lock);
/* Protects changes of stellar_dev_list; readers use RCU. */
static DEFINE_SPINLOCK(stellar_dev_list_lock);
/* Every registered device. */
LIST_HEAD(stellar_dev_list);

/**
 * stellar_dev_find_by_ndev_rcu() - the device bound to a netdev
 * @ndev: the netdev a packet arrived on
 *
 * Context: rcu_read_lock() held; the result is valid until it is dropped.
 * Return: the device or NULL.
 */
struct stellar_dev *stellar_dev_find_by_ndev_rcu(struct net_device *ndev)
{
	struct stellar_dev *sdev;

	list_for_each_entry_rcu(sdev, &stellar_dev_list, list)
		if (sdev->ndev == ndev)
			return sdev;
	return NULL;
}

/**
 * stellar_dev_get_by_name() - look a device up by its ib_device name
 * @net: the network namespace the device's netdev must be in
 * @name: e.g. "stellar0"
 *
 * Return: the device with a registration reference (release it with
 * ib_device_put()), or NULL if @net has none of that name or it is being
 * removed.
 */
struct stellar_dev *stellar_dev_get_by_name(struct net *net, const char *name)
{
	struct stellar_dev *sdev, *found = NULL;

	rcu_read_lock();
	list_for_each_entry_rcu(sdev, &stellar_dev_list, list) {
		if (!strcmp(dev_name(&sdev->ibdev.dev), name) &&
		    net_eq(dev_net(sdev->ndev), net) &&
		    ib_device_try_get(&sdev->ibdev)) {
			found = sdev;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}

static bool stellar_ndev_taken(struct net_device *ndev)
{
	bool taken;

	rcu_read_lock();
	taken = stellar_dev_find_by_ndev_rcu(ndev);
	rcu_read_unlock();
	return taken;
}

/**
 * stellar_read_counter() - sum one counter over all CPUs
 * @sdev: device
 * @stat: which counter
 *
 * The gauges (receive backlog, objects counted against the limits) are
 * device-wide atomics, not per-CPU.
 *
 * Return: the counter's value.
 */
u64 stellar_read_counter(struct stellar_dev *sdev, enum stellar_genl_stat stat)
{
	u64 sum = 0;
	int cpu;

	if (stat == STELLAR_STAT_RX_QUEUED_BYTES)
		return atomic_long_read(&sdev->rx_queued);
	if (stat == STELLAR_STAT_RX_QUEUED_MAX)
		return atomic_long_read(&sdev->rx_queued_max);
	if (stat == STELLAR_STAT_QPS)
		return atomic_read(&sdev->limits.num_qps);
	if (stat == STELLAR_STAT_MRS)
		return atomic_read(&sdev->limits.num_mrs);
	if (stat == STELLAR_STAT_LIMIT_PINNED)
		return atomic64_read(&sdev->limits.pinned);
	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(sdev->counters, cpu)->val[stat]);
	return sum;
}

/**
 * stellar_port_state() - the port state the netdev implies
 * @sdev: device
 *
 * Return: IB_PORT_ACTIVE when the netdev is up with carrier, else
 * IB_PORT_DOWN.
 */
enum ib_port_state stellar_port_state(struct stellar_dev *sdev)
{
	if (netif_running(sdev->ndev) && netif_carrier_ok(sdev->ndev))
		return IB_PORT_ACTIVE;
	return IB_PORT_DOWN;
}

static void stellar_port_event(struct stellar_dev *sdev)
{
	enum ib_port_state state = stellar_port_state(sdev);
	struct ib_event event = {
		.device = &sdev->ibdev,
		.element.port_num = 1,
		.event = state == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
						   IB_EVENT_PORT_ERR,
	};

	if (xchg(&sdev->last_port_state, state) == state)
		return;
	ib_dispatch_event(&event);
}

/**
 * stellar_dealloc_driver() - free a device's driver resources
 * @ibdev: the device being unregistered
 *
 * Called by the RDMA core once the device is unregistered and no verbs
 * can reach it any more, or from ib_dealloc_device() when registration
 * failed part way; the core frees @ibdev itself afterwards.
 */
void stellar_dealloc_driver(struct ib_device *ibdev)
{
	struct stellar_dev *sdev = to_sdev(ibdev);

	spin_lock(&stellar_dev_list_lock);
	list_del_rcu(&sdev->list);
	spin_unlock(&stellar_dev_list_lock);
	synchronize_rcu();

	stellar_db_stop(sdev);
	stellar_proc_del_dev(sdev);
	if (sdev->udp)
		stellar_udp_put(sdev->udp);
	WARN_ON(!xa_empty(&sdev->qps));
	WARN_ON(!xa_empty(&sdev->mrs));
	WARN_ON(!xa_empty(&sdev->ahs));
	WARN_ON(!xa_empty(&sdev->srqs));
	stellar_limits_fini(&sdev->limits);
	xa_destroy(&sdev->qps);
	xa_destroy(&sdev->mrs);
	xa_destroy(&sdev->ahs);
	xa_destroy(&sdev->srqs);
	stellar_mcast_dev_fini(sdev);
	stellar_mem_dev_fini(sdev);
	free_percpu(sdev->counters);
	stellar_lat_dev_free(sdev->lat);
}

static int stellar_check_newlink(const char *name, struct net_device *ndev)
{
	struct ib_device *existing;

	if (strncmp(name, STELLAR_DEV_PREFIX, strlen(STELLAR_DEV_PREFIX))) {
		pr_err("device name '%s' must start with '%s'\n", name,
		       STELLAR_DEV_PREFIX);
		return -EINVAL;
	}
	if (ndev->type != ARPHRD_ETHER || (ndev->flags & IFF_LOOPBACK)) {
		pr_err("%s: netdev %s is not an Ethernet device\n", name,
		       netdev_name(ndev));
		return -EINVAL;
	}
	if (stellar_ndev_taken(ndev)) {
		pr_err("%s: netdev %s already has a stellar device\n", name,
		       netdev_name(ndev));
		return -EEXIST;
	}
	existing = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
	if (existing) {
		ib_device_put(existing);
		pr_err("an RDMA device named '%s' already exists\n", name);
		return -EEXIST;
	}
	return 0;
}

static void stellar_init_ibdev(struct stellar_dev *sdev)
{
	struct ib_device *ibdev = &sdev->ibdev;

	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = num_possible_cpus();
	ibdev->local_dma_lkey = 0;
	strscpy(ibdev->node_desc, "virtio-stellar", sizeof(ibdev->node_desc));
	addrconf_addr_eui48((unsigned char *)&ibdev->node_guid,
			    sdev->ndev->dev_addr);
	/*
	 * /sys/class/infiniband/<name>/device: the netdev's device (a
	 * virtio or PCI function), where there is one; veth and bonds have
	 * none.  device_add() holds the parent until the ib_device is gone,
	 * whichever of the two is unregistered first.
	 */
	ibdev->dev.parent = sdev->ndev->dev.parent;
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	ibdev->local_dma_lkey = 0;
	stellar_verbs_set_uapi(ibdev);
	ib_set_device_ops(ibdev, &stellar_dev_ops);
}

static struct stellar_dev *stellar_alloc_dev(struct net_device *ndev)
{
	struct stellar_dev *sdev;

	sdev = ib_alloc_device(stellar_dev, ibdev);
	if (!sdev)
		return NULL;
	/* First: stellar_dealloc_driver() stops its timer on every path. */
	stellar_limits_init(&sdev->limits);
	sdev->counters = alloc_percpu(struct stellar_counters);
	sdev->lat = stellar_lat_dev_alloc();
	if (!sdev->counters || !sdev->lat) {
		stellar_lat_dev_free(sdev->lat);
		free_percpu(sdev->counters);
		ib_dealloc_device(&sdev->ibdev);
		return NULL;
	}
	sdev->ndev = ndev;
	sdev->last_port_state = IB_PORT_NOP;
	stellar_default_settings(&sdev->settings);
	xa_init_flags(&sdev->qps, XA_FLAGS_ALLOC);
	xa_init_flags(&sdev->mrs, XA_FLAGS_ALLOC1);
	xa_init_flags(&sdev->ahs, XA_FLAGS_ALLOC1);
	xa_init_flags(&sdev->srqs, XA_FLAGS_ALLOC1);
	spin_lock_init(&sdev->atomic_lock);
	mutex_init(&sdev->mw_lock);
	stellar_spray_dev_init(&sdev->spray);
	stellar_mcast_dev_init(sdev);
	INIT_LIST_HEAD(&sdev->list);
	stellar_init_ibdev(sdev);
	if (stellar_mem_dev_init(sdev)) {
		ib_dealloc_device(&sdev->ibdev);
		return NULL;
	}
	return sdev;
}

static int stellar_register(struct stellar_dev *sdev, const char *name)
{
	int ret;

	sdev->udp = stellar_udp_get(dev_net(sdev->ndev));
	if (IS_ERR(sdev->udp)) {
		ret = PTR_ERR(sdev->udp);
		sdev->udp = NULL;
		return ret;
	}
	ret = ib_device_set_netdev(&sdev->ibdev, sdev->ndev, 1);
	if (ret)
		return ret;
	/* Stopped by stellar_dealloc_driver(), also when this fails. */
	ret = stellar_db_start(sdev, name);
	if (ret)
		return ret;
	ret = ib_register_device(&sdev->ibdev, name, NULL);
	if (ret)
		pr_err("%s: registering with the RDMA core failed: %d\n",
		       name, ret);
	return ret;
}

/*
 * Make a registered device visible to lookups.  The netdev notifier runs
 * under RTNL, so checking the netdev's state under RTNL after the device is
 * on the list closes the window in which an unregistration of the netdev
 * could have been missed while the device was being registered.
 */
static void stellar_publish(struct stellar_dev *sdev)
{
	bool ndev_gone;

	rtnl_lock();
	spin_lock(&stellar_dev_list_lock);
	list_add_tail_rcu(&sdev->list, &stellar_dev_list);
	spin_unlock(&stellar_dev_list_lock);
	ndev_gone = sdev->ndev->reg_state != NETREG_REGISTERED;
	rtnl_unlock();

	stellar_proc_add_dev(sdev);
	if (ndev_gone)
		ib_unregister_device_queued(&sdev->ibdev);
	else
		stellar_port_event(sdev);
}

/**
 * stellar_newlink() - create a device: "rdma link add NAME type stellar"
 * @ibdev_name: requested name; must start with "stellar"
 * @ndev: the netdev to run over (held by the caller)
 *
 * Return: 0 or a negative errno; the reason is logged.
 */
int stellar_newlink(const char *ibdev_name, struct net_device *ndev)
{
	struct stellar_dev *sdev;
	int ret;

	mutex_lock(&stellar_newlink_lock);
	ret = stellar_check_newlink(ibdev_name, ndev);
	if (ret)
		goto out;
	sdev = stellar_alloc_dev(ndev);
	if (!sdev) {
		ret = -ENOMEM;
		goto out;
	}
	ret = stellar_register(sdev, ibdev_name);
	if (ret) {
		ib_dealloc_device(&sdev->ibdev);
		goto out;
	}
	stellar_publish(sdev);
	pr_info("%s: created on netdev %s\n", ibdev_name, netdev_name(ndev));
out:
	mutex_unlock(&stellar_newlink_lock);
	return ret;
}

static struct stellar_dev *stellar_first_dev_get(void)
{
	struct stellar_dev *sdev;

	rcu_read_lock();
	sdev = list_first_or_null_rcu(&stellar_dev_list, struct stellar_dev,
				      list);
	if (sdev)
		get_device(&sdev->ibdev.dev);
	rcu_read_unlock();
	return sdev;
}

/**
 * stellar_remove_all() - unregister every device (module unload)
 *
 * Called once no new device can be created (the link type is gone).
 * ib_unregister_device() is fenced against concurrent (queued or user
 * requested) unregistration of the same device, so once it returns the
 * device's stellar_dealloc_driver() has run and the device is off the list.
 */
void stellar_remove_all(void)
{
	struct stellar_dev *sdev;

	while ((sdev = stellar_first_dev_get())) {
		ib_unregister_device(&sdev->ibdev);
		put_device(&sdev->ibdev.dev);
	}
}

static struct stellar_dev *stellar_dev_get_by_ndev(struct net_device *ndev)
{
	struct stellar_dev *sdev;

	rcu_read_lock();
	sdev = stellar_dev_find_by_ndev_rcu(ndev);
	if (sdev && !ib_device_try_get(&sdev->ibdev))
		sdev = NULL;
	rcu_read_unlock();
	return sdev;
}

/**
 * stellar_ndev_moved() - follow the netdev into its new network namespace
 * @sdev: the device bound to the netdev
 *
 * "ip link set DEV netns NS" re-registers the netdev in NS.  Packets are
 * sent in the netdev's namespace and received through that namespace's
 * UDP 4791 sockets, so the device swaps its socket reference for one in
 * NS.  If NS has no room for the sockets (rdma_rxe holds the port) the
 * device keeps the old ones and receives nothing until the netdev moves
 * back or elsewhere.
 *
 * Context: RTNL held, from the netdev notifier.
 */
static void stellar_ndev_moved(struct stellar_dev *sdev)
{
	struct stellar_udp *udp = stellar_udp_get(dev_net(sdev->ndev));

	if (IS_ERR(udp)) {
		pr_err("%s: netdev %s moved to a namespace without UDP port %d: %ld\n",
		       dev_name(&sdev->ibdev.dev), netdev_name(sdev->ndev),
		       STELLAR_UDP_PORT, PTR_ERR(udp));
		return;
	}
	swap(sdev->udp, udp);
	if (udp)
		stellar_udp_put(udp);
	pr_info("%s: netdev %s moved to another network namespace\n",
		dev_name(&sdev->ibdev.dev), netdev_name(sdev->ndev));
}

/*
 * Runs under RTNL.  Device registration takes RTNL inside the RDMA core
 * while stellar_newlink_lock is held, so this must not take that lock.
 * A netdev changing namespace sees NETDEV_UNREGISTER while it stays
 * NETREG_REGISTERED, then NETDEV_REGISTER in its new namespace: the
 * device stays bound to it.
 */
static int stellar_netdev_event(struct notifier_block *nb,
				unsigned long event, void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct stellar_dev *sdev = stellar_dev_get_by_ndev(ndev);

	if (!sdev)
		return NOTIFY_DONE;
	switch (event) {
	case NETDEV_UNREGISTER:
		if (ndev->reg_state == NETREG_REGISTERED)
			break;
		pr_info("%s: netdev %s is going away, removing the device\n",
			dev_name(&sdev->ibdev.dev), netdev_name(ndev));
		ib_unregister_device_queued(&sdev->ibdev);
		break;
	case NETDEV_REGISTER:
		stellar_ndev_moved(sdev);
		stellar_port_event(sdev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		stellar_port_event(sdev);
		break;
	default:
		break;
	}
	ib_device_put(&sdev->ibdev);
	return NOTIFY_DONE;
}

static struct notifier_block stellar_netdev_notifier = {
	.notifier_call = stellar_netdev_event,
};

int stellar_device_init(void)
{
	return register_netdevice_notifier(&stellar_netdev_notifier);
}

void stellar_device_exit(void)
{
	unregister_netdevice_notifier(&stellar_netdev_notifier);
}
