#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# rdma_rxe and virtio_stellar both speak RoCEv2 on UDP 4791: while an rxe
# device exists in init_net, a stellar device there is refused with a
# kernel message naming rxe; once rxe is gone it works.
# stellar-test: vms=1 timeout=300

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

veth_pair veth0 veth0p 10.40.0.1/24 10.40.0.2/24
veth_pair veth1 veth1p 10.41.0.1/24 10.41.0.2/24

modprobe rdma_rxe
rdma link add rxe0 type rxe netdev veth0
assert_contains "$(rdma_link_line rxe0)" "netdev veth0" "rdma link show"

stellar_load --kernel-only
klog_mark
assert_fails rdma link add stellar0 type stellar netdev veth1
assert_eq "$(rdma_link_line stellar0)" "" "rdma link show after refusal"
klog_since_mark | grep -qi rxe ||
	fail "no kernel message naming rxe after the refusal:"$'\n'"$(klog_since_mark)"
log "kernel log: $(klog_since_mark | grep -i -m 1 rxe)"

rdma link delete rxe0
rmmod rdma_rxe
rdma link add stellar0 type stellar netdev veth1
assert_contains "$(rdma_link_line stellar0)" "netdev veth1" "rdma link show"
rdma link delete stellar0
stellar_unload
log "dev_rxe_conflict OK"
