#!/usr/bin/env bash
# Makes keepassxc-<version>.xml with keepassxc-cli (see README.md). All data is made up.
# Usage: make-keepassxc-fixture.sh [output-directory]   (needs keepassxc-cli and python3)
set -euo pipefail
out="${1:-$(cd "$(dirname "$0")" && pwd)}"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"; [ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT; echo "work: $work" >&2
cd "$work"
version="$(keepassxc-cli --version)"
pw='fixture-db-password'
cli() { keepassxc-cli "$@" 2>/dev/null; }   # prompts go to stderr

# Phase 1: only keepassxc-cli.
printf '%s\n%s\n' "$pw" "$pw" | cli db-create -p -t 100 one.kdbx >/dev/null
printf '%s\n' "$pw" | cli mkdir one.kdbx Work >/dev/null
printf '%s\n' "$pw" | cli mkdir one.kdbx Work/Servers >/dev/null
printf '%s\n%s\n' "$pw" 'gh-Secret-123!' | cli add -p one.kdbx GitHub -u octocat --url https://github.com/login --notes '2FA on' >/dev/null
printf '%s\n%s\n' "$pw" 'Grüße-🔑-2024' | cli add -p one.kdbx 'Zürich Café ☕' -u jürgen \
    --notes $'line one\nline two, with comma\n"quoted" line three <&> ünïcödé 🔐' >/dev/null
printf '%s\n%s\n' "$pw" 'old-jira-1' | cli add -p one.kdbx Work/Jira -u dev --url 'https://jira.example/secure/Dashboard.jspa?a=1&b=2' >/dev/null
sleep 1.1
printf '%s\n%s\n' "$pw" 'old-jira-2' | cli edit -p one.kdbx Work/Jira >/dev/null
sleep 1.1
printf '%s\n%s\n' "$pw" '  current jira, leading and trailing spaces  ' | cli edit -p one.kdbx Work/Jira >/dev/null
python3 "$here/make-ssh-note.py" > note.txt    # a fake ~100 KB "SSH key" note
printf '%s\n%s\n' "$pw" 'bastion-pw' | cli add -p one.kdbx Work/Servers/bastion -u admin --url ssh://bastion.example:2222 \
    --notes "$(cat note.txt)" >/dev/null
printf '%s\n%s\n' "$pw" 'files-pw' | cli add -p one.kdbx 'Files' -u filer >/dev/null
printf 'host=files.example\nport=21\n' > config.txt
head -c 300 /dev/zero | tr '\0' '\001' > blob.bin; printf '\000\377\376binary' >> blob.bin
printf '%s\n' "$pw" | cli attachment-import one.kdbx Files config.txt config.txt >/dev/null
printf '%s\n' "$pw" | cli attachment-import one.kdbx Files blob.bin blob.bin >/dev/null
printf '%s\n%s\n' "$pw" 'deleted-pw' | cli add -p one.kdbx 'Old account' -u gone >/dev/null
printf '%s\n' "$pw" | cli rm one.kdbx 'Old account' >/dev/null      # moved to the Recycle Bin
printf '%s\n' "$pw" | cli export -f xml one.kdbx > one.xml

# Phase 2: keepassxc-cli cannot set custom attributes, tags or TOTP. Add them to the phase-1
# export (add-attributes.py edits only <Entry> children), import that XML into a new database,
# change one password once more with the CLI, and export again: the fixture is keepassxc's output.
python3 "$here/add-attributes.py" one.xml two-in.xml
printf '%s\n%s\n' "$pw" "$pw" | cli import -p -t 100 two-in.xml two.kdbx >/dev/null
sleep 1.1
printf '%s\n%s\n' "$pw" 'gh-Secret-456!' | cli edit -p two.kdbx GitHub >/dev/null
printf '%s\n' "$pw" | cli export -f xml two.kdbx > "$out/keepassxc-$version.xml"
echo "wrote $out/keepassxc-$version.xml"

# Phase 3: a small database with attachments and nothing that needs KDBX 4 (deleting an entry
# records its previous group, which makes keepassxc save KDBX 4.1). keepassxc-cli 2.7.4 exports it
# as KDBX 3.1 XML: ISO 8601 times and gzip binaries in <Meta><Binaries>. The database above is
# KDBX 4: its XML export has base64 times and <Binary> refs without the pool (the attachments' bytes are not exported).
printf '%s\n%s\n' "$pw" "$pw" | cli db-create -p -t 100 three.kdbx >/dev/null
printf '%s\n%s\n' "$pw" 'files-pw' | cli add -p three.kdbx 'Files' -u filer --url ftp://files.example >/dev/null
printf '%s\n' "$pw" | cli attachment-import three.kdbx Files config.txt config.txt >/dev/null
printf '%s\n' "$pw" | cli attachment-import three.kdbx Files blob.bin blob.bin >/dev/null
printf '%s\n' "$pw" | cli export -f xml three.kdbx > "$out/keepassxc-$version-kdbx3.xml"
echo "wrote $out/keepassxc-$version-kdbx3.xml"
