#!/usr/bin/env python3
"""Writes spec/vectors/passkeys/ from fixed keys and inputs, with an implementation that is not
Coffer's: cbor2 (canonical) for the CBOR, pyca/cryptography for the keys and the Ed25519
signature, hashlib for SHA-256. Run with the venv scripts/bootstrap makes:
    .build-py/venv/bin/python scripts/gen-passkey-vectors.py
Tests/CofferTests/Passkeys/PasskeyVectorTests.swift checks Coffer against every file."""
import base64
import hashlib
import os

import cbor2
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

OUT = os.path.join(os.path.dirname(__file__), "..", "spec", "vectors", "passkeys")


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def scenario(name, title, key, rp_id, origin, credential_id, user_handle, challenge):
    pkcs8 = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    public = key.public_key()
    spki = public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    if isinstance(key, ec.EllipticCurvePrivateKey):
        n = public.public_numbers()
        cose = {1: 2, 3: -7, -1: 1, -2: n.x.to_bytes(32, "big"), -3: n.y.to_bytes(32, "big")}
        algorithm = -7
    else:
        cose = {1: 1, 3: -8, -1: 6, -2: public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)}
        algorithm = -8
    cose = cbor2.dumps(cose, canonical=True)
    rp_hash = hashlib.sha256(rp_id.encode()).digest()
    registration = rp_hash + bytes([0x5D]) + bytes(4) + bytes(16) + len(credential_id).to_bytes(2, "big") + credential_id + cose
    attestation = cbor2.dumps({"fmt": "none", "attStmt": {}, "authData": registration}, canonical=True)
    create = '{"type":"webauthn.create","challenge":"%s","origin":"%s","crossOrigin":false}' % (b64url(challenge), origin)
    assertion = rp_hash + bytes([0x1D]) + bytes(4)
    get = '{"type":"webauthn.get","challenge":"%s","origin":"%s","crossOrigin":false}' % (b64url(challenge), origin)
    lines = [
        "# %s" % title,
        "# Written by scripts/gen-passkey-vectors.py (cbor2 and pyca/cryptography, not Coffer);",
        "# checked by Tests/CofferTests/Passkeys/PasskeyVectorTests.swift (spec/passkeys.md §9).",
        "",
        "algorithm: %d" % algorithm,
        "pkcs8: %s" % pkcs8.hex(),
        "rp-id: %s" % rp_id,
        "origin: %s" % origin,
        "credential-id: %s" % credential_id.hex(),
        "user-handle: %s" % user_handle.hex(),
        "challenge: %s" % challenge.hex(),
        "public-key-cose: %s" % cose.hex(),
        "public-key-spki: %s" % spki.hex(),
        "registration-authenticator-data: %s" % registration.hex(),
        "attestation-object: %s" % attestation.hex(),
        "create-client-data-json: %s" % create,
        "assertion-authenticator-data: %s" % assertion.hex(),
        "get-client-data-json: %s" % get,
    ]
    if algorithm == -8:  # Ed25519 is deterministic: the exact signature
        signature = key.sign(assertion + hashlib.sha256(get.encode()).digest())
        lines.append("signature: %s" % signature.hex())
    with open(os.path.join(OUT, name), "w") as f:
        f.write("\n".join(lines) + "\n")


scalar = int.from_bytes(hashlib.sha256(b"coffer passkey vector es256").digest(), "big")
scenario("001-es256-registration-and-assertion.txt",
         "ES256 (P-256) passkey for example.com, used from a subdomain's origin.",
         ec.derive_private_key(scalar, ec.SECP256R1()), "example.com", "https://login.example.com",
         bytes(range(0x10, 0x20)), b"user-0001", hashlib.sha256(b"challenge 1").digest())
scenario("002-ed25519-registration-and-assertion.txt",
         "EdDSA (Ed25519) passkey for example.com, the origin's own host; the signature is exact.",
         ed25519.Ed25519PrivateKey.from_private_bytes(hashlib.sha256(b"coffer passkey vector ed25519").digest()),
         "example.com", "https://example.com", bytes(range(0xA0, 0xB0)), bytes(range(64)),
         hashlib.sha256(b"challenge 2").digest())
scenario("003-ed25519-localhost.txt",
         "EdDSA passkey for localhost over http with a port, the one http origin allowed.",
         ed25519.Ed25519PrivateKey.from_private_bytes(bytes(range(32))), "localhost", "http://localhost:8080",
         bytes([7]) * 32, b"\x01", b"\xff" * 16)

# A passkey as Bitwarden's JSON export keeps it (an item's login.fido2Credentials[0]): the key as
# base64url PKCS#8 (WebCrypto's exportKey("pkcs8"), with the public key), the credential id as a
# GUID. `expected-spki` is the public key pyca/cryptography derives from it.
bitwarden_key = ec.derive_private_key(int.from_bytes(hashlib.sha256(b"coffer passkey vector bitwarden").digest(), "big"),
                                      ec.SECP256R1())
bitwarden_pkcs8 = bitwarden_key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                                              serialization.NoEncryption())
credential = {
    "credentialId": "6f3a9c1e-52d4-4b8a-9e07-3c5d2a1b8f40",
    "keyType": "public-key",
    "keyAlgorithm": "ECDSA",
    "keyCurve": "P-256",
    "keyValue": b64url(bitwarden_pkcs8),
    "rpId": "webauthn.io",
    "userHandle": b64url(b"bitwarden-user-handle"),
    "userName": "alice",
    "counter": "0",
    "rpName": "webauthn.io",
    "userDisplayName": "Alice",
    "discoverable": "true",
    "creationDate": "2025-01-02T03:04:05.678Z",
}
import json  # noqa: E402
with open(os.path.join(OUT, "004-bitwarden-fido2-credential.json"), "w") as f:
    json.dump({"comment": "A Bitwarden export's login.fido2Credentials entry (spec/passkeys.md §4.2); written by "
                          "scripts/gen-passkey-vectors.py, checked by PasskeyVerifierTests and PasskeyVectorTests.",
               "origin": "https://webauthn.io",
               "fido2Credential": credential,
               "expected-spki": b64url(bitwarden_key.public_key().public_bytes(
                   serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo))},
              f, indent=2, sort_keys=True)
    f.write("\n")
