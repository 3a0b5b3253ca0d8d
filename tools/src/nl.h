/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stellar-tool: talking to the "stellar" generic netlink family.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_TOOL_NL_H
#define STELLAR_TOOL_NL_H

#include <stdbool.h>
#include <stdint.h>

struct nl_msg;
struct nl_sock;

struct stellar_nl {
	struct nl_sock *sock;
	int family;		/* resolved id of "stellar" */
};

/* Outcome of one request, for stellar_nl_report(). */
struct stellar_nl_status {
	int error;		/* positive errno from the kernel or decoding */
	int nl_error;		/* libnl error (NLE_*), when error is 0 */
	char extack[256];	/* kernel's extended ack message, or "" */
	int bad_attr;		/* STELLAR_ATTR_* the kernel refused, or 0 */
	uint32_t bad_value;	/* its value in our request, when a u32 */
	bool has_range;		/* the kernel said which values it takes */
	uint64_t range_min;
	uint64_t range_max;
	bool reply_error;	/* error is ours: a reply we could not use */
	bool done;		/* final ACK, DONE or error seen */
};

/* Called for each reply message; return 0 or a negative errno. */
typedef int (*stellar_reply_fn)(struct nl_msg *msg, void *arg);

int stellar_nl_open(struct stellar_nl *nl);
void stellar_nl_close(struct stellar_nl *nl);
struct nl_msg *stellar_nl_new_request(struct stellar_nl *nl, uint8_t cmd,
				      int flags);
int stellar_nl_transact(struct stellar_nl *nl, struct nl_msg *msg,
			stellar_reply_fn on_reply, void *arg,
			struct stellar_nl_status *status);
void stellar_nl_report(const struct stellar_nl_status *status,
		       const char *action, const char *dev_name);

#endif /* STELLAR_TOOL_NL_H */
