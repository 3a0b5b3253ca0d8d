// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) 2026 The virtio-stellar authors
 *
 * LD_PRELOAD shim for perftest clients run with -R (RDMA CM).
 *
 * With -R, perftest (4.5-0.17, as Debian 12 ships it) first connects a
 * control connection to the server's port, and the server then closes its
 * listening id and opens a new one on the same port for the data QPs.  The
 * client connects the data QPs as soon as the control exchange is over, so
 * its request can reach the server before the second listen exists: the
 * server's CM rejects it (reason 8, invalid service ID).  perftest's client
 * then retries, but its retry uses the ids it has just destroyed and
 * crashes in librdmacm.  Under TCG, with two VMs on two host CPUs, this
 * race is lost now and then, on any RDMA device.
 *
 * The shim lets the first rdma_connect() (the control connection) go at
 * once and holds each later one back by $CM_CONNECT_DELAY_MS (default
 * 500), which is far more than the server needs to listen again.
 *
 *   gcc -shared -fPIC -o cm_connect_delay.so cm_connect_delay.c -ldl
 *   LD_PRELOAD=./cm_connect_delay.so ib_send_lat -R ... SERVER
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include <rdma/rdma_cma.h>

typedef int (*connect_fn)(struct rdma_cm_id *id,
			  struct rdma_conn_param *conn_param);

static unsigned int connects_seen;

/* The delay before a data connection, in milliseconds. */
static long connect_delay_ms(void)
{
	const char *text = getenv("CM_CONNECT_DELAY_MS");
	char *end;
	long ms;

	if (!text || !*text)
		return 500;
	ms = strtol(text, &end, 10);
	if (*end || ms < 0 || ms > 60000)
		return 500;
	return ms;
}

static void sleep_ms(long ms)
{
	struct timespec left = {
		.tv_sec = ms / 1000,
		.tv_nsec = (ms % 1000) * 1000000L,
	};

	while (nanosleep(&left, &left) && errno == EINTR)
		;
}

int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	static connect_fn real_connect;

	if (!real_connect) {
		real_connect = (connect_fn)dlsym(RTLD_NEXT, "rdma_connect");
		if (!real_connect) {
			errno = ENOSYS;
			return -1;
		}
	}
	if (connects_seen++)
		sleep_ms(connect_delay_ms());
	return real_connect(id, conn_param);
}
