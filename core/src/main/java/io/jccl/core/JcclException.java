package io.jccl.core;

import io.jccl.spi.NetResult;

import java.util.Objects;

/**
 * A failed JCCL call or operation, with NCCL's result code and, when a peer is to blame, its rank.
 *
 * <p>Unchecked, as a collective library's API edge usually is: the calls that can fail are the
 * whole API. Once a communicator has failed, every pending and later operation on it fails with
 * the first failure; {@link Communicator#abort()} or {@link Communicator#close()} then releases it.
 */
public class JcclException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** {@link #failedRank()} when no particular peer is to blame. */
    public static final int NO_RANK = -1;

    private final NetResult result;
    private final int failedRank;

    /**
     * @param result  NCCL's code for the failure; never {@link NetResult#SUCCESS}
     * @param message what failed, naming the peer where one is involved
     */
    public JcclException(NetResult result, String message) {
        this(result, NO_RANK, message, null);
    }

    /**
     * @param result     NCCL's code for the failure; never {@link NetResult#SUCCESS}
     * @param failedRank the rank that failed or caused the failure, or {@link #NO_RANK}
     * @param message    what failed
     */
    public JcclException(NetResult result, int failedRank, String message) {
        this(result, failedRank, message, null);
    }

    /**
     * @param result     NCCL's code for the failure; never {@link NetResult#SUCCESS}
     * @param failedRank the rank that failed or caused the failure, or {@link #NO_RANK}
     * @param message    what failed
     * @param cause      the underlying failure, or {@code null}
     */
    public JcclException(NetResult result, int failedRank, String message, Throwable cause) {
        super(message, cause);
        this.result = Objects.requireNonNull(result, "result");
        if (result == NetResult.SUCCESS) {
            throw new IllegalArgumentException("a JcclException cannot carry ncclSuccess");
        }
        this.failedRank = failedRank;
    }

    /** @return NCCL's result code: REMOTE_ERROR for a failed peer, TIMEOUT for a bound exceeded, ... */
    public NetResult result() {
        return result;
    }

    /** @return the rank that failed or caused the failure, or {@link #NO_RANK} */
    public int failedRank() {
        return failedRank;
    }

    /** Misuse of the API, e.g. a buffer too small for the count ({@code ncclInvalidArgument}). */
    public static JcclException invalidArgument(String message) {
        return new JcclException(NetResult.INVALID_ARGUMENT, message);
    }

    /** A call that is not valid in the current state, e.g. on a closed communicator ({@code ncclInvalidUsage}). */
    public static JcclException invalidUsage(String message) {
        return new JcclException(NetResult.INVALID_USAGE, message);
    }

    @Override
    public String toString() {
        return result.ncclName() + ": " + getMessage();
    }
}
