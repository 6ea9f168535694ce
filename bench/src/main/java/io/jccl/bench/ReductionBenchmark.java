package io.jccl.bench;

import io.jccl.core.kernel.HalfFloats;
import io.jccl.core.kernel.HostKernels;
import io.jccl.core.kernel.HostReductionKernel;
import io.jccl.core.kernel.ReductionKernel;
import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

/**
 * JMH: the host reduction kernels ({@code d = a + b}) against a plain copy of the same bytes
 * ({@code MemorySegment.copy}), in one run: {@code copy} (the baseline), {@code vector} (the kernel
 * {@link HostKernels} picks; the Vector API where the JVM has it, native code for float16 and
 * bfloat16 where the CPU has AVX2 and F16C, at AVX-512 F and BW, then AVX-512 FP16, where it has
 * those),
 * {@code java} (that kernel without native code) and
 * {@code scalar}. Run through
 * {@code bin/jccl bench reductions}, which prints the ratios.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class ReductionBenchmark {
    @Param({"float32"})
    public String type;

    @Param({"1048576"})
    public long bytes;

    private Arena arena;
    private MemorySegment a;
    private MemorySegment b;
    private MemorySegment d;
    private DataType dataType;
    private long count;
    private final ReductionKernel best = HostKernels.best();
    private final ReductionKernel inJava = HostKernels.inJava();
    private final ReductionKernel scalar = HostReductionKernel.INSTANCE;

    @Setup(Level.Trial)
    public void allocate() {
        dataType = DataType.fromName(type);
        count = bytes / dataType.size();
        arena = Arena.ofShared();
        a = arena.allocate(bytes, 64);
        b = arena.allocate(bytes, 64);
        d = arena.allocate(bytes, 64);
        java.util.Random random = new java.util.Random(7);
        for (long i = 0; i < count; i++) {
            fill(a, i, random.nextGaussian());
            fill(b, i, random.nextGaussian());
        }
    }

    /**
     * Element {@code i}: for the floating-point types a value of the kind a gradient holds (normal
     * numbers, no NaN: the float16 kernel hands a step with a NaN result to the scalar kernel), for
     * the integer types bits that vary from element to element.
     */
    private void fill(MemorySegment s, long i, double gaussian) {
        long o = i * dataType.size();
        switch (dataType) {
            case FLOAT64 -> s.set(java.lang.foreign.ValueLayout.JAVA_DOUBLE, o, gaussian);
            case FLOAT32 -> s.set(java.lang.foreign.ValueLayout.JAVA_FLOAT, o, (float) gaussian);
            case FLOAT16 -> s.set(java.lang.foreign.ValueLayout.JAVA_SHORT, o, HalfFloats.toFloat16((float) gaussian));
            case BFLOAT16 -> s.set(java.lang.foreign.ValueLayout.JAVA_SHORT, o, HalfFloats.toBfloat16((float) gaussian));
            default -> {
                for (int k = 0; k < dataType.size(); k++) {
                    s.set(java.lang.foreign.ValueLayout.JAVA_BYTE, o + k, (byte) ((o + k) * 7 + (long) (gaussian * 64)));
                }
            }
        }
    }

    @TearDown(Level.Trial)
    public void free() {
        arena.close();
    }

    /** The baseline: the same bytes copied. */
    @Benchmark
    public void copy() {
        MemorySegment.copy(a, 0, d, 0, bytes);
    }

    @Benchmark
    public void vector() {
        best.reduce(dataType, ReduceOp.SUM, a, 0, b, 0, d, 0, count);
    }

    /** The kernel without native code (float16 and bfloat16 differ from {@code vector} where that has it). */
    @Benchmark
    public void java() {
        inJava.reduce(dataType, ReduceOp.SUM, a, 0, b, 0, d, 0, count);
    }

    @Benchmark
    public void scalar() {
        scalar.reduce(dataType, ReduceOp.SUM, a, 0, b, 0, d, 0, count);
    }
}
