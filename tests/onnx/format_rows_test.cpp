// One row per format: every block format of the type table has each part the rooms need, found
// from its row alone: a decoder (formats/<family>.cpp), byte-order fields or a stated refusal
// (formats/blocks.hpp), its DequantizePacked identifier (in the schema's doc too), a lowering to
// standard operators (lib/lower/lower_<family>.cpp), and an Unpack form or, stated by its absence
// from kUnpackFormats, the fallback to DequantizePacked in unpack mode.
#include <algorithm>

#include "formats/formats.hpp"
#include "gguftool/byte_order.hpp"
#include "gguftool/opset29.hpp"
#include "onnx_test_util.hpp"

namespace gguftool::onnxtest {
namespace {

using onnx_export::Mode;

class FormatRow : public testing::TestWithParam<GgmlType> {};

TEST_P(FormatRow, HasEveryPart) {
    const GgmlType type = GetParam();
    const TypeTraits &tt = traits(type);
    ASSERT_TRUE(tt.quantized && !tt.removed);

    EXPECT_NE(formats::block_decoder(type), nullptr) << "no kernel in a family's X-list";

    if (const char *refusal = quant::byte_order_refusal(type)) {
        EXPECT_GT(std::string(refusal).size(), 0u);
        EXPECT_TRUE(quant::byte_order_fields(type).empty());
    } else {
        uint32_t at = 0;
        for (const quant::ByteOrderField &f : quant::byte_order_fields(type)) {
            EXPECT_EQ(f.offset, at);
            at += f.size;
        }
        EXPECT_EQ(at, tt.type_size) << "the byte-order fields do not cover the block";
    }

    const std::string id = opset29::format_name(type);
    EXPECT_EQ(opset29::format_type(id), type);
    opset29::register_schemas();
    const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema("DequantizePacked", 29, "");
    ASSERT_NE(schema, nullptr);
    const std::string doc = schema->doc();
    EXPECT_TRUE(doc.find(id + ",") != std::string::npos || doc.find(id + ")") != std::string::npos)
        << id;

    // Two random blocks (any bit pattern): the exporter takes every format in every mode.
    TempDir dir;
    write_gguf(
        dir.file("m.gguf"),
        {{"w", type, {2 * uint64_t(tt.block_size)}, testkit::random_bytes(2 * tt.type_size, 7)}});
    const gguf::Model model = gguf::Model::open(dir.file("m.gguf"));

    onnx_export::Options lowered;
    lowered.opset = 21;
    const onnx_export::Result low = onnx_export::export_model(model, dir.file("low.onnx"), lowered);
    EXPECT_GT(low.lowered_nodes, 0u) << "no lowering in a family's kLowerings";
    EXPECT_EQ(count_ops(load_model(dir.file("low.onnx")), "DequantizePacked"), 0u);

    onnx_export::Options unpack;
    unpack.mode = Mode::unpack;
    const onnx_export::Result r = onnx_export::export_model(model, dir.file("unpack.onnx"), unpack);
    const onnx::ModelProto m = check_model(dir.file("unpack.onnx"));
    const bool form = std::count(kUnpackFormats.begin(), kUnpackFormats.end(), type) != 0;
    EXPECT_EQ(r.unpacked, form ? 1u : 0u);
    EXPECT_EQ(r.packed, form ? 0u : 1u);
    EXPECT_EQ(count_ops(m, "Unpack"), form ? 1u : 0u);
    EXPECT_EQ(count_ops(m, "DequantizePacked"), form ? 0u : 1u);
}

INSTANTIATE_TEST_SUITE_P(EveryBlockFormat, FormatRow, testing::ValuesIn(testkit::quantized_types()),
                         param_name);

}  // namespace
}  // namespace gguftool::onnxtest
