// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stellar-tool: the STELLAR_CMD_GET_LATENCY request.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <errno.h>
#include <string.h>

#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/socket.h>

#include "latency.h"
#include "nl.h"

/* A reply holds 4 histograms and up to 64 paths' microbursts. */
#define LAT_RECV_BUF	65536

static int decode_reply(struct nl_msg *msg, void *arg)
{
	return stellar_decode_latency(msg, arg) ? -EBADMSG : 0;
}

/**
 * stellar_query_latency() - read a device's or a QP's latency histograms
 * @nl: open connection
 * @dev_name: the device
 * @qpn: a QP of it, or NULL for the device (a QP needs CAP_NET_ADMIN)
 * @info: filled on success
 * @status: outcome (ENODEV, ENOENT for an unknown QP, EPERM)
 *
 * Return: 0, or -1.
 */
int stellar_query_latency(struct stellar_nl *nl, const char *dev_name,
			  const uint32_t *qpn, struct stellar_lat_info *info,
			  struct stellar_nl_status *status)
{
	struct nl_msg *msg = stellar_nl_new_request(nl, STELLAR_CMD_GET_LATENCY,
						    0);

	nl_socket_set_msg_buf_size(nl->sock, LAT_RECV_BUF);
	if (msg && (nla_put_string(msg, STELLAR_ATTR_DEV_NAME, dev_name) ||
		    (qpn && nla_put_u32(msg, STELLAR_ATTR_QPN, *qpn)))) {
		nlmsg_free(msg);
		msg = NULL;
	}
	memset(info, 0, sizeof(*info));
	if (stellar_nl_transact(nl, msg, decode_reply, info, status))
		return -1;
	if (!info->dev_name[0]) {
		status->error = EBADMSG;
		status->reply_error = true;
		return -1;
	}
	return 0;
}
