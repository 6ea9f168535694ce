package io.jccl.net.collnet;

import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The aggregator's arithmetic: {@code acc = acc op in}, element by element, as NCCL's kernels
 * compute it (integers wrap, unsigned types compare unsigned, half and bfloat16 round once per
 * operation). Like SHARP, JcclCollNet leaves out the 8-bit floats; {@code reduceSupport} says so.
 */
final class Reductions {
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED;
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED;
    private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED;

    private Reductions() {
    }

    static boolean supports(DataType type, ReduceOp op) {
        return type != DataType.FLOAT8_E4M3 && type != DataType.FLOAT8_E5M2 && op != ReduceOp.AVG;
    }

    /** {@code acc[0, bytes) = acc op in}; the pair must be {@link #supports supported}. */
    static void reduce(DataType type, ReduceOp op, MemorySegment acc, MemorySegment in, long bytes) {
        switch (type) {
            case INT8, UINT8 -> bytes8(type == DataType.UINT8, op, acc, in, bytes);
            case INT32, UINT32 -> ints(type == DataType.UINT32, op, acc, in, bytes / 4);
            case INT64, UINT64 -> longs(type == DataType.UINT64, op, acc, in, bytes / 8);
            case FLOAT32 -> floats(op, acc, in, bytes / 4);
            case FLOAT64 -> doubles(op, acc, in, bytes / 8);
            case FLOAT16, BFLOAT16 -> halves(type == DataType.BFLOAT16, op, acc, in, bytes / 2);
            default -> throw new IllegalArgumentException(type + " is not reduced by JcclCollNet");
        }
    }

    private static void bytes8(boolean unsigned, ReduceOp op, MemorySegment acc, MemorySegment in, long n) {
        for (long i = 0; i < n; i++) {
            int a = acc.get(ValueLayout.JAVA_BYTE, i);
            int b = in.get(ValueLayout.JAVA_BYTE, i);
            if (unsigned) {
                a &= 0xFF;
                b &= 0xFF;
            }
            int r = switch (op) {
                case SUM -> a + b;
                case PROD -> a * b;
                case MAX -> Math.max(a, b);
                default -> Math.min(a, b);
            };
            acc.set(ValueLayout.JAVA_BYTE, i, (byte) r);
        }
    }

    private static void ints(boolean unsigned, ReduceOp op, MemorySegment acc, MemorySegment in, long n) {
        switch (op) {
            case SUM -> {
                for (long i = 0; i < n; i++) {
                    acc.setAtIndex(I32, i, acc.getAtIndex(I32, i) + in.getAtIndex(I32, i));
                }
            }
            case PROD -> {
                for (long i = 0; i < n; i++) {
                    acc.setAtIndex(I32, i, acc.getAtIndex(I32, i) * in.getAtIndex(I32, i));
                }
            }
            default -> {
                boolean max = op == ReduceOp.MAX;
                for (long i = 0; i < n; i++) {
                    int a = acc.getAtIndex(I32, i);
                    int b = in.getAtIndex(I32, i);
                    int c = unsigned ? Integer.compareUnsigned(a, b) : Integer.compare(a, b);
                    acc.setAtIndex(I32, i, (c >= 0) == max ? a : b);
                }
            }
        }
    }

    private static void longs(boolean unsigned, ReduceOp op, MemorySegment acc, MemorySegment in, long n) {
        switch (op) {
            case SUM -> {
                for (long i = 0; i < n; i++) {
                    acc.setAtIndex(I64, i, acc.getAtIndex(I64, i) + in.getAtIndex(I64, i));
                }
            }
            case PROD -> {
                for (long i = 0; i < n; i++) {
                    acc.setAtIndex(I64, i, acc.getAtIndex(I64, i) * in.getAtIndex(I64, i));
                }
            }
            default -> {
                boolean max = op == ReduceOp.MAX;
                for (long i = 0; i < n; i++) {
                    long a = acc.getAtIndex(I64, i);
                    long b = in.getAtIndex(I64, i);
                    int c = unsigned ? Long.compareUnsigned(a, b) : Long.compare(a, b);
                    acc.setAtIndex(I64, i, (c >= 0) == max ? a : b);
                }
            }
        }
    }

    private static void floats(ReduceOp op, MemorySegment acc, MemorySegment in, long n) {
        switch (op) {
            case SUM -> {
                for (long i = 0; i < n; i++) {
                    acc.setAtIndex(F32, i, acc.getAtIndex(F32, i) + in.getAtIndex(F32, i));
                }
            }
            case PROD -> {
                for (long i = 0; i < n; i++) {
                    acc.setAtIndex(F32, i, acc.getAtIndex(F32, i) * in.getAtIndex(F32, i));
                }
            }
            case MAX -> {
                for (long i = 0; i < n; i++) {
                    acc.setAtIndex(F32, i, Math.max(acc.getAtIndex(F32, i), in.getAtIndex(F32, i)));
                }
            }
            default -> {
                for (long i = 0; i < n; i++) {
                    acc.setAtIndex(F32, i, Math.min(acc.getAtIndex(F32, i), in.getAtIndex(F32, i)));
                }
            }
        }
    }

    private static void doubles(ReduceOp op, MemorySegment acc, MemorySegment in, long n) {
        for (long i = 0; i < n; i++) {
            double a = acc.getAtIndex(F64, i);
            double b = in.getAtIndex(F64, i);
            acc.setAtIndex(F64, i, switch (op) {
                case SUM -> a + b;
                case PROD -> a * b;
                case MAX -> Math.max(a, b);
                default -> Math.min(a, b);
            });
        }
    }

    private static void halves(boolean bf16, ReduceOp op, MemorySegment acc, MemorySegment in, long n) {
        for (long i = 0; i < n; i++) {
            float a = toFloat(bf16, acc.getAtIndex(I16, i));
            float b = toFloat(bf16, in.getAtIndex(I16, i));
            float r = switch (op) {
                case SUM -> a + b;
                case PROD -> a * b;
                case MAX -> Math.max(a, b);
                default -> Math.min(a, b);
            };
            acc.setAtIndex(I16, i, fromFloat(bf16, r));
        }
    }

    private static float toFloat(boolean bf16, short bits) {
        return bf16 ? Float.intBitsToFloat(bits << 16) : Float.float16ToFloat(bits);
    }

    /** Rounds to nearest, ties to even, as the GPU's conversions do. */
    private static short fromFloat(boolean bf16, float f) {
        if (!bf16) {
            return Float.floatToFloat16(f);
        }
        if (Float.isNaN(f)) {
            return (short) 0x7FC0;
        }
        int b = Float.floatToRawIntBits(f);
        b += 0x7FFF + ((b >>> 16) & 1);
        return (short) (b >>> 16);
    }
}
