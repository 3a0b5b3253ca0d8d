#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Completion events (ibv_req_notify_cq, ibv_get_cq_event) between two
# stellar devices in one VM, stellar0 in init_net and stellar1 in netns
# "peer" on a veth pair: ib_send_lat -e, ib_send_bw -e and
# ibv_rc_pingpong -e -c (data checked) must all finish.  perftest's
# latency loop shares one completion channel between its send and
# receive CQs and takes one event per completion, in the order a NIC
# gives them: the ACK of a message before the answer to it.  On one vCPU
# the receiver used to be woken before its ACK was sent, its answer
# overtook the ACK, and ib_send_lat -e waited forever after a few dozen
# messages.  One vCPU makes that order the likely one.
# stellar-test: vms=1 timeout=300

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

PORT=19700

# pair NAME SECONDS SERVER-CMD... -- CLIENT-CMD...: the server in init_net
# and the client in "peer", both given PORT (and the client the server's
# address); both must exit 0 within SECONDS.
pair() {
	local name=$1 secs=$2 srv rc=0 src=0
	local -a server=() client=()

	shift 2
	while [ "$1" != -- ]; do
		server+=("$1")
		shift
	done
	shift
	client=("$@")
	PORT=$((PORT + 1))
	timeout "$secs" "${server[@]}" -p "$PORT" \
		>"$STELLAR_OUT/$name.server.log" 2>&1 &
	srv=$!
	wait_for 30 tcp_listening "$PORT"
	ip netns exec peer timeout "$secs" "${client[@]}" -p "$PORT" 10.60.0.1 \
		>"$STELLAR_OUT/$name.client.log" 2>&1 || rc=$?
	wait "$srv" || src=$?
	[ "$rc" = 0 ] && [ "$src" = 0 ] ||
		fail "$name: client exited with $rc, server with $src (124: still waiting after ${secs}s):"$'\n'"$(tail -3 "$STELLAR_OUT/$name.client.log" "$STELLAR_OUT/$name.server.log")"
	log "$name: $(tail -2 "$STELLAR_OUT/$name.client.log" | head -1 | tr -s ' \t' ' ')"
}

stellar_load
stellar_veth_pair

pair send_lat "$(scaled 120)" ib_send_lat -d stellar0 -x "$GID0" -F -e -s 8 -n 500 -- \
	ib_send_lat -d stellar1 -x "$GID1" -F -e -s 8 -n 500
perftest_value "$STELLAR_OUT/send_lat.client.log" 5 >/dev/null
pair send_bw "$(scaled 120)" ib_send_bw -d stellar0 -x "$GID0" -F -e -s 4096 -n 500 -- \
	ib_send_bw -d stellar1 -x "$GID1" -F -e -s 4096 -n 500
perftest_value "$STELLAR_OUT/send_bw.client.log" 4 >/dev/null
pair pingpong "$(scaled 120)" ibv_rc_pingpong -d stellar0 -g "$GID0" -e -c -n 500 -- \
	ibv_rc_pingpong -d stellar1 -g "$GID1" -e -c -n 500
assert_contains "$(cat "$STELLAR_OUT/pingpong.client.log")" "500 iters" \
	"ibv_rc_pingpong -e"

ip netns exec peer rdma link delete stellar1
rdma link delete stellar0
ip netns del peer
stellar_unload
log "verbs_events OK"
