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

HELPERS=$(dirname "$(readlink -f "$0")")/helpers
AGENT_PORT=17001
# int64 elements per allreduce; the last one is 800 KB, well past UCX's
# rendezvous threshold.
COUNTS=(1 1000 100000)
PROG=$STELLAR_SHARED/mpi_allreduce

# Bytes VM a's rank receives at least: the peer's vector for the sum and
# for the max of every count.
min_rx_bytes() {
	local count total=0

	for count in "${COUNTS[@]}"; do
		total=$((total + 2 * 8 * count))
	done
	echo "$total"
}

run_mpirun() {
	local rc=0 log=$STELLAR_OUT/mpirun.log

	timeout 600 mpirun --allow-run-as-root -np 2 \
		--host "$(my_ip 1):1,$(peer_ip 1):1" \
		--mca plm_rsh_agent "/usr/bin/python3 -B $HELPERS/remote_exec.py" \
		--mca oob_tcp_if_include "$(link_dev 1)" \
		--mca pml ucx --mca btl self --mca osc '^ucx' \
		-x UCX_TLS=self,rc_verbs,ud_verbs:aux \
		-x UCX_NET_DEVICES=stellar0:1 \
		-x UCX_IB_GID_INDEX="$STELLAR_GID" \
		"$PROG" "${COUNTS[@]}" >"$log" 2>&1 || rc=$?
	[ "$rc" = 0 ] || fail "mpirun exited with $rc:"$'\n'"$(tail -40 "$log")"
	MPI_LOG=$log
}

check_mpi_output() {
	local count

	assert_contains "$(cat "$MPI_LOG")" "rank 0 of 2 on $(hostname)" "mpirun output"
	assert_contains "$(cat "$MPI_LOG")" "rank 1 of 2 on $(get_val hostname)" \
		"mpirun output"
	for count in "${COUNTS[@]}"; do
		assert_contains "$(cat "$MPI_LOG")" \
			"allreduce ok: 2 ranks, $count x int64" "mpirun output"
	done
	log "$(grep -c 'allreduce ok' "$MPI_LOG") allreduce sizes checked"
}

stellar_pair_up
put_val hostname "$(hostname)"
rx_before=$(stellar_stat stellar0 rx_bytes)

if [ "$STELLAR_ROLE" = b ]; then
	/usr/bin/python3 -B "$HELPERS/remote_exec.py" serve "$(my_ip 1)" \
		"$AGENT_PORT" >"$STELLAR_OUT/remote_exec.log" 2>&1 &
	agent=$!
	wait_for 30 tcp_listening "$AGENT_PORT"
	put_val agent.ready 1
else
	assert_ok mpicc -Wall -Werror -O2 -o "$PROG" "$HELPERS/mpi_allreduce.c"
	get_val agent.ready >/dev/null
	[ "$(get_val hostname)" != "$(hostname)" ] ||
		fail "both VMs are called $(hostname): ranks would be indistinguishable"
	export REMOTE_EXEC_PORT=$AGENT_PORT
	run_mpirun
	check_mpi_output
fi
barrier mpirun.done 700
[ "$STELLAR_ROLE" = a ] || kill "$agent"

rx=$(($(stellar_stat stellar0 rx_bytes) - rx_before))
[ "$rx" -ge "$(min_rx_bytes)" ] ||
	fail "stellar0 received $rx bytes, the allreduces moved $(min_rx_bytes)"
log "stellar0 received $rx bytes during mpirun (allreduce payload $(min_rx_bytes))"

barrier mpi-done
rdma link delete stellar0
stellar_unload
log "apps_mpi OK"
