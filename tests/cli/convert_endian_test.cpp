// gguftool convert-endian: llama.cpp-quantized data of every type and random blocks of every
// format through big-endian and back, byte for byte; the big-endian file read field by field by
// our reader; refusals, a full disk and interrupts.
#include <gtest/gtest.h>
#include <signal.h>

#include <bit>
#include <cstring>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "ggml_data.hpp"
#include "gguftool/byte_order.hpp"
#include "gguftool/gguf_header.hpp"
#include "gguftool/gguf_writer.hpp"

namespace gguftool {
namespace {

using gguf::ValueType;
using test::run_gguftool;

std::vector<std::string> all_quantized_but_refused() {
    std::vector<std::string> names;
    for (GgmlType t : testkit::quantized_types())
        if (!quant::byte_order_refusal(t)) names.emplace_back(type_name(t));
    return names;
}

// Every scalar type, strings, arrays of each and nested arrays: the metadata to convert.
void add_metadata(gguf::Writer &w) {
    using gguf::MetaValue;
    w.add("general.architecture", MetaValue::str("llama"));
    w.add("v.u8", MetaValue::u8(0xab));
    w.add("v.i8", MetaValue::i8(-2));
    w.add("v.u16", MetaValue::u16(0x0102));
    w.add("v.i16", MetaValue::i16(-300));
    w.add("v.u32", MetaValue::u32(0x01020304));
    w.add("v.i32", MetaValue::i32(-70000));
    w.add("v.f32", MetaValue::f32(-1.25f));
    w.add("v.bool", MetaValue::boolean(true));
    w.add("v.u64", MetaValue::u64(0x0102030405060708ull));
    w.add("v.i64", MetaValue::i64(-(int64_t(1) << 40)));
    w.add("v.f64", MetaValue::f64(0.1));
    w.add("v.str", MetaValue::str("héllo"));
    w.add("a.u16", MetaValue::array_of(std::vector<uint16_t>{1, 0xfffe}));
    w.add("a.f32", MetaValue::array_of(std::vector<float>{0.5f, -2.0f}));
    w.add("a.i64", MetaValue::array_of(std::vector<int64_t>{-1, 1ll << 33}));
    w.add("a.str", MetaValue::array_of(std::vector<std::string>{"a", "", "bc"}));
    w.add("a.nested",
          MetaValue::array(ValueType::array, {MetaValue::array_of(std::vector<int32_t>{7, -7}),
                                              MetaValue::array_of(std::vector<std::string>{"x"})}));
}

// Our reader's view of two files, compared field by field: header, every metadata value (as
// numbers, not bytes), tensor infos and offsets.
void expect_same_content(const gguf::File &a, const gguf::File &b) {
    EXPECT_EQ(a.version(), b.version());
    EXPECT_EQ(a.alignment(), b.alignment());
    EXPECT_EQ(a.data_offset(), b.data_offset());
    EXPECT_EQ(a.file_size(), b.file_size());
    ASSERT_EQ(a.metadata().size(), b.metadata().size());
    for (size_t i = 0; i < a.metadata().size(); ++i) {
        const gguf::MetadataEntry &x = a.metadata()[i], &y = b.metadata()[i];
        SCOPED_TRACE(std::string(x.key));
        EXPECT_EQ(x.key, y.key);
        // from_value reads numbers in each file's byte order: equal values, equal MetaValues.
        const std::function<void(const gguf::MetaValue &, const gguf::MetaValue &)> same =
            [&](const gguf::MetaValue &p, const gguf::MetaValue &q) {
                EXPECT_EQ(p.type(), q.type());
                EXPECT_EQ(p.bits(), q.bits());
                EXPECT_EQ(p.string(), q.string());
                EXPECT_EQ(p.element_type(), q.element_type());
                ASSERT_EQ(p.elements().size(), q.elements().size());
                for (size_t k = 0; k < p.elements().size(); ++k)
                    same(p.elements()[k], q.elements()[k]);
            };
        same(gguf::MetaValue::from_value(x.value), gguf::MetaValue::from_value(y.value));
    }
    ASSERT_EQ(a.tensors().size(), b.tensors().size());
    for (size_t i = 0; i < a.tensors().size(); ++i) {
        EXPECT_EQ(a.tensors()[i].name, b.tensors()[i].name);
        EXPECT_EQ(a.tensors()[i].type, b.tensors()[i].type);
        EXPECT_EQ(a.tensors()[i].ne, b.tensors()[i].ne);
        EXPECT_EQ(a.tensors()[i].offset, b.tensors()[i].offset);
    }
}

// LE -> BE -> LE: the big-endian file says the same as the original, its data converted block by
// block, and the round trip gives the original bytes back.
void round_trip(const testkit::TempDir &dir, const std::string &in) {
    const std::string be = dir.file("be.gguf"), le = dir.file("le.gguf");
    test::RunResult r = run_gguftool({"convert-endian", in, be, "--to", "big"});
    ASSERT_EQ(r.status, 0) << r.err;
    r = run_gguftool({"convert-endian", be, le, "--to", "little"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(testkit::read_file(le), testkit::read_file(in)) << "the round trip changed the file";
    const auto original = gguf::File::open(in), big = gguf::File::open(be);
    EXPECT_EQ(big->byte_order(), gguf::ByteOrder::big);
    expect_same_content(*original, *big);
    for (size_t i = 0; i < original->tensors().size(); ++i) {
        const gguf::TensorInfo &t = original->tensors()[i];
        SCOPED_TRACE(std::string(t.name));
        std::vector<uint8_t> want(t.data.size());
        quant::swap_byte_order(t.type, t.data.data(), want.data(),
                               t.data.size() / traits(t.type).type_size);
        const std::span<const uint8_t> got = big->tensors()[i].data;
        EXPECT_TRUE(std::equal(want.begin(), want.end(), got.begin(), got.end()));
    }
}

// llama.cpp quantized every type (an importance matrix where it needs one) and wrote the file.
TEST(ConvertEndian, EveryTypeOfALlamaWrittenFileRoundTrips) {
    if (!testkit::ggml()) GTEST_SKIP() << "llama.cpp's libggml-base.so is missing";
    testkit::TempDir dir;
    const std::string in = dir.file("llama.gguf");
    const int64_t ne0 = 256, rows = 2;
    const std::vector<float> values = test::test_weights(size_t(ne0 * rows), 5);
    std::vector<testkit::LlamaTensor> tensors;
    const std::vector<float> imatrix = testkit::make_imatrix(size_t(ne0), 6);
    for (GgmlType t : testkit::quantized_types()) {
        if (quant::byte_order_refusal(t)) continue;
        const testkit::Quantized q =
            testkit::quantize_with_llama(*testkit::ggml(), t, values, size_t(ne0), imatrix);
        ASSERT_FALSE(q.bytes.empty()) << type_name(t) << ": " << q.failure;
        tensors.push_back({fmt::format("t.{}", type_name(t)), t, {ne0, rows}, q.bytes});
    }
    for (GgmlType t : testkit::plain_types()) {
        const uint64_t n = uint64_t(ne0 * rows);
        tensors.push_back({fmt::format("t.{}", type_name(t)),
                           t,
                           {ne0, rows},
                           testkit::random_bytes(n * traits(t).type_size, uint32_t(t))});
    }
    const size_t tensors_written = tensors.size();
    testkit::write_with_llama(testkit::llama(), in, tensors,
                              [](const reference::Ggml &g, reference::gguf_context *c) {
                                  g.gguf_set_val_str(c, "general.architecture", "llama");
                                  g.gguf_set_val_f32(c, "llama.rope.freq_base", 10000.5f);
                                  const int32_t ids[] = {1, -2, 3};
                                  g.gguf_set_arr_data(c, "v.ids", int(ValueType::int32), ids, 3);
                              });
    round_trip(dir, in);
    // The little-endian result is llama.cpp's own file again; llama.cpp reads it, not the
    // big-endian one (on this little-endian machine it reads only little-endian files).
    testkit::expect_same_as_llama(dir.file("le.gguf"), *gguf::File::open(dir.file("le.gguf")));
    EXPECT_TRUE(testkit::llama_rejects(dir.file("be.gguf")));
    const test::RunResult v = run_gguftool({"verify", dir.file("le.gguf")});
    EXPECT_EQ(v.status, 0) << v.out << v.err;
    // dump decodes the big-endian file's blocks of every type as it decodes the little-endian ones.
    const auto dumped = [&](const char *name) {
        const test::RunResult r =
            run_gguftool({"dump", "--json", "--values", "64", "--stats", dir.file(name)});
        EXPECT_EQ(r.status, 0) << r.err;
        return nlohmann::json::parse(r.out, nullptr, false)["tensors"];
    };
    const nlohmann::json le_tensors = dumped("le.gguf");
    EXPECT_EQ(le_tensors.size(), tensors_written);
    EXPECT_EQ(dumped("be.gguf"), le_tensors);
}

// Random blocks of every convertible format (NaN scales, every code), plain types, and metadata of
// every type with nested arrays, written by our writer.
TEST(ConvertEndian, RandomBlocksOfEveryFormatRoundTrip) {
    testkit::TempDir dir;
    const std::string in = dir.file("random.gguf");
    gguf::Writer w;
    add_metadata(w);
    size_t formats = 0;
    for (uint32_t id = 0; id < kGgmlTypeCount; ++id) {
        const auto t = static_cast<GgmlType>(id);
        if (kTypeTable[id].removed || quant::byte_order_refusal(t)) continue;
        formats += kTypeTable[id].quantized;
        const uint64_t blocks = 3;
        w.add_tensor(fmt::format("t.{}", type_name(t)), t, {kTypeTable[id].block_size * blocks},
                     testkit::random_bytes(kTypeTable[id].type_size * blocks, id + 50));
    }
    EXPECT_EQ(formats, all_quantized_but_refused().size());
    EXPECT_EQ(formats, testkit::quantized_types().size() - 1);  // every format but iq2_xxs
    w.write(in);
    round_trip(dir, in);
    // Spot checks from formats/SPEC.md: q8_0's f16 d is bytes 0-1 of its block, q5_0's qh the
    // 32-bit word at bytes 2-5; f32 elements reversed whole.
    const auto le = gguf::File::open(in), be = gguf::File::open(dir.file("be.gguf"));
    const auto bytes = [](const gguf::File &f, const char *name) {
        return f.find_tensor(name)->data;
    };
    const std::span<const uint8_t> q8 = bytes(*le, "t.q8_0"), q8b = bytes(*be, "t.q8_0");
    EXPECT_EQ(q8b[0], q8[1]);
    EXPECT_EQ(q8b[1], q8[0]);
    EXPECT_TRUE(std::equal(q8.begin() + 2, q8.begin() + 34, q8b.begin() + 2));
    const std::span<const uint8_t> q5 = bytes(*le, "t.q5_0"), q5b = bytes(*be, "t.q5_0");
    for (int k = 0; k < 4; ++k) EXPECT_EQ(q5b[2 + k], q5[5 - k]);
    const std::span<const uint8_t> f = bytes(*le, "t.f32"), fb = bytes(*be, "t.f32");
    for (int k = 0; k < 4; ++k) EXPECT_EQ(fb[4 + k], f[7 - k]);
}

TEST(ConvertEndian, RefusesWhatItCannotConvertAndWritesNothing) {
    testkit::TempDir dir;
    const std::string in = dir.file("iq2.gguf"), out = dir.file("out.gguf");
    gguf::Writer w;
    w.add_tensor("ok", GgmlType::q8_0, {32}, testkit::random_bytes(34, 1));
    w.add_tensor("blk.0.attn_q.weight", GgmlType::iq2_xxs, {256}, testkit::random_bytes(66, 2));
    w.write(in);
    test::RunResult r = run_gguftool({"convert-endian", in, out, "--to", "big"});
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("tensor blk.0.attn_q.weight: iq2_xxs data cannot be converted to the "
                         "other byte order: iq2_xxs data has no certain big-endian layout"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("nothing written"), std::string::npos) << r.err;
    EXPECT_EQ(test::dir_entries(dir.path()), std::vector<std::string>{"iq2.gguf"});

    r = run_gguftool({"convert-endian", testkit::kSample, out, "--to", "little"});
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("the file is already little-endian: nothing to convert"),
              std::string::npos)
        << r.err;
    r = run_gguftool({"convert-endian", testkit::kSample, out, "--to", "middle"});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(test::dir_entries(dir.path()), std::vector<std::string>{"iq2.gguf"});
}

TEST(ConvertEndian, FullDiskLeavesNoOutput) {
    // The sample (tensors under a chunk each), and a tensor of 8 chunks, converted by a second
    // thread while the first writes: the write fails part-way, the converter stops.
    for (const bool many_chunks : {false, true}) {
        SCOPED_TRACE(many_chunks ? "8 MiB tensor" : "sample");
        testkit::TempDir dir;
        std::string in = dir.file("in.gguf");
        if (many_chunks)
            in = test::sparse_model(dir, GgmlType::f16, uint64_t(1) << 22);
        else
            testkit::write_file(in, testkit::read_file(testkit::kSample));
        const std::vector<std::string> before = test::dir_entries(dir.path());
        const test::RunResult r = test::finish(
            test::spawn_gguftool({"convert-endian", in, dir.file("be.gguf"), "--to", "big"},
                                 rlim_t(many_chunks ? 3 << 20 : 200000)));
        EXPECT_EQ(r.status, 1);
        EXPECT_NE(r.err.find("File too large"), std::string::npos) << r.err;
        EXPECT_EQ(test::dir_entries(dir.path()), before);
    }
}

TEST(ConvertEndian, InterruptLeavesNoOutput) {
    for (int sig : {SIGTERM, SIGINT}) {
        SCOPED_TRACE(strsignal(sig));
        testkit::TempDir dir;
        // 1 GiB of f16: converted (not copied), so interrupted in the producer.
        const std::string in = test::sparse_model(dir, GgmlType::f16, uint64_t(1) << 29);
        test::interrupt_mid_write(dir, {"convert-endian", in, dir.file("be.gguf"), "--to", "big"},
                                  sig);
    }
}

}  // namespace
}  // namespace gguftool
