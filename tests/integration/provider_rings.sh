#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# The provider's rings against the real kernel driver: runs vm_rings
# (see vm_rings.c) on both VMs, each against its own stellar0.
# Run from the host with "make -C providers/stellar vmcheck", or
#   tests/vm/run-tests.sh provider_rings
# stellar-test: vms=2 links=1 timeout=300

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

prog=$STELLAR_PROVIDER_DIR/tests/vm_rings
[ -x "$prog" ] || fail "$prog not built (make -C providers/stellar vmcheck)"

stellar_pair_up
rc=0
IBV_SHOW_WARNINGS=1 "$prog" stellar0 "$STELLAR_GID" "$(peer_ip 1)" || rc=$?
barrier vm-rings-done
[ "$rc" = 0 ] || fail "vm_rings exited with $rc"
rdma link delete stellar0
stellar_unload
