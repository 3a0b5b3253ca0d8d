#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# The syscall-free doorbell: in a VM with two CPUs and db_poll_interval
# set, the kernel's poller sees posted sends by itself, so a pingpong
# client makes far fewer post_send system calls than it posts sends.  With the poller off every send rings the
# system-call doorbell.  Both QPs sit on one device, reached over a veth.
# stellar-test: vms=1 timeout=400 smp=2

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

ITERS=400

[ "$(nproc)" -ge 2 ] || fail "this test needs 2 vCPUs, the VM has $(nproc)"
stellar_load db_poll_interval=20
veth_pair veth0 veth0p 10.40.0.1/24
rdma link add stellar0 type stellar netdev veth0
G=$(gid_index stellar0 10.40.0.1)

# loop_doorbells TRACE: verbs commands (ioctl on the uverbs file; rdma-core
# sends even its write() commands that way) that an strace -f log shows
# between ibv_rc_pingpong's two gettimeofday() calls, which bracket its
# send/receive loop: there the only command is the post_send doorbell.
loop_doorbells() {
	awk '/openat\(.*"\/dev\/infiniband\/uverbs[0-9]+"/ { fd = $NF; next }
		/gettimeofday\(/ { marks++; next }
		marks == 1 && fd != "" && index($0, "ioctl(" fd ", RDMA_VERBS_IOCTL") { n++ }
		END { print (marks >= 2 ? n + 0 : -1) }' "$1"
}

# doorbell_run NAME: run ibv_rc_pingpong with the client under strace;
# sets DOORBELLS to the number of doorbell system calls in its loop.
doorbell_run() {
	local name=$1 trace=$STELLAR_OUT/$1.strace port=18900 pid

	ibv_rc_pingpong -d stellar0 -g "$G" -p $port -n $ITERS -s 64 -c \
		>"$STELLAR_OUT/$name.server.log" 2>&1 &
	pid=$!
	wait_for 10 tcp_listening $port
	timeout 200 strace -f -e trace=openat,ioctl,gettimeofday -o "$trace" \
		ibv_rc_pingpong -d stellar0 -g "$G" -p $port -n $ITERS -s 64 -c \
		10.40.0.1 >"$STELLAR_OUT/$name.client.log" 2>&1 ||
		fail "$name: client failed: $(tail -5 "$STELLAR_OUT/$name.client.log")"
	wait "$pid" || fail "$name: server failed: $(tail -5 "$STELLAR_OUT/$name.server.log")"
	grep -q "$ITERS iters" "$STELLAR_OUT/$name.client.log" ||
		fail "$name: no result line in the client log"
	grep -q 'uverbs[0-9]*", O_RDWR' "$trace" ||
		fail "$name: the trace shows no uverbs device being opened"
	DOORBELLS=$(loop_doorbells "$trace")
	[ "$DOORBELLS" -ge 0 ] || fail "$name: no gettimeofday() pair around the loop in $trace"
	log "$name: $DOORBELLS doorbell system calls for $ITERS sends"
}

doorbell_run polled
polled=$DOORBELLS
"$STELLAR_REPO/tools/stellar-tool" set --device stellar0 --db-poll-interval 0 ||
	fail "stellar-tool set --db-poll-interval 0 failed"
doorbell_run syscall
syscall=$DOORBELLS
log "doorbell system calls: poller on $polled, poller off $syscall"
# The client posts its first send before the timed loop.
[ "$syscall" -ge $((ITERS - 1)) ] ||
	fail "poller off: $syscall doorbells in the loop for $ITERS sends; every send should ring"
[ $((polled * 4)) -lt "$syscall" ] ||
	fail "poller on: $polled doorbells against $syscall without it; most sends should need none"

rdma link delete stellar0
stellar_unload
log "provider_doorbell OK"
