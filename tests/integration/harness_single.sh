#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Harness sanity check, one VM: the guest boots with the repo visible at
# its host path, has a writable overlay root, and can build a network
# namespace joined by a veth pair that passes traffic.
# stellar-test: vms=1 timeout=120

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

cleanup() {
	ip netns del hs_ns1 2>/dev/null || true
}
trap cleanup EXIT

log "kernel $(uname -r), role $STELLAR_ROLE, repo $STELLAR_REPO"
assert_eq "$STELLAR_ROLE" a "role"
assert_eq "$(id -u)" 0 "uid"
[ -f "$STELLAR_REPO/tests/vm/lib.sh" ] || fail "repo not visible at $STELLAR_REPO"
[ -d "/lib/modules/$(uname -r)" ] || fail "no modules for the running kernel"

# The root is a writable overlay; the host's files stay untouched.
echo probe >/etc/stellar-overlay-probe
assert_eq "$(cat /etc/stellar-overlay-probe)" probe "overlay write"
assert_contains "$(grep ' / ' /proc/mounts)" overlay "root mount"

# Debugfs is mounted for tests that read driver state.
assert_contains "$(grep debugfs /proc/mounts)" /sys/kernel/debug "mounts"

veth_netns hs_veth0 hs_veth1 hs_ns1 192.168.77.1/24 192.168.77.2/24

assert_ok ping -c 3 -i 0.2 -W 2 192.168.77.2
assert_contains "$ASSERT_OUTPUT" " 0% packet loss" "ping init_net -> ns1"
assert_ok ip netns exec hs_ns1 ping -c 2 -i 0.2 -W 2 192.168.77.1
assert_contains "$ASSERT_OUTPUT" " 0% packet loss" "ping ns1 -> init_net"

# A failing command must be detected by assert_fails.
assert_fails ping -c 1 -W 1 192.168.78.9

# Values work within one VM (no peer: get_val reads our own).
put_val answer 42
assert_eq "$(get_val answer)" 42 "put_val/get_val"
barrier noop

log "harness_single OK"
