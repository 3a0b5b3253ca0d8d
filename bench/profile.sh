#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Profile: where the guests' CPU time goes during one perftest run, for
# stellar (syscall doorbell) and rdma_rxe on the benchmark's topology
# (two VMs, one qemu socket link, no memory debugging).  perf samples
# every VM's whole CPU (cpu-clock, 1 ms) while the test runs; the report
# sorts each VM's samples into a few kinds of work (idle, the process,
# the driver, copies and checksums, allocation, the network stack,
# scheduling and work queues) and lists the busiest functions.  It
# explains the bench's figures; it is not a benchmark itself (perf's
# sampling costs a few percent).
#
#   bench/profile.sh [--test TEST] [--iters N] [--mtu N] [--out FILE]
#                    [DRIVER...]
#
# TEST: write_bw (default), read_bw, send_bw, write_lat, send_lat; N
# defaults to 800 (bandwidth) or 3000 (latency).  DRIVER: stellar, rxe
# (default both).  The report goes to bench/results/profile-latest.md.

set -euo pipefail

BENCH_DIR=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
REPO=$(dirname "$BENCH_DIR")
BENCH_NAME=profile
TSV=/dev/null
# shellcheck source=bench/host-lib.sh
. "$BENCH_DIR/host-lib.sh"

TEST=write_bw
ITERS=''
MTU=1500
OUT=$BENCH_DIR/results/profile-latest.md
DRIVERS=()
while [ $# -gt 0 ]; do
	case "$1" in
	--test | --iters | --mtu | --out)
		[ $# -ge 2 ] || die "$1 needs a value" ;;
	esac
	case "$1" in
	--test) TEST=$2; shift ;;
	--iters) ITERS=$2; shift ;;
	--mtu) MTU=$2; shift ;;
	--out) OUT=$2; shift ;;
	stellar | rxe) DRIVERS+=("$1") ;;
	*) die "unknown argument '$1' (see the header of $0)" ;;
	esac
	shift
done
case "$TEST" in
write_bw | read_bw | send_bw) : "${ITERS:=800}" ;;
write_lat | send_lat) : "${ITERS:=3000}" ;;
*) die "--test: write_bw, read_bw, send_bw, write_lat or send_lat" ;;
esac
[[ "$ITERS" =~ ^[1-9][0-9]*$ ]] || die "--iters needs a positive number"
[[ "$MTU" =~ ^[0-9]+$ ]] && [ "$MTU" -ge 1280 ] && [ "$MTU" -le 9000 ] ||
	die "--mtu needs 1280 to 9000"
[ ${#DRIVERS[@]} -gt 0 ] || DRIVERS=(stellar rxe)
command -v perf >/dev/null ||
	die "perf is not installed (apt-get install linux-perf)"
check_host

RESULTS=$REPO/tests/vm/.build/results/profile-$(date +%Y%m%d-%H%M%S)
mkdir -p "$RESULTS" "$(dirname "$OUT")"
"$REPO/tests/vm/run-vm.sh" --results "$RESULTS" "$BENCH_DIR/profile-guest.sh" \
	"$TEST" "$ITERS" --mtu "$MTU" "${DRIVERS[@]}" ||
	die "the guest run failed: see $RESULTS"
GUEST_LOG=$(last_attempt "$RESULTS" profile-guest)
{
	echo "# Profile: ib_$TEST, MTU $MTU"
	echo
	echo "Command: \`bench/profile.sh --test $TEST --iters $ITERS" \
		"--mtu $MTU ${DRIVERS[*]}\`  "
	echo "Date: $(date -u '+%Y-%m-%d %H:%M UTC')  "
	echo "Commit: $(git -C "$REPO" rev-parse --short HEAD)  "
	echo "Guest log: \`$GUEST_LOG\`"
	echo
	python3 "$BENCH_DIR/profile-report.py" "$GUEST_LOG" "${DRIVERS[@]}"
} >"$OUT"
echo "profile: wrote $OUT"
cat "$OUT"
