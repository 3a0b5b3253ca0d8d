/* SPDX-License-Identifier: GPL-2.0 */
/*
 * virtio-stellar: the key table shared by memory regions (stellar_mr.c)
 * and memory windows (stellar_mw.c).  Both kinds live in the device's MR
 * table as struct stellar_mr entries; a window's entry has mw.type set.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_MR_H
#define STELLAR_MR_H

#include "stellar.h"

/**
 * struct stellar_key_use - what an access through a key holds
 * @mr: the region whose memory is copied
 * @mw: the window the key named, or NULL
 */
struct stellar_key_use {
	struct stellar_mr *mr;
	struct stellar_mr *mw;
};

u32 stellar_key_index(u32 key);
struct stellar_mr *stellar_mr_alloc(struct ib_pd *ibpd, int access);
int stellar_mr_publish(struct stellar_dev *sdev, struct stellar_mr *mr);
void stellar_mr_unpublish(struct stellar_dev *sdev, struct stellar_mr *mr);
void stellar_mr_free(struct stellar_dev *sdev, struct stellar_mr *mr);
struct stellar_mr *stellar_mr_get(struct stellar_pd *pd, u32 key);
void stellar_mr_put(struct stellar_mr *mr);
bool stellar_mr_in_range(const struct stellar_mr *mr, u64 iova, u64 len);
void stellar_mr_copy_begin(struct stellar_mr *mr);
void stellar_mr_copy_end(struct stellar_mr *mr);
void stellar_mr_fence(struct stellar_mr *mr);
int stellar_mr_check(struct stellar_mr *mr, struct stellar_pd *pd, u32 key,
		     bool remote, u64 iova, u64 len, int access);
int stellar_key_enter(struct stellar_pd *pd, const struct stellar_qp *remote,
		      u32 key, u64 iova, u64 len, int access,
		      struct stellar_key_use *use);
void stellar_key_exit(struct stellar_key_use *use);

/**
 * stellar_mw_enter() - enter the region a checked window opens
 * @use: @use->mr is the window's entry, checked and entered; on success
 *	 it moves to @use->mw and @use->mr becomes the region
 * @pd: the PD of the access
 * @remote: the QP the request came in on
 * @iova: first address
 * @len: bytes
 * @access: the remote rights the access needs
 *
 * Return: 0, or -EACCES if the window is bound to another QP or its
 * region is gone.
 */
int stellar_mw_enter(struct stellar_key_use *use, struct stellar_pd *pd,
		     const struct stellar_qp *remote, u64 iova, u64 len,
		     int access);
int stellar_mw_invalidate(struct stellar_mr *mw, struct stellar_pd *pd,
			  u32 rkey, const struct stellar_qp *remote);

#endif /* STELLAR_MR_H */
