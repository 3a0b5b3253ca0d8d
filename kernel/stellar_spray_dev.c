// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-stellar: per-device packet spray statistics.  Placeholder.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#include "stellar_spray_dev.h"

void stellar_spray_dev_ooo(struct stellar_dev *sdev, u32 depth)
{
}
