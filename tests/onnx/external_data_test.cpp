// External data: one data file beside the model, ONNX's location/offset/length keys, offsets
// aligned to 4096, a small .onnx; chosen on request or when the model would pass protobuf's limit.
// And the inline writer's streamed output is exactly protobuf's own serialization.
#include "onnx_test_util.hpp"

namespace gguftool::onnxtest {
namespace {

using onnx_export::Mode;

std::map<std::string, std::string> external_keys(const onnx::TensorProto &t) {
    std::map<std::string, std::string> keys;
    for (const auto &e : t.external_data()) keys[e.key()] = e.value();
    return keys;
}

std::vector<TensorSpec> sample_tensors() {
    return {
        {"tok_embd",
         GgmlType::q4_k,
         {256, 5},
         llama_quantized(GgmlType::q4_k, 5, 256, testkit::Distribution::normal, 1)},
        {"norm",
         GgmlType::f32,
         {7},
         testkit::random_bytes(28, 2)},  // odd size: next offset must realign
        {"attn_q",
         GgmlType::q5_0,
         {64, 3},
         llama_quantized(GgmlType::q5_0, 3, 64, testkit::Distribution::normal, 3)},
        {"empty", GgmlType::q8_0, {32, 0}, {}},
        {"ffn",
         GgmlType::iq4_nl,
         {128, 9},
         llama_quantized(GgmlType::iq4_nl, 9, 128, testkit::Distribution::normal, 4)},
    };
}

TEST(ExternalData, RoundTripWithAlignedOffsets) {
    for (Mode mode : {Mode::packed, Mode::unpack}) {
        SCOPED_TRACE(onnx_export::mode_name(mode));
        TempDir dir;
        const std::vector<TensorSpec> tensors = sample_tensors();
        write_gguf(dir.file("m.gguf"), tensors);
        onnx_export::Options o;
        o.mode = mode;
        o.external_data = true;
        const auto r =
            onnx_export::export_model(gguf::Model::open(dir.file("m.gguf")), dir.file("m.onnx"), o);
        EXPECT_EQ(r.data_path, dir.file("m.onnx.data"));
        EXPECT_EQ(dir_entries(dir.path()),
                  (std::vector<std::string>{"m.gguf", "m.onnx", "m.onnx.data"}));
        EXPECT_LT(fs::file_size(dir.file("m.onnx")), 16384u);  // the model itself stays small

        const onnx::ModelProto m = check_model(dir.file("m.onnx"));
        const std::vector<uint8_t> data = read_file(dir.file("m.onnx.data"));
        size_t external = 0;
        uint64_t end = 0;
        for (const onnx::TensorProto &t : m.graph().initializer()) {
            if (t.data_location() != onnx::TensorProto::EXTERNAL) {
                // Inline: small graph constants and the empty tensor's initializers.
                EXPECT_LE(t.raw_data().size() + size_t(t.int64_data_size()) * 8, 1024u) << t.name();
                continue;
            }
            ++external;
            EXPECT_FALSE(t.has_raw_data()) << t.name();
            auto keys = external_keys(t);
            EXPECT_EQ(keys.size(), 3u) << t.name();
            EXPECT_EQ(keys["location"], "m.onnx.data") << t.name();
            const uint64_t offset = std::stoull(keys["offset"]),
                           length = std::stoull(keys["length"]);
            EXPECT_EQ(offset % 4096, 0u) << t.name();
            EXPECT_GE(offset, end) << t.name() << " overlaps the previous tensor";
            end = offset + length;
            ASSERT_LE(end, data.size()) << t.name();
            if (mode == Mode::packed && t.name().ends_with(":packed")) {  // the GGUF bytes, exactly
                const std::string name = t.name().substr(0, t.name().size() - 7);
                const auto it = std::find_if(tensors.begin(), tensors.end(),
                                             [&](const TensorSpec &s) { return s.name == name; });
                ASSERT_NE(it, tensors.end()) << name;
                EXPECT_TRUE(std::equal(it->bytes.begin(), it->bytes.end(), data.begin() + offset,
                                       data.begin() + offset + length))
                    << name;
            }
        }
        // Packed: four tensors with data. Unpack: q4_k packed, norm, and codes + scales of q5_0
        // and of iq4_nl. The empty tensor has no bytes to store.
        EXPECT_EQ(external, mode == Mode::packed ? 4u : 6u);
        EXPECT_EQ(data.size(), end);

        const auto outputs = run(dir.file("m.onnx"));
        for (const TensorSpec &t : tensors) {
            if (t.type == GgmlType::f32) continue;
            EXPECT_TRUE(same_bits(llama_decode(llama(), t.type, t.bytes),
                                  floats(outputs.at(t.name)), Nans::exact))
                << t.name;
        }
    }
}

// Above the inline limit (protobuf's 2 GiB; lowered here) the data goes external by itself.
TEST(ExternalData, ChosenAutomaticallyAboveTheLimit) {
    TempDir dir;
    write_gguf(dir.file("m.gguf"), sample_tensors());
    const gguf::Model model = gguf::Model::open(dir.file("m.gguf"));
    onnx_export::Options o;
    const auto inline_result = onnx_export::export_model(model, dir.file("small.onnx"), o);
    EXPECT_TRUE(inline_result.data_path.empty());
    o.inline_limit = inline_result.model_bytes;  // fits exactly: still inline
    EXPECT_TRUE(onnx_export::export_model(model, dir.file("exact.onnx"), o).data_path.empty());
    o.inline_limit = inline_result.model_bytes - 1;
    const auto r = onnx_export::export_model(model, dir.file("big.onnx"), o);
    EXPECT_EQ(r.data_path, dir.file("big.onnx.data"));
    check_model(dir.file("big.onnx"));
    EXPECT_EQ(run(dir.file("big.onnx")).size(), 5u);
}

// The inline file is streamed in pieces, yet it is byte for byte what protobuf writes for the
// whole message.
TEST(ExternalData, InlineStreamingEqualsProtobufSerialization) {
    for (Mode mode : {Mode::packed, Mode::unpack, Mode::dequantized}) {
        TempDir dir;
        write_gguf(dir.file("m.gguf"), sample_tensors());
        onnx_export::Options o;
        o.mode = mode;
        o.max_array = 2;
        const auto r =
            onnx_export::export_model(gguf::Model::open(dir.file("m.gguf")), dir.file("m.onnx"), o);
        const std::vector<uint8_t> file = read_file(dir.file("m.onnx"));
        EXPECT_EQ(r.model_bytes, file.size());
        const std::string serialized = load_model(dir.file("m.onnx")).SerializeAsString();
        EXPECT_TRUE(serialized == std::string(file.begin(), file.end()))
            << onnx_export::mode_name(mode);
    }
}

}  // namespace
}  // namespace gguftool::onnxtest
