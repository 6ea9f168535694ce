/*
 * libjccl-streamstores.so: reductions and a copy whose stores bypass the caches (non-temporal
 * stores), called by io.jccl.core.kernel.StreamingStoreKernel through FFM.
 *
 * Why: a reduction d = a op b that writes more than the caches hold pays for each line of d twice,
 * a read for ownership before the store and the write-back after it, while a large memory copy
 * (the JDK's MemorySegment.copy, glibc's memcpy) streams its stores and pays once. On a 2-core Xeon
 * guest, float32 sum over 64 MiB buffers moved 0.71x to 0.82x of memcpy's bytes with ordinary
 * stores and 1.10x to 1.19x with streaming ones; in cache streaming stores halve the speed. The
 * Java kernels have no streaming store (the Vector API has none), so the types they compute get
 * fused loops here (jccl_stream_reduce); where none runs, StreamingStoreKernel has the Java kernel
 * reduce a block at a time into a small buffer that stays in L1, and jccl_stream_copy streams each
 * block out.
 *
 * The stores are weakly ordered: the closing sfence makes them visible before any later store of
 * the calling thread (a flag that tells another rank the data is there).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

#if defined(__x86_64__)
#include <immintrin.h>

/* 1: this library streams stores here (SSE2, which every x86-64 has); 0: it is not x86-64. */
EXPORT int jccl_stream_stores_available(void) {
    return 1;
}

/*
 * Copies n bytes from src_base + src_offset to dst_base + dst_offset (the caller has checked the
 * bounds; the ranges do not overlap), whole 64-byte lines of the destination by streaming stores,
 * the unaligned head and tail by ordinary ones.
 */
EXPORT void jccl_stream_copy(const char *src_base, size_t src_offset, char *dst_base, size_t dst_offset, size_t n) {
    const char *src = src_base + src_offset;
    char *dst = dst_base + dst_offset;
    size_t head = (64 - ((uintptr_t) dst & 63)) & 63;
    if (head > n) {
        head = n;
    }
    memcpy(dst, src, head);
    src += head;
    dst += head;
    n -= head;
    size_t lines = n / 64;
    for (size_t i = 0; i < lines; i++, src += 64, dst += 64) {
        __m128i v0 = _mm_loadu_si128((const __m128i *) src);
        __m128i v1 = _mm_loadu_si128((const __m128i *) (src + 16));
        __m128i v2 = _mm_loadu_si128((const __m128i *) (src + 32));
        __m128i v3 = _mm_loadu_si128((const __m128i *) (src + 48));
        _mm_stream_si128((__m128i *) dst, v0);
        _mm_stream_si128((__m128i *) (dst + 16), v1);
        _mm_stream_si128((__m128i *) (dst + 32), v2);
        _mm_stream_si128((__m128i *) (dst + 48), v3);
    }
    memcpy(dst, src, n % 64);
    _mm_sfence();
}

/*
 * d = a op b in one loop with streaming stores, for the types the Java kernels compute (a fused
 * loop moves memory's speed; reducing into a block and streaming the block out moved about 0.8 of
 * it): GCC's generic vectors, built for AVX-512 and for AVX2 and picked by what the CPU has.
 * Results are the Java kernels' bits: integers wrap; max and min are Math.max and Math.min (a NaN
 * wins, the first if both are; max of two zeros +0, min -0); sums and products are IEEE's, as
 * the JVM runs them (round to nearest, no flush of subnormals), NaN payloads aside.
 */
#define AHEAD 4096 /* bytes loaded ahead of the loop: the hardware prefetchers alone lag behind */
#define WIDTH_512 __attribute__((target("avx2,avx512f,avx512bw,avx512dq")))
#define WIDTH_256 __attribute__((target("avx2")))

typedef enum { T_INT8, T_UINT8, T_INT32, T_UINT32, T_INT64, T_UINT64, T_FLOAT32, T_FLOAT64 } type_code;

/* The loops' first step: x and y from a and b at i (any alignment), and the loads 4 KiB on started. */
#define LOAD_XY(V)                                                                                  \
    _mm_prefetch(a + i + AHEAD, _MM_HINT_T0);                                                       \
    _mm_prefetch(b + i + AHEAD, _MM_HINT_T0);                                                       \
    V x, y;                                                                                         \
    memcpy(&x, a + i, sizeof(V));                                                                   \
    memcpy(&y, b + i, sizeof(V))

/* One loop per (vector width, element type, operation); V the value vector, U its unsigned-bits vector. */
#define ARITH_LOOP(NAME, TARGET, V, U, EXPR)                                                        \
    static TARGET void NAME(const char *a, const char *b, char *d, size_t bytes) {                  \
        for (size_t i = 0; i < bytes; i += sizeof(V)) {                                             \
            LOAD_XY(V);                                                                             \
            V r = EXPR;                                                                             \
            STREAM(d + i, r);                                                                       \
        }                                                                                           \
    }

/* float max and min as Math.max and Math.min: x if x wins or is NaN, y if y wins or is NaN (x not),
 * else (equal values) the bits' AND for max (+0 over -0) and OR for min. M is the signed-mask vector. */
#define PICK_LOOP(NAME, TARGET, V, M, WINS, JOIN)                                                   \
    static TARGET void NAME(const char *a, const char *b, char *d, size_t bytes) {                  \
        for (size_t i = 0; i < bytes; i += sizeof(V)) {                                             \
            LOAD_XY(V);                                                                             \
            M xb = (M) x, yb = (M) y;                                                               \
            M x_nan = (M) (x != x), y_nan = (M) (y != y);                                           \
            M take_x = (M) (x WINS y) | x_nan;                                                      \
            M take_y = ((M) (y WINS x) | y_nan) & ~x_nan;                                           \
            M r = (take_x & xb) | (take_y & yb) | (~(take_x | take_y) & (xb JOIN yb));              \
            STREAM(d + i, r);                                                                       \
        }                                                                                           \
    }

/* C has no ?: on vectors: a compare gives a mask M of all-ones lanes, and the pick is by bits. C is
 * the type compared (signed or unsigned), U the unsigned one that wraps, M the signed mask type. */
#define SELECT(M, m, x, y) (((M) (m) & (M) (x)) | (~(M) (m) & (M) (y)))
#define INT_LOOPS(W, TARGET, C, U, M, T)                                                            \
    ARITH_LOOP(sum_##T##_##W, TARGET, U, U, x + y)                                                  \
    ARITH_LOOP(prod_##T##_##W, TARGET, U, U, x * y)                                                 \
    ARITH_LOOP(max_##T##_##W, TARGET, C, M, (C) SELECT(M, x >= y, x, y))                            \
    ARITH_LOOP(min_##T##_##W, TARGET, C, M, (C) SELECT(M, x <= y, x, y))

#define FLOAT_LOOPS(W, TARGET, F, M, T)                                                             \
    ARITH_LOOP(sum_##T##_##W, TARGET, F, M, x + y)                                                  \
    ARITH_LOOP(prod_##T##_##W, TARGET, F, M, x * y)                                                 \
    PICK_LOOP(max_##T##_##W, TARGET, F, M, >, &)                                                    \
    PICK_LOOP(min_##T##_##W, TARGET, F, M, <, |)

/* Every loop at one width; B the vector size in bytes. */
#define ALL_LOOPS(W, TARGET, B)                                                                     \
    typedef int8_t s8_##W __attribute__((vector_size(B)));                                          \
    typedef uint8_t u8_##W __attribute__((vector_size(B)));                                         \
    typedef int32_t s32_##W __attribute__((vector_size(B)));                                        \
    typedef uint32_t u32_##W __attribute__((vector_size(B)));                                       \
    typedef int64_t s64_##W __attribute__((vector_size(B)));                                        \
    typedef uint64_t u64_##W __attribute__((vector_size(B)));                                       \
    typedef float f32_##W __attribute__((vector_size(B)));                                          \
    typedef double f64_##W __attribute__((vector_size(B)));                                         \
    INT_LOOPS(W, TARGET, s8_##W, u8_##W, s8_##W, int8)                                              \
    INT_LOOPS(W, TARGET, u8_##W, u8_##W, s8_##W, uint8)                                             \
    INT_LOOPS(W, TARGET, s32_##W, u32_##W, s32_##W, int32)                                          \
    INT_LOOPS(W, TARGET, u32_##W, u32_##W, s32_##W, uint32)                                         \
    INT_LOOPS(W, TARGET, s64_##W, u64_##W, s64_##W, int64)                                          \
    INT_LOOPS(W, TARGET, u64_##W, u64_##W, s64_##W, uint64)                                         \
    FLOAT_LOOPS(W, TARGET, f32_##W, s32_##W, float32)                                               \
    FLOAT_LOOPS(W, TARGET, f64_##W, s64_##W, float64)                                               \
    static TARGET void reduce_##W(int type, int op, const char *a, const char *b, char *d, size_t bytes) { \
        static void (*const loops[8][4])(const char *, const char *, char *, size_t) = {           \
            {sum_int8_##W, prod_int8_##W, max_int8_##W, min_int8_##W},                             \
            {sum_uint8_##W, prod_uint8_##W, max_uint8_##W, min_uint8_##W},                          \
            {sum_int32_##W, prod_int32_##W, max_int32_##W, min_int32_##W},                          \
            {sum_uint32_##W, prod_uint32_##W, max_uint32_##W, min_uint32_##W},                      \
            {sum_int64_##W, prod_int64_##W, max_int64_##W, min_int64_##W},                          \
            {sum_uint64_##W, prod_uint64_##W, max_uint64_##W, min_uint64_##W},                      \
            {sum_float32_##W, prod_float32_##W, max_float32_##W, min_float32_##W},                  \
            {sum_float64_##W, prod_float64_##W, max_float64_##W, min_float64_##W},                  \
        };                                                                                          \
        loops[type][op](a, b, d, bytes);                                                            \
    }

#define STREAM(p, v) _mm512_stream_si512((void *) (p), (__m512i) (v))
ALL_LOOPS(512, WIDTH_512, 64)
#undef STREAM
#define STREAM(p, v) _mm256_stream_si256((__m256i *) (p), (__m256i) (v))
ALL_LOOPS(256, WIDTH_256, 32)
#undef STREAM

/* 2: AVX-512 F, BW and DQ; 1: AVX2; 0: neither (no streaming reductions; jccl_stream_copy still works). */
EXPORT int jccl_stream_reduce_width(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq")) {
        return 2;
    }
    return __builtin_cpu_supports("avx2") ? 1 : 0;
}

/*
 * d = a op b over whole 64-byte lines, d aligned to 64 (the caller does the head and tail and has
 * checked the bounds; d may be a or b), streamed past the caches and fenced. width: 2 for AVX-512,
 * 1 for AVX2 (at most jccl_stream_reduce_width()); type as type_code; op: 0 sum, 1 product, 2 max,
 * 3 min. Returns 0, or -1 (nothing written) for another width, type, op, an unaligned d or a byte
 * count that is not whole lines.
 */
EXPORT int jccl_stream_reduce(int width, int type, int op, const char *a_base, size_t a_offset, const char *b_base,
                              size_t b_offset, char *d_base, size_t d_offset, size_t bytes) {
    static int widest = -1;
    if (widest < 0) {
        widest = jccl_stream_reduce_width(); /* a racing second computation stores the same value */
    }
    char *d = d_base + d_offset;
    if (type < T_INT8 || type > T_FLOAT64 || op < 0 || op > 3 || ((uintptr_t) d & 63) != 0 || bytes % 64 != 0
        || width < 1 || width > widest) {
        return -1;
    }
    if (width == 2) {
        reduce_512(type, op, a_base + a_offset, b_base + b_offset, d, bytes);
    } else {
        reduce_256(type, op, a_base + a_offset, b_base + b_offset, d, bytes);
    }
    _mm_sfence();
    return 0;
}

#else /* not x86-64: the library links, and says it does not stream here */

EXPORT int jccl_stream_stores_available(void) {
    return 0;
}

EXPORT void jccl_stream_copy(const char *src_base, size_t src_offset, char *dst_base, size_t dst_offset, size_t n) {
    memcpy(dst_base + dst_offset, src_base + src_offset, n);
}

EXPORT int jccl_stream_reduce_width(void) {
    return 0;
}

EXPORT int jccl_stream_reduce(int width, int type, int op, const char *a_base, size_t a_offset, const char *b_base,
                              size_t b_offset, char *d_base, size_t d_offset, size_t bytes) {
    (void) width, (void) type, (void) op, (void) a_base, (void) a_offset, (void) b_base, (void) b_offset, (void) d_base,
        (void) d_offset, (void) bytes;
    return -1;
}

#endif
