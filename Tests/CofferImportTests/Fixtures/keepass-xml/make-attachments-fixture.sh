#!/usr/bin/env bash
# Makes keepassxc-<version>-attachments.xml with keepassxc-cli (see README.md): a KDBX 3.1
# database (nothing in it needs KDBX 4, so keepassxc exports its attachments' bytes in
# <Meta><Binaries>, gzip) with two entries, three attachments, one of them on both entries.
# All data is made up. Usage: make-attachments-fixture.sh [output-directory]
set -euo pipefail
out="${1:-$(cd "$(dirname "$0")" && pwd)}"
work="$(mktemp -d)"; [ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
cd "$work"
version="$(keepassxc-cli --version)"
pw='fixture-db-password'
cli() { keepassxc-cli "$@" 2>/dev/null; }   # prompts go to stderr
# A 70,000-byte binary that gzip cannot shrink much (bytes of a fixed LCG), a small PDF-like file, a text file.
python3 -c 'import sys
x = 12345; out = bytearray()
for _ in range(70000):
    x = (x * 1103515245 + 12345) & 0x7fffffff; out.append(x >> 16 & 0xff)
sys.stdout.buffer.write(out)' > scan.bin
printf '%%PDF-1.4\n%% made-up recovery codes\n1111-2222\n3333-4444\n%%%%EOF\n' > codes.pdf
printf 'Grüße: a text attachment ✓\n' > notes.txt
printf '%s\n%s\n' "$pw" "$pw" | cli db-create -p -t 100 a.kdbx >/dev/null
printf '%s\n%s\n' "$pw" 'bank-pw' | cli add -p a.kdbx 'Bank' -u saver --url https://bank.example >/dev/null
printf '%s\n%s\n' "$pw" 'passport-pw' | cli add -p a.kdbx 'Passport' -u traveller >/dev/null
printf '%s\n' "$pw" | cli attachment-import a.kdbx Bank 'recovery codes.pdf' codes.pdf >/dev/null
printf '%s\n' "$pw" | cli attachment-import a.kdbx Bank scan.bin scan.bin >/dev/null
printf '%s\n' "$pw" | cli attachment-import a.kdbx Passport scan.bin scan.bin >/dev/null
printf '%s\n' "$pw" | cli attachment-import a.kdbx Passport 'notes ✓.txt' notes.txt >/dev/null
printf '%s\n' "$pw" | cli export -f xml a.kdbx > "$out/keepassxc-$version-attachments.xml"
echo "wrote $out/keepassxc-$version-attachments.xml"
