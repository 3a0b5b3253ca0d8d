#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# UCX between two hosts, stellar on both ends: ucx_perftest over the
# rc_verbs and ud_verbs transports, at the UCT layer (one transport, named
# with -x) and at the UCP layer (UCX_TLS names the only transports UCP may
# use: no tcp, no shared memory).  UCX_NET_DEVICES=stellar0:1 limits UCX
# to the stellar device.  The server runs on VM a, the client on VM b.
#
# Every client must exit 0 with a "Final:" line of positive figures for
# the iterations asked for, and the receiving side's stellar counters must
# have taken in at least the payload the test moved.
# stellar-test: vms=2 links=1 timeout=900

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

UCX_PORT=13337

# ucx_final LOG ITERS: check the "Final:" line of a ucx_perftest log:
# ITERS iterations, a positive latency or overhead (column 5) and message
# rate (column 9), both over the whole run: the columns of the last report
# interval (4, 6, 8) are "-nan" when that interval saw no iteration end,
# as on a kernel slow enough that one iteration outlasts an interval.
ucx_final() {
	local line

	line=$(awk '$1 == "Final:" { print; exit }' "$1")
	[ -n "$line" ] || fail "no Final: line in $1:"$'\n'"$(tail -20 "$1")"
	echo "$line" | awk -v n="$2" '{
			exit !($2 == n && $5 + 0 > 0 && $9 + 0 > 0)
		}' || fail "ucx_perftest Final: line of $1 is not $2 iterations with positive figures: $line"
	log "$(basename "$1" .log): $(echo "$line" | tr -s ' ')"
}

# ucx_pair NAME MIN_RX_BYTES ITERS [VAR=VALUE...] -- ARGS...: run
# ucx_perftest ARGS (with -n ITERS) as server on VM a and client on VM b,
# with the environment VAR=VALUE on both sides.  VM a's stellar0 must
# receive at least MIN_RX_BYTES meanwhile.
ucx_pair() {
	local name=$1 min_rx=$2 iters=$3 before rx
	local -a envs=() srv cli

	shift 3
	while [ "$1" != -- ]; do
		envs+=("$1")
		shift
	done
	shift
	srv=(env "${envs[@]}" ucx_perftest -p "$UCX_PORT")
	# shellcheck disable=SC2034 # used by name in pair_run
	cli=(env "${envs[@]}" ucx_perftest "$(peer_ip 1)" -p "$UCX_PORT"
	     -n "$iters" "$@")
	before=$(stellar_stat stellar0 rx_bytes)
	pair_run "$name" a "tcp:$UCX_PORT" 120 srv cli
	if [ "$PAIR_ROLE" = client ]; then
		ucx_final "$PAIR_LOG" "$iters"
		return 0
	fi
	rx=$(($(stellar_stat stellar0 rx_bytes) - before))
	[ "$rx" -ge "$min_rx" ] ||
		fail "$name: stellar0 received $rx bytes, the test moved $min_rx"
	log "$name: stellar0 received $rx bytes (payload $min_rx)"
}

# ucx_info -d must list stellar0 as a memory domain with rc_verbs and
# ud_verbs on its port 1.
check_ucx_devices() {
	local md

	md=$(ucx_info -d | awk '/^# Memory domain:/ { in_md = ($4 == "stellar0") }
		in_md')
	assert_contains "$md" "Transport: rc_verbs" "ucx_info -d for stellar0"
	assert_contains "$md" "Transport: ud_verbs" "ucx_info -d for stellar0"
	assert_contains "$md" "Device: stellar0:1" "ucx_info -d for stellar0"
}

stellar_pair_up
check_ucx_devices
export UCX_NET_DEVICES=stellar0:1 UCX_IB_GID_INDEX=$STELLAR_GID

log "UCT rc_verbs"
ucx_pair uct_rc_put_bw $((100 * 65536)) 100 -- \
	-x rc_verbs -d stellar0:1 -t put_bw -D zcopy -s 65536 -w 10
ucx_pair uct_rc_am_lat $((200 * 8)) 200 -- \
	-x rc_verbs -d stellar0:1 -t am_lat -w 20

log "UCT ud_verbs"
ucx_pair uct_ud_am_bw $((200 * 1000)) 200 -- \
	-x ud_verbs -d stellar0:1 -t am_bw -D bcopy -s 1000 -w 20
ucx_pair uct_ud_am_lat $((200 * 8)) 200 -- \
	-x ud_verbs -d stellar0:1 -t am_lat -w 20

log "UCP over rc_verbs (ud_verbs only to connect) and over ud_verbs"
ucx_pair ucp_rc_tag_bw $((100 * 65536)) 100 UCX_TLS=rc_verbs,ud_verbs:aux -- \
	-t tag_bw -s 65536 -w 10
ucx_pair ucp_rc_put_bw $((100 * 65536)) 100 UCX_TLS=rc_verbs,ud_verbs:aux -- \
	-t ucp_put_bw -s 65536 -w 10
ucx_pair ucp_ud_tag_bw $((100 * 16384)) 100 UCX_TLS=ud_verbs -- \
	-t tag_bw -s 16384 -w 10
ucx_pair ucp_ud_tag_lat $((200 * 8)) 200 UCX_TLS=ud_verbs -- \
	-t tag_lat -w 20

barrier ucx-done
assert_eq "$(rdma resource show qp | grep -c ' type RC \| type UD ' || true)" 0 \
	"user QPs left after ucx_perftest"
rdma link delete stellar0
stellar_unload
log "apps_ucx OK"
