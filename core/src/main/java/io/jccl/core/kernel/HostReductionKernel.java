package io.jccl.core.kernel;

import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Reductions over host memory in plain Java loops, one per type and operation so that the JIT
 * compiles each to a tight (and, for the wider types, vectorised) loop. Integer arithmetic wraps,
 * as in C; unsigned types compare unsigned; float16 and bfloat16 compute through float
 * ({@link HalfFloats}). Floating-point 8-bit types have no host arithmetic: {@link #supports} says so.
 */
public final class HostReductionKernel implements ReductionKernel {
    /** The one instance: the kernel has no state. */
    public static final HostReductionKernel INSTANCE = new HostReductionKernel();

    private static final ValueLayout.OfByte JAVA_BYTE = ValueLayout.JAVA_BYTE;
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED;
    private static final ValueLayout.OfDouble DOUBLE = ValueLayout.JAVA_DOUBLE_UNALIGNED;
    /** Elements per inner loop: int-counted loops compile best, and this keeps offsets in range. */
    private static final int BLOCK = 1 << 26;

    private HostReductionKernel() {
    }

    @Override
    public boolean supports(DataType type, ReduceOp op) {
        return type != DataType.FLOAT8_E4M3 && type != DataType.FLOAT8_E5M2;
    }

    @Override
    public void reduce(DataType type, ReduceOp op, MemorySegment a, long aOffset, MemorySegment b, long bOffset,
                       MemorySegment dst, long dstOffset, long count) {
        int size = type.size();
        for (long done = 0; done < count; done += BLOCK) {
            int n = (int) Math.min(BLOCK, count - done);
            long skip = done * size;
            reduceBlock(type, op, a, aOffset + skip, b, bOffset + skip, dst, dstOffset + skip, n);
        }
    }

    private static void reduceBlock(DataType type, ReduceOp op, MemorySegment a, long ao, MemorySegment b, long bo,
                                    MemorySegment d, long dO, int n) {
        switch (type) {
            case INT8, UINT8 -> {
                boolean u = type == DataType.UINT8;
                switch (op) {
                    case SUM -> sumByte(a, ao, b, bo, d, dO, n);
                    case PROD -> prodByte(a, ao, b, bo, d, dO, n);
                    case MAX -> { if (u) maxUByte(a, ao, b, bo, d, dO, n); else maxByte(a, ao, b, bo, d, dO, n); }
                    case MIN -> { if (u) minUByte(a, ao, b, bo, d, dO, n); else minByte(a, ao, b, bo, d, dO, n); }
                    default -> throw unsupported(type, op);
                }
            }
            case INT32, UINT32 -> {
                boolean u = type == DataType.UINT32;
                switch (op) {
                    case SUM -> sumInt(a, ao, b, bo, d, dO, n);
                    case PROD -> prodInt(a, ao, b, bo, d, dO, n);
                    case MAX -> { if (u) maxUInt(a, ao, b, bo, d, dO, n); else maxInt(a, ao, b, bo, d, dO, n); }
                    case MIN -> { if (u) minUInt(a, ao, b, bo, d, dO, n); else minInt(a, ao, b, bo, d, dO, n); }
                    default -> throw unsupported(type, op);
                }
            }
            case INT64, UINT64 -> {
                boolean u = type == DataType.UINT64;
                switch (op) {
                    case SUM -> sumLong(a, ao, b, bo, d, dO, n);
                    case PROD -> prodLong(a, ao, b, bo, d, dO, n);
                    case MAX -> { if (u) maxULong(a, ao, b, bo, d, dO, n); else maxLong(a, ao, b, bo, d, dO, n); }
                    case MIN -> { if (u) minULong(a, ao, b, bo, d, dO, n); else minLong(a, ao, b, bo, d, dO, n); }
                    default -> throw unsupported(type, op);
                }
            }
            case FLOAT32 -> {
                switch (op) {
                    case SUM -> sumFloat(a, ao, b, bo, d, dO, n);
                    case PROD -> prodFloat(a, ao, b, bo, d, dO, n);
                    case MAX -> maxFloat(a, ao, b, bo, d, dO, n);
                    case MIN -> minFloat(a, ao, b, bo, d, dO, n);
                    default -> throw unsupported(type, op);
                }
            }
            case FLOAT64 -> {
                switch (op) {
                    case SUM -> sumDouble(a, ao, b, bo, d, dO, n);
                    case PROD -> prodDouble(a, ao, b, bo, d, dO, n);
                    case MAX -> maxDouble(a, ao, b, bo, d, dO, n);
                    case MIN -> minDouble(a, ao, b, bo, d, dO, n);
                    default -> throw unsupported(type, op);
                }
            }
            case FLOAT16 -> {
                switch (op) {
                    case SUM -> sumHalf(a, ao, b, bo, d, dO, n);
                    case PROD -> prodHalf(a, ao, b, bo, d, dO, n);
                    case MAX -> maxHalf(a, ao, b, bo, d, dO, n);
                    case MIN -> minHalf(a, ao, b, bo, d, dO, n);
                    default -> throw unsupported(type, op);
                }
            }
            case BFLOAT16 -> {
                switch (op) {
                    case SUM -> sumBf16(a, ao, b, bo, d, dO, n);
                    case PROD -> prodBf16(a, ao, b, bo, d, dO, n);
                    case MAX -> maxBf16(a, ao, b, bo, d, dO, n);
                    case MIN -> minBf16(a, ao, b, bo, d, dO, n);
                    default -> throw unsupported(type, op);
                }
            }
            default -> throw unsupported(type, op);
        }
    }

    @Override
    public void divide(DataType type, MemorySegment buf, long offset, long count, int divisor) {
        if (divisor == 1) {
            return;
        }
        int size = type.size();
        for (long i = 0; i < count; i++) {
            long o = offset + i * size;
            switch (type) {
                case INT8 -> buf.set(JAVA_BYTE, o, (byte) (buf.get(JAVA_BYTE, o) / divisor));
                case UINT8 -> buf.set(JAVA_BYTE, o, (byte) (Byte.toUnsignedInt(buf.get(JAVA_BYTE, o)) / divisor));
                case INT32 -> buf.set(INT, o, buf.get(INT, o) / divisor);
                case UINT32 -> buf.set(INT, o, Integer.divideUnsigned(buf.get(INT, o), divisor));
                case INT64 -> buf.set(LONG, o, buf.get(LONG, o) / divisor);
                case UINT64 -> buf.set(LONG, o, Long.divideUnsigned(buf.get(LONG, o), divisor));
                case FLOAT32 -> buf.set(FLOAT, o, buf.get(FLOAT, o) / divisor);
                case FLOAT64 -> buf.set(DOUBLE, o, buf.get(DOUBLE, o) / divisor);
                case FLOAT16 -> buf.set(SHORT, o, HalfFloats.toFloat16(HalfFloats.fromFloat16(buf.get(SHORT, o)) / divisor));
                case BFLOAT16 -> buf.set(SHORT, o,
                        HalfFloats.toBfloat16(HalfFloats.fromBfloat16(buf.get(SHORT, o)) / divisor));
                default -> throw unsupported(type, ReduceOp.AVG);
            }
        }
    }

    @Override
    public void copy(MemorySegment src, long srcOffset, MemorySegment dst, long dstOffset, long bytes) {
        if (bytes == 0 || (src.address() + srcOffset == dst.address() + dstOffset && src.isNative() && dst.isNative())) {
            return;
        }
        HostCopy.copy(src, srcOffset, dst, dstOffset, bytes);
    }

    private static UnsupportedOperationException unsupported(DataType type, ReduceOp op) {
        return new UnsupportedOperationException(op.ncclName() + " on " + type.ncclName()
                + " has no host implementation (8-bit floating-point reductions need a GPU)");
    }

    private static void sumByte(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 1;
            byte x = a.get(JAVA_BYTE, ao + o);
            byte y = b.get(JAVA_BYTE, bo + o);
            d.set(JAVA_BYTE, dO + o, (byte) (x + y));
        }
    }

    private static void prodByte(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 1;
            byte x = a.get(JAVA_BYTE, ao + o);
            byte y = b.get(JAVA_BYTE, bo + o);
            d.set(JAVA_BYTE, dO + o, (byte) (x * y));
        }
    }

    private static void maxByte(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 1;
            byte x = a.get(JAVA_BYTE, ao + o);
            byte y = b.get(JAVA_BYTE, bo + o);
            d.set(JAVA_BYTE, dO + o, x >= y ? x : y);
        }
    }

    private static void minByte(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 1;
            byte x = a.get(JAVA_BYTE, ao + o);
            byte y = b.get(JAVA_BYTE, bo + o);
            d.set(JAVA_BYTE, dO + o, x <= y ? x : y);
        }
    }

    private static void maxUByte(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 1;
            byte x = a.get(JAVA_BYTE, ao + o);
            byte y = b.get(JAVA_BYTE, bo + o);
            d.set(JAVA_BYTE, dO + o, Byte.toUnsignedInt(x) >= Byte.toUnsignedInt(y) ? x : y);
        }
    }

    private static void minUByte(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 1;
            byte x = a.get(JAVA_BYTE, ao + o);
            byte y = b.get(JAVA_BYTE, bo + o);
            d.set(JAVA_BYTE, dO + o, Byte.toUnsignedInt(x) <= Byte.toUnsignedInt(y) ? x : y);
        }
    }

    private static void sumInt(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 4;
            int x = a.get(INT, ao + o);
            int y = b.get(INT, bo + o);
            d.set(INT, dO + o, (x + y));
        }
    }

    private static void prodInt(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 4;
            int x = a.get(INT, ao + o);
            int y = b.get(INT, bo + o);
            d.set(INT, dO + o, (x * y));
        }
    }

    private static void maxInt(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 4;
            int x = a.get(INT, ao + o);
            int y = b.get(INT, bo + o);
            d.set(INT, dO + o, x >= y ? x : y);
        }
    }

    private static void minInt(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 4;
            int x = a.get(INT, ao + o);
            int y = b.get(INT, bo + o);
            d.set(INT, dO + o, x <= y ? x : y);
        }
    }

    private static void maxUInt(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 4;
            int x = a.get(INT, ao + o);
            int y = b.get(INT, bo + o);
            d.set(INT, dO + o, Integer.compareUnsigned(x, y) >= 0 ? x : y);
        }
    }

    private static void minUInt(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 4;
            int x = a.get(INT, ao + o);
            int y = b.get(INT, bo + o);
            d.set(INT, dO + o, Integer.compareUnsigned(x, y) <= 0 ? x : y);
        }
    }

    private static void sumLong(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 8;
            long x = a.get(LONG, ao + o);
            long y = b.get(LONG, bo + o);
            d.set(LONG, dO + o, (x + y));
        }
    }

    private static void prodLong(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 8;
            long x = a.get(LONG, ao + o);
            long y = b.get(LONG, bo + o);
            d.set(LONG, dO + o, (x * y));
        }
    }

    private static void maxLong(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 8;
            long x = a.get(LONG, ao + o);
            long y = b.get(LONG, bo + o);
            d.set(LONG, dO + o, x >= y ? x : y);
        }
    }

    private static void minLong(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 8;
            long x = a.get(LONG, ao + o);
            long y = b.get(LONG, bo + o);
            d.set(LONG, dO + o, x <= y ? x : y);
        }
    }

    private static void maxULong(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 8;
            long x = a.get(LONG, ao + o);
            long y = b.get(LONG, bo + o);
            d.set(LONG, dO + o, Long.compareUnsigned(x, y) >= 0 ? x : y);
        }
    }

    private static void minULong(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 8;
            long x = a.get(LONG, ao + o);
            long y = b.get(LONG, bo + o);
            d.set(LONG, dO + o, Long.compareUnsigned(x, y) <= 0 ? x : y);
        }
    }

    private static void sumFloat(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 4;
            float x = a.get(FLOAT, ao + o);
            float y = b.get(FLOAT, bo + o);
            d.set(FLOAT, dO + o, x + y);
        }
    }

    private static void prodFloat(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 4;
            float x = a.get(FLOAT, ao + o);
            float y = b.get(FLOAT, bo + o);
            d.set(FLOAT, dO + o, x * y);
        }
    }

    private static void maxFloat(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 4;
            float x = a.get(FLOAT, ao + o);
            float y = b.get(FLOAT, bo + o);
            d.set(FLOAT, dO + o, Math.max(x, y));
        }
    }

    private static void minFloat(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 4;
            float x = a.get(FLOAT, ao + o);
            float y = b.get(FLOAT, bo + o);
            d.set(FLOAT, dO + o, Math.min(x, y));
        }
    }

    private static void sumDouble(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 8;
            double x = a.get(DOUBLE, ao + o);
            double y = b.get(DOUBLE, bo + o);
            d.set(DOUBLE, dO + o, x + y);
        }
    }

    private static void prodDouble(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 8;
            double x = a.get(DOUBLE, ao + o);
            double y = b.get(DOUBLE, bo + o);
            d.set(DOUBLE, dO + o, x * y);
        }
    }

    private static void maxDouble(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 8;
            double x = a.get(DOUBLE, ao + o);
            double y = b.get(DOUBLE, bo + o);
            d.set(DOUBLE, dO + o, Math.max(x, y));
        }
    }

    private static void minDouble(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 8;
            double x = a.get(DOUBLE, ao + o);
            double y = b.get(DOUBLE, bo + o);
            d.set(DOUBLE, dO + o, Math.min(x, y));
        }
    }

    private static void sumHalf(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 2;
            short x = a.get(SHORT, ao + o);
            short y = b.get(SHORT, bo + o);
            d.set(SHORT, dO + o, HalfFloats.toFloat16(HalfFloats.fromFloat16(x) + HalfFloats.fromFloat16(y)));
        }
    }

    private static void prodHalf(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 2;
            short x = a.get(SHORT, ao + o);
            short y = b.get(SHORT, bo + o);
            d.set(SHORT, dO + o, HalfFloats.toFloat16(HalfFloats.fromFloat16(x) * HalfFloats.fromFloat16(y)));
        }
    }

    private static void maxHalf(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 2;
            short x = a.get(SHORT, ao + o);
            short y = b.get(SHORT, bo + o);
            d.set(SHORT, dO + o, HalfFloats.fromFloat16(x) >= HalfFloats.fromFloat16(y) || Float.isNaN(HalfFloats.fromFloat16(x)) ? x : y);
        }
    }

    private static void minHalf(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 2;
            short x = a.get(SHORT, ao + o);
            short y = b.get(SHORT, bo + o);
            d.set(SHORT, dO + o, HalfFloats.fromFloat16(x) <= HalfFloats.fromFloat16(y) || Float.isNaN(HalfFloats.fromFloat16(x)) ? x : y);
        }
    }

    private static void sumBf16(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 2;
            short x = a.get(SHORT, ao + o);
            short y = b.get(SHORT, bo + o);
            d.set(SHORT, dO + o, HalfFloats.toBfloat16(HalfFloats.fromBfloat16(x) + HalfFloats.fromBfloat16(y)));
        }
    }

    private static void prodBf16(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 2;
            short x = a.get(SHORT, ao + o);
            short y = b.get(SHORT, bo + o);
            d.set(SHORT, dO + o, HalfFloats.toBfloat16(HalfFloats.fromBfloat16(x) * HalfFloats.fromBfloat16(y)));
        }
    }

    private static void maxBf16(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 2;
            short x = a.get(SHORT, ao + o);
            short y = b.get(SHORT, bo + o);
            d.set(SHORT, dO + o, HalfFloats.fromBfloat16(x) >= HalfFloats.fromBfloat16(y) || Float.isNaN(HalfFloats.fromBfloat16(x)) ? x : y);
        }
    }

    private static void minBf16(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO, int n) {
        for (int i = 0; i < n; i++) {
            long o = (long) i * 2;
            short x = a.get(SHORT, ao + o);
            short y = b.get(SHORT, bo + o);
            d.set(SHORT, dO + o, HalfFloats.fromBfloat16(x) <= HalfFloats.fromBfloat16(y) || Float.isNaN(HalfFloats.fromBfloat16(x)) ? x : y);
        }
    }
}
