#!/usr/bin/env bash
# Convince yourself on your own model and state file that statezip is safe for it:
#   tools/verify-llama.sh MODEL.gguf STATE.bin [KV_TYPE] [FLASH_ATTN]
# 1. compresses STATE.bin with statezip (default preset, and --max), tests and decompresses it;
# 2. checks that the restored file equals the original byte for byte;
# 3. loads the original and the restored file into llama.cpp (release v0.4.0, CPU, from the npm
#    package node-llama-cpp) in fresh contexts and requires bit-identical next-token
#    probabilities over 32 greedy steps;
# 4. lossy modes (--lossy): for each spec in LOSSY (default: f16-exact for F32 with flash
#    attention, then drop:V=6 and drop:K=2,V=6 for float caches; LOSSY=none skips), compresses,
#    tests and decompresses, loads original and restored file in fresh contexts, feeds both the
#    original's greedy tokens for 32 steps and reports per-step KL, top-1 agreement and the
#    largest log-probability difference (f16-exact must be bit-identical). The bounds that hold
#    on a tiny model need not hold on yours: this measures them.
# STATE.bin must be a sequence state file (llama-server slot save, llama_state_seq_save_file)
# written by a llama.cpp whose format v0.4.0 reads (seq v3). KV_TYPE (F16 default, BF16, F32,
# Q8_0, ...) and FLASH_ATTN (0 default, 1) must match how the state was saved.
# Needs node and npm; the runtime is installed once into ~/.cache/statezip-llama.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,19p' "$0"; exit 2; }
MODEL="$(realpath "$1")" STATE="$(realpath "$2")" KV="${3:-F16}" FA="${4:-0}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
STZ="${STATEZIP:-$ROOT/build/statezip}"
[ -x "$STZ" ] || { echo "verify-llama: build statezip first (tools/quickstart.sh bench) or set STATEZIP" >&2; exit 1; }
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/statezip-llama"
if [ ! -d "$CACHE/node_modules/node-llama-cpp" ]; then
  mkdir -p "$CACHE" && cp "$ROOT/tests/integration/package.json" "$ROOT/tests/integration/package-lock.json" "$CACHE/"
  (cd "$CACHE" && NODE_LLAMA_CPP_SKIP_DOWNLOAD=true npm ci --omit=optional --no-audit --no-fund --loglevel=error)
fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
cp "$ROOT/tests/integration/llama_state.mjs" "$WORK/" && ln -s "$CACHE/node_modules" "$WORK/node_modules"
cd "$WORK"
for preset in "" "--max"; do
  "$STZ" -q $preset -o s.stz "$STATE"
  "$STZ" -q -t s.stz
  "$STZ" -q -d -o restored.bin s.stz
  cmp "$STATE" restored.bin
  echo "statezip ${preset:-default}: $(stat -c %s "$STATE") -> $(stat -c %s s.stz) bytes, restored file identical"
  NLS_KV_TYPE="$KV" NLS_FLASH_ATTN="$FA" node llama_state.mjs compare "$MODEL" "$STATE" restored.bin
  rm -f s.stz restored.bin
done
if [ -z "${LOSSY:-}" ]; then
  case "$KV" in F32|f32) [ "$FA" = 1 ] && LOSSY="f16-exact"; LOSSY="${LOSSY:-} drop:V=6 drop:K=2,V=6" ;;
                F16|f16|BF16|bf16) LOSSY="drop:V=6 drop:K=2,V=6" ;; *) LOSSY=none ;; esac
fi
for spec in $LOSSY; do
  [ "$spec" = none ] && break
  "$STZ" -q -o l.stz --lossy="$spec" "$STATE"
  "$STZ" -q -t l.stz
  "$STZ" -q -d -o restored.bin l.stz
  echo "statezip --lossy=$spec: $(stat -c %s "$STATE") -> $(stat -c %s l.stz) bytes"
  req=0; [ "$spec" = f16-exact ] && req=1
  NLS_KV_TYPE="$KV" NLS_FLASH_ATTN="$FA" NLS_REQUIRE_IDENTICAL=$req node llama_state.mjs lossy "$MODEL" "$STATE" restored.bin |
    python3 -c 'import json,sys; d=json.load(sys.stdin); print("  llama.cpp, 32 teacher-forced steps: mean KL %.3g, max KL %.3g, top-1 agreement %.3f, max |log p diff| %.3g, bit-identical %s" % (d["meanKL"], d["maxKL"], d["top1Agreement"], d["maxAbsLogProbDiff"], d["identical"]))'
  rm -f l.stz restored.bin
done
echo "verify-llama: OK"
