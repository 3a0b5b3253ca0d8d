# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Hosts on a leaf-spine fabric; source after lib.sh in a test whose
# header says "vms=N fabric=K [leaves=L] [spines=S] [rate=R]":
#
#   . "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"
#   . "$STELLAR_REPO/tests/vm/fabric.sh"
#
# run-tests.sh starts N host VMs ("a", "b", ...) and a router VM that
# builds the fabric (tests/vm/fabric-router.sh has the picture).  Host I
# has the fabric address 10.100.0.I on eth0 and reaches the others by an
# ECMP route over its K uplinks eth0..eth(K-1), hashed on ports; each
# uplink and every switch egress port is shaped to the rate R (default
# 100mbit), and the switches mark ECN with RED.
#
#   fabric_up                wait for the router; FABRIC_IP is ours
#   fabric_ip ROLE           a host's fabric address
#   fabric_cmd CMD ARGS...   run a router command (dark, impair, clear,
#                            idle, stats: see fabric-router.sh), print its
#                            output
#   fabric_stat LINK DIR FIELD   one counter of a port from "stats":
#                            packets, bytes, dropped or marked
#   udp_sink PORT OUT STOP   count the datagrams per source port
#   udp_spray DST PORT FIRST N   send from N source ports from FIRST on
#   tx_packets DEV           packets this host sent on DEV

FABRIC_CMD_TIMEOUT=${FABRIC_CMD_TIMEOUT:-120}

[ "${STELLAR_FABRIC:-0}" -gt 0 ] ||
	fail "fabric.sh: the test header needs fabric=K (uplinks per host)"

fabric_ip() {
	echo "10.100.0.$(_vm_index "$1")"
}

FABRIC_IP=$(fabric_ip "$STELLAR_ROLE")

# _router_wait FILE SECONDS WHAT: wait until the router writes FILE (in
# the shared dir); fail if the router VM stops first or SECONDS (scaled)
# pass.
_router_wait() {
	local file=$STELLAR_SHARED/$1 seconds deadline

	seconds=$(scaled "$2")
	deadline=$(($(date +%s) + seconds))
	until [ -f "$file" ]; do
		[ ! -f /stellar/vm-fabric/exit_code ] ||
			fail "$3: the router VM stopped"
		[ "$(date +%s)" -lt "$deadline" ] ||
			fail "$3: no answer from the router within ${seconds}s"
		sleep 0.2
	done
}

# fabric_up: wait until the router has built the fabric and every other
# host answers on its fabric address.
fabric_up() {
	local role

	_router_wait fabric.ready 120 "fabric_up"
	for role in $(other_roles); do
		wait_for 30 ping -c 1 -W 1 "$(fabric_ip "$role")"
	done
	log "fabric up: $FABRIC_IP, $STELLAR_FABRIC uplinks, $(cat "$STELLAR_SHARED/fabric.ready")"
}

# fabric_cmd CMD ARGS...: run CMD on the router; print its output, fail
# the test if it fails.
fabric_cmd() {
	local seq_file=/run/stellar/fabric_seq seq id rc

	seq=$(($(cat "$seq_file" 2>/dev/null || echo 0) + 1))
	echo "$seq" >"$seq_file"
	id=$STELLAR_ROLE.$seq
	_publish "$STELLAR_SHARED/fabric.req.$id" "$*"
	_router_wait "fabric.rc.$id" "$FABRIC_CMD_TIMEOUT" "fabric_cmd $*"
	rc=$(cat "$STELLAR_SHARED/fabric.rc.$id")
	cat "$STELLAR_SHARED/fabric.out.$id"
	echo
	[ "$rc" = 0 ] || fail "fabric_cmd $*: exited with $rc"
	log "fabric: $*"
}

# fabric_stat STATS LINK DIR FIELD: a counter from fabric_cmd stats output.
fabric_stat() {
	local col

	case "$4" in
	packets) col=3 ;;
	bytes) col=4 ;;
	dropped) col=5 ;;
	marked) col=6 ;;
	*) fail "fabric_stat: no field $4" ;;
	esac
	echo "$1" | awk -v l="$2" -v d="$3" -v c="$col" \
		'$1 == l && $2 == d { print $c; found = 1 } END { if (!found) print -1 }'
}

tx_packets() {
	cat "/sys/class/net/$1/statistics/tx_packets"
}

# rx_sampler OUT STOP INTERVAL: until the file STOP exists, every
# INTERVAL seconds, a line "seconds rx_bytes rx_packets" of what this
# host's NICs (its uplinks) received, by this host's clock.
rx_sampler() {
	python3 - "$1" "$2" "$3" <<'PY'
import glob, os, sys, time
out, stop, interval = sys.argv[1], sys.argv[2], float(sys.argv[3])
devs = [os.path.basename(d) for d in glob.glob("/sys/class/net/eth*")]
def count(dev, name):
    with open("/sys/class/net/%s/statistics/%s" % (dev, name)) as f:
        return int(f.read())
with open(out, "w") as f:
    while not os.path.exists(stop):
        f.write("%.3f %d %d\n" % (time.time(),
                sum(count(d, "rx_bytes") for d in devs),
                sum(count(d, "rx_packets") for d in devs)))
        f.flush()
        time.sleep(interval)
PY
}

# cpu_busy WHOSE FROM TO: how busy the CPUs of WHOSE ("host": the
# machine running the emulators; "router": the fabric's VM) were from
# FROM to TO (this guest's clock, which follows the host's), in percent,
# from the samples of tests/vm/cpu.sh; "?" without samples.
cpu_busy() {
	awk -v a="$2" -v b="$3" '$1 >= a && $1 <= b { s += $2; n++ }
		END { if (n) printf "%.0f\n", 100 * s / n; else print "?" }' \
		"$STELLAR_SHARED/$1-cpu" 2>/dev/null || echo '?'
}

# udp_sink PORT OUT STOP: count, per source port, the datagrams that
# reach UDP PORT until the file STOP exists; OUT gets "sport count" lines.
udp_sink() {
	python3 - "$@" <<'EOF'
import os, socket, sys
port, out, stop = int(sys.argv[1]), sys.argv[2], sys.argv[3]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", port))
s.settimeout(0.2)
seen = {}
while not os.path.exists(stop):
    try:
        _, addr = s.recvfrom(2048)
    except socket.timeout:
        continue
    seen[addr[1]] = seen.get(addr[1], 0) + 1
with open(out, "w") as f:
    for sport, n in sorted(seen.items()):
        f.write("%d %d\n" % (sport, n))
EOF
}

# udp_spray DST PORT FIRST_SPORT NPORTS: three datagrams to DST:PORT from
# each of NPORTS source ports from FIRST_SPORT on.
udp_spray() {
	python3 - "$@" <<'EOF'
import socket, sys, time
dst, port, first, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
for i in range(3):
    for sport in range(first, first + n):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("0.0.0.0", sport))
        s.sendto(b"x" * 64, (dst, port))
        s.close()
    time.sleep(0.2)
EOF
}
