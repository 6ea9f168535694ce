package io.jccl.core.kernel;

import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.LongVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;

/**
 * The host kernel on the JDK's Vector API ({@code jdk.incubator.vector}): a SIMD register of
 * elements per step for the integer types, float, double and bfloat16 (through float); the scalar
 * {@link HostReductionKernel} for the tail and for what has no lanes here (float16, the 8-bit
 * floats, the division of avg, copies).
 * Lane-wise arithmetic is Java's scalar arithmetic element by element (wrapping integers, IEEE
 * float, {@code Math.max}/{@code min}), so results equal the scalar kernel's bit for bit.
 *
 * <p>Each loop names its operation as a constant (the JIT compiles a lane-wise operation to SIMD
 * instructions only then), hence one loop per type family and operation.
 *
 * <p>Loaded only when the module is present ({@link HostKernels}): linking this class without
 * {@code --add-modules jdk.incubator.vector} fails.
 */
final class VectorReductionKernel implements ReductionKernel {
    private static final ByteOrder ORDER = ByteOrder.nativeOrder();
    /** Unsigned order is signed order with the sign bit flipped (the Vector API's unsigned comparisons
     *  changed names between JDK releases; XOR did not). */
    private static final byte SIGN_BYTE = (byte) 0x80;
    private static final VectorSpecies<Byte> BYTES = ByteVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Integer> INTS = IntVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Long> LONGS = LongVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Float> FLOATS = FloatVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Double> DOUBLES = DoubleVector.SPECIES_PREFERRED;
    /** bfloat16 widened to float lanes: as many shorts as a register has ints, in half its width. */
    private static final VectorSpecies<Short> HALF_SHORTS =
            VectorSpecies.of(short.class, VectorShape.forBitSize(INTS.vectorBitSize() / 2));

    private final ReductionKernel scalar = HostReductionKernel.INSTANCE;

    /** @return the width of the SIMD registers used, in bits (256 for AVX2) */
    static int vectorBits() {
        return BYTES.vectorBitSize();
    }

    @Override
    public boolean supports(DataType type, ReduceOp op) {
        return scalar.supports(type, op);
    }

    @Override
    public void reduce(DataType type, ReduceOp op, MemorySegment a, long aOffset, MemorySegment b, long bOffset,
                       MemorySegment dst, long dstOffset, long count) {
        VectorSpecies<?> species = switch (type) {
            case INT8, UINT8 -> BYTES;
            case INT32, UINT32 -> INTS;
            case INT64, UINT64 -> LONGS;
            case FLOAT32 -> FLOATS;
            case FLOAT64 -> DOUBLES;
            case BFLOAT16 -> HALF_SHORTS;
            default -> null;
        };
        boolean lanewise = op == ReduceOp.SUM || op == ReduceOp.PROD || op == ReduceOp.MAX || op == ReduceOp.MIN;
        if (species == null || !lanewise) {
            scalar.reduce(type, op, a, aOffset, b, bOffset, dst, dstOffset, count);
            return;
        }
        long done = count / species.length() * species.length();
        long end = done * type.size();
        switch (type) {
            case INT8, UINT8 -> bytes(op, type == DataType.UINT8, a, aOffset, b, bOffset, dst, dstOffset, end);
            case INT32, UINT32 -> ints(op, type == DataType.UINT32, a, aOffset, b, bOffset, dst, dstOffset, end);
            case INT64, UINT64 -> longs(op, type == DataType.UINT64, a, aOffset, b, bOffset, dst, dstOffset, end);
            case FLOAT32 -> floats(op, a, aOffset, b, bOffset, dst, dstOffset, end);
            case BFLOAT16 -> bfloat16s(op, a, aOffset, b, bOffset, dst, dstOffset, end);
            default -> doubles(op, a, aOffset, b, bOffset, dst, dstOffset, end);
        }
        if (done < count) {
            scalar.reduce(type, op, a, aOffset + end, b, bOffset + end, dst, dstOffset + end, count - done);
        }
    }

    /** Whole vectors of bytes: {@code end} bytes from each offset. */
    private static void bytes(ReduceOp op, boolean unsigned, MemorySegment a, long ao, MemorySegment b, long bo,
                               MemorySegment d, long dO, long end) {
        long step = BYTES.vectorByteSize();
        switch (op) {
            case SUM -> {
                for (long o = 0; o < end; o += step) {
                    ByteVector x = ByteVector.fromMemorySegment(BYTES, a, ao + o, ORDER);
                    ByteVector y = ByteVector.fromMemorySegment(BYTES, b, bo + o, ORDER);
                    x.add(y).intoMemorySegment(d, dO + o, ORDER);
                }
            }
            case PROD -> {
                for (long o = 0; o < end; o += step) {
                    ByteVector x = ByteVector.fromMemorySegment(BYTES, a, ao + o, ORDER);
                    ByteVector y = ByteVector.fromMemorySegment(BYTES, b, bo + o, ORDER);
                    x.mul(y).intoMemorySegment(d, dO + o, ORDER);
                }
            }
            case MAX -> {
                if (unsigned) {
                    for (long o = 0; o < end; o += step) {
                        ByteVector x = ByteVector.fromMemorySegment(BYTES, a, ao + o, ORDER);
                        ByteVector y = ByteVector.fromMemorySegment(BYTES, b, bo + o, ORDER);
                        x.lanewise(VectorOperators.XOR, SIGN_BYTE).max(y.lanewise(VectorOperators.XOR, SIGN_BYTE))
                                .lanewise(VectorOperators.XOR, SIGN_BYTE).intoMemorySegment(d, dO + o, ORDER);
                    }
                } else {
                    for (long o = 0; o < end; o += step) {
                        ByteVector x = ByteVector.fromMemorySegment(BYTES, a, ao + o, ORDER);
                        ByteVector y = ByteVector.fromMemorySegment(BYTES, b, bo + o, ORDER);
                        x.max(y).intoMemorySegment(d, dO + o, ORDER);
                    }
                }
            }
            case MIN -> {
                if (unsigned) {
                    for (long o = 0; o < end; o += step) {
                        ByteVector x = ByteVector.fromMemorySegment(BYTES, a, ao + o, ORDER);
                        ByteVector y = ByteVector.fromMemorySegment(BYTES, b, bo + o, ORDER);
                        x.lanewise(VectorOperators.XOR, SIGN_BYTE).min(y.lanewise(VectorOperators.XOR, SIGN_BYTE))
                                .lanewise(VectorOperators.XOR, SIGN_BYTE).intoMemorySegment(d, dO + o, ORDER);
                    }
                } else {
                    for (long o = 0; o < end; o += step) {
                        ByteVector x = ByteVector.fromMemorySegment(BYTES, a, ao + o, ORDER);
                        ByteVector y = ByteVector.fromMemorySegment(BYTES, b, bo + o, ORDER);
                        x.min(y).intoMemorySegment(d, dO + o, ORDER);
                    }
                }
            }
            default -> throw new IllegalArgumentException(op.toString());
        }
    }

    /** Whole vectors of ints: {@code end} bytes from each offset. */
    private static void ints(ReduceOp op, boolean unsigned, MemorySegment a, long ao, MemorySegment b, long bo,
                              MemorySegment d, long dO, long end) {
        long step = INTS.vectorByteSize();
        switch (op) {
            case SUM -> {
                for (long o = 0; o < end; o += step) {
                    IntVector x = IntVector.fromMemorySegment(INTS, a, ao + o, ORDER);
                    IntVector y = IntVector.fromMemorySegment(INTS, b, bo + o, ORDER);
                    x.add(y).intoMemorySegment(d, dO + o, ORDER);
                }
            }
            case PROD -> {
                for (long o = 0; o < end; o += step) {
                    IntVector x = IntVector.fromMemorySegment(INTS, a, ao + o, ORDER);
                    IntVector y = IntVector.fromMemorySegment(INTS, b, bo + o, ORDER);
                    x.mul(y).intoMemorySegment(d, dO + o, ORDER);
                }
            }
            case MAX -> {
                if (unsigned) {
                    for (long o = 0; o < end; o += step) {
                        IntVector x = IntVector.fromMemorySegment(INTS, a, ao + o, ORDER);
                        IntVector y = IntVector.fromMemorySegment(INTS, b, bo + o, ORDER);
                        x.lanewise(VectorOperators.XOR, Integer.MIN_VALUE).max(y.lanewise(VectorOperators.XOR, Integer.MIN_VALUE))
                                .lanewise(VectorOperators.XOR, Integer.MIN_VALUE).intoMemorySegment(d, dO + o, ORDER);
                    }
                } else {
                    for (long o = 0; o < end; o += step) {
                        IntVector x = IntVector.fromMemorySegment(INTS, a, ao + o, ORDER);
                        IntVector y = IntVector.fromMemorySegment(INTS, b, bo + o, ORDER);
                        x.max(y).intoMemorySegment(d, dO + o, ORDER);
                    }
                }
            }
            case MIN -> {
                if (unsigned) {
                    for (long o = 0; o < end; o += step) {
                        IntVector x = IntVector.fromMemorySegment(INTS, a, ao + o, ORDER);
                        IntVector y = IntVector.fromMemorySegment(INTS, b, bo + o, ORDER);
                        x.lanewise(VectorOperators.XOR, Integer.MIN_VALUE).min(y.lanewise(VectorOperators.XOR, Integer.MIN_VALUE))
                                .lanewise(VectorOperators.XOR, Integer.MIN_VALUE).intoMemorySegment(d, dO + o, ORDER);
                    }
                } else {
                    for (long o = 0; o < end; o += step) {
                        IntVector x = IntVector.fromMemorySegment(INTS, a, ao + o, ORDER);
                        IntVector y = IntVector.fromMemorySegment(INTS, b, bo + o, ORDER);
                        x.min(y).intoMemorySegment(d, dO + o, ORDER);
                    }
                }
            }
            default -> throw new IllegalArgumentException(op.toString());
        }
    }

    /** Whole vectors of longs: {@code end} bytes from each offset. */
    private static void longs(ReduceOp op, boolean unsigned, MemorySegment a, long ao, MemorySegment b, long bo,
                               MemorySegment d, long dO, long end) {
        long step = LONGS.vectorByteSize();
        switch (op) {
            case SUM -> {
                for (long o = 0; o < end; o += step) {
                    LongVector x = LongVector.fromMemorySegment(LONGS, a, ao + o, ORDER);
                    LongVector y = LongVector.fromMemorySegment(LONGS, b, bo + o, ORDER);
                    x.add(y).intoMemorySegment(d, dO + o, ORDER);
                }
            }
            case PROD -> {
                for (long o = 0; o < end; o += step) {
                    LongVector x = LongVector.fromMemorySegment(LONGS, a, ao + o, ORDER);
                    LongVector y = LongVector.fromMemorySegment(LONGS, b, bo + o, ORDER);
                    x.mul(y).intoMemorySegment(d, dO + o, ORDER);
                }
            }
            case MAX -> {
                if (unsigned) {
                    for (long o = 0; o < end; o += step) {
                        LongVector x = LongVector.fromMemorySegment(LONGS, a, ao + o, ORDER);
                        LongVector y = LongVector.fromMemorySegment(LONGS, b, bo + o, ORDER);
                        x.lanewise(VectorOperators.XOR, Long.MIN_VALUE).max(y.lanewise(VectorOperators.XOR, Long.MIN_VALUE))
                                .lanewise(VectorOperators.XOR, Long.MIN_VALUE).intoMemorySegment(d, dO + o, ORDER);
                    }
                } else {
                    for (long o = 0; o < end; o += step) {
                        LongVector x = LongVector.fromMemorySegment(LONGS, a, ao + o, ORDER);
                        LongVector y = LongVector.fromMemorySegment(LONGS, b, bo + o, ORDER);
                        x.max(y).intoMemorySegment(d, dO + o, ORDER);
                    }
                }
            }
            case MIN -> {
                if (unsigned) {
                    for (long o = 0; o < end; o += step) {
                        LongVector x = LongVector.fromMemorySegment(LONGS, a, ao + o, ORDER);
                        LongVector y = LongVector.fromMemorySegment(LONGS, b, bo + o, ORDER);
                        x.lanewise(VectorOperators.XOR, Long.MIN_VALUE).min(y.lanewise(VectorOperators.XOR, Long.MIN_VALUE))
                                .lanewise(VectorOperators.XOR, Long.MIN_VALUE).intoMemorySegment(d, dO + o, ORDER);
                    }
                } else {
                    for (long o = 0; o < end; o += step) {
                        LongVector x = LongVector.fromMemorySegment(LONGS, a, ao + o, ORDER);
                        LongVector y = LongVector.fromMemorySegment(LONGS, b, bo + o, ORDER);
                        x.min(y).intoMemorySegment(d, dO + o, ORDER);
                    }
                }
            }
            default -> throw new IllegalArgumentException(op.toString());
        }
    }

    /** Whole vectors of floats: {@code end} bytes from each offset. */
    private static void floats(ReduceOp op, MemorySegment a, long ao, MemorySegment b, long bo,
                                MemorySegment d, long dO, long end) {
        long step = FLOATS.vectorByteSize();
        switch (op) {
            case SUM -> {
                for (long o = 0; o < end; o += step) {
                    FloatVector x = FloatVector.fromMemorySegment(FLOATS, a, ao + o, ORDER);
                    FloatVector y = FloatVector.fromMemorySegment(FLOATS, b, bo + o, ORDER);
                    x.add(y).intoMemorySegment(d, dO + o, ORDER);
                }
            }
            case PROD -> {
                for (long o = 0; o < end; o += step) {
                    FloatVector x = FloatVector.fromMemorySegment(FLOATS, a, ao + o, ORDER);
                    FloatVector y = FloatVector.fromMemorySegment(FLOATS, b, bo + o, ORDER);
                    x.mul(y).intoMemorySegment(d, dO + o, ORDER);
                }
            }
            case MAX -> {
                for (long o = 0; o < end; o += step) {
                    FloatVector x = FloatVector.fromMemorySegment(FLOATS, a, ao + o, ORDER);
                    FloatVector y = FloatVector.fromMemorySegment(FLOATS, b, bo + o, ORDER);
                    x.max(y).intoMemorySegment(d, dO + o, ORDER);
                }
            }
            case MIN -> {
                for (long o = 0; o < end; o += step) {
                    FloatVector x = FloatVector.fromMemorySegment(FLOATS, a, ao + o, ORDER);
                    FloatVector y = FloatVector.fromMemorySegment(FLOATS, b, bo + o, ORDER);
                    x.min(y).intoMemorySegment(d, dO + o, ORDER);
                }
            }
            default -> throw new IllegalArgumentException(op.toString());
        }
    }

    /** Whole vectors of doubles: {@code end} bytes from each offset. */
    private static void doubles(ReduceOp op, MemorySegment a, long ao, MemorySegment b, long bo,
                                 MemorySegment d, long dO, long end) {
        long step = DOUBLES.vectorByteSize();
        switch (op) {
            case SUM -> {
                for (long o = 0; o < end; o += step) {
                    DoubleVector x = DoubleVector.fromMemorySegment(DOUBLES, a, ao + o, ORDER);
                    DoubleVector y = DoubleVector.fromMemorySegment(DOUBLES, b, bo + o, ORDER);
                    x.add(y).intoMemorySegment(d, dO + o, ORDER);
                }
            }
            case PROD -> {
                for (long o = 0; o < end; o += step) {
                    DoubleVector x = DoubleVector.fromMemorySegment(DOUBLES, a, ao + o, ORDER);
                    DoubleVector y = DoubleVector.fromMemorySegment(DOUBLES, b, bo + o, ORDER);
                    x.mul(y).intoMemorySegment(d, dO + o, ORDER);
                }
            }
            case MAX -> {
                for (long o = 0; o < end; o += step) {
                    DoubleVector x = DoubleVector.fromMemorySegment(DOUBLES, a, ao + o, ORDER);
                    DoubleVector y = DoubleVector.fromMemorySegment(DOUBLES, b, bo + o, ORDER);
                    x.max(y).intoMemorySegment(d, dO + o, ORDER);
                }
            }
            case MIN -> {
                for (long o = 0; o < end; o += step) {
                    DoubleVector x = DoubleVector.fromMemorySegment(DOUBLES, a, ao + o, ORDER);
                    DoubleVector y = DoubleVector.fromMemorySegment(DOUBLES, b, bo + o, ORDER);
                    x.min(y).intoMemorySegment(d, dO + o, ORDER);
                }
            }
            default -> throw new IllegalArgumentException(op.toString());
        }
    }

    /**
     * Whole vectors of bfloat16: widened to float (a bfloat16 is the top half of a float), combined,
     * and rounded back to nearest even with NaN kept a NaN, as {@link HalfFloats#toBfloat16}; max and
     * min return the winner's own bits, as the scalar kernel does.
     */
    private static void bfloat16s(ReduceOp op, MemorySegment a, long ao, MemorySegment b, long bo,
                                  MemorySegment d, long dO, long end) {
        long step = HALF_SHORTS.vectorByteSize();
        for (long o = 0; o < end; o += step) {
            ShortVector xs = ShortVector.fromMemorySegment(HALF_SHORTS, a, ao + o, ORDER);
            ShortVector ys = ShortVector.fromMemorySegment(HALF_SHORTS, b, bo + o, ORDER);
            FloatVector x = widen(xs);
            FloatVector y = widen(ys);
            ShortVector r;
            switch (op) {
                case SUM -> r = narrow(x.add(y));
                case PROD -> r = narrow(x.mul(y));
                case MAX -> r = ys.blend(xs, x.compare(VectorOperators.GE, y).or(x.test(VectorOperators.IS_NAN))
                        .cast(HALF_SHORTS));
                case MIN -> r = ys.blend(xs, x.compare(VectorOperators.LE, y).or(x.test(VectorOperators.IS_NAN))
                        .cast(HALF_SHORTS));
                default -> throw new IllegalArgumentException(op.toString());
            }
            r.intoMemorySegment(d, dO + o, ORDER);
        }
    }

    private static FloatVector widen(ShortVector bits) {
        return ((IntVector) bits.convertShape(VectorOperators.S2I, INTS, 0)).lanewise(VectorOperators.LSHL, 16)
                .reinterpretAsFloats();
    }

    private static ShortVector narrow(FloatVector f) {
        IntVector bits = f.reinterpretAsInts();
        IntVector top = bits.lanewise(VectorOperators.LSHR, 16);
        IntVector rounded = bits.add(0x7fff).add(top.and(1)).lanewise(VectorOperators.LSHR, 16);
        VectorMask<Integer> nan = bits.and(0x7fffffff).compare(VectorOperators.GT, 0x7f800000);
        return (ShortVector) rounded.blend(top.or(0x0040), nan).convertShape(VectorOperators.I2S, HALF_SHORTS, 0);
    }

    @Override
    public void divide(DataType type, MemorySegment buf, long offset, long count, int divisor) {
        scalar.divide(type, buf, offset, count, divisor);
    }

    @Override
    public void copy(MemorySegment src, long srcOffset, MemorySegment dst, long dstOffset, long bytes) {
        scalar.copy(src, srcOffset, dst, dstOffset, bytes);
    }
}
