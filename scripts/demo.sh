#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# The README's demo, run in two VMs joined by one link (make demo):
# load virtio_stellar, create stellar0 on eth0 on both hosts, show what
# verbs tools, the RDMA netlink, /proc/stellar and stellar-tool see, then
# move real traffic (ibv_rc_pingpong with data checks, ib_write_bw, rping)
# and show the counters it left.
# stellar-test: vms=2 links=1 timeout=600

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../tests/vm/lib.sh"

show() {
	echo
	echo "### [$STELLAR_ROLE] \$ $*"
	"$@"
}

stellar_pair_up

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
	show "$STELLAR_REPO/tools/stellar-tool" params
fi
barrier shown

client_server demo_pingpong 18515 120 -- \
	ibv_rc_pingpong -d stellar0 -g "$STELLAR_GID" -c -s 65536 -n 100
client_server demo_write_bw 18516 120 -- \
	ib_write_bw -d stellar0 -x "$STELLAR_GID" -p 18516 -s 65536 -n 200
if [ "$STELLAR_ROLE" = a ]; then
	timeout 60 rping -s -a "$(my_ip 1)" -C 10 -V -S 100 >"$STELLAR_OUT/rping.log" 2>&1 &
	rping_pid=$!
	put_val rping-ready 1
	wait "$rping_pid" || fail "rping server failed: $(cat "$STELLAR_OUT/rping.log")"
else
	get_val rping-ready >/dev/null
	sleep 1
	show timeout 60 rping -c -a "$(peer_ip 1)" -C 10 -V -v -S 100
fi
barrier traffic-done

if [ "$STELLAR_ROLE" = b ]; then
	show cat "$STELLAR_OUT/demo_pingpong.log"
	show cat "$STELLAR_OUT/demo_write_bw.log"
	show cat /proc/stellar/stellar0/stats
	show cat /proc/stellar/stellar0/qps
	show "$STELLAR_REPO/tools/stellar-tool" status
fi
barrier counters-shown

rdma link delete stellar0
stellar_unload
