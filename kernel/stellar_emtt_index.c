// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: the eMTT index function (see stellar_emtt_index.h).
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include "stellar_emtt_index.h"

u32 stellar_emtt_nslots(u32 size_thousands)
{
	return size_thousands * STELLAR_EMTT_SIZE_UNIT;
}

/* The splitmix64 finaliser: every input bit affects every output bit. */
u64 stellar_emtt_base(u64 serial)
{
	u64 x = serial + 0x9e3779b97f4a7c15ULL;

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

u32 stellar_emtt_slot(u64 base, u64 page_index, u32 nslots)
{
	/* Reduce each term first: the sum cannot wrap around 2^64. */
	return (u32)(((base % nslots) + (page_index % nslots)) % nslots);
}
