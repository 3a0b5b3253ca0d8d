#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# The librdmacm examples between two hosts, stellar on both ends:
# rping with data verification at sizes below and above the MTU,
# ucmatose (RC), udaddy (UD) and rdma_server/rdma_client.  All of them
# resolve addresses and connect through the RDMA CM, so they also
# exercise the GSI QP (QP1) and the kernel CM over RoCEv2.
# stellar-test: vms=2 links=1 timeout=900

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

stellar_pair_up

# The examples' fixed ports: ucmatose and rdma_server 7471, udaddy 7174.
CMA_PORT=7471
UDADDY_PORT=7174

# rping_check SIZE COUNT PORT: rping -v -V, server on a; the client must
# print COUNT verified pings and no mismatch.
# shellcheck disable=SC2034 # srv and cli are used by name in pair_run
rping_check() {
	local size=$1 count=$2 port=$3 pings
	local -a srv cli

	srv=(rping -s -v -V -C "$count" -S "$size" -a "$(my_ip 1)" -p "$port")
	cli=(rping -c -v -V -C "$count" -S "$size" -a "$(peer_ip 1)" -p "$port")
	pair_run "rping_$size" a "cm:$port" 120 srv cli
	[ "$PAIR_ROLE" = client ] || return 0
	assert_not_contains "$(cat "$PAIR_LOG")" mismatch "rping -S $size output"
	pings=$(grep -c 'ping data: rdma-ping-' "$PAIR_LOG" || true)
	assert_eq "$pings" "$count" "verified pings of rping -S $size"
}

# example_pair NAME READY SERVER_ARRAY CLIENT_ARRAY: run an example;
# both ends must report success ("return status 0" or "end 0").
example_pair() {
	pair_run "$1" a "$2" 120 "$3" "$4"
	grep -qE 'return status 0|end 0' "$PAIR_LOG" ||
		fail "$1 ($PAIR_ROLE) did not report success:"$'\n'"$(tail -20 "$PAIR_LOG")"
}

port=18800
for size in 64 1024 4096 65000; do
	port=$((port + 1))
	rping_check "$size" 20 "$port"
done

# shellcheck disable=SC2034 # arrays used by name in pair_run
{
	ucma_srv=(ucmatose -b "$(my_ip 1)" -c 2 -C 20 -S 4096)
	ucma_cli=(ucmatose -s "$(peer_ip 1)" -c 2 -C 20 -S 4096)
	udaddy_srv=(udaddy -b "$(my_ip 1)" -c 2 -C 20 -S 512)
	udaddy_cli=(udaddy -s "$(peer_ip 1)" -c 2 -C 20 -S 512)
	rserver=(rdma_server -s "$(my_ip 1)" -p "$CMA_PORT")
	rclient=(rdma_client -s "$(peer_ip 1)" -p "$CMA_PORT")
}
example_pair ucmatose "cm:$CMA_PORT" ucma_srv ucma_cli
example_pair udaddy "cm:$UDADDY_PORT" udaddy_srv udaddy_cli
example_pair rdma_server_client "cm:$CMA_PORT" rserver rclient

barrier rdmacm-done
rdma link delete stellar0
stellar_unload
log "verbs_rdmacm OK"
