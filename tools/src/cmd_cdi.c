// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stellar-tool cdi: write a Container Device Interface spec of the stellar
 * devices, so that "podman run --device stellar.dev/rdma=stellar0" (or
 * containerd, CRI-O) gives a container the device's nodes.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cdi.h"
#include "commands.h"

#define STELLAR_CDI_DEFAULT_OUTPUT "/etc/cdi/stellar.json"

/*
 * Write the spec to @path through a temporary file renamed into place,
 * so a runtime watching the directory never reads half a spec.
 */
static int write_spec_file(const char *path,
			   const struct stellar_cdi_spec *spec)
{
	char tmp[4096];
	FILE *fp;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp)) {
		fprintf(stderr, "stellar-tool: cdi: path too long\n");
		return -1;
	}
	if (!strcmp(path, STELLAR_CDI_DEFAULT_OUTPUT) &&
	    mkdir("/etc/cdi", 0755) && errno != EEXIST) {
		fprintf(stderr, "stellar-tool: cdi: /etc/cdi: %s\n",
			strerror(errno));
		return -1;
	}
	fp = fopen(tmp, "we");
	if (!fp) {
		fprintf(stderr, "stellar-tool: cdi: %s: %s\n", tmp,
			strerror(errno));
		return -1;
	}
	stellar_cdi_write(fp, spec);
	if (fchmod(fileno(fp), 0644) || fflush(fp) || ferror(fp) ||
	    fclose(fp)) {
		fprintf(stderr, "stellar-tool: cdi: writing %s failed\n", tmp);
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, path)) {
		fprintf(stderr, "stellar-tool: cdi: %s: %s\n", path,
			strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

static int run_cdi(const struct stellar_cmd_opts *opts)
{
	const char *path = opts->output ? opts->output :
					  STELLAR_CDI_DEFAULT_OUTPUT;
	static struct stellar_cdi_spec spec;
	size_t i;

	if (stellar_cdi_collect("", opts->dev_name, &spec, stderr))
		return STELLAR_EXIT_FAILURE;
	if (!strcmp(path, "-")) {
		stellar_cdi_write(stdout, &spec);
		return STELLAR_EXIT_OK;
	}
	if (write_spec_file(path, &spec))
		return STELLAR_EXIT_FAILURE;
	printf("%s:", path);
	for (i = 0; i < spec.count; i++)
		printf(" %s=%s", STELLAR_CDI_KIND, spec.devs[i].name);
	printf(" %s=%s\n", STELLAR_CDI_KIND, STELLAR_CDI_ALL);
	return STELLAR_EXIT_OK;
}

const struct stellar_command stellar_cmd_cdi = {
	.name = "cdi",
	.synopsis = "[--device NAME] [--output PATH|-]",
	.summary = "Write a CDI spec of the devices' nodes for containers",
	.accepted = STELLAR_OPT_DEVICE | STELLAR_OPT_OUTPUT,
	.run = run_cdi,
};
