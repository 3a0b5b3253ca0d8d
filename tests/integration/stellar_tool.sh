#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# stellar-tool against the real module, in a test VM: the not-loaded
# report, status/params/stats in text and JSON, set with the kernel's
# range check and its extack message, unknown devices, and set and qps
# without CAP_NET_ADMIN.  Run with:
#   tests/vm/run-tests.sh stellar_tool
# (build first: make -C kernel && make -C tools).  STELLAR_KO may name
# another virtio_stellar.ko.
# stellar-test: vms=1 timeout=300

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../vm/lib.sh"

TOOL=$STELLAR_REPO/tools/stellar-tool
[ -x "$TOOL" ] || fail "stellar-tool not built: $TOOL (run make -C tools)"

# run_tool EXPECTED-STATUS ARGS...: run stellar-tool, leave its output in
# $OUT and $ERR, fail unless it exits with EXPECTED-STATUS.
run_tool() {
	local expected=$1 status=0

	shift
	OUT=$("$TOOL" "$@" 2>/tmp/stellar-tool.err) || status=$?
	ERR=$(cat /tmp/stellar-tool.err)
	[ "$status" = "$expected" ] ||
		fail "stellar-tool $*: exit $status, expected $expected; stdout: $OUT; stderr: $ERR"
}

# link_state_is DEV STATE: "rdma link show" has DEV in STATE (no provider
# needed, unlike ibv_devinfo).
link_state_is() {
	rdma_link_line "$1" | grep -q " state $2 "
}

NOT_LOADED="stellar-tool: the virtio_stellar kernel module is not loaded (generic netlink family 'stellar' not found)"

log "before insmod"
run_tool 1 status
assert_eq "$ERR" "$NOT_LOADED" "status without the module"

stellar_load --kernel-only spray_paths=2 emtt_cache_size=32

log "no devices yet"
run_tool 0 status
assert_eq "$OUT" "" "status without devices"
assert_contains "$ERR" "no stellar devices" "status without devices"
run_tool 0 -j status
assert_eq "$OUT" "[]" "JSON status without devices"

log "params"
run_tool 0 params
assert_eq "$OUT" "rx_buf_size: $(cat /sys/module/virtio_stellar/parameters/rx_buf_size)
spray_paths: 2
emtt_cache_size: 32
db_poll_interval: $(cat /sys/module/virtio_stellar/parameters/db_poll_interval)
pin_mode: 0
cc: 1
cc_max_rate: 0" "params"
run_tool 0 params --json
assert_eq "$(echo "$OUT" | jq -c '{spray_paths, emtt_cache_size}')" \
	'{"spray_paths":2,"emtt_cache_size":32}' "JSON params"

veth_pair veth0 veth0p 10.20.0.1/24 10.20.0.2/24
veth_pair veth1 veth1p 10.21.0.1/24 10.21.0.2/24
rdma link add stellar0 type stellar netdev veth0
wait_for 15 link_state_is stellar0 ACTIVE

log "status of one device"
run_tool 0 status --device stellar0
echo "$OUT"
assert_contains "$OUT" "stellar0 (index " "status"
assert_contains "$OUT" "  netdev: veth0 (ifindex $(cat /sys/class/net/veth0/ifindex))" "status"
assert_contains "$OUT" "  port_state: ACTIVE" "status"
assert_contains "$OUT" "  mtu: " "status"
assert_contains "$OUT" "    spray_paths: 2" "status"
assert_contains "$OUT" "    emtt_cache_size: 32" "status"
assert_contains "$OUT" "  counters:
    rx_packets: " "status"

log "stats: same counters as /proc/stellar"
run_tool 0 stats --device stellar0
echo "$OUT" | grep -Evq '^[a-z0-9_]+: [0-9]+$' &&
	fail "stats line not 'name: value': $OUT"
assert_eq "$(echo "$OUT" | cut -d: -f1)" \
	"$(cut -d: -f1 /proc/stellar/stellar0/stats)" "counter names"
run_tool 0 -j stats --device stellar0
assert_eq "$(echo "$OUT" | jq -r 'keys_unsorted | join(" ")')" \
	"$(cut -d: -f1 /proc/stellar/stellar0/stats | tr '\n' ' ' | sed 's/ $//')" \
	"JSON counter names"

log "status of all devices"
rdma link add stellar1 type stellar netdev veth1
ip link set veth1 down
wait_for 15 link_state_is stellar1 DOWN
run_tool 0 status
assert_contains "$OUT" "stellar0 (index " "dump"
assert_contains "$OUT" "stellar1 (index " "dump"
run_tool 0 --json status
assert_eq "$(echo "$OUT" | jq -r '[.[] | .name + "=" + .port_state] | sort | join(" ")')" \
	"stellar0=ACTIVE stellar1=DOWN" "JSON dump"

log "set"
run_tool 0 set --device stellar0 --spray-paths 8 --db-poll-interval 50
assert_eq "$ERR" "" "set stderr"
run_tool 0 -j status -d stellar0
assert_eq "$(echo "$OUT" | jq -c '.[0].settings | {spray_paths, db_poll_interval}')" \
	'{"spray_paths":8,"db_poll_interval":50}' "settings after set"
run_tool 0 -j status -d stellar1
assert_eq "$(echo "$OUT" | jq '.[0].settings.spray_paths')" 2 "other device untouched"
run_tool 0 set --device stellar0 --cc 0 --cc-max-rate 40
run_tool 0 -j status -d stellar0
assert_eq "$(echo "$OUT" | jq -c '.[0].settings | {cc, cc_max_rate}')" \
	'{"cc":0,"cc_max_rate":40}' "congestion control settings after set"
assert_contains "$(cat /proc/stellar/stellar0/settings)" "cc: off
cc_max_rate: 40" "/proc settings"
run_tool 1 set --device stellar0 --cc 2
assert_contains "$ERR" "--cc 2 refused" "set cc 2"
run_tool 0 -j status -d stellar0
assert_eq "$(echo "$OUT" | jq '.[0].settings.cc')" 0 "cc after refused set"
run_tool 0 set --device stellar0 --cc 1 --cc-max-rate 0

log "set out of range: the kernel's message is shown, nothing changes"
run_tool 1 set --device stellar0 --spray-paths 0 --emtt-cache-size 1
assert_eq "$ERR" "stellar-tool: set: --spray-paths 0 refused: the module accepts 1 to 256 (kernel: integer out of range)" "set 0 paths"
run_tool 1 set --device stellar0 --rx-buf-size 4095
assert_eq "$ERR" "stellar-tool: set: --rx-buf-size 4095 refused: the module accepts 4096 to 67108864 (kernel: integer out of range)" "set small rx buffer"
run_tool 0 -j status -d stellar0
assert_eq "$(echo "$OUT" | jq -c '.[0].settings | {spray_paths, emtt_cache_size}')" \
	'{"spray_paths":8,"emtt_cache_size":32}' "settings after refused set"

log "unknown device"
for cmd in "status" "stats" "set --spray-paths 3" "qps"; do
	# shellcheck disable=SC2086
	run_tool 1 $cmd --device nosuch0
	assert_eq "$ERR" "stellar-tool: no such stellar device 'nosuch0'" "$cmd nosuch0"
done

log "qps: per-QP counters"
# The RDMA core's MAD layer owns QP1 (GSI) from the start.
run_tool 0 qps --device stellar0
assert_eq "$(echo "$OUT" | grep '^qp ')" "qp 1: type GSI state RTS" "qps before any process"
stellar_install_provider
G=$(gid_index stellar0 10.20.0.1)
# A pingpong server creates its QP, moves it to INIT and waits for a peer.
ibv_rc_pingpong -d stellar0 -g "$G" -p 18950 >/tmp/pingpong.log 2>&1 &
PP_PID=$!
qp_listed() {
	"$TOOL" qps --device stellar0 | grep '^qp [0-9]*: type RC state INIT$' >/dev/null
}
wait_for 20 qp_listed
run_tool 0 qps --device stellar0
assert_contains "$OUT" "    tx_packets: 0" "qps counters"
assert_contains "$OUT" "    retransmits: 0" "qps counters"
qpn=$(echo "$OUT" | awk '/^qp .* type RC / { sub(":", "", $2); print $2; exit }')
run_tool 0 -j qps --device stellar0 --qp "$qpn"
assert_eq "$(echo "$OUT" | jq -c '[.[] | {qpn, type, state, n: (.counters | has("naks_sent") and has("drop_window"))}]')" \
	"[{\"qpn\":$qpn,\"type\":\"RC\",\"state\":\"INIT\",\"n\":true}]" "qps --json --qp"
run_tool 1 qps --device stellar0 --qp $((qpn + 1000))
assert_eq "$ERR" "stellar-tool: qps: stellar0 has no QP $((qpn + 1000))" "qps --qp unknown"
kill "$PP_PID"
wait "$PP_PID" 2>/dev/null || true

log "without CAP_NET_ADMIN: device counters yes, QPs and set no"
UNPRIV="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all"
$UNPRIV "$TOOL" stats --device stellar0 >/dev/null ||
	fail "stats as nobody failed"
status=0
err=$($UNPRIV "$TOOL" qps --device stellar0 2>&1) || status=$?
assert_eq "$status" 1 "qps as nobody: exit status"
assert_eq "$err" "stellar-tool: qps: permission denied (CAP_NET_ADMIN is required; try as root)" "qps as nobody"
status=0
err=$($UNPRIV "$TOOL" set --device stellar0 --spray-paths 4 2>&1) || status=$?
assert_eq "$status" 1 "set as nobody: exit status"
assert_eq "$err" "stellar-tool: set: permission denied (CAP_NET_ADMIN is required; try as root)" "set as nobody"

log "after rmmod"
rdma link delete stellar1
rdma link delete stellar0
stellar_unload
run_tool 1 params
assert_eq "$ERR" "$NOT_LOADED" "params after rmmod"
log "PASS"
