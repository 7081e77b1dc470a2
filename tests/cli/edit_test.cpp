// gguftool edit: every value type set and read back by llama.cpp's reader and ours, key order,
// deletion, realignment, --in-place, --dry-run, the errors, and what a full disk or an interrupt
// leaves behind.
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <bit>
#include <cstring>
#include <map>

#include "cli_support.hpp"
#include "gguftool/gguf_header.hpp"
#include "gguftool/gguf_writer.hpp"
#include "llama_content.hpp"

namespace gguftool {
namespace {

using gguf::ValueType;
using test::run_gguftool;

// A file written by llama.cpp (every scalar type, arrays, tensors of six types): the input.
std::string llama_input(const testkit::TempDir &dir) {
    const std::string path = dir.file("in.gguf");
    testkit::write_content_with_llama(*testkit::ggml(), path, testkit::content_tensors());
    return path;
}

#define REQUIRE_LLAMA() \
    if (!testkit::ggml()) GTEST_SKIP() << "llama.cpp's libggml-base.so is missing"

std::vector<std::string> keys_of(const gguf::File &f) {
    std::vector<std::string> keys;
    for (const auto &e : f.metadata()) keys.emplace_back(e.key);
    return keys;
}

// A scalar's bits as llama.cpp's typed getter for its type returns it.
uint64_t llama_bits(const reference::Ggml &g, const reference::gguf_context *ctx, int64_t id,
                    ValueType t) {
    switch (t) {
        case ValueType::uint8:
            return g.gguf_get_val_u8(ctx, id);
        case ValueType::int8:
            return uint8_t(g.gguf_get_val_i8(ctx, id));
        case ValueType::uint16:
            return g.gguf_get_val_u16(ctx, id);
        case ValueType::int16:
            return uint16_t(g.gguf_get_val_i16(ctx, id));
        case ValueType::uint32:
            return g.gguf_get_val_u32(ctx, id);
        case ValueType::int32:
            return uint32_t(g.gguf_get_val_i32(ctx, id));
        case ValueType::float32:
            return std::bit_cast<uint32_t>(g.gguf_get_val_f32(ctx, id));
        case ValueType::bool_:
            return g.gguf_get_val_bool(ctx, id) ? 1 : 0;
        case ValueType::uint64:
            return g.gguf_get_val_u64(ctx, id);
        case ValueType::int64:
            return uint64_t(g.gguf_get_val_i64(ctx, id));
        case ValueType::float64:
            return std::bit_cast<uint64_t>(g.gguf_get_val_f64(ctx, id));
        default:
            ADD_FAILURE() << "not a scalar type";
            return 0;
    }
}

struct ScalarCase {
    std::string arg;  // --set
    std::string key;
    ValueType type;
    uint64_t bits;  // what both readers must report, written from the value by hand
};

const std::vector<ScalarCase> &scalar_cases() {
    static const std::vector<ScalarCase> cases = {
        {"v.u8=uint8:255", "v.u8", ValueType::uint8, 255},  // an existing key
        {"llama.context_length=uint64:18446744073709551615", "llama.context_length",
         ValueType::uint64, UINT64_MAX},  // an existing key given another type
        {"n.i8=int8:-128", "n.i8", ValueType::int8, 0x80},
        {"n.u16=uint16:65535", "n.u16", ValueType::uint16, 0xffff},
        {"n.i16=int16:-32768", "n.i16", ValueType::int16, 0x8000},
        {"n.u32=uint32:4294967295", "n.u32", ValueType::uint32, 0xffffffff},
        {"n.i32=int32:-2147483648", "n.i32", ValueType::int32, 0x80000000},
        {"n.f32=float32:0.1", "n.f32", ValueType::float32, 0x3dcccccd},
        {"n.bool=bool:false", "n.bool", ValueType::bool_, 0},
        {"n.i64=int64:-9223372036854775808", "n.i64", ValueType::int64, uint64_t(1) << 63},
        {"n.f64=float64:-2.5e-300", "n.f64", ValueType::float64,
         std::bit_cast<uint64_t>(-2.5e-300)},
    };
    return cases;
}

struct ArrayCase {
    std::string arg;  // --set-json
    std::string key;
    ValueType element;
    std::vector<uint8_t> bytes;  // the elements as llama.cpp's gguf_get_arr_data holds them (LE)
};

const std::vector<ArrayCase> &array_cases() {
    static const std::vector<ArrayCase> cases = {
        {"a.u8=uint8:[0, 255]", "a.u8", ValueType::uint8, {0, 255}},
        {"a.i8=int8:[-1, 127]", "a.i8", ValueType::int8, {0xff, 0x7f}},
        {"a.u16=uint16:[258]", "a.u16", ValueType::uint16, {2, 1}},
        {"a.i16=int16:[-2]", "a.i16", ValueType::int16, {0xfe, 0xff}},
        {"a.u32=uint32:[16909060]", "a.u32", ValueType::uint32, {4, 3, 2, 1}},
        {"a.i32=int32:[-1, 7]", "a.i32", ValueType::int32, {0xff, 0xff, 0xff, 0xff, 7, 0, 0, 0}},
        {"a.u64=uint64:[1]", "a.u64", ValueType::uint64, {1, 0, 0, 0, 0, 0, 0, 0}},
        {"a.i64=int64:[-1]", "a.i64", ValueType::int64, std::vector<uint8_t>(8, 0xff)},
        {"a.f32=float32:[1.5, -0.0]",
         "a.f32",
         ValueType::float32,
         {0, 0, 0xc0, 0x3f, 0, 0, 0, 0x80}},
        {"a.f64=float64:[2]", "a.f64", ValueType::float64, {0, 0, 0, 0, 0, 0, 0, 0x40}},
        {"a.bool=bool:[true, false, true]", "a.bool", ValueType::bool_, {1, 0, 1}},
        {"a.empty=float32:[]", "a.empty", ValueType::float32, {}},
    };
    return cases;
}

const std::vector<std::string> kStrings = {"<s>", "", "a \"quoted\" word", "é"};

TEST(Edit, EveryValueTypeReadBackByLlamaAndByUs) {
    REQUIRE_LLAMA();
    testkit::TempDir dir;
    const std::string in = llama_input(dir), out = dir.file("out.gguf");
    const std::string template_path = dir.file("chat.jinja");
    const std::string chat_template = "{% for m in messages %}{{ m['content'] }}\n{% endfor %}";
    testkit::write_file(template_path, chat_template);

    std::vector<std::string> args = {"edit", in, "-o", out};
    for (const ScalarCase &c : scalar_cases()) args.insert(args.end(), {"--set", c.arg});
    args.insert(args.end(), {"--set", "n.str=string:héllo=wörld: x"});
    for (const ArrayCase &c : array_cases()) args.insert(args.end(), {"--set-json", c.arg});
    args.insert(args.end(),
                {"--set-json", R"(a.str=string:["<s>", "", "a \"quoted\" word", "é"])"});
    args.insert(args.end(), {"--set-file", "tokenizer.chat_template=" + template_path});
    args.insert(args.end(), {"--delete", "v.i16"});
    const test::RunResult r = run_gguftool(args);
    ASSERT_EQ(r.status, 0) << r.err;

    const auto before = gguf::File::open(in);
    const auto after = gguf::File::open(out);
    // Existing keys keep their place (v.i16 gone), new ones follow in command-line order.
    std::vector<std::string> want = keys_of(*before);
    std::erase(want, "v.i16");
    for (const ScalarCase &c : scalar_cases())
        if (!before->find(c.key)) want.push_back(c.key);
    want.push_back("n.str");
    for (const ArrayCase &c : array_cases()) want.push_back(c.key);
    want.insert(want.end(), {"a.str", "tokenizer.chat_template"});
    EXPECT_EQ(keys_of(*after), want);

    testkit::LlamaGguf l(out);
    ASSERT_NE(l.ctx, nullptr) << "llama.cpp rejects the edited file";
    const reference::Ggml &g = *l.g;
    ASSERT_NE(g.gguf_get_val_bool, nullptr);
    for (const ScalarCase &c : scalar_cases()) {
        SCOPED_TRACE(c.key);
        const gguf::MetadataEntry *e = after->find(c.key);
        ASSERT_NE(e, nullptr);
        EXPECT_EQ(e->value.type(), c.type);
        EXPECT_EQ(gguf::MetaValue::from_value(e->value).bits(), c.bits);
        const int64_t id = g.gguf_find_key(l.ctx, c.key.c_str());
        ASSERT_GE(id, 0);
        ASSERT_EQ(g.gguf_get_kv_type(l.ctx, id), int(c.type));
        EXPECT_EQ(llama_bits(g, l.ctx, id, c.type), c.bits);
    }
    for (const ArrayCase &c : array_cases()) {
        SCOPED_TRACE(c.key);
        const int64_t id = g.gguf_find_key(l.ctx, c.key.c_str());
        ASSERT_GE(id, 0);
        ASSERT_EQ(g.gguf_get_kv_type(l.ctx, id), int(ValueType::array));
        ASSERT_EQ(g.gguf_get_arr_type(l.ctx, id), int(c.element));
        const size_t n = g.gguf_get_arr_n(l.ctx, id);
        const auto *data = static_cast<const uint8_t *>(g.gguf_get_arr_data(l.ctx, id));
        EXPECT_EQ(n * testkit::scalar_bytes(c.element), c.bytes.size());
        if (n) {
            EXPECT_EQ(std::vector<uint8_t>(data, data + c.bytes.size()), c.bytes);
        }
        const gguf::Value ours = after->find(c.key)->value;
        EXPECT_EQ(ours.array_type(), c.element);
        EXPECT_EQ(std::vector<uint8_t>(ours.data(), ours.data() + c.bytes.size()), c.bytes);
    }
    const int64_t strs = g.gguf_find_key(l.ctx, "a.str");
    ASSERT_EQ(g.gguf_get_arr_n(l.ctx, strs), kStrings.size());
    for (size_t i = 0; i < kStrings.size(); ++i) {
        EXPECT_EQ(g.gguf_get_arr_str(l.ctx, strs, i), kStrings[i]);
        EXPECT_EQ(after->find("a.str")->value.element(i).as_string(), kStrings[i]);
    }
    EXPECT_STREQ(g.gguf_get_val_str(l.ctx, g.gguf_find_key(l.ctx, "n.str")), "héllo=wörld: x");
    EXPECT_STREQ(g.gguf_get_val_str(l.ctx, g.gguf_find_key(l.ctx, "tokenizer.chat_template")),
                 chat_template.c_str());
    EXPECT_EQ(after->find("tokenizer.chat_template")->value.as_string(), chat_template);

    // Everything else as llama.cpp reads it, field by field; the tensors unchanged.
    testkit::expect_same_as_llama(out, *after);
    ASSERT_EQ(after->tensors().size(), before->tensors().size());
    for (size_t i = 0; i < before->tensors().size(); ++i) {
        const gguf::TensorInfo &a = before->tensors()[i], &b = after->tensors()[i];
        EXPECT_EQ(a.name, b.name);
        EXPECT_EQ(a.type, b.type);
        EXPECT_EQ(a.ne, b.ne);
        EXPECT_EQ(a.offset, b.offset);  // same alignment, same layout rule as ggml's
        EXPECT_TRUE(std::equal(a.data.begin(), a.data.end(), b.data.begin(), b.data.end()))
            << a.name;
    }
    // verify decodes the copied tensors and finds llama.cpp's values.
    const test::RunResult v = run_gguftool({"verify", out});
    EXPECT_EQ(v.status, 0) << v.out << v.err;
}

// GGUF allows arrays of arrays and our reader reads them; llama.cpp's reader does not (it rejects
// a file with one), so edit writes what is asked and the man page says so.
TEST(Edit, NestedArrays) {
    testkit::TempDir dir;
    const std::string out = dir.file("nested.gguf");
    const test::RunResult r = run_gguftool({"edit", testkit::kSample, "-o", out, "--set-json",
                                            R"(x.nested=int32:[[1, 2], [], [[3]]])", "--set-json",
                                            R"(x.words=string:[["a"], ["b", "c"]])"});
    ASSERT_EQ(r.status, 0) << r.err;
    const auto f = gguf::File::open(out);
    const gguf::Value v = f->find("x.nested")->value;
    ASSERT_EQ(v.array_type(), ValueType::array);
    ASSERT_EQ(v.array_size(), 3u);
    EXPECT_EQ(v.element(0).array_type(), ValueType::int32);
    EXPECT_EQ(v.element(0).element(1).as_int(), 2);
    EXPECT_EQ(v.element(1).array_size(), 0u);
    EXPECT_EQ(v.element(2).element(0).element(0).as_int(), 3);
    EXPECT_EQ(f->find("x.words")->value.element(1).element(1).as_string(), "c");
    if (testkit::ggml()) {
        EXPECT_TRUE(testkit::llama_rejects(out));
    }
}

TEST(Edit, ValuesThatDoNotFitTheirTypeAreUsageErrors) {
    testkit::TempDir dir;
    const std::string out = dir.file("out.gguf");
    const std::pair<std::vector<std::string>, std::string> cases[] = {
        {{"--set", "general.x=uint8:4096"},
         "--set: general.x: '4096' is out of range for uint8 (0 to 255)"},
        {{"--set", "general.x=int8:-129"}, "'-129' is out of range for int8 (-128 to 127)"},
        {{"--set", "general.x=uint32:-1"}, "'-1' is out of range for uint32"},
        {{"--set", "general.x=float32:1e39"}, "'1e39' is out of range for float32"},
        {{"--set", "general.x=uint16:abc"}, "'abc' is not a uint16"},
        {{"--set", "general.x=bool:1"}, "'1' is not a bool (true or false)"},
        {{"--set", "general.x=u8:1"}, "TYPE one of uint8"},
        {{"--set", "general.x"}, "expected KEY=TYPE:VALUE"},
        {{"--set-json", "general.x=uint8:[1, 256]"}, "element [1]: '256' is out of range"},
        {{"--set-json", "general.x=float32:[1, \"2\"]"}, "the string \"2\" is not a float32"},
        {{"--set-json", "general.x=int32:[1,"}, "invalid JSON"},
        {{"--set", "general.alignment=uint32:48"}, "must be a uint32 power of two"},
        {{"--set", "general.alignment=uint64:64"}, "must be a uint32 power of two"},
        {{"--set", "split.count=uint16:2"}, "split.* keys"},
        {{"--delete", "split.no"}, "split.* keys"},
        {{"--set", "a.b=uint8:1", "--delete", "a.b"}, "a.b is edited twice (--set and --delete)"},
    };
    for (const auto &[edits, message] : cases) {
        std::vector<std::string> args = {"edit", testkit::kSample, "-o", out};
        args.insert(args.end(), edits.begin(), edits.end());
        SCOPED_TRACE(fmt::format("{}", fmt::join(edits, " ")));
        const test::RunResult r = run_gguftool(args);
        EXPECT_EQ(r.status, 2) << r.err;
        EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
        EXPECT_EQ(test::dir_entries(dir.path()), std::vector<std::string>{});
    }
    for (const std::vector<std::string> &args :
         {std::vector<std::string>{"edit", testkit::kSample, "--set", "a=uint8:1"},
          std::vector<std::string>{"edit", testkit::kSample, "-o", out, "--in-place"}}) {
        const test::RunResult r = run_gguftool(args);
        EXPECT_EQ(r.status, 2) << r.err;
    }
}

TEST(Edit, DeletingAMissingKeyIsAnErrorNamingItAndTheFile) {
    testkit::TempDir dir;
    const test::RunResult r = run_gguftool(
        {"edit", testkit::kSample, "-o", dir.file("out.gguf"), "--delete", "general.nonexistent"});
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, fmt::format("gguftool: {}: --delete general.nonexistent: the file has no "
                                 "such key\n",
                                 testkit::kSample));
    EXPECT_EQ(test::dir_entries(dir.path()), std::vector<std::string>{});
}

// -o may name the input: the new file replaces it when complete (the copy reads the old one).
TEST(Edit, OutputMayBeTheInput) {
    testkit::TempDir dir;
    const std::string file = dir.file("model.gguf");
    testkit::write_file(file, testkit::read_file(testkit::kSample));
    const test::RunResult r =
        run_gguftool({"edit", file, "-o", file, "--set", "general.name=string:renamed"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(test::dir_entries(dir.path()), std::vector<std::string>{"model.gguf"});
    const auto edited = gguf::File::open(file), sample = gguf::File::open(testkit::kSample);
    EXPECT_EQ(edited->find("general.name")->value.as_string(), "renamed");
    ASSERT_EQ(edited->tensors().size(), sample->tensors().size());
    for (size_t i = 0; i < sample->tensors().size(); ++i) {
        const auto &a = sample->tensors()[i].data, &b = edited->tensors()[i].data;
        EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end()));
    }
}

TEST(Edit, SetFileOfAMissingFileNamesIt) {
    testkit::TempDir dir;
    const std::string missing = dir.file("missing.jinja");
    const test::RunResult r = run_gguftool({"edit", testkit::kSample, "-o", dir.file("out.gguf"),
                                            "--set-file", "tokenizer.chat_template=" + missing});
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("tokenizer.chat_template: " + missing), std::string::npos) << r.err;
    EXPECT_EQ(test::dir_entries(dir.path()), std::vector<std::string>{});
}

TEST(Edit, AlignmentChangeRealignsTheDataAndKeepsTheBytes) {
    REQUIRE_LLAMA();
    testkit::TempDir dir;
    const std::string in = llama_input(dir), out = dir.file("a256.gguf"),
                      back = dir.file("a32.gguf");
    test::RunResult r =
        run_gguftool({"edit", in, "-o", out, "--set", "general.alignment=uint32:256"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("data section realigned from 32 to 256 bytes"), std::string::npos)
        << r.out;
    const auto before = gguf::File::open(in), after = gguf::File::open(out);
    EXPECT_EQ(after->alignment(), 256u);
    EXPECT_EQ(after->data_offset() % 256, 0u);
    for (size_t i = 0; i < before->tensors().size(); ++i) {
        const gguf::TensorInfo &a = before->tensors()[i], &b = after->tensors()[i];
        EXPECT_EQ(b.offset % 256, 0u) << b.name;
        EXPECT_TRUE(std::equal(a.data.begin(), a.data.end(), b.data.begin(), b.data.end()))
            << a.name;
    }
    testkit::expect_same_as_llama(out, *after);
    // Deleting the key goes back to the default: the original file, byte for byte.
    r = run_gguftool({"edit", out, "-o", back, "--delete", "general.alignment"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(testkit::read_file(back), testkit::read_file(in));
}

TEST(Edit, DryRunPrintsTheChangesAndWritesNothing) {
    testkit::TempDir dir;
    const std::string out = dir.file("out.gguf");
    const test::RunResult r = run_gguftool(
        {"edit", testkit::kSample, "-o", out, "--dry-run", "--set", "general.name=string:tiny",
         "--set", "llama.context_length=uint32:512", "--set-json", "x.ids=int32:[1, -2]",
         "--delete", "tokenizer.ggml.scores", "--set", "general.alignment=uint32:64"});
    ASSERT_EQ(r.status, 0) << r.err;
    // The sample's tensors: 930656 - 9440 bytes of data in 21 tensors, each 32-aligned; aligned
    // to 64 the sizes give this file size (checked by writing it below).
    const std::string want =
        "general.name: string \"gguftool sample (tiny llama, random weights)\" -> string "
        "\"tiny\"\n"
        "llama.context_length: unchanged (uint32 512)\n"
        "x.ids: added int32[2] [1, -2]\n"
        "tokenizer.ggml.scores: deleted (was float32[320] [0, 0, 0, 0, 0, 0, 0, 0, ... 312 "
        "more])\n"
        "general.alignment: added uint32 64\n"
        "data section realigned from 32 to 64 bytes\n";
    EXPECT_EQ(r.out.substr(0, want.size()), want);
    EXPECT_EQ(test::dir_entries(dir.path()), std::vector<std::string>{});
    // The size it announces is the size written.
    const std::string said = r.out.substr(want.size());
    std::vector<std::string> args = {
        "edit",     testkit::kSample,           "-o",         out,
        "--set",    "general.name=string:tiny", "--set-json", "x.ids=int32:[1, -2]",
        "--delete", "tokenizer.ggml.scores",    "--set",      "general.alignment=uint32:64"};
    ASSERT_EQ(run_gguftool(args).status, 0);
    EXPECT_EQ(said, fmt::format("dry run: would write {} ({} bytes)\n", out,
                                std::filesystem::file_size(out)));
}

// A copy of the sample to edit in place, and what the same edit writes as a new file.
struct InPlaceCase {
    testkit::TempDir dir;
    std::string file = dir.file("model.gguf");
    std::vector<uint8_t> original = testkit::read_file(testkit::kSample);
    InPlaceCase() { testkit::write_file(file, original); }
};

TEST(Edit, InPlaceWhenTheHeaderFits) {
    InPlaceCase c;
    // A name 7 bytes longer: the header grows into its padding (it ends at 9423 of 9440).
    const std::vector<std::string> edit = {"--set",
                                           "general.name=string:gguftool sample (tiny llama, "
                                           "random weights) v2.0.1",
                                           "--set", "llama.context_length=uint32:1024"};
    struct stat st_before {};
    ASSERT_EQ(stat(c.file.c_str(), &st_before), 0);
    std::vector<std::string> args = {"edit", c.file, "--in-place"};
    args.insert(args.end(), edit.begin(), edit.end());
    const test::RunResult r = run_gguftool(args);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find(fmt::format("rewrote the header of {} in place (9440 bytes)", c.file)),
              std::string::npos)
        << r.out;
    struct stat st_after {};
    ASSERT_EQ(stat(c.file.c_str(), &st_after), 0);
    EXPECT_EQ(st_after.st_ino, st_before.st_ino);  // the same file, not a new one
    const std::vector<uint8_t> now = testkit::read_file(c.file);
    ASSERT_EQ(now.size(), c.original.size());
    EXPECT_TRUE(std::equal(now.begin() + 9440, now.end(), c.original.begin() + 9440));
    // The same bytes as the edit written to a new file.
    std::vector<std::string> new_file = {"edit", testkit::kSample, "-o", c.dir.file("new.gguf")};
    new_file.insert(new_file.end(), edit.begin(), edit.end());
    ASSERT_EQ(run_gguftool(new_file).status, 0);
    EXPECT_EQ(now, testkit::read_file(c.dir.file("new.gguf")));
    const auto f = gguf::File::open(c.file);
    EXPECT_EQ(f->find("llama.context_length")->value.as_uint(), 1024u);
    if (testkit::ggml()) {
        testkit::expect_same_as_llama(c.file, *f);
    }
}

TEST(Edit, InPlaceRefusedWhenTheHeaderDoesNotFit) {
    InPlaceCase c;
    std::string forty_ones = "1";
    for (int i = 1; i < 40; ++i) forty_ones += ", 1";
    for (const std::vector<std::string> &edit :
         {std::vector<std::string>{"--set-json", "x.big=uint8:[" + forty_ones + "]"},
          std::vector<std::string>{"--set", "x.more=string:" + std::string(40, 'x')},
          std::vector<std::string>{"--delete", "general.name"},
          std::vector<std::string>{"--set", "general.alignment=uint32:8192"}}) {
        std::vector<std::string> args = {"edit", c.file, "--in-place"};
        args.insert(args.end(), edit.begin(), edit.end());
        for (bool dry : {true, false}) {
            if (dry) args.push_back("--dry-run");
            const test::RunResult r = run_gguftool(args);
            EXPECT_EQ(r.status, 1) << r.out;
            EXPECT_NE(r.err.find("--in-place: "), std::string::npos) << r.err;
            EXPECT_NE(r.err.find("nothing written (write a new file with -o)"), std::string::npos)
                << r.err;
            EXPECT_EQ(testkit::read_file(c.file), c.original);
        }
    }
}

TEST(Edit, SplitShardsEditableButNotTheirSplitKeys) {
    testkit::TempDir dir;
    const std::string shard = dir.file("m-00001-of-00002.gguf");
    gguf::Writer w;
    w.add("general.name", gguf::MetaValue::str("m"));
    w.add("split.no", gguf::MetaValue::u16(0));
    w.add("split.count", gguf::MetaValue::u16(2));
    w.add("split.tensors.count", gguf::MetaValue::i32(2));
    w.add_tensor("a", GgmlType::f32, {4}, testkit::filler(16, 1));
    w.write(shard);
    const std::string out = dir.file("out-00001-of-00002.gguf");
    test::RunResult r = run_gguftool({"edit", shard, "-o", out, "--set", "general.name=string:n"});
    ASSERT_EQ(r.status, 0) << r.err;
    const auto f = gguf::File::open(out);
    EXPECT_EQ(f->find("general.name")->value.as_string(), "n");
    EXPECT_EQ(f->find("split.count")->value.as_uint(), 2u);
    for (const char *edit : {"split.count=uint16:3", "split.no=uint16:1"}) {
        r = run_gguftool({"edit", shard, "-o", out, "--set", edit});
        EXPECT_EQ(r.status, 2);
        EXPECT_NE(r.err.find("split.* keys describe a shard of a split model"), std::string::npos)
            << r.err;
    }
}

// A file size limit (as a full disk would) stops the copy: nothing is left under either name.
TEST(Edit, FullDiskLeavesNoOutput) {
    testkit::TempDir dir;
    const std::string in = dir.file("in.gguf");
    testkit::write_file(in, testkit::read_file(testkit::kSample));
    const std::string out = dir.file("out.gguf");
    const test::RunResult r = test::finish(
        test::spawn_gguftool({"edit", in, "-o", out, "--set", "general.name=string:x"}, 100000));
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("File too large"), std::string::npos) << r.err;
    EXPECT_EQ(test::dir_entries(dir.path()), std::vector<std::string>{"in.gguf"});
}

// In place, a write cut short by the limit (the header is 9440 bytes, the limit 4096) puts the
// old header back: the file is as it was.
TEST(Edit, FullDiskInPlaceLeavesTheOriginal) {
    InPlaceCase c;
    const test::RunResult r = test::finish(test::spawn_gguftool(
        {"edit", c.file, "--in-place", "--set", "llama.context_length=uint32:1024"}, 4096));
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("cannot write the new header: File too large; the old header is back in "
                         "place"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(testkit::read_file(c.file), c.original);
}

TEST(Edit, InterruptLeavesNoOutput) {
    for (int sig : {SIGTERM, SIGINT}) {
        SCOPED_TRACE(strsignal(sig));
        testkit::TempDir dir;
        // 1 GiB of f32 to copy.
        const std::string in = test::sparse_model(dir, GgmlType::f32, uint64_t(1) << 28);
        test::interrupt_mid_write(
            dir, {"edit", in, "-o", dir.file("out.gguf"), "--set", "a=uint8:1"}, sig);
    }
}

// SIGTERM at any moment of an in-place edit leaves the original file or the edited one, never a
// mix: the signal waits for the header's one write.
TEST(Edit, InterruptInPlaceLeavesTheOriginalOrTheEdit) {
    InPlaceCase c;
    const std::vector<std::string> edit = {"--set", "llama.context_length=uint32:2048"};
    std::vector<std::string> new_file = {"edit", testkit::kSample, "-o", c.dir.file("new.gguf")};
    new_file.insert(new_file.end(), edit.begin(), edit.end());
    ASSERT_EQ(run_gguftool(new_file).status, 0);
    const std::vector<uint8_t> edited = testkit::read_file(c.dir.file("new.gguf"));
    ASSERT_NE(edited, c.original);
    int interrupted = 0, finished = 0;
    for (int i = 0; i < 40; ++i) {
        testkit::write_file(c.file, c.original);
        std::vector<std::string> args = {"edit", c.file, "--in-place"};
        args.insert(args.end(), edit.begin(), edit.end());
        const test::Spawned child = test::spawn_gguftool(args);
        usleep(useconds_t(i * 150));  // from before the start to after the end
        kill(child.pid, SIGTERM);
        (test::finish(child).signal == SIGTERM ? interrupted : finished)++;
        const std::vector<uint8_t> now = testkit::read_file(c.file);
        EXPECT_TRUE(now == c.original || now == edited) << "run " << i << ": a mixed file";
    }
    EXPECT_GT(interrupted, 0);
}

}  // namespace
}  // namespace gguftool
