#include "dispatch.hpp"

#include <atomic>

// The Highway whose CPU target rules (hwy/targets.cc) detect() mirrors. Another version may pick
// targets by other features: compare detect() with its targets.cc, then update the numbers.
// formats/CMakeLists.txt reads them from here and stops at configure time on another Highway;
// tests/quant/target_test.cpp compares the choice with libhwy's own on the machine at hand.
static_assert(HWY_MAJOR == 1 && HWY_MINOR == 0 && HWY_PATCH == 3,
              "formats/dispatch.cpp mirrors Highway 1.0.3's target rules: see the comment");

#if HWY_ARCH_X86
#include <cpuid.h>
#endif

namespace gguftool::simd {
namespace {

#if HWY_ARCH_X86

// The CPU features a target's code may use, as Highway 1.0.3 requires them before it picks the
// target (hwy/targets.cc): SSE4 needs SSE to SSE4.2, PCLMUL and AES; AVX2 adds AVX, AVX2, LZCNT,
// BMI, BMI2, FMA and F16C; AVX3 adds AVX-512 F, VL, DQ and BW. Bits of CPUID leaves 1, 7 and
// 0x80000001.
enum : uint32_t {
    kSse = 1 << 0,
    kSse2 = 1 << 1,
    kSse3 = 1 << 2,
    kSsse3 = 1 << 3,
    kSse41 = 1 << 4,
    kSse42 = 1 << 5,
    kPclmul = 1 << 6,
    kAes = 1 << 7,
    kAvx = 1 << 8,
    kAvx2 = 1 << 9,
    kF16c = 1 << 10,
    kFma = 1 << 11,
    kLzcnt = 1 << 12,
    kBmi = 1 << 13,
    kBmi2 = 1 << 14,
    kAvx512f = 1 << 15,
    kAvx512vl = 1 << 16,
    kAvx512dq = 1 << 17,
    kAvx512bw = 1 << 18,
};

// Highway leaves BMI/BMI2/FMA and F16C out of AVX2 when built with these macros.
#ifdef HWY_DISABLE_BMI2_FMA
constexpr uint32_t kBmi2Fma = 0;
#else
constexpr uint32_t kBmi2Fma = kBmi | kBmi2 | kFma;
#endif
#ifdef HWY_DISABLE_F16C
constexpr uint32_t kHalf = 0;
#else
constexpr uint32_t kHalf = kF16c;
#endif

constexpr uint32_t kNeedSse4 = kSse | kSse2 | kSse3 | kSsse3 | kSse41 | kSse42 | kPclmul | kAes;
constexpr uint32_t kNeedAvx2 = kNeedSse4 | kAvx | kAvx2 | kLzcnt | kBmi2Fma | kHalf;
constexpr uint32_t kNeedAvx3 = kNeedAvx2 | kAvx512f | kAvx512vl | kAvx512dq | kAvx512bw;

// Register state the OS must save for a target (XCR0): SSE and AVX; AVX-512's opmask and ZMM.
constexpr uint64_t kXmmYmm = (1 << 1) | (1 << 2);
constexpr uint64_t kOpmaskZmm = (1 << 5) | (1 << 6) | (1 << 7);

struct Leaf {
    unsigned a = 0, b = 0, c = 0, d = 0;
};

Leaf cpuid(unsigned leaf) {
    Leaf r;
    if (!__get_cpuid_count(leaf, 0, &r.a, &r.b, &r.c, &r.d)) return {};
    return r;
}

uint32_t flag(unsigned reg, int bit, uint32_t feature) {
    return (reg >> bit & 1) ? feature : 0;
}

uint64_t xcr0() {
    uint32_t lo, hi;
    asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return lo | uint64_t(hi) << 32;
}

int64_t detect() {
    const Leaf l1 = cpuid(1), l7 = cpuid(7), lx = cpuid(0x80000001);
    const uint32_t have = flag(l1.d, 25, kSse) | flag(l1.d, 26, kSse2) | flag(l1.c, 0, kSse3) |
                          flag(l1.c, 1, kPclmul) | flag(l1.c, 9, kSsse3) | flag(l1.c, 12, kFma) |
                          flag(l1.c, 19, kSse41) | flag(l1.c, 20, kSse42) | flag(l1.c, 25, kAes) |
                          flag(l1.c, 28, kAvx) | flag(l1.c, 29, kF16c) | flag(lx.c, 5, kLzcnt) |
                          flag(l7.b, 3, kBmi) | flag(l7.b, 5, kAvx2) | flag(l7.b, 8, kBmi2) |
                          flag(l7.b, 16, kAvx512f) | flag(l7.b, 17, kAvx512dq) |
                          flag(l7.b, 30, kAvx512bw) | flag(l7.b, 31, kAvx512vl);
    // Without OSXSAVE the OS saves no AVX state, so no AVX target (Highway 1.0.3 does not check
    // XCR0 then).
    const bool os_saves = l1.c >> 27 & 1;
    const uint64_t saved = os_saves ? xcr0() : 0;
    int64_t targets = HWY_SCALAR | HWY_EMU128 | HWY_ENABLED_BASELINE;
    if ((have & kNeedSse4) == kNeedSse4) targets |= HWY_SSE4;
    if ((have & kNeedAvx2) == kNeedAvx2 && (saved & kXmmYmm) == kXmmYmm) targets |= HWY_AVX2;
    if ((have & kNeedAvx3) == kNeedAvx3 &&
        (saved & (kXmmYmm | kOpmaskZmm)) == (kXmmYmm | kOpmaskZmm))
        targets |= HWY_AVX3;
    return targets;
}

#else

// Elsewhere only what the compiler may assume anyway, and the portable targets.
int64_t detect() {
    return HWY_SCALAR | HWY_EMU128 | HWY_ENABLED_BASELINE;
}

#endif

std::atomic<int64_t> forced{0};

}  // namespace

int64_t cpu_targets() {
    static const int64_t targets = detect();
    return targets;
}

void force_target(int64_t target) {
    forced.store(target, std::memory_order_relaxed);
}

int64_t allowed_targets() {
    const int64_t f = forced.load(std::memory_order_relaxed);
    return f ? f & cpu_targets() : cpu_targets();
}

std::vector<int64_t> usable_targets() {
    std::vector<int64_t> out;
    for (int64_t t = allowed_targets() & HWY_TARGETS; t != 0; t &= t - 1) out.push_back(t & -t);
    return out;
}

}  // namespace gguftool::simd
