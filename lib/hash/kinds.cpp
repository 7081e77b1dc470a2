// The kinds' names and digest forms.
#include <algorithm>

#include "gguftool/hash.hpp"

namespace gguftool::hash {
namespace {

struct KindInfo {
    std::string_view name;
    size_t hex_digits;      // 0 for uuid, which has its own form
    std::string_view form;  // for messages
};
constexpr std::array<KindInfo, kKindCount> kInfo = {{
    {"xxh64", 16, "16 hex digits"},
    {"xxh3", 16, "16 hex digits"},
    {"sha1", 40, "40 hex digits"},
    {"sha256", 64, "64 hex digits"},
    {"uuid", 0, "8-4-4-4-12 hex digits"},
}};

bool is_hex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

}  // namespace

std::string_view kind_name(Kind k) {
    return kInfo[size_t(k)].name;
}

std::optional<Kind> kind_named(std::string_view name) {
    for (Kind k : kKinds)
        if (kInfo[size_t(k)].name == name) return k;
    return std::nullopt;
}

std::string_view digest_form(Kind k) {
    return kInfo[size_t(k)].form;
}

bool is_digest_text(Kind k, std::string_view text) {
    if (k == Kind::uuid) {
        if (text.size() != 36) return false;
        for (size_t i = 0; i < text.size(); ++i) {
            const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
            if (dash ? text[i] != '-' : !is_hex(text[i])) return false;
        }
        return true;
    }
    return text.size() == kInfo[size_t(k)].hex_digits &&
           std::all_of(text.begin(), text.end(), is_hex);
}

}  // namespace gguftool::hash
