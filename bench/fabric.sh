#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Fabric benchmark (issue 14): incast and many-to-many on the VM
# harness's leaf-spine fabric, rdma_rxe and stellar side by side in one
# run.  Four VMs, two leaves, two spines, two uplinks per host, every port
# shaped to RATE with an ECN-marking RED queue; a, b and c write to d at
# once, then every host writes to every other (bench/fabric-guest.sh).  Writes a markdown table to
# bench/results/fabric-latest.md (or --out).
#
#   bench/fabric.sh [--rate RATE] [--seconds N] [--paths N]
#                   [--only rxe|stellar-nocc|stellar] [--out FILE]
#                   [--cc-params NAME=VALUE[,NAME=VALUE...]]
#                   [--red MIN,MAX,PROBABILITY] [--from RESULTS]
# (--cc-params: module parameters of the DCQCN run, e.g.
# cc_ai_rate=500,cc_hai_rate=2000; --red: the RED queues' marking
# thresholds in bytes of average queue and the most they mark, default
# 20000,60000,0.2; --from: write the table again from an earlier run's
# results dir)
#
# Run as root on the build host after "make".  Knobs of the VM harness
# apply.

set -euo pipefail

BENCH_DIR=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
REPO=$(dirname "$BENCH_DIR")
BENCH_NAME=bench/fabric
# shellcheck source=bench/host-lib.sh
. "$BENCH_DIR/host-lib.sh"
OUT=$BENCH_DIR/results/fabric-latest.md
RATE=20mbit
RED=''
FROM=''
GUEST_ARGS=()

die() {
	echo "bench/fabric: $*" >&2
	exit 1
}

usage() {
	sed -n '12,16p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
}

parse_args() {
	while [ $# -gt 0 ]; do
		[ "$1" = -h ] || [ "$1" = --help ] || [ $# -ge 2 ] || usage
		case "$1" in
		--rate) RATE=$2 ;;
		--seconds | --paths | --only | --cc-params)
			GUEST_ARGS+=("$1" "$2") ;;
		--out) OUT=$2 ;;
		--red) RED=$2 ;;
		--from) FROM=$2 ;;
		-h | --help) usage ;;
		*) echo "bench/fabric: unknown argument '$1'" >&2; usage ;;
		esac
		shift 2
	done
}

# fig CONFIG TEST: a figure of the guest's bench.tsv ("—" if missing).
fig() {
	awk -F '\t' -v c="$1" -v t="$2" '$1 == c && $2 == t { v = $3 }
		END { print (v == "" ? "—" : v) }' "$TSV"
}

# figures CONFIG: "perftest_ratio jain p99_ratio qp_ok" of one config;
# the sum of perftest's averages against the bottleneck, d's two
# downlinks at RATE.
figures() {
	awk -F '\t' -v c="$1" -v rate="$RATE" '
		$1 == c && $2 ~ /^bw_/ { bw[$2] = $3 }
		$1 == c { f[$2] = $3 }
		END {
			n = 0; sum = 0; sq = 0
			for (k in bw) { n++; sum += bw[k]; sq += bw[k] * bw[k] }
			r = rate; sub(/mbit$/, "", r)
			neck = 2 * r * 1e6 / 8 / 1048576
			good = "—"; jain = "—"; p99 = "—"; ok = "—"
			if (n) good = sprintf("%.2f", sum / neck)
			if (sq > 0) jain = sprintf("%.3f", sum * sum / (n * sq))
			if (f["rtt_idle_p50"] ~ /^[0-9.]+$/ && f["rtt_idle_p50"] > 0 &&
			    f["rtt_load_p99"] ~ /^[0-9.]+$/)
				p99 = sprintf("%.1f", f["rtt_load_p99"] / f["rtt_idle_p50"])
			if (f["qp_ok"] != "") ok = f["qp_ok"]
			print good, jain, p99, ok
		}' "$TSV"
}

# bisection CONFIG: "all cross" many-to-many sums over the bisection
# bandwidth (leaf1 to leaf2 over two spines, both ways: 4 x RATE).
bisection() {
	awk -F '\t' -v c="$1" -v rate="$RATE" '
		$1 == c { f[$2] = $3 }
		END {
			r = rate; sub(/mbit$/, "", r)
			bis = 4 * r * 1e6 / 8 / 1048576
			all = "—"; cross = "—"
			if (f["m2m_bw"] ~ /^[0-9.]+$/) all = sprintf("%.2f", f["m2m_bw"] / bis)
			if (f["m2m_cross_bw"] ~ /^[0-9.]+$/)
				cross = sprintf("%.2f", f["m2m_cross_bw"] / bis)
			print all, cross
		}' "$TSV"
}

# met VALUE OP TARGET
met() {
	awk -v v="$1" -v t="$3" -v op="$2" 'BEGIN {
		if (v !~ /^[0-9.]+$/) { print "—"; exit }
		ok = (op == ">=") ? v + 0 >= t : v + 0 <= t
		print ok ? "yes" : "no" }'
}

# met_share SHARE TARGET: like met ... '>=' TARGET for a share of a
# link's rate, which cannot really exceed 1: a share above 1.05 says the
# flows did not overlap or perftest's clock ran off (TCG), so it proves
# nothing and is not counted as met.
met_share() {
	awk -v v="$1" -v t="$2" 'BEGIN {
		if (v !~ /^[0-9.]+$/) { print "—"; exit }
		if (v + 0 > 1.05) { print "no (over the link: not a valid figure)"; exit }
		print (v + 0 >= t) ? "yes" : "no" }'
}

# red_note: the RED queues' marking thresholds.
red_note() {
	local r

	r=$(fig setup red)
	[ "$r" != "—" ] || r=20000,60000,0.2
	echo "$r" | awk -F , '{ printf "%s to %s bytes, at most %s", $1, $2, $3 }'
}

# cc_params_note: the DCQCN run's extra module parameters, if any.
cc_params_note() {
	local p

	p=$(fig setup cc_params)
	[ "$p" = "—" ] || [ -z "$p" ] || echo " and $p"
}

write_report() {
	local rg rj rp rq ng nj np nq sg sj sp sq

	read -r rg rj rp rq <<<"$(figures rxe)"
	read -r ng nj np nq <<<"$(figures stellar-nocc)"
	read -r sg sj sp sq <<<"$(figures stellar)"
	read -r rm rx <<<"$(bisection rxe)"
	read -r nm nx <<<"$(bisection stellar-nocc)"
	read -r sm sx <<<"$(bisection stellar)"
	mkdir -p "$(dirname "$OUT")"
	{
		echo "# virtio-stellar fabric benchmark: incast"
		echo
		echo "Command: \`bench/fabric.sh${ORIG_ARGS:+ $ORIG_ARGS}\`  "
		echo "Date: $(date -u '+%Y-%m-%d %H:%M UTC')  "
		echo "Commit: $(git -C "$REPO" describe --always --dirty 2>/dev/null || echo unknown)  "
		echo "Fabric: 4 hosts, 2 leaves, 2 spines, 2 uplinks per host, every port $RATE (tbf, RED with ECN, marking $(red_note)); stellar spray_paths $(fig setup paths)  "
		echo "Guest log: \`$RESULTS\`"
		echo
		echo "| Figure | rdma_rxe | stellar, no CC | stellar, DCQCN | Target (stellar, DCQCN) | Met |"
		echo "|---|---:|---:|---:|---|---|"
		for k in a b c; do
			echo "| ib_write_bw $k -> d, MiB/s | $(fig rxe "bw_$k") | $(fig stellar-nocc "bw_$k") | $(fig stellar "bw_$k") | | |"
		done
		echo "| goodput / bottleneck (d's 2 downlinks; bytes d received less headers and resent packets) | $(fig rxe neck_goodput) | $(fig stellar-nocc neck_goodput) | $(fig stellar neck_goodput) | >= 0.90 | $(met_share "$(fig stellar neck_goodput)" 0.9) |"
		echo "| bytes d's downlinks delivered / their rate | $(fig rxe neck_use) | $(fig stellar-nocc neck_use) | $(fig stellar neck_use) | | |"
		echo "| sum of the ib_write_bw averages / bottleneck (perftest's clock) | $rg | $ng | $sg | | |"
		echo "| Jain fairness of the 3 senders (bytes d's QPs received, goodput window) | — | $(fig stellar-nocc jain_rx) | $(fig stellar jain_rx) | >= 0.95 | $(met "$(fig stellar jain_rx)" '>=' 0.95) |"
		echo "| Jain fairness of the 3 ib_write_bw averages | $rj | $nj | $sj | | |"
		echo "| ping a -> d unloaded p50 / p99, ms | $(fig rxe rtt_idle_p50) / $(fig rxe rtt_idle_p99) | $(fig stellar-nocc rtt_idle_p50) / $(fig stellar-nocc rtt_idle_p99) | $(fig stellar rtt_idle_p50) / $(fig stellar rtt_idle_p99) | | |"
		echo "| ping a -> d under incast p50 / p99, ms | $(fig rxe rtt_load_p50) / $(fig rxe rtt_load_p99) | $(fig stellar-nocc rtt_load_p50) / $(fig stellar-nocc rtt_load_p99) | $(fig stellar rtt_load_p50) / $(fig stellar rtt_load_p99) | | |"
		echo "| p99 under incast / unloaded p50 | $rp | $np | $sp | <= 3 | $(met "$sp" '<=' 3) |"
		echo "| every ib_write_bw exited 0 (no QP error, no failed TCP exchange) | $rq | $nq | $sq | yes | $([ "$sq" = yes ] && echo yes || echo no) |"
		echo "| many-to-many: sum of the 12 flows, MiB/s | $(fig rxe m2m_bw) | $(fig stellar-nocc m2m_bw) | $(fig stellar m2m_bw) | | |"
		echo "| all 12 flows / bisection (same-leaf flows do not cross it) | $rm | $nm | $sm | | |"
		echo "| cross-leaf bytes on the leaf-spine links / bisection (port counters) | $(fig rxe m2m_cross_use) | $(fig stellar-nocc m2m_cross_use) | $(fig stellar m2m_cross_use) | >= 0.80 | $(met_share "$(fig stellar m2m_cross_use)" 0.8) |"
		echo "| cross-leaf flows / bisection (perftest's averages) | $rx | $nx | $sx | | |"
		echo "| every many-to-many ib_write_bw exited 0 | $(fig rxe m2m_ok) | $(fig stellar-nocc m2m_ok) | $(fig stellar m2m_ok) | yes | $([ "$(fig stellar m2m_ok)" = yes ] && echo yes || echo no) |"
		echo "| CNPs d sent / rate cuts of a, b, c | | $(fig stellar-nocc cnp_sent) / $(fig stellar-nocc cc_rate_cuts) | $(fig stellar cnp_sent) / $(fig stellar cc_rate_cuts) | | |"
		echo "| router VM's CPU busy, incast / many-to-many window, % | $(fig rxe incast_router_busy) / $(fig rxe m2m_router_busy) | $(fig stellar-nocc incast_router_busy) / $(fig stellar-nocc m2m_router_busy) | $(fig stellar incast_router_busy) / $(fig stellar m2m_router_busy) | | |"
		echo
		echo "a and c sit on leaf1, b and d on leaf2.  Many-to-many: every"
		echo "host writes to the three others at once; the bisection is the"
		echo "two leaf-spine-leaf ways between the leaves, both directions;"
		echo "the fabric's port counters give what its four leaf-spine links"
		echo "carried towards the spines (data and acknowledgements)."
		echo "Goodput: the bytes d's two uplinks received while all"
		echo "three wrote (d's NIC counters and clock, from the 5th second to"
		echo "1 s before the end), less 58 header bytes per packet and the"
		echo "share of packets d counted as duplicates, over the downlinks'"
		echo "rate.  Jain fairness: of the bytes each of d's three QPs"
		echo "received in the same window (rx_bytes in /proc/stellar; rdma_rxe"
		echo "has no per-QP counters), and of the three ib_write_bw averages"
		echo "(perftest's rate can be off under TCG, where its cycles-per-second"
		echo "estimate is wrong; the NIC counters cannot).  RTT: ICMP ping"
		echo "from a to d, sent ECN-capable so that it takes the RoCE queues"
		echo "(tests/vm/fabric-port.sh), every 0.2 s.  Router"
		echo "busy: the share of the router VM's CPU (the fabric's switches)"
		echo "in use in the window; near 100 the switches forward as fast as"
		echo "the emulation lets them, not at the ports' rates.  Under TCG the"
		echo "figures compare with each other, not with hardware; the fabric's"
		echo "queues (RED limit 400 KB) hold up to 160 ms at 20 Mbit/s.  RED"
		echo "marks ECN-capable packets and drops the others (rdma_rxe's);"
		echo "TCP's SYNs and pure ACKs go to a queue of their own, served"
		echo "first; a failed exit is explained in the guest logs."
		echo "DCQCN runs with cc_max_rate at the host's two uplinks"
		echo "(Documentation/congestion.rst)$(cc_params_note)."
	} >"$OUT"
}

main() {
	ORIG_ARGS="$*"
	parse_args "$@"
	[ "$(id -u)" = 0 ] || die "run as root (the VMs share the host's / over 9p)"
	[ -f "$REPO/kernel/virtio_stellar.ko" ] || die "kernel/virtio_stellar.ko not built: run make"
	command -v ib_write_bw >/dev/null || die "perftest is not installed"
	if [ -z "$FROM" ]; then
		RESULTS=$REPO/tests/vm/.build/results/fabric-bench-$(date +%Y%m%d-%H%M%S)
		mkdir -p "$RESULTS"
		STELLAR_FABRIC_RATE=$RATE STELLAR_FABRIC_RED=$RED \
			"$REPO/tests/vm/run-vm.sh" \
			--results "$RESULTS" "$BENCH_DIR/fabric-guest.sh" \
			"${GUEST_ARGS[@]}" ||
			echo "bench/fabric: the guest run failed; writing what it measured"
	else
		RESULTS=$FROM
	fi
	TSV=$(last_attempt "$RESULTS" fabric-guest)/vm-d/bench.tsv
	[ -s "$TSV" ] || die "no measurements in $TSV"
	write_report
	echo "bench/fabric: wrote $OUT"
	cat "$OUT"
}

main "$@"
