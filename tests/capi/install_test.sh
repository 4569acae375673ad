#!/bin/sh
# Installs the build tree into a temporary prefix, then builds the README's C example from the
# installed files only: with cc and pkg-config, and as a CMake project with find_package.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -eu
build=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null

# Only the C API is public: no internal header was installed.
test -f "$prefix/include/statezip.h"
if find "$prefix/include" -name '*.hpp' | grep -q .; then echo "internal headers installed" >&2; exit 1; fi

pcdir=$(dirname "$(find "$prefix" -name statezip.pc | head -n 1)")
libdir=$(dirname "$pcdir")
export PKG_CONFIG_PATH=$pcdir
echo "pkg-config: $(pkg-config --cflags --libs statezip)"
cc -std=c99 -Wall -Wextra -Werror -o "$work/example-pc" "$src/tests/capi/example.c" $(pkg-config --cflags --libs statezip)
LD_LIBRARY_PATH=$libdir "$work/example-pc"
# A real llama.cpp state (a sequence file from tests/data) through every preset.
cc -std=c99 -Wall -Wextra -Werror -o "$work/roundtrip-pc" "$src/tests/capi/roundtrip_file.c" $(pkg-config --cflags --libs statezip)
LD_LIBRARY_PATH=$libdir "$work/roundtrip-pc" "$src/tests/data/ggsq3.stories260K.f16.fa1.c1024.t322.bin"

# Static linking with pkg-config --static works too.
cc -std=c99 -o "$work/example-static" "$src/tests/capi/example.c" $(pkg-config --cflags statezip) \
   "$libdir/libstatezip.a" $(pkg-config --libs-only-other --libs-only-l --static statezip | sed 's/-lstatezip//')
"$work/example-static"

cmake -S "$src/tests/capi/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
  -DSTATEZIP_WANT="$(pkg-config --modversion statezip | cut -d. -f1,2)" >/dev/null
cmake --build "$work/consumer" >/dev/null
"$work/consumer/consumer"   # the CMake package sets the RPATH of the build tree

# The installed Python module finds the installed library by its SONAME.
if command -v python3 >/dev/null; then
  PYTHONPATH=$prefix/lib/python3/dist-packages LD_LIBRARY_PATH=$libdir python3 -c '
import statezip, sys
z = statezip.compress(open(sys.argv[1], "rb").read(), preset="fast")
assert statezip.decompress(z) == open(sys.argv[1], "rb").read()
print("python (installed):", statezip.version(), len(z), "bytes, round trip OK")' "$src/tests/data/ggsq3.stories260K.f16.fa1.c1024.t322.bin"
fi

# The example shown in README.md and docs/API.md is exactly the file compiled above.
for doc in README.md docs/API.md; do
  awk '/^<!-- example.c:/ {grab=1; next} grab && /^```c$/ {inside=1; next} inside && /^```$/ {exit} inside {print}' \
    "$src/$doc" > "$work/example-from-doc.c"
  if ! cmp -s "$work/example-from-doc.c" "$src/tests/capi/example.c"; then
    echo "$doc: the C example differs from tests/capi/example.c" >&2
    diff "$work/example-from-doc.c" "$src/tests/capi/example.c" >&2 || true
    exit 1
  fi
done
echo "install test: OK"
