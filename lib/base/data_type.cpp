#include "gguftool/data_type.hpp"

namespace gguftool {
namespace {

struct DtypeRow {
    DataType type;
    size_t size;
    const char *name;
};

constexpr DtypeRow kDtypes[] = {
    {DataType::float32, 4, "float"},     {DataType::uint8, 1, "uint8"},
    {DataType::int8, 1, "int8"},         {DataType::uint16, 2, "uint16"},
    {DataType::int16, 2, "int16"},       {DataType::int32, 4, "int32"},
    {DataType::int64, 8, "int64"},       {DataType::bool_, 1, "bool"},
    {DataType::float16, 2, "float16"},   {DataType::float64, 8, "double"},
    {DataType::uint32, 4, "uint32"},     {DataType::uint64, 8, "uint64"},
    {DataType::bfloat16, 2, "bfloat16"},
};

const DtypeRow *find(DataType t) {
    for (const DtypeRow &r : kDtypes)
        if (r.type == t) return &r;
    return nullptr;
}

}  // namespace

std::optional<DataType> dtype_from_onnx(int64_t onnx_type) {
    for (const DtypeRow &r : kDtypes)
        if (static_cast<int64_t>(r.type) == onnx_type) return r.type;
    return std::nullopt;
}

size_t dtype_size(DataType t) {
    const DtypeRow *r = find(t);
    return r ? r->size : 0;
}

const char *dtype_name(DataType t) {
    const DtypeRow *r = find(t);
    return r ? r->name : "undefined";
}

bool is_floating(DataType t) {
    return t == DataType::float32 || t == DataType::float16 || t == DataType::bfloat16 ||
           t == DataType::float64;
}

bool is_integer(DataType t) {
    switch (t) {
        case DataType::uint8:
        case DataType::int8:
        case DataType::uint16:
        case DataType::int16:
        case DataType::uint32:
        case DataType::int32:
        case DataType::uint64:
        case DataType::int64:
            return true;
        default:
            return false;
    }
}

bool is_unsigned(DataType t) {
    return t == DataType::uint8 || t == DataType::uint16 || t == DataType::uint32 ||
           t == DataType::uint64;
}

}  // namespace gguftool
