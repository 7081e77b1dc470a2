// verify(): the core's decoding of every selected tensor against the expected decoding.
#include <fmt/format.h>

#include <filesystem>

#include "gguftool/parallel.hpp"
#include "gguftool/quant.hpp"
#include "verify_impl.hpp"

namespace gguftool::verify {
namespace {

using namespace detail;

// Thrown through the comparison when the core cannot decode a tensor: a failure of the side
// under test, reported as a mismatch, unlike errors of the expected side (missing files...).
struct CoreFailure {
    std::string problem;
};

// The type our side is compared in: float32, except that with reference files f64 and integer
// tensors are compared in their own type (llama.cpp does not decode them at all).
DataType compared_dtype(const Options &options, GgmlType type) {
    const DataType plain = plain_dtype(type);
    const bool own = plain == DataType::float64 || is_integer(plain);
    return own && !options.reference_dir.empty() ? plain : DataType::float32;
}

// The core's decoding of `t` (quant::decode on whole blocks), or its own bytes for integers.
Stream core_stream(const Context &ctx, const gguf::TensorInfo &t, DataType dtype) {
    if (is_integer(dtype)) return own_bytes(t);
    const TypeTraits &tt = traits(t.type);
    const std::span<const uint8_t> data = t.data;
    const auto out_type = static_cast<DataType>(int32_t(dtype));
    const unsigned threads = ctx.threads;
    return {dtype, [=, &tt](uint64_t first, uint64_t count, void *out) {
                const uint64_t offset = first / tt.block_size * tt.type_size;
                try {
                    quant::decode(t.type, data.subspan(offset, *row_bytes(t.type, count)), count,
                                  out, out_type, threads);
                } catch (const Error &e) {
                    throw CoreFailure{e.problem()};
                }
            }};
}

TensorResult verify_tensor(Context &ctx, const gguf::TensorInfo &t) {
    TensorResult r = new_result(std::string(t.name), type_name(t.type), t.elements);
    if (big_endian(ctx.model, t)) {
        r.note = "big-endian file: llama.cpp reads little-endian data only";
        ctx.advance(t.bytes);
        return r;
    }
    const DataType dtype = compared_dtype(ctx.options, t.type);
    StreamOrReason expected;
    if (!ctx.options.reference_dir.empty())
        expected = reference_stream(ctx, t, dtype);
    else if (t.type == GgmlType::f32)
        expected = own_bytes(t);
    else
        expected = expected_float32(ctx, t);
    if (const std::string *why = std::get_if<std::string>(&expected)) {
        r.note = *why;
        ctx.advance(t.bytes);
        return r;
    }
    const Stream ours = core_stream(ctx, t, dtype);
    try {
        r.diff = compare_streams(ctx, t.elements, traits(t.type).block_size, ours,
                                 std::get<Stream>(expected), t.bytes);
    } catch (const CoreFailure &f) {
        r.status = Status::mismatch;
        r.diff = Diff{};
        r.diff.mismatches = t.elements;  // nothing of it decoded: every element counts as wrong
        r.note = "gguftool cannot decode it: " + f.problem;
        return r;
    }
    r.status = r.diff.mismatches ? Status::mismatch : Status::match;
    return r;
}

}  // namespace

Report verify(const gguf::Model &model, const Options &options) {
    Context ctx(model, options, thread_count(options.threads));
    Report report;

    std::vector<const gguf::TensorInfo *> tensors;
    for (const gguf::TensorInfo &t : model.tensors())
        if (selected(options, t.name)) tensors.push_back(&t);
    if (tensors.empty() && !options.tensor_globs.empty())
        throw Error(model.first().path(), std::nullopt, "no tensor matches --tensor");

    if (options.reference_dir.empty()) {
        std::shared_ptr<const reference::Ggml> ggml = options.ggml;
        std::string why;
        if (!ggml) ggml = reference::load_ggml(options.ggml_lib, &why);
        if (!ggml) throw Error(why);
        ctx.llama = std::make_unique<LlamaDecoder>(ggml);
        report.reference = fmt::format("llama.cpp ({})", ggml->path);
    } else {
        std::error_code ec;
        if (!std::filesystem::is_directory(options.reference_dir, ec))
            throw Error(options.reference_dir, std::nullopt, "not a directory");
        report.reference = reference_file(options.reference_dir, "<tensor name>");
    }

    if (!options.onnx_model.empty()) {
        report.decoding = options.onnx_model + " run by gguftool's executor";
        verify_onnx(ctx, report);
        return report;
    }
    report.decoding = "gguftool's decoder";
    for (const gguf::TensorInfo *t : tensors) ctx.progress_total += t->bytes;
    for (const gguf::TensorInfo *t : tensors) record(options, report, verify_tensor(ctx, *t));
    return report;
}

}  // namespace gguftool::verify
