package io.jccl.core;

import java.time.Duration;

/**
 * The handle of an asynchronous operation, like a CUDA event after an NCCL call: done once the
 * operation's buffers may be reused (input read, output written), or once it failed.
 *
 * <p>Operations of one communicator complete in the order they were issued. Waiting is bounded:
 * an operation that makes no progress for the communicator's timeout fails, and a dead peer fails
 * it within the peer timeout.
 */
public interface Completion {

    /** @return whether the operation finished, successfully or not */
    boolean isDone();

    /**
     * Waits until the operation finished.
     *
     * @throws JcclException the operation's failure (naming the rank to blame, if any)
     */
    void await();

    /**
     * Waits at most {@code timeout}.
     *
     * @return {@code true} if the operation finished successfully, {@code false} if still running
     * @throws JcclException the operation's failure
     */
    boolean await(Duration timeout);

    /** @return the failure, or {@code null} while running or after success */
    JcclException error();
}
