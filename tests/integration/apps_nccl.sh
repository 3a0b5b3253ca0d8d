#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# NCCL's IB transport without a GPU: helpers/nccl_replay.c replays the
# verbs usage of NCCL's net_ib (device and GID choice through sysfs,
# ibv_reg_mr_iova2 with RELAXED_ORDERING, the DMA-BUF and ECE probes, 1 to
# 128 QPs per connection with 128-byte aligned splits, chains of
# unsignalled RDMA WRITEs ending in a signalled WRITE WITH IMM into
# zero-SGE receives, clear-to-send WRITEs into the sender's FIFO, the
# adaptive-routing mode, the flush READ on a QP connected to itself, and
# NCCL's timeout and retry settings), checking every byte, every immediate
# and the order of every QP's completions.  VM a receives, VM b sends:
#   - stellar on both, QPs on one path (spray_paths 1);
#   - stellar on both with spray_paths 4 (the QPs must use their wire
#     extensions, that is spray);
#   - rdma_rxe on VM a against stellar on VM b, receiving on each side.
# make check's short form (lib.sh long_run) runs fewer iterations, and
# every run only in the first round (the others: SHORT_RUNS).
# stellar-test: vms=2 links=1 timeout=900

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

TOOL=$STELLAR_REPO/tools/stellar-tool
PROG=/tmp/nccl_replay
gcc -O2 -Wall -o "$PROG" "$STELLAR_REPO/tests/integration/helpers/nccl_replay.c" \
	-libverbs || fail "cannot build helpers/nccl_replay.c"
PORT=19400
ITERS=100
! long_run || ITERS=1000

# The runs of one round: name and nccl_replay options.
RUNS=(
	"q1:-q 1 -n $ITERS"
	"q4_ar:-q 4 -a -n $((ITERS / 2))"
	"q2_m4_flush:-q 2 -m 4 -f -n $((ITERS / 4))"
	"q128:-q 128 -S 65536 -n $((ITERS / 8))"
	"q1_inline_cts:-q 1 -i -n $((ITERS / 2))"
)
# The runs of the later rounds in the short form.
SHORT_RUNS="q4_ar q2_m4_flush"

# replay NAME RECEIVER_ROLE DEV OPTIONS...: one nccl_replay pair, the
# receiver on RECEIVER_ROLE; each VM uses DEV with the GID of its link 1
# address.
# shellcheck disable=SC2034 # srv and cli are used by name in pair_run
replay() {
	local name=$1 receiver=$2 dev=$3
	local -a srv cli

	shift 3
	PORT=$((PORT + 1))
	srv=("$PROG" -s -p "$PORT" -d "$dev" -G "$(my_ip 1)" "$@")
	cli=("$PROG" -c "$(peer_ip 1)" -p "$PORT" -d "$dev" -G "$(my_ip 1)"
		"$@")
	pair_run "$name" "$receiver" "tcp:$PORT" 300 srv cli
	assert_contains "$(cat "$PAIR_LOG")" "OK:" "$name on $dev"
	log "$name ($PAIR_ROLE, $dev): $(grep -o 'OK:.*' "$PAIR_LOG")"
}

# round PREFIX RECEIVER_ROLE DEV [all]: the runs of RUNS (in the short
# form without "all", those in SHORT_RUNS).
round() {
	local run name opts

	for run in "${RUNS[@]}"; do
		name=${run%%:*}
		opts=${run#*:}
		[ "${4:-}" = all ] || long_run || [[ " $SHORT_RUNS " == *" $name "* ]] ||
			continue
		# shellcheck disable=SC2086 # the options are words
		replay "$1_$name" "$2" "$3" $opts
	done
}

stellar_load
rdma link add stellar0 type stellar netdev "$(link_dev 1)"
barrier stellar-up
round single a stellar0 all
if [ "$STELLAR_ROLE" = b ]; then
	assert_contains "$(cat "$STELLAR_OUT/single_q1.log")" \
		"sysfs device /sys/devices/" "the sysfs device link NCCL reads"
fi

# The same over 4 paths: the data QPs spray with the wire extensions.
"$TOOL" set --device stellar0 --spray-paths 4 ||
	fail "cannot set spray_paths 4"
barrier spray-up
round spray a stellar0
if [ "$STELLAR_ROLE" = b ]; then
	used=$("$TOOL" -j paths --device stellar0 |
		jq '[.paths[] | select(.packets > 0)] | length')
	log "spray: $used paths carried packets"
	[ "$used" -ge 4 ] || fail "spray: only $used paths carried packets"
fi
barrier spray-done
rdma link delete stellar0
stellar_unload

# rdma_rxe on VM a, stellar on VM b: each side receives once.
if [ "$STELLAR_ROLE" = a ]; then
	rxe_up "$(link_dev 1)"
	dev=rxe0
else
	stellar_load
	rdma link add stellar0 type stellar netdev "$(link_dev 1)"
	dev=stellar0
fi
barrier interop-up
round rxe_receives a "$dev"
round stellar_receives b "$dev"
barrier interop-done
if [ "$STELLAR_ROLE" = a ]; then
	rxe_down
else
	rdma link delete stellar0
	stellar_unload
fi
log "apps_nccl: NCCL's verbs pattern passed over stellar, with spray, and against rdma_rxe"
