#!/bin/sh
# Every "STATE-FORMATS.md §N" (or "§A-§B") a comment in src/ or tools/ cites is a section of
# docs/STATE-FORMATS.md (an <a id="sN"> anchor), so the references resolve in a fresh clone.
set -eu
src=$1
doc=$src/docs/STATE-FORMATS.md
missing=0
for n in $(grep -rhoE 'STATE-FORMATS\.md §[0-9.]+(-§[0-9.]+)?(, §[0-9.]+(-§[0-9.]+)?)*' "$src/src" "$src/tools" \
           | grep -oE '§[0-9]+(\.[0-9]+)?' | tr -d '§' | sort -u); do
  if ! grep -q "<a id=\"s$n\"></a>" "$doc"; then echo "cited but missing in docs/STATE-FORMATS.md: §$n" >&2; missing=1; fi
done
grep -rq 'spec §' "$src/src" "$src/tools" && { echo "a comment still cites 'spec §' (use STATE-FORMATS.md §)" >&2; missing=1; }
exit $missing
