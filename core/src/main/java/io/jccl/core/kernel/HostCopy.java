package io.jccl.core.kernel;

import io.jccl.core.config.CoreConfig;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Locale;

/**
 * Copies of host memory large enough to matter, through the C library's {@code memmove}.
 *
 * <p>Why not {@link MemorySegment#copy}: the JIT's copy stub moves data with vector loads and
 * stores, and a store to a cache line another core holds first reads that line over (a read for
 * ownership). That is what a ring's copies into a peer's shared-memory slot, and out of it, meet
 * on every step. glibc's {@code memmove} copies such sizes with {@code rep movsb}, which writes
 * whole lines without reading them first. Measured on this project's 2-core AMD EPYC guest, a C
 * ring all-reduce of 1 MiB between two processes took 197 us with a 32-byte load/store loop and
 * 69 us with {@code rep movsb} (glibc's {@code memcpy}: 68 us); JCCL's own 2-rank 1 MiB all-reduce
 * went from 231-278 us to 128-160 us. That is with the guest's two vCPUs apart on the host; with
 * them close, the loop kept up with {@code rep movsb} and JCCL's all-reduce took about a fifth
 * longer with {@code memmove} ({@code bench/mpi/README.md}). On one core with the data in cache
 * the stub is the faster below about 32 KiB ({@link #MIN_BYTES}), where the downcall's cost is
 * not yet paid back.
 *
 * <p>{@code JCCL_HOST_COPY=java} keeps every copy on {@link MemorySegment#copy} (a baseline);
 * {@code libc} fails where the C library's {@code memmove} cannot be linked. The downcall takes
 * the segments themselves, so FFM checks their bounds, liveness and owning thread as
 * {@link MemorySegment#copy} does; the slices it is given are scalar-replaced by the JIT (no
 * allocation once compiled).
 */
public final class HostCopy {
    /** Fewest bytes that go to {@code memmove}: below, the JIT's stub is as fast on one core and skips the downcall. */
    public static final long MIN_BYTES = 32 << 10;

    private static final MethodHandle MEMMOVE;
    private static final String UNAVAILABILITY_CAUSE;
    /** A bad JCCL_HOST_COPY, reported by {@link #check()} rather than failing class initialisation. */
    private static final String PROBLEM;

    static {
        String wanted = System.getenv(CoreConfig.JCCL_HOST_COPY);
        wanted = wanted == null || wanted.isBlank() ? "auto" : wanted.trim().toLowerCase(Locale.ROOT);
        MethodHandle memmove = null;
        String cause = null;
        String problem = null;
        if (!wanted.equals("auto") && !wanted.equals("libc") && !wanted.equals("java")) {
            problem = CoreConfig.JCCL_HOST_COPY + "=" + wanted + " is not one of auto, libc, java";
        } else if (wanted.equals("java")) {
            cause = CoreConfig.JCCL_HOST_COPY + "=java";
        } else {
            try {
                Linker linker = Linker.nativeLinker();
                memmove = linker.defaultLookup().find("memmove")
                        .map(address -> linker.downcallHandle(address, FunctionDescriptor.of(ValueLayout.ADDRESS,
                                ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG),
                                Linker.Option.critical(false)))
                        .orElse(null);
                if (memmove == null) {
                    cause = "the C library has no memmove";
                }
            } catch (RuntimeException | LinkageError e) { // no native access granted, or no linker on this platform
                cause = "memmove could not be linked: " + e;
            }
            if (memmove == null && wanted.equals("libc")) {
                problem = CoreConfig.JCCL_HOST_COPY + "=libc, but " + cause;
            }
        }
        MEMMOVE = memmove;
        UNAVAILABILITY_CAUSE = cause;
        PROBLEM = problem;
    }

    private HostCopy() {
    }

    /** @return whether large copies go to the C library's {@code memmove} */
    public static boolean isAvailable() {
        return MEMMOVE != null;
    }

    /** @return why they do not, or {@code null} if they do */
    public static String unavailabilityCause() {
        return UNAVAILABILITY_CAUSE;
    }

    /** @return which copy this process uses, for logs and benchmark headers */
    public static String describe() {
        return MEMMOVE != null ? "memmove from " + (MIN_BYTES >> 10) + " KiB" : "MemorySegment.copy (" + UNAVAILABILITY_CAUSE + ")";
    }

    /** @throws IllegalArgumentException if {@code JCCL_HOST_COPY} asks for what cannot be had */
    static void check() {
        if (PROBLEM != null) {
            throw new IllegalArgumentException(PROBLEM);
        }
    }

    /**
     * Copies {@code bytes} bytes; the ranges may overlap.
     *
     * @throws IndexOutOfBoundsException, IllegalStateException, WrongThreadException as {@link MemorySegment#copy}
     */
    public static void copy(MemorySegment src, long srcOffset, MemorySegment dst, long dstOffset, long bytes) {
        if (MEMMOVE == null || bytes < MIN_BYTES || !src.isNative() || !dst.isNative()) {
            MemorySegment.copy(src, srcOffset, dst, dstOffset, bytes);
            return;
        }
        if (dst.isReadOnly()) {
            throw new IllegalArgumentException("copy into a read-only segment");
        }
        MemorySegment to = dst.asSlice(dstOffset, bytes);
        MemorySegment from = src.asSlice(srcOffset, bytes);
        try {
            MemorySegment ignored = (MemorySegment) MEMMOVE.invokeExact(to, from, bytes);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("memmove failed", t);
        }
    }
}
