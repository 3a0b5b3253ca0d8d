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
 * one page, so that RLIMIT_MEMLOCK does not stop them first.
 *
 * KIND mcast_grp, mcast_qp or mcast_total attaches UD QPs to multicast
 * groups (ibv_attach_mcast, IPv4-mapped 239.1.x.y GIDs): one QP to COUNT
 * groups, COUNT QPs to one group, or COUNT attachments of 64 QPs spread
 * over groups, 64 QPs to a group; "created" counts attachments.  The
 * objects are released when the process exits (attachments included).  Exit code 0 unless the setup
 * failed.
 *
 *   local_limits DEVICE churn SECONDS
 *
 * creates and destroys QPs and MRs in a loop for SECONDS seconds, and
 * makes QP creations fail after the kernel picked a QPN: a raw
 * IB_USER_VERBS_CMD_CREATE_QP whose response buffer is an inaccessible
 * page, so the driver allocates the QP and its QPN, then cannot copy its
 * response and must undo everything.  Prints
 *
 *   created N        QPs created and destroyed
 *   failed N EFAULT  creations that failed, and with what (all EFAULT)
 *   mrs N            MRs registered and deregistered
 *   next_qpn Q       QPN of a QP created at the end
 *
 * and exits 0 if every failed creation failed with EFAULT and every
 * other verb succeeded.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include "../../../include/uapi/stellar-abi.h"

struct raw_create_qp {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_create_qp cmd;
};

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
	if (!strcmp(kind, "mcast_grp"))
		return attr->max_mcast_grp;
	if (!strcmp(kind, "mcast_qp"))
		return attr->max_mcast_qp_attach;
	if (!strcmp(kind, "mcast_total"))
		return attr->max_total_mcast_qp_attach;
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

#define MCAST_QPS 64

static struct ibv_qp *create_ud_qp(struct env *env)
{
	struct ibv_qp_init_attr init = {
		.send_cq = env->cq,
		.recv_cq = env->cq,
		.srq = env->srq,
		.cap = { .max_send_wr = 1, .max_send_sge = 1 },
		.qp_type = IBV_QPT_UD,
	};
	struct ibv_qp *qp = ibv_create_qp(env->pd, &init);

	if (!qp)
		die("ibv_create_qp UD");
	return qp;
}

/* The IPv4-mapped GID of group 239.1.(n >> 8).(n & 0xff). */
static void mcast_gid(long n, union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	gid->raw[10] = 0xff;
	gid->raw[11] = 0xff;
	gid->raw[12] = 239;
	gid->raw[13] = 1;
	gid->raw[14] = (n >> 8) & 0xff;
	gid->raw[15] = n & 0xff;
}

/*
 * Attach UD QPs to groups as KIND says; returns the attachments made and
 * sets *err to why the next one failed.
 */
static long mcast_flood(struct env *env, const char *kind, long count,
			int *err)
{
	struct ibv_qp *qps[MCAST_QPS];
	int nqps = 0;
	union ibv_gid gid;
	struct ibv_qp *qp;
	long n, group;

	if (!strcmp(kind, "mcast_grp"))
		nqps = 1;
	else if (!strcmp(kind, "mcast_total"))
		nqps = MCAST_QPS;
	for (n = 0; n < nqps; n++)
		qps[n] = create_ud_qp(env);
	for (n = 0; n < count; n++) {
		if (!strcmp(kind, "mcast_grp")) {
			qp = qps[0];
			group = n;
		} else if (!strcmp(kind, "mcast_qp")) {
			qp = create_ud_qp(env);
			group = 0;
		} else {
			qp = qps[n % MCAST_QPS];
			group = n / MCAST_QPS;
		}
		mcast_gid(group, &gid);
		*err = ibv_attach_mcast(qp, &gid, 0);
		if (*err)
			break;
	}
	return n;
}

/* A CREATE_QP the driver must fail after choosing the QPN; the errno. */
static int create_qp_bad_response(struct ibv_context *ctx, struct ibv_pd *pd,
				  struct ibv_cq *cq, void *no_access)
{
	size_t out = sizeof(struct ib_uverbs_create_qp_resp) +
		     sizeof(struct stellar_create_qp_resp);
	struct raw_create_qp req = {
		.hdr = {
			.command = IB_USER_VERBS_CMD_CREATE_QP,
			.in_words = sizeof(req) / 4,
			.out_words = out / 4,
		},
		.cmd = {
			.response = (uintptr_t)no_access,
			.pd_handle = pd->handle,
			.send_cq_handle = cq->handle,
			.recv_cq_handle = cq->handle,
			.max_send_wr = 1,
			.max_recv_wr = 1,
			.max_send_sge = 1,
			.max_recv_sge = 1,
			.qp_type = IBV_QPT_RC,
		},
	};

	if (write(ctx->cmd_fd, &req, sizeof(req)) == sizeof(req))
		return 0;
	return errno;
}

static struct ibv_qp *create_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	if (!qp)
		die("ibv_create_qp");
	return qp;
}

/* The churn mode: see the top of the file. */
static int churn(const char *device, int seconds)
{
	long created = 0, failed = 0, bad = 0, mrs = 0;
	struct ibv_context *ctx;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	void *no_access;
	time_t end;
	char *buf;
	int err;

	end = time(NULL) + seconds;
	ctx = open_device(device);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	buf = malloc(65536);
	no_access = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	if (!pd || !cq || !buf || no_access == MAP_FAILED)
		die("setup");

	while (time(NULL) < end) {
		qp = create_qp(pd, cq);
		created++;
		err = create_qp_bad_response(ctx, pd, cq, no_access);
		failed++;
		if (err != EFAULT) {
			fprintf(stderr, "raw create_qp: %s\n", strerror(err));
			bad++;
		}
		mr = ibv_reg_mr(pd, buf, 65536, IBV_ACCESS_LOCAL_WRITE |
				IBV_ACCESS_REMOTE_WRITE);
		if (!mr)
			die("ibv_reg_mr");
		mrs++;
		if (ibv_dereg_mr(mr))
			die("ibv_dereg_mr");
		if (ibv_destroy_qp(qp))
			die("ibv_destroy_qp");
	}
	qp = create_qp(pd, cq);
	printf("created %ld\nfailed %ld %s\nmrs %ld\nnext_qpn %u\n",
	       created, failed, bad ? "OTHER" : "EFAULT", mrs, qp->qp_num);
	ibv_destroy_qp(qp);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct env env = { .entries = 1 };
	long count, created;
	int err = 0;

	if (argc < 4) {
		fprintf(stderr,
			"usage: local_limits DEVICE KIND COUNT [ENTRIES [GID_INDEX]]\n"
			"       local_limits DEVICE churn SECONDS\n");
		return 2;
	}
	if (!strcmp(argv[2], "churn"))
		return churn(argv[1], atoi(argv[3]));
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
	if (!strcmp(argv[2], "qp") || !strncmp(argv[2], "mcast_", 6))
		setup_qp_deps(&env);

	printf("limit %d\n", limit_of(&env.attr, argv[2]));
	fflush(stdout);
	if (!strncmp(argv[2], "mcast_", 6))
		created = mcast_flood(&env, argv[2], count, &err);
	else
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
