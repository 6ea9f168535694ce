package io.jccl.core.kernel;

import io.jccl.core.config.CoreConfig;

import java.util.Locale;

/**
 * Picks the host reduction kernel once per process, as Apache Lucene picks its vector code: the
 * Vector API kernel where the JVM has module {@code jdk.incubator.vector} (started with
 * {@code --add-modules jdk.incubator.vector}; {@code bin/jccl} does), else the scalar one.
 * {@code JCCL_HOST_KERNEL=scalar} forces the scalar kernel (a baseline, or a suspect JIT).
 */
public final class HostKernels {
    private static final ReductionKernel BEST;
    private static final String DESCRIPTION;

    static {
        String wanted = System.getenv(CoreConfig.JCCL_HOST_KERNEL);
        wanted = wanted == null || wanted.isBlank() ? "auto" : wanted.trim().toLowerCase(Locale.ROOT);
        if (!wanted.equals("auto") && !wanted.equals("vector") && !wanted.equals("scalar")) {
            throw new IllegalArgumentException(CoreConfig.JCCL_HOST_KERNEL + "=" + wanted
                    + " is not one of auto, vector, scalar");
        }
        ReductionKernel kernel = HostReductionKernel.INSTANCE;
        String description = "scalar";
        boolean present = ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent();
        if (!wanted.equals("scalar") && present) {
            try {
                kernel = new VectorReductionKernel();
                description = "Vector API, " + VectorReductionKernel.vectorBits() + "-bit registers";
            } catch (LinkageError e) {
                description = "scalar (the Vector API did not link: " + e + ")";
            }
        } else if (wanted.equals("vector")) {
            throw new IllegalStateException(CoreConfig.JCCL_HOST_KERNEL + "=vector, but this JVM lacks module "
                    + "jdk.incubator.vector: start it with --add-modules jdk.incubator.vector");
        } else if (!present) {
            description = "scalar (no jdk.incubator.vector: start the JVM with --add-modules jdk.incubator.vector)";
        }
        BEST = kernel;
        DESCRIPTION = description;
    }

    private HostKernels() {
    }

    /** @return the host kernel this process uses */
    public static ReductionKernel best() {
        return BEST;
    }

    /** @return which kernel that is, and why, for logs and benchmark headers */
    public static String describe() {
        return DESCRIPTION;
    }
}
