// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: UDP 4791 sockets per network namespace and packet receive.
 *
 * Each network namespace that holds at least one stellar device gets one
 * IPv4 and (where IPv6 is available) one IPv6 UDP tunnel socket bound to
 * port 4791.  The sockets are shared by the devices of that namespace
 * through a reference-counted struct stellar_udp.  A namespace can die
 * while its devices still wait for their queued unregistration, so the
 * sockets are closed at namespace exit at the latest, and the struct
 * itself lives on until its last device lets go of it.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/if_vlan.h>
#include <linux/inetdevice.h>
#include <linux/skbuff.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/ipv6_stubs.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/udp_tunnel.h>

#include "stellar.h"
#include "stellar_transport.h"

/**
 * struct stellar_udp - the UDP 4791 sockets of one network namespace
 * @ref: one reference per device using the sockets
 * @pernet: back pointer to the namespace's slot, NULL once it exited
 * @sock4: IPv4 socket, NULL once closed
 * @sock6: IPv6 socket, NULL if IPv6 is unavailable or once closed
 */
struct stellar_udp {
	refcount_t ref;
	struct stellar_pernet *pernet;
	struct socket *sock4;
	struct socket *sock6;
};

/**
 * struct stellar_pernet - per network namespace driver state
 * @udp: the namespace's sockets while any device uses them
 */
struct stellar_pernet {
	struct stellar_udp *udp;
};

static unsigned int stellar_pernet_id;
/* Protects stellar_pernet.udp, stellar_udp.pernet and socket teardown. */
static DEFINE_MUTEX(stellar_udp_lock);

static void stellar_rx_drop(struct stellar_dev *sdev, enum stellar_genl_stat why,
			    struct sk_buff *skb)
{
	stellar_count(sdev, why, 1);
	kfree_skb(skb);
}

static enum stellar_genl_stat stellar_verdict_stat(enum stellar_rx_verdict v)
{
	switch (v) {
	case STELLAR_RX_BAD_VERSION:
		return STELLAR_STAT_RX_DROP_BAD_VERSION;
	case STELLAR_RX_BAD_OPCODE:
		return STELLAR_STAT_RX_DROP_BAD_OPCODE;
	case STELLAR_RX_BAD_LENGTH:
		return STELLAR_STAT_RX_DROP_BAD_LENGTH;
	default:
		return STELLAR_STAT_RX_DROP_TRUNCATED;
	}
}

/*
 * Validate a packet of a device and hand it to the transport, which finds
 * its QP.
 */
static void stellar_rx(struct stellar_dev *sdev, struct sk_buff *skb)
{
	enum stellar_rx_verdict verdict;
	struct stellar_pkt pkt;

	stellar_count(sdev, STELLAR_STAT_RX_PACKETS, 1);
	stellar_count(sdev, STELLAR_STAT_RX_BYTES, skb->len);
	if (skb_linearize(skb)) {
		stellar_rx_drop(sdev, STELLAR_STAT_RX_DROP_TRUNCATED, skb);
		return;
	}
	/* The ICRC covers a 20-byte IPv4 header: options are not RoCEv2. */
	if (skb->protocol == htons(ETH_P_IP) && ip_hdr(skb)->ihl != 5) {
		stellar_rx_drop(sdev, STELLAR_STAT_RX_DROP_BAD_LENGTH, skb);
		return;
	}
	verdict = stellar_parse_packet(skb->data, skb->len, &pkt);
	if (verdict != STELLAR_RX_OK) {
		stellar_rx_drop(sdev, stellar_verdict_stat(verdict), skb);
		return;
	}
	if (!stellar_icrc_check(skb_network_header(skb),
				skb->protocol == htons(ETH_P_IPV6),
				skb_transport_header(skb), skb->data,
				skb->len)) {
		stellar_rx_drop(sdev, STELLAR_STAT_RX_DROP_BAD_ICRC, skb);
		return;
	}
	stellar_xport_rcv(sdev, skb, &pkt);
}

/* The device bound to @ndev, or to the netdev under VLAN @ndev. */
static struct stellar_dev *stellar_ndev_dev_rcu(struct net_device *ndev)
{
	struct stellar_dev *sdev = stellar_dev_find_by_ndev_rcu(ndev);

	if (!sdev && is_vlan_dev(ndev))
		sdev = stellar_dev_find_by_ndev_rcu(vlan_dev_real_dev(ndev));
	return sdev;
}

/* The netdev of skb->dev's namespace that owns the destination address. */
static struct net_device *stellar_daddr_ndev_rcu(const struct sk_buff *skb)
{
	struct net *net = dev_net(skb->dev);
	struct net_device *ndev = NULL;

	if (skb->protocol == htons(ETH_P_IP))
		return __ip_dev_find(net, ip_hdr(skb)->daddr, false);
#if IS_ENABLED(CONFIG_IPV6)
	if (skb->protocol == htons(ETH_P_IPV6) && ipv6_stub->ipv6_dev_find) {
		/* Link-local addresses may repeat: skb->dev's own first. */
		ndev = ipv6_stub->ipv6_dev_find(net, &ipv6_hdr(skb)->daddr,
						skb->dev);
		if (!ndev)
			ndev = ipv6_stub->ipv6_dev_find(net,
							&ipv6_hdr(skb)->daddr,
							NULL);
	}
#endif
	return ndev;
}

/**
 * stellar_rx_dev_rcu() - the device a received packet is for
 * @skb: network header set; skb->dev is the netdev it came in on (the
 *	 sending device's netdev for a packet sent to this host itself)
 *
 * The device that owns the destination address: with ECMP routes or
 * several links a peer's packets for our address may come in on any of
 * them, and a packet for one device's address must never reach a QP of
 * another device that happens to have the same QPN.  Only when no device
 * owns the address (it is on a netdev without one, or a multicast
 * address) does the netdev the packet came in on decide.
 *
 * Context: RCU read side.
 * Return: the device, or NULL when there is none for the packet.
 */
struct stellar_dev *stellar_rx_dev_rcu(struct sk_buff *skb)
{
	struct net_device *owner = stellar_daddr_ndev_rcu(skb);
	struct stellar_dev *sdev = owner ? stellar_ndev_dev_rcu(owner) : NULL;

	return sdev ?: stellar_ndev_dev_rcu(skb->dev);
}

/*
 * UDP encapsulation receive hook: softirq context, under RCU.  Returning
 * 0 means the skb was consumed.
 */
static int stellar_udp_encap_recv(struct sock *sk, struct sk_buff *skb)
{
	struct stellar_dev *sdev;

	rcu_read_lock();
	sdev = stellar_rx_dev_rcu(skb);
	if (!sdev) {
		rcu_read_unlock();
		kfree_skb(skb);
		return 0;
	}
	if (!pskb_may_pull(skb, sizeof(struct udphdr))) {
		stellar_rx_drop(sdev, STELLAR_STAT_RX_DROP_TRUNCATED, skb);
	} else {
		__skb_pull(skb, sizeof(struct udphdr));
		stellar_rx(sdev, skb);
	}
	rcu_read_unlock();
	return 0;
}

static struct socket *stellar_udp_open(struct net *net, bool ipv6)
{
	struct udp_tunnel_sock_cfg tunnel_cfg = { };
	struct udp_port_cfg port_cfg = { };
	struct socket *sock;
	int ret;

	port_cfg.family = ipv6 ? AF_INET6 : AF_INET;
	port_cfg.ipv6_v6only = ipv6;
	port_cfg.local_udp_port = htons(STELLAR_UDP_PORT);
	ret = udp_sock_create(net, &port_cfg, &sock);
	if (ret)
		return ERR_PTR(ret);

	tunnel_cfg.encap_type = 1;
	tunnel_cfg.encap_rcv = stellar_udp_encap_recv;
	setup_udp_tunnel_sock(net, sock, &tunnel_cfg);
	return sock;
}

static void stellar_udp_close(struct stellar_udp *udp)
{
	if (udp->sock6)
		udp_tunnel_sock_release(udp->sock6);
	if (udp->sock4)
		udp_tunnel_sock_release(udp->sock4);
	udp->sock6 = NULL;
	udp->sock4 = NULL;
}

static void stellar_udp_report_busy(int err)
{
	if (err == -EADDRINUSE)
		pr_err("UDP port %d is already in use in this network namespace; rdma_rxe (or another RoCEv2 driver) holds it and cannot share a namespace with stellar\n",
		       STELLAR_UDP_PORT);
	else
		pr_err("cannot open the UDP port %d socket: %d\n",
		       STELLAR_UDP_PORT, err);
}

static struct stellar_udp *stellar_udp_create(struct net *net)
{
	struct stellar_udp *udp;
	struct socket *sock;

	udp = kzalloc(sizeof(*udp), GFP_KERNEL);
	if (!udp)
		return ERR_PTR(-ENOMEM);
	refcount_set(&udp->ref, 1);

	sock = stellar_udp_open(net, false);
	if (IS_ERR(sock))
		goto err;
	udp->sock4 = sock;
	if (IS_ENABLED(CONFIG_IPV6) && ipv6_mod_enabled()) {
		sock = stellar_udp_open(net, true);
		if (IS_ERR(sock))
			goto err;
		udp->sock6 = sock;
	}
	return udp;

err:
	stellar_udp_report_busy(PTR_ERR(sock));
	stellar_udp_close(udp);
	kfree(udp);
	return ERR_CAST(sock);
}

/**
 * stellar_udp_get() - take a reference on a namespace's UDP 4791 sockets
 * @net: the network namespace of the device's netdev
 *
 * Opens the sockets for the namespace's first device.  Fails with
 * -EADDRINUSE (and a message naming rdma_rxe) when another driver already
 * holds the port in @net.
 *
 * Return: the shared sockets or an ERR_PTR.
 */
struct stellar_udp *stellar_udp_get(struct net *net)
{
	struct stellar_pernet *pernet = net_generic(net, stellar_pernet_id);
	struct stellar_udp *udp;

	mutex_lock(&stellar_udp_lock);
	udp = pernet->udp;
	if (udp) {
		refcount_inc(&udp->ref);
	} else {
		udp = stellar_udp_create(net);
		if (!IS_ERR(udp)) {
			udp->pernet = pernet;
			pernet->udp = udp;
		}
	}
	mutex_unlock(&stellar_udp_lock);
	return udp;
}

/**
 * stellar_udp_put() - drop a device's reference on its namespace's sockets
 * @udp: from stellar_udp_get()
 *
 * The last reference closes the sockets unless namespace exit did already.
 */
void stellar_udp_put(struct stellar_udp *udp)
{
	mutex_lock(&stellar_udp_lock);
	if (refcount_dec_and_test(&udp->ref)) {
		if (udp->pernet)
			udp->pernet->udp = NULL;
		stellar_udp_close(udp);
		kfree(udp);
	}
	mutex_unlock(&stellar_udp_lock);
}

/*
 * Runs after every netdev of the namespace was unregistered or moved out,
 * but the devices' queued unregistrations may not have run yet: close the
 * sockets now and let the devices drop the empty struct later.
 */
static void __net_exit stellar_net_exit_ns(struct net *net)
{
	struct stellar_pernet *pernet = net_generic(net, stellar_pernet_id);

	mutex_lock(&stellar_udp_lock);
	if (pernet->udp) {
		stellar_udp_close(pernet->udp);
		pernet->udp->pernet = NULL;
		pernet->udp = NULL;
	}
	mutex_unlock(&stellar_udp_lock);
}

static struct pernet_operations stellar_net_ops = {
	.exit = stellar_net_exit_ns,
	.id = &stellar_pernet_id,
	.size = sizeof(struct stellar_pernet),
};

int stellar_net_init(void)
{
	return register_pernet_subsys(&stellar_net_ops);
}

void stellar_net_exit(void)
{
	unregister_pernet_subsys(&stellar_net_ops);
}
