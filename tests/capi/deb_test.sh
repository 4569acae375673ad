#!/bin/sh
# Builds the Debian packages of this build (cpack -G DEB, cmake/package.cmake) into WORK_DIR,
# installs them on this machine with dpkg -i, builds the README's C example with cc and
# pkg-config and the CMake consumer with find_package against the installed files only, runs the
# installed CLI and Python module, then removes the packages again (also on failure).
# It changes the machine, so it runs only as root and only when nothing of statezip is installed
# yet; otherwise it reports itself skipped (77).
# Usage: deb_test.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -eu
build=$1 src=$2 work=$3
skip() { echo "deb test skipped: $*"; exit 77; }

[ "$(id -u)" -eq 0 ] || skip "dpkg -i needs root"
for tool in dpkg dpkg-shlibdeps cpack pkg-config cc; do
  command -v "$tool" >/dev/null || skip "$tool not found"
done
[ -f "$build/CPackConfig.cmake" ] || skip "no CPackConfig.cmake in $build (not the top-level project)"
pkgs="statezip libstatezip-dev libstatezip0"
for p in $pkgs; do
  if dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q ' installed$'; then
    skip "$p is already installed; not touching it"
  fi
done

rm -rf "$work" && mkdir -p "$work"
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/pkg" >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log" >&2; exit 1; }
debs=$(ls "$work"/pkg/*.deb)
echo "packages:"; for d in $debs; do echo "  $(basename "$d")"; done
[ "$(echo "$debs" | wc -l)" -eq 3 ] || { echo "expected 3 .deb files" >&2; exit 1; }
for d in $debs; do
  echo "$(dpkg-deb -f "$d" Package): Depends: $(dpkg-deb -f "$d" Depends)"
done

# Files of another install (cmake --install --prefix /usr) would be taken over and then removed.
for d in $debs; do
  dpkg-deb -c "$d" | awk '$1 !~ /^d/ {sub(/^\./, "", $6); print $6}'
done >"$work/files"
while read -r f; do
  if [ -e "$f" ] || [ -L "$f" ]; then skip "$f exists already; not overwriting it"; fi
done <"$work/files"

installed=""
cleanup() {
  rc=$?
  if [ -n "$installed" ]; then
    # shellcheck disable=SC2086
    dpkg --purge $pkgs >"$work/purge.log" 2>&1 || { cat "$work/purge.log" >&2; rc=1; }
    while read -r f; do
      if [ -e "$f" ] || [ -L "$f" ]; then echo "left behind after dpkg --purge: $f" >&2; rc=1; fi
    done <"$work/files"
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
installed=yes
# shellcheck disable=SC2086
dpkg -i $debs >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; exit 1; }
for p in $pkgs; do
  dpkg-query -W -f='${Status}\n' "$p" | grep -q ' installed$' || { echo "$p not installed" >&2; exit 1; }
done

# The C example from the installed files only: the system's pkg-config path, no LD_LIBRARY_PATH.
unset PKG_CONFIG_PATH LD_LIBRARY_PATH CMAKE_PREFIX_PATH PYTHONPATH
echo "pkg-config: $(pkg-config --cflags --libs statezip)"
cc -std=c99 -Wall -Wextra -Werror -o "$work/example" "$src/tests/capi/example.c" $(pkg-config --cflags --libs statezip)
"$work/example"
cmake -S "$src/tests/capi/consumer" -B "$work/consumer" >/dev/null
cmake --build "$work/consumer" >/dev/null
"$work/consumer/consumer"

# The installed program: its version and a round trip of a small file.
/usr/bin/statezip --version
sample=$src/tests/data/ggsq3.stories260K.f16.fa1.c1024.t322.bin
/usr/bin/statezip -q -o "$work/sample.stz" "$sample"
/usr/bin/statezip -q -d -o "$work/sample.out" "$work/sample.stz"
cmp "$sample" "$work/sample.out"
echo "statezip (installed): $(wc -c <"$sample") -> $(wc -c <"$work/sample.stz") bytes, round trip OK"

# Debian policy: the page is gzipped (/usr/share/man/man1/statezip.1.gz), no uncompressed copy.
man_file=$(grep '/man1/statezip\.1' "$work/files" || true)
[ -n "$man_file" ] || { echo "no man page in the packages" >&2; exit 1; }
[ "$man_file" = /usr/share/man/man1/statezip.1.gz ] ||
  { echo "man page not (only) /usr/share/man/man1/statezip.1.gz: $man_file" >&2; exit 1; }
cli_deb=$(ls "$work"/pkg/statezip_*.deb)
dpkg-deb --fsys-tarfile "$cli_deb" | tar -xO ".$man_file" | gzip -t ||
  { echo "$man_file in $(basename "$cli_deb") is not gzip data" >&2; exit 1; }
dpkg-deb --fsys-tarfile "$cli_deb" | tar -xO ".$man_file" | gzip -dc | head -n 1 | grep -q '^\.TH STATEZIP 1 ' ||
  { echo "$man_file does not unpack to the man page" >&2; exit 1; }
# The man page: through man when man-db is there; Debian's minimal images tell dpkg not to
# unpack /usr/share/man (path-exclude), so then the package's listing has to do.
if command -v man >/dev/null && man -w statezip >/dev/null 2>&1; then
  echo "man page: $(man -w statezip)"
elif [ -f "$man_file" ]; then
  echo "man page: $man_file"
elif grep -qs 'path-exclude.*/usr/share/man' /etc/dpkg/dpkg.cfg.d/*; then
  echo "man page: $man_file in the package (dpkg excludes /usr/share/man on this machine)"
else
  echo "man page $man_file not installed" >&2; exit 1
fi

# The Python module finds the installed library by its SONAME (Debian's python3 reads
# /usr/lib/python3/dist-packages; a python3 of pyenv or a venv earlier on PATH does not).
if [ -x /usr/bin/python3 ]; then
  /usr/bin/python3 -c '
import statezip, sys
data = open(sys.argv[1], "rb").read()
assert statezip.decompress(statezip.compress(data, preset="fast")) == data
print("python (installed):", statezip.version(), "round trip OK")' "$sample"
fi
echo "deb test: OK"
