package io.jccl.spi;

import java.util.Objects;

/**
 * A failed ncclNet / ncclCollNet call, with the {@link NetResult} NCCL would see.
 *
 * <p>Checked on purpose: every function of the C interface returns an {@code ncclResult_t}, and
 * every Java caller (the engine's proxy, the conformance kit, the native shim) has to decide what a
 * failure means. Thrown only on the failure path: the data path reports "not yet" and "would block"
 * by return value, never by exception.
 */
public class NetException extends Exception {
    private static final long serialVersionUID = 1L;

    private final NetResult result;

    /**
     * @param result  the code NCCL sees; never {@link NetResult#SUCCESS}
     * @param message what failed and, where it helps, which peer, device or variable is involved
     */
    public NetException(NetResult result, String message) {
        super(message);
        this.result = checked(result);
    }

    /**
     * @param result  the code NCCL sees; never {@link NetResult#SUCCESS}
     * @param message what failed
     * @param cause   the underlying failure
     */
    public NetException(NetResult result, String message, Throwable cause) {
        super(message, cause);
        this.result = checked(result);
    }

    private static NetResult checked(NetResult result) {
        Objects.requireNonNull(result, "result");
        if (result == NetResult.SUCCESS) {
            throw new IllegalArgumentException("a NetException cannot carry ncclSuccess");
        }
        return result;
    }

    /** @return the result code NCCL sees for this failure */
    public NetResult result() {
        return result;
    }

    /** A kernel, network or hardware failure ({@code ncclSystemError}). */
    public static NetException systemError(String message) {
        return new NetException(NetResult.SYSTEM_ERROR, message);
    }

    /** A kernel, network or hardware failure ({@code ncclSystemError}) with its cause. */
    public static NetException systemError(String message, Throwable cause) {
        return new NetException(NetResult.SYSTEM_ERROR, message, cause);
    }

    /** The caller misused the plugin, e.g. too many requests in flight ({@code ncclInternalError}). */
    public static NetException internalError(String message) {
        return new NetException(NetResult.INTERNAL_ERROR, message);
    }

    /** A probable user error: misconfiguration, size mismatch ({@code ncclInvalidUsage}). */
    public static NetException invalidUsage(String message) {
        return new NetException(NetResult.INVALID_USAGE, message);
    }

    /** A malformed argument such as a garbage handle ({@code ncclInvalidArgument}). */
    public static NetException invalidArgument(String message) {
        return new NetException(NetResult.INVALID_ARGUMENT, message);
    }

    /** The peer closed, died or reported a failure ({@code ncclRemoteError}). */
    public static NetException remoteError(String message) {
        return new NetException(NetResult.REMOTE_ERROR, message);
    }

    /** The peer closed, died or reported a failure ({@code ncclRemoteError}) with its cause. */
    public static NetException remoteError(String message, Throwable cause) {
        return new NetException(NetResult.REMOTE_ERROR, message, cause);
    }

    @Override
    public String toString() {
        return result.ncclName() + ": " + getMessage();
    }
}
