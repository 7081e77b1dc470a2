// MatMul and Gemm on the CPU: OpenBLAS's cblas_sgemm (float32) and cblas_dgemm (float64), row
// major, no product computed here.
//
// Threading: OpenBLAS runs single-threaded, and the products are cut into pieces (a batch, and
// within it a block of rows or columns of the output) that run as separate sgemm calls on the
// project's pool (parallel_for) with the backend's thread count, and OpenBLAS's own threads are
// ended (single_threaded_blas). Measured with bench_matmul on 2
// threads against OpenBLAS's own threads (openblas_set_num_threads(threads), the batches one
// after another): the same on [1, 4096] x [4096, 4096] (6.2 ms both) and [1, 64, 4096] x
// [4096, 4096] (16 ms both), and 2 to 2.5 times faster on batched attention shapes, where each
// product is too small for OpenBLAS to split: [1, 8, 4, 128, 128] x [1, 8, 1, 128, 128] 0.8 ms
// against 2.0 ms, [1, 32, 1, 128] x [1, 32, 128, 512] 0.09 ms against 0.15 ms. OpenBLAS's thread
// count is process-wide: the first CPU backend sets it to 1.
#include <cblas.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <mutex>
#include <vector>

#include "cpu_backend.hpp"
#include "cpu_types.hpp"
#include "formats/dot.hpp"
#include "formats/formats.hpp"
#include "gguftool/parallel.hpp"

namespace gguftool::runtime::cpu {
namespace {

// One product C = alpha * op(A) op(B) + beta * C, row major: op(A) is [m, k], op(B) [k, n].
template <class T>
struct Product {
    bool trans_a = false, trans_b = false;
    uint64_t m = 0, n = 0, k = 0;
    T alpha = 1, beta = 0;
    const T *a = nullptr;
    const T *b = nullptr;
    T *c = nullptr;
    uint64_t lda = 0, ldb = 0, ldc = 0;
};

template <class T>
void gemm(const Product<T> &p) {
    constexpr uint64_t kMax = uint64_t(std::numeric_limits<blasint>::max());
    if (std::max({p.m, p.n, p.k, p.lda, p.ldb, p.ldc}) > kMax)
        throw Error(
            fmt::format("a matrix dimension of the product ({} x {} x {}) exceeds "
                        "OpenBLAS's limit of {}",
                        p.m, p.k, p.n, kMax));
    const CBLAS_TRANSPOSE ta = p.trans_a ? CblasTrans : CblasNoTrans;
    const CBLAS_TRANSPOSE tb = p.trans_b ? CblasTrans : CblasNoTrans;
    if constexpr (std::is_same_v<T, float>)
        cblas_sgemm(CblasRowMajor, ta, tb, blasint(p.m), blasint(p.n), blasint(p.k), p.alpha, p.a,
                    blasint(p.lda), p.b, blasint(p.ldb), p.beta, p.c, blasint(p.ldc));
    else
        cblas_dgemm(CblasRowMajor, ta, tb, blasint(p.m), blasint(p.n), blasint(p.k), p.alpha, p.a,
                    blasint(p.lda), p.b, blasint(p.ldb), p.beta, p.c, blasint(p.ldc));
}

// Rows [r0, r0 + rows) of p's output: a product of its own.
template <class T>
Product<T> row_block(Product<T> p, uint64_t r0, uint64_t rows) {
    p.a += p.trans_a ? r0 : r0 * p.lda;
    p.c += r0 * p.ldc;
    p.m = rows;
    return p;
}
// Columns [c0, c0 + cols).
template <class T>
Product<T> column_block(Product<T> p, uint64_t c0, uint64_t cols) {
    p.b += p.trans_b ? c0 * p.ldb : c0;
    p.c += c0;
    p.n = cols;
    return p;
}

// A block of a product's output: rows [r0, r0 + m) and columns [c0, c0 + n) of products[index].
struct Piece {
    size_t index;
    uint64_t r0, m, c0, n;
};

// Cuts `products` for `threads` threads: enough of them as they are, or each cut into blocks of
// rows or columns (whichever it has more of, at least kMinBlock each) so that every thread has a
// piece.
template <class T>
std::vector<Piece> cut(const std::vector<Product<T>> &products, unsigned threads) {
    constexpr uint64_t kMinBlock = 32;
    // Below this many multiply-adds a product is not worth a thread of its own.
    constexpr uint64_t kMinWork = 1 << 15;
    const unsigned t = thread_count(threads);
    uint64_t work = 0;
    for (const Product<T> &p : products) work += p.m * p.n * p.k;
    const uint64_t useful = std::max<uint64_t>(1, std::min<uint64_t>(t, work / kMinWork));
    std::vector<Piece> pieces;
    for (size_t i = 0; i < products.size(); ++i) {
        const Product<T> &p = products[i];
        if (products.size() >= useful) {
            pieces.push_back({i, 0, p.m, 0, p.n});
            continue;
        }
        const uint64_t per = (useful + products.size() - 1) / products.size();
        const bool by_rows = p.m > p.n;
        const uint64_t extent = by_rows ? p.m : p.n;
        uint64_t blocks = std::min<uint64_t>(per, std::max<uint64_t>(1, extent / kMinBlock));
        // Block sizes a multiple of 16 (whole SIMD vectors for OpenBLAS's kernels).
        const uint64_t size = ((extent + blocks - 1) / blocks + 15) / 16 * 16;
        for (uint64_t s = 0; s < extent; s += size) {
            const uint64_t len = std::min(size, extent - s);
            pieces.push_back(by_rows ? Piece{i, s, len, 0, p.n} : Piece{i, 0, p.m, s, len});
        }
    }
    return pieces;
}

// Runs `products` on `threads` threads, cut into pieces.
template <class T>
void run_products(const std::vector<Product<T>> &products, unsigned threads) {
    if (products.empty()) return;
    const std::vector<Piece> pieces = cut(products, threads);
    single_threaded_blas();
    parallel_for(pieces.size(), threads, 1, [&](uint64_t b, uint64_t e) {
        for (uint64_t i = b; i < e; ++i) {
            const Piece &piece = pieces[i];
            gemm(row_block(column_block(products[piece.index], piece.c0, piece.n), piece.r0,
                           piece.m));
        }
    });
}

// MatMul: NumPy's matmul of A and B (float32 or float64, checked by the operator).
void matmul(CpuBackend &cpu, const KernelArgs &args) {
    const DeviceTensor &a = *args.inputs[0], &b = *args.inputs[1];
    DeviceTensor &y = args.outputs[0];
    if (y.elements() == 0) return;
    Shape sa = a.shape, sb = b.shape;
    if (sa.size() == 1) sa.insert(sa.begin(), 1);
    if (sb.size() == 1) sb.push_back(1);
    const uint64_t m = uint64_t(sa[sa.size() - 2]), k = uint64_t(sa.back());
    const uint64_t n = uint64_t(sb.back());
    if (k == 0) {  // sums of nothing
        std::memset(mutable_bytes(y), 0, y.nbytes());
        return;
    }
    // The batch dims, right-aligned and broadcast, with each input's element strides per batch
    // (0 where it has 1).
    const size_t ra = sa.size() - 2, rb = sb.size() - 2, rank = std::max(ra, rb);
    std::vector<uint64_t> dims(rank), stride_a(rank), stride_b(rank);
    uint64_t step_a = m * k, step_b = k * n, batches_a = 1, batches_b = 1;
    for (size_t i = rank; i-- > 0;) {
        const uint64_t da = i + ra >= rank ? uint64_t(sa[i + ra - rank]) : 1;
        const uint64_t db = i + rb >= rank ? uint64_t(sb[i + rb - rank]) : 1;
        dims[i] = std::max(da, db);
        stride_a[i] = da == 1 ? 0 : step_a;
        stride_b[i] = db == 1 ? 0 : step_b;
        step_a *= da, step_b *= db;
        batches_a *= da, batches_b *= db;
    }
    uint64_t batches = 1;
    for (const uint64_t d : dims) batches *= d;
    with_type(y.dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            const T *pa = reinterpret_cast<const T *>(bytes(a));
            const T *pb = reinterpret_cast<const T *>(bytes(b));
            T *pc = reinterpret_cast<T *>(mutable_bytes(y));
            Product<T> base;
            base.m = m, base.n = n, base.k = k;
            base.lda = k, base.ldb = n, base.ldc = n;
            std::vector<Product<T>> products;
            if (batches_b == 1 && batches_a == batches) {
                // One B for every batch of A (a weight): A's rows are one [batches * m, k] matrix.
                Product<T> p = base;
                p.m = batches * m;
                p.a = pa, p.b = pb, p.c = pc;
                products.push_back(p);
            } else {
                std::vector<uint64_t> idx(rank, 0);
                uint64_t off_a = 0, off_b = 0;
                for (uint64_t i = 0; i < batches; ++i) {
                    Product<T> p = base;
                    p.a = pa + off_a, p.b = pb + off_b, p.c = pc + i * m * n;
                    products.push_back(p);
                    for (size_t d = rank; d-- > 0;) {
                        off_a += stride_a[d], off_b += stride_b[d];
                        if (++idx[d] < dims[d]) break;
                        off_a -= dims[d] * stride_a[d], off_b -= dims[d] * stride_b[d];
                        idx[d] = 0;
                    }
                }
            }
            run_products(products, cpu.threads());
        } else {
            throw Error("MatMul takes float32 or float64 here");
        }
    });
}

// Y [m, n] = C broadcast one way (checked by the operator), as Gemm starts from it; false (Y
// untouched) when there is no C or beta is 0.
template <class T>
bool copy_c(const DeviceTensor *c, double beta, T *py, uint64_t m, uint64_t n, unsigned threads) {
    if (!c || beta == 0) return false;
    const T *pc = reinterpret_cast<const T *>(bytes(*c));
    const size_t r = c->shape.size();
    const uint64_t cn = r >= 1 ? uint64_t(c->shape[r - 1]) : 1;
    const uint64_t cm = r >= 2 ? uint64_t(c->shape[0]) : 1;
    parallel_for(m, threads, std::max<uint64_t>(1, kGrain / n), [&](uint64_t r0, uint64_t r1) {
        for (uint64_t i = r0; i < r1; ++i) {
            const T *src = pc + (cm == 1 ? 0 : i * cn);
            T *dst = py + i * n;
            if (cn == 1)
                std::fill_n(dst, n, src[0]);
            else
                std::memcpy(dst, src, size_t(n) * sizeof(T));
        }
    });
    return true;
}

// Gemm: Y = alpha * op(A) op(B) + beta * C, C broadcast one way to [M, N] (checked by the
// operator) and copied into Y first.
void gemm_kernel(CpuBackend &cpu, const KernelArgs &args) {
    const DeviceTensor &a = *args.inputs[0], &b = *args.inputs[1];
    const DeviceTensor *c = args.inputs.size() > 2 ? args.inputs[2] : nullptr;
    DeviceTensor &y = args.outputs[0];
    if (y.elements() == 0) return;
    const bool trans_a = args.attributes.get_int("transA").value() != 0;
    const bool trans_b = args.attributes.get_int("transB").value() != 0;
    const double alpha = args.attributes.get_float("alpha").value();
    double beta = args.attributes.get_float("beta").value();
    const uint64_t m = uint64_t(y.shape[0]), n = uint64_t(y.shape[1]);
    const uint64_t k = uint64_t(trans_a ? a.shape[0] : a.shape[1]);
    with_type(y.dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            T *py = reinterpret_cast<T *>(mutable_bytes(y));
            if (!copy_c(c, beta, py, m, n, cpu.threads())) beta = 0;
            if (k == 0) {  // Y = beta * C
                for (uint64_t i = 0; i < m * n; ++i) py[i] = beta == 0 ? T(0) : T(beta * py[i]);
                return;
            }
            Product<T> p;
            p.trans_a = trans_a, p.trans_b = trans_b;
            p.m = m, p.n = n, p.k = k;
            p.alpha = T(alpha), p.beta = T(beta);
            p.a = reinterpret_cast<const T *>(bytes(a));
            p.b = reinterpret_cast<const T *>(bytes(b));
            p.c = py;
            p.lda = uint64_t(a.shape[1]), p.ldb = uint64_t(b.shape[1]), p.ldc = n;
            run_products(std::vector<Product<T>>{p}, cpu.threads());
        } else {
            throw Error("Gemm takes float32 or float64 here");
        }
    });
}

// The fused weight products (DequantizePackedGemm, op_fused.cpp): Y = alpha * A Wᵀ + beta * C,
// A [M, K] float, W [N, K] packed blocks, read where they are.

// Rows [r0, r0 + rows) of a packed weight of `k` columns decoded to float, each value rounded to
// `dtype` first (what a DequantizePacked of that output type and a Cast to float give).
void decode_rows(GgmlType type, DataType dtype, const uint8_t *w, uint64_t r0, uint64_t rows,
                 uint64_t k, float *out) {
    const TypeTraits &tt = traits(type);
    const uint64_t blocks = k / tt.block_size;
    formats::block_decoder(type)(w + r0 * blocks * tt.type_size, rows * blocks, out);
    const uint64_t n = rows * k;
    if (dtype == DataType::float16)
        for (uint64_t i = 0; i < n; ++i) out[i] = fp16_to_f32(f32_to_fp16(out[i]));
    else if (dtype == DataType::bfloat16)
        for (uint64_t i = 0; i < n; ++i) out[i] = bf16_to_f32(f32_to_bf16(out[i]));
}

// OpenBLAS's small-matrix kernels (SMALL_MATRIX_OPT, built for SkylakeX and later x86 targets:
// kernel/x86_64/sgemm_small_kernel_permit_skylakex.c) take the products of at most 100^3
// multiply-adds, and sum in another order than its blocked kernels. Within each kind a product's
// output elements do not depend on how its columns are cut, so a piece cut into tiles gives the
// same bits as long as every tile falls on the piece's side of that line.
bool small_product(uint64_t m, uint64_t n, uint64_t k) {
    return double(m) * double(n) * double(k) <= 1e6;
}

// A tile of decoded weight rows holds about this many floats (2 MiB: an L2 cache). OpenBLAS
// repacks the activations for every tile, so tiles much smaller cost more in packing than they
// save in cache misses (bench_decoder's prefill: 256 KiB tiles were slower).
constexpr uint64_t kTileFloats = uint64_t(1) << 19;

// The exact fused product: each piece of the unfused product's cut (so the same OpenBLAS calls
// see the same operands) multiplied a tile of weight rows at a time, each tile decoded into a
// buffer of this thread's (kTileFloats, or the least the piece's side of small_product needs).
void packed_gemm_tiles(const Product<float> &p, GgmlType type, DataType dtype, const uint8_t *w,
                       unsigned threads) {
    const std::vector<Piece> pieces = cut(std::vector<Product<float>>{p}, threads);
    single_threaded_blas();
    parallel_for(pieces.size(), threads, 1, [&](uint64_t b, uint64_t e) {
        thread_local std::vector<float> tile;
        for (uint64_t i = b; i < e; ++i) {
            const Piece &piece = pieces[i];
            uint64_t t = std::max<uint64_t>(16, kTileFloats / p.k);
            const bool small = small_product(piece.m, piece.n, p.k);
            if (!small) t = std::max(t, uint64_t(1e6 / double(piece.m * p.k)) + 1);
            t = std::min((t + 15) / 16 * 16, piece.n);
            for (uint64_t c = 0; c < piece.n;) {
                uint64_t width = std::min(t, piece.n - c);
                // A remainder on the other side of the line joins the tile before it.
                if (!small && piece.n - c - width > 0 &&
                    small_product(piece.m, piece.n - c - width, p.k))
                    width = piece.n - c;
                if (tile.size() < width * p.k) tile.resize(width * p.k);
                decode_rows(type, dtype, w, piece.c0 + c, width, p.k, tile.data());
                Product<float> q = row_block(p, piece.r0, piece.m);
                q.c += piece.c0 + c;
                q.n = width;
                q.b = tile.data();
                q.ldb = p.k;
                gemm(q);
                c += width;
            }
        }
    });
}

// At most this many rows of A take the integer dot products (a decode step, a short batch, a
// mixture of experts' few rows per expert); more amortize a float tile over enough rows for
// OpenBLAS to be faster. Measured with bench_decoder's executor, prefill of M tokens, 1.1B
// llama, 2 threads, int8 against float tiles: Q4_K_M M = 8 0.50 s / 1.04 s, 16 0.88 / 1.22,
// 32 1.84 / 1.61; Q4_0 M = 16 1.03 / 1.07, 32 1.80 / 1.42.
constexpr uint64_t kMaxInt8Rows = 16;

// The integer dot products: each row of A quantized to `dot`'s activation blocks, then every
// weight row's dot product with it, a range of weight rows per piece of work.
void packed_gemm_int8(const Product<float> &p, const formats::DotKernel &dot, const uint8_t *w,
                      uint64_t row_bytes, unsigned threads) {
    const size_t ae = formats::act_block_elements(dot.act), ab = formats::act_block_bytes(dot.act);
    const uint64_t act_row = p.k / ae * ab, nblocks = p.k / traits(dot.type).block_size;
    thread_local std::vector<uint8_t> act;
    act.resize(p.m * act_row);
    for (uint64_t i = 0; i < p.m; ++i)
        formats::quantize_activations(dot.act, p.a + i * p.lda, p.k, act.data() + i * act_row);
    const unsigned t = thread_count(threads);
    constexpr uint64_t kMaxPiece = 256;
    const uint64_t piece = std::clamp<uint64_t>(p.n / (uint64_t(t) * 4), 16, kMaxPiece);
    const uint64_t pieces = (p.n + piece - 1) / piece;
    const uint8_t *acts = act.data();
    run_pieces(t, pieces, [&](uint64_t i) {
        const uint64_t r0 = i * piece, rows = std::min(piece, p.n - r0);
        float dots[kMaxPiece];
        for (uint64_t m = 0; m < p.m; ++m) {
            dot.dots(w + r0 * row_bytes, row_bytes, rows, acts + m * act_row, nblocks, dots);
            float *y = p.c + m * p.ldc + r0;
            for (uint64_t r = 0; r < rows; ++r)
                y[r] = p.beta == 0 ? p.alpha * dots[r] : p.alpha * dots[r] + p.beta * y[r];
        }
    });
}

// DequantizePackedGemm: Y = alpha * A Wᵀ + beta * C (C copied into Y first), W the packed blocks
// at x + "offset".
void packed_gemm(CpuBackend &cpu, const KernelArgs &args) {
    const DeviceTensor &a = *args.inputs[0], &x = *args.inputs[1];
    const DeviceTensor *c = args.inputs.size() > 2 ? args.inputs[2] : nullptr;
    DeviceTensor &y = args.outputs[0];
    if (y.elements() == 0) return;
    const GgmlType type = GgmlType(args.attributes.at<int64_t>("format"));
    const DataType dtype = DataType(int32_t(args.attributes.at<int64_t>("weight_dtype")));
    const uint8_t *w = bytes(x) + args.attributes.at<int64_t>("offset");
    double beta = args.attributes.at<double>("beta");
    const uint64_t m = uint64_t(y.shape[0]), n = uint64_t(y.shape[1]), k = uint64_t(a.shape[1]);
    float *py = reinterpret_cast<float *>(mutable_bytes(y));
    if (!copy_c(c, beta, py, m, n, cpu.threads())) beta = 0;
    if (k == 0) {  // Y = beta * C
        for (uint64_t i = 0; i < m * n; ++i) py[i] = beta == 0 ? 0.0f : float(beta * py[i]);
        return;
    }
    Product<float> p;
    p.trans_b = true;
    p.m = m, p.n = n, p.k = k;
    p.alpha = float(args.attributes.at<double>("alpha")), p.beta = float(beta);
    p.a = reinterpret_cast<const float *>(bytes(a));
    p.c = py;
    p.lda = k, p.ldb = k, p.ldc = n;
    const formats::DotKernel *dot = args.attributes.at<int64_t>("int8") && m <= kMaxInt8Rows
                                        ? formats::dot_kernel(type)
                                        : nullptr;
    if (dot)
        packed_gemm_int8(p, *dot, w, k / traits(type).block_size * traits(type).type_size,
                         cpu.threads());
    else
        packed_gemm_tiles(p, type, dtype, w, cpu.threads());
}

// KvMatMul (op_fused.cpp): per (b, h, i) of A [B, H, r, S, K], A[b, h, i] times the cache's
// X[b, h] [T, D] ("transpose": its transpose), read with the cache's pitch. The products are the
// unfused MatMul's, on the same operands (a key cache is kept transposed, as the unfused
// Transpose makes it), so their results are too.
void kv_matmul(CpuBackend &cpu, const KernelArgs &args) {
    const DeviceTensor &a = *args.inputs[0], &x = *args.inputs[1];
    DeviceTensor &y = args.outputs[0];
    if (y.elements() == 0) return;
    const bool transpose = args.attributes.at<int64_t>("transpose") != 0;
    const CacheView *cache = cache_view(x);
    const float *xb =
        reinterpret_cast<const float *>(cache ? cache->storage->storage.data() : bytes(x));
    const uint64_t t = uint64_t(x.shape[2]), d = uint64_t(x.shape[3]);
    const uint64_t capacity = cache ? uint64_t(cache->storage->capacity) : t;
    // X[b, h] is [T, D] with rows of D, or kept transposed, [D, T] with rows of `capacity`.
    const bool stored_transposed = cache && cache->storage->transposed;
    const uint64_t pitch = capacity * d, ldb = stored_transposed ? capacity : d;
    const uint64_t heads = uint64_t(a.shape[0] * a.shape[1]), r = uint64_t(a.shape[2]);
    const uint64_t m = uint64_t(a.shape[3]), k = uint64_t(a.shape[4]), n = uint64_t(y.shape[4]);
    const float *pa = reinterpret_cast<const float *>(bytes(a));
    float *py = reinterpret_cast<float *>(mutable_bytes(y));
    if (k == 0) {
        std::fill_n(py, y.elements(), 0.0f);
        return;
    }
    // One product per (b, h), A's r query heads of X's KV head as consecutive rows (a decode
    // step: far fewer OpenBLAS calls), where that is on the same side of small_product as the
    // unfused products of one query head each; else those.
    const uint64_t rows = small_product(r * m, n, k) == small_product(m, n, k) ? r * m : m;
    std::vector<Product<float>> products;
    for (uint64_t i = 0; i < heads * r * m; i += rows) {
        Product<float> p;
        p.trans_b = transpose != stored_transposed;
        p.m = rows, p.n = n, p.k = k;
        p.a = pa + i * k;
        p.b = xb + i / (r * m) * pitch;
        p.c = py + i * n;
        p.lda = k, p.ldb = ldb, p.ldc = n;
        products.push_back(p);
    }
    run_products(products, cpu.threads());
}

}  // namespace

void single_threaded_blas() {
    static std::once_flag once;
    std::call_once(once, [] {
        openblas_set_num_threads(1);
        // OpenBLAS's pthreads build starts a thread per core when it is loaded; with one thread
        // it never uses them: ended here, so that the process has one pool (gguftool/parallel.hpp).
        // blas_thread_shutdown_ is OpenBLAS's own (its fork handler calls it); other builds of
        // OpenBLAS may not export it.
        if (auto shutdown =
                reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "blas_thread_shutdown_")))
            shutdown();
    });
}

void sgemm_abt(const float *a, const float *b, float *c, uint64_t m, uint64_t n, uint64_t k,
               unsigned threads) {
    Product<float> p;
    p.trans_b = true;
    p.m = m, p.n = n, p.k = k;
    p.a = a, p.b = b, p.c = c;
    p.lda = k, p.ldb = k, p.ldc = n;
    run_products(std::vector<Product<float>>{p}, threads);
}

std::span<const CpuKernelRow> matmul_kernels() {
    static constexpr CpuKernelRow rows[] = {
        {"MatMul", matmul},
        {"Gemm", gemm_kernel},
        {"DequantizePackedGemm", packed_gemm},
        {"KvMatMul", kv_matmul},
    };
    return rows;
}

}  // namespace gguftool::runtime::cpu
