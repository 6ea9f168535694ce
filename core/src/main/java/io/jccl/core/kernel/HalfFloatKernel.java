package io.jccl.core.kernel;

import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Objects;

/**
 * float16 and bfloat16 reductions in native code ({@code libjccl-halffloats.so}, built with this
 * module from {@code src/main/c/half_floats.c}), every other type and operation by the kernel it
 * wraps. The JDK's Vector API has no half-precision lanes or conversions, and widening and rounding
 * by integer lane operations ran at a tenth of a memory copy; x86's F16C converts eight values in
 * one instruction each way, and AVX2's integer lanes round bfloat16. Results equal the scalar
 * kernel's bit for bit (NaN payloads of sums and products aside, which Java leaves unspecified).
 *
 * <p>The library has four {@link Level}s of instructions: AVX2 with F16C; AVX-512 (F and BW)
 * for bfloat16 and max/min, whose AVX2 bfloat16 sum is bound by its vector operations rather than by
 * memory; AVX-512 VBMI2 on top, bfloat16 sum and product packed by a double shift in fewer
 * operations; and AVX-512 FP16 on top of that, float16 sum and product in half precision without
 * conversions.
 * A level is available where the library loads, the CPU has its instructions, and FFM may link
 * downcalls ({@link #isAvailable(Level)}, {@link #unavailabilityCause(Level)}); {@link #best()}
 * is the highest such. Used on native segments, 16 elements at a time; the tail, heap segments and
 * the other types go to the wrapped kernel. The downcall takes the segments themselves, so FFM
 * checks their liveness and owning thread, and byte offsets whose bounds this class checks: slices,
 * allocated per call, were not always scalar-replaced by the JIT across the downcall (120 bytes a
 * call, measured).
 */
final class HalfFloatKernel implements ReductionKernel {
    static final String LIBRARY = "libjccl-halffloats.so";
    /** Elements per native step (a 256-bit register of 16-bit values); counts below it stay in Java. */
    static final long STEP = 16;

    /** The instructions the kernel uses; codes as {@code enum level} in half_floats.c. */
    enum Level {
        AVX2(1, "AVX2, F16C"),
        AVX512(2, "AVX-512 F and BW; F16C for float16 sum and product"),
        AVX512_VBMI2(8, "AVX-512 F, BW and VBMI2; F16C for float16 sum and product"),
        AVX512_FP16(4, "AVX-512 F, BW, VBMI2 and FP16");

        final int code;
        /** what the kernel runs on at this level, for {@link HostKernels#describe()} */
        final String instructions;

        Level(int code, String instructions) {
            this.code = code;
            this.instructions = instructions;
        }
    }

    private static final MethodHandle REDUCE;
    /** bit mask of {@link Level#code}s this CPU runs */
    private static final int LEVELS;
    /** why the library cannot be used at all, or {@code null} */
    private static final String LOAD_FAILURE;

    static {
        MethodHandle reduce = null;
        int levels = 0;
        String failure = null;
        try {
            Linker linker = Linker.nativeLinker();
            SymbolLookup library = SymbolLookup.libraryLookup(BundledLibrary.locate(LIBRARY), Arena.global());
            MethodHandle levelsHandle = linker.downcallHandle(library.find("jccl_half_floats_levels").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT));
            levels = (int) levelsHandle.invokeExact();
            reduce = linker.downcallHandle(library.find("jccl_half_floats_reduce").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                            ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS,
                            ValueLayout.JAVA_LONG, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG,
                            ValueLayout.JAVA_INT));
        } catch (Throwable e) { // no library for this platform, no native access granted, no linker
            failure = LIBRARY + " could not be loaded: " + e;
            levels = 0;
        }
        REDUCE = failure == null ? reduce : null;
        LEVELS = levels;
        LOAD_FAILURE = failure;
    }

    private final ReductionKernel others;
    private final Level level;

    /**
     * @param others the kernel of every other type and operation, the tails, and heap segments
     * @param level  the instructions to use
     * @throws IllegalStateException if that level is not available ({@link #unavailabilityCause(Level)})
     */
    HalfFloatKernel(ReductionKernel others, Level level) {
        String cause = unavailabilityCause(level);
        if (cause != null) {
            throw new IllegalStateException(cause);
        }
        this.others = Objects.requireNonNull(others, "others");
        this.level = level;
    }

    /** @return whether the native 16-bit float kernel can run in this process at this level */
    static boolean isAvailable(Level level) {
        return unavailabilityCause(level) == null;
    }

    /** @return why it cannot, or {@code null} if it can */
    static String unavailabilityCause(Level level) {
        if (LOAD_FAILURE != null) {
            return LOAD_FAILURE;
        }
        if (!runs(level)) {
            return switch (level) {
                case AVX2 -> "this CPU lacks AVX2 or F16C (or is not x86-64), which " + LIBRARY + " needs";
                case AVX512 -> "this CPU lacks AVX-512 F or BW (it runs " + LIBRARY + " at AVX2 at most)";
                case AVX512_VBMI2 -> "this CPU lacks AVX-512 F, BW or VBMI2; " + runsAtMost();
                case AVX512_FP16 -> "this CPU lacks AVX-512 VBMI2 or FP16, or " + LIBRARY
                        + " was built by a compiler without it (gcc before 12); " + runsAtMost();
            };
        }
        return null;
    }

    /** the highest level this CPU runs, for a cause of a level above it */
    private static String runsAtMost() {
        Level best = best();
        return best == null ? "it runs " + LIBRARY + " at no level (not even AVX2 with F16C)"
                : "it runs " + LIBRARY + " at " + best + " at most";
    }

    /** @return the highest available level, or {@code null} where none is ({@link #unavailabilityCause(Level)} of AVX2 says why) */
    static Level best() {
        Level[] levels = Level.values();
        for (int i = levels.length - 1; i >= 0; i--) {
            if (runs(levels[i])) {
                return levels[i];
            }
        }
        return null;
    }

    /** whether the library loaded and reports the level (not {@link #isAvailable}: its cause names {@link #best()}) */
    private static boolean runs(Level level) {
        return LOAD_FAILURE == null && (LEVELS & level.code) != 0;
    }

    /** @return the instructions this kernel uses */
    Level level() {
        return level;
    }

    /** @return the kernel this one hands the rest to */
    ReductionKernel others() {
        return others;
    }

    @Override
    public boolean supports(DataType type, ReduceOp op) {
        return others.supports(type, op);
    }

    @Override
    public void reduce(DataType type, ReduceOp op, MemorySegment a, long aOffset, MemorySegment b, long bOffset,
                       MemorySegment dst, long dstOffset, long count) {
        int typeCode = typeCode(type);
        int opCode = NativeArguments.opCode(op);
        if (typeCode < 0 || opCode < 0 || count < STEP || !a.isNative() || !b.isNative() || !dst.isNative()) {
            others.reduce(type, op, a, aOffset, b, bOffset, dst, dstOffset, count);
            return;
        }
        NativeArguments.checkReduction(a, aOffset, b, bOffset, dst, dstOffset, count * 2);
        long whole = count / STEP * STEP;
        invoke(type, op, a, aOffset, b, bOffset, dst, dstOffset, whole, false);
        if (whole < count) {
            long bytes = whole * 2;
            others.reduce(type, op, a, aOffset + bytes, b, bOffset + bytes, dst, dstOffset + bytes, count - whole);
        }
    }

    /**
     * {@link #reduce} with the destination's whole 64-byte lines stored past the caches (for
     * {@link StreamingStoreKernel}: a fused loop beats its block-and-copy, which a 16-bit kernel's
     * extra arithmetic slows down), the unaligned head and the tail by ordinary stores.
     *
     * @return whether it did; {@code false} (nothing done) for a type or operation this kernel hands
     *         on, heap segments, a destination not on a 2-byte boundary, or fewer than two lines
     */
    boolean reduceStreaming(DataType type, ReduceOp op, MemorySegment a, long aOffset, MemorySegment b, long bOffset,
                            MemorySegment dst, long dstOffset, long count) {
        long address = dst.address() + dstOffset;
        long head = ((64 - (address & 63)) & 63) / 2;
        if (typeCode(type) < 0 || NativeArguments.opCode(op) < 0 || !a.isNative() || !b.isNative() || !dst.isNative()
                || (address & 1) != 0 || count - head < 2 * 32) {
            return false;
        }
        NativeArguments.checkReduction(a, aOffset, b, bOffset, dst, dstOffset, count * 2);
        reduce(type, op, a, aOffset, b, bOffset, dst, dstOffset, head);
        long whole = (count - head) / STEP * STEP;
        long at = head * 2;
        invoke(type, op, a, aOffset + at, b, bOffset + at, dst, dstOffset + at, whole, true);
        long done = head + whole;
        if (done < count) {
            at = done * 2;
            others.reduce(type, op, a, aOffset + at, b, bOffset + at, dst, dstOffset + at, count - done);
        }
        return true;
    }

    private static int typeCode(DataType type) {
        return type == DataType.FLOAT16 ? 0 : type == DataType.BFLOAT16 ? 1 : -1;
    }

    /** The native kernel on {@code whole} elements (a multiple of {@link #STEP}), bounds checked. */
    private void invoke(DataType type, ReduceOp op, MemorySegment a, long aOffset, MemorySegment b, long bOffset,
                        MemorySegment dst, long dstOffset, long whole, boolean stream) {
        int rc;
        try {
            rc = (int) REDUCE.invokeExact(level.code, typeCode(type), NativeArguments.opCode(op), a, aOffset, b, bOffset, dst, dstOffset,
                    whole, stream ? 1 : 0);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(LIBRARY + " failed", t);
        }
        if (rc != 0) { // only for arguments this class never passes
            throw new IllegalStateException(LIBRARY + " refused type " + type + " op " + op + " count " + whole
                    + " at level " + level + (stream ? ", streaming" : ""));
        }
    }

    @Override
    public void divide(DataType type, MemorySegment buf, long offset, long count, int divisor) {
        others.divide(type, buf, offset, count, divisor);
    }

    @Override
    public void copy(MemorySegment src, long srcOffset, MemorySegment dst, long dstOffset, long bytes) {
        others.copy(src, srcOffset, dst, dstOffset, bytes);
    }
}
