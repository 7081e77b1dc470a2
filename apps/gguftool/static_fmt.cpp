// fmt, compiled into gguftool itself: Debian ships fmt only as a shared library, and loading
// libfmt.so (which brings libstdc++.so) costs a start-up of `gguftool dump` about as much as
// parsing a file. The headers hold the library's code (format-inl.h); this translation unit
// emits it, with the template instances that fmt's headers declare but do not define inline.
// (CMakeLists.txt uses it only with fmt 9, the version these lines are written for.)
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

template auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl(locale_ref) -> char;

}  // namespace detail
FMT_END_NAMESPACE
