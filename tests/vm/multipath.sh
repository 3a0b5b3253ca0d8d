# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# Multipath test topologies for packet spray; source after lib.sh:
#
#   . "$(dirname "$(readlink -f "$0")")/../vm/lib.sh"
#   . "$STELLAR_REPO/tests/vm/multipath.sh"
#
# Two VMs joined by N links (header "vms=2 links=N"), every link shaped
# to the same rate with tc tbf, combined so that the UDP source port of a
# packet picks its link, as a datacenter switch would:
#
#   mp_bond RATE       bond0 (balance-xor, xmit_hash_policy layer3+4) over
#                      eth0..eth(N-1); address 10.200.0.<vm>/24 on bond0.
#                      MP_DEV=bond0, MP_IP/MP_PEER_IP: the two addresses.
#   mp_ecmp RATE       the links keep their 10.K.0.<vm>/24 addresses; the
#                      host address 10.100.0.<vm>/32 sits on eth0 and the
#                      peer's is reached by one ECMP route over all links,
#                      hashed on ports (net.ipv4.fib_multipath_hash_policy
#                      = 1).  MP_DEV=eth0.
#
# Both make the peer's neighbour entries permanent: a dark link stands
# for a path failing inside the fabric, and must not take ARP with it.
#
# One VM (header "vms=1"), namespaces hA, rt (router) and hB:
#
#   mp_netns N RATE    hA --a0/r0-- rt ==N veths r1..rN / b1..bN== hB.
#                      hA: a0 10.50.0.1/24.  rt forwards with an ECMP route
#                      to hB's 10.70.0.1 over the N veths (policy 1).  In hB
#                      the veth ends are ports of bridge br0, which holds
#                      10.70.0.1/32 and 10.60.K.1/24, so everything hB
#                      receives arrives on br0; hB returns traffic by an
#                      ECMP route over the same veths.  Every rK and bK is
#                      shaped to RATE.
#
# RATE is a tc rate ("100mbit").  Helpers: mp_link_devs (the links of the
# current topology, as "netns:dev" or "dev"), mp_tx_packets DEV [NETNS],
# mp_netem DEV [NETNS] ARGS... (impairment under the shaper),
# mp_netem_off DEV [NETNS], mp_show (qdiscs and counters, for logs).

MP_BOND_NET=10.200.0
MP_ECMP_NET=10.100.0
MP_TBF_BURST=${MP_TBF_BURST:-64kb}
MP_TBF_LATENCY=${MP_TBF_LATENCY:-100ms}

_mp_ns() {
	if [ -n "${1:-}" ]; then
		echo "ip netns exec $1"
	fi
}

# mp_shape DEV RATE [NETNS]: a tbf root qdisc (handle 1:) on DEV egress.
mp_shape() {
	local dev=$1 rate=$2 ns=${3:-}

	$(_mp_ns "$ns") tc qdisc replace dev "$dev" root handle 1: tbf \
		rate "$rate" burst "$MP_TBF_BURST" latency "$MP_TBF_LATENCY"
}

# mp_netem DEV [NETNS] -- ARGS...: netem (ARGS) inside the shaper of DEV.
mp_netem() {
	local dev=$1 ns=''

	shift
	if [ "${1:-}" != -- ]; then
		ns=$1
		shift
	fi
	[ "${1:-}" = -- ] || fail "mp_netem DEV [NETNS] -- ARGS..."
	shift
	$(_mp_ns "$ns") tc qdisc replace dev "$dev" parent 1:1 handle 10: \
		netem "$@"
	log "netem on ${ns:+$ns:}$dev: $*"
}

# mp_netem_off DEV [NETNS]: remove the impairment, keep the shaper.  The
# netem child is replaced by a plain FIFO (its own handle: handle 10: stays
# netem's): deleting it would leave tbf with noop_qdisc, which drops
# every packet.
mp_netem_off() {
	$(_mp_ns "${2:-}") tc qdisc replace dev "$1" parent 1:1 pfifo limit 1000
}

# mp_tx_packets DEV [NETNS]: packets DEV has sent.
mp_tx_packets() {
	$(_mp_ns "${2:-}") cat "/sys/class/net/$1/statistics/tx_packets"
}

_mp_sysctl() {
	local ns=$1 key=$2 value=$3

	$(_mp_ns "$ns") sysctl -qw "$key=$value" ||
		fail "sysctl $key=$value${ns:+ in $ns} failed"
}

# Reverse path filtering would drop packets of a flow that arrive on
# another link than the one its replies leave on.
_mp_no_rp_filter() {
	local ns=${1:-} conf

	for conf in $($(_mp_ns "$ns") ls /proc/sys/net/ipv4/conf); do
		_mp_sysctl "$ns" "net.ipv4.conf.$conf.rp_filter" 0
	done
}

_mp_check_links() {
	[ "$STELLAR_VMS" = 2 ] || fail "$1 needs two VMs (vms=2)"
	[ "$STELLAR_LINKS" -ge 2 ] || fail "$1 needs at least 2 links"
}

_mp_vm_index() {
	case "$STELLAR_ROLE" in
	a) echo 1 ;;
	*) echo 2 ;;
	esac
}

_mp_peer_index() {
	case "$STELLAR_ROLE" in
	a) echo 2 ;;
	*) echo 1 ;;
	esac
}

# mp_bond RATE: see the top of this file.
mp_bond() {
	local rate=$1 k dev

	_mp_check_links mp_bond
	modprobe bonding max_bonds=0
	# Bonding built in (make kasan's kernel) ignores max_bonds=0.
	if [ -e /sys/class/net/bond0 ]; then
		ip link del bond0
	fi
	ip link add bond0 type bond mode balance-xor \
		xmit_hash_policy layer3+4 miimon 100
	for k in $(seq 1 "$STELLAR_LINKS"); do
		dev=$(link_dev "$k")
		ip addr flush dev "$dev"
		ip link set "$dev" down
		ip link set "$dev" master bond0
		mp_shape "$dev" "$rate"
	done
	ip link set bond0 up
	MP_IP=$MP_BOND_NET.$(_mp_vm_index)
	MP_PEER_IP=$MP_BOND_NET.$(_mp_peer_index)
	MP_DEV=bond0
	MP_TOPOLOGY=bond
	ip addr add "$MP_IP/24" dev bond0
	wait_for 10 _mp_bond_ready
	_mp_pin_neigh "$MP_PEER_IP" bond0
	log "bond0: $STELLAR_LINKS links at $rate each, $MP_IP"
}

# _mp_pin_neigh IP DEV: resolve IP on DEV and make the entry permanent.  A
# link made dark (mp_netem loss) stands for a path that fails inside the
# fabric, beyond the first hop: it must not take ARP down with it (the
# bond sends ARP by its MAC hash, always on one link; over ECMP a link's
# next hop would go unresolved).
_mp_pin_neigh() {
	local ip=$1 dev=$2 mac

	wait_for 10 ping -c 1 -W 1 -I "$dev" "$ip"
	mac=$(ip neigh show "$ip" dev "$dev" |
		awk '{ for (i = 1; i < NF; i++) if ($i == "lladdr") print $(i + 1) }')
	[ -n "$mac" ] || fail "no neighbour entry for $ip on $dev"
	ip neigh replace "$ip" lladdr "$mac" dev "$dev" nud permanent
}

# The bond and every slave report "MII Status: up".
_mp_bond_ready() {
	[ "$(cat /sys/class/net/bond0/operstate)" = up ] &&
		[ "$(grep -c 'MII Status: up' /proc/net/bonding/bond0)" = \
			"$((STELLAR_LINKS + 1))" ]
}

# mp_ecmp RATE: see the top of this file.
mp_ecmp() {
	local rate=$1 k peer
	local -a hops=()

	peer=$(_mp_peer_index)
	_mp_check_links mp_ecmp
	_mp_sysctl '' net.ipv4.fib_multipath_hash_policy 1
	_mp_no_rp_filter
	for k in $(seq 1 "$STELLAR_LINKS"); do
		mp_shape "$(link_dev "$k")" "$rate"
		hops+=(nexthop via "10.$k.0.$peer" dev "$(link_dev "$k")")
	done
	MP_IP=$MP_ECMP_NET.$(_mp_vm_index)
	MP_PEER_IP=$MP_ECMP_NET.$peer
	MP_DEV=$(link_dev 1)
	MP_TOPOLOGY=ecmp
	ip addr add "$MP_IP/32" dev "$MP_DEV"
	ip route add "$MP_PEER_IP/32" "${hops[@]}"
	for k in $(seq 1 "$STELLAR_LINKS"); do
		_mp_pin_neigh "10.$k.0.$peer" "$(link_dev "$k")"
	done
	log "ECMP to $MP_PEER_IP over $STELLAR_LINKS links at $rate each"
}

# mp_netns N RATE: see the top of this file.
mp_netns() {
	local n=$1 rate=$2 k ns
	local -a to_b=() to_a=()

	[ "$n" -ge 2 ] || fail "mp_netns: at least 2 paths"
	_mp_netns_cleanup
	for ns in hA rt hB; do
		ip netns add "$ns"
		ip -n "$ns" link set lo up
		_mp_no_rp_filter "$ns"
	done
	_mp_sysctl rt net.ipv4.ip_forward 1
	_mp_sysctl rt net.ipv4.fib_multipath_hash_policy 1
	_mp_sysctl hB net.ipv4.fib_multipath_hash_policy 1
	ip link add a0 netns hA type veth peer name r0 netns rt
	ip -n hA addr add 10.50.0.1/24 dev a0
	ip -n rt addr add 10.50.0.254/24 dev r0
	ip -n hA link set a0 up
	ip -n rt link set r0 up
	ip -n hB link add br0 type bridge
	ip -n hB link set br0 up
	ip -n hB addr add 10.70.0.1/32 dev br0
	for k in $(seq 1 "$n"); do
		ip link add "r$k" netns rt type veth peer name "b$k" netns hB
		ip -n rt addr add "10.60.$k.254/24" dev "r$k"
		ip -n hB addr add "10.60.$k.1/24" dev br0
		ip -n hB link set "b$k" master br0
		ip -n rt link set "r$k" up
		ip -n hB link set "b$k" up
		mp_shape "r$k" "$rate" rt
		mp_shape "b$k" "$rate" hB
		to_b+=(nexthop via "10.60.$k.1" dev "r$k")
		to_a+=(nexthop via "10.60.$k.254" dev br0)
	done
	ip -n hA route add default via 10.50.0.254
	ip -n rt route add 10.70.0.1/32 "${to_b[@]}"
	ip -n hB route add 10.50.0.0/24 "${to_a[@]}"
	MP_TOPOLOGY=netns
	MP_NETNS_PATHS=$n
	wait_for 10 ip netns exec hA ping -c 1 -W 1 10.70.0.1
	log "netns: hA 10.50.0.1 -> rt -> $n paths -> hB 10.70.0.1 at $rate each"
}

_mp_netns_cleanup() {
	local ns

	for ns in hA rt hB; do
		ip netns del "$ns" 2>/dev/null || true
	done
}

# mp_link_devs: the links of the current topology whose egress carries
# the traffic from this host (VM a) or hA towards the peer.
mp_link_devs() {
	local k

	case "${MP_TOPOLOGY:-}" in
	bond | ecmp)
		for k in $(seq 1 "$STELLAR_LINKS"); do
			link_dev "$k"
		done
		;;
	netns)
		for k in $(seq 1 "$MP_NETNS_PATHS"); do
			echo "rt:r$k"
		done
		;;
	*) fail "mp_link_devs: no topology set up" ;;
	esac
}

# mp_counts: tx packets of every link (mp_link_devs), one per line.
mp_counts() {
	local link

	for link in $(mp_link_devs); do
		case "$link" in
		*:*) mp_tx_packets "${link#*:}" "${link%%:*}" ;;
		*) mp_tx_packets "$link" ;;
		esac
	done
}

# mp_link_bytes rx|tx: bytes received or sent by every link of a two-VM
# topology, space-separated.
mp_link_bytes() {
	local link

	for link in $(mp_link_devs); do
		cat "/sys/class/net/$link/statistics/${1}_bytes"
	done | paste -sd' '
}

# mp_ecmp_down: undo mp_ecmp (and the links' shapers), e.g. before mp_bond.
mp_ecmp_down() {
	local k

	ip route del "$MP_PEER_IP/32"
	ip addr del "$MP_IP/32" dev "$MP_DEV"
	for k in $(seq 1 "$STELLAR_LINKS"); do
		tc qdisc del dev "$(link_dev "$k")" root 2>/dev/null || true
		ip neigh del "10.$k.0.$(_mp_peer_index)" dev "$(link_dev "$k")"
	done
}

# mp_show: qdiscs and counters of the links, for the logs.
mp_show() {
	local link

	for link in $(mp_link_devs); do
		case "$link" in
		*:*) ip netns exec "${link%%:*}" tc -s qdisc show dev "${link#*:}" ;;
		*) tc -s qdisc show dev "$link" ;;
		esac
	done
}
