package io.jccl.cuda;

import java.lang.foreign.MemorySegment;

/**
 * A point in a {@link CudaStream}: done once everything queued before it is. What a collective
 * enqueued on a stream hands back, like the {@code cudaEvent_t} a caller records after an NCCL call.
 */
public final class CudaEvent implements AutoCloseable {
    private final CudaDevice device;
    private final MemorySegment handle;
    private boolean closed;

    CudaEvent(CudaDevice device, MemorySegment handle) {
        this.device = device;
        this.handle = handle;
    }

    /** @return the {@code CUevent} */
    public MemorySegment handle() {
        return handle;
    }

    /** @return whether the work before it is done (never waits) */
    public boolean isDone() {
        ensureOpen();
        boolean[] done = new boolean[1];
        device.run("cuEventQuery", () -> {
            int r = (int) CudaDriver.EVENT_QUERY.invokeExact(handle);
            done[0] = r == CudaDriver.CUDA_SUCCESS;
            return r == CudaDriver.CUDA_ERROR_NOT_READY ? CudaDriver.CUDA_SUCCESS : r;
        });
        return done[0];
    }

    /** Waits until the work before it is done. */
    public void synchronize() {
        ensureOpen();
        device.run("cuEventSynchronize", () -> (int) CudaDriver.EVENT_SYNCHRONIZE.invokeExact(handle));
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("CUDA event used after close");
        }
    }

    /** Idempotent. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            device.run("cuEventDestroy", () -> (int) CudaDriver.EVENT_DESTROY.invokeExact(handle));
        }
    }
}
