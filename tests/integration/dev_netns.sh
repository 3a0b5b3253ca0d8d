#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Devices in network namespaces (rdma core in shared netns mode): one
# device in ns1 and one in ns2 at once, each with its own UDP 4791
# socket, plus one in init_net; stellar-tool in a namespace sees its
# device only; removing a namespace removes its device.
# stellar-test: vms=1 timeout=300

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

# netns_with_veth NS DEV ADDR: DEV in NS (its peer DEVp stays in init_net).
netns_with_veth() {
	ip netns add "$1"
	ip link add "$2" type veth peer name "$2p"
	ip link set "$2" netns "$1"
	ip -n "$1" addr add "$3" dev "$2"
	ip -n "$1" link set "$2" up
	ip -n "$1" link set lo up
	ip link set "$2p" up
}

stellar_load
assert_contains "$(rdma system show)" "netns shared" "rdma system show"
netns_with_veth ns1 veth1 10.31.0.1/24
netns_with_veth ns2 veth2 10.32.0.1/24
veth_pair veth0 veth0p 10.30.0.1/24 10.30.0.2/24

log "device in ns1"
ip netns exec ns1 rdma link add stellar1 type stellar netdev veth1
# The kernel names the netdev only to requests from the device's netns.
assert_contains "$(ip netns exec ns1 rdma link show)" \
	"netdev veth1" \
	"rdma link show in ns1"
assert_contains "$(rdma_link_line stellar1)" "link stellar1/1 " "rdma link show"
wait_for 10 udp_4791_bound ns1

log "device in ns2 at the same time"
ip netns exec ns2 rdma link add stellar2 type stellar netdev veth2
wait_for 10 udp_4791_bound ns2
udp_4791_bound ns1 || fail "ns1 lost its 4791 socket"

log "device in init_net"
rdma link add stellar0 type stellar netdev veth0
wait_for 10 udp_4791_bound

log "all three work"
for dev in stellar0 stellar1 stellar2; do
	wait_for 15 ib_port_state_is "$dev" PORT_ACTIVE
	[ -f "/proc/stellar/$dev/stats" ] || fail "/proc/stellar/$dev/stats missing"
done
wait_for 15 ib_has_gid stellar0 ::ffff:10.30.0.1
wait_for 15 ib_has_gid stellar1 ::ffff:10.31.0.1
wait_for 15 ib_has_gid stellar2 ::ffff:10.32.0.1

log "stellar-tool in ns1 sees stellar1 only"
TOOL=$STELLAR_REPO/tools/stellar-tool
out=$(ip netns exec ns1 "$TOOL" status 2>&1) || fail "status in ns1: $out"
assert_contains "$out" "stellar1 (index " "status in ns1"
assert_not_contains "$out" "stellar0" "status in ns1"
assert_not_contains "$out" "stellar2" "status in ns1"
assert_contains "$(ip netns exec ns1 "$TOOL" qps --device stellar1)" \
	"qp 1: type GSI" "qps in ns1"

log "deleting ns1 removes stellar1 only"
ip netns del ns1
wait_for 20 rdma_link_gone stellar1
wait_for 5 test ! -e /proc/stellar/stellar1
assert_contains "$(rdma_link_line stellar2)" "state ACTIVE" "stellar2 after ns1 gone"
udp_4791_bound ns2 || fail "ns2 lost its 4791 socket"

log "delete from inside the namespace, then unload"
ip netns exec ns2 rdma link delete stellar2
rdma link delete stellar0
assert_eq "$(rdma link show | grep stellar || true)" "" "rdma link show at end"
stellar_unload
ip netns del ns2
log "dev_netns OK"
