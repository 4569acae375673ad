#!/usr/bin/env bash
# Seeds of the pack fuzz target: real sets packed now from the corpus's conv8 checkpoints and
# multi-sequence views (bench/sets.sh: the smaller files of those groups), when a corpus
# folder is given (env STATEZIP_CORPUS, else the configured one; ':'-separated), and small
# synthetic sets of checkpoints and of mixed flavours always.
#   make_pack_seeds.sh STATEZIP STZ-GEN OUT [CORPUS]
set -euo pipefail
STZ="$1" GEN="$2" OUT="$3" CORPUS="${STATEZIP_CORPUS:-${4:-}}"
rm -rf "$OUT" && mkdir -p "$OUT"
work=$(mktemp -d "${TMPDIR:-/tmp}/stz-pack-seeds.XXXXXX")
trap 'rm -rf "$work"' EXIT
# pack_group NAME FILE...: a set of the files that exist in a corpus folder (at least two).
pack_group() {
    local name=$1 f d found=()
    shift
    for f in "$@"; do
        IFS=: read -ra dirs <<< "$CORPUS"
        for d in "${dirs[@]}"; do
            if [ -n "$d" ] && [ -f "$d/$f" ]; then found+=("$d/$f"); break; fi
        done
    done
    if [ "${#found[@]}" -ge 2 ]; then
        mkdir -p "$work/$name" && cp "${found[@]}" "$work/$name/"
        (cd "$work/$name" && "$STZ" pack -q -o "$OUT/$name.stzp" *.bin)
    fi
}
if [ -n "$CORPUS" ]; then
    pack_group conv8-seq seq-s260k-conv8-f16-fa1-p1000.bin seq-s260k-conv8-f16-fa1-p1200.bin
    pack_group multi3-seq seq-s260k-multi3-kvu-f16-fa0-s0.bin seq-s260k-multi3-kvu-f16-fa0-s1.bin seq-s260k-multi3-kvu-f16-fa0-s2.bin
    pack_group multi2-hd32 raw-s260khd32-multi2-kvu-q8_0-fa1.bin seq-s260khd32-multi2-kvu-q8_0-fa1-s0.bin seq-s260khd32-multi2-kvu-q8_0-fa1-s1.bin
fi
# Synthetic: three checkpoints of one flavour (cells grow), and one set of mixed flavours.
mkdir -p "$work/ck" "$work/mix"
for n in 6 9 12; do "$GEN" session9 "$work/ck/c$n.bin" --cells "$n" --layers 2 --embd 32 --ctx 16; done
for f in seq2 raw seqraw; do "$GEN" "$f" "$work/mix/$f.bin" --cells 7 --layers 2 --embd 32 --ctx 16; done
head -c 200 /dev/zero > "$work/mix/zeros.bin"
(cd "$work/ck" && "$STZ" pack -q -o "$OUT/synth-checkpoints.stzp" *.bin)
(cd "$work/mix" && "$STZ" pack -q -o "$OUT/synth-mixed.stzp" *.bin)
ls "$OUT" | wc -l | xargs echo "pack seeds:" >&2
