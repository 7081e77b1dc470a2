#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for gguftool.
#
#   ./setup.sh              installs the Debian packages the two programs need (apt-get, as root or
#                           through sudo), then configures ./build (BUILD_DIR=... overrides) and
#                           builds gguftool and gguftool-onnx, nothing else;
#   ./setup.sh --test-deps  installs what the tests need on top (GoogleTest, clang-14 for the
#                           sanitizer build, xxhsum, Node.js) and the pinned npm packages of
#                           package-lock.json (npm ci): llama.cpp's prebuilt libggml-base and
#                           libllama, the ground truth, onnxruntime-node, transformers.js,
#                           Hugging Face's tokenizers (its Rust library's Node binding, prebuilt)
#                           and puppeteer-core, which drives chromium for the browser test.
#                           tests/run.sh runs it.
set -euo pipefail
cd "$(dirname "$0")"

# What gguftool and gguftool-onnx are built from.
program_packages=(build-essential cmake pkg-config
                  libcli11-dev libfmt-dev nlohmann-json3-dev libhwy-dev
                  libonnx-dev libprotobuf-dev protobuf-compiler
                  libxxhash-dev  # gguftool hash: xxHash
                  nettle-dev     # gguftool hash: SHA-1, SHA-256
                  libpcre2-dev libutf8proc-dev  # gguftool-onnx: tokenizer.json's regexes, Unicode
                  libopenblas-dev)  # gguftool-onnx run: MatMul and Gemm (cblas_sgemm)
# What the tests add.
test_packages=(libgtest-dev libgmock-dev
               clang-14 libclang-rt-14-dev  # clang: the sanitizer and fuzzing build (tests/run.sh)
               xxhash   # xxhsum, for the hash tests and bench_hash
               chromium)  # tests/ort: nbits packages in transformers.js' browser build

# Installs those of the given Debian packages that are missing.
apt_install() {
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
            missing+=("$p")
    done
    ((${#missing[@]})) || return 0
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    echo "setup: installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

if [ "${1:-}" = "--test-deps" ]; then
    node=()
    # Node.js may come from elsewhere than Debian's packages: ask apt for it only when npm is absent.
    command -v npm >/dev/null 2>&1 || node=(nodejs npm)
    apt_install "${program_packages[@]}" "${test_packages[@]}" "${node[@]}"
    if [ ! -f node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libggml-base.so ] ||
       [ ! -f node_modules/onnxruntime-node/bin/napi-v6/linux/x64/onnxruntime_binding.node ] ||
       [ ! -f node_modules/@huggingface/transformers/package.json ] ||
       [ ! -f node_modules/puppeteer-core/package.json ] ||
       [ ! -f node_modules/tokenizers/package.json ]; then
        npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
    fi
    exit 0
fi

apt_install "${program_packages[@]}"
build_dir="${BUILD_DIR:-build}"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build_dir" -j"$(nproc)" --target gguftool_cli gguftool_onnx_cli
