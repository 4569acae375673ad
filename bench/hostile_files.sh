#!/usr/bin/env bash
# Second hardening pass, the file-system cases: a --patch-from reference that --rm would remove
# or an output would replace, pack outputs that are devices, FIFOs or links to them, FIFOs
# without a writer, a new set over one an append holds, -l of member sizes that wrap. Prints a
# markdown table: exit code, seconds, peak RSS, first stderr line, and what became of the files.
#   bench/hostile_files.sh [BUILD]   BUILD: folder with statezip, stz-hostile, stz-gen (default: build)
# With STATEZIP_BEFORE=/path/to/an/older/statezip each case is run by that binary too (same
# fresh inputs), in a second row. Never writes to a real device with -f: devices are reached
# through links in a private folder (removed on exit). Every run is bounded by `timeout 10`.
set -euo pipefail

BUILD=$(cd "${1:-build}" && pwd)
STZ=$BUILD/statezip
HOSTILE=$BUILD/stz-hostile
GEN=$BUILD/stz-gen
BEFORE=${STATEZIP_BEFORE:-}
for b in "$STZ" "$HOSTILE" "$GEN" ${BEFORE:+"$BEFORE"}; do
    [ -x "$b" ] || { echo "hostile_files.sh: $b is missing" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "hostile_files.sh: needs GNU time (/usr/bin/time)" >&2; exit 2; }

top=$(mktemp -d "${TMPDIR:-/tmp}/stz-hostile-files.XXXXXX")
trap 'rm -rf "$top"' EXIT
trap 'exit 130' INT TERM HUP
"$GEN" session9 "$top/turn1.bin" --cells 400 --seed 1 >/dev/null
"$GEN" session9 "$top/turn2.bin" --cells 400 --seed 2 >/dev/null
"$GEN" session9 "$top/turn3.bin" --cells 400 --seed 3 >/dev/null

# fresh: a new folder $w holding the three turns (each run starts from the same files).
fresh() {
    w=$top/w
    rm -rf "$w"
    mkdir "$w"
    cp "$top"/turn?.bin "$w"/
}
sum() { [ -e "$1" ] && cksum < "$1" | cut -d' ' -f1 || echo missing; }
kind() {
    if [ -L "$1" ]; then echo "link"; elif [ -p "$1" ]; then echo "FIFO"; elif [ -c "$1" ]; then echo "char device";
    elif [ -f "$1" ]; then echo "regular file"; elif [ -e "$1" ]; then echo "other"; else echo "missing"; fi
}

# measure BIN ARGS...: runs in $w; sets m_exit, m_sec, m_mib, m_msg.
measure() {
    local rc=0
    (cd "$w" && /usr/bin/time -o "$top/time" -f "%e %M" timeout 10 "$@" >"$top/out" 2>"$top/err" </dev/null) || rc=$?
    m_exit=$rc
    [ "$rc" -eq 124 ] && m_exit="124 (timeout 10 s)"
    m_msg=$(head -n 1 "$top/err" | sed -e "s|$top/||g" -e 's/|/\\|/g' | cut -c1-120)
    read -r m_sec m_kb < <(tail -n 1 "$top/time")
    m_mib=$(awk -v k="$m_kb" 'BEGIN { printf "%.0f", k / 1024 }')
}

echo "| case | binary | command | exit | stderr, first line | s | peak RSS MiB | afterwards |"
echo "|---|---|---|---|---|---:|---:|---|"
# run CASE SETUP CHECK ARGS...: for each binary, fresh folder, SETUP (shell, in $w), the run
# (ARGS, statezip's), then CHECK (shell, in $w, prints what became of the files).
run() {
    local name=$1 setup=$2 check=$3
    shift 3
    local label bin
    for label in after before; do
        bin=$STZ
        if [ "$label" = before ]; then [ -n "$BEFORE" ] || continue; bin=$BEFORE; fi
        fresh
        (cd "$w" && eval "$setup")
        measure "$bin" "$@"
        local after
        after=$(cd "$w" && eval "$check" 2>&1 | tr '\n' ' ' | sed 's/|/\\|/g')
        echo "| $name | $label | \`statezip $*\` | $m_exit | $m_msg | $m_sec | $m_mib | $after |"
    done
}

refs='echo "turn1.bin $(test -e turn1.bin && echo kept || echo REMOVED), turn2.bin $(test -e turn2.bin && echo kept || echo REMOVED)"'
run "REF among --rm inputs (1)" ":" "$refs" --rm -q --patch-from=turn1.bin turn1.bin turn2.bin turn3.bin
run "output replaces REF (1)" "\"$STZ\" -q turn1.bin; sum turn1.bin.stz > ref.sum" \
    'test "$(sum turn1.bin.stz)" = "$(cat ref.sum)" && echo "REF turn1.bin.stz intact" || echo "REF turn1.bin.stz REPLACED"' \
    -q -f --patch-from=turn1.bin.stz turn1.bin
run "-d -o REF (1)" "\"$STZ\" -q --patch-from=turn2.bin -o p.stz turn3.bin; sum turn2.bin > ref.sum" \
    'test "$(sum turn2.bin)" = "$(cat ref.sum)" && echo "REF turn2.bin intact" || echo "REF turn2.bin REPLACED"' \
    -q -d -f --patch-from=turn2.bin -o turn2.bin p.stz
run "pack -o /dev/null (2)" ":" 'echo "/dev/null: $(kind /dev/null)"' -q pack -o /dev/null turn1.bin turn2.bin
run "pack -f -o link to /dev/null (2)" "ln -s /dev/null null-link" 'echo "null-link: $(kind null-link)"' \
    -q pack -f -o null-link turn1.bin turn2.bin
run "pack -f -o link to /dev/full (2)" "ln -s /dev/full full-link" 'echo "full-link: $(kind full-link)"' \
    -q pack -f -o full-link turn1.bin turn2.bin
run "pack -f -o FIFO with a reader (2)" "mkfifo fifo; (timeout 10 cat fifo > got.stzp; echo \$? > cat.rc) &" \
    'sleep 0.5; echo "fifo: $(kind fifo), reader: exit $(cat cat.rc 2>/dev/null || echo "still waiting"), $(stat -c %s got.stzp 2>/dev/null || echo 0) bytes"' \
    -q pack -f -o fifo turn1.bin turn2.bin
"$HOSTILE" member-size "$top/huge.stzp"
run "-l, member sizes wrap (11)" "cp \"$top/huge.stzp\" ." 'head -n 1 "'"$top"'/out" | sed "s|^huge.stzp: ||"' -l huge.stzp
nowriter='echo "fifo: $(kind fifo)"'
run "FIFO without writer as REF (12)" "mkfifo fifo" "$nowriter" -q --patch-from=fifo -o x.stz turn2.bin
run "FIFO without writer as pack input (12)" "mkfifo fifo" "$nowriter" -q pack -o set.stzp fifo
run "FIFO without writer, -t (12)" "mkfifo fifo" "$nowriter" -q -t fifo
run "FIFO without writer, unpack SET (12)" "mkfifo fifo" "$nowriter" -q unpack fifo
set_sum='echo "set $(test "$(sum set.stzp)" = "$(cat set.sum)" && echo unchanged || echo REPLACED)"'
run "pack -f -o SET while an append holds it (12)" \
    "\"$STZ\" -q pack -o set.stzp turn1.bin; sum set.stzp > set.sum; (flock set.stzp sleep 3 &) ; sleep 0.3" \
    "$set_sum" -q pack -f -o set.stzp turn2.bin

# The race itself: pack -f -o SET and pack --append SET started together, 20 rounds on a fresh
# set each; counts how the rounds ended (both 0 with the append missing = the lost update).
race() {
    local bin=$1 lost=0 kept=0 refused=0 r a b ra rb
    for r in $(seq 1 20); do
        rm -f set.stzp
        timeout 10 "$bin" -q pack -o set.stzp t1.bin
        timeout 10 "$bin" -q pack -f -o set.stzp t2.bin 2>/dev/null & a=$!
        timeout 10 "$bin" -q pack --append set.stzp t3.bin 2>/dev/null & b=$!
        ra=0; wait $a || ra=$?
        rb=0; wait $b || rb=$?
        if [ "$ra" -ne 0 ] || [ "$rb" -ne 0 ]; then refused=$((refused + 1))
        elif "$bin" -l set.stzp | grep -q t3.bin; then kept=$((kept + 1))
        else lost=$((lost + 1)); fi
    done
    echo "of 20 rounds: both exit 0 and the append lost $lost, both kept $kept, one refused $refused"
}
fresh
for i in 1 2 3; do "$GEN" session9 "$w/t$i.bin" --cells 3000 --seed "$i" >/dev/null; done
for label in after before; do
    bin=$STZ
    if [ "$label" = before ]; then [ -n "$BEFORE" ] || continue; bin=$BEFORE; fi
    echo "| pack -f -o SET racing pack --append SET (12) | $label | \`statezip pack -f -o set.stzp t2.bin & statezip pack --append set.stzp t3.bin\` | | | | | $(cd "$w" && race "$bin") |"
done
