package io.jccl.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Memory JCCL allocated with CUDA: device memory of one GPU, or pinned host memory. Its segment is
 * valid until {@link #close()}, which frees the memory; a device segment must never be read or
 * written by the JVM, only passed to CUDA, kernels and transports.
 */
public final class DeviceBuffer implements AutoCloseable {
    private final CudaDevice device;
    private final boolean pinnedHost;
    /** Another process's device memory mapped here through CUDA IPC: closing unmaps, never frees. */
    private final boolean ipcMapping;
    private final Arena arena;
    private final MemorySegment segment;

    private DeviceBuffer(CudaDevice device, boolean pinnedHost, boolean ipcMapping, Arena arena, MemorySegment segment) {
        this.device = device;
        this.pinnedHost = pinnedHost;
        this.ipcMapping = ipcMapping;
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
        return wrap(device, pinnedHost, false, address, bytes);
    }

    @SuppressWarnings("restricted") // the address and size come from the driver
    private static DeviceBuffer wrap(CudaDevice device, boolean pinnedHost, boolean ipcMapping, long address, long bytes) {
        Cuda.forgetKnownKinds();
        // The segment belongs to a shared arena: closing the buffer invalidates it everywhere, so a
        // use after free is an exception, not a fault.
        Arena arena = Arena.ofShared();
        MemorySegment segment = MemorySegment.ofAddress(address).reinterpret(bytes, arena, null);
        return new DeviceBuffer(device, pinnedHost, ipcMapping, arena, segment);
    }

    /**
     * Maps device memory another process exported with {@link #ipcHandle()} into {@code device}'s
     * context (CUDA IPC; peer access to the exporting GPU is enabled by the mapping).
     */
    static DeviceBuffer openIpc(CudaDevice device, byte[] handle, long bytes) {
        if (handle.length != CudaDriver.IPC_HANDLE_BYTES) {
            throw new IllegalArgumentException("a CUDA IPC handle has " + CudaDriver.IPC_HANDLE_BYTES + " bytes, not "
                    + handle.length);
        }
        long address;
        try (Arena scratch = Arena.ofConfined()) {
            MemorySegment out = scratch.allocate(JAVA_LONG);
            MemorySegment h = scratch.allocate(CudaDriver.IPC_HANDLE);
            MemorySegment.copy(handle, 0, h, JAVA_BYTE, 0, handle.length);
            device.run("cuIpcOpenMemHandle on GPU " + device.ordinal(), () -> (int) CudaDriver.IPC_OPEN_MEM_HANDLE
                    .invokeExact(out, h, CudaDriver.IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
            address = out.get(JAVA_LONG, 0);
        }
        return wrap(device, false, true, address, bytes);
    }

    /**
     * @return the CUDA IPC handle of this device memory (64 bytes), which another process of this
     *         host opens with {@link CudaDevice#openIpc}; the memory stays this process's to free
     */
    public byte[] ipcHandle() {
        if (pinnedHost || ipcMapping) {
            throw new IllegalStateException("only device memory allocated by this process is exported: " + this);
        }
        try (Arena scratch = Arena.ofConfined()) {
            MemorySegment h = scratch.allocate(CudaDriver.IPC_HANDLE);
            long address = segment.address();
            device.run("cuIpcGetMemHandle", () -> (int) CudaDriver.IPC_GET_MEM_HANDLE.invokeExact(h, address));
            return h.toArray(JAVA_BYTE);
        }
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
        if (ipcMapping) {
            device.run("cuIpcCloseMemHandle", () -> (int) CudaDriver.IPC_CLOSE_MEM_HANDLE.invokeExact(address));
        } else if (pinnedHost) {
            device.run("cuMemFreeHost", () -> (int) CudaDriver.MEM_FREE_HOST.invokeExact(MemorySegment.ofAddress(address)));
        } else {
            device.run("cuMemFree", () -> (int) CudaDriver.MEM_FREE.invokeExact(address));
        }
        Cuda.forgetKnownKinds();
    }

    @Override
    public String toString() {
        return (pinnedHost ? "pinned host" : ipcMapping ? "IPC-mapped device" : "device") + " buffer of " + segment.byteSize() + " bytes at 0x"
                + Long.toHexString(segment.address()) + " (GPU " + device.ordinal() + ")";
    }
}
