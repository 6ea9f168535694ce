package io.jccl.spi;

import java.util.EnumSet;
import java.util.Set;
import java.util.StringJoiner;

/**
 * Kinds of memory a transport can register and move: NCCL's {@code NCCL_PTR_*} bits.
 *
 * <p>{@link NetProperties#ptrSupport()} is an OR of {@link #mask()} values; {@code regMr} takes one
 * type ({@link #HOST} or {@link #CUDA}); {@link #DMABUF} marks support for {@code regMrDmaBuf}.
 */
public enum PointerType {
    /** Host memory ({@code NCCL_PTR_HOST} = 1). */
    HOST(0x1),
    /** CUDA device memory, for GPUDirect RDMA ({@code NCCL_PTR_CUDA} = 2). */
    CUDA(0x2),
    /** Device memory registered through a dma-buf file descriptor ({@code NCCL_PTR_DMABUF} = 4). */
    DMABUF(0x4);

    private final int mask;

    PointerType(int mask) {
        this.mask = mask;
    }

    /** @return the {@code NCCL_PTR_*} bit */
    public int mask() {
        return mask;
    }

    /** @return whether {@code ptrSupport} includes this type */
    public boolean isIn(int ptrSupport) {
        return (ptrSupport & mask) != 0;
    }

    /**
     * @param code the {@code type} argument of {@code regMr}
     * @return the matching type
     * @throws IllegalArgumentException if {@code code} is not exactly one {@code NCCL_PTR_*} bit
     */
    public static PointerType fromCode(int code) {
        for (PointerType t : values()) {
            if (t.mask == code) {
                return t;
            }
        }
        throw new IllegalArgumentException("not an NCCL_PTR_* type: " + code);
    }

    /** @return the OR of the types' bits */
    public static int maskOf(PointerType... types) {
        int m = 0;
        for (PointerType t : types) {
            m |= t.mask;
        }
        return m;
    }

    /** @return the types whose bits are set in {@code ptrSupport}; unknown bits are ignored */
    public static Set<PointerType> fromMask(int ptrSupport) {
        EnumSet<PointerType> set = EnumSet.noneOf(PointerType.class);
        for (PointerType t : values()) {
            if (t.isIn(ptrSupport)) {
                set.add(t);
            }
        }
        return set;
    }

    /** @return e.g. {@code HOST|CUDA}, or {@code none} */
    public static String describe(int ptrSupport) {
        StringJoiner j = new StringJoiner("|");
        for (PointerType t : fromMask(ptrSupport)) {
            j.add(t.name());
        }
        int unknown = ptrSupport & ~maskOf(values());
        if (unknown != 0) {
            j.add("0x" + Integer.toHexString(unknown));
        }
        return j.length() == 0 ? "none" : j.toString();
    }
}
