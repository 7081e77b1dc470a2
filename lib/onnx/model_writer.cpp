// Writing the model without ever holding the tensor bytes in a protobuf message.
//
// Inline: a protobuf message is its fields in order, each a tag, (for messages and bytes) a
// varint length, and the contents. We serialize the small parts with protobuf and write the
// frame of each payload initializer ourselves, in field-number order, so the file is byte for
// byte what ModelProto::SerializeToString would produce for the whole model:
//
//   ModelProto fields 1-6 | graph (7): [ GraphProto fields 1-5: nodes, name, constants |
//     initializer (5) per payload: [ TensorProto dims, data_type, name | raw_data (9) ... ] |
//     GraphProto fields 10+: outputs ] | ModelProto fields 8+: opset_import, metadata_props
//
// External: the payloads go to the data file first; the model, whose initializers only point
// into that file, is small and serialized as usual.
#include "model_writer.hpp"

#include <fmt/format.h>

#include "gguftool/error.hpp"
#include "gguftool/onnx_export.hpp"

namespace gguftool::onnx_export::detail {
namespace {

size_t varint_size(uint64_t v) {
    size_t n = 1;
    for (; v >= 0x80; v >>= 7) ++n;
    return n;
}

std::string varint(uint64_t v) {
    std::string s;
    for (; v >= 0x80; v >>= 7) s.push_back(static_cast<char>(v | 0x80));
    s.push_back(static_cast<char>(v));
    return s;
}

// A length-delimited field (wire type 2) holding `size` bytes: its tag and length. Every field
// number used here is below 16, so the tag is one byte.
std::string frame(int field, uint64_t size) {
    return static_cast<char>(field << 3 | 2) + varint(size);
}

uint64_t field_size(uint64_t size) {
    return 1 + varint_size(size) + size;
}

// A payload's TensorProto without its data.
onnx::TensorProto tensor_header(const Payload &p) {
    onnx::TensorProto t;
    for (int64_t d : p.dims) t.add_dims(d);
    t.set_data_type(onnx_number(p.data_type));
    t.set_name(p.name);
    return t;
}

// The header plus, when there are bytes, the raw_data frame (the bytes themselves follow).
std::string tensor_head(const Payload &p) {
    std::string s = tensor_header(p).SerializeAsString();
    if (p.bytes) s += frame(onnx::TensorProto::kRawDataFieldNumber, p.bytes);
    return s;
}

uint64_t total_bytes(const std::vector<Payload> &payloads) {
    uint64_t n = 0;
    for (const Payload &p : payloads) n += p.bytes;
    return n;
}

// Forwards payload bytes to the file, counting them for the progress callback.
class ProgressSink final : public Sink {
public:
    ProgressSink(OutputFile &out, uint64_t total, const Progress &progress)
        : out_(out), total_(total), progress_(progress) {}

    void write(const uint8_t *data, size_t size) override {
        out_.write(data, size);
        done_ += size;
        if (progress_) progress_(done_, total_);
    }
    void copy(const gguf::TensorData &source) override {
        for (uint64_t copied = 0; copied < source.size;) {
            const uint64_t n = std::min<uint64_t>(kChunkBytes, source.size - copied);
            out_.copy_from(source.fd, source.offset + copied, n, source.path);
            copied += n;
            done_ += n;
            if (progress_) progress_(done_, total_);
        }
    }
    // Runs one payload's producer and checks it wrote what it declared.
    void put(const Payload &p) {
        const uint64_t before = done_;
        p.write(*this);
        if (done_ - before != p.bytes)
            throw Error(fmt::format("initializer {}: wrote {} bytes, expected {}", p.name,
                                    done_ - before, p.bytes));
    }

private:
    OutputFile &out_;
    uint64_t total_;
    const Progress &progress_;
    uint64_t done_ = 0;
};

}  // namespace

// The model split around the graph, and the graph around its initializers, at field boundaries,
// with each payload's TensorProto head: everything but the payload bytes, serialized.
InlineLayout layout_inline(const onnx::ModelProto &model, const std::vector<Payload> &payloads) {
    onnx::ModelProto head = model;
    head.clear_graph();
    head.clear_opset_import();
    head.clear_metadata_props();
    head.clear_training_info();
    head.clear_functions();
    onnx::ModelProto tail;
    *tail.mutable_opset_import() = model.opset_import();
    *tail.mutable_metadata_props() = model.metadata_props();
    *tail.mutable_training_info() = model.training_info();
    *tail.mutable_functions() = model.functions();

    const onnx::GraphProto &g = model.graph();
    onnx::GraphProto graph_head;
    *graph_head.mutable_node() = g.node();
    graph_head.set_name(g.name());
    *graph_head.mutable_initializer() = g.initializer();
    onnx::GraphProto graph_tail = g;
    graph_tail.clear_node();
    graph_tail.clear_name();
    graph_tail.clear_initializer();

    InlineLayout l;
    l.model_head = head.SerializeAsString();
    l.model_tail = tail.SerializeAsString();
    l.graph_head = graph_head.SerializeAsString();
    l.graph_tail = graph_tail.SerializeAsString();
    l.graph_size = l.graph_head.size() + l.graph_tail.size();
    for (const Payload &p : payloads) {
        l.tensor_heads.push_back(tensor_head(p));
        l.graph_size += field_size(l.tensor_heads.back().size() + p.bytes);
    }
    l.total_size = l.model_head.size() + field_size(l.graph_size) + l.model_tail.size();
    return l;
}

void write_inline(const InlineLayout &layout, const std::vector<Payload> &payloads, OutputFile &out,
                  const Progress &progress) {
    const auto put = [&](const std::string &s) { out.write(s.data(), s.size()); };
    put(layout.model_head);
    put(frame(onnx::ModelProto::kGraphFieldNumber, layout.graph_size));
    put(layout.graph_head);
    ProgressSink sink(out, total_bytes(payloads), progress);
    for (size_t i = 0; i < payloads.size(); ++i) {
        const std::string &head = layout.tensor_heads[i];
        put(frame(onnx::GraphProto::kInitializerFieldNumber, head.size() + payloads[i].bytes));
        put(head);
        sink.put(payloads[i]);
    }
    put(layout.graph_tail);
    put(layout.model_tail);
}

void write_external(onnx::ModelProto model, const std::vector<Payload> &payloads, OutputFile &out,
                    OutputFile &data, const std::string &location, const Progress &progress) {
    onnx::GraphProto &graph = *model.mutable_graph();
    ProgressSink sink(data, total_bytes(payloads), progress);
    for (const Payload &p : payloads) {
        onnx::TensorProto &t = *graph.add_initializer();
        t = tensor_header(p);
        if (p.bytes == 0) continue;  // an empty tensor needs no data
        data.pad_to(kExternalAlignment);
        const uint64_t offset = data.size();
        sink.put(p);
        t.set_data_location(onnx::TensorProto::EXTERNAL);
        const auto entry = [&](const char *key, std::string value) {
            onnx::StringStringEntryProto &e = *t.add_external_data();
            e.set_key(key);
            e.set_value(std::move(value));
        };
        entry("location", location);
        entry("offset", std::to_string(offset));
        entry("length", std::to_string(p.bytes));
    }
    const std::string bytes = model.SerializeAsString();
    if (bytes.size() > kProtobufLimit)
        throw Error(out.final_path(), std::nullopt,
                    fmt::format("the model without its tensor data is still {} bytes, over "
                                "protobuf's 2 GiB limit",
                                bytes.size()));
    out.write(bytes.data(), bytes.size());
}

}  // namespace gguftool::onnx_export::detail
