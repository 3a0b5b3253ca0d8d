#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Run integration tests in QEMU VMs.
#
#   tests/vm/run-tests.sh [options] [NAME|PATH ...] [-- SCRIPT-ARGS...]
#
# NAME is a test in tests/integration or tests/long (with or without
# .sh); PATH is any test script (it may live outside the repo).  Without
# tests, runs every tests/integration/*.sh (tests/long only when
# named).  A test's topology comes from its header line
#   # stellar-test: vms=1|2 links=N timeout=SECONDS [smp=N] [mem=MB] [skip=allowed]
#                   [memdebug=off] [alone=yes]
# or, for hosts on a leaf-spine fabric (tests/vm/fabric.sh),
#   # stellar-test: vms=N fabric=K [leaves=L] [spines=S] [rate=R] timeout=...
# (N hosts "a", "b", ... up to 8 with K uplinks each, to a router VM
# "fabric" that runs tests/vm/fabric-router.sh; STELLAR_FABRIC_RATE=R
# overrides the rate, STELLAR_FABRIC_RED=MIN,MAX,PROB the RED queues'
# marking, STELLAR_FABRIC_CC=NAME=VALUE,... gives tests that load the
# module on the fabric DCQCN parameters; the host's CPU use goes to the
# shared dir's host-cpu while the test runs, tests/vm/cpu.sh), and can be
# overridden with the options below.  smp and mem default to
# STELLAR_VM_SMP and STELLAR_VM_MEM (1 vCPU, 1024 MB).  Guests boot with
# SLUB debugging and page poisoning (common.sh) unless the header says
# memdebug=off (a test whose rate checks or volume it would break, with
# the reason beside it); STELLAR_MEMDEBUG=1 (make check MEMDEBUG=1) turns
# it on for those too.
#
# Tests of one VM with one vCPU use one host CPU each, so with
# STELLAR_TEST_JOBS=2 (the default on a host with two or more CPUs) they
# run two at a time (the longest, by timeout, first), before the others,
# which run one at a time; a test
# whose header says alone=yes (it measures time or rates) never shares
# the host.  STELLAR_TEST_JOBS=1 runs everything one at a time.
# STELLAR_TIMEOUT_SCALE=N multiplies every test's timeout by N, for a
# kernel that runs the tests slower (make kasan sets it).
# Tests named on the command line run in full (long_run in lib.sh is
# true); the whole suite (make check) runs the short form of the long
# tests, to stay within CI's time.  STELLAR_LONG=0|1 overrides both.
#
# Options:
#   --vms N        number of VMs (1, or 2 = "a" and "b"; up to 8 hosts
#                  on a fabric)
#   --links N      links between the two VMs (default 1 when vms=2)
#   --fabric K     put the VMs on a leaf-spine fabric, K uplinks each
#   --timeout S    test timeout in seconds (guest side; default 300)
#   --mem MB       memory per VM, over the header's mem= (debug kernels
#                  whose allocations cost more: scripts/kasan.sh)
#   --results DIR  where logs go (default tests/vm/.build/results/<stamp>)
#   -v, --verbose  stream the guests' test output while it runs
#   -q, --quiet    do not print the test output of passing tests (default)
#
# Per test the results dir holds vm-<role>/{output.log,exit_code,status,
# kernel.log,serial.log,qemu.log} and shared/ (barriers and values).
# Prints "PASS name (Ns)" or "FAIL name: reason" per test, the FAIL
# lines again (also in failures.txt), and finally "N passed, N failed";
# exits 1 if any test failed, 2 on usage errors.
# A test during whose attempt a guest's virtio-net transmit queue stalls
# (QEMU stopped taking its frames: the attempt stops then), or one of
# whose guests has not reached its init after STELLAR_BOOT_LIMIT seconds
# (120, times STELLAR_TIMEOUT_SCALE), runs again, up to STELLAR_ATTEMPTS
# attempts in all (3); each attempt that is run again is printed as
# "RERUN name: ..." and counted in the summary.  The last attempt's
# verdict stands, stall or not.

set -u

# shellcheck source=tests/vm/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

OPT_VMS='' OPT_LINKS='' OPT_FABRIC='' OPT_TIMEOUT='' OPT_MEM='' VERBOSE=0 RESULTS='' SCRIPT_ARGS=()
TAIL_PIDS=() LANE_PIDS=()
JOBS=${STELLAR_TEST_JOBS:-$(($(nproc) >= 2 ? 2 : 1))}
TIMEOUT_SCALE=${STELLAR_TIMEOUT_SCALE:-1}
N_PASS=0 N_FAIL=0 N_SKIP=0 N_RERUN=0

usage() {
	sed -n '6,29p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
}

cleanup() {
	local pid

	for pid in "${LANE_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	vm_kill_all
	for pid in "${TAIL_PIDS[@]}"; do
		kill "$pid" 2>/dev/null
	done
}

# Path of the script for a test NAME or PATH argument.
resolve_test() {
	local arg=$1

	if [ -f "$arg" ]; then
		readlink -f "$arg"
	elif [ -f "$REPO/tests/integration/$arg" ]; then
		echo "$REPO/tests/integration/$arg"
	elif [ -f "$REPO/tests/integration/$arg.sh" ]; then
		echo "$REPO/tests/integration/$arg.sh"
	elif [ -f "$REPO/tests/long/$arg.sh" ]; then
		echo "$REPO/tests/long/$arg.sh"
	else
		die "no such test: $arg"
	fi
}

# Value of KEY in the test's "# stellar-test:" header, or DEFAULT.
header_value() {
	local script=$1 key=$2 default=$3 line word

	line=$(grep -m 1 '^# stellar-test:' "$script")
	for word in ${line#*:}; do
		case "$word" in
		"$key="*) echo "${word#*=}"; return ;;
		esac
	done
	echo "$default"
}

is_number() {
	case "$1" in '' | *[!0-9]*) return 1 ;; esac
}

# Stream a guest's test output to stdout, prefixed when there are 2 VMs.
follow_output() {
	local file=$1 prefix=$2

	tail -n +1 -F "$file" 2>/dev/null | sed -u "s/^/$prefix/" &
	TAIL_PIDS+=($!)
}

stop_following() {
	local pid

	sleep 0.5
	for pid in "${TAIL_PIDS[@]}"; do
		pkill -P "$pid" 2>/dev/null
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	TAIL_PIDS=()
}

# Why VM ROLE's run failed (empty if it passed or skipped as allowed).
vm_verdict() {
	local dir=$1 role=$2 timeout=$3 killed=$4 allow_skip=$5 rc status

	if [ ! -f "$dir/exit_code" ]; then
		if [ "$killed" = 1 ]; then
			echo "VM $role hung: killed by the host after $((timeout + BOOT_SLACK))s"
		else
			echo "VM $role stopped without an exit code (kernel panic or boot failure? see $dir/serial.log)"
		fi
		return
	fi
	rc=$(cat "$dir/exit_code")
	status=$(cat "$dir/status" 2>/dev/null)
	if [ "$status" = timeout ]; then
		echo "test timed out after ${timeout}s in VM $role"
	elif [ "$rc" = 77 ] && [ "$allow_skip" = allowed ]; then
		return
	elif [ "$rc" = 77 ]; then
		echo "test skipped in VM $role but its header does not allow skipping: $(grep -a '^SKIP' "$dir/output.log" | tail -n 1)"
	elif [ "$rc" != 0 ]; then
		echo "test exited with $rc in VM $role$(last_fail_line "$dir")"
	fi
}

# ": " and the test's own last FAIL line, cut to 300 characters, so that
# the one-line verdict says why even when the log around it is cut.
last_fail_line() {
	local line

	line=$(grep -a '^FAIL: ' "$1/output.log" 2>/dev/null | tail -n 1)
	[ -z "$line" ] || printf ': %s' "${line:0:300}"
}

show_failure_details() {
	local testdir=$1 roles=$2 role dir

	for role in $roles; do
		dir=$testdir/vm-$role
		echo "---- vm $role: last lines of $dir/output.log"
		tail -n 30 "$dir/output.log" 2>/dev/null | sed 's/^/    /'
		echo "---- vm $role: last lines of $dir/kernel.log"
		tail -n 15 "$dir/kernel.log" 2>/dev/null | sed 's/^/    /'
		if [ ! -f "$dir/exit_code" ]; then
			echo "---- vm $role: last lines of $dir/serial.log"
			tail -n 30 "$dir/serial.log" 2>/dev/null | sed 's/^/    /'
			[ -s "$dir/qemu.log" ] && sed 's/^/    qemu: /' "$dir/qemu.log"
		fi
	done
}

# The first line, in a failed test's guest kernel logs, that says a
# virtio-net transmit queue stalled: QEMU stopped taking the guest's
# frames (seen under TCG on a loaded host, with or without this module;
# the guest's stack above the NIC is not involved).
nic_stall_line() {
	local testdir=$1

	grep -a -h -m 1 -E 'virtio_net .*(NETDEV WATCHDOG|TX timeout on queue)' \
		"$testdir"/vm-*/kernel.log 2>/dev/null | head -n 1
}

# Run one test script; prints its PASS/FAIL line.  A test that failed
# while a guest's virtio-net queue had stalled (nic_stall_line), or
# whose guest did not reach its init within BOOT_LIMIT seconds (scaled),
# runs again, up to ATTEMPTS attempts: each attempt run again is printed
# as a RERUN line, its logs are kept, and the count of tests run again is
# part of the summary.  Stalls come in runs on a loaded host (two in a
# row seen in one make check), hence more than one retry.
run_one() {
	local script=$1 attempt

	for attempt in $(seq 1 "$ATTEMPTS"); do
		run_attempt "$script" "$attempt" && return 0
		[ "$attempt" = 1 ] && N_RERUN=$((N_RERUN + 1))
	done
}

# run_attempt SCRIPT ATTEMPT: one run of SCRIPT.  Returns 1 only when the
# run should be repeated (see run_one).
run_attempt() {
	local script=$1 attempt=$2 name vms links timeout allow_skip testdir roles role
	local stall boot_limit waited=0 unbooted
	local index port_base=0 start killed=0 reasons=() bad verdict elapsed
	local skipped ROLES FABRIC_UPLINKS FABRIC_HOSTS FABRIC_LEAVES
	local FABRIC_SPINES FABRIC_RATE cpu_sampler=''

	name=$(basename "$script" .sh)
	vms=${OPT_VMS:-$(header_value "$script" vms 1)}
	links=${OPT_LINKS:-$(header_value "$script" links "$([ "$vms" = 2 ] && echo 1 || echo 0)")}
	timeout=${OPT_TIMEOUT:-$(header_value "$script" timeout 300)}
	is_number "$timeout" && timeout=$((timeout * TIMEOUT_SCALE))
	allow_skip=$(header_value "$script" skip no)
	VM_SMP=$(header_value "$script" smp "$DEFAULT_VM_SMP")
	VM_MEM=${OPT_MEM:-$(header_value "$script" mem "$DEFAULT_VM_MEM")}
	VM_MEMDEBUG=$(header_value "$script" memdebug on)
	[ "${STELLAR_MEMDEBUG:-0}" = 1 ] && VM_MEMDEBUG=on
	is_number "$vms" && is_number "$links" && is_number "$timeout" &&
		is_number "$VM_SMP" && is_number "$VM_MEM" ||
		die "$name: bad stellar-test header"
	FABRIC_UPLINKS=${OPT_FABRIC:-$(header_value "$script" fabric 0)}
	FABRIC_LEAVES=$(header_value "$script" leaves 2)
	FABRIC_SPINES=$(header_value "$script" spines 2)
	FABRIC_RATE=${STELLAR_FABRIC_RATE:-$(header_value "$script" rate 100mbit)}
	is_number "$FABRIC_UPLINKS" && is_number "$FABRIC_LEAVES" &&
		is_number "$FABRIC_SPINES" || die "$name: bad stellar-test header"
	if [ "$FABRIC_UPLINKS" -gt 0 ]; then
		[ "$vms" -ge 2 ] && [ "$vms" -le 8 ] &&
			[ "$FABRIC_UPLINKS" -le 4 ] && [ "$FABRIC_LEAVES" -ge 1 ] &&
			[ "$FABRIC_SPINES" -ge 1 ] && [ "$FABRIC_SPINES" -le 8 ] ||
			die "$name: a fabric has 2-8 hosts, 1-4 uplinks, 1-8 spines"
		ROLES=$(echo a b c d e f g h | cut -d ' ' -f "1-$vms")
		FABRIC_HOSTS=$vms
		links=$FABRIC_UPLINKS
		roles="$ROLES fabric"
	else
		case "$vms" in
		1) roles="a"; links=0 ;;
		2) roles="a b" ;;
		*) die "$name: vms must be 1 or 2 (more only on a fabric)" ;;
		esac
		ROLES=$roles
	fi

	testdir=$RESULTS/$name
	[ -e "$testdir" ] && testdir=$(mktemp -d "$RESULTS/$name.XXXX")
	mkdir -p "$testdir/shared"
	[ "$links" -gt 0 ] && port_base=$(vm_port_base $((links * ${FABRIC_HOSTS:-1})))
	start=$(date +%s)
	[ "$FABRIC_UPLINKS" = 0 ] || {
		cpu_sampler "$testdir/shared/host-cpu" $$ &
		cpu_sampler=$!
	}
	index=1
	for role in $roles; do
		mkdir -p "$testdir/vm-$role"
		: >"$testdir/vm-$role/output.log"
		if [ "$role" = fabric ]; then
			# The router: small, no memory debugging (it only
			# forwards), its script in place of the test's.
			vm_write_config "$testdir" "$role" router "$vms" \
				"$links" $((timeout + 60)) "$VM_DIR/fabric-router.sh"
			VM_MEM=512 VM_SMP=1 VM_MEMDEBUG=off vm_start "$role" \
				router "$testdir" "$links" "$port_base" test \
				"$testdir/vm-$role/serial.log"
		else
			vm_write_config "$testdir" "$role" "$index" "$vms" \
				"$links" "$timeout" "$script" "${SCRIPT_ARGS[@]}"
			vm_start "$role" "$index" "$testdir" "$links" \
				"$port_base" test "$testdir/vm-$role/serial.log"
		fi
		if [ "$VERBOSE" = 1 ]; then
			follow_output "$testdir/vm-$role/output.log" \
				"$([ "$roles" != a ] && echo "[$role] ")"
		fi
		index=$((index + 1))
	done
	boot_limit=$((BOOT_LIMIT * TIMEOUT_SCALE))
	# An attempt that is not the last stops as soon as a guest's NIC
	# stalls: the test would only wait out its timeouts before it is run
	# again.
	vm_wait_all $((start + timeout + BOOT_SLACK)) \
		$(($(date +%s) + boot_limit)) "$testdir" \
		"$([ "$attempt" -lt "$ATTEMPTS" ] && echo nic_stall_line)" || waited=$?
	[ "$waited" = 1 ] && killed=1
	[ -z "$cpu_sampler" ] || kill "$cpu_sampler" 2>/dev/null || true
	elapsed=$(($(date +%s) - start))
	[ "$VERBOSE" = 1 ] && stop_following
	if [ "$waited" = 3 ]; then
		echo "RERUN $name: a guest's NIC stalled; stopped after ${elapsed}s (logs in $testdir)"
		echo "    klog $(nic_stall_line "$testdir")"
		return 1
	fi
	if [ "$waited" = 2 ]; then
		unbooted=$(vm_unbooted "$testdir" | xargs)
		if [ "$attempt" -lt "$ATTEMPTS" ]; then
			echo "RERUN $name: VM $unbooted did not boot within ${boot_limit}s (logs in $testdir)"
			return 1
		fi
		reasons+=("VM $unbooted did not boot within ${boot_limit}s")
	fi

	skipped=0
	for role in $roles; do
		verdict=$(vm_verdict "$testdir/vm-$role" "$role" "$timeout" \
			"$killed" "$allow_skip")
		[ -n "$verdict" ] && reasons+=("$verdict")
		[ "$(cat "$testdir/vm-$role/exit_code" 2>/dev/null)" = 77 ] && skipped=1
	done
	bad=$(cd "$testdir" && klog_bad_lines vm-*/kernel.log vm-*/serial.log)
	[ -n "$bad" ] && reasons+=("kernel log has $(echo "$bad" | wc -l) bad line(s)")

	stall=''
	[ "${#reasons[@]}" -gt 0 ] && stall=$(nic_stall_line "$testdir")
	if [ -n "$stall" ] && [ "$attempt" -lt "$ATTEMPTS" ]; then
		echo "RERUN $name: a guest's NIC stalled (${elapsed}s; logs in $testdir): $(printf '%s; ' "${reasons[@]}" | sed 's/; $//')"
		echo "    klog $stall"
		return 1
	elif [ "${#reasons[@]}" -gt 0 ]; then
		N_FAIL=$((N_FAIL + 1))
		echo "FAIL $name: $(printf '%s; ' "${reasons[@]}" | sed 's/; $//')" |
			tee -a "$RESULTS/failures.txt"
		[ -n "$bad" ] && echo "$bad" | head -n 40 | sed 's/^/    klog /'
		show_failure_details "$testdir" "$roles"
	elif [ "$skipped" = 1 ]; then
		N_SKIP=$((N_SKIP + 1))
		echo "SKIP $name: $(grep -ah '^SKIP' "$testdir"/vm-*/output.log | head -n 1)"
	else
		N_PASS=$((N_PASS + 1))
		echo "PASS $name (${elapsed}s)"
	fi
	return 0
}

# Can SCRIPT run beside another test?  One VM, one vCPU, not alone=yes.
pairable() {
	local script=$1

	[ "$JOBS" -gt 1 ] && [ "$VERBOSE" = 0 ] &&
		[ "${OPT_VMS:-$(header_value "$script" vms 1)}" = 1 ] &&
		[ "$(header_value "$script" smp "$DEFAULT_VM_SMP")" = 1 ] &&
		[ "$(header_value "$script" alone no)" != yes ]
}

# Count the verdict line of a finished test's output and print it all.
lane_report() {
	local out=$1

	case "$(grep -m 1 -E '^(PASS|FAIL|SKIP) ' "$out")" in
	PASS*) N_PASS=$((N_PASS + 1)) ;;
	SKIP*) N_SKIP=$((N_SKIP + 1)) ;;
	*) N_FAIL=$((N_FAIL + 1)) ;;
	esac
	grep -q '^RERUN ' "$out" && N_RERUN=$((N_RERUN + 1))
	cat "$out"
	rm -f "$out"
}

# Wait for one lane to finish and report it.
lane_wait() {
	local i pid

	while :; do
		for i in "${!LANE_PIDS[@]}"; do
			pid=${LANE_PIDS[$i]}
			kill -0 "$pid" 2>/dev/null && continue
			wait "$pid" 2>/dev/null
			lane_report "$RESULTS/.lane.$pid"
			unset 'LANE_PIDS[i]'
			LANE_PIDS=("${LANE_PIDS[@]}")
			return
		done
		sleep 0.5
	done
}

# Run the pairable tests JOBS at a time, each in a subshell of its own
# whose VMs die with it; their output is printed when each ends.
run_paired() {
	local script pid

	for script in "$@"; do
		[ "${#LANE_PIDS[@]}" -ge "$JOBS" ] && lane_wait
		(
			trap vm_kill_all EXIT
			trap 'exit 130' INT TERM
			run_one "$script" >"$RESULTS/.lane.$BASHPID" 2>&1
		) &
		pid=$!
		LANE_PIDS+=("$pid")
	done
	while [ "${#LANE_PIDS[@]}" -gt 0 ]; do
		lane_wait
	done
}

parse_args() {
	local script

	TESTS=()
	while [ $# -gt 0 ]; do
		case "$1" in
		--vms) OPT_VMS=$2; shift ;;
		--fabric) OPT_FABRIC=$2; shift ;;
		--links) OPT_LINKS=$2; shift ;;
		--timeout) OPT_TIMEOUT=$2; shift ;;
		--mem) OPT_MEM=$2; shift ;;
		--results) RESULTS=$2; shift ;;
		-v | --verbose) VERBOSE=1 ;;
		-q | --quiet) VERBOSE=0 ;;
		-h | --help) usage ;;
		--) shift; SCRIPT_ARGS=("$@"); break ;;
		-*) echo "unknown option: $1" >&2; usage ;;
		*)
			script=$(resolve_test "$1") || exit 2
			TESTS+=("$script")
			;;
		esac
		shift
	done
	if [ "${#TESTS[@]}" = 0 ]; then
		TESTS=("$REPO"/tests/integration/*.sh)
		[ -f "${TESTS[0]}" ] || die "no tests in $REPO/tests/integration"
		LONG=${STELLAR_LONG:-0}
	else
		LONG=${STELLAR_LONG:-1}
	fi
}

main() {
	local script summary paired single

	[ "$(id -u)" = 0 ] || die "run as root (the VMs share the host's / over 9p)"
	command -v qemu-system-x86_64 >/dev/null ||
		die "qemu-system-x86_64 missing (apt-get install qemu-system-x86)"
	parse_args "$@"
	is_number "$TIMEOUT_SCALE" && [ "$TIMEOUT_SCALE" -ge 1 ] ||
		die "STELLAR_TIMEOUT_SCALE must be a whole number >= 1"
	is_number "$ATTEMPTS" && [ "$ATTEMPTS" -ge 1 ] ||
		die "STELLAR_ATTEMPTS must be a whole number >= 1"
	RESULTS=${RESULTS:-$VM_BUILD/results/$(date +%Y%m%d-%H%M%S)-$$}
	mkdir -p "$RESULTS"
	RESULTS=$(cd "$RESULTS" && pwd -P)
	trap cleanup EXIT
	trap 'exit 130' INT TERM
	vm_initramfs "$(vm_kernel_version)" >/dev/null || exit 2
	echo "results: $RESULTS"
	paired=() single=()
	for script in "${TESTS[@]}"; do
		if pairable "$script"; then
			paired+=("$script")
		else
			single+=("$script")
		fi
	done
	[ "${#paired[@]}" -gt 1 ] || { single=("${paired[@]}" "${single[@]}"); paired=(); }
	# Longest first (by timeout), so that no long test runs alone at the
	# end of the paired phase while a CPU idles.
	mapfile -t paired < <(for script in "${paired[@]}"; do
		echo "$(header_value "$script" timeout 300) $script"
	done | sort -s -k 1,1nr | cut -d ' ' -f 2-)
	run_paired "${paired[@]}"
	for script in "${single[@]}"; do
		run_one "$script"
	done
	# Again at the end: a failure's details can be longer than the
	# part of the output a CI log keeps.
	if [ -s "$RESULTS/failures.txt" ]; then
		echo "the failures, again:"
		sed 's/^/    /' "$RESULTS/failures.txt"
	fi
	summary="$N_PASS passed, $N_FAIL failed"
	[ "$N_SKIP" -gt 0 ] && summary="$summary, $N_SKIP skipped"
	[ "$N_RERUN" -gt 0 ] &&
		summary="$summary, $N_RERUN rerun after a guest's NIC or boot stalled"
	echo "$summary"
	[ "$N_FAIL" = 0 ]
}

main "$@"
