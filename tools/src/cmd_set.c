// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stellar-tool set --device NAME SETTING...: change a device's settings.
 * The kernel checks the ranges and says which value it refused.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <stdio.h>

#include <netlink/attr.h>
#include <netlink/msg.h>

#include "commands.h"
#include "nl.h"

static struct nl_msg *build_request(struct stellar_nl *nl,
				    const struct stellar_cmd_opts *opts)
{
	struct nl_msg *msg = stellar_nl_new_request(nl, STELLAR_CMD_SET_DEV, 0);
	int i;

	if (!msg)
		return NULL;
	if (nla_put_string(msg, STELLAR_ATTR_DEV_NAME, opts->dev_name))
		goto fail;
	for (i = 0; i < STELLAR_SETTING_COUNT; i++) {
		const struct stellar_setting_desc *desc =
			&stellar_setting_descs[i];
		uint64_t value = opts->settings.value[i];

		if (!opts->settings.present[i])
			continue;
		if (desc->wide ? nla_put_u64(msg, desc->attr, value) :
				 nla_put_u32(msg, desc->attr, (uint32_t)value))
			goto fail;
	}
	return msg;
fail:
	nlmsg_free(msg);
	return NULL;
}

static int check_args(const struct stellar_cmd_opts *opts)
{
	if (!opts->dev_name) {
		fprintf(stderr, "stellar-tool: set: --device NAME is required\n");
		return -1;
	}
	if (!stellar_settings_given(&opts->settings)) {
		fprintf(stderr,
			"stellar-tool: set: nothing to change; give at least one setting\n");
		return -1;
	}
	return 0;
}

static int run_set(const struct stellar_cmd_opts *opts)
{
	struct stellar_nl_status status;
	struct stellar_nl nl;
	struct nl_msg *msg;
	int ret = STELLAR_EXIT_OK;

	if (check_args(opts))
		return STELLAR_EXIT_USAGE;
	if (stellar_nl_open(&nl))
		return STELLAR_EXIT_FAILURE;
	msg = build_request(&nl, opts);
	if (!msg) {
		fprintf(stderr, "stellar-tool: set: out of memory\n");
		ret = STELLAR_EXIT_FAILURE;
	} else if (stellar_nl_transact(&nl, msg, NULL, NULL, &status)) {
		stellar_nl_report(&status, "set", opts->dev_name);
		ret = STELLAR_EXIT_FAILURE;
	} else {
		stellar_nl_report(&status, "set", opts->dev_name);
	}
	stellar_nl_close(&nl);
	return ret;
}

const struct stellar_command stellar_cmd_set = {
	.name = "set",
	.synopsis = "--device NAME SETTING...",
	.summary = "Change settings of one device (needs CAP_NET_ADMIN)",
	.accepted = STELLAR_OPT_DEVICE | STELLAR_OPT_SETTINGS,
	.run = run_set,
};
