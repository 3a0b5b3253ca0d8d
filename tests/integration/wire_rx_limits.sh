#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Receive limits and delivery.  stellar0 sits on veth0 (10.50.0.1), whose
# peer end is in netns ns1 (10.50.0.2), from where helpers/roce_craft.py
# sends crafted packets; stellar1 sits on veth1 (10.51.0.1) in the same
# namespace, reachable from ns1 only through veth0.  RC QPs are held by
# helpers/wire_qp.c.
#
# - Floods at a QP in INIT (SENDs), in RTR (ACKs) and at a QP in RTS from
#   an address other than its peer's are dropped before anything is
#   queued (drop_state, drop_source; the device's rx_queued_bytes_max
#   stays 0).
# - A SEND whose payload is longer than the path MTU (1024) is dropped
#   (drop_header), not received.
# - With the rx_queue_bytes cap at its minimum a flood is cut at the cap:
#   rx_drop_queue_full counts, rx_queued_bytes_max never exceeds the cap,
#   rx_queued_bytes returns to 0.
# - A packet for stellar1's address arriving on veth0 goes to stellar1,
#   never to stellar0's QP with the packet's QPN; a packet this host sends
#   to stellar1's address from a QP of stellar0 (an ACK sent through the
#   loopback path) goes to stellar1 too.
# stellar-test: vms=1 timeout=600 alone=yes

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

HELPERS=$STELLAR_REPO/tests/integration/helpers
CRAFT=$HELPERS/roce_craft.py
WIRE_QP=/tmp/wire_qp
A_IP=10.50.0.1 PEER=10.50.0.2 STRANGER=10.50.0.3 B_IP=10.51.0.1
CAP=/sys/module/virtio_stellar/parameters/rx_queue_bytes
declare -A QPN QP_FD

# craft SRC DST CASE [ARGS...]: crafted packets from ns1; prints how many
# were sent.
craft() {
	local src=$1 dst=$2 out

	shift 2
	# shellcheck disable=SC2086 # CRAFT_PREFIX: words of a command
	out=$(ip netns exec ns1 ${CRAFT_PREFIX:-} python3 "$CRAFT" "$@" --src "$src" \
		--dst "$dst" 2>>"$STELLAR_OUT/craft.log") ||
		fail "roce_craft.py $* failed:"$'\n'"$(tail -5 "$STELLAR_OUT/craft.log")"
	echo "$out" | tail -n 1
}

qp_stat_is() {
	[ "$(stellar_qp_stat "$1" "$2" "$3")" = "$4" ]
}

stat_is() {
	[ "$(stellar_stat "$1" "$2")" = "$3" ]
}

stat_at_least() {
	[ "$(stellar_stat "$1" "$2")" -ge "$3" ]
}

# start_qp NAME DEV LOCAL_IP PEER_IP REMOTE_QPN RQ_PSN [STATE]: a wire_qp
# QP; its number goes to QPN[NAME], qp_cmd NAME talks to it.
start_qp() {
	local name=$1 dev=$2 gid fifo=/tmp/wire_qp.$1 err=$STELLAR_OUT/wire_qp.$1.err
	local fd

	gid=$(gid_index "$dev" "$3")
	mkfifo "$fifo"
	"$WIRE_QP" "$dev" "$gid" "$4" "$5" "$6" "${7:-rts}" <"$fifo" \
		>"$fifo.out" 2>"$err" &
	exec {fd}>"$fifo"
	QP_FD[$name]=$fd
	for _ in $(seq 150); do
		grep -q '^qpn ' "$fifo.out" && break
		sleep 0.2
	done
	grep -q '^qpn ' "$fifo.out" ||
		fail "wire_qp $name did not start: $(cat "$err")"
	QPN[$name]=$(awk '$1 == "qpn" { print $2 }' "$fifo.out")
	log "QP $name: $dev QPN ${QPN[$name]} ${7:-rts}, peer $4"
}

lines_above() {
	[ "$(wc -l <"$1")" -gt "$2" ]
}

# qp_cmd NAME COMMAND: the answer of wire_qp NAME goes to QP_REPLY.
qp_cmd() {
	local out=/tmp/wire_qp.$1.out n

	n=$(wc -l <"$out")
	echo "$2" >&"${QP_FD[$1]}"
	wait_for 60 lines_above "$out" "$n"
	QP_REPLY=$(tail -n 1 "$out")
}

stop_qps() {
	local name

	for name in "${!QP_FD[@]}"; do
		echo quit >&"${QP_FD[$name]}"
		eval "exec ${QP_FD[$name]}>&-"
	done
	wait
}

setup_network() {
	sysctl -qw net.core.netdev_max_backlog=100000
	ip netns add ns1
	ip link add veth0 type veth peer name veth0p
	ip link set veth0p netns ns1
	ip link add veth1 type veth peer name veth1p
	ip addr add "$A_IP/24" dev veth0
	ip addr add "$B_IP/24" dev veth1
	ip link set veth0 up
	ip link set veth1 up
	ip link set veth1p up
	ip -n ns1 addr add "$PEER/24" dev veth0p
	ip -n ns1 link set veth0p up
	ip -n ns1 link set lo up
	ip -n ns1 route add 10.51.0.0/24 via "$A_IP"
	# QPs of one device with a peer reached through the other device's
	# netdev: modify_qp resolves the peer's MAC on the QP's own netdev.
	ip neigh add "$B_IP" lladdr 02:00:00:00:51:01 dev veth0 nud permanent
	ip neigh add "$PEER" lladdr 02:00:00:00:50:02 dev veth1 nud permanent
	# A packet from stellar1's address comes in on veth0 (loopback case).
	sysctl -qw net.ipv4.conf.all.rp_filter=0
	sysctl -qw net.ipv4.conf.veth0.rp_filter=0
	sysctl -qw net.ipv4.conf.veth0.accept_local=1
	wait_for 10 ip netns exec ns1 ping -c 1 -W 1 "$A_IP"
	wait_for 10 ip netns exec ns1 ping -c 1 -W 1 "$B_IP"
	rdma link add stellar0 type stellar netdev veth0
	rdma link add stellar1 type stellar netdev veth1
	wait_for 15 ib_port_state_is stellar0 PORT_ACTIVE
	wait_for 15 ib_port_state_is stellar1 PORT_ACTIVE
	gcc -O2 -Wall -o "$WIRE_QP" "$HELPERS/wire_qp.c" -libverbs ||
		fail "cannot build helpers/wire_qp.c"
}

# flood NAME COUNTER SRC CASE [ARGS...]: crafted packets at QP NAME of
# stellar0 must each be counted under COUNTER before anything is queued.
flood() {
	local name=$1 counter=$2 src=$3 qpn=${QPN[$1]} sent

	shift 3
	sent=$(craft "$src" "$A_IP" "$@" --qpn "$qpn" --count 300)
	wait_for 60 qp_stat_is stellar0 "$qpn" "$counter" "$sent"
	assert_eq "$(stellar_stat stellar0 rx_queued_bytes_max)" 0 \
		"bytes ever queued after $sent packets at QP $name ($counter)"
	log "QP $name: $sent packets ($*) dropped before queueing as $counter"
}

# Cheap checks before the backlog.
early_drops() {
	start_qp init stellar0 "$A_IP" "$PEER" 0x777 0x100 init
	flood init drop_state "$PEER" psn --psn 0x100
	start_qp rtr stellar0 "$A_IP" "$PEER" 0x777 0x100 rtr
	flood rtr drop_state "$PEER" ack --psn 0
	start_qp q stellar0 "$A_IP" "$PEER" 0x777 0x100
	flood q drop_source "$STRANGER" psn --psn 0x100
	qp_cmd q "poll 0.5"
	assert_eq "$QP_REPLY" "completions 0" "QP q after the floods"
}

# A payload beyond the path MTU (1024) is dropped.
over_mtu() {
	local qpn=${QPN[q]}

	craft "$PEER" "$A_IP" send --qpn "$qpn" --psn 0x100 --data big \
		--fill 1100 >/dev/null
	wait_for 30 qp_stat_is stellar0 "$qpn" drop_header 1
	qp_cmd q "poll 1"
	assert_eq "$QP_REPLY" "completions 0" "QP q after an 1100-byte SEND"
	craft "$PEER" "$A_IP" send --qpn "$qpn" --psn 0x100 --data fits \
		--fill 1024 >/dev/null
	qp_cmd q "poll 20"
	assert_contains "$QP_REPLY" "completion status 0 opcode 128 byte_len 1024" \
		"a 1024-byte SEND"
	log "an 1100-byte SEND over a 1024 path MTU was dropped"
}

# The device's backlog stops at rx_queue_bytes.
byte_cap() {
	local qpn=${QPN[q]} max sent rx full

	max=$(stellar_stat stellar0 rx_queued_bytes_max)
	[ "$max" -gt 4096 ] || max=4096
	full=$(stellar_stat stellar0 rx_drop_queue_full)
	echo 4096 >"$CAP" || fail "cannot set rx_queue_bytes"
	rx=$(stellar_stat stellar0 rx_packets)
	# A real-time sender on the one vCPU keeps the receive work (a
	# normal kworker) off it, so the backlog fills: without that, whether
	# the sender outruns the work is up to the scheduler.
	sent=$(CRAFT_PREFIX="chrt -f 10" craft "$PEER" "$A_IP" psn \
		--qpn "$qpn" --psn 0x900100 --count 2000)
	wait_for 60 stat_at_least stellar0 rx_packets $((rx + sent))
	wait_for 30 stat_is stellar0 rx_queued_bytes 0
	full=$(($(stellar_stat stellar0 rx_drop_queue_full) - full))
	[ "$full" -gt 0 ] ||
		fail "$sent packets with a 4096-byte cap: rx_drop_queue_full did not grow"
	[ "$(stellar_stat stellar0 rx_queued_bytes_max)" -le "$max" ] ||
		fail "rx_queued_bytes_max $(stellar_stat stellar0 rx_queued_bytes_max) beyond the cap 4096"
	echo 67108864 >"$CAP"
	log "$sent packets: $full beyond the 4096-byte cap dropped; at most $(stellar_stat stellar0 rx_queued_bytes_max) bytes queued"
}

# A packet for stellar1's address that comes in on veth0.
other_device() {
	local a0 b0

	start_qp b stellar1 "$B_IP" "$PEER" 0x777 0x100
	qp_cmd q recv
	a0=$(stellar_stat stellar0 rx_packets)
	b0=$(stellar_stat stellar1 rx_packets)
	craft "$PEER" "$B_IP" send --qpn "${QPN[q]}" --psn 0x101 \
		--data "for stellar1" >/dev/null
	wait_for 30 stat_at_least stellar1 rx_packets $((b0 + 1))
	qp_cmd q "poll 1"
	assert_eq "$QP_REPLY" "completions 0" \
		"stellar0's QP ${QPN[q]} after a packet for $B_IP"
	assert_eq "$(stellar_stat stellar0 rx_packets)" "$a0" \
		"stellar0 rx_packets after a packet for $B_IP"
	craft "$PEER" "$B_IP" send --qpn "${QPN[b]}" --psn 0x100 \
		--data "for stellar1" >/dev/null
	qp_cmd b "poll 20"
	assert_eq "$QP_REPLY" \
		"completion status 0 opcode 128 byte_len 12 data for stellar1" \
		"stellar1's QP ${QPN[b]} after a packet for $B_IP on veth0"
	log "packets for $B_IP on veth0 went to stellar1"
}

# QP t of stellar0 answers a SEND from stellar1's address; with the wire
# extensions offered its ACK may take any route, which is local: it goes
# through the loopback path and must reach stellar1, not QP v of
# stellar0 that the ACK's QPN names.
loopback() {
	local b0

	start_qp v stellar0 "$A_IP" "$A_IP" 0x777 0x100
	start_qp t stellar0 "$A_IP" "$B_IP" "${QPN[v]}" 0x100
	b0=$(stellar_stat stellar1 rx_packets)
	craft "$B_IP" "$A_IP" send --xph --qpn "${QPN[t]}" --psn 0x100 \
		--data "from stellar1" >/dev/null
	qp_cmd t "poll 20"
	assert_contains "$QP_REPLY" "completion status 0 opcode 128 byte_len 13" \
		"QP t after a SEND from $B_IP"
	wait_for 30 stat_at_least stellar1 rx_packets $((b0 + 1))
	sleep 0.5
	assert_eq "$(stellar_qp_stat stellar0 "${QPN[v]}" rx_packets)" 0 \
		"stellar0's QP v (${QPN[v]}) after the ACK to $B_IP"
	log "an ACK sent to $B_IP over the loopback path went to stellar1"
}

assert_ok python3 "$CRAFT" selftest
stellar_load
setup_network
early_drops
over_mtu
byte_cap
other_device
loopback
stop_qps

rdma link delete stellar1
rdma link delete stellar0
ip netns del ns1
ip link del veth1
stellar_unload
log "wire_rx_limits OK"
