#!/usr/bin/env python3
"""An independent relying party for Coffer's passkeys (spec/passkeys.md §9): py_webauthn
(PyPI `webauthn`, installed by scripts/bootstrap into .build-py/venv) verifies what Coffer made.

Reads one JSON object on stdin:
  {"origin": "https://…", "rpId": "…",
   "registration": {"challenge": b64url, "response": RegistrationResponseJSON},      (optional)
   "assertion":    {"challenge": b64url, "response": AuthenticationResponseJSON},    (optional)
   "pkcs8": b64url}                                                                   (optional)
With a registration, it is verified (fmt none, zero AAGUID, counter 0, user verified, backed up,
the response's publicKey the same key as the attested one) and its public key verifies the
assertion. Without one, the assertion is verified with the public key this script derives itself
from `pkcs8` (the Bitwarden-import case). Prints a JSON summary; any failure: a message on stderr
and exit status 1.
"""
import base64
import json
import sys

import cbor2
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from webauthn import verify_authentication_response, verify_registration_response
from webauthn.helpers.decode_credential_public_key import decode_credential_public_key as parse_cose_key
from webauthn.helpers.structs import CredentialDeviceType


def b64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def cose_from_public_key(key):
    """The COSE_Key of a public key, built here from the key's own numbers."""
    if isinstance(key, ec.EllipticCurvePublicKey):
        numbers = key.public_numbers()
        return cbor2.dumps({1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")})
    if isinstance(key, ed25519.Ed25519PublicKey):
        raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        return cbor2.dumps({1: 1, 3: -8, -1: 6, -2: raw})
    raise ValueError("unexpected key type %r" % type(key))


def fail(message):
    print("webauthn-verify: REFUSED: " + message, file=sys.stderr)
    sys.exit(1)


def main():
    case = json.load(sys.stdin)
    origin, rp_id = case["origin"], case["rpId"]
    summary = {}
    public_key = None
    if "registration" in case:
        registration = case["registration"]
        try:
            verified = verify_registration_response(
                credential=registration["response"],
                expected_challenge=b64url(registration["challenge"]),
                expected_rp_id=rp_id,
                expected_origin=origin,
                require_user_verification=True,
            )
        except Exception as error:  # py_webauthn raises its own exception classes
            fail("registration: %s: %s" % (type(error).__name__, error))
        fmt = getattr(verified.fmt, "value", verified.fmt)  # an enum or its text, by version
        if fmt != "none":
            fail("registration: attestation format %s, not none" % fmt)
        if verified.aaguid != "00000000-0000-0000-0000-000000000000":
            fail("registration: AAGUID %s is not zero" % verified.aaguid)
        if verified.sign_count != 0:
            fail("registration: sign count %d is not 0" % verified.sign_count)
        if not verified.user_verified or not verified.credential_backed_up:
            fail("registration: not user-verified or not backed up")
        if verified.credential_device_type != CredentialDeviceType.MULTI_DEVICE:
            fail("registration: not a multi-device (synced) credential")
        response = registration["response"]
        if verified.credential_id != b64url(response["rawId"]) or response["id"] != response["rawId"]:
            fail("registration: credential id differs between id, rawId and the authenticator data")
        spki = serialization.load_der_public_key(b64url(response["response"]["publicKey"]))
        if parse_cose_key(cose_from_public_key(spki)) != parse_cose_key(verified.credential_public_key):
            fail("registration: the response's publicKey is not the attested key")
        if response["response"]["publicKeyAlgorithm"] != parse_cose_key(verified.credential_public_key).alg:
            fail("registration: publicKeyAlgorithm differs from the attested key's")
        public_key = verified.credential_public_key
        summary["registration"] = {"fmt": fmt, "aaguid": verified.aaguid,
                                   "credentialId": response["id"], "signCount": verified.sign_count}
    if "pkcs8" in case:
        private_key = serialization.load_der_private_key(b64url(case["pkcs8"]), password=None)
        derived = cose_from_public_key(private_key.public_key())
        if public_key is not None and parse_cose_key(derived) != parse_cose_key(public_key):
            fail("the PKCS#8 key's public key is not the attested one")
        public_key = derived
    if "assertion" in case:
        if public_key is None:
            fail("an assertion needs a registration or a pkcs8 key to verify it with")
        assertion = case["assertion"]
        try:
            verified = verify_authentication_response(
                credential=assertion["response"],
                expected_challenge=b64url(assertion["challenge"]),
                expected_rp_id=rp_id,
                expected_origin=origin,
                credential_public_key=public_key,
                credential_current_sign_count=0,
                require_user_verification=True,
            )
        except Exception as error:
            fail("assertion: %s: %s" % (type(error).__name__, error))
        if verified.new_sign_count != 0 or not verified.credential_backed_up:
            fail("assertion: sign count not 0 or not backed up")
        summary["assertion"] = {"credentialId": assertion["response"]["id"], "signCount": verified.new_sign_count,
                                "userVerified": verified.user_verified}
    if not summary:
        fail("nothing to verify")
    print(json.dumps(summary, sort_keys=True))


if __name__ == "__main__":
    main()
