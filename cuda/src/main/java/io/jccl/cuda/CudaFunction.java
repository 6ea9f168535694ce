package io.jccl.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/** A kernel of a {@link CudaModule}, launched on a stream ({@code cuLaunchKernel}). */
public final class CudaFunction {
    private final CudaDevice device;
    private final String name;
    private final MemorySegment handle;

    CudaFunction(CudaDevice device, String name, MemorySegment handle) {
        this.device = device;
        this.name = name;
        this.handle = handle;
    }

    /** @return its name */
    public String name() {
        return name;
    }

    /**
     * Queues the kernel on {@code stream}; returns once it is queued.
     *
     * @param args its parameters in order: a {@link MemorySegment} passes its address (a pointer),
     *             a {@link Long} a 64-bit integer, an {@link Integer} a 32-bit one, a {@link Float} a float
     */
    public void launch(CudaStream stream, int gridX, int blockX, Object... args) {
        if (stream.device() != device) {
            throw new IllegalArgumentException("kernel " + name + " of GPU " + device.ordinal()
                    + " launched on a stream of GPU " + stream.device().ordinal());
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment params = arena.allocate(ADDRESS, Math.max(1, args.length));
            for (int i = 0; i < args.length; i++) {
                MemorySegment value;
                switch (args[i]) {
                    case MemorySegment s -> value = arena.allocateFrom(JAVA_LONG, s.address());
                    case Long l -> value = arena.allocateFrom(JAVA_LONG, l);
                    case Integer n -> value = arena.allocateFrom(JAVA_INT, n);
                    case Float f -> value = arena.allocateFrom(JAVA_FLOAT, f);
                    default -> throw new IllegalArgumentException("kernel parameter " + i + " of " + name + " is a "
                            + args[i].getClass().getSimpleName() + "; pass a MemorySegment, Long, Integer or Float");
                }
                params.setAtIndex(ADDRESS, i, value);
            }
            device.run("cuLaunchKernel(" + name + ")", () -> (int) CudaDriver.LAUNCH_KERNEL.invokeExact(handle, gridX,
                    1, 1, blockX, 1, 1, 0, stream.handle(), params, MemorySegment.NULL));
        }
    }
}
