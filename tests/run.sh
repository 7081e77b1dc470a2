#!/usr/bin/env bash
# Every test, twice: the release build (./build, made by setup.sh), then a clang-14 build with
# AddressSanitizer + UndefinedBehaviorSanitizer (./build-sanitize), which also runs each libFuzzer
# target briefly on its committed seeds and regression cases (fuzz/). Any sanitizer report fails.
set -euo pipefail
cd "$(dirname "$0")/.."

ctest --test-dir build --output-on-failure -j2

san="${SANITIZE_BUILD_DIR:-build-sanitize}"
if [ ! -f "$san/CMakeCache.txt" ]; then
    CC=clang-14 CXX=clang++-14 cmake -S . -B "$san" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DGGUFTOOL_FUZZ=ON -DGGUFTOOL_BUILD_BENCH=OFF >/dev/null
fi
cmake --build "$san" -j"$(nproc)"
ctest --test-dir "$san" --output-on-failure -j2
