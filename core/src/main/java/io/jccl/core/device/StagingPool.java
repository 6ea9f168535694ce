package io.jccl.core.device;

import io.jccl.cuda.CudaDevice;
import io.jccl.cuda.DeviceBuffer;

import java.util.ArrayDeque;

/**
 * Pinned host buffers for staging, by power-of-two size class and reused: pinning memory takes
 * milliseconds, far longer than a small collective. Used under the bridge's lock.
 */
final class StagingPool implements AutoCloseable {
    private static final int MIN_CLASS = 12; // 4 KiB
    private static final int CLASSES = 64;

    private final CudaDevice device;
    @SuppressWarnings("unchecked")
    private final ArrayDeque<DeviceBuffer>[] free = new ArrayDeque[CLASSES];
    private long pinnedBytes;

    StagingPool(CudaDevice device) {
        this.device = device;
        for (int c = 0; c < CLASSES; c++) {
            free[c] = new ArrayDeque<>();
        }
    }

    /** @return a pinned buffer of at least {@code bytes} bytes */
    DeviceBuffer acquire(long bytes) {
        int c = sizeClass(bytes);
        DeviceBuffer b = free[c].pollFirst();
        if (b == null) {
            b = device.allocatePinnedHost(1L << c);
            pinnedBytes += 1L << c;
        }
        return b;
    }

    void release(DeviceBuffer b) {
        free[sizeClass(b.segment().byteSize())].addFirst(b);
    }

    /** @return the pinned host memory this pool holds, in use or free */
    long pinnedBytes() {
        return pinnedBytes;
    }

    static int sizeClass(long bytes) {
        return Math.max(MIN_CLASS, 64 - Long.numberOfLeadingZeros(Math.max(1, bytes) - 1));
    }

    /** Frees the buffers not in use. */
    @Override
    public void close() {
        for (ArrayDeque<DeviceBuffer> q : free) {
            DeviceBuffer b;
            while ((b = q.pollFirst()) != null) {
                pinnedBytes -= b.segment().byteSize();
                b.close();
            }
        }
    }
}
