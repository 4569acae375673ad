#!/usr/bin/env bash
# One command to set up, build and run statezip on a fresh Debian 12 machine.
#   tools/quickstart.sh bench   install, build, run `statezip bench` on the bundled sample state file
#   tools/quickstart.sh test    install, build, run the whole test suite (what CI runs)
# The real corpus (../shared/corpus, ../shared/corpus-legacy beside the repo) is used by the
# tests when present; set STATEZIP_CORPUS=dir1:dir2 to point elsewhere.
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-test}"

packages=(build-essential cmake pkg-config liblz4-dev libzstd-dev liblzma-dev libcli11-dev catch2
          libxxhash-dev zstd xz-utils lz4 python3)
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

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"

case "$what" in
  bench) exec ./build/statezip bench ;;
  test)
    [ -n "$STATEZIP_CORPUS" ] && echo "quickstart: corpus tests use $STATEZIP_CORPUS" >&2
    cd build && exec ctest --output-on-failure -j"$(nproc)" ;;
  *) echo "usage: tools/quickstart.sh bench|test" >&2; exit 2 ;;
esac
