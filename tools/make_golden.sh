#!/usr/bin/env bash
# Writes the golden files of a release into OUT with the programs of BUILD (default ./build:
# statezip, stz-gen, stz-golden), from small synthetic inputs:
#   - every preset on every element type the generator writes (f16 with and without flash
#     attention, bf16, f32, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl) and on a 2023 legacy file;
#   - every codec of the registry (stz-golden codecs: its id, name and sample specs, so codecs added
#     later are picked up) alone, each sample spec, and inside planes(all=...);
#   - each lossy mode (f16-exact, drop, keep);
#   - a --patch-from file of each patch map version with its REF;
#   - a .stzp set, then an append to it;
# and OUT/MANIFEST.tsv: for every file, what it needs to decode, its size and XXH3-64, and the
# size and XXH3-64 of what it decodes to. tests/test_golden.cpp decodes every file of every
# tests/data/golden-*/MANIFEST.tsv forever.
# The same build writes the same bytes on every run (one thread, fixed seeds, relative names).
# Run it once per release whose format changed and commit OUT; a shipped release's folder is never
# written again (the script refuses a folder that holds files unless given -f).
#   tools/make_golden.sh [-f] tests/data/golden-X.Y.Z [BUILD]
# A codec none of whose sample specs ends up in a file stops it (GOLDEN_ALLOW_MISSING=1: a warning,
# and the test then fails on that id until an input that uses it is added here).
# (0.1.0's files were written by an earlier version of this script, commit 66b67cb.)
set -euo pipefail
export LC_ALL=C
force=0
if [ "${1:-}" = "-f" ]; then force=1; shift; fi
[ $# -ge 1 ] || { echo "usage: tools/make_golden.sh [-f] OUT [BUILD]" >&2; exit 2; }
out="$1"; build="${2:-build}"
S="$(realpath "$build/statezip")"; G="$(realpath "$build/stz-gen")"; C="$(realpath "$build/stz-golden")"
for p in "$S" "$G" "$C"; do [ -x "$p" ] || { echo "make_golden: $p not built" >&2; exit 2; }; done
if [ -d "$out" ] && [ -n "$(ls -A "$out")" ] && [ $force = 0 ]; then
  echo "make_golden: $out holds files: golden files of a shipped release are never rewritten (-f to replace)" >&2
  exit 2
fi
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
in="$work/in"; g="$work/golden"
mkdir -p "$in" "$g"
manifest="$work/manifest"; : > "$manifest"
release="$("$S" --version | sed -n '1s/^statezip \([^ ]*\) .*/\1/p')"

# --- Inputs: a few KB each.
gen() { "$G" "$@" >/dev/null; }
gen seq3 "$in/f16.bin" --cells 32 --layers 2 --embd 32
gen seq3 "$in/f16fa.bin" --cells 32 --layers 2 --embd 32 --fa
types="f16"
for t in bf16 f32 q8_0 q4_0 q4_1 q5_0 q5_1 iq4_nl; do
  if "$G" seq3 "$in/$t.bin" --cells 32 --layers 2 --embd 64 --type "$t" --fa >/dev/null 2>"$work/err"; then
    types="$types $t"
  else  # an older generator: the files of the types it has are still written
    echo "make_golden: WARNING: stz-gen cannot write $t ($(cat "$work/err")): no $t files" >&2
  fi
done
gen session10 "$in/session-bf16.bin" --cells 24 --layers 2 --embd 32 --type bf16
gen legacy-full "$in/legacy.bin" --cells 16 --layers 2 --embd 32 --ctx 48
inputs="f16fa ${types} session-bf16 legacy repeats"
# Turns of one conversation (--patch-from, the set); repeats.bin has repeated V cells, each
# token's layer-0 V cell that of its first position (celldedup and the token model use that).
gen seq3 "$in/turn2.bin" --cells 48 --layers 2 --embd 32 --seed 7
"$C" predictable "$in/turn2.bin" "$in/repeats.bin" "$in/repeats-other-tokens.bin"
# The same with flash attention: V cells are rows there, which the row dedup finds (a chunk's
# recipe leaves out a stage that found nothing, so only a file with repeats pins dedup).
gen seq3 "$in/turn2-fa.bin" --cells 48 --layers 2 --embd 32 --seed 7 --fa
"$C" predictable "$in/turn2-fa.bin" "$in/repeats-fa.bin" "$in/repeats-fa-other-tokens.bin"

hash_of() { "$C" hash "$1"; }
size_of() { stat -c %s "$1"; }
# kind file needs decoded-file
record() {
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$(size_of "$g/$2")" "$(hash_of "$g/$2")" \
    "$(size_of "$4")" "$(hash_of "$4")" >> "$manifest"
}
# Compresses input $1 into $g/$2 with the options that follow and records it, decoded again.
enc() {
  local input="$1" name="$2"; shift 2
  "$S" -q -f -T 1 "$@" -o "$g/$name" "$in/$input.bin"
  "$S" -q -d -c -T 1 "$g/$name" > "$work/dec"
  record stz "$name" - "$work/dec"
}
safe() { printf '%s' "$1" | tr ':+|(),=' '_pA___-'; }

# --- Every preset on every element type.
for i in $inputs; do
  for p in fast default max; do enc "$i" "$i.preset-$p.stz" --preset "$p"; done
done

# --- Every codec of the registry: each sample spec alone, and the first one inside planes, on
# the first input it is used on (a codec that does not apply to a section's data may leave it
# to a later stage or store it; stz-golden used says which ids a file's chunks name).
used_ids=" "
try_codec() {  # id name spec
  local id="$1" name="$2" spec="$3" i
  for i in repeats f16fa f16 q8_0 q4_0 legacy repeats-fa; do
    rm -f "$work/try.stz"
    "$S" -q -f -T 1 --codec "$spec" -o "$work/try.stz" "$in/$i.bin" 2>/dev/null || continue
    # A file over 256 KiB (a transform alone on the legacy file's zeros) waits for a form with
    # an entropy stage, to keep the folder small.
    if [ "$(size_of "$work/try.stz")" -le 262144 ] &&
       case " $("$C" used "$work/try.stz") " in *" $id "*) true ;; *) false ;; esac; then
      local file="codec-$(printf '%02d' "$id")-$name.$(safe "$spec").$i.stz"
      mv "$work/try.stz" "$g/$file"
      "$S" -q -d -c -T 1 "$g/$file" > "$work/dec"
      record stz "$file" - "$work/dec"
      for u in $("$C" used "$g/$file"); do case "$used_ids" in *" $u "*) ;; *) used_ids="$used_ids$u ";; esac; done
      return 0
    fi
    rm -f "$work/try.stz"
  done
  return 1
}
registry_ids=""
while IFS=$'\t' read -r id name specs; do
  registry_ids="$registry_ids $id"
  ok=0
  # A transform alone does not shrink its input, and the writer then stores the chunk: such a
  # codec is pinned followed by zstd. A codec for one kind of section (cell metadata, tokens,
  # K/V) is given that group only.
  for spec in $specs; do
    for form in "$spec" "$spec+zstd:1" "meta=$spec" "meta=$spec+zstd:1" "kv=$spec" "kv=$spec+zstd:1"; do
      if try_codec "$id" "$name" "$form"; then ok=1; break; fi
    done
  done
  if [ $ok = 0 ]; then
    echo "make_golden: codec $id ($name): no sample spec of it ($specs) is used on any input" >&2
    [ "${GOLDEN_ALLOW_MISSING:-0}" = 1 ] || exit 1
  fi
  if [ "$name" != planes ]; then
    first="${specs%% *}"
    try_codec 13 "planes-$name" "planes(all=$first)" || try_codec 13 "planes-$name" "planes(all=$first+zstd:1)" ||
      echo "make_golden: codec $id ($name): planes(all=$first) not written (refused or unused)" >&2
  fi
done < <("$C" codecs)
for id in $registry_ids; do
  case "$used_ids" in *" $id "*) ;; *)
    echo "make_golden: codec id $id appears in no file" >&2
    [ "${GOLDEN_ALLOW_MISSING:-0}" = 1 ] || exit 1 ;;
  esac
done

# --- Each lossy mode.
enc f32 lossy-f16-exact.f32.stz --lossy f16-exact
enc f16 lossy-drop_K2_V6.f16.stz --lossy drop:K=2,V=6
enc f16fa lossy-keep_K8_V6.f16fa.stz --lossy keep:K=8,V=6
enc bf16 lossy-drop_V3.bf16.stz --lossy drop:V=3

# --- --patch-from, one file per patch map version, with its REF (named as given: relative).
# Map version 1: REF is an earlier turn with the same tokens and the cells from 40 on different;
# version 2: REF has the same cells and other tokens, which the file's token model predicts.
patch() {  # name ref file map-version
  local name="$1" ref="$2" file="$3" v="$4"
  record ref "$ref" - "$g/$ref"
  (cd "$g" && "$S" -v -f -T 1 --patch-from="$ref" -o "$name" "$file") 2> "$work/log"
  if grep -q "tokens predicted from their cells" "$work/log"; then got=2; else got=1; fi
  [ "$got" = "$v" ] || { echo "make_golden: $name has patch map version $got, not $v:" >&2; cat "$work/log" >&2; exit 1; }
  (cd "$g" && "$S" -q -d -c -T 1 --patch-from="$ref" "$name") > "$work/dec"
  cmp -s "$work/dec" "$file" || { echo "make_golden: $name does not decode to its input" >&2; exit 1; }
  record patch "$name" "$ref" "$work/dec"
}
"$C" related "$in/turn2.bin" "$g/patch-mapv1.ref.bin" 40 -1
patch patch-mapv1.stz patch-mapv1.ref.bin "$in/turn2.bin" 1
cp "$in/repeats-other-tokens.bin" "$g/patch-mapv2.ref.bin"
patch patch-mapv2.stz patch-mapv2.ref.bin "$in/repeats.bin" 2

# --- A .stzp set of two related turns, then an append of a third (member names as given).
cp "$g/patch-mapv1.ref.bin" "$work/turn1.bin"; cp "$in/turn2.bin" "$work/turn2.bin"; cp "$in/repeats.bin" "$work/turn3.bin"
(cd "$work" && "$S" pack -q -f -T 1 -o "$g/set.stzp" turn1.bin turn2.bin)
(cd "$work" && "$S" pack -q -T 1 --append "$g/set.stzp" turn3.bin)
for m in turn1.bin turn2.bin turn3.bin; do
  rm -rf "$work/unpacked"; mkdir "$work/unpacked"
  "$S" unpack -q "$g/set.stzp" "$m" -C "$work/unpacked"
  cmp -s "$work/unpacked/$m" "$work/$m" || { echo "make_golden: set member $m does not restore" >&2; exit 1; }
  record member set.stzp "$m" "$work/unpacked/$m"
done

# --- The manifest, then OUT.
{
  printf '# Golden files of statezip %s, written by tools/make_golden.sh: never rewrite them.\n' "$release"
  printf '# codec ids:%s\n' "$registry_ids"
  printf '# element types: %s legacy\n' "$types"
  printf '# kind\tfile\tneeds\tbytes\txxh3-64\tdecoded-bytes\tdecoded-xxh3-64\n'
  sort -t$'\t' -k2,2 -k3,3 "$manifest"
} > "$g/MANIFEST.tsv"
cat > "$g/README.md" <<README
# Golden files of statezip $release

Written by \`tools/make_golden.sh tests/data/golden-$release\` (one command; the same build
writes the same bytes every time). MANIFEST.tsv lists each file, what it needs to decode (a \`--patch-from\` REF of this
folder, a member of the set), its size and XXH3-64, and the size and XXH3-64 of what it decodes
to. \`tests/test_golden.cpp\` decodes every file and fails on a missing, extra or changed one.
Never regenerate this folder once $release has shipped.
README
mkdir -p "$out"
find "$out" -mindepth 1 -maxdepth 1 -type f -delete
cp "$g"/* "$out/"
echo "make_golden: $(grep -vc '^#' "$g/MANIFEST.tsv") entries, $(du -sk "$out" | cut -f1) KiB in $out"
