// Writes the seed corpora of the fuzz targets into fuzz/corpus/<target>/ (run by fuzz/run.sh
// --seeds; the output is committed). Seeds are small valid inputs: the fuzzer mutates them.
//   gguf_reader     small GGUF files: every metadata value type, nested arrays, one tensor of
//                   every type with blocks made by llama.cpp's quantizer, big-endian and v2
//                   files, plus the files of testdata/broken and testdata/valid-edge
//   block_decoders  [type id][output byte] + a few blocks of that type from llama.cpp's quantizer
//   npy_reader      .npy encodings of small tensors of every dtype
//   tensor_proto    the .pb inputs and outputs of the ONNX node tests: testdata/node-tests, and
//                   those of SHARED_DIR/onnx-node-tests (../shared) not also there, when present
//   onnx_model      the node tests' model.onnx files and small to-onnx exports in every mode,
//                   and lowered to opset 26
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <set>

#include "files.hpp"
#include "ggml_data.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/gguf_writer.hpp"
#include "gguftool/onnx_export.hpp"
#include "gguftool/runtime.hpp"

using namespace gguftool;
namespace fs = std::filesystem;

namespace {

// One row of `type` quantized by llama.cpp from normal values (an imatrix always: harmless for
// types that do not need one). q8_1 and q8_K go through their reference row quantizers.
std::vector<uint8_t> quantized_row(const reference::Ggml &g, GgmlType type, size_t n) {
    const auto values = testkit::make_values(testkit::Distribution::normal, n, 7);
    auto q = testkit::quantize_with_llama(g, type, values, n, testkit::make_imatrix(n, 7));
    if (q.bytes.empty()) throw std::runtime_error(std::string(type_name(type)) + ": " + q.failure);
    return q.bytes;
}

size_t row_elements(GgmlType t) {
    return traits(t).block_size == 1 ? 64 : 2 * traits(t).block_size;
}

gguf::Writer metadata_of_every_type(uint32_t version, gguf::ByteOrder order) {
    using gguf::MetaValue;
    using gguf::ValueType;
    gguf::Writer w(version, order);
    w.add("general.architecture", MetaValue::str("llama"))
        .add("general.alignment", MetaValue::u32(32))
        .add("u8", MetaValue::u8(200))
        .add("i8", MetaValue::i8(-100))
        .add("u16", MetaValue::u16(60000))
        .add("i16", MetaValue::i16(-30000))
        .add("u32", MetaValue::u32(4000000000u))
        .add("i32", MetaValue::i32(-2000000000))
        .add("f32", MetaValue::f32(0.5f))
        .add("bool", MetaValue::boolean(true))
        .add("string", MetaValue::str("hello"))
        .add("empty", MetaValue::str(""))
        .add("u64", MetaValue::u64(1ull << 40))
        .add("i64", MetaValue::i64(-(1ll << 40)))
        .add("f64", MetaValue::f64(-2.25))
        .add("tokens", MetaValue::array_of(std::vector<std::string>{"<s>", "", "a", "bc"}))
        .add("scores", MetaValue::array_of(std::vector<float>{0.f, -1.f, 2.5f}))
        .add("ids", MetaValue::array_of(std::vector<int32_t>{1, 2, 3}))
        .add("no_items", MetaValue::array(ValueType::uint8, {}))
        .add("nested", MetaValue::array(ValueType::array,
                                        {MetaValue::array_of(std::vector<uint16_t>{1, 2}),
                                         MetaValue::array_of(std::vector<std::string>{"x"})}));
    return w;
}

void gguf_seeds(const reference::Ggml &g, const fs::path &dir, const fs::path &testdata) {
    gguf::Writer all = metadata_of_every_type(3, gguf::ByteOrder::little);
    for (uint32_t id = 0; id < kGgmlTypeCount; ++id) {
        const TypeTraits *t = type_traits(id);
        if (t->removed) continue;
        const GgmlType type = GgmlType(id);
        const size_t n = row_elements(type);
        std::vector<uint8_t> bytes = t->quantized ? quantized_row(g, type, n)
                                                  : testkit::random_bytes(*row_bytes(type, n), id);
        all.add_tensor(std::string("t.") + t->name, type, {n, 1}, std::move(bytes));
    }
    testkit::write_file(dir / "every-type.gguf", all.to_bytes());

    gguf::Writer big = metadata_of_every_type(3, gguf::ByteOrder::big);
    big.add_tensor("w", GgmlType::f32, {4, 2}, testkit::random_bytes(32, 1));
    big.add_tensor("q", GgmlType::q8_0, {32}, quantized_row(g, GgmlType::q8_0, 32));
    testkit::write_file(dir / "big-endian.gguf", big.to_bytes());

    gguf::Writer v2 = metadata_of_every_type(2, gguf::ByteOrder::little);
    v2.add_tensor("w", GgmlType::f16, {3, 5, 2}, testkit::random_bytes(60, 2));
    testkit::write_file(dir / "version2.gguf", v2.to_bytes());

    for (const char *sub : {"broken", "valid-edge"}) {
        if (!fs::is_directory(testdata / sub)) continue;
        for (const auto &e : fs::directory_iterator(testdata / sub))
            if (e.path().extension() == ".gguf")
                fs::copy_file(e.path(),
                              dir / (std::string(sub) + "-" + e.path().filename().string()),
                              fs::copy_options::overwrite_existing);
    }
}

void decoder_seeds(const reference::Ggml &g, const fs::path &dir) {
    int k = 0;
    for (GgmlType type : testkit::quantized_types()) {
        std::vector<uint8_t> seed = {uint8_t(type), uint8_t(k++ % 4)};
        const std::vector<uint8_t> row = quantized_row(g, type, row_elements(type));
        seed.insert(seed.end(), row.begin(), row.end());
        testkit::write_file(dir / type_name(type), seed);
    }
}

void npy_seeds(const fs::path &dir) {
    namespace rt = runtime;
    const DataType dtypes[] = {DataType::float32, DataType::float16, DataType::bfloat16,
                               DataType::float64, DataType::int8,    DataType::uint8,
                               DataType::int16,   DataType::uint16,  DataType::int32,
                               DataType::uint32,  DataType::int64,   DataType::uint64,
                               DataType::bool_};
    const rt::Shape shapes[] = {{}, {0}, {3}, {2, 3}, {1, 2, 1, 2}};
    int k = 0;
    for (DataType d : dtypes) {
        const rt::Shape &shape = shapes[k % std::size(shapes)];
        rt::Tensor t = rt::Tensor::zeros(d, shape);
        const auto noise = testkit::random_bytes(t.nbytes(), k);
        if (d != DataType::bool_ && t.nbytes())
            std::memcpy(t.mutable_data(), noise.data(), t.nbytes());
        testkit::write_file(dir / (std::string(dtype_name(d)) + ".npy"), rt::encode_npy(t));
        ++k;
    }
}

// Copies the node tests of `tests` (sorted by name) whose names `seeded` lacks, adding them.
void node_test_seeds(const fs::path &tests, const fs::path &pb_dir, const fs::path &onnx_dir,
                     std::set<std::string> &seeded) {
    std::vector<fs::path> dirs;
    for (const auto &e : fs::directory_iterator(tests))
        if (fs::exists(e.path() / "model.onnx")) dirs.push_back(e.path());
    std::sort(dirs.begin(), dirs.end());
    for (const fs::path &dir : dirs) {
        const std::string name = dir.filename().string();
        if (!seeded.insert(name).second) continue;
        fs::copy_file(dir / "model.onnx", onnx_dir / (name + ".onnx"),
                      fs::copy_options::overwrite_existing);
        for (const auto &f : fs::directory_iterator(dir / "test_data_set_0"))
            fs::copy_file(f.path(), pb_dir / (name + "-" + f.path().filename().string()),
                          fs::copy_options::overwrite_existing);
    }
}

// Every tensor of every-type.gguf exported alone, in each mode: small models with real
// DequantizePacked and Unpack graphs.
void export_seeds(const fs::path &gguf_dir, const fs::path &dir) {
    const gguf::Model model = gguf::Model::open((gguf_dir / "every-type.gguf").string());
    for (const gguf::TensorInfo &t : model.tensors()) {
        for (auto mode : {onnx_export::Mode::packed, onnx_export::Mode::unpack}) {
            if (mode == onnx_export::Mode::unpack && !traits(t.type).quantized) continue;
            onnx_export::Options o;
            o.mode = mode;
            o.tensor_globs = {std::string(t.name)};
            o.max_array = 2;
            const std::string out = (dir / (std::string(t.name.substr(2)) + "-" +
                                            onnx_export::mode_name(mode) + ".onnx"))
                                        .string();
            onnx_export::export_model(model, out, o);
        }
        if (!traits(t.type).quantized) continue;
        // Lowered to standard operators at opset 26, as `to-onnx --opset 26` writes it (BitCast for
        // the f16 scales: no 256 KiB table, so the seeds stay small).
        onnx_export::Options o;
        o.tensor_globs = {std::string(t.name)};
        o.max_array = 2;
        o.opset = 26;
        onnx_export::export_model(
            model, (dir / (std::string(t.name.substr(2)) + "-lowered26.onnx")).string(), o);
    }
}

}  // namespace

int main(int argc, char **argv) {
    if (argc != 3 && argc != 4) {
        std::cerr << "usage: make_seeds CORPUS_DIR TESTDATA_DIR [SHARED_DIR]\n";
        return 2;
    }
    const fs::path corpus = argv[1];
    try {
        const auto g = reference::ggml();
        if (!g) throw std::runtime_error("llama.cpp's libggml-base.so could not be loaded");
        for (const char *target :
             {"gguf_reader", "block_decoders", "npy_reader", "tensor_proto", "onnx_model"})
            fs::create_directories(corpus / target);
        gguf_seeds(*g, corpus / "gguf_reader", argv[2]);
        decoder_seeds(*g, corpus / "block_decoders");
        npy_seeds(corpus / "npy_reader");
        std::set<std::string> seeded;
        const fs::path testdata = argv[2];
        node_test_seeds(testdata / "node-tests", corpus / "tensor_proto", corpus / "onnx_model",
                        seeded);
        if (argc == 4 && fs::is_directory(fs::path(argv[3]) / "onnx-node-tests"))
            node_test_seeds(fs::path(argv[3]) / "onnx-node-tests", corpus / "tensor_proto",
                            corpus / "onnx_model", seeded);
        export_seeds(corpus / "gguf_reader", corpus / "onnx_model");
    } catch (const std::exception &e) {
        std::cerr << "make_seeds: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
