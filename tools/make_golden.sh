#!/usr/bin/env bash
# Writes a set of golden .stz files with the statezip in BUILD (default ./build) into OUT:
# every preset on small synthetic files of each K/V type, and every codec id at least once.
# Run it once per release whose format matters, commit OUT, and never regenerate it: the
# golden test decodes these files forever (tests/test_golden.cpp).
#   tools/make_golden.sh tests/data/golden-0.2.0 [BUILD]
set -euo pipefail
out="$1"; build="${2:-build}"
S="$build/statezip"; G="$build/stz-gen"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
"$G" seq3 "$work/f16.bin" --cells 64 --layers 2 --embd 32
"$G" seq3 "$work/f16fa.bin" --cells 64 --layers 2 --embd 32 --fa
"$G" seq3 "$work/q8.bin" --cells 64 --layers 2 --embd 64 --type q8_0
"$G" session10 "$work/bf16.bin" --cells 48 --layers 2 --embd 32 --type bf16
"$G" seq3 "$work/f32.bin" --cells 48 --layers 2 --embd 32 --type f32
"$G" legacy-full "$work/lfull.bin" --cells 20 --layers 2 --embd 32 --ctx 64
enc() { local in="$1" name="$2"; shift 2; "$S" -q -f -T 1 "$@" -o "$out/$name.stz" "$work/$in.bin"; }
for i in f16 f16fa q8 bf16 f32 lfull; do
  enc $i $i.preset-fast --fast; enc $i $i.preset-default; enc $i $i.preset-max --max
done
for c in store rle lz4 lz4hc:9 zstd:3 zstd:19:long lzma:9e shuffle+zstd:1 transpose+zstd:1 chanctx chanctx:nomatch \
         dedup+zstd:3 "chanctx|shuffle+lzma:9e"; do
  enc f16fa "f16fa.codec-$(echo "$c" | tr ':+|' '_pA')" --codec "$c"
done
enc q8 q8.codec-fields_zstd_3 --codec fields+zstd:3
enc q8 q8.codec-chanctx --codec chanctx
enc lfull lfull.codec-trim_zstd_3 --codec trim+zstd:3
enc lfull lfull.codec-trim_rle --codec trim+rle
{
  printf '# file\tbytes\txxh3-64 of the decoded file (hex)\n'
  for f in "$out"/*.stz; do
    "$S" -d -c -q "$f" > "$work/dec"
    printf '%s\t%s\t%s\n' "$(basename "$f")" "$(stat -c %s "$work/dec")" "$(xxhsum -H3 "$work/dec" | sed 's/.*= //')"
  done
} > "$out/MANIFEST.tsv"
