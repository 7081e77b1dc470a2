// Errors are values with context: the file, the byte offset (or tensor/node) and what is wrong.
// Only apps/ turns them into messages and exit codes.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace gguftool {

class Error : public std::runtime_error {
public:
    // `where` is the file (or other source) the problem is in; `offset` the byte position, if any.
    Error(std::string where, std::optional<uint64_t> offset, std::string what)
        : std::runtime_error(format(where, offset, what)),
          where_(std::move(where)),
          offset_(offset),
          problem_(std::move(what)) {}
    explicit Error(std::string what) : Error("", std::nullopt, std::move(what)) {}

    const std::string &where() const { return where_; }
    std::optional<uint64_t> offset() const { return offset_; }
    const std::string &problem() const { return problem_; }

private:
    static std::string format(const std::string &where, std::optional<uint64_t> offset,
                              const std::string &what) {
        std::string s = where;
        if (offset) s += (s.empty() ? "offset " : ": offset ") + std::to_string(*offset);
        if (!s.empty()) s += ": ";
        return s + what;
    }

    std::string where_;
    std::optional<uint64_t> offset_;
    std::string problem_;
};

}  // namespace gguftool
