#!/usr/bin/env bash
# Cost growth with input size and the scaling of threads: compress/decompress wall time, MB/s
# and peak RSS of statezip on generated session files of 100 MB, 1 GB and 8 GB (tools' stz-gen,
# v10 layout, 32 layers x 1024-wide K/V, f16 unless SCALE_TYPES says more), with -T1 and -T2
# (only -T2 above 2 GB), and statezip --codec zstd:3 as the speed reference measured in the
# same run (and the system's `zstd -3 -T1` / `zstd -d`, -T1 sizes only, where zstd is
# installed). Both directions are timed twice: into a file (-o) and to /dev/null (-c), which
# leaves out the kernel's copy of the output into the page cache (on a virtual machine its
# cost depends on whether the guest's pages are already backed by the host: it varies from run
# to run more than anything statezip does, and it is one thread's work whatever -T says).
# Prints Markdown tables.
#   bench/scale.sh [BUILD_DIR] [SIZES...]      (default sizes: 100000000 1000000000 8000000000)
#   REPEATS=N (default 3): each measurement N times, interleaved (-T1, -T2, -T1, -T2, ...), so
#   that a shared machine's drifting load weighs on both thread counts alike; the tables show
#   medians, and -T2/-T1 is the median of the N paired ratios (each -T1 run with the -T2 run
#   right after it).
#   SCALE_TYPES="f16 q8_0" (default f16): the K/V types to generate (stz-gen --type).
# Needs ~3x the largest size in free space under ${TMPDIR:-/tmp}.
set -euo pipefail
BUILD="${1:-build}"; shift || true
[ $# -gt 0 ] && SIZES=("$@") || SIZES=(100000000 1000000000 8000000000)
REPEATS="${REPEATS:-3}"
read -r -a TYPES <<<"${SCALE_TYPES:-f16}"
STZ="$BUILD/statezip" GEN="$BUILD/stz-gen"
DIR="$(mktemp -d "${TMPDIR:-/tmp}/statezip-scale.XXXXXX")"
trap 'rm -rf "$DIR"' EXIT
# Each command starts with no dirty pages: the output the step before wrote (up to 1 GB) is
# written back first, untimed, instead of by the kernel while the next command runs (a
# decompression into a file right after a compression into one took 0.86-1.82 s at -T1 with
# the compression's writeback in flight, 0.83-0.98 s after a sync).
measure() {  # prints "seconds peak_kib"
  sync
  /usr/bin/time -f "%e %M" -o "$DIR/t" "$@" >/dev/null
  cat "$DIR/t"
}
# Raw rows: size type preset threads repeat cs cm ds dm ns nm packed cn (seconds, KiB, bytes; cn: compression to /dev/null).
RAW="$DIR/raw"
: >"$RAW"
for type in "${TYPES[@]}"; do
for size in "${SIZES[@]}"; do
  "$GEN" session10 "$DIR/in.bin" --size "$size" --layers 32 --embd 1024 --type "$type" --seed 7
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
          read -r cn _ <<<"$(measure zstd -q -3 -T1 -c "$DIR/in.bin")"
          read -r cs cm <<<"$(measure zstd -q -f -3 -T1 -o "$DIR/in.zst" "$DIR/in.bin")"
          read -r ds dm <<<"$(measure zstd -q -d -f -o "$DIR/out.bin" "$DIR/in.zst")"
          cmp -s "$DIR/in.bin" "$DIR/out.bin" || { echo "round trip failed" >&2; exit 1; }
          rm -f "$DIR/out.bin"
          read -r ns nm <<<"$(measure zstd -q -d -f -c "$DIR/in.zst")"
          echo "$real $type zstd-3-system $t $rep $cs $cm $ds $dm $ns $nm $(stat -c %s "$DIR/in.zst") $cn" >>"$RAW"
          rm -f "$DIR/in.zst"
          continue
        fi
        read -r cn _ <<<"$(measure "$STZ" -q $preset -T$t -c "$DIR/in.bin")"
        read -r cs cm <<<"$(measure "$STZ" -q -f $preset -T$t -o "$DIR/in.stz" "$DIR/in.bin")"
        read -r ds dm <<<"$(measure "$STZ" -q -d -f -T$t -o "$DIR/out.bin" "$DIR/in.stz")"
        cmp -s "$DIR/in.bin" "$DIR/out.bin" || { echo "round trip failed" >&2; exit 1; }
        rm -f "$DIR/out.bin"
        read -r ns nm <<<"$(measure "$STZ" -q -d -f -T$t -c "$DIR/in.stz")"
        packed=$(stat -c %s "$DIR/in.stz")
        echo "$real $type ${preset:-default} $t $rep $cs $cm $ds $dm $ns $nm $packed $cn" >>"$RAW"
        rm -f "$DIR/in.stz"
      done
    done
  done
  s0=$(date +%s.%N); "$STZ" inspect "$DIR/in.bin" >/dev/null; s1=$(date +%s.%N)
  echo "$real $type inspect 0 1 $(awk -v a="$s0" -v b="$s1" 'BEGIN { printf "%.2f", b-a }') 0 0 0 0 0 0 0" >>"$RAW"
  rm -f "$DIR/in.bin"
done
done
awk -v reps="$REPEATS" '
  # Raw rows: size type preset threads repeat cs cm ds dm ns nm packed cn (seconds, KiB, bytes).
  function median(list,   n, a, i, j, t) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
    return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
  }
  { key = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4
    if (!(key in seen)) { seen[key] = 1; order[++nk] = key }
    CS[key] = CS[key] " " $6; CM[key] = CM[key] " " $7; DS[key] = DS[key] " " $8; DM[key] = DM[key] " " $9
    NS[key] = NS[key] " " $10; NM[key] = NM[key] " " $11; P[key] = $12; CN[key] = CN[key] " " $13
    run[key SUBSEP $5] = $6 " " $13 " " $8 " " $10 }
  END {
    printf "| input | type | threads | preset | compress to file s | MB/s | compress to /dev/null s | MB/s | compress peak RSS | decompress to file s | MB/s | decompress to /dev/null s | MB/s | decompress peak RSS | ratio |\n"
    printf "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
    for (k = 1; k <= nk; k++) {
      split(order[k], f, SUBSEP); r = f[1]
      if (f[3] == "inspect") { printf "| %.0f MB | %s | inspect | | %.2f s | | | | | | | | | | |\n", r/1e6, f[2], median(CS[order[k]]); continue }
      cs = median(CS[order[k]]); cn = median(CN[order[k]]); ds = median(DS[order[k]]); ns = median(NS[order[k]])
      dm = median(DM[order[k]]); nm = median(NM[order[k]]); peak = dm > nm ? dm : nm
      printf "| %.0f MB | %s | %d | %s | %.2f | %.1f | %.2f | %.1f | %.0f MiB | %.2f | %.1f | %.2f | %.1f | %.0f MiB | %.3f |\n",
        r/1e6, f[2], f[4], f[3], cs, r/1e6/cs, cn, r/1e6/cn, median(CM[order[k]])/1024, ds, r/1e6/ds, ns, r/1e6/ns, peak/1024, r/P[order[k]]
    }
    printf "\n-T2 over -T1 (speed ratio, median of %d paired runs; min-max in brackets):\n\n", reps
    printf "| input | type | preset | compress to file | compress to /dev/null | decompress to file | decompress to /dev/null |\n|---|---|---|---|---|---|---|\n"
    for (k = 1; k <= nk; k++) {
      split(order[k], f, SUBSEP)
      base = f[1] SUBSEP f[2] SUBSEP f[3]
      if (f[4] != 1 || !((base SUBSEP 2 SUBSEP 1) in run)) continue  # no -T2 runs (system zstd)
      line = sprintf("| %.0f MB | %s | %s |", f[1]/1e6, f[2], f[3])
      for (m = 1; m <= 4; m++) {
        list = ""; lo = 1e9; hi = 0
        for (rep = 1; rep <= reps; rep++) {
          a = base SUBSEP 1 SUBSEP rep; b = base SUBSEP 2 SUBSEP rep
          if (!(a in run) || !(b in run)) continue
          split(run[a], x, " "); split(run[b], y, " ")
          q = y[m] > 0 ? x[m] / y[m] : 0; list = list " " q; if (q < lo) lo = q; if (q > hi) hi = q
        }
        line = line sprintf(" %.2fx (%.2f-%.2f) |", median(list), lo, hi)
      }
      print line
    }
  }' "$RAW"
