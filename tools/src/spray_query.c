// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stellar-tool: STELLAR_CMD_GET_SPRAY and STELLAR_CMD_SET_QP requests.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <errno.h>
#include <string.h>

#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/socket.h>

#include "nl.h"
#include "spray.h"

/* A reply holds up to 64 paths: more than one page. */
#define SPRAY_RECV_BUF	65536

static int decode_reply(struct nl_msg *msg, void *arg)
{
	return stellar_decode_spray(msg, arg) ? -EBADMSG : 0;
}

/**
 * stellar_query_spray() - read one device's spray statistics
 * @nl: open connection
 * @dev_name: its ib_device name
 * @info: filled on success
 * @status: outcome (ENODEV for an unknown device)
 *
 * Return: 0, or -1.
 */
int stellar_query_spray(struct stellar_nl *nl, const char *dev_name,
			struct stellar_spray_info *info,
			struct stellar_nl_status *status)
{
	struct nl_msg *msg = stellar_nl_new_request(nl, STELLAR_CMD_GET_SPRAY,
						    0);

	nl_socket_set_msg_buf_size(nl->sock, SPRAY_RECV_BUF);
	if (msg && nla_put_string(msg, STELLAR_ATTR_DEV_NAME, dev_name)) {
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

/**
 * stellar_set_qp_spray() - set the paths of one QP (STELLAR_CMD_SET_QP)
 * @nl: open connection
 * @dev_name: the QP's device
 * @qpn: the QP
 * @spray_paths: paths from its next move to RTS on
 * @status: outcome
 *
 * Return: 0, or -1.
 */
int stellar_set_qp_spray(struct stellar_nl *nl, const char *dev_name,
			 uint32_t qpn, uint32_t spray_paths,
			 struct stellar_nl_status *status)
{
	struct nl_msg *msg = stellar_nl_new_request(nl, STELLAR_CMD_SET_QP, 0);

	if (msg && (nla_put_string(msg, STELLAR_ATTR_DEV_NAME, dev_name) ||
		    nla_put_u32(msg, STELLAR_ATTR_QPN, qpn) ||
		    nla_put_u32(msg, STELLAR_ATTR_SPRAY_PATHS, spray_paths))) {
		nlmsg_free(msg);
		msg = NULL;
	}
	return stellar_nl_transact(nl, msg, NULL, NULL, status);
}
