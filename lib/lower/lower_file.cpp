// lower_file: an .onnx file in, its lowered form out, external data carried along.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <set>

#include "gguftool/error.hpp"
#include "gguftool/lower.hpp"
#include "gguftool/mapped_file.hpp"
#include "gguftool/output_file.hpp"

namespace gguftool::lower {
namespace {

namespace fs = std::filesystem;

// The `location` of an initializer stored as external data, or "" for inline data.
std::string external_location(const onnx::TensorProto &t) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) return "";
    for (const auto &e : t.external_data())
        if (e.key() == "location") return e.value();
    return "";
}

// Copies `from` to `to`, committed but pending: removed again unless the caller keeps it.
std::unique_ptr<OutputFile> copy_file(const fs::path &from, const std::string &to) {
    const std::shared_ptr<const MappedFile> in = MappedFile::open(from.string());
    auto out = std::make_unique<OutputFile>(to);
    const auto bytes = in->bytes();
    constexpr size_t kChunk = size_t{8} << 20;
    for (size_t at = 0; at < bytes.size(); at += kChunk)
        out->write(bytes.data() + at, std::min(kChunk, bytes.size() - at));
    out->commit();
    return out;
}

}  // namespace

FileResult lower_file(const std::string &input, const std::string &output, const Options &options) {
    const std::shared_ptr<const MappedFile> in = MappedFile::open(input);
    const auto bytes = in->bytes();
    if (bytes.size() > size_t(INT32_MAX))
        throw Error(input, std::nullopt,
                    "the file is over 2 GiB, which protobuf cannot parse; write its tensors as "
                    "external data");
    onnx::ModelProto model;
    if (!model.ParseFromArray(bytes.data(), int(bytes.size())))
        throw Error(input, std::nullopt, "not a valid ONNX model (protobuf parsing failed)");
    FileResult r;
    try {
        r.report = lower_model(model, options);
    } catch (const Error &e) {
        throw Error(input, std::nullopt, e.problem());
    }

    const fs::path in_dir = fs::absolute(input).parent_path();
    const fs::path out_dir = fs::absolute(output).parent_path();
    std::set<std::string> locations;
    for (const onnx::TensorProto &t : model.graph().initializer())
        if (std::string loc = external_location(t); !loc.empty()) {
            const fs::path p(loc);
            if (p.is_absolute() || p.lexically_normal().string().starts_with(".."))
                throw Error(input, std::nullopt,
                            fmt::format("initializer '{}': external data location '{}' is not "
                                        "inside the model's directory",
                                        t.name(), loc));
            locations.insert(loc);
        }
    std::vector<std::unique_ptr<OutputFile>> pending;
    const bool same_dir = fs::equivalent(in_dir, out_dir);
    for (const std::string &loc : locations) {
        if (same_dir) continue;
        const fs::path to = out_dir / loc;
        fs::create_directories(to.parent_path());
        pending.push_back(copy_file(in_dir / loc, to.string()));
        r.data_files.push_back(to.string());
    }
    std::string serialized;
    if (!model.SerializeToString(&serialized))
        throw Error(output, std::nullopt,
                    "the lowered model is over 2 GiB, which protobuf "
                    "cannot write; convert with --external-data");
    OutputFile out(output);
    out.write(serialized.data(), serialized.size());
    out.commit();
    out.keep();
    for (auto &f : pending) f->keep();
    return r;
}

}  // namespace gguftool::lower
