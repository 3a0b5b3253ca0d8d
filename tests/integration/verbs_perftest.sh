#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# perftest between two hosts, stellar on both ends: the RC bandwidth and
# latency tests for WRITE, READ, SEND and atomics, SEND over UD, and
# SEND/WRITE with the connection set up by the RDMA CM (-R).  Iteration
# counts are small so each run takes seconds under TCG; every client must
# print a result line with a positive figure.  UD runs for a time, not a
# count: the emulated link (a host UDP socket) drops datagrams when its
# receive buffer is full, and a server counting them would wait forever.
# memdebug=off: perftest's bandwidth and atomic-rate figures, and its
# clock calibration, need the CPU that SLUB debugging takes under TCG
# (make check MEMDEBUG=1 forces it on).
# stellar-test: vms=2 links=1 timeout=900 memdebug=off

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

stellar_pair_up
g=$STELLAR_GID

# perf NAME PORT ARGS...: one perftest run, server on VM a.
perf() {
	local name=$1 port=$2

	shift 2
	perftest_pair "$name" a stellar0 "$g" "$port" 120 "$@"
}

log "RC bandwidth, 64 KB messages"
perf write_bw 18701 ib_write_bw -n 50
perf read_bw 18702 ib_read_bw -n 50
perf send_bw 18703 ib_send_bw -n 50
perf atomic_bw 18704 ib_atomic_bw -n 200

log "RC latency"
perf write_lat 18711 ib_write_lat -n 200
perf read_lat 18712 ib_read_lat -n 200
perf send_lat 18713 ib_send_lat -n 200
perf atomic_lat 18714 ib_atomic_lat -n 200

log "RC bandwidth above and below the MTU"
perf write_bw_4k 18721 ib_write_bw -s 4096 -n 100
perf send_bw_100 18722 ib_send_bw -s 100 -n 200

log "UD"
perf send_bw_ud 18731 ib_send_bw -c UD -s 1024 -D 3 -f 1
if [ "$PAIR_ROLE" = server ]; then
	ud_received=$(perftest_value "$PAIR_LOG" 2)
	log "send_bw_ud: server received $ud_received messages"
fi

log "RDMA CM"
perf send_bw_cm 18741 ib_send_bw -R -n 50
perf write_bw_cm 18742 ib_write_bw -R -n 50
perf send_lat_cm 18743 ib_send_lat -R -n 100

barrier perftest-done
assert_eq "$(rdma resource show qp | grep -c ' type RC \| type UD ' || true)" 0 \
	"user QPs left after perftest"
rdma link delete stellar0
stellar_unload
log "verbs_perftest OK"
