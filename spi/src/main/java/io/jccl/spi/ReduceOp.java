package io.jccl.spi;

import java.util.Locale;

/**
 * NCCL's built-in {@code ncclRedOp_t} values, with the same numbering.
 *
 * <p>Values from {@code ncclNumOps} (5) upward are user-created (PreMulSum) operations; NCCL maps
 * them, and {@link #AVG}, to {@link #SUM} before it asks a CollNet plugin's {@code reduceSupport}.
 */
public enum ReduceOp {
    SUM(0, "ncclSum", "sum"),
    PROD(1, "ncclProd", "prod"),
    MAX(2, "ncclMax", "max"),
    MIN(3, "ncclMin", "min"),
    AVG(4, "ncclAvg", "avg");

    private static final ReduceOp[] BY_CODE = values();

    private final int code;
    private final String ncclName;
    private final String testsName;

    ReduceOp(int code, String ncclName, String testsName) {
        this.code = code;
        this.ncclName = ncclName;
        this.testsName = testsName;
    }

    /** @return the {@code ncclRedOp_t} value */
    public int code() {
        return code;
    }

    /** @return the C enumerator's name, e.g. {@code ncclSum} */
    public String ncclName() {
        return ncclName;
    }

    /** @return nccl-tests' name, e.g. {@code sum} */
    public String testsName() {
        return testsName;
    }

    /**
     * @param code an {@code ncclRedOp_t} value below {@code ncclNumOps}
     * @return the matching operation
     * @throws IllegalArgumentException for user-created operations and unknown values
     */
    public static ReduceOp fromCode(int code) {
        if (code < 0 || code >= BY_CODE.length) {
            throw new IllegalArgumentException("not a built-in ncclRedOp_t value: " + code);
        }
        return BY_CODE[code];
    }

    /**
     * @param name {@code sum}, {@code prod}, {@code max}, {@code min} or {@code avg}, or NCCL's
     *             enumerator name; case-insensitive
     * @return the matching operation
     * @throws IllegalArgumentException listing the accepted names if none matches
     */
    public static ReduceOp fromName(String name) {
        String n = name.trim().toLowerCase(Locale.ROOT);
        for (ReduceOp op : BY_CODE) {
            if (op.testsName.equals(n) || op.ncclName.toLowerCase(Locale.ROOT).equals(n)) {
                return op;
            }
        }
        throw new IllegalArgumentException("unknown reduction '" + name + "'; use one of sum prod max min avg");
    }
}
