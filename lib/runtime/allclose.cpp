// Comparing tensors: exact for integers, NumPy's allclose rule or identical bits for floats.
#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "dtype_dispatch.hpp"
#include "gguftool/runtime.hpp"

namespace gguftool::runtime {
namespace {

// Element i of a floating tensor.
double float_at(const Tensor &t, uint64_t i) {
    if (!is_floating(t.dtype())) return 0;
    return detail::with_value(t.dtype(), t.data(), i, [](auto v) { return double(v); });
}

// Element i of an integer or bool tensor, for messages.
std::string int_at(const Tensor &t, uint64_t i) {
    if (t.dtype() == DataType::bool_) return t.data()[i] ? "true" : "false";
    if (!is_integer(t.dtype())) return "?";
    return detail::with_value(t.dtype(), t.data(), i, [](auto v) { return std::to_string(v); });
}

// The multi-index of flat element i, for messages.
std::string position(const Shape &shape, uint64_t i) {
    std::vector<int64_t> idx(shape.size());
    for (size_t d = shape.size(); d-- > 0;) {
        idx[d] = int64_t(i % uint64_t(shape[d]));
        i /= uint64_t(shape[d]);
    }
    return shape_string(idx);
}

}  // namespace

AllcloseResult allclose(const Tensor &got, const Tensor &expected, bool exact, double rtol,
                        double atol) {
    AllcloseResult c;
    if (got.dtype() != expected.dtype()) {
        c.message = fmt::format("type {}, expected {}", dtype_name(got.dtype()),
                                dtype_name(expected.dtype()));
        return c;
    }
    if (got.shape() != expected.shape()) {
        c.message = fmt::format("shape {}, expected {}", shape_string(got.shape()),
                                shape_string(expected.shape()));
        return c;
    }
    const uint64_t n = got.elements();
    const size_t es = dtype_size(got.dtype());
    // Identical bytes are equal in every mode (the common case, checked at memcmp speed).
    if (got.dtype() != DataType::bool_ &&
        (n == 0 || std::memcmp(got.data(), expected.data(), got.nbytes()) == 0)) {
        c.equal = true;
        return c;
    }
    const bool floating = is_floating(got.dtype());
    uint64_t first = n;
    for (uint64_t i = 0; i < n; ++i) {
        bool same;
        if (!floating) {
            same = got.dtype() == DataType::bool_
                       ? (got.data()[i] != 0) == (expected.data()[i] != 0)
                       : std::memcmp(got.data() + i * es, expected.data() + i * es, es) == 0;
        } else {
            const double g = float_at(got, i), e = float_at(expected, i);
            if (std::isnan(g) || std::isnan(e)) {
                same = std::isnan(g) && std::isnan(e);
            } else if (exact) {
                same = std::memcmp(got.data() + i * es, expected.data() + i * es, es) == 0;
            } else if (std::isinf(g) || std::isinf(e)) {
                same = g == e;
            } else {
                same = std::fabs(g - e) <= atol + rtol * std::fabs(e);
            }
            if (std::isfinite(g) && std::isfinite(e))
                c.max_abs_diff = std::max(c.max_abs_diff, std::fabs(g - e));
        }
        if (!same) {
            ++c.mismatches;
            if (first == n) first = i;
        }
    }
    c.equal = c.mismatches == 0;
    if (!c.equal) {
        const std::string g =
            floating ? fmt::format("{}", float_at(got, first)) : int_at(got, first);
        const std::string e =
            floating ? fmt::format("{}", float_at(expected, first)) : int_at(expected, first);
        c.message = fmt::format("{} of {} elements differ; first at {}: got {}, expected {}",
                                c.mismatches, n, position(got.shape(), first), g, e);
        if (floating) c.message += fmt::format("; max abs diff {}", c.max_abs_diff);
    }
    return c;
}

}  // namespace gguftool::runtime
