#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# The leaf-spine fabric of the test harness (tests/vm/fabric-router.sh)
# and stellar's spray over it.  Four hosts, two uplinks each; a and c
# hang off leaf1, b and d off leaf2, two spines.
#
#   - UDP from 64 source ports, a to b: every port arrives; with the link
#     leaf1-spine1 dark towards the spine, some ports are lost and some
#     arrive (the leaf spreads them over both spines), and the router's
#     counters show the drops;
#   - stellar, spray_paths 16: ib_write_bw a->b, then ibv_rc_pingpong -c
#     (data checked) between a and d: the sender uses both uplinks, leaf1
#     both spines, and b's leaf both of b's downlinks;
#   - OpenMPI over UCX on all four hosts (helpers/fabric_mpi.sh):
#     MPI_Allreduce with checked results, every host's device takes in
#     the data its rank needs, a sends on both uplinks.  It runs here, on
#     the fabric already built, when the test is named (lib.sh long_run;
#     tests/long/fabric_mpi.sh runs it alone): in make check's short form
#     it cost two of the test's six minutes, and apps_mpi runs MPI over
#     stellar there.
# stellar-test: vms=4 fabric=2 leaves=2 spines=2 rate=100mbit timeout=900

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"
# shellcheck source=tests/vm/fabric.sh
. "$STELLAR_REPO/tests/vm/fabric.sh"
# shellcheck source=tests/integration/helpers/mpi.sh
. "$STELLAR_REPO/tests/integration/helpers/mpi.sh"
# shellcheck source=tests/integration/helpers/fabric_mpi.sh
. "$STELLAR_REPO/tests/integration/helpers/fabric_mpi.sh"

NPORTS=64
# At least this many packets on every port that must carry a flow.
MIN_PACKETS=200

# udp_round NAME: a sprays NPORTS source ports at b; b prints how many
# arrived (and publishes it).
udp_round() {
	local name=$1 out=$STELLAR_OUT/$1.sink stop=/tmp/$1.stop pid

	case "$STELLAR_ROLE" in
	b)
		udp_sink 9 "$out" "$stop" &
		pid=$!
		wait_for 30 _pair_ready udp:9
		put_val "$name.ready" 1
		get_val_from a "$name.sent" >/dev/null
		sleep 1
		touch "$stop"
		wait "$pid"
		put_val "$name.arrived" "$(wc -l <"$out")"
		;;
	a)
		get_val_from b "$name.ready" >/dev/null
		udp_spray "$(fabric_ip b)" 9 40000 "$NPORTS"
		put_val "$name.sent" 1
		;;
	esac
	barrier "$name.done"
}

check_udp() {
	local stats arrived

	udp_round lit
	[ "$STELLAR_ROLE" != a ] ||
		fabric_cmd dark leaf1-spine1 up >/dev/null
	barrier dark
	udp_round dark
	if [ "$STELLAR_ROLE" = a ]; then
		stats=$(fabric_cmd stats)
		echo "$stats" >"$STELLAR_OUT/stats-dark.txt"
		fabric_cmd clear leaf1-spine1 up >/dev/null
		arrived=$(get_val_from b lit.arrived)
		assert_eq "$arrived" "$NPORTS" "source ports that reached b"
		arrived=$(get_val_from b dark.arrived)
		log "leaf1-spine1 dark: $arrived of $NPORTS source ports reached b"
		if [ "$arrived" -lt $((NPORTS / 8)) ] ||
			[ "$arrived" -gt $((NPORTS * 7 / 8)) ]; then
			fail "$arrived of $NPORTS ports arrived over a half-dark leaf: not spread over both spines"
		fi
		[ "$(fabric_stat "$stats" leaf1-spine1 up dropped)" -gt 0 ] ||
			fail "the dark port counted no drops:"$'\n'"$stats"
	fi
	barrier udp-checked
}

# stellar_pair NAME SERVER CLIENT SERVER_CMD...: run a perftest-style
# server on SERVER and, once it listens on TCP PORT, "CMD SERVER_IP" on
# CLIENT; the other hosts go on.  pair_wait waits for it.
stellar_pair() {
	local name=$1 server=$2 client=$3 port=$4 log=$STELLAR_OUT/$1.log

	shift 4
	PAIR_NAME=$name
	if [ "$STELLAR_ROLE" = "$server" ]; then
		timeout "$(scaled 120)" "$@" >"$log" 2>&1 &
		PAIR_PID=$!
		wait_for 30 tcp_listening "$port"
		put_val "$name.ready" 1
	elif [ "$STELLAR_ROLE" = "$client" ]; then
		get_val_from "$server" "$name.ready" >/dev/null
		timeout "$(scaled 120)" "$@" "$(fabric_ip "$server")" >"$log" 2>&1 &
		PAIR_PID=$!
	else
		PAIR_PID=''
	fi
}

# pair_wait: wait for this host's side of the pair; on failure, show the
# program's error lines first (the log's head is perftest's banner) and
# the device's retry counters.
pair_wait() {
	local rc=0 log=$STELLAR_OUT/$PAIR_NAME.log stats=$STELLAR_OUT/$PAIR_NAME.stats

	[ -n "$PAIR_PID" ] || return 0
	wait "$PAIR_PID" || rc=$?
	cp /proc/stellar/stellar0/stats "$stats"
	[ "$rc" = 0 ] ||
		fail "$PAIR_NAME: exited with $rc:
$(grep -iE 'err|fail|couldn|unable' "$log" || true)
$(grep -E 'retrans|timeout|nak|drop' "$stats" || true)
$(tail -8 "$log")"
	log "$PAIR_NAME: ok"
}

check_spray() {
	local before after gid port delta dev
	local -a tx0=()

	stellar_load spray_paths=16
	rdma link add stellar0 type stellar netdev eth0
	gid=$(gid_index stellar0 "$FABRIC_IP")
	STELLAR_GID=$gid
	barrier stellar-up
	[ "$STELLAR_ROLE" != a ] || before=$(fabric_cmd stats)
	for dev in eth0 eth1; do
		tx0+=("$(tx_packets "$dev")")
	done
	barrier stats-before
	stellar_pair bw_ab b a 18515 ib_write_bw -d stellar0 -x "$gid" \
		-p 18515 -s 65536 -n 150
	pair_wait
	if [ "$STELLAR_ROLE" = a ]; then
		perftest_value "$STELLAR_OUT/$PAIR_NAME.log" 4 >/dev/null
		for dev in 0 1; do
			delta=$(($(tx_packets "eth$dev") - tx0[dev]))
			[ "$delta" -ge "$MIN_PACKETS" ] ||
				fail "uplink eth$dev sent $delta packets: spray did not use it"
		done
	fi
	barrier bw-done
	stellar_pair pingpong d a 18517 ibv_rc_pingpong -d stellar0 -g "$gid" \
		-p 18517 -c -s 65536 -n 100
	pair_wait
	barrier pingpong-done
	if [ "$STELLAR_ROLE" = a ]; then
		after=$(fabric_cmd stats)
		echo "$after" >"$STELLAR_OUT/stats-spray.txt"
		for port in "leaf1-spine1 up" "leaf1-spine2 up" "leaf2-spine1 down" \
			"leaf2-spine2 down" "b-u1 down" "b-u2 down"; do
			# shellcheck disable=SC2086 # "LINK DIR"
			delta=$(($(fabric_stat "$after" $port packets) - $(fabric_stat "$before" $port packets)))
			log "$port: $delta packets"
			[ "$delta" -ge "$MIN_PACKETS" ] ||
				fail "fabric port $port carried $delta packets of the spray:"$'\n'"$after"
		done
	fi
	"$STELLAR_REPO/tools/stellar-tool" paths --device stellar0 >"$STELLAR_OUT/paths.txt"
	barrier checked
}

fabric_up
check_udp
check_spray
mpi=''
if long_run; then
	fabric_mpi_allreduce
	mpi=', MPI'
fi
rdma link delete stellar0
stellar_unload
log "fabric smoke: ECMP over the spines, a dark link, spray across leaves$mpi"
