#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Failover on the fabric (issue 14): host a on leaf1 writes to host b on
# leaf2 (ib_write_bw -D, one QP, spray_paths 16; every fabric port and
# uplink shaped to the rate, 20mbit by default).  While it runs, the
# link leaf1-spine1 goes silently dark for DARK_SECONDS: towards the spine
# ("up": a's data on the ports leaf1 hashes to spine1), back from it
# ("down": b's acknowledgements on the ports leaf2 hashes to spine1, the
# way back that the sender cannot see), or both.  For each scenario:
#
#   - ib_write_bw completes on both ends: no QP error;
#   - b samples what its uplinks receive every 50 ms: the stall (the
#     longest time in the dark window in which b got less than 8 KiB) and
#     the rate over the second half of the dark window, against the rate
#     before and the capacity left (one spine's rate; both spines' when only
#     the way back is dark);
#   - the rate afterwards must reach half of the lower of those two, and
#     the stall must end within the first half of the dark window (a run
#     that misses either fails the test at the end: the series goes on,
#     and its last lines count the runs that met each goal).
# Each run's line says how busy the router VM's CPU and the host's CPUs
# were before the failure and in that second half (tests/vm/cpu.sh): a
# router near 100% forwards as fast as the emulation lets it.
# STELLAR_FABRIC_CC=NAME=VALUE,... loads the module with those DCQCN
# parameters.
# Not part of make check (tests/long: run it by name,
# "tests/vm/run-tests.sh fabric_failover"); see the notes below.
# Seen a few times (20 Mbit/s, "both"): perftest's run ended on time but
# both ends took minutes to exit (once 3.7), with no packet on the fabric
# meanwhile; not yet understood.  bw_wait stops them once the client has
# printed its result.
#
# The issue's goals (stall <= 20 smoothed RTTs, 80% of the capacity left,
# 5 runs at 20 and 40 Mbit/s) are logged as "GOAL" lines, met or not:
#   STELLAR_FABRIC_RATE=40mbit tests/vm/run-tests.sh fabric_failover -- runs=5
# Arguments (optional): scenarios to run, of "both", "up" and "down"
# (default all three), and "runs=N" (each scenario N times, default 1).
# stellar-test: vms=2 fabric=2 leaves=2 spines=2 rate=20mbit timeout=1800 memdebug=off

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"
# shellcheck source=tests/vm/fabric.sh
. "$STELLAR_REPO/tests/vm/fabric.sh"

TOOL=$STELLAR_REPO/tools/stellar-tool
SCENARIOS=() RUNS=1
for arg in "$@"; do
	case "$arg" in
	'') ;;
	both | up | down) SCENARIOS+=("$arg") ;;
	runs=*) RUNS=${arg#runs=} ;;
	*) fail "unknown argument '$arg' (both, up, down, runs=N)" ;;
	esac
done
[ "${#SCENARIOS[@]}" -gt 0 ] || SCENARIOS=(both up down)
BW_SECONDS=30
PRE_SECONDS=8
DARK_SECONDS=12
PORT=19800
# One spine's capacity, in bytes per second.
SPINE=$(python3 -c "r = '$STELLAR_FABRIC_RATE'; print(int(float(r.rstrip('mbit')) * 1e6 / 8))")

# rx_flowing SAMPLES: the sampler saw 64 KiB arrive.
rx_flowing() {
	[ "$(awk 'NR == 1 { first = $2 } END { print $2 - first }' "$1")" -gt 65536 ]
}

# analyse SAMPLES T_PRE T_DARK T_LIGHT: "before stall_ms after" in bytes/s
# and ms.
analyse() {
	python3 - "$@" <<'EOF'
import sys
path, t_pre, t_dark, t_light = sys.argv[1], *map(float, sys.argv[2:])
s = [tuple(map(float, l.split())) for l in open(path) if l.strip()]
def rate(a, b):
    w = [x for x in s if a <= x[0] <= b]
    return (w[-1][1] - w[0][1]) / (w[-1][0] - w[0][0]) if len(w) > 1 else 0
stall, start = 0.0, None
for i in range(1, len(s)):
    t, b = s[i][:2]
    if t < t_dark or s[i - 1][0] > t_light:
        continue
    if start is None:
        start = s[i - 1]
    if b - start[1] >= 8192:
        start = s[i]
        continue
    stall = max(stall, t - start[0])
mid = (t_dark + t_light) / 2
print(int(rate(t_pre, t_dark)), int(stall * 1000), int(rate(mid, t_light)))
EOF
}

# srtt_ms: the median smoothed RTT of a's active paths, in ms.
srtt_ms() {
	"$TOOL" -j paths --device stellar0 |
		jq '[.paths[] | select(.srtt_us > 0) | .srtt_us] | sort |
			if length > 0 then .[length / 2 | floor] / 1000 else 0 end'
}

# stuck_state PID: where the perftest under timeout PID waits (its
# state, kernel stack and wait channel) and this host's TCP sockets, for
# the runs that never start or never end (see bw_wait).
stuck_state() {
	local child

	for child in $(pgrep -P "$1"); do
		echo "== $child: $(tr '\0' ' ' <"/proc/$child/cmdline")"
		grep -E '^(State|voluntary|nonvoluntary)' "/proc/$child/status"
		echo "wchan: $(cat "/proc/$child/wchan")"
		cat "/proc/$child/stack"
	done
	echo "== ss -tanpi"
	ss -tanpi
} 2>&1

# bw_wait NAME PID LOG: wait for this host's ib_write_bw; 0 if it exited
# 0 or only perftest's closing TCP exchange failed, else its status.
# That exchange between the two ends, after the data, sometimes hangs on
# this fabric for minutes or fails (seen with and without congestion
# control; not understood): once the client printed its result line (the
# data went through, no QP error) and the exchange has not ended 30 s
# after the run's time, both ends are stopped; a run whose only error is
# that exchange counts, and the log says so.  So does a run after which
# perftest could not calibrate its clock ("Can't produce a report", now
# and then under TCG): b's counters, not perftest, measure it.  A QP
# error ("Completion with error") always fails.
bw_wait() {
	local name=$1 pid=$2 log=$3 deadline=$((SECONDS + BW_SECONDS + 30))
	local result=no rc=0

	while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do
		sleep 1
	done
	if [ "$STELLAR_ROLE" = a ]; then
		[ -z "$(perftest_result "$log")" ] || result=yes
		# perftest could not calibrate its clock (TCG) after the run
		grep -q "Can't produce a report" "$log" && result=uncalibrated
		put_val "$name.result" "$result"
	fi
	if kill -0 "$pid" 2>/dev/null; then
		log "$name: perftest's closing exchange had not ended 30 s after the run: stopped"
		stuck_state "$pid" >"$STELLAR_OUT/$name.stuck"
		kill "$pid"
		rc=124
	fi
	wait "$pid" || rc=$?
	[ "$rc" != 0 ] || return 0
	[ "$STELLAR_ROLE" = a ] || result=$(get_val_from a "$name.result")
	grep -q "Completion with error" "$log" && return "$rc"
	if [ "$result" = yes ]; then
		log "$name: the data went through (a's result line); only perftest's closing TCP exchange failed (exit $rc)"
		return 0
	fi
	if [ "$result" = uncalibrated ]; then
		log "$name: perftest ran but could not calibrate its clock, so it printed no rate (exit $rc); b's counters measure the run"
		return 0
	fi
	return "$rc"
}

# run SCENARIO N: one ib_write_bw with leaf1-spine1 dark in direction
# SCENARIO ("both", "up", "down") for a while.
run() {
	local dir=$1 name=$1_$2 log=$STELLAR_OUT/$1_$2.log stop=/tmp/$1_$2.stop
	local pid sampler t_pre t_dark t_light rc=0 before stall after need srtt
	local rtts left busy mid goal_stall goal_rate

	PORT=$((PORT + 1))
	if [ "$STELLAR_ROLE" = b ]; then
		rx_sampler "$STELLAR_OUT/$name.rx" "$stop" 0.05 &
		sampler=$!
		timeout 300 stdbuf -oL ib_write_bw -d stellar0 -x "$GID" \
			-p "$PORT" -s 65536 -D "$BW_SECONDS" >"$log" 2>&1 &
		pid=$!
		wait_for 30 tcp_listening "$PORT"
		# (RED would start from the last run's average queue)
		fabric_cmd idle >/dev/null
		put_val "$name.ready" 1
		# a run that never starts: where the server waits, first
		(wait_for 60 rx_flowing "$STELLAR_OUT/$name.rx") || {
			stuck_state "$pid" >"$STELLAR_OUT/$name.stuck"
			fail "$name: b received nothing for 60 s (server state in $name.stuck)"
		}
		t_pre=$(date +%s.%N)
		sleep "$PRE_SECONDS"
		t_dark=$(date +%s.%N)
		fabric_cmd dark leaf1-spine1 "$dir" >/dev/null
		sleep "$DARK_SECONDS"
		fabric_cmd clear leaf1-spine1 "$dir" >/dev/null
		t_light=$(date +%s.%N)
		bw_wait "$name" "$pid" "$log" || rc=$?
		touch "$stop"
		wait "$sampler"
	else
		get_val_from b "$name.ready" >/dev/null
		(while sleep 1; do srtt_ms; done >"$STELLAR_OUT/$name.srtt") &
		sampler=$!
		timeout 300 stdbuf -oL ib_write_bw -d stellar0 -x "$GID" \
			-p "$PORT" -s 65536 -D "$BW_SECONDS" "$(fabric_ip b)" \
			>"$log" 2>&1 &
		pid=$!
		bw_wait "$name" "$pid" "$log" || rc=$?
		kill "$sampler"
		wait "$sampler" 2>/dev/null || true
		# the median of the samples taken while the QP sprayed
		put_val "$name.srtt" "$(awk '$1 > 0' "$STELLAR_OUT/$name.srtt" |
			sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : 0 }')"
	fi
	# the device's counters so far (timeouts, retransmits, DCQCN)
	cp /proc/stellar/stellar0/stats "$STELLAR_OUT/$name.stats"
	barrier "$name.done"
	[ "$rc" = 0 ] || fail "$name: ib_write_bw exited with $rc (a QP error?):"$'\n'"$(grep -iE 'err|fail' "$log" || true)"$'\n'"$(tail -5 "$log")"
	[ "$STELLAR_ROLE" = b ] || return 0
	# The data's way: one spine left, unless only the way back is dark.
	left=$SPINE
	[ "$dir" != down ] || left=$((2 * SPINE))
	read -r before stall after <<<"$(analyse "$STELLAR_OUT/$name.rx" "$t_pre" "$t_dark" "$t_light")"
	srtt=$(get_val_from a "$name.srtt")
	need=$(((before < left ? before : left) / 2))
	rtts=$(awk -v s="$stall" -v r="$srtt" 'BEGIN { if (r > 0) printf "%.0f", s / r; else print "?" }')
	mid=$(awk -v a="$t_dark" -v b="$t_light" 'BEGIN { printf "%.3f", (a + b) / 2 }')
	busy="router $(cpu_busy router "$t_pre" "$t_dark")% before, $(cpu_busy router "$mid" "$t_light")% after; host $(cpu_busy host "$t_pre" "$t_dark")%, $(cpu_busy host "$mid" "$t_light")%"
	log "$name: $before B/s before, stall $stall ms ($rtts smoothed RTTs of $srtt ms), $after B/s in the second half of the dark time (capacity left $left; CPU busy: $busy)"
	goal_stall=$(awk -v s="$stall" -v r="$srtt" 'BEGIN { print (r > 0 && s <= 20 * r) ? "met" : "not met" }')
	goal_rate=$([ $((after * 100)) -ge $(((before < left ? before : left) * 80)) ] && echo met || echo 'not met')
	log "GOAL $name: stall <= 20 RTTs: $goal_stall; rate >= 80% of what is left: $goal_rate"
	GOALS+=("$dir $goal_stall/$goal_rate")
	# The series goes on; its verdict comes at the end.
	[ "$after" -ge "$need" ] ||
		FAILED+=("$name: $after B/s in the second half of the dark time, under half of $((before < left ? before : left))")
	[ "$stall" -le $((DARK_SECONDS * 500)) ] ||
		FAILED+=("$name: the transfer stalled for $stall ms of the ${DARK_SECONDS} s dark time")
}

# goal_summary: per scenario, in how many runs each goal was met.
goal_summary() {
	local scenario

	for scenario in "${SCENARIOS[@]}"; do
		printf '%s\n' "${GOALS[@]}" | awk -v sc="$scenario" '
			$1 == sc { n++; if ($2 ~ /^met/) s++; if ($0 ~ /\/met$/) r++ }
			END { if (n) printf "GOAL %s: stall met in %d of %d runs, rate in %d of %d\n", sc, s, n, r, n }'
	done
}

GOALS=() FAILED=()
fabric_up
CC_PARAMS=()
[ -z "${STELLAR_FABRIC_CC:-}" ] || IFS=, read -r -a CC_PARAMS <<<"$STELLAR_FABRIC_CC"
stellar_load spray_paths=16 "${CC_PARAMS[@]}"
rdma link add stellar0 type stellar netdev eth0
GID=$(gid_index stellar0 "$FABRIC_IP")
barrier stellar-up
for scenario in "${SCENARIOS[@]}"; do
	for n in $(seq 1 "$RUNS"); do
		run "$scenario" "$n"
	done
done
"$TOOL" paths --device stellar0 >"$STELLAR_OUT/paths.txt"
[ "$STELLAR_ROLE" != a ] || fabric_cmd stats >"$STELLAR_OUT/stats.txt"
barrier checked
rdma link delete stellar0
stellar_unload
if [ "$STELLAR_ROLE" = b ]; then
	# (the guests have no /dev/fd for a process substitution)
	summary=$(goal_summary)
	while read -r line; do log "$line"; done <<<"$summary"
	[ "${#FAILED[@]}" = 0 ] || fail "$(printf '%s\n' "${FAILED[@]}")"
fi
log "fabric failover (${SCENARIOS[*]}): no QP error, the rate came back"
