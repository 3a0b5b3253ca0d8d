// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stellar-tool: STELLAR_CMD_GET_DEV (one device or all) and
 * STELLAR_CMD_GET_PARAMS.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/attr.h>
#include <netlink/msg.h>

#include "query.h"

static int decode_one_dev(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[STELLAR_ATTR_MAX + 1];

	if (stellar_parse_attrs(msg, tb) || stellar_decode_dev(tb, arg))
		return -EBADMSG;
	return 0;
}

static int append_dev(struct nl_msg *msg, void *arg)
{
	struct stellar_dev_list *list = arg;
	struct stellar_dev_info *grown;

	grown = realloc(list->devs, (list->count + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	list->devs = grown;
	if (decode_one_dev(msg, &grown[list->count]))
		return -EBADMSG;
	list->count++;
	return 0;
}

static int decode_params(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[STELLAR_ATTR_MAX + 1];
	int ret = stellar_parse_attrs(msg, tb);

	return ret ? -EBADMSG : stellar_decode_settings(tb, arg);
}

/**
 * stellar_query_dev() - read one device
 * @nl: open connection
 * @dev_name: its ib_device name
 * @info: filled on success
 * @status: outcome (ENODEV for an unknown device)
 *
 * Return: 0, or -1.
 */
int stellar_query_dev(struct stellar_nl *nl, const char *dev_name,
		      struct stellar_dev_info *info,
		      struct stellar_nl_status *status)
{
	struct nl_msg *msg = stellar_nl_new_request(nl, STELLAR_CMD_GET_DEV, 0);
	int ret;

	if (msg && nla_put_string(msg, STELLAR_ATTR_DEV_NAME, dev_name)) {
		nlmsg_free(msg);
		msg = NULL;
	}
	info->dev_name[0] = '\0';
	ret = stellar_nl_transact(nl, msg, decode_one_dev, info, status);
	if (!ret && !info->dev_name[0]) {
		/* ACK without a reply: a kernel bug, but not a crash here. */
		status->error = EBADMSG;
		status->reply_error = true;
		return -1;
	}
	return ret;
}

/**
 * stellar_query_all_devs() - dump every device
 * @nl: open connection
 * @list: filled with the devices, in kernel order; free with
 *        stellar_dev_list_free() whatever the outcome
 * @status: outcome
 *
 * Return: 0, or -1.
 */
int stellar_query_all_devs(struct stellar_nl *nl,
			   struct stellar_dev_list *list,
			   struct stellar_nl_status *status)
{
	list->devs = NULL;
	list->count = 0;
	return stellar_nl_transact(nl,
			    stellar_nl_new_request(nl, STELLAR_CMD_GET_DEV,
						   NLM_F_DUMP),
			    append_dev, list, status);
}

void stellar_dev_list_free(struct stellar_dev_list *list)
{
	free(list->devs);
	list->devs = NULL;
	list->count = 0;
}

/**
 * stellar_query_params() - read the module-wide defaults
 * @nl: open connection
 * @settings: filled on success
 * @status: outcome
 *
 * Return: 0, or -1.
 */
int stellar_query_params(struct stellar_nl *nl,
			 struct stellar_settings *settings,
			 struct stellar_nl_status *status)
{
	memset(settings, 0, sizeof(*settings));
	return stellar_nl_transact(nl,
			    stellar_nl_new_request(nl, STELLAR_CMD_GET_PARAMS,
						   0),
			    decode_params, settings, status);
}
