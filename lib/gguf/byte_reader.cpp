// Error paths of ByteReader and printing strings taken from a file.
#include "byte_reader.hpp"

#include <fmt/format.h>

namespace gguftool::gguf::detail {

void ByteReader::fail_short(uint64_t n, const char *what) const {
    fail(pos_, fmt::format("unexpected end of file reading {} ({} bytes needed, {} remain)", what,
                           n, remaining()));
}

void ByteReader::fail_string(uint64_t at, uint64_t len, const char *what) const {
    fail(at, fmt::format("{} has length {}, past the end of the file ({} bytes remain)", what, len,
                         remaining()));
}

std::string printable(std::string_view s) {
    constexpr size_t kMax = 80;
    std::string out;
    for (size_t i = 0; i < s.size() && i < kMax; ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c < 0x7f && c != '\\')
            out += static_cast<char>(c);
        else
            out += fmt::format("\\x{:02x}", c);
    }
    if (s.size() > kMax) out += "...";
    return out;
}

}  // namespace gguftool::gguf::detail
