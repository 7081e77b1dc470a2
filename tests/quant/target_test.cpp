// formats/dispatch.cpp picks the SIMD target without libhwy, by rules copied from Highway's
// hwy/targets.cc. Here, on the machine at hand, libhwy itself (linked into this test only) says
// which targets the CPU supports; our dispatcher must agree and choose the same best one.
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include "formats/dispatch.hpp"

namespace gguftool::simd {
namespace {

TEST(SimdDispatch, AgreesWithLibhwy) {
    force_target(0);
    const int64_t theirs = hwy::SupportedTargets() & HWY_TARGETS;
    const int64_t ours = cpu_targets() & HWY_TARGETS;
    ASSERT_NE(theirs, 0);
    const auto names = [](int64_t targets) {
        std::string s;
        for (int64_t t = targets; t != 0; t &= t - 1)
            s += std::string(" ") + hwy::TargetName(t & -t);
        return s;
    };
    EXPECT_EQ(ours, theirs) << "ours:" << names(ours) << "; libhwy's:" << names(theirs);
    // The lowest bit is the best target.
    EXPECT_STREQ(hwy::TargetName(active_target()), hwy::TargetName(theirs & -theirs));
}

}  // namespace
}  // namespace gguftool::simd
