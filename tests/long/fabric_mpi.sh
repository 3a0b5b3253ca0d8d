#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# OpenMPI over UCX on every host of the leaf-spine fabric (issue 14), on
# its own: four hosts, two uplinks each, stellar with spray_paths 16 on
# all of them, and helpers/fabric_mpi.sh's allreduce with checked results.
# make check runs the same allreduce as the last part of fabric_smoke, on
# the fabric that test has built already; this is for running it alone
# ("tests/vm/run-tests.sh fabric_mpi").
# stellar-test: vms=4 fabric=2 leaves=2 spines=2 rate=100mbit timeout=900

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"
# shellcheck source=tests/vm/fabric.sh
. "$STELLAR_REPO/tests/vm/fabric.sh"
# shellcheck source=tests/integration/helpers/mpi.sh
. "$STELLAR_REPO/tests/integration/helpers/mpi.sh"
# shellcheck source=tests/integration/helpers/fabric_mpi.sh
. "$STELLAR_REPO/tests/integration/helpers/fabric_mpi.sh"

fabric_up
stellar_load spray_paths=16
rdma link add stellar0 type stellar netdev eth0
STELLAR_GID=$(gid_index stellar0 "$FABRIC_IP")
fabric_mpi_allreduce
rdma link delete stellar0
stellar_unload
log "fabric_mpi OK"
