#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# OpenMPI over UCX on every host of the leaf-spine fabric (issue 14): four
# hosts, two uplinks each, stellar with spray_paths 16 on all of them.
# mpirun on VM a starts one rank per host running helpers/mpi_allreduce.c,
# which checks every element of MPI_Allreduce results (sum and max) for
# small (eager) and large (rendezvous) messages.
#
# The ranks talk only through pml ucx with UCX_TLS=self,rc_verbs,
# ud_verbs:aux on stellar0:1 (no tcp, no shared memory); every host's
# stellar device must take in at least the data its rank needs (the
# others' contribution to each result: one vector per allreduce), and a's
# sends must leave on both uplinks.  mpirun reaches the other hosts
# through helpers/remote_exec.py (the plm_rsh_agent, in place of ssh) on
# their fabric addresses.
# stellar-test: vms=4 fabric=2 leaves=2 spines=2 rate=100mbit timeout=900

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"
# shellcheck source=tests/vm/fabric.sh
. "$STELLAR_REPO/tests/vm/fabric.sh"

HELPERS=$(dirname "$(readlink -f "$0")")/helpers
AGENT_PORT=17001
# int64 elements per allreduce; the last one is 800 KB, well past UCX's
# rendezvous threshold.
COUNTS=(1 1000 100000)
PROG=$STELLAR_SHARED/mpi_allreduce
NRANKS=$(host_roles | wc -l)

# Bytes every rank receives at least: its result depends on M bytes of the
# others' data for each allreduce of M bytes (sum and max of every count).
min_rx_bytes() {
	local count total=0

	for count in "${COUNTS[@]}"; do
		total=$((total + 2 * 8 * count))
	done
	echo "$total"
}

# mpi_hosts: "ADDR:1,ADDR:1,..." of every host, a first (rank 0).
mpi_hosts() {
	local role list=''

	for role in $(host_roles); do
		list+="${list:+,}$(fabric_ip "$role"):1"
	done
	echo "$list"
}

run_mpirun() {
	local rc=0 log=$STELLAR_OUT/mpirun.log

	timeout 600 mpirun --allow-run-as-root -np "$NRANKS" \
		--host "$(mpi_hosts)" \
		--mca plm_rsh_agent "/usr/bin/python3 -B $HELPERS/remote_exec.py" \
		--mca oob_tcp_if_include eth0 \
		--mca pml ucx --mca btl self --mca osc '^ucx' \
		-x UCX_TLS=self,rc_verbs,ud_verbs:aux \
		-x UCX_NET_DEVICES=stellar0:1 \
		-x UCX_IB_GID_INDEX="$GID" \
		"$PROG" "${COUNTS[@]}" >"$log" 2>&1 || rc=$?
	[ "$rc" = 0 ] || fail "mpirun exited with $rc:"$'\n'"$(tail -40 "$log")"
	MPI_LOG=$log
}

check_mpi_output() {
	local out role rank=0 count

	out=$(cat "$MPI_LOG")
	for role in $(host_roles); do
		assert_contains "$out" "rank $rank of $NRANKS on $(get_val_from "$role" hostname)" \
			"mpirun output"
		rank=$((rank + 1))
	done
	for count in "${COUNTS[@]}"; do
		assert_contains "$out" "allreduce ok: $NRANKS ranks, $count x int64" \
			"mpirun output"
	done
	log "$(grep -c 'allreduce ok' "$MPI_LOG") allreduce sizes checked on $NRANKS ranks"
}

# uplink_tx: "packets on eth0, packets on eth1" sent by this host.
uplink_tx() {
	echo "$(tx_packets eth0)" "$(tx_packets eth1)"
}

fabric_up
stellar_load spray_paths=16
rdma link add stellar0 type stellar netdev eth0
GID=$(gid_index stellar0 "$FABRIC_IP")
put_val hostname "$(hostname)"
rx_before=$(stellar_stat stellar0 rx_bytes)
read -r tx0_before tx1_before <<<"$(uplink_tx)"

if [ "$STELLAR_ROLE" != a ]; then
	/usr/bin/python3 -B "$HELPERS/remote_exec.py" serve "$FABRIC_IP" \
		"$AGENT_PORT" >"$STELLAR_OUT/remote_exec.log" 2>&1 &
	agent=$!
	wait_for 30 tcp_listening "$AGENT_PORT"
	put_val agent.ready 1
	barrier mpirun.done 700
	kill "$agent"
else
	assert_ok mpicc -Wall -Werror -O2 -o "$PROG" "$HELPERS/mpi_allreduce.c"
	for role in $(other_roles); do
		get_val_from "$role" agent.ready >/dev/null
		[ "$(get_val_from "$role" hostname)" != "$(hostname)" ] ||
			fail "VMs a and $role are both called $(hostname)"
	done
	export REMOTE_EXEC_PORT=$AGENT_PORT
	run_mpirun
	check_mpi_output
	barrier mpirun.done 700
fi

rx=$(($(stellar_stat stellar0 rx_bytes) - rx_before))
log "stellar0 received $rx bytes during mpirun (allreduce data a rank needs: $(min_rx_bytes))"
[ "$rx" -ge "$(min_rx_bytes)" ] ||
	fail "stellar0 received $rx bytes, less than the $(min_rx_bytes) its rank needs"
read -r tx0 tx1 <<<"$(uplink_tx)"
tx0=$((tx0 - tx0_before))
tx1=$((tx1 - tx1_before))
log "packets sent on eth0 $tx0, on eth1 $tx1"
# a rank's sends spray over both uplinks (rank 0 sends the most)
if [ "$STELLAR_ROLE" = a ]; then
	{ [ "$tx0" -gt 100 ] && [ "$tx1" -gt 100 ]; } ||
		fail "a sent on one uplink only: eth0 $tx0, eth1 $tx1 packets"
fi

barrier mpi-done
rdma link delete stellar0
stellar_unload
log "fabric_mpi OK"
