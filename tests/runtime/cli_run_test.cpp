// `gguftool run` end to end: a graph built from testdata/sample.gguf (DequantizePacked for the
// quantized tensors, initializers for the plain ones) run with --output-dir, --compare and
// --benchmark; inputs from .npy and .pb; usage and model errors with their exit codes.
#include <map>
#include <sstream>

#include "gguftool/gguf.hpp"
#include "gguftool/half.hpp"
#include "gguftool/reference.hpp"
#include "runtime_test_util.hpp"

namespace gguftool::rttest {
namespace {

using testkit::kSample;

std::optional<DataType> plain_type(GgmlType t) {
    switch (t) {
        case GgmlType::f32:
            return DataType::float32;
        case GgmlType::f16:
            return DataType::float16;
        case GgmlType::bf16:
            return DataType::bfloat16;
        default:
            return std::nullopt;
    }
}

// The GGUF as a graph: every tensor is a graph output named as in the GGUF.
ModelBuilder model_of_gguf(const gguf::Model &g) {
    ModelBuilder b;
    for (const gguf::TensorInfo &t : g.tensors()) {
        const std::string name(t.name);
        rt::Shape shape(t.ne.begin(), t.ne.begin() + t.n_dims);
        std::reverse(shape.begin(), shape.end());
        if (const auto dt = plain_type(t.type)) {
            b.initializer(name, rt::Tensor::copy_of(*dt, shape, t.data));
        } else {
            std::string format = std::string("gguf:") + type_name(t.type);
            std::transform(format.begin(), format.end(), format.begin(), ::tolower);
            b.initializer(name + ".packed",
                          rt::Tensor::copy_of(DataType::uint8, {int64_t(t.bytes)}, t.data));
            b.node("DequantizePacked", {name + ".packed"}, {name},
                   {attr_string("format", format), attr_ints("shape", shape)}, "dq." + name);
        }
        b.output(name);
    }
    return b;
}

size_t count_of(const std::string &s, const std::string &what) {
    size_t n = 0;
    for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
    return n;
}

std::vector<std::string> lines_of(const std::string &s) {
    std::vector<std::string> lines;
    std::istringstream in(s);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

// The cell of `row` under the column that starts at `header`'s `column` text (cells are
// separated by two spaces or more; the last cell runs to the end of the row).
std::string cell(const std::string &header, const std::string &row, const std::string &column) {
    const size_t at = header.find(column);
    if (at == std::string::npos || at >= row.size()) return "";
    const size_t end = row.find("  ", at);
    return row.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

TEST(CliRun, CompareOutputDirAndBenchmark) {
    TempDir tmp;
    const gguf::Model g = gguf::Model::open(kSample);
    const size_t n = g.tensors().size();
    ModelBuilder b = model_of_gguf(g);
    b.save(tmp.file("sample.onnx"));

    CliResult r = run_cli({"run", tmp.file("sample.onnx"), "--compare", kSample});
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_EQ(count_of(r.out, "  match\n"), n) << r.out;
    // A table: a header, then one row per output with its cells under the headers; the shape in
    // ONNX order (GGUF's dims reversed).
    const std::vector<std::string> lines = lines_of(r.out);
    ASSERT_GE(lines.size(), n + 1);
    const std::string &header = lines[0];
    EXPECT_EQ(header.rfind("name ", 0), 0u) << header;
    for (const char *column : {"type", "shape (ONNX order)", "GGUF type", "result"})
        EXPECT_NE(header.find(column), std::string::npos) << header;
    std::map<std::string, std::string> rows;  // by name: outputs come as they are computed
    for (size_t i = 1; i <= n; ++i) rows[cell(header, lines[i], "name")] = lines[i];
    ASSERT_EQ(rows.size(), n) << r.out;
    for (const gguf::TensorInfo &t : g.tensors()) {
        const std::string &row = rows[std::string(t.name)];
        std::vector<std::string> dims;
        for (uint32_t d = t.n_dims; d-- > 0;) dims.push_back(std::to_string(t.ne[d]));
        EXPECT_EQ(cell(header, row, "shape (ONNX order)"),
                  fmt::format("[{}]", fmt::join(dims, ", ")))
            << row;
        EXPECT_EQ(cell(header, row, "GGUF type"), type_name(t.type)) << row;
        EXPECT_EQ(cell(header, row, "result"), "match") << row;
    }
    EXPECT_NE(r.out.find(fmt::format("compare: {} match, 0 differ, 0 not compared", n)),
              std::string::npos)
        << r.out;

    // One flipped byte in one packed tensor is caught and named.
    onnx::TensorProto &packed = b.initializer_proto("blk.0.attn_q.weight.packed");
    (*packed.mutable_raw_data())[100] ^= 0x10;
    b.save(tmp.file("broken.onnx"));
    r = run_cli({"run", tmp.file("broken.onnx"), "--compare", kSample});
    EXPECT_EQ(r.status, 1) << r.out;
    bool named = false;
    for (const std::string &row : lines_of(r.out))
        if (cell(lines_of(r.out)[0], row, "name") == "blk.0.attn_q.weight") {
            EXPECT_EQ(cell(lines_of(r.out)[0], row, "type"), "float") << row;
            EXPECT_EQ(cell(lines_of(r.out)[0], row, "GGUF type"), "q4_0") << row;
            EXPECT_EQ(cell(lines_of(r.out)[0], row, "result").rfind("MISMATCH: ", 0), 0u) << row;
            named = true;
        }
    EXPECT_TRUE(named) << r.out;
    EXPECT_NE(r.out.find(fmt::format("compare: {} match, 1 differ", n - 1)), std::string::npos);

    // --output-dir: every output as .npy; the q4_0 one equals llama.cpp's decoding.
    const std::string out_dir = tmp.file("out");
    r = run_cli({"run", tmp.file("sample.onnx"), "--output-dir", out_dir, "--threads", "2"});
    EXPECT_EQ(r.status, 0) << r.out;
    for (const gguf::TensorInfo &t : g.tensors())
        EXPECT_TRUE(fs::exists(fs::path(out_dir) / (std::string(t.name) + ".npy"))) << t.name;
    auto ggml = reference::ggml();
    ASSERT_TRUE(ggml) << "llama.cpp's libggml-base.so is required";
    for (const char *name : {"blk.0.attn_q.weight", "output.weight", "blk.1.attn_output.weight"}) {
        const gguf::TensorInfo *t = g.find_tensor(name);
        ASSERT_TRUE(t);
        std::vector<float> expected(t->elements);
        ggml->dequantize_row[uint32_t(t->type)](t->data.data(), expected.data(),
                                                int64_t(t->elements));
        const rt::Tensor got =
            rt::read_npy((fs::path(out_dir) / (std::string(name) + ".npy")).string());
        const rt::AllcloseResult c = rt::allclose(
            got, tensor(DataType::float32, {int64_t(t->ne[1]), int64_t(t->ne[0])}, expected), true);
        EXPECT_TRUE(c.equal) << name << ": " << c.message;
    }
    // bfloat16 is written as raw '<u2' words with a note.
    const std::string bf = read_text((fs::path(out_dir) / "blk.0.attn_v.weight.npy").string());
    EXPECT_NE(bf.find("'descr': '<u2'"), std::string::npos);
    EXPECT_NE(bf.find("# gguftool: bfloat16 stored as raw uint16 words"), std::string::npos);
    EXPECT_EQ(rt::read_npy((fs::path(out_dir) / "blk.0.attn_v.weight.npy").string()).dtype(),
              DataType::bfloat16);

    // --benchmark: a table with one line per node.
    r = run_cli({"run", tmp.file("sample.onnx"), "--benchmark"});
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("GB/s"), std::string::npos) << r.out;
    size_t quantized = 0;
    for (const gguf::TensorInfo &t : g.tensors()) quantized += !plain_type(t.type);
    EXPECT_EQ(count_of(r.out, "DequantizePacked-29"), quantized) << r.out;
    EXPECT_NE(r.out.find("all nodes"), std::string::npos) << r.out;
    // The CPU launches no device operators: no calls column, no backend line, nothing lowered.
    EXPECT_EQ(r.out.find("calls"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("backend:"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("lowered for the backend"), std::string::npos) << r.out;
}

TEST(CliRun, InputsFromNpyAndPbAndSummary) {
    TempDir tmp;
    ModelBuilder b;
    b.input("X", DataType::uint8).input("count", DataType::int64).output("Y");
    b.node("Unpack", {"X", "count"}, {"Y"}, {attr_int("bits", 3)}, "unpack");
    b.save(tmp.file("m.onnx"));
    rt::write_npy(tmp.file("x.npy"), bytes_u8({136, 198, 250}));
    onnx::TensorProto count;
    rt::tensor_to_proto(scalar_i64(8), "count", count);
    write_file(tmp.file("count.pb"), count.SerializeAsString());
    CliResult r = run_cli({"run", tmp.file("m.onnx"), "--input", "X=" + tmp.file("x.npy"),
                           "--input", "count=" + tmp.file("count.pb")});
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_EQ(r.out,
              "name  type      shape (ONNX order)  first values\n"
              "Y     uint8     [8]                 0 1 2 3 4 5 6 7\n");

    // Missing input, wrong type, unknown name: model errors (exit 1).
    r = run_cli({"run", tmp.file("m.onnx"), "--input", "X=" + tmp.file("x.npy")});
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("graph input \"count\" was not given"), std::string::npos) << r.out;
    r = run_cli({"run", tmp.file("m.onnx"), "--input", "X=" + tmp.file("count.pb"), "--input",
                 "count=" + tmp.file("count.pb")});
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("graph input \"X\" is int64 but the graph declares uint8"),
              std::string::npos);
    r = run_cli({"run", tmp.file("m.onnx"), "--input", "Z=" + tmp.file("x.npy")});
    EXPECT_EQ(r.status, 1) << r.out;

    // A wrong count is an error naming the node.
    rt::tensor_to_proto(scalar_i64(9), "count", count);
    write_file(tmp.file("count9.pb"), count.SerializeAsString());
    r = run_cli({"run", tmp.file("m.onnx"), "--input", "X=" + tmp.file("x.npy"), "--input",
                 "count=" + tmp.file("count9.pb")});
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(
        r.out.find("node \"unpack\" (Unpack-29): input X has 3 words along axis 0 but count 9"),
        std::string::npos)
        << r.out;
}

// --benchmark and errors name a node's operator with the version the model's opset selects:
// Identity-25 (the newest Identity, ONNX 1.20) at opset 29 and Identity-13 at opset 13, though the
// runtime runs both with its Identity-1 row; Unpack exists only as Unpack-29.
TEST(CliRun, NodeLabelsNameTheOperatorVersionOfTheOpset) {
    TempDir tmp;
    for (const auto &[opset, want] : {std::pair<int64_t, const char *>{29, "Identity-25"},
                                      {13, "Identity-13"},
                                      {12, "Identity-1"}}) {
        ModelBuilder b(opset);
        b.input("x", DataType::float32).output("y");
        b.node("Identity", {"x"}, {"y"}, {}, "id");
        const std::string model = tmp.file(fmt::format("id{}.onnx", opset));
        b.save(model);
        rt::write_npy(tmp.file("x.npy"), tensor(DataType::float32, {2}, std::vector<float>{1, 2}));
        const CliResult r =
            run_cli({"run", model, "--input", "x=" + tmp.file("x.npy"), "--benchmark"});
        EXPECT_EQ(r.status, 0) << r.out;
        bool found = false;
        for (const std::string &line : lines_of(r.out))
            if (line.rfind("id ", 0) == 0) {
                EXPECT_NE(line.find(std::string(" ") + want + " "), std::string::npos) << line;
                found = true;
            }
        EXPECT_TRUE(found) << r.out;
        // The same label in an error.
        b.node("Identity", {"nope"}, {"z"}, {}, "bad");
        b.save(model);
        const CliResult e = run_cli({"run", model, "--input", "x=" + tmp.file("x.npy")});
        EXPECT_EQ(e.status, 1);
        EXPECT_NE(e.out.find(fmt::format("node \"bad\" ({})", want)), std::string::npos) << e.out;
    }
}

// --weight-products: a Gemm on a q4_0 DequantizePacked weight runs fused (--benchmark names the
// fused node), fused as float tiles (bit for bit the unfused output) or unfused; an unknown mode
// is a usage error.
TEST(CliRun, WeightProducts) {
    TempDir tmp;
    std::vector<float> w(64 * 256), a(2 * 256);
    for (size_t i = 0; i < w.size(); ++i) w[i] = float(int(i * 7919 % 61) - 30) / 16;
    for (size_t i = 0; i < a.size(); ++i) a[i] = float(int(i * 104729 % 23) - 11) / 4;
    std::vector<uint8_t> bytes(*row_bytes(GgmlType::q8_0, w.size()));
    for (size_t b = 0; b < w.size() / 32; ++b) {  // q8_0 blocks: scale 1/16, codes w * 16
        const uint16_t d = f32_to_fp16(1.0f / 16);
        std::memcpy(bytes.data() + b * 34, &d, 2);
        for (int j = 0; j < 32; ++j) bytes[b * 34 + 2 + j] = uint8_t(int8_t(w[b * 32 + j] * 16));
    }
    ModelBuilder m;
    m.input("a", DataType::float32, {2, 256}).output("y");
    m.bytes_initializer("x", bytes);
    m.dequantize_packed("w", "x", "wf", GgmlType::q8_0, {64, 256}, DataType::float32);
    m.node("Gemm", {"a", "wf"}, {"y"}, {attr_int("transB", 1)}, "product");
    m.save(tmp.file("m.onnx"));
    rt::write_npy(tmp.file("a.npy"), tensor(DataType::float32, {2, 256}, a));
    std::map<std::string, rt::Tensor> y;
    for (const char *mode : {"fused", "float", "unfused"}) {
        const std::string dir = tmp.file(mode);
        const CliResult r =
            run_cli({"run", tmp.file("m.onnx"), "--input", "a=" + tmp.file("a.npy"),
                     "--weight-products", mode, "--output-dir", dir, "--benchmark"});
        ASSERT_EQ(r.status, 0) << r.out;
        EXPECT_EQ(r.out.find("DequantizePackedGemm-1") != std::string::npos,
                  std::string(mode) != "unfused")
            << r.out;
        y[mode] = rt::read_npy(dir + "/y.npy");
    }
    ASSERT_EQ(y["float"].nbytes(), y["unfused"].nbytes());
    EXPECT_EQ(std::memcmp(y["float"].data(), y["unfused"].data(), y["float"].nbytes()), 0);
    // int8 activations: near the exact products, not always on them.
    const float *f = y["fused"].data_as<float>(), *u = y["unfused"].data_as<float>();
    for (uint64_t i = 0; i < y["fused"].elements(); ++i) EXPECT_NEAR(f[i], u[i], 0.02 * 40) << i;
    EXPECT_EQ(run_cli({"run", tmp.file("m.onnx"), "--weight-products", "int4"}).status, 2);
}

TEST(CliRun, UsageAndModelErrors) {
    TempDir tmp;
    ModelBuilder b;
    b.input("a").output("y");
    b.node("Conv", {"a"}, {"y"}, {}, "conv");
    b.save(tmp.file("bad.onnx"));
    CliResult r = run_cli({"run", tmp.file("bad.onnx")});
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_NE(r.out.find("node \"conv\" (Conv): unsupported operator Conv"), std::string::npos)
        << r.out;

    EXPECT_EQ(run_cli({"run"}).status, 2);
    EXPECT_EQ(run_cli({"run", tmp.file("bad.onnx"), "--input", "novalue"}).status, 2);
    EXPECT_EQ(run_cli({"run", tmp.file("bad.onnx"), "--backend", "tpu"}).status, 2);
    EXPECT_EQ(run_cli({"run", tmp.file("bad.onnx"), "--device", "-1"}).status, 2);
    EXPECT_EQ(run_cli({"run", tmp.file("bad.onnx"), "--exact"}).status, 2);
    EXPECT_EQ(run_cli({"run", tmp.file("bad.onnx"), "--test-dir", kNodeTests}).status, 2);
    EXPECT_EQ(run_cli({"run", "--test-dir", kNodeTests, "--benchmark"}).status, 2);
    EXPECT_EQ(run_cli({"run", tmp.file("bad.onnx"), "--threads", "-1"}).status, 2);
    EXPECT_EQ(run_cli({"run", tmp.file("missing.onnx")}).status, 1);
    const CliResult help = run_cli({"run", "--help"});
    EXPECT_EQ(help.status, 0);
    for (const char *opt : {"--input", "--output-dir", "--backend", "--threads", "--device",
                            "--compare", "--benchmark", "--test-dir", "--exact"})
        EXPECT_NE(help.out.find(opt), std::string::npos) << opt;
}

// The CPU is device 0 and nothing else; another number is an error before anything runs.
TEST(CliRun, TheCpuBackendRefusesAnotherDevice) {
    TempDir tmp;
    ModelBuilder b;
    b.input("a", DataType::int32).output("y");
    b.node("Neg", {"a"}, {"y"}, {}, "neg");
    b.save(tmp.file("neg.onnx"));
    for (const std::vector<std::string> &args :
         {std::vector<std::string>{"run", tmp.file("neg.onnx"), "--device", "1"},
          std::vector<std::string>{"run", "--test-dir", kNodeTests, "--device", "1"}}) {
        const CliResult r = run_cli(args);
        EXPECT_EQ(r.status, 1) << r.out;
        EXPECT_EQ(r.out, "gguftool: the cpu backend has only device 0, not device 1\n");
    }
    const CliResult r = run_cli({"run", "--test-dir", kNodeTests + "/test_unpack_3bit", "--backend",
                                 "cpu", "--device", "0"});
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_EQ(r.out, "PASS test_unpack_3bit\n1 passed, 0 failed\n");
}

}  // namespace
}  // namespace gguftool::rttest
