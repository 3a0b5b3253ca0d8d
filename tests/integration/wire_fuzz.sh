#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Wire fuzzer: stellar0 on veth0 (init_net) and stellar1 on veth0p (netns
# ns1) carry legitimate traffic in rounds (ibv_rc_pingpong with data
# checks, ib_write_bw, ib_read_bw, ib_atomic_bw, ibv_uc_pingpong,
# ibv_ud_pingpong), over IPv4 and IPv6, standard RoCEv2 and with packet
# spray and the stellar wire extensions (placement and selective ACK
# headers; netem jitter on veth0p reorders packets).  Meanwhile helpers/wire_fuzz.py
# sniffs the link, mutates the live frames field by field and injects them
# as the peer (same addresses and UDP ports, correct ICRC), in both
# directions.  Pass: the harness finds no kernel report in the guest log
# (BUG, WARNING, Oops, SLUB), every traffic run ends within its timeout
# (it completes, or one side fails with an error: a run in which every
# side is still waiting at its timeout is a hang and fails the test), a
# fresh round without the fuzzer completes with correct data, no QP is
# left, and the module unloads.  The fuzzed frames must reach the devices
# and some traffic must complete under fuzzing, else the test proves
# nothing and fails.
#
# Arguments (tests/vm/run-tests.sh wire_fuzz -- ARGS):
#   long         fuzz for 600 s instead of two rounds (one standard, one
#                with spray; about 2 minutes under TCG)
#   seconds=N    fuzz for N s (above 600 raise the test's --timeout)
#   seed=N       the fuzzer's RNG seed (default: random, printed)
#   rate=N       injected frames per second (default 40)
#   selfcheck    one traffic run (both sides sleep) hangs on purpose: the
#                test must fail with "traffic hung"
# stellar-test: vms=1 timeout=900

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

HELPERS=$STELLAR_REPO/tests/integration/helpers
FUZZ=$HELPERS/wire_fuzz.py
TOOL=$STELLAR_REPO/tools/stellar-tool
V4_LOCAL=10.50.0.1 V4_PEER=10.50.0.2 V6_LOCAL=fd50::1 V6_PEER=fd50::2
V6_LOCAL_GID=fd50:0000:0000:0000:0000:0000:0000:0001
V6_PEER_GID=fd50:0000:0000:0000:0000:0000:0000:0002
FUZZ_SECONDS=0 FUZZ_RATE=40 SEED=$((RANDOM << 15 | RANDOM)) SELFCHECK=0
RUN_SECONDS=$(scaled 60)
TRAFFIC=$STELLAR_OUT/traffic

for arg in "$@"; do
	case $arg in
	long) FUZZ_SECONDS=600 ;;
	seconds=*) FUZZ_SECONDS=${arg#*=} ;;
	seed=*) SEED=${arg#*=} ;;
	rate=*) FUZZ_RATE=${arg#*=} ;;
	selfcheck) SELFCHECK=1 ;;
	*) fail "unknown argument '$arg'" ;;
	esac
done
[ -x "$TOOL" ] || fail "stellar-tool not built: $TOOL (run make -C tools)"

# link_up NETNS DEV V4/PREFIX V6/PREFIX: address DEV in NETNS ("-": this
# one) and bring it up.
link_up() {
	local -a ns=()

	[ "$1" = - ] || ns=(-n "$1")
	ip "${ns[@]}" addr add "$3" dev "$2"
	ip "${ns[@]}" addr add "$4" dev "$2" nodad
	ip "${ns[@]}" link set "$2" up
}

setup_network() {
	ip netns add ns1
	ip -n ns1 link set lo up
	# Fixed MAC addresses: a recorded injected.pcap replays on a new boot.
	ip link add veth0 address 02:00:0a:32:00:01 type veth peer name veth0p \
		address 02:00:0a:32:00:02 netns ns1
	link_up - veth0 "$V4_LOCAL/24" "$V6_LOCAL/64"
	link_up ns1 veth0p "$V4_PEER/24" "$V6_PEER/64"
	wait_for 10 ip netns exec ns1 ping -c 1 -W 1 "$V4_LOCAL"
	rdma link add stellar0 type stellar netdev veth0
	ip netns exec ns1 rdma link add stellar1 type stellar netdev veth0p
	wait_for 15 ib_port_state_is stellar0 PORT_ACTIVE
	wait_for 15 ib_port_state_is stellar1 PORT_ACTIVE
	G4_0=$(gid_index stellar0 "$V4_LOCAL")
	G4_1=$(gid_index stellar1 "$V4_PEER")
	wait_for 15 gid6_index stellar0 "$V6_LOCAL_GID"
	wait_for 15 gid6_index stellar1 "$V6_PEER_GID"
	G6_0=$(gid6_index stellar0 "$V6_LOCAL_GID")
	G6_1=$(gid6_index stellar1 "$V6_PEER_GID")
}

# gid6_index IBDEV GID: index of the RoCE v2 GID of port 1 (read with
# the builtin: the table has hundreds of entries, a fork each is slow).
gid6_index() {
	local gids=/sys/class/infiniband/$1/ports/1 f gid type

	for f in "$gids"/gids/*; do
		gid='' type=''
		read -r gid <"$f" || true
		[ "$gid" = "$2" ] || continue
		read -r type <"$gids/gid_attrs/types/${f##*/}" 2>/dev/null || true
		[ "$type" = "RoCE v2" ] || continue
		echo "${f##*/}"
		return 0
	done
	return 1
}

# family 4|6: the RoCE traffic of the next runs uses IPv4 or IPv6 GIDs
# (the TCP connection that sets it up stays on IPv4).
family() {
	if [ "$1" = 6 ]; then
		G0=$G6_0 G1=$G6_1
	else
		G0=$G4_0 G1=$G4_1
	fi
}

# spray MODE: new QPs of both devices spray over 4 paths and so use the
# wire extensions, with netem jitter reordering packets so that
# responders send selective ACKs (MODE on), or use one path (MODE off).
spray() {
	local paths=1

	ip netns exec ns1 tc qdisc del dev veth0p root 2>/dev/null || true
	if [ "$1" = on ]; then
		paths=4
		ip netns exec ns1 tc qdisc add dev veth0p root netem delay 1ms 1ms
	fi
	"$TOOL" set --device stellar0 --spray-paths "$paths"
	ip netns exec ns1 "$TOOL" set --device stellar1 --spray-paths "$paths"
}

# timed_out RC: an exit code of timeout(1) for a command it had to stop.
timed_out() {
	[ "$1" = 124 ] || [ "$1" = 137 ]
}

# legit NAME KIND PORT CMD...: one run of CMD, server on stellar0 in
# init_net, client on stellar1 in ns1.  KIND is pp (ibverbs pingpong
# options) or perf (perftest options).  Appends "NAME ok|error|hang
# SERVER_RC CLIENT_RC" to $TRAFFIC/runs: ok when both exit 0, hang when
# both were still running at the timeout, error otherwise (one side got
# an error: a failed completion, or its peer went away).
legit() {
	local name=$1 kind=$2 port=$3 gflag=-g srv_rc=0 cli_rc=0 srv outcome
	local out=$TRAFFIC/$name

	shift 3
	[ "$kind" = perf ] && gflag=-x
	if [ "$SELFCHECK" = 1 ] && [ "$name" = selfcheck ]; then
		set -- bash -c 'sleep 3600' --
	fi
	timeout -k 5 "$RUN_SECONDS" "$@" -d stellar0 "$gflag" "$G0" -p "$port" \
		>"$out.server" 2>&1 &
	srv=$!
	until tcp_listening "$port" || ! kill -0 "$srv" 2>/dev/null; do
		sleep 0.1
	done
	timeout -k 5 "$RUN_SECONDS" ip netns exec ns1 "$@" -d stellar1 \
		"$gflag" "$G1" -p "$port" "$V4_LOCAL" >"$out.client" 2>&1 ||
		cli_rc=$?
	wait "$srv" || srv_rc=$?
	if [ "$srv_rc" = 0 ] && [ "$cli_rc" = 0 ]; then
		outcome=ok
	elif timed_out "$srv_rc" && timed_out "$cli_rc"; then
		outcome=hang
	else
		outcome=error
	fi
	echo "$name $outcome $srv_rc $cli_rc" >>"$TRAFFIC/runs"
}

# round N: one run of every kind of traffic; TCP ports differ per round.
round() {
	local p=$((20000 + $1 * 10 % 40000))

	legit "rc_pingpong.$1" pp "$p" ibv_rc_pingpong -c -s 4096 -n 300
	legit "write_bw.$1" perf $((p + 1)) ib_write_bw -s 8192 -n 200
	legit "read_bw.$1" perf $((p + 2)) ib_read_bw -s 8192 -n 200
	legit "atomic_bw.$1" perf $((p + 3)) ib_atomic_bw -n 300
	legit "uc_pingpong.$1" pp $((p + 4)) ibv_uc_pingpong -s 1024 -n 200
	legit "ud_pingpong.$1" pp $((p + 5)) ibv_ud_pingpong -s 1024 -n 200
	[ "$SELFCHECK" = 0 ] || [ "$1" != 1 ] || legit selfcheck pp $((p + 6)) true
}

# traffic_loop: rounds of traffic, every second one with spray, IPv4 and
# IPv6 in turn (the first IPv4, the second IPv6 with spray), at least two
# and until FUZZ_SECONDS have passed.
traffic_loop() {
	local n=1 end=$(($(date +%s) + FUZZ_SECONDS))

	while [ "$n" -le 2 ] || [ "$(date +%s)" -lt "$end" ]; do
		spray "$( [ $((n % 2)) = 0 ] && echo on || echo off)"
		family "$( [ $((n % 4)) -ge 2 ] && echo 6 || echo 4)"
		round "$n"
		n=$((n + 1))
	done
	spray off
}

# check_injected N: most of the N injected frames reached the devices
# (the others were dropped by IP or UDP for bad lengths): the devices
# received that many more packets than they sent to each other.  Saves
# the counters and lists the drop counters.
check_injected() {
	local dev extra=0

	for dev in stellar0 stellar1; do
		cat "/proc/stellar/$dev/stats" >"$STELLAR_OUT/$dev.stats"
		extra=$((extra + $(stellar_stat "$dev" rx_packets) -
			$(stellar_stat "$dev" tx_packets)))
	done
	log "devices received $extra packets beyond each other's; drops:" \
		"$(cat "$STELLAR_OUT"/stellar?.stats | awk '$1 ~ /^rx_drop/ &&
			$2 { sub(":", "", $1); n[$1] += $2 }
			END { for (k in n) printf "%s %d ", k, n[k] }')"
	[ "$extra" -ge $(($1 / 2)) ] ||
		fail "only $extra of $1 injected frames reached the devices"
}

# check_runs: no run hung; prints the outcomes.
check_runs() {
	local hangs

	log "traffic runs: $(awk '{ print $2 }' "$TRAFFIC/runs" | sort |
		uniq -c | tr -s ' \n' ' ')"
	hangs=$(awk '$2 == "hang"' "$TRAFFIC/runs")
	[ -z "$hangs" ] ||
		fail "traffic hung (both sides still waiting after ${RUN_SECONDS}s):"$'\n'"$hangs"
	grep -q ' ok ' "$TRAFFIC/runs" ||
		fail "no traffic run completed while the fuzzer ran (outputs in $TRAFFIC)"
}

# run_summary NAME OUTCOME SERVER_RC CLIENT_RC: one line on a failed run
# of $TRAFFIC/runs, with the last line of each side's output.
run_summary() {
	local side

	printf '%s %s (server rc %s, client rc %s)' "$1" "$2" "$3" "$4"
	for side in server client; do
		printf ', %s: "%s"' "$side" \
			"$(tail -n 1 "$TRAFFIC/$1.$side" 2>/dev/null | tr -d '\r')"
	done
}

# still_works: a round without the fuzzer completes with correct data.
# The failure names the runs that failed and how (the test's output is
# long, its FAIL line is what the runner shows).
still_works() {
	local failed

	mv "$TRAFFIC/runs" "$TRAFFIC/runs.fuzzed"
	family 4
	round 999
	[ -s "$TRAFFIC/runs" ] ||
		fail "the round without the fuzzer recorded no runs ($TRAFFIC/runs)"
	failed=$(awk '$2 != "ok"' "$TRAFFIC/runs" | while read -r run; do
		# shellcheck disable=SC2086 # the four fields of a runs line
		run_summary $run
		printf '; '
	done)
	[ -z "$failed" ] ||
		fail "traffic after fuzzing failed: ${failed%; } (outputs in $TRAFFIC)"
	log "a round without the fuzzer completed"
}

mkdir -p "$TRAFFIC"
stellar_load
setup_network
log "fuzzing at $FUZZ_RATE frames/s, seed $SEED (run-tests.sh wire_fuzz" \
	"-- seed=$SEED repeats the mutations)"
python3 "$FUZZ" fuzz --a veth0 --b ns1:veth0p --seed "$SEED" \
	--rate "$FUZZ_RATE" --record "$STELLAR_OUT/injected.pcap" \
	>"$STELLAR_OUT/fuzz.out" 2>"$STELLAR_OUT/fuzz.log" &
FUZZER=$!
traffic_loop
kill -TERM "$FUZZER"
wait "$FUZZER" ||
	fail "wire_fuzz.py failed:"$'\n'"$(tail -n 20 "$STELLAR_OUT/fuzz.log")"
log "fuzzer: $(cat "$STELLAR_OUT/fuzz.out")"
check_injected "$(awk '{ print $2 }' "$STELLAR_OUT/fuzz.out")"
check_runs
still_works
# Keep the injected frames only if a fuzzed run failed (to replay them).
grep -qv ' ok ' "$TRAFFIC/runs.fuzzed" || rm -f "$STELLAR_OUT/injected.pcap"

assert_eq "$(rdma resource show qp | grep -c ' type \(RC\|UC\|UD\) ' || true)" \
	0 "QPs left"
rdma link delete stellar0
ip netns exec ns1 rdma link delete stellar1
ip netns del ns1
stellar_unload
log "wire_fuzz OK"
