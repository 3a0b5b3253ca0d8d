#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# The README's demo, run in two VMs joined by one link (make demo):
# load virtio_stellar, create stellar0 on eth0 on both hosts and show what
# verbs tools, the RDMA netlink, /proc/stellar and stellar-tool see.
# stellar-test: vms=2 links=1 timeout=600

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../tests/vm/lib.sh"

show() {
	echo
	echo "### [$STELLAR_ROLE] \$ $*"
	"$@"
}

stellar_load
rdma link add stellar0 type stellar netdev "$(link_dev 1)"
barrier devices-created

if [ "$STELLAR_ROLE" = a ]; then
	show ping -c 2 "$(peer_ip 1)"
	show ibv_devices
	show ibv_devinfo -v -d stellar0
	show rdma link show
	show rdma resource show
	show cat /sys/module/virtio_stellar/parameters/spray_paths
	show cat /proc/stellar/devices
	show cat /proc/stellar/stellar0/stats
	show cat /proc/stellar/stellar0/settings
	show "$STELLAR_REPO/tools/stellar-tool" status
	show "$STELLAR_REPO/tools/stellar-tool" params
fi
barrier shown

rdma link delete stellar0
stellar_unload
