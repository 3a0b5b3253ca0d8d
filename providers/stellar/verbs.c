// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) 2026 The virtio-stellar authors
 *
 * stellar libibverbs provider: verbs operations.
 *
 * Control-path verbs are plain uverbs commands handled by the kernel
 * module.  Work requests and completions will be exchanged through
 * queues shared with the kernel (the data-path work); until then
 * poll_cq, post_send and post_recv report EOPNOTSUPP.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int stellar_dealloc_pd(struct ibv_pd *ibpd)
{
	int ret;

	ret = ibv_cmd_dealloc_pd(ibpd);
	if (ret)
		return ret;

	free(to_stellar_pd(ibpd));
	return 0;
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

int stellar_dereg_mr(struct verbs_mr *vmr)
{
	int ret;

	ret = ibv_cmd_dereg_mr(vmr);
	if (ret)
		return ret;

	free(to_stellar_mr(vmr));
	return 0;
}

struct ibv_cq *stellar_create_cq(struct ibv_context *context, int cqe,
				 struct ibv_comp_channel *channel,
				 int comp_vector)
{
	struct ib_uverbs_create_cq_resp resp = {};
	struct ibv_create_cq cmd = {};
	struct stellar_cq *cq;
	int ret;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;

	ret = ibv_cmd_create_cq(context, cqe, channel, comp_vector,
				&cq->vcq.cq, &cmd, sizeof(cmd),
				&resp, sizeof(resp));
	if (ret) {
		free(cq);
		errno = ret;
		return NULL;
	}

	return &cq->vcq.cq;
}

int stellar_destroy_cq(struct ibv_cq *ibcq)
{
	int ret;

	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;

	free(to_stellar_cq(ibcq));
	return 0;
}

/*
 * ibv_poll_cq() callers treat any non-negative value as a completion
 * count, so "not supported" has to be reported as a negative value.
 */
int stellar_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)
{
	(void)cq;
	(void)num_entries;
	(void)wc;

	errno = EOPNOTSUPP;
	return -EOPNOTSUPP;
}

int stellar_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	return ibv_cmd_req_notify_cq(cq, solicited_only);
}

struct ibv_qp *stellar_create_qp(struct ibv_pd *pd,
				 struct ibv_qp_init_attr *attr)
{
	struct ib_uverbs_create_qp_resp resp = {};
	struct ibv_create_qp cmd = {};
	struct stellar_qp *qp;
	int ret;

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;

	ret = ibv_cmd_create_qp(pd, &qp->vqp.qp, attr, &cmd, sizeof(cmd),
				&resp, sizeof(resp));
	if (ret) {
		free(qp);
		errno = ret;
		return NULL;
	}

	return &qp->vqp.qp;
}

int stellar_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask)
{
	struct ibv_modify_qp cmd = {};

	return ibv_cmd_modify_qp(qp, attr, attr_mask, &cmd, sizeof(cmd));
}

int stellar_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		     int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd = {};

	return ibv_cmd_query_qp(qp, attr, attr_mask, init_attr,
				&cmd, sizeof(cmd));
}

int stellar_destroy_qp(struct ibv_qp *ibqp)
{
	int ret;

	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;

	free(to_stellar_qp(ibqp));
	return 0;
}

/* ibv_post_send()/ibv_post_recv() return a positive errno on failure. */
int stellar_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr)
{
	(void)qp;

	*bad_wr = wr;
	return EOPNOTSUPP;
}

int stellar_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr)
{
	(void)qp;

	*bad_wr = wr;
	return EOPNOTSUPP;
}
