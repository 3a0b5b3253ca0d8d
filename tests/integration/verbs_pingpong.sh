#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# The ibverbs examples between two hosts, stellar on both ends: RC with
# data checks at sizes below, at and above the MTU, UC, UD and SRQ.
# stellar-test: vms=2 links=1 timeout=600

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

stellar_pair_up
g=$STELLAR_GID

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

rdma link delete stellar0
stellar_unload
