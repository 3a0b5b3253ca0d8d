// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) 2026 The virtio-stellar authors
 *
 * LD_PRELOAD helper for check-load.sh: lets an unmodified libibverbs
 * discover a simulated uverbs device on a host without RDMA hardware.
 *
 *  - NETLINK_RDMA sockets fail, so libibverbs falls back to scanning
 *    sysfs, which SYSFS_PATH points at a fake tree;
 *  - paths below /dev/infiniband/ are redirected into the directory
 *    named by STELLAR_FAKE_DEV_DIR.
 *
 * Test tooling only; never installed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/netlink.h>

#define CDEV_DIR "/dev/infiniband/"

/* Returns path, or the redirected path written into buf. */
static const char *redirect(const char *path, char *buf, size_t len)
{
	const char *dir = getenv("STELLAR_FAKE_DEV_DIR");
	int n;

	if (!dir || !path || strncmp(path, CDEV_DIR, strlen(CDEV_DIR)))
		return path;
	n = snprintf(buf, len, "%s/%s", dir, path + strlen(CDEV_DIR));
	if (n < 0 || (size_t)n >= len)
		return path;
	return buf;
}

int socket(int domain, int type, int protocol)
{
	int (*real_socket)(int, int, int) = dlsym(RTLD_NEXT, "socket");

	if (domain == AF_NETLINK && protocol == NETLINK_RDMA) {
		errno = EPROTONOSUPPORT;
		return -1;
	}
	return real_socket(domain, type, protocol);
}

int stat(const char *path, struct stat *st)
{
	int (*real_stat)(const char *, struct stat *) = dlsym(RTLD_NEXT, "stat");
	char buf[PATH_MAX];

	return real_stat(redirect(path, buf, sizeof(buf)), st);
}

int open(const char *path, int flags, ...)
{
	int (*real_open)(const char *, int, ...) = dlsym(RTLD_NEXT, "open");
	char buf[PATH_MAX];
	mode_t mode = 0;
	va_list ap;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	return real_open(redirect(path, buf, sizeof(buf)), flags, mode);
}
