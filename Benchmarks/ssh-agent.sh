#!/usr/bin/env bash
# A signature through Coffer's SSH agent against OpenSSH's own ssh-agent holding the same key
# (issue 40: at most 2x). Whole-process time of `ssh-keygen -Y sign -f KEY.pub -n file DATA`
# with only the public key file on disk, so ssh-keygen asks the agent named by SSH_AUTH_SOCK;
# both agents in the same hyperfine run, for Ed25519 and RSA 3072. Prints the ratio of the means
# (Coffer / ssh-agent) from that one run; this VM's timings vary between runs, so compare within
# a run. A temporary HOME, XDG_RUNTIME_DIR and vault (the test KDF: only signing is timed).
#
#   Benchmarks/ssh-agent.sh               # results: Benchmarks/Results/ssh-agent.json
#   COFFER=path/to/coffer Benchmarks/ssh-agent.sh   # another binary (no build)
#   SSH_AGENT_RUNS=50 Benchmarks/ssh-agent.sh       # runs per command (default 30)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
runs=${SSH_AGENT_RUNS:-30}
for tool in hyperfine python3 ssh-keygen ssh-add ssh-agent; do
  command -v "$tool" >/dev/null || { echo "ssh-agent: $tool is not installed; skipping"; exit 0; }
done
if [ -z "${COFFER:-}" ]; then
  swift build -c release --product coffer >&2
  COFFER="$root/.build/release/coffer"
fi
work=$(mktemp -d /tmp/coffer-ssh-agent.XXXXXX)
export HOME="$work/home" XDG_RUNTIME_DIR="$work/runtime"
mkdir -p "$HOME" "$work/keys"
mkdir -m 700 "$XDG_RUNTIME_DIR"
unset SSH_AUTH_SOCK SSH_AGENT_PID
openssh_pid=""
cleanup() {
  "$COFFER" lock --vault "$work/v.coffer" >/dev/null 2>&1 || true
  [ -n "$openssh_pid" ] && kill "$openssh_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

printf 'ssh-agent-bench-Passw0rd-2026\n' > "$work/pw"
vault=(--vault "$work/v.coffer" --password-file "$work/pw")
"$COFFER" init --kdf insecure-test-only "${vault[@]}" 2>/dev/null
ssh-agent -a "$work/openssh.sock" -D >/dev/null 2>&1 &
openssh_pid=$!
ssh-keygen -q -t ed25519 -N '' -C 'bench ed25519' -f "$work/keys/ed25519"
ssh-keygen -q -t rsa -b 3072 -N '' -C 'bench rsa-3072' -f "$work/keys/rsa"
for _ in $(seq 100); do [ -S "$work/openssh.sock" ] && break; sleep 0.05; done
for key in ed25519 rsa; do
  "$COFFER" ssh-key import "$work/keys/$key" "${vault[@]}" >/dev/null
  SSH_AUTH_SOCK="$work/openssh.sock" ssh-add -q "$work/keys/$key"
  rm "$work/keys/$key"  # only the .pub is left: the signature can only come from an agent
done
"$COFFER" unlock --timeout 1h "${vault[@]}" 2>/dev/null
coffer_sock=$("$COFFER" ssh-key socket --vault "$work/v.coffer")
[ -S "$coffer_sock" ] || { echo "ssh-agent: no socket at '$coffer_sock' after coffer unlock" >&2; exit 1; }
head -c 4096 /dev/urandom > "$work/data"

for key in ed25519 rsa; do
  pub="$work/keys/$key.pub"
  # Each agent signs once before timing: a failure here stops the script with ssh-keygen's reason.
  for sock in "$coffer_sock" "$work/openssh.sock"; do
    rm -f "$work/data.sig"
    SSH_AUTH_SOCK="$sock" ssh-keygen -q -Y sign -f "$pub" -n file "$work/data" </dev/null >/dev/null
    [ -s "$work/data.sig" ] || { echo "ssh-agent: no signature through $sock" >&2; exit 1; }
  done
  # `env` sets SSH_AUTH_SOCK for each command without a shell (-N); the same for both. The
  # signature file is removed before each run (untimed): ssh-keygen will not overwrite it.
  hyperfine -N --warmup 5 --runs "$runs" --style basic --export-json "$work/$key.json" --prepare "rm -f $work/data.sig" \
    -n "coffer agent, $key" "env SSH_AUTH_SOCK=$coffer_sock ssh-keygen -q -Y sign -f $pub -n file $work/data" \
    -n "ssh-agent, $key" "env SSH_AUTH_SOCK=$work/openssh.sock ssh-keygen -q -Y sign -f $pub -n file $work/data" >&2
done

# The agent's own cost, without a process start: signatures one after another on one connection
# (Benchmarks/ssh-agent-sign.py), each agent three times in turn; the median of the three.
per_signature() {  # per_signature SOCKET PUB COUNT FLAGS
  for _ in 1 2 3; do python3 "$root/Benchmarks/ssh-agent-sign.py" "$@"; done | sort -g | sed -n 2p
}
for key in ed25519 rsa; do
  flags=0; count=2000
  [ "$key" = rsa ] && { flags=4; count=300; }
  echo "$(per_signature "$coffer_sock" "$work/keys/$key.pub" $count $flags) $(per_signature "$work/openssh.sock" "$work/keys/$key.pub" $count $flags)" \
    > "$work/$key.loop"
done

mkdir -p "$root/Benchmarks/Results"
python3 - "$work/ed25519.json" "$work/rsa.json" "$work/ed25519.loop" "$work/rsa.loop" > "$root/Benchmarks/Results/ssh-agent.json" <<'PY'
import json, sys
out = {"command": "ssh-keygen -Y sign -f KEY.pub -n file DATA (4 KiB), whole process, hyperfine -N",
       "loop": "Benchmarks/ssh-agent-sign.py: sign requests one after another on one connection, median of three runs"}
for name, path, loop in (("ed25519", sys.argv[1], sys.argv[3]), ("rsa-3072", sys.argv[2], sys.argv[4])):
    coffer_loop, openssh_loop = (float(x) for x in open(loop).read().split())
    coffer, openssh = json.load(open(path))["results"]
    out[name] = {"cofferMeanMilliseconds": round(coffer["mean"] * 1000, 2),
                 "sshAgentMeanMilliseconds": round(openssh["mean"] * 1000, 2),
                 "cofferMedianMilliseconds": round(coffer["median"] * 1000, 2),
                 "sshAgentMedianMilliseconds": round(openssh["median"] * 1000, 2),
                 "ratioOfMeans": round(coffer["mean"] / openssh["mean"], 3),
                 "loopCofferMillisecondsPerSignature": round(coffer_loop * 1000, 3),
                 "loopSSHAgentMillisecondsPerSignature": round(openssh_loop * 1000, 3),
                 "loopRatio": round(coffer_loop / openssh_loop, 3)}
print(json.dumps(out, indent=2))
PY
python3 - "$root/Benchmarks/Results/ssh-agent.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for name in ("ed25519", "rsa-3072"):
    x = r[name]
    verdict = "within" if x["ratioOfMeans"] <= 2 else "OVER"
    print(f"{name}: coffer {x['cofferMeanMilliseconds']} ms, ssh-agent {x['sshAgentMeanMilliseconds']} ms (means): "
          f"ratio {x['ratioOfMeans']} ({verdict} issue 40's 2x); on one connection {x['loopCofferMillisecondsPerSignature']} vs "
          f"{x['loopSSHAgentMillisecondsPerSignature']} ms a signature, ratio {x['loopRatio']}")
PY
