// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: the eMTT index function and entry checks (see
 * stellar_emtt_index.h).
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include "stellar_emtt_index.h"

u32 stellar_emtt_nslots(u32 size_thousands)
{
	return size_thousands * STELLAR_EMTT_SIZE_UNIT;
}

/* The splitmix64 finaliser: every input bit affects every output bit. */
u64 stellar_emtt_base(u64 key)
{
	u64 x = key + 0x9e3779b97f4a7c15ULL;

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

u32 stellar_emtt_slot(u64 base, u64 page_index, u32 nslots)
{
	/* Reduce each term first: the sum cannot wrap around 2^64. */
	return (u32)(((base % nslots) + (page_index % nslots)) % nslots);
}

u32 stellar_emtt_index(u32 key, u64 iova_page, u32 nslots)
{
	return stellar_emtt_slot(stellar_emtt_base(key), iova_page, nslots);
}

bool stellar_emtt_mr_eligible(const struct stellar_emtt_mr *mr,
			      u64 user_start, u32 page_shift)
{
	u64 page_mask = (1ULL << page_shift) - 1;

	if (!mr->serial || !mr->length)
		return false;
	if (mr->iova + (mr->length - 1) < mr->iova)
		return false;
	return ((mr->iova - user_start) & page_mask) == 0;
}

u64 stellar_emtt_iova_page(const struct stellar_emtt_mr *mr, u64 user_start,
			   u64 user_addr, u32 page_shift)
{
	return (mr->iova + (user_addr - user_start)) >> page_shift;
}

bool stellar_emtt_tag_init(struct stellar_emtt_tag *tag,
			   const struct stellar_emtt_mr *mr, u64 iova_page,
			   u32 page_shift)
{
	u64 page_first = iova_page << page_shift;
	u64 page_last = page_first + ((1ULL << page_shift) - 1);
	u64 mr_last = mr->iova + (mr->length - 1);

	memset(tag, 0, sizeof(*tag));
	if (!mr->length || mr_last < mr->iova ||
	    page_first >> page_shift != iova_page ||
	    page_last < mr->iova || page_first > mr_last)
		return false;
	tag->serial = mr->serial;
	tag->iova_page = iova_page;
	tag->pd = mr->pd;
	tag->key = mr->key;
	tag->access = mr->access;
	tag->valid_first = (u32)((page_first < mr->iova ? mr->iova :
				  page_first) - page_first);
	tag->valid_end = (u32)((page_last > mr_last ? mr_last : page_last) -
			       page_first) + 1;
	return true;
}

bool stellar_emtt_tag_allows(const struct stellar_emtt_tag *tag,
			     const struct stellar_emtt_req *req, u64 iova,
			     u32 len, u32 page_shift)
{
	u64 in_page = iova & ((1ULL << page_shift) - 1);

	if (!tag->serial || tag->key != req->key || tag->pd != req->pd ||
	    tag->iova_page != iova >> page_shift)
		return false;
	if ((tag->access & req->access) != req->access)
		return false;
	return in_page >= tag->valid_first && len <= tag->valid_end &&
	       in_page <= tag->valid_end - len;
}
