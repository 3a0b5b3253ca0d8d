// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stellar-tool qps --device NAME [--qp N]: the QPs of a device with their
 * transport counters (packets, bytes, retransmits, NAKs, drops by reason).
 * The kernel sends each counter with its name, so counters added later
 * show up without a new tool.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "commands.h"
#include "format.h"
#include "info.h"
#include "nl.h"

/* What the reply callback needs: the filter, the output and its state. */
struct qps_output {
	const struct stellar_cmd_opts *opts;
	unsigned int shown;
};

static const char *const qp_type_names[] = {
	[0] = "SMI", [1] = "GSI", [2] = "RC", [3] = "UC", [4] = "UD",
	[9] = "XRC_INI", [10] = "XRC_TGT",
};

static const char *const qp_state_names[] = {
	"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
};

static const char *name_of(const char *const *names, size_t count,
			   unsigned int value)
{
	return value < count && names[value] ? names[value] : "?";
}

/* One STELLAR_COUNTER_ENTRY: print it; -EBADMSG if malformed. */
static int print_counter(struct nlattr *entry, bool json, bool first)
{
	struct nlattr *tb[STELLAR_COUNTER_MAX + 1];
	const char *name;
	uint64_t value;

	if (nla_parse_nested(tb, STELLAR_COUNTER_MAX, entry, NULL) < 0 ||
	    !tb[STELLAR_COUNTER_NAME] || !tb[STELLAR_COUNTER_VALUE] ||
	    nla_len(tb[STELLAR_COUNTER_VALUE]) != sizeof(value))
		return -EBADMSG;
	name = nla_get_string(tb[STELLAR_COUNTER_NAME]);
	value = nla_get_u64(tb[STELLAR_COUNTER_VALUE]);
	if (json) {
		fputs(first ? "" : ",", stdout);
		stellar_json_string(stdout, name);
		printf(":%" PRIu64, value);
	} else {
		printf("    %s: %" PRIu64 "\n", name, value);
	}
	return 0;
}

static int print_counters(struct nlattr *nest, bool json)
{
	struct nlattr *entry;
	bool first = true;
	int rem;

	nla_for_each_nested(entry, nest, rem) {
		if (nla_type(entry) != STELLAR_COUNTER_ENTRY)
			continue;
		if (print_counter(entry, json, first))
			return -EBADMSG;
		first = false;
	}
	return 0;
}

static void print_qp_head(const struct qps_output *out, uint32_t qpn,
			  const char *type, const char *state)
{
	if (!out->opts->json) {
		printf("qp %" PRIu32 ": type %s state %s\n", qpn, type, state);
		return;
	}
	printf("%s{\"qpn\":%" PRIu32 ",\"type\":", out->shown ? "," : "", qpn);
	stellar_json_string(stdout, type);
	fputs(",\"state\":", stdout);
	stellar_json_string(stdout, state);
	fputs(",\"counters\":{", stdout);
}

static int show_qp(struct nl_msg *msg, void *arg)
{
	struct qps_output *out = arg;
	struct nlattr *tb[STELLAR_ATTR_MAX + 1];
	uint32_t qpn;

	if (stellar_parse_attrs(msg, tb) || !tb[STELLAR_ATTR_QPN] ||
	    !tb[STELLAR_ATTR_QP_TYPE] || !tb[STELLAR_ATTR_QP_STATE] ||
	    !tb[STELLAR_ATTR_QP_COUNTERS])
		return -EBADMSG;
	qpn = nla_get_u32(tb[STELLAR_ATTR_QPN]);
	if (out->opts->has_qpn && qpn != out->opts->qpn)
		return 0;
	print_qp_head(out, qpn,
		      name_of(qp_type_names, 5,
			      nla_get_u8(tb[STELLAR_ATTR_QP_TYPE])),
		      name_of(qp_state_names, 7,
			      nla_get_u8(tb[STELLAR_ATTR_QP_STATE])));
	if (print_counters(tb[STELLAR_ATTR_QP_COUNTERS], out->opts->json))
		return -EBADMSG;
	if (out->opts->json)
		fputs("}}", stdout);
	out->shown++;
	return 0;
}

static int dump_qps(struct stellar_nl *nl, struct qps_output *out,
		    struct stellar_nl_status *status)
{
	struct nl_msg *msg = stellar_nl_new_request(nl, STELLAR_CMD_GET_QP,
						    NLM_F_DUMP);

	if (msg && nla_put_string(msg, STELLAR_ATTR_DEV_NAME,
				  out->opts->dev_name)) {
		nlmsg_free(msg);
		msg = NULL;
	}
	return stellar_nl_transact(nl, msg, show_qp, out, status);
}

static int run_qps(const struct stellar_cmd_opts *opts)
{
	struct qps_output out = { .opts = opts };
	struct stellar_nl_status status = { 0 };
	struct stellar_nl nl;
	int ret = STELLAR_EXIT_OK;

	if (!opts->dev_name) {
		fprintf(stderr, "stellar-tool: qps: --device NAME is required\n");
		return STELLAR_EXIT_USAGE;
	}
	if (stellar_nl_open(&nl))
		return STELLAR_EXIT_FAILURE;
	if (opts->json)
		fputc('[', stdout);
	if (dump_qps(&nl, &out, &status))
		ret = STELLAR_EXIT_FAILURE;
	if (opts->json)
		fputs("]\n", stdout);
	if (ret) {
		stellar_nl_report(&status, "qps", opts->dev_name);
	} else if (opts->has_qpn && !out.shown) {
		fprintf(stderr, "stellar-tool: qps: %s has no QP %" PRIu32 "\n",
			opts->dev_name, opts->qpn);
		ret = STELLAR_EXIT_FAILURE;
	}
	stellar_nl_close(&nl);
	return ret;
}

const struct stellar_command stellar_cmd_qps = {
	.name = "qps",
	.synopsis = "--device NAME [--qp N]",
	.summary = "Show the QPs of a device with their transport counters",
	.accepted = STELLAR_OPT_DEVICE | STELLAR_OPT_QPN,
	.run = run_qps,
};
