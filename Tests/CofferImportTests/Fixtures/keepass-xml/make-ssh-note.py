#!/usr/bin/env python3
"""Prints a fake, deterministic ~100 KB 'SSH key' note (not a real key): 1,500 lines of 64 base64 characters."""
import base64, hashlib
lines = ["-----BEGIN OPENSSH PRIVATE KEY-----"]
block = b"coffer fixture"
for i in range(1500):
    block = hashlib.sha256(block).digest() + hashlib.sha256(block + b"2").digest()[:16]
    lines.append(base64.b64encode(block).decode())
lines.append("-----END OPENSSH PRIVATE KEY-----")
print("\n".join(lines), end="")
