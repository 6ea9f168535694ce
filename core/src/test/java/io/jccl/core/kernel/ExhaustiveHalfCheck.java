package io.jccl.core.kernel;

import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;

/**
 * Every pair of 16-bit values (2^32 of them), every operation, float16 and bfloat16: the Vector API
 * kernel (or, with the argument {@code native}, {@link HalfFloatKernel}'s native code at its highest
 * level on this CPU; {@code native avx2}, {@code native avx512}, {@code native avx512_vbmi2} or {@code native avx512_fp16} for
 * one level) against the
 * scalar one, bit for bit, NaN results apart (which NaN a sum or product gives is
 * not one rule in Java; they are counted). Not a test of the suite (about a minute on 2 cores): run it
 * after changing the 16-bit kernels, from the repository root after {@code mvn install}:
 *
 * <pre>
 * javac --add-modules jdk.incubator.vector -d /tmp/exh -cp core/target/classes:spi/target/classes \
 *     core/src/test/java/io/jccl/core/kernel/ExhaustiveHalfCheck.java
 * java --add-modules jdk.incubator.vector -cp /tmp/exh:core/target/classes:spi/target/classes \
 *     io.jccl.core.kernel.ExhaustiveHalfCheck [native [avx2|avx512|avx512_vbmi2|avx512_fp16]]
 * </pre>
 *
 * It prints a line per type and operation, and exits with status 1 on any mismatch.
 */
public final class ExhaustiveHalfCheck {
    public static void main(String[] args) {
        ReductionKernel scalar = HostReductionKernel.INSTANCE;
        boolean nativeKernel = args.length > 0 && args[0].equals("native");
        HalfFloatKernel.Level level = !nativeKernel ? null
                : args.length > 1 ? HalfFloatKernel.Level.valueOf(args[1].toUpperCase(java.util.Locale.ROOT))
                : HalfFloatKernel.best() != null ? HalfFloatKernel.best() : HalfFloatKernel.Level.AVX2;
        if (nativeKernel && !HalfFloatKernel.isAvailable(level)) {
            System.out.println("native 16-bit float kernel unavailable at " + level + ": "
                    + HalfFloatKernel.unavailabilityCause(level));
            System.exit(2);
        }
        ReductionKernel vector = nativeKernel ? new HalfFloatKernel(scalar, level) : new VectorReductionKernel();
        System.out.println("checking " + (nativeKernel ? "the native kernel at " + level : "the Vector API kernel"));
        int n = 1 << 16;
        long total = 0;
        for (DataType type : new DataType[] {DataType.FLOAT16, DataType.BFLOAT16}) {
            for (ReduceOp op : new ReduceOp[] {ReduceOp.SUM, ReduceOp.PROD, ReduceOp.MAX, ReduceOp.MIN}) {
                AtomicLong mismatches = new AtomicLong();
                AtomicLong nanSkipped = new AtomicLong();
                long t0 = System.nanoTime();
                IntStream.range(0, n).parallel().forEach(y -> {
                    try (Arena arena = Arena.ofConfined()) {
                        MemorySegment all = arena.allocate(2L * n, 64);
                        MemorySegment partner = arena.allocate(2L * n, 64);
                        MemorySegment expected = arena.allocate(2L * n, 64);
                        MemorySegment actual = arena.allocate(2L * n, 64);
                        for (int v = 0; v < n; v++) {
                            all.setAtIndex(ValueLayout.JAVA_SHORT, v, (short) v);
                            partner.setAtIndex(ValueLayout.JAVA_SHORT, v, (short) y);
                        }
                        scalar.reduce(type, op, all, 0, partner, 0, expected, 0, n);
                        vector.reduce(type, op, all, 0, partner, 0, actual, 0, n);
                        for (int v = 0; v < n; v++) {
                            short e = expected.getAtIndex(ValueLayout.JAVA_SHORT, v);
                            short a = actual.getAtIndex(ValueLayout.JAVA_SHORT, v);
                            if (e != a) {
                                boolean bothNaN = isNaN(type, e) && isNaN(type, a);
                                if (bothNaN && (op == ReduceOp.SUM || op == ReduceOp.PROD)) {
                                    nanSkipped.incrementAndGet(); // which NaN operand's payload wins is unspecified in Java
                                } else if (mismatches.incrementAndGet() <= 5) {
                                    System.out.printf("MISMATCH %s %s x=0x%04x y=0x%04x scalar=0x%04x checked=0x%04x%n",
                                            type, op, v, y & 0xffff, e & 0xffff, a & 0xffff);
                                }
                            }
                        }
                    }
                });
                System.out.printf("%s %s: %d mismatches, %d NaN-payload differences, %.1f s%n", type, op,
                        mismatches.get(), nanSkipped.get(), (System.nanoTime() - t0) / 1e9);
                total += mismatches.get();
            }
        }
        if (total > 0) {
            System.exit(1);
        }
    }

    private static boolean isNaN(DataType type, short v) {
        return type == DataType.FLOAT16 ? (v & 0x7c00) == 0x7c00 && (v & 0x03ff) != 0
                : (v & 0x7f80) == 0x7f80 && (v & 0x007f) != 0;
    }
}
