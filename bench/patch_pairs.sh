#!/usr/bin/env bash
# --patch-from on every related pair of the corpus (../shared/corpus MANIFEST.md, "Same-
# conversation groups", and the views of one multi-sequence context): bytes of statezip alone, statezip --patch-from, and
# zstd -19 --long=27 --patch-from, plus statezip --patch-from's MB/s (compress, decompress;
# wall clock of one run, noisy machine: indicative only). Every patch is decoded and compared.
# Usage: bench/patch_pairs.sh [STATEZIP_BIN] [CORPUS_DIR] > table.md
set -euo pipefail
BIN=${1:-build/statezip}
C=${2:-${STATEZIP_CORPUS%%:*}}
[ -n "$C" ] && [ -d "$C" ] || { echo "usage: $0 [statezip] CORPUS_DIR (or set STATEZIP_CORPUS)" >&2; exit 2; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
PAIRS=(
  "session-s260k-conv1-f16-fa0-a.bin session-s260k-conv1-f16-fa0-b.bin"
  "session-s260k-conv3-f32-fa1-a-n1000.bin session-s260k-conv3-f32-fa1-b-n1200.bin"
  "session-s260k-conv4-f16-fa0-a-n1000.bin session-s260k-conv4-f16-fa0-b-n1200.bin"
  "seq-s260k-srv-conv5-f16-fa1-a.bin seq-s260k-srv-conv5-f16-fa1-b.bin"
  "raw-s260k-conv8-f16-fa1-p1000.bin raw-s260k-conv8-f16-fa1-p1200.bin"
  "raw-s260k-conv8-f16-fa1-p1200.bin raw-s260k-conv8-f16-fa1-p1400.bin"
  "seq-s260k-conv8-f16-fa1-p1000.bin seq-s260k-conv8-f16-fa1-p1200.bin"
  "seq-s260k-conv8-f16-fa1-p1200.bin seq-s260k-conv8-f16-fa1-p1400.bin"
  "seq-s260khd32-srv-conv10-q8_0-fa1-a.bin seq-s260khd32-srv-conv10-q8_0-fa1-b.bin"
  "raw-s260k-multi3-kvu-f16-fa0.bin seq-s260k-multi3-kvu-f16-fa0-s0.bin"
  "raw-s260k-multi3-kvu-f16-fa0.bin seq-s260k-multi3-kvu-f16-fa0-s1.bin"
  "raw-s260k-multi3-kvu-f16-fa0.bin seq-s260k-multi3-kvu-f16-fa0-s2.bin"
  "raw-s260k-multi3-kvu-f16-fa0.bin seqraw-s260k-multi3-kvu-f16-fa0-s0.bin"
  "raw-s260k-multi3-kvu-f16-fa0.bin seqraw-s260k-multi3-kvu-f16-fa0-s1.bin"
  "raw-s260k-multi3-kvu-f16-fa0.bin seqraw-s260k-multi3-kvu-f16-fa0-s2.bin"
  "raw-s260k-multi3-kvu-f16-fa0.bin session-s260k-multi3-kvu-f16-fa0.bin"
  "raw-s260khd32-multi2-kvu-q8_0-fa1.bin seq-s260khd32-multi2-kvu-q8_0-fa1-s0.bin"
  "raw-s260khd32-multi2-kvu-q8_0-fa1.bin seq-s260khd32-multi2-kvu-q8_0-fa1-s1.bin"
  "raw-rnd1024-multi2-kvu-q8_0-fa1.bin seq-rnd1024-multi2-kvu-q8_0-fa1-s0.bin"
  "raw-rnd1024-multi2-kvu-q8_0-fa1.bin seq-rnd1024-multi2-kvu-q8_0-fa1-s1.bin"
  "raw-s260k-conv8-f16-fa1-p1000.bin seq-s260k-conv8-f16-fa1-p1000.bin"
  "raw-s260k-conv8-f16-fa1-p1000.bin seq-s260k-conv8-f16-fa1-p1400.bin"
)
now() { date +%s.%N; }
echo "| file | given | bytes | statezip alone | zstd -19 --long=27 --patch-from | statezip --patch-from | ratio | vs zstd | MB/s c / d |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
for p in "${PAIRS[@]}"; do
  set -- $p
  ref="$C/$1" f="$C/$2"
  [ -f "$ref" ] && [ -f "$f" ] || continue
  size=$(stat -c %s "$f")
  alone=$("$BIN" -q -c "$f" | wc -c)
  z=$(zstd -q -19 --long=27 --patch-from="$ref" -c "$f" 2>/dev/null | wc -c)
  t0=$(now); "$BIN" -q -f --patch-from="$ref" "$f" -o "$T/p.stz"; t1=$(now)
  "$BIN" -q -d -f --patch-from="$ref" "$T/p.stz" -o "$T/back"; t2=$(now)
  cmp -s "$T/back" "$f" || { echo "ROUND TRIP FAILED: $2 given $1" >&2; exit 1; }
  pf=$(stat -c %s "$T/p.stz")
  awk -v f="$2" -v r="$1" -v n="$size" -v a="$alone" -v z="$z" -v p="$pf" -v tc="$(echo "$t1 - $t0" | bc)" \
      -v td="$(echo "$t2 - $t1" | bc)" 'BEGIN {
    printf "| %s | %s | %d | %d | %d | %d | %.2fx | %.1f%% | %.0f / %.0f |\n", f, r, n, a, z, p, n / p, 100 * (p - z) / z,
           n / tc / 1e6, n / td / 1e6 }'
done
