#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
"""Which link does each UDP source port take?

For every source port, send PACKETS datagrams from SRC:port to DST:DPORT
and see which of the links' tx packet counters rose by at least that
much (counters read from sysfs, or with "ip -j -s link show" in a network
namespace given as NETNS:DEV).  Prints JSON:

  {"ports": {"49152": 2, ...},      link index per port (-1: none)
   "links": [n0, n1, ...],          packets each link sent in all
   "spill": most packets other links sent while one port was tested
   "sent": total datagrams}

Exit status 2 on bad arguments or a port that cannot be bound.
"""

import argparse
import json
import socket
import subprocess
import sys
import time


def netns_tx_packets(netns):
    """tx packet counters of every device of NETNS, by name: one "ip" run."""
    out = subprocess.run(["ip", "-n", netns, "-j", "-s", "link", "show"],
                         check=True, capture_output=True, text=True).stdout
    return {d["ifname"]: d["stats64"]["tx"]["packets"] for d in json.loads(out)}


def counters(links):
    """tx packet counters of the links (NETNS:DEV or DEV).  Devices of this
    namespace are read from sysfs, those of others with one "ip" run per
    namespace: under TCG a process start costs more than a port's test."""
    by_netns = {}
    result = []
    for link in links:
        if ":" in link:
            netns, dev = link.split(":", 1)
            if netns not in by_netns:
                by_netns[netns] = netns_tx_packets(netns)
            result.append(by_netns[netns][dev])
        else:
            with open("/sys/class/net/%s/statistics/tx_packets" % link) as f:
                result.append(int(f.read()))
    return result


def send_from(src, sport, dst, dport, packets, size):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((src, sport))
    payload = bytes(size)
    for _ in range(packets):
        sock.sendto(payload, (dst, dport))
    sock.close()


def settle(links, before, want, timeout):
    """Counters once one link rose by @want (the shaper may queue).  Not
    their total: a stray packet on another link (ARP, a neighbour probe)
    would end the wait one datagram early, and the datagram still queued
    would count for the next port."""
    deadline = time.monotonic() + timeout
    now = counters(links)
    while (max(a - b for a, b in zip(now, before)) < want and
           time.monotonic() < deadline):
        time.sleep(0.02)
        now = counters(links)
    return now


def port_list(text):
    ports = [int(p) for p in text.split(",") if p]
    if not ports or any(p < 1 or p > 65535 for p in ports):
        raise argparse.ArgumentTypeError("ports are 1..65535")
    return ports


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", required=True)
    ap.add_argument("--dst", required=True)
    ap.add_argument("--dport", type=int, default=4791)
    ap.add_argument("--ports", type=port_list, required=True,
                    help="comma-separated source ports")
    ap.add_argument("--links", required=True,
                    help="comma-separated DEV or NETNS:DEV")
    ap.add_argument("--packets", type=int, default=50)
    ap.add_argument("--size", type=int, default=256)
    args = ap.parse_args()
    links = [link for link in args.links.split(",") if link]
    if not links or args.packets < 1:
        ap.error("need links and at least one packet per port")

    result = {"ports": {}, "links": [0] * len(links), "spill": 0, "sent": 0}
    for sport in args.ports:
        before = counters(links)
        try:
            send_from(args.src, sport, args.dst, args.dport, args.packets,
                      args.size)
        except OSError as err:
            print(f"udp_portmap: port {sport}: {err}", file=sys.stderr)
            return 2
        after = settle(links, before, args.packets, 5.0)
        deltas = [a - b for a, b in zip(after, before)]
        best = max(range(len(links)), key=lambda i: deltas[i])
        result["ports"][str(sport)] = (best if deltas[best] >= args.packets
                                       else -1)
        result["links"] = [t + d for t, d in zip(result["links"], deltas)]
        result["spill"] = max(result["spill"], sum(deltas) - deltas[best])
        result["sent"] += args.packets
    json.dump(result, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
