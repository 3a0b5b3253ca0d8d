/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stellar-tool: the functions of kernel/stellar_lat_hist.c it links (the
 * kernel's bucket math, built from the same source).  Declared here with
 * the C types: that header's portable stand-ins clash with the kernel
 * uAPI types libnl pulls in.
 *
 * Copyright (c) 2026 The virtio-stellar authors
 */
#ifndef STELLAR_TOOL_LAT_HIST_H
#define STELLAR_TOOL_LAT_HIST_H

#include <stdint.h>

uint32_t stellar_lat_bucket(uint64_t ns);
uint64_t stellar_lat_bucket_upper_ns(uint32_t b);
uint64_t stellar_lat_bucket_lower_ns(uint32_t b);
uint64_t stellar_lat_count(const uint64_t *bucket, uint32_t nr);
uint64_t stellar_lat_percentile_ns(const uint64_t *bucket, uint32_t ppm);

#endif /* STELLAR_TOOL_LAT_HIST_H */
