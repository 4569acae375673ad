#!/usr/bin/env bash
# Bytes of every corpus file with statezip's default preset against `xz -9` of the same file
# (and the fast and max presets beside them). Files are every *.bin directly inside each
# folder of $STATEZIP_CORPUS (':'-separated). Prints a Markdown table; rows where the
# default is not smaller than xz -9 are marked "xz".
#   bench/xz_gap.sh [BUILD_DIR] [--no-max]
# xz sizes do not depend on statezip: they are kept in ${XZGAP_CACHE:-${TMPDIR:-/tmp}/xzgap-cache}
# (one file per input, keyed by its name, size and modification time).
set -euo pipefail
BUILD="build" MAX=1
for a in "$@"; do
  case "$a" in
    --no-max) MAX=0 ;;
    *) BUILD="$a" ;;
  esac
done
STZ="$BUILD/statezip"
[ -x "$STZ" ] || { echo "no $STZ (build first)" >&2; exit 1; }
[ -n "${STATEZIP_CORPUS:-}" ] || { echo "set STATEZIP_CORPUS (':'-separated folders)" >&2; exit 1; }
CACHE="${XZGAP_CACHE:-${TMPDIR:-/tmp}/xzgap-cache}"
mkdir -p "$CACHE"
bytes() { "$@" | wc -c; }
xz_bytes() {
  local f="$1" key
  key="$(basename "$f").$(stat -c '%s.%Y' "$f")"
  [ -s "$CACHE/$key" ] || bytes xz -9 -c -T1 "$f" >"$CACHE/$key"
  cat "$CACHE/$key"
}
echo "| file | bytes | xz -9 | default | default/xz | fast | max |"
echo "|---|---|---|---|---|---|---|"
losers=0 total=0
IFS=':' read -r -a dirs <<<"$STATEZIP_CORPUS"
for d in "${dirs[@]}"; do
  for f in "$d"/*.bin; do
    [ -f "$f" ] || continue
    total=$((total + 1))
    raw=$(stat -c %s "$f")
    xz=$(xz_bytes "$f")
    def=$(bytes "$STZ" -q -c "$f")
    fast=$(bytes "$STZ" -q -c --fast "$f")
    max="-"
    [ "$MAX" = 1 ] && max=$(bytes "$STZ" -q -c --max "$f")
    mark=""
    [ "$def" -ge "$xz" ] && { mark=" xz"; losers=$((losers + 1)); }
    awk -v n="$(basename "$d")/$(basename "$f")" -v r="$raw" -v x="$xz" -v s="$def" -v fa="$fast" -v m="$max" -v k="$mark" \
      'BEGIN { printf "| %s | %d | %d | %d | %.3f%s | %d | %s |\n", n, r, x, s, s / x, k, fa, m }'
  done
done
echo
echo "$losers of $total files are not smaller with the default preset than with xz -9."
