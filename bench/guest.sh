#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# The benchmark's guest side, run by bench/run.sh in two VMs (a serves,
# b measures) joined by one link.  One after the other on the same link:
# iperf3 TCP and UDP, rdma_rxe, stellar with the syscall doorbell,
# stellar with the doorbell poller, and the latency telemetry's cost
# (stellar with the syscall doorbell, ib_write_bw and ib_write_lat with
# latency_telemetry on and off, alternating, for a number of rounds).
# VM b writes one line per figure to
# $STELLAR_OUT/bench.tsv:  CONFIG<TAB>TEST<TAB>VALUE<TAB>DETAIL
# with VALUE a number, "n/a" (not available) or "failed".
#
# With --loss RATES, only loss recovery instead: the link, then, with
# netem dropping each of the RATES (percent, space-separated; 0 for
# none) of every VM's packets on the link, ib_write_bw and ib_send_bw for
# rdma_rxe and for stellar with go-back-N (wire_ext=0 on both ends), with
# selective recovery (wire_ext_all=1) and, with --loss-spray N, selective
# recovery spraying over N paths of the one link, the stellar modes
# alternating for --loss-rounds rounds.  --mtu sets the link's MTU
# first, in every mode.
#
# --round R is the round of bench/run.sh --rounds this boot runs: an
# even one runs the RDMA configs in the reverse order (poller, syscall,
# rdma_rxe), so that a drift of the host's speed falls on all of them.
# A test whose VMs cannot ping each other first is recorded as failed
# at once: a QEMU socket link that stopped carrying frames (seen under
# TCG) would otherwise cost every later test its full timeout.
#
# Arguments: [--quick] [--poll-interval USEC] [--telemetry-rounds N]
#            [--telemetry-only] [--round R]
#            [--loss RATES [--loss-rounds N] [--loss-spray N]] [--mtu N]
# stellar-test: vms=2 links=1 timeout=3000 memdebug=off

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../tests/vm/lib.sh"

BW_ITERS=500
BASE_ITERS=10
LAT_ITERS=2000
IPERF_SECONDS=5
POLL_INTERVAL=50
TELEMETRY_ROUNDS=3
TELEMETRY_ONLY=0
LOSS_RATES=''
LOSS_ROUNDS=2
LOSS_SPRAY=0
LINK_MTU=''
ROUND=1
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) BW_ITERS=100; LAT_ITERS=300; IPERF_SECONDS=2 ;;
	--poll-interval) POLL_INTERVAL=$2; shift ;;
	--telemetry-rounds) TELEMETRY_ROUNDS=$2; shift ;;
	--telemetry-only) TELEMETRY_ONLY=1 ;;
	--loss) LOSS_RATES=$2; shift ;;
	--loss-rounds) LOSS_ROUNDS=$2; shift ;;
	--loss-spray) LOSS_SPRAY=$2; shift ;;
	--mtu) LINK_MTU=$2; shift ;;
	--round) ROUND=$2; shift ;;
	*) fail "bench/guest.sh: unknown argument '$1'" ;;
	esac
	shift
done

TSV=$STELLAR_OUT/bench.tsv
PORT=19000
: >"$TSV"

# record CONFIG TEST VALUE [DETAIL]: one figure (VM b only).
record() {
	[ "$STELLAR_ROLE" = b ] || return 0
	printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${4:-}" >>"$TSV"
}

next_port() {
	PORT=$((PORT + 1))
}

# measured CMD...: run CMD in a subshell, so that a failing measurement
# ends only itself (both VMs still pass the same barriers); its exit
# code goes to MEASURED_RC.  Not for use in a condition: there "set -e"
# would not apply inside CMD.
measured() {
	MEASURED_RC=0
	("$@") &
	wait $! || MEASURED_RC=$?
}

# --- the link ------------------------------------------------------------

# iperf3_bps LOG: received bits per second from an iperf3 -J log.
iperf3_bps() {
	python3 -c '
import json, sys
text = open(sys.argv[1]).read()  # warnings may precede the JSON
end = json.loads(text[text.index("{"):])["end"]
s = end.get("sum_received") or end["sum"]
bps = s["bits_per_second"]
if "sum_received" not in end and "lost_percent" in s:
    bps *= 1 - s["lost_percent"] / 100
print("%.0f" % bps)' "$1"
}

# iperf3_run NAME ARGS...: iperf3 server on a, client on b with ARGS.
# shellcheck disable=SC2034 # srv and cli are used by name in pair_run
iperf3_run() {
	local name=$1 srv cli

	shift
	srv=(iperf3 -s -1 -p "$PORT")
	cli=(iperf3 -c "$(peer_ip 1)" -p "$PORT" -t "$IPERF_SECONDS" -J "$@")
	pair_run "$name" a "tcp:$PORT" $((IPERF_SECONDS + 60)) srv cli
}

# bench_link: record link TCP and UDP in bits per second; the UDP
# datagrams fill the link's MTU.
bench_link() {
	local proto value
	local -a args

	if ! command -v iperf3 >/dev/null; then
		record link iperf3_tcp failed "iperf3 not installed"
		record link iperf3_udp failed "iperf3 not installed"
		return 0
	fi
	for proto in tcp udp; do
		next_port
		args=()
		[ "$proto" = udp ] &&
			args=(-u -b 0 -l $((${LINK_MTU:-1500} - 28)))
		measured iperf3_run "iperf3_$proto" "${args[@]}"
		value=failed
		if [ "$MEASURED_RC" = 0 ] && [ "$STELLAR_ROLE" = b ]; then
			value=$(iperf3_bps "$STELLAR_OUT/iperf3_$proto.log") ||
				value=failed
		fi
		record link "iperf3_$proto" "$value" bits/s
		log "link iperf3 $proto: $value bits/s"
	done
}

# --- RDMA ----------------------------------------------------------------

# cpu_busy: jiffies (USER_HZ) this VM's CPUs spent busy: user, nice,
# system, irq and softirq time from /proc/stat.
cpu_busy() {
	awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat
}

# record_cpu CONFIG TEST NAME BUSY BYTES: CPU seconds per GB moved, both
# VMs' busy time (this one's BUSY jiffies and the peer's) over BYTES, or
# "failed" when the run failed.  Both VMs call it after every run.
record_cpu() {
	local config=$1 test=$2 name=$3 busy=$4 bytes=$5 peer hz

	put_val "$name.cpu" "$busy"
	peer=$(get_val "$name.cpu")
	if [ "$MEASURED_RC" != 0 ]; then
		record "$config" "cpu_$test" failed s/GB
		return
	fi
	hz=$(getconf CLK_TCK)
	record "$config" "cpu_$test" "$(awk -v a="$busy" -v b="$peer" \
		-v hz="$hz" -v n="$bytes" \
		'BEGIN { printf "%.2f", (a + b) / hz / (n / 1e9) }')" s/GB
}

# cpu_detail: this VM's user, system (with irq) and softirq jiffies and
# its context switches so far, from /proc/stat, on one line.
cpu_detail() {
	awk '$1 == "cpu" { u = $2 + $3; s = $4 + $7; q = $8 }
		$1 == "ctxt" { c = $2 }
		END { print u, s, q, c }' /proc/stat
}

# split_figures START MIDDLE END BYTES: where this VM's CPU time of a
# tagged run went (cpu_detail lines before the base run, between the
# two runs and after the run; the base run's share is subtracted as in
# perf): user, system and softirq seconds per GB, and context switches
# per MiB.
split_figures() {
	awk -v s="$1" -v m="$2" -v e="$3" -v hz="$(getconf CLK_TCK)" \
		-v n="$4" 'BEGIN {
		split(s, x, " "); split(m, y, " "); split(e, z, " ")
		for (i = 1; i <= 4; i++)
			d[i] = z[i] - 2 * y[i] + x[i]
		gb = n / 1e9
		printf "%.1f/%.1f/%.1f, %.0f\n", d[1] / hz / gb,
			d[2] / hz / gb, d[3] / hz / gb, d[4] / (n / 1048576)
	}'
}

# record_split CONFIG KEY NAME START MIDDLE END BYTES: split_figures of
# both VMs, under split_a_KEY and split_b_KEY: a figure per VM shows
# which side of a transfer pays.  Both VMs call it after the run.
record_split() {
	local config=$1 key=$2 name=$3 mine role value

	mine=failed
	[ "$MEASURED_RC" != 0 ] || mine=$(split_figures "$4" "$5" "$6" "$7")
	put_val "$name.split" "$mine"
	for role in a b; do
		if [ "$role" = "$STELLAR_ROLE" ]; then
			value=$mine
		else
			value=$(get_val "$name.split")
		fi
		record "$config" "split_${role}_$key" "$value" \
			"user/sys/softirq s/GB, ctxt/MiB"
	done
}

# link_alive NAME: both VMs reach each other over the link (a ping
# answered within 5 s); both get the same answer.
link_alive() {
	local mine=yes

	ping -q -c 1 -w 5 "$(peer_ip 1)" >/dev/null 2>&1 || mine=no
	put_val "$1.link" "$mine"
	[ "$mine" = yes ] && [ "$(get_val "$1.link")" = yes ]
}

# perf CONFIG DEV GID TEST SIZE ITERS [TAG ARG...]: one perftest run,
# server on a.  Bandwidth tests also record both VMs' CPU time per GB
# (cpu_TEST).  With TAG, perftest gets the ARGs too, the figures go
# under TAG_TEST (and cpu_TAG_TEST), and the CPU time is that of the
# run less that of a run of BASE_ITERS iterations just before: what
# perftest spends starting, connecting and calibrating its clock is
# not the transport's and would swamp it once perftest sleeps.
perf() {
	local config=$1 dev=$2 gid=$3 test=$4 size=$5 iters=$6 name key
	local column=4 unit=MiB/s value=failed busy tag=${7:-} base=0 rc=0
	local start middle

	shift 6
	[ $# -eq 0 ] || shift
	key=${tag:+${tag}_}$test
	name=${config}_$key
	case "$test" in
	*_lat) column=5 unit=usec ;;
	esac
	if ! link_alive "$name"; then
		record "$config" "$key" failed "the link carried nothing"
		case "$test" in
		*_bw) record "$config" "cpu_$key" failed s/GB ;;
		esac
		log "$config $key: failed, the link carried nothing"
		return 0
	fi
	busy=$(cpu_busy)
	start=$(cpu_detail)
	if [ -n "$tag" ]; then
		next_port
		measured perftest_pair "${name}_base" a "$dev" "$gid" "$PORT" \
			300 "ib_$test" -s "$size" -n "$BASE_ITERS" "$@"
		rc=$MEASURED_RC
		base=$BASE_ITERS
		busy=$((2 * $(cpu_busy) - busy))
	fi
	next_port
	middle=$(cpu_detail)
	measured perftest_pair "$name" a "$dev" "$gid" "$PORT" 300 \
		"ib_$test" -s "$size" -n "$iters" "$@"
	[ "$rc" = 0 ] || MEASURED_RC=$rc
	busy=$(($(cpu_busy) - busy))
	[ -z "$tag" ] ||
		record_split "$config" "$key" "$name" "$start" "$middle" \
			"$(cpu_detail)" $((size * (iters - base)))
	case "$test" in
	*_bw) record_cpu "$config" "$key" "$name" "$busy" \
		$((size * (iters - base))) ;;
	esac
	if [ "$MEASURED_RC" = 0 ]; then
		value=ok
		[ "$STELLAR_ROLE" = a ] ||
			value=$(perftest_value "$STELLAR_OUT/$name.log" "$column") ||
			value=failed
	fi
	record "$config" "$key" "$value" "$unit"
	log "$config $key: $value"
}

# perf_set CONFIG DEV GID: the benchmark's perftest runs; ib_read_bw and
# ib_send_bw once more, four times as long, with perftest sleeping on
# completion events (-e; tag ev), where the CPU time is the transport's
# and not perftest's polling (perftest has no -e for ib_write_bw).
perf_set() {
	local test

	for test in write_bw read_bw send_bw; do
		perf "$1" "$2" "$3" "$test" 65536 "$BW_ITERS"
	done
	for test in write_lat send_lat; do
		perf "$1" "$2" "$3" "$test" 8 "$LAT_ITERS"
	done
	for test in read_bw send_bw; do
		perf "$1" "$2" "$3" "$test" 65536 $((4 * BW_ITERS)) ev -e
	done
}

# perf_na CONFIG DETAIL: the config could not run.
perf_na() {
	local test

	for test in write_bw read_bw send_bw write_lat send_lat ev_read_bw \
		ev_send_bw; do
		record "$1" "$test" n/a "$2"
	done
}

bench_rxe() {
	rxe_up "$(link_dev 1)"
	barrier rxe-up
	perf_set rxe rxe0 "$RXE_GID"
	barrier rxe-done
	rxe_down
}

# poller_running: a stellar doorbell poller thread exists for stellar0.
poller_running() {
	grep -qx 'stellar_db/stel.*' /proc/[0-9]*/comm 2>/dev/null
}

# bench_stellar CONFIG [PARAM=VALUE...]
bench_stellar() {
	local config=$1 mine peers

	shift
	stellar_pair_up "$@"
	mine=yes
	case "$config" in
	*poll*)
		grep -qx "db_poll_interval: $POLL_INTERVAL" \
			/proc/stellar/stellar0/settings && poller_running || mine=no
		;;
	esac
	put_val "$config.ok" "$mine"
	peers=$(get_val "$config.ok")
	if [ "$mine" = yes ] && [ "$peers" = yes ]; then
		perf_set "$config" stellar0 "$STELLAR_GID"
	else
		log "$config: no doorbell poller in this build"
		perf_na "$config" "no doorbell poller"
	fi
	barrier "$config-done"
	rdma link delete stellar0
	stellar_unload
}

# set_telemetry on|off: latency_telemetry on both VMs.
set_telemetry() {
	local value=N

	[ "$1" = on ] && value=Y
	echo "$value" >/sys/module/virtio_stellar/parameters/latency_telemetry
	barrier "telemetry-$1-$2"
}

# bench_telemetry: ib_write_bw and ib_write_lat with the telemetry on and
# off, TELEMETRY_ROUNDS times, the order alternating (on-off, off-on, ...)
# so that a drift of the host's speed falls on both; configs tel_on_R and
# tel_off_R.
bench_telemetry() {
	local round order mode

	[ "$TELEMETRY_ROUNDS" -gt 0 ] || return 0
	stellar_pair_up db_poll_interval=0
	for round in $(seq "$TELEMETRY_ROUNDS"); do
		order="on off"
		[ $((round % 2)) = 0 ] && order="off on"
		for mode in $order; do
			set_telemetry "$mode" "$round"
			perf "tel_${mode}_$round" stellar0 "$STELLAR_GID" write_bw \
				65536 "$BW_ITERS"
			perf "tel_${mode}_$round" stellar0 "$STELLAR_GID" write_lat \
				8 "$LAT_ITERS"
		done
	done
	set_telemetry on end
	rdma link delete stellar0
	stellar_unload
}

# --- loss recovery ---------------------------------------------------------

# set_loss PERCENT: netem drops PERCENT% of this VM's packets on the link
# (no qdisc at 0); both VMs, then a barrier.
set_loss() {
	local dev

	dev=$(link_dev 1)
	tc qdisc del dev "$dev" root 2>/dev/null || true
	[ "$1" = 0 ] || tc qdisc add dev "$dev" root netem loss "$1%"
	barrier "loss-$1-$2"
}

# loss_mode gbn|sel|spray TAG: stellar's recovery on both VMs, for the
# QPs created from now on: go-back-N (wire_ext=0), selective on one path
# (wire_ext=1 wire_ext_all=1), or selective over LOSS_SPRAY paths of the
# link.
loss_mode() {
	local ext=1 paths=1

	case "$1" in
	gbn) ext=0 ;;
	spray) paths=$LOSS_SPRAY ;;
	esac
	echo "$ext" >/sys/module/virtio_stellar/parameters/wire_ext
	echo 1 >/sys/module/virtio_stellar/parameters/wire_ext_all
	"$STELLAR_REPO/tools/stellar-tool" set --device stellar0 \
		--spray-paths "$paths" >/dev/null
	barrier "loss-mode-$2"
}

# dev_stat NAME: device counter NAME of stellar0.
dev_stat() {
	awk -v n="$1:" '$1 == n { print $2 }' /proc/stellar/stellar0/stats
}

# ext_sampler FILE: append stellar0's QP list to FILE every 0.2 s.
ext_sampler() {
	while sleep 0.2; do
		cat /proc/stellar/stellar0/qps >>"$1" 2>/dev/null || true
	done
}

# loss_perf CONFIG: stellar's ib_write_bw and ib_send_bw under the loss
# set, each with the packets the sender (b) resent per 1000 it sent and
# whether its RC QP was seen in extended mode (ext_TEST: yes/no).
loss_perf() {
	local config=$1 test tx rt sampler snap=$STELLAR_OUT/$1.qps

	for test in write_bw send_bw; do
		: >"$snap"
		ext_sampler "$snap" &
		sampler=$!
		tx=$(dev_stat tx_packets)
		rt=$(dev_stat retransmits)
		perf "$config" stellar0 "$STELLAR_GID" "$test" 65536 "$BW_ITERS"
		kill "$sampler" 2>/dev/null || true
		wait "$sampler" 2>/dev/null || true
		cat /proc/stellar/spray_stats >"$STELLAR_OUT/${config}_$test.spray"
		tx=$(($(dev_stat tx_packets) - tx))
		rt=$(($(dev_stat retransmits) - rt))
		record "$config" "resent_$test" \
			"$(awk -v r="$rt" -v t="$tx" \
			'BEGIN { printf "%.1f", t ? 1000 * r / t : 0 }')" "per 1000"
		if grep -q '^ext_on: 1' "$snap"; then
			record "$config" "ext_$test" yes
		else
			record "$config" "ext_$test" no
		fi
	done
}

# bench_loss: rdma_rxe, then stellar's recovery modes in alternating
# order, at each loss rate of LOSS_RATES.
bench_loss() {
	local rate round modes order mode

	bench_link
	rxe_up "$(link_dev 1)"
	barrier loss-rxe-up
	for rate in $LOSS_RATES; do
		set_loss "$rate" rxe
		perf "rxe_l$rate" rxe0 "$RXE_GID" write_bw 65536 "$BW_ITERS"
		perf "rxe_l$rate" rxe0 "$RXE_GID" send_bw 65536 "$BW_ITERS"
	done
	set_loss 0 rxe-done
	rxe_down
	stellar_pair_up
	modes="gbn sel"
	[ "$LOSS_SPRAY" -le 1 ] || modes="gbn sel spray"
	for rate in $LOSS_RATES; do
		set_loss "$rate" stellar
		for round in $(seq "$LOSS_ROUNDS"); do
			order=$modes
			[ $((round % 2)) = 0 ] && order=$(echo "$modes" | tr ' ' '\n' | tac | xargs)
			for mode in $order; do
				loss_mode "$mode" "$rate-$round-$mode"
				loss_perf "${mode}_l${rate}_$round"
			done
		done
	done
	set_loss 0 stellar-done
	loss_mode sel end
	rdma link delete stellar0
	stellar_unload
}

if [ -n "$LINK_MTU" ]; then
	ip link set dev "$(link_dev 1)" mtu "$LINK_MTU"
	barrier link-mtu
fi
if [ -n "$LOSS_RATES" ]; then
	modprobe sch_netem
	bench_loss
elif [ "$TELEMETRY_ONLY" = 0 ]; then
	bench_link
	if [ $((ROUND % 2)) = 1 ]; then
		bench_rxe
		bench_stellar stellar_syscall db_poll_interval=0
		bench_stellar stellar_poll "db_poll_interval=$POLL_INTERVAL"
	else
		bench_stellar stellar_poll "db_poll_interval=$POLL_INTERVAL"
		bench_stellar stellar_syscall db_poll_interval=0
		bench_rxe
	fi
fi
[ -n "$LOSS_RATES" ] || bench_telemetry
barrier bench-done
log "bench done"
