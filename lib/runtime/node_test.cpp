// ONNX backend node tests: model.onnx plus test_data_set_N/{input,output}_K.pb.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "gguftool/runtime.hpp"

namespace gguftool::runtime {
namespace {

namespace fs = std::filesystem;

// Numbered files prefix_0.pb, prefix_1.pb, ... until the first gap.
std::vector<fs::path> numbered(const fs::path &dir, const std::string &prefix) {
    std::vector<fs::path> files;
    for (size_t k = 0;; ++k) {
        const fs::path p = dir / fmt::format("{}_{}.pb", prefix, k);
        if (!fs::exists(p)) break;
        files.push_back(p);
    }
    return files;
}

// test_data_set_N directories in numeric order.
std::vector<fs::path> data_sets(const fs::path &dir) {
    std::vector<std::pair<long, fs::path>> sets;
    for (const fs::directory_entry &e : fs::directory_iterator(dir)) {
        const std::string name = e.path().filename().string();
        const std::string prefix = "test_data_set_";
        if (!e.is_directory() || name.rfind(prefix, 0) != 0) continue;
        const std::string num = name.substr(prefix.size());
        if (num.empty() || !std::all_of(num.begin(), num.end(), ::isdigit) || num.size() > 9)
            continue;
        sets.emplace_back(std::stol(num), e.path());
    }
    std::sort(sets.begin(), sets.end());
    std::vector<fs::path> out;
    for (auto &s : sets) out.push_back(s.second);
    return out;
}

// Runs one test directory; an empty string means it passed.
std::string run_one(const fs::path &dir, bool exact, const RunOptions &options) {
    Session session(Model::load((dir / "model.onnx").string()), options);
    const Model &model = session.model();
    const std::vector<fs::path> sets = data_sets(dir);
    if (sets.empty()) return "no test_data_set_N directory";
    for (const fs::path &set : sets) {
        const std::string set_name = set.filename().string();
        const std::vector<fs::path> in_files = numbered(set, "input");
        const std::vector<fs::path> out_files = numbered(set, "output");
        if (in_files.size() != model.inputs().size())
            return fmt::format("{}: {} input files for {} graph inputs", set_name, in_files.size(),
                               model.inputs().size());
        if (out_files.size() != model.outputs().size())
            return fmt::format("{}: {} output files for {} graph outputs", set_name,
                               out_files.size(), model.outputs().size());
        Inputs inputs;
        for (size_t k = 0; k < in_files.size(); ++k)
            inputs[model.inputs()[k].name] = read_tensor_pb(in_files[k].string());
        const NamedTensors got = session.run(inputs);
        for (size_t k = 0; k < out_files.size(); ++k) {
            const Tensor expected = read_tensor_pb(out_files[k].string());
            const AllcloseResult c = allclose(got[k].second, expected, exact);
            if (!c.equal)
                return fmt::format("{}: output \"{}\": {}", set_name, got[k].first, c.message);
        }
    }
    return "";
}

}  // namespace

bool is_node_test_dir(const std::string &dir) {
    std::error_code ec;
    return fs::is_regular_file(fs::path(dir) / "model.onnx", ec);
}

std::vector<NodeTestResult> run_node_tests(const std::string &dir, bool exact,
                                           const RunOptions &options) {
    std::vector<fs::path> tests;
    if (is_node_test_dir(dir)) {
        tests.push_back(dir);
    } else {
        std::error_code ec;
        if (!fs::is_directory(dir, ec)) throw Error(dir, std::nullopt, "not a directory");
        for (const fs::directory_entry &e : fs::directory_iterator(dir))
            if (e.is_directory() && is_node_test_dir(e.path().string())) tests.push_back(e.path());
        std::sort(tests.begin(), tests.end());
    }
    if (tests.empty())
        throw Error(dir, std::nullopt,
                    "no node test here (a directory with model.onnx, or a "
                    "folder of them)");
    std::vector<NodeTestResult> results;
    for (const fs::path &t : tests) {
        NodeTestResult r;
        r.name = fs::path(t).lexically_normal().filename().string();
        if (r.name.empty())
            r.name = fs::path(t).lexically_normal().parent_path().filename().string();
        try {
            r.message = run_one(t, exact, options);
        } catch (const std::exception &e) {
            r.message = e.what();
        }
        r.passed = r.message.empty();
        results.push_back(std::move(r));
    }
    return results;
}

}  // namespace gguftool::runtime
