// The x86 dot kernels of formats/dot.cpp, included there once per instruction set inside its
// per-target namespace, and on AVX-512 a second time with GGUFTOOL_DOT_VNNI set (compiled for
// AVX512-VNNI, chosen at run time where the CPU has it). No include guard, no includes: the
// includer provides <immintrin.h>, the block structs and the helpers of common.hpp.

using codebooks::kvalues_iq4nl;

// Σ u[4i..4i+3] * s[4i..4i+3] in int32 lane i: u unsigned, s signed bytes. AVX512-VNNI's dpbusd
// does it in one instruction; otherwise maddubs (pairs into int16, never saturating here) and madd.
HWY_INLINE __m256i dot_us(__m256i u, __m256i s) {
#if GGUFTOOL_DOT_VNNI
    return _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s);
#else
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
#endif
}
// The same for two signed operands: |x| times y with x's sign.
HWY_INLINE __m256i dot_ss(__m256i x, __m256i y) {
    return dot_us(_mm256_sign_epi8(x, x), _mm256_sign_epi8(y, x));
}
// The 16 bytes at p as 32 nibbles: low nibbles first (elements 0..15), then the high ones.
HWY_INLINE __m256i nibbles(const uint8_t *p) {
    const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
    return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(t, 4), t), _mm256_set1_epi8(0x0F));
}
HWY_INLINE __m256i load32(const void *p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p));
}
HWY_INLINE float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
HWY_INLINE float f16_at(const uint8_t *p) {
    return _cvtsh_ss(load_u16(p));
}

// Weights stream from memory once per product: each kernel prefetches the bytes kPrefetchBytes
// ahead of those it reads. Measured on the development VM (one thread, a 300 MB q4_0 weight):
// 4.3 GB/s without, 5.8 at 512 bytes ahead, 9.0 at 2 KiB, 8.9 at 4 KiB; its hardware prefetchers
// alone do not keep up. Past the end of the weight a prefetch is a no-op (it never faults).
constexpr size_t kPrefetchBytes = 2048;
template <size_t kBytes>
HWY_INLINE void prefetch_ahead(const uint8_t *p) {
    for (size_t o = 0; o < kBytes; o += 64)
        _mm_prefetch(reinterpret_cast<const char *>(p + kPrefetchBytes + o), _MM_HINT_T0);
}

// The 32-element formats against ActQ8_0: `block` gives a block's int32 lane sums of code times
// activation, its scale d, and c, which multiplies the activations' dsum (sum over the block of
// (d * code + c) * d_act * q = d * d_act * Σ code * q + c * dsum); kOffset: whether c is used.
struct Block32 {
    __m256i sums;
    float d;  // weight scale
    float c;  // times the activations' dsum: an offset of the codes times d (q4_0: -8 d), or m
};

template <class Block, bool kOffset, class F>
HWY_INLINE void rows_q8_0(const uint8_t *w, size_t row_bytes, size_t rows, const uint8_t *act,
                          size_t nblocks, float *out, F block32) {
    const ActQ8_0 *a = reinterpret_cast<const ActQ8_0 *>(act);
    for (size_t r = 0; r < rows; ++r, w += row_bytes) {
        __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
        float extra0 = 0, extra1 = 0;  // two chains, as the vectors have
        size_t b = 0;
        for (; b + 1 < nblocks; b += 2) {
            const uint8_t *x = w + b * sizeof(Block);
            prefetch_ahead<2 * sizeof(Block)>(x);
            const Block32 x0 = block32(x, a[b].qs);
            const Block32 x1 = block32(x + sizeof(Block), a[b + 1].qs);
            acc0 =
                _mm256_fmadd_ps(_mm256_set1_ps(x0.d * a[b].d), _mm256_cvtepi32_ps(x0.sums), acc0);
            acc1 = _mm256_fmadd_ps(_mm256_set1_ps(x1.d * a[b + 1].d), _mm256_cvtepi32_ps(x1.sums),
                                   acc1);
            if constexpr (kOffset) {
                extra0 += x0.c * a[b].dsum;
                extra1 += x1.c * a[b + 1].dsum;
            }
        }
        for (; b < nblocks; ++b) {
            const Block32 x = block32(w + b * sizeof(Block), a[b].qs);
            acc0 = _mm256_fmadd_ps(_mm256_set1_ps(x.d * a[b].d), _mm256_cvtepi32_ps(x.sums), acc0);
            if constexpr (kOffset) extra0 += x.c * a[b].dsum;
        }
        out[r] = hsum(_mm256_add_ps(acc0, acc1)) + (extra0 + extra1);
    }
}

// q4_0: (nibble - 8) * d.
void q4_0_dots(const uint8_t *w, size_t row_bytes, size_t rows, const uint8_t *act, size_t nblocks,
               float *out) {
    rows_q8_0<BlockQ4_0, true>(
        w, row_bytes, rows, act, nblocks, out, [](const uint8_t *x, const int8_t *q) {
            const float d = f16_at(x);
            return Block32{dot_us(nibbles(x + offsetof(BlockQ4_0, qs)), load32(q)), d, -8.0f * d};
        });
}

// q4_1: nibble * d + m (ggml_vec_dot_q4_1_q8_1: d*dy*Σ nibble*q + m*dy*Σq).
void q4_1_dots(const uint8_t *w, size_t row_bytes, size_t rows, const uint8_t *act, size_t nblocks,
               float *out) {
    rows_q8_0<BlockQ4_1, true>(
        w, row_bytes, rows, act, nblocks, out, [](const uint8_t *x, const int8_t *q) {
            const float d = f16_at(x), m = f16_at(x + offsetof(BlockQ4_1, m));
            return Block32{dot_us(nibbles(x + offsetof(BlockQ4_1, qs)), load32(q)), d, m};
        });
}

// The fifth bits of q5_0/q5_1: bit i of the little-endian word at qh, as 0x10 in byte i.
HWY_INLINE __m256i fifth_bits(const uint8_t *qh) {
    const __m256i shuffle = _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202,
                                              0x0101010101010101, 0x0000000000000000);
    const __m256i bytes = _mm256_shuffle_epi8(_mm256_set1_epi32(int32_t(load_u32(qh))), shuffle);
    const __m256i bit = _mm256_set1_epi64x(0x8040201008040201);
    return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(bytes, bit), bit),
                            _mm256_set1_epi8(0x10));
}

// q5_0: (nibble | fifth bit << 4) - 16, times d.
void q5_0_dots(const uint8_t *w, size_t row_bytes, size_t rows, const uint8_t *act, size_t nblocks,
               float *out) {
    rows_q8_0<BlockQ5_0, true>(
        w, row_bytes, rows, act, nblocks, out, [](const uint8_t *x, const int8_t *q) {
            const __m256i codes = _mm256_or_si256(nibbles(x + offsetof(BlockQ5_0, qs)),
                                                  fifth_bits(x + offsetof(BlockQ5_0, qh)));
            const float d = f16_at(x);
            return Block32{dot_us(codes, load32(q)), d, -16.0f * d};
        });
}

// q5_1: (nibble | fifth bit << 4) * d + m.
void q5_1_dots(const uint8_t *w, size_t row_bytes, size_t rows, const uint8_t *act, size_t nblocks,
               float *out) {
    rows_q8_0<BlockQ5_1, true>(
        w, row_bytes, rows, act, nblocks, out, [](const uint8_t *x, const int8_t *q) {
            const float d = f16_at(x), m = f16_at(x + offsetof(BlockQ5_1, m));
            const __m256i codes = _mm256_or_si256(nibbles(x + offsetof(BlockQ5_1, qs)),
                                                  fifth_bits(x + offsetof(BlockQ5_1, qh)));
            return Block32{dot_us(codes, load32(q)), d, m};
        });
}

// q8_0: q * d.
void q8_0_dots(const uint8_t *w, size_t row_bytes, size_t rows, const uint8_t *act, size_t nblocks,
               float *out) {
    rows_q8_0<BlockQ8_0, false>(
        w, row_bytes, rows, act, nblocks, out, [](const uint8_t *x, const int8_t *q) {
            return Block32{dot_ss(load32(x + offsetof(BlockQ8_0, qs)), load32(q)), f16_at(x), 0.0f};
        });
}

// A 16-entry int8 code book applied to the 32 nibbles of 16 bytes.
HWY_INLINE __m256i lookup(__m256i table, const uint8_t *qs) {
    return _mm256_shuffle_epi8(table, nibbles(qs));
}
HWY_INLINE __m256i table32(const int8_t *values) {
    const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i *>(values));
    return _mm256_set_m128i(t, t);
}

// iq4_nl: kvalues_iq4nl[nibble] * d.
void iq4_nl_dots(const uint8_t *w, size_t row_bytes, size_t rows, const uint8_t *act,
                 size_t nblocks, float *out) {
    const __m256i table = table32(kvalues_iq4nl);
    rows_q8_0<BlockIq4_NL, false>(
        w, row_bytes, rows, act, nblocks, out, [table](const uint8_t *x, const int8_t *q) {
            return Block32{dot_ss(lookup(table, x + offsetof(BlockIq4_NL, qs)), load32(q)),
                           f16_at(x), 0.0f};
        });
}

// mxfp4: the doubled e2m1 value of each nibble times half the e8m0 scale.
void mxfp4_dots(const uint8_t *w, size_t row_bytes, size_t rows, const uint8_t *act, size_t nblocks,
                float *out) {
    const __m256i table = table32(kE2m1Doubled);
    rows_q8_0<BlockMxfp4, false>(
        w, row_bytes, rows, act, nblocks, out, [table](const uint8_t *x, const int8_t *q) {
            return Block32{dot_ss(lookup(table, x + offsetof(BlockMxfp4, qs)), load32(q)),
                           e8m0_to_f32_half(x[offsetof(BlockMxfp4, e)]), 0.0f};
        });
}

// The 256-element formats against BlockQ8_K: `block` gives a block's int32 lane sums (sub-block
// scales applied), the factor to scale them by (without the activations' d) and a scalar term
// already in units of the activations' d (the minimums' products with the activations' bsums).
struct Block256 {
    __m256i sums;
    float d;
    float extra;
};

template <class Block, class F>
HWY_INLINE void rows_q8_K(const uint8_t *w, size_t row_bytes, size_t rows, const uint8_t *act,
                          size_t nblocks, float *out, F block256) {
    const BlockQ8_K *a = reinterpret_cast<const BlockQ8_K *>(act);
    for (size_t r = 0; r < rows; ++r, w += row_bytes) {
        __m256 acc = _mm256_setzero_ps();
        float extra = 0;
        for (size_t b = 0; b < nblocks; ++b) {
            prefetch_ahead<sizeof(Block)>(w + b * sizeof(Block));
            const Block256 x = block256(w + b * sizeof(Block), a[b]);
            acc = _mm256_fmadd_ps(_mm256_set1_ps(x.d * a[b].d), _mm256_cvtepi32_ps(x.sums), acc);
            extra += a[b].d * x.extra;
        }
        out[r] = hsum(acc) + extra;
    }
}

// q4_K / q5_K: the 8 six-bit scales and mins (unpacked as the decoder does: formats/kquant.cpp),
// and minus dmin times Σ_j min_j * (the activations' sum over sub-block j).
struct ScalesMins {
    uint8_t scale[8], min[8];
};
HWY_INLINE ScalesMins scales_mins(const uint8_t *s) {
    const uint32_t a0 = load_u32(s), a1 = load_u32(s + 4), a2 = load_u32(s + 8);
    constexpr uint32_t kLow2 = 0x03030303u, kLow4 = 0x0F0F0F0Fu, kLow6 = 0x3F3F3F3Fu;
    const uint32_t words[4] = {a0 & kLow6, (a2 & kLow4) | (a0 >> 6 & kLow2) << 4, a1 & kLow6,
                               (a2 >> 4 & kLow4) | (a1 >> 6 & kLow2) << 4};
    ScalesMins sm;
    std::memcpy(sm.scale, &words[0], 4);
    std::memcpy(sm.scale + 4, &words[1], 4);
    std::memcpy(sm.min, &words[2], 4);
    std::memcpy(sm.min + 4, &words[3], 4);
    return sm;
}
HWY_INLINE float min_term(const ScalesMins &sm, const BlockQ8_K &a, float dmin) {
    int32_t s = 0;
    for (int j = 0; j < 8; ++j) s += int32_t(sm.min[j]) * (a.bsums[2 * j] + a.bsums[2 * j + 1]);
    return -dmin * float(s);
}

// q4_K: group g (64 elements) is qs[32g..32g+31], low nibbles sub-block 2g, high 2g+1.
void q4_k_dots(const uint8_t *w, size_t row_bytes, size_t rows, const uint8_t *act, size_t nblocks,
               float *out) {
    rows_q8_K<
        BlockQ4_K>(w, row_bytes, rows, act, nblocks, out, [](const uint8_t *x, const BlockQ8_K &a) {
        const ScalesMins sm = scales_mins(x + offsetof(BlockQ4_K, scales));
        const __m256i m4 = _mm256_set1_epi8(0x0F);
        __m256i sums = _mm256_setzero_si256();
        for (int g = 0; g < 4; ++g) {
            const __m256i q = load32(x + offsetof(BlockQ4_K, qs) + 32 * g);
            const __m256i lo = _mm256_maddubs_epi16(_mm256_and_si256(q, m4), load32(a.qs + 64 * g));
            const __m256i hi = _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4),
                                                    load32(a.qs + 64 * g + 32));
            sums = _mm256_add_epi32(
                sums,
                _mm256_add_epi32(_mm256_madd_epi16(_mm256_set1_epi16(sm.scale[2 * g]), lo),
                                 _mm256_madd_epi16(_mm256_set1_epi16(sm.scale[2 * g + 1]), hi)));
        }
        return Block256{sums, f16_at(x), min_term(sm, a, f16_at(x + offsetof(BlockQ4_K, dmin)))};
    });
}

// 0x10 in each byte of v whose bit b is set, 0 elsewhere.
HWY_INLINE __m256i bit_as_16(__m256i v, int b) {
    const __m256i m = _mm256_set1_epi8(char(1 << b));
    return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(v, m), m), _mm256_set1_epi8(0x10));
}

// q5_K: as q4_K, with bit 2g (low nibbles) or 2g+1 (high nibbles) of qh[l] as bit 4 of the code.
void q5_k_dots(const uint8_t *w, size_t row_bytes, size_t rows, const uint8_t *act, size_t nblocks,
               float *out) {
    rows_q8_K<
        BlockQ5_K>(w, row_bytes, rows, act, nblocks, out, [](const uint8_t *x, const BlockQ8_K &a) {
        const ScalesMins sm = scales_mins(x + offsetof(BlockQ5_K, scales));
        const __m256i m4 = _mm256_set1_epi8(0x0F);
        const __m256i qh = load32(x + offsetof(BlockQ5_K, qh));
        __m256i sums = _mm256_setzero_si256();
        for (int g = 0; g < 4; ++g) {
            const __m256i q = load32(x + offsetof(BlockQ5_K, qs) + 32 * g);
            const __m256i h_lo = bit_as_16(qh, 2 * g), h_hi = bit_as_16(qh, 2 * g + 1);
            const __m256i lo = _mm256_maddubs_epi16(_mm256_or_si256(_mm256_and_si256(q, m4), h_lo),
                                                    load32(a.qs + 64 * g));
            const __m256i hi = _mm256_maddubs_epi16(
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4), h_hi),
                load32(a.qs + 64 * g + 32));
            sums = _mm256_add_epi32(
                sums,
                _mm256_add_epi32(_mm256_madd_epi16(_mm256_set1_epi16(sm.scale[2 * g]), lo),
                                 _mm256_madd_epi16(_mm256_set1_epi16(sm.scale[2 * g + 1]), hi)));
        }
        return Block256{sums, f16_at(x), min_term(sm, a, f16_at(x + offsetof(BlockQ5_K, dmin)))};
    });
}

// The int16 products of 32 codes and activations (maddubs: lanes 0..7 elements 0..15, lanes 8..15
// elements 16..31) times the scales of those two 16-element sub-blocks, summed in pairs to int32.
HWY_INLINE __m256i scaled_pairs(__m256i p16, int16_t first, int16_t second) {
    return _mm256_madd_epi16(_mm256_set_m128i(_mm_set1_epi16(second), _mm_set1_epi16(first)), p16);
}

// q2_K: scales[16] (4-bit scale, 4-bit min per 16 elements) | qs[64] | f16 d | f16 dmin. Element
// 128h + 32j + l is bits 2j..2j+1 of qs[32h + l]; y = d * scale * q - dmin * min.
void q2_k_dots(const uint8_t *w, size_t row_bytes, size_t rows, const uint8_t *act, size_t nblocks,
               float *out) {
    rows_q8_K<BlockQ2_K>(
        w, row_bytes, rows, act, nblocks, out, [](const uint8_t *x, const BlockQ8_K &a) {
            const uint8_t *sc = x + offsetof(BlockQ2_K, scales);
            const __m256i m3 = _mm256_set1_epi8(3);
            __m256i sums = _mm256_setzero_si256();
            for (int h = 0; h < 2; ++h) {
                const __m256i q = load32(x + offsetof(BlockQ2_K, qs) + 32 * h);
                for (int j = 0; j < 4; ++j) {
                    const __m256i codes =
                        _mm256_and_si256(_mm256_srl_epi16(q, _mm_cvtsi32_si128(2 * j)), m3);
                    const __m256i p = _mm256_maddubs_epi16(codes, load32(a.qs + 128 * h + 32 * j));
                    const int s = 8 * h + 2 * j;
                    sums = _mm256_add_epi32(
                        sums, scaled_pairs(p, int16_t(sc[s] & 15), int16_t(sc[s + 1] & 15)));
                }
            }
            int32_t mins = 0;
            for (int i = 0; i < 16; ++i) mins += int32_t(sc[i] >> 4) * a.bsums[i];
            return Block256{sums, f16_at(x + offsetof(BlockQ2_K, d)),
                            -f16_at(x + offsetof(BlockQ2_K, dmin)) * float(mins)};
        });
}

// q3_K: hmask[32] | qs[64] | scales[12] | f16 d. Element 128h + 32j + l has bits 2j..2j+1 of
// qs[32h + l] as its low bits and bit 4h + j of hmask[l] as bit 2: y = d * (s - 32) * (code - 4),
// the 16 six-bit scales s unpacked as ggml's dequantize_row_q3_K does. The - 4 is maddubs(4, q)
// subtracted from maddubs(code, q).
void q3_k_dots(const uint8_t *w, size_t row_bytes, size_t rows, const uint8_t *act, size_t nblocks,
               float *out) {
    rows_q8_K<BlockQ3_K>(
        w, row_bytes, rows, act, nblocks, out, [](const uint8_t *x, const BlockQ8_K &a) {
            const uint8_t *s = x + offsetof(BlockQ3_K, scales);
            constexpr uint32_t kLow2 = 0x03030303u, kLow4 = 0x0F0F0F0Fu;
            const uint32_t a0 = load_u32(s), a1 = load_u32(s + 4), a2 = load_u32(s + 8);
            const uint32_t words[4] = {(a0 & kLow4) | (a2 & kLow2) << 4,
                                       (a1 & kLow4) | (a2 >> 2 & kLow2) << 4,
                                       (a0 >> 4 & kLow4) | (a2 >> 4 & kLow2) << 4,
                                       (a1 >> 4 & kLow4) | (a2 >> 6 & kLow2) << 4};
            uint8_t sc[16];
            std::memcpy(sc, words, 16);
            const __m256i m3 = _mm256_set1_epi8(3), four = _mm256_set1_epi8(4);
            const __m256i hm = load32(x + offsetof(BlockQ3_K, hmask));
            __m256i sums = _mm256_setzero_si256();
            for (int h = 0; h < 2; ++h) {
                const __m256i q = load32(x + offsetof(BlockQ3_K, qs) + 32 * h);
                for (int j = 0; j < 4; ++j) {
                    const __m256i bit = _mm256_set1_epi8(char(1 << (4 * h + j)));
                    const __m256i high =
                        _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hm, bit), bit), four);
                    const __m256i codes = _mm256_or_si256(
                        _mm256_and_si256(_mm256_srl_epi16(q, _mm_cvtsi32_si128(2 * j)), m3), high);
                    const __m256i y = load32(a.qs + 128 * h + 32 * j);
                    const __m256i p = _mm256_sub_epi16(_mm256_maddubs_epi16(codes, y),
                                                       _mm256_maddubs_epi16(four, y));
                    const int k = 8 * h + 2 * j;
                    sums = _mm256_add_epi32(
                        sums, scaled_pairs(p, int16_t(sc[k] - 32), int16_t(sc[k + 1] - 32)));
                }
            }
            return Block256{sums, f16_at(x + offsetof(BlockQ3_K, d)), 0.0f};
        });
}

// q6_K: (6-bit code - 32) * d * scale per 16 elements; code layout as in formats/kquant.cpp. The
// - 32 is maddubs(32, q) subtracted from maddubs(code, q).
void q6_k_dots(const uint8_t *w, size_t row_bytes, size_t rows, const uint8_t *act, size_t nblocks,
               float *out) {
    rows_q8_K<BlockQ6_K>(
        w, row_bytes, rows, act, nblocks, out, [](const uint8_t *x, const BlockQ8_K &a) {
            const __m256i m4 = _mm256_set1_epi8(0x0F), m2 = _mm256_set1_epi8(3 << 4),
                          m32 = _mm256_set1_epi8(32);
            const int8_t *sc = reinterpret_cast<const int8_t *>(x + offsetof(BlockQ6_K, scales));
            __m256i sums = _mm256_setzero_si256();
            for (int h = 0; h < 2; ++h) {
                const __m256i l0 = load32(x + offsetof(BlockQ6_K, ql) + 64 * h);
                const __m256i l1 = load32(x + offsetof(BlockQ6_K, ql) + 64 * h + 32);
                const __m256i t = load32(x + offsetof(BlockQ6_K, qh) + 32 * h);
                const __m256i codes[4] = {
                    _mm256_or_si256(_mm256_and_si256(l0, m4),
                                    _mm256_and_si256(_mm256_slli_epi16(t, 4), m2)),
                    _mm256_or_si256(_mm256_and_si256(l1, m4),
                                    _mm256_and_si256(_mm256_slli_epi16(t, 2), m2)),
                    _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4),
                                    _mm256_and_si256(t, m2)),
                    _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4),
                                    _mm256_and_si256(_mm256_srli_epi16(t, 2), m2)),
                };
                for (int k = 0; k < 4; ++k) {
                    const __m256i q = load32(a.qs + 128 * h + 32 * k);
                    const __m256i p = _mm256_sub_epi16(_mm256_maddubs_epi16(codes[k], q),
                                                       _mm256_maddubs_epi16(m32, q));
                    // int16 lanes 0..7 are elements 0..15 (scale 2j), lanes 8..15 the next 16.
                    const int j = 4 * h + k;
                    const __m256i s =
                        _mm256_set_m128i(_mm_set1_epi16(sc[2 * j + 1]), _mm_set1_epi16(sc[2 * j]));
                    sums = _mm256_add_epi32(sums, _mm256_madd_epi16(s, p));
                }
            }
            return Block256{sums, f16_at(x + offsetof(BlockQ6_K, d)), 0.0f};
        });
}

// iq4_xs: kvalues_iq4nl[nibble] * d * (6-bit scale - 32) per 32 elements.
void iq4_xs_dots(const uint8_t *w, size_t row_bytes, size_t rows, const uint8_t *act,
                 size_t nblocks, float *out) {
    const __m256i table = table32(kvalues_iq4nl);
    rows_q8_K<BlockIq4_XS>(
        w, row_bytes, rows, act, nblocks, out, [table](const uint8_t *x, const BlockQ8_K &a) {
            const uint32_t scales_h = load_u16(x + offsetof(BlockIq4_XS, scales_h));
            const uint32_t scales_l = load_u32(x + offsetof(BlockIq4_XS, scales_l));
            __m256i sums = _mm256_setzero_si256();
            for (int ib = 0; ib < 8; ++ib) {
                const int ls = int((scales_l >> 4 * ib) & 15) | int((scales_h >> 2 * ib) & 3) << 4;
                const __m256i v = lookup(table, x + offsetof(BlockIq4_XS, qs) + 16 * ib);
                const __m256i q = load32(a.qs + 32 * ib);
                const __m256i p =
                    _mm256_maddubs_epi16(_mm256_sign_epi8(v, v), _mm256_sign_epi8(q, v));
                sums = _mm256_add_epi32(sums,
                                        _mm256_madd_epi16(_mm256_set1_epi16(int16_t(ls - 32)), p));
            }
            return Block256{sums, f16_at(x), 0.0f};
        });
}

#define GGUFTOOL_DOT_ROW(type, act) DotKernel{GgmlType::type, ActFormat::act, type##_dots},
const DotKernel kDotKernels[] = {GGUFTOOL_DOT_FORMATS(GGUFTOOL_DOT_ROW)};
#undef GGUFTOOL_DOT_ROW
