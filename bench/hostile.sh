#!/usr/bin/env bash
# Time and peak RSS of statezip on the hostile inputs of issue 14, as a markdown table. This
# is where they are measured: the unit tests (tests/hostile/) check behaviour, not timings.
#   bench/hostile.sh [BUILD]        BUILD: build folder with statezip, stz-hostile, stz-gen (default: build)
# With STATEZIP_OLD=/path/to/an/older/statezip (e.g. 0.1.0) a last column gives that binary's
# result on the inputs it can read, each run bounded by 60 s and 8 GiB of address space.
# Every input is generated (tools/stz-hostile, stz-gen, truncate) in a private folder removed
# on exit. Each run: /usr/bin/time (elapsed s, max RSS), `timeout 120`. About 1 min on 2 cores.
set -euo pipefail

BUILD=${1:-build}
STZ=$BUILD/statezip
HOSTILE=$BUILD/stz-hostile
GEN=$BUILD/stz-gen
OLD=${STATEZIP_OLD:-}
for b in "$STZ" "$HOSTILE" "$GEN" ${OLD:+"$OLD"}; do
    if [ ! -x "$b" ]; then
        echo "hostile.sh: $b is missing (cmake --build $BUILD --target statezip stz-hostile stz-gen)" >&2
        exit 2
    fi
done
[ -x /usr/bin/time ] || { echo "hostile.sh: needs GNU time (/usr/bin/time)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/stz-hostile.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM HUP

# measure LIMIT CMD...: runs CMD (stdout discarded) under timeout and GNU time; sets
# m_exit (code, with the signal or timeout named), m_msg (first stderr line), m_sec, m_mib.
measure() {
    local limit=$1 rc=0
    shift
    /usr/bin/time -o "$work/time" -f "%e %M" timeout "$limit" "$@" >/dev/null 2>"$work/err" </dev/null || rc=$?
    m_exit=$rc
    if [ "$rc" -eq 124 ]; then
        m_exit="124 (timeout ${limit} s)"
    elif [ "$rc" -gt 128 ]; then
        m_exit="$rc (SIG$(kill -l $((rc - 128))))"
    fi
    m_msg=$(head -n 1 "$work/err" | sed -e "s|$work/||g" -e 's/|/\\|/g' | cut -c1-140)
    read -r m_sec m_kb < <(tail -n 1 "$work/time")
    m_mib=$(awk -v k="$m_kb" 'BEGIN { printf "%.0f", k / 1024 }')
}

size_of() { stat -c %s "$1" 2>/dev/null || echo "-"; }

header="| case | command | exit | stderr, first line | s | peak RSS MiB | in → out bytes |"
rule="|---|---|---|---|---:|---:|---|"
if [ -n "$OLD" ]; then
    header+=" 0.1.0: exit, s, MiB, stderr |"
    rule+="---|"
fi
echo "$header"
echo "$rule"

# row CASE OLD(yes|no) ARGS...: one statezip run. In ARGS, @OUT@ is the output file (a fresh
# one for each binary) and IN=path marks the input whose size is reported (given as path).
row() {
    local name=$1 with_old=$2
    shift 2
    local args=() shown="statezip" in="" a
    for a in "$@"; do
        if [ "${a#IN=}" != "$a" ]; then a=${a#IN=}; in=$a; fi
        args+=("$a")
        shown+=" ${a//"$work"\//}"
    done
    shown=${shown//@OUT@/OUT}
    rm -f "$work/new.out" "$work/old.out"
    measure 120 "$STZ" "${args[@]//@OUT@/$work/new.out}"
    local sizes=""
    if [ -n "$in" ] && [ -e "$work/new.out" ]; then sizes="$(size_of "$in") → $(size_of "$work/new.out")"; fi
    local line="| $name | \`$shown\` | $m_exit | $m_msg | $m_sec | $m_mib | $sizes |"
    if [ -n "$OLD" ]; then
        if [ "$with_old" = yes ]; then
            measure 60 prlimit --as=8589934592 "$OLD" "${args[@]//@OUT@/$work/old.out}"
            local out=""
            if [ -n "$in" ] && [ -e "$work/old.out" ]; then out=", → $(size_of "$work/old.out") bytes"; fi
            line+=" $m_exit, $m_sec s, $m_mib MiB$out${m_msg:+, $m_msg} |"
        else
            line+=" not run |"
        fi
    fi
    echo "$line"
}
keep() { mv "$work/new.out" "$work/$1"; }  # keep the last row's output for the next rows

# 14.1: chanctx with row_records = 2^63+1 and the match model (0.1.0: SIGSEGV).
"$HOSTILE" chanctx-row-records "$work/rowrec.stz"
row "chanctx-row-records (14.1)" yes -T 1 -t "$work/rowrec.stz"
row "chanctx-row-records (14.1)" yes -T 1 -f -d "$work/rowrec.stz" -o @OUT@

# 14.8: 64 MiB declared by a ~300-byte file; a 64 MiB stage whose range coder overruns.
"$HOSTILE" oversized-stage "$work/oversized.stz"
row "oversized-stage (14.8)" yes -T 1 -t "$work/oversized.stz"
"$HOSTILE" range-overrun "$work/overrun.stz" --size $((64 << 20))
row "range-overrun, 64 MiB (14.8)" yes -T 1 -t "$work/overrun.stz"

# 14.7: -l of a sparse 1 GiB file whose end record claims ~54 M chunks.
"$HOSTILE" huge-chunk-count "$work/chunks.stz" --size $((1 << 30))
row "huge-chunk-count, 1 GiB sparse (14.7)" yes -l "$work/chunks.stz"

# 14.7: 4 GiB of zeros (sparse) in 64 MiB chunks: memory in flight must not grow with -T.
truncate -s 4G "$work/zeros.bin"
row "big-chunks, 4 GiB zeros (14.7)" no -q -f -T 1 --chunk-size 64 "IN=$work/zeros.bin" -o @OUT@
row "big-chunks, 4 GiB zeros (14.7)" no -q -f -T 16 --chunk-size 64 "IN=$work/zeros.bin" -o @OUT@
keep zeros.stz
row "big-chunks, 4 GiB zeros (14.7)" yes -T 1 -t "$work/zeros.stz"
row "big-chunks, 4 GiB zeros (14.7)" yes -T 16 -t "$work/zeros.stz"
row "big-chunks, 4 GiB zeros (14.7)" yes -T 16 -d -c "$work/zeros.stz"

# 14.4, 14.8, 14.10: ggsq v2 of empty memory records (two sections per 8 bytes).
"$HOSTILE" tiny-sections "$work/tiny128k.bin" --size $((128 << 10))
row "tiny-sections, 128 KiB (14.8, 14.10)" yes -q -f -T 1 "IN=$work/tiny128k.bin" -o @OUT@
"$HOSTILE" tiny-sections "$work/tiny12m.bin" --size 12600000
row "tiny-sections, 12.6 MB (14.4, 14.8)" no -q -f -T 1 "IN=$work/tiny12m.bin" -o @OUT@
keep tiny12m.stz
row "tiny-sections, 12.6 MB (14.4, 14.8)" no -T 1 -t "$work/tiny12m.stz"

# 14.10: incompressible 1-cell 512-layer records (two sections per 14 bytes).
"$HOSTILE" many-layers "$work/layers.bin"
row "many-layers (14.10)" yes -q -f -T 1 "IN=$work/layers.bin" -o @OUT@
row "many-layers (14.10)" yes -q -f -T 1 --max "IN=$work/layers.bin" -o @OUT@

# 14.9: geometry hints whose product wraps to the blob's real row size (4 x 512 x f16).
"$GEN" legacy-dump "$work/legacy.bin" --layers 4 --ctx 256 --embd 512 --cells 50
row "geometry hints (14.9)" yes -q -f -T 1 --n-layer 9223372036854775809 --n-embd 2048 "IN=$work/legacy.bin" -o @OUT@

# 14.6: absurd thread counts.
row "threads (14.6)" yes -q -f -T 100000 "IN=$work/legacy.bin" -o @OUT@

# Second pass (issue 20): --patch-from maps that claim more than REF and the stored bytes
# justify (6), the Python module on them (7). REF is 1 MiB of noise (stz-hostile patch-ref).
# The old column never runs -d to a file on the 40 GiB case (it would fill the disk).
"$HOSTILE" patch-ref "$work/ref.bin"
"$HOSTILE" patch-byte-copies "$work/bytes1g.stz"
"$HOSTILE" patch-byte-copies "$work/bytes2e60.stz" --size $((1 << 60))
"$HOSTILE" patch-repeated-copies "$work/copies40g.stz"
"$HOSTILE" patch-byte-copies "$work/bytes2m.stz" --size $((2 << 20))
"$HOSTILE" patch-repeated-copies "$work/copies32m.stz" --size $((32 << 20))
"$HOSTILE" patch-size-claim "$work/claim4g.stz"
"$HOSTILE" patch-size-claim "$work/claim1p.stz" --size $((1 << 50))
row "patch: 2^30 one-byte copies (20.6)" yes -t "--patch-from=$work/ref.bin" "$work/bytes1g.stz"
row "patch: 2^30 one-byte copies (20.6)" yes -f -d "--patch-from=$work/ref.bin" "$work/bytes1g.stz" -o @OUT@
row "patch: 2^60 one-byte copies (20.6)" yes -t "--patch-from=$work/ref.bin" "$work/bytes2e60.stz"
row "patch: 40 GiB of whole-REF copies (20.6)" yes -t "--patch-from=$work/ref.bin" "$work/copies40g.stz"
row "patch: 40 GiB of whole-REF copies (20.6)" yes -d -c "--patch-from=$work/ref.bin" "$work/copies40g.stz"
row "patch: patched_size 4e9 (20.7)" yes -l "$work/claim4g.stz"
# Claims within patched_size's bound: the map's own checks refuse them before any output.
row "patch: 2^21 one-byte copies (20.6)" yes -f -d "--patch-from=$work/ref.bin" "$work/bytes2m.stz" -o @OUT@
row "patch: 32 MiB of whole-REF copies (20.6)" yes -f -d "--patch-from=$work/ref.bin" "$work/copies32m.stz" -o @OUT@

# pyrow CASE CODE: the Python module (python/ of this tree over BUILD's libstatezip) runs
# CODE (one statement; an exception ends it with exit 1 and its type and message); the old column uses STATEZIP_OLD_PYTHON (default: python/ beside the old build) over
# the libstatezip.so beside STATEZIP_OLD.
SRC=$(cd "$(dirname "$0")/.." && pwd)
pyrow() {
    local name=$1 code=$2 wrapped
    wrapped=$(printf 'import sys, statezip\ntry:\n    %s\nexcept BaseException as e:\n    sys.exit(type(e).__name__ + ": " + str(e))\n' "$code")
    measure 120 env PYTHONPATH="$SRC/python" STATEZIP_LIBRARY="$BUILD/libstatezip.so" python3 -c "$wrapped"
    local line="| $name | \`python3 -c '${code//"$work"\//}'\` | $m_exit | $m_msg | $m_sec | $m_mib | |"
    if [ -n "$OLD" ]; then
        local old_dir
        old_dir=$(dirname "$OLD")
        measure 60 prlimit --as=8589934592 env PYTHONPATH="${STATEZIP_OLD_PYTHON:-$old_dir/../python}" \
            STATEZIP_LIBRARY="$old_dir/libstatezip.so" python3 -c "$wrapped"
        line+=" $m_exit, $m_sec s, $m_mib MiB${m_msg:+, $m_msg} |"
    fi
    echo "$line"
}
pyrow "python: patched_size 2^50, no ref (20.7)" \
    "statezip.decompress(open('$work/claim1p.stz','rb').read())"
pyrow "python: patched_size 4e9, with its ref (20.7)" \
    "statezip.decompress(open('$work/claim4g.stz','rb').read(), ref=open('$work/ref.bin','rb').read())"
pyrow "python: 2^30 one-byte copies, with its ref (20.6, 20.7)" \
    "statezip.decompress(open('$work/bytes1g.stz','rb').read(), ref=open('$work/ref.bin','rb').read())"
# ---- Second pass: packs (issue 20, findings 3, 4, 5, 8, 9, 10) ----
# A second table: statezip, then (with STATEZIP_OLD) the older binary, on the same inputs;
# each run gets a fresh copy of the set (appends change it) and an empty unpack folder.
echo
echo "Second pass: packs"
echo
ph="| case | command | exit | s | peak RSS MiB | stderr, first line |"
pr="|---|---|---|---:|---:|---|"
if [ -n "$OLD" ]; then ph+=" before: exit | s | MiB | stderr |"; pr+="---|---:|---:|---|"; fi
echo "$ph"
echo "$pr"

# prow NAME SET ARGS...: in ARGS @SET@ is the fresh copy of SET, @DIR@ the unpack folder.
# PROW_PRE (words) goes before the binary, e.g. a file-size limit.
prow() {
    local name=$1 set=$2 a bin shown="statezip"
    shift 2
    for a in "$@"; do a=${a//@SET@/$(basename "$set")}; shown+=" ${a//@DIR@/DIR}"; done
    shown=${shown//$work\//}
    local line="| $name | \`${PROW_PRE:+$PROW_PRE }$shown\` |"
    for bin in "$STZ" ${OLD:+"$OLD"}; do
        rm -rf "$work/p.stzp" "$work/dir" && mkdir -p "$work/dir" && cp "$set" "$work/p.stzp"
        local args=("${@//@SET@/$work/p.stzp}")
        args=("${args[@]//@DIR@/$work/dir}")
        if [ "$bin" = "$STZ" ]; then
            measure 120 ${PROW_PRE:-} "$bin" "${args[@]}"
        else
            measure 120 prlimit --as=8589934592 ${PROW_PRE:-} "$bin" "${args[@]}"
        fi
        m_msg=${m_msg//p.stzp/$(basename "$set")}
        local left
        left=$(ls -A "$work/dir" | grep -c '^\.stz-' || true)
        [ "$left" -gt 0 ] && m_msg+=" ($left .stz-* temp file left)"
        line+=" $m_exit | $m_sec | $m_mib | $m_msg |"
    done
    echo "$line"
}

"$GEN" session9 "$work/member.bin" --cells 20 --layers 2 --embd 32 --ctx 64
# 5: one member record listed 65536 times (a 541 KB set).
"$HOSTILE" pack-repeated-member "$work/repeated.stzp" --size 65536
prow "repeated member record x65536 (20.5)" "$work/repeated.stzp" -l @SET@
prow "repeated member record x65536 (20.5)" "$work/repeated.stzp" -t @SET@
prow "repeated member record x65536 (20.5)" "$work/repeated.stzp" unpack -C @DIR@ @SET@
"$HOSTILE" pack-nested-member "$work/nested.stzp"
prow "member record nested in another (20.5)" "$work/nested.stzp" -l @SET@
# 4: one bit flipped in the last commit of a 3-member set.
"$HOSTILE" pack-damaged-commit "$work/damaged.stzp"
prow "damaged last commit (20.4)" "$work/damaged.stzp" -t @SET@
prow "damaged last commit (20.4)" "$work/damaged.stzp" -l @SET@
prow "damaged last commit (20.4)" "$work/damaged.stzp" pack --append @SET@ "$work/member.bin"
prow "damaged last commit (20.4)" "$work/damaged.stzp" pack -f --append @SET@ "$work/member.bin"
# 10: a run at block offset 2^64-1.
"$HOSTILE" pack-sentinel-run "$work/sentinel.stzp"
prow "run at block offset 2^64-1 (20.10)" "$work/sentinel.stzp" unpack -C @DIR@ @SET@
# 8: a valid 4 KB set of a 1 GiB member (one 64 MiB block of zeros used 16 times).
"$HOSTILE" pack-reuse-bomb "$work/bomb.stzp" --size $((1 << 30))
prow "1 GiB member from a 4 KB set (20.8)" "$work/bomb.stzp" -l @SET@
prow "1 GiB member from a 4 KB set (20.8)" "$work/bomb.stzp" -t @SET@
PROW_PRE="prlimit --fsize=67108864" prow "1 GiB member from a 4 KB set (20.8)" "$work/bomb.stzp" -t @SET@
# 9: a block of 64 Mi one-byte cells; appending with -M 128M.
"$HOSTILE" pack-one-byte-cells "$work/cells.stzp" --size $((64 << 20))
prow "64 Mi one-byte cells (20.9)" "$work/cells.stzp" pack -M 128M --append @SET@ "$work/member.bin"

# 3: an input rewritten in place (64 bytes, same size) at a random moment while pack reads it,
# 20 rounds per binary: how many rounds committed a member that -t then fails, said "input
# changed", said something else, or missed the change (the write came after the check).
race_rounds() {
    local bin=$1 i rc bad=0 changed=0 other=0 missed=0
    for i in $(seq 1 20); do
        cp "$work/race0.bin" "$work/race.bin" && rm -f "$work/race.stzp"
        # one write of 64 bytes at a random moment of the run (0 to 1.5 s in)
        ( sleep "$(awk -v r=$RANDOM 'BEGIN { printf "%.3f", (r % 1500) / 1000 }')"
          head -c 64 /dev/urandom | dd of="$work/race.bin" bs=64 seek=$((1000 + RANDOM % 40000)) conv=notrunc 2>/dev/null ) &
        local writer=$!
        rc=0; "$bin" pack -q -o "$work/race.stzp" "$work/race.bin" 2>"$work/race.err" || rc=$?
        kill "$writer" 2>/dev/null || true; wait "$writer" 2>/dev/null || true
        if [ "$rc" -eq 0 ]; then
            if "$bin" -q -t "$work/race.stzp" 2>/dev/null; then missed=$((missed + 1)); else bad=$((bad + 1)); fi
        elif grep -q "input changed while it was being packed" "$work/race.err"; then changed=$((changed + 1))
        else other=$((other + 1)); fi
    done
    echo "$bad committed and failing -t, $changed 'input changed', $other other errors, $missed missed"
}
"$GEN" session9 "$work/race0.bin" --cells 4000 --layers 8 --embd 256 --ctx 4096
echo
echo "Input rewritten while packed, $(size_of "$work/race0.bin") bytes, 20 rounds (20.3):"
echo "- statezip: $(race_rounds "$STZ")"
if [ -n "$OLD" ]; then echo "- before: $(race_rounds "$OLD")"; fi
# Second pass: files, references, devices (its own table; STATEZIP_BEFORE adds a row per case).
echo
"$(dirname "$0")/hostile_files.sh" "$BUILD"
