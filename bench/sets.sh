#!/usr/bin/env bash
# Related sets (issue 11): statezip per file, statezip pack and the system tools on whole sets,
# for every related group of the shared corpus and for a folder of 10 checkpoints saved by the
# real llama.cpp runtime. Prints the markdown tables of bench/SETS.md.
#   bench/sets.sh STATEZIP CORPUS_DIR [CHECKPOINT_DIR] [RUNS]
# CHECKPOINT_DIR: a folder of ckpt-NN.bin files, e.g. made by
#   tests/integration/llama_pack.sh STATEZIP ../shared/models/stories260K.gguf WORK 10 100
#   (with NODE_PATH / STATEZIP_NODE_MODULES pointing at node-llama-cpp, see tests/integration)
set -euo pipefail
STZ="$1" C="$2" CK="${3:-}" RUNS="${4:-3}"
groups=(
  "conv1 session f16 fa0 (2 turns, llama-completion resume)|session-s260k-conv1-f16-fa0-a.bin session-s260k-conv1-f16-fa0-b.bin"
  "conv3 session f32 fa1 (2 runs, 1000/1200 tokens)|session-s260k-conv3-f32-fa1-a-n1000.bin session-s260k-conv3-f32-fa1-b-n1200.bin"
  "conv4 session f16 fa0 (2 runs, 1000/1200 tokens)|session-s260k-conv4-f16-fa0-a-n1000.bin session-s260k-conv4-f16-fa0-b-n1200.bin"
  "srv-conv5 seq f16 fa1 (llama-server slot, 2 turns)|seq-s260k-srv-conv5-f16-fa1-a.bin seq-s260k-srv-conv5-f16-fa1-b.bin"
  "conv8 raw checkpoints p1000/p1200/p1400|raw-s260k-conv8-f16-fa1-p1000.bin raw-s260k-conv8-f16-fa1-p1200.bin raw-s260k-conv8-f16-fa1-p1400.bin"
  "conv8 seq checkpoints p1000/p1200/p1400|seq-s260k-conv8-f16-fa1-p1000.bin seq-s260k-conv8-f16-fa1-p1200.bin seq-s260k-conv8-f16-fa1-p1400.bin"
  "conv8 raw + seq (6 files)|raw-s260k-conv8-f16-fa1-p1000.bin raw-s260k-conv8-f16-fa1-p1200.bin raw-s260k-conv8-f16-fa1-p1400.bin seq-s260k-conv8-f16-fa1-p1000.bin seq-s260k-conv8-f16-fa1-p1200.bin seq-s260k-conv8-f16-fa1-p1400.bin"
  "srv-conv10 seq q8_0 fa1 (hd32, 2 turns)|seq-s260khd32-srv-conv10-q8_0-fa1-a.bin seq-s260khd32-srv-conv10-q8_0-fa1-b.bin"
  "multi3 f16 fa0: raw, session, 3 seq, 3 seqraw views|raw-s260k-multi3-kvu-f16-fa0.bin session-s260k-multi3-kvu-f16-fa0.bin seq-s260k-multi3-kvu-f16-fa0-s0.bin seq-s260k-multi3-kvu-f16-fa0-s1.bin seq-s260k-multi3-kvu-f16-fa0-s2.bin seqraw-s260k-multi3-kvu-f16-fa0-s0.bin seqraw-s260k-multi3-kvu-f16-fa0-s1.bin seqraw-s260k-multi3-kvu-f16-fa0-s2.bin"
  "multi2 q8_0 fa1 (rnd1024): raw + 2 seq views|raw-rnd1024-multi2-kvu-q8_0-fa1.bin seq-rnd1024-multi2-kvu-q8_0-fa1-s0.bin seq-rnd1024-multi2-kvu-q8_0-fa1-s1.bin"
  "multi2 q8_0 fa1 (hd32): raw + 2 seq views|raw-s260khd32-multi2-kvu-q8_0-fa1.bin seq-s260khd32-multi2-kvu-q8_0-fa1-s0.bin seq-s260khd32-multi2-kvu-q8_0-fa1-s1.bin"
)
# One markdown table from the JSON of bench --set.
read -r -d '' FORMAT <<'PY' || true
import json, sys
d = json.load(sys.stdin)["set"]
rows = d["results"]
xz = next((r for r in rows if r["method"] == "tar | xz -9"), None)
z3 = next((r for r in rows if r["method"].startswith("in-process zstd:3")), None)
print(f"{len(d['files'])} files, {d['bytes']:,} bytes")
print()
print("| method | bytes | ratio | MB/s | decode MB/s | speed / zstd:3 | speed / tar\\|xz -9 | bytes / tar\\|xz -9 |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for r in rows:
    sp = f"{r['compress_mbps'] / xz['compress_mbps']:.1f}x" if xz else ""
    s3 = f"{r['compress_mbps'] / z3['compress_mbps']:.3f}" if z3 else ""
    by = f"{r['compressed_bytes'] / xz['compressed_bytes']:.3f}" if xz else ""
    m = r["method"].replace("|", "\\|")
    print(f"| {m} | {r['compressed_bytes']:,} | {r['ratio']:.3f} | {r['compress_mbps']:.1f} | {r['decompress_mbps']:.1f} | {s3} | {sp} | {by} |")
PY
table() {  # title, then files
  local title="$1"; shift
  echo
  echo "### $title"
  echo
  "$STZ" bench --set --json -n "$RUNS" "$@" 2>/dev/null | python3 -c "$FORMAT"
}
for g in "${groups[@]}"; do
  title="${g%%|*}"
  read -r -a names <<< "${g#*|}"
  files=()
  for n in "${names[@]}"; do files+=("$C/$n"); done
  table "$title" "${files[@]}"
done
if [ -n "$CK" ]; then
  table "10 checkpoints of one generation saved by llama.cpp (stories260K, F16, flash attention off, every 100 tokens)" "$CK"/ckpt-*.bin
fi
