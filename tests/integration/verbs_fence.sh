#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# The send queue's ordering rules for READs and atomics
# (helpers/rd_fence.c): with one READ or atomic outstanding, fenced WRITEs
# carry the data of the READs before them, fetch-and-adds in a row return
# the counts in order, and READs in a row all place their data.  The
# requester waits at each of those WQEs and the completer must let it go
# when the READ or atomic before finishes: no WQE may wait for the
# retransmission timer.  The local ACK timeout never expires (timeouts
# stays 0); the RTT-based probe of the wire extensions may fire once or
# twice when the emulated VM stalls a few milliseconds, but a requester
# left to the timer at its fenced WQEs would retransmit dozens of times.
# stellar-test: vms=1 timeout=300

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

stellar_load
veth_pair veth0 veth0p 10.51.0.1/24 10.51.0.2/24
rdma link add stellar0 type stellar netdev veth0
gid=$(gid_index stellar0 10.51.0.1)

gcc -O2 -Wall -o /tmp/rd_fence \
	"$STELLAR_REPO/tests/integration/helpers/rd_fence.c" -libverbs ||
	fail "cannot build helpers/rd_fence.c"
out=$(/tmp/rd_fence stellar0 "$gid" 2>&1) || fail "rd_fence: $out"
assert_contains "$out" "rd_fence: OK" "rd_fence"
log "$out"
assert_eq "$(stellar_stat stellar0 timeouts)" 0 "timeouts after rd_fence"
resent=$(stellar_stat stellar0 retransmits)
[ "$resent" -le 3 ] || fail "$resent retransmits during rd_fence"

rdma link delete stellar0
stellar_unload
log "verbs_fence OK"
