#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "fp4.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "common.hpp"
#include "formats.hpp"

HWY_BEFORE_NAMESPACE();
namespace gguftool::formats::HWY_NAMESPACE {
}  // namespace gguftool::formats::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace gguftool::formats {

std::span<const Kernel> fp4_kernels() { return {}; }

}  // namespace gguftool::formats
#endif  // HWY_ONCE
