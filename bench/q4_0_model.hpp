// Generated multi-GB GGUF files for the benchmarks that need a big model on disk (bench_to_onnx,
// bench_hash, bench_copy): q4_0 tensors of 4096-element rows holding pattern bytes (valid fp16
// scales, varied codes), written without holding the model in memory.
#pragma once

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "raw_gguf.hpp"

namespace gguftool::bench {

inline constexpr uint64_t kQ4_0Row = 4096;                     // elements per row
inline constexpr uint64_t kQ4_0RowBytes = kQ4_0Row / 32 * 18;  // 32 elements in 18 bytes

struct Q4_0Tensor {
    std::string name;
    uint64_t rows;
};

// A GGUF v3 file of `tensors` (q4_0, 4096 x rows each), data aligned to 32: the header and tensor
// infos by the kit's raw writer, then the data streamed in chunks.
inline void write_q4_0_model(const std::string &path, const std::vector<Q4_0Tensor> &tensors) {
    constexpr uint32_t kQ4_0 = 2, kString = 8;
    constexpr uint64_t kAlignment = 32;
    testkit::RawGguf header;
    header.header(3, tensors.size(), 1).str("general.architecture").u32(kString).str("bench");
    uint64_t offset = 0;
    for (const Q4_0Tensor &t : tensors) {
        header.tensor(t.name, {kQ4_0Row, t.rows}, kQ4_0, offset);
        offset += (t.rows * kQ4_0RowBytes + kAlignment - 1) / kAlignment * kAlignment;
    }
    header.pad_to(kAlignment);

    std::FILE *f = std::fopen(path.c_str(), "wb");
    if (!f) throw std::runtime_error("cannot create " + path);
    uint64_t pos = 0;
    const auto write = [&](const void *p, size_t n) {
        if (std::fwrite(p, 1, n, f) != n) {
            std::fclose(f);
            throw std::runtime_error("write failed");
        }
        pos += n;
    };
    write(header.bytes().data(), header.bytes().size());
    std::vector<uint8_t> chunk(18 << 16);  // 65536 blocks
    uint32_t x = 12345;
    for (size_t b = 0; b < chunk.size(); b += 18) {
        chunk[b] = 0x00;
        chunk[b + 1] = 0x2c;  // d = 0.0625
        for (int j = 2; j < 18; ++j) chunk[b + j] = uint8_t((x = x * 1664525u + 1013904223u) >> 24);
    }
    static const char zeros[kAlignment] = {};
    for (const Q4_0Tensor &t : tensors) {
        const uint64_t bytes = t.rows * kQ4_0RowBytes;
        for (uint64_t done = 0; done < bytes; done += chunk.size())
            write(chunk.data(), std::min<uint64_t>(chunk.size(), bytes - done));
        write(zeros, (kAlignment - pos % kAlignment) % kAlignment);
    }
    if (std::fclose(f) != 0) throw std::runtime_error("close failed");
}

// The benchmarks' usual model: `n` tensors "blk.N.ffn_up.weight" of 4096 x 16384 elements (36 MiB).
inline constexpr uint64_t kUniformRows = 16384;
inline constexpr uint64_t kUniformTensorBytes = kUniformRows * kQ4_0RowBytes;
inline void write_uniform_q4_0_model(const std::string &path, int n) {
    std::vector<Q4_0Tensor> tensors;
    for (int i = 0; i < n; ++i)
        tensors.push_back({fmt::format("blk.{}.ffn_up.weight", i), kUniformRows});
    write_q4_0_model(path, tensors);
}

// The number of uniform tensors that make about `gib` GiB.
inline int uniform_tensors_for(double gib) {
    return std::max(1, int(gib * double(1ull << 30) / double(kUniformTensorBytes) + 0.5));
}

// Waits for the file to be written back (so that no writeback runs during the timings), then
// reads it once so that every run finds it in the page cache.
inline void warm_cache(const std::string &path) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) throw std::runtime_error("cannot open " + path);
    if (::fsync(fd) != 0) throw std::runtime_error("cannot sync " + path);
    std::vector<char> buf(1 << 20);
    while (::read(fd, buf.data(), buf.size()) > 0) {
    }
    ::close(fd);
}

}  // namespace gguftool::bench
