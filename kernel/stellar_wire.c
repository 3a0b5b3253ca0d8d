// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: RoCEv2 transport header parsing, building and ICRC.
 *
 * Everything here works on plain byte buffers and is compiled both into
 * the module and into the userspace unit tests: no allocation, no
 * logging, no locking.  Fields are read byte by byte in network order, so
 * buffers need no particular alignment.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include "stellar_wire.h"

#define SW_RC_REQ	(STELLAR_OPF_REQUEST | STELLAR_OPF_ACKED)
#define SW_UC_REQ	STELLAR_OPF_REQUEST
#define SW_SEND_DATA	(STELLAR_OPF_SEND | STELLAR_OPF_PAYLOAD)
#define SW_WRITE_DATA	(STELLAR_OPF_WRITE | STELLAR_OPF_PAYLOAD)
#define SW_READ_DATA	(STELLAR_OPF_RESPONSE | STELLAR_OPF_READ | \
			 STELLAR_OPF_PAYLOAD)

/*
 * An RC operation and its XRC twin (the same operation in the XRC class):
 * the same headers, and an XRCETH right after the BTH of each request.
 */
#define SW_XRC_REQ(flags)	((flags) & STELLAR_OPF_REQUEST)
#define SW_RC_XRC(op, opname, opflags, opext, opext_len)		\
	[op] = {							\
		.name = "RC_" opname, .qp_class = STELLAR_QPC_RC,	\
		.flags = (opflags), .ext = (opext),			\
		.ext_len = (opext_len),					\
	},								\
	[STELLAR_OP_XRC(op)] = {					\
		.name = "XRC_" opname, .qp_class = STELLAR_QPC_XRC,	\
		.flags = (opflags),					\
		.ext = (opext) |					\
		       (SW_XRC_REQ(opflags) ? STELLAR_EXT_XRCETH : 0),	\
		.ext_len = (opext_len) +				\
			   (SW_XRC_REQ(opflags) ? STELLAR_XRCETH_LEN : 0), \
	}

static const struct stellar_opcode_info stellar_opcodes[256] = {
	SW_RC_XRC(STELLAR_OP_RC_SEND_FIRST, "SEND_FIRST",
		  SW_RC_REQ | SW_SEND_DATA | STELLAR_OPF_FIRST,
		  0, 0),
	SW_RC_XRC(STELLAR_OP_RC_SEND_MIDDLE, "SEND_MIDDLE",
		  SW_RC_REQ | SW_SEND_DATA | STELLAR_OPF_MIDDLE,
		  0, 0),
	SW_RC_XRC(STELLAR_OP_RC_SEND_LAST, "SEND_LAST",
		  SW_RC_REQ | SW_SEND_DATA | STELLAR_OPF_LAST,
		  0, 0),
	SW_RC_XRC(STELLAR_OP_RC_SEND_LAST_WITH_IMMEDIATE,
		  "SEND_LAST_WITH_IMMEDIATE",
		  SW_RC_REQ | SW_SEND_DATA | STELLAR_OPF_LAST |
		  STELLAR_OPF_IMM,
		  STELLAR_EXT_IMMDT, STELLAR_IMMDT_LEN),
	SW_RC_XRC(STELLAR_OP_RC_SEND_ONLY, "SEND_ONLY",
		  SW_RC_REQ | SW_SEND_DATA | STELLAR_OPF_ONLY,
		  0, 0),
	SW_RC_XRC(STELLAR_OP_RC_SEND_ONLY_WITH_IMMEDIATE,
		  "SEND_ONLY_WITH_IMMEDIATE",
		  SW_RC_REQ | SW_SEND_DATA | STELLAR_OPF_ONLY |
		  STELLAR_OPF_IMM,
		  STELLAR_EXT_IMMDT, STELLAR_IMMDT_LEN),
	SW_RC_XRC(STELLAR_OP_RC_RDMA_WRITE_FIRST, "RDMA_WRITE_FIRST",
		  SW_RC_REQ | SW_WRITE_DATA | STELLAR_OPF_FIRST,
		  STELLAR_EXT_RETH, STELLAR_RETH_LEN),
	SW_RC_XRC(STELLAR_OP_RC_RDMA_WRITE_MIDDLE, "RDMA_WRITE_MIDDLE",
		  SW_RC_REQ | SW_WRITE_DATA | STELLAR_OPF_MIDDLE,
		  0, 0),
	SW_RC_XRC(STELLAR_OP_RC_RDMA_WRITE_LAST, "RDMA_WRITE_LAST",
		  SW_RC_REQ | SW_WRITE_DATA | STELLAR_OPF_LAST,
		  0, 0),
	SW_RC_XRC(STELLAR_OP_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
		  "RDMA_WRITE_LAST_WITH_IMMEDIATE",
		  SW_RC_REQ | SW_WRITE_DATA | STELLAR_OPF_LAST |
		  STELLAR_OPF_IMM,
		  STELLAR_EXT_IMMDT, STELLAR_IMMDT_LEN),
	SW_RC_XRC(STELLAR_OP_RC_RDMA_WRITE_ONLY, "RDMA_WRITE_ONLY",
		  SW_RC_REQ | SW_WRITE_DATA | STELLAR_OPF_ONLY,
		  STELLAR_EXT_RETH, STELLAR_RETH_LEN),
	SW_RC_XRC(STELLAR_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
		  "RDMA_WRITE_ONLY_WITH_IMMEDIATE",
		  SW_RC_REQ | SW_WRITE_DATA | STELLAR_OPF_ONLY |
		  STELLAR_OPF_IMM,
		  STELLAR_EXT_RETH | STELLAR_EXT_IMMDT,
		  STELLAR_RETH_LEN + STELLAR_IMMDT_LEN),
	SW_RC_XRC(STELLAR_OP_RC_RDMA_READ_REQUEST, "RDMA_READ_REQUEST",
		  SW_RC_REQ | STELLAR_OPF_READ | STELLAR_OPF_ONLY,
		  STELLAR_EXT_RETH, STELLAR_RETH_LEN),
	SW_RC_XRC(STELLAR_OP_RC_RDMA_READ_RESPONSE_FIRST,
		  "RDMA_READ_RESPONSE_FIRST",
		  SW_READ_DATA | STELLAR_OPF_FIRST,
		  STELLAR_EXT_AETH, STELLAR_AETH_LEN),
	SW_RC_XRC(STELLAR_OP_RC_RDMA_READ_RESPONSE_MIDDLE,
		  "RDMA_READ_RESPONSE_MIDDLE",
		  SW_READ_DATA | STELLAR_OPF_MIDDLE,
		  0, 0),
	SW_RC_XRC(STELLAR_OP_RC_RDMA_READ_RESPONSE_LAST,
		  "RDMA_READ_RESPONSE_LAST",
		  SW_READ_DATA | STELLAR_OPF_LAST,
		  STELLAR_EXT_AETH, STELLAR_AETH_LEN),
	SW_RC_XRC(STELLAR_OP_RC_RDMA_READ_RESPONSE_ONLY,
		  "RDMA_READ_RESPONSE_ONLY",
		  SW_READ_DATA | STELLAR_OPF_ONLY,
		  STELLAR_EXT_AETH, STELLAR_AETH_LEN),
	SW_RC_XRC(STELLAR_OP_RC_ACKNOWLEDGE, "ACKNOWLEDGE",
		  STELLAR_OPF_RESPONSE | STELLAR_OPF_ONLY,
		  STELLAR_EXT_AETH, STELLAR_AETH_LEN),
	SW_RC_XRC(STELLAR_OP_RC_ATOMIC_ACKNOWLEDGE, "ATOMIC_ACKNOWLEDGE",
		  STELLAR_OPF_RESPONSE | STELLAR_OPF_ATOMIC | STELLAR_OPF_ONLY,
		  STELLAR_EXT_AETH | STELLAR_EXT_ATMACK,
		  STELLAR_AETH_LEN + STELLAR_ATMACK_LEN),
	SW_RC_XRC(STELLAR_OP_RC_COMPARE_SWAP, "COMPARE_SWAP",
		  SW_RC_REQ | STELLAR_OPF_ATOMIC | STELLAR_OPF_ONLY,
		  STELLAR_EXT_ATMETH, STELLAR_ATMETH_LEN),
	SW_RC_XRC(STELLAR_OP_RC_FETCH_ADD, "FETCH_ADD",
		  SW_RC_REQ | STELLAR_OPF_ATOMIC | STELLAR_OPF_ONLY,
		  STELLAR_EXT_ATMETH, STELLAR_ATMETH_LEN),
	SW_RC_XRC(STELLAR_OP_RC_SEND_LAST_WITH_INVALIDATE,
		  "SEND_LAST_WITH_INVALIDATE",
		  SW_RC_REQ | SW_SEND_DATA | STELLAR_OPF_LAST |
		  STELLAR_OPF_INV,
		  STELLAR_EXT_IETH, STELLAR_IETH_LEN),
	SW_RC_XRC(STELLAR_OP_RC_SEND_ONLY_WITH_INVALIDATE,
		  "SEND_ONLY_WITH_INVALIDATE",
		  SW_RC_REQ | SW_SEND_DATA | STELLAR_OPF_ONLY |
		  STELLAR_OPF_INV,
		  STELLAR_EXT_IETH, STELLAR_IETH_LEN),
	SW_RC_XRC(STELLAR_OP_RC_ATOMIC_WRITE, "ATOMIC_WRITE",
		  SW_RC_REQ | STELLAR_OPF_ATOMIC_WRITE | STELLAR_OPF_PAYLOAD |
		  STELLAR_OPF_ONLY,
		  STELLAR_EXT_RETH, STELLAR_RETH_LEN),

	[STELLAR_OP_UC_SEND_FIRST] = {
		.name = "UC_SEND_FIRST", .qp_class = STELLAR_QPC_UC,
		.flags = SW_UC_REQ | SW_SEND_DATA | STELLAR_OPF_FIRST,
	},
	[STELLAR_OP_UC_SEND_MIDDLE] = {
		.name = "UC_SEND_MIDDLE", .qp_class = STELLAR_QPC_UC,
		.flags = SW_UC_REQ | SW_SEND_DATA | STELLAR_OPF_MIDDLE,
	},
	[STELLAR_OP_UC_SEND_LAST] = {
		.name = "UC_SEND_LAST", .qp_class = STELLAR_QPC_UC,
		.flags = SW_UC_REQ | SW_SEND_DATA | STELLAR_OPF_LAST,
	},
	[STELLAR_OP_UC_SEND_LAST_WITH_IMMEDIATE] = {
		.name = "UC_SEND_LAST_WITH_IMMEDIATE", .qp_class = STELLAR_QPC_UC,
		.flags = SW_UC_REQ | SW_SEND_DATA | STELLAR_OPF_LAST |
			 STELLAR_OPF_IMM,
		.ext = STELLAR_EXT_IMMDT, .ext_len = STELLAR_IMMDT_LEN,
	},
	[STELLAR_OP_UC_SEND_ONLY] = {
		.name = "UC_SEND_ONLY", .qp_class = STELLAR_QPC_UC,
		.flags = SW_UC_REQ | SW_SEND_DATA | STELLAR_OPF_ONLY,
	},
	[STELLAR_OP_UC_SEND_ONLY_WITH_IMMEDIATE] = {
		.name = "UC_SEND_ONLY_WITH_IMMEDIATE", .qp_class = STELLAR_QPC_UC,
		.flags = SW_UC_REQ | SW_SEND_DATA | STELLAR_OPF_ONLY |
			 STELLAR_OPF_IMM,
		.ext = STELLAR_EXT_IMMDT, .ext_len = STELLAR_IMMDT_LEN,
	},
	[STELLAR_OP_UC_RDMA_WRITE_FIRST] = {
		.name = "UC_RDMA_WRITE_FIRST", .qp_class = STELLAR_QPC_UC,
		.flags = SW_UC_REQ | SW_WRITE_DATA | STELLAR_OPF_FIRST,
		.ext = STELLAR_EXT_RETH, .ext_len = STELLAR_RETH_LEN,
	},
	[STELLAR_OP_UC_RDMA_WRITE_MIDDLE] = {
		.name = "UC_RDMA_WRITE_MIDDLE", .qp_class = STELLAR_QPC_UC,
		.flags = SW_UC_REQ | SW_WRITE_DATA | STELLAR_OPF_MIDDLE,
	},
	[STELLAR_OP_UC_RDMA_WRITE_LAST] = {
		.name = "UC_RDMA_WRITE_LAST", .qp_class = STELLAR_QPC_UC,
		.flags = SW_UC_REQ | SW_WRITE_DATA | STELLAR_OPF_LAST,
	},
	[STELLAR_OP_UC_RDMA_WRITE_LAST_WITH_IMMEDIATE] = {
		.name = "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE",
		.qp_class = STELLAR_QPC_UC,
		.flags = SW_UC_REQ | SW_WRITE_DATA | STELLAR_OPF_LAST |
			 STELLAR_OPF_IMM,
		.ext = STELLAR_EXT_IMMDT, .ext_len = STELLAR_IMMDT_LEN,
	},
	[STELLAR_OP_UC_RDMA_WRITE_ONLY] = {
		.name = "UC_RDMA_WRITE_ONLY", .qp_class = STELLAR_QPC_UC,
		.flags = SW_UC_REQ | SW_WRITE_DATA | STELLAR_OPF_ONLY,
		.ext = STELLAR_EXT_RETH, .ext_len = STELLAR_RETH_LEN,
	},
	[STELLAR_OP_UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE] = {
		.name = "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE",
		.qp_class = STELLAR_QPC_UC,
		.flags = SW_UC_REQ | SW_WRITE_DATA | STELLAR_OPF_ONLY |
			 STELLAR_OPF_IMM,
		.ext = STELLAR_EXT_RETH | STELLAR_EXT_IMMDT,
		.ext_len = STELLAR_RETH_LEN + STELLAR_IMMDT_LEN,
	},

	[STELLAR_OP_UD_SEND_ONLY] = {
		.name = "UD_SEND_ONLY", .qp_class = STELLAR_QPC_UD,
		.flags = STELLAR_OPF_REQUEST | SW_SEND_DATA | STELLAR_OPF_ONLY,
		.ext = STELLAR_EXT_DETH, .ext_len = STELLAR_DETH_LEN,
	},
	[STELLAR_OP_UD_SEND_ONLY_WITH_IMMEDIATE] = {
		.name = "UD_SEND_ONLY_WITH_IMMEDIATE", .qp_class = STELLAR_QPC_UD,
		.flags = STELLAR_OPF_REQUEST | SW_SEND_DATA | STELLAR_OPF_ONLY |
			 STELLAR_OPF_IMM,
		.ext = STELLAR_EXT_DETH | STELLAR_EXT_IMMDT,
		.ext_len = STELLAR_DETH_LEN + STELLAR_IMMDT_LEN,
	},
	/* RoCEv2 annex A17: BTH (BECN set) and 16 reserved bytes. */
	[STELLAR_OP_CNP] = {
		.name = "CNP", .qp_class = STELLAR_QPC_CNP,
		.ext_len = STELLAR_CNP_RSVD_LEN,
	},
};

/**
 * stellar_opcode_info() - look up the wire properties of a BTH opcode
 * @opcode: BTH OpCode
 *
 * Return: the opcode's description, or NULL if stellar does not support it
 * (RD, reserved and vendor opcodes).
 */
const struct stellar_opcode_info *stellar_opcode_info(u8 opcode)
{
	const struct stellar_opcode_info *info = &stellar_opcodes[opcode];

	return info->name ? info : NULL;
}

/**
 * stellar_hdr_len() - length of the BTH plus extension headers of an opcode
 * @opcode: BTH OpCode
 *
 * Return: the offset of the payload, or 0 if @opcode is unsupported.
 */
u32 stellar_hdr_len(u8 opcode)
{
	const struct stellar_opcode_info *info = stellar_opcode_info(opcode);

	return info ? STELLAR_BTH_LEN + info->ext_len : 0;
}

/**
 * stellar_xhdr_len() - length of the stellar header an opcode may carry
 * @opcode: BTH OpCode
 *
 * RC SEND and WRITE packets may carry a placement header, RC ACKs a
 * selective ACK header; no other packet has a stellar header.
 *
 * Return: its length in bytes, 0 if @opcode has none.
 */
u32 stellar_xhdr_len(u8 opcode)
{
	const struct stellar_opcode_info *info = stellar_opcode_info(opcode);

	if (!info || info->qp_class != STELLAR_QPC_RC)
		return 0;
	if (opcode == STELLAR_OP_RC_ACKNOWLEDGE)
		return STELLAR_SACK_LEN;
	if (info->flags & (STELLAR_OPF_SEND | STELLAR_OPF_WRITE))
		return STELLAR_XPH_LEN;
	return 0;
}

/**
 * stellar_pkt_hdr_len() - header length of a packet to build
 * @pkt: its fields; @pkt->xhdr adds the opcode's stellar header
 *
 * Return: the payload offset, 0 if the opcode is unsupported or has no
 * stellar header although @pkt->xhdr asks for one.
 */
u32 stellar_pkt_hdr_len(const struct stellar_pkt *pkt)
{
	u32 len = stellar_hdr_len(pkt->opcode);
	u32 xlen = stellar_xhdr_len(pkt->opcode);

	if (!len || !pkt->xhdr)
		return len;
	return xlen ? len + xlen : 0;
}

const char *stellar_rx_verdict_name(enum stellar_rx_verdict verdict)
{
	switch (verdict) {
	case STELLAR_RX_OK:
		return "ok";
	case STELLAR_RX_TRUNCATED:
		return "truncated";
	case STELLAR_RX_BAD_VERSION:
		return "bad transport version";
	case STELLAR_RX_BAD_OPCODE:
		return "unsupported opcode";
	case STELLAR_RX_BAD_LENGTH:
		return "bad payload length";
	}
	return "unknown verdict";
}

static u32 sw_get_be32(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

static u64 sw_get_be64(const u8 *p)
{
	return (u64)sw_get_be32(p) << 32 | sw_get_be32(p + 4);
}

static void sw_put_be32(u8 *p, u32 v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static void sw_put_be64(u8 *p, u64 v)
{
	sw_put_be32(p, v >> 32);
	sw_put_be32(p + 4, (u32)v);
}

static void sw_parse_bth(const u8 *p, struct stellar_pkt *pkt)
{
	u32 w0 = sw_get_be32(p);
	u32 w1 = sw_get_be32(p + 4);
	u32 w2 = sw_get_be32(p + 8);

	pkt->opcode = FIELD_GET(STELLAR_BTH_OPCODE, w0);
	pkt->se = FIELD_GET(STELLAR_BTH_SE, w0);
	pkt->migreq = FIELD_GET(STELLAR_BTH_MIGREQ, w0);
	pkt->pad_count = FIELD_GET(STELLAR_BTH_PADCNT, w0);
	pkt->tver = FIELD_GET(STELLAR_BTH_TVER_MASK, w0);
	pkt->pkey = FIELD_GET(STELLAR_BTH_PKEY, w0);
	pkt->fecn = FIELD_GET(STELLAR_BTH_FECN, w1);
	pkt->becn = FIELD_GET(STELLAR_BTH_BECN, w1);
	pkt->dest_qpn = FIELD_GET(STELLAR_BTH_QPN, w1);
	pkt->ack_req = FIELD_GET(STELLAR_BTH_ACKREQ, w2);
	pkt->psn = FIELD_GET(STELLAR_BTH_PSN, w2);
	pkt->xcap = FIELD_GET(STELLAR_BTH_XCAP, w2);
	pkt->xhdr = FIELD_GET(STELLAR_BTH_XHDR, w2);
	pkt->xecho = FIELD_GET(STELLAR_BTH_XECHO, w2);
}

static void sw_build_bth(u8 *p, const struct stellar_pkt *pkt)
{
	sw_put_be32(p, FIELD_PREP(STELLAR_BTH_OPCODE, pkt->opcode) |
		    FIELD_PREP(STELLAR_BTH_SE, pkt->se) |
		    FIELD_PREP(STELLAR_BTH_MIGREQ, pkt->migreq) |
		    FIELD_PREP(STELLAR_BTH_PADCNT, pkt->pad_count) |
		    FIELD_PREP(STELLAR_BTH_TVER_MASK, pkt->tver) |
		    FIELD_PREP(STELLAR_BTH_PKEY, pkt->pkey));
	sw_put_be32(p + 4, FIELD_PREP(STELLAR_BTH_FECN, pkt->fecn) |
		    FIELD_PREP(STELLAR_BTH_BECN, pkt->becn) |
		    FIELD_PREP(STELLAR_BTH_QPN, pkt->dest_qpn));
	sw_put_be32(p + 8, FIELD_PREP(STELLAR_BTH_ACKREQ, pkt->ack_req) |
		    FIELD_PREP(STELLAR_BTH_XCAP, pkt->xcap) |
		    FIELD_PREP(STELLAR_BTH_XHDR, pkt->xhdr) |
		    FIELD_PREP(STELLAR_BTH_XECHO, pkt->xecho) |
		    FIELD_PREP(STELLAR_BTH_PSN, pkt->psn));
}

/* Extension headers, in wire order; each returns the end of its header. */
static const u8 *sw_parse_deth(const u8 *p, struct stellar_pkt *pkt)
{
	pkt->deth.qkey = sw_get_be32(p);
	pkt->deth.src_qpn = FIELD_GET(STELLAR_DETH_SRCQP, sw_get_be32(p + 4));
	return p + STELLAR_DETH_LEN;
}

static const u8 *sw_parse_reth(const u8 *p, struct stellar_pkt *pkt)
{
	pkt->reth.va = sw_get_be64(p);
	pkt->reth.rkey = sw_get_be32(p + 8);
	pkt->reth.len = sw_get_be32(p + 12);
	return p + STELLAR_RETH_LEN;
}

static const u8 *sw_parse_atmeth(const u8 *p, struct stellar_pkt *pkt)
{
	pkt->atomic.va = sw_get_be64(p);
	pkt->atomic.rkey = sw_get_be32(p + 8);
	pkt->atomic.swap_add = sw_get_be64(p + 12);
	pkt->atomic.compare = sw_get_be64(p + 20);
	return p + STELLAR_ATMETH_LEN;
}

static const u8 *sw_parse_aeth(const u8 *p, struct stellar_pkt *pkt)
{
	u32 aeth = sw_get_be32(p);

	pkt->aeth.syndrome = FIELD_GET(STELLAR_AETH_SYNDROME, aeth);
	pkt->aeth.msn = FIELD_GET(STELLAR_AETH_MSN, aeth);
	return p + STELLAR_AETH_LEN;
}

static void sw_parse_xhdr(const u8 *p, struct stellar_pkt *pkt)
{
	if (pkt->opcode == STELLAR_OP_RC_ACKNOWLEDGE) {
		u32 word = sw_get_be32(p);

		pkt->sack.base = FIELD_GET(STELLAR_SACK_BASE, word);
		pkt->sack.newest = (s16)FIELD_GET(STELLAR_SACK_NEWEST, word);
		memcpy(pkt->sack.bitmap, p + 4, sizeof(pkt->sack.bitmap));
		return;
	}
	pkt->xph.offset = sw_get_be32(p);
	pkt->xph.rmsn = sw_get_be32(p + 4);
	pkt->xph.va = sw_get_be64(p + 8);
	pkt->xph.rkey = sw_get_be32(p + 16);
}

static void sw_parse_ext(const u8 *p, struct stellar_pkt *pkt)
{
	if (pkt->ext & STELLAR_EXT_XRCETH) {
		pkt->xrc_srqn = FIELD_GET(STELLAR_XRCETH_SRQN, sw_get_be32(p));
		p += STELLAR_XRCETH_LEN;
	}
	if (pkt->ext & STELLAR_EXT_DETH)
		p = sw_parse_deth(p, pkt);
	if (pkt->ext & STELLAR_EXT_RETH)
		p = sw_parse_reth(p, pkt);
	if (pkt->ext & STELLAR_EXT_ATMETH)
		p = sw_parse_atmeth(p, pkt);
	if (pkt->ext & STELLAR_EXT_AETH)
		p = sw_parse_aeth(p, pkt);
	if (pkt->ext & STELLAR_EXT_ATMACK) {
		pkt->atomic_ack_orig = sw_get_be64(p);
		p += STELLAR_ATMACK_LEN;
	}
	if (pkt->ext & STELLAR_EXT_IMMDT) {
		memcpy(&pkt->imm_data, p, STELLAR_IMMDT_LEN);
		p += STELLAR_IMMDT_LEN;
	}
	if (pkt->ext & STELLAR_EXT_IETH) {
		pkt->ieth_rkey = sw_get_be32(p);
		p += STELLAR_IETH_LEN;
	}
	if (pkt->ext & STELLAR_EXT_X)
		sw_parse_xhdr(p, pkt);
}

/*
 * The stellar BTH bits mean something on RC packets only; elsewhere they
 * are reserved bits and ignored.  Return: the stellar header's length, or
 * STELLAR_RX_BAD_OPCODE in *@verdict if the opcode cannot have one.
 */
static u32 sw_xhdr_check(const struct stellar_opcode_info *info,
			 struct stellar_pkt *pkt,
			 enum stellar_rx_verdict *verdict)
{
	u32 xlen;

	*verdict = STELLAR_RX_OK;
	if (info->qp_class != STELLAR_QPC_RC) {
		pkt->xcap = false;
		pkt->xhdr = false;
		pkt->xecho = false;
		return 0;
	}
	if (!pkt->xhdr)
		return 0;
	xlen = stellar_xhdr_len(pkt->opcode);
	if (!xlen)
		*verdict = STELLAR_RX_BAD_OPCODE;
	return xlen;
}

/*
 * @data_len counts the bytes between the headers and the ICRC: payload
 * plus pad.  Senders pad every payload to a multiple of 4, pad only the
 * last packet of a message, and fill first and middle packets to the path
 * MTU.
 */
static enum stellar_rx_verdict
sw_check_data_len(const struct stellar_opcode_info *info, u8 pad_count,
		  u32 data_len)
{
	if (data_len % 4)
		return STELLAR_RX_BAD_LENGTH;
	if (!(info->flags & STELLAR_OPF_PAYLOAD))
		return data_len || pad_count ? STELLAR_RX_BAD_LENGTH :
					       STELLAR_RX_OK;
	if (pad_count > data_len)
		return STELLAR_RX_BAD_LENGTH;
	if ((info->flags & (STELLAR_OPF_FIRST | STELLAR_OPF_MIDDLE)) &&
	    (pad_count || !data_len))
		return STELLAR_RX_BAD_LENGTH;
	return STELLAR_RX_OK;
}

/**
 * stellar_parse_packet() - validate and decode a RoCEv2 transport packet
 * @bth: the UDP payload, starting with the BTH
 * @len: UDP payload length in bytes, ICRC included
 * @pkt: decoded packet, in host byte order
 *
 * Reads nothing beyond @len bytes from @bth, whatever they contain.  Checks
 * the transport version, that the opcode is supported and that the length
 * fits the opcode's headers, pad and ICRC.  Does not check the ICRC, the
 * P_Key, the QP or the PSN.
 *
 * Return: STELLAR_RX_OK with @pkt filled in, else why the packet must be
 * dropped; @pkt then holds what was decoded before the error.
 */
enum stellar_rx_verdict stellar_parse_packet(const u8 *bth, u32 len,
					     struct stellar_pkt *pkt)
{
	const struct stellar_opcode_info *info;
	enum stellar_rx_verdict verdict;
	u32 data_len, xlen;

	memset(pkt, 0, sizeof(*pkt));
	if (len < STELLAR_BTH_LEN)
		return STELLAR_RX_TRUNCATED;
	sw_parse_bth(bth, pkt);
	if (pkt->tver != STELLAR_BTH_TVER)
		return STELLAR_RX_BAD_VERSION;
	info = stellar_opcode_info(pkt->opcode);
	if (!info)
		return STELLAR_RX_BAD_OPCODE;

	xlen = sw_xhdr_check(info, pkt, &verdict);
	if (verdict != STELLAR_RX_OK)
		return verdict;
	pkt->hdr_len = STELLAR_BTH_LEN + info->ext_len + xlen;
	if (len < pkt->hdr_len + STELLAR_ICRC_LEN)
		return STELLAR_RX_TRUNCATED;
	data_len = len - pkt->hdr_len - STELLAR_ICRC_LEN;
	verdict = sw_check_data_len(info, pkt->pad_count, data_len);
	if (verdict != STELLAR_RX_OK)
		return verdict;

	pkt->payload_len = data_len - pkt->pad_count;
	pkt->ext = info->ext | (xlen ? STELLAR_EXT_X : 0);
	sw_parse_ext(bth + STELLAR_BTH_LEN, pkt);
	return STELLAR_RX_OK;
}

static u8 *sw_build_atmeth(u8 *p, const struct stellar_pkt *pkt)
{
	sw_put_be64(p, pkt->atomic.va);
	sw_put_be32(p + 8, pkt->atomic.rkey);
	sw_put_be64(p + 12, pkt->atomic.swap_add);
	sw_put_be64(p + 20, pkt->atomic.compare);
	return p + STELLAR_ATMETH_LEN;
}

static u8 *sw_build_reth(u8 *p, const struct stellar_pkt *pkt)
{
	sw_put_be64(p, pkt->reth.va);
	sw_put_be32(p + 8, pkt->reth.rkey);
	sw_put_be32(p + 12, pkt->reth.len);
	return p + STELLAR_RETH_LEN;
}

static u8 *sw_build_deth(u8 *p, const struct stellar_pkt *pkt)
{
	sw_put_be32(p, pkt->deth.qkey);
	sw_put_be32(p + 4, FIELD_PREP(STELLAR_DETH_SRCQP, pkt->deth.src_qpn));
	return p + STELLAR_DETH_LEN;
}

static void sw_build_xhdr(u8 *p, const struct stellar_pkt *pkt)
{
	if (pkt->opcode == STELLAR_OP_RC_ACKNOWLEDGE) {
		sw_put_be32(p, FIELD_PREP(STELLAR_SACK_BASE, pkt->sack.base) |
			       FIELD_PREP(STELLAR_SACK_NEWEST,
					  (u16)pkt->sack.newest));
		memcpy(p + 4, pkt->sack.bitmap, sizeof(pkt->sack.bitmap));
		return;
	}
	sw_put_be32(p, pkt->xph.offset);
	sw_put_be32(p + 4, pkt->xph.rmsn);
	sw_put_be64(p + 8, pkt->xph.va);
	sw_put_be32(p + 16, pkt->xph.rkey);
}

static void sw_build_ext(u8 *p, u16 ext, const struct stellar_pkt *pkt)
{
	if (ext & STELLAR_EXT_XRCETH) {
		sw_put_be32(p, FIELD_PREP(STELLAR_XRCETH_SRQN, pkt->xrc_srqn));
		p += STELLAR_XRCETH_LEN;
	}
	if (ext & STELLAR_EXT_DETH)
		p = sw_build_deth(p, pkt);
	if (ext & STELLAR_EXT_RETH)
		p = sw_build_reth(p, pkt);
	if (ext & STELLAR_EXT_ATMETH)
		p = sw_build_atmeth(p, pkt);
	if (ext & STELLAR_EXT_AETH) {
		sw_put_be32(p, FIELD_PREP(STELLAR_AETH_SYNDROME,
					  pkt->aeth.syndrome) |
			    FIELD_PREP(STELLAR_AETH_MSN, pkt->aeth.msn));
		p += STELLAR_AETH_LEN;
	}
	if (ext & STELLAR_EXT_ATMACK) {
		sw_put_be64(p, pkt->atomic_ack_orig);
		p += STELLAR_ATMACK_LEN;
	}
	if (ext & STELLAR_EXT_IMMDT) {
		memcpy(p, &pkt->imm_data, STELLAR_IMMDT_LEN);
		p += STELLAR_IMMDT_LEN;
	}
	if (ext & STELLAR_EXT_IETH) {
		sw_put_be32(p, pkt->ieth_rkey);
		p += STELLAR_IETH_LEN;
	}
	if (ext & STELLAR_EXT_X)
		sw_build_xhdr(p, pkt);
}

/**
 * stellar_build_headers() - write the BTH and extension headers of a packet
 * @bth: where the BTH goes; room for stellar_hdr_len(@pkt->opcode) bytes
 *	 (at most STELLAR_MAX_HDR_LEN)
 * @pkt: the header fields, in host byte order
 *
 * Writes the extension headers that @pkt->opcode calls for, whatever
 * @pkt->ext says, then the stellar header if @pkt->xhdr is set, and the
 * BTH fields as given (24-bit fields masked; @pkt->xcap, @pkt->xhdr and
 * @pkt->xecho only on RC opcodes).  The caller sets @pkt->pad_count (see
 * stellar_pad_count()), appends payload, zeroed pad and room for the ICRC.
 *
 * Return: bytes written (stellar_pkt_hdr_len(), at most
 * STELLAR_MAX_XHDR_LEN), the payload offset; 0 if the opcode is
 * unsupported or has no stellar header but @pkt->xhdr is set, in which
 * case nothing is written.
 */
u32 stellar_build_headers(u8 *bth, const struct stellar_pkt *pkt)
{
	const struct stellar_opcode_info *info = stellar_opcode_info(pkt->opcode);
	u32 len = stellar_pkt_hdr_len(pkt);
	struct stellar_pkt rc_bits;

	if (!len)
		return 0;
	if (info->qp_class != STELLAR_QPC_RC &&
	    (pkt->xcap || pkt->xhdr || pkt->xecho)) {
		rc_bits = *pkt;
		rc_bits.xcap = false;
		rc_bits.xhdr = false;
		rc_bits.xecho = false;
		pkt = &rc_bits;
	}
	sw_build_bth(bth, pkt);
	if (pkt->opcode == STELLAR_OP_CNP)
		memset(bth + STELLAR_BTH_LEN, 0, STELLAR_CNP_RSVD_LEN);
	sw_build_ext(bth + STELLAR_BTH_LEN,
		     info->ext | (pkt->xhdr ? STELLAR_EXT_X : 0), pkt);
	return len;
}

/*
 * The ICRC covers the IP, UDP and BTH headers with the fields that routers
 * may rewrite set to all ones: IPv4 TOS, TTL and header checksum; IPv6
 * traffic class, flow label and hop limit; UDP checksum; the BTH byte
 * holding FECN, BECN and reserved bits.
 */
static void sw_icrc_mask_ipv4(u8 *ip)
{
	ip[1] = 0xff;			/* TOS (DSCP, ECN) */
	ip[8] = 0xff;			/* TTL */
	ip[10] = 0xff;			/* header checksum */
	ip[11] = 0xff;
}

static void sw_icrc_mask_ipv6(u8 *ip)
{
	ip[0] |= 0x0f;			/* traffic class, high nibble */
	ip[1] = 0xff;			/* traffic class, flow label */
	ip[2] = 0xff;
	ip[3] = 0xff;
	ip[7] = 0xff;			/* hop limit */
}

static u32 sw_icrc_headers(const u8 *l3hdr, bool is_ipv6, const u8 *udphdr,
			   const u8 *bth)
{
	u8 hdrs[STELLAR_IPV6_HDR_LEN + STELLAR_UDP_HDR_LEN + STELLAR_BTH_LEN];
	u32 l3_len = is_ipv6 ? STELLAR_IPV6_HDR_LEN : STELLAR_IPV4_HDR_LEN;
	u8 *udp = hdrs + l3_len;
	u8 *bth_copy = udp + STELLAR_UDP_HDR_LEN;

	memcpy(hdrs, l3hdr, l3_len);
	if (is_ipv6)
		sw_icrc_mask_ipv6(hdrs);
	else
		sw_icrc_mask_ipv4(hdrs);
	memcpy(udp, udphdr, STELLAR_UDP_HDR_LEN);
	udp[6] = 0xff;			/* checksum */
	udp[7] = 0xff;
	memcpy(bth_copy, bth, STELLAR_BTH_LEN);
	bth_copy[4] = 0xff;		/* FECN, BECN, resv6 */

	return stellar_crc32_le(STELLAR_ICRC_SEED, hdrs,
				l3_len + STELLAR_UDP_HDR_LEN + STELLAR_BTH_LEN);
}

/**
 * stellar_icrc() - compute the RoCEv2 invariant CRC of a packet
 * @l3hdr: the IPv4 header (its first 20 bytes are covered: options are
 *	   not supported, as in rdma_rxe) or the 40-byte IPv6 header
 * @is_ipv6: @l3hdr is an IPv6 header
 * @udphdr: the 8-byte UDP header
 * @bth: the UDP payload, starting with the BTH, contiguous
 * @bth_to_icrc_len: bytes from @bth up to the ICRC: headers, payload, pad
 *
 * CRC-32 over eight 0xff bytes (the absent LRH), the masked IP, UDP and BTH
 * headers, and the rest of the packet up to the ICRC, inverted at the end.
 * None of the buffers is modified.
 *
 * Return: the ICRC in host order, or 0 if @bth_to_icrc_len is shorter than
 * a BTH.  On the wire it is stored least significant byte first.
 */
u32 stellar_icrc(const u8 *l3hdr, bool is_ipv6, const u8 *udphdr,
		 const u8 *bth, u32 bth_to_icrc_len)
{
	u32 crc;

	if (bth_to_icrc_len < STELLAR_BTH_LEN)
		return 0;
	crc = sw_icrc_headers(l3hdr, is_ipv6, udphdr, bth);
	crc = stellar_crc32_le(crc, bth + STELLAR_BTH_LEN,
			       bth_to_icrc_len - STELLAR_BTH_LEN);
	return ~crc;
}

/**
 * stellar_icrc_check() - verify the ICRC at the end of a received packet
 * @l3hdr: IPv4 or IPv6 header, see stellar_icrc()
 * @is_ipv6: @l3hdr is an IPv6 header
 * @udphdr: the UDP header
 * @bth: the UDP payload, starting with the BTH, contiguous
 * @udp_payload_len: bytes at @bth, the trailing ICRC included
 *
 * Return: true if the packet is long enough and its ICRC matches.
 */
bool stellar_icrc_check(const u8 *l3hdr, bool is_ipv6, const u8 *udphdr,
			const u8 *bth, u32 udp_payload_len)
{
	const u8 *icrc_at;
	u32 icrc;

	if (udp_payload_len < STELLAR_BTH_LEN + STELLAR_ICRC_LEN)
		return false;
	icrc_at = bth + udp_payload_len - STELLAR_ICRC_LEN;
	icrc = (u32)icrc_at[0] | (u32)icrc_at[1] << 8 |
	       (u32)icrc_at[2] << 16 | (u32)icrc_at[3] << 24;
	return icrc == stellar_icrc(l3hdr, is_ipv6, udphdr, bth,
				    udp_payload_len - STELLAR_ICRC_LEN);
}

/**
 * stellar_icrc_store() - fill in the ICRC of a packet to be sent
 * @l3hdr: IPv4 or IPv6 header, final but for fields the ICRC masks
 * @is_ipv6: @l3hdr is an IPv6 header
 * @udphdr: the UDP header with its final length
 * @bth: the UDP payload, starting with the BTH, contiguous
 * @udp_payload_len: bytes at @bth, the trailing ICRC included
 *
 * Writes the last four bytes at @bth; does nothing if @udp_payload_len is
 * shorter than a BTH plus ICRC.
 */
void stellar_icrc_store(const u8 *l3hdr, bool is_ipv6, const u8 *udphdr,
			u8 *bth, u32 udp_payload_len)
{
	u8 *icrc_at;
	u32 icrc;

	if (udp_payload_len < STELLAR_BTH_LEN + STELLAR_ICRC_LEN)
		return;
	icrc = stellar_icrc(l3hdr, is_ipv6, udphdr, bth,
			    udp_payload_len - STELLAR_ICRC_LEN);
	icrc_at = bth + udp_payload_len - STELLAR_ICRC_LEN;
	icrc_at[0] = icrc;
	icrc_at[1] = icrc >> 8;
	icrc_at[2] = icrc >> 16;
	icrc_at[3] = icrc >> 24;
}
