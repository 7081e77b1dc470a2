// gguftool dump: the pieces shared by its option parsing, text output and JSON output.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gguftool/gguf.hpp"
#include "output.hpp"
#include "value_display.hpp"

namespace gguftool::cli::dump {

struct Options {
    std::string file;
    bool json = false;
    bool no_metadata = false;
    bool no_tensors = false;
    std::vector<std::string> tensor_globs;  // empty: every tensor
    uint64_t values = 0;                    // first N decoded values per selected tensor
    bool stats = false;
};

// Statistics of one tensor's decoded values. NaN and Inf are counted and left out of the rest.
struct Stats {
    uint64_t count = 0;   // all elements
    uint64_t finite = 0;  // elements that entered min/max/mean/std
    uint64_t nan = 0;
    uint64_t inf = 0;
    double min = 0, max = 0, mean = 0;
    double std = 0;  // population standard deviation (divides by `finite`)
};

// The first values of a tensor. Integer tensors keep their exact integers in `ints`.
struct Values {
    std::vector<double> reals;
    std::vector<int64_t> ints;
    bool integer = false;
    bool is_f64 = false;  // printed with double precision; every other real is a float
    size_t size() const { return integer ? ints.size() : reals.size(); }
};

// The decoded part of a tensor's report (--values, --stats).
struct Decoded {
    std::optional<Values> values;
    std::optional<Stats> stats;
    std::string error;  // why values or stats could not be decoded
};

// What is shown for one selected tensor. Kept small: there may be 10,000 of them, and each
// page of memory a short run touches costs it a page fault.
struct TensorReport {
    const gguf::TensorInfo *info = nullptr;
    std::unique_ptr<Decoded> decoded;  // with --values or --stats

    const Values *values() const {
        return decoded && decoded->values ? &*decoded->values : nullptr;
    }
    const Stats *stats() const { return decoded && decoded->stats ? &*decoded->stats : nullptr; }
    std::string_view error() const { return decoded ? decoded->error : std::string_view(); }
};

// Tensors whose names match any of the globs (fnmatch), in file order; all when globs is empty.
std::vector<TensorReport> select_tensors(const gguf::Model &model, const Options &opt);

// Decoding, in chunks of whole blocks so memory stays bounded whatever the tensor size.
Values first_values(const gguf::Model &model, const gguf::TensorInfo &t, uint64_t n);
Stats tensor_stats(const gguf::Model &model, const gguf::TensorInfo &t);

void write_text(Out &out, const gguf::Model &model, const Options &opt,
                const std::vector<TensorReport> &reports);
void write_json(Out &out, const gguf::Model &model, const Options &opt,
                const std::vector<TensorReport> &reports);

}  // namespace gguftool::cli::dump
