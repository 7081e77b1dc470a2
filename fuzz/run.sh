#!/usr/bin/env bash
# Runs the libFuzzer targets, each for a given time, from the committed seeds and regression cases.
#
#   fuzz/run.sh [--seconds N] [--seeds] [TARGET ...]
#
#   --seconds N  how long each target runs (default 600)
#   --seeds      first regenerate the seed corpora in fuzz/corpus/ (make_seeds)
#   TARGET       gguf_reader block_decoders onnx_model npy_reader tensor_proto (default: all)
#
# Builds ./build-sanitize with clang-14 (ASan + UBSan + libFuzzer) when needed; BUILD_DIR overrides.
# New inputs go to fuzz-out/<target>/corpus (not committed); a crash, leak, timeout or
# out-of-memory stops that target and leaves its input as fuzz-out/<target>/crash-* (or leak-*,
# timeout-*, oom-*). Fix the bug, then commit the input to fuzz/regressions/<target>/: ctest runs
# every committed case on each fuzz test.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=600
seeds=0
targets=()
while (($#)); do
    case "$1" in
        --seconds) seconds="$2"; shift 2 ;;
        --seeds) seeds=1; shift ;;
        -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
        *) targets+=("$1"); shift ;;
    esac
done
((${#targets[@]})) || targets=(gguf_reader block_decoders onnx_model npy_reader tensor_proto)

build="${BUILD_DIR:-build-sanitize}"
CC=clang-14 CXX=clang++-14 cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DGGUFTOOL_FUZZ=ON -DGGUFTOOL_BUILD_TOOLS=ON >/dev/null
cmake --build "$build" -j"$(nproc)" --target make_seeds "${targets[@]/#/fuzz_}"

if ((seeds)); then
    rm -rf fuzz/corpus
    # The shared node tests are seeds too when ../shared is there (CI, developers).
    "$build/fuzz/make_seeds" fuzz/corpus testdata ../shared
fi

status=0
for t in "${targets[@]}"; do
    out="fuzz-out/$t"
    mkdir -p "$out/corpus"
    echo "== $t: ${seconds}s"
    if ! "$build/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2560 \
            -print_final_stats=1 -artifact_prefix="$out/" \
            "$out/corpus" "fuzz/corpus/$t" "fuzz/regressions/$t" 2>"$out/log"; then
        echo "   FOUND A PROBLEM: $(ls "$out" | grep -E '^(crash|leak|timeout|oom|slow-unit)-' | head -3)"
        grep -m3 -E 'ERROR|runtime error|SUMMARY' "$out/log" | sed 's/^/   /'
        status=1
    fi
    grep -E '^(stat::number_of_executed_units|stat::new_units_added)' "$out/log" | sed 's/^/   /'
done
exit $status
