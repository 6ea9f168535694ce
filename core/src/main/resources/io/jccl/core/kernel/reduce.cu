// JCCL's reduction kernels: dst[i] = a[i] op b[i] and buf[i] /= divisor for every NCCL type.
// Compiled at run time by NVRTC (CudaReductionKernel), so no header is included: the 16-bit and
// 8-bit floating-point conversions are the GPU's own cvt instructions, written as inline PTX.
//
// The results must equal HostReductionKernel's bit for bit:
//  - integers wrap (computed unsigned, so signed overflow is defined) and divide toward zero;
//  - float and double use IEEE +, *, / (NVRTC's default precision; never fast-math);
//  - max and min follow Java's Math.max/min for float and double (NaN wins, -0 < +0), and for the
//    16- and 8-bit types return the input bits of the winner, NaN in a winning;
//  - 16- and 8-bit floats compute in float and round once, to nearest even (8-bit: saturating to
//    the largest finite value, as NCCL's fp8 conversions do).

typedef signed char i8;
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef long long i64;
typedef unsigned long long u64;

#define LOOP(n) for (u64 i = blockIdx.x * (u64) blockDim.x + threadIdx.x; i < (n); i += (u64) gridDim.x * blockDim.x)

// Memory bound: each thread moves 16 bytes per load (a uint4) when a, b and d are 16-byte aligned,
// the elements of the vector combined one by one, then the tail element by element. Op is a functor
// with T operator()(T, T).
union Vec16 {
    uint4 v;
    unsigned char bytes[16];
};

template <typename T, typename Op>
__device__ void reduce_all(const T* a, const T* b, T* d, unsigned long long n, Op op) {
    const unsigned long long per = 16 / sizeof(T);
    unsigned long long start = 0;
    if ((((unsigned long long) a | (unsigned long long) b | (unsigned long long) d) & 15) == 0) {
        unsigned long long vectors = n / per;
        const uint4* va = (const uint4*) a;
        const uint4* vb = (const uint4*) b;
        uint4* vd = (uint4*) d;
        LOOP(vectors) {
            Vec16 x, y, z;
            x.v = va[i];
            y.v = vb[i];
            const T* xs = (const T*) x.bytes;
            const T* ys = (const T*) y.bytes;
            T* zs = (T*) z.bytes;
#pragma unroll
            for (int k = 0; k < (int) per; k++) zs[k] = op(xs[k], ys[k]);
            vd[i] = z.v;
        }
        start = vectors * per;
    }
    LOOP(n - start) d[start + i] = op(a[start + i], b[start + i]);
}

// JCCL_OPS_ONLY (the P2P ring's build): the operation functors without these kernels, so that a
// module holds only the kernels it needs (the driver compiles every kernel of a module it loads).
#ifdef JCCL_OPS_ONLY
#define KERNEL(NAME, OP, T, EXPR)                                                                        \
    struct NAME##_##OP##_op {                                                                            \
        __device__ T operator()(T x, T y) const { return EXPR; }                                         \
    };
#else
#define KERNEL(NAME, OP, T, EXPR)                                                                        \
    struct NAME##_##OP##_op {                                                                            \
        __device__ T operator()(T x, T y) const { return EXPR; }                                         \
    };                                                                                                   \
    extern "C" __global__ void jccl_##NAME##_##OP(const T* a, const T* b, T* d, u64 n) {                 \
        reduce_all(a, b, d, n, NAME##_##OP##_op());                                                      \
    }
#endif

// ---- integers -------------------------------------------------------------------------------------

// U: the unsigned type the arithmetic wraps in; D: the type the host divides in (Java: int for the
// 8-bit types, unsigned for the unsigned ones)
#define INTEGER(NAME, T, U, D)                                                                           \
    KERNEL(NAME, sum, T, (T) ((U) x + (U) y))                                                            \
    KERNEL(NAME, prod, T, (T) ((U) x * (U) y))                                                           \
    KERNEL(NAME, max, T, x >= y ? x : y)                                                                 \
    KERNEL(NAME, min, T, x <= y ? x : y)                                                                 \
    extern "C" __global__ void jccl_##NAME##_div(T* buf, u64 n, int divisor) {                           \
        LOOP(n) buf[i] = (T) ((D) buf[i] / (D) divisor);                                                 \
    }

INTEGER(int8, i8, u8, int)
INTEGER(uint8, u8, u8, int)
INTEGER(int32, int, u32, int)
INTEGER(uint32, u32, u32, u32)
INTEGER(int64, i64, u64, i64)
INTEGER(uint64, u64, u64, u64)

// ---- float and double: Java's max and min -----------------------------------------------------------

__device__ bool is_negative_zero(float x) { return __float_as_uint(x) == 0x80000000u; }
__device__ bool is_negative_zero(double x) { return (u64) __double_as_longlong(x) == 0x8000000000000000ull; }

template <typename F> __device__ F java_max(F x, F y) {
    if (x != x) return x;
    if (x == 0 && y == 0 && is_negative_zero(x)) return y;
    return x >= y ? x : y;
}

template <typename F> __device__ F java_min(F x, F y) {
    if (x != x) return x;
    if (x == 0 && y == 0 && is_negative_zero(y)) return y;
    return x <= y ? x : y;
}

#define FLOATING(NAME, T)                                                                                \
    KERNEL(NAME, sum, T, x + y)                                                                          \
    KERNEL(NAME, prod, T, x * y)                                                                         \
    KERNEL(NAME, max, T, java_max(x, y))                                                                 \
    KERNEL(NAME, min, T, java_min(x, y))                                                                 \
    extern "C" __global__ void jccl_##NAME##_div(T* buf, u64 n, int divisor) {                           \
        LOOP(n) buf[i] = buf[i] / (T) divisor;                                                           \
    }

FLOATING(float32, float)
FLOATING(float64, double)

// ---- 16- and 8-bit floats through float ------------------------------------------------------------

__device__ float from_float16(u16 h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}
__device__ u16 to_float16(float f) {
    u16 h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}
__device__ float from_bfloat16(u16 h) { return __uint_as_float(((u32) h) << 16); }
__device__ u16 to_bfloat16(float f) {
    u32 bits = __float_as_uint(f);
    if ((bits & 0x7fffffffu) > 0x7f800000u) return (u16) ((bits >> 16) | 0x0040u); // NaN stays NaN, as on the host
    return (u16) ((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

#define NARROW(NAME, T, FROM, TO)                                                                        \
    KERNEL(NAME, sum, T, TO(FROM(x) + FROM(y)))                                                          \
    KERNEL(NAME, prod, T, TO(FROM(x) * FROM(y)))                                                         \
    KERNEL(NAME, max, T, FROM(x) >= FROM(y) || FROM(x) != FROM(x) ? x : y)                               \
    KERNEL(NAME, min, T, FROM(x) <= FROM(y) || FROM(x) != FROM(x) ? x : y)                               \
    extern "C" __global__ void jccl_##NAME##_div(T* buf, u64 n, int divisor) {                           \
        LOOP(n) buf[i] = TO(FROM(buf[i]) / (float) divisor);                                             \
    }

NARROW(float16, u16, from_float16, to_float16)
NARROW(bfloat16, u16, from_bfloat16, to_bfloat16)

// The fp8 conversions are instructions of compute capability 8.9 and later (Ada, Hopper): on older
// GPUs these kernels do not exist, and CudaReductionKernel reports fp8 as unsupported.
#if __CUDA_ARCH__ >= 890
__device__ float from_e4m3(u8 v) {
    u32 h2;
    u16 in = v;
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"(in));
    return from_float16((u16) (h2 & 0xffffu));
}
__device__ u8 to_e4m3(float f) {
    u16 out;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(out) : "f"(0.0f), "f"(f));
    return (u8) (out & 0xffu);
}
__device__ float from_e5m2(u8 v) {
    u32 h2;
    u16 in = v;
    asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(h2) : "h"(in));
    return from_float16((u16) (h2 & 0xffffu));
}
__device__ u8 to_e5m2(float f) {
    u16 out;
    asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(out) : "f"(0.0f), "f"(f));
    return (u8) (out & 0xffu);
}

NARROW(float8e4m3, u8, from_e4m3, to_e4m3)
NARROW(float8e5m2, u8, from_e5m2, to_e5m2)
#endif
