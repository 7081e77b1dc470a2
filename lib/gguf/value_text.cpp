// Metadata values from text (gguftool/gguf_value_text.hpp).
#include <fmt/format.h>

#include <bit>
#include <charconv>
#include <limits>
#include <nlohmann/json.hpp>

#include "file_impl.hpp"
#include "gguftool/gguf_value_text.hpp"
#include "gguftool/mapped_file.hpp"

namespace gguftool::gguf {
namespace {

struct IntRange {
    bool is_signed;
    uint64_t max;  // largest value; a signed type's smallest is -(max + 1)
};

std::optional<IntRange> int_range(ValueType t) {
    switch (t) {
        case ValueType::uint8:
            return IntRange{false, UINT8_MAX};
        case ValueType::int8:
            return IntRange{true, INT8_MAX};
        case ValueType::uint16:
            return IntRange{false, UINT16_MAX};
        case ValueType::int16:
            return IntRange{true, INT16_MAX};
        case ValueType::uint32:
            return IntRange{false, UINT32_MAX};
        case ValueType::int32:
            return IntRange{true, INT32_MAX};
        case ValueType::uint64:
            return IntRange{false, UINT64_MAX};
        case ValueType::int64:
            return IntRange{true, INT64_MAX};
        default:
            return std::nullopt;
    }
}

// "a uint8", "an int8".
std::string with_article(const char *type_name) {
    return fmt::format("{} {}", type_name[0] == 'i' ? "an" : "a", type_name);
}

std::string range_text(const IntRange &r) {
    return r.is_signed ? fmt::format("{} to {}", -int64_t(r.max) - 1, r.max)
                       : fmt::format("0 to {}", r.max);
}

MetaValue make_int(ValueType t, uint64_t bits) {
    switch (t) {
        case ValueType::uint8:
            return MetaValue::u8(uint8_t(bits));
        case ValueType::int8:
            return MetaValue::i8(int8_t(bits));
        case ValueType::uint16:
            return MetaValue::u16(uint16_t(bits));
        case ValueType::int16:
            return MetaValue::i16(int16_t(bits));
        case ValueType::uint32:
            return MetaValue::u32(uint32_t(bits));
        case ValueType::int32:
            return MetaValue::i32(int32_t(bits));
        case ValueType::uint64:
            return MetaValue::u64(bits);
        default:
            return MetaValue::i64(std::bit_cast<int64_t>(bits));
    }
}

// A decimal integer: an optional '-' and digits, nothing else.
MetaValue parse_int(ValueType t, const IntRange &range, std::string_view text) {
    const char *name = value_type_name(t);
    const bool negative = !text.empty() && text[0] == '-';
    const std::string_view digits = text.substr(negative ? 1 : 0);
    uint64_t magnitude = 0;
    const auto [end, ec] =
        std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, 10);
    if (digits.empty() || end != digits.data() + digits.size() ||
        (ec != std::errc() && ec != std::errc::result_out_of_range))
        throw Error(fmt::format("'{}' is not {} (an integer from {})", text, with_article(name),
                                range_text(range)));
    const uint64_t limit = negative ? (range.is_signed ? range.max + 1 : 0) : range.max;
    if (ec == std::errc::result_out_of_range || magnitude > limit)
        throw Error(fmt::format("'{}' is out of range for {} ({})", text, name, range_text(range)));
    return make_int(t, negative ? 0 - magnitude : magnitude);
}

// A decimal float as std::from_chars reads it (also inf, infinity, nan), rounded once.
template <class F>
F parse_float(ValueType t, std::string_view text) {
    F v{};
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    const char *name = value_type_name(t);
    if (text.empty() || end != text.data() + text.size() ||
        (ec != std::errc() && ec != std::errc::result_out_of_range))
        throw Error(
            fmt::format("'{}' is not {} (a decimal number, inf or nan)", text, with_article(name)));
    if (ec == std::errc::result_out_of_range)
        throw Error(fmt::format("'{}' is out of range for {} (0, or magnitudes from {} to {})",
                                text, name, std::numeric_limits<F>::denorm_min(),
                                std::numeric_limits<F>::max()));
    return v;
}

// A JSON value as the parser saw it, numbers kept as their text so that they are read once, by
// the same rules as --set (nlohmann's own doubles would round a float32 twice).
struct JsonNode {
    enum class Kind { scalar_number, scalar_bool, scalar_string, null, array } kind;
    std::string text;  // number text, string bytes, "true"/"false"
    std::vector<JsonNode> items;
};

class TreeBuilder : public nlohmann::json_sax<nlohmann::json> {
public:
    JsonNode root{JsonNode::Kind::null, {}, {}};
    std::string error;

    bool null() override { return add({JsonNode::Kind::null, "null", {}}); }
    bool boolean(bool v) override {
        return add({JsonNode::Kind::scalar_bool, v ? "true" : "false", {}});
    }
    bool number_integer(number_integer_t v) override { return number(std::to_string(v)); }
    bool number_unsigned(number_unsigned_t v) override { return number(std::to_string(v)); }
    bool number_float(number_float_t, const string_t &s) override { return number(s); }
    bool string(string_t &s) override { return add({JsonNode::Kind::scalar_string, s, {}}); }
    bool binary(binary_t &) override { return fail("binary values are not JSON text"); }
    bool start_object(std::size_t) override {
        return fail("a JSON object has no GGUF type (give a value or an array)");
    }
    bool key(string_t &) override { return false; }
    bool end_object() override { return false; }
    bool start_array(std::size_t) override {
        if (open_.size() >= detail::kMaxArrayNesting)
            return fail(
                fmt::format("arrays nested more than {} levels deep (the most a GGUF "
                            "reader accepts)",
                            detail::kMaxArrayNesting));
        open_.push_back({JsonNode::Kind::array, {}, {}});
        return true;
    }
    bool end_array() override {
        JsonNode done = std::move(open_.back());
        open_.pop_back();
        return add(std::move(done));
    }
    bool parse_error(std::size_t, const std::string &,
                     const nlohmann::detail::exception &e) override {
        // "[json.exception.parse_error.101] parse error at line 1, column 5: ..." without the tag.
        const std::string what = e.what();
        const size_t tag_end = what.find("] ");
        return fail(tag_end == std::string::npos ? what : what.substr(tag_end + 2));
    }

private:
    bool number(std::string text) {
        return add({JsonNode::Kind::scalar_number, std::move(text), {}});
    }
    bool add(JsonNode n) {
        if (open_.empty())
            root = std::move(n);
        else
            open_.back().items.push_back(std::move(n));
        return true;
    }
    bool fail(std::string why) {
        if (error.empty()) error = std::move(why);
        return false;
    }
    std::vector<JsonNode> open_;
};

std::string element_path(const std::vector<size_t> &path) {
    std::string s;
    for (size_t i : path) s += fmt::format("[{}]", i);
    return s;
}

MetaValue to_value(ValueType leaf, const JsonNode &n, std::vector<size_t> &path) {
    const auto fail = [&](const std::string &why) -> MetaValue {
        throw Error(path.empty() ? why : fmt::format("element {}: {}", element_path(path), why));
    };
    using Kind = JsonNode::Kind;
    if (n.kind == Kind::array) {
        std::vector<MetaValue> elements;
        elements.reserve(n.items.size());
        for (size_t i = 0; i < n.items.size(); ++i) {
            path.push_back(i);
            elements.push_back(to_value(leaf, n.items[i], path));
            path.pop_back();
        }
        // One element type per GGUF array: all scalars of `leaf`, or all arrays.
        const ValueType type = elements.empty() ? leaf : elements.front().type();
        for (size_t i = 1; i < elements.size(); ++i)
            if (elements[i].type() != type)
                fail(
                    fmt::format("elements [0] and [{}] are of different kinds ({} and {}): a GGUF "
                                "array's elements are all values or all arrays",
                                i, value_type_name(type), value_type_name(elements[i].type())));
        return MetaValue::array(type, std::move(elements));
    }
    if (n.kind == Kind::null) return fail("null has no GGUF type");
    if (leaf == ValueType::string) {
        if (n.kind != Kind::scalar_string)
            return fail(fmt::format("{} is not a string (write it in double quotes)", n.text));
        return MetaValue::str(n.text);
    }
    if (n.kind == Kind::scalar_string)
        return fail(fmt::format("the string \"{}\" is not {}", n.text,
                                with_article(value_type_name(leaf))));
    try {
        return parse_scalar(leaf, n.text);
    } catch (const Error &e) {
        return fail(e.problem());
    }
}

// KEY=REST split at the first '='; REST split at its first ':' into TYPE and the rest.
struct Parts {
    std::string key;
    std::string_view rest;
};

Parts split_key(std::string_view arg, const char *form) {
    const size_t eq = arg.find('=');
    if (eq == std::string_view::npos || eq == 0)
        throw Error(fmt::format("'{}': expected {}", arg, form));
    return {std::string(arg.substr(0, eq)), arg.substr(eq + 1)};
}

std::pair<ValueType, std::string_view> split_type(const Parts &p, const char *form,
                                                  const char *type_note) {
    const size_t colon = p.rest.find(':');
    const std::string_view name = p.rest.substr(0, colon);
    const auto type = value_type_from_name(name);
    if (colon == std::string_view::npos || !type || *type == ValueType::array)
        throw Error(fmt::format(
            "{}: expected {}, TYPE one of uint8, int8, uint16, int16, uint32, int32, uint64, "
            "int64, float32, float64, bool, string {}",
            p.key, form, type_note));
    return {*type, p.rest.substr(colon + 1)};
}

}  // namespace

MetaValue parse_scalar(ValueType type, std::string_view text) {
    if (const auto range = int_range(type)) return parse_int(type, *range, text);
    switch (type) {
        case ValueType::float32:
            return MetaValue::f32(parse_float<float>(type, text));
        case ValueType::float64:
            return MetaValue::f64(parse_float<double>(type, text));
        case ValueType::bool_:
            if (text == "true" || text == "false") return MetaValue::boolean(text == "true");
            throw Error(fmt::format("'{}' is not a bool (true or false)", text));
        case ValueType::string:
            return MetaValue::str(std::string(text));
        default:
            throw Error(fmt::format("{} is not a scalar type", value_type_name(type)));
    }
}

MetaValue parse_json(ValueType leaf_type, std::string_view json) {
    TreeBuilder tree;
    if (!nlohmann::json::sax_parse(json, &tree))
        throw Error(tree.error.empty() ? "invalid JSON" : "invalid JSON: " + tree.error);
    std::vector<size_t> path;
    return to_value(leaf_type, tree.root, path);
}

Assignment parse_set(std::string_view arg) {
    constexpr const char *kForm = "KEY=TYPE:VALUE";
    const Parts p = split_key(arg, kForm);
    const auto [type, text] = split_type(p, kForm, "(arrays: --set-json)");
    try {
        return {p.key, parse_scalar(type, text)};
    } catch (const Error &e) {
        throw Error(fmt::format("{}: {}", p.key, e.problem()));
    }
}

Assignment parse_set_json(std::string_view arg) {
    constexpr const char *kForm = "KEY=TYPE:JSON";
    const Parts p = split_key(arg, kForm);
    const auto [type, json] = split_type(p, kForm, "(of the innermost elements)");
    try {
        return {p.key, parse_json(type, json)};
    } catch (const Error &e) {
        throw Error(fmt::format("{}: {}", p.key, e.problem()));
    }
}

std::pair<std::string, std::string> split_set_file(std::string_view arg) {
    const Parts p = split_key(arg, "KEY=PATH");
    if (p.rest.empty()) throw Error(fmt::format("{}: expected KEY=PATH", p.key));
    return {p.key, std::string(p.rest)};
}

Assignment parse_set_file(std::string_view arg) {
    const auto [key, path] = split_set_file(arg);
    try {
        const MappedFile file{path};
        return {key, MetaValue::str(std::string(file.bytes().begin(), file.bytes().end()))};
    } catch (const Error &e) {
        throw Error(fmt::format("{}: {}", key, e.what()));
    }
}

}  // namespace gguftool::gguf
