#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# What a local user or another network namespace may learn about the QPs
# of a device: QP numbers, PSNs and UDP source ports are what a host needs
# to inject packets into a connection, so only CAP_NET_ADMIN in the
# device's network namespace sees them.  With a root RC QP in RTS
# (helpers/wire_qp.c) on stellar0 in init_net:
#   - /proc/stellar/stellar0/qps: root reads it, an unprivileged user gets
#     EACCES; /proc/stellar/spray_stats shows that user the device's
#     aggregates but no per-QP line;
#   - stellar-tool qps as that user fails with EPERM, status still works;
#   - from "other", stellar-tool status lists no device
#     and status/qps/set --device stellar0 find none.
# stellar-test: vms=1 timeout=300

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"

HELPERS=$STELLAR_REPO/tests/integration/helpers
TOOL=$STELLAR_REPO/tools/stellar-tool
[ -x "$TOOL" ] || fail "stellar-tool not built: $TOOL (run make -C tools)"
UNPRIV="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all"

# as_nobody_fails WHAT CMD...: CMD run as nobody exits non-zero; its
# stderr is left in $ERR.
as_nobody_fails() {
	local what=$1 status=0

	shift
	$UNPRIV "$@" >/tmp/nobody.out 2>/tmp/nobody.err || status=$?
	ERR=$(cat /tmp/nobody.err)
	[ "$status" != 0 ] ||
		fail "$what as nobody succeeded: $(head -c 300 /tmp/nobody.out)"
}

stellar_load spray_paths=4
# The QP's peer address lives on veth0p in the namespace "other".
ip netns add other
veth_pair veth0 veth0p 10.60.0.1/24
ip link set veth0p netns other
ip -n other addr add 10.60.0.2/24 dev veth0p
ip -n other link set veth0p up
wait_for 10 ip netns exec other ping -c 1 -W 1 10.60.0.1
rdma link add stellar0 type stellar netdev veth0
wait_for 15 ib_port_state_is stellar0 PORT_ACTIVE

gcc -O2 -Wall -o /tmp/wire_qp "$HELPERS/wire_qp.c" -libverbs ||
	fail "cannot build helpers/wire_qp.c"
gid=$(gid_index stellar0 10.60.0.1)
coproc WIRE { /tmp/wire_qp stellar0 "$gid" 10.60.0.2 0x777 0x100 \
	2>"$STELLAR_OUT/wire_qp.err"; }
read -r -t 60 -u "${WIRE[0]}" _ qpn ||
	fail "wire_qp did not start:"$'\n'"$(cat "$STELLAR_OUT/wire_qp.err")"
log "root's RC QP $qpn is in RTS"

log "/proc/stellar/stellar0/qps"
assert_contains "$(cat /proc/stellar/stellar0/qps)" "qp $qpn: type RC state RTS" \
	"qps as root"
as_nobody_fails "reading /proc/stellar/stellar0/qps" cat /proc/stellar/stellar0/qps
assert_contains "$ERR" "Permission denied" "qps as nobody"
$UNPRIV cat /proc/stellar/stellar0/stats >/dev/null ||
	fail "device counters are not readable by nobody"

log "/proc/stellar/spray_stats"
assert_contains "$(cat /proc/stellar/spray_stats)" "  qp $qpn: paths 4 " \
	"spray_stats as root"
out=$($UNPRIV cat /proc/stellar/spray_stats) ||
	fail "spray_stats not readable by nobody"
assert_contains "$out" "device stellar0 netdev veth0 spray_paths 4 qps 1" \
	"spray_stats as nobody"
assert_not_contains "$out" "qp $qpn" "spray_stats as nobody"

log "stellar-tool qps"
out=$("$TOOL" qps --device stellar0) || fail "stellar-tool qps as root failed"
assert_contains "$out" "qp $qpn: type RC state RTS" "stellar-tool qps as root"
as_nobody_fails "stellar-tool qps" "$TOOL" qps --device stellar0
assert_eq "$ERR" \
	"stellar-tool: qps: permission denied (CAP_NET_ADMIN is required; try as root)" \
	"stellar-tool qps as nobody"
$UNPRIV "$TOOL" status --device stellar0 >/dev/null ||
	fail "stellar-tool status as nobody failed"

log "another network namespace"
status=0
out=$(ip netns exec other "$TOOL" status 2>&1) || status=$?
assert_eq "$status" 0 "status in another netns: exit status"
assert_not_contains "$out" "stellar0" "status in another netns"
assert_contains "$out" "no stellar devices" "status in another netns"
for cmd in "status" "qps" "set --spray-paths 2"; do
	status=0
	# shellcheck disable=SC2086
	out=$(ip netns exec other "$TOOL" $cmd --device stellar0 2>&1) || status=$?
	assert_eq "$status" 1 "$cmd --device stellar0 in another netns: exit status"
	assert_eq "$out" "stellar-tool: no such stellar device 'stellar0'" \
		"$cmd --device stellar0 in another netns"
done
assert_eq "$(grep spray_paths /proc/stellar/stellar0/settings)" \
	"spray_paths: 4" "settings after a set from another netns"

echo quit >&"${WIRE[1]}"
wait "$WIRE_PID" || fail "wire_qp exited with $?"
rdma link delete stellar0
ip netns del other
stellar_unload
log "local_privacy OK"
