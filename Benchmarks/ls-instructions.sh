#!/usr/bin/env bash
# Instructions per item of `coffer ls` and `coffer ls --json` against opening the vault alone
# (issue 24 item 9: listing should cost at most 2x what opening costs per item).
#
#   Benchmarks/ls-instructions.sh            # 10,000 items; COFFER=path to measure a built binary
#   LS_ITEMS=100000 Benchmarks/ls-instructions.sh
#
# Builds `coffer` as the README installs it (release, --static-swift-stdlib) unless COFFER is
# set, strips a copy (valgrind refuses the release binary's debug info), makes two vaults with
# the cheap test KDF (`init --kdf insecure-test-only`): 1 item and LS_ITEMS items (service,
# username, 20-character password, URL, a note for one in three, a tag for one in two), and runs
# under `valgrind --tool=callgrind` (every thread counted), with --password-file and no agent
# (XDG_RUNTIME_DIR unset), output to /dev/null:
#   open     `coffer info`  (unlock, replay and authenticate every record, print counts)
#   ls       `coffer ls`
#   ls-json  `coffer ls --json`
# Per item = (Ir at LS_ITEMS - Ir at 1 item) / (LS_ITEMS - 1): the process start, the KDF and
# everything else that does not grow with the vault cancels out. Callgrind counts are
# deterministic to well under 1 % between runs.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${LS_ITEMS:-10000}
command -v valgrind >/dev/null || { echo "ls-instructions: valgrind is not installed; skipping"; exit 0; }
if [ -z "${COFFER:-}" ]; then
  swift build --scratch-path .build-bench-cli -c release --product coffer --static-swift-stdlib >&2
  COFFER="$(swift build --scratch-path .build-bench-cli -c release --static-swift-stdlib --show-bin-path)/coffer"
fi
work=$(mktemp -d /tmp/coffer-lsinstr.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp "$COFFER" "$work/coffer"
strip "$work/coffer"
bin=$work/coffer
printf 'ls-bench-Passw0rd-2026\n' > "$work/pw"

python3 - "$work" "$n" <<'PY'
import random, sys
work, count = sys.argv[1], int(sys.argv[2])
for name, size in (("small", 1), ("big", count)):
    rng = random.Random(20261125)
    with open(f"{work}/{name}.csv", "w") as f:
        f.write("title,username,password,url,notes,tags\n")
        for n in range(size):
            password = "".join(rng.choice("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(20))
            notes = "note " * rng.randint(4, 20) if n % 3 == 0 else ""
            tag = "work" if n % 2 == 0 else ""
            f.write(f"service-{n}.example,user{n}@example.com,{password},https://site{n}.example/login,{notes.strip()},{tag}\n")
PY
for name in small big; do
  env -u XDG_RUNTIME_DIR "$bin" init --vault "$work/$name.coffer" --password-file "$work/pw" --kdf insecure-test-only 2>/dev/null
  env -u XDG_RUNTIME_DIR "$bin" import "$work/$name.csv" --from csv --vault "$work/$name.coffer" --password-file "$work/pw" >/dev/null 2>&1
done

instructions() { # vault command... : total Ir of one run
  local vault=$1; shift
  env -u XDG_RUNTIME_DIR valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" \
    "$bin" "$@" --vault "$work/$vault.coffer" --password-file "$work/pw" >/dev/null 2>"$work/cg.err" \
    || { cat "$work/cg.err" >&2; exit 1; }
  awk '/^(summary|totals):/ { print $2; exit }' "$work/cg.out"
}

printf '%-8s %16s %16s %12s %10s\n' command "Ir (1 item)" "Ir ($n items)" "Ir per item" "÷ open"
open_per_item=
for spec in "open:info" "ls:ls" "ls-json:ls --json"; do
  label=${spec%%:*}
  read -r -a args <<< "${spec#*:}"
  small=$(instructions small "${args[@]}")
  big=$(instructions big "${args[@]}")
  per_item=$(( (big - small) / (n - 1) ))
  [ -n "$open_per_item" ] || open_per_item=$per_item
  printf '%-8s %16d %16d %12d %9.2fx\n' "$label" "$small" "$big" "$per_item" \
    "$(python3 -c "print($per_item / $open_per_item)")"
done
