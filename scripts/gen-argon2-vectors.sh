#!/usr/bin/env bash
# Regenerates spec/vectors/crypto/argon2id.txt with the reference Argon2 CLI (Debian package
# `argon2`, the PHC reference implementation), independently of libsodium.
# Usage: scripts/gen-argon2-vectors.sh > spec/vectors/crypto/argon2id.txt
set -euo pipefail
command -v argon2 >/dev/null || { echo "needs the reference CLI: apt-get install argon2" >&2; exit 1; }
hex() { od -An -tx1 -v | tr -d ' \n'; }

echo "# Argon2id (v1.3) known answers, parallelism 1, output 32 bytes."
echo "# Produced by scripts/gen-argon2-vectors.sh with the reference argon2 CLI; checked by"
echo "# Tests/CofferTests/Crypto/CryptoVectorTests.swift against Coffer's libsodium-backed Argon2id."
echo "# Fields: password and salt in hex, iterations (t), memory_kib (m), output in hex."
# password (printf format) | salt (16 ASCII chars) | t | m (KiB) | slow (1 = real preset)
while IFS='|' read -r password salt t m slow; do
  [ -z "$salt" ] && continue
  out=$(printf "$password" | argon2 "$salt" -id -t "$t" -k "$m" -p 1 -l 32 -r | tr -d '\n')
  echo
  echo "password: $(printf "$password" | hex)"
  echo "salt: $(printf '%s' "$salt" | hex)"
  echo "iterations: $t"
  echo "memory_kib: $m"
  echo "preset: $slow"
  echo "output: $out"
done <<'LIST'
password|somesaltsomesalt|1|8|-
a|0123456789abcdef|1|8|-
correct horse battery staple|coffer-vault-001|2|64|-
Gr\xc3\xbc\xc3\x9fe-\xf0\x9f\x94\x91-2024|saltysaltysalty!|3|1024|-
\x00\x01\x02\xff binary|AAAAAAAAAAAAAAAA|1|4096|-
123456|pin-slot-salt-01|2|19456|-
hunter2|abcdefghijklmnop|2|65536|interactive
hunter2|abcdefghijklmnop|3|262144|moderate
LIST
