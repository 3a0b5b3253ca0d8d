/* SPDX-License-Identifier: GPL-2.0 */
/*
 * virtio-stellar: where an eMTT translation lives in the device's table.
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
 * stellar_emtt_nslots() - table entries for an emtt_cache_size setting
 * @size_thousands: the setting; 0 turns the cache off
 *
 * Return: the number of entries (0: no cache).
 */
u32 stellar_emtt_nslots(u32 size_thousands);

/**
 * stellar_emtt_base() - where a registration's first page lands
 * @serial: the registration's device-unique serial number
 *
 * Return: a well-mixed 64-bit value; different registrations start at
 * unrelated places so that they do not evict each other systematically.
 */
u64 stellar_emtt_base(u64 serial);

/**
 * stellar_emtt_slot() - the entry that may hold a translation
 * @base: stellar_emtt_base() of the registration
 * @page_index: page number inside the registration
 * @nslots: table size, not 0
 *
 * Consecutive pages of one registration use consecutive entries (modulo
 * @nslots), so a run of up to @nslots pages never evicts itself.
 *
 * Return: an index below @nslots.
 */
u32 stellar_emtt_slot(u64 base, u64 page_index, u32 nslots);

#endif /* STELLAR_EMTT_INDEX_H */
