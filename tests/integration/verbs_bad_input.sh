#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Bad input from processes: R_Keys of consecutive registrations differ in
# their key byte; remote access violations (wrong R_Key or key byte, beyond
# the MR, missing access rights) end in IBV_WC_REM_ACCESS_ERR at the
# requester with the responder's memory untouched and an access error
# event on the responder QP; invalid work requests
# are refused at once; receives of a QP in error are flushed; a SEND whose
# send ring entry the process rewrites while RNR NAKs hold it delivers the
# bytes posted (the kernel copies a WQE once); a process
# killed with SIGKILL in the middle of a transfer leaves no resource behind
# and the module unloads.  One VM: the QPs talk to each other through one
# device (helpers/verbs_bad.c, ib_write_bw in loopback).
# stellar-test: vms=1 timeout=400

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

HELPERS=$STELLAR_REPO/tests/integration/helpers

stellar_load
veth_pair veth0 veth0p 10.50.0.1/24
rdma link add stellar0 type stellar netdev veth0
G=$(gid_index stellar0 10.50.0.1)

log "bad requests (helpers/verbs_bad.c)"
gcc -O2 -Wall -I"$STELLAR_REPO/providers/stellar" \
	-I"$STELLAR_REPO/include/uapi" -o /tmp/verbs_bad "$HELPERS/verbs_bad.c" \
	-libverbs ||
	fail "cannot build helpers/verbs_bad.c"
status=0
timeout 300 /tmp/verbs_bad stellar0 "$G" >"$STELLAR_OUT/verbs_bad.log" 2>&1 ||
	status=$?
sed 's/^/    /' "$STELLAR_OUT/verbs_bad.log"
[ "$status" = 0 ] || fail "verbs_bad exited with $status"
assert_eq "$(grep -c '^ok: ' "$STELLAR_OUT/verbs_bad.log")" 46 "checks that passed"

# user_resources KIND: lines of "rdma resource show KIND" owned by a process.
user_resources() {
	rdma resource show "$1" | grep -w 'stellar0\(/1\)\?' | grep -v 'comm \[' || true
}

log "a process killed in the middle of a transfer"
ib_write_bw -d stellar0 -x "$G" -p 18960 -D 60 >"$STELLAR_OUT/bw.server.log" 2>&1 &
server=$!
wait_for 10 tcp_listening 18960
ib_write_bw -d stellar0 -x "$G" -p 18960 -D 60 10.50.0.1 \
	>"$STELLAR_OUT/bw.client.log" 2>&1 &
client=$!
rx_moving() {
	[ "$(stellar_stat stellar0 rx_bytes)" -gt 1000000 ]
}
wait_for 60 rx_moving
[ -n "$(user_resources qp)" ] || fail "no user QP listed during the transfer"
kill -KILL "$client" "$server"
wait "$client" 2>/dev/null || true
wait "$server" 2>/dev/null || true
no_user_resources() {
	local kind

	for kind in qp cq mr pd; do
		[ -z "$(user_resources "$kind")" ] || return 1
	done
}
for _ in $(seq 100); do
	no_user_resources && break
	sleep 0.2
done
no_user_resources ||
	fail "resources left 20 s after SIGKILL:"$'\n'"$(rdma resource show dev stellar0)"
assert_eq "$(grep -c 'type RC' /proc/stellar/stellar0/qps || true)" 0 \
	"RC QPs in /proc/stellar/stellar0/qps after the kill"

rdma link delete stellar0
stellar_unload
log "verbs_bad_input OK"
