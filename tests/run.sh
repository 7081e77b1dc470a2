#!/usr/bin/env bash
# Every test, once, in the build where it can fail:
#   1. installs what the tests need (./setup.sh --test-deps: GoogleTest, clang-14, xxhsum, Node.js,
#      and npm ci for llama.cpp's libraries and onnxruntime-node);
#   2. the release build (./build, BUILD_DIR=... overrides) with the tests, benchmarks and tools:
#      runs every test (ctest labels: unit, cli, slow, ort, ascend, install; see tests/CMakeLists.txt);
#   3. a clang-14 build with AddressSanitizer + UndefinedBehaviorSanitizer (./build-sanitize,
#      SANITIZE_BUILD_DIR=... overrides), which builds and runs only what a sanitizer can fail on:
#      not onnxruntime in node (label ort), not the install test, one emulated Ascend profile of
#      four, mutation loops scaled down; plus each libFuzzer target briefly on its committed seeds
#      and regression cases (label fuzz). Any sanitizer report fails.
# Extra arguments go to both ctest runs (e.g. -L unit, -R Dump).
set -euo pipefail
cd "$(dirname "$0")/.."

./setup.sh --test-deps

build="${BUILD_DIR:-build}"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DGGUFTOOL_BUILD_TESTS=ON \
    -DGGUFTOOL_BUILD_BENCH=ON -DGGUFTOOL_BUILD_TOOLS=ON >/dev/null
cmake --build "$build" -j"$(nproc)"
ctest --test-dir "$build" --output-on-failure -j2 "$@"

san="${SANITIZE_BUILD_DIR:-build-sanitize}"
CC=clang-14 CXX=clang++-14 cmake -S . -B "$san" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DGGUFTOOL_FUZZ=ON -DGGUFTOOL_BUILD_TESTS=ON -DGGUFTOOL_BUILD_BENCH=OFF \
    -DGGUFTOOL_BUILD_TOOLS=OFF >/dev/null
cmake --build "$san" -j"$(nproc)"
ctest --test-dir "$san" --output-on-failure -j2 "$@"
