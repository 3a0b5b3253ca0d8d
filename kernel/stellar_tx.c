// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: building and sending RoCEv2 packets.
 *
 * A packet is built in one linear skb: transport headers, payload, pad and
 * ICRC, then the UDP and IP headers are pushed in front.  The IP header is
 * built here rather than by the UDP tunnel helpers because the ICRC covers
 * it (the IPv4 identification included), so it must be final before the
 * ICRC is computed.  Packets to an address of this host are handed to the
 * receive path directly.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <asm/unaligned.h>
#include <net/addrconf.h>
#include <net/inet_ecn.h>
#include <net/ip.h>
#include <net/ip6_checksum.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/ipv6_stubs.h>
#include <net/route.h>
#include <net/udp.h>

#include "stellar_xport.h"

#define STELLAR_TX_HEADROOM	(STELLAR_IPV6_HDR_LEN + STELLAR_UDP_HDR_LEN)

/**
 * stellar_tx_alloc() - allocate a packet and write its transport headers
 * @xp: the sending QP's transport
 * @tp: @tp->hdr holds the header fields; @tp->skb and @tp->payload are set
 * @payload_len: payload bytes the caller will write at @tp->payload
 *
 * Return: 0, -EINVAL for an opcode without wire format (or without the
 * stellar header @tp->hdr.xhdr asks for), or -ENOMEM.
 */
int stellar_tx_alloc(struct stellar_qp_xport *xp, struct stellar_tx_pkt *tp,
		     u32 payload_len)
{
	struct net_device *ndev = xp->sdev->ndev;
	u8 pad = stellar_pad_count(payload_len);
	struct sk_buff *skb;
	u32 hdr_len;
	u8 *bth;

	/* The transport speaks RC: an XRC QP's packets go in XRC's class. */
	if (stellar_qp_is_xrc(xp->qp) &&
	    (tp->hdr.opcode & STELLAR_OP_CLASS_MASK) == STELLAR_OP_CLASS_RC)
		tp->hdr.opcode |= STELLAR_OP_CLASS_XRC;
	hdr_len = stellar_pkt_hdr_len(&tp->hdr);
	if (!hdr_len)
		return -EINVAL;
	skb = alloc_skb(LL_RESERVED_SPACE(ndev) + STELLAR_TX_HEADROOM +
			hdr_len + payload_len + pad + STELLAR_ICRC_LEN,
			GFP_KERNEL);
	if (!skb)
		return -ENOMEM;
	skb_reserve(skb, LL_RESERVED_SPACE(ndev) + STELLAR_TX_HEADROOM);
	tp->hdr.pad_count = pad;
	tp->hdr.tver = STELLAR_BTH_TVER;
	bth = skb_put(skb, hdr_len + payload_len + pad + STELLAR_ICRC_LEN);
	stellar_build_headers(bth, &tp->hdr);
	memset(bth + hdr_len + payload_len, 0, pad + STELLAR_ICRC_LEN);
	tp->payload = bth + hdr_len;
	tp->skb = skb;
	return 0;
}

/**
 * stellar_tx_set_echo() - set XECHO in the BTH of a built RC packet
 * @tp: a packet from stellar_tx_alloc(), not yet sent
 *
 * For a requester that learns only after building a packet (when it picks
 * the packet's path) that it asks for an echo; the ICRC is computed when
 * the packet is sent.
 */
void stellar_tx_set_echo(struct stellar_tx_pkt *tp)
{
	u8 *bth_w2 = tp->skb->data + 8;

	tp->hdr.xecho = true;
	put_unaligned_be32(get_unaligned_be32(bth_w2) | STELLAR_BTH_XECHO,
			   bth_w2);
}

static void stellar_tx_push_udp(struct sk_buff *skb, u16 sport)
{
	struct udphdr *uh;

	__skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh = udp_hdr(skb);
	uh->source = htons(sport);
	uh->dest = htons(STELLAR_UDP_PORT);
	uh->len = htons(skb->len);
	uh->check = 0;
}

/*
 * Whether a route may use any interface.  A QP that sprays lets the FIB
 * choose among ECMP next hops by its UDP ports (fib_multipath_hash_policy
 * 1), so its packets may leave on any link; so do the responses to a peer
 * that sprays (they echo its ports), the requests of a QP that changed
 * its port after a timeout while offering the extensions, and the MADs of
 * a GSI QP that rotates its ports (stellar_gsi_rotates()).  Any other QP
 * stays on the device's netdev, as a RoCE NIC would.
 */
static bool stellar_route_any_dev(const struct stellar_qp_xport *xp)
{
	return READ_ONCE(xp->spraying) || READ_ONCE(xp->peer_x) ||
	       READ_ONCE(xp->offer_sport) || stellar_gsi_rotates(xp);
}

static void stellar_flow4(const struct stellar_av *av, u16 sport, int oif,
			  struct flowi4 *fl4)
{
	memset(fl4, 0, sizeof(*fl4));
	fl4->flowi4_oif = oif;
	memcpy(&fl4->saddr, &av->sgid.raw[12], sizeof(fl4->saddr));
	memcpy(&fl4->daddr, &av->dgid.raw[12], sizeof(fl4->daddr));
	fl4->flowi4_proto = IPPROTO_UDP;
	fl4->fl4_sport = htons(sport);
	fl4->fl4_dport = htons(STELLAR_UDP_PORT);
}

static struct rtable *stellar_route4(struct stellar_qp_xport *xp,
				     const struct stellar_av *av, u16 sport)
{
	struct net_device *ndev = xp->sdev->ndev;
	struct flowi4 fl4;
	struct rtable *rt;

	if (stellar_route_any_dev(xp)) {
		stellar_flow4(av, sport, 0, &fl4);
		rt = ip_route_output_key(dev_net(ndev), &fl4);
		if (!IS_ERR(rt))
			return rt;
	}
	stellar_flow4(av, sport, ndev->ifindex, &fl4);
	return ip_route_output_key(dev_net(ndev), &fl4);
}

static void stellar_tx_push_ipv4(struct sk_buff *skb, struct rtable *rt,
				 const struct stellar_av *av, u8 tclass)
{
	struct iphdr *iph;

	skb_dst_set(skb, &rt->dst);
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
	__skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph = ip_hdr(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) / 4;
	iph->tos = tclass;
	iph->tot_len = htons(skb->len);
	iph->frag_off = htons(IP_DF);
	iph->ttl = av->hop_limit ? av->hop_limit : 64;
	iph->protocol = IPPROTO_UDP;
	memcpy(&iph->saddr, &av->sgid.raw[12], sizeof(iph->saddr));
	memcpy(&iph->daddr, &av->dgid.raw[12], sizeof(iph->daddr));
	iph->check = 0;
	__ip_select_ident(dev_net(rt->dst.dev), iph, 1);
	skb->protocol = htons(ETH_P_IP);
}

/* The ICRC over the final IP, UDP and transport headers and payload. */
static void stellar_tx_icrc(struct sk_buff *skb, bool is_ipv6)
{
	u8 *bth = skb_transport_header(skb) + sizeof(struct udphdr);

	stellar_icrc_store(skb_network_header(skb), is_ipv6,
			   skb_transport_header(skb), bth,
			   skb_tail_pointer(skb) - bth);
}

/* Hand a finished packet to this host's receive path. */
static int stellar_tx_loopback(struct stellar_qp_xport *xp,
			       struct sk_buff *skb)
{
	skb_dst_drop(skb);
	skb->dev = xp->sdev->ndev;
	__skb_pull(skb, skb_transport_offset(skb) + sizeof(struct udphdr));
	return stellar_tx_loopback_rcv(skb);
}

static int stellar_tx_ipv4(struct stellar_qp_xport *xp,
			   const struct stellar_av *av, struct sk_buff *skb,
			   u16 sport, u8 tclass)
{
	bool local;
	struct rtable *rt = stellar_route4(xp, av, sport);

	if (IS_ERR(rt)) {
		kfree_skb(skb);
		return PTR_ERR(rt);
	}
	local = rt->rt_type == RTN_LOCAL;
	stellar_tx_push_udp(skb, sport);
	stellar_tx_push_ipv4(skb, rt, av, tclass);
	stellar_tx_icrc(skb, false);
	if (local)
		return stellar_tx_loopback(xp, skb);
	return ip_local_out(dev_net(rt->dst.dev), NULL, skb);
}

#if IS_ENABLED(CONFIG_IPV6)
static struct dst_entry *stellar_route6(struct stellar_qp_xport *xp,
					const struct stellar_av *av, u16 sport)
{
	struct net_device *ndev = xp->sdev->ndev;
	struct flowi6 fl6 = {};
	struct dst_entry *dst;

	fl6.flowi6_oif = ndev->ifindex;
	memcpy(&fl6.saddr, av->sgid.raw, sizeof(fl6.saddr));
	memcpy(&fl6.daddr, av->dgid.raw, sizeof(fl6.daddr));
	fl6.flowi6_proto = IPPROTO_UDP;
	fl6.fl6_sport = htons(sport);
	fl6.fl6_dport = htons(STELLAR_UDP_PORT);
	dst = ipv6_stub->ipv6_dst_lookup_flow(dev_net(ndev), NULL, &fl6, NULL);
	if (!IS_ERR(dst) && dst->error) {
		int err = dst->error;

		dst_release(dst);
		return ERR_PTR(err);
	}
	return dst;
}

static void stellar_tx_push_ipv6(struct sk_buff *skb, struct dst_entry *dst,
				 const struct stellar_av *av, u8 tclass)
{
	struct ipv6hdr *ip6h;

	skb_dst_set(skb, dst);
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
	__skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6h = ipv6_hdr(skb);
	ip6_flow_hdr(ip6h, tclass, htonl(av->flow_label));
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = av->hop_limit ? av->hop_limit : 64;
	memcpy(&ip6h->saddr, av->sgid.raw, sizeof(ip6h->saddr));
	memcpy(&ip6h->daddr, av->dgid.raw, sizeof(ip6h->daddr));
	skb->protocol = htons(ETH_P_IPV6);
}

static int stellar_tx_ipv6(struct stellar_qp_xport *xp,
			   const struct stellar_av *av, struct sk_buff *skb,
			   u16 sport, u8 tclass)
{
	struct dst_entry *dst = stellar_route6(xp, av, sport);
	struct ipv6hdr *ip6h;
	bool local;

	if (IS_ERR(dst)) {
		kfree_skb(skb);
		return PTR_ERR(dst);
	}
	local = dst->dev->flags & IFF_LOOPBACK;
	stellar_tx_push_udp(skb, sport);
	stellar_tx_push_ipv6(skb, dst, av, tclass);
	stellar_tx_icrc(skb, true);
	if (local)
		return stellar_tx_loopback(xp, skb);
	/* The UDP checksum is outside the ICRC: fill it in last. */
	ip6h = ipv6_hdr(skb);
	udp6_set_csum(false, skb, &ip6h->saddr, &ip6h->daddr,
		      ntohs(udp_hdr(skb)->len));
	return ip6_local_out(dev_net(dst->dev), NULL, skb);
}
#else
static int stellar_tx_ipv6(struct stellar_qp_xport *xp,
			   const struct stellar_av *av, struct sk_buff *skb,
			   u16 sport, u8 tclass)
{
	kfree_skb(skb);
	return -EAFNOSUPPORT;
}
#endif

/*
 * The IP traffic class of a packet: the AV's, and ECN-capable (ECT(0)) for
 * a request whose responder answers a congestion mark (CE): one that
 * offers or uses the stellar extensions (the ACK echoes the mark), or of
 * a QP under DCQCN (any RoCEv2 responder may return a CNP).
 */
static u8 stellar_tx_tclass(const struct stellar_qp_xport *xp,
			    const struct stellar_av *av,
			    const struct stellar_pkt *hdr)
{
	if ((hdr->xcap || xp->cc.on) &&
	    !INET_ECN_is_capable(av->traffic_class) &&
	    (stellar_opcode_info(hdr->opcode)->flags & STELLAR_OPF_REQUEST))
		return av->traffic_class | INET_ECN_ECT_0;
	return av->traffic_class;
}

/**
 * stellar_tx_xmit() - send a packet built by stellar_tx_alloc()
 * @xp: the sending QP's transport
 * @av: where to
 * @tp: the packet; its skb is consumed in every case
 * @sport: UDP source port
 *
 * The packet counts against the device's rate limit, whatever it is; the
 * senders that must wait for the limit asked stellar_rate_hold() before
 * building it.
 *
 * Return: 0, or a negative errno if the packet was dropped (no route,
 * congestion); the transport recovers from a drop as from a loss.
 */
int stellar_tx_xmit(struct stellar_qp_xport *xp, const struct stellar_av *av,
		    struct stellar_tx_pkt *tp, u16 sport)
{
	u8 tclass = stellar_tx_tclass(xp, av, &tp->hdr);
	struct sk_buff *skb = tp->skb;
	u32 len = skb->len;
	int ret;

	tp->skb = NULL;
	stellar_rate_charge(&xp->sdev->limits, len);
	if (stellar_opcode_info(tp->hdr.opcode)->flags & STELLAR_OPF_REQUEST)
		stellar_cnp_sent(xp, len);
	if (av->network_type == RDMA_NETWORK_IPV4)
		ret = stellar_tx_ipv4(xp, av, skb, sport, tclass);
	else
		ret = stellar_tx_ipv6(xp, av, skb, sport, tclass);
	if (ret < 0 || net_xmit_eval(ret)) {
		stellar_xstat(xp, STELLAR_XS_TX_ERRORS, 1);
		return ret < 0 ? ret : -ENOBUFS;
	}
	stellar_count(xp->sdev, STELLAR_STAT_TX_PACKETS, 1);
	stellar_count(xp->sdev, STELLAR_STAT_TX_BYTES, len);
	stellar_xstat(xp, STELLAR_XS_TX_PACKETS, 1);
	stellar_xstat(xp, STELLAR_XS_TX_BYTES, len);
	return 0;
}

/**
 * stellar_tx_loopback_rcv() - receive a packet this host sent to itself
 * @skb: data at the BTH, network and transport headers set, skb->dev the
 *	 sending device's netdev
 *
 * The packet goes to the device that owns its destination address, which
 * need not be the sending one.
 *
 * Return: 0 (the packet was consumed, possibly dropped).
 */
int stellar_tx_loopback_rcv(struct sk_buff *skb)
{
	struct stellar_dev *sdev;
	struct stellar_pkt pkt;

	local_bh_disable();
	rcu_read_lock();
	sdev = stellar_rx_dev_rcu(skb);
	if (!sdev) {
		kfree_skb(skb);
		goto out;
	}
	stellar_count(sdev, STELLAR_STAT_RX_PACKETS, 1);
	stellar_count(sdev, STELLAR_STAT_RX_BYTES, skb->len);
	if (stellar_parse_packet(skb->data, skb->len, &pkt) != STELLAR_RX_OK) {
		stellar_count(sdev, STELLAR_STAT_RX_DROP_BAD_LENGTH, 1);
		kfree_skb(skb);
		goto out;
	}
	stellar_xport_rcv(sdev, skb, &pkt);
out:
	rcu_read_unlock();
	local_bh_enable();
	return 0;
}
