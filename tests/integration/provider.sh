#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# The rdma-core provider: libibverbs finds and loads libstellar for a
# stellar device, opens it (ucontext with our ABI) and queries it,
# without any provider warnings; thread and parent domains with the
# application's allocators, and a context, PD and MR imported by fd and
# handles, carry checked traffic; memory windows of type 1 and type 2
# (helpers/mem_windows.c) bind, open and close as IBTA says; XRC
# (helpers/xrc.c) delivers to the SRQ each request names.
# stellar-test: vms=1 timeout=300

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

# run_checked CMD...: CMD succeeds with an empty stderr; prints stdout.
run_checked() {
	local err=$STELLAR_OUT/stderr.txt rc=0

	IBV_SHOW_WARNINGS=1 "$@" >"$STELLAR_OUT/stdout.txt" 2>"$err" || rc=$?
	[ "$rc" = 0 ] || fail "'$*' exited with $rc: $(cat "$err")"
	[ ! -s "$err" ] || fail "'$*' printed to stderr: $(cat "$err")"
	cat "$STELLAR_OUT/stdout.txt"
}

stellar_load
veth_pair veth0 veth0p 10.50.0.1/24 10.50.0.2/24
rdma link add stellar0 type stellar netdev veth0

out=$(run_checked ibv_devices)
assert_contains "$out" stellar0 "ibv_devices"
out=$(run_checked ibv_devinfo -d stellar0)
assert_contains "$out" "hca_id:	stellar0" "ibv_devinfo"
assert_contains "$out" "transport:			InfiniBand (0)" "ibv_devinfo"
out=$(run_checked ibv_devinfo -v -d stellar0)
assert_contains "$out" "link_layer:		Ethernet" "ibv_devinfo -v"

# The uverbs device reports the ABI version the provider expects.
uverbs=$(grep -lx stellar0 /sys/class/infiniband_verbs/uverbs*/ibdev) ||
	fail "no uverbs device for stellar0"
abi=$(grep -E '^#define STELLAR_UVERBS_ABI_VERSION' \
	"$STELLAR_REPO/include/uapi/stellar-abi.h" | awk '{ print $3 }')
assert_eq "$(cat "$(dirname "$uverbs")/abi_version")" "$abi" "uverbs abi_version"

# helper NAME: build helpers/NAME.c and run it on stellar0 with the GID
# of veth0's address; it must print "NAME: OK".
helper() {
	local out

	gcc -O2 -Wall -o "/tmp/$1" \
		"$STELLAR_REPO/tests/integration/helpers/$1.c" -libverbs ||
		fail "cannot build helpers/$1.c"
	out=$(run_checked "/tmp/$1" stellar0 "$(gid_index stellar0 10.50.0.1)")
	assert_contains "$out" "$1: OK" "$1"
	log "$out"
}

# Thread and parent domains with the application's allocators, on a QP
# pair connected to itself.
helper parent_domain
# A context, PD and MR imported by fd and handles.
helper import_verbs
# Memory windows of type 1 and 2: binds, remote use, invalidation.
helper mem_windows
# XRC: SRQs of one domain reached through one send QP, and refusals.
helper xrc

rdma link delete stellar0
stellar_unload
log "provider OK"
