package io.jccl.net.socket;

import io.jccl.cuda.CopyQueue;
import io.jccl.cuda.Cuda;
import io.jccl.cuda.CudaDevice;
import io.jccl.cuda.DeviceBuffer;
import io.jccl.spi.NetException;
import io.jccl.spi.NetResult;

import java.lang.foreign.MemorySegment;

/**
 * CUDA device memory on JcclSocket (ptrSupport CUDA). A socket cannot read GPU memory, so every
 * device registration gets a pinned host mirror of its size ({@link MemoryRegion#mirror}) and the
 * comm copies between the two on a {@link CopyQueue} of its own: the GPU's copy engines, apart from
 * the application's streams. A send copies its bytes to the mirror first and goes on the wire when
 * that copy is done; a receive lands in the mirror and completes when its copy to the GPU is done.
 *
 * <p>What it buys under NCCL: with a transport that takes device pointers, NCCL keeps its network
 * buffers in GPU memory (GPUDirect), so its kernels copy within the GPU and the copy engines cross
 * the bus in large blocks, instead of the kernels reading and writing host memory over PCIe.
 */
final class DeviceStaging implements AutoCloseable {
    private final CopyQueue queue;
    /** The marker of {@link #copyNow}, after the markers of the comm's requests. */
    private final int syncMarker;

    private DeviceStaging(CopyQueue queue) {
        this.queue = queue;
        this.syncMarker = queue.markers() - 1;
    }

    /**
     * @param enabled {@link SocketConfig#JCCL_SOCKET_CUDA}
     * @return null when JcclSocket takes CUDA device memory, else why not (for the log)
     */
    static String unavailability(boolean enabled) {
        if (!enabled) {
            return SocketConfig.JCCL_SOCKET_CUDA + "=0";
        }
        if (!Cuda.class.getModule().isNativeAccessEnabled()) {
            // Probing the driver would print the JVM's restricted-method warning in every program
            // that only wants TCP: device memory is for runs that enable native access.
            return "native access is not enabled for the CUDA binding (--enable-native-access="
                    + (Cuda.class.getModule().isNamed() ? Cuda.class.getModule().getName() : "ALL-UNNAMED") + ")";
        }
        if (!Cuda.isAvailable()) {
            return "no CUDA driver (" + Cuda.unavailabilityCause().getMessage() + ")";
        }
        return null;
    }

    /**
     * @param requests markers for the comm's requests, one per request slot
     * @return staging for device memory of {@code gpu}
     */
    static DeviceStaging create(CudaDevice gpu, int requests) throws NetException {
        try {
            return new DeviceStaging(CopyQueue.create(gpu, requests + 1));
        } catch (RuntimeException e) {
            throw cudaError("cannot create a copy stream on " + gpu, e);
        }
    }

    /**
     * @return the GPU of the device memory {@code data}
     * @throws NetException {@code ncclInvalidArgument} if it is not CUDA device memory
     */
    static CudaDevice gpuOf(MemorySegment data) throws NetException {
        try {
            return Cuda.deviceOf(data.address());
        } catch (IllegalArgumentException e) {
            throw NetException.invalidArgument("registration of type CUDA: " + e.getMessage());
        } catch (RuntimeException e) {
            throw cudaError("cannot tell where 0x" + Long.toHexString(data.address()) + " lives", e);
        }
    }

    /** @return pinned host memory of {@code bytes} to mirror a device registration */
    static DeviceBuffer mirror(CudaDevice gpu, long bytes) throws NetException {
        try {
            return gpu.allocatePinnedHost(Math.max(1, bytes));
        } catch (RuntimeException e) {
            throw cudaError("cannot allocate a " + bytes + "-byte pinned host mirror for device memory", e);
        }
    }

    CudaDevice gpu() {
        return queue.device();
    }

    /** Queues the copy of {@code [offset, offset + bytes)} of a device region to its mirror. */
    void toHost(MemoryRegion r, long offset, long bytes) throws NetException {
        try {
            queue.copyAsync(r.memory.address() + offset, r.base + offset, bytes);
        } catch (RuntimeException e) {
            throw cudaError("copy of " + bytes + " bytes from the GPU failed", e);
        }
    }

    /** Queues the copy of {@code [offset, offset + bytes)} of a device region's mirror to the GPU. */
    void toDevice(MemoryRegion r, long offset, long bytes) throws NetException {
        try {
            queue.copyAsync(r.base + offset, r.memory.address() + offset, bytes);
        } catch (RuntimeException e) {
            throw cudaError("copy of " + bytes + " bytes to the GPU failed", e);
        }
    }

    /** Sets marker {@code m} after the copies queued so far. */
    void mark(int m) throws NetException {
        try {
            queue.mark(m);
        } catch (RuntimeException e) {
            throw cudaError("cuEventRecord failed", e);
        }
    }

    /** @return whether the copies before marker {@code m} are done */
    boolean isDone(int m) throws NetException {
        try {
            return queue.isDone(m);
        } catch (RuntimeException e) {
            throw cudaError("a copy between the GPU and its host mirror failed", e);
        }
    }

    /** Copies a device region's range to its mirror and returns when it is there (small messages). */
    void copyToHostNow(MemoryRegion r, long offset, long bytes) throws NetException {
        toHost(r, offset, bytes);
        mark(syncMarker);
        while (!isDone(syncMarker)) {
            Thread.onSpinWait();
        }
    }

    private static NetException cudaError(String what, RuntimeException e) {
        return new NetException(NetResult.UNHANDLED_CUDA_ERROR, "JcclSocket: " + what + ": " + e.getMessage(), e);
    }

    /** Waits for the queued copies and releases the stream. */
    @Override
    public void close() {
        queue.close();
    }
}
