#!/usr/bin/env bash
# The AutoFill extension's path at 10,000 items (spec/unlock.md §11, issue 27): open the vault
# with the device key (no key derivation), find the logins for one URL, read one password.
# Whole-process time (hyperfine) and peak memory (the process's own ru_maxrss, and GNU time's
# maximum resident set) of Examples/VaultApp's VaultAutoFill, release build; beside it, the same
# open with the master password (the default KDF, 16 passes over 64 MiB) for comparison. Then a
# passkey provider extension's path (issue 37: under 50 ms and 32 MiB at 10k items): the device
# key opens the vault, the logins of the relying party's site are found, one passkey signs.
#
#   Benchmarks/extension-path.sh          # results: Benchmarks/Results/extension-path.json
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
n=${EXTENSION_ITEMS:-10000}
for tool in hyperfine python3; do
  command -v "$tool" >/dev/null || { echo "extension-path: $tool is not installed; skipping"; exit 0; }
done
swift build -c release --package-path Examples/VaultApp --scratch-path Examples/VaultApp/.build-release --product VaultAutoFill >&2
fill="$(swift build -c release --package-path Examples/VaultApp --scratch-path Examples/VaultApp/.build-release --show-bin-path)/VaultAutoFill"
if [ -z "${COFFER:-}" ]; then
  swift build --scratch-path .build-bench-cli -c release --product coffer --static-swift-stdlib >&2
  COFFER="$(swift build --scratch-path .build-bench-cli -c release --static-swift-stdlib --show-bin-path)/coffer"
fi
work=$(mktemp -d /tmp/coffer-extension.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -m 700 "$work/keys"
printf 'extension-bench-Passw0rd-2026\n' > "$work/pw"
python3 Benchmarks/peer/make-items.py "$n" "$work/items.xml" "$work/items.csv"
"$COFFER" init --vault "$work/v.coffer" --password-file "$work/pw" 2>/dev/null   # the default KDF
"$COFFER" import "$work/items.csv" --from csv --vault "$work/v.coffer" --password-file "$work/pw" >/dev/null 2>&1
"$fill" enrol "$work/v.coffer" "$work/keys" "$work/pw"
url="https://site$((n / 2)).example/signin?x=1"
"$fill" fill "$work/v.coffer" "$work/keys" "$url" 2> "$work/fill.err"
cat "$work/fill.err" >&2
peak_self=$(sed -n 's/.*peak memory: \([0-9]*\) KiB.*/\1/p' "$work/fill.err")
peak_time=0
if [ -x /usr/bin/time ]; then
  /usr/bin/time -f '%M' -o "$work/time" "$fill" fill "$work/v.coffer" "$work/keys" "$url" >/dev/null 2>&1 || true
  peak_time=$(tail -1 "$work/time")
fi
hyperfine -N --warmup 3 --runs "${EXTENSION_RUNS:-20}" --style basic --export-json "$work/fill.json" \
  -n "extension: device key, find by URL, one password" "$fill fill $work/v.coffer $work/keys $url" >&2
rp="site$((n / 2)).example"
"$fill" add-passkey "$work/v.coffer" "$work/pw" "https://$rp/" >/dev/null
"$fill" assert "$work/v.coffer" "$work/keys" "$rp" 2> "$work/assert.err" >/dev/null
cat "$work/assert.err" >&2
passkey_peak=$(sed -n 's/.*peak memory: \([0-9]*\) KiB.*/\1/p' "$work/assert.err")
hyperfine -N --warmup 3 --runs "${EXTENSION_RUNS:-20}" --style basic --export-json "$work/assert.json" \
  -n "passkey extension: device key, find by rp id, one assertion" "$fill assert $work/v.coffer $work/keys $rp" >&2
mkdir -p "$root/Benchmarks/Results"
python3 - "$n" "$work/fill.json" "$peak_self" "${peak_time:-0}" "$work/assert.json" "${passkey_peak:-0}" > "$root/Benchmarks/Results/extension-path.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[2]))["results"][0]
a = json.load(open(sys.argv[5]))["results"][0]
print(json.dumps({"items": int(sys.argv[1]), "medianMilliseconds": round(r["median"] * 1000, 1),
                  "peakKiB": int(sys.argv[3] or 0), "peakKiBByGNUTime": int(sys.argv[4] or 0),
                  "passkeyAssertionMedianMilliseconds": round(a["median"] * 1000, 1), "passkeyAssertionPeakKiB": int(sys.argv[6] or 0)},
                 indent=2))
PY
cat "$root/Benchmarks/Results/extension-path.json"
