/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared by the verbs test helpers that run RC QPs connected to each other
 * on one device (parent_domain.c, import_verbs.c): opening a device by
 * name, connecting a QP, and failing with the program's name.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef RC_LOOP_H
#define RC_LOOP_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

extern char *program_invocation_short_name;

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: FAIL: ", program_invocation_short_name);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i] && !ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (!ctx)
		die("cannot open %s", name);
	ibv_free_device_list(list);
	return ctx;
}

/* The attributes of a move to RTR towards QP @dest at GID @gid (port 1). */
static inline void rtr_attr(struct ibv_qp_attr *a, uint32_t dest,
			    int gid_index, const union ibv_gid *gid)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_RTR;
	a->path_mtu = IBV_MTU_1024;
	a->dest_qp_num = dest;
	a->min_rnr_timer = 12;
	a->max_dest_rd_atomic = 1;
	a->ah_attr.is_global = 1;
	a->ah_attr.grh.dgid = *gid;
	a->ah_attr.grh.sgid_index = gid_index;
	a->ah_attr.grh.hop_limit = 64;
	a->ah_attr.port_num = 1;
}

/*
 * INIT, RTR to QP @dest at GID @gid (port 1), RTS, with remote @access;
 * one READ or atomic outstanding each way.
 */
static inline void connect_qp_access(struct ibv_qp *qp, uint32_t dest,
				     int gid_index, const union ibv_gid *gid,
				     unsigned int access)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = access,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("INIT: %s", strerror(errno));
	rtr_attr(&a, dest, gid_index, gid);
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("RTR: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			  IBV_QP_MAX_QP_RD_ATOMIC))
		die("RTS: %s", strerror(errno));
}

/* INIT, RTR to QP @dest at GID @gid (port 1), RTS; remote writes allowed. */
static inline void connect_qp(struct ibv_qp *qp, uint32_t dest, int gid_index,
			      const union ibv_gid *gid)
{
	connect_qp_access(qp, dest, gid_index, gid, IBV_ACCESS_REMOTE_WRITE);
}

#endif /* RC_LOOP_H */
