#!/usr/bin/env bash
# Measures Argon2id at each preset on this machine (see spec/crypto.md §7). Usage: scripts/measure-kdf.sh [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -O2 scripts/measure-kdf.c -o "$out/measure-kdf" $(pkg-config --cflags --libs libsodium)
"$out/measure-kdf" "${1:-5}"
