#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Bad input gets a clear error and leaves nothing behind: invalid
# "rdma link add" requests and out-of-range module parameters.
# stellar-test: vms=1 timeout=300

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

# Everything a failed request must leave unchanged.
device_state() {
	rdma link show
	echo "--- /proc/stellar/devices"
	cat /proc/stellar/devices
	echo "--- ib devices"
	ls /sys/class/infiniband
}

# rejected_link_add ARGS...: "rdma link add ARGS" fails, no residue.
rejected_link_add() {
	local before

	before=$(device_state)
	assert_fails rdma link add "$@"
	assert_eq "$(device_state)" "$before" "device state after 'rdma link add $*'"
}

# rejected_param PARAM=VALUE: insmod fails and the kernel log says why.
rejected_param() {
	local param=${1%%=*}

	klog_mark
	assert_fails insmod "$STELLAR_KO" "$1"
	! stellar_loaded || fail "module loaded with $1"
	assert_contains "$(klog_since_mark)" "$param" "kernel log after insmod $1"
	log "kernel log: $(klog_since_mark | grep -m 1 "$param")"
}

log "out-of-range module parameters"
stellar_load_deps
rejected_param spray_paths=0
rejected_param spray_paths=100000
rejected_param spray_paths=abc
[ ! -e /proc/stellar ] || fail "/proc/stellar left behind by a failed insmod"

stellar_load --kernel-only
veth_pair veth0 veth0p 10.20.0.1/24 10.20.0.2/24
veth_pair veth1 veth1p 10.21.0.1/24 10.21.0.2/24
rdma link add stellar0 type stellar netdev veth0

log "invalid rdma link add requests"
rejected_link_add stellar1 type stellar netdev nosuchdev
rejected_link_add stellar0 type stellar netdev veth1
rejected_link_add stellar1 type stellar netdev veth0
rejected_link_add foo0 type stellar netdev veth1

# The good device is still there and usable after all that.
assert_contains "$(rdma_link_line stellar0)" "netdev veth0" "stellar0 after bad requests"
rdma link add stellar1 type stellar netdev veth1
rdma link delete stellar1
rdma link delete stellar0
assert_eq "$(rdma link show | grep stellar || true)" "" "rdma link show at end"
stellar_unload
[ ! -e /proc/stellar ] || fail "/proc/stellar left behind after rmmod"
log "dev_bad_input OK"
