#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# The PVDMA benchmark's guest side, run by bench/pvdma.sh in one VM: a
# loopback RC QP pair on one device (bench/pvdma_bench.c) for stellar
# with lazy pinning, stellar with eager pinning and rdma_rxe.  Writes one
# line per figure to $STELLAR_OUT/pvdma.tsv: CONFIG<TAB>FIGURE...
#
# Arguments: [--quick] [SIZE_MB...] (registration sizes, default
# 256 512 1024 2048)
# stellar-test: vms=1 timeout=3000 memdebug=off

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../tests/vm/lib.sh"

SIZES=()
RANDOM_MB=1024
BUDGET_MB=256
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) RANDOM_MB=256; BUDGET_MB=64 ;;
	'' | --) ;;
	*[!0-9]*) fail "bench/pvdma_guest.sh: unknown argument '$1'" ;;
	*) SIZES+=("$1") ;;
	esac
	shift
done
[ ${#SIZES[@]} -gt 0 ] || SIZES=(256 512 1024 2048)

BENCH=/tmp/pvdma_bench
TOOL=$STELLAR_REPO/tools/stellar-tool
TSV=$STELLAR_OUT/pvdma.tsv
: >"$TSV"
gcc -O2 -Wall -o "$BENCH" "$STELLAR_REPO/bench/pvdma_bench.c" -libverbs ||
	fail "cannot build bench/pvdma_bench.c"

# measure CONFIG ARGS...: run the benchmark, prefix its lines with CONFIG.
measure() {
	local config=$1 line

	shift
	log "$config: $*"
	"$BENCH" -d "$DEV" -g "$GID" "$@" >"$STELLAR_OUT/last.out" ||
		{ printf '%s\t%s failed\n' "$config" "$1" >>"$TSV"; return 0; }
	while read -r line; do
		printf '%s\t%s\n' "$config" "$line" >>"$TSV"
	done <"$STELLAR_OUT/last.out"
}

random_runs() {
	local config=$1 kb

	for kb in 8 256 1024; do
		measure "$config" random "$RANDOM_MB" "$kb" \
			$((BUDGET_MB * 1024 / kb))
	done
}

device_up() {
	rdma link add "$1" type "$2" netdev veth0
	DEV=$1
	GID=$(gid_index "$1" 10.70.0.1)
}

veth_pair veth0 veth0p 10.70.0.1/24 10.70.0.2/24

stellar_load pin_mode=lazy
device_up stellar0 stellar
measure lazy reg "${SIZES[@]}"
measure lazy touch 256
random_runs emtt_on
"$TOOL" set --device stellar0 --emtt-cache-size 0
random_runs emtt_off
log "$(cat /proc/stellar/pvdma_stats /proc/stellar/emtt_stats)"
rdma link delete stellar0

echo eager >/sys/module/virtio_stellar/parameters/pin_mode
device_up stellar0 stellar
measure eager reg "${SIZES[@]}"
measure eager touch 256
rdma link delete stellar0
stellar_unload

modprobe rdma_rxe
device_up rxe0 rxe
measure rxe reg "${SIZES[@]}"
measure rxe touch 256
random_runs rxe
rdma link delete rxe0
