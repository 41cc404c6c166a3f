#!/usr/bin/env bash
# Whole-process time of everyday commands through the agent (spec/agent.md), beside
# keepassxc-cli and pass on the same 10,000 items, from one run (issue 16's speed targets:
# `coffer show` ≤ 10 ms and `coffer ls` ≤ 30 ms at 10k items; issue 26's: `coffer add` through
# the agent at most 2x `coffer show`, and faster than `pass insert`).
#
#   Benchmarks/agent-compare.sh          # results: Benchmarks/Results/agent-compare.json
#
# coffer: `unlock` once (interactive KDF), then `show ITEM --field password --reveal`, `ls` and
# `add` with no password (the agent writes the add: spec/agent.md §3.2). pass 1.7.4 with a
# gpg key without a passphrase (as if gpg-agent held it): `pass insert -e` and `pass show` over a
# store of the same 10,000 entries, and coffer's `add`/`show` in the same hyperfine run, each
# through `sh -c` with stdin from a file (how pass takes a password). keepassxc-cli has no agent: `show -s -a Password` and `ls -R -f` read the
# password from stdin and run their KDF every time (its decryption time set to 1 s, about
# Coffer's interactive cost). Times are medians of hyperfine runs; this VM's timings vary about
# 2x between runs, so compare within one run. Skips (exit 0) when a tool is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
n=${AGENT_ITEMS:-10000}
runs=${AGENT_RUNS:-20}
for tool in keepassxc-cli hyperfine python3 pass gpg; do
  command -v "$tool" >/dev/null || { echo "agent-compare: $tool is not installed; skipping"; exit 0; }
done
if [ -z "${COFFER:-}" ]; then
  # Built as the README installs it: the Swift runtime and Foundation linked in statically, which
  # halves the start of every process (about 15 ms to 7 ms here: no dynamic symbol binding).
  swift build --scratch-path .build-bench-cli -c release --product coffer --static-swift-stdlib >&2
  COFFER="$(swift build --scratch-path .build-bench-cli -c release --static-swift-stdlib --show-bin-path)/coffer"
fi
work=$(mktemp -d /tmp/coffer-agent.XXXXXX)
export COFFER XDG_RUNTIME_DIR="$work/runtime"
mkdir -m 700 -p "$XDG_RUNTIME_DIR"
trap '"$COFFER" lock --vault "$work/c.coffer" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
printf 'agent-bench-Passw0rd-2026\n' > "$work/pw"
printf 'agent-bench-Passw0rd-2026\nagent-bench-Passw0rd-2026\n' > "$work/pw2"
python3 Benchmarks/peer/make-items.py "$n" "$work/items.xml" "$work/items.csv"
"$COFFER" init --vault "$work/c.coffer" --password-file "$work/pw" --kdf interactive 2>/dev/null
"$COFFER" import "$work/items.csv" --from csv --vault "$work/c.coffer" --password-file "$work/pw" >/dev/null 2>&1
keepassxc-cli import -q -p -t 1000 "$work/items.xml" "$work/k.kdbx" < "$work/pw2" >/dev/null 2>&1
"$COFFER" unlock --vault "$work/c.coffer" --password-file "$work/pw" --timeout 1h 2>/dev/null
item="service-$((n / 2)).example"
# -N: no intermediate shell, so the figures are the coffer process alone. `--version` is the floor:
# starting the process and parsing its arguments, no vault and no agent.
hyperfine -N --warmup 3 --runs "$runs" --style basic --export-json "$work/coffer.json" \
  -n "coffer show (agent)" "$COFFER show $item --field password --reveal --vault $work/c.coffer" \
  -n "coffer ls (agent)" "$COFFER ls --vault $work/c.coffer" \
  -n "coffer show, a substring (agent)" "$COFFER show e-$((n / 2)).ex --field password --reveal --vault $work/c.coffer" \
  -n "coffer --version (process start)" "$COFFER --version" >&2
# Right after another process appended (an add with the password file, not through the agent):
# the agent reads only the new frames before answering.
printf 'appended-secret\n' > "$work/s"
hyperfine -N --warmup 2 --runs "$runs" --style basic --export-json "$work/appended.json" \
  --prepare "$COFFER add appended --secret-file $work/s --vault $work/c.coffer --password-file $work/pw" \
  -n "coffer show after an append (agent)" "$COFFER show $item --field password --reveal --vault $work/c.coffer" >&2
# add beside show, through the agent, in one run (each add appends one item).
hyperfine -N --warmup 3 --runs "$runs" --style basic --export-json "$work/add.json" \
  -n "coffer add (agent)" "$COFFER add added --secret-file $work/s --vault $work/c.coffer" \
  -n "coffer show (agent), beside add" "$COFFER show $item --field password --reveal --vault $work/c.coffer" >&2
# pass: a store of the same entries (encrypted by a few gpg processes at once), its key without
# a passphrase, so neither side asks for anything.
export GNUPGHOME="$work/gnupg" PASSWORD_STORE_DIR="$work/pass"
mkdir -m 700 -p "$GNUPGHOME" "$PASSWORD_STORE_DIR"
gpg --batch --quiet --passphrase '' --quick-gen-key "coffer bench <bench@example.invalid>" ed25519 cert never 2>/dev/null
fingerprint=$(gpg --batch --with-colons --list-keys bench@example.invalid | awk -F: '/^fpr/ {print $10; exit}')
gpg --batch --quiet --passphrase '' --quick-add-key "$fingerprint" cv25519 encr never 2>/dev/null
pass init bench@example.invalid >/dev/null
seq 1 "$n" | xargs -P 2 -I{} sh -c 'printf "pw-{}\n" | gpg --batch --quiet --yes --trust-model always -e -r bench@example.invalid -o "$PASSWORD_STORE_DIR/service-{}.example.gpg"'
hyperfine --warmup 3 --runs "$runs" --style basic --export-json "$work/pass.json" \
  -n "coffer add (agent, via sh)" "$COFFER add added --secret-file $work/s --vault $work/c.coffer" \
  -n "pass insert" "pass insert -e -f added < $work/s" \
  -n "coffer show (agent, via sh)" "$COFFER show $item --field password --reveal --vault $work/c.coffer" \
  -n "pass show" "pass show $item" >&2
hyperfine --warmup 1 --runs 5 --style basic --export-json "$work/keepass.json" \
  -n "keepassxc-cli show" "keepassxc-cli show -q -s -a Password $work/k.kdbx $item < $work/pw" \
  -n "keepassxc-cli ls" "keepassxc-cli ls -q -R -f $work/k.kdbx < $work/pw" >&2
mkdir -p "$root/Benchmarks/Results"
python3 - "$n" "$work/coffer.json" "$work/appended.json" "$work/add.json" "$work/pass.json" "$work/keepass.json" > "$root/Benchmarks/Results/agent-compare.json" <<'PY'
import json, sys
results = [r for f in sys.argv[2:] for r in json.load(open(f))["results"]]
print(json.dumps({"items": int(sys.argv[1]), "medianMilliseconds": {r["command"]: round(r["median"] * 1000, 1) for r in results}}, indent=2))
PY
cat "$root/Benchmarks/Results/agent-compare.json"
