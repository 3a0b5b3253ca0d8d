// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of stellar-tool's CDI spec generator (src/cdi.c), on a fake
 * sysfs tree built in a temporary directory: which uverbs nodes belong to
 * stellar devices, their device numbers, rdma_cm, and the exact JSON.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "cdi.h"

static char root[64];

/* Create @root/@dir (and its parents) and write @text to @root/@dir/@file. */
static void put_file(const char *dir, const char *file, const char *text)
{
	char path[512], *p;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s/", root, dir);
	for (p = path + strlen(root) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	strncat(path, file, sizeof(path) - strlen(path) - 1);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

/* A uverbs node of @ibdev, a device visible in class/infiniband if @here. */
static void put_uverbs(const char *node, const char *ibdev, const char *dev,
		       bool here)
{
	char dir[128];

	snprintf(dir, sizeof(dir), "sys/class/infiniband_verbs/%s", node);
	put_file(dir, "ibdev", ibdev);
	put_file(dir, "dev", dev);
	if (!here)
		return;
	snprintf(dir, sizeof(dir), "sys/class/infiniband/%.*s",
		 (int)strcspn(ibdev, "\n"), ibdev);
	put_file(dir, "node_type", "1: CA\n");
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/stellar-cdi-XXXXXX");
	if (!mkdtemp(root))
		return -1;
	put_uverbs("uverbs0", "stellar1\n", "231:192\n", true);
	put_uverbs("uverbs1", "rxe0\n", "231:193\n", true);
	put_uverbs("uverbs2", "stellar0\n", "231:194\n", true);
	put_uverbs("uverbs3", "stellar.x\n", "231:195\n", true);
	/* a device of another network namespace (exclusive mode) */
	put_uverbs("uverbs4", "stellar5\n", "231:196\n", false);
	/* not a uverbs node */
	put_file("sys/class/infiniband_verbs/abi_version", "x", "6\n");
	put_file("sys/class/misc/rdma_cm", "dev", "10:58\n");
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

/* Run stellar_cdi_collect(); the JSON (if it succeeded) and errors. */
struct run {
	int ret;
	char *json;
	char *err;
	struct stellar_cdi_spec spec;
};

static void run(struct run *r, const char *only)
{
	size_t len;
	FILE *out, *err;

	err = open_memstream(&r->err, &len);
	assert_non_null(err);
	r->ret = stellar_cdi_collect(root, only, &r->spec, err);
	fclose(err);
	r->json = NULL;
	if (r->ret)
		return;
	out = open_memstream(&r->json, &len);
	assert_non_null(out);
	stellar_cdi_write(out, &r->spec);
	fclose(out);
}

static void run_free(struct run *r)
{
	free(r->json);
	free(r->err);
}

#define NODE(path, major, minor, last)                                      \
	"          {\n"                                                     \
	"            \"path\": \"" path "\",\n"                             \
	"            \"type\": \"c\",\n"                                    \
	"            \"major\": " #major ",\n"                              \
	"            \"minor\": " #minor ",\n"                              \
	"            \"permissions\": \"rw\"\n"                             \
	"          }" last "\n"

#define DEVICE(name, nodes, last)                                           \
	"    {\n"                                                           \
	"      \"name\": \"" name "\",\n"                                   \
	"      \"containerEdits\": {\n"                                     \
	"        \"deviceNodes\": [\n"                                      \
	nodes                                                               \
	"        ]\n"                                                       \
	"      }\n"                                                         \
	"    }" last "\n"

#define HEAD "{\n  \"cdiVersion\": \"0.3.0\",\n  \"kind\": \"stellar.dev/rdma\",\n  \"devices\": [\n"
#define TAIL "  ]\n}\n"
#define RDMA_CM NODE("/dev/infiniband/rdma_cm", 10, 58, "")

static void test_all_devices(void **state)
{
	struct run r;

	(void)state;
	run(&r, NULL);
	assert_int_equal(r.ret, 0);
	assert_int_equal(r.spec.count, 2);
	assert_string_equal(r.json,
		HEAD
		DEVICE("stellar0", NODE("/dev/infiniband/uverbs2", 231, 194, ",")
			RDMA_CM, ",")
		DEVICE("stellar1", NODE("/dev/infiniband/uverbs0", 231, 192, ",")
			RDMA_CM, ",")
		DEVICE("all", NODE("/dev/infiniband/uverbs2", 231, 194, ",")
			NODE("/dev/infiniband/uverbs0", 231, 192, ",")
			RDMA_CM, "")
		TAIL);
	/* rxe0 is not ours; stellar.x is no CDI name before 0.6.0 */
	assert_null(strstr(r.json, "rxe0"));
	assert_null(strstr(r.json, "uverbs1"));
	/* stellar5 is in another namespace */
	assert_null(strstr(r.json, "stellar5"));
	assert_null(strstr(r.json, "uverbs4"));
	assert_non_null(strstr(r.err, "'stellar.x' is not a valid CDI device name"));
	run_free(&r);
}

static void test_one_device(void **state)
{
	struct run r;

	(void)state;
	run(&r, "stellar1");
	assert_int_equal(r.ret, 0);
	assert_string_equal(r.json,
		HEAD
		DEVICE("stellar1", NODE("/dev/infiniband/uverbs0", 231, 192, ",")
			RDMA_CM, ",")
		DEVICE("all", NODE("/dev/infiniband/uverbs0", 231, 192, ",")
			RDMA_CM, "")
		TAIL);
	run_free(&r);
}

static void test_named_device_of_other_driver(void **state)
{
	struct run r;

	(void)state;
	/* --device takes any device with a uverbs node */
	run(&r, "rxe0");
	assert_int_equal(r.ret, 0);
	assert_int_equal(r.spec.count, 1);
	assert_string_equal(r.spec.devs[0].uverbs.path, "/dev/infiniband/uverbs1");
	run_free(&r);
}

static void test_device_of_other_netns(void **state)
{
	struct run r;

	(void)state;
	run(&r, "stellar5");
	assert_int_equal(r.ret, -1);
	assert_non_null(strstr(r.err, "no device 'stellar5'"));
	run_free(&r);
}

static void test_missing_device(void **state)
{
	struct run r;

	(void)state;
	run(&r, "stellar7");
	assert_int_equal(r.ret, -1);
	assert_null(r.json);
	assert_non_null(strstr(r.err, "no device 'stellar7'"));
	run_free(&r);
}

static void test_no_rdma_cm(void **state)
{
	char path[128];
	struct run r;

	(void)state;
	snprintf(path, sizeof(path), "%s/sys/class/misc/rdma_cm/dev", root);
	assert_int_equal(unlink(path), 0);
	run(&r, "stellar0");
	put_file("sys/class/misc/rdma_cm", "dev", "10:58\n");
	assert_int_equal(r.ret, 0);
	assert_false(r.spec.has_rdma_cm);
	assert_non_null(strstr(r.err, "rdma_ucm not loaded"));
	assert_string_equal(r.json,
		HEAD
		DEVICE("stellar0", NODE("/dev/infiniband/uverbs2", 231, 194, ""), ",")
		DEVICE("all", NODE("/dev/infiniband/uverbs2", 231, 194, ""), "")
		TAIL);
	run_free(&r);
}

static void test_bad_dev_file(void **state)
{
	struct run r;

	(void)state;
	put_uverbs("uverbs9", "stellar9\n", "231\n", true);
	run(&r, NULL);
	put_uverbs("uverbs9", "rxe9\n", "231:201\n", true);
	assert_int_equal(r.ret, -1);
	assert_non_null(strstr(r.err, "uverbs9/dev"));
	run_free(&r);
}

static void test_no_sysfs(void **state)
{
	char saved[sizeof(root)];
	struct run r;

	(void)state;
	memcpy(saved, root, sizeof(root));
	strcat(root, "/nowhere");
	run(&r, NULL);
	memcpy(root, saved, sizeof(root));
	assert_int_equal(r.ret, -1);
	assert_non_null(strstr(r.err, "is ib_uverbs loaded?"));
	run_free(&r);
}

static void test_no_stellar_device(void **state)
{
	char saved[sizeof(root)];
	struct run r;

	(void)state;
	memcpy(saved, root, sizeof(root));
	assert_int_equal(setup(state), 0);
	/* a fresh tree with only another driver's device */
	put_uverbs("uverbs1", "mlx5_0\n", "231:193\n", true);
	{
		char path[128];

		snprintf(path, sizeof(path),
			 "rm -rf '%s'/sys/class/infiniband_verbs/uverbs[0234]",
			 root);
		assert_int_equal(system(path), 0);
	}
	run(&r, NULL);
	assert_int_equal(teardown(state), 0);
	memcpy(root, saved, sizeof(root));
	assert_int_equal(r.ret, -1);
	assert_non_null(strstr(r.err, "no stellar device"));
	run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_devices),
		cmocka_unit_test(test_one_device),
		cmocka_unit_test(test_named_device_of_other_driver),
		cmocka_unit_test(test_device_of_other_netns),
		cmocka_unit_test(test_missing_device),
		cmocka_unit_test(test_no_rdma_cm),
		cmocka_unit_test(test_bad_dev_file),
		cmocka_unit_test(test_no_sysfs),
		cmocka_unit_test(test_no_stellar_device),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
