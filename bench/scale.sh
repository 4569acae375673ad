#!/usr/bin/env bash
# Cost growth with input size and the scaling of threads: compress/decompress wall time, MB/s
# and peak RSS of statezip on generated session files of 100 MB, 1 GB and 8 GB (tools' stz-gen,
# v10 layout, 32 layers x 1024-wide f16 K/V), with -T1 and -T2 (only -T2 above 2 GB), and
# statezip --codec zstd:3 as the speed reference measured in the same run (and the system's
# `zstd -3 -T1` / `zstd -d`, -T1 sizes only, where zstd is installed). Decompression is
# timed twice: to a file (-o) and to /dev/null (-c), which leaves out the disk's writing.
# Prints Markdown tables.
#   bench/scale.sh [BUILD_DIR] [SIZES...]      (default sizes: 100000000 1000000000 8000000000)
#   REPEATS=N (default 3): each measurement N times, interleaved (-T1, -T2, -T1, -T2, ...), so
#   that a shared machine's drifting load weighs on both thread counts alike; the tables show
#   medians, and -T2/-T1 is the median of the N paired ratios (each -T1 run with the -T2 run
#   right after it).
# Needs ~3x the largest size in free space under ${TMPDIR:-/tmp}.
set -euo pipefail
BUILD="${1:-build}"; shift || true
[ $# -gt 0 ] && SIZES=("$@") || SIZES=(100000000 1000000000 8000000000)
REPEATS="${REPEATS:-3}"
STZ="$BUILD/statezip" GEN="$BUILD/stz-gen"
DIR="$(mktemp -d "${TMPDIR:-/tmp}/statezip-scale.XXXXXX")"
trap 'rm -rf "$DIR"' EXIT
measure() {  # prints "seconds peak_kib"
  /usr/bin/time -f "%e %M" -o "$DIR/t" "$@" >/dev/null
  cat "$DIR/t"
}
# Raw rows: size preset threads repeat cs cm ds dm ns nm packed (seconds, KiB, bytes).
RAW="$DIR/raw"
: >"$RAW"
for size in "${SIZES[@]}"; do
  "$GEN" session10 "$DIR/in.bin" --size "$size" --layers 32 --embd 1024 --seed 7
  real=$(stat -c %s "$DIR/in.bin")
  # statezip's own zstd:3 in the same run: the speed reference; the system's zstd -3 -T1 / zstd -d
  # (what the targets name) beside it, single-threaded and at the sizes -T1 is measured on.
  for preset in "--codec=zstd:3" "--fast" "" "system-zstd"; do
    threads="1 2"
    [ "$size" -gt 2000000000 ] && threads="2"  # -T1 vs -T2 is measured on the smaller sizes
    if [ "$preset" = system-zstd ]; then
      command -v zstd >/dev/null && [ "$size" -le 2000000000 ] || continue
      threads="1"
    fi
    for rep in $(seq 1 "$REPEATS"); do
      for t in $threads; do
        if [ "$preset" = system-zstd ]; then
          read -r cs cm <<<"$(measure zstd -q -f -3 -T1 -o "$DIR/in.zst" "$DIR/in.bin")"
          read -r ds dm <<<"$(measure zstd -q -d -f -o "$DIR/out.bin" "$DIR/in.zst")"
          cmp -s "$DIR/in.bin" "$DIR/out.bin" || { echo "round trip failed" >&2; exit 1; }
          rm -f "$DIR/out.bin"
          read -r ns nm <<<"$(measure zstd -q -d -f -c "$DIR/in.zst")"
          echo "$real zstd-3-system $t $rep $cs $cm $ds $dm $ns $nm $(stat -c %s "$DIR/in.zst")" >>"$RAW"
          rm -f "$DIR/in.zst"
          continue
        fi
        read -r cs cm <<<"$(measure "$STZ" -q -f $preset -T$t -o "$DIR/in.stz" "$DIR/in.bin")"
        read -r ds dm <<<"$(measure "$STZ" -q -d -f -T$t -o "$DIR/out.bin" "$DIR/in.stz")"
        cmp -s "$DIR/in.bin" "$DIR/out.bin" || { echo "round trip failed" >&2; exit 1; }
        rm -f "$DIR/out.bin"
        read -r ns nm <<<"$(measure "$STZ" -q -d -f -T$t -c "$DIR/in.stz")"
        packed=$(stat -c %s "$DIR/in.stz")
        echo "$real ${preset:-default} $t $rep $cs $cm $ds $dm $ns $nm $packed" >>"$RAW"
        rm -f "$DIR/in.stz"
      done
    done
  done
  s0=$(date +%s.%N); "$STZ" inspect "$DIR/in.bin" >/dev/null; s1=$(date +%s.%N)
  echo "$real inspect 0 1 $(awk -v a="$s0" -v b="$s1" 'BEGIN { printf "%.2f", b-a }') 0 0 0 0 0 0" >>"$RAW"
  rm -f "$DIR/in.bin"
done
awk -v reps="$REPEATS" '
  function median(list,   n, a, i, j, t) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
    return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
  }
  { key = $1 SUBSEP $2 SUBSEP $3
    if (!(key in seen)) { seen[key] = 1; order[++nk] = key }
    CS[key] = CS[key] " " $5; CM[key] = CM[key] " " $6; DS[key] = DS[key] " " $7; DM[key] = DM[key] " " $8
    NS[key] = NS[key] " " $9; NM[key] = NM[key] " " $10; P[key] = $11
    run[$1 SUBSEP $2 SUBSEP $3 SUBSEP $4] = $5 " " $7 " " $9 }
  END {
    printf "| input | threads | preset | compress s | compress MB/s | compress peak RSS | decompress to file s | MB/s | decompress to /dev/null s | MB/s | decompress peak RSS | ratio |\n"
    printf "|---|---|---|---|---|---|---|---|---|---|---|---|\n"
    for (k = 1; k <= nk; k++) {
      split(order[k], f, SUBSEP); r = f[1]
      if (f[2] == "inspect") { printf "| %.0f MB | inspect | | %.2f s | | | | | | | | |\n", r/1e6, median(CS[order[k]]); continue }
      cs = median(CS[order[k]]); ds = median(DS[order[k]]); ns = median(NS[order[k]])
      dm = median(DM[order[k]]); nm = median(NM[order[k]]); peak = dm > nm ? dm : nm
      printf "| %.0f MB | %d | %s | %.2f | %.1f | %.0f MiB | %.2f | %.1f | %.2f | %.1f | %.0f MiB | %.3f |\n",
        r/1e6, f[3], f[2], cs, r/1e6/cs, median(CM[order[k]])/1024, ds, r/1e6/ds, ns, r/1e6/ns, peak/1024, r/P[order[k]]
    }
    printf "\n-T2 over -T1 (speed ratio, median of %d paired runs; min-max in brackets):\n\n", reps
    printf "| input | preset | compress | decompress to file | decompress to /dev/null |\n|---|---|---|---|---|\n"
    for (k = 1; k <= nk; k++) {
      split(order[k], f, SUBSEP)
      if (f[3] != 1 || !((f[1] SUBSEP f[2] SUBSEP 2 SUBSEP 1) in run)) continue  # no -T2 runs (system zstd)
      line = sprintf("| %.0f MB | %s |", f[1]/1e6, f[2])
      for (m = 1; m <= 3; m++) {
        list = ""; lo = 1e9; hi = 0
        for (rep = 1; rep <= reps; rep++) {
          a = f[1] SUBSEP f[2] SUBSEP 1 SUBSEP rep; b = f[1] SUBSEP f[2] SUBSEP 2 SUBSEP rep
          if (!(a in run) || !(b in run)) continue
          split(run[a], x, " "); split(run[b], y, " ")
          q = y[m] > 0 ? x[m] / y[m] : 0; list = list " " q; if (q < lo) lo = q; if (q > hi) hi = q
        }
        line = line sprintf(" %.2fx (%.2f-%.2f) |", median(list), lo, hi)
      }
      print line
    }
  }' "$RAW"
