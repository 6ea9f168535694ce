package io.jccl.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.ADDRESS;

/**
 * A CUDA stream of one GPU: work queued on it runs in order, apart from the calling thread.
 * {@link #copyAsync} returns once the copy is queued; {@link #record()} gives an event to wait on,
 * {@link #synchronize()} waits for everything queued so far.
 */
public final class CudaStream implements AutoCloseable {
    private final CudaDevice device;
    private final MemorySegment handle;
    /** Created here (destroyed by close), or another library's (left alone). */
    private final boolean owned;
    private volatile boolean closed;

    CudaStream(CudaDevice device, MemorySegment handle) {
        this(device, handle, true);
    }

    private CudaStream(CudaDevice device, MemorySegment handle, boolean owned) {
        this.device = device;
        this.handle = handle;
        this.owned = owned;
    }

    /**
     * Wraps a stream another library created on {@code device}'s primary context (PyTorch's
     * {@code torch.cuda.current_stream().cuda_stream}, CuPy's {@code Stream.ptr}), or 0 for the
     * legacy default stream. {@link #close()} leaves it to its owner.
     */
    public static CudaStream wrap(CudaDevice device, long streamHandle) {
        return new CudaStream(device, MemorySegment.ofAddress(streamHandle), false);
    }

    /** @return the {@code CUstream} (also a {@code cudaStream_t}), for kernels and other libraries */
    public MemorySegment handle() {
        return handle;
    }

    /** @return the GPU it belongs to */
    public CudaDevice device() {
        return device;
    }

    /**
     * Queues a copy of {@code src} into {@code dst}, any kinds of memory (pageable host memory makes
     * the call wait for the copy).
     */
    public void copyAsync(MemorySegment dst, MemorySegment src) {
        ensureOpen();
        if (dst.byteSize() != src.byteSize()) {
            throw new IllegalArgumentException("copy of " + src.byteSize() + " bytes into " + dst.byteSize());
        }
        if (src.byteSize() > 0) {
            device.run("cuMemcpyAsync", () -> (int) CudaDriver.MEMCPY_ASYNC.invokeExact(dst.address(), src.address(),
                    src.byteSize(), handle));
        }
    }

    /** Queues setting every byte of device or pinned memory to {@code value}. */
    public void fillAsync(MemorySegment memory, byte value) {
        ensureOpen();
        device.run("cuMemsetD8Async", () -> (int) CudaDriver.MEMSET_D8_ASYNC.invokeExact(memory.address(), value,
                memory.byteSize(), handle));
    }

    /**
     * Queues a write of {@code value} into a 32-bit word of pinned host memory, ordered after the
     * work queued before it: how the GPU tells a host thread that the stream got this far.
     */
    public void writeValueAsync(MemorySegment word, int value) {
        ensureOpen();
        checkWord(word);
        device.run("cuStreamWriteValue32", () -> (int) CudaDriver.STREAM_WRITE_VALUE32.invokeExact(handle,
                word.address(), value, CudaDriver.STREAM_WRITE_VALUE_DEFAULT));
    }

    /**
     * Queues a wait until the 32-bit word of pinned host memory {@code word} reaches {@code value}
     * (cyclically: {@code (int) (word - value) >= 0}); work queued after it starts only then. How a
     * host thread holds the stream until its part is done.
     */
    public void waitValueAsync(MemorySegment word, int value) {
        ensureOpen();
        checkWord(word);
        device.run("cuStreamWaitValue32", () -> (int) CudaDriver.STREAM_WAIT_VALUE32.invokeExact(handle,
                word.address(), value, CudaDriver.STREAM_WAIT_VALUE_GEQ));
    }

    private static void checkWord(MemorySegment word) {
        if (word.byteSize() < 4 || (word.address() & 3) != 0) {
            throw new IllegalArgumentException("a stream memory operation needs an aligned 4-byte word, got "
                    + word.byteSize() + " bytes at 0x" + Long.toHexString(word.address()));
        }
    }

    /** @return an event recorded after everything queued so far */
    public CudaEvent record() {
        ensureOpen();
        MemorySegment[] event = new MemorySegment[1];
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            device.run("cuEventCreate", () -> (int) CudaDriver.EVENT_CREATE.invokeExact(out,
                    CudaDriver.EVENT_DISABLE_TIMING));
            event[0] = out.get(ADDRESS, 0);
        }
        CudaEvent e = new CudaEvent(device, event[0]);
        try {
            device.run("cuEventRecord", () -> (int) CudaDriver.EVENT_RECORD.invokeExact(event[0], handle));
        } catch (RuntimeException ex) {
            e.close();
            throw ex;
        }
        return e;
    }

    /** @return whether everything queued so far is done (never waits) */
    public boolean isIdle() {
        ensureOpen();
        boolean[] idle = new boolean[1];
        device.run("cuStreamQuery", () -> {
            int r = (int) CudaDriver.STREAM_QUERY.invokeExact(handle);
            idle[0] = r == CudaDriver.CUDA_SUCCESS;
            return r == CudaDriver.CUDA_ERROR_NOT_READY ? CudaDriver.CUDA_SUCCESS : r;
        });
        return idle[0];
    }

    /** Waits until everything queued so far is done; a failure of queued work is thrown here. */
    public void synchronize() {
        ensureOpen();
        device.run("cuStreamSynchronize", () -> (int) CudaDriver.STREAM_SYNCHRONIZE.invokeExact(handle));
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("stream of GPU " + device.ordinal() + " used after close");
        }
    }

    /**
     * Destroys the stream once its queued work is done (CUDA lets that work finish); a wrapped
     * stream is only marked closed here. Idempotent.
     */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            if (!owned) {
                return;
            }
            device.run("cuStreamDestroy", () -> (int) CudaDriver.STREAM_DESTROY.invokeExact(handle));
        }
    }
}
