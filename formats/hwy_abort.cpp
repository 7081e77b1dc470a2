// Highway's headers call hwy::Abort when an HWY_ASSERT fails (and HWY_DASSERT, which is on in
// debug and sanitizer builds). libhwy, which defines it, is not linked (see dispatch.hpp), so it
// is defined here, in its own file so that only programs calling it link it.
#include <hwy/base.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace hwy {

void Abort(const char *file, int line, const char *format, ...) {
    char what[1000];
    va_list args;
    va_start(args, format);
    std::vsnprintf(what, sizeof what, format, args);
    va_end(args);
    std::fprintf(stderr, "gguftool: Highway check failed at %s:%d: %s\n", file, line, what);
    std::abort();
}

}  // namespace hwy
