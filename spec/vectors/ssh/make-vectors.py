#!/usr/bin/env python3
"""Writes the SSH key vectors (spec/ssh.md §8) from real OpenSSH and OpenSSL output: each key is
made by `ssh-keygen` or `openssl`, its public line and fingerprint are what `ssh-keygen -y` and
`ssh-keygen -l` print, and its signatures are taken out of `ssh-keygen -Y sign`'s SSHSIG
(PROTOCOL.sshsig). Run once; the vectors are then fixed files (re-running makes new keys)."""
import base64, hashlib, json, os, struct, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MESSAGE = b"Coffer SSH vector message\n"
NAMESPACE = b"file"


def run(*args, **kw):
    return subprocess.run(args, check=True, capture_output=True, **kw).stdout


def string(b):
    return struct.pack(">I", len(b)) + b


def read_string(buf, off):
    (n,) = struct.unpack(">I", buf[off:off + 4])
    return buf[off + 4:off + 4 + n], off + 4 + n


def sshsig_blob(sig_text):
    body = b"".join(l for l in sig_text.splitlines() if not l.startswith(b"-----"))
    raw = base64.b64decode(body)
    assert raw[:6] == b"SSHSIG"
    off = 10
    for _ in range(4):  # public key, namespace, reserved, hash algorithm
        _, off = read_string(raw, off)
    blob, off = read_string(raw, off)
    return blob


def signed_data():
    return b"SSHSIG" + string(NAMESPACE) + string(b"") + string(b"sha512") + string(hashlib.sha512(MESSAGE).digest())


def scenario(number, name, description, make, comment="", expect="ok", reexport=False, extra=None):
    with tempfile.TemporaryDirectory() as d:
        key = os.path.join(d, "key")
        make(key)
        text = open(key, "rb").read().decode()
        v = {"description": description, "input": text, "comment": comment, "expect": expect}
        if expect == "ok":
            if not text.startswith("-----BEGIN OPENSSH"):
                # OpenSSH 9.2 cannot load every PEM key (not PKCS#8 Ed25519): Python's
                # cryptography rewrites it in OpenSSH's format, which ssh-keygen then reads.
                from cryptography.hazmat.primitives import serialization as s
                private = s.load_pem_private_key(text.encode(), None)
                os.rename(key, key + ".pem")
                with open(key, "wb") as f:
                    f.write(private.private_bytes(s.Encoding.PEM, s.PrivateFormat.OpenSSH, s.NoEncryption()))
                os.chmod(key, 0o600)
            line = run("ssh-keygen", "-y", "-f", key).decode().rstrip("\n")
            v["publicLine"] = line
            with open(key + ".pub", "w") as f:
                f.write(line + "\n")
            fp = run("ssh-keygen", "-l", "-f", key + ".pub").decode().rstrip("\n")
            # ssh-keygen -l names the comment of the .pub file it was given; a PEM key has none.
            v["fingerprintLine"] = fp
            v["bits"] = int(fp.split(" ")[0])
            v["kind"] = line.split(" ")[0]
            if reexport:
                v["openssh"] = text
            msg = os.path.join(d, "message")
            open(msg, "wb").write(MESSAGE)
            os.chmod(key, 0o600)
            run("ssh-keygen", "-Y", "sign", "-f", key, "-n", NAMESPACE.decode(), msg)
            blob = sshsig_blob(open(msg + ".sig", "rb").read())
            v["signatures"] = [{"data": signed_data().hex(), "blob": blob.hex(),
                                "deterministic": not v["kind"].startswith("ecdsa")}]
        if extra:
            v.update(extra)
        path = os.path.join(HERE, "%03d-%s.json" % (number, name))
        with open(path, "w") as f:
            json.dump(v, f, indent=2, ensure_ascii=False)
            f.write("\n")
        print(path)


def keygen(*args):
    return lambda key: run("ssh-keygen", "-q", *args, "-f", key)


def openssl(*args):
    return lambda key: run("openssl", *args, "-out", key)


scenario(1, "ed25519-openssh", "ssh-keygen -t ed25519: import, public line, fingerprint, re-export byte for byte, the signature ssh-keygen -Y sign makes",
         keygen("-t", "ed25519", "-N", "", "-C", "alice@example.com"), reexport=True)
scenario(2, "ecdsa-p256-openssh", "ssh-keygen -t ecdsa -b 256: the same; ECDSA signatures are randomised, so only verified",
         keygen("-t", "ecdsa", "-b", "256", "-N", "", "-C", "bob@example.com"), reexport=True)
scenario(3, "rsa-2048-openssh", "ssh-keygen -t rsa -b 2048: the same; rsa-sha2-512 as ssh-keygen -Y sign uses",
         keygen("-t", "rsa", "-b", "2048", "-N", "", "-C", "carol@example.com"), reexport=True)
scenario(4, "ed25519-empty-comment", "ssh-keygen -C '': the public line has no comment, the fingerprint says 'no comment'",
         keygen("-t", "ed25519", "-N", "", "-C", ""), reexport=True)
scenario(5, "ed25519-pkcs8", "openssl genpkey -algorithm ed25519: PKCS#8 PRIVATE KEY (RFC 8410)",
         openssl("genpkey", "-algorithm", "ed25519"))
scenario(6, "ecdsa-p256-sec1", "openssl ecparam -genkey: SEC1 EC PRIVATE KEY with named curve and public key",
         lambda key: run("sh", "-c", "openssl ecparam -name prime256v1 -genkey -noout -out " + key))
scenario(7, "ecdsa-p256-pkcs8", "openssl genpkey -algorithm EC P-256: PKCS#8 PRIVATE KEY",
         openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"))
scenario(8, "rsa-2048-pkcs1", "openssl genrsa -traditional: PKCS#1 RSA PRIVATE KEY",
         lambda key: run("openssl", "genrsa", "-traditional", "-out", key, "2048"))
scenario(9, "rsa-2048-pkcs8", "openssl genpkey -algorithm RSA: PKCS#8 PRIVATE KEY",
         openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"))
scenario(10, "ed25519-encrypted", "ssh-keygen -N passphrase: aes256-ctr and bcrypt, refused with the way forward",
         keygen("-t", "ed25519", "-N", "correct horse", "-C", "enc"), expect="ssh.encrypted-key")
scenario(11, "rsa-1024", "ssh-keygen -t rsa -b 1024: under 2048 bits, refused",
         keygen("-t", "rsa", "-b", "1024", "-N", "", "-C", "small"), expect="ssh.unsupported-key")
scenario(12, "ecdsa-p384", "ssh-keygen -t ecdsa -b 384: another curve, refused",
         keygen("-t", "ecdsa", "-b", "384", "-N", "", "-C", "p384"), expect="ssh.unsupported-key")
scenario(13, "pkcs8-encrypted", "openssl genpkey -aes256: ENCRYPTED PRIVATE KEY, refused with the way forward",
         openssl("genpkey", "-algorithm", "ed25519", "-aes256", "-pass", "pass:secret"), expect="ssh.encrypted-key")
scenario(14, "rsa-pkcs1-encrypted", "openssl genrsa -traditional -aes256: Proc-Type 4,ENCRYPTED, refused",
         lambda key: run("openssl", "genrsa", "-traditional", "-aes256", "-passout", "pass:secret", "-out", key, "2048"),
         expect="ssh.encrypted-key")
scenario(15, "ecdsa-p384-pkcs8", "openssl genpkey EC P-384 (PKCS#8): another curve, refused",
         openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"), expect="ssh.unsupported-key")
