package io.jccl.core.kernel;

import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Random;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The Vector API kernel against the scalar one, bit for bit: every type and operation, counts that
 * leave a tail, unaligned offsets, in place, and NaN, +-0 and infinities for max and min (NaN
 * inputs only there for float and double: a NaN result's payload is not specified by Java's
 * arithmetic; for the 16-bit floats a NaN sum or product need only be a NaN). The build
 * runs tests with {@code --add-modules jdk.incubator.vector}, so there the vector kernel must be
 * the one {@link HostKernels} picks.
 */
class VectorReductionKernelTest {
    private static final boolean VECTOR = ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent();
    private static final ReduceOp[] OPS = {ReduceOp.SUM, ReduceOp.PROD, ReduceOp.MAX, ReduceOp.MIN};

    @Test
    void theVectorKernelIsPickedWhereTheModuleIsPresent() {
        assumeTrue(VECTOR, "this JVM runs without --add-modules jdk.incubator.vector");
        assertTrue(HostKernels.describe().startsWith("Vector API"), HostKernels.describe());
        assertTrue(beneathHalfFloats(HostKernels.best()) instanceof VectorReductionKernel);
        assertTrue(beneathHalfFloats(MemoryKind.HOST.kernel()) instanceof VectorReductionKernel);
    }

    /** The kernel of the types other than float16 and bfloat16 (those may go to native code). */
    private static ReductionKernel beneathHalfFloats(ReductionKernel kernel) {
        if (kernel instanceof StreamingStoreKernel streaming) {
            kernel = streaming.inner();
        }
        return kernel instanceof HalfFloatKernel half ? half.others() : kernel;
    }

    @Test
    void everyTypeAndOperationEqualsTheScalarKernelBitForBit() {
        assumeTrue(VECTOR, "this JVM runs without --add-modules jdk.incubator.vector");
        ReductionKernel vector = new VectorReductionKernel();
        ReductionKernel scalar = HostReductionKernel.INSTANCE;
        Random random = new Random(7);
        try (Arena arena = Arena.ofConfined()) {
            for (DataType type : DataType.values()) {
                for (ReduceOp op : OPS) {
                    if (!scalar.supports(type, op)) {
                        continue;
                    }
                    for (int count : new int[] {0, 1, 63, 64, 1000, 4099}) {
                        for (int shift : new int[] {0, 1}) { // an unaligned start, in elements of one byte
                            long bytes = (long) count * type.size();
                            MemorySegment a = arena.allocate(bytes + 8, 64).asSlice(shift, bytes);
                            MemorySegment b = arena.allocate(bytes + 8, 64).asSlice(shift, bytes);
                            fill(a, type, op, random);
                            fill(b, type, op, random);
                            MemorySegment expected = arena.allocate(Math.max(1, bytes));
                            MemorySegment actual = arena.allocate(Math.max(1, bytes));
                            scalar.reduce(type, op, a, 0, b, 0, expected, 0, count);
                            vector.reduce(type, op, a, 0, b, 0, actual, 0, count);
                            if (type == DataType.FLOAT16) { // bfloat16's NaN bits (no NaN input here) are exact
                                canonicalNaNs(expected.asSlice(0, bytes), type, op);
                                canonicalNaNs(actual.asSlice(0, bytes), type, op);
                            }
                            assertEquals(-1, expected.asSlice(0, bytes).mismatch(actual.asSlice(0, bytes)),
                                    type + " " + op + " count " + count + " shift " + shift);
                            MemorySegment before = arena.allocate(Math.max(1, bytes));
                            MemorySegment.copy(a, 0, before, 0, bytes);
                            vector.reduce(type, op, a, 0, b, 0, a, 0, count); // in place
                            if (type == DataType.FLOAT16) {
                                canonicalNaNs(a, type, op);
                            }
                            long at = expected.asSlice(0, bytes).mismatch(a);
                            assertEquals(-1, at, type + " " + op + " in place, count " + count
                                    + (at < 0 ? "" : describe(type, at, before, b, expected, a)));
                        }
                    }
                }
            }
        }
    }

    /**
     * Every binary16 and bfloat16 value against a few partners (one, a half, a third, the largest
     * finite value, the smallest subnormal, and their negatives), by sum and product: every widening,
     * and roundings into the subnormal range, to infinity and half-way cases, bit for bit.
     */
    @Test
    void everySixteenBitValueRoundsAsTheScalarKernel() {
        assumeTrue(VECTOR, "this JVM runs without --add-modules jdk.incubator.vector");
        ReductionKernel vector = new VectorReductionKernel();
        ReductionKernel scalar = HostReductionKernel.INSTANCE;
        short[] float16Partners = {0x3c00, 0x3800, 0x3555, 0x7bff, 0x0001, 0x0400, (short) 0xbc00, (short) 0x8001};
        short[] bfloat16Partners = {0x3f80, 0x3f00, 0x3eab, 0x7f7f, 0x0001, 0x0080, (short) 0xbf80, (short) 0x8001};
        try (Arena arena = Arena.ofConfined()) {
            int n = 1 << 16;
            MemorySegment all = arena.allocate(2L * n, 64);
            for (int v = 0; v < n; v++) {
                all.setAtIndex(java.lang.foreign.ValueLayout.JAVA_SHORT, v, (short) v);
            }
            MemorySegment partner = arena.allocate(2L * n, 64);
            MemorySegment expected = arena.allocate(2L * n, 64);
            MemorySegment actual = arena.allocate(2L * n, 64);
            for (DataType type : new DataType[] {DataType.FLOAT16, DataType.BFLOAT16}) {
                for (short p : type == DataType.FLOAT16 ? float16Partners : bfloat16Partners) {
                    partner.fill((byte) 0);
                    for (int v = 0; v < n; v++) {
                        partner.setAtIndex(java.lang.foreign.ValueLayout.JAVA_SHORT, v, p);
                    }
                    for (ReduceOp op : OPS) {
                        scalar.reduce(type, op, all, 0, partner, 0, expected, 0, n);
                        vector.reduce(type, op, all, 0, partner, 0, actual, 0, n);
                        canonicalNaNs(expected, type, op);
                        canonicalNaNs(actual, type, op);
                        long at = expected.mismatch(actual);
                        assertEquals(-1, at, type + " " + op + " with 0x" + Integer.toHexString(p & 0xffff)
                                + (at < 0 ? "" : describe(type, at, all, partner, expected, actual)));
                    }
                }
            }
        }
    }

    /**
     * Every NaN of a 16-bit sum or product made one NaN: which NaN bits such a result has is not
     * one rule in Java (float16's scalar conversion differs between the interpreter and the JIT's
     * intrinsic; with two NaN inputs, which payload a float operation keeps), only that it is a NaN.
     */
    private static void canonicalNaNs(MemorySegment s, DataType type, ReduceOp op) {
        if ((type != DataType.FLOAT16 && type != DataType.BFLOAT16) || (op != ReduceOp.SUM && op != ReduceOp.PROD)) {
            return;
        }
        for (long i = 0; i < s.byteSize() / 2; i++) {
            if (isNaN16(type, s.getAtIndex(java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED, i))) {
                s.setAtIndex(java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED, i, (short) 0x7fff);
            }
        }
    }

    private static boolean isNaN16(DataType type, short v) {
        return type == DataType.FLOAT16 ? (v & 0x7c00) == 0x7c00 && (v & 0x03ff) != 0
                : (v & 0x7f80) == 0x7f80 && (v & 0x007f) != 0;
    }

    private static String describe(DataType type, long at, MemorySegment x, MemorySegment y, MemorySegment expected,
                                   MemorySegment actual) {
        long o = at / type.size() * type.size();
        return String.format(": element %d: x %s y %s expected %s actual %s", at / type.size(), bits(x, o, type),
                bits(y, o, type), bits(expected, o, type), bits(actual, o, type));
    }

    private static String bits(MemorySegment s, long o, DataType type) {
        StringBuilder b = new StringBuilder("0x");
        for (int k = type.size() - 1; k >= 0; k--) {
            b.append(String.format("%02x", s.get(JAVA_BYTE, o + k)));
        }
        return b.toString();
    }

    private static void fill(MemorySegment s, DataType type, ReduceOp op, Random random) {
        boolean extremes = op == ReduceOp.MAX || op == ReduceOp.MIN;
        long n = s.byteSize() / type.size();
        for (long i = 0; i < n; i++) {
            long o = i * type.size();
            if (type == DataType.FLOAT32) {
                float[] special = {Float.NaN, -0.0f, 0.0f, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY};
                s.set(JAVA_FLOAT_UNALIGNED, o, extremes && i % 7 == 0 ? special[(int) (i / 7 % 5)]
                        : (float) random.nextGaussian() * 100);
            } else if (type == DataType.FLOAT64) {
                double[] special = {Double.NaN, -0.0, 0.0, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY};
                s.set(JAVA_DOUBLE_UNALIGNED, o, extremes && i % 7 == 0 ? special[(int) (i / 7 % 5)]
                        : random.nextGaussian() * 1e5);
            } else if (type == DataType.FLOAT16 || type == DataType.BFLOAT16) {
                // any bits, but no NaN into sum or prod: which NaN operand's payload a Java float
                // operation returns is unspecified (the JIT may swap the operands), so only max and
                // min, which return an input's bits, get NaN inputs
                short v;
                do {
                    v = (short) random.nextInt();
                } while (!extremes && isNaN16(type, v));
                s.set(java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED, o, v);
            } else {
                for (int k = 0; k < type.size(); k++) {
                    s.set(JAVA_BYTE, o + k, (byte) random.nextInt());
                }
            }
        }
    }
}
