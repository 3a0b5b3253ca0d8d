# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# OpenMPI over UCX on stellar0 for the MPI tests (apps_mpi, fabric_mpi);
# source after lib.sh.  Ranks run helpers/mpi_allreduce.c with the
# element counts in MPI_COUNTS; mpirun reaches the other hosts through
# helpers/remote_exec.py (the plm_rsh_agent, in place of ssh).
#
#   mpi_min_rx_bytes          bytes every rank receives at least: its
#                             results depend on M bytes of the others'
#                             data for each allreduce of M bytes (sum and
#                             max of every count)
#   mpi_run NP HOSTS OOB_IF   mpirun NP ranks on HOSTS ("ADDR:1,...") with
#                             pml ucx over stellar0:1 only (no tcp, no
#                             shared memory), OOB_IF for mpirun's own TCP;
#                             fails the test unless it exits 0; MPI_LOG
#                             is its output

MPI_HELPERS=$(dirname "${BASH_SOURCE[0]}")
AGENT_PORT=17001
# int64 elements per allreduce; the last one is 800 KB, well past UCX's
# rendezvous threshold.
MPI_COUNTS=(1 1000 100000)
MPI_PROG=$STELLAR_SHARED/mpi_allreduce

mpi_min_rx_bytes() {
	local count total=0

	for count in "${MPI_COUNTS[@]}"; do
		total=$((total + 2 * 8 * count))
	done
	echo "$total"
}

mpi_run() {
	local rc=0

	MPI_LOG=$STELLAR_OUT/mpirun.log
	REMOTE_EXEC_PORT=$AGENT_PORT timeout 600 mpirun --allow-run-as-root \
		-np "$1" --host "$2" \
		--mca plm_rsh_agent "/usr/bin/python3 -B $MPI_HELPERS/remote_exec.py" \
		--mca oob_tcp_if_include "$3" \
		--mca pml ucx --mca btl self --mca osc '^ucx' \
		-x UCX_TLS=self,rc_verbs,ud_verbs:aux \
		-x UCX_NET_DEVICES=stellar0:1 \
		-x UCX_IB_GID_INDEX="$STELLAR_GID" \
		"$MPI_PROG" "${MPI_COUNTS[@]}" >"$MPI_LOG" 2>&1 || rc=$?
	[ "$rc" = 0 ] || fail "mpirun exited with $rc:"$'\n'"$(tail -40 "$MPI_LOG")"
}

# mpi_agent_start ADDR: serve remote_exec.py on ADDR for mpirun (pid in
# MPI_AGENT).
mpi_agent_start() {
	/usr/bin/python3 -B "$MPI_HELPERS/remote_exec.py" serve "$1" \
		"$AGENT_PORT" >"$STELLAR_OUT/remote_exec.log" 2>&1 &
	# shellcheck disable=SC2034 # the sourcing test kills it
	MPI_AGENT=$!
	wait_for 30 tcp_listening "$AGENT_PORT"
}

# mpi_build: compile helpers/mpi_allreduce.c into the shared dir.
mpi_build() {
	assert_ok mpicc -Wall -Werror -O2 -o "$MPI_PROG" "$MPI_HELPERS/mpi_allreduce.c"
}
