package io.jccl.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.ADDRESS;

/**
 * Ordered asynchronous copies on one non-blocking stream of a GPU, with a fixed set of reusable
 * markers (events) that say when the copies queued before them are done. Made once; queuing a copy,
 * setting a marker and asking a marker allocate nothing, so a transport that stages device memory
 * through pinned host memory can use it on its data path. Every call runs in the GPU's primary
 * context (pushed and popped around it), where the CUDA runtime, and so NCCL and PyTorch, allocate.
 *
 * <p>One thread at a time: the transport's caller, as NCCL's proxy thread is.
 */
public final class CopyQueue implements AutoCloseable {
    private final CudaDevice device;
    private final MemorySegment context;
    private final MemorySegment stream;
    private final MemorySegment[] markers;
    private final Arena arena = Arena.ofShared();
    /** Where cuCtxPopCurrent writes the popped context. */
    private final MemorySegment popped = arena.allocate(ADDRESS);
    private boolean closed;

    private CopyQueue(CudaDevice device, MemorySegment stream, MemorySegment[] markers) {
        this.device = device;
        this.context = device.primaryContext();
        this.stream = stream;
        this.markers = markers;
    }

    /**
     * @param markers how many markers, at least 1
     * @return a queue on a new non-blocking stream of {@code device} (it never waits for the legacy
     *         default stream, so for no kernel of the application)
     */
    public static CopyQueue create(CudaDevice device, int markers) {
        if (markers < 1) {
            throw new IllegalArgumentException(markers + " markers");
        }
        MemorySegment[] events = new MemorySegment[markers];
        MemorySegment[] s = new MemorySegment[1];
        try (Arena scratch = Arena.ofConfined()) {
            MemorySegment out = scratch.allocate(ADDRESS);
            device.run("cuStreamCreate", () -> (int) CudaDriver.STREAM_CREATE.invokeExact(out,
                    CudaDriver.STREAM_NON_BLOCKING));
            s[0] = out.get(ADDRESS, 0);
            for (int i = 0; i < markers; i++) {
                device.run("cuEventCreate", () -> (int) CudaDriver.EVENT_CREATE.invokeExact(out,
                        CudaDriver.EVENT_DISABLE_TIMING));
                events[i] = out.get(ADDRESS, 0);
            }
        }
        return new CopyQueue(device, s[0], events);
    }

    /** @return the GPU */
    public CudaDevice device() {
        return device;
    }

    /** @return how many markers it has */
    public int markers() {
        return markers.length;
    }

    /**
     * Queues a copy of {@code bytes} from address {@code src} to {@code dst}, device or pinned host
     * memory on either side.
     *
     * @throws CudaException if the driver refuses it
     */
    public void copyAsync(long dst, long src, long bytes) {
        ensureOpen();
        if (bytes <= 0) {
            return;
        }
        push();
        int r;
        try {
            r = (int) CudaDriver.MEMCPY_ASYNC.invokeExact(dst, src, bytes, stream);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        } finally {
            pop();
        }
        if (r != CudaDriver.CUDA_SUCCESS) {
            throw CudaDriver.failure("cuMemcpyAsync(" + bytes + " bytes)", r);
        }
    }

    /** Sets marker {@code m} after every copy queued so far. */
    public void mark(int m) {
        ensureOpen();
        push();
        int r;
        try {
            r = (int) CudaDriver.EVENT_RECORD.invokeExact(markers[m], stream);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        } finally {
            pop();
        }
        if (r != CudaDriver.CUDA_SUCCESS) {
            throw CudaDriver.failure("cuEventRecord", r);
        }
    }

    /**
     * @return whether the copies queued before marker {@code m} was last set are done (never waits);
     *         true for a marker never set
     * @throws CudaException if one of them failed
     */
    public boolean isDone(int m) {
        ensureOpen();
        int r;
        try {
            // an event query needs no current context
            r = (int) CudaDriver.EVENT_QUERY.invokeExact(markers[m]);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
        if (r == CudaDriver.CUDA_ERROR_NOT_READY) {
            return false;
        }
        if (r != CudaDriver.CUDA_SUCCESS) {
            throw CudaDriver.failure("cuEventQuery", r);
        }
        return true;
    }

    private void push() {
        int r;
        try {
            r = (int) CudaDriver.CTX_PUSH_CURRENT.invokeExact(context);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
        if (r != CudaDriver.CUDA_SUCCESS) {
            throw CudaDriver.failure("cuCtxPushCurrent", r);
        }
    }

    private void pop() {
        try {
            int r = (int) CudaDriver.CTX_POP_CURRENT.invokeExact(popped);
            if (r != CudaDriver.CUDA_SUCCESS) {
                throw CudaDriver.failure("cuCtxPopCurrent", r);
            }
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("copy queue of GPU " + device.ordinal() + " used after close");
        }
    }

    /** Waits for the queued copies, then destroys the stream and the markers. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            device.run("cuStreamSynchronize", () -> (int) CudaDriver.STREAM_SYNCHRONIZE.invokeExact(stream));
        } finally {
            for (MemorySegment e : markers) {
                device.run("cuEventDestroy", () -> (int) CudaDriver.EVENT_DESTROY.invokeExact(e));
            }
            device.run("cuStreamDestroy", () -> (int) CudaDriver.STREAM_DESTROY.invokeExact(stream));
            arena.close();
        }
    }
}
