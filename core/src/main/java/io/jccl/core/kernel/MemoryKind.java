package io.jccl.core.kernel;

import io.jccl.spi.PointerType;

import java.lang.foreign.MemorySegment;

/**
 * Where a buffer lives, which decides which {@link ReductionKernel} touches it and how a transport
 * registers it.
 */
public enum MemoryKind {
    /** Host memory: the CPU reads and writes it, transports register it as {@link PointerType#HOST}. */
    HOST(PointerType.HOST),
    /** CUDA device memory: reduced by GPU kernels, registered as {@link PointerType#CUDA} (not yet supported). */
    CUDA(PointerType.CUDA);

    private final PointerType pointerType;

    MemoryKind(PointerType pointerType) {
        this.pointerType = pointerType;
    }

    /** @return the {@code NCCL_PTR_*} type a transport registers this memory as */
    public PointerType pointerType() {
        return pointerType;
    }

    /**
     * @param segment a user buffer
     * @return its kind; every segment is host memory until device buffers arrive with the CUDA issue
     */
    public static MemoryKind of(MemorySegment segment) {
        return HOST;
    }

    /**
     * @return the kernel for this kind of memory
     * @throws UnsupportedOperationException for device memory, which needs the CUDA kernels
     */
    public ReductionKernel kernel() {
        if (this == HOST) {
            return HostReductionKernel.INSTANCE;
        }
        throw new UnsupportedOperationException("collectives on " + this + " memory need the CUDA kernels, "
                + "which this version of JCCL does not have");
    }
}
