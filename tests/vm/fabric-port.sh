# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
#
# One egress port of the fabric's switches (tests/vm/fabric-router.sh;
# tests/integration/harness_fabric_port.sh checks it on a veth): shaped
# to RATE by tbf, with two traffic classes under the shaper, as a DC
# switch gives RoCE a queue of its own.  RoCEv2 (UDP port 4791) and any
# ECN-capable packet (ECT TCP data, a ping sent with -Q 2) go to a RED
# queue that marks ECN-capable packets (drops the others: rdma_rxe's)
# between RED_MIN and RED_MAX bytes of average queue; everything else
# (TCP's SYNs and pure ACKs, plain pings, other UDP) to a FIFO served
# first.  A probe of the RoCE queue's delay must be ECN-capable.
#
# Not one RED queue for all: under tbf, RED is never asked for a packet
# while it is empty, so it never sees the port go idle and keeps the
# average queue of the last burst until enough packets arrive to wear it
# down (a sixteenth per packet).  A busy run left ports that dropped the
# next non-ECN-capable packets, and a TCP SYN, sent again and again on
# the same path, could be lost for a minute: a connection that never
# opened.  The RoCE class keeps that flaw: a run after an idle time
# would have its first few dozen packets marked (dropped for a peer that
# does not set ECT, such as rdma_rxe), unless the test says the fabric is
# idle first (port_idle, "fabric_cmd idle").
#
# The caller sets RATE (tc's form), RED_MIN, RED_MAX (bytes), RED_BURST
# (packets) and RED_PROB (0..1), and calls port_modules first.

port_modules() {
	modprobe -a sch_tbf sch_prio sch_red sch_netem cls_u32
}

red_args() {
	echo "red limit 400000 min $RED_MIN max $RED_MAX avpkt 1500 burst $RED_BURST probability $RED_PROB bandwidth $RATE ecn"
}

# classes DEV: the tc batch lines of the two traffic classes under the
# shaper of DEV (see the header): prio 10: whose band 1 (10:1, a FIFO)
# takes every packet the filters do not send to band 2 (10:2, RED 20:):
# UDP to port 4791, and any packet whose ECN field is not 0.  For a port
# without them: the filters are added, not replaced (Debian's 6.1 kernel
# warns, a false FORTIFY_SOURCE alarm, when a u32 filter is replaced).
classes() {
	local ecn

	echo "qdisc replace dev $1 parent 1:1 handle 10: prio bands 2 priomap$(printf ' 0%.0s' {1..16})"
	echo "qdisc replace dev $1 parent 10:2 handle 20: $(red_args)"
	echo "filter add dev $1 parent 10: protocol ip prio 1 u32 match ip protocol 17 0xff match ip dport 4791 0xffff flowid 10:2"
	for ecn in 1 2 3; do
		echo "filter add dev $1 parent 10: protocol ip prio 1 u32 match ip tos $ecn 0x03 flowid 10:2"
	done
}

# shape NS DEV: the tc batch lines that shape DEV to the fabric rate (tbf)
# with the traffic classes under it.
shape() {
	echo "qdisc replace dev $2 root handle 1: tbf rate $RATE burst 32kb latency 200ms"
	classes "$2"
}

# impair_port NS DEV ARGS...: netem ARGS under the shaper, in place of
# the traffic classes (every packet of the port is impaired); "clear":
# the traffic classes again (a port that has them keeps them as they
# are: replacing RED would drop the packets in its queue).  netem goes in
# without a handle: a replace naming the handle of a qdisc of another
# kind is refused.
impair_port() {
	local ns=$1 dev=$2 qdiscs

	shift 2
	if [ "$1" != clear ]; then
		tc -n "$ns" qdisc replace dev "$dev" parent 1:1 netem "$@"
		return
	fi
	# (read whole: grep -q would stop tc with SIGPIPE, under pipefail)
	qdiscs=$(tc -n "$ns" qdisc show dev "$dev")
	[[ "$qdiscs" == *"qdisc prio 10: parent 1:1 "* ]] ||
		classes "$dev" | tc -n "$ns" -batch -
}

# port_idle NS: make every RED queue of namespace NS forget its average
# queue, as RED does after an idle time it cannot see under tbf (see the
# header).  Only for an idle fabric: replacing RED drops what its queue
# holds.
port_idle() {
	local ns=$1 qdiscs

	qdiscs=$(tc -n "$ns" qdisc show)
	# shellcheck disable=SC2016 # awk's fields
	awk -v red="$(red_args)" '$1 == "qdisc" && $2 == "red" && $3 == "20:" {
		print "qdisc replace dev " $5 " parent 10:2 handle 20: " red }' \
		<<<"$qdiscs" | tc -n "$ns" -batch -
}
