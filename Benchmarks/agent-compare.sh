#!/usr/bin/env bash
# Whole-process time of everyday commands through the agent (spec/agent.md), beside
# keepassxc-cli on the same 10,000 items, from one run (issue 16's speed targets:
# `coffer show` ≤ 10 ms and `coffer ls` ≤ 30 ms at 10k items).
#
#   Benchmarks/agent-compare.sh          # results: Benchmarks/Results/agent-compare.json
#
# coffer: `unlock` once (interactive KDF), then `show ITEM --field password --reveal` and `ls`
# with no password. keepassxc-cli has no agent: `show -s -a Password` and `ls -R -f` read the
# password from stdin and run their KDF every time (its decryption time set to 1 s, about
# Coffer's interactive cost). Times are medians of hyperfine runs; this VM's timings vary about
# 2x between runs, so compare within one run. Skips (exit 0) when a tool is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
n=${AGENT_ITEMS:-10000}
runs=${AGENT_RUNS:-20}
for tool in keepassxc-cli hyperfine python3; do
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
hyperfine --warmup 1 --runs 5 --style basic --export-json "$work/keepass.json" \
  -n "keepassxc-cli show" "keepassxc-cli show -q -s -a Password $work/k.kdbx $item < $work/pw" \
  -n "keepassxc-cli ls" "keepassxc-cli ls -q -R -f $work/k.kdbx < $work/pw" >&2
mkdir -p "$root/Benchmarks/Results"
python3 - "$n" "$work/coffer.json" "$work/appended.json" "$work/keepass.json" > "$root/Benchmarks/Results/agent-compare.json" <<'PY'
import json, sys
results = [r for f in sys.argv[2:] for r in json.load(open(f))["results"]]
print(json.dumps({"items": int(sys.argv[1]), "medianMilliseconds": {r["command"]: round(r["median"] * 1000, 1) for r in results}}, indent=2))
PY
cat "$root/Benchmarks/Results/agent-compare.json"
