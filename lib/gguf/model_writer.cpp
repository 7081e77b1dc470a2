// write_model: a GGUF file streamed into an OutputFile.
#include <fmt/format.h>

#include <algorithm>

#include "gguftool/gguf_model_writer.hpp"

namespace gguftool::gguf {
namespace {

// Bytes copied per copy_from call: paces the progress callback.
constexpr uint64_t kCopyPiece = uint64_t{64} << 20;

// Header bytes go to the output through the encoder's buffer.
class OutputSink final : public ByteSink {
public:
    explicit OutputSink(OutputFile &out) : out_(out) {}
    void write(const void *data, size_t size) override { out_.write(data, size); }

private:
    OutputFile &out_;
};

// A producer's bytes, counted against the tensor's size as they come.
class TensorSink final : public ByteSink {
public:
    TensorSink(OutputFile &out, const TensorHeader &t, uint64_t size)
        : out_(out), tensor_(t), size_(size) {}
    void write(const void *data, size_t size) override {
        if (size > size_ - done_)
            throw Error(out_.final_path(), out_.size(),
                        fmt::format("tensor {}: its producer wrote more than its {} bytes",
                                    tensor_.name, size_));
        out_.write(data, size);
        done_ += size;
    }
    uint64_t done() const { return done_; }

private:
    OutputFile &out_;
    const TensorHeader &tensor_;
    uint64_t size_;
    uint64_t done_ = 0;
};

uint64_t lay_out_data(Header &header, const std::vector<TensorData> &data) {
    // A reader takes the alignment from the metadata: a file laid out otherwise is unreadable.
    if (header.alignment != alignment_of(header.metadata))
        throw Error(fmt::format("GGUF writer: data aligned to {} but general.alignment says {}",
                                header.alignment, alignment_of(header.metadata)));
    std::vector<uint64_t> sizes;
    sizes.reserve(data.size());
    for (const TensorData &d : data) sizes.push_back(d.size);
    return lay_out(header, sizes);
}

}  // namespace

TensorData TensorData::copy(const File &shard, const TensorInfo &t) {
    TensorData d;
    d.size = t.bytes;
    d.fd = shard.fd();
    d.offset = t.file_offset;
    d.path = shard.path();
    return d;
}

TensorData TensorData::produced(uint64_t size, std::function<void(ByteSink &)> produce) {
    TensorData d;
    d.size = size;
    d.produce = std::move(produce);
    return d;
}

uint64_t planned_size(Header &header, const std::vector<TensorData> &data) {
    const uint64_t data_size = lay_out_data(header, data);
    return header_size(header) + data_size;
}

uint64_t write_model(OutputFile &out, Header &header, const std::vector<TensorData> &data,
                     const WriteProgress &progress) {
    if (out.size() != 0)
        throw Error(out.final_path(), out.size(), "GGUF writer: the output is not empty");
    lay_out_data(header, data);
    OutputSink sink(out);
    encode_header(header, sink);
    const uint64_t data_start = out.size();

    uint64_t total = 0, done = 0;
    for (const TensorData &d : data) total += d.size;
    for (size_t i = 0; i < data.size(); ++i) {
        const TensorData &d = data[i];
        const TensorHeader &t = header.tensors[i];
        if (out.size() - data_start != t.offset)  // lay_out's rule and the padding below agree
            throw Error(out.final_path(), out.size(),
                        fmt::format("tensor {}: at data offset {}, laid out at {}", t.name,
                                    out.size() - data_start, t.offset));
        if (d.produce) {
            TensorSink bytes(out, t, d.size);
            d.produce(bytes);
            if (bytes.done() != d.size)
                throw Error(out.final_path(), out.size(),
                            fmt::format("tensor {}: its producer wrote {} bytes, expected {}",
                                        t.name, bytes.done(), d.size));
            done += d.size;
            if (progress) progress(done, total);
        } else {
            for (uint64_t copied = 0; copied < d.size;) {
                const uint64_t n = std::min(kCopyPiece, d.size - copied);
                out.copy_from(d.fd, d.offset + copied, n, d.path);
                copied += n;
                done += n;
                if (progress) progress(done, total);
            }
        }
        out.pad_to(header.alignment);
    }
    return out.size();
}

}  // namespace gguftool::gguf
