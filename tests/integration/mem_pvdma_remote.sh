#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# PVDMA between two hosts: remote WRITE, READ, atomics and SEND into
# memory pinned lazily on first access on the far side.  Data is checked
# by ibv_rc_pingpong -c; after each program exits, every pin it caused is
# released on both VMs.
# stellar-test: vms=2 links=1 timeout=600

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

# pvdma_value LABEL: a line of stellar0's section of pvdma_stats.
pvdma_value() {
	awk -v key="$1:" '
		/^\[/ { in_dev = ($0 == "[stellar0]"); next }
		in_dev && index($0, key) == 1 { sub(/^[^:]*: */, ""); print; exit }
	' /proc/stellar/pvdma_stats
}

# no_pins_left NAME: the program of step NAME left nothing pinned here.
no_pins_left() {
	wait_for 10 test "$(pvdma_value 'Pinned bytes')" = 0 ||
		fail "$1: $(pvdma_value 'Pinned bytes') bytes still pinned"
	assert_eq "$(pvdma_value 'Active mappings')" 0 "$1: mappings left"
}

stellar_pair_up
g=$STELLAR_GID
assert_contains "$(cat /proc/stellar/stellar0/settings)" "pin_mode: lazy" \
	"default pin mode"

client_server rc_pingpong_checked 18700 120 -- \
	ibv_rc_pingpong -d stellar0 -g "$g" -p 18700 -c -s 65536 -n 100
no_pins_left rc_pingpong_checked
faults=$(pvdma_value 'Page faults')
[ "$faults" -gt 0 ] || fail "the pingpong buffers were never pinned on demand"

port=18710
for test in ib_write_bw ib_read_bw ib_atomic_bw; do
	port=$((port + 1))
	perftest_pair "$test" a stellar0 "$g" "$port" 120 "$test" -n 200
	no_pins_left "$test"
done
[ "$(pvdma_value 'Page faults')" -gt "$faults" ] ||
	fail "perftest buffers were never pinned on demand"
[ "$(pvdma_value 'Pin errors')" = 0 ] || fail "pin errors: $(cat /proc/stellar/pvdma_stats)"
log "$(cat /proc/stellar/pvdma_stats /proc/stellar/emtt_stats)"
barrier finished
rdma link delete stellar0
stellar_unload
