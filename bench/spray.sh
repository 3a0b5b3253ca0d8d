#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Packet spray benchmark: two QEMU VMs joined by 4 links, each shaped to
# the same rate, combined by a bond (balance-xor, layer3+4; or ECMP with
# --topology ecmp) so that the UDP source port picks the link.  In one
# run, rdma_rxe and stellar side by side: single-QP ib_write_bw (64 KB)
# against the 4 links' aggregate, the same under heavy reordering, and a
# failover (the busiest link silently drops everything mid-transfer:
# stall time, recovered throughput against the 3 remaining links).
# Writes a markdown table to bench/results/spray-latest.md (or --out).
#
#   bench/spray.sh [--quick] [--rate RATE] [--paths N] [--topology bond|ecmp]
#                  [--only rxe|stellar] [--out FILE]
#
# Run as root on the build host after "make"; installs iperf3 with
# apt-get if it is missing.  Knobs of the VM harness apply.

set -euo pipefail

BENCH_DIR=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
REPO=$(dirname "$BENCH_DIR")
BENCH_NAME=bench/spray
BENCH_NEEDS_TOOL=1
# shellcheck source=bench/host-lib.sh
. "$BENCH_DIR/host-lib.sh"
OUT=$BENCH_DIR/results/spray-latest.md
GUEST_ARGS=()

usage() {
	sed -n '14,19p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
}

parse_args() {
	while [ $# -gt 0 ]; do
		case "$1" in
		--quick) GUEST_ARGS+=(--quick) ;;
		--rate | --paths | --topology | --only)
			[ $# -ge 2 ] || usage
			GUEST_ARGS+=("$1" "$2")
			shift
			;;
		--out)
			[ $# -ge 2 ] || usage
			OUT=$2
			shift
			;;
		-h | --help) usage ;;
		*) echo "bench/spray: unknown argument '$1'" >&2; usage ;;
		esac
		shift
	done
}

# calc EXPR VARS...: awk arithmetic on numbers, "—" unless all are numbers.
calc() {
	local expr=$1 v

	shift
	for v in "$@"; do
		is_number "$v" || { echo "—"; return; }
	done
	awk -v a="${1:-0}" -v b="${2:-0}" -v c="${3:-0}" -v div="${expr//[^\/]/}" \
		"BEGIN { if (div != \"\" && b == 0) { print \"—\"; exit }
			printf \"%.2f\", $expr }"
}

# met VALUE OP TARGET: yes/no, or "—" without a number.
met() {
	if ! is_number "$1"; then
		echo "—"
	elif awk -v v="$1" -v t="$3" "BEGIN { exit !(v $2 t) }"; then
		echo yes
	else
		echo no
	fi
}

write_table() {
	local one agg three rxe st rxe_re st_re
	local st_ratio st_agg rxe_agg st_reo rxe_reo st_rec rxe_rec

	one=$(value link one_link_udp)
	agg=$(calc 'a * 4' "$one")
	three=$(calc 'a * 3' "$(value link one_link_l2)")
	rxe=$(value rxe write_bw)
	st=$(value stellar write_bw)
	rxe_re=$(value rxe write_bw_reorder)
	st_re=$(value stellar write_bw_reorder)
	st_ratio=$(calc 'a / b' "$st" "$rxe")
	st_agg=$(calc 'a / b' "$st" "$agg")
	rxe_agg=$(calc 'a / b' "$rxe" "$agg")
	st_reo=$(calc 'a / b' "$st_re" "$st")
	rxe_reo=$(calc 'a / b' "$rxe_re" "$rxe")
	st_rec=$(calc 'a / b' "$(value stellar failover_recovered_l2)" "$three")
	rxe_rec=$(calc 'a / b' "$(value rxe failover_recovered_l2)" "$three")

	echo "| Figure | rdma_rxe | stellar | Target (stellar) | Met |"
	echo "|---|---:|---:|---|---|"
	echo "| ib_write_bw 64 KB, 1 QP, MiB/s | $rxe | $st | | |"
	echo "| links carrying >= 10% of the bytes | $(value rxe write_bw_links) | $(value stellar write_bw_links) | all 4 | $(met "$(value stellar write_bw_links)" '>=' 4) |"
	echo "| stellar / rxe | | $st_ratio | >= 3.2 | $(met "$st_ratio" '>=' 3.2) |"
	echo "| bandwidth / 4 links' aggregate ($agg MiB/s) | $rxe_agg | $st_agg | >= 0.80 | $(met "$st_agg" '>=' 0.8) |"
	echo "| failover: transfer completed without QP error | $(value rxe failover_qp_ok) | $(value stellar failover_qp_ok) | yes | $([ "$(value stellar failover_qp_ok)" = yes ] && echo yes || echo no) |"
	echo "| failover: stall after the link went dark, s | $(value rxe failover_stall) | $(value stellar failover_stall) | (reported) | |"
	echo "| failover: rate after recovery / 3 links | $rxe_rec | $st_rec | >= 0.70 | $(met "$st_rec" '>=' 0.7) |"
	echo "| failover: ib_write_bw average over the run, MiB/s | $(value rxe failover_bw) | $(value stellar failover_bw) | | |"
	echo "| heavy reordering: ib_write_bw, MiB/s | $rxe_re | $st_re | | |"
	echo "| heavy reordering / no reordering | $rxe_reo | $st_reo | >= 0.90 | $(met "$st_reo" '>=' 0.9) |"
}

write_report() {
	mkdir -p "$(dirname "$OUT")"
	{
		echo "# virtio-stellar packet spray benchmark"
		echo
		echo "Command: \`bench/spray.sh${ORIG_ARGS:+ $ORIG_ARGS}\`  "
		echo "Date: $(date -u '+%Y-%m-%d %H:%M UTC')  "
		echo "Commit: $(git -C "$REPO" describe --always --dirty 2>/dev/null || echo unknown)  "
		echo "Topology: $(value setup topology), 4 links shaped to $(value setup rate) each (tc tbf); stellar spray_paths $(value setup paths)  "
		echo "One link: $(value link one_link_udp) MiB/s UDP payload (iperf3), $(value link one_link_l2) bytes/s on the wire  "
		echo "Guest log: \`$GUEST_LOG\`"
		echo
		write_table
		echo
		echo "VM b sends, VM a receives.  Aggregate: 4 x one link's iperf3 UDP"
		echo "payload rate.  Failover: ib_write_bw -D; the sender's busiest link"
		echo "drops every packet (netem loss 100%, link up) in both directions;"
		echo "stall: the longest span after that with the receiver's link bytes"
		echo "under 10% of the rate before; recovery: receiver link bytes/s over"
		echo "the second half of the time after the failure, over 3 x one link's"
		echo "wire rate.  Reordering: netem delay 2ms reorder 50% on every link."
		echo "Figures under TCG emulation compare with each other, not with"
		echo "hardware.  \"failed\": the run failed, see the guest log."
	} >"$OUT"
}

main() {
	ORIG_ARGS="$*"
	parse_args "$@"
	check_host
	RESULTS=$REPO/tests/vm/.build/results/spray-bench-$(date +%Y%m%d-%H%M%S)
	mkdir -p "$RESULTS"
	"$REPO/tests/vm/run-vm.sh" --results "$RESULTS" \
		"$BENCH_DIR/spray-guest.sh" "${GUEST_ARGS[@]}" ||
		echo "bench/spray: the guest run failed; writing what it measured"
	TSV=$RESULTS/spray-guest.tsv
	GUEST_LOG=$(last_attempt "$RESULTS" spray-guest)
	cat "$GUEST_LOG"/vm-*/bench.tsv >"$TSV" 2>/dev/null || true
	[ -s "$TSV" ] || die "no measurements in $GUEST_LOG/vm-*/bench.tsv"
	write_report
	echo "bench/spray: wrote $OUT"
	cat "$OUT"
}

main "$@"
