#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# UD multicast through the RDMA CM (mckey), stellar on both ends: VM b
# joins 239.1.2.3 and waits for the messages VM a sends to the group.
# mckey's receiver returns only once every one of its QPs has completed
# -C receives, so a lost message hangs it (and fails the test); neither end
# may report RDMA_CM_EVENT_MULTICAST_ERROR.  While b is joined, eth0
# receives the group's Ethernet address 01:00:5e:01:02:03; after mckey
# leaves, the address is gone.  The second round joins the group again
# with two QPs on b (-c 2): each gets its own copy of every message.
# Then the device's advertised multicast limits.
# stellar-test: vms=2 links=1 timeout=600

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

stellar_pair_up

GROUP=239.1.2.3
GROUP_MAC=01:00:5e:01:02:03
COUNT=20
SIZE=256

# joined: eth0 receives the group (link layer and IP).
joined() {
	ip maddr show dev "$(link_dev 1)" | grep -q "link  *$GROUP_MAC" &&
		ip maddr show dev "$(link_dev 1)" | grep -qE "inet +$GROUP( |\$)"
}

# no_mcast_error LOG: mckey ran through: no error event, no failure.
no_mcast_error() {
	assert_not_contains "$(cat "$1")" MULTICAST_ERROR "$1"
	assert_not_contains "$(cat "$1")" "failed" "$1"
	assert_contains "$(cat "$1")" "data transfers complete" "$1"
}

# mcast_state: what to look at when a round fails.
mcast_state() {
	echo "--- /proc/stellar/stellar0/stats"
	cat /proc/stellar/stellar0/stats
	echo "--- ip maddr"
	ip maddr show dev "$(link_dev 1)"
	echo "--- IP/UDP counters"
	grep -E '^(Ip|Udp|IpExt):' /proc/net/snmp /proc/net/netstat 2>/dev/null
}

# mcast_round NAME CONNECTIONS: b receives with CONNECTIONS QPs, a sends.
mcast_round() {
	local name=$1 conns=$2 log=$STELLAR_OUT/$1.log pid rc=0 before after

	if [ "$STELLAR_ROLE" = b ]; then
		before=$(stellar_stat stellar0 rx_mcast_packets)
		timeout 60 stdbuf -oL mckey -m "$GROUP" -b "$(my_ip 1)" -c "$conns" \
			-C "$COUNT" -S "$SIZE" >"$log" 2>&1 &
		pid=$!
		wait_for 60 grep -q "receiving data transfers" "$log"
		joined || fail "$name: eth0 does not receive $GROUP ($GROUP_MAC):"$'\n'"$(ip maddr show dev "$(link_dev 1)")"
		put_val "$name.ready" 1
		wait "$pid" || rc=$?
		[ "$rc" = 0 ] || fail "$name: mckey receiver exited with $rc:"$'\n'"$(tail -20 "$log")"$'\n'"$(mcast_state)"
		no_mcast_error "$log"
		after=$(stellar_stat stellar0 rx_mcast_packets)
		[ $((after - before)) -ge "$COUNT" ] ||
			fail "$name: rx_mcast_packets grew by $((after - before)), not $COUNT"
		! joined || fail "$name: eth0 still receives $GROUP after mckey left"
		log "$name: $conns QP(s) received $COUNT messages each"
	else
		get_val "$name.ready" >/dev/null
		timeout 60 stdbuf -oL mckey -m "$GROUP" -b "$(my_ip 1)" -s \
			-C "$COUNT" -S "$SIZE" >"$log" 2>&1 || rc=$?
		[ "$rc" = 0 ] || fail "$name: mckey sender exited with $rc:"$'\n'"$(tail -20 "$log")"
		no_mcast_error "$log"
		log "$name: sent $COUNT messages to $GROUP"
		mcast_state >"$STELLAR_OUT/$name.sender-state"
	fi
	barrier "$name.done"
}

devinfo=$(ibv_devinfo -v -d stellar0)
for limit in "max_mcast_grp:.*1024" "max_mcast_qp_attach:.*64" \
	"max_total_mcast_qp_attach:.*4096"; do
	echo "$devinfo" | grep -q "$limit" ||
		fail "ibv_devinfo -v lacks $limit:"$'\n'"$(echo "$devinfo" | grep mcast)"
done

mcast_round join1 1
# Leave, then join again, now with two receiving QPs in the group.
mcast_round rejoin2 2

barrier mcast-done
rdma link delete stellar0
stellar_unload
log "verbs_mcast OK"
