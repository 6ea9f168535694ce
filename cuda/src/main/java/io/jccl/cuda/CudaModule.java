package io.jccl.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

import static java.lang.foreign.ValueLayout.ADDRESS;

/**
 * Compiled GPU code loaded on one GPU ({@code cuModuleLoadData}: PTX, which the driver compiles for
 * that GPU), and its kernels by name.
 */
public final class CudaModule implements AutoCloseable {
    private final CudaDevice device;
    private final MemorySegment handle;
    private final ConcurrentMap<String, CudaFunction> functions = new ConcurrentHashMap<>();
    private volatile boolean closed;

    private CudaModule(CudaDevice device, MemorySegment handle) {
        this.device = device;
        this.handle = handle;
    }

    /**
     * @param device the GPU to load it on
     * @param ptx    NUL-terminated PTX, e.g. from {@link Nvrtc#compile}
     * @return the loaded module
     */
    public static CudaModule load(CudaDevice device, byte[] ptx) {
        MemorySegment[] module = new MemorySegment[1];
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment image = arena.allocate(ptx.length + 1L);
            MemorySegment.copy(ptx, 0, image, java.lang.foreign.ValueLayout.JAVA_BYTE, 0, ptx.length);
            MemorySegment out = arena.allocate(ADDRESS);
            device.run("cuModuleLoadData", () -> (int) CudaDriver.MODULE_LOAD_DATA.invokeExact(out, image));
            module[0] = out.get(ADDRESS, 0);
        }
        return new CudaModule(device, module[0]);
    }

    /**
     * @param name an {@code extern "C"} kernel of the module
     * @return it, looked up once
     */
    public CudaFunction function(String name) {
        if (closed) {
            throw new IllegalStateException("module used after close");
        }
        return functions.computeIfAbsent(name, n -> {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment out = arena.allocate(ADDRESS);
                MemorySegment cName = arena.allocateFrom(n);
                device.run("cuModuleGetFunction(" + n + ")",
                        () -> (int) CudaDriver.MODULE_GET_FUNCTION.invokeExact(out, handle, cName));
                return new CudaFunction(device, n, out.get(ADDRESS, 0));
            }
        });
    }

    /** @return the GPU it is loaded on */
    public CudaDevice device() {
        return device;
    }

    /** Unloads it; its functions must not be launched after. Idempotent. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            device.run("cuModuleUnload", () -> (int) CudaDriver.MODULE_UNLOAD.invokeExact(handle));
        }
    }
}
