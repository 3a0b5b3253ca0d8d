#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
"""Wire fuzzer: mutate live RoCEv2 packets and inject them as the peer.

    wire_fuzz.py fuzz --a IF --b NETNS:IF [--seconds S] [--seed N] [options]
    wire_fuzz.py replay FILE --a IF --b NETNS:IF [--rate PPS]

Interfaces A (in this network namespace) and B (in NETNS) are the two
ends of a link (a veth pair) between two RoCEv2 endpoints.  fuzz sniffs
B with an AF_PACKET socket, so it sees the frames of both directions,
and keeps the newest RoCEv2 frames (UDP port 4791) of every direction,
BTH opcode and XHDR bit.  Until --seconds pass or SIGTERM, at --rate
frames per second it picks one (mostly of the opcodes seen in the last
half second, so of live QPs, each opcode equally often; between QPs'
lives only every eighth time), mutates it with a seeded RNG and sends
it out of the interface the original left from, Ethernet and IP
addresses and UDP ports unchanged: to the receiver it comes from its
peer.  Unless a mutation is about them, the IP and UDP
lengths and checksums and the RoCEv2 ICRC are recomputed, so the packet
reaches the transport's checks.

Mutations are field-aware: BTH opcode, QPN, PSN (near the live PSN,
far, wrapped), flags (AckReq, pad, version, P_Key, the stellar XCAP and
XHDR bits); RETH va near 2^64, R_Key, length; AETH syndromes and MSNs;
AtomicETH va near 2^64 and misaligned; DETH Q_Key and source QP; the
stellar placement header (offset, rmsn, va, R_Key; also added where
there was none) and the selective ACK header (base, newest, bitmap;
added to ACKs); payload truncation and growth; UDP and IP lengths;
random bit flips; a wrong ICRC; plain replays.

--record FILE writes every injected frame to a pcap file; replay sends
such a file again, each frame out of the interface whose MAC address is
its source.  The seed is printed; with the same seed and the same captured
traffic the same mutations are chosen.  A summary goes to stdout at the
end: "injected N captured M opcodes ...".
"""

import argparse
import collections
import ctypes
import os
import random
import select
import signal
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from roce_craft import ROCE_PORT, ip_checksum, roce_icrc, udp6_checksum  # noqa: E402

ETH_P_ALL = 0x0003
ETH_P_IP = 0x0800
ETH_P_IPV6 = 0x86DD
PACKET_OUTGOING = 4
CLONE_NEWNET = 0x40000000
BTH_LEN = 12
XPH_LEN = 20	# stellar placement header
SACK_LEN = 20	# stellar selective ACK header
BTH_XCAP = 0x40
BTH_XHDR = 0x20

# Extension headers after the BTH, per opcode (IB spec, table 38; RC,
# UC, UD, CNP).  R: RETH 16, A: AETH 4, T: AtomicETH 28, K: AtomicAckETH 8,
# I: ImmDt 4, V: IETH 4, D: DETH 8.  0x1D: ATOMIC WRITE (IBTA 1.5).
EXT = {
    0x00: "", 0x01: "", 0x02: "", 0x03: "I", 0x04: "", 0x05: "I",
    0x06: "R", 0x07: "", 0x08: "", 0x09: "I", 0x0A: "R", 0x0B: "RI",
    0x0C: "R", 0x0D: "A", 0x0E: "", 0x0F: "A", 0x10: "A", 0x11: "A",
    0x12: "AK", 0x13: "T", 0x14: "T", 0x16: "V", 0x17: "V", 0x1D: "R",
    0x20: "", 0x21: "", 0x22: "", 0x23: "I", 0x24: "", 0x25: "I",
    0x26: "R", 0x27: "", 0x28: "", 0x29: "I", 0x2A: "R", 0x2B: "RI",
    0x64: "D", 0x65: "DI", 0x81: "",
}
EXT_SIZE = {"R": 16, "A": 4, "T": 28, "K": 8, "I": 4, "V": 4, "D": 8}
# RC SEND and WRITE opcodes: the ones that may carry a placement header.
XPH_OPCODES = set(range(0x00, 0x0C)) | {0x16, 0x17}
RC_ACK = 0x11
RECENT = 0.5	# seconds: frames of QPs probably still alive

# Values near the ends of the address space and other boundaries.
BOUNDARY_64 = (0, 1, (1 << 63) - 1, 1 << 63, (1 << 64) - 1, (1 << 64) - 8,
               (1 << 64) - 4096, (1 << 64) - 0x10000, (1 << 32) - 1, 1 << 32)
BOUNDARY_32 = (0, 1, 2, 3, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFC,
               1024, 1025, 4096, 4097, 65536, 0x100000)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def setns(path):
    """Move this process into the network namespace at path."""
    libc = ctypes.CDLL(None, use_errno=True)
    with open(path) as ns:
        if libc.setns(ns.fileno(), CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, "setns %s: %s" % (path, os.strerror(err)))


def packet_socket(ifname):
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                         socket.htons(ETH_P_ALL))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    sock.bind((ifname, ETH_P_ALL))
    return sock


class Frame:
    """A RoCEv2 frame split into Ethernet, IP, UDP and transport parts.

    roce holds the BTH onwards without the ICRC.
    """

    def __init__(self, data):
        self.eth = data[:14]
        ethertype = struct.unpack_from(">H", data, 12)[0]
        self.v6 = ethertype == ETH_P_IPV6
        if ethertype == ETH_P_IP:
            ihl = (data[14] & 0xF) * 4
            total = struct.unpack_from(">H", data, 16)[0]
            if data[23] != socket.IPPROTO_UDP or ihl < 20:
                raise ValueError("not UDP")
        elif self.v6:
            ihl = 40
            total = 40 + struct.unpack_from(">H", data, 18)[0]
            if data[20] != socket.IPPROTO_UDP:
                raise ValueError("not UDP")
        else:
            raise ValueError("not IP")
        end = 14 + total
        self.ip = bytearray(data[14:14 + ihl])
        self.udp = bytearray(data[14 + ihl:14 + ihl + 8])
        if len(self.udp) < 8 or end > len(data):
            raise ValueError("truncated")
        if struct.unpack_from(">H", self.udp, 2)[0] != ROCE_PORT:
            raise ValueError("not RoCEv2")
        self.roce = bytearray(data[14 + ihl + 8:end - 4])
        if len(self.roce) < BTH_LEN:
            raise ValueError("truncated")
        self.icrc = "good"
        self.ip_len = None	# override of the IP length field
        self.udp_len = None	# override of the UDP length field

    @property
    def opcode(self):
        return self.roce[0] if self.roce else -1

    def ext_offsets(self, opcode=None):
        """Offsets of the extension headers of opcode, and their end."""
        offsets, pos = {}, BTH_LEN
        for kind in EXT.get(self.opcode if opcode is None else opcode, ""):
            offsets[kind] = pos
            pos += EXT_SIZE[kind]
        return offsets, pos

    def has_xhdr(self):
        return len(self.roce) > 8 and bool(self.roce[8] & BTH_XHDR)

    def build(self):
        """The frame on the wire: lengths, checksums and ICRC fixed."""
        udp = bytearray(self.udp)
        roce = bytes(self.roce)
        udp_len = 8 + len(roce) + 4
        struct.pack_into(">H", udp, 4, self.udp_len if self.udp_len
                         is not None else udp_len & 0xFFFF)
        struct.pack_into(">H", udp, 6, 0)
        ip = bytearray(self.ip)
        if self.v6:
            length = udp_len if self.ip_len is None else self.ip_len
            struct.pack_into(">H", ip, 4, length & 0xFFFF)
        else:
            length = len(ip) + udp_len
            length = length if self.ip_len is None else self.ip_len
            struct.pack_into(">H", ip, 2, length & 0xFFFF)
            struct.pack_into(">H", ip, 10, 0)
            struct.pack_into(">H", ip, 10, ip_checksum(bytes(ip)))
        crc = 0
        if len(roce) > 4:	# the ICRC masks BTH byte 4
            crc = roce_icrc(bytes(ip), self.v6, bytes(udp), roce)
        if self.icrc == "bad":
            crc ^= 0x00010000
        segment = bytes(udp) + roce + struct.pack("<I", crc)
        if self.v6:
            src, dst = ip[8:24], ip[24:40]
            check = udp6_checksum(_Addr(src), _Addr(dst), segment)
            segment = segment[:6] + struct.pack(">H", check) + segment[8:]
        return bytes(self.eth) + bytes(ip) + segment


class _Addr:
    """What udp6_checksum needs of an address: its packed bytes."""

    def __init__(self, packed):
        self.packed = bytes(packed)


class Mutator:
    """Field-aware mutations of a Frame, driven by one seeded RNG."""

    def __init__(self, rng):
        self.rng = rng
        self.ops = [
            (self.bit_flips, 6), (self.opcode, 3), (self.psn, 5),
            (self.qpn, 2), (self.flags, 4), (self.reth, 5), (self.aeth, 4),
            (self.atomic, 3), (self.deth, 2), (self.imm, 1),
            (self.placement, 5), (self.sack, 4), (self.truncate, 3),
            (self.grow, 2), (self.lengths, 1), (self.bad_icrc, 1),
            (self.stranger, 1),
        ]
        self.weights = [w for _, w in self.ops]

    def mutate(self, frame):
        """Apply 0 (a replay) to 3 mutations; return their names."""
        names = []
        if self.rng.random() < 0.05:
            return ["replay"]
        count = self.rng.choice((1, 1, 1, 2, 2, 3))
        ops = [op for op, _ in self.rng.choices(self.ops, self.weights,
                                                 k=4 * count)]
        later = []	# truncate and grow last: the others need the headers
        for op in ops:
            if len(names) + len(later) == count:
                break
            if op in (self.truncate, self.grow):
                later.append(op)
            elif op(frame) is not False:
                names.append(op.__name__)
        for op in later:
            op(frame)
            names.append(op.__name__)
        return names

    # Helpers
    def u32(self, orig=None):
        rng = self.rng
        choice = rng.randrange(4)
        if choice == 0 or orig is None:
            return rng.choice(BOUNDARY_32)
        if choice == 1:
            return (orig + rng.randrange(-4096, 4097)) & 0xFFFFFFFF
        if choice == 2:
            return orig ^ (1 << rng.randrange(32))
        return rng.getrandbits(32)

    def u64(self, orig=None):
        rng = self.rng
        choice = rng.randrange(4)
        if choice == 0 or orig is None:
            return (rng.choice(BOUNDARY_64) +
                    rng.choice((0, 0, -1, 1, -4, -64))) % (1 << 64)
        if choice == 1:
            return (orig + rng.randrange(-65536, 65537)) % (1 << 64)
        if choice == 2:
            return orig ^ (1 << rng.randrange(64))
        return ((1 << 64) - rng.randrange(1, 1 << 20)) if rng.random() < 0.5 \
            else rng.getrandbits(64)

    def put(self, frame, fmt, pos, value):
        if pos + struct.calcsize(fmt) <= len(frame.roce):
            struct.pack_into(fmt, frame.roce, pos, value)

    def get(self, frame, fmt, pos):
        if pos + struct.calcsize(fmt) <= len(frame.roce):
            return struct.unpack_from(fmt, frame.roce, pos)[0]
        return None

    # Mutations; each returns False when it does not apply.
    def bit_flips(self, frame):
        rng = self.rng
        _, end = frame.ext_offsets()
        span = min(len(frame.roce), end + XPH_LEN + 8)
        for _ in range(rng.randrange(1, 5)):
            where = rng.randrange(span if rng.random() < 0.8
                                  else len(frame.roce))
            frame.roce[where] ^= 1 << rng.randrange(8)

    def opcode(self, frame):
        rng = self.rng
        frame.roce[0] = rng.choice(sorted(EXT)) if rng.random() < 0.85 \
            else rng.randrange(256)

    def psn(self, frame):
        rng = self.rng
        psn = self.get(frame, ">I", 8) & 0xFFFFFF
        choice = rng.randrange(5)
        if choice < 2:
            psn += rng.randrange(-4, 5)
        elif choice == 2:
            psn += rng.choice((1 << 23, (1 << 23) - 1, (1 << 23) + 1,
                               -(1 << 23)))
        elif choice == 3:
            psn = rng.choice((0, 0xFFFFFF, 0x7FFFFF, 0x800000))
        else:
            psn += rng.randrange(-256, 257)
        frame.roce[9:12] = struct.pack(">I", psn & 0xFFFFFF)[1:]

    def qpn(self, frame):
        rng = self.rng
        qpn = struct.unpack(">I", b"\0" + bytes(frame.roce[5:8]))[0]
        qpn = rng.choice((qpn + 1, qpn - 1, 1, 0, 0xFFFFFF, qpn ^ 0x800000,
                          rng.getrandbits(24)))
        frame.roce[5:8] = struct.pack(">I", qpn & 0xFFFFFF)[1:]

    def flags(self, frame):
        rng = self.rng
        choice = rng.randrange(6)
        if choice == 0:
            frame.roce[8] ^= 0x80			# AckReq
        elif choice == 1:
            frame.roce[8] ^= rng.choice((BTH_XCAP, BTH_XHDR,
                                         BTH_XCAP | BTH_XHDR, 0x1F))
        elif choice == 2:
            frame.roce[1] ^= 0x30 if rng.random() < 0.5 else \
                (rng.randrange(1, 4) << 4)	# pad count
        elif choice == 3:
            frame.roce[1] ^= rng.randrange(1, 16)	# transport version
        elif choice == 4:
            frame.roce[1] ^= rng.choice((0x80, 0x40))  # SE, MigReq
        else:
            frame.roce[2:4] = struct.pack(">H", rng.choice(
                (0, 0x7FFF, 0xFFFE, rng.getrandbits(16))))

    def reth(self, frame):
        offsets, _ = frame.ext_offsets()
        if "R" not in offsets:
            return False
        pos = offsets["R"]
        field = self.rng.randrange(4)
        if field in (0, 3):
            self.put(frame, ">Q", pos, self.u64(self.get(frame, ">Q", pos)))
        if field in (1, 3):
            self.put(frame, ">I", pos + 8,
                     self.u32(self.get(frame, ">I", pos + 8)))
        if field in (2, 3):
            self.put(frame, ">I", pos + 12,
                     self.u32(self.get(frame, ">I", pos + 12)))
        return True

    def aeth(self, frame):
        offsets, _ = frame.ext_offsets()
        if offsets.get("A", len(frame.roce)) + 4 > len(frame.roce):
            return False
        pos = offsets["A"]
        rng = self.rng
        if rng.random() < 0.6:
            # ACK with credits, RNR NAK with a timer, NAK codes 0-4, reserved
            frame.roce[pos] = rng.choice((rng.randrange(0x00, 0x20),
                                          0x20 | rng.randrange(32),
                                          0x60 | rng.randrange(5),
                                          0x60 | rng.randrange(5, 32),
                                          rng.randrange(256)))
        else:
            msn = rng.choice((0, 0xFFFFFF, rng.getrandbits(24)))
            frame.roce[pos + 1:pos + 4] = struct.pack(">I", msn)[1:]
        return True

    def atomic(self, frame):
        offsets, _ = frame.ext_offsets()
        rng = self.rng
        if "T" in offsets:
            pos = offsets["T"]
            va = self.get(frame, ">Q", pos)
            field = rng.randrange(4)
            if field == 0:
                self.put(frame, ">Q", pos, self.u64(va))
            elif field == 1:
                self.put(frame, ">Q", pos, (va or 0) | rng.randrange(1, 8))
            elif field == 2:
                self.put(frame, ">I", pos + 8,
                         self.u32(self.get(frame, ">I", pos + 8)))
            else:
                self.put(frame, ">Q", pos + 12 + 8 * rng.randrange(2),
                         self.u64())
            return True
        if "K" in offsets:
            self.put(frame, ">Q", offsets["K"], self.u64())
            return True
        return False

    def deth(self, frame):
        offsets, _ = frame.ext_offsets()
        if "D" not in offsets:
            return False
        pos = offsets["D"]
        if self.rng.random() < 0.5:
            self.put(frame, ">I", pos, self.u32(self.get(frame, ">I", pos)))
        else:
            self.put(frame, ">I", pos + 4, self.rng.getrandbits(24))
        return True

    def imm(self, frame):
        offsets, _ = frame.ext_offsets()
        kind = "I" if "I" in offsets else "V" if "V" in offsets else None
        if kind is None:
            return False
        self.put(frame, ">I", offsets[kind], self.u32())
        return True

    def placement(self, frame):
        """Mutate the placement header, or add one (setting XHDR)."""
        rng = self.rng
        _, end = frame.ext_offsets()
        if frame.opcode not in XPH_OPCODES and rng.random() < 0.8:
            return False
        if not frame.has_xhdr():
            off = rng.choice((0, 1024, 4096, rng.getrandbits(32)))
            header = struct.pack(">IIQI", off, rng.randrange(4), self.u64(),
                                 self.u32())
            frame.roce[end:end] = header
            frame.roce[8] |= BTH_XHDR | BTH_XCAP
            return True
        field = rng.randrange(5)
        if field == 0:
            off = self.get(frame, ">I", end)
            self.put(frame, ">I", end, rng.choice((
                self.u32(off), (off or 0) + rng.choice((1, 2, 4)),
                (off or 0) + rng.choice((1024, 2048, 4096)) * rng.randrange(
                    -2, 64))) & 0xFFFFFFFF)
        elif field == 1:
            rmsn = self.get(frame, ">I", end + 4)
            self.put(frame, ">I", end + 4, ((rmsn or 0) + rng.randrange(
                -3, 600)) & 0xFFFFFFFF if rng.random() < 0.7
                else self.u32())
        elif field == 2:
            self.put(frame, ">Q", end + 8,
                     self.u64(self.get(frame, ">Q", end + 8)))
        elif field == 3:
            self.put(frame, ">I", end + 16,
                     self.u32(self.get(frame, ">I", end + 16)))
        else:
            frame.roce[8] &= ~BTH_XHDR & 0xFF	# header left as payload
        return True

    def sack(self, frame):
        """Mutate a selective ACK header, or add one to an ACK."""
        rng = self.rng
        if frame.opcode != RC_ACK:
            return False
        _, end = frame.ext_offsets()
        if not frame.has_xhdr() or len(frame.roce) < end + SACK_LEN:
            del frame.roce[end:]
            frame.roce += bytes(SACK_LEN)
            frame.roce[8] |= BTH_XHDR | BTH_XCAP
        base = rng.choice((0, 1, 2, 3, 127, 128, 0x7FFF, 0x8000, 0xFFFF,
                           rng.getrandbits(16)))
        newest = rng.choice((0, 1, -1, 2, 130, 0x7FFF, -0x8000,
                             rng.randrange(-300, 300))) & 0xFFFF
        bitmap = rng.choice((0, (1 << 128) - 1, rng.getrandbits(128),
                             1 << rng.randrange(128),
                             ((1 << rng.randrange(1, 129)) - 1)))
        struct.pack_into(">HH", frame.roce, end, base, newest)
        frame.roce[end + 4:end + 20] = bitmap.to_bytes(16, "big")
        return True

    def truncate(self, frame):
        rng = self.rng
        _, end = frame.ext_offsets()
        cut = rng.choice((rng.randrange(len(frame.roce) + 1),
                          min(end, len(frame.roce)) - rng.randrange(1, 5),
                          len(frame.roce) - rng.randrange(1, 4)))
        del frame.roce[max(cut, 0):]

    def grow(self, frame):
        rng = self.rng
        extra = rng.choice((1, 2, 3, 4, 64, 1024, 4096 - len(frame.roce),
                            rng.randrange(1, 1500)))
        frame.roce += bytes(rng.getrandbits(8) for _ in range(max(extra, 1)))

    def lengths(self, frame):
        rng = self.rng
        if rng.random() < 0.5:
            frame.udp_len = rng.choice((0, 7, 8, 8 + BTH_LEN,
                                        rng.getrandbits(16)))
        else:
            frame.ip_len = rng.choice((0, 20, 28, 40 + 8 + BTH_LEN,
                                       rng.getrandbits(16)))

    def bad_icrc(self, frame):
        frame.icrc = "bad"

    def stranger(self, frame):
        """Another source address in the peer's subnet."""
        if frame.v6:
            frame.ip[23] ^= 0x40
        else:
            frame.ip[15] ^= 0x40


class Fuzzer:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.mutator = Mutator(self.rng)
        self.a = packet_socket(args.a)
        netns, ifb = args.b.split(":", 1)
        setns(os.path.join("/run/netns", netns))
        self.b = packet_socket(ifb)
        self.out = {self.a.getsockname()[4]: self.a,
                    self.b.getsockname()[4]: self.b}
        self.corpus = collections.defaultdict(
            lambda: collections.deque(maxlen=32))
        self.injected = collections.deque(maxlen=4096)
        self.injected_set = set()
        self.stats = collections.Counter()
        self.stopped = False
        self.record = open(args.record, "wb") if args.record else None
        if self.record:
            self.record.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0,
                                          0, 65535, 1))

    def stop(self, signum, frame):
        self.stopped = True

    def sniff(self):
        while True:
            try:
                data, addr = self.b.recvfrom(65535, socket.MSG_DONTWAIT)
            except BlockingIOError:
                return
            if data in self.injected_set:
                continue
            try:
                frame = Frame(data)
            except (ValueError, IndexError, struct.error):
                continue
            self.stats["captured"] += 1
            key = (addr[2] == PACKET_OUTGOING, frame.opcode,
                   frame.has_xhdr())
            self.corpus[key].append((time.monotonic(), data))

    def remember(self, data):
        if len(self.injected) == self.injected.maxlen:
            self.injected_set.discard(self.injected[0])
        self.injected.append(data)
        self.injected_set.add(data)
        if self.record:
            now = time.time()
            self.record.write(struct.pack("<IIII", int(now),
                                          int(now % 1 * 1e6), len(data),
                                          len(data)) + data)

    def send(self, data):
        sock = self.out.get(data[6:12])
        if sock is None:
            return False
        self.remember(data)
        try:
            sock.send(data)
        except OSError as err:
            self.stats["send_error %s" % err.strerror] += 1
            return False
        self.stats["injected"] += 1
        return True

    def inject_one(self):
        keys = sorted(k for k, v in self.corpus.items() if v)
        if not keys:
            return
        # Mostly frames of the QPs alive now: of opcodes seen lately.
        recent = [k for k in keys
                  if self.corpus[k][-1][0] > time.monotonic() - RECENT]
        if recent and self.rng.random() < 0.8:
            keys = recent
        elif not recent and self.rng.random() < 0.875:
            return		# between QPs' lives: inject less
        frames = self.corpus[self.rng.choice(keys)]
        data = frames[-1][1] if self.rng.random() < 0.6 else \
            frames[self.rng.randrange(len(frames))][1]
        frame = Frame(data)
        for name in self.mutator.mutate(frame):
            self.stats["op " + name] += 1
        self.send(frame.build())

    def run(self):
        log("wire_fuzz: seed %d, %d s, %d frames/s after %d s of capture" %
            (self.args.seed, self.args.seconds, self.args.rate,
             self.args.warmup))
        start = time.monotonic()
        fuzz_at = start + self.args.warmup
        end = start + self.args.seconds
        interval = 1.0 / self.args.rate
        next_at = fuzz_at
        signal.signal(signal.SIGTERM, self.stop)
        while not self.stopped:
            now = time.monotonic()
            if now >= end:
                break
            if now >= next_at:
                self.inject_one()
                next_at = max(next_at + interval, now - 1)
                continue
            try:
                select.select([self.b], [], [], min(next_at, end) - now)
            except InterruptedError:
                pass
            self.sniff()
        if self.record:
            self.record.close()
        opcodes = sorted({"%02x%s" % (k[1], "x" if k[2] else "")
                          for k in self.corpus})
        print("injected %d captured %d opcodes %s" %
              (self.stats["injected"], self.stats["captured"],
               ",".join(opcodes)))
        for name, count in sorted(self.stats.items()):
            log("  %s: %d" % (name, count))
        return 0 if self.stats["injected"] else 1


def replay(args):
    a = packet_socket(args.a)
    netns, ifb = args.b.split(":", 1)
    setns(os.path.join("/run/netns", netns))
    b = packet_socket(ifb)
    out = {a.getsockname()[4]: a, b.getsockname()[4]: b}
    sent = 0
    with open(args.file, "rb") as pcap:
        pcap.read(24)
        while True:
            header = pcap.read(16)
            if len(header) < 16:
                break
            length = struct.unpack("<IIII", header)[2]
            data = pcap.read(length)
            sock = out.get(data[6:12])
            if sock is None:
                continue
            try:
                sock.send(data)
                sent += 1
            except OSError as err:
                log("replay: %s" % err.strerror)
            time.sleep(1.0 / args.rate)
    print("replayed %d" % sent)
    return 0


def main():
    parser = argparse.ArgumentParser(
        description="Mutate live RoCEv2 frames and inject them.")
    parser.add_argument("mode", choices=("fuzz", "replay"))
    parser.add_argument("file", nargs="?", help="replay: pcap file")
    parser.add_argument("--a", required=True, help="interface here")
    parser.add_argument("--b", required=True,
                        help="NETNS:IF, the other end of the link")
    parser.add_argument("--seconds", type=float, default=3600)
    parser.add_argument("--warmup", type=float, default=5,
                        help="capture only for this long first")
    parser.add_argument("--rate", type=float, default=50,
                        help="frames injected per second")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--record", help="write injected frames (pcap)")
    args = parser.parse_args()
    if args.mode == "replay":
        if not args.file:
            parser.error("replay needs a FILE")
        return replay(args)
    if args.seed is None:
        args.seed = random.randrange(1 << 31)
    return Fuzzer(args).run()


if __name__ == "__main__":
    sys.exit(main())
