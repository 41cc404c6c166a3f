#!/usr/bin/env bash
# `coffer audit --hibp` beside `keepassxc-cli analyze --hibp`, from one run: the same 10,000
# entries (Benchmarks/peer/make-items.py, every tenth password made "breached") in a Coffer vault
# and a KeePass database, checked against the same generated Pwned Passwords SHA-1 list of each
# size in HIBP_LINES (random hashes plus the breached ones, sorted by hash, CR LF lines, as the
# downloader writes it; Benchmarks/hibp/hibp-gen.c writes it sorted without sorting).
#
# Times are whole processes (unlock included), wall clock, median of HIBP_RUNS (keepassxc-cli
# runs min(HIBP_RUNS, 3) times at 10M lines and above: it reads the whole list every time).
# The list is freshly written, so it is in the page cache for both tools (a warm cache).
# KDFs: Coffer's `interactive` preset (Argon2id t=2, 64 MiB, ~130 ms here); keepassxc-cli's
# database at `import -t 100` (its lowest decryption time), which favours keepassxc-cli.
# Both tools must report the same number of breached entries, or the script fails.
#
# Environment: HIBP_LINES (default "5000000 100000000"), HIBP_ITEMS (10000), HIBP_RUNS (5),
# COFFER (a built coffer binary; default: swift build -c release --product coffer),
# HIBP_WORK (a directory for the lists, default a new one under /tmp; 100M lines take ~4.4 GB,
# deleted at the end). Results: Benchmarks/Results/hibp-compare.json and a table on stdout.
# Not run in CI (minutes and gigabytes); CI runs the tiny case in the test suite instead.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
sizes=(${HIBP_LINES:-5000000 100000000})
items=${HIBP_ITEMS:-10000}
runs=${HIBP_RUNS:-5}

for tool in keepassxc-cli python3 cc; do
  command -v "$tool" >/dev/null || { echo "hibp-compare: $tool is not installed; skipping"; exit 0; }
done
if [ -z "${COFFER:-}" ]; then
  echo "hibp-compare: building coffer (release)" >&2
  swift build -c release --product coffer >&2
  COFFER="$(swift build -c release --show-bin-path)/coffer"
fi

work=${HIBP_WORK:-$(mktemp -d /tmp/coffer-hibp.XXXXXX)}
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
export XDG_RUNTIME_DIR="$work/runtime"
mkdir -m 700 -p "$XDG_RUNTIME_DIR" "$work/out"
printf 'hibp-bench-Passw0rd-2026\n' > "$work/pw"
printf 'hibp-bench-Passw0rd-2026\nhibp-bench-Passw0rd-2026\n' > "$work/pw2"
chmod 600 "$work/pw" "$work/pw2"

cc -O2 -o "$work/hibp-gen" Benchmarks/hibp/hibp-gen.c
python3 Benchmarks/peer/make-items.py "$items" "$work/items.xml" "$work/items.csv"
# Every tenth entry's password is in the list.
python3 - "$work/items.csv" > "$work/known.txt" <<'PY'
import csv, hashlib, sys
rows = list(csv.DictReader(open(sys.argv[1], encoding="utf-8")))
print("\n".join(sorted({hashlib.sha1(r["password"].encode()).hexdigest().upper() for r in rows[::10]})))
PY
"$COFFER" init --vault "$work/c.coffer" --password-file "$work/pw" --kdf interactive 2>/dev/null
"$COFFER" import "$work/items.csv" --from csv --vault "$work/c.coffer" --password-file "$work/pw" >/dev/null
keepassxc-cli import -q -p -t 100 "$work/items.xml" "$work/k.kdbx" < "$work/pw2" >/dev/null 2>&1
# Also through the agent (spec/agent.md): unlocked once, audit then derives no key (one `items` request).
"$COFFER" unlock --vault "$work/c.coffer" --password-file "$work/pw" --timeout 1h 2>/dev/null
trap '"$COFFER" lock --vault "$work/c.coffer" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

# name runs command: runs the command (stdout to out/name), prints the median wall time in seconds.
timed() {
  python3 - "$@" <<'PY'
import statistics, subprocess, sys, time
name, runs, command = sys.argv[1], int(sys.argv[2]), sys.argv[3]
times = []
for _ in range(runs):
    with open(f"{sys.argv[4]}/out/{name}", "wb") as out:
        start = time.perf_counter()
        code = subprocess.run(["bash", "-c", command], stdout=out, stderr=subprocess.DEVNULL).returncode
        times.append(time.perf_counter() - start)
    if code not in (0, 1):
        sys.exit(f"{name}: exit {code}")
print(statistics.median(times))
PY
}

rows=()
for lines in "${sizes[@]}"; do
  echo "== $lines lines: writing the list" >&2
  "$work/hibp-gen" "$lines" 20261125 "$work/known.txt" > "$work/hibp.txt"
  bytes=$(stat -c %s "$work/hibp.txt")
  k_runs=$runs; [ "$lines" -ge 10000000 ] && k_runs=$(( runs < 3 ? runs : 3 ))
  echo "== $lines lines: timing" >&2
  c_breached=$(timed "c-b-$lines" "$runs" "\"$COFFER\" audit --only breached --hibp $work/hibp.txt --json --vault $work/c.coffer --password-file $work/pw" "$work")
  c_agent=$(timed "c-agent-$lines" "$runs" "\"$COFFER\" audit --only breached --hibp $work/hibp.txt --json --vault $work/c.coffer" "$work")
  c_all=$(timed "c-all-$lines" "$runs" "\"$COFFER\" audit --hibp $work/hibp.txt --json --vault $work/c.coffer --password-file $work/pw" "$work")
  c_unlock=$(timed "c-unlock-$lines" "$runs" "\"$COFFER\" info --vault $work/c.coffer --password-file $work/pw" "$work")
  k=$(timed "k-$lines" "$k_runs" "keepassxc-cli analyze -q --hibp $work/hibp.txt $work/k.kdbx < $work/pw" "$work")
  c_found=$(python3 -c 'import json,sys; print(sum(f["finding"] == "breached" for f in json.load(open(sys.argv[1]))["findings"]))' "$work/out/c-b-$lines")
  k_found=$(grep -c "has been leaked" "$work/out/k-$lines" || true)
  [ "$c_found" = "$k_found" ] || { echo "hibp-compare: coffer found $c_found, keepassxc-cli $k_found" >&2; exit 1; }
  rows+=("$lines $bytes $c_breached $c_all $c_unlock $k $c_found $k_runs $c_agent")
  rm -f "$work/hibp.txt"
done

python3 - "$root/Benchmarks/Results/hibp-compare.json" "$items" "$runs" "${rows[@]}" <<'PY'
import datetime, json, subprocess, sys
out, items, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
version = subprocess.run(["keepassxc-cli", "--version"], capture_output=True, text=True).stdout.strip()
results = []
for row in sys.argv[4:]:
    lines, size, cb, ca, cu, k, found, kruns, cagent = row.split()
    results.append({"lines": int(lines), "bytes": int(size), "breached_entries": int(found),
                    "coffer_audit_only_breached_s": float(cb), "coffer_audit_all_checks_s": float(ca),
                    "coffer_unlock_only_s": float(cu), "keepassxc_analyze_hibp_s": float(k),
                    "keepassxc_runs": int(kruns), "ratio": float(k) / float(cb),
                    "coffer_audit_only_breached_agent_s": float(cagent), "ratio_agent": float(k) / float(cagent)})
data = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "keepassxc_cli": version, "items": items, "runs": runs,
        "coffer_kdf": "interactive (Argon2id t=2, m=64 MiB)", "keepassxc_kdf": "import -t 100",
        "results": results}
open(out, "w").write(json.dumps(data, indent=2) + "\n")
print(f"{items} entries, medians (whole process, unlock included, warm page cache); keepassxc-cli {version}")
print(f"{'lines':>11} {'size':>8} | {'coffer breached':>15} {'coffer all':>10} {'(unlock)':>9} | {'keepassxc':>10} | {'ratio':>7} | {'agent':>8} {'ratio':>6} | found")
for r in results:
    print(f"{r['lines']:>11} {r['bytes']/1e9:>6.2f}GB | {r['coffer_audit_only_breached_s']*1000:>12.0f} ms {r['coffer_audit_all_checks_s']*1000:>7.0f} ms"
          f" {r['coffer_unlock_only_s']*1000:>6.0f} ms | {r['keepassxc_analyze_hibp_s']:>8.2f} s | {r['ratio']:>6.0f}x"
          f" | {r['coffer_audit_only_breached_agent_s']*1000:>5.0f} ms {r['ratio_agent']:>5.0f}x | {r['breached_entries']}")
PY
