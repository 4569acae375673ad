#!/usr/bin/env bash
# Cost growth with input size: compress/decompress wall time, MB/s and peak RSS of statezip
# on generated session files of 100 MB, 1 GB and 8 GB (tools' stz-gen, v10 layout, 32 layers
# x 1024-wide f16 K/V), with -T1 and -T2 (only -T2 above 2 GB), and statezip --codec zstd:3 as the
# speed reference measured in the same run. Prints a Markdown table.
#   bench/scale.sh [BUILD_DIR] [SIZES...]      (default sizes: 100000000 1000000000 8000000000)
# Needs ~3x the largest size in free space under ${TMPDIR:-/tmp}.
set -euo pipefail
BUILD="${1:-build}"; shift || true
[ $# -gt 0 ] && SIZES=("$@") || SIZES=(100000000 1000000000 8000000000)
STZ="$BUILD/statezip" GEN="$BUILD/stz-gen"
DIR="$(mktemp -d "${TMPDIR:-/tmp}/statezip-scale.XXXXXX")"
trap 'rm -rf "$DIR"' EXIT
measure() {  # prints "seconds peak_kib"
  /usr/bin/time -f "%e %M" -o "$DIR/t" "$@" >/dev/null
  cat "$DIR/t"
}
echo "| input | threads | preset | compress s | compress MB/s | compress peak RSS | decompress s | decompress MB/s | decompress peak RSS | ratio |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for size in "${SIZES[@]}"; do
  "$GEN" session10 "$DIR/in.bin" --size "$size" --layers 32 --embd 1024 --seed 7
  real=$(stat -c %s "$DIR/in.bin")
  for preset in "--codec=zstd:3" "--fast" ""; do  # zstd:3 in the same run: the speed reference
    threads="1 2"
    [ "$size" -gt 2000000000 ] && threads="2"  # -T1 vs -T2 is measured on the smaller sizes
    for t in $threads; do
      read -r cs cm <<<"$(measure "$STZ" -q -f $preset -T$t -o "$DIR/in.stz" "$DIR/in.bin")"
      read -r ds dm <<<"$(measure "$STZ" -q -d -f -T$t -o "$DIR/out.bin" "$DIR/in.stz")"
      cmp -s "$DIR/in.bin" "$DIR/out.bin" || { echo "round trip failed" >&2; exit 1; }
      packed=$(stat -c %s "$DIR/in.stz")
      awk -v r="$real" -v p="$packed" -v cs="$cs" -v cm="$cm" -v ds="$ds" -v dm="$dm" -v t="$t" -v pr="${preset:-default}" \
        'BEGIN { printf "| %.0f MB | %d | %s | %.1f | %.1f | %.0f MiB | %.1f | %.1f | %.0f MiB | %.3f |\n",
                 r/1e6, t, pr, cs, r/1e6/cs, cm/1024, ds, r/1e6/ds, dm/1024, r/p }'
      rm -f "$DIR/out.bin" "$DIR/in.stz"
    done
  done
  s0=$(date +%s.%N); "$STZ" inspect "$DIR/in.bin" >/dev/null; s1=$(date +%s.%N)
  awk -v a="$s0" -v b="$s1" -v r="$real" 'BEGIN { printf "| %.0f MB | inspect | | %.2f s | | | | | | |\n", r/1e6, b-a }'
  rm -f "$DIR/in.bin"
done
