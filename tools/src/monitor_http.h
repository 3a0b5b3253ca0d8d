/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stellar-monitor: a small HTTP/1.0 server for GET /metrics.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_MONITOR_HTTP_H
#define STELLAR_MONITOR_HTTP_H

#include <stddef.h>

/* Bounds: request size, clients at once, time a client may take. */
#define MON_HTTP_MAX_REQUEST	4096
#define MON_HTTP_MAX_CLIENTS	16
#define MON_HTTP_TIMEOUT_MS	5000

int mon_http_route(const char *req, size_t len);
int mon_http_listen(const char *hostport);

/* Called per GET /metrics: the body (malloc'd) and its length, or -1. */
typedef int (*mon_http_body_fn)(char **body, size_t *len, void *arg);
/* Called when nothing happened for @tick_ms (0: never). */
typedef void (*mon_http_tick_fn)(void *arg);

int mon_http_serve(int lfd, mon_http_body_fn body, mon_http_tick_fn tick,
		   int tick_ms, void *arg, volatile int *stop);

#endif /* STELLAR_MONITOR_HTTP_H */
