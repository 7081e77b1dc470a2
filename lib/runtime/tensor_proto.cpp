// TensorProto <-> Tensor: raw_data, the typed repeated fields, and external data files.
#include "tensor_proto.hpp"

#include <fmt/format.h>

#include <bit>
#include <charconv>
#include <filesystem>

namespace gguftool::runtime {
namespace detail {
namespace {

static_assert(std::endian::native == std::endian::little,
              "ONNX raw data is little-endian; this runtime reads it in place");

uint64_t parse_u64(const std::string &text, const std::string &key, const std::string &where) {
    uint64_t v = 0;
    const char *end = text.data() + text.size();
    const auto [p, ec] = std::from_chars(text.data(), end, v);
    if (text.empty() || ec != std::errc() || p != end)
        throw Error(
            where, std::nullopt,
            fmt::format("external data {} \"{}\" is not a non-negative integer", key, text));
    return v;
}

// The location of external data: relative, and never leaving the base directory.
std::filesystem::path checked_location(const std::string &location, const std::string &where) {
    if (location.empty()) throw Error(where, std::nullopt, "external data has no location");
    if (location.find('\0') != std::string::npos)
        throw Error(where, std::nullopt, "external data location contains a NUL byte");
    const std::filesystem::path p(location);
    if (p.is_absolute() || p.has_root_name() || p.has_root_directory())
        throw Error(where, std::nullopt,
                    fmt::format("external data location \"{}\" is an absolute path; it must be "
                                "relative to the model's directory",
                                location));
    for (const auto &part : p)
        if (part == "..")
            throw Error(where, std::nullopt,
                        fmt::format("external data location \"{}\" leaves the model's directory",
                                    location));
    return p;
}

}  // namespace

std::span<const uint8_t> ExternalData::bytes(const onnx::TensorProto &proto, uint64_t nbytes,
                                             const std::string &where,
                                             std::shared_ptr<const void> *owner) {
    std::string location;
    std::optional<uint64_t> offset, length;
    bool has_location = false;
    for (const onnx::StringStringEntryProto &e : proto.external_data()) {
        if (e.key() == "location") {
            location = e.value();
            has_location = true;
        } else if (e.key() == "offset") {
            offset = parse_u64(e.value(), "offset", where);
        } else if (e.key() == "length") {
            length = parse_u64(e.value(), "length", where);
        }  // "checksum" and unknown keys are ignored
    }
    if (!has_location) throw Error(where, std::nullopt, "external data has no location");
    const std::filesystem::path rel = checked_location(location, where);
    const std::string path = (std::filesystem::path(base_dir_) / rel).string();

    auto it = files_.find(path);
    if (it == files_.end()) {
        std::shared_ptr<const MappedFile> m;
        try {
            m = MappedFile::open(path);
        } catch (const Error &e) {
            throw Error(where, std::nullopt, fmt::format("external data: {}", e.what()));
        }
        it = files_.emplace(path, std::move(m)).first;
    }
    const MappedFile &file = *it->second;
    const uint64_t off = offset.value_or(0);
    if (length && *length != nbytes)
        throw Error(where, std::nullopt,
                    fmt::format("external data length {} does not match the {} bytes of the "
                                "tensor's dims and type",
                                *length, nbytes));
    if (off > file.size() || nbytes > file.size() - off)
        throw Error(where, std::nullopt,
                    fmt::format("external data {} bytes at offset {} lie outside {} ({} bytes)",
                                nbytes, off, path, file.size()));
    *owner = it->second;
    return file.bytes().subspan(size_t(off), size_t(nbytes));
}

namespace {

template <class Field>
void check_count(const Field &field, uint64_t elements, const char *name,
                 const std::string &where) {
    if (uint64_t(field.size()) != elements)
        throw Error(
            where, std::nullopt,
            fmt::format("{} holds {} values but the dims give {}", name, field.size(), elements));
}

// Typed fields: each element narrowed to the tensor's type (as the ONNX proto documents). The
// count is checked against the dims before anything is allocated from them.
template <class Out, class Field>
Tensor from_field(DataType dtype, Shape shape, const Field &field, const char *name,
                  const std::string &where) {
    check_count(field, shape_elements(shape), name, where);
    Tensor t = Tensor::allocate(dtype, std::move(shape));
    Out *out = t.mutable_data_as<Out>();
    for (int i = 0; i < field.size(); ++i) out[i] = static_cast<Out>(field.Get(i));
    return t;
}

}  // namespace

Tensor tensor_from_proto(const onnx::TensorProto &proto, ExternalData &external,
                         const std::string &where, std::shared_ptr<const void> proto_owner) {
    const std::optional<DataType> dtype = dtype_from_onnx(proto.data_type());
    if (!dtype)
        throw Error(where, std::nullopt,
                    fmt::format("unsupported tensor element type {} (TensorProto.DataType)",
                                proto.data_type()));
    if (proto.has_segment())
        throw Error(where, std::nullopt, "segmented tensors are not supported");
    Shape shape(proto.dims().begin(), proto.dims().end());
    uint64_t elements = 0;
    try {
        elements = shape_elements(shape);
    } catch (const Error &e) {
        throw Error(where, std::nullopt, e.what());
    }
    const uint64_t nbytes = elements * dtype_size(*dtype);

    if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
        if (!proto.raw_data().empty())
            throw Error(where, std::nullopt, "tensor has both raw_data and external data");
        std::shared_ptr<const void> owner;
        const std::span<const uint8_t> bytes = external.bytes(proto, nbytes, where, &owner);
        return Tensor::view(*dtype, std::move(shape), bytes, std::move(owner));
    }
    if (proto.data_location() != onnx::TensorProto::DEFAULT)
        throw Error(where, std::nullopt,
                    fmt::format("unknown data_location {}", int(proto.data_location())));

    const std::string &raw = proto.raw_data();
    if (!raw.empty() || proto.has_raw_data()) {
        if (raw.size() != nbytes)
            throw Error(where, std::nullopt,
                        fmt::format("raw_data is {} bytes but a {} tensor of shape {} takes {}",
                                    raw.size(), dtype_name(*dtype), shape_string(shape), nbytes));
        const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t *>(raw.data()),
                                             raw.size());
        if (proto_owner)
            return Tensor::view(*dtype, std::move(shape), bytes, std::move(proto_owner));
        return Tensor::copy_of(*dtype, std::move(shape), bytes);
    }

    try {
        switch (*dtype) {
            case DataType::float32:
                return from_field<float>(*dtype, shape, proto.float_data(), "float_data", where);
            case DataType::float64:
                return from_field<double>(*dtype, shape, proto.double_data(), "double_data", where);
            case DataType::int64:
                return from_field<int64_t>(*dtype, shape, proto.int64_data(), "int64_data", where);
            case DataType::uint64:
                return from_field<uint64_t>(*dtype, shape, proto.uint64_data(), "uint64_data",
                                            where);
            case DataType::uint32:
                return from_field<uint32_t>(*dtype, shape, proto.uint64_data(), "uint64_data",
                                            where);
            case DataType::int32:
                return from_field<int32_t>(*dtype, shape, proto.int32_data(), "int32_data", where);
            case DataType::int16:
                return from_field<int16_t>(*dtype, shape, proto.int32_data(), "int32_data", where);
            case DataType::int8:
                return from_field<int8_t>(*dtype, shape, proto.int32_data(), "int32_data", where);
            case DataType::uint16:
            case DataType::float16:
            case DataType::bfloat16:  // the 16 bits of the value in the low half of each int32
                return from_field<uint16_t>(*dtype, shape, proto.int32_data(), "int32_data", where);
            case DataType::uint8:
                return from_field<uint8_t>(*dtype, shape, proto.int32_data(), "int32_data", where);
            case DataType::bool_: {
                check_count(proto.int32_data(), shape_elements(shape), "int32_data", where);
                Tensor t = Tensor::allocate(*dtype, shape);
                uint8_t *out = t.mutable_data();
                for (int i = 0; i < proto.int32_data_size(); ++i) out[i] = proto.int32_data(i) != 0;
                return t;
            }
            case DataType::undefined:
                break;
        }
    } catch (const Error &e) {
        if (e.where().empty()) throw Error(where, std::nullopt, e.what());
        throw;
    }
    throw Error(where, std::nullopt, "tensor has no data");
}

}  // namespace detail

Tensor tensor_from_proto(const onnx::TensorProto &proto, const std::string &base_dir,
                         const std::string &where) {
    detail::ExternalData external(base_dir);
    return detail::tensor_from_proto(proto, external, where, nullptr);
}

void tensor_to_proto(const Tensor &t, const std::string &name, onnx::TensorProto &out) {
    out.Clear();
    out.set_name(name);
    out.set_data_type(int32_t(t.dtype()));
    for (int64_t d : t.shape()) out.add_dims(d);
    out.set_raw_data(t.data(), t.nbytes());
}

}  // namespace gguftool::runtime
