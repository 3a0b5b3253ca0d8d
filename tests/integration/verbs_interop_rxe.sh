#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Wire compatibility with rdma_rxe: VM a runs rdma_rxe (rxe0), VM b runs
# stellar (stellar0), both on link 1.  ibv_rc_pingpong with data checks,
# ib_write_bw, ib_read_bw, ib_send_bw and rping -v -V run with the server
# on a (rxe serves, stellar requests), then with the server on b; then
# mckey multicast from rxe to stellar and from stellar to rxe.  make
# check's short form (lib.sh long_run) leaves out the 1 KB pingpong: the
# single-packet SENDs it checks are rping's and mckey's too.
# stellar-test: vms=2 links=1 timeout=900

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

if [ "$STELLAR_ROLE" = a ]; then
	rxe_up "$(link_dev 1)"
	dev=rxe0
	gid=$RXE_GID
else
	# spray_paths=2: stellar QPs offer their wire extensions (ext_check)
	stellar_load spray_paths=2
	rdma link add stellar0 type stellar netdev "$(link_dev 1)"
	dev=stellar0
	gid=$(gid_index stellar0 "$(my_ip 1)")
fi
log "this VM uses $dev, GID index $gid"
barrier interop-up

# rc_pingpong NAME SERVER_ROLE PORT SIZE: ibv_rc_pingpong -c, each VM on
# its own device.
# shellcheck disable=SC2034 # srv and cli are used by name in pair_run
rc_pingpong() {
	local -a srv cli

	srv=(ibv_rc_pingpong -d "$dev" -g "$gid" -p "$3" -c -s "$4" -n 200)
	cli=("${srv[@]}" "$(peer_ip 1)")
	pair_run "$1" "$2" "tcp:$3" 120 srv cli
}

# rping_check NAME SERVER_ROLE PORT SIZE: rping -v -V, 20 verified pings.
# shellcheck disable=SC2034 # srv and cli are used by name in pair_run
rping_check() {
	local -a srv cli
	local pings

	srv=(rping -s -v -V -C 20 -S "$4" -a "$(my_ip 1)" -p "$3")
	cli=(rping -c -v -V -C 20 -S "$4" -a "$(peer_ip 1)" -p "$3")
	pair_run "$1" "$2" "cm:$3" 120 srv cli
	[ "$PAIR_ROLE" = client ] || return 0
	assert_not_contains "$(cat "$PAIR_LOG")" mismatch "$1 output"
	pings=$(grep -c 'ping data: rdma-ping-' "$PAIR_LOG" || true)
	assert_eq "$pings" 20 "verified pings of $1"
}

# one_direction SERVER_ROLE PORT_BASE: the whole set with the server on
# SERVER_ROLE.
one_direction() {
	local server=$1 port=$2 srv_dev

	srv_dev=$([ "$server" = a ] && echo rxe || echo stellar)
	log "server on $server ($srv_dev)"
	! long_run ||
		rc_pingpong "rc_pingpong_1k_$srv_dev" "$server" $((port + 1)) 1024
	rc_pingpong "rc_pingpong_8k_$srv_dev" "$server" $((port + 2)) 8192
	perftest_pair "write_bw_$srv_dev" "$server" "$dev" "$gid" \
		$((port + 3)) 120 ib_write_bw -n 50
	perftest_pair "read_bw_$srv_dev" "$server" "$dev" "$gid" \
		$((port + 4)) 120 ib_read_bw -n 50
	perftest_pair "send_bw_$srv_dev" "$server" "$dev" "$gid" \
		$((port + 5)) 120 ib_send_bw -n 50
	rping_check "rping_$srv_dev" "$server" $((port + 6)) 4096
}

# mckey_round NAME RECEIVER_ROLE: UD multicast through the RDMA CM: the
# receiver joins 239.1.2.4 and must get all 20 messages the other VM
# sends to the group (mckey's receiver waits for every one).
mckey_round() {
	local name=$1 log=$STELLAR_OUT/$1.log pid rc=0

	if [ "$STELLAR_ROLE" = "$2" ]; then
		timeout 60 stdbuf -oL mckey -m 239.1.2.4 -b "$(my_ip 1)" \
			-C 20 -S 256 >"$log" 2>&1 &
		pid=$!
		wait_for 30 grep -q "receiving data transfers" "$log"
		put_val "$name.ready" 1
		wait "$pid" || rc=$?
	else
		get_val "$name.ready" >/dev/null
		timeout 60 stdbuf -oL mckey -m 239.1.2.4 -b "$(my_ip 1)" -s \
			-C 20 -S 256 >"$log" 2>&1 || rc=$?
	fi
	barrier "$name.done"
	[ "$rc" = 0 ] || fail "$name: mckey on $dev exited with $rc:"$'\n'"$(tail -20 "$log")"
	assert_not_contains "$(cat "$log")" MULTICAST_ERROR "$name on $dev"
	assert_contains "$(cat "$log")" "data transfers complete" "$name on $dev"
	log "$name: ok on $dev"
}

# ext_check: while stellar (VM b) writes to rxe, the stellar QP offers its
# wire extensions but, rxe never accepting them, stays standard
# (Documentation/wire-extensions.rst).
ext_check() {
	local snap=$STELLAR_OUT/qps-during-write.txt watcher

	if [ "$STELLAR_ROLE" = b ]; then
		: >"$snap"
		(for _ in $(seq 150); do
			cat /proc/stellar/stellar0/qps >>"$snap"
			sleep 0.1
		done) &
		watcher=$!
	fi
	perftest_pair write_bw_ext_check a "$dev" "$gid" 18990 120 \
		ib_write_bw -n 400
	[ "$STELLAR_ROLE" = b ] || return 0
	kill "$watcher" 2>/dev/null || true
	wait "$watcher" 2>/dev/null || true
	grep -q '^ext_offered: 1' "$snap" ||
		fail "no snapshot of the stellar RC QP offering its extensions"
	assert_eq "$(grep -c '^ext_on: 1' "$snap" || true)" 0 \
		"snapshots with the extensions on against rxe"
	log "stellar QP against rxe: extensions offered, never used"
}

one_direction a 18900
one_direction b 18950
ext_check
mckey_round mckey_rxe_to_stellar b
mckey_round mckey_stellar_to_rxe a

barrier interop-done
if [ "$STELLAR_ROLE" = a ]; then
	rxe_down
else
	rdma link delete stellar0
	stellar_unload
fi
log "verbs_interop_rxe OK"
