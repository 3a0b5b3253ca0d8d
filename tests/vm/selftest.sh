#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Self-test of the VM harness: runs throw-away tests (written to a temp
# dir, never committed) through run-tests.sh and checks that each bad
# outcome is reported as a failure and a good one as a pass:
#   a kernel WARNING, a non-zero exit, a guest-side timeout, a kernel
#   panic, an unallowed skip, one failing VM of a pair, a hung VM killed
#   by the host; that a failure beside a stalled virtio-net queue runs
#   again, three attempts at most; plus a passing test and an allowed
#   skip, and that no qemu outlives a runner, even one killed with
#   SIGKILL.
# Prints one PASS/FAIL line per check and "N passed, N failed".

set -u

VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
WORK=$(mktemp -d /tmp/stellar-selftest.XXXXXX)
RESULTS=$VM_DIR/.build/results/selftest-$(date +%Y%m%d-%H%M%S)-$$
N_PASS=0 N_FAIL=0

trap 'rm -rf "$WORK"' EXIT

# make_test NAME HEADER BODY: write a test script into $WORK.
make_test() {
	{
		echo '#!/bin/bash'
		echo "# stellar-test: $2"
		echo ". \"\$STELLAR_REPO/tests/vm/lib.sh\""
		echo "$3"
	} >"$WORK/$1.sh"
}

# verdict WHAT OK WHY: count and print check WHAT, passed if OK is 0,
# else failed because of WHY.
verdict() {
	if [ "$2" = 0 ]; then
		echo "PASS $1"
		N_PASS=$((N_PASS + 1))
	else
		echo "FAIL $1: $3"
		N_FAIL=$((N_FAIL + 1))
	fi
}

# check WHAT PATTERN: the runner's output must contain PATTERN (grep -E).
check() {
	grep -qE -- "$2" "$WORK/out"
	verdict "$1" $? "no line matching '$2' in the runner output"
}

# check_count WHAT PATTERN N: exactly N lines of the runner's output
# match PATTERN.
check_count() {
	local n

	n=$(grep -cE -- "$2" "$WORK/out")
	[ "$n" = "$3" ]
	verdict "$1" $? "$n lines matching '$2' in the runner output, expected $3"
}

# check_rc WHAT RC EXPECTED: the runner exited EXPECTED.
check_rc() {
	[ "$2" = "$3" ]
	verdict "$1" $? "runner exited $2, expected $3"
}

make_test good 'vms=1 timeout=60' 'log fine'
make_test warn 'vms=1 timeout=60' "echo 'WARNING: test' >/dev/kmsg"
make_test exit1 'vms=1 timeout=60' 'false'
make_test slub 'vms=1 timeout=60' \
	"grep -q slub_debug=FZP /proc/cmdline || fail 'no slub_debug'; echo 'BUG kmalloc-64 (Not tainted): Poison overwritten' >/dev/kmsg"
make_test nodebug 'vms=1 timeout=60 memdebug=off' \
	"! grep -q slub_debug /proc/cmdline || fail 'slub_debug on'"
make_test slow 'vms=1 timeout=5' 'sleep 60'
make_test panic 'vms=1 timeout=60' 'echo c >/proc/sysrq-trigger; sleep 30'
make_test noskip 'vms=1 timeout=60' 'skip "not allowed here"'
make_test okskip 'vms=1 timeout=60 skip=allowed' 'skip "allowed here"'
make_test pairfail 'vms=2 links=1 timeout=60' \
	'barrier start; [ "$STELLAR_ROLE" = a ] || fail "b fails on purpose"'

"$VM_DIR/run-tests.sh" --results "$RESULTS/main" "$WORK"/{good,warn,slub,nodebug,exit1,slow,panic,noskip,okskip,pairfail}.sh \
	>"$WORK/out" 2>&1
rc=$?
cat "$WORK/out"
echo "----"
check "passing test passes" '^PASS good \([0-9]+s\)$'
check "kernel WARNING fails the test" '^FAIL warn: kernel log has'
check "WARNING line is printed" "klog vm-a/kernel.log:.*WARNING: test"
check "SLUB report fails the test" '^FAIL slub: kernel log has'
check "memdebug=off boots without SLUB debugging" '^PASS nodebug \([0-9]+s\)$'
check "non-zero exit fails" '^FAIL exit1: test exited with 1 in VM a'
check "guest timeout fails" '^FAIL slow: test timed out after 5s'
check "kernel panic fails" '^FAIL panic: VM a stopped without an exit code.*kernel log has'
check "unallowed skip fails" '^FAIL noskip: test skipped in VM a but'
check "allowed skip is counted" '^SKIP okskip'
check "one failing VM of a pair fails" '^FAIL pairfail: test exited with 1 in VM b'
check "summary line" '^2 passed, 7 failed, 1 skipped$'
check_rc "runner exits 1 on failures" "$rc" 1

# A test that fails while a guest's virtio-net queue has stalled runs
# again, up to three attempts: "stallonce" fails only on its first
# attempt (the second one's results directory exists then), "stalltwice"
# on its first two, "stall" on all three.
stall_line='virtio_net virtio2 eth0: NETDEV WATCHDOG: CPU: 0: transmit queue 0 timed out 9000 ms'
make_test stall 'vms=1 timeout=60' "echo '$stall_line' >/dev/kmsg; false"
make_test stallonce 'vms=1 timeout=60' \
	"ls -d '$RESULTS/stall/stallonce.'* >/dev/null 2>&1 && exit 0; echo '$stall_line' >/dev/kmsg; false"
make_test stalltwice 'vms=1 timeout=60' \
	"[ \$(ls -d '$RESULTS/stall/stalltwice.'* 2>/dev/null | wc -l) -ge 2 ] && exit 0; echo '$stall_line' >/dev/kmsg; false"
STELLAR_TEST_JOBS=1 "$VM_DIR/run-tests.sh" --results "$RESULTS/stall" \
	"$WORK/stall.sh" "$WORK/stallonce.sh" "$WORK/stalltwice.sh" \
	>"$WORK/out" 2>&1
rc=$?
cat "$WORK/out"
echo "----"
check "a stalled NIC reruns the test" '^RERUN stall: a guest.s NIC stalled'
check "the stall line is printed" 'klog .*NETDEV WATCHDOG'
check "a third failure fails" '^FAIL stall: test exited with 1 in VM a'
check "a passing rerun passes" '^PASS stallonce \([0-9]+s\)$'
check "a passing third attempt passes" '^PASS stalltwice \([0-9]+s\)$'
check_count "three attempts at most" '^RERUN stall: ' 2
check "reruns are counted" '^2 passed, 1 failed, 3 rerun after a guest.s NIC or boot stalled$'
check_rc "runner exits 1 when a rerun fails" "$rc" 1

# A VM that does not finish in time is killed by the host.
make_test hang 'vms=1 timeout=2' 'sleep 60'
STELLAR_BOOT_SLACK=1 "$VM_DIR/run-tests.sh" --results "$RESULTS/hang" "$WORK/hang.sh" >"$WORK/out" 2>&1
rc=$?
cat "$WORK/out"
echo "----"
check "hung VM is killed by the host" '^FAIL hang: VM a hung: killed by the host after 3s'
check_rc "runner exits 1 on a hang" "$rc" 1

# A runner killed with SIGKILL takes its VMs with it.
"$VM_DIR/run-tests.sh" --results "$RESULTS/killed" "$WORK/slow.sh" >/dev/null 2>&1 &
runner=$!
sleep 3
pgrep -f -- "$RESULTS/killed" >/dev/null || echo "note: no VM seen before the kill"
kill -KILL "$runner"
wait "$runner" 2>/dev/null
sleep 2
if pgrep -f -- "$RESULTS" >/dev/null; then
	echo "FAIL no qemu left behind: $(pgrep -af -- "$RESULTS")"
	N_FAIL=$((N_FAIL + 1))
	# Only our own leftovers: their command lines hold our unique results path.
	pgrep -f -- "$RESULTS" | xargs -r kill -KILL
else
	echo "PASS no qemu left behind"
	N_PASS=$((N_PASS + 1))
fi

echo "$N_PASS passed, $N_FAIL failed"
[ "$N_FAIL" = 0 ]
