// `verify --reference DIR`: .npy files written from llama.cpp's decoding stand in for the library;
// a wrong reference, and a single flipped byte in a copy of the model, are caught.
#include <gtest/gtest.h>

#include <filesystem>

#include "verify_test_util.hpp"

namespace gguftool::verifytest {
namespace {

namespace fs = std::filesystem;
using runtime::Tensor;
using test::run_gguftool;
using test::RunResult;
using verify::Status;

class VerifyReference : public testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = new TempDir;
        write_every_format(file());
        write_references(file(), refs());
    }
    static void TearDownTestSuite() {
        delete dir_;
        dir_ = nullptr;
    }
    static std::string file() { return dir_->file("every.gguf"); }
    static std::string refs() { return dir_->file("refs"); }
    // A copy of the reference directory for a test to spoil.
    static std::string copy_refs(const std::string &name) {
        const std::string to = dir_->file(name);
        fs::remove_all(to);
        fs::copy(refs(), to);
        return to;
    }
    static TempDir *dir_;
};
TempDir *VerifyReference::dir_ = nullptr;

TEST_F(VerifyReference, EveryTensorMatchesItsReference) {
    verify::Options o;
    o.reference_dir = refs();
    const verify::Report r = verify::verify(gguf::Model::open(file()), o);
    // With references, every type is compared: q8_1, f64 and the integers too.
    EXPECT_EQ(r.matched, 36u);
    EXPECT_EQ(r.mismatched, 0u);
    EXPECT_EQ(r.not_compared, 0u);
    for (const verify::TensorResult &t : r.tensors)
        EXPECT_EQ(t.status, Status::match) << t.name << ": " << t.note;

    const RunResult cli = run_gguftool({"verify", "--reference", refs(), file()});
    EXPECT_EQ(cli.status, 0) << cli.out << cli.err;
    EXPECT_NE(cli.out.find("36 tensors: 36 match, 0 mismatch, 0 not compared"), std::string::npos)
        << cli.out;
    EXPECT_NE(cli.out.find("compared with " + refs() + "/<tensor name>.npy"), std::string::npos)
        << cli.out;
}

TEST_F(VerifyReference, AWrongReferenceIsDetected) {
    const std::string bad = copy_refs("bad");
    const std::string path = verify::reference_file(bad, "t.q5_K");
    const Tensor t = runtime::read_npy(path);
    std::vector<float> v = t.to_vector<float>();
    v[7] = std::nextafter(v[7], INFINITY);
    v[100] = -v[100] * 2 + 1;
    runtime::write_npy(path, Tensor::from_values(DataType::float32, t.shape(), v));

    const RunResult r = run_gguftool({"verify", "--reference", bad, file()});
    EXPECT_EQ(r.status, 1) << r.out << r.err;
    const std::string line = line_of(r.out, "t.q5_K");
    EXPECT_NE(line.find("MISMATCH (first at element 7)"), std::string::npos) << line;
    EXPECT_NE(r.out.find("35 match, 1 mismatch"), std::string::npos) << r.out;

    const RunResult j = run_gguftool({"verify", "--json", "--reference", bad, file()});
    EXPECT_EQ(j.status, 1);
    const nlohmann::json doc = nlohmann::json::parse(j.out);
    EXPECT_EQ(doc["mismatched"], 1);
    for (const nlohmann::json &e : doc["tensors"]) {
        if (e["name"] != "t.q5_K") continue;
        EXPECT_EQ(e["status"], "mismatch");
        EXPECT_EQ(e["mismatches"], 2);
        EXPECT_EQ(e["first_mismatch"], 7);
        EXPECT_GT(e["max_ulp"].get<uint64_t>(), 1u);
    }
}

TEST_F(VerifyReference, MissingOrUnusableReferencesAreErrors) {
    // Missing file.
    const std::string missing = copy_refs("missing");
    fs::remove(verify::reference_file(missing, "t.iq3_s"));
    RunResult r = run_gguftool({"verify", "--reference", missing, file()});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("t.iq3_s.npy: no reference file for tensor t.iq3_s"), std::string::npos)
        << r.err;
    // ... but selecting the other tensors works.
    r = run_gguftool({"verify", "--reference", missing, "--tensor", "t.iq3_xxs", file()});
    EXPECT_EQ(r.status, 0) << r.err;

    // Wrong element count.
    const std::string count = copy_refs("count");
    runtime::write_npy(verify::reference_file(count, "t.q4_0"),
                       Tensor::from_values(DataType::float32, {3}, std::vector<float>{1, 2, 3}));
    r = run_gguftool({"verify", "--reference", count, file()});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("but tensor t.q4_0 has 512"), std::string::npos) << r.err;

    // Wrong type: integers for a quantized tensor.
    const std::string type = copy_refs("type");
    runtime::write_npy(verify::reference_file(type, "t.q4_0"),
                       Tensor::zeros(DataType::int32, {512}));
    r = run_gguftool({"verify", "--reference", type, file()});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("holds int32 values"), std::string::npos) << r.err;

    // Not a .npy file.
    const std::string junk = copy_refs("junk");
    testkit::write_file(verify::reference_file(junk, "t.q4_0"), {'n', 'o', 'p', 'e'});
    EXPECT_EQ(run_gguftool({"verify", "--reference", junk, file()}).status, 2);

    // Not a directory.
    EXPECT_EQ(run_gguftool({"verify", "--reference", dir_->file("nowhere"), file()}).status, 2);
}

// A single flipped byte in a copy of the model, checked against the references of the original:
// caught in every quantized format, with exactly the elements llama.cpp decodes differently.
TEST_F(VerifyReference, AFlippedByteIsCaughtInEveryFormat) {
    const gguf::Model original = gguf::Model::open(file());
    for (GgmlType type : testkit::quantized_types()) {
        const std::string name = tensor_name(type);
        const gguf::TensorInfo *t = original.find_tensor(name);
        ASSERT_NE(t, nullptr);
        const std::string flipped = dir_->file("flipped.gguf");
        copy_with_flipped_byte(file(), flipped, name, t->bytes / 2 + 1);
        const gguf::Model m = gguf::Model::open(flipped);
        const uint64_t differing =
            count_differences(llama_decoding(file(), name), llama_decoding(flipped, name));
        ASSERT_GT(differing, 0u) << name << ": the flip must change the decoded values";

        verify::Options o;
        o.reference_dir = refs();
        const verify::Report r = verify::verify(m, o);
        EXPECT_EQ(r.mismatched, 1u) << name;
        const verify::TensorResult *res = find_result(r, name);
        ASSERT_NE(res, nullptr);
        EXPECT_EQ(res->status, Status::mismatch) << name;
        EXPECT_EQ(res->diff.mismatches, differing) << name;
    }
}

TEST_F(VerifyReference, AFlippedByteFailsTheCommand) {
    const std::string flipped = dir_->file("flipped-cli.gguf");
    copy_with_flipped_byte(file(), flipped, "t.q6_K", 50);
    const RunResult r = run_gguftool({"verify", "--reference", refs(), flipped});
    EXPECT_EQ(r.status, 1) << r.out << r.err;
    EXPECT_NE(line_of(r.out, "t.q6_K").find("MISMATCH"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("35 match, 1 mismatch, 0 not compared"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace gguftool::verifytest
