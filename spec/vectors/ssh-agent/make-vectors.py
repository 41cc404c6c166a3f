#!/usr/bin/env python3
"""Writes the vectors of spec/ssh.md §9: the encoding of a key's use settings (extension field
129) and host-pattern matching against known-hosts files, whose hashed lines are made by the real
`ssh-keygen -H` (OpenSSH 9.2). Run once; the vectors are then fixed files (re-running makes new
host keys). One scenario a file: use/NNN-name.json and known-hosts/NNN-name.json."""
import base64, json, os, subprocess, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def write(folder, name, body):
    os.makedirs(os.path.join(HERE, folder), exist_ok=True)
    with open(os.path.join(HERE, folder, name + ".json"), "w") as f:
        json.dump(body, f, indent=2, ensure_ascii=False)
        f.write("\n")


def use_value(flags, hosts):
    out = bytes([flags, len(hosts)])
    for h in hosts:
        out += bytes([len(h)]) + h.encode()
    return out


def use(name, value, expect, **settings):
    body = {"description": name.split("-", 1)[1].replace("-", " "), "value": value.hex(), "expect": expect}
    body.update(settings)
    write("use", name, body)


use("001-defaults-written-out", use_value(0, []), "ok", hosts=[], confirm=False, signOnly=False, allowSHA1=False)
use("002-every-flag-and-two-hosts", use_value(7, ["github.com", "[10.0.0.2]:2222"]), "ok",
    hosts=["github.com", "[10.0.0.2]:2222"], confirm=True, signOnly=True, allowSHA1=True)
use("003-glob-host", use_value(1, ["*.example.org"]), "ok", hosts=["*.example.org"], confirm=True, signOnly=False, allowSHA1=False)
use("004-unknown-flag-bit", use_value(8, []), "ssh.malformed-key")
use("005-count-overruns", bytes([0, 2, 3]) + b"abc", "ssh.malformed-key")
use("006-bytes-left-over", use_value(0, ["a.b"]) + b"\x00", "ssh.malformed-key")
use("007-upper-case-pattern", use_value(0, ["GitHub.com"]), "ssh.malformed-key")
use("008-empty-pattern", bytes([0, 1, 0]), "ssh.malformed-key")
use("009-space-in-pattern", use_value(0, ["a b"]), "ssh.malformed-key")
use("010-too-short", bytes([0]), "ssh.malformed-key")
use("011-thirty-three-hosts", use_value(0, [f"h{i}.example" for i in range(33)]), "ssh.malformed-key")

with tempfile.TemporaryDirectory() as tmp:
    def hostkey(n):
        path = os.path.join(tmp, f"host{n}")
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "", "-f", path], check=True)
        return open(path + ".pub").read().split()[:2]

    (t1, k1), (t2, k2), (t3, k3) = hostkey(1), hostkey(2), hostkey(3)

    def known(name, lines, hostkey_b64, cases, hashed=False):
        text = "".join(l + "\n" for l in lines)
        if hashed:
            path = os.path.join(tmp, name)
            open(path, "w").write(text)
            subprocess.run(["ssh-keygen", "-q", "-H", "-f", path], check=True, capture_output=True)
            text = open(path).read()
        write("known-hosts", name, {"description": name.split("-", 1)[1].replace("-", " "), "knownHosts": text,
                                    "hostKey": hostkey_b64, "cases": [{"pattern": p, "match": m} for p, m in cases]})

    known("001-plain-names", [f"github.com,140.82.121.4 {t1} {k1}", f"gitlab.com {t2} {k2}"], k1,
          [("github.com", True), ("140.82.121.4", True), ("gitlab.com", False), ("*.com", True), ("git*", True),
           ("github.co", False), ("[github.com]:22", True), ("[github.com]:2222", False)])
    known("002-port", [f"[127.0.0.1]:2222 {t1} {k1}"], k1,
          [("127.0.0.1", True), ("[127.0.0.1]:2222", True), ("[127.0.0.1]:22", False), ("127.0.0.2", False)])
    known("003-wildcard-in-file", [f"*.corp.example {t1} {k1}"], k1,
          [("git.corp.example", True), ("*.corp.example", True), ("corp.example", False)])
    known("004-negation", [f"*.example.org,!secret.example.org {t1} {k1}"], k1,
          [("www.example.org", True), ("secret.example.org", False), ("*.example.org", False)])
    known("005-revoked", [f"github.com {t1} {k1}", f"@revoked * {t1} {k1}"], k1, [("github.com", False), ("*", False)])
    known("006-cert-authority-is-no-host-key", [f"@cert-authority *.example.org {t1} {k1}"], k1, [("www.example.org", False)])
    known("007-other-host-key", [f"github.com {t2} {k2}"], k1, [("github.com", False)])
    known("008-hashed-by-ssh-keygen", [f"github.com {t1} {k1}", f"[10.0.0.2]:2222 {t1} {k1}", f"other.example {t3} {k3}"], k1,
          [("github.com", True), ("[10.0.0.2]:2222", True), ("10.0.0.2", False), ("*.com", False), ("other.example", False)],
          hashed=True)
    known("009-comments-blank-and-garbage-lines", ["# a comment", "", "not a known hosts line", f"github.com {t1} !!notbase64",
                                                   f"github.com {t1} {k1} a comment"], k1, [("github.com", True)])
    known("010-case-folded", [f"GitHub.COM {t1} {k1}"], k1, [("github.com", True)])
