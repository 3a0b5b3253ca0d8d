#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Harness sanity check, two VMs joined by two links: each link has the
# documented name and address, the VMs reach each other over both, and
# barriers and put_val/get_val carry values between them.
# stellar-test: vms=2 links=2 timeout=180

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

assert_eq "$STELLAR_VMS" 2 "STELLAR_VMS"
assert_eq "$STELLAR_LINKS" 2 "STELLAR_LINKS"
case "$STELLAR_ROLE" in
a) index=1 ;;
b) index=2 ;;
*) fail "unexpected role $STELLAR_ROLE" ;;
esac

for link in 1 2; do
	dev=$(link_dev "$link")
	assert_eq "$dev" "eth$((link - 1))" "netdev of link $link"
	assert_eq "$(my_ip "$link")" "10.$link.0.$index" "my_ip $link"
	assert_eq "$(cat "/sys/class/net/$dev/address")" \
		"$(printf '52:54:00:5e:%02x:%02x' "$link" "$index")" "MAC of $dev"
	assert_contains "$(ip -4 addr show dev "$dev")" "$(my_ip "$link")/24" \
		"addresses of $dev"
done
assert_fails link_dev 3

barrier links-up
for link in 1 2; do
	assert_ok ping -c 3 -i 0.2 -W 5 -I "$(link_dev "$link")" "$(peer_ip "$link")"
	assert_contains "$ASSERT_OUTPUT" " 0% packet loss" "ping over link $link"
	log "link $link: $(my_ip "$link") -> $(peer_ip "$link") OK"
done

# Values travel both ways; each VM reads what the other published.
put_val hello "from-$STELLAR_ROLE $(my_ip 2)"
assert_eq "$(get_val hello)" "from-$(peer_role) $(peer_ip 2)" "value from peer"
barrier values-read

# A barrier really waits: b publishes a value just before the barrier,
# late; once a passes the barrier the value must already be there.
if [ "$STELLAR_ROLE" = b ]; then
	sleep 2
	put_val late yes
fi
barrier after-late
if [ "$STELLAR_ROLE" = a ]; then
	assert_eq "$(get_val late 0)" yes "value published before the barrier"
fi

barrier finished
log "harness_pair OK"
