// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * local_limits: flood a stellar device with one kind of object, the way a
 * hostile local user would, and say where the device stopped it.
 *
 *   local_limits DEVICE KIND COUNT [ENTRIES [GID_INDEX]]
 *
 * KIND is pd, cq, qp, mr, ah or srq.  Creates up to COUNT objects (CQs
 * of ENTRIES entries, default 1; AHs to the device's own GID_INDEX) and
 * prints
 *
 *   limit L          what ibv_query_device advertises for KIND
 *   created N        objects created
 *   errno E NAME     why the next one failed (0 if none did)
 *
 * QPs are RC QPs with one send WR on an SRQ; MRs are ODP registrations of
 * one page, so that RLIMIT_MEMLOCK does not stop them first.  The objects
 * are released when the process exits.  Exit code 0 unless the setup
 * failed.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

struct env {
	struct ibv_context *ctx;
	struct ibv_device_attr attr;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	void *page;
	int entries;
	int gid_index;
	union ibv_gid gid;
};

static void die(const char *what)
{
	fprintf(stderr, "local_limits: %s: %s\n", what, strerror(errno));
	exit(2);
}

static struct ibv_context *open_device(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	if (!list)
		die("ibv_get_device_list");
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx)
		die(name);
	return ctx;
}

/* The objects a QP needs; created before the flood. */
static void setup_qp_deps(struct env *env)
{
	struct ibv_srq_init_attr srq_attr = {
		.attr = { .max_wr = 1, .max_sge = 1 },
	};

	env->cq = ibv_create_cq(env->ctx, 1, NULL, NULL, 0);
	if (!env->cq)
		die("ibv_create_cq");
	env->srq = ibv_create_srq(env->pd, &srq_attr);
	if (!env->srq)
		die("ibv_create_srq");
}

static void *create_one(struct env *env, const char *kind)
{
	if (!strcmp(kind, "pd"))
		return ibv_alloc_pd(env->ctx);
	if (!strcmp(kind, "cq"))
		return ibv_create_cq(env->ctx, env->entries, NULL, NULL, 0);
	if (!strcmp(kind, "qp")) {
		struct ibv_qp_init_attr init = {
			.send_cq = env->cq,
			.recv_cq = env->cq,
			.srq = env->srq,
			.cap = { .max_send_wr = 1, .max_send_sge = 1 },
			.qp_type = IBV_QPT_RC,
		};

		return ibv_create_qp(env->pd, &init);
	}
	if (!strcmp(kind, "mr"))
		return ibv_reg_mr(env->pd, env->page, 4096,
				  IBV_ACCESS_LOCAL_WRITE |
				  IBV_ACCESS_ON_DEMAND);
	if (!strcmp(kind, "ah")) {
		struct ibv_ah_attr ah = {
			.is_global = 1,
			.grh = {
				.dgid = env->gid,
				.sgid_index = env->gid_index,
				.hop_limit = 64,
			},
			.port_num = 1,
		};

		return ibv_create_ah(env->pd, &ah);
	}
	if (!strcmp(kind, "srq")) {
		struct ibv_srq_init_attr init = {
			.attr = { .max_wr = 1, .max_sge = 1 },
		};

		return ibv_create_srq(env->pd, &init);
	}
	fprintf(stderr, "local_limits: unknown kind %s\n", kind);
	exit(2);
}

static int limit_of(const struct ibv_device_attr *attr, const char *kind)
{
	if (!strcmp(kind, "pd"))
		return attr->max_pd;
	if (!strcmp(kind, "cq"))
		return attr->max_cq;
	if (!strcmp(kind, "qp"))
		return attr->max_qp;
	if (!strcmp(kind, "mr"))
		return attr->max_mr;
	if (!strcmp(kind, "ah"))
		return attr->max_ah;
	return attr->max_srq;
}

int main(int argc, char **argv)
{
	struct env env = { .entries = 1 };
	long count, created;
	int err = 0;

	if (argc < 4) {
		fprintf(stderr,
			"usage: local_limits DEVICE KIND COUNT [ENTRIES [GID_INDEX]]\n");
		return 2;
	}
	count = strtol(argv[3], NULL, 0);
	if (argc > 4)
		env.entries = atoi(argv[4]);
	if (argc > 5)
		env.gid_index = atoi(argv[5]);
	env.ctx = open_device(argv[1]);
	if (ibv_query_device(env.ctx, &env.attr))
		die("ibv_query_device");
	if (!strcmp(argv[2], "ah") &&
	    ibv_query_gid(env.ctx, 1, env.gid_index, &env.gid))
		die("ibv_query_gid");
	env.page = aligned_alloc(4096, 4096);
	if (!env.page)
		die("aligned_alloc");
	memset(env.page, 0, 4096);
	if (strcmp(argv[2], "pd")) {
		env.pd = ibv_alloc_pd(env.ctx);
		if (!env.pd)
			die("ibv_alloc_pd");
	}
	if (!strcmp(argv[2], "qp"))
		setup_qp_deps(&env);

	printf("limit %d\n", limit_of(&env.attr, argv[2]));
	fflush(stdout);
	for (created = 0; created < count; created++) {
		errno = 0;
		if (!create_one(&env, argv[2])) {
			err = errno;
			break;
		}
	}
	printf("created %ld\n", created);
	printf("errno %d %s\n", err, err ? strerror(err) : "none");
	return 0;
}
