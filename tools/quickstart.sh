#!/usr/bin/env bash
# One command to set up, build and run statezip on a fresh Debian 12 machine (as root, or
# with sudo).
#   tools/quickstart.sh bench   install, build, run `statezip bench` on the bundled sample state file
#   tools/quickstart.sh test    install, build and run everything CI runs:
#                               1. an ASan+UBSan build (clang) of the whole test suite, plus each
#                                  libFuzzer target for STATEZIP_FUZZ_SECONDS (default 60);
#                               2. the release build's full suite, including the real llama.cpp
#                                  integration tests (label "llama").
#   tools/quickstart.sh unit    only the release build and its tests without llama.cpp (quick loop)
# The real corpus (../shared/corpus, ../shared/corpus-legacy beside the repo) is used by the
# tests when present; set STATEZIP_CORPUS=dir1:dir2 to point elsewhere.
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-test}"

packages=(build-essential cmake pkg-config liblz4-dev libzstd-dev liblzma-dev libcli11-dev catch2
          libxxhash-dev libhtscodecs-dev zstd xz-utils lz4 python3 time)
# dpkg-dev (dpkg-shlibdeps) and file: cpack -G DEB, which the capi.deb test runs
[ "$what" = test ] && packages+=(dpkg-dev file)
[ "$what" = test ] && packages+=(clang libclang-rt-14-dev)
command -v node >/dev/null || packages+=(nodejs npm)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "quickstart: installing ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ -z "${STATEZIP_CORPUS:-}" ]; then
  corpus=()
  for d in ../shared/corpus ../shared/corpus-legacy; do [ -d "$d" ] && corpus+=("$(cd "$d" && pwd)"); done
  STATEZIP_CORPUS="$(IFS=:; echo "${corpus[*]:-}")"
fi
export STATEZIP_CORPUS
jobs="$(nproc)"

release_build() {
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build -j"$jobs"
}

case "$what" in
  bench)
    release_build
    exec ./build/statezip bench ;;
  unit)
    release_build
    cd build && exec ctest --output-on-failure -j"$jobs" -LE llama ;;
  test)
    [ -n "$STATEZIP_CORPUS" ] && echo "quickstart: corpus tests use $STATEZIP_CORPUS" >&2
    echo "quickstart: [1/2] sanitizer build (ASan+UBSan, clang) with fuzzing" >&2
    cmake -S . -B build-san -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DSTATEZIP_SANITIZE=ON -DSTATEZIP_FUZZ=ON -DSTATEZIP_FUZZ_SECONDS="${STATEZIP_FUZZ_SECONDS:-60}" >/dev/null
    cmake --build build-san -j"$jobs"
    (cd build-san && ctest --output-on-failure -j"$jobs" -LE llama)
    echo "quickstart: [2/2] release build, full suite with llama.cpp integration" >&2
    release_build
    cd build && exec ctest --output-on-failure -j"$jobs" ;;
  *) echo "usage: tools/quickstart.sh bench|test|unit" >&2; exit 2 ;;
esac
