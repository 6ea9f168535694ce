package io.jccl.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static io.jccl.cuda.CudaDriver.CUDA_ERROR_INVALID_VALUE;
import static io.jccl.cuda.CudaDriver.CUDA_SUCCESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * CUDA for a JVM program: whether it is there, its GPUs, what an address is, and copies between
 * any two kinds of memory.
 *
 * <p>Availability follows Netty's pattern: the driver library is looked up and initialised
 * ({@code cuInit}) once, when this class initialises; {@link #isAvailable()} says whether a GPU can
 * be used and {@link #unavailabilityCause()} says why not (no driver, a driver that finds no
 * device). Code that needs a GPU checks it and skips with that cause; nothing here pretends.
 *
 * <p>Contexts: every call runs in the device's primary context (pushed for the call, popped after),
 * the context the CUDA runtime, PyTorch and CuPy use, so JCCL's allocations and streams are theirs
 * too and whatever context the calling thread had stays current.
 *
 * <p>Device memory is a {@link MemorySegment} whose address is the device pointer: it can be passed
 * to transports and kernels and copied with {@link #copy}, but the JVM must never read or write it
 * (that would fault the process).
 */
public final class Cuda {
    private static final Throwable UNAVAILABILITY_CAUSE;
    private static final int DEVICE_COUNT;
    private static final CudaDevice[] DEVICES;

    static {
        Throwable cause = CudaDriver.LOAD_FAILURE;
        int count = 0;
        if (cause == null) {
            try (Arena arena = Arena.ofConfined()) {
                int r = (int) CudaDriver.INIT.invokeExact(0);
                if (r != CUDA_SUCCESS) {
                    throw CudaDriver.failure("cuInit (the driver found no usable GPU)", r);
                }
                MemorySegment n = arena.allocate(JAVA_INT);
                CudaDriver.check("cuDeviceGetCount", (int) CudaDriver.DEVICE_GET_COUNT.invokeExact(n));
                count = n.get(JAVA_INT, 0);
                if (count == 0) {
                    throw new IllegalStateException("the NVIDIA driver reports no GPU");
                }
            } catch (Throwable t) {
                cause = t;
                count = 0;
            }
        }
        UNAVAILABILITY_CAUSE = cause;
        DEVICE_COUNT = count;
        DEVICES = new CudaDevice[count];
    }

    private Cuda() {
    }

    /** @return whether the CUDA driver is installed, initialised and reports at least one GPU */
    public static boolean isAvailable() {
        return UNAVAILABILITY_CAUSE == null;
    }

    /** @return why CUDA cannot be used here, or {@code null} if it can */
    public static Throwable unavailabilityCause() {
        return UNAVAILABILITY_CAUSE;
    }

    /** @throws UnsupportedOperationException naming {@link #unavailabilityCause()} if CUDA cannot be used */
    public static void ensureAvailability() {
        if (UNAVAILABILITY_CAUSE != null) {
            throw new UnsupportedOperationException("CUDA cannot be used: " + UNAVAILABILITY_CAUSE.getMessage(),
                    UNAVAILABILITY_CAUSE);
        }
    }

    /** @return the soname of the driver library that was loaded, e.g. {@code libcuda.so.1}; {@code null} if none */
    public static String library() {
        return CudaDriver.LIBRARY;
    }

    /** @return the CUDA version the driver supports, as {@code 1000 * major + 10 * minor} (13000 for 13.0) */
    public static int driverVersion() {
        ensureAvailability();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment v = arena.allocate(JAVA_INT);
            CudaDriver.check("cuDriverGetVersion", (int) CudaDriver.DRIVER_GET_VERSION.invokeExact(v));
            return v.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    /** @return the number of GPUs the driver reports (0 if CUDA is unavailable) */
    public static int deviceCount() {
        return DEVICE_COUNT;
    }

    /**
     * @param ordinal 0 to {@link #deviceCount()} - 1, in the driver's order ({@code CUDA_VISIBLE_DEVICES} applies)
     * @return that GPU; the same object for every call
     */
    public static CudaDevice device(int ordinal) {
        ensureAvailability();
        if (ordinal < 0 || ordinal >= DEVICE_COUNT) {
            throw new IllegalArgumentException("no GPU " + ordinal + ": the driver reports " + DEVICE_COUNT);
        }
        synchronized (DEVICES) {
            if (DEVICES[ordinal] == null) {
                DEVICES[ordinal] = new CudaDevice(ordinal);
            }
            return DEVICES[ordinal];
        }
    }

    /**
     * @param address any address: a segment's, a device pointer from another library, host memory
     * @return what it is to CUDA; {@link PointerKind#HOST} for memory CUDA does not know, and for
     *         everything when CUDA is unavailable
     */
    public static PointerKind pointerKind(long address) {
        if (!isAvailable()) {
            return PointerKind.HOST;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment v = arena.allocate(JAVA_INT);
            int r = (int) CudaDriver.POINTER_GET_ATTRIBUTE.invokeExact(v, CudaDriver.POINTER_ATTRIBUTE_MEMORY_TYPE,
                    address);
            if (r == CudaDriver.CUDA_ERROR_INVALID_CONTEXT) {
                // older drivers want a current context even for this query: GPU 0's primary one
                int[] again = new int[1];
                device(0).run("cuPointerGetAttribute(MEMORY_TYPE)", () -> {
                    again[0] = (int) CudaDriver.POINTER_GET_ATTRIBUTE.invokeExact(v,
                            CudaDriver.POINTER_ATTRIBUTE_MEMORY_TYPE, address);
                    return again[0] == CUDA_ERROR_INVALID_VALUE ? CUDA_SUCCESS : again[0];
                });
                r = again[0];
            }
            if (r == CUDA_ERROR_INVALID_VALUE) {
                return PointerKind.HOST; // never allocated or registered with CUDA
            }
            CudaDriver.check("cuPointerGetAttribute(MEMORY_TYPE)", r);
            int type = v.get(JAVA_INT, 0);
            CudaDriver.check("cuPointerGetAttribute(IS_MANAGED)", (int) CudaDriver.POINTER_GET_ATTRIBUTE.invokeExact(
                    v, CudaDriver.POINTER_ATTRIBUTE_IS_MANAGED, address));
            if (v.get(JAVA_INT, 0) != 0) {
                return PointerKind.MANAGED;
            }
            return switch (type) {
                case CudaDriver.MEMORYTYPE_DEVICE -> PointerKind.DEVICE;
                case CudaDriver.MEMORYTYPE_HOST -> PointerKind.PINNED_HOST;
                case CudaDriver.MEMORYTYPE_UNIFIED -> PointerKind.MANAGED;
                default -> throw new IllegalStateException("CUDA memory type " + type + " of 0x"
                        + Long.toHexString(address) + " is an array, not linear memory");
            };
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    /**
     * {@link #pointerKind(long)} of the segment's address. The driver's answer takes about a
     * microsecond (most of a small collective's time), so the kinds of recently classified
     * segments are kept, by address and size, and a segment seen before is answered without the
     * driver; JCCL's own allocations and frees empty that cache. Memory another library frees and
     * gets back at the same address and size as another kind (host memory where device memory was)
     * would be classified wrongly; CUDA keeps device addresses in ranges of its own, apart from
     * host allocations, which is why this does not happen in practice.
     */
    public static PointerKind pointerKind(MemorySegment segment) {
        long address = segment.address();
        long size = segment.byteSize();
        int slot = (int) ((address >>> 6) * 0x9E3779B97F4A7C15L >>> 58); // 64 slots
        KnownKind k = KNOWN.get(slot);
        if (k != null && k.address == address && k.size == size) {
            return k.kind;
        }
        PointerKind kind = pointerKind(address);
        KNOWN.set(slot, new KnownKind(address, size, kind));
        return kind;
    }

    /** A segment's kind as the driver gave it; immutable, so a slot is read whole or not at all. */
    private record KnownKind(long address, long size, PointerKind kind) {
    }

    private static final java.util.concurrent.atomic.AtomicReferenceArray<KnownKind> KNOWN =
            new java.util.concurrent.atomic.AtomicReferenceArray<>(64);

    /** JCCL allocated or freed CUDA memory: kinds learnt before may no longer hold. */
    static void forgetKnownKinds() {
        for (int i = 0; i < KNOWN.length(); i++) {
            KNOWN.set(i, null);
        }
    }

    /**
     * Wraps device memory that another library allocated (a PyTorch tensor's {@code data_ptr()}, a
     * CuPy array) as a segment, without copying or taking ownership: the caller keeps it alive.
     *
     * @param devicePointer the device address
     * @param byteSize      the bytes that belong to the buffer
     * @return a segment of {@code byteSize} bytes at {@code devicePointer}, never to be dereferenced
     * @throws IllegalArgumentException if the address is not device or managed memory
     */
    @SuppressWarnings("restricted") // the address is checked with the driver first
    public static MemorySegment wrapDevicePointer(long devicePointer, long byteSize) {
        ensureAvailability();
        if (byteSize < 0) {
            throw new IllegalArgumentException("negative size " + byteSize);
        }
        PointerKind kind = pointerKind(devicePointer);
        if (kind != PointerKind.DEVICE && kind != PointerKind.MANAGED) {
            throw new IllegalArgumentException("0x" + Long.toHexString(devicePointer) + " is " + kind
                    + " memory, not a CUDA device pointer");
        }
        return MemorySegment.ofAddress(devicePointer).reinterpret(byteSize);
    }

    /**
     * Copies {@code src} into {@code dst}, whatever memory each is in (unified addressing), and
     * returns when the copy is done.
     *
     * @throws IllegalArgumentException if the sizes differ
     */
    public static void copy(MemorySegment dst, MemorySegment src) {
        ensureAvailability();
        if (dst.byteSize() != src.byteSize()) {
            throw new IllegalArgumentException("copy of " + src.byteSize() + " bytes into " + dst.byteSize());
        }
        if (src.byteSize() == 0) {
            return;
        }
        CudaDevice device = device(deviceOf(dst, src));
        device.run("cuMemcpy", () -> {
            int r = (int) CudaDriver.MEMCPY.invokeExact(dst.address(), src.address(), src.byteSize());
            // cuMemcpy returns before a device-to-device copy is done: wait on the stream it used
            return r != CudaDriver.CUDA_SUCCESS ? r
                    : (int) CudaDriver.STREAM_SYNCHRONIZE.invokeExact(MemorySegment.NULL);
        });
    }

    /** @return the calling thread's current CUDA context ({@code NULL} if none): JCCL must leave it as it was */
    static MemorySegment currentContext() {
        ensureAvailability();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(java.lang.foreign.ValueLayout.ADDRESS);
            CudaDriver.check("cuCtxGetCurrent", (int) CudaDriver.CTX_GET_CURRENT.invokeExact(out));
            return out.get(java.lang.foreign.ValueLayout.ADDRESS, 0);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    /** The GPU whose context a copy runs in: the device side's, else GPU 0. */
    static int deviceOf(MemorySegment a, MemorySegment b) {
        for (MemorySegment s : new MemorySegment[] {a, b}) {
            PointerKind k = pointerKind(s);
            if (k == PointerKind.DEVICE || k == PointerKind.MANAGED) {
                return ordinalOf(s.address());
            }
        }
        return 0;
    }

    /**
     * @param address a device pointer (device or managed memory)
     * @return the GPU it belongs to
     * @throws IllegalArgumentException if it is not device or managed memory
     */
    public static CudaDevice deviceOf(long address) {
        ensureAvailability();
        PointerKind kind = pointerKind(address);
        if (kind != PointerKind.DEVICE && kind != PointerKind.MANAGED) {
            throw new IllegalArgumentException("0x" + Long.toHexString(address) + " is " + kind
                    + " memory, not a CUDA device pointer");
        }
        return device(ordinalOf(address));
    }

    private static int ordinalOf(long address) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment v = arena.allocate(JAVA_INT);
            CudaDriver.check("cuPointerGetAttribute(DEVICE_ORDINAL)", (int) CudaDriver.POINTER_GET_ATTRIBUTE
                    .invokeExact(v, CudaDriver.POINTER_ATTRIBUTE_DEVICE_ORDINAL, address));
            return v.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }
}
