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

/*
 * Driver ioctl attributes and methods (the uverbs driver namespace, bit
 * UVERBS_ID_NS_SHIFT of an id), for ibv_import_device() and
 * ibv_import_pd():
 *  - UVERBS_METHOD_QUERY_CONTEXT with STELLAR_ATTR_QUERY_CONTEXT_RESP_UCTX
 *    (optional, out) returns what stellar_alloc_ucontext_resp said;
 *  - STELLAR_METHOD_PD_QUERY on UVERBS_OBJECT_PD: the PD of handle
 *    STELLAR_ATTR_QUERY_PD_HANDLE (in, mandatory) and its number in
 *    STELLAR_ATTR_QUERY_PD_RESP_PDN (out, __u32, mandatory).
 */
#define STELLAR_UVERBS_DRIVER_ID(n)	((1U << 12) + (n))

enum stellar_query_context_attrs {
	STELLAR_ATTR_QUERY_CONTEXT_RESP_UCTX = STELLAR_UVERBS_DRIVER_ID(0),
};

enum stellar_pd_methods {
	STELLAR_METHOD_PD_QUERY = STELLAR_UVERBS_DRIVER_ID(0),
};

enum stellar_query_pd_attrs {
	STELLAR_ATTR_QUERY_PD_HANDLE = STELLAR_UVERBS_DRIVER_ID(0),
	STELLAR_ATTR_QUERY_PD_RESP_PDN,
};

/*
 * Queues are rings in memory shared by the kernel and the process, mapped
 * with mmap(2) on the uverbs file at the offset the create response names.
 *
 * A ring is a struct stellar_ring header followed by num_entries entries
 * of entry_size bytes (both powers of two).  producer and consumer are
 * free-running 32-bit counters; entry i lives at index i & (num_entries-1).
 * Each side writes only its own counter (store-release after filling or
 * consuming an entry) and reads the other's with load-acquire.  The kernel
 * never trusts a counter written by the process: it bounds every use.
 *
 *   SQ:  process produces send WQEs,    kernel consumes
 *   RQ:  process produces receive WQEs, kernel consumes (also SRQ)
 *   CQ:  kernel produces CQEs,          process consumes
 */
struct stellar_ring {
	__u32 producer;
	__u32 pad0[15];		/* producer and consumer on own cache lines */
	__u32 consumer;
	__u32 flags;		/* enum stellar_ring_flags, kernel-written */
	__u32 pad1[14];
};

/*
 * stellar_ring.flags.  STELLAR_RING_POLLED on a send ring: the kernel's
 * doorbell poller watches this ring, so publishing the producer counter is
 * enough and the doorbell system call can be skipped.  The process reads
 * the flag after a full memory barrier that follows its producer store;
 * the kernel re-reads the producer after clearing the flag, so a WQE
 * published while the poller goes to sleep is never missed.
 */
enum stellar_ring_flags {
	STELLAR_RING_POLLED	= 1 << 0,
};

#define STELLAR_RING_HDR_SIZE	128

struct stellar_sge {
	__u64 addr;
	__u32 length;
	__u32 lkey;
};

/* stellar_sq_wqe.flags; the values of enum ibv_send_flags. */
enum stellar_wqe_flags {
	STELLAR_WQE_FENCE	= 1 << 0,
	STELLAR_WQE_SIGNALED	= 1 << 1,
	STELLAR_WQE_SOLICITED	= 1 << 2,
	STELLAR_WQE_INLINE	= 1 << 3,
};

/*
 * IBV_WR_ATOMIC_WRITE and IBV_WC_ATOMIC_WRITE, which the kernel's uAPI of
 * 6.1 does not name yet: an RC WQE whose u.atomic_write.value is written
 * to remote_addr (8-byte aligned) after every earlier request of the QP,
 * atomically with respect to the device's other remote atomics.
 */
#define STELLAR_WR_ATOMIC_WRITE		15
#define STELLAR_WC_ATOMIC_WRITE		9

/*
 * A send work request.  opcode takes the values of enum ibv_wr_opcode
 * (IB_UVERBS_WR_*).  After the fixed part come num_sge struct stellar_sge,
 * or inline_len bytes of data when STELLAR_WQE_INLINE is set.
 */
struct stellar_sq_wqe {
	__u64 wr_id;
	__u8 opcode;
	__u8 num_sge;
	__u16 flags;
	__u32 inline_len;
	__be32 imm_data;	/* or the rkey to invalidate */
	__u32 xrc_srqn;		/* XRC send QPs: the SRQ at the responder */
	union {
		struct {
			__u64 remote_addr;
			__u32 rkey;
			__u32 reserved;
		} rdma;
		struct {
			__u64 remote_addr;
			__u64 compare_add;
			__u64 swap;
			__u32 rkey;
			__u32 reserved;
		} atomic;
		struct {
			__u64 remote_addr;	/* as in rdma */
			__u32 rkey;
			__u32 reserved;
			__u64 value;		/* the bytes, in memory order */
		} atomic_write;
		struct {
			__u32 mw_rkey;		/* the window's R_Key now */
			__u32 new_rkey;		/* same index, new low byte */
			__u64 addr;		/* in the region's iova space */
			__u64 length;		/* 0: unbind (type 1) */
			__u32 mr_lkey;		/* the region it opens */
			__u32 access;		/* IBV_ACCESS_REMOTE_* */
		} bind;
		struct {
			__u32 ah_handle;	/* from create_ah */
			__u32 remote_qpn;
			__u32 remote_qkey;
			__u32 reserved;
		} ud;
		__u64 raw[4];
	} u;
	/* struct stellar_sge sge[num_sge], or inline data */
};

/* A receive work request, followed by num_sge struct stellar_sge. */
struct stellar_rq_wqe {
	__u64 wr_id;
	__u32 num_sge;
	__u32 reserved;
};

/* stellar_cqe.wc_flags; the values of enum ibv_wc_flags. */
enum stellar_cqe_flags {
	STELLAR_CQE_GRH		= 1 << 0,
	STELLAR_CQE_WITH_IMM	= 1 << 1,
	STELLAR_CQE_WITH_INV	= 1 << 3,
};

/*
 * A completion.  status and opcode take the values of enum ibv_wc_status
 * and enum ibv_wc_opcode (the kernel's enum ib_wc_status/ib_wc_opcode use
 * the same numbers).
 */
struct stellar_cqe {
	__u64 wr_id;
	__u8 status;
	__u8 opcode;
	__u8 wc_flags;
	__u8 sl;
	__u32 vendor_err;
	__u32 byte_len;
	__be32 imm_data;	/* or the invalidated rkey */
	__u32 qp_num;
	__u32 src_qp;
	__u16 pkey_index;
	__u16 slid;
	__u8 dlid_path_bits;
	__u8 port_num;
	__u16 reserved0;
	union {
		/*
		 * CQs created with IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION:
		 * when the entry was written, in CLOCK_MONOTONIC ns (the
		 * device's clock: hca_core_clock 1 GHz); else 0.
		 */
		__u64 completion_ts;
		__u64 reserved1;	/* kernel QPs: internal use */
	};
};

/* Where one ring is and how it is laid out. */
struct stellar_ring_info {
	__aligned_u64 mmap_offset;
	__u32 mmap_size;
	__u32 num_entries;
	__u32 entry_size;
	__u32 reserved;
};

struct stellar_create_cq_resp {
	struct stellar_ring_info cq;
};

struct stellar_create_qp_resp {
	struct stellar_ring_info sq;
	struct stellar_ring_info rq;	/* all zero with an SRQ */
	__u32 qp_num;
	__u32 reserved;
};

struct stellar_create_srq_resp {
	struct stellar_ring_info rq;
	__u32 srq_num;
	__u32 reserved;
};

struct stellar_create_ah_resp {
	__u32 ah_handle;
	__u32 reserved;
};

/*
 * Response to resize_cq: the CQ's new ring.  The kernel copies the
 * completions not yet polled into it, keeping the producer and consumer
 * counters, and stops writing the old ring, which the process unmaps.
 */
struct stellar_resize_cq_resp {
	struct stellar_ring_info cq;
};

/*
 * Driver data of modify_srq.  The command has no response buffer, so to
 * change max_wr (IB_SRQ_MAX_WR) the process names, in response, where the
 * kernel writes a struct stellar_modify_srq_resp describing the new ring.
 * The kernel copies the receive requests not yet taken into it, keeping
 * the counters, and stops reading the old ring.
 */
struct stellar_modify_srq_cmd {
	__aligned_u64 response;		/* user address, 0 without IB_SRQ_MAX_WR */
};

struct stellar_modify_srq_resp {
	struct stellar_ring_info rq;
};

#endif /* STELLAR_ABI_USER_H */
