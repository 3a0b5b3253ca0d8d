// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * PVDMA and eMTT data tests: a loopback RC QP pair on one stellar device
 * moves data through user memory that is pinned on first access, and the
 * results are checked byte for byte against the process's own view.
 *
 *   pvdma_test -d DEV -g GID_INDEX CASE
 *
 * Every case prints "ok CASE" and exits 0, or prints why and exits 1.
 * The counters of /proc/stellar/pvdma_stats are checked where a case
 * knows what they must do.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <linux/capability.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define CHUNK		(2UL << 20)
#define PAGE		4096UL
#define MAX_MSG		(1U << 20)

static const char *dev_name = "stellar0";
static int gid_index;
static const char *case_name = "?";

struct ctx {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp_a;	/* requester */
	struct ibv_qp *qp_b;	/* responder */
	uint8_t *src;		/* A's staging buffer */
	struct ibv_mr *src_mr;
};

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "FAIL %s: ", case_name);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

#define CHECK(cond, ...) do { if (!(cond)) die(__VA_ARGS__); } while (0)

/* ---- /proc/stellar/pvdma_stats and emtt_stats ------------------------- */

/* Value of "LABEL: N" in DEV's section of /proc/stellar/FILE. */
static uint64_t mem_stat(const char *file, const char *label)
{
	char path[128], line[256], section[80];
	bool in_dev = false;
	size_t len = strlen(label);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/stellar/%s", file);
	snprintf(section, sizeof(section), "[%s]", dev_name);
	f = fopen(path, "r");
	CHECK(f, "cannot open %s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (line[0] == '[') {
			in_dev = !strcmp(line, section);
			continue;
		}
		if (in_dev && !strncmp(line, label, len) && line[len] == ':') {
			fclose(f);
			return strtoull(line + len + 1, NULL, 10);
		}
	}
	fclose(f);
	die("no '%s' for %s in %s", label, dev_name, path);
	return 0;
}

static uint64_t pvdma_stat(const char *label)
{
	return mem_stat("pvdma_stats", label);
}

/* ---- verbs set-up --------------------------------------------------- */

static struct ibv_context *open_dev(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	CHECK(list, "ibv_get_device_list: %s", strerror(errno));
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev_name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	CHECK(ctx, "cannot open %s", dev_name);
	return ctx;
}

static struct ibv_qp *make_qp(struct ctx *c)
{
	struct ibv_qp_init_attr init = {
		.send_cq = c->cq, .recv_cq = c->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64,
			 .max_send_sge = 4, .max_recv_sge = 4 },
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};
	struct ibv_qp *qp = ibv_create_qp(c->pd, &init);

	CHECK(qp, "ibv_create_qp: %s", strerror(errno));
	CHECK(!ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
	      "modify to INIT");
	return qp;
}

static void connect_qp(struct ibv_qp *qp, struct ibv_qp *peer,
		       union ibv_gid *gid)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = peer->qp_num, .rq_psn = 1,
		.max_dest_rd_atomic = 16, .min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = *gid, .sgid_index = gid_index,
				      .hop_limit = 64 } },
	};

	CHECK(!ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV |
			     IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			     IBV_QP_MIN_RNR_TIMER), "modify to RTR");
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 1;
	/*
	 * About 2 s of retries (268 ms each): a first touch pins a 2 MB
	 * chunk, which on a loaded TCG guest with a debug kernel can take
	 * longer than the usual 0.5 s; nothing here is lost on the wire.
	 */
	attr.timeout = 16;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = 16;
	CHECK(!ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC),
	      "modify to RTS");
}

static void *map_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(p != MAP_FAILED, "mmap %zu: %s", len, strerror(errno));
	return p;
}

/* @nchunks chunks of anonymous memory starting on a chunk boundary. */
static uint8_t *map_chunks(size_t nchunks)
{
	uint8_t *map = map_anon((nchunks + 1) * CHUNK);

	return (uint8_t *)(((uintptr_t)map + CHUNK - 1) & ~(CHUNK - 1));
}

static struct ibv_mr *reg(struct ctx *c, void *addr, size_t len)
{
	struct ibv_mr *mr = ibv_reg_mr(c->pd, addr, len,
				       IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_WRITE |
				       IBV_ACCESS_REMOTE_READ |
				       IBV_ACCESS_REMOTE_ATOMIC);

	CHECK(mr, "ibv_reg_mr(%p, %zu): %s", addr, len, strerror(errno));
	return mr;
}

/*
 * Pin the staging buffer now, so that the cases' fault counts see only
 * the memory they are about.
 */
static void prefetch(struct ctx *c, struct ibv_mr *mr, void *addr,
		     uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)addr, .length = len, .lkey = mr->lkey,
	};
	int ret = ibv_advise_mr(c->pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
				IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1);

	CHECK(!ret, "ibv_advise_mr: %s", strerror(ret));
}

static void setup(struct ctx *c)
{
	union ibv_gid gid;

	c->ctx = open_dev();
	c->pd = ibv_alloc_pd(c->ctx);
	CHECK(c->pd, "ibv_alloc_pd");
	c->cq = ibv_create_cq(c->ctx, 256, NULL, NULL, 0);
	CHECK(c->cq, "ibv_create_cq");
	CHECK(!ibv_query_gid(c->ctx, 1, gid_index, &gid), "ibv_query_gid");
	c->qp_a = make_qp(c);
	c->qp_b = make_qp(c);
	connect_qp(c->qp_a, c->qp_b, &gid);
	connect_qp(c->qp_b, c->qp_a, &gid);
	c->src = map_anon(MAX_MSG);
	c->src_mr = reg(c, c->src, MAX_MSG);
	prefetch(c, c->src_mr, c->src, MAX_MSG);
}

/* ---- operations ----------------------------------------------------- */

/* make kasan's factor for time bounds (STELLAR_TIMEOUT_SCALE), at least 1 */
static unsigned int timeout_scale(void)
{
	const char *env = getenv("STELLAR_TIMEOUT_SCALE");
	int scale = env ? atoi(env) : 1;

	return scale > 1 ? scale : 1;
}

/* A completion must come within 30 s (times the slow kernel's factor). */
static enum ibv_wc_status wait_wc(struct ctx *c)
{
	struct timespec t0, now;
	struct ibv_wc wc;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		n = ibv_poll_cq(c->cq, 1, &wc);
		CHECK(n >= 0, "ibv_poll_cq");
		if (n)
			return wc.status;
		clock_gettime(CLOCK_MONOTONIC, &now);
		CHECK(now.tv_sec - t0.tv_sec < 30 * timeout_scale(),
		      "no completion in %u s", 30 * timeout_scale());
	}
}

/* One RDMA @op of @len bytes between @laddr (@lkey) and @raddr (@rkey). */
static enum ibv_wc_status rdma_op_sge(struct ctx *c, enum ibv_wr_opcode op,
				      uint64_t laddr, uint32_t lkey,
				      uint32_t len, uint64_t raddr,
				      uint32_t rkey)
{
	struct ibv_sge sge = { .addr = laddr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = {
		.opcode = op, .sg_list = &sge, .num_sge = 1,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;

	CHECK(!ibv_post_send(c->qp_a, &wr, &bad), "ibv_post_send: %s",
	      strerror(errno));
	return wait_wc(c);
}

static enum ibv_wc_status rdma_op(struct ctx *c, enum ibv_wr_opcode op,
				  uint32_t len, uint64_t raddr, uint32_t rkey)
{
	CHECK(len <= MAX_MSG, "message too long");
	return rdma_op_sge(c, op, (uintptr_t)c->src, c->src_mr->lkey, len,
			   raddr, rkey);
}

static uint64_t atomic_op(struct ctx *c, enum ibv_wr_opcode op,
			  uint64_t raddr, uint32_t rkey, uint64_t cmp_add,
			  uint64_t swap)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)c->src, .length = 8, .lkey = c->src_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.opcode = op, .sg_list = &sge, .num_sge = 1,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.atomic = { .remote_addr = raddr, .rkey = rkey,
			       .compare_add = cmp_add, .swap = swap },
	}, *bad;
	enum ibv_wc_status st;

	CHECK(!ibv_post_send(c->qp_a, &wr, &bad), "post atomic");
	st = wait_wc(c);
	CHECK(st == IBV_WC_SUCCESS, "atomic: %s", ibv_wc_status_str(st));
	return *(uint64_t *)c->src;
}

static void fill(uint8_t *p, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)((seed + i * 131) ^ (i >> 9));
}

/* RDMA WRITE @len pattern bytes to @dst, check, READ them back, check. */
static void write_read(struct ctx *c, struct ibv_mr *mr, uint8_t *dst,
		       uint32_t len, uint32_t seed)
{
	uint64_t raddr = (uintptr_t)dst;
	enum ibv_wc_status st;

	fill(c->src, len, seed);
	st = rdma_op(c, IBV_WR_RDMA_WRITE, len, raddr, mr->rkey);
	CHECK(st == IBV_WC_SUCCESS, "WRITE %u at %p: %s", len, dst,
	      ibv_wc_status_str(st));
	CHECK(!memcmp(dst, c->src, len), "WRITE %u at %p: data differs", len,
	      dst);
	memset(c->src, 0, len);
	fill(dst, len, seed + 7);
	st = rdma_op(c, IBV_WR_RDMA_READ, len, raddr, mr->rkey);
	CHECK(st == IBV_WC_SUCCESS, "READ %u at %p: %s", len, dst,
	      ibv_wc_status_str(st));
	CHECK(!memcmp(dst, c->src, len), "READ %u at %p: data differs", len,
	      dst);
}

/* ---- cases ------------------------------------------------------------ */

/*
 * An MR that starts 3 pages + 5 bytes into a chunk and is not a whole
 * number of pages: registering pins nothing, accesses across chunk and
 * page boundaries move the right bytes, and only touched chunks pin.
 */
static void case_boundaries(struct ctx *c)
{
	size_t map_len = 5 * CHUNK;
	uint8_t *map = map_anon(map_len + CHUNK);
	uint8_t *aligned = (uint8_t *)(((uintptr_t)map + CHUNK - 1) &
				       ~(CHUNK - 1));
	uint8_t *buf = aligned + 3 * PAGE + 5;
	size_t len = 4 * CHUNK + 12345;
	uint64_t pinned0 = pvdma_stat("Pinned bytes");
	uint64_t faults0 = pvdma_stat("Page faults");
	struct ibv_mr *mr = reg(c, buf, len);

	CHECK(pvdma_stat("Pinned bytes") == pinned0,
	      "registration pinned %" PRIu64 " bytes",
	      pvdma_stat("Pinned bytes") - pinned0);
	/* Across the first chunk boundary (2 chunks pin). */
	write_read(c, mr, aligned + CHUNK - 3000, 6000, 1);
	CHECK(pvdma_stat("Page faults") - faults0 == 2,
	      "2 chunks touched, %" PRIu64 " faults",
	      pvdma_stat("Page faults") - faults0);
	/* First bytes, last bytes, a message over a page boundary. */
	write_read(c, mr, buf, 1, 2);
	write_read(c, mr, buf, 4096, 3);
	write_read(c, mr, buf + len - 1, 1, 4);
	write_read(c, mr, buf + len - 70000, 70000, 5);
	write_read(c, mr, aligned + CHUNK + 100, 200, 6);
	/* Chunks 0, 1, 3 and 4 were touched; chunk 2 was not. */
	CHECK(pvdma_stat("Page faults") - faults0 == 4,
	      "4 chunks touched, %" PRIu64 " faults",
	      pvdma_stat("Page faults") - faults0);
	CHECK(!ibv_dereg_mr(mr), "dereg");
	CHECK(pvdma_stat("Pinned bytes") == pinned0,
	      "deregistration left %" PRIu64 " bytes pinned",
	      pvdma_stat("Pinned bytes") - pinned0);
	munmap(map, map_len + CHUNK);
}

/* A 1-byte MR: its byte works, the byte after it is outside the MR. */
static void case_tiny(struct ctx *c)
{
	uint8_t *page = map_anon(PAGE);
	struct ibv_mr *mr = reg(c, page + 100, 1);
	enum ibv_wc_status st;

	write_read(c, mr, page + 100, 1, 9);
	st = rdma_op(c, IBV_WR_RDMA_WRITE, 2, (uintptr_t)page + 100, mr->rkey);
	CHECK(st == IBV_WC_REM_ACCESS_ERR,
	      "2-byte WRITE into a 1-byte MR: %s", ibv_wc_status_str(st));
}

/* Atomics into chunks nobody has touched, then READ them back. */
static void case_atomic(struct ctx *c)
{
	uint8_t *buf = map_chunks(4);
	struct ibv_mr *mr = reg(c, buf, 4 * CHUNK);
	uint64_t *far = (uint64_t *)(buf + 3 * CHUNK + 8);
	uint64_t *mid = (uint64_t *)(buf + CHUNK + 4096);
	uint64_t orig;

	orig = atomic_op(c, IBV_WR_ATOMIC_FETCH_AND_ADD, (uintptr_t)far,
			 mr->rkey, 5, 0);
	CHECK(orig == 0 && *far == 5, "fetch-add: orig %" PRIu64 " now %"
	      PRIu64, orig, *far);
	orig = atomic_op(c, IBV_WR_ATOMIC_CMP_AND_SWP, (uintptr_t)mid,
			 mr->rkey, 0, 0xabcdef);
	CHECK(orig == 0 && *mid == 0xabcdef, "cmp-swap: orig %" PRIu64
	      " now %" PRIx64, orig, *mid);
	orig = atomic_op(c, IBV_WR_ATOMIC_CMP_AND_SWP, (uintptr_t)mid,
			 mr->rkey, 1, 7);
	CHECK(orig == 0xabcdef && *mid == 0xabcdef,
	      "failing cmp-swap changed memory");
	write_read(c, mr, (uint8_t *)far - 8, 64, 11);
}

/* ibv_advise_mr pins ahead: the following accesses do not fault. */
static void case_prefetch(struct ctx *c)
{
	uint8_t *buf = map_chunks(8);
	struct ibv_mr *mr = reg(c, buf, 8 * CHUNK);
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf + CHUNK, .length = 3 * CHUNK,
		.lkey = mr->lkey,
	};
	uint64_t faults0, pref0 = pvdma_stat("Prefetches");
	uint64_t pinned0 = pvdma_stat("Pinned bytes");
	int ret;

	ret = ibv_advise_mr(c->pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			    IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1);
	CHECK(!ret, "ibv_advise_mr: %s", strerror(ret));
	CHECK(pvdma_stat("Prefetches") - pref0 == 3, "3 chunks prefetched, "
	      "counter says %" PRIu64, pvdma_stat("Prefetches") - pref0);
	CHECK(pvdma_stat("Pinned bytes") - pinned0 == 3 * CHUNK,
	      "prefetch pinned %" PRIu64 " bytes",
	      pvdma_stat("Pinned bytes") - pinned0);
	faults0 = pvdma_stat("Page faults");
	write_read(c, mr, buf + CHUNK, 1 << 20, 12);
	write_read(c, mr, buf + 4 * CHUNK - 4096, 4096, 13);
	CHECK(pvdma_stat("Page faults") == faults0,
	      "prefetched chunks faulted");
	/* An lkey that does not exist is refused. */
	sge.lkey = mr->lkey + 0x100000;
	ret = ibv_advise_mr(c->pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
			    IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1);
	CHECK(ret, "advise_mr with a bad lkey succeeded");
	CHECK(!ibv_dereg_mr(mr), "dereg");
	CHECK(pvdma_stat("Pinned bytes") == pinned0, "pins left after dereg");
}

/*
 * fork() after registration, before the first access: the MR keeps
 * naming the parent's memory.  RDMA into it while a child still shares
 * the pages copy-on-write reaches the parent only; the child's writes do
 * not reach the parent.
 */
static void case_fork(struct ctx *c)
{
	uint8_t *buf = map_anon(2 * CHUNK);
	struct ibv_mr *mr;
	int status, go[2];
	char byte = 0;
	pid_t pid;

	memset(buf, 0x11, 2 * CHUNK);
	mr = reg(c, buf, 2 * CHUNK);
	CHECK(!pipe(go), "pipe");
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid) {
		size_t i;

		/* Wait for the parent's RDMA, then check our own copy. */
		if (read(go[0], &byte, 1) != 1)
			_exit(2);
		for (i = 0; i < 2 * CHUNK; i++)
			if (buf[i] != 0x11)
				_exit(1);
		memset(buf, 0xcc, 2 * CHUNK);
		_exit(0);
	}
	write_read(c, mr, buf + 100, 8192, 21);
	write_read(c, mr, buf + CHUNK - 10, 20, 22);
	CHECK(write(go[1], &byte, 1) == 1, "pipe write");
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status),
	      "waitpid");
	CHECK(WEXITSTATUS(status) == 0,
	      "the child saw the parent's RDMA data (status %d)",
	      WEXITSTATUS(status));
	CHECK(buf[0] == 0x11 && buf[2 * CHUNK - 1] == 0x11,
	      "the child's writes reached the parent");
	/* A second fork after the pins must not break them either. */
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid) {
		memset(buf, 0xdd, 2 * CHUNK);
		_exit(0);
	}
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	write_read(c, mr, buf + 100, 8192, 23);
	CHECK(buf[5000] != 0xdd, "the second child's writes reached the parent");
	CHECK(!ibv_dereg_mr(mr), "dereg");
}

/*
 * Part of the MR unmapped before its first access: accesses elsewhere
 * work, an access there fails cleanly with a remote access error.
 */
static void case_unmapped(struct ctx *c)
{
	uint8_t *map = map_anon(4 * CHUNK);
	uint8_t *buf = (uint8_t *)(((uintptr_t)map + CHUNK - 1) & ~(CHUNK - 1));
	struct ibv_mr *mr = reg(c, buf, 3 * CHUNK);
	uint64_t errors0 = pvdma_stat("Pin errors");
	enum ibv_wc_status st;

	CHECK(!munmap(buf + CHUNK, CHUNK), "munmap");
	write_read(c, mr, buf + 10, 4096, 31);
	write_read(c, mr, buf + 2 * CHUNK + 10, 4096, 32);
	st = rdma_op(c, IBV_WR_RDMA_WRITE, 4096, (uintptr_t)buf + CHUNK + 8,
		     mr->rkey);
	CHECK(st == IBV_WC_REM_ACCESS_ERR, "WRITE into unmapped memory: %s",
	      ibv_wc_status_str(st));
	CHECK(pvdma_stat("Pin errors") > errors0, "no pin error counted");
	CHECK(!ibv_dereg_mr(mr), "dereg");
	/* Registering an unmapped range fails up front. */
	CHECK(!ibv_reg_mr(c->pd, buf + CHUNK, 4096, IBV_ACCESS_LOCAL_WRITE),
	      "registering unmapped memory succeeded");
}

/* Re-registration at the same address must not see the old pages. */
static void case_rereg(struct ctx *c)
{
	uint8_t *buf = map_anon(CHUNK);
	struct ibv_mr *mr = reg(c, buf, CHUNK);
	uint32_t old_lkey = mr->lkey;
	enum ibv_wc_status st;

	write_read(c, mr, buf, 65536, 41);
	CHECK(!ibv_dereg_mr(mr), "dereg");
	CHECK(mmap(buf, CHUNK, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == buf,
	      "mmap MAP_FIXED");
	memset(buf, 0x5a, CHUNK);
	mr = reg(c, buf, CHUNK);
	printf("old lkey %#x new lkey %#x\n", old_lkey, mr->lkey);
	memset(c->src, 0, 65536);
	st = rdma_op(c, IBV_WR_RDMA_READ, 65536, (uintptr_t)buf, mr->rkey);
	CHECK(st == IBV_WC_SUCCESS, "READ: %s", ibv_wc_status_str(st));
	CHECK(c->src[0] == 0x5a && c->src[65535] == 0x5a,
	      "READ after re-registration returned the old pages");
	write_read(c, mr, buf + 4096, 8192, 42);
	CHECK(!ibv_dereg_mr(mr), "dereg");
}

/* Huge pages: data is right and one pin holds each 2 MB chunk. */
static void case_hugetlb(struct ctx *c)
{
	size_t len = 2 * CHUNK;
	uint64_t huge0 = pvdma_stat("Huge chunks");
	uint8_t *buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	struct ibv_mr *mr;

	CHECK(buf != MAP_FAILED, "MAP_HUGETLB: %s (reserve huge pages first)",
	      strerror(errno));
	mr = reg(c, buf + 4096 + 3, len - 8192);
	write_read(c, mr, buf + CHUNK - 5000, 10000, 51);
	write_read(c, mr, buf + 4096 + 3, 1, 52);
	CHECK(pvdma_stat("Huge chunks") - huge0 == 2,
	      "2 huge chunks pinned, counter says %" PRIu64,
	      pvdma_stat("Huge chunks") - huge0);
	CHECK(!ibv_dereg_mr(mr), "dereg");
	/* Normal pages next to it still work. */
	case_tiny(c);
}

/* Drop CAP_IPC_LOCK so that RLIMIT_MEMLOCK applies (we run as root). */
static void drop_ipc_lock(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	CHECK(!syscall(SYS_capget, &hdr, data), "capget");
	data[CAP_IPC_LOCK / 32].effective &= ~(1U << (CAP_IPC_LOCK % 32));
	data[CAP_IPC_LOCK / 32].permitted &= ~(1U << (CAP_IPC_LOCK % 32));
	CHECK(!syscall(SYS_capset, &hdr, data), "capset");
}

/*
 * A tiny RLIMIT_MEMLOCK: registration of a large MR still succeeds (it
 * pins nothing), the first access beyond the limit fails with a clean
 * error completion.
 */
static void case_memlock(struct ctx *c)
{
	uint8_t *map = map_anon(5 * CHUNK);
	uint8_t *buf = (uint8_t *)(((uintptr_t)map + CHUNK - 1) & ~(CHUNK - 1));
	uint64_t memlock0 = pvdma_stat("Memlock errors");
	struct ibv_mr *mr;
	enum ibv_wc_status st;

	mr = reg(c, buf, 4 * CHUNK);
	/* The 1 MB staging MR is pinned, 3 MB are left: one chunk fits. */
	write_read(c, mr, buf + 100, 4096, 61);
	st = rdma_op(c, IBV_WR_RDMA_WRITE, 4096, (uintptr_t)buf + 3 * CHUNK,
		     mr->rkey);
	CHECK(st == IBV_WC_REM_ACCESS_ERR, "WRITE over RLIMIT_MEMLOCK: %s",
	      ibv_wc_status_str(st));
	CHECK(pvdma_stat("Memlock errors") > memlock0,
	      "no memlock error counted");
}

static void memlock_prepare(void)
{
	struct rlimit lim = { 4 << 20, 4 << 20 };

	drop_ipc_lock();
	CHECK(!setrlimit(RLIMIT_MEMLOCK, &lim), "setrlimit");
}

/* Pin some chunks and die without deregistering anything. */
static void case_exit(struct ctx *c)
{
	size_t len = 64 * CHUNK;
	uint8_t *buf = map_anon(len);
	struct ibv_mr *mr = reg(c, buf, len);
	int i;

	for (i = 0; i < 64; i += 7)
		write_read(c, mr, buf + i * CHUNK + 64, 4096, 70 + i);
	printf("pinned %" PRIu64 " bytes, killing myself\n",
	       pvdma_stat("Pinned bytes"));
	fflush(stdout);
	raise(SIGKILL);
}

/*
 * Random offsets and sizes over a 64 MB MR, each checked: run with the
 * eMTT on, off, and smaller than the working set (evictions).
 */
static void case_random(struct ctx *c)
{
	size_t len = 32 * CHUNK;
	uint8_t *buf = map_anon(len);
	struct ibv_mr *mr = reg(c, buf, len);
	uint32_t sizes[] = { 1, 100, 4096, 8192, 65536, 262144, 1 << 20 };
	unsigned int seed = 1234;
	int i;

	for (i = 0; i < 400; i++) {
		uint32_t size = sizes[rand_r(&seed) % 7];
		uint64_t off = ((uint64_t)rand_r(&seed) << 15 ^
				rand_r(&seed)) % (len - size);

		write_read(c, mr, buf + off, size, i);
	}
	CHECK(!ibv_dereg_mr(mr), "dereg");
}

/* ibv_query_device_ex reports ODP; IBV_ACCESS_ON_DEMAND registers. */
static void case_odp(struct ctx *c)
{
	struct ibv_device_attr_ex attr = {};
	uint8_t *buf = map_anon(2 * CHUNK);
	struct ibv_mr *mr;
	uint32_t rc;

	CHECK(!ibv_query_device_ex(c->ctx, NULL, &attr), "query_device_ex");
	rc = attr.odp_caps.per_transport_caps.rc_odp_caps;
	CHECK(attr.odp_caps.general_caps & IBV_ODP_SUPPORT,
	      "no IBV_ODP_SUPPORT");
	CHECK((rc & (IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		     IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
		     IBV_ODP_SUPPORT_ATOMIC)) ==
	      (IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
	       IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
	       IBV_ODP_SUPPORT_ATOMIC), "rc_odp_caps %#x", rc);
	mr = ibv_reg_mr(c->pd, buf, 2 * CHUNK, IBV_ACCESS_ON_DEMAND |
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ);
	CHECK(mr, "ON_DEMAND registration: %s", strerror(errno));
	write_read(c, mr, buf + CHUNK - 1, 2, 81);
	CHECK(!ibv_dereg_mr(mr), "dereg");
	/* A read-only mapping cannot back a writable MR. */
	CHECK(!mprotect(buf, CHUNK, PROT_READ), "mprotect");
	CHECK(!ibv_reg_mr(c->pd, buf, CHUNK, IBV_ACCESS_LOCAL_WRITE),
	      "writable MR over read-only memory registered");
	mr = ibv_reg_mr(c->pd, buf, CHUNK, IBV_ACCESS_REMOTE_READ);
	CHECK(mr, "read-only MR over read-only memory: %s", strerror(errno));
	CHECK(rdma_op(c, IBV_WR_RDMA_READ, 4096, (uintptr_t)buf, mr->rkey) ==
	      IBV_WC_SUCCESS, "READ from a read-only MR");
	CHECK(!ibv_dereg_mr(mr), "dereg");
}

/*
 * Several QPs hit the same never-touched chunks at once: each chunk is
 * pinned exactly once and every write lands.
 */
static void case_concurrent(struct ctx *c)
{
	enum { NQP = 4, NCHUNK = 8, LEN = 4096 };
	struct ibv_qp *qp[NQP][2];
	union ibv_gid gid;
	uint8_t *buf = map_chunks(NCHUNK);
	struct ibv_mr *mr = reg(c, buf, NCHUNK * CHUNK);
	uint64_t faults0 = pvdma_stat("Page faults");
	int i, k;

	CHECK(!ibv_query_gid(c->ctx, 1, gid_index, &gid), "ibv_query_gid");
	for (i = 0; i < NQP; i++) {
		qp[i][0] = make_qp(c);
		qp[i][1] = make_qp(c);
		connect_qp(qp[i][0], qp[i][1], &gid);
		connect_qp(qp[i][1], qp[i][0], &gid);
		fill(c->src + i * LEN, LEN, 100 + i);
	}
	for (k = 0; k < NCHUNK; k++) {
		for (i = 0; i < NQP; i++) {
			struct ibv_sge sge = {
				.addr = (uintptr_t)c->src + i * LEN,
				.length = LEN, .lkey = c->src_mr->lkey,
			};
			struct ibv_send_wr wr = {
				.opcode = IBV_WR_RDMA_WRITE, .sg_list = &sge,
				.num_sge = 1, .send_flags = IBV_SEND_SIGNALED,
				.wr.rdma = {
					.remote_addr = (uintptr_t)buf + k * CHUNK +
						       (i * 2 + 1) * 65536,
					.rkey = mr->rkey },
			}, *bad;

			CHECK(!ibv_post_send(qp[i][0], &wr, &bad), "post");
		}
	}
	for (i = 0; i < NQP * NCHUNK; i++) {
		enum ibv_wc_status st = wait_wc(c);

		CHECK(st == IBV_WC_SUCCESS, "concurrent WRITE: %s",
		      ibv_wc_status_str(st));
	}
	for (k = 0; k < NCHUNK; k++)
		for (i = 0; i < NQP; i++)
			CHECK(!memcmp(buf + k * CHUNK + (i * 2 + 1) * 65536,
				      c->src + i * LEN, LEN),
			      "chunk %d, QP %d: data differs", k, i);
	CHECK(pvdma_stat("Page faults") - faults0 == NCHUNK,
	      "%d chunks pinned %" PRIu64 " times", NCHUNK,
	      pvdma_stat("Page faults") - faults0);
	CHECK(!ibv_dereg_mr(mr), "dereg");
}

/* Both QPs back to RTS after an error completion moved them to ERR. */
static void reset_pair(struct ctx *c, struct ibv_qp *qa, struct ibv_qp *qb)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	union ibv_gid gid;

	CHECK(!ibv_query_gid(c->ctx, 1, gid_index, &gid), "ibv_query_gid");
	CHECK(!ibv_modify_qp(qa, &reset, IBV_QP_STATE), "reset");
	CHECK(!ibv_modify_qp(qb, &reset, IBV_QP_STATE), "reset");
	CHECK(!ibv_modify_qp(qa, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), "INIT");
	CHECK(!ibv_modify_qp(qb, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), "INIT");
	connect_qp(qa, qb, &gid);
	connect_qp(qb, qa, &gid);
}

static void reset_qps(struct ctx *c)
{
	reset_pair(c, c->qp_a, c->qp_b);
}

/* WRITE then READ @len bytes at iova @raddr, which is @dst in memory. */
static void write_read_iova(struct ctx *c, struct ibv_mr *mr, uint8_t *dst,
			    uint64_t raddr, uint32_t len, uint32_t seed)
{
	enum ibv_wc_status st;

	fill(c->src, len, seed);
	st = rdma_op(c, IBV_WR_RDMA_WRITE, len, raddr, mr->rkey);
	CHECK(st == IBV_WC_SUCCESS, "WRITE %u at iova %#" PRIx64 ": %s", len,
	      raddr, ibv_wc_status_str(st));
	CHECK(!memcmp(dst, c->src, len), "WRITE %u at iova %#" PRIx64
	      ": data differs", len, raddr);
	memset(c->src, 0, len);
	fill(dst, len, seed + 7);
	st = rdma_op(c, IBV_WR_RDMA_READ, len, raddr, mr->rkey);
	CHECK(st == IBV_WC_SUCCESS, "READ %u at iova %#" PRIx64 ": %s", len,
	      raddr, ibv_wc_status_str(st));
	CHECK(!memcmp(dst, c->src, len), "READ %u at iova %#" PRIx64
	      ": data differs", len, raddr);
}

static struct ibv_mr *reg_iova(struct ctx *c, void *addr, size_t len,
			       uint64_t iova)
{
	struct ibv_mr *mr = ibv_reg_mr_iova(c->pd, addr, len, iova,
					    IBV_ACCESS_LOCAL_WRITE |
					    IBV_ACCESS_REMOTE_WRITE |
					    IBV_ACCESS_REMOTE_READ);

	CHECK(mr, "ibv_reg_mr_iova(%p, %zu, %#" PRIx64 "): %s", addr, len,
	      iova, strerror(errno));
	return mr;
}

/*
 * MRs whose iova is not their address.  The eMTT translates them (hits on
 * a second pass when it is on), the data is right across page and chunk
 * boundaries, and the end of the MR is its iova end.  An iova with
 * another offset inside a page than the address is refused by uverbs, so
 * every user MR is one the eMTT can cache.
 */
static void case_iova(struct ctx *c)
{
	uint8_t *buf = map_chunks(2);
	uint64_t iova = 0x40000000ULL + 0x300;
	bool emtt_on = mem_stat("emtt_stats", "Entries") > 0;
	struct ibv_mr *mr;
	uint64_t hits0;

	mr = reg_iova(c, buf + 0x300, CHUNK, iova);
	write_read_iova(c, mr, buf + 0x300 + 4000, iova + 4000, 70000, 91);
	hits0 = mem_stat("emtt_stats", "Hits");
	write_read_iova(c, mr, buf + 0x300 + 4000, iova + 4000, 70000, 92);
	CHECK(!emtt_on || mem_stat("emtt_stats", "Hits") - hits0 >= 2 * 18,
	      "second pass over an iova MR: %" PRIu64 " eMTT hits",
	      mem_stat("emtt_stats", "Hits") - hits0);
	write_read_iova(c, mr, buf + 0x300 + CHUNK - 1, iova + CHUNK - 1, 1,
			93);
	/* The same bytes by their address instead of their iova: refused. */
	CHECK(rdma_op(c, IBV_WR_RDMA_WRITE, 1, (uintptr_t)buf + 0x300 + 4000,
		      mr->rkey) == IBV_WC_REM_ACCESS_ERR,
	      "WRITE by address into an MR with another iova");
	reset_qps(c);
	CHECK(rdma_op(c, IBV_WR_RDMA_WRITE, 2, iova + CHUNK - 1, mr->rkey) ==
	      IBV_WC_REM_ACCESS_ERR, "WRITE past the end of an iova MR");
	reset_qps(c);
	CHECK(!ibv_dereg_mr(mr), "dereg");
	errno = 0;
	CHECK(!ibv_reg_mr_iova(c->pd, buf, CHUNK, 0x80001234ULL,
			       IBV_ACCESS_LOCAL_WRITE) && errno == EINVAL,
	      "an iova with another page offset than the address: %s",
	      strerror(errno));
	/* The QPs work again after the errors. */
	mr = reg(c, buf, CHUNK);
	write_read(c, mr, buf + 5, 5000, 94);
	CHECK(!ibv_dereg_mr(mr), "dereg");
}

/*
 * A single-packet WRITE that starts inside an MR and runs past its end,
 * with every page it touches cached by the eMTT: refused, and not one
 * byte of it written, not even the part inside the MR.
 */
static void case_edge(struct ctx *c)
{
	uint8_t *buf = map_anon(4 * PAGE);
	uint32_t len = 2 * PAGE + 100;
	struct ibv_mr *mr = reg(c, buf, len);
	enum ibv_wc_status st;
	uint8_t before[PAGE + 100];

	/* Touch both pages the WRITE will cover: their entries exist. */
	write_read(c, mr, buf + PAGE, PAGE + 100, 101);
	write_read(c, mr, buf + PAGE, PAGE + 100, 102);
	memcpy(before, buf + PAGE, sizeof(before));
	fill(c->src, 500, 103);
	st = rdma_op(c, IBV_WR_RDMA_WRITE, 500, (uintptr_t)buf + 2 * PAGE - 200,
		     mr->rkey);
	CHECK(st == IBV_WC_REM_ACCESS_ERR, "WRITE across the MR's end: %s",
	      ibv_wc_status_str(st));
	CHECK(!memcmp(before, buf + PAGE, sizeof(before)),
	      "a refused WRITE changed the MR");
	reset_qps(c);
	/* The same bytes but the last one past the end: refused too. */
	st = rdma_op(c, IBV_WR_RDMA_WRITE, 301, (uintptr_t)buf + 2 * PAGE - 200,
		     mr->rkey);
	CHECK(st == IBV_WC_REM_ACCESS_ERR, "WRITE one byte past the end: %s",
	      ibv_wc_status_str(st));
	CHECK(!memcmp(before, buf + PAGE, sizeof(before)),
	      "a refused WRITE changed the MR");
	reset_qps(c);
	/* Exactly up to the end: fine. */
	write_read(c, mr, buf + 2 * PAGE - 200, 300, 104);
	CHECK(!ibv_dereg_mr(mr), "dereg");
}

/* An access through @rkey at @raddr is refused by the responder. */
static void expect_refused(struct ctx *c, enum ibv_wr_opcode op,
			   uint64_t raddr, uint32_t rkey, const char *what)
{
	enum ibv_wc_status st = rdma_op(c, op, 4096, raddr, rkey);

	CHECK(st == IBV_WC_REM_ACCESS_ERR, "%s: %s", what,
	      ibv_wc_status_str(st));
	reset_qps(c);
}

/*
 * ibv_rereg_mr(): a new translation, new access rights and a new PD each
 * take effect at once, the old keys stop working, and a request that
 * fails leaves the MR as it was.
 */
static void case_rereg_verb(struct ctx *c)
{
	uint8_t *a = map_anon(CHUNK), *b = map_anon(CHUNK);
	struct ibv_mr *mr = reg(c, a, CHUNK);
	struct ibv_pd *pd2 = ibv_alloc_pd(c->ctx);
	uint32_t old_rkey = mr->rkey;
	uint8_t before[4096];
	int full = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		   IBV_ACCESS_REMOTE_READ;
	int ret;

	CHECK(pd2, "ibv_alloc_pd");
	write_read(c, mr, a, 65536, 61);

	/* Translation: A's first 2 MB become B's first 64 KB. */
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, b,
			   65536, 0);
	CHECK(!ret, "rereg translation: %d (%s)", ret, strerror(errno));
	CHECK(mr->addr == b && mr->length == 65536, "mr addr/length not updated");
	printf("rkey %#x -> %#x\n", old_rkey, mr->rkey);
	CHECK(mr->rkey != old_rkey, "the old rkey survived the rereg");
	write_read(c, mr, b, 65536, 62);
	expect_refused(c, IBV_WR_RDMA_WRITE, (uintptr_t)a, old_rkey,
		       "WRITE through the old rkey");
	expect_refused(c, IBV_WR_RDMA_READ, (uintptr_t)a, mr->rkey,
		       "READ of the old range");
	expect_refused(c, IBV_WR_RDMA_READ, (uintptr_t)b + 65536 - 100,
		       mr->rkey, "READ past the new length");

	/* Access: read-only for the peer. */
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	CHECK(!ret, "rereg access: %d (%s)", ret, strerror(errno));
	fill(b, 4096, 63);
	memcpy(before, b, sizeof(before));
	fill(c->src, 4096, 66);
	expect_refused(c, IBV_WR_RDMA_WRITE, (uintptr_t)b, mr->rkey,
		       "WRITE into a read-only MR");
	CHECK(!memcmp(before, b, sizeof(before)),
	      "a refused WRITE changed the read-only MR");
	memset(c->src, 0, 4096);
	CHECK(rdma_op(c, IBV_WR_RDMA_READ, 4096, (uintptr_t)b, mr->rkey) ==
	      IBV_WC_SUCCESS, "READ of the read-only MR");
	CHECK(!memcmp(c->src, b, 4096), "READ of the read-only MR: data");

	/* PD: the QPs' PD no longer reaches it; back with full access. */
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0);
	CHECK(!ret, "rereg pd: %d (%s)", ret, strerror(errno));
	CHECK(mr->pd == pd2, "mr->pd not updated");
	expect_refused(c, IBV_WR_RDMA_READ, (uintptr_t)b, mr->rkey,
		       "READ from another PD's MR");
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD |
			   IBV_REREG_MR_CHANGE_ACCESS, c->pd, NULL, 0, full);
	CHECK(!ret, "rereg pd and access: %d (%s)", ret, strerror(errno));
	write_read(c, mr, b, 65536, 64);

	/* A failed rereg (unmapped memory) leaves the MR working. */
	old_rkey = mr->rkey;
	CHECK(!munmap(a, CHUNK), "munmap");
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, a,
			   CHUNK, 0);
	CHECK(ret == IBV_REREG_MR_ERR_CMD, "rereg to unmapped memory: %d", ret);
	CHECK(mr->rkey == old_rkey && mr->addr == b, "a failed rereg changed the MR");
	write_read(c, mr, b + 4096, 8192, 65);
	ret = ibv_rereg_mr(mr, 0, NULL, NULL, 0, 0);
	CHECK(ret == IBV_REREG_MR_ERR_CMD, "rereg with no flags: %d", ret);
	write_read(c, mr, b, 4096, 67);
	CHECK(!ibv_dereg_mr(mr), "dereg");
	CHECK(!ibv_dealloc_pd(pd2), "dealloc pd2");
}

/* Replace [@p, @p + @len) with fresh anonymous memory full of @byte. */
static void remap(uint8_t *p, size_t len, uint8_t byte)
{
	CHECK(mmap(p, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == p,
	      "mmap MAP_FIXED: %s", strerror(errno));
	memset(p, byte, len);
}

struct remapper {
	uint8_t *buf;
	atomic_bool stop;
	unsigned long rounds;
};

static void *remap_loop(void *arg)
{
	struct remapper *r = arg;

	while (!atomic_load(&r->stop)) {
		remap(r->buf, CHUNK, (uint8_t)r->rounds);
		r->rounds++;
	}
	return NULL;
}

/*
 * An IBV_ACCESS_ON_DEMAND MR follows the address space: after its range
 * is mapped anew, READs return and WRITEs land in the new pages (a plain
 * MR keeps the pages it pinned); after a fork the parent's own pages; an
 * unmapped part is refused.  Then the range is remapped over and over
 * under traffic: every operation completes and the kernel log stays
 * clean (checked by the test script).
 */
static void case_odp_follow(struct ctx *c)
{
	uint8_t *buf = map_chunks(2);
	uint64_t inval0 = pvdma_stat("ODP invalidations");
	struct remapper r = { .buf = buf };
	struct ibv_mr *mr;
	pthread_t thread;
	enum ibv_wc_status st;
	unsigned long ops = 0;
	int status, i;
	pid_t pid;

	memset(buf, 0x11, 2 * CHUNK);
	mr = ibv_reg_mr(c->pd, buf, 2 * CHUNK, IBV_ACCESS_ON_DEMAND |
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	CHECK(mr, "ON_DEMAND registration: %s", strerror(errno));
	write_read(c, mr, buf, 65536, 91);

	for (i = 0; i < 20; i++) {
		remap(buf, CHUNK, 0x40 + i);
		memset(c->src, 0, 65536);
		st = rdma_op(c, IBV_WR_RDMA_READ, 65536, (uintptr_t)buf + 4096,
			     mr->rkey);
		CHECK(st == IBV_WC_SUCCESS, "READ after remap: %s",
		      ibv_wc_status_str(st));
		CHECK(c->src[0] == 0x40 + i && c->src[65535] == 0x40 + i,
		      "READ after remap %d returned %#x, not the new pages",
		      i, c->src[0]);
		write_read(c, mr, buf + 8192, 4096, 92 + i);
	}
	CHECK(pvdma_stat("ODP invalidations") > inval0,
	      "remapping the range invalidated nothing");

	/* Atomics reach the new pages too. */
	remap(buf, CHUNK, 0);
	CHECK(atomic_op(c, IBV_WR_ATOMIC_FETCH_AND_ADD, (uintptr_t)buf, mr->rkey,
			5, 0) == 0, "fetch-add on new pages: old value");
	CHECK(*(uint64_t *)buf == 5, "fetch-add did not reach the new page");

	/* After a fork the parent's pages are the MR's. */
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid)
		_exit(0);
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	memset(buf + CHUNK, 0x5e, 4096);
	memset(c->src, 0, 4096);
	CHECK(rdma_op(c, IBV_WR_RDMA_READ, 4096, (uintptr_t)buf + CHUNK,
		      mr->rkey) == IBV_WC_SUCCESS, "READ after fork");
	CHECK(c->src[0] == 0x5e && c->src[4095] == 0x5e,
	      "READ after fork did not see the parent's writes");
	write_read(c, mr, buf + CHUNK, 4096, 120);

	/* An unmapped part is refused, the rest keeps working. */
	CHECK(!munmap(buf + CHUNK, CHUNK), "munmap");
	st = rdma_op(c, IBV_WR_RDMA_READ, 4096, (uintptr_t)buf + CHUNK,
		     mr->rkey);
	CHECK(st != IBV_WC_SUCCESS, "READ of unmapped ODP memory succeeded");
	reset_qps(c);
	remap(buf + CHUNK, CHUNK, 0x22);
	write_read(c, mr, buf + CHUNK, 4096, 121);

	/* Remapped over and over under traffic. */
	CHECK(!pthread_create(&thread, NULL, remap_loop, &r), "pthread_create");
	for (i = 0; i < 300; i++) {
		st = rdma_op(c, i & 1 ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE,
			     16384, (uintptr_t)buf + (i % 64) * 16384,
			     mr->rkey);
		CHECK(st == IBV_WC_SUCCESS, "op %d under remapping: %s", i,
		      ibv_wc_status_str(st));
		ops++;
	}
	atomic_store(&r.stop, true);
	CHECK(!pthread_join(thread, NULL), "pthread_join");
	printf("%lu ops under %lu remaps, %" PRIu64 " invalidations\n", ops,
	       r.rounds, pvdma_stat("ODP invalidations") - inval0);
	write_read(c, mr, buf, 65536, 122);
	CHECK(!ibv_dereg_mr(mr), "dereg");
}

/* Bytes of slab memory charged to this process's memory cgroup. */
static long cgroup_slab_bytes(void)
{
	char line[512], path[600];
	long value = -1;
	FILE *f;

	f = fopen("/proc/self/cgroup", "r");
	CHECK(f && fgets(line, sizeof(line), f), "/proc/self/cgroup");
	fclose(f);
	line[strcspn(line, "\n")] = 0;
	CHECK(!strncmp(line, "0::", 3), "not a cgroup v2 process: %s", line);
	snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.stat", line + 3);
	f = fopen(path, "r");
	CHECK(f, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "slab %ld", &value) == 1)
			break;
	fclose(f);
	CHECK(value >= 0, "no slab line in %s", path);
	return value;
}

/*
 * An implicit on-demand MR pins page by page, each with a description
 * the transport's worker allocates: those are charged to the memory
 * cgroup of the process that registered the MR (run this case in one of
 * its own, as mem_pvdma.sh does), not to the worker's.
 */
static void case_odp_charge(struct ctx *c)
{
	const unsigned long pages = 4096;
	uint8_t *buf = map_chunks(pages * 4096 / CHUNK);
	long before, after;
	struct ibv_mr *mr;
	unsigned long i;

	mr = ibv_reg_mr(c->pd, NULL, SIZE_MAX, IBV_ACCESS_ON_DEMAND |
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	CHECK(mr, "implicit ODP registration: %s", strerror(errno));
	memset(c->src, 0x3c, 64);
	before = cgroup_slab_bytes();
	for (i = 0; i < pages; i++)
		CHECK(rdma_op(c, IBV_WR_RDMA_WRITE, 64,
			      (uintptr_t)buf + i * 4096, mr->rkey) ==
		      IBV_WC_SUCCESS, "WRITE to page %lu", i);
	after = cgroup_slab_bytes();
	CHECK(buf[(pages - 1) * 4096] == 0x3c, "the last WRITE did not land");
	printf("%lu pages pinned one by one: the cgroup's slab grew by %ld bytes\n",
	       pages, after - before);
	CHECK(after - before >= (long)pages * 64,
	      "%ld bytes charged for %lu pin descriptions", after - before,
	      pages);
	CHECK(!ibv_dereg_mr(mr), "dereg");
}

/*
 * Implicit ODP: ibv_reg_mr(pd, NULL, SIZE_MAX, IBV_ACCESS_ON_DEMAND | ...)
 * covers the whole address space, and query_device_ex says so.  Memory
 * mapped after the registration, a malloc'd buffer, the stack and a range
 * across a 2 MB boundary take WRITEs and READs through its rkey; a range
 * mapped anew shows its new pages; atomics land; its lkey serves a local
 * buffer registered by nothing else; an unmapped address and a kernel
 * address are refused and the QP recovers; deregistration unpins all.
 */
static void case_odp_implicit(struct ctx *c)
{
	uint64_t pinned0 = pvdma_stat("Pinned bytes");
	struct ibv_device_attr_ex attr = {};
	uint8_t stack_buf[4096];
	enum ibv_wc_status st;
	uint8_t *buf, *heap;
	struct ibv_mr *mr;

	CHECK(!ibv_query_device_ex(c->ctx, NULL, &attr), "query_device_ex");
	CHECK(attr.odp_caps.general_caps & IBV_ODP_SUPPORT_IMPLICIT,
	      "implicit ODP is not advertised");
	mr = ibv_reg_mr(c->pd, NULL, SIZE_MAX, IBV_ACCESS_ON_DEMAND |
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	CHECK(mr, "implicit ODP registration: %s", strerror(errno));

	buf = map_chunks(2);
	write_read(c, mr, buf, 65536, 140);
	write_read(c, mr, buf + CHUNK - 4096, 8192, 141);
	heap = malloc(3 * 4096 + 123);
	CHECK(heap, "malloc");
	write_read(c, mr, heap + 123, 3 * 4096, 142);
	free(heap);
	write_read(c, mr, stack_buf, sizeof(stack_buf), 143);

	remap(buf, CHUNK, 0x6a);
	memset(c->src, 0, 4096);
	st = rdma_op(c, IBV_WR_RDMA_READ, 4096, (uintptr_t)buf + 4096,
		     mr->rkey);
	CHECK(st == IBV_WC_SUCCESS && c->src[0] == 0x6a && c->src[4095] == 0x6a,
	      "READ after remap: %s, %#x", ibv_wc_status_str(st), c->src[0]);

	*(uint64_t *)(buf + CHUNK) = 40;
	CHECK(atomic_op(c, IBV_WR_ATOMIC_FETCH_AND_ADD,
			(uintptr_t)(buf + CHUNK), mr->rkey, 2, 0) == 40,
	      "fetch-add: old value");
	CHECK(*(uint64_t *)(buf + CHUNK) == 42, "fetch-add did not land");

	/* Its lkey: from buf to buf + 64 KB, both through the one MR. */
	fill(buf, 4096, 144);
	memset(buf + 65536, 0, 4096);
	st = rdma_op_sge(c, IBV_WR_RDMA_WRITE, (uintptr_t)buf, mr->lkey, 4096,
			 (uintptr_t)buf + 65536, mr->rkey);
	CHECK(st == IBV_WC_SUCCESS && !memcmp(buf, buf + 65536, 4096),
	      "WRITE with the implicit lkey: %s", ibv_wc_status_str(st));

	CHECK(!munmap(buf + CHUNK, CHUNK), "munmap");
	st = rdma_op(c, IBV_WR_RDMA_READ, 4096, (uintptr_t)buf + CHUNK,
		     mr->rkey);
	CHECK(st != IBV_WC_SUCCESS, "READ of unmapped memory succeeded");
	reset_qps(c);
	st = rdma_op(c, IBV_WR_RDMA_WRITE, 8, 0xffff888000000000ULL, mr->rkey);
	CHECK(st != IBV_WC_SUCCESS, "WRITE to a kernel address succeeded");
	reset_qps(c);
	write_read(c, mr, buf, 4096, 145);
	CHECK(!ibv_dereg_mr(mr), "dereg");
	CHECK(pvdma_stat("Pinned bytes") == pinned0,
	      "pinned bytes %" PRIu64 " after deregistration, %" PRIu64
	      " before", pvdma_stat("Pinned bytes"), pinned0);
}

/* Post one ATOMIC WRITE of @value to @raddr; its completion's status. */
static enum ibv_wc_status atomic_write(struct ctx *c, uint64_t raddr,
				       uint32_t rkey, uint64_t value,
				       enum ibv_wc_opcode *opcode)
{
	struct ibv_sge sge = { .addr = (uintptr_t)&value, .length = 8 };
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_ATOMIC_WRITE, .sg_list = &sge, .num_sge = 1,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;
	struct timespec t0, now;
	struct ibv_wc wc;
	int n;

	CHECK(!ibv_post_send(c->qp_a, &wr, &bad), "post ATOMIC WRITE: %s",
	      strerror(errno));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!(n = ibv_poll_cq(c->cq, 1, &wc))) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		CHECK(now.tv_sec - t0.tv_sec < 30 * timeout_scale(),
		      "no completion in %u s", 30 * timeout_scale());
	}
	CHECK(n == 1, "ibv_poll_cq");
	*opcode = wc.opcode;
	return wc.status;
}

/*
 * IBV_WR_ATOMIC_WRITE: 8 bytes land at an aligned address after the data
 * posted before them, the completion says ATOMIC_WRITE; a misaligned
 * address is refused at post, an MR without remote write access by the
 * responder.
 */
static void case_atomic_write(struct ctx *c)
{
	uint8_t *buf = map_anon(CHUNK);
	struct ibv_mr *mr = reg(c, buf, CHUNK), *ro;
	uint64_t value = 0x1122334455667788ULL;
	struct ibv_sge sge = { .addr = (uintptr_t)&value, .length = 8 };
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_ATOMIC_WRITE, .sg_list = &sge, .num_sge = 1,
		.wr.rdma = { .remote_addr = (uintptr_t)buf + 4, .rkey = mr->rkey },
	}, *bad;
	enum ibv_wc_opcode opcode;
	enum ibv_wc_status st;
	int i;

	for (i = 0; i < 16; i++) {
		/* A 64 KB WRITE, then the flag after it. */
		fill(c->src, 65536, 200 + i);
		st = rdma_op(c, IBV_WR_RDMA_WRITE, 65536, (uintptr_t)buf + 4096,
			     mr->rkey);
		CHECK(st == IBV_WC_SUCCESS, "WRITE: %s", ibv_wc_status_str(st));
		st = atomic_write(c, (uintptr_t)buf + 8 * i, mr->rkey,
				  value + i, &opcode);
		CHECK(st == IBV_WC_SUCCESS && opcode == IBV_WC_ATOMIC_WRITE,
		      "ATOMIC WRITE %d: %s, opcode %d", i,
		      ibv_wc_status_str(st), opcode);
		CHECK(((uint64_t *)buf)[i] == value + i,
		      "ATOMIC WRITE %d stored %#" PRIx64, i,
		      ((uint64_t *)buf)[i]);
		CHECK(!memcmp(buf + 4096, c->src, 65536),
		      "the WRITE before the flag is not all there");
	}
	CHECK(((uint64_t *)buf)[16] == 0, "a byte past the last target changed");
	CHECK(ibv_post_send(c->qp_a, &wr, &bad) == EINVAL,
	      "a misaligned ATOMIC WRITE was posted");

	ro = ibv_reg_mr(c->pd, buf, CHUNK, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	CHECK(ro, "ibv_reg_mr: %s", strerror(errno));
	st = atomic_write(c, (uintptr_t)buf + 256, ro->rkey, value, &opcode);
	CHECK(st == IBV_WC_REM_ACCESS_ERR,
	      "ATOMIC WRITE without remote write access: %s",
	      ibv_wc_status_str(st));
	CHECK(((uint64_t *)buf)[32] == 0, "a refused ATOMIC WRITE stored");
	reset_qps(c);
	CHECK(!ibv_dereg_mr(ro), "dereg");
	CHECK(!ibv_dereg_mr(mr), "dereg");
}

/* ---- deregistration and re-registration under traffic --------------- */

#define RACE_LEN	(64 * PAGE)	/* READs in the first half, WRITEs in the second */
#define RACE_ROUNDS	40

struct race {
	struct ctx *c;
	uint8_t *buf;
	atomic_uint gen;	/* odd: the MR is being replaced */
	atomic_uint rkey;
	atomic_bool stop;
	/* traffic results */
	unsigned long reads_checked, writes_checked, errors, ops;
	char failure[256];
};

static uint8_t race_pattern(unsigned int gen)
{
	return (uint8_t)(0x10 + (gen / 2) % 200);
}

/*
 * One operation of the traffic thread: READ from the first half or WRITE
 * into the second half of the buffer, through the rkey current when it
 * starts.  Returns false (with race->failure set) on a wrong result.
 */
static bool race_op(struct race *r, struct ibv_qp *qp, struct ibv_cq *cq,
		    uint8_t *local, uint32_t lkey, unsigned int n)
{
	bool is_read = n % 2 == 0;
	uint32_t len = PAGE * (1 + n % 3) + (n % 5) * 100;
	uint64_t off = (n * 7919 % 29) * PAGE + (n % 7) * 13;
	uint8_t *dst = r->buf + off + (is_read ? 0 : RACE_LEN / 2);
	unsigned int g0 = atomic_load(&r->gen), g1;
	struct ibv_sge sge = { .addr = (uintptr_t)local, .length = len,
			       .lkey = lkey };
	struct ibv_send_wr wr = {
		.opcode = is_read ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE,
		.sg_list = &sge, .num_sge = 1, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)dst,
			     .rkey = atomic_load(&r->rkey) },
	}, *bad;
	struct ibv_wc wc;
	bool stable;
	uint32_t i;
	int got;

	if (is_read)
		memset(local, 0, len);
	else
		memset(local, 0xe0 + n % 16, len);
	if (ibv_post_send(qp, &wr, &bad)) {
		snprintf(r->failure, sizeof(r->failure), "post: %s",
			 strerror(errno));
		return false;
	}
	while (!(got = ibv_poll_cq(cq, 1, &wc)))
		;
	g1 = atomic_load(&r->gen);
	stable = g0 == g1 && g0 % 2 == 0;
	r->ops++;
	if (got < 0 || wc.status != IBV_WC_SUCCESS) {
		r->errors++;
		if (stable) {
			snprintf(r->failure, sizeof(r->failure),
				 "%s of %u bytes failed (%s) while the MR stayed registered",
				 is_read ? "READ" : "WRITE", len,
				 got < 0 ? "poll" : ibv_wc_status_str(wc.status));
			return false;
		}
		return true;
	}
	if (!stable)
		return true;
	for (i = 0; i < len; i++) {
		uint8_t want = is_read ? race_pattern(g0) : 0xe0 + n % 16;
		uint8_t seen = is_read ? local[i] : dst[i];

		/* The buffer may be remapped under a WRITE's check. */
		if (seen != want && !is_read && atomic_load(&r->gen) != g0)
			return true;
		if (seen != want) {
			snprintf(r->failure, sizeof(r->failure),
				 "%s of %u bytes at +%#" PRIx64 " (generation %u): byte %u is %#x, want %#x%s",
				 is_read ? "READ" : "WRITE", len, off, g0, i,
				 seen, want,
				 is_read && seen == race_pattern(g0 - 2) ?
				 " (the previous registration's pages)" : "");
			return false;
		}
	}
	if (is_read)
		r->reads_checked++;
	else
		r->writes_checked++;
	return true;
}

static void *race_traffic(void *arg)
{
	struct race *r = arg;
	struct ctx *c = r->c;
	struct ibv_cq *cq = ibv_create_cq(c->ctx, 16, NULL, NULL, 0);
	struct ctx mine = { .ctx = c->ctx, .pd = c->pd, .cq = cq };
	uint8_t *local = map_anon(4 * PAGE);
	struct ibv_mr *local_mr = reg(c, local, 4 * PAGE);
	union ibv_gid gid;
	unsigned int n = 0;

	CHECK(cq, "ibv_create_cq");
	CHECK(!ibv_query_gid(c->ctx, 1, gid_index, &gid), "ibv_query_gid");
	mine.qp_a = make_qp(&mine);
	mine.qp_b = make_qp(&mine);
	connect_qp(mine.qp_a, mine.qp_b, &gid);
	connect_qp(mine.qp_b, mine.qp_a, &gid);
	while (!atomic_load(&r->stop)) {
		unsigned long errors = r->errors;

		if (!race_op(r, mine.qp_a, cq, local, local_mr->lkey, n++))
			break;
		if (r->errors != errors)
			reset_pair(&mine, mine.qp_a, mine.qp_b);
	}
	ibv_destroy_qp(mine.qp_a);
	ibv_destroy_qp(mine.qp_b);
	ibv_dereg_mr(local_mr);
	ibv_destroy_cq(cq);
	return NULL;
}

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/*
 * A peer hammers READs and WRITEs at an MR while it is deregistered and
 * a new MR is registered at the same address, with new pages, which gets
 * the same key index (its key byte is random, so the same whole key only
 * by chance, one round in 256).  An operation that ran
 * while the MR stayed registered must succeed and see exactly that
 * registration's pages: never the old pages through a stale eMTT entry,
 * never a WRITE lost into them.  Operations that overlap the switch may
 * fail with an access error.
 */
#define REUSE_TRIES	16

/*
 * Register @buf so that the MR takes the key index of @key0 (the key byte
 * is random; the table slot is what must be reused).  The device gives
 * the lowest free index: a lower one freed meanwhile (a release the
 * kernel finished late) is taken by a filler MR, kept until the wanted
 * index comes up.
 */
static struct ibv_mr *reg_same_index(struct ctx *c, void *buf, size_t len,
				     uint32_t key0)
{
	struct ibv_mr *filler[REUSE_TRIES], *mr;
	int n = 0, i;

	for (;;) {
		mr = reg(c, buf, len);
		if (mr->rkey >> 8 == key0 >> 8)
			break;
		CHECK(n < REUSE_TRIES && mr->rkey >> 8 < key0 >> 8,
		      "the new MR got key %#x, index not that of %#x: the "
		      "test needs the key index reused", mr->rkey, key0);
		filler[n++] = mr;
	}
	for (i = 0; i < n; i++)
		CHECK(!ibv_dereg_mr(filler[i]), "dereg filler");
	return mr;
}

/* STELLAR_TIMEOUT_SCALE: how many times slower the guest's kernel runs. */
static void case_rereg_race(struct ctx *c)
{
	struct race r = { .c = c };
	uint64_t hits0 = mem_stat("emtt_stats", "Hits");
	double dereg_us = 0, t0;
	struct ibv_mr *mr;
	pthread_t thread;
	unsigned int round;
	uint32_t key0;

	r.buf = map_anon(RACE_LEN);
	memset(r.buf, race_pattern(0), RACE_LEN / 2);
	mr = reg(c, r.buf, RACE_LEN);
	key0 = mr->rkey;
	atomic_store(&r.rkey, mr->rkey);
	CHECK(!pthread_create(&thread, NULL, race_traffic, &r),
	      "pthread_create");
	for (round = 1; round <= RACE_ROUNDS && !r.failure[0]; round++) {
		/* Slower kernels (make kasan) need longer between switches. */
		usleep((20000 + (round % 4) * 15000) * timeout_scale());
		atomic_store(&r.gen, 2 * round - 1);
		t0 = now_us();
		CHECK(!ibv_dereg_mr(mr), "dereg");
		dereg_us += now_us() - t0;
		CHECK(mmap(r.buf, RACE_LEN, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
		      r.buf, "mmap MAP_FIXED");
		memset(r.buf, race_pattern(2 * round), RACE_LEN / 2);
		mr = reg_same_index(c, r.buf, RACE_LEN, key0);
		atomic_store(&r.rkey, mr->rkey);
		atomic_store(&r.gen, 2 * round);
	}
	usleep(50000);
	atomic_store(&r.stop, true);
	pthread_join(thread, NULL);
	printf("%u rounds, %lu ops: %lu READs and %lu WRITEs checked, %lu "
	       "access errors; eMTT hits %" PRIu64 "; ibv_dereg_mr %.0f us "
	       "on average\n", round - 1, r.ops, r.reads_checked,
	       r.writes_checked, r.errors,
	       mem_stat("emtt_stats", "Hits") - hits0,
	       dereg_us / (round - 1));
	CHECK(!r.failure[0], "%s", r.failure);
	CHECK(r.reads_checked >= RACE_ROUNDS && r.writes_checked >= RACE_ROUNDS,
	      "too little traffic between the switches to prove anything");
	CHECK(mem_stat("emtt_stats", "Entries") == 0 ||
	      mem_stat("emtt_stats", "Hits") > hits0,
	      "the traffic never hit the eMTT");
	CHECK(!ibv_dereg_mr(mr), "dereg");
}

static const struct {
	const char *name;
	void (*run)(struct ctx *c);
} cases[] = {
	{ "boundaries", case_boundaries }, { "tiny", case_tiny },
	{ "atomic", case_atomic }, { "prefetch", case_prefetch },
	{ "fork", case_fork }, { "unmapped", case_unmapped },
	{ "rereg", case_rereg }, { "rereg_verb", case_rereg_verb },
	{ "hugetlb", case_hugetlb },
	{ "memlock", case_memlock }, { "exit", case_exit },
	{ "random", case_random }, { "odp", case_odp },
	{ "odp_follow", case_odp_follow }, { "atomic_write", case_atomic_write },
	{ "odp_implicit", case_odp_implicit },
	{ "odp_charge", case_odp_charge },
	{ "concurrent", case_concurrent }, { "iova", case_iova },
	{ "rereg_race", case_rereg_race }, { "edge", case_edge },
};

int main(int argc, char **argv)
{
	struct ctx c = {};
	size_t i;
	int opt;

	while ((opt = getopt(argc, argv, "d:g:")) != -1) {
		if (opt == 'd')
			dev_name = optarg;
		else if (opt == 'g')
			gid_index = atoi(optarg);
		else
			return 2;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: pvdma_test -d DEV -g GID_INDEX CASE\n");
		return 2;
	}
	case_name = argv[optind];
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (strcmp(cases[i].name, case_name))
			continue;
		if (cases[i].run == case_memlock)
			memlock_prepare();
		setup(&c);
		cases[i].run(&c);
		printf("ok %s\n", case_name);
		return 0;
	}
	fprintf(stderr, "unknown case '%s'\n", case_name);
	return 2;
}
