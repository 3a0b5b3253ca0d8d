/* SPDX-License-Identifier: GPL-2.0 */
/*
 * virtio-stellar: software RoCEv2 device - driver-wide definitions.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_H
#define STELLAR_H

#include <linux/completion.h>
#include <linux/hashtable.h>
#include <linux/list.h>
#include <linux/refcount.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/percpu.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_verbs.h>

#include "stellar-abi.h"
#include "stellar_queue.h"
#include "stellar-netlink.h"
#include "stellar_limits.h"
#include "stellar_spray_dev.h"

#define STELLAR_DRV_NAME		"virtio_stellar"
#define STELLAR_UDP_PORT		4791
#define STELLAR_FW_VERSION		STELLAR_FW_VER(0, 1, 0)

/* Device limits reported through query_device. */
#define STELLAR_VENDOR_ID		0xffffff	/* no IEEE OUI: software */
#define STELLAR_MAX_QP			0x10000
#define STELLAR_MAX_QP_WR		0x4000
#define STELLAR_MAX_SGE			32
#define STELLAR_MAX_SGE_RD		32
#define STELLAR_MAX_CQ			0x10000
#define STELLAR_MAX_CQE			0x10000
/* The clock of CQE timestamps: nanoseconds, i.e. 1 GHz (in kHz). */
#define STELLAR_CORE_CLOCK_KHZ		1000000
#define STELLAR_MAX_MR			0x40000
#define STELLAR_MAX_PD			0x10000
#define STELLAR_MAX_AH			0x10000
#define STELLAR_MAX_SRQ			0x4000
#define STELLAR_MAX_SRQ_WR		0x4000
#define STELLAR_MAX_INLINE_DATA		256
#define STELLAR_MAX_FAST_REG_PAGES	512
#define STELLAR_MAX_RD_ATOM		128
#define STELLAR_MAX_MR_SIZE		(1ULL << 46)
#define STELLAR_MAX_MSG_SIZE		0x80000000U
#define STELLAR_GID_TBL_LEN		1024
#define STELLAR_PKEY_TBL_LEN		1
#define STELLAR_DEFAULT_PKEY		0xffff
#define STELLAR_LOCAL_ACK_DELAY		15
/* Port speed in Mb/s when the netdev reports none (stellar_port_speed). */
#define STELLAR_DEFAULT_SPEED		10000
#define STELLAR_MAX_MCAST_GRP		1024
#define STELLAR_MAX_MCAST_QP_ATTACH	64
#define STELLAR_MAX_TOTAL_MCAST_QP_ATTACH 4096

/* The destination QPN of a UD packet sent to a multicast group. */
#define STELLAR_MCAST_QPN		0xffffff
/* Buckets of a device's multicast group table: 1 << this many. */
#define STELLAR_MCAST_HASH_BITS		8

/* The first QPN handed to ordinary QPs; 0 and 1 are SMI and GSI. */
#define STELLAR_FIRST_QPN		0x11

/* Bounds of the tunables, for module parameters and per-device settings. */
#define STELLAR_RX_BUF_SIZE_MIN		4096
#define STELLAR_RX_BUF_SIZE_MAX		(64 << 20)
#define STELLAR_SPRAY_PATHS_MIN		1
#define STELLAR_SPRAY_PATHS_MAX		256
#define STELLAR_EMTT_CACHE_SIZE_MIN	0
#define STELLAR_EMTT_CACHE_SIZE_MAX	1024
#define STELLAR_DB_POLL_INTERVAL_MIN	0
#define STELLAR_DB_POLL_INTERVAL_MAX	1000000
#define STELLAR_RX_QUEUE_BYTES_MIN	4096
#define STELLAR_RX_QUEUE_BYTES_MAX	(1 << 30)
#define STELLAR_PIN_MODE_DEFAULT	STELLAR_PIN_LAZY
#define STELLAR_CC_DEFAULT		STELLAR_CC_DCQCN
/* cc_max_rate, Mb/s; 0 stands for STELLAR_DEFAULT_SPEED. */
#define STELLAR_CC_MAX_RATE_MAX		1600000

/**
 * struct stellar_settings - per-device tunables
 * @rx_buf_size: bytes of out-of-order receive state a QP may hold
 * @spray_paths: UDP source-port paths a QP spreads its packets over
 * @emtt_cache_size: translation cache entries, in thousands (0: off)
 * @db_poll_interval: doorbell poller period in microseconds (0: off)
 * @pin_mode: enum stellar_pin_mode of new user memory registrations
 * @cc: enum stellar_cc_mode of QPs that enter RTS from now on
 * @cc_max_rate: their line rate in Mb/s, where they start (0: the default)
 *
 * New devices copy the module parameters; stellar-tool may change a
 * device's copy afterwards.
 */
struct stellar_settings {
	u32 rx_buf_size;
	u32 spray_paths;
	u32 emtt_cache_size;
	u32 db_poll_interval;
	u32 pin_mode;
	u32 cc;
	u32 cc_max_rate;
};

/* Per-CPU device counters, indexed by enum stellar_genl_stat. */
struct stellar_counters {
	u64 val[__STELLAR_STAT_MAX];
};

struct stellar_udp;
struct stellar_mem;
struct stellar_pvdma_mr;
struct stellar_lat_dev;

/**
 * struct stellar_dev - one stellar RDMA device bound to one netdev
 * @ibdev: the RDMA core device; must stay first (ib_alloc_device)
 * @ndev: the netdev the device sends and receives on
 * @udp: the UDP 4791 sockets of @ndev's network namespace (held)
 * @list: entry in the driver's device list (stellar_dev_list)
 * @settings: per-device tunables
 * @counters: per-CPU packet counters
 * @qps: QPN to struct stellar_qp
 * @mrs: MR index (key >> 8) to struct stellar_mr
 * @ahs: AH handle to struct stellar_ah
 * @srqs: SRQ number to struct stellar_srq
 * @atomic_lock: makes remote atomic operations atomic with each other
 * @mw_lock: serialises binding, invalidating and freeing memory windows
 * @next_qpn: cursor for cyclic QPN allocation
 * @pd_serial: source of PD numbers (informational only)
 * @num_pds: PDs allocated, at most STELLAR_MAX_PD
 * @num_cqs: CQs created, at most STELLAR_MAX_CQ
 * @last_port_state: port state last reported with an event
 * @db_thread: doorbell poller (stellar_doorbell.c)
 * @db_wait: where the idle poller sleeps
 * @db_wake: a system-call doorbell asked the poller to resume
 * @proc_dir: /proc/stellar/<name>, named at registration
 * @proc_name: the name @proc_dir was created with
 * @spray: packet spray statistics (stellar_spray_dev.c)
 * @lat: latency telemetry (stellar_lat.c)
 * @mem: PVDMA and eMTT state (stellar_mem.h)
 * @rx_queued: truesize of the received skbs queued for the QPs' receive
 *	work, capped by the rx_queue_bytes module parameter
 * @rx_queued_max: the most @rx_queued ever was
 * @mcast_lock: serialises attaching and detaching multicast groups
 * @mcast_groups: multicast GID to struct stellar_mcg (stellar_mcast.c);
 *	changed under @mcast_lock, read under RCU by the receive path
 * @mcast_seed: hash seed of @mcast_groups
 * @num_mcast_grps: groups with at least one QP, at most
 *	STELLAR_MAX_MCAST_GRP (under @mcast_lock)
 * @num_mcast_attach: QP attachments over all groups, at most
 *	STELLAR_MAX_TOTAL_MCAST_QP_ATTACH (under @mcast_lock)
 * @limits: the tenant limits: rate, QPs, MRs, pinned memory
 *	(stellar_limits.h)
 */
struct stellar_dev {
	struct ib_device ibdev;
	struct net_device *ndev;
	struct stellar_udp *udp;
	struct list_head list;
	struct stellar_settings settings;
	struct stellar_counters __percpu *counters;
	struct xarray qps;
	struct xarray mrs;
	struct xarray ahs;
	struct xarray srqs;
	spinlock_t atomic_lock;		/* remote atomics */
	struct mutex mw_lock;		/* memory window state */
	u32 next_qpn;
	atomic_t pd_serial;
	atomic_t num_pds;
	atomic_t num_cqs;
	int last_port_state;
	struct task_struct *db_thread;
	wait_queue_head_t db_wait;
	bool db_wake;
	struct proc_dir_entry *proc_dir;
	char proc_name[IB_DEVICE_NAME_MAX];
	struct stellar_spray_dev_stats spray;
	struct stellar_lat_dev *lat;
	struct stellar_mem *mem;
	atomic_long_t rx_queued;
	atomic_long_t rx_queued_max;
	struct mutex mcast_lock;	/* multicast attach and detach */
	DECLARE_HASHTABLE(mcast_groups, STELLAR_MCAST_HASH_BITS);
	u32 mcast_seed;
	u32 num_mcast_grps;
	u32 num_mcast_attach;
	struct stellar_limits limits;
};

struct stellar_ucontext {
	struct ib_ucontext ibuc;
};

struct stellar_pd {
	struct ib_pd ibpd;
	u32 pdn;
};

/**
 * struct stellar_cq - completion queue, a ring of struct stellar_cqe
 * @ibcq: core object
 * @queue: the ring; the kernel produces, the consumer (kernel ULP or
 *	   process) consumes
 * @producer: the kernel's producer counter (authoritative copy)
 * @notify: armed notification (IB_CQ_SOLICITED or IB_CQ_NEXT_COMP), 0 if not
 * @overflowed: set once a completion was lost because the ring was full
 * @is_user: the ring is mapped into a process
 * @timestamps: CQEs carry their completion time (user CQs that asked)
 */
struct stellar_cq {
	struct ib_cq ibcq;
	struct stellar_queue queue;
	u32 producer;
	u32 notify;
	bool overflowed;
	bool is_user;
	bool timestamps;
};

/**
 * struct stellar_recv_wqe - a receive work request, copied out of its ring
 * @wr_id: the consumer's cookie
 * @num_sge: entries used in @sge
 * @sge: scatter list
 */
struct stellar_recv_wqe {
	u64 wr_id;
	u32 num_sge;
	struct stellar_sge sge[STELLAR_MAX_SGE];
};

/**
 * struct stellar_xrcd - XRC domain (stellar_verbs.c)
 * @ibxrcd: the core's object, which processes share through an inode
 */
struct stellar_xrcd {
	struct ib_xrcd ibxrcd;
};

/**
 * struct stellar_srq - shared receive queue
 * @ibsrq: core object
 * @rq: ring of struct stellar_rq_wqe
 * @consumer: the kernel's consumer counter
 * @max_sge: scatter entries per request
 * @limit: armed SRQ limit (0: not armed)
 * @srq_num: number reported to the process; XRC requests name the
 *	     XRC SRQ they are for by it
 * @serial: never reused, unlike @srq_num: a message that began in this
 *	    SRQ goes on only in it
 * @is_user: the ring is mapped into a process
 * @ref: references from lookups by number (stellar_xrc_srq_get()) and the
 *	 creator's; destroy waits for the others to go
 * @released: completed when @ref drops to zero
 */
struct stellar_srq {
	struct ib_srq ibsrq;
	struct stellar_queue rq;
	u32 consumer;
	u32 max_sge;
	u32 limit;
	u32 srq_num;
	u64 serial;
	bool is_user;
	refcount_t ref;
	struct completion released;
};

/**
 * struct stellar_av - where packets go: what the transmit path needs
 * @sgid: source GID (IPv4-mapped or IPv6 address)
 * @dgid: destination GID
 * @dmac: destination MAC
 * @network_type: RDMA_NETWORK_IPV4 or RDMA_NETWORK_IPV6
 * @hop_limit: IP TTL / hop limit
 * @traffic_class: IP DSCP/ECN byte
 * @flow_label: IPv6 flow label
 * @valid: filled from an address handle or QP path
 */
struct stellar_av {
	union ib_gid sgid;
	union ib_gid dgid;
	u8 dmac[ETH_ALEN];
	u8 network_type;
	u8 hop_limit;
	u8 traffic_class;
	u32 flow_label;
	bool valid;
};

/**
 * struct stellar_ah - address handle
 * @ibah: core object
 * @av: the resolved address
 * @handle: number in the device's AH table (user WQEs name AHs by it)
 */
struct stellar_ah {
	struct ib_ah ibah;
	struct stellar_av av;
	u32 handle;
};

struct stellar_qp_xport;

/**
 * struct stellar_qp - queue pair
 * @ibqp: core object
 * @state_lock: serialises modify_qp and reads of @attr
 * @attr: current attributes (state, PSNs, path)
 * @av: the path of a connected QP (from IB_QP_AV)
 * @sq: send ring of struct stellar_sq_wqe + SGEs/inline data
 * @sq_consumer: oldest send WQE not yet completed (kernel's copy)
 * @sq_max_sge: SGEs per send WQE
 * @sq_max_inline: inline bytes per send WQE
 * @rq: receive ring (unused with an SRQ)
 * @rq_consumer: next receive WQE to take (kernel's copy)
 * @rq_max_sge: SGEs per receive WQE
 * @srq: shared receive queue or NULL
 * @sq_sig_all: every send request completes
 * @is_user: the rings are mapped into a process
 * @xport: transport state (requester, responder, completer)
 * @db_seen: send producer counter the doorbell poller saw last
 * @ref: references from packet processing; the QP is freed at zero
 * @released: completed when @ref drops to zero
 * @spray_paths: paths set for this QP (stellar-tool), 0: the device's
 * @nr_mcast: multicast groups the QP is attached to (sdev->mcast_lock)
 * @was_mcast: the QP was attached to a multicast group at some time
 * @serial: numbers the QP, never reused (its QPN is, by a later QP), so
 *	    that a type 2 window bound to it grants nothing to that one
 */
struct stellar_qp {
	struct ib_qp ibqp;
	struct mutex state_lock;	/* @attr */
	struct ib_qp_attr attr;
	struct stellar_av av;
	struct stellar_queue sq;
	u32 sq_consumer;
	u32 sq_max_sge;
	u32 sq_max_inline;
	struct stellar_queue rq;
	u32 rq_consumer;
	u32 rq_max_sge;
	struct stellar_srq *srq;
	bool sq_sig_all;
	bool is_user;
	struct stellar_qp_xport *xport;
	u32 db_seen;
	refcount_t ref;
	struct completion released;
	u32 spray_paths;
	u32 nr_mcast;
	bool was_mcast;
	u64 serial;
};

/**
 * struct stellar_mr - memory region
 * @ibmr: core object
 * @pvdma: user memory, pinned on demand; NULL for DMA and fast-registration
 *	   MRs
 * @pages: fast-registration page list (kernel virtual addresses)
 * @npages: entries used in @pages
 * @max_pages: capacity of @pages
 * @access: IB_ACCESS_* flags
 * @iova: first virtual address the region answers to
 * @length: bytes
 * @is_dma: kernel DMA MR: addresses are kernel virtual addresses
 * @valid: the key may be used (fast registration MRs: registered)
 * @ref: references held by copies in progress
 * @released: completed when @ref drops to zero
 * @rcu: frees the MR after the lookups that may still see it (stellar_mr_get)
 * @copies: copies past the key check; invalidation waits for them
 */
/**
 * struct stellar_mw_state - what a memory window's key entry adds
 * @type: 0 for a region, IB_MW_TYPE_1 or IB_MW_TYPE_2 for a window
 * @qpn: a bound type 2 window: the only QP it grants access through
 * @qp_serial: that QP's serial, as its QPN may name a later QP
 * @parent_key: a bound window: the L_Key of the region it opens
 * @parent_serial: that region's serial, so that a new region that gets
 *		   the same key after it is never opened by the window
 */
struct stellar_mw_state {
	u8 type;
	u32 qpn;
	u64 qp_serial;
	u32 parent_key;
	u64 parent_serial;
};

/*
 * A memory region, or the key entry of a memory window (@mw.type set).
 * @serial numbers the registration (never reused); @mw_binds counts the
 * windows bound to a region, which may not go while there are any.
 */
struct stellar_mr {
	struct ib_mr ibmr;
	struct stellar_pvdma_mr *pvdma;
	u64 *pages;
	u32 npages;
	u32 max_pages;
	int access;
	u64 iova;
	u64 length;
	bool is_dma;
	bool valid;
	refcount_t ref;
	struct completion released;
	struct rcu_head rcu;
	atomic_t copies;
	u64 serial;
	atomic_t mw_binds;
	struct stellar_mw_state mw;
};

/**
 * struct stellar_mw - a memory window (stellar_mw.c)
 * @ibmw: the core's object
 * @key: its entry in the device's key table: a struct stellar_mr whose
 *	 @key->mw.type is set, whose iova, length and access are the
 *	 window's while it is bound, and whose rkey is the window's R_Key
 *	 (it has no L_Key); freed after a grace period, unlike @ibmw
 */
struct stellar_mw {
	struct ib_mw ibmw;
	struct stellar_mr *key;
};

/*
 * Memory a process makes the kernel hold: charged to its memory cgroup,
 * and at the cgroup's limit the request fails with -ENOMEM instead of
 * invoking the OOM killer.
 */
#define STELLAR_GFP_USER	(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | \
				 __GFP_NOWARN)

/**
 * stellar_obj_count_get() - count one more object against a device limit
 * @count: the device's counter of such objects
 * @max: the limit query_device advertises
 *
 * Return: 0, or -ENOMEM if @max objects exist already.
 */
static inline int stellar_obj_count_get(atomic_t *count, int max)
{
	return atomic_fetch_add_unless(count, 1, max) == max ? -ENOMEM : 0;
}

static inline struct stellar_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct stellar_dev, ibdev);
}

static inline struct stellar_pd *to_spd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct stellar_pd, ibpd);
}

static inline struct stellar_cq *to_scq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct stellar_cq, ibcq);
}

static inline struct stellar_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct stellar_qp, ibqp);
}

static inline struct stellar_mr *to_smr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct stellar_mr, ibmr);
}

static inline struct stellar_mw *to_smw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct stellar_mw, ibmw);
}

static inline struct stellar_srq *to_ssrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct stellar_srq, ibsrq);
}

static inline struct stellar_ah *to_sah(struct ib_ah *ibah)
{
	return container_of(ibah, struct stellar_ah, ibah);
}

/*
 * A statistic read without the lock its writer holds (so that reading
 * never waits for a data path): loaded once, as a whole word, and the race
 * is intended: the value may lag behind the writer by an update.
 */
#define stellar_peek(x)		data_race(READ_ONCE(x))

static inline void stellar_count(struct stellar_dev *sdev,
				 enum stellar_genl_stat stat, u64 n)
{
	this_cpu_add(sdev->counters->val[stat], n);
}

/* stellar_main.c: module parameters, the defaults for new devices */
void stellar_default_settings(struct stellar_settings *settings);
struct stellar_cc_params;
u32 stellar_default_cc_params(struct stellar_cc_params *p);
u32 stellar_rx_queue_bytes(void);

/* stellar_device.c */
extern struct list_head stellar_dev_list;
int stellar_device_init(void);
void stellar_device_exit(void);
int stellar_newlink(const char *ibdev_name, struct net_device *ndev);
void stellar_remove_all(void);
void stellar_dealloc_driver(struct ib_device *ibdev);
struct stellar_dev *stellar_dev_find_by_ndev_rcu(struct net_device *ndev);
struct stellar_dev *stellar_dev_get_by_name(struct net *net,
					    const char *name);
u64 stellar_read_counter(struct stellar_dev *sdev, enum stellar_genl_stat stat);
enum ib_port_state stellar_port_state(struct stellar_dev *sdev);

/* stellar_verbs.c */
extern const struct ib_device_ops stellar_dev_ops;
void stellar_verbs_set_uapi(struct ib_device *ibdev);

/* stellar_queue.c */
int stellar_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void stellar_mmap_free(struct rdma_user_mmap_entry *rdma);

/* stellar_cq.c */
int stellar_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		      struct ib_udata *udata);
int stellar_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int stellar_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int stellar_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int stellar_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);

/* stellar_qp.c */
int stellar_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		      struct ib_udata *udata);
int stellar_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		      int mask, struct ib_udata *udata);
int stellar_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		     struct ib_qp_init_attr *init);
int stellar_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int stellar_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		      const struct ib_send_wr **bad_wr);
int stellar_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr);

/* stellar_srq.c */
int stellar_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		       struct ib_udata *udata);
int stellar_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		       enum ib_srq_attr_mask mask, struct ib_udata *udata);
int stellar_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int stellar_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
struct stellar_srq *stellar_xrc_srq_get(struct stellar_dev *sdev, u32 srq_num,
					u64 serial,
					const struct ib_xrcd *xrcd);
void stellar_srq_put(struct stellar_srq *srq);
int stellar_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad_wr);
int stellar_post_recv_wqe(struct stellar_queue *q, u32 max_sge,
			  const struct ib_recv_wr *wr);
int stellar_take_recv_wqe(struct stellar_queue *q, u32 *consumer,
			  u32 max_sge, struct stellar_recv_wqe *wqe);
int stellar_take_recv_wr_id(struct stellar_queue *q, u32 *consumer,
			    u64 *wr_id);
int stellar_srq_take(struct stellar_srq *srq, struct stellar_recv_wqe *wqe);

/* stellar_ah.c */
int stellar_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		      struct ib_udata *udata);
int stellar_destroy_ah(struct ib_ah *ibah, u32 flags);
int stellar_av_from_ah_attr(const struct rdma_ah_attr *attr,
			    struct stellar_av *av);

/* stellar_mcast.c */
void stellar_mcast_dev_init(struct stellar_dev *sdev);
void stellar_mcast_dev_fini(struct stellar_dev *sdev);
int stellar_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int stellar_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
void stellar_mcast_qp_destroy(struct stellar_qp *qp);

/* stellar_mr.c */
struct ib_mr *stellar_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *stellar_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				  u64 iova, int access, struct ib_udata *udata);
struct ib_mr *stellar_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				    u64 length, u64 iova, int access,
				    struct ib_pd *ibpd, struct ib_udata *udata);
struct ib_mr *stellar_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			       u32 max_num_sg);
int stellar_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg,
		      int sg_nents, unsigned int *sg_offset);
int stellar_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
int stellar_advise_mr(struct ib_pd *ibpd,
		      enum ib_uverbs_advise_mr_advice advice, u32 flags,
		      struct ib_sge *sg_list, u32 num_sge,
		      struct uverbs_attr_bundle *attrs);

/* stellar_mw.c */
int stellar_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int stellar_dealloc_mw(struct ib_mw *ibmw);

/* stellar_pvdma.c, stellar_emtt.c, stellar_mem_stats.c */
struct seq_file;
int stellar_mem_dev_init(struct stellar_dev *sdev);
void stellar_mem_dev_fini(struct stellar_dev *sdev);
int stellar_emtt_resize(struct stellar_dev *sdev);
int stellar_pvdma_stats_show(struct seq_file *m, void *v);
int stellar_emtt_stats_show(struct seq_file *m, void *v);
int stellar_put_mem_stats(struct sk_buff *skb, struct stellar_dev *sdev);
const char *stellar_pin_mode_name(u32 pin_mode);

/* stellar_net.c */
int stellar_net_init(void);
void stellar_net_exit(void);
struct stellar_udp *stellar_udp_get(struct net *net);
void stellar_udp_put(struct stellar_udp *udp);

/* stellar_doorbell.c */
int stellar_db_start(struct stellar_dev *sdev, const char *name);
void stellar_db_stop(struct stellar_dev *sdev);
void stellar_db_wake(struct stellar_dev *sdev);

/* stellar_proc.c */
int stellar_proc_init(void);
void stellar_proc_exit(void);
void stellar_proc_add_dev(struct stellar_dev *sdev);
void stellar_proc_del_dev(struct stellar_dev *sdev);
bool stellar_proc_may_see_dev(const struct file *file,
			      struct stellar_dev *sdev);
bool stellar_proc_may_see_qps(const struct file *file,
			      struct stellar_dev *sdev);
const char *stellar_stat_name(enum stellar_genl_stat stat);
const char *stellar_qp_state_name(enum ib_qp_state state);

/* stellar_hw_stats.c */
void stellar_hw_stats_init(void);
struct rdma_hw_stats *stellar_alloc_hw_port_stats(struct ib_device *ibdev,
						  u32 port);
struct rdma_hw_stats *stellar_alloc_hw_device_stats(struct ib_device *ibdev);
int stellar_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
			 u32 port, int index);

/* stellar_restrack.c */
bool stellar_may_see_qp_detail(struct stellar_dev *sdev);
int stellar_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);
int stellar_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq);
int stellar_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr);

/* stellar_netlink.c */
int stellar_genl_init(void);
void stellar_genl_exit(void);

#endif /* STELLAR_H */
