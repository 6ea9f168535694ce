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
 * leave a tail, unaligned offsets, in place, and NaN, +-0 and infinities for max and min. The build
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
        assertTrue(HostKernels.best() instanceof VectorReductionKernel);
        assertTrue(MemoryKind.HOST.kernel() instanceof VectorReductionKernel);
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
                            assertEquals(-1, expected.asSlice(0, bytes).mismatch(actual.asSlice(0, bytes)),
                                    type + " " + op + " count " + count + " shift " + shift);
                            vector.reduce(type, op, a, 0, b, 0, a, 0, count); // in place
                            assertEquals(-1, expected.asSlice(0, bytes).mismatch(a),
                                    type + " " + op + " in place, count " + count);
                        }
                    }
                }
            }
        }
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
            } else {
                for (int k = 0; k < type.size(); k++) {
                    s.set(JAVA_BYTE, o + k, (byte) random.nextInt());
                }
            }
        }
    }
}
