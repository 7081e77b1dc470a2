// gguftool split and merge: shards as llama.cpp's gguf-split writes them (compared byte for byte
// with a set made by llama.cpp's own gguf functions, called the way gguf-split calls them), read
// by llama.cpp's reader, our reader and `verify`; merge gives back the original bytes; bad input,
// a file size limit and SIGTERM leave nothing behind.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "cli_support.hpp"
#include "gguftool/gguf_model_writer.hpp"
#include "gguftool/gguf_split.hpp"
#include "gguftool/gguf_writer.hpp"
#include "llama_content.hpp"

namespace gguftool {
namespace {

namespace fs = std::filesystem;
using gguf::MetaValue;
using test::run_gguftool;
using testkit::kSample;

std::string shard(const std::string &prefix, int no, int count) {
    return fmt::format("{}-{:05}-of-{:05}.gguf", prefix, no + 1, count);
}

// gguf-split's split, done by llama.cpp's own library functions in the order gguf-split calls
// them (tools/gguf-split/gguf-split.cpp, split_strategy): every kv of the input into the first
// shard (gguf_set_kv), then split.no, split.count (a placeholder), split.tensors.count in every
// shard, the tensors, and split.count set again once the count is known; written with
// gguf_write_to_file. `per_shard`: --split-max-tensors; `empty_first`: --no-tensor-first-split.
void llama_split(const std::string &input, const std::string &prefix, int per_shard,
                 bool empty_first = false) {
    const reference::Ggml &g = *testkit::ggml();
    void *meta = nullptr;
    reference::gguf_context *in = g.gguf_init_from_file(input.c_str(), {false, &meta});
    ASSERT_NE(in, nullptr);
    const int n = int(g.gguf_get_n_tensors(in));
    std::vector<reference::gguf_context *> outs;
    const auto new_shard = [&] {
        reference::gguf_context *ctx = g.gguf_init_empty();
        if (outs.empty()) g.gguf_set_kv(ctx, in);
        g.gguf_set_val_u16(ctx, "split.no", uint16_t(outs.size()));
        g.gguf_set_val_u16(ctx, "split.count", 0);
        g.gguf_set_val_i32(ctx, "split.tensors.count", n);
        outs.push_back(ctx);
    };
    new_shard();
    if (empty_first) new_shard();
    for (int i = 0; i < n; ++i) {
        if (i > 0 && i % per_shard == 0) new_shard();
        g.gguf_add_tensor(outs.back(), g.ggml_get_tensor(meta, g.gguf_get_tensor_name(in, i)));
    }
    for (size_t i = 0; i < outs.size(); ++i) {
        g.gguf_set_val_u16(outs[i], "split.count", uint16_t(outs.size()));
        EXPECT_TRUE(
            g.gguf_write_to_file(outs[i], shard(prefix, int(i), int(outs.size())).c_str(), false));
        g.gguf_free(outs[i]);
    }
    g.gguf_free(in);
    g.ggml_free(meta);
}

// A model written by llama.cpp's writer: 6 tensors, every metadata type.
std::string llama_model(const testkit::TempDir &dir) {
    const std::string path = dir.file("llama.gguf");
    testkit::write_content_with_llama(*testkit::ggml(), path, testkit::content_tensors());
    return path;
}

// Our shards are what gguf-split would write, byte for byte.
TEST(Split, ShardsAreWhatGgufSplitWrites) {
    ASSERT_NE(testkit::ggml(), nullptr) << "llama.cpp's libggml-base.so could not be loaded";
    for (const std::string &input : {kSample, std::string()}) {
        testkit::TempDir dir;
        const std::string in = input.empty() ? llama_model(dir) : input;
        const int n = int(gguf::File::open(in)->tensors().size());
        for (int per : {1, 4, 5, 100}) {
            SCOPED_TRACE(fmt::format("{}, --max-tensors {}", in, per));
            const int count = (n + per - 1) / per;
            llama_split(in, dir.file("theirs"), per);
            const test::RunResult r =
                run_gguftool({"split", in, dir.file("ours"), "--max-tensors", std::to_string(per)});
            ASSERT_EQ(r.status, 0) << r.err;
            for (int i = 0; i < count; ++i) {
                EXPECT_EQ(testkit::read_file(shard(dir.file("ours"), i, count)),
                          testkit::read_file(shard(dir.file("theirs"), i, count)))
                    << "shard " << i + 1;
                fs::remove(shard(dir.file("ours"), i, count));
                fs::remove(shard(dir.file("theirs"), i, count));
            }
        }
    }
}

// llama.cpp reads every shard field by field as we do, with the split keys of gguf-split's types;
// `verify` passes on the set; merge gives back the original file.
TEST(SplitMerge, RoundTripReadByLlamaAndVerified) {
    ASSERT_NE(testkit::ggml(), nullptr) << "llama.cpp's libggml-base.so could not be loaded";
    testkit::TempDir dir;
    const std::vector<uint8_t> original = testkit::read_file(kSample);
    for (const std::vector<std::string> &limit : {std::vector<std::string>{"--max-tensors", "1"},
                                                  {"--max-tensors", "8"},
                                                  {"--max-tensors", "21"},
                                                  {"--max-size", "300K"},
                                                  {"--max-size", "1"}}) {
        SCOPED_TRACE(limit[0] + " " + limit[1]);
        const std::string prefix = dir.file("s");
        std::vector<std::string> args = {"split", kSample, prefix};
        args.insert(args.end(), limit.begin(), limit.end());
        const test::RunResult r = run_gguftool(args);
        ASSERT_EQ(r.status, 0) << r.err;
        std::string first;
        for (const auto &name : testkit::dir_entries(dir.path()))
            if (name.starts_with("s-00001-of-")) first = dir.file(name);
        ASSERT_FALSE(first.empty()) << r.out;
        const gguf::Model model = gguf::Model::open(first);
        const size_t count = model.shards().size();
        uint64_t tensors = 0;
        for (size_t i = 0; i < count; ++i) {
            const gguf::File &f = *model.shards()[i];
            EXPECT_EQ(f.path(), shard(prefix, int(i), int(count)));
            testkit::expect_same_as_llama(f.path(), f);
            EXPECT_EQ(f.find("split.no")->value.type(), gguf::ValueType::uint16);
            EXPECT_EQ(f.find("split.no")->value.as_uint(), i);
            EXPECT_EQ(f.find("split.count")->value.type(), gguf::ValueType::uint16);
            EXPECT_EQ(f.find("split.count")->value.as_uint(), count);
            EXPECT_EQ(f.find("split.tensors.count")->value.type(), gguf::ValueType::int32);
            EXPECT_EQ(f.find("split.tensors.count")->value.as_int(), 21);
            EXPECT_EQ(f.metadata().size(), i == 0 ? 24u + 3 : 3u);  // metadata in the first only
            tensors += f.tensors().size();
            if (limit[1] == "300K") {
                EXPECT_LE(f.file_size(), 300000u);
            }
            if (limit[1] == "1") {
                EXPECT_EQ(f.tensors().size(), 1u);  // each its own shard, over the limit
            }
        }
        EXPECT_EQ(tensors, 21u);
        const test::RunResult v = testkit::run(
            {std::string(GGUFTOOL_BINARY_DIR) + "/gguftool-onnx", "verify", model.first().path()});
        EXPECT_EQ(v.status, 0) << v.out << v.err;

        const test::RunResult m = run_gguftool({"merge", model.first().path(), dir.file("m.gguf")});
        ASSERT_EQ(m.status, 0) << m.err;
        EXPECT_TRUE(testkit::read_file(dir.file("m.gguf")) == original);
        for (const auto &name : testkit::dir_entries(dir.path())) fs::remove(dir.file(name));
    }
}

// A set that gguf-split wrote (made with llama.cpp's functions as above, with and without a first
// shard holding only the metadata) merges into llama.cpp's original file, byte for byte.
TEST(Merge, GgufSplitSetGivesBackTheOriginal) {
    ASSERT_NE(testkit::ggml(), nullptr) << "llama.cpp's libggml-base.so could not be loaded";
    for (bool empty_first : {false, true}) {
        SCOPED_TRACE(empty_first ? "--no-tensor-first-split" : "tensors in every shard");
        testkit::TempDir dir;
        const std::string in = llama_model(dir);
        llama_split(in, dir.file("theirs"), 4, empty_first);
        const int count = empty_first ? 3 : 2;
        const test::RunResult r =
            run_gguftool({"merge", shard(dir.file("theirs"), 0, count), dir.file("m.gguf")});
        ASSERT_EQ(r.status, 0) << r.err;
        EXPECT_TRUE(testkit::read_file(dir.file("m.gguf")) == testkit::read_file(in));
    }
}

// --max-size bounds the whole file, inclusively: a shard of exactly the limit is kept, one byte
// less moves its last tensor on. The planned sizes are the written ones.
TEST(Split, MaxSizeBoundsTheWholeFile) {
    testkit::TempDir dir;
    const gguf::Model model = gguf::Model::open(kSample);
    const auto at_300k = gguf::plan_split(model, dir.file("s"), {0, 300000});
    const uint64_t first = at_300k[0].size;
    const auto exact = gguf::plan_split(model, dir.file("s"), {0, first});
    EXPECT_EQ(exact[0].size, first);
    EXPECT_EQ(exact[0].data.size(), at_300k[0].data.size());
    const auto less = gguf::plan_split(model, dir.file("s"), {0, first - 1});
    EXPECT_EQ(less[0].data.size(), at_300k[0].data.size() - 1);
    EXPECT_LT(less[0].size, first);
    for (const auto &p : at_300k) EXPECT_FALSE(p.over_limit);
    const auto tiny = gguf::plan_split(model, dir.file("s"), {0, 1000});
    EXPECT_EQ(tiny.size(), 21u);
    for (const auto &p : tiny) EXPECT_TRUE(p.over_limit);

    std::vector<gguf::OutputPlan> plans = at_300k;
    gguf::write_outputs(plans, true);
    for (const auto &p : at_300k) EXPECT_EQ(fs::file_size(p.path), p.size) << p.path;
}

// A split model split again (from any of its shards) is the same model: merged, the original.
TEST(Split, ResplitsASplitModel) {
    testkit::TempDir dir;
    ASSERT_EQ(run_gguftool({"split", kSample, dir.file("a"), "--max-tensors", "8"}).status, 0);
    const test::RunResult r = run_gguftool(
        {"split", dir.file("a-00003-of-00003.gguf"), dir.file("b"), "--max-size", "200Ki"});
    ASSERT_EQ(r.status, 0) << r.err;
    std::vector<std::string> shards;
    for (const auto &name : testkit::dir_entries(dir.path()))
        if (name.starts_with("b-")) shards.push_back(dir.file(name));
    ASSERT_GE(shards.size(), 5u);  // 930 KB in shards of at most 200 KiB
    const gguf::Model b = gguf::Model::open(shards.front());
    EXPECT_EQ(b.first().find("split.count")->value.as_uint(), shards.size());
    EXPECT_EQ(b.first().metadata().size(), 27u);  // the split keys replaced, not repeated
    ASSERT_EQ(run_gguftool({"merge", shards.back(), dir.file("m.gguf")}).status, 0);
    EXPECT_TRUE(testkit::read_file(dir.file("m.gguf")) == testkit::read_file(kSample));
}

// The plan printed, nothing written; the merge's dry run checks the set the same way.
TEST(SplitMerge, DryRunWritesNothing) {
    testkit::TempDir dir;
    const test::RunResult r =
        run_gguftool({"split", kSample, dir.file("s"), "--max-size", "300K", "--dry-run"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(testkit::dir_entries(dir.path()).empty());
    EXPECT_NE(r.out.find(dir.file("s") + "-00004-of-00004.gguf"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("dry run: nothing written"), std::string::npos) << r.out;

    ASSERT_EQ(run_gguftool({"split", kSample, dir.file("s"), "--max-tensors", "10"}).status, 0);
    const std::vector<std::string> shards = testkit::dir_entries(dir.path());
    const test::RunResult m =
        run_gguftool({"merge", dir.file("s-00001-of-00003.gguf"), dir.file("m.gguf"), "--dry-run"});
    ASSERT_EQ(m.status, 0) << m.err;
    EXPECT_NE(m.out.find("3 shards, 21 tensors, 24 metadata keys"), std::string::npos) << m.out;
    EXPECT_EQ(testkit::dir_entries(dir.path()), shards);
    fs::remove(dir.file("s-00002-of-00003.gguf"));
    const test::RunResult missing =
        run_gguftool({"merge", dir.file("s-00001-of-00003.gguf"), dir.file("m.gguf"), "--dry-run"});
    EXPECT_EQ(missing.status, 1);
    EXPECT_NE(missing.err.find("missing shard 2 of 3"), std::string::npos) << missing.err;
}

void expect_failure(const std::vector<std::string> &args, int status, const std::string &text) {
    const test::RunResult r = run_gguftool(args);
    EXPECT_EQ(r.status, status) << fmt::format("{}", fmt::join(args, " ")) << "\n" << r.err;
    EXPECT_NE(r.err.find(text), std::string::npos)
        << fmt::format("{}", fmt::join(args, " ")) << "\nstderr: " << r.err
        << "\nexpected: " << text;
}

TEST(Split, UsageErrors) {
    testkit::TempDir dir;
    const std::string p = dir.file("s");
    expect_failure({"split", kSample, p}, 2, "Exactly 1 option from [--max-tensors,--max-size]");
    expect_failure({"split", kSample, p, "--max-tensors", "2", "--max-size", "1M"}, 2, "excludes");
    expect_failure({"split", kSample, p, "--max-tensors", "0"}, 2, "--max-tensors");
    for (const char *bad : {"0", "1.5G", "2GB", "M", "-1", "99999999999999999999", "20000000T"})
        expect_failure({"split", kSample, p, "--max-size", bad}, 2, "is not a size");
    EXPECT_TRUE(testkit::dir_entries(dir.path()).empty());
}

TEST(Split, InputErrors) {
    testkit::TempDir dir;
    gguf::Writer().add("general.name", MetaValue::str("empty")).write(dir.file("empty.gguf"));
    expect_failure({"split", dir.file("empty.gguf"), dir.file("s"), "--max-tensors", "1"}, 1,
                   dir.file("empty.gguf") + ": no tensors: nothing to split");
    // More shards than split.count can count.
    gguf::Writer many;
    for (int i = 0; i < 65536; ++i) many.add_tensor(fmt::format("t{}", i), GgmlType::i8, {1}, {1});
    many.write(dir.file("many.gguf"));
    expect_failure({"split", dir.file("many.gguf"), dir.file("s"), "--max-tensors", "1"}, 1,
                   "more than 65535 shards (split.count is a uint16)");
    // Splitting onto the input's own name.
    ASSERT_EQ(run_gguftool({"split", kSample, dir.file("one"), "--max-tensors", "100"}).status, 0);
    const std::string one = dir.file("one-00001-of-00001.gguf");
    const std::vector<uint8_t> before = testkit::read_file(one);
    expect_failure({"split", one, dir.file("one"), "--max-tensors", "100"}, 1,
                   "refusing to write over the input file");
    EXPECT_EQ(testkit::read_file(one), before);
    expect_failure({"split", dir.file("nope.gguf"), dir.file("s"), "--max-tensors", "1"}, 1,
                   "cannot open");
    EXPECT_EQ(testkit::dir_entries(dir.path()),
              (std::vector<std::string>{"empty.gguf", "many.gguf", "one-00001-of-00001.gguf"}));
}

TEST(Merge, InputErrors) {
    testkit::TempDir dir;
    ASSERT_EQ(run_gguftool({"split", kSample, dir.file("a"), "--max-tensors", "10"}).status, 0);
    const std::string first = dir.file("a-00001-of-00003.gguf");

    // OUT exists: refused, left as it is.
    testkit::write_file(dir.file("out.gguf"), {1, 2, 3});
    expect_failure({"merge", first, dir.file("out.gguf")}, 1,
                   dir.file("out.gguf") + ": already exists; not replaced");
    expect_failure({"merge", first, dir.file("out.gguf"), "--dry-run"}, 1, "already exists");
    EXPECT_EQ(testkit::read_file(dir.file("out.gguf")), (std::vector<uint8_t>{1, 2, 3}));
    fs::remove(dir.file("out.gguf"));

    // Not split.
    expect_failure({"merge", kSample, dir.file("m.gguf")}, 1,
                   "not a shard of a split model (it has no split.count)");

    // A shard of another model: another split of a model with other tensors, same shard count.
    testkit::TempDir other;
    gguf::Writer w;
    for (int i = 0; i < 3; ++i)
        w.add_tensor(fmt::format("x{}", i), GgmlType::f32, {4}, testkit::filler(16, i));
    w.write(other.file("x.gguf"));
    ASSERT_EQ(
        run_gguftool({"split", other.file("x.gguf"), other.file("a"), "--max-tensors", "1"}).status,
        0);
    const std::string second = dir.file("a-00002-of-00003.gguf");
    fs::rename(second, dir.file("saved"));
    fs::copy_file(other.file("a-00002-of-00003.gguf"), second);
    expect_failure({"merge", first, dir.file("m.gguf")}, 1,
                   // split.tensors.count follows the 24-byte header and split.no (8 + 8 + 4 + 2)
                   second +
                       ": offset 46: shard belongs to another model: split.tensors.count is "
                       "3, expected 21");
    // The same shard of ours in big-endian: another model too.
    fs::remove(second);
    {
        const auto f = gguf::File::open(dir.file("saved"));
        gguf::Header h;
        h.order = gguf::ByteOrder::big;
        for (const auto &e : f->metadata()) h.metadata.push_back(gguf::MetadataItem::of(e));
        std::vector<gguf::TensorData> data;
        for (const auto &t : f->tensors()) {
            h.tensors.push_back({std::string(t.name),
                                 uint32_t(t.type),
                                 {t.ne.begin(), t.ne.begin() + t.n_dims},
                                 0});
            data.push_back(gguf::TensorData::copy(*f, t));
        }
        OutputFile out(second);
        gguf::write_model(out, h, data);
        out.commit();
        out.keep();
    }
    expect_failure({"merge", first, dir.file("m.gguf")}, 1,
                   "shard belongs to another model: GGUF version 3, big-endian; " + first +
                       " is version 3, little-endian");
    // Missing.
    fs::remove(second);
    expect_failure({"merge", first, dir.file("m.gguf")}, 1, second + ": missing shard 2 of 3");
    EXPECT_FALSE(fs::exists(dir.file("m.gguf")));
}

// A model of `mib` MiB in 16 f32 tensors, streamed (write_model with producers).
void big_model(const std::string &path, int mib) {
    gguf::Header h;
    h.metadata.push_back({"general.architecture", MetaValue::str("test")});
    const uint64_t bytes = uint64_t(mib) << 16;  // each of the 16 tensors
    const std::vector<uint8_t> chunk = testkit::filler(1 << 16, 3);
    std::vector<gguf::TensorData> data;
    for (int i = 0; i < 16; ++i) {
        h.tensors.push_back({fmt::format("blk.{}.weight", i), 0, {bytes / 4}, 0});
        data.push_back(gguf::TensorData::produced(bytes, [&chunk, bytes](gguf::ByteSink &s) {
            for (uint64_t done = 0; done < bytes; done += chunk.size())
                s.write(chunk.data(), std::min<uint64_t>(chunk.size(), bytes - done));
        }));
    }
    OutputFile out(path);
    gguf::write_model(out, h, data);
    out.commit();
    out.keep();
}

// Under RLIMIT_FSIZE the write fails, reported, and no shard or temporary file is left; an
// earlier shard of the same name is still there.
TEST(SplitMerge, FileSizeLimitLeavesNothing) {
    testkit::TempDir dir;
    big_model(dir.file("m.gguf"), 4);
    testkit::write_file(dir.file("s-00001-of-00004.gguf"), {7});
    const test::RunResult s = test::finish(test::spawn_gguftool(
        {"split", dir.file("m.gguf"), dir.file("s"), "--max-tensors", "4"}, 512 << 10));
    EXPECT_EQ(s.status, 1) << s.err;
    EXPECT_NE(s.err.find("File too large"), std::string::npos) << s.err;
    EXPECT_EQ(testkit::dir_entries(dir.path()),
              (std::vector<std::string>{"m.gguf", "s-00001-of-00004.gguf"}));
    EXPECT_EQ(testkit::read_file(dir.file("s-00001-of-00004.gguf")), std::vector<uint8_t>{7});
    fs::remove(dir.file("s-00001-of-00004.gguf"));

    ASSERT_EQ(
        run_gguftool({"split", dir.file("m.gguf"), dir.file("s"), "--max-tensors", "4"}).status, 0);
    fs::remove(dir.file("m.gguf"));
    const test::RunResult m = test::finish(test::spawn_gguftool(
        {"merge", dir.file("s-00001-of-00004.gguf"), dir.file("m.gguf")}, 512 << 10));
    EXPECT_EQ(m.status, 1) << m.err;
    EXPECT_NE(m.err.find(dir.file("m.gguf") + ": offset "), std::string::npos) << m.err;
    EXPECT_NE(m.err.find("File too large"), std::string::npos) << m.err;
    EXPECT_FALSE(fs::exists(dir.file("m.gguf")));
    EXPECT_EQ(testkit::dir_entries(dir.path()).size(), 4u);
}

// SIGTERM while the outputs are being written (`temporaries` temporary files exist: for a split,
// shards written and closed but not yet renamed, and one being written): the process ends by the
// signal and leaves only what was there before.
void expect_interrupt_leaves(const std::vector<std::string> &args, const std::string &dir,
                             const std::vector<std::string> &before, size_t temporaries) {
    const test::Spawned child = test::spawn_gguftool(args);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    bool writing = false;
    while (!writing && std::chrono::steady_clock::now() < deadline) {
        size_t seen = 0;
        for (const auto &name : testkit::dir_entries(dir))
            if (name.find(".tmp-") != std::string::npos) ++seen;
        writing = seen >= temporaries;
        if (!writing) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    ASSERT_TRUE(writing) << "no temporary output seen";
    ::kill(child.pid, SIGTERM);
    const test::RunResult r = test::finish(child);
    EXPECT_EQ(r.signal, SIGTERM) << "exit " << r.status << ": " << r.err;
    EXPECT_EQ(testkit::dir_entries(dir), before);
}

TEST(SplitMerge, SigtermLeavesNothing) {
    testkit::TempDir dir;
    big_model(dir.file("m.gguf"), 256);
    expect_interrupt_leaves({"split", dir.file("m.gguf"), dir.file("s"), "--max-tensors", "2"},
                            dir.path(), {"m.gguf"}, 3);
    ASSERT_EQ(
        run_gguftool({"split", dir.file("m.gguf"), dir.file("s"), "--max-tensors", "8"}).status, 0);
    fs::remove(dir.file("m.gguf"));
    expect_interrupt_leaves({"merge", dir.file("s-00001-of-00002.gguf"), dir.file("m.gguf")},
                            dir.path(), {"s-00001-of-00002.gguf", "s-00002-of-00002.gguf"}, 1);
}

}  // namespace
}  // namespace gguftool
