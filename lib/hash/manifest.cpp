// Reading hash manifests.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "gguftool/hash_manifest.hpp"

namespace gguftool::hash {
namespace {

using Reason = ManifestError::Reason;

// The whole file, read in a loop so that pipes (--check <(...)) work too.
std::string read_all(const std::string &path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        throw ManifestError(Reason::unreadable, path,
                            std::string("cannot open: ") + std::strerror(errno));
    std::string text;
    char buf[1 << 16];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n == 0) break;
        if (n < 0) {
            if (errno == EINTR) continue;
            const int err = errno;
            ::close(fd);
            throw ManifestError(Reason::unreadable, path,
                                std::string("cannot read: ") + std::strerror(err));
        }
        text.append(buf, size_t(n));
    }
    ::close(fd);
    return text;
}

bool is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

// The next field of `line` from `at` (blanks before it skipped); `at` moves past it.
std::string_view next_field(std::string_view line, size_t &at) {
    while (at < line.size() && is_blank(line[at])) ++at;
    const size_t begin = at;
    while (at < line.size() && !is_blank(line[at])) ++at;
    return line.substr(begin, at - begin);
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (char &c : out)
        if (c >= 'A' && c <= 'F') c = char(c - 'A' + 'a');
    return out;
}

std::string known_kinds() {
    std::string s;
    for (Kind k : kKinds) s += (s.empty() ? "" : ", ") + std::string(kind_name(k));
    return s;
}

}  // namespace

Manifest Manifest::read(const std::string &path) {
    Manifest m;
    m.path_ = path;
    const std::string text = read_all(path);
    size_t line_no = 0;
    for (size_t begin = 0; begin < text.size();) {
        size_t end = text.find('\n', begin);
        if (end == std::string::npos) end = text.size();
        std::string_view line(text.data() + begin, end - begin);
        begin = end + 1;
        ++line_no;
        while (!line.empty() && is_blank(line.back())) line.remove_suffix(1);

        size_t at = 0;
        const std::string_view type = next_field(line, at);
        if (type.empty()) continue;  // a blank line
        const std::string where = fmt::format("{}:{}", path, line_no);
        const std::optional<Kind> kind = kind_named(type);
        if (!kind)
            throw ManifestError(Reason::unknown_type, where,
                                fmt::format("unknown hash type '{}' (known: {}); a line is "
                                            "'TYPE  HASH  FILE[:TENSOR]'",
                                            type, known_kinds()));
        const std::string_view digest = next_field(line, at);
        while (at < line.size() && is_blank(line[at])) ++at;
        const std::string_view name = line.substr(at);
        if (digest.empty() || name.empty())
            throw ManifestError(Reason::malformed, where,
                                fmt::format("{} line without {}; a line is 'TYPE  HASH  "
                                            "FILE[:TENSOR]'",
                                            type, digest.empty() ? "a hash" : "a name"));
        if (!is_digest_text(*kind, digest))
            throw ManifestError(
                Reason::malformed, where,
                fmt::format("'{}' is not a {} hash ({})", digest, type, digest_form(*kind)));
        m.kinds_.add(*kind);
        m.entries_[size_t(*kind)].try_emplace(std::string(name), lower(digest));
    }
    if (m.kinds_.empty())
        throw ManifestError(Reason::no_entries, path,
                            fmt::format("no hash in the manifest (lines 'TYPE  HASH  "
                                        "FILE[:TENSOR]', TYPE one of {})",
                                        known_kinds()));
    return m;
}

std::optional<std::string_view> Manifest::find(Kind k, std::string_view name) const {
    const Entries &e = entries_[size_t(k)];
    const auto it = e.find(name);
    if (it == e.end()) return std::nullopt;
    return it->second;
}

}  // namespace gguftool::hash
