// Runtime choice of instruction set for the Highway kernels, without linking libhwy.
//
// Each SIMD source compiles its kernels once per target in HWY_TARGETS with Highway's
// foreach_target (header-only), into the namespaces N_AVX3, N_AVX2 and N_EMU128 or N_SCALAR.
// GGUFTOOL_EXPORT(fn) makes a table of those versions, one slot per target bit in the order of
// Highway's HWY_CHOOSE_TARGET_LIST, then the portable fallback; GGUFTOOL_DISPATCH(fn) calls the
// best one the CPU runs. Highway's own HWY_EXPORT table starts with a libhwy function, and loading
// libhwy.so costs every process a few milliseconds (its static initializer calibrates a timer).
#pragma once

#include <hwy/highway.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gguftool::simd {

// The Highway target bits (HWY_AVX3, HWY_AVX2, ...) this CPU and operating system can run, with
// the portable targets always included. Detected on the first call.
int64_t cpu_targets();

// Restricts dispatch to `target` (one HWY_* bit) until called with 0; tests and benchmarks run
// every target in turn. A target the CPU cannot run leaves only the portable fallback. Call it
// while no other thread is decoding.
void force_target(int64_t target);

// What dispatch may use now: the forced target, or else cpu_targets().
int64_t allowed_targets();

// The targets compiled in that dispatch may use, best first (e.g. AVX3, AVX2, SCALAR).
std::vector<int64_t> usable_targets();

// The slot of a GGUFTOOL_EXPORT table to call: that of the best target compiled in and allowed,
// or the last one (the portable fallback). Computed as Highway's ChosenTarget::GetIndex does
// (hwy/targets.h), without its first slot, which Highway keeps for "not yet initialized".
inline size_t dispatch_index() {
    constexpr int kFirstBit = HWY_HIGHEST_TARGET_BIT + 1 - HWY_MAX_DYNAMIC_TARGETS;
    constexpr uint64_t kFallbackSlot = uint64_t(1) << HWY_MAX_DYNAMIC_TARGETS;
    const uint64_t slots = (uint64_t(allowed_targets() & HWY_TARGETS) >> kFirstBit);
    return size_t(std::countr_zero((slots & (kFallbackSlot - 1)) | kFallbackSlot));
}

// The target GGUFTOOL_DISPATCH calls now.
inline int64_t active_target() {
    constexpr int kFirstBit = HWY_HIGHEST_TARGET_BIT + 1 - HWY_MAX_DYNAMIC_TARGETS;
    const size_t slot = dispatch_index();
    if (slot < HWY_MAX_DYNAMIC_TARGETS) return int64_t(1) << (kFirstBit + slot);
    // The fallback, chosen as HWY_CHOOSE_FALLBACK chooses it.
    if (HWY_TARGETS & HWY_EMU128) return HWY_EMU128;
    if (HWY_TARGETS & HWY_SCALAR) return HWY_SCALAR;
    return HWY_STATIC_TARGET;
}

}  // namespace gguftool::simd

#define GGUFTOOL_DISPATCH_TABLE(FN) FN##_by_target

// Defines the table of FN's versions; at namespace scope, where FN's HWY_NAMESPACE versions live.
#define GGUFTOOL_EXPORT(FN)                                                  \
    static decltype(&HWY_STATIC_DISPATCH(FN)) const GGUFTOOL_DISPATCH_TABLE( \
        FN)[HWY_MAX_DYNAMIC_TARGETS + 1] = {HWY_CHOOSE_TARGET_LIST(FN), HWY_CHOOSE_FALLBACK(FN)}

// FN's version for the best target: GGUFTOOL_DISPATCH(FN)(args...).
#define GGUFTOOL_DISPATCH(FN) (*GGUFTOOL_DISPATCH_TABLE(FN)[gguftool::simd::dispatch_index()])
