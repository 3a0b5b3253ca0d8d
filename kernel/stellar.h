/* SPDX-License-Identifier: GPL-2.0 */
/*
 * virtio-stellar: software RoCEv2 device - driver-wide definitions.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_H
#define STELLAR_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/percpu.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_verbs.h>

#include "stellar-abi.h"
#include "stellar-netlink.h"

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
#define STELLAR_MAX_MR			0x40000
#define STELLAR_MAX_PD			0x10000
#define STELLAR_MAX_AH			0x10000
#define STELLAR_MAX_SRQ			0x4000
#define STELLAR_MAX_SRQ_WR		0x4000
#define STELLAR_MAX_INLINE_DATA		256
#define STELLAR_MAX_RD_ATOM		128
#define STELLAR_MAX_MR_SIZE		(1ULL << 46)
#define STELLAR_MAX_MSG_SIZE		0x80000000U
#define STELLAR_GID_TBL_LEN		1024
#define STELLAR_PKEY_TBL_LEN		1
#define STELLAR_DEFAULT_PKEY		0xffff
#define STELLAR_LOCAL_ACK_DELAY		15

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

/**
 * struct stellar_settings - per-device tunables
 * @rx_buf_size: bytes of out-of-order receive state a QP may hold
 * @spray_paths: UDP source-port paths a QP spreads its packets over
 * @emtt_cache_size: translation cache entries, in thousands (0: off)
 * @db_poll_interval: doorbell poller period in microseconds (0: off)
 *
 * New devices copy the module parameters; stellar-tool may change a
 * device's copy afterwards.
 */
struct stellar_settings {
	u32 rx_buf_size;
	u32 spray_paths;
	u32 emtt_cache_size;
	u32 db_poll_interval;
};

/* Per-CPU device counters, indexed by enum stellar_genl_stat. */
struct stellar_counters {
	u64 val[__STELLAR_STAT_MAX];
};

struct stellar_udp;

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
 * @next_qpn: cursor for cyclic QPN allocation
 * @pd_serial: source of PD numbers (informational only)
 * @last_port_state: port state last reported with an event
 * @proc_dir: /proc/stellar/<name>, named at registration
 * @proc_name: the name @proc_dir was created with
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
	u32 next_qpn;
	atomic_t pd_serial;
	int last_port_state;
	struct proc_dir_entry *proc_dir;
	char proc_name[IB_DEVICE_NAME_MAX];
};

struct stellar_ucontext {
	struct ib_ucontext ibuc;
};

struct stellar_pd {
	struct ib_pd ibpd;
	u32 pdn;
};

/**
 * struct stellar_cq - completion queue
 * @ibcq: core object
 * @lock: protects the ring and @notify
 * @wc: ring of @size completions
 * @size: ring capacity (power of two is not required)
 * @head: next entry to poll
 * @count: entries in the ring
 * @notify: armed notification (IB_CQ_SOLICITED or IB_CQ_NEXT_COMP), 0 if not
 * @overflowed: set once a completion was lost because the ring was full
 */
struct stellar_cq {
	struct ib_cq ibcq;
	spinlock_t lock;		/* ring and arming state */
	struct ib_wc *wc;
	u32 size;
	u32 head;
	u32 count;
	u32 notify;
	bool overflowed;
};

/**
 * struct stellar_rwqe - a posted receive work request
 * @wr_id: the consumer's cookie
 * @num_sge: entries used in @sge
 * @sge: scatter list
 */
struct stellar_rwqe {
	u64 wr_id;
	u32 num_sge;
	struct ib_sge sge[];
};

/**
 * struct stellar_wq - a ring of receive work requests
 * @lock: protects the ring
 * @buf: @size slots of @stride bytes
 * @size: slots
 * @stride: bytes per slot
 * @head: oldest posted request
 * @count: posted requests
 * @max_sge: scatter entries per request
 */
struct stellar_wq {
	spinlock_t lock;		/* ring indices and slots */
	void *buf;
	u32 size;
	u32 stride;
	u32 head;
	u32 count;
	u32 max_sge;
};

/**
 * struct stellar_qp - queue pair
 * @ibqp: core object
 * @state_lock: serialises modify_qp and reads of @attr
 * @attr: current attributes (state, PSNs, path)
 * @rq: receive queue (unused with an SRQ)
 * @sq_size: send queue depth granted at creation
 * @sq_sig_all: every send request completes
 */
struct stellar_qp {
	struct ib_qp ibqp;
	struct mutex state_lock;	/* @attr */
	struct ib_qp_attr attr;
	struct stellar_wq rq;
	u32 sq_size;
	bool sq_sig_all;
};

/**
 * struct stellar_mr - memory region
 * @ibmr: core object
 * @umem: pinned user memory, NULL for DMA and fast-registration MRs
 * @access: IB_ACCESS_* flags
 * @iova: first virtual address the region answers to
 * @length: bytes
 */
struct stellar_mr {
	struct ib_mr ibmr;
	struct ib_umem *umem;
	int access;
	u64 iova;
	u64 length;
};

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

static inline void stellar_count(struct stellar_dev *sdev,
				 enum stellar_genl_stat stat, u64 n)
{
	this_cpu_add(sdev->counters->val[stat], n);
}

/* stellar_main.c: module parameters, the defaults for new devices */
void stellar_default_settings(struct stellar_settings *settings);

/* stellar_device.c */
extern struct list_head stellar_dev_list;
int stellar_device_init(void);
void stellar_device_exit(void);
int stellar_newlink(const char *ibdev_name, struct net_device *ndev);
void stellar_remove_all(void);
void stellar_dealloc_driver(struct ib_device *ibdev);
struct stellar_dev *stellar_dev_find_by_ndev_rcu(struct net_device *ndev);
struct stellar_dev *stellar_dev_get_by_name(const char *name);
u64 stellar_read_counter(struct stellar_dev *sdev, enum stellar_genl_stat stat);
enum ib_port_state stellar_port_state(struct stellar_dev *sdev);

/* stellar_verbs.c */
extern const struct ib_device_ops stellar_dev_ops;

/* stellar_cq.c */
int stellar_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		      struct ib_udata *udata);
int stellar_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int stellar_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int stellar_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
void stellar_cq_complete(struct stellar_cq *cq, const struct ib_wc *wc,
			 bool solicited);

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

/* stellar_mr.c */
struct ib_mr *stellar_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *stellar_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				  u64 iova, int access, struct ib_udata *udata);
int stellar_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);

/* stellar_net.c */
int stellar_net_init(void);
void stellar_net_exit(void);
struct stellar_udp *stellar_udp_get(struct net *net);
void stellar_udp_put(struct stellar_udp *udp);

/* stellar_proc.c */
int stellar_proc_init(void);
void stellar_proc_exit(void);
void stellar_proc_add_dev(struct stellar_dev *sdev);
void stellar_proc_del_dev(struct stellar_dev *sdev);
const char *stellar_stat_name(enum stellar_genl_stat stat);

/* stellar_netlink.c */
int stellar_genl_init(void);
void stellar_genl_exit(void);

#endif /* STELLAR_H */
