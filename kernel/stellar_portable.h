/* SPDX-License-Identifier: GPL-2.0 */
/*
 * virtio-stellar: the one include of the portable wire and PSN code.
 *
 * stellar_wire.c, stellar_psn.c and stellar_tbf.c build both into the kernel module and,
 * unchanged, into the userspace unit tests (tests/unit).  They include only
 * this header, which maps the few kernel facilities they use onto the
 * kernel headers or onto tests/unit/stellar_user_compat.h.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_PORTABLE_H
#define STELLAR_PORTABLE_H

#ifdef __KERNEL__

#include <linux/types.h>
#include <linux/bitfield.h>
#include <linux/bitops.h>
#include <linux/string.h>
#include <linux/kernel.h>
#include <linux/crc32.h>
#include <linux/math64.h>
#include <asm/byteorder.h>

/* CRC-32 (IEEE 802.3, reflected), no pre- or post-inversion. */
#define stellar_crc32_le(crc, p, len)	crc32_le(crc, p, len)
/* @a * @b / @c without overflow of the product. */
#define stellar_mul_div(a, b, c)	mul_u64_u64_div_u64(a, b, c)

#else /* !__KERNEL__ */

#include "stellar_user_compat.h"

#endif /* __KERNEL__ */

#endif /* STELLAR_PORTABLE_H */
