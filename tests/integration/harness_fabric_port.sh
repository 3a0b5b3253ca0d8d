#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# The fabric's switch port (tests/vm/fabric-port.sh) on a veth, one VM:
#
#   - an ECN-capable flood to UDP port 4791, as fast as the sending
#     socket's buffer lets it (the port's queue fills), is marked by the
#     RoCE class's RED queue;
#   - right after it, every ping (not ECN-capable) passes: the flood
#     left RED with a high average queue, which must not drop what is
#     not RoCE (one RED queue for all traffic dropped the first few
#     dozen packets after a busy run, and a TCP SYN could be lost for a
#     minute);
#   - pings sent ECN-capable (-Q 2) take the RED queue and pass, marked,
#     not dropped; plain ones do not take it; RoCE that is not
#     ECN-capable does;
#   - after a flood, RoCE that is not ECN-capable (rdma_rxe's) meets
#     RED's stale average (logged), and after port_idle ("fabric_cmd
#     idle") it passes: none dropped;
#   - a port made dark drops every packet, and "clear" brings both
#     classes back (the flood is marked again, the four RED filters
#     once each, pings pass), also when cleared twice.
# stellar-test: vms=1 timeout=300

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"
# shellcheck source=tests/vm/fabric-port.sh
. "$STELLAR_REPO/tests/vm/fabric-port.sh"

RATE=5mbit
RED_MIN=20000
RED_MAX=60000
RED_BURST=20
RED_PROB=0.2
PINGS=20

cleanup() {
	ip netns del fp_sw 2>/dev/null || true
	ip netns del fp_h 2>/dev/null || true
}
trap cleanup EXIT

# flood SECONDS: ECN-capable (ECT(0)) datagrams of 1400 bytes from the
# switch side to UDP port 4791, as fast as python sends them.
flood() {
	ip netns exec fp_sw python3 - "$1" <<'EOF'
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, 2)
end = time.time() + float(sys.argv[1])
sent = 0
while time.time() < end:
    s.sendto(b"x" * 1400, ("10.9.0.2", 4791))
    sent += 1
print(sent)
EOF
}

# red_counter FIELD: FIELD (marked, early...) of the RoCE class's RED.
red_counter() {
	tc -n fp_sw -s -j qdisc show dev v1 | python3 -c '
import json, sys
for q in json.load(sys.stdin):
    if q["kind"] == "red":
        print(q.get(sys.argv[1], 0))
        break
else:
    print(-1)' "$1"
}

# pings_received N [PING-ARGS...]: how many of N pings (0.1 s apart)
# were answered.
pings_received() {
	local n=$1

	shift
	# (ping exits 1 when some went unanswered)
	{ ip netns exec fp_sw ping -n -q -c "$n" -i 0.1 -W 1 "$@" 10.9.0.2 || true; } |
		awk '/transmitted/ { print $4 }'
}

# red_filters: the filters that send packets to the RED queue.
red_filters() {
	tc -n fp_sw filter show dev v1 parent 10: | grep -c 'flowid 10:2' || true
}

# roce5: five datagrams to UDP port 4791, not ECN-capable (rdma_rxe's).
roce5() {
	ip netns exec fp_sw python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(5):
    s.sendto(b"x" * 100, ("10.9.0.2", 4791))'
}

# ping_classes WHAT: RoCE not ECN-capable and pings sent ECN-capable take
# the RED queue, plain pings do not.
ping_classes() {
	local before

	before=$(red_counter packets)
	assert_eq "$(pings_received 5)" 5 "$1: plain pings answered"
	assert_eq "$(red_counter packets)" "$before" "$1: RED queue's packets after plain pings"
	assert_eq "$(pings_received 5 -Q 2)" 5 "$1: ECN-capable pings answered"
	[ "$(red_counter packets)" -ge $((before + 5)) ] ||
		fail "$1: 5 ECN-capable pings, but the RED queue went from $before to $(red_counter packets) packets"
	# (RED may drop them: they come after the flood, not ECN-capable)
	before=$(($(red_counter packets) + $(red_counter drops)))
	roce5
	sleep 0.5
	[ $(($(red_counter packets) + $(red_counter drops))) -ge $((before + 5)) ] ||
		fail "$1: 5 RoCE datagrams, but the RED queue's packets and drops went from $before to $(($(red_counter packets) + $(red_counter drops)))"
}

# flood_then_ping WHAT: the flood is marked, then every ping passes.
flood_then_ping() {
	local marked sent got

	marked=$(red_counter marked)
	sent=$(flood 3)
	[ "$(red_counter marked)" -gt "$marked" ] ||
		fail "$1: the RoCE class marked none of $sent ECN-capable packets:
$(tc -n fp_sw -s qdisc show dev v1)"
	sleep 1
	got=$(pings_received "$PINGS")
	assert_eq "$got" "$PINGS" "$1: pings answered right after the flood ($sent packets sent)"
	log "$1: $sent ECN-capable packets sent, $(red_counter marked) marked in all; $got of $PINGS pings"
}

# idle_check: RoCE not ECN-capable passes once port_idle has run.
idle_check() {
	local drops packets

	flood 2 >/dev/null
	sleep 1
	drops=$(red_counter drops)
	roce5
	sleep 0.5
	log "5 RoCE datagrams, not ECN-capable, after a flood: $(($(red_counter drops) - drops)) dropped by RED's stale average"
	port_idle fp_sw
	drops=$(red_counter drops)
	packets=$(red_counter packets)
	roce5
	sleep 0.5
	assert_eq "$(red_counter drops)" "$drops" "RED's drops of 5 RoCE datagrams after port_idle"
	[ "$(red_counter packets)" -ge $((packets + 5)) ] ||
		fail "5 RoCE datagrams after port_idle, but the RED queue went from $packets to $(red_counter packets) packets"
}

port_modules
modprobe veth
ip netns add fp_sw
ip netns add fp_h
ip link add v1 netns fp_sw type veth peer name v2 netns fp_h
ip -n fp_sw addr add 10.9.0.1/24 dev v1
ip -n fp_h addr add 10.9.0.2/24 dev v2
ip -n fp_sw link set v1 up
ip -n fp_h link set v2 up
shape fp_sw v1 | tc -n fp_sw -batch -
assert_eq "$(red_filters)" 4 "RED filters after shape"
assert_eq "$(pings_received 3)" 3 "pings over the idle port"

flood_then_ping "shaped port"
ping_classes "shaped port"
idle_check

impair_port fp_sw v1 loss 100%
assert_eq "$(pings_received 3)" 0 "pings over the dark port"
impair_port fp_sw v1 clear
assert_eq "$(red_filters)" 4 "RED filters after clear"
flood_then_ping "cleared port"
ping_classes "cleared port"
impair_port fp_sw v1 clear
assert_eq "$(red_filters)" 4 "RED filters after a second clear"
assert_eq "$(pings_received 3)" 3 "pings after a second clear"
log "fabric port: RoCE marked in its own class, the rest passes after a burst, dark and clear"
