// Host tensors: owned aligned storage or views of bytes kept alive by an owner.
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

#include "gguftool/runtime.hpp"

namespace gguftool::runtime {
namespace {

constexpr size_t kAlign = 64;

// Recently freed large blocks, handed out again for tensors of about the same size. Fresh memory
// costs a page fault per 4 KiB on first write, which is several times the cost of decoding into
// it; streaming runs free each output before computing the next of (often) the same size.
class BlockCache {
public:
    static BlockCache &get() {
        static BlockCache *cache = new BlockCache;  // never destroyed: tensors may outlive statics
        return *cache;
    }

    // A block of at least n bytes (and at most n + n/4), or nullptr.
    uint8_t *take(size_t n, size_t *size) {
        if (n < kMinBlock) return nullptr;
        std::lock_guard<std::mutex> lock(mutex_);
        for (auto it = blocks_.begin(); it != blocks_.end(); ++it) {
            if (it->size < n || it->size > n + n / 4) continue;
            uint8_t *p = it->data;
            *size = it->size;
            total_ -= it->size;
            blocks_.erase(it);
            return p;
        }
        return nullptr;
    }

    // Keeps a freed block, dropping the oldest to stay within kMaxTotal.
    void give(uint8_t *p, size_t size) {
        if (size < kMinBlock || size > kMaxTotal) return release(p);
        std::vector<uint8_t *> evicted;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            while (total_ + size > kMaxTotal) {
                evicted.push_back(blocks_.front().data);
                total_ -= blocks_.front().size;
                blocks_.erase(blocks_.begin());
            }
            blocks_.push_back({p, size});
            total_ += size;
        }
        for (uint8_t *e : evicted) release(e);
    }

    static uint8_t *fresh(size_t n) {
        return static_cast<uint8_t *>(::operator new(n, std::align_val_t(kAlign)));
    }
    static void release(uint8_t *p) { ::operator delete(p, std::align_val_t(kAlign)); }

private:
    static constexpr size_t kMinBlock = size_t(1) << 20;
    static constexpr size_t kMaxTotal = size_t(512) << 20;
    struct Block {
        uint8_t *data;
        size_t size;
    };
    std::mutex mutex_;
    std::vector<Block> blocks_;  // oldest first
    size_t total_ = 0;
};

struct AlignedStorage {
    uint8_t *p;
    size_t size;
    explicit AlignedStorage(size_t n) : size(n ? n : 1) {
        p = BlockCache::get().take(size, &size);
        if (!p) p = BlockCache::fresh(size);
    }
    ~AlignedStorage() { BlockCache::get().give(p, size); }
    AlignedStorage(const AlignedStorage &) = delete;
    AlignedStorage &operator=(const AlignedStorage &) = delete;
};

std::atomic<uint64_t> byte_limit{0};  // 0: physical memory

uint64_t physical_memory() {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : UINT64_MAX;
}

void check_dtype(DataType dtype) {
    if (dtype_size(dtype) == 0)
        throw Error(fmt::format("unsupported tensor element type {}", int(dtype)));
}

}  // namespace

void set_tensor_byte_limit(uint64_t bytes) {
    byte_limit = bytes;
}

uint64_t tensor_byte_limit() {
    static const uint64_t memory = physical_memory();
    const uint64_t limit = byte_limit;
    return limit ? limit : memory;
}

Tensor Tensor::allocate(DataType dtype, Shape shape) {
    check_dtype(dtype);
    Tensor t;
    t.elements_ = shape_elements(shape);
    t.dtype_ = dtype;
    t.shape_ = std::move(shape);
    const size_t n = t.nbytes();
    if (n > tensor_byte_limit())
        throw Error(
            fmt::format("a {} tensor of shape {} needs {} bytes, more than the {} bytes "
                        "allowed for one tensor (the machine's memory)",
                        dtype_name(dtype), shape_string(t.shape_), n, tensor_byte_limit()));
    std::shared_ptr<AlignedStorage> storage;
    try {
        storage = std::make_shared<AlignedStorage>(n);
    } catch (const std::bad_alloc &) {
        throw Error(fmt::format("cannot allocate {} bytes for a {} tensor of shape {}", n,
                                dtype_name(dtype), shape_string(t.shape_)));
    }
    t.data_ = storage->p;
    t.owner_ = std::move(storage);
    t.writable_ = true;
    return t;
}

Tensor Tensor::zeros(DataType dtype, Shape shape) {
    Tensor t = allocate(dtype, std::move(shape));
    if (t.nbytes()) std::memset(t.mutable_data(), 0, t.nbytes());
    return t;
}

Tensor Tensor::copy_of(DataType dtype, Shape shape, std::span<const uint8_t> bytes) {
    check_dtype(dtype);
    const uint64_t n = shape_elements(shape) * dtype_size(dtype);  // checked before allocating
    if (bytes.size() != n)
        throw Error(fmt::format("{} tensor of shape {} needs {} bytes, got {}", dtype_name(dtype),
                                shape_string(shape), n, bytes.size()));
    Tensor t = allocate(dtype, std::move(shape));
    if (!bytes.empty()) std::memcpy(t.mutable_data(), bytes.data(), bytes.size());
    return t;
}

Tensor Tensor::view(DataType dtype, Shape shape, std::span<const uint8_t> bytes,
                    std::shared_ptr<const void> owner) {
    check_dtype(dtype);
    const uint64_t n = shape_elements(shape);
    if (bytes.size() != n * dtype_size(dtype))
        throw Error(fmt::format("{} tensor of shape {} needs {} bytes, got {}", dtype_name(dtype),
                                shape_string(shape), n * dtype_size(dtype), bytes.size()));
    if (reinterpret_cast<uintptr_t>(bytes.data()) % dtype_size(dtype) != 0)
        return copy_of(dtype, std::move(shape), bytes);
    Tensor t;
    t.dtype_ = dtype;
    t.shape_ = std::move(shape);
    t.elements_ = n;
    t.data_ = bytes.data();
    t.owner_ = std::move(owner);
    return t;
}

uint8_t *Tensor::mutable_data() {
    if (!writable_) throw Error("tensor is a read-only view");
    return const_cast<uint8_t *>(data_);
}

Tensor Tensor::reshaped(Shape shape) const {
    const uint64_t n = shape_elements(shape);
    if (n != elements_)
        throw Error(fmt::format("cannot reshape {} elements of shape {} to {}", elements_,
                                shape_string(shape_), shape_string(shape)));
    Tensor t = *this;
    t.shape_ = std::move(shape);
    return t;
}

Tensor Tensor::viewed_as(DataType dtype, Shape shape) const {
    check_dtype(dtype);
    const uint64_t n = shape_elements(shape);
    if (n * dtype_size(dtype) != nbytes())
        throw Error(fmt::format("cannot view {} bytes of a {} tensor of shape {} as {} of shape {}",
                                nbytes(), dtype_name(dtype_), shape_string(shape_),
                                dtype_name(dtype), shape_string(shape)));
    if (reinterpret_cast<uintptr_t>(data_) % dtype_size(dtype) != 0)
        return copy_of(dtype, std::move(shape), bytes());
    Tensor t = *this;
    t.dtype_ = dtype;
    t.shape_ = std::move(shape);
    t.elements_ = n;
    return t;
}

}  // namespace gguftool::runtime
