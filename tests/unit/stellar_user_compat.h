/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * virtio-stellar: userspace stand-ins for the kernel facilities used by the
 * portable kernel sources (kernel/stellar_portable.h), so the unit tests
 * compile kernel/stellar_wire.c and kernel/stellar_psn.c unchanged.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_USER_COMPAT_H
#define STELLAR_USER_COMPAT_H

#include <assert.h>
#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;

/* No sparse in userspace: the bitwise types are plain integers. */
typedef uint16_t __be16;
typedef uint32_t __be32;
typedef uint64_t __be64;
typedef uint16_t __le16;
typedef uint32_t __le32;
typedef uint64_t __le64;

#define __force
#define __pure		__attribute__((pure))

#define cpu_to_be16(x)	((__be16)htobe16(x))
#define cpu_to_be32(x)	((__be32)htobe32(x))
#define cpu_to_be64(x)	((__be64)htobe64(x))
#define be16_to_cpu(x)	((u16)be16toh(x))
#define be32_to_cpu(x)	((u32)be32toh(x))
#define be64_to_cpu(x)	((u64)be64toh(x))
#define cpu_to_le16(x)	((__le16)htole16(x))
#define cpu_to_le32(x)	((__le32)htole32(x))
#define cpu_to_le64(x)	((__le64)htole64(x))
#define le16_to_cpu(x)	((u16)le16toh(x))
#define le32_to_cpu(x)	((u32)le32toh(x))
#define le64_to_cpu(x)	((u64)le64toh(x))

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define BITS_PER_LONG	((int)(sizeof(long) * 8))
#define BIT(n)		(1UL << (n))
#define BIT_ULL(n)	(1ULL << (n))
#define GENMASK(h, l) \
	((~0UL << (l)) & (~0UL >> (BITS_PER_LONG - 1 - (h))))
#define GENMASK_ULL(h, l) \
	((~0ULL << (l)) & (~0ULL >> (63 - (h))))

/* linux/bitops.h: the 1-based index of the highest set bit, 0 for 0. */
static inline int fls64(u64 x)
{
	return x ? 64 - __builtin_clzll(x) : 0;
}

#define U8_MAX		((u8)~0U)
#define U16_MAX		((u16)~0U)
#define U32_MAX		((u32)~0U)
#define U64_MAX		((u64)~0ULL)

/* linux/bitfield.h: @mask is a constant contiguous mask. */
#define __stellar_bf_shift(mask)	__builtin_ctzll(mask)
#define FIELD_PREP(mask, val) \
	((__typeof__(mask))(((__typeof__(mask))(val) << \
			     __stellar_bf_shift(mask)) & (mask)))
#define FIELD_GET(mask, reg) \
	((__typeof__(mask))(((reg) & (mask)) >> __stellar_bf_shift(mask)))
#define FIELD_FIT(mask, val) \
	(!((((__typeof__(mask))(val)) << __stellar_bf_shift(mask)) & ~(mask)))
#define FIELD_MAX(mask)	((mask) >> __stellar_bf_shift(mask))

/*
 * Same contract as the kernel's crc32_le(): reflected CRC-32 with the IEEE
 * 802.3 polynomial, @crc is the running value, no inversion on entry or
 * exit.  Bitwise on purpose: obviously right, speed does not matter here.
 */
static inline u32 stellar_crc32_le(u32 crc, const unsigned char *p, size_t len)
{
	int bit;

	while (len--) {
		crc ^= *p++;
		for (bit = 0; bit < 8; bit++)
			crc = (crc >> 1) ^ (0xedb88320U & (0U - (crc & 1U)));
	}
	return crc;
}

/* The kernel's mul_u64_u64_div_u64(): @a * @b / @c, 128-bit product. */
static inline u64 stellar_mul_div(u64 a, u64 b, u64 c)
{
	return (u64)((unsigned __int128)a * b / c);
}

#endif /* STELLAR_USER_COMPAT_H */
