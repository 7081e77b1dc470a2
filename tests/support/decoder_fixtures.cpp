// decoder_gguf / decoder_package: made on first use, then read from the cache.
#include "decoder_fixtures.hpp"

#include <fcntl.h>
#include <onnx/onnx_pb.h>
#include <sys/file.h>
#include <unistd.h>

#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "ggml_data.hpp"
#include "gguftool/decoder_export.hpp"
#include "gguftool/gguf.hpp"
#include "gguftool/gguf_writer.hpp"
#include "gguftool/llama_reference.hpp"
#include "gguftool/quant.hpp"
#include "gguftool/runtime.hpp"
#include "tiny_decoder.hpp"
#include "tiny_encoder.hpp"

namespace gguftool::testkit {
namespace {

namespace fs = std::filesystem;

// Bump when the tiny models or the exporter's output change meaning: it names the cache folder.
constexpr const char *kVersion = "decoders-7";

fs::path cache_dir() {
    return fs::path(GGUFTOOL_TESTKIT_CACHE_DIR) / kVersion;
}

// Holds the cache's lock for its lifetime.
class Lock {
public:
    Lock() {
        std::error_code ec;
        fs::create_directories(cache_dir(), ec);
        fd_ = ::open((cache_dir() / "lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd_ >= 0) flock(fd_, LOCK_EX);
    }
    ~Lock() {
        if (fd_ >= 0) ::close(fd_);
    }

private:
    int fd_ = -1;
};

// `in` with every quantized, F16 and BF16 tensor decoded to F32, the rest as they are.
void write_dequantized(const std::string &in, const std::string &out) {
    const gguf::Model model = gguf::Model::open(in);
    gguf::Writer w;
    for (const gguf::MetadataEntry &e : model.first().metadata()) w.add(gguf::MetadataItem::of(e));
    for (const gguf::TensorInfo &t : model.tensors()) {
        std::vector<uint64_t> dims(t.ne.begin(), t.ne.begin() + t.n_dims);
        if (!traits(t.type).quantized && t.type != GgmlType::f16 && t.type != GgmlType::bf16) {
            w.add_tensor(std::string(t.name), t.type, dims,
                         std::vector<uint8_t>(t.data.begin(), t.data.end()));
            continue;
        }
        std::vector<float> f(t.elements);
        quant::decode_f32(t.type, t.data, t.elements, f.data());
        std::vector<uint8_t> bytes(f.size() * 4);
        std::memcpy(bytes.data(), f.data(), bytes.size());
        w.add_tensor(std::string(t.name), GgmlType::f32, dims, std::move(bytes));
    }
    w.write(out);
}

// The tiny model `variant` (a decoder's, or with `encoder` an encoder's) as `type`.
std::string make_gguf(const std::string &variant, const std::string &type, bool encoder = false) {
    const fs::path path =
        cache_dir() / ((encoder ? "encoder-" : "") + variant + "-" + type + ".gguf");
    if (fs::exists(path)) return path.string();
    const fs::path tmp = path.string() + ".tmp";
    if (type.ends_with("-dequantized")) {
        write_dequantized(make_gguf(variant, type.substr(0, type.size() - 12), encoder),
                          tmp.string());
    } else if (type == "F32") {
        if (encoder)
            write_tiny_encoder(variant, tmp.string());
        else
            write_tiny_decoder(variant, tmp.string());
    } else {
        const std::string f32 = make_gguf(variant, "F32", encoder);
        // "<ftype>-pure": llama-quantize --pure (every tensor the ftype's default type).
        reference::QuantizeExtras extras;
        std::string name = type;
        if (name.ends_with("-pure")) {
            name.resize(name.size() - 5);
            extras.pure = true;
        }
        const std::optional<int> ftype = reference::llama_ftype_from_name(name);
        if (!ftype) throw std::runtime_error("unknown llama.cpp type " + type);
        // The file types of the types llama.cpp quantizes only with an importance matrix
        // (src/llama-quant.cpp, tensor_requires_imatrix) get a random one, as an imatrix holds.
        for (const char *needs :
             {"IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ2_M", "IQ3_XXS", "Q2_K_S"})
            if (reference::llama_ftype_from_name(needs) == ftype) {
                uint64_t seed = 1;
                const gguf::Model model = gguf::Model::open(f32);
                for (const gguf::TensorInfo &t : model.tensors())
                    if (t.n_dims == 2)
                        extras.imatrix[std::string(t.name)] =
                            testkit::make_imatrix(size_t(t.ne[0]), seed++);
            }
        std::string why;
        auto lib = reference::load_llama(&why);
        if (!lib) throw std::runtime_error("libllama is not available: " + why);
        reference::quantize_model(lib, f32, tmp.string(), *ftype, 0, extras);
    }
    fs::rename(tmp, path);
    return path.string();
}

}  // namespace

std::string decoder_gguf(const std::string &variant, const std::string &type) {
    Lock lock;
    return make_gguf(variant, type);
}

std::string decoder_package(const std::string &variant, const std::string &type, int opset,
                            bool nbits, int accuracy_level) {
    Lock lock;
    const std::string gguf = make_gguf(variant, type);
    const fs::path dir =
        cache_dir() /
        (variant + "-" + type + "-opset" + std::to_string(opset) + (nbits ? "-nbits" : "") +
         (accuracy_level ? "-acc" + std::to_string(accuracy_level) : ""));
    if (fs::exists(dir / "onnx" / "model.onnx")) return dir.string();
    std::error_code ec;
    fs::remove_all(dir, ec);
    decoder::Options o;
    if (opset != 29) o.opset = opset;
    if (nbits) o.weights = decoder::Weights::nbits;
    o.accuracy_level = accuracy_level;
    decoder::export_decoder(gguf::Model::open(gguf), dir.string(), o);
    return dir.string();
}

std::string encoder_gguf(const std::string &variant, const std::string &type) {
    Lock lock;
    return make_gguf(variant, type, true);
}

std::string encoder_package(const std::string &variant, const std::string &type, int opset,
                            bool nbits) {
    Lock lock;
    const std::string gguf = make_gguf(variant, type, true);
    const fs::path dir = cache_dir() / ("encoder-" + variant + "-" + type + "-opset" +
                                        std::to_string(opset) + (nbits ? "-nbits" : ""));
    if (fs::exists(dir / "onnx" / "model.onnx")) return dir.string();
    std::error_code ec;
    fs::remove_all(dir, ec);
    decoder::Options o;
    o.graph = decoder::Graph::encoder;
    if (opset != 29) o.opset = opset;
    if (nbits) o.weights = decoder::Weights::nbits;
    decoder::export_decoder(gguf::Model::open(gguf), dir.string(), o);
    return dir.string();
}

double same_math_bound(const std::string &dir) {
    const std::filesystem::path path = std::filesystem::path(dir) / "onnx" / "model.onnx";
    std::ifstream in(path, std::ios::binary);
    onnx::ModelProto m;
    if (!m.ParseFromIstream(&in)) throw std::runtime_error("cannot read " + path.string());
    for (const onnx::NodeProto &n : m.graph().node())
        if (n.op_type() == "Cast")
            for (const onnx::AttributeProto &a : n.attribute())
                if (a.name() == "to" && a.i() == onnx::TensorProto::FLOAT16) return 5e-4;
    return 1e-5;
}

std::string test_param_name(std::string s) {
    for (char &c : s)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    return s;
}

std::vector<DecoderStep> single_prompt_plan(const std::vector<int32_t> &prompt,
                                            const std::vector<int32_t> &next) {
    const int64_t n = int64_t(prompt.size());
    DecoderStep first{{std::vector<int64_t>(prompt.begin(), prompt.end())},
                      {std::vector<int64_t>(size_t(n), 1)},
                      {{}}};
    for (int64_t i = 0; i < n; ++i) first.positions[0].push_back(i);
    std::vector<DecoderStep> plan = {first};
    for (size_t s = 0; s < next.size(); ++s) {
        const int64_t pos = n + int64_t(s);
        plan.push_back({{{next[s]}}, {std::vector<int64_t>(size_t(pos + 1), 1)}, {{pos}}});
    }
    return plan;
}

std::vector<DecoderStep> left_padded_plan(const std::vector<int32_t> &prompt, int64_t pad,
                                          int32_t next) {
    const int64_t n = int64_t(prompt.size());
    DecoderStep first, second;
    first.ids.resize(2), first.mask.resize(2), first.positions.resize(2);
    for (int64_t i = 0; i < n; ++i) {
        first.ids[0].push_back(prompt[size_t(i)]);
        first.mask[0].push_back(1);
        first.positions[0].push_back(i);
        const bool padded = i < pad;
        first.ids[1].push_back(padded ? 0 : prompt[size_t(i)]);
        first.mask[1].push_back(padded ? 0 : 1);
        first.positions[1].push_back(padded ? 1 : i - pad);
    }
    second.ids = {{next}, {next}};
    second.mask = first.mask;
    for (auto &row : second.mask) row.push_back(1);
    second.positions = {{n}, {n - pad}};
    return {first, second};
}

std::vector<std::vector<float>> run_decoder_plan(const std::string &dir, const decoder::Hparams &h,
                                                 const std::vector<DecoderStep> &plan,
                                                 runtime::WeightProducts products) {
    using runtime::Shape;
    using runtime::Tensor;
    runtime::Session session(runtime::Model::load(dir + "/onnx/model.onnx"),
                             runtime::RunOptions{.weight_products = products});
    runtime::Inputs in;
    const int64_t batch = int64_t(plan.at(0).ids.size());
    for (int64_t il = 0; il < h.n_layer; ++il)
        for (const char *kv : {"key", "value"})
            in["past_key_values." + std::to_string(il) + "." + kv] =
                Tensor::zeros(DataType::float32, Shape{batch, h.n_head_kv, 0, h.head_dim});
    auto tensor = [](const std::vector<std::vector<int64_t>> &rows) {
        std::vector<int64_t> flat;
        for (const auto &r : rows) flat.insert(flat.end(), r.begin(), r.end());
        return Tensor::from_values(DataType::int64,
                                   Shape{int64_t(rows.size()), int64_t(rows[0].size())}, flat);
    };
    std::vector<std::vector<float>> out;
    for (const DecoderStep &s : plan) {
        in["input_ids"] = tensor(s.ids);
        in["attention_mask"] = tensor(s.mask);
        in["position_ids"] = tensor(s.positions);
        for (auto &[name, t] : session.run(in)) {
            if (name == "logits")
                out.push_back(t.to_vector<float>());
            else
                in["past_key_values." + name.substr(8)] = t;
        }
    }
    return out;
}

}  // namespace gguftool::testkit
