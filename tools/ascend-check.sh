#!/usr/bin/env bash
# For the first machine with an Ascend NPU and CANN installed (source CANN's set_env.sh first):
# builds gguftool, runs the ONNX node tests and `verify --onnx` on testdata/sample.gguf with
# --backend ascend, and prints a report to paste into an issue. The backend has so far run only on
# the CANN emulation (tests/cann_emulator); this script is how it meets real hardware.
#
#   tools/ascend-check.sh [BUILD_DIR]      (default: build-ascend-check)
#
# With ONNX_NODE_TESTS set to a directory of ONNX backend node tests (test_*/model.onnx and
# test_data_set_0, as in onnx/backend/test/data/node of the onnx repository), those run too.
#
# Exit status: 0 when every step passed, 1 otherwise. The report goes to stdout and to
# BUILD_DIR/ascend-check-report.md.
set -u
cd "$(dirname "$0")/.."
build=${1:-build-ascend-check}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
report=$work/report.md
failed=0

say() { printf '%s\n' "$*" >>"$report"; }
# step NAME COMMAND...: runs it, records its status and the tail of its output.
step() {
    local name=$1
    shift
    local log=$work/step.log
    "$@" >"$log" 2>&1
    local status=$?
    if [ $status -eq 0 ]; then say "### PASS: $name"; else say "### FAIL ($status): $name"; failed=1; fi
    say '```'
    say "\$ $*"
    tail -n 60 "$log" >>"$report"
    say '```'
    return $status
}

if [ -n "${GGUFTOOL_CANN_LIB_DIR:-}" ]; then
    echo "note: GGUFTOOL_CANN_LIB_DIR=$GGUFTOOL_CANN_LIB_DIR is set; unset it to use the installed CANN" >&2
fi

say "## gguftool ascend-check"
say ""
say "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
say "- commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
say "- host: $(uname -srm)"
say "- ASCEND_HOME_PATH=${ASCEND_HOME_PATH:-unset} ASCEND_TOOLKIT_HOME=${ASCEND_TOOLKIT_HOME:-unset} ATB_HOME_PATH=${ATB_HOME_PATH:-unset}"
if [ -n "${ASCEND_TOOLKIT_HOME:-}" ] && [ -f "$ASCEND_TOOLKIT_HOME/version.cfg" ]; then
    say "- CANN version.cfg: $(tr '\n' ' ' <"$ASCEND_TOOLKIT_HOME/version.cfg")"
fi
if command -v npu-smi >/dev/null; then
    say '```'
    npu-smi info 2>&1 | head -n 30 >>"$report"
    say '```'
fi
say ""

exe=$build/gguftool
if step "build" bash -c "cmake -S . -B '$build' -DCMAKE_BUILD_TYPE=Release -DGGUFTOOL_BUILD_TESTS=OFF -DGGUFTOOL_BUILD_BENCH=OFF >/dev/null && cmake --build '$build' -j\$(nproc) --target gguftool_cli gguftool_onnx_cli"; then
    # The real CANN, not the emulation: the backend's description says which it found.
    step "backend found CANN (not the emulation)" bash -c \
        "'$exe' run --backend ascend --test-dir testdata/node-tests/test_unsqueeze_axis_0 2>&1 | tee /dev/stderr | grep -q '^backend: ascend' && ! '$exe' run --backend ascend --test-dir testdata/node-tests/test_unsqueeze_axis_0 2>&1 | grep -q emulation"
    step "node tests (testdata/node-tests), exact" "$exe" run --backend ascend --test-dir testdata/node-tests --exact
    if [ -n "${ONNX_NODE_TESTS:-}" ]; then
        step "node tests ($ONNX_NODE_TESTS), exact" "$exe" run --backend ascend --test-dir "$ONNX_NODE_TESTS" --exact
    fi
    step "to-onnx the sample" "$exe" to-onnx testdata/sample.gguf "$work/sample.onnx"
    step "verify --onnx on the sample" "$exe" verify testdata/sample.gguf --onnx "$work/sample.onnx" --backend ascend
    step "run --compare --benchmark on the sample" "$exe" run "$work/sample.onnx" --backend ascend --compare testdata/sample.gguf --benchmark
    # The declarations against this toolkit's own headers, when they are installed.
    inc=${ASCEND_TOOLKIT_HOME:-${ASCEND_HOME_PATH:-}}
    if [ -n "$inc" ] && [ -d "$inc/include/acl" ]; then
        dirs="$inc/include;$inc/include/aclnnop"
        [ -n "${ATB_HOME_PATH:-}" ] && dirs="$dirs;$ATB_HOME_PATH/include"
        step "cann_abi_check against $inc/include" bash -c \
            "cmake -S . -B '$build' -DGGUFTOOL_BUILD_TOOLS=ON '-DGGUFTOOL_CANN_INCLUDE_DIRS=$dirs' >/dev/null && cmake --build '$build' --target cann_abi_check"
    fi
fi

say ""
say "Result: $([ $failed -eq 0 ] && echo 'all steps passed' || echo 'some steps FAILED')"
mkdir -p "$build"
cp "$report" "$build/ascend-check-report.md"
cat "$report"
exit $failed
