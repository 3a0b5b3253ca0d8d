#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Latency telemetry and stellar-tool top against real traffic between two
# hosts (stellar on both ends):
#   - 500 RC SENDs each way (ibv_rc_pingpong, every send signaled) add
#     exactly 500 samples on each host to the queue, network and
#     completion histograms of the device, and at least 500 (one per
#     request packet) to the responder's; the same 500 to those segments'
#     4 KiB size class (the sends are 4096 bytes) and none to the others;
#   - after ib_write_lat the network segment's p50 is above 0 and below
#     1 s, its p99 not below its p50, and the queue segment counted at
#     least the iterations, in its 256-byte class (64-byte writes);
#   - while a pingpong runs, "stellar-tool top -n 2" in batch mode shows
#     stellar0 with non-zero TX and RX MB/s on its second screen and, for
#     root, the pingpong's QP; root reads the QP's histograms with
#     "stellar-tool latency --qp N", an unprivileged user gets neither
#     (EPERM, "need CAP_NET_ADMIN"), but does get the device's;
#   - latency_telemetry=0 stops the counting (a pingpong adds nothing),
#     and turning it back on resumes it;
#   - stellar-monitor --metrics latency passes promtool and its
#     stellar_latency_seconds _count and +Inf bucket equal the tool's count;
#   - with a netem delay of 1 ms +- 1 ms on the link, a pingpong of QPs
#     that do not spray (one path, no wire extensions) counts microbursts
#     on path 0 and fills its RTT histogram (from single-packet sends);
#   - with 4 spray paths and that delay, a pingpong counts microbursts on
#     paths 0-3 (excess above 500 us) and fills RTT histograms of at least
#     two paths, of the device and of the running QP (stellar-tool
#     latency --qp), shown by stellar-tool latency and stellar-monitor;
#   - stellar-monitor exports the size classes
#     (stellar_latency_by_size_seconds, label size);
#   - the cost: ib_write_bw and ib_write_lat with telemetry on and off,
#     twice each, logged as "COST ..." lines with perftest's result line
#     (columns: bytes, iterations, then BW peak/average MB/s or t_min,
#     t_max, t_typical, t_avg us); not asserted, TCG timing is too noisy,
#     and only when the test is named (not in make check).
# stellar-test: vms=2 links=1 timeout=1500 memdebug=off

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

TOOL=$STELLAR_REPO/tools/stellar-tool
[ -x "$TOOL" ] || fail "stellar-tool not built: $TOOL (run make -C tools)"
UNPRIV="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all"
PARAM=/sys/module/virtio_stellar/parameters/latency_telemetry

stellar_pair_up
g=$STELLAR_GID
assert_eq "$(cat "$PARAM")" "Y" "latency_telemetry default"

# seg_count SEG: samples of segment SEG of stellar0's device histogram.
seg_count() {
	"$TOOL" -j latency --device stellar0 | jq ".segments.$1.count"
}

# seg_delta SEG: samples added since the "before" snapshot.
seg_delta() {
	echo $(($(seg_count "$1") - ${before[$1]}))
}

# size_count SEG CLASS: samples of segment SEG's size class CLASS.
size_count() {
	"$TOOL" -j latency --device stellar0 |
		jq ".size_classes.$1[\"$2\"].count // 0"
}

SIZES="256B 4KiB 64KiB large"
declare -A before
snapshot() {
	local s c
	for s in queue network completion responder; do
		before[$s]=$(seg_count $s)
	done
	for s in queue network completion; do
		for c in $SIZES; do
			before[$s/$c]=$(size_count "$s" "$c")
		done
	done
}

# size_delta SEG CLASS: samples of a size class since the snapshot.
size_delta() {
	echo $(($(size_count "$1" "$2") - ${before[$1/$2]}))
}

# start_pingpong PORT SIZE: a pingpong that runs until killed ($pp),
# ready when this returns.
start_pingpong() {
	local port=$1 size=$2

	pp_log=$STELLAR_OUT/pp_$port.log
	if [ "$STELLAR_ROLE" = a ]; then
		stdbuf -oL ibv_rc_pingpong -d stellar0 -g "$g" -p "$port" -c \
			-s "$size" -n 100000000 >"$pp_log" 2>&1 &
		pp=$!
		wait_for 20 tcp_listening "$port"
		put_val "pp$port.ready" 1
	else
		get_val "pp$port.ready" >/dev/null
		stdbuf -oL ibv_rc_pingpong -d stellar0 -g "$g" -p "$port" -c \
			-s "$size" -n 100000000 "$(peer_ip 1)" >"$pp_log" 2>&1 &
		pp=$!
	fi
}

stop_pingpong() {
	kill "$pp" 2>/dev/null || true
	wait "$pp" 2>/dev/null || true
}

pp_qpn() {
	rdma resource show qp | grep "comm ibv_rc_pingpong" |
		grep " state RTS " | grep -oE 'lqpn [0-9]+' | awk '{ print $2 }'
}

log "device latency as read before any traffic"
"$TOOL" latency --device stellar0
snapshot
barrier snap1

client_server rc_pingpong 18800 300 -- \
	ibv_rc_pingpong -d stellar0 -g "$g" -p 18800 -c -s 4096 -n 500
sleep 1
for s in queue network completion; do
	d=$(seg_delta $s)
	log "$s: $d new samples"
	assert_eq "$d" 500 "$s samples for 500 signaled RC sends"
done
d=$(seg_delta responder)
log "responder: $d new samples"
[ "$d" -ge 500 ] || fail "responder: $d samples, fewer than the 500 requests"
for s in queue network completion; do
	for c in $SIZES; do
		want=0
		[ "$c" = 4KiB ] && want=500
		assert_eq "$(size_delta "$s" "$c")" "$want" "$s/$c samples for 500 4096-byte sends"
	done
done
barrier counted

log "percentiles after ib_write_lat"
snapshot
barrier snap2
perftest_pair lat b stellar0 "$g" 18801 300 ib_write_lat -s 64 -n 2000
sleep 1
d=$(seg_delta queue)
[ "$d" -ge 2000 ] || fail "queue: $d samples after 2000 ib_write_lat iterations"
d=$(size_delta queue 256B)
[ "$d" -ge 2000 ] || fail "queue/256B: $d samples after 2000 64-byte writes"
"$TOOL" latency --device stellar0 | tee "$STELLAR_OUT/latency.txt"
lat_json=$("$TOOL" -j latency --device stellar0)
p50=$(echo "$lat_json" | jq '.segments.network.p50_ns')
p99=$(echo "$lat_json" | jq '.segments.network.p99_ns')
log "network p50 ${p50} ns p99 ${p99} ns"
{ [ "$p50" -gt 0 ] && [ "$p50" -lt 1000000000 ]; } ||
	fail "network p50 $p50 ns is not in (0, 1 s)"
[ "$p99" -ge "$p50" ] || fail "network p99 $p99 < p50 $p50"
grep -q "^network (" "$STELLAR_OUT/latency.txt" ||
	fail "no network histogram in: $(cat "$STELLAR_OUT/latency.txt")"
grep -Eq '^ +[0-9.]+[mun]?s - [0-9.]+[mun]?s \|#+ +[0-9]+$' "$STELLAR_OUT/latency.txt" ||
	fail "no histogram bar in: $(cat "$STELLAR_OUT/latency.txt")"
barrier percentiles

log "top and per-QP histograms while a pingpong runs"
start_pingpong 18802 4096
wait_for 60 pp_qpn || fail "no pingpong QP in RTS: $(rdma resource show qp)"
qpn=$(pp_qpn)
log "pingpong QP $qpn"
sleep 2

top_out=$STELLAR_OUT/top.txt
"$TOOL" top -n 2 -d 1 >"$top_out" || fail "stellar-tool top failed: $(cat "$top_out")"
cat "$top_out"
[ "$(grep -c '^stellar-tool top - ' "$top_out")" = 2 ] ||
	fail "top printed not 2 screens"
if grep -q $'\033' "$top_out"; then
	fail "top wrote escape sequences to a file (batch mode)"
fi
# the device line of the second screen: TX_MB/s and RX_MB/s
dev_line=$(awk '/frame 2/ { s = 1 } s && $1 == "stellar0" { print; exit }' "$top_out")
log "top: $dev_line"
tx=$(echo "$dev_line" | awk '{ print $3 }')
rx=$(echo "$dev_line" | awk '{ print $4 }')
awk -v t="$tx" -v r="$rx" 'BEGIN { exit !(t + 0 > 0 && r + 0 > 0) }' ||
	fail "top shows no throughput for stellar0: $dev_line"
awk '/frame 2/ { s = 1 } s' "$top_out" | grep -Eq "^ +$qpn RC +RTS " ||
	fail "top shows root no QP $qpn: $(cat "$top_out")"

$UNPRIV "$TOOL" top -n 1 >"$STELLAR_OUT/top_nobody.txt" ||
	fail "top as nobody failed: $(cat "$STELLAR_OUT/top_nobody.txt")"
grep -q "^QPS stellar0: per-QP figures need CAP_NET_ADMIN" "$STELLAR_OUT/top_nobody.txt" ||
	fail "top as nobody: $(cat "$STELLAR_OUT/top_nobody.txt")"
if grep -Eq "^ +$qpn RC " "$STELLAR_OUT/top_nobody.txt"; then
	fail "top shows nobody the QP"
fi

qp_json=$("$TOOL" -j latency --device stellar0 --qp "$qpn") ||
	fail "root cannot read QP $qpn's latency"
log "QP $qpn: $(echo "$qp_json" | jq -c '{qpn, n: .segments.network.count, p50: .segments.network.p50_ns}')"
assert_eq "$(echo "$qp_json" | jq .qpn)" "$qpn" "QP in the reply"
[ "$(echo "$qp_json" | jq .segments.network.count)" -gt 0 ] ||
	fail "QP $qpn has no network samples: $qp_json"
status=0
$UNPRIV "$TOOL" latency --device stellar0 --qp "$qpn" \
	>/tmp/lat_nobody.out 2>/tmp/lat_nobody.err || status=$?
[ "$status" = 1 ] || fail "nobody read QP $qpn's latency (exit $status): $(cat /tmp/lat_nobody.out)"
assert_contains "$(cat /tmp/lat_nobody.err)" "need CAP_NET_ADMIN" "per-QP latency as nobody"
[ ! -s /tmp/lat_nobody.out ] || fail "per-QP latency as nobody printed: $(cat /tmp/lat_nobody.out)"
$UNPRIV "$TOOL" -j latency --device stellar0 >/dev/null ||
	fail "nobody cannot read the device's latency"
barrier top-done
stop_pingpong
barrier killed

log "latency_telemetry=0 stops the counting"
echo 0 >"$PARAM"
"$TOOL" latency --device stellar0 | grep "latency telemetry off" >/dev/null ||
	fail "the tool does not say telemetry is off"
snapshot
barrier off
client_server rc_off 18803 300 -- \
	ibv_rc_pingpong -d stellar0 -g "$g" -p 18803 -c -s 4096 -n 200
for s in queue network completion responder; do
	assert_eq "$(seg_delta $s)" 0 "$s samples with telemetry off"
done
echo 1 >"$PARAM"
barrier on-again
client_server rc_on 18804 300 -- \
	ibv_rc_pingpong -d stellar0 -g "$g" -p 18804 -c -s 4096 -n 200
sleep 1
assert_eq "$(seg_delta network)" 200 "network samples with telemetry back on"

log "stellar-monitor exports the histograms"
MON=$STELLAR_REPO/tools/stellar-monitor
scrape=$STELLAR_OUT/latency.prom
"$MON" --once --metrics latency --device stellar0 >"$scrape" ||
	fail "stellar-monitor --once failed"
promtool check metrics <"$scrape" >"$STELLAR_OUT/promtool.log" 2>&1 ||
	fail "promtool check metrics: $(cat "$STELLAR_OUT/promtool.log")"
grep -q '^# TYPE stellar_latency_seconds histogram$' "$scrape" ||
	fail "no histogram TYPE line: $(head -5 "$scrape")"
n_prom=$(grep '^stellar_latency_seconds_count{device="stellar0",segment="network"}' "$scrape" |
	awk '{ print $2 }')
inf=$(grep '^stellar_latency_seconds_bucket{device="stellar0",segment="network",le="+Inf"}' "$scrape" |
	awk '{ print $2 }')
n_tool=$(seg_count network)
log "network count: exporter $n_prom (+Inf bucket $inf), tool $n_tool"
assert_eq "$n_prom" "$n_tool" "network _count and stellar-tool"
assert_eq "$inf" "$n_prom" "+Inf bucket and _count"
n_prom=$(grep '^stellar_latency_by_size_seconds_count{device="stellar0",segment="network",size="4096"}' "$scrape" |
	awk '{ print $2 }')
assert_eq "$n_prom" "$(size_count network 4KiB)" "network 4 KiB class: exporter and stellar-tool"
barrier monitor-done

log "microbursts of QPs that do not spray: path 0"
path0_bursts() {
	"$TOOL" -j latency --device stellar0 |
		jq '[.microbursts[] | select(.path == 0) | .count] | add // 0'
}
path0_rtts() {
	"$TOOL" -j latency --device stellar0 |
		jq '[.path_rtt[] | select(.path == 0) | .histogram.count] | add // 0'
}
b0=$(path0_bursts)
r0=$(path0_rtts)
tc qdisc add dev "$(link_dev 1)" root netem delay 1ms 1ms
barrier jitter0-on
client_server rc_plain 18806 300 -- \
	ibv_rc_pingpong -d stellar0 -g "$g" -p 18806 -c -s 64 -n 300
tc qdisc del dev "$(link_dev 1)" root
b1=$(path0_bursts)
r1=$(path0_rtts)
log "path 0: microbursts $b0 -> $b1, RTT samples $r0 -> $r1"
[ "$b1" -gt "$b0" ] || fail "no microburst on path 0 of QPs that do not spray"
# each 64-byte send is one packet, sent once unless lost
[ $((r1 - r0)) -ge 250 ] || fail "path 0: $((r1 - r0)) RTT samples for 300 one-packet sends"
barrier jitter0-done

log "microbursts: spraying QPs over a jittery link"
"$TOOL" set --device stellar0 --spray-paths 4
bursts() {
	"$TOOL" -j latency --device stellar0 | jq '[.microbursts[].count] | add // 0'
}
b0=$(bursts)
tc qdisc add dev "$(link_dev 1)" root netem delay 1ms 1ms
barrier jitter-on
start_pingpong 18805 4096
wait_for 60 pp_qpn || fail "no spraying pingpong QP in RTS: $(rdma resource show qp)"
qpn=$(pp_qpn)
sleep 3
qp_paths=$("$TOOL" -j latency --device stellar0 --qp "$qpn" |
	jq -c '[.path_rtt[] | {path, n: .histogram.count}]')
log "QP $qpn RTT per path: $qp_paths"
echo "$qp_paths" | jq -e 'length >= 2 and all(.[]; .path < 4 and .n > 0)' >/dev/null ||
	fail "QP $qpn has no RTT histograms of its spray paths: $qp_paths"
"$TOOL" latency --device stellar0 --qp "$qpn" | grep -q "^RTT per path:" ||
	fail "stellar-tool latency --qp shows no paths"
barrier qp-paths
stop_pingpong
tc qdisc del dev "$(link_dev 1)" root
barrier jitter-off
b1=$(bursts)
log "microbursts $b0 -> $b1: $("$TOOL" -j latency --device stellar0 | jq -c .microbursts)"
[ "$b1" -gt "$b0" ] || fail "no microburst counted over a link with 0-2 ms jitter"
"$TOOL" -j latency --device stellar0 |
	jq -e '[.microbursts[] | select(.path >= 4 or .max_us <= 500 or .last_ns == 0)] | length == 0' >/dev/null ||
	fail "implausible microburst entries: $("$TOOL" -j latency --device stellar0 | jq -c .microbursts)"
"$TOOL" latency --device stellar0 >"$STELLAR_OUT/latency_spray.txt"
grep -Eq '^  path +[0-3]: [0-9]+ bursts, largest \+[0-9]+ us, last ' "$STELLAR_OUT/latency_spray.txt" ||
	fail "stellar-tool latency shows no microburst line"
# Scraped to a file: grep -q ending a pipe early would kill the exporter
# with SIGPIPE, and pipefail would count that as a miss.
"$MON" --once --metrics latency --device stellar0 >"$STELLAR_OUT/latency_spray.prom" ||
	fail "stellar-monitor --once failed"
grep -Eq '^stellar_path_bursts_total\{device="stellar0",port="1",path="[0-3]"\} [1-9]' "$STELLAR_OUT/latency_spray.prom" ||
	fail "stellar-monitor exports no path bursts"
paths_rtt=$("$TOOL" -j latency --device stellar0 | jq -c '[.path_rtt[] | {path, n: .histogram.count, p50: .histogram.p50_ns}]')
log "RTT per path: $paths_rtt"
echo "$paths_rtt" | jq -e 'length >= 2 and all(.[]; .path < 4 and .n > 0 and .p50 > 0)' >/dev/null ||
	fail "no RTT histograms for the spray paths: $paths_rtt"
grep -Eq '^stellar_path_rtt_seconds_count\{device="stellar0",path="[0-3]"\} [1-9]' "$STELLAR_OUT/latency_spray.prom" ||
	fail "stellar-monitor exports no path RTT histogram"
"$TOOL" set --device stellar0 --spray-paths 1
barrier jitter-done

# cost_pair NAME PORT CMD...: CMD as server on VM b, as client on VM a; a
# measurement, not a check: a perftest that fails (TCG under load now and
# then makes one give up) is logged and the next run goes on.
cost_pair() {
	local name=$1 port=$2 pid rc=0 line

	shift 2
	COST_LOG=$STELLAR_OUT/$name.log
	if [ "$STELLAR_ROLE" = b ]; then
		timeout 300 "$@" -d stellar0 -x "$g" -p "$port" >"$COST_LOG" 2>&1 &
		pid=$!
		for _ in $(seq 150); do
			tcp_listening "$port" && break
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.2
		done
		put_val "$name.ready" 1
		wait "$pid" || rc=$?
	else
		get_val "$name.ready" >/dev/null
		timeout 300 "$@" -d stellar0 -x "$g" -p "$port" "$(peer_ip 1)" \
			>"$COST_LOG" 2>&1 || rc=$?
	fi
	barrier "$name.done"
	line=$(perftest_result "$COST_LOG")
	if [ "$STELLAR_ROLE" = a ]; then
		if [ "$rc" = 0 ] && [ -n "$line" ]; then
			log "COST $name: $(echo "$line" | tr -s ' \t' ' ')"
		else
			log "COST $name: no result (exit $rc)"
		fi
	fi
}
round=0
# A measurement, not a check: make check's short form (long_run) skips it.
modes="on off on off"
long_run || modes=''
[ -z "$modes" ] || log "cost: ib_write_bw and ib_write_lat, telemetry on and off"
for mode in $modes; do
	round=$((round + 1))
	if [ "$mode" = on ]; then echo 1 >"$PARAM"; else echo 0 >"$PARAM"; fi
	cost_pair "write_bw_telemetry_${mode}_$round" 18810 \
		ib_write_bw -s 65536 -n 500
	cost_pair "write_lat_telemetry_${mode}_$round" 18811 \
		ib_write_lat -s 64 -n 2000
done
echo 1 >"$PARAM"
barrier cost-done

rdma link delete stellar0
stellar_unload
log "obs_latency OK"
