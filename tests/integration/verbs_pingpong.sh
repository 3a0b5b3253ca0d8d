#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# The ibverbs examples between two hosts, stellar on both ends: RC with
# data checks at sizes below, at and above the MTU, UC, UD and SRQ.
# Before: the port of a device on virtio-net, which knows no link speed,
# reports the default 10 Gb/s (QDR 1X), and /sys/class/infiniband/stellar0/
# device is eth0's virtio device.  After: on VM b, eth0 goes away under
# stellar0 (virtio_net unbound from its device): stellar0 goes with it, and
# the module unloads.
# stellar-test: vms=2 links=1 timeout=600

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

stellar_pair_up
g=$STELLAR_GID

info=$(ibv_devinfo -v -d stellar0)
assert_contains "$info" "active_width:		1X (1)" "ibv_devinfo on virtio-net"
assert_contains "$info" "active_speed:		10.0 Gbps (4)" "ibv_devinfo on virtio-net"
vdev=$(readlink -f "/sys/class/net/$(link_dev 1)/device")
case "$vdev" in
*/virtio*) ;;
*) fail "$(link_dev 1) has no virtio device: '$vdev'" ;;
esac
assert_eq "$(readlink -f /sys/class/infiniband/stellar0/device)" "$vdev" \
	"stellar0's device link"

port=18600
for size in 64 1024 4096 65536; do
	port=$((port + 1))
	client_server "rc_pingpong_$size" "$port" 120 -- \
		ibv_rc_pingpong -d stellar0 -g "$g" -p "$port" -c -s "$size" -n 200
done
client_server uc_pingpong 18650 120 -- \
	ibv_uc_pingpong -d stellar0 -g "$g" -p 18650 -c -s 2048 -n 200
client_server ud_pingpong 18651 120 -- \
	ibv_ud_pingpong -d stellar0 -g "$g" -p 18651 -c -s 512 -n 200
client_server srq_pingpong 18652 120 -- \
	ibv_srq_pingpong -d stellar0 -g "$g" -p 18652 -c -s 4096 -n 200 -q 4

barrier pingpong-done
if [ "$STELLAR_ROLE" = b ]; then
	log "unbind virtio_net from $(basename "$vdev") under stellar0"
	echo "$(basename "$vdev")" >/sys/bus/virtio/drivers/virtio_net/unbind
	wait_for 30 rdma_link_gone stellar0
	! ibv_lists stellar0 || fail "ibv_devices still lists stellar0"
	echo "$(basename "$vdev")" >/sys/bus/virtio/drivers/virtio_net/bind
else
	rdma link delete stellar0
fi
stellar_unload
