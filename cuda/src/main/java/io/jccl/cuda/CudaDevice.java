package io.jccl.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * One GPU: what it is, and device memory, pinned host memory and streams on it. Everything runs in
 * the GPU's primary context, retained on first use and kept for the life of the process (as the
 * CUDA runtime keeps it), pushed around each call so that the calling thread's own context stays.
 */
public final class CudaDevice {
    /** A driver call made with this GPU's primary context current; returns its {@code CUresult}. */
    @FunctionalInterface
    interface DriverCall {
        int call() throws Throwable;
    }

    private final int ordinal;
    private final int handle;
    private final String name;
    private final long totalMemory;
    private final int computeMajor;
    private final int computeMinor;
    private final String pciBusId;
    private MemorySegment primaryContext; // guarded by this

    CudaDevice(int ordinal) {
        this.ordinal = ordinal;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment i = arena.allocate(JAVA_INT);
            CudaDriver.check("cuDeviceGet(" + ordinal + ")", (int) CudaDriver.DEVICE_GET.invokeExact(i, ordinal));
            this.handle = i.get(JAVA_INT, 0);
            MemorySegment chars = arena.allocate(256);
            CudaDriver.check("cuDeviceGetName", (int) CudaDriver.DEVICE_GET_NAME.invokeExact(chars, 256, handle));
            this.name = chars.getString(0);
            MemorySegment bytes = arena.allocate(JAVA_LONG);
            CudaDriver.check("cuDeviceTotalMem", (int) CudaDriver.DEVICE_TOTAL_MEM.invokeExact(bytes, handle));
            this.totalMemory = bytes.get(JAVA_LONG, 0);
            this.computeMajor = attribute(i, CudaDriver.ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
            this.computeMinor = attribute(i, CudaDriver.ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
            this.pciBusId = String.format("%04x:%02x:%02x.0", attribute(i, CudaDriver.ATTRIBUTE_PCI_DOMAIN_ID),
                    attribute(i, CudaDriver.ATTRIBUTE_PCI_BUS_ID), attribute(i, CudaDriver.ATTRIBUTE_PCI_DEVICE_ID));
            if (attribute(i, CudaDriver.ATTRIBUTE_UNIFIED_ADDRESSING) == 0) {
                throw new UnsupportedOperationException("GPU " + ordinal + " (" + name + ") has no unified addressing, "
                        + "which JCCL needs to tell device from host pointers");
            }
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    private int attribute(MemorySegment out, int attribute) throws Throwable {
        CudaDriver.check("cuDeviceGetAttribute(" + attribute + ")",
                (int) CudaDriver.DEVICE_GET_ATTRIBUTE.invokeExact(out, attribute, handle));
        return out.get(JAVA_INT, 0);
    }

    /** @return the ordinal in the driver's order */
    public int ordinal() {
        return ordinal;
    }

    /** @return the product name, e.g. {@code NVIDIA H100 80GB HBM3} */
    public String name() {
        return name;
    }

    /** @return the device memory in bytes */
    public long totalMemory() {
        return totalMemory;
    }

    /** @return the compute capability, e.g. {@code 9.0} */
    public String computeCapability() {
        return computeMajor + "." + computeMinor;
    }

    /** @return the PCI address, e.g. {@code 0000:3b:00.0}, as NCCL's topology names GPUs */
    public String pciBusId() {
        return pciBusId;
    }

    /**
     * @param bytes how much device memory, at least 1
     * @return it, uninitialised; close it to free it (its segment is then no longer usable)
     */
    public DeviceBuffer allocate(long bytes) {
        return DeviceBuffer.allocate(this, bytes, false);
    }

    /**
     * @param bytes how much page-locked host memory, at least 1
     * @return it: the CPU reads and writes its segment, every GPU reaches it, copies to and from it
     *         run at the bus's speed; close it to free it
     */
    public DeviceBuffer allocatePinnedHost(long bytes) {
        return DeviceBuffer.allocate(this, bytes, true);
    }

    /**
     * Maps another process's device memory, exported with {@link DeviceBuffer#ipcHandle()}, into this
     * GPU's context. Closing the result unmaps it; the exporting process frees the memory.
     *
     * @param handle the exporter's 64-byte handle
     * @param bytes  how much of it to map
     */
    public DeviceBuffer openIpc(byte[] handle, long bytes) {
        return DeviceBuffer.openIpc(this, handle, bytes);
    }

    /** @return whether kernels on this GPU can read and write {@code peer}'s memory (NVLink or PCIe P2P) */
    public boolean canAccessPeer(CudaDevice peer) {
        if (peer.handle == handle) {
            return true;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_INT);
            CudaDriver.check("cuDeviceCanAccessPeer", (int) CudaDriver.DEVICE_CAN_ACCESS_PEER.invokeExact(out, handle,
                    peer.handle));
            return out.get(JAVA_INT, 0) != 0;
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    /**
     * Lets kernels of this GPU's primary context reach memory {@code peer} allocated in this process
     * ({@code cuCtxEnablePeerAccess}); enabling it twice is not an error.
     */
    public void enablePeerAccess(CudaDevice peer) {
        if (peer.handle == handle) {
            return;
        }
        MemorySegment peerContext = peer.primaryContext();
        run("cuCtxEnablePeerAccess(GPU " + ordinal + " -> GPU " + peer.ordinal + ")", () -> {
            int r = (int) CudaDriver.CTX_ENABLE_PEER_ACCESS.invokeExact(peerContext, 0);
            return r == CudaDriver.CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED ? CudaDriver.CUDA_SUCCESS : r;
        });
    }

    /** @return a new non-blocking stream on this GPU (it does not wait for the legacy default stream) */
    public CudaStream createStream() {
        MemorySegment[] stream = new MemorySegment[1];
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            run("cuStreamCreate", () -> (int) CudaDriver.STREAM_CREATE.invokeExact(out, CudaDriver.STREAM_NON_BLOCKING));
            stream[0] = out.get(ADDRESS, 0);
        }
        return new CudaStream(this, stream[0]);
    }

    /**
     * Sets {@code bytes} of device or pinned memory to {@code value} and returns when done.
     */
    public void fill(MemorySegment memory, byte value) {
        run("cuMemsetD8", () -> (int) CudaDriver.MEMSET_D8.invokeExact(memory.address(), value, memory.byteSize()));
    }

    /**
     * Runs a driver call with this GPU's primary context current on the calling thread, and
     * restores the thread's previous context after.
     */
    void run(String what, DriverCall call) {
        MemorySegment context = primaryContext();
        try (Arena arena = Arena.ofConfined()) {
            CudaDriver.check("cuCtxPushCurrent", (int) CudaDriver.CTX_PUSH_CURRENT.invokeExact(context));
            try {
                CudaDriver.check(what, call.call());
            } finally {
                MemorySegment popped = arena.allocate(ADDRESS);
                CudaDriver.check("cuCtxPopCurrent", (int) CudaDriver.CTX_POP_CURRENT.invokeExact(popped));
            }
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    synchronized MemorySegment primaryContext() {
        if (primaryContext == null) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment out = arena.allocate(ADDRESS);
                CudaDriver.check("cuDevicePrimaryCtxRetain(GPU " + ordinal + ")",
                        (int) CudaDriver.PRIMARY_CTX_RETAIN.invokeExact(out, handle));
                primaryContext = out.get(ADDRESS, 0);
            } catch (Throwable t) {
                throw CudaDriver.rethrow(t);
            }
        }
        return primaryContext;
    }

    @Override
    public String toString() {
        return "GPU " + ordinal + " (" + name + ", " + pciBusId + ", compute " + computeCapability() + ", "
                + (totalMemory >> 20) + " MiB)";
    }
}
