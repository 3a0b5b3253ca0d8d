// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * netns_hold: keep a QP open on a device whose network namespace is about
 * to die, from outside that namespace.
 *
 *   ip netns exec NS netns_hold DEVICE GO_FILE
 *
 * Opens DEVICE (which must be visible in NS), creates a PD, a CQ, an MR
 * and an RC QP, posts two receives and flushes them (moving the QP to the
 * error state), polls one flush completion and leaves the other in the
 * CQ ring, then moves itself into the network and mount
 * namespaces of PID 1, so that nothing of the process keeps NS alive
 * ("ip netns exec" mounted a sysfs of NS in a private mount namespace),
 * prints "ready" and waits up to 60 s for the device to be taken away
 * (the test deletes NS; the RDMA core moves the device back to init_net).
 * The core reports the event before it tears the context down, so the
 * checks wait for GO_FILE, which the test creates once the device is back
 * in init_net, i.e. once the core is done with the context.  Then it
 * checks that:
 *
 *   - the async event queue reports IBV_EVENT_DEVICE_FATAL;
 *   - commands on the QP fail (ibv_query_qp, ibv_modify_qp);
 *   - polling the CQ finds nothing: the kernel replaced the process's
 *     mapping of the ring (with the completion left in it) by a zeroed
 *     page;
 *   - destroying the objects and closing the device still succeed.
 *
 * Prints one line per check; exits 0 when every check passed.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

static int failures;

static void check(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok" : "FAIL", what);
	fflush(stdout);
	if (!ok)
		failures++;
}

static void die(const char *what)
{
	fprintf(stderr, "netns_hold: %s: %s\n", what, strerror(errno));
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
	if (!ctx) {
		errno = ENODEV;
		die(name);
	}
	return ctx;
}

/* Join PID 1's namespace of @type, leaving the current one. */
static void join_init(const char *ns, int type)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/1/ns/%s", ns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die(path);
	if (setns(fd, type))
		die("setns");
	close(fd);
}

/* Wait up to @ms for an async event; return its type or -1. */
static int wait_async_event(struct ibv_context *ctx, int ms)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	int type;

	if (fcntl(ctx->async_fd, F_SETFL,
		  fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK))
		die("fcntl");
	if (poll(&pfd, 1, ms) != 1)
		return -1;
	if (ibv_get_async_event(ctx, &ev))
		return -1;
	type = ev.event_type;
	ibv_ack_async_event(&ev);
	return type;
}

/*
 * Post two receives and flush them by moving the QP to the error state;
 * poll one flush completion and leave the other in the CQ ring, where the
 * process would still see it if its mapping of the ring survived.
 */
static void leave_completion(struct ibv_qp *qp, struct ibv_cq *cq,
			     struct ibv_mr *mr)
{
	struct ibv_sge sge = { .addr = (uintptr_t)mr->addr, .length = 64,
			       .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc;
	int i, n = 0;

	for (i = 0; i < 2; i++) {
		wr.wr_id = i;
		if (ibv_post_recv(qp, &wr, &bad))
			die("ibv_post_recv");
	}
	if (ibv_modify_qp(qp, &attr, IBV_QP_STATE))
		die("ibv_modify_qp to ERR");
	for (i = 0; i < 1000 && !n; i++) {
		n = ibv_poll_cq(cq, 1, &wc);
		if (!n)
			usleep(1000);
	}
	if (n != 1 || wc.status != IBV_WC_WR_FLUSH_ERR) {
		errno = EPROTO;
		die("no flush completion");
	}
}

/* Wait up to @seconds for @path to exist. */
static void wait_file(const char *path, int seconds)
{
	int i;

	for (i = 0; i < seconds * 10; i++) {
		if (!access(path, F_OK))
			return;
		usleep(100000);
	}
	errno = ETIMEDOUT;
	die(path);
}

int main(int argc, char **argv)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				    .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
	struct ibv_qp_init_attr init = { .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_context *ctx;
	struct ibv_wc wc[4];
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	static char buf[65536];
	int type;

	if (argc != 3) {
		fprintf(stderr, "usage: netns_hold DEVICE GO_FILE\n");
		return 2;
	}
	ctx = open_device(argv[1]);
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 64, NULL, NULL, 0) : NULL;
	mr = cq ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE |
			     IBV_ACCESS_REMOTE_WRITE) : NULL;
	init.send_cq = cq;
	init.recv_cq = cq;
	qp = mr ? ibv_create_qp(pd, &init) : NULL;
	if (!qp || ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				 IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("creating the objects");
	leave_completion(qp, cq, mr);

	join_init("mnt", CLONE_NEWNS);
	join_init("net", CLONE_NEWNET);
	printf("ready: qp %u\n", qp->qp_num);
	fflush(stdout);

	type = wait_async_event(ctx, 60000);
	printf("async event: %d (%s)\n", type,
	       type < 0 ? "none" : ibv_event_type_str(type));
	check(type == IBV_EVENT_DEVICE_FATAL, "IBV_EVENT_DEVICE_FATAL");
	wait_file(argv[2], 60);
	check(ibv_query_qp(qp, &attr, IBV_QP_STATE, &init) != 0,
	      "ibv_query_qp fails");
	attr.qp_state = IBV_QPS_ERR;
	check(ibv_modify_qp(qp, &attr, IBV_QP_STATE) != 0,
	      "ibv_modify_qp fails");
	/* one flush completion was left in the ring, which is gone now */
	check(ibv_poll_cq(cq, 4, wc) == 0, "the zapped CQ ring is empty");
	check(ibv_destroy_qp(qp) == 0, "ibv_destroy_qp");
	check(ibv_dereg_mr(mr) == 0, "ibv_dereg_mr");
	check(ibv_destroy_cq(cq) == 0, "ibv_destroy_cq");
	check(ibv_dealloc_pd(pd) == 0, "ibv_dealloc_pd");
	check(ibv_close_device(ctx) == 0, "ibv_close_device");
	return failures ? 1 : 0;
}
