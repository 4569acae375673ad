#!/usr/bin/env bash
# A folder of checkpoints saved by real llama.cpp, packed and unpacked by statezip:
#   llama_pack.sh STATEZIP MODEL WORKDIR [COUNT STEP]
# 1. llama.cpp saves COUNT (10) sequence states of one generation, every STEP (100) tokens;
# 2. statezip pack stores them as one set; -t tests every member; each later checkpoint shares
#    the cells of the one before it (from -l);
# 3. statezip unpack restores them into another folder: each file equal byte for byte (cmp);
# 4. llama.cpp loads every original and every restored file in fresh contexts: the same
#    token count and bit-identical probabilities for 16 greedy steps.
set -euo pipefail
STZ="$1" MODEL="$2" WORK="$3" COUNT="${4:-10}" STEP="${5:-100}"
HERE="$(cd "$(dirname "$0")" && pwd)"
export NODE_PATH="${STATEZIP_NODE_MODULES:-$HERE/node_modules}"
export NLS_KV_TYPE="${NLS_KV_TYPE:-F16}" NLS_FLASH_ATTN="${NLS_FLASH_ATTN:-0}" NLS_CTX=2048
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK"
ln -sfn "$NODE_PATH" node_modules
cp "$HERE/llama_checkpoints.mjs" .
fail() { echo "FAIL [pack of $COUNT checkpoints]: $*" >&2; exit 1; }

node llama_checkpoints.mjs save "$MODEL" ckpt "$COUNT" "$STEP" > save.json || fail "llama.cpp could not save the checkpoints"
files=(ckpt/*.bin)
[ "${#files[@]}" -eq "$COUNT" ] || fail "expected $COUNT checkpoints, got ${#files[@]}"
"$STZ" pack -q -o set.stzp "${files[@]}" || fail "pack"
"$STZ" -q -t set.stzp || fail "-t of the set"
"$STZ" -l set.stzp > list.txt || fail "-l of the set"
# every checkpoint after the first shares all cells of the one before it
python3 - "$COUNT" <<'PY' || { cat list.txt >&2; fail "-l does not show the shared cells"; }
import sys
rows = [l.split() for l in open("list.txt") if l.strip().startswith("ckpt/")]
assert len(rows) == int(sys.argv[1]), rows
for prev, cur in zip(rows, rows[1:]):
    assert int(cur[4]) >= int(prev[3]), (prev, cur)  # shared >= previous member's cells
PY
mkdir out
"$STZ" unpack -q set.stzp -C out || fail "unpack"
pairs=()
for f in "${files[@]}"; do
  cmp -s "$f" "out/$f" || fail "restored $f differs"
  pairs+=("$f" "out/$f")
done
node llama_checkpoints.mjs compare "$MODEL" "${pairs[@]}" > compare.json || { cat compare.json >&2; fail "llama.cpp output differs after unpack"; }
total=$(cat "${files[@]}" | wc -c)
stored=$(stat -c %s set.stzp)
echo "ok [$COUNT checkpoints, $NLS_KV_TYPE fa$NLS_FLASH_ATTN]: $total bytes -> $stored bytes packed, byte-exact, llama.cpp reload bit-identical"
