#!/bin/sh
# tools/make_golden.sh writes the same bytes twice with the same build (one thread, fixed seeds,
# relative names), so a release's golden folder is one reproducible command.
#   golden_repro_test.sh SRC BUILD WORK
set -eu
src=$1 build=$2 work=$3
rm -rf "$work"; mkdir -p "$work"
"$src/tools/make_golden.sh" "$work/a" "$build" 2>/dev/null
"$src/tools/make_golden.sh" "$work/b" "$build" 2>/dev/null
diff -r "$work/a" "$work/b"
echo "make_golden.sh: $(ls "$work/a" | wc -l) files, identical on two runs"
rm -rf "$work"
