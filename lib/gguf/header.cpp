// The GGUF header encoder every writer shares, the layout rule of the data section, and
// MetaValue (values to write).
#include <fmt/format.h>

#include <bit>
#include <cstring>

#include "endian.hpp"
#include "gguftool/gguf_header.hpp"

namespace gguftool::gguf {
namespace {

// A read scalar's bits, in host order.
uint64_t read_bits(const Value &v) {
    switch (detail::scalar_size(v.type())) {
        case 1:
            return v.data()[0];
        case 2:
            return detail::load<uint16_t>(v.data(), v.byte_order());
        case 4:
            return detail::load<uint32_t>(v.data(), v.byte_order());
        default:
            return detail::load<uint64_t>(v.data(), v.byte_order());
    }
}

// Encodes in the header's byte order, buffering small pieces for the sink; counts what it wrote.
class Encoder {
public:
    Encoder(ByteSink &out, ByteOrder order) : out_(out), order_(order) {}
    ~Encoder() = default;  // flush() is explicit: a destructor must not throw

    template <class U>
    void put(U v) {
        uint8_t b[sizeof(U)];
        detail::store(b, v, order_);
        bytes(b, sizeof b);
    }
    void bytes(const void *p, size_t n) {
        written_ += n;
        if (used_ + n > sizeof buffer_) flush();
        if (n >= sizeof buffer_) {
            out_.write(p, n);
            return;
        }
        std::memcpy(buffer_ + used_, p, n);
        used_ += n;
    }
    void string(std::string_view s) {
        put<uint64_t>(s.size());
        bytes(s.data(), s.size());
    }
    void zeros(uint64_t n) {
        static constexpr uint8_t kZeros[256] = {};
        for (; n > 0; n -= std::min<uint64_t>(n, sizeof kZeros))
            bytes(kZeros, std::min<uint64_t>(n, sizeof kZeros));
    }

    // A value after its type tag: a scalar's bits, a string, or an array's element type, count
    // and elements. The same rule for new values and for values read from a file.
    void value(const MetaValue &v) {
        if (detail::scalar_size(v.type())) return scalar(v.type(), v.bits());
        if (v.type() == ValueType::string) return string(v.string());
        array(v.element_type(), v.elements().size(), [&](auto &&f) {
            for (const MetaValue &e : v.elements()) f(e);
        });
    }
    void value(const Value &v) {
        if (detail::scalar_size(v.type())) return scalar(v.type(), read_bits(v));
        if (v.type() == ValueType::string) return string(v.as_string());
        array(v.array_type(), v.array_size(), [&](auto &&f) { v.for_each_element(f); });
    }

    void flush() {
        if (used_) out_.write(buffer_, used_);
        used_ = 0;
    }
    uint64_t written() const { return written_; }

private:
    void scalar(ValueType t, uint64_t bits) {
        switch (detail::scalar_size(t)) {
            case 1:
                return put(static_cast<uint8_t>(bits));
            case 2:
                return put(static_cast<uint16_t>(bits));
            case 4:
                return put(static_cast<uint32_t>(bits));
            default:
                return put(bits);
        }
    }
    template <class Each>
    void array(ValueType element_type, uint64_t count, Each &&each) {
        put(static_cast<uint32_t>(element_type));
        put<uint64_t>(count);
        each([&](const auto &e) { value(e); });
    }
    ByteSink &out_;
    ByteOrder order_;
    uint8_t buffer_[65536];
    size_t used_ = 0;
    uint64_t written_ = 0;
};

class VectorSink final : public ByteSink {
public:
    explicit VectorSink(std::vector<uint8_t> &out) : out_(out) {}
    void write(const void *data, size_t size) override {
        const auto *p = static_cast<const uint8_t *>(data);
        out_.insert(out_.end(), p, p + size);
    }

private:
    std::vector<uint8_t> &out_;
};

class CountingSink final : public ByteSink {
public:
    void write(const void *, size_t size) override { bytes += size; }
    uint64_t bytes = 0;
};

void encode_tensor_info(Encoder &e, const TensorHeader &t) {
    e.string(t.name);
    e.put(static_cast<uint32_t>(t.dims.size()));
    for (const uint64_t d : t.dims) e.put(d);
    e.put(t.type);
    e.put(t.offset);
}

void check_alignment(const Header &h) {
    if (h.alignment == 0) throw Error("GGUF writer: alignment is 0");
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

MetaValue MetaValue::from_value(const Value &v) {
    switch (v.type()) {
        case ValueType::string:
            return str(std::string(v.as_string()));
        case ValueType::array: {
            MetaValue m;
            m.type_ = ValueType::array;
            m.element_type_ = v.array_type();
            // Bounded by the file: the reader checked that the elements are in it.
            m.elements_.reserve(v.array_size());
            v.for_each_element([&](const Value &e) { m.elements_.push_back(from_value(e)); });
            return m;
        }
        default:
            return scalar(v.type(), read_bits(v));
    }
}

ValueType MetadataItem::type() const {
    return std::visit([](const auto &v) { return v.type(); }, value);
}

uint64_t alignment_of(std::span<const MetadataItem> metadata) {
    for (const MetadataItem &m : metadata) {
        if (m.key != kAlignmentKey || m.type() != ValueType::uint32) continue;
        const uint64_t a = std::visit(
            [](const auto &v) -> uint64_t {
                if constexpr (std::is_same_v<std::decay_t<decltype(v)>, MetaValue>)
                    return v.bits();
                else
                    return v.as_uint();
            },
            m.value);
        if (a != 0) return a;
    }
    return kDefaultAlignment;
}

void encode_header(const Header &h, ByteSink &out) {
    check_alignment(h);
    Encoder e(out, h.order);
    e.bytes("GGUF", 4);
    e.put(h.version);
    e.put<uint64_t>(h.tensors.size());
    e.put<uint64_t>(h.metadata.size());
    for (const MetadataItem &m : h.metadata) {
        e.string(m.key);
        e.put(static_cast<uint32_t>(m.type()));
        std::visit([&](const auto &v) { e.value(v); }, m.value);
    }
    for (const TensorHeader &t : h.tensors) encode_tensor_info(e, t);
    e.zeros(align_up(e.written(), h.alignment) - e.written());
    e.flush();
}

std::vector<uint8_t> encode_header(const Header &h) {
    std::vector<uint8_t> out;
    VectorSink sink(out);
    encode_header(h, sink);
    return out;
}

uint64_t header_size(const Header &h) {
    CountingSink sink;
    encode_header(h, sink);
    return sink.bytes;
}

uint64_t tensor_info_size(const TensorHeader &t) {
    CountingSink sink;
    Encoder e(sink, ByteOrder::little);  // sizes do not depend on the byte order
    encode_tensor_info(e, t);
    return e.written();
}

uint64_t lay_out(Header &h, std::span<const uint64_t> sizes) {
    check_alignment(h);
    if (sizes.size() != h.tensors.size())
        throw Error(fmt::format("GGUF writer: {} tensor sizes for {} tensors", sizes.size(),
                                h.tensors.size()));
    uint64_t end = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
        h.tensors[i].offset = align_up(end, h.alignment);
        end = h.tensors[i].offset + sizes[i];
    }
    return align_up(end, h.alignment);
}

}  // namespace gguftool::gguf
