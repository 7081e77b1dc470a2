// `gguftool verify` from the command line: the table, --json, exit codes, library selection.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "verify_test_util.hpp"

namespace gguftool::verifytest {
namespace {

using test::run_gguftool;
using test::RunResult;

class VerifyCli : public EveryFormatFile {};

TEST_F(VerifyCli, SampleModelMatches) {
    llama();
    const RunResult r = run_gguftool({"verify", testkit::kSample});
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    const gguf::Model m = gguf::Model::open(testkit::kSample);
    for (const gguf::TensorInfo &t : m.tensors()) {
        const std::string line = line_of(r.out, std::string(t.name));
        EXPECT_NE(line.find(" match"), std::string::npos) << t.name << ": " << line;
    }
    EXPECT_NE(r.out.find(fmt::format("{} tensors: {} match, 0 mismatch, 0 not compared",
                                     m.tensors().size(), m.tensors().size())),
              std::string::npos)
        << r.out;
}

TEST_F(VerifyCli, EveryFormatMatchesAndQ81IsNotCompared) {
    const RunResult r = run_gguftool({"verify", file()});
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    for (GgmlType t : testkit::quantized_types()) {
        const std::string line = line_of(r.out, tensor_name(t));
        if (t == GgmlType::q8_1)
            EXPECT_NE(line.find("not compared: llama.cpp has no decoder for q8_1"),
                      std::string::npos)
                << line;
        else
            EXPECT_NE(line.find(" match"), std::string::npos) << line;
    }
    EXPECT_NE(line_of(r.out, "t.i32").find("not compared"), std::string::npos);
    EXPECT_NE(r.out.find("36 tensors: 30 match, 0 mismatch, 6 not compared"), std::string::npos)
        << r.out;
}

TEST_F(VerifyCli, JsonSchema) {
    const RunResult r = run_gguftool({"verify", "--json", "--threads", "2", file()});
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    ASSERT_TRUE(j["tensors"].is_array());
    EXPECT_EQ(j["tensors"].size(), 36u);
    EXPECT_EQ(j["matched"], 30);
    EXPECT_EQ(j["mismatched"], 0);
    EXPECT_EQ(j["not_compared"], 6);
    EXPECT_TRUE(j["reference"].is_string());
    for (const nlohmann::json &t : j["tensors"]) {
        for (const char *key :
             {"name", "type", "elements", "mismatches", "max_abs_diff", "max_ulp", "status"})
            ASSERT_TRUE(t.contains(key)) << key << " in " << t.dump();
        EXPECT_TRUE(t["name"].is_string());
        EXPECT_TRUE(t["type"].is_string());
        EXPECT_TRUE(t["elements"].is_number_unsigned());
        const std::string status = t["status"];
        if (status == "match") {
            EXPECT_EQ(t["mismatches"], 0);
            EXPECT_EQ(t["max_abs_diff"], 0.0);
            EXPECT_EQ(t["max_ulp"], 0);
        } else {
            EXPECT_EQ(status, "not_compared") << t.dump();
            EXPECT_TRUE(t["mismatches"].is_null());
            EXPECT_TRUE(t["max_abs_diff"].is_null());
            EXPECT_TRUE(t["max_ulp"].is_null());
            EXPECT_FALSE(t["note"].get<std::string>().empty());
        }
    }
    EXPECT_EQ(j["tensors"][int(testkit::quantized_types().size()) - 1]["name"], "t.q2_0");
}

TEST_F(VerifyCli, TensorGlobsAreRepeatable) {
    const RunResult r =
        run_gguftool({"verify", "--json", "--tensor", "t.q5_*", "--tensor", "t.bf16", file()});
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    std::vector<std::string> names;
    for (const nlohmann::json &t : j["tensors"]) names.push_back(t["name"]);
    EXPECT_EQ(names, (std::vector<std::string>{"t.q5_0", "t.q5_1", "t.q5_K", "t.bf16"}));
}

TEST_F(VerifyCli, LibraryFromOptionAndEnvironment) {
    // A copy of the library elsewhere, named by --ggml-lib, then by GGUFTOOL_GGML_LIB.
    const std::string copy = dir_->file("libggml-base-copy.so");
    std::filesystem::copy_file(llama().path, copy,
                               std::filesystem::copy_options::overwrite_existing);
    RunResult r = run_gguftool({"verify", "--ggml-lib", copy, "--tensor", "t.q6_K", file()});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("compared with llama.cpp (" + copy + ")"), std::string::npos) << r.out;

    setenv("GGUFTOOL_GGML_LIB", copy.c_str(), 1);
    r = run_gguftool({"verify", "--tensor", "t.q6_K", file()});
    unsetenv("GGUFTOOL_GGML_LIB");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("compared with llama.cpp (" + copy + ")"), std::string::npos) << r.out;
}

TEST_F(VerifyCli, ErrorsExitWithTwo) {
    // Library not loadable.
    RunResult r = run_gguftool({"verify", "--ggml-lib", dir_->file("missing.so"), file()});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("missing.so"), std::string::npos) << r.err;
    // Not a libggml-base.so.
    const std::string fake = dir_->file("fake.so");
    testkit::write_file(fake, {1, 2, 3});
    EXPECT_EQ(run_gguftool({"verify", "--ggml-lib", fake, file()}).status, 2);
    // Invalid GGUF: truncated in the tensor data.
    const std::string cut = dir_->file("cut.gguf");
    std::filesystem::copy_file(file(), cut, std::filesystem::copy_options::overwrite_existing);
    testkit::resize_file(cut, std::filesystem::file_size(cut) - 100);
    r = run_gguftool({"verify", cut});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find(cut), std::string::npos) << r.err;
    EXPECT_EQ(run_gguftool({"verify", dir_->file("absent.gguf")}).status, 2);
    // Usage.
    EXPECT_EQ(run_gguftool({"verify"}).status, 2);
    EXPECT_EQ(run_gguftool({"verify", "--bogus", file()}).status, 2);
    EXPECT_EQ(run_gguftool({"verify", "--threads", "-1", file()}).status, 2);
    EXPECT_EQ(
        run_gguftool({"verify", "--ggml-lib", "x.so", "--reference", dir_->path(), file()}).status,
        2);
    r = run_gguftool({"verify", "--tensor", "no.such.*", file()});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("no tensor matches"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace gguftool::verifytest
