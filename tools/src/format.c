// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stellar-tool: text and JSON output.
 *
 * Text output is "key: value" lines, nested blocks indented by two
 * spaces, so that it reads well and greps well.  JSON output is one
 * document per run, keys as in the text output; values the kernel did
 * not send are left out of both.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <inttypes.h>

#include "format.h"

/**
 * stellar_format_port_state() - name of an IB port state
 * @state: enum ib_port_state value
 * @buf: room for "UNKNOWN(255)" when the value has no name
 * @len: size of @buf
 *
 * Return: a static name, or @buf holding "UNKNOWN(<n>)".
 */
const char *stellar_format_port_state(unsigned int state, char *buf,
				      size_t len)
{
	const char *name = stellar_port_state_name(state);

	if (name)
		return name;
	snprintf(buf, len, "UNKNOWN(%u)", state);
	return buf;
}

/* Return: the counter's name, or @buf holding "stat_<n>" for new ones. */
const char *stellar_format_stat_name(unsigned int stat, char *buf,
				     size_t len)
{
	const char *name = stellar_stat_name(stat);

	if (name)
		return name;
	snprintf(buf, len, "stat_%u", stat);
	return buf;
}

/* Write @text as a JSON string literal, quotes included. */
void stellar_json_string(FILE *fp, const char *text)
{
	const unsigned char *p;

	fputc('"', fp);
	for (p = (const unsigned char *)text; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(fp, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(fp, "\\u%04x", *p);
		else
			fputc(*p, fp);
	}
	fputc('"', fp);
}

/* Emits "key": or key: for one member, handling the JSON comma. */
static void print_key(FILE *fp, bool json, const char *indent,
		      const char *key, bool *first)
{
	if (json) {
		if (!*first)
			fputc(',', fp);
		stellar_json_string(fp, key);
		fputc(':', fp);
	} else {
		fprintf(fp, "%s%s: ", indent, key);
	}
	*first = false;
}

static void end_value(FILE *fp, bool json)
{
	if (!json)
		fputc('\n', fp);
}

static void print_u64(FILE *fp, bool json, const char *indent,
		      const char *key, uint64_t value, bool *first)
{
	print_key(fp, json, indent, key, first);
	fprintf(fp, "%" PRIu64, value);
	end_value(fp, json);
}

static void print_str(FILE *fp, bool json, const char *indent,
		      const char *key, const char *value, bool *first)
{
	print_key(fp, json, indent, key, first);
	if (json)
		stellar_json_string(fp, value);
	else
		fputs(value, fp);
	end_value(fp, json);
}

/**
 * stellar_print_settings() - show the settings the kernel reported
 * @fp: output
 * @settings: values; those not present are skipped
 * @json: a JSON object instead of lines
 * @indent: prefix of each text line
 */
void stellar_print_settings(FILE *fp, const struct stellar_settings *settings,
			    bool json, const char *indent)
{
	bool first = true;
	int i;

	if (json)
		fputc('{', fp);
	for (i = 0; i < STELLAR_SETTING_COUNT; i++)
		if (settings->present[i])
			print_u64(fp, json, indent,
				  stellar_setting_descs[i].name,
				  settings->value[i], &first);
	if (json)
		fputc('}', fp);
}

/**
 * stellar_print_counters() - show counters, one "name: value" per line
 * @fp: output
 * @counters: values, in kernel order
 * @json: a JSON object instead of lines
 * @indent: prefix of each text line
 */
void stellar_print_counters(FILE *fp, const struct stellar_counters *counters,
			    bool json, const char *indent)
{
	bool first = true;
	unsigned int i;

	if (json)
		fputc('{', fp);
	for (i = 0; i < counters->count; i++) {
		const struct stellar_counter *entry = &counters->entry[i];
		char buf[32];

		print_u64(fp, json, indent,
			  stellar_format_stat_name(entry->type, buf,
						   sizeof(buf)),
			  entry->value, &first);
	}
	if (json)
		fputc('}', fp);
}

static bool settings_present(const struct stellar_settings *settings)
{
	int i;

	for (i = 0; i < STELLAR_SETTING_COUNT; i++)
		if (settings->present[i])
			return true;
	return false;
}

/* Key of a nested block: an object member, or a "key:" line. */
static void print_section(FILE *fp, bool json, const char *key, bool *first)
{
	if (json)
		print_key(fp, json, "", key, first);
	else
		fprintf(fp, "  %s:\n", key);
}

static void print_netdev(FILE *fp, const struct stellar_dev_info *info,
			 bool json, bool *first)
{
	if (json) {
		if (stellar_has(info, STELLAR_ATTR_NETDEV_NAME))
			print_str(fp, json, "", "netdev", info->netdev_name,
				  first);
		if (stellar_has(info, STELLAR_ATTR_NETDEV_IFINDEX))
			print_u64(fp, json, "", "netdev_ifindex",
				  info->netdev_ifindex, first);
		return;
	}
	if (!stellar_has(info, STELLAR_ATTR_NETDEV_NAME))
		return;
	fprintf(fp, "  netdev: %s", info->netdev_name);
	if (stellar_has(info, STELLAR_ATTR_NETDEV_IFINDEX))
		fprintf(fp, " (ifindex %" PRIu32 ")", info->netdev_ifindex);
	fputc('\n', fp);
}

static void print_port(FILE *fp, const struct stellar_dev_info *info,
		       bool json, bool *first)
{
	char buf[32];

	if (stellar_has(info, STELLAR_ATTR_PORT_STATE))
		print_str(fp, json, "  ", "port_state",
			  stellar_format_port_state(info->port_state, buf,
						    sizeof(buf)),
			  first);
	if (stellar_has(info, STELLAR_ATTR_MTU))
		print_u64(fp, json, "  ", "mtu", info->mtu, first);
}

static void print_header(FILE *fp, const struct stellar_dev_info *info,
			 bool json, bool *first)
{
	if (json) {
		print_str(fp, json, "", "name", info->dev_name, first);
		if (stellar_has(info, STELLAR_ATTR_DEV_INDEX))
			print_u64(fp, json, "", "index", info->dev_index,
				  first);
		return;
	}
	fputs(info->dev_name, fp);
	if (stellar_has(info, STELLAR_ATTR_DEV_INDEX))
		fprintf(fp, " (index %" PRIu32 ")", info->dev_index);
	fputs(":\n", fp);
}

/**
 * stellar_print_dev() - show one device: identity, port, settings, counters
 * @fp: output
 * @info: the decoded STELLAR_CMD_GET_DEV reply
 * @json: one JSON object instead of a text block
 */
void stellar_print_dev(FILE *fp, const struct stellar_dev_info *info,
		       bool json)
{
	bool first = true;

	if (json)
		fputc('{', fp);
	print_header(fp, info, json, &first);
	print_netdev(fp, info, json, &first);
	print_port(fp, info, json, &first);
	if (settings_present(&info->settings)) {
		print_section(fp, json, "settings", &first);
		stellar_print_settings(fp, &info->settings, json, "    ");
	}
	if (stellar_has(info, STELLAR_ATTR_STATS)) {
		print_section(fp, json, "counters", &first);
		stellar_print_counters(fp, &info->counters, json, "    ");
	}
	if (json)
		fputc('}', fp);
}

/**
 * stellar_print_dev_list() - show devices, blank line between text blocks
 * @fp: output
 * @devs: the devices
 * @count: how many
 * @json: a JSON array instead of text blocks
 */
void stellar_print_dev_list(FILE *fp, const struct stellar_dev_info *devs,
			    size_t count, bool json)
{
	size_t i;

	if (json)
		fputc('[', fp);
	for (i = 0; i < count; i++) {
		if (i)
			fputs(json ? "," : "\n", fp);
		stellar_print_dev(fp, &devs[i], json);
	}
	if (json)
		fputs("]\n", fp);
}
