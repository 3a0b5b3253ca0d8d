/* SPDX-License-Identifier: GPL-2.0 */
/*
 * virtio-stellar: where an eMTT translation lives in the device's table,
 * and what an entry must hold for a copy to use it without looking the
 * MR up.
 *
 * Portable (kernel and tests/unit): no allocation, locking or logging.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_EMTT_INDEX_H
#define STELLAR_EMTT_INDEX_H

#include "stellar_portable.h"

/* emtt_cache_size counts entries in thousands. */
#define STELLAR_EMTT_SIZE_UNIT	1000U

/**
 * struct stellar_emtt_mr - what the eMTT knows of a registration
 * @serial: device-unique number of the registration, never reused (not 0)
 * @iova: I/O virtual address of the MR's first byte
 * @length: bytes
 * @pd: the protection domain the MR belongs to (compared, never followed)
 * @key: the MR's lkey, equal to its rkey (index << 8 | variant)
 * @access: IB_ACCESS_* flags of the MR
 */
struct stellar_emtt_mr {
	u64 serial;
	u64 iova;
	u64 length;
	const void *pd;
	u32 key;
	u32 access;
};

/**
 * struct stellar_emtt_tag - what an entry holds besides the page
 * @serial: the registration's serial (0: the entry is empty)
 * @iova_page: iova >> page_shift of the page
 * @pd: the registration's protection domain
 * @key: the registration's key
 * @access: the registration's IB_ACCESS_* flags
 * @valid_first: first byte of the page that lies inside the MR
 * @valid_end: one past the last byte of the page inside the MR
 */
struct stellar_emtt_tag {
	u64 serial;
	u64 iova_page;
	const void *pd;
	u32 key;
	u32 access;
	u32 valid_first;
	u32 valid_end;
};

/**
 * struct stellar_emtt_req - what a copy asks for
 * @pd: the PD of the QP doing the copy
 * @key: the lkey or rkey it names
 * @access: IB_ACCESS_* flags it needs
 */
struct stellar_emtt_req {
	const void *pd;
	u32 key;
	u32 access;
};

/**
 * stellar_emtt_nslots() - table entries for an emtt_cache_size setting
 * @size_thousands: the setting; 0 turns the cache off
 *
 * Return: the number of entries (0: no cache).
 */
u32 stellar_emtt_nslots(u32 size_thousands);

/**
 * stellar_emtt_base() - where a key's page 0 lands
 * @key: an MR key (or any 64-bit value)
 *
 * Return: a well-mixed 64-bit value; different keys start at unrelated
 * places so that they do not evict each other systematically.
 */
u64 stellar_emtt_base(u64 key);

/**
 * stellar_emtt_slot() - the entry that may hold a translation
 * @base: stellar_emtt_base() of the key
 * @page_index: page number (the iova page)
 * @nslots: table size, not 0
 *
 * Consecutive pages of one key use consecutive entries (modulo @nslots),
 * so a run of up to @nslots pages never evicts itself.
 *
 * Return: an index below @nslots.
 */
u32 stellar_emtt_slot(u64 base, u64 page_index, u32 nslots);

/**
 * stellar_emtt_index() - the entry of (key, iova page)
 * @key: the key a copy names
 * @iova_page: iova >> page_shift
 * @nslots: table size, not 0
 *
 * Computable from what a packet or an SGE carries: no MR lookup needed.
 *
 * Return: an index below @nslots.
 */
u32 stellar_emtt_index(u32 key, u64 iova_page, u32 nslots);

/**
 * stellar_emtt_mr_eligible() - can the eMTT translate this registration?
 * @mr: the registration
 * @user_start: user address of its first byte
 * @page_shift: log2 of the page size
 *
 * An entry stands for one iova page and one pinned page, so the iova and
 * the user address must have the same offset inside a page; the MR must
 * not wrap around the end of the iova space.
 *
 * Return: true if it may have entries.
 */
bool stellar_emtt_mr_eligible(const struct stellar_emtt_mr *mr,
			      u64 user_start, u32 page_shift);

/**
 * stellar_emtt_iova_page() - the iova page of a user address of an MR
 * @mr: an eligible registration
 * @user_start: user address of its first byte
 * @user_addr: an address inside it
 * @page_shift: log2 of the page size
 *
 * Return: (iova of @user_addr) >> @page_shift.
 */
u64 stellar_emtt_iova_page(const struct stellar_emtt_mr *mr, u64 user_start,
			   u64 user_addr, u32 page_shift);

/**
 * stellar_emtt_tag_init() - the tag of an entry for a page of an MR
 * @tag: filled in
 * @mr: the registration
 * @iova_page: the page
 * @page_shift: log2 of the page size
 *
 * Return: false (and an empty tag) if no byte of the page is in the MR.
 */
bool stellar_emtt_tag_init(struct stellar_emtt_tag *tag,
			   const struct stellar_emtt_mr *mr, u64 iova_page,
			   u32 page_shift);

/**
 * stellar_emtt_tag_allows() - may a copy use this entry, unlooked-up?
 * @tag: the entry's tag (a consistent snapshot)
 * @req: the copy's PD, key and needed access
 * @iova: first byte the copy touches in this page
 * @len: bytes it touches, all inside @iova's page
 * @page_shift: log2 of the page size
 *
 * The same checks the MR lookup does: the key is the registration's, the
 * PD is the MR's, the MR grants @access, and every byte is in the MR.
 *
 * Return: true if the entry answers the copy.
 */
bool stellar_emtt_tag_allows(const struct stellar_emtt_tag *tag,
			     const struct stellar_emtt_req *req, u64 iova,
			     u32 len, u32 page_shift);

#endif /* STELLAR_EMTT_INDEX_H */
