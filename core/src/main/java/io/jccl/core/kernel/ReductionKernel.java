package io.jccl.core.kernel;

import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;

import java.lang.foreign.MemorySegment;

/**
 * The arithmetic of collectives over one kind of memory. Offsets are in bytes; counts in elements.
 * Implementations allocate nothing: they run once per step on the data path.
 *
 * <p>{@link ReduceOp#AVG} is a sum followed by a {@link #divide} on the step that produces the
 * final value (NCCL's {@code SumPostDiv}), so {@link #reduce} never sees it.
 */
public interface ReductionKernel {

    /**
     * @return whether {@link #reduce} supports this type and operation (floating-point 8-bit types
     *         have no arithmetic on the host)
     */
    boolean supports(DataType type, ReduceOp op);

    /**
     * {@code dst[i] = a[i] op b[i]} for {@code count} elements. {@code dst} may be {@code a} or
     * {@code b} at the same offset (in-place).
     *
     * @param op SUM, PROD, MAX or MIN
     */
    void reduce(DataType type, ReduceOp op, MemorySegment a, long aOffset, MemorySegment b, long bOffset,
                MemorySegment dst, long dstOffset, long count);

    /** {@code buf[i] = buf[i] / divisor}, rounded as the type rounds (integers truncate toward zero). */
    void divide(DataType type, MemorySegment buf, long offset, long count, int divisor);

    /** Copies {@code bytes} bytes; the ranges may overlap or be the same. */
    void copy(MemorySegment src, long srcOffset, MemorySegment dst, long dstOffset, long bytes);

    /** @return whether the buffers this kernel works on are host memory, which a transport may send from as they are */
    default boolean onHost() {
        return true;
    }
}
