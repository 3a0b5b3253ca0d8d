#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Object lifetimes against concurrent lookups, in a VM with two CPUs whose
# kernel poisons freed memory (slub_debug, init_on_free): a process
# (helpers/local_limits.c, churn mode) creates and destroys QPs and MRs in
# a loop and makes QP creations fail after the driver picked a QPN (a raw
# CREATE_QP whose response buffer it cannot write), while ns1 sprays
# SENDs and WRITEs with a correct ICRC at the QPNs being handed out and
# the doorbell poller walks the QP table.  Every failed creation fails
# with EFAULT and leaves no QP behind, the kernel reports nothing and the
# module unloads.  A use after free here is a race that a packet or a
# poller pass hits only by luck, so the test then runs the churn again
# with tests/kmod/stellar_race.ko widening each window to tens of
# milliseconds:
#   qp_create   a lookup finds a QP whose creation then fails, and holds it
#               (the driver must not make a QP visible before it can no
#               longer fail);
#   qp_lookup   a lookup is slowed down between finding a QP and taking its
#               reference while the QP is destroyed (the reference must be
#               taken where a destroy waits for it);
#   frmr_fence  a copy into a fast-registration MR is slowed down while the
#               key is invalidated (no byte may land after the invalidation
#               returned).
# stellar-test: vms=1 timeout=500 smp=2

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

HELPERS=$STELLAR_REPO/tests/integration/helpers
SECONDS_CHURN=40
# make check's short form (lib.sh long_run): a shorter first churn; the
# race windows below are what make the rare interleavings likely.
long_run || SECONDS_CHURN=25
SECONDS_RACE=15
# The race module built with STELLAR_KO (a KASAN tree keeps the pair
# together), or STELLAR_RACE_KO, or this tree's for a variant module
# that came without one.
RACE_KO=${STELLAR_RACE_KO:-$(dirname "$STELLAR_KO")/../tests/kmod/stellar_race.ko}
[ -f "$RACE_KO" ] || [ -n "${STELLAR_RACE_KO:-}" ] ||
	RACE_KO=$STELLAR_REPO/tests/kmod/stellar_race.ko

[ "$(nproc)" -ge 2 ] || fail "this test needs 2 vCPUs, the VM has $(nproc)"
stellar_load db_poll_interval=20
sysctl -qw net.core.netdev_max_backlog=100000
veth_netns veth0 veth0p ns1 10.51.0.1/24 10.51.0.2/24
wait_for 10 ip netns exec ns1 ping -c 1 -W 1 10.51.0.1
rdma link add stellar0 type stellar netdev veth0

gcc -O2 -Wall -o /tmp/local_limits "$HELPERS/local_limits.c" -libverbs ||
	fail "cannot build helpers/local_limits.c"

log "churn for $SECONDS_CHURN s while ns1 sprays QPNs 0x11..0x2010"
(
	while :; do
		ip netns exec ns1 python3 "$HELPERS/roce_craft.py" sweep \
			--src 10.51.0.2 --dst 10.51.0.1 --qpn 0x11 --span 8192 \
			--count 20000 >/dev/null 2>>"$STELLAR_OUT/craft.log" || exit 1
	done
) &
spray=$!
status=0
/tmp/local_limits stellar0 churn "$SECONDS_CHURN" >"$STELLAR_OUT/churn.log" 2>&1 ||
	status=$?
kill "$spray"
wait "$spray" 2>/dev/null || true
sed 's/^/    /' "$STELLAR_OUT/churn.log"
[ "$status" = 0 ] || fail "local_limits churn exited with $status"
assert_contains "$(cat "$STELLAR_OUT/churn.log")" "EFAULT"
created=$(awk '$1 == "created" { print $2 }' "$STELLAR_OUT/churn.log")
[ "$created" -gt 100 ] || fail "only $created QPs created"
rx=$(stellar_stat stellar0 rx_packets)
[ "$rx" -gt 1000 ] || fail "only $rx packets reached the device"
log "$created QPs, $rx packets received"

[ -z "$(rdma resource show qp | grep -v 'comm \[')" ] ||
	fail "QPs left behind: $(rdma resource show qp)"

[ -f "$RACE_KO" ] || fail "test module not built: $RACE_KO (run make testprogs)"
declare -A RACE_ARGS=([qp_create]="delay_ms=50 hold_ms=60" [qp_lookup]="delay_ms=20")
for mode in qp_create qp_lookup; do
	# shellcheck disable=SC2086 # the arguments are words
	insmod "$RACE_KO" mode=$mode ${RACE_ARGS[$mode]} || fail "insmod stellar_race mode=$mode"
	/tmp/local_limits stellar0 churn "$SECONDS_RACE" \
		>"$STELLAR_OUT/race-$mode.log" 2>&1 ||
		fail "churn under $mode: $(cat "$STELLAR_OUT/race-$mode.log")"
	held=$(cat /sys/module/stellar_race/parameters/held)
	rmmod stellar_race
	log "$mode: the lookup thread held $held QPs"
	[ "$held" -ge 3 ] || fail "$mode: only $held QPs held, window not exercised"
done
insmod "$RACE_KO" mode=frmr_fence delay_ms=300 ||
	fail "insmod stellar_race mode=frmr_fence"
result=$(cat /sys/module/stellar_race/parameters/result)
rmmod stellar_race
log "frmr_fence: $(dmesg | grep 'stellar_race: frmr_fence' | tail -n 1)"
[ "$result" = pass ] || fail "frmr_fence: $result"
rdma link del stellar0
stellar_unload
