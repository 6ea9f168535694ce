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
 * elements per step for the integer types, float, double, bfloat16 and float16's sum and product
 * (both through float); the scalar {@link HostReductionKernel} for the tail and for what has no
 * lanes here (float16's max and min, the 8-bit floats, the division of avg, copies).
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

    // binary16's constants as vectors: a lane-wise operation with a scalar broadcasts it in the
    // loop, and those broadcasts took the loop past the JIT's inlining budget
    // (NodeCountInliningCutoff), after which vectors ran as objects.
    private static final IntVector LOW_16 = IntVector.broadcast(INTS, 0x0000ffff);
    private static final IntVector HIGH_16 = IntVector.broadcast(INTS, 0xffff0000);
    private static final IntVector ONE = IntVector.broadcast(INTS, 1);
    private static final IntVector NOT_SIGN = IntVector.broadcast(INTS, 0x7fffffff);
    private static final IntVector FLOAT_INFINITY = IntVector.broadcast(INTS, 0x7f800000);
    private static final IntVector F16_MAGNITUDE = IntVector.broadcast(INTS, 0x7fff);
    private static final IntVector F16_SIGN = IntVector.broadcast(INTS, 0x8000);
    private static final IntVector F16_INFINITY = IntVector.broadcast(INTS, 0x7c00);
    /** A quiet NaN, and the payload bits it keeps. */
    private static final IntVector F16_PAYLOAD = IntVector.broadcast(INTS, 0x03ff);
    private static final IntVector F16_QUIET_NAN = IntVector.broadcast(INTS, 0x7e00);
    /** Bytes of each input a binary16 pass covers before the other: its blocks stay in the first caches. */
    private static final long F16_BLOCK_BYTES = 8192;
    /** Float exponent bias less binary16's (127 - 15), in the exponent field; one exponent step. */
    private static final IntVector REBIAS = IntVector.broadcast(INTS, 0x38000000);
    private static final IntVector ONE_EXPONENT = IntVector.broadcast(INTS, 0x00800000);
    private static final IntVector F16_MIN_NORMAL = IntVector.broadcast(INTS, 0x0400);
    private static final IntVector FLOAT_SIGN = IntVector.broadcast(INTS, 0x80000000);
    /** The float of binary16's smallest normal (2^-14) and of 65536, where it overflows. */
    private static final IntVector F16_NORMAL_FLOOR = IntVector.broadcast(INTS, 0x38800000);
    private static final FloatVector TWO_TO_MINUS_14 = F16_NORMAL_FLOOR.reinterpretAsFloats();
    private static final IntVector F16_OVERFLOW = IntVector.broadcast(INTS, 0x47800000);
    /** Less the rebias, plus the rounding of 13 dropped bits to nearest (less one: odd adds it). */
    private static final IntVector F16_ROUND = IntVector.broadcast(INTS, 0xc8000fff);
    private static final FloatVector HALF = FloatVector.broadcast(FLOATS, 0.5f);
    private static final IntVector HALF_BITS = HALF.reinterpretAsInts();

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
            case FLOAT16 -> INTS; // two elements a lane
            case BFLOAT16 -> HALF_SHORTS;
            default -> null;
        };
        boolean lanewise = op == ReduceOp.SUM || op == ReduceOp.PROD
                || (op == ReduceOp.MAX || op == ReduceOp.MIN) && type != DataType.FLOAT16;
        if (species == null || !lanewise) {
            scalar.reduce(type, op, a, aOffset, b, bOffset, dst, dstOffset, count);
            return;
        }
        long perStep = species.vectorByteSize() / type.size();
        long done = count / perStep * perStep;
        long end = done * type.size();
        switch (type) {
            case INT8, UINT8 -> bytes(op, type == DataType.UINT8, a, aOffset, b, bOffset, dst, dstOffset, end);
            case INT32, UINT32 -> ints(op, type == DataType.UINT32, a, aOffset, b, bOffset, dst, dstOffset, end);
            case INT64, UINT64 -> longs(op, type == DataType.UINT64, a, aOffset, b, bOffset, dst, dstOffset, end);
            case FLOAT32 -> floats(op, a, aOffset, b, bOffset, dst, dstOffset, end);
            case BFLOAT16 -> bfloat16s(op, a, aOffset, b, bOffset, dst, dstOffset, end);
            case FLOAT16 -> float16s(op, a, aOffset, b, bOffset, dst, dstOffset, end);
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

    /**
     * Whole vectors of IEEE binary16, sum and product, as bfloat16 but with the format's own
     * widening and rounding (to nearest even, subnormals included). Max and min stay with the
     * scalar kernel: their loop, widened as here, ran slower than it (3 against 7 GB/s).
     */
    private static void float16s(ReduceOp op, MemorySegment a, long ao, MemorySegment b, long bo,
                                 MemorySegment d, long dO, long end) {
        switch (op) {
            case SUM -> float16Sum(a, ao, b, bo, d, dO, end);
            case PROD -> float16Prod(a, ao, b, bo, d, dO, end);
            default -> throw new IllegalArgumentException(op.toString());
        }
    }

    /*
     * Sum and product go two elements to an int lane, in two passes over blocks of
     * F16_BLOCK_BYTES: the low halves, then the high ones, each keeping the other half of the
     * destination. One pass over short lanes (widened to int lanes, as bfloat16) took the loop past
     * the JIT's inlining budget (NodeCountInliningCutoff) by one conversion, after which its vectors
     * ran as objects, slower than the scalar kernel. A pass reads its block back from cache, and the
     * input halves it needs are untouched by the other pass even where the output is an input.
     */

    private static void float16Sum(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO,
            long end) {
        for (long start = 0; start < end; start += F16_BLOCK_BYTES) {
            long stop = Math.min(end, start + F16_BLOCK_BYTES);
            float16SumLow(a, ao, b, bo, d, dO, start, stop);
            float16SumHigh(a, ao, b, bo, d, dO, start, stop);
        }
    }

    private static void float16SumLow(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO,
            long start, long stop) {
        for (long o = start; o < stop; o += INTS.vectorByteSize()) {
            IntVector x = IntVector.fromMemorySegment(INTS, a, ao + o, ORDER);
            IntVector y = IntVector.fromMemorySegment(INTS, b, bo + o, ORDER);
            IntVector kept = IntVector.fromMemorySegment(INTS, d, dO + o, ORDER).and(HIGH_16);
            roundedFloat16(float16(x).add(float16(y))).or(kept).intoMemorySegment(d, dO + o, ORDER);
        }
    }

    private static void float16SumHigh(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO,
            long start, long stop) {
        for (long o = start; o < stop; o += INTS.vectorByteSize()) {
            IntVector x = IntVector.fromMemorySegment(INTS, a, ao + o, ORDER).lanewise(VectorOperators.LSHR, 16);
            IntVector y = IntVector.fromMemorySegment(INTS, b, bo + o, ORDER).lanewise(VectorOperators.LSHR, 16);
            IntVector kept = IntVector.fromMemorySegment(INTS, d, dO + o, ORDER).and(LOW_16);
            roundedFloat16(float16(x).add(float16(y))).lanewise(VectorOperators.LSHL, 16).or(kept)
                    .intoMemorySegment(d, dO + o, ORDER);
        }
    }

    private static void float16Prod(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO,
            long end) {
        for (long start = 0; start < end; start += F16_BLOCK_BYTES) {
            long stop = Math.min(end, start + F16_BLOCK_BYTES);
            float16ProdLow(a, ao, b, bo, d, dO, start, stop);
            float16ProdHigh(a, ao, b, bo, d, dO, start, stop);
        }
    }

    private static void float16ProdLow(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO,
            long start, long stop) {
        for (long o = start; o < stop; o += INTS.vectorByteSize()) {
            IntVector x = IntVector.fromMemorySegment(INTS, a, ao + o, ORDER);
            IntVector y = IntVector.fromMemorySegment(INTS, b, bo + o, ORDER);
            IntVector kept = IntVector.fromMemorySegment(INTS, d, dO + o, ORDER).and(HIGH_16);
            roundedFloat16(float16(x).mul(float16(y))).or(kept).intoMemorySegment(d, dO + o, ORDER);
        }
    }

    private static void float16ProdHigh(MemorySegment a, long ao, MemorySegment b, long bo, MemorySegment d, long dO,
            long start, long stop) {
        for (long o = start; o < stop; o += INTS.vectorByteSize()) {
            IntVector x = IntVector.fromMemorySegment(INTS, a, ao + o, ORDER).lanewise(VectorOperators.LSHR, 16);
            IntVector y = IntVector.fromMemorySegment(INTS, b, bo + o, ORDER).lanewise(VectorOperators.LSHR, 16);
            IntVector kept = IntVector.fromMemorySegment(INTS, d, dO + o, ORDER).and(LOW_16);
            roundedFloat16(float16(x).mul(float16(y))).lanewise(VectorOperators.LSHL, 16).or(kept)
                    .intoMemorySegment(d, dO + o, ORDER);
        }
    }

    /**
     * binary16 bits (the low 16 of each lane; the rest is ignored) as floats, exactly: a normal
     * number by moving its exponent and significand into a float's places and rebiasing the
     * exponent; a subnormal one, m times 2^-24, as the normal float 2^-14 + m 2^-24 less 2^-14
     * (exact, and no float subnormal, which would cost x86 a microcode assist); infinity and NaN
     * with the float's all-ones exponent.
     */
    private static FloatVector float16(IntVector half) {
        IntVector magnitude = half.and(F16_MAGNITUDE);
        IntVector moved = magnitude.lanewise(VectorOperators.LSHL, 13);
        IntVector normal = moved.add(REBIAS);
        IntVector subnormal = normal.add(ONE_EXPONENT).reinterpretAsFloats().sub(TWO_TO_MINUS_14).reinterpretAsInts();
        return normal.blend(moved.or(FLOAT_INFINITY), magnitude.compare(VectorOperators.GE, F16_INFINITY))
                .blend(subnormal, magnitude.compare(VectorOperators.LT, F16_MIN_NORMAL))
                .or(half.lanewise(VectorOperators.LSHL, 16).and(FLOAT_SIGN)).reinterpretAsFloats();
    }

    /**
     * Floats rounded to binary16 to nearest even, in the low half of each lane: below the normal
     * range by adding 0.5 (the float addition then rounds at 2^-24, the smallest subnormal), else by
     * moving the exponent and rounding the 13 dropped bits, with magnitudes from 65536 up clamped to
     * 65536, which rounds to infinity as everything from 65520 does. A NaN keeps its sign and top
     * payload bits and is quiet, as x86's conversion instruction (and so the JIT's
     * {@code Float.floatToFloat16}) makes it.
     */
    private static IntVector roundedFloat16(FloatVector f) {
        IntVector bits = f.reinterpretAsInts();
        IntVector magnitude = bits.and(NOT_SIGN);
        IntVector finite = magnitude.min(F16_OVERFLOW);
        IntVector dropped = magnitude.lanewise(VectorOperators.LSHR, 13);
        IntVector normal = finite.add(F16_ROUND).add(dropped.and(ONE)).lanewise(VectorOperators.LSHR, 13);
        IntVector subnormal = finite.reinterpretAsFloats().add(HALF).reinterpretAsInts().sub(HALF_BITS);
        return normal.blend(subnormal, finite.compare(VectorOperators.LT, F16_NORMAL_FLOOR))
                .blend(dropped.and(F16_PAYLOAD).or(F16_QUIET_NAN), magnitude.compare(VectorOperators.GT, FLOAT_INFINITY))
                .or(bits.lanewise(VectorOperators.LSHR, 16).and(F16_SIGN));
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
