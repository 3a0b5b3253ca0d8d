// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stellar-tool: Container Device Interface (CDI) specs of stellar devices.
 *
 * A process in a container needs two character devices to use a stellar
 * device: the device's uverbs node (/dev/infiniband/uverbsN, the one whose
 * /sys/class/infiniband_verbs/uverbsN/ibdev names it) and, for librdmacm,
 * /dev/infiniband/rdma_cm (/sys/class/misc/rdma_cm, when rdma_ucm is
 * loaded).  The spec lists them per device, plus a device "all" with every
 * stellar device.  Device numbers come from the "dev" files of sysfs, so
 * the runtime need not stat the nodes.  Only devices sysfs shows in
 * class/infiniband are listed: with the RDMA core in exclusive mode, those
 * of the network namespace sysfs was mounted in.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cdi.h"
#include "format.h"

/* What every stellar device's name starts with (the module enforces it). */
#define STELLAR_NAME_PREFIX "stellar"

/* Read the first line of @root@path into @buf; return 0 or -1. */
static int read_line(const char *root, const char *path, char *buf,
		     size_t len)
{
	char full[512];
	FILE *fp;
	char *nl;

	if ((size_t)snprintf(full, sizeof(full), "%s%s", root, path) >=
	    sizeof(full))
		return -1;
	fp = fopen(full, "re");
	if (!fp)
		return -1;
	if (!fgets(buf, len, fp)) {
		fclose(fp);
		return -1;
	}
	fclose(fp);
	nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	return 0;
}

/* Parse a sysfs "dev" file, "MAJOR:MINOR". */
static int read_devnum(const char *root, const char *path,
		       struct stellar_cdi_node *node)
{
	char line[32], end;

	if (read_line(root, path, line, sizeof(line)) ||
	    sscanf(line, "%u:%u%c", &node->major, &node->minor, &end) != 2)
		return -1;
	return 0;
}

/*
 * A CDI device name (spec 0.3.0): letters, digits, '-' and '_', starting
 * and ending with a letter or digit, at most 63 characters.
 */
static bool cdi_name_ok(const char *name)
{
	size_t len = strlen(name), i;

	if (!len || len > 63 || !isalnum((unsigned char)name[0]) ||
	    !isalnum((unsigned char)name[len - 1]))
		return false;
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)name[i]) && name[i] != '-' &&
		    name[i] != '_')
			return false;
	return true;
}

/* Add the device of uverbs node @uverbs if it is one we want. */
static int add_uverbs(const char *root, const char *uverbs, const char *only,
		      struct stellar_cdi_spec *spec, FILE *err)
{
	struct stellar_cdi_dev *dev = &spec->devs[spec->count];
	char path[256], name[STELLAR_NAME_LEN];

	/* uverbsN; a longer name is no node of ib_uverbs */
	if (strlen(uverbs) > 32)
		return 0;
	snprintf(path, sizeof(path), "/sys/class/infiniband_verbs/%.32s/ibdev",
		 uverbs);
	if (read_line(root, path, name, sizeof(name)))
		return 0;
	if (only ? strcmp(name, only) :
		   strncmp(name, STELLAR_NAME_PREFIX,
			   strlen(STELLAR_NAME_PREFIX)))
		return 0;
	/*
	 * class/infiniband_verbs lists the nodes of every namespace's
	 * devices; class/infiniband (in exclusive netns mode) only those of
	 * the namespace sysfs was mounted in.
	 */
	snprintf(path, sizeof(path), "%s/sys/class/infiniband/%s", root, name);
	if (access(path, F_OK))
		return 0;
	if (!cdi_name_ok(name)) {
		fprintf(err, "stellar-tool: cdi: '%s' is not a valid CDI device name, left out\n",
			name);
		return 0;
	}
	if (spec->count == STELLAR_CDI_MAX_DEVS) {
		fprintf(err, "stellar-tool: cdi: more than %d devices\n",
			STELLAR_CDI_MAX_DEVS);
		return -1;
	}
	snprintf(path, sizeof(path), "/sys/class/infiniband_verbs/%.32s/dev",
		 uverbs);
	if (read_devnum(root, path, &dev->uverbs)) {
		fprintf(err, "stellar-tool: cdi: cannot read %s%s\n", root,
			path);
		return -1;
	}
	snprintf(dev->name, sizeof(dev->name), "%s", name);
	snprintf(dev->uverbs.path, sizeof(dev->uverbs.path),
		 "/dev/infiniband/%.32s", uverbs);
	spec->count++;
	return 0;
}

static int cmp_dev(const void *a, const void *b)
{
	return strcmp(((const struct stellar_cdi_dev *)a)->name,
		      ((const struct stellar_cdi_dev *)b)->name);
}

/**
 * stellar_cdi_collect() - find the device nodes of stellar devices
 * @root: prefix of /sys ("" for the real one)
 * @only: the one device to list, or NULL for every stellar device
 * @spec: filled, devices sorted by name
 * @err: where problems are reported
 *
 * Return: 0, or -1 if sysfs could not be read or no device was found.
 */
int stellar_cdi_collect(const char *root, const char *only,
			struct stellar_cdi_spec *spec, FILE *err)
{
	char dir[512];
	struct dirent *de;
	DIR *d;
	int ret = 0;

	memset(spec, 0, sizeof(*spec));
	snprintf(dir, sizeof(dir), "%s/sys/class/infiniband_verbs", root);
	d = opendir(dir);
	if (!d) {
		fprintf(err, "stellar-tool: cdi: %s: %s (is ib_uverbs loaded?)\n",
			dir, strerror(errno));
		return -1;
	}
	while (!ret && (de = readdir(d)))
		if (!strncmp(de->d_name, "uverbs", 6))
			ret = add_uverbs(root, de->d_name, only, spec, err);
	closedir(d);
	if (ret)
		return -1;
	if (!spec->count) {
		/* CDI runtimes refuse a spec without devices */
		if (only)
			fprintf(err, "stellar-tool: cdi: no device '%s' with a uverbs node\n",
				only);
		else
			fprintf(err, "stellar-tool: cdi: no stellar device with a uverbs node\n");
		return -1;
	}
	qsort(spec->devs, spec->count, sizeof(spec->devs[0]), cmp_dev);
	if (!read_devnum(root, "/sys/class/misc/rdma_cm/dev", &spec->rdma_cm)) {
		spec->has_rdma_cm = true;
		snprintf(spec->rdma_cm.path, sizeof(spec->rdma_cm.path),
			 "/dev/infiniband/rdma_cm");
	} else {
		fprintf(err, "stellar-tool: cdi: no /sys/class/misc/rdma_cm (rdma_ucm not loaded): the spec has no rdma_cm node\n");
	}
	return 0;
}

static void write_node(FILE *fp, const struct stellar_cdi_node *node,
		       bool last)
{
	fputs("          {\n            \"path\": ", fp);
	stellar_json_string(fp, node->path);
	fprintf(fp, ",\n            \"type\": \"c\",\n"
		"            \"major\": %u,\n            \"minor\": %u,\n"
		"            \"permissions\": \"rw\"\n          }%s\n",
		node->major, node->minor, last ? "" : ",");
}

/* One CDI device: @count uverbs nodes from @devs, then rdma_cm. */
static void write_device(FILE *fp, const char *name,
			 const struct stellar_cdi_spec *spec,
			 const struct stellar_cdi_dev *devs, size_t count,
			 bool last)
{
	size_t i;

	fputs("    {\n      \"name\": ", fp);
	stellar_json_string(fp, name);
	fputs(",\n      \"containerEdits\": {\n        \"deviceNodes\": [\n",
	      fp);
	for (i = 0; i < count; i++)
		write_node(fp, &devs[i].uverbs,
			   i + 1 == count && !spec->has_rdma_cm);
	if (spec->has_rdma_cm)
		write_node(fp, &spec->rdma_cm, true);
	fprintf(fp, "        ]\n      }\n    }%s\n", last ? "" : ",");
}

/**
 * stellar_cdi_write() - print a CDI spec as JSON
 * @fp: where to
 * @spec: from stellar_cdi_collect(), with at least one device
 *
 * One CDI device per stellar device, named like it, plus "all": each
 * holds the uverbs node(s) and rdma_cm.
 */
void stellar_cdi_write(FILE *fp, const struct stellar_cdi_spec *spec)
{
	size_t i;

	fprintf(fp, "{\n  \"cdiVersion\": \"%s\",\n  \"kind\": \"%s\",\n"
		"  \"devices\": [\n", STELLAR_CDI_VERSION, STELLAR_CDI_KIND);
	for (i = 0; i < spec->count; i++)
		write_device(fp, spec->devs[i].name, spec, &spec->devs[i], 1,
			     false);
	write_device(fp, STELLAR_CDI_ALL, spec, spec->devs, spec->count, true);
	fputs("  ]\n}\n", fp);
}
