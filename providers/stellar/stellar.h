/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (c) 2026 The virtio-stellar authors
 *
 * Private types of the stellar libibverbs provider.
 *
 * stellar.c owns driver registration, the device and the context;
 * verbs.c owns the control-path verbs (uverbs commands, ring mapping);
 * datapath.c owns work requests and completions, which are exchanged with
 * the kernel through rings mapped into the process (stellar-abi.h).
 * datapath.c calls nothing in libibverbs: the only kernel entry on the
 * data path is the send doorbell, reached through stellar_qp.ring_doorbell.
 */
#ifndef STELLAR_PROVIDER_H
#define STELLAR_PROVIDER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "verbs_private.h"
#include "stellar-abi.h"

#define STELLAR_PROVIDER_NAME	"stellar"

#define stellar_container_of(ptr, type, member)				\
	((type *)((char *)(ptr) - offsetof(type, member)))

struct stellar_device {
	struct verbs_device vdev;
};

struct stellar_context {
	struct verbs_context vctx;
	uint32_t caps;			/* enum stellar_ucontext_caps */
	uint32_t max_inline_data;
};

/* A thread domain: what is created in it is used by one thread at a time. */
struct stellar_td {
	struct ibv_td ibv_td;
	unsigned int refs;		/* parent domains on it (atomic) */
};

/*
 * A protection domain, or a parent domain (ibv_alloc_parent_domain()): a
 * protection domain with a thread domain and the application's memory
 * allocators.  A parent domain carries its protection domain's handle, so
 * every command that names a PD works with either.
 */
struct stellar_pd {
	struct ibv_pd ibv_pd;
	uint32_t pdn;
	struct stellar_pd *protection;	/* parent domain: its PD; else NULL */
	struct stellar_td *td;		/* parent domain: its TD or NULL */
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size,
		       size_t alignment, uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr,
		     uint64_t resource_type);
	void *pd_context;
	unsigned int refs;		/* parent domains on a PD, objects in a
					 * parent domain (atomic) */
};

/* What a QP, CQ or SRQ created in a parent domain keeps of it. */
struct stellar_pd_use {
	struct stellar_pd *parent;	/* holding a reference; NULL: none */
	bool mem;			/* the object is its allocator's memory */
};

/*
 * resource_type of the provider's allocations from a parent domain's
 * allocator: the memory of a QP, CQ or SRQ object (the rings themselves
 * are kernel memory mapped into the process).
 */
#define STELLAR_RES_TYPE_QP	0x5354454c00000001ULL
#define STELLAR_RES_TYPE_CQ	0x5354454c00000002ULL
#define STELLAR_RES_TYPE_SRQ	0x5354454c00000003ULL

/* A spinlock, unless a thread domain says one thread uses the object. */
struct stellar_lock {
	pthread_spinlock_t spin;
	bool single_thread;
};

static inline void stellar_lock(struct stellar_lock *lock)
{
	if (!lock->single_thread)
		pthread_spin_lock(&lock->spin);
}

static inline void stellar_unlock(struct stellar_lock *lock)
{
	if (!lock->single_thread)
		pthread_spin_unlock(&lock->spin);
}

struct stellar_mr {
	struct verbs_mr vmr;
};

/*
 * One ring shared with the kernel (see struct stellar_ring in
 * stellar-abi.h), as mapped into this process.  head is the counter this
 * process owns: the producer of a send or receive ring, the consumer of a
 * completion ring.  It runs ahead of the published counter while a batch
 * of entries is being written or read.
 */
struct stellar_uring {
	struct stellar_ring *hdr;	/* NULL: not mapped */
	size_t map_size;
	uint32_t num_entries;		/* power of two */
	uint32_t entry_size;		/* bytes, power of two */
	uint32_t head;
};

/* A send, receive or shared receive queue: a ring and its limits. */
struct stellar_wq {
	struct stellar_lock lock;
	struct stellar_uring ring;
	uint32_t max_sge;		/* SGEs one entry can hold */
	uint32_t max_inline;		/* inline bytes (send queues) */
};

struct stellar_cq {
	struct verbs_cq vcq;
	struct stellar_lock lock;
	struct stellar_pd_use pdu;
	struct stellar_uring ring;
	/* ibv_start_poll(): the CQE being read, NULL when none */
	const struct stellar_cqe *cur_cqe;
};

struct stellar_qp;

/*
 * Tells the kernel the send ring has new entries; 0 or an errno.  Not
 * called while the kernel polls the ring (STELLAR_RING_POLLED).
 */
typedef int (*stellar_doorbell_fn)(struct stellar_qp *qp);

struct stellar_qp {
	struct verbs_qp vqp;
	struct stellar_pd_use pdu;
	struct stellar_wq sq;
	struct stellar_wq rq;		/* unused when the QP has an SRQ */
	stellar_doorbell_fn ring_doorbell;
	bool sq_sig_all;
	/* ibv_wr_*() state, valid between wr_start and wr_complete/abort */
	struct stellar_sq_wqe *wr_cur;	/* entry being built, or NULL */
	bool wr_cur_has_addr;		/* UD: wr_set_ud_addr() called */
	uint32_t wr_start_head;		/* sq.ring.head at wr_start */
	int wr_err;			/* first error since wr_start */
};

/* vsrq.srq_num is the number XRC senders name the SRQ by. */
struct stellar_srq {
	struct verbs_srq vsrq;
	struct stellar_pd_use pdu;
	struct stellar_wq rq;
};

struct stellar_ah {
	struct ibv_ah ibv_ah;
	uint32_t ah_handle;		/* names the AH in UD send WQEs */
};

static inline struct stellar_device *to_stellar_dev(struct ibv_device *ibdev)
{
	return stellar_container_of(ibdev, struct stellar_device, vdev.device);
}

static inline struct stellar_context *to_stellar_ctx(struct ibv_context *ctx)
{
	return stellar_container_of(ctx, struct stellar_context, vctx.context);
}

static inline struct stellar_pd *to_stellar_pd(struct ibv_pd *pd)
{
	return stellar_container_of(pd, struct stellar_pd, ibv_pd);
}

static inline struct stellar_mr *to_stellar_mr(struct verbs_mr *vmr)
{
	return stellar_container_of(vmr, struct stellar_mr, vmr);
}

static inline struct stellar_cq *to_stellar_cq(struct ibv_cq *cq)
{
	return stellar_container_of(cq, struct stellar_cq, vcq.cq);
}

static inline struct stellar_cq *to_stellar_cq_ex(struct ibv_cq_ex *cq)
{
	return stellar_container_of(cq, struct stellar_cq, vcq.cq_ex);
}

static inline struct stellar_qp *to_stellar_qp(struct ibv_qp *qp)
{
	return stellar_container_of(qp, struct stellar_qp, vqp.qp);
}

static inline struct stellar_qp *to_stellar_qp_ex(struct ibv_qp_ex *qp)
{
	return stellar_container_of(qp, struct stellar_qp, vqp.qp_ex);
}

static inline struct stellar_srq *to_stellar_srq(struct ibv_srq *srq)
{
	return stellar_container_of(srq, struct stellar_srq, vsrq.srq);
}

static inline struct stellar_ah *to_stellar_ah(struct ibv_ah *ah)
{
	return stellar_container_of(ah, struct stellar_ah, ibv_ah);
}

/* Logging through libibverbs; shown when VERBS_LOG_LEVEL allows it. */
#define stellar_log(vctx, level, fmt, ...)				\
	__verbs_log(vctx, level, "stellar: %s: " fmt "\n", __func__,	\
		    ##__VA_ARGS__)
#define stellar_err(vctx, fmt, ...)					\
	stellar_log(vctx, VERBS_LOG_ERR, fmt, ##__VA_ARGS__)

/* Driver response to IB_USER_VERBS_CMD_GET_CONTEXT. */
struct stellar_get_context_resp {
	struct ib_uverbs_get_context_resp ibv_resp;
	struct stellar_alloc_ucontext_resp drv;
};

/* Driver response to IB_USER_VERBS_CMD_ALLOC_PD. */
struct stellar_alloc_pd_cmd_resp {
	struct ib_uverbs_alloc_pd_resp ibv_resp;
	struct stellar_alloc_pd_resp drv;
};

struct stellar_create_cq_cmd_resp {
	struct ib_uverbs_create_cq_resp ibv_resp;
	struct stellar_create_cq_resp drv;
};

struct stellar_create_cq_ex_cmd_resp {
	struct ib_uverbs_ex_create_cq_resp ibv_resp;
	struct stellar_create_cq_resp drv;
};

struct stellar_resize_cq_cmd_resp {
	struct ib_uverbs_resize_cq_resp ibv_resp;
	struct stellar_resize_cq_resp drv;
};

struct stellar_create_qp_cmd_resp {
	struct ib_uverbs_create_qp_resp ibv_resp;
	struct stellar_create_qp_resp drv;
};

struct stellar_create_srq_cmd_resp {
	struct ib_uverbs_create_srq_resp ibv_resp;
	struct stellar_create_srq_resp drv;
};

/* IB_USER_VERBS_CMD_MODIFY_SRQ with the driver's request. */
struct stellar_modify_srq_cmd_drv {
	struct ibv_modify_srq ibv_cmd;
	struct stellar_modify_srq_cmd drv;
};

struct stellar_create_ah_cmd_resp {
	struct ib_uverbs_create_ah_resp ibv_resp;
	struct stellar_create_ah_resp drv;
};

/* Each driver payload directly follows its core response, unpadded. */
#define STELLAR_ASSERT_RESP_LAYOUT(wrapper, core)			\
	_Static_assert(offsetof(struct wrapper, drv) == sizeof(struct core) && \
		       sizeof(struct wrapper) == sizeof(struct core) +	\
		       sizeof(((struct wrapper *)0)->drv),		\
		       "padding around the driver data of " #wrapper)
STELLAR_ASSERT_RESP_LAYOUT(stellar_create_cq_cmd_resp,
			   ib_uverbs_create_cq_resp);
STELLAR_ASSERT_RESP_LAYOUT(stellar_create_cq_ex_cmd_resp,
			   ib_uverbs_ex_create_cq_resp);
STELLAR_ASSERT_RESP_LAYOUT(stellar_resize_cq_cmd_resp,
			   ib_uverbs_resize_cq_resp);
STELLAR_ASSERT_RESP_LAYOUT(stellar_create_qp_cmd_resp,
			   ib_uverbs_create_qp_resp);
STELLAR_ASSERT_RESP_LAYOUT(stellar_create_srq_cmd_resp,
			   ib_uverbs_create_srq_resp);
STELLAR_ASSERT_RESP_LAYOUT(stellar_create_ah_cmd_resp,
			   ib_uverbs_create_ah_resp);

_Static_assert(offsetof(struct stellar_modify_srq_cmd_drv, drv) ==
	       sizeof(struct ibv_modify_srq) &&
	       sizeof(struct stellar_modify_srq_cmd_drv) ==
	       sizeof(struct ibv_modify_srq) +
	       sizeof(struct stellar_modify_srq_cmd),
	       "padding around the driver data of modify_srq");

/* Fixed sizes of the ring formats (stellar-abi.h). */
_Static_assert(sizeof(struct stellar_ring) == STELLAR_RING_HDR_SIZE,
	       "ring header size");
_Static_assert(sizeof(struct stellar_sq_wqe) == 56, "send WQE size");
_Static_assert(sizeof(struct stellar_rq_wqe) == 16, "receive WQE size");
_Static_assert(sizeof(struct stellar_sge) == 16, "SGE size");
_Static_assert(sizeof(struct stellar_cqe) == 48, "CQE size");

/* The driver payload must start right after the core response. */
_Static_assert(offsetof(struct stellar_get_context_resp, drv) ==
	       sizeof(struct ib_uverbs_get_context_resp),
	       "padding between core and stellar ucontext response");
_Static_assert(sizeof(struct stellar_get_context_resp) ==
	       sizeof(struct ib_uverbs_get_context_resp) +
	       sizeof(struct stellar_alloc_ucontext_resp),
	       "trailing padding in stellar ucontext response");
_Static_assert(offsetof(struct stellar_alloc_pd_cmd_resp, drv) ==
	       sizeof(struct ib_uverbs_alloc_pd_resp),
	       "padding between core and stellar alloc_pd response");
_Static_assert(sizeof(struct stellar_alloc_pd_cmd_resp) ==
	       sizeof(struct ib_uverbs_alloc_pd_resp) +
	       sizeof(struct stellar_alloc_pd_resp),
	       "trailing padding in stellar alloc_pd response");

/* verbs.c */
int stellar_query_device_ex(struct ibv_context *context,
			    const struct ibv_query_device_ex_input *input,
			    struct ibv_device_attr_ex *attr, size_t attr_size);
int stellar_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr);

struct ibv_pd *stellar_alloc_pd(struct ibv_context *context);
int stellar_dealloc_pd(struct ibv_pd *pd);
struct ibv_td *stellar_alloc_td(struct ibv_context *context,
				struct ibv_td_init_attr *attr);
int stellar_dealloc_td(struct ibv_td *td);
struct ibv_pd *stellar_alloc_parent_domain(struct ibv_context *context,
					   struct ibv_parent_domain_init_attr *attr);
int stellar_query_ucontext(struct ibv_context *context,
			   struct stellar_alloc_ucontext_resp *resp);
struct ibv_pd *stellar_import_pd(struct ibv_context *context,
				 uint32_t pd_handle);
void stellar_unimport_pd(struct ibv_pd *pd);
struct ibv_mr *stellar_import_mr(struct ibv_pd *pd, uint32_t mr_handle);
void stellar_unimport_mr(struct ibv_mr *mr);

struct ibv_mr *stellar_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			      uint64_t hca_va, int access);
int stellar_dereg_mr(struct verbs_mr *vmr);
struct ibv_mw *stellar_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int stellar_dealloc_mw(struct ibv_mw *mw);
int stellar_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		    struct ibv_mw_bind *mw_bind);
int stellar_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		     void *addr, size_t length, int access);
int stellar_query_rt_values(struct ibv_context *context,
			    struct ibv_values_ex *values);
uint64_t stellar_clock_ns(clockid_t clock);
int stellar_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		      uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sge);

struct ibv_cq *stellar_create_cq(struct ibv_context *context, int cqe,
				 struct ibv_comp_channel *channel,
				 int comp_vector);
struct ibv_cq_ex *stellar_create_cq_ex(struct ibv_context *context,
				       struct ibv_cq_init_attr_ex *attr);
int stellar_destroy_cq(struct ibv_cq *cq);
int stellar_resize_cq(struct ibv_cq *cq, int cqe);
int stellar_req_notify_cq(struct ibv_cq *cq, int solicited_only);

struct ibv_qp *stellar_create_qp(struct ibv_pd *pd,
				 struct ibv_qp_init_attr *attr);
struct ibv_qp *stellar_create_qp_ex(struct ibv_context *context,
				    struct ibv_qp_init_attr_ex *attr);
int stellar_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask);
int stellar_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		     int attr_mask, struct ibv_qp_init_attr *init_attr);
int stellar_destroy_qp(struct ibv_qp *qp);

struct ibv_qp *stellar_open_qp(struct ibv_context *context,
			       struct ibv_qp_open_attr *attr);

struct ibv_srq *stellar_create_srq(struct ibv_pd *pd,
				   struct ibv_srq_init_attr *attr);
struct ibv_srq *stellar_create_srq_ex(struct ibv_context *context,
				      struct ibv_srq_init_attr_ex *attr);
int stellar_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num);
struct ibv_xrcd *stellar_open_xrcd(struct ibv_context *context,
				   struct ibv_xrcd_init_attr *attr);
int stellar_close_xrcd(struct ibv_xrcd *xrcd);
int stellar_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
		       int attr_mask);
int stellar_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr);
int stellar_destroy_srq(struct ibv_srq *srq);

struct ibv_ah *stellar_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int stellar_destroy_ah(struct ibv_ah *ah);

/* datapath.c: no system calls except through qp->ring_doorbell */
void stellar_uring_attach(struct stellar_uring *ring, void *base,
			  size_t map_size, uint32_t num_entries,
			  uint32_t entry_size, bool is_producer);
int stellar_wq_init(struct stellar_wq *wq, bool single_thread);
void stellar_wq_destroy(struct stellar_wq *wq);
int stellar_cq_init(struct stellar_cq *cq, bool single_thread);
void stellar_cq_destroy(struct stellar_cq *cq);

/* ibv_wc_flags of ibv_create_cq_ex() that the ring's CQEs can answer. */
#define STELLAR_CQ_EX_WC_FLAGS						\
	(IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |			\
	 IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |		\
	 IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |			\
	 IBV_WC_EX_WITH_DLID_PATH_BITS |				\
	 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |				\
	 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
void stellar_cq_ex_set_ops(struct stellar_cq *cq);

/* ibv_qp_init_attr_ex.send_ops_flags a QP of this type accepts. */
uint64_t stellar_qp_send_ops(enum ibv_qp_type qp_type);
void stellar_qp_ex_set_ops(struct stellar_qp *qp);

int stellar_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
int stellar_post_bind(struct ibv_qp *qp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr);
int stellar_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr);
int stellar_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr);
int stellar_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			  struct ibv_recv_wr **bad_wr);

#endif /* STELLAR_PROVIDER_H */
