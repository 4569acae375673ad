#!/usr/bin/env bash
# One cell of the llama integration matrix:
#   llama_matrix.sh STATEZIP MODEL KV_TYPE FLASH_ATTN TOKENS LAYERS WORKDIR
# 1. real llama.cpp writes a sequence state file of TOKENS tokens;
# 2. statezip compresses it with each preset and each base codec, tests and decompresses it;
# 3. every restored file equals the original byte for byte (cmp);
# 4. llama.cpp loads each restored file in a fresh process: bit-identical probabilities
#    for 32 greedy steps;
# 5. a corrupted .stz is rejected (nonzero exit, no output file);
# and `statezip inspect` finds the layers, KV type and token count llama.cpp was given.
set -euo pipefail
STZ="$1" MODEL="$2" KV="$3" FA="$4" TOKENS="$5" LAYERS="$6" WORK="$7"
HERE="$(cd "$(dirname "$0")" && pwd)"
export NODE_PATH="${STATEZIP_NODE_MODULES:-$HERE/node_modules}"
export NLS_KV_TYPE="$KV" NLS_FLASH_ATTN="$FA" NLS_TOKENS="$TOKENS" NLS_CTX=2048
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK"
# node resolves packages from the script's folder; run a copy beside the node_modules link
ln -sfn "$NODE_PATH" node_modules
cp "$HERE/llama_state.mjs" .
fail() { echo "FAIL [$KV fa$FA $TOKENS]: $*" >&2; exit 1; }

node llama_state.mjs save "$MODEL" state.bin ref.json > save.json || fail "llama.cpp could not save"
kv_lower=$(echo "$KV" | tr 'A-Z' 'a-z')
"$STZ" inspect --json state.bin > inspect.json
python3 - "$kv_lower" "$TOKENS" "$LAYERS" <<'PY' || fail "inspect does not match the llama.cpp configuration"
import json, sys
kv, tokens, layers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
d = json.load(open("inspect.json"))
assert d["format"] == "ggsq" and d["version"] == 3, (d["format"], d["version"])
assert d["n_tokens"] == tokens and d["n_cells"] == tokens, (d["n_tokens"], d["n_cells"])
assert d["n_layer"] == layers, d["n_layer"]
for kind in ("kv-key", "kv-value"):
    types = {s["type"] for s in d["sections"] if s["kind"] == kind}
    assert types == {kv}, (kind, types)
assert sum(s["bytes"] for s in d["sections"]) == d["bytes"]
PY

pipelines=("--fast" "" "--max" "--codec store" "--codec rle" "--codec lz4" "--codec lz4hc:9" "--codec zstd:3"
           "--codec zstd:19" "--codec lzma:9" "--codec trim+zstd:3")
restored=()
i=0
for p in "${pipelines[@]}"; do
  i=$((i+1))
  # shellcheck disable=SC2086
  "$STZ" -q -f $p -o "p$i.stz" state.bin || fail "compress ${p:-default}"
  "$STZ" -q -t "p$i.stz" || fail "test ${p:-default}"
  "$STZ" -q -d -f -o "p$i.bin" "p$i.stz" || fail "decompress ${p:-default}"
  cmp -s state.bin "p$i.bin" || fail "restored file differs (${p:-default})"
  restored+=("p$i.bin")
done
node llama_state.mjs check "$MODEL" ref.json "${restored[@]}" > check.json || { cat check.json >&2; fail "llama.cpp output differs after restore"; }

# negative control: one byte in the middle of a .stz inverted (whatever it held: writing a
# constant leaves the file as it was when the byte already is that constant)
size=$(stat -c %s p2.stz)
cp p2.stz bad.stz
byte=$(od -An -tu1 -j $((size / 2)) -N1 p2.stz | tr -d ' ')
printf "\\$(printf '%03o' $((byte ^ 0xff)))" | dd of=bad.stz bs=1 seek=$((size / 2)) conv=notrunc status=none
cmp -s p2.stz bad.stz && fail "corruption did not change the file"
if "$STZ" -q -d -o bad.bin bad.stz 2>/dev/null; then fail "a corrupted .stz was accepted"; fi
[ -e bad.bin ] && fail "a corrupted .stz left an output file"
echo "ok [$KV fa$FA, $TOKENS tokens]: ${#pipelines[@]} pipelines byte-exact, llama.cpp reload bit-identical, corruption rejected"
