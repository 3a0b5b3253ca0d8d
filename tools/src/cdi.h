/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stellar-tool: Container Device Interface (CDI) specs of stellar devices.
 * Reads sysfs only (under a root prefix the unit tests point at a fake
 * tree), so the unit tests link it on its own.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_TOOL_CDI_H
#define STELLAR_TOOL_CDI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "info.h"

/* CDI kind of the spec: devices are "stellar.dev/rdma=NAME". */
#define STELLAR_CDI_KIND "stellar.dev/rdma"
/* The lowest CDI version with every field the spec uses. */
#define STELLAR_CDI_VERSION "0.3.0"
/* Name of the CDI device that holds every stellar device. */
#define STELLAR_CDI_ALL "all"
#define STELLAR_CDI_MAX_DEVS 64

/* A character device node, as the container sees it. */
struct stellar_cdi_node {
	char path[64];
	unsigned int major;
	unsigned int minor;
};

struct stellar_cdi_dev {
	char name[STELLAR_NAME_LEN];
	struct stellar_cdi_node uverbs;
};

struct stellar_cdi_spec {
	struct stellar_cdi_dev devs[STELLAR_CDI_MAX_DEVS];
	size_t count;
	bool has_rdma_cm;
	struct stellar_cdi_node rdma_cm;
};

int stellar_cdi_collect(const char *root, const char *only,
			struct stellar_cdi_spec *spec, FILE *err);
void stellar_cdi_write(FILE *fp, const struct stellar_cdi_spec *spec);

#endif /* STELLAR_TOOL_CDI_H */
