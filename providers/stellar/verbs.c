// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) 2026 The virtio-stellar authors
 *
 * stellar libibverbs provider: verbs operations.
 *
 * Control-path verbs are plain uverbs commands handled by the kernel
 * module.  Creating a CQ, QP or SRQ also maps its rings (the kernel names
 * them in the create response); destroying it unmaps them once the kernel
 * has let go of the object.  The data path is in datapath.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ioctl.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/rdma_user_ioctl.h>

#include "stellar.h"

/* Firmware version encoding: see STELLAR_FW_VER() in stellar-abi.h. */
static void stellar_format_fw_ver(char *buf, size_t len, uint64_t raw)
{
	snprintf(buf, len, "%u.%u.%u", STELLAR_FW_MAJOR(raw),
		 STELLAR_FW_MINOR(raw), STELLAR_FW_SUB(raw));
}

int stellar_query_device_ex(struct ibv_context *context,
			    const struct ibv_query_device_ex_input *input,
			    struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	int ret;

	ret = ibv_cmd_query_device_any(context, input, attr, attr_size,
				       &resp, &resp_size);
	if (ret)
		return ret;

	stellar_format_fw_ver(attr->orig_attr.fw_ver,
			      sizeof(attr->orig_attr.fw_ver),
			      resp.base.fw_ver);
	return 0;
}

int stellar_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr)
{
	struct ibv_query_port cmd = {};

	return ibv_cmd_query_port(context, port_num, port_attr,
				  &cmd, sizeof(cmd));
}

struct ibv_pd *stellar_alloc_pd(struct ibv_context *context)
{
	struct stellar_alloc_pd_cmd_resp resp = {};
	struct ibv_alloc_pd cmd = {};
	struct stellar_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;

	ret = ibv_cmd_alloc_pd(context, &pd->ibv_pd, &cmd, sizeof(cmd),
			       &resp.ibv_resp, sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}

	pd->pdn = resp.drv.pdn;
	return &pd->ibv_pd;
}

/*
 * A PD with parent domains on it, or a parent domain with objects in it,
 * stays: EBUSY.
 */
int stellar_dealloc_pd(struct ibv_pd *ibpd)
{
	struct stellar_pd *pd = to_stellar_pd(ibpd);
	int ret;

	if (__atomic_load_n(&pd->refs, __ATOMIC_ACQUIRE))
		return EBUSY;
	if (pd->protection) {
		__atomic_fetch_sub(&pd->protection->refs, 1, __ATOMIC_RELEASE);
		if (pd->td)
			__atomic_fetch_sub(&pd->td->refs, 1, __ATOMIC_RELEASE);
		free(pd);
		return 0;
	}
	ret = ibv_cmd_dealloc_pd(ibpd);
	if (ret)
		return ret;

	free(pd);
	return 0;
}

/* A PD structure for kernel PD @handle (errno ENOMEM: none). */
static struct stellar_pd *stellar_pd_new(struct ibv_context *context,
					 uint32_t handle)
{
	struct stellar_pd *pd = calloc(1, sizeof(*pd));

	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pd->ibv_pd.context = context;
	pd->ibv_pd.handle = handle;
	return pd;
}

/*
 * One ioctl of the driver's own (include/uapi/stellar-abi.h) with @n
 * attributes; 0 or an errno.
 */
static int stellar_ioctl(struct ibv_context *context, uint16_t object_id,
			 uint16_t method_id, const struct ib_uverbs_attr *attrs,
			 unsigned int n)
{
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attrs[2];
	} buf = {
		.hdr = {
			.length = sizeof(buf.hdr) + n * sizeof(attrs[0]),
			.object_id = object_id,
			.method_id = method_id,
			.num_attrs = n,
			.driver_id = RDMA_DRIVER_UNKNOWN,
		},
	};

	if (n > 2)
		return EINVAL;
	memcpy(buf.attrs, attrs, n * sizeof(attrs[0]));
	return ioctl(context->cmd_fd, RDMA_VERBS_IOCTL, &buf) ? errno : 0;
}

/* What the kernel answered the creation of @context's ucontext. */
int stellar_query_ucontext(struct ibv_context *context,
			   struct stellar_alloc_ucontext_resp *resp)
{
	struct ib_uverbs_attr attr = {
		.attr_id = STELLAR_ATTR_QUERY_CONTEXT_RESP_UCTX,
		.len = sizeof(*resp),
		.data = (uintptr_t)resp,
	};

	return stellar_ioctl(context, UVERBS_OBJECT_DEVICE,
			     UVERBS_METHOD_QUERY_CONTEXT, &attr, 1);
}

/*
 * ibv_import_pd(): the kernel checks the handle names a PD of this
 * context (STELLAR_METHOD_PD_QUERY) and says its number.
 */
struct ibv_pd *stellar_import_pd(struct ibv_context *context,
				 uint32_t pd_handle)
{
	uint32_t pdn = 0;
	struct ib_uverbs_attr attrs[2] = {
		{ .attr_id = STELLAR_ATTR_QUERY_PD_HANDLE, .data = pd_handle },
		{
			.attr_id = STELLAR_ATTR_QUERY_PD_RESP_PDN,
			.len = sizeof(pdn),
			.data = (uintptr_t)&pdn,
		},
	};
	struct stellar_pd *pd;
	int ret;

	ret = stellar_ioctl(context, UVERBS_OBJECT_PD, STELLAR_METHOD_PD_QUERY,
			    attrs, 2);
	if (ret) {
		errno = ret;
		return NULL;
	}
	pd = stellar_pd_new(context, pd_handle);
	if (!pd)
		return NULL;
	pd->pdn = pdn;
	return &pd->ibv_pd;
}

/* ibv_unimport_pd(): the kernel's PD stays. */
void stellar_unimport_pd(struct ibv_pd *pd)
{
	free(to_stellar_pd(pd));
}

struct ibv_mr *stellar_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	struct stellar_mr *mr;
	int ret;

	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_query_mr(pd, &mr->vmr, mr_handle);
	if (ret) {
		free(mr);
		errno = ret;
		return NULL;
	}
	return &mr->vmr.ibv_mr;
}

/* ibv_unimport_mr(): the kernel's MR stays. */
void stellar_unimport_mr(struct ibv_mr *ibmr)
{
	free(to_stellar_mr(stellar_container_of(ibmr, struct verbs_mr,
						ibv_mr)));
}

struct ibv_td *stellar_alloc_td(struct ibv_context *context,
				struct ibv_td_init_attr *attr)
{
	struct stellar_td *td;

	if (attr->comp_mask) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	td = calloc(1, sizeof(*td));
	if (!td) {
		errno = ENOMEM;
		return NULL;
	}
	td->ibv_td.context = context;
	return &td->ibv_td;
}

int stellar_dealloc_td(struct ibv_td *ibtd)
{
	struct stellar_td *td = stellar_container_of(ibtd, struct stellar_td,
						     ibv_td);

	if (__atomic_load_n(&td->refs, __ATOMIC_ACQUIRE))
		return EBUSY;
	free(td);
	return 0;
}

static int stellar_check_parent_attr(struct ibv_context *context,
				     const struct ibv_parent_domain_init_attr *attr)
{
	if (attr->comp_mask & ~(IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
				IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT))
		return EOPNOTSUPP;
	/* A parent domain wraps a PD of this context, not another one. */
	if (!attr->pd || attr->pd->context != context ||
	    to_stellar_pd(attr->pd)->protection)
		return EINVAL;
	if (attr->td && attr->td->context != context)
		return EINVAL;
	if ((attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) &&
	    (!attr->alloc || !attr->free))
		return EINVAL;
	return 0;
}

/*
 * ibv_alloc_parent_domain(): a PD, a thread domain (QPs and CQs created
 * in it take no locks) and the application's allocators (for the memory
 * the provider allocates per QP, CQ and SRQ; the rings are the kernel's).
 */
struct ibv_pd *stellar_alloc_parent_domain(struct ibv_context *context,
					   struct ibv_parent_domain_init_attr *attr)
{
	struct stellar_pd *pd;
	int ret;

	ret = stellar_check_parent_attr(context, attr);
	if (ret) {
		errno = ret;
		return NULL;
	}
	pd = stellar_pd_new(context, attr->pd->handle);
	if (!pd)
		return NULL;
	pd->protection = to_stellar_pd(attr->pd);
	pd->pdn = pd->protection->pdn;
	if (attr->td) {
		pd->td = stellar_container_of(attr->td, struct stellar_td,
					      ibv_td);
		__atomic_fetch_add(&pd->td->refs, 1, __ATOMIC_ACQ_REL);
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		pd->alloc = attr->alloc;
		pd->free = attr->free;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		pd->pd_context = attr->pd_context;
	__atomic_fetch_add(&pd->protection->refs, 1, __ATOMIC_ACQ_REL);
	return &pd->ibv_pd;
}

/*
 * Memory for a QP, CQ or SRQ object created in @ibpd: a parent domain's
 * allocator when it has one (IBV_ALLOCATOR_USE_DEFAULT: calloc), else
 * calloc.  The object keeps the parent domain referenced in @pdu.
 */
static void *stellar_obj_alloc(struct ibv_pd *ibpd, size_t size,
			       uint64_t type, struct stellar_pd_use *pdu)
{
	struct stellar_pd *pd = ibpd ? to_stellar_pd(ibpd) : NULL;
	struct stellar_pd_use use = {};
	void *obj = NULL;

	if (pd && pd->protection) {
		use.parent = pd;
		if (pd->alloc) {
			obj = pd->alloc(ibpd, pd->pd_context, size, 64, type);
			use.mem = obj != IBV_ALLOCATOR_USE_DEFAULT;
			if (!use.mem)
				obj = NULL;
			else if (obj)
				memset(obj, 0, size);
			else
				return NULL;
		}
	}
	if (!obj)
		obj = calloc(1, size);
	if (!obj)
		return NULL;
	if (use.parent)
		__atomic_fetch_add(&use.parent->refs, 1, __ATOMIC_ACQ_REL);
	*pdu = use;
	return obj;
}

static void stellar_obj_free(void *obj, struct stellar_pd_use pdu,
			     uint64_t type)
{
	if (pdu.mem)
		pdu.parent->free(&pdu.parent->ibv_pd, pdu.parent->pd_context,
				 obj, type);
	else
		free(obj);
	if (pdu.parent)
		__atomic_fetch_sub(&pdu.parent->refs, 1, __ATOMIC_RELEASE);
}

/* Objects of a parent domain with a thread domain take no locks. */
static bool stellar_single_thread(const struct stellar_pd_use *pdu)
{
	return pdu->parent && pdu->parent->td;
}

struct ibv_mr *stellar_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			      uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp = {};
	struct ibv_reg_mr cmd = {};
	struct stellar_mr *mr;
	int ret;

	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return NULL;

	ret = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, &mr->vmr,
			     &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(mr);
		errno = ret;
		return NULL;
	}

	return &mr->vmr.ibv_mr;
}

/*
 * ibv_rereg_mr(): the kernel registers the merged attributes anew and puts
 * the new registration in the old handle; the keys change.
 */
int stellar_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		     void *addr, size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp = {};
	struct ibv_rereg_mr cmd = {};
	int ret;

	ret = ibv_cmd_rereg_mr(vmr, flags, addr, length, (uintptr_t)addr,
			       access, pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret)
		errno = ret;
	return ret;
}

/*
 * ibv_query_rt_values_ex(): the device's clock is CLOCK_MONOTONIC in ns,
 * read here without a system call.  Like other providers, the raw count
 * goes in raw_clock.tv_nsec.
 */
int stellar_query_rt_values(struct ibv_context *context,
			    struct ibv_values_ex *values)
{
	uint32_t asked = values->comp_mask;

	(void)context;
	values->comp_mask = 0;
	if (asked & IBV_VALUES_MASK_RAW_CLOCK) {
		values->raw_clock.tv_sec = 0;
		values->raw_clock.tv_nsec = stellar_clock_ns(CLOCK_MONOTONIC);
		values->comp_mask |= IBV_VALUES_MASK_RAW_CLOCK;
	}
	return 0;
}

/* ibv_advise_mr(): the kernel pins the ranges (PVDMA prefetch). */
int stellar_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		      uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sge)
{
	return ibv_cmd_advise_mr(pd, advice, flags, sg_list, num_sge);
}

int stellar_dereg_mr(struct verbs_mr *vmr)
{
	int ret;

	ret = ibv_cmd_dereg_mr(vmr);
	if (ret)
		return ret;

	free(to_stellar_mr(vmr));
	return 0;
}

/* ------------------------------------------------------------------ */
/* Memory windows                                                      */
/* ------------------------------------------------------------------ */

struct ibv_mw *stellar_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp = {};
	struct ibv_alloc_mw cmd = {};
	struct ibv_mw *mw;
	int ret;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EINVAL;
		return NULL;
	}
	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;
	ret = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(mw);
		errno = ret;
		return NULL;
	}
	return mw;
}

int stellar_dealloc_mw(struct ibv_mw *mw)
{
	int ret = ibv_cmd_dealloc_mw(mw);

	if (ret)
		return ret;
	free(mw);
	return 0;
}

/*
 * ibv_bind_mw() of a type 1 window: a bind WQE on the QP, in order with
 * its other work.  The window's rkey changes now, as the bind will make
 * it; a caller whose bind completes in error has to undo that.
 */
int stellar_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		    struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr = {
		.wr_id = mw_bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = mw_bind->send_flags,
		.bind_mw = {
			.mw = mw,
			.rkey = ibv_inc_rkey(mw->rkey),
			.bind_info = mw_bind->bind_info,
		},
	};
	struct ibv_send_wr *bad;
	int ret;

	if (mw->type != IBV_MW_TYPE_1)
		return EINVAL;
	ret = stellar_post_bind(qp, &wr, &bad);
	if (ret)
		return ret;
	mw->rkey = wr.bind_mw.rkey;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Rings                                                               */
/* ------------------------------------------------------------------ */

static bool stellar_is_pow2(uint32_t n)
{
	return n && !(n & (n - 1));
}

/* Checks a ring the kernel described before we touch its memory. */
static int stellar_check_ring_info(struct stellar_context *ctx,
				   const struct stellar_ring_info *info,
				   uint32_t min_entry_size)
{
	uint64_t needed = STELLAR_RING_HDR_SIZE +
			  (uint64_t)info->num_entries * info->entry_size;

	if (!stellar_is_pow2(info->num_entries) ||
	    !stellar_is_pow2(info->entry_size) ||
	    info->entry_size < min_entry_size || info->mmap_size < needed) {
		stellar_err(&ctx->vctx,
			    "bad ring from kernel: %u entries of %u bytes (need %u) in %u bytes",
			    info->num_entries, info->entry_size,
			    min_entry_size, info->mmap_size);
		return EPROTO;
	}
	return 0;
}

static int stellar_map_ring(struct stellar_context *ctx,
			    struct stellar_uring *ring,
			    const struct stellar_ring_info *info,
			    uint32_t min_entry_size, bool is_producer)
{
	void *base;
	int ret;

	ret = stellar_check_ring_info(ctx, info, min_entry_size);
	if (ret)
		return ret;

	base = mmap(NULL, info->mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		    ctx->vctx.context.cmd_fd, info->mmap_offset);
	if (base == MAP_FAILED) {
		ret = errno;
		stellar_err(&ctx->vctx, "mmap of %u bytes at offset %#llx: %s",
			    info->mmap_size,
			    (unsigned long long)info->mmap_offset,
			    strerror(ret));
		return ret;
	}
	stellar_uring_attach(ring, base, info->mmap_size, info->num_entries,
			     info->entry_size, is_producer);
	return 0;
}

static void stellar_unmap_ring(struct stellar_uring *ring)
{
	if (ring->hdr)
		munmap(ring->hdr, ring->map_size);
	ring->hdr = NULL;
}

/* SGEs (or inline bytes) that fit in one entry after its fixed part. */
static uint32_t stellar_entry_room(const struct stellar_uring *ring,
				   size_t fixed_size)
{
	return ring->entry_size - fixed_size;
}

static uint32_t stellar_min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* ------------------------------------------------------------------ */
/* Completion queues                                                   */
/* ------------------------------------------------------------------ */

static struct stellar_cq *
stellar_create_cq_common(struct ibv_context *context,
			 struct ibv_cq_init_attr_ex *attr, bool extended)
{
	struct stellar_context *ctx = to_stellar_ctx(context);
	struct stellar_create_cq_ex_cmd_resp resp_ex = {};
	struct stellar_create_cq_cmd_resp resp = {};
	struct ibv_create_cq_ex cmd_ex = {};
	struct ibv_create_cq cmd = {};
	struct ibv_cq_init_attr_ex cmd_attr = *attr;
	struct stellar_create_cq_resp *drv;
	struct stellar_pd_use pdu;
	struct stellar_cq *cq;
	int ret;

	cq = stellar_obj_alloc(attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD ?
			       attr->parent_domain : NULL,
			       sizeof(*cq), STELLAR_RES_TYPE_CQ, &pdu);
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	cq->pdu = pdu;
	ret = stellar_cq_init(cq, stellar_single_thread(&pdu));
	if (ret)
		goto err_free;

	/* The extended command carries the completion timestamp flag. */
	cmd_attr.comp_mask &= ~IBV_CQ_INIT_ATTR_MASK_PD;
	if (extended) {
		ret = ibv_cmd_create_cq_ex(context, &cmd_attr, &cq->vcq, &cmd_ex,
					   sizeof(cmd_ex), &resp_ex.ibv_resp,
					   sizeof(resp_ex), 0);
		drv = &resp_ex.drv;
	} else {
		ret = ibv_cmd_create_cq(context, attr->cqe, attr->channel,
					attr->comp_vector, &cq->vcq.cq, &cmd,
					sizeof(cmd), &resp.ibv_resp,
					sizeof(resp));
		drv = &resp.drv;
	}
	if (ret)
		goto err_lock;

	ret = stellar_map_ring(ctx, &cq->ring, &drv->cq,
			       sizeof(struct stellar_cqe), false);
	if (ret)
		goto err_destroy;
	return cq;

err_destroy:
	ibv_cmd_destroy_cq(&cq->vcq.cq);
err_lock:
	stellar_cq_destroy(cq);
err_free:
	stellar_obj_free(cq, pdu, STELLAR_RES_TYPE_CQ);
	errno = ret;
	return NULL;
}

struct ibv_cq *stellar_create_cq(struct ibv_context *context, int cqe,
				 struct ibv_comp_channel *channel,
				 int comp_vector)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = cqe, .channel = channel, .comp_vector = comp_vector,
	};
	struct stellar_cq *cq;

	cq = stellar_create_cq_common(context, &attr, false);
	return cq ? &cq->vcq.cq : NULL;
}

struct ibv_cq_ex *stellar_create_cq_ex(struct ibv_context *context,
				       struct ibv_cq_init_attr_ex *attr)
{
	struct stellar_cq *cq;

	if ((attr->comp_mask & ~(IBV_CQ_INIT_ATTR_MASK_FLAGS |
				 IBV_CQ_INIT_ATTR_MASK_PD)) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) && attr->flags) ||
	    (attr->wc_flags & ~STELLAR_CQ_EX_WC_FLAGS)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* IBV_CQ_INIT_ATTR_MASK_PD names a parent domain of this context. */
	if (attr->cqe > INT32_MAX ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	     (!attr->parent_domain || attr->parent_domain->context != context ||
	      !to_stellar_pd(attr->parent_domain)->protection))) {
		errno = EINVAL;
		return NULL;
	}

	cq = stellar_create_cq_common(context, attr, true);
	if (!cq)
		return NULL;
	stellar_cq_ex_set_ops(cq);
	return &cq->vcq.cq_ex;
}

int stellar_destroy_cq(struct ibv_cq *ibcq)
{
	struct stellar_cq *cq = to_stellar_cq(ibcq);
	int ret;

	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;

	stellar_unmap_ring(&cq->ring);
	stellar_cq_destroy(cq);
	stellar_obj_free(cq, cq->pdu, STELLAR_RES_TYPE_CQ);
	return 0;
}

int stellar_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	return ibv_cmd_req_notify_cq(cq, solicited_only);
}

/*
 * The kernel moves the completions not yet polled to a new ring and
 * names it in the response; polling continues there at the same
 * counter.  The CQ lock keeps pollers away from both rings meanwhile.
 */
int stellar_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct stellar_context *ctx = to_stellar_ctx(ibcq->context);
	struct stellar_cq *cq = to_stellar_cq(ibcq);
	struct stellar_resize_cq_cmd_resp resp = {};
	struct ibv_resize_cq cmd = {};
	struct stellar_uring old;
	int ret;

	if (cqe < 1)
		return EINVAL;

	stellar_lock(&cq->lock);
	ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (ret)
		goto out;
	old = cq->ring;
	ret = stellar_map_ring(ctx, &cq->ring, &resp.drv.cq,
			       sizeof(struct stellar_cqe), false);
	if (ret) {
		/* The kernel no longer writes the old ring: nothing to poll. */
		stellar_err(&ctx->vctx, "CQ resized but its new ring is unusable");
		goto out;
	}
	stellar_unmap_ring(&old);
out:
	stellar_unlock(&cq->lock);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Queue pairs                                                         */
/* ------------------------------------------------------------------ */

/*
 * The doorbell system call: a POST_SEND command with no work requests.
 * datapath.c skips it while the kernel polls the ring (STELLAR_RING_POLLED).
 */
static int stellar_doorbell_cmd(struct stellar_qp *qp)
{
	struct ibv_send_wr *bad_wr;

	return ibv_cmd_post_send(&qp->vqp.qp, NULL, &bad_wr);
}

/*
 * An XRC receive QP belongs to an XRC domain, not a PD, and has no queues
 * (the kernel creates it as its own QP); every other QP type has a PD.
 */
static int stellar_check_qp_attr(const struct ibv_qp_init_attr_ex *attr)
{
	if (attr->qp_type != IBV_QPT_RC && attr->qp_type != IBV_QPT_UC &&
	    attr->qp_type != IBV_QPT_UD && attr->qp_type != IBV_QPT_XRC_SEND &&
	    attr->qp_type != IBV_QPT_XRC_RECV)
		return EOPNOTSUPP;
	if (attr->comp_mask & ~(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD |
				IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))
		return EOPNOTSUPP;
	if (attr->qp_type == IBV_QPT_XRC_RECV)
		return (attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) && attr->xrcd &&
		       !(attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) ?
		       0 : EINVAL;
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd ||
	    (attr->comp_mask & IBV_QP_INIT_ATTR_XRCD))
		return EINVAL;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (attr->send_ops_flags & ~stellar_qp_send_ops(attr->qp_type)))
		return EOPNOTSUPP;
	return 0;
}

/*
 * Maps the QP's rings and derives its limits; the capabilities reported
 * to the caller are those the ring entries can really hold.
 */
static int stellar_qp_map_rings(struct stellar_context *ctx,
				struct stellar_qp *qp,
				struct ibv_qp_init_attr_ex *attr,
				const struct stellar_create_qp_resp *drv)
{
	const size_t sq_fixed = sizeof(struct stellar_sq_wqe);
	const size_t rq_fixed = sizeof(struct stellar_rq_wqe);
	struct ibv_qp_cap *cap = &attr->cap;
	uint32_t room;
	int ret;

	ret = stellar_map_ring(ctx, &qp->sq.ring, &drv->sq,
			       sq_fixed + sizeof(struct stellar_sge), true);
	if (ret)
		return ret;
	room = stellar_entry_room(&qp->sq.ring, sq_fixed);
	qp->sq.max_sge = stellar_min_u32(cap->max_send_sge,
					 room / sizeof(struct stellar_sge));
	qp->sq.max_inline = stellar_min_u32(cap->max_inline_data, room);
	cap->max_send_sge = qp->sq.max_sge;
	cap->max_inline_data = qp->sq.max_inline;

	/* An XRC send QP receives nothing: its one-entry RQ stays unmapped. */
	if (attr->srq || attr->qp_type == IBV_QPT_XRC_SEND) {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
		return 0;
	}
	ret = stellar_map_ring(ctx, &qp->rq.ring, &drv->rq,
			       rq_fixed + sizeof(struct stellar_sge), true);
	if (ret)
		return ret;
	room = stellar_entry_room(&qp->rq.ring, rq_fixed);
	qp->rq.max_sge = stellar_min_u32(cap->max_recv_sge,
					 room / sizeof(struct stellar_sge));
	cap->max_recv_sge = qp->rq.max_sge;
	return 0;
}

static void stellar_qp_free(struct stellar_qp *qp)
{
	stellar_unmap_ring(&qp->sq.ring);
	stellar_unmap_ring(&qp->rq.ring);
	stellar_wq_destroy(&qp->sq);
	stellar_wq_destroy(&qp->rq);
	stellar_obj_free(qp, qp->pdu, STELLAR_RES_TYPE_QP);
}

static struct stellar_qp *stellar_qp_alloc(struct ibv_pd *pd)
{
	struct stellar_pd_use pdu;
	struct stellar_qp *qp;
	bool single;

	qp = stellar_obj_alloc(pd, sizeof(*qp), STELLAR_RES_TYPE_QP, &pdu);
	if (!qp)
		return NULL;
	qp->pdu = pdu;
	single = stellar_single_thread(&pdu);
	if (stellar_wq_init(&qp->sq, single)) {
		stellar_obj_free(qp, pdu, STELLAR_RES_TYPE_QP);
		return NULL;
	}
	if (stellar_wq_init(&qp->rq, single)) {
		stellar_wq_destroy(&qp->sq);
		stellar_obj_free(qp, pdu, STELLAR_RES_TYPE_QP);
		return NULL;
	}
	return qp;
}

struct ibv_qp *stellar_create_qp_ex(struct ibv_context *context,
				    struct ibv_qp_init_attr_ex *attr)
{
	struct stellar_context *ctx = to_stellar_ctx(context);
	struct stellar_create_qp_cmd_resp resp = {};
	struct ibv_create_qp cmd = {};
	struct stellar_qp *qp;
	int ret;

	ret = stellar_check_qp_attr(attr);
	if (ret) {
		errno = ret;
		return NULL;
	}
	/* An XRC receive QP has no PD, so no parent domain's allocator. */
	qp = stellar_qp_alloc(attr->qp_type == IBV_QPT_XRC_RECV ? NULL :
			      attr->pd);
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}

	ret = ibv_cmd_create_qp_ex(context, &qp->vqp, attr, &cmd, sizeof(cmd),
				   &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;
	if (attr->qp_type == IBV_QPT_XRC_RECV) {
		memset(&attr->cap, 0, sizeof(attr->cap));
		return &qp->vqp.qp;
	}
	ret = stellar_qp_map_rings(ctx, qp, attr, &resp.drv);
	if (ret)
		goto err_destroy;

	qp->sq_sig_all = attr->sq_sig_all;
	qp->ring_doorbell = stellar_doorbell_cmd;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		stellar_qp_ex_set_ops(qp);
		qp->vqp.comp_mask |= VERBS_QP_EX;
	}
	return &qp->vqp.qp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	stellar_qp_free(qp);
	errno = ret;
	return NULL;
}

/* Another process's XRC receive QP, in an XRC domain both opened. */
struct ibv_qp *stellar_open_qp(struct ibv_context *context,
			       struct ibv_qp_open_attr *attr)
{
	struct ib_uverbs_create_qp_resp resp = {};
	struct ibv_open_qp cmd = {};
	struct stellar_qp *qp;
	int ret;

	qp = stellar_qp_alloc(NULL);
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_open_qp(context, &qp->vqp, sizeof(qp->vqp), attr, &cmd,
			      sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		stellar_qp_free(qp);
		errno = ret;
		return NULL;
	}
	return &qp->vqp.qp;
}

struct ibv_qp *stellar_create_qp(struct ibv_pd *pd,
				 struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex attr_ex = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq,
		.srq = attr->srq,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct ibv_qp *qp;

	qp = stellar_create_qp_ex(pd->context, &attr_ex);
	if (qp)
		attr->cap = attr_ex.cap;
	return qp;
}

int stellar_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask)
{
	struct ibv_modify_qp cmd = {};

	return ibv_cmd_modify_qp(qp, attr, attr_mask, &cmd, sizeof(cmd));
}

int stellar_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		     int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct stellar_qp *qp = to_stellar_qp(ibqp);
	struct ibv_query_qp cmd = {};
	int ret;

	ret = ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr,
			       &cmd, sizeof(cmd));
	if (ret)
		return ret;

	/* Report what the ring entries hold, as create_qp did. */
	attr->cap.max_send_sge = qp->sq.max_sge;
	attr->cap.max_inline_data = qp->sq.max_inline;
	if (!ibqp->srq)
		attr->cap.max_recv_sge = qp->rq.max_sge;
	init_attr->cap = attr->cap;
	return 0;
}

int stellar_destroy_qp(struct ibv_qp *ibqp)
{
	int ret;

	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;

	stellar_qp_free(to_stellar_qp(ibqp));
	return 0;
}

/* ------------------------------------------------------------------ */
/* Shared receive queues                                               */
/* ------------------------------------------------------------------ */

/* Basic SRQs, and XRC SRQs (with a CQ and an XRC domain of their own). */
static int stellar_check_srq_attr(const struct ibv_srq_init_attr_ex *attr)
{
	const uint32_t xrc = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;

	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd)
		return EINVAL;
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) ||
	    attr->srq_type == IBV_SRQT_BASIC)
		return attr->comp_mask & ~(IBV_SRQ_INIT_ATTR_TYPE |
					   IBV_SRQ_INIT_ATTR_PD) ?
		       EOPNOTSUPP : 0;
	if (attr->srq_type != IBV_SRQT_XRC || (attr->comp_mask & ~xrc))
		return EOPNOTSUPP;
	return (attr->comp_mask & xrc) == xrc && attr->xrcd && attr->cq ?
	       0 : EINVAL;
}

struct ibv_srq *stellar_create_srq_ex(struct ibv_context *context,
				      struct ibv_srq_init_attr_ex *attr)
{
	struct stellar_context *ctx = to_stellar_ctx(context);
	const size_t fixed = sizeof(struct stellar_rq_wqe);
	struct stellar_create_srq_cmd_resp resp = {};
	struct ibv_create_xsrq cmd = {};
	struct stellar_pd_use pdu;
	struct stellar_srq *srq;
	uint32_t room;
	int ret;

	ret = stellar_check_srq_attr(attr);
	if (ret) {
		errno = ret;
		return NULL;
	}
	/* Shared by QPs of any thread: locked even in a thread domain. */
	srq = stellar_obj_alloc(attr->pd, sizeof(*srq), STELLAR_RES_TYPE_SRQ,
				&pdu);
	if (!srq) {
		errno = ENOMEM;
		return NULL;
	}
	srq->pdu = pdu;
	ret = stellar_wq_init(&srq->rq, false);
	if (ret)
		goto err_free;

	ret = ibv_cmd_create_srq_ex(context, &srq->vsrq, attr, &cmd,
				    sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_lock;
	ret = stellar_map_ring(ctx, &srq->rq.ring, &resp.drv.rq,
			       fixed + sizeof(struct stellar_sge), true);
	if (ret)
		goto err_destroy;

	room = stellar_entry_room(&srq->rq.ring, fixed);
	srq->rq.max_sge = stellar_min_u32(attr->attr.max_sge,
					  room / sizeof(struct stellar_sge));
	attr->attr.max_sge = srq->rq.max_sge;
	return &srq->vsrq.srq;

err_destroy:
	ibv_cmd_destroy_srq(&srq->vsrq.srq);
err_lock:
	stellar_wq_destroy(&srq->rq);
err_free:
	stellar_obj_free(srq, pdu, STELLAR_RES_TYPE_SRQ);
	errno = ret;
	return NULL;
}

struct ibv_srq *stellar_create_srq(struct ibv_pd *pd,
				   struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex attr_ex = {
		.srq_context = attr->srq_context,
		.attr = attr->attr,
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD,
		.srq_type = IBV_SRQT_BASIC,
		.pd = pd,
	};
	struct ibv_srq *srq;

	srq = stellar_create_srq_ex(pd->context, &attr_ex);
	if (srq)
		attr->attr = attr_ex.attr;
	return srq;
}

/* The number XRC send work requests name an XRC SRQ by. */
int stellar_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	struct stellar_srq *srq = to_stellar_srq(ibsrq);

	if (srq->vsrq.srq_type != IBV_SRQT_XRC)
		return EOPNOTSUPP;
	*srq_num = srq->vsrq.srq_num;
	return 0;
}

/* ------------------------------------------------------------------ */
/* XRC domains                                                         */
/* ------------------------------------------------------------------ */

struct ibv_xrcd *stellar_open_xrcd(struct ibv_context *context,
				   struct ibv_xrcd_init_attr *attr)
{
	struct ib_uverbs_open_xrcd_resp resp = {};
	struct ibv_open_xrcd cmd = {};
	struct verbs_xrcd *xrcd;
	int ret;

	xrcd = calloc(1, sizeof(*xrcd));
	if (!xrcd) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_open_xrcd(context, xrcd, sizeof(*xrcd), attr, &cmd,
				sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(xrcd);
		errno = ret;
		return NULL;
	}
	return &xrcd->xrcd;
}

int stellar_close_xrcd(struct ibv_xrcd *ibxrcd)
{
	struct verbs_xrcd *xrcd = stellar_container_of(ibxrcd,
						       struct verbs_xrcd, xrcd);
	int ret;

	ret = ibv_cmd_close_xrcd(xrcd);
	if (!ret)
		free(xrcd);
	return ret;
}

/*
 * Changing max_wr gives the SRQ a new ring: the kernel moves the receive
 * requests not yet taken into it and describes it in the response it
 * writes to the address passed in the command.  The SRQ lock keeps
 * posters away from both rings meanwhile.
 */
static int stellar_resize_srq(struct stellar_srq *srq,
			      struct ibv_srq_attr *attr, int attr_mask)
{
	struct stellar_context *ctx = to_stellar_ctx(srq->vsrq.srq.context);
	struct stellar_modify_srq_resp resp = {};
	struct stellar_modify_srq_cmd_drv cmd = {
		.drv.response = (uintptr_t)&resp,
	};
	struct stellar_uring old;
	int ret;

	stellar_lock(&srq->rq.lock);
	ret = ibv_cmd_modify_srq(&srq->vsrq.srq, attr, attr_mask,
				 &cmd.ibv_cmd, sizeof(cmd));
	if (ret)
		goto out;
	old = srq->rq.ring;
	ret = stellar_map_ring(ctx, &srq->rq.ring, &resp.rq,
			       old.entry_size, true);
	if (ret) {
		/* The kernel no longer reads the old ring: posting is over. */
		stellar_err(&ctx->vctx, "SRQ resized but its new ring is unusable");
		goto out;
	}
	stellar_unmap_ring(&old);
out:
	stellar_unlock(&srq->rq.lock);
	return ret;
}

int stellar_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		       int attr_mask)
{
	struct stellar_modify_srq_cmd_drv cmd = {};

	if (attr_mask & IBV_SRQ_MAX_WR)
		return stellar_resize_srq(to_stellar_srq(ibsrq), attr,
					  attr_mask);
	return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd.ibv_cmd,
				  sizeof(cmd));
}

int stellar_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd = {};
	int ret;

	ret = ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
	if (!ret)
		attr->max_sge = to_stellar_srq(ibsrq)->rq.max_sge;
	return ret;
}

int stellar_destroy_srq(struct ibv_srq *ibsrq)
{
	struct stellar_srq *srq = to_stellar_srq(ibsrq);
	int ret;

	ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret)
		return ret;

	stellar_unmap_ring(&srq->rq.ring);
	stellar_wq_destroy(&srq->rq);
	stellar_obj_free(srq, srq->pdu, STELLAR_RES_TYPE_SRQ);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Address handles                                                     */
/* ------------------------------------------------------------------ */

struct ibv_ah *stellar_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct stellar_create_ah_cmd_resp resp = {};
	struct stellar_ah *ah;
	int ret;

	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}

	ret = ibv_cmd_create_ah(pd, &ah->ibv_ah, attr, &resp.ibv_resp,
				sizeof(resp));
	if (ret) {
		free(ah);
		errno = ret;
		return NULL;
	}
	ah->ah_handle = resp.drv.ah_handle;
	return &ah->ibv_ah;
}

int stellar_destroy_ah(struct ibv_ah *ibah)
{
	int ret;

	ret = ibv_cmd_destroy_ah(ibah);
	if (ret)
		return ret;

	free(to_stellar_ah(ibah));
	return 0;
}
