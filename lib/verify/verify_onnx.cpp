// verify() with an ONNX model: run the converted graph with the executor and compare each output
// named like a GGUF tensor with the expected decoding of that tensor — the end-to-end check of a
// conversion.
#include <fmt/format.h>

#include <cstring>
#include <set>

#include "gguftool/dims.hpp"
#include "gguftool/half.hpp"
#include "verify_impl.hpp"

namespace gguftool::verify::detail {
namespace {

// The GGUF tensor's shape as the exporter writes it (no dims: a scalar, shape []).
runtime::Shape onnx_shape(const gguf::TensorInfo &t) {
    return gguftool::onnx_shape(std::span(t.ne).first(t.n_dims));
}

// An f64 tensor's own values narrowed to `dtype` (float32, float16, bfloat16) with one rounding
// to nearest even, as to-onnx converts plain tensors (llama.cpp does not decode f64).
Stream narrowed_float64(const gguf::TensorInfo &t, DataType dtype) {
    const std::span<const uint8_t> data = t.data;
    return {dtype, [data, dtype](uint64_t first, uint64_t count, void *out) {
                for (uint64_t i = 0; i < count; ++i) {
                    double d;
                    std::memcpy(&d, data.data() + (first + i) * sizeof d, sizeof d);
                    if (dtype == DataType::float32)
                        static_cast<float *>(out)[i] = static_cast<float>(d);
                    else
                        static_cast<uint16_t *>(out)[i] =
                            dtype == DataType::float16 ? f64_to_fp16(d) : f64_to_bf16(d);
                }
            }};
}

// What an output of `dtype` should hold for tensor `t`: the tensor's own bytes when the output
// has its plain type, else the expected decoding brought to `dtype` (f64: its own values).
StreamOrReason expected_output(Context &ctx, const gguf::TensorInfo &t, DataType dtype) {
    const DataType plain = plain_dtype(t.type);
    if (dtype == plain) return own_bytes(t);
    if (is_integer(plain) || !is_floating(dtype))
        return fmt::format("a {} output cannot hold {} values exactly", dtype_name(dtype),
                           type_name(t.type));
    if (plain == DataType::float64) return narrowed_float64(t, dtype);
    StreamOrReason f32 =
        t.type == GgmlType::f32 ? StreamOrReason(own_bytes(t)) : expected_float32(ctx, t);
    if (Stream *s = std::get_if<Stream>(&f32)) return convert_float32(std::move(*s), dtype);
    return f32;
}

TensorResult verify_output(Context &ctx, const std::string &name, const runtime::Tensor &value) {
    TensorResult r = new_result(name, "-", value.elements());
    const gguf::TensorInfo *t = ctx.model.find_tensor(name);
    if (!t) {
        r.note = "no GGUF tensor of this name";
        return r;
    }
    r.type = type_name(t->type);
    r.elements = t->elements;
    const runtime::Shape &got = value.shape();
    if (got != onnx_shape(*t)) {
        r.status = Status::mismatch;
        r.diff.mismatches = t->elements;  // nothing comparable: every element counts as wrong
        r.note = fmt::format("{} output has shape {}; the GGUF tensor's is {}",
                             dtype_name(value.dtype()), runtime::shape_string(got),
                             runtime::shape_string(onnx_shape(*t)));
        return r;
    }
    if (big_endian(ctx.model, *t)) {
        r.note = "big-endian file: llama.cpp reads little-endian data only";
        return r;
    }
    const StreamOrReason expected = expected_output(ctx, *t, value.dtype());
    if (const std::string *why = std::get_if<std::string>(&expected)) {
        r.note = *why;
        return r;
    }
    const size_t size = dtype_size(value.dtype());
    const Stream ours{value.dtype(), [&value, size](uint64_t first, uint64_t count, void *out) {
                          if (count) std::memcpy(out, value.data() + first * size, count * size);
                      }};
    r.diff = compare_streams(ctx, t->elements, traits(t->type).block_size, ours,
                             std::get<Stream>(expected), 0);
    r.status = r.diff.mismatches ? Status::mismatch : Status::match;
    if (value.dtype() != DataType::float32 && plain_dtype(t->type) != value.dtype())
        r.note = fmt::format("compared as {}", dtype_name(value.dtype()));
    return r;
}

}  // namespace

void verify_onnx(Context &ctx, Report &report) {
    const Options &opt = ctx.options;
    const runtime::Model onnx = runtime::Model::load(opt.onnx_model);
    if (!onnx.inputs().empty())
        throw Error(opt.onnx_model, std::nullopt,
                    fmt::format("the graph has inputs (\"{}\"...); verify runs graphs without "
                                "inputs, as to-onnx writes them",
                                onnx.inputs().front().name));
    for (const runtime::ValueInfo &o : onnx.outputs())
        if (selected(opt, o.name)) ++ctx.progress_total;

    std::unique_ptr<runtime::Backend> backend =
        runtime::make_backend(opt.backend, {.threads = opt.threads, .device = opt.device});
    if (opt.on_backend) opt.on_backend(*backend);
    if (backend->name() != "cpu") report.decoding += " on " + backend->description();
    runtime::Session session(onnx, std::move(backend), runtime::RunOptions{.threads = opt.threads});
    if (opt.on_placement) opt.on_placement(session.placement());
    std::set<std::string> seen;
    session.run({}, [&](const std::string &name, const runtime::Tensor &value) {
        if (!selected(opt, name) || !seen.insert(name).second) return;
        record(opt, report, verify_output(ctx, name, value));
        ctx.advance(1);
    });
    // Selected GGUF tensors the conversion left out.
    for (const gguf::TensorInfo &t : ctx.model.tensors()) {
        const std::string name(t.name);
        if (!selected(opt, name) || seen.count(name)) continue;
        TensorResult r = new_result(name, type_name(t.type), t.elements);
        r.note = "not an output of the ONNX graph";
        record(opt, report, std::move(r));
    }
}

}  // namespace gguftool::verify::detail
