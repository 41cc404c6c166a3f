#!/usr/bin/env python3
"""Builds the seed corpora in Fuzz/Corpus/<Target>/ from the spec vectors (spec/vectors/) and
from item encodings written here straight from spec/format.md §6. Deterministic; re-run after
the vectors change. Files merged in by `Fuzz/run.sh --merge` (named by their SHA-1) are kept."""
import json
import os, re, struct, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "Fuzz", "Corpus")


def write(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# --- items (spec/format.md §6) -------------------------------------------------------------
def field(tag, value):
    return struct.pack("<BI", tag, len(value)) + value


def item(kind, ident, fields, created=1767225600000, modified=None):
    modified = created if modified is None else modified
    body = b"".join(field(t, v) for t, v in fields)
    return struct.pack("<BB", 1, kind) + ident + struct.pack("<qqH", created, modified, len(fields)) + body


def custom(name, value):
    return struct.pack("<H", len(name)) + name + value


def history(ms, password):
    return struct.pack("<q", ms) + password


ITEMS = {
    "title-only": item(1, bytes(range(16)), [(1, b"example")]),
    "login": item(1, bytes([0x11] * 16), [(1, b"github"), (2, b"me@example.com"), (3, b"hunter2"),
                                          (4, b"https://github.com/login"), (6, b"work")]),
    "all-fields": item(1, bytes([0x22] * 16), [
        (1, "Zürich Café ☕".encode()), (2, "jürgen".encode()), (3, "Grüße-🔑".encode()),
        (4, b"https://a.example"), (4, b"https://b.example"), (5, b"line one\nline \"two\", with comma"),
        (6, b"Root/Work"), (6, "ünïcode".encode()), (7, custom(b"PIN", b"0000")), (7, custom(b"", b"")),
        (8, history(1767225599999, b"old")), (8, history(-1, b""))], modified=1767225600005),
    "secure-note": item(2, bytes([0x33] * 16), [(1, b"Wi-Fi"), (6, b"home"), (9, "hunter2 ☕".encode())]),
    "empty-values": item(1, bytes(16), [(1, b""), (2, b""), (3, b""), (5, b"")], created=-5, modified=0),
}

def passkey(rp, cred, handle, name, display, alg, created, key, ext=b""):
    def f(b):
        return struct.pack("<I", len(b)) + b
    return f(rp) + f(cred) + f(handle) + f(name) + f(display) + bytes([alg]) + struct.pack("<q", created) + f(key) + f(ext)


# Format 2.0 (spec/format.md §6.3): a card, an identity, an SSH key, passkeys.
ED25519_PKCS8 = bytes.fromhex("302e020100300506032b657004220420") + bytes(range(32))
ITEMS["card"] = item(3, bytes([0x66] * 16), [(1, b"Travel"), (10, b"Ada"), (11, b"4111 1111 1111 1111"), (12, b"7"),
                                             (13, b"2031"), (14, b"123"), (15, b"4321"), (16, b"Visa")])
ITEMS["identity"] = item(4, bytes([0x77] * 16), [(1, b"Me"), (2, b"ada")] + [(t, ("v%d" % t).encode()) for t in range(20, 37)])
ITEMS["ssh-key"] = item(5, bytes([0x88] * 16), [(1, b"laptop"), (40, b"-----BEGIN OPENSSH PRIVATE KEY-----\n...\n")])
ITEMS["passkeys"] = item(1, bytes([0x99] * 16), [(1, b"site"), (3, b"pw"),
                                                 (50, passkey(b"example.com", bytes(16), b"\x01\x02", b"u", b"U", 2, 1767225600000, ED25519_PKCS8)),
                                                 (50, passkey(b"example.com", bytes([1] * 20), b"", b"", b"", 1, 0, b"\x30\x00", b'{"credBlob":"AA"}'))])
# Format 2.1 (spec/files.md §2.1): files, tag 60 (file_id, sha256, size, created, name, media type).
def file_field(ident, sha, size, name, media=b"application/pdf", created=1767229200000):
    return ident + sha + struct.pack("<Qq", size, created) + struct.pack("<I", len(name)) + name + struct.pack("<I", len(media)) + media


ITEMS["files"] = item(1, bytes([0xBB] * 16), [(1, b"passport"), (3, b"pw"),
                                              (60, file_field(bytes([1] * 16), bytes(range(32)), 40000, b"scan.pdf")),
                                              (60, file_field(bytes([2] * 16), bytes([7] * 32), 0, "résumé.txt".encode(), b""))])
ITEMS["file-name-overrun"] = item(1, bytes([0xCC] * 16), [(1, b"t"), (60, file_field(bytes(16), bytes(32), 3, b"a.pdf")[:-3])])
ITEMS["passkey-overrun"] = item(1, bytes([0xAA] * 16), [(1, b"site"), (50, passkey(b"e", b"\x01", b"", b"", b"", 2, 0, b"")[:-1])])
# A few malformed ones: the decoder's error paths.
ITEMS["bad-order"] = item(1, bytes([0x44] * 16), [(1, b"t"), (3, b"p"), (2, b"u")])
ITEMS["bad-utf8"] = item(1, bytes([0x55] * 16), [(1, b"\xc3\x28")])
ITEMS["trailing"] = ITEMS["title-only"] + b"\x00"

for name, data in ITEMS.items():
    write("FuzzItemDecoder", name, data)

# --- vault files: the format vectors ---------------------------------------------------------
vectors = os.path.join(ROOT, "spec", "vectors", "format")
for name in sorted(os.listdir(vectors)):
    if not name.endswith(".vector"):
        continue
    data = open(os.path.join(vectors, name), "rb").read()
    split = data.index(b"\n\n")
    write("FuzzVaultReader", name[:-len(".vector")], data[split + 2:])

# --- record plaintexts for FuzzVaultRecords (input format: Fuzz/Support/VaultHarness.swift) ---
def rec(control, data):
    return struct.pack("<BH", control, len(data)) + data


def padded(t, payload, pad=None):
    plain = struct.pack("<BI", t, len(payload)) + payload
    size = max(256, (len(payload) + 5 + 127) // 128 * 128)
    return plain + (pad if pad is not None else bytes(size - len(plain)))


login, note = ITEMS["login"], ITEMS["secure-note"]
import hashlib
BLOB = bytes((i * 31 + 7) & 0xFF for i in range(9000))  # padded 9,216: chunks of 4,096, 4,096, 1,024
WITH_FILE = item(1, bytes([0xDD] * 16), [(1, b"scan"), (60, file_field(bytes([3] * 16), hashlib.sha256(BLOB).digest(), len(BLOB), b"scan.pdf"))])
SHARED = item(2, bytes([0xDE] * 16), [(1, b"copy"), (60, file_field(bytes([4] * 16), hashlib.sha256(BLOB).digest(), len(BLOB), b"copy.pdf"))])
WRONG_SIZE = item(1, bytes([0xDF] * 16), [(1, b"t"), (60, file_field(bytes([5] * 16), hashlib.sha256(BLOB).digest(), len(BLOB) + 1, b"x"))])
RECORDS = {
    "one-put": b"\x00" + rec(0, login),
    "many-puts": b"\x00" + b"".join(rec(0, v) for k, v in ITEMS.items() if k in ("title-only", "login", "all-fields", "secure-note")),
    "put-delete": b"\x00" + rec(0, login) + rec(0, note) + rec(1, login[2:18]),
    "batch": b"\x00" + rec(0, note) + rec(2, struct.pack("<I", 2)) + rec(0, login) + rec(0, ITEMS["all-fields"]),
    "unfinished-batch": b"\x00" + rec(2, struct.pack("<I", 3)) + rec(0, login),
    "torn-tail": b"\x19" + rec(0, login) + rec(0, note),
    "zero-tail": b"\x90" + rec(0, login),
    "minor-1": b"\x00" + rec(4, login),
    "raw-plaintext": b"\x00" + rec(3, padded(1, login)),
    "raw-bad-padding": b"\x00" + rec(3, padded(1, login)[:-1] + b"\x5a"),
    "raw-unknown-type": b"\x00" + rec(3, padded(9, login)),
    "raw-short": b"\x00" + rec(3, b"\x01" + bytes(100)),
    "malformed-item": b"\x00" + rec(0, ITEMS["bad-order"]),
    "bad-tombstone": b"\x00" + rec(1, b"\x01\x02\x03"),
    # Format 2.1 (spec/files.md §4): a run record (type 4) in a record frame, an end record
    # (type 5) with no blob open, and a put naming content no blob holds: each malformed item.
    "raw-run-record": b"\x00" + rec(0, login) + rec(3, padded(4, bytes([0xB1] * 16) + struct.pack("<BIIQ", 12, 0, 1, 256))),
    "raw-end-record": b"\x00" + rec(0, login) + rec(3, padded(5, bytes([0xB1] * 16) + struct.pack("<Q", 100) + bytes(32))),
    "put-file-absent": b"\x00" + rec(0, ITEMS["files"]),
    # control & 8: a blob of the bytes (spec/files.md §4), 4 KiB chunks, counted as one batch member.
    "attach": b"\x00" + rec(0, login) + rec(2, struct.pack("<I", 2)) + rec(8, BLOB) + rec(0, WITH_FILE),
    "attach-torn-in-chunks": bytes([100]) + rec(0, login) + rec(2, struct.pack("<I", 2)) + rec(8, BLOB),
    "blob-alone-then-put": b"\x00" + rec(8, BLOB) + rec(0, WITH_FILE) + rec(0, note),
    "blob-alone-torn": bytes([30]) + rec(0, login) + rec(8, BLOB),
    "blob-twice-shared": b"\x00" + rec(8, BLOB) + rec(8, BLOB) + rec(0, WITH_FILE) + rec(0, SHARED),
    "blob-size-lies": b"\x00" + rec(8, BLOB) + rec(0, WRONG_SIZE),
    "empty": b"\x00",
    # The first record's control & 16: the tail's cut bytes read as zeros instead, the file keeping
    # its size (spec/format.md §7 step 9's zeroed tail): zeros over a frame's last 100 bytes (torn),
    # over its last 12 (the residual: record corrupted), and into an attach's chunks and its put.
    "zeroed-tail": bytes([25]) + rec(16, login) + rec(0, note),
    "zeroed-last-12": bytes([3]) + rec(16, login) + rec(0, note),
    "zeroed-attach": bytes([120]) + rec(16, login) + rec(2, struct.pack("<I", 2)) + rec(8, BLOB) + rec(0, WITH_FILE),
}
for name, data in RECORDS.items():
    write("FuzzVaultRecords", name, data)

# --- FuzzFileExtraction: edit scripts over its two base vaults (Fuzz/Support/FileExtractionHarness.swift
# lists their frames): `flags` (bit 0 the base, bit 1 checksums recomputed) then `op a b c d` edits.
# The damages of vectors 069-080 (spec/files.md §16), made to the harness's authentic vaults.
def edit(op, a, b=0, offset=0):
    return bytes([op, a, b, offset & 0xFF, offset >> 8])


EXTRACTION = {
    "intact-two-files": b"\x00",
    "intact-stream-shared-standalone": b"\x01",
    "chunk-flipped": b"\x00" + edit(0, 5, 3, 200),            # 074: corrupted at extraction
    "chunk-forged": b"\x02" + edit(0, 5, 3, 200),             # 075: tampered at extraction
    "chunk-dropped": b"\x00" + edit(1, 5),                    # 071: missing at open
    "chunk-repeated": b"\x00" + edit(3, 4, 5),                # 070: repeated at extraction
    "chunk-inserted": b"\x00" + edit(2, 4, 5),                # 073: repeated at open
    "chunk-foreign": b"\x00" + edit(3, 11, 4),                # 069: foreign at extraction
    "chunks-swapped": b"\x00" + edit(4, 4, 5),                # missing at extraction
    "chunk-cut-short": b"\x00" + edit(5, 5, 99, 288),         # 076: framing at open
    "truncated-in-chunks": b"\x00" + edit(7, 11, 0, 2048),    # 067: a torn tail
    "extent-forged": b"\x02" + edit(0, 3, 0, 8),              # 077: tampered at open
    "stream-run-chunk-dropped": b"\x01" + edit(1, 6),         # missing, in the second run
    "standalone-blob-truncated": b"\x01" + edit(7, 12, 0, 100),
    "last-chunk-replaced": b"\x01" + edit(3, 4, 7),             # a longer frame in place of a run's last chunk
}
for name, data in EXTRACTION.items():
    write("FuzzFileExtraction", name, data)

# --- FuzzImportKDBX: byte 0 even, a whole KDBX 4 file written under the harness's fixed
# transformed key (KDBXWriter.fuzzKey, 32 x 0x5A); odd, a decrypted payload (inner header, XML).
# From the keepassxc-cli fixture (Tests/CofferImportTests/Fixtures/kdbx/), its 300 KiB attachment
# cut to 64 bytes so a seed fits max_len; rewrap.py writes the files (needs python3-cryptography).
def kdbx_seeds():
    sys.path.insert(0, os.path.join(ROOT, "Tests", "CofferImportTests", "Fixtures", "kdbx"))
    try:
        import rewrap
    except ImportError as e:
        print("FuzzImportKDBX seeds skipped (%s)" % e, file=sys.stderr)
        return
    fixture = os.path.join(ROOT, "Tests", "CofferImportTests", "Fixtures", "kdbx", "argon2d.kdbx")
    version, plain = rewrap.open_db(open(fixture, "rb").read(), "fixture-kdbx-p\u00e4ssword", None)
    i, inner = 0, b""
    while True:
        fid = plain[i]
        (n,) = struct.unpack_from("<I", plain, i + 1)
        value = plain[i + 5:i + 5 + n]
        if fid == 3:
            value = value[:65]
        inner += bytes([fid]) + struct.pack("<I", len(value)) + value
        i += 5 + n
        if fid == 0:
            break
    payload = inner + plain[i:]
    counter = [0]

    def fixed(n):
        counter[0] += 1
        return bytes([counter[0]]) * n

    key = b"\x5a" * 32
    small_xml = (b'<?xml version="1.0" encoding="utf-8"?><KeePassFile><Root><Group><Name>Root</Name><Entry>'
                 b'<String><Key>Title</Key><Value>t</Value></String><Binary><Key>a</Key><Value Ref="0"/></Binary>'
                 b'</Entry></Group></Root></KeePassFile>')
    small = (b"\x01" + struct.pack("<I", 4) + struct.pack("<I", 3) + b"\x02" + struct.pack("<I", 64) + b"\x03" * 64
             + b"\x03" + struct.pack("<I", 3) + b"\x00ab" + b"\x00" + struct.pack("<I", 0) + small_xml)
    seeds = {
        "payload-keepassxc": b"\x01" + payload,
        "payload-small": b"\x01" + small,
        "payload-no-end": b"\x01" + small[:40],
        "file-keepassxc-aes-gzip": b"\x00" + rewrap.write_db(version, payload, "", None, "argon2d", "aes", "gzip", key, fixed),
        "file-keepassxc-chacha20": b"\x00" + rewrap.write_db(version, payload, "", None, "argon2id", "chacha20", "none", key, fixed),
        "file-small-aes-kdf": b"\x00" + rewrap.write_db(version, small, "", None, "aes", "aes", "gzip", key, fixed),
        "file-wrong-key": b"\x00" + rewrap.write_db(version, small, "", None, "argon2d", "aes", "none", b"\x00" * 32, fixed),
        "file-kdbx3-header": b"\x00" + open(os.path.join(os.path.dirname(fixture), "kdbx3.kdbx"), "rb").read()[:240],
    }
    for name, data in seeds.items():
        write("FuzzImportKDBX", name, data)


kdbx_seeds()

# --- password rules: every rules: line of the policy vectors ----------------------------------
def unescape(value):
    out, i = [], 0
    while i < len(value):
        c = value[i]
        if c == "\\" and i + 1 < len(value):
            n = value[i + 1]
            if n == "u" and value[i + 2:i + 3] == "{":
                end = value.index("}", i)
                out.append(chr(int(value[i + 3:end], 16)))
                i = end + 1
                continue
            out.append({"\\": "\\", "t": "\t", "n": "\n", "r": "\r", "s": " "}.get(n, "\\" + n))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


seen = set()
for file in ("rules.txt", "passwords.txt"):
    path = os.path.join(ROOT, "spec", "vectors", "policy", file)
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("rules: ") or line == "rules:":
            text = unescape(line[len("rules: "):])
            if text in seen:
                continue
            seen.add(text)
            write("FuzzPasswordRules", "%s-%03d" % (file[:-4], len(seen)), text.encode("utf-8"))

# --- imports (spec/cli.md §8): byte 0 picks the CSV dialect (0 keepassxc, 1 bitwarden, 2 1password, 3 csv,
# 4 lastpass, 5 chrome, 6 firefox, 7 buttercup, 8 dashlane, 9 keeper, 10 nordpass, 11 roboform, 12 apple-passwords)
CSV = {
    "keepassxc": (0, b'"Group","Title","Username","Password","URL","Notes","TOTP","Icon","Last Modified","Created"\n'
                     b'"Root","GitHub","me@example.com","hunter2","https://github.com","line one\nline ""two"", with comma","","0",'
                     b'"2024-05-01T10:00:00Z","2024-01-01T09:30:00.250Z"\n'
                     b'"Root/Work","","","pw","","","otpauth://totp/x?secret=ABC","0","",""\n'),
    "bitwarden": (1, b"folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\n"
                     b"Work,1,login,GitHub,,\"PIN: 1234\nQuestion: blue\",0,\"https://github.com,https://gh.io\",me,hunter2,\n"
                     b",,note,Wi-Fi,hunter2 \xe2\x98\x95,,0,,,,\n"
                     b",,card,Visa,,,0,,,,\n"),
    "1password": (2, b"Title,Website,Username,Password,Notes,Tags,One-time password\n"
                     b"GitHub,https://github.com,me,hunter2,,\"work; dev, work\",otpauth://totp/x\n"
                     b"\xef\xbb\xbfbad-utf8 \xc3\x28,,,pw,,,\n"),
    "generic": (3, b"\xef\xbb\xbftitle,username,password,url,notes,tags\r\n"
                   b"Z\xc3\xbcrich,j\xc3\xbcrgen,Gr\xc3\xbc\xc3\x9fe,,,a;b\r\n"
                   b"\"quoted, title\",,\"\"\"x\"\"\",,,\r\n"
                   b"short,row\r\n"
                   b"bare\"quote,u,p,,,\r\n"
                   b"\"unclosed,u,p\n"),
    "buttercup": (7, b"!type,!group_id,!group_name,!group_parent,title,username,password,url,id,note,PIN\n"
                     b"group,g1,Work,0,,,,,,,\n"
                     b"group,g2,\"Servers, \"\"EU\"\"\",g1,,,,,,,\n"
                     b"group,g3,Loop,g3,,,,,,,\n"
                     b"entry,g2,,,db,root,\"pw,\"\"1\",ssh://db,e1,\"line one\nline two\",1234\n"
                     b"entry,g1,,,Door codes,,,,e2,front: 4711,\n"
                     b"entry,missing,,,Z\xc3\xbcrich,u,p,,e3,,\n"
                     b"folder,g1,,,odd,u,p,,e4,,\n"
                     b"group,g4,Stray,0,title,,,,,,\n"),
    "buttercup-older": (7, b"!group_id,!group_name,title,username,password,URL,Secret\ng1,Mail,Hotmail,me,pw,https://x,v\n"),
    "header-only": (3, b"title\n"),
    "missing-column": (0, b"Title,Username\nx,y\n"),
    "empty": (1, b""),
}
for name, (dialect, text) in CSV.items():
    write("FuzzImportCSV", name, bytes([dialect]) + text)
# The other managers' CSV fixtures (issue 39), each under its dialect's byte.
FIXTURE_ROOT = os.path.join(ROOT, "Tests", "CofferImportTests", "Fixtures")
for name, dialect, path in (("dashlane", 8, "dashlane/credentials.csv"), ("keeper", 9, "keeper/keeper.csv"),
                            ("nordpass", 10, "csv/nordpass.csv"), ("roboform", 11, "csv/roboform.csv"),
                            ("apple-passwords", 12, "apple/passwords.csv")):
    with open(os.path.join(FIXTURE_ROOT, path), "rb") as f:
        write("FuzzImportCSV", name, bytes([dialect]) + f.read())

JSON = {
    "export": b'{"encrypted": false, "folders": [{"id": "f1", "name": "Work"}], "items": ['
              b'{"type": 1, "name": "GitHub", "folderId": "f1", "notes": null, "login": {"username": "me", "password": "hunter2",'
              b' "totp": "otpauth://totp/x", "uris": [{"match": null, "uri": "https://github.com"}, {"uri": ""}]},'
              b' "fields": [{"name": "PIN", "value": "1234", "type": 1}, {"name": "n", "value": 42}, {"name": null, "value": null}],'
              b' "creationDate": "2024-01-01T09:30:00.250Z", "revisionDate": "2024-05-01T10:00:00Z"},'
              b'{"type": 2, "name": "Wi-Fi", "notes": "hunter2 \\u2615", "secureNote": {"type": 0}},'
              b'{"type": 3, "name": "Visa"}, {"type": 4, "name": "Me"}, {"type": 1}, "not an object", {"type": 1.5e300, "name": "x"}]}',
    "encrypted": b'{"encrypted": true, "encKeyValidation_DO_NOT_EDIT": "2.abc", "items": []}',
    "no-items": b'{"folders": []}',
    "not-object": b'[1, 2, 3]',
    "not-json": b'{"items": [',
}
for name, text in JSON.items():
    write("FuzzImportBitwardenJSON", name, text)
# The other managers' and the OTP apps' JSON fixtures (issue 39): every JSON importer runs on each.
for path in ("dashlane/dashlane.json", "enpass/enpass.json", "keeper/keeper.json", "protonpass/data.json",
             "otp/aegis.json", "otp/aegis-encrypted.json", "otp/andotp.json", "otp/freeotp.json", "otp/2fas.2fas",
             "otp/2fas-encrypted.2fas", "cxf/example.json", "cxf/account.json", "cxf/apple.json"):
    with open(os.path.join(FIXTURE_ROOT, path), "rb") as f:
        write("FuzzImportBitwardenJSON", path.replace("/", "-").replace(".", "-"), f.read())
# CXF's archive form (spec/cli.md §8.30), read by the same `cxf` format: an index whose item names a
# good, an altered and a missing document, a stray entry and a `../` name (stored, fixed times).
import base64, hashlib, io, zipfile
def cxf_archive(entries):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o600 << 16
            z.writestr(info, data)
    return out.getvalue()
def cxf_file(ident, name, content, claimed=None):
    digest = base64.urlsafe_b64encode(hashlib.sha256(claimed if claimed is not None else content).digest()).rstrip(b"=").decode()
    return {"type": "file", "id": ident, "name": name, "decryptedSize": len(content), "integrityHash": digest}
CXF_INDEX = json.dumps({"version": {"major": 1, "minor": 0}, "exporterRpId": "x.example", "exporterDisplayName": "X",
    "timestamp": 1700000000, "accounts": [{"id": "YQ", "username": "", "email": "", "collections": [], "items": [
        {"id": "AAAAAAAAAAAAAAAAAAAAAA", "creationAt": 1700000000, "title": "Scans", "credentials": [
            cxf_file("Z29vZA", "good.bin", b"good"), cxf_file("YmFk", "bad.bin", b"bad", claimed=b"other"),
            cxf_file("bWlzcw", "missing.bin", b"m")],
         "extensions": [{"name": "coffer", "files": [{"id": "Z29vZA", "fileId": "00" * 16, "mediaType": "text/plain",
                                                     "created": "2024-01-01T00:00:00.000Z"}]}]}]}]}).encode()
write("FuzzImportBitwardenJSON", "cxf-archive", cxf_archive([("CXP-Export/index.json", CXF_INDEX),
    ("CXP-Export/documents/Z29vZA", b"good"), ("CXP-Export/documents/YmFk", b"bad"), ("CXP-Export/stray", b"s"),
    ("../escape", b"e")]))

# --- 1Password (spec/cli.md §8.7, §8.8): byte 0 picks 0 a .1pux, 1 a .1pif, 2 export.data (the harness zips it)
FIXTURES = os.path.join(ROOT, "Tests", "CofferImportTests", "Fixtures", "1password")
SEPARATOR = b"\n***5642bee8-a5ff-11dc-8314-0800200c9a66***\n"
for name in ("sample.1pux", "no-export-data.1pux", "declared-huge.1pux", "inflates-past-declared.1pux", "sample.1pif"):
    with open(os.path.join(FIXTURES, name), "rb") as f:
        write("FuzzImport1Password", name.replace(".", "-"), bytes([1 if name.endswith(".1pif") else 0]) + f.read())
ONEPASSWORD = {
    "1pif-bad-entries": (1, SEPARATOR.join([b"[1]", b"{not json", b'{"typeName":"webforms.WebForm","title":"ok",'
        b'"secureContents":{"fields":[{"designation":"password","value":"pw"},{"name":"pin","value":"1"}],'
        b'"sections":[{"title":"S","fields":[{"k":"monthYear","n":"e","t":"exp","v":202612},{"k":"date","t":"d","v":-1e300},'
        b'{"n":"TOTP_1","v":"JBSWY3DP"},{"k":"address","t":"a","v":{"city":"X","street":[1,{"z":null}]}}]}],'
        b'"passwordHistory":[{"value":"old","time":1700000000},{"value":"older"}]},"createdAt":1.5e300}',
        b'{"typeName":"system.Tombstone"}', b'{"typeName":"system.folder.Regular","uuid":"F","title":"T","folderUuid":"F"}',
        b'{"typeName":"passwords.Password","folderUuid":"F","title":"p","trashed":true,"secureContents":{"password":"x","ccnum":7}}'])),
    "1pif-no-separator": (1, b'{"title": "x"}\n'),
    "1pif-not-utf8": (1, b"\xff" + SEPARATOR),
    "1pux-not-zip": (0, b'{"accounts": []}'),
    "1pux-data-mixed": (2, b'{"accounts": [{"vaults": [{"attrs": {"name": "V"}, "items": [7, {"categoryUuid": "001", "state": "archived",'
        b' "overview": {"title": "t", "url": "https://a", "urls": [{"url": "https://b"}], "tags": ["x", "x"]},'
        b' "details": {"loginFields": [{"designation": "username", "value": {"email_address": "e"}}, {"name": "c", "value": "1"}],'
        b' "sections": [{"title": "S", "fields": [{"title": "f", "value": {"totp": "otpauth://totp/x?secret=JBSWY3DP"}},'
        b' {"id": "g", "value": {"file": {"fileName": "a.pdf", "documentId": "d"}}}, {"value": {"sshKey": {"privateKey": "k"}}}]}],'
        b' "passwordHistory": [{"value": "h", "time": 1}]}}, {"item": {"categoryUuid": "005", "details": {"password": "p"}}},'
        b' {"categoryUuid": "006", "overview": {"title": "doc"}, "details": {"documentAttributes": {"fileName": "f"}}}]}]}]}'),
    "1pux-data-not-json": (2, b'{"accounts": ['),
    "1pux-data-no-accounts": (2, b'{"vaults": []}'),
}
for name, (selector, data) in ONEPASSWORD.items():
    write("FuzzImport1Password", name, bytes([selector]) + data)

# --- throttle state (spec/unlock.md §4); the harness recomputes the MAC, so zeros do here -------
def throttle(kind, failures, last, recent):
    body = b"COFFTHR1" + bytes([kind]) + bytes(range(16)) + struct.pack("<I", failures) + bytes([0xB0] * 16)
    body += struct.pack("<QB", last, len(recent)) + b"".join(bytes([t] * 16) + struct.pack("<Q", at) for t, at in recent)
    return body + bytes(32)


THROTTLE = {
    "fresh-pin": throttle(1, 0, 0, []),
    "password-failures": throttle(2, 7, 123456789, [(0x11, 123456000), (0x22, 123456789)]),
    "full-recent": throttle(1, 2**32 - 1, 2**64 - 1, [(n, n * 1000) for n in range(16)]),
    "bad-kind": throttle(3, 1, 1, []),
    "too-many-recent": throttle(1, 1, 1, [(1, 1)] * 17),
}
for name, data in THROTTLE.items():
    write("FuzzThrottleState", name, data)

# --- agent frames (spec/agent.md §3): magic ‖ code ‖ length (4, big-endian) ‖ payload ----------------
def frame(magic, code, payload=b""):
    return magic + struct.pack(">BI", code, len(payload)) + payload


def text16(t):
    return struct.pack(">H", len(t)) + t


def text32(t):
    return struct.pack(">I", len(t)) + t


def summary(ident, title, username=None, urls=(), tags=(), has_password=True):
    flags = (1 if has_password else 0) | (2 if username is not None else 0)
    out = ident + struct.pack(">BqqB", 1, 1767225600000, 1767225601000, flags) + text32(title)
    out += text32(username) if username is not None else b""
    out += struct.pack(">I", len(urls)) + b"".join(text32(u) for u in urls)
    return out + struct.pack(">I", len(tags)) + b"".join(text32(t) for t in tags)


VAULT_ID = bytes(range(16))
GITHUB = summary(bytes([0x11] * 16), b"github", b"me@example.com", [b"https://github.com/login"], [b"work"])
MAIL = summary(bytes([0x22] * 16), b"mail", None, [], [], has_password=False)
NONE = struct.pack(">I", 0)  # a read reply's "ignored" bytes: no torn tail
Q, R = b"CAQ4", b"CAR4"
SESSION = bytes(range(0xA0, 0xB0))  # a file session's id (spec/agent.md §3.4)
FILE_ID = bytes([0x33] * 16)
SHA = bytes(range(0x40, 0x60))
AGENT = {
    "status": frame(Q, 1),
    "lock": frame(Q, 3),
    "find": frame(Q, 4, VAULT_ID + text16(b"git")),
    "list": frame(Q, 5, VAULT_ID + text16(b"") + b"\x00"),
    "list-tag": frame(Q, 5, VAULT_ID + text16(b"hub") + b"\x01" + text16(b"work")),
    "item": frame(Q, 6, VAULT_ID + bytes([0x11] * 16)),
    "changes": frame(Q, 7, VAULT_ID),
    "info": frame(Q, 8, VAULT_ID),
    "verify": frame(Q, 9, VAULT_ID),
    "put-new": frame(Q, 10, VAULT_ID + b"\x00" + ITEMS["login"]),
    "put-edit": frame(Q, 10, VAULT_ID + b"\x01" + struct.pack(">q", 1767225601000) + ITEMS["login"]),
    "put-any": frame(Q, 10, VAULT_ID + b"\x02" + ITEMS["secure-note"]),
    "delete": frame(Q, 11, VAULT_ID + bytes([0x11] * 16) + struct.pack(">q", 1767225601000)),
    "put-all": frame(Q, 12, VAULT_ID + struct.pack(">I", 2) + text32(ITEMS["login"]) + text32(ITEMS["secure-note"])),
    "compact": frame(Q, 13, VAULT_ID),
    "merge": frame(Q, 14, VAULT_ID + text16(b"") + text16(b"/v/copy.coffer") + text16(b"") + b"\x01\x00\x00"),
    "merge-git": frame(Q, 14, VAULT_ID + text16(b"/r/.merge_file_a") + text16(b"/r/.merge_file_b") + text16(b"/r/.merge_file_o")
                       + b"\x00\x00\x01" + text32(b"other password")),
    "removed-pin-set": frame(Q, 15, VAULT_ID + b"\x06" + b"246813"),
    "items": frame(Q, 16, VAULT_ID),
    "logins": frame(Q, 17, VAULT_ID + text16(b"https://github.com/login") + text16(b"")),
    "logins-file": frame(Q, 17, VAULT_ID + text16(b"https://mail.example.co.uk/") + text16(b"/usr/share/publicsuffix/public_suffix_list.dat")),
    "removed-key": frame(Q, 2, VAULT_ID),
    "previous-protocol": frame(b"CAQ3", 1),
    "older-protocol": frame(b"CAQ2", 1),
    "file-begin": frame(Q, 18, VAULT_ID + bytes([0x11] * 16) + text16(b"scan.pdf") + b"\x00" + b"\x01" + struct.pack(">Q", 3145733)),
    "file-begin-stream": frame(Q, 18, VAULT_ID + bytes([0x11] * 16) + text16(b"piped.bin") + b"\x01" + text16(b"application/octet-stream") + b"\x00"),
    "file-data": frame(Q, 19, VAULT_ID + SESSION + b"%PDF-1.7 not really"),
    "file-commit": frame(Q, 20, VAULT_ID + SESSION),
    "file-abort": frame(Q, 21, VAULT_ID + SESSION),
    "file-read-open": frame(Q, 22, VAULT_ID + bytes([0x11] * 16) + FILE_ID + b"\x00"),
    "file-read-next": frame(Q, 22, VAULT_ID + bytes([0x11] * 16) + FILE_ID + b"\x01" + SESSION),
    "bad-length": Q + b"\x01\xff\xff\xff\xff",
    "junk": b"hello",
    "reply-status": frame(R, 1, VAULT_ID + struct.pack(">I", 900)),
    "reply-done": frame(R, 3),
    "reply-refused": frame(R, 4),
    "reply-found-one": frame(R, 5, NONE + b"\x01" + GITHUB),
    "reply-found-several": frame(R, 5, NONE + b"\x02" + struct.pack(">I", 2) + GITHUB + MAIL),
    "reply-found-none": frame(R, 5, struct.pack(">I", 5) + b"\x03" + struct.pack(">I", 1) + text32(b"github")),
    "reply-summaries": frame(R, 6, NONE + struct.pack(">I", 2) + GITHUB + MAIL),
    "reply-item": frame(R, 7, NONE + ITEMS["login"]),
    "reply-written": frame(R, 8, struct.pack(">II", 1, 0) + b"\x00"),
    "reply-written-twin": frame(R, 8, struct.pack(">II", 1, 0) + b"\x01" + bytes([0x11] * 16)),
    "reply-failed": frame(R, 9, text16(b"store.vault-busy") + text32(b"the vault is being written")),
    "reply-changes": frame(R, 10, NONE + struct.pack(">I", 1) + b"\x02" + text32(ITEMS["login"])),
    "reply-info": frame(R, 11, text32(b"/v/v.coffer") + text32(b"1.0") + text32(b"00" * 16) + struct.pack(">q", 1767225600000)
                        + struct.pack(">II", 3, 65536) + b"\x00" + struct.pack(">QQQQ", 2, 3, 1, 4096)
                        + struct.pack(">QQQQ", 1, 2048, 512, 0)),  # files, file bytes, dead file bytes, members
    "reply-items": frame(R, 15, NONE + struct.pack(">I", 2) + text32(ITEMS["login"]) + text32(ITEMS["secure-note"])),
    "reply-verified": frame(R, 12, struct.pack(">QQQQ", 3, 2, 1, 0) + struct.pack(">QQ", 2, 3145733)),
    "reply-compacted": frame(R, 13, struct.pack(">QQQ", 4096, 2048, 5)),
    "reply-session": frame(R, 16, SESSION),
    "reply-taken": frame(R, 17, struct.pack(">Q", 1048576)),
    "reply-attached": frame(R, 18, FILE_ID + struct.pack(">Q", 3145733) + SHA + text16(b"application/pdf") + struct.pack(">q", 1767225601000)
                            + b"\x00" + text16(b"2.1") + struct.pack(">I", 0)),
    "reply-ended": frame(R, 19),
    "reply-chunk": frame(R, 20, SESSION + b"\x00" + b"%PDF-1.7 not really"),
    "reply-chunk-end": frame(R, 20, SESSION + b"\x01"),
    "reply-merged": frame(R, 14, NONE + b"\x00" + struct.pack(">I", 1) + bytes([0x11] * 16) + NONE + NONE
                          + struct.pack(">I", 1) + bytes([0x11] * 16) + text32(b"password") + b"\x01" + text32(b"password history")
                          + b"\x00\x00\x01" + struct.pack(">Q", 0) + struct.pack(">QQ", 1, 3145733)),
}
for old_name in os.listdir(os.path.join(CORPUS, "FuzzAgentMessage")):
    if old_name not in AGENT and not re.fullmatch(r"[0-9a-f]{40}", old_name):
        os.remove(os.path.join(CORPUS, "FuzzAgentMessage", old_name))
for name, data in AGENT.items():
    write("FuzzAgentMessage", name, data)

# --- Pwned Passwords lists (spec/cli.md §4.23): byte 0 even = one file of 40-digit lines,
# odd = a per-prefix file of 35-digit lines; the harness searches the rest with a small scan limit.
def pwned(hashes, end=b"\r\n", lower=False, digits=40):
    out = b""
    for n, h in enumerate(hashes):
        h = h[40 - digits:]
        out += (h.lower() if lower else h).encode() + b":" + str(n + 1).encode() + end
    return out


SHA1S = sorted("%040X" % ((n * 0x9E3779B97F4A7C15F39CC0605CEDC834) % (1 << 160)) for n in range(1, 13))
SUFFIXES = sorted("0ABC" + "%036X" % ((n * 0x9E3779B97F4A7C15F39CC0605CEDC834) % (1 << 144)) for n in range(1, 9))
PWNED = {
    "crlf": b"\x00" + pwned(SHA1S),
    "lf-lower": b"\x02" + pwned(SHA1S, end=b"\n", lower=True),
    "no-final-lf": b"\x00" + pwned(SHA1S)[:-2],
    "one-line": b"\x00" + pwned(SHA1S[:1]),
    "prefix-file": b"\x01" + pwned(SUFFIXES, digits=35),
    "unsorted": b"\x00" + pwned(SHA1S[6:] + SHA1S[:6]),
    "short-line": b"\x00" + pwned(SHA1S).replace(b"\r\n" + SHA1S[5][:2].encode(), b"\r\n", 1),
    "truncated": b"\x00" + pwned(SHA1S)[:-30],
    "empty": b"\x00",
    "zeros": b"\x00" + bytes(600),
}
for name, data in PWNED.items():
    write("FuzzPwnedPasswords", name, data)
# --- URLs (spec/urls.md): every url of the normalisation vectors, and every page ‖ "\n" ‖ item
# pair of the matching vectors ----------------------------------------------------------------
def url_blocks(name):
    blocks, block = [], {}
    for line in open(os.path.join(ROOT, "spec", "vectors", "urls", name), encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("#"):
            continue
        if not line.strip():
            if block:
                blocks.append(block)
            block = {}
            continue
        key, _, value = line.partition(": ")
        block[key] = value
    if block:
        blocks.append(block)
    return blocks


for n, block in enumerate(url_blocks("normalization.txt"), 1):
    write("FuzzSiteURL", "normalization-%03d" % n, block["url"].encode("utf-8"))
for n, block in enumerate(url_blocks("matching.txt"), 1):
    write("FuzzSiteURL", "matching-%03d" % n, (block["page"] + "\n" + block["item"]).encode("utf-8"))

# --- Passkeys (spec/passkeys.md §6): byte 0 even a creation options JSON, odd a request options
# JSON; bit 1 picks the origin (https://login.example.com or http://localhost) -----------------
CHALLENGE = "WlpaWlpaWlpaWlpaWlpaWlpaWlpaWlpaWlpaWlpaWlo"
CREATION = {
    "rp": {"id": "example.com", "name": "Example"},
    "user": {"id": "dXNlci0x", "name": "alice@example.com", "displayName": "Alice"},
    "challenge": CHALLENGE,
    "pubKeyCredParams": [{"type": "public-key", "alg": -8}, {"type": "public-key", "alg": -7}],
    "excludeCredentials": [], "authenticatorSelection": {"residentKey": "required", "userVerification": "required"},
    "attestation": "none", "timeout": 60000, "extensions": {"credProps": True},
}
REQUEST = {"challenge": CHALLENGE, "rpId": "example.com", "allowCredentials": [{"type": "public-key", "id": "AQIDBA"}],
           "userVerification": "required"}


def passkey_seed(name, selector, obj):
    write("FuzzPasskeyOptions", name, bytes([selector]) + json.dumps(obj, separators=(",", ":")).encode())


passkey_seed("create-es256-ed25519", 0, CREATION)
passkey_seed("create-es256-only", 0, dict(CREATION, pubKeyCredParams=[{"type": "public-key", "alg": -7}]))
passkey_seed("create-no-params", 0, dict(CREATION, pubKeyCredParams=[]))
passkey_seed("create-rsa-only", 0, dict(CREATION, pubKeyCredParams=[{"type": "public-key", "alg": -257}]))
passkey_seed("create-no-rp-id", 0, dict(CREATION, rp={"name": "Example"}))
passkey_seed("create-excluded", 0, dict(CREATION, excludeCredentials=[{"type": "public-key", "id": "AQIDBA"}]))
passkey_seed("create-wrapped", 0, {"publicKey": CREATION})
passkey_seed("create-localhost", 2, dict(CREATION, rp={"id": "localhost", "name": "dev"}))
passkey_seed("create-other-rp", 0, dict(CREATION, rp={"id": "evil.com", "name": "x"}))
passkey_seed("create-bad-challenge", 0, dict(CREATION, challenge="AB"))
passkey_seed("get-allowed", 1, REQUEST)
passkey_seed("get-any", 1, dict(REQUEST, allowCredentials=[]))
passkey_seed("get-not-allowed", 1, dict(REQUEST, allowCredentials=[{"type": "public-key", "id": "BQYHCA"}]))
passkey_seed("get-no-rp-id", 1, {"challenge": CHALLENGE})
passkey_seed("get-localhost", 3, REQUEST)
passkey_seed("get-bad-type", 1, dict(REQUEST, rpId=7))
# --- SSH keys (spec/ssh.md): every key file of spec/vectors/ssh as it is (byte 0 = 0), and its
# decoded body under its label's mode (1 openssh-key-v1, 2 PKCS#8, 3 SEC1, 4 PKCS#1), whole and
# cut in half ------------------------------------------------------------------------------------
import base64, json

SSH_MODES = {"OPENSSH PRIVATE KEY": 1, "PRIVATE KEY": 2, "EC PRIVATE KEY": 3, "RSA PRIVATE KEY": 4}
ssh_dir = os.path.join(ROOT, "spec", "vectors", "ssh")
for name in sorted(os.listdir(ssh_dir)):
    if not name.endswith(".json"):
        continue
    text = json.load(open(os.path.join(ssh_dir, name), encoding="utf-8"))["input"]
    stem = name[:-5]
    write("FuzzSSHKey", "file-" + stem, b"\x00" + text.encode())
    lines = text.strip().split("\n")
    label = lines[0][len("-----BEGIN "):-len("-----")]
    if label in SSH_MODES and not any(":" in line for line in lines):
        body = base64.b64decode("".join(lines[1:-1]))
        write("FuzzSSHKey", "body-" + stem, bytes([SSH_MODES[label]]) + body)
        write("FuzzSSHKey", "half-" + stem, bytes([SSH_MODES[label]]) + body[:len(body) // 2])

# --- the SSH agent's requests (draft-miller-ssh-agent, PROTOCOL.agent): one frame's body each
# (the bytes after its length), with fixed bytes for keys and signatures (the reader does not
# check them) ---------------------------------------------------------------------------------
def sstr(b):
    return struct.pack(">I", len(b)) + b


ED_BLOB = sstr(b"ssh-ed25519") + sstr(bytes(range(32)))
RSA_BLOB = sstr(b"ssh-rsa") + sstr(b"\x01\x00\x01") + sstr(b"\x00" + bytes([0xC5]) * 256)
ED_SIG = sstr(b"ssh-ed25519") + sstr(bytes(range(64)))
SIGN = bytes([13]) + sstr(ED_BLOB) + sstr(bytes(range(100, 164))) + struct.pack(">I", 0)
BIND = bytes([27]) + sstr(b"session-bind@openssh.com") + sstr(ED_BLOB) + sstr(bytes(range(32))) + sstr(ED_SIG)
SSH_AGENT_SEEDS = {
    "list": bytes([11]),
    "list-trailing-byte": bytes([11, 0]),
    "sign-ed25519": SIGN,
    "sign-rsa-sha512": bytes([13]) + sstr(RSA_BLOB) + sstr(b"data") + struct.pack(">I", 4),
    "sign-rsa-sha256": bytes([13]) + sstr(RSA_BLOB) + sstr(b"") + struct.pack(">I", 2),
    "sign-truncated": SIGN[:len(SIGN) // 2],
    "sign-no-flags": SIGN[:-4],
    "sign-trailing-byte": SIGN + b"\x00",
    "sign-key-length-overruns": bytes([13]) + struct.pack(">I", 0xFFFFFFFF) + ED_BLOB,
    "lock": bytes([22]) + sstr(b"passphrase"),
    "lock-empty": bytes([22]),
    "unlock": bytes([23]) + sstr(b""),
    "add-identity": bytes([17]) + sstr(b"ssh-ed25519") + sstr(bytes(32)) + sstr(bytes(64)) + sstr(b"comment"),
    "remove-identity": bytes([18]) + sstr(ED_BLOB),
    "remove-all": bytes([19]),
    "session-bind": BIND + b"\x00",
    "session-bind-forwarding": BIND + b"\x01",
    "session-bind-flag-2": BIND + b"\x02",
    "session-bind-no-flag": BIND,
    "extension-query": bytes([27]) + sstr(b"query"),
    "extension-no-name": bytes([27]),
    "unknown-99": bytes([99]),
    "empty": b"",
}
for name, data in SSH_AGENT_SEEDS.items():
    write("FuzzSSHAgentMessage", name, data)

for target in sorted(os.listdir(CORPUS)):
    print("%-22s %d files" % (target, len(os.listdir(os.path.join(CORPUS, target)))))
