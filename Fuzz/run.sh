#!/usr/bin/env bash
# Builds and runs Coffer's libFuzzer targets (Fuzz/README.md).
#
#   Fuzz/run.sh [--time S] [--regressions] [--merge] [--no-build] [--build-only] [target…]
#
#   --time S        fuzz each target for S seconds (default 60)
#   --regressions   only replay Fuzz/FailCases/<target>/ and Fuzz/Corpus/<target>/ (no fuzzing)
#   --merge         after fuzzing, merge new coverage from the work corpus into Fuzz/Corpus/<target>/
#   --no-build      use the binaries already in .build-fuzz
#   --build-only    build and stop
#   target…         default: every target (see TARGETS below)
#
# Each target is built alone (swift build -c release --sanitize=fuzzer --sanitize=address
# -Xswiftc -sanitize=fuzzer,address --product <target> --scratch-path .build-fuzz) and run on its seed corpus, its FailCases and a
# git-ignored work corpus (Fuzz/.corpus-work/<target>/), with its dictionary and the limits in
# TARGETS. Exits non-zero if any target crashes, leaks, times out, runs out of memory or breaks
# an invariant; the offending input is left in Fuzz/.corpus-work/artifacts/<target>/ — copy it
# to Fuzz/FailCases/<target>/ and fix the parser. A line per run is appended to
# Fuzz/.corpus-work/stats.tsv (the numbers in Fuzz/README.md come from there).
set -uo pipefail
cd "$(dirname "$0")/.."

# name            max_len  rss_mb  timeout_s  dict
TARGETS="
FuzzVaultReader   16384    2048    10         vault.dict
FuzzVaultRecords  16384    2048    10         records.dict
FuzzItemDecoder   8192     2048    5          item.dict
FuzzPasswordRules 1024     2048    5          rules.dict
FuzzImportCSV     16384    2048    10         csv.dict
FuzzImportBitwardenJSON 16384 2048 10         json.dict
FuzzImport1Password 16384  2048    10         onepassword.dict
FuzzImportKeePassXML 16384 2048  10         keepassxml.dict
FuzzThrottleState 1024     2048    5          throttle.dict
FuzzTOTPURI       4200     2048    5          totp.dict
FuzzAgentMessage  1024     2048    5          agent.dict
FuzzVaultMerge    128      2048    10         merge.dict
FuzzPwnedPasswords 4096    2048    5          pwned.dict
FuzzSiteURL       8192     2048    5          url.dict
FuzzPasskeyOptions 8192    2048    5          passkey.dict
FuzzSSHKey        16384    2048    10         ssh.dict
FuzzSSHAgentMessage 4096   2048    5          sshagent.dict
"

time_s=60 regressions=0 merge=0 build=1 build_only=0 selected=()
while [ $# -gt 0 ]; do
    case "$1" in
        --time) time_s="$2"; shift 2 ;;
        --time=*) time_s="${1#--time=}"; shift ;;
        --regressions) regressions=1; shift ;;
        --merge) merge=1; shift ;;
        --no-build) build=0; shift ;;
        --build-only) build_only=1; shift ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        -*) echo "unknown option $1" >&2; exit 2 ;;
        *) selected+=("$1"); shift ;;
    esac
done

# Targets that exist (a parser's target is added when the parser lands).
available=()
while read -r name _; do
    [ -n "$name" ] && [ -f "Fuzz/$name/main.swift" ] && available+=("$name")
done <<< "$TARGETS"
if [ ${#selected[@]} -eq 0 ]; then selected=("${available[@]}"); fi

scratch=.build-fuzz
# Swift's crash backtracer is slow and confuses ASan; libFuzzer prints the stack of a trap itself.
export SWIFT_BACKTRACE=enable=no
# Known leaks in libraries Coffer cannot fix (Fuzz/lsan.supp says which and why).
export LSAN_OPTIONS="suppressions=$PWD/Fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
work=Fuzz/.corpus-work
mkdir -p "$work/logs"
failed=()

setting() {  # setting <target> <column 2..5>
    awk -v t="$1" -v c="$2" '$1 == t { print $c }' <<< "$TARGETS"
}

for target in "${selected[@]}"; do
    if [ ! -f "Fuzz/$target/main.swift" ]; then echo "== $target: no such target" >&2; failed+=("$target"); continue; fi
    max_len=$(setting "$target" 2) rss=$(setting "$target" 3) timeout=$(setting "$target" 4) dict=$(setting "$target" 5)
    binary="$scratch/release/$target"
    if [ $build = 1 ]; then
        echo "== building $target"
        # SwiftPM passes the two sanitizers as separate -sanitize= flags, in an order that varies
        # from run to run, and the driver hands only the last one to the frontend: a library got
        # either coverage or ASan, never both. The combined flag, given last, instruments everything.
        if ! swift build -c release --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize=fuzzer,address \
                --product "$target" --scratch-path "$scratch" > "$work/logs/$target.build.log" 2>&1; then
            tail -40 "$work/logs/$target.build.log" >&2
            echo "== $target: BUILD FAILED" >&2; failed+=("$target"); continue
        fi
    fi
    [ $build_only = 1 ] && continue
    [ -x "$binary" ] || { echo "== $target: $binary missing (build it first)" >&2; failed+=("$target"); continue; }

    corpus="Fuzz/Corpus/$target" failcases="Fuzz/FailCases/$target" artifacts="$work/artifacts/$target/"
    mkdir -p "$corpus" "$failcases" "$work/$target" "$artifacts"
    common=(-max_len="$max_len" -rss_limit_mb="$rss" -timeout="$timeout" -artifact_prefix="$artifacts" -print_final_stats=1)
    [ -f "Fuzz/$dict" ] && common+=(-dict="Fuzz/$dict")

    if [ $regressions = 1 ]; then
        mapfile -t inputs < <(find "$failcases" "$corpus" -type f ! -name '.*' ! -name '*.md' | sort)
        echo "== $target: replaying ${#inputs[@]} inputs (FailCases and seeds)"
        [ ${#inputs[@]} -eq 0 ] && continue
        if ! "$binary" "${common[@]}" "${inputs[@]}" > "$work/logs/$target.regressions.log" 2>&1; then
            tail -60 "$work/logs/$target.regressions.log" >&2
            echo "== $target: REGRESSION" >&2; failed+=("$target")
        fi
        continue
    fi

    log="$work/logs/$target.$(date +%Y%m%d-%H%M%S).log"
    echo "== fuzzing $target for ${time_s}s (log: $log)"
    # The work corpus comes first: libFuzzer writes new inputs there, never into the repository.
    "$binary" "${common[@]}" -max_total_time="$time_s" "$work/$target" "$corpus" "$failcases" > "$log" 2>&1
    status=$?
    last=$(grep -E '^#[0-9]+' "$log" | tail -1)
    runs=$(awk '/stat::number_of_executed_units/ { print $2 }' "$log")
    echo "   $last"
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$target" "$time_s" "${runs:-?}" "$status" \
        "$(sed -E 's/^#[0-9]+ +[A-Z]+ +//' <<< "$last")" >> "$work/stats.tsv"
    if [ $status -ne 0 ]; then
        grep -E 'ERROR|invariant violated|Fatal error|SUMMARY|Test unit written' "$log" | head -20 >&2
        echo "== $target: FAILED (exit $status); the input is in $artifacts" >&2
        failed+=("$target")
        continue
    fi
    if [ $merge = 1 ]; then
        echo "== merging new coverage of $target into $corpus"
        "$binary" "${common[@]}" -merge=1 "$corpus" "$work/$target" > "$work/logs/$target.merge.log" 2>&1 \
            || { tail -20 "$work/logs/$target.merge.log" >&2; failed+=("$target"); }
    fi
done

if [ ${#failed[@]} -gt 0 ]; then
    echo "== fuzzing FAILED: ${failed[*]}" >&2
    exit 1
fi
echo "== fuzzing OK: ${selected[*]}"
