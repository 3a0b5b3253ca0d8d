#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
"""Send crafted RoCEv2 packets (UDP port 4791) through a raw IP socket.

    roce_craft.py --src ADDR --dst ADDR CASE [options]
    roce_craft.py selftest

ADDR is IPv4 or IPv6 (both the same family).  The script writes the whole
IP header itself (IP_HDRINCL), so it can compute the RoCEv2 invariant CRC
over exactly the header that goes on the wire.  Each CASE prints the number
of packets it sent as the last line on stdout; details go to stderr.

Cases (each packet is meant to be dropped for the reason in brackets):
  truncated    UDP payloads of 0..11 bytes, and BTHs whose opcode needs
               more header than the packet has        [rx_drop_truncated]
  bad-version  BTH transport version 1..15            [rx_drop_bad_version]
  bad-opcode   reserved, RD and vendor opcodes        [rx_drop_bad_opcode]
  bad-length   payload not a multiple of 4, pad larger than the payload,
               ACK with payload, padded FIRST, empty MIDDLE; IPv4 header
               with options                           [rx_drop_bad_length]
  bad-icrc     valid headers, ICRC wrong              [rx_drop_bad_icrc]
  no-qp        valid packets with a correct ICRC to --qpn (a QPN that does
               not exist)                             [rx_drop_no_qp]
  send         one RC SEND_ONLY (or --opcode) of --data (padded with '.'
               to --fill bytes) to --qpn at --psn, correct ICRC (meant to
               be accepted)
  psn          --count RC SEND_ONLY packets to --qpn at --psn, correct ICRC
  sweep        --count RC SEND_ONLY and RDMA_WRITE_ONLY packets
               to QPNs --qpn .. --qpn + --span - 1 in turn, correct ICRC
  write        one RC RDMA_WRITE_ONLY of --data to --va/--rkey of --qpn at
               --psn, correct ICRC
  read         --count RC RDMA_READ requests of --len bytes at --va/--rkey
               to --qpn, the first at --psn, each after the PSNs the one
               before takes (path MTU --mtu); with --listen SECONDS, the
               responses that arrive at --src (UDP port 4791) until then
               are printed first, one line each:
               "resp OPCODE PSN SYNDROME LEN DATA" (hex opcode, PSN and
               AETH syndrome, "-" without AETH; DATA: the first 64 payload
               bytes, printable ones as they are, others as '.')
  xhdr-bad     the stellar XHDR bit on RC opcodes that have no stellar
               header (READ request and response, atomic, atomic ACK)
                                                      [rx_drop_bad_opcode]
  ack          --count RC ACKNOWLEDGEs to --qpn at --psn, correct ICRC
  nak          --count NAKs (remote access error) to --qpn at --psn,
               correct ICRC

With --xph, send and write set the stellar XCAP and XHDR bits and carry a
placement header (Documentation/wire-extensions.rst) giving --offset,
--rmsn, --xva (default: --va) and --xrkey (default: --rkey).
  random       --count packets of random bytes        [some rx_drop_*]
  mutate       --count valid packets to --qpn with random bytes of the
               headers flipped, ICRC recomputed       [some rx_drop_*]
"""

import argparse
import ipaddress
import random
import socket
import struct
import sys
import time
import zlib

ROCE_PORT = 4791
BTH_LEN = 12
ICRC_LEN = 4
PKEY_DEFAULT = 0xFFFF
GSI_QKEY = 0x80010000
# AETH syndrome of a NAK for a remote access error (type 3, code 2).
NAK_REM_ACCESS_ERR = 0x62

# BTH opcodes used here (IB spec, table 38).
RC_SEND_FIRST = 0x00
RC_SEND_MIDDLE = 0x01
RC_SEND_LAST = 0x02
RC_SEND_ONLY = 0x04
RC_RDMA_WRITE_ONLY = 0x0A
RC_RDMA_READ_REQUEST = 0x0C
RC_RDMA_READ_RESPONSE_FIRST = 0x0D
RC_RDMA_READ_RESPONSE_LAST = 0x0F
RC_RDMA_READ_RESPONSE_ONLY = 0x10
RC_ACKNOWLEDGE = 0x11
RC_ATOMIC_ACKNOWLEDGE = 0x12
RC_COMPARE_SWAP = 0x13
# Responses with an AETH.
AETH_OPCODES = (RC_RDMA_READ_RESPONSE_FIRST, RC_RDMA_READ_RESPONSE_LAST,
                RC_RDMA_READ_RESPONSE_ONLY, RC_ACKNOWLEDGE,
                RC_ATOMIC_ACKNOWLEDGE)
# stellar wire extensions: BTH byte 8 (resv7) bits, placement header.
BTH_XCAP = 0x40
BTH_XHDR = 0x20
UC_SEND_ONLY = 0x24
UD_SEND_ONLY = 0x64
# Not supported by stellar: reserved RC codes, RD, UD reserved, XRC reserved,
# vendor.
UNSUPPORTED_OPCODES = (0x15, 0x1F, 0x40, 0x5F, 0x7F, 0xB5, 0xC0, 0xFF)

# Extension header length per opcode (bytes after the BTH).
EXT_LEN = {
    RC_SEND_FIRST: 0, RC_SEND_MIDDLE: 0, RC_SEND_LAST: 0, RC_SEND_ONLY: 0,
    RC_RDMA_WRITE_ONLY: 16, RC_RDMA_READ_REQUEST: 16, RC_ACKNOWLEDGE: 4,
    RC_COMPARE_SWAP: 28, UC_SEND_ONLY: 0, UD_SEND_ONLY: 8,
}


def log(msg):
    print(msg, file=sys.stderr)


def bth(opcode, qpn, psn, pad=0, tver=0, ack_req=True, xbits=0):
    """Base transport header, network order."""
    byte1 = (pad & 3) << 4 | (tver & 0xF)
    return struct.pack(">BBHII", opcode, byte1, PKEY_DEFAULT,
                       qpn & 0xFFFFFF, (ack_req << 31) | (xbits << 24) |
                       (psn & 0xFFFFFF))


def xph(args):
    """stellar placement header: offset, rmsn, va, rkey."""
    va = args.va if args.xva is None else args.xva
    rkey = args.rkey if args.xrkey is None else args.xrkey
    return struct.pack(">IIQI", args.offset, args.rmsn, va, rkey)


def x_packet(opcode, args, ext, payload):
    """A request with --xph's stellar header if asked for."""
    pad = -len(payload) % 4
    xbits = BTH_XCAP | BTH_XHDR if args.xph else 0
    return (bth(opcode, args.qpn, args.psn, pad=pad, xbits=xbits) + ext +
            (xph(args) if args.xph else b"") + payload + b"\0" * pad)


def ext_headers(opcode, src_qpn=0x11):
    """Plausible extension headers for opcode."""
    if opcode == UD_SEND_ONLY:
        return struct.pack(">II", GSI_QKEY, src_qpn & 0xFFFFFF)
    if opcode in (RC_RDMA_WRITE_ONLY, RC_RDMA_READ_REQUEST):
        return struct.pack(">QII", 0x10000, 0x1234, 64)
    if opcode == RC_ACKNOWLEDGE:
        return struct.pack(">I", 0)
    if opcode == RC_COMPARE_SWAP:
        return struct.pack(">QIQQ", 0x10000, 0x1234, 1, 0)
    return b""


def ip_checksum(header):
    if len(header) % 2:
        header += b"\0"
    total = sum(struct.unpack("!%dH" % (len(header) // 2), header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


class Path:
    """Source and destination of the crafted packets."""

    def __init__(self, src, dst):
        self.src = ipaddress.ip_address(src)
        self.dst = ipaddress.ip_address(dst)
        if self.src.version != self.dst.version:
            raise ValueError("--src and --dst must be the same IP version")
        self.v6 = self.src.version == 6
        family = socket.AF_INET6 if self.v6 else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_RAW, socket.IPPROTO_RAW)
        self.ident = random.randrange(1, 0xFFFF)
        self.sport = random.randrange(49152, 65536)
        self.sent = 0

    def ip_header(self, l4_len, options=b""):
        if self.v6:
            return struct.pack(">IHBB16s16s", 6 << 28 | 0x12345, l4_len,
                               socket.IPPROTO_UDP, 64, self.src.packed,
                               self.dst.packed)
        self.ident = self.ident % 0xFFFF + 1
        ihl = 5 + len(options) // 4
        header = struct.pack(">BBHHHBBH4s4s", 4 << 4 | ihl, 0,
                             ihl * 4 + l4_len, self.ident, 0x4000, 64,
                             socket.IPPROTO_UDP, 0, self.src.packed,
                             self.dst.packed) + options
        check = ip_checksum(header)
        return header[:10] + struct.pack(">H", check) + header[12:]

    def udp_header(self, payload_len):
        # Checksum 0: none (IPv4).  IPv6 needs one; see send().
        return struct.pack(">HHHH", self.sport, ROCE_PORT, 8 + payload_len, 0)

    def send(self, payload, icrc="good", options=b""):
        """Send payload (BTH onwards, without ICRC).

        icrc: "good" appends the correct ICRC, "bad" a wrong one, "none"
        nothing (payload is sent as is).
        """
        if icrc != "none":
            payload += b"\0" * ICRC_LEN
        udp = self.udp_header(len(payload))
        ip = self.ip_header(len(udp) + len(payload), options)
        if icrc != "none":
            crc = roce_icrc(ip, self.v6, udp, payload[:-ICRC_LEN])
            if icrc == "bad":
                crc ^= 0x00010000
            payload = payload[:-ICRC_LEN] + struct.pack("<I", crc)
        if self.v6:
            udp = udp[:6] + struct.pack(">H", udp6_checksum(
                self.src, self.dst, udp + payload))
        self.sock.sendto(ip + udp + payload, (str(self.dst), 0))
        self.sent += 1
        if self.sent % 64 == 0:
            time.sleep(0.005)	# stay below the receive backlog


def udp6_checksum(src, dst, segment):
    pseudo = src.packed + dst.packed + struct.pack(
        ">IxxxB", len(segment), socket.IPPROTO_UDP)
    check = ip_checksum(pseudo + segment)
    return check or 0xFFFF


def roce_icrc(ip, v6, udp, bth_onwards):
    """RoCEv2 ICRC: CRC-32 over 8 bytes of 0xff and the masked headers."""
    ip = bytearray(ip[:40] if v6 else ip[:20])
    if v6:
        ip[0] |= 0x0F
        ip[1:4] = b"\xff\xff\xff"
        ip[7] = 0xFF
    else:
        ip[1] = 0xFF
        ip[8] = 0xFF
        ip[10:12] = b"\xff\xff"
    udp = bytearray(udp)
    udp[6:8] = b"\xff\xff"
    rest = bytearray(bth_onwards)
    rest[4] = 0xFF
    return zlib.crc32(b"\xff" * 8 + bytes(ip) + bytes(udp) + bytes(rest))


def valid_packet(opcode, qpn, psn, payload=b"\0" * 16):
    """Headers plus payload (padded to 4 bytes) of a well-formed packet."""
    pad = -len(payload) % 4
    return (bth(opcode, qpn, psn, pad=pad) + ext_headers(opcode) +
            payload + b"\0" * pad)


def case_truncated(path, args):
    for length in range(BTH_LEN):
        path.send(valid_packet(RC_SEND_ONLY, args.qpn, 0)[:length], "none")
    # A BTH, the ICRC, but not the extension headers the opcode needs.
    for opcode in (RC_RDMA_WRITE_ONLY, RC_RDMA_READ_REQUEST, UD_SEND_ONLY,
                   RC_ACKNOWLEDGE, RC_COMPARE_SWAP):
        path.send(bth(opcode, args.qpn, 0))
    # A whole BTH but no room for the ICRC.
    path.send(bth(RC_SEND_ONLY, args.qpn, 0), "none")
    path.send(bth(RC_SEND_ONLY, args.qpn, 0) + b"\0\0", "none")


def case_bad_version(path, args):
    for tver in range(1, 16):
        path.send(bth(RC_SEND_ONLY, args.qpn, 0, tver=tver) + b"\0" * 8)


def case_bad_opcode(path, args):
    for opcode in UNSUPPORTED_OPCODES:
        path.send(bth(opcode, args.qpn, 0) + b"\0" * 32)


def case_bad_length(path, args):
    qpn = args.qpn
    path.send(bth(RC_SEND_ONLY, qpn, 0) + b"\0" * 5)	# not 4-aligned
    path.send(bth(RC_SEND_ONLY, qpn, 0, pad=3))		# pad > data
    path.send(bth(RC_ACKNOWLEDGE, qpn, 0) + ext_headers(RC_ACKNOWLEDGE) +
              b"\0" * 4)				# ACK with data
    path.send(bth(RC_SEND_FIRST, qpn, 0, pad=1) + b"\0" * 8)  # padded FIRST
    path.send(bth(RC_SEND_MIDDLE, qpn, 0))		# empty MIDDLE
    path.send(bth(RC_RDMA_READ_REQUEST, qpn, 0) +
              ext_headers(RC_RDMA_READ_REQUEST) + b"\0" * 4)  # READ + data
    if not path.v6:
        nop_options = b"\x01\x01\x01\x00"		# IPv4 header options
        path.send(valid_packet(RC_SEND_ONLY, qpn, 0), options=nop_options)


def case_bad_icrc(path, args):
    for opcode in (RC_SEND_ONLY, RC_RDMA_WRITE_ONLY, UC_SEND_ONLY,
                   UD_SEND_ONLY, RC_ACKNOWLEDGE):
        for size in (0, 4, 256):
            payload = b"" if opcode == RC_ACKNOWLEDGE else b"\x5a" * size
            path.send(valid_packet(opcode, args.qpn, 0, payload), "bad")


def case_no_qp(path, args):
    for opcode in (RC_SEND_ONLY, RC_RDMA_WRITE_ONLY, RC_RDMA_READ_REQUEST,
                   UC_SEND_ONLY, UD_SEND_ONLY, RC_ACKNOWLEDGE,
                   RC_COMPARE_SWAP):
        payload = (b"" if opcode in (RC_RDMA_READ_REQUEST, RC_ACKNOWLEDGE,
                                     RC_COMPARE_SWAP) else b"\xa5" * 64)
        for psn in (0, 0x7FFFFF, 0xFFFFFF):
            path.send(valid_packet(opcode, args.qpn, psn, payload))


def case_send(path, args):
    data = args.data.encode()
    data += b"." * max(0, args.fill - len(data))
    path.send(x_packet(args.opcode, args, b"", data))


def case_write(path, args):
    data = args.data.encode()
    reth = struct.pack(">QII", args.va, args.rkey, len(data))
    path.send(x_packet(RC_RDMA_WRITE_ONLY, args, reth, data))


def read_responses(sock, seconds):
    """Summaries of the RoCEv2 responses sock receives within seconds."""
    lines = []
    deadline = time.monotonic() + seconds
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return lines
        sock.settimeout(left)
        try:
            packet = sock.recv(65536)
        except socket.timeout:
            return lines
        if len(packet) < BTH_LEN + ICRC_LEN:
            continue
        opcode, psn = packet[0], struct.unpack(">I", packet[8:12])[0]
        pad = packet[1] >> 4 & 3
        aeth = opcode in AETH_OPCODES
        syndrome = "%02x" % packet[BTH_LEN] if aeth else "-"
        start = BTH_LEN + (4 if aeth else 0) + (8 if opcode ==
                                                RC_ATOMIC_ACKNOWLEDGE else 0)
        data = packet[start:len(packet) - ICRC_LEN - pad]
        text = "".join(chr(b) if 0x20 <= b < 0x7F else "." for b in data[:64])
        lines.append("resp %02x %06x %s %d %s" % (opcode, psn & 0xFFFFFF,
                                                  syndrome, len(data), text))


def case_read(path, args):
    listener = None
    if args.listen:
        family = socket.AF_INET6 if path.v6 else socket.AF_INET
        listener = socket.socket(family, socket.SOCK_DGRAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        listener.bind((str(path.src), ROCE_PORT))
    psn = args.psn
    for _ in range(args.count):
        reth = struct.pack(">QII", args.va, args.rkey, args.len)
        path.send(bth(RC_RDMA_READ_REQUEST, args.qpn, psn) + reth)
        psn += max(1, -(-args.len // args.mtu))
    if listener:
        for line in read_responses(listener, args.listen):
            print(line)


def case_xhdr_bad(path, args):
    for opcode, ext_len, data_len in ((RC_RDMA_READ_REQUEST, 16, 0),
                                      (RC_COMPARE_SWAP, 28, 0),
                                      (RC_RDMA_READ_RESPONSE_ONLY, 4, 8),
                                      (RC_ATOMIC_ACKNOWLEDGE, 12, 0)):
        path.send(bth(opcode, args.qpn, 0, xbits=BTH_XCAP | BTH_XHDR) +
                  b"\0" * (ext_len + 20 + data_len))


def case_psn(path, args):
    for _ in range(args.count):
        path.send(valid_packet(RC_SEND_ONLY, args.qpn, args.psn,
                               b"\xee" * 64))


def case_sweep(path, args):
    for i in range(args.count):
        opcode = RC_SEND_ONLY if i & 1 else RC_RDMA_WRITE_ONLY
        path.send(valid_packet(opcode, args.qpn + i % args.span, 0,
                               b"\xee" * 64))


def case_ack(path, args):
    for _ in range(args.count):
        path.send(valid_packet(RC_ACKNOWLEDGE, args.qpn, args.psn, b""))


def case_nak(path, args):
    aeth = struct.pack(">I", NAK_REM_ACCESS_ERR << 24)
    for _ in range(args.count):
        path.send(bth(RC_ACKNOWLEDGE, args.qpn, args.psn) + aeth)


def case_random(path, args):
    rng = random.Random(args.seed)
    for _ in range(args.count):
        length = rng.choice((rng.randrange(0, 16), rng.randrange(0, 600)))
        path.send(rng.randbytes(length), "none")


def case_mutate(path, args):
    rng = random.Random(args.seed)
    opcodes = sorted(EXT_LEN)
    for _ in range(args.count):
        opcode = rng.choice(opcodes)
        packet = bytearray(valid_packet(opcode, args.qpn, rng.getrandbits(24),
                                        b"\x3c" * rng.choice((0, 4, 64))))
        for _ in range(rng.randrange(1, 4)):
            where = rng.randrange(min(len(packet), BTH_LEN + 28))
            if where in (5, 6, 7):
                continue	# keep the destination QPN unknown
            packet[where] ^= 1 << rng.randrange(8)
        path.send(bytes(packet), rng.choice(("good", "good", "bad")))


def selftest():
    """The ICRC of a CNP captured from a ConnectX-4 Lx (tests/unit too)."""
    ip = bytes([0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11,
                0x91, 0x61, 0x0a, 0x00, 0x11, 0x01, 0x0a, 0x00, 0x12, 0x01])
    udp = bytes([0x00, 0x00, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00])
    cnp = bytes([0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x01, 0x18,
                 0x00, 0x00, 0x00, 0x00]) + b"\0" * 16
    got = roce_icrc(ip, False, udp, cnp)
    if struct.pack("<I", got) != bytes([0x82, 0xfd, 0x00, 0x2a]):
        log("selftest: ICRC %08x, expected 2a00fd82" % got)
        return 1
    log("selftest: ICRC of the captured CNP matches")
    return 0


CASES = {
    "truncated": case_truncated, "bad-version": case_bad_version,
    "bad-opcode": case_bad_opcode, "bad-length": case_bad_length,
    "bad-icrc": case_bad_icrc, "no-qp": case_no_qp, "send": case_send,
    "psn": case_psn, "random": case_random, "mutate": case_mutate,
    "write": case_write, "xhdr-bad": case_xhdr_bad, "sweep": case_sweep,
    "ack": case_ack, "nak": case_nak, "read": case_read,
}


def parse_args():
    parser = argparse.ArgumentParser(
        description="Send crafted RoCEv2 packets.",
        epilog="Cases: " + ", ".join(sorted(CASES)) + ", selftest")
    parser.add_argument("case", choices=sorted(CASES) + ["selftest"])
    parser.add_argument("--src", help="source IP address")
    parser.add_argument("--dst", help="destination IP address")
    parser.add_argument("--qpn", type=lambda s: int(s, 0), default=0xABCDEF,
                        help="destination QPN (default 0xabcdef)")
    parser.add_argument("--psn", type=lambda s: int(s, 0), default=0)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--span", type=int, default=1,
                        help="sweep: how many QPNs from --qpn")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--data", default="stellar crafted send ok!")
    num = lambda s: int(s, 0)  # noqa: E731
    parser.add_argument("--va", type=num, default=0)
    parser.add_argument("--rkey", type=num, default=0)
    parser.add_argument("--opcode", type=num, default=RC_SEND_ONLY,
                        help="send: the RC SEND opcode (default SEND_ONLY)")
    parser.add_argument("--fill", type=int, default=0,
                        help="send: pad --data with '.' to this length")
    parser.add_argument("--xph", action="store_true",
                        help="stellar placement header (send, write)")
    parser.add_argument("--offset", type=num, default=0)
    parser.add_argument("--rmsn", type=num, default=0)
    parser.add_argument("--xva", type=num, default=None)
    parser.add_argument("--xrkey", type=num, default=None)
    parser.add_argument("--len", type=num, default=64,
                        help="read: DMA length")
    parser.add_argument("--mtu", type=int, default=1024,
                        help="read: path MTU of the target QP")
    parser.add_argument("--listen", type=float, default=0,
                        help="read: print the responses of this many seconds")
    args = parser.parse_args()
    if args.case != "selftest" and not (args.src and args.dst):
        parser.error("--src and --dst are required")
    if args.seed is None:
        args.seed = random.randrange(1 << 30)
    return args


def main():
    args = parse_args()
    if args.case == "selftest":
        return selftest()
    try:
        path = Path(args.src, args.dst)
    except (ValueError, OSError) as err:
        log("roce_craft: %s" % err)
        return 2
    if args.case in ("random", "mutate"):
        log("%s: seed %d" % (args.case, args.seed))
    CASES[args.case](path, args)
    print(path.sent)
    return 0


if __name__ == "__main__":
    sys.exit(main())
