#!/usr/bin/env bash
# Benchmark regression check, called by .ci/run.
#
# Builds the benchmark sub-package (release), runs every suite once with the short CI profile
# (COFFER_BENCH_CI=1: a few iterations each, 100k-item sizes skipped) and fails if any
# benchmark's mallocCountTotal (p90) is more than 3 % above the committed figure in
# Benchmarks/Thresholds/. Wall-clock times are printed for information only: on a shared
# 2-core VM they vary 2x between runs, so they never fail the build.
#
# After an intended change in allocation behaviour, record new thresholds (and commit them):
#   Benchmarks/ci-check.sh --update
# Re-check the last run against edited thresholds without running again:
#   Benchmarks/ci-check.sh --check-only
#
# Needs no system packages beyond scripts/bootstrap's own (libsodium-dev, libzxcvbn-dev, libargon2-dev,
# pkg-config): package-benchmark's MallocInterposer trait is built from source (no jemalloc).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

export COFFER_BENCH_CI=1
# Dictionary/Set iteration order, and so the allocation count of a sort or a rehash, is fixed.
export SWIFT_DETERMINISTIC_HASHING=1

scripts/bootstrap

bench() {
  swift package --package-path Benchmarks --scratch-path Benchmarks/.build \
    --allow-writing-to-package-directory benchmark "$@"
}

# Only these two metrics in CI: peak-memory sampling runs a background thread whose own
# allocations would be counted and make mallocCountTotal depend on the benchmark's duration.
metrics=(--metric mallocCountTotal --metric wallClock)

start=$SECONDS
if [ "${1:-}" = "--update" ]; then
  rm -f Benchmarks/Thresholds/*.p90.json
  bench thresholds update "${metrics[@]}" --path "$root/Benchmarks/Thresholds" --no-progress
  # Keep only the gated metric in the committed files.
  python3 - "$root/Benchmarks/Thresholds" <<'PY'
import json, pathlib, sys
for f in pathlib.Path(sys.argv[1]).glob("*.p90.json"):
    data = json.loads(f.read_text())
    f.write_text(json.dumps({"mallocCountTotal": data["mallocCountTotal"]}, indent=2) + "\n")
PY
  echo "ci-check: thresholds updated in Benchmarks/Thresholds ($((SECONDS - start)) s); review and commit them"
  exit 0
fi

if [ "${1:-}" != "--check-only" ]; then   # --check-only: re-check the last run's baseline
  echo "== benchmarks: one run, CI profile (times are informational)"
  bench baseline update ci "${metrics[@]}" --no-progress --quiet
fi
bench baseline read ci --no-progress --format markdown | grep -aE '^(#|\| (Time|Malloc))' || true

echo "== benchmarks: mallocCountTotal against Benchmarks/Thresholds"
status=0
log=Benchmarks/.build/ci-check.log
mkdir -p Benchmarks/.build
bench thresholds check ci --path "$root/Benchmarks/Thresholds" --no-progress 2>&1 | tee "$log" || status=$?
# `swift package` exits 1 for regressions and improvements alike, so read the verdict: only
# "WORSE" (or a failure without a verdict) fails; fewer allocations than recorded pass, and
# `--update` lowers the thresholds when convenient.
if [ "$status" -ne 0 ]; then
  if grep -aq "is WORSE than" "$log" || ! grep -aq "is BETTER than" "$log"; then
    echo "ci-check: FAILED (mallocCountTotal above Benchmarks/Thresholds, or the run failed; status $status)" >&2
    exit 1
  fi
  echo "ci-check: fewer allocations than the thresholds record (consider Benchmarks/ci-check.sh --update)"
fi
echo "ci-check: mallocCountTotal within thresholds ($((SECONDS - start)) s)"
