#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# OpenMPI over UCX between two hosts, stellar on both ends: mpirun on VM a
# starts 2 ranks, one per VM, running helpers/mpi_allreduce.c (compiled
# here with mpicc), which checks every element of MPI_Allreduce results
# (sum and max) for small (eager) and large (rendezvous) messages.
#
# The ranks talk only through pml ucx with UCX_TLS=self,rc_verbs,
# ud_verbs:aux on stellar0:1 (no tcp, no shared memory; btl self only), and
# both VMs' stellar counters must take in at least the data the
# allreduces exchanged.  mpirun reaches VM b through
# helpers/remote_exec.py (the plm_rsh_agent, in place of ssh); its TCP
# control traffic uses eth0 outside stellar.
# stellar-test: vms=2 links=1 timeout=900

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"
# shellcheck source=tests/integration/helpers/mpi.sh
. "$(dirname "$(readlink -f "$0")")/helpers/mpi.sh"

check_mpi_output() {
	local count

	assert_contains "$(cat "$MPI_LOG")" "rank 0 of 2 on $(hostname)" "mpirun output"
	assert_contains "$(cat "$MPI_LOG")" "rank 1 of 2 on $(get_val hostname)" \
		"mpirun output"
	for count in "${MPI_COUNTS[@]}"; do
		assert_contains "$(cat "$MPI_LOG")" \
			"allreduce ok: 2 ranks, $count x int64" "mpirun output"
	done
	log "$(grep -c 'allreduce ok' "$MPI_LOG") allreduce sizes checked"
}

stellar_pair_up
put_val hostname "$(hostname)"
rx_before=$(stellar_stat stellar0 rx_bytes)

if [ "$STELLAR_ROLE" = b ]; then
	mpi_agent_start "$(my_ip 1)"
	put_val agent.ready 1
else
	mpi_build
	get_val agent.ready >/dev/null
	[ "$(get_val hostname)" != "$(hostname)" ] ||
		fail "both VMs are called $(hostname): ranks would be indistinguishable"
	mpi_run 2 "$(my_ip 1):1,$(peer_ip 1):1" "$(link_dev 1)"
	check_mpi_output
fi
barrier mpirun.done 700
[ "$STELLAR_ROLE" = a ] || kill "$MPI_AGENT"

rx=$(($(stellar_stat stellar0 rx_bytes) - rx_before))
[ "$rx" -ge "$(mpi_min_rx_bytes)" ] ||
	fail "stellar0 received $rx bytes, the allreduces moved $(mpi_min_rx_bytes)"
log "stellar0 received $rx bytes during mpirun (allreduce payload $(mpi_min_rx_bytes))"

barrier mpi-done
rdma link delete stellar0
stellar_unload
log "apps_mpi OK"
