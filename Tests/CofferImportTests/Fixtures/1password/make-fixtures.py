#!/usr/bin/env python3
"""Writes the 1Password fixtures of OnePasswordTests (README.md here): sample.1pux and sample.1pif.

Every value is made up. The layout follows real 1Password exports (see README.md). Deterministic:
fixed zip timestamps, so running it again gives the same bytes.
"""
import json
import os
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
SEPARATOR = "***5642bee8-a5ff-11dc-8314-0800200c9a66***"


def field(title, fid, value, **extra):
    f = {"title": title, "id": fid, "value": value, "guarded": False, "multiline": False, "dontGenerate": False,
         "inputTraits": {"keyboard": "default", "correction": "default", "capitalization": "default"}}
    f.update(extra)
    return f


def item(uuid, category, title, details, created, updated, state="active", url="", urls=None, tags=None):
    overview = {"subtitle": "", "title": title, "url": url, "ps": 0, "pbe": 0.0, "pgrng": False}
    if urls is not None:
        overview["urls"] = urls
    if tags is not None:
        overview["tags"] = tags
    return {"uuid": uuid, "favIndex": 0, "createdAt": created, "updatedAt": updated, "state": state,
            "categoryUuid": category, "details": details, "overview": overview}


def details(login_fields=None, notes="", sections=None, history=None, **extra):
    d = {"loginFields": login_fields or [], "notesPlain": notes, "sections": sections or [],
         "passwordHistory": history or []}
    d.update(extra)
    return d


login = item(
    "q4fz2mv7xkc3aah5nw6jyt2ble", "001", "Quillmail", created=1700000000, updated=1710000000,
    url="https://mail.quill.example/login",
    urls=[{"label": "", "url": "https://mail.quill.example/login"},
          {"label": "website", "url": "https://quill.example"}],
    tags=["work", "mail"],
    details=details(
        login_fields=[
            {"value": "nora@quill.example", "id": "", "name": "email", "fieldType": "E", "designation": "username"},
            {"value": "Tide-pool-83!", "id": "", "name": "password", "fieldType": "P", "designation": "password"},
            {"value": "", "id": "terms", "name": "terms", "fieldType": "C"},
            {"value": "\u2713", "id": "remember", "name": "remember", "fieldType": "C"},
        ],
        notes="Main mailbox.\nRecovery codes are in the safe.",
        sections=[
            {"title": "Security", "name": "Section_h3kq", "fields": [
                field("PIN", "k7pin", {"concealed": "5092"}),
                field("recovery email", "k7rec", {"email": {"email_address": "nora.backup@quill.example", "provider": None}}),
            ]},
            {"title": "", "name": "add more", "fields": [
                field("one-time password", "TOTP_zz81", {"totp": "otpauth://totp/Quill:nora?secret=MFRGGZDFMZTWQ2LK&issuer=Quill"}),
            ]},
        ],
        history=[{"value": "Tide-pool-82!", "time": 1705000000}, {"value": "Tide-pool-81!", "time": 1701000000}],
    ))

note = item("n2wq8rz4ydm6bbf3kc5ltx7upa", "003", "Gate code", created=1700100000, updated=1700100000,
            details=details(notes="Side gate: 4417#\nGarage: 0982"))

card = item(
    "c8vb3nq5rtw2jjd7hm4fzs6kxe", "002", "Harbor Visa", created=1700200000, updated=1700300000,
    details=details(sections=[
        {"title": "", "name": "", "fields": [
            field("cardholder name", "cardholder", {"string": "Nora Quill"}),
            field("type", "type", {"creditCardType": "visa"}),
            field("number", "ccnum", {"creditCardNumber": "4000 1234 5678 9010"}),
            field("verification number", "cvv", {"concealed": "719"}),
            field("expiry date", "expiry", {"monthYear": 202811}),
            field("valid from", "validFrom", {"monthYear": 202311}),
        ]},
        {"title": "Contact Information", "name": "contactInfo", "fields": [
            field("phone (intl)", "phoneIntl", {"phone": "+44 20 7946 0311"}),
            field("website", "website", {"url": "https://harbor-bank.example"}),
        ]},
    ]))

identity = item(
    "i5ra7mt3kqw8ccg2jn6dvh4ypz", "004", "Nora Quill", created=1700400000, updated=1700400000,
    details=details(notes="Home identity", sections=[
        {"title": "Identification", "name": "name", "fields": [
            field("first name", "firstname", {"string": "Nora"}),
            field("last name", "lastname", {"string": "Quill"}),
            field("sex", "sex", {"menu": "female"}),
            field("birth date", "birthdate", {"date": 643334400}),
        ]},
        {"title": "Address", "name": "address", "fields": [
            field("address", "address", {"address": {"street": "7 Lantern Walk", "city": "Port Ellery",
                                                      "country": "gb", "zip": "PE1 2QX", "state": "Kestershire"}}),
        ]},
    ]))

password = item("p3ty6ks9vbn2ddh5qm8wrf4lza", "005", "Boat shed lock", created=1700500000, updated=1700600000,
                details=details(password="anchor-Rope-27",
                                history=[{"value": "anchor-Rope-26", "time": 1700550000}]))

document = item(
    "d7kw2qp5mzr9eej4tn3cvb8hxa", "006", "Mooring permit", created=1700700000, updated=1700700000,
    details=details(notes="Renew every March.",
                    documentAttributes={"fileName": "permit.pdf", "documentId": "m4xq7zt2kdw9f",
                                        "decryptedSize": 24}))

archived = item(
    "a9mh4xw6qtz3ffk8rp2ndj5cvb", "001", "Old forum", created=1600000000, updated=1650000000, state="archived",
    url="https://forum.quill.example",
    details=details(login_fields=[
        {"value": "nquill", "id": "", "name": "username", "fieldType": "T", "designation": "username"},
        {"value": "Forum-pass-5", "id": "", "name": "password", "fieldType": "P", "designation": "password"},
    ]))

ssh = item(
    "s4nd8vq2xkt7ggm3wz6hrb5jpy", "114", "Build server key", created=1700800000, updated=1700800000,
    details=details(sections=[
        {"title": "", "name": "", "fields": [
            field("private key", "private_key", {"sshKey": {
                "privateKey": "-----BEGIN OPENSSH PRIVATE KEY-----\nbWFkZS11cCBrZXk=\n-----END OPENSSH PRIVATE KEY-----\n",
                "metadata": {"privateKey": "(same key)", "publicKey": "ssh-ed25519 AAAAmadeup",
                             "fingerprint": "SHA256:madeup", "keyType": "ed25519"}}}),
        ]},
    ]))

export_data = {"accounts": [{
    "attrs": {"accountName": "Nora Quill", "name": "Nora Quill", "avatar": "", "email": "nora@quill.example",
              "uuid": "NQ5XW2ZK7TRMB4HD3JP6CVLY8E", "domain": "https://my.1password.example/"},
    "vaults": [
        {"attrs": {"uuid": "v6kp3mq8wzt2hhr5", "desc": "", "avatar": "", "name": "Personal", "type": "P"},
         "items": [login, note, card, identity, password, document, archived]},
        {"attrs": {"uuid": "v2dn7xr4qkm9jjs3", "desc": "Shared with the crew", "avatar": "", "name": "Crew", "type": "U"},
         "items": [ssh]},
    ]}]}
export_attributes = {"version": 3, "description": "1Password Unencrypted Export", "createdAt": 1710000100}


def write_zip(path, entries):
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=(2024, 3, 9, 16, 1, 40))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, data)


write_zip(os.path.join(HERE, "sample.1pux"), [
    ("export.attributes", json.dumps(export_attributes)),
    ("export.data", json.dumps(export_data, ensure_ascii=False, indent=2)),
    ("files/m4xq7zt2kdw9f__permit.pdf", b"%PDF-1.4 made-up permit\n"),
    ("files/x9orphan2k__leftover.txt", b"no item refers to me\n"),
])

# ---- 1PIF: the same kinds, plus folders, a trashed item and a deleted one (system.Tombstone).
def entry(uuid, type_name, title, created, updated, secure, folder=None, location="", tags=None, **extra):
    e = {"uuid": uuid, "typeName": type_name, "title": title, "location": location, "locationKey": "",
         "createdAt": created, "updatedAt": updated, "txTimestamp": updated, "securityLevel": "SL5",
         "contentsHash": "0badc0de", "secureContents": secure}
    if folder:
        e["folderUuid"] = folder
    if tags is not None:
        e["openContents"] = {"tags": tags}
    e.update(extra)
    return e


pif = [
    entry("F1A2B3C4D5E6F708192A3B4C5D6E7F80", "system.folder.Regular", "Work", 1600000000, 1600000000, {},
          trashed=False),
    entry("2B3C4D5E6F708192A3B4C5D6E7F8091A", "webforms.WebForm", "Quillmail", 1700000000, 1710000000, {
        "URLs": [{"url": "https://mail.quill.example/login", "label": ""}, {"url": "https://quill.example", "label": "website"}],
        "fields": [
            {"type": "T", "id": "username", "name": "username", "value": "nora@quill.example", "designation": "username"},
            {"type": "P", "id": "password", "name": "password", "value": "Tide-pool-83!", "designation": "password"},
            {"type": "T", "id": "pin", "name": "pin", "value": "5092"},
            {"type": "C", "id": "remember", "name": "remember", "value": ""},
        ],
        "notesPlain": "Main mailbox.",
        "sections": [
            {"title": "Security", "name": "sec1", "fields": [
                {"k": "concealed", "n": "TOTP_7Q2", "t": "one-time password",
                 "v": "otpauth://totp/Quill:nora?secret=MFRGGZDFMZTWQ2LK&issuer=Quill"},
                {"k": "string", "n": "q1", "t": "first pet", "v": "Biscuit"},
            ]},
            {"title": "Related Items", "name": "linked items"},
        ],
        "passwordHistory": [{"value": "Tide-pool-81!", "time": 1701000000}, {"value": "Tide-pool-82!", "time": 1705000000}],
    }, folder="9A8B7C6D5E4F30211203F4E5D6C7B8A9", location="https://mail.quill.example/login", tags=["work", "mail"],
        openContents={"tags": ["work", "mail"], "autosubmit": "default"}),
    entry("3C4D5E6F708192A3B4C5D6E7F8091A2B", "securenotes.SecureNote", "Gate code", 1700100000, 1700100000,
          {"notesPlain": "Side gate: 4417#\nGarage: 0982"}),
    entry("4D5E6F708192A3B4C5D6E7F8091A2B3C", "wallet.financial.CreditCard", "Harbor Visa", 1700200000, 1700300000, {
        "cardholder": "Nora Quill", "ccnum": "4000123456789010",
        "sections": [
            {"title": "", "name": "", "fields": [
                {"k": "string", "n": "cardholder", "t": "cardholder name", "v": "Nora Quill"},
                {"k": "cctype", "n": "type", "t": "type", "v": "visa"},
                {"k": "string", "n": "ccnum", "t": "number", "v": "4000123456789010"},
                {"k": "concealed", "n": "cvv", "t": "verification number", "v": "719"},
                {"k": "monthYear", "n": "expiry", "t": "expiry date", "v": 202811},
            ]},
            {"title": "Contact Information", "name": "contactInfo", "fields": [
                {"k": "phone", "n": "phoneIntl", "t": "phone (intl)", "v": "+44 20 7946 0311"},
            ]},
        ]}),
    entry("5E6F708192A3B4C5D6E7F8091A2B3C4D", "identities.Identity", "Nora Quill", 1700400000, 1700400000, {
        "sections": [
            {"title": "Identification", "name": "name", "fields": [
                {"k": "string", "n": "firstname", "t": "first name", "v": "Nora"},
                {"k": "date", "n": "birthdate", "t": "birth date", "v": 643334400},
            ]},
            {"title": "Address", "name": "address", "fields": [
                {"k": "address", "n": "address", "t": "address",
                 "v": {"street": "7 Lantern Walk", "city": "Port Ellery", "state": "Kestershire", "zip": "PE1 2QX", "country": "gb"}},
            ]},
        ]}),
    entry("6F708192A3B4C5D6E7F8091A2B3C4D5E", "passwords.Password", "Boat shed lock", 1700500000, 1700600000,
          {"password": "anchor-Rope-27", "notesPlain": ""}),
    entry("708192A3B4C5D6E7F8091A2B3C4D5E6F", "wallet.computer.License", "Chartplotter Pro", 1700650000, 1700650000, {
        "product_version": "4.2", "reg_code": "CHP-7781-QX",
        "sections": [{"title": "", "name": "", "fields": [
            {"k": "string", "n": "product_version", "t": "version", "v": "4.2"},
            {"k": "string", "n": "reg_code", "t": "license key", "v": "CHP-7781-QX"},
        ]}]}),
    entry("8192A3B4C5D6E7F8091A2B3C4D5E6F70", "webforms.WebForm", "Old forum", 1600000000, 1650000000, {
        "URLs": [{"url": "https://forum.quill.example"}],
        "fields": [
            {"type": "T", "name": "username", "value": "nquill", "designation": "username"},
            {"type": "P", "name": "password", "value": "Forum-pass-5", "designation": "password"},
        ]}, trashed=True),
    entry("92A3B4C5D6E7F8091A2B3C4D5E6F7081", "system.Tombstone", "Deleted item", 1600000000, 1660000000, {}),
    entry("9A8B7C6D5E4F30211203F4E5D6C7B8A9", "system.folder.Regular", "Mail", 1600000000, 1600000000, {},
          folder="F1A2B3C4D5E6F708192A3B4C5D6E7F80", trashed=False),
]
with open(os.path.join(HERE, "sample.1pif"), "w", encoding="utf-8") as f:
    for e in pif:
        f.write(json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n" + SEPARATOR + "\n")

# ---- Damaged archives for the whole-file checks.
import io
import struct
import zlib


def zip_bytes(entries, compress=zipfile.ZIP_DEFLATED):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=(2024, 3, 9, 16, 1, 40))
            info.compress_type = compress
            z.writestr(info, data)
    return bytearray(buffer.getvalue())


def patch_sizes(data, name, uncompressed):
    """Rewrites the declared uncompressed size of entry `name` in its local and central headers."""
    # (signature, offset of the name length, offset of the name, offset of the uncompressed size)
    for signature, length_at, name_at, size_at in ((b"PK\x03\x04", 26, 30, 22), (b"PK\x01\x02", 28, 46, 24)):
        i = data.find(signature)
        while i >= 0:
            n = struct.unpack_from("<H", data, i + length_at)[0]
            if data[i + name_at:i + name_at + n] == name.encode():
                struct.pack_into("<I", data, i + size_at, uncompressed)
            i = data.find(signature, i + 4)
    return data


small = json.dumps({"accounts": []})
with open(os.path.join(HERE, "no-export-data.1pux"), "wb") as f:
    f.write(zip_bytes([("export.attributes", json.dumps(export_attributes)), ("files/a__b.txt", "x")]))
# A 2 GiB export.data declared in the headers (a zip bomb announces itself this way).
with open(os.path.join(HERE, "declared-huge.1pux"), "wb") as f:
    f.write(patch_sizes(zip_bytes([("export.data", small)]), "export.data", 0x80000000))
# 1 MiB of zeros (about 1 KiB deflated) under headers that declare 100 bytes: a bomb that lies.
with open(os.path.join(HERE, "inflates-past-declared.1pux"), "wb") as f:
    f.write(patch_sizes(zip_bytes([("export.data", b"\0" * (1 << 20))]), "export.data", 100))
