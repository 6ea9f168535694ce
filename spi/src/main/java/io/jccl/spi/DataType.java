package io.jccl.spi;

import java.util.Locale;

/**
 * NCCL's {@code ncclDataType_t} as of NCCL 2.30, with the same numbering.
 *
 * <p>{@link #testsName()} is the spelling nccl-tests uses for {@code -d} and in its output table.
 */
public enum DataType {
    INT8(0, 1, "ncclInt8", "int8", false),
    UINT8(1, 1, "ncclUint8", "uint8", false),
    INT32(2, 4, "ncclInt32", "int32", false),
    UINT32(3, 4, "ncclUint32", "uint32", false),
    INT64(4, 8, "ncclInt64", "int64", false),
    UINT64(5, 8, "ncclUint64", "uint64", false),
    FLOAT16(6, 2, "ncclFloat16", "half", true),
    FLOAT32(7, 4, "ncclFloat32", "float", true),
    FLOAT64(8, 8, "ncclFloat64", "double", true),
    BFLOAT16(9, 2, "ncclBfloat16", "bfloat16", true),
    FLOAT8_E4M3(10, 1, "ncclFloat8e4m3", "f8e4m3", true),
    FLOAT8_E5M2(11, 1, "ncclFloat8e5m2", "f8e5m2", true);

    private static final DataType[] BY_CODE = values();

    private final int code;
    private final int size;
    private final String ncclName;
    private final String testsName;
    private final boolean floatingPoint;

    DataType(int code, int size, String ncclName, String testsName, boolean floatingPoint) {
        this.code = code;
        this.size = size;
        this.ncclName = ncclName;
        this.testsName = testsName;
        this.floatingPoint = floatingPoint;
    }

    /** @return the {@code ncclDataType_t} value */
    public int code() {
        return code;
    }

    /** @return bytes per element */
    public int size() {
        return size;
    }

    /** @return the C enumerator's name, e.g. {@code ncclBfloat16} */
    public String ncclName() {
        return ncclName;
    }

    /** @return nccl-tests' name, e.g. {@code bfloat16}, {@code half}, {@code float} */
    public String testsName() {
        return testsName;
    }

    /** @return whether the type is a floating-point format */
    public boolean isFloatingPoint() {
        return floatingPoint;
    }

    /**
     * @param code an {@code ncclDataType_t} value
     * @return the matching type
     * @throws IllegalArgumentException if NCCL 2.30 defines no type with that value
     */
    public static DataType fromCode(int code) {
        if (code < 0 || code >= BY_CODE.length) {
            throw new IllegalArgumentException("not an ncclDataType_t value: " + code
                    + " (NCCL 2.30 defines 0.." + (BY_CODE.length - 1) + ")");
        }
        return BY_CODE[code];
    }

    /**
     * Parses a type the way users write it: nccl-tests' names ({@code float}, {@code half}), NCCL's
     * enumerators ({@code ncclFloat32}, with or without the prefix) and their C aliases
     * ({@code ncclChar}, {@code ncclInt}, {@code ncclHalf}, {@code ncclFloat}, {@code ncclDouble}).
     *
     * @param name a type name, case-insensitive
     * @return the matching type
     * @throws IllegalArgumentException naming the accepted spellings if none matches
     */
    public static DataType fromName(String name) {
        String n = name.trim().toLowerCase(Locale.ROOT);
        if (n.startsWith("nccl")) {
            n = n.substring(4);
        }
        switch (n) {
            case "char": return INT8;
            case "int": return INT32;
            case "float16": return FLOAT16;
            case "float32": return FLOAT32;
            case "float64": return FLOAT64;
            case "bf16": return BFLOAT16;
            case "float8e4m3", "fp8e4m3", "e4m3": return FLOAT8_E4M3;
            case "float8e5m2", "fp8e5m2", "e5m2": return FLOAT8_E5M2;
            default: break;
        }
        for (DataType t : BY_CODE) {
            if (t.testsName.equals(n) || t.name().toLowerCase(Locale.ROOT).equals(n)
                    || t.ncclName.substring(4).toLowerCase(Locale.ROOT).equals(n)) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown data type '" + name + "'; use one of "
                + "int8 uint8 int32 uint32 int64 uint64 half float double bfloat16 f8e4m3 f8e5m2");
    }
}
