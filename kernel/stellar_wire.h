/* SPDX-License-Identifier: GPL-2.0 */
/*
 * virtio-stellar: RoCEv2 (InfiniBand transport over UDP) wire format.
 *
 * Header layouts, opcodes and the opcode table of the IBTA transport
 * headers that follow the UDP header, the packet parser and builder, and
 * the invariant CRC.  Portable: also compiled into the unit tests.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_WIRE_H
#define STELLAR_WIRE_H

#include "stellar_portable.h"

/* Header lengths in bytes. */
#define STELLAR_BTH_LEN		12	/* base transport header */
#define STELLAR_RETH_LEN	16	/* RDMA extended transport header */
#define STELLAR_AETH_LEN	4	/* ACK extended transport header */
#define STELLAR_ATMETH_LEN	28	/* atomic extended transport header */
#define STELLAR_ATMACK_LEN	8	/* atomic ACK extended transport header */
#define STELLAR_IMMDT_LEN	4	/* immediate data */
#define STELLAR_IETH_LEN	4	/* invalidate extended transport header */
#define STELLAR_DETH_LEN	8	/* datagram extended transport header */
#define STELLAR_XRCETH_LEN	4	/* XRC extended transport header */
#define STELLAR_ICRC_LEN	4	/* invariant CRC trailer */
#define STELLAR_CNP_RSVD_LEN	16	/* reserved bytes after a CNP's BTH */
/* Longest BTH plus extension headers of any opcode: XRC atomics. */
#define STELLAR_MAX_HDR_LEN	(STELLAR_BTH_LEN + STELLAR_XRCETH_LEN + \
				 STELLAR_ATMETH_LEN)

/*
 * stellar wire extensions (Documentation/wire-extensions.rst): two BTH
 * reserved bits and two headers that follow the standard extension
 * headers, only on RC packets between two stellar ends.
 */
#define STELLAR_XPH_LEN		20	/* placement header (requests) */
#define STELLAR_SACK_LEN	20	/* selective ACK header (ACKs) */
#define STELLAR_SACK_BITS	128	/* PSNs one SACK header describes */
/*
 * Longest headers with an extension: BTH + RETH + ImmDt + placement (XRC
 * packets carry no stellar header: theirs are at most STELLAR_MAX_HDR_LEN).
 */
#define STELLAR_MAX_XHDR_LEN	(STELLAR_BTH_LEN + STELLAR_RETH_LEN + \
				 STELLAR_IMMDT_LEN + STELLAR_XPH_LEN)

#define STELLAR_IPV4_HDR_LEN	20	/* without options */
#define STELLAR_IPV6_HDR_LEN	40
#define STELLAR_UDP_HDR_LEN	8

#define STELLAR_BTH_TVER	0	/* the only transport header version */

/*
 * Running CRC after the 8 bytes of 0xff that stand for the masked LRH a
 * RoCEv2 packet does not have: crc32_le(0xffffffff, ff ff ff ff ff ff ff ff).
 */
#define STELLAR_ICRC_SEED	0xdebb20e3U

/*
 * BTH bit fields, as three big-endian 32-bit words:
 * word 0: OpCode, SE, M, PadCnt, TVer, P_Key
 * word 1: FECN, BECN, reserved, DestQP
 * word 2: AckReq, reserved, PSN
 */
#define STELLAR_BTH_OPCODE	GENMASK(31, 24)
#define STELLAR_BTH_SE		BIT(23)
#define STELLAR_BTH_MIGREQ	BIT(22)
#define STELLAR_BTH_PADCNT	GENMASK(21, 20)
#define STELLAR_BTH_TVER_MASK	GENMASK(19, 16)
#define STELLAR_BTH_PKEY	GENMASK(15, 0)
#define STELLAR_BTH_FECN	BIT(31)
#define STELLAR_BTH_BECN	BIT(30)
#define STELLAR_BTH_RESV6	GENMASK(29, 24)
#define STELLAR_BTH_QPN		GENMASK(23, 0)
#define STELLAR_BTH_ACKREQ	BIT(31)
#define STELLAR_BTH_RESV7	GENMASK(30, 24)
#define STELLAR_BTH_XCAP	BIT(30)	/* resv7: stellar extensions offered */
#define STELLAR_BTH_XHDR	BIT(29)	/* resv7: a stellar header follows */
#define STELLAR_BTH_XECHO	BIT(28)	/* resv7: an echo, or asks for one */
#define STELLAR_BTH_PSN		GENMASK(23, 0)

/* AETH: Syndrome, MSN.  DETH word 1: reserved, SrcQP.  XRCETH: XRCSRQ. */
#define STELLAR_AETH_SYNDROME	GENMASK(31, 24)
#define STELLAR_AETH_MSN	GENMASK(23, 0)
#define STELLAR_DETH_SRCQP	GENMASK(23, 0)
#define STELLAR_XRCETH_SRQN	GENMASK(23, 0)

#define STELLAR_QPN_MASK	0xffffffU
#define STELLAR_MSN_MASK	0xffffffU

/* Opcode = transport class (bits 7..5) + operation (bits 4..0). */
#define STELLAR_OP_CLASS_RC	0x00
#define STELLAR_OP_CLASS_UC	0x20
#define STELLAR_OP_CLASS_UD	0x60
#define STELLAR_OP_CLASS_XRC	0xa0
#define STELLAR_OP_CLASS_MASK	0xe0

/* The XRC opcode of the RC operation @rc_op (0x00..0x1f). */
#define STELLAR_OP_XRC(rc_op)	(STELLAR_OP_CLASS_XRC | (rc_op))

enum stellar_opcode {
	STELLAR_OP_RC_SEND_FIRST			= 0x00,
	STELLAR_OP_RC_SEND_MIDDLE			= 0x01,
	STELLAR_OP_RC_SEND_LAST				= 0x02,
	STELLAR_OP_RC_SEND_LAST_WITH_IMMEDIATE		= 0x03,
	STELLAR_OP_RC_SEND_ONLY				= 0x04,
	STELLAR_OP_RC_SEND_ONLY_WITH_IMMEDIATE		= 0x05,
	STELLAR_OP_RC_RDMA_WRITE_FIRST			= 0x06,
	STELLAR_OP_RC_RDMA_WRITE_MIDDLE			= 0x07,
	STELLAR_OP_RC_RDMA_WRITE_LAST			= 0x08,
	STELLAR_OP_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE	= 0x09,
	STELLAR_OP_RC_RDMA_WRITE_ONLY			= 0x0a,
	STELLAR_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE	= 0x0b,
	STELLAR_OP_RC_RDMA_READ_REQUEST			= 0x0c,
	STELLAR_OP_RC_RDMA_READ_RESPONSE_FIRST		= 0x0d,
	STELLAR_OP_RC_RDMA_READ_RESPONSE_MIDDLE		= 0x0e,
	STELLAR_OP_RC_RDMA_READ_RESPONSE_LAST		= 0x0f,
	STELLAR_OP_RC_RDMA_READ_RESPONSE_ONLY		= 0x10,
	STELLAR_OP_RC_ACKNOWLEDGE			= 0x11,
	STELLAR_OP_RC_ATOMIC_ACKNOWLEDGE		= 0x12,
	STELLAR_OP_RC_COMPARE_SWAP			= 0x13,
	STELLAR_OP_RC_FETCH_ADD				= 0x14,
	STELLAR_OP_RC_SEND_LAST_WITH_INVALIDATE		= 0x16,
	STELLAR_OP_RC_SEND_ONLY_WITH_INVALIDATE		= 0x17,
	STELLAR_OP_RC_ATOMIC_WRITE			= 0x1d,

	STELLAR_OP_UC_SEND_FIRST			= 0x20,
	STELLAR_OP_UC_SEND_MIDDLE			= 0x21,
	STELLAR_OP_UC_SEND_LAST				= 0x22,
	STELLAR_OP_UC_SEND_LAST_WITH_IMMEDIATE		= 0x23,
	STELLAR_OP_UC_SEND_ONLY				= 0x24,
	STELLAR_OP_UC_SEND_ONLY_WITH_IMMEDIATE		= 0x25,
	STELLAR_OP_UC_RDMA_WRITE_FIRST			= 0x26,
	STELLAR_OP_UC_RDMA_WRITE_MIDDLE			= 0x27,
	STELLAR_OP_UC_RDMA_WRITE_LAST			= 0x28,
	STELLAR_OP_UC_RDMA_WRITE_LAST_WITH_IMMEDIATE	= 0x29,
	STELLAR_OP_UC_RDMA_WRITE_ONLY			= 0x2a,
	STELLAR_OP_UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE	= 0x2b,

	STELLAR_OP_UD_SEND_ONLY				= 0x64,
	STELLAR_OP_UD_SEND_ONLY_WITH_IMMEDIATE		= 0x65,

	/* Congestion notification packet (RoCEv2) */
	STELLAR_OP_CNP					= 0x81,
};

/* Extension headers following the BTH, in wire order. */
#define STELLAR_EXT_DETH	BIT(0)
#define STELLAR_EXT_RETH	BIT(1)
#define STELLAR_EXT_ATMETH	BIT(2)
#define STELLAR_EXT_AETH	BIT(3)
#define STELLAR_EXT_ATMACK	BIT(4)
#define STELLAR_EXT_IMMDT	BIT(5)
#define STELLAR_EXT_IETH	BIT(6)
/* The stellar header: placement (requests) or selective ACK (ACK). */
#define STELLAR_EXT_X		BIT(7)
/* XRC requests: the XRC SRQ, right after the BTH. */
#define STELLAR_EXT_XRCETH	BIT(8)

/* SACK header word 0: distance of the bitmap's first PSN from the ACK PSN, */
#define STELLAR_SACK_BASE	GENMASK(31, 16)
/* and signed distance of the newest PSN received from it (0: the ACK PSN). */
#define STELLAR_SACK_NEWEST	GENMASK(15, 0)
/*
 * The base of the first bitmap (right after the gap at ACK PSN + 1); ACKs
 * with a higher base only add later blocks to it.
 */
#define STELLAR_SACK_FIRST_BASE	2

/* Opcode properties. */
#define STELLAR_OPF_REQUEST	BIT(0)	/* sent by the requester */
#define STELLAR_OPF_RESPONSE	BIT(1)	/* read response or (atomic) ACK */
#define STELLAR_OPF_FIRST	BIT(2)	/* first packet of a multi-packet message */
#define STELLAR_OPF_MIDDLE	BIT(3)
#define STELLAR_OPF_LAST	BIT(4)
#define STELLAR_OPF_ONLY	BIT(5)	/* the whole message in one packet */
#define STELLAR_OPF_PAYLOAD	BIT(6)	/* may carry payload */
#define STELLAR_OPF_ACKED	BIT(7)	/* RC request: the responder ACKs its PSN */
#define STELLAR_OPF_SEND	BIT(8)
#define STELLAR_OPF_WRITE	BIT(9)
#define STELLAR_OPF_READ	BIT(10)	/* read request or read response */
#define STELLAR_OPF_ATOMIC	BIT(11)	/* atomic request or atomic ACK */
#define STELLAR_OPF_IMM		BIT(12)	/* carries immediate data */
#define STELLAR_OPF_INV		BIT(13)	/* carries an R_Key to invalidate */
#define STELLAR_OPF_ATOMIC_WRITE BIT(14) /* 8 bytes written as one store */

enum stellar_qp_class {
	STELLAR_QPC_RC,
	STELLAR_QPC_UC,
	STELLAR_QPC_UD,
	STELLAR_QPC_CNP,	/* for an RC or UC QP, from its peer */
	STELLAR_QPC_XRC,
};

/**
 * struct stellar_opcode_info - what an opcode puts on the wire
 * @name: the opcode's IBTA name, for diagnostics
 * @flags: STELLAR_OPF_* properties
 * @ext: STELLAR_EXT_* extension headers that follow the BTH
 * @ext_len: total length of those extension headers in bytes
 * @qp_class: the transport service the opcode belongs to
 */
struct stellar_opcode_info {
	const char *name;
	u16 flags;
	u16 ext;
	u8 ext_len;
	u8 qp_class;
};

/**
 * struct stellar_pkt - a RoCEv2 transport packet, in host byte order
 * @opcode: BTH OpCode
 * @se: solicited event
 * @migreq: migration request (M)
 * @pad_count: bytes of pad between payload and ICRC (0..3)
 * @tver: transport header version
 * @pkey: partition key
 * @fecn: forward explicit congestion notification
 * @becn: backward explicit congestion notification
 * @dest_qpn: destination QP number (24 bits)
 * @ack_req: the responder is asked to acknowledge this packet
 * @psn: packet sequence number (24 bits)
 * @ext: STELLAR_EXT_* extension headers present
 * @reth: RETH: @reth.va remote address, @reth.rkey, @reth.len DMA length
 * @aeth: AETH: @aeth.syndrome, @aeth.msn message sequence number
 * @atomic: AtomicETH: @atomic.va, @atomic.rkey, @atomic.swap_add
 *	(swap or add operand), @atomic.compare
 * @atomic_ack_orig: AtomicAckETH: original remote data
 * @imm_data: ImmDt, left in network byte order as the verbs API wants it
 * @ieth_rkey: IETH: R_Key to invalidate
 * @deth: DETH: @deth.qkey, @deth.src_qpn (24 bits)
 * @xrc_srqn: XRCETH: the XRC SRQ at the responder (24 bits)
 * @xcap: RC only: BTH XCAP bit, the sender speaks stellar's extensions
 *	(requests: offers them; responses: accepts the offer)
 * @xhdr: RC only: BTH XHDR bit, a stellar header follows the standard
 *	extension headers (STELLAR_EXT_X set after parsing)
 * @xecho: RC only: BTH XECHO bit; requests: acknowledge me on my own UDP
 *	port too; ACKs: this one answers such a request
 * @xph: placement header of a SEND or WRITE request packet:
 *	@xph.offset byte offset of the payload in its message,
 *	@xph.rmsn receive-consuming messages sent before this message,
 *	@xph.va WRITE: remote address of the payload's first byte,
 *	@xph.rkey WRITE: its R_Key
 * @sack: selective ACK header of an ACK: bit i of @sack.bitmap (byte
 *	i / 8, most significant bit first) says PSN @psn + @sack.base + i
 *	was received; PSN @psn + @sack.newest is the newest one received
 * @hdr_len: BTH plus extension headers in bytes: the payload offset
 * @payload_len: payload bytes, excluding pad and ICRC
 *
 * Fields of extension headers not in @ext are zero after parsing and are
 * ignored when building.
 */
struct stellar_pkt {
	u8 opcode;
	bool se;
	bool migreq;
	u8 pad_count;
	u8 tver;
	u16 pkey;
	bool fecn;
	bool becn;
	u32 dest_qpn;
	bool ack_req;
	u32 psn;
	u16 ext;
	struct {
		u64 va;
		u32 rkey;
		u32 len;
	} reth;
	struct {
		u8 syndrome;
		u32 msn;
	} aeth;
	struct {
		u64 va;
		u32 rkey;
		u64 swap_add;
		u64 compare;
	} atomic;
	u64 atomic_ack_orig;
	__be32 imm_data;
	u32 ieth_rkey;
	struct {
		u32 qkey;
		u32 src_qpn;
	} deth;
	u32 xrc_srqn;
	bool xcap;
	bool xhdr;
	bool xecho;
	struct {
		u32 offset;
		u32 rmsn;
		u64 va;
		u32 rkey;
	} xph;
	struct {
		u32 base;
		s16 newest;
		u8 bitmap[STELLAR_SACK_BITS / 8];
	} sack;
	u32 hdr_len;
	u32 payload_len;
};

enum stellar_rx_verdict {
	STELLAR_RX_OK,
	STELLAR_RX_TRUNCATED,	/* shorter than its headers plus ICRC */
	STELLAR_RX_BAD_VERSION,	/* BTH TVer is not 0 */
	STELLAR_RX_BAD_OPCODE,	/* opcode unknown or unsupported */
	STELLAR_RX_BAD_LENGTH,	/* payload/pad length impossible for opcode */
};

const struct stellar_opcode_info *stellar_opcode_info(u8 opcode);
u32 stellar_hdr_len(u8 opcode);
u32 stellar_xhdr_len(u8 opcode);
u32 stellar_pkt_hdr_len(const struct stellar_pkt *pkt);
const char *stellar_rx_verdict_name(enum stellar_rx_verdict verdict);

enum stellar_rx_verdict stellar_parse_packet(const u8 *bth, u32 len,
					     struct stellar_pkt *pkt);
u32 stellar_build_headers(u8 *bth, const struct stellar_pkt *pkt);

/**
 * stellar_pad_count() - pad bytes that align a payload to 4 bytes
 * @payload_len: payload length in bytes
 *
 * Return: BTH PadCnt for a packet carrying @payload_len bytes.
 */
static inline u8 stellar_pad_count(u32 payload_len)
{
	return (u8)(-payload_len & 3);
}

/**
 * stellar_udp_payload_len() - UDP payload length of a packet
 * @opcode: BTH opcode, must be supported
 * @payload_len: transport payload in bytes
 *
 * Return: headers + payload + pad + ICRC, or 0 if @opcode is unsupported.
 */
static inline u32 stellar_udp_payload_len(u8 opcode, u32 payload_len)
{
	u32 hdr_len = stellar_hdr_len(opcode);

	if (!hdr_len)
		return 0;
	return hdr_len + payload_len + stellar_pad_count(payload_len) +
	       STELLAR_ICRC_LEN;
}

u32 stellar_icrc(const u8 *l3hdr, bool is_ipv6, const u8 *udphdr,
		 const u8 *bth, u32 bth_to_icrc_len);
bool stellar_icrc_check(const u8 *l3hdr, bool is_ipv6, const u8 *udphdr,
			const u8 *bth, u32 udp_payload_len);
void stellar_icrc_store(const u8 *l3hdr, bool is_ipv6, const u8 *udphdr,
			u8 *bth, u32 udp_payload_len);

#endif /* STELLAR_WIRE_H */
