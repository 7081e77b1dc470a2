// gguf::Writer: serializing metadata, tensor infos and tensor data into a GGUF file.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "endian.hpp"
#include "gguftool/gguf_writer.hpp"

namespace gguftool::gguf {
namespace {

// Appends values to a byte vector in the file's byte order.
class Sink {
public:
    Sink(std::vector<uint8_t> &out, ByteOrder order) : out_(out), order_(order) {}

    template <class U>
    void put(U v) {
        uint8_t b[sizeof(U)];
        detail::store(b, v, order_);
        bytes(b, sizeof b);
    }
    void bytes(const void *p, size_t n) {
        const size_t at = out_.size();
        out_.resize(at + n);
        if (n) std::memcpy(out_.data() + at, p, n);
    }
    void string(const std::string &s) {
        put<uint64_t>(s.size());
        bytes(s.data(), s.size());
    }
    void value(const MetaValue &v) {
        switch (detail::scalar_size(v.type())) {
            case 1:
                return put(static_cast<uint8_t>(v.bits()));
            case 2:
                return put(static_cast<uint16_t>(v.bits()));
            case 4:
                return put(static_cast<uint32_t>(v.bits()));
            case 8:
                return put(v.bits());
        }
        if (v.type() == ValueType::string) return string(v.string());
        put(static_cast<uint32_t>(v.element_type()));
        put<uint64_t>(v.elements().size());
        for (const MetaValue &e : v.elements()) value(e);
    }

private:
    std::vector<uint8_t> &out_;
    ByteOrder order_;
};

uint64_t align_up(uint64_t x, uint64_t a) {
    return x + (a - x % a) % a;
}

}  // namespace

MetaValue MetaValue::f32(float v) {
    return scalar(ValueType::float32, std::bit_cast<uint32_t>(v));
}
MetaValue MetaValue::f64(double v) {
    return scalar(ValueType::float64, std::bit_cast<uint64_t>(v));
}

MetaValue MetaValue::str(std::string v) {
    MetaValue m;
    m.type_ = ValueType::string;
    m.str_ = std::move(v);
    return m;
}

MetaValue MetaValue::array(ValueType element_type, std::vector<MetaValue> elements) {
    for (const MetaValue &e : elements)
        if (e.type() != element_type)
            throw Error(fmt::format("array of {} given an element of type {}",
                                    value_type_name(element_type), value_type_name(e.type())));
    MetaValue m;
    m.type_ = ValueType::array;
    m.element_type_ = element_type;
    m.elements_ = std::move(elements);
    return m;
}

Writer &Writer::add(std::string key, MetaValue value) {
    metadata_.emplace_back(std::move(key), std::move(value));
    return *this;
}

Writer &Writer::set_alignment(uint64_t alignment) {
    alignment_ = alignment;
    return *this;
}

Writer &Writer::add_tensor(std::string name, GgmlType type, std::vector<uint64_t> dims,
                           std::vector<uint8_t> data, std::optional<uint64_t> offset) {
    return add_tensor(std::move(name), static_cast<uint32_t>(type), std::move(dims),
                      std::move(data), offset);
}

Writer &Writer::add_tensor(std::string name, uint32_t type_id, std::vector<uint64_t> dims,
                           std::vector<uint8_t> data, std::optional<uint64_t> offset) {
    tensors_.push_back({std::move(name), type_id, std::move(dims), std::move(data), offset});
    return *this;
}

uint64_t Writer::alignment() const {
    if (alignment_) return *alignment_;
    for (const auto &[key, value] : metadata_)
        if (key == "general.alignment" && value.type() == ValueType::uint32 && value.bits() != 0)
            return value.bits();
    return 32;
}

std::vector<uint8_t> Writer::to_bytes() const {
    const uint64_t align = alignment();
    if (align == 0) throw Error("GGUF writer: alignment is 0");

    // Place the data: explicit offsets as given, the rest after the furthest data so far.
    std::vector<uint64_t> offsets;
    uint64_t data_size = 0;
    for (const Tensor &t : tensors_) {
        offsets.push_back(t.offset.value_or(align_up(data_size, align)));
        data_size = std::max(data_size, offsets.back() + t.data.size());
    }
    data_size = align_up(data_size, align);

    std::vector<uint8_t> out;
    Sink sink(out, order_);
    sink.bytes("GGUF", 4);
    sink.put(version_);
    sink.put<uint64_t>(tensors_.size());
    sink.put<uint64_t>(metadata_.size());
    for (const auto &[key, value] : metadata_) {
        sink.string(key);
        sink.put(static_cast<uint32_t>(value.type()));
        sink.value(value);
    }
    for (size_t i = 0; i < tensors_.size(); ++i) {
        const Tensor &t = tensors_[i];
        sink.string(t.name);
        sink.put(static_cast<uint32_t>(t.dims.size()));
        for (const uint64_t d : t.dims) sink.put(d);
        sink.put(t.type);
        sink.put(offsets[i]);
    }
    // Like ggml's writer, pad to the data section even when there are no tensors.
    const size_t data_offset = align_up(out.size(), align);
    out.resize(data_offset + data_size, 0);
    for (size_t i = 0; i < tensors_.size(); ++i)
        std::copy(tensors_[i].data.begin(), tensors_[i].data.end(),
                  out.begin() + static_cast<ptrdiff_t>(data_offset + offsets[i]));
    return out;
}

void Writer::write(const std::string &path) const {
    const std::vector<uint8_t> bytes = to_bytes();
    std::string tmp = path + ".tmp-XXXXXX";
    const int fd = ::mkstemp(tmp.data());
    if (fd < 0)
        throw Error(path, std::nullopt,
                    std::string("cannot create a temporary file: ") + std::strerror(errno));
    const auto fail = [&](const char *what) {
        const int err = errno;
        ::close(fd);
        ::unlink(tmp.c_str());
        throw Error(path, std::nullopt, std::string(what) + std::strerror(err));
    };
    size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) fail("cannot write: ");
        done += static_cast<size_t>(n);
    }
    if (::fchmod(fd, 0644) != 0) fail("cannot set permissions: ");
    if (::close(fd) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        throw Error(path, std::nullopt, std::string("cannot write: ") + std::strerror(err));
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        throw Error(path, std::nullopt,
                    std::string("cannot rename into place: ") + std::strerror(err));
    }
}

}  // namespace gguftool::gguf
