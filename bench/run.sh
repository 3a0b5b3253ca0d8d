#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Benchmark: two QEMU VMs joined by one link (the integration tests'
# topology) measure, in one run, the raw link (iperf3 TCP and UDP),
# rdma_rxe, stellar with the syscall doorbell and stellar with the
# doorbell poller: ib_write_bw, ib_read_bw, ib_send_bw with 64 KB
# messages and ib_write_lat, ib_send_lat with 8 bytes; then the latency
# telemetry's cost: ib_write_bw and ib_write_lat with it on and off, in
# alternating rounds.  Writes markdown tables with ratios to
# bench/results/latest.md (or --out FILE).  --telemetry-local measures
# only the telemetry's cost, in one VM with one vCPU whose two stellar
# devices talk over a veth pair (bench/telemetry-guest.sh): there the
# CPU is the only limit, and no socket link between QEMU processes adds
# its run-to-run variation.  With --icount SHIFT that VM counts time by
# the instructions it executes (qemu -icount shift=SHIFT,sleep=off: one
# instruction is 2^SHIFT ns), so that its figures measure what the
# telemetry adds to the CPU's work and not how busy the host is.
# --loss RATES measures loss recovery instead, on the same two VMs:
# netem drops RATES percent (e.g. "0 1 5") of each VM's packets on the
# link; ib_write_bw and ib_send_bw of rdma_rxe, of stellar with go-back-N
# (wire_ext=0), with selective recovery (wire_ext_all=1) and with selective
# recovery spraying over --loss-spray paths of the one link (default 8,
# 0 for none), the stellar modes alternating for --loss-rounds rounds
# (default 2).  Its table goes to bench/results/loss-latest.md.  --mtu
# sets the two VMs' link MTU (default 1500; the UDP datagrams of the
# link's own measurement fill it).
#
#   bench/run.sh [--quick] [--poll-interval USEC] [--telemetry-rounds N]
#                [--telemetry-only | --telemetry-local [--icount SHIFT]]
#                [--loss RATES [--loss-rounds N] [--loss-spray N]]
#                [--mtu N] [--rounds N] [--out FILE]
#
# --rounds N boots the two VMs N times and runs everything in each (the
# RDMA configs' order reversed every other round); the tables then give
# each figure's median and a further table every round's figures, since
# under TCG one run of a test can differ from the next by a factor of two
# or more, and a link that stops carrying frames spoils one boot only.
#
# Run as root on the build host after "make"; installs iperf3 with
# apt-get if it is missing.  Knobs of the VM harness apply
# (STELLAR_VM_SMP, STELLAR_VM_MEM, STELLAR_VM_ACCEL, ...).

set -euo pipefail

BENCH_DIR=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
REPO=$(dirname "$BENCH_DIR")
BENCH_NAME=bench
# shellcheck source=bench/host-lib.sh
. "$BENCH_DIR/host-lib.sh"
OUT=$BENCH_DIR/results/latest.md
GUEST_ARGS=()
POLL_INTERVAL=50
TELEMETRY_ROUNDS=3
TELEMETRY_ONLY=0
TELEMETRY_LOCAL=0
ICOUNT_SHIFT=''
GUEST=guest
LOSS_RATES=''
LOSS_ROUNDS=2
LOSS_SPRAY=8
LINK_MTU=1500
ROUNDS=1
OUT_SET=0

usage() {
	sed -n '29,37p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
}

parse_args() {
	while [ $# -gt 0 ]; do
		case "$1" in
		--quick) GUEST_ARGS+=(--quick) ;;
		--poll-interval)
			[ $# -ge 2 ] || usage
			POLL_INTERVAL=$2
			shift
			;;
		--telemetry-rounds)
			[ $# -ge 2 ] || usage
			[[ "$2" =~ ^[0-9]+$ ]] ||
				die "--telemetry-rounds needs a number of rounds"
			TELEMETRY_ROUNDS=$2
			GUEST_ARGS+=(--telemetry-rounds "$2")
			shift
			;;
		--telemetry-only)
			TELEMETRY_ONLY=1
			GUEST_ARGS+=(--telemetry-only)
			;;
		--telemetry-local)
			TELEMETRY_LOCAL=1
			GUEST=telemetry-guest
			;;
		--icount)
			[ $# -ge 2 ] || usage
			[[ "$2" =~ ^[0-9]$ ]] || die "--icount needs a shift of 0 to 9"
			ICOUNT_SHIFT=$2
			shift
			;;
		--loss)
			[ $# -ge 2 ] || usage
			[[ "$2" =~ ^[0-9]+(\.[0-9]+)?( [0-9]+(\.[0-9]+)?)*$ ]] ||
				die "--loss needs loss rates in percent, e.g. \"0 1 5\""
			LOSS_RATES=$2
			shift
			;;
		--loss-rounds)
			[ $# -ge 2 ] || usage
			[[ "$2" =~ ^[1-9][0-9]*$ ]] ||
				die "--loss-rounds needs a positive number of rounds"
			LOSS_ROUNDS=$2
			shift
			;;
		--loss-spray)
			[ $# -ge 2 ] || usage
			[[ "$2" =~ ^[0-9]+$ ]] && [ "$2" -le 64 ] ||
				die "--loss-spray needs 0 to 64 paths"
			LOSS_SPRAY=$2
			shift
			;;
		--mtu)
			[ $# -ge 2 ] || usage
			[[ "$2" =~ ^[0-9]+$ ]] && [ "$2" -ge 1280 ] &&
				[ "$2" -le 9000 ] || die "--mtu needs 1280 to 9000"
			LINK_MTU=$2
			shift
			;;
		--rounds)
			[ $# -ge 2 ] || usage
			[[ "$2" =~ ^[1-9][0-9]*$ ]] ||
				die "--rounds needs a positive number of rounds"
			ROUNDS=$2
			shift
			;;
		--out)
			[ $# -ge 2 ] || usage
			OUT=$2
			OUT_SET=1
			shift
			;;
		-h | --help) usage ;;
		*) echo "bench: unknown argument '$1'" >&2; usage ;;
		esac
		shift
	done
	if [ -n "$LOSS_RATES" ]; then
		[ "$TELEMETRY_ONLY" = 0 ] && [ "$TELEMETRY_LOCAL" = 0 ] ||
			die "--loss excludes the telemetry modes"
		[ "$OUT_SET" = 1 ] || OUT=$BENCH_DIR/results/loss-latest.md
		# The guests switch stellar0's spray paths with stellar-tool.
		BENCH_NEEDS_TOOL=1
		GUEST_ARGS+=(--loss "$LOSS_RATES" --loss-rounds "$LOSS_ROUNDS"
			--loss-spray "$LOSS_SPRAY" --mtu "$LINK_MTU")
		return
	fi
	case "$POLL_INTERVAL" in
	'' | *[!0-9]* | 0) die "--poll-interval needs a positive number of microseconds" ;;
	esac
	if [ "$TELEMETRY_LOCAL" = 1 ]; then
		[ "$TELEMETRY_ONLY" = 0 ] ||
			die "--telemetry-only and --telemetry-local exclude each other"
		[ "$TELEMETRY_ROUNDS" -gt 0 ] || die "--telemetry-local needs rounds"
		[ "$LINK_MTU" = 1500 ] ||
			die "--mtu needs the two VMs' link, not --telemetry-local"
		# The same number of rounds on both sides (the guest's default
		# is 7, the host's 3).
		GUEST_ARGS+=(--telemetry-rounds "$TELEMETRY_ROUNDS")
		if [ -n "$ICOUNT_SHIFT" ]; then
			export STELLAR_VM_ICOUNT="shift=$ICOUNT_SHIFT,sleep=off"
		fi
		return
	fi
	# Two VMs on a socket link keep their clocks apart under -icount.
	[ -z "$ICOUNT_SHIFT" ] || die "--icount goes with --telemetry-local only"
	GUEST_ARGS+=(--poll-interval "$POLL_INTERVAL" --mtu "$LINK_MTU")
}

# ratio A B: A/B with two decimals, "—" unless both are numbers.
ratio() {
	if is_number "$1" && is_number "$2" && [ "$2" != 0 ]; then
		awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'
	else
		echo "—"
	fi
}

# mib_per_s BITS_PER_S
mib_per_s() {
	if is_number "$1"; then
		awk -v b="$1" 'BEGIN { printf "%.1f", b / 8 / 1048576 }'
	else
		echo "$1"
	fi
}

gbit_per_s() {
	if is_number "$1"; then
		awk -v b="$1" 'BEGIN { printf "%.3f", b / 1e9 }'
	else
		echo "$1"
	fi
}

link_table() {
	local tcp udp

	tcp=$(value link iperf3_tcp)
	udp=$(value link iperf3_udp)
	echo "| Link (iperf3) | Gbit/s | MiB/s |"
	echo "|---|---:|---:|"
	echo "| TCP | $(gbit_per_s "$tcp") | $(mib_per_s "$tcp") |"
	echo "| UDP, $((LINK_MTU - 28))-byte datagrams, received | $(gbit_per_s "$udp") | $(mib_per_s "$udp") |"
	LINK_UDP_MIB=$(mib_per_s "$udp")
}

# perf_row TEST LABEL: one row of the RDMA table.
perf_row() {
	local test=$1 label=$2 rxe sys poll link_ratio='—'

	rxe=$(value rxe "$test")
	sys=$(value stellar_syscall "$test")
	poll=$(value stellar_poll "$test")
	case "$test" in
	*_bw) link_ratio=$(ratio "$sys" "$LINK_UDP_MIB") ;;
	esac
	echo "| $label | $rxe | $sys | $poll | $(ratio "$sys" "$rxe") | $link_ratio | $(ratio "$poll" "$sys") |"
}

# cpu_row TEST LABEL: CPU seconds per GB of one bandwidth test.
cpu_row() {
	local test=cpu_$1 label=$2 rxe sys poll

	rxe=$(value rxe "$test")
	sys=$(value stellar_syscall "$test")
	poll=$(value stellar_poll "$test")
	echo "| $label | $rxe | $sys | $poll | $(ratio "$sys" "$rxe") |"
}

cpu_table() {
	echo "CPU cost: guest CPU seconds (user, system, irq, softirq; both VMs"
	echo "together, from /proc/stat) per GB moved, lower is better:"
	echo
	echo "| Test | rdma_rxe | stellar, syscall doorbell | stellar, poller ${POLL_INTERVAL} µs | stellar/rxe |"
	echo "|---|---:|---:|---:|---:|"
	cpu_row write_bw "ib_write_bw 64 KB"
	cpu_row read_bw "ib_read_bw 64 KB"
	cpu_row send_bw "ib_send_bw 64 KB"
}

# event_table: ib_read_bw and ib_send_bw with perftest sleeping on
# completion events, and their CPU cost.
event_table() {
	echo "ib_read_bw and ib_send_bw again with perftest sleeping on completion"
	echo "events (\`-e\`, which perftest does not offer for ib_write_bw)"
	echo "instead of polling, four times as many iterations: a VM's busy time is"
	echo "then the transport's work, so CPU s/GB compares the drivers (the CPU"
	echo "time of a 10-iteration run just before is subtracted: perftest's start,"
	echo "connection and clock calibration):"
	echo
	echo "| Test | rdma_rxe | stellar, syscall doorbell | stellar, poller ${POLL_INTERVAL} µs | stellar/rxe | stellar/link UDP | poller/syscall |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
	perf_row ev_read_bw "ib_read_bw -e 64 KB, MiB/s"
	perf_row ev_send_bw "ib_send_bw -e 64 KB, MiB/s"
	echo
	echo "| CPU s/GB, both VMs | rdma_rxe | stellar, syscall doorbell | stellar, poller ${POLL_INTERVAL} µs | stellar/rxe |"
	echo "|---|---:|---:|---:|---:|"
	cpu_row ev_read_bw "ib_read_bw -e 64 KB"
	cpu_row ev_send_bw "ib_send_bw -e 64 KB"
	echo
	split_table
}

# split_row TEST VM LABEL: where VM's CPU time went in TEST, every
# round's figures.
split_row() {
	local test=split_$2_$1 label=$3 config
	local -a cells=()

	for config in rxe stellar_syscall stellar_poll; do
		cells+=("$(awk -F '\t' -v c="$config" -v t="$test" \
			'$1 == c && $2 == t { printf "%s%s", sep, $3; sep = "; " }
			END { if (sep == "") printf "missing" }' "$TSV")")
	done
	echo "| $label | ${cells[0]} | ${cells[1]} | ${cells[2]} |"
}

# split_table: each VM's share of the -e runs' CPU time.
split_table() {
	echo "Each VM's part of that CPU time: user / system / softirq seconds"
	echo "per GB, then context switches per MiB moved (the short run before"
	echo "subtracted, as above; every round's figures, round 1 first).  VM a"
	echo "serves: it responds to READs and receives SENDs; VM b runs the"
	echo "client, which sleeps on completion events:"
	echo
	echo "| VM, test | rdma_rxe | stellar, syscall doorbell | stellar, poller ${POLL_INTERVAL} µs |"
	echo "|---|---|---|---|"
	split_row ev_read_bw a "a, ib_read_bw -e (responder)"
	split_row ev_read_bw b "b, ib_read_bw -e (requester)"
	split_row ev_send_bw a "a, ib_send_bw -e (receiver)"
	split_row ev_send_bw b "b, ib_send_bw -e (sender)"
}

# runs_row TEST LABEL: every round's figures of one test.
runs_row() {
	local test=$1 label=$2 config
	local -a cells=()

	for config in rxe stellar_syscall stellar_poll; do
		cells+=("$(awk -F '\t' -v c="$config" -v t="$test" \
			'$1 == c && $2 == t { printf "%s%s", sep, $3; sep = " " }' \
			"$TSV")")
	done
	echo "| $label | ${cells[0]} | ${cells[1]} | ${cells[2]} |"
}

# runs_table: every round's figures, when there were several rounds.
runs_table() {
	[ "$ROUNDS" -gt 1 ] || return 0
	echo
	echo "The tables give the median of $ROUNDS rounds, each a boot of its"
	echo "own (the order of the three configs reversed every other round);"
	echo "every round's figures, round 1 first:"
	echo
	echo "| Test | rdma_rxe | stellar, syscall doorbell | stellar, poller ${POLL_INTERVAL} µs |"
	echo "|---|---|---|---|"
	runs_row write_bw "ib_write_bw 64 KB, MiB/s"
	runs_row read_bw "ib_read_bw 64 KB, MiB/s"
	runs_row send_bw "ib_send_bw 64 KB, MiB/s"
	runs_row write_lat "ib_write_lat 8 B, µs"
	runs_row send_lat "ib_send_lat 8 B, µs"
	runs_row ev_read_bw "ib_read_bw -e 64 KB, MiB/s"
	runs_row ev_send_bw "ib_send_bw -e 64 KB, MiB/s"
	runs_row cpu_ev_read_bw "ib_read_bw -e 64 KB, CPU s/GB"
	runs_row cpu_ev_send_bw "ib_send_bw -e 64 KB, CPU s/GB"
}

rdma_table() {
	echo "| Test | rdma_rxe | stellar, syscall doorbell | stellar, poller ${POLL_INTERVAL} µs | stellar/rxe | stellar/link UDP | poller/syscall |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
	perf_row write_bw "ib_write_bw 64 KB, MiB/s"
	perf_row read_bw "ib_read_bw 64 KB, MiB/s"
	perf_row send_bw "ib_send_bw 64 KB, MiB/s"
	perf_row write_lat "ib_write_lat 8 B, µs (median)"
	perf_row send_lat "ib_send_lat 8 B, µs (median)"
}

# numbers VALUE...: the VALUEs that are numbers, one per line (a filter
# that succeeds without any, unlike grep under pipefail).
numbers() {
	printf '%s\n' "$@" | awk '/^[0-9]+([.][0-9]+)?$/'
}

# median VALUE...: the median of the numbers among VALUEs, "—" if none.
median() {
	numbers "$@" | sort -g |
		awk '{ v[NR] = $1 }
		END {
			if (!NR) { print "—"; exit }
			if (NR % 2) print v[(NR + 1) / 2]
			else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2
		}'
}

# spread VALUE...: the largest of the numbers among VALUEs divided by
# the smallest, three decimals; "—" if there are none.
spread() {
	numbers "$@" | sort -g |
		awk 'NR == 1 { min = $1 } { max = $1 }
		END {
			if (!NR || min <= 0) print "—"
			else printf "%.3f\n", max / min
		}'
}

# ratio3 A B: A/B with three decimals, "—" unless both are numbers.
ratio3() {
	if is_number "$1" && is_number "$2" && [ "$2" != 0 ]; then
		awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'
	else
		echo "—"
	fi
}

# telemetry_row TEST LABEL: the runs with the telemetry on and off, and
# how far apart the runs of each setting are (largest / smallest).
telemetry_row() {
	local test=$1 label=$2 round on=() off=() m_on m_off

	for round in $(seq "$TELEMETRY_ROUNDS"); do
		on+=("$(value "tel_on_$round" "$test")")
		off+=("$(value "tel_off_$round" "$test")")
	done
	m_on=$(median "${on[@]}")
	m_off=$(median "${off[@]}")
	echo "| $label | ${on[*]} | ${off[*]} | $m_on | $m_off | $(ratio3 "$m_on" "$m_off") | $(spread "${on[@]}") / $(spread "${off[@]}") |"
}

telemetry_table() {
	[ "$TELEMETRY_ROUNDS" -gt 0 ] || return 0
	echo "Latency telemetry's cost (stellar, syscall doorbell; $TELEMETRY_ROUNDS"
	echo "rounds, on and off alternating in each):"
	echo
	echo "| Test | telemetry on, per round | off, per round | median on | median off | on/off | spread on / off |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
	telemetry_row write_bw "ib_write_bw 64 KB, MiB/s"
	telemetry_row write_lat "ib_write_lat 8 B, µs (median)"
	echo
	echo "The goal (issue 12): on/off at least 0.98 for bandwidth and at most"
	echo "1.02 for latency.  Compare it with the spread of the rounds (largest"
	echo "over smallest of one setting): under TCG, runs of the same setting"
	echo "over the socket link differ by more than that."
}

telemetry_local_table() {
	echo "Latency telemetry's cost where the CPU is the only limit: one VM,"
	echo "one vCPU (server and client share it), stellar0 and stellar1"
	echo "joined by a veth pair, no socket link; $TELEMETRY_ROUNDS"
	echo "rounds, off and on alternating in each:"
	echo
	echo "| Test | telemetry on, per round | off, per round | median on | median off | on/off | spread on / off |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
	telemetry_row write_bw "ib_write_bw 64 KB, MiB/s"
	telemetry_row cpu_write_bw "ib_write_bw 64 KB, guest CPU s/GB"
	telemetry_row send_lat_ev "ib_send_lat -e 8 B, µs (median)"
	echo
	if [ -n "$ICOUNT_SHIFT" ]; then
		echo "The guest's clock counts instructions (qemu -icount"
		echo "shift=$ICOUNT_SHIFT,sleep=off): a second is 10^9 / 2^$ICOUNT_SHIFT guest instructions"
		echo "whatever the host does, so the figures are the guest CPU's work."
		echo
	fi
	echo "The goal (issue 12): on/off at least 0.98 for bandwidth, at most"
	echo "1.02 for CPU per GB and for latency.  The judgement holds where the"
	echo "spread of each setting's rounds is small against 2%."
}

# mean VALUE...: the mean of the numbers among VALUEs, "—" if none.
mean() {
	numbers "$@" |
		awk '{ s += $1 } END { if (NR) printf "%.2f\n", s / NR; else print "—" }'
}

# loss_runs MODE RATE TEST: the rounds' figures of TEST for one stellar
# mode (gbn, sel, spray) at one loss rate.
loss_runs() {
	local round

	for round in $(seq "$LOSS_ROUNDS"); do
		value "${1}_l${2}_$round" "$3"
	done
}

# loss_mean MODE RATE TEST: the mean of loss_runs' numbers.
loss_mean() {
	local -a runs

	mapfile -t runs < <(loss_runs "$@")
	mean "${runs[@]}"
}

# loss_ext MODE RATE TEST: yes if every round of MODE ran in extended mode.
loss_ext() {
	local runs

	runs=$(loss_runs "$@")
	if grep -qvx yes <<<"$runs"; then
		echo no
	else
		echo yes
	fi
}

# loss_row TEST RATE: one row of the loss table.
loss_row() {
	local test=$1 rate=$2 rxe m_gbn m_sel m_spray='—' spray='' ext
	local -a gbn sel

	mapfile -t gbn < <(loss_runs gbn "$rate" "$test")
	mapfile -t sel < <(loss_runs sel "$rate" "$test")
	rxe=$(value "rxe_l$rate" "$test")
	m_gbn=$(mean "${gbn[@]}")
	m_sel=$(mean "${sel[@]}")
	ext=$(loss_ext sel "$rate" "ext_$test")
	if [ "$LOSS_SPRAY" -gt 1 ]; then
		m_spray=$(loss_mean spray "$rate" "$test")
		spray=" $(ratio "$m_spray" "$m_sel") |"
		ext="$ext / $(loss_ext spray "$rate" "ext_$test")"
	fi
	echo "| ib_$test | $rate% | $rxe | ${gbn[*]} | ${sel[*]} | $(ratio "$m_sel" "$m_gbn") | $(ratio "$m_sel" "$rxe") |$spray $(loss_mean gbn "$rate" "resent_$test") / $(loss_mean sel "$rate" "resent_$test") | $ext |"
}

loss_table() {
	local test rate spray='' line='|---|---:|---:|---:|---:|---:|---:|'

	if [ "$LOSS_SPRAY" -gt 1 ]; then
		spray=" $LOSS_SPRAY paths (mean) / selective on one |"
		line="$line---:|"
	fi
	echo "| Test (64 KB) | Loss | rdma_rxe, MiB/s | stellar go-back-N, MiB/s per round | stellar selective, MiB/s per round | selective / go-back-N (means) | selective / rxe |$spray resent per 1000 sent, go-back-N / selective | extended mode seen (selective$([ "$LOSS_SPRAY" -le 1 ] || echo " / sprayed")) |"
	echo "$line---:|---|"
	for test in write_bw send_bw; do
		for rate in $LOSS_RATES; do
			loss_row "$test" "$rate"
		done
	done
}

write_loss_report() {
	echo "Link MTU $LINK_MTU (RoCE path MTU: the largest of 1024/2048/4096"
	echo "it holds); netem drops the loss rate of each VM's packets on the"
	echo "link, both directions (data and acknowledgements).  Go-back-N:"
	echo "wire_ext=0 on both ends (standard RoCEv2 recovery); selective:"
	echo "wire_ext_all=1, the wire extensions with selective ACKs and resends"
	echo "on one path.  The stellar modes alternate in each round, on the"
	echo "same boot.  rdma_rxe ran once per rate, before them."
	if [ "$LOSS_SPRAY" -gt 1 ]; then
		echo "Sprayed: selective recovery over $LOSS_SPRAY UDP source ports"
		echo "of the one link."
	fi
	echo "Resent: stellar's retransmits over its"
	echo "tx_packets on the sending VM.  Figures under TCG emulation are"
	echo "comparable with each other, not with hardware."
	echo
	loss_table
}

# The guests' kernel, chosen as tests/vm/common.sh does.
guest_kernel() {
	if [ -n "${STELLAR_KVER:-}" ]; then
		echo "$STELLAR_KVER"
	else
		find /boot -maxdepth 1 -name 'vmlinuz-6.1.*-amd64' |
			sed 's|.*/vmlinuz-||' | sort -V | tail -n 1
	fi
}

write_report() {
	mkdir -p "$(dirname "$OUT")"
	{
		echo "# virtio-stellar benchmark"
		echo
		echo "Command: \`bench/run.sh${ORIG_ARGS:+ $ORIG_ARGS}\`  "
		echo "Date: $(date -u '+%Y-%m-%d %H:%M UTC')  "
		echo "Commit: $(git -C "$REPO" describe --always --dirty 2>/dev/null || echo unknown)  "
		if [ "$TELEMETRY_LOCAL" = 1 ]; then
			echo "Host: $(nproc) CPUs, $(uname -r); guest: kernel $(guest_kernel), accel ${STELLAR_VM_ACCEL:-tcg}${STELLAR_VM_ICOUNT:+ -icount $STELLAR_VM_ICOUNT}, one VM, 1 vCPU, ${STELLAR_VM_MEM:-1024} MB, a veth pair (MTU 1500)  "
		else
			echo "Host: $(nproc) CPUs, $(uname -r); guests: kernel $(guest_kernel), accel ${STELLAR_VM_ACCEL:-tcg}, ${STELLAR_VM_SMP:-1} vCPU, ${STELLAR_VM_MEM:-1024} MB each, one qemu socket link (MTU $LINK_MTU), memory debugging $( [ "${STELLAR_MEMDEBUG:-0}" = 1 ] && echo on || echo off)  "
		fi
		echo "Guest log: \`$GUEST_LOG\`"
		echo
		if [ "$TELEMETRY_ONLY" = 1 ]; then
			telemetry_table
			return
		fi
		if [ "$TELEMETRY_LOCAL" = 1 ]; then
			telemetry_local_table
			return
		fi
		link_table
		echo
		if [ -n "$LOSS_RATES" ]; then
			write_loss_report
			return
		fi
		rdma_table
		echo
		echo "Bandwidth is the client's average (MiB/s, perftest), latency"
		echo "perftest's t_typical; \"stellar/link UDP\" divides by the UDP figure"
		echo "above; poller/syscall compares the two doorbells (for latency, lower"
		echo "is better).  n/a: the module has no doorbell poller; failed: see"
		echo "the guest log.  Figures under TCG emulation are comparable with"
		echo "each other, not with hardware."
		echo
		cpu_table
		echo
		event_table
		runs_table
		echo
		telemetry_table
	} >"$OUT"
}

# run_round R: one boot of the guests (round R of --rounds); appends
# what VM b (or the one VM) measured to $TSV.
run_round() {
	local results=$RESULTS round_tsv
	local -a args=("${GUEST_ARGS[@]}")

	if [ "$ROUNDS" -gt 1 ]; then
		results=$RESULTS/round-$1
		args+=(--round "$1")
		echo "bench: round $1 of $ROUNDS"
	fi
	mkdir -p "$results"
	"$REPO/tests/vm/run-vm.sh" --results "$results" "$BENCH_DIR/$GUEST.sh" \
		"${args[@]}" ||
		echo "bench: the guest run failed; writing what it measured"
	# The VM that measures: b of two, a when there is one.
	GUEST_LOG=$(last_attempt "$results" "$GUEST")
	round_tsv=$GUEST_LOG/vm-b/bench.tsv
	[ "$TELEMETRY_LOCAL" = 0 ] || round_tsv=$GUEST_LOG/vm-a/bench.tsv
	if [ -s "$round_tsv" ]; then
		cat "$round_tsv" >>"$TSV"
	else
		echo "bench: no measurements in $round_tsv"
	fi
	[ "$ROUNDS" = 1 ] || GUEST_LOG=$RESULTS
}

main() {
	ORIG_ARGS="$*"
	parse_args "$@"
	check_host
	RESULTS=$REPO/tests/vm/.build/results/bench-$(date +%Y%m%d-%H%M%S)
	mkdir -p "$RESULTS"
	[ "$ROUNDS" = 1 ] || [ "$GUEST" = guest ] ||
		die "--rounds goes with the data path runs only"
	TSV=$RESULTS/bench.tsv
	: >"$TSV"
	for round in $(seq "$ROUNDS"); do
		run_round "$round"
	done
	[ -s "$TSV" ] || die "no measurements in $RESULTS"
	write_report
	echo "bench: wrote $OUT"
	cat "$OUT"
}

main "$@"
