#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# ECN feedback under packet spray: two VMs joined by 4 links combined by a
# bond (balance-xor, layer3+4), every link shaped to 20mbit except link 2
# at 4mbit, whose queue is an fq_codel with ECN marking.  One stellar QP
# (spray_paths 16) runs ib_write_bw from VM b to VM a:
#
#   - its requests are ECN-capable and the CE marks fq_codel sets on link
#     2 come back: the receiver QP counts ecn_ce_rcvd, the sender QP
#     ecn_echoes_rcvd and the sender's paths show ecn_marks;
#   - the paths crossing the slow, marking link get less traffic (RTT,
#     losses and ECN marks all lower their weight): link 2 carries less
#     than 15% of the sender's bytes (a fair share would be 25%);
#   - control: the same run with link 2 on a plain FIFO gives no marks
#     (and its share is logged: RTT and losses alone also lower it).
#
#   - DCQCN: the receiver answers CE marks with CNPs and the sender's
#     rate is cut; no CNP without marking, and none with the device's cc
#     set to 0 on both ends;
# Data integrity is checked by ibv_rc_pingpong -c over the same links.
# memdebug=off: its ECN and link-share checks need the CPU headroom that
# SLUB debugging takes under TCG (make check MEMDEBUG=1 forces it on).
# stellar-test: vms=2 links=4 timeout=900 memdebug=off

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"
# shellcheck source=tests/vm/multipath.sh
. "$STELLAR_REPO/tests/vm/multipath.sh"

TOOL=$STELLAR_REPO/tools/stellar-tool
[ -x "$TOOL" ] || fail "stellar-tool not built: $TOOL (run make -C tools)"
MARK_LINK=2
PORT=19800

modprobe -a sch_tbf sch_fq_codel

next_port() {
	PORT=$((PORT + 1))
}

# qp_counter NAME SNAPSHOT: per-QP counter NAME summed over the QPs of
# SNAPSHOT ("stellar-tool -j qps" output: one read, while the QP lives).
qp_counter() {
	jq "[.[].counters.$1 // 0] | add // 0" "$2"
}

# marked_paths: "path:ecn_marks" of the paths with marks.
marked_paths() {
	"$TOOL" -j paths --device stellar0 |
		jq -r '[.paths[] | select(.ecn_marks > 0) | "\(.index):\(.ecn_marks)"] | join(" ")'
}

# marking ON|OFF: link MARK_LINK's queue marks CE (fq_codel ecn) or not.
marking() {
	local dev

	dev=$(link_dev "$MARK_LINK")
	mp_shape "$dev" 4mbit
	if [ "$1" = on ]; then
		tc qdisc replace dev "$dev" parent 1:1 handle 10: \
			fq_codel ecn target 1ms interval 10ms
	else
		tc qdisc replace dev "$dev" parent 1:1 pfifo limit 1000
	fi
}

# shellcheck disable=SC2034 # srv and cli are used by name in pair_run
write_run() {
	local name=$1 before after sampler snap
	local -a srv cli

	next_port
	srv=(ib_write_bw -s 65536 -D 10 -d stellar0 -x "$GID" -p "$PORT"
)
	cli=("${srv[@]}" "$MP_PEER_IP")
	before=$(mp_link_bytes tx)
	(sleep 8; "$TOOL" -j qps --device stellar0 >"$STELLAR_OUT/$name.qps.json"
	 marked_paths >"$STELLAR_OUT/$name.paths") &
	sampler=$!
	pair_run "$name" a "tcp:$PORT" 300 srv cli
	wait "$sampler"
	after=$(mp_link_bytes tx)
	SHARE=$(awk -v b="$before" -v a="$after" -v k="$MARK_LINK" 'BEGIN {
		n = split(a, aa, " "); split(b, bb, " ")
		for (i = 1; i <= n; i++) { d = aa[i] - bb[i]; t += d; if (i == k) m = d }
		printf "%d\n", t ? 100 * m / t : 0 }')
	snap=$STELLAR_OUT/$name.qps.json
	ECHOES=$(qp_counter ecn_echoes_rcvd "$snap")
	CE=$(qp_counter ecn_ce_rcvd "$snap")
	CNP_SENT=$(qp_counter cnp_sent "$snap")
	CNP_RCVD=$(qp_counter cnp_rcvd "$snap")
	CUTS=$(qp_counter cc_rate_cuts "$snap")
	MARKED=$(cat "$STELLAR_OUT/$name.paths")
	log "$name ($STELLAR_ROLE): link $MARK_LINK carried $SHARE% of the bytes sent; ecn_echoes_rcvd $ECHOES, ecn_ce_rcvd $CE; cnp_sent $CNP_SENT, cnp_rcvd $CNP_RCVD, cc_rate_cuts $CUTS; marked paths: ${MARKED:-none}"
}

stellar_load spray_paths=16
mp_bond 20mbit
rdma link add stellar0 type stellar netdev "$MP_DEV"
GID=$(gid_index stellar0 "$MP_IP")
wait_for 10 ping -c 1 -W 1 -I "$MP_IP" "$MP_PEER_IP"

marking off
barrier fifo
write_run fifo
if [ "$STELLAR_ROLE" = b ]; then
	assert_eq "$ECHOES" 0 "ECN echoes without marking"
	assert_eq "$CNP_RCVD" 0 "CNPs received without marking"
	[ -z "$MARKED" ] || fail "paths marked without ECN marking: $MARKED"
else
	assert_eq "$CE" 0 "CE packets received without marking"
	assert_eq "$CNP_SENT" 0 "CNPs sent without marking"
fi
barrier fifo.done

marking on
barrier marking
write_run ecn
if [ "$STELLAR_ROLE" = b ]; then
	[ "$ECHOES" -gt 0 ] || fail "no ECN echo reached the sender"
	[ -n "$MARKED" ] || fail "no path shows ECN marks"
	[ "$SHARE" -lt 15 ] ||
		fail "link $MARK_LINK (marking) carried $SHARE% of the bytes: the marked paths were not avoided"
	[ "$CNP_RCVD" -gt 0 ] || fail "no CNP reached the sender"
	[ "$CUTS" -gt 0 ] || fail "CNPs arrived but DCQCN never cut the rate"
else
	[ "$CE" -gt 0 ] || fail "the receiver saw no CE-marked packet"
	[ "$CNP_SENT" -gt 0 ] || fail "the receiver answered no CE mark with a CNP"
fi
barrier ecn.done

# Congestion control off on both ends: marks still come back in ACKs,
# but no CNP is sent and the rate is never cut.
"$TOOL" set --device stellar0 --cc 0
barrier cc-off
write_run ecn-cc-off
if [ "$STELLAR_ROLE" = b ]; then
	[ "$ECHOES" -gt 0 ] || fail "no ECN echo reached the sender (cc off)"
	assert_eq "$CNP_RCVD" 0 "CNPs received with cc off"
	assert_eq "$CUTS" 0 "rate cuts with cc off"
else
	assert_eq "$CNP_SENT" 0 "CNPs sent with cc off"
fi
barrier cc-off.done

if [ "$STELLAR_ROLE" = b ]; then
	"$TOOL" paths --device stellar0 >"$STELLAR_OUT/paths.txt"
fi
next_port
# shellcheck disable=SC2034 # srv and cli are used by name in pair_run
srv=(ibv_rc_pingpong -d stellar0 -g "$GID" -p "$PORT" -c -s 65536 -n 200)
# shellcheck disable=SC2034
cli=("${srv[@]}" "$MP_PEER_IP")
pair_run pingpong a "tcp:$PORT" 300 srv cli
rdma link delete stellar0
stellar_unload
log "spray ECN: marks came back to the sender; the marking link carried little"
