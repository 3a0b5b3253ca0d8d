#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# The fabric benchmark's guest side, run by bench/fabric.sh: four hosts on
# the leaf-spine fabric of the VM harness (tests/vm/fabric-router.sh; a
# and c on leaf1, b and d on leaf2, two spines, two uplinks per host,
# every port shaped to the fabric rate with an ECN-marking RED queue).
# Incast: a, b and c each write to d at once (ib_write_bw -D, 64 KB, one
# QP each); d's two downlinks are the bottleneck.  For rdma_rxe, stellar
# without congestion control (stellar-nocc: cc=0, the window only) and
# stellar with DCQCN (cc=1, cc_max_rate the host's two uplinks), all with
# spray_paths PATHS:
#
#   rtt_idle_p50/p99   ping a -> d, unloaded (ms)
#   rtt_load_p50/p99   ping a -> d while the incast runs (ms): the
#                      fabric's RoCE queues as any flow through them sees
#                      them (the pings are ECN-capable, -Q 2: the ports
#                      put those in the RoCE queue, tests/vm/fabric-port.sh)
#   bw_a, bw_b, bw_c   each sender's ib_write_bw average (MiB/s)
#   neck_use           what d's two downlinks delivered while all three
#                      wrote (d's NIC counters, from the 5th second to
#                      1 s before the end), over their rate
#   neck_goodput       the same without packet headers and the packets
#                      d counted as duplicates (resent), over their rate
#   jain_rx            Jain's fairness index of the bytes each of d's
#                      three QPs received in neck_use's window (stellar:
#                      the QPs' rx_bytes in /proc/stellar/stellar0/qps)
#   qp_ok              every ib_write_bw exited 0 on both ends
#   cnp_sent           CNPs d sent (stellar)
#   cc_rate_cuts       rate cuts of a, b and c together (stellar)
#   m2m_bw             many-to-many: every host writes to every other at
#                      once (12 flows); the sum of their averages (MiB/s)
#   m2m_cross_bw       the part of m2m_bw that crosses between the leaves
#   m2m_cross_use      bytes the four leaf-spine links carried towards
#                      the spines (the fabric's port counters, for
#                      SECONDS_BW - 9 s from about the 5th second on),
#                      over their rate
#   m2m_ok             every many-to-many ib_write_bw exited 0
#
# VM d writes one line per figure to $STELLAR_OUT/bench.tsv:
#   CONFIG<TAB>TEST<TAB>VALUE<TAB>UNIT
# Arguments: [--seconds N] [--paths N] [--only rxe|stellar-nocc|stellar]
#            [--cc-params NAME=VALUE,...] (module parameters, DCQCN run)
# stellar-test: vms=4 fabric=2 leaves=2 spines=2 rate=20mbit timeout=2100 memdebug=off

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../tests/vm/lib.sh"
# shellcheck source=tests/vm/fabric.sh
. "$STELLAR_REPO/tests/vm/fabric.sh"

SECONDS_BW=20
PATHS=16
ONLY=
CC_PARAMS=()
while [ $# -gt 0 ]; do
	case "$1" in
	--seconds) SECONDS_BW=$2; shift ;;
	--paths) PATHS=$2; shift ;;
	--only) ONLY=$2; shift ;;
	--cc-params) IFS=, read -r -a CC_PARAMS <<<"$2"; shift ;;
	'') ;;	# the harness passes an empty argument when there are none
	*) fail "bench/fabric-guest.sh: unknown argument '$1'" ;;
	esac
	shift
done

# The measurement windows (goodput from the 5th second, port rates over
# SECONDS_BW - 9 s) need runs of at least 10 s.
[ "$SECONDS_BW" -ge 10 ] 2>/dev/null ||
	fail "bench/fabric-guest.sh: --seconds must be a number, at least 10"
TSV=$STELLAR_OUT/bench.tsv
: >"$TSV"
PORT=19600
declare -A SENDER_PORT=([a]=1 [b]=2 [c]=3)

record() {
	printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${4:-}" >>"$TSV"
}

# ping_stats LOG: "p50 p99" of the RTTs in a ping log, in ms.
ping_stats() {
	sed -n 's/.*time=\([0-9.]*\) ms.*/\1/p' "$1" | sort -n |
		awk '{ v[NR] = $1 } END {
			if (!NR) { print "— —"; exit }
			p = int(NR * 0.99 + 0.5); if (p < 1) p = 1; if (p > NR) p = NR
			print v[int((NR + 1) / 2)], v[p] }'
}

# device_up CONFIG: rxe0 or stellar0 on eth0; sets DEV and GID.
device_up() {
	if [ "$1" = rxe ]; then
		modprobe -a ib_core ib_uverbs rdma_ucm rdma_rxe
		rdma link add rxe0 type rxe netdev eth0
		DEV=rxe0
	else
		local extra=()

		[ "$1" = stellar ] && extra=("${CC_PARAMS[@]}")
		# the host's line rate: its two uplinks at the fabric rate
		stellar_load "spray_paths=$PATHS" \
			"cc=$([ "$1" = stellar-nocc ] && echo 0 || echo 1)" \
			"cc_max_rate=$((2 * ${STELLAR_FABRIC_RATE%mbit}))" \
			"${extra[@]}"
		rdma link add stellar0 type stellar netdev eth0
		DEV=stellar0
	fi
	GID=$(gid_index "$DEV" "$FABRIC_IP")
}

device_down() {
	rdma link delete "$DEV"
	if [ "$DEV" = rxe0 ]; then
		rmmod rdma_rxe
	else
		stellar_unload
	fi
}

# write_bw NAME PORT [SERVER_ADDR]: ib_write_bw for SECONDS_BW, 64 KB
# messages, as a server on PORT or a client of SERVER_ADDR, in the
# background (its pid in BW_PID), logged to $STELLAR_OUT/NAME.log.
write_bw() {
	timeout $((SECONDS_BW + 120)) ib_write_bw -d "$DEV" -x "$GID" -p "$2" \
		-s 65536 -D "$SECONDS_BW" ${3:+"$3"} >"$STELLAR_OUT/$1.log" 2>&1 &
	BW_PID=$!
}

# qp_trace OUT STOP: until the file STOP exists, every 0.1 s, a line
# "seconds qpn rate_kbps target_kbps alpha srtt_us" per stellar QP that
# has a rate: how DCQCN moved, for reading after the run.
qp_trace() {
	python3 - "$1" "$2" <<'PY'
import os, sys, time
out, stop = sys.argv[1], sys.argv[2]
with open(out, "w") as f:
    while not os.path.exists(stop):
        qps, kv = [], None
        for line in open("/proc/stellar/stellar0/qps"):
            if line.startswith("qp "):
                kv = {"qpn": line.split()[1].rstrip(":")}
                qps.append(kv)
            elif kv is not None and ": " in line:
                k, v = line.strip().split(": ", 1)
                kv[k] = v
        for kv in qps:
            if "cc_rate_kbps" in kv:
                f.write("%.2f %s %s %s %s %s\n" % (time.time(), kv["qpn"],
                        kv["cc_rate_kbps"], kv["cc_target_kbps"],
                        kv["cc_alpha"].split("/")[0], kv.get("srtt_us", "-")))
        f.flush()
        time.sleep(0.1)
PY
}

# rx_counts: "packets duplicates" this host's device received.
rx_counts() {
	local hw=/sys/class/infiniband/rxe0/ports/1/hw_counters

	if [ "$DEV" = rxe0 ]; then
		echo "$(cat "$hw/rcvd_pkts") $(cat "$hw/duplicate_request")"
	else
		echo "$(dev_stat rx_packets) $(dev_stat rx_duplicate)"
	fi
}

# qp_rx_sampler OUT STOP: until the file STOP exists, every 0.25 s, a
# line "seconds qpn rx_bytes" per stellar QP of this host that received
# anything.
qp_rx_sampler() {
	python3 - "$1" "$2" <<'PY'
import os, sys, time
out, stop = sys.argv[1], sys.argv[2]
with open(out, "w") as f:
    while not os.path.exists(stop):
        now, qpn = time.time(), None
        for line in open("/proc/stellar/stellar0/qps"):
            if line.startswith("qp "):
                qpn = line.split()[1].rstrip(":")
            elif qpn and line.startswith("rx_bytes: "):
                if int(line.split()[1]):
                    f.write("%.3f %s %s\n" % (now, qpn, line.split()[1]))
        f.flush()
        time.sleep(0.25)
PY
}

# jain_record CONFIG SAMPLES START: Jain's fairness index of what each of
# d's QPs received (qp_rx_sampler's SAMPLES) in neck_record's window.
jain_record() {
	record "$1" jain_rx "$(awk -v from="$(($3 + 5))" \
		-v to="$(($3 + SECONDS_BW - 1))" '
		$1 >= from && !($2 in b0) { b0[$2] = $3 }
		$1 <= to { b1[$2] = $3 }
		END {
			for (q in b0) { x = b1[q] - b0[q]; s += x; sq += x * x; n++ }
			if (n < 3 || sq <= 0) print "—"
			else printf "%.3f\n", s * s / (n * sq)
		}' "$2")"
}

# neck_record CONFIG SAMPLES START COUNTS0 COUNTS1: neck_use and
# neck_goodput from rx_sampler's SAMPLES, from START + 5 s to START +
# SECONDS_BW - 1 s (all three senders write then), and the duplicate
# share of the device's rx_counts before and after.  A RoCEv2 packet's
# headers: Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4 (a first
# packet's RETH is left in).
neck_record() {
	local rate=${STELLAR_FABRIC_RATE%mbit} use good

	read -r use good <<<"$(awk -v r="$rate" -v from="$(($3 + 5))" \
		-v to="$(($3 + SECONDS_BW - 1))" -v c="$4 $5" '
		$1 >= from && !t0 { t0 = $1; b0 = $2; p0 = $3 }
		$1 <= to { t1 = $1; b1 = $2; p1 = $3 }
		END {
			split(c, n, " ")
			secs = t1 - t0; neck = 2 * r * 1e6 / 8 * secs
			if (!t0 || secs <= 0 || neck <= 0) { print "— —"; exit }
			rx = n[3] - n[1]; dup = n[4] - n[2]
			share = rx > 0 ? 1 - dup / rx : 1
			if (share < 0) share = 0
			printf "%.2f %.2f\n", (b1 - b0) / neck,
				(b1 - b0 - 58 * (p1 - p0)) * share / neck
		}' "$2")"
	record "$1" neck_use "$use"
	record "$1" neck_goodput "$good"
	record "$1" incast_router_busy "$(cpu_busy router $(($3 + 5)) $(($3 + SECONDS_BW - 1)))"
}

# incast CONFIG: a, b and c write to d at once; a pings d meanwhile.
incast() {
	local config=$1 role pid pids=() rc=0 ok=yes port start counts0 counts1

	PORT=$((PORT + 10))
	if [ "$STELLAR_ROLE" = d ]; then
		for role in a b c; do
			port=$((PORT + SENDER_PORT[$role]))
			write_bw "$config-server-$role" "$port"
			pids+=("$BW_PID")
			wait_for 30 tcp_listening "$port"
		done
		# (RED would start from the last phase's average queue)
		fabric_cmd idle >/dev/null
		counts0=$(rx_counts)
		start=$(date +%s)
		rx_sampler "$STELLAR_OUT/$config-rx.txt" "/run/stellar/$config.traced" 0.25 &
		[ "$DEV" != stellar0 ] || qp_rx_sampler "$STELLAR_OUT/$config-qp-rx.txt" \
			"/run/stellar/$config.traced" &
		put_val "$config.ready" 1
	else
		get_val_from d "$config.ready" >/dev/null
		port=$((PORT + SENDER_PORT[$STELLAR_ROLE]))
		write_bw "$config-client" "$port" "$(fabric_ip d)"
		pids+=("$BW_PID")
		[ "$DEV" != stellar0 ] || qp_trace "$STELLAR_OUT/$config-qp-trace.txt" \
			"/run/stellar/$config.traced" &
		if [ "$STELLAR_ROLE" = a ]; then
			sleep 3
			timeout $((SECONDS_BW - 4)) ping -Q 2 -i 0.2 "$(fabric_ip d)" \
				>"$STELLAR_OUT/$config-ping-load.log" 2>&1 || true
		fi
	fi
	for pid in "${pids[@]}"; do
		wait "$pid" || rc=$?
	done
	touch "/run/stellar/$config.traced"
	[ "$STELLAR_ROLE" != d ] || counts1=$(rx_counts)
	[ "$rc" = 0 ] || ok=no
	put_val "$config.ok" "$ok"
	if [ "$STELLAR_ROLE" != d ]; then
		put_val "$config.bw" "$(perftest_result "$STELLAR_OUT/$config-client.log" |
			awk '{ print $4 }')"
	fi
	barrier "$config.incast-done" $((SECONDS_BW + 180))
	[ "$STELLAR_ROLE" = d ] || return 0
	for role in a b c; do
		record "$config" "bw_$role" "$(get_val_from "$role" "$config.bw")" MiB/s
		[ "$(get_val_from "$role" "$config.ok")" = yes ] || ok=no
	done
	record "$config" qp_ok "$ok"
	neck_record "$config" "$STELLAR_OUT/$config-rx.txt" "$start" \
		"$counts0" "$counts1"
	[ "$DEV" != stellar0 ] ||
		jain_record "$config" "$STELLAR_OUT/$config-qp-rx.txt" "$start"
}

# m2m_port SRC DST: the TCP port of the many-to-many flow SRC -> DST.
m2m_port() {
	echo $((PORT + 10 * $(_vm_index "$1") + $(_vm_index "$2")))
}

# many_to_many CONFIG: every host writes to every other host at once (12
# flows, one QP each); d records the sum of the flows and of those that
# cross from one leaf to the other (a, c on leaf1; b, d on leaf2).
many_to_many() {
	local config=$1 role pid pids=() rc=0 ok=yes port bw all=0 cross=0
	local rates_pid='' start
	local line='' flow

	PORT=$((PORT + 100))
	[ "$STELLAR_ROLE" != d ] || fabric_cmd idle >/dev/null
	for role in $(other_roles); do
		port=$(m2m_port "$role" "$STELLAR_ROLE")
		write_bw "$config-m2m-server-$role" "$port"
		pids+=("$BW_PID")
		wait_for 30 tcp_listening "$port"
	done
	put_val "$config.m2m-ready" 1
	for role in $(other_roles); do
		get_val_from "$role" "$config.m2m-ready" >/dev/null
	done
	for role in $(other_roles); do
		write_bw "$config-m2m-client-$role" \
			"$(m2m_port "$STELLAR_ROLE" "$role")" "$(fabric_ip "$role")"
		pids+=("$BW_PID")
	done
	if [ "$STELLAR_ROLE" = d ]; then
		start=$(date +%s)
		(sleep 4 && fabric_cmd rates $((SECONDS_BW - 9))) \
			>"$STELLAR_OUT/$config-m2m-rates.txt" 2>&1 &
		rates_pid=$!
	fi
	for pid in "${pids[@]}"; do
		wait "$pid" || rc=$?
	done
	[ "$rc" = 0 ] || ok=no
	put_val "$config.m2m-ok" "$ok"
	for role in $(other_roles); do
		bw=$(perftest_result "$STELLAR_OUT/$config-m2m-client-$role.log" |
			awk '{ print $4 }')
		line+="$role=${bw:-0} "
	done
	put_val "$config.m2m-bw" "$line"
	barrier "$config.m2m-done" $((SECONDS_BW + 180))
	[ "$STELLAR_ROLE" = d ] || return 0
	for role in $(host_roles); do
		[ "$(get_val_from "$role" "$config.m2m-ok")" = yes ] || ok=no
		for flow in $(get_val_from "$role" "$config.m2m-bw"); do
			bw=${flow#*=}
			all=$(awk -v a="$all" -v b="$bw" 'BEGIN { print a + b }')
			[ $(($(_vm_index "$role") % 2)) = $(($(_vm_index "${flow%%=*}") % 2)) ] ||
				cross=$(awk -v a="$cross" -v b="$bw" 'BEGIN { print a + b }')
		done
	done
	record "$config" m2m_bw "$all" MiB/s
	record "$config" m2m_cross_bw "$cross" MiB/s
	record "$config" m2m_ok "$ok"
	record "$config" m2m_router_busy "$(cpu_busy router $((start + 4)) $((start + SECONDS_BW - 5)))"
	wait "$rates_pid" || true
	record "$config" m2m_cross_use "$(awk -v r="${STELLAR_FABRIC_RATE%mbit}" '
		$1 ~ /^leaf[0-9]+-spine[0-9]+$/ && $2 == "up" { s += $3; n++ }
		END { if (n) printf "%.2f\n", s / (4 * r * 1e6 / 8); else print "—" }' \
		"$STELLAR_OUT/$config-m2m-rates.txt")"
}

# dev_stat NAME: the stellar device counter NAME.
dev_stat() {
	awk -v n="$1:" '$1 == n { print $2 }' /proc/stellar/stellar0/stats
}

# cc_record CONFIG: CNPs d sent and the senders' rate cuts.
cc_record() {
	local config=$1 cuts=0 role

	[ "$DEV" = stellar0 ] || return 0
	[ "$STELLAR_ROLE" = d ] || put_val "$config.cuts" "$(dev_stat cc_rate_cuts)"
	barrier "$config.cc-counted"
	[ "$STELLAR_ROLE" = d ] || return 0
	for role in a b c; do
		cuts=$((cuts + $(get_val_from "$role" "$config.cuts")))
	done
	record "$config" cnp_sent "$(dev_stat cnp_sent)"
	record "$config" cc_rate_cuts "$cuts"
}

run_config() {
	local config=$1

	device_up "$config"
	barrier "$config.up"
	if [ "$STELLAR_ROLE" = a ]; then
		ping -Q 2 -c 20 -i 0.2 "$(fabric_ip d)" >"$STELLAR_OUT/$config-ping-idle.log" 2>&1 || true
		put_val "$config.idle" "$(ping_stats "$STELLAR_OUT/$config-ping-idle.log")"
	fi
	barrier "$config.idle-done"
	incast "$config"
	cc_record "$config"
	many_to_many "$config"
	if [ "$STELLAR_ROLE" = a ]; then
		put_val "$config.load" "$(ping_stats "$STELLAR_OUT/$config-ping-load.log")"
	fi
	if [ "$STELLAR_ROLE" = d ]; then
		read -r p50 p99 <<<"$(get_val_from a "$config.idle")"
		record "$config" rtt_idle_p50 "$p50" ms
		record "$config" rtt_idle_p99 "$p99" ms
		read -r p50 p99 <<<"$(get_val_from a "$config.load")"
		record "$config" rtt_load_p50 "$p50" ms
		record "$config" rtt_load_p99 "$p99" ms
	fi
	barrier "$config.measured"
	device_down
}

fabric_up
# perftest exchanges its QP numbers and results over TCP through the same
# RED queues, which drop what is not ECN-capable once they mark: ask for
# ECN, as a data centre's TCP does, or a full queue fails the exchange.
sysctl -qw net.ipv4.tcp_ecn=1
[ "$STELLAR_ROLE" != d ] || record setup rate "$STELLAR_FABRIC_RATE"
[ "$STELLAR_ROLE" != d ] || record setup paths "$PATHS"
[ "$STELLAR_ROLE" != d ] || [ "${#CC_PARAMS[@]}" = 0 ] ||
	record setup cc_params "${CC_PARAMS[*]}"
[ "$STELLAR_ROLE" != d ] || [ -z "${STELLAR_FABRIC_RED:-}" ] ||
	record setup red "$STELLAR_FABRIC_RED"
for config in rxe stellar-nocc stellar; do
	[ -z "$ONLY" ] || [ "$ONLY" = "$config" ] || continue
	run_config "$config"
done
[ "$STELLAR_ROLE" != a ] || fabric_cmd stats >"$STELLAR_OUT/stats.txt"
barrier finished
log "fabric bench done"
