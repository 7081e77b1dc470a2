// The fused weight product (DequantizePackedGemm, op_fused.cpp) of a q4_0 or q8_0 weight on the
// device: CANN's aclnnWeightQuantBatchMatmulV2 (aclnnop/aclnn_weight_quant_batch_matmul_v2.h,
// CANN 8.1), as llama.cpp's ggml-cann maps GGML_OP_MUL_MAT of those formats onto it
// (ggml/src/ggml-cann/aclnn_ops.cpp, ggml_cann_mul_mat_quant):
//   - the weight B [N, K] is converted once, on its first use, and kept with its packed buffer
//     (ggml-cann.cpp, ggml_backend_cann_transform_q8_0 / _q4_0): the quants of every block in
//     order (q8_0: int8 [N, K]; q4_0: int4 [N, K], two per byte, element 2i in the low nibble,
//     each nibble u stored as u - 8 by flipping its high bit, so the format's offset of -8 needs
//     no antiquantOffset), then the float16 scales d [N, K / 32];
//   - the operator gets the weight as the transposed view [K, N] and the scales as [K / 32, N],
//     group size 32 (0 when K is 32: one scale per column), A cast to float16 [M, K], y float16
//     [M, N], cast back to float; C, when the Gemm has one, added with aclnnAdd (alpha = beta).
// Other formats, weights picked by a Gather (an expert's), alpha other than 1, and sizes outside
// the operator's page (K and N in [1, 65535]) are refused by the rule, so the node falls back.
#include <cstring>

#include "ascend_backend.hpp"
#include "gguftool/half.hpp"
#include "gguftool/opset29.hpp"

namespace gguftool::runtime::ascend {
namespace {

constexpr int64_t kBlock = 32;     // QK4_0 = QK8_0
constexpr int64_t kMaxKN = 65535;  // the operator's k and n limits (its page)

// The weight in ggml-cann's device layout: quants, then float16 scales (bytes).
Tensor cann_layout(GgmlType type, const uint8_t *blocks, int64_t n, int64_t k) {
    const bool q4 = type == GgmlType::q4_0;
    const int64_t count = n * k / kBlock;
    const size_t block_bytes = q4 ? 18 : 34;  // fp16 d, then 16 nibble bytes or 32 int8
    const int64_t quant = q4 ? n * k / 2 : n * k;
    Tensor t = Tensor::zeros(DataType::uint8, {quant + 2 * count});
    uint8_t *q = static_cast<uint8_t *>(t.mutable_data());
    uint8_t *scales = q + quant;
    for (int64_t i = 0; i < count; ++i) {
        const uint8_t *block = blocks + size_t(i) * block_bytes;
        std::memcpy(scales + 2 * i, block, 2);
        const uint8_t *qs = block + 2;
        if (!q4) {
            std::memcpy(q + i * kBlock, qs, kBlock);
            continue;
        }
        // Block element j is qs[j]'s low nibble (j < 16) or qs[j - 16]'s high nibble.
        uint8_t *out = q + i * kBlock / 2;
        for (int j = 0; j < 16; j += 2) out[j / 2] = uint8_t((qs[j] & 0x0F) | (qs[j + 1] << 4));
        for (int j = 0; j < 16; j += 2) out[8 + j / 2] = uint8_t((qs[j] >> 4) | (qs[j + 1] & 0xF0));
        for (int j = 0; j < 16; ++j) out[j] ^= 0x88;  // u in [0, 16) as the int4 u - 8
    }
    return t;
}

void weight_quant_gemm(AscendBackend &b, const KernelArgs &args) {
    const DeviceTensor &a = *args.inputs[0], &x = *args.inputs[1];
    const DeviceTensor *c = args.inputs.size() > 2 ? args.inputs[2] : nullptr;
    DeviceTensor &y = args.outputs[0];
    if (y.elements() == 0) return;
    Device &d = b.device();
    const GgmlType type = GgmlType(args.attributes.at<int64_t>("format"));
    const int64_t offset = args.attributes.at<int64_t>("offset");
    const int64_t m = y.shape[0], n = y.shape[1], k = a.shape[1];
    const bool q4 = type == GgmlType::q4_0;
    const DeviceTensor w = b.derived(
        x, fmt::format("weight-quant:{}:{}:{}x{}", type_name(type), offset, n, k),
        [&](const Tensor &host) {
            return cann_layout(type, static_cast<const uint8_t *>(host.data()) + offset, n, k);
        });
    const int64_t quant = q4 ? n * k / 2 : n * k, total = int64_t(w.elements());
    const DeviceTensor a16 = b.converted(a, DataType::float16);
    DeviceTensor y16 = b.allocate(DataType::float16, {m, n});
    {
        const Desc wd(d, w, q4 ? cann::ACL_INT4 : cann::ACL_INT8, {k, n}, {1, k}, 0,
                      q4 ? 2 * total : total);
        const Desc sd(d, w, cann::ACL_FLOAT16, {k / kBlock, n}, {1, k / kBlock}, quant / 2,
                      total / 2);
        const Desc ad(d, a16), yd(d, y16);
        const int group = k > kBlock ? int(kBlock) : 0;
        GGUFTOOL_ACLNN(d, WeightQuantBatchMatmulV2, ad, wd, sd, nullptr, nullptr, nullptr, nullptr,
                       group, yd);
    }
    if (!c) {
        b.cast(y16, y);
        return;
    }
    DeviceTensor product = b.allocate(DataType::float32, {m, n});
    b.cast(y16, product);
    const Desc p(d, product), cd(d, *c), out(d, y);
    const Scalar beta(d, DataType::float32, args.attributes.get_float("beta").value_or(1.0));
    GGUFTOOL_ACLNN(d, Add, p, cd, beta, out);
}

// What the rule refuses before the dtypes: see the file's comment.
std::string refuse(const OpQuery &q, const Device &d) {
    const std::optional<std::string> format = q.attributes.get_string("format");
    const std::optional<GgmlType> type = format ? opset29::format_type(*format) : std::nullopt;
    if (type != GgmlType::q4_0 && type != GgmlType::q8_0)
        return fmt::format(
            "aclnnWeightQuantBatchMatmulV2 takes q4_0 and q8_0 weights here, not {} (as "
            "ggml-cann)",
            type ? std::string(type_name(*type)) : format.value_or("an unknown format"));
    if (q.inputs.size() > 3 && q.inputs[3] != DataType::undefined)
        return "a weight picked out of a stack by a Gather (an expert's) is not mapped onto "
               "aclnnWeightQuantBatchMatmulV2";
    const SocFamily f = d.family();
    if (f != SocFamily::a2 && f != SocFamily::a950 && f != SocFamily::p310)
        return fmt::format("aclnnWeightQuantBatchMatmulV2 is not supported on {}", d.soc());
    if (type == GgmlType::q4_0 && f == SocFamily::p310)
        return fmt::format(
            "aclnnWeightQuantBatchMatmulV2 takes INT8 weights only on {} (no INT4 for q4_0)",
            d.soc());
    const std::vector<int64_t> shape =
        q.attributes.get_ints("shape").value_or(std::vector<int64_t>{});
    if (shape.size() != 2 || shape[0] < 1 || shape[0] > kMaxKN || shape[1] < 1 || shape[1] > kMaxKN)
        return fmt::format(
            "the weight's shape {} is outside aclnnWeightQuantBatchMatmulV2's [1, 65535] for n "
            "and k",
            shape_string(shape));
    if (q.attributes.get_float("alpha").value_or(1.0) != 1.0)
        return "alpha other than 1 is not mapped onto aclnnWeightQuantBatchMatmulV2";
    if (q.attributes.get_int("transA").value_or(0) != 0)
        return "transA = 1 is not mapped onto aclnnWeightQuantBatchMatmulV2";
    return {};
}

}  // namespace

std::span<const AscendKernelRow> weight_matmul_kernels() {
    using DT = DataType;
    static const AscendKernelRow rows[] = {
        {"DequantizePackedGemm",
         weight_quant_gemm,
         {.refuse = refuse,
          .dtypes = {{0, [](DT t, SocFamily) { return in(t, {DT::float32}); },
                      "A is cast to float16 for aclnnWeightQuantBatchMatmulV2"},
                     {2, [](DT t, SocFamily) { return in(t, {DT::float32}); },
                      "C is added by aclnnAdd in float"}},
          .needs = {{"aclnnWeightQuantBatchMatmulV2"}, {"aclnnCast"}, {"aclnnAdd"}}}},
    };
    return rows;
}

}  // namespace gguftool::runtime::ascend
