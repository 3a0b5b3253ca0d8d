/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Copyright (c) 2026 The virtio-stellar authors
 *
 * Private types of the stellar libibverbs provider.
 *
 * stellar.c owns driver registration, the device and the context;
 * verbs.c owns the verbs operations.  The queue pair, completion queue
 * and shared receive queue wrappers are where the user-space data path
 * (mmap'ed rings, doorbells) will keep its state; today they only embed
 * the libibverbs objects because work requests are not yet processed in
 * user space.
 */
#ifndef STELLAR_PROVIDER_H
#define STELLAR_PROVIDER_H

#include <stddef.h>
#include <stdint.h>

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

struct stellar_pd {
	struct ibv_pd ibv_pd;
	uint32_t pdn;
};

struct stellar_mr {
	struct verbs_mr vmr;
};

struct stellar_cq {
	struct verbs_cq vcq;
};

struct stellar_qp {
	struct verbs_qp vqp;
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

static inline struct stellar_qp *to_stellar_qp(struct ibv_qp *qp)
{
	return stellar_container_of(qp, struct stellar_qp, vqp.qp);
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

struct ibv_mr *stellar_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			      uint64_t hca_va, int access);
int stellar_dereg_mr(struct verbs_mr *vmr);

struct ibv_cq *stellar_create_cq(struct ibv_context *context, int cqe,
				 struct ibv_comp_channel *channel,
				 int comp_vector);
int stellar_destroy_cq(struct ibv_cq *cq);
int stellar_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
int stellar_req_notify_cq(struct ibv_cq *cq, int solicited_only);

struct ibv_qp *stellar_create_qp(struct ibv_pd *pd,
				 struct ibv_qp_init_attr *attr);
int stellar_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask);
int stellar_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		     int attr_mask, struct ibv_qp_init_attr *init_attr);
int stellar_destroy_qp(struct ibv_qp *qp);
int stellar_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr);
int stellar_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr);

#endif /* STELLAR_PROVIDER_H */
