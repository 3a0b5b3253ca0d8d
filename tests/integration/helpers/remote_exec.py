#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Copyright (c) 2026 The virtio-stellar authors
"""A minimal remote shell for test VMs: the "ssh" that mpirun needs.

    remote_exec.py serve ADDR PORT         run commands sent to ADDR:PORT
    remote_exec.py HOST CMD [ARGS...]      run CMD on HOST, like ssh HOST CMD

The client joins its arguments with spaces (as ssh does), the server runs
them with "bash -c" and sends back the output (stdout and stderr merged)
and the exit status, which the client exits with.  The port comes from
REMOTE_EXEC_PORT.  There is no authentication: use it only on the private
links between test VMs.

Frames on the connection, server to client: one type byte, a 4-byte
big-endian length or status, then the data: b"O" output, b"X" exit status.
The client sends the command as UTF-8 bytes and shuts down its sending
side.
"""
import os
import socket
import struct
import subprocess
import sys
import threading


def recv_all(conn):
    chunks = []
    while True:
        data = conn.recv(65536)
        if not data:
            return b"".join(chunks)
        chunks.append(data)


def recv_exact(conn, size):
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise EOFError("connection closed after %d of %d bytes"
                           % (len(data), size))
        data += chunk
    return data


def run_one(conn):
    with conn:
        command = recv_all(conn).decode()
        proc = subprocess.Popen(["bash", "-c", command],
                                stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT)
        for data in iter(lambda: proc.stdout.read1(65536), b""):
            conn.sendall(b"O" + struct.pack(">I", len(data)) + data)
        conn.sendall(b"X" + struct.pack(">i", proc.wait()))


def serve(addr, port):
    listener = socket.create_server((addr, port), reuse_port=True)
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=run_one, args=(conn,), daemon=True).start()


def run_remote(host, port, argv):
    conn = socket.create_connection((host, port), timeout=30)
    conn.settimeout(None)
    conn.sendall(" ".join(argv).encode())
    conn.shutdown(socket.SHUT_WR)
    out = sys.stdout.buffer
    while True:
        kind = recv_exact(conn, 1)
        value = struct.unpack(">i", recv_exact(conn, 4))[0]
        if kind == b"X":
            return value if 0 <= value < 256 else 255
        if kind != b"O":
            raise ValueError("bad frame type %r" % kind)
        out.write(recv_exact(conn, value))
        out.flush()


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "serve":
        serve(sys.argv[2], int(sys.argv[3]))
    if len(sys.argv) < 3:
        sys.exit("usage: remote_exec.py serve ADDR PORT | HOST CMD [ARGS...]")
    port = int(os.environ.get("REMOTE_EXEC_PORT", "0"))
    if not port:
        sys.exit("remote_exec.py: REMOTE_EXEC_PORT is not set")
    sys.exit(run_remote(sys.argv[1], port, sys.argv[2:]))


if __name__ == "__main__":
    main()
