package io.jccl.core.kernel;

import io.jccl.spi.ReduceOp;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/** What the kernels that call native code check and pass alike: the API edge's errors, the operation codes. */
final class NativeArguments {
    private NativeArguments() {
    }

    /** the operation's code in both native libraries (0 sum, 1 product, 2 max, 3 min), or -1 */
    static int opCode(ReduceOp op) {
        return switch (op) {
            case SUM -> 0;
            case PROD -> 1;
            case MAX -> 2;
            case MIN -> 3;
            default -> -1;
        };
    }

    /**
     * Every bound and the destination's writability, before native code writes a byte: a bad call
     * fails with a clear exception and writes nothing.
     */
    static void checkReduction(MemorySegment a, long aOffset, MemorySegment b, long bOffset, MemorySegment dst,
                               long dstOffset, long bytes) {
        if (dst.isReadOnly()) {
            throw new IllegalArgumentException("reduction into a read-only segment");
        }
        Objects.checkFromIndexSize(aOffset, bytes, a.byteSize());
        Objects.checkFromIndexSize(bOffset, bytes, b.byteSize());
        Objects.checkFromIndexSize(dstOffset, bytes, dst.byteSize());
    }
}
