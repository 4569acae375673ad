#!/bin/sh
# Every place a user reads the release from says project(VERSION) of CMakeLists.txt: the
# program's --version, the C header's macros, statezip.pc, the CMake package's version file, the
# man page, the shared library's SONAME (STATEZIP_SOVERSION), the Python module (when python3 can
# load this build's library) and the newest release heading of NEWS.md.
#   version_test.sh VERSION SOVERSION BUILD SRC STATEZIP LIBSTATEZIP [PYTHON3]
set -u
want=$1 so=$2 build=$3 src=$4 bin=$5 lib=$6 py=${7:-}
fails=0
check() {  # what, found
  if [ "$2" = "$want" ]; then echo "ok   $1: $2"; else echo "FAIL $1: '$2', expected '$want'"; fails=$((fails + 1)); fi
}
h=$build/include/statezip_version.h
macro() { sed -n "s/^#define STATEZIP_VERSION_$1 \(.*\)$/\1/p" "$h"; }
check "statezip_version.h STATEZIP_VERSION_STRING" "$(macro STRING | tr -d '"')"
check "statezip_version.h MAJOR.MINOR.PATCH" "$(macro MAJOR).$(macro MINOR).$(macro PATCH)"
check "statezip --version" "$("$bin" --version | sed -n '1s/^statezip \([^ ]*\) .*/\1/p')"
check "statezip.pc Version" "$(sed -n 's/^Version: //p' "$build/statezip.pc")"
check "statezipConfigVersion.cmake" "$(sed -n 's/^set(PACKAGE_VERSION "\(.*\)")$/\1/p' "$build/statezipConfigVersion.cmake")"
check "man page (built)" "$(sed -n '1s/^\.TH STATEZIP 1 "[^"]*" "statezip \([^"]*\)".*/\1/p' "$build/statezip.1")"
check "NEWS.md newest release" "$(sed -n 's/^## \([0-9][0-9.]*\).*/\1/p' "$src/NEWS.md" | head -n 1)"
if command -v readelf >/dev/null; then
  soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
  [ "$soname" = "libstatezip.so.$so" ] && echo "ok   SONAME: $soname" || { echo "FAIL SONAME: '$soname', expected libstatezip.so.$so"; fails=$((fails + 1)); }
fi
if [ -n "$py" ]; then
  check "python statezip.__version__" "$(PYTHONPATH=$src/python STATEZIP_LIBRARY=$lib "$py" -c 'import statezip; print(statezip.__version__)')"
  pyso=$(PYTHONPATH=$src/python STATEZIP_LIBRARY=$lib "$py" -c 'import statezip; print(statezip._SONAME_MAJOR)')
  [ "$pyso" = "$so" ] && echo "ok   python _SONAME_MAJOR: $pyso" || { echo "FAIL python _SONAME_MAJOR: '$pyso', expected $so"; fails=$((fails + 1)); }
else
  echo "(python module not checked: no python3, or a sanitizer build)"
fi
[ "$fails" -eq 0 ]
