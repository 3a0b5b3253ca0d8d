// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * virtio-stellar unit tests: RoCEv2 invariant CRC (kernel/stellar_wire.c).
 *
 * The expected ICRCs come from a separate reference: zlib's standard CRC-32
 * over eight 0xff bytes, the IP, UDP and BTH headers with their variant
 * fields set to ones (through the libc structs iphdr, ip6_hdr, udphdr),
 * and the rest of the packet, stored least significant byte first (the
 * byte order rdma_rxe produces on little-endian hosts).  Two packets from
 * outside are checked as well: a CNP captured from a Mellanox ConnectX-4
 * Lx NIC and a UC SEND packet whose ICRC scapy's RoCE layer computes.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <netinet/udp.h>
#include <zlib.h>

#include "stellar_wire.h"
#include "test_util.h"

#define IP4_LEN		20
#define IP6_LEN		40
#define UDP_LEN		8
#define BTH_LEN		12
#define MAX_PACKET	(IP6_LEN + UDP_LEN + 2048)

/* ---- the reference ----------------------------------------------------- */

static size_t ref_masked_ip(uint8_t *out, const uint8_t *l3, bool is_ipv6)
{
	if (is_ipv6) {
		struct ip6_hdr ip6;

		memcpy(&ip6, l3, sizeof(ip6));
		/* all but the version: traffic class and flow label */
		ip6.ip6_flow |= htonl(0x0fffffff);
		ip6.ip6_hlim = 0xff;
		memcpy(out, &ip6, sizeof(ip6));
		return sizeof(ip6);
	} else {
		struct iphdr ip4;

		memcpy(&ip4, l3, sizeof(ip4));
		ip4.tos = 0xff;
		ip4.ttl = 0xff;
		ip4.check = 0xffff;
		memcpy(out, &ip4, sizeof(ip4));
		return sizeof(ip4);
	}
}

static uint32_t ref_icrc(const uint8_t *l3, bool is_ipv6, const uint8_t *udp,
			 const uint8_t *bth, size_t bth_to_icrc_len)
{
	static uint8_t buf[8 + MAX_PACKET];
	struct udphdr udph;
	size_t len = 8;

	assert_true(bth_to_icrc_len <= 2048);
	memset(buf, 0xff, 8);		/* the LRH RoCEv2 does not have */
	len += ref_masked_ip(buf + len, l3, is_ipv6);
	memcpy(&udph, udp, sizeof(udph));
	udph.check = 0xffff;
	memcpy(buf + len, &udph, sizeof(udph));
	len += sizeof(udph);
	memcpy(buf + len, bth, bth_to_icrc_len);
	buf[len + 4] = 0xff;		/* BTH: FECN, BECN, resv6 */
	len += bth_to_icrc_len;
	return (uint32_t)crc32(0L, buf, (uInt)len);
}

static void le32_bytes(uint8_t *out, uint32_t v)
{
	out[0] = v & 0xff;
	out[1] = (v >> 8) & 0xff;
	out[2] = (v >> 16) & 0xff;
	out[3] = v >> 24;
}

/* ---- test packets ------------------------------------------------------ */

/* [IP][UDP][BTH ... payload pad][ICRC] in one buffer. */
struct test_packet {
	uint8_t bytes[MAX_PACKET];
	bool is_ipv6;
	uint8_t *l3;
	uint8_t *udp;
	uint8_t *bth;
	uint32_t udp_payload_len;	/* BTH to ICRC end */
};

static void put_udp(struct test_packet *tp, uint16_t sport)
{
	uint16_t udp_len = (uint16_t)(UDP_LEN + tp->udp_payload_len);

	tp->udp[0] = sport >> 8;
	tp->udp[1] = sport & 0xff;
	tp->udp[2] = 4791 >> 8;
	tp->udp[3] = 4791 & 0xff;
	tp->udp[4] = udp_len >> 8;
	tp->udp[5] = udp_len & 0xff;
	tp->udp[6] = 0x12;		/* some checksum, masked anyway */
	tp->udp[7] = 0x34;
}

static void put_ipv4(struct test_packet *tp)
{
	static const uint8_t hdr[IP4_LEN] = {
		0x45, 0x02, 0x00, 0x00, 0x1c, 0x46, 0x40, 0x00,
		0x40, 0x11, 0xbe, 0xef, 192, 168, 10, 1, 192, 168, 10, 2,
	};
	uint16_t total = (uint16_t)(IP4_LEN + UDP_LEN + tp->udp_payload_len);

	memcpy(tp->l3, hdr, sizeof(hdr));
	tp->l3[2] = total >> 8;
	tp->l3[3] = total & 0xff;
}

static void put_ipv6(struct test_packet *tp)
{
	static const uint8_t hdr[IP6_LEN] = {
		0x6a, 0xb1, 0x23, 0x45, 0x00, 0x00, 0x11, 0x40,
		0xfd, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01,
		0xfd, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02,
	};
	uint16_t payload = (uint16_t)(UDP_LEN + tp->udp_payload_len);

	memcpy(tp->l3, hdr, sizeof(hdr));
	tp->l3[4] = payload >> 8;
	tp->l3[5] = payload & 0xff;
}

/*
 * A RoCEv2 packet of @opcode with @payload_len bytes of payload, headers
 * built with the builder under test (the ICRC does not depend on it).
 */
static void make_test_packet(struct test_packet *tp, bool is_ipv6,
			     u8 opcode, uint32_t payload_len,
			     struct test_rng *rng)
{
	struct stellar_pkt pkt = {
		.opcode = opcode, .pkey = 0xffff, .dest_qpn = 0x11,
		.psn = 0x123456, .ack_req = true,
		.pad_count = stellar_pad_count(payload_len),
		.reth = { .va = 0x1000, .rkey = 0x77, .len = payload_len },
		.deth = { .qkey = 0x11111111, .src_qpn = 1 },
	};
	u32 hdr_len;

	memset(tp, 0, sizeof(*tp));
	tp->is_ipv6 = is_ipv6;
	tp->l3 = tp->bytes;
	tp->udp = tp->l3 + (is_ipv6 ? IP6_LEN : IP4_LEN);
	tp->bth = tp->udp + UDP_LEN;
	tp->udp_payload_len = stellar_udp_payload_len(opcode, payload_len);
	assert_true(tp->udp_payload_len > 0);
	if (is_ipv6)
		put_ipv6(tp);
	else
		put_ipv4(tp);
	put_udp(tp, 0xc123);
	hdr_len = stellar_build_headers(tp->bth, &pkt);
	test_rng_fill(rng, tp->bth + hdr_len, payload_len);
}

static uint32_t stored_le32(const struct test_packet *tp)
{
	const uint8_t *p = tp->bth + tp->udp_payload_len - 4;

	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint32_t tp_ref(const struct test_packet *tp)
{
	return ref_icrc(tp->l3, tp->is_ipv6, tp->udp, tp->bth,
			tp->udp_payload_len - 4);
}

static void tp_store(struct test_packet *tp)
{
	stellar_icrc_store(tp->l3, tp->is_ipv6, tp->udp, tp->bth,
			   tp->udp_payload_len);
}

static bool tp_check(const struct test_packet *tp)
{
	return stellar_icrc_check(tp->l3, tp->is_ipv6, tp->udp, tp->bth,
				  tp->udp_payload_len);
}

/* ---- tests ------------------------------------------------------------- */

static void test_crc32_le_matches_zlib(void **state)
{
	static const unsigned char check[] = "123456789";
	struct test_rng rng;
	uint8_t buf[1500];
	int round;

	(void)state;
	/* the CRC-32 check value */
	assert_int_equal(~stellar_crc32_le(~0U, check, 9), 0xcbf43926);
	assert_int_equal(stellar_crc32_le(0x1234, check, 0), 0x1234);
	test_rng_seed(&rng, 7);
	for (round = 0; round < 200; round++) {
		size_t len = test_rng_below(&rng, sizeof(buf) + 1);
		size_t split = test_rng_below(&rng, (uint32_t)len + 1);
		u32 crc;

		test_rng_fill(&rng, buf, len);
		crc = stellar_crc32_le(~0U, buf, split);
		crc = stellar_crc32_le(crc, buf + split, len - split);
		assert_int_equal(~crc, crc32(0L, buf, (uInt)len));
	}
}

static void test_icrc_seed(void **state)
{
	static const uint8_t lrh[8] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

	(void)state;
	assert_int_equal(stellar_crc32_le(~0U, lrh, 8), STELLAR_ICRC_SEED);
}

/* IPv4, RC SEND_ONLY carrying "hello": 5 bytes and 3 of pad. */
static void test_icrc_ipv4_send(void **state)
{
	static struct test_packet tp;
	struct test_rng rng;
	uint8_t expected[4];

	(void)state;
	test_rng_seed(&rng, 1);
	make_test_packet(&tp, false, STELLAR_OP_RC_SEND_ONLY, 5, &rng);
	memcpy(tp.bth + BTH_LEN, "hello", 5);
	assert_int_equal(tp.udp_payload_len, 12 + 5 + 3 + 4);

	assert_int_equal(stellar_icrc(tp.l3, false, tp.udp, tp.bth,
				      tp.udp_payload_len - 4), tp_ref(&tp));
	assert_false(tp_check(&tp));
	tp_store(&tp);
	le32_bytes(expected, tp_ref(&tp));
	assert_memory_equal(tp.bth + tp.udp_payload_len - 4, expected, 4);
	assert_true(tp_check(&tp));
}

/* IPv6, RC RDMA_WRITE_ONLY with a RETH and 1001 bytes of payload. */
static void test_icrc_ipv6_write(void **state)
{
	static struct test_packet tp;
	struct test_rng rng;

	(void)state;
	test_rng_seed(&rng, 2);
	make_test_packet(&tp, true, STELLAR_OP_RC_RDMA_WRITE_ONLY, 1001, &rng);
	assert_int_equal(stellar_icrc(tp.l3, true, tp.udp, tp.bth,
				      tp.udp_payload_len - 4), tp_ref(&tp));
	tp_store(&tp);
	assert_int_equal(stored_le32(&tp), tp_ref(&tp));
	assert_true(tp_check(&tp));
	/* the same bytes read as IPv4 headers give another CRC */
	assert_int_not_equal(stellar_icrc(tp.l3, false, tp.udp, tp.bth,
					  tp.udp_payload_len - 4),
			     tp_ref(&tp));
}

/*
 * A CNP (opcode 0x81) captured from a ConnectX-4 Lx: IPv4 10.0.17.1 ->
 * 10.0.18.1, ICRC 82 fd 00 2a on the wire.
 */
static void test_icrc_connectx_capture(void **state)
{
	static const uint8_t ip[IP4_LEN] = {
		0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11,
		0x91, 0x61, 0x0a, 0x00, 0x11, 0x01, 0x0a, 0x00, 0x12, 0x01,
	};
	static const uint8_t udp[UDP_LEN] = {
		0x00, 0x00, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00,
	};
	uint8_t bth[32] = {
		0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x01, 0x18,
		0x00, 0x00, 0x00, 0x00,
		/* 16 bytes of CNP padding, zero */
		[28] = 0x82, 0xfd, 0x00, 0x2a,
	};

	(void)state;
	assert_true(stellar_icrc_check(ip, false, udp, bth, sizeof(bth)));
	assert_int_equal(stellar_icrc(ip, false, udp, bth, 28), 0x2a00fd82);
	assert_int_equal(ref_icrc(ip, false, udp, bth, 28), 0x2a00fd82);
	bth[20] ^= 0x01;
	assert_false(stellar_icrc_check(ip, false, udp, bth, sizeof(bth)));
}

/*
 * UC SEND_ONLY, IPv4 192.168.0.7 -> 192.168.0.7, M set, PadCnt 2, QPN 211,
 * PSN 13571856, 20 bytes of payload and pad; ICRC 78 f3 53 f3 as computed
 * by scapy's RoCE layer.
 */
static void test_icrc_scapy_uc_send(void **state)
{
	static const uint8_t ip[IP4_LEN] = {
		0x45, 0x01, 0x00, 0x40, 0x04, 0x78, 0x40, 0x00, 0x40, 0x11,
		0xb4, 0xd5, 0xc0, 0xa8, 0x00, 0x07, 0xc0, 0xa8, 0x00, 0x07,
	};
	static const uint8_t udp[UDP_LEN] = {
		0xc0, 0x00, 0x12, 0xb7, 0x00, 0x2c, 0xac, 0xa2,
	};
	static const uint8_t bth[36] = {
		0x24, 0x60, 0xff, 0xff, 0x00, 0x00, 0x00, 0xd3,
		0x00, 0xcf, 0x17, 0x10,
		0x46, 0x30, 0x81, 0x8b, 0xe2, 0x89, 0x35, 0xd9, 0x0e, 0x9a,
		0x95, 0x50, 0x54, 0x01, 0xbe, 0x88, 0x5e, 0x50, 0x00, 0x00,
		0x78, 0xf3, 0x53, 0xf3,
	};
	struct stellar_pkt pkt;

	(void)state;
	assert_int_equal(stellar_parse_packet(bth, sizeof(bth), &pkt),
			 STELLAR_RX_OK);
	assert_int_equal(pkt.dest_qpn, 211);
	assert_int_equal(pkt.psn, 13571856);
	assert_int_equal(pkt.payload_len, 18);
	assert_true(stellar_icrc_check(ip, false, udp, bth, sizeof(bth)));
}

static void flip_and_expect(struct test_packet *tp, uint8_t *byte,
			    uint8_t bits, bool still_valid)
{
	*byte ^= bits;
	assert_int_equal(tp_check(tp), still_valid);
	*byte ^= bits;
	assert_true(tp_check(tp));
}

static void test_icrc_detects_changes(void **state)
{
	static struct test_packet tp;
	struct test_rng rng;
	uint32_t i;

	(void)state;
	test_rng_seed(&rng, 3);
	make_test_packet(&tp, false, STELLAR_OP_RC_SEND_ONLY, 64, &rng);
	tp_store(&tp);
	assert_true(tp_check(&tp));
	/* every payload, header and ICRC bit that the ICRC covers */
	for (i = BTH_LEN; i < tp.udp_payload_len; i++)
		flip_and_expect(&tp, &tp.bth[i], 0x01, false);
	for (i = 0; i < BTH_LEN; i++)
		if (i != 4)
			flip_and_expect(&tp, &tp.bth[i], 0x80, false);
	flip_and_expect(&tp, &tp.l3[12], 0x01, false);	/* source address */
	flip_and_expect(&tp, &tp.l3[19], 0x01, false);	/* dest address */
	flip_and_expect(&tp, &tp.l3[6], 0x40, false);	/* DF */
	flip_and_expect(&tp, &tp.udp[1], 0x01, false);	/* source port */
	flip_and_expect(&tp, &tp.udp[5], 0x04, false);	/* length */
}

static void test_icrc_ignores_masked_ipv4(void **state)
{
	static struct test_packet tp;
	struct test_rng rng;

	(void)state;
	test_rng_seed(&rng, 4);
	make_test_packet(&tp, false, STELLAR_OP_UD_SEND_ONLY, 33, &rng);
	tp_store(&tp);
	flip_and_expect(&tp, &tp.l3[1], 0xff, true);	/* TOS: DSCP, ECN */
	flip_and_expect(&tp, &tp.l3[8], 0x3f, true);	/* TTL */
	flip_and_expect(&tp, &tp.l3[10], 0xa5, true);	/* checksum */
	flip_and_expect(&tp, &tp.l3[11], 0x5a, true);
	flip_and_expect(&tp, &tp.udp[6], 0xff, true);	/* UDP checksum */
	flip_and_expect(&tp, &tp.udp[7], 0x01, true);
	flip_and_expect(&tp, &tp.bth[4], 0xc0, true);	/* FECN, BECN */
	flip_and_expect(&tp, &tp.bth[4], 0x3f, true);	/* resv6 */
}

static void test_icrc_ignores_masked_ipv6(void **state)
{
	static struct test_packet tp;
	struct test_rng rng;

	(void)state;
	test_rng_seed(&rng, 5);
	make_test_packet(&tp, true, STELLAR_OP_RC_SEND_ONLY_WITH_IMMEDIATE, 7,
			 &rng);
	tp_store(&tp);
	flip_and_expect(&tp, &tp.l3[0], 0x0f, true);	/* traffic class */
	flip_and_expect(&tp, &tp.l3[1], 0xff, true);	/* tclass, flow */
	flip_and_expect(&tp, &tp.l3[3], 0x80, true);	/* flow label */
	flip_and_expect(&tp, &tp.l3[7], 0x3f, true);	/* hop limit */
	flip_and_expect(&tp, &tp.udp[6], 0xff, true);
	flip_and_expect(&tp, &tp.bth[4], 0x40, true);
	flip_and_expect(&tp, &tp.l3[0], 0x10, false);	/* version */
	flip_and_expect(&tp, &tp.l3[6], 0x01, false);	/* next header */
	flip_and_expect(&tp, &tp.l3[39], 0x01, false);	/* dest address */
	flip_and_expect(&tp, &tp.l3[5], 0x08, false);	/* payload length */
}

/* Random packets of both families and many opcodes and lengths. */
static void test_icrc_random_packets(void **state)
{
	static const u8 opcodes[] = {
		STELLAR_OP_RC_SEND_ONLY, STELLAR_OP_RC_RDMA_WRITE_FIRST,
		STELLAR_OP_RC_ACKNOWLEDGE, STELLAR_OP_RC_RDMA_READ_RESPONSE_LAST,
		STELLAR_OP_UC_SEND_ONLY_WITH_IMMEDIATE,
		STELLAR_OP_UD_SEND_ONLY_WITH_IMMEDIATE,
	};
	static struct test_packet tp;
	struct test_rng rng;
	int round;

	(void)state;
	test_rng_seed(&rng, 6);
	for (round = 0; round < 300; round++) {
		u8 opcode = opcodes[test_rng_below(&rng, ARRAY_SIZE(opcodes))];
		uint32_t payload_len = opcode == STELLAR_OP_RC_ACKNOWLEDGE ? 0 :
				       test_rng_below(&rng, 2000);
		bool is_ipv6 = round & 1;

		make_test_packet(&tp, is_ipv6, opcode, payload_len, &rng);
		test_rng_fill(&rng, tp.l3, is_ipv6 ? IP6_LEN : IP4_LEN);
		test_rng_fill(&rng, tp.udp, UDP_LEN);
		tp_store(&tp);
		assert_int_equal(stored_le32(&tp), tp_ref(&tp));
		assert_true(tp_check(&tp));
	}
}

/* Exactly sized buffers: valgrind reports any read outside them. */
static void test_icrc_exact_buffers(void **state)
{
	static struct test_packet tp;
	struct test_rng rng;
	uint8_t *l3, *udp, *bth;

	(void)state;
	test_rng_seed(&rng, 8);
	make_test_packet(&tp, true, STELLAR_OP_RC_SEND_ONLY, 17, &rng);
	tp_store(&tp);
	l3 = test_exact_copy(tp.l3, IP6_LEN);
	udp = test_exact_copy(tp.udp, UDP_LEN);
	bth = test_exact_copy(tp.bth, tp.udp_payload_len);
	assert_true(stellar_icrc_check(l3, true, udp, bth,
				       tp.udp_payload_len));
	stellar_icrc_store(l3, true, udp, bth, tp.udp_payload_len);
	assert_memory_equal(bth, tp.bth, tp.udp_payload_len);
	free(l3);
	free(udp);
	free(bth);
}

static void test_icrc_short_packets(void **state)
{
	static const uint8_t zeros[IP6_LEN];
	uint8_t *bth;
	uint32_t len;

	(void)state;
	for (len = 0; len < BTH_LEN + 4; len++) {
		bth = test_exact_copy(zeros, len);
		assert_false(stellar_icrc_check(zeros, true, zeros, bth, len));
		stellar_icrc_store(zeros, true, zeros, bth, len);
		if (len)
			assert_memory_equal(bth, zeros, len);
		if (len < BTH_LEN)
			assert_int_equal(stellar_icrc(zeros, false, zeros, bth,
						      len), 0);
		free(bth);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32_le_matches_zlib),
		cmocka_unit_test(test_icrc_seed),
		cmocka_unit_test(test_icrc_ipv4_send),
		cmocka_unit_test(test_icrc_ipv6_write),
		cmocka_unit_test(test_icrc_connectx_capture),
		cmocka_unit_test(test_icrc_scapy_uc_send),
		cmocka_unit_test(test_icrc_detects_changes),
		cmocka_unit_test(test_icrc_ignores_masked_ipv4),
		cmocka_unit_test(test_icrc_ignores_masked_ipv6),
		cmocka_unit_test(test_icrc_random_packets),
		cmocka_unit_test(test_icrc_exact_buffers),
		cmocka_unit_test(test_icrc_short_packets),
	};

	return cmocka_run_group_tests_name("stellar_icrc", tests, NULL, NULL);
}
