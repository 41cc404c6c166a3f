#!/usr/bin/env python3
"""Writes keepassxc-passkeys.xml: a KeePassXC-style XML export (the layout of `keepassxc-cli export
-f xml`) with passkey entries as KeePassXC 2.7.7+ stores them (src/browser/BrowserPasskeys.cpp:
KPEX_PASSKEY_* strings, the key as Botan's PKCS#8 PEM, ids base64url without padding). Fresh keys
each run; run with the venv python of scripts/bootstrap (needs `cryptography`)."""
import base64, os, sys
from xml.sax.saxutils import escape
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

def b64url(data): return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
def pem(key): return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()

def entry(uuid, title, url, username, strings, created="2024-03-04T05:06:07Z"):
    out = ["<Entry><UUID>%s</UUID><Times><CreationTime>%s</CreationTime><LastModificationTime>%s</LastModificationTime></Times>" % (uuid, created, created)]
    for key, value in [("Title", title), ("URL", url), ("UserName", username), ("Password", "")] + strings:
        protect = ' ProtectInMemory="True"' if key.startswith("KPEX_PASSKEY_") and key not in ("KPEX_PASSKEY_USERNAME", "KPEX_PASSKEY_RELYING_PARTY") else ""
        out.append("<String><Key>%s</Key><Value%s>%s</Value></String>" % (key, protect, escape(value)))
    out.append("</Entry>")
    return "".join(out)

es = ec.generate_private_key(ec.SECP256R1())
ed = ed25519.Ed25519PrivateKey.generate()
rs = rsa.generate_private_key(public_exponent=65537, key_size=2048)
entries = [
    entry("AAAAAAAAAAAAAAAAAAAAAQ==", "webauthn.io (ES256)", "https://webauthn.io", "alice", [
        ("KPEX_PASSKEY_CREDENTIAL_ID", b64url(bytes(range(1, 17)))), ("KPEX_PASSKEY_PRIVATE_KEY_PEM", pem(es)),
        ("KPEX_PASSKEY_RELYING_PARTY", "webauthn.io"), ("KPEX_PASSKEY_USERNAME", "alice"),
        ("KPEX_PASSKEY_USER_HANDLE", b64url(b"alice-handle")), ("KPEX_PASSKEY_FLAG_BE", "1"), ("KPEX_PASSKEY_FLAG_BS", "1")]),
    entry("AAAAAAAAAAAAAAAAAAAAAg==", "Ed site", "https://ed.example", "bob", [
        ("KPEX_PASSKEY_CREDENTIAL_ID", b64url(bytes(range(32)))), ("KPEX_PASSKEY_PRIVATE_KEY_PEM", pem(ed)),
        ("KPEX_PASSKEY_RELYING_PARTY", "Ed.Example"), ("KPEX_PASSKEY_USERNAME", "bob"),
        ("KPEX_PASSKEY_USER_HANDLE", b64url(b"bob"))]),
    # StrongBox's names: the credential id and user name KeePassXC prefers when present.
    entry("AAAAAAAAAAAAAAAAAAAAAw==", "StrongBox site", "https://sb.example", "carol", [
        ("KPEX_PASSKEY_GENERATED_USER_ID", b64url(b"strongbox-cred-id") + "=="), ("KPEX_PASSKEY_CREDENTIAL_ID", b64url(b"ignored")),
        ("KPEX_PASSKEY_PRIVATE_KEY_PEM", pem(ec.generate_private_key(ec.SECP256R1()))),
        ("KPEX_PASSKEY_RELYING_PARTY", "sb.example"), ("KPXC_PASSKEY_USERNAME", "carol-sb"), ("KPEX_PASSKEY_USERNAME", "carol"),
        ("KPEX_PASSKEY_USER_HANDLE", b64url(b"carol"))]),
    # KeePassXC can make RS256 passkeys; Coffer signs with ES256 and EdDSA only.
    entry("AAAAAAAAAAAAAAAAAAAABA==", "RSA site", "https://rsa.example", "dave", [
        ("KPEX_PASSKEY_CREDENTIAL_ID", b64url(b"rsa-cred")), ("KPEX_PASSKEY_PRIVATE_KEY_PEM", pem(rs)),
        ("KPEX_PASSKEY_RELYING_PARTY", "rsa.example"), ("KPEX_PASSKEY_USERNAME", "dave"),
        ("KPEX_PASSKEY_USER_HANDLE", b64url(b"dave"))]),
]
doc = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<KeePassFile><Meta><Generator>KeePassXC</Generator>'
       '<DatabaseName>Passkeys</DatabaseName></Meta><Root><Group><UUID>AAAAAAAAAAAAAAAAAAAAAA==</UUID><Name>Passwords</Name>'
       + "".join(entries) + "</Group></Root></KeePassFile>\n")
open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "keepassxc-passkeys.xml"), "w").write(doc)
