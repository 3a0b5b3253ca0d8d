#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# The device's counters through the RDMA core's standard interfaces,
# checked against real traffic between two hosts (stellar on both ends):
#   - /sys/class/infiniband/stellar0/ports/1/hw_counters/ holds packets,
#     bytes, retransmits, NAKs, RNR NAKs, drops by reason, out-of-order,
#     spray, PVDMA and eMTT counters; .../stellar0/hw_counters/ the PVDMA
#     and eMTT ones;
#   - 500 RC SENDs of 4096 bytes each way (ibv_rc_pingpong) raise
#     tx/rx_bytes by at least 2048000 and tx/rx_packets by at least 2000
#     (1024-byte MTU), and PVDMA faults and eMTT lookups by something;
#   - "rdma statistic show link stellar0/1", sysfs and stellar-tool stats
#     and pvdma give the same numbers (one set of counters);
#   - while a pingpong runs, "rdma -dd resource show qp" gives root the
#     driver detail with PSNs, the peer's QPN and the QP's counters, and
#     the core's sq-psn is the PSN the program chose; an unprivileged user
#     sees state, spray paths and srtt but no PSN (core ones read 0);
#     "mr -dd" shows pinned bytes and faults of the program's MRs, "cq
#     -dd" the ring size.
# stellar-test: vms=2 links=1 timeout=600

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

TOOL=$STELLAR_REPO/tools/stellar-tool
[ -x "$TOOL" ] || fail "stellar-tool not built: $TOOL (run make -C tools)"
UNPRIV="setpriv --reuid=4242 --regid=4242 --clear-groups --inh-caps=-all"
HW=/sys/class/infiniband/stellar0/ports/1/hw_counters
DEVHW=/sys/class/infiniband/stellar0/hw_counters

stellar_pair_up
g=$STELLAR_GID

# hw NAME: a port counter from sysfs.
hw() {
	cat "$HW/$1"
}

# link_stat NAME: a port counter from "rdma statistic show link".
link_stat() {
	rdma statistic show link stellar0/1 |
		grep -oE " $1 [0-9]+" | awk '{ print $2 }'
}

log "the counter files"
for c in tx_packets tx_bytes rx_packets rx_bytes retransmits timeouts \
	naks_sent naks_rcvd rnr_naks_sent rnr_naks_rcvd rx_duplicate \
	out_of_order rx_drop_truncated rx_drop_bad_icrc rx_drop_no_qp \
	rx_drop_psn rx_drop_queue_full spray_packets spray_losses \
	spray_ecn_marks spray_paths_failed spray_back_failures ooo_depth_1 \
	ooo_depth_2048_up pvdma_faults pvdma_pinned_bytes emtt_hits emtt_misses; do
	[ -r "$HW/$c" ] || fail "no port counter $c: $(ls "$HW")"
	[[ "$(hw "$c")" =~ ^[0-9]+$ ]] || fail "$c reads '$(hw "$c")'"
done
for c in pvdma_faults pvdma_lookups emtt_hits emtt_misses emtt_entries; do
	[ -r "$DEVHW/$c" ] || fail "no device counter $c: $(ls "$DEVHW")"
done
[ ! -e "$DEVHW/tx_bytes" ] || fail "packet counters in the device's hw_counters"
[ "$(link_stat tx_bytes)" != "" ] ||
	fail "rdma statistic shows no tx_bytes: $(rdma statistic show link stellar0/1)"

barrier counters-before
declare -A before
for c in tx_bytes tx_packets rx_bytes rx_packets pvdma_faults emtt_hits \
	emtt_misses; do
	before[$c]=$(hw "$c")
done

client_server rc_pingpong 18700 300 -- \
	ibv_rc_pingpong -d stellar0 -g "$g" -p 18700 -c -s 4096 -n 500
sleep 1

log "the counters saw the traffic"
bytes=$((500 * 4096))
for c in tx_bytes rx_bytes; do
	d=$(($(hw $c) - ${before[$c]}))
	log "$c rose by $d (payload $bytes)"
	[ "$d" -ge "$bytes" ] || fail "$c rose by $d, less than the $bytes sent"
	[ "$d" -le $((bytes * 2)) ] || fail "$c rose by $d, over twice the $bytes sent"
done
for c in tx_packets rx_packets; do
	d=$(($(hw $c) - ${before[$c]}))
	log "$c rose by $d"
	[ "$d" -ge 2000 ] || fail "$c rose by $d, fewer than the 2000 data packets"
done
d=$(($(hw pvdma_faults) - ${before[pvdma_faults]}))
[ "$d" -gt 0 ] || fail "pvdma_faults did not rise"
d=$(($(hw emtt_hits) + $(hw emtt_misses) - ${before[emtt_hits]} - ${before[emtt_misses]}))
[ "$d" -gt 0 ] || fail "no eMTT lookups counted"
assert_eq "$(cat "$DEVHW/pvdma_faults")" "$(hw pvdma_faults)" \
	"device and port pvdma_faults"

log "rdma statistic, sysfs and stellar-tool agree"
agree=0
for _ in 1 2 3 4 5; do
	s1=$(hw tx_bytes)
	r=$(link_stat tx_bytes)
	t=$("$TOOL" -j stats --device stellar0 | jq '.tx_bytes')
	rp=$(link_stat rx_packets)
	tp=$("$TOOL" -j stats --device stellar0 | jq '.rx_packets')
	f=$("$TOOL" -j pvdma --device stellar0 | jq '.[0].page_faults')
	s2=$(hw tx_bytes)
	log "tx_bytes sysfs $s1 rdma $r tool $t; rx_packets rdma $rp tool $tp; faults tool $f sysfs $(hw pvdma_faults)"
	if [ "$s1" = "$s2" ] && [ "$s1" = "$r" ] && [ "$r" = "$t" ] &&
		[ "$rp" = "$tp" ] && [ "$f" = "$(hw pvdma_faults)" ]; then
		agree=1
		break
	fi
	sleep 1
done
[ "$agree" = 1 ] || fail "the three views of the counters disagree"
barrier agree-done

log "driver detail of a running pingpong"
pp_log=$STELLAR_OUT/pp_long.log
if [ "$STELLAR_ROLE" = a ]; then
	stdbuf -oL ibv_rc_pingpong -d stellar0 -g "$g" -p 18701 -c -s 4096 -n 100000000 \
		>"$pp_log" 2>&1 &
	pp=$!
	wait_for 20 tcp_listening 18701
	put_val long.ready 1
else
	get_val long.ready >/dev/null
	stdbuf -oL ibv_rc_pingpong -d stellar0 -g "$g" -p 18701 -c -s 4096 -n 100000000 \
		"$(peer_ip 1)" >"$pp_log" 2>&1 &
	pp=$!
fi

# pp_qp_line [WHO...]: the "rdma -dd res show qp" line of the pingpong's
# QP in RTS, as WHO (a command prefix, e.g. setpriv ...).
pp_qp_line() {
	"$@" rdma -dd resource show qp | grep "comm ibv_rc_pingpong" |
		grep " state RTS " || true
}
pp_qp_ready() {
	[[ "$(pp_qp_line)" == *drv_sq_psn* ]]
}
wait_for 60 pp_qp_ready ||
	fail "no pingpong QP in RTS: $(rdma -dd resource show qp); $(cat "$pp_log")"
wait_for 60 grep -q "local address" "$pp_log" || fail "pingpong: $(cat "$pp_log")"
root_line=$(pp_qp_line)
log "root: $root_line"
for k in state spray_paths srtt_us sq_psn una_psn epsn dest_qpn tx_packets \
	rx_bytes retransmits; do
	[[ "$root_line" =~ \ drv_$k\  ]] || fail "root sees no $k: $root_line"
done
psn=$(grep -m1 "local address" "$pp_log" | sed -E 's/.*PSN (0x[0-9a-f]+).*/\1/')
assert_contains "$root_line" " sq-psn $((psn)) " "the core's sq-psn for root"

nobody_line=$(pp_qp_line $UNPRIV)
log "unprivileged: $nobody_line"
[ -n "$nobody_line" ] || fail "the unprivileged user sees no QP: $($UNPRIV rdma -dd resource show qp 2>&1)"
for k in state spray_paths srtt_us; do
	[[ "$nobody_line" =~ \ drv_$k\  ]] || fail "unprivileged user sees no $k: $nobody_line"
done
for k in sq_psn una_psn epsn dest_qpn tx_packets; do
	assert_not_contains "$nobody_line" " drv_$k " "unprivileged rdma -dd res show qp"
done
assert_contains "$nobody_line" " sq-psn 0 " "the core's sq-psn for an unprivileged user"
assert_not_contains "$nobody_line" " sq-psn $((psn)) " "unprivileged sq-psn"

mr_all=$(rdma -dd resource show mr 2>&1) || fail "rdma resource show mr: $mr_all"
mr_out=$(echo "$mr_all" | grep "comm ibv_rc_pingpong") ||
	fail "no MR of the pingpong: $mr_all"
log "mr: $mr_out"
[[ "$mr_out" =~ \ drv_kind\ pvdma\  ]] || fail "no PVDMA MR detail: $mr_out"
[[ "$mr_out" =~ \ drv_pinned_bytes\ [1-9][0-9]*\  ]] || fail "no pinned bytes: $mr_out"
[[ "$mr_out" =~ \ drv_faults\ [1-9] ]] || fail "no faults: $mr_out"
cq_all=$(rdma -dd resource show cq 2>&1) || fail "rdma resource show cq: $cq_all"
cq_out=$(echo "$cq_all" | grep "comm ibv_rc_pingpong") ||
	fail "no CQ of the pingpong: $cq_all"
log "cq: $cq_out"
[[ "$cq_out" =~ \ drv_ring_entries\ [1-9] ]] || fail "no CQ detail: $cq_out"

barrier detail-done
kill "$pp" 2>/dev/null || true
wait "$pp" 2>/dev/null || true
barrier killed

rdma link delete stellar0
stellar_unload
log "obs_counters OK"
