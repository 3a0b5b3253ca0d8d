#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Crafted RoCEv2 packets: stellar0 sits on veth0 in init_net, the peer end
# veth0p is in netns ns1, from where helpers/roce_craft.py sends UDP 4791
# packets through a raw socket (it writes the IP header itself and
# computes the ICRC).  Over IPv4 and IPv6: truncated headers, bad
# transport version, unsupported opcodes, bad lengths and bad ICRCs must
# each be counted exactly once under their own drop counter; unknown
# QPNs with a correct ICRC under rx_drop_no_qp; thousands of random and
# mutated packets must all be dropped.  Then an RC QP in RTS (the
# helpers/wire_qp.c program) must not accept packets whose PSN is far
# out of its window, must count them, must not accept one from another
# address than its peer's (drop_source), and must accept one with the
# right PSN.  The stellar wire extensions (Documentation/wire-extensions.rst):
# the XHDR bit on an opcode without a stellar header is a bad opcode; a
# SEND with a placement header is accepted and counted (ext_hdr_rcvd); a
# WRITE ahead of a gap is placed at once, bad placement headers (R_Key,
# MR bounds, offset, disagreement with the RETH) are dropped and counted;
# the LAST packet of a SEND ahead of its FIRST lands in the posted receive
# WQE at its offset and the SEND completes in order; a SEND a message
# further ahead lands in the receive WQE after, taken ahead, and the QP's
# move to the error state flushes taken WQEs in order.
# The READ responder: a duplicate READ is answered from the request it
# repeats (never from its own address, R_Key and length), a duplicate of
# no READ is dropped (drop_rd_duplicate); a READ beyond max_dest_rd_atomic
# unanswered ones is refused with NAK Invalid Request (nak_rd_limit), a
# READ behind the replay of an answered one is not.  The requester drops
# a NAK that names no request in flight (ghost_nak).  A READ of 1 GB
# streams its responses: meanwhile the device still carries
# ibv_rc_pingpong to a second device in ns1, and moving the QP to the
# error state, destroying it, or killing its process and unloading the
# module each take a few seconds at most.
# stellar-test: vms=1 timeout=900

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

HELPERS=$STELLAR_REPO/tests/integration/helpers
CRAFT=$HELPERS/roce_craft.py
DEV=stellar0
V4_LOCAL=10.50.0.1 V4_PEER=10.50.0.2 V4_STRANGER=10.50.0.3
V6_LOCAL=fd50::1 V6_PEER=fd50::2

# craft FAMILY CASE [ARGS...]: send crafted packets from ns1 (FAMILY 4 or
# 6); prints how many were sent.
craft() {
	local family=$1 out

	shift
	if [ "$family" = 6 ]; then
		set -- "$@" --src "$V6_PEER" --dst "$V6_LOCAL"
	else
		set -- "$@" --src "$V4_PEER" --dst "$V4_LOCAL"
	fi
	out=$(ip netns exec ns1 python3 "$CRAFT" "$@" 2>>"$STELLAR_OUT/craft.log") ||
		fail "roce_craft.py $* failed:"$'\n'"$(tail -5 "$STELLAR_OUT/craft.log")"
	echo "$out" | tail -n 1
}

# stat_sum SNAPSHOT NAME: counter NAME in a snapshot of the stats file;
# NAME "drops" sums all rx_drop_* counters and "rx_other" all rx_*
# counters but rx_packets and rx_bytes.
stat_sum() {
	echo "$1" | awk -v n="$2" '
		{ key = $1; sub(":$", "", key) }
		n == "drops" && key ~ /^rx_drop_/ { sum += $2; next }
		n == "rx_other" && key ~ /^rx_/ && key != "rx_packets" &&
			key != "rx_bytes" { sum += $2; next }
		key == n { sum += $2; found = 1 }
		END {
			if (n != "drops" && n != "rx_other" && !found)
				exit 1
			print sum + 0
		}' || fail "no counter '$2' in /proc/stellar/$DEV/stats"
}

# stat_delta BEFORE AFTER NAME: growth of NAME (see stat_sum).
stat_delta() {
	echo $(($(stat_sum "$2" "$3") - $(stat_sum "$1" "$3")))
}

# stats_changes BEFORE AFTER: the counters that changed, "name: old -> new".
stats_changes() {
	awk -v before="$1" -v after="$2" 'BEGIN {
		n = split(before, b, "\n"); split(after, a, "\n")
		for (i = 1; i <= n; i++) {
			split(b[i], old, " "); split(a[i], new, " ")
			if (old[2] != new[2])
				printf "  %s %s -> %s\n", old[1], old[2], new[2]
		}
	}'
}

stats() {
	cat "/proc/stellar/$DEV/stats"
}

# rx_packets_at_least N: the device has counted at least N packets.
rx_packets_at_least() {
	[ "$(stellar_stat "$DEV" rx_packets)" -ge "$1" ]
}

# expect_drops COUNTER FAMILY CASE [ARGS...]: send a case; every packet
# must reach the device and be counted once, under COUNTER ("drops": any
# drop counter).
expect_drops() {
	local counter=$1 family=$2 what="$3 (IPv$2)" before after sent
	local grown dropped

	shift 2
	before=$(stats)
	sent=$(craft "$family" "$@")
	[ "$sent" -gt 0 ] || fail "$what: nothing sent"
	wait_for 30 rx_packets_at_least \
		$(($(stat_sum "$before" rx_packets) + sent))
	sleep 0.2
	after=$(stats)
	assert_eq "$(stat_delta "$before" "$after" rx_packets)" "$sent" \
		"$what: rx_packets growth"
	grown=$(stat_delta "$before" "$after" "$counter")
	dropped=$(stat_delta "$before" "$after" drops)
	if [ "$grown" != "$sent" ] || [ "$dropped" != "$sent" ]; then
		fail "$what: sent $sent packets, $counter grew by $grown, all drop counters by $dropped:"$'\n'"$(stats_changes "$before" "$after")"
	fi
	log "$what: $sent packets dropped as $counter"
}

setup_network() {
	sysctl -qw net.core.netdev_max_backlog=100000
	ip netns add ns1
	ip link add veth0 type veth peer name veth0p
	ip link set veth0p netns ns1
	ip addr add "$V4_LOCAL/24" dev veth0
	ip addr add "$V6_LOCAL/64" dev veth0 nodad
	ip link set veth0 up
	ip -n ns1 addr add "$V4_PEER/24" dev veth0p
	ip -n ns1 addr add "$V6_PEER/64" dev veth0p nodad
	ip -n ns1 link set veth0p up
	ip -n ns1 link set lo up
	# Resolve the neighbours now: packets queued while a neighbour
	# resolves could be dropped before they reach the device.
	wait_for 10 ip netns exec ns1 ping -c 1 -W 1 "$V4_LOCAL"
	wait_for 10 ip netns exec ns1 ping -6 -c 1 -W 1 "$V6_LOCAL"
}

malformed_headers() {
	local family

	for family in 4 6; do
		expect_drops rx_drop_truncated "$family" truncated
		expect_drops rx_drop_bad_version "$family" bad-version
		expect_drops rx_drop_bad_opcode "$family" bad-opcode
		expect_drops rx_drop_bad_length "$family" bad-length
		expect_drops rx_drop_bad_icrc "$family" bad-icrc
		expect_drops rx_drop_bad_opcode "$family" xhdr-bad
	done
	expect_drops drops 4 random --count 3000 --seed 4791
	expect_drops drops 6 random --count 500
	expect_drops drops 4 random --count 1000
}

unknown_qpns() {
	expect_drops rx_drop_no_qp 4 no-qp
	expect_drops rx_drop_no_qp 6 no-qp
	expect_drops rx_drop_no_qp 4 no-qp --qpn 0x000fff
	expect_drops drops 4 mutate --count 2000 --seed 4791
	expect_drops drops 6 mutate --count 500
}

# --- a QP in RTS as a target -------------------------------------------

build_wire_qp() {
	WIRE_QP=/tmp/wire_qp
	gcc -O2 -Wall -o "$WIRE_QP" "$HELPERS/wire_qp.c" -libverbs ||
		fail "cannot build helpers/wire_qp.c"
}

# qp_cmd COMMAND: send a command to wire_qp; its answer is in QP_REPLY.
qp_cmd() {
	echo "$1" >&"${WIRE[1]}"
	read -r -t 60 -u "${WIRE[0]}" QP_REPLY ||
		fail "wire_qp did not answer '$1':"$'\n'"$(cat "$STELLAR_OUT/wire_qp.err")"
}

# post_recv WHAT: wire_qp posts one receive WQE, and says so.
post_recv() {
	qp_cmd recv
	assert_eq "$QP_REPLY" "recv posted" "$1"
}

# psn_probe QPN PSN COUNTED: 50 SENDs at PSN to the QP must not be
# accepted; with COUNTED=yes the rx counters other than rx_packets and
# rx_bytes (drop reasons) must count every one of them.
psn_probe() {
	local qpn=$1 psn=$2 counted=$3 before after sent rx_other

	before=$(stats)
	sent=$(craft 4 psn --qpn "$qpn" --psn "$psn" --count 50)
	wait_for 30 rx_packets_at_least $(($(stat_sum "$before" rx_packets) + sent))
	sleep 0.5
	after=$(stats)
	rx_other=$(stat_delta "$before" "$after" rx_other)
	if [ "$counted" = yes ] && [ "$rx_other" -lt "$sent" ]; then
		fail "PSN $psn: $sent packets far out of the window, rx drop counters grew by $rx_other only:"$'\n'"$(stats_changes "$before" "$after")"
	fi
	qp_cmd "poll 0.5"
	assert_eq "$QP_REPLY" "completions 0" "QP after PSN $psn packets"
	qp_cmd "untouched 4096"
	assert_eq "$QP_REPLY" "untouched yes" "receive buffer after PSN $psn packets"
	log "PSN $psn: $sent packets not accepted, $rx_other counted"
}

# stranger_send QPN: a SEND with the expected PSN and QPN, but from an
# address other than the QP's peer, must not be accepted; the QP counts it
# under drop_source.
stranger_send() {
	local qpn=$1

	ip netns exec ns1 python3 "$CRAFT" send --qpn "$qpn" --psn 0x100 \
		--data "from a stranger" --src "$V4_STRANGER" \
		--dst "$V4_LOCAL" >/dev/null 2>>"$STELLAR_OUT/craft.log" ||
		fail "roce_craft.py send from $V4_STRANGER failed"
	wait_for 10 qp_stat_is "$qpn" drop_source 1
	qp_cmd "poll 0.5"
	assert_eq "$QP_REPLY" "completions 0" "QP after a SEND from $V4_STRANGER"
	qp_cmd "untouched 4096"
	assert_eq "$QP_REPLY" "untouched yes" \
		"receive buffer after a SEND from $V4_STRANGER"
	log "a SEND from $V4_STRANGER (not the QP's peer) was dropped"
}

# qp_stat QPN NAME: counter NAME of QP QPN in /proc/stellar/$DEV/qps.
qp_stat() {
	stellar_qp_stat "$DEV" "$1" "$2"
}

# A SEND carrying the stellar placement header is received as a SEND.
ext_send() {
	local qpn=$1 psn=$2 data="stellar placement header"

	post_recv "a second receive"
	craft 4 send --xph --qpn "$qpn" --psn "$psn" --data "$data" >/dev/null
	qp_cmd "poll 20"
	assert_eq "$QP_REPLY" \
		"completion status 0 opcode 128 byte_len ${#data} data $data" \
		"the crafted SEND with a placement header"
	assert_eq "$(qp_stat "$qpn" ext_hdr_rcvd)" 1 "ext_hdr_rcvd"
	assert_eq "$(qp_stat "$qpn" ext_peer)" 1 "ext_peer (XCAP seen)"
	log "a SEND with a placement header was received"
}

# qp_stat_is QPN NAME VALUE: the counter has that value.
qp_stat_is() {
	[ "$(qp_stat "$1" "$2")" = "$3" ]
}

# write_ext QPN PSN VA RKEY DATA [ARGS...]: a WRITE_ONLY with a placement
# header.
write_ext() {
	local qpn=$1 psn=$2 va=$3 rkey=$4 data=$5

	shift 5
	craft 4 write --xph --qpn "$qpn" --psn "$psn" --va "$va" \
		--rkey "$rkey" --data "$data" "$@" >/dev/null
}

# Direct placement: a WRITE ahead of a gap lands in memory at once;
# placement headers with a bad R_Key (index or key byte), beyond the MR,
# disagreeing with the RETH or with a misaligned offset are dropped and
# counted, and write nothing; when the gap fills, the placed WRITE
# completes in order.
ext_placement() {
	local qpn=$1 va rkey bad

	qp_cmd mr
	read -r _ _ va _ rkey <<<"$QP_REPLY"
	write_ext "$qpn" 0x103 $((va + 2048)) "$rkey" "placed ahead of the gap"
	wait_for 10 qp_stat_is "$qpn" ooo_placed 1
	qp_cmd "peek 2048 23"
	assert_eq "$QP_REPLY" "peek placed ahead of the gap" \
		"memory after a WRITE ahead of the gap"
	assert_eq "$(qp_stat "$qpn" epsn)" $((0x102)) "epsn while the gap is open"

	bad=$(printf '%.0s!' $(seq 16))
	write_ext "$qpn" 0x104 $((va + 3072)) $((rkey ^ 0x100)) "$bad"
	write_ext "$qpn" 0x105 $((va + 4096 - 8)) "$rkey" "$bad"
	write_ext "$qpn" 0x106 $((va + 3072)) "$rkey" "$bad" --xva $((va + 3000))
	write_ext "$qpn" 0x107 $((va + 3072)) "$rkey" "$bad" --offset 1024
	# The right MR index with another key byte.
	write_ext "$qpn" 0x108 $((va + 3072)) $((rkey ^ 0x5a)) "$bad"
	wait_for 10 qp_stat_is "$qpn" drop_place 5
	qp_cmd "peek 3000 1096"
	assert_not_contains "$QP_REPLY" "!" "memory after bad placement headers"
	assert_eq "$(qp_stat "$qpn" ooo_placed)" 1 "ooo_placed after bad headers"

	craft 4 write --qpn "$qpn" --psn 0x102 --va $((va + 1024)) \
		--rkey "$rkey" --data "the gap filled" >/dev/null
	wait_for 10 qp_stat_is "$qpn" epsn $((0x104))
	qp_cmd "peek 1024 14"
	assert_eq "$QP_REPLY" "peek the gap filled" "the WRITE that filled the gap"
	log "WRITE placed ahead of a gap; 5 bad placement headers dropped"
}

# Direct placement of a SEND: its LAST packet, ahead of the gap, lands in
# the posted receive WQE at its offset at once; the FIRST fills the gap and
# the message completes in order with both parts.
ext_send_placement() {
	local qpn=$1 tail="the tail came first"

	post_recv "a third receive"
	craft 4 send --xph --opcode 2 --qpn "$qpn" --psn 0x105 --offset 1024 \
		--rmsn 2 --data "$tail" >/dev/null
	wait_for 10 qp_stat_is "$qpn" ooo_placed 2
	qp_cmd "peek 1024 ${#tail}"
	assert_eq "$QP_REPLY" "peek $tail" "receive buffer after the LAST"
	qp_cmd "poll 0.5"
	assert_eq "$QP_REPLY" "completions 0" "completions before the FIRST"
	craft 4 send --xph --opcode 0 --qpn "$qpn" --psn 0x104 --rmsn 2 \
		--data head --fill 1024 >/dev/null
	qp_cmd "poll 20"
	assert_contains "$QP_REPLY" \
		"completion status 0 opcode 128 byte_len $((1024 + ${#tail})) data head...." \
		"the SEND completed when its gap filled"
	qp_cmd "peek 1024 ${#tail}"
	assert_eq "$QP_REPLY" "peek $tail" "the placed tail after completion"
	log "SEND LAST placed ahead of its FIRST; completed in order"
}

# Receive WQEs taken ahead: a SEND one message beyond the gap is placed
# at once in the receive WQE after the next one; when the gap fills, both
# messages complete in order, each with its own length.  Then a SEND
# placed so again, and the QP moved to the error state: the WQE it was
# to use and the one before it are flushed, each once, in order.
ext_send_ahead() {
	local qpn=$1 second="the second message came first" first="first"

	post_recv "a receive for the message that fills the gap"
	post_recv "a receive for the message placed ahead"
	craft 4 send --xph --qpn "$qpn" --psn 0x107 --rmsn 4 \
		--data "$second" >/dev/null
	wait_for 10 qp_stat_is "$qpn" ooo_placed 3
	qp_cmd "poll 0.5"
	assert_eq "$QP_REPLY" "completions 0" "completions before the gap fills"
	craft 4 send --xph --qpn "$qpn" --psn 0x106 --rmsn 3 \
		--data "$first" >/dev/null
	qp_cmd "poll 20"
	assert_contains "$QP_REPLY" "completion status 0 opcode 128 byte_len ${#first} " \
		"the message that filled the gap, first"
	qp_cmd "poll 20"
	assert_contains "$QP_REPLY" "completion status 0 opcode 128 byte_len ${#second} " \
		"the message placed ahead, second"
	assert_eq "$(qp_stat "$qpn" epsn)" $((0x108)) "epsn after both"

	post_recv "a receive to be flushed"
	post_recv "a receive to be placed in and flushed"
	craft 4 send --xph --qpn "$qpn" --psn 0x109 --rmsn 6 \
		--data "$second" >/dev/null
	wait_for 10 qp_stat_is "$qpn" ooo_placed 4
	qp_cmd error
	qp_cmd "poll 20"
	assert_contains "$QP_REPLY" "completion status 5 " "the first flushed receive"
	qp_cmd "poll 20"
	assert_contains "$QP_REPLY" "completion status 5 " "the second flushed receive"
	qp_cmd "poll 0.5"
	assert_eq "$QP_REPLY" "completions 0" "completions after the flush"
	log "SEND placed one message ahead; completed in order, then flushed"
}

# start_wire_qp RQ_PSN: wire_qp as coprocess WIRE, its QP (QPN) expecting
# RQ_PSN.
start_wire_qp() {
	local gid

	gid=$(gid_index "$DEV" "$V4_LOCAL")
	coproc WIRE { "$WIRE_QP" "$DEV" "$gid" "$V4_PEER" 0x777 "$1" \
		2>"$STELLAR_OUT/wire_qp.err"; }
	read -r -t 60 -u "${WIRE[0]}" _ QPN ||
		fail "wire_qp did not start:"$'\n'"$(cat "$STELLAR_OUT/wire_qp.err")"
	log "RC QP $QPN in RTS expects PSN $1"
}

# stop_wire_qp: wire_qp destroys its resources and exits; STOP_MS says
# how long that took.
stop_wire_qp() {
	local pid=$WIRE_PID start

	start=$(date +%s%N)
	echo quit >&"${WIRE[1]}"
	wait "$pid" || fail "wire_qp exited with $?:"$'\n'"$(cat "$STELLAR_OUT/wire_qp.err")"
	STOP_MS=$((($(date +%s%N) - start) / 1000000))
}

psn_window() {
	local qpn psn

	build_wire_qp
	start_wire_qp 0x100
	qpn=$QPN

	for psn in 0x900100 0x500100 0xf00100; do
		psn_probe "$qpn" "$psn" yes
	done
	# A duplicate just behind the window: re-acknowledged, not placed.
	psn_probe "$qpn" 0x0ff no
	stranger_send "$qpn"

	craft 4 send --qpn "$qpn" --psn 0x100 --data "stellar crafted send ok!" >/dev/null
	qp_cmd "poll 20"
	assert_eq "$QP_REPLY" \
		"completion status 0 opcode 128 byte_len 24 data stellar crafted send ok!" \
		"the crafted SEND with the expected PSN"
	ext_send "$qpn" 0x101
	ext_placement "$qpn"
	ext_send_placement "$qpn"
	ext_send_ahead "$qpn"
	stop_wire_qp
	log "the packet with the expected PSN was received"
}

# --- the READ responder --------------------------------------------------

# read_listen ARGS...: READ requests (roce_craft.py read ARGS) from the
# peer's address; prints the responses of the next 2 seconds.
read_listen() {
	local out

	out=$(ip netns exec ns1 python3 "$CRAFT" read --listen 2 \
		--src "$V4_PEER" --dst "$V4_LOCAL" "$@" \
		2>>"$STELLAR_OUT/craft.log") ||
		fail "roce_craft.py read $* failed:"$'\n'"$(tail -5 "$STELLAR_OUT/craft.log")"
	echo "$out" | grep '^resp ' || true
}

# A duplicate READ is answered from the READ it repeats, from its own PSN
# on: its own address, R_Key and length are not used.  A duplicate of no
# READ is dropped and counted.
read_duplicates() {
	local va rkey resp a b

	start_wire_qp 0x1000
	qp_cmd mr
	read -r _ _ va _ rkey <<<"$QP_REPLY"
	a=$(printf 'A%.0s' $(seq 64))
	b=$(printf 'B%.0s' $(seq 64))
	craft 4 write --qpn "$QPN" --psn 0x1000 --va "$va" --rkey "$rkey" \
		--data "$a" >/dev/null
	craft 4 write --qpn "$QPN" --psn 0x1001 --va $((va + 2048)) \
		--rkey "$rkey" --data "$b" >/dev/null
	resp=$(read_listen --qpn "$QPN" --psn 0x1002 --va "$va" --rkey "$rkey" \
		--len 64 --count 1)
	assert_contains "$resp" "resp 10 001002 1f 64 $a" "the READ's response"
	resp=$(read_listen --qpn "$QPN" --psn 0x1002 --va $((va + 2048)) \
		--rkey "$rkey" --len 64 --count 1)
	assert_contains "$resp" "resp 10 001002 1f 64 $a" \
		"the response to a duplicate READ of other bytes"
	resp=$(read_listen --qpn "$QPN" --psn 0x1002 --va $((va + 2048)) \
		--rkey $((rkey ^ 0x100)) --len 4096 --count 1)
	assert_contains "$resp" "resp 10 001002 1f 64 $a" \
		"the response to a duplicate READ with a bad R_Key and length"

	# 3000 bytes: PSNs 0x1003-0x1005; the duplicate asks for 0x1004 on.
	read_listen --qpn "$QPN" --psn 0x1003 --va "$va" --rkey "$rkey" \
		--len 3000 --count 1 >/dev/null
	resp=$(read_listen --qpn "$QPN" --psn 0x1004 --va 0 \
		--rkey $((rkey ^ 0x100)) --len 64 --count 1)
	assert_contains "$resp" "resp 0e 001004 - 1024 " \
		"a duplicate of a READ's second response"
	assert_contains "$resp" "resp 0f 001005 1f 952 " \
		"a duplicate of a READ's second response"
	assert_not_contains "$resp" "resp 0d" \
		"a duplicate of a READ's second response"

	read_listen --qpn "$QPN" --psn 0x1001 --va "$va" --rkey "$rkey" \
		--len 64 --count 1 >/dev/null
	wait_for 10 qp_stat_is "$QPN" drop_rd_duplicate 1
	assert_eq "$(qp_stat "$QPN" naks_sent)" 0 "NAKs after duplicate READs"
	qp_cmd "poll 0.5"
	assert_eq "$QP_REPLY" "completions 0" "QP after duplicate READs"
	stop_wire_qp
	log "duplicate READs answered from the READs they repeat"
}

# qp_stat_at_least QPN NAME VALUE: the counter has at least that value.
qp_stat_at_least() {
	[ "$(qp_stat "$1" "$2")" -ge "$3" ]
}

# qp_stream_stopped QPN: the QP sends nothing for a second.
qp_stream_stopped() {
	local tx

	tx=$(qp_stat "$1" tx_packets)
	sleep 1
	[ "$(qp_stat "$1" tx_packets)" = "$tx" ]
}

# big_read PSN: a READ of 1 GB (1M responses) of a big MR of the QP.
big_read() {
	local va rkey

	qp_cmd "bigmr 1024"
	read -r _ _ va _ rkey <<<"$QP_REPLY"
	craft 4 read --qpn "$QPN" --psn "$1" --va "$va" --rkey "$rkey" \
		--len $((1 << 30)) --count "${2:-1}" >/dev/null
}

# wire_qp (max_dest_rd_atomic 1) gets a second READ while the first is
# still answered: NAK Invalid Request, the QP goes to the error state and
# its answers stop.
read_limit() {
	start_wire_qp 0x2000
	big_read 0x2000 2
	wait_for 30 qp_stat_is "$QPN" nak_rd_limit 1
	assert_eq "$(qp_stat "$QPN" naks_sent)" 1 "NAKs for a READ beyond the limit"
	qp_cmd "poll 20"
	assert_contains "$QP_REPLY" "completion status 5 " \
		"the receive flushed after a READ beyond the limit"
	wait_for 10 qp_stream_stopped "$QPN"
	stop_wire_qp
	log "a READ beyond max_dest_rd_atomic was refused; the QP failed"
}

# answered_or_refused QPN PACKETS: the QP sent that many packets, or
# refused a READ beyond its limit.
answered_or_refused() {
	qp_stat_at_least "$1" tx_packets "$2" ||
		qp_stat_at_least "$1" nak_rd_limit 1
}

# A READ answered once and asked for again is not one the peer still
# waits for: wire_qp (max_dest_rd_atomic 1) answers a READ of 16 MB, then
# gets its duplicate and, while that is answered again, a new READ.  The
# new READ must be answered after the replay, not refused.
read_after_replay() {
	local n=$((16 << 10)) va rkey

	start_wire_qp 0x5000
	qp_cmd "bigmr 16"
	read -r _ _ va _ rkey <<<"$QP_REPLY"
	craft 4 read --qpn "$QPN" --psn 0x5000 --va "$va" --rkey "$rkey" \
		--len $((16 << 20)) --count 1 >/dev/null
	wait_for 60 qp_stat_at_least "$QPN" tx_packets "$n"
	craft 4 read --qpn "$QPN" --psn 0x5000 --va "$va" --rkey "$rkey" \
		--len $((16 << 20)) --count 2 >/dev/null
	wait_for 120 answered_or_refused "$QPN" $((3 * n))
	assert_eq "$(qp_stat "$QPN" nak_rd_limit)" 0 \
		"NAKs for a READ after a replayed one"
	qp_stat_at_least "$QPN" tx_packets $((3 * n)) ||
		fail "READ and replay not answered: $(qp_stat "$QPN" tx_packets) packets sent"
	assert_eq "$(qp_stat "$QPN" naks_sent)" 0 "NAKs after a replayed READ"
	qp_cmd "poll 0.5"
	assert_eq "$QP_REPLY" "completions 0" "QP after a replayed READ"
	stop_wire_qp
	log "a READ behind the replay of an answered one was answered"
}

# A NAK that names no request in flight is a ghost (a duplicate of one
# acted on, one from before a reset): the requester drops it.  wire_qp's
# QP sent nothing (its send PSN starts at 0), so PSN 0xffffff is one
# before its oldest unacknowledged PSN, the one PSN of the past that the
# completer accepts.  Its QP must stay in RTS, its posted receive must
# not be flushed, and the NAKs count as duplicates.
ghost_nak() {
	local dups

	start_wire_qp 0x6000
	dups=$(qp_stat "$QPN" duplicates)
	craft 4 nak --qpn "$QPN" --psn 0xffffff --count 3 >/dev/null
	wait_for 30 qp_stat_at_least "$QPN" naks_rcvd 3
	qp_cmd "poll 1"
	assert_eq "$QP_REPLY" "completions 0" "QP after ghost NAKs"
	assert_contains "$(cat "/proc/stellar/$DEV/qps")" \
		"qp $QPN: type RC state RTS" "QP state after ghost NAKs"
	assert_eq "$(qp_stat "$QPN" duplicates)" $((dups + 3)) \
		"ghost NAKs counted as duplicates"
	stop_wire_qp
	log "three NAKs naming no request in flight: dropped, the QP kept RTS"
}

# While a READ of 1 GB is answered, another QP's traffic completes; moving
# the QP to the error state and destroying it each take less than 5 s.
read_stream() {
	start_wire_qp 0x3000
	big_read 0x3000
	wait_for 30 qp_stat_at_least "$QPN" tx_packets 1000
	still_works
	[ "$(qp_stat "$QPN" tx_packets)" -lt $((1 << 20)) ] ||
		fail "the READ of 1 GB was answered before the test could stop it"
	qp_cmd error
	[ "${QP_REPLY#error }" -lt 5000 ] ||
		fail "moving the QP to ERR during a READ took ${QP_REPLY#error } ms"
	wait_for 10 qp_stream_stopped "$QPN"
	stop_wire_qp
	[ "$STOP_MS" -lt 5000 ] ||
		fail "destroying the QP after a READ took $STOP_MS ms"
	log "READ of 1 GB: another QP worked meanwhile; ERR in ${QP_REPLY#error } ms, destroyed in $STOP_MS ms"
}

# A READ of 1 GB is answered when its process is killed: the QP, the
# device and the module go in less than 10 s.
read_unload() {
	local start ms pid

	start_wire_qp 0x4000
	pid=$WIRE_PID
	big_read 0x4000
	wait_for 30 qp_stat_at_least "$QPN" tx_packets 1000
	start=$(date +%s%N)
	kill -KILL "$pid"
	wait "$pid" || true
	assert_eq "$(rdma resource show qp | grep -c ' type RC ' || true)" 0 \
		"RC QPs left"
	rdma link delete "$DEV"
	ip netns del ns1
	stellar_unload
	ms=$((($(date +%s%N) - start) / 1000000))
	[ "$ms" -lt 10000 ] ||
		fail "killing a process during a READ and unloading took $ms ms"
	log "killed during a READ of 1 GB: QP, device and module gone in $ms ms"
}

# The device still works: ibv_rc_pingpong with a second device in ns1.
still_works() {
	local g0 g1 log=$STELLAR_OUT/pingpong

	ip netns exec ns1 rdma link add stellar1 type stellar netdev veth0p
	wait_for 15 ib_port_state_is stellar1 PORT_ACTIVE
	g0=$(gid_index stellar0 "$V4_LOCAL")
	g1=$(gid_index stellar1 "$V4_PEER")
	timeout 120 ibv_rc_pingpong -d stellar0 -g "$g0" -p 18999 -c -s 4096 \
		-n 100 >"$log.server" 2>&1 &
	wait_for 10 tcp_listening 18999
	timeout 120 ip netns exec ns1 ibv_rc_pingpong -d stellar1 -g "$g1" \
		-p 18999 -c -s 4096 -n 100 "$V4_LOCAL" >"$log.client" 2>&1 ||
		fail "pingpong client failed:"$'\n'"$(tail "$log.client")"
	wait $! || fail "pingpong server failed:"$'\n'"$(tail "$log.server")"
	log "ibv_rc_pingpong stellar0 <-> stellar1 OK"
	ip netns exec ns1 rdma link delete stellar1
}

assert_ok python3 "$CRAFT" selftest
stellar_load
setup_network
rdma link add "$DEV" type stellar netdev veth0
wait_for 15 ib_port_state_is "$DEV" PORT_ACTIVE
wait_for 15 ib_has_gid "$DEV" "::ffff:$V4_LOCAL"

malformed_headers
unknown_qpns
psn_window
read_duplicates
read_limit
read_after_replay
ghost_nak
read_stream
read_unload
log "wire_crafted OK"
