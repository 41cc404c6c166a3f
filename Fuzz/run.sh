#!/usr/bin/env bash
# Builds and runs Coffer's libFuzzer targets (Fuzz/README.md).
#
#   Fuzz/run.sh [--time S] [--jobs N] [--regressions] [--merge] [--no-build] [--build-only] [target…]
#
#   --time S        fuzz each target for S seconds (default 60)
#   --jobs N        fuzz (or replay) N targets at once (default 1: build a target, fuzz it, then the
#                   next). With N > 1 every target is built first, one at a time; each target's
#                   lines are printed when its run ends, so they come in the order the runs end
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
FuzzFileExtraction 161     2048    10         -
FuzzImportKDBX    32768    2048    10         kdbx.dict
"

time_s=60 jobs=1 regressions=0 merge=0 build=1 build_only=0 selected=()
while [ $# -gt 0 ]; do
    case "$1" in
        --time) time_s="$2"; shift 2 ;;
        --time=*) time_s="${1#--time=}"; shift ;;
        --jobs) jobs="$2"; shift 2 ;;
        --jobs=*) jobs="${1#--jobs=}"; shift ;;
        --regressions) regressions=1; shift ;;
        --merge) merge=1; shift ;;
        --no-build) build=0; shift ;;
        --build-only) build_only=1; shift ;;
        -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
        -*) echo "unknown option $1" >&2; exit 2 ;;
        *) selected+=("$1"); shift ;;
    esac
done
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "--jobs takes a number of targets, 1 or more" >&2; exit 2; }

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

build_target() {  # the existence check and (unless --no-build) the build; 1 if either fails
    local target=$1
    if [ ! -f "Fuzz/$target/main.swift" ]; then echo "== $target: no such target" >&2; return 1; fi
    if [ $build = 1 ]; then
        echo "== building $target"
        # SwiftPM passes the two sanitizers as separate -sanitize= flags, in an order that varies
        # from run to run, and the driver hands only the last one to the frontend: a library got
        # either coverage or ASan, never both. The combined flag, given last, instruments everything.
        if ! swift build -c release --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize=fuzzer,address \
                --product "$target" --scratch-path "$scratch" > "$work/logs/$target.build.log" 2>&1; then
            tail -40 "$work/logs/$target.build.log" >&2
            echo "== $target: BUILD FAILED" >&2; return 1
        fi
    fi
}

fuzz_target() {  # the replay, or the fuzzing and merge, of one built target; 1 if it fails
    local target=$1
    local max_len rss timeout dict
    max_len=$(setting "$target" 2) rss=$(setting "$target" 3) timeout=$(setting "$target" 4) dict=$(setting "$target" 5)
    local binary="$scratch/release/$target"
    [ -x "$binary" ] || { echo "== $target: $binary missing (build it first)" >&2; return 1; }

    local corpus="Fuzz/Corpus/$target" failcases="Fuzz/FailCases/$target" artifacts="$work/artifacts/$target/"
    mkdir -p "$corpus" "$failcases" "$work/$target" "$artifacts"
    local common=(-max_len="$max_len" -rss_limit_mb="$rss" -timeout="$timeout" -artifact_prefix="$artifacts" -print_final_stats=1)
    [ -f "Fuzz/$dict" ] && common+=(-dict="Fuzz/$dict")

    if [ $regressions = 1 ]; then
        local inputs
        mapfile -t inputs < <(find "$failcases" "$corpus" -type f ! -name '.*' ! -name '*.md' | sort)
        echo "== $target: replaying ${#inputs[@]} inputs (FailCases and seeds)"
        [ ${#inputs[@]} -eq 0 ] && return 0
        if ! "$binary" "${common[@]}" "${inputs[@]}" > "$work/logs/$target.regressions.log" 2>&1; then
            tail -60 "$work/logs/$target.regressions.log" >&2
            echo "== $target: REGRESSION" >&2; return 1
        fi
        return 0
    fi

    local log="$work/logs/$target.$(date +%Y%m%d-%H%M%S).log"
    echo "== fuzzing $target for ${time_s}s (log: $log)"
    # The work corpus comes first: libFuzzer writes new inputs there, never into the repository.
    "$binary" "${common[@]}" -max_total_time="$time_s" "$work/$target" "$corpus" "$failcases" > "$log" 2>&1
    local status=$?
    local last runs
    last=$(grep -E '^#[0-9]+' "$log" | tail -1)
    runs=$(awk '/stat::number_of_executed_units/ { print $2 }' "$log")
    echo "   $last"
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$target" "$time_s" "${runs:-?}" "$status" \
        "$(sed -E 's/^#[0-9]+ +[A-Z]+ +//' <<< "$last")" >> "$work/stats.tsv"
    if [ $status -ne 0 ]; then
        grep -E 'ERROR|invariant violated|Fatal error|SUMMARY|Test unit written' "$log" | head -20 >&2
        echo "== $target: FAILED (exit $status); the input is in $artifacts" >&2
        return 1
    fi
    if [ $merge = 1 ]; then
        echo "== merging new coverage of $target into $corpus"
        "$binary" "${common[@]}" -merge=1 "$corpus" "$work/$target" > "$work/logs/$target.merge.log" 2>&1 \
            || { tail -20 "$work/logs/$target.merge.log" >&2; return 1; }
    fi
}

if [ "$jobs" -le 1 ]; then
    # One target at a time: build it, then fuzz it, then the next.
    for target in "${selected[@]}"; do
        build_target "$target" || { failed+=("$target"); continue; }
        [ $build_only = 1 ] && continue
        fuzz_target "$target" || failed+=("$target")
    done
else
    # Build every target first (one at a time: SwiftPM uses both cores), then fuzz up to $jobs
    # at once. A lane's output goes to files; its lines are printed, whole, when it ends.
    built=()
    for target in "${selected[@]}"; do
        if build_target "$target"; then built+=("$target"); else failed+=("$target"); fi
    done
    if [ $build_only = 0 ] && [ ${#built[@]} -gt 0 ]; then
        lanes=$(mktemp -d) && trap 'rm -rf "$lanes"' EXIT || exit 2
        declare -A lane_of=()  # pid of a running lane → its target
        finish_lane() {  # wait for any lane to end, print its lines, record a failure (bash 5.1+)
            local pid= status
            wait -n -p pid; status=$?
            local target=${lane_of[$pid]}
            unset "lane_of[$pid]"
            cat "$lanes/$target.out"; cat "$lanes/$target.err" >&2
            [ $status -eq 0 ] || failed+=("$target")
        }
        for target in "${built[@]}"; do
            [ ${#lane_of[@]} -lt "$jobs" ] || finish_lane
            fuzz_target "$target" > "$lanes/$target.out" 2> "$lanes/$target.err" &
            lane_of[$!]=$target
        done
        while [ ${#lane_of[@]} -gt 0 ]; do finish_lane; done
    fi
fi

if [ ${#failed[@]} -gt 0 ]; then
    echo "== fuzzing FAILED: ${failed[*]}" >&2
    exit 1
fi
echo "== fuzzing OK: ${selected[*]}"
