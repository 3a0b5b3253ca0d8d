#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Correctness under packet spray: stellar between two VMs joined by 4
# links, each shaped to the same rate, combined by ECMP routes
# (fib_multipath_hash_policy=1) and by a bond (balance-xor, layer3+4), so
# that a packet's UDP source port picks its link (tests/vm/multipath.sh).
# With spray_paths 4 and 64, clean and then with netem reordering on
# link 2 and 1% loss on link 3: ibv_rc_pingpong -c, ib_write_bw,
# ib_read_bw, ib_send_bw and rping -v -V must complete with verified
# data (no QP error: the tools exit 0 only if every completion succeeded).
#
# Spreading: after each run, on the VM that sent more, at least 2 links
# must have carried 10% of its bytes each (except for 4 paths over ECMP,
# where the hash may put all 4 ports on one link), and the spray statistics
# (stellar-tool paths, i.e. /proc/stellar/spray_stats) must show 2 paths
# with 10% of its packets each.  These checks are collected and fail the
# test at the end, after all data checks ran.
#
# Arguments (optional): topologies to run, of "ecmp" and "bond" (default
# both, ECMP first: the bond takes the links' addresses away), and "long".
# By default ECMP runs with 64 paths and the bond with 4, and make check's
# short form (lib.sh long_run) runs only the impaired runs of each;
# "long" runs both path counts on each topology
# (tests/vm/run-tests.sh spray_verbs -- long).
#
# ib_read_bw and rping (whose server RDMA READs the client's buffer) are
# checked for data but not for spreading: a READ's responses take the path
# of its request, and the spray statistics count requests only.
# SPRAY_RATE (default 100mbit) sets the per-link rate.
# memdebug=off: its spreading checks need the CPU headroom that SLUB
# debugging takes under TCG (make check MEMDEBUG=1 forces it on).
# stellar-test: vms=2 links=4 timeout=2700 memdebug=off

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"
# shellcheck source=tests/vm/multipath.sh
. "$STELLAR_REPO/tests/vm/multipath.sh"

TOOL=$STELLAR_REPO/tools/stellar-tool
[ -x "$TOOL" ] || fail "stellar-tool not built: $TOOL (run make -C tools)"
RATE=${SPRAY_RATE:-100mbit}
TOPOLOGIES=()
LONG=0
for arg in "$@"; do
	case "$arg" in
	'') ;;	# the harness passes an empty argument when there are none
	ecmp | bond) TOPOLOGIES+=("$arg") ;;
	long) LONG=1 ;;
	*) fail "unknown argument '$arg' (ecmp, bond, long)" ;;
	esac
done
[ "${#TOPOLOGIES[@]}" -gt 0 ] || TOPOLOGIES=(ecmp bond)
PORT=19000
SPREAD_FAILS=()
# A run may take up to RUN_SECONDS; the other VM waits for it that long.
RUN_SECONDS=240
STELLAR_BARRIER_TIMEOUT=$((RUN_SECONDS + 60))

modprobe -a sch_tbf sch_netem

next_port() {
	PORT=$((PORT + 1))
}

# path_packets: packets per spray path of stellar0, space-separated.
path_packets() {
	"$TOOL" -j paths --device stellar0 | jq -r '[.paths[].packets] | join(" ")'
}

# spread_snapshot: link bytes and path packets before a run.
spread_snapshot() {
	BEFORE_LINKS=$(mp_link_bytes tx)
	BEFORE_PATHS=$(path_packets)
}

# grown BEFORE AFTER: how many of the N entries grew by at least
# 1 / max(10, 2 N) of the total growth: 10% of it for 4 links or paths,
# half of a fair share for 64 paths (a missing BEFORE entry counts as 0).
grown() {
	awk -v b="$1" -v a="$2" 'BEGIN {
		n = split(a, aa, " "); split(b, bb, " ")
		for (i = 1; i <= n; i++) { d[i] = aa[i] - bb[i]; t += d[i] }
		div = 2 * n > 10 ? 2 * n : 10
		for (i = 1; i <= n; i++) if (t > 0 && d[i] >= t / div) c++
		print c + 0 }'
}

sum_growth() {
	awk -v b="$1" -v a="$2" 'BEGIN {
		n = split(a, aa, " "); split(b, bb, " ")
		for (i = 1; i <= n; i++) t += aa[i] - bb[i]
		printf "%.0f\n", t }'
}

# check_spread NAME: the VM that sent more bytes in run NAME checks that
# at least 2 links and 2 spray paths carried their share of them (see
# grown).  With SPREAD_EXEMPT set the figures are logged, not checked.
check_spread() {
	local name=$1 after mine peers links paths min_links

	after=$(mp_link_bytes tx)
	mine=$(sum_growth "$BEFORE_LINKS" "$after")
	put_val "$name.sent" "$mine"
	peers=$(get_val "$name.sent")
	if [ "$mine" -lt "$peers" ] ||
		{ [ "$mine" = "$peers" ] && [ "$STELLAR_ROLE" = b ]; }; then
		return 0
	fi
	links=$(grown "$BEFORE_LINKS" "$after")
	paths=$(grown "$BEFORE_PATHS" "$(path_packets)")
	log "$name: sent $mine bytes; $links links and $paths paths carried their share"
	[ -z "${SPREAD_EXEMPT:-}" ] || return 0
	# ECMP hashes each source port onto a link the sender cannot choose:
	# the 4 ports of a 4-path QP all land on one of the 4 links with
	# probability 1/64, so there only the paths are checked.  (The bond's
	# hash is known and the ports are chosen to cover its links; 64 ports
	# cover every link whatever the hash.)
	case "$name" in
	ecmp_p4_*) min_links=1 ;;
	*) min_links=2 ;;
	esac
	if [ "$links" -lt "$min_links" ] || [ "$paths" -lt 2 ]; then
		SPREAD_FAILS+=("$name ($STELLAR_ROLE sent $mine bytes): $links links, $paths paths with their share")
	fi
}

# pair NAME READY CMD...: server CMD on VM b, client CMD MP_PEER_IP on a.
# shellcheck disable=SC2034 # srv and cli are used by name in pair_run
pair() {
	local name=$1 ready=$2
	local -a srv cli

	shift 2
	srv=("$@")
	cli=("$@" "$MP_PEER_IP")
	spread_snapshot
	pair_run "$name" b "$ready" "$RUN_SECONDS" srv cli
	check_spread "$name"
}

perf() {
	local name=$1

	shift
	next_port
	pair "$name" "tcp:$PORT" "$@" -d stellar0 -x "$GID" -p "$PORT"
	[ "$PAIR_ROLE" = server ] || perftest_value "$PAIR_LOG" 4 >/dev/null
}

# shellcheck disable=SC2034 # srv and cli are used by name in pair_run
rping_check() {
	local name=$1 count=50 pings
	local -a srv cli

	next_port
	srv=(rping -s -v -V -C "$count" -S 4096 -a "$MP_IP" -p "$PORT")
	cli=(rping -c -v -V -C "$count" -S 4096 -I "$MP_IP" -a "$MP_PEER_IP"
		-p "$PORT")
	spread_snapshot
	pair_run "$name" b "cm:$PORT" "$RUN_SECONDS" srv cli
	SPREAD_EXEMPT=1 check_spread "$name"
	[ "$PAIR_ROLE" = client ] || return 0
	assert_not_contains "$(cat "$PAIR_LOG")" mismatch "$name output"
	pings=$(grep -c 'ping data: rdma-ping-' "$PAIR_LOG" || true)
	assert_eq "$pings" "$count" "verified pings of $name"
}

# workloads NAME: every RC workload once.
workloads() {
	local name=$1

	next_port
	pair "${name}_pingpong" "tcp:$PORT" \
		ibv_rc_pingpong -d stellar0 -g "$GID" -p "$PORT" -c -s 65536 -n 100
	perf "${name}_write_bw" ib_write_bw -s 65536 -n 300
	SPREAD_EXEMPT=1 perf "${name}_read_bw" ib_read_bw -s 65536 -n 300
	perf "${name}_send_bw" ib_send_bw -s 65536 -n 300
	rping_check "${name}_rping"
}

impair() {
	mp_netem "$(link_dev 2)" -- delay 2ms reorder 50%
	mp_netem "$(link_dev 3)" -- loss 1%
}

unimpair() {
	mp_netem_off "$(link_dev 2)"
	mp_netem_off "$(link_dev 3)"
}

# The path counts a topology runs with: both when long.
path_counts() {
	if [ "$LONG" = 1 ]; then
		echo 4 64
	elif [ "$1" = ecmp ]; then
		echo 64
	else
		echo 4
	fi
}

# run_topology TOPO: device on the topology, the workloads with 4 and/or
# 64 paths, clean and impaired.
run_topology() {
	local topo=$1 paths

	"mp_$topo" "$RATE"
	rdma link add stellar0 type stellar netdev "$MP_DEV"
	GID=$(gid_index stellar0 "$MP_IP")
	barrier "$topo.up"
	wait_for 10 ping -c 1 -W 1 -I "$MP_IP" "$MP_PEER_IP"
	for paths in $(path_counts "$topo"); do
		"$TOOL" set --device stellar0 --spray-paths "$paths"
		# make check's short form: the impaired runs only.
		if [ "$LONG" = 1 ] || long_run; then
			workloads "${topo}_p${paths}"
		fi
		impair
		barrier "$topo.p$paths.impaired"
		workloads "${topo}_p${paths}_netem"
		unimpair
		barrier "$topo.p$paths.clean"
	done
	"$TOOL" paths --device stellar0 >"$STELLAR_OUT/$topo-paths.txt"
	cat /proc/stellar/spray_stats >"$STELLAR_OUT/$topo-spray_stats.txt"
	rdma link delete stellar0
	barrier "$topo.down"
}

stellar_load spray_paths=4
for topo in "${TOPOLOGIES[@]}"; do
	run_topology "$topo"
	[ "$topo" != ecmp ] || mp_ecmp_down
done
stellar_unload

if [ "${#SPREAD_FAILS[@]}" -gt 0 ]; then
	printf '  %s\n' "${SPREAD_FAILS[@]}"
	fail "${#SPREAD_FAILS[@]} runs were not spread over several links and paths (data checks all passed)"
fi
log "spray (${TOPOLOGIES[*]}): data checks passed and traffic spread over the links"
