#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for gguftool and builds it:
#   1. installs the Debian packages it needs (apt-get, as root or through sudo),
#   2. installs the pinned npm packages of package-lock.json (npm ci): llama.cpp's prebuilt
#      reference library and onnxruntime-node (tests/ort runs converted models in onnxruntime),
#   3. configures and builds everything into ./build (override with BUILD_DIR=...).
set -euo pipefail
cd "$(dirname "$0")"

packages=(build-essential cmake pkg-config git
          libcli11-dev libfmt-dev nlohmann-json3-dev libgtest-dev libgmock-dev
          libhwy-dev libbenchmark-dev libtbb-dev libonnx-dev libprotobuf-dev protobuf-compiler
          clang-14 libclang-rt-14-dev  # clang: the sanitizer and fuzzing build (tests/run.sh)
          libxxhash-dev  # gguftool hash: xxHash
          nettle-dev  # gguftool hash: SHA-1, SHA-256
          xxhash)  # xxhsum, for the hash tests and bench_hash

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js may come from elsewhere than Debian's packages: ask apt for it only when npm is absent.
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
if ((${#missing[@]})); then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    echo "setup: installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# llama.cpp's libggml-base.so, the ground truth for tests and `gguftool verify`, and
# onnxruntime-node's native binding (its prebuilt libonnxruntime ships in the same directory).
if [ ! -f node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libggml-base.so ] ||
   [ ! -f node_modules/onnxruntime-node/bin/napi-v6/linux/x64/onnxruntime_binding.node ]; then
    npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
fi

build_dir="${BUILD_DIR:-build}"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build_dir" -j"$(nproc)"
