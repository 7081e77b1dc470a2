// `gguftool dump --json`: the document's keys, and everything in it checked against what
// llama.cpp's own reader reports for the same file.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "cli_support.hpp"
#include "gguftool/gguf_writer.hpp"

namespace gguftool::test {
namespace {

using nlohmann::json;

// GGUF value type names, as the GGUF specification lists the types.
const char *gguf_type_name(int t) {
    static const char *kNames[] = {"uint8",  "int8",    "uint16", "int16",  "uint32",
                                   "int32",  "float32", "bool",   "string", "array",
                                   "uint64", "int64",   "float64"};
    return t >= 0 && t < 13 ? kNames[t] : "?";
}

// One scalar of GGUF type `t` at `p` (llama.cpp's bytes) against its JSON value.
void expect_scalar(const json &j, int t, const void *p, const std::string &what) {
    const auto get = [&](auto v) {
        std::memcpy(&v, p, sizeof v);
        return v;
    };
    switch (t) {
        case 0:
            EXPECT_EQ(j.get<uint64_t>(), get(uint8_t())) << what;
            break;
        case 1:
            EXPECT_EQ(j.get<int64_t>(), get(int8_t())) << what;
            break;
        case 2:
            EXPECT_EQ(j.get<uint64_t>(), get(uint16_t())) << what;
            break;
        case 3:
            EXPECT_EQ(j.get<int64_t>(), get(int16_t())) << what;
            break;
        case 4:
            EXPECT_EQ(j.get<uint64_t>(), get(uint32_t())) << what;
            break;
        case 5:
            EXPECT_EQ(j.get<int64_t>(), get(int32_t())) << what;
            break;
        case 10:
            EXPECT_EQ(j.get<uint64_t>(), get(uint64_t())) << what;
            break;
        case 11:
            EXPECT_EQ(j.get<int64_t>(), get(int64_t())) << what;
            break;
        case 7:
            EXPECT_EQ(j.get<bool>(), get(int8_t()) != 0) << what;
            break;
        case 6: {
            const float f = get(float());
            if (std::isfinite(f))
                EXPECT_EQ(float(j.get<double>()), f) << what;
            else
                EXPECT_TRUE(j.is_null()) << what << ": non-finite must be null";
            break;
        }
        case 12: {
            const double d = get(double());
            if (std::isfinite(d))
                EXPECT_EQ(j.get<double>(), d) << what;
            else
                EXPECT_TRUE(j.is_null()) << what;
            break;
        }
        default:
            ADD_FAILURE() << what << ": unexpected type " << t;
    }
}

size_t gguf_scalar_size(int t) {
    static constexpr size_t kSizes[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    return kSizes[t];
}

// The whole document against llama.cpp's view of `path`.
void expect_json_matches_llama(const std::string &path, const json &doc) {
    LlamaGguf l(path);
    ASSERT_NE(l.g, nullptr) << "llama.cpp's libggml-base.so could not be loaded";
    ASSERT_NE(l.ctx, nullptr) << "llama.cpp rejects " << path;
    const reference::Ggml &g = *l.g;

    EXPECT_EQ(doc["version"].get<uint32_t>(), g.gguf_get_version(l.ctx));
    EXPECT_EQ(doc["byte_order"], "little");
    EXPECT_EQ(doc["alignment"].get<uint64_t>(), g.gguf_get_alignment(l.ctx));
    const uint64_t data_offset = g.gguf_get_data_offset(l.ctx);
    EXPECT_EQ(doc["data_offset"].get<uint64_t>(), data_offset);
    EXPECT_EQ(doc["file_size"].get<uint64_t>(), std::filesystem::file_size(path));

    const json &md = doc["metadata"];
    ASSERT_EQ(int64_t(md.size()), g.gguf_get_n_kv(l.ctx));
    for (int64_t i = 0; i < g.gguf_get_n_kv(l.ctx); ++i) {
        const json &e = md[size_t(i)];
        const std::string key = g.gguf_get_key(l.ctx, i);
        ASSERT_EQ(e["key"], key);
        const int type = g.gguf_get_kv_type(l.ctx, i);
        ASSERT_EQ(e["type"], gguf_type_name(type)) << key;
        if (type == 8) {
            EXPECT_EQ(e["value"].get<std::string>(), g.gguf_get_val_str(l.ctx, i)) << key;
        } else if (type != 9) {
            EXPECT_FALSE(e.contains("array_type")) << key;
            expect_scalar(e["value"], type, g.gguf_get_val_data(l.ctx, i), key);
        } else {
            const int at = g.gguf_get_arr_type(l.ctx, i);
            ASSERT_EQ(e["array_type"], gguf_type_name(at)) << key;
            const size_t n = g.gguf_get_arr_n(l.ctx, i);
            ASSERT_TRUE(e["value"].is_array()) << key;
            ASSERT_EQ(e["value"].size(), n) << key << ": arrays must be shown in full";
            for (size_t k = 0; k < n; ++k) {
                const std::string what = key + "[" + std::to_string(k) + "]";
                if (at == 8) {
                    EXPECT_EQ(e["value"][k].get<std::string>(), g.gguf_get_arr_str(l.ctx, i, k))
                        << what;
                } else {
                    const auto *data = static_cast<const uint8_t *>(g.gguf_get_arr_data(l.ctx, i));
                    expect_scalar(e["value"][k], at, data + k * gguf_scalar_size(at), what);
                }
            }
        }
    }

    const json &ts = doc["tensors"];
    ASSERT_EQ(int64_t(ts.size()), g.gguf_get_n_tensors(l.ctx));
    for (int64_t i = 0; i < g.gguf_get_n_tensors(l.ctx); ++i) {
        const json &t = ts[size_t(i)];
        const std::string name = g.gguf_get_tensor_name(l.ctx, i);
        ASSERT_EQ(t["name"], name);
        const int type = g.gguf_get_tensor_type(l.ctx, i);
        EXPECT_EQ(t["type"], g.type_name(type)) << name;
        const uint64_t offset = g.gguf_get_tensor_offset(l.ctx, i);
        EXPECT_EQ(t["offset"].get<uint64_t>(), offset) << name;
        EXPECT_EQ(t["file_offset"].get<uint64_t>(), data_offset + offset) << name;
        EXPECT_EQ(t["bytes"].get<uint64_t>(), g.gguf_get_tensor_size(l.ctx, i)) << name;
        const int64_t *ne = llama_tensor_ne(g, l.ctx, i);
        ASSERT_NE(ne, nullptr);
        const json &dims = t["dims"];
        ASSERT_GE(dims.size(), 1u) << name;
        ASSERT_LE(dims.size(), 4u) << name;
        uint64_t elements = 1;
        for (size_t d = 0; d < 4; ++d) {
            const uint64_t dim = d < dims.size() ? dims[d].get<uint64_t>() : 1;
            EXPECT_EQ(dim, uint64_t(ne[d])) << name << " ne" << d;
            elements *= uint64_t(ne[d]);
        }
        EXPECT_EQ(t["elements"].get<uint64_t>(), elements) << name;
        EXPECT_FALSE(t.contains("shard")) << name << ": only split models name shards";
    }
}

TEST(DumpJson, SampleHasEveryRequiredKey) {
    const json doc = dump_json({kSample});
    for (const char *k :
         {"version", "byte_order", "alignment", "data_offset", "file_size", "metadata", "tensors"})
        EXPECT_TRUE(doc.contains(k)) << k;
    ASSERT_TRUE(doc["metadata"].is_array());
    ASSERT_FALSE(doc["metadata"].empty());
    for (const json &e : doc["metadata"]) {
        EXPECT_TRUE(e.contains("key") && e.contains("type") && e.contains("value")) << e.dump();
        EXPECT_EQ(e.contains("array_type"), e["type"] == "array") << e["key"];
    }
    ASSERT_TRUE(doc["tensors"].is_array());
    ASSERT_FALSE(doc["tensors"].empty());
    for (const json &t : doc["tensors"])
        for (const char *k : {"name", "type", "dims", "offset", "file_offset", "bytes", "elements"})
            EXPECT_TRUE(t.contains(k)) << t["name"] << " lacks " << k;
}

TEST(DumpJson, SampleMatchesLlamaReader) {
    expect_json_matches_llama(kSample, dump_json({kSample}));
}

// Every metadata value type llama.cpp's writer can write, including strings JSON must escape,
// invalid UTF-8 and non-finite floats.
TEST(DumpJson, EveryValueTypeMatchesLlamaReader) {
    ASSERT_NE(ggml(), nullptr);
    TempDir dir;
    const std::string path = dir.file("types.gguf");
    const std::vector<std::string> strings = {"plain", "quote \" backslash \\ slash /",
                                              "new\nline\ttab\r\x01\x1f\x7f",
                                              "h\xC3\xA9llo \xE4\xB8\x96", ""};
    write_with_llama(llama(), path, {{"t", GgmlType::f32, {4}, std::vector<uint8_t>(16, 0)}},
                     [&](const reference::Ggml &g, reference::gguf_context *c) {
                         g.gguf_set_val_u8(c, "u8", 250);
                         g.gguf_set_val_i8(c, "i8", -120);
                         g.gguf_set_val_u16(c, "u16", 65000);
                         g.gguf_set_val_i16(c, "i16", -32000);
                         g.gguf_set_val_u32(c, "u32", 4000000000u);
                         g.gguf_set_val_i32(c, "i32", -2000000000);
                         g.gguf_set_val_f32(c, "f32", 0.1f);
                         g.gguf_set_val_f32(c, "f32.nan", NAN);
                         g.gguf_set_val_f32(c, "f32.inf", -INFINITY);
                         g.gguf_set_val_bool(c, "bool", true);
                         g.gguf_set_val_u64(c, "u64", UINT64_MAX);
                         g.gguf_set_val_i64(c, "i64", INT64_MIN);
                         g.gguf_set_val_f64(c, "f64", 1.0 / 3.0);
                         g.gguf_set_val_f64(c, "f64.denormal", 4.9e-324);
                         for (size_t i = 0; i < strings.size(); ++i)
                             g.gguf_set_val_str(c, ("str." + std::to_string(i)).c_str(),
                                                strings[i].c_str());
                         std::vector<const char *> ptrs;
                         for (const std::string &s : strings) ptrs.push_back(s.c_str());
                         g.gguf_set_arr_str(c, "arr.str", ptrs.data(), ptrs.size());
                         const float fs[] = {1.5f, -0.0f, NAN, 3e38f, 1e-45f};
                         g.gguf_set_arr_data(c, "arr.f32", 6, fs, 5);
                         const int64_t is[] = {INT64_MIN, -1, 0, INT64_MAX};
                         g.gguf_set_arr_data(c, "arr.i64", 11, is, 4);
                         const uint16_t us[] = {0, 1, 65535};
                         g.gguf_set_arr_data(c, "arr.u16", 2, us, 3);
                         const int8_t bs[] = {1, 0, 1};
                         g.gguf_set_arr_data(c, "arr.bool", 7, bs, 3);
                         const double ds[] = {0.1, -1e300, INFINITY};
                         g.gguf_set_arr_data(c, "arr.f64", 12, ds, 3);
                     });
    const json doc = dump_json({path});
    expect_json_matches_llama(path, doc);
}

TEST(DumpJson, InvalidUtf8IsReplacedNotCopied) {
    ASSERT_NE(ggml(), nullptr);
    TempDir dir;
    const std::string path = dir.file("utf8.gguf");
    write_with_llama(llama(), path, {}, [&](const reference::Ggml &g, reference::gguf_context *c) {
        g.gguf_set_val_str(c, "bad",
                           "a\xFF"
                           "b\xC3(\xE2\x82 \xED\xA0\x80 \xF4\x90\x80\x80 ok");
        g.gguf_set_val_str(c, "good", "\xF0\x9F\x98\x80 \xC3\xA9");
    });
    const RunResult r = run_gguftool({"dump", "--json", path});
    ASSERT_EQ(r.status, 0) << r.err;
    const json doc = json::parse(r.out);  // nlohmann rejects invalid UTF-8
    const std::string fffd = "\xEF\xBF\xBD";
    // Each byte that starts no valid sequence becomes one U+FFFD.
    EXPECT_EQ(doc["metadata"][0]["value"], "a" + fffd + "b" + fffd + "(" + fffd + fffd + " " +
                                               fffd + fffd + fffd + " " + fffd + fffd + fffd +
                                               fffd + " ok");
    EXPECT_EQ(doc["metadata"][1]["value"], "\xF0\x9F\x98\x80 \xC3\xA9");
}

// Nested arrays and big-endian files come from gguftool's own writer (llama.cpp writes neither);
// the expected values are the ones written.
TEST(DumpJson, NestedArraysAndBigEndian) {
    using gguf::MetaValue;
    using gguf::ValueType;
    TempDir dir;
    for (const auto order : {gguf::ByteOrder::little, gguf::ByteOrder::big}) {
        const bool big = order == gguf::ByteOrder::big;
        const std::string path = dir.file(big ? "big.gguf" : "little.gguf");
        gguf::Writer w(3, order);
        w.add("nested",
              MetaValue::array(
                  ValueType::array,
                  {MetaValue::array_of(std::vector<int32_t>{1, -2, 3}),
                   MetaValue::array_of(std::vector<int32_t>{}),
                   MetaValue::array(ValueType::array,
                                    {MetaValue::array_of(std::vector<std::string>{"x", "y"})})}));
        w.add("u32", MetaValue::u32(0x01020304));
        w.add("f64s", MetaValue::array_of(std::vector<double>{0.5, -2.25}));
        w.add("strs", MetaValue::array_of(std::vector<std::string>{"a", "bc"}));
        // An f32 tensor [1.5, -2, 3.25, 0], stored in the file's byte order.
        const float vals[4] = {1.5f, -2.0f, 3.25f, 0.0f};
        std::vector<uint8_t> bytes(16);
        for (int i = 0; i < 4; ++i) {
            uint32_t u;
            std::memcpy(&u, &vals[i], 4);
            for (int b = 0; b < 4; ++b)
                bytes[size_t(i * 4 + b)] = uint8_t(u >> (8 * (big ? 3 - b : b)));
        }
        w.add_tensor("t", GgmlType::f32, {4}, bytes);
        w.write(path);

        const json doc = dump_json({"--values", "4", "--stats", path});
        EXPECT_EQ(doc["byte_order"], big ? "big" : "little");
        const json &md = doc["metadata"];
        EXPECT_EQ(md[0]["type"], "array");
        EXPECT_EQ(md[0]["array_type"], "array");
        // The inner arrays' element types, nested as the arrays are.
        EXPECT_EQ(md[0]["element_array_types"], json::parse(R"(["int32","int32",["string"]])"));
        EXPECT_FALSE(md[2].contains("element_array_types")) << "only arrays of arrays have it";
        EXPECT_EQ(md[0]["value"], json::parse(R"([[1,-2,3],[],[["x","y"]]])"));
        EXPECT_EQ(md[1]["value"], 0x01020304);
        EXPECT_EQ(md[2]["value"], json::parse("[0.5,-2.25]"));
        EXPECT_EQ(md[3]["value"], json::parse(R"(["a","bc"])"));
        const json &t = doc["tensors"][0];
        EXPECT_EQ(t["values"], json::parse("[1.5,-2,3.25,0]"));
        EXPECT_EQ(t["stats"]["min"], -2.0);
        EXPECT_EQ(t["stats"]["max"], 3.25);
        EXPECT_EQ(t["stats"]["mean"], 0.6875);
    }
}

// A model split in two shards the way gguf-split does it: one document, tensors from both, each
// with its shard and its absolute position in that shard.
TEST(DumpJson, SplitModelJoinsShards) {
    using gguf::MetaValue;
    TempDir dir;
    const std::vector<std::vector<std::string>> names = {{"a", "b"}, {"c"}};
    for (uint16_t s = 0; s < 2; ++s) {
        gguf::Writer w;
        w.add("split.no", MetaValue::u16(s));
        w.add("split.count", MetaValue::u16(2));
        w.add("split.tensors.count", MetaValue::i32(3));
        for (const std::string &n : names[s])
            w.add_tensor(n, GgmlType::f32, {8}, filler(32, uint32_t(n[0])));
        w.write(dir.file(fmt::format("m-{:05}-of-00002.gguf", s + 1)));
    }
    for (const char *opened : {"m-00001-of-00002.gguf", "m-00002-of-00002.gguf"}) {
        const json doc = dump_json({dir.file(opened)});
        ASSERT_EQ(doc["tensors"].size(), 3u);
        ASSERT_EQ(doc["shards"].size(), 2u);
        for (size_t i = 0; i < 3; ++i) {
            const json &t = doc["tensors"][i];
            const size_t shard = i < 2 ? 0 : 1;
            EXPECT_EQ(t["name"], std::string(1, char('a' + i)));
            EXPECT_EQ(t["shard"], shard);
            // Each shard is a plain GGUF file to llama.cpp: its data offset places the tensor.
            LlamaGguf l(dir.file(fmt::format("m-{:05}-of-00002.gguf", shard + 1)));
            ASSERT_NE(l.ctx, nullptr);
            const auto id = int64_t(shard ? i - 2 : i);
            ASSERT_EQ(t["name"], l.g->gguf_get_tensor_name(l.ctx, id));
            EXPECT_EQ(t["file_offset"].get<uint64_t>(),
                      l.g->gguf_get_data_offset(l.ctx) + l.g->gguf_get_tensor_offset(l.ctx, id));
        }
    }
    const RunResult r = run_gguftool({"dump", dir.file("m-00001-of-00002.gguf")});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("shards"), std::string::npos);
    EXPECT_NE(r.out.find("m-00002-of-00002.gguf"), std::string::npos);
}

}  // namespace
}  // namespace gguftool::test
