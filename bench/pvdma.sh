#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# PVDMA benchmark: in one VM (4 GB by default), ibv_reg_mr time and the
# memory pinned after registering and after touching 10% of the MR, for
# stellar lazy, stellar eager and rdma_rxe; first-touch and steady-state
# RDMA WRITE bandwidth; random-offset bandwidth with 8 KB, 256 KB and
# 1 MB messages with the eMTT on and off (and rdma_rxe), with hit rates.
# Writes a markdown report to bench/results/pvdma.md (or --out FILE).
#
#   bench/pvdma.sh [--quick] [--out FILE] [SIZE_MB...]
#
# Run as root after "make"; wrap it in the VM lock when VMs are shared:
#   bench/pvdma.sh
# STELLAR_VM_MEM sets the VM's memory (MB); the largest SIZE_MB must fit.

set -euo pipefail

BENCH_DIR=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
REPO=$(dirname "$BENCH_DIR")
BENCH_NAME=bench/pvdma
# shellcheck source=bench/host-lib.sh
. "$BENCH_DIR/host-lib.sh"
OUT=$BENCH_DIR/results/pvdma.md
ARGS=()

while [ $# -gt 0 ]; do
	case "$1" in
	--out) OUT=$2; shift ;;
	--quick | [0-9]*) ARGS+=("$1") ;;
	*) sed -n '3,17p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
	esac
	shift
done

export STELLAR_VM_MEM=${STELLAR_VM_MEM:-4096}
RESULTS=$REPO/tests/vm/.build/results/pvdma-$(date +%Y%m%d-%H%M%S)
mkdir -p "$RESULTS" "$(dirname "$OUT")"
"$REPO/tests/vm/run-vm.sh" --results "$RESULTS" --timeout 3000 \
	"$BENCH_DIR/pvdma_guest.sh" "${ARGS[@]}" ||
	echo "pvdma bench: the guest run failed; writing what it measured"
TSV=$(last_attempt "$RESULTS" pvdma_guest)/vm-a/pvdma.tsv
[ -n "$TSV" ] && [ -s "$TSV" ] || { echo "no measurements under $RESULTS" >&2; exit 1; }

# fig CONFIG WHAT FIELD [KEY]: field FIELD (1-based, after CONFIG) of the
# line "CONFIG<TAB>WHAT [KEY] ...".
fig() {
	awk -F'\t' -v c="$1" -v w="$2" -v f="$3" -v k="${4:-}" '
		$1 == c { n = split($2, a, " ")
			  if (a[1] == w && (k == "" || a[2] == k)) { print a[f]; exit } }
	' "$TSV"
}

ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b != "") printf "%.0f", b / a; else print "n/a" }'
}

{
	echo "# PVDMA benchmark"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo ?)," \
		"one VM: ${STELLAR_VM_MEM} MB, ${STELLAR_VM_SMP:-1} vCPU, ${STELLAR_VM_ACCEL:-tcg};" \
		"loopback RC QP pair; host $(nproc) CPUs."
	echo
	echo "## ibv_reg_mr and pinned memory"
	echo
	echo "| MR size | lazy reg (µs) | eager reg (µs) | rxe reg (µs) | rxe/lazy | pinned after reg lazy / eager / rxe (MB) | pinned after touching 10% lazy / eager / rxe (MB) |"
	echo "|---|---|---|---|---|---|---|"
	for size in $(awk -F'\t' '$1 == "lazy" && $2 ~ /^reg / { split($2, a, " "); print a[2] }' "$TSV"); do
		l=$(fig lazy reg 3 "$size"); e=$(fig eager reg 3 "$size"); r=$(fig rxe reg 3 "$size")
		mb() { awk -v k="$1" 'BEGIN { if (k == "") print "-"; else printf "%.0f", k / 1024 }'; }
		echo "| $size MB | $l | $e | $r | $(ratio "$l" "$r")× |" \
			"$(mb "$(fig lazy reg 4 "$size")") / $(mb "$(fig eager reg 4 "$size")") / $(mb "$(fig rxe reg 4 "$size")") |" \
			"$(mb "$(fig lazy reg 5 "$size")") / $(mb "$(fig eager reg 5 "$size")") / $(mb "$(fig rxe reg 5 "$size")") |"
	done
	echo
	echo "## First touch and steady state (1 MB RDMA WRITEs over a fresh 256 MB MR, twice; MB/s)"
	echo
	echo "| config | first pass | second pass |"
	echo "|---|---|---|"
	for c in lazy eager rxe; do
		echo "| $c | $(fig "$c" touch 2) | $(fig "$c" touch 3) |"
	done
	echo
	echo "## Random offsets over a large MR (RDMA WRITE, after a warm-up pass; MB/s, eMTT hit rate)"
	echo
	echo "| message | eMTT on | hits | eMTT off | rxe |"
	echo "|---|---|---|---|---|"
	for kb in 8 256 1024; do
		echo "| $kb KB | $(fig emtt_on random 3 "$kb") | $(fig emtt_on random 4 "$kb")% |" \
			"$(fig emtt_off random 3 "$kb") | $(fig rxe random 3 "$kb") |"
	done
	echo
	echo "Raw figures: $TSV"
} >"$OUT"
echo "pvdma bench: wrote $OUT"
cat "$OUT"
