#include "format_cases.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iterator>
#include <stdexcept>

#include "files.hpp"
#include "llama_ref.hpp"
#include "onnx_builder.hpp"

namespace gguftool::testkit {

namespace {

// Bump when make_format_cases (or the values it draws) changes: it names the cache file.
constexpr const char *kGeneratorVersion = "format-cases-1";

// FNV-1a, 64 bits: the cache key, not a security measure.
uint64_t fnv1a(const void *p, size_t n, uint64_t h = 0xcbf29ce484222325ull) {
    const auto *b = static_cast<const uint8_t *>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

// The cache file for this llama.cpp library and this generator.
std::string cache_path(const reference::Ggml &g) {
    const std::string bytes = read_text(g.path);
    uint64_t key = fnv1a(bytes.data(), bytes.size());
    key = fnv1a(kGeneratorVersion, std::strlen(kGeneratorVersion), key);
    const int64_t shape[] = {kFormatRows, kFormatRowElements, int64_t(kGgmlTypeCount)};
    key = fnv1a(shape, sizeof shape, key);
    char name[64];
    std::snprintf(name, sizeof name, "format_cases-%016llx.bin", (unsigned long long)key);
    return std::string(GGUFTOOL_TESTKIT_CACHE_DIR) + "/" + name;
}

// The file: "GTKFC1", a case count, then per case its name, type, shape, bytes and want, each
// length-prefixed (u64, host byte order: the file never leaves the build tree).
constexpr char kMagic[6] = {'G', 'T', 'K', 'F', 'C', '1'};

void put_u64(std::string &s, uint64_t v) {
    s.append(reinterpret_cast<const char *>(&v), 8);
}
template <class T>
void put_vector(std::string &s, const std::vector<T> &v) {
    put_u64(s, v.size());
    if (!v.empty()) s.append(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(T));
}

std::string serialize(const std::vector<FormatCase> &cases) {
    std::string s(kMagic, sizeof kMagic);
    put_u64(s, cases.size());
    for (const FormatCase &c : cases) {
        put_vector(s, std::vector<char>(c.name.begin(), c.name.end()));
        put_u64(s, uint64_t(c.type));
        put_vector(s, c.shape);
        put_vector(s, c.bytes);
        put_vector(s, c.want);
    }
    return s;
}

class Reader {
public:
    explicit Reader(const std::string &s) : s_(s) {}
    bool ok() const { return ok_; }
    bool at_end() const { return pos_ == s_.size(); }
    uint64_t u64() {
        uint64_t v = 0;
        take(&v, 8);
        return v;
    }
    template <class T>
    std::vector<T> vector() {
        const uint64_t n = u64();
        if (!ok_ || n > (s_.size() - pos_) / sizeof(T)) {
            ok_ = false;
            return {};
        }
        std::vector<T> v(n);
        take(v.data(), n * sizeof(T));
        return v;
    }
    void take(void *out, size_t n) {
        if (n == 0) return;
        if (!ok_ || s_.size() - pos_ < n) {
            ok_ = false;
            return;
        }
        std::memcpy(out, s_.data() + pos_, n);
        pos_ += n;
    }

private:
    const std::string &s_;
    size_t pos_ = 0;
    bool ok_ = true;
};

// The cases in `s`, or false when it is not a whole cache file.
bool deserialize(const std::string &s, std::vector<FormatCase> &out) {
    Reader r(s);
    char magic[sizeof kMagic];
    r.take(magic, sizeof magic);
    if (!r.ok() || std::memcmp(magic, kMagic, sizeof kMagic) != 0) return false;
    const uint64_t n = r.u64();
    for (uint64_t i = 0; r.ok() && i < n; ++i) {
        FormatCase c;
        const std::vector<char> name = r.vector<char>();
        c.name.assign(name.begin(), name.end());
        const uint64_t type = r.u64();
        if (type >= kGgmlTypeCount) return false;
        c.type = GgmlType(type);
        c.shape = r.vector<int64_t>();
        c.bytes = r.vector<uint8_t>();
        c.want = r.vector<float>();
        out.push_back(std::move(c));
    }
    return r.ok() && r.at_end() && out.size() == n;
}

// Reads the cache, or makes the cases and writes it (temporary file, then rename), holding a lock
// on the cache directory so that concurrent test processes make them once.
std::vector<FormatCase> load_or_make(const reference::Ggml &g) {
    namespace fs = std::filesystem;
    const std::string path = cache_path(g);
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    const int lock =
        ::open((fs::path(path).parent_path() / "lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock >= 0) flock(lock, LOCK_EX);
    std::vector<FormatCase> cases;
    if (!deserialize(read_text(path), cases)) {
        cases = make_format_cases();
        const std::string tmp = path + ".tmp";
        try {
            write_file(tmp, serialize(cases));
            fs::rename(tmp, path, ec);
        } catch (const std::runtime_error &) {
            fs::remove(tmp, ec);  // no cache this time
        }
    }
    if (lock >= 0) ::close(lock);  // releases the lock
    return cases;
}

}  // namespace

std::vector<FormatCase> make_format_cases() {
    const std::shared_ptr<const reference::Ggml> gp = reference::ggml();
    if (!gp) throw std::runtime_error("llama.cpp's libggml-base.so is not available (run npm ci)");
    const reference::Ggml &g = *gp;
    std::vector<FormatCase> out;
    const size_t n = size_t(kFormatRows * kFormatRowElements);
    for (GgmlType t : testkit::quantized_types()) {
        const std::string name = type_name(t);
        const std::vector<float> values = testkit::make_values(testkit::Distribution::normal, n, 7);
        Quantized q = quantize_with_llama(g, t, values, size_t(kFormatRowElements),
                                          testkit::make_imatrix(kFormatRowElements, 3));
        if (!q.bytes.empty())
            out.push_back({name + "_llama",
                           t,
                           {kFormatRows, kFormatRowElements},
                           q.bytes,
                           reference_decode(g, t, q.bytes, n)});
        std::vector<uint8_t> random = testkit::random_bytes(*row_bytes(t, n), 11 + uint32_t(t));
        out.push_back({name + "_random",
                       t,
                       {kFormatRows, kFormatRowElements},
                       random,
                       reference_decode(g, t, random, n)});
        out.push_back({name + "_empty", t, {0, int64_t(traits(t).block_size)}, {}, {}});
    }
    return out;
}

const std::vector<FormatCase> &format_cases() {
    static const std::vector<FormatCase> all = [] {
        const std::shared_ptr<const reference::Ggml> g = reference::ggml();
        if (!g)
            throw std::runtime_error("llama.cpp's libggml-base.so is not available (run npm ci)");
        return load_or_make(*g);
    }();
    return all;
}

onnx::ModelProto packed_model(DataType dtype, const std::vector<const FormatCase *> &chosen,
                              bool widen_bfloat16) {
    ModelBuilder m(29, "formats", 10);
    for (const FormatCase *cp : chosen) {
        const FormatCase &c = *cp;
        m.bytes_initializer(c.name + "_x", c.bytes);
        m.dequantize_packed(c.name, c.name + "_x", c.name, c.type, c.shape, dtype);
        std::string out = c.name;
        DataType out_type = dtype;
        if (widen_bfloat16 && dtype == DataType::bfloat16) {  // exactly, for onnxruntime-node
            m.node("Cast", {c.name}, {out = c.name + "_as_float"},
                   {attr_int("to", onnx_number(out_type = DataType::float32))})
                .clear_name();  // one per case: unnamed rather than all "Cast_node"
        }
        m.output(out, out_type, c.shape);
    }
    return m.proto();
}

}  // namespace gguftool::testkit
