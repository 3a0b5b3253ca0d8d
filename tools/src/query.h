/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stellar-tool: the read requests shared by several commands.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_TOOL_QUERY_H
#define STELLAR_TOOL_QUERY_H

#include <stddef.h>

#include "info.h"
#include "nl.h"

struct stellar_dev_list {
	struct stellar_dev_info *devs;
	size_t count;
};

int stellar_query_dev(struct stellar_nl *nl, const char *dev_name,
		      struct stellar_dev_info *info,
		      struct stellar_nl_status *status);
int stellar_query_all_devs(struct stellar_nl *nl,
			   struct stellar_dev_list *list,
			   struct stellar_nl_status *status);
void stellar_dev_list_free(struct stellar_dev_list *list);
int stellar_query_params(struct stellar_nl *nl,
			 struct stellar_settings *settings,
			 struct stellar_nl_status *status);

#endif /* STELLAR_TOOL_QUERY_H */
