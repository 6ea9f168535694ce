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
    private boolean closed;

    CudaStream(CudaDevice device, MemorySegment handle) {
        this.device = device;
        this.handle = handle;
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

    /** Destroys the stream once its queued work is done (CUDA lets that work finish). Idempotent. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            device.run("cuStreamDestroy", () -> (int) CudaDriver.STREAM_DESTROY.invokeExact(handle));
        }
    }
}
