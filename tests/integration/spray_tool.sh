#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Packet spray observability against the real module, in one VM:
# /proc/stellar/spray_stats (a section per device), stellar-tool paths
# (text and JSON, one device or all), ooo-monitor (--count, and SIGINT
# ends it with status 0), set-qp on an RC QP (accepted), on the GSI QP
# (refused: datagram), on an unknown QP, with an out-of-range value and
# without CAP_NET_ADMIN.
# stellar-test: vms=1 timeout=300

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../vm/lib.sh"

TOOL=$STELLAR_REPO/tools/stellar-tool
[ -x "$TOOL" ] || fail "stellar-tool not built: $TOOL (run make -C tools)"
PROC=/proc/stellar/spray_stats

# run_tool EXPECTED-STATUS ARGS...: output in $OUT and $ERR.
run_tool() {
	local expected=$1 status=0

	shift
	OUT=$("$TOOL" "$@" 2>/tmp/stellar-tool.err) || status=$?
	ERR=$(cat /tmp/stellar-tool.err)
	[ "$status" = "$expected" ] ||
		fail "stellar-tool $*: exit $status, expected $expected; stdout: $OUT; stderr: $ERR"
}

stellar_load spray_paths=4
veth_pair ve0 ve1 10.9.0.1/24 10.9.0.2/24
rdma link add stellar0 type stellar netdev ve0
rdma link add stellar1 type stellar netdev ve1

log "/proc/stellar/spray_stats"
[ -r "$PROC" ] || fail "$PROC missing"
cat "$PROC" >"$STELLAR_OUT/spray_stats.initial"
assert_contains "$(cat "$PROC")" "device stellar0 netdev ve0 spray_paths 4 qps 0" "$PROC"
assert_contains "$(cat "$PROC")" "device stellar1 netdev ve1 spray_paths 4 qps 0" "$PROC"
assert_contains "$(cat "$PROC")" "  ooo_depth 1:0 2-3:0 4-7:0" "$PROC"
assert_contains "$(cat "$PROC")" " 2048+:0 max:0" "$PROC"

log "paths"
run_tool 0 paths
assert_contains "$OUT" "stellar0: spray_paths 4, 0 QPs spraying" "paths"
assert_contains "$OUT" "stellar1: spray_paths 4, 0 QPs spraying" "paths"
assert_contains "$OUT" "  out-of-order depth: 1:0 2-3:0" "paths"
run_tool 0 -j paths
assert_eq "$(echo "$OUT" | jq -c '[.[] | {device, spray_paths, qps}]')" \
	'[{"device":"stellar0","spray_paths":4,"qps":0},{"device":"stellar1","spray_paths":4,"qps":0}]' \
	"paths JSON"
run_tool 0 set --device stellar1 --spray-paths 64
run_tool 0 paths --device stellar1 --json
assert_eq "$(echo "$OUT" | jq -c '{device, spray_paths, ooo_max}')" \
	'{"device":"stellar1","spray_paths":64,"ooo_max":0}' "paths --device JSON"
assert_eq "$(echo "$OUT" | jq '.ooo_depth | length')" 12 "histogram buckets"
run_tool 1 paths --device nosuch0
assert_eq "$ERR" "stellar-tool: no such stellar device 'nosuch0'" "paths nosuch0"

log "ooo-monitor --count"
run_tool 0 ooo-monitor --device stellar0 --interval 100 --count 3 --json
assert_eq "$(echo "$OUT" | wc -l)" 3 "ooo-monitor refreshes"
echo "$OUT" | jq -e 'select(.device == "stellar0" and .interval_ms >= 90 and
	(.ooo_interval | length) == 12)' >/dev/null ||
	fail "ooo-monitor JSON: $OUT"
run_tool 0 ooo-monitor --device stellar0 --interval 50 --count 2
assert_contains "$OUT" "stellar0: out-of-order arrivals" "ooo-monitor text"
assert_contains "$OUT" "  deepest: 0" "ooo-monitor text"

log "ooo-monitor ends on SIGINT with status 0"
"$TOOL" ooo-monitor --device stellar0 --interval 100 >"$STELLAR_OUT/monitor.txt" 2>&1 &
mon=$!
sleep 1
kill -INT "$mon"
status=0
wait "$mon" || status=$?
assert_eq "$status" 0 "ooo-monitor exit status after SIGINT"
grep -q "stellar0: out-of-order arrivals" "$STELLAR_OUT/monitor.txt" ||
	fail "ooo-monitor printed no refresh: $(cat "$STELLAR_OUT/monitor.txt")"

log "set-qp"
gid=$(gid_index stellar0 10.9.0.1)
ibv_rc_pingpong -d stellar0 -g "$gid" -p 18515 >"$STELLAR_OUT/pingpong.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
wait_for 10 grep -q 'type RC' /proc/stellar/stellar0/qps
qpn=$(awk '/type RC/ { sub(":", "", $2); print $2; exit }' /proc/stellar/stellar0/qps)
log "RC QP $qpn"
run_tool 0 set-qp --device stellar0 --qp "$qpn" --spray-paths 8
assert_eq "$OUT$ERR" "" "set-qp output"
run_tool 1 set-qp --device stellar0 --qp 1 --spray-paths 8
assert_contains "$ERR" "datagram QPs do not spray" "set-qp on the GSI QP"
run_tool 1 set-qp --device stellar0 --qp 999999 --spray-paths 8
assert_contains "$ERR" "no such QP on this device" "set-qp on an unknown QP"
run_tool 1 set-qp --device stellar0 --qp "$qpn" --spray-paths 0
assert_contains "$ERR" "--spray-paths 0 refused: the module accepts 1 to 256" "set-qp 0"
run_tool 1 set-qp --device nosuch0 --qp "$qpn" --spray-paths 2
assert_eq "$ERR" "stellar-tool: no such stellar device 'nosuch0'" "set-qp nosuch0"
UNPRIV="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all"
status=0
err=$($UNPRIV "$TOOL" set-qp --device stellar0 --qp "$qpn" --spray-paths 4 2>&1) ||
	status=$?
assert_eq "$status" 1 "set-qp as nobody: exit status"
assert_contains "$err" "permission denied" "set-qp as nobody"
$UNPRIV "$TOOL" paths --device stellar0 >/dev/null || fail "paths as nobody failed"
kill "$server"
wait "$server" 2>/dev/null || true
trap - EXIT

log "after the devices are gone"
rdma link delete stellar1
rdma link delete stellar0
assert_not_contains "$(cat "$PROC")" "device stellar" "$PROC without devices"
run_tool 0 -j paths
assert_eq "$OUT" "[]" "paths JSON without devices"
stellar_unload
log "spray observability ok"
