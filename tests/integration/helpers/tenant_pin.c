// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tenant_pin: register memory regions on a stellar device and say which
 * registrations the device refused, for the max_pinned limit.
 *
 *   tenant_pin DEVICE HOLD_SECONDS SIZE...
 *
 * For each SIZE (bytes) a fresh, touched anonymous buffer is registered
 * (ibv_reg_mr, local write) and one line printed:
 *
 *   mr SIZE ok
 *   mr SIZE errno E
 *
 * Then "held" is printed and the regions stay registered for
 * HOLD_SECONDS.  With the device's pin_mode eager, registration pins
 * everything, so a region beyond max_pinned fails there.  Exit code 0
 * unless the setup failed.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/verbs.h>

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	int i;

	if (argc < 4) {
		fprintf(stderr, "usage: tenant_pin DEVICE HOLD_SECONDS SIZE...\n");
		return 2;
	}
	ctx = open_dev(argv[1]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	if (!pd) {
		fprintf(stderr, "tenant_pin: cannot open %s\n", argv[1]);
		return 1;
	}
	for (i = 3; i < argc; i++) {
		size_t size = strtoull(argv[i], NULL, 0);
		void *buf = mmap(NULL, size, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (buf == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		memset(buf, 0x5a, size);
		errno = 0;
		if (ibv_reg_mr(pd, buf, size, IBV_ACCESS_LOCAL_WRITE))
			printf("mr %zu ok\n", size);
		else
			printf("mr %zu errno %d\n", size, errno ? errno : -1);
		fflush(stdout);
	}
	printf("held\n");
	fflush(stdout);
	sleep((unsigned int)atoi(argv[2]));
	return 0;
}
