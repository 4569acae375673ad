#!/usr/bin/env bash
# Builds llama-server (llama.cpp release v0.4.0) with statezip's compressed prompt cache:
#   tools/build-llama-server.sh OUTDIR [--unpatched]
# On a fresh Debian 12 machine (root, or sudo): installs the apt packages it lacks, installs the
# npm package node-llama-cpp@3.21.1 from tests/integration/package-lock.json into OUTDIR/npm (its
# prebuilt CPU libraries and the llama.cpp source bundle), builds libstatezip from this checkout
# and installs it under OUTDIR, clones the bundle into OUTDIR/src/llama.cpp, applies
# integrations/llama-server/patches/*.patch (none with --unpatched) and builds
# OUTDIR/bin/llama-server against the installed libstatezip and the prebuilt libraries (copied
# into OUTDIR/lib; the binary finds them by rpath). Only the server's own sources, mtmd,
# cpp-httplib and small vendored pieces are compiled. A second run redoes only what changed.
set -euo pipefail
usage() { echo "usage: $0 OUTDIR [--unpatched]" >&2; exit 2; }
[ $# -ge 1 ] || usage
out="$1"; shift
patched=1
for a in "$@"; do case "$a" in --unpatched) patched=0 ;; *) usage ;; esac; done
repo="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$out"; out="$(cd "$out" && pwd)"
start=$SECONDS
jobs="$(nproc)"
log() { echo "build-llama-server: $*" >&2; }

packages=(build-essential cmake pkg-config git ninja-build liblz4-dev libzstd-dev liblzma-dev
          libcli11-dev libxxhash-dev libhtscodecs-dev)
command -v node >/dev/null || packages+=(nodejs npm)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  log "installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# 1. The npm package (prebuilt libraries + source bundle), pinned by the integration tests' lock.
npm_dir="$out/npm"
lock="$repo/tests/integration/package-lock.json"
mkdir -p "$npm_dir"
if ! cmp -s "$lock" "$npm_dir/package-lock.json" || [ ! -d "$npm_dir/node_modules/@node-llama-cpp/linux-x64" ]; then
  log "npm ci (node-llama-cpp 3.21.1)"
  cp "$repo/tests/integration/package.json" "$lock" "$npm_dir/"
  (cd "$npm_dir" && NODE_LLAMA_CPP_SKIP_DOWNLOAD=true npm ci --omit=optional --no-audit --no-fund --loglevel=error)
fi
prebuilt="$npm_dir/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64"
bundle="$npm_dir/node_modules/node-llama-cpp/llama/gitRelease.bundle"
[ -f "$prebuilt/libllama-common.so" ] && [ -f "$bundle" ] || { log "the npm package lacks $prebuilt or $bundle"; exit 1; }
mkdir -p "$out/lib" "$out/bin"
for f in "$prebuilt"/lib*.so; do
  cmp -s "$f" "$out/lib/$(basename "$f")" || cp "$f" "$out/lib/"
done
# ggml loads its CPU backend (the best libggml-cpu-*.so for this CPU) from the executable's folder.
for f in "$out"/lib/libggml-cpu-*.so; do ln -sf "../lib/$(basename "$f")" "$out/bin/"; done

# 2. libstatezip from this checkout, installed under OUTDIR.
log "libstatezip"
cmake -S "$repo" -B "$out/build/statezip" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTATEZIP_BUILD_TESTS=OFF \
  -DCMAKE_INSTALL_PREFIX="$out" -DCMAKE_INSTALL_LIBDIR=lib >/dev/null
cmake --build "$out/build/statezip" -j"$jobs" >/dev/null
cmake --install "$out/build/statezip" >/dev/null

# 3. The llama.cpp source, patched (or not): redone only when the patch series changed.
src="$out/src/llama.cpp"
if [ ! -d "$src/.git" ]; then
  log "cloning the llama.cpp bundle"
  mkdir -p "$out/src"
  git -c advice.detachedHead=false clone -q "$bundle" "$src"
  git -C "$src" tag -f stz-base >/dev/null
fi
patches=()
if [ $patched = 1 ]; then
  for p in "$repo"/integrations/llama-server/patches/*.patch; do
    if [ -f "$p" ]; then patches+=("$p"); fi
  done
fi
series="$( (echo "patched=$patched"; if [ ${#patches[@]} -gt 0 ]; then cat "${patches[@]}"; fi) | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$src/.stz-series" 2>/dev/null)" != "$series" ]; then
  log "applying ${#patches[@]} patch(es)"
  git -C "$src" reset -q --hard stz-base
  git -C "$src" clean -fdq -e .stz-series
  for p in "${patches[@]}"; do git -C "$src" apply --whitespace=nowarn "$p"; done
  echo "$series" > "$src/.stz-series"
fi

# 4. llama-server against the installed libstatezip and the prebuilt libraries.
log "llama-server"
cmake -S "$repo/integrations/llama-server" -B "$out/build/server" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DLLAMA_SRC="$src" -DLLAMA_LIBDIR="$out/lib" -DCMAKE_PREFIX_PATH="$out" -DCMAKE_INSTALL_PREFIX="$out" >/dev/null
cmake --build "$out/build/server" -j"$jobs" >/dev/null
cmake --install "$out/build/server" >/dev/null
"$out/bin/llama-server" --version >/dev/null 2>&1 || { log "the built $out/bin/llama-server does not run"; exit 1; }
log "done: $out/bin/llama-server ($([ $patched = 1 ] && echo patched || echo unpatched)) in $((SECONDS - start)) s"
