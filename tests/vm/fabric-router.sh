#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# The router VM of a fabric test (header "vms=N fabric=K"; run-tests.sh
# starts it as role "fabric" beside the hosts).  It builds a leaf-spine
# fabric out of network namespaces, then runs the hosts' fabric commands
# (tests/vm/fabric.sh) until every host has finished its test.
#
#   leaf1..leafL, spine1..spineS: one namespace each.  Host I (1 = "a")
#   hangs off leaf ((I-1) mod L)+1 by its K uplinks: the router's NIC of
#   host I's uplink K becomes port "<role>u<K>" of that leaf with
#   10.(10+K).I.1/24.  Every leaf has one link to every spine: port "sS"
#   of leafL (10.(200+L).S.1/24) to port "lL" of spineS (.2).
#   Routes: a leaf reaches its own hosts' 10.100.0.I/32 by ECMP over their
#   uplinks and every other host by ECMP over the spines; a spine reaches
#   a host through the host's leaf.  Switches hash on the UDP ports, each
#   with another set of fields (fib_multipath_hash_policy 3), so that
#   their choices do not line up (polarize).  One switch's choices line
#   up too: the kernel's flow hash is symmetric (addresses and ports are
#   sorted first), so a leaf hashes a packet for its host and that host's
#   answer alike, and with as many spines as uplinks it would pick the
#   same index in both routes: every path whose answers went over spine 1
#   would reach its host over uplink 1, and a path taken out for a dead
#   way back would take one downlink's worth of capacity with it.  So a
#   leaf lists its spines twice, the second time backwards (1 2 2 1):
#   with two spines and two uplinks, the tests' fabric, the two choices
#   are then independent.  Neighbours are permanent:
#   a link made dark must not take ARP with it.
#   Every switch egress port is shaped to the fabric rate and marks ECN
#   in a RED queue of its own for RoCEv2 and ECN-capable packets, as a DC
#   switch does (tests/vm/fabric-port.sh): RED_MIN and RED_MAX bytes of average queue
#   20000 and 60000, at most 20% of packets marked; the host's
#   STELLAR_FABRIC_RED="MIN,MAX,PROBABILITY" sets them for one run.
#
# Commands (fabric_cmd in tests/vm/fabric.sh):
#   dark LINK DIR            drop every packet of LINK in direction DIR
#   impair LINK DIR ARGS...  netem ARGS (delay, loss, reorder...) there
#   clear LINK DIR           undo dark or impair
#   idle                     the fabric is idle: every RED queue forgets
#                            its average queue (tests/vm/fabric-port.sh)
#   stats                    "LINK DIR packets bytes dropped marked" of
#                            every switch egress port
#   rates SECONDS            "LINK DIR bytes/s packets/s" of every switch
#                            egress port over the next SECONDS, by the
#                            router's clock
# LINK is "leafL-spineS" (DIR up: leaf to spine, down: spine to leaf,
# both) or "<role>-uK" (a host's uplink K; down: leaf to host, the only
# direction the router can impair; the host's own egress is its own).

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/lib.sh"
# shellcheck source=tests/vm/cpu.sh
. "$(dirname "$(readlink -f "$0")")/cpu.sh"
# shellcheck source=tests/vm/fabric-port.sh
. "$(dirname "$(readlink -f "$0")")/fabric-port.sh"

LEAVES=$STELLAR_FABRIC_LEAVES
SPINES=$STELLAR_FABRIC_SPINES
UPLINKS=$STELLAR_FABRIC
RATE=${STELLAR_FABRIC_RATE:-100mbit}
IFS=, read -r RED_MIN RED_MAX RED_PROB <<<"${STELLAR_FABRIC_RED:-20000,60000,0.2}"
[[ "$RED_MIN" =~ ^[0-9]+$ && "$RED_MAX" =~ ^[0-9]+$ &&
	"$RED_PROB" =~ ^[01](\.[0-9]+)?$ ]] && [ "$RED_MIN" -lt "$RED_MAX" ] ||
	fail "STELLAR_FABRIC_RED='${STELLAR_FABRIC_RED:-}': want MIN,MAX,PROBABILITY (bytes, MIN < MAX; 0..1)"
# RED's averaging burst: 20 packets for the default thresholds, and for
# others the rule of thumb of tc-red(8), (2 min + max) / (3 avpkt).
RED_BURST=20
[ -z "${STELLAR_FABRIC_RED:-}" ] ||
	RED_BURST=$(((2 * RED_MIN + RED_MAX) / 4500 + 1))
# Hash fields of switch J (leaves, then spines): src/dst address, proto,
# src/dst port in four different sets (all with the source port).
HASH_FIELDS=(0x37 0x17 0x33 0x36)

leaf_of() {
	echo $((($1 - 1) % LEAVES + 1))
}

ROLE_NAMES=(- a b c d e f g h)

role_of() {
	echo "${ROLE_NAMES[$1]}"
}

# switch_sysctls NS J: forwarding and the hash of switch J.
switch_sysctls() {
	local fields=${HASH_FIELDS[$(($2 % ${#HASH_FIELDS[@]}))]}

	ip netns exec "$1" sh -c "
		echo 1 >/proc/sys/net/ipv4/ip_forward
		echo 3 >/proc/sys/net/ipv4/fib_multipath_hash_policy
		echo $fields >/proc/sys/net/ipv4/fib_multipath_hash_fields
		for f in /proc/sys/net/ipv4/conf/*/rp_filter; do echo 0 >\$f; done"
}

# The router's NIC of host I's uplink K, by the MAC run-tests.sh gave it
# (read with bash's read: a program per NIC and host costs seconds here).
host_nic() {
	local mac dev addr

	printf -v mac '52:54:00:6e:%02x:%02x' "$2" "$1"
	for dev in /sys/class/net/*; do
		# (bonding_masters, where bonding is built in, is a file)
		[ -e "$dev/address" ] || continue
		read -r addr <"$dev/address" || continue
		[ "$addr" = "$mac" ] && { echo "${dev##*/}"; return; }
	done
	fail "no NIC with MAC $mac (host $1, uplink $2)"
}

veth_mac() {
	printf '02:00:00:%02x:%02x:%02x' "$1" "$2" "$3"
}

build_switches() {
	local l s j=0

	for l in $(seq 1 "$LEAVES"); do
		ip netns add "leaf$l"
		switch_sysctls "leaf$l" $((j++))
	done
	for s in $(seq 1 "$SPINES"); do
		ip netns add "spine$s"
		switch_sysctls "spine$s" $((j++))
	done
	for l in $(seq 1 "$LEAVES"); do
		for s in $(seq 1 "$SPINES"); do
			ip link add "s$s" netns "leaf$l" address "$(veth_mac "$l" "$s" 1)" \
				type veth peer name "l$l" netns "spine$s" \
				address "$(veth_mac "$l" "$s" 2)"
		done
	done
	for i in $(seq 1 "$STELLAR_VMS"); do
		for k in $(seq 1 "$UPLINKS"); do
			ip link set "$(host_nic "$i" "$k")" netns "leaf$(leaf_of "$i")" \
				name "$(role_of "$i")u$k"
		done
	done
}

# leaf_ip_batch L, leaf_tc_batch L, spine_...: the batches of a switch.
leaf_ip_batch() {
	local l=$1 i k s net hops

	echo "link set lo up"
	for s in $(seq 1 "$SPINES"); do
		echo "addr add 10.$((200 + l)).$s.1/24 dev s$s"
		echo "link set s$s up"
		echo "neigh replace 10.$((200 + l)).$s.2 lladdr $(veth_mac "$l" "$s" 2) dev s$s nud permanent"
	done
	# The spines twice, the second time backwards (see the header).
	hops=''
	for s in $(seq 1 "$SPINES") $(seq "$SPINES" -1 1); do
		hops="$hops nexthop via 10.$((200 + l)).$s.2 dev s$s"
	done
	echo "route add 10.100.0.0/24$hops"
	for i in $(seq 1 "$STELLAR_VMS"); do
		[ "$(leaf_of "$i")" = "$l" ] || continue
		hops=''
		for k in $(seq 1 "$UPLINKS"); do
			net=10.$((10 + k)).$i
			echo "addr add $net.1/24 dev $(role_of "$i")u$k"
			echo "link set $(role_of "$i")u$k up"
			echo "neigh replace $net.2 lladdr $(printf '52:54:00:5e:%02x:%02x' "$k" "$i") dev $(role_of "$i")u$k nud permanent"
			hops="$hops nexthop via $net.2 dev $(role_of "$i")u$k"
		done
		echo "route add 10.100.0.$i/32$hops"
	done
}

leaf_tc_batch() {
	local l=$1 i k s

	for s in $(seq 1 "$SPINES"); do
		shape "leaf$l" "s$s"
	done
	for i in $(seq 1 "$STELLAR_VMS"); do
		[ "$(leaf_of "$i")" = "$l" ] || continue
		for k in $(seq 1 "$UPLINKS"); do
			shape "leaf$l" "$(role_of "$i")u$k"
		done
	done
}

spine_ip_batch() {
	local s=$1 l i

	echo "link set lo up"
	for l in $(seq 1 "$LEAVES"); do
		echo "addr add 10.$((200 + l)).$s.2/24 dev l$l"
		echo "link set l$l up"
		echo "neigh replace 10.$((200 + l)).$s.1 lladdr $(veth_mac "$l" "$s" 1) dev l$l nud permanent"
	done
	for i in $(seq 1 "$STELLAR_VMS"); do
		l=$(leaf_of "$i")
		echo "route add 10.100.0.$i/32 via 10.$((200 + l)).$s.1 dev l$l"
	done
}

spine_tc_batch() {
	local s=$1 l

	for l in $(seq 1 "$LEAVES"); do
		shape "spine$s" "l$l"
	done
}

configure_switches() {
	local l s

	for l in $(seq 1 "$LEAVES"); do
		leaf_ip_batch "$l" | ip -n "leaf$l" -batch - ||
			fail "leaf$l: ip batch failed"
		leaf_tc_batch "$l" | tc -n "leaf$l" -batch - ||
			fail "leaf$l: tc batch failed"
	done
	for s in $(seq 1 "$SPINES"); do
		spine_ip_batch "$s" | ip -n "spine$s" -batch - ||
			fail "spine$s: ip batch failed"
		spine_tc_batch "$s" | tc -n "spine$s" -batch - ||
			fail "spine$s: tc batch failed"
	done
}

# link_port LINK DIR: "NS DEV" of the egress port of LINK in direction DIR.
link_port() {
	local link=$1 dir=$2 l s role k i

	case "$link" in
	leaf[0-9]*-spine[0-9]*)
		l=${link%%-*}
		l=${l#leaf}
		s=${link#*-spine}
		[ "$l" -ge 1 ] && [ "$l" -le "$LEAVES" ] && [ "$s" -ge 1 ] &&
			[ "$s" -le "$SPINES" ] || return 1
		case "$dir" in
		up) echo "leaf$l s$s" ;;
		down) echo "spine$s l$l" ;;
		*) return 1 ;;
		esac
		;;
	[a-h]-u[0-9])
		role=${link%%-*}
		k=${link#*-u}
		i=$(_vm_index "$role")
		[ "$i" -le "$STELLAR_VMS" ] && [ "$k" -ge 1 ] &&
			[ "$k" -le "$UPLINKS" ] && [ "$dir" = down ] || return 1
		echo "leaf$(leaf_of "$i") ${role}u$k"
		;;
	*) return 1 ;;
	esac
}

# run_link_cmd dark|impair|clear LINK DIR [ARGS...]
run_link_cmd() {
	local cmd=$1 link=$2 dir=$3 d port

	shift 3
	for d in up down; do
		[ "$dir" = both ] || [ "$dir" = "$d" ] || continue
		port=$(link_port "$link" "$d") || {
			echo "no such link and direction: $link $d"
			return 2
		}
		# shellcheck disable=SC2086 # "NS DEV"
		case "$cmd" in
		dark) impair_port $port loss 100% ;;
		impair) impair_port $port "$@" ;;
		clear) impair_port $port clear ;;
		esac || return 1
		echo "$cmd $link $d${*:+ $*}"
	done
}

# stats: one line per switch egress port.
stats() {
	local ns

	for ns in $(ip netns list | awk '{ print $1 }' | sort); do
		echo "== $ns"
		tc -n "$ns" -s -j qdisc show
		echo
	done | python3 -c '
import json, sys
ns = None
for line in sys.stdin:
    line = line.strip()
    if line.startswith("== "):
        ns = line[3:]
        continue
    if not line:
        continue
    ports = {}
    for q in json.loads(line):
        dev = q["dev"]
        p = ports.setdefault(dev, {"packets": 0, "bytes": 0, "drops": 0, "marked": 0})
        if q.get("root"):
            p["packets"], p["bytes"], p["drops"] = q["packets"], q["bytes"], q["drops"]
        p["marked"] += q.get("marked", 0)
    for dev, p in sorted(ports.items()):
        if ns.startswith("leaf") and dev[0] == "s" and dev[1:].isdigit():
            link, d = ns + "-spine" + dev[1:], "up"
        elif ns.startswith("spine") and dev[0] == "l" and dev[1:].isdigit():
            link, d = "leaf" + dev[1:] + "-" + ns, "down"
        elif ns.startswith("leaf") and len(dev) > 1 and dev[1] == "u":
            link, d = dev[0] + "-" + dev[1:], "down"
        else:
            continue
        print(link, d, p["packets"], p["bytes"], p["drops"], p["marked"])
'
}

# idle: every switch's RED queues forget their average queue.
idle() {
	local ns

	for ns in $(ip netns list | awk '{ print $1 }'); do
		port_idle "$ns" || return 1
	done
	echo "idle"
}

run_cmd() {
	local -a words

	read -r -a words <"$1"
	case "${words[0]:-}" in
	dark | impair | clear)
		[ "${#words[@]}" -ge 3 ] || { echo "usage: ${words[0]} LINK DIR"; return 2; }
		run_link_cmd "${words[@]}"
		;;
	stats) stats ;;
	idle) idle ;;
	rates) rates "${words[1]:-}" ;;
	*) echo "unknown fabric command: ${words[*]}"; return 2 ;;
	esac
}

# rates SECONDS: what every switch egress port sent per second over the
# next SECONDS, timed by the router's clock (a host's fabric_cmd takes a
# polling round trip to start, but not to measure).
rates() {
	local secs=$1 before after

	case "$secs" in
	'' | *[!0-9]*) echo "usage: rates SECONDS"; return 2 ;;
	esac
	before=$(date '+time %s.%N'; stats)
	sleep "$secs"
	after=$(date '+time %s.%N'; stats)
	printf '%s\n%s\n' "$before" "$after" | awk '
		$1 == "time" { n++; t[n] = $2; next }
		n == 1 { b[$1 " " $2] = $4; p[$1 " " $2] = $3 }
		n == 2 && ($1 " " $2) in b { k[++m] = $1 " " $2; db[m] = $4; dp[m] = $3 }
		END {
			secs = t[2] - t[1]
			if (secs <= 0) exit 1
			for (i = 1; i <= m; i++)
				printf "%s %.0f %.1f\n", k[i], (db[i] - b[k[i]]) / secs,
					(dp[i] - p[k[i]]) / secs
		}'
}

# hosts_done: every host VM has finished its test.
hosts_done() {
	local role

	for role in $STELLAR_ROLES; do
		[ -f "/stellar/vm-$role/exit_code" ] || return 1
	done
}

# serve: run requests (fabric.req.ROLE.SEQ) until every host is done; the
# output goes to fabric.out.ROLE.SEQ, the exit code to fabric.rc.ROLE.SEQ.
serve() {
	local req id rc out

	while ! hosts_done; do
		for req in "$STELLAR_SHARED"/fabric.req.*; do
			case "$req" in
			*.tmp.*) continue ;;	# being written (_publish)
			esac
			[ -f "$req" ] || continue
			id=${req##*/fabric.req.}
			rc=0
			out=$(run_cmd "$req" 2>&1) || rc=$?
			log "$(head -n 1 "$req") -> $rc"
			_publish "$STELLAR_SHARED/fabric.out.$id" "$out"
			rm -f "$req"
			_publish "$STELLAR_SHARED/fabric.rc.$id" "$rc"
		done
		sleep 0.2
	done
}

[ "$UPLINKS" -ge 1 ] && [ "$LEAVES" -ge 1 ] && [ "$SPINES" -ge 1 ] ||
	fail "not a fabric: uplinks=$UPLINKS leaves=$LEAVES spines=$SPINES"
port_modules
modprobe veth
build_switches
configure_switches
log "fabric: $STELLAR_VMS hosts ($STELLAR_ROLES) with $UPLINKS uplinks, $LEAVES leaves, $SPINES spines, $RATE per port"
for ns in $(ip netns list | awk '{ print $1 }' | sort); do
	echo "== $ns"
	ip -n "$ns" route show
done >"$STELLAR_OUT/routes.txt"
# how busy the switches keep this VM's CPU (cpu_busy router)
cpu_sampler "$STELLAR_SHARED/router-cpu" $$ &
_publish "$STELLAR_SHARED/fabric.ready" "$LEAVES $SPINES $UPLINKS $RATE"
serve
stats >"$STELLAR_OUT/stats.txt"
log "every host finished; fabric down"
