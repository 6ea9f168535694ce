package io.jccl.core.kernel;

import io.jccl.cuda.Cuda;
import io.jccl.cuda.PointerKind;
import io.jccl.spi.PointerType;

import java.lang.foreign.MemorySegment;

/**
 * Where a buffer lives, which decides which {@link ReductionKernel} touches it and how a transport
 * registers it.
 */
public enum MemoryKind {
    /** Host memory: the CPU reads and writes it, transports register it as {@link PointerType#HOST}. */
    HOST(PointerType.HOST),
    /** CUDA device (or managed) memory: reduced by GPU kernels, registered as {@link PointerType#CUDA}. */
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
     * @return its kind: {@link #CUDA} for device and managed memory (asked of the driver where CUDA
     *         is available), else {@link #HOST} (pageable or pinned: the CPU reaches both)
     */
    public static MemoryKind of(MemorySegment segment) {
        if (!segment.isNative() || !Cuda.isAvailable()) {
            return HOST;
        }
        PointerKind kind = Cuda.pointerKind(segment);
        return kind == PointerKind.DEVICE || kind == PointerKind.MANAGED ? CUDA : HOST;
    }

    /**
     * @return the kernel for this kind of memory
     * @throws UnsupportedOperationException for device memory without a stream: device buffers take
     *         the stream-ordered calls, which stage them through host memory
     */
    public ReductionKernel kernel() {
        if (this == HOST) {
            return HostKernels.best();
        }
        throw new UnsupportedOperationException("collectives on " + this + " device memory are ordered on a CUDA "
                + "stream, as NCCL's: pass the stream (e.g. allReduce(send, recv, count, type, op, stream))");
    }
}
