// NumPy .npy files: format 1.0/2.0/3.0 read, 1.0 (2.0 for huge headers) written.
// https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "gguftool/mapped_file.hpp"
#include "gguftool/runtime.hpp"

namespace gguftool::runtime {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
constexpr std::string_view kBfloat16Note = "# gguftool: bfloat16 stored as raw uint16 words";

struct Descr {
    DataType dtype;
    const char *code;  // as written: little-endian or byte-order-free
};

constexpr Descr kDescrs[] = {
    {DataType::float32, "<f4"},  {DataType::float64, "<f8"}, {DataType::float16, "<f2"},
    {DataType::uint8, "|u1"},    {DataType::int8, "|i1"},    {DataType::uint16, "<u2"},
    {DataType::int16, "<i2"},    {DataType::uint32, "<u4"},  {DataType::int32, "<i4"},
    {DataType::uint64, "<u8"},   {DataType::int64, "<i8"},   {DataType::bool_, "|b1"},
    {DataType::bfloat16, "<u2"},
};

// The type of a descr string, and whether its bytes are big-endian.
std::optional<std::pair<DataType, bool>> parse_descr(std::string d) {
    if (d == "?" || d == "b1") d = "|b1";
    if (d.size() != 3) return std::nullopt;
    const char order = d[0];
    bool big = false;
    if (order == '>')
        big = true;
    else if (order != '<' && order != '|' && order != '=')
        return std::nullopt;
    for (const Descr &r : kDescrs) {
        if (r.dtype == DataType::bfloat16) continue;
        if (std::string_view(r.code).substr(1) == std::string_view(d).substr(1))
            return std::make_pair(r.dtype, big && dtype_size(r.dtype) > 1);
    }
    return std::nullopt;
}

// The value after 'key': in the header dictionary (quotes of either kind).
size_t find_key(const std::string &h, const std::string &key) {
    for (const char q : {'\'', '"'}) {
        const size_t k = h.find(q + key + q);
        if (k != std::string::npos) {
            const size_t colon = h.find(':', k + key.size() + 2);
            if (colon != std::string::npos) return colon + 1;
        }
    }
    return std::string::npos;
}

size_t skip_space(const std::string &h, size_t p) {
    while (p < h.size() && (h[p] == ' ' || h[p] == '\t')) ++p;
    return p;
}

}  // namespace

Tensor decode_npy(std::span<const uint8_t> bytes, const std::string &where) {
    const auto fail = [&](const std::string &what) -> Error {
        return Error(where, std::nullopt, what);
    };
    if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, kMagicSize) != 0)
        throw fail("not a NumPy .npy file (bad magic)");
    const uint8_t major = bytes[6];
    size_t header_len = 0, header_start = 0;
    if (major == 1) {
        header_len = size_t(bytes[8]) | size_t(bytes[9]) << 8;
        header_start = 10;
    } else if (major == 2 || major == 3) {
        if (bytes.size() < 12) throw fail("truncated .npy header");
        header_len = size_t(bytes[8]) | size_t(bytes[9]) << 8 | size_t(bytes[10]) << 16 |
                     size_t(bytes[11]) << 24;
        header_start = 12;
    } else {
        throw fail(fmt::format("unsupported .npy format version {}.{}", major, bytes[7]));
    }
    if (header_len > bytes.size() - header_start) throw fail("truncated .npy header");
    const std::string h(reinterpret_cast<const char *>(bytes.data() + header_start), header_len);

    // descr
    size_t p = find_key(h, "descr");
    if (p == std::string::npos) throw fail(".npy header has no 'descr'");
    p = skip_space(h, p);
    if (p >= h.size() || (h[p] != '\'' && h[p] != '"'))
        throw fail(
            ".npy 'descr' is not a simple type string (structured arrays are not supported)");
    const size_t end = h.find(h[p], p + 1);
    if (end == std::string::npos) throw fail(".npy header: unterminated 'descr'");
    const std::string descr = h.substr(p + 1, end - p - 1);
    const auto type = parse_descr(descr);
    if (!type) throw fail(fmt::format(".npy element type '{}' is not supported", descr));
    DataType dtype = type->first;
    if (dtype == DataType::uint16 && h.find(kBfloat16Note) != std::string::npos)
        dtype = DataType::bfloat16;

    // fortran_order
    p = find_key(h, "fortran_order");
    if (p == std::string::npos) throw fail(".npy header has no 'fortran_order'");
    p = skip_space(h, p);
    const bool fortran = h.compare(p, 4, "True") == 0;
    if (!fortran && h.compare(p, 5, "False") != 0) throw fail(".npy header: bad 'fortran_order'");

    // shape: a tuple of non-negative integers
    p = find_key(h, "shape");
    if (p == std::string::npos) throw fail(".npy header has no 'shape'");
    p = skip_space(h, p);
    if (p >= h.size() || h[p] != '(') throw fail(".npy header: 'shape' is not a tuple");
    const size_t close = h.find(')', p);
    if (close == std::string::npos) throw fail(".npy header: unterminated 'shape'");
    Shape shape;
    for (size_t q = p + 1; q < close;) {
        q = skip_space(h, q);
        if (q >= close) break;
        if (h[q] < '0' || h[q] > '9') throw fail(".npy header: bad 'shape'");
        uint64_t v = 0;
        while (q < close && h[q] >= '0' && h[q] <= '9') {
            v = v * 10 + uint64_t(h[q++] - '0');
            if (v > kMaxElements) throw fail(".npy header: dimension too large");
        }
        shape.push_back(int64_t(v));
        q = skip_space(h, q);
        if (q < close && h[q] == ',')
            ++q;
        else if (q < close)
            throw fail(".npy header: bad 'shape'");
    }
    uint64_t elements = 0;
    try {
        elements = shape_elements(shape);
    } catch (const Error &e) {
        throw fail(e.what());
    }
    size_t non_unit = 0;
    for (int64_t d : shape) non_unit += d != 1;
    if (fortran && non_unit > 1)
        throw fail(".npy array is in Fortran order; only C order is supported");

    const size_t data_start = header_start + header_len;
    const uint64_t need = elements * dtype_size(dtype);
    if (bytes.size() - data_start != need)
        throw fail(fmt::format(".npy data is {} bytes but a {} array of shape {} takes {}",
                               bytes.size() - data_start, descr, shape_string(shape), need));
    Tensor t = Tensor::copy_of(dtype, shape, bytes.subspan(data_start));
    if (type->second) {  // big-endian: swap each element in place
        uint8_t *d = t.mutable_data();
        const size_t es = dtype_size(dtype);
        for (uint64_t i = 0; i < elements; ++i) std::reverse(d + i * es, d + (i + 1) * es);
    }
    return t;
}

namespace {

// Magic, version, length and the padded header dictionary: everything before the data.
std::string npy_header(const Tensor &t) {
    const char *descr = nullptr;
    for (const Descr &r : kDescrs)
        if (r.dtype == t.dtype()) descr = r.code;
    if (!descr) throw Error(fmt::format("cannot write a {} tensor as .npy", dtype_name(t.dtype())));
    std::string shape;
    for (int64_t d : t.shape()) shape += fmt::format("{}, ", d);
    if (t.rank() == 1)
        shape.pop_back();  // "(5,)"
    else if (!shape.empty())
        shape.resize(shape.size() - 2);
    std::string dict =
        fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr, shape);
    if (t.dtype() == DataType::bfloat16) dict += fmt::format(" {}", kBfloat16Note);
    // Pad with spaces and a newline so that the data starts on a 64-byte boundary.
    const bool v2 = dict.size() + 1 + 10 > 65535;
    const size_t prefix = v2 ? 12 : 10;
    const size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
    dict.append(total - prefix - dict.size() - 1, ' ');
    dict += '\n';
    std::string out(kMagic, kMagicSize);
    out += char(v2 ? 2 : 1);
    out += char(0);
    const size_t len = dict.size();
    out += char(len & 0xff);
    out += char((len >> 8) & 0xff);
    if (v2) {
        out += char((len >> 16) & 0xff);
        out += char((len >> 24) & 0xff);
    }
    return out + dict;
}

}  // namespace

std::vector<uint8_t> encode_npy(const Tensor &t) {
    const std::string header = npy_header(t);
    std::vector<uint8_t> out(header.begin(), header.end());
    out.insert(out.end(), t.data(), t.data() + t.nbytes());
    return out;
}

Tensor read_npy(const std::string &path) {
    const auto file = MappedFile::open(path);
    return decode_npy(file->bytes(), path);
}

void write_npy(const std::string &path, const Tensor &t) {
    const std::string header = npy_header(t);
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    if (!f) throw Error(path, std::nullopt, "cannot create the file");
    f.write(header.data(), std::streamsize(header.size()));
    if (t.nbytes()) f.write(reinterpret_cast<const char *>(t.data()), std::streamsize(t.nbytes()));
    f.close();
    if (!f) throw Error(path, std::nullopt, "write failed");
}

}  // namespace gguftool::runtime
