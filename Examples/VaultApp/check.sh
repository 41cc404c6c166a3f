#!/usr/bin/env bash
# Builds Examples/VaultApp with its tests, runs them, then fails if the build compiled or linked
# anything an app that links only the `Coffer` product must not pay for: the importers
# (CofferImport), ZIPFoundation, zlib's shim (CZlibInflate) or FoundationXML. SwiftPM still
# resolves ZIPFoundation (the root package depends on it); that is fine, building it is not.
set -euo pipefail
cd "$(dirname "$0")"
scratch=.build
start=$SECONDS

swift build --build-tests --scratch-path "$scratch"
swift test --skip-build --scratch-path "$scratch"

# SwiftPM makes a <module>.build directory for every target of the graph, built or not; a target
# that was compiled has object files in it (C targets in subdirectories).
debug="$scratch/debug"
built=$(cd "$debug" && find . -path './*.build/*' -name '*.o' | sed 's|^\./||; s|\.build/.*||' | sort -u)
echo "== modules built: $(echo $built)"
status=0
for module in CofferImport ZIPFoundation CZlibInflate FoundationXML CofferTestSupport; do
    if grep -qx "$module" <<<"$built"; then echo "error: $module was built" >&2; status=1; fi
done
# FoundationXML and zlib come from shared libraries: the test binary must not ask for them.
binary=$(find "$debug/" -maxdepth 1 -name 'VaultAppPackageTests.xctest' | head -n 1)
if [[ -n "$binary" ]] && command -v readelf >/dev/null; then
    needed=$(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort)
    echo "== libraries the test binary needs: $(echo $needed)"
    if grep -Eq '^lib(FoundationXML|z)\.so' <<<"$needed"; then echo "error: FoundationXML or zlib is linked" >&2; status=1; fi
fi
echo "== Examples/VaultApp checked in $((SECONDS - start)) s"
exit $status
