#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# The latency telemetry's cost where the CPU is the only limit, run by
# bench/run.sh --telemetry-local: one VM with one vCPU, stellar0 on
# veth0 in init_net and stellar1 on its peer in netns "peer", so that no
# socket link between two QEMU processes (whose timing varies by tens of
# percent from run to run under TCG) carries the traffic.  One vCPU, so
# that the VM also runs under qemu -icount (bench/run.sh --icount),
# which hangs at boot with two; server and client share it.  In each
# round, latency_telemetry off and on (the order alternating):
# ib_write_bw 64 KB, with the guest's CPU time per GB moved, and
# ib_send_lat -e 8 B (both sides sleep on completion events: a latency
# pair that busy-polls would leave the other side no CPU).
# Writes $STELLAR_OUT/bench.tsv lines as bench/guest.sh does:
#   tel_on_R|tel_off_R <TAB> write_bw|cpu_write_bw|send_lat_ev <TAB> VALUE
#
# Arguments: [--quick] [--telemetry-rounds N]
# Without memory debugging: page poisoning costs more than what is measured.
# stellar-test: vms=1 smp=1 timeout=3000 memdebug=off

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../tests/vm/lib.sh"

ROUNDS=7
BW_ITERS=2000
LAT_ITERS=5000
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) BW_ITERS=300; LAT_ITERS=500 ;;
	--telemetry-rounds) ROUNDS=$2; shift ;;
	*) fail "bench/telemetry-guest.sh: unknown argument '$1'" ;;
	esac
	shift
done

TSV=$STELLAR_OUT/bench.tsv
PORT=19500
PARAM=/sys/module/virtio_stellar/parameters/latency_telemetry
: >"$TSV"

record() {
	printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${4:-}" >>"$TSV"
}

cpu_busy() {
	awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat
}

# local_perf NAME TEST ARGS...: ib_TEST server with stellar0, client
# with stellar1 in netns peer, both with the words of $EVENTS (-e or
# none) and ARGS; the client's log is $STELLAR_OUT/NAME.log.
local_perf() {
	local name=$1 test=$2 srv_pid rc=0 srv_rc=0

	shift 2
	PORT=$((PORT + 1))
	# shellcheck disable=SC2086 # $EVENTS is words
	"ib_$test" -d stellar0 -x "$GID0" -p "$PORT" -F $EVENTS "$@" \
		>"$STELLAR_OUT/$name.srv.log" 2>&1 &
	srv_pid=$!
	wait_for 20 tcp_listening "$PORT"
	# shellcheck disable=SC2086 # $EVENTS is words
	ip netns exec peer timeout 300 "ib_$test" -d stellar1 \
		-x "$GID1" -p "$PORT" -F $EVENTS "$@" 10.60.0.1 \
		>"$STELLAR_OUT/$name.log" 2>&1 || rc=$?
	wait "$srv_pid" || srv_rc=$?
	[ "$rc" = 0 ] || fail "$name: ib_$test client exited with $rc: $(tail -5 "$STELLAR_OUT/$name.log")"
	[ "$srv_rc" = 0 ] || fail "$name: ib_$test server exited with $srv_rc: $(tail -5 "$STELLAR_OUT/$name.srv.log")"
}

# measure CONFIG: one round's runs with the current setting.
measure() {
	local config=$1 busy value

	busy=$(cpu_busy)
	EVENTS='' local_perf "${config}_write_bw" write_bw -s 65536 -n "$BW_ITERS"
	busy=$(($(cpu_busy) - busy))
	value=$(perftest_value "$STELLAR_OUT/${config}_write_bw.log" 4)
	record "$config" write_bw "$value" MiB/s
	record "$config" cpu_write_bw "$(awk -v b="$busy" -v hz="$(getconf CLK_TCK)" \
		-v n=$((65536 * BW_ITERS)) 'BEGIN { printf "%.2f", b / hz / (n / 1e9) }')" s/GB
	EVENTS=-e local_perf "${config}_send_lat_ev" send_lat -s 8 -n "$LAT_ITERS"
	record "$config" send_lat_ev \
		"$(perftest_value "$STELLAR_OUT/${config}_send_lat_ev.log" 5)" usec
	log "$config: $(awk -F '\t' -v c="$config" '$1 == c { printf "%s %s %s; ", $2, $3, $4 }' "$TSV")"
}

stellar_load
stellar_veth_pair

# A first run of each warms the caches and the page allocator.
EVENTS='' local_perf warmup_bw write_bw -s 65536 -n "$BW_ITERS"
for round in $(seq "$ROUNDS"); do
	order="off on"
	[ $((round % 2)) = 0 ] && order="on off"
	for mode in $order; do
		if [ "$mode" = on ]; then echo Y >"$PARAM"; else echo N >"$PARAM"; fi
		measure "tel_${mode}_$round"
	done
done
echo Y >"$PARAM"
ip netns exec peer rdma link delete stellar1
rdma link delete stellar0
ip netns del peer
stellar_unload
log "bench done"
