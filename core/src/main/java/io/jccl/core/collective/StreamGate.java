package io.jccl.core.collective;

/**
 * What a stream-ordered {@link Operation} (a collective on GPU buffers, enqueued on a CUDA stream)
 * waits for before it starts, and what it tells when it ends: NCCL's ordering of a collective
 * after the work queued on its stream before it, and of the work queued after it.
 */
public interface StreamGate {

    /**
     * Proxy thread, each pass until true.
     *
     * @return whether the stream has reached the operation (its input is in place)
     * @throws io.jccl.core.JcclException if it never will (the stream's earlier work failed)
     */
    boolean isOpen();

    /**
     * The operation ended: let the stream go on. Called once, by whichever thread ended it.
     *
     * @param succeeded whether the operation's output is valid (if not, the communicator has failed
     *                  and reports why through {@code asyncError()})
     */
    void release(boolean succeeded);
}
