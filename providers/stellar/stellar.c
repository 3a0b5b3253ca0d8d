// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) 2026 The virtio-stellar authors
 *
 * stellar libibverbs provider: registration, device and context.
 *
 * libibverbs loads libstellar-rdmav34.so because /etc/libibverbs.d/
 * stellar.driver names it; the constructor below registers the provider,
 * and libibverbs then offers it every uverbs device it found.  We claim
 * ib_devices whose name starts with STELLAR_DEV_PREFIX and whose uverbs
 * ABI version is STELLAR_UVERBS_ABI_VERSION.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stellar.h"

static const struct verbs_match_ent stellar_match_table[] = {
	{
		.u.modalias = STELLAR_NAME_MODALIAS(STELLAR_DEV_PREFIX),
		.kind = VERBS_MATCH_MODALIAS,
	},
	{ .kind = VERBS_MATCH_SENTINEL },
};

static void stellar_free_context(struct ibv_context *ibctx);

static const struct verbs_context_ops stellar_ctx_ops = {
	.query_device_ex = stellar_query_device_ex,
	.query_port = stellar_query_port,
	.alloc_pd = stellar_alloc_pd,
	.dealloc_pd = stellar_dealloc_pd,
	.alloc_td = stellar_alloc_td,
	.dealloc_td = stellar_dealloc_td,
	.alloc_parent_domain = stellar_alloc_parent_domain,
	.import_pd = stellar_import_pd,
	.unimport_pd = stellar_unimport_pd,
	.import_mr = stellar_import_mr,
	.unimport_mr = stellar_unimport_mr,
	.reg_mr = stellar_reg_mr,
	.dereg_mr = stellar_dereg_mr,
	.rereg_mr = stellar_rereg_mr,
	.advise_mr = stellar_advise_mr,
	.alloc_mw = stellar_alloc_mw,
	.dealloc_mw = stellar_dealloc_mw,
	.bind_mw = stellar_bind_mw,
	.query_rt_values = stellar_query_rt_values,
	.create_cq = stellar_create_cq,
	.create_cq_ex = stellar_create_cq_ex,
	.destroy_cq = stellar_destroy_cq,
	.poll_cq = stellar_poll_cq,
	.req_notify_cq = stellar_req_notify_cq,
	.resize_cq = stellar_resize_cq,
	.create_qp = stellar_create_qp,
	.create_qp_ex = stellar_create_qp_ex,
	.modify_qp = stellar_modify_qp,
	.query_qp = stellar_query_qp,
	.destroy_qp = stellar_destroy_qp,
	.post_send = stellar_post_send,
	.post_recv = stellar_post_recv,
	.create_srq = stellar_create_srq,
	.create_srq_ex = stellar_create_srq_ex,
	.get_srq_num = stellar_get_srq_num,
	.open_xrcd = stellar_open_xrcd,
	.close_xrcd = stellar_close_xrcd,
	.open_qp = stellar_open_qp,
	.modify_srq = stellar_modify_srq,
	.query_srq = stellar_query_srq,
	.destroy_srq = stellar_destroy_srq,
	.post_srq_recv = stellar_post_srq_recv,
	.create_ah = stellar_create_ah,
	.destroy_ah = stellar_destroy_ah,
	.attach_mcast = ibv_cmd_attach_mcast,
	.detach_mcast = ibv_cmd_detach_mcast,
	.free_context = stellar_free_context,
};

static int stellar_check_ucontext_resp(struct stellar_context *ctx,
				       const struct stellar_alloc_ucontext_resp *resp)
{
	if (resp->abi_version != STELLAR_UVERBS_ABI_VERSION) {
		stellar_err(&ctx->vctx,
			    "kernel reports stellar ABI %u, provider speaks %u",
			    resp->abi_version, STELLAR_UVERBS_ABI_VERSION);
		return EPROTO;
	}
	ctx->caps = resp->caps;
	ctx->max_inline_data = resp->max_inline_data;
	return 0;
}

static struct stellar_context *stellar_new_context(struct ibv_device *ibdev,
						   int cmd_fd)
{
	return _verbs_init_and_alloc_context(ibdev, cmd_fd,
		sizeof(struct stellar_context),
		(struct verbs_context *)offsetof(struct stellar_context, vctx),
		RDMA_DRIVER_UNKNOWN);
}

/*
 * The end of a context's setup: with @ret 0 the context gets its ops,
 * else it goes and errno says why.
 */
static struct verbs_context *stellar_context_ready(struct stellar_context *ctx,
						   int ret)
{
	if (ret) {
		verbs_uninit_context(&ctx->vctx);
		free(ctx);
		errno = ret;
		return NULL;
	}
	verbs_set_ops(&ctx->vctx, &stellar_ctx_ops);
	return &ctx->vctx;
}

static struct verbs_context *stellar_alloc_context(struct ibv_device *ibdev,
						   int cmd_fd,
						   void *private_data)
{
	struct stellar_get_context_resp resp = {};
	struct ibv_get_context cmd = {};
	struct stellar_context *ctx;
	int ret;

	(void)private_data;

	ctx = stellar_new_context(ibdev, cmd_fd);
	if (!ctx)
		return NULL;
	ret = ibv_cmd_get_context(&ctx->vctx, &cmd, sizeof(cmd),
				  &resp.ibv_resp, sizeof(resp));
	if (!ret)
		ret = stellar_check_ucontext_resp(ctx, &resp.drv);
	return stellar_context_ready(ctx, ret);
}

/*
 * ibv_import_device(): a context on the command fd of a context another
 * process (or this one) opened.  The kernel repeats what it answered the
 * context's creation (STELLAR_ATTR_QUERY_CONTEXT_RESP_UCTX).
 */
static struct verbs_context *stellar_import_context(struct ibv_device *ibdev,
						    int cmd_fd)
{
	struct stellar_alloc_ucontext_resp resp = {};
	struct stellar_context *ctx;
	int ret;

	ctx = stellar_new_context(ibdev, cmd_fd);
	if (!ctx)
		return NULL;
	ret = ibv_cmd_query_context(&ctx->vctx.context, NULL);
	if (!ret)
		ret = stellar_query_ucontext(&ctx->vctx.context, &resp);
	if (!ret)
		ret = stellar_check_ucontext_resp(ctx, &resp);
	return stellar_context_ready(ctx, ret);
}

static void stellar_free_context(struct ibv_context *ibctx)
{
	struct stellar_context *ctx = to_stellar_ctx(ibctx);

	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

static struct verbs_device *
stellar_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct stellar_device *dev;

	(void)sysfs_dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	return &dev->vdev;
}

static void stellar_uninit_device(struct verbs_device *vdev)
{
	free(to_stellar_dev(&vdev->device));
}

static const struct verbs_device_ops stellar_dev_ops = {
	.name = STELLAR_PROVIDER_NAME,
	.match_min_abi_version = STELLAR_UVERBS_ABI_VERSION,
	.match_max_abi_version = STELLAR_UVERBS_ABI_VERSION,
	.match_table = stellar_match_table,
	.alloc_device = stellar_alloc_device,
	.uninit_device = stellar_uninit_device,
	.alloc_context = stellar_alloc_context,
	.import_context = stellar_import_context,
};

static void __attribute__((constructor)) stellar_register_driver(void)
{
	verbs_register_driver_34(&stellar_dev_ops);
}
