package io.jccl.core.kernel;

import io.jccl.core.config.CoreConfig;
import io.jccl.spi.config.Env;

import java.util.Locale;

/**
 * Picks the host reduction kernel once per process, as Apache Lucene picks its vector code: the
 * Vector API kernel where the JVM has module {@code jdk.incubator.vector} (started with
 * {@code --add-modules jdk.incubator.vector}; {@code bin/jccl} does), else the scalar one.
 * {@code JCCL_HOST_KERNEL=scalar} forces the scalar kernel (a baseline, or a suspect JIT). float16
 * and bfloat16 go to native code where it runs ({@link HalfFloatKernel}, {@code JCCL_HOST_HALF_FLOATS}),
 * and reductions into large destinations stream their stores past the caches
 * ({@link StreamingStoreKernel}, {@code JCCL_HOST_STREAM_STORES}).
 */
public final class HostKernels {
    private static final ReductionKernel BEST;
    /** BEST without native code: what the JVM alone gives (a benchmark's baseline). */
    private static final ReductionKernel IN_JAVA;
    private static final String DESCRIPTION;
    /** A bad JCCL_HOST_KERNEL, reported by {@link #best()} each time rather than failing class initialisation. */
    private static final String PROBLEM;

    static {
        String wanted = System.getenv(CoreConfig.JCCL_HOST_KERNEL);
        wanted = wanted == null || wanted.isBlank() ? "auto" : wanted.trim().toLowerCase(Locale.ROOT);
        boolean present = ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent();
        ReductionKernel kernel = HostReductionKernel.INSTANCE;
        String description = present ? "scalar" : "scalar (no jdk.incubator.vector: start the JVM with --add-modules "
                + "jdk.incubator.vector)";
        String problem = null;
        if (!wanted.equals("auto") && !wanted.equals("vector") && !wanted.equals("scalar")) {
            problem = CoreConfig.JCCL_HOST_KERNEL + "=" + wanted + " is not one of auto, vector, scalar";
        } else if (wanted.equals("vector") && !present) {
            problem = CoreConfig.JCCL_HOST_KERNEL + "=vector, but this JVM lacks module jdk.incubator.vector: "
                    + "start it with --add-modules jdk.incubator.vector";
        } else if (!wanted.equals("scalar") && present) {
            try {
                kernel = new VectorReductionKernel();
                description = "Vector API, " + VectorReductionKernel.vectorBits() + "-bit registers";
            } catch (LinkageError e) {
                description = "scalar (the Vector API did not link: " + e + ")";
            }
        }
        IN_JAVA = kernel;
        String half = System.getenv(CoreConfig.JCCL_HOST_HALF_FLOATS);
        half = half == null || half.isBlank() ? "auto" : half.trim().toLowerCase(Locale.ROOT);
        // avx2, avx512 and avx512_vbmi2: a level below the CPU's best, the baseline of the one above it
        HalfFloatKernel.Level level = switch (half) {
            case "avx2" -> HalfFloatKernel.Level.AVX2;
            case "avx512" -> HalfFloatKernel.Level.AVX512;
            case "avx512_vbmi2" -> HalfFloatKernel.Level.AVX512_VBMI2;
            default -> HalfFloatKernel.best();
        };
        boolean halfKnown = switch (half) {
            case "auto", "native", "avx2", "avx512", "avx512_vbmi2", "java" -> true;
            default -> false;
        };
        boolean halfWanted = half.equals("auto") ? !wanted.equals("scalar") : halfKnown && !half.equals("java");
        String halfCause = level == null ? HalfFloatKernel.unavailabilityCause(HalfFloatKernel.Level.AVX2)
                : HalfFloatKernel.unavailabilityCause(level);
        if (problem == null && !halfKnown) {
            problem = CoreConfig.JCCL_HOST_HALF_FLOATS + "=" + half + " is not one of auto, native, avx2, avx512, avx512_vbmi2, java";
        } else if (problem == null && halfWanted && halfCause == null) {
            kernel = new HalfFloatKernel(kernel, level);
            description += "; float16 and bfloat16 native (" + level.instructions + ")";
        } else if (problem == null && halfWanted) {
            description += "; float16 and bfloat16 in Java (" + halfCause + ")";
            if (!half.equals("auto")) {
                problem = CoreConfig.JCCL_HOST_HALF_FLOATS + "=" + half + ", but " + halfCause;
            }
        }
        String stream = System.getenv(CoreConfig.JCCL_HOST_STREAM_STORES);
        stream = stream == null || stream.isBlank() ? "auto" : stream.trim().toLowerCase(Locale.ROOT);
        long streamFrom = streamFrom(stream);
        if (problem == null && streamFrom == -1) {
            problem = CoreConfig.JCCL_HOST_STREAM_STORES + "=" + stream + " is not one of auto, off, or a byte count of at least "
                    + StreamingStoreKernel.BLOCK_BYTES + " (such as 16K, 8M, 1G)";
        } else if (problem == null && streamFrom > 0 && StreamingStoreKernel.isAvailable()) {
            kernel = new StreamingStoreKernel(kernel, streamFrom);
            description += "; streaming stores from " + streamFrom + " bytes";
        } else if (problem == null && streamFrom > 0) {
            description += "; no streaming stores (" + StreamingStoreKernel.unavailabilityCause() + ")";
            if (!stream.equals("auto")) {
                problem = CoreConfig.JCCL_HOST_STREAM_STORES + "=" + stream + ", but "
                        + StreamingStoreKernel.unavailabilityCause();
            }
        }
        BEST = kernel;
        DESCRIPTION = description;
        PROBLEM = problem;
    }

    private HostKernels() {
    }

    /** JCCL_HOST_STREAM_STORES as destination bytes from which to stream: 0 for off, -1 for a bad value */
    static long streamFrom(String value) {
        if (value.equals("auto")) {
            return StreamingStoreKernel.DEFAULT_MIN_BYTES;
        }
        if (value.equals("off") || value.equals("0")) {
            return 0;
        }
        try {
            long bytes = Env.parseBytes(value);
            return bytes >= StreamingStoreKernel.BLOCK_BYTES ? bytes : -1;
        } catch (IllegalArgumentException | ArithmeticException e) { // NumberFormatException is one
            return -1;
        }
    }

    /**
     * @return the host kernel this process uses
     * @throws IllegalArgumentException if {@code JCCL_HOST_KERNEL}, {@code JCCL_HOST_HALF_FLOATS},
     *         {@code JCCL_HOST_STREAM_STORES} or {@code JCCL_HOST_COPY} asks for what cannot be had
     */
    public static ReductionKernel best() {
        if (PROBLEM != null) {
            throw new IllegalArgumentException(PROBLEM);
        }
        HostCopy.check();
        return BEST;
    }

    /** @return the kernel this process would use without native code (the Vector API or scalar one), a baseline */
    public static ReductionKernel inJava() {
        return IN_JAVA;
    }

    /** @return which kernel that is, and why, for logs and benchmark headers */
    public static String describe() {
        return DESCRIPTION;
    }
}
