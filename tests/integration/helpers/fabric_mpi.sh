# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# OpenMPI over UCX on every host of the leaf-spine fabric (issue 14), for
# fabric_smoke (make check) and tests/long/fabric_mpi.sh.  Source after
# lib.sh, tests/vm/fabric.sh and helpers/mpi.sh; stellar0 must be up on
# every host with $STELLAR_GID its GID index on the fabric address.
#
# fabric_mpi_allreduce: mpirun on VM a starts one rank per host running
# helpers/mpi_allreduce.c, which checks every element of MPI_Allreduce
# results (sum and max) for small (eager) and large (rendezvous)
# messages.  The ranks talk only through pml ucx with UCX_TLS=self,
# rc_verbs,ud_verbs:aux on stellar0:1 (no tcp, no shared memory); every
# host's stellar device must take in at least the data its rank needs
# (the others' contribution to each result: one vector per allreduce),
# and a's sends must leave on both uplinks.  mpirun reaches the other
# hosts through helpers/remote_exec.py (the plm_rsh_agent, in place of
# ssh) on their fabric addresses.

# fabric_mpi_hosts: "ADDR:1,ADDR:1,..." of every host, a first (rank 0).
fabric_mpi_hosts() {
	local role list=''

	for role in $(host_roles); do
		list+="${list:+,}$(fabric_ip "$role"):1"
	done
	echo "$list"
}

# fabric_mpi_check_output NRANKS: every rank ran on its own host and
# every allreduce size was checked.
fabric_mpi_check_output() {
	local nranks=$1 out role rank=0 count

	out=$(cat "$MPI_LOG")
	for role in $(host_roles); do
		assert_contains "$out" "rank $rank of $nranks on $(get_val_from "$role" hostname)" \
			"mpirun output"
		rank=$((rank + 1))
	done
	for count in "${MPI_COUNTS[@]}"; do
		assert_contains "$out" "allreduce ok: $nranks ranks, $count x int64" \
			"mpirun output"
	done
	log "$(grep -c 'allreduce ok' "$MPI_LOG") allreduce sizes checked on $nranks ranks"
}

# fabric_mpi_uplink_tx: "packets on eth0, packets on eth1" sent here.
fabric_mpi_uplink_tx() {
	echo "$(tx_packets eth0)" "$(tx_packets eth1)"
}

# fabric_mpi_allreduce: run on every host (see the top).
fabric_mpi_allreduce() {
	local nranks rx_before rx tx0_before tx1_before tx0 tx1 role

	nranks=$(host_roles | wc -l)
	put_val hostname "$(hostname)"
	rx_before=$(stellar_stat stellar0 rx_bytes)
	read -r tx0_before tx1_before <<<"$(fabric_mpi_uplink_tx)"
	if [ "$STELLAR_ROLE" != a ]; then
		mpi_agent_start "$FABRIC_IP"
		put_val agent.ready 1
		barrier mpirun.done 700
		kill "$MPI_AGENT"
	else
		mpi_build
		for role in $(other_roles); do
			get_val_from "$role" agent.ready >/dev/null
			[ "$(get_val_from "$role" hostname)" != "$(hostname)" ] ||
				fail "VMs a and $role are both called $(hostname)"
		done
		mpi_run "$nranks" "$(fabric_mpi_hosts)" eth0
		fabric_mpi_check_output "$nranks"
		barrier mpirun.done 700
	fi
	rx=$(($(stellar_stat stellar0 rx_bytes) - rx_before))
	log "stellar0 received $rx bytes during mpirun (allreduce data a rank needs: $(mpi_min_rx_bytes))"
	[ "$rx" -ge "$(mpi_min_rx_bytes)" ] ||
		fail "stellar0 received $rx bytes, less than the $(mpi_min_rx_bytes) its rank needs"
	read -r tx0 tx1 <<<"$(fabric_mpi_uplink_tx)"
	tx0=$((tx0 - tx0_before))
	tx1=$((tx1 - tx1_before))
	log "packets sent on eth0 $tx0, on eth1 $tx1"
	if [ "$STELLAR_ROLE" = a ]; then
		{ [ "$tx0" -gt 100 ] && [ "$tx1" -gt 100 ]; } ||
			fail "a sent on one uplink only: eth0 $tx0, eth1 $tx1 packets"
	fi
	barrier mpi-done
}
