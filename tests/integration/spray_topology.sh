#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# The multipath topologies of tests/vm/multipath.sh really pick a link by
# UDP source port, as a datacenter switch would, independent of any RDMA
# transport: python3 sends UDP datagrams to port 4791 from many source
# ports and the links' tx counters show where each port went.
#
# For each topology (4 links + bond balance-xor layer3+4; 4 links + ECMP
# with fib_multipath_hash_policy=1; one VM with namespaces hA, rt, hB and
# ECMP over 4 veths), every link shaped with tbf:
#  - one source port always takes the same single link;
#  - 64 source ports of a spraying QP (the ports stellar_spray_init()
#    gives: stride 2 in 49152..65535) use every link, at least 3 ports each;
#  - on the bond, 4 consecutive spray ports take 4 different links
#    (the bond hash ignores the lowest port bit; hence the stride 2).
# make check's short form (lib.sh long_run) checks stickiness over two
# runs instead of three and leaves the netns topology out.
# stellar-test: vms=2 links=4 timeout=600

# shellcheck source=tests/vm/lib.sh
. "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"
# shellcheck source=tests/vm/multipath.sh
. "$STELLAR_REPO/tests/vm/multipath.sh"

PORTMAP=$STELLAR_REPO/tests/integration/helpers/udp_portmap.py
RATE=200mbit
BASE=0xc123		# any base port; as stellar_spray_init() derives them

modprobe -a sch_tbf sch_netem
# make check's short form (lib.sh long_run): two runs for stickiness, and
# not the netns topology (one VM; no other test uses it).
STICKY_RUNS=2
! long_run || STICKY_RUNS=3

# spray_ports N: the N source ports of a QP with N paths, comma-separated.
spray_ports() {
	local i ports=''

	for i in $(seq 0 $(($1 - 1))); do
		ports+=$((0xc000 | ((BASE + 2 * i) & 0x3fff))),
	done
	echo "${ports%,}"
}

# portmap NAME SRC DST PORTS: run udp_portmap.py over the current links;
# the JSON result goes to $STELLAR_OUT/NAME.json and PORTMAP_JSON.
portmap() {
	local name=$1 src=$2 dst=$3 ports=$4 links

	links=$(mp_link_devs | paste -sd,)
	PORTMAP_JSON=$(${5:-} python3 "$PORTMAP" --src "$src" --dst "$dst" \
		--ports "$ports" --links "$links" --packets 40) ||
		fail "$name: udp_portmap.py failed"
	echo "$PORTMAP_JSON" >"$STELLAR_OUT/$name.json"
	log "$name: links $(echo "$PORTMAP_JSON" | jq -c .links) spill $(echo "$PORTMAP_JSON" | jq .spill)"
}

# Every port was seen on exactly one link, with little on the others.
check_mapped() {
	local name=$1 unmapped spill

	unmapped=$(echo "$PORTMAP_JSON" | jq '[.ports[] | select(. < 0)] | length')
	assert_eq "$unmapped" 0 "$name: ports not seen on any link"
	spill=$(echo "$PORTMAP_JSON" | jq .spill)
	[ "$spill" -lt 20 ] ||
		fail "$name: up to $spill packets on other links than a port's own"
}

links_used() {
	echo "$PORTMAP_JSON" | jq '[.ports[]] | unique | length'
}

# check_sticky NAME SRC DST [PREFIX]: one port, three times: same link.
check_sticky() {
	local name=$1 src=$2 dst=$3 prefix=${4:-} first run link

	for run in $(seq 1 "$STICKY_RUNS"); do
		portmap "$name-sticky$run" "$src" "$dst" 50001 "$prefix"
		check_mapped "$name-sticky$run"
		link=$(echo "$PORTMAP_JSON" | jq '.ports["50001"]')
		[ -n "${first:-}" ] || first=$link
		assert_eq "$link" "$first" "$name: link of port 50001, run $run"
	done
	log "$name: port 50001 always on link $first"
}

# check_spread NAME SRC DST NLINKS [PREFIX]: 64 spray ports use every link.
check_spread() {
	local name=$1 src=$2 dst=$3 nlinks=$4 prefix=${5:-} fewest

	portmap "$name-64" "$src" "$dst" "$(spray_ports 64)" "$prefix"
	check_mapped "$name-64"
	assert_eq "$(links_used)" "$nlinks" "$name: links used by 64 ports"
	fewest=$(echo "$PORTMAP_JSON" |
		jq '[.ports[]] | group_by(.) | map(length) | min')
	[ "$fewest" -ge 3 ] ||
		fail "$name: a link carries only $fewest of 64 ports: $PORTMAP_JSON"
	log "$name: 64 ports over $nlinks links, fewest on one link: $fewest"
}

# --- ECMP between the VMs ----------------------------------------------

mp_ecmp "$RATE"
barrier ecmp-up
if [ "$STELLAR_ROLE" = a ]; then
	wait_for 10 ping -c 1 -W 1 -I "$MP_IP" "$MP_PEER_IP"
	check_sticky ecmp "$MP_IP" "$MP_PEER_IP"
	check_spread ecmp "$MP_IP" "$MP_PEER_IP" "$STELLAR_LINKS"
	portmap ecmp-4 "$MP_IP" "$MP_PEER_IP" "$(spray_ports 4)"
	log "ecmp: 4 spray ports take $(links_used) links (hash-dependent)"
	mp_show >"$STELLAR_OUT/ecmp-qdiscs.txt"
	tc qdisc show dev "$(link_dev 1)" | grep -q 'tbf.*rate 200Mbit' ||
		fail "link 1 is not shaped: $(tc qdisc show dev "$(link_dev 1)")"
fi
barrier ecmp-done
ip route del "$MP_PEER_IP/32"
ip addr del "$MP_IP/32" dev "$MP_DEV"

# --- bond between the VMs -------------------------------------------------

mp_bond "$RATE"
barrier bond-up
if [ "$STELLAR_ROLE" = a ]; then
	wait_for 10 ping -c 1 -W 1 "$MP_PEER_IP"
	check_sticky bond "$MP_IP" "$MP_PEER_IP"
	check_spread bond "$MP_IP" "$MP_PEER_IP" "$STELLAR_LINKS"
	portmap bond-4 "$MP_IP" "$MP_PEER_IP" "$(spray_ports 4)"
	check_mapped bond-4
	assert_eq "$(links_used)" 4 "bond: links taken by the 4 ports of a 4-path QP"
	mp_show >"$STELLAR_OUT/bond-qdiscs.txt"
fi
barrier bond-done

# --- namespaces in one VM ---------------------------------------------------

if [ "$STELLAR_ROLE" = a ] && long_run; then
	mp_netns 4 "$RATE"
	check_sticky netns 10.50.0.1 10.70.0.1 "ip netns exec hA"
	check_spread netns 10.50.0.1 10.70.0.1 4 "ip netns exec hA"
	mp_show >"$STELLAR_OUT/netns-qdiscs.txt"
	_mp_netns_cleanup
fi
log "multipath topologies spread UDP source ports over their links"
