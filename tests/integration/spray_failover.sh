#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Path failover under packet spray: two VMs joined by 4 links, each shaped
# to the same rate, combined by ECMP routes and then by a bond (balance-xor,
# layer3+4; tests/vm/multipath.sh); stellar with spray_paths 16.  While a
# transfer runs, one link (bond: link 2; ECMP, whose hash may leave a link
# unused: the one that carried most of VM b's data so far) silently drops
# every packet in both directions (netem loss 100%, the link stays up):
#
#   - ibv_rc_pingpong -c (64 KB messages, data checked by the tool) and
#     rping -v -V (16 KB READs, verified pings) must complete without a QP
#     error;
#   - ib_write_bw -D must complete; the receiver's byte rate over the
#     second half of the dark time must reach 50% of the lower of its rate
#     before the failure and the 3 live links' shaped rate (measured over
#     the time between the samples, 2026-12-07: 58-93% in 18 runs;
#     resends lost in the links' queues take much of the rest);
#   - the sender's spray statistics must show paths taken out (failed or
#     probing) while the link is dark, and the same QP using every path
#     again a few seconds after the link returns.
#
# Then ib_write_bw -D again with the link dark in one direction only, from
# the receiver (VM a) to the writer (VM b): the writes arrive, their ACKs
# through that link's ports do not, and ACKs through other ports
# acknowledge them.  The writer must find those paths by their echoes
# (Documentation/wire-extensions.rst): paths taken out, counted in
# back_failures, and in use again after the link returns; the rate check
# is the same.
#
# Per-QP transport counters are logged every 2 s during the runs
# (failover-qps.log) to show what the sender did.
# Arguments (optional): topologies to run, of "ecmp" and "bond" (default
# both, ECMP first: the bond takes the links' addresses away; make check's
# short form, lib.sh long_run, runs the bond's write_bw runs only).
# SPRAY_RATE (default 20mbit, low enough that the links and not the TCG
# CPUs limit the rate, as in bench/spray.sh) sets the per-link rate.
# memdebug=off: its recovery-rate checks (50% of the live links) need the
# CPU headroom that SLUB debugging takes under TCG (MEMDEBUG=1 forces it).
# stellar-test: vms=2 links=4 timeout=1800 memdebug=off

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"
# shellcheck source=tests/vm/multipath.sh
. "$STELLAR_REPO/tests/vm/multipath.sh"

TOOL=$STELLAR_REPO/tools/stellar-tool
[ -x "$TOOL" ] || fail "stellar-tool not built: $TOOL (run make -C tools)"
RATE=${SPRAY_RATE:-20mbit}
TOPOLOGIES=()
for arg in "$@"; do
	case "$arg" in
	'') ;;	# the harness passes an empty argument when there are none
	bond | ecmp) TOPOLOGIES+=("$arg") ;;
	*) fail "unknown argument '$arg' (bond, ecmp)" ;;
	esac
done
if [ "${#TOPOLOGIES[@]}" = 0 ]; then
	# make check's short form: the bond, whose dark link is known.
	TOPOLOGIES=(bond)
	! long_run || TOPOLOGIES=(ecmp bond)
fi
PORT=19700
RUN_SECONDS=300
STELLAR_BARRIER_TIMEOUT=$((RUN_SECONDS + 60))
# ib_write_bw -D: the times of its timeline count from when its QP is
# ready (run_started), not from the launch: under TCG the tools may take
# seconds to get there.  The paths' use is measured again from LIGHT_AT + 2
# to BACK_AT, while the run goes on: perftest's seconds count from its
# launch, and its QP is ready 3-4 s later.
BW_SECONDS=32
PRE_AT=3
DARK_AT=7
LIGHT_AT=17
BACK_AT=24

modprobe -a sch_tbf sch_netem

next_port() {
	PORT=$((PORT + 1))
}

# qps_logger: append the per-QP counters to failover-qps.log every 2 s.
qps_logger() {
	while sleep 2; do
		{
			echo "--- $(date +%T)"
			"$TOOL" qps --device stellar0 2>&1 | grep -E \
				'^QP|timeouts|retrans|early|sacks|srtt|ext_on|naks' || true
			"$TOOL" paths --device stellar0 2>&1 | sed -n '1,20p'
		} >>"$STELLAR_OUT/failover-qps.log"
	done
}

# rx_bytes: bytes received over all links.
rx_bytes() {
	mp_link_bytes rx | awk '{ for (i = 1; i <= NF; i++) t += $i; printf "%.0f\n", t }'
}

# choose_dark NAME BASE: the link that goes dark.  Over the bond, link 2
# (its hash spreads the 16 ports over all links).  Over ECMP, whose hash
# may leave a link unused, the link that carried the most of VM b's data
# since BASE (mp_link_bytes tx): VM b chooses, VM a learns it.  Sets
# DARK_LINK.
choose_dark() {
	if [ "$MP_TOPOLOGY" = bond ]; then
		DARK_LINK=2
	elif [ "$STELLAR_ROLE" = b ]; then
		DARK_LINK=$(mp_link_bytes tx | awk -v base="$2" '{
			split(base, b, " ")
			for (i = 1; i <= NF; i++) if (!k || $i - b[i] > most) {
				most = $i - b[i]; k = i }
			print k }')
		put_val "$1.dark" "$DARK_LINK"
	else
		DARK_LINK=$(get_val "$1.dark" 30)
	fi
	echo "$DARK_LINK" >"$STELLAR_OUT/dark_link"
}

# go_dark [both|back]: the dark link drops what this VM sends on it; with
# "back" only on VM a (the way back of VM b's requests).
go_dark() {
	[ "${1:-both}" = both ] || [ "$STELLAR_ROLE" = a ] || return 0
	mp_netem "$(link_dev "$(cat "$STELLAR_OUT/dark_link")")" -- loss 100%
}

# go_dark_after SECONDS NAME: the link choose_dark picks for the run NAME
# (over ECMP: the busiest meanwhile) goes dark after SECONDS.
go_dark_after() {
	local base

	base=$(mp_link_bytes tx)
	sleep "$1"
	choose_dark "$2" "$base"
	go_dark
}

# light: the dark link carries traffic again.
light() {
	[ -f "$STELLAR_OUT/dark_link" ] || return 0
	mp_netem_off "$(link_dev "$(cat "$STELLAR_OUT/dark_link")")"
	rm -f "$STELLAR_OUT/dark_link"
}

# failed_paths: paths that a QP of stellar0 does not use now (failed or
# probing).
failed_paths() {
	"$TOOL" -j paths --device stellar0 |
		jq '[.paths[] | select(.failed > 0 or .probing > 0)] | length'
}

# path_packets: "QPS P0 P1 ...": how many QPs of stellar0 spray, and the
# packets each path carried.
path_packets() {
	"$TOOL" -j paths --device stellar0 |
		jq -r '"\(.qps) \([.paths[].packets] | map(tostring) | join(" "))"'
}

# least_used FROM TO: the packets the least used path carried between two
# path_packets samples, in percent of the paths' mean.
least_used() {
	local -a from to
	local i sum=0 least=-1 delta

	read -ra from <"$1"
	read -ra to <"$2"
	for ((i = 1; i < ${#to[@]}; i++)); do
		delta=$((to[i] - from[i]))
		sum=$((sum + delta))
		[ "$least" -ge 0 ] && [ "$least" -le "$delta" ] || least=$delta
	done
	[ "$sum" -gt 0 ] || { echo 0; return; }
	echo $((least * 100 * (${#to[@]} - 1) / sum))
}

# rc_qps: RC QPs of stellar0 in RTR or RTS (a run's QP while it runs; a
# perftest server that only receives leaves its QP in RTR).
rc_qps() {
	grep -cE '^qp [0-9]+: type RC state RT[RS] ' /proc/stellar/stellar0/qps ||
		true
}

# now_ms: the time in milliseconds.
now_ms() {
	local us=${EPOCHREALTIME/./}

	echo $((us / 1000))
}

# sleep_until MS: sleep until now_ms reaches MS (the timeline does not
# drift by what its own commands take).
sleep_until() {
	local wait=$(($1 - $(now_ms)))

	[ "$wait" -le 0 ] || sleep "$((wait / 1000)).$(printf %03d $((wait % 1000)))"
}

# run_started: the time (now_ms) when a run's QP is ready, waited for up
# to 60 s.
run_started() {
	local tries=0

	until [ "$(rc_qps)" -ge 1 ] || [ "$tries" -ge 300 ]; do
		sleep 0.2
		tries=$((tries + 1))
	done
	now_ms
}

# rx_sample: "MS BYTES", bytes received over all links and when.
rx_sample() {
	echo "$(now_ms) $(rx_bytes)"
}

# rx_rate FROM TO: bytes/s received between two rx_samples.
rx_rate() {
	local -a from to

	read -ra from <"$1"
	read -ra to <"$2"
	echo $(((to[1] - from[1]) * 1000 / (to[0] - from[0] > 0 ? to[0] - from[0] : 1)))
}

# back_failures: times QPs of stellar0 took a path out for its way back.
back_failures() {
	"$TOOL" -j paths --device stellar0 |
		jq '[.paths[].back_failures] | add // 0'
}

# writer_counters: what the QPs of stellar0 did to get through: "T P R E",
# ACK timeouts, RTT-based probes, selective resends and echoes that came
# back, summed over the QPs.
writer_counters() {
	awk '$1 == "timeouts:" { t += $2 } $1 == "early_timeouts:" { p += $2 }
		$1 == "sel_retransmits:" { r += $2 } $1 == "echoes_rcvd:" { e += $2 }
		END { printf "%d %d %d %d\n", t, p, r, e }' /proc/stellar/stellar0/qps
}

# dark_counters NAME: writer_counters over the dark time of run NAME, in
# words.
dark_counters() {
	local -a at_dark at_end

	read -ra at_dark <"$STELLAR_OUT/$1.xp_dark"
	read -ra at_end <"$STELLAR_OUT/$1.xp_end"
	echo "$((at_end[0] - at_dark[0])) ACK timeouts, $((at_end[1] - at_dark[1])) probes, $((at_end[2] - at_dark[2])) selective resends, $((at_end[3] - at_dark[3])) echoes back"
}

# dark_run NAME SECONDS_BEFORE_DARK SERVER_ARRAY CLIENT_ARRAY READY: run
# the pair with the busiest link going dark on both VMs after a while.
dark_run() {
	local name=$1 after=$2 ready=$5 dark rc=0

	go_dark_after "$after" "$name" &
	dark=$!
	pair_run "$name" a "$ready" "$RUN_SECONDS" "$3" "$4" || rc=$?
	wait "$dark"
	return "$rc"
}

# pings LOG: verified pings in rping's LOG so far.
pings() {
	grep -c 'ping data: rdma-ping-' "$1" 2>/dev/null || true
}

# rping_dark NAME: 1500 verified pings (the server READs 16 KB, then
# WRITEs) with the busiest link dark from 3 s to 9 s in; pings must go on
# while it is dark.  rping's client tears the connection down by sending
# one DREQ and destroying its id at once (its CM sends it no more): lost on
# the dark link, it would leave the server waiting for ever, so the link
# is lit again before the pings end.
# shellcheck disable=SC2034 # srv and cli are used by name in pair_run
rping_dark() {
	local name=$1 count=1500 log=$STELLAR_OUT/$1.log dark at_dark at_light
	local -a srv cli

	next_port
	srv=(rping -s -v -V -C "$count" -S 16384 -a "$MP_IP" -p "$PORT")
	cli=(rping -c -v -V -C "$count" -S 16384 -I "$MP_IP" -a "$MP_PEER_IP"
		-p "$PORT")
	(
		go_dark_after 3 "$name"
		pings "$log" >"$log.at_dark"
		sleep 6
		pings "$log" >"$log.at_light"
		light
	) &
	dark=$!
	pair_run "$name" a "cm:$PORT" "$RUN_SECONDS" srv cli
	wait "$dark"
	barrier "$name.light"
	[ "$PAIR_ROLE" = client ] || return 0
	assert_not_contains "$(cat "$log")" mismatch "$name output"
	assert_eq "$(pings "$log")" "$count" "verified pings of $name"
	at_dark=$(cat "$log.at_dark")
	at_light=$(cat "$log.at_light")
	log "$name: $at_dark pings when the link went dark, $at_light when it came back"
	[ "$at_light" -gt "$at_dark" ] && [ "$at_light" -lt "$count" ] ||
		fail "$name: the pings did not go on while the link was dark"
}

# shellcheck disable=SC2034 # srv and cli are used by name in pair_run
pingpong_dark() {
	local name=$1
	local -a srv cli

	next_port
	srv=(ibv_rc_pingpong -d stellar0 -g "$GID" -p "$PORT" -c -s 65536
		-n 500)
	cli=("${srv[@]}" "$MP_PEER_IP")
	dark_run "$name" 3 srv cli "tcp:$PORT"
	light
	barrier "$name.light"
}

# write_bw_dark NAME [both|back]: one ib_write_bw -D run; the busiest link
# goes dark DARK_AT s after the run's QP is ready (both ways, or from VM a
# to VM b only: go_dark) and comes back at LIGHT_AT.  VM a measures the
# rate in the second half of the dark time; VM b checks that the QP took
# paths out while the link was dark (with "back": for their way back) and
# uses all of them again from LIGHT_AT + 2 to BACK_AT: the least used path
# carries at least 5% of the paths' mean.  A path out of use carries only
# probes, at most one a second or so after a few failures (about 1% of
# the mean); paths weighted down for congestion carry less than the
# others, but more than that.  Each VM checks that the run was
# still going at its last sample: a timeline late by more than the run
# lasts would measure nothing.
# shellcheck disable=SC2034 # srv and cli are used by name in pair_run
write_bw_dark() {
	local name=$1 mode=${2:-both} half rate need timeline before three
	local back_fails dark t0 least out
	local -a srv cli back
	local o=$STELLAR_OUT/$name

	next_port
	srv=(ib_write_bw -s 65536 -D "$BW_SECONDS" -d stellar0 -x "$GID"
		-p "$PORT")
	cli=("${srv[@]}" "$MP_PEER_IP")
	half=$(((LIGHT_AT - DARK_AT) / 2))
	back_fails=$(back_failures)
	(
		base=$(mp_link_bytes tx)
		t0=$(run_started)
		sleep_until $((t0 + PRE_AT * 1000))
		rx_sample >"$o.pre"
		choose_dark "$name" "$base"
		sleep_until $((t0 + DARK_AT * 1000))
		rx_sample >"$o.dark"
		writer_counters >"$o.xp_dark"
		go_dark "$mode"
		sleep_until $((t0 + (DARK_AT + half) * 1000))
		rx_sample >"$o.mid"
		failed_paths >"$o.out_dark"
		sleep_until $((t0 + LIGHT_AT * 1000))
		rx_sample >"$o.end"
		writer_counters >"$o.xp_end"
		rc_qps >"$o.qps_end"
		light
		sleep_until $((t0 + (LIGHT_AT + 2) * 1000))
		path_packets >"$o.pk_light"
		sleep_until $((t0 + BACK_AT * 1000))
		path_packets >"$o.pk_back"
	) &
	timeline=$!
	pair_run "$name" a "tcp:$PORT" "$RUN_SECONDS" srv cli
	wait "$timeline"
	light
	barrier "$name.light"
	[ "$(cat "$o.qps_end")" -ge 1 ] ||
		fail "$name: the run ended before the link came back (timeline late)"
	if [ "$STELLAR_ROLE" = b ]; then
		out=$(cat "$o.out_dark")
		read -ra back <"$o.pk_back"
		[ "${back[0]}" -ge 1 ] ||
			fail "$name: the run ended before its paths were checked after the link came back (timeline late)"
		least=$(least_used "$o.pk_light" "$o.pk_back")
		log "$name: paths out of use: $out while the link was dark; after it returned the least used path carried $least% of the mean"
		dark=$(dark_counters "$name")
		log "$name: while the link was dark: $dark"
		[ "$out" -ge 1 ] ||
			fail "$name: no path was taken out of use ($dark)"
		[ "$least" -ge 5 ] ||
			fail "$name: a path carried $least% of the paths' mean after the link returned (need >= 5%)"
		back_fails=$(($(back_failures) - back_fails))
		log "$name: paths taken out for a dead way back: $back_fails"
		[ "$mode" = both ] || [ "$back_fails" -ge 1 ] ||
			fail "$name: no path was found with its way back dead ($out paths out while dark; $dark)"
		return 0
	fi
	before=$(rx_rate "$o.pre" "$o.dark")
	rate=$(rx_rate "$o.mid" "$o.end")
	three=$(python3 -c "print(int(3 * ${RATE%mbit} * 1e6 / 8))")
	need=$(((before < three ? before : three) / 2))
	log "$name: $before bytes/s before the failure, $rate after it (need >= $need: 50% of the lower of that and the 3 live links' $three)"
	[ "$rate" -ge "$need" ] ||
		fail "$name: $rate bytes/s after the failure, under 50% of $((before < three ? before : three))"
}


run_topology() {
	local topo=$1

	"mp_$topo" "$RATE"
	rdma link add stellar0 type stellar netdev "$MP_DEV"
	GID=$(gid_index stellar0 "$MP_IP")
	barrier "$topo.up"
	wait_for 10 ping -c 1 -W 1 -I "$MP_IP" "$MP_PEER_IP"
	qps_logger &
	LOGGER=$!
	write_bw_dark "${topo}_write_bw"
	write_bw_dark "${topo}_write_bw_back" back
	# make check's short form: the write_bw runs (rate and paths) only.
	if long_run; then
		pingpong_dark "${topo}_pingpong"
		rping_dark "${topo}_rping"
	fi
	kill "$LOGGER"
	wait "$LOGGER" 2>/dev/null || true
	"$TOOL" paths --device stellar0 >"$STELLAR_OUT/$topo-paths.txt"
	rdma link delete stellar0
	barrier "$topo.down"
}

stellar_load spray_paths=16
for topo in "${TOPOLOGIES[@]}"; do
	run_topology "$topo"
	[ "$topo" != ecmp ] || mp_ecmp_down
done
stellar_unload
log "spray failover (${TOPOLOGIES[*]}): transfers survived a dark link with data checked"
