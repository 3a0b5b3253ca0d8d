#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# The packet spray benchmark's guest side, run by bench/spray.sh in two
# VMs joined by 4 links, each shaped to RATE (tests/vm/multipath.sh;
# default topology: the bond, balance-xor layer3+4).  VM b sends, VM a
# receives.  One after the other:
#
#   link       iperf3 UDP over link 1 alone: one link's capacity
#   rxe        rdma_rxe on the topology: single-QP ib_write_bw (64 KB),
#              the same with heavy reordering on every link, and a
#              failover run: ib_write_bw -D, the busiest link drops
#              everything (netem loss 100%, link up) after FAIL_AT s
#   stellar    the same with virtio_stellar, spray_paths PATHS
#
# During every run VM a samples its links' rx bytes every 100 ms; from
# them it computes the links used, the stall after the failure (longest
# span of samples under 10% of the rate before it) and the rate over the
# second half of the time after it.  Each VM writes one line per figure
# to $STELLAR_OUT/bench.tsv:  CONFIG<TAB>TEST<TAB>VALUE<TAB>UNIT
#
# Arguments: [--quick] [--rate RATE] [--paths N] [--topology bond|ecmp]
#            [--only rxe|stellar]
# stellar-test: vms=2 links=4 timeout=3000 memdebug=off

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../tests/vm/lib.sh"
# shellcheck source=tests/vm/multipath.sh
. "$STELLAR_REPO/tests/vm/multipath.sh"

RATE=20mbit
PATHS=16
TOPOLOGY=bond
BW_SECONDS=10
FAIL_SECONDS=20
FAIL_AT=6
IPERF_SECONDS=5
ONLY=
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) BW_SECONDS=5; FAIL_SECONDS=12; FAIL_AT=4; IPERF_SECONDS=3 ;;
	--rate) RATE=$2; shift ;;
	--paths) PATHS=$2; shift ;;
	--topology) TOPOLOGY=$2; shift ;;
	--only) ONLY=$2; shift ;;
	'') ;;	# the harness passes an empty argument when there are none
	*) fail "bench/spray-guest.sh: unknown argument '$1'" ;;
	esac
	shift
done

TSV=$STELLAR_OUT/bench.tsv
TOOL=$STELLAR_REPO/tools/stellar-tool
PORT=19500
: >"$TSV"
modprobe -a sch_tbf sch_netem

record() {
	printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${4:-}" >>"$TSV"
	log "$1 $2: $3 ${4:-}"
}

next_port() {
	PORT=$((PORT + 1))
}

# measured CMD...: run CMD in a subshell; its exit code in MEASURED_RC.
measured() {
	MEASURED_RC=0
	("$@") &
	wait $! || MEASURED_RC=$?
}

# --- rx sampling on VM a ------------------------------------------------

# sampler_start NAME SECONDS [DEV...]: sample the rx bytes of DEVs (by
# default the topology's links) every 100 ms into $STELLAR_OUT/NAME.samples
# ("monotonic-seconds bytes-per-link...").
sampler_start() {
	local name=$1 seconds=$2 list
	local -a devs

	shift 2
	devs=("$@")
	if [ "${#devs[@]}" = 0 ]; then
		list=$(mp_link_devs)	# no /dev/fd in the guest: no <(...)
		mapfile -t devs <<<"$list"
	fi
	python3 - "$seconds" "${devs[@]}" >"$STELLAR_OUT/$name.samples" <<'EOF' &
import sys, time
seconds, devs = float(sys.argv[1]), sys.argv[2:]
def rx():
    return [int(open(f"/sys/class/net/{d}/statistics/rx_bytes").read())
            for d in devs]
end = time.monotonic() + seconds
while time.monotonic() < end:
    print("%.3f %s" % (time.monotonic(), " ".join(map(str, rx()))),
          flush=True)
    time.sleep(0.1)
EOF
	SAMPLER=$!
}

# now_mono: the clock of the samples.
now_mono() {
	python3 -c 'import time; print("%.3f" % time.monotonic())'
}

# analyze NAME [FAIL_TIME]: print "links rate_Bps [stall_s recovered_Bps]"
# from NAME.samples: links with >= 10% of the bytes, mean rate; with a
# failure time, the stall after it and the rate over the second half of
# the time after it.
analyze() {
	python3 - "$STELLAR_OUT/$1.samples" "${2:-}" <<'EOF'
import sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
fail = float(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] else None
t = [r[0] for r in rows]
tot = [sum(r[1:]) for r in rows]
per = [rows[-1][i] - rows[0][i] for i in range(1, len(rows[0]))]
links = sum(1 for p in per if sum(per) and p >= sum(per) / 10)
rate = [(tot[i] - tot[i - 1]) / (t[i] - t[i - 1]) for i in range(1, len(t))]
busy = [r for r in rate if r > 0]
out = [links, (tot[-1] - tot[0]) / (t[-1] - t[0]) if len(t) > 1 else 0]
if fail is not None:
    before = [rate[i - 1] for i in range(1, len(t)) if 1.0 < t[i] - t[0] and t[i] < fail]
    ref = sum(before) / len(before) if before else 0
    stall = run = 0.0
    for i in range(1, len(t)):
        if t[i] <= fail:
            continue
        if rate[i - 1] < ref / 10:
            run += t[i] - t[i - 1]
            stall = max(stall, run)
        else:
            run = 0.0
    half = fail + (t[-1] - fail) / 2
    after = [i for i in range(len(t)) if t[i] >= half]
    rec = ((tot[after[-1]] - tot[after[0]]) / (t[after[-1]] - t[after[0]])
           if len(after) > 1 else 0)
    out += [stall, rec]
print(" ".join("%.3f" % v if isinstance(v, float) else str(v) for v in out))
EOF
}

# --- link capacity --------------------------------------------------------

# shellcheck disable=SC2034 # srv and cli are used by name in pair_run
bench_link() {
	local -a srv cli
	local res

	next_port
	srv=(iperf3 -s -1 -p "$PORT")
	cli=(iperf3 -c "10.1.0.1" -B "10.1.0.2" -p "$PORT" -t "$IPERF_SECONDS"
		-u -b 0 -l 1472 -J)
	[ "$STELLAR_ROLE" = a ] &&
		sampler_start link $((IPERF_SECONDS + 4)) "$(link_dev 1)"
	measured pair_run link a "tcp:$PORT" $((IPERF_SECONDS + 60)) srv cli
	if [ "$STELLAR_ROLE" = a ]; then
		wait "$SAMPLER" || true
		res=$(analyze link)
		# L2 bytes per second over the busy part: the bytes / seconds
		# of the iperf3 run, measured as the mean over samples > 0.
		record link one_link_l2 "$(python3 - "$STELLAR_OUT/link.samples" <<'EOF'
import sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
rates = [(sum(b[1:]) - sum(a[1:])) / (b[0] - a[0]) for a, b in zip(rows, rows[1:])]
busy = sorted(r for r in rates if r > 0)
top = busy[len(busy) // 4:] if busy else [0]
print("%.0f" % (sum(top) / len(top)))
EOF
)" bytes/s
		log "link samples: $res"
	fi
	if [ "$STELLAR_ROLE" = b ] && [ "$MEASURED_RC" = 0 ]; then
		record link one_link_udp "$(python3 -c '
import json, sys
text = open(sys.argv[1]).read()
end = json.loads(text[text.index("{"):])["end"]
s = end.get("sum_received") or end["sum"]
bps = s["bits_per_second"]
if "sum_received" not in end and "lost_percent" in s:
    bps *= 1 - s["lost_percent"] / 100
print("%.3f" % (bps / 8 / 1048576))' "$STELLAR_OUT/link.log")" MiB/s
	fi
	barrier link-done
}

# --- RDMA runs ------------------------------------------------------------

# bw CONFIG TEST DEV GID: single-QP ib_write_bw -D, 64 KB; rate and links.
# shellcheck disable=SC2034 # srv and cli are used by name in pair_run
bw() {
	local config=$1 test=$2 dev=$3 gid=$4 name=${1}_$2 value=failed res
	local -a srv cli

	next_port
	srv=(ib_write_bw -s 65536 -D "$BW_SECONDS" -d "$dev" -x "$gid" -p "$PORT")
	cli=("${srv[@]}" "$MP_PEER_IP")
	[ "$STELLAR_ROLE" = a ] && sampler_start "$name" 900
	measured pair_run "$name" a "tcp:$PORT" $((BW_SECONDS + 120)) srv cli
	if [ "$STELLAR_ROLE" = a ]; then
		kill "$SAMPLER" 2>/dev/null || true
		wait "$SAMPLER" 2>/dev/null || true
		res=$(analyze "$name")
		record "$config" "${test}_links" "${res%% *}" links
	else
		[ "$MEASURED_RC" = 0 ] &&
			value=$(perftest_value "$STELLAR_OUT/$name.log" 4) || value=failed
		record "$config" "$test" "$value" MiB/s
	fi
	barrier "$name.done"
}

# data_dir: the direction of this VM's links the data takes: VM b sends.
data_dir() {
	[ "$STELLAR_ROLE" = b ] && echo tx || echo rx
}

# busiest_link: the link that carried the most data since BUSY_BASE (VM a
# and VM b see the same link: link k joins eth(k-1) of both).
busiest_link() {
	mp_link_bytes "$(data_dir)" | awk -v base="$BUSY_BASE" '{
		split(base, b, " ")
		for (k = 1; k <= NF; k++) if (best == "" || $k - b[k] > most) {
			most = $k - b[k]; best = k }
		print best }'
}

# fail_link_later NAME: FAIL_AT s after the launch of the transfer (both
# VMs launch it within a few ms of each other), fail the busiest link,
# each VM on its own side, both directions.
fail_link_later() {
	local k

	BUSY_BASE=$(mp_link_bytes "$(data_dir)")
	sleep "$FAIL_AT"
	k=$(busiest_link)
	now_mono >"$STELLAR_OUT/$1.fail_time"
	mp_netem "$(link_dev "$k")" -- loss 100%
	echo "$k" >"$STELLAR_OUT/$1.fail_link"
}

# failover CONFIG DEV GID: ib_write_bw -D; the busiest link goes dark.
# shellcheck disable=SC2034 # srv and cli are used by name in pair_run
failover() {
	local config=$1 dev=$2 gid=$3 name=${1}_failover res killer k
	local -a srv cli

	next_port
	srv=(ib_write_bw -s 65536 -D "$FAIL_SECONDS" -d "$dev" -x "$gid"
		-p "$PORT")
	cli=("${srv[@]}" "$MP_PEER_IP")
	[ "$STELLAR_ROLE" = a ] && sampler_start "$name" $((FAIL_SECONDS + 60))
	fail_link_later "$name" &
	killer=$!
	measured pair_run "$name" a "tcp:$PORT" $((FAIL_SECONDS + 120)) srv cli
	wait "$killer" || true
	k=$(cat "$STELLAR_OUT/$name.fail_link" 2>/dev/null || echo 1)
	mp_netem_off "$(link_dev "$k")"
	if [ "$STELLAR_ROLE" = a ]; then
		kill "$SAMPLER" 2>/dev/null || true
		wait "$SAMPLER" 2>/dev/null || true
		res=$(analyze "$name" "$(cat "$STELLAR_OUT/$name.fail_time" 2>/dev/null)")
		record "$config" failover_stall "$(echo "$res" | cut -d' ' -f3)" s
		record "$config" failover_recovered_l2 "$(echo "$res" | cut -d' ' -f4)" bytes/s
		record "$config" failover_link "$k" link
	else
		record "$config" failover_qp_ok "$([ "$MEASURED_RC" = 0 ] && echo yes || echo no)" ""
		if [ "$MEASURED_RC" = 0 ]; then
			record "$config" failover_bw "$(perftest_value "$STELLAR_OUT/$name.log" 4 || echo failed)" MiB/s
		else
			record "$config" failover_bw failed MiB/s
		fi
	fi
	barrier "$name.done"
}

reorder_on() {
	local k

	for k in $(seq 1 "$STELLAR_LINKS"); do
		mp_netem "$(link_dev "$k")" -- delay 2ms reorder 50%
	done
}

reorder_off() {
	local k

	for k in $(seq 1 "$STELLAR_LINKS"); do
		mp_netem_off "$(link_dev "$k")"
	done
}

# rdma_set CONFIG DEV GID: every measurement of one RDMA config.
rdma_set() {
	bw "$1" write_bw "$2" "$3"
	reorder_on
	barrier "$1.reorder"
	bw "$1" write_bw_reorder "$2" "$3"
	reorder_off
	barrier "$1.clean"
	failover "$1" "$2" "$3"
}

bench_rxe() {
	modprobe -a ib_core ib_uverbs rdma_ucm rdma_rxe
	rdma link add rxe0 type rxe netdev "$MP_DEV"
	RXE_GID=$(gid_index rxe0 "$MP_IP")
	barrier rxe-up
	rdma_set rxe rxe0 "$RXE_GID"
	rxe_down
	barrier rxe-down
}

bench_stellar() {
	stellar_load "spray_paths=$PATHS"
	rdma link add stellar0 type stellar netdev "$MP_DEV"
	STELLAR_GID=$(gid_index stellar0 "$MP_IP")
	barrier stellar-up
	rdma_set stellar stellar0 "$STELLAR_GID"
	"$TOOL" paths --device stellar0 >"$STELLAR_OUT/stellar-paths.txt" || true
	cat /proc/stellar/spray_stats >"$STELLAR_OUT/spray_stats.txt" || true
	rdma link delete stellar0
	stellar_unload
}

record setup rate "$RATE" ""
record setup paths "$PATHS" ""
record setup topology "$TOPOLOGY" ""
for k in $(seq 1 "$STELLAR_LINKS"); do
	mp_shape "$(link_dev "$k")" "$RATE"
done
bench_link
case "$TOPOLOGY" in
bond | ecmp) "mp_$TOPOLOGY" "$RATE" ;;
*) fail "unknown topology '$TOPOLOGY'" ;;
esac
barrier topology-up
wait_for 10 ping -c 1 -W 1 -I "$MP_IP" "$MP_PEER_IP"
[ "$ONLY" = stellar ] || bench_rxe
[ "$ONLY" = rxe ] || bench_stellar
barrier bench-done
log "spray bench done"
