/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * virtio-stellar user/kernel verbs ABI.
 *
 * Shared verbatim by the kernel module (kernel/) and the rdma-core
 * provider (providers/stellar/).  Every structure here is passed through
 * the uverbs "driver data" channel, so layouts are fixed: only __u types,
 * explicit padding, 8-byte aligned sizes.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_ABI_USER_H
#define STELLAR_ABI_USER_H

#include <linux/types.h>

/* Reported as ib_device_ops.uverbs_abi_ver; the provider matches on it. */
#define STELLAR_UVERBS_ABI_VERSION	1

/* ib_device names created by this driver all start with this. */
#define STELLAR_DEV_PREFIX		"stellar"

/*
 * ib_device_attr.fw_ver encoding: major, minor and sub-minor in 16-bit
 * fields at bits 47..32, 31..16 and 15..0, printed "major.minor.sub".
 */
#define STELLAR_FW_VER(major, minor, sub) \
	(((__u64)(major) << 32) | ((__u64)(minor) << 16) | (__u64)(sub))
#define STELLAR_FW_MAJOR(fw)	((unsigned int)(((fw) >> 32) & 0xffff))
#define STELLAR_FW_MINOR(fw)	((unsigned int)(((fw) >> 16) & 0xffff))
#define STELLAR_FW_SUB(fw)	((unsigned int)((fw) & 0xffff))

/* Capability bits in stellar_alloc_ucontext_resp.caps. */
enum stellar_ucontext_caps {
	STELLAR_UCTX_CAP_MMAP_QUEUES	= 1 << 0,	/* rings are mmappable */
	STELLAR_UCTX_CAP_POLL_DOORBELL	= 1 << 1,	/* kernel doorbell poller */
};

struct stellar_alloc_ucontext_resp {
	__u32 abi_version;	/* STELLAR_UVERBS_ABI_VERSION */
	__u32 caps;		/* enum stellar_ucontext_caps */
	__u32 max_inline_data;
	__u32 reserved;
};

struct stellar_alloc_pd_resp {
	__u32 pdn;
	__u32 reserved;
};

#endif /* STELLAR_ABI_USER_H */
