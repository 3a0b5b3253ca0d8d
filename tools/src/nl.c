// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stellar-tool: generic netlink requests to the "stellar" family, with
 * the kernel's extended ack messages captured for the error report.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include <stellar-netlink.h>

#include "info.h"
#include "nl.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

static void set_sockopt(struct nl_sock *sock, int option)
{
	int one = 1;

	/* Old kernels lack these; errors then simply carry no message. */
	setsockopt(nl_socket_get_fd(sock), SOL_NETLINK, option, &one,
		   sizeof(one));
}

/**
 * stellar_nl_open() - connect and resolve the "stellar" family
 * @nl: filled on success
 *
 * Prints its own error message.
 *
 * Return: 0, or -1.
 */
int stellar_nl_open(struct stellar_nl *nl)
{
	int ret;

	nl->sock = nl_socket_alloc();
	if (!nl->sock) {
		fprintf(stderr, "stellar-tool: out of memory\n");
		return -1;
	}
	ret = genl_connect(nl->sock);
	if (ret < 0) {
		fprintf(stderr,
			"stellar-tool: cannot open a generic netlink socket: %s\n",
			nl_geterror(ret));
		goto fail;
	}
	set_sockopt(nl->sock, NETLINK_EXT_ACK);
	set_sockopt(nl->sock, NETLINK_CAP_ACK);
	nl->family = genl_ctrl_resolve(nl->sock, STELLAR_GENL_NAME);
	if (nl->family == -NLE_OBJ_NOTFOUND) {
		fprintf(stderr,
			"stellar-tool: the virtio_stellar kernel module is not loaded (generic netlink family '%s' not found)\n",
			STELLAR_GENL_NAME);
		goto fail;
	}
	if (nl->family < 0) {
		fprintf(stderr,
			"stellar-tool: cannot look up generic netlink family '%s': %s\n",
			STELLAR_GENL_NAME, nl_geterror(nl->family));
		goto fail;
	}
	return 0;
fail:
	nl_socket_free(nl->sock);
	nl->sock = NULL;
	return -1;
}

void stellar_nl_close(struct stellar_nl *nl)
{
	nl_socket_free(nl->sock);
	nl->sock = NULL;
}

/**
 * stellar_nl_new_request() - start a request to the "stellar" family
 * @nl: open connection
 * @cmd: STELLAR_CMD_*
 * @flags: extra netlink flags, e.g. NLM_F_DUMP
 *
 * Return: the message for the caller to add attributes to, or NULL.
 */
struct nl_msg *stellar_nl_new_request(struct stellar_nl *nl, uint8_t cmd,
				      int flags)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family, 0, flags,
			 cmd, STELLAR_GENL_VERSION)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

/* Names the attribute at byte @offset of our @request, as the kernel saw it. */
static void note_bad_attr(const struct nlmsghdr *request, uint32_t offset,
			  struct stellar_nl_status *status)
{
	const struct nlattr *attr;

	if (!request || offset < NLMSG_HDRLEN + GENL_HDRLEN ||
	    (uint64_t)offset + NLA_HDRLEN > request->nlmsg_len)
		return;
	attr = (const struct nlattr *)((const char *)request + offset);
	if ((uint64_t)offset + attr->nla_len > request->nlmsg_len)
		return;
	status->bad_attr = nla_type(attr);
	if (nla_len(attr) == sizeof(uint32_t))
		status->bad_value = nla_get_u32((struct nlattr *)attr);
}

/* The accepted range from NLMSGERR_ATTR_POLICY, when it has one. */
static void note_range(struct nlattr *policy, struct stellar_nl_status *status)
{
	struct nlattr *tb[NL_POLICY_TYPE_ATTR_MAX + 1];
	struct nlattr *min, *max;

	if (nla_parse_nested(tb, NL_POLICY_TYPE_ATTR_MAX, policy, NULL) < 0)
		return;
	min = tb[NL_POLICY_TYPE_ATTR_MIN_VALUE_U];
	max = tb[NL_POLICY_TYPE_ATTR_MAX_VALUE_U];
	if (!min || !max || nla_len(min) != sizeof(uint64_t) ||
	    nla_len(max) != sizeof(uint64_t))
		return;
	status->range_min = nla_get_u64(min);
	status->range_max = nla_get_u64(max);
	status->has_range = true;
}

/*
 * Read the extended ack TLVs of an NLMSG_ERROR (or NLMSG_DONE) message:
 * message, offending attribute and its policy.  @payload_off is where
 * the TLVs may start within the payload.
 */
static void copy_extack(struct nlmsghdr *nlh, size_t payload_off,
			const struct nlmsghdr *request,
			struct stellar_nl_status *status)
{
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	int payload_len = nlmsg_datalen(nlh);
	size_t off = NLMSG_ALIGN(payload_off);

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS) || off >= (size_t)payload_len)
		return;
	if (nla_parse(tb, NLMSGERR_ATTR_MAX,
		      (struct nlattr *)((char *)nlmsg_data(nlh) + off),
		      payload_len - (int)off, NULL) < 0)
		return;
	if (tb[NLMSGERR_ATTR_MSG] && nla_len(tb[NLMSGERR_ATTR_MSG]) > 0)
		nla_strlcpy(status->extack, tb[NLMSGERR_ATTR_MSG],
			    sizeof(status->extack));
	if (tb[NLMSGERR_ATTR_OFFS] &&
	    nla_len(tb[NLMSGERR_ATTR_OFFS]) == sizeof(uint32_t))
		note_bad_attr(request, nla_get_u32(tb[NLMSGERR_ATTR_OFFS]),
			      status);
	if (tb[NLMSGERR_ATTR_POLICY])
		note_range(tb[NLMSGERR_ATTR_POLICY], status);
}

/* TLVs follow the nlmsgerr and, unless capped, the echoed request. */
static void copy_error_extack(struct nlmsghdr *nlh,
			      const struct nlmsghdr *request,
			      struct stellar_nl_status *status)
{
	struct nlmsgerr *err = nlmsg_data(nlh);
	size_t off = sizeof(*err);

	if ((size_t)nlmsg_datalen(nlh) < sizeof(*err))
		return;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += err->msg.nlmsg_len - sizeof(err->msg);
	copy_extack(nlh, off, request, status);
}

struct reply_ctx {
	stellar_reply_fn on_reply;
	void *arg;
	struct stellar_nl_status *status;
	const struct nlmsghdr *request;
};

static int on_error(struct sockaddr_nl *who, struct nlmsgerr *err, void *arg)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)err - NLMSG_HDRLEN);
	struct reply_ctx *ctx = arg;

	(void)who;
	ctx->status->error = -err->error;
	copy_error_extack(nlh, ctx->request, ctx->status);
	ctx->status->done = true;
	return NL_STOP;
}

static int on_ack(struct nl_msg *msg, void *arg)
{
	struct reply_ctx *ctx = arg;

	/* A successful request may still carry a warning. */
	copy_error_extack(nlmsg_hdr(msg), ctx->request, ctx->status);
	ctx->status->done = true;
	return NL_STOP;
}

/* End of a dump; since Linux 4.x its payload is the dump's error code. */
static int on_finish(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct reply_ctx *ctx = arg;
	int error;

	if (nlmsg_datalen(nlh) >= (int)sizeof(error)) {
		memcpy(&error, nlmsg_data(nlh), sizeof(error));
		if (error < 0) {
			ctx->status->error = -error;
			copy_extack(nlh, sizeof(error), ctx->request,
				    ctx->status);
		}
	}
	ctx->status->done = true;
	return NL_STOP;
}

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct reply_ctx *ctx = arg;
	int ret;

	if (!ctx->on_reply)
		return NL_OK;
	ret = ctx->on_reply(msg, ctx->arg);
	if (ret < 0) {
		ctx->status->error = -ret;
		ctx->status->reply_error = true;
		ctx->status->done = true;
		return NL_STOP;
	}
	return NL_OK;
}

static struct nl_cb *make_callbacks(struct reply_ctx *ctx)
{
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);

	if (!cb)
		return NULL;
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, ctx);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, ctx);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_finish, ctx);
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, ctx);
	return cb;
}

/**
 * stellar_nl_transact() - send a request and read replies until it ends
 * @nl: open connection
 * @msg: the request, freed here; NULL (a failed allocation) fails with
 *	 ENOMEM, so callers can pass a request straight from building it
 * @on_reply: called for each reply message, may be NULL
 * @arg: passed to @on_reply
 * @status: zeroed, then filled with the outcome
 *
 * A request ends with the kernel's ACK, the NLMSG_DONE of a dump, an
 * error, or @on_reply failing.
 *
 * Return: 0, or -1 with @status saying why.
 */
int stellar_nl_transact(struct stellar_nl *nl, struct nl_msg *msg,
			stellar_reply_fn on_reply, void *arg,
			struct stellar_nl_status *status)
{
	struct reply_ctx ctx = { on_reply, arg, status, NULL };
	struct nl_cb *cb;
	int ret;

	memset(status, 0, sizeof(*status));
	if (!msg) {
		status->error = ENOMEM;
		return -1;
	}
	ctx.request = nlmsg_hdr(msg);
	cb = make_callbacks(&ctx);
	if (!cb) {
		nlmsg_free(msg);
		status->error = ENOMEM;
		return -1;
	}
	ret = nl_send_auto(nl->sock, msg);
	while (ret >= 0 && !status->done)
		ret = nl_recvmsgs(nl->sock, cb);
	nl_cb_put(cb);
	nlmsg_free(msg);	/* kept for locating a refused attribute */
	if (status->error)
		return -1;
	if (ret < 0) {
		status->nl_error = -ret;
		return -1;
	}
	return 0;
}

/* A setting the kernel refused: say which, and what it would take. */
static bool report_bad_setting(const struct stellar_nl_status *status,
			       const char *action)
{
	const struct stellar_setting_desc *desc =
		stellar_setting_by_attr(status->bad_attr);

	if (!status->bad_attr || !desc)
		return false;
	fprintf(stderr, "stellar-tool: %s: --%s %" PRIu32 " refused: ", action,
		desc->option, status->bad_value);
	if (status->has_range)
		fprintf(stderr, "the module accepts %" PRIu64 " to %" PRIu64,
			status->range_min, status->range_max);
	else
		fputs(strerror(status->error), stderr);
	if (status->extack[0])
		fprintf(stderr, " (kernel: %s)", status->extack);
	fputc('\n', stderr);
	return true;
}

static void report_errno(const struct stellar_nl_status *status,
			 const char *action, const char *dev_name)
{
	int error = status->error;

	if (error == ENODEV) {
		fprintf(stderr, "stellar-tool: no such stellar device '%s'\n",
			dev_name ? dev_name : "");
	} else if (error == EPERM || error == EACCES) {
		fprintf(stderr,
			"stellar-tool: %s: permission denied (CAP_NET_ADMIN is required; try as root)\n",
			action);
	} else if (report_bad_setting(status, action)) {
		return;
	} else if (error == EOPNOTSUPP) {
		fprintf(stderr,
			"stellar-tool: %s: not supported by the loaded virtio_stellar module (is it older than this tool?)\n",
			action);
	} else {
		fprintf(stderr, "stellar-tool: %s failed: %s", action,
			strerror(error));
		if (status->extack[0])
			fprintf(stderr, " (kernel: %s)", status->extack);
		fputc('\n', stderr);
	}
}

/**
 * stellar_nl_report() - print why a request failed, or its warning
 * @status: from stellar_nl_transact()
 * @action: the command, for the message
 * @dev_name: the device asked for, or NULL
 */
void stellar_nl_report(const struct stellar_nl_status *status,
		       const char *action, const char *dev_name)
{
	if (status->reply_error) {
		fprintf(stderr,
			"stellar-tool: %s: cannot use the kernel's reply: %s\n",
			action, strerror(status->error));
		return;
	}
	if (status->error) {
		report_errno(status, action, dev_name);
		return;
	}
	if (status->nl_error) {
		fprintf(stderr, "stellar-tool: %s failed: %s\n", action,
			nl_geterror(status->nl_error));
		return;
	}
	if (status->extack[0])
		fprintf(stderr, "stellar-tool: %s: warning from kernel: %s\n",
			action, status->extack);
}
