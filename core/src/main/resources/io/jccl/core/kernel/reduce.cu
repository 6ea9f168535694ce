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

// ---- integers -------------------------------------------------------------------------------------

#define INTEGER(NAME, T, U, D)                                                                            \
    extern "C" __global__ void jccl_##NAME##_sum(const T* a, const T* b, T* d, u64 n) {                  \
        LOOP(n) d[i] = (T) ((U) a[i] + (U) b[i]);                                                        \
    }                                                                                                    \
    extern "C" __global__ void jccl_##NAME##_prod(const T* a, const T* b, T* d, u64 n) {                 \
        LOOP(n) d[i] = (T) ((U) a[i] * (U) b[i]);                                                        \
    }                                                                                                    \
    extern "C" __global__ void jccl_##NAME##_max(const T* a, const T* b, T* d, u64 n) {                  \
        LOOP(n) d[i] = a[i] >= b[i] ? a[i] : b[i];                                                       \
    }                                                                                                    \
    extern "C" __global__ void jccl_##NAME##_min(const T* a, const T* b, T* d, u64 n) {                  \
        LOOP(n) d[i] = a[i] <= b[i] ? a[i] : b[i];                                                       \
    }                                                                                                    \
    extern "C" __global__ void jccl_##NAME##_div(T* buf, u64 n, int divisor) {                           \
        LOOP(n) buf[i] = (T) ((D) buf[i] / (D) divisor);                                                 \
    }

// D: the type the host divides in (Java: int for 8-bit, unsigned for the unsigned types)
INTEGER(int8, i8, u8, int)
INTEGER(uint8, u8, u8, int)
INTEGER(int32, int, u32, int)
INTEGER(uint32, u32, u32, u32)
INTEGER(int64, i64, u64, i64)
INTEGER(uint64, u64, u64, u64)

// ---- float and double: Java's max and min -----------------------------------------------------------

template <typename F> __device__ bool is_negative_zero(F x);
template <> __device__ bool is_negative_zero<float>(float x) { return __float_as_uint(x) == 0x80000000u; }
template <> __device__ bool is_negative_zero<double>(double x) {
    return (u64) __double_as_longlong(x) == 0x8000000000000000ull;
}

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
    extern "C" __global__ void jccl_##NAME##_sum(const T* a, const T* b, T* d, u64 n) {                  \
        LOOP(n) d[i] = a[i] + b[i];                                                                      \
    }                                                                                                    \
    extern "C" __global__ void jccl_##NAME##_prod(const T* a, const T* b, T* d, u64 n) {                 \
        LOOP(n) d[i] = a[i] * b[i];                                                                      \
    }                                                                                                    \
    extern "C" __global__ void jccl_##NAME##_max(const T* a, const T* b, T* d, u64 n) {                  \
        LOOP(n) d[i] = java_max(a[i], b[i]);                                                             \
    }                                                                                                    \
    extern "C" __global__ void jccl_##NAME##_min(const T* a, const T* b, T* d, u64 n) {                  \
        LOOP(n) d[i] = java_min(a[i], b[i]);                                                             \
    }                                                                                                    \
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
    extern "C" __global__ void jccl_##NAME##_sum(const T* a, const T* b, T* d, u64 n) {                  \
        LOOP(n) d[i] = TO(FROM(a[i]) + FROM(b[i]));                                                      \
    }                                                                                                    \
    extern "C" __global__ void jccl_##NAME##_prod(const T* a, const T* b, T* d, u64 n) {                 \
        LOOP(n) d[i] = TO(FROM(a[i]) * FROM(b[i]));                                                      \
    }                                                                                                    \
    extern "C" __global__ void jccl_##NAME##_max(const T* a, const T* b, T* d, u64 n) {                  \
        LOOP(n) {                                                                                        \
            float x = FROM(a[i]);                                                                        \
            d[i] = x >= FROM(b[i]) || x != x ? a[i] : b[i];                                              \
        }                                                                                                \
    }                                                                                                    \
    extern "C" __global__ void jccl_##NAME##_min(const T* a, const T* b, T* d, u64 n) {                  \
        LOOP(n) {                                                                                        \
            float x = FROM(a[i]);                                                                        \
            d[i] = x <= FROM(b[i]) || x != x ? a[i] : b[i];                                              \
        }                                                                                                \
    }                                                                                                    \
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
