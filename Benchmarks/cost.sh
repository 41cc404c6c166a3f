#!/usr/bin/env bash
# Cost per operation of `coffer` (issue 28): instructions, heap allocations and system calls by
# kind for each named scenario (Benchmarks/Cost/cost.py lists them), against the committed
# baseline Benchmarks/Cost/baseline.json. Counts, not times: callgrind's instruction counts
# repeat to ~0.004 % here, wall-clock times on these shared machines vary 2x.
#
#   Benchmarks/cost.sh            # measure and print the table
#   Benchmarks/cost.sh --check    # CI: fail if instructions rise > 2 %, or allocations or any
#                                 # kind of system call rise at all (prints scenario, old, new)
#   Benchmarks/cost.sh --update   # rewrite the baseline; say why in the commit message
#   Benchmarks/cost.sh --repeat   # measure everything twice and print the differences
#   Benchmarks/cost.sh --only version,ls   # some scenarios (with any of the above)
#   Benchmarks/cost.sh --markdown # the committed baseline as Benchmarks/README.md's table
#
# Measures the binary the README installs (release, --static-swift-stdlib), built here in
# .build-cost unless COFFER names one; cost.py strips a copy (Debian's valgrind refuses the
# release binary's debug info). Needs valgrind, strace, strip (binutils), a C compiler (the
# libsodium-only limit, Cost/aead-limit.c) and python3: installed by scripts/bootstrap.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${1:-}" = --markdown ] && exec python3 Benchmarks/Cost/cost.py --markdown
scripts/bootstrap valgrind strace binutils gcc python3
if [ -z "${COFFER:-}" ]; then
  swift build -c release --product coffer --static-swift-stdlib --scratch-path .build-cost >&2
  COFFER="$(swift build -c release --static-swift-stdlib --scratch-path .build-cost --show-bin-path)/coffer"
fi
exec python3 Benchmarks/Cost/cost.py --coffer "$COFFER" "$@"
