#!/usr/bin/env bash
# One lossy cell of the llama integration tests:
#   llama_lossy.sh STATEZIP MODEL KV_TYPE FLASH_ATTN TOKENS LOSSY_SPEC WORKDIR
# 1. real llama.cpp writes a sequence state file of TOKENS tokens;
# 2. statezip --lossy=LOSSY_SPEC (default preset) compresses it; -t and -d must pass;
# 3. llama.cpp loads the original and the restored file in fresh contexts and feeds both the
#    original's greedy tokens for 32 steps: per-step KL, top-1 agreement and the largest
#    log-probability difference, checked against NLS_MAX_MEAN_KL / NLS_MIN_TOP1 /
#    NLS_REQUIRE_IDENTICAL (set by CMakeLists.txt);
# 4. f16-exact only: the same prompt saved with an f16 cache (flash attention on) holds exactly
#    the values statezip's rounding gave (ggml's own f32 -> f16 conversion, bit for bit).
set -euo pipefail
STZ="$1" MODEL="$2" KV="$3" FA="$4" TOKENS="$5" SPEC="$6" WORK="$7"
HERE="$(cd "$(dirname "$0")" && pwd)"
export NODE_PATH="${STATEZIP_NODE_MODULES:-$HERE/node_modules}"
export NLS_KV_TYPE="$KV" NLS_FLASH_ATTN="$FA" NLS_TOKENS="$TOKENS" NLS_CTX=2048
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK"
ln -sfn "$NODE_PATH" node_modules
cp "$HERE/llama_state.mjs" .
fail() { echo "FAIL [lossy $SPEC, $KV fa$FA $TOKENS]: $*" >&2; exit 1; }

node llama_state.mjs save "$MODEL" state.bin ref.json > save.json || fail "llama.cpp could not save"
"$STZ" -f -o l.stz --lossy="$SPEC" state.bin 2> summary.txt || fail "compress"
"$STZ" -q -t l.stz || fail "test"
"$STZ" -q -d -f -o restored.bin l.stz || fail "decompress"
cmp -s state.bin restored.bin && fail "nothing was rounded: $(cat summary.txt)"
node llama_state.mjs lossy "$MODEL" state.bin restored.bin > lossy.json || { cat lossy.json >&2; fail "error above the bounds"; }

if [ "$SPEC" = f16-exact ]; then
  NLS_KV_TYPE=F16 node llama_state.mjs save "$MODEL" f16.bin f16.json > /dev/null || fail "llama.cpp could not save the f16 cache"
  "$STZ" inspect --json restored.bin > a.json && "$STZ" inspect --json f16.bin > b.json
  python3 - <<'PY' || fail "the f16 cache llama.cpp wrote differs from statezip's f16 rounding"
import json, struct
a, b = json.load(open("a.json")), json.load(open("b.json"))
ra, rb = open("restored.bin", "rb").read(), open("f16.bin", "rb").read()
kv = lambda d: [s for s in d["sections"] if s["kind"] in ("kv-key", "kv-value")]
sa, sb = kv(a), kv(b)
assert [s["name"] for s in sa] == [s["name"] for s in sb] and sa, "different K/V layouts"
n = 0
for x, y in zip(sa, sb):
    assert x["type"] == "f32" and y["type"] == "f16" and x["bytes"] == 2 * y["bytes"], (x, y)
    vals = struct.unpack_from("<%df" % (x["bytes"] // 4), ra, x["offset"])
    half = struct.pack("<%de" % len(vals), *vals)  # exact: every value is an f16 value
    assert half == rb[y["offset"]:y["offset"] + y["bytes"]], x["name"]
    n += len(vals)
print("f16 cache identical to statezip's rounding:", n, "values")
PY
fi
echo "ok [lossy $SPEC, $KV fa$FA, $TOKENS tokens]: $(tail -1 summary.txt | sed 's/.*: lossy //'); $(python3 -c 'import json; d=json.load(open("lossy.json")); print("mean KL %.3g, max KL %.3g, top-1 %.3f, max |dlogp| %.3g, identical %s" % (d["meanKL"], d["maxKL"], d["top1Agreement"], d["maxAbsLogProbDiff"], d["identical"]))')"
