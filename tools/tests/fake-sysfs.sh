#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Build a fake /sys/class/infiniband under ROOT for stellar-monitor's
# tests (STELLAR_SYSFS_ROOT=ROOT): device stellar0 with every hw counter
# of kernel/stellar_hw_stats.c, counter N of the port holding 1000 + N
# (tx_bytes 123456789012), the memory counters 5000 + N in the device's
# hw_counters and in the port's; a second stellar device stellar1 with
# only tx_bytes (an older module); a device mlx5_0 that is not stellar.
#
# Usage: tests/fake-sysfs.sh ROOT
set -eu

root=$1
class=$root/sys/class/infiniband
port_ctrs="tx_packets tx_bytes rx_packets rx_bytes retransmits timeouts
naks_sent naks_rcvd rnr_naks_sent rnr_naks_rcvd rx_duplicate out_of_order
rx_drop_truncated rx_drop_bad_version rx_drop_bad_opcode rx_drop_bad_icrc
rx_drop_no_qp rx_drop_no_dev rx_drop_bad_length rx_drop_psn
rx_drop_queue_full rx_queued_bytes rx_queued_bytes_max spray_qps
spray_packets spray_bytes spray_retransmits spray_losses spray_ecn_marks
spray_paths_failed spray_paths_probing ooo_depth_max ooo_depth_1
ooo_depth_2_3 ooo_depth_4_7 ooo_depth_8_15 ooo_depth_16_31 ooo_depth_32_63
ooo_depth_64_127 ooo_depth_128_255 ooo_depth_256_511 ooo_depth_512_1023
ooo_depth_1024_2047 ooo_depth_2048_up rx_mcast_packets tx_throttled
limit_refused cnp_sent cnp_rcvd cc_rate_cuts cc_rate_increases cc_paced
spray_back_failures"
mem_ctrs="pvdma_active_mappings pvdma_pinned_bytes pvdma_lookups
pvdma_faults pvdma_prefetches pvdma_eager_pins pvdma_huge_chunks
pvdma_pin_errors pvdma_memlock_errors emtt_entries emtt_hits emtt_misses
emtt_fills emtt_evictions emtt_invalidations qps mrs limit_pinned_bytes
pvdma_odp_invalidations"

hw=$class/stellar0/ports/1/hw_counters
dhw=$class/stellar0/hw_counters
mkdir -p "$hw" "$dhw"
n=0
for c in $port_ctrs; do
	echo $((1000 + n)) >"$hw/$c"
	n=$((n + 1))
done
echo 123456789012 >"$hw/tx_bytes"
echo 10 >"$hw/lifespan"
n=0
for c in $mem_ctrs; do
	echo $((5000 + n)) >"$dhw/$c"
	echo $((5000 + n)) >"$hw/$c"
	n=$((n + 1))
done
echo 10 >"$dhw/lifespan"

mkdir -p "$class/stellar1/ports/1/hw_counters"
echo 7 >"$class/stellar1/ports/1/hw_counters/tx_bytes"
echo 0 >"$class/stellar1/ports/1/hw_counters/spray_packets"

mkdir -p "$class/mlx5_0/ports/1/hw_counters"
echo 99 >"$class/mlx5_0/ports/1/hw_counters/rx_bytes"
