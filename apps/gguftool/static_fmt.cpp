// fmt, compiled into gguftool itself: Debian ships fmt only as a shared library, and loading
// libfmt.so (which brings libstdc++.so) costs a start-up of `gguftool dump` about as much as
// parsing a file. The headers hold the library's code (format-inl.h); this translation unit
// emits it, with the template instances that fmt's headers declare but do not define inline.
#include <fmt/format-inl.h>

// The fmt these lines are written for (Debian 12's libfmt-dev). Another fmt may declare other
// instances, or define these inline: check the list below against its format.h and format-inl.h,
// then update the number. CMakeLists.txt reads it from here and stops at configure time on
// another fmt (or builds without this file with -DGGUFTOOL_STATIC_DUMP=OFF).
static_assert(FMT_VERSION == 90100, "static_fmt.cpp is written for fmt 9.1.0: see the comment");

FMT_BEGIN_NAMESPACE
namespace detail {

template auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl(locale_ref) -> char;

}  // namespace detail
FMT_END_NAMESPACE
