#!/usr/bin/env bash
# The cost harness over past commits (issue 28): for each of the last N commits of a branch,
# oldest first, checks it out in a work tree of its own, builds `coffer` there (release, static
# stdlib, one scratch directory kept across commits so each build is incremental), measures it
# with today's Benchmarks/Cost/cost.py (the same scenarios for every commit) and appends one row
# per scenario to Benchmarks/Cost/history.csv. Commits already in the file are skipped, so an
# interrupted run resumes; a commit that does not build is noted on stderr and skipped; a
# scenario an older commit cannot run (a command it lacks) is left out. Then redraws the chart
# (Benchmarks/Cost/chart.py -> Benchmarks/Cost/history.svg).
#
#   Benchmarks/cost-history.sh [N [BRANCH]]    # default: 40 commits of main
#   COST_ONLY=version,open-1,ls Benchmarks/cost-history.sh 5   # fewer scenarios, faster
#
# Each commit costs a build (1-10 min on the shared 2-core machine) plus the harness (~4 min
# for every scenario); the work tree and its build stay in .build-history/ for the next run.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
count=${1:-40}
branch=${2:-main}
history=$root/Benchmarks/Cost/history.csv
tree=$root/.build-history/tree
scripts/bootstrap valgrind strace binutils gcc python3
[ -f "$history" ] || echo "commit,date,subject,scenario,instructions,allocations,syscalls" > "$history"
if [ ! -e "$tree/.git" ]; then
  mkdir -p "$root/.build-history"
  git worktree add --detach "$tree" "$branch" >&2
fi
out=$(mktemp /tmp/coffer-cost-history.XXXXXX.json)
trap 'rm -f "$out"' EXIT
for commit in $(git rev-list --first-parent --reverse -n "$count" "$branch"); do
  short=${commit:0:7}
  if grep -q "^$short," "$history"; then continue; fi
  # `touch .build-history/stop` ends the run after the commit being measured.
  if [ -e "$root/.build-history/stop" ]; then rm -f "$root/.build-history/stop"; echo "cost-history: stopped" >&2; break; fi
  echo "cost-history: $short $(git log -1 --format=%s "$commit" | cut -c1-70)" >&2
  git -C "$tree" checkout -q --detach "$commit"
  if ! swift build --package-path "$tree" -c release --product coffer --static-swift-stdlib \
       --scratch-path "$root/.build-history/build" >"$root/.build-history/build.log" 2>&1; then
    echo "cost-history: $short does not build; skipped (.build-history/build.log)" >&2
    continue
  fi
  bin="$(swift build --package-path "$tree" -c release --static-swift-stdlib --scratch-path "$root/.build-history/build" --show-bin-path)/coffer"
  python3 Benchmarks/Cost/cost.py --coffer "$bin" --keep-going --out "$out" \
    ${COST_ONLY:+--only "$COST_ONLY"} >/dev/null
  python3 - "$out" "$history" "$short" "$(git log -1 --format=%cI "$commit")" "$(git log -1 --format=%s "$commit")" <<'PY'
import csv, json, sys
report, history, commit, date, subject = sys.argv[1:]
with open(report) as f:
    r = json.load(f)
rows = [(name, s["instructions"], s["allocations"], sum(s["syscalls"].values())) for name, s in r["scenarios"].items()]
rows.append(("binary-stripped-bytes", r["binary"]["stripped-bytes"], 0, 0))
rows.append(("aead-limit-per-record", r["derived"]["aead-limit-per-record"], 0, 0))
if "open-per-record" in r["derived"]:
    rows.append(("open-per-record", r["derived"]["open-per-record"], 0, 0))
with open(history, "a", newline="") as f:
    w = csv.writer(f)
    for name, ir, allocs, calls in rows:
        w.writerow([commit, date, subject[:80], name, ir, allocs, calls])
PY
done
python3 Benchmarks/Cost/chart.py "$history" Benchmarks/Cost/history.svg
echo "cost-history: $(cut -d, -f1 "$history" | sort -u | grep -vc commit) commits in $history" >&2
