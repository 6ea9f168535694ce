package io.jccl.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Memory JCCL allocated with CUDA: device memory of one GPU, or pinned host memory. Its segment is
 * valid until {@link #close()}, which frees the memory; a device segment must never be read or
 * written by the JVM, only passed to CUDA, kernels and transports.
 */
public final class DeviceBuffer implements AutoCloseable {
    private final CudaDevice device;
    private final boolean pinnedHost;
    private final Arena arena;
    private final MemorySegment segment;

    private DeviceBuffer(CudaDevice device, boolean pinnedHost, Arena arena, MemorySegment segment) {
        this.device = device;
        this.pinnedHost = pinnedHost;
        this.arena = arena;
        this.segment = segment;
    }

    @SuppressWarnings("restricted") // the address and size come from the driver's allocation
    static DeviceBuffer allocate(CudaDevice device, long bytes, boolean pinnedHost) {
        if (bytes < 1) {
            throw new IllegalArgumentException("allocation of " + bytes + " bytes");
        }
        long address;
        try (Arena scratch = Arena.ofConfined()) {
            MemorySegment out = scratch.allocate(JAVA_LONG);
            if (pinnedHost) {
                device.run("cuMemAllocHost(" + bytes + " bytes)",
                        () -> (int) CudaDriver.MEM_ALLOC_HOST.invokeExact(out, bytes));
            } else {
                device.run("cuMemAlloc(" + bytes + " bytes on GPU " + device.ordinal() + ")",
                        () -> (int) CudaDriver.MEM_ALLOC.invokeExact(out, bytes));
            }
            address = out.get(JAVA_LONG, 0);
        }
        Cuda.forgetKnownKinds();
        // The segment belongs to a shared arena: closing the buffer invalidates it everywhere, so a
        // use after free is an exception, not a fault.
        Arena arena = Arena.ofShared();
        MemorySegment segment = MemorySegment.ofAddress(address).reinterpret(bytes, arena, null);
        return new DeviceBuffer(device, pinnedHost, arena, segment);
    }

    /** @return the memory: its address is the device (or pinned host) pointer */
    public MemorySegment segment() {
        return segment;
    }

    /** @return the GPU it was allocated on */
    public CudaDevice device() {
        return device;
    }

    /** @return whether this is pinned host memory rather than device memory */
    public boolean isPinnedHost() {
        return pinnedHost;
    }

    /** Frees the memory. The caller makes sure no stream still uses it. Idempotent. */
    @Override
    public void close() {
        if (!arena.scope().isAlive()) {
            return;
        }
        long address = segment.address();
        arena.close();
        if (pinnedHost) {
            device.run("cuMemFreeHost", () -> (int) CudaDriver.MEM_FREE_HOST.invokeExact(MemorySegment.ofAddress(address)));
        } else {
            device.run("cuMemFree", () -> (int) CudaDriver.MEM_FREE.invokeExact(address));
        }
        Cuda.forgetKnownKinds();
    }

    @Override
    public String toString() {
        return (pinnedHost ? "pinned host" : "device") + " buffer of " + segment.byteSize() + " bytes at 0x"
                + Long.toHexString(segment.address()) + " (GPU " + device.ordinal() + ")";
    }
}
