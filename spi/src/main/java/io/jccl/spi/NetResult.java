package io.jccl.spi;

/**
 * NCCL's {@code ncclResult_t}, with the same numbering, so a result crosses the C ABI unchanged.
 *
 * <p>Plugins report failures with {@link #SYSTEM_ERROR} (kernel, network or hardware failure: the
 * common case), {@link #INTERNAL_ERROR} (NCCL or the caller misused the plugin), {@link #INVALID_USAGE}
 * (probable user error, such as a size mismatch), {@link #INVALID_ARGUMENT} and {@link #REMOTE_ERROR}
 * (the peer closed or failed). {@link #IN_PROGRESS} and {@link #TIMEOUT} exist in NCCL but a plugin
 * never returns them.
 */
public enum NetResult {
    SUCCESS(0, "ncclSuccess"),
    UNHANDLED_CUDA_ERROR(1, "ncclUnhandledCudaError"),
    SYSTEM_ERROR(2, "ncclSystemError"),
    INTERNAL_ERROR(3, "ncclInternalError"),
    INVALID_ARGUMENT(4, "ncclInvalidArgument"),
    INVALID_USAGE(5, "ncclInvalidUsage"),
    REMOTE_ERROR(6, "ncclRemoteError"),
    IN_PROGRESS(7, "ncclInProgress"),
    TIMEOUT(8, "ncclTimeout");

    private static final NetResult[] BY_CODE = values();

    private final int code;
    private final String ncclName;

    NetResult(int code, String ncclName) {
        this.code = code;
        this.ncclName = ncclName;
    }

    /** @return the {@code ncclResult_t} value */
    public int code() {
        return code;
    }

    /** @return the C enumerator's name, e.g. {@code ncclRemoteError} */
    public String ncclName() {
        return ncclName;
    }

    /**
     * @param code an {@code ncclResult_t} value
     * @return the matching result
     * @throws IllegalArgumentException if NCCL defines no result with that value
     */
    public static NetResult fromCode(int code) {
        if (code < 0 || code >= BY_CODE.length) {
            throw new IllegalArgumentException("not an ncclResult_t value: " + code);
        }
        return BY_CODE[code];
    }
}
