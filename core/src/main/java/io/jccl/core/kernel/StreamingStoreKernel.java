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
 * of destination this kernel has the wrapped one reduce a block of {@link #BLOCK_BYTES} at a time
 * into a buffer of the calling thread that stays in L1, and streams each block out with
 * non-temporal stores ({@code libjccl-streamstores.so}, {@code src/main/c/stream_stores.c}).
 * float16 and bfloat16 in {@link HalfFloatKernel}'s native code stream from its own loop instead
 * ({@link HalfFloatKernel#reduceStreaming}): there the block and its copy cost more than they save.
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
    private static final String UNAVAILABILITY_CAUSE;
    /** each thread's block buffer, allocated on its first large reduction and freed with the thread */
    private static final ThreadLocal<MemorySegment> BLOCK =
            ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(BLOCK_BYTES, 64));

    static {
        MethodHandle copy = null;
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
            }
        } catch (Throwable e) { // no library for this platform, no native access granted, no linker
            cause = LIBRARY + " could not be loaded: " + e;
        }
        STREAM_COPY = cause == null ? copy : null;
        UNAVAILABILITY_CAUSE = cause;
    }

    private final ReductionKernel inner;
    private final long minBytes;

    /**
     * @param inner    the kernel that computes every block, and does every call this one does not stream
     * @param minBytes destination bytes from which a reduction streams its stores (at least {@link #BLOCK_BYTES})
     * @throws IllegalStateException if streaming stores are not available ({@link #unavailabilityCause()})
     */
    StreamingStoreKernel(ReductionKernel inner, long minBytes) {
        if (UNAVAILABILITY_CAUSE != null) {
            throw new IllegalStateException(UNAVAILABILITY_CAUSE);
        }
        if (minBytes < BLOCK_BYTES) {
            throw new IllegalArgumentException("streaming stores from " + minBytes + " bytes: at least "
                    + BLOCK_BYTES + " (one block)");
        }
        this.inner = Objects.requireNonNull(inner, "inner");
        this.minBytes = minBytes;
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
        if (inner instanceof HalfFloatKernel half && half.reduceStreaming(type, op, a, aOffset, b, bOffset, dst,
                dstOffset, count)) {
            return; // float16, bfloat16: streamed by the native kernel's own loop
        }
        if (dst.isReadOnly()) {
            throw new IllegalArgumentException("reduction into a read-only segment");
        }
        // all bounds before the first block is written: a bad call writes nothing
        Objects.checkFromIndexSize(aOffset, bytes, a.byteSize());
        Objects.checkFromIndexSize(bOffset, bytes, b.byteSize());
        Objects.checkFromIndexSize(dstOffset, bytes, dst.byteSize());
        MemorySegment block = BLOCK.get();
        long perBlock = BLOCK_BYTES / type.size();
        for (long done = 0; done < count; done += perBlock) {
            long n = Math.min(perBlock, count - done);
            long offset = done * type.size();
            inner.reduce(type, op, a, aOffset + offset, b, bOffset + offset, block, 0, n);
            streamCopy(block, dst, dstOffset + offset, n * type.size());
        }
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
