#!/usr/bin/env python3
"""Writes bitwarden-kinds.json: an unencrypted Bitwarden JSON export (the layout of Bitwarden's
"File > Export vault > .json", 2025: items of type 1 login with login.fido2Credentials, 3 card,
4 identity, 5 SSH key with sshKey.privateKey/publicKey/keyFingerprint) with fresh keys each run.
Run with the venv python of scripts/bootstrap (needs `cryptography`); uses ssh-keygen."""
import base64, json, os, subprocess, tempfile, uuid
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

def b64url(data): return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

def ssh_keygen(kind, passphrase=""):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "k")
        subprocess.run(["ssh-keygen", "-q", "-t", kind, "-N", passphrase, "-C", "deploy@example", "-f", path], check=True)
        private = open(path).read()
        public = open(path + ".pub").read().strip()
        fingerprint = subprocess.run(["ssh-keygen", "-l", "-f", path + ".pub"], check=True, capture_output=True, text=True).stdout.split()[1]
        return private, public, fingerprint

def item(type_, name, **parts):
    base = {"passwordHistory": None, "revisionDate": "2025-03-01T10:00:00.000Z", "creationDate": "2025-02-01T10:00:00.000Z",
            "deletedDate": None, "id": str(uuid.uuid4()), "organizationId": None, "folderId": None, "type": type_,
            "reprompt": 0, "name": name, "notes": None, "favorite": False, "collectionIds": None}
    base.update(parts)
    return base

def fido2(key, credential_id, rp, user, handle):
    return {"credentialId": credential_id, "keyType": "public-key", "keyAlgorithm": "ECDSA", "keyCurve": "P-256",
            "keyValue": b64url(key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())),
            "rpId": rp, "userHandle": b64url(handle), "userName": user, "counter": "0", "rpName": rp, "userDisplayName": user.title(),
            "discoverable": "true", "creationDate": "2025-01-02T03:04:05.678Z"}

openssh, openssh_pub, openssh_fp = ssh_keygen("ed25519")
encrypted, encrypted_pub, encrypted_fp = ssh_keygen("ed25519", passphrase="correct horse")
ec_key = ec.generate_private_key(ec.SECP256R1())
ec_pem = ec_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()).decode()
items = [
    item(1, "webauthn.io", login={"fido2Credentials": [
        fido2(ec.generate_private_key(ec.SECP256R1()), str(uuid.uuid4()), "webauthn.io", "alice", b"alice-handle"),
        fido2(ec.generate_private_key(ec.SECP256R1()), "b64." + b64url(os.urandom(32)), "webauthn.io", "alice2", b"alice2"),
        {"credentialId": "not-a-guid", "keyValue": "AAAA", "rpId": "webauthn.io"}],
        "uris": [{"match": None, "uri": "https://webauthn.io/"}], "username": "alice", "password": "pw", "totp": None}),
    item(3, "Visa", notes="card notes", card={"cardholderName": "Ann Lee", "brand": "Visa", "number": "4111 1111 1111 1111",
                                              "expMonth": "7", "expYear": "2031", "code": "123"}),
    item(4, "Me", identity={"title": "Dr", "firstName": "Ann", "middleName": "Q", "lastName": "Lee", "address1": "1 Road",
                            "address2": "Flat 2", "address3": None, "city": "Town", "state": "Region", "postalCode": "12345",
                            "country": "NZ", "company": "Acme", "email": "ann@example.com", "phone": "+64 1", "ssn": "111-22-3333",
                            "username": "annlee", "passportNumber": "P123", "licenseNumber": "L456"}),
    item(5, "Deploy key", sshKey={"privateKey": openssh, "publicKey": openssh_pub, "keyFingerprint": openssh_fp}),
    item(5, "PEM key", sshKey={"privateKey": ec_pem, "publicKey": "", "keyFingerprint": ""}),
    item(5, "Locked key", sshKey={"privateKey": encrypted, "publicKey": encrypted_pub, "keyFingerprint": encrypted_fp}),
]
json.dump({"encrypted": False, "folders": [], "items": items},
          open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "bitwarden-kinds.json"), "w"), indent=2)
