// `gguftool dump` options, human output and exit codes.
#include <fnmatch.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <iterator>
#include <sstream>

#include "cli_support.hpp"
#include "gguftool/gguf_writer.hpp"

namespace gguftool::test {
namespace {

using nlohmann::json;

std::vector<std::string> names_of(const json &doc) {
    std::vector<std::string> out;
    for (const json &t : doc["tensors"]) out.push_back(t["name"]);
    return out;
}

TEST(DumpOptions, TensorGlobsSelectTensors) {
    ASSERT_NE(ggml(), nullptr);
    const std::vector<std::string> globs = {"blk.*.attn_?.weight", "output.weight"};
    std::vector<std::string> want;
    for (const LlamaTensorView &t : llama_tensors(kSample))
        for (const std::string &g : globs)
            if (fnmatch(g.c_str(), t.name.c_str(), 0) == 0) {
                want.push_back(t.name);
                break;
            }
    ASSERT_EQ(want.size(), 7u);  // output.weight and q, k, v of two layers
    const json doc = dump_json({"--tensor", globs[0], "--tensor", globs[1], kSample});
    EXPECT_EQ(names_of(doc), want);
    EXPECT_EQ(doc["tensor_count"], 21);  // the file's count, not the selection's

    const RunResult text = run_gguftool({"dump", "--tensor", globs[0], kSample});
    EXPECT_EQ(text.status, 0) << text.err;
    EXPECT_NE(text.out.find("blk.1.attn_v.weight"), std::string::npos);
    EXPECT_EQ(text.out.find("blk.1.attn_output.weight"), std::string::npos);
    EXPECT_EQ(text.out.find("token_embd.weight"), std::string::npos);

    EXPECT_TRUE(dump_json({"--tensor", "nothing*", kSample})["tensors"].empty());
}

TEST(DumpOptions, NoMetadataAndNoTensors) {
    const json no_md = dump_json({"--no-metadata", kSample});
    EXPECT_FALSE(no_md.contains("metadata"));
    EXPECT_EQ(no_md["tensors"].size(), 21u);
    const json no_t = dump_json({"--no-tensors", kSample});
    EXPECT_FALSE(no_t.contains("tensors"));
    EXPECT_FALSE(no_t["metadata"].empty());
    const json header = dump_json({"--no-tensors", "--no-metadata", kSample});
    EXPECT_FALSE(header.contains("metadata") || header.contains("tensors"));
    EXPECT_TRUE(header.contains("data_offset"));

    const RunResult t1 = run_gguftool({"dump", "--no-metadata", kSample});
    EXPECT_EQ(t1.status, 0);
    EXPECT_EQ(t1.out.find("tokenizer.ggml.tokens"), std::string::npos);
    EXPECT_NE(t1.out.find("token_embd.weight"), std::string::npos);
    const RunResult t2 = run_gguftool({"dump", "--no-tensors", kSample});
    EXPECT_EQ(t2.status, 0);
    EXPECT_NE(t2.out.find("tokenizer.ggml.tokens"), std::string::npos);
    EXPECT_EQ(t2.out.find("token_embd.weight"), std::string::npos);
}

// The text output: the header fields, every metadata key and every tensor row, as llama.cpp
// reports them.
TEST(DumpOptions, HumanOutputShowsHeaderMetadataAndTensorRows) {
    LlamaGguf l(kSample);
    ASSERT_NE(l.ctx, nullptr);
    const RunResult r = run_gguftool({"dump", kSample});
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string &out = r.out;
    const auto has_line = [&](const std::vector<std::string> &words) {
        std::istringstream in(out);
        for (std::string line; std::getline(in, line);) {
            std::istringstream ws(line);
            std::vector<std::string> got{std::istream_iterator<std::string>(ws), {}};
            if (got == words) return true;
        }
        return false;
    };
    const reference::Ggml &g = *l.g;
    EXPECT_TRUE(has_line({"version", std::to_string(g.gguf_get_version(l.ctx))})) << out;
    EXPECT_TRUE(has_line({"byte", "order", "little-endian"}));
    EXPECT_TRUE(has_line({"alignment", std::to_string(g.gguf_get_alignment(l.ctx))}));
    EXPECT_TRUE(has_line({"data", "offset", std::to_string(g.gguf_get_data_offset(l.ctx))}));
    EXPECT_TRUE(has_line({"tensors", std::to_string(g.gguf_get_n_tensors(l.ctx))}));
    EXPECT_TRUE(
        has_line({"metadata", std::to_string(g.gguf_get_n_kv(l.ctx)), "key-value", "pairs"}));
    const uint64_t size = std::filesystem::file_size(kSample);
    EXPECT_NE(out.find("file size    " + std::to_string(size)), std::string::npos);
    for (int64_t i = 0; i < g.gguf_get_n_kv(l.ctx); ++i)
        EXPECT_NE(out.find(std::string("\n  ") + g.gguf_get_key(l.ctx, i) + " "), std::string::npos)
            << g.gguf_get_key(l.ctx, i);

    uint64_t elements = 0, bytes = 0;
    for (int64_t i = 0; i < g.gguf_get_n_tensors(l.ctx); ++i) {
        const int type = g.gguf_get_tensor_type(l.ctx, i);
        const int64_t *ne = llama_tensor_ne(g, l.ctx, i);
        ASSERT_NE(ne, nullptr);
        std::vector<std::string> row = {std::to_string(i), g.gguf_get_tensor_name(l.ctx, i),
                                        g.type_name(type), std::to_string(ne[0])};
        if (ne[1] > 1) row.insert(row.end(), {"x", std::to_string(ne[1])});
        const uint64_t n = uint64_t(ne[0] * ne[1] * ne[2] * ne[3]);
        const uint64_t b = g.gguf_get_tensor_size(l.ctx, i);
        row.insert(row.end(), {std::to_string(n), std::to_string(b),
                               std::to_string(g.gguf_get_tensor_offset(l.ctx, i))});
        EXPECT_TRUE(has_line(row)) << "no row for tensor " << row[1];
        elements += n;
        bytes += b;
    }
    EXPECT_TRUE(has_line({"total", std::to_string(g.gguf_get_n_tensors(l.ctx)),
                          std::to_string(elements), std::to_string(bytes),
                          fmt::format("{:.2f}", 8.0 * double(bytes) / double(elements))}))
        << out;
    // Not a terminal: no colour codes.
    EXPECT_EQ(out.find('\033'), std::string::npos);
}

// Arrays: element type and length, the first items, then how many more; long strings cut.
TEST(DumpOptions, HumanOutputShortensArraysAndStrings) {
    LlamaGguf l(kSample);
    ASSERT_NE(l.ctx, nullptr);
    const reference::Ggml &g = *l.g;
    const RunResult r = run_gguftool({"dump", "--no-tensors", kSample});
    ASSERT_EQ(r.status, 0) << r.err;
    bool saw_array = false, saw_long_string = false;
    for (int64_t i = 0; i < g.gguf_get_n_kv(l.ctx); ++i) {
        const std::string key = g.gguf_get_key(l.ctx, i);
        const size_t at = r.out.find("\n  " + key + " ");
        ASSERT_NE(at, std::string::npos) << key;
        const std::string line = r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
        if (g.gguf_get_kv_type(l.ctx, i) == 9 && g.gguf_get_arr_type(l.ctx, i) == 8) {
            const size_t n = g.gguf_get_arr_n(l.ctx, i);
            ASSERT_GT(n, 8u);
            EXPECT_NE(line.find("string[" + std::to_string(n) + "]"), std::string::npos) << line;
            EXPECT_NE(line.find(fmt::format("[\"{}\", \"{}\", ", g.gguf_get_arr_str(l.ctx, i, 0),
                                            g.gguf_get_arr_str(l.ctx, i, 1))),
                      std::string::npos)
                << line;
            EXPECT_NE(line.find(fmt::format("... {} more]", n - 8)), std::string::npos) << line;
            saw_array = true;
        }
        if (g.gguf_get_kv_type(l.ctx, i) == 8) {
            const std::string v = g.gguf_get_val_str(l.ctx, i);
            if (v.size() > 72) {
                EXPECT_NE(line.find(fmt::format("...\" ({} bytes)", v.size())), std::string::npos)
                    << line;
                const size_t open = line.find('"'), close = line.rfind("...\"");
                ASSERT_NE(close, std::string::npos) << line;
                EXPECT_LE(close - open, 4u * 72u) << "72 bytes, escaped at most 4 to 1: " << line;
                saw_long_string = true;
            }
        }
    }
    EXPECT_TRUE(saw_array && saw_long_string) << "the sample should have both";
}

TEST(DumpOptions, UsageErrorsExitWith2) {
    const std::vector<std::vector<std::string>> cases = {
        {},
        {"dump"},
        {"frobnicate", kSample},
        {"dump", "--bogus", kSample},
        {"dump", "--values", "many", kSample},
        {"dump", "--values", "-3", kSample},
        {"dump", "--no-tensors", "--stats", kSample},
        {"dump", "--no-tensors", "--tensor", "x", kSample},
        {"dump", kSample, kSample},
    };
    for (const auto &args : cases) {
        const RunResult r = run_gguftool(args);
        std::string line;
        for (const std::string &a : args) line += a + " ";
        EXPECT_EQ(r.status, 2) << "gguftool " << line << "\n" << r.err;
        EXPECT_FALSE(r.err.empty()) << "gguftool " << line << ": no message";
    }
    EXPECT_EQ(run_gguftool({"--help"}).status, 0);
    EXPECT_EQ(run_gguftool({"dump", "--help"}).status, 0);
}

// --values takes a count of at least 1, and says so.
TEST(DumpOptions, ValuesCountErrorsSayWhatIsWanted) {
    for (const std::string bad : {"FILE", "-3", "2.5", "", "99999999999999999999999"}) {
        const RunResult r = run_gguftool({"dump", "--values", bad, kSample});
        EXPECT_EQ(r.status, 2) << bad;
        EXPECT_NE(r.err.find("--values: '" + bad + "' is not a count (a whole number of values"),
                  std::string::npos)
            << r.err;
    }
    const RunResult zero = run_gguftool({"dump", "--values", "0", kSample});
    EXPECT_EQ(zero.status, 2);
    EXPECT_NE(zero.err.find("--values: takes a count of at least 1"), std::string::npos)
        << zero.err;
    EXPECT_TRUE(zero.out.empty()) << "nothing is dumped on a usage error";
}

// The lines of `out` from the one starting with `heading` to the next empty line.
std::vector<std::string> section(const std::string &out, const std::string &heading) {
    std::vector<std::string> lines;
    std::istringstream in(out.substr(out.find("\n" + heading + "\n") + 1));
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line) && !line.empty()) lines.push_back(line);
    return lines;
}

// The tensor table's shape column says its order, and stays aligned.
TEST(DumpOptions, TensorTableShapeColumnSaysGgufOrder) {
    const RunResult r = run_gguftool({"dump", "--no-metadata", kSample});
    ASSERT_EQ(r.status, 0) << r.err;
    const std::vector<std::string> table = section(r.out, "tensors (21)");
    ASSERT_EQ(table.size(), 22u) << r.out;
    const size_t shape = table[0].find("shape (GGUF order)");
    ASSERT_NE(shape, std::string::npos) << table[0];
    // Right-aligned numbers end where their header ends; every shape starts under its header.
    const size_t elements_end = table[0].find("elements") + 8;
    const json doc = dump_json({"--no-metadata", kSample});
    for (size_t i = 1; i < table.size(); ++i) {
        const json &t = doc["tensors"][i - 1];
        std::string dims;  // GGUF order: ne0 first, as "dims" in the JSON
        for (const json &d : t["dims"]) dims += (dims.empty() ? "" : " x ") + d.dump();
        EXPECT_EQ(table[i].substr(shape, dims.size() + 1), dims + " ") << table[i];
        const std::string elements = t["elements"].dump();
        EXPECT_EQ(table[i].substr(elements_end - elements.size(), elements.size() + 1),
                  elements + " ")
            << table[i];
    }
}

// Values rows: one width for every value of the section, and a power of two per row, so that
// --values 8 fills whole rows; the numbers are the JSON ones.
TEST(DumpOptions, ValuesRowsAreEvenAndAligned) {
    const std::vector<std::string> args = {"--no-metadata",           "--values", "8", "--tensor",
                                           "blk.0.attn_[qkv].weight", kSample};
    std::vector<std::string> text_args = {"dump"};
    text_args.insert(text_args.end(), args.begin(), args.end());
    const RunResult r = run_gguftool(text_args);
    ASSERT_EQ(r.status, 0) << r.err;
    const json doc = dump_json(args);
    const std::vector<std::string> lines = section(r.out, "values");
    size_t row_length = 0, per_row = 0, tensor = 0;
    std::vector<std::string> words;
    for (const std::string &line : lines) {
        if (!line.starts_with("    ")) {  // a tensor's heading
            ASSERT_NE(line.find(doc["tensors"][tensor++]["name"].get<std::string>()),
                      std::string::npos)
                << line;
            continue;
        }
        std::istringstream ws(line);
        const std::vector<std::string> row{std::istream_iterator<std::string>(ws), {}};
        if (row_length == 0) row_length = line.size(), per_row = row.size();
        EXPECT_EQ(line.size(), row_length) << "ragged row: " << line;
        EXPECT_EQ(row.size(), per_row) << line;
        for (const std::string &w : row) words.push_back(w);
    }
    EXPECT_EQ(tensor, 3u);
    ASSERT_GT(per_row, 0u);
    EXPECT_EQ(per_row & (per_row - 1), 0u) << per_row << " per row is not a power of two";
    EXPECT_EQ(8 % per_row, 0u);
    ASSERT_EQ(words.size(), 24u) << r.out;
    for (size_t i = 0; i < words.size(); ++i)
        EXPECT_EQ(std::stod(words[i]), doc["tensors"][i / 8]["values"][i % 8].get<double>()) << i;
}

// A count and its noun agree: "1 key-value pair", "2 key-value pairs".
TEST(DumpOptions, CountsAndNounsAgree) {
    TempDir dir;
    for (const int n : {1, 2}) {
        const std::string path = dir.file(fmt::format("kv{}.gguf", n));
        gguf::Writer w(3, gguf::ByteOrder::little);
        for (int i = 0; i < n; ++i) w.add(fmt::format("k{}", i), gguf::MetaValue::u32(7));
        w.write(path);
        const RunResult r = run_gguftool({"dump", path});
        ASSERT_EQ(r.status, 0) << r.err;
        const std::string noun = n == 1 ? "key-value pair\n" : "key-value pairs\n";
        EXPECT_NE(r.out.find(fmt::format("metadata     {} {}", n, noun)), std::string::npos)
            << r.out;
        EXPECT_NE(r.out.find(fmt::format("metadata ({} {}", n, noun.substr(0, noun.size() - 1))),
                  std::string::npos)
            << r.out;
    }
}

// Invalid files: exit 1, and stderr names the file (and the byte offset, where there is one).
TEST(DumpOptions, InvalidFilesExitWith1) {
    TempDir dir;
    const std::vector<uint8_t> sample = read_file(kSample);
    const uint64_t data_offset =
        dump_json({"--no-metadata", "--no-tensors", kSample})["data_offset"];
    for (const uint64_t cut : {uint64_t(0), uint64_t(3), uint64_t(20), uint64_t(500),
                               data_offset - 1, data_offset + 1000, uint64_t(sample.size() - 1)}) {
        const std::string path = dir.file(fmt::format("cut-{}.gguf", cut));
        write_file(path, std::vector<uint8_t>(sample.begin(), sample.begin() + int64_t(cut)));
        for (const bool json_out : {false, true}) {
            std::vector<std::string> args = {"dump", path};
            if (json_out) args.push_back("--json");
            const RunResult r = run_gguftool(args);
            EXPECT_EQ(r.status, 1) << path << ": " << r.err;
            EXPECT_EQ(r.err.rfind("gguftool: " + path + ": ", 0), 0u) << r.err;
            if (cut > 0) {
                EXPECT_NE(r.err.find("offset "), std::string::npos) << r.err;
            }
            EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
        }
        // llama.cpp (no_alloc) does not look at the data section, so only header cuts compare.
        if (cut < data_offset) {
            EXPECT_TRUE(llama_rejects(path)) << "llama.cpp accepts " << path;
        }
    }
    const std::string missing = dir.file("does-not-exist.gguf");
    const RunResult r = run_gguftool({"dump", missing});
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find(missing), std::string::npos) << r.err;

    const std::string text = dir.file("text.gguf");
    write_file(text, std::vector<uint8_t>(100, 'x'));
    const RunResult t = run_gguftool({"dump", text});
    EXPECT_EQ(t.status, 1);
    EXPECT_NE(t.err.find(text), std::string::npos) << t.err;
}

}  // namespace
}  // namespace gguftool::test
