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
 * Large reductions whose stores bypass the caches. A reduction {@code d = a op b} over more bytes
 * than the caches hold pays for each line of {@code d} twice (a read for ownership before the
 * store, the write-back after), where a large memory copy streams its stores and pays once; on a
 * 2-core Xeon guest float32 sums of 64 MiB ran at 0.54x to 0.73x of {@link MemorySegment#copy}
 * under JMH, every type alike. The Vector API has no streaming store, so from {@link #minBytes()}
 * of destination the reduction runs in a native loop that streams its stores
 * ({@code libjccl-streamstores.so}, {@code src/main/c/stream_stores.c}; float16 and bfloat16 in
 * {@link HalfFloatKernel#reduceStreaming}), the wrapped kernel doing the destination's unaligned
 * head and its tail. Where no such loop runs (8-bit floating types, heap inputs, a CPU without
 * AVX2, a destination off its element boundary) the wrapped kernel reduces a block of
 * {@link #BLOCK_BYTES} at a time into a buffer of the calling thread that stays in L1, and each
 * block is streamed out: about 0.8 of a fused loop's speed, and still ahead of ordinary stores.
 * Below that size, into heap memory, and for every other call it is the wrapped kernel: in cache,
 * streaming stores halve the speed and evict what the next step reads.
 *
 * <p>Each block is read before it is written, so {@code dst} may be {@code a} or {@code b} at the
 * same offset, as the interface allows. The streamed stores are fenced before {@link #reduce}
 * returns, so a flag the caller stores next is seen after the data.
 */
final class StreamingStoreKernel implements ReductionKernel {
    static final String LIBRARY = "libjccl-streamstores.so";
    /** Bytes reduced into the thread's buffer per step: small enough for L1, large enough that a downcall is noise. */
    static final int BLOCK_BYTES = 16 << 10;
    /** Destination bytes from which the default ({@code JCCL_HOST_STREAM_STORES=auto}) streams. */
    static final long DEFAULT_MIN_BYTES = 8L << 20;

    private static final MethodHandle STREAM_COPY;
    /** the fused loops of the other types ({@code jccl_stream_reduce}), or {@code null} where the CPU lacks AVX2 */
    private static final MethodHandle STREAM_REDUCE;
    /** the widest registers those loops run on here: 2 AVX-512, 1 AVX2, 0 none */
    static final int WIDEST;
    private static final String UNAVAILABILITY_CAUSE;
    /** each thread's block buffer, allocated on its first large reduction and freed with the thread */
    private static final ThreadLocal<MemorySegment> BLOCK =
            ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(BLOCK_BYTES, 64));

    static {
        MethodHandle copy = null;
        MethodHandle fused = null;
        int widest = 0;
        String cause = null;
        try {
            Linker linker = Linker.nativeLinker();
            SymbolLookup library = SymbolLookup.libraryLookup(BundledLibrary.locate(LIBRARY), Arena.global());
            MethodHandle available = linker.downcallHandle(library.find("jccl_stream_stores_available").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT));
            if ((int) available.invokeExact() == 0) {
                cause = LIBRARY + " has no streaming stores on " + System.getProperty("os.arch") + " (x86-64 only)";
            } else {
                copy = linker.downcallHandle(library.find("jccl_stream_copy").orElseThrow(),
                        FunctionDescriptor.ofVoid(ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS,
                                ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG));
                MethodHandle width = linker.downcallHandle(library.find("jccl_stream_reduce_width").orElseThrow(),
                        FunctionDescriptor.of(ValueLayout.JAVA_INT));
                widest = (int) width.invokeExact();
                if (widest > 0) {
                    fused = linker.downcallHandle(library.find("jccl_stream_reduce").orElseThrow(),
                            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                                    ValueLayout.JAVA_INT,
                                    ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG,
                                    ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG));
                }
            }
        } catch (Throwable e) { // no library for this platform, no native access granted, no linker
            cause = LIBRARY + " could not be loaded: " + e;
        }
        STREAM_COPY = cause == null ? copy : null;
        STREAM_REDUCE = cause == null ? fused : null;
        WIDEST = cause == null ? widest : 0;
        UNAVAILABILITY_CAUSE = cause;
    }

    private final ReductionKernel inner;
    private final long minBytes;
    /** registers of the fused loops, {@link #WIDEST} unless a test asks for narrower */
    private final int width;

    /**
     * @param inner    the kernel that computes every block, and does every call this one does not stream
     * @param minBytes destination bytes from which a reduction streams its stores (at least {@link #BLOCK_BYTES})
     * @throws IllegalStateException if streaming stores are not available ({@link #unavailabilityCause()})
     */
    StreamingStoreKernel(ReductionKernel inner, long minBytes) {
        this(inner, minBytes, WIDEST);
    }

    /** @param width the fused loops' registers, 1 (AVX2) to {@link #WIDEST}; 0 for blocks only */
    StreamingStoreKernel(ReductionKernel inner, long minBytes, int width) {
        if (width < 0 || width > WIDEST) {
            throw new IllegalArgumentException("fused loops of width " + width + ": this CPU runs 0 to " + WIDEST);
        }
        if (UNAVAILABILITY_CAUSE != null) {
            throw new IllegalStateException(UNAVAILABILITY_CAUSE);
        }
        if (minBytes < BLOCK_BYTES) {
            throw new IllegalArgumentException("streaming stores from " + minBytes + " bytes: at least "
                    + BLOCK_BYTES + " (one block)");
        }
        this.inner = Objects.requireNonNull(inner, "inner");
        this.minBytes = minBytes;
        this.width = width;
    }

    /** @return whether streaming stores can run in this process */
    static boolean isAvailable() {
        return UNAVAILABILITY_CAUSE == null;
    }

    /** @return why they cannot, or {@code null} if they can */
    static String unavailabilityCause() {
        return UNAVAILABILITY_CAUSE;
    }

    /** @return destination bytes from which a reduction streams */
    long minBytes() {
        return minBytes;
    }

    /** @return the kernel that computes the blocks */
    ReductionKernel inner() {
        return inner;
    }

    @Override
    public boolean supports(DataType type, ReduceOp op) {
        return inner.supports(type, op);
    }

    @Override
    public void reduce(DataType type, ReduceOp op, MemorySegment a, long aOffset, MemorySegment b, long bOffset,
                       MemorySegment dst, long dstOffset, long count) {
        long bytes = count * type.size();
        if (bytes < minBytes || !dst.isNative()) {
            inner.reduce(type, op, a, aOffset, b, bOffset, dst, dstOffset, count);
            return;
        }
        // all bounds before any path writes: a bad call writes nothing
        NativeArguments.checkReduction(a, aOffset, b, bOffset, dst, dstOffset, bytes);
        if (inner instanceof HalfFloatKernel half && half.reduceStreaming(type, op, a, aOffset, b, bOffset, dst,
                dstOffset, count)) {
            return; // float16, bfloat16: streamed by the native kernel's own loop
        }
        if (reduceFused(type, op, a, aOffset, b, bOffset, dst, dstOffset, count)) {
            return;
        }
        MemorySegment block = BLOCK.get();
        long perBlock = BLOCK_BYTES / type.size();
        for (long done = 0; done < count; done += perBlock) {
            long n = Math.min(perBlock, count - done);
            long offset = done * type.size();
            inner.reduce(type, op, a, aOffset + offset, b, bOffset + offset, block, 0, n);
            streamCopy(block, dst, dstOffset + offset, n * type.size());
        }
    }

    /**
     * The fused loop of {@code jccl_stream_reduce} on the destination's whole 64-byte lines, the
     * wrapped kernel on the head before them and the tail after.
     *
     * @return whether it did; {@code false} (nothing done) for 16-bit and 8-bit floating types, heap
     *         inputs, a destination off its element boundary, fewer than two lines, or no AVX2
     */
    private boolean reduceFused(DataType type, ReduceOp op, MemorySegment a, long aOffset, MemorySegment b,
                                long bOffset, MemorySegment dst, long dstOffset, long count) {
        int typeCode = fusedTypeCode(type);
        int opCode = NativeArguments.opCode(op);
        int size = type.size();
        long address = dst.address() + dstOffset;
        long head = ((64 - (address & 63)) & 63) / size;
        if (width == 0 || typeCode < 0 || opCode < 0 || !a.isNative() || !b.isNative()
                || address % size != 0 || (count - head) * size < 2 * 64 || !inner.supports(type, op)) {
            return false;
        }
        long bytes = count * size; // bounds checked by reduce
        inner.reduce(type, op, a, aOffset, b, bOffset, dst, dstOffset, head);
        long at = head * size;
        long lines = (bytes - at) / 64 * 64;
        int rc;
        try {
            rc = (int) STREAM_REDUCE.invokeExact(width, typeCode, opCode, a, aOffset + at, b, bOffset + at, dst, dstOffset + at,
                    lines);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(LIBRARY + " failed", t);
        }
        if (rc != 0) { // only for arguments this method never passes
            throw new IllegalStateException(LIBRARY + " refused " + type + " " + op + " over " + lines + " bytes");
        }
        long done = at + lines;
        if (done < bytes) {
            inner.reduce(type, op, a, aOffset + done, b, bOffset + done, dst, dstOffset + done, (bytes - done) / size);
        }
        return true;
    }

    /** {@code type_code} in stream_stores.c, or -1 for the types it has no loop of */
    private static int fusedTypeCode(DataType type) {
        return switch (type) {
            case INT8 -> 0;
            case UINT8 -> 1;
            case INT32 -> 2;
            case UINT32 -> 3;
            case INT64 -> 4;
            case UINT64 -> 5;
            case FLOAT32 -> 6;
            case FLOAT64 -> 7;
            default -> -1;
        };
    }

    private static void streamCopy(MemorySegment block, MemorySegment dst, long dstOffset, long bytes) {
        try {
            STREAM_COPY.invokeExact(block, 0L, dst, dstOffset, bytes);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(LIBRARY + " failed", t);
        }
    }

    @Override
    public void divide(DataType type, MemorySegment buf, long offset, long count, int divisor) {
        inner.divide(type, buf, offset, count, divisor);
    }

    @Override
    public void copy(MemorySegment src, long srcOffset, MemorySegment dst, long dstOffset, long bytes) {
        inner.copy(src, srcOffset, dst, dstOffset, bytes);
    }
}
