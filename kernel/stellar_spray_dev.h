/* SPDX-License-Identifier: GPL-2.0 */
/*
 * virtio-stellar: per-device packet spray statistics.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_SPRAY_DEV_H
#define STELLAR_SPRAY_DEV_H

#include <linux/types.h>

struct stellar_dev;

/* The responder received a packet @depth PSNs ahead of the expected one. */
void stellar_spray_dev_ooo(struct stellar_dev *sdev, u32 depth);

#endif /* STELLAR_SPRAY_DEV_H */
