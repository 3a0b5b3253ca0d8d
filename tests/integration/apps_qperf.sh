#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# qperf between two hosts, stellar on both ends: RC bandwidth (rc_bw), RC
# latency (rc_lat) and UD bandwidth (ud_bw).  The qperf server runs on VM
# a, the client on VM b.  The RC tests connect through the RDMA CM (-cm1),
# which picks the RDMA device that owns the address (stellar0, on eth0).
# qperf's UD tests cannot use the CM and address the peer by LID alone,
# which RoCE does not have: the RDMA core refuses their address handle on
# any RoCE device.  helpers/qperf_roce_ah.c (LD_PRELOAD) adds the GRH with
# the peer's GID; ud_bw names stellar0 with -i.
#
# Every client run must exit 0 and print a positive figure, and the
# server's stellar counters must account for what qperf says the server
# received (bytes for the bandwidth tests, packets for the latency test),
# so the traffic cannot have gone anywhere but through stellar0.
#
# qperf 0.4.11's server child crashes in its RDMA CM teardown after each RC
# test (ibv_destroy_qp(NULL), "qperf[N]: segfault" in the kernel log), just
# the same over rdma_rxe; the client has its results by then and the
# server's main process keeps serving, so that is not counted here.
# stellar-test: vms=2 links=1 timeout=600

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

HELPERS=$(dirname "$(readlink -f "$0")")/helpers
QPERF_PORT=19765
QPERF_SECONDS=3

# qperf_field LOG NAME: the value of "NAME = VALUE UNIT" in a qperf -vv
# log, with thousands separators removed; for sizes the exact byte count
# that follows in parentheses ("64 KiB (65,536)").  Fails unless it is a
# positive number.
qperf_field() {
	local value

	value=$(awk -v n="$2" '$1 == n && $2 == "=" {
			v = $3
			if (match($0, /\([0-9,]+\)/))
				v = substr($0, RSTART + 1, RLENGTH - 2)
			gsub(",", "", v)
			print v
			exit
		}' "$1")
	awk -v v="$value" 'BEGIN { exit !(v ~ /^[0-9.]+$/ && v + 0 > 0) }' ||
		fail "qperf $2 is '$value', not a positive number, in $1:"$'\n'"$(cat "$1")"
	echo "$value"
}

# qperf_line LOG NAME: "NAME = VALUE UNIT" as qperf printed it.
qperf_line() {
	awk -v n="$2" '$1 == n && $2 == "=" { $1 = $1; print; exit }' "$1"
}

# run_qperf TEST ARGS...: run one qperf test against the server on VM a;
# it must exit 0.  Its log is $STELLAR_OUT/qperf_TEST.log.
run_qperf() {
	local test=$1 log=$STELLAR_OUT/qperf_$1.log rc=0

	shift
	timeout 120 qperf "$(peer_ip 1)" -lp "$QPERF_PORT" \
		-t "$QPERF_SECONDS" -vv "$@" "$test" >"$log" 2>&1 || rc=$?
	[ "$rc" = 0 ] || fail "qperf $test exited with $rc:"$'\n'"$(cat "$log")"
	QPERF_LOG=$log
}

# The tests run one at a time: VM a reads its counters and publishes
# TEST.go; VM b then runs TEST, publishes what qperf says the server
# received as TEST.min, and both meet at barrier TEST.done, after which VM a
# checks its counter grew by at least that much.

# Client (VM b).
qperf_client() {
	local msgs size

	get_val rc_bw.go >/dev/null
	run_qperf rc_bw -cm1 -m 64K
	qperf_field "$QPERF_LOG" bw >/dev/null
	msgs=$(qperf_field "$QPERF_LOG" recv_msgs)
	size=$(qperf_field "$QPERF_LOG" msg_size)
	log "rc_bw: $(qperf_line "$QPERF_LOG" bw), $msgs x $size bytes received"
	put_val rc_bw.min $((msgs * size))
	barrier rc_bw.done

	get_val rc_lat.go >/dev/null
	run_qperf rc_lat -cm1
	qperf_field "$QPERF_LOG" latency >/dev/null
	msgs=$(qperf_field "$QPERF_LOG" rem_recv_msgs)
	log "rc_lat: $(qperf_line "$QPERF_LOG" latency), $msgs messages received"
	put_val rc_lat.min "$msgs"
	barrier rc_lat.done

	get_val ud_bw.go >/dev/null
	LD_PRELOAD=$ROCE_AH_SHIM run_qperf ud_bw -i stellar0:1 -m 1K
	qperf_field "$QPERF_LOG" recv_bw >/dev/null
	msgs=$(qperf_field "$QPERF_LOG" recv_msgs)
	size=$(qperf_field "$QPERF_LOG" msg_size)
	log "ud_bw: $(qperf_line "$QPERF_LOG" recv_bw), $msgs x $size bytes received"
	put_val ud_bw.min $((msgs * size))
	barrier ud_bw.done

	assert_ok qperf "$(peer_ip 1)" -lp "$QPERF_PORT" quit
}

# server_step TEST COUNTER: let the client run TEST; stellar0's COUNTER
# must grow by at least what qperf reports.
server_step() {
	local test=$1 counter=$2 before now min

	before=$(stellar_stat stellar0 "$counter")
	put_val "$test.go" 1
	barrier "$test.done"
	now=$(stellar_stat stellar0 "$counter")
	min=$(get_val "$test.min")
	[ $((now - before)) -ge "$min" ] ||
		fail "$test: stellar0 $counter rose by $((now - before)), qperf reports $min"
	log "$test: stellar0 $counter +$((now - before)) (qperf: $min)"
}

# Server (VM a): qperf serves until the client sends "quit".
qperf_server() {
	local pid rc=0

	LD_PRELOAD=$ROCE_AH_SHIM timeout 300 qperf -lp "$QPERF_PORT" \
		>"$STELLAR_OUT/qperf_server.log" 2>&1 &
	pid=$!
	wait_for 30 tcp_listening "$QPERF_PORT"
	server_step rc_bw rx_bytes
	server_step rc_lat rx_packets
	server_step ud_bw rx_bytes
	wait "$pid" || rc=$?
	[ "$rc" = 0 ] ||
		fail "qperf server exited with $rc:"$'\n'"$(cat "$STELLAR_OUT/qperf_server.log")"
}

stellar_pair_up
ROCE_AH_SHIM=/tmp/qperf_roce_ah.so
assert_ok gcc -shared -fPIC -O2 -Wall -Werror -o "$ROCE_AH_SHIM" \
	"$HELPERS/qperf_roce_ah.c"
export ROCE_AH_PEER_IPV4 ROCE_AH_SGID_INDEX=$STELLAR_GID
ROCE_AH_PEER_IPV4=$(peer_ip 1)
if [ "$STELLAR_ROLE" = a ]; then
	qperf_server
else
	qperf_client
fi
barrier qperf-done
rdma link delete stellar0
stellar_unload
log "apps_qperf OK"
