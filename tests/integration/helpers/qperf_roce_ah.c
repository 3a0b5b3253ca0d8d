// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copyright (c) 2026 The virtio-stellar authors
 *
 * LD_PRELOAD shim that lets qperf's UD tests run over RoCE.
 *
 * qperf (0.4.11, as upstream) builds the address handle of its UD tests
 * from the peer's LID alone, without a GRH.  RoCE has no LIDs: the RDMA
 * core refuses such an address handle on every RoCE device, so ud_bw and
 * ud_lat fail with "failed to create address handle" before sending
 * anything.  This shim supplies the GRH qperf leaves out: ibv_create_ah()
 * of an address without one gets the destination GID
 * ::ffff:$ROCE_AH_PEER_IPV4 and the source GID index $ROCE_AH_SGID_INDEX.
 * Address handles that have a GRH pass unchanged; nothing else changes.
 *
 *   gcc -shared -fPIC -o qperf_roce_ah.so qperf_roce_ah.c
 *   LD_PRELOAD=./qperf_roce_ah.so ROCE_AH_PEER_IPV4=10.1.0.1 \
 *           ROCE_AH_SGID_INDEX=1 qperf ...
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

typedef struct ibv_ah *(*create_ah_fn)(struct ibv_pd *pd,
				       struct ibv_ah_attr *attr);

/* Fills in the GRH from the environment; 0 or an errno. */
static int add_grh(struct ibv_ah_attr *attr)
{
	const char *peer = getenv("ROCE_AH_PEER_IPV4");
	const char *index = getenv("ROCE_AH_SGID_INDEX");
	struct in_addr addr;
	char *end;
	long sgid_index;

	if (!peer || inet_pton(AF_INET, peer, &addr) != 1 || !index) {
		fprintf(stderr,
			"qperf_roce_ah: set ROCE_AH_PEER_IPV4 and ROCE_AH_SGID_INDEX\n");
		return EINVAL;
	}
	sgid_index = strtol(index, &end, 10);
	if (*end || sgid_index < 0 || sgid_index > 255) {
		fprintf(stderr, "qperf_roce_ah: bad ROCE_AH_SGID_INDEX '%s'\n",
			index);
		return EINVAL;
	}
	memset(&attr->grh, 0, sizeof(attr->grh));
	attr->grh.dgid.raw[10] = 0xff;
	attr->grh.dgid.raw[11] = 0xff;
	memcpy(&attr->grh.dgid.raw[12], &addr, sizeof(addr));
	attr->grh.sgid_index = sgid_index;
	attr->grh.hop_limit = 64;
	attr->is_global = 1;
	return 0;
}

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	create_ah_fn real_create_ah;
	struct ibv_ah_attr with_grh = *attr;
	int ret;

	real_create_ah = (create_ah_fn)dlvsym(RTLD_NEXT, "ibv_create_ah",
					      "IBVERBS_1.1");
	if (!real_create_ah) {
		errno = ENOSYS;
		return NULL;
	}
	if (attr->is_global)
		return real_create_ah(pd, attr);
	ret = add_grh(&with_grh);
	if (ret) {
		errno = ret;
		return NULL;
	}
	return real_create_ah(pd, &with_grh);
}
