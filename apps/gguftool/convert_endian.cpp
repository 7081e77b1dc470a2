// gguftool convert-endian: a GGUF file in the other byte order — header, metadata and every
// tensor's data, block field by block field (gguftool/byte_order.hpp).
#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <memory>
#include <semaphore>
#include <thread>

#include "commands.hpp"
#include "gguftool/byte_order.hpp"
#include "gguftool/gguf_model_writer.hpp"
#include "output.hpp"

namespace gguftool::cli {
namespace convert_endian {
namespace {

struct Options {
    std::string in, out, to;
};

// Converted data goes out in pieces of about this size, whatever the tensor's.
constexpr uint64_t kChunkBytes = uint64_t{1} << 20;

// Reads `size` bytes at `offset` of `file` into `to` (pread: the mapping's pages would count
// against the process's resident memory, and cost a page fault per few pages).
void read_exactly(const gguf::File &file, const gguf::TensorInfo &t, uint64_t offset, uint64_t size,
                  uint8_t *to) {
    for (uint64_t got = 0; got < size;) {
        const ssize_t r = ::pread(file.fd(), to + got, size - got, off_t(offset + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0)
            throw Error(file.path(), offset + got,
                        fmt::format("tensor {}: cannot read: {}", t.name,
                                    r < 0 ? std::strerror(errno) : "the file ends there"));
        got += uint64_t(r);
    }
}

// Converts tensor `t` of `file` a chunk of whole blocks at a time (read, then converted in
// place) and hands the chunks on. A second thread reads and converts the next chunk while this
// one writes the last, so the data goes out about as fast as a copy. Two chunk buffers, shared by
// all tensors: memory stays bounded whatever the model's size.
using ChunkBuffers = std::array<std::vector<uint8_t>, 2>;

void produce_converted(const gguf::File &file, const gguf::TensorInfo &t, ChunkBuffers &buffers,
                       gguf::ByteSink &sink) {
    const uint32_t block = traits(t.type).type_size;
    const uint64_t chunk = std::max<uint64_t>(1, kChunkBytes / block) * block;
    const uint64_t chunks = (t.bytes + chunk - 1) / chunk;
    const auto size_of = [&](uint64_t i) { return std::min(chunk, t.bytes - i * chunk); };
    const auto convert = [&](uint64_t i, uint8_t *to) {
        read_exactly(file, t, t.file_offset + i * chunk, size_of(i), to);
        quant::swap_byte_order(t.type, to, to, size_of(i) / block);
    };
    for (auto &b : buffers) b.resize(std::max<size_t>(b.size(), std::min(chunk, t.bytes)));
    if (chunks < 2) {
        convert(0, buffers[0].data());
        return sink.write(buffers[0].data(), t.bytes);
    }
    // empty[k]: buffer k may be filled; full[k]: it holds the next chunk to write.
    std::binary_semaphore empty[2]{std::binary_semaphore(1), std::binary_semaphore(1)};
    std::binary_semaphore full[2]{std::binary_semaphore(0), std::binary_semaphore(0)};
    std::atomic<bool> stop{false};
    std::exception_ptr failure;  // of a read, handed to this thread with the chunk
    std::jthread worker([&] {
        for (uint64_t i = 0; i < chunks; ++i) {
            empty[i % 2].acquire();
            if (stop) return;
            try {
                convert(i, buffers[i % 2].data());
            } catch (...) {
                failure = std::current_exception();
                full[i % 2].release();
                return;
            }
            full[i % 2].release();
        }
    });
    try {
        for (uint64_t i = 0; i < chunks; ++i) {
            full[i % 2].acquire();
            if (failure) std::rethrow_exception(failure);
            sink.write(buffers[i % 2].data(), size_of(i));
            empty[i % 2].release();
        }
    } catch (...) {  // a write failed: let the worker finish, then report
        stop = true;
        empty[0].release();
        empty[1].release();
        throw;
    }
}

int run(const Options &opt) {
    const gguf::ByteOrder to = opt.to == gguf::byte_order_word(gguf::ByteOrder::big)
                                   ? gguf::ByteOrder::big
                                   : gguf::ByteOrder::little;
    const auto file = gguf::File::open(opt.in);
    if (file->byte_order() == to)
        throw Error(
            opt.in, std::nullopt,
            fmt::format("the file is already {}: nothing to convert", gguf::byte_order_name(to)));
    // Every tensor is checked before anything is written.
    for (const gguf::TensorInfo &t : file->tensors())
        if (const char *why = quant::byte_order_refusal(t.type))
            throw Error(opt.in, t.file_offset,
                        fmt::format("tensor {}: {} data cannot be converted to the other byte "
                                    "order: {}; nothing written",
                                    t.name, type_name(t.type), why));

    gguf::Header header;
    header.version = file->version();
    header.order = to;
    for (const gguf::MetadataEntry &e : file->metadata())
        header.metadata.push_back(gguf::MetadataItem::of(e));  // the encoder converts it
    header.alignment = gguf::alignment_of(header.metadata);
    std::vector<gguf::TensorData> data;
    ChunkBuffers buffers;
    for (const gguf::TensorInfo &t : file->tensors()) {
        header.tensors.push_back({std::string(t.name), static_cast<uint32_t>(t.type),
                                  std::vector<uint64_t>(t.ne.begin(), t.ne.begin() + t.n_dims), 0});
        if (quant::byte_order_changes(t.type))
            data.push_back(gguf::TensorData::produced(
                t.bytes, [&f = *file, &t, &buffers](gguf::ByteSink &sink) {
                    produce_converted(f, t, buffers, sink);
                }));
        else
            data.push_back(gguf::TensorData::copy(*file, t));  // bytes only: copied as they are
    }
    OutputFile out(opt.out);
    const uint64_t size = gguf::write_model(out, header, data);
    out.commit();
    out.keep();
    fmt::print("converted {} ({}) to {} ({}): {} {}, {} bytes\n", opt.in,
               gguf::byte_order_name(file->byte_order()), opt.out, gguf::byte_order_name(to),
               file->tensors().size(), plural(file->tensors().size(), "tensor"), size);
    return kExitOk;
}

}  // namespace
}  // namespace convert_endian

Runner add_convert_endian(CLI::App &app) {
    auto opt = std::make_shared<convert_endian::Options>();
    auto *cmd = app.add_subcommand(
        "convert-endian",
        "Write a GGUF file in the other byte order (header, metadata and tensor data)");
    cmd->add_option("IN", opt->in, "GGUF file to convert (one file; a shard of a split model too)")
        ->required();
    cmd->add_option("OUT", opt->out,
                    "The converted file (under a temporary name, renamed into place when complete)")
        ->required();
    cmd->add_option("--to", opt->to, "Byte order of OUT")
        ->required()
        ->check(CLI::IsMember({gguf::byte_order_word(gguf::ByteOrder::big),
                               gguf::byte_order_word(gguf::ByteOrder::little)}))
        ->type_name("big|little");
    return [opt] { return convert_endian::run(*opt); };
}

}  // namespace gguftool::cli
