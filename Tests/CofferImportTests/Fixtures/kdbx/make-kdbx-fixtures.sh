#!/usr/bin/env bash
# Makes the kdbx fixtures (see README.md) with keepassxc-cli: a KDBX 4 database with groups,
# history, a Recycle Bin, TOTP, protected custom strings and attachments (binary, empty, 300 KiB),
# keepassxc-cli's XML export and `attachment-export` of each attachment beside it; the same
# database with a key file (keepassxc-cli db-edit --set-key-file); and, with rewrap.py, the same
# payload under Argon2d, Argon2id and ChaCha20, each opened and exported again by keepassxc-cli
# and checked equal to the first export. All data is made up.
# Usage: make-kdbx-fixtures.sh [output-directory]   (needs keepassxc-cli, python3-cryptography, libargon2)
set -euo pipefail
out="${1:-$(cd "$(dirname "$0")" && pwd)}"
here="$(cd "$(dirname "$0")" && pwd)"
xmlfix="$here/../keepass-xml"
work="$(mktemp -d)"; [ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT; echo "work: $work" >&2
cd "$work"
pw='fixture-kdbx-pässword'
cli() { keepassxc-cli "$@" 2>/dev/null; }   # prompts go to stderr

printf '%s\n%s\n' "$pw" "$pw" | cli db-create -p -t 100 one.kdbx >/dev/null
printf '%s\n' "$pw" | cli mkdir one.kdbx Work >/dev/null
printf '%s\n' "$pw" | cli mkdir one.kdbx Work/Servers >/dev/null
printf '%s\n%s\n' "$pw" 'gh-Secret-123!' | cli add -p one.kdbx GitHub -u octocat --url https://github.com/login --notes '2FA on' >/dev/null
printf '%s\n%s\n' "$pw" 'Grüße-🔑-2024' | cli add -p one.kdbx 'Zürich Café ☕' -u jürgen \
    --notes $'line one\nline two, with comma\n"quoted" line three <&> ünïcödé 🔐' >/dev/null
printf '%s\n%s\n' "$pw" 'old-jira-1' | cli add -p one.kdbx Work/Jira -u dev --url 'https://jira.example/secure/Dashboard.jspa?a=1&b=2' >/dev/null
printf '%s\n%s\n' "$pw" 'bastion-pw' | cli add -p one.kdbx Work/Servers/bastion -u admin --url ssh://bastion.example:2222 >/dev/null
printf '%s\n%s\n' "$pw" 'files-pw' | cli add -p one.kdbx 'Files' -u filer >/dev/null
printf '%s\n' "$pw" | cli export -f xml one.kdbx > one.xml
# keepassxc-cli cannot set custom attributes, tags or TOTP: ../keepass-xml/add-attributes.py adds
# them (otp and two protected strings on GitHub, a PIN and a plain string on Files), and
# keepassxc-cli imports that XML into the database the fixtures are made from.
python3 "$xmlfix/add-attributes.py" one.xml two-in.xml
printf '%s\n%s\n' "$pw" "$pw" | cli import -p -t 100 two-in.xml db.kdbx >/dev/null
sleep 1.1
printf '%s\n%s\n' "$pw" 'old-jira-2' | cli edit -p db.kdbx Work/Jira >/dev/null
sleep 1.1
printf '%s\n%s\n' "$pw" '  current jira, leading and trailing spaces  ' | cli edit -p db.kdbx Work/Jira >/dev/null
# Attachments: 309 bytes of binary, an empty file, 300 KiB of a fixed LCG (gzip cannot shrink it).
head -c 300 /dev/zero | tr '\0' '\001' > blob.bin; printf '\000\377\376binary' >> blob.bin
: > empty.txt
python3 -c 'import sys
x = 4242; out = bytearray()
for _ in range(300 * 1024):
    x = (x * 1103515245 + 12345) & 0x7fffffff; out.append(x >> 16 & 0xff)
sys.stdout.buffer.write(out)' > large.bin
printf 'host=files.example\nport=21\n' > config.txt
printf '%s\n' "$pw" | cli attachment-import db.kdbx Files blob.bin blob.bin >/dev/null
printf '%s\n' "$pw" | cli attachment-import db.kdbx Files empty.txt empty.txt >/dev/null
printf '%s\n' "$pw" | cli attachment-import db.kdbx Files 'large scan.bin' large.bin >/dev/null
printf '%s\n' "$pw" | cli attachment-import db.kdbx Work/Servers/bastion config.txt config.txt >/dev/null
printf '%s\n' "$pw" | cli attachment-import db.kdbx GitHub blob.bin blob.bin >/dev/null   # pooled once with Files'
printf '%s\n%s\n' "$pw" 'deleted-pw' | cli add -p db.kdbx 'Old account' -u gone >/dev/null
printf '%s\n' "$pw" | cli rm db.kdbx 'Old account' >/dev/null      # to the Recycle Bin: KDBX 4.1
cp db.kdbx "$out/aes-kdf.kdbx"
printf '%s\n' "$pw" | cli export -f xml db.kdbx > "$out/export.xml"
mkdir -p "$out/attachments"
for pair in 'Files:blob.bin' 'Files:empty.txt' 'Files:large scan.bin' 'Work/Servers/bastion:config.txt' 'GitHub:blob.bin'; do
    entry="${pair%%:*}"; name="${pair#*:}"
    printf '%s\n' "$pw" | cli attachment-export db.kdbx "$entry" "$name" "$out/attachments/$(echo "$entry" | tr / _)--$name" >/dev/null
done
# A key file made by keepassxc-cli (XML v2.0) added to the password.
cp db.kdbx keyfile.kdbx
printf '%s\n' "$pw" | cli db-edit --set-key-file "$out/keyfile.keyx" keyfile.kdbx >/dev/null
cp keyfile.kdbx "$out/keyfile.kdbx"
python3 "$here/rewrap.py" db.kdbx "$out/argon2d.kdbx" "$pw" argon2d aes gzip
python3 "$here/rewrap.py" db.kdbx "$out/argon2id-chacha20.kdbx" "$pw" argon2id chacha20 none
python3 "$here/rewrap.py" db.kdbx "$out/aes-kdf-cheap.kdbx" "$pw" aes aes gzip
for f in keyfile argon2d argon2id-chacha20 aes-kdf-cheap; do
    extra=(); [ "$f" = keyfile ] && extra=(-k "$out/keyfile.keyx")
    printf '%s\n' "$pw" | cli export -f xml "${extra[@]}" "$out/$f.kdbx" > "$f.xml"
    # db-edit records when the key changed (<MasterKeyChanged>): the one line the key file's export differs in.
    diff <(grep -v '<MasterKeyChanged>' "$f.xml") <(grep -v '<MasterKeyChanged>' "$out/export.xml") >/dev/null \
        && echo "$f.kdbx: keepassxc-cli exports the same XML" || { echo "$f.kdbx: keepassxc-cli exports other XML" >&2; exit 1; }
    printf '%s\n' "$pw" | cli db-info "${extra[@]}" "$out/$f.kdbx" | grep -E '^(Cipher|KDF):' | sed "s/^/$f.kdbx: /"
done
printf '%s\n' "$pw" | cli db-info "$out/aes-kdf.kdbx" | grep -E '^(Cipher|KDF):' | sed "s/^/aes-kdf.kdbx: /"
# KeePassXC's other key-file kinds, each given to db-edit --set-key-file as an existing file (so
# keepassxc reads it, not writes one): 32 raw bytes, 64 hex characters, any other file (its SHA-256).
# On a small KDBX 4.1 database (the entry removed to the Recycle Bin makes it KDBX 4).
printf '%s\n%s\n' "$pw" "$pw" | cli db-create -p -t 100 small.kdbx >/dev/null
printf '%s\n%s\n' "$pw" 'kf-pw' | cli add -p small.kdbx 'Key file test' -u keyed >/dev/null
printf '%s\n%s\n' "$pw" 'gone' | cli add -p small.kdbx 'Old' >/dev/null
printf '%s\n' "$pw" | cli rm small.kdbx 'Old' >/dev/null
python3 -c 'import sys; sys.stdout.buffer.write(bytes((i * 37 + 11) & 0xff for i in range(32)))' > "$out/raw32.key"
python3 -c 'import sys; sys.stdout.write("".join("%02x" % ((i * 53 + 7) & 0xff) for i in range(32)))' > "$out/hex64.key"
printf 'any file at all: its SHA-256 is the key\n' > "$out/hashed.key"
for k in raw32 hex64 hashed; do
    cp small.kdbx "$out/keyfile-$k.kdbx"
    printf '%s\n' "$pw" | cli db-edit --set-key-file "$out/$k.key" "$out/keyfile-$k.kdbx" >/dev/null
    printf '%s\n' "$pw" | cli ls -k "$out/$k.key" "$out/keyfile-$k.kdbx" | grep -q 'Key file test'
done
# A KDBX 3.1 database (what db-create writes while nothing needs KDBX 4), which Coffer refuses with a hint.
printf '%s\n%s\n' "$pw" "$pw" | cli db-create -p -t 100 "$out/kdbx3.kdbx" >/dev/null
(cd "$out" && sha256sum attachments/* > attachments.sha256)
echo "wrote $out"
