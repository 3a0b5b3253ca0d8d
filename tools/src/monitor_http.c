// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stellar-monitor: a single-threaded HTTP/1.0 server for GET /metrics.
 *
 * One poll() loop, non-blocking sockets, every connection closed after
 * one answer.  A request is at most MON_HTTP_MAX_REQUEST bytes, at most
 * MON_HTTP_MAX_CLIENTS are served at once (further ones wait in the
 * listen backlog) and each connection is closed MON_HTTP_TIMEOUT_MS after
 * it was accepted, answered or not: a slow client cannot hold the server.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "monitor_http.h"

struct client {
	int fd;			/* -1: free */
	long long deadline;	/* ms, CLOCK_MONOTONIC */
	size_t in_len;
	char in[MON_HTTP_MAX_REQUEST];
	char *out;		/* NULL while reading */
	size_t out_len, out_off;
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/**
 * mon_http_route() - what to answer to a request read so far
 * @req: the bytes received
 * @len: their number
 *
 * Return: 0 while the header is incomplete, else the status: 200 for
 * GET /metrics (a query string is ignored), 404 for another path, 405 for
 * another method, 400 for a malformed request line.
 */
int mon_http_route(const char *req, size_t len)
{
	const char *end = NULL, *sp, *target;
	size_t i, tlen;

	for (i = 0; i + 1 < len; i++) {
		if (req[i] == '\n' && (req[i + 1] == '\n' ||
				       (req[i + 1] == '\r' && i + 2 < len &&
					req[i + 2] == '\n'))) {
			end = req + i;
			break;
		}
	}
	if (!end)
		return 0;
	sp = memchr(req, ' ', end - req);
	if (!sp || sp == req)
		return 400;
	target = sp + 1;
	sp = memchr(target, ' ', end - target);
	if (!sp || end - (sp + 1) < 7 || memcmp(sp + 1, "HTTP/1.", 7))
		return 400;
	if (target - req != 4 || memcmp(req, "GET ", 4))
		return 405;
	tlen = strcspn(target, "? ");
	if (tlen == 8 && !memcmp(target, "/metrics", 8))
		return 200;
	return 404;
}

/**
 * mon_http_listen() - a non-blocking listening socket on HOST:PORT
 * @hostport: "127.0.0.1:9464", "[::1]:9464" or ":9464" (every address)
 *
 * Return: the socket, or -1 (message printed).
 */
int mon_http_listen(const char *hostport)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *res, *ai;
	char host[256];
	const char *colon = strrchr(hostport, ':'), *h = hostport;
	size_t hlen;
	int fd = -1, one = 1, err;

	if (!colon || !colon[1]) {
		fprintf(stderr, "stellar-monitor: --listen wants HOST:PORT, not '%s'\n",
			hostport);
		return -1;
	}
	hlen = colon - hostport;
	if (hlen >= 2 && h[0] == '[' && h[hlen - 1] == ']') {
		h++;
		hlen -= 2;
	}
	if (hlen >= sizeof(host))
		hlen = sizeof(host) - 1;
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	err = getaddrinfo(hlen ? host : NULL, colon + 1, &hints, &res);
	if (err) {
		fprintf(stderr, "stellar-monitor: %s: %s\n", hostport,
			gai_strerror(err));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family,
			    ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (!bind(fd, ai->ai_addr, ai->ai_addrlen) && !listen(fd, 64))
			break;
		err = errno;
		close(fd);
		fd = -1;
		errno = err;
	}
	if (fd < 0)
		fprintf(stderr, "stellar-monitor: listen on %s: %s\n", hostport,
			strerror(errno));
	freeaddrinfo(res);
	return fd;
}

static void drop(struct client *c)
{
	close(c->fd);
	free(c->out);
	c->fd = -1;
	c->out = NULL;
}

static const char *reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	default: return "Bad Request";
	}
}

/* Put the answer with @status (and for 200 the metrics) into c->out. */
static void answer(struct client *c, int status, mon_http_body_fn body_fn,
		   void *arg)
{
	char *body = NULL, head[256];
	size_t blen = 0;
	int hlen;

	if (status == 200 && body_fn(&body, &blen, arg))
		status = 500;
	if (status != 200) {
		free(body);
		body = NULL;
		blen = 0;
	}
	hlen = snprintf(head, sizeof(head),
			"HTTP/1.0 %d %s\r\nContent-Type: %s\r\n"
			"Content-Length: %zu\r\nConnection: close\r\n\r\n",
			status, reason(status),
			status == 200 ? "text/plain; version=0.0.4; charset=utf-8"
				      : "text/plain", blen);
	c->out = malloc(hlen + blen);
	if (!c->out) {
		free(body);
		drop(c);
		return;
	}
	memcpy(c->out, head, hlen);
	if (blen)
		memcpy(c->out + hlen, body, blen);
	free(body);
	c->out_len = hlen + blen;
	c->out_off = 0;
}

static void on_readable(struct client *c, mon_http_body_fn body_fn, void *arg)
{
	ssize_t n = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, 0);
	int status;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		drop(c);
		return;
	}
	c->in_len += n;
	status = mon_http_route(c->in, c->in_len);
	if (!status && c->in_len == sizeof(c->in))
		status = 431;
	if (status)
		answer(c, status, body_fn, arg);
}

static void on_writable(struct client *c)
{
	ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
			 MSG_NOSIGNAL);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		drop(c);
		return;
	}
	c->out_off += n;
	if (c->out_off == c->out_len)
		drop(c);
}

static void accept_one(int lfd, struct client *clients, long long now)
{
	int i, fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return;
	for (i = 0; i < MON_HTTP_MAX_CLIENTS; i++) {
		if (clients[i].fd < 0) {
			clients[i].fd = fd;
			clients[i].in_len = 0;
			clients[i].deadline = now + MON_HTTP_TIMEOUT_MS;
			return;
		}
	}
	close(fd);
}

/* poll() timeout: the nearest deadline or tick, in ms from @now. */
static int next_timeout(const struct client *clients, long long next_tick,
			long long now)
{
	long long t = next_tick ? next_tick : now + 60000;
	int i;

	for (i = 0; i < MON_HTTP_MAX_CLIENTS; i++)
		if (clients[i].fd >= 0 && clients[i].deadline < t)
			t = clients[i].deadline;
	return t <= now ? 0 : (int)(t - now);
}

/**
 * mon_http_serve() - answer HTTP requests until *@stop
 * @lfd: listening socket (mon_http_listen())
 * @body_fn: makes the body of GET /metrics
 * @tick_fn: called every @tick_ms, or NULL
 * @tick_ms: its period
 * @arg: for both callbacks
 * @stop: set (by a signal handler) to return
 *
 * Return: 0 when stopped, -1 on a poll() error.
 */
int mon_http_serve(int lfd, mon_http_body_fn body_fn, mon_http_tick_fn tick_fn,
		   int tick_ms, void *arg, volatile int *stop)
{
	static struct client clients[MON_HTTP_MAX_CLIENTS];
	struct pollfd pfd[MON_HTTP_MAX_CLIENTS + 1];
	int map[MON_HTTP_MAX_CLIENTS + 1];
	long long now, next_tick = 0;
	int i, n, busy, ret = 0;

	for (i = 0; i < MON_HTTP_MAX_CLIENTS; i++)
		clients[i].fd = -1;
	if (tick_fn && tick_ms > 0)
		next_tick = now_ms() + tick_ms;
	while (!*stop) {
		now = now_ms();
		n = busy = 0;
		for (i = 0; i < MON_HTTP_MAX_CLIENTS; i++) {
			if (clients[i].fd < 0)
				continue;
			busy++;
			pfd[n].fd = clients[i].fd;
			pfd[n].events = clients[i].out ? POLLOUT : POLLIN;
			map[n++] = i;
		}
		if (busy < MON_HTTP_MAX_CLIENTS) {
			pfd[n].fd = lfd;
			pfd[n].events = POLLIN;
			map[n++] = -1;
		}
		if (poll(pfd, n, next_timeout(clients, next_tick, now)) < 0) {
			if (errno == EINTR)
				continue;
			ret = -1;
			break;
		}
		now = now_ms();
		for (i = 0; i < n; i++) {
			struct client *c = map[i] < 0 ? NULL : &clients[map[i]];

			if (!pfd[i].revents)
				continue;
			if (!c)
				accept_one(lfd, clients, now);
			else if (c->out)
				on_writable(c);
			else
				on_readable(c, body_fn, arg);
		}
		for (i = 0; i < MON_HTTP_MAX_CLIENTS; i++)
			if (clients[i].fd >= 0 && clients[i].deadline <= now)
				drop(&clients[i]);
		if (next_tick && now >= next_tick) {
			tick_fn(arg);
			next_tick = now + tick_ms;
		}
	}
	for (i = 0; i < MON_HTTP_MAX_CLIENTS; i++)
		if (clients[i].fd >= 0)
			drop(&clients[i]);
	return ret;
}
