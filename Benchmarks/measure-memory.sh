#!/usr/bin/env bash
# Peak memory while a large vault is open (spec/format.md §9.1), called by .ci/run.
#
#   Benchmarks/measure-memory.sh [ITEMS]     (default 100000)
#
# Builds the release `coffer` (or takes the binary COFFER names: CI passes the one it built for
# Benchmarks/cost.sh, the README's installed form, rather than build the release a second time), writes ITEMS login items as a CSV (seeded, reproducible), imports
# them into a vault with the cheapest KDF (so the KDF's memory does not hide the index's), and
# measures the peak resident set (getrusage of each child) of:
#   - `coffer info` on an empty vault: the process itself (runtime, libraries);
#   - `coffer info` on the full vault: unlock, replay, index — the vault while open;
#   - `coffer ls` on the full vault (information: it also builds every summary and the output).
# Fails unless (full − empty) ≤ 3 × the CSV's size, the bound of the format issue.
# Times are printed for information only.
set -euo pipefail
cd "$(dirname "$0")/.."
items=${1:-100000}

scripts/bootstrap
if [ -n "${COFFER:-}" ]; then
  coffer=$(realpath "$COFFER")
else
  swift build -c release --product coffer >/dev/null
  coffer=$PWD/.build/release/coffer
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 - "$coffer" "$work" "$items" <<'EOF'
import os, random, subprocess, sys, time

coffer, work, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = random.Random(20261122)
alphabet = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789-_!@#%"
csv = os.path.join(work, "items.csv")
with open(csv, "w") as f:
    f.write("title,username,password,url,notes,tags\n")
    for n in range(count):
        password = "".join(rng.choice(alphabet) for _ in range(20))
        notes = ("note " * rng.randint(5, 30)).strip() if n % 3 == 0 else ""
        tags = "work" if n % 2 == 0 else ""
        f.write(f"service-{n}.example,user{n}@example.com,{password},https://site{n}.example/login,{notes},{tags}\n")
csv_bytes = os.path.getsize(csv)
pw = os.path.join(work, "pw")
with open(pw, "w") as f:
    f.write("amber tundra quiver lantern\n")

def run(*args):
    """Runs coffer; returns (peak RSS in bytes, seconds)."""
    start = time.monotonic()
    child = subprocess.Popen([coffer, *args, "--password-file", pw], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.monotonic() - start
    err = child.stderr.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"coffer {' '.join(args)} failed: {err}")
    return usage.ru_maxrss * 1024, elapsed

empty = os.path.join(work, "empty.coffer")
full = os.path.join(work, "full.coffer")
for path in (empty, full):
    run("init", "--vault", path, "--kdf", "insecure-test-only")
_, import_s = run("import", csv, "--from", "csv", "--vault", full)
base, _ = run("info", "--vault", empty)
opened, open_s = run("info", "--vault", full)
listed, list_s = run("ls", "--vault", full)
mb = lambda b: f"{b / 1e6:.1f} MB"
index = opened - base
print(f"{count} items: CSV {mb(csv_bytes)}, vault file {mb(os.path.getsize(full))} (import {import_s:.2f} s)")
print(f"peak RSS, coffer info, empty vault:  {mb(base)}")
print(f"peak RSS, coffer info, full vault:   {mb(opened)} ({open_s:.2f} s)  -> open vault {mb(index)} = {index / csv_bytes:.2f} x CSV")
print(f"peak RSS, coffer ls, full vault:     {mb(listed)} ({list_s:.2f} s)  -> {(listed - base) / csv_bytes:.2f} x CSV (information)")
if index > 3 * csv_bytes:
    sys.exit(f"FAIL: the open vault takes {mb(index)}, more than 3 x the CSV ({mb(3 * csv_bytes)})")
print("OK: within 3 x the plaintext (spec/format.md §9.1)")
EOF
