// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: packet spray path choice.  Placeholder: plain rotation.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include "stellar_spray.h"

void stellar_spray_init(struct stellar_spray *s, u32 nr_paths, u16 base_sport,
			u32 shift)
{
	u32 i;

	memset(s, 0, sizeof(*s));
	if (nr_paths < 1)
		nr_paths = 1;
	if (nr_paths > STELLAR_SPRAY_MAX_PATHS)
		nr_paths = STELLAR_SPRAY_MAX_PATHS;
	s->nr_paths = nr_paths;
	s->shift = shift;
	for (i = 0; i < nr_paths; i++) {
		s->path[i].sport = 0xc000 | ((base_sport + i) & 0x3fff);
		s->path[i].weight = STELLAR_SPRAY_WEIGHT_MAX;
	}
}

u32 stellar_spray_pick(struct stellar_spray *s, u32 psn, u64 now_us)
{
	return (psn + s->shift) % s->nr_paths;
}

u32 stellar_spray_pick_retx(struct stellar_spray *s, u32 psn, u32 lost_path,
			    u64 now_us)
{
	return (lost_path + 1) % s->nr_paths;
}

void stellar_spray_sent(struct stellar_spray *s, u32 path, u32 bytes,
			bool retx)
{
}

void stellar_spray_acked(struct stellar_spray *s, u32 path, u32 rtt_us,
			 bool ecn, u64 now_us)
{
}

void stellar_spray_lost(struct stellar_spray *s, u32 path, u64 now_us)
{
}

u32 stellar_spray_rto_us(const struct stellar_spray *s, u32 min_us,
			 u32 max_us)
{
	return max_us;
}
