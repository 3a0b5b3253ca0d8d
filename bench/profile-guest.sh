#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# The profile's guest side, run by bench/profile.sh in two VMs (a
# serves, b measures) joined by one link: for each driver, one perftest
# run while `perf record -a -g -e cpu-clock` samples VM b, the client's,
# all its work: process, softirq, kernel threads.  The client is the
# requester: it sends a WRITE's or SEND's data and receives a READ's.
#
# Arguments: TEST (write_bw, read_bw, send_bw, write_lat, send_lat)
#            ITERS [--mtu N] [DRIVER...] (stellar, rxe; default both)
# VM b writes $STELLAR_OUT/DRIVER.b.{flat,comm,children}.txt, both VMs
# stellar.X.stats (/proc/stellar/stellar0/stats after the run).
# stellar-test: vms=2 links=1 timeout=1800 memdebug=off

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../tests/vm/lib.sh"

TEST=$1
ITERS=$2
shift 2
if [ "${1:-}" = --mtu ]; then
	ip link set dev "$(link_dev 1)" mtu "$2"
	shift 2
fi
DRIVERS=("$@")
[ ${#DRIVERS[@]} -gt 0 ] || DRIVERS=(stellar rxe)
SIZE=65536
case "$TEST" in
*_lat) SIZE=8 ;;
esac
PORT=19000
# perf is the parent of the perftest client: in these TCG guests a
# system-wide perf whose own workload sleeps or waits (perf record -a --
# sleep N, or a server that waits on its socket) was seen to put nearly
# all samples on the idle task at start and none later, however busy the
# CPU; one whose workload keeps running (the client polls its CQ) samples
# every task of the VM.
PERF=(perf record -q -a -g -e cpu-clock -c 1000000 -o /tmp/profile.data --)

# report DRIVER: the perf reports of this VM's run.
report() {
	local out=$STELLAR_OUT/$1.$STELLAR_ROLE

	perf report -i /tmp/profile.data --no-children --sort comm,dso,sym \
		--percent-limit 0.02 --stdio -g none >"$out.flat.txt" 2>&1
	perf report -i /tmp/profile.data --no-children --sort comm \
		--stdio -g none >"$out.comm.txt" 2>&1
	perf report -i /tmp/profile.data --children --sort sym \
		--percent-limit 1 --stdio -g none >"$out.children.txt" 2>&1
	rm -f /tmp/profile.data
}

# profile DRIVER DEV GID
profile() {
	local -a srv cli

	# shellcheck disable=SC2034 # used by name in pair_run
	srv=("ib_$TEST" -s "$SIZE" -n "$ITERS" -d "$2" -x "$3" -p "$PORT")
	# shellcheck disable=SC2034
	cli=("${PERF[@]}" "${srv[@]}" "$(peer_ip 1)")
	pair_run "profile_$1" a "tcp:$PORT" 600 srv cli
	PORT=$((PORT + 1))
	[ "$PAIR_ROLE" = client ] || return 0
	log "$1: $(perftest_result "$PAIR_LOG" | tr -s ' \t' ' ')"
	report "$1"
}

for driver in "${DRIVERS[@]}"; do
	case "$driver" in
	stellar)
		stellar_pair_up db_poll_interval=0
		profile stellar stellar0 "$STELLAR_GID"
		cp /proc/stellar/stellar0/stats "$STELLAR_OUT/stellar.$STELLAR_ROLE.stats"
		barrier stellar-done
		rdma link delete stellar0
		stellar_unload
		;;
	rxe)
		rxe_up "$(link_dev 1)"
		barrier rxe-up
		profile rxe rxe0 "$RXE_GID"
		barrier rxe-done
		rxe_down
		;;
	*) fail "bench/profile-guest.sh: unknown driver '$driver'" ;;
	esac
done
