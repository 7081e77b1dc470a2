#include <fnmatch.h>

#include "gguftool/gguf.hpp"

namespace gguftool::gguf {

bool name_matches(std::string_view name, const std::vector<std::string> &globs) {
    if (globs.empty()) return true;
    const std::string terminated(name);  // fnmatch needs a terminated string
    for (const std::string &glob : globs)
        if (fnmatch(glob.c_str(), terminated.c_str(), 0) == 0) return true;
    return false;
}

}  // namespace gguftool::gguf
