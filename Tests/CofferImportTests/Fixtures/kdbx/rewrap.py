#!/usr/bin/env python3
"""rewrap.py IN OUT PASSWORD KDF CIPHER COMPRESS [KEYFILE]

Re-encrypts a KDBX 4 database written by keepassxc-cli under another key derivation and outer
cipher, keeping its decrypted payload (inner header, XML, attachments, protected values) byte for
byte. keepassxc-cli 2.7.4 can only create AES-KDF databases; this makes the Argon2d, Argon2id and
ChaCha20 fixtures, which make-kdbx-fixtures.sh then has keepassxc-cli open and export to check
that KeePassXC reads them as the same database.
  KDF: argon2d | argon2id | aes (cheap parameters, fixed below)
  CIPHER: aes | chacha20;  COMPRESS: gzip | none
Written from the KDBX 4 layout (KeePass's and KeePassXC's documentation of the format); needs
`cryptography` (python3-cryptography) and libargon2 (libargon2-1) through ctypes.
"""
import ctypes, ctypes.util, gzip, hashlib, hmac, os, struct, sys, zlib
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives import padding

SIG = bytes.fromhex("03d9a29a67fb4bb5")
AES_CBC = bytes.fromhex("31c1f2e6bf714350be5805216afc5aff")
CHACHA20 = bytes.fromhex("d6038a2b8b6f4cb5a524339a31dbb59a")
KDF_AES = bytes.fromhex("7c02bb8279a74ac0927d114a00648238")
KDF_AES3 = bytes.fromhex("c9d9f39a628a4460bf740d08c18a4fea")
KDF_ARGON2D = bytes.fromhex("ef636ddf8c29444b91f7a9a403e30a0c")
KDF_ARGON2ID = bytes.fromhex("9e298b1956db4773b23dfc3ec6f0a1e6")

def read_dict(b):
    assert b[:2] == b"\x00\x01", "variant dictionary version"
    i, d = 2, {}
    while True:
        t = b[i]; i += 1
        if t == 0: return d
        kl, = struct.unpack_from("<i", b, i); i += 4; k = b[i:i + kl].decode(); i += kl
        vl, = struct.unpack_from("<i", b, i); i += 4; v = b[i:i + vl]; i += vl
        d[k] = (t, v)

def write_dict(d):
    out = bytearray(b"\x00\x01")
    for k, (t, v) in d.items():
        kb = k.encode(); out += bytes([t]) + struct.pack("<i", len(kb)) + kb + struct.pack("<i", len(v)) + v
    return bytes(out + b"\x00")

def composite(password, keyfile):
    parts = hashlib.sha256(password.encode()).digest()
    if keyfile:
        parts += keyfile_key(keyfile)
    return hashlib.sha256(parts).digest()

def keyfile_key(path):
    data = open(path, "rb").read()
    if b"<KeyFile>" in data:
        import xml.etree.ElementTree as ET
        root = ET.fromstring(data)
        version = root.find("Meta/Version").text.strip()
        text = root.find("Key/Data").text
        if version.startswith("2"):
            return bytes.fromhex("".join(text.split()))
        import base64; return base64.b64decode(text)
    if len(data) == 32: return data
    if len(data) == 64:
        try: return bytes.fromhex(data.decode())
        except ValueError: pass
    return hashlib.sha256(data).digest()

def argon2(kind, password, salt, m_kib, t, p, v):
    lib = ctypes.CDLL(ctypes.util.find_library("argon2") or "libargon2.so.1")
    out = ctypes.create_string_buffer(32)
    rc = lib.argon2_hash(ctypes.c_uint32(t), ctypes.c_uint32(m_kib), ctypes.c_uint32(p), password, ctypes.c_size_t(len(password)),
                         salt, ctypes.c_size_t(len(salt)), out, ctypes.c_size_t(32), None, ctypes.c_size_t(0),
                         ctypes.c_int(0 if kind == "argon2d" else 2), ctypes.c_int(v))
    assert rc == 0, f"argon2_hash failed: {rc}"
    return out.raw

def transform(params, key):
    uuid = params["$UUID"][1]
    if uuid in (KDF_AES, KDF_AES3):
        rounds, = struct.unpack("<Q", params["R"][1])
        enc = Cipher(algorithms.AES(params["S"][1]), modes.ECB()).encryptor()
        for _ in range(rounds): key = enc.update(key)
        return hashlib.sha256(key).digest()
    kind = "argon2d" if uuid == KDF_ARGON2D else "argon2id"
    m, = struct.unpack("<Q", params["M"][1]); t, = struct.unpack("<Q", params["I"][1])
    p, = struct.unpack("<I", params["P"][1]); v, = struct.unpack("<I", params["V"][1])
    return argon2(kind, key, params["S"][1], m // 1024, t, p, v)

def block_key(base, index):
    return hashlib.sha512(struct.pack("<Q", index) + base).digest()

def read_header(data):
    assert data[:8] == SIG
    i, fields = 12, []
    while True:
        fid = data[i]; size, = struct.unpack_from("<I", data, i + 1); value = data[i + 5:i + 5 + size]; i += 5 + size
        fields.append((fid, value))
        if fid == 0: return fields, i

def open_db(data, password, keyfile):
    fields, end = read_header(data)
    f = dict(fields)
    header = data[:end]
    assert hashlib.sha256(header).digest() == data[end:end + 32], "header hash"
    key = transform(read_dict(f[11]), composite(password, keyfile))
    base = hashlib.sha512(f[4] + key + b"\x01").digest()
    assert hmac.new(block_key(base, 2**64 - 1), header, "sha256").digest() == data[end + 32:end + 64], "header HMAC (wrong password?)"
    i, index, payload = end + 64, 0, bytearray()
    while True:
        mac = data[i:i + 32]; length, = struct.unpack_from("<i", data, i + 32); block = data[i + 36:i + 36 + length]
        assert hmac.new(block_key(base, index), struct.pack("<Q", index) + struct.pack("<i", length) + block, "sha256").digest() == mac
        i += 36 + length; index += 1
        if length == 0: break
        payload += block
    ekey = hashlib.sha256(f[4] + key).digest()
    if f[2] == AES_CBC:
        d = Cipher(algorithms.AES(ekey), modes.CBC(f[7])).decryptor(); plain = d.update(bytes(payload)) + d.finalize()
        u = padding.PKCS7(128).unpadder(); plain = u.update(plain) + u.finalize()
    else:
        d = Cipher(algorithms.ChaCha20(ekey, b"\0\0\0\0" + f[7]), None).decryptor(); plain = d.update(bytes(payload))
    if struct.unpack("<I", f[3])[0] == 1: plain = gzip.decompress(plain)
    return data[8:12], plain

def write_db(version, plain, password, keyfile, kdf, cipher, compress, key=None, random=os.urandom):
    """`key`: the transformed key to write under, skipping the KDF (Fuzz/make-corpora.py's seeds,
    under FuzzImportKDBX's fixed key); `random`: where seeds and IVs come from."""
    seed, salt = random(32), random(32)
    if kdf == "aes":
        params = {"$UUID": (0x42, KDF_AES), "R": (0x05, struct.pack("<Q", 1000)), "S": (0x42, salt)}
    else:
        params = {"$UUID": (0x42, KDF_ARGON2D if kdf == "argon2d" else KDF_ARGON2ID), "S": (0x42, salt),
                  "P": (0x04, struct.pack("<I", 2)), "M": (0x05, struct.pack("<Q", 1 << 20)),
                  "I": (0x05, struct.pack("<Q", 2)), "V": (0x04, struct.pack("<I", 0x13))}
    iv = random(16 if cipher == "aes" else 12)
    fields = [(2, AES_CBC if cipher == "aes" else CHACHA20), (3, struct.pack("<I", 1 if compress == "gzip" else 0)),
              (4, seed), (7, iv), (11, write_dict(params)), (0, b"\r\n\r\n")]
    header = SIG + version + b"".join(bytes([fid]) + struct.pack("<I", len(v)) + v for fid, v in fields)
    key = key or transform(params, composite(password, keyfile))
    base = hashlib.sha512(seed + key + b"\x01").digest()
    ekey = hashlib.sha256(seed + key).digest()
    body = gzip.compress(plain, mtime=0) if compress == "gzip" else plain
    if cipher == "aes":
        p = padding.PKCS7(128).padder(); body = p.update(body) + p.finalize()
        e = Cipher(algorithms.AES(ekey), modes.CBC(iv)).encryptor(); body = e.update(body) + e.finalize()
    else:
        e = Cipher(algorithms.ChaCha20(ekey, b"\0\0\0\0" + iv), None).encryptor(); body = e.update(body)
    out = bytearray(header + hashlib.sha256(header).digest() + hmac.new(block_key(base, 2**64 - 1), header, "sha256").digest())
    chunks = [body[k:k + (1 << 20)] for k in range(0, len(body), 1 << 20)] + [b""]
    for index, chunk in enumerate(chunks):
        out += hmac.new(block_key(base, index), struct.pack("<Q", index) + struct.pack("<i", len(chunk)) + chunk, "sha256").digest()
        out += struct.pack("<i", len(chunk)) + chunk
    return bytes(out)

if __name__ == "__main__":
    src, dst, password, kdf, cipher, compress = sys.argv[1:7]
    keyfile = sys.argv[7] if len(sys.argv) > 7 else None
    version, plain = open_db(open(src, "rb").read(), password, keyfile)
    open(dst, "wb").write(write_db(version, plain, password, keyfile, kdf, cipher, compress))
