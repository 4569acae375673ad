#!/usr/bin/env bash
# Seed corpus for the fuzz targets: small real files, synthetic files of every flavour,
# and .stz files made from them (for the container target); codec seeds are small payloads.
set -euo pipefail
STZ="$1" GEN="$2" DATA="$3" OUT="$4" PATCH_SEEDS="$5"
rm -rf "$OUT" && mkdir -p "$OUT/parse" "$OUT/container" "$OUT/codecs" "$OUT/patch"
"$PATCH_SEEDS" "$OUT/patch"
cp "$DATA"/*.bin "$OUT/parse/"
for f in $("$GEN" 2>&1 | sed -n 's/^flavours://p'); do
  "$GEN" "$f" "$OUT/parse/synth-$f.bin" --cells 9 --layers 2 --embd 32 --ctx 16
done
"$GEN" session10 "$OUT/parse/synth-q8.bin" --cells 5 --layers 2 --embd 64 --type q8_0
for f in "$OUT"/parse/synth-*.bin; do
  "$STZ" -q -c "$f" > "$OUT/container/$(basename "$f").stz"
  "$STZ" -q -c --fast "$f" > "$OUT/container/$(basename "$f").fast.stz"
done
i=0
for f in "$OUT"/parse/synth-*.bin; do
  i=$((i+1)); printf "\\x$(printf %02x $((i % 14)))\\x$(printf %02x $((i % 4)))\\x00\\x40" > "$OUT/codecs/s$i"
  head -c 600 "$f" >> "$OUT/codecs/s$i"
done
# Small outputs (version 3 records with no chunk or one), and a few files of the fixed-width
# versions the reader still reads.
: | "$STZ" -q -c - > "$OUT/container/empty.stz"
head -c 28 "$DATA/ggsq3.stories260K.f16.fa1.c1024.t322.bin" | "$STZ" -q -c - > "$OUT/container/tiny28.stz"
cp "$DATA"/golden-0.1.0/*.preset-default.stz "$OUT/container/"
