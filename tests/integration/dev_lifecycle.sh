#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Device lifecycle: rdma link add/show/delete, what ibv_devinfo (port
# speed and width from the netdev: veth, a bond of two veths) and
# /proc/stellar report, port state following the netdev, removal of a
# device with its netdev, rmmod with devices present, and reload.
# stellar-test: vms=1 timeout=300

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

PARAMS="rx_buf_size spray_paths emtt_cache_size db_poll_interval"

stellar_load
for param in $PARAMS; do
	[ -e "/sys/module/virtio_stellar/parameters/$param" ] ||
		fail "module parameter $param missing"
	log "param $param = $(cat "/sys/module/virtio_stellar/parameters/$param")"
done

# Two independent veth pairs: deleting one must not touch the other.
veth_pair veth0 veth0p 10.20.0.1/24 10.20.0.2/24
veth_pair veth1 veth1p 10.21.0.1/24 10.21.0.2/24

log "add stellar0 on veth0"
rdma link add stellar0 type stellar netdev veth0
line=$(rdma_link_line stellar0)
assert_contains "$line" "link stellar0/1 " "rdma link show"
assert_contains "$line" "netdev veth0" "rdma link show"
wait_for 10 ibv_lists stellar0

wait_for 15 ib_port_state_is stellar0 PORT_ACTIVE
info=$(ibv_devinfo -v -d stellar0)
assert_contains "$info" "hca_id:	stellar0" "ibv_devinfo"
assert_contains "$info" "transport:			InfiniBand (0)" "ibv_devinfo"
assert_contains "$info" "link_layer:		Ethernet" "ibv_devinfo"

log "port speed from the netdev: veth reports 10000 Mb/s"
assert_contains "$info" "active_width:		1X (1)" "ibv_devinfo on veth"
assert_contains "$info" "active_speed:		10.0 Gbps (4)" "ibv_devinfo on veth"
assert_eq "$(cat /sys/class/infiniband/stellar0/ports/1/rate)" \
	"10 Gb/sec (1X QDR)" "port rate on veth"
[ ! -e /sys/class/infiniband/stellar0/device ] ||
	fail "stellar0 on veth0 has a device link: $(readlink -f /sys/class/infiniband/stellar0/device)"

log "GIDs follow the netdev's addresses"
wait_for 15 ib_has_gid stellar0 ::ffff:10.20.0.1
wait_for 15 has_ipv6_link_local veth0
ll=$(ipv6_link_local veth0)
wait_for 15 ib_has_gid stellar0 "$ll"
ip addr add 10.20.5.1/24 dev veth0
wait_for 15 ib_has_gid stellar0 ::ffff:10.20.5.1
ip addr del 10.20.5.1/24 dev veth0
wait_for 15 eval '! ib_has_gid stellar0 ::ffff:10.20.5.1'

log "/proc/stellar"
assert_contains "$(cat /proc/stellar/devices)" stellar0 "/proc/stellar/devices"
[ -f /proc/stellar/stellar0/stats ] || fail "/proc/stellar/stellar0/stats missing"
assert_contains "$(cat /proc/stellar/stellar0/stats)" rx_packets "stats"

log "port state follows veth0"
ip link set veth0 down
wait_for 15 ib_port_state_is stellar0 PORT_DOWN
assert_contains "$(rdma_link_line stellar0)" "state DOWN" "rdma link show"
ip link set veth0 up
wait_for 15 ib_port_state_is stellar0 PORT_ACTIVE
assert_contains "$(rdma_link_line stellar0)" "state ACTIVE" "rdma link show"

log "delete and re-add"
rdma link delete stellar0
assert_eq "$(rdma_link_line stellar0)" "" "rdma link show after delete"
! ibv_lists stellar0 || fail "ibv_devices still lists stellar0"
[ ! -e /proc/stellar/stellar0 ] || fail "/proc/stellar/stellar0 still exists"
assert_not_contains "$(cat /proc/stellar/devices)" stellar0 "/proc/stellar/devices"
rdma link add stellar0 type stellar netdev veth0
wait_for 15 ib_port_state_is stellar0 PORT_ACTIVE

log "second device on veth1"
rdma link add stellar1 type stellar netdev veth1
assert_contains "$(rdma_link_line stellar1)" "netdev veth1" "rdma link show"
wait_for 15 ib_port_state_is stellar1 PORT_ACTIVE
wait_for 15 ib_has_gid stellar1 ::ffff:10.21.0.1
! ib_has_gid stellar1 ::ffff:10.20.0.1 || fail "stellar1 has veth0's GID"
assert_contains "$(cat /proc/stellar/devices)" stellar1 "/proc/stellar/devices"

log "deleting the netdev removes its device only"
ip link del veth0
wait_for 15 rdma_link_gone stellar0
! ibv_lists stellar0 || fail "ibv_devices still lists stellar0"
wait_for 5 test ! -e /proc/stellar/stellar0
assert_contains "$(rdma_link_line stellar1)" "state ACTIVE" "stellar1 after veth0 gone"

log "a bond of two veths reports their sum, 20000 Mb/s"
# A kernel with bonding built in (make kasan's) makes its own bond0 and
# ignores max_bonds: the test's bond has a name of its own.
modprobe bonding max_bonds=0
ip link add stbond0 type bond mode balance-xor miimon 100
for i in 3 4; do
	ip link add "veth$i" type veth peer name "veth${i}p"
	ip link set "veth$i" master stbond0
	ip link set "veth${i}p" up
done
ip link set stbond0 up
rdma link add stellar3 type stellar netdev stbond0
wait_for 15 ib_port_state_is stellar3 PORT_ACTIVE
wait_for 15 eval 'ibv_devinfo -v -d stellar3 | grep "active_width:.*4X (2)" >/dev/null'
info=$(ibv_devinfo -v -d stellar3)
assert_contains "$info" "active_speed:		5.0 Gbps (2)" "ibv_devinfo on a bond of two veths"
assert_eq "$(cat /sys/class/infiniband/stellar3/ports/1/rate)" \
	"20 Gb/sec (4X DDR)" "port rate on a bond of two veths"
[ ! -e /sys/class/infiniband/stellar3/device ] || fail "stellar3 on stbond0 has a device link"
rdma link delete stellar3
ip link del stbond0
ip link del veth3
ip link del veth4

log "rmmod with devices present"
veth_pair veth2 veth2p 10.22.0.1/24 10.22.0.2/24
rdma link add stellar2 type stellar netdev veth2
stellar_unload
assert_eq "$(rdma link show | grep stellar || true)" "" "rdma link show after rmmod"
assert_eq "$(ibv_devices 2>/dev/null | grep stellar || true)" "" "ibv_devices after rmmod"
[ ! -e /proc/stellar ] || fail "/proc/stellar still exists after rmmod"

log "reload"
stellar_load
rdma link add stellar0 type stellar netdev veth1
wait_for 15 ib_port_state_is stellar0 PORT_ACTIVE
wait_for 15 ib_has_gid stellar0 ::ffff:10.21.0.1
rdma link delete stellar0
stellar_unload
log "dev_lifecycle OK"
