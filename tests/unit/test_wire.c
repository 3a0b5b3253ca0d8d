// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * virtio-stellar unit tests: opcode table, RoCEv2 header parser and
 * builder (kernel/stellar_wire.c).
 *
 * Expected values come from the IBTA header layouts, written out byte by
 * byte here rather than through the code under test.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "stellar_wire.h"
#include "test_util.h"

#define F_FIRST		STELLAR_OPF_FIRST
#define F_MIDDLE	STELLAR_OPF_MIDDLE
#define F_LAST		STELLAR_OPF_LAST
#define F_ONLY		STELLAR_OPF_ONLY
#define POSITION_FLAGS	(F_FIRST | F_MIDDLE | F_LAST | F_ONLY)

#define E_DETH		STELLAR_EXT_DETH
#define E_RETH		STELLAR_EXT_RETH
#define E_ATMETH	STELLAR_EXT_ATMETH
#define E_AETH		STELLAR_EXT_AETH
#define E_ATMACK	STELLAR_EXT_ATMACK
#define E_IMMDT		STELLAR_EXT_IMMDT
#define E_IETH		STELLAR_EXT_IETH
#define E_XRC		STELLAR_EXT_XRCETH

/* What the IBTA spec says about each opcode stellar supports. */
struct expected_op {
	uint8_t opcode;
	uint16_t ext;
	uint16_t position;
	bool payload;
	bool request;
};

static const struct expected_op expected_ops[] = {
	/* RC */
	{ 0x00, 0, F_FIRST, true, true },
	{ 0x01, 0, F_MIDDLE, true, true },
	{ 0x02, 0, F_LAST, true, true },
	{ 0x03, E_IMMDT, F_LAST, true, true },
	{ 0x04, 0, F_ONLY, true, true },
	{ 0x05, E_IMMDT, F_ONLY, true, true },
	{ 0x06, E_RETH, F_FIRST, true, true },
	{ 0x07, 0, F_MIDDLE, true, true },
	{ 0x08, 0, F_LAST, true, true },
	{ 0x09, E_IMMDT, F_LAST, true, true },
	{ 0x0a, E_RETH, F_ONLY, true, true },
	{ 0x0b, E_RETH | E_IMMDT, F_ONLY, true, true },
	{ 0x0c, E_RETH, F_ONLY, false, true },
	{ 0x0d, E_AETH, F_FIRST, true, false },
	{ 0x0e, 0, F_MIDDLE, true, false },
	{ 0x0f, E_AETH, F_LAST, true, false },
	{ 0x10, E_AETH, F_ONLY, true, false },
	{ 0x11, E_AETH, F_ONLY, false, false },
	{ 0x12, E_AETH | E_ATMACK, F_ONLY, false, false },
	{ 0x13, E_ATMETH, F_ONLY, false, true },
	{ 0x14, E_ATMETH, F_ONLY, false, true },
	{ 0x16, E_IETH, F_LAST, true, true },
	{ 0x17, E_IETH, F_ONLY, true, true },
	{ 0x1d, E_RETH, F_ONLY, true, true },	/* ATOMIC WRITE */
	/* UC */
	{ 0x20, 0, F_FIRST, true, true },
	{ 0x21, 0, F_MIDDLE, true, true },
	{ 0x22, 0, F_LAST, true, true },
	{ 0x23, E_IMMDT, F_LAST, true, true },
	{ 0x24, 0, F_ONLY, true, true },
	{ 0x25, E_IMMDT, F_ONLY, true, true },
	{ 0x26, E_RETH, F_FIRST, true, true },
	{ 0x27, 0, F_MIDDLE, true, true },
	{ 0x28, 0, F_LAST, true, true },
	{ 0x29, E_IMMDT, F_LAST, true, true },
	{ 0x2a, E_RETH, F_ONLY, true, true },
	{ 0x2b, E_RETH | E_IMMDT, F_ONLY, true, true },
	/* UD */
	{ 0x64, E_DETH, F_ONLY, true, true },
	{ 0x65, E_DETH | E_IMMDT, F_ONLY, true, true },
	/* XRC: requests carry an XRCETH first, responses do not */
	{ 0xa0, E_XRC, F_FIRST, true, true },
	{ 0xa1, E_XRC, F_MIDDLE, true, true },
	{ 0xa2, E_XRC, F_LAST, true, true },
	{ 0xa3, E_XRC | E_IMMDT, F_LAST, true, true },
	{ 0xa4, E_XRC, F_ONLY, true, true },
	{ 0xa5, E_XRC | E_IMMDT, F_ONLY, true, true },
	{ 0xa6, E_XRC | E_RETH, F_FIRST, true, true },
	{ 0xa7, E_XRC, F_MIDDLE, true, true },
	{ 0xa8, E_XRC, F_LAST, true, true },
	{ 0xa9, E_XRC | E_IMMDT, F_LAST, true, true },
	{ 0xaa, E_XRC | E_RETH, F_ONLY, true, true },
	{ 0xab, E_XRC | E_RETH | E_IMMDT, F_ONLY, true, true },
	{ 0xac, E_XRC | E_RETH, F_ONLY, false, true },
	{ 0xad, E_AETH, F_FIRST, true, false },
	{ 0xae, 0, F_MIDDLE, true, false },
	{ 0xaf, E_AETH, F_LAST, true, false },
	{ 0xb0, E_AETH, F_ONLY, true, false },
	{ 0xb1, E_AETH, F_ONLY, false, false },
	{ 0xb2, E_AETH | E_ATMACK, F_ONLY, false, false },
	{ 0xb3, E_XRC | E_ATMETH, F_ONLY, false, true },
	{ 0xb4, E_XRC | E_ATMETH, F_ONLY, false, true },
	{ 0xb6, E_XRC | E_IETH, F_LAST, true, true },
	{ 0xb7, E_XRC | E_IETH, F_ONLY, true, true },
	{ 0xbd, E_XRC | E_RETH, F_ONLY, true, true },	/* ATOMIC WRITE */
};

static const struct expected_op *find_expected(unsigned int opcode)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(expected_ops); i++)
		if (expected_ops[i].opcode == opcode)
			return &expected_ops[i];
	return NULL;
}

static unsigned int ext_bytes(uint16_t ext)
{
	return (ext & E_XRC ? 4 : 0) + (ext & E_DETH ? 8 : 0) + (ext & E_RETH ? 16 : 0) +
	       (ext & E_ATMETH ? 28 : 0) + (ext & E_AETH ? 4 : 0) +
	       (ext & E_ATMACK ? 8 : 0) + (ext & E_IMMDT ? 4 : 0) +
	       (ext & E_IETH ? 4 : 0);
}

static void test_header_lengths(void **state)
{
	(void)state;
	assert_int_equal(STELLAR_BTH_LEN, 12);
	assert_int_equal(STELLAR_RETH_LEN, 16);
	assert_int_equal(STELLAR_AETH_LEN, 4);
	assert_int_equal(STELLAR_ATMETH_LEN, 28);
	assert_int_equal(STELLAR_ATMACK_LEN, 8);
	assert_int_equal(STELLAR_IMMDT_LEN, 4);
	assert_int_equal(STELLAR_IETH_LEN, 4);
	assert_int_equal(STELLAR_DETH_LEN, 8);
	assert_int_equal(STELLAR_XRCETH_LEN, 4);
	assert_int_equal(STELLAR_ICRC_LEN, 4);
	assert_int_equal(STELLAR_MAX_HDR_LEN, 44);
}

static void test_opcode_values(void **state)
{
	(void)state;
	assert_int_equal(STELLAR_OP_RC_SEND_FIRST, 0x00);
	assert_int_equal(STELLAR_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 0x0b);
	assert_int_equal(STELLAR_OP_RC_RDMA_READ_REQUEST, 0x0c);
	assert_int_equal(STELLAR_OP_RC_ACKNOWLEDGE, 0x11);
	assert_int_equal(STELLAR_OP_RC_ATOMIC_ACKNOWLEDGE, 0x12);
	assert_int_equal(STELLAR_OP_RC_COMPARE_SWAP, 0x13);
	assert_int_equal(STELLAR_OP_RC_FETCH_ADD, 0x14);
	assert_int_equal(STELLAR_OP_RC_SEND_LAST_WITH_INVALIDATE, 0x16);
	assert_int_equal(STELLAR_OP_RC_SEND_ONLY_WITH_INVALIDATE, 0x17);
	assert_int_equal(STELLAR_OP_UC_SEND_FIRST, 0x20);
	assert_int_equal(STELLAR_OP_UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 0x2b);
	assert_int_equal(STELLAR_OP_UD_SEND_ONLY, 0x64);
	assert_int_equal(STELLAR_OP_UD_SEND_ONLY_WITH_IMMEDIATE, 0x65);
	assert_int_equal(STELLAR_OP_XRC(STELLAR_OP_RC_SEND_FIRST), 0xa0);
	assert_int_equal(STELLAR_OP_XRC(STELLAR_OP_RC_ACKNOWLEDGE), 0xb1);
	assert_int_equal(STELLAR_OP_XRC(STELLAR_OP_RC_ATOMIC_WRITE), 0xbd);
}

static void check_table_entry(unsigned int opcode,
			      const struct stellar_opcode_info *info,
			      const struct expected_op *exp)
{
	unsigned int qp_class = opcode >> 5 == 0 ? STELLAR_QPC_RC :
				opcode >> 5 == 1 ? STELLAR_QPC_UC :
				opcode >> 5 == 5 ? STELLAR_QPC_XRC :
						   STELLAR_QPC_UD;

	assert_non_null(info->name);
	assert_int_equal(info->ext, exp->ext);
	assert_int_equal(info->ext_len, ext_bytes(exp->ext));
	assert_int_equal(info->flags & POSITION_FLAGS, exp->position);
	assert_int_equal(!!(info->flags & STELLAR_OPF_PAYLOAD), exp->payload);
	assert_int_equal(!!(info->flags & STELLAR_OPF_REQUEST), exp->request);
	assert_int_equal(!!(info->flags & STELLAR_OPF_RESPONSE),
			 !exp->request);
	assert_int_equal(!!(info->flags & STELLAR_OPF_IMM),
			 !!(exp->ext & E_IMMDT));
	assert_int_equal(!!(info->flags & STELLAR_OPF_INV),
			 !!(exp->ext & E_IETH));
	assert_int_equal(info->qp_class, qp_class);
	/* Only RC and XRC requests are acknowledged. */
	assert_int_equal(!!(info->flags & STELLAR_OPF_ACKED),
			 (qp_class == STELLAR_QPC_RC ||
			  qp_class == STELLAR_QPC_XRC) && exp->request);
	/* XRC's names are RC's with an X in front. */
	if (qp_class == STELLAR_QPC_XRC)
		assert_string_equal(info->name + 1,
				    stellar_opcode_info(opcode & 0x1f)->name);
	assert_int_equal(stellar_hdr_len(opcode), 12 + ext_bytes(exp->ext));
}

static void test_opcode_table(void **state)
{
	unsigned int opcode, supported = 0;

	(void)state;
	for (opcode = 0; opcode < 256; opcode++) {
		const struct stellar_opcode_info *info = stellar_opcode_info(opcode);
		const struct expected_op *exp = find_expected(opcode);

		if (opcode == STELLAR_OP_CNP)
			continue;	/* test_cnp */
		if (!exp) {
			assert_null(info);
			assert_int_equal(stellar_hdr_len(opcode), 0);
			continue;
		}
		assert_non_null(info);
		check_table_entry(opcode, info, exp);
		supported++;
	}
	assert_int_equal(supported, ARRAY_SIZE(expected_ops));
}

static void test_opcode_kinds(void **state)
{
	(void)state;
	assert_true(stellar_opcode_info(0x04)->flags & STELLAR_OPF_SEND);
	assert_true(stellar_opcode_info(0x0a)->flags & STELLAR_OPF_WRITE);
	assert_true(stellar_opcode_info(0x0c)->flags & STELLAR_OPF_READ);
	assert_true(stellar_opcode_info(0x10)->flags & STELLAR_OPF_READ);
	assert_true(stellar_opcode_info(0x13)->flags & STELLAR_OPF_ATOMIC);
	assert_true(stellar_opcode_info(0x12)->flags & STELLAR_OPF_ATOMIC);
	assert_false(stellar_opcode_info(0x11)->flags &
		     (STELLAR_OPF_SEND | STELLAR_OPF_WRITE | STELLAR_OPF_READ |
		      STELLAR_OPF_ATOMIC));
	assert_string_equal(stellar_opcode_info(0x0b)->name,
			    "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE");
}

/* ---- hand-built packets ------------------------------------------------ */

struct bth_fields {
	uint8_t opcode, se, m, pad, tver;
	uint16_t pkey;
	uint8_t fecn, becn;
	uint32_t qpn;
	uint8_t ackreq;
	uint32_t psn;
};

static void put_bth_bytes(uint8_t *p, const struct bth_fields *f)
{
	p[0] = f->opcode;
	p[1] = (uint8_t)(f->se << 7 | f->m << 6 | f->pad << 4 | f->tver);
	p[2] = f->pkey >> 8;
	p[3] = f->pkey & 0xff;
	p[4] = (uint8_t)(f->fecn << 7 | f->becn << 6);
	p[5] = f->qpn >> 16;
	p[6] = f->qpn >> 8;
	p[7] = f->qpn & 0xff;
	p[8] = (uint8_t)(f->ackreq << 7);
	p[9] = f->psn >> 16;
	p[10] = f->psn >> 8;
	p[11] = f->psn & 0xff;
}

static const uint8_t deth_bytes[8] = {
	0x11, 0x22, 0x33, 0x44, 0xff, 0x0a, 0x0b, 0x0c };
static const uint8_t reth_bytes[16] = {
	0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
	0xa1, 0xa2, 0xa3, 0xa4, 0x00, 0x00, 0x10, 0x00 };
static const uint8_t atmeth_bytes[28] = {
	0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80,
	0xb1, 0xb2, 0xb3, 0xb4,
	0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8,
	0xd1, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8 };
static const uint8_t aeth_bytes[4] = { 0x60, 0x12, 0x34, 0x56 };
static const uint8_t atmack_bytes[8] = {
	0xe1, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8 };
static const uint8_t immdt_bytes[4] = { 0xde, 0xad, 0xbe, 0xef };
static const uint8_t ieth_bytes[4] = { 0x0f, 0x1e, 0x2d, 0x3c };
static const uint8_t xrceth_bytes[4] = { 0xff, 0x12, 0x34, 0x56 };

static uint8_t *append(uint8_t *p, const uint8_t *bytes, size_t len)
{
	memcpy(p, bytes, len);
	return p + len;
}

/* Extension headers in the IBTA order; returns their length. */
static size_t put_ext_bytes(uint8_t *start, uint16_t ext)
{
	uint8_t *p = start;

	if (ext & E_XRC)
		p = append(p, xrceth_bytes, sizeof(xrceth_bytes));
	if (ext & E_DETH)
		p = append(p, deth_bytes, sizeof(deth_bytes));
	if (ext & E_RETH)
		p = append(p, reth_bytes, sizeof(reth_bytes));
	if (ext & E_ATMETH)
		p = append(p, atmeth_bytes, sizeof(atmeth_bytes));
	if (ext & E_AETH)
		p = append(p, aeth_bytes, sizeof(aeth_bytes));
	if (ext & E_ATMACK)
		p = append(p, atmack_bytes, sizeof(atmack_bytes));
	if (ext & E_IMMDT)
		p = append(p, immdt_bytes, sizeof(immdt_bytes));
	if (ext & E_IETH)
		p = append(p, ieth_bytes, sizeof(ieth_bytes));
	return (size_t)(p - start);
}

/*
 * A valid packet of @exp's opcode: payload_len bytes of payload (0x5a),
 * zero pad, and an arbitrary ICRC.  Returns its length.
 */
static size_t make_packet(uint8_t *buf, const struct expected_op *exp,
			  uint32_t payload_len, struct bth_fields *bth)
{
	size_t len;

	bth->opcode = exp->opcode;
	bth->pad = (uint8_t)(-payload_len & 3);
	put_bth_bytes(buf, bth);
	len = 12 + put_ext_bytes(buf + 12, exp->ext);
	memset(buf + len, 0x5a, payload_len);
	len += payload_len;
	memset(buf + len, 0, bth->pad);
	len += bth->pad;
	memset(buf + len, 0xc5, 4);
	return len + 4;
}

static uint32_t valid_payload_len(const struct expected_op *exp)
{
	if (!exp->payload)
		return 0;
	return exp->position & (F_FIRST | F_MIDDLE) ? 256 : 13;
}

static void check_ext_fields(const struct stellar_pkt *pkt, uint16_t ext)
{
	uint8_t imm[4];

	assert_int_equal(pkt->ext, ext);
	/* The XRCETH's first byte is reserved. */
	assert_int_equal(pkt->xrc_srqn, ext & E_XRC ? 0x123456 : 0);
	assert_int_equal(pkt->deth.qkey, ext & E_DETH ? 0x11223344 : 0);
	assert_int_equal(pkt->deth.src_qpn, ext & E_DETH ? 0x0a0b0c : 0);
	assert_true(pkt->reth.va ==
		    (ext & E_RETH ? 0x0102030405060708ULL : 0));
	assert_int_equal(pkt->reth.rkey, ext & E_RETH ? 0xa1a2a3a4 : 0);
	assert_int_equal(pkt->reth.len, ext & E_RETH ? 0x1000 : 0);
	assert_true(pkt->atomic.va ==
		    (ext & E_ATMETH ? 0x1020304050607080ULL : 0));
	assert_int_equal(pkt->atomic.rkey, ext & E_ATMETH ? 0xb1b2b3b4 : 0);
	assert_true(pkt->atomic.swap_add ==
		    (ext & E_ATMETH ? 0xc1c2c3c4c5c6c7c8ULL : 0));
	assert_true(pkt->atomic.compare ==
		    (ext & E_ATMETH ? 0xd1d2d3d4d5d6d7d8ULL : 0));
	assert_int_equal(pkt->aeth.syndrome, ext & E_AETH ? 0x60 : 0);
	assert_int_equal(pkt->aeth.msn, ext & E_AETH ? 0x123456 : 0);
	assert_true(pkt->atomic_ack_orig ==
		    (ext & E_ATMACK ? 0xe1e2e3e4e5e6e7e8ULL : 0));
	memcpy(imm, &pkt->imm_data, 4);
	if (ext & E_IMMDT)
		assert_memory_equal(imm, immdt_bytes, 4);
	else
		assert_int_equal(pkt->imm_data, 0);
	assert_int_equal(pkt->ieth_rkey, ext & E_IETH ? 0x0f1e2d3c : 0);
}

static void test_parse_every_opcode(void **state)
{
	struct bth_fields bth = {
		.se = 1, .m = 1, .pkey = 0x8001, .fecn = 1, .becn = 0,
		.qpn = 0xabcdef, .ackreq = 1, .psn = 0xfedcba,
	};
	uint8_t buf[512];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(expected_ops); i++) {
		const struct expected_op *exp = &expected_ops[i];
		uint32_t payload_len = valid_payload_len(exp);
		size_t len = make_packet(buf, exp, payload_len, &bth);
		uint8_t *pkt_bytes = test_exact_copy(buf, len);
		struct stellar_pkt pkt;

		assert_int_equal(stellar_parse_packet(pkt_bytes, (u32)len, &pkt),
				 STELLAR_RX_OK);
		assert_int_equal(pkt.opcode, exp->opcode);
		assert_true(pkt.se);
		assert_true(pkt.migreq);
		assert_int_equal(pkt.pad_count, bth.pad);
		assert_int_equal(pkt.tver, 0);
		assert_int_equal(pkt.pkey, 0x8001);
		assert_true(pkt.fecn);
		assert_false(pkt.becn);
		assert_int_equal(pkt.dest_qpn, 0xabcdef);
		assert_true(pkt.ack_req);
		assert_int_equal(pkt.psn, 0xfedcba);
		assert_int_equal(pkt.hdr_len, 12 + ext_bytes(exp->ext));
		assert_int_equal(pkt.payload_len, payload_len);
		check_ext_fields(&pkt, exp->ext);
		free(pkt_bytes);
	}
}

/* Reserved bits are ignored by the receiver. */
static void test_parse_ignores_reserved_bits(void **state)
{
	struct bth_fields bth = { .qpn = 7, .psn = 9 };
	struct stellar_pkt pkt;
	uint8_t buf[64];
	size_t len;

	(void)state;
	len = make_packet(buf, find_expected(0x64), 4, &bth);
	buf[4] |= 0x3f;		/* resv6 */
	buf[8] |= 0x7f;		/* resv7 */
	buf[16] = 0xff;		/* DETH reserved byte */
	assert_int_equal(stellar_parse_packet(buf, (u32)len, &pkt),
			 STELLAR_RX_OK);
	assert_false(pkt.fecn);
	assert_false(pkt.becn);
	assert_int_equal(pkt.dest_qpn, 7);
	assert_false(pkt.ack_req);
	assert_int_equal(pkt.psn, 9);
	assert_int_equal(pkt.deth.src_qpn, 0x0a0b0c);
}

/* ---- bad packets ------------------------------------------------------- */

static enum stellar_rx_verdict parse_exact(const uint8_t *buf, size_t len)
{
	uint8_t *copy = test_exact_copy(buf, len);
	struct stellar_pkt pkt;
	enum stellar_rx_verdict verdict;

	verdict = stellar_parse_packet(copy, (u32)len, &pkt);
	free(copy);
	return verdict;
}

static void test_bad_version(void **state)
{
	struct bth_fields bth = { 0 };
	uint8_t buf[64];
	size_t len;
	uint8_t tver;

	(void)state;
	for (tver = 1; tver < 16; tver++) {
		bth.tver = tver;
		len = make_packet(buf, find_expected(0x04), 8, &bth);
		assert_int_equal(parse_exact(buf, len), STELLAR_RX_BAD_VERSION);
	}
}

static void test_bad_opcode(void **state)
{
	struct bth_fields bth = { 0 };
	uint8_t buf[128];
	unsigned int opcode;

	(void)state;
	memset(buf, 0, sizeof(buf));
	for (opcode = 0; opcode < 256; opcode++) {
		if (find_expected(opcode) || opcode == STELLAR_OP_CNP)
			continue;
		bth.opcode = (uint8_t)opcode;
		put_bth_bytes(buf, &bth);
		assert_int_equal(parse_exact(buf, 64), STELLAR_RX_BAD_OPCODE);
		assert_int_equal(parse_exact(buf, 12), STELLAR_RX_BAD_OPCODE);
	}
}

static void test_bad_pad(void **state)
{
	struct bth_fields bth = { 0 };
	uint8_t buf[512];
	size_t len;
	uint8_t pad;

	(void)state;
	/* SEND_ONLY without payload but with pad: pad larger than payload */
	for (pad = 1; pad < 4; pad++) {
		len = make_packet(buf, find_expected(0x04), 0, &bth);
		buf[1] = (uint8_t)(pad << 4);
		assert_int_equal(parse_exact(buf, len), STELLAR_RX_BAD_LENGTH);
	}
	/* pad on a first or middle packet */
	len = make_packet(buf, find_expected(0x00), 256, &bth);
	buf[1] = 1 << 4;
	assert_int_equal(parse_exact(buf, len), STELLAR_RX_BAD_LENGTH);
	len = make_packet(buf, find_expected(0x27), 256, &bth);
	buf[1] = 3 << 4;
	assert_int_equal(parse_exact(buf, len), STELLAR_RX_BAD_LENGTH);
	/* pad on an ACK */
	len = make_packet(buf, find_expected(0x11), 0, &bth);
	buf[1] = 2 << 4;
	assert_int_equal(parse_exact(buf, len), STELLAR_RX_BAD_LENGTH);
}

static void test_bad_payload_length(void **state)
{
	struct bth_fields bth = { 0 };
	uint8_t buf[512];
	size_t len;
	static const uint8_t no_payload_ops[] = { 0x0c, 0x11, 0x12, 0x13, 0x14 };
	size_t i;

	(void)state;
	/* payload plus pad not a multiple of 4 */
	len = make_packet(buf, find_expected(0x04), 8, &bth);
	assert_int_equal(parse_exact(buf, len), STELLAR_RX_OK);
	assert_int_equal(parse_exact(buf, len + 1), STELLAR_RX_BAD_LENGTH);
	assert_int_equal(parse_exact(buf, len - 1), STELLAR_RX_BAD_LENGTH);
	/* payload on opcodes that carry none */
	for (i = 0; i < ARRAY_SIZE(no_payload_ops); i++) {
		len = make_packet(buf, find_expected(no_payload_ops[i]), 0, &bth);
		assert_int_equal(parse_exact(buf, len), STELLAR_RX_OK);
		memset(buf + len, 0, 4);
		assert_int_equal(parse_exact(buf, len + 4),
				 STELLAR_RX_BAD_LENGTH);
	}
	/* empty first and middle packets */
	len = make_packet(buf, find_expected(0x06), 0, &bth);
	assert_int_equal(parse_exact(buf, len), STELLAR_RX_BAD_LENGTH);
	len = make_packet(buf, find_expected(0x0e), 0, &bth);
	assert_int_equal(parse_exact(buf, len), STELLAR_RX_BAD_LENGTH);
}

static void test_valid_edge_lengths(void **state)
{
	struct bth_fields bth = { 0 };
	struct stellar_pkt pkt;
	uint8_t buf[64];
	size_t len;
	uint32_t payload_len;

	(void)state;
	for (payload_len = 0; payload_len < 9; payload_len++) {
		len = make_packet(buf, find_expected(0x0a), payload_len, &bth);
		assert_int_equal(stellar_parse_packet(buf, (u32)len, &pkt),
				 STELLAR_RX_OK);
		assert_int_equal(pkt.payload_len, payload_len);
		assert_int_equal(pkt.pad_count, -payload_len & 3);
		assert_int_equal(len, stellar_udp_payload_len(0x0a, payload_len));
	}
	len = make_packet(buf, find_expected(0x11), 0, &bth);
	assert_int_equal(len, 20);
	assert_int_equal(stellar_parse_packet(buf, (u32)len, &pkt),
			 STELLAR_RX_OK);
	assert_int_equal(pkt.payload_len, 0);
}

static void check_garbage_verdict(const uint8_t *bytes, size_t len)
{
	uint8_t *copy = test_exact_copy(bytes, len);
	enum stellar_rx_verdict verdict;
	struct stellar_pkt pkt;

	verdict = stellar_parse_packet(copy, (u32)len, &pkt);
	assert_in_range(verdict, STELLAR_RX_OK, STELLAR_RX_BAD_LENGTH);
	if (verdict == STELLAR_RX_OK) {
		assert_non_null(stellar_opcode_info(pkt.opcode));
		assert_int_equal(pkt.tver, 0);
		assert_int_equal(pkt.hdr_len, stellar_hdr_len(pkt.opcode) +
				 (pkt.ext & STELLAR_EXT_X ?
				  stellar_xhdr_len(pkt.opcode) : 0));
		assert_int_equal(pkt.hdr_len + pkt.payload_len +
				 pkt.pad_count + 4, len);
	}
	free(copy);
}

/* Every prefix of every valid packet, in an exactly sized buffer. */
static void test_truncated_every_length(void **state)
{
	struct bth_fields bth = { .qpn = 1, .psn = 2 };
	uint8_t buf[512];
	size_t i, len, cut;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(expected_ops); i++) {
		const struct expected_op *exp = &expected_ops[i];
		size_t min_len = 12 + ext_bytes(exp->ext) + 4;

		len = make_packet(buf, exp, valid_payload_len(exp), &bth);
		for (cut = 0; cut < len; cut++) {
			enum stellar_rx_verdict verdict = parse_exact(buf, cut);

			if (cut < min_len)
				assert_int_equal(verdict, STELLAR_RX_TRUNCATED);
			else if ((cut - min_len) % 4)
				assert_int_equal(verdict, STELLAR_RX_BAD_LENGTH);
			else
				check_garbage_verdict(buf, cut);
		}
		assert_int_equal(parse_exact(buf, len), STELLAR_RX_OK);
	}
}

/* Random bytes of every length; half of them with a plausible BTH start. */
static void test_garbage_inputs(void **state)
{
	struct test_rng rng;
	uint8_t buf[160];
	unsigned int round;

	(void)state;
	test_rng_seed(&rng, 0x5717e11a);
	for (round = 0; round < 20000; round++) {
		size_t len = test_rng_below(&rng, sizeof(buf) + 1);

		test_rng_fill(&rng, buf, sizeof(buf));
		if (round & 1) {
			buf[0] = expected_ops[test_rng_below(&rng,
					ARRAY_SIZE(expected_ops))].opcode;
			buf[1] &= 0xf0;
		}
		check_garbage_verdict(buf, len);
	}
}

static void test_verdict_names(void **state)
{
	(void)state;
	assert_string_equal(stellar_rx_verdict_name(STELLAR_RX_OK), "ok");
	assert_string_equal(stellar_rx_verdict_name(STELLAR_RX_TRUNCATED),
			    "truncated");
	assert_string_equal(stellar_rx_verdict_name(STELLAR_RX_BAD_LENGTH),
			    "bad payload length");
	assert_string_equal(stellar_rx_verdict_name((enum stellar_rx_verdict)99),
			    "unknown verdict");
}

/* ---- builder ----------------------------------------------------------- */

static void test_build_golden_write_imm(void **state)
{
	static const uint8_t expected[] = {
		0x0b, 0xa0, 0xff, 0xff, 0x40, 0x00, 0x00, 0x11,
		0x80, 0xab, 0xcd, 0xef,
		0x00, 0x00, 0x7f, 0x00, 0x12, 0x34, 0x56, 0x78,
		0x00, 0x00, 0x12, 0x34, 0x00, 0x00, 0x00, 0x2a,
		0x01, 0x02, 0x03, 0x04,
	};
	static const uint8_t imm[4] = { 0x01, 0x02, 0x03, 0x04 };
	struct stellar_pkt pkt = {
		.opcode = STELLAR_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
		.se = true, .pad_count = 2, .pkey = 0xffff, .becn = true,
		.dest_qpn = 0x11, .ack_req = true, .psn = 0xabcdef,
		.reth = { .va = 0x7f0012345678ULL, .rkey = 0x1234, .len = 42 },
	};
	uint8_t buf[64];

	(void)state;
	memcpy(&pkt.imm_data, imm, 4);
	memset(buf, 0xee, sizeof(buf));
	assert_int_equal(stellar_build_headers(buf, &pkt), sizeof(expected));
	assert_memory_equal(buf, expected, sizeof(expected));
	assert_int_equal(buf[sizeof(expected)], 0xee);
}

static void test_build_golden_ud(void **state)
{
	static const uint8_t expected[] = {
		0x64, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01,
		0x00, 0x00, 0x00, 0x05,
		0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	};
	struct stellar_pkt pkt = {
		.opcode = STELLAR_OP_UD_SEND_ONLY, .pkey = 0xffff,
		.dest_qpn = 1, .psn = 5,
		.deth = { .qkey = 0x80010000, .src_qpn = 1 },
		/* not UD_SEND_ONLY headers: must not be written */
		.ext = STELLAR_EXT_RETH | STELLAR_EXT_IMMDT,
		.reth = { .va = ~0ULL },
	};
	uint8_t buf[64];

	(void)state;
	memset(buf, 0xee, sizeof(buf));
	assert_int_equal(stellar_build_headers(buf, &pkt), sizeof(expected));
	assert_memory_equal(buf, expected, sizeof(expected));
	assert_int_equal(buf[sizeof(expected)], 0xee);
}

/* XRC: the XRCETH (24-bit SRQ number) right after the BTH, then ImmDt. */
static void test_build_golden_xrc(void **state)
{
	static const uint8_t expected[] = {
		0xa5, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x2a,
		0x80, 0x00, 0x00, 0x07,
		0x00, 0x65, 0x43, 0x21,
		0xca, 0xfe, 0xf0, 0x0d,
	};
	static const uint8_t imm[4] = { 0xca, 0xfe, 0xf0, 0x0d };
	struct stellar_pkt pkt = {
		.opcode = STELLAR_OP_XRC(STELLAR_OP_RC_SEND_ONLY_WITH_IMMEDIATE),
		.pkey = 0xffff, .dest_qpn = 0x2a, .ack_req = true, .psn = 7,
		.xrc_srqn = 0xff654321,		/* 24 bits go on the wire */
	};
	uint8_t buf[64];
	struct stellar_pkt parsed;

	(void)state;
	memcpy(&pkt.imm_data, imm, 4);
	memset(buf, 0xee, sizeof(buf));
	assert_int_equal(stellar_build_headers(buf, &pkt), sizeof(expected));
	assert_memory_equal(buf, expected, sizeof(expected));
	assert_int_equal(buf[sizeof(expected)], 0xee);
	/* With 4 bytes of payload and the ICRC, it parses back. */
	memset(buf + sizeof(expected), 0, 8);
	assert_int_equal(stellar_parse_packet(buf, sizeof(expected) + 8,
					      &parsed), STELLAR_RX_OK);
	assert_int_equal(parsed.xrc_srqn, 0x654321);
	assert_int_equal(parsed.payload_len, 4);
	assert_memory_equal(&parsed.imm_data, imm, 4);
	/* An XRC ACK has no XRCETH. */
	memset(&pkt, 0, sizeof(pkt));
	pkt.opcode = STELLAR_OP_XRC(STELLAR_OP_RC_ACKNOWLEDGE);
	pkt.xrc_srqn = 0x123;
	assert_int_equal(stellar_build_headers(buf, &pkt), 12 + 4);
	assert_int_equal(buf[12], 0);	/* the AETH's syndrome */
}

static void test_build_masks_wide_fields(void **state)
{
	struct stellar_pkt pkt = {
		.opcode = STELLAR_OP_RC_ACKNOWLEDGE,
		.dest_qpn = 0xffffffff, .psn = 0xff123456,
		.aeth = { .syndrome = 0x1f, .msn = 0xee654321 },
	};
	static const uint8_t expected[] = {
		0x11, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff,
		0x00, 0x12, 0x34, 0x56, 0x1f, 0x65, 0x43, 0x21,
	};
	uint8_t buf[STELLAR_MAX_HDR_LEN];

	(void)state;
	assert_int_equal(stellar_build_headers(buf, &pkt), sizeof(expected));
	assert_memory_equal(buf, expected, sizeof(expected));
}

static void test_build_unsupported_opcode(void **state)
{
	struct stellar_pkt pkt = { .opcode = 0x15 };	/* reserved RC */
	uint8_t buf[STELLAR_MAX_HDR_LEN];
	uint8_t untouched[STELLAR_MAX_HDR_LEN];

	(void)state;
	memset(buf, 0xee, sizeof(buf));
	memcpy(untouched, buf, sizeof(buf));
	assert_int_equal(stellar_build_headers(buf, &pkt), 0);
	assert_memory_equal(buf, untouched, sizeof(buf));
	assert_int_equal(stellar_udp_payload_len(0x15, 10), 0);
}

/*
 * CNP (RoCEv2 annex A17): BTH with BECN set and 16 reserved bytes; the
 * bytes of one a ConnectX-4 Lx sent to QP 0x118 (tests/unit/test_icrc.c).
 */
static const uint8_t cnp_capture[32] = {
	0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x01, 0x18,
	0x00, 0x00, 0x00, 0x00,
	[28] = 0x82, 0xfd, 0x00, 0x2a,
};

static void test_cnp(void **state)
{
	const struct stellar_opcode_info *info;
	struct stellar_pkt pkt;
	uint8_t buf[64];

	(void)state;
	info = stellar_opcode_info(STELLAR_OP_CNP);
	assert_non_null(info);
	assert_int_equal(info->qp_class, STELLAR_QPC_CNP);
	assert_int_equal(info->flags, 0);
	assert_int_equal(stellar_hdr_len(STELLAR_OP_CNP), 28);
	assert_int_equal(stellar_udp_payload_len(STELLAR_OP_CNP, 0), 32);

	assert_int_equal(parse_exact(cnp_capture, sizeof(cnp_capture)),
			 STELLAR_RX_OK);
	assert_int_equal(stellar_parse_packet(cnp_capture, sizeof(cnp_capture),
					      &pkt), STELLAR_RX_OK);
	assert_int_equal(pkt.opcode, STELLAR_OP_CNP);
	assert_true(pkt.becn);
	assert_false(pkt.fecn);
	assert_int_equal(pkt.pkey, 0xffff);
	assert_int_equal(pkt.dest_qpn, 0x118);
	assert_int_equal(pkt.hdr_len, 28);
	assert_int_equal(pkt.payload_len, 0);
	/* payload after the reserved bytes, or the reserved bytes cut short */
	memset(buf, 0, sizeof(buf));
	memcpy(buf, cnp_capture, sizeof(cnp_capture));
	assert_int_equal(parse_exact(buf, sizeof(cnp_capture) + 4),
			 STELLAR_RX_BAD_LENGTH);
	assert_int_equal(parse_exact(buf, 12 + 8 + 4), STELLAR_RX_TRUNCATED);

	/* built: the captured bytes, reserved bytes zeroed over old data */
	memset(&pkt, 0, sizeof(pkt));
	pkt.opcode = STELLAR_OP_CNP;
	pkt.becn = true;
	pkt.pkey = 0xffff;
	pkt.dest_qpn = 0x118;
	pkt.xcap = true;	/* an RC-only bit: not written */
	memset(buf, 0xee, sizeof(buf));
	assert_int_equal(stellar_build_headers(buf, &pkt), 28);
	assert_memory_equal(buf, cnp_capture, 28);
	assert_int_equal(buf[28], 0xee);
}

static void random_fields(struct test_rng *rng, struct stellar_pkt *pkt,
			  uint8_t opcode)
{
	memset(pkt, 0, sizeof(*pkt));
	pkt->opcode = opcode;
	pkt->se = test_rng_below(rng, 2);
	pkt->migreq = test_rng_below(rng, 2);
	pkt->pkey = (u16)test_rng_next(rng);
	pkt->fecn = test_rng_below(rng, 2);
	pkt->becn = test_rng_below(rng, 2);
	pkt->dest_qpn = (u32)test_rng_next(rng) & 0xffffff;
	pkt->ack_req = test_rng_below(rng, 2);
	pkt->psn = (u32)test_rng_next(rng) & 0xffffff;
	pkt->reth.va = test_rng_next(rng);
	pkt->reth.rkey = (u32)test_rng_next(rng);
	pkt->reth.len = (u32)test_rng_next(rng);
	pkt->aeth.syndrome = (u8)test_rng_next(rng);
	pkt->aeth.msn = (u32)test_rng_next(rng) & 0xffffff;
	pkt->atomic.va = test_rng_next(rng);
	pkt->atomic.rkey = (u32)test_rng_next(rng);
	pkt->atomic.swap_add = test_rng_next(rng);
	pkt->atomic.compare = test_rng_next(rng);
	pkt->atomic_ack_orig = test_rng_next(rng);
	pkt->imm_data = (__be32)test_rng_next(rng);
	pkt->ieth_rkey = (u32)test_rng_next(rng);
	pkt->deth.qkey = (u32)test_rng_next(rng);
	pkt->deth.src_qpn = (u32)test_rng_next(rng) & 0xffffff;
}

static void assert_same_ext(const struct stellar_pkt *got,
			    const struct stellar_pkt *sent)
{
	uint8_t ext = got->ext;

	if (ext & E_DETH) {
		assert_int_equal(got->deth.qkey, sent->deth.qkey);
		assert_int_equal(got->deth.src_qpn, sent->deth.src_qpn);
	}
	if (ext & E_RETH) {
		assert_true(got->reth.va == sent->reth.va);
		assert_int_equal(got->reth.rkey, sent->reth.rkey);
		assert_int_equal(got->reth.len, sent->reth.len);
	}
	if (ext & E_ATMETH) {
		assert_true(got->atomic.va == sent->atomic.va);
		assert_int_equal(got->atomic.rkey, sent->atomic.rkey);
		assert_true(got->atomic.swap_add == sent->atomic.swap_add);
		assert_true(got->atomic.compare == sent->atomic.compare);
	}
	if (ext & E_AETH) {
		assert_int_equal(got->aeth.syndrome, sent->aeth.syndrome);
		assert_int_equal(got->aeth.msn, sent->aeth.msn);
	}
	if (ext & E_ATMACK)
		assert_true(got->atomic_ack_orig == sent->atomic_ack_orig);
	if (ext & E_IMMDT)
		assert_int_equal(got->imm_data, sent->imm_data);
	if (ext & E_IETH)
		assert_int_equal(got->ieth_rkey, sent->ieth_rkey);
}

static void round_trip_one(struct test_rng *rng, const struct expected_op *exp)
{
	uint32_t payload_len = exp->payload ?
		(exp->position & (F_FIRST | F_MIDDLE) ? 1024 :
		 test_rng_below(rng, 300)) : 0;
	struct stellar_pkt sent, got;
	uint8_t buf[STELLAR_MAX_HDR_LEN + 1024 + 8];
	u32 hdr_len, len;

	random_fields(rng, &sent, exp->opcode);
	sent.pad_count = stellar_pad_count(payload_len);
	hdr_len = stellar_build_headers(buf, &sent);
	assert_int_equal(hdr_len, stellar_hdr_len(exp->opcode));
	len = stellar_udp_payload_len(exp->opcode, payload_len);
	memset(buf + hdr_len, 0x33, len - hdr_len);

	assert_int_equal(stellar_parse_packet(buf, len, &got), STELLAR_RX_OK);
	assert_int_equal(got.opcode, sent.opcode);
	assert_int_equal(got.se, sent.se);
	assert_int_equal(got.migreq, sent.migreq);
	assert_int_equal(got.pad_count, sent.pad_count);
	assert_int_equal(got.pkey, sent.pkey);
	assert_int_equal(got.fecn, sent.fecn);
	assert_int_equal(got.becn, sent.becn);
	assert_int_equal(got.dest_qpn, sent.dest_qpn);
	assert_int_equal(got.ack_req, sent.ack_req);
	assert_int_equal(got.psn, sent.psn);
	assert_int_equal(got.ext, exp->ext);
	assert_int_equal(got.hdr_len, hdr_len);
	assert_int_equal(got.payload_len, payload_len);
	assert_same_ext(&got, &sent);
}

static void test_round_trip(void **state)
{
	struct test_rng rng;
	size_t i;
	int round;

	(void)state;
	test_rng_seed(&rng, 42);
	for (round = 0; round < 50; round++)
		for (i = 0; i < ARRAY_SIZE(expected_ops); i++)
			round_trip_one(&rng, &expected_ops[i]);
}

static void test_pad_count(void **state)
{
	(void)state;
	assert_int_equal(stellar_pad_count(0), 0);
	assert_int_equal(stellar_pad_count(1), 3);
	assert_int_equal(stellar_pad_count(2), 2);
	assert_int_equal(stellar_pad_count(3), 1);
	assert_int_equal(stellar_pad_count(4), 0);
	assert_int_equal(stellar_pad_count(4097), 3);
	assert_int_equal(stellar_udp_payload_len(STELLAR_OP_RC_SEND_ONLY, 5),
			 12 + 5 + 3 + 4);
}

/* ---- stellar wire extensions ------------------------------------------ */

/* Which opcodes may carry a stellar header, and how long it is. */
static void test_xhdr_lengths(void **state)
{
	unsigned int op;

	(void)state;
	assert_int_equal(STELLAR_XPH_LEN, 20);
	assert_int_equal(STELLAR_SACK_LEN, 20);
	assert_int_equal(STELLAR_MAX_XHDR_LEN, 52);
	for (op = 0; op < 256; op++) {
		const struct stellar_opcode_info *info = stellar_opcode_info(op);
		u32 want = 0;

		if (info && info->qp_class == STELLAR_QPC_RC) {
			if (op == STELLAR_OP_RC_ACKNOWLEDGE)
				want = STELLAR_SACK_LEN;
			else if (info->flags &
				 (STELLAR_OPF_SEND | STELLAR_OPF_WRITE))
				want = STELLAR_XPH_LEN;
		}
		assert_int_equal(stellar_xhdr_len(op), want);
		if (info)
			assert_true(stellar_hdr_len(op) + want <=
				    STELLAR_MAX_XHDR_LEN);
	}
}

/* The golden bytes of an RDMA WRITE MIDDLE with a placement header. */
static void test_build_golden_xph(void **state)
{
	struct stellar_pkt pkt = {
		.opcode = STELLAR_OP_RC_RDMA_WRITE_MIDDLE,
		.pkey = 0xffff, .dest_qpn = 0x11, .psn = 0x123456,
		.xcap = true, .xhdr = true,
		.xph = { .offset = 0x1000, .rmsn = 7,
			 .va = 0x7f0012345678ULL, .rkey = 0xabcd },
	};
	static const uint8_t expected[] = {
		0x07, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11,
		0x60, 0x12, 0x34, 0x56,
		0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x07,
		0x00, 0x00, 0x7f, 0x00, 0x12, 0x34, 0x56, 0x78,
		0x00, 0x00, 0xab, 0xcd,
	};
	uint8_t buf[STELLAR_MAX_XHDR_LEN + 1];
	struct stellar_pkt got;

	(void)state;
	memset(buf, 0xee, sizeof(buf));
	assert_int_equal(stellar_pkt_hdr_len(&pkt), sizeof(expected));
	assert_int_equal(stellar_build_headers(buf, &pkt), sizeof(expected));
	assert_memory_equal(buf, expected, sizeof(expected));
	assert_int_equal(buf[sizeof(expected)], 0xee);
	/* MIDDLE: a full MTU of payload is not needed for the parser. */
	memset(buf + sizeof(expected), 0, 4 + 4);
	assert_int_equal(stellar_parse_packet(buf, sizeof(expected) + 8, &got),
			 STELLAR_RX_OK);
	assert_true(got.xcap);
	assert_true(got.xhdr);
	assert_int_equal(got.ext, STELLAR_EXT_X);
	assert_int_equal(got.hdr_len, sizeof(expected));
	assert_int_equal(got.payload_len, 4);
	assert_int_equal(got.xph.offset, 0x1000);
	assert_int_equal(got.xph.rmsn, 7);
	assert_true(got.xph.va == 0x7f0012345678ULL);
	assert_int_equal(got.xph.rkey, 0xabcd);
	assert_int_equal(got.psn, 0x123456);
}

/* Every RC SEND/WRITE opcode and the ACK round-trip with their header. */
static void test_xhdr_round_trip(void **state)
{
	struct test_rng rng;
	unsigned int op, round;

	(void)state;
	test_rng_seed(&rng, 4791);
	for (round = 0; round < 20; round++) {
		for (op = 0; op < 0x20; op++) {
			struct stellar_pkt sent, got;
			uint8_t buf[STELLAR_MAX_XHDR_LEN + 64];
			u32 hdr_len, plen;
			const struct stellar_opcode_info *info =
				stellar_opcode_info(op);

			if (!stellar_xhdr_len(op))
				continue;
			plen = info->flags & STELLAR_OPF_PAYLOAD ? 16 : 0;
			random_fields(&rng, &sent, op);
			sent.xcap = test_rng_below(&rng, 2);
			sent.xhdr = true;
			sent.xecho = test_rng_below(&rng, 2);
			sent.xph.offset = (u32)test_rng_next(&rng);
			sent.xph.rmsn = (u32)test_rng_next(&rng);
			sent.xph.va = test_rng_next(&rng);
			sent.xph.rkey = (u32)test_rng_next(&rng);
			sent.sack.base = (u16)test_rng_next(&rng);
			sent.sack.newest = (s16)test_rng_next(&rng);
			test_rng_fill(&rng, sent.sack.bitmap,
				      sizeof(sent.sack.bitmap));
			hdr_len = stellar_build_headers(buf, &sent);
			assert_int_equal(hdr_len, stellar_hdr_len(op) +
					 stellar_xhdr_len(op));
			memset(buf + hdr_len, 0x5a, plen + 4);
			assert_int_equal(stellar_parse_packet(buf,
					 hdr_len + plen + 4, &got),
					 STELLAR_RX_OK);
			assert_int_equal(got.xcap, sent.xcap);
			assert_true(got.xhdr);
			assert_int_equal(got.xecho, sent.xecho);
			assert_int_equal(buf[8] & 0x10, sent.xecho ? 0x10 : 0);
			assert_true(got.ext & STELLAR_EXT_X);
			assert_int_equal(got.hdr_len, hdr_len);
			assert_int_equal(got.payload_len, plen);
			assert_same_ext(&got, &sent);
			if (op == STELLAR_OP_RC_ACKNOWLEDGE) {
				assert_int_equal(got.sack.base, sent.sack.base);
				assert_int_equal(got.sack.newest,
						 sent.sack.newest);
				assert_memory_equal(got.sack.bitmap,
						    sent.sack.bitmap,
						    sizeof(got.sack.bitmap));
			} else {
				assert_int_equal(got.xph.offset,
						 sent.xph.offset);
				assert_int_equal(got.xph.rmsn, sent.xph.rmsn);
				assert_true(got.xph.va == sent.xph.va);
				assert_int_equal(got.xph.rkey, sent.xph.rkey);
			}
		}
	}
}

/*
 * XHDR on an RC opcode without a stellar header is an unsupported form;
 * the builder refuses to write one and touches nothing.
 */
static void test_xhdr_bad_opcode(void **state)
{
	static const uint8_t ops[] = {
		STELLAR_OP_RC_RDMA_READ_REQUEST,
		STELLAR_OP_RC_RDMA_READ_RESPONSE_ONLY,
		STELLAR_OP_RC_COMPARE_SWAP, STELLAR_OP_RC_ATOMIC_ACKNOWLEDGE,
	};
	uint8_t buf[STELLAR_MAX_XHDR_LEN + 32], untouched[sizeof(buf)];
	struct stellar_pkt pkt;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		memset(&pkt, 0, sizeof(pkt));
		pkt.opcode = ops[i];
		assert_true(stellar_build_headers(buf, &pkt) > 0);
		memset(buf + stellar_hdr_len(ops[i]), 0, 32);
		buf[8] |= 0x20;		/* XHDR */
		assert_int_equal(stellar_parse_packet(buf,
				 stellar_hdr_len(ops[i]) + 4 +
				 (ops[i] == STELLAR_OP_RC_RDMA_READ_RESPONSE_ONLY ?
				  8 : 0), &pkt), STELLAR_RX_BAD_OPCODE);
		memset(&pkt, 0, sizeof(pkt));
		pkt.opcode = ops[i];
		pkt.xhdr = true;
		memset(buf, 0xee, sizeof(buf));
		memcpy(untouched, buf, sizeof(buf));
		assert_int_equal(stellar_pkt_hdr_len(&pkt), 0);
		assert_int_equal(stellar_build_headers(buf, &pkt), 0);
		assert_memory_equal(buf, untouched, sizeof(buf));
	}
}

/* A packet announcing a stellar header too short to hold it. */
static void test_xhdr_truncated(void **state)
{
	struct stellar_pkt pkt = {
		.opcode = STELLAR_OP_RC_SEND_ONLY, .xhdr = true,
	};
	uint8_t buf[64];
	u32 len;

	(void)state;
	assert_int_equal(stellar_build_headers(buf, &pkt), 12 + 20);
	for (len = 12; len < 12 + 20 + 4; len++)
		assert_int_equal(parse_exact(buf, len), STELLAR_RX_TRUNCATED);
	memset(buf + 32, 0, 4);
	assert_int_equal(parse_exact(buf, 36), STELLAR_RX_OK);
}

/* On UC and UD the stellar bits are reserved bits: ignored, never built. */
static void test_xbits_only_rc(void **state)
{
	struct stellar_pkt pkt = {
		.opcode = STELLAR_OP_UC_SEND_ONLY, .xcap = true, .xecho = true,
	};
	uint8_t buf[64];

	(void)state;
	assert_int_equal(stellar_build_headers(buf, &pkt), 12);
	assert_int_equal(buf[8], 0);
	buf[8] = 0x70;				/* XCAP | XHDR | XECHO */
	memset(buf + 12, 0, 8);
	assert_int_equal(stellar_parse_packet(buf, 20, &pkt), STELLAR_RX_OK);
	assert_false(pkt.xcap);
	assert_false(pkt.xhdr);
	assert_false(pkt.xecho);
	assert_int_equal(pkt.hdr_len, 12);
	assert_int_equal(pkt.payload_len, 4);
	pkt.opcode = STELLAR_OP_UD_SEND_ONLY;
	pkt.xhdr = true;
	assert_int_equal(stellar_build_headers(buf, &pkt), 0);
	/* XCAP alone on an RC ACK: an echo, no header follows. */
	memset(&pkt, 0, sizeof(pkt));
	pkt.opcode = STELLAR_OP_RC_ACKNOWLEDGE;
	pkt.xcap = true;
	assert_int_equal(stellar_build_headers(buf, &pkt), 16);
	assert_int_equal(buf[8], 0x40);
	memset(buf + 16, 0, 4);
	assert_int_equal(stellar_parse_packet(buf, 20, &pkt), STELLAR_RX_OK);
	assert_true(pkt.xcap);
	assert_false(pkt.xhdr);
	assert_false(pkt.xecho);
	assert_int_equal(pkt.ext, STELLAR_EXT_AETH);
	/* An echo: XECHO beside XCAP, nothing else changes. */
	pkt.xecho = true;
	assert_int_equal(stellar_build_headers(buf, &pkt), 16);
	assert_int_equal(buf[8], 0x50);
	assert_int_equal(stellar_parse_packet(buf, 20, &pkt), STELLAR_RX_OK);
	assert_true(pkt.xecho);
	assert_true(pkt.xcap);
	assert_int_equal(pkt.hdr_len, 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_lengths),
		cmocka_unit_test(test_opcode_values),
		cmocka_unit_test(test_opcode_table),
		cmocka_unit_test(test_opcode_kinds),
		cmocka_unit_test(test_parse_every_opcode),
		cmocka_unit_test(test_parse_ignores_reserved_bits),
		cmocka_unit_test(test_bad_version),
		cmocka_unit_test(test_bad_opcode),
		cmocka_unit_test(test_bad_pad),
		cmocka_unit_test(test_bad_payload_length),
		cmocka_unit_test(test_valid_edge_lengths),
		cmocka_unit_test(test_truncated_every_length),
		cmocka_unit_test(test_garbage_inputs),
		cmocka_unit_test(test_verdict_names),
		cmocka_unit_test(test_build_golden_write_imm),
		cmocka_unit_test(test_build_golden_ud),
		cmocka_unit_test(test_build_golden_xrc),
		cmocka_unit_test(test_build_masks_wide_fields),
		cmocka_unit_test(test_build_unsupported_opcode),
		cmocka_unit_test(test_cnp),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_pad_count),
		cmocka_unit_test(test_xhdr_lengths),
		cmocka_unit_test(test_build_golden_xph),
		cmocka_unit_test(test_xhdr_round_trip),
		cmocka_unit_test(test_xhdr_bad_opcode),
		cmocka_unit_test(test_xhdr_truncated),
		cmocka_unit_test(test_xbits_only_rc),
	};

	return cmocka_run_group_tests_name("stellar_wire", tests, NULL, NULL);
}
