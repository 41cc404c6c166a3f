#!/usr/bin/env bash
# Removing a member from a team vault of 10,000 items against Debian's `pass` 1.7.4 re-encrypting
# a 10,000-entry store to the remaining keys (issue 41, spec/team.md §4), as medians from one
# invocation and their ratio pass / coffer. Hand-run, not in CI (the pass side takes minutes).
#
#   Benchmarks/team-vs-pass.sh                      # results: Benchmarks/Results/team-vs-pass.json
#   COFFER=path/to/coffer Benchmarks/team-vs-pass.sh # another binary (no build)
#   TEAM_ITEMS=1000 TEAM_RUNS=5 TEAM_PASS_RUNS=3 Benchmarks/team-vs-pass.sh
#
# Three members on each side, alice, bob and carol; carol is removed.
# - pass: one GnuPG key each (ed25519 for certification, a cv25519 subkey for encryption, no
#   passphrase), each made in its own throwaway GNUPGHOME; alice's keyring holds her secret key and
#   bob's and carol's public keys (signed locally with hers, so valid). The store is `pass init alice bob carol`, its
#   entries (password, login, url; the same items as coffer's) written as .gpg files directly by
#   `gpg --encrypt-files -r alice -r bob -r carol` (batches of 500 files a process, two at a time,
#   --compress-algo=none as pass uses). Timed: `pass init alice bob`, which decrypts every entry
#   and encrypts it again to the two remaining keys (pass's reencrypt_path: a few gpg processes per
#   entry).
# - coffer: each person has a vault of their own (separate HOME, XDG_DATA_HOME and a 0700
#   XDG_RUNTIME_DIR, no agent) made with `init --kdf insecure-test-only` for a fast setup. The KDF
#   plays no part in the removal beyond one unlock of alice's own vault per run (with this KDF,
#   well under a millisecond). alice runs `team create`, `team add bob KEY`, `team add carol KEY`
#   (KEY from each one's `coffer team key`) and imports the items (`coffer import --from csv
#   --vault TEAM`, Benchmarks/peer/make-items.py's CSV). Timed: `coffer team remove carol --team
#   TEAM --password-file F`: a new vault key, every record sealed again in one atomic replace, the
#   removal note added, and the list of items carol could read printed (to /dev/null).
# Each timed run starts from a pristine copy (hyperfine --prepare, not timed). After the last run
# the script checks the outcome: carol's key no longer decrypts a pass entry and carol's identity
# no longer opens the team vault (`coffer ls` exits 77), while alice (and bob) still can; both
# were checked to work for carol before the removal.
#
# Environment: TEAM_ITEMS (default 10000), TEAM_RUNS (coffer runs, default 5), TEAM_PASS_RUNS
# (pass runs, default 5: about 5 minutes each at 10k on this VM), COFFER (a built coffer;
# default: built here as the README installs it, release with --static-swift-stdlib, under
# .build-release). Passwords go through files only, never argv. Skips (exit 0) when a tool is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
n=${TEAM_ITEMS:-10000}
runs=${TEAM_RUNS:-5}
pass_runs=${TEAM_PASS_RUNS:-5}
for tool in pass gpg gpgconf hyperfine python3; do
  command -v "$tool" >/dev/null || { echo "team-vs-pass: $tool is not installed (apt-get install pass hyperfine); skipping"; exit 0; }
done
if [ -z "${COFFER:-}" ]; then
  swift build --scratch-path .build-release -c release --product coffer --static-swift-stdlib >&2
  COFFER="$(swift build --scratch-path .build-release -c release --static-swift-stdlib --show-bin-path)/coffer"
fi
[ -x "$COFFER" ] || { echo "team-vs-pass: no coffer binary at $COFFER; skipping"; exit 0; }

work=$(mktemp -d /tmp/coffer-team.XXXXXX)
cleanup() {
  for p in alice bob carol; do
    [ -d "$work/gpg-$p" ] && GNUPGHOME="$work/gpg-$p" gpgconf --kill gpg-agent >/dev/null 2>&1 || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
export COFFER
log() { echo "team-vs-pass: $*" >&2; }

python3 Benchmarks/peer/make-items.py "$n" "$work/items.xml" "$work/items.csv"

# ---- coffer: three people, each with a vault of their own ----
for p in alice bob carol; do
  mkdir -p "$work/$p/home" "$work/$p/data"
  mkdir -m 700 "$work/$p/runtime"
  printf '%s-team-bench-Passw0rd-2026\n' "$p" > "$work/$p/pw"
  chmod 600 "$work/$p/pw"
done
as() { # person command… : coffer as that person (their own vault is the default path)
  local p=$1; shift
  env -u COFFER_VAULT HOME="$work/$p/home" XDG_DATA_HOME="$work/$p/data" XDG_RUNTIME_DIR="$work/$p/runtime" "$@"
}
team="$work/team/team.coffer"
mkdir -p "$work/team"
log "coffer: three vaults, a team vault of $n items"
for p in alice bob carol; do
  as "$p" "$COFFER" init --kdf insecure-test-only --password-file "$work/$p/pw" >/dev/null 2>&1
done
bob_key=$(as bob "$COFFER" team key --password-file "$work/bob/pw" 2>/dev/null)
carol_key=$(as carol "$COFFER" team key --password-file "$work/carol/pw" 2>/dev/null)
as alice "$COFFER" team create "$team" --name alice --password-file "$work/alice/pw" >/dev/null 2>&1
as alice "$COFFER" team add bob "$bob_key" --team "$team" --password-file "$work/alice/pw" >/dev/null 2>&1
as alice "$COFFER" team add carol "$carol_key" --team "$team" --password-file "$work/alice/pw" >/dev/null 2>&1
as alice "$COFFER" import "$work/items.csv" --from csv --vault "$team" --password-file "$work/alice/pw" >/dev/null 2>&1
count_items() { # person : the number of items that person lists in the team vault
  as "$1" "$COFFER" ls --json --vault "$team" --password-file "$work/$1/pw" 2>/dev/null \
    | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'
}
[ "$(count_items carol)" = "$n" ] || { log "carol does not list $n items before the removal"; exit 1; }
cp -a "$work/team" "$work/team.pristine"
coffer_bytes=$(stat -c %s "$team")
coffer_du=$(du -sk "$work/team" | cut -f1)

# ---- pass: three GnuPG keys, a store of the same entries ----
log "pass: three GnuPG keys, a store of $n entries"
fpr() { GNUPGHOME="$work/gpg-$1" gpg --batch --with-colons --list-keys "$1@team.invalid" | awk -F: '/^fpr/ {print $10; exit}'; }
for p in alice bob carol; do
  mkdir -m 700 "$work/gpg-$p"
  GNUPGHOME="$work/gpg-$p" gpg --batch --quiet --passphrase '' --quick-gen-key "$p <$p@team.invalid>" ed25519 cert never 2>/dev/null
  GNUPGHOME="$work/gpg-$p" gpg --batch --quiet --passphrase '' --quick-add-key "$(fpr "$p")" cv25519 encr never 2>/dev/null
done
for p in bob carol; do
  GNUPGHOME="$work/gpg-$p" gpg --batch --export "$p@team.invalid" | GNUPGHOME="$work/gpg-alice" gpg --batch --quiet --import 2>/dev/null
  GNUPGHOME="$work/gpg-alice" gpg --batch --quiet --yes --quick-lsign-key "$(fpr "$p")" >/dev/null 2>&1
done
export GNUPGHOME="$work/gpg-alice" PASSWORD_STORE_DIR="$work/store"
pass init alice@team.invalid bob@team.invalid carol@team.invalid >/dev/null
mkdir "$work/plain"
python3 - "$work/items.csv" "$work/plain" <<'PY'
import csv, sys
with open(sys.argv[1], newline="") as f:
    for row in csv.DictReader(f):
        with open(f"{sys.argv[2]}/{row['title']}", "w") as out:
            out.write(f"{row['password']}\nlogin: {row['username']}\nurl: {row['url']}\n")
PY
(cd "$work/plain" && find . -type f -printf '%f\n' | xargs -P 2 -n 500 \
  gpg --batch --quiet --yes --compress-algo=none --no-encrypt-to \
      -r alice@team.invalid -r bob@team.invalid -r carol@team.invalid --encrypt-files)
find "$work/plain" -name '*.gpg' -exec mv -t "$work/store" {} +
[ "$(find "$work/store" -name '*.gpg' | wc -l)" = "$n" ] || { log "the store does not hold $n entries"; exit 1; }
entry=service-$((n / 2)).example
expected=$(head -1 "$work/plain/$entry")
rm -rf "$work/plain"
carol_decrypts() { GNUPGHOME="$work/gpg-carol" gpg --batch --quiet -d "$work/store/$1.gpg" 2>/dev/null | head -1; }
[ "$(carol_decrypts "$entry")" = "$expected" ] || { log "carol cannot decrypt $entry before the removal"; exit 1; }
cp -a "$work/store" "$work/store.pristine"
pass_bytes=$(du -sk --apparent-size "$work/store" | cut -f1)
pass_du=$(du -sk "$work/store" | cut -f1)

# ---- timing ----
sync
log "timing coffer team remove ($runs runs)"
hyperfine --runs "$runs" --style basic --export-json "$work/coffer.json" \
  --prepare "rm -rf $work/team && cp -a $work/team.pristine $work/team" \
  -n "coffer team remove carol" \
  "env -u COFFER_VAULT HOME=$work/alice/home XDG_DATA_HOME=$work/alice/data XDG_RUNTIME_DIR=$work/alice/runtime $COFFER team remove carol --team $team --password-file $work/alice/pw" >&2
log "timing pass init (re-encrypting $n entries, $pass_runs runs)"
hyperfine --runs "$pass_runs" --style basic --export-json "$work/pass.json" \
  --prepare "rm -rf $work/store && cp -a $work/store.pristine $work/store" \
  -n "pass init alice bob" \
  "pass init alice@team.invalid bob@team.invalid" >&2

# ---- the outcome of the last run of each ----
log "checking the outcome"
status=0
as carol "$COFFER" ls --vault "$team" --password-file "$work/carol/pw" >/dev/null 2>&1 || status=$?
[ "$status" = 77 ] || { log "carol's ls of the team vault exited $status, not 77"; exit 1; }
[ "$(count_items alice)" = "$((n + 1))" ] || { log "alice does not list $n items and the removal note"; exit 1; }
[ "$(count_items bob)" = "$((n + 1))" ] || { log "bob does not list $n items and the removal note"; exit 1; }
[ -z "$(carol_decrypts "$entry")" ] || { log "carol still decrypts $entry"; exit 1; }
[ "$(carol_decrypts service-0.example)" = "" ] || { log "carol still decrypts service-0.example"; exit 1; }
[ "$(pass show "$entry" | head -1)" = "$expected" ] || { log "alice cannot read $entry"; exit 1; }
[ "$(cat "$work/store/.gpg-id" | wc -l)" = 2 ] || { log "the store's .gpg-id does not name two keys"; exit 1; }
[ -z "$(find "$work/store" -name '*.tmp.*')" ] || { log "pass left temporary files"; exit 1; }
coffer_after=$(stat -c %s "$team")
log "checked: carol refused by both (coffer exit 77; gpg cannot decrypt), alice and bob still read them"

mkdir -p "$root/Benchmarks/Results"
python3 - "$n" "$work/coffer.json" "$work/pass.json" "$coffer_bytes" "$coffer_du" "$coffer_after" "$pass_bytes" "$pass_du" \
  > "$root/Benchmarks/Results/team-vs-pass.json" <<'PY'
import datetime, json, subprocess, sys
n = int(sys.argv[1])
c = json.load(open(sys.argv[2]))["results"][0]
p = json.load(open(sys.argv[3]))["results"][0]
version = subprocess.run(["pass", "version"], capture_output=True, text=True).stdout
gpg = subprocess.run(["gpg", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
print(json.dumps({
    "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    "items": n,
    "pass": "pass v1.7.4 (Debian), " + gpg + ", ed25519/cv25519 keys",
    "coffer": {"command": "coffer team remove carol", "runs": len(c["times"]), "median_s": round(c["median"], 4),
               "min_s": round(c["min"], 4), "max_s": round(c["max"], 4),
               "team_vault_bytes": int(sys.argv[4]), "team_vault_du_kib": int(sys.argv[5]),
               "team_vault_bytes_after": int(sys.argv[6])},
    "pass_init": {"command": "pass init alice bob (re-encrypting every entry)", "runs": len(p["times"]),
                  "median_s": round(p["median"], 3), "min_s": round(p["min"], 3), "max_s": round(p["max"], 3),
                  "store_apparent_kib": int(sys.argv[7]), "store_du_kib": int(sys.argv[8])},
    "ratio_pass_over_coffer": round(p["median"] / c["median"], 1),
}, indent=2))
PY
cat "$root/Benchmarks/Results/team-vs-pass.json"
python3 - "$root/Benchmarks/Results/team-vs-pass.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c, p = d["coffer"], d["pass_init"]
print(f"{d['items']} items: coffer team remove {c['median_s']*1000:.0f} ms (median of {c['runs']}), "
      f"pass init {p['median_s']:.1f} s (median of {p['runs']}): pass / coffer = {d['ratio_pass_over_coffer']}x")
print(f"on disk: team vault {c['team_vault_bytes']/1e6:.1f} MB; pass store {p['store_apparent_kib']/1024:.1f} MiB of files, "
      f"{p['store_du_kib']/1024:.1f} MiB of blocks")
PY
