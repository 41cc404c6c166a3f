#!/usr/bin/env python3
"""The time of a signature through an SSH agent's socket, one connection, no process start-up:
the agent's own cost of a signature (spec/agent.md §7), for Benchmarks/ssh-agent.sh.

    ssh-agent-sign.py SOCKET PUBFILE COUNT FLAGS    -> prints the mean seconds per signature
"""
import base64, os, socket, struct, sys, time

def frame(body):
    return struct.pack(">I", len(body)) + body

def string(b):
    return struct.pack(">I", len(b)) + b

def read_exact(s, n):
    out = b""
    while len(out) < n:
        chunk = s.recv(n - len(out))
        if not chunk:
            raise SystemExit("the agent closed the connection")
        out += chunk
    return out

def main():
    path, pub, count, flags = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    blob = base64.b64decode(open(pub).read().split()[1])
    data = os.urandom(4096)
    request = frame(bytes([13]) + string(blob) + string(data) + struct.pack(">I", flags))
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    def one():
        s.sendall(request)
        (length,) = struct.unpack(">I", read_exact(s, 4))
        body = read_exact(s, length)
        if body[0] != 14:
            raise SystemExit(f"no signature (reply type {body[0]})")
    for _ in range(5):
        one()
    start = time.perf_counter()
    for _ in range(count):
        one()
    print(f"{(time.perf_counter() - start) / count:.6f}")

main()
